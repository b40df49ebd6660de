/*
 * libstrata_glm: L-BFGS on the primal of the smooth L2 models (method lbfgs).
 *
 *   P(w) = (1/n) sum_i c_i phi(x_i.w, y_i) + (lambda/2) ||w||^2
 *
 * (logistic, squared hinge, squared loss; Nocedal & Wright, "Numerical Optimization",
 * 2nd ed., algorithms 7.4 and 7.5). Each evaluation of P and its gradient is one pass
 * over the rows, every rank over its own rows and its threads over slices of them, and
 * one MPI_Allreduce of the gradient's data term (d + 1 doubles, with the loss and the
 * dual terms): so libstrata's allreduce carries it when preloaded. Every rank then
 * holds the same sums and takes the same steps.
 *
 * When n is much larger than d and the features are dense, the primal is far better
 * conditioned than the dual that SDCA climbs (its rate depends on the largest row norm
 * over lambda n), and a quasi-Newton method needs a few passes where SDCA needs tens
 * (bench/GLM.md, the dense set). On sparse hashed data Newton's method is faster
 * (bench/RESULTS.md, "The three methods on the rule's sets").
 *
 * The initial inverse Hessian is H0 = gamma M^-1 with M P's curvature bound on the
 * diagonal, M_jj = lambda + (beta / n) sum_i c_i x_ij^2 (beta = sup phi''), one pass
 * before the first: the steps are then those of L-BFGS on features scaled to equal
 * curvature, so a feature of 1e12 among ones of 1, or frequent columns among rare
 * ones (whose curvature is lambda), do not slow it (5-7x fewer iterations on the
 * Criteo-like sets than with M = I).
 *
 * The stopping certificate is the duality gap, as for SDCA: at w, the dual point
 * alpha_i = -c_i phi'(x_i.w, y_i) (the optimum's, where w converges) has
 * w(alpha) = (1/(lambda n)) sum_i alpha_i x_i = w - grad P(w) / lambda, so
 *   D(alpha) = (1/n) sum_i -phi_i*(-alpha_i) - (lambda/2) ||w - grad P(w) / lambda||^2
 * comes from the same pass. The line search is backtracking to the Armijo condition:
 * P is strictly convex (lambda > 0), so every accepted step has s.y >= lambda ||s||^2 >
 * 0 and the curvature pairs stay positive definite without a Wolfe search.
 */
#include "config.h"

#include "st_glm.h"

#include <assert.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define ST_GLM_LBFGS_ARMIJO    1e-4   /* sufficient decrease: P(w + t p) <= P + c t g.p */
#define ST_GLM_LBFGS_BACKTRACK 60     /* shorter steps tried before giving up */
/* Where the decrease Armijo asks is below P's rounding (FLAT |P|), P cannot tell a
 * good step from a bad one and its slope along p must: a step is taken if P rises
 * by no more than rounding and the slope there is within SLOPE |g.p| of 0 (Hager and
 * Zhang's approximate Wolfe condition, SIAM J. Optim. 2005; a first step that is too
 * short, slope below -SLOPE |g.p|, is taken too, as Armijo's test would). Without
 * it, a feature of 1e12 among ones of 1 leaves L-BFGS at P's optimum to 11 digits
 * with a gradient too large for the duality gap to close. A step that leaves w as it
 * was ends the run: no progress is left in double precision. */
#define ST_GLM_LBFGS_FLAT      1e-10
#define ST_GLM_LBFGS_SLOPE     0.9

/* One thread's share of a pass: rows [lo, hi) at the point w. */
typedef struct {
    const st_glm_data_t  *data;
    const double         *c, *w;
    double                bias;     /* > 0: the bias feature's value, weight w[d] */
    double                eps;      /* the SVR models' epsilon */
    int                   step;     /* the model's ST_GLM_STEP_* (its per-row terms) */
    int64_t               d, lo, hi;
    double               *g;        /* d_all + 2: sum_i c_i phi'(z_i) x_i; loss; dual */
} st_glm_lbfgs_part_t;

/* A thread's share of the scaling pass: g_j = sum_i c_i x_ij^2 over its rows (the
 * data term of P's curvature bound at column j, over beta/n). */
