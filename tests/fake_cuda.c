/*
 * A stand-in for libcuda.so.1 (built with that soname) for tests/test_device.c and
 * tests/test_cuda_fold.c: it hands out "device memory" that the CPU cannot touch
 * (PROT_NONE pages, opened only inside cuMemcpy and kernel launches), and answers
 * the driver calls Strata and those tests make. A direct access to a device buffer
 * by Strata is a segmentation fault, so the tests prove that device buffers only
 * move through the driver.
 *
 * Kernels: cuModuleLoadData accepts only an nvcc fatbin (by its magic number), and
 * cuLaunchKernel runs Strata's own GPU kernels compiled for the host
 * (cuda/st_cuda_kernels.cu with ST_CUDA_EMULATE, linked in), after checking that
 * every pointer they get is device memory; the GLM solver's epoch runs its
 * launch's blocks in waves of that many rows (cuda/st_glm_kernels.cuh).
 *
 * Streams: work on a stream (cuMemcpyAsync, and the fold kernels, whose argument
 * is known) is only queued, and runs when the stream is synchronized (or before
 * another kernel, or when the queue is full, or cuCtxSynchronize, cuMemFree): the
 * latest moment a GPU could run it. So a missing cuStreamSynchronize leaves
 * stale data where Strata or the program reads next, which the tests see. The
 * legacy stream (NULL, cuMemcpy) does not wait for it: Strata's streams are
 * non-blocking.
 *
 * The legacy stream: as the driver's, cuMemcpy into device memory returns before
 * the data lands when its source is pageable host memory (once the bytes are
 * staged) or device memory (at once); only a copy from pinned memory is complete
 * on return. Such copies wait on the legacy stream, in order, and land when it is
 * synchronized (cuStreamSynchronize(NULL), cuCtxSynchronize), before the next
 * copy out of device memory or kernel on it, and before cuMemFree. A reader that
 * does not wait for it (a kernel on a non-blocking stream, another process through
 * CUDA IPC) finds the old bytes, as on a GPU where the DMA had not ended.
 *
 * It counts the pointer queries it answers (fake_cuda_queries), and with
 * FAKE_CUDA_SINGLES=1 its cuPointerGetAttributes fails as a driver's that lacks
 * one of the attributes asked; with FAKE_CUDA_GPUS=N the ranks' buffers are on N
 * GPUs (cuDeviceGetUuid: local rank mod N; default one GPU for all);
 * with FAKE_CUDA_NO_KERNELS=1 cuModuleLoadData fails
 * as on a GPU none of the fatbin's code runs on; with FAKE_CUDA_POOL=1 all device
 * memory is a pool's (cudaMallocAsync): no context, no legacy IPC handle.
 *
 * Contexts: one device, whose primary context (FAKE_CTX) is active while retained.
 * The current context is per thread, as the driver's, and a thread starts with
 * none: the calls that need one (copies, allocation, the legacy stream, pinning,
 * streams, modules, launches) fail with CUDA_ERROR_INVALID_CONTEXT without it.
 */
#define _GNU_SOURCE
#include "st_cuda_kernels.h"

#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define FAKE_REGIONS 256   /* own allocations and imported ones: Strata keeps up to 64 of these */
#define FAKE_CTX     ((void*)0x5eed)
#define FAKE_STREAM  ((void*)0x57ea)

/* Device memory is a memfd mapped PROT_NONE, so another process can map it too
 * (CUDA IPC: /proc/PID/fd/FD). Imported regions are other processes' memory. */
static struct {
    char  *base;
    size_t size;
    int    fd;                  /* own allocations; -1 imported */
    unsigned long long id;      /* the buffer id: never reused */
    int    owner;               /* imported: the exporting process */
} fake_region[FAKE_REGIONS];
static unsigned long long fake_next_id = 1;

/* CUipcMemHandle (64 bytes) */
typedef struct {
    unsigned int magic;
    int pid, fd;
    unsigned long long id, size;
    char pad[64 - 4 * sizeof(int) - 2 * sizeof(unsigned long long)];
} fake_ipc_handle_t;
#define FAKE_IPC_MAGIC 0x1bc0ffee
static unsigned long fake_copies, fake_pushes, fake_launches;
/* the context current in this thread, as the driver's: a thread starts with none */
static __thread void *fake_current;
static int fake_primary_refs;   /* cuDevicePrimaryCtxRetain less Release: active if > 0 */

