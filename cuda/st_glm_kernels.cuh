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
                                        a.eps, &a.alpha[i]);
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

/* st_glm_newton_grad, emulated: the rows in order, each row's entries in order then
 * the bias, as the CPU's gradient pass on one thread (solver/st_glm_newton.c) */
static void st_glm_newton_grad_rows(st_glm_epoch_args_t a, unsigned grid)
{
    int64_t j, i, k;
    double ga, h, x;

    (void)grid;
    for (j = 0; j < a.n; j++) {
        i  = a.row0 + j;
        ga = a.ga[i];
        h  = a.dd[i];
        if (ga == 0 && h == 0) {
            continue;
        }
        for (k = a.indptr[i]; k < a.indptr[i + 1]; k++) {
            x                  = (double)a.values[k];
            a.hv[a.indices[k]] += ga * x;
            a.hd[a.indices[k]] += h * x * x;
        }
        if (a.bias > 0) {
            a.hv[a.bias_index] += ga * a.bias;
            a.hd[a.bias_index] += h * a.bias * a.bias;
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

/* st_glm_cg, emulated: the chunks in order, each by the host's sweep (the kernel's
 * arithmetic in its order) */
static void st_glm_cg_all(st_glm_cg_args_t a)
{
    int64_t c;

    for (c = 0; c < st_glm_cg_chunks(a.len); c++) {
        st_glm_cg_chunk(&a, c);
    }
}

/* st_glm_newton_rows, emulated: the chunks in order, each by the host's pass */
static void st_glm_rows_all(st_glm_rows_args_t a)
{
    int64_t c;

    for (c = 0; c < st_glm_rows_chunks(a.m); c++) {
        st_glm_rows_chunk(&a, c);
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
            delta    = st_glm_dual_step_of(a.step, a.y[i], a.c[i], z, q, a.eps, &a.alpha[i]);
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
                                        a.eps, &a.alpha[i]);
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
 *
 * Columns most rows hold (Criteo's 13 dense features, the bias) would take an atomic
 * at one address from every row: those (a.hot of them, the first in the frequency
 * order, and the bias) go to the block's shared memory, and the block adds each into
 * hv once, after its rows (the launch's grid is the GPU's resident blocks, each
 * taking rows in turn, so that is one add per block and column).
 */
extern "C" __global__ void __launch_bounds__(ST_GLM_GPU_WARP_BLOCK, 4)
st_glm_newton_hv(st_glm_epoch_args_t a)
{
    __shared__ double hot[ST_GLM_HV_HOT + 1];   /* a.hot columns, then the bias */
    const unsigned lane = threadIdx.x & 31u, wpb = blockDim.x >> 5;
    const int64_t warps = (int64_t)gridDim.x * wpb;
    int64_t j, i, k, beg, end, col;
    double h, s, coef;

    for (k = threadIdx.x; k <= ST_GLM_HV_HOT; k += blockDim.x) {
        hot[k] = 0;
    }
    __syncthreads();
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
            col = a.indices[k];
            if (col < a.hot) {
                atomicAdd(&hot[col], coef * (double)a.values[k]);
            } else {
                atomicAdd(&a.hv[col], coef * (double)a.values[k]);
            }
        }
        if (lane == 0 && a.bias > 0) {
            atomicAdd(&hot[ST_GLM_HV_HOT], coef * a.bias);
        }
    }
    __syncthreads();
    for (k = threadIdx.x; k < a.hot; k += blockDim.x) {
        if (hot[k] != 0) {
            atomicAdd(&a.hv[k], hot[k]);
        }
    }
    if (threadIdx.x == 0 && a.bias > 0 && hot[ST_GLM_HV_HOT] != 0) {
        atomicAdd(&a.hv[a.bias_index], hot[ST_GLM_HV_HOT]);
    }
}

/*
 * The Newton method's gradient pass, its sums over the rows (method newton, --gpu,
 * 32-bit data; the host computes each row's ga_i = c_i phi'(z_i) and D_ii): hv +=
 * sum_i ga_i x_i, hd += sum_i D_ii x_i^2 (x_ij^2 entrywise), a warp a row, the hot
 * columns and the bias per block as st_glm_newton_hv does.
 */
extern "C" __global__ void __launch_bounds__(ST_GLM_GPU_WARP_BLOCK, 4)
st_glm_newton_grad(st_glm_epoch_args_t a)
{
    __shared__ double hot[2][ST_GLM_HV_HOT + 1];   /* a.hot columns, then the bias */
    const unsigned lane = threadIdx.x & 31u, wpb = blockDim.x >> 5;
    const int64_t warps = (int64_t)gridDim.x * wpb;
    int64_t j, i, k, end, col;
    double ga, h, x;

    for (k = threadIdx.x; k <= ST_GLM_HV_HOT; k += blockDim.x) {
        hot[0][k] = 0;
        hot[1][k] = 0;
    }
    __syncthreads();
    for (j = (int64_t)blockIdx.x * wpb + (threadIdx.x >> 5); j < a.n; j += warps) {
        i  = a.row0 + j;
        ga = a.ga[i];
        h  = a.dd[i];
        if (ga == 0 && h == 0) {
            continue;   /* (the whole warp: the row's) */
        }
        end = a.indptr[i + 1];
        for (k = a.indptr[i] + lane; k < end; k += 32) {
            col = a.indices[k];
            x   = (double)a.values[k];
            if (col < a.hot) {
                atomicAdd(&hot[0][col], ga * x);
                atomicAdd(&hot[1][col], h * x * x);
            } else {
                atomicAdd(&a.hv[col], ga * x);
                atomicAdd(&a.hd[col], h * x * x);
            }
        }
        if (lane == 0 && a.bias > 0) {
            atomicAdd(&hot[0][ST_GLM_HV_HOT], ga * a.bias);
            atomicAdd(&hot[1][ST_GLM_HV_HOT], h * a.bias * a.bias);
        }
    }
    __syncthreads();
    for (k = threadIdx.x; k < a.hot; k += blockDim.x) {
        if (hot[0][k] != 0) {
            atomicAdd(&a.hv[k], hot[0][k]);
        }
        if (hot[1][k] != 0) {
            atomicAdd(&a.hd[k], hot[1][k]);
        }
    }
    if (threadIdx.x == 0 && a.bias > 0) {
        if (hot[0][ST_GLM_HV_HOT] != 0) {
            atomicAdd(&a.hv[a.bias_index], hot[0][ST_GLM_HV_HOT]);
        }
        if (hot[1][ST_GLM_HV_HOT] != 0) {
            atomicAdd(&a.hd[a.bias_index], hot[1][ST_GLM_HV_HOT]);
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

/* One sweep of method newton's conjugate gradients (st_glm_cg_args_t): a block of
 * ST_GLM_CG_LANES threads a chunk, thread l the chunk's entries l, l + LANES, ... in
 * order, then the block's tree over its threads: the host's st_glm_cg_chunk step for
 * step, so the GPU's CG takes the CPU's steps bit for bit */
extern "C" __global__ void __launch_bounds__(ST_GLM_CG_LANES, 1) st_glm_cg(st_glm_cg_args_t a)
{
    __shared__ double acc[ST_GLM_CG_DOTS][ST_GLM_CG_LANES];
    const unsigned l = threadIdx.x;
    const int nd = st_glm_cg_dots(a.op);
    const int64_t chunks = st_glm_cg_chunks(a.len);
    int64_t c, e, lo, hi;
    double t0, t1, t2;
    unsigned half;
    int k;

    for (c = blockIdx.x; c < chunks; c += gridDim.x) {
        lo = c * ST_GLM_CG_CHUNK;
        hi = (a.len - lo < ST_GLM_CG_CHUNK) ? a.len : lo + ST_GLM_CG_CHUNK;
        t0 = t1 = t2 = 0;
        for (e = lo + l; e < hi; e += ST_GLM_CG_LANES) {
            switch (a.op) {
            case ST_GLM_CG_INIT:
                a.s[e] = 0;
                a.r[e] = -a.g[e];
                a.q[e] = a.r[e] / a.m[e];
                t0    += a.q[e] * a.r[e];
                break;
            case ST_GLM_CG_FINISH:
                a.hq[e] = a.hv[e] / a.n + a.lambda * a.q[e];
                t0     += a.q[e] * a.hq[e];
                break;
            case ST_GLM_CG_UPDATE:
                a.s[e] += a.alpha * a.q[e];
                a.r[e] -= a.alpha * a.hq[e];
                t0     += a.g[e] * a.s[e];
                t1     += a.r[e] * a.s[e];
                t2     += a.r[e] * a.r[e] / a.m[e];
                break;
            default:
                a.q[e] = a.r[e] / a.m[e] + a.beta * a.q[e];
                break;
            }
        }
        if (nd == 0) {
            continue;   /* (the whole block: op is the launch's) */
        }
        acc[0][l] = t0;
        acc[1][l] = t1;
        acc[2][l] = t2;
        __syncthreads();
        for (half = ST_GLM_CG_LANES / 2; half > 0; half >>= 1) {
            if (l < half) {
                for (k = 0; k < nd; k++) {
                    acc[k][l] += acc[k][l + half];
                }
            }
            __syncthreads();
        }
        if (l == 0) {
            for (k = 0; k < nd; k++) {
                a.part[c * ST_GLM_CG_DOTS + k] = acc[k][0];
            }
        }
        __syncthreads();   /* (acc is the next chunk's) */
    }
}

/* Method newton's row pass (st_glm_rows_args_t: GRAD's moves of the margins, D and
 * c_i phi'(z_i) with the loss and conjugate sums, or LOSS's sum): a block of
 * ST_GLM_ROWS_LANES threads a chunk of rows, thread l the chunk's rows l, l + LANES,
 * ... in order, then the block's tree: the host's st_glm_rows_chunk step for step
 * (with the GPU's exp and log, which may differ from the host's in the last bit) */
extern "C" __global__ void __launch_bounds__(ST_GLM_ROWS_LANES, 1)
        st_glm_newton_rows(st_glm_rows_args_t a)
{
    __shared__ double acc[2][ST_GLM_ROWS_LANES];
    const unsigned l = threadIdx.x;
    const int64_t chunks = st_glm_rows_chunks(a.m);
    int64_t c, e, lo, hi;
    double t0, t1;
    unsigned half;

    for (c = blockIdx.x; c < chunks; c += gridDim.x) {
        lo = c * ST_GLM_ROWS_CHUNK;
        hi = (a.m - lo < ST_GLM_ROWS_CHUNK) ? a.m : lo + ST_GLM_ROWS_CHUNK;
        t0 = t1 = 0;
        for (e = lo + l; e < hi; e += ST_GLM_ROWS_LANES) {
            st_glm_rows_row(&a, e, &t0, &t1);
        }
        acc[0][l] = t0;
        acc[1][l] = t1;
        __syncthreads();
        for (half = ST_GLM_ROWS_LANES / 2; half > 0; half >>= 1) {
            if (l < half) {
                acc[0][l] += acc[0][l + half];
                acc[1][l] += acc[1][l + half];
            }
            __syncthreads();
        }
        if (l == 0) {
            a.part[2 * c]     = acc[0][0];
            a.part[2 * c + 1] = acc[1][0];
        }
        __syncthreads();   /* (acc is the next chunk's) */
    }
}
#endif