static void *st_glm_lbfgs_scale_pass(void *arg)
{
    st_glm_lbfgs_part_t *p    = arg;
    const st_glm_data_t *data = p->data;
    const uint32_t *idx       = data->indices;
    int64_t i, k, end, d_all  = p->d + (p->bias > 0);
    double x;

    memset(p->g, 0, (size_t)(d_all + 2) * sizeof(double));
    for (i = p->lo; i < p->hi; i++) {
        end = data->indptr[i + 1];
        for (k = data->indptr[i]; k < end; k++) {
            x = st_glm_data_val(data, k);
            p->g[idx[k]] += p->c[i] * x * x;
        }
        if (p->bias > 0) {
            p->g[p->d] += p->c[i] * p->bias * p->bias;
        }
    }
    return NULL;
}

static void *st_glm_lbfgs_pass(void *arg)
{
    st_glm_lbfgs_part_t *p    = arg;
    const st_glm_data_t *data = p->data;
    int64_t i, d_all = p->d + (p->bias > 0);
    double z, a, l, cj, loss = 0, conj = 0;

    memset(p->g, 0, (size_t)(d_all + 2) * sizeof(double));
    for (i = p->lo; i < p->hi; i++) {
        z     = st_glm_row_dot(data, i, p->w, 1, p->d, p->bias);
        /* (method newton's terms, inlined: the table's operations are calls) */
        st_glm_newton_terms(p->step, z, data->y[i], p->c[i], p->eps, &a, NULL, &l, &cj);
        loss += l;
        conj += cj;
        if (a != 0) {
            st_glm_row_axpy(data, i, a, p->g, 1, p->d, p->bias);
        }
    }
    p->g[d_all]     = loss;
    p->g[d_all + 1] = conj;
    return NULL;
}

/*
 * st_glm_run_parts' workers: parts 1.. of a call go to threads that persist between
 * calls, started at the first call that needs them (up to ST_GLM_POOL_MAX) and
 * waiting on a condition variable (not spinning: ranks may share cores) in between,
 * so a call costs a wake-up rather than a thread's creation and join (the primal
 * methods make about five calls a CG step). One call at a time: a call made while
 * the workers are busy (another thread's, or from inside a part) starts threads of
 * its own, as does one where a worker cannot start. Each call wakes only the workers
 * it needs (a condition variable each). A forked child starts with none (a fork from
 * inside a part, while the workers are busy, is not supported).
 */
#define ST_GLM_POOL_MAX 255

static struct {
    pthread_mutex_t lock;
    pthread_cond_t  work[ST_GLM_POOL_MAX];   /* worker w: a call for it (gen) */
    pthread_cond_t  done;       /* remaining reached 0 */
    int             busy;       /* a call holds the workers */
    int             workers;    /* started */
    uint64_t        gen;        /* calls handed out */
    uint64_t        seen[ST_GLM_POOL_MAX];   /* the last call each worker took */
    void         *(*fn)(void *);
    char           *parts;
    size_t          size;
    int             n;          /* the call's parts: worker w runs part w + 1 < n */
    int             remaining;  /* parts 1.. not finished */
} st_glm_pool = {.lock = PTHREAD_MUTEX_INITIALIZER, .done = PTHREAD_COND_INITIALIZER};

static pthread_once_t st_glm_pool_once = PTHREAD_ONCE_INIT;

static void st_glm_pool_child(void)   /* after fork(): no workers in the child */
{
    int w;

    pthread_mutex_init(&st_glm_pool.lock, NULL);
    for (w = 0; w < ST_GLM_POOL_MAX; w++) {
        pthread_cond_init(&st_glm_pool.work[w], NULL);
    }
    pthread_cond_init(&st_glm_pool.done, NULL);
    st_glm_pool.busy    = 0;
    st_glm_pool.workers = 0;
}

static void st_glm_pool_init(void)
{
    int w;

    for (w = 0; w < ST_GLM_POOL_MAX; w++) {
        pthread_cond_init(&st_glm_pool.work[w], NULL);
    }
    pthread_atfork(NULL, NULL, st_glm_pool_child);
}