/* CUDA_ERROR_INVALID_CONTEXT where the driver needs a current context and the
 * calling thread has none */
#define FAKE_NEED_CTX() \
    do { \
        if (fake_current == NULL) { \
            return 201; \
        } \
    } while (0)

static void fake_flush(void);   /* the stream's queued work, run now */
static void fake_land(void);    /* the legacy stream's copies land */

/* the kernels, compiled for the host (cuda/st_cuda_kernels.cu) */
const void *st_cuda_emulated_kernel(const char *name);
int st_cuda_emulated_launch(const void *kernel, unsigned grid, unsigned block, void **params);

static int fake_find(uintptr_t p)
{
    int k;

    for (k = 0; k < FAKE_REGIONS; k++) {
        if (fake_region[k].base != NULL && p >= (uintptr_t)fake_region[k].base &&
            p < (uintptr_t)fake_region[k].base + fake_region[k].size) {
            return k;
        }
    }
    return -1;
}

static void fake_protect(int k, int prot)
{
    if (k >= 0) {
        mprotect(fake_region[k].base, fake_region[k].size, prot);
    }
}

void *fake_cuda_alloc(size_t bytes)
{
    size_t size = (bytes + 4095) / 4096 * 4096;
    int k;

    for (k = 0; k < FAKE_REGIONS; k++) {
        if (fake_region[k].base == NULL) {
            int fd = memfd_create("fake-cuda", MFD_CLOEXEC);
            void *p;

            if (fd < 0 || ftruncate(fd, (off_t)size) != 0) {
                if (fd >= 0) {
                    close(fd);
                }
                return NULL;
            }
            p = mmap(NULL, size, PROT_NONE, MAP_SHARED, fd, 0);
            if (p == MAP_FAILED) {
                close(fd);
                return NULL;
            }
            fake_region[k].base  = p;
            fake_region[k].size  = size;
            fake_region[k].fd    = fd;
            fake_region[k].id    = fake_next_id++;
            fake_region[k].owner = (int)getpid();
            return p;
        }
    }
    return NULL;
}

void fake_cuda_free(void *p)
{
    int k;

    fake_land();    /* as cudaFree: the device's work on it ends first */
    fake_flush();
    k = fake_find((uintptr_t)p);
    if (k >= 0 && fake_region[k].fd >= 0) {
        munmap(fake_region[k].base, fake_region[k].size);
        close(fake_region[k].fd);
        fake_region[k].base = NULL;
    }
}

unsigned long fake_cuda_copies(void)
{
    return fake_copies;
}

unsigned long fake_cuda_pushes(void)
{
    return fake_pushes;
}

static unsigned long fake_queries;   /* pointer queries, of both kinds */

/* Is the stand-in's mode @a name (FAKE_CUDA_SINGLES, FAKE_CUDA_NO_KERNELS) on (=1)?
 * For test_device too, which must know what the driver does. */
int fake_cuda_flag(const char *name)
{
    const char *v = getenv(name);

    return v != NULL && strcmp(v, "1") == 0;
}

unsigned long fake_cuda_queries(void)
{
    return fake_queries;
}

/* FAKE_CUDA_POOL=1: all device memory is a pool's (cudaMallocAsync), which the
 * driver ties to no context (CU_POINTER_ATTRIBUTE_CONTEXT is NULL) and no legacy
 * IPC handle */
static int fake_pool(void)
{
    static int pool = -1;

    if (pool < 0) {
        pool = fake_cuda_flag("FAKE_CUDA_POOL");
    }
    return pool;
}

static int fake_attribute(void *data, int attribute, unsigned long long ptr)
{
    int k = fake_find((uintptr_t)ptr);

    if (k < 0) {
        return 1;   /* CUDA_ERROR_INVALID_VALUE: not memory the driver knows */
    }
    switch (attribute) {
    case 1:    /* CU_POINTER_ATTRIBUTE_CONTEXT: none for a pool's memory */
        *(void**)data = fake_pool() ? NULL : FAKE_CTX;
        break;
    case 2:    /* CU_POINTER_ATTRIBUTE_MEMORY_TYPE */
        *(unsigned int*)data = 2;    /* CU_MEMORYTYPE_DEVICE */
        break;
    case 7:    /* CU_POINTER_ATTRIBUTE_BUFFER_ID */
        *(unsigned long long*)data = fake_region[k].id;
        break;
    case 9:    /* CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL */
        *(int*)data = 0;
        break;
    case 10:   /* CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE: own allocations,
                  not a pool's */
        *(int*)data = (fake_region[k].fd >= 0 && !fake_pool());
        break;
    case 11:   /* CU_POINTER_ATTRIBUTE_RANGE_START_ADDR */
        *(unsigned long long*)data = (unsigned long long)(uintptr_t)fake_region[k].base;
        break;
    case 12:   /* CU_POINTER_ATTRIBUTE_RANGE_SIZE */
        *(size_t*)data = fake_region[k].size;
        break;
    default:
        return 1;
    }
    return 0;
}

