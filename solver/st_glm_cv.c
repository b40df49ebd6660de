/*
 * K-fold cross-validation (strata_glm_cross_validate; strata-train -v), LIBLINEAR's
 * train -v: the rows over all ranks are dealt into K folds by a keyed permutation of
 * their global indices (st_glm_cv_fold: the same folds whatever the rank count), a
 * model trained on the other K - 1 folds scores each fold's rows, and the metrics are
 * those of every row's out-of-fold score, as strata_glm_evaluate computes them. Each
 * fold's training is an ordinary collective strata_glm_train over the same ranks,
 * each rank holding its own rows of the fold's complement.
 */
#include "config.h"

#include "st_glm.h"
#include "st_glm_mem.h"
#include "st_glm_perm.h"

#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A copy of the @a n values at @a v (NULL or none: NULL); *ok_p cleared without
 * memory. */
static double *st_glm_cv_copy(const double *v, int n, int *ok_p)
{
    double *c;

    if (v == NULL || n == 0) {
        return NULL;
    }
    c = malloc((size_t)n * sizeof(double));
    if (c == NULL) {
        *ok_p = 0;
        return NULL;
    }
    return memcpy(c, v, (size_t)n * sizeof(double));
}

/* The rows of @a src whose fold is (@a in) or is not (!in) @a k, as a problem over the
 * same ranks (collective: the global counts; every rank returns the same status). */
static st_status_t st_glm_cv_rows(const strata_glm_problem_t *src, const int *fold, int k,
                                  int in, MPI_Comm comm, strata_glm_problem_t **dst_p)
{
    const st_glm_data_t *s = src->data;
    strata_glm_problem_t *dst = NULL;
    st_glm_data_t *d = NULL;
    int64_t i, rows = 0, nnz = 0, o = 0, len;
    int ok = 1;

    for (i = 0; i < s->n_rows; i++) {
        if ((fold[i] == k) == in) {
            rows++;
            nnz += s->indptr[i + 1] - s->indptr[i];
        }
    }
    if (st_glm_data_alloc(rows, nnz, s->prec, &d) == ST_OK &&
        (dst = calloc(1, sizeof(*dst))) == NULL) {
        st_glm_data_free(d);
        d = NULL;
    }
    if (!st_glm_agree(comm, d != NULL)) {
        st_glm_data_free(d);
        free(dst);
        return ST_ERR_NO_MEMORY;
    }
    for (rows = 0, i = 0; i < s->n_rows; i++) {
        if ((fold[i] == k) != in) {
            continue;
        }
        len = s->indptr[i + 1] - s->indptr[i];
        memcpy(&d->indices[o], &s->indices[s->indptr[i]], (size_t)len * sizeof(uint32_t));
        if (s->prec == 32) {
            memcpy(&d->val32[o], &s->val32[s->indptr[i]], (size_t)len * sizeof(float));
        } else {
            memcpy(&d->val64[o], &s->val64[s->indptr[i]], (size_t)len * sizeof(double));
        }
        o                  += len;
        d->y[rows++]        = s->y[i];
        d->indptr[rows]     = o;
    }
    st_glm_data_set_global(d, comm);
    d->n_cols        = s->n_cols;   /* every fold's model has the data's features */
    d->zero_one      = s->zero_one;
    d->label_kind    = s->label_kind;
    d->format        = s->format;
    dst->data        = d;
    dst->regression  = src->regression;
    /* every fold's model has the data's classes, in the data's order, so that the
     * folds' scores mean the same (LIBLINEAR's folds find their own) */
    dst->named        = src->named;
    dst->nr_class     = src->nr_class;
    dst->classes      = st_glm_cv_copy(src->classes, src->nr_class, &ok);
    dst->class_weight = st_glm_cv_copy(src->class_weight, src->nr_class, &ok);
    if (!st_glm_agree(comm, ok)) {
        strata_glm_problem_free(dst);
        return ST_ERR_NO_MEMORY;
    }
    *dst_p           = dst;
    return ST_OK;
}

/* A class and its place in the model's order (st_glm_cv_present's lookups). */
typedef struct {
    double label;
    int    c;
} st_glm_cv_class_t;

static int st_glm_cv_class_cmp(const void *a, const void *b)
{
    double x = ((const st_glm_cv_class_t *)a)->label, y = ((const st_glm_cv_class_t *)b)->label;

    return (x > y) - (x < y);
}

/* LIBLINEAR's folds know the classes of their training rows alone (its train groups
 * them afresh): a class that @a train's rows lack is never predicted for @a test's rows,
 * and a fold of one class predicts that class for every row. Strata's folds keep the
 * data's classes (so that their scores mean the same), so the scores @a z of @a test's
 * rows are made so (st_glm_predict_present) where a class is absent (before: a class of
 * one example, left out of its fold's training rows, could still be predicted for it,
 * and counted right: -v accuracies above LIBLINEAR's). Collective; ST_ERR_NO_MEMORY on
 * every rank, or ST_OK. */
