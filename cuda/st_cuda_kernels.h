/*
 * The GPU reduction kernels' interface, shared by the kernels (st_cuda_kernels.cu,
 * CUDA C++), their launcher (st_cuda.c, C) and the stand-in driver of the tests
 * (tests/fake_cuda.c, which runs the same kernels compiled for the host).
 *
 * Kernel st_fold_<type>_<op>(args), one for every (type, op) of the host engine
 * but the long double types: out[k][i] = op(...op(op(src[0][i], src[1][i]),
 * src[2][i])..., src[nsrc - 1][i]) for i < count and k < nout, in that order, as
 * the host's st_reduce_fold. An output may be one of the sources (element by
 * element, in place: every source of element i is read before any output of it is
 * written, by the same thread).
 */
#ifndef ST_CUDA_KERNELS_H
#define ST_CUDA_KERNELS_H

#define ST_CUDA_MAX_SRC 32   /* sources of one fold */

typedef struct {
    void *out[ST_CUDA_MAX_SRC];
    const void *src[ST_CUDA_MAX_SRC];
    unsigned long long count;
    int nsrc, nout;
} st_cuda_fold_args_t;

#define ST_CUDA_FOLD_BLOCK 256   /* threads per block of a fold launch */

#endif /* ST_CUDA_KERNELS_H */
