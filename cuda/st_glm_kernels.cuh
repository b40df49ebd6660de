/*
 * The GPU local solver of the dual GLMs: TPA-SCD (Parnell, Duenner, Atasu,
 * Sifalakis, Pozidis, "Large-scale stochastic learning using GPUs", IPDPSW 2017),
 * as Snap ML runs it. One thread block per coordinate at a time (st_glm_tpa_epoch;
 * st_glm_tpa_epoch_warp below: a warp): the block's threads compute the row's inner
 * product with u together (a tree reduction in shared memory, in double), one
 * thread takes the coordinate step (the CPU solver's own function,
 * solver/st_glm_steps.h), and the threads add the update into u with atomics. The
 * epoch's rows are row0 + perm(j), the keyed permutation of solver/st_glm_perm.h
 * (streaming: a chunk's rows, gathered in the epoch's order; st_glm_locate).
 * Blocks work on different rows at once, asynchronously, as PASSCoDe-Atomic threads
 * do on a CPU: the GPU counts as one CoCoA+ worker. u is
 * read from L2 (__ldcg): the other blocks' atomics land there, and an SM's own L1,
 * not coherent with them, would serve a hot feature's value stale for a whole
 * epoch.
 *
 * Included by st_cuda_kernels.cu (one fatbin). With ST_CUDA_EMULATE the stand-in
 * driver of the tests runs the launch's blocks in waves (st_glm_tpa_epoch_waves);
 * with one block, the kernel is sequential SDCA in the CPU solver's order of
 * operations, and a GPU run on it gives the CPU solver's model bit for bit.
 */
#include "st_glm_kernels.h"
#include "st_glm_steps.h"

#ifdef ST_CUDA_EMULATE
#define __shared__ static
#define __syncthreads()
#define __launch_bounds__(threads, blocks)
static inline double atomicAdd(double *p, double v)
{
    double old = *p;

    *p = old + v;
    return old;
}
#define __ldcg(p) (*(p))
#endif

#ifdef ST_CUDA_EMULATE
#include <cstdlib>

/* The margin x_i . u, bias included, of the row whose entries are beg .. end - 1,
 * its products in entry order (the CPU solver's) */
static double st_glm_row_margin(const st_glm_epoch_args_t &a, int64_t beg, int64_t end)
{
    double s = 0;
    int64_t k;

    for (k = beg; k < end; k++) {
        s += (double)a.values[k] * a.u[a.indices[k]];
    }
    if (a.bias > 0) {
        s += a.bias * a.u[a.bias_index];
    }
    return s;
}

/* The epoch as @a grid rows in flight run it, emulated: in waves of @a grid rows, each
 * wave's inner products against u as the wave began, then its steps and updates;
 * a synchronous mini-batch, the most that blocks running together can miss of
 * each other's updates (a GPU's blocks see some of them, at random). One row a
 * wave: the kernel below on one block of one thread, sequential SDCA. */
static void st_glm_tpa_epoch_waves(st_glm_epoch_args_t a, unsigned grid)
{
    int64_t size = (grid > 0) ? grid : 1, j0, j, i, k, m, beg, end;
    double delta, coef, *z = (double *)malloc((size_t)size * sizeof(double));

    if (z == NULL) {
        abort();   /* the stand-in's host memory: the test cannot go on */
    }
    for (j0 = 0; j0 < a.n; j0 += m) {
        m = (a.n - j0 < size) ? a.n - j0 : size;
        for (j = 0; j < m; j++) {
            st_glm_locate(&a, j0 + j, &beg, &end);
            z[j] = st_glm_row_margin(a, beg, end);
        }
        for (j = 0; j < m; j++) {
            i     = st_glm_locate(&a, j0 + j, &beg, &end);
            delta = st_glm_dual_step_of(a.step, a.y[i], a.c[i], z[j], a.scale * a.sqnorm[i],
                                        &a.alpha[i]);
            if (delta != 0) {
                coef = a.scale * delta;
                for (k = beg; k < end; k++) {
                    a.u[a.indices[k]] += coef * (double)a.values[k];
                }
                if (a.bias > 0) {
                    a.u[a.bias_index] += coef * a.bias;
                }
            }
        }
    }
    free(z);
}

/* st_glm_margins, emulated */
static void st_glm_margins_rows(st_glm_epoch_args_t a, unsigned grid)
{
    int64_t j;

    (void)grid;
    for (j = 0; j < a.n; j++) {
        a.z[j] = st_glm_row_margin(a, a.indptr[a.row0 + j], a.indptr[a.row0 + j + 1]);
    }
}