static st_status_t st_glm_cv_present(const strata_glm_problem_t *train,
                                     const strata_glm_model_t *model,
                                     const strata_glm_problem_t *test, double *z,
                                     MPI_Comm comm)
{
    int k = strata_glm_model_classes(model, NULL), c, all = 1, *present = NULL;
    st_glm_cv_class_t *sorted = NULL, key, *hit;
    const st_glm_data_t *d = train->data;
    int64_t *count = NULL, i;
    st_status_t status = ST_OK;

    if (k < 2) {
        return ST_OK;   /* (regression; a model of one class predicts it already) */
    }
    count   = calloc((size_t)k, sizeof(*count));
    present = malloc((size_t)k * sizeof(*present));
    sorted  = (model->nr_class > 0) ? malloc((size_t)k * sizeof(*sorted)) : NULL;
    if (!st_glm_agree(comm, count != NULL && present != NULL &&
                            (model->nr_class == 0 || sorted != NULL))) {
        status = ST_ERR_NO_MEMORY;
        goto out;
    }
    for (c = 0; sorted != NULL && c < k; c++) {
        sorted[c].label = model->labels[c];
        sorted[c].c     = c;
    }
    if (sorted != NULL) {
        qsort(sorted, (size_t)k, sizeof(*sorted), st_glm_cv_class_cmp);
    }
    for (i = 0; i < d->n_rows; i++) {
        if (sorted == NULL) {   /* (1 and -1, or 0: +1 the first) */
            count[d->y[i] > 0 ? 0 : 1]++;
            continue;
        }
        key.label = d->y[i];
        hit       = bsearch(&key, sorted, (size_t)k, sizeof(*sorted), st_glm_cv_class_cmp);
        if (hit != NULL) {
            count[hit->c]++;
        }
    }
    st_glm_allreduce(comm, count, k, MPI_INT64_T, MPI_SUM);
    for (c = 0; c < k; c++) {
        present[c] = (count[c] > 0);
        all       &= present[c];
    }
    if (!all) {
        status = st_glm_predict_present(model, test, present, z);
    }
out:
    free(sorted);
    free(present);
    free(count);
    return status;
}

/* a search's folds kept between its C's up to this many bytes a rank (the copies of
   every fold's rows: the folds' count times the data), else made again for each C */
#define ST_GLM_CV_KEEP_BYTES (256.0 * 1024 * 1024)

/* The folds' rows as problems, kept through a search (st_glm_cv_search): a training set
 * and a test set a fold, and each row's fold, made on first use; NULL arrays where not
 * kept. */
typedef struct {
    strata_glm_problem_t **train, **test;
    int                   *fold;
} st_glm_cv_folds_t;

static long st_glm_cv_kept;   /* searches that kept their folds (tests) */

long st_glm_cv_kept_searches(void)
{
    return __atomic_load_n(&st_glm_cv_kept, __ATOMIC_RELAXED);
}

/* Collective: @a cache's arrays for @a folds folds of @a prob where every rank's copies
 * fit ST_GLM_CV_KEEP_BYTES and every host's take at most half its available memory (the
 * ranks agree), else NULL (made for each C as by strata_glm_cross_validate). */
static void st_glm_cv_folds_init(st_glm_cv_folds_t *cache, const strata_glm_problem_t *prob,
                                 int folds, MPI_Comm comm)
{
    const st_glm_data_t *d = prob->data;
    const char *str;
    double bytes = (double)folds * ((double)d->nnz * (4.0 + d->prec / 8) +
                                    (double)d->n_rows * 16.0), host[2];
    int keep = (bytes <= ST_GLM_CV_KEEP_BYTES);

    st_glm_mem_host(comm, keep ? bytes : 0, ST_MAX(st_glm_mem_env(&str), -1), host);
    keep = keep && host[0] <= 0.5 * host[1];

    cache->fold  = NULL;
    cache->train = keep ? calloc((size_t)folds, sizeof(*cache->train)) : NULL;
    cache->test  = keep ? calloc((size_t)folds, sizeof(*cache->test)) : NULL;
    if (!st_glm_agree(comm, cache->train != NULL && cache->test != NULL)) {
        free(cache->train);
        free(cache->test);
        cache->train = cache->test = NULL;
    } else {
        __atomic_fetch_add(&st_glm_cv_kept, 1, __ATOMIC_RELAXED);
    }
}

static void st_glm_cv_folds_free(st_glm_cv_folds_t *cache, int folds)
{
    int k;

    for (k = 0; cache->train != NULL && k < folds; k++) {
        strata_glm_problem_free(cache->train[k]);
        strata_glm_problem_free(cache->test[k]);
    }
    free(cache->train);
    free(cache->test);
    free(cache->fold);
}

/* strata_glm_cross_validate, each fold's training started from @a fold_models[k]
 * (strata_glm_train_from; NULL entries: from 0), whose models then replace them; NULL:
 * every fold from 0, no model kept. The folds' rows from @a cache where it keeps them
 * (made there on first use), else made for this call (@a cache NULL too). */