static void *st_glm_pool_worker(void *arg)
{
    const int w = (int)(intptr_t)arg;
    void *(*fn)(void *);
    void *part;

    pthread_mutex_lock(&st_glm_pool.lock);
    for (;;) {
        while (st_glm_pool.seen[w] == st_glm_pool.gen) {
            pthread_cond_wait(&st_glm_pool.work[w], &st_glm_pool.lock);
        }
        st_glm_pool.seen[w] = st_glm_pool.gen;
        if (w + 1 < st_glm_pool.n) {
            fn   = st_glm_pool.fn;
            part = st_glm_pool.parts + (size_t)(w + 1) * st_glm_pool.size;
            pthread_mutex_unlock(&st_glm_pool.lock);
            fn(part);
            pthread_mutex_lock(&st_glm_pool.lock);
            if (--st_glm_pool.remaining == 0) {
                pthread_cond_signal(&st_glm_pool.done);
            }
        }
    }
    return NULL;
}

/* Parts 1.. of a call to the workers, part 0 on the caller. @return 0, or -1 (the
 * workers busy, or too few of them could start: the caller's own threads run it). */
static int st_glm_pool_run(void *(*fn)(void *), void *parts, size_t size, int n)
{
    pthread_attr_t attr;
    pthread_t tid;
    int ok = 1, w;

    pthread_once(&st_glm_pool_once, st_glm_pool_init);
    pthread_mutex_lock(&st_glm_pool.lock);
    if (st_glm_pool.busy || n - 1 > ST_GLM_POOL_MAX) {
        pthread_mutex_unlock(&st_glm_pool.lock);
        return -1;
    }
    if (st_glm_pool.workers < n - 1 && (ok = (pthread_attr_init(&attr) == 0))) {
        ok = (pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED) == 0);
        while (ok && st_glm_pool.workers < n - 1) {
            st_glm_pool.seen[st_glm_pool.workers] = st_glm_pool.gen;   /* (before the call) */
            ok = (pthread_create(&tid, &attr, st_glm_pool_worker,
                                 (void *)(intptr_t)st_glm_pool.workers) == 0);
            st_glm_pool.workers += ok;
        }
        pthread_attr_destroy(&attr);
    }
    if (!ok) {
        pthread_mutex_unlock(&st_glm_pool.lock);
        return -1;
    }
    st_glm_pool.busy      = 1;
    st_glm_pool.fn        = fn;
    st_glm_pool.parts     = parts;
    st_glm_pool.size      = size;
    st_glm_pool.n         = n;
    st_glm_pool.remaining = n - 1;
    st_glm_pool.gen++;
    for (w = 0; w < n - 1; w++) {   /* (the others take the call's number when next woken) */
        pthread_cond_signal(&st_glm_pool.work[w]);
    }
    pthread_mutex_unlock(&st_glm_pool.lock);
    fn(parts);
    pthread_mutex_lock(&st_glm_pool.lock);
    while (st_glm_pool.remaining > 0) {
        pthread_cond_wait(&st_glm_pool.done, &st_glm_pool.lock);
    }
    st_glm_pool.busy = 0;
    pthread_mutex_unlock(&st_glm_pool.lock);
    return 0;
}

void st_glm_run_parts(void *(*fn)(void *), void *parts, size_t size, int n)
{
    pthread_t *threads;
    char *at = parts;
    int k;

    if (n > 1 && st_glm_pool_run(fn, parts, size, n) == 0) {
        return;
    }
    threads = (n > 1) ? malloc((size_t)n * sizeof(*threads)) : NULL;
    for (k = 1; k < n; k++) {
        if (threads == NULL || pthread_create(&threads[k], NULL, fn, at + k * size) != 0) {
            fn(at + k * size);   /* no thread: the caller runs this part first */
            if (threads != NULL) {
                threads[k] = pthread_self();
            }
        }
    }
    fn(at);
    for (k = 1; k < n && threads != NULL; k++) {
        if (!pthread_equal(threads[k], pthread_self())) {
            pthread_join(threads[k], NULL);
        }
    }
    free(threads);
}

/* One thread's chunks [lo, hi) of st_glm_sweep */
typedef struct {
    st_glm_sweep_fn_t fn;
    void             *arg;
    int64_t           len, lo, hi;
    int               nsums;
    double           *part;
} st_glm_sweep_part_t;

static void *st_glm_sweep_part(void *arg)
{
    const st_glm_sweep_part_t *p = arg;
    int64_t c;

    for (c = p->lo; c < p->hi; c++) {
        p->fn(p->arg, c * ST_GLM_CG_CHUNK, ST_MIN(p->len, (c + 1) * ST_GLM_CG_CHUNK),
              (p->part != NULL) ? p->part + c * p->nsums : NULL);
    }
    return NULL;
}