/* st_glm_newton_hv, emulated: the rows in order, each row's product with the bias
 * first, then its entries, and its scatter in entry order then the bias, as the CPU
 * solver's Hessian-vector pass on one thread (solver/st_glm_newton.c), so the
 * stand-in's Newton steps are the CPU's bit for bit (32-bit data) */
static void st_glm_newton_hv_rows(st_glm_epoch_args_t a, unsigned grid)
{
    int64_t j, i, k;
    double s, coef;

    (void)grid;
    for (j = 0; j < a.n; j++) {
        i = a.row0 + j;
        if (a.dd[i] == 0) {
            continue;
        }
        s = (a.bias > 0) ? a.bias * a.u[a.bias_index] : 0;
        for (k = a.indptr[i]; k < a.indptr[i + 1]; k++) {
            s += (double)a.values[k] * a.u[a.indices[k]];
        }
        coef = a.dd[i] * s;
        for (k = a.indptr[i]; k < a.indptr[i + 1]; k++) {
            a.hv[a.indices[k]] += coef * (double)a.values[k];
        }
        if (a.bias > 0) {
            a.hv[a.bias_index] += coef * a.bias;
        }
    }
}

/* st_glm_vzero, emulated */
static void st_glm_vzero_all(st_glm_epoch_args_t a, unsigned grid)
{
    int64_t j;

    (void)grid;
    for (j = 0; j < a.n; j++) {
        a.hv[j] = 0;
    }
}
#endif

extern "C" __global__ void st_glm_tpa_epoch(st_glm_epoch_args_t a)
{
    __shared__ double part[ST_GLM_GPU_BLOCK];
    __shared__ double delta_sh;
    const unsigned t = threadIdx.x;
    int64_t j, i, k, beg, end;
    double s, z, q, delta, coef;
    unsigned w;

    for (j = blockIdx.x; j < a.n; j += gridDim.x) {
        i = st_glm_locate(&a, j, &beg, &end);
        s = 0;
        for (k = beg + t; k < end; k += blockDim.x) {
            s += (double)a.values[k] * __ldcg(&a.u[a.indices[k]]);
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
                z += a.bias * __ldcg(&a.u[a.bias_index]);
            }
            q        = a.scale * a.sqnorm[i];
            delta    = st_glm_dual_step_of(a.step, a.y[i], a.c[i], z, q, &a.alpha[i]);
            delta_sh = delta;
        }
        __syncthreads();
        delta = delta_sh;
        if (delta != 0) {
            coef = a.scale * delta;
            for (k = beg + t; k < end; k += blockDim.x) {
                atomicAdd(&a.u[a.indices[k]], coef * (double)a.values[k]);
            }
            if (t == 0 && a.bias > 0) {
                atomicAdd(&a.u[a.bias_index], coef * a.bias);
            }
        }
        __syncthreads();   /* part and delta_sh are free for the next row */
    }
}

#ifndef ST_CUDA_EMULATE
/* The margin x_i . u, bias included, of the row whose entries are beg .. end - 1 in
 * the arrays, by a warp: the lanes' products summed by shuffles, the margin in lane
 * 0 (the other lanes' values are partial). u is read from L2 (see above). */
static __device__ __forceinline__ double st_glm_warp_margin(const st_glm_epoch_args_t &a,
                                                            int64_t beg, int64_t end,
                                                            unsigned lane)
{
    double s = 0;
    int64_t k;
    unsigned w;

    for (k = beg + lane; k < end; k += 32) {
        s += (double)a.values[k] * __ldcg(&a.u[a.indices[k]]);
    }
    for (w = 16; w > 0; w >>= 1) {
        s += __shfl_down_sync(0xffffffffu, s, w);
    }
    if (lane == 0 && a.bias > 0) {
        s += a.bias * __ldcg(&a.u[a.bias_index]);
    }
    return s;
}

/*
 * The same epoch with a warp, not a block, per row: rows of a few dozen entries
 * (sparse data) keep a block's threads mostly idle and wait on its barriers; a
 * warp sums its lanes' products by shuffles, without shared memory or barriers,
 * and a block holds ST_GLM_GPU_WARP_BLOCK / 32 rows at a time. The sums' order is
 * the lanes' tree (the stand-in emulates the rows in flight, as for the block
 * kernel, not the lanes). Launch bounds: 4 blocks of 8 warps an SM at least, so 64
 * registers, which a chunk's position lookup would otherwise raise to 66 (28 warps
 * an SM).
 */