static strata_status_t st_glm_cv_run(const strata_glm_problem_t *prob,
                                     const strata_glm_param_t *param, int folds, double cost,
                                     MPI_Comm comm, char *msg, size_t msg_len, double *scores,
                                     strata_glm_info_t *infos, strata_glm_metrics_t *metrics_p,
                                     strata_glm_model_t **fold_models, st_glm_cv_folds_t *cache)
{
    strata_glm_problem_t *train = NULL, *test = NULL;
    int kept = (cache != NULL && cache->train != NULL);
    strata_glm_model_t *model = NULL, *last = NULL;
    strata_glm_param_t p;
    st_glm_perm_t perm;
    const st_glm_data_t *d;
    st_status_t status = ST_OK, local = ST_OK, st;
    double *z = NULL, *oof = NULL;
    int64_t i, t, n;
    int *fold = NULL, k;
    const char *why;
    char why_fold[1024];

    if (prob == NULL || prob->data == NULL || param == NULL || metrics_p == NULL) {
        st_glm_msg(msg, msg_len, "no problem, parameters or metrics");
        return STRATA_ERR_INVALID_PARAM;
    }
    if ((why = strata_glm_check_param(param)) != NULL) {
        st_glm_msg(msg, msg_len, "%s", why);
        return STRATA_ERR_INVALID_PARAM;
    }
    d = prob->data;
    n = d->n_rows_global;
    if (n > INT_MAX) {   /* (before the folds: the metrics' gather counts in int) */
        st_glm_msg(msg, msg_len, "%lld examples: the metrics are gathered on rank 0, at "
                   "most 2^31 - 1 examples", (long long)n);
        return STRATA_ERR_UNSUPPORTED;
    }
    if (n < 2) {   /* (before: "needs 2 to 1 folds") */
        st_glm_msg(msg, msg_len, "%lld example(s): cross-validation needs 2 examples or more "
                   "(a fold each at least)", (long long)n);
        return STRATA_ERR_INVALID_PARAM;
    }
    if (folds < 2 || (int64_t)folds > n) {
        st_glm_msg(msg, msg_len, "%d folds of %lld examples: cross-validation needs 2 to "
                   "%lld folds (at least one example each)", folds, (long long)n,
                   (long long)n);
        return STRATA_ERR_INVALID_PARAM;
    }
    if (param->checkpoint_every > 0 || param->resume) {
        st_glm_msg(msg, msg_len, "cross-validation keeps no checkpoints (checkpoint_every, "
                   "resume)");
        return STRATA_ERR_INVALID_PARAM;
    }
    if (!(cost >= 0) || isinf(cost)) {
        st_glm_msg(msg, msg_len, "cost %g: finite and > 0 (LIBLINEAR's C), or 0 for "
                   "param->lambda", cost);
        return STRATA_ERR_INVALID_PARAM;
    }
    fold = (kept && cache->fold != NULL) ? cache->fold
                                         : malloc((size_t)ST_MAX(d->n_rows, 1) * sizeof(*fold));
    z    = malloc((size_t)ST_MAX(d->n_rows, 1) * sizeof(*z));
    oof  = scores ? scores : malloc((size_t)ST_MAX(d->n_rows, 1) * sizeof(*oof));
    if (!st_glm_agree(comm, fold != NULL && z != NULL && oof != NULL)) {
        st_glm_msg(msg, msg_len, "out of memory");
        status = STRATA_ERR_NO_MEMORY;
        goto out;
    }
    if (!kept || cache->fold == NULL) {   /* (every C's the same: param->seed's) */
        st_glm_cv_perm(&perm, (uint64_t)n, param->seed);
        for (i = 0; i < d->n_rows; i++) {
            fold[i] = st_glm_cv_fold(&perm, folds, (uint64_t)(d->row_offset + i));
        }
        if (kept) {
            cache->fold = fold;
        }
    }
    for (k = 0; k < folds; k++) {
        if (kept && cache->train[k] != NULL) {
            train = cache->train[k];
            test  = cache->test[k];
        } else {
            status = st_glm_cv_rows(prob, fold, k, 0, comm, &train);
            if (status == ST_OK) {
                status = st_glm_cv_rows(prob, fold, k, 1, comm, &test);
            }
            if (status != ST_OK) {
                st_glm_msg(msg, msg_len, "fold %d of %d: out of memory", k + 1, folds);
                strata_glm_problem_free(train);   /* (the training set, the test's failed) */
                train = NULL;
                goto out;
            }
            if (kept) {   /* (the search's next C's) */
                cache->train[k] = train;
                cache->test[k]  = test;
                /* (their rows are prob's, which st_glm_cv_search_check checked at this
                   bias, the search's; trained at every C) */
                train->rows_fine      = 1;
                train->rows_fine_bias = param->bias;
                train->memo           = 1;
            }
        }
        p = *param;
        if (cost > 0) {   /* C sum of the losses over the fold's training rows */
            p.lambda = 1.0 / (cost * (double)train->data->n_rows_global);
            if (!(p.lambda > 0) || isinf(p.lambda)) {
                /* (named as given, not as a lambda the caller never gave) */
                st_glm_msg(msg, msg_len, "fold %d of %d: C %g: lambda = 1/(C n) = 1/(%g x "
                           "%lld) is %g, beyond double precision: give a C nearer 1", k + 1,
                           folds, cost, cost, (long long)train->data->n_rows_global,
                           p.lambda);
                status = STRATA_ERR_INVALID_PARAM;
                goto out;
            }
            if ((why = strata_glm_check_param(&p)) != NULL) {
                st_glm_msg(msg, msg_len, "fold %d of %d: %s", k + 1, folds, why);
                status = STRATA_ERR_INVALID_PARAM;
                goto out;
            }
        }
        strata_glm_model_free(model);
        model  = NULL;
        /* (the trainer's message into a buffer of ours: the caller's msg is never read,
           and msg_len 0 lets nothing be written there) */
        why_fold[0] = '\0';
        status      = strata_glm_train_from(train, &p, comm, why_fold, sizeof(why_fold),
                                            fold_models ? fold_models[k] : NULL, &model);
        if (status != STRATA_OK) {
            st_glm_msg(msg, msg_len, "fold %d of %d: %s", k + 1, folds, why_fold);
            goto out;
        }
        if (infos != NULL) {
            infos[k] = model->info;
        }
        /* (this rank's alone: more than two classes allocate; agreed on with the
           metrics) */
        if ((st = strata_glm_predict(model, test, z)) != ST_OK) {
            local = st;
        }
        if ((st = st_glm_cv_present(train, model, test, z, comm)) != ST_OK) {
            local = st;
        }
        for (t = 0, i = 0; i < d->n_rows; i++) {
            if (fold[i] == k) {
                oof[i] = z[t++];
            }
        }
        if (fold_models != NULL) {   /* (the next start of this fold) */
            strata_glm_model_free(fold_models[k]);
            fold_models[k] = model;
            last           = model;
            model          = NULL;
        }
        if (!kept) {
            strata_glm_problem_free(train);
            strata_glm_problem_free(test);
        }
        train = test = NULL;
    }
    /* (the last fold's model stands for the model kind and its class names) */
    status = st_glm_evaluate_scores(model ? model : last, prob, oof, local, comm, metrics_p);
    if (status != ST_OK) {
        st_glm_msg(msg, msg_len, "cannot compute the metrics: %s",
                   strata_status_string(status));
    }
out:
    strata_glm_model_free(model);
    if (!kept) {
        strata_glm_problem_free(train);
        strata_glm_problem_free(test);
    }
    if (!kept || fold != cache->fold) {   /* (kept: once computed) */
        free(fold);
    }
    free(z);
    if (oof != scores) {
        free(oof);
    }
    return status;
}

