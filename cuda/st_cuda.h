/*
 * GPU buffers: recognize device pointers and stage them through host memory, so
 * that a CUDA program's MPI_Allreduce on device buffers is correct under Strata;
 * the GPU reduction kernels (st_cuda_kernels.cu), launched through the driver;
 * what the CUDA IPC path (st_cuda_ipc.c) needs of the driver.
 *
 * Nothing here needs CUDA at build time, and nothing creates a CUDA context: the
 * driver library is only used when the process has loaded it already (a program
 * that never touched CUDA pays one cheap check per call, see st_cuda.c).
 */
#ifndef ST_CUDA_H
#define ST_CUDA_H

#include "st_reduce.h"

#include <stddef.h>
#include <stdint.h>

/** Where a buffer lives, as far as Strata needs to know. */
typedef enum {
    ST_MEM_HOST = 0,   /**< ordinary host memory (or CUDA is not loaded) */
    ST_MEM_DEVICE      /**< device, managed or array memory: only the driver may touch it */
} st_mem_kind_t;

/**
 * @return 1 when the process has loaded libcuda and its entry points are known
 *         (about 11 ns while it has not: see st_cuda.c).
 */
int st_cuda_loaded(void);

/** A buffer, as the driver describes the allocation holding it. */
typedef struct {
    st_mem_kind_t kind;        /**< the rest is known only for ST_MEM_DEVICE, and then
                                    only where @a ctx is not NULL */
    uintptr_t base;            /**< the allocation's first address */
    size_t size;               /**< its bytes */
    unsigned long long id;     /**< the driver's buffer id: never reused in the process */
    int ordinal;               /**< its device */
    int ipc;                   /**< legacy CUDA IPC can share it (cudaMalloc memory) */
    void *ctx;                 /**< its context */
} st_cuda_buf_t;

/**
 * Ask the driver about @a ptr: one driver call (cuPointerGetAttributes), nothing
 * kept across calls (the address may be freed and reused meanwhile).
 * @return and in @a info->kind: ST_MEM_DEVICE when @a ptr is memory the driver says
 *         is not plain host memory (then @a info describes its allocation: all of
 *         it, or only the kind where the driver would not say more); ST_MEM_HOST
 *         when it is host memory, when the driver cannot tell (not initialized,
 *         unknown pointer), or when libcuda is not loaded in the process.
 */
st_mem_kind_t st_cuda_query(const void *ptr, st_cuda_buf_t *info);

/**
 * Copy @a bytes between any two buffers the driver knows (unified addressing), in
 * context @a ctx, the device buffer's (st_cuda_query; NULL: the thread's current
 * one); complete on return, into device memory too. @return 0, or -1 (the
 * driver's error was logged).
 */
int st_cuda_copy(void *dst, const void *src, size_t bytes, void *ctx);

/**
 * Wait until the program's work on the legacy stream of context @a ctx (NULL: the
 * thread's current one) has ended. A synchronous cuMemcpy into device memory from
 * pageable host memory, or from device memory, and a cuMemset, return before the
 * data lands; what reads the buffer on another stream (Strata's own, a peer's
 * through CUDA IPC) must wait for it. @return 0, or -1 (the driver's error logged).
 */
int st_cuda_settle(void *ctx);

/**
 * @return 1 when this build carries a GPU kernel for (@a type, @a op): built with
 *         nvcc (configure found CUDA), and not a long double type (no GPU has one).
 */
int st_cuda_fold_supported(st_type_t type, st_op_t op);

/**
 * Launch out[i] = op(...op(src[0][i], src[1][i])..., src[nsrc - 1][i]) for i < count
 * on the GPU of the calling thread's current context, on @a stream (NULL: that
 * context's default stream); asynchronous. Every pointer must be device memory
 * that context can address (its own, or a peer's opened through CUDA IPC); @a out
 * may be one of the sources. The kernels' module is loaded once per context.
 * @return 0, or -1 (no kernel for the pair, 0 or more than ST_CUDA_MAX_SRC
 *         sources, no current context, the module did not load, the launch failed:
 *         logged).
 */
