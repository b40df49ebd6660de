/*
 * The GPU local solver's kernel interface (TPA-SCD, cuda/st_glm_kernels.cuh), shared
 * by the kernel (CUDA C++), its host side (solver/st_glm_gpu.c) and the stand-in
 * driver of the tests, which runs the kernel compiled for the host.
 */
#ifndef ST_GLM_KERNELS_H
#define ST_GLM_KERNELS_H

#include <stdint.h>

#include "st_glm_losses.h"
#include "st_glm_perm.h"

/* threads per block of the block kernel (st_glm_tpa_epoch): a block works on one row
 * at a time */
#define ST_GLM_GPU_BLOCK 64
/* threads per block of the warp kernel (st_glm_tpa_epoch_warp): a warp a row, so
 * ST_GLM_GPU_WARP_BLOCK / 32 rows at a time per block */
#define ST_GLM_GPU_WARP_BLOCK 256

/* One epoch of dual coordinate ascent over the positions j < n, against u (or,
 * st_glm_margins, the rows' margins against u): in memory, position j is row
 * row0 + perm(j), its entries indices/values[indptr[i] .. indptr[i + 1]); streaming,
 * position j is row rows[j], its entries indices/values[cptr[j] .. cptr[j + 1]) of
 * the chunk (st_glm_locate). */
typedef struct {
    const int64_t *indptr;    /* CSR of the rank's rows (in memory) */
    const uint32_t *indices;
    const float *values;
    const int64_t *rows;      /* streaming: the chunk's rows, in the epoch's order; NULL
                                 in memory */
    const int64_t *cptr;      /* streaming: the chunk's entries of each position */
    const double *y, *c, *sqnorm;
    double *alpha;            /* the rows' dual variables, updated */
    double *u;                /* the local view of the shared vector, updated */
    int64_t row0;             /* the epoch's first row (streaming: the chunk's) */
    int64_t n;                /* rows */
    st_glm_perm_t perm;       /* the epoch's order: of [0, n), from the host's key */
    int64_t bias_index;       /* the bias feature's index in u (bias > 0) */
    double bias;              /* 0: none */
    double scale;             /* sigma' / (lambda n) */
    int step;                 /* ST_GLM_STEP_* (solver/st_glm_steps.h) */
    double eps;               /* the SVR models' epsilon (0 for the others) */
    double *z;                /* st_glm_margins: z[j] = x_(row0 + j) . u, j < n */
    const double *dd;         /* st_glm_newton_hv: the rows' D_ii (method newton) */
    double *hv;               /* st_glm_newton_hv: sum_i D_ii (x_i . u) x_i, added in;
                                 st_glm_vzero: its n entries zeroed */
    int64_t hot;              /* st_glm_newton_hv, st_glm_newton_grad: the columns [0, hot)
                                 (the most frequent, in the frequency order) and the bias
                                 are summed in each block's shared memory first, then
                                 added into hv (and hd) once a block; at most
                                 ST_GLM_HV_HOT */
    const double *ga;         /* st_glm_newton_grad: the rows' c_i phi'(z_i); its sums
                                 sum_i ga_i x_i into hv, sum_i D_ii x_i^2 into hd */
    double *hd;
} st_glm_epoch_args_t;

/* st_glm_newton_hv's hot columns, at most: shared memory a block */
#define ST_GLM_HV_HOT 128

/* Position @a j of the epoch: its row (the return), its entries [*beg, *end). */
ST_GLM_PERM_HD int64_t st_glm_locate(const st_glm_epoch_args_t *a, int64_t j, int64_t *beg,
                                     int64_t *end)
{
    int64_t i;

    if (a->rows != 0) {
        *beg = a->cptr[j];
        *end = a->cptr[j + 1];
        return a->rows[j];
    }
    i    = a->row0 + (int64_t)st_glm_perm_at(&a->perm, (uint64_t)j);
    *beg = a->indptr[i];
    *end = a->indptr[i + 1];
    return i;
}

/*
 * Method newton's conjugate gradients (solver/st_glm_newton.c), one sweep over the
 * d-vectors: on the CPU (the threads take whole chunks) or on the GPU (st_glm_cg in
 * st_glm_kernels.cuh, a block a chunk), the same arithmetic in the same order, so
 * both give the same bits. A chunk is ST_GLM_CG_CHUNK consecutive entries; entry e of
 * chunk c adds its dot products to lane (e - c ST_GLM_CG_CHUNK) % ST_GLM_CG_LANES
 * (a block's thread), in order of e; the lanes are then summed in a tree (lane l
 * takes lane l + s, s = LANES / 2 .. 1, as a block's shared-memory reduction), and
 * the chunks' sums in order of c (st_glm_cg_total, on the host). The GPU kernels are
 * built without fused multiply-adds (-fmad=false), as this host code is for a CPU
 * without FMA (x86-64's baseline).
 */