static strata_status_t st_glm_cross_validate_body(const strata_glm_problem_t *prob,
                                                  const strata_glm_param_t *param, int folds,
                                                  double cost, MPI_Comm comm, char *msg,
                                                  size_t msg_len, double *scores,
                                                  strata_glm_info_t *infos,
                                                  strata_glm_metrics_t *metrics_p)
{
    strata_status_t status;

    /* (here, not in st_glm_cv_run: the searches ask once, st_glm_cv_search_check) */
    if (prob != NULL && prob->data != NULL &&
        ((status = st_glm_problem_on(prob, comm, msg, msg_len)) != STRATA_OK ||
         (status = st_glm_params_agree(param, (const double[]){folds, cost}, 2, comm, msg,
                                       msg_len)) != STRATA_OK)) {
        return status;
    }
    return st_glm_cv_run(prob, param, folds, cost, comm, msg, msg_len, scores, infos,
                         metrics_p, NULL, NULL);
}

ST_EXPORT strata_status_t strata_glm_cross_validate(const strata_glm_problem_t *prob,
                                                    const strata_glm_param_t *param, int folds,
                                                    double cost, MPI_Comm comm, char *msg,
                                                    size_t msg_len, double *scores,
                                                    strata_glm_info_t *infos,
                                                    strata_glm_metrics_t *metrics_p)
{
    st_glm_mpi_enter();
    return st_glm_mpi_leave(st_glm_cross_validate_body(prob, param, folds, cost, comm, msg,
                                                       msg_len, scores, infos, metrics_p),
                            msg, msg_len);
}

/* The search's first C (LIBLINEAR's calc_start_C, collective): the power of two at or
 * below 1/(n max_i ||x_i||^2) for logistic, 1/(2 n max_i ||x_i||^2) for the other L2
 * models and elastic net without its L1 part (the bias counted in ||x_i||); for the
 * L1 models, at or below 1/(n lambda_max), lambda_max = ||X^T (c phi'(0, y))||_inf /
 * (n eta), the smallest lambda whose model is w = 0 (so the search starts where the
 * model does, not among C's that all give 0); of named classes, the largest over the
 * binary models trained (one class against the rest each); for svr and sqsvr,
 * LIBLINEAR's for -s 11 (below), INFINITY where epsilon is beyond every |y_i| (w = 0 at
 * every C: the last C alone). 0 where that is not a positive normal number, -1 without
 * memory. */
