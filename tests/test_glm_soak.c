/*
 * A randomized differential soak of the GLM trainer, as tests/test_soak.c soaks
 * MPI_Allreduce: each seed draws a small problem (dense or sparse, a few hundred rows,
 * tens of columns, duplicate rows, empty rows and columns, a bias or not, class
 * weights, tiny to large C, labels +1/-1, 1/0, two named classes, three or four
 * classes, or real targets) and a model for it, then trains it under several random
 * configurations (method cd, newton, lbfgs or auto; 1 or 2 threads, replicas or shared;
 * feature orders; local epochs; gap_every; the hierarchical schedule when linked with
 * libstrata and run with --vnodes; a run stopped at a checkpoint and resumed). Every
 * rank generates the whole set alike and keeps a random block of it. The oracles, each
 * independent of the code under test:
 *  1. the primal objective P(w), computed here from the weights over all the rows,
 *     is the one the trainer reports, and every converged configuration is within its
 *     tolerance of the best one (P - P_best <= tol |P|); no reported dual value
 *     exceeds the best primal (P >= D for any pair), the reported gap <= tol |P|;
 *  2. every rank holds the same model, bit for bit;
 *  3. the model saved and loaded again holds the same weights and predicts the same
 *     labels and scores as in memory (and as strata_glm_predict);
 *  4. the smooth L2 models on small sets: P at most tol |P| above that of a plain
 *     damped Newton method on the dense problem, written here;
 *  5. a run stopped at a checkpoint and resumed ends with the uninterrupted run's model
 *     (a run looking at the gap after every round: one looking less often may stop
 *     later than the resumed run, which sees the gap where the first run stopped; and
 *     not hierarchical with inner rounds chosen from measured times);
 *  6. Newton reaches tol on the smooth L2 models (these small problems take it tens
 *     of iterations): no method that stopped making progress; warm starts
 *     (strata_glm_train_from the model at 4 lambda) reach the same optimum.
 * Runs that end at max_rounds (coordinate descent on a hard problem) are held to
 * oracles 2, 3 and to P >= D only.
 *
 * Usage: test_glm_soak [--seed S] [--count N] [--vnodes K] [--max-rounds R] [--dump DIR]
 *                      [--objective MODEL] [--verbose]
 * (tests/glm_soak-3.np3, tests/glm_soak_hier-4.np4; many seeds by hand to hunt, README
 * "Soaking the trainer"). --dump DIR writes each seed's rows, first model, its labels,
 * strata-train's options and the best P, and --seed S --objective MODEL prints P of a
 * model file on seed S's problem, to hold strata-train and strata-predict to the same.
 */
#include "config.h"

#include "strata_glm.h"

#include <math.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_ROWS    420
#define MAX_COLS    41
#define MAX_CLASSES 4
#define MAX_CONFIGS 10

static int failures, rank, nranks, verbose, vnodes, max_rounds = 600, dumped;

#define CHECKF(cond, ...) \
    do { \
        if (!(cond)) { \
            failures++; \
            printf("rank %d: seed %llu: %s:%d: ", rank, (unsigned long long)cur_seed, \
                   __FILE__, __LINE__); \
            printf(__VA_ARGS__); \
            printf("\n"); \
        } \
    } while (0)

static uint64_t cur_seed, rng_state;
static const char *dump_dir;   /* --dump: the first model of each seed, for strata-predict */

