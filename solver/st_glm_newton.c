/*
 * libstrata_glm: a truncated Newton method on the primal of the smooth L2 models
 * (method newton).
 *
 *   P(w) = (1/n) sum_i c_i phi(x_i.w, y_i) + (lambda/2) ||w||^2
 *
 * (logistic, squared hinge, squared loss). Each iteration solves the Newton system
 *   H s = -g,   H = (1/n) X^T D X + lambda I,   D_ii = c_i phi''(x_i.w)
 * approximately by conjugate gradients preconditioned with a mix of the identity and
 * H's diagonal, M = (1 - a) lambda I + a diag(H), a = 0.01 (Hsia, Chiang and Lin,
 * "Preconditioned conjugate gradient methods in truncated Newton frameworks for
 * large-scale linear classification", ACML 2018: the diagonal alone can be worse than
 * none, the mix is rarely worse than either). CG stops on the decrease of the quadratic
 * model Q(s) = g.s + s.Hs / 2 (Nash and Sofer): when its last step gained less than
 * eta / j of Q after j steps, eta = 0.5 (LIBLINEAR's) but 0.01 for the
 * squared hinge, whose generalized Hessian is exact in the current active set's region:
 * there a loose solve keeps only the few large-curvature directions (the rows just
 * joining or leaving the active set), and on nearly separable data with a small lambda
 * the steps then zigzag across one row's kink (t = 1 out, then a 1/1024 backtrack in)
 * for hundreds of steps. Then a backtracking line search to the
 * Armijo condition from the unit step (Galli and Lin, "A study on truncated Newton
 * methods for linear classification", 2021: a line search does as well as a trust
 * region there, and is simpler).
 *
 * Passes over the rows, every rank over its own and its threads over slices of them:
 * a Hessian-vector product is one pass and one MPI_Allreduce of d doubles (so
 * libstrata's allreduce carries it when preloaded); the line search needs X s once
 * (a pass, no communication) and then only the n margins z + t X s (a scalar allreduce
 * per trial step); the gradient, the diagonal and the duality gap at the new point are
 * one more pass from the margins, which are kept, and one allreduce of 2 d + 2 doubles.
 *
 * The CG's vector work (a few sweeps over d-vectors per step) runs in chunks of
 * ST_GLM_CG_CHUNK entries, its dot products in a fixed order (cuda/st_glm_kernels.h):
 * on the threads, a block of chunks each, with the same bits whatever the threads; with
 * --gpu, as kernels on the GPU, where the vectors stay, with the same bits again.
 *
 * For sparse hashed data with a small lambda n, SDCA's rate (largest row norm over
 * lambda n) needs tens of epochs, while Newton's steps do not care: it is LIBLINEAR's
 * -s 0 method, here on all threads and ranks. The stopping certificate is the duality
 * gap of st_glm_lbfgs.c.
 */
#include "config.h"

#include "st_glm.h"
#include "st_glm_gpu.h"
#include "st_glm_mem.h"
#include "st_glm_order.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ST_GLM_NEWTON_PRECOND  0.01   /* a: M = (1 - a) lambda I + a diag(H) */
#define ST_GLM_NEWTON_CG_ETA   0.5    /* CG stops when j (Q_j - Q_j-1) >= eta Q_j */
#define ST_GLM_NEWTON_CG_ETA_SQ 0.01  /* ... for the squared hinge */
#define ST_GLM_NEWTON_CG_MAX   250    /* CG steps per Newton step at most */
#define ST_GLM_NEWTON_ARMIJO   0.01   /* sufficient decrease: P(w + t s) <= P + c t g.s */
#define ST_GLM_NEWTON_BACKTRACK 60     /* halvings of t before giving up (t 2^-60: w + t s
                                          rounds to w unless s is 1e12 times w; 20 gave up
                                          where the squared hinge's generalized Hessian,
                                          lambda alone along rows past the margin, asked
                                          for a step 1e7 too long: sqsvm stopped at a
                                          relative gap of 8.5e-3, "no step makes
                                          progress") */
/* the passes' sums by column from this many threads, where the copies of the rows of
 * all the host's ranks fit in half its available memory (the copy's allocation failing
 * keeps the rows); STRATA_GLM_NEWTON_BY_COLUMN=1 without that estimate, 0 never. On 2
 * cores by column made a CG step 1.45x faster than by row (Criteo-like, 300k rows,
 * bench/RESULTS.md) */
#define ST_GLM_NEWTON_BY_COLUMN_THREADS 2
/* the passes' scalar sums (the loss, the conjugate terms) a chunk of this many rows at
 * a time, the chunks' in order, and the threads' rows whole chunks: the same bits on
 * any number of threads */
#define ST_GLM_NEWTON_ROW_CHUNK ST_GLM_ROWS_CHUNK

typedef enum {
    ST_GLM_NEWTON_GRAD,   /* z += t xs; gradient, loss and dual sums, diag(H)'s; D */
    ST_GLM_NEWTON_HV,     /* sum_i D_ii (x_i.v) x_i */
    ST_GLM_NEWTON_XV,     /* xs = X v */
    ST_GLM_NEWTON_LOSS,   /* sum_i c_i (phi(z_i + t xs_i) - phi(z_i)) */
    ST_GLM_NEWTON_HVT     /* by column: ga_i = D_ii x_i.v, the rows' part of H v */
} st_glm_newton_op_t;

typedef struct st_glm_newton st_glm_newton_t;

/* Where a run's time goes (the verbose run's last line says it): the CG's products
 * (passes and their allreduces; on a GPU also the vector sweeps it queued before),
 * its other vector work, the gradient passes (with their allreduces, the
 * preconditioner and the certificate), the line search's passes, and the rest. */
enum {
    ST_GLM_NEWTON_T_HV,
    ST_GLM_NEWTON_T_CG,
    ST_GLM_NEWTON_T_GRAD,
    ST_GLM_NEWTON_T_SEARCH,
    ST_GLM_NEWTON_PHASES
};

/* One thread's share of a pass: rows [lo, hi). */
typedef struct {
    st_glm_newton_t *nt;
    int64_t          lo, hi;
    double          *out;   /* GRAD: gradient, loss, dual, diag(H) (by row); HV: d_all
                               (by row); LOSS: 1 (part 0's, st_glm_newton_row_sums) */
} st_glm_newton_part_t;