extern "C" __global__ void __launch_bounds__(ST_GLM_GPU_WARP_BLOCK, 4)
st_glm_tpa_epoch_warp(st_glm_epoch_args_t a)
{
    const unsigned lane = threadIdx.x & 31u, wpb = blockDim.x >> 5;
    const int64_t warps = (int64_t)gridDim.x * wpb;
    int64_t j, i, k, beg, end;
    double z, delta = 0, coef;

    for (j = (int64_t)blockIdx.x * wpb + (threadIdx.x >> 5); j < a.n; j += warps) {
        i = st_glm_locate(&a, j, &beg, &end);
        z = st_glm_warp_margin(a, beg, end, lane);
        if (lane == 0) {
            delta = st_glm_dual_step_of(a.step, a.y[i], a.c[i], z, a.scale * a.sqnorm[i],
                                        &a.alpha[i]);
        }
        delta = __shfl_sync(0xffffffffu, delta, 0);
        if (delta != 0) {
            coef = a.scale * delta;
            for (k = beg + lane; k < end; k += 32) {
                atomicAdd(&a.u[a.indices[k]], coef * (double)a.values[k]);
            }
            if (lane == 0 && a.bias > 0) {
                atomicAdd(&a.u[a.bias_index], coef * a.bias);
            }
        }
    }
}

/* The rows' margins z[j] = x_(row0 + j) . u for the duality gap, a warp a row (no
 * steps, no atomics: u is the round's w). */
extern "C" __global__ void st_glm_margins(st_glm_epoch_args_t a)
{
    const unsigned lane = threadIdx.x & 31u, wpb = blockDim.x >> 5;
    const int64_t warps = (int64_t)gridDim.x * wpb;
    int64_t j, i;
    double z;

    for (j = (int64_t)blockIdx.x * wpb + (threadIdx.x >> 5); j < a.n; j += warps) {
        i = a.row0 + j;
        z = st_glm_warp_margin(a, a.indptr[i], a.indptr[i + 1], lane);
        if (lane == 0) {
            a.z[j] = z;
        }
    }
}

/*
 * The Newton method's Hessian-vector product on the GPU (method newton, --gpu;
 * solver/st_glm_newton.c): hv += sum_i D_ii (x_i . u) x_i over the rows [row0, row0 +
 * n), a warp a row: the row's product with u by the warp's shuffles, then its lanes
 * add D_ii (x_i . u) x_ij into hv with atomics. Rows with D_ii = 0 (a squared hinge
 * past its margin) are skipped, as on the CPU. One pass over the CSR per
 * conjugate-gradient step: what the method spends its time on.
 */
extern "C" __global__ void __launch_bounds__(ST_GLM_GPU_WARP_BLOCK, 4)
st_glm_newton_hv(st_glm_epoch_args_t a)
{
    const unsigned lane = threadIdx.x & 31u, wpb = blockDim.x >> 5;
    const int64_t warps = (int64_t)gridDim.x * wpb;
    int64_t j, i, k, beg, end;
    double h, s, coef;

    for (j = (int64_t)blockIdx.x * wpb + (threadIdx.x >> 5); j < a.n; j += warps) {
        i = a.row0 + j;
        h = a.dd[i];
        if (h == 0) {
            continue;   /* (the whole warp: h is the row's) */
        }
        beg  = a.indptr[i];
        end  = a.indptr[i + 1];
        s    = st_glm_warp_margin(a, beg, end, lane);
        coef = h * __shfl_sync(0xffffffffu, s, 0);
        for (k = beg + lane; k < end; k += 32) {
            atomicAdd(&a.hv[a.indices[k]], coef * (double)a.values[k]);
        }
        if (lane == 0 && a.bias > 0) {
            atomicAdd(&a.hv[a.bias_index], coef * a.bias);
        }
    }
}

/* a.hv[j] = 0 for j < a.n (before st_glm_newton_hv adds into it) */
extern "C" __global__ void st_glm_vzero(st_glm_epoch_args_t a)
{
    int64_t j;

    for (j = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; j < a.n;
         j += (int64_t)gridDim.x * blockDim.x) {
        a.hv[j] = 0;
    }
}
#endif