static uint64_t next(void)
{
    uint64_t x = (rng_state += 0x9e3779b97f4a7c15ULL);

    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

static double unif(void)
{
    return (double)(next() >> 11) / 9007199254740992.0;
}

static int pick(int n)
{
    return (int)(next() % (uint64_t)n);
}

/* ---- the problem -------------------------------------------------------------- */

typedef struct {
    int64_t  n, d;
    int64_t  indptr[MAX_ROWS + 1];
    uint32_t indices[MAX_ROWS * MAX_COLS];
    double   values[MAX_ROWS * MAX_COLS];
    double   y[MAX_ROWS];
    int      regression;
    int      nclasses;          /* of the labels (0: regression) */
    double   names[MAX_CLASSES];
    double   cw[MAX_CLASSES];   /* class weights, set_class_weights (1: none) */
    int      set_cw;
    int64_t  lo, hi;            /* my rows */
    const char *solver;
    double   lambda, eta, eps, bias, wpos, wneg;
} soak_t;

static soak_t S;

static const char *const class_models[] = {"logistic", "svm", "sqsvm", "l1-logistic",
                                           "l1-sqsvm"};
static const char *const reg_models[]   = {"ridge", "svr", "sqsvr", "lasso", "elastic-net"};

static int is_l1(const char *s)
{
    return !strcmp(s, "lasso") || !strcmp(s, "l1-logistic") || !strcmp(s, "elastic-net") ||
           !strcmp(s, "l1-sqsvm");
}

static int is_smooth_l2(const char *s)
{
    return !strcmp(s, "logistic") || !strcmp(s, "sqsvm") || !strcmp(s, "ridge") ||
           !strcmp(s, "sqsvr");
}

static void make_problem(void)
{
    double wstar[MAX_COLS], dens = unif() < 0.3 ? 1.0 : 0.05 + 0.5 * unif();
    double scale = unif() < 0.15 ? (unif() < 0.3 ? 3000.0 : 50.0) : unif() < 0.15 ? 0.02 : 1.0, z;
    int zero_col[MAX_COLS] = {0}, labels = pick(5);
    int64_t i, j, k = 0;

    S.n = unif() < 0.1 ? 2 + pick(10) : 40 + pick(360);   /* tiny at times */
    S.d = unif() < 0.1 ? 1 + pick(2) : 2 + pick(38);
    S.regression = unif() < 0.4;
    for (j = 0; j < S.d; j++) {
        wstar[j]    = unif() < 0.3 ? 0 : 2 * unif() - 1;
        zero_col[j] = unif() < 0.08;
    }
    for (i = 0; i < S.n; i++) {
        S.indptr[i] = k;
        if (i > 0 && unif() < 0.05) {   /* a duplicate of an earlier row */
            int64_t src = pick((int)i), t;

            for (t = S.indptr[src]; t < S.indptr[src + 1]; t++, k++) {
                S.indices[k] = S.indices[t];
                S.values[k]  = S.values[t];
            }
            S.y[i] = unif() < 0.5 ? S.y[src] : NAN;   /* NAN: a label of its own */
            if (!isnan(S.y[i])) {
                continue;
            }
            z = 0;
            for (t = S.indptr[i]; t < k; t++) {
                z += S.values[t] * wstar[S.indices[t]];
            }
        } else {
            z = 0;
            for (j = 0; j < S.d && !(unif() < 0.03); j++) {   /* some rows empty */
                if (zero_col[j] || unif() >= dens) {
                    continue;
                }
                S.indices[k] = (uint32_t)j;
                S.values[k]  = scale * (unif() < 0.1 ? 1.0 : 2 * unif() - 1);
                z += S.values[k] * wstar[j] / scale;
                k++;
            }
        }
        z += 0.3 * (unif() - 0.5);
        if (S.regression) {
            S.y[i] = 3 * z + (unif() < 0.1 ? 5 * unif() : 0);
        } else {
            S.y[i] = z;   /* a score, turned into a class below */
        }
    }
    S.indptr[S.n] = k;
    S.nclasses = 0;
    if (!S.regression) {
        static const double sets[5][MAX_CLASSES] = {
            {1, -1}, {1, 0}, {7, 2}, {1, 2, 3}, {0, 1, 2, 3}};
        static const int counts[5] = {2, 2, 2, 3, 4};

        S.nclasses = counts[labels];
        memcpy(S.names, sets[labels], sizeof(S.names));
        for (i = 0; i < S.n; i++) {
            int c;

            if (S.nclasses == 2) {
                c = (S.y[i] > 0) ^ (unif() < 0.05) ? 0 : 1;
            } else {
                c = S.y[i] < -0.4 ? 0 : S.y[i] < 0.4 ? 1 : 2;
                c = (S.nclasses == 4 && unif() < 0.15) ? 3 : c;
            }
            S.y[i] = S.names[c];
        }
        if (S.nclasses == 2 && S.names[0] == 7) {
            /* named classes: the first row's is the positive one */
            S.names[0] = S.y[0];
            S.names[1] = S.y[0] == 7 ? 2 : 7;
        }
    }
    S.set_cw = !S.regression && unif() < 0.4;
    for (j = 0; j < MAX_CLASSES; j++) {
        S.cw[j] = S.set_cw ? 0.25 + 3 * unif() : 1;
    }
    S.solver = S.regression ? reg_models[pick(5)] : class_models[pick(5)];
    /* C from tiny to large: lambda = 1 / (C n) */
    S.lambda = pow(10, (unif() < 0.1 ? -8 : -5.5) + 6 * unif());
    if (is_l1(S.solver)) {
        S.lambda = pow(10, -4 + 3.5 * unif());
    }
    S.eta  = !strcmp(S.solver, "elastic-net") ? unif() : is_l1(S.solver) ? 1 : 0;
    S.eps  = unif() < 0.3 ? 0 : unif();
    S.bias = unif() < 0.5 ? -1 : 0.5 + 2 * unif();
    S.wpos = S.wneg = 1;
    if (S.nclasses == 2 && unif() < 0.4) {
        S.wpos = 0.3 + 2 * unif();
        S.wneg = 0.3 + 2 * unif();
    }
    /* my block: random split points, the same on every rank, a rank empty at times */
    {
        int64_t cut[65];
        int r;

        cut[0]      = 0;
        cut[nranks] = S.n;
        for (r = 1; r < nranks; r++) {
            cut[r] = unif() < 0.5 ? S.n * r / nranks : pick((int)S.n + 1);
        }
        for (r = 1; r < nranks; r++) {   /* sorted */
            int q;

            for (q = r; q > 1 && cut[q - 1] > cut[q]; q--) {
                int64_t t = cut[q];

                cut[q]     = cut[q - 1];
                cut[q - 1] = t;
            }
        }
        S.lo = cut[rank];
        S.hi = cut[rank + 1];
    }
}

/* ---- the objective, here ------------------------------------------------------ */

static double loss(const char *s, double z, double y)
{
    double m = y * z, r = fabs(z - y) - S.eps;

    if (!strcmp(s, "logistic") || !strcmp(s, "l1-logistic")) {
        return m > 0 ? log1p(exp(-m)) : -m + log1p(exp(m));
    }
    if (!strcmp(s, "svm")) {
        return fmax(0, 1 - m);
    }
    if (!strcmp(s, "sqsvm") || !strcmp(s, "l1-sqsvm")) {
        return fmax(0, 1 - m) * fmax(0, 1 - m);
    }
    if (!strcmp(s, "svr")) {
        return fmax(0, r);
    }
    if (!strcmp(s, "sqsvr")) {
        return fmax(0, r) * fmax(0, r);
    }
    return (z - y) * (z - y) / 2;
}

/* the binary labels (+1/-1) and weights of the model of class @a cls (its name), or of
   the regression. Rows all of one class train LIBLINEAR's model of one class, every row
   positive, weighed by weight_pos where the class is 1, weight_neg where it is -1 or 0,
   neither where it has another name (the sign of yb does not change the optimum) */
static void binary_of(int multi, double cls, double *yb, double *c)
{
    int64_t i;
    int k, one = !S.regression && !multi && S.n > 0;

    for (i = 1; i < S.n && one; i++) {
        one = (S.y[i] == S.y[0]);
    }
    for (i = 0; i < S.n; i++) {
        double cwi = 1;

        if (S.regression) {
            yb[i] = S.y[i];
            c[i]  = 1;
            continue;
        }
        for (k = 0; k < S.nclasses; k++) {
            if (S.names[k] == S.y[i]) {
                cwi = S.cw[k];
            }
        }
        yb[i] = S.y[i] == cls ? 1 : -1;
        if (multi) {
            c[i] = S.y[i] == cls ? cwi : 1;
        } else if (one) {
            c[i] = cwi * (S.y[i] == 1 ? S.wpos : (S.y[i] == 0 || S.y[i] == -1) ? S.wneg : 1);
        } else {
            c[i] = cwi * (yb[i] > 0 ? S.wpos : S.wneg);
        }
    }
}

/* P(w) of one binary (or regression) model: w has d entries and the bias weight
   (stride apart: a column of a one-vs-rest model) */
static double primal_one(const double *w, int stride, const double *yb, const double *c)
{
    long double sum = 0, reg1 = 0, reg2 = 0;
    int64_t i, k, j;
    int64_t dd = S.d + (S.bias > 0);

    for (i = 0; i < S.n; i++) {
        double z = 0;

        for (k = S.indptr[i]; k < S.indptr[i + 1]; k++) {
            z += S.values[k] * w[(int64_t)S.indices[k] * stride];
        }
        if (S.bias > 0) {
            z += S.bias * w[S.d * stride];
        }
        sum += c[i] * loss(S.solver, z, yb[i]);
    }
    for (j = 0; j < dd; j++) {
        reg1 += fabs(w[j * stride]);
        reg2 += w[j * stride] * w[j * stride];
    }
    return (double)(sum / S.n + S.lambda * (S.eta * reg1 + (1 - S.eta) / 2 * reg2));
}

/* the sum of the models' P (one per class for more than two), from the weights */
static double primal_all(const strata_glm_model_t *m)
{
    static double yb[MAX_ROWS], c[MAX_ROWS];
    const double *w = strata_glm_model_weights(m);
    double names[MAX_CLASSES], p = 0;
    int k, nc = strata_glm_model_classes(m, names);

    if (nc <= 2) {
        binary_of(0, nc ? names[0] : 0, yb, c);
        return primal_one(w, 1, yb, c);
    }
    for (k = 0; k < nc; k++) {
        binary_of(1, names[k], yb, c);
        p += primal_one(w + k, nc, yb, c);
    }
    return p;
}

/* ---- oracle 4: a plain damped Newton method on the dense problem ------------------ */

static double newton_ref(const double *yb, const double *c)
{
    static double X[MAX_ROWS][MAX_COLS], H[MAX_COLS][MAX_COLS];
    double w[MAX_COLS] = {0}, g[MAX_COLS], dw[MAX_COLS], wt[MAX_COLS], p, pt, t;
    int64_t i, j, k, dd = S.d + (S.bias > 0);
    int it;

    memset(X, 0, sizeof(X));
    for (i = 0; i < S.n; i++) {
        for (k = S.indptr[i]; k < S.indptr[i + 1]; k++) {
            X[i][S.indices[k]] = S.values[k];
        }
        if (S.bias > 0) {
            X[i][S.d] = S.bias;
        }
    }
    p = primal_one(w, 1, yb, c);
    for (it = 0; it < 200; it++) {
        double gn = 0;

        for (j = 0; j < dd; j++) {
            g[j] = S.lambda * w[j];
            for (k = 0; k < dd; k++) {
                H[j][k] = j == k ? S.lambda : 0;
            }
        }
        for (i = 0; i < S.n; i++) {
            double z = 0, d1, d2, m, r;

            for (j = 0; j < dd; j++) {
                z += X[i][j] * w[j];
            }
            m = yb[i] * z;
            r = z - yb[i];
            if (!strcmp(S.solver, "logistic")) {
                double s = 1 / (1 + exp(m));

                d1 = -yb[i] * s;
                d2 = s * (1 - s);
            } else if (!strcmp(S.solver, "sqsvm")) {
                d1 = m < 1 ? -2 * yb[i] * (1 - m) : 0;
                d2 = m < 1 ? 2 : 0;
            } else if (!strcmp(S.solver, "sqsvr")) {
                d1 = fabs(r) > S.eps ? 2 * (fabs(r) - S.eps) * (r > 0 ? 1 : -1) : 0;
                d2 = fabs(r) > S.eps ? 2 : 0;
            } else {
                d1 = r;
                d2 = 1;
            }
            for (j = 0; j < dd; j++) {
                g[j] += c[i] * d1 * X[i][j] / S.n;
                for (k = 0; k < dd; k++) {
                    H[j][k] += c[i] * d2 * X[i][j] * X[i][k] / S.n;
                }
            }
        }
        for (j = 0; j < dd; j++) {
            gn += g[j] * g[j];
        }
        if (sqrt(gn) < 1e-13) {
            break;
        }
        /* Cholesky, in place */
        for (j = 0; j < dd; j++) {
            for (k = 0; k < j; k++) {
                double s = H[j][k];
                int64_t q;

                for (q = 0; q < k; q++) {
                    s -= H[j][q] * H[k][q];
                }
                H[j][k] = s / H[k][k];
            }
            {
                double s = H[j][j];
                int64_t q;

                for (q = 0; q < j; q++) {
                    s -= H[j][q] * H[j][q];
                }
                H[j][j] = sqrt(s);
            }
        }
        for (j = 0; j < dd; j++) {
            double s = -g[j];

            for (k = 0; k < j; k++) {
                s -= H[j][k] * dw[k];
            }
            dw[j] = s / H[j][j];
        }
        for (j = dd - 1; j >= 0; j--) {
            double s = dw[j];

            for (k = j + 1; k < dd; k++) {
                s -= H[k][j] * dw[k];
            }
            dw[j] = s / H[j][j];
        }
        for (t = 1; t > 1e-12; t /= 2) {
            for (j = 0; j < dd; j++) {
                wt[j] = w[j] + t * dw[j];
            }
            pt = primal_one(wt, 1, yb, c);
            if (pt <= p) {
                break;
            }
        }
        if (!(pt <= p)) {
            break;
        }
        memcpy(w, wt, sizeof(double) * dd);
        p = pt;
    }
    return p;
}

/* ---- one configuration ----------------------------------------------------------- */

typedef struct {
    strata_glm_param_t p;
    char what[400];
    int ok, converged, warm;   /* warm: from the model at 4 lambda (train_from) */
    double P, D, gap, reported;
} run_t;

static strata_glm_problem_t *my_problem(void)
{
    static int64_t indptr[MAX_ROWS + 1];
    strata_glm_problem_t *prob = NULL;
    char msg[256];
    int64_t i, base = S.indptr[S.lo];
    int found = 0;

    for (i = S.lo; i <= S.hi; i++) {
        indptr[i - S.lo] = S.indptr[i] - base;
    }
    if (strata_glm_problem_create(S.hi - S.lo, S.d, indptr, S.indices + base,
                                  S.values + base, S.y + S.lo, S.regression, MPI_COMM_WORLD,
                                  msg, sizeof(msg), &prob) != STRATA_OK) {
        CHECKF(0, "problem_create: %s", msg);
        return NULL;
    }
    if (S.set_cw) {
        CHECKF(strata_glm_problem_set_class_weights(prob, S.nclasses, S.names, S.cw, &found,
                                                    msg, sizeof(msg)) == STRATA_OK,
               "set_class_weights: %s", msg);
    }
    return prob;
}

/* the same bits on every rank */
static int same_everywhere(const void *buf, size_t len)
{
    static unsigned char root[MAX_ROWS * MAX_CLASSES * MAX_COLS * 8];
    int same, all;

    memcpy(root, buf, len);
    MPI_Bcast(root, (int)len, MPI_BYTE, 0, MPI_COMM_WORLD);
    same = memcmp(root, buf, len) == 0;
    MPI_Allreduce(&same, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    return all;
}

static size_t model_len(const strata_glm_model_t *m)
{
    int nc = strata_glm_model_classes(m, NULL);

    return sizeof(double) * (size_t)(strata_glm_model_features(m) +
                                     (strata_glm_model_bias(m) > 0)) *
           (size_t)(nc > 2 ? nc : 1);
}

/* --dump DIR: DIR/S.svm (the rows), S.model (the model), S.want (its labels, as
   strata-predict writes them), for tools/strata-predict to agree with (by hand) */
static void dump(const strata_glm_model_t *m)
{
    char path[512], msg[256];
    FILE *f, *g;
    int64_t i, k;

    snprintf(path, sizeof(path), "%s/%llu.model", dump_dir, (unsigned long long)cur_seed);
    CHECKF(strata_glm_model_save(m, path, msg, sizeof(msg)) == STRATA_OK, "dump: %s", msg);
    snprintf(path, sizeof(path), "%s/%llu.svm", dump_dir, (unsigned long long)cur_seed);
    f = fopen(path, "w");
    snprintf(path, sizeof(path), "%s/%llu.want", dump_dir, (unsigned long long)cur_seed);
    g = fopen(path, "w");
    for (i = 0; f != NULL && g != NULL && i < S.n; i++) {
        fprintf(f, "%.17g", S.y[i]);
        for (k = S.indptr[i]; k < S.indptr[i + 1]; k++) {
            fprintf(f, " %u:%.17g", S.indices[k] + 1, S.values[k]);
        }
        fprintf(f, "\n");
        fprintf(g, "%.17g\n", strata_glm_predict_label(m, S.indptr[i + 1] - S.indptr[i],
                                                        S.indices + S.indptr[i],
                                                        S.values + S.indptr[i], NULL));
    }
    if (f != NULL) {
        fclose(f);
    }
    if (g != NULL) {
        fclose(g);
    }
    /* strata-train's options for this problem and model */
    snprintf(path, sizeof(path), "%s/%llu.args", dump_dir, (unsigned long long)cur_seed);
    f = fopen(path, "w");
    if (f != NULL) {
        int c;

        fprintf(f, "-s %s -l %.17g", S.solver, S.lambda);
        if (!strcmp(S.solver, "svr") || !strcmp(S.solver, "sqsvr")) {
            fprintf(f, " --epsilon %.17g", S.eps);
        }
        if (!strcmp(S.solver, "elastic-net")) {
            fprintf(f, " --eta %.17g", S.eta);
        }
        if (S.bias > 0) {
            fprintf(f, " -B %.17g", S.bias);
        }
        for (c = 0; c < S.nclasses; c++) {
            double wc = S.cw[c] * (S.nclasses > 2 ? 1 : c == 0 ? S.wpos : S.wneg);

            if (wc != 1) {
                fprintf(f, " -w%g %.17g", S.names[c], wc);
            }
        }
        fprintf(f, "\n");
        fclose(f);
    }
}

/* oracle 3: the model written and read back */
static void check_saved(const strata_glm_model_t *m, const strata_glm_problem_t *prob,
                        const char *what)
{
    static double scores[MAX_ROWS], dec[MAX_CLASSES], dec2[MAX_CLASSES];
    char path[] = "/tmp/strata-glm-soak-XXXXXX", msg[256];
    strata_glm_model_t *back = NULL;
    int64_t i;
    int fd, bad = 0, nc;

    if (rank != 0) {
        return;
    }
    fd = mkstemp(path);
    if (fd < 0) {
        CHECKF(0, "mkstemp");
        return;
    }
    close(fd);
    if (dump_dir != NULL && !dumped) {
        dump(m);
        dumped = 1;
    }
    if (strata_glm_model_save(m, path, msg, sizeof(msg)) != STRATA_OK ||
        strata_glm_model_load(path, msg, sizeof(msg), &back) != STRATA_OK) {
        CHECKF(0, "%s: save/load: %s", what, msg);
        unlink(path);
        return;
    }
    unlink(path);
    nc = strata_glm_model_classes(m, NULL);
    CHECKF(strata_glm_model_classes(back, NULL) == nc &&
           strata_glm_model_features(back) == strata_glm_model_features(m) &&
           strata_glm_model_bias(back) == strata_glm_model_bias(m) &&
           !strcmp(strata_glm_model_solver(back), strata_glm_model_solver(m)),
           "%s: the model read back differs in kind", what);
    if (failures) {
        strata_glm_model_free(back);
        return;
    }
    CHECKF(memcmp(strata_glm_model_weights(back), strata_glm_model_weights(m),
                  model_len(m)) == 0, "%s: the weights read back differ", what);
    CHECKF(strata_glm_predict(m, prob, scores) == STRATA_OK, "%s: predict", what);
    for (i = 0; i < S.n; i++) {
        const int64_t k = S.indptr[i], nnz = S.indptr[i + 1] - k;
        double l1 = strata_glm_predict_label(m, nnz, S.indices + k, S.values + k, dec);
        double l2 = strata_glm_predict_label(back, nnz, S.indices + k, S.values + k, dec2);
        double s1 = strata_glm_predict_row(m, nnz, S.indices + k, S.values + k);

        bad += !(l1 == l2) || memcmp(dec, dec2, sizeof(double) * (nc > 2 ? nc : 1)) != 0;
        if (i >= S.lo && i < S.hi) {
            bad += memcmp(&s1, &scores[i - S.lo], sizeof(double)) != 0;
        }
    }
    CHECKF(bad == 0, "%s: %d rows predicted otherwise from the model read back", what, bad);
    strata_glm_model_free(back);
}

static void describe(run_t *r)
{
    static const char *const methods[] = {"cd", "lbfgs", "auto", "newton"};

    snprintf(r->what, sizeof(r->what),
             "%s n=%lld d=%lld classes=%d lambda=%g eta=%g eps=%g bias=%g w=%g/%g cw=%d: "
             "%s threads=%d mode=%d order=%d hier=%d inner=%d epochs=%d gap_every=%d "
             "seed=%llu tol=%g%s",
             S.solver, (long long)S.n, (long long)S.d, S.nclasses, S.lambda, S.eta, S.eps,
             S.bias, S.wpos, S.wneg, S.set_cw, methods[r->p.method], r->p.threads,
             r->p.thread_mode, r->p.feature_order, r->p.hierarchical, r->p.inner_rounds,
             r->p.local_epochs, r->p.gap_every, (unsigned long long)r->p.seed, r->p.tol,
             r->warm ? " warm start" : "");
}

static void random_param(strata_glm_param_t *p, int i)
{
    strata_glm_param_default(p);
    p->solver     = S.solver;
    p->lambda     = S.lambda;
    p->eta        = !strcmp(S.solver, "elastic-net") ? S.eta : 0.5;
    p->epsilon    = S.eps;
    p->bias       = S.bias;
    p->weight_pos = S.wpos;
    p->weight_neg = S.wneg;
    p->tol        = unif() < 0.5 ? 1e-6 : 1e-4;
    p->max_rounds = max_rounds;
    p->seed       = 1 + next() % 1000;
    /* the first configuration: coordinate descent on one thread, the baseline */
    p->method = i == 0 ? STRATA_GLM_METHOD_CD : (int)(next() % 4);
    if (!is_smooth_l2(S.solver) && p->method == STRATA_GLM_METHOD_LBFGS) {
        p->method = STRATA_GLM_METHOD_NEWTON;
    }
    if (is_l1(S.solver) && p->method == STRATA_GLM_METHOD_CD && unif() < 0.5) {
        p->method = STRATA_GLM_METHOD_NEWTON;
    }
    p->threads       = i == 0 ? 1 : 1 + pick(2);
    p->thread_mode   = pick(2);
    p->feature_order = pick(3);
    p->local_epochs  = 1 + (unif() < 0.3 ? pick(3) : 0);
    p->gap_every     = unif() < 0.3 ? STRATA_GLM_GAP_AUTO : unif() < 0.3 ? 3 : 1;
    if (vnodes > 0 && !is_l1(S.solver) && p->method == STRATA_GLM_METHOD_CD && unif() < 0.6) {
        p->hierarchical = 1;
        p->inner_rounds = pick(4);
    }
}

static void train(run_t *r, const strata_glm_problem_t *prob, strata_glm_model_t **m_p)
{
    strata_glm_info_t info;
    char msg[256];
    strata_status_t st;

    describe(r);
    *m_p = NULL;
    if (strata_glm_check_param(&r->p) != NULL) {
        r->ok = 0;
        return;
    }
    if (r->warm) {
        strata_glm_param_t q = r->p;
        strata_glm_model_t *start = NULL;

        q.lambda = 4 * r->p.lambda;
        st = strata_glm_train(prob, &q, MPI_COMM_WORLD, msg, sizeof(msg), &start);
        if (st == STRATA_OK) {
            st = strata_glm_train_from(prob, &r->p, MPI_COMM_WORLD, msg, sizeof(msg), start,
                                       m_p);
        }
        strata_glm_model_free(start);
    } else {
        st = strata_glm_train(prob, &r->p, MPI_COMM_WORLD, msg, sizeof(msg), m_p);
    }
    if (st != STRATA_OK) {
        /* refusals (options that do not apply) are no failure, but are counted */
        CHECKF(st == STRATA_ERR_INVALID_PARAM || st == STRATA_ERR_UNSUPPORTED,
               "%s: train: %d %s", r->what, (int)st, msg);
        if (verbose && rank == 0) {
            printf("  refused: %s: %s\n", r->what, msg);
        }
        r->ok = 0;
        return;
    }
    r->ok = 1;
    strata_glm_model_info(*m_p, &info);
    r->converged = info.converged;
    r->D         = info.dual;
    r->gap       = info.gap;
    r->reported  = info.primal;
    r->P         = primal_all(*m_p);
    if (verbose && rank == 0) {
        printf("  %s: rounds %d method %d conv %d P %.17g (reported %.17g) D %.17g gap %g\n",
               r->what, info.rounds, info.method, info.converged, r->P, info.primal, info.dual,
               info.gap);
    }
    CHECKF(same_everywhere(strata_glm_model_weights(*m_p), model_len(*m_p)),
           "%s: the ranks hold different models", r->what);
    CHECKF(fabs(r->P - info.primal) <= 1e-9 * fmax(fabs(r->P), 1e-300) + 1e-14,
           "%s: reported P %.17g, P of the weights %.17g", r->what, info.primal, r->P);
    /* Newton on a smooth L2 model: these small problems take it tens of iterations;
       max_rounds without tol is a method that stopped making progress (not L-BFGS: on
       a near-interpolating ridge of tiny lambda, P ~ 1e-6, it needs more than 600) */
    CHECKF(info.converged || !is_smooth_l2(S.solver) || info.method != STRATA_GLM_METHOD_NEWTON,
           "%s: method %d did not reach tol in %d iterations (gap %g, P %.17g)", r->what,
           info.method, info.rounds, info.gap, info.primal);
    if (info.converged) {
        CHECKF(info.gap <= r->p.tol * fabs(info.primal) * (1 + 1e-12) + 1e-300,
               "%s: converged with gap %g > tol |P| = %g", r->what, info.gap,
               r->p.tol * fabs(info.primal));
    }
    check_saved(*m_p, prob, r->what);
}

/* oracle 5: stopped at a checkpoint halfway and resumed, the uninterrupted run's model
   (@return 1 where it was tried) */
static int check_resume(const run_t *full, const strata_glm_model_t *fm,
                         const strata_glm_problem_t *prob)
{
    static char path[64];
    strata_glm_param_t p = full->p;
    strata_glm_model_t *m = NULL;
    strata_glm_info_t info;
    char msg[256];
    int same, tried = 1;

    strata_glm_model_info(fm, &info);
    /* (the gap looked at after every round: a run stopped at max_rounds looks after its
       last, where the gap may have reached tol unseen by a run looking less often) */
    /* (inner rounds chosen from measured times: steps that depend on timing) */
    if (info.rounds < 2 || S.nclasses > 2 || full->p.gap_every != 1 || full->warm ||
        (full->p.hierarchical && full->p.inner_rounds == 0)) {
        return 0;
    }
    if (rank == 0) {
        snprintf(path, sizeof(path), "/tmp/strata-glm-soak-%ld.ckpt", (long)getpid());
    }
    MPI_Bcast(path, sizeof(path), MPI_CHAR, 0, MPI_COMM_WORLD);
    p.method           = info.method;   /* auto picks otherwise with checkpoints */
    p.checkpoint       = path;
    p.checkpoint_every = 1;
    p.max_rounds       = info.rounds / 2;
    if (strata_glm_train(prob, &p, MPI_COMM_WORLD, msg, sizeof(msg), &m) != STRATA_OK) {
        if (verbose && rank == 0) {
            printf("  checkpoint refused: %s\n", msg);
        }
        tried = 0;
        goto out;
    }
    strata_glm_model_free(m);
    m          = NULL;
    p.resume   = 1;
    p.max_rounds = full->p.max_rounds;
    if (strata_glm_train(prob, &p, MPI_COMM_WORLD, msg, sizeof(msg), &m) != STRATA_OK) {
        CHECKF(0, "%s: resume: %s", full->what, msg);
        goto out;
    }
    same = memcmp(strata_glm_model_weights(m), strata_glm_model_weights(fm),
                  model_len(fm)) == 0;
    if (verbose && rank == 0) {
        strata_glm_info_t ri;

        strata_glm_model_info(m, &ri);
        printf("  resumed from round %d: rounds %d P %.17g gap %g (uninterrupted: %d, %.17g, "
               "%g)\n", info.rounds / 2, ri.rounds, ri.primal, ri.gap, info.rounds,
               info.primal, info.gap);
    }
    CHECKF(same, "%s: resumed at round %d, not the uninterrupted run's model", full->what,
           info.rounds / 2);
    strata_glm_model_free(m);
out:
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        unlink(path);
    }
    return tried;
}

static void soak_one(uint64_t seed)
{
    static run_t runs[MAX_CONFIGS];
    static double yb[MAX_ROWS], c[MAX_ROWS];
    strata_glm_problem_t *prob;
    int i, nconf, best = -1, f0 = failures, resumed = 0;

    cur_seed  = seed;
    dumped    = 0;
    rng_state = seed * 0x2545f4914f6cdd1dULL;
    make_problem();
    prob = my_problem();
    if (prob == NULL) {
        return;
    }
    nconf = 4 + pick(MAX_CONFIGS - 4);
    if (verbose && rank == 0) {
        printf("seed %llu: %s n=%lld d=%lld classes=%d, %d configurations\n",
               (unsigned long long)seed, S.solver, (long long)S.n, (long long)S.d,
               S.nclasses, nconf);
    }
    for (i = 0; i < nconf; i++) {
        strata_glm_model_t *m = NULL;

        random_param(&runs[i].p, i);
        runs[i].warm = i > 0 && unif() < 0.25;
        train(&runs[i], prob, &m);
        if (runs[i].ok && runs[i].converged && (best < 0 || runs[i].P < runs[best].P)) {
            best = i;
        }
        if (m != NULL && i > 0 && !resumed &&
            (runs[i].p.thread_mode == STRATA_GLM_THREADS_REPLICAS || runs[i].p.threads == 1)) {
            resumed = check_resume(&runs[i], m, prob);
        }
        strata_glm_model_free(m);
    }
    /* oracle 1: the same optimum within each one's tolerance; P >= any D */
    for (i = 0; i < nconf && best >= 0; i++) {
        const double Pb = runs[best].P;

        if (!runs[i].ok) {
            continue;
        }
        if (runs[i].converged) {
            CHECKF(runs[i].P - Pb <= runs[i].p.tol * fabs(runs[i].P) * (1 + 1e-9) + 1e-13,
                   "%s: P %.17g is %g above the best P %.17g (%s), more than tol |P|",
                   runs[i].what, runs[i].P, runs[i].P - Pb, Pb, runs[best].what);
        }
        CHECKF(runs[i].D <= Pb + 1e-9 * fabs(Pb) + 1e-13,
               "%s: reported D %.17g above the best P %.17g (%s)", runs[i].what, runs[i].D,
               Pb, runs[best].what);
    }
    if (dump_dir != NULL && rank == 0 && best >= 0) {
        char path[512];
        FILE *f;

        snprintf(path, sizeof(path), "%s/%llu.best", dump_dir, (unsigned long long)seed);
        f = fopen(path, "w");
        if (f != NULL) {
            fprintf(f, "%.17g\n", runs[best].P);
            fclose(f);
        }
    }
    /* oracle 4: a plain Newton method's optimum */
    if (best >= 0 && is_smooth_l2(S.solver) && S.nclasses <= 2) {
        double names[2] = {1, -1}, pref;

        if (S.nclasses == 2) {
            names[0] = S.names[0];
        }
        binary_of(0, names[0], yb, c);
        pref = newton_ref(yb, c);
        for (i = 0; i < nconf; i++) {
            if (runs[i].ok && runs[i].converged) {
                CHECKF(runs[i].P - pref <= runs[i].p.tol * fabs(runs[i].P) * (1 + 1e-9) +
                                               1e-13 &&
                           runs[i].P >= pref - 1e-9 * fabs(pref) - 1e-13,
                       "%s: P %.17g, Newton's reference %.17g", runs[i].what, runs[i].P, pref);
            }
        }
    }
    if (verbose && rank == 0) {
        printf("seed %llu: %s\n", (unsigned long long)seed, failures > f0 ? "FAIL" : "ok");
    }
    strata_glm_problem_free(prob);
}

int main(int argc, char **argv)
{
    uint64_t seed = 1, count = 5, s;
    const char *objective = NULL;
    int a, all;

    for (a = 1; a < argc; a++) {
        if (!strcmp(argv[a], "--seed") && a + 1 < argc) {
            seed = strtoull(argv[++a], NULL, 10);
        } else if (!strcmp(argv[a], "--count") && a + 1 < argc) {
            count = strtoull(argv[++a], NULL, 10);
        } else if (!strcmp(argv[a], "--vnodes") && a + 1 < argc) {
            vnodes = atoi(argv[++a]);
            setenv("STRATA_VIRTUAL_NODES", argv[a], 1);   /* before MPI_Init */
        } else if (!strcmp(argv[a], "--max-rounds") && a + 1 < argc) {
            max_rounds = atoi(argv[++a]);
        } else if (!strcmp(argv[a], "--objective") && a + 1 < argc) {
            objective = argv[++a];
        } else if (!strcmp(argv[a], "--dump") && a + 1 < argc) {
            dump_dir = argv[++a];
        } else if (!strcmp(argv[a], "--verbose")) {
            verbose = 1;
        } else {
            fprintf(stderr, "usage: %s [--seed S] [--count N] [--vnodes K] [--max-rounds R] "
                    "[--dump DIR] [--objective MODEL] [--verbose]\n", argv[0]);
            return 2;
        }
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    if (objective != NULL) {   /* P of a model file for the problem of seed S */
        strata_glm_model_t *m = NULL;
        char msg[256];

        cur_seed  = seed;
        rng_state = seed * 0x2545f4914f6cdd1dULL;
        make_problem();
        if (strata_glm_model_load(objective, msg, sizeof(msg), &m) != STRATA_OK) {
            printf("%s\n", msg);
            return 1;
        }
        /* (a file's trailing empty columns are not there: nor in a model trained on it) */
        S.d = strata_glm_model_features(m);
        printf("%.17g\n", primal_all(m));
        strata_glm_model_free(m);
        count = 0;
    }
    for (s = seed; s < seed + count; s++) {
        soak_one(s);
    }
    MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("%s: %llu seeds from %llu on %d ranks: %d failures\n", argv[0],
               (unsigned long long)count, (unsigned long long)seed, nranks, all);
    }
    MPI_Finalize();
    return all ? 1 : 0;
}
