/*
 * Classes named by any integers, and more than two of them (LIBLINEAR's one-vs-rest),
 * on 1, 2 and 3 ranks (tests/multiN.npN), through the public API:
 *   - strata_glm_problem_labels: the classes in the order of their first rows in the
 *     global row order (rank 0's rows first), the same on every rank, but [1, -1] for a
 *     set of 1 and -1 and [1, 0] for 1 and 0 (the binary sets, which
 *     strata_glm_problem_classes counts; any other set: STRATA_ERR_UNSUPPORTED there);
 *     labels that are not integers below 2^31 in magnitude refused on every rank;
 *   - strata_glm_train of four classes is, bit for bit, the binary trainings of each
 *     class (+1) against the rest (-1) on the same rows, weights side by side in
 *     LIBLINEAR's layout (feature j's weight for class c at w[j k + c], the bias last),
 *     its info their sum; two classes named otherwise (5 and 2) are one binary model,
 *     the first class positive;
 *   - prediction: the label of the largest decision value (the first of equals), the
 *     decision values those of a dot product by hand, strata_glm_predict and
 *     strata_glm_predict_row the labels, strata_glm_predict_probability LIBLINEAR's;
 *   - strata_glm_evaluate: the accuracy of the labels (a class the model lacks counts
 *     wrong), no AUC or log loss;
 *   - a model file keeps the classes and the weights ("nr_class 4", "label 3 1 7 -2");
 *   - strata_glm_cross_validate: its out-of-fold scores are the labels the folds'
 *     models trained by hand predict, its accuracy theirs;
 *     strata_glm_find_cost's best C the best of those cross-validations;
 *   - strata_glm_problem_read(_prec) of the same set: the same classes, a float copy's
 *     accuracy by hand, a label 2.5 refused on every rank;
 *   - refusals: class weights and checkpoints with more than two classes;
 *   - a set of one class (5, -1, 0 or 1): LIBLINEAR's model of it, "nr_class 1", which
 *     predicts that class for every row, with probability 1.
 * The model files, the svmlight file and the refused checkpoint live in a temporary
 * directory (rank 0's, under $TMPDIR or /tmp), removed at the end.
 */
#include "st_glm_test.h"
#include "st_glm_perm.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define K_MULTI 4

static dataset_t ds;
static const double names[K_MULTI] = {3, 1, 7, -2};   /* in the order of their first rows */
static double y_multi[N_ROWS];   /* named 3, 1, 7, -2 from a planted 4-class model */
static double y_two[N_ROWS];     /* named 5 (row 0's class) and 2 */
static char tmpdir[256];         /* rank 0's, the same path on every rank */

/* ---- rows ---- */

/* Rows [*lo_p, *hi_p) of the set are mine: an even split, or with @a last_empty the last
 * rank none (its share on the others, when there are several). */
static void my_range(int last_empty, int64_t *lo_p, int64_t *hi_p)
{
    int parts = (last_empty && nranks > 1) ? nranks - 1 : nranks;

    if (rank >= parts) {
        *lo_p = *hi_p = N_ROWS;
        return;
    }
    *lo_p = (int64_t)N_ROWS * rank / parts;
    *hi_p = (int64_t)N_ROWS * (rank + 1) / parts;
}

/* My rows of the data set with the labels @a y (global, N_ROWS of them) as a problem;
 * @a status_p the status of strata_glm_problem_create (NULL: must be STRATA_OK). */
static strata_glm_problem_t *rows_with(const double *y, int regression, int last_empty,
                                       strata_status_t *status_p, char *msg, size_t msg_len)
{
    int64_t lo, hi, indptr[N_ROWS + 1], i;
    strata_glm_problem_t *prob = NULL;
    strata_status_t st;
    char own[256];

    my_range(last_empty, &lo, &hi);
    for (i = lo; i <= hi; i++) {
        indptr[i - lo] = ds.indptr[i] - ds.indptr[lo];
    }
    if (msg == NULL) {
        msg     = own;
        msg_len = sizeof(own);
    }
    st = strata_glm_problem_create(hi - lo, N_COLS, indptr, ds.indices + ds.indptr[lo],
                                   ds.values + ds.indptr[lo], y + lo, regression,
                                   MPI_COMM_WORLD, msg, msg_len, &prob);
    if (status_p != NULL) {
        *status_p = st;
    } else {
        CHECKF(st == STRATA_OK, "problem_create: %s", msg);
    }
    return prob;
}

/* @a a and @a b, @a n doubles, alike bit for bit. */
static int same_bits(const double *a, const double *b, int64_t n)
{
    return memcmp(a, b, (size_t)n * sizeof(double)) == 0;
}

/* The first of the largest of @a v[0 .. n). */
static int argmax(const double *v, int n)
{
    int c, best = 0;

    for (c = 1; c < n; c++) {
        if (v[c] > v[best]) {
            best = c;
        }
    }
    return best;
}

/* The classes of @a prob or of @a model into @a buf (room for MAX_CLASSES; not filled
 * where there are more). @return their number. */
#define MAX_CLASSES 16
static int prob_labels(const strata_glm_problem_t *prob, double *buf)
{
    int n = strata_glm_problem_labels(prob, NULL);

    return (n >= 0 && n <= MAX_CLASSES) ? strata_glm_problem_labels(prob, buf) : n;
}

static int model_labels(const strata_glm_model_t *model, double *buf)
{
    int n = strata_glm_model_classes(model, NULL);

    return (n >= 0 && n <= MAX_CLASSES) ? strata_glm_model_classes(model, buf) : n;
}

/* "[a, b, ...]" of @a n labels into @a buf (for messages). */
static const char *list_str(const double *v, int n, char *buf, size_t len)
{
    size_t o = 0;
    int i;

    buf[0] = '\0';
    for (i = 0; i < n && i < MAX_CLASSES && o < len; i++) {
        o += (size_t)snprintf(buf + o, len - o, "%s%.17g", i ? ", " : "[", v[i]);
    }
    if (o < len) {
        snprintf(buf + o, len - o, "]");
    }
    return buf;
}