#define ST_GLM_CG_LANES 256
#define ST_GLM_CG_CHUNK (8 * ST_GLM_CG_LANES)
#define ST_GLM_CG_DOTS  3   /* dot products a sweep may give, per chunk */

typedef enum {
    ST_GLM_CG_INIT,       /* s = 0, r = -g, q = r / m; dot: q.r */
    ST_GLM_CG_FINISH,     /* hq = hv / n + lambda q; dot: q.hq */
    ST_GLM_CG_UPDATE,     /* s += alpha q, r -= alpha hq; dots: g.s, r.s, r.r / m */
    ST_GLM_CG_DIRECTION   /* q = r / m + beta q */
} st_glm_cg_op_t;

typedef struct {
    const double *g, *m;      /* the gradient, the preconditioner's diagonal */
    const double *hv;         /* FINISH: sum_i D_ii (x_i . q) x_i over all ranks' rows */
    double *s, *r, *q, *hq;   /* the step, the residual, the direction, H q */
    double *part;             /* ST_GLM_CG_DOTS per chunk: its dot products */
    double n, lambda;         /* the rows over all ranks; the regularization */
    double alpha, beta;       /* UPDATE, DIRECTION: the step's coefficients */
    int64_t len;              /* the vectors' entries */
    int op;                   /* st_glm_cg_op_t */
} st_glm_cg_args_t;

/* The dot products sweep @a op gives (the first this many of a chunk's part). */
ST_GLM_PERM_HD int st_glm_cg_dots(int op)
{
    return (op == ST_GLM_CG_UPDATE) ? 3 : (op == ST_GLM_CG_DIRECTION) ? 0 : 1;
}

ST_GLM_PERM_HD int64_t st_glm_cg_chunks(int64_t len)
{
    return (len + ST_GLM_CG_CHUNK - 1) / ST_GLM_CG_CHUNK;
}

/* Sweep @a a->op over chunk @a c, on the host. */
static inline void st_glm_cg_chunk(const st_glm_cg_args_t *a, int64_t c)
{
    double acc[ST_GLM_CG_DOTS][ST_GLM_CG_LANES];
    const int64_t lo = c * ST_GLM_CG_CHUNK;
    const int64_t hi = (a->len - lo < ST_GLM_CG_CHUNK) ? a->len : lo + ST_GLM_CG_CHUNK;
    const int nd = st_glm_cg_dots(a->op);
    double *s = a->s, *r = a->r, *q = a->q, *hq = a->hq;
    const double *g = a->g, *m = a->m, *hv = a->hv;
    const double alpha = a->alpha, beta = a->beta, n = a->n, lambda = a->lambda;
    int64_t b, e;
    int k, l, lim, half;

    for (k = 0; k < nd; k++) {
        for (l = 0; l < ST_GLM_CG_LANES; l++) {
            acc[k][l] = 0;
        }
    }
    for (b = lo; b < hi; b += ST_GLM_CG_LANES) {
        lim = (int)((hi - b < ST_GLM_CG_LANES) ? hi - b : ST_GLM_CG_LANES);
        switch (a->op) {
        case ST_GLM_CG_INIT:
            for (l = 0, e = b; l < lim; l++, e++) {
                s[e]       = 0;
                r[e]       = -g[e];
                q[e]       = r[e] / m[e];
                acc[0][l] += q[e] * r[e];
            }
            break;
        case ST_GLM_CG_FINISH:
            for (l = 0, e = b; l < lim; l++, e++) {
                hq[e]      = hv[e] / n + lambda * q[e];
                acc[0][l] += q[e] * hq[e];
            }
            break;
        case ST_GLM_CG_UPDATE:
            for (l = 0, e = b; l < lim; l++, e++) {
                s[e]      += alpha * q[e];
                r[e]      -= alpha * hq[e];
                acc[0][l] += g[e] * s[e];
                acc[1][l] += r[e] * s[e];
                acc[2][l] += r[e] * r[e] / m[e];
            }
            break;
        default:
            for (e = b; e < b + lim; e++) {
                q[e] = r[e] / m[e] + beta * q[e];
            }
            break;
        }
    }
    for (k = 0; k < nd; k++) {
        for (half = ST_GLM_CG_LANES / 2; half > 0; half >>= 1) {
            for (l = 0; l < half; l++) {
                acc[k][l] += acc[k][l + half];
            }
        }
        a->part[c * ST_GLM_CG_DOTS + k] = acc[k][0];
    }
}

