/*
 * The GPU local solver's kernel interface (TPA-SCD, cuda/st_glm_kernels.cuh), shared
 * by the kernel (CUDA C++), its host side (solver/st_glm_gpu.c) and the stand-in
 * driver of the tests, which runs the kernel compiled for the host.
 */
#ifndef ST_GLM_KERNELS_H
#define ST_GLM_KERNELS_H

#include <stdint.h>

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
    double *z;                /* st_glm_margins: z[j] = x_(row0 + j) . u, j < n */
    const double *dd;         /* st_glm_newton_hv: the rows' D_ii (method newton) */
    double *hv;               /* st_glm_newton_hv: sum_i D_ii (x_i . u) x_i, added in;
                                 st_glm_vzero: its n entries zeroed */
} st_glm_epoch_args_t;

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

#endif /* ST_GLM_KERNELS_H */
