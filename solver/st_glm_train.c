/*
 * Training: stochastic dual coordinate ascent on each rank, CoCoA+ across ranks.
 *
 * The L2-regularized models (logistic, svm, sqsvm, ridge) are solved in the dual
 * (solver/MODELS.md 2-3):
 *
 *     max_alpha D(alpha) = (1/n) sum_i -phi_i*(-alpha_i) - (lambda/2) ||w(alpha)||^2,
 *     w(alpha) = v / (lambda n),  v = sum_i alpha_i x_i.
 *
 * Examples are partitioned over ranks and, inside a rank, over threads; every
 * thread is a CoCoA+ worker (Smith, Forte, Ma, Takac, Jordan, Jaggi, "CoCoA: A
 * General Framework for Communication-Efficient Distributed Optimization", JMLR
 * 2018, with adding, gamma = 1 and sigma' = the number of workers K):
 *
 *   each round, worker k starts from the global w and runs local_epochs passes of
 *   SDCA over its examples in a fresh random order against its own view
 *       u_k = w + (sigma' / (lambda n)) dv_k,  dv_k = sum over its steps of delta x_i,
 *   (the local subproblem of CoCoA+: q = sigma' ||x_i||^2 / (lambda n));
 *   then the workers' dv_k are summed, inside the rank and with one MPI_Allreduce
 *   across ranks (the d-vector the hierarchy speeds up), v += sum dv_k, and every
 *   rank recomputes w = v / (lambda n).
 *
 * After every round (or every gap_every rounds) the gap P(w) - D(alpha), computed
 * from fresh margins x_i . w and two summed scalars, is the stopping certificate
 * (relative tolerance), as in Snap ML. By default threads hold replicas merged once
 * per round (as SySCD does): the result does not depend on thread timing, so a run
 * can be repeated bit for bit. With thread_mode shared, a rank's threads update one
 * vector with atomic adds instead (PASSCoDe-Atomic), taking their rows from one
 * random order of all the rank's rows, and count as one CoCoA+ worker: more
 * progress per round, results that depend on timing.
 *
 * The L1 models (lasso, l1-logistic, elastic net) are primal problems: on one rank
 * the serial reference solver (solver/st_glm_model_serial.c) trains them, across
 * ranks ProxCoCoA+ over a partition of the features (solver/st_glm_train_primal.c).
 */
#include "config.h"

#include "st_glm.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

/* ---- output ---- */

static void (*st_glm_print_fn)(const char *line);

ST_EXPORT void strata_glm_set_print_function(void (*fn)(const char *line))
{
    st_glm_print_fn = fn;
}

void st_glm_print(const char *fmt, ...)
{
    char line[1024];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    if (st_glm_print_fn != NULL) {
        st_glm_print_fn(line);
    } else {
        fputs(line, stdout);
        fflush(stdout);
    }
}

void st_glm_msg(char *msg, size_t len, const char *fmt, ...)
{
    va_list ap;

    if (msg == NULL || len == 0) {
        return;
    }
    va_start(ap, fmt);
    vsnprintf(msg, len, fmt, ap);
    va_end(ap);
}

double st_glm_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ---- communication: MPI_COMM_NULL is a process on its own, MPI not needed ---- */

void st_glm_comm_shape(MPI_Comm comm, int *rank_p, int *size_p)
{
    *rank_p = 0;
    *size_p = 1;
    if (comm != MPI_COMM_NULL) {
        MPI_Comm_rank(comm, rank_p);
        MPI_Comm_size(comm, size_p);
    }
}

/* In-place allreduce of @a count elements, in pieces an int can count. */
void st_glm_allreduce(MPI_Comm comm, void *buf, int64_t count, MPI_Datatype type, MPI_Op op)
{
    const int64_t piece = (int64_t)1 << 30;
    int64_t off, n;
    int esize;

    if (comm == MPI_COMM_NULL) {
        return;
    }
    MPI_Type_size(type, &esize);
    for (off = 0; off < count; off += n) {
        n = ST_MIN(piece, count - off);
        MPI_Allreduce(MPI_IN_PLACE, (char*)buf + off * esize, (int)n, type, op, comm);
    }
}

int st_glm_agree(MPI_Comm comm, int ok)
{
    st_glm_allreduce(comm, &ok, 1, MPI_INT, MPI_MIN);
    return ok;
}

/* ---- models ---- */

strata_glm_model_t *st_glm_model_new(const st_glm_model_t *loss, int64_t n_features,
                                     double bias)
{
    strata_glm_model_t *model = calloc(1, sizeof(*model));

    if (model == NULL) {
        return NULL;
    }
    model->w = calloc((size_t)n_features + 1, sizeof(double));
    if (model->w == NULL) {
        free(model);
        return NULL;
    }
    model->loss       = loss;
    model->n_features = n_features;
    model->bias       = bias;
    return model;
}

/* ---- parameters ---- */

ST_EXPORT void strata_glm_param_default(strata_glm_param_t *param)
{
    memset(param, 0, sizeof(*param));
    param->solver       = "logistic";
    param->lambda       = 1e-4;
    param->eta          = 0.5;
    param->tol          = 1e-3;
    param->max_rounds   = 200;
    param->gap_every    = 1;
    param->local_epochs = 1;
    param->threads      = 1;
    param->bias         = -1;
    param->weight_pos   = 1;
    param->weight_neg   = 1;
    param->seed         = 1;
}