struct st_glm_newton {
    const st_glm_model_t *loss;
    const st_glm_data_t  *data;
    const double         *c;       /* m example weights */
    double                bias, lambda;
    int64_t               d, d_all;
    st_glm_newton_op_t    op;
    double               *z;       /* m margins x_i.w */
    double               *dd;      /* m: c_i phi''(z_i) at the current w */
    double               *xs;      /* m: x_i.s for the step s */
    double               *ga;      /* m: c_i phi'(z_i) where the GPU or the columns sum the
                                      gradient pass (and, by column, D_ii x_i.v for H v);
                                      else NULL */
    /* by column (threads > 1 on the CPU): the rows' entries again as CSC, so that the
     * passes' sums into d-vectors run a column per thread, with no d-vector per
     * thread to clear, fill and add up (at 16 threads and 2^20 columns, more memory
     * than the pass); a column sums its rows in row order: the bits of one thread */
    int64_t              *ccp;     /* d + 1 column offsets; NULL: by row */
    uint32_t             *cri;     /* the entries' rows */
    float                *cv32;    /* ... values (the data's precision) */
    double               *cv64;
    st_glm_newton_part_t *cparts;  /* nparts column ranges (the bias, column d, last),
                                      balanced by entries */
    double               *rowsum;  /* 2 a row chunk: GRAD's loss and conjugate sums,
                                      LOSS's one */
    const double         *v;       /* HV, XV: the vector */
    double                t;       /* GRAD, LOSS: the step along xs */
    int                   nparts;
    st_glm_newton_part_t *parts;
    double               *sum;     /* 2 d_all + 2, summed over threads and ranks */
    st_glm_round_ctx_t   *ctx;
    int                   nranks;
    int                   threads;   /* the CG sweeps' (param->threads) */
    st_glm_cg_args_t      cg;      /* the CG's vectors and sweep (the host's) */
    st_glm_gpu_t         *gpu;     /* --gpu: the CG (its Hessian-vector passes and
                                      sweeps) and, for 32-bit data, X v run there */
    int                   dd_changed;   /* D recomputed since the GPU's copy */
    int                   gpu_failed;   /* a GPU call failed in a training alone: the
                                           GPU is not called again, the method stops */
    st_glm_rows_args_t    rows;    /* the row passes' own terms (GRAD's, LOSS's): the
                                      host's arrays, its chunks' sums into rowsum */
    int                   rows_gpu;   /* --gpu, 32-bit data: those passes, X s and the
                                         margins, D and c_i phi'(z_i) on the GPU (the
                                         host's z, D, X s are then not kept) */
    double                secs[ST_GLM_NEWTON_PHASES];   /* where the time went */
};

static void st_glm_newton_grad(st_glm_newton_part_t *p)
{
    st_glm_newton_t *nt       = p->nt;
    const st_glm_data_t *data = nt->data;
    const uint32_t *idx       = data->indices;
    double *g = p->out, *diag = p->out + nt->d_all + 2, a, h, x;
    int64_t i, k, end, c, last;

    if (nt->ga == NULL) {
        memset(p->out, 0, (size_t)(2 * nt->d_all + 2) * sizeof(double));
    }
    for (c = p->lo / ST_GLM_NEWTON_ROW_CHUNK; p->lo < p->hi && c * ST_GLM_NEWTON_ROW_CHUNK < p->hi;
         c++) {   /* (the parts' rows are whole chunks) */
        st_glm_rows_chunk(&nt->rows, c);   /* (z, D, c_i phi'(z_i); the chunk's sums) */
        if (nt->ga != NULL) {
            continue;   /* the GPU or the columns sum the rows' entries */
        }
        last = ST_MIN(p->hi, (c + 1) * ST_GLM_NEWTON_ROW_CHUNK);
        for (i = c * ST_GLM_NEWTON_ROW_CHUNK; i < last; i++) {
            a = nt->rows.ga[i];
            h = nt->dd[i];
            if (a == 0 && h == 0) {
                continue;
            }
            end = data->indptr[i + 1];
            if (data->prec == 32) {
                for (k = data->indptr[i]; k < end; k++) {
                    x             = (double)data->val32[k];
                    g[idx[k]]    += a * x;
                    diag[idx[k]] += h * x * x;
                }
            } else {
                for (k = data->indptr[i]; k < end; k++) {
                    x             = data->val64[k];
                    g[idx[k]]    += a * x;
                    diag[idx[k]] += h * x * x;
                }
            }
            if (nt->bias > 0) {
                g[nt->d]    += a * nt->bias;
                diag[nt->d] += h * nt->bias * nt->bias;
            }
        }
    }
}

/* A thread's share of H v: sum_i D_ii (x_i.v) x_i over its rows. v and the sum are
 * interleaved in the part's buffer (v_j at 2j, the sum at 2j + 1), so the row's
 * gather of v_j and its scatter into the sum touch one cache line, not two: the
 * vectors are larger than the core's cache (2^20 columns). */
static void st_glm_newton_hv_part(st_glm_newton_part_t *p)
{
    st_glm_newton_t *nt       = p->nt;
    const st_glm_data_t *data = nt->data;
    double *vs = p->out;
    int64_t i, j;

    for (j = 0; j < nt->d_all; j++) {
        vs[2 * j]     = nt->v[j];
        vs[2 * j + 1] = 0;
    }
    for (i = p->lo; i < p->hi; i++) {
        if (nt->dd[i] != 0) {
            st_glm_row_axpy(data, i, nt->dd[i] * st_glm_row_dot(data, i, vs, 2, nt->d, nt->bias),
                            vs + 1, 2, nt->d, nt->bias);
        }
    }
    for (j = 0; j < nt->d_all; j++) {
        vs[j] = vs[2 * j + 1];   /* the sum where st_glm_sum_parts reads it */
    }
}

static void *st_glm_newton_pass(void *arg)
{
    st_glm_newton_part_t *p   = arg;
    st_glm_newton_t *nt       = p->nt;
    const st_glm_data_t *data = nt->data;
    int64_t i, c;

    switch (nt->op) {
    case ST_GLM_NEWTON_GRAD:
        st_glm_newton_grad(p);
        break;
    case ST_GLM_NEWTON_HV:
        st_glm_newton_hv_part(p);
        break;
    case ST_GLM_NEWTON_XV:
        for (i = p->lo; i < p->hi; i++) {
            nt->xs[i] = st_glm_row_dot(data, i, nt->v, 1, nt->d, nt->bias);
        }
        break;
    case ST_GLM_NEWTON_LOSS:
        for (c = p->lo / ST_GLM_NEWTON_ROW_CHUNK;
             p->lo < p->hi && c * ST_GLM_NEWTON_ROW_CHUNK < p->hi; c++) {
            st_glm_rows_chunk(&nt->rows, c);
        }
        break;
    case ST_GLM_NEWTON_HVT:
        for (i = p->lo; i < p->hi; i++) {
            nt->ga[i] = (nt->dd[i] != 0)
                                ? nt->dd[i] * st_glm_row_dot(data, i, nt->v, 1, nt->d, nt->bias)
                                : 0;
        }
        break;
    }
    return NULL;
}