/* @a msg, the same on every rank? */
static int same_everywhere(const char *msg)
{
    char first[512];
    int same;

    snprintf(first, sizeof(first), "%s", msg);
    MPI_Bcast(first, sizeof(first), MPI_CHAR, 0, MPI_COMM_WORLD);
    same = (strncmp(first, msg, sizeof(first) - 1) == 0);
    MPI_Allreduce(MPI_IN_PLACE, &same, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    return same;
}

/* ---- labels ---- */

/* The classes of the labels @a y: @a want (of @a n_want), on every rank; the binary sets
 * (@a binary) counted by strata_glm_problem_classes, the others refused there. */
static void check_labels(const char *what, const double *y, int last_empty,
                         const double *want, int n_want, int binary)
{
    strata_glm_problem_t *prob = rows_with(y, 0, last_empty, NULL, NULL, 0);
    double got[MAX_CLASSES], first[MAX_CLASSES];
    int64_t counts[2] = {-1, -1}, i, want_counts[2] = {0, 0};
    int n, n0, zero_one = -1, same;
    strata_status_t st;
    char b1[256], b2[256];

    if (prob == NULL) {
        return;
    }
    memset(got, 0, sizeof(got));
    n = strata_glm_problem_labels(prob, NULL);
    CHECKF(n == n_want, "%s: %d classes, want %d", what, n, n_want);
    n = prob_labels(prob, got);
    CHECKF(n == n_want && same_bits(got, want, n_want), "%s: classes %s, want %s", what,
           list_str(got, n, b1, sizeof(b1)), list_str(want, n_want, b2, sizeof(b2)));
    /* the same on every rank */
    n0 = n;
    memcpy(first, got, sizeof(first));
    MPI_Bcast(&n0, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Bcast(first, MAX_CLASSES, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    same = (n0 == n && n <= MAX_CLASSES && same_bits(first, got, n));
    MPI_Allreduce(MPI_IN_PLACE, &same, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    CHECKF(same, "%s: the ranks' classes differ (rank 0: %s, this rank %s)", what,
           list_str(first, n0, b1, sizeof(b1)), list_str(got, n, b2, sizeof(b2)));

    st = strata_glm_problem_classes(prob, MPI_COMM_WORLD, counts, &zero_one);
    if (!binary) {
        CHECKF(st == STRATA_ERR_UNSUPPORTED, "%s: problem_classes: status %d, want "
               "STRATA_ERR_UNSUPPORTED (%d)", what, st, STRATA_ERR_UNSUPPORTED);
    } else {
        for (i = 0; i < N_ROWS; i++) {
            want_counts[0] += (y[i] == 1);
            want_counts[1] += (y[i] != 1);
        }
        CHECKF(st == STRATA_OK && counts[0] == want_counts[0] && counts[1] == want_counts[1],
               "%s: problem_classes: status %d, counts %lld %lld, want %lld %lld", what, st,
               (long long)counts[0], (long long)counts[1], (long long)want_counts[0],
               (long long)want_counts[1]);
        CHECKF(st != STRATA_OK ||
                      zero_one == (want[n_want - 1] == 0),
               "%s: zero_one %d", what, zero_one);
    }
    strata_glm_problem_free(prob);
}

/* Labels that name no class: refused on every rank (the bad one on the last rank's
 * rows). */
static void check_bad_label(double bad)
{
    static double y[N_ROWS];
    strata_glm_problem_t *prob = NULL;
    strata_status_t st;
    int64_t i;
    int ok;
    char msg[256] = "";

    for (i = 0; i < N_ROWS; i++) {
        y[i] = (i % 3) + 1;
    }
    y[N_ROWS - 2] = bad;
    prob = rows_with(y, 0, 0, &st, msg, sizeof(msg));
    ok   = (st == STRATA_ERR_INVALID_PARAM && prob == NULL);
    CHECKF(ok, "label %.17g: status %d, want STRATA_ERR_INVALID_PARAM (%d) on every rank "
           "('%s')", bad, st, STRATA_ERR_INVALID_PARAM, msg);
    strata_glm_problem_free(prob);
    /* a regression target may be any finite number */
    if (isfinite(bad)) {
        prob = rows_with(y, 1, 0, NULL, NULL, 0);
        CHECKF(prob != NULL && strata_glm_problem_labels(prob, NULL) == 0,
               "target %.17g: a regression problem has no classes", bad);
        strata_glm_problem_free(prob);
    }
}

static void check_all_labels(void)
{
    static double y[N_ROWS];
    int64_t g;
    int c;

    /* first rows across the ranks: rank 0 (of 2 or 3) has 3 and 1 alone or 3, 1, 7;
     * 7 first at row 90, -2 at row 125, and rank 1 of 2 sees -2 before 7 */
    for (g = 0; g < N_ROWS; g++) {
        y[g] = (g < 125) ? ((g == 90 || (g > 90 && g % 5 == 0)) ? 7 : (g % 2 ? 1 : 3))
             : (g == 125) ? -2 : (g < 130) ? 1 : names[g % 4];
    }
    {
        const double want[] = {3, 1, 7, -2};

        check_labels("3 1 7 -2 across the ranks", y, 0, want, 4, 0);
        check_labels("3 1 7 -2, the last rank empty", y, 1, want, 4, 0);
    }
    /* the planted set's names, in their order */
    check_labels("the 4-class set", y_multi, 0, names, K_MULTI, 0);
    /* 1 and -1, -1 first (on the last rank alone): [1, -1], counted */
    for (g = 0; g < N_ROWS; g++) {
        y[g] = (g < N_ROWS - 30) ? -1 : (g % 2 ? 1 : -1);
    }
    {
        const double want[] = {1, -1};

        check_labels("-1 first, then 1", y, 0, want, 2, 1);
    }
    /* 1 and 0, 0 first: [1, 0] */
    for (g = 0; g < N_ROWS; g++) {
        y[g] = (g < 100 || g % 3 == 0) ? 0 : 1;
    }
    {
        const double want[] = {1, 0};

        check_labels("0 first, then 1", y, 0, want, 2, 1);
        y[0] = -0.0;   /* (-0 is the class 0) */
        check_labels("-0 first, then 1", y, 0, want, 2, 1);
    }
    /* -1, 0 and 1, 0 first: three named classes in their order */
    for (g = 0; g < N_ROWS; g++) {
        y[g] = (g % 3 == 0) ? 0 : (g % 3 == 1) ? -1 : 1;
    }
    {
        const double want[] = {0, -1, 1};

        check_labels("0, -1, 1", y, 0, want, 3, 0);
    }
    /* 5 and 2, 5 first: two named classes */
    {
        const double want[] = {5, 2};

        check_labels("5 first, then 2", y_two, 0, want, 2, 0);
    }
    /* one class alone: a named one, and either of a binary set's (all named: LIBLINEAR's
     * model of one class, check_one_class) */
    for (c = 0; c < 3; c++) {
        static const double alone[3] = {5, -1, 1};
        char what[32];

        for (g = 0; g < N_ROWS; g++) {
            y[g] = alone[c];
        }
        snprintf(what, sizeof(what), "%g alone", alone[c]);
        check_labels(what, y, 0, &alone[c], 1, 0);
    }
    /* the extreme names */
    for (g = 0; g < N_ROWS; g++) {
        y[g] = (g % 2) ? -2147483647.0 : 2147483647.0;
    }
    {
        const double want[] = {2147483647.0, -2147483647.0};

        check_labels("+-(2^31 - 1)", y, 0, want, 2, 0);
    }
    check_bad_label(1.5);
    check_bad_label(-0.5);
    check_bad_label(2147483648.0);
    check_bad_label(-2147483648.0);
    check_bad_label(1e300);
    check_bad_label(NAN);
    check_bad_label(INFINITY);
}

/* The same classes read from an svmlight file (rank 0 writes it; kept for check_prec32,
 * removed at the end), and a label that names no class refused. */
static void check_read(void)
{
    char path[300], msg[256] = "", b1[256];
    strata_glm_problem_t *prob = NULL;
    strata_status_t st;
    double got[MAX_CLASSES];
    int64_t g, k;
    int n;
    FILE *f;

    snprintf(path, sizeof(path), "%s/multi.svm", tmpdir);
    if (rank == 0) {
        f = fopen(path, "w");
        CHECKF(f != NULL, "cannot write %s", path);
        for (g = 0; f != NULL && g < N_ROWS; g++) {
            fprintf(f, "%d", (int)y_multi[g]);
            for (k = ds.indptr[g]; k < ds.indptr[g + 1]; k++) {
                fprintf(f, " %u:%.17g", ds.indices[k] + 1, ds.values[k]);
            }
            fprintf(f, "\n");
        }
        if (f != NULL) {
            fclose(f);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    st = strata_glm_problem_read(path, 0, MPI_COMM_WORLD, msg, sizeof(msg), &prob);
    CHECKF(st == STRATA_OK, "problem_read %s: %s", path, msg);
    if (st == STRATA_OK) {
        n = prob_labels(prob, got);
        CHECKF(n == K_MULTI && same_bits(got, names, K_MULTI) &&
               strata_glm_problem_rows_global(prob) == N_ROWS,
               "problem_read: classes %s, %lld rows", list_str(got, n, b1, sizeof(b1)),
               (long long)strata_glm_problem_rows_global(prob));
        strata_glm_problem_free(prob);
    }
    /* a label that names no class, near the end of the file: refused on every rank */
    snprintf(path, sizeof(path), "%s/bad.svm", tmpdir);
    if (rank == 0) {
        f = fopen(path, "w");
        CHECKF(f != NULL, "cannot write %s", path);
        for (g = 0; f != NULL && g < N_ROWS; g++) {
            fprintf(f, g == N_ROWS - 3 ? "2.5 1:1\n" : "%d 1:1 %d:0.5\n", (int)y_multi[g],
                    (int)(g % N_COLS) + 2);
        }
        if (f != NULL) {
            fclose(f);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    prob = NULL;
    st   = strata_glm_problem_read(path, 0, MPI_COMM_WORLD, msg, sizeof(msg), &prob);
    CHECKF(st == STRATA_ERR_INVALID_PARAM && prob == NULL && strstr(msg, "2.5") != NULL,
           "problem_read of the label 2.5: status %d, '%s'", st, msg);
    CHECKF(same_everywhere(msg), "problem_read of the label 2.5: the ranks' messages differ "
           "('%s' here)", msg);
    strata_glm_problem_free(prob);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        unlink(path);
    }
}

/* A 4-class @a model on the set read with float values (strata_glm_problem_read_prec 32,
 * each rank its own share of the file's rows): the accuracy of the labels of the
 * float-rounded rows, by hand over all rows. */
static void check_prec32(const char *what, const strata_glm_model_t *model)
{
    char path[300], msg[256] = "";
    strata_glm_problem_t *prob = NULL;
    strata_glm_metrics_t m;
    const double *w = strata_glm_model_weights(model);
    double b = strata_glm_model_bias(model), dec[K_MULTI], correct = 0;
    int64_t g, k;
    int c;

    snprintf(path, sizeof(path), "%s/multi.svm", tmpdir);
    CHECKF(strata_glm_problem_read_prec(path, 0, 32, MPI_COMM_WORLD, msg, sizeof(msg),
                                        &prob) == STRATA_OK, "%s: read_prec 32: %s", what,
           msg);
    if (prob == NULL) {
        return;
    }
    for (g = 0; g < N_ROWS; g++) {
        for (c = 0; c < K_MULTI; c++) {
            dec[c] = 0;
            for (k = ds.indptr[g]; k < ds.indptr[g + 1]; k++) {
                dec[c] += w[(int64_t)ds.indices[k] * K_MULTI + c] * (double)(float)ds.values[k];
            }
            if (b > 0) {
                dec[c] += w[(int64_t)N_COLS * K_MULTI + c] * b;
            }
        }
        correct += (names[argmax(dec, K_MULTI)] == y_multi[g]);
    }
    CHECKF(strata_glm_problem_prec(prob) == 32 &&
           strata_glm_evaluate(model, prob, MPI_COMM_WORLD, &m) == STRATA_OK &&
           m.n == N_ROWS && m.accuracy == correct / N_ROWS && isnan(m.auc),
           "%s: float values: accuracy %.17g, want %.17g", what, m.accuracy,
           correct / N_ROWS);
    strata_glm_problem_free(prob);
}

/* ---- training ---- */

static void params(strata_glm_param_t *p, const char *solver, double bias)
{
    strata_glm_param_default(p);
    p->solver     = solver;
    p->lambda     = 1e-2;
    p->tol        = 1e-4;
    p->max_rounds = 300;
    p->bias       = bias;
}

/* strata_glm_train of the 4-class set against each class's binary training by hand
 * (+1 for the class, -1 for the rest, on the same rows and ranks). @return the model
 * (the caller's), NULL when it failed. */
static strata_glm_model_t *check_ovr(const char *solver, double bias, int max_rounds,
                                     int *class_rounds, int *mixed_p)
{
    static double y[N_ROWS];
    strata_glm_problem_t *prob = rows_with(y_multi, 0, 0, NULL, NULL, 0), *bin;
    strata_glm_model_t *model = NULL, *sub;
    strata_glm_info_t info, si;
    strata_glm_param_t p;
    const double *w, *sw;
    double got[MAX_CLASSES], sub_labels[MAX_CLASSES], primal = 0;
    int64_t n_w = N_COLS + (bias > 0), j, g;
    int k, c, rounds = 0, converged = 1;
    char msg[512] = "", b1[256];

    params(&p, solver, bias);
    p.max_rounds = max_rounds;
    CHECKF(strata_glm_train(prob, &p, MPI_COMM_WORLD, msg, sizeof(msg), &model) == STRATA_OK,
           "%s (bias %g): train of 4 classes: %s", solver, bias, msg);
    if (model == NULL) {
        strata_glm_problem_free(prob);
        return NULL;
    }
    k = strata_glm_model_classes(model, NULL);
    CHECKF(k == K_MULTI, "%s: model_classes %d, want 4", solver, k);
    memset(got, 0, sizeof(got));
    k = model_labels(model, got);
    CHECKF(k == K_MULTI && same_bits(got, names, K_MULTI), "%s: model classes %s", solver,
           list_str(got, k, b1, sizeof(b1)));
    if (k != K_MULTI) {   /* (the checks below assume 4 classes' weights) */
        strata_glm_model_free(model);
        strata_glm_problem_free(prob);
        return NULL;
    }
    CHECKF(strata_glm_model_features(model) == N_COLS &&
           (bias > 0 ? strata_glm_model_bias(model) == bias
                     : strata_glm_model_bias(model) <= 0) &&
           strata_glm_model_solver(model) != NULL &&
           !strcmp(strata_glm_model_solver(model), solver),
           "%s: model of %lld features, bias %g, solver %s", solver,
           (long long)strata_glm_model_features(model), strata_glm_model_bias(model),
           strata_glm_model_solver(model));
    w = strata_glm_model_weights(model);
    strata_glm_model_info(model, &info);
    for (c = 0; c < K_MULTI; c++) {
        for (g = 0; g < N_ROWS; g++) {
            y[g] = (y_multi[g] == names[c]) ? 1.0 : -1.0;
        }
        bin = rows_with(y, 0, 0, NULL, NULL, 0);
        sub = NULL;
        CHECKF(strata_glm_train(bin, &p, MPI_COMM_WORLD, msg, sizeof(msg), &sub) == STRATA_OK,
               "%s: class %g against the rest by hand: %s", solver, names[c], msg);
        if (sub == NULL) {
            strata_glm_problem_free(bin);
            continue;
        }
        CHECKF(model_labels(sub, sub_labels) == 2 && sub_labels[0] == 1 &&
               sub_labels[1] == -1, "%s: the binary model's classes %g %g", solver,
               sub_labels[0], sub_labels[1]);
        sw = strata_glm_model_weights(sub);
        for (j = 0; j < n_w; j++) {
            if (!same_bits(&w[j * K_MULTI + c], &sw[j], 1)) {
                CHECKF(0, "%s (bias %g, %d rounds): class %g, weight %lld: %.17g, by hand "
                       "%.17g", solver, bias, max_rounds, names[c], (long long)j,
                       w[j * K_MULTI + c], sw[j]);
                break;
            }
        }
        strata_glm_model_info(sub, &si);
        if (class_rounds != NULL) {
            class_rounds[c] = si.rounds;
        }
        if (mixed_p != NULL && c > 0 && si.converged != converged) {
            *mixed_p = 1;   /* (converged: of the classes so far, all alike until here) */
        }
        rounds    += si.rounds;
        converged  = converged && si.converged;
        primal     = (c == 0) ? si.primal : primal + si.primal;
        strata_glm_model_free(sub);
        strata_glm_problem_free(bin);
    }
    CHECKF(info.rounds == rounds && info.converged == converged && info.primal == primal,
           "%s (bias %g, %d rounds): info: %d rounds, converged %d, primal %.17g; the classes "
           "by hand: %d, %d, %.17g", solver, bias, max_rounds, info.rounds, info.converged,
           info.primal, rounds, converged, primal);
    strata_glm_problem_free(prob);
    return model;
}

/* Two classes named 5 (first) and 2: one binary model, 5 positive. */
static void check_two_named(void)
{
    static double y[N_ROWS];
    strata_glm_problem_t *prob = rows_with(y_two, 0, 0, NULL, NULL, 0), *bin;
    strata_glm_model_t *model = NULL, *sub = NULL, *back = NULL;
    strata_glm_metrics_t m;
    strata_glm_param_t p;
    double got[MAX_CLASSES] = {0}, z[N_ROWS], dec[2], probs[2], label, want_p, yy;
    double sum[3] = {0, 0, 0};
    int64_t lo, hi, g, nnz, k;
    char msg[512] = "", path[300], line[256];
    int n;
    FILE *f;

    params(&p, "logistic", 1);
    CHECKF(strata_glm_train(prob, &p, MPI_COMM_WORLD, msg, sizeof(msg), &model) == STRATA_OK,
           "classes 5 and 2: train: %s", msg);
    for (g = 0; g < N_ROWS; g++) {
        y[g] = (y_two[g] == 5) ? 1.0 : -1.0;
    }
    bin = rows_with(y, 0, 0, NULL, NULL, 0);
    CHECKF(strata_glm_train(bin, &p, MPI_COMM_WORLD, msg, sizeof(msg), &sub) == STRATA_OK,
           "classes 5 and 2: 5 against 2 by hand: %s", msg);
    if (model == NULL || sub == NULL) {
        goto out;
    }
    n = model_labels(model, got);
    CHECKF(n == 2 && got[0] == 5 && got[1] == 2, "classes 5 and 2: model classes %d: %g %g",
           n, got[0], got[1]);
    if (n != 2) {
        goto out;   /* (the rest writes two scores at most) */
    }
    CHECKF(same_bits(strata_glm_model_weights(model), strata_glm_model_weights(sub),
                     N_COLS + 1), "classes 5 and 2: the weights differ from 5 (+1) against "
           "2 (-1) by hand");
    CHECKF(strata_glm_predict_class(model, 0.25) == 5 && strata_glm_predict_class(model, 0) == 2 &&
           strata_glm_predict_class(model, -0.25) == 2,
           "classes 5 and 2: predict_class 0.25 -> %g, 0 -> %g, -0.25 -> %g",
           strata_glm_predict_class(model, 0.25), strata_glm_predict_class(model, 0),
           strata_glm_predict_class(model, -0.25));
    /* rows: scores, labels, probabilities */
    my_range(0, &lo, &hi);
    CHECKF(strata_glm_predict(model, prob, z) == STRATA_OK, "classes 5 and 2: predict");
    for (g = lo; g < hi; g++) {
        const double *w = strata_glm_model_weights(model);
        double s = 0;

        nnz = ds.indptr[g + 1] - ds.indptr[g];
        for (k = ds.indptr[g]; k < ds.indptr[g + 1]; k++) {
            s += w[ds.indices[k]] * ds.values[k];
        }
        s += w[N_COLS] * 1.0;
        label = strata_glm_predict_label(model, nnz, ds.indices + ds.indptr[g],
                                         ds.values + ds.indptr[g], dec);
        CHECKF(same_bits(&z[g - lo], &s, 1) && same_bits(&dec[0], &s, 1) &&
               label == (s > 0 ? 5 : 2) &&
               strata_glm_predict_row(model, nnz, ds.indices + ds.indptr[g],
                                      ds.values + ds.indptr[g]) == s,
               "classes 5 and 2: row %lld: score %.17g, decision value %.17g, label %g "
               "(by hand %.17g)", (long long)g, z[g - lo], dec[0], label, s);
        label  = strata_glm_predict_probability(model, nnz, ds.indices + ds.indptr[g],
                                                ds.values + ds.indptr[g], probs);
        want_p = 1.0 / (1.0 + exp(-s));
        CHECKF(label == (s > 0 ? 5 : 2) && fabs(probs[0] - want_p) <= 1e-15 &&
               probs[1] == 1.0 - probs[0], "classes 5 and 2: row %lld: probabilities %.17g "
               "%.17g (want %.17g), label %g", (long long)g, probs[0], probs[1], want_p, label);
        yy      = (y_two[g] == 5) ? 1 : -1;
        sum[0] += ((s > 0 ? 5 : 2) == y_two[g]);
        sum[1] += log1p(exp(-yy * s));
    }
    MPI_Allreduce(MPI_IN_PLACE, sum, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    CHECKF(strata_glm_evaluate(model, prob, MPI_COMM_WORLD, &m) == STRATA_OK &&
           m.n == N_ROWS && m.accuracy == sum[0] / N_ROWS && m.accuracy > 0.75 &&
           fabs(m.logloss - sum[1] / N_ROWS) <= 1e-12 && m.auc > 0.75 && m.auc <= 1 &&
           isnan(m.rmse), "classes 5 and 2: evaluate: accuracy %.17g (want %.17g), log loss "
           "%.17g (want %.17g), AUC %g", m.accuracy, sum[0] / N_ROWS, m.logloss,
           sum[1] / N_ROWS, m.auc);
    /* the file */
    snprintf(path, sizeof(path), "%s/two-%d.model", tmpdir, rank);
    CHECKF(strata_glm_model_save(model, path, msg, sizeof(msg)) == STRATA_OK,
           "classes 5 and 2: save: %s", msg);
    f = fopen(path, "r");
    n = 0;
    while (f != NULL && fgets(line, sizeof(line), f) != NULL && strcmp(line, "w\n") != 0) {
        n += !strcmp(line, "nr_class 2\n") + !strcmp(line, "label 5 2\n");
    }
    if (f != NULL) {
        fclose(f);
    }
    CHECKF(n == 2, "classes 5 and 2: the file's header lacks 'nr_class 2' or 'label 5 2'");
    CHECKF(strata_glm_model_load(path, msg, sizeof(msg), &back) == STRATA_OK,
           "classes 5 and 2: load: %s", msg);
    if (back != NULL) {
        n = model_labels(back, got);
        CHECKF(n == 2 && got[0] == 5 && got[1] == 2 &&
               same_bits(strata_glm_model_weights(back), strata_glm_model_weights(model),
                         N_COLS + 1) && strata_glm_predict_class(back, 0.25) == 5 &&
               strata_glm_predict_class(back, 0) == 2,
               "classes 5 and 2: the model read back: %d classes %g %g", n, got[0], got[1]);
        strata_glm_model_free(back);
    }
    unlink(path);
out:
    strata_glm_model_free(model);
    strata_glm_model_free(sub);
    strata_glm_problem_free(bin);
    strata_glm_problem_free(prob);
}

/* ---- prediction ---- */

/* The decision values of row @a g by hand: each class's sum in the row's order, the
 * bias last. */
static void dec_by_hand(const strata_glm_model_t *model, int64_t g, double *dec)
{
    const double *w = strata_glm_model_weights(model);
    double b = strata_glm_model_bias(model);
    int64_t k;
    int c;

    for (c = 0; c < K_MULTI; c++) {
        dec[c] = 0;
        for (k = ds.indptr[g]; k < ds.indptr[g + 1]; k++) {
            dec[c] += w[(int64_t)ds.indices[k] * K_MULTI + c] * ds.values[k];
        }
        if (b > 0) {
            dec[c] += w[(int64_t)N_COLS * K_MULTI + c] * b;
        }
    }
}

/* Every prediction function of a 4-class @a model on my rows (strata_glm_predict_prob of
 * a label: NaN, not the link of the label), and strata_glm_evaluate. */
static void check_predict(const char *what, const strata_glm_model_t *model, int logistic)
{
    strata_glm_problem_t *prob = rows_with(y_multi, 0, 0, NULL, NULL, 0), *other;
    static double y9[N_ROWS];
    double z[N_ROWS], dec[K_MULTI], want[K_MULTI], probs[K_MULTI], label, s, sig[K_MULTI];
    double sum[2] = {0, 0};
    uint32_t idx[N_COLS + 2];
    double val[N_COLS + 2];
    strata_glm_metrics_t m;
    int64_t lo, hi, g, nnz;
    int c, bad = 0;

    my_range(0, &lo, &hi);
    CHECKF(strata_glm_predict(model, prob, z) == STRATA_OK, "%s: predict", what);
    for (g = lo; g < hi && bad < 3; g++) {
        nnz = ds.indptr[g + 1] - ds.indptr[g];
        dec_by_hand(model, g, want);
        label = strata_glm_predict_label(model, nnz, ds.indices + ds.indptr[g],
                                         ds.values + ds.indptr[g], dec);
        if (!same_bits(dec, want, K_MULTI) || label != names[argmax(want, K_MULTI)] ||
            z[g - lo] != label ||
            strata_glm_predict_row(model, nnz, ds.indices + ds.indptr[g],
                                   ds.values + ds.indptr[g]) != label ||
            strata_glm_predict_class(model, label) != label ||
            !isnan(strata_glm_predict_prob(model, label)) ||
            strata_glm_predict_label(model, nnz, ds.indices + ds.indptr[g],
                                     ds.values + ds.indptr[g], NULL) != label) {
            bad++;
            CHECKF(0, "%s: row %lld: label %g (predict %g, predict_row %g, predict_prob %g: "
                   "want NaN), want %g; decision values %.17g %.17g %.17g %.17g, by hand "
                   "%.17g %.17g %.17g %.17g", what, (long long)g, label, z[g - lo],
                   strata_glm_predict_row(model, nnz, ds.indices + ds.indptr[g],
                                          ds.values + ds.indptr[g]),
                   strata_glm_predict_prob(model, label),
                   names[argmax(want, K_MULTI)], dec[0], dec[1], dec[2], dec[3], want[0],
                   want[1], want[2], want[3]);
        }
        /* a feature the model has not: ignored */
        memcpy(idx, ds.indices + ds.indptr[g], (size_t)nnz * sizeof(uint32_t));
        memcpy(val, ds.values + ds.indptr[g], (size_t)nnz * sizeof(double));
        idx[nnz] = N_COLS + 1;
        val[nnz] = 1e6;
        label    = strata_glm_predict_label(model, nnz + 1, idx, val, dec);
        CHECKF(same_bits(dec, want, K_MULTI) && label == names[argmax(want, K_MULTI)],
               "%s: row %lld with a feature beyond the model's: label %g", what, (long long)g,
               label);
        /* probabilities */
        label = strata_glm_predict_probability(model, nnz, ds.indices + ds.indptr[g],
                                               ds.values + ds.indptr[g], probs);
        CHECKF(label == names[argmax(want, K_MULTI)], "%s: row %lld: predict_probability's "
               "label %g", what, (long long)g, label);
        if (logistic) {
            for (s = 0, c = 0; c < K_MULTI; c++) {
                sig[c] = 1.0 / (1.0 + exp(-want[c]));
                s     += sig[c];
            }
            for (c = 0; c < K_MULTI; c++) {
                CHECKF(fabs(probs[c] - sig[c] / s) <= 1e-14, "%s: row %lld: P(class %g) "
                       "%.17g, want %.17g", what, (long long)g, names[c], probs[c],
                       sig[c] / s);
            }
            CHECKF(fabs(probs[0] + probs[1] + probs[2] + probs[3] - 1) <= 1e-14 &&
                   names[argmax(probs, K_MULTI)] == label, "%s: row %lld: probabilities "
                   "%g %g %g %g (label %g)", what, (long long)g, probs[0], probs[1], probs[2],
                   probs[3], label);
        } else {
            CHECKF(isnan(probs[0]) && isnan(probs[3]), "%s: row %lld: probabilities of a "
                   "model that is not logistic: %g ... %g, want NaN", what, (long long)g,
                   probs[0], probs[3]);
        }
        sum[0] += (z[g - lo] == y_multi[g]);
        sum[1] += (z[g - lo] == y_multi[g] && g % 7 != 3);
    }
    /* ties: the first class of the largest decision value (a row without entries
     * scores the bias weights alone: all 0 without a bias) */
    label = strata_glm_predict_label(model, 0, idx, val, dec);
    if (strata_glm_model_bias(model) <= 0) {
        CHECKF(label == names[0] && dec[0] == 0 && dec[3] == 0 &&
               strata_glm_predict_row(model, 0, idx, val) == names[0],
               "%s: an empty row (all decision values 0): label %g, want %g", what, label,
               names[0]);
    } else {
        const double *w = strata_glm_model_weights(model);

        for (c = 0; c < K_MULTI; c++) {
            want[c] = 0.0 + w[(int64_t)N_COLS * K_MULTI + c] * strata_glm_model_bias(model);
        }
        CHECKF(same_bits(dec, want, K_MULTI) && label == names[argmax(want, K_MULTI)],
               "%s: an empty row: label %g", what, label);
    }
    /* evaluate: the share of the labels right */
    MPI_Allreduce(MPI_IN_PLACE, sum, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    CHECKF(strata_glm_evaluate(model, prob, MPI_COMM_WORLD, &m) == STRATA_OK &&
           m.n == N_ROWS && m.accuracy == sum[0] / N_ROWS && isnan(m.auc) &&
           isnan(m.logloss) && isnan(m.rmse),
           "%s: evaluate: %lld rows, accuracy %.17g (want %.17g), AUC %g, log loss %g, RMSE "
           "%g", what, (long long)m.n, m.accuracy, sum[0] / N_ROWS, m.auc, m.logloss, m.rmse);
    CHECKF(m.accuracy > 0.5, "%s: accuracy %g on the training set (4 classes)", what,
           m.accuracy);
    /* a test set with a class the model has not (9): those rows wrong */
    for (g = 0; g < N_ROWS; g++) {
        y9[g] = (g % 7 == 3) ? 9 : y_multi[g];
    }
    other = rows_with(y9, 0, 0, NULL, NULL, 0);
    CHECKF(other != NULL && strata_glm_evaluate(model, other, MPI_COMM_WORLD, &m) ==
           STRATA_OK && m.n == N_ROWS && m.accuracy == sum[1] / N_ROWS && isnan(m.auc) &&
           isnan(m.logloss), "%s: evaluate with the class 9: accuracy %.17g (want %.17g)",
           what, m.accuracy, sum[1] / N_ROWS);
    strata_glm_problem_free(other);
    strata_glm_problem_free(prob);
}

/* Ties: a model file with equal weights (LIBLINEAR's layout), the first class of the
 * largest decision value. */
static void check_ties(void)
{
    static const char text[] = "solver_type L2R_LR\nnr_class 3\nlabel 4 8 6\nnr_feature 2\n"
                               "bias -1\nw\n0 1 1 \n1 0 0 \n";
    static const struct {
        double x[2], want;
    } rows[] = {{{1, 0}, 8}, {{0, 1}, 4}, {{1, 1}, 4}, {{1, -1}, 8}, {{-1, 0}, 4},
                {{0, 0}, 4}, {{-1, 2}, 4}, {{2, 1}, 8}};
    strata_glm_model_t *model = NULL;
    uint32_t idx[2] = {0, 1};
    double dec[3], probs[3], label, want_p[3], s;
    char path[300], msg[512] = "";
    size_t i;
    int c;
    FILE *f;

    snprintf(path, sizeof(path), "%s/ties-%d.model", tmpdir, rank);
    f = fopen(path, "w");
    CHECKF(f != NULL && fputs(text, f) >= 0 && fclose(f) == 0, "cannot write %s", path);
    CHECKF(strata_glm_model_load(path, msg, sizeof(msg), &model) == STRATA_OK,
           "ties: load: %s", msg);
    unlink(path);
    if (model == NULL) {
        return;
    }
    CHECKF(strata_glm_model_classes(model, NULL) == 3, "ties: %d classes",
           strata_glm_model_classes(model, NULL));
    if (strata_glm_model_classes(model, NULL) != 3) {
        strata_glm_model_free(model);
        return;
    }
    for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        label = strata_glm_predict_label(model, 2, idx, rows[i].x, dec);
        CHECKF(label == rows[i].want && dec[0] == rows[i].x[1] && dec[1] == rows[i].x[0] &&
               dec[2] == rows[i].x[0] &&
               strata_glm_predict_row(model, 2, idx, rows[i].x) == rows[i].want,
               "ties: x = (%g, %g): label %g (predict_row %g), want %g; decision values "
               "%g %g %g", rows[i].x[0], rows[i].x[1], label,
               strata_glm_predict_row(model, 2, idx, rows[i].x), rows[i].want, dec[0], dec[1],
               dec[2]);
        label = strata_glm_predict_probability(model, 2, idx, rows[i].x, probs);
        for (s = 0, c = 0; c < 3; c++) {
            want_p[c] = 1.0 / (1.0 + exp(-dec[c]));
            s        += want_p[c];
        }
        CHECKF(label == rows[i].want && fabs(probs[0] - want_p[0] / s) <= 1e-15 &&
               fabs(probs[1] - want_p[1] / s) <= 1e-15 && probs[1] == probs[2],
               "ties: x = (%g, %g): probabilities %.17g %.17g %.17g, label %g", rows[i].x[0],
               rows[i].x[1], probs[0], probs[1], probs[2], label);
    }
    strata_glm_model_free(model);
}

/* ---- model files ---- */

static void check_file(const char *what, const strata_glm_model_t *model)
{
    strata_glm_model_t *back = NULL;
    char path[300], msg[512] = "", line[512], b1[256], want_bias[64];
    double got[MAX_CLASSES];
    int64_t n_w = N_COLS + (strata_glm_model_bias(model) > 0);
    int n, lines = 0, header[3] = {0, 0, 0};
    FILE *f;

    snprintf(path, sizeof(path), "%s/multi-%d.model", tmpdir, rank);
    CHECKF(strata_glm_model_save(model, path, msg, sizeof(msg)) == STRATA_OK,
           "%s: save: %s", what, msg);
    if (strata_glm_model_bias(model) > 0) {
        snprintf(want_bias, sizeof(want_bias), "bias %.17g\n", strata_glm_model_bias(model));
    } else {
        snprintf(want_bias, sizeof(want_bias), "bias -1\n");
    }
    f = fopen(path, "r");
    while (f != NULL && fgets(line, sizeof(line), f) != NULL) {
        lines++;
        if (lines == 2) {
            header[0] = !strcmp(line, "nr_class 4\n");
        } else if (lines == 3) {
            header[1] = !strcmp(line, "label 3 1 7 -2\n");
        } else if (!strncmp(line, "bias ", 5)) {
            header[2] = !strcmp(line, want_bias);
        }
    }
    if (f != NULL) {
        fclose(f);
    }
    CHECKF(header[0] && header[1] && header[2] && lines == 6 + n_w,
           "%s: the file: 'nr_class 4' on line 2 %d, 'label 3 1 7 -2' on line 3 %d, the bias "
           "%d, %d lines (want %lld)", what, header[0], header[1], header[2], lines,
           (long long)(6 + n_w));
    CHECKF(strata_glm_model_load(path, msg, sizeof(msg), &back) == STRATA_OK,
           "%s: load: %s", what, msg);
    if (back != NULL) {
        n = model_labels(back, got);
        CHECKF(n == K_MULTI && same_bits(got, names, K_MULTI), "%s: read back: classes %s",
               what, list_str(got, n, b1, sizeof(b1)));
        CHECKF(n == K_MULTI && strata_glm_model_features(back) == N_COLS &&
               strata_glm_model_bias(back) == strata_glm_model_bias(model) &&
               strata_glm_model_solver(back) != NULL &&
               !strcmp(strata_glm_model_solver(back), strata_glm_model_solver(model)) &&
               same_bits(strata_glm_model_weights(back), strata_glm_model_weights(model),
                         n_w * K_MULTI), "%s: read back: %lld features, bias %g, solver "
               "%s, or the weights differ", what,
               (long long)strata_glm_model_features(back), strata_glm_model_bias(back),
               strata_glm_model_solver(back));
        /* and it predicts alike */
        {
            strata_glm_problem_t *prob = rows_with(y_multi, 0, 0, NULL, NULL, 0);
            double z1[N_ROWS], z2[N_ROWS];
            int64_t rows = strata_glm_problem_rows(prob);

            CHECKF(strata_glm_predict(model, prob, z1) == STRATA_OK &&
                   strata_glm_predict(back, prob, z2) == STRATA_OK &&
                   same_bits(z1, z2, rows), "%s: read back: the labels predicted differ",
                   what);
            strata_glm_problem_free(prob);
        }
        strata_glm_model_free(back);
    }
    unlink(path);
}

/* ---- cross-validation ---- */


/* strata_glm_cross_validate of named classes (@a y, @a k of them) against the folds'
 * models by hand: the out-of-fold labels (two classes: scores) and their accuracy. */
static void check_cv(const char *solver, const double *y, int k, int folds)
{
    strata_glm_problem_t *prob = rows_with(y, 0, 0, NULL, NULL, 0), *train, *test;
    strata_glm_info_t infos[8], info;
    strata_glm_metrics_t m;
    strata_glm_model_t *model;
    strata_glm_param_t p;
    st_glm_perm_t perm;
    double scores[N_ROWS], z[N_ROWS], correct = 0, cls[MAX_CLASSES], first = 0;
    static double y_hand[N_ROWS];
    int64_t lo, hi, g, t;
    int f, c, same = 1, known = 1;
    char msg[512] = "";

    params(&p, solver, 1);
    CHECKF(prob_labels(prob, cls) == k, "%s, %d classes: problem_labels %d", solver, k,
           strata_glm_problem_labels(prob, NULL));
    CHECKF(strata_glm_cross_validate(prob, &p, folds, 0, MPI_COMM_WORLD, msg, sizeof(msg),
                                     scores, infos, &m) == STRATA_OK,
           "%s, %d classes: cross_validate: %s", solver, k, msg);
    my_range(0, &lo, &hi);
    st_glm_cv_perm(&perm, N_ROWS, p.seed);
    /* two classes: every fold's model scores the data's first class positive (a fold's
     * rows by hand might name the other first): by hand, that class +1, the other -1 */
    for (g = 0; g < N_ROWS; g++) {
        y_hand[g] = (k > 2) ? y[g] : (y[g] == cls[0]) ? 1 : -1;
    }
    for (f = 0; f < folds; f++) {
        train = fold_rows_of(&ds, &perm, folds, f, 0, y_hand, 0);
        test  = fold_rows_of(&ds, &perm, folds, f, 1, y_hand, 0);
        model = NULL;
        CHECKF(strata_glm_train(train, &p, MPI_COMM_WORLD, msg, sizeof(msg), &model) ==
                       STRATA_OK, "%s, %d classes: fold %d by hand: %s", solver, k, f, msg);
        if (model == NULL) {
            strata_glm_problem_free(train);
            strata_glm_problem_free(test);
            break;
        }
        strata_glm_model_info(model, &info);
        CHECKF(info.rounds == infos[f].rounds && info.converged == infos[f].converged,
               "%s, %d classes: fold %d: %d rounds (converged %d), cross-validation's %d "
               "(%d)", solver, k, f, info.rounds, info.converged, infos[f].rounds,
               infos[f].converged);
        strata_glm_predict(model, test, z);
        for (t = 0, g = lo; g < hi; g++) {
            if (st_glm_cv_fold(&perm, folds, (uint64_t)g) == f) {
                if (k > 2) {   /* the labels (the folds' classes may come in another order) */
                    same = same && (z[t] == scores[g - lo]);
                } else {       /* the scores */
                    same = same && same_bits(&z[t], &scores[g - lo], 1);
                }
                t++;
            }
        }
        strata_glm_model_free(model);
        strata_glm_problem_free(train);
        strata_glm_problem_free(test);
    }
    CHECKF(same, "%s, %d classes (%d folds): the out-of-fold scores differ from the folds' "
           "models' by hand", solver, k, folds);
    for (g = lo; g < hi; g++) {
        if (k > 2) {
            for (c = 0, first = 0; c < k; c++) {
                first += (scores[g - lo] == cls[c]);
            }
            known = known && first == 1;
            correct += (scores[g - lo] == y[g]);
        } else {
            correct += ((scores[g - lo] > 0 ? cls[0] : cls[1]) == y[g]);
        }
    }
    CHECKF(known, "%s, %d classes: an out-of-fold score is not a class", solver, k);
    MPI_Allreduce(MPI_IN_PLACE, &correct, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    CHECKF(m.n == N_ROWS && m.accuracy == correct / N_ROWS && m.accuracy > 0.5 &&
           (k > 2 ? isnan(m.auc) && isnan(m.logloss) : m.auc > 0.5 && !isnan(m.logloss)),
           "%s, %d classes: cross-validation's accuracy %.17g (want %.17g), AUC %g, log loss "
           "%g", solver, k, m.accuracy, correct / N_ROWS, m.auc, m.logloss);
    strata_glm_problem_free(prob);
}

/* strata_glm_find_cost of 4 classes: the C of the best cross-validated accuracy (the
 * smallest of equals). */
static void check_find(void)
{
    strata_glm_problem_t *prob = rows_with(y_multi, 0, 0, NULL, NULL, 0);
    strata_glm_metrics_t m, best;
    strata_glm_param_t p;
    double c, best_c = 0, want_c = 0, want = -1;
    char msg[512] = "";

    params(&p, "logistic", -1);
    CHECKF(strata_glm_find_cost(prob, &p, 3, 0.125, 2.0, MPI_COMM_WORLD, msg, sizeof(msg),
                                &best_c, &best, NULL) == STRATA_OK, "4 classes: find_cost: %s",
           msg);
    for (c = 0.125; c <= 2.0; c *= 2) {
        CHECKF(strata_glm_cross_validate(prob, &p, 3, c, MPI_COMM_WORLD, msg, sizeof(msg), NULL,
                                         NULL, &m) == STRATA_OK, "4 classes: C %g: %s", c, msg);
        if (m.accuracy > want) {
            want   = m.accuracy;
            want_c = c;
        }
    }
    CHECKF(best_c == want_c && best.accuracy == want, "4 classes: find_cost: best C %g "
           "(%.17g), want %g (%.17g)", best_c, best.accuracy, want_c, want);
    strata_glm_problem_free(prob);
}

/* ---- refusals ---- */

static void refused(const char *what, const double *y, const strata_glm_param_t *p,
                    strata_status_t status, const char *want)
{
    strata_glm_problem_t *prob = rows_with(y, 0, 0, NULL, NULL, 0);
    strata_glm_model_t *model = NULL;
    strata_status_t got;
    char msg[512] = "";

    got = strata_glm_train(prob, p, MPI_COMM_WORLD, msg, sizeof(msg), &model);
    CHECKF(got == status && model == NULL && (want == NULL || strstr(msg, want) != NULL) &&
           msg[0] != '\0', "%s: status %d, '%s' (want %d, '%s')", what, got, msg, status,
           want ? want : "");
    CHECKF(same_everywhere(msg), "%s: the ranks' messages differ ('%s' here)", what, msg);
    strata_glm_model_free(model);
    strata_glm_problem_free(prob);
}

static void check_refusals(void)
{
    strata_glm_param_t p;
    char path[300];

    params(&p, "logistic", -1);
    p.weight_pos = 2;
    refused("4 classes, weight_pos 2", y_multi, &p, STRATA_ERR_INVALID_PARAM, NULL);
    params(&p, "svm", -1);
    p.weight_neg = 0.5;
    refused("4 classes, weight_neg 0.5", y_multi, &p, STRATA_ERR_INVALID_PARAM, NULL);
    params(&p, "logistic", -1);
    snprintf(path, sizeof(path), "%s/multi.ckpt", tmpdir);
    p.checkpoint       = path;
    p.checkpoint_every = 2;
    refused("4 classes, checkpoint_every 2", y_multi, &p, STRATA_ERR_INVALID_PARAM, NULL);
    CHECKF(access(path, F_OK) != 0, "4 classes, checkpoint_every 2: %s was written", path);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        unlink(path);
    }
    p.checkpoint_every = 0;
    p.resume           = 1;
    refused("4 classes, resume", y_multi, &p, STRATA_ERR_INVALID_PARAM, NULL);
}

/* ---- one class: LIBLINEAR's model of it ---- */

/* Training data of the class @a cls alone: LIBLINEAR's model of one class ("nr_class 1",
 * "label cls", one weight per feature), which predicts @a cls for every row, a row of
 * negative score too, with probability 1 (logistic), and is written and read back as
 * such. (Before: 1, -1 and 0 alone trained a model of two classes, which predicted the
 * class never seen, -1 or 1, for rows of negative score, P(cls) < 1; other names were
 * refused, "a classifier needs two classes".) */
static void check_one_class(const char *solver, double cls)
{
    static double y[N_ROWS];
    strata_glm_problem_t *prob;
    strata_glm_model_t *model = NULL, *back = NULL;
    strata_glm_param_t p;
    strata_glm_metrics_t m;
    char msg[512] = "", what[64], path[300], line[128];
    double got[MAX_CLASSES], vals[N_COLS], probs[2], dec, label;
    int64_t g, k, lo, hi, nnz, wrong = 0, unsure = 0, negative = 0;
    int n, header = 0;
    FILE *f;

    snprintf(what, sizeof(what), "%s, the class %g alone", solver, cls);
    for (g = 0; g < N_ROWS; g++) {
        y[g] = cls;
    }
    params(&p, solver, -1);   /* (no bias: a row negated scores negative) */
    prob = rows_with(y, 0, 0, NULL, NULL, 0);
    CHECKF(strata_glm_train(prob, &p, MPI_COMM_WORLD, msg, sizeof(msg), &model) == STRATA_OK,
           "%s: refused: %s", what, msg);
    if (model == NULL) {
        strata_glm_problem_free(prob);
        return;
    }
    n = model_labels(model, got);
    CHECKF(n == 1 && got[0] == cls, "%s: the model's classes %s, want [%g]", what,
           list_str(got, n, line, sizeof(line)), cls);
    /* every row, and its negation (a negative score), predicted cls */
    my_range(0, &lo, &hi);
    for (g = lo; g < hi; g++) {
        nnz = ds.indptr[g + 1] - ds.indptr[g];
        for (k = 0; k < nnz; k++) {
            vals[k] = -ds.values[ds.indptr[g] + k];
        }
        label = strata_glm_predict_label(model, nnz, ds.indices + ds.indptr[g],
                                         ds.values + ds.indptr[g], NULL);
        wrong += (label != cls);
        label = strata_glm_predict_label(model, nnz, ds.indices + ds.indptr[g], vals, &dec);
        wrong += (label != cls);
        negative += (dec < 0);
        label = strata_glm_predict_probability(model, nnz, ds.indices + ds.indptr[g], vals,
                                               probs);
        wrong += (label != cls);
        unsure += !strcmp(solver, "logistic") ? (probs[0] != 1.0) : !isnan(probs[0]);
    }
    MPI_Allreduce(MPI_IN_PLACE, &negative, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
    CHECKF(wrong == 0, "%s: %lld labels predicted not %g", what, (long long)wrong, cls);
    CHECKF(negative > 0, "%s: no row of negative score tried", what);
    CHECKF(unsure == 0, "%s: %lld probabilities not %s", what, (long long)unsure,
           !strcmp(solver, "logistic") ? "1" : "NaN");
    CHECKF(strata_glm_evaluate(model, prob, MPI_COMM_WORLD, &m) == STRATA_OK &&
           m.accuracy == 1.0 && isnan(m.auc) && isnan(m.logloss), "%s: evaluate: accuracy "
           "%g, AUC %g, log loss %g (want 1, nan, nan)", what, m.accuracy, m.auc, m.logloss);
    /* the file: LIBLINEAR's lines, read back alike */
    snprintf(path, sizeof(path), "%s/one-%d.model", tmpdir, rank);
    CHECKF(strata_glm_model_save(model, path, msg, sizeof(msg)) == STRATA_OK,
           "%s: save: %s", what, msg);
    snprintf(msg, sizeof(msg), "label %g\n", cls);
    f = fopen(path, "r");
    for (n = 1; f != NULL && fgets(line, sizeof(line), f) != NULL; n++) {
        header += (n == 2 && !strcmp(line, "nr_class 1\n")) + (n == 3 && !strcmp(line, msg));
    }
    if (f != NULL) {
        fclose(f);
    }
    CHECKF(header == 2, "%s: the file lacks 'nr_class 1' on line 2 or '%s' on line 3", what,
           "label cls");
    CHECKF(strata_glm_model_load(path, msg, sizeof(msg), &back) == STRATA_OK,
           "%s: load: %s", what, msg);
    CHECKF(back != NULL && st_glm_model_hash(back) == st_glm_model_hash(model),
           "%s: the model read back differs", what);
    unlink(path);
    strata_glm_model_free(back);
    strata_glm_model_free(model);
    strata_glm_problem_free(prob);
}

/* ---- verbose: a line per class ---- */

static char printed[8192];

static void capture(const char *line)
{
    size_t len = strlen(printed);

    snprintf(printed + len, sizeof(printed) - len, "%s", line);
}

static void check_verbose(void)
{
    strata_glm_problem_t *prob = rows_with(y_multi, 0, 0, NULL, NULL, 0);
    strata_glm_model_t *model = NULL;
    strata_glm_param_t p;
    const char *at = printed, *next;
    char msg[512] = "", word[32];
    int c, in_order = 1;

    params(&p, "logistic", -1);
    p.verbose  = 1;
    printed[0] = '\0';
    strata_glm_set_print_function(capture);
    CHECKF(strata_glm_train(prob, &p, MPI_COMM_WORLD, msg, sizeof(msg), &model) == STRATA_OK,
           "verbose: train: %s", msg);
    strata_glm_set_print_function(NULL);
    if (rank == 0) {
        for (c = 0; c < K_MULTI; c++) {
            snprintf(word, sizeof(word), "class %g ", names[c]);
            next     = strstr(at, word);
            in_order = in_order && next != NULL;
            at       = next ? next + 1 : at;
        }
        CHECKF(in_order, "verbose: no line naming each class in turn:\n%s", printed);
    } else {
        CHECKF(printed[0] == '\0', "verbose: rank %d printed '%s'", rank, printed);
    }
    strata_glm_model_free(model);
    strata_glm_problem_free(prob);
}

/* ---- the data ---- */

static void make_labels(void)
{
    double s[K_MULTI];
    int64_t g, k;
    int c;

    for (g = 0; g < N_ROWS; g++) {
        for (c = 0; c < K_MULTI; c++) {
            s[c] = 0.4 * (unit((uint64_t)g, 9000 + (uint64_t)c) - 0.5);
            for (k = ds.indptr[g]; k < ds.indptr[g + 1]; k++) {
                s[c] += ds.values[k] * (2 * unit(50 + (uint64_t)c, ds.indices[k]) - 1);
            }
        }
        y_multi[g] = names[argmax(s, K_MULTI)];
        y_two[g]   = (ds.y_class[g] == ds.y_class[0]) ? 5 : 2;
    }
    for (c = 0; c < K_MULTI; c++) {   /* the first rows: the classes in names' order */
        y_multi[c] = names[c];
    }
}

/* One training of @a prob with @a p (NULL on failure, said). */
static strata_glm_model_t *trained(const char *what, strata_glm_problem_t *prob,
                                   const strata_glm_param_t *p)
{
    strata_glm_model_t *model = NULL;
    char msg[512] = "";

    CHECKF(strata_glm_train(prob, p, MPI_COMM_WORLD, msg, sizeof(msg), &model) == STRATA_OK,
           "%s: train: %s", what, msg);
    return model;
}

/* strata_glm_problem_set_class_weights: one against the rest weighs the class's rows by
 * its weight and the rest's by 1, bit for bit the classes' binary trainings by hand
 * with weight_pos; a label the problem has not is left aside (found counts the
 * others); a binary set's weights multiply weight_pos and weight_neg; cross-validation's
 * folds keep them; bad weights refused. */
static void check_class_weights(void)
{
    static double y_bin[N_ROWS];
    double labels[3] = {7, 9, 1}, weights[3] = {5, 2, 0.5}, bad[2] = {0, NAN}, cw;
    strata_glm_problem_t *prob = rows_with(y_multi, 0, 0, NULL, NULL, 0), *bin;
    strata_glm_model_t *model, *one, *plain;
    strata_glm_metrics_t m1, m2;
    strata_glm_param_t p, q;
    int found = -1, c, same = 1, differ = 0;
    int64_t j, g;
    char msg[512] = "";

    params(&p, "logistic", -1);
    CHECKF(strata_glm_problem_set_class_weights(prob, 3, labels, weights, &found, msg,
                                                sizeof(msg)) == STRATA_OK && found == 2,
           "class weights 7, 9, 1: found %d, want 2 (%s)", found, msg);
    model = trained("class weights", prob, &p);
    for (c = 0; model != NULL && c < K_MULTI; c++) {
        for (g = 0; g < N_ROWS; g++) {
            y_bin[g] = (y_multi[g] == names[c]) ? 1 : -1;
        }
        bin          = rows_with(y_bin, 0, 0, NULL, NULL, 0);
        q            = p;
        q.weight_pos = (names[c] == 7) ? 5 : (names[c] == 1) ? 0.5 : 1;
        one          = trained("class weights: a class by hand", bin, &q);
        for (j = 0; one != NULL && j < N_COLS; j++) {
            same = same && !memcmp(&strata_glm_model_weights(model)[j * K_MULTI + c],
                                   &strata_glm_model_weights(one)[j], sizeof(double));
        }
        strata_glm_model_free(one);
        strata_glm_problem_free(bin);
    }
    CHECKF(same, "class weights: the classes' weights differ from their trainings by hand "
           "(class 7's rows weighing 5, class 1's 0.5, the rest 1)");
    /* they make a difference, and the folds keep them */
    params(&q, "logistic", -1);
    bin   = rows_with(y_multi, 0, 0, NULL, NULL, 0);
    plain = trained("no class weights", bin, &q);
    for (j = 0; model != NULL && plain != NULL && j < N_COLS * K_MULTI; j++) {
        differ |= (strata_glm_model_weights(model)[j] != strata_glm_model_weights(plain)[j]);
    }
    CHECKF(differ, "class weights: the same model as without them");
    CHECKF(strata_glm_cross_validate(prob, &p, 3, 0, MPI_COMM_WORLD, msg, sizeof(msg), NULL,
                                     NULL, &m1) == STRATA_OK &&
           strata_glm_cross_validate(bin, &p, 3, 0, MPI_COMM_WORLD, msg, sizeof(msg), NULL,
                                     NULL, &m2) == STRATA_OK,
           "class weights: cross-validation: %s", msg);
    CHECKF(m1.accuracy != m2.accuracy || differ == 0, "class weights: the folds' accuracy "
           "%g is the unweighted folds' (the folds lost the weights?)", m1.accuracy);
    strata_glm_model_free(plain);
    strata_glm_model_free(model);
    strata_glm_problem_free(bin);
    /* bad weights; a regression problem */
    CHECKF(strata_glm_problem_set_class_weights(prob, 1, labels, bad, NULL, msg, sizeof(msg)) ==
           STRATA_ERR_INVALID_PARAM && strstr(msg, "positive and finite") != NULL,
           "class weight 0: '%s'", msg);
    CHECKF(strata_glm_problem_set_class_weights(prob, 1, labels, bad + 1, NULL, msg,
                                                sizeof(msg)) == STRATA_ERR_INVALID_PARAM,
           "class weight NaN: accepted");
    strata_glm_problem_free(prob);
    prob = rows_with(ds.y_real, 1, 0, NULL, NULL, 0);
    CHECKF(strata_glm_problem_set_class_weights(prob, 1, labels, weights, NULL, msg,
                                                sizeof(msg)) == STRATA_ERR_INVALID_PARAM,
           "class weights of a regression problem: accepted");
    strata_glm_problem_free(prob);
    /* a binary set: the weights times weight_pos and weight_neg */
    prob      = rows_with(ds.y_class, 0, 0, NULL, NULL, 0);
    labels[0] = -1;
    weights[0] = 3;
    CHECKF(strata_glm_problem_set_class_weights(prob, 1, labels, weights, &found, msg,
                                                sizeof(msg)) == STRATA_OK && found == 1,
           "class weights of -1: found %d (%s)", found, msg);
    p.weight_pos = 2;
    p.weight_neg = 0.5;
    model = trained("a binary set's class weights", prob, &p);
    strata_glm_problem_free(prob);
    prob         = rows_with(ds.y_class, 0, 0, NULL, NULL, 0);
    cw           = 3 * 0.5;
    p.weight_neg = cw;
    one          = trained("a binary set's weights by hand", prob, &p);
    CHECKF(model != NULL && one != NULL &&
           !memcmp(strata_glm_model_weights(model), strata_glm_model_weights(one),
                   N_COLS * sizeof(double)),
           "a binary set: class -1's weight 3 times weight_neg 0.5 is not weight_neg 1.5");
    strata_glm_model_free(model);
    strata_glm_model_free(one);
    strata_glm_problem_free(prob);
}

int main(int argc, char **argv)
{
    strata_glm_model_t *model;
    const char *base = getenv("TMPDIR");
    int class_rounds[K_MULTI] = {0, 0, 0, 0}, c, lo, hi, mixed = 0;
    char path[300];

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    make_data(&ds, 0);
    make_labels();
    if (rank == 0) {
        snprintf(tmpdir, sizeof(tmpdir), "%s/test_multi.XXXXXX",
                 (base != NULL && base[0] != '\0') ? base : "/tmp");
        if (mkdtemp(tmpdir) == NULL) {
            CHECKF(0, "mkdtemp %s failed", tmpdir);
            tmpdir[0] = '\0';
        }
    }
    MPI_Bcast(tmpdir, sizeof(tmpdir), MPI_CHAR, 0, MPI_COMM_WORLD);

    check_all_labels();
    check_read();
    check_one_class("logistic", 5);
    check_one_class("logistic", -1);
    check_one_class("logistic", 0);
    check_one_class("logistic", 1);
    check_one_class("svm", 5);

    model = check_ovr("logistic", -1, 300, NULL, NULL);
    if (model != NULL) {
        check_predict("logistic", model, 1);
        check_file("logistic", model);
        strata_glm_model_free(model);
    }
    model = check_ovr("logistic", 1, 300, NULL, NULL);
    if (model != NULL) {
        check_predict("logistic, bias 1", model, 1);
        check_prec32("logistic, bias 1", model);
        check_file("logistic, bias 1", model);
        strata_glm_model_free(model);
    }
    model = check_ovr("logistic", 1, 1, NULL, NULL);   /* one round: no class converged */
    strata_glm_model_free(model);
    model = check_ovr("svm", 0.5, 300, class_rounds, NULL);
    if (model != NULL) {
        check_predict("svm, bias 0.5", model, 0);
        check_file("svm, bias 0.5", model);
        strata_glm_model_free(model);
    }
    /* stopped at a class's rounds where another class needs more: converged only where
     * every class did (some converging within max_rounds, others not) */
    for (c = 0, lo = hi = class_rounds[0]; c < K_MULTI; c++) {
        lo = (class_rounds[c] < lo) ? class_rounds[c] : lo;
        hi = (class_rounds[c] > hi) ? class_rounds[c] : hi;
    }
    for (c = 0; c < K_MULTI; c++) {
        if (class_rounds[c] < hi) {
            model = check_ovr("svm", 0.5, class_rounds[c], NULL, &mixed);
            strata_glm_model_free(model);
        }
    }
    CHECKF(mixed || lo == hi, "svm: the classes' rounds %d %d %d %d, but no "
           "training stopped with some classes converged and others not", class_rounds[0],
           class_rounds[1], class_rounds[2], class_rounds[3]);
    model = check_ovr("l1-logistic", -1, 300, NULL, NULL);
    if (model != NULL) {
        check_predict("l1-logistic", model, 1);
        strata_glm_model_free(model);
    }
    check_two_named();
    check_ties();
    check_cv("logistic", y_multi, K_MULTI, 4);
    check_cv("svm", y_multi, K_MULTI, 3);
    check_cv("logistic", y_two, 2, 3);
    check_find();
    check_class_weights();
    check_refusals();
    check_verbose();

    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        snprintf(path, sizeof(path), "%s/multi.svm", tmpdir);
        unlink(path);
    }
    if (rank == 0 && tmpdir[0] != '\0' && rmdir(tmpdir) != 0) {
        CHECKF(0, "%s: not empty at the end", tmpdir);
    }
    MPI_Allreduce(MPI_IN_PLACE, &failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("test_multi: %s: %d ranks, %d failures\n", failures ? "FAIL" : "PASS", nranks,
               failures);
    }
    MPI_Finalize();
    return failures ? 1 : 0;
}
