/*
 * Prediction and test metrics.
 *
 * The score of a row x is
 *     z = sum_{j in x, j < d} w_j x_j  (+ w_d b  when the bias b > 0),
 * summed in the row's order with the bias term last, as LIBLINEAR's predict_values
 * (which appends the bias as the last feature), so the two agree bit for bit on the
 * same weights and values. Features j >= d (unseen in training) are ignored, as
 * LIBLINEAR's predict does. The class is +1 when z > 0 and -1 (0 for a model of 0/1
 * data) when z < 0; a score of 0 is the file's second label, as in LIBLINEAR
 * ("dec_values[0] > 0 ? label[0] : label[1]"): -1 for "label 1 -1" (strata-train's),
 * +1 for "label -1 1", whose weights the reader negated (strata_glm_predict_class).
 *
 * A model of more than two classes (one-vs-rest, st_glm_multi.c) scores a row for
 * each class, each sum in the same order, and predicts the class of the largest score
 * (the first of equals), as LIBLINEAR's predict_values; its "score" (strata_glm_predict)
 * is that class's label. So is a model of one class's (LIBLINEAR's "nr_class 1", from
 * training data of a single label): it predicts that class for every row, with
 * probability 1.
 *
 * Metrics (strata_glm_evaluate) are computed by rank 0 over all ranks' rows in the
 * global row order, so they do not depend on the number of ranks, bit for bit:
 *     accuracy = #{i : class(z_i) = y_i} / n
 *     logloss  = (1/n) sum_i log(1 + exp(-y_i z_i))     (st_glm_log1pexp: no overflow)
 *     AUC      = (#{(i,j) : y_i = +1, y_j = -1, z_i > z_j}
 *                 + #{... z_i = z_j} / 2) / (n_pos n_neg)  (Mann-Whitney; exact)
 *     RMSE     = sqrt((1/n) sum_i (z_i - y_i)^2)
 * with y_i +1 for the model's first class, -1 for its second; a test row of another
 * class is counted wrong and leaves the log loss and the AUC undefined (NaN). One
 * class, or more than two: the accuracy alone, of the predicted labels.
 * The AUC sorts the positives' and the negatives' scores and counts, for each positive,
 * the negatives below and equal to it by a merge: O(n log n). Rank 0 holds 16 bytes a
 * row (scores and labels) plus 8 for the sort.
 */
#include "config.h"

#include "st_glm.h"

#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------------------ */
/* The model's accessors                                                               */
/* ------------------------------------------------------------------------------------ */

ST_EXPORT void strata_glm_model_info(const strata_glm_model_t *model, strata_glm_info_t *info_p)
{
    if (info_p == NULL) {
        return;
    }
    if (model == NULL) {
        memset(info_p, 0, sizeof(*info_p));
        return;
    }
    *info_p = model->info;
}

ST_EXPORT const char *strata_glm_model_solver(const strata_glm_model_t *model)
{
    return (model != NULL && model->loss != NULL) ? model->loss->name : NULL;
}

ST_EXPORT int64_t strata_glm_model_features(const strata_glm_model_t *model)
{
    return (model != NULL) ? model->n_features : 0;
}

ST_EXPORT double strata_glm_model_bias(const strata_glm_model_t *model)
{
    return (model != NULL) ? model->bias : -1.0;
}

ST_EXPORT const double *strata_glm_model_weights(const strata_glm_model_t *model)
{
    return (model != NULL) ? model->w : NULL;
}

ST_EXPORT int strata_glm_model_classes(const strata_glm_model_t *model, double *labels)
{
    if (model == NULL || model->loss == NULL || !model->loss->classification) {
        return 0;
    }
    if (model->nr_class > 0) {
        if (labels != NULL) {
            memcpy(labels, model->labels, (size_t)model->nr_class * sizeof(double));
        }
        return model->nr_class;
    }
    if (labels != NULL) {
        labels[0] = 1.0;
        labels[1] = model->zero_one ? 0.0 : -1.0;
    }
    return 2;
}

/* ------------------------------------------------------------------------------------ */
/* Scores                                                                              */
/* ------------------------------------------------------------------------------------ */

/* The decision values of one row, a class's weights each (nr_w of them, LIBLINEAR's
 * predict_values: each sum in the row's order, the bias last), from double or float
 * values. */