static double st_glm_cv_start_c(const st_glm_model_t *loss, const strata_glm_problem_t *prob,
                                const strata_glm_param_t *param, MPI_Comm comm)
{
    const st_glm_data_t *d = prob->data;
    double n = (double)d->n_rows_global, b = (param->bias > 0) ? param->bias : 0, u, c;
    double eta = st_glm_model_eta(loss, param->eta), *g, m = 0, y;
    int64_t i, k, cols = d->n_cols + (b > 0);
    int cls, models = !prob->named ? 1 : (prob->nr_class > 2) ? prob->nr_class : 1;

    if (loss->form == ST_GLM_FORM_DUAL || eta == 0) {
        for (i = 0; i < d->n_rows; i++) {
            m = fmax(m, st_glm_data_row_sqnorm(d, i) + b * b);
        }
        st_glm_allreduce(comm, &m, 1, MPI_DOUBLE, MPI_MAX);
        /* (divided in turn: n m overflows where the rows' squares near it, features
           of 1e153, and the start C was 0: "no C to start from") */
        c = 1.0 / ((loss->kind == ST_GLM_LOGISTIC ? 1.0 : 2.0) * n) / m;
        if (loss->kind == ST_GLM_SVR || loss->kind == ST_GLM_SQSVR) {
            /* LIBLINEAR's for -s 11: 0.1^2 sum_i max(0, |y_i| - eps)^2 / (8 (sum_i
               |y_i|)^2 max ||x_i||^2); no loss at w = 0 (eps beyond every |y_i|: w = 0
               at every C) starts at the last C */
            double sums[2] = {0, 0}, e;

            for (i = 0; i < d->n_rows; i++) {
                e        = fmax(0.0, fabs(d->y[i]) - param->epsilon);
                sums[0] += e * e;
                sums[1] += fabs(d->y[i]);
            }
            st_glm_allreduce(comm, sums, 2, MPI_DOUBLE, MPI_SUM);
            c = (sums[0] > 0) ? 0.01 * (sums[0] / sums[1]) / sums[1] / 8.0 / m : INFINITY;
            if (isinf(c)) {
                return c;   /* (the last C alone, as LIBLINEAR's) */
            }
        }
    } else {
        g = calloc((size_t)cols + 1, sizeof(*g));
        if (!st_glm_agree(comm, g != NULL)) {
            free(g);
            return -1;
        }
        for (cls = 0; cls < models; cls++) {
            memset(g, 0, (size_t)cols * sizeof(*g));
            for (i = 0; i < d->n_rows; i++) {
                y = !prob->named ? d->y[i] : (d->y[i] == prob->classes[cls]) ? 1.0 : -1.0;
                /* (an L1 model: no epsilon) */
                u = st_glm_example_weight(loss, param, y) * loss->dloss(0.0, y, 0.0);
                for (k = d->indptr[i]; k < d->indptr[i + 1]; k++) {
                    g[d->indices[k]] += u * st_glm_data_val(d, k);
                }
                g[cols - 1] += (b > 0) ? u * b : 0.0;
            }
            st_glm_allreduce(comm, g, cols, MPI_DOUBLE, MPI_SUM);
            for (k = 0; k < cols; k++) {
                m = fmax(m, fabs(g[k]));
            }
        }
        free(g);
        c = eta / m;   /* lambda_max = m / (n eta); C = 1 / (n lambda_max) */
    }
    if (!(isfinite(c) && c > 0) && !(c == 0 && m > 0)) {
        return 0;   /* (no features, no gradient) */
    }
    /* at least DBL_MIN, 2^-1022: below it a fold's lambda n = 1 / C overflows (before:
       a C that underflowed to a subnormal or 0 read as "no C to start from") */
    return pow(2.0, floor(log2(fmax(c, DBL_MIN))));
}

/* The best of a search so far (st_glm_cv_search). */
typedef struct {
    int                  found;
    double               c, eps, score, unconverged_c;
    strata_glm_metrics_t m;
} st_glm_cv_best_t;

/* A search's arguments, checked (collective: every rank the same); its loss into
 * *@a loss_p. */
static strata_status_t st_glm_cv_search_check(const strata_glm_problem_t *prob,
                                              const strata_glm_param_t *param, int folds,
                                              double start_c, double max_c, double start_eps,
                                              MPI_Comm comm, char *msg, size_t msg_len,
                                              const double *best_c_p,
                                              const strata_glm_metrics_t *best_p,
                                              const st_glm_model_t **loss_p)
{
    strata_glm_metrics_t m;
    strata_status_t status;
    const char *why;

    if (prob == NULL || prob->data == NULL || param == NULL || best_c_p == NULL ||
        best_p == NULL) {
        st_glm_msg(msg, msg_len, "no problem, parameters or result");
        return STRATA_ERR_INVALID_PARAM;
    }
    if ((status = st_glm_problem_on(prob, comm, msg, msg_len)) != STRATA_OK ||
        (status = st_glm_params_agree(param, (const double[]){folds, start_c, max_c, start_eps},
                                      4, comm, msg, msg_len)) != STRATA_OK) {
        return status;
    }
    if ((why = strata_glm_check_param(param)) != NULL ||
        (*loss_p = st_glm_model_lookup(param->solver, NULL, 0)) == NULL) {
        st_glm_msg(msg, msg_len, "%s", why ? why : "no such model");
        return STRATA_ERR_INVALID_PARAM;
    }
    if (!(start_c >= 0) || !(max_c > 0) || isinf(max_c)) {
        st_glm_msg(msg, msg_len, "C from %g to %g: the start must be 0 (from the data) or "
                   "positive, the end positive and finite", start_c, max_c);
        return STRATA_ERR_INVALID_PARAM;
    }
    if (folds < 2 || (int64_t)folds > prob->data->n_rows_global) {
        /* (its refusal, before the folds' infos are allocated) */
        return strata_glm_cross_validate(prob, param, folds, 1, comm, msg, msg_len, NULL,
                                         NULL, &m);
    }
    /* (before the first C, which the rows' norms give: an infinite one is not "no
       features"; the folds' rows are these, not looked at again) */
    return st_glm_rows_check(prob, param->bias, comm, msg, msg_len);
}