ST_EXPORT const char *strata_glm_check_param(const strata_glm_param_t *param)
{
    static __thread char err[256];
    const st_glm_model_t *model;
    const char *why;

    if (param == NULL) {
        return "no parameters";
    }
    model = st_glm_model_lookup(param->solver != NULL ? param->solver : "", err, sizeof(err));
    if (model == NULL) {
        return err;
    }
    if ((why = st_glm_model_check(model, param->lambda, param->eta)) != NULL) {
        return why;
    }
    if (!(param->tol >= 0) || !isfinite(param->tol)) {
        return "tol must be a finite number >= 0";
    }
    if (param->max_rounds < 1) {
        return "max_rounds must be >= 1";
    }
    if (param->gap_every < 0) {
        return "gap_every must be >= 1 (0 is taken for 1)";
    }
    if (param->local_epochs < 1 || param->local_epochs > 1000) {
        return "local_epochs must be in [1, 1000]";
    }
    if (param->threads < 1 || param->threads > 1024) {
        return "threads must be in [1, 1024]";
    }
    if (param->thread_mode != STRATA_GLM_THREADS_REPLICAS &&
        param->thread_mode != STRATA_GLM_THREADS_SHARED) {
        return "thread_mode must be STRATA_GLM_THREADS_REPLICAS or STRATA_GLM_THREADS_SHARED";
    }
    if (!isfinite(param->bias)) {
        return "bias must be finite";
    }
    if (!(param->weight_pos > 0) || !(param->weight_neg > 0) || !isfinite(param->weight_pos) ||
        !isfinite(param->weight_neg)) {
        return "class weights must be finite and > 0";
    }
    if (param->checkpoint_every < 0) {
        return "checkpoint_every must be >= 0 (0: no checkpoints)";
    }
    if (param->resume != 0 && param->resume != 1) {
        return "resume must be 0 or 1";
    }
    if ((param->checkpoint_every > 0 || param->resume) &&
        (param->checkpoint == NULL || param->checkpoint[0] == '\0')) {
        return "checkpoint_every and resume need a checkpoint file (checkpoint)";
    }
    return NULL;
}

/* ---- problems ---- */

ST_EXPORT strata_status_t strata_glm_problem_read(const char *path, int regression,
                                                  MPI_Comm comm, char *msg, size_t msg_len,
                                                  strata_glm_problem_t **prob_p)
{
    st_glm_data_opts_t opts;
    strata_glm_problem_t *prob;
    st_glm_data_t *data = NULL;
    st_status_t status;

    if (path == NULL || prob_p == NULL) {
        st_glm_msg(msg, msg_len, "no file name");
        return STRATA_ERR_INVALID_PARAM;
    }
    st_glm_data_opts_init(&opts);
    opts.label_kind = regression ? ST_GLM_LABEL_REAL : ST_GLM_LABEL_CLASS;
    status = st_glm_data_load(path, &opts, comm, msg, msg_len, &data);
    if (status != ST_OK) {
        return status;
    }
    /* after the collective read: a failure here is this rank's alone */
    prob = calloc(1, sizeof(*prob));
    if (prob == NULL) {
        st_glm_data_free(data);
        st_glm_msg(msg, msg_len, "out of memory");
        return STRATA_ERR_NO_MEMORY;
    }
    prob->data       = data;
    prob->regression = regression;
    *prob_p          = prob;
    return STRATA_OK;
}

ST_EXPORT strata_status_t strata_glm_problem_create(int64_t n_rows, int64_t n_cols,
                                                    const int64_t *indptr,
                                                    const uint32_t *indices,
                                                    const double *values, const double *y,
                                                    int regression, MPI_Comm comm, char *msg,
                                                    size_t msg_len,
                                                    strata_glm_problem_t **prob_p)
{
    int64_t all[3], offset = 0, nnz, r, k;
    strata_glm_problem_t *prob = NULL;
    st_glm_data_t *data = NULL;
    int ok = 1;

    nnz = (n_rows >= 0 && indptr != NULL) ? indptr[n_rows] : -1;
    if (n_rows < 0 || n_cols < 0 || nnz < 0 || prob_p == NULL || (n_rows > 0 && y == NULL) ||
        (nnz > 0 && (indices == NULL || values == NULL))) {
        st_glm_msg(msg, msg_len, "invalid CSR arguments");
        ok = 0;
    }
    for (r = 0; ok && r < n_rows; r++) {
        for (k = indptr[r]; ok && k < indptr[r + 1]; k++) {
            if (indptr[r + 1] < indptr[r] || (int64_t)indices[k] >= n_cols ||
                (k > indptr[r] && indices[k] <= indices[k - 1]) || !isfinite(values[k])) {
                st_glm_msg(msg, msg_len, "row %lld: indices must be increasing and < n_cols, "
                           "values finite", (long long)r);
                ok = 0;
            }
        }
        if (ok && (regression ? !isfinite(y[r]) : (y[r] != 1 && y[r] != -1))) {
            st_glm_msg(msg, msg_len, "row %lld: label %g (%s)", (long long)r, y[r],
                       regression ? "not finite" : "classification labels are +1 or -1");
            ok = 0;
        }
    }
    if (ok && (st_glm_data_alloc(n_rows, nnz, 64, &data) != ST_OK ||
               (prob = calloc(1, sizeof(*prob))) == NULL)) {
        st_glm_msg(msg, msg_len, "out of memory");
        ok = 0;
    }
    if (!st_glm_agree(comm, ok)) {
        if (ok) {
            st_glm_msg(msg, msg_len, "another rank's rows are invalid");
        }
        st_glm_data_free(data);
        free(prob);
        return STRATA_ERR_INVALID_PARAM;
    }
    memcpy(data->indptr, indptr, ((size_t)n_rows + 1) * sizeof(int64_t));
    memcpy(data->indices, indices, (size_t)nnz * sizeof(uint32_t));
    memcpy(data->val64, values, (size_t)nnz * sizeof(double));
    memcpy(data->y, y, (size_t)n_rows * sizeof(double));
    data->label_kind = regression ? ST_GLM_LABEL_REAL : ST_GLM_LABEL_CLASS;
    all[0] = n_rows;
    all[1] = nnz;
    all[2] = n_cols;
    st_glm_allreduce(comm, all, 2, MPI_INT64_T, MPI_SUM);
    st_glm_allreduce(comm, &all[2], 1, MPI_INT64_T, MPI_MAX);
    if (comm != MPI_COMM_NULL) {
        MPI_Exscan(&n_rows, &offset, 1, MPI_INT64_T, MPI_SUM, comm);
        MPI_Comm_rank(comm, &ok);
        offset = (ok == 0) ? 0 : offset;
    }
    data->n_rows_global = all[0];
    data->nnz_global    = all[1];
    data->n_cols        = all[2];
    data->row_offset    = offset;
    prob->data          = data;
    prob->regression    = regression;
    *prob_p             = prob;
    return STRATA_OK;
}

ST_EXPORT int64_t strata_glm_problem_rows(const strata_glm_problem_t *prob)
{
    return prob->data->n_rows;
}

ST_EXPORT int64_t strata_glm_problem_rows_global(const strata_glm_problem_t *prob)
{
    return prob->data->n_rows_global;
}