static void st_glm_dec_values(const strata_glm_model_t *model, int64_t nnz,
                              const uint32_t *indices, const double *v64, const float *v32,
                              double *dec)
{
    int nr_w = st_glm_model_nr_w(model), c;
    const double *wj;
    int64_t k;
    double x;

    for (c = 0; c < nr_w; c++) {
        dec[c] = 0.0;
    }
    for (k = 0; k < nnz; k++) {
        if ((int64_t)indices[k] < model->n_features) {
            wj = model->w + (int64_t)indices[k] * nr_w;
            x  = (v64 != NULL) ? v64[k] : (double)v32[k];
            for (c = 0; c < nr_w; c++) {
                dec[c] += wj[c] * x;
            }
        }
    }
    if (model->bias > 0) {
        wj = model->w + model->n_features * nr_w;
        for (c = 0; c < nr_w; c++) {
            dec[c] += wj[c] * model->bias;
        }
    }
}

/* The label a model of named classes predicts from its decision values. */
static double st_glm_dec_label(const strata_glm_model_t *model, const double *dec)
{
    int c, best = 0;

    if (model->nr_class == 2) {
        return (dec[0] > 0) ? model->labels[0] : model->labels[1];
    }
    if (isnan(dec[0])) {
        return NAN;
    }
    for (c = 1; c < model->nr_class; c++) {
        if (isnan(dec[c])) {
            return NAN;   /* (no class: the caller names the row) */
        }
        if (dec[c] > dec[best]) {
            best = c;
        }
    }
    return model->labels[best];
}

/* A row's "score": its decision value, or for one class or more than two the label
 * predicted (@a dec: room for the classes' values). */
static double st_glm_row_score(const strata_glm_model_t *model, int64_t nnz,
                               const uint32_t *indices, const double *v64, const float *v32,
                               double *dec)
{
    st_glm_dec_values(model, nnz, indices, v64, v32, dec);
    return st_glm_model_by_label(model) ? st_glm_dec_label(model, dec) : dec[0];
}

ST_EXPORT double strata_glm_predict_label(const strata_glm_model_t *model, int64_t nnz,
                                          const uint32_t *indices, const double *values,
                                          double *dec_values)
{
    double one, *dec = dec_values;
    double label;

    if (model == NULL || model->w == NULL || model->loss == NULL) {
        return NAN;
    }
    if (dec == NULL) {
        dec = (st_glm_model_nr_w(model) > 1) ?
              malloc((size_t)st_glm_model_nr_w(model) * sizeof(double)) : &one;
        if (dec == NULL) {
            return NAN;
        }
    }
    st_glm_dec_values(model, nnz, indices, values, NULL, dec);
    if (!model->loss->classification) {
        label = dec[0];
    } else if (model->nr_class > 0) {
        label = st_glm_dec_label(model, dec);
    } else {
        label = strata_glm_predict_class(model, dec[0]);
    }
    if (dec != dec_values && dec != &one) {
        free(dec);
    }
    return label;
}

ST_EXPORT double strata_glm_predict_probability(const strata_glm_model_t *model,
                                                int64_t nnz, const uint32_t *indices,
                                                const double *values, double *probs)
{
    int k = strata_glm_model_classes(model, NULL), c, logistic;
    double label, sum = 0.0;

    if (k == 0 || probs == NULL) {
        return NAN;
    }
    label    = strata_glm_predict_label(model, nnz, indices, values, probs);
    logistic = (model->loss->kind == ST_GLM_LOGISTIC || model->loss->kind == ST_GLM_L1_LOGISTIC);
    if (k == 2) {
        probs[0] = logistic ? model->loss->link(probs[0]) : NAN;
        probs[1] = 1.0 - probs[0];
        return label;
    }
    if (k == 1) {   /* (LIBLINEAR's normalized sigmoid of one class: 1, never 0/0) */
        probs[0] = (logistic && !isnan(label)) ? 1.0 : NAN;
        return label;
    }
    for (c = 0; c < k; c++) {   /* LIBLINEAR's: each class's, normalized */
        probs[c] = logistic ? model->loss->link(probs[c]) : NAN;
        sum     += probs[c];
    }
    for (c = 0; c < k; c++) {
        probs[c] /= sum;
    }
    return label;
}

