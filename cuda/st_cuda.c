/*
 * Device-pointer classification and staging copies through the CUDA driver API,
 * resolved at run time from a libcuda the process has already loaded.
 *
 * Is libcuda loaded? dlopen("libcuda.so.1", RTLD_NOLOAD) answers without loading
 * it, but takes the loader's lock and walks its list, so it runs only when the set
 * of loaded objects changed since the last look: dl_iterate_phdr hands its first
 * callback the count of objects ever loaded (dlpi_adds), and that first callback
 * stops the walk. Once found, the driver's entry points are kept for good (a
 * process does not unload libcuda while it has device memory).
 *
 * The driver types are declared here (their ABI is stable: the values are those of
 * cuda.h), so a build without the CUDA toolkit has this code too.
 */
#include "config.h"

#include "st_cuda.h"
#include "st_common.h"
#include "st_cuda_kernels.h"
#include "st_reduce_ops.h"

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

typedef int st_cu_result_t;                 /* CUresult: 0 is CUDA_SUCCESS */
typedef unsigned long long st_cu_ptr_t;     /* CUdeviceptr */
typedef void *st_cu_ctx_t;                  /* CUcontext */
typedef void *st_cu_module_t;               /* CUmodule */
typedef void *st_cu_function_t;             /* CUfunction */

enum {
    ST_CU_POINTER_ATTRIBUTE_CONTEXT          = 1,
    ST_CU_POINTER_ATTRIBUTE_MEMORY_TYPE      = 2,
    ST_CU_POINTER_ATTRIBUTE_BUFFER_ID        = 7,
    ST_CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL   = 9,
    ST_CU_POINTER_ATTRIBUTE_IPC_CAPABLE      = 10,   /* IS_LEGACY_CUDA_IPC_CAPABLE */
    ST_CU_POINTER_ATTRIBUTE_RANGE_START_ADDR = 11,
    ST_CU_POINTER_ATTRIBUTE_RANGE_SIZE       = 12,
    ST_CU_MEMORYTYPE_HOST                    = 1,
    ST_CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS    = 1,
    ST_CU_STREAM_NON_BLOCKING                = 1,
    ST_CU_ERROR_INVALID_CONTEXT              = 201,
    ST_CU_ERROR_NOT_FOUND                    = 500
};

typedef struct {
    unsigned char data[ST_CUDA_IPC_HANDLE_SIZE];
} st_cu_ipc_handle_t;   /* CUipcMemHandle, passed by value */

typedef struct {
    st_cu_result_t (*pointer_get_attribute)(void *data, int attribute, st_cu_ptr_t ptr);
    st_cu_result_t (*pointer_get_attributes)(unsigned n, int *attributes, void **data,
                                             st_cu_ptr_t ptr);   /* optional */
    st_cu_result_t (*memcpy)(st_cu_ptr_t dst, st_cu_ptr_t src, size_t bytes);
    st_cu_result_t (*ctx_push)(st_cu_ctx_t ctx);
    st_cu_result_t (*ctx_pop)(st_cu_ctx_t *ctx);
    /* the kernels' (optional: without them, no GPU reduction) */
    st_cu_result_t (*ctx_get_current)(st_cu_ctx_t *ctx);
    st_cu_result_t (*module_load_data)(st_cu_module_t *mod, const void *image);
    st_cu_result_t (*module_get_function)(st_cu_function_t *fn, st_cu_module_t mod,
                                          const char *name);
    st_cu_result_t (*launch_kernel)(st_cu_function_t fn, unsigned gx, unsigned gy, unsigned gz,
                                    unsigned bx, unsigned by, unsigned bz, unsigned shmem,
                                    void *stream, void **params, void **extra);
    /* CUDA IPC and streams (optional: without them, device buffers are staged) */
    st_cu_result_t (*ipc_get)(st_cu_ipc_handle_t *handle, st_cu_ptr_t ptr);
    st_cu_result_t (*ipc_open)(st_cu_ptr_t *ptr, st_cu_ipc_handle_t handle, unsigned flags);
    st_cu_result_t (*ipc_close)(st_cu_ptr_t ptr);
    st_cu_result_t (*mem_get_address_range)(st_cu_ptr_t *base, size_t *size, st_cu_ptr_t ptr);
    st_cu_result_t (*stream_create)(void **stream, unsigned flags);
    st_cu_result_t (*stream_sync)(void *stream);
    st_cu_result_t (*memcpy_async)(st_cu_ptr_t dst, st_cu_ptr_t src, size_t bytes, void *stream);
    /* a program's own use of a GPU (st_cuda_open: the GLM solver) */
    st_cu_result_t (*init)(unsigned flags);
    st_cu_result_t (*device_get_count)(int *count);
    st_cu_result_t (*device_get)(int *dev, int ordinal);
    st_cu_result_t (*primary_ctx_retain)(st_cu_ctx_t *ctx, int dev);
    st_cu_result_t (*primary_ctx_release)(int dev);
    st_cu_result_t (*primary_ctx_get_state)(int dev, unsigned *flags, int *active);
    st_cu_result_t (*ctx_set_current)(st_cu_ctx_t ctx);
    st_cu_result_t (*mem_alloc)(st_cu_ptr_t *ptr, size_t bytes);
    st_cu_result_t (*mem_free)(st_cu_ptr_t ptr);
    st_cu_result_t (*mem_get_info)(size_t *free_bytes, size_t *total_bytes);
    st_cu_result_t (*host_register)(void *p, size_t bytes, unsigned flags);
    st_cu_result_t (*host_unregister)(void *p);
    st_cu_result_t (*stream_destroy)(void *stream);
    st_cu_result_t (*device_get_uuid)(unsigned char uuid[16], int dev);   /* optional */
    st_cu_result_t (*device_get_attribute)(int *value, int attrib, int dev); /* optional */
    st_cu_result_t (*occupancy)(int *blocks, void *fn, int block, size_t smem); /* optional */
} st_cu_api_t;

