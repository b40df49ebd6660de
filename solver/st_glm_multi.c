/*
 * Classes named by any integers, and more than two of them: LIBLINEAR's labels.
 *
 * A classification set is read with its labels as given (ST_GLM_LABEL_MULTI), then
 * st_glm_problem_classify finds its classes over all ranks in LIBLINEAR's order (that
 * of their first rows in the file). A set of the classes 1 and -1, or 1 and 0, is then
 * the binary problem the trainers know (+1/-1, zero_one for 0/1), as before; any other
 * set keeps its names (prob->named) and trains as LIBLINEAR trains it:
 *   - one class (any name, 1, -1 and 0 too): LIBLINEAR's model of it, "nr_class 1",
 *     trained on every row as positive, which predicts the class for every row;
 *   - two classes: one model, the first class positive (LIBLINEAR's "label a b": w
 *     scores a positive; a score of 0 is b);
 *   - more: one model per class against all the others (one-vs-rest), each an
 *     ordinary binary training over the same ranks on a view of the rows whose labels
 *     are +1 for the class and -1 for the rest; the model holds the classes' weight
 *     vectors side by side, LIBLINEAR's layout (feature j's weights at w[j nr_w ...]),
 *     and predicts the class of the largest score (the first of equals).
 * solver/MODELS.md 5 and README ("More than two classes") state the rules.
 */
#include "config.h"

#include "st_glm.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- the classes of a set ---- */

/* The distinct values of y[0 .. n) in the order of their first occurrence, appended to
 * *list (of *count, capacity *cap), skipping those already there. @a sorted/@a nsorted
 * index the list for lookups (kept sorted). @return 0, -1 without memory. */