ST_EXPORT double strata_glm_predict_row(const strata_glm_model_t *model, int64_t nnz,
                                        const uint32_t *indices, const double *values)
{
    double z;

    if (model == NULL || model->w == NULL) {
        return NAN;
    }
    if (st_glm_model_by_label(model)) {
        return strata_glm_predict_label(model, nnz, indices, values, NULL);
    }
    st_glm_dec_values(model, nnz, indices, values, NULL, &z);
    return z;
}

ST_EXPORT double strata_glm_predict_prob(const strata_glm_model_t *model, double score)
{
    /* (one class or more than two: the "score" is a label, whose link is no
       probability) */
    if (model == NULL || model->loss == NULL || st_glm_model_by_label(model)) {
        return NAN;
    }
    return model->loss->link(score);
}

ST_EXPORT double strata_glm_predict_class(const strata_glm_model_t *model, double score)
{
    /* the second class: -1, or 0 for a model of 0/1 data (strata_glm_model_classes') */
    double second = (model != NULL && model->zero_one) ? 0.0 : -1.0;

    if (model != NULL && st_glm_model_by_label(model)) {
        return score;   /* (the label already) */
    }
    if (model != NULL && model->nr_class == 2) {
        return (score > 0) ? model->labels[0] : model->labels[1];
    }
    if (score != 0) {
        return (score > 0) ? 1.0 : second;
    }
    return (model != NULL && model->zero_positive) ? 1.0 : second;
}

ST_EXPORT strata_status_t strata_glm_predict(const strata_glm_model_t *model,
                                             const strata_glm_problem_t *prob, double *scores)
{
    const st_glm_data_t *d;
    double one, *dec;
    int64_t r, lo, hi;

    if (model == NULL || model->w == NULL || model->loss == NULL || prob == NULL ||
        prob->data == NULL || (prob->data->n_rows > 0 && scores == NULL)) {
        return ST_ERR_INVALID_PARAM;
    }
    d   = prob->data;
    dec = (st_glm_model_nr_w(model) > 1)
              ? malloc((size_t)st_glm_model_nr_w(model) * sizeof(double)) : &one;
    if (dec == NULL) {
        return ST_ERR_NO_MEMORY;
    }
    for (r = 0; r < d->n_rows; r++) {
        lo        = d->indptr[r];
        hi        = d->indptr[r + 1];
        scores[r] = st_glm_row_score(model, hi - lo, d->indices + lo,
                                     d->val64 ? d->val64 + lo : NULL,
                                     d->val32 ? d->val32 + lo : NULL, dec);
    }
    if (dec != &one) {
        free(dec);
    }
    return ST_OK;
}

st_status_t st_glm_predict_present(const strata_glm_model_t *model,
                                   const strata_glm_problem_t *prob, const int *present,
                                   double *scores)
{
    const st_glm_data_t *d = prob->data;
    int nr_w = st_glm_model_nr_w(model), c, best;
    double *dec;
    int64_t r, lo, hi;

    if (nr_w == 1) {   /* (two classes, one present: its side; 0 is the second's) */
        for (r = 0; r < d->n_rows; r++) {
            scores[r] = present[0] ? ST_MAX(fabs(scores[r]), DBL_TRUE_MIN)
                                   : -fabs(scores[r]);
        }
        return ST_OK;
    }
    dec = malloc((size_t)nr_w * sizeof(double));
    if (dec == NULL) {
        return ST_ERR_NO_MEMORY;
    }
    for (r = 0; r < d->n_rows; r++) {
        lo = d->indptr[r];
        hi = d->indptr[r + 1];
        st_glm_dec_values(model, hi - lo, d->indices + lo, d->val64 ? d->val64 + lo : NULL,
                          d->val32 ? d->val32 + lo : NULL, dec);
        for (best = -1, c = 0; c < nr_w; c++) {
            if (present[c] && (best < 0 || dec[c] > dec[best] || isnan(dec[c]))) {
                best = c;
            }
            if (best >= 0 && isnan(dec[best])) {
                break;   /* (no class: the caller names the row, as st_glm_dec_label) */
            }
        }
        scores[r] = (best < 0 || isnan(dec[best])) ? NAN : model->labels[best];
    }
    free(dec);
    return ST_OK;
}

/* ------------------------------------------------------------------------------------ */
/* Metrics                                                                             */
/* ------------------------------------------------------------------------------------ */