void st_glm_sweep(int threads, int64_t len, int nsums, st_glm_sweep_fn_t fn, void *arg,
                  double *part, double *sums)
{
    st_glm_sweep_part_t parts[ST_GLM_SWEEP_THREADS_MAX];
    int64_t chunks = (len + ST_GLM_CG_CHUNK - 1) / ST_GLM_CG_CHUNK, c;
    double *own = NULL;
    int k, nth;

    assert(nsums >= 0 && nsums <= ST_GLM_SWEEP_SUMS_MAX && (nsums == 0 || sums != NULL ||
                                                            part != NULL));
    if (part == NULL && nsums > 0) {
        own = part = malloc((size_t)ST_MAX(chunks, 1) * (size_t)nsums * sizeof(double));
    }
    nth = (int)ST_MAX(1, ST_MIN(ST_MIN(threads, ST_GLM_SWEEP_THREADS_MAX),
                                chunks / ST_GLM_SWEEP_MIN_CHUNKS));
    if (part == NULL && nsums > 0) {   /* no memory: one thread, the chunks' sums in order */
        double one[ST_GLM_SWEEP_SUMS_MAX];

        for (k = 0; k < nsums; k++) {
            sums[k] = 0;
        }
        for (c = 0; c < chunks; c++) {
            fn(arg, c * ST_GLM_CG_CHUNK, ST_MIN(len, (c + 1) * ST_GLM_CG_CHUNK), one);
            for (k = 0; k < nsums; k++) {
                sums[k] += one[k];
            }
        }
        return;
    }
    for (k = 0; k < nth; k++) {
        parts[k] = (st_glm_sweep_part_t){fn, arg, len, 0, 0, nsums, part};
        st_glm_block_range(chunks, nth, k, &parts[k].lo, &parts[k].hi);
    }
    st_glm_run_parts(st_glm_sweep_part, parts, sizeof(*parts), nth);
    for (k = 0; k < nsums && sums != NULL; k++) {
        sums[k] = 0;
        for (c = 0; c < chunks; c++) {
            sums[k] += part[c * nsums + k];
        }
    }
    free(own);
}

/* st_glm_primal_finish's chunk: g, and the sums of w_j^2 and w(alpha)_j^2 */
typedef struct {
    const double *sum, *w;
    double       *g, n, lambda;
} st_glm_finish_t;

static void st_glm_finish_chunk(void *arg, int64_t lo, int64_t hi, double *part)
{
    const st_glm_finish_t *f = arg;
    double wsq = 0, vsq = 0, v;
    int64_t j;

    for (j = lo; j < hi; j++) {
        f->g[j] = f->sum[j] / f->n + f->lambda * f->w[j];
        v       = f->w[j] - f->g[j] / f->lambda;   /* w(alpha) */
        wsq    += f->w[j] * f->w[j];
        vsq    += v * v;
    }
    part[0] = wsq;
    part[1] = vsq;
}

void st_glm_primal_finish(const double *sum, const double *w, int64_t d_all, double n,
                          double lambda, int threads, double *g, double *f_p,
                          st_glm_objectives_t *obj)
{
    st_glm_finish_t f = {sum, w, g, n, lambda};
    double sq[2];

    st_glm_sweep(threads, d_all, 2, st_glm_finish_chunk, &f, NULL, sq);
    *f_p        = sum[d_all] / n + 0.5 * lambda * sq[0];
    obj->primal = *f_p;
    obj->dual   = sum[d_all + 1] / n - 0.5 * lambda * sq[1];
    obj->gap    = obj->primal - obj->dual;
    obj->radius = 0.0;
}

/* One thread's columns [lo, hi) of st_glm_sum_parts */
typedef struct {
    double *sum;
    int64_t lo, hi, stride;
    int nparts;
} st_glm_sum_slice_t;

static void *st_glm_sum_slice(void *arg)
{
    const st_glm_sum_slice_t *sl = arg;
    double *sum = sl->sum;
    int64_t j;
    int k;

    memcpy(sum + sl->lo, sum + sl->stride + sl->lo, (size_t)(sl->hi - sl->lo) * sizeof(double));
    for (k = 1; k < sl->nparts; k++) {
        for (j = sl->lo; j < sl->hi; j++) {
            sum[j] += sum[sl->stride * (k + 1) + j];
        }
    }
    return NULL;
}