static st_cu_api_t            st_cu;
static _Atomic int            st_cu_ready;        /* st_cu is filled in */
static _Atomic unsigned long long st_cu_adds_seen = ~0ULL;
static pthread_mutex_t        st_cu_lock = PTHREAD_MUTEX_INITIALIZER;

static int st_cuda_first_object(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    *(unsigned long long*)arg = info->dlpi_adds;
    return 1;   /* the first object is enough */
}

int st_cuda_loaded(void)
{
    unsigned long long adds = 0;
    void *lib;

    if (ST_LIKELY(atomic_load_explicit(&st_cu_ready, memory_order_acquire))) {
        return 1;
    }
    dl_iterate_phdr(st_cuda_first_object, &adds);
    if (ST_LIKELY(adds == atomic_load_explicit(&st_cu_adds_seen, memory_order_relaxed))) {
        return 0;
    }
    pthread_mutex_lock(&st_cu_lock);
    if (!st_cu_ready) {
        atomic_store_explicit(&st_cu_adds_seen, adds, memory_order_relaxed);
        lib = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
        if (lib != NULL) {
            *(void**)&st_cu.pointer_get_attribute = dlsym(lib, "cuPointerGetAttribute");
            *(void**)&st_cu.memcpy                = dlsym(lib, "cuMemcpy");
            *(void**)&st_cu.pointer_get_attributes = dlsym(lib, "cuPointerGetAttributes");
            *(void**)&st_cu.ctx_push              = dlsym(lib, "cuCtxPushCurrent_v2");
            *(void**)&st_cu.ctx_pop               = dlsym(lib, "cuCtxPopCurrent_v2");
            *(void**)&st_cu.ctx_get_current       = dlsym(lib, "cuCtxGetCurrent");
            *(void**)&st_cu.module_load_data      = dlsym(lib, "cuModuleLoadData");
            *(void**)&st_cu.module_get_function   = dlsym(lib, "cuModuleGetFunction");
            *(void**)&st_cu.launch_kernel         = dlsym(lib, "cuLaunchKernel");
            *(void**)&st_cu.ipc_get               = dlsym(lib, "cuIpcGetMemHandle");
            *(void**)&st_cu.ipc_open              = dlsym(lib, "cuIpcOpenMemHandle_v2");
            *(void**)&st_cu.ipc_close             = dlsym(lib, "cuIpcCloseMemHandle");
            *(void**)&st_cu.mem_get_address_range = dlsym(lib, "cuMemGetAddressRange_v2");
            *(void**)&st_cu.stream_create         = dlsym(lib, "cuStreamCreate");
            *(void**)&st_cu.stream_sync           = dlsym(lib, "cuStreamSynchronize");
            *(void**)&st_cu.memcpy_async          = dlsym(lib, "cuMemcpyAsync");
            *(void**)&st_cu.init                  = dlsym(lib, "cuInit");
            *(void**)&st_cu.device_get_count      = dlsym(lib, "cuDeviceGetCount");
            *(void**)&st_cu.device_get            = dlsym(lib, "cuDeviceGet");
            *(void**)&st_cu.primary_ctx_retain    = dlsym(lib, "cuDevicePrimaryCtxRetain");
            *(void**)&st_cu.primary_ctx_release   = dlsym(lib, "cuDevicePrimaryCtxRelease_v2");
            *(void**)&st_cu.primary_ctx_get_state = dlsym(lib, "cuDevicePrimaryCtxGetState");
            *(void**)&st_cu.ctx_set_current       = dlsym(lib, "cuCtxSetCurrent");
            *(void**)&st_cu.mem_alloc             = dlsym(lib, "cuMemAlloc_v2");
            *(void**)&st_cu.mem_free              = dlsym(lib, "cuMemFree_v2");
            *(void**)&st_cu.mem_get_info          = dlsym(lib, "cuMemGetInfo_v2");
            *(void**)&st_cu.host_register         = dlsym(lib, "cuMemHostRegister_v2");
            *(void**)&st_cu.host_unregister       = dlsym(lib, "cuMemHostUnregister");
            *(void**)&st_cu.stream_destroy        = dlsym(lib, "cuStreamDestroy_v2");
            *(void**)&st_cu.device_get_uuid       = dlsym(lib, "cuDeviceGetUuid_v2");
            *(void**)&st_cu.device_get_attribute  = dlsym(lib, "cuDeviceGetAttribute");
            *(void**)&st_cu.occupancy             =
                    dlsym(lib, "cuOccupancyMaxActiveBlocksPerMultiprocessor");
            if (st_cu.pointer_get_attribute != NULL && st_cu.memcpy != NULL &&
                st_cu.ctx_push != NULL && st_cu.ctx_pop != NULL) {
                st_debug("libcuda is loaded: device buffers are staged through host memory");
                atomic_store_explicit(&st_cu_ready, 1, memory_order_release);
            } else {
                st_warn("libcuda.so.1 is loaded but lacks the driver API Strata uses; "
                        "buffers are taken for host memory");
            }
            /* the reference from dlopen is kept: libcuda stays while Strata uses it */
        }
    }
    pthread_mutex_unlock(&st_cu_lock);
    return atomic_load_explicit(&st_cu_ready, memory_order_acquire);
}