int cuPointerGetAttribute(void *data, int attribute, unsigned long long ptr)
{
    fake_queries++;
    return fake_attribute(data, attribute, ptr);
}

/* as the driver: on a pointer it does not know, every attribute is 0 (NULL) and the
 * call succeeds; FAKE_CUDA_SINGLES=1: fails on every pointer, as a driver
 * that lacks one of the attributes asked (then only cuPointerGetAttribute works) */
int cuPointerGetAttributes(unsigned n, int *attributes, void **data, unsigned long long ptr)
{
    static int singles = -1;
    unsigned k;

    fake_queries++;
    if (singles < 0) {
        singles = fake_cuda_flag("FAKE_CUDA_SINGLES");
    }
    if (singles) {
        return 801;   /* CUDA_ERROR_NOT_SUPPORTED */
    }
    for (k = 0; k < n; k++) {
        if (fake_find((uintptr_t)ptr) < 0) {
            memset(data[k], 0, (attributes[k] == 1 || attributes[k] == 7 || attributes[k] == 11 ||
                                attributes[k] == 12) ? 8 : 4);
        } else if (fake_attribute(data[k], attributes[k], ptr) != 0) {
            return 1;
        }
    }
    return 0;
}

/* a copy done now: the device's memory opened for it only */
static void fake_copy(unsigned long long dst, unsigned long long src, size_t bytes)
{
    int kd = fake_find((uintptr_t)dst), ks = fake_find((uintptr_t)src);

    fake_protect(kd, PROT_READ | PROT_WRITE);
    fake_protect(ks, PROT_READ | PROT_WRITE);
    memmove((void*)(uintptr_t)dst, (const void*)(uintptr_t)src, bytes);
    fake_protect(kd, PROT_NONE);
    fake_protect(ks, PROT_NONE);
    fake_copies++;
}

/* ---- the legacy stream's copies not landed yet ---- */

#define FAKE_LATE 64
static struct {
    unsigned long long dst, src;   /* src: device memory, or the staged bytes */
    void *staged;
    size_t bytes;
} fake_late[FAKE_LATE];
static int fake_nlate;

/* the legacy stream's copies land, in order */
static void fake_land(void)
{
    int q;

    for (q = 0; q < fake_nlate; q++) {
        fake_copy(fake_late[q].dst, fake_late[q].src, fake_late[q].bytes);
        free(fake_late[q].staged);
    }
    fake_nlate = 0;
}

static int fake_is_pinned(const void *p, size_t bytes);

int cuMemcpy(unsigned long long dst, unsigned long long src, size_t bytes)
{
    int from_dev = (fake_find((uintptr_t)src) >= 0);
    void *staged = NULL;

    FAKE_NEED_CTX();
    if (fake_find((uintptr_t)dst) < 0 || bytes == 0 ||
        (!from_dev && fake_is_pinned((const void*)(uintptr_t)src, bytes))) {
        fake_land();   /* into host memory, or from pinned memory: complete on return */
        fake_copy(dst, src, bytes);
        return 0;
    }
    if (!from_dev) {   /* pageable: staged now, lands later */
        if ((staged = malloc(bytes)) == NULL) {
            return 2;
        }
        memcpy(staged, (const void*)(uintptr_t)src, bytes);
        src = (unsigned long long)(uintptr_t)staged;
    }
    if (fake_nlate == FAKE_LATE) {
        fake_land();
    }
    fake_late[fake_nlate].dst      = dst;
    fake_late[fake_nlate].src      = src;
    fake_late[fake_nlate].staged   = staged;
    fake_late[fake_nlate++].bytes  = bytes;
    return 0;
}