#define ST_GLM_CV_NOTE_LEN  512       /* a search's note (strata_glm_find_cost) */
#define ST_GLM_CV_STILL     5         /* stop: the count of unchanged C's that ends it */
#define ST_GLM_CV_STILL_REL 1e-6      /* ... unchanged: within this of their norm */
#define ST_GLM_CV_EPS_STEPS 20        /* the epsilon search's steps (LIBLINEAR's) */
#define ST_GLM_CV_SVR_MAX_C 1048576.0 /* ... and its last C, 2^20 (LIBLINEAR's) */

/* Have the folds' models changed since @a prev (their weights, @a nw each; updated)?
 * 0 no, 1 yes: by more than ST_GLM_CV_STILL_REL of their norm (LIBLINEAR's test is 1e-15
 * absolute: its solvers take no step from a start within their tolerance, where a start
 * here may take a few, which the certificate needs at the large C's; the change halves
 * with each doubling of C there); 2 some fold's are all 0 (which do not end a search:
 * lasso's first C's, an epsilon beyond the targets). */
static int st_glm_cv_moved(strata_glm_model_t **fold_models, int folds, double *prev,
                           int64_t nw)
{
    double diff, norm, x;
    int64_t j, n;
    int k, moved = 0;

    for (k = 0; k < folds; k++) {
        /* (a regression model: a weight a feature; the folds' features the problem's) */
        n = ST_MIN(nw, fold_models[k]->n_features + (fold_models[k]->bias > 0));
        for (diff = 0, norm = 0, j = 0; j < n; j++) {
            x     = fold_models[k]->w[j] - prev[k * nw + j];
            diff += x * x;
            norm += fold_models[k]->w[j] * fold_models[k]->w[j];
        }
        moved = ST_MAX(moved, (norm == 0) ? 2 : !(diff <= ST_GLM_CV_STILL_REL *
                                                         ST_GLM_CV_STILL_REL * norm));
        memcpy(prev + k * nw, fold_models[k]->w, (size_t)n * sizeof(double));
    }
    return moved;
}

/*
 * The C search of strata_glm_find_cost at param->epsilon: C = start_c (0: from the
 * data), 2 start_c, ... up to max_c, each fold from its model at the last C; with @a
 * stop, also ended by ST_GLM_CV_STILL C's in a row whose models are the last C's
 * (LIBLINEAR's find_parameter_C). A better score than *best's (the first C's when
 * there is none yet) replaces it: the smallest C of equals, the first epsilon. The
 * folds' rows from @a cache (st_glm_cv_folds_init), kept between the C's.
 */