static int st_glm_classes_add(const double *y, int64_t n, double **list, int *count,
                              double **sorted, int *cap)
{
    int64_t i;
    int lo, hi, mid;
    double v, *grown;

    for (i = 0; i < n; i++) {
        v  = y[i];
        lo = 0;
        hi = *count;
        while (lo < hi) {   /* the first sorted entry >= v */
            mid = lo + (hi - lo) / 2;
            if ((*sorted)[mid] < v) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        if (lo < *count && (*sorted)[lo] == v) {
            continue;
        }
        if (*count == *cap) {
            *cap  = ST_MAX(2 * *cap, 8);
            grown = realloc(*list, (size_t)*cap * sizeof(double));
            if (grown == NULL) {
                return -1;
            }
            *list = grown;
            grown = realloc(*sorted, (size_t)*cap * sizeof(double));
            if (grown == NULL) {
                return -1;
            }
            *sorted = grown;
        }
        memmove(&(*sorted)[lo + 1], &(*sorted)[lo], (size_t)(*count - lo) * sizeof(double));
        (*sorted)[lo]     = v;
        (*list)[(*count)++] = v;
    }
    return 0;
}

/* Is every class in @a list one of @a a and @a b? */
static int st_glm_classes_within(const double *list, int count, double a, double b)
{
    int c;

    for (c = 0; c < count; c++) {
        if (list[c] != a && list[c] != b) {
            return 0;
        }
    }
    return 1;
}

st_status_t st_glm_problem_classify(strata_glm_problem_t *prob, MPI_Comm comm)
{
    st_glm_data_t *d = prob->data;
    double *mine = NULL, *sorted = NULL, *all = NULL, *list = NULL;
    int nmine = 0, cap = 0, n = 0, ncap = 0, rank = 0, size = 1, r, ok, total;
    int *counts = NULL, *displs = NULL;
    st_status_t status = ST_OK;
    int64_t i;

    st_glm_comm_shape(comm, &rank, &size);
    ok = (st_glm_classes_add(d->y, d->n_rows, &mine, &nmine, &sorted, &cap) == 0);
    free(sorted);
    sorted = NULL;
    counts = malloc((size_t)size * sizeof(int));
    displs = malloc((size_t)size * sizeof(int));
    if (!st_glm_agree(comm, ok && counts != NULL && displs != NULL)) {
        status = ST_ERR_NO_MEMORY;
        goto out;
    }
    /* the ranks' lists in rank order: the rows' global order */
    counts[0] = nmine;
    if (size > 1) {
        ST_GLM_MPI(MPI_Allgather(&nmine, 1, MPI_INT, counts, 1, MPI_INT, comm));
    }
    if (st_glm_mpi_failed()) {   /* (the counts are not the ranks': summed, they overflowed) */
        status = ST_ERR_MPI;
        goto out;
    }
    for (total = 0, r = 0; r < size; r++) {
        displs[r] = total;
        total    += counts[r];
    }
    all = malloc((size_t)ST_MAX(total, 1) * sizeof(double));
    if (!st_glm_agree(comm, all != NULL)) {
        status = ST_ERR_NO_MEMORY;
        goto out;
    }
    if (size > 1) {
        ST_GLM_MPI(MPI_Allgatherv(mine, nmine, MPI_DOUBLE, all, counts, displs, MPI_DOUBLE,
                                  comm));
    } else if (nmine > 0) {
        memcpy(all, mine, (size_t)nmine * sizeof(double));
    }
    if (st_glm_mpi_failed()) {
        status = ST_ERR_MPI;
        goto out;
    }
    ok = (st_glm_classes_add(all, total, &list, &n, &sorted, &ncap) == 0);
    if (!ok) {   /* (every rank the same lists and the same memory need: agree anyway) */
        n = 0;
    }
    if (!st_glm_agree(comm, ok)) {
        status = ST_ERR_NO_MEMORY;
        goto out;
    }
    free(prob->classes);
    prob->classes  = NULL;
    prob->nr_class = n;
    prob->named    = 0;
    if (n == 0) {
        /* (no rows: nothing to train, a binary set as before) */
    } else if (n == 1) {
        /* one class, whatever its name: LIBLINEAR's model of it ("nr_class 1", which
         * predicts it for every row; before: 1, -1 and 0 alone trained a model of two
         * classes, which named the one never seen for rows of negative score, and others
         * were refused). A binary file's -1 of 0/1 data is the class 0. */
        if (d->label_kind == ST_GLM_LABEL_CLASS && d->zero_one && list[0] == -1.0) {
            list[0] = 0.0;
        }
        for (i = 0; i < d->n_rows; i++) {
            d->y[i] = list[0];
        }
        d->zero_one = 0;
        prob->named = 1;
    } else if (st_glm_classes_within(list, n, 1.0, -1.0)) {
        /* the binary set of before: +1 first, as LIBLINEAR swaps it there (list has
         * room for 8) */
        list[0] = st_glm_classes_within(list, n, -1.0, -1.0) ? -1.0 : 1.0;
        list[1] = -1.0;
    } else if (n > 0 && st_glm_classes_within(list, n, 1.0, 0.0)) {
        list[0] = st_glm_classes_within(list, n, 0.0, 0.0) ? 0.0 : 1.0;   /* (as above) */
        list[1] = 0.0;
        for (i = 0; i < d->n_rows; i++) {
            d->y[i] = (d->y[i] == 0.0) ? -1.0 : 1.0;
        }
        d->zero_one = 1;
    } else {
        prob->named = 1;
    }
    d->label_kind  = prob->named ? ST_GLM_LABEL_MULTI : ST_GLM_LABEL_CLASS;
    prob->classes  = list;   /* (n == 0: list may be NULL) */
    list           = NULL;

out:
    free(list);
    free(sorted);
    free(all);
    free(mine);
    free(counts);
    free(displs);
    return status;
}

double st_glm_problem_label(const strata_glm_problem_t *prob, int64_t i)
{
    const st_glm_data_t *d = prob->data;

    if (prob->named || prob->regression) {
        return d->y[i];
    }
    return (d->y[i] > 0) ? 1.0 : d->zero_one ? 0.0 : -1.0;
}

/* ---- views: the rows of a problem with other labels ---- */

/* A problem over @a src's rows (shared, not copied) whose labels are +1 where the class
 * is @a cls and -1 elsewhere; NULL without memory. Freed by strata_glm_problem_free,
 * which then frees the labels alone. */
static strata_glm_problem_t *st_glm_problem_one_vs_rest(const strata_glm_problem_t *src,
                                                        double cls)
{
    const st_glm_data_t *s = src->data;
    strata_glm_problem_t *v = calloc(1, sizeof(*v));
    st_glm_data_t *d        = malloc(sizeof(*d));
    double *y               = malloc((size_t)ST_MAX(s->n_rows, 1) * sizeof(double));
    int64_t i;

    if (v == NULL || d == NULL || y == NULL) {
        free(v);
        free(d);
        free(y);
        return NULL;
    }
    for (i = 0; i < s->n_rows; i++) {
        y[i] = (s->y[i] == cls) ? 1.0 : -1.0;
    }
    *d            = *s;
    d->y          = y;
    d->label_kind = ST_GLM_LABEL_CLASS;
    d->zero_one   = 0;
    v->data           = d;
    v->view           = 1;
    v->rows_fine      = src->rows_fine;   /* (the same rows) */
    v->rows_fine_bias = src->rows_fine_bias;
    return v;
}

void st_glm_problem_view_free(strata_glm_problem_t *prob)
{
    free(prob->data->y);
    free(prob->data);
    free(prob->classes);
    free(prob);
}

/* ---- training ---- */

strata_glm_model_t *st_glm_model_new_classes(const st_glm_model_t *loss, int64_t n_features,
                                             double bias, int nr_class, const double *labels)
{
    strata_glm_model_t *model = st_glm_model_new(loss, n_features, bias);
    int nr_w = (nr_class > 2) ? nr_class : 1;
    double *w;

    if (model == NULL) {
        return NULL;
    }
    model->labels = malloc((size_t)nr_class * sizeof(double));
    w = (nr_w > 1) ? calloc(((size_t)n_features + 1) * (size_t)nr_w, sizeof(double)) : NULL;
    if (model->labels == NULL || (nr_w > 1 && w == NULL)) {
        free(w);
        strata_glm_model_free(model);
        return NULL;
    }
    if (w != NULL) {
        free(model->w);
        model->w = w;
    }
    memcpy(model->labels, labels, (size_t)nr_class * sizeof(double));
    model->nr_class = nr_class;
    return model;
}

strata_status_t st_glm_train_named(const strata_glm_problem_t *prob,
                                   const strata_glm_param_t *param, MPI_Comm comm, char *msg,
                                   size_t msg_len, const strata_glm_model_t *start,
                                   strata_glm_model_t **model_p)
{
    const st_glm_model_t *loss = st_glm_model_lookup(param->solver, NULL, 0);
    strata_glm_model_t *model = NULL, *sub = NULL, *sub_start = NULL;
    strata_glm_problem_t *view = NULL;
    strata_glm_param_t p = *param;
    strata_status_t status = STRATA_OK;
    int k = prob->nr_class, nr_w = (k > 2) ? k : 1, c, rank = 0;
    int64_t j, n_w = prob->data->n_cols + (param->bias > 0);
    char why[1024];

    if (k < 1) {
        st_glm_msg(msg, msg_len, "no training examples: no class to train");
        return STRATA_ERR_INVALID_PARAM;
    }
    if (k > 2 && st_glm_weighted(param)) {
        st_glm_msg(msg, msg_len, "class weights (weight_pos, weight_neg: --weight-pos, "
                   "--weight-neg) with %d classes: they name the two classes of a binary "
                   "model (weights of any class: strata-train's -wLABEL X, "
                   "strata_glm_problem_set_class_weights in C)", k);
        return STRATA_ERR_INVALID_PARAM;
    }
    if (k > 2 && (param->checkpoint_every > 0 || param->resume)) {
        st_glm_msg(msg, msg_len, "checkpoints with %d classes: a checkpoint holds one "
                   "binary training (train one class against the rest at a time)", k);
        return STRATA_ERR_INVALID_PARAM;
    }
    model = st_glm_model_new_classes(loss, prob->data->n_cols,
                                     param->bias > 0 ? param->bias : -1, k, prob->classes);
    if (start != NULL) {   /* (each class's training from its column of the start) */
        sub_start = st_glm_model_new(loss, prob->data->n_cols,
                                     param->bias > 0 ? param->bias : -1);
    }
    if (!st_glm_agree(comm, model != NULL && (start == NULL || sub_start != NULL))) {
        strata_glm_model_free(sub_start);
        strata_glm_model_free(model);
        st_glm_msg(msg, msg_len, "out of memory for the model: %d classes x %lld features",
                   k, (long long)prob->data->n_cols);
        return STRATA_ERR_NO_MEMORY;
    }
    st_glm_comm_shape(comm, &rank, NULL);
    for (c = 0; c < nr_w; c++) {
        view = st_glm_problem_one_vs_rest(prob, prob->classes[c]);
        if (!st_glm_agree(comm, view != NULL)) {
            strata_glm_problem_free(view);   /* (where another rank lacked the memory) */
            st_glm_msg(msg, msg_len, "out of memory for the labels of class %.17g",
                       prob->classes[c]);
            status = STRATA_ERR_NO_MEMORY;
            break;
        }
        if (param->verbose && rank == 0 && nr_w > 1) {
            st_glm_print("class %.17g (%d of %d) against the rest\n", prob->classes[c], c + 1,
                         k);
        }
        for (j = 0; sub_start != NULL && j < n_w; j++) {
            sub_start->w[j] = start->w[j * nr_w + c];
        }
        /* LIBLINEAR's class weights: one against the rest weighs the class's rows by its
           weight, the rest's by 1; two classes, each its own (times the parameters') */
        if (nr_w > 1) {
            p.weight_pos = st_glm_class_weight(prob, prob->classes[c]);
            p.weight_neg = 1.0;
        } else if (k == 1) {   /* (LIBLINEAR's one class: its rows all positive) */
            p.weight_pos = st_glm_class_weight(prob, prob->classes[0]) *
                           (prob->classes[0] == 1.0 ? param->weight_pos :
                            prob->classes[0] == -1.0 || prob->classes[0] == 0.0
                                ? param->weight_neg : 1.0);
            p.weight_neg = 1.0;
        } else {
            p.weight_pos = param->weight_pos * st_glm_class_weight(prob, prob->classes[0]);
            p.weight_neg = param->weight_neg * st_glm_class_weight(prob, prob->classes[1]);
        }
        status = strata_glm_train_from(view, &p, comm, why, sizeof(why), sub_start, &sub);
        strata_glm_problem_free(view);
        view = NULL;
        if (status != STRATA_OK) {
            if (nr_w > 1) {
                st_glm_msg(msg, msg_len, "class %.17g against the rest: %s", prob->classes[c],
                           why);
            } else {
                st_glm_msg(msg, msg_len, "%s", why);
            }
            break;
        }
        for (j = 0; j < n_w; j++) {
            model->w[j * nr_w + c] = sub->w[j];
        }
        /* the model's training: the sum of the classes' objectives, all their rounds */
        if (c == 0) {
            model->info = sub->info;
        } else {
            model->info.rounds       += sub->info.rounds;
            model->info.converged    &= sub->info.converged;
            model->info.primal       += sub->info.primal;
            model->info.dual         += sub->info.dual;
            model->info.gap          += sub->info.gap;
            model->info.seconds      += sub->info.seconds;
            model->info.comm_seconds += sub->info.comm_seconds;
            model->info.method        = sub->info.method;
        }
        model->lambda = sub->lambda;
        model->eta    = sub->eta;
        strata_glm_model_free(sub);
        sub = NULL;
    }
    strata_glm_model_free(sub_start);
    if (status != STRATA_OK) {
        strata_glm_model_free(model);
        return status;
    }
    *model_p = model;
    return STRATA_OK;
}