void st_glm_sum_parts(st_glm_round_ctx_t *ctx, double *sum, int64_t count, int nparts,
                      int64_t stride)
{
    st_glm_sum_slice_t one, *sl = &one;
    int k, nsl = 1;

    /* the parts' threads sum slices of the columns (a large d-vector from many threads
     * is as much memory as a pass's), each element in part order: the same bits as
     * one thread. From ST_GLM_SUM_SLICE_PARTS parts: with 2 (2 cores) it measured no
     * faster (Newton on 300k Criteo-like rows, -t 2: 1.76 s against 1.71, medians of
     * 5, alternating) */
    if (nparts >= ST_GLM_SUM_SLICE_PARTS && count >= ST_GLM_SUM_SLICE_MIN * 2) {
        nsl = (int)ST_MIN((int64_t)nparts, count / ST_GLM_SUM_SLICE_MIN);
        sl  = malloc((size_t)nsl * sizeof(*sl));
        if (sl == NULL) {
            sl  = &one;
            nsl = 1;
        }
    }
    for (k = 0; k < nsl; k++) {
        sl[k].sum    = sum;
        sl[k].stride = stride;
        sl[k].nparts = nparts;
        st_glm_block_range(count, nsl, k, &sl[k].lo, &sl[k].hi);
    }
    st_glm_run_parts(st_glm_sum_slice, sl, sizeof(*sl), nsl);
    if (sl != &one) {
        free(sl);
    }
    st_glm_sum_ranks(ctx, sum, count);
}

void st_glm_sum_ranks(st_glm_round_ctx_t *ctx, double *sum, int64_t count)
{
    double t = st_glm_now();

    st_glm_allreduce(ctx->comm, sum, count, MPI_DOUBLE, MPI_SUM);
    ctx->info.comm_seconds += st_glm_now() - t;
}

typedef struct {
    const st_glm_data_t  *data;
    double                lambda;
    int64_t               d_all;
    int                   nparts;
    st_glm_lbfgs_part_t  *parts;
    double               *sum;      /* d_all + 2, summed over threads and ranks */
    st_glm_round_ctx_t   *ctx;
} st_glm_lbfgs_t;

/* P(w) into *f_p, its gradient into g, the certificate into obj (collective). */
static void st_glm_lbfgs_eval(st_glm_lbfgs_t *lb, const double *w, double *f_p, double *g,
                              st_glm_objectives_t *obj)
{
    int k;

    for (k = 0; k < lb->nparts; k++) {
        lb->parts[k].w = w;
    }
    st_glm_run_parts(st_glm_lbfgs_pass, lb->parts, sizeof(*lb->parts), lb->nparts);
    st_glm_sum_parts(lb->ctx, lb->sum, lb->d_all + 2, lb->nparts, lb->d_all + 2);
    st_glm_primal_finish(lb->sum, w, lb->d_all, (double)lb->data->n_rows_global, lb->lambda,
                         lb->nparts, g, f_p, obj);
}

/* p = -H g by the two-loop recursion over the pairs (s, y) kept, oldest first at
 * (first + k) % PAIRS; H0 = gamma M^-1, M^-1's diagonal in @a minv, gamma = s.y /
 * y.M^-1.y from the newest pair (1 without pairs: p = -M^-1 g). */
static void st_glm_lbfgs_direction(int64_t n, const double *g, const double *minv, double *p,
                                   double **s, double **y, const double *rho, int first,
                                   int count, double *alpha)
{
    int64_t j;
    int k, at;
    double beta, ymy = 0, h0 = 1.0;

    for (j = 0; j < n; j++) {
        p[j] = -g[j];
    }
    for (k = count - 1; k >= 0; k--) {
        at       = (first + k) % ST_GLM_LBFGS_PAIRS;
        alpha[k] = rho[at] * st_glm_vdot(s[at], p, n);
        for (j = 0; j < n; j++) {
            p[j] -= alpha[k] * y[at][j];
        }
    }
    if (count > 0) {
        at = (first + count - 1) % ST_GLM_LBFGS_PAIRS;
        for (j = 0; j < n; j++) {
            ymy += y[at][j] * minv[j] * y[at][j];
        }
        h0 = 1.0 / (rho[at] * ymy);
    }
    for (j = 0; j < n; j++) {
        p[j] *= h0 * minv[j];
    }
    for (k = 0; k < count; k++) {
        at   = (first + k) % ST_GLM_LBFGS_PAIRS;
        beta = rho[at] * st_glm_vdot(y[at], p, n);
        for (j = 0; j < n; j++) {
            p[j] += (alpha[k] - beta) * s[at][j];
        }
    }
}