static __thread void *fake_ctx_stack[16];
static __thread int fake_ctx_depth;

int cuCtxPushCurrent_v2(void *ctx)
{
    if (ctx != FAKE_CTX) {
        return 201;  /* CUDA_ERROR_INVALID_CONTEXT */
    }
    if (fake_ctx_depth == 16) {
        return 1;
    }
    fake_ctx_stack[fake_ctx_depth++] = fake_current;
    fake_current = ctx;
    fake_pushes++;
    return 0;
}

int cuCtxPopCurrent_v2(void **ctx)
{
    if (fake_ctx_depth == 0) {
        return 201;
    }
    if (ctx != NULL) {
        *ctx = fake_current;
    }
    fake_current = fake_ctx_stack[--fake_ctx_depth];
    return 0;
}

unsigned long fake_cuda_launches(void)
{
    return fake_launches;
}

int cuDeviceGetCount(int *count)
{
    *count = 1;
    return 0;
}

int cuInit(unsigned flags)
{
    (void)flags;
    return 0;
}

int cuDeviceGet(int *dev, int ordinal)
{
    if (ordinal != 0) {
        return 101;   /* CUDA_ERROR_INVALID_DEVICE */
    }
    *dev = 0;
    return 0;
}

/* The stand-in GPU: 4 SMs (FAKE_CUDA_SMS=N: N), each running 2048 threads at once
 * (64 warps) of any kernel */
int cuDeviceGetAttribute(int *value, int attrib, int dev)
{
    const char *sms = getenv("FAKE_CUDA_SMS");

    (void)dev;
    if (attrib != 16) {   /* CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT */
        return 1;         /* CUDA_ERROR_INVALID_VALUE: not modelled */
    }
    *value = (sms != NULL) ? atoi(sms) : 4;
    return 0;
}

int cuOccupancyMaxActiveBlocksPerMultiprocessor(int *blocks, void *fn, int block, size_t smem)
{
    (void)smem;
    if (fn == NULL || block < 1 || block > 1024) {
        return 1;
    }
    *blocks = 2048 / block;
    return 0;
}

/* The GPU's UUID: one GPU that every rank shares, or with FAKE_CUDA_GPUS=N, GPU
 * (local rank mod N), as ranks take their host's GPUs in turn */
int cuDeviceGetUuid_v2(unsigned char *uuid, int dev)
{
    const char *n = getenv("FAKE_CUDA_GPUS"), *r = getenv("OMPI_COMM_WORLD_LOCAL_RANK");
    int gpus = (n != NULL) ? atoi(n) : 1;

    (void)dev;
    memset(uuid, 0, 16);
    memcpy(uuid, "GPU-", 4);
    uuid[4] = (unsigned char)((gpus > 1 && r != NULL) ? atoi(r) % gpus : 0);
    return 0;
}

int cuDevicePrimaryCtxRetain(void **ctx, int dev)
{
    if (dev != 0) {
        return 101;
    }
    __atomic_add_fetch(&fake_primary_refs, 1, __ATOMIC_RELAXED);
    *ctx = FAKE_CTX;
    return 0;
}

int cuDevicePrimaryCtxRelease_v2(int dev)
{
    if (dev != 0 || __atomic_load_n(&fake_primary_refs, __ATOMIC_RELAXED) == 0) {
        return (dev != 0) ? 101 : 201;
    }
    __atomic_sub_fetch(&fake_primary_refs, 1, __ATOMIC_RELAXED);
    return 0;
}

int cuDevicePrimaryCtxGetState(int dev, unsigned *flags, int *active)
{
    if (dev != 0) {
        return 101;
    }
    *flags  = 0;
    *active = (__atomic_load_n(&fake_primary_refs, __ATOMIC_RELAXED) > 0);
    return 0;
}

int cuCtxSetCurrent(void *ctx)
{
    if (ctx != NULL && ctx != FAKE_CTX) {
        return 201;
    }
    fake_current = ctx;
    return 0;
}

int cuCtxGetCurrent(void **ctx)
{
    *ctx = fake_current;
    return 0;
}

int cuCtxSynchronize(void)
{
    FAKE_NEED_CTX();
    fake_land();
    fake_flush();
    return 0;
}

int cuMemAlloc_v2(unsigned long long *dptr, size_t bytes)
{
    void *p;

    FAKE_NEED_CTX();
    p = fake_cuda_alloc(bytes);
    if (p == NULL) {
        return 2;   /* CUDA_ERROR_OUT_OF_MEMORY */
    }
    *dptr = (unsigned long long)(uintptr_t)p;
    return 0;
}