static strata_status_t st_glm_cv_search(const strata_glm_problem_t *prob,
                                        const st_glm_model_t *loss,
                                        const strata_glm_param_t *param, int folds,
                                        double start_c, double max_c, int stop, MPI_Comm comm,
                                        char *msg, size_t msg_len, st_glm_cv_folds_t *cache,
                                        st_glm_cv_best_t *best)
{
    strata_glm_param_t p;
    strata_glm_metrics_t m;
    strata_glm_info_t *infos = NULL;
    strata_glm_model_t **fold_models = NULL;
    st_status_t status = ST_OK;
    double c, score, *prev = NULL, unconverged_c = 0;
    int64_t nw = prob->data->n_cols + (param->bias > 0);
    int rank = 0, k, still = 0, bettered = 0;

    if (start_c == 0) {
        start_c = st_glm_cv_start_c(loss, prob, param, comm);
        if (start_c <= 0) {
            st_glm_msg(msg, msg_len, "%s", (start_c < 0) ? "out of memory" :
                       "no C to start from: every example's features (or the loss's "
                       "gradient at w = 0) are 0; give the start");
            return (start_c < 0) ? STRATA_ERR_NO_MEMORY : STRATA_ERR_INVALID_PARAM;
        }
    }
    start_c = fmin(start_c, max_c);   /* (LIBLINEAR: the last C alone) */
    st_glm_comm_shape(comm, &rank, NULL);
    infos       = calloc((size_t)folds, sizeof(*infos));
    fold_models = calloc((size_t)folds, sizeof(*fold_models));
    prev        = stop ? calloc((size_t)folds * (size_t)ST_MAX(nw, 1), sizeof(*prev)) : NULL;
    if (!st_glm_agree(comm, infos != NULL && fold_models != NULL && (!stop || prev != NULL))) {
        st_glm_msg(msg, msg_len, "out of memory");
        free(infos);
        free(fold_models);
        free(prev);
        return STRATA_ERR_NO_MEMORY;
    }
    p         = *param;
    p.verbose = 0;
    /* C = start_c 2^k up to max_c, as LIBLINEAR's find_parameter_C, each fold's training
       warm-started from its model at the last C (LIBLINEAR's, where the method takes a
       start: strata_glm_train_from) */
    for (c = start_c; c <= max_c * (1 + 1e-12); c *= 2) {
        status = st_glm_cv_run(prob, &p, folds, c, comm, msg, msg_len, NULL, infos, &m,
                               fold_models, cache);
        if (status == STRATA_ERR_INVALID_PARAM && c > start_c) {
            /* a C beyond what the data train in double precision (its lambda, the
               objective, coordinate descent's curvature), after C's that trained: the
               search ends there (a larger C fares no better), the message a note */
            char why[ST_GLM_CV_NOTE_LEN];

            snprintf(why, sizeof(why), "%s", msg_len > 0 ? msg : "");
            st_glm_msg(msg, msg_len, "C %g and above: %s", c, why);
            status = STRATA_OK;
            break;
        }
        if (status != STRATA_OK) {
            break;
        }
        score = loss->classification ? m.accuracy : m.rmse * m.rmse;
        if (!best->found || (loss->classification ? score > best->score : score < best->score)) {
            best->found = 1;
            best->score = score;
            best->c     = c;
            best->eps   = param->epsilon;
            best->m     = m;
            bettered    = 1;
        }
        for (k = 0; k < folds && unconverged_c == 0; k++) {
            unconverged_c = (infos[k].converged || param->tol == 0) ? 0 : c;
        }
        if (param->verbose && rank == 0) {
            if (stop) {
                st_glm_print("log2c=%7.2f\tp=%7.2f\tMean squared error=%g\n", log2(c),
                             param->epsilon, score);
            } else if (loss->classification) {
                st_glm_print("log2c=%7.2f\trate=%g\n", log2(c), 100.0 * score);
            } else {
                st_glm_print("log2c=%7.2f\tMSE=%g\n", log2(c), score);
            }
        }
        /* LIBLINEAR's count: the first C counts as unchanged, a change restarts it */
        if (stop) {
            k     = st_glm_cv_moved(fold_models, folds, prev, nw);
            still = (k == 2) ? 0 : (c == start_c || k == 0) ? still + 1 : 0;
            if (still == ST_GLM_CV_STILL) {
                break;
            }
        }
    }
    if (bettered) {   /* (of the best pair's epsilon) */
        best->unconverged_c = unconverged_c;
    }
    free(infos);
    free(prev);
    for (k = 0; k < folds; k++) {
        strata_glm_model_free(fold_models[k]);
    }
    free(fold_models);
    return status;
}

static strata_status_t st_glm_find_cost_body(const strata_glm_problem_t *prob,
                                             const strata_glm_param_t *param, int folds,
                                             double start_c, double max_c, MPI_Comm comm,
                                             char *msg, size_t msg_len, double *best_c_p,
                                             strata_glm_metrics_t *best_p,
                                             double *unconverged_c_p)
{
    const st_glm_model_t *loss = NULL;
    st_glm_cv_folds_t cache;
    st_glm_cv_best_t best;
    strata_status_t status;

    status = st_glm_cv_search_check(prob, param, folds, start_c, max_c, 0, comm, msg, msg_len,
                                    best_c_p, best_p, &loss);
    if (status != STRATA_OK) {
        return status;
    }
    memset(&best, 0, sizeof(best));
    st_glm_msg(msg, msg_len, "%s", "");   /* (a note only where the search ends early) */
    st_glm_cv_folds_init(&cache, prob, folds, comm);
    /* every C up to max_c, also after models that stopped moving (lasso's first C's
       of w = 0 would end LIBLINEAR's rule at once; tests/glm_cv.sh) */
    status = st_glm_cv_search(prob, loss, param, folds, start_c, max_c, 0, comm, msg,
                              msg_len, &cache, &best);
    st_glm_cv_folds_free(&cache, folds);
    if (status == STRATA_OK) {
        *best_c_p = best.c;
        *best_p   = best.m;
        if (unconverged_c_p != NULL) {
            *unconverged_c_p = best.unconverged_c;
        }
    }
    return status;
}

