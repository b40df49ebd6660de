/*
 * The GPU local solver of the dual GLMs: TPA-SCD (Parnell, Duenner, Atasu,
 * Sifalakis, Pozidis, "Large-scale stochastic learning using GPUs", IPDPSW 2017),
 * as Snap ML runs it. One thread block per coordinate at a time: the block's
 * threads compute the row's inner product with u together (a tree reduction in
 * shared memory, in double), one thread takes the coordinate step (the CPU
 * solver's own function, solver/st_glm_steps.h), and the threads add the update
 * into u with atomics. Blocks work on different rows at once, asynchronously, as
 * PASSCoDe-Atomic threads do on a CPU: the GPU counts as one CoCoA+ worker.
 *
 * Included by st_cuda_kernels.cu (one fatbin). With ST_CUDA_EMULATE (one block of
 * one thread) the kernel is sequential SDCA, in the CPU solver's order of
 * operations: the stand-in driver of the tests runs it so, and a GPU run on it
 * gives the CPU solver's model bit for bit.
 */
#include "st_glm_kernels.h"
#include "st_glm_steps.h"

#ifdef ST_CUDA_EMULATE
#define __shared__ static
#define __syncthreads()
static inline double atomicAdd(double *p, double v)
{
    double old = *p;

    *p = old + v;
    return old;
}
#endif

extern "C" __global__ void st_glm_tpa_epoch(st_glm_epoch_args_t a)
{
    __shared__ double part[ST_GLM_GPU_BLOCK];
    __shared__ double delta_sh;
    const unsigned t = threadIdx.x;
    int64_t j, i, k, end;
    double s, z, q, delta, coef;
    unsigned w;

    for (j = blockIdx.x; j < a.n; j += gridDim.x) {
        i   = a.order[j];
        end = a.indptr[i + 1] - a.nnz_base;
        s   = 0;
        for (k = a.indptr[i] - a.nnz_base + t; k < end; k += blockDim.x) {
            s += (double)a.values[k] * a.u[a.indices[k]];
        }
        part[t] = s;
        __syncthreads();
        for (w = blockDim.x / 2; w > 0; w /= 2) {
            if (t < w) {
                part[t] += part[t + w];
            }
            __syncthreads();
        }
        if (t == 0) {
            z = part[0];
            if (a.bias > 0) {
                z += a.bias * a.u[a.bias_index];
            }
            q        = a.scale * a.sqnorm[i];
            delta    = st_glm_dual_step_of(a.step, a.y[i], a.c[i], z, q, &a.alpha[i]);
            delta_sh = delta;
        }
        __syncthreads();
        delta = delta_sh;
        if (delta != 0) {
            coef = a.scale * delta;
            for (k = a.indptr[i] - a.nnz_base + t; k < end; k += blockDim.x) {
                atomicAdd(&a.u[a.indices[k]], coef * (double)a.values[k]);
            }
            if (t == 0 && a.bias > 0) {
                atomicAdd(&a.u[a.bias_index], coef * a.bias);
            }
        }
        __syncthreads();   /* part and delta_sh are free for the next row */
    }
}
