/*
 * Training: stochastic dual coordinate ascent on each rank, CoCoA+ across ranks.
 *
 * The L2-regularized models (logistic, svm, sqsvm, ridge, svr, sqsvr) are solved in the
 * dual (solver/MODELS.md 2-3):
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
 * After every round (or every gap_every rounds, or, auto, when the gap's fall so far
 * says it may have reached tol) the gap P(w) - D(alpha), computed
 * from fresh margins x_i . w and two summed scalars, is the stopping certificate
 * (relative tolerance), as in Snap ML. By default threads hold replicas merged once
 * per round (as SySCD does): the result does not depend on thread timing, so a run
 * can be repeated bit for bit. With thread_mode shared, a rank's threads update one
 * vector with atomic adds instead (PASSCoDe-Atomic), taking their rows from one
 * random order of all the rank's rows, and count as one CoCoA+ worker: more
 * progress per round, results that depend on timing. Each thread adds up its
 * updates of the ST_GLM_HOT most frequent columns (and the bias) on its own and
 * into the vector every ST_GLM_HOT_ROWS rows: those columns are in most rows, where
 * a compare-and-swap per entry would have both cores take turns at their cache
 * lines at every row. The trainer sees the columns relabelled by frequency
 * (solver/st_glm_order.c) when the vector is large, and always in shared mode, so
 * the hot columns are 0 .. ST_GLM_HOT-1.
 *
 * The L1 models (lasso, l1-logistic, elastic net, l1-sqsvm) are primal problems: on one rank
 * the serial reference solver (solver/st_glm_model_serial.c) trains them, across
 * ranks ProxCoCoA+ over a partition of the features (solver/st_glm_train_primal.c).
 */
#include "config.h"

#include "st_glm.h"
#include "st_glm_mem.h"
#include "st_glm_gpu.h"
#include "st_glm_order.h"
#include "st_glm_perm.h"
#include "st_glm_steps.h"

#include <dlfcn.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

/* ---- output ---- */

/* atomic: set from any thread, also while another one trains (before: a plain pointer,
 * a data race ThreadSanitizer reported) */
typedef void (*st_glm_print_fn_t)(const char *line);
static _Atomic(st_glm_print_fn_t) st_glm_print_fn;

ST_EXPORT void strata_glm_set_print_function(void (*fn)(const char *line))
{
    atomic_store_explicit(&st_glm_print_fn, fn, memory_order_release);
}