ST_EXPORT int64_t strata_glm_problem_cols(const strata_glm_problem_t *prob)
{
    return prob->data->n_cols;
}

ST_EXPORT void strata_glm_problem_free(strata_glm_problem_t *prob)
{
    if (prob != NULL) {
        st_glm_data_free(prob->data);
        free(prob);
    }
}

/* ---- the dual trainer ---- */

typedef struct st_glm_trainer st_glm_trainer_t;

typedef struct {
    st_glm_trainer_t *tr;
    int               id;
    pthread_t         thread;
    int64_t           lo, hi;      /* my rows */
    int64_t          *perm;        /* my rows, in this epoch's order (in tr->perm) */
    double           *u;           /* my view of w, d_all entries */
    uint64_t          rng;
    double            sums[2];     /* loss, neg_conj of my rows (gap pass) */
} st_glm_worker_t;

struct st_glm_trainer {
    const st_glm_model_t *loss;
    const st_glm_data_t  *data;
    int64_t               d;       /* features */
    int64_t               d_all;   /* d, + 1 with a bias feature */
    double                bias;
    double                lambda, scale;  /* scale = sigma' / (lambda n) */
    double               *alpha, *c, *sqnorm;
    int64_t              *perm;    /* the workers' row orders, one after the other;
                                      * shared: one order of all the rows */
    _Atomic int64_t       next_row; /* shared: the next chunk of perm to take */
    uint64_t             *rngs;    /* param->threads: the workers' states, checkpointed */
    double               *w, *v, *dv;
    double               *u;       /* shared mode: the vector of all my threads */
    int                   shared;  /* the threads update u together (else replicas) */
    int                   nworkers, local_epochs;
    st_glm_worker_t      *workers;
    pthread_barrier_t     barrier;
    int                   stop;    /* set by worker 0 between barriers */
    pthread_mutex_t       gate_lock;
    pthread_cond_t        gate_cond;
    int                   gate;    /* 0 wait, 1 run, -1 quit (a rank lacks threads) */
    st_glm_ckpt_t         ck;
    strata_status_t       ck_status;                 /* of a failed checkpoint */
    char                  ck_msg[ST_GLM_DATA_MSG_LEN];
};

/*
 * Entries of u: plain, or (shared, a vector the rank's threads update together) read
 * with relaxed atomic loads and updated with a compare-and-swap loop, so no update is
 * lost (PASSCoDe-Atomic). @a shared is a constant at every call: the compiler makes
 * one loop of each kind.
 */
static inline double st_glm_load(const double *p, int shared)
{
    double v;

    if (!shared) {
        return *p;
    }
    __atomic_load(p, &v, __ATOMIC_RELAXED);
    return v;
}