ST_EXPORT strata_status_t strata_glm_find_cost(const strata_glm_problem_t *prob,
                                               const strata_glm_param_t *param, int folds,
                                               double start_c, double max_c, MPI_Comm comm,
                                               char *msg, size_t msg_len, double *best_c_p,
                                               strata_glm_metrics_t *best_p,
                                               double *unconverged_c_p)
{
    strata_glm_metrics_t best;
    strata_status_t status;
    double c = 0, unconverged = 0;

    st_glm_mpi_enter();
    status = st_glm_find_cost_body(prob, param, folds, start_c, max_c, comm, msg, msg_len,
                                   best_c_p == NULL ? NULL : &c, best_p == NULL ? NULL : &best,
                                   &unconverged);
    status = st_glm_mpi_leave(status, msg, msg_len);
    if (status == STRATA_OK) {   /* (set only now: an MPI failure sets nothing) */
        *best_c_p = c;
        *best_p   = best;
        if (unconverged_c_p != NULL) {
            *unconverged_c_p = unconverged;
        }
    }
    return status;
}

static strata_status_t st_glm_find_cost_epsilon_body(const strata_glm_problem_t *prob,
                                                     const strata_glm_param_t *param,
                                                     int folds, double start_c,
                                                     double start_eps, MPI_Comm comm,
                                                     char *msg, size_t msg_len,
                                                     double *best_c_p, double *best_eps_p,
                                                     strata_glm_metrics_t *best_p,
                                                     double *unconverged_c_p)
{
    const st_glm_model_t *loss = NULL;
    const st_glm_data_t *d;
    strata_glm_param_t p;
    st_glm_cv_folds_t cache;
    st_glm_cv_best_t best;
    strata_status_t status;
    double max_eps = 0;
    int64_t i;
    int step;

    status = st_glm_cv_search_check(prob, param, folds, start_c, ST_GLM_CV_SVR_MAX_C,
                                    start_eps, comm, msg, msg_len, best_c_p, best_p, &loss);
    if (status != STRATA_OK) {
        return status;
    }
    if (best_eps_p == NULL || !(start_eps >= 0) || isinf(start_eps) ||
        (loss->kind != ST_GLM_SVR && loss->kind != ST_GLM_SQSVR)) {
        st_glm_msg(msg, msg_len, "%s", best_eps_p == NULL ? "no result" :
                   !(start_eps >= 0) || isinf(start_eps) ?
                   "the first epsilon must be finite and >= 0 (0: from the targets)" :
                   "the epsilon search is for the SVR models (svr, sqsvr)");
        return STRATA_ERR_INVALID_PARAM;
    }
    /* LIBLINEAR's find_parameters: epsilon from 19/20 of max |y_i| (or start_eps's
       twentieth, if below) down to 0, in twentieths */
    d = prob->data;
    for (i = 0; i < d->n_rows; i++) {
        max_eps = fmax(max_eps, fabs(d->y[i]));
    }
    st_glm_allreduce(comm, &max_eps, 1, MPI_DOUBLE, MPI_MAX);
    step = ST_GLM_CV_EPS_STEPS - 1;
    if (start_eps > 0 && max_eps > 0) {
        step = (int)fmin(floor(start_eps / (max_eps / ST_GLM_CV_EPS_STEPS)), step);
    }
    memset(&best, 0, sizeof(best));
    st_glm_msg(msg, msg_len, "%s", "");   /* (a note only where a search ends early) */
    /* (the same folds at every epsilon) */
    st_glm_cv_folds_init(&cache, prob, folds, comm);
    p = *param;
    for (; step >= 0 && status == STRATA_OK; step--) {
        p.epsilon = step * max_eps / ST_GLM_CV_EPS_STEPS;
        status    = st_glm_cv_search(prob, loss, &p, folds, start_c, ST_GLM_CV_SVR_MAX_C, 1,
                                     comm, msg, msg_len, &cache, &best);
    }
    st_glm_cv_folds_free(&cache, folds);
    if (status == STRATA_OK) {
        *best_c_p   = best.c;
        *best_eps_p = best.eps;
        *best_p     = best.m;
        if (unconverged_c_p != NULL) {
            *unconverged_c_p = best.unconverged_c;
        }
    }
    return status;
}

ST_EXPORT strata_status_t strata_glm_find_cost_epsilon(const strata_glm_problem_t *prob,
                                                       const strata_glm_param_t *param,
                                                       int folds, double start_c,
                                                       double start_eps, MPI_Comm comm,
                                                       char *msg, size_t msg_len,
                                                       double *best_c_p, double *best_eps_p,
                                                       strata_glm_metrics_t *best_p,
                                                       double *unconverged_c_p)
{
    strata_glm_metrics_t best;
    strata_status_t status;
    double c = 0, eps = 0, unconverged = 0;

    st_glm_mpi_enter();
    status = st_glm_find_cost_epsilon_body(prob, param, folds, start_c, start_eps, comm, msg,
                                           msg_len, best_c_p == NULL ? NULL : &c,
                                           best_eps_p == NULL ? NULL : &eps,
                                           best_p == NULL ? NULL : &best, &unconverged);
    status = st_glm_mpi_leave(status, msg, msg_len);
    if (status == STRATA_OK) {   /* (set only now: an MPI failure sets nothing) */
        *best_c_p   = c;
        *best_eps_p = eps;
        *best_p     = best;
        if (unconverged_c_p != NULL) {
            *unconverged_c_p = unconverged;
        }
    }
    return status;
}
