/*
 * strata_glm_cross_validate on 1, 2 and 3 ranks (tests/cvN.npN): each model kind's
 * out-of-fold scores are, bit for bit, those of models trained by hand on the folds'
 * complements (strata_glm_problem_create of this rank's rows outside the fold, then
 * strata_glm_train and strata_glm_predict), with LIBLINEAR's C (cost) as each fold's
 * own lambda; the metrics are those of the scores; the folds' sizes differ by at most
 * one; bad fold counts and checkpoints are refused with the same status and message
 * on every rank. strata_glm_find_cost picks the C whose cross-validation is best (each
 * fold warm-started from the last C's) and starts from LIBLINEAR's first C (lasso: the
 * C whose model is just w = 0). strata_glm_train_from: a start at another lambda's
 * optimum reaches this lambda's within the tolerance, in fewer rounds than from 0 (the
 * methods that take a start), or is left aside (coordinate descent: the same bits as
 * from 0); a start at this lambda's own optimum is converged at round 0; a start of
 * another kind, feature count, bias, or with checkpoints, is refused; w = 0 is never
 * the answer of the primal methods, however large lambda. L-BFGS's sums kept on a
 * search's folds (memo problems) change no model. A fold's failed training is named,
 * and the caller's message buffer is never read.
 */
#include "st_glm_test.h"
#include "st_glm_perm.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static dataset_t ds;