/* The scaling pass's sums into lb->sum (collective): kept from the last training of a
 * memo problem (a C search's fold) where made under the same loss, weights and bias,
 * else made, and kept where the problem is a memo one (every rank keeps it or none). */
static void st_glm_lbfgs_colsq(const st_glm_model_t *loss, const strata_glm_problem_t *prob,
                               const strata_glm_param_t *param, st_glm_lbfgs_t *lb,
                               st_glm_round_ctx_t *ctx)
{
    /* (memo problems are the library's own: st_glm_cv.c's folds) */
    strata_glm_problem_t *own = (strata_glm_problem_t *)prob;
    const double key[3]       = {param->weight_pos, param->weight_neg, param->bias};
    size_t bytes              = (size_t)lb->d_all * sizeof(double);
    double *keep;

    if (prob->memo && prob->colsq != NULL && prob->colsq_loss == (const void *)loss &&
        memcmp(prob->colsq_key, key, sizeof(key)) == 0) {
        memcpy(lb->sum, prob->colsq, bytes);
        return;
    }
    st_glm_run_parts(st_glm_lbfgs_scale_pass, lb->parts, sizeof(*lb->parts), lb->nparts);
    st_glm_sum_parts(ctx, lb->sum, lb->d_all, lb->nparts, lb->d_all + 2);
    if (!prob->memo) {
        return;
    }
    keep = realloc(prob->colsq, ST_MAX(bytes, 1));
    if (!st_glm_agree(ctx->comm, keep != NULL)) {   /* (else a rank would skip a sum alone) */
        keep = (keep != NULL) ? keep : prob->colsq;
        free(keep);
        own->colsq = NULL;
        return;
    }
    memcpy(keep, lb->sum, bytes);
    memcpy(own->colsq_key, key, sizeof(key));
    own->colsq      = keep;
    own->colsq_loss = loss;
}