/* Ascending; NaN below everything and equal to itself, so the order is total. */
static int st_glm_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    if (isnan(x) || isnan(y)) {
        return isnan(y) - isnan(x);
    }
    return (x > y) - (x < y);
}

/* The AUC of scores @a z against labels @a y (+1/-1), or NaN when a class is
 * missing. @return ST_OK or ST_ERR_NO_MEMORY. */
static st_status_t st_glm_auc(int64_t n, const double *z, const double *y, double *auc_p)
{
    int64_t i, n_pos = 0, n_neg, lt = 0, le = 0;
    uint64_t twice_pairs = 0;   /* 2 #{z_pos > z_neg} + #{z_pos = z_neg} */
    double *pos, *neg;

    for (i = 0; i < n; i++) {
        n_pos += (y[i] > 0);
    }
    n_neg = n - n_pos;
    if (n_pos == 0 || n_neg == 0) {
        *auc_p = NAN;
        return ST_OK;
    }
    pos = malloc((size_t)n * sizeof(double));
    if (pos == NULL) {
        return ST_ERR_NO_MEMORY;
    }
    neg   = pos + n_pos;
    n_pos = 0;
    n_neg = 0;
    for (i = 0; i < n; i++) {
        if (y[i] > 0) {
            pos[n_pos++] = z[i];
        } else {
            neg[n_neg++] = z[i];
        }
    }
    qsort(pos, (size_t)n_pos, sizeof(double), st_glm_cmp_double);
    qsort(neg, (size_t)n_neg, sizeof(double), st_glm_cmp_double);
    /* for each positive, in ascending order: negatives [0, lt) are below it,
     * [lt, le) equal to it */
    for (i = 0; i < n_pos; i++) {
        while (lt < n_neg && st_glm_cmp_double(&neg[lt], &pos[i]) < 0) {
            lt++;
        }
        if (le < lt) {
            le = lt;
        }
        while (le < n_neg && st_glm_cmp_double(&neg[le], &pos[i]) <= 0) {
            le++;
        }
        twice_pairs += 2 * (uint64_t)lt + (uint64_t)(le - lt);
    }
    *auc_p = (double)twice_pairs / (2.0 * (double)n_pos * (double)n_neg);
    free(pos);
    return ST_OK;
}

/* All metrics of @a n scores against their labels, in this order. */
static st_status_t st_glm_metrics(const strata_glm_model_t *model, int64_t n, const double *z,
                                  const double *y, strata_glm_metrics_t *m)
{
    st_glm_model_kind_t kind = model->loss->kind;
    int64_t i, correct = 0, other = 0;
    double sum;

    m->n        = n;
    m->accuracy = NAN;
    m->logloss  = NAN;
    m->auc      = NAN;
    m->rmse     = NAN;
    if (n == 0) {
        return ST_OK;
    }
    if (!model->loss->classification) {
        sum = 0.0;
        for (i = 0; i < n; i++) {
            sum += (z[i] - y[i]) * (z[i] - y[i]);
        }
        m->rmse = sqrt(sum / (double)n);
        return ST_OK;
    }
    if (st_glm_model_by_label(model)) {   /* (the scores are the labels predicted) */
        for (i = 0; i < n; i++) {
            correct += (z[i] == y[i]);
        }
        m->accuracy = (double)correct / (double)n;
        return ST_OK;
    }
    for (i = 0; i < n; i++) {   /* (+1: the model's first class; a tie is the second) */
        correct += ((z[i] > 0 || (z[i] == 0 && model->nr_class == 0 && model->zero_positive))
                    ? 1.0 : -1.0) == y[i];
        other   += isnan(y[i]);
    }
    m->accuracy = (double)correct / (double)n;
    if (other > 0) {
        return ST_OK;   /* (rows of classes the model has not: no log loss or AUC) */
    }
    if (kind == ST_GLM_LOGISTIC || kind == ST_GLM_L1_LOGISTIC) {
        sum = 0.0;
        for (i = 0; i < n; i++) {
            sum += st_glm_log1pexp(-y[i] * z[i]);
        }
        m->logloss = sum / (double)n;
    }
    return st_glm_auc(n, z, y, &m->auc);
}

/* Gather every rank's scores and labels to rank 0 (in rank order: the global row
 * order) and compute the metrics there; every rank gets rank 0's result. */