/* GRAD's loss and conjugate sums (@a n 2) or LOSS's (1) over the row chunks, in chunk
 * order, into part 0's outputs at @a at, and zeros into the other parts' (which
 * st_glm_sum_parts adds, leaving the bits): the same on any number of threads. */
static void st_glm_newton_row_sums(st_glm_newton_t *nt, int n, int64_t at)
{
    int64_t c, chunks = (nt->data->n_rows + ST_GLM_NEWTON_ROW_CHUNK - 1) /
                        ST_GLM_NEWTON_ROW_CHUNK;
    double tot[2] = {0, 0};
    int k, e;

    for (c = 0; c < chunks; c++) {
        for (e = 0; e < n; e++) {
            tot[e] += nt->rowsum[2 * c + e];
        }
    }
    for (k = 0; k < nt->nparts; k++) {
        for (e = 0; e < n; e++) {
            nt->parts[k].out[at + e] = (k == 0) ? tot[e] : 0;
        }
    }
}

/* A thread's columns [lo, hi) of a pass's sums (by column; hi = d + 1: the bias
 * too): H v's (HV) from ga, or the gradient's and diag(H)'s (GRAD) from ga and D,
 * into nt->sum. Each column adds its rows in row order, as the pass by row on one
 * thread does (terms of rows it skips are 0 here, which leaves the sums' bits). */
static void *st_glm_newton_cols_pass(void *arg)
{
    const st_glm_newton_part_t *p = arg;
    const st_glm_newton_t *nt     = p->nt;
    const double *ga = nt->ga, *dd = nt->dd;
    double *g = nt->sum, *diag = nt->sum + nt->d_all + 2, a, h, x;
    int64_t j, k, end = ST_MIN(p->hi, nt->d), m = nt->data->n_rows;

    for (j = p->lo; j < end; j++) {
        a = h = 0;
        if (nt->op == ST_GLM_NEWTON_HV) {
            if (nt->cv32 != NULL) {
                for (k = nt->ccp[j]; k < nt->ccp[j + 1]; k++) {
                    a += ga[nt->cri[k]] * (double)nt->cv32[k];
                }
            } else {
                for (k = nt->ccp[j]; k < nt->ccp[j + 1]; k++) {
                    a += ga[nt->cri[k]] * nt->cv64[k];
                }
            }
        } else {
            for (k = nt->ccp[j]; k < nt->ccp[j + 1]; k++) {
                x  = (nt->cv32 != NULL) ? (double)nt->cv32[k] : nt->cv64[k];
                a += ga[nt->cri[k]] * x;
                h += dd[nt->cri[k]] * x * x;
            }
            diag[j] = h;
        }
        g[j] = a;
    }
    if (p->hi > nt->d && nt->bias > 0) {   /* the bias column: every row */
        a = h = 0;
        for (k = 0; k < m; k++) {
            a += ga[k] * nt->bias;
            if (nt->op == ST_GLM_NEWTON_GRAD) {
                h += dd[k] * nt->bias * nt->bias;
            }
        }
        g[nt->d] = a;
        if (nt->op == ST_GLM_NEWTON_GRAD) {
            diag[nt->d] = h;
        }
    }
    return NULL;
}

/* The rank's rows by column for the passes' sums (st_glm_newton_cols_pass), and the
 * threads' column ranges, balanced by entries (the bias column holds every row).
 * @return 0, or -1 (no memory: the passes stay by row). */
static int st_glm_newton_by_column(st_glm_newton_t *nt)
{
    const st_glm_data_t *data = nt->data;
    const int64_t m = data->n_rows, d = nt->d, nnz = data->indptr[m] - data->indptr[0];
    int64_t i, j, k, *fill, total, acc;
    int part;

    nt->ccp    = calloc((size_t)d + 1, sizeof(int64_t));
    nt->cri    = malloc((size_t)ST_MAX(nnz, 1) * sizeof(uint32_t));
    nt->cparts = calloc((size_t)nt->nparts, sizeof(*nt->cparts));
    if (data->prec == 32) {
        nt->cv32 = malloc((size_t)ST_MAX(nnz, 1) * sizeof(float));
    } else {
        nt->cv64 = malloc((size_t)ST_MAX(nnz, 1) * sizeof(double));
    }
    fill = malloc((size_t)ST_MAX(d, 1) * sizeof(int64_t));
    if (nt->ccp == NULL || nt->cri == NULL || nt->cparts == NULL || fill == NULL ||
        (nt->cv32 == NULL && nt->cv64 == NULL) || m > UINT32_MAX) {
        free(fill);
        return -1;
    }
    for (k = data->indptr[0]; k < data->indptr[m]; k++) {
        nt->ccp[data->indices[k] + 1]++;
    }
    for (j = 0; j < d; j++) {
        nt->ccp[j + 1] += nt->ccp[j];
        fill[j] = nt->ccp[j];
    }
    for (i = 0; i < m; i++) {   /* (in row order: each column's rows ascending) */
        for (k = data->indptr[i]; k < data->indptr[i + 1]; k++) {
            j                = data->indices[k];
            nt->cri[fill[j]] = (uint32_t)i;
            if (nt->cv32 != NULL) {
                nt->cv32[fill[j]] = data->val32[k];
            } else {
                nt->cv64[fill[j]] = data->val64[k];
            }
            fill[j]++;
        }
    }
    free(fill);
    total = nnz + ((nt->bias > 0) ? m : 0) + nt->d_all;   /* (+ 1 a column) */
    for (part = 0, j = 0, acc = 0; part < nt->nparts; part++) {
        nt->cparts[part].nt = nt;
        nt->cparts[part].lo = j;
        while (j < nt->d_all &&
               (part == nt->nparts - 1 ||
                acc + ((j < d) ? nt->ccp[j + 1] - nt->ccp[j] : m) + 1 <=
                        total * (part + 1) / nt->nparts)) {
            acc += ((j < d) ? nt->ccp[j + 1] - nt->ccp[j] : m) + 1;
            j++;
        }
        nt->cparts[part].hi = j;
    }
    return 0;
}

static void st_glm_newton_by_row(st_glm_newton_t *nt)
{
    free(nt->ccp);
    free(nt->cri);
    free(nt->cv32);
    free(nt->cv64);
    free(nt->cparts);
    nt->ccp    = NULL;
    nt->cri    = NULL;
    nt->cv32   = NULL;
    nt->cv64   = NULL;
    nt->cparts = NULL;
}