strata_status_t st_glm_train_lbfgs(const st_glm_model_t *loss, const strata_glm_problem_t *prob,
                                   const strata_glm_param_t *param, MPI_Comm comm, char *msg,
                                   size_t msg_len, strata_glm_model_t *model)
{
    const st_glm_data_t *data = prob->data;
    st_glm_lbfgs_t lb;
    st_glm_round_ctx_t ctx;
    st_glm_objectives_t obj, objn;
    int64_t d = data->n_cols, d_all = d + (param->bias > 0), m = data->n_rows, i, j;
    double *c = NULL, *w = NULL, *g = NULL, *wn = NULL, *gn = NULL, *p = NULL, *mem = NULL;
    double *minv = NULL;
    double *s[ST_GLM_LBFGS_PAIRS], *y[ST_GLM_LBFGS_PAIRS], rho[ST_GLM_LBFGS_PAIRS];
    double alpha[ST_GLM_LBFGS_PAIRS], f, fn, gp, dn, t, q, sy;
    strata_status_t status = STRATA_OK;
    int k, first = 0, count = 0, ok, tries, flat, moved, warm;

    memset(&lb, 0, sizeof(lb));
    memset(&ctx, 0, sizeof(ctx));
    ctx.comm    = comm;
    ctx.param   = param;
    st_glm_comm_shape(comm, &ctx.rank, NULL);   /* (MPI_COMM_NULL: rank 0 of 1) */
    lb.data     = data;
    lb.lambda   = param->lambda;
    lb.d_all    = d_all;
    lb.nparts   = (int)ST_MAX(1, ST_MIN(param->threads, ST_MAX(m, 1)));
    lb.ctx      = &ctx;
    c           = malloc((size_t)ST_MAX(m, 1) * sizeof(double));
    lb.parts    = calloc((size_t)lb.nparts, sizeof(*lb.parts));
    /* w g wn gn p minv, the sum, a gradient per thread, the pairs */
    mem = malloc((size_t)(d_all * (6 + 2 * ST_GLM_LBFGS_PAIRS) + (d_all + 2) * (1 + lb.nparts)) *
                 sizeof(double));
    ok  = (c != NULL && lb.parts != NULL && mem != NULL);
    if (!st_glm_agree(comm, ok)) {
        st_glm_msg(msg, msg_len, "out of memory for L-BFGS (%lld features)", (long long)d_all);
        free(c);
        free(lb.parts);
        free(mem);
        return STRATA_ERR_NO_MEMORY;
    }
    w      = mem;
    g      = w + d_all;
    wn     = g + d_all;
    gn     = wn + d_all;
    p      = gn + d_all;
    minv   = p + d_all;
    lb.sum = minv + d_all;
    for (k = 0; k < lb.nparts; k++) {
        lb.parts[k].eps  = st_glm_model_eps(loss, param);
        lb.parts[k].step = st_glm_model_step(loss);
        lb.parts[k].data = data;
        lb.parts[k].c    = c;
        lb.parts[k].bias = param->bias;
        lb.parts[k].d    = d;
        st_glm_block_range(m, lb.nparts, k, &lb.parts[k].lo, &lb.parts[k].hi);
        lb.parts[k].g    = lb.sum + (d_all + 2) * (k + 1);
    }
    s[0] = lb.sum + (d_all + 2) * (lb.nparts + 1);
    for (k = 0; k < ST_GLM_LBFGS_PAIRS; k++) {
        s[k] = s[0] + 2 * d_all * k;
        y[k] = s[k] + d_all;
    }
    for (i = 0; i < m; i++) {
        c[i] = st_glm_example_weight(loss, param, data->y[i]);
    }
    /* from a starting model's weights (strata_glm_train_from), or 0 */
    memcpy(w, model->w, (size_t)d_all * sizeof(double));

    if (param->verbose && ctx.rank == 0) {
        st_glm_print("L-BFGS on the primal (%d pairs), %d thread(s) per rank\n",
                     ST_GLM_LBFGS_PAIRS, lb.nparts);
    }
    ctx.t_start = st_glm_now();
    /* M: P's curvature bound on the diagonal, lambda + (beta / n) sum_i c_i x_ij^2,
     * so that the steps do not depend on the features' scales (a feature of 1e12
     * next to ones of 1: with M = I no step lowers P in double precision) */
    st_glm_lbfgs_colsq(loss, prob, param, &lb, &ctx);
    for (j = 0; j < d_all; j++) {
        minv[j] = 1.0 / (param->lambda +
                         loss->smoothness * lb.sum[j] / (double)data->n_rows_global);
        if (!(minv[j] > 0) && status == STRATA_OK) {   /* the same j on every rank */
            st_glm_msg(msg, msg_len, "%sfeature %lld%s: its values are too large for double "
                       "precision (the sum of their squares%s overflows); %s%s",
                       j == d ? "the bias, " : "",
                       (long long)j + 1,   /* the file's index (bias -B: d + 1) */
                       j == d ? " (-B)" : "",
                       st_glm_weighted(param) ? ", times the class weights," : "",
                       j == d ? "give a smaller bias" : "scale them",
                       st_glm_weighted(param) ? ", or lower the class weights" : "");
            status = STRATA_ERR_UNSUPPORTED;
        }
    }
    st_glm_lbfgs_eval(&lb, w, &f, g, &obj);
    ctx.info.primal    = obj.primal;
    ctx.info.dual      = obj.dual;
    ctx.info.gap       = ST_MAX(obj.gap, 0.0);
    warm   = !st_glm_all_zero(w, d_all);
    ctx.p0 = warm ? st_glm_primal_zero(loss, data, c, st_glm_model_eps(loss, param), comm)
                  : 0.0;
    /* w = 0 is never the answer (st_glm_newton.c says why); a start may be, and a gap
       of 0 (no features) is */
    ctx.info.converged = st_glm_converged(&ctx, &obj) && (warm || obj.gap <= 0);
    while (status == STRATA_OK && !ctx.info.converged && !st_glm_mpi_failed()) {
        /* the direction; a step that does not descend (rounding) restarts the memory */
        st_glm_lbfgs_direction(d_all, g, minv, p, s, y, rho, first, count, alpha);
        gp = st_glm_vdot(g, p, d_all);
        if (!(gp < 0)) {
            count = 0;
            for (j = 0; j < d_all; j++) {
                p[j] = -minv[j] * g[j];
            }
            gp = st_glm_vdot(g, p, d_all);
        }
        if (!(gp < 0)) {
            break;   /* a zero gradient: w is the optimum */
        }
        /* the first step without curvature pairs: -M^-1 g, Newton's step where the
         * curvature is M's bound, and no longer than the step that would reach 0 (the
         * objective's lower bound) by the gradient's slope, twice over (Polyak's).
         * Each shorter step at the minimum of the parabola through f, gp and fn,
         * within [t/10, t/2]. */
        t = (count > 0) ? 1.0 : fmin(1.0, 2.0 * f / -gp);
        for (tries = 0; tries <= ST_GLM_LBFGS_BACKTRACK; tries++) {
            for (j = 0; j < d_all; j++) {
                wn[j] = w[j] + t * p[j];
            }
            st_glm_lbfgs_eval(&lb, wn, &fn, gn, &objn);
            flat = -ST_GLM_LBFGS_ARMIJO * t * gp <= ST_GLM_LBFGS_FLAT * fabs(f);
            dn   = st_glm_vdot(gn, p, d_all);
            if (flat ? (fn <= f + ST_GLM_LBFGS_FLAT * fabs(f) && dn <= ST_GLM_LBFGS_SLOPE * -gp &&
                        (dn >= ST_GLM_LBFGS_SLOPE * gp || tries == 0))
                     : (fn <= f + ST_GLM_LBFGS_ARMIJO * t * gp)) {
                break;
            }
            q = (flat && isfinite(dn) && dn > 0) ? t * -gp / (dn - gp)   /* slope's zero */
                : (isfinite(fn) && fn - f - gp * t > 0) ? -gp * t * t / (2 * (fn - f - gp * t))
                                                        : 0.1 * t;
            t = fmin(fmax(q, 0.1 * t), 0.5 * t);
        }
        if (tries > ST_GLM_LBFGS_BACKTRACK && count > 0) {
            /* stale curvature pairs (the squared hinge is quadratic only piecewise: a
               pair from another piece can make the direction useless): drop them and
               search along -M^-1 g before giving up (before: sqsvm runs stopped at
               relative gaps of 1e-4 to 1e-1) */
            count = 0;
            continue;
        }
        if (tries > ST_GLM_LBFGS_BACKTRACK) {
            /* (a start that no step lowers stays, as below: a search's warm start at
               an optimum that double precision cannot move from) */
            if (ctx.info.rounds == 0 && isfinite(f) && !warm) {   /* infinite: the caller's */
                st_glm_msg(msg, msg_len, "L-BFGS found no step that lowers the objective "
                           "from w = 0 (features too large for double precision? scale "
                           "them, or --method newton)");
                status = STRATA_ERR_UNSUPPORTED;
            }
            break;   /* no decrease left in double precision: w stays */
        }
        /* the new pair: s = wn - w, y = gn - g */
        k = (count < ST_GLM_LBFGS_PAIRS) ? (first + count) % ST_GLM_LBFGS_PAIRS : first;
        moved = 0;
        for (j = 0; j < d_all; j++) {
            s[k][j] = wn[j] - w[j];
            y[k][j] = gn[j] - g[j];
            moved  |= (s[k][j] != 0);
        }
        if (!moved) {
            break;   /* the step changed no weight: w stays (the same on every rank) */
        }
        sy = st_glm_vdot(s[k], y[k], d_all);
        if (sy > 0) {
            rho[k] = 1.0 / sy;
            if (count < ST_GLM_LBFGS_PAIRS) {
                count++;
            } else {
                first = (first + 1) % ST_GLM_LBFGS_PAIRS;
            }
        } else if (count == ST_GLM_LBFGS_PAIRS) {
            /* no curvature (rounding): the oldest pair, overwritten, is dropped */
            first = (first + 1) % ST_GLM_LBFGS_PAIRS;
            count--;
        }
        memcpy(w, wn, (size_t)d_all * sizeof(double));
        memcpy(g, gn, (size_t)d_all * sizeof(double));
        f = fn;
        st_glm_round_end(&ctx, &objn);
        if (ctx.info.converged || ctx.info.rounds >= param->max_rounds) {
            break;
        }
    }
    memcpy(model->w, w, (size_t)d_all * sizeof(double));
    model->info = ctx.info;
    free(c);
    free(lb.parts);
    free(mem);
    return status;
}