static st_status_t st_glm_evaluate_mpi(const strata_glm_model_t *model,
                                       const st_glm_data_t *d, const double *z,
                                       const double *y, st_status_t local, MPI_Comm comm,
                                       int rank, int size, strata_glm_metrics_t *m)
{
    int64_t mine[3] = {d->n_rows, d->n_rows_global, local}, *all, total = 0;
    double *all_z = NULL, *all_y = NULL, res[5];
    int *counts = NULL, *displs = NULL, r, ok;
    st_status_t status = ST_OK;

    all = malloc((size_t)size * sizeof(mine));
    if (all == NULL) {
        return ST_ERR_NO_MEMORY;   /* cannot agree without memory for three numbers */
    }
    ST_GLM_MPI_CALL_GOTO(MPI_Allgather(mine, 3, MPI_INT64_T, all, 3, MPI_INT64_T, comm),
                     out_all, status);
    for (r = 0; r < size; r++) {
        if (all[3 * r + 2] != ST_OK && status == ST_OK) {
            status = (st_status_t)all[3 * r + 2];
        }
        total += all[3 * r];
    }
    if (status != ST_OK) {
        goto out_all;
    }
    for (r = 0; r < size; r++) {
        if (all[3 * r + 1] != total) {  /* the problem was not read on this comm */
            status = ST_ERR_INVALID_PARAM;
            goto out_all;
        }
    }
    if (total > INT_MAX) {             /* MPI_Gatherv's counts are int */
        status = ST_ERR_UNSUPPORTED;
        goto out_all;
    }

    ok = 1;
    if (rank == 0) {
        all_z  = malloc((size_t)ST_MAX(total, 1) * sizeof(double));
        all_y  = malloc((size_t)ST_MAX(total, 1) * sizeof(double));
        counts = malloc((size_t)size * sizeof(int));
        displs = malloc((size_t)size * sizeof(int));
        ok     = (all_z != NULL && all_y != NULL && counts != NULL && displs != NULL);
        if (ok) {
            for (r = 0; r < size; r++) {
                counts[r] = (int)all[3 * r];
                displs[r] = (r == 0) ? 0 : displs[r - 1] + counts[r - 1];
            }
        }
    }
    ST_GLM_MPI_CALL_GOTO(MPI_Bcast(&ok, 1, MPI_INT, 0, comm), out_bufs, status);
    if (!ok) {
        status = ST_ERR_NO_MEMORY;
        goto out_bufs;
    }
    ST_GLM_MPI_CALL_GOTO(MPI_Gatherv(z, (int)d->n_rows, MPI_DOUBLE, all_z, counts, displs,
                                 MPI_DOUBLE, 0, comm), out_bufs, status);
    ST_GLM_MPI_CALL_GOTO(MPI_Gatherv(y, (int)d->n_rows, MPI_DOUBLE, all_y, counts, displs,
                                 MPI_DOUBLE, 0, comm), out_bufs, status);
    if (rank == 0) {
        res[0] = (double)st_glm_metrics(model, total, all_z, all_y, m);
        res[1] = m->accuracy;
        res[2] = m->logloss;
        res[3] = m->auc;
        res[4] = m->rmse;
    }
    ST_GLM_MPI_CALL_GOTO(MPI_Bcast(res, 5, MPI_DOUBLE, 0, comm), out_bufs, status);
    status      = (st_status_t)res[0];
    m->n        = total;
    m->accuracy = res[1];
    m->logloss  = res[2];
    m->auc      = res[3];
    m->rmse     = res[4];

out_bufs:
    free(displs);
    free(counts);
    free(all_y);
    free(all_z);
out_all:
    free(all);
    return status;
}

/* st_glm_evaluate_scores against the labels @a y (st_glm_eval_label's). */
static st_status_t st_glm_evaluate_labels(const strata_glm_model_t *model,
                                          const st_glm_data_t *d, const double *z,
                                          const double *y, st_status_t local, MPI_Comm comm,
                                          strata_glm_metrics_t *m)
{
    st_status_t status;
    st_glm_comm_t c;

    if ((status = st_glm_comm_init(comm, &c)) != ST_OK) {
        return status;   /* (before MPI_Init or after MPI_Finalize, an intercommunicator) */
    }
    if (c.size > 1) {
        return st_glm_evaluate_mpi(model, d, z, y, local, comm, c.rank, c.size, m);
    }
    if (local == ST_OK && d->n_rows != d->n_rows_global) {
        local = ST_ERR_INVALID_PARAM;
    }
    return (local == ST_OK) ? st_glm_metrics(model, d->n_rows, z, y, m) : local;
}