/* @a rc of a GPU call: below 0, as the GPU's coordinate descent, a training alone
 * (MPI_COMM_NULL, or one rank) stops and returns the error; across ranks the others
 * wait for this one in the next sum, which cannot carry the news: the job ends. */
static void st_glm_newton_gpu_check(st_glm_newton_t *nt, int rc)
{
    if (rc >= 0) {
        return;
    }
    if (nt->nranks == 1) {
        nt->gpu_failed = 1;
        return;
    }
    fprintf(stderr, "strata_glm: rank %d: the GPU's part of the Newton method failed "
            "(above); ending the job\n", nt->ctx->rank);
    MPI_Abort(nt->ctx->comm, 1);
}

/* Run a pass on every thread; with @a count > 0, sum the parts' first @a count outputs
 * into nt->sum, then over the ranks (collective). */
static void st_glm_newton_run(st_glm_newton_t *nt, st_glm_newton_op_t op, int64_t count)
{
    int rc = 1, nparts = nt->nparts;
    double *out = nt->parts[0].out;

    if (nt->gpu_failed) {
        return;   /* (the method stops at its next check) */
    }
    if (op == ST_GLM_NEWTON_HV && nt->ccp != NULL) {   /* by column: the rows' part, then
                                                          the columns' sums */
        nt->op = ST_GLM_NEWTON_HVT;
        st_glm_run_parts(st_glm_newton_pass, nt->parts, sizeof(*nt->parts), nt->nparts);
        nt->op = op;
        st_glm_run_parts(st_glm_newton_cols_pass, nt->cparts, sizeof(*nt->cparts), nt->nparts);
        st_glm_sum_ranks(nt->ctx, nt->sum, count);
        return;
    }
    nt->op      = op;
    nt->rows.op = (op == ST_GLM_NEWTON_GRAD) ? ST_GLM_ROWS_GRAD : ST_GLM_ROWS_LOSS;
    nt->rows.t  = nt->t;
    if (nt->gpu != NULL && op == ST_GLM_NEWTON_XV && nt->data->prec == 32) {
        /* (64-bit data: the GPU's float copy would move the kept margins off X w) */
        rc = st_glm_gpu_margins(nt->gpu, nt->v, nt->rows_gpu ? NULL : nt->xs);
        st_glm_newton_gpu_check(nt, rc);
    }
    if (nt->rows_gpu && (op == ST_GLM_NEWTON_GRAD || op == ST_GLM_NEWTON_LOSS)) {
        /* the rows' own terms where the margins are (the chunks' sums as the host's) */
        st_glm_newton_gpu_check(nt, st_glm_gpu_newton_rows(nt->gpu, nt->rows.op, nt->t,
                                                           nt->rowsum));
        rc = 0;
    }
    if (rc != 0) {
        st_glm_run_parts(st_glm_newton_pass, nt->parts, sizeof(*nt->parts), nt->nparts);
    }
    if (op == ST_GLM_NEWTON_GRAD) {
        st_glm_newton_row_sums(nt, 2, nt->d_all);
    } else if (op == ST_GLM_NEWTON_LOSS) {
        st_glm_newton_row_sums(nt, 1, 0);
    }
    if (op == ST_GLM_NEWTON_GRAD && nt->ga != NULL && nt->gpu == NULL) {
        /* the threads computed the rows' terms and the loss sums (in part 0); the
           columns sum the rows' entries into nt->sum */
        st_glm_run_parts(st_glm_newton_cols_pass, nt->cparts, sizeof(*nt->cparts), nt->nparts);
        nt->sum[nt->d_all]     = out[nt->d_all];
        nt->sum[nt->d_all + 1] = out[nt->d_all + 1];
        st_glm_sum_ranks(nt->ctx, nt->sum, count);
        return;
    }
    if (op == ST_GLM_NEWTON_GRAD && nt->ga != NULL) {
        /* the threads computed the rows' terms and the loss sums (in part 0); the GPU
           sums the rows' entries into part 0 (and has D now) */
        st_glm_newton_gpu_check(nt, st_glm_gpu_grad(nt->gpu, nt->rows_gpu ? NULL : nt->ga,
                                                    nt->rows_gpu ? NULL : nt->dd, out,
                                                    out + nt->d_all + 2));
        nt->dd_changed = 0;
        nparts = 1;
    }
    if (count > 0) {
        st_glm_sum_parts(nt->ctx, nt->sum, count, nparts, 2 * nt->d_all + 2);
    }
}

static void st_glm_newton_cg_chunk(void *arg, int64_t lo, int64_t hi, double *part)
{
    (void)hi;
    (void)part;   /* (the chunk's dots go to cg->part) */
    st_glm_cg_chunk(arg, lo / ST_GLM_CG_CHUNK);
}

void st_glm_cg_sweep(const st_glm_cg_args_t *cg, int threads, double *dots)
{
    st_glm_sweep(threads, cg->len, 0, st_glm_newton_cg_chunk, (void *)cg, NULL, NULL);
    if (dots != NULL) {
        st_glm_cg_total(cg->part, st_glm_cg_chunks(cg->len), cg->op, dots);
    }
}

/* CG sweep @a op (st_glm_cg_op_t) with @a coef its alpha (UPDATE) or beta
 * (DIRECTION), its dot products into @a dots: on the GPU where it holds the vectors,
 * else on the threads, a block of chunks each (the same bits either way, whatever
 * the threads). FINISH takes H q's sum over the ranks from nt->sum (one rank on a
 * GPU: the GPU's own). */
static void st_glm_newton_sweep(st_glm_newton_t *nt, int op, double coef, double *dots)
{
    if (nt->gpu_failed) {   /* (no curvature: the CG stops) */
        if (dots != NULL) {   /* (UPDATE's are ST_GLM_CG_DOTS, the others' one) */
            memset(dots, 0, ((op == ST_GLM_CG_UPDATE) ? ST_GLM_CG_DOTS : 1) * sizeof(*dots));
        }
        return;
    }
    if (nt->gpu != NULL) {
        switch (op) {
        case ST_GLM_CG_INIT:
            st_glm_newton_gpu_check(nt, st_glm_gpu_cg_start(nt->gpu, nt->cg.g, nt->cg.m,
                                                            nt->cg.n, nt->cg.lambda, dots));
            break;
        case ST_GLM_CG_FINISH:
            st_glm_newton_gpu_check(nt, st_glm_gpu_cg_finish(nt->gpu, (nt->nranks > 1) ? nt->sum
                                                                                       : NULL,
                                                             dots));
            break;
        case ST_GLM_CG_UPDATE:
            st_glm_newton_gpu_check(nt, st_glm_gpu_cg_update(nt->gpu, coef, dots));
            break;
        default:
            st_glm_newton_gpu_check(nt, st_glm_gpu_cg_direction(nt->gpu, coef));
            break;
        }
        return;
    }
    nt->cg.op    = op;
    nt->cg.alpha = (op == ST_GLM_CG_UPDATE) ? coef : 0;
    nt->cg.beta  = (op == ST_GLM_CG_DIRECTION) ? coef : 0;
    st_glm_cg_sweep(&nt->cg, nt->threads, dots);
}

