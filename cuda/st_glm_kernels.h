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

/* One epoch of dual coordinate ascent over rows row0 + perm(j), j < n, against u (or,
 * st_glm_margins, the rows' margins against u). */
typedef struct {
    const int64_t *indptr;    /* CSR of the rank's rows: row i's entries are
                                 indices/values[indptr[i] - nnz_base .. indptr[i + 1] -
                                 nnz_base) (streaming: the chunk in GPU memory) */
    const uint32_t *indices;
    const float *values;
    int64_t nnz_base;         /* 0, or the chunk's first entry */
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
} st_glm_epoch_args_t;

#endif /* ST_GLM_KERNELS_H */