/*
 * One driver call per buffer: cuPointerGetAttributes asks for the memory type and
 * everything the device paths need of the allocation at once (on host memory the
 * driver never saw, it answers success with the memory type 0). Where it fails
 * (not initialized, or a driver that lacks one of the attributes), single
 * cuPointerGetAttribute queries: the memory type, and only for device memory the
 * rest (an unknown IPC attribute then means no IPC). A driver whose
 * cuPointerGetAttributes failed on device memory is asked by single queries from
 * then on.
 */
static _Atomic int st_cu_multi_broken;

static int st_cuda_query_singles(st_cu_ptr_t p, const int *attrs, void **data, int n)
{
    int k;

    for (k = 0; k < n; k++) {
        if (st_cu.pointer_get_attribute(data[k], attrs[k], p) != 0) {
            if (attrs[k] != ST_CU_POINTER_ATTRIBUTE_IPC_CAPABLE) {
                return -1;
            }
            *(int*)data[k] = 0;   /* an older driver: IPC is not tried */
        }
    }
    return 0;
}

/*
 * The primary context of device @a ordinal if it is active, else NULL. Memory of a
 * pool (cudaMallocAsync) or of the virtual memory API (cuMemCreate) belongs to no
 * context (CU_POINTER_ATTRIBUTE_CONTEXT is NULL): Strata copies and waits for it in
 * its device's primary context, the one the CUDA runtime made for the program,
 * rather than in whatever context the calling thread has current (none in a thread
 * of the program's that never used CUDA, another device's in one that did). The
 * reference taken is given back at once: the program holds its own.
 */
static st_cu_ctx_t st_cuda_primary_of(int ordinal)
{
    st_cu_ctx_t ctx = NULL;
    unsigned flags  = 0;
    int dev, active = 0;

    if (ordinal < 0 || st_cu.device_get == NULL || st_cu.primary_ctx_get_state == NULL ||
        st_cu.primary_ctx_retain == NULL || st_cu.primary_ctx_release == NULL ||
        st_cu.device_get(&dev, ordinal) != 0 ||
        st_cu.primary_ctx_get_state(dev, &flags, &active) != 0 || !active ||
        st_cu.primary_ctx_retain(&ctx, dev) != 0) {
        return NULL;
    }
    st_cu.primary_ctx_release(dev);
    return ctx;
}