/* The cross-validation of @a solver against the same folds by hand. */
static void check_model(const char *solver, int folds, double cost)
{
    int regression = !strcmp(solver, "ridge") || !strcmp(solver, "lasso");
    int64_t lo = (int64_t)N_ROWS * rank / nranks, hi = (int64_t)N_ROWS * (rank + 1) / nranks;
    strata_glm_problem_t *prob = my_rows(&ds, regression, 0), *train, *test;
    strata_glm_info_t infos[8], info;
    strata_glm_metrics_t m;
    strata_glm_model_t *model;
    strata_glm_param_t p;
    st_glm_perm_t perm;
    double scores[N_ROWS], z[N_ROWS], sum[3] = {0, 0, 0};
    int64_t g, t, n_train;
    char msg[512];
    int k, same = 1;

    strata_glm_param_default(&p);
    p.solver     = solver;
    p.lambda     = 1e-2;
    p.tol        = 1e-6;
    p.max_rounds = 300;
    CHECKF(strata_glm_cross_validate(prob, &p, folds, cost, MPI_COMM_WORLD, msg, sizeof(msg),
                                     scores, infos, &m) == STRATA_OK,
           "%s: cross_validate: %s", solver, msg);
    st_glm_cv_perm(&perm, N_ROWS, p.seed);
    for (k = 0; k < folds; k++) {
        train   = fold_rows_of(&ds, &perm, folds, k, 0, regression ? ds.y_real : ds.y_class,
                               regression);
        test    = fold_rows_of(&ds, &perm, folds, k, 1, regression ? ds.y_real : ds.y_class,
                               regression);
        n_train = strata_glm_problem_rows_global(train);
        t       = strata_glm_problem_rows_global(test);
        if (cost > 0) {
            p.lambda = 1.0 / (cost * (double)n_train);
        }
        model = NULL;
        CHECKF(strata_glm_train(train, &p, MPI_COMM_WORLD, msg, sizeof(msg), &model) ==
                       STRATA_OK, "%s: fold %d: train: %s", solver, k, msg);
        if (model == NULL) {
            break;
        }
        strata_glm_model_info(model, &info);
        CHECKF(info.rounds == infos[k].rounds && info.primal == infos[k].primal,
               "%s: fold %d: rounds %d, primal %.17g (cross-validation: %d, %.17g)", solver,
               k, info.rounds, info.primal, infos[k].rounds, infos[k].primal);
        strata_glm_predict(model, test, z);
        for (t = 0, g = lo; g < hi; g++) {
            if (st_glm_cv_fold(&perm, folds, (uint64_t)g) == k) {
                same = same && (memcmp(&z[t++], &scores[g - lo], sizeof(double)) == 0);
            }
        }
        strata_glm_model_free(model);
        strata_glm_problem_free(train);
        strata_glm_problem_free(test);
    }
    CHECKF(same, "%s (%d folds, cost %g): the out-of-fold scores differ from the folds' "
           "models'", solver, folds, cost);
    /* the metrics of those scores */
    for (g = lo; g < hi; g++) {
        if (regression) {
            sum[0] += (scores[g - lo] - ds.y_real[g]) * (scores[g - lo] - ds.y_real[g]);
        } else {
            sum[0] += ((scores[g - lo] > 0 ? 1 : -1) == ds.y_class[g]);
        }
    }
    MPI_Allreduce(MPI_IN_PLACE, sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    CHECKF(m.n == N_ROWS, "%s: metrics of %lld rows", solver, (long long)m.n);
    if (regression) {
        CHECKF(fabs(m.rmse - sqrt(sum[0] / N_ROWS)) <= 1e-12 * m.rmse && isnan(m.accuracy),
               "%s: RMSE %.17g, want %.17g", solver, m.rmse, sqrt(sum[0] / N_ROWS));
    } else {
        CHECKF(m.accuracy == sum[0] / N_ROWS && isnan(m.rmse) && m.auc > 0.5 && m.auc <= 1,
               "%s: accuracy %.17g (want %.17g), AUC %g", solver, m.accuracy,
               sum[0] / N_ROWS, m.auc);
        CHECKF(!!strstr(solver, "logistic") == !isnan(m.logloss), "%s: log loss %g", solver,
               m.logloss);
    }
    strata_glm_problem_free(prob);
}

/* strata_glm_find_cost against strata_glm_cross_validate at each C; its first C from
 * the data */
static void check_find(const char *solver)
{
    int regression = !strcmp(solver, "ridge") || !strcmp(solver, "lasso");
    strata_glm_problem_t *prob = my_rows(&ds, regression, 0);
    strata_glm_metrics_t m, best;
    strata_glm_param_t p;
    double c, best_c = 0, want_c = 0, want_score = 0, score, start, sq, gmax = 0;
    double g[N_COLS];
    int64_t i, k;
    long kept;
    char msg[512];

    strata_glm_param_default(&p);
    p.solver     = solver;
    p.tol        = 1e-6;
    p.max_rounds = 300;
    kept = st_glm_cv_kept_searches();
    CHECKF(strata_glm_find_cost(prob, &p, 3, 0.125, 2.0, MPI_COMM_WORLD, msg, sizeof(msg),
                                &best_c, &best, NULL) == STRATA_OK, "%s: find_cost: %s",
           solver, msg);
    CHECKF(st_glm_cv_kept_searches() == kept + 1, "%s: the search's folds not kept", solver);
    /* a host whose memory would not hold them: made again for each C, the same answer */
    setenv("STRATA_GLM_MEM_AVAILABLE", "64K", 1);
    CHECKF(strata_glm_find_cost(prob, &p, 3, 0.125, 2.0, MPI_COMM_WORLD, msg, sizeof(msg),
                                &c, &m, NULL) == STRATA_OK, "%s: find_cost, 64 KB: %s",
           solver, msg);
    unsetenv("STRATA_GLM_MEM_AVAILABLE");
    CHECKF(st_glm_cv_kept_searches() == kept + 1, "%s: folds kept beyond the host's memory",
           solver);
    CHECKF(c == best_c && !memcmp(&m, &best, sizeof(m)), "%s: folds made again for each C: "
           "C %g, not %g", solver, c, best_c);
    for (c = 0.125; c <= 2.0; c *= 2) {
        CHECKF(strata_glm_cross_validate(prob, &p, 3, c, MPI_COMM_WORLD, msg, sizeof(msg), NULL,
                                         NULL, &m) == STRATA_OK, "%s: C %g: %s", solver, c, msg);
        score = regression ? -m.rmse : m.accuracy;
        if (c == 0.125 || score > want_score) {
            want_score = score;
            want_c     = c;
        }
    }
    /* (each fold warm-started from the last C's model: the same optimum to the
       tolerance, so the same accuracy here, the RMSE to 1e-3) */
    CHECKF(best_c == want_c &&
           (regression ? fabs(best.rmse + want_score) <= 1e-3 * -want_score
                       : best.accuracy == want_score),
           "%s: best C %g (%.17g), want %g (%.17g)", solver, best_c,
           regression ? -best.rmse : best.accuracy, want_c, want_score);
    /* stopped by max_rounds: the first C where a fold did */
    p.max_rounds = 1;
    p.tol        = 1e-12;
    CHECKF(strata_glm_find_cost(prob, &p, 3, 0.125, 2.0, MPI_COMM_WORLD, msg, sizeof(msg),
                                &best_c, &best, &c) == STRATA_OK && c == 0.125,
           "%s: 1 round: unconverged from C %g, want 0.125 (%s)", solver, c, msg);
    p.max_rounds = 300;
    p.tol        = 1e-6;
    /* fold counts out of range: cross-validation's refusal */
    CHECKF(strata_glm_find_cost(prob, &p, N_ROWS + 1, 0, 1024, MPI_COMM_WORLD, msg,
                                sizeof(msg), &best_c, &best, NULL) == STRATA_ERR_INVALID_PARAM &&
           strstr(msg, "241 folds of 240 examples") != NULL, "%s: 241 folds: '%s'", solver,
           msg);
    CHECKF(strata_glm_find_cost(prob, &p, 1, 0, 1024, MPI_COMM_WORLD, msg, sizeof(msg),
                                &best_c, &best, NULL) == STRATA_ERR_INVALID_PARAM &&
           strstr(msg, "needs 2 to 240 folds") != NULL, "%s: 1 fold: '%s'", solver, msg);
    /* the first C from the data: LIBLINEAR's 1/(n max ||x_i||^2) (logistic; half that for
       the others) or, for lasso, 1/||X^T y||_inf; a search that ends there tries it alone */
    for (k = 0; k < N_COLS; k++) {
        g[k] = 0;
    }
    for (sq = 0, i = 0; i < N_ROWS; i++) {
        double s = 0;

        for (k = ds.indptr[i]; k < ds.indptr[i + 1]; k++) {
            s += ds.values[k] * ds.values[k];
            g[ds.indices[k]] -= ds.y_real[i] * ds.values[k];
        }
        sq = (s > sq) ? s : sq;
    }
    for (k = 0; k < N_COLS; k++) {
        gmax = (fabs(g[k]) > gmax) ? fabs(g[k]) : gmax;
    }
    start = !strcmp(solver, "lasso")      ? 1.0 / gmax
            : !strcmp(solver, "logistic") ? 1.0 / (N_ROWS * sq)
                                          : 0.5 / (N_ROWS * sq);
    start = pow(2.0, floor(log2(start)));
    CHECKF(strata_glm_find_cost(prob, &p, 3, 0, start, MPI_COMM_WORLD, msg, sizeof(msg),
                                &best_c, &best, NULL) == STRATA_OK && best_c == start,
           "%s: the first C %g, want %g (%s)", solver, best_c, start, msg);
    /* a last C below the data's first: that C alone (LIBLINEAR's) */
    CHECKF(strata_glm_find_cost(prob, &p, 3, 0, start / 3, MPI_COMM_WORLD, msg, sizeof(msg),
                                &best_c, &best, NULL) == STRATA_OK && best_c == start / 3,
           "%s: a last C below the first: C %g, want %g (%s)", solver, best_c, start / 3,
           msg);
    strata_glm_problem_free(prob);
}

/* LIBLINEAR's -C for -s 11 (strata_glm_find_cost_epsilon): epsilon on its grid of
 * twentieths of max |y|, from start_eps's down; the best pair's metrics those of a
 * cross-validation there (to the tolerance: the search's folds were warm-started);
 * refused for a model without epsilon. */
static void check_find_eps(void)
{
    strata_glm_problem_t *prob = my_rows(&ds, 1, 0);
    strata_glm_metrics_t best, m;
    strata_glm_param_t p;
    double best_c, best_eps, maxy = 0, k;
    char msg[256];
    int i;

    for (i = 0; i < N_ROWS; i++) {
        maxy = fmax(maxy, fabs(ds.y_real[i]));
    }
    strata_glm_param_default(&p);
    p.solver     = "sqsvr";
    p.tol        = 1e-8;
    p.max_rounds = 300;
    /* from 0.3 max |y|: k <= 6 (from the top, k <= 19: tests/glm_cv.sh) */
    CHECKF(strata_glm_find_cost_epsilon(prob, &p, 3, 0.5, 0.3 * maxy, MPI_COMM_WORLD, msg,
                                        sizeof(msg), &best_c, &best_eps, &best,
                                        NULL) == STRATA_OK,
           "find_cost_epsilon: %s", msg);
    for (k = -1, i = 0; i <= 6; i++) {
        k = (best_eps == i * maxy / 20) ? i : k;
    }
    CHECKF(k >= 0, "best epsilon %.17g: not k/20 of max |y| %.17g for k in 0..6", best_eps,
           maxy);
    p.epsilon = best_eps;
    CHECKF(strata_glm_cross_validate(prob, &p, 3, best_c, MPI_COMM_WORLD, msg, sizeof(msg),
                                     NULL, NULL, &m) == STRATA_OK &&
                   fabs(m.rmse - best.rmse) <= 1e-4 * best.rmse,
           "at C %g epsilon %g: RMSE %.17g, the search's %.17g", best_c, best_eps, m.rmse,
           best.rmse);
    p.solver = "ridge";
    CHECKF(strata_glm_find_cost_epsilon(prob, &p, 3, 0, 0, MPI_COMM_WORLD, msg, sizeof(msg),
                                        &best_c, &best_eps, &best, NULL) ==
                   STRATA_ERR_INVALID_PARAM && strstr(msg, "SVR models") != NULL,
           "find_cost_epsilon of ridge: '%s'", msg);
    p.solver = "sqsvr";
    CHECKF(strata_glm_find_cost_epsilon(prob, &p, 3, 0, -1, MPI_COMM_WORLD, msg, sizeof(msg),
                                        &best_c, &best_eps, &best, NULL) ==
                   STRATA_ERR_INVALID_PARAM && strstr(msg, "first epsilon") != NULL,
           "find_cost_epsilon from epsilon -1: '%s'", msg);
    strata_glm_problem_free(prob);
}

/* My rows of the set as a problem of three more (empty) columns. */
static strata_glm_problem_t *wide_rows(int regression)
{
    int64_t lo = (int64_t)N_ROWS * rank / nranks, hi = (int64_t)N_ROWS * (rank + 1) / nranks;
    int64_t indptr[N_ROWS + 1], i;
    strata_glm_problem_t *prob = NULL;
    char msg[256];

    for (i = lo; i <= hi; i++) {
        indptr[i - lo] = ds.indptr[i] - ds.indptr[lo];
    }
    CHECKF(strata_glm_problem_create(hi - lo, N_COLS + 3, indptr, ds.indices + ds.indptr[lo],
                                     ds.values + ds.indptr[lo],
                                     (regression ? ds.y_real : ds.y_class) + lo, regression,
                                     MPI_COMM_WORLD, msg, sizeof(msg), &prob) == STRATA_OK,
           "problem_create: %s", msg);
    return prob;
}

/* strata_glm_train_from with @a solver and @a method: from lambda 1e-2's model to
 * 1e-3's optimum; from its own optimum; the refusals. */
static void check_warm(const char *solver, int method)
{
    int regression = !strcmp(solver, "ridge") || !strcmp(solver, "lasso") ||
                     !strcmp(solver, "sqsvr");
    int warm = (method != STRATA_GLM_METHOD_CD) || (!strcmp(solver, "lasso") && nranks == 1);
    strata_glm_problem_t *prob = my_rows(&ds, regression, 0), *other;
    strata_glm_model_t *a = NULL, *cold = NULL, *hot = NULL, *again = NULL, *x = NULL;
    strata_glm_info_t ic, ih, ia;
    strata_glm_param_t p;
    const double *wc, *wh;
    int64_t j, n_w = N_COLS;
    double diff = 0, scale = 0;
    char msg[512];

    strata_glm_param_default(&p);
    p.solver     = solver;
    p.method     = method;
    p.tol        = 1e-8;
    p.max_rounds = 2000;
    p.lambda     = 1e-2;
    CHECKF(strata_glm_train(prob, &p, MPI_COMM_WORLD, msg, sizeof(msg), &a) == STRATA_OK,
           "%s/%d: lambda 1e-2: %s", solver, method, msg);
    p.lambda = 1e-3;
    CHECKF(strata_glm_train(prob, &p, MPI_COMM_WORLD, msg, sizeof(msg), &cold) == STRATA_OK,
           "%s/%d: cold: %s", solver, method, msg);
    CHECKF(strata_glm_train_from(prob, &p, MPI_COMM_WORLD, msg, sizeof(msg), a, &hot) ==
           STRATA_OK, "%s/%d: warm: %s", solver, method, msg);
    if (a == NULL || cold == NULL || hot == NULL) {
        goto out;
    }
    strata_glm_model_info(cold, &ic);
    strata_glm_model_info(hot, &ih);
    wc = strata_glm_model_weights(cold);
    wh = strata_glm_model_weights(hot);
    for (j = 0; j < n_w; j++) {
        diff  = fmax(diff, fabs(wc[j] - wh[j]));
        scale = fmax(scale, fabs(wc[j]));
    }
    CHECKF(ic.converged && ih.converged, "%s/%d: converged %d (cold) %d (warm)", solver,
           method, ic.converged, ih.converged);
    /* both certified to 1e-8 of the optimum */
    CHECKF(fabs(ic.primal - ih.primal) <= 2e-8 * fabs(ic.primal), "%s/%d: primal %.17g "
           "warm, %.17g cold", solver, method, ih.primal, ic.primal);
    CHECKF(diff <= 1e-3 * scale, "%s/%d: weights %g apart (largest %g)", solver, method,
           diff, scale);
    if (warm) {   /* (L-BFGS's memory starts empty either way: no more rounds) */
        CHECKF(method == STRATA_GLM_METHOD_LBFGS ? ih.rounds <= ic.rounds
                                                 : ih.rounds < ic.rounds,
               "%s/%d: %d rounds from the start, %d from 0", solver, method, ih.rounds,
               ic.rounds);
    } else {   /* (left aside: the run from 0, bit for bit) */
        CHECKF(ih.rounds == ic.rounds && !memcmp(wc, wh, (size_t)n_w * sizeof(double)),
               "%s/%d: the start was not left aside (%d rounds, %d from 0)", solver, method,
               ih.rounds, ic.rounds);
    }
    /* from its own optimum: nothing to do (the primal methods test before a step) */
    CHECKF(strata_glm_train_from(prob, &p, MPI_COMM_WORLD, msg, sizeof(msg), cold, &again) ==
           STRATA_OK, "%s/%d: from the optimum: %s", solver, method, msg);
    strata_glm_model_info(again, &ia);
    if (warm && method != STRATA_GLM_METHOD_CD) {
        CHECKF(ia.rounds == 0 && ia.converged, "%s/%d: from the optimum: %d rounds", solver,
               method, ia.rounds);
    }
    /* refusals: another bias, another feature count, checkpoints */
    p.bias = 1;
    CHECKF(strata_glm_train_from(prob, &p, MPI_COMM_WORLD, msg, sizeof(msg), cold, &x) ==
           STRATA_ERR_INVALID_PARAM && x == NULL && strstr(msg, "another bias") != NULL,
           "%s/%d: another bias: '%s'", solver, method, msg);
    p.bias             = -1;
    p.checkpoint       = "/nonexistent/x.ckpt";
    p.checkpoint_every = 1;
    CHECKF(strata_glm_train_from(prob, &p, MPI_COMM_WORLD, msg, sizeof(msg), cold, &x) ==
           STRATA_ERR_INVALID_PARAM && x == NULL && strstr(msg, "checkpoints") != NULL,
           "%s/%d: checkpoints: '%s'", solver, method, msg);
    p.checkpoint       = NULL;
    p.checkpoint_every = 0;
    other = wide_rows(regression);
    CHECKF(strata_glm_train_from(other, &p, MPI_COMM_WORLD, msg, sizeof(msg), cold, &x) ==
           STRATA_ERR_INVALID_PARAM && x == NULL &&
           strstr(msg, "another feature count") != NULL,
           "%s/%d: another feature count: '%s'", solver, method, msg);
    strata_glm_problem_free(other);
    /* a start that is not the same on every rank (here rank 0's alone, then another
       lambda's on the other ranks): refused on every rank, as the header says (before:
       each rank started from its own w, and the ranks' sums parted ways: MPI_Allreduce
       aborted with MPI_ERR_TRUNCATE, or the job hung) */
    if (nranks > 1) {
        CHECKF(strata_glm_train_from(prob, &p, MPI_COMM_WORLD, msg, sizeof(msg),
                                     rank == 0 ? cold : NULL, &x) == STRATA_ERR_INVALID_PARAM &&
                       x == NULL && strstr(msg, "not the same on every rank") != NULL,
               "%s/%d: a start on rank 0 alone: '%s'", solver, method, msg);
        CHECKF(strata_glm_train_from(prob, &p, MPI_COMM_WORLD, msg, sizeof(msg),
                                     rank == 0 ? cold : a, &x) == STRATA_ERR_INVALID_PARAM &&
                       x == NULL && strstr(msg, "not the same on every rank") != NULL,
               "%s/%d: another start on rank 0: '%s'", solver, method, msg);
        /* (rank 0's start of another bias: refused alike, not by rank 0 alone) */
        p.bias = 1;
        CHECKF(strata_glm_train_from(prob, &p, MPI_COMM_WORLD, msg, sizeof(msg),
                                     rank == 0 ? cold : NULL, &x) == STRATA_ERR_INVALID_PARAM &&
                       x == NULL, "%s/%d: rank 0's start of another bias: '%s'", solver,
               method, msg);
        p.bias = -1;
    }
out:
    strata_glm_model_free(a);
    strata_glm_model_free(cold);
    strata_glm_model_free(hot);
    strata_glm_model_free(again);
    strata_glm_problem_free(prob);
}

/* The primal methods of the L2 models never answer w = 0, however large lambda (its
 * relative gap is within any tolerance there): a step at least, weights that are not
 * all 0, and one-vs-rest's classes told apart. */
static void check_not_zero(int method)
{
    strata_glm_problem_t *prob = my_rows(&ds, 0, 0);
    strata_glm_model_t *model = NULL;
    strata_glm_info_t info;
    strata_glm_param_t p;
    const double *w;
    int64_t j, nonzero = 0;
    char msg[512];

    strata_glm_param_default(&p);
    p.method = method;
    p.lambda = 1e6;
    CHECKF(strata_glm_train(prob, &p, MPI_COMM_WORLD, msg, sizeof(msg), &model) == STRATA_OK,
           "lambda 1e6, method %d: %s", method, msg);
    if (model != NULL) {
        strata_glm_model_info(model, &info);
        w = strata_glm_model_weights(model);
        for (j = 0; j < N_COLS; j++) {
            nonzero += (w[j] != 0);
        }
        CHECKF(info.rounds >= 1 && nonzero > 0, "lambda 1e6, method %d: %d rounds, %lld "
               "nonzero weights", method, info.rounds, (long long)nonzero);
    }
    strata_glm_model_free(model);
    strata_glm_problem_free(prob);
}

/* A search's folds are memo problems: L-BFGS keeps its scaling pass's column sums for
 * the next training, which may use them only under the same loss, weights and bias.
 * Each training of a memo problem gives, bit for bit, the model of the same training
 * of a problem that keeps nothing, whether the sums were kept (the same parameters
 * again) or must be made anew (another weight, bias or loss). */
static void check_memo(void)
{
    static const struct {
        const char *solver;
        double      weight_pos, bias;
    } runs[] = {{"logistic", 1, -1}, {"logistic", 1, -1}, {"logistic", 3, -1},
                {"logistic", 3, 1},  {"sqsvm", 3, 1},     {"logistic", 1, -1}};
    strata_glm_problem_t *memo = my_rows(&ds, 0, 0), *plain = my_rows(&ds, 0, 0);
    strata_glm_model_t *a = NULL, *b = NULL;
    strata_glm_param_t p;
    char msg[512];
    size_t r;
    int64_t n;

    memo->memo = 1;
    for (r = 0; r < sizeof(runs) / sizeof(runs[0]); r++) {
        strata_glm_param_default(&p);
        p.method     = STRATA_GLM_METHOD_LBFGS;
        p.solver     = runs[r].solver;
        p.weight_pos = runs[r].weight_pos;
        p.bias       = runs[r].bias;
        p.lambda     = 1e-3;
        p.tol        = 1e-8;
        CHECKF(strata_glm_train(memo, &p, MPI_COMM_WORLD, msg, sizeof(msg), &a) == STRATA_OK &&
                       strata_glm_train(plain, &p, MPI_COMM_WORLD, msg, sizeof(msg), &b) ==
                               STRATA_OK,
               "memo run %zu: %s", r, msg);
        n = N_COLS + (runs[r].bias > 0);
        CHECKF(a != NULL && b != NULL &&
                       memcmp(strata_glm_model_weights(a), strata_glm_model_weights(b),
                              (size_t)n * sizeof(double)) == 0,
               "memo run %zu (%s, weight %g, bias %g): not the model of a problem that keeps "
               "nothing", r, runs[r].solver, runs[r].weight_pos, runs[r].bias);
        CHECKF(memo->colsq != NULL && memo->colsq_key[1] == 1.0 &&
                       memo->colsq_key[2] == runs[r].bias,
               "memo run %zu: no column sums kept, or another run's", r);
        strata_glm_model_free(a);
        strata_glm_model_free(b);
        a = b = NULL;
    }
    strata_glm_problem_free(memo);
    strata_glm_problem_free(plain);
}

/* A fold whose training fails: its status, and "fold 1 of 3: " before the trainer's
 * message. With msg_len 0 the caller's buffer is neither written nor read (before: it
 * was read back as the trainer's message, a string or not; here a page that faults
 * when touched). */
static void check_fold_fails(void)
{
    strata_glm_problem_t *prob = my_rows(&ds, 0, 0);
    size_t page_len = (size_t)sysconf(_SC_PAGESIZE);
    strata_glm_metrics_t m;
    strata_glm_param_t p;
    strata_status_t st;
    char msg[512] = "";
    void *page;

    strata_glm_param_default(&p);
    setenv("STRATA_GLM_MEM_AVAILABLE", "1K", 1);   /* (no model's vectors fit) */
    st = strata_glm_cross_validate(prob, &p, 3, 0, MPI_COMM_WORLD, msg, sizeof(msg), NULL,
                                   NULL, &m);
    CHECKF(st == STRATA_ERR_NO_MEMORY && !strncmp(msg, "fold 1 of 3: ", 13) &&
                   strlen(msg) > 13,
           "a fold's training without memory: status %d, '%s'", (int)st, msg);
    page = mmap(NULL, page_len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECKF(page != MAP_FAILED, "mmap of a page: %s", strerror(errno));
    if (page != MAP_FAILED) {
        st = strata_glm_cross_validate(prob, &p, 3, 0, MPI_COMM_WORLD, page, 0, NULL, NULL,
                                       &m);
        CHECKF(st == STRATA_ERR_NO_MEMORY, "... msg_len 0: status %d", (int)st);
        munmap(page, page_len);
    }
    unsetenv("STRATA_GLM_MEM_AVAILABLE");
    strata_glm_problem_free(prob);
}

/* strata_glm_find_cost at C's whose lambda is beyond double precision: the C named,
 * not a lambda the caller never gave. */
static void check_find_beyond(const strata_glm_problem_t *prob)
{
    strata_glm_metrics_t m;
    strata_glm_param_t p;
    strata_status_t st;
    char msg[512] = "";
    double c = -1;

    strata_glm_param_default(&p);
    st = strata_glm_find_cost(prob, &p, 3, 1e308, 1e308, MPI_COMM_WORLD, msg, sizeof(msg),
                              &c, &m, NULL);
    CHECKF(st == STRATA_ERR_INVALID_PARAM && strstr(msg, "C 1e+308") != NULL &&
                   strstr(msg, "give a C nearer 1") != NULL && c == -1,
           "find_cost at C 1e308: status %d, '%s'", (int)st, msg);
}

/* A refusal: @a status and a message holding @a want, alike on every rank. */
static void refused(const strata_glm_problem_t *prob, const strata_glm_param_t *p, int folds,
                    double cost, strata_status_t status, const char *want)
{
    strata_glm_metrics_t m;
    char msg[512] = "", first[512];
    strata_status_t got;

    got = strata_glm_cross_validate(prob, p, folds, cost, MPI_COMM_WORLD, msg, sizeof(msg),
                                    NULL, NULL, &m);
    CHECKF(got == status && strstr(msg, want) != NULL, "%d folds: status %d, '%s' (want %d, "
           "'%s')", folds, got, msg, status, want);
    memcpy(first, msg, sizeof(first));
    MPI_Bcast(first, sizeof(first), MPI_CHAR, 0, MPI_COMM_WORLD);
    CHECKF(!strcmp(first, msg), "%d folds: rank 0 said '%s', this rank '%s'", folds, first,
           msg);
}

int main(int argc, char **argv)
{
    static const char *const models[] = {"logistic", "svm", "sqsvm", "ridge", "lasso",
                                         "l1-logistic"};
    strata_glm_problem_t *prob;
    strata_glm_param_t p;
    st_glm_perm_t perm;
    int64_t size[7], g;
    size_t i;
    int k, f;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    make_data(&ds, 0);

    for (i = 0; i < sizeof(models) / sizeof(models[0]); i++) {
        check_model(models[i], 4, 0);
    }
    check_model("logistic", 5, 0.5);   /* LIBLINEAR's C: each fold's lambda its own */
    check_model("lasso", 3, 2.0);
    check_find("logistic");
    check_find("sqsvm");
    check_find("ridge");
    check_find("lasso");
    check_find_eps();
    check_warm("logistic", STRATA_GLM_METHOD_NEWTON);
    check_warm("logistic", STRATA_GLM_METHOD_LBFGS);
    check_warm("sqsvm", STRATA_GLM_METHOD_NEWTON);
    check_warm("ridge", STRATA_GLM_METHOD_LBFGS);
    check_warm("sqsvr", STRATA_GLM_METHOD_LBFGS);
    check_warm("logistic", STRATA_GLM_METHOD_CD);   /* (a start left aside) */
    check_warm("lasso", STRATA_GLM_METHOD_CD);      /* (one rank: its serial solver) */
    check_not_zero(STRATA_GLM_METHOD_NEWTON);
    check_not_zero(STRATA_GLM_METHOD_LBFGS);
    check_memo();

    /* the folds: every row in one, sizes floor or ceil of N / folds */
    for (f = 2; f <= 7; f++) {
        st_glm_cv_perm(&perm, N_ROWS, 1);
        memset(size, 0, sizeof(size));
        for (g = 0; g < N_ROWS; g++) {
            k = st_glm_cv_fold(&perm, f, (uint64_t)g);
            CHECKF(k >= 0 && k < f, "row %lld in fold %d of %d", (long long)g, k, f);
            size[(k >= 0 && k < f) ? k : 0]++;
        }
        for (k = 0; k < f; k++) {
            CHECKF(size[k] == N_ROWS / f || size[k] == N_ROWS / f + 1,
                   "fold %d of %d: %lld rows", k, f, (long long)size[k]);
        }
    }
    st_glm_cv_perm(&perm, 3, 9);   /* as many folds as rows: one each */
    CHECKF(st_glm_cv_fold(&perm, 3, 0) + st_glm_cv_fold(&perm, 3, 1) +
                   st_glm_cv_fold(&perm, 3, 2) == 3 &&
           st_glm_cv_fold(&perm, 3, 0) != st_glm_cv_fold(&perm, 3, 1),
           "3 folds of 3 rows: %d %d %d", st_glm_cv_fold(&perm, 3, 0),
           st_glm_cv_fold(&perm, 3, 1), st_glm_cv_fold(&perm, 3, 2));

    /* refusals */
    prob = my_rows(&ds, 0, 0);
    strata_glm_param_default(&p);
    refused(prob, &p, 1, 0, STRATA_ERR_INVALID_PARAM, "needs 2 to 240 folds");
    refused(prob, &p, N_ROWS + 1, 0, STRATA_ERR_INVALID_PARAM, "241 folds of 240 examples");
    refused(prob, &p, 3, -1, STRATA_ERR_INVALID_PARAM, "cost -1");
    /* a C whose lambda, 1/(C n), is beyond double precision: named as given (before:
       "fold 1 of 3: lambda must be finite and > 0", of a lambda never given) */
    refused(prob, &p, 3, INFINITY, STRATA_ERR_INVALID_PARAM, "cost inf");
    refused(prob, &p, 3, 1e308, STRATA_ERR_INVALID_PARAM, "C 1e+308");
    refused(prob, &p, 3, 1e-320, STRATA_ERR_INVALID_PARAM, "C 9.99989e-321");
    check_find_beyond(prob);
    p.checkpoint       = "/nonexistent/x.ckpt";
    p.checkpoint_every = 2;
    refused(prob, &p, 3, 0, STRATA_ERR_INVALID_PARAM, "no checkpoints");
    strata_glm_param_default(&p);
    p.lambda = -1;
    refused(prob, &p, 3, 0, STRATA_ERR_INVALID_PARAM, "lambda");
    strata_glm_problem_free(prob);
    check_fold_fails();

    MPI_Allreduce(MPI_IN_PLACE, &failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("test_cv: %s: %d ranks, %d failures\n", failures ? "FAIL" : "PASS", nranks,
               failures);
    }
    MPI_Finalize();
    return failures ? 1 : 0;
}
