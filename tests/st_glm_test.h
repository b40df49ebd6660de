/*
 * Shared by the trainer's tests (test_train, test_ckpt, test_cv, test_multi): a small
 * data set every rank generates alike (a function of the row index), each rank's block
 * of it (or of a cross-validation fold's rows) as a problem, and a check that counts
 * failures.
 */
#ifndef ST_GLM_TEST_H
#define ST_GLM_TEST_H

#include "st_glm.h"
#include "st_glm_perm.h"

#include <stdint.h>
#include <stdio.h>

#define N_ROWS 240
#define N_COLS 30

static int failures, rank, nranks;

#define CHECKF(cond, ...) \
    do { \
        if (!(cond)) { \
            failures++; \
            printf("rank %d: %s:%d: ", rank, __FILE__, __LINE__); \
            printf(__VA_ARGS__); \
            printf("\n"); \
        } \
    } while (0)

static inline uint64_t mix(uint64_t x)
{
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

static inline double unit(uint64_t a, uint64_t b)
{
    return (double)(mix(a * 0x9e3779b97f4a7c15ULL + b + 1) >> 11) / 9007199254740992.0;
}

/* The whole data set: about a third of the entries present, a planted model. */
typedef struct {
    int64_t  indptr[N_ROWS + 1];
    uint32_t indices[N_ROWS * (N_COLS + 1)];
    double   values[N_ROWS * (N_COLS + 1)];
    double   y_class[N_ROWS], y_real[N_ROWS];
} dataset_t;

/* @a empty_rows: a few rows without entries (their dual variables must move too) */
static inline void make_data(dataset_t *ds, int empty_rows)
{
    int64_t i, j, k = 0;
    double z;

    for (i = 0; i < N_ROWS; i++) {
        ds->indptr[i] = k;
        z             = 0;
        for (j = 0; j < N_COLS && !(empty_rows && i % 50 == 7); j++) {
            if (unit(i, 1000 + j) < 0.35 || j == i % N_COLS) {
                ds->indices[k] = (uint32_t)j;
                ds->values[k]  = 2 * unit(i, j) - 1;
                z += ds->values[k] * (j % 3 == 0 ? 1.0 : -0.5);
                k++;
            }
        }
        ds->y_class[i] = (z + 0.3 * (unit(i, 7777) - 0.5) > 0.05) ? 1 : -1;
        ds->y_real[i]  = z + 0.1 * (unit(i, 8888) - 0.5);
    }
    ds->indptr[N_ROWS] = k;
}

/* My rows [lo, hi) of the set as a problem: an even split, or moved by @a shift rows
 * between ranks 0 and 1. */
static inline strata_glm_problem_t *my_rows(const dataset_t *ds, int regression, int shift)
{
    int64_t lo = (int64_t)N_ROWS * rank / nranks, hi = (int64_t)N_ROWS * (rank + 1) / nranks;
    int64_t indptr[N_ROWS + 1], i;
    strata_glm_problem_t *prob = NULL;
    char msg[256];

    lo += (rank == 1) ? shift : 0;
    hi += (rank == 0) ? shift : 0;
    for (i = lo; i <= hi; i++) {
        indptr[i - lo] = ds->indptr[i] - ds->indptr[lo];
    }
    CHECKF(strata_glm_problem_create(hi - lo, N_COLS, indptr, ds->indices + ds->indptr[lo],
                                     ds->values + ds->indptr[lo],
                                     (regression ? ds->y_real : ds->y_class) + lo, regression,
                                     MPI_COMM_WORLD, msg, sizeof(msg), &prob) == STRATA_OK,
           "problem_create: %s", msg);
    return prob;
}

/* My rows (an even split) of @a ds whose cross-validation fold (of @a folds, dealt by
 * @a perm) is (in) or is not (!in) @a k, with the labels @a y (N_ROWS, by global row),
 * as a problem (test_cv, test_multi). */
static inline strata_glm_problem_t *fold_rows_of(const dataset_t *ds, const st_glm_perm_t *perm,
                                                 int folds, int k, int in, const double *y,
                                                 int regression)
{
    int64_t lo = (int64_t)N_ROWS * rank / nranks, hi = (int64_t)N_ROWS * (rank + 1) / nranks;
    static int64_t indptr[N_ROWS + 1];
    static uint32_t idx[N_ROWS * (N_COLS + 1)];
    static double val[N_ROWS * (N_COLS + 1)], yy[N_ROWS];
    strata_glm_problem_t *prob = NULL;
    int64_t g, k2, rows = 0, o = 0;
    char msg[256];

    indptr[0] = 0;
    for (g = lo; g < hi; g++) {
        if ((st_glm_cv_fold(perm, folds, (uint64_t)g) == k) != in) {
            continue;
        }
        for (k2 = ds->indptr[g]; k2 < ds->indptr[g + 1]; k2++, o++) {
            idx[o] = ds->indices[k2];
            val[o] = ds->values[k2];
        }
        yy[rows++]   = y[g];
        indptr[rows] = o;
    }
    CHECKF(strata_glm_problem_create(rows, N_COLS, indptr, idx, val, yy, regression,
                                     MPI_COMM_WORLD, msg, sizeof(msg), &prob) == STRATA_OK,
           "fold problem_create: %s", msg);
    return prob;
}

#endif