/* The label of @a prob's local row @a i that @a model's scores are measured against:
 * +1/-1 for its first/second class (NaN: neither), the label itself for more than two
 * classes, the target for regression. A row of class 0 is of neither class of a model
 * of the classes 1 and -1, as a row of class -1 is for a model of 1 and 0: LIBLINEAR's
 * predict counts it wrong, its label not the one predicted (before: -1 and 0 were
 * taken for each other, and the accuracy was not LIBLINEAR's). */
static double st_glm_eval_label(const strata_glm_model_t *model,
                                const strata_glm_problem_t *prob, int64_t i)
{
    double raw;

    if (!model->loss->classification) {
        return prob->data->y[i];   /* (targets) */
    }
    raw = st_glm_problem_label(prob, i);
    if (st_glm_model_by_label(model)) {
        return raw;
    }
    if (model->nr_class == 2) {
        return (raw == model->labels[0]) ? 1.0 : (raw == model->labels[1]) ? -1.0 : NAN;
    }
    return (raw == 1.0) ? 1.0 : (raw == (model->zero_one ? 0.0 : -1.0)) ? -1.0 : NAN;
}

st_status_t st_glm_evaluate_scores(const strata_glm_model_t *model,
                                   const strata_glm_problem_t *prob, const double *z,
                                   st_status_t local, MPI_Comm comm, strata_glm_metrics_t *m)
{
    const st_glm_data_t *d = prob->data;
    double *y = malloc((size_t)ST_MAX(d->n_rows, 1) * sizeof(double));
    st_status_t status;
    int64_t i;

    if (y == NULL && local == ST_OK) {
        local = ST_ERR_NO_MEMORY;
    }
    for (i = 0; y != NULL && i < d->n_rows; i++) {
        y[i] = st_glm_eval_label(model, prob, i);
    }
    status = st_glm_evaluate_labels(model, d, z, y, local, comm, m);
    free(y);
    return status;
}

static strata_status_t st_glm_evaluate_body(const strata_glm_model_t *model,
                                            const strata_glm_problem_t *prob, MPI_Comm comm,
                                            strata_glm_metrics_t *metrics_p)
{
    strata_glm_metrics_t m;
    const st_glm_data_t *d;
    st_status_t status, local;
    uint64_t mine;
    st_glm_comm_t c;
    double *z;

    if (model == NULL || model->loss == NULL || model->w == NULL || prob == NULL ||
        prob->data == NULL || metrics_p == NULL) {
        return ST_ERR_INVALID_PARAM;
    }
    /* a classification model needs +1/-1 labels; a regression model is not scored
     * against class labels */
    if (!prob->regression != !!model->loss->classification) {
        return ST_ERR_INVALID_PARAM;
    }
    /* the same model on every rank (before: each rank's rows scored by its own, and the
       metrics of no one model returned as STRATA_OK) */
    if ((status = st_glm_comm_init(comm, &c)) != ST_OK) {
        return status;
    }
    mine = st_glm_model_hash(model);
    if (st_glm_words_differ(c.comm, &mine, 1) >= 0) {
        return ST_ERR_INVALID_PARAM;
    }
    d     = prob->data;
    z     = malloc((size_t)ST_MAX(d->n_rows, 1) * sizeof(double));
    local = (z != NULL) ? strata_glm_predict(model, prob, z) : ST_ERR_NO_MEMORY;
    status = st_glm_evaluate_scores(model, prob, z, local, comm, &m);
    free(z);
    if (status == ST_OK) {
        *metrics_p = m;
    }
    return status;
}

ST_EXPORT strata_status_t strata_glm_evaluate(const strata_glm_model_t *model,
                                              const strata_glm_problem_t *prob, MPI_Comm comm,
                                              strata_glm_metrics_t *metrics_p)
{
    st_glm_mpi_enter();
    return st_glm_mpi_leave(st_glm_evaluate_body(model, prob, comm, metrics_p), NULL, 0);
}
