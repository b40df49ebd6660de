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
#include "st_glm_perm.h"

#include <stdlib.h>
#include <string.h>

/* The rows of @a src whose fold is (@a in) or is not (!in) @a k, as a problem over the
 * same ranks (collective: the global counts; every rank returns the same status). */
static st_status_t st_glm_cv_rows(const strata_glm_problem_t *src, const int *fold, int k,
                                  int in, MPI_Comm comm, strata_glm_problem_t **dst_p)
{
    const st_glm_data_t *s = src->data;
    strata_glm_problem_t *dst = NULL;
    st_glm_data_t *d = NULL;
    int64_t i, rows = 0, nnz = 0, o = 0, all[2], offset = 0, len;
    int rank;

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
    all[0] = rows;
    all[1] = nnz;
    st_glm_allreduce(comm, all, 2, MPI_INT64_T, MPI_SUM);
    if (comm != MPI_COMM_NULL) {
        MPI_Exscan(&rows, &offset, 1, MPI_INT64_T, MPI_SUM, comm);
        MPI_Comm_rank(comm, &rank);
        offset = (rank == 0) ? 0 : offset;
    }
    d->n_rows_global = all[0];
    d->nnz_global    = all[1];
    d->row_offset    = offset;
    d->n_cols        = s->n_cols;   /* every fold's model has the data's features */
    d->zero_one      = s->zero_one;
    d->label_kind    = s->label_kind;
    d->format        = s->format;
    dst->data        = d;
    dst->regression  = src->regression;
    *dst_p           = dst;
    return ST_OK;
}

ST_EXPORT strata_status_t strata_glm_cross_validate(const strata_glm_problem_t *prob,
                                                    const strata_glm_param_t *param, int folds,
                                                    double cost, MPI_Comm comm, char *msg,
                                                    size_t msg_len, double *scores,
                                                    strata_glm_info_t *infos,
                                                    strata_glm_metrics_t *metrics_p)
{
    strata_glm_problem_t *train = NULL, *test = NULL;
    strata_glm_model_t *model = NULL;
    strata_glm_param_t p;
    st_glm_perm_t perm;
    const st_glm_data_t *d;
    st_status_t status = ST_OK;
    double *z = NULL, *oof = NULL;
    int64_t i, t, n;
    int *fold = NULL, k, flag;
    const char *why;

    if (prob == NULL || prob->data == NULL || param == NULL || metrics_p == NULL) {
        st_glm_msg(msg, msg_len, "no problem, parameters or metrics");
        return STRATA_ERR_INVALID_PARAM;
    }
    if (comm != MPI_COMM_NULL &&
        (MPI_Initialized(&flag) != MPI_SUCCESS || !flag ||
         MPI_Finalized(&flag) != MPI_SUCCESS || flag)) {
        st_glm_msg(msg, msg_len, "MPI is not initialized (or already finalized) for the "
                   "communicator given; MPI_COMM_NULL works without MPI");
        return STRATA_ERR_NOT_INITIALIZED;
    }
    if ((why = strata_glm_check_param(param)) != NULL) {
        st_glm_msg(msg, msg_len, "%s", why);
        return STRATA_ERR_INVALID_PARAM;
    }
    d = prob->data;
    n = d->n_rows_global;
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
    if (!(cost >= 0)) {
        st_glm_msg(msg, msg_len, "cost %g: > 0 (LIBLINEAR's C), or 0 for param->lambda",
                   cost);
        return STRATA_ERR_INVALID_PARAM;
    }
    fold = malloc((size_t)ST_MAX(d->n_rows, 1) * sizeof(*fold));
    z    = malloc((size_t)ST_MAX(d->n_rows, 1) * sizeof(*z));
    oof  = scores ? scores : malloc((size_t)ST_MAX(d->n_rows, 1) * sizeof(*oof));
    if (!st_glm_agree(comm, fold != NULL && z != NULL && oof != NULL)) {
        st_glm_msg(msg, msg_len, "out of memory");
        status = STRATA_ERR_NO_MEMORY;
        goto out;
    }
    st_glm_cv_perm(&perm, (uint64_t)n, param->seed);
    for (i = 0; i < d->n_rows; i++) {
        fold[i] = st_glm_cv_fold(&perm, folds, (uint64_t)(d->row_offset + i));
    }
    for (k = 0; k < folds; k++) {
        status = st_glm_cv_rows(prob, fold, k, 0, comm, &train);
        if (status == ST_OK) {
            status = st_glm_cv_rows(prob, fold, k, 1, comm, &test);
        }
        if (status != ST_OK) {
            st_glm_msg(msg, msg_len, "fold %d of %d: out of memory", k + 1, folds);
            goto out;
        }
        p = *param;
        if (cost > 0) {   /* C sum of the losses over the fold's training rows */
            p.lambda = 1.0 / (cost * (double)train->data->n_rows_global);
            if ((why = strata_glm_check_param(&p)) != NULL) {
                st_glm_msg(msg, msg_len, "fold %d of %d: %s", k + 1, folds, why);
                status = STRATA_ERR_INVALID_PARAM;
                goto out;
            }
        }
        strata_glm_model_free(model);
        model  = NULL;
        status = strata_glm_train(train, &p, comm, msg, msg_len, &model);
        if (status != STRATA_OK) {
            char why_fold[1024];

            snprintf(why_fold, sizeof(why_fold), "%s", msg ? msg : "");
            st_glm_msg(msg, msg_len, "fold %d of %d: %s", k + 1, folds, why_fold);
            goto out;
        }
        if (infos != NULL) {
            infos[k] = model->info;
        }
        strata_glm_predict(model, test, z);   /* (this rank's rows: no failure) */
        for (t = 0, i = 0; i < d->n_rows; i++) {
            if (fold[i] == k) {
                oof[i] = z[t++];
            }
        }
        strata_glm_problem_free(train);
        strata_glm_problem_free(test);
        train = test = NULL;
    }
    /* (the last fold's model stands for the model kind and its class names) */
    status = st_glm_evaluate_scores(model, d, oof, ST_OK, comm, metrics_p);
    if (status != ST_OK) {
        st_glm_msg(msg, msg_len, "cannot compute the metrics: %s",
                   strata_status_string(status));
    }
out:
    strata_glm_model_free(model);
    strata_glm_problem_free(train);
    strata_glm_problem_free(test);
    free(fold);
    free(z);
    if (oof != scores) {
        free(oof);
    }
    return status;
}