int cuMemFree_v2(unsigned long long dptr)
{
    FAKE_NEED_CTX();
    fake_cuda_free((void*)(uintptr_t)dptr);
    return 0;
}

/* ---- the stream's queue ---- */

#define FAKE_QUEUE 256
typedef struct {
    const void *fn;                 /* a fold kernel, or NULL: a copy */
    st_cuda_fold_args_t args;
    unsigned long long dst, src;
    size_t bytes;
} fake_work_t;
static fake_work_t fake_queue[FAKE_QUEUE];
static int fake_queued;
static const void *fake_folds[512];   /* the fold kernels handed out */
static int fake_nfolds;

static int fake_run(const void *fn, unsigned grid, unsigned block, void **params)
{
    int k, rc;

    for (k = 0; k < FAKE_REGIONS; k++) {
        fake_protect(fake_region[k].base != NULL ? k : -1, PROT_READ | PROT_WRITE);
    }
    rc = st_cuda_emulated_launch(fn, grid, block, params);
    for (k = 0; k < FAKE_REGIONS; k++) {
        fake_protect(fake_region[k].base != NULL ? k : -1, PROT_NONE);
    }
    fake_launches += (rc == 0);
    return rc;
}

/* run what the stream holds, in order */
static void fake_flush(void)
{
    void *params[1];
    int q;

    for (q = 0; q < fake_queued; q++) {
        if (fake_queue[q].fn != NULL) {
            params[0] = &fake_queue[q].args;
            fake_run(fake_queue[q].fn, 1, 1, params);   /* a fold: any grid */
        } else {
            fake_copy(fake_queue[q].dst, fake_queue[q].src, fake_queue[q].bytes);
        }
    }
    fake_queued = 0;
}

/* the queue's next entry (flushing a full queue first) */
static fake_work_t *fake_enqueue(const void *fn)
{
    if (fake_queued == FAKE_QUEUE) {
        fake_flush();
    }
    fake_queue[fake_queued].fn = fn;
    return &fake_queue[fake_queued++];
}

static int fake_is_fold(const void *fn)
{
    int k;

    for (k = 0; k < fake_nfolds; k++) {
        if (fake_folds[k] == fn) {
            return 1;
        }
    }
    return 0;
}

int cuModuleLoadData(void **mod, const void *image)
{
    static const unsigned char magic[4] = {0x50, 0xed, 0x55, 0xba};   /* 0xba55ed50 */

    if (fake_current == NULL) {
        return 201;
    }
    if (image == NULL || memcmp(image, magic, sizeof(magic)) != 0) {
        return 200;   /* CUDA_ERROR_INVALID_IMAGE */
    }
    if (fake_cuda_flag("FAKE_CUDA_NO_KERNELS")) {
        return 209;   /* CUDA_ERROR_NO_BINARY_FOR_GPU: a GPU older than the fatbin's code */
    }
    *mod = (void*)0x40d;
    return 0;
}

/* FAKE_CUDA_FAIL_KERNEL=NAME: that kernel's launches fail (an illegal address), so
 * that a test can tell the kernel ran */
static const void *fake_fail_fn;

int cuModuleGetFunction(void **fn, void *mod, const char *name)
{
    const void *k = (mod == (void*)0x40d) ? st_cuda_emulated_kernel(name) : NULL;
    const char *fail = getenv("FAKE_CUDA_FAIL_KERNEL");

    if (k == NULL) {
        return 500;   /* CUDA_ERROR_NOT_FOUND */
    }
    if (fail != NULL && strcmp(fail, name) == 0) {
        fake_fail_fn = k;
    }
    if (strncmp(name, "st_fold_", 8) == 0 && fake_nfolds < 512 && !fake_is_fold(k)) {
        fake_folds[fake_nfolds++] = k;
    }
    *fn = (void*)k;
    return 0;
}

int fake_cuda_is_device(const void *p)
{
    return fake_find((uintptr_t)p) >= 0;
}