/* The sweep's dot products over all @a chunks chunks' @a part, into @a dots. */
static inline void st_glm_cg_total(const double *part, int64_t chunks, int op, double *dots)
{
    int64_t c;
    int k;

    for (k = 0; k < st_glm_cg_dots(op); k++) {
        dots[k] = 0;
        for (c = 0; c < chunks; c++) {
            dots[k] += part[c * ST_GLM_CG_DOTS + k];
        }
    }
}

/*
 * Method newton's passes over the rows' own terms (no entries read): GRAD moves each
 * margin z_i to z_i + t xs_i and computes D_ii = c_i phi''(z_i) and ga_i = c_i phi'(z_i)
 * there, with the sums of the loss c_i phi(z_i) and of the conjugate terms; LOSS sums
 * c_i (phi(z_i + t xs_i) - phi(z_i)) for the line search. On the CPU's threads (whole
 * chunks each) or on the GPU (st_glm_newton_rows, a block a chunk), the same
 * arithmetic in the same order, as the CG's sweeps: row e of chunk c goes to lane
 * (e - c ST_GLM_ROWS_CHUNK) % ST_GLM_ROWS_LANES, the lanes are summed in a tree, and
 * the chunks' sums in order of c by the caller.
 */
#define ST_GLM_ROWS_LANES 256
#define ST_GLM_ROWS_CHUNK (4 * ST_GLM_ROWS_LANES)

typedef enum {
    ST_GLM_ROWS_GRAD,
    ST_GLM_ROWS_LOSS
} st_glm_rows_op_t;

typedef struct {
    const double *y, *c;      /* the rows' labels and weights */
    const double *xs;         /* x_i . s for the step s */
    double *z;                /* the margins (GRAD moves them) */
    double *dd, *ga;          /* GRAD: c_i phi''(z_i), c_i phi'(z_i) */
    double *part;             /* 2 a chunk: GRAD's loss and conjugate sums; LOSS's one */
    double t;                 /* the step along xs */
    int64_t m;                /* rows */
    int step;                 /* ST_GLM_STEP_LOGISTIC, _SQHINGE, _SQUARED or _SQSVR */
    double eps;               /* _SQSVR's epsilon */
    int op;                   /* st_glm_rows_op_t */
} st_glm_rows_args_t;

ST_GLM_HD int64_t st_glm_rows_chunks(int64_t m)
{
    return (m + ST_GLM_ROWS_CHUNK - 1) / ST_GLM_ROWS_CHUNK;
}

/* Row @a i of the pass: its terms into *s0 (and *s1). */
ST_GLM_HD void st_glm_rows_row(const st_glm_rows_args_t *a, int64_t i, double *s0, double *s1)
{
    double z, ga, h, loss, conj;

    if (a->op == ST_GLM_ROWS_GRAD) {
        z       = a->z[i] + a->t * a->xs[i];
        a->z[i] = z;
        st_glm_newton_terms(a->step, z, a->y[i], a->c[i], a->eps, &ga, &h, &loss, &conj);
        a->dd[i] = h;
        a->ga[i] = ga;
        *s0     += loss;
        *s1     += conj;
    } else {
        *s0 += st_glm_newton_loss_diff(a->step, a->z[i], a->t * a->xs[i], a->y[i], a->c[i],
                                       a->eps);
    }
}

/* The pass over chunk @a c, on the host. */
static inline void st_glm_rows_chunk(const st_glm_rows_args_t *a, int64_t c)
{
    double acc[2][ST_GLM_ROWS_LANES];
    const int64_t lo = c * ST_GLM_ROWS_CHUNK;
    const int64_t hi = (a->m - lo < ST_GLM_ROWS_CHUNK) ? a->m : lo + ST_GLM_ROWS_CHUNK;
    int64_t b, e;
    int l, half;

    for (l = 0; l < ST_GLM_ROWS_LANES; l++) {
        acc[0][l] = acc[1][l] = 0;
    }
    for (b = lo; b < hi; b += ST_GLM_ROWS_LANES) {
        for (l = 0, e = b; l < ST_GLM_ROWS_LANES && e < hi; l++, e++) {
            st_glm_rows_row(a, e, &acc[0][l], &acc[1][l]);
        }
    }
    for (half = ST_GLM_ROWS_LANES / 2; half > 0; half >>= 1) {
        for (l = 0; l < half; l++) {
            acc[0][l] += acc[0][l + half];
            acc[1][l] += acc[1][l + half];
        }
    }
    a->part[2 * c]     = acc[0][0];
    a->part[2 * c + 1] = acc[1][0];
}

#endif /* ST_GLM_KERNELS_H */