/* The Newton step's own sweeps over the d-vectors (st_glm_sweep, on the threads). */
typedef enum {
    ST_GLM_NEWTON_PRECOND_SET,   /* m from diag(H)'s sum */
    ST_GLM_NEWTON_STEP_DOTS,     /* g.s, w.s, s.s */
    ST_GLM_NEWTON_MOVE           /* w += t s */
} st_glm_newton_vec_op_t;

typedef struct {
    st_glm_newton_vec_op_t op;
    const st_glm_newton_t *nt;
    double *w, *m;
    const double *g, *s;
    double t;
} st_glm_newton_vec_t;

static void st_glm_newton_vec_chunk(void *arg, int64_t lo, int64_t hi, double *part)
{
    const st_glm_newton_vec_t *v = arg;
    const double n = (double)v->nt->data->n_rows_global, lambda = v->nt->lambda;
    const double *diag = v->nt->sum + v->nt->d_all + 2;
    double gs = 0, ws = 0, ss = 0, h;
    int64_t j;

    switch (v->op) {
    case ST_GLM_NEWTON_PRECOND_SET:
        for (j = lo; j < hi; j++) {
            h       = lambda + diag[j] / n;
            v->m[j] = (1 - ST_GLM_NEWTON_PRECOND) * lambda + ST_GLM_NEWTON_PRECOND * h;
        }
        break;
    case ST_GLM_NEWTON_STEP_DOTS:
        for (j = lo; j < hi; j++) {
            gs += v->g[j] * v->s[j];
            ws += v->w[j] * v->s[j];
            ss += v->s[j] * v->s[j];
        }
        part[0] = gs;
        part[1] = ws;
        part[2] = ss;
        break;
    default:
        for (j = lo; j < hi; j++) {
            v->w[j] += v->t * v->s[j];
        }
        break;
    }
}

/* Sweep @a v over the d-vectors on the threads; its sums (STEP_DOTS) into @a sums. */
static void st_glm_newton_vec(const st_glm_newton_t *nt, st_glm_newton_vec_t *v, double *sums)
{
    v->nt = nt;
    st_glm_sweep(nt->threads, nt->d_all, (v->op == ST_GLM_NEWTON_STEP_DOTS) ? 3 : 0,
                 st_glm_newton_vec_chunk, v, NULL, sums);
}

/* At w + t s (t 0 at the start): the margins, gradient @a g, P into *f_p, the
 * certificate into @a obj, the preconditioner @a m (collective). */
static void st_glm_newton_point(st_glm_newton_t *nt, const double *w, double t, double *g,
                                double *m, double *f_p, st_glm_objectives_t *obj)
{
    st_glm_newton_vec_t v = {.op = ST_GLM_NEWTON_PRECOND_SET, .m = m};
    double t0 = st_glm_now();

    nt->t          = t;
    nt->dd_changed = 1;   /* (the GPU's gradient pass copies it) */
    st_glm_newton_run(nt, ST_GLM_NEWTON_GRAD, 2 * nt->d_all + 2);
    if (nt->gpu_failed) {
        return;   /* (nothing measured: the caller stops) */
    }
    st_glm_newton_vec(nt, &v, NULL);
    st_glm_primal_finish(nt->sum, w, nt->d_all, (double)nt->data->n_rows_global, nt->lambda,
                         nt->threads, g, f_p, obj);
    nt->secs[ST_GLM_NEWTON_T_GRAD] += st_glm_now() - t0;
}

/* H q into nt->cg.hq (collective): its sum over the rows, then the FINISH sweep.
 * @return q.Hq */
static double st_glm_newton_hv(st_glm_newton_t *nt)
{
    double qhq, t0 = st_glm_now();

    if (nt->gpu_failed) {
        return 0;
    }
    if (nt->gpu != NULL) {   /* (one rank: the sum stays on the GPU) */
        st_glm_newton_gpu_check(nt, st_glm_gpu_cg_hv(nt->gpu, nt->dd, nt->dd_changed,
                                                     (nt->nranks > 1) ? nt->parts[0].out
                                                                      : NULL));
        nt->dd_changed = 0;
        if (nt->nranks > 1) {
            st_glm_sum_parts(nt->ctx, nt->sum, nt->d_all, 1, 2 * nt->d_all + 2);
        }
    } else {
        nt->v = nt->cg.q;
        st_glm_newton_run(nt, ST_GLM_NEWTON_HV, nt->d_all);
    }
    nt->secs[ST_GLM_NEWTON_T_HV] += st_glm_now() - t0;
    st_glm_newton_sweep(nt, ST_GLM_CG_FINISH, 0, &qhq);
    return qhq;
}

/* The Newton step nt->cg.s from H s = -g by preconditioned CG (nt->cg: g, m, and the
 * scratch r, q, hq; collective: every rank takes the same steps). Each step's vector
 * work is two sweeps over the d-vectors (they are large: 2^20 columns and more) and
 * the finishing of H q's. @return the CG steps taken. */
static int st_glm_newton_cg(st_glm_newton_t *nt)
{
    double zr, zr_new, qhq, alpha, beta, cur = 0, next, dots[ST_GLM_CG_DOTS];
    double t0 = st_glm_now(), hv0 = nt->secs[ST_GLM_NEWTON_T_HV];
    const double eta = (nt->rows.step == ST_GLM_STEP_SQHINGE ||
                        nt->rows.step == ST_GLM_STEP_SQSVR) ? ST_GLM_NEWTON_CG_ETA_SQ
                                                            : ST_GLM_NEWTON_CG_ETA;
    int steps;

    st_glm_newton_sweep(nt, ST_GLM_CG_INIT, 0, &zr);
    for (steps = 1; steps <= ST_GLM_NEWTON_CG_MAX; steps++) {
        qhq = st_glm_newton_hv(nt);
        if (!(qhq > 0)) {
            break;   /* no curvature left along q (rounding): s stays */
        }
        alpha = zr / qhq;
        st_glm_newton_sweep(nt, ST_GLM_CG_UPDATE, alpha, dots);
        zr_new = dots[2];
        /* Q(s) = g.s + s.Hs / 2 = (g.s - r.s) / 2, as r = -g - H s */
        next = 0.5 * (dots[0] - dots[1]);
        if (!(next <= 0 && next - cur <= 0) ||
            steps * (next - cur) >= eta * next) {
            break;
        }
        cur  = next;
        beta = zr_new / zr;
        zr   = zr_new;
        st_glm_newton_sweep(nt, ST_GLM_CG_DIRECTION, beta, NULL);
    }
    if (nt->gpu != NULL && !nt->gpu_failed) {
        st_glm_newton_gpu_check(nt, st_glm_gpu_cg_step(nt->gpu, nt->cg.s));
    }
    nt->secs[ST_GLM_NEWTON_T_CG] += st_glm_now() - t0 - (nt->secs[ST_GLM_NEWTON_T_HV] - hv0);
    return ST_MIN(steps, ST_GLM_NEWTON_CG_MAX);
}