int cuLaunchKernel(void *fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                   unsigned bz, unsigned shmem, void *stream, void **params, void **extra)
{
    (void)shmem;
    if (fake_current == NULL) {
        return 201;
    }
    if (fn == NULL || params == NULL || extra != NULL || gx < 1 || gy != 1 || gz != 1 ||
        bx < 1 || bx > 1024 || by != 1 || bz != 1 || (stream != NULL && stream != FAKE_STREAM)) {
        return 1;   /* CUDA_ERROR_INVALID_VALUE */
    }
    if (stream == FAKE_STREAM && fake_is_fold(fn)) {
        fake_enqueue(fn)->args = *(const st_cuda_fold_args_t*)params[0];
        return 0;
    }
    if (stream == NULL) {
        fake_land();   /* in order on the legacy stream */
    }
    fake_flush();   /* the solver's kernels (other arguments) run now, after the queue */
    if (fn == fake_fail_fn) {
        return 700;   /* CUDA_ERROR_ILLEGAL_ADDRESS */
    }
    return fake_run(fn, gx, bx, params);
}

/* ---- CUDA IPC and streams ---- */

unsigned long fake_cuda_ipc_opens;   /* handles opened in this process */

int cuIpcGetMemHandle(fake_ipc_handle_t *handle, unsigned long long dptr)
{
    int k = fake_find((uintptr_t)dptr);

    if (k < 0 || fake_region[k].fd < 0 || (uintptr_t)dptr != (uintptr_t)fake_region[k].base ||
        fake_pool()) {
        return 1;   /* not the start of an allocation of this process, or a pool's */
    }
    memset(handle, 0, sizeof(*handle));
    handle->magic = FAKE_IPC_MAGIC;
    handle->pid   = (int)getpid();
    handle->fd    = fake_region[k].fd;
    handle->id    = fake_region[k].id;
    handle->size  = fake_region[k].size;
    return 0;
}

int cuIpcOpenMemHandle_v2(unsigned long long *dptr, fake_ipc_handle_t handle, unsigned flags)
{
    char path[64];
    void *p;
    int k, fd;

    (void)flags;
    if (fake_current == NULL) {
        return 201;
    }
    if (handle.magic != FAKE_IPC_MAGIC || handle.pid == (int)getpid()) {
        return 1;   /* the driver refuses a process's own handles */
    }
    for (k = 0; k < FAKE_REGIONS; k++) {
        if (fake_region[k].base != NULL && fake_region[k].fd < 0 &&
            fake_region[k].owner == handle.pid && fake_region[k].id == handle.id) {
            return 208;   /* CUDA_ERROR_ALREADY_MAPPED: a handle opens once per process */
        }
    }
    for (k = 0; k < FAKE_REGIONS && fake_region[k].base != NULL; k++) {
    }
    if (k == FAKE_REGIONS) {
        return 2;
    }
    snprintf(path, sizeof(path), "/proc/%d/fd/%d", handle.pid, handle.fd);
    fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0) {
        return 400;   /* CUDA_ERROR_INVALID_HANDLE: the owner freed it or is gone */
    }
    p = mmap(NULL, (size_t)handle.size, PROT_NONE, MAP_SHARED, fd, 0);
    close(fd);
    if (p == MAP_FAILED) {
        return 2;
    }
    fake_region[k].base  = p;
    fake_region[k].size  = (size_t)handle.size;
    fake_region[k].fd    = -1;
    fake_region[k].id    = handle.id;
    fake_region[k].owner = handle.pid;
    fake_cuda_ipc_opens++;
    *dptr = (unsigned long long)(uintptr_t)p;
    return 0;
}

int cuIpcCloseMemHandle(unsigned long long dptr)
{
    int k = fake_find((uintptr_t)dptr);

    if (k < 0 || fake_region[k].fd >= 0) {
        return 1;
    }
    munmap(fake_region[k].base, fake_region[k].size);
    fake_region[k].base = NULL;
    return 0;
}

/* any region of this process, own or imported: its first address and size */
int cuMemGetAddressRange_v2(unsigned long long *pbase, size_t *psize, unsigned long long dptr)
{
    int k = fake_find((uintptr_t)dptr);

    if (k < 0) {
        return 500;   /* CUDA_ERROR_NOT_FOUND */
    }
    if (pbase != NULL) {
        *pbase = (unsigned long long)(uintptr_t)fake_region[k].base;
    }
    if (psize != NULL) {
        *psize = fake_region[k].size;
    }
    return 0;
}

