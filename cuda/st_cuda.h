/*
 * GPU buffers, first step: recognize device pointers and stage them through host
 * memory, so that a CUDA program's MPI_Allreduce on device buffers is correct under
 * Strata (no CUDA IPC or GPU kernels yet: issue 5).
 *
 * Nothing here needs CUDA at build time, and nothing creates a CUDA context: the
 * driver library is only used when the process has loaded it already (a program
 * that never touched CUDA pays one cheap check per call, see st_cuda.c).
 */
#ifndef ST_CUDA_H
#define ST_CUDA_H

#include <stddef.h>

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

/**
 * @return ST_MEM_DEVICE when @a ptr is memory the CUDA driver says is not plain host
 *         memory; ST_MEM_HOST when it is host memory, when the driver cannot tell (not
 *         initialized, unknown pointer), or when libcuda is not loaded in the process.
 */
st_mem_kind_t st_cuda_classify(const void *ptr);

/**
 * Copy @a bytes between any two buffers the driver knows (unified addressing), in
 * the context of @a dev, whichever of the two is the device buffer (the caller
 * classified them already). @return 0, or -1 (the driver's error was logged).
 */
int st_cuda_copy(void *dst, const void *src, size_t bytes, const void *dev);

#endif /* ST_CUDA_H */