/* The verbose run's last line: the steps, and where rank 0's time went. */
static void st_glm_newton_report(const st_glm_newton_t *nt, int steps, int cg, double total)
{
    const double *t = nt->secs;
    double rest = total - t[ST_GLM_NEWTON_T_HV] - t[ST_GLM_NEWTON_T_CG] -
                  t[ST_GLM_NEWTON_T_GRAD] - t[ST_GLM_NEWTON_T_SEARCH];

    st_glm_print("Newton: %d step(s), %d conjugate gradient step(s); time: products %.3f s "
                 "(%.2f ms a CG step), CG vectors %.3f s, gradients %.3f s, line searches "
                 "%.3f s, the rest %.3f s\n", steps, cg, t[ST_GLM_NEWTON_T_HV],
                 (cg > 0) ? 1e3 * t[ST_GLM_NEWTON_T_HV] / cg : 0.0, t[ST_GLM_NEWTON_T_CG],
                 t[ST_GLM_NEWTON_T_GRAD], t[ST_GLM_NEWTON_T_SEARCH], ST_MAX(rest, 0.0));
}

/* 1 + the largest column index any rank's rows hold (0: none; collective). Every
 * entry is looked at: a row's entries need not be in column order (the frequency
 * order relabels the columns and keeps each row's order of entries). */
static int64_t st_glm_newton_cols(const st_glm_data_t *data, MPI_Comm comm)
{
    int64_t k, nnz = data->indptr[data->n_rows], cols = 0;

    for (k = data->indptr[0]; k < nnz; k++) {
        cols = ST_MAX(cols, (int64_t)data->indices[k] + 1);
    }
    st_glm_allreduce(comm, &cols, 1, MPI_INT64_T, MPI_MAX);
    return cols;
}

/* --gpu: the rank's rows (in the order the method uses) go to its GPU, which then
 * runs the conjugate gradients (collective; every rank agrees). @return 0, or -1
 * with @a msg. nt->xs serves as scratch for the rows' norms. */
static int st_glm_newton_gpu_open(st_glm_newton_t *nt, const st_glm_model_t *loss,
                                  const strata_glm_param_t *param, MPI_Comm comm, char *msg,
                                  size_t msg_len)
{
    const st_glm_data_t *data = nt->data;
    int64_t i;
    int ok;

    st_glm_data_row_sqnorms(data, nt->xs);
    for (i = 0; i < data->n_rows; i++) {
        nt->xs[i] += (nt->bias > 0) ? nt->bias * nt->bias : 0;
    }
    /* (one row in flight: the coordinate descent's curvature bounds are not needed; the
       rows in GPU memory with the method's arrays, or a refusal) */
    ok = (st_glm_gpu_open(data, nt->c, nt->xs, st_glm_model_step(loss), nt->rows.eps, nt->bias,
                          nt->d, nt->d_all, param->gpu_mem, 1, param->threads, 1, comm,
                          &nt->gpu, msg, msg_len) == 0);
    if (!st_glm_agree(comm, ok)) {
        if (ok) {
            st_glm_msg(msg, msg_len, "--gpu: the GPU could not start on another rank");
        }
        st_glm_gpu_close(nt->gpu);
        nt->gpu = NULL;
        return -1;
    }
    for (i = 0; i < data->n_rows; i++) {
        nt->xs[i] = 0;
    }
    return 0;
}