unsigned long fake_cuda_ipc_mapped(void)   /* imported regions open now */
{
    unsigned long n = 0;
    int k;

    for (k = 0; k < FAKE_REGIONS; k++) {
        n += (fake_region[k].base != NULL && fake_region[k].fd < 0);
    }
    return n;
}

int cuStreamCreate(void **stream, unsigned flags)
{
    (void)flags;
    if (fake_current == NULL) {
        return 201;
    }
    *stream = FAKE_STREAM;
    return 0;
}

int cuStreamDestroy_v2(void *stream)
{
    if (stream == FAKE_STREAM) {
        fake_flush();   /* the driver finishes a destroyed stream's work */
    }
    return (stream == FAKE_STREAM) ? 0 : 400;
}

/* the GPU's free memory: FAKE_CUDA_MEM bytes (default 1 GiB) */
int cuMemGetInfo_v2(size_t *free_bytes, size_t *total_bytes)
{
    const char *v = getenv("FAKE_CUDA_MEM");

    FAKE_NEED_CTX();
    *free_bytes  = (v != NULL) ? (size_t)strtoull(v, NULL, 10) : ((size_t)1 << 30);
    *total_bytes = *free_bytes;
    return 0;
}

/* Host ranges pinned now, whole pages as the driver pins them: a range that shares
 * a page with a pinned one fails, as with the driver. */
#define FAKE_PINNED 16
unsigned long fake_cuda_registered;
static struct {
    uintptr_t first, end;   /* pages */
    void *p;
} fake_pinned[FAKE_PINNED];

int cuMemHostRegister_v2(void *p, size_t bytes, unsigned flags)
{
    uintptr_t first = (uintptr_t)p / 4096, end = ((uintptr_t)p + bytes + 4095) / 4096;
    int k, free_k = -1;

    (void)flags;
    FAKE_NEED_CTX();
    if (p == NULL || bytes == 0) {
        return 1;
    }
    for (k = 0; k < FAKE_PINNED; k++) {
        if (fake_pinned[k].p == NULL) {
            free_k = (free_k < 0) ? k : free_k;
        } else if (first < fake_pinned[k].end && fake_pinned[k].first < end) {
            return 712;   /* CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED */
        }
    }
    if (free_k < 0) {
        return 2;         /* CUDA_ERROR_OUT_OF_MEMORY */
    }
    fake_pinned[free_k].first = first;
    fake_pinned[free_k].end   = end;
    fake_pinned[free_k].p     = p;
    fake_cuda_registered++;
    return 0;
}

/* is [p, p + bytes) inside one pinned range? */
static int fake_is_pinned(const void *p, size_t bytes)
{
    uintptr_t first = (uintptr_t)p / 4096, end = ((uintptr_t)p + bytes + 4095) / 4096;
    int k;

    for (k = 0; k < FAKE_PINNED; k++) {
        if (fake_pinned[k].p != NULL && fake_pinned[k].first <= first &&
            end <= fake_pinned[k].end) {
            return 1;
        }
    }
    return 0;
}

int cuMemHostUnregister(void *p)
{
    int k;

    for (k = 0; k < FAKE_PINNED; k++) {
        if (p != NULL && fake_pinned[k].p == p) {
            fake_pinned[k].p = NULL;
            fake_cuda_registered--;
            return 0;
        }
    }
    return 713;   /* CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED */
}

/* FAKE_CUDA_FAIL_SYNC=1: a stream's work fails (700, as a faulting kernel's) */
int cuStreamSynchronize(void *stream)
{
    if (stream == FAKE_STREAM) {
        fake_flush();
        if (fake_cuda_flag("FAKE_CUDA_FAIL_SYNC")) {
            return 700;   /* CUDA_ERROR_ILLEGAL_ADDRESS */
        }
    } else if (stream == NULL) {
        FAKE_NEED_CTX();   /* the legacy stream of the current context */
        fake_land();
    }
    return (stream == FAKE_STREAM || stream == NULL) ? 0 : 400;
}

int cuMemcpyAsync(unsigned long long dst, unsigned long long src, size_t bytes, void *stream)
{
    fake_work_t *w;

    if (stream != FAKE_STREAM && stream != NULL) {
        return 400;
    }
    if (stream == NULL) {
        return cuMemcpy(dst, src, bytes);
    }
    w        = fake_enqueue(NULL);
    w->dst   = dst;
    w->src   = src;
    w->bytes = bytes;
    return 0;
}