int st_cuda_fold(st_type_t type, st_op_t op, void *out, const void *const *src, int nsrc,
                 size_t count, void *stream);

/**
 * The same fold, its result written to each of the @a nout buffers @a out (at
 * most ST_CUDA_MAX_SRC; any may be a source, in place): one pass over the sources
 * however many outputs.
 */
int st_cuda_fold_to(st_type_t type, st_op_t op, void *const *out, int nout,
                    const void *const *src, int nsrc, size_t count, void *stream);

/**
 * @return 1 when st_cuda_fold can launch the kernel of (@a type, @a op) in the
 *         current context: the kernels' module loads on its GPU (it may not where
 *         the build targets only later GPUs: warned once per context).
 */
int st_cuda_fold_ready(st_type_t type, st_op_t op);

/* ---- for the CUDA IPC path (cuda/st_cuda_ipc.c) ---- */

#define ST_CUDA_IPC_HANDLE_SIZE 64   /* CU_IPC_HANDLE_SIZE */

/** @return 1 when the loaded driver has everything the IPC path uses. */
int st_cuda_ipc_usable(void);

/** The UUID of device @a ordinal (the same GPU has the same one in every process,
 *  whatever CUDA_VISIBLE_DEVICES numbers it): 0, or -1 when the driver cannot say. */
int st_cuda_gpu_id(int ordinal, unsigned char id[16]);

/** Make @a ctx current in this thread (0), until st_cuda_ctx_leave(). */
int st_cuda_ctx_enter(void *ctx);
void st_cuda_ctx_leave(void);

/** The IPC handle of the allocation at @a base (ST_CUDA_IPC_HANDLE_SIZE bytes). */
int st_cuda_ipc_get(uintptr_t base, void *handle);
/** Map another process's allocation in the current context. */
int st_cuda_ipc_open(const void *handle, void **mapped_p);
void st_cuda_ipc_close(void *mapped);
/** 1 when the allocation of this process at @a base (@a size bytes) was freed: the
 *  driver knows no allocation there, or another one (cuMemGetAddressRange, no
 *  pointer query); 0 when it is there, or the driver cannot tell. */
int st_cuda_alloc_gone(uintptr_t base, size_t size);

/** Strata's own stream in the current context (made on first use), or NULL. */
void *st_cuda_stream(void);
/** Asynchronous copy between any two device (or host) buffers; 0 or -1 (logged). */
int st_cuda_copy_async(void *dst, const void *src, size_t bytes, void *stream);
/** Wait for everything on @a stream; 0 or -1 (logged). */
int st_cuda_stream_sync(void *stream);

/* ---- kernels and memory for a program's own GPU work (the GLM solver) ---- */

/**
 * Load the CUDA driver if the process has not, and make the primary context of
 * device (@a local_rank mod the device count) current in the calling thread.
 * @return 0 (*device_p: the device), or -1 with the reason in @a err.
 */
int st_cuda_open(int local_rank, int *device_p, char *err, size_t errlen);
void *st_cuda_alloc(size_t bytes);   /**< device memory, or NULL */
void st_cuda_free(void *ptr);
/** A kernel of Strata's fatbin by name, in the current context; NULL (logged). */
void *st_cuda_kernel(const char *name);
/** Launch @a fn on @a grid x @a block threads with one argument, the struct at @a args. */
int st_cuda_launch(void *fn, unsigned grid, unsigned block, void *args, void *stream);
/** Free bytes of the current context's GPU (0: unknown). */
size_t st_cuda_mem_free(void);
/** Warps of kernel @a fn in blocks of @a block threads that device @a ordinal runs at
 * once (its SMs x the blocks each holds x the warps a block); 0: unknown */
int st_cuda_resident_warps(int ordinal, void *fn, unsigned block);
/** Pin host memory for asynchronous copies (0), or -1 (copies still work, slower). */
int st_cuda_host_register(void *p, size_t bytes);
void st_cuda_host_unregister(void *p);
/** A stream of one's own in the current context (NULL: failed), and its end. */
void *st_cuda_stream_new(void);
void st_cuda_stream_free(void *stream);

#endif /* ST_CUDA_H */