void st_glm_print(const char *fmt, ...)
{
    st_glm_print_fn_t fn = atomic_load_explicit(&st_glm_print_fn, memory_order_acquire);
    char line[1024];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    if (fn != NULL) {
        fn(line);
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
    int size = 1;

    *rank_p = 0;
    if (comm != MPI_COMM_NULL) {
        MPI_Comm_rank(comm, rank_p);
        MPI_Comm_size(comm, &size);
    }
    if (size_p != NULL) {
        *size_p = size;
    }
}

/* (st_glm.h) */
strata_status_t st_glm_mpi_leave(strata_status_t status, char *msg, size_t msg_len)
{
    char what[MPI_MAX_ERROR_STRING];
    int err = st_glm_mpi_exit(), len = 0;

    if (err == MPI_SUCCESS) {
        return status;
    }
    if (MPI_Error_string(err, what, &len) != MPI_SUCCESS) {
        snprintf(what, sizeof(what), "MPI error %d", err);
    }
    st_glm_msg(msg, msg_len, "an MPI call on the communicator failed (%s); its error handler "
               "returned, so this call did", what);
    return STRATA_ERR_MPI;
}

/* In-place allreduce of @a count elements, in pieces an int can count. */
void st_glm_allreduce(MPI_Comm comm, void *buf, int64_t count, MPI_Datatype type, MPI_Op op)
{
    const int64_t piece = (int64_t)1 << 30;
    int64_t off, n;
    int esize;

    if (comm == MPI_COMM_NULL || st_glm_mpi_failed()) {
        return;
    }
    MPI_Type_size(type, &esize);
    for (off = 0; off < count && !st_glm_mpi_failed(); off += n) {
        n = ST_MIN(piece, count - off);
        st_glm_mpi_note(MPI_Allreduce(MPI_IN_PLACE, (char*)buf + off * esize, (int)n, type, op,
                                      comm));
    }
}

int st_glm_weighted(const strata_glm_param_t *param)
{
    return param->weight_pos != 1 || param->weight_neg != 1;
}

int st_glm_agree(MPI_Comm comm, int ok)
{
    st_glm_allreduce(comm, &ok, 1, MPI_INT, MPI_MIN);
    return ok && !st_glm_mpi_failed();
}

int st_glm_words_differ(MPI_Comm comm, const uint64_t *mine, int n)
{
    uint64_t h[2 * ST_GLM_WORDS_MAX];
    int k;

    n = ST_MIN(n, ST_GLM_WORDS_MAX);
    for (k = 0; k < n; k++) {
        h[k]     = mine[k];
        h[n + k] = ~mine[k];
    }
    st_glm_allreduce(comm, h, 2 * n, MPI_UINT64_T, MPI_MAX);
    for (k = 0; k < n; k++) {
        if (h[k] != mine[k] || h[n + k] != ~mine[k]) {
            return k;
        }
    }
    return -1;
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

/* (beside st_glm_model_new: the trainer frees what it made on an error) */
ST_EXPORT void strata_glm_model_free(strata_glm_model_t *model)
{
    if (model == NULL) {
        return;
    }
    free(model->w);
    free(model->labels);
    free(model);
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
    param->method       = STRATA_GLM_METHOD_AUTO;
    param->epsilon      = 0.1;
}

/* Why the primal methods (lbfgs, newton: @a name) cannot train @a loss with @a param,
 * or NULL when they can (such a method refused, method auto choosing CD). */
static const char *st_glm_primal_refusal(const st_glm_model_t *loss,
                                         const strata_glm_param_t *param, const char *name)
{
    static __thread char why[128];

    if (loss->form != ST_GLM_FORM_DUAL || !isfinite(loss->smoothness)) {
        snprintf(why, sizeof(why), "method %s needs a smooth L2 model (logistic, sqsvm, "
                 "ridge, sqsvr)", name);
        return why;
    }
    if (param->checkpoint_every > 0 || param->resume || param->hierarchical) {
        snprintf(why, sizeof(why), "method %s has no checkpoints or hierarchical schedule",
                 name);
        return why;
    }
    /* --gpu: newton's passes run there; auto stays with the GPU's coordinate descent */
    if (param->gpu && strcmp(name, "newton") != 0) {
        snprintf(why, sizeof(why), "method %s has no GPU solver (--gpu: method cd or newton)",
                 name);
        return why;
    }
    if (param->gpu && param->gpu_rows > 0) {
        snprintf(why, sizeof(why), "gpu_rows (--gpu-rows) applies to the GPU's coordinate "
                 "descent (method cd), not to method %s", name);
        return why;
    }
    return NULL;
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
    if ((why = st_glm_model_check(model, param->lambda, param->eta, param->epsilon)) != NULL) {
        return why;
    }
    if (!(param->tol >= 0) || !isfinite(param->tol)) {
        return "tol (-e) must be a finite number >= 0";
    }
    if (param->max_rounds < 1) {
        return "max_rounds (-r) must be >= 1";
    }
    if (param->gap_every < 0 && param->gap_every != STRATA_GLM_GAP_AUTO) {
        return "gap_every (--gap-every) must be >= 1 (0 is taken for 1) or STRATA_GLM_GAP_AUTO";
    }
    if (param->local_epochs < 1 || param->local_epochs > 1000) {
        return "local_epochs (-E) must be in [1, 1000]";
    }
    if (param->threads < 1 || param->threads > 1024) {
        return "threads (-t) must be in [1, 1024]";
    }
    if (param->thread_mode != STRATA_GLM_THREADS_REPLICAS &&
        param->thread_mode != STRATA_GLM_THREADS_SHARED) {
        return "thread_mode must be STRATA_GLM_THREADS_REPLICAS or STRATA_GLM_THREADS_SHARED";
    }
    if (param->feature_order != STRATA_GLM_ORDER_AUTO &&
        param->feature_order != STRATA_GLM_ORDER_FREQUENCY &&
        param->feature_order != STRATA_GLM_ORDER_GIVEN) {
        return "feature_order must be STRATA_GLM_ORDER_AUTO, _FREQUENCY or _GIVEN";
    }
    if (!isfinite(param->bias)) {
        return "bias (-B) must be finite";
    }
    if (!(param->weight_pos > 0) || !(param->weight_neg > 0) || !isfinite(param->weight_pos) ||
        !isfinite(param->weight_neg)) {
        return "class weights (--weight-pos, --weight-neg) must be finite and > 0";
    }
    if (param->checkpoint_every < 0) {
        return "checkpoint_every (--checkpoint-every) must be >= 0 (0: no checkpoints)";
    }
    if (param->resume != 0 && param->resume != 1) {
        return "resume must be 0 or 1";
    }
    if (param->hierarchical != 0 && param->hierarchical != 1) {
        return "hierarchical must be 0 or 1";
    }
    if (param->hierarchical && model->form != ST_GLM_FORM_DUAL) {
        return "hierarchical (--hierarchical) applies to the L2 models (logistic, svm, sqsvm, "
               "ridge, svr, sqsvr), method cd";
    }
    if (param->gpu != 0 && param->gpu != 1) {
        return "gpu must be 0 or 1";
    }
    if (param->gpu && model->form != ST_GLM_FORM_DUAL) {
        return "gpu (--gpu) applies to the L2 models (logistic, svm, sqsvm, ridge, svr, "
               "sqsvr), method cd or newton";
    }
    if (param->gpu_mem < 0) {
        return "gpu_mem (--gpu-mem) must be >= 0 (0: the GPU's free memory)";
    }
    if (param->gpu_rows < 0 || param->gpu_rows > 65535) {
        return "gpu_rows (--gpu-rows) must be in [1, 65535] (0: the default)";
    }
    if (param->inner_rounds < 0 || param->inner_rounds > 100000) {
        return "inner_rounds (--inner-rounds) must be in [1, 100000] (0: chosen from measured "
               "costs)";
    }
    if ((param->checkpoint_every > 0 || param->resume) &&
        (param->checkpoint == NULL || param->checkpoint[0] == '\0')) {
        return "checkpoint_every and resume need a checkpoint file (checkpoint)";
    }
    if (param->method != STRATA_GLM_METHOD_CD && param->method != STRATA_GLM_METHOD_LBFGS &&
        param->method != STRATA_GLM_METHOD_AUTO && param->method != STRATA_GLM_METHOD_NEWTON) {
        return "method must be STRATA_GLM_METHOD_CD, _LBFGS, _NEWTON or _AUTO";
    }
    /* the L1 models' newton is their block proximal Newton (st_glm_train_primal.c) */
    if (param->method == STRATA_GLM_METHOD_LBFGS ||
        (param->method == STRATA_GLM_METHOD_NEWTON && model->form == ST_GLM_FORM_DUAL)) {
        return st_glm_primal_refusal(model, param,
                                     param->method == STRATA_GLM_METHOD_LBFGS ? "lbfgs"
                                                                              : "newton");
    }
    return NULL;
}

/* ---- problems ---- */

ST_EXPORT strata_status_t strata_glm_problem_read(const char *path, int regression,
                                                  MPI_Comm comm, char *msg, size_t msg_len,
                                                  strata_glm_problem_t **prob_p)
{
    return strata_glm_problem_read_prec(path, regression, 0, comm, msg, msg_len, prob_p);
}

/* Are the @a n arguments at @a args of a call making a problem the same on every rank
 * of @a comm (collective)? Before any check of them: a rank refusing its own alone left
 * the others waiting in the next sum; a regression flag of one rank's own took it into
 * the classes' sums alone (MPI_ERR_TRUNCATE's abort). */
static int st_glm_args_alike(MPI_Comm comm, const double *args, int n)
{
    return st_glm_param_alike(NULL, args, n, comm) == NULL;
}

static strata_status_t st_glm_problem_read_prec_body(const char *path, int regression,
                                                     int prec, MPI_Comm comm, char *msg,
                                                     size_t msg_len,
                                                     strata_glm_problem_t **prob_p)
{
    st_glm_data_opts_t opts;
    strata_glm_problem_t *prob;
    st_glm_data_t *data = NULL;
    st_status_t status;
    st_glm_comm_t c;

    if ((status = st_glm_comm_init(comm, &c)) != ST_OK) {
        return st_glm_comm_refused(status, msg, msg_len);
    }
    if (!st_glm_args_alike(c.comm, (const double[]){path != NULL, prob_p != NULL,
                                                    regression != 0, prec}, 4)) {
        st_glm_msg(msg, msg_len, "the arguments are not the same on every rank: regression, "
                   "prec, or a NULL path or result pointer");
        return STRATA_ERR_INVALID_PARAM;
    }
    if (path == NULL || prob_p == NULL) {
        st_glm_msg(msg, msg_len, "%s", path == NULL ? "no file name"
                                                    : "no result pointer (prob_p is NULL)");
        return STRATA_ERR_INVALID_PARAM;
    }
    if (prec != 0 && prec != 32 && prec != 64) {
        st_glm_msg(msg, msg_len, "precision %d: the values are held in 32 or 64 bits", prec);
        return STRATA_ERR_INVALID_PARAM;
    }
    st_glm_data_opts_init(&opts);
    opts.label_kind = regression ? ST_GLM_LABEL_REAL : ST_GLM_LABEL_MULTI;
    opts.prec       = prec;
    status = st_glm_data_load(path, &opts, comm, msg, msg_len, &data);
    if (status != ST_OK) {
        return status;
    }
    prob = calloc(1, sizeof(*prob));
    if (prob != NULL) {
        prob->data       = data;
        prob->regression = (regression != 0);   /* (2 is true too: compared with models') */
    }
    if (!st_glm_agree(comm, prob != NULL) ||
        (!regression && st_glm_problem_classify(prob, comm) != ST_OK)) {
        strata_glm_problem_free(prob);
        if (prob == NULL) {
            st_glm_data_free(data);
        }
        st_glm_msg(msg, msg_len, "out of memory");
        return STRATA_ERR_NO_MEMORY;
    }
    *prob_p = prob;
    return STRATA_OK;
}

ST_EXPORT strata_status_t strata_glm_problem_read_prec(const char *path, int regression,
                                                       int prec, MPI_Comm comm, char *msg,
                                                       size_t msg_len,
                                                       strata_glm_problem_t **prob_p)
{
    strata_glm_problem_t *prob = NULL;
    strata_status_t status;

    st_glm_mpi_enter();
    status = st_glm_problem_read_prec_body(path, regression, prec, comm, msg, msg_len,
                                           prob_p == NULL ? NULL : &prob);
    status = st_glm_mpi_leave(status, msg, msg_len);
    if (status != STRATA_OK) {
        strata_glm_problem_free(prob);
        return status;
    }
    *prob_p = prob;
    return STRATA_OK;
}

static strata_status_t st_glm_problem_create_body(int64_t n_rows, int64_t n_cols,
                                                  const int64_t *indptr,
                                                  const uint32_t *indices,
                                                  const double *values, const double *y,
                                                  int regression, MPI_Comm comm, char *msg,
                                                  size_t msg_len,
                                                  strata_glm_problem_t **prob_p)
{
    int64_t nnz, r, k;
    strata_glm_problem_t *prob = NULL;
    st_glm_data_t *data = NULL;
    st_status_t status;
    st_glm_comm_t c;
    int ok = 1;

    if ((status = st_glm_comm_init(comm, &c)) != ST_OK) {
        return st_glm_comm_refused(status, msg, msg_len);
    }
    if (!st_glm_args_alike(c.comm, (const double[]){regression != 0}, 1)) {
        st_glm_msg(msg, msg_len, "the arguments are not the same on every rank: regression");
        return STRATA_ERR_INVALID_PARAM;
    }
    nnz = (n_rows >= 0 && indptr != NULL) ? indptr[n_rows] : -1;
    if (n_rows < 0 || n_cols < 0 || nnz < 0 || prob_p == NULL || (n_rows > 0 && y == NULL) ||
        (nnz > 0 && (indices == NULL || values == NULL))) {
        st_glm_msg(msg, msg_len, "invalid CSR arguments");
        ok = 0;
    }
    /* the row offsets first: from 0, never decreasing (so every row's entries lie
     * within the nnz given) */
    if (ok && indptr[0] != 0) {
        st_glm_msg(msg, msg_len, "invalid CSR arguments: indptr[0] is %lld, not 0",
                   (long long)indptr[0]);
        ok = 0;
    }
    for (r = 0; ok && r < n_rows; r++) {
        if (indptr[r + 1] < indptr[r]) {
            st_glm_msg(msg, msg_len, "row %lld: indptr decreases (%lld, then %lld)",
                       (long long)r, (long long)indptr[r], (long long)indptr[r + 1]);
            ok = 0;
        }
    }
    for (r = 0; ok && r < n_rows; r++) {
        for (k = indptr[r]; ok && k < indptr[r + 1]; k++) {
            if ((int64_t)indices[k] >= n_cols ||
                (k > indptr[r] && indices[k] <= indices[k - 1]) || !isfinite(values[k])) {
                st_glm_msg(msg, msg_len, "row %lld: indices must be increasing and < n_cols, "
                           "values finite", (long long)r);
                ok = 0;
            }
        }
        if (ok && (regression ? !isfinite(y[r]) : !st_glm_data_class_name(y[r]))) {
            st_glm_msg(msg, msg_len, "row %lld: label %g (%s)", (long long)r, y[r],
                       regression ? "not finite" : "classification labels name classes: "
                       "integers below 2^31 in magnitude");
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
    for (r = 0; r < n_rows; r++) {
        data->y[r] = y[r] + 0.0;   /* (-0 is the class 0) */
    }
    data->label_kind = regression ? ST_GLM_LABEL_REAL : ST_GLM_LABEL_MULTI;
    st_glm_data_set_global(data, comm);
    st_glm_allreduce(comm, &n_cols, 1, MPI_INT64_T, MPI_MAX);
    data->n_cols        = n_cols;
    prob->data          = data;
    prob->regression    = (regression != 0);
    if (!regression && st_glm_problem_classify(prob, comm) != ST_OK) {
        strata_glm_problem_free(prob);
        st_glm_msg(msg, msg_len, "out of memory");
        return STRATA_ERR_NO_MEMORY;
    }
    *prob_p             = prob;
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
    strata_glm_problem_t *prob = NULL;
    strata_status_t status;

    st_glm_mpi_enter();
    status = st_glm_problem_create_body(n_rows, n_cols, indptr, indices, values, y, regression,
                                        comm, msg, msg_len, prob_p == NULL ? NULL : &prob);
    status = st_glm_mpi_leave(status, msg, msg_len);
    if (status != STRATA_OK) {
        strata_glm_problem_free(prob);
        return status;
    }
    *prob_p = prob;
    return STRATA_OK;
}

ST_EXPORT int64_t strata_glm_problem_rows(const strata_glm_problem_t *prob)
{
    return (prob != NULL && prob->data != NULL) ? prob->data->n_rows : 0;
}

ST_EXPORT int64_t strata_glm_problem_rows_global(const strata_glm_problem_t *prob)
{
    return (prob != NULL && prob->data != NULL) ? prob->data->n_rows_global : 0;
}

ST_EXPORT int64_t strata_glm_problem_cols(const strata_glm_problem_t *prob)
{
    return (prob != NULL && prob->data != NULL) ? prob->data->n_cols : 0;
}

ST_EXPORT int strata_glm_problem_prec(const strata_glm_problem_t *prob)
{
    return (prob != NULL && prob->data != NULL) ? prob->data->prec : 0;
}

/* (st_glm.h) Before: "MPI is not initialized" whatever the reason (a zeroed handle
 * under MPI_ERRORS_RETURN, MPI_Comm_size failing, said so too). */
strata_status_t st_glm_comm_refused(st_status_t status, char *msg, size_t msg_len)
{
    if (status == ST_ERR_NOT_INITIALIZED) {
        st_glm_msg(msg, msg_len, "MPI is not initialized (or already finalized) for the "
                   "communicator given; MPI_COMM_NULL works without MPI");
    } else if (status == ST_ERR_UNSUPPORTED) {
        st_glm_msg(msg, msg_len, "the communicator given is an intercommunicator: the "
                   "collective functions take an intracommunicator (or MPI_COMM_NULL)");
    } else {
        st_glm_msg(msg, msg_len, "the communicator given is not valid (MPI_Comm_size or "
                   "MPI_Comm_rank failed on it)");
    }
    return (strata_status_t)status;
}

/* (st_glm.h) Else a rank would train on its own rows while counting everyone's
 * (before: STRATA_OK, and a different wrong model on every rank, for MPI_COMM_SELF or
 * MPI_COMM_NULL). */
strata_status_t st_glm_problem_on(const strata_glm_problem_t *prob, MPI_Comm comm, char *msg,
                                  size_t msg_len)
{
    st_status_t status;
    st_glm_comm_t c;
    int64_t rows;

    if ((status = st_glm_comm_init(comm, &c)) != ST_OK) {
        return st_glm_comm_refused(status, msg, msg_len);
    }
    rows = prob->data->n_rows;
    st_glm_allreduce(c.comm, &rows, 1, MPI_INT64_T, MPI_SUM);
    if (!st_glm_agree(c.comm, rows == prob->data->n_rows_global)) {
        st_glm_msg(msg, msg_len, "the problem was read or made on another communicator: "
                   "its ranks hold %lld rows, these ranks %lld of them",
                   (long long)prob->data->n_rows_global, (long long)rows);
        return STRATA_ERR_INVALID_PARAM;
    }
    return STRATA_OK;
}

static strata_status_t st_glm_problem_classes_body(const strata_glm_problem_t *prob,
                                                   MPI_Comm comm, int64_t counts_p[2],
                                                   int *zero_one_p)
{
    st_glm_label_stats_t stats;
    st_status_t status;

    if (prob == NULL || prob->data == NULL || counts_p == NULL || prob->regression) {
        return STRATA_ERR_INVALID_PARAM;
    }
    if (prob->named) {
        return STRATA_ERR_UNSUPPORTED;   /* (strata_glm_problem_labels) */
    }
    if ((status = st_glm_problem_on(prob, comm, NULL, 0)) != STRATA_OK) {
        return status;
    }
    status = st_glm_data_label_stats(prob->data, comm, &stats);
    if (status != ST_OK) {
        return (strata_status_t)status;
    }
    counts_p[0] = stats.n_pos;
    counts_p[1] = stats.n_neg;
    if (zero_one_p != NULL) {
        *zero_one_p = prob->data->zero_one;
    }
    return STRATA_OK;
}

ST_EXPORT strata_status_t strata_glm_problem_classes(const strata_glm_problem_t *prob,
                                                     MPI_Comm comm, int64_t counts_p[2],
                                                     int *zero_one_p)
{
    st_glm_mpi_enter();
    return st_glm_mpi_leave(st_glm_problem_classes_body(prob, comm, counts_p, zero_one_p), NULL,
                            0);
}

ST_EXPORT strata_status_t strata_glm_problem_set_class_weights(strata_glm_problem_t *prob,
                                                              int count, const double *labels,
                                                              const double *weights,
                                                              int *found_p, char *msg,
                                                              size_t msg_len)
{
    int i, c, found = 0;

    if (prob == NULL || prob->data == NULL || prob->regression || count < 0 ||
        (count > 0 && (labels == NULL || weights == NULL))) {
        st_glm_msg(msg, msg_len, "class weights: no classification problem, or no labels "
                   "or weights");
        return STRATA_ERR_INVALID_PARAM;
    }
    for (i = 0; i < count; i++) {
        if (!(weights[i] > 0) || !isfinite(weights[i])) {
            st_glm_msg(msg, msg_len, "the weight of class %.17g is %g: class weights are "
                       "positive and finite", labels[i], weights[i]);
            return STRATA_ERR_INVALID_PARAM;
        }
    }
    if (prob->class_weight == NULL && prob->nr_class > 0) {
        prob->class_weight = malloc((size_t)prob->nr_class * sizeof(double));
        if (prob->class_weight == NULL) {
            st_glm_msg(msg, msg_len, "out of memory");
            return STRATA_ERR_NO_MEMORY;
        }
        for (c = 0; c < prob->nr_class; c++) {
            prob->class_weight[c] = 1.0;
        }
    }
    for (i = 0; i < count; i++) {
        for (c = 0; c < prob->nr_class; c++) {
            if (prob->classes[c] == labels[i]) {
                prob->class_weight[c] = weights[i];
                found++;
                break;
            }
        }
    }
    if (found_p != NULL) {
        *found_p = found;
    }
    return STRATA_OK;
}

ST_EXPORT int strata_glm_problem_labels(const strata_glm_problem_t *prob, double *labels)
{
    if (prob == NULL || prob->data == NULL || prob->regression) {
        return 0;
    }
    if (labels != NULL && prob->nr_class > 0) {
        memcpy(labels, prob->classes, (size_t)prob->nr_class * sizeof(double));
    }
    return prob->nr_class;
}

ST_EXPORT void strata_glm_problem_free(strata_glm_problem_t *prob)
{
    if (prob != NULL && prob->view) {
        st_glm_problem_view_free(prob);
    } else if (prob != NULL) {
        st_glm_data_free(prob->data);
        free(prob->classes);
        free(prob->class_weight);
        free(prob->colsq);
        free(prob);
    }
}

/* ---- the dual trainer ---- */

typedef struct st_glm_trainer st_glm_trainer_t;

/* Shared mode: the hot columns (training columns 0 .. nhot-1 of the relabelled
 * vector, at most ST_GLM_HOT, and the bias) that a thread adds up on its own and
 * adds to the shared vector every ST_GLM_HOT_ROWS rows (st_glm_sdca_rows). On the
 * Criteo-like data 1024 columns hold 77 % of the nonzeros; 1024 / 64 reached 1e-3
 * in the same rounds as 64 / 16, in 0.86 of the time (bench/RESULTS.md). */
#define ST_GLM_HOT      1024
#define ST_GLM_HOT_ROWS 64

/* A worker (a thread of the rank), cache-line aligned in their array: what a thread
 * writes at every row (hot, since) shares no line with another worker's fields. */
typedef struct {
    st_glm_trainer_t *tr;
    int               id;
    pthread_t         thread;
    int64_t           lo, hi;      /* my rows */
    int64_t          *perm;        /* my rows, in this epoch's order (in tr->perm) */
    double           *u;           /* my view of w, d_all entries */
    uint64_t          rng;
    double            sums[2];     /* loss, neg_conj of my rows (gap pass) */
    double            hot[ST_GLM_HOT + 1]; /* shared mode: my updates of the hot
                                             * columns not yet in u, then the bias's */
    int               since;       /* shared mode: rows since they went to u */
} __attribute__((aligned(ST_CACHE_LINE))) st_glm_worker_t;

/*
 * Hierarchical CoCoA+ (Snap ML's scheme: Duenner, Parnell, Sarigiannis, Ioannou,
 * Anghel, Ravi, Kandasamy, Pozidis, "Snap ML: A Hierarchical Framework for Machine
 * Learning", NeurIPS 2018): CoCoA+ across the K_o nodes (sigma'_o = K_o), whose
 * local subproblem each node solves by CoCoA+ across its own K_p workers (sigma'_p =
 * K_p). An outer round is `inner` inner rounds; in each, the workers run their
 * local epochs against their view
 *     u_k = w + (sigma'_o / (lambda n)) dv_node + (sigma'_o sigma'_p / (lambda n)) dv_k
 * (w the model of the last outer round, dv_node the node's updates so far in this
 * outer round, dv_k the worker's in this inner round), and the node adds its
 * workers' dv_k over the node communicator only: dv_node += sum dv_k. The last
 * inner round skips that sum: instead every rank's own updates of the whole outer
 * round (dr) are added over all ranks, v += sum dr, w = v / (lambda n). With one
 * inner round this is flat CoCoA+ (with equal nodes, step for step).
 */
typedef struct {
    int        on;           /* 1: hierarchical (more than one node) */
    MPI_Comm   node;         /* my node's ranks (MPI_COMM_NULL: I am alone on it) */
    int        nodes;        /* K_o */
    double     sigma_o;      /* K_o */
    int        inner;        /* inner rounds per outer round in use */
    int        decided;      /* auto: outer rounds measured so far (inner is fixed
                                after ST_GLM_HIER_MEASURE) */
    double    *vn, *dr;      /* dv_node; my rank's updates of this outer round */
    double     t_comp, t_node;  /* worker 0: this outer round's times */
    double     t_node_avg;      /* the last measured node sum (< 0: none yet) */
    int        n_comp, n_node;
    uint64_t   layout;       /* which ranks share a node: a hash, the same on all */
} st_glm_hier_t;

#define ST_GLM_HIER_FIRST   2    /* auto: inner rounds of the first outer round */
#define ST_GLM_HIER_MEASURE 2    /* auto: outer rounds whose costs choose inner */

/* gap_every auto (worker 0): the last two gaps computed and the round of the next */
typedef struct {
    int    next;      /* the round whose end computes the gap */
    int    n;         /* gaps computed */
    int    r0, r1;    /* their rounds, r1 the last */
    double g0, g1;    /* their relative gaps */
} st_glm_gap_sched_t;

struct st_glm_trainer {
    const st_glm_model_t *loss;
    const st_glm_data_t  *data;
    int64_t               d;       /* features */
    int64_t               d_all;   /* d, + 1 with a bias feature */
    double                bias;
    double                lambda, scale;  /* scale = sigma' / (lambda n) */
    double                eps;     /* the SVR models' epsilon (0 for the others) */
    double               *alpha, *c, *sqnorm;
    int64_t              *perm;    /* the workers' row orders, one after the other;
                                      * shared: one order of all the rows */
    _Atomic int64_t       next_row; /* shared: the next chunk of perm to take */
    uint64_t             *rngs;    /* param->threads: the workers' states, checkpointed */
    double               *w, *v, *dv;
    st_glm_order_t        order;   /* the columns relabelled (order.map), data is order.data */
    double               *vck;     /* relabelled, with a checkpoint: v in the given order */
    double               *u;       /* shared mode: the vector of all my threads */
    st_glm_hier_t         hier;    /* the hierarchical schedule (hier.on 0: flat) */
    st_glm_gap_sched_t    gap;     /* gap_every auto: when the next gap comes */
    int                   shared;  /* the threads update u together (else replicas) */
    int64_t               nhot;    /* shared mode: hot columns (0: none, not relabelled) */
    int                   nworkers, local_epochs;
    int                   solvers;  /* local solvers per rank: the workers, or 1 with a
                                       shared vector or the GPU (whose other workers help
                                       with the merge and the gap only) */
    st_glm_worker_t      *workers;
    st_glm_round_ctx_t   *ctx;     /* the training's rounds (its communicator, info) */
    pthread_barrier_t     barrier;
    int                   stop;    /* set by worker 0 between barriers */
    int                   gpu_failed;  /* a GPU call failed in a training alone (worker 0) */
    int                   mpi_failed;  /* a sum failed (st_glm_mpi_failed; worker 0) */
    int                   uncertified;  /* resumed at the last round from a checkpoint
                                           written without its gap */
    pthread_mutex_t       gate_lock;
    pthread_cond_t        gate_cond;
    int                   gate;    /* 0 wait, 1 run, -1 quit (a rank lacks threads) */
    st_glm_gpu_t         *gpu;     /* param->gpu: the local solver runs there (one worker) */
    double               *z;       /* gpu, 32-bit data in GPU memory: the gap's margins,
                                      computed there */
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

/*
 * x_i . u, and u += a x_i, for both value precisions, the bias feature included.
 * @a hot (shared mode): the thread's pending updates of the hot columns, which its
 * reads add and its updates go to; NULL (a constant at the other calls) for none.
 */
static inline double st_glm_entry(const st_glm_trainer_t *tr, const double *u,
                                  const double *hot, int64_t j, int shared)
{
    double e = st_glm_load(&u[j], shared);

    return (hot != NULL && j < tr->nhot) ? e + hot[j] : e;
}

static inline void st_glm_update(const st_glm_trainer_t *tr, double *u, double *hot,
                                 int64_t j, double a, int shared)
{
    if (hot != NULL && j < tr->nhot) {
        hot[j] += a;
    } else {
        st_glm_add(&u[j], a, shared);
    }
}

static inline double st_glm_dot(const st_glm_trainer_t *tr, int64_t i, const double *u,
                                int shared, const double *hot)
{
    const st_glm_data_t *data = tr->data;
    const uint32_t *idx       = data->indices;
    int64_t k, end = data->indptr[i + 1];
    double s = 0;

    if (data->prec == 32) {
        for (k = data->indptr[i]; k < end; k++) {
            s += (double)data->val32[k] * st_glm_entry(tr, u, hot, idx[k], shared);
        }
    } else {
        for (k = data->indptr[i]; k < end; k++) {
            s += data->val64[k] * st_glm_entry(tr, u, hot, idx[k], shared);
        }
    }
    if (tr->bias > 0) {
        s += tr->bias * (st_glm_load(&u[tr->d], shared) + (hot != NULL ? hot[ST_GLM_HOT] : 0));
    }
    return s;
}

static inline void st_glm_axpy(const st_glm_trainer_t *tr, int64_t i, double a, double *u,
                               int shared, double *hot)
{
    const st_glm_data_t *data = tr->data;
    const uint32_t *idx       = data->indices;
    int64_t k, end = data->indptr[i + 1];

    if (data->prec == 32) {
        for (k = data->indptr[i]; k < end; k++) {
            st_glm_update(tr, u, hot, idx[k], a * (double)data->val32[k], shared);
        }
    } else {
        for (k = data->indptr[i]; k < end; k++) {
            st_glm_update(tr, u, hot, idx[k], a * data->val64[k], shared);
        }
    }
    if (tr->bias > 0) {
        if (hot != NULL) {
            hot[ST_GLM_HOT] += a * tr->bias;
        } else {
            st_glm_add(&u[tr->d], a * tr->bias, shared);
        }
    }
}

/* Shared mode: my pending updates of the hot columns into u. */
static void st_glm_hot_flush(st_glm_worker_t *wk)
{
    st_glm_trainer_t *tr = wk->tr;
    int64_t j;

    for (j = 0; j < tr->nhot; j++) {
        if (wk->hot[j] != 0) {
            st_glm_add(&tr->u[j], wk->hot[j], 1);
            wk->hot[j] = 0;
        }
    }
    if (wk->hot[ST_GLM_HOT] != 0) {
        st_glm_add(&tr->u[tr->d], wk->hot[ST_GLM_HOT], 1);
        wk->hot[ST_GLM_HOT] = 0;
    }
    wk->since = 0;
}

/*
 * Prefetching for the random walk over the rows: the row ST_GLM_AHEAD steps ahead
 * (its indices, values and per-row scalars, through its indptr entry) and the indptr
 * entry of the row twice as far ahead, so that entry is cached when it is read.
 */
#define ST_GLM_AHEAD 8

static inline __attribute__((always_inline)) void st_glm_prefetch_row(const st_glm_trainer_t *tr,
                                                                       int64_t i)
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
static inline __attribute__((always_inline)) void st_glm_prefetch_model(const st_glm_trainer_t *tr,
                                                                         int64_t i, const double *u)
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
        z     = st_glm_dot(tr, i, wk->u, shared, shared ? wk->hot : NULL);
        q     = tr->scale * tr->sqnorm[i];
        delta = tr->loss->dual_step(y[i], tr->c[i], z, q, tr->eps, &tr->alpha[i]);
        if (delta != 0) {
            st_glm_axpy(tr, i, tr->scale * delta, wk->u, shared, shared ? wk->hot : NULL);
        }
        if (shared && ++wk->since >= ST_GLM_HOT_ROWS) {
            st_glm_hot_flush(wk);
        }
    }
}

/* The epoch's order of the rows base .. base + n - 1: the keyed permutation of
 * st_glm_perm.h under a fresh key (the GPU solver computes the same order on the
 * GPU from the same key). */
static void st_glm_epoch_order(int64_t *order, int64_t base, int64_t n, uint64_t *rng)
{
    st_glm_perm_t p;

    st_glm_perm_init(&p, (uint64_t)n, st_glm_rand(rng));
    st_glm_perm_fill(&p, base, order, n);
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
        st_glm_epoch_order(wk->perm, wk->lo, n, &wk->rng);
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
            st_glm_epoch_order(tr->perm, 0, m, &wk->rng);
            atomic_store_explicit(&tr->next_row, 0, memory_order_relaxed);
        }
        pthread_barrier_wait(&tr->barrier);
        while ((at = atomic_fetch_add_explicit(&tr->next_row, ST_GLM_SHARED_CHUNK,
                                               memory_order_relaxed)) < m) {
            st_glm_sdca_rows(wk, tr->perm + at, ST_MIN(ST_GLM_SHARED_CHUNK, m - at), 1);
        }
        st_glm_hot_flush(wk);   /* the epoch's updates all in u before the barrier */
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

static uint64_t st_glm_key_cb(void *rng)
{
    return st_glm_rand((uint64_t*)rng);
}

/* Worker 0: a GPU call failed mid-run. A training alone (MPI_COMM_NULL, or a
 * communicator of one rank) stops after this round's barriers and returns the error;
 * across ranks the others wait for this one in the round's sums, which cannot carry
 * the news: the job ends. */
static void st_glm_gpu_failed(st_glm_trainer_t *tr)
{
    int rank, nranks;

    st_glm_comm_shape(tr->ctx->comm, &rank, &nranks);
    if (nranks == 1) {
        tr->gpu_failed = 1;
        tr->stop       = 1;
        return;
    }
    fprintf(stderr, "strata_glm: rank %d: the GPU solver failed (above); ending the job\n",
            tr->ctx->rank);
    MPI_Abort(tr->ctx->comm, 1);
}

/* The round's local epochs on the GPU (one worker: every row of the rank), with the
 * orders the CPU solver would draw (a key an epoch). */
static void st_glm_local_gpu(st_glm_worker_t *wk)
{
    st_glm_trainer_t *tr = wk->tr;

    if (st_glm_gpu_round(tr->gpu, tr->w, wk->u, tr->alpha, tr->scale, tr->local_epochs,
                         st_glm_key_cb, &wk->rng) != 0) {
        st_glm_gpu_failed(tr);
    }
}

/* My share [lo, hi) of the d_all coordinates. */
static void st_glm_coord_range(const st_glm_trainer_t *tr, int id, int64_t *lo, int64_t *hi)
{
    *lo = tr->d_all * id / tr->nworkers;
    *hi = tr->d_all * (id + 1) / tr->nworkers;
}

/* dv = sum_k (u_k - w) / scale over my share of the coordinates (hierarchical: and
 * dr += dv, my rank's updates of the outer round). */
static void st_glm_merge(st_glm_worker_t *wk)
{
    st_glm_trainer_t *tr = wk->tr;
    int64_t lo, hi, j;
    int k;

    st_glm_coord_range(tr, wk->id, &lo, &hi);
    for (j = lo; j < hi; j++) {
        tr->dv[j] = 0;
    }
    for (k = 0; k < tr->solvers; k++) {
        const double *u = tr->workers[k].u;

        for (j = lo; j < hi; j++) {
            tr->dv[j] += u[j] - tr->w[j];
        }
    }
    for (j = lo; j < hi; j++) {
        tr->dv[j] /= tr->scale;
    }
    if (tr->hier.on) {
        for (j = lo; j < hi; j++) {
            tr->hier.dr[j] += tr->dv[j];
        }
    }
}

/* The end of a round, over my share of the coordinates: v += dv (summed over ranks),
 * w = v / (lambda n). Hierarchical, the end of an outer round: v += dr (summed over
 * ranks), w = v / (lambda n), a fresh outer round; the end of an inner round (@a
 * inner): dv_node += dv (summed over the node), w = (v + sigma'_o dv_node) / (lambda
 * n), the node's view. */
static void st_glm_apply(st_glm_worker_t *wk, int inner)
{
    st_glm_trainer_t *tr = wk->tr;
    st_glm_hier_t *h     = &tr->hier;
    double inv = 1.0 / (tr->lambda * (double)tr->data->n_rows_global);
    int64_t lo, hi, j;

    st_glm_coord_range(tr, wk->id, &lo, &hi);
    if (inner) {
        for (j = lo; j < hi; j++) {
            h->vn[j] += tr->dv[j];
            tr->w[j]  = (tr->v[j] + h->sigma_o * h->vn[j]) * inv;
        }
    } else if (h->on) {
        for (j = lo; j < hi; j++) {
            tr->v[j] += h->dr[j];
            tr->w[j]  = tr->v[j] * inv;
            h->vn[j]  = 0;
            h->dr[j]  = 0;
        }
    } else {
        for (j = lo; j < hi; j++) {
            tr->v[j] += tr->dv[j];
            tr->w[j] = tr->v[j] * inv;
        }
    }
    if (tr->shared) {
        memcpy(&tr->u[lo], &tr->w[lo], (size_t)(hi - lo) * sizeof(double));
    }
}

/* The gap pass over my rows: loss at fresh margins (tr->z's, when the GPU computed
 * them), and the dual terms. */
static void st_glm_gap_pass(st_glm_worker_t *wk)
{
    st_glm_trainer_t *tr = wk->tr;
    const double *y      = tr->data->y;
    double loss = 0, conj = 0;
    int64_t i;

    for (i = wk->lo; i < wk->hi; i++) {
        loss += tr->c[i] * tr->loss->loss(tr->z != NULL ? tr->z[i]
                                                       : st_glm_dot(tr, i, tr->w, 0, NULL),
                                          y[i], tr->eps);
        conj += tr->loss->neg_conj(tr->alpha[i], y[i], tr->c[i], tr->eps);
    }
    wk->sums[0] = loss;
    wk->sums[1] = conj;
}

/* The end of a round (one thread): the stopping test and the progress line. */
int st_glm_converged(const st_glm_round_ctx_t *ctx, const st_glm_objectives_t *obj)
{
    double scale = fabs(obj->primal);

    if (ctx->p0 > 0) {
        scale = fmin(scale, fmax(ctx->p0 - obj->dual, 0.0));
    }
    return obj->gap <= ctx->param->tol * scale;
}

double st_glm_primal_zero(const st_glm_model_t *loss, const st_glm_data_t *data,
                          const double *c, double eps, MPI_Comm comm)
{
    double sum = 0.0;
    int64_t i;

    for (i = 0; i < data->n_rows; i++) {
        sum += c[i] * loss->loss(0.0, data->y[i], eps);
    }
    st_glm_allreduce(comm, &sum, 1, MPI_DOUBLE, MPI_SUM);
    return sum / (double)data->n_rows_global;
}

void st_glm_round_end(st_glm_round_ctx_t *ctx, const st_glm_objectives_t *objp)
{
    st_glm_objectives_t obj = *objp;

    ctx->info.rounds++;
    ctx->info.primal    = obj.primal;
    ctx->info.dual      = obj.dual;
    ctx->info.gap       = ST_MAX(obj.gap, 0.0);
    ctx->info.seconds   = st_glm_now() - ctx->t_start;
    ctx->info.converged = st_glm_converged(ctx, &obj);
    if (ctx->param->verbose && ctx->rank == 0) {
        st_glm_print("round %4d  primal %.10e  dual %.10e  gap %.3e  rel %.3e  "
                     "time %.3f s (allreduce %.3f s)\n", ctx->info.rounds, obj.primal,
                     obj.dual, obj.gap, st_glm_rel_gap(obj.gap, obj.primal),
                     ctx->info.seconds, ctx->info.comm_seconds);
    }
}


/* Worker 0, the others waiting at a barrier: the checkpoint after this round; a
 * failure stops the training. */
/* gap_every auto's schedule in a checkpoint's trainer words, so that a resumed run
 * computes its gaps at the rounds the uninterrupted one would have (and stops at
 * the same round); all zero (an older checkpoint): a gap after the next round */
static void st_glm_gap_sched_save(const st_glm_gap_sched_t *g, uint64_t *w)
{
    w[0] = (uint64_t)(uint32_t)g->next;
    w[1] = (uint64_t)(uint32_t)g->n;
    w[2] = (uint64_t)(uint32_t)g->r0;
    w[3] = (uint64_t)(uint32_t)g->r1;
    memcpy(&w[4], &g->g0, sizeof(double));
    memcpy(&w[5], &g->g1, sizeof(double));
}

static void st_glm_gap_sched_load(st_glm_gap_sched_t *g, const uint64_t *w, int rounds)
{
    memset(g, 0, sizeof(*g));
    g->next = rounds + 1;
    if (w[0] != 0) {
        g->next = (int)(uint32_t)w[0];
        g->n    = (int)(uint32_t)w[1];
        g->r0   = (int)(uint32_t)w[2];
        g->r1   = (int)(uint32_t)w[3];
        memcpy(&g->g0, &w[4], sizeof(double));
        memcpy(&g->g1, &w[5], sizeof(double));
    }
}

static void st_glm_checkpoint(st_glm_trainer_t *tr, st_glm_round_ctx_t *ctx, int certified)
{
    int k;

    for (k = 0; k < tr->nworkers; k++) {
        tr->rngs[k] = tr->workers[k].rng;
    }
    st_glm_gap_sched_save(&tr->gap, tr->ck.state);
    if (tr->vck != NULL) {
        st_glm_order_gather(&tr->order, tr->v, tr->vck, tr->d_all);
    }
    tr->ck_status = st_glm_ckpt_save(&tr->ck, &ctx->info, certified, tr->ck_msg,
                                     sizeof(tr->ck_msg));
    if (tr->ck_status != STRATA_OK) {
        tr->stop = 1;
    }
}

/*
 * Worker 0, after an outer round's sum over all ranks: with inner_rounds 0 (auto),
 * after each of the first ST_GLM_HIER_MEASURE outer rounds, choose the inner rounds
 * H from this round's costs, agreed over the ranks (so every rank chooses alike): tau =
 * t_local + t_node per inner round (a local round's epochs and merge, the node's
 * sum), T = the sum over all ranks. An outer round takes H tau + T. The outer rounds
 * to reach a gap, R(H), fell like R_inf + c / H in our runs (bench/RESULTS.md, c /
 * R_inf from 2 to above 4), and R(H) (H tau + T) is least at H = sqrt((c / R_inf) T /
 * tau); we take c / R_inf = 4, and never more inner rounds than ceil(T / tau), where
 * local work would take longer than the sum it amortizes:
 *     H = min(ceil(2 sqrt(T / tau)), ceil(T / tau)), at most ST_GLM_HIER_MAX.
 */
int st_glm_hier_choose(double ratio)
{
    if (!(ratio > 1)) {
        return 1;
    }
    return (int)fmin(fmin(ceil(2 * sqrt(ratio)), ceil(ratio)), ST_GLM_HIER_MAX);
}

static void st_glm_hier_tune(st_glm_trainer_t *tr, st_glm_round_ctx_t *ctx, double t_clus)
{
    st_glm_hier_t *h = &tr->hier;
    double t[3];
    int unknown;

    if (ctx->param->inner_rounds == 0 && h->decided < ST_GLM_HIER_MEASURE) {
        t[0] = h->t_comp / ST_MAX(h->n_comp, 1);
        if (h->n_node > 0) {   /* one inner round has no node sum: keep the last */
            h->t_node_avg = h->t_node / h->n_node;
        }
        /* the slowest rank's local round; the shortest sums (on the others, a sum
         * also holds the wait for the slowest rank), over the ranks that sum a node:
         * a rank alone on its node has none (-inf), a node that has not measured its
         * sum (a run resumed where one inner round was chosen) makes it unknown (+inf) */
        t[1] = (h->node == MPI_COMM_NULL) ? -HUGE_VAL
               : (h->t_node_avg < 0)      ? HUGE_VAL
                                          : -h->t_node_avg;
        t[2] = -t_clus;
        st_glm_allreduce(ctx->comm, t, 3, MPI_DOUBLE, MPI_MAX);
        unknown = (t[1] == HUGE_VAL);
        t[1]    = (t[1] == -HUGE_VAL) ? 0 : -t[1];   /* (nodes of one rank: no node sums) */
        t[2]    = -t[2];
        if (!unknown) {   /* (unknown: the inner rounds stay as chosen) */
            h->inner = st_glm_hier_choose(t[2] / fmax(t[0] + t[1], 1e-9));
        }
        h->decided++;
        ctx->info.inner_rounds = h->inner;
        if (ctx->param->verbose && ctx->rank == 0 && unknown) {
            st_glm_print("hierarchical: %d inner rounds per outer round (kept: no node "
                         "allreduce measured since the resume)\n", h->inner);
        } else if (ctx->param->verbose && ctx->rank == 0) {
            st_glm_print("hierarchical: %d inner rounds per outer round (measured: local "
                         "round %.3g s, node allreduce %.3g s, cluster allreduce %.3g s)\n",
                         h->inner, t[0], t[1], t[2]);
        }
    }
    h->t_comp = h->t_node = 0;
    h->n_comp = h->n_node = 0;
}

/*
 * gap_every auto: the round of the next gap, after the gap @a rel (relative) of
 * @a round. The relative gap falls about geometrically with the rounds: from the last
 * two computed, at rounds r0 < r1, its rate k = ln(g0 / g1) / (r1 - r0) per round and
 * the rounds it still needs to reach tol, m = ln(g1 / tol) / k. The next gap comes
 * max(1, m / 2) rounds on, at most ST_GLM_GAP_AUTO_MAX: the passes thin out while
 * the gap is far from tol and close in on the round that reaches it, where they are
 * a round apart again (so, while the rate holds, the run stops at the round the
 * per-round test would). A gap that did not fall (the primal is not monotone): the
 * next round. Only worker 0 calls it, on the same numbers on every rank.
 */
#define ST_GLM_GAP_AUTO_MAX 16

static int st_glm_gap_next(st_glm_gap_sched_t *g, int round, double rel, double tol)
{
    double k, m;

    g->r0 = g->r1;
    g->g0 = g->g1;
    g->r1 = round;
    g->g1 = rel;
    if (++g->n < 2) {
        return round + 1;
    }
    k = log(g->g0 / g->g1) / (g->r1 - g->r0);
    if (!(k > 0)) {
        return round + 1;
    }
    m = log(rel / tol) / k;   /* tol 0: +inf, the longest interval */
    return (int)fmin(round + fmin(fmax(floor(m / 2), 1.0), ST_GLM_GAP_AUTO_MAX), INT_MAX);
}

/* Whether @a round computes the gap: every @a every-th round, or (0: auto) @a g's next */
static int st_glm_gap_due(const st_glm_gap_sched_t *g, int every, int round)
{
    return (every == 0) ? round >= g->next : round % every == 0;
}

/* Auto, after the gap @a rel (relative) of @a round: the schedule moves on at its own
 * gaps only, not at a gap forced outside it (the last round's) */
static void st_glm_gap_moved(st_glm_gap_sched_t *g, int round, double rel, double tol)
{
    if (round >= g->next && round < INT_MAX) {
        g->next = st_glm_gap_next(g, round, rel, tol);
    }
}

/*
 * Every worker: the duality gap of the model in hand (worker 0 between barriers, the
 * others waiting), then worker 0 ends the round with it: the stopping test, the next
 * gap of gap_every auto's schedule, the checkpoint when @a due. @a round 0: no round
 * ran; the run resumed at its last round from a checkpoint written without a gap, and
 * this is that round's.
 */
static void st_glm_worker_certify(st_glm_worker_t *wk, int round, int due)
{
    st_glm_trainer_t *tr = wk->tr;
    st_glm_round_ctx_t *ctx;
    st_glm_objectives_t obj;
    double tc, sums[2], wsq;
    int64_t j;
    int k, autogap = (tr->ctx->param->gap_every == STRATA_GLM_GAP_AUTO);

    if (tr->z != NULL) {   /* the margins on the GPU, then the gap's sums */
        if (wk->id == 0 && st_glm_gpu_margins(tr->gpu, tr->w, tr->z) != 0) {
            st_glm_gpu_failed(tr);
        }
        pthread_barrier_wait(&tr->barrier);
        if (tr->gpu_failed) {   /* (stop is set: no gap, no checkpoint) */
            return;
        }
    }
    st_glm_gap_pass(wk);
    pthread_barrier_wait(&tr->barrier);
    if (wk->id == 0) {
        ctx     = tr->ctx;
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
        if (round == 0) {
            ctx->info.rounds--;   /* the checkpoint's round again, not one more */
        }
        st_glm_round_end(ctx, &obj);
        tr->stop = ctx->info.converged || ctx->info.rounds >= ctx->param->max_rounds;
        /* the schedule moves on at its own gaps, the last round's too when it
           was one (a run resumed from that round's checkpoint then computes its
           gaps where the uninterrupted run did), not at the last round's forced
           gap */
        if (round > 0 && autogap) {
            st_glm_gap_moved(&tr->gap, round, st_glm_rel_gap(ctx->info.gap, obj.primal),
                             ctx->param->tol);
        }
        if (due) {
            st_glm_checkpoint(tr, ctx, 1);
        }
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
    st_glm_hier_t *h = &tr->hier;
    double tc, t0 = 0;
    int round = tr->ctx->info.rounds, every = ST_MAX(tr->ctx->param->gap_every, 1);
    int autogap = (tr->ctx->param->gap_every == STRATA_GLM_GAP_AUTO);
    int certify, due, inner, s;

    if (tr->stop) {   /* resumed from the round the run ended with */
        if (tr->uncertified) {
            st_glm_worker_certify(wk, 0, 0);
        }
        return;
    }
    for (;;) {
        /* the certificate every gap_every rounds (auto: at gap.next, set by worker 0
           before the last barrier), and after the last */
        round++;
        certify = st_glm_gap_due(&tr->gap, autogap ? 0 : every, round) ||
                  round >= tr->ctx->param->max_rounds;
        due     = st_glm_ckpt_due(&tr->ck, round);
        inner   = h->on ? h->inner : 1;   /* set by worker 0 before the last barrier */
        for (s = 1;; s++) {
            if (wk->id == 0) {
                t0 = st_glm_now();
            }
            if (tr->gpu != NULL) {
                if (wk->id == 0) {   /* the others wait at the barrier */
                    st_glm_local_gpu(wk);
                }
            } else {
                st_glm_local_sdca(wk);
            }
            pthread_barrier_wait(&tr->barrier);
            st_glm_merge(wk);
            pthread_barrier_wait(&tr->barrier);
            if (wk->id == 0) {
                h->t_comp += st_glm_now() - t0;
                h->n_comp++;
            }
            if (s >= inner) {
                break;
            }
            /* an inner round: the node's sum */
            if (wk->id == 0 && h->node != MPI_COMM_NULL) {
                ctx = tr->ctx;
                tc  = st_glm_now();
                st_glm_allreduce(h->node, tr->dv, tr->d_all, MPI_DOUBLE, MPI_SUM);
                tc  = st_glm_now() - tc;
                ctx->info.comm_seconds += tc;
                h->t_node += tc;
                h->n_node++;
            }
            pthread_barrier_wait(&tr->barrier);
            st_glm_apply(wk, 1);
            pthread_barrier_wait(&tr->barrier);
        }
        if (wk->id == 0) {
            ctx = tr->ctx;
            tc  = st_glm_now();
            st_glm_allreduce(ctx->comm, h->on ? h->dr : tr->dv, tr->d_all, MPI_DOUBLE,
                             MPI_SUM);
            tc  = st_glm_now() - tc;
            ctx->info.comm_seconds += tc;
            if (h->on) {
                st_glm_hier_tune(tr, ctx, tc);
            }
            tr->mpi_failed = st_glm_mpi_failed();
        }
        pthread_barrier_wait(&tr->barrier);
        st_glm_apply(wk, 0);
        pthread_barrier_wait(&tr->barrier);
        if (tr->gpu_failed || tr->mpi_failed) {   /* (set by worker 0 in the round) */
            break;
        }
        if (!certify) {
            if (wk->id == 0) {
                tr->ctx->info.rounds++;
                tr->ctx->info.seconds = st_glm_now() - tr->ctx->t_start;
                if (due) {
                    st_glm_checkpoint(tr, tr->ctx, 0);
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
        st_glm_worker_certify(wk, round, due);
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

    st_glm_gpu_close(tr->gpu);
    free(tr->z);
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
    free(tr->vck);
    st_glm_order_free(&tr->order);
    free(tr->hier.vn);
    free(tr->hier.dr);
    pthread_mutex_destroy(&tr->gate_lock);
    pthread_cond_destroy(&tr->gate_cond);
}

/*
 * The hierarchical schedule's setup (collective over @a comm): my node's
 * communicator, Strata's node level when libstrata is loaded (so virtual nodes
 * count; looked up, since libstrata_glm does not link libstrata), else the ranks
 * sharing memory; the node count; sigma'_o and sigma'_p in tr->scale. One node: flat.
 * @return 0 when out of memory or MPI failed here (the ranks agree).
 */
typedef strata_status_t (*st_glm_level_fn_t)(MPI_Comm, strata_level_t, MPI_Comm *);

static int st_glm_hier_init(st_glm_trainer_t *tr, st_glm_round_ctx_t *ctx,
                            const strata_glm_param_t *param)
{
    st_glm_hier_t *h = &tr->hier;
    st_glm_level_fn_t level;
    MPI_Comm node = MPI_COMM_NULL;
    int ok, nrank = 0, nsize = 1, nodes, workers, lo, hi, lead;

    *(void**)&level = dlsym(RTLD_DEFAULT, "strata_comm_level");
    ok = (level != NULL && level(ctx->comm, STRATA_LEVEL_NODE, &node) == STRATA_OK);
    if (!st_glm_agree(ctx->comm, ok)) {   /* Strata's, if some rank got it, stays Strata's */
        st_glm_host_comm(ctx->comm, &node);   /* (kept with the communicator: not freed) */
        ok = (node != MPI_COMM_NULL);
        if (!st_glm_agree(ctx->comm, ok)) {
            return 0;
        }
    }
    MPI_Comm_rank(node, &nrank);
    MPI_Comm_size(node, &nsize);
    /* the layout: each rank's node, named by its first rank, mixed with the rank and
       summed (a checkpoint is of this layout only: the aggregation differs by node) */
    lead = ctx->rank;
    ST_GLM_MPI(MPI_Bcast(&lead, 1, MPI_INT, 0, node));
    h->layout = ((uint64_t)(unsigned)ctx->rank << 32) | (unsigned)lead;
    h->layout = st_glm_rand(&h->layout);
    st_glm_allreduce(ctx->comm, &h->layout, 1, MPI_UINT64_T, MPI_SUM);
    h->layout |= 1;   /* (0 is "not recorded") */
    workers = tr->solvers;
    nodes = (nrank == 0);   /* node leaders */
    st_glm_allreduce(ctx->comm, &nodes, 1, MPI_INT, MPI_SUM);
    st_glm_allreduce(node, &workers, 1, MPI_INT, MPI_SUM);
    lo = hi = nsize;
    st_glm_allreduce(ctx->comm, &lo, 1, MPI_INT, MPI_MIN);
    st_glm_allreduce(ctx->comm, &hi, 1, MPI_INT, MPI_MAX);
    if (param->verbose && ctx->rank == 0) {
        if (lo == hi) {
            st_glm_print("hierarchical: %d node(s) of %d rank(s)%s\n", nodes, lo,
                         nodes > 1 ? "" : ": flat CoCoA+");
        } else {
            st_glm_print("hierarchical: %d nodes of %d to %d ranks\n", nodes, lo, hi);
        }
    }
    if (nodes <= 1) {
        return 1;
    }
    h->on      = 1;
    h->node    = (nsize > 1) ? node : MPI_COMM_NULL;
    h->nodes   = nodes;
    h->sigma_o = (double)nodes;
    h->inner   = param->inner_rounds > 0 ? param->inner_rounds : ST_GLM_HIER_FIRST;
    h->t_node_avg = -1;
    tr->scale  = h->sigma_o * (double)workers / (tr->lambda * (double)tr->data->n_rows_global);
    h->vn      = calloc((size_t)tr->d_all, sizeof(double));
    h->dr      = calloc((size_t)tr->d_all, sizeof(double));
    ctx->info.nodes        = h->nodes;
    ctx->info.inner_rounds = h->inner;
    return st_glm_agree(ctx->comm, h->vn != NULL && h->dr != NULL);
}

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
    tr.hier.node = MPI_COMM_NULL;
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
    tr.eps          = st_glm_model_eps(loss, param);
    tr.local_epochs = param->local_epochs;
    tr.nworkers     = (int)ST_MAX(1, ST_MIN((int64_t)param->threads, ST_MAX(m, 1)));
    tr.shared       = (param->thread_mode == STRATA_GLM_THREADS_SHARED && tr.nworkers > 1 &&
                       !param->gpu);
    tr.solvers      = (tr.shared || param->gpu) ? 1 : tr.nworkers;
    /* CoCoA+ adding: sigma' = the number of local solvers over all ranks (with a
     * shared vector, a rank's threads are one; the GPU is one) */
    tr.scale = (double)nranks * tr.solvers / (param->lambda * (double)data->n_rows_global);

    tr.alpha   = calloc((size_t)ST_MAX(m, 1), sizeof(double));
    tr.c       = malloc((size_t)ST_MAX(m, 1) * sizeof(double));
    tr.sqnorm  = malloc((size_t)ST_MAX(m, 1) * sizeof(double));
    tr.w       = calloc((size_t)tr.d_all, sizeof(double));
    tr.v       = calloc((size_t)tr.d_all, sizeof(double));
    tr.dv      = calloc((size_t)tr.d_all, sizeof(double));
    tr.perm    = malloc((size_t)ST_MAX(m, 1) * sizeof(int64_t));
    tr.rngs    = calloc((size_t)param->threads, sizeof(uint64_t));
    if (posix_memalign((void**)&tr.workers, ST_CACHE_LINE,
                       (size_t)tr.nworkers * sizeof(*tr.workers)) == 0) {
        memset(tr.workers, 0, (size_t)tr.nworkers * sizeof(*tr.workers));
    } else {
        tr.workers = NULL;
    }
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
        wk->u    = tr.shared ? tr.u
                   : (k < tr.solvers) ? malloc((size_t)tr.d_all * sizeof(double)) : NULL;
        ok       = (wk->u != NULL || k >= tr.solvers);
    }
    if (st_glm_agree(comm, ok) && param->hierarchical && nranks > 1) {
        ok = st_glm_hier_init(&tr, &ctx, param);
    }
    if (!st_glm_agree(comm, ok)) {
        st_glm_msg(msg, msg_len, "out of memory (%lld features, %lld rows on a rank)",
                   (long long)tr.d_all, (long long)m);
        st_glm_trainer_free(&tr);
        return STRATA_ERR_NO_MEMORY;
    }
    /* the model vector's layout: from here on the trainer sees the relabelled rows
     * (decided alike on every rank: a rank of one row runs no shared threads, but the
     * ranks must sum their updates in one layout, and the choice is collective) */
    if (st_glm_order_init(&tr.order, data, param->feature_order,
                          param->thread_mode == STRATA_GLM_THREADS_SHARED &&
                                  param->threads > 1 && !param->gpu,
                          comm)) {
        tr.data = &tr.order.data;
        tr.nhot = tr.shared ? ST_MIN(tr.d, ST_GLM_HOT) : 0;
    }

    /* the checkpoint: v (each rank writes a share), my rows' alpha, my workers' random
     * states (each epoch's order comes from them) */
    status = st_glm_ckpt_init(&tr.ck, ST_GLM_CKPT_DUAL, loss, prob, param, comm, msg, msg_len);
    if (status != STRATA_OK) {
        st_glm_trainer_free(&tr);
        return status;
    }
    if (tr.ck.path != NULL) {
        int64_t n = data->n_rows_global, r0 = data->row_offset, nt = param->threads;

        if (tr.hier.on) {
            st_glm_ckpt_schedule(&tr.ck, tr.hier.nodes, param->inner_rounds,
                                 tr.hier.layout);
        }
        st_glm_block_range(tr.d_all, nranks, ctx.rank, &lo, &hi);
        st_glm_ckpt_entry(&tr.ck, r0, m, tr.nworkers, 0);
        /* the file holds v in the given order (relabelled: copied at each save) */
        if (tr.order.map != NULL) {
            tr.vck = malloc((size_t)tr.d_all * sizeof(double));
            ok     = (tr.vck != NULL);
        }
        if (!st_glm_agree(comm, ok)) {
            st_glm_msg(msg, msg_len, "out of memory (%lld features)", (long long)tr.d_all);
            st_glm_trainer_free(&tr);
            return STRATA_ERR_NO_MEMORY;
        }
        st_glm_ckpt_add(&tr.ck, "shared vector", tr.vck != NULL ? tr.vck : tr.v, tr.d_all, 0,
                        tr.d_all, lo, hi);
        st_glm_ckpt_add(&tr.ck, "dual variables", tr.alpha, n, r0, r0 + m, r0, r0 + m);
        st_glm_ckpt_add(&tr.ck, "row orders", tr.perm, n, r0, r0 + m, r0, r0 + m);
        st_glm_ckpt_retired(&tr.ck, 1);   /* read from version 1 files, then unused */
        st_glm_ckpt_add(&tr.ck, "random states", tr.rngs, nranks * nt, ctx.rank * nt,
                        (ctx.rank + 1) * nt, ctx.rank * nt, (ctx.rank + 1) * nt);
    }
    if (param->resume) {
        status = st_glm_ckpt_load(&tr.ck, &ctx.info, &certified, msg, msg_len);
        if (status != STRATA_OK) {
            st_glm_trainer_free(&tr);
            return status;
        }
        /* w and the shared vector as the round that wrote it left them */
        if (tr.vck != NULL) {
            st_glm_order_scatter(&tr.order, tr.vck, tr.v, tr.d_all);
        }
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
        ctx.t_start    = st_glm_now() - ctx.info.seconds;
        tr.stop        = st_glm_ckpt_stopped(param, &ctx.info, certified);
        tr.uncertified = tr.stop && !certified;
        /* a hierarchical run goes on with the inner rounds it chose (auto) */
        ctx.info.nodes = tr.hier.nodes;
        if (tr.hier.on && param->inner_rounds == 0 && ctx.info.inner_rounds > 0) {
            tr.hier.inner   = ctx.info.inner_rounds;
            tr.hier.decided = ST_MIN(ctx.info.rounds, ST_GLM_HIER_MEASURE);
        }
        ctx.info.inner_rounds = tr.hier.inner;
    }
    /* auto: a gap after the first round (resumed: where the schedule stood) */
    st_glm_gap_sched_load(&tr.gap, tr.ck.state, ctx.info.rounds);
    st_glm_data_row_sqnorms(data, tr.sqnorm);
    for (i = 0; i < m; i++) {
        tr.sqnorm[i] += (param->bias > 0) ? param->bias * param->bias : 0;
        tr.c[i] = st_glm_example_weight(loss, param, data->y[i]);
    }
    /* a row whose step curvature q = scale ||x_i||^2 overflows (lambda 1e-300, features of
       1e10) would never move: w stayed 0, or logistic's steps went astray (an objective
       of 5e10 for w = 0's 0.69), with a warning to raise -r */
    for (ok = 1, i = 0; i < m; i++) {
        ok &= (tr.scale * tr.sqnorm[i] <= DBL_MAX);
    }
    if (!st_glm_agree(comm, ok)) {
        st_glm_msg(msg, msg_len, "lambda %g is too small for coordinate descent on these rows "
                   "(a row's ||x||^2 / (lambda n) overflows double precision): give a larger "
                   "lambda (a smaller C) or scale the features%s", param->lambda,
                   isfinite(loss->smoothness) ? ", or --method newton or lbfgs" : "");
        st_glm_trainer_free(&tr);
        return STRATA_ERR_INVALID_PARAM;
    }
    if (param->gpu) {   /* the rank's rows go to its GPU (one worker) */
        ok = (st_glm_gpu_open(tr.data, tr.c, tr.sqnorm, st_glm_model_step(loss), tr.eps,
                              tr.bias, tr.d, tr.d_all, param->gpu_mem, param->gpu_rows,
                              param->threads, 0, comm, &tr.gpu, msg, msg_len) == 0);
        if (!st_glm_agree(comm, ok)) {
            if (ok) {
                st_glm_msg(msg, msg_len, "--gpu: the GPU solver could not start on another "
                           "rank");
            }
            st_glm_trainer_free(&tr);
            return STRATA_ERR_UNSUPPORTED;
        }
        if (param->verbose && ctx.rank == 0) {
            char how[96] = "";
            int used = 0;

            if (st_glm_gpu_sharers(tr.gpu) > 1) {
                used = snprintf(how, sizeof(how), " (shared by %d ranks)",
                                st_glm_gpu_sharers(tr.gpu));
            }
            if (st_glm_gpu_chunk_bytes(tr.gpu) > 0) {
                snprintf(how + used, sizeof(how) - (size_t)used, ", its rows streaming "
                         "through two %.3g MB buffers",
                         (double)st_glm_gpu_chunk_bytes(tr.gpu) / 1e6);
            }
            st_glm_print("GPU local solver (TPA-SCD): rank 0 on device %d%s, %d rank(s), %d "
                         "rows in flight, %s\n", st_glm_gpu_device(tr.gpu), how, nranks,
                         st_glm_gpu_rows(tr.gpu), st_glm_gpu_kernel_name(tr.gpu));
        }
        /* the gap's margins on the GPU where it holds the rows as they are (32-bit
         * values: 64-bit data is rounded there, and the gap is the given data's);
         * without the memory, on the host */
        if (tr.data->prec == 32 && st_glm_gpu_has_margins(tr.gpu)) {
            tr.z = malloc((size_t)ST_MAX(m, 1) * sizeof(double));
        }
    }

    tr.ctx = &ctx;
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

    if (status == STRATA_OK && tr.gpu_failed) {
        st_glm_msg(msg, msg_len, "the GPU solver failed (a CUDA call, named on stderr)");
        status = STRATA_ERR_NO_RESOURCE;
    }
    if (status == STRATA_OK && tr.ck_status != STRATA_OK) {
        st_glm_msg(msg, msg_len, "%s", tr.ck_msg);
        status = tr.ck_status;
    }
    st_glm_order_gather(&tr.order, tr.w, model->w, tr.d_all);
    model->info = ctx.info;
    st_glm_trainer_free(&tr);
    return status;
}

/* After each epoch of the serial solver: its objectives kept (a trace of every epoch
 * would be sized by max_rounds, not by the epochs run), printed when verbose, gap_every
 * auto's schedule moved on, and after every checkpoint_every-th epoch w (and the
 * squared-loss models' residual) saved; and
 * before, whether the epoch computes the certificate (gap_every: the squared-loss
 * models', whose coordinate descent needs no gradient of its own). */
typedef struct {
    st_glm_ckpt_t       ck;
    strata_glm_info_t   info;     /* as loaded (rounds 0 when not resuming) */
    int                 done;     /* epochs before this run */
    int                 failed;   /* a checkpoint failed (its message is in msg) */
    int                 verbose;
    int                 every;    /* gap_every, or 0 for auto */
    int                 test0;    /* the start's certificate is tested (not: resumed
                                     from a checkpoint written without one) */
    st_glm_gap_sched_t  gap;      /* gap_every auto: when the next gap comes */
    double              tol;
    st_glm_objectives_t last;     /* the latest epoch's certificate */
    double              t0;
    char               *msg;
    size_t              msg_len;
} st_glm_serial_ckpt_t;

static int st_glm_serial_certify(void *arg, int epoch)
{
    st_glm_serial_ckpt_t *sc = arg;
    int round = sc->done + epoch;

    if (epoch == 0) {
        return sc->test0;
    }
    return st_glm_gap_due(&sc->gap, sc->every, round);
}

static st_status_t st_glm_serial_epoch_done(void *arg, int epoch, const double *w,
                                            const st_glm_objectives_t *obj)
{
    st_glm_serial_ckpt_t *sc = arg;
    strata_glm_info_t info;
    strata_status_t status;
    int round = sc->done + epoch;

    if (obj != NULL) {
        sc->last = *obj;
        if (sc->every == 0) {
            st_glm_gap_moved(&sc->gap, round, st_glm_rel_gap(obj->gap, obj->primal),
                             sc->tol);
        }
    }
    if (sc->verbose && obj != NULL) {   /* the rounds' line (one rank: no allreduce) */
        st_glm_print("round %4d  primal %.10e  dual %.10e  gap %.3e  rel %.3e  "
                     "time %.3f s (allreduce 0.000 s)\n", sc->done + epoch, obj->primal,
                     obj->dual, obj->gap, st_glm_rel_gap(obj->gap, obj->primal),
                     sc->info.seconds + st_glm_now() - sc->t0);
    }
    if (!st_glm_ckpt_due(&sc->ck, round)) {
        return ST_OK;
    }
    memset(&info, 0, sizeof(info));
    info.rounds  = round;
    info.primal  = sc->last.primal;   /* this epoch's, or the last computed */
    info.dual    = sc->last.dual;
    info.gap     = sc->last.gap;
    info.seconds = sc->info.seconds + st_glm_now() - sc->t0;
    st_glm_gap_sched_save(&sc->gap, sc->ck.state);
    sc->ck.sec[1].buf = (void*)(uintptr_t)w;   /* only read by the save */
    status = st_glm_ckpt_save(&sc->ck, &info, obj != NULL, sc->msg, sc->msg_len);
    sc->failed = (status != STRATA_OK);
    return status;
}

/* The L1 models on one rank: the serial reference solver, on the rows themselves (64-bit
 * values, no bias) or a double copy of them with the bias column appended. */
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
    int64_t *indptr = NULL;
    uint32_t *indices = NULL;
    double *values = NULL, *c = NULL, *resid = NULL;
    const char *why;
    int epochs = 0, certified = 0, copy, sq = !loss->line_search;
    double t0 = st_glm_now();
    st_status_t status;

    /* the checkpoint: w (into model->w when resuming), and lasso's and elastic net's
       residual (below) */
    memset(&sc, 0, sizeof(sc));
    memset(&hooks, 0, sizeof(hooks));
    status = st_glm_ckpt_init(&sc.ck, ST_GLM_CKPT_SERIAL, loss, prob, param, comm, msg,
                              msg_len);
    if (status != STRATA_OK) {
        return status;
    }
    /* (lasso, elastic net: and the residual X w - y, kept by the solver in resid) */
    if (sq && (resid = malloc(((size_t)n + 1) * sizeof(*resid))) == NULL) {
        st_glm_msg(msg, msg_len, "out of memory");
        return STRATA_ERR_NO_MEMORY;
    }
    if (sc.ck.path != NULL) {
        st_glm_ckpt_entry(&sc.ck, 0, n, 1, 0);
        st_glm_ckpt_add(&sc.ck, "weights", model->w, data->n_cols + nb, 0, data->n_cols + nb,
                        0, data->n_cols + nb);
        if (sq) {
            st_glm_ckpt_add(&sc.ck, "residual", resid, n, 0, n, 0, n);
            st_glm_ckpt_since(&sc.ck, 3);
        }
        sc.msg        = msg;
        sc.msg_len    = msg_len;
    }
    sc.t0            = t0;
    sc.verbose       = param->verbose;
    sc.every         = (param->gap_every == STRATA_GLM_GAP_AUTO) ? 0
                                                                : ST_MAX(param->gap_every, 1);
    sc.tol           = param->tol;
    sc.test0         = 1;
    hooks.epoch_done = st_glm_serial_epoch_done;
    hooks.certify    = st_glm_serial_certify;
    hooks.arg        = &sc;
    hooks.resid      = resid;
    if (param->resume) {
        status = st_glm_ckpt_load(&sc.ck, &sc.info, &certified, msg, msg_len);
        if (status != STRATA_OK) {
            goto out;
        }
        sc.done  = sc.info.rounds;
        sc.test0 = certified;   /* the uninterrupted run tested that round's then */
        hooks.w0 = model->w;
        /* (a version 2 checkpoint has no residual: recomputed from w, so the steps
           after it differ from the uninterrupted run's by rounding) */
        hooks.resid_set = (sc.ck.loaded >= 3);
        t0      -= sc.info.seconds;
    } else if (!st_glm_all_zero(model->w, data->n_cols + nb)) {
        hooks.w0 = model->w;   /* a starting model's (strata_glm_train_from), the residual
                                  from them */
    }
    st_glm_gap_sched_load(&sc.gap, sc.ck.state, sc.done);

    c    = malloc(((size_t)n + 1) * sizeof(*c));
    copy = (nb || data->prec != 64);   /* else the solver reads the rows in place */
    if (copy) {
        indptr  = malloc(((size_t)n + 1) * sizeof(*indptr));
        indices = malloc(((size_t)data->nnz + (size_t)n * nb + 1) * sizeof(*indices));
        values  = malloc(((size_t)data->nnz + (size_t)n * nb + 1) * sizeof(*values));
    }
    if (!c || (copy && (!indptr || !indices || !values))) {
        st_glm_msg(msg, msg_len, "out of memory");
        status = STRATA_ERR_NO_MEMORY;
        goto out;
    }
    for (i = 0; i < n; i++) {
        c[i] = st_glm_example_weight(loss, param, data->y[i]);
        if (!copy) {
            continue;
        }
        indptr[i] = o;
        for (k = data->indptr[i]; k < data->indptr[i + 1]; k++, o++) {
            indices[o] = data->indices[k];
            values[o]  = st_glm_data_val(data, k);
        }
        if (nb) {
            indices[o]  = (uint32_t)data->n_cols;
            values[o++] = param->bias;
        }
    }
    sp.n              = n;
    sp.d              = data->n_cols + nb;
    if (copy) {
        indptr[n]  = o;
        sp.indptr  = indptr;
        sp.indices = indices;
        sp.values  = values;
    } else {
        sp.indptr  = data->indptr;
        sp.indices = data->indices;
        sp.values  = data->val64;
    }
    sp.y              = data->y;
    sp.weights        = c;
    sparam.lambda     = param->lambda;
    sparam.eta        = param->eta;
    sparam.eps        = 0;   /* (an L1 model) */
    sparam.max_epochs = ST_MAX(param->max_rounds - sc.done, 0);
    sparam.tol        = param->tol;
    sparam.shuffle    = 1;
    sparam.seed       = param->seed;
    if (sp.d == 0) {
        /* no feature (and no bias): w is empty and optimal, P = D = the mean loss at
         * margin 0, as ProxCoCoA+ finds on several ranks (the serial solver takes d > 0) */
        double sum = 0;

        for (i = 0; i < n; i++) {
            sum += c[i] * loss->loss(0.0, data->y[i], 0.0);   /* an L1 model */
        }
        model->info.rounds    = sc.done;
        model->info.primal    = sum / (double)n;
        model->info.dual      = model->info.primal;
        model->info.converged = 1;
        model->info.seconds   = st_glm_now() - t0;
        goto out;
    }
    if ((why = st_glm_serial_check(loss, &sp, &sparam)) != NULL) {
        st_glm_msg(msg, msg_len, "%s", why);
        status = STRATA_ERR_INVALID_PARAM;
        goto out;
    }
    hooks.start = &sc.last;   /* the start's, then each certified epoch's */
    status = st_glm_serial_train_hooked(loss, &sp, &sparam, &hooks, model->w, NULL, NULL,
                                        &epochs);
    if (sc.failed) {
        goto out;   /* its message is in msg */
    }
    if (status != ST_OK) {
        st_glm_msg(msg, msg_len, "training failed: %s", strata_status_string(status));
        goto out;
    }
    model->info.rounds    = sc.done + epochs;   /* (the last epoch computed sc.last) */
    model->info.primal    = sc.last.primal;
    model->info.dual      = sc.last.dual;
    model->info.gap       = sc.last.gap;
    model->info.converged = sc.last.gap <= param->tol * fabs(sc.last.primal);
    model->info.seconds   = st_glm_now() - t0;
out:
    free(indptr);
    free(indices);
    free(values);
    free(c);
    free(resid);
    return status;
}

/* STRATA_GLM_METHOD_AUTO picks Newton over SDCA from this condition number of the
   dual on (bench/RESULTS.md, "The three methods on the rule's sets") */
#define ST_GLM_AUTO_NEWTON_KAPPA 10.0

/* The dual's condition number, as SDCA's rate sees it: its epochs to a gap grow like
   1 + kappa, kappa = L mean_i(c_i ||x_i||^2) / (lambda n) with L the loss's curvature
   bound (Shalev-Shwartz and Zhang, JMLR 2013); a pass over the rows (collective). */
static double st_glm_dual_kappa(const st_glm_model_t *loss, const strata_glm_problem_t *prob,
                                const strata_glm_param_t *param, MPI_Comm comm)
{
    const st_glm_data_t *data = prob->data;
    double sum = 0, bias_sq = (param->bias > 0) ? param->bias * param->bias : 0;
    double n = (double)data->n_rows_global;
    int64_t i;

    for (i = 0; i < data->n_rows; i++) {
        sum += st_glm_example_weight(loss, param, data->y[i]) *
               (st_glm_data_row_sqnorm(data, i) + bias_sq);
    }
    st_glm_allreduce(comm, &sum, 1, MPI_DOUBLE, MPI_SUM);
    return loss->smoothness * sum / n / (param->lambda * n);
}

/* The vectors of the model's size (the features and the bias, doubles) a run of
 * @a method keeps on each rank, at least: the model, and the method's own (as each
 * method allocates them: L-BFGS w g wn gn p minv, the pairs, the sum and a gradient
 * per thread; Newton w in all the columns, besides those it keeps for the columns
 * rows hold; coordinate descent on the dual w v dv and a solver's vector per thread
 * or a shared one; the primal's counts). */
static int st_glm_method_vectors(int method, const st_glm_model_t *loss,
                                 const strata_glm_problem_t *prob,
                                 const strata_glm_param_t *param)
{
    int64_t m = prob->data->n_rows;
    int parts = (int)ST_MAX(1, ST_MIN((int64_t)param->threads, ST_MAX(m, 1)));

    switch (method) {
    case STRATA_GLM_METHOD_LBFGS:
        return 1 + 6 + 2 * ST_GLM_LBFGS_PAIRS + 1 + parts;
    case STRATA_GLM_METHOD_NEWTON:
        return 1 + 1;
    default:
        if (loss->form == ST_GLM_FORM_DUAL) {
            return 1 + 3 + ((param->gpu || (param->thread_mode == STRATA_GLM_THREADS_SHARED &&
                                             parts > 1)) ? 1 : parts);
        }
        return 1 + 1;
    }
}

/*
 * Collective over @a comm: does the host hold what @a method keeps (st_glm_method_vectors)
 * for each of its ranks? Where it does not, the kernel would kill the run when
 * the memory is touched, long after it began (allocations are overcommitted), so it
 * is refused first, naming the data's largest index (a hashed or sparse numbering
 * gives millions of features to a few rows). STRATA_GLM_MEM_AVAILABLE replaces the
 * host's figure.
 */
static strata_status_t st_glm_memory_check(int method, const st_glm_model_t *loss,
                                           const strata_glm_problem_t *prob,
                                           const strata_glm_param_t *param, MPI_Comm comm,
                                           char *msg, size_t msg_len)
{
    const st_glm_data_t *data = prob->data;
    const char *str, *name;
    double avail = st_glm_mem_env(&str), host[2];
    int vectors = st_glm_method_vectors(method, loss, prob, param), ranks = 1;
    char where[512] = "", hostname[256];

    if (!st_glm_agree(comm, avail != -2)) {
        st_glm_msg(msg, msg_len, "STRATA_GLM_MEM_AVAILABLE='%s' is not a size in bytes (K, M, G "
                   "or T after the number: powers of 1024)%s", str ? str : "",
                   avail == -2 ? "" : " on another rank");
        return STRATA_ERR_INVALID_PARAM;
    }
    st_glm_mem_host(comm, (double)vectors * 8.0 * (double)(data->n_cols + 1), avail, host);
    /* (every host's answer, agreed: a host short of memory refuses for all of them) */
    if (st_glm_agree(comm, host[0] <= host[1])) {
        return STRATA_OK;
    }
    st_glm_mem_worst(comm, host, hostname, (int)sizeof(hostname));
    if (comm != MPI_COMM_NULL) {
        MPI_Comm_size(comm, &ranks);
    }
    if (data->source != NULL && data->n_cols_line > 0) {
        snprintf(where, sizeof(where), " (the largest index, at %s:%lld)", data->source,
                 (long long)data->n_cols_line);
    } else if (data->source != NULL) {
        snprintf(where, sizeof(where), " (%s)", data->source);
    }
    name = (method == STRATA_GLM_METHOD_LBFGS)    ? "lbfgs"
           : (method == STRATA_GLM_METHOD_NEWTON) ? "newton"
                                                   : "cd";
    st_glm_msg(msg, msg_len, "not enough memory: %lld features%s need %.3g MB on host %s "
               "(method %s keeps %d vectors of that size on each rank; %d rank(s) in all), "
               "and it has %.3g MB available (renumber the features without gaps, or hash "
               "them into fewer; STRATA_GLM_MEM_AVAILABLE sets the host's figure)",
               (long long)data->n_cols, where, host[0] / 1e6, hostname, name, vectors, ranks,
               host[1] / 1e6);
    return STRATA_ERR_NO_MEMORY;
}

/* STRATA_GLM_METHOD_AUTO, for the smooth L2 models: L-BFGS where the primal is well
   conditioned, i.e. the features are dense and outnumbered by the rows (no rare
   columns whose curvature is only lambda); else Newton where the dual is badly
   conditioned (SDCA would need many epochs, Newton's steps do not care); else CD.
   The L1 models: newton (block proximal Newton across @a nranks ranks; on one, the
   serial solver). From global counts and sums, so every rank chooses the same */
static int st_glm_method_choose(const st_glm_model_t *loss, const strata_glm_problem_t *prob,
                                const strata_glm_param_t *param, MPI_Comm comm, int rank,
                                int nranks)
{
    const st_glm_data_t *data = prob->data;
    double rows = (double)data->n_rows_global;
    double cols = (double)data->n_cols + (param->bias > 0);
    double nnz  = (double)data->nnz_global + (param->bias > 0 ? rows : 0.0);
    double kappa = 0;
    int method = STRATA_GLM_METHOD_CD, smooth;
    char kappa_s[64] = "";

    if (param->method != STRATA_GLM_METHOD_AUTO) {
        return param->method;
    }
    smooth = st_glm_primal_refusal(loss, param, "auto") == NULL;
    if (loss->form == ST_GLM_FORM_PRIMAL) {
        /* the L1 models: block proximal Newton across ranks (one rank: the serial
           solver, coordinate descent for the squared loss, newGLMNET for logistic) */
        method = STRATA_GLM_METHOD_NEWTON;
        snprintf(kappa_s, sizeof(kappa_s), nranks > 1 ? ", block proximal Newton over the "
                 "ranks' features" : ", one rank: the serial L1 solver");
    } else if (smooth && rows >= cols && nnz >= 0.05 * rows * cols) {
        method = STRATA_GLM_METHOD_LBFGS;
    } else if (smooth) {
        kappa  = st_glm_dual_kappa(loss, prob, param, comm);
        method = (kappa >= ST_GLM_AUTO_NEWTON_KAPPA) ? STRATA_GLM_METHOD_NEWTON
                                                     : STRATA_GLM_METHOD_CD;
        snprintf(kappa_s, sizeof(kappa_s), ", dual condition number %.3g", kappa);
    }
    if (param->verbose && rank == 0) {
        st_glm_print("method auto: %s (%.0f rows, %.0f columns, %.3g%% of the entries "
                     "stored%s)\n",
                     method == STRATA_GLM_METHOD_LBFGS    ? "lbfgs"
                     : method == STRATA_GLM_METHOD_NEWTON ? "newton"
                                                          : "cd",
                     rows, cols, 100.0 * nnz / ST_MAX(rows * cols, 1.0), kappa_s);
    }
    return method;
}

/* STRATA_GLM_METHOD_AUTO's L-BFGS hands over to Newton after this many iterations short
   of tol: on its sets (dense rows outnumbering the columns) it converges in 7-18
   (bench/RESULTS.md, "The three methods on the rule's sets"), and where it crawls
   (classes nearly separable at a small lambda: a squared hinge's rows past the margin
   add no curvature) Newton from its point converges in a few steps */
#define ST_GLM_AUTO_LBFGS_ROUNDS 100

/* L-BFGS; picked by STRATA_GLM_METHOD_AUTO (param->method), with up to
 * ST_GLM_AUTO_LBFGS_ROUNDS iterations, then, short of tol with rounds left, Newton from
 * where it stopped for the rest (@a method_p then says Newton; model->info counts both).
 * Before: -s sqsvm, 74 rows of 37 dense features, lambda 7.8e-4, ended its 200 rounds
 * at a relative gap of 62 with P 12 % above the optimum, which Newton reaches in 62. */
static strata_status_t st_glm_train_lbfgs_auto(const st_glm_model_t *loss,
                                               const strata_glm_problem_t *prob,
                                               const strata_glm_param_t *param, MPI_Comm comm,
                                               char *msg, size_t msg_len,
                                               strata_glm_model_t *model, int *method_p)
{
    strata_glm_param_t first = *param, rest = *param;
    strata_glm_info_t before;
    strata_status_t status;
    int rank, nranks;

    if (param->method != STRATA_GLM_METHOD_AUTO ||
        param->max_rounds <= ST_GLM_AUTO_LBFGS_ROUNDS) {
        return st_glm_train_lbfgs(loss, prob, param, comm, msg, msg_len, model);
    }
    first.max_rounds = ST_GLM_AUTO_LBFGS_ROUNDS;
    status = st_glm_train_lbfgs(loss, prob, &first, comm, msg, msg_len, model);
    /* (short of tol at its bound, the same on every rank; one that stopped by itself
       found no step left in double precision, nor would Newton) */
    if (status != STRATA_OK || model->info.converged ||
        model->info.rounds < first.max_rounds) {
        return status;
    }
    before          = model->info;
    rest.max_rounds = param->max_rounds - before.rounds;
    st_glm_comm_shape(comm, &rank, &nranks);
    if (param->verbose && rank == 0) {
        st_glm_print("method auto: L-BFGS short of -e %g after %d rounds (relative gap "
                     "%.3e): Newton from there\n", param->tol, before.rounds,
                     st_glm_rel_gap(before.gap, before.primal));
    }
    status = st_glm_train_newton(loss, prob, &rest, comm, msg, msg_len, model);
    model->info.rounds       += before.rounds;
    model->info.seconds      += before.seconds;
    model->info.comm_seconds += before.comm_seconds;
    *method_p = STRATA_GLM_METHOD_NEWTON;
    return status;
}

/* The first feature (the file's 1-based index; the bias, -B: n_cols + 1) whose value in
 * some row of some rank has a square beyond double precision, or where a row's sum of
 * squares first overflows (values above 1.3e154: the solvers' curvatures x_ij^2 and
 * ||x_i||^2 would be infinite, and their steps along those features 0); 0 where none
 * (collective). */
static int64_t st_glm_data_overflow(const st_glm_data_t *data, double bias, MPI_Comm comm)
{
    const double bsq = (bias > 0) ? bias * bias : 0;
    int64_t i, k, bad = INT64_MAX;
    double x, sq;

    for (i = 0; i < data->n_rows && bad == INT64_MAX; i++) {
        if (st_glm_data_row_sqnorm(data, i) + bsq <= DBL_MAX) {
            continue;
        }
        /* the bias, last in the row (its own square, or the sum it ends), unless an
           entry's comes first (before: the sum began at the bias's square, so a bias
           whose square overflows named the row's first feature) */
        bad = data->n_cols + 1;
        for (sq = 0, k = data->indptr[i]; k < data->indptr[i + 1]; k++) {
            x   = st_glm_data_val(data, k);
            sq += x * x;
            if (!(sq <= DBL_MAX)) {
                bad = (int64_t)data->indices[k] + 1;
                break;
            }
        }
    }
    st_glm_allreduce(comm, &bad, 1, MPI_INT64_T, MPI_MIN);
    return (bad == INT64_MAX) ? 0 : bad;
}

strata_status_t st_glm_rows_check(const strata_glm_problem_t *prob, double bias, MPI_Comm comm,
                                  char *msg, size_t msg_len)
{
    int64_t bad;

    if (prob->rows_fine && prob->rows_fine_bias == bias) {
        return STRATA_OK;
    }
    if ((bad = st_glm_data_overflow(prob->data, bias, comm)) > prob->data->n_cols) {
        st_glm_msg(msg, msg_len, "the bias, feature %lld (-B %g): its values are too large "
                   "for double precision (its square, or a row's sum of squares, "
                   "overflows); give a smaller bias", (long long)bad, bias);
        return STRATA_ERR_INVALID_PARAM;
    }
    if (bad != 0) {
        st_glm_msg(msg, msg_len, "feature %lld: its values are too large for double precision "
                   "(a square, or a row's sum of squares, overflows); scale them",
                   (long long)bad);
        return STRATA_ERR_INVALID_PARAM;
    }
    return STRATA_OK;
}

ST_EXPORT strata_status_t strata_glm_train(const strata_glm_problem_t *prob,
                                           const strata_glm_param_t *param, MPI_Comm comm,
                                           char *msg, size_t msg_len,
                                           strata_glm_model_t **model_p)
{
    return strata_glm_train_from(prob, param, comm, msg, msg_len, NULL, model_p);
}

/* Does the method that trains @a loss take a starting point (model->w on entry)? The
 * primal methods of the L2 models, and the L1 models' serial solver on one rank. */
static int st_glm_method_warm(const st_glm_model_t *loss, int method, int nranks)
{
    return (loss->form == ST_GLM_FORM_PRIMAL) ? (nranks == 1)
                                              : (method == STRATA_GLM_METHOD_NEWTON ||
                                                 method == STRATA_GLM_METHOD_LBFGS);
}

/* Is @a start a model @a prob's training with @a loss and @a param could have made? NULL
 * when so, else why not. */
static const char *st_glm_start_fits(const strata_glm_model_t *start, const st_glm_model_t *loss,
                                     const strata_glm_problem_t *prob,
                                     const strata_glm_param_t *param)
{
    if (start->loss == NULL || start->loss->kind != loss->kind) {
        return "another model kind";
    }
    if (start->n_features != prob->data->n_cols) {
        return "another feature count";
    }
    if ((start->bias > 0 || param->bias > 0) && start->bias != param->bias) {
        return "another bias";
    }
    if (start->nr_class != (prob->named ? prob->nr_class : 0) ||
        (start->nr_class > 0 &&
         memcmp(start->labels, prob->classes, (size_t)start->nr_class * sizeof(double)))) {
        return "other classes";
    }
    return NULL;
}

/* Is @a start the same on every rank of @a comm (NULL on every rank, or equal models)?
 * The same answer on every rank. */
static int st_glm_start_alike(const strata_glm_model_t *start, MPI_Comm comm)
{
    uint64_t mine = (start == NULL) ? 0 : st_glm_model_hash(start);

    mine += (start != NULL && mine == 0);   /* (0: none) */
    return st_glm_words_differ(comm, &mine, 1) < 0;
}

/* FNV-1a of @a n bytes at @a p (NULL: a value no bytes give), for st_glm_param_alike. */
static uint64_t st_glm_param_word(const void *p, size_t n)
{
    const unsigned char *b = p;
    uint64_t x = UINT64_C(0xcbf29ce484222325);
    size_t k;

    if (p == NULL) {
        return 1;
    }
    for (k = 0; k < n; k++) {
        x = (x ^ b[k]) * UINT64_C(0x100000001b3);
    }
    return x;
}

#define ST_GLM_PARAM_WORD(_f) {#_f, offsetof(strata_glm_param_t, _f), \
                               sizeof(((strata_glm_param_t*)NULL)->_f)}

/* (st_glm.h) Each field's FNV-1a, with its complement, in one allreduce of their
 * maxima; before any check of the values, so that a value one rank refuses is refused
 * by all (before, each rank checked its own and one returned alone while the others
 * waited in the next sum). verbose (rank 0 prints), threads and gpu_mem (each rank's own
 * resources: a rank's threads share its rows) may differ. */
const char *st_glm_param_alike(const strata_glm_param_t *param, const double *args, int nargs,
                               MPI_Comm comm)
{
    static const struct {
        const char *name;
        size_t      off, size;
    } f[] = {
        ST_GLM_PARAM_WORD(lambda), ST_GLM_PARAM_WORD(eta), ST_GLM_PARAM_WORD(tol),
        ST_GLM_PARAM_WORD(max_rounds), ST_GLM_PARAM_WORD(gap_every),
        ST_GLM_PARAM_WORD(local_epochs), ST_GLM_PARAM_WORD(thread_mode),
        ST_GLM_PARAM_WORD(bias),
        ST_GLM_PARAM_WORD(weight_pos), ST_GLM_PARAM_WORD(weight_neg), ST_GLM_PARAM_WORD(seed),
        ST_GLM_PARAM_WORD(checkpoint_every), ST_GLM_PARAM_WORD(resume),
        ST_GLM_PARAM_WORD(hierarchical), ST_GLM_PARAM_WORD(inner_rounds),
        ST_GLM_PARAM_WORD(gpu), ST_GLM_PARAM_WORD(feature_order), ST_GLM_PARAM_WORD(method),
        ST_GLM_PARAM_WORD(gpu_rows), ST_GLM_PARAM_WORD(epsilon)
    };
    enum { NF = sizeof(f) / sizeof(f[0]), NW = NF + 4 };
    _Static_assert(NW <= ST_GLM_WORDS_MAX, "st_glm_words_differ takes the words");
    uint64_t mine[NW];
    int k;

    if (comm == MPI_COMM_NULL) {
        return NULL;
    }
    memset(mine, 0, sizeof(mine));
    mine[0] = (param == NULL) ? 1 : 2;
    mine[3] = st_glm_param_word(args, (size_t)nargs * sizeof(double));
    if (param != NULL) {
        mine[1] = st_glm_param_word(param->solver,
                                    param->solver == NULL ? 0 : strlen(param->solver));
        mine[2] = st_glm_param_word(param->checkpoint,
                                    param->checkpoint == NULL ? 0 : strlen(param->checkpoint));
        for (k = 0; k < NF; k++) {
            mine[4 + k] = st_glm_param_word((const char*)param + f[k].off, f[k].size);
        }
    }
    k = st_glm_words_differ(comm, mine, NW);
    return (k < 0) ? NULL : (k == 0) ? "NULL on some rank" : (k == 1) ? "solver"
         : (k == 2) ? "checkpoint" : (k == 3) ? "the call's arguments (folds, C, epsilon)"
         : f[k - 4].name;
}

/* (st_glm.h) */
strata_status_t st_glm_params_agree(const strata_glm_param_t *param, const double *args,
                                    int nargs, MPI_Comm comm, char *msg, size_t msg_len)
{
    const char *why = st_glm_param_alike(param, args, nargs, comm);

    if (why != NULL) {
        st_glm_msg(msg, msg_len, "the parameters are not the same on every rank: %s %s", why,
                   why[strlen(why) - 1] == ')' ? "differ" : "differs");
        return STRATA_ERR_INVALID_PARAM;
    }
    return STRATA_OK;
}

static strata_status_t st_glm_train_from_body(const strata_glm_problem_t *prob,
                                              const strata_glm_param_t *param,
                                              MPI_Comm comm, char *msg, size_t msg_len,
                                              const strata_glm_model_t *start,
                                              strata_glm_model_t **model_p)
{
    strata_glm_param_t weighted;
    const st_glm_model_t *loss;
    strata_glm_model_t *model;
    strata_status_t status;
    const char *why;
    char err[256];
    int rank, nranks, method;

    if (prob == NULL || prob->data == NULL || model_p == NULL) {
        st_glm_msg(msg, msg_len, "no problem or no model pointer");
        return STRATA_ERR_INVALID_PARAM;
    }
    if ((status = st_glm_problem_on(prob, comm, msg, msg_len)) != STRATA_OK) {
        return status;
    }
    if ((status = st_glm_params_agree(param, NULL, 0, comm, msg, msg_len)) != STRATA_OK) {
        return status;
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
    /* (before looking at it: each rank starting from its own w, the ranks' sums would
       part ways; alike, every rank finds the same below) */
    if (!st_glm_start_alike(start, comm)) {
        st_glm_msg(msg, msg_len, "the starting model is not the same on every rank");
        return STRATA_ERR_INVALID_PARAM;
    }
    if (start != NULL && (why = st_glm_start_fits(start, loss, prob, param)) != NULL) {
        st_glm_msg(msg, msg_len, "the starting model is not one of this training: %s", why);
        return STRATA_ERR_INVALID_PARAM;
    }
    if (start != NULL && (param->checkpoint_every > 0 || param->resume)) {
        st_glm_msg(msg, msg_len, "a starting model and checkpoints: a checkpoint resumes a "
                   "run from w = 0");
        return STRATA_ERR_INVALID_PARAM;
    }
    if (prob->named && !prob->regression) {   /* (one binary training per class) */
        return st_glm_train_named(prob, param, comm, msg, msg_len, start, model_p);
    }
    if (prob->class_weight != NULL && !prob->regression) {
        /* the problem's class weights times the parameters' (the classes 1 and -1 or 0) */
        weighted            = *param;
        weighted.weight_pos = param->weight_pos * st_glm_class_weight(prob, 1.0);
        weighted.weight_neg = param->weight_neg *
                              st_glm_class_weight(prob, prob->data->zero_one ? 0.0 : -1.0);
        param               = &weighted;
    }
    if (!isfinite(1.0 / (param->lambda * (double)prob->data->n_rows_global))) {
        st_glm_msg(msg, msg_len, "lambda %g is too small for %lld rows (1 / (lambda n) "
                   "overflows)", param->lambda, (long long)prob->data->n_rows_global);
        return STRATA_ERR_INVALID_PARAM;
    }
    if (!isfinite(param->lambda * (double)prob->data->n_rows_global)) {
        /* (coordinate descent's scale 1 / (lambda n) was 0, its updates 0 / 0: every
           objective NaN, refused as "the objective overflows ... scale them") */
        st_glm_msg(msg, msg_len, "lambda %g is too large for %lld rows (lambda n "
                   "overflows)", param->lambda, (long long)prob->data->n_rows_global);
        return STRATA_ERR_INVALID_PARAM;
    }
    if ((status = st_glm_rows_check(prob, param->bias, comm, msg, msg_len)) != STRATA_OK) {
        return status;
    }
    st_glm_comm_shape(comm, &rank, &nranks);
    method = st_glm_method_choose(loss, prob, param, comm, rank, nranks);
    if ((status = st_glm_memory_check(method, loss, prob, param, comm, msg, msg_len)) !=
        STRATA_OK) {
        return status;
    }
    model = st_glm_model_new(loss, prob->data->n_cols, param->bias > 0 ? param->bias : -1);
    if (!st_glm_agree(comm, model != NULL)) {   /* (every rank, or the others hang) */
        strata_glm_model_free(model);
        st_glm_msg(msg, msg_len, "out of memory for the model: %lld features (the data's "
                   "largest index), %.3g GB", (long long)prob->data->n_cols,
                   (double)prob->data->n_cols * sizeof(double) / 1e9);
        return STRATA_ERR_NO_MEMORY;
    }
    model->lambda   = param->lambda;
    model->eta      = st_glm_model_eta(loss, param->eta);
    model->zero_one = loss->classification && prob->data->zero_one;   /* its file says so */
    if (start != NULL && st_glm_method_warm(loss, method, nranks)) {
        /* (the methods start from model->w; the others from 0) */
        memcpy(model->w, start->w,
               ((size_t)model->n_features + (model->bias > 0)) * sizeof(double));
    }
    status = (loss->form == ST_GLM_FORM_PRIMAL)
                     ? ((nranks == 1)
                            ? st_glm_train_serial(loss, prob, param, comm, msg, msg_len, model)
                            : st_glm_train_primal(loss, prob, param, comm, msg, msg_len, model))
             : (method == STRATA_GLM_METHOD_LBFGS)
                     ? st_glm_train_lbfgs_auto(loss, prob, param, comm, msg, msg_len, model,
                                               &method)
             : (method == STRATA_GLM_METHOD_NEWTON)
                     ? st_glm_train_newton(loss, prob, param, comm, msg, msg_len, model)
                     : st_glm_train_dual(loss, prob, param, comm, msg, msg_len, model);
    if (status == STRATA_OK && !isfinite(model->info.primal)) {
        st_glm_msg(msg, msg_len, "the objective overflows (primal %g): labels or features too "
                   "large for double precision; scale them%s", model->info.primal,
                   st_glm_weighted(param) ? ", or lower the class weights" : "");
        status = STRATA_ERR_INVALID_PARAM;
    }
    if (status != STRATA_OK) {
        free(model->w);
        free(model);
        return status;
    }
    model->info.method = method;
    *model_p = model;
    return STRATA_OK;
}

ST_EXPORT strata_status_t strata_glm_train_from(const strata_glm_problem_t *prob,
                                                const strata_glm_param_t *param,
                                                MPI_Comm comm, char *msg, size_t msg_len,
                                                const strata_glm_model_t *start,
                                                strata_glm_model_t **model_p)
{
    strata_glm_model_t *model = NULL;
    strata_status_t status;

    st_glm_mpi_enter();
    status = st_glm_train_from_body(prob, param, comm, msg, msg_len, start,
                                    model_p == NULL ? NULL : &model);
    status = st_glm_mpi_leave(status, msg, msg_len);
    if (status != STRATA_OK) {
        strata_glm_model_free(model);
        return status;
    }
    *model_p = model;
    return STRATA_OK;
}