static inline void st_glm_add(double *p, double a, int shared)
{
    double old, sum;

    if (!shared) {
        *p += a;
        return;
    }
    __atomic_load(p, &old, __ATOMIC_RELAXED);
    do {
        sum = old + a;
    } while (!__atomic_compare_exchange(p, &old, &sum, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
}

/* x_i . u, and u += a x_i, for both value precisions, the bias feature included */
static inline double st_glm_dot(const st_glm_trainer_t *tr, int64_t i, const double *u,
                                int shared)
{
    const st_glm_data_t *data = tr->data;
    const uint32_t *idx       = data->indices;
    int64_t k, end = data->indptr[i + 1];
    double s = 0;

    if (data->prec == 32) {
        for (k = data->indptr[i]; k < end; k++) {
            s += (double)data->val32[k] * st_glm_load(&u[idx[k]], shared);
        }
    } else {
        for (k = data->indptr[i]; k < end; k++) {
            s += data->val64[k] * st_glm_load(&u[idx[k]], shared);
        }
    }
    if (tr->bias > 0) {
        s += tr->bias * st_glm_load(&u[tr->d], shared);
    }
    return s;
}

static inline void st_glm_axpy(const st_glm_trainer_t *tr, int64_t i, double a, double *u,
                               int shared)
{
    const st_glm_data_t *data = tr->data;
    const uint32_t *idx       = data->indices;
    int64_t k, end = data->indptr[i + 1];

    if (data->prec == 32) {
        for (k = data->indptr[i]; k < end; k++) {
            st_glm_add(&u[idx[k]], a * (double)data->val32[k], shared);
        }
    } else {
        for (k = data->indptr[i]; k < end; k++) {
            st_glm_add(&u[idx[k]], a * data->val64[k], shared);
        }
    }
    if (tr->bias > 0) {
        st_glm_add(&u[tr->d], a * tr->bias, shared);
    }
}

/*
 * Prefetching for the random walk over the rows: the row ST_GLM_AHEAD steps ahead
 * (its indices, values and per-row scalars, through its indptr entry) and the indptr
 * entry of the row twice as far ahead, so that entry is cached when it is read.
 */
#define ST_GLM_AHEAD 8

static inline void st_glm_prefetch_row(const st_glm_trainer_t *tr, int64_t i)
{
    const st_glm_data_t *data = tr->data;
    int64_t k = data->indptr[i], end = data->indptr[i + 1];

    for (; k < end; k += 16) {
        __builtin_prefetch(&data->indices[k]);
        if (data->prec == 32) {
            __builtin_prefetch(&data->val32[k]);
        } else {
            __builtin_prefetch(&data->val64[k]);
            __builtin_prefetch(&data->val64[k + 8]);
        }
    }
    __builtin_prefetch(&tr->alpha[i], 1);
    __builtin_prefetch(&tr->sqnorm[i]);
    __builtin_prefetch(&tr->c[i]);
    __builtin_prefetch(&data->y[i]);
}

/* The entries of @a u that row @a i reads and then updates (the gather that otherwise
 * waits on the cache at every nonzero), for writing. */
static inline void st_glm_prefetch_model(const st_glm_trainer_t *tr, int64_t i,
                                         const double *u)
{
    const st_glm_data_t *data = tr->data;
    const uint32_t *idx       = data->indices;
    int64_t k, end = data->indptr[i + 1];

    for (k = data->indptr[i]; k < end; k++) {
        __builtin_prefetch(&u[idx[k]], 1);
    }
}

/* SDCA steps on the rows order[0 .. n), against wk->u. */
static inline __attribute__((always_inline)) void st_glm_sdca_rows(st_glm_worker_t *wk,
                                                                    const int64_t *order,
                                                                    int64_t n, int shared)
{
    st_glm_trainer_t *tr = wk->tr;
    const st_glm_data_t *data = tr->data;
    const double *y      = data->y;
    int64_t j, i;
    double z, delta, q;

    for (j = 0; j < n; j++) {
        if (j + 2 * ST_GLM_AHEAD < n) {
            __builtin_prefetch(&data->indptr[order[j + 2 * ST_GLM_AHEAD]]);
        }
        if (j + ST_GLM_AHEAD < n) {
            st_glm_prefetch_row(tr, order[j + ST_GLM_AHEAD]);
        }
        if (j + ST_GLM_AHEAD / 2 < n) {
            st_glm_prefetch_model(tr, order[j + ST_GLM_AHEAD / 2], wk->u);
        }
        /* an empty row (q = 0) still moves its dual variable to the conjugate's
         * maximum, though not w */
        i     = order[j];
        z     = st_glm_dot(tr, i, wk->u, shared);
        q     = tr->scale * tr->sqnorm[i];
        delta = tr->loss->dual_step(y[i], tr->c[i], z, q, &tr->alpha[i]);
        if (delta != 0) {
            st_glm_axpy(tr, i, tr->scale * delta, wk->u, shared);
        }
    }
}

/* A fresh uniformly random order of order[0 .. n) (Fisher-Yates). */
static void st_glm_shuffle(int64_t *order, int64_t n, uint64_t *rng)
{
    int64_t j, k, t;

    for (j = n - 1; j > 0; j--) {
        k        = (int64_t)(st_glm_rand(rng) % (uint64_t)(j + 1));
        t        = order[j];
        order[j] = order[k];
        order[k] = t;
    }
}

/*
 * One round of local SDCA on a replica: each epoch visits the worker's rows in a
 * fresh uniformly random order. Not by buckets of consecutive rows (as SySCD does
 * for locality): a fixed grouping of rows behaves partly like a cyclic order, and
 * on the Criteo-like data of bench/GLM.md (300k rows, lambda 1e-5) buckets of 16
 * rows left the dual 1e-2 from the optimum after 40 epochs where a full permutation
 * reached 1.7e-4 (buckets of 256: 1.5e-2; a fixed order: worse still). The random
 * access this costs is hidden by prefetching.
 */
static void st_glm_local_sdca_replica(st_glm_worker_t *wk)
{
    int64_t n = wk->hi - wk->lo;
    int epoch;

    for (epoch = 0; epoch < wk->tr->local_epochs; epoch++) {
        st_glm_shuffle(wk->perm, n, &wk->rng);
        st_glm_sdca_rows(wk, wk->perm, n, 0);
    }
}

/*
 * One round of local SDCA with the threads sharing one vector: each epoch is one
 * random order of ALL the rank's rows, which the threads take in chunks as they go.
 * Not each thread its own half of the rows: when the threads do not run at once
 * (a loaded machine, fewer cores than threads), their halves were visited one
 * after the other, a block-cyclic order that on the Criteo-like data of
 * tests/glm_train.sh left the gap at 5e-4 after 600 rounds where one thread
 * reaches 1e-5 in 74. In one order, a thread alone still makes a full random
 * pass. Worker 0 shuffles; barriers keep the epochs apart, so no row is in two
 * threads' hands at once.
 */
#define ST_GLM_SHARED_CHUNK 512

static void st_glm_local_sdca_shared(st_glm_worker_t *wk)
{
    st_glm_trainer_t *tr = wk->tr;
    int64_t m = tr->data->n_rows, at;
    int epoch;

    for (epoch = 0; epoch < tr->local_epochs; epoch++) {
        if (wk->id == 0) {
            st_glm_shuffle(tr->perm, m, &wk->rng);
            atomic_store_explicit(&tr->next_row, 0, memory_order_relaxed);
        }
        pthread_barrier_wait(&tr->barrier);
        while ((at = atomic_fetch_add_explicit(&tr->next_row, ST_GLM_SHARED_CHUNK,
                                               memory_order_relaxed)) < m) {
            st_glm_sdca_rows(wk, tr->perm + at, ST_MIN(ST_GLM_SHARED_CHUNK, m - at), 1);
        }
        if (epoch + 1 < tr->local_epochs) {
            pthread_barrier_wait(&tr->barrier);
        }
    }
}

/* A replica starts the round from w; the shared vector was set to w by st_glm_apply. */
static void st_glm_local_sdca(st_glm_worker_t *wk)
{
    st_glm_trainer_t *tr = wk->tr;

    if (tr->shared) {
        st_glm_local_sdca_shared(wk);
    } else {
        memcpy(wk->u, tr->w, (size_t)tr->d_all * sizeof(double));
        st_glm_local_sdca_replica(wk);
    }
}

/* My share [lo, hi) of the d_all coordinates. */
static void st_glm_coord_range(const st_glm_trainer_t *tr, int id, int64_t *lo, int64_t *hi)
{
    *lo = tr->d_all * id / tr->nworkers;
    *hi = tr->d_all * (id + 1) / tr->nworkers;
}

/* dv = sum_k (u_k - w) / scale over my share of the coordinates. */
static void st_glm_merge(st_glm_worker_t *wk)
{
    st_glm_trainer_t *tr = wk->tr;
    int64_t lo, hi, j;
    int k;

    st_glm_coord_range(tr, wk->id, &lo, &hi);
    for (j = lo; j < hi; j++) {
        tr->dv[j] = 0;
    }
    for (k = 0; k < (tr->shared ? 1 : tr->nworkers); k++) {
        const double *u = tr->workers[k].u;

        for (j = lo; j < hi; j++) {
            tr->dv[j] += u[j] - tr->w[j];
        }
    }
    for (j = lo; j < hi; j++) {
        tr->dv[j] /= tr->scale;
    }
}

/* v += dv (summed over ranks), w = v / (lambda n), over my share. */
static void st_glm_apply(st_glm_worker_t *wk)
{
    st_glm_trainer_t *tr = wk->tr;
    double inv = 1.0 / (tr->lambda * (double)tr->data->n_rows_global);
    int64_t lo, hi, j;

    st_glm_coord_range(tr, wk->id, &lo, &hi);
    for (j = lo; j < hi; j++) {
        tr->v[j] += tr->dv[j];
        tr->w[j] = tr->v[j] * inv;
    }
    if (tr->shared) {
        memcpy(&tr->u[lo], &tr->w[lo], (size_t)(hi - lo) * sizeof(double));
    }
}

/* The gap pass over my rows: loss at fresh margins, and the dual terms. */
static void st_glm_gap_pass(st_glm_worker_t *wk)
{
    st_glm_trainer_t *tr = wk->tr;
    const double *y      = tr->data->y;
    double loss = 0, conj = 0;
    int64_t i;

    for (i = wk->lo; i < wk->hi; i++) {
        loss += tr->c[i] * tr->loss->loss(st_glm_dot(tr, i, tr->w, 0), y[i]);
        conj += tr->loss->neg_conj(tr->alpha[i], y[i], tr->c[i]);
    }
    wk->sums[0] = loss;
    wk->sums[1] = conj;
}

/* The end of a round (one thread): the stopping test and the progress line. */
void st_glm_round_end(st_glm_round_ctx_t *ctx, const st_glm_objectives_t *objp)
{
    st_glm_objectives_t obj = *objp;

    ctx->info.rounds++;
    ctx->info.primal    = obj.primal;
    ctx->info.dual      = obj.dual;
    ctx->info.gap       = ST_MAX(obj.gap, 0.0);
    ctx->info.seconds   = st_glm_now() - ctx->t_start;
    ctx->info.converged = (obj.gap <= ctx->param->tol * fabs(obj.primal));
    if (ctx->param->verbose && ctx->rank == 0) {
        st_glm_print("round %4d  primal %.10e  dual %.10e  gap %.3e  rel %.3e  "
                     "time %.3f s (allreduce %.3f s)\n", ctx->info.rounds, obj.primal,
                     obj.dual, obj.gap, obj.gap / fmax(fabs(obj.primal), 1e-300),
                     ctx->info.seconds, ctx->info.comm_seconds);
    }
}

static st_glm_round_ctx_t *st_glm_ctx;   /* set while st_glm_train_dual runs */

/* Worker 0, the others waiting at a barrier: the checkpoint after this round; a
 * failure stops the training. */
static void st_glm_checkpoint(st_glm_trainer_t *tr, st_glm_round_ctx_t *ctx, int certified)
{
    int k;

    for (k = 0; k < tr->nworkers; k++) {
        tr->rngs[k] = tr->workers[k].rng;
    }
    tr->ck_status = st_glm_ckpt_save(&tr->ck, &ctx->info, certified, tr->ck_msg,
                                     sizeof(tr->ck_msg));
    if (tr->ck_status != STRATA_OK) {
        tr->stop = 1;
    }
}

/*
 * The rounds. Worker 0 (the calling thread) does the MPI calls between barriers;
 * the others wait. Every phase ends at a barrier, so the workers' shared state is
 * only read after it was written.
 */
static void st_glm_worker_run(st_glm_worker_t *wk)
{
    st_glm_trainer_t *tr = wk->tr;
    st_glm_round_ctx_t *ctx;
    st_glm_objectives_t obj;
    double tc, sums[2], wsq;
    int64_t j;
    int k, round = st_glm_ctx->info.rounds, every = ST_MAX(st_glm_ctx->param->gap_every, 1);
    int certify, due;

    if (tr->stop) {
        return;   /* resumed from the round the run ended with */
    }
    for (;;) {
        /* the certificate every gap_every rounds, and after the last */
        round++;
        certify = (round % every == 0 || round >= st_glm_ctx->param->max_rounds);
        due     = st_glm_ckpt_due(&tr->ck, round);
        st_glm_local_sdca(wk);
        pthread_barrier_wait(&tr->barrier);
        st_glm_merge(wk);
        pthread_barrier_wait(&tr->barrier);
        if (wk->id == 0) {
            ctx = st_glm_ctx;
            tc  = st_glm_now();
            st_glm_allreduce(ctx->comm, tr->dv, tr->d_all, MPI_DOUBLE, MPI_SUM);
            ctx->info.comm_seconds += st_glm_now() - tc;
        }
        pthread_barrier_wait(&tr->barrier);
        st_glm_apply(wk);
        pthread_barrier_wait(&tr->barrier);
        if (!certify) {
            if (wk->id == 0) {
                st_glm_ctx->info.rounds++;
                st_glm_ctx->info.seconds = st_glm_now() - st_glm_ctx->t_start;
                if (due) {
                    st_glm_checkpoint(tr, st_glm_ctx, 0);
                }
            }
            if (!due) {
                continue;   /* the next round's epoch starts after the apply barrier */
            }
            pthread_barrier_wait(&tr->barrier);   /* the others wait out the checkpoint */
            if (tr->stop) {
                break;
            }
            continue;
        }
        st_glm_gap_pass(wk);
        pthread_barrier_wait(&tr->barrier);
        if (wk->id == 0) {
            ctx     = st_glm_ctx;
            sums[0] = sums[1] = 0;
            for (k = 0; k < tr->nworkers; k++) {
                sums[0] += tr->workers[k].sums[0];
                sums[1] += tr->workers[k].sums[1];
            }
            tc = st_glm_now();
            st_glm_allreduce(ctx->comm, sums, 2, MPI_DOUBLE, MPI_SUM);
            ctx->info.comm_seconds += st_glm_now() - tc;
            wsq = 0;
            for (j = 0; j < tr->d_all; j++) {
                wsq += tr->w[j] * tr->w[j];
            }
            st_glm_dual_objectives(sums[0], sums[1], wsq, tr->data->n_rows_global,
                                   tr->lambda, &obj);
            st_glm_round_end(ctx, &obj);
            tr->stop = ctx->info.converged || ctx->info.rounds >= ctx->param->max_rounds;
            if (due) {
                st_glm_checkpoint(tr, ctx, 1);
            }
        }
        pthread_barrier_wait(&tr->barrier);
        if (tr->stop) {
            break;
        }
    }
}

/* Workers 1 ..: wait until every rank has all its threads, then run the rounds. */
static void *st_glm_worker_main(void *arg)
{
    st_glm_worker_t *wk  = arg;
    st_glm_trainer_t *tr = wk->tr;
    int gate;

    pthread_mutex_lock(&tr->gate_lock);
    while (tr->gate == 0) {
        pthread_cond_wait(&tr->gate_cond, &tr->gate_lock);
    }
    gate = tr->gate;
    pthread_mutex_unlock(&tr->gate_lock);
    if (gate > 0) {
        st_glm_worker_run(wk);
    }
    return NULL;
}

static void st_glm_trainer_free(st_glm_trainer_t *tr)
{
    int k;

    if (tr->workers != NULL) {
        for (k = 0; k < tr->nworkers; k++) {
            if (!tr->shared) {
                free(tr->workers[k].u);
            }
        }
    }
    free(tr->workers);
    free(tr->perm);
    free(tr->rngs);
    free(tr->alpha);
    free(tr->c);
    free(tr->sqnorm);
    free(tr->w);
    free(tr->v);
    free(tr->dv);
    free(tr->u);
    pthread_mutex_destroy(&tr->gate_lock);
    pthread_cond_destroy(&tr->gate_cond);
}

/* st_glm_ctx is one per process: trainings from two threads take turns. */
static pthread_mutex_t st_glm_train_lock = PTHREAD_MUTEX_INITIALIZER;

static strata_status_t st_glm_train_dual(const st_glm_model_t *loss,
                                         const strata_glm_problem_t *prob,
                                         const strata_glm_param_t *param, MPI_Comm comm,
                                         char *msg, size_t msg_len, strata_glm_model_t *model)
{
    const st_glm_data_t *data = prob->data;
    st_glm_trainer_t tr;
    st_glm_round_ctx_t ctx;
    int nranks, ok, k, started = 0, certified = 0;
    int64_t i, j, m = data->n_rows, lo, hi;
    strata_status_t status = STRATA_OK;
    double inv;

    memset(&tr, 0, sizeof(tr));
    memset(&ctx, 0, sizeof(ctx));
    pthread_mutex_init(&tr.gate_lock, NULL);
    pthread_cond_init(&tr.gate_cond, NULL);
    st_glm_comm_shape(comm, &ctx.rank, &nranks);
    ctx.comm    = comm;
    ctx.param   = param;
    ctx.t_start = st_glm_now();

    tr.loss         = loss;
    tr.data         = data;
    tr.d            = data->n_cols;
    tr.bias         = param->bias;
    tr.d_all        = data->n_cols + (param->bias > 0);
    tr.lambda       = param->lambda;
    tr.local_epochs = param->local_epochs;
    tr.nworkers     = (int)ST_MAX(1, ST_MIN((int64_t)param->threads, ST_MAX(m, 1)));
    tr.shared       = (param->thread_mode == STRATA_GLM_THREADS_SHARED && tr.nworkers > 1);
    /* CoCoA+ adding: sigma' = the number of workers over all ranks (with a shared
     * vector, a rank's threads are one worker) */
    tr.scale = (double)nranks * (tr.shared ? 1 : tr.nworkers) /
               (param->lambda * (double)data->n_rows_global);

    tr.alpha   = calloc((size_t)ST_MAX(m, 1), sizeof(double));
    tr.c       = malloc((size_t)ST_MAX(m, 1) * sizeof(double));
    tr.sqnorm  = malloc((size_t)ST_MAX(m, 1) * sizeof(double));
    tr.w       = calloc((size_t)tr.d_all, sizeof(double));
    tr.v       = calloc((size_t)tr.d_all, sizeof(double));
    tr.dv      = calloc((size_t)tr.d_all, sizeof(double));
    tr.perm    = malloc((size_t)ST_MAX(m, 1) * sizeof(int64_t));
    tr.rngs    = calloc((size_t)param->threads, sizeof(uint64_t));
    tr.workers = calloc((size_t)tr.nworkers, sizeof(*tr.workers));
    tr.u       = tr.shared ? calloc((size_t)tr.d_all, sizeof(double)) : NULL;
    ok = (tr.alpha && tr.c && tr.sqnorm && tr.w && tr.v && tr.dv && tr.perm && tr.rngs &&
          tr.workers && (tr.u || !tr.shared));
    for (k = 0; ok && k < tr.nworkers; k++) {
        st_glm_worker_t *wk = &tr.workers[k];

        wk->tr   = &tr;
        wk->id   = k;
        wk->lo   = m * k / tr.nworkers;
        wk->hi   = m * (k + 1) / tr.nworkers;
        wk->rng  = param->seed * 0x9e3779b97f4a7c15ULL + (uint64_t)ctx.rank * 1000003ULL +
                   (uint64_t)k;
        wk->perm = tr.perm + wk->lo;
        wk->u    = tr.shared ? tr.u : malloc((size_t)tr.d_all * sizeof(double));
        ok       = (wk->u != NULL);
        for (i = 0; ok && i < wk->hi - wk->lo; i++) {
            wk->perm[i] = wk->lo + i;
        }
    }
    if (!st_glm_agree(comm, ok)) {
        st_glm_msg(msg, msg_len, "out of memory (%lld features, %lld rows on a rank)",
                   (long long)tr.d_all, (long long)m);
        st_glm_trainer_free(&tr);
        return STRATA_ERR_NO_MEMORY;
    }

    /* the checkpoint: v (each rank writes a share), my rows' alpha and orders, my
     * workers' random states */
    status = st_glm_ckpt_init(&tr.ck, ST_GLM_CKPT_DUAL, loss, prob, param, comm, msg, msg_len);
    if (status != STRATA_OK) {
        st_glm_trainer_free(&tr);
        return status;
    }
    if (tr.ck.path != NULL) {
        int64_t n = data->n_rows_global, r0 = data->row_offset, nt = param->threads;

        st_glm_block_range(tr.d_all, nranks, ctx.rank, &lo, &hi);
        st_glm_ckpt_entry(&tr.ck, r0, m, tr.nworkers, 0);
        st_glm_ckpt_add(&tr.ck, "shared vector", tr.v, tr.d_all, 0, tr.d_all, lo, hi);
        st_glm_ckpt_add(&tr.ck, "dual variables", tr.alpha, n, r0, r0 + m, r0, r0 + m);
        st_glm_ckpt_add(&tr.ck, "row orders", tr.perm, n, r0, r0 + m, r0, r0 + m);
        st_glm_ckpt_add(&tr.ck, "random states", tr.rngs, nranks * nt, ctx.rank * nt,
                        (ctx.rank + 1) * nt, ctx.rank * nt, (ctx.rank + 1) * nt);
    }
    if (param->resume) {
        status = st_glm_ckpt_load(&tr.ck, &ctx.info, &certified, msg, msg_len);
        ok = 1;
        if (tr.shared && status == STRATA_OK) {   /* one order of all the rows */
            ok = st_glm_ckpt_order_ok(tr.perm, m, 0);
        }
        for (k = 0; !tr.shared && status == STRATA_OK && k < tr.nworkers; k++) {
            ok &= st_glm_ckpt_order_ok(tr.workers[k].perm, tr.workers[k].hi - tr.workers[k].lo,
                                       tr.workers[k].lo);
        }
        if (status == STRATA_OK && !st_glm_agree(comm, ok)) {
            st_glm_msg(msg, msg_len, "%s: corrupted checkpoint (a row order is not a "
                       "permutation)", param->checkpoint);
            status = STRATA_ERR_IO;
        }
        if (status != STRATA_OK) {
            st_glm_trainer_free(&tr);
            return status;
        }
        /* w and the shared vector as the round that wrote it left them */
        inv = 1.0 / (tr.lambda * (double)data->n_rows_global);
        for (j = 0; j < tr.d_all; j++) {
            tr.w[j] = tr.v[j] * inv;
        }
        if (tr.shared) {
            memcpy(tr.u, tr.w, (size_t)tr.d_all * sizeof(double));
        }
        for (k = 0; k < tr.nworkers; k++) {
            tr.workers[k].rng = tr.rngs[k];
        }
        ctx.t_start = st_glm_now() - ctx.info.seconds;
        tr.stop     = st_glm_ckpt_stopped(param, &ctx.info, certified);
    }
    st_glm_data_row_sqnorms(data, tr.sqnorm);
    for (i = 0; i < m; i++) {
        tr.sqnorm[i] += (param->bias > 0) ? param->bias * param->bias : 0;
        tr.c[i] = st_glm_example_weight(loss, param, data->y[i]);
    }

    pthread_mutex_lock(&st_glm_train_lock);
    st_glm_ctx = &ctx;
    pthread_barrier_init(&tr.barrier, NULL, (unsigned)tr.nworkers);
    tr.gate = 0;
    for (k = 1; k < tr.nworkers; k++) {
        if (pthread_create(&tr.workers[k].thread, NULL, st_glm_worker_main,
                           &tr.workers[k]) != 0) {
            break;
        }
        started++;
    }
    /* every rank starts its threads, or none trains */
    ok = st_glm_agree(comm, started == tr.nworkers - 1);
    pthread_mutex_lock(&tr.gate_lock);
    tr.gate = ok ? 1 : -1;
    pthread_cond_broadcast(&tr.gate_cond);
    pthread_mutex_unlock(&tr.gate_lock);
    if (ok) {
        st_glm_worker_run(&tr.workers[0]);
    } else {
        st_glm_msg(msg, msg_len, "cannot start %d threads per rank", tr.nworkers);
        status = STRATA_ERR_NO_RESOURCE;
    }
    for (k = 1; k <= started; k++) {
        pthread_join(tr.workers[k].thread, NULL);
    }
    pthread_barrier_destroy(&tr.barrier);
    st_glm_ctx = NULL;
    pthread_mutex_unlock(&st_glm_train_lock);

    if (status == STRATA_OK && tr.ck_status != STRATA_OK) {
        st_glm_msg(msg, msg_len, "%s", tr.ck_msg);
        status = tr.ck_status;
    }
    memcpy(model->w, tr.w, (size_t)tr.d_all * sizeof(double));
    model->info = ctx.info;
    st_glm_trainer_free(&tr);
    return status;
}

/* The serial solver's checkpoints: after every checkpoint_every-th epoch, w. */
typedef struct {
    st_glm_ckpt_t     ck;
    strata_glm_info_t info;     /* as loaded (rounds 0 when not resuming) */
    int               done;     /* epochs before this run */
    int               failed;   /* a checkpoint failed (its message is in msg) */
    double            t0;
    char             *msg;
    size_t            msg_len;
} st_glm_serial_ckpt_t;

static st_status_t st_glm_serial_epoch_done(void *arg, int epoch, const double *w,
                                            const st_glm_objectives_t *obj)
{
    st_glm_serial_ckpt_t *sc = arg;
    strata_glm_info_t info;
    strata_status_t status;

    if (!st_glm_ckpt_due(&sc->ck, sc->done + epoch)) {
        return ST_OK;
    }
    memset(&info, 0, sizeof(info));
    info.rounds  = sc->done + epoch;
    info.primal  = obj->primal;
    info.dual    = obj->dual;
    info.gap     = obj->gap;
    info.seconds = sc->info.seconds + st_glm_now() - sc->t0;
    sc->ck.sec[1].buf = (void*)(uintptr_t)w;   /* only read by the save */
    status = st_glm_ckpt_save(&sc->ck, &info, 1, sc->msg, sc->msg_len);
    sc->failed = (status != STRATA_OK);
    return status;
}

/* The L1 models on one rank: the serial reference solver, on a double copy of the
 * rows with the bias column appended. */
static strata_status_t st_glm_train_serial(const st_glm_model_t *loss,
                                           const strata_glm_problem_t *prob,
                                           const strata_glm_param_t *param, MPI_Comm comm,
                                           char *msg, size_t msg_len,
                                           strata_glm_model_t *model)
{
    const st_glm_data_t *data = prob->data;
    int64_t n = data->n_rows, nb = (param->bias > 0), i, k, o = 0;
    st_glm_serial_problem_t sp;
    st_glm_serial_params_t sparam;
    st_glm_serial_hooks_t hooks;
    st_glm_serial_ckpt_t sc;
    st_glm_objectives_t *trace = NULL;
    int64_t *indptr = NULL;
    uint32_t *indices = NULL;
    double *values = NULL, *c = NULL;
    const char *why;
    int epochs = 0, certified = 0;
    double t0 = st_glm_now();
    st_status_t status;

    /* the checkpoint: w (into model->w when resuming) */
    memset(&sc, 0, sizeof(sc));
    memset(&hooks, 0, sizeof(hooks));
    status = st_glm_ckpt_init(&sc.ck, ST_GLM_CKPT_SERIAL, loss, prob, param, comm, msg,
                              msg_len);
    if (status != STRATA_OK) {
        return status;
    }
    if (sc.ck.path != NULL) {
        st_glm_ckpt_entry(&sc.ck, 0, n, 1, 0);
        st_glm_ckpt_add(&sc.ck, "weights", model->w, data->n_cols + nb, 0, data->n_cols + nb,
                        0, data->n_cols + nb);
        sc.t0         = t0;
        sc.msg        = msg;
        sc.msg_len    = msg_len;
        hooks.epoch_done = st_glm_serial_epoch_done;
        hooks.arg        = &sc;
    }
    if (param->resume) {
        status = st_glm_ckpt_load(&sc.ck, &sc.info, &certified, msg, msg_len);
        if (status != STRATA_OK) {
            return status;
        }
        sc.done  = sc.info.rounds;
        hooks.w0 = model->w;
        t0      -= sc.info.seconds;
    }

    indptr  = malloc(((size_t)n + 1) * sizeof(*indptr));
    indices = malloc(((size_t)data->nnz + (size_t)n * nb + 1) * sizeof(*indices));
    values  = malloc(((size_t)data->nnz + (size_t)n * nb + 1) * sizeof(*values));
    c       = malloc(((size_t)n + 1) * sizeof(*c));
    trace   = malloc(((size_t)ST_MAX(param->max_rounds - sc.done, 0) + 1) * sizeof(*trace));
    if (!indptr || !indices || !values || !c || !trace) {
        st_glm_msg(msg, msg_len, "out of memory");
        status = STRATA_ERR_NO_MEMORY;
        goto out;
    }
    for (i = 0; i < n; i++) {
        indptr[i] = o;
        for (k = data->indptr[i]; k < data->indptr[i + 1]; k++, o++) {
            indices[o] = data->indices[k];
            values[o]  = (data->prec == 32) ? (double)data->val32[k] : data->val64[k];
        }
        if (nb) {
            indices[o]  = (uint32_t)data->n_cols;
            values[o++] = param->bias;
        }
        c[i] = st_glm_example_weight(loss, param, data->y[i]);
    }
    indptr[n]         = o;
    sp.n              = n;
    sp.d              = data->n_cols + nb;
    sp.indptr         = indptr;
    sp.indices        = indices;
    sp.values         = values;
    sp.y              = data->y;
    sp.weights        = c;
    sparam.lambda     = param->lambda;
    sparam.eta        = param->eta;
    sparam.max_epochs = ST_MAX(param->max_rounds - sc.done, 0);
    sparam.tol        = param->tol;
    sparam.shuffle    = 1;
    sparam.seed       = param->seed;
    if ((why = st_glm_serial_check(loss, &sp, &sparam)) != NULL) {
        st_glm_msg(msg, msg_len, "%s", why);
        status = STRATA_ERR_INVALID_PARAM;
        goto out;
    }
    status = st_glm_serial_train_hooked(loss, &sp, &sparam, &hooks, model->w, NULL, trace,
                                        &epochs);
    if (sc.failed) {
        goto out;   /* its message is in msg */
    }
    if (status != ST_OK) {
        st_glm_msg(msg, msg_len, "training failed: %s", strata_status_string(status));
        goto out;
    }
    for (k = 1; k <= epochs && param->verbose; k++) {
        st_glm_print("epoch %4lld  primal %.10e  dual %.10e  gap %.3e\n",
                     (long long)(sc.done + k), trace[k].primal, trace[k].dual, trace[k].gap);
    }
    model->info.rounds    = sc.done + epochs;
    model->info.primal    = trace[epochs].primal;
    model->info.dual      = trace[epochs].dual;
    model->info.gap       = trace[epochs].gap;
    model->info.converged = trace[epochs].gap <= param->tol * fabs(trace[epochs].primal);
    model->info.seconds   = st_glm_now() - t0;
out:
    free(indptr);
    free(indices);
    free(values);
    free(c);
    free(trace);
    return status;
}

ST_EXPORT strata_status_t strata_glm_train(const strata_glm_problem_t *prob,
                                           const strata_glm_param_t *param, MPI_Comm comm,
                                           char *msg, size_t msg_len,
                                           strata_glm_model_t **model_p)
{
    const st_glm_model_t *loss;
    strata_glm_model_t *model;
    strata_status_t status;
    const char *why;
    char err[256];
    int rank, nranks;

    if (prob == NULL || model_p == NULL) {
        st_glm_msg(msg, msg_len, "no problem or no model pointer");
        return STRATA_ERR_INVALID_PARAM;
    }
    if ((why = strata_glm_check_param(param)) != NULL) {
        st_glm_msg(msg, msg_len, "%s", why);
        return STRATA_ERR_INVALID_PARAM;
    }
    loss = st_glm_model_lookup(param->solver, err, sizeof(err));
    if (loss->classification == prob->regression) {
        st_glm_msg(msg, msg_len, "%s is a %s model, but the data were read for %s", loss->name,
                   loss->classification ? "classification" : "regression",
                   prob->regression ? "regression" : "classification");
        return STRATA_ERR_INVALID_PARAM;
    }
    if (prob->data->n_rows_global == 0) {
        st_glm_msg(msg, msg_len, "no training examples");
        return STRATA_ERR_INVALID_PARAM;
    }
    st_glm_comm_shape(comm, &rank, &nranks);
    model = st_glm_model_new(loss, prob->data->n_cols, param->bias > 0 ? param->bias : -1);
    if (model == NULL) {
        st_glm_msg(msg, msg_len, "out of memory");
        return STRATA_ERR_NO_MEMORY;
    }
    model->lambda = param->lambda;
    model->eta    = st_glm_model_eta(loss, param->eta);
    status = (loss->form == ST_GLM_FORM_DUAL)
                     ? st_glm_train_dual(loss, prob, param, comm, msg, msg_len, model)
             : (nranks == 1) ? st_glm_train_serial(loss, prob, param, comm, msg, msg_len, model)
                             : st_glm_train_primal(loss, prob, param, comm, msg, msg_len, model);
    if (status != STRATA_OK) {
        free(model->w);
        free(model);
        return status;
    }
    *model_p = model;
    return STRATA_OK;
}
