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

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

typedef int st_cu_result_t;                 /* CUresult: 0 is CUDA_SUCCESS */
typedef unsigned long long st_cu_ptr_t;     /* CUdeviceptr */
typedef void *st_cu_ctx_t;                  /* CUcontext */

enum {
    ST_CU_POINTER_ATTRIBUTE_CONTEXT     = 1,
    ST_CU_POINTER_ATTRIBUTE_MEMORY_TYPE = 2,
    ST_CU_MEMORYTYPE_HOST               = 1
};

typedef struct {
    st_cu_result_t (*pointer_get_attribute)(void *data, int attribute, st_cu_ptr_t ptr);
    st_cu_result_t (*memcpy)(st_cu_ptr_t dst, st_cu_ptr_t src, size_t bytes);
    st_cu_result_t (*ctx_push)(st_cu_ctx_t ctx);
    st_cu_result_t (*ctx_pop)(st_cu_ctx_t *ctx);
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
            *(void**)&st_cu.ctx_push              = dlsym(lib, "cuCtxPushCurrent_v2");
            *(void**)&st_cu.ctx_pop               = dlsym(lib, "cuCtxPopCurrent_v2");
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

st_mem_kind_t st_cuda_classify(const void *ptr)
{
    unsigned int type = 0;

    if (ptr == NULL || !st_cuda_loaded()) {
        return ST_MEM_HOST;
    }
    /* host memory the driver never saw answers CUDA_ERROR_INVALID_VALUE; before
       cuInit, CUDA_ERROR_NOT_INITIALIZED: both are host memory to Strata */
    if (st_cu.pointer_get_attribute(&type, ST_CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                    (st_cu_ptr_t)(uintptr_t)ptr) != 0) {
        return ST_MEM_HOST;
    }
    return (type == ST_CU_MEMORYTYPE_HOST) ? ST_MEM_HOST : ST_MEM_DEVICE;
}

int st_cuda_copy(void *dst, const void *src, size_t bytes, const void *dev)
{
    st_cu_ctx_t ctx = NULL, popped;
    st_cu_result_t rc;

    if (bytes == 0) {
        return 0;
    }
    if (!st_cuda_loaded()) {
        return -1;
    }
    /* the copy runs in the context of the device buffer, whatever this thread's is */
    if (st_cu.pointer_get_attribute(&ctx, ST_CU_POINTER_ATTRIBUTE_CONTEXT,
                                    (st_cu_ptr_t)(uintptr_t)dev) != 0) {
        ctx = NULL;
    }
    if (ctx != NULL && st_cu.ctx_push(ctx) != 0) {
        ctx = NULL;
    }
    rc = st_cu.memcpy((st_cu_ptr_t)(uintptr_t)dst, (st_cu_ptr_t)(uintptr_t)src, bytes);
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