st_mem_kind_t st_cuda_query(const void *ptr, st_cuda_buf_t *info)
{
    int attrs[7] = {ST_CU_POINTER_ATTRIBUTE_MEMORY_TYPE, ST_CU_POINTER_ATTRIBUTE_CONTEXT,
                    ST_CU_POINTER_ATTRIBUTE_BUFFER_ID, ST_CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
                    ST_CU_POINTER_ATTRIBUTE_RANGE_START_ADDR,
                    ST_CU_POINTER_ATTRIBUTE_RANGE_SIZE, ST_CU_POINTER_ATTRIBUTE_IPC_CAPABLE};
    st_cu_ptr_t p = (st_cu_ptr_t)(uintptr_t)ptr, start = 0;
    unsigned long long id = 0;
    unsigned int type = 0;
    int ordinal = -1, ipc = 0, n = (int)ST_ARRAY_SIZE(attrs);
    size_t size = 0;
    void *ctx = NULL;
    void *data[7] = {&type, &ctx, &id, &ordinal, &start, &size, &ipc};

    memset(info, 0, sizeof(*info));
    info->kind = ST_MEM_HOST;
    if (ptr == NULL || !st_cuda_loaded()) {
        return ST_MEM_HOST;
    }
    if (st_cu.pointer_get_attributes == NULL ||
        atomic_load_explicit(&st_cu_multi_broken, memory_order_relaxed) ||
        st_cu.pointer_get_attributes((unsigned)n, attrs, data, p) != 0) {
        /* host memory the driver never saw answers CUDA_ERROR_INVALID_VALUE; before
           cuInit, CUDA_ERROR_NOT_INITIALIZED: both are host memory to Strata */
        type = 0;
        if (st_cu.pointer_get_attribute(&type, ST_CU_POINTER_ATTRIBUTE_MEMORY_TYPE, p) != 0 ||
            type == ST_CU_MEMORYTYPE_HOST) {
            return ST_MEM_HOST;
        }
        if (st_cu.pointer_get_attributes != NULL) {
            atomic_store_explicit(&st_cu_multi_broken, 1, memory_order_relaxed);
        }
        if (st_cuda_query_singles(p, attrs + 1, data + 1, n - 1) != 0) {
            ctx = NULL;   /* device memory all the same: staged, not shared */
            size = 0;
        }
    } else if (type == 0 || type == ST_CU_MEMORYTYPE_HOST) {
        return ST_MEM_HOST;
    }
    info->kind = ST_MEM_DEVICE;
    if (ctx == NULL && size != 0) {
        ctx = st_cuda_primary_of(ordinal);   /* a pool's or the VMM API's memory */
    }
    if (ctx != NULL && size != 0) {
        info->ctx     = ctx;
        info->base    = (uintptr_t)start;
        info->size    = size;
        info->id      = id;
        info->ordinal = ordinal;
        info->ipc     = ipc;
    }
    return ST_MEM_DEVICE;
}

int st_cuda_copy(void *dst, const void *src, size_t bytes, void *ctx)
{
    st_cu_ctx_t popped;
    st_cu_result_t rc;

    if (bytes == 0) {
        return 0;
    }
    if (!st_cuda_loaded()) {
        return -1;
    }
    /* the copy runs in the context of the device buffer, whatever this thread's is */
    if (ctx != NULL && st_cu.ctx_push(ctx) != 0) {
        ctx = NULL;
    }
    rc = st_cu.memcpy((st_cu_ptr_t)(uintptr_t)dst, (st_cu_ptr_t)(uintptr_t)src, bytes);
    /* from pageable host memory, cuMemcpy returns once the data is staged, before
     * the DMA into device memory ends: wait for it on the legacy stream, so that
     * work on the program's other streams (and peers through CUDA IPC) that
     * follows the call sees the result */
    if (rc == 0 && st_cu.stream_sync != NULL) {
        rc = st_cu.stream_sync(NULL);
    }
    if (ctx != NULL) {
        st_cu.ctx_pop(&popped);
    }
    if (rc != 0) {
        st_error("cuMemcpy of %zu bytes between host and device failed (CUresult %d)", bytes,
                 rc);
        return -1;
    }
    return 0;
}