strata_status_t st_glm_train_newton(const st_glm_model_t *loss, const strata_glm_problem_t *prob,
                                    const strata_glm_param_t *param, MPI_Comm comm, char *msg,
                                    size_t msg_len, strata_glm_model_t *model)
{
    const st_glm_data_t *data = prob->data;
    st_glm_order_t order;
    st_glm_newton_t nt;
    st_glm_round_ctx_t ctx;
    st_glm_objectives_t obj;
    int64_t full_all = data->n_cols + (param->bias > 0), m = data->n_rows, d, d_all, i, j;
    double *c = NULL, *rows = NULL, *mem = NULL, *w, *g, *pre, *s, *r, *q, *hq, *wfull;
    double n = (double)data->n_rows_global, f, gs, ws, ss, t, t0, change, dots[3];
    st_glm_newton_vec_t vec;
    const char *by_column;
    int forced, want, fits;
    double mem_avail, host_mem[2];
    const char *mem_str, *rows_on;
    int k, ok, halvings, cg = 0, warm;
    strata_status_t status = STRATA_OK;

    memset(&nt, 0, sizeof(nt));
    memset(&ctx, 0, sizeof(ctx));
    if (st_glm_order_init(&order, data, param->feature_order, 0, comm)) {
        data = &order.data;   /* the most frequent columns first, as for SDCA: 1.4x */
    }
    /* a column no row holds keeps w_j = 0 (its gradient is lambda w_j, its Newton step
       -w_j): the method works on the columns [0, d) up to the last one held (in the
       frequency order, all the held ones come first), then the bias, which
       st_glm_row_dot finds at index d */
    d = st_glm_newton_cols(data, comm);
    d_all = d + (param->bias > 0);
    ctx.comm    = comm;
    ctx.param   = param;
    st_glm_comm_shape(comm, &ctx.rank, &nt.nranks);   /* (MPI_COMM_NULL: rank 0 of 1) */
    nt.loss     = loss;
    nt.data     = data;
    nt.bias     = param->bias;
    nt.lambda   = param->lambda;
    nt.d        = d;
    nt.d_all    = d_all;
    nt.nparts   = (int)ST_MAX(1, ST_MIN(param->threads, ST_MAX(m, 1)));
    nt.threads  = ST_MAX(1, param->threads);
    nt.ctx      = &ctx;
    nt.parts    = calloc((size_t)nt.nparts, sizeof(*nt.parts));
    /* c, z, D, X s, c_i phi'(z_i); the row chunks' sums */
    rows = malloc(((size_t)ST_MAX(m, 1) * 5 +
                   2 * (size_t)((m + ST_GLM_NEWTON_ROW_CHUNK - 1) / ST_GLM_NEWTON_ROW_CHUNK)) *
                  sizeof(double));
    /* w g M s r q Hq, the sum, a part's sums per thread, w in all the columns, the CG
       sweeps' chunks' dots */
    mem  = malloc((size_t)(d_all * 7 + (2 * d_all + 2) * (1 + nt.nparts) + full_all +
                           st_glm_cg_chunks(d_all) * ST_GLM_CG_DOTS) *
                  sizeof(double));
    ok   = (nt.parts != NULL && rows != NULL && mem != NULL);
    if (!st_glm_agree(comm, ok)) {
        st_glm_msg(msg, msg_len, "out of memory for the Newton method (%lld features)",
                   (long long)d_all);
        free(nt.parts);
        free(rows);
        free(mem);
        st_glm_order_free(&order);
        return STRATA_ERR_NO_MEMORY;
    }
    c     = rows;
    nt.c  = c;
    nt.z  = rows + m;
    nt.dd = rows + 2 * m;
    nt.xs = rows + 3 * m;
    nt.rowsum = rows + 5 * ST_MAX(m, 1);
    nt.rows   = (st_glm_rows_args_t){.y = data->y, .c = c, .xs = nt.xs, .z = nt.z, .dd = nt.dd,
                                     .ga = rows + 4 * m, .part = nt.rowsum, .m = m,
                                     .step = st_glm_model_step(loss),
                                     .eps = st_glm_model_eps(loss, param)};
    w     = mem;
    g     = w + d_all;
    pre   = g + d_all;
    s     = pre + d_all;
    r     = s + d_all;
    q     = r + d_all;
    hq    = q + d_all;
    nt.sum = hq + d_all;
    wfull  = nt.sum + (2 * d_all + 2) * (1 + nt.nparts);
    nt.cg  = (st_glm_cg_args_t){.g = g, .m = pre, .hv = nt.sum, .s = s, .r = r, .q = q,
                                .hq = hq, .part = wfull + full_all, .n = n,
                                .lambda = param->lambda, .len = d_all};
    for (k = 0; k < nt.nparts; k++) {
        nt.parts[k].nt  = &nt;
        nt.parts[k].out = nt.sum + (2 * d_all + 2) * (k + 1);
        st_glm_block_range((m + ST_GLM_NEWTON_ROW_CHUNK - 1) / ST_GLM_NEWTON_ROW_CHUNK,
                           nt.nparts, k, &nt.parts[k].lo, &nt.parts[k].hi);
        nt.parts[k].lo = ST_MIN(m, nt.parts[k].lo * ST_GLM_NEWTON_ROW_CHUNK);   /* (whole */
        nt.parts[k].hi = ST_MIN(m, nt.parts[k].hi * ST_GLM_NEWTON_ROW_CHUNK);   /* chunks) */
    }
    for (i = 0; i < m; i++) {
        c[i]     = st_glm_example_weight(loss, param, data->y[i]);
        nt.z[i]  = 0;
        nt.xs[i] = 0;
    }
    for (j = 0; j < d_all; j++) {
        w[j] = 0;
    }
    if (param->gpu && st_glm_newton_gpu_open(&nt, loss, param, comm, msg, msg_len) != 0) {
        free(nt.parts);
        free(rows);
        free(mem);
        st_glm_order_free(&order);
        return STRATA_ERR_UNSUPPORTED;
    }
    if (nt.gpu != NULL && data->prec == 32) {   /* (64-bit data: the host's own values) */
        nt.ga = rows + 4 * m;
    }
    by_column = getenv("STRATA_GLM_NEWTON_BY_COLUMN");
    mem_avail = st_glm_mem_env(&mem_str);
    rows_on   = getenv("STRATA_GLM_GPU_NEWTON_ROWS");
    ok = (by_column == NULL || *by_column == '\0' || strcmp(by_column, "0") == 0 ||
          strcmp(by_column, "1") == 0);
    if (!ok) {
        st_glm_msg(msg, msg_len, "STRATA_GLM_NEWTON_BY_COLUMN='%s' is not 0 or 1", by_column);
    } else if (rows_on != NULL && *rows_on != '\0' && strcmp(rows_on, "gpu") != 0 &&
               strcmp(rows_on, "host") != 0) {
        st_glm_msg(msg, msg_len, "STRATA_GLM_GPU_NEWTON_ROWS='%s' is not gpu or host", rows_on);
        ok = 0;
    }
    mem_avail = ST_MAX(mem_avail, -1.0);   /* (strata_glm_train refused a bad one) */
    if (!st_glm_agree(comm, ok)) {
        if (ok) {
            st_glm_msg(msg, msg_len, "STRATA_GLM_NEWTON_BY_COLUMN or STRATA_GLM_GPU_NEWTON_ROWS "
                       "is not valid on another rank");
        }
        st_glm_gpu_close(nt.gpu);
        free(nt.parts);
        free(rows);
        free(mem);
        st_glm_order_free(&order);
        return STRATA_ERR_INVALID_PARAM;
    }
    /* the rows' own passes on the GPU too, with the margins (32-bit data: 64-bit data's
       margins stay the host's, off the GPU's float copy), unless told to keep them */
    nt.rows_gpu = (nt.gpu != NULL && data->prec == 32 && st_glm_gpu_has_newton_rows(nt.gpu) &&
                   (rows_on == NULL || strcmp(rows_on, "host") != 0));
    forced = (by_column != NULL && strcmp(by_column, "1") == 0);
    want   = (nt.gpu == NULL && nt.nparts >= ST_GLM_NEWTON_BY_COLUMN_THREADS &&
              (by_column == NULL || strcmp(by_column, "0") != 0));
    /* (the copy: each entry's row and value, a column's offset and fill count) */
    st_glm_mem_host(comm, want ? (double)(data->indptr[m] - data->indptr[0]) *
                                         (4.0 + data->prec / 8) + 16.0 * (double)d
                               : 0.0, mem_avail, host_mem);
    fits   = (host_mem[0] <= 0.5 * host_mem[1]);
    if (want && (forced || fits)) {
        if (st_glm_newton_by_column(&nt) == 0) {
            nt.ga = rows + 4 * m;
        } else {
            st_glm_newton_by_row(&nt);   /* (no memory: by row) */
        }
    }
    if (nt.gpu != NULL) {   /* what the copies move: D, X s, c_i phi'(z_i) (one range: two
                               sharing a page could not both be registered, and
                               st_glm_gpu_margins' own try at X s fails, harmlessly); g M s
                               (r q Hq) the sum, part 0 */
        st_glm_gpu_pin(nt.gpu, rows, (size_t)ST_MAX(m, 1) * 5 * sizeof(double));
        st_glm_gpu_pin(nt.gpu, g, (size_t)(d_all * 6 + (2 * d_all + 2) * 2) * sizeof(double));
    }

    if (param->verbose && ctx.rank == 0) {
        char on[160] = "";

        if (nt.gpu != NULL) {
            snprintf(on, sizeof(on), ", its conjugate gradients%s on GPU %d%s (%lld hot "
                     "column(s) summed per block)", nt.rows_gpu ? " and row passes" : "",
                     st_glm_gpu_device(nt.gpu),
                     st_glm_gpu_sharers(nt.gpu) > 1 ? " (shared by this host's ranks)" : "",
                     (long long)st_glm_gpu_hv_hot(nt.gpu));
        }
        char sums[160] = "";

        if (nt.ccp != NULL) {
            snprintf(sums, sizeof(sums), " (sums by column)");
        } else if (want && !forced && !fits) {
            snprintf(sums, sizeof(sums), " (sums by row: the host's copies by column, %.1f MB, "
                     "would pass half its %.1f MB available)", host_mem[0] / 1048576.0,
                     host_mem[1] / 1048576.0);
        }
        st_glm_print("Newton on the primal (preconditioned CG, line search), %d thread(s) "
                     "per rank%s, %lld of the %lld columns held%s\n", nt.nparts, sums,
                     (long long)d, (long long)data->n_cols, on);
    }
    ctx.t_start = st_glm_now();
    /* a starting model (strata_glm_train_from) in model->w: w from it, in the method's
       columns, and the margins X w by the pass a step takes (z = 0 + 1 X w); else 0 */
    warm = !st_glm_all_zero(model->w, full_all);
    if (warm) {
        st_glm_order_scatter(&order, model->w, wfull, full_all);
        memcpy(w, wfull, (size_t)d * sizeof(double));
        if (param->bias > 0) {
            w[d] = wfull[full_all - 1];
        }
        nt.v = w;
        st_glm_newton_run(&nt, ST_GLM_NEWTON_XV, 0);
        ctx.p0 = st_glm_primal_zero(loss, data, c, nt.rows.eps, comm);
    }
    st_glm_newton_point(&nt, w, warm ? 1.0 : 0.0, g, pre, &f, &obj);
    if (nt.gpu_failed) {
        goto out;   /* (a GPU call failed in a training alone) */
    }
    ctx.info.primal    = obj.primal;
    ctx.info.dual      = obj.dual;
    ctx.info.gap       = ST_MAX(obj.gap, 0.0);
    /* w = 0 itself is never the answer, however small its relative gap (a large lambda
       leaves P(0) within tol of the optimum): it scores every row 0, one class for all
       (before: "converged after 0 rounds", and one-vs-rest's models of zeros predicted
       the first class everywhere); a start may be, and a gap of 0 (no features) is */
    ctx.info.converged = st_glm_converged(&ctx, &obj) && (warm || obj.gap <= 0);
    while (!ctx.info.converged && ctx.info.rounds < param->max_rounds && !nt.gpu_failed &&
           !st_glm_mpi_failed()) {
        cg += st_glm_newton_cg(&nt);
        if (nt.gpu_failed) {
            break;
        }
        vec = (st_glm_newton_vec_t){.op = ST_GLM_NEWTON_STEP_DOTS, .w = w, .g = g, .s = s};
        st_glm_newton_vec(&nt, &vec, dots);
        gs = dots[0];
        ws = dots[1];
        ss = dots[2];
        if (!(gs < 0)) {
            break;   /* no descent left in double precision: w stays */
        }
        nt.v = s;
        t0   = st_glm_now();
        st_glm_newton_run(&nt, ST_GLM_NEWTON_XV, 0);
        t  = 1.0;
        for (halvings = 0; halvings <= ST_GLM_NEWTON_BACKTRACK; halvings++) {
            nt.t = t;
            st_glm_newton_run(&nt, ST_GLM_NEWTON_LOSS, 1);
            change = nt.sum[0] / n + nt.lambda * t * (ws + 0.5 * t * ss);
            if (change <= ST_GLM_NEWTON_ARMIJO * t * gs) {
                break;
            }
            t *= 0.5;
        }
        nt.secs[ST_GLM_NEWTON_T_SEARCH] += st_glm_now() - t0;
        if (nt.gpu_failed || halvings > ST_GLM_NEWTON_BACKTRACK) {
            break;   /* no decrease left in double precision: w stays */
        }
        vec = (st_glm_newton_vec_t){.op = ST_GLM_NEWTON_MOVE, .w = w, .s = s, .t = t};
        st_glm_newton_vec(&nt, &vec, NULL);
        st_glm_newton_point(&nt, w, t, g, pre, &f, &obj);
        if (nt.gpu_failed) {
            break;   /* (w moved by a step the GPU's sums may not have measured) */
        }
        st_glm_round_end(&ctx, &obj);
    }
    if (param->verbose && ctx.rank == 0) {
        st_glm_newton_report(&nt, ctx.info.rounds, cg, st_glm_now() - ctx.t_start);
    }
out:
    if (nt.gpu_failed) {
        st_glm_msg(msg, msg_len, "the GPU solver failed (a CUDA call, named on stderr)");
        status = STRATA_ERR_NO_RESOURCE;
    } else if (!ctx.info.converged && ctx.info.rounds == 0 && param->max_rounds > 0 &&
               isfinite(f)) {
        /* w = 0 is not the optimum, and no step from it lowers P in double precision
           (features of 1e308): an error, not a model of zeros (infinite: the caller's) */
        st_glm_msg(msg, msg_len, "the Newton method found no step that lowers the objective "
                   "from w = 0 (features too large for double precision? scale them)");
        status = STRATA_ERR_UNSUPPORTED;
    }
    memset(wfull, 0, (size_t)full_all * sizeof(double));
    memcpy(wfull, w, (size_t)d * sizeof(double));
    if (param->bias > 0) {
        wfull[full_all - 1] = w[d];
    }
    st_glm_order_gather(&order, wfull, model->w, full_all);
    model->info = ctx.info;
    st_glm_gpu_close(nt.gpu);
    st_glm_newton_by_row(&nt);
    free(nt.parts);
    free(rows);
    free(mem);
    st_glm_order_free(&order);
    return status;
}