int st_cuda_settle(void *ctx)
{
    st_cu_ctx_t popped;
    st_cu_result_t rc;

    if (!st_cuda_loaded() || st_cu.stream_sync == NULL) {
        return 0;
    }
    if (ctx != NULL && st_cu.ctx_push(ctx) != 0) {
        ctx = NULL;
    }
    rc = st_cu.stream_sync(NULL);
    if (ctx != NULL) {
        st_cu.ctx_pop(&popped);
    }
    if (rc != 0 && !(ctx == NULL && rc == ST_CU_ERROR_INVALID_CONTEXT)) {
        st_error("cuStreamSynchronize of the legacy stream failed (CUresult %d)", rc);
        return -1;
    }
    return 0;   /* no context current: no work of the program to wait for here */
}

/* ---- the GPU reduction kernels ---- */

#if HAVE_CUDA
extern const unsigned char st_cuda_fatbin[];   /* cuda/st_cuda_fatbin.c, made by nvcc */
#define ST_CU_NAME_ANY(_tn, _on)  "st_fold_" #_tn "_" #_on
#else
#define ST_CU_NAME_ANY(_tn, _on)  NULL
#endif
#define ST_CU_NAME_HOST(_tn, _on) NULL
#define ST_CU_NAME_ENTRY(_on, _on_name, _X, _tn, _where) \
    [ST_OP_##_on] = ST_CU_NAME_##_where(_tn, _on_name),
#define ST_CU_NAME_ROW(_id, _cls, _tn, _where) \
    [ST_TYPE_##_id] = {ST_OPS_##_cls(ST_CU_NAME_ENTRY, _tn, _where)},
static const char *const st_cu_kernel_names[ST_TYPE_LAST][ST_OP_LAST] = {
    ST_TYPE_KERNELS(ST_CU_NAME_ROW)
};

#define ST_CU_MAX_CTX 16   /* contexts with the kernels loaded */

/* The module of each context that launched a fold, with the kernels looked up so
 * far. A context destroyed and another created at the same address would find the
 * old module: CUDA programs keep their contexts for the process's life. */
static struct {
    st_cu_ctx_t ctx;
    st_cu_module_t mod;
    int loaded;           /* 0 not tried yet, 1 mod is loaded, -1 it failed (said once) */
    void *stream;         /* Strata's own stream in this context (NULL: not made yet) */
    st_cu_function_t fn[ST_TYPE_LAST][ST_OP_LAST];
} st_cu_mods[ST_CU_MAX_CTX];
static int st_cu_nmods;

int st_cuda_fold_supported(st_type_t type, st_op_t op)
{
    return (unsigned)type < ST_TYPE_LAST && (unsigned)op < ST_OP_LAST &&
           st_cu_kernel_names[type][op] != NULL;
}

/* The table entry of context @a ctx, made on first sight (under st_cu_lock); -1 when
 * the table is full. */
static int st_cuda_entry_locked(st_cu_ctx_t ctx)
{
    int m;

    for (m = 0; m < st_cu_nmods && st_cu_mods[m].ctx != ctx; m++) {
    }
    if (m == ST_CU_MAX_CTX) {
        return -1;
    }
    if (m == st_cu_nmods) {   /* its module is loaded by the first kernel */
        memset(&st_cu_mods[m], 0, sizeof(st_cu_mods[m]));
        st_cu_mods[m].ctx = ctx;
        st_cu_nmods++;
    }
    return m;
}

/* The module table entry of the current context, the kernels loaded (under
 * st_cu_lock); NULL when there is no current context or no kernels. */
static int st_cuda_module_locked(void)
{
    st_cu_ctx_t ctx = NULL;
    st_cu_result_t rc;
    int m;

    if (st_cu.ctx_get_current == NULL || st_cu.module_load_data == NULL ||
        st_cu.module_get_function == NULL || st_cu.launch_kernel == NULL) {
        return -1;
    }
    if (st_cu.ctx_get_current(&ctx) != 0 || ctx == NULL) {
        st_error("a GPU kernel needs a current CUDA context");
        return -1;
    }
    if ((m = st_cuda_entry_locked(ctx)) < 0) {
        st_error("more than %d CUDA contexts: no GPU kernels in this one", ST_CU_MAX_CTX);
        return -1;
    }
    if (st_cu_mods[m].loaded == 0) {
#if HAVE_CUDA
        rc = st_cu.module_load_data(&st_cu_mods[m].mod, st_cuda_fatbin);
#else
        rc = -1;
#endif
        st_cu_mods[m].loaded = (rc == 0) ? 1 : -1;
        if (rc != 0) {
            st_warn("cannot load Strata's GPU kernels in this context (CUresult %d): a GPU "
                    "older than the build's targets (see ./configure NVCC_GENCODE)?", rc);
        }
    }
    return (st_cu_mods[m].loaded == 1) ? m : -1;
}

static st_cu_function_t st_cuda_function(st_type_t type, st_op_t op)
{
    st_cu_function_t fn = NULL;
    st_cu_result_t rc;
    int m;

    if (!st_cuda_fold_supported(type, op) || !st_cuda_loaded()) {
        return NULL;
    }
    pthread_mutex_lock(&st_cu_lock);
    m = st_cuda_module_locked();
    if (m >= 0) {
        fn = st_cu_mods[m].fn[type][op];
        if (fn == NULL) {
            rc = st_cu.module_get_function(&fn, st_cu_mods[m].mod, st_cu_kernel_names[type][op]);
            if (rc != 0) {
                st_error("GPU kernel %s not found (CUresult %d)", st_cu_kernel_names[type][op],
                         rc);
                fn = NULL;
            }
            st_cu_mods[m].fn[type][op] = fn;
        }
    }
    pthread_mutex_unlock(&st_cu_lock);
    return fn;
}

void *st_cuda_kernel(const char *name)
{
    st_cu_function_t fn = NULL;
    int m;

    if (!st_cuda_loaded()) {
        return NULL;
    }
    pthread_mutex_lock(&st_cu_lock);
    m = st_cuda_module_locked();
    if (m >= 0 && st_cu.module_get_function(&fn, st_cu_mods[m].mod, name) != 0) {
        st_error("GPU kernel %s not found", name);
        fn = NULL;
    }
    pthread_mutex_unlock(&st_cu_lock);
    return fn;
}

int st_cuda_launch(void *fn, unsigned grid, unsigned block, void *args, void *stream)
{
    void *params[1] = {args};
    st_cu_result_t rc = st_cu.launch_kernel(fn, grid, 1, 1, block, 1, 1, 0, stream, params, NULL);

    if (rc != 0) {
        st_error("GPU kernel launch failed (CUresult %d)", rc);
        return -1;
    }
    return 0;
}

int st_cuda_fold_ready(st_type_t type, st_op_t op)
{
    return st_cuda_function(type, op) != NULL;
}

int st_cuda_fold(st_type_t type, st_op_t op, void *out, const void *const *src, int nsrc,
                 size_t count, void *stream)
{
    return st_cuda_fold_to(type, op, &out, 1, src, nsrc, count, stream);
}

int st_cuda_fold_to(st_type_t type, st_op_t op, void *const *out, int nout,
                    const void *const *src, int nsrc, size_t count, void *stream)
{
    st_cuda_fold_args_t args;
    st_cu_function_t fn;
    size_t blocks;
    int k;

    if (nsrc < 1 || nsrc > ST_CUDA_MAX_SRC || nout < 1 || nout > ST_CUDA_MAX_SRC) {
        return -1;
    }
    if (count == 0) {
        return 0;
    }
    if ((fn = st_cuda_function(type, op)) == NULL) {
        return -1;
    }
    memset(&args, 0, sizeof(args));
    args.count = count;
    args.nsrc  = nsrc;
    args.nout  = nout;
    for (k = 0; k < nsrc; k++) {
        args.src[k] = src[k];
    }
    for (k = 0; k < nout; k++) {
        args.out[k] = out[k];
    }
    /* enough blocks to fill any GPU; the kernels' grid-stride loops do the rest */
    blocks = ST_MIN((count + ST_CUDA_FOLD_BLOCK - 1) / ST_CUDA_FOLD_BLOCK, (size_t)65535);
    return st_cuda_launch(fn, (unsigned)blocks, ST_CUDA_FOLD_BLOCK, &args, stream);
}

/* ---- what CUDA IPC needs ---- */

int st_cuda_ipc_usable(void)
{
    return st_cuda_loaded() && st_cu.ipc_get != NULL && st_cu.ipc_open != NULL &&
           st_cu.ipc_close != NULL && st_cu.stream_create != NULL && st_cu.stream_sync != NULL &&
           st_cu.memcpy_async != NULL && st_cu.ctx_get_current != NULL &&
           st_cu.module_load_data != NULL && st_cu.module_get_function != NULL &&
           st_cu.launch_kernel != NULL;
}

int st_cuda_gpu_id(int ordinal, unsigned char id[16])
{
    static struct {
        int known;
        unsigned char id[16];
    } ids[64];
    int dev, rc = -1;

    if (!st_cuda_loaded() || st_cu.device_get_uuid == NULL || st_cu.device_get == NULL ||
        ordinal < 0 || ordinal >= 64) {
        return -1;
    }
    pthread_mutex_lock(&st_cu_lock);
    if (!ids[ordinal].known && st_cu.device_get(&dev, ordinal) == 0 &&
        st_cu.device_get_uuid(ids[ordinal].id, dev) == 0) {
        ids[ordinal].known = 1;
    }
    if (ids[ordinal].known) {
        memcpy(id, ids[ordinal].id, 16);
        rc = 0;
    }
    pthread_mutex_unlock(&st_cu_lock);
    return rc;
}

int st_cuda_ctx_enter(void *ctx)
{
    return (st_cuda_loaded() && ctx != NULL && st_cu.ctx_push(ctx) == 0) ? 0 : -1;
}

void st_cuda_ctx_leave(void)
{
    st_cu_ctx_t popped;

    st_cu.ctx_pop(&popped);
}

int st_cuda_ipc_get(uintptr_t base, void *handle)
{
    st_cu_ipc_handle_t h;
    st_cu_result_t rc = st_cu.ipc_get(&h, (st_cu_ptr_t)base);

    if (rc != 0) {
        st_debug("cuIpcGetMemHandle(%#lx) failed (CUresult %d)", (unsigned long)base, rc);
        return -1;
    }
    memcpy(handle, h.data, sizeof(h.data));
    return 0;
}

int st_cuda_ipc_open(const void *handle, void **mapped_p)
{
    st_cu_ipc_handle_t h;
    st_cu_ptr_t p = 0;
    st_cu_result_t rc;

    memcpy(h.data, handle, sizeof(h.data));
    rc = st_cu.ipc_open(&p, h, ST_CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS);
    if (rc != 0) {
        st_debug("cuIpcOpenMemHandle failed (CUresult %d)", rc);
        return -1;
    }
    *mapped_p = (void*)(uintptr_t)p;
    return 0;
}

int st_cuda_alloc_gone(uintptr_t base, size_t size)
{
    st_cu_ptr_t b = 0;
    size_t n = 0;
    st_cu_result_t rc;

    if (!st_cuda_loaded() || st_cu.mem_get_address_range == NULL) {
        return 0;
    }
    rc = st_cu.mem_get_address_range(&b, &n, (st_cu_ptr_t)base);
    return rc == ST_CU_ERROR_NOT_FOUND || (rc == 0 && (b != (st_cu_ptr_t)base || n != size));
}

void st_cuda_ipc_close(void *mapped)
{
    st_cu_result_t rc = st_cu.ipc_close((st_cu_ptr_t)(uintptr_t)mapped);

    if (rc != 0) {
        st_debug("cuIpcCloseMemHandle failed (CUresult %d)", rc);
    }
}

void *st_cuda_stream(void)
{
    st_cu_ctx_t ctx = NULL;
    void *stream    = NULL;
    st_cu_result_t rc;
    int m;

    if (!st_cuda_ipc_usable() || st_cu.ctx_get_current(&ctx) != 0 || ctx == NULL) {
        return NULL;
    }
    pthread_mutex_lock(&st_cu_lock);
    if ((m = st_cuda_entry_locked(ctx)) >= 0) {
        if (st_cu_mods[m].stream == NULL) {
            rc = st_cu.stream_create(&st_cu_mods[m].stream, ST_CU_STREAM_NON_BLOCKING);
            if (rc != 0) {
                st_error("cuStreamCreate failed (CUresult %d)", rc);
                st_cu_mods[m].stream = NULL;
            }
        }
        stream = st_cu_mods[m].stream;
    }
    pthread_mutex_unlock(&st_cu_lock);
    return stream;
}

int st_cuda_copy_async(void *dst, const void *src, size_t bytes, void *stream)
{
    st_cu_result_t rc;

    if (bytes == 0) {
        return 0;
    }
    rc = st_cu.memcpy_async((st_cu_ptr_t)(uintptr_t)dst, (st_cu_ptr_t)(uintptr_t)src, bytes,
                            stream);
    if (rc != 0) {
        st_error("cuMemcpyAsync of %zu bytes failed (CUresult %d)", bytes, rc);
        return -1;
    }
    return 0;
}

int st_cuda_stream_sync(void *stream)
{
    st_cu_result_t rc = st_cu.stream_sync(stream);

    if (rc != 0) {
        st_error("cuStreamSynchronize failed (CUresult %d)", rc);
        return -1;
    }
    return 0;
}

/* ---- a program's own GPU ---- */

int st_cuda_open(int local_rank, int *device_p, char *err, size_t errlen)
{
    st_cu_ctx_t ctx = NULL;
    int count = 0, dev = 0, ordinal;
    st_cu_result_t rc;

    if (!HAVE_CUDA) {
        snprintf(err, errlen, "this build has no GPU kernels (configure found no nvcc)");
        return -1;
    }
    if (!st_cuda_loaded() && dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL) == NULL) {
        snprintf(err, errlen, "no CUDA driver (libcuda.so.1): %s", dlerror());
        return -1;
    }
    if (!st_cuda_loaded() || !st_cuda_ipc_usable() || st_cu.init == NULL ||
        st_cu.device_get_count == NULL || st_cu.device_get == NULL ||
        st_cu.primary_ctx_retain == NULL || st_cu.ctx_set_current == NULL ||
        st_cu.mem_alloc == NULL || st_cu.mem_free == NULL) {
        snprintf(err, errlen, "the CUDA driver lacks the API Strata uses");
        return -1;
    }
    if ((rc = st_cu.init(0)) != 0 || (rc = st_cu.device_get_count(&count)) != 0 || count < 1) {
        snprintf(err, errlen, "no CUDA device (CUresult %d, %d devices)", rc, count);
        return -1;
    }
    ordinal = local_rank % count;
    if ((rc = st_cu.device_get(&dev, ordinal)) != 0 ||
        (rc = st_cu.primary_ctx_retain(&ctx, dev)) != 0 ||
        (rc = st_cu.ctx_set_current(ctx)) != 0) {
        snprintf(err, errlen, "CUDA device %d: no context (CUresult %d)", ordinal, rc);
        return -1;
    }
    *device_p = ordinal;
    return 0;
}

void *st_cuda_alloc(size_t bytes)
{
    st_cu_ptr_t p = 0;

    if (st_cu.mem_alloc == NULL || st_cu.mem_alloc(&p, bytes ? bytes : 1) != 0) {
        return NULL;
    }
    return (void*)(uintptr_t)p;
}

void st_cuda_free(void *ptr)
{
    if (ptr != NULL && st_cu.mem_free != NULL) {
        st_cu.mem_free((st_cu_ptr_t)(uintptr_t)ptr);
    }
}

/* CUdevice_attribute: CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT */
#define ST_CU_ATTR_SMS 16

int st_cuda_resident_warps(int ordinal, void *fn, unsigned block)
{
    int dev = 0, sms = 0, blocks = 0;

    if (st_cu.device_get == NULL || st_cu.device_get_attribute == NULL ||
        st_cu.occupancy == NULL || fn == NULL || block < 32 ||
        st_cu.device_get(&dev, ordinal) != 0 ||
        st_cu.device_get_attribute(&sms, ST_CU_ATTR_SMS, dev) != 0 ||
        st_cu.occupancy(&blocks, fn, (int)block, 0) != 0 || sms < 1 || blocks < 1) {
        return 0;
    }
    return sms * blocks * (int)(block / 32);
}

size_t st_cuda_mem_free(void)
{
    size_t free_bytes = 0, total = 0;

    if (st_cu.mem_get_info == NULL || st_cu.mem_get_info(&free_bytes, &total) != 0) {
        return 0;
    }
    return free_bytes;
}

int st_cuda_host_register(void *p, size_t bytes)
{
    return (bytes > 0 && st_cu.host_register != NULL && st_cu.host_register(p, bytes, 0) == 0)
                   ? 0
                   : -1;
}

void st_cuda_host_unregister(void *p)
{
    if (st_cu.host_unregister != NULL) {
        st_cu.host_unregister(p);
    }
}

void *st_cuda_stream_new(void)
{
    void *stream = NULL;

    if (st_cu.stream_create == NULL ||
        st_cu.stream_create(&stream, ST_CU_STREAM_NON_BLOCKING) != 0) {
        return NULL;
    }
    return stream;
}

void st_cuda_stream_free(void *stream)
{
    if (stream != NULL && st_cu.stream_destroy != NULL) {
        st_cu.stream_destroy(stream);
    }
}
