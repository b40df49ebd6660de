/*
 * Test of libstrata_glm's model files, prediction and metrics (solver/st_glm_io.c,
 * solver/st_glm_predict.c), through the public API.
 *
 * Without arguments the test runs serially (MPI is never initialized; problems live on
 * MPI_COMM_NULL). With --mpi (tests/glm_ioN.npN) it runs under mpirun: every rank
 * takes its block of the same hand-made rows, and the metrics over MPI_COMM_WORLD must
 * equal, bit for bit, those of one rank holding all rows, on every rank.
 *
 * 1. Round trip (serial): for every model kind, with and without a bias, weights of
 *    every magnitude (random bit patterns: subnormals, -0, DBL_MAX) written here in
 *    LIBLINEAR's layout load bit for bit; saving writes the same bytes back.
 *    LIBLINEAR's variants: other solver names of the same problems, "label -1 1" and
 *    0/1 labels (weights negated), "bias 0" (a bias weight that is dropped), CRLF.
 * 2. Malformed files (serial): each gives its status and "FILE:LINE: what".
 * 3. Atomic save (serial): a write that fails half-way (RLIMIT_FSIZE), a directory in
 *    the way, an unwritable directory, a missing directory, non-finite weights: the old
 *    file is intact and no temporary file is left.
 * 4. Prediction and metrics (serial and MPI): scores against sums computed here
 *    (dyadic values: exact in any order), features beyond the model, score 0, empty
 *    rows, single-precision rows; accuracy, log loss, RMSE, and the AUC against an
 *    O(n^2) count of pairs with ties; NaN where a metric does not apply; an empty
 *    problem; model/problem mismatches.
 *
 * test_glm_io --resave IN OUT loads the model file IN and saves it as OUT (the test
 * scripts hand LIBLINEAR model files that Strata wrote).
 *
 * Failures are printed on stderr (the MPI harness also fails a job that writes there)
 * and the exit status is 1; a passing run prints one line on stdout.
 */
#include "config.h"

#include "strata_glm.h"
#include "st_glm.h"   /* to build a single-precision problem by hand */

#include <dirent.h>
#include <errno.h>
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <mpi.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define T_MAX_REPORTS 40
#define T_MSG_LEN     1024

static int      t_mpi;
static int      t_rank;
static int      t_size = 1;
static MPI_Comm t_comm = MPI_COMM_NULL;   /* all ranks (serial: MPI_COMM_NULL) */
static MPI_Comm t_self = MPI_COMM_NULL;   /* this rank alone */
static char     t_dir[512];
static long     t_nfail;
static long     t_ncheck;

/* ---- checks ---- */

static void t_fail(int line, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void t_fail(int line, const char *fmt, ...)
{
    va_list ap;

    if (t_nfail++ >= T_MAX_REPORTS) {
        return;
    }
    fprintf(stderr, "test_glm_io: rank %d: line %d: FAIL: ", t_rank, line);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n");
}

#define CHECK(_cond, ...) \
    ({ \
        int _ok = !!(_cond); \
        t_ncheck++; \
        if (!_ok) { \
            t_fail(__LINE__, __VA_ARGS__); \
        } \
        _ok; \
    })

static void *t_malloc(size_t n)
{
    void *p = malloc(n > 0 ? n : 1);

    if (p == NULL) {
        fprintf(stderr, "test_glm_io: out of memory\n");
        exit(1);
    }
    return p;
}

static int t_same_bits(double a, double b)
{
    return memcmp(&a, &b, sizeof(double)) == 0;
}

/* ---- deterministic randomness ---- */

static uint64_t t_rand(uint64_t *state)
{
    uint64_t x = (*state += 0x9e3779b97f4a7c15ULL);

    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

/* A random finite double of any magnitude: random bits, non-finite ones redrawn. */
static double t_rand_bits(uint64_t *state)
{
    uint64_t u;
    double v;

    do {
        u = t_rand(state);
        memcpy(&v, &u, sizeof(v));
    } while (!isfinite(v));
    return v;
}

/* k/8 for an integer k in [-lim, lim]: sums of a few such products are exact. */
static double t_rand_dyadic(uint64_t *state, int lim)
{
    return (double)((int)(t_rand(state) % (uint64_t)(2 * lim + 1)) - lim) / 8.0;
}

/* ---- text and files ---- */

typedef struct {
    char  *p;
    size_t len, cap;
} t_buf_t;

static void t_buf_add(t_buf_t *b, const char *s, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        b->cap = (b->len + n + 1) * 2;
        b->p   = realloc(b->p, b->cap);
        if (b->p == NULL) {
            fprintf(stderr, "test_glm_io: out of memory\n");
            exit(1);
        }
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

static void t_buf_printf(t_buf_t *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void t_buf_printf(t_buf_t *b, const char *fmt, ...)
{
    char tmp[512];
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
    va_end(ap);
    t_buf_add(b, tmp, (size_t)n);
}

/* "<temp dir>/<name>.<rank>" in a static ring of buffers */
static const char *t_path(const char *name)
{
    static char ring[8][600];
    static int next;
    char *p = ring[next++ % 8];

    snprintf(p, sizeof(ring[0]), "%s/%s.%d", t_dir, name, t_rank);
    return p;
}

static void t_write(const char *path, const char *data, size_t len)
{
    FILE *f = fopen(path, "wb");

    if (f == NULL || (len > 0 && fwrite(data, 1, len, f) != len) || fclose(f) != 0) {
        t_fail(__LINE__, "cannot write %s: %s", path, strerror(errno));
    }
}

static char *t_slurp(const char *path, size_t *len_p)
{
    FILE *f = fopen(path, "rb");
    t_buf_t b = {NULL, 0, 0};
    char tmp[4096];
    size_t n;

    *len_p = 0;
    if (f == NULL) {
        return NULL;
    }
    t_buf_add(&b, "", 0);
    while ((n = fread(tmp, 1, sizeof(tmp), f)) > 0) {
        t_buf_add(&b, tmp, n);
    }
    fclose(f);
    *len_p = b.len;
    return b.p;
}

/* entries of @a dir other than . and .. whose names hold @a part ("": all) */
static int t_count_entries_named(const char *dir, const char *part)
{
    struct dirent *e;
    DIR *d = opendir(dir);
    int n = 0;

    if (d == NULL) {
        return -1;
    }
    while ((e = readdir(d)) != NULL) {
        n += (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0 &&
              strstr(e->d_name, part) != NULL);
    }
    closedir(d);
    return n;
}

/* entries of @a dir other than . and .. */
static int t_count_entries(const char *dir)
{
    return t_count_entries_named(dir, "");
}

/* ---- the model kinds, as the file names them and as the API names them ---- */

typedef struct {
    const char *type;       /* solver_type written */
    const char *solver;     /* strata_glm_model_solver() */
    int         classification;
} t_kind_t;

static const t_kind_t t_kinds[] = {
    {"L2R_LR",              "logistic",    1},
    {"L2R_L1LOSS_SVC_DUAL", "svm",         1},
    {"L2R_L2LOSS_SVC_DUAL", "sqsvm",       1},
    {"L2R_L2LOSS_SVR",      "ridge",       0},
    {"STRATA_LASSO",        "lasso",       0},
    {"L1R_LR",              "l1-logistic", 1},
    {"STRATA_ELASTIC_NET",  "elastic-net", 0},
    {"L1R_L2LOSS_SVC",      "l1-sqsvm",    1},
    {"L2R_L1LOSS_SVR_DUAL", "svr",         0},
    {"L2R_L2LOSS_SVR_DUAL", "sqsvr",       0},
};

/* A model file in LIBLINEAR's layout, written independently of the library:
 * @a n_w weights (n_features, plus the bias weight when the bias line says so). */
static void t_model_text(t_buf_t *b, const char *type, const char *label_line, int64_t d,
                         const char *bias_text, const double *w, int64_t n_w)
{
    int64_t j;

    t_buf_printf(b, "solver_type %s\nnr_class 2\n", type);
    if (label_line != NULL) {
        t_buf_printf(b, "%s\n", label_line);
    }
    t_buf_printf(b, "nr_feature %" PRId64 "\nbias %s\nw\n", d, bias_text);
    for (j = 0; j < n_w; j++) {
        t_buf_printf(b, "%.17g \n", w[j]);
    }
}

static strata_glm_model_t *t_load_text(const char *name, const char *text)
{
    strata_glm_model_t *model = NULL;
    const char *path = t_path(name);
    char msg[T_MSG_LEN] = "";
    strata_status_t st;

    t_write(path, text, strlen(text));
    st = strata_glm_model_load(path, msg, sizeof(msg), &model);
    CHECK(st == STRATA_OK && model != NULL, "load %s: status %d: %s\n%s", name, (int)st, msg,
          text);
    return (st == STRATA_OK) ? model : NULL;
}

/* A model of @a kind with the given weights (n_features, then the bias weight when
 * bias > 0), through a file. */
static strata_glm_model_t *t_model(const t_kind_t *kind, int64_t d, double bias,
                                   const double *w)
{
    t_buf_t b = {NULL, 0, 0};
    strata_glm_model_t *model;
    char bias_text[64];

    snprintf(bias_text, sizeof(bias_text), "%.17g", bias > 0 ? bias : -1.0);
    t_model_text(&b, kind->type, kind->classification ? "label 1 -1" : NULL, d, bias_text, w,
                 d + (bias > 0));
    model = t_load_text("model", b.p);
    free(b.p);
    return model;
}

/* ------------------------------------------------------------------------------------ */
/* 1. Round trip                                                                        */
/* ------------------------------------------------------------------------------------ */

static void t_check_model(int line, const strata_glm_model_t *model, const char *solver,
                          int64_t d, double bias, const double *w)
{
    strata_glm_info_t info, zero;
    const double *mw;
    int64_t j, bad = -1;

    if (model == NULL) {
        t_fail(line, "no model");
        return;
    }
    CHECK(!strcmp(strata_glm_model_solver(model), solver), "line %d: solver %s, expected %s",
          line, strata_glm_model_solver(model), solver);
    CHECK(strata_glm_model_features(model) == d, "line %d: %" PRId64 " features, expected %"
          PRId64, line, strata_glm_model_features(model), d);
    CHECK(bias > 0 ? t_same_bits(strata_glm_model_bias(model), bias)
                   : !(strata_glm_model_bias(model) > 0),
          "line %d: bias %.17g, expected %.17g", line, strata_glm_model_bias(model), bias);
    mw = strata_glm_model_weights(model);
    for (j = 0; j < d + (bias > 0); j++) {
        if (!t_same_bits(mw[j], w[j]) && bad < 0) {
            bad = j;
        }
    }
    CHECK(bad < 0, "line %d: weight %" PRId64 " is %.17g, expected %.17g", line, bad,
          bad >= 0 ? mw[bad] : 0.0, bad >= 0 ? w[bad] : 0.0);
    memset(&zero, 0, sizeof(zero));
    memset(&info, 0xff, sizeof(info));
    strata_glm_model_info(model, &info);
    CHECK(!memcmp(&info, &zero, sizeof(info)), "line %d: info of a loaded model not zero",
          line);
}

/* save @a model; the file must be @a expect byte for byte; it must load back */
static void t_save_check(int line, const strata_glm_model_t *model, const char *expect,
                         const char *solver, int64_t d, double bias, const double *w)
{
    strata_glm_model_t *again = NULL;
    const char *path = t_path("saved");
    char msg[T_MSG_LEN] = "";
    strata_status_t st;
    size_t len;
    char *text;

    st = strata_glm_model_save(model, path, msg, sizeof(msg));
    if (!CHECK(st == STRATA_OK, "line %d: save: status %d: %s", line, (int)st, msg)) {
        return;
    }
    text = t_slurp(path, &len);
    CHECK(text != NULL && len == strlen(expect) && !memcmp(text, expect, len),
          "line %d: saved file differs:\n%s\nexpected:\n%s", line, text ? text : "(none)",
          expect);
    free(text);
    st = strata_glm_model_load(path, msg, sizeof(msg), &again);
    if (CHECK(st == STRATA_OK, "line %d: load of the saved file: %s", line, msg)) {
        t_check_model(line, again, solver, d, bias, w);
        strata_glm_model_free(again);
    }
}

static void t_roundtrip(void)
{
    static const double specials[] = {0.0, -0.0, DBL_MAX, -DBL_MAX, DBL_MIN, -DBL_MIN,
                                      DBL_TRUE_MIN, 1.0 / 3.0, 0.1, -1e-300,
                                      2.2250738585072009e-308, 0x1.fffffffffffffp-1};
    static const double biases[] = {-1.0, 1.0, 0.1, 1e-300, 12345.678};
    uint64_t seed = 42;
    t_buf_t b;
    double w[64], neg[64];
    int64_t d, j;
    size_t k, i;
    strata_glm_model_t *model;
    char bias_text[64];

    for (k = 0; k < ST_ARRAY_SIZE(t_kinds); k++) {
        for (i = 0; i < ST_ARRAY_SIZE(biases); i++) {
            for (d = 0; d <= 40; d += 40) {
                for (j = 0; j < d + 1; j++) {
                    w[j] = (j < (int64_t)ST_ARRAY_SIZE(specials)) ? specials[j]
                                                                   : t_rand_bits(&seed);
                }
                if (d == 0) {
                    w[0] = -2.5;
                }
                memset(&b, 0, sizeof(b));
                snprintf(bias_text, sizeof(bias_text), "%.17g", biases[i]);
                t_model_text(&b, t_kinds[k].type,
                             t_kinds[k].classification ? "label 1 -1" : NULL, d, bias_text, w,
                             d + (biases[i] > 0));
                model = t_load_text("roundtrip", b.p);
                t_check_model(__LINE__, model, t_kinds[k].solver, d, biases[i], w);
                if (model != NULL) {
                    t_save_check(__LINE__, model, b.p, t_kinds[k].solver, d, biases[i], w);
                }
                strata_glm_model_free(model);
                free(b.p);
            }
        }
    }

    /* LIBLINEAR's other solvers of the same problems: read as Strata's model, written
     * under the canonical name */
    {
        static const struct {
            const char *alias, *type, *solver, *label;
        } aliases[] = {
            {"L2R_LR_DUAL",         "L2R_LR",              "logistic",    "label 1 -1"},
            {"L2R_L2LOSS_SVC",      "L2R_L2LOSS_SVC_DUAL", "sqsvm",       "label 1 -1"},
            {"STRATA_L1_LOGISTIC",  "L1R_LR",              "l1-logistic", "label 1 -1"},
        };
        t_buf_t canon;

        for (j = 0; j < 5; j++) {
            w[j] = t_rand_dyadic(&seed, 40);
        }
        for (k = 0; k < ST_ARRAY_SIZE(aliases); k++) {
            memset(&b, 0, sizeof(b));
            memset(&canon, 0, sizeof(canon));
            t_model_text(&b, aliases[k].alias, aliases[k].label, 4, "2", w, 5);
            t_model_text(&canon, aliases[k].type, aliases[k].label, 4, "2", w, 5);
            model = t_load_text("alias", b.p);
            t_check_model(__LINE__, model, aliases[k].solver, 4, 2.0, w);
            if (model != NULL) {
                t_save_check(__LINE__, model, canon.p, aliases[k].solver, 4, 2.0, w);
            }
            strata_glm_model_free(model);
            free(b.p);
            free(canon.p);
        }
    }

    /* label orders: "-1 1" and "0 1" mean w scores -1 positive (negated on load);
     * "1 0" is "1 -1". The class of a score below, at and above 0 is one of the model's
     * classes, at 0 the line's second (before: -1 for the 0/1 models, whose classes
     * and labels are 1 and 0) */
    for (j = 0; j < 6; j++) {
        w[j]   = t_rand_bits(&seed);
        neg[j] = -w[j];
    }
    {
        static const struct {
            const char *line;
            int         negate;
            double      classes[2], at[3];   /* (the class at -0.5, 0 and 0.5) */
        } labels[] = {{"label -1 1", 1, {1, -1}, {-1, 1, 1}},
                      {"label 0 1", 1, {1, 0}, {0, 1, 1}},
                      {"label 1 0", 0, {1, 0}, {0, 0, 1}},
                      {"label +1 -1", 0, {1, -1}, {-1, -1, 1}}};
        double classes[2], at[3];
        int n;

        for (k = 0; k < ST_ARRAY_SIZE(labels); k++) {
            memset(&b, 0, sizeof(b));
            t_model_text(&b, "L2R_LR", labels[k].line, 5, "0.5", w, 6);
            model = t_load_text("labels", b.p);
            t_check_model(__LINE__, model, "logistic", 5, 0.5, labels[k].negate ? neg : w);
            if (model != NULL) {
                n = strata_glm_model_classes(model, classes);
                for (j = 0; j < 3; j++) {
                    at[j] = strata_glm_predict_class(model, 0.5 * (double)(j - 1));
                }
                CHECK(n == 2 && classes[0] == labels[k].classes[0] &&
                      classes[1] == labels[k].classes[1] && at[0] == labels[k].at[0] &&
                      at[1] == labels[k].at[1] && at[2] == labels[k].at[2],
                      "'%s': classes %d {%g, %g}, the class of -0.5, 0, 0.5: %g %g %g "
                      "(want {%g, %g}, %g %g %g)", labels[k].line, n, classes[0],
                      classes[1], at[0], at[1], at[2], labels[k].classes[0],
                      labels[k].classes[1], labels[k].at[0], labels[k].at[1],
                      labels[k].at[2]);
            }
            strata_glm_model_free(model);
            free(b.p);
        }
    }

    /* "bias 0" (LIBLINEAR -B 0): the bias weight is there and multiplies 0: dropped */
    memset(&b, 0, sizeof(b));
    t_model_text(&b, "L2R_L1LOSS_SVC_DUAL", "label 1 -1", 5, "0", w, 6);
    model = t_load_text("bias0", b.p);
    t_check_model(__LINE__, model, "svm", 5, -1.0, w);
    if (model != NULL) {
        CHECK(strata_glm_model_bias(model) == -1.0, "bias 0 loads as %g, expected -1",
              strata_glm_model_bias(model));
    }
    strata_glm_model_free(model);
    free(b.p);
    /* a negative bias other than -1: none */
    memset(&b, 0, sizeof(b));
    t_model_text(&b, "L2R_L2LOSS_SVR", NULL, 5, "-7.5", w, 5);
    model = t_load_text("biasneg", b.p);
    t_check_model(__LINE__, model, "ridge", 5, -1.0, w);
    strata_glm_model_free(model);
    free(b.p);

    /* CRLF line ends, blank lines, tabs, header keys in another order, no trailing
     * blank after the weights, no final newline */
    model = t_load_text("crlf", "nr_feature 3\r\n\r\nsolver_type\tL2R_LR\r\nbias -1\r\n"
                        "label 1 -1\r\nnr_class 2\r\nw\r\n0.5\r\n-0.25 \r\n\r\n8\r\n\r\n");
    w[0] = 0.5;
    w[1] = -0.25;
    w[2] = 8.0;
    t_check_model(__LINE__, model, "logistic", 3, -1.0, w);
    strata_glm_model_free(model);
    model = t_load_text("nonl", "solver_type STRATA_LASSO\nnr_class 2\nnr_feature 1\nbias 3\n"
                        "w\n1e-3\n-2");
    w[0] = 1e-3;
    w[1] = -2.0;
    t_check_model(__LINE__, model, "lasso", 1, 3.0, w);
    strata_glm_model_free(model);
}

/* ------------------------------------------------------------------------------------ */
/* 2. Malformed files                                                                   */
/* ------------------------------------------------------------------------------------ */

#define T_HDR_LR  "solver_type L2R_LR\nnr_class 2\nlabel 1 -1\n"
#define T_HDR_SVR "solver_type L2R_L2LOSS_SVR\nnr_class 2\n"

static void t_malformed(void)
{
    static const struct {
        const char *text;
        int         line;
        const char *what;
    } cases[] = {
        {"", 1, "empty file"},
        /* (LIBLINEAR's models that Strata has not, named: before, "unknown") */
        {"solver_type MCSVM_CS\nnr_class 2\n", 1, "unsupported solver_type 'MCSVM_CS': "
         "LIBLINEAR's Crammer and Singer multi-class SVM (train -s 4), a model Strata has not"},
        {"solver_type MCSVM_CS\n", 1, "L1R_L2LOSS_SVC, STRATA_LASSO, STRATA_ELASTIC_NET)"},
        {"solver_type L2R_LR_X\n", 1, "unknown solver_type 'L2R_LR_X' (Strata reads"},
        /* (the list names every type read: before, not L2R_L1LOSS_SVR_DUAL) */
        {"solver_type L2R_LR_X\n", 1, "L2R_L2LOSS_SVR_DUAL, L2R_L1LOSS_SVR_DUAL, L1R_LR"},
        {"solver_type ONECLASS_SVM\n", 1, "unsupported solver_type 'ONECLASS_SVM': LIBLINEAR's "
         "one-class SVM (train -s 21)"},
        {"solver_type\n", 1, "solver_type needs 1 value"},
        {"solver_type L2R_LR L2R_LR\n", 1, "trailing text after solver_type: 'L2R_LR'"},
        /* (nr_class 1: LIBLINEAR's model of one class, read; before: refused) */
        {"solver_type L2R_LR\nnr_class 0\n", 2, "nr_class '0' is not an integer from 1"},
        {"solver_type L2R_LR\nnr_class 1\nlabel 5 3\n", 3, "trailing text after label"},
        {"solver_type L2R_L2LOSS_SVR\nnr_class 1\nnr_feature 1\nbias -1\nw\n1\n", 2,
         "nr_class 1 in a regression model"},
        {"solver_type L2R_LR\nlabel 1 -1 2\nnr_class 2\nnr_feature 1\nbias -1\nw\n1\n", 2,
         "3 labels, but nr_class 2 (on line 3)"},
        {"solver_type L2R_LR\nlabel 5\nnr_class 2\nnr_feature 1\nbias -1\nw\n1\n", 2,
         "1 labels, but nr_class 2"},
        {"solver_type L2R_LR\nnr_class 3\nlabel 1 2\n", 3, "label needs 3 values"},
        {"solver_type L2R_LR\nnr_class 3\nlabel 1 2 1\n", 3, "label 1 given twice"},
        /* (the count in 64 bits: 1 + 2^31 - 1 overflowed an int, clang's build read
           tok[INT_MIN]) */
        {"solver_type L2R_LR\nnr_class 2147483647\nlabel 1 2 3\n", 3,
         "label needs 2147483647 values"},
        {"solver_type L2R_LR\nnr_class 3\nlabel 1 2 3\nnr_feature 2\nbias -1\nw\n1 2 3\n"
         "4 5\n", 8, "weight 2: 2 values, not 3 (one per class)"},
        {"solver_type L2R_LR\nnr_class 3\nlabel 1 2 3\nnr_feature 1\nbias -1\nw\n1 2 3 4\n",
         7, "trailing text after weight 1: '4' (3 weights, one per class, a line)"},
        {"solver_type L2R_LR\nnr_class 2\nlabel 5 7\nnr_feature 1\nbias -1\nw\n1 2\n", 7,
         "trailing text after weight 1: '2' (1 weight a line)"},
        {"solver_type L2R_L2LOSS_SVR\nnr_class 3\nnr_feature 1\nbias -1\nw\n1\n", 2,
         "nr_class 3 in a regression model"},
        {"solver_type L2R_LR\nnr_class 3\nlabel 1 2 2147483648\n", 3,
         "label '2147483648' is not an integer below 2^31"},
        {"solver_type L2R_LR\nnr_class two\n", 2, "nr_class 'two'"},
        {T_HDR_LR "nr_feature 2\nbias -1\n", 5, "end of file before the 'w' line"},
        {T_HDR_LR "nr_feature 2\nbias -1\n0.5\n0.25\n", 6, "unknown keyword '0.5'"},
        {T_HDR_LR "bias -1\nw\n1\n", 5, "w before nr_feature"},
        {"nr_class 2\nnr_feature 1\nbias -1\nw\n1\n", 4, "w before solver_type"},
        {"solver_type L2R_LR\nnr_feature 1\nbias -1\nw\n1\n", 4, "w before nr_class"},
        {"solver_type L2R_LR\nnr_class 2\nnr_feature 1\nbias -1\nw\n1\n", 5, "w before label"},
        {T_HDR_LR "nr_feature 1\nw\n1\n", 5, "w before bias"},
        {T_HDR_SVR "label 1 -1\nnr_feature 1\nbias -1\nw\n1\n", 3, "label line in a regression"},
        {"solver_type L2R_LR\nnr_class 2\nlabel 2 2\n", 3, "label 2 given twice"},
        {"solver_type L2R_LR\nnr_class 2\nlabel 1 -1 0\n", 3, "trailing text after label"},
        {"solver_type L2R_LR\nnr_class 2\nlabel 1\n", 3, "label needs 2 values"},
        {"solver_type L2R_LR\nnr_class 2\nlabel 1.0 -1\n", 3, "label '1.0' is not an integer"},
        {T_HDR_LR "nr_class 2\n", 4, "nr_class given twice (first on line 2)"},
        {T_HDR_LR "nr_feature 2\nrho 0\n", 5, "unknown keyword 'rho'"},
        {T_HDR_LR "nr_feature -1\n", 4, "nr_feature '-1'"},
        {T_HDR_LR "nr_feature 1e3\n", 4, "nr_feature '1e3'"},
        {T_HDR_LR "nr_feature 4294967296\n", 4, "nr_feature '4294967296'"},
        {T_HDR_LR "nr_feature 99999999999999999999999\n", 4, "nr_feature '9999"},
        {T_HDR_LR "nr_feature 2\nbias nan\n", 5, "bias 'nan' is not a finite number"},
        {T_HDR_LR "nr_feature 2\nbias 1e999\n", 5, "bias '1e999' is not a finite number"},
        {T_HDR_LR "nr_feature 2\nbias one\n", 5, "bias 'one'"},
        {T_HDR_LR "nr_feature 2\nbias -1\nw 1\n", 6, "trailing text after w: '1'"},
        {T_HDR_LR "nr_feature 3\nbias -1\nw\n1\n2\n", 8,
         "end of file after 2 weights: nr_feature 3 needs 3"},
        {T_HDR_LR "nr_feature 3\nbias 1\nw\n1\n2\n3\n", 9,
         "end of file after 3 weights: nr_feature 3 and the bias needs 4"},
        {T_HDR_LR "nr_feature 0\nbias -1\nw\n", 6, NULL},  /* valid: no weights at all */
        {T_HDR_LR "nr_feature 2\nbias -1\nw\n", 6, "end of file after 0 weights"},
        {T_HDR_LR "nr_feature 2\nbias -1\nw\n1\n2\n3\n", 9,
         "trailing text after the 2 weights (nr_feature 2): '3'"},
        {T_HDR_LR "nr_feature 2\nbias -1\nw\n1\n2\n\nw\n", 10, "trailing text after the 2"},
        {T_HDR_LR "nr_feature 2\nbias -1\nw\n1 2\n", 7, "trailing text after weight 1: '2'"},
        {T_HDR_LR "nr_feature 2\nbias -1\nw\n1\nabc\n", 8, "weight 2: 'abc' is not a number"},
        {T_HDR_LR "nr_feature 2\nbias -1\nw\n1\n1.5x\n", 8, "'1.5x' is not a number"},
        {T_HDR_LR "nr_feature 2\nbias -1\nw\nnan\n1\n", 7, "weight 1: 'nan' is not finite"},
        {T_HDR_LR "nr_feature 2\nbias -1\nw\n1\n-inf\n", 8, "'-inf' is not finite"},
        {T_HDR_LR "nr_feature 2\nbias -1\nw\n1e400\n1\n", 7, "'1e400' is not finite"},
        {T_HDR_LR "nr_feature 2\nbias -1\nw\n1\n2\n# comment\n", 9, "trailing text"},
    };
    strata_glm_model_t *model, *sentinel = (strata_glm_model_t *)&t_nfail;
    char msg[T_MSG_LEN], want[T_MSG_LEN];
    const char *path;
    strata_status_t st;
    size_t k;

    for (k = 0; k < ST_ARRAY_SIZE(cases); k++) {
        path = t_path("bad");
        t_write(path, cases[k].text, strlen(cases[k].text));
        model = sentinel;
        msg[0] = '\0';
        st = strata_glm_model_load(path, msg, sizeof(msg), &model);
        if (cases[k].what == NULL) {
            if (CHECK(st == STRATA_OK, "case %zu: status %d: %s", k, (int)st, msg)) {
                strata_glm_model_free(model);
            }
            continue;
        }
        snprintf(want, sizeof(want), "%s:%d: ", path, cases[k].line);
        CHECK(st == STRATA_ERR_INVALID_PARAM, "case %zu: status %d, expected %d (%s)", k,
              (int)st, (int)STRATA_ERR_INVALID_PARAM, msg);
        CHECK(model == sentinel, "case %zu: *model_p was set on failure", k);
        CHECK(!strncmp(msg, want, strlen(want)) && strstr(msg, cases[k].what) != NULL,
              "case %zu: message '%s', expected '%s...%s'", k, msg, want, cases[k].what);
        if (st == STRATA_OK && model != sentinel) {
            strata_glm_model_free(model);
        }
    }

    /* a NUL byte: not a text file */
    {
        static const char nul[] = "solver_type L2R_LR\nnr_cl\0ass 2\n";

        path = t_path("nul");
        t_write(path, nul, sizeof(nul) - 1);
        model = sentinel;
        st = strata_glm_model_load(path, msg, sizeof(msg), &model);
        snprintf(want, sizeof(want), "%s:2: NUL byte", path);
        CHECK(st == STRATA_ERR_INVALID_PARAM && !strncmp(msg, want, strlen(want)) &&
              model == sentinel, "NUL byte: status %d, message '%s'", (int)st, msg);
    }
    /* missing file, a directory */
    path  = t_path("missing");
    model = sentinel;
    st    = strata_glm_model_load(path, msg, sizeof(msg), &model);
    snprintf(want, sizeof(want), "%s: ", path);
    CHECK(st == STRATA_ERR_NOT_FOUND && !strncmp(msg, want, strlen(want)) &&
          model == sentinel, "missing file: status %d, message '%s'", (int)st, msg);
    st = strata_glm_model_load(t_dir, msg, sizeof(msg), &model);
    CHECK(st == STRATA_ERR_IO && strstr(msg, t_dir) != NULL && model == sentinel,
          "directory: status %d, message '%s'", (int)st, msg);
    /* a tiny message buffer is not overrun */
    path = t_path("bad");
    t_write(path, "solver_type X\n", 14);
    memset(msg, 'z', sizeof(msg));
    st = strata_glm_model_load(path, msg, 8, &model);
    CHECK(st == STRATA_ERR_INVALID_PARAM && strlen(msg) == 7 && msg[8] == 'z',
          "short message buffer: '%.8s'", msg);
    st = strata_glm_model_load(path, NULL, 0, &model);
    CHECK(st == STRATA_ERR_INVALID_PARAM, "no message buffer: status %d", (int)st);
}

/* ------------------------------------------------------------------------------------ */
/* 3. Atomic save                                                                       */
/* ------------------------------------------------------------------------------------ */

/* A save through a symbolic link writes the file it names (as fopen would), with
 * that file's permissions; a dangling link creates its target. @a small saves as the
 * @a len0 bytes @a want. */
static void t_atomic_links(const strata_glm_model_t *small, const char *sub, const char *want,
                           size_t len0)
{
    char target[700], link[700], made[700], msg[T_MSG_LEN], *got;
    strata_status_t st;
    struct stat sb;
    size_t len;

    snprintf(target, sizeof(target), "%s/target", sub);
    snprintf(link, sizeof(link), "%s/link", sub);
    t_write(target, "old", 3);
    chmod(target, 0640);
    CHECK(symlink("target", link) == 0, "symlink: %s", strerror(errno));
    st = strata_glm_model_save(small, link, msg, sizeof(msg));
    CHECK(st == STRATA_OK, "save through a link: %s", msg);
    CHECK(lstat(link, &sb) == 0 && S_ISLNK(sb.st_mode), "the link was replaced by a file");
    CHECK(stat(target, &sb) == 0 && (sb.st_mode & 0777) == 0640,
          "the linked file's mode is %o, expected 640 (kept)", (unsigned)(sb.st_mode & 0777));
    got = t_slurp(target, &len);
    CHECK(got != NULL && len == len0 && !memcmp(got, want, len),
          "the linked file does not hold the model");
    free(got);
    unlink(link);
    unlink(target);

    snprintf(made, sizeof(made), "%s/made", sub);
    CHECK(symlink("made", link) == 0, "symlink: %s", strerror(errno));
    st = strata_glm_model_save(small, link, msg, sizeof(msg));
    CHECK(st == STRATA_OK, "save through a dangling link: %s", msg);
    CHECK(lstat(link, &sb) == 0 && S_ISLNK(sb.st_mode) && lstat(made, &sb) == 0 &&
          S_ISREG(sb.st_mode), "a dangling link's target was not created in its place");
    unlink(link);
    unlink(made);
}

/* Processes saving one file at once: every save succeeds (before, each one's
 * clean-up removed the others' temporaries: 112-178 of 300 saves failed), and the
 * file ends whole. */
static void t_atomic_concurrent(const strata_glm_model_t *small, const char *sub,
                                const char *want, size_t len0)
{
    enum { WRITERS = 4, SAVES = 60 };
    char path[700], msg[T_MSG_LEN], *got;
    int k, i, bad, status, failed = 0;
    pid_t pid[WRITERS];
    size_t len;

    snprintf(path, sizeof(path), "%s/shared", sub);
    for (k = 0; k < WRITERS; k++) {
        pid[k] = fork();
        if (pid[k] == 0) {
            for (i = 0, bad = 0; i < SAVES; i++) {
                bad += (strata_glm_model_save(small, path, msg, sizeof(msg)) != STRATA_OK);
            }
            _exit(bad > 0 ? 1 : 0);
        }
        CHECK(pid[k] > 0, "fork: %s", strerror(errno));
    }
    for (k = 0; k < WRITERS; k++) {
        if (pid[k] > 0 && (waitpid(pid[k], &status, 0) != pid[k] || !WIFEXITED(status) ||
                           WEXITSTATUS(status) != 0)) {
            failed++;
        }
    }
    CHECK(failed == 0, "%d of %d processes saving one file at once had failed saves", failed,
          WRITERS);
    got = t_slurp(path, &len);
    CHECK(got != NULL && len == len0 && !memcmp(got, want, len),
          "the file saved by several processes at once is not whole");
    free(got);
    unlink(path);
}

static void t_atomic(void)
{
    static const t_kind_t *kind = &t_kinds[0];
    strata_glm_model_t *small, *big;
    struct rlimit old_lim, lim;
    char msg[T_MSG_LEN], sub[600], path[700];
    size_t len0, len;
    char *before, *after;
    uint64_t seed = 7;
    double *w;
    struct stat sb;
    mode_t old_mask;
    int j, n0;
    strata_status_t st;
    FILE *f;

    w = t_malloc(2001 * sizeof(double));
    for (j = 0; j < 2001; j++) {
        w[j] = t_rand_bits(&seed);
    }
    small = t_model(kind, 3, -1.0, w);
    big   = t_model(kind, 2000, 1.0, w);
    if (small == NULL || big == NULL) {
        goto out;
    }
    snprintf(sub, sizeof(sub), "%s/atomic.%d", t_dir, t_rank);
    if (!CHECK(mkdir(sub, 0777) == 0, "mkdir %s: %s", sub, strerror(errno))) {
        goto out;
    }
    snprintf(path, sizeof(path), "%s/model", sub);

    /* the saved file gets 0666 less the umask, as fopen would give it */
    old_mask = umask(022);
    st = strata_glm_model_save(small, path, msg, sizeof(msg));
    umask(old_mask);
    CHECK(st == STRATA_OK, "save: %s", msg);
    CHECK(stat(path, &sb) == 0 && (sb.st_mode & 0777) == 0644, "mode %o, expected 644",
          (unsigned)(sb.st_mode & 0777));
    before = t_slurp(path, &len0);
    n0     = t_count_entries(sub);
    CHECK(n0 == 1, "%d entries after a save, expected 1", n0);

    /* a write that fails half-way: the file size limit (a full disk, as far as the
     * writer can tell) */
    getrlimit(RLIMIT_FSIZE, &old_lim);
    lim          = old_lim;
    lim.rlim_cur = 4096;
    signal(SIGXFSZ, SIG_IGN);
    if (setrlimit(RLIMIT_FSIZE, &lim) == 0) {
        st = strata_glm_model_save(big, path, msg, sizeof(msg));
        setrlimit(RLIMIT_FSIZE, &old_lim);
        CHECK(st == STRATA_ERR_IO && !strncmp(msg, path, strlen(path)) &&
              strstr(msg, "unchanged") != NULL, "save past the size limit: status %d, '%s'",
              (int)st, msg);
        after = t_slurp(path, &len);
        CHECK(after != NULL && len == len0 && !memcmp(before, after, len),
              "the old file changed after a failed save");
        free(after);
        CHECK(t_count_entries(sub) == n0, "a failed save left %d entries",
              t_count_entries(sub));
    } else {
        CHECK(0, "setrlimit: %s", strerror(errno));
    }
    signal(SIGXFSZ, SIG_DFL);

    /* a non-empty directory in the way: the rename fails */
    snprintf(path, sizeof(path), "%s/dir", sub);
    mkdir(path, 0777);
    snprintf(path, sizeof(path), "%s/dir/x", sub);
    t_write(path, "x", 1);
    snprintf(path, sizeof(path), "%s/dir", sub);
    st = strata_glm_model_save(small, path, msg, sizeof(msg));
    CHECK(st == STRATA_ERR_IO && strstr(msg, path) != NULL, "save onto a directory: %d '%s'",
          (int)st, msg);
    CHECK(t_count_entries(sub) == n0 + 1, "a failed rename left %d entries",
          t_count_entries(sub));
    snprintf(path, sizeof(path), "%s/dir/x", sub);
    unlink(path);
    snprintf(path, sizeof(path), "%s/dir", sub);
    rmdir(path);

    /* a missing directory */
    snprintf(path, sizeof(path), "%s/nodir/model", sub);
    st = strata_glm_model_save(small, path, msg, sizeof(msg));
    CHECK(st == STRATA_ERR_IO && strstr(msg, "No such file or directory") != NULL,
          "save into a missing directory: %d '%s'", (int)st, msg);

    /* an unwritable directory (root writes anyway: then there is nothing to see) */
    snprintf(path, sizeof(path), "%s/probe", sub);
    chmod(sub, 0555);
    f = fopen(path, "w");
    if (f != NULL) {
        fclose(f);
        unlink(path);
    } else {
        snprintf(path, sizeof(path), "%s/model", sub);
        st = strata_glm_model_save(big, path, msg, sizeof(msg));
        CHECK(st == STRATA_ERR_IO && strstr(msg, "Permission denied") != NULL,
              "save into an unwritable directory: %d '%s'", (int)st, msg);
        after = t_slurp(path, &len);
        CHECK(after != NULL && len == len0 && !memcmp(before, after, len),
              "the old file changed after a refused save");
        free(after);
    }
    chmod(sub, 0777);

    /* non-finite weights are refused before anything is written */
    ((double *)strata_glm_model_weights(big))[1234] = NAN;
    snprintf(path, sizeof(path), "%s/model", sub);
    st = strata_glm_model_save(big, path, msg, sizeof(msg));
    CHECK(st == STRATA_ERR_INVALID_PARAM && strstr(msg, "weight 1235") != NULL,
          "save of a NaN weight: %d '%s'", (int)st, msg);
    after = t_slurp(path, &len);
    CHECK(after != NULL && len == len0 && !memcmp(before, after, len),
          "the old file changed after a refused save");
    free(after);
    CHECK(t_count_entries(sub) == n0, "%d entries at the end", t_count_entries(sub));

    t_atomic_links(small, sub, before, len0);
    t_atomic_concurrent(small, sub, before, len0);
    CHECK(t_count_entries(sub) == n0, "%d entries after the links and the concurrent saves",
          t_count_entries(sub));

    /* bad arguments */
    CHECK(strata_glm_model_save(NULL, path, msg, sizeof(msg)) == STRATA_ERR_INVALID_PARAM,
          "save(NULL model)");
    CHECK(strata_glm_model_save(small, NULL, msg, sizeof(msg)) == STRATA_ERR_INVALID_PARAM,
          "save(NULL path)");
    CHECK(strata_glm_model_load(path, msg, sizeof(msg), NULL) == STRATA_ERR_INVALID_PARAM,
          "load(NULL result)");

    unlink(path);
    rmdir(sub);
    free(before);
out:
    strata_glm_model_free(small);
    strata_glm_model_free(big);
    free(w);
}

/* ------------------------------------------------------------------------------------ */
/* 4. Prediction and metrics                                                            */
/* ------------------------------------------------------------------------------------ */

#define T_D        6     /* the model's features */
#define T_COLS     8     /* the data's columns: 6 and 7 are beyond the model */
#define T_ROWS     41

/* The hand-made set: dense rows with zeros left out, in CSR. */
typedef struct {
    int64_t  n;
    int64_t  indptr[T_ROWS + 1];
    uint32_t indices[T_ROWS * T_COLS];
    double   values[T_ROWS * T_COLS];
    double   dense[T_ROWS][T_COLS];
    double   y[T_ROWS];    /* +1/-1 */
    double   yr[T_ROWS];   /* real targets */
} t_set_t;

static void t_make_set(t_set_t *s, uint64_t seed)
{
    int64_t i, j, nnz = 0;

    memset(s, 0, sizeof(*s));
    s->n = T_ROWS;
    for (i = 0; i < T_ROWS; i++) {
        s->indptr[i] = nnz;
        for (j = 0; j < T_COLS; j++) {
            /* about half the entries; row 3 empty; row 4 only beyond the model */
            if ((t_rand(&seed) & 1) && i != 3 && (i != 4 || j >= T_D)) {
                s->dense[i][j]    = t_rand_dyadic(&seed, 16);
                s->indices[nnz]   = (uint32_t)j;
                s->values[nnz++]  = s->dense[i][j];
            }
        }
        s->y[i]  = (t_rand(&seed) % 3 == 0) ? 1.0 : -1.0;
        s->yr[i] = t_rand_dyadic(&seed, 30);
    }
    s->indptr[T_ROWS] = nnz;
}

/* The score of row i, computed densely here. */
static double t_score(const t_set_t *s, int64_t i, const double *w, double bias)
{
    double z = 0.0;
    int j;

    for (j = 0; j < T_D; j++) {
        z += w[j] * s->dense[i][j];
    }
    return z + (bias > 0 ? w[T_D] * bias : 0.0);
}

typedef struct {
    double accuracy, logloss, auc, rmse;
} t_metrics_t;

/* The expected metrics from scores @a z, by definition: every pair for the AUC. */
static void t_expected(int64_t n, const double *z, const double *y, int classification,
                       int logistic, t_metrics_t *m)
{
    int64_t i, k, correct = 0, n_pos = 0, n_neg = 0, twice = 0;
    double sum = 0.0;

    m->accuracy = m->logloss = m->auc = m->rmse = NAN;
    if (n == 0) {
        return;
    }
    if (!classification) {
        for (i = 0; i < n; i++) {
            sum += (z[i] - y[i]) * (z[i] - y[i]);
        }
        m->rmse = sqrt(sum / (double)n);
        return;
    }
    for (i = 0; i < n; i++) {
        correct += (z[i] > 0) ? (y[i] == 1.0) : (y[i] == -1.0);
        if (logistic) {
            /* -log P(y) = log(1 + exp(-y z)) */
            sum += (-y[i] * z[i] > 0) ? -y[i] * z[i] + log1p(exp(y[i] * z[i]))
                                      : log1p(exp(-y[i] * z[i]));
        }
        n_pos += (y[i] > 0);
        n_neg += (y[i] < 0);
        for (k = 0; k < n; k++) {
            if (y[i] > 0 && y[k] < 0) {
                twice += (z[i] > z[k]) ? 2 : (z[i] == z[k]) ? 1 : 0;
            }
        }
    }
    m->accuracy = (double)correct / (double)n;
    if (logistic) {
        m->logloss = sum / (double)n;
    }
    if (n_pos > 0 && n_neg > 0) {
        m->auc = (double)twice / (2.0 * (double)n_pos * (double)n_neg);
    }
}

static int t_close(double got, double want, double rel)
{
    if (isnan(want)) {
        return isnan(got);
    }
    return fabs(got - want) <= rel * fabs(want) + 1e-300;
}

/* This rank's block [lo, hi) of @a n rows: contiguous, in rank order; with @a skew,
 * rank 1 holds no rows (ranks with nothing must work too). */
static void t_block(int64_t n, int skew, int64_t *lo_p, int64_t *hi_p)
{
    int parts = t_size, part = t_rank;

    if (skew && t_size > 1) {
        parts = t_size - 1;
        if (t_rank == 1) {
            *lo_p = *hi_p = (n * 1) / parts;
            return;
        }
        part = (t_rank == 0) ? 0 : t_rank - 1;
    }
    *lo_p = n * part / parts;
    *hi_p = n * (part + 1) / parts;
}

/* A problem holding global rows [lo, hi) of @a s on @a comm. */
static strata_glm_problem_t *t_problem(const t_set_t *s, int64_t lo, int64_t hi,
                                       int regression, MPI_Comm comm)
{
    strata_glm_problem_t *prob = NULL;
    char msg[T_MSG_LEN] = "";
    int64_t indptr[T_ROWS + 1], i;
    strata_status_t st;

    for (i = lo; i <= hi; i++) {
        indptr[i - lo] = s->indptr[i] - s->indptr[lo];
    }
    st = strata_glm_problem_create(hi - lo, T_COLS, indptr, s->indices + s->indptr[lo],
                                   s->values + s->indptr[lo],
                                   (regression ? s->yr : s->y) + lo, regression, comm, msg,
                                   sizeof(msg), &prob);
    CHECK(st == STRATA_OK, "problem_create: status %d: %s", (int)st, msg);
    return (st == STRATA_OK) ? prob : NULL;
}

static void t_metrics_check(int line, const char *what, const strata_glm_metrics_t *got,
                            int64_t n, const t_metrics_t *want)
{
    CHECK(got->n == n, "line %d: %s: n %" PRId64 ", expected %" PRId64, line, what, got->n, n);
    CHECK(t_close(got->accuracy, want->accuracy, 0.0), "line %d: %s: accuracy %.17g, "
          "expected %.17g", line, what, got->accuracy, want->accuracy);
    CHECK(t_close(got->auc, want->auc, 0.0), "line %d: %s: AUC %.17g, expected %.17g", line,
          what, got->auc, want->auc);
    CHECK(t_close(got->logloss, want->logloss, 1e-13), "line %d: %s: logloss %.17g, "
          "expected %.17g", line, what, got->logloss, want->logloss);
    CHECK(t_close(got->rmse, want->rmse, 1e-14), "line %d: %s: RMSE %.17g, expected %.17g",
          line, what, got->rmse, want->rmse);
}

/* Every rank must return the same metrics, bit for bit. */
static void t_metrics_agree(int line, const strata_glm_metrics_t *m)
{
    double mine[5] = {(double)m->n, m->accuracy, m->logloss, m->auc, m->rmse}, *all;
    int r;

    if (!t_mpi) {
        return;
    }
    all = t_malloc((size_t)t_size * sizeof(mine));
    MPI_Allgather(mine, 5, MPI_DOUBLE, all, 5, MPI_DOUBLE, MPI_COMM_WORLD);
    for (r = 0; r < t_size; r++) {
        CHECK(!memcmp(all + 5 * r, mine, sizeof(mine)), "line %d: rank %d's metrics differ "
              "from mine", line, r);
    }
    free(all);
}

/* One model on the set: scores, metrics over the ranks, metrics of one rank holding
 * every row (bit for bit the same), and expected metrics computed here. */
static void t_eval_model(const t_set_t *s, const t_kind_t *kind, double bias, uint64_t seed,
                         int skew)
{
    strata_glm_problem_t *prob = NULL, *whole = NULL;
    strata_glm_metrics_t got, got_whole;
    strata_glm_model_t *model;
    t_metrics_t want;
    int regression = !kind->classification;
    int logistic = !strcmp(kind->solver, "logistic") || !strcmp(kind->solver, "l1-logistic");
    const double *y = regression ? s->yr : s->y;
    double w[T_D + 1], z[T_ROWS], scores[T_ROWS], p;
    int64_t i, lo, hi, bad = -1;
    strata_status_t st;
    char what[128];

    for (i = 0; i <= T_D; i++) {
        w[i] = t_rand_dyadic(&seed, 12);
    }
    model = t_model(kind, T_D, bias, w);
    if (model == NULL) {
        return;
    }
    for (i = 0; i < s->n; i++) {
        z[i] = t_score(s, i, w, bias);
    }
    snprintf(what, sizeof(what), "%s bias %g skew %d on %d rank(s)", kind->solver, bias, skew,
             t_size);

    /* rows one at a time, and the probability link */
    for (i = 0; i < s->n; i++) {
        double zi = strata_glm_predict_row(model, s->indptr[i + 1] - s->indptr[i],
                                           s->indices + s->indptr[i],
                                           s->values + s->indptr[i]);
        if (!t_same_bits(zi, z[i]) && bad < 0) {
            bad = i;
        }
        p = strata_glm_predict_prob(model, z[i]);
        if (logistic) {
            CHECK(t_close(p, 1.0 / (1.0 + exp(-z[i])), 1e-15), "%s: P(+1 | z = %g) = %.17g",
                  what, z[i], p);
        } else {
            CHECK(t_same_bits(p, z[i]), "%s: the link of %g is %.17g, expected the score",
                  what, z[i], p);
        }
    }
    CHECK(bad < 0, "%s: predict_row of row %" PRId64 ": %.17g, expected %.17g", what, bad,
          bad >= 0 ? strata_glm_predict_row(model, s->indptr[bad + 1] - s->indptr[bad],
                                            s->indices + s->indptr[bad],
                                            s->values + s->indptr[bad]) : 0.0,
          bad >= 0 ? z[bad] : 0.0);

    /* this rank's block: scores, then the metrics over all ranks */
    t_block(s->n, skew, &lo, &hi);
    prob = t_problem(s, lo, hi, regression, t_comm);
    if (prob == NULL) {
        goto out;
    }
    CHECK(strata_glm_problem_rows(prob) == hi - lo && strata_glm_problem_rows_global(prob) ==
          s->n, "%s: problem rows %" PRId64 " of %" PRId64, what,
          strata_glm_problem_rows(prob), strata_glm_problem_rows_global(prob));
    memset(scores, 0xff, sizeof(scores));
    st = strata_glm_predict(model, prob, scores);
    CHECK(st == STRATA_OK, "%s: predict: status %d", what, (int)st);
    for (i = lo; i < hi; i++) {
        CHECK(t_same_bits(scores[i - lo], z[i]), "%s: score of row %" PRId64 ": %.17g, "
              "expected %.17g", what, i, scores[i - lo], z[i]);
    }
    t_expected(s->n, z, y, kind->classification, logistic, &want);
    memset(&got, 0, sizeof(got));
    st = strata_glm_evaluate(model, prob, t_comm, &got);
    if (CHECK(st == STRATA_OK, "%s: evaluate: status %d", what, (int)st)) {
        t_metrics_check(__LINE__, what, &got, s->n, &want);
        t_metrics_agree(__LINE__, &got);
    }

    /* the same rows on one rank: the very same bits */
    whole = t_problem(s, 0, s->n, regression, t_self);
    if (whole != NULL) {
        st = strata_glm_evaluate(model, whole, t_self, &got_whole);
        CHECK(st == STRATA_OK && !memcmp(&got, &got_whole, sizeof(got)),
              "%s: metrics over the ranks differ from those of one rank (status %d)", what,
              (int)st);
        /* a model of the other kind does not fit this problem */
        {
            const t_kind_t *other = &t_kinds[regression ? 0 : 3];
            strata_glm_model_t *m2 = t_model(other, T_D, -1.0, w);

            if (m2 != NULL) {
                st = strata_glm_evaluate(m2, whole, t_self, &got_whole);
                CHECK(st == STRATA_ERR_INVALID_PARAM, "%s: a %s model evaluated: status %d",
                      what, other->solver, (int)st);
            }
            strata_glm_model_free(m2);
        }
    }

out:
    if (whole != NULL) {
        strata_glm_problem_free(whole);
    }
    if (prob != NULL) {
        strata_glm_problem_free(prob);
    }
    strata_glm_model_free(model);
}

/* Scores of rows stored in single precision (binary files with --prec 32): each value
 * widened to double. The problem is built by hand: the API makes 64-bit rows only. */
static void t_predict_float(const t_set_t *s)
{
    strata_glm_problem_t prob;
    strata_glm_model_t *model;
    st_glm_data_t d;
    float *v32;
    double w[T_D + 1], z[T_ROWS], scores[T_ROWS];
    uint64_t seed = 99;
    int64_t i, k;

    for (i = 0; i <= T_D; i++) {
        w[i] = t_rand_dyadic(&seed, 12);
    }
    model = t_model(&t_kinds[1], T_D, 0.5, w);
    if (model == NULL) {
        return;
    }
    v32 = t_malloc((size_t)s->indptr[s->n] * sizeof(float));
    for (k = 0; k < s->indptr[s->n]; k++) {
        v32[k] = (float)s->values[k];   /* k/8: exact in a float */
    }
    memset(&d, 0, sizeof(d));
    d.n_rows        = s->n;
    d.n_rows_global = s->n;
    d.n_cols        = T_COLS;
    d.nnz           = s->indptr[s->n];
    d.indptr        = (int64_t *)s->indptr;
    d.indices       = (uint32_t *)s->indices;
    d.prec          = 32;
    d.val32         = v32;
    d.y             = (double *)s->y;
    prob.data       = &d;
    prob.regression = 0;
    CHECK(strata_glm_predict(model, &prob, scores) == STRATA_OK, "predict on float rows");
    for (i = 0; i < s->n; i++) {
        z[i] = t_score(s, i, w, 0.5);
        CHECK(t_same_bits(scores[i], z[i]), "float row %" PRId64 ": %.17g, expected %.17g", i,
              scores[i], z[i]);
    }
    free(v32);
    strata_glm_model_free(model);
}

/* Edges of predict_row: nothing, features beyond the model only, score 0 is class -1,
 * the bias alone. */
static void t_predict_edges(void)
{
    static const uint32_t idx[] = {0, 2, 5, 6, 4000000000u};
    static const double   val[] = {2.0, -1.0, 100.0, 7.0, 9.0};
    double w[6] = {0.5, 3.0, 1.0, 0.0, 0.0, -4.0};
    strata_glm_model_t *model;
    strata_glm_metrics_t m;
    strata_glm_problem_t *prob;
    t_set_t s;
    int64_t lo, hi;

    model = t_model(&t_kinds[0], 5, -1.0, w);       /* 5 features: index 5 is beyond */
    if (model != NULL) {
        CHECK(strata_glm_predict_row(model, 0, NULL, NULL) == 0.0, "empty row");
        CHECK(strata_glm_predict_row(model, 3, idx + 2, val + 2) == 0.0, "beyond the model");
        /* 0.5 * 2 + 1 * -1 = 0: class -1 */
        CHECK(strata_glm_predict_row(model, 5, idx, val) == 0.0, "score 0");
        CHECK(strata_glm_predict_prob(model, 0.0) == 0.5, "P(+1 | 0) = %g",
              strata_glm_predict_prob(model, 0.0));
        CHECK(strata_glm_predict_prob(model, -800.0) == 0.0 &&
              strata_glm_predict_prob(model, 800.0) == 1.0, "the link at +-800");
        strata_glm_model_free(model);
    }
    w[5] = -4.0;
    model = t_model(&t_kinds[1], 5, 0.25, w);       /* the bias weight -4, bias 0.25 */
    if (model != NULL) {
        CHECK(strata_glm_predict_row(model, 0, NULL, NULL) == -1.0, "bias alone: %g",
              strata_glm_predict_row(model, 0, NULL, NULL));
        CHECK(strata_glm_predict_row(model, 5, idx, val) == -1.0, "bias and score 0");
        /* an empty problem (no rows anywhere): every metric NaN, n 0 */
        memset(&s, 0, sizeof(s));
        t_block(0, 0, &lo, &hi);
        prob = t_problem(&s, 0, 0, 0, t_comm);
        if (prob != NULL) {
            memset(&m, 0, sizeof(m));
            CHECK(strata_glm_predict(model, prob, NULL) == STRATA_OK, "predict, no rows");
            CHECK(strata_glm_evaluate(model, prob, t_comm, &m) == STRATA_OK && m.n == 0 &&
                  isnan(m.accuracy) && isnan(m.auc) && isnan(m.logloss) && isnan(m.rmse),
                  "evaluate, no rows: n %" PRId64 " acc %g auc %g", m.n, m.accuracy, m.auc);
            strata_glm_problem_free(prob);
        }
        strata_glm_model_free(model);
    }
    /* NULL arguments */
    CHECK(isnan(strata_glm_predict_row(NULL, 0, NULL, NULL)), "predict_row(NULL)");
    CHECK(strata_glm_predict(NULL, NULL, NULL) == STRATA_ERR_INVALID_PARAM, "predict(NULL)");
    CHECK(strata_glm_evaluate(NULL, NULL, t_comm, &m) == STRATA_ERR_INVALID_PARAM,
          "evaluate(NULL)");
    CHECK(strata_glm_model_solver(NULL) == NULL && strata_glm_model_weights(NULL) == NULL &&
          strata_glm_model_features(NULL) == 0, "accessors of NULL");
    strata_glm_model_free(NULL);
}

static void t_metrics(void)
{
    static const double biases[] = {-1.0, 1.0, 0.5};
    t_set_t s;
    size_t k, b;
    int skew, i;

    t_make_set(&s, 1234);
    for (k = 0; k < ST_ARRAY_SIZE(t_kinds); k++) {
        for (b = 0; b < ST_ARRAY_SIZE(biases); b++) {
            for (skew = 0; skew <= (t_size > 2); skew++) {
                t_eval_model(&s, &t_kinds[k], biases[b], 1000 * k + 10 * b + (uint64_t)skew,
                             skew);
            }
        }
    }
    /* many tied scores: integer weights on a few 0/1 features */
    for (i = 0; i < T_ROWS; i++) {
        int64_t j;

        for (j = s.indptr[i]; j < s.indptr[i + 1]; j++) {
            s.values[j] = (s.values[j] > 0) ? 1.0 : 0.0;
            s.dense[i][s.indices[j]] = s.values[j];
        }
    }
    t_eval_model(&s, &t_kinds[0], -1.0, 5, 0);
    t_eval_model(&s, &t_kinds[2], 1.0, 6, t_size > 2);
    /* one class only: AUC NaN, the rest defined */
    for (i = 0; i < T_ROWS; i++) {
        s.y[i] = 1.0;
    }
    t_eval_model(&s, &t_kinds[0], 1.0, 8, 0);
}

/* ------------------------------------------------------------------------------------ */

static void t_rmdir(void)
{
    char cmd[700];

    if (t_rank == 0 && t_dir[0] != '\0') {
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", t_dir);
        if (system(cmd) != 0) {
            t_fail(__LINE__, "cannot remove %s", t_dir);
        }
    }
}

/* test_glm_io --resave IN OUT */
static int t_resave(const char *in, const char *out)
{
    strata_glm_model_t *model = NULL;
    char msg[T_MSG_LEN] = "";

    if (strata_glm_model_load(in, msg, sizeof(msg), &model) != STRATA_OK ||
        strata_glm_model_save(model, out, msg, sizeof(msg)) != STRATA_OK) {
        fprintf(stderr, "test_glm_io: %s\n", msg);
        strata_glm_model_free(model);
        return 1;
    }
    strata_glm_model_free(model);
    return 0;
}

/* strata_glm_problem_read_prec(): the values in the bits asked for, 0 the format's own;
 * a value beyond float's range named with its line in 32 bits only; other precisions,
 * a NULL path or result pointer refused with a message naming it, *prob_p untouched on
 * every failure */
static void t_read_prec(void)
{
    static const int precs[] = {0, 64, 32};
    strata_glm_problem_t *prob, *sentinel = (strata_glm_problem_t *)&t_nfail;
    char msg[T_MSG_LEN], want[T_MSG_LEN];
    const char *path = t_path("prec");
    strata_status_t st;
    size_t k;

    t_write(path, "+1 1:0.1 3:2\n-1 2:1e39\n", 23);
    for (k = 0; k < ST_ARRAY_SIZE(precs); k++) {
        prob = sentinel;
        msg[0] = '\0';
        st = strata_glm_problem_read_prec(path, 0, precs[k], MPI_COMM_NULL, msg, sizeof(msg),
                                          &prob);
        if (precs[k] == 32) {
            snprintf(want, sizeof(want), "%s:2: ", path);
            CHECK(st == STRATA_ERR_INVALID_PARAM && prob == sentinel &&
                  !strncmp(msg, want, strlen(want)) && strstr(msg, "overflows 32-bit"),
                  "1e39 in 32 bits: status %d, message '%s'", (int)st, msg);
        } else if (CHECK(st == STRATA_OK, "precision %d: status %d: %s", precs[k], (int)st,
                         msg)) {
            CHECK(strata_glm_problem_prec(prob) == 64 && strata_glm_problem_rows(prob) == 2,
                  "precision %d read: %d bits, %" PRId64 " rows", precs[k],
                  strata_glm_problem_prec(prob), strata_glm_problem_rows(prob));
            strata_glm_problem_free(prob);
        }
    }
    t_write(path, "+1 1:0.1 3:2\n-1 2:1e30\n", 23);
    prob = NULL;
    st   = strata_glm_problem_read_prec(path, 0, 32, MPI_COMM_NULL, msg, sizeof(msg), &prob);
    if (CHECK(st == STRATA_OK, "32 bits: status %d: %s", (int)st, msg)) {
        CHECK(strata_glm_problem_prec(prob) == 32 && strata_glm_problem_cols(prob) == 3,
              "32 bits read: %d bits, %" PRId64 " columns", strata_glm_problem_prec(prob),
              strata_glm_problem_cols(prob));
        strata_glm_problem_free(prob);
    }
    prob = sentinel;
    st   = strata_glm_problem_read_prec(path, 0, 16, MPI_COMM_NULL, msg, sizeof(msg), &prob);
    CHECK(st == STRATA_ERR_INVALID_PARAM && prob == sentinel &&
          strstr(msg, "precision 16") != NULL, "precision 16: status %d, message '%s'",
          (int)st, msg);
    /* no result pointer: named (before: "no file name") */
    st = strata_glm_problem_read(path, 0, MPI_COMM_NULL, msg, sizeof(msg), NULL);
    CHECK(st == STRATA_ERR_INVALID_PARAM && strstr(msg, "prob_p") != NULL &&
          strstr(msg, "file name") == NULL, "prob_p NULL: status %d, message '%s'", (int)st,
          msg);
    prob = sentinel;
    st   = strata_glm_problem_read(NULL, 0, MPI_COMM_NULL, msg, sizeof(msg), &prob);
    CHECK(st == STRATA_ERR_INVALID_PARAM && prob == sentinel &&
          strstr(msg, "no file name") != NULL, "path NULL: status %d, message '%s'", (int)st,
          msg);
}

/*
 * Without MPI (MPI_COMM_NULL, no MPI_Init): strata_glm_problem_create refuses row
 * offsets that do not start at 0 or that decrease (before: accepted, and the
 * trainer read past the entries), and every method trains (before: L-BFGS and
 * Newton called MPI_Comm_rank, and the program aborted), l1-logistic with method
 * auto too (its choice called MPI_Comm_size, and the program aborted).
 */
static void t_serial_train(void)
{
    static const int64_t bad[2][3] = {{0, 3, 2}, {1, 2, 3}};
    static const int methods[3] = {STRATA_GLM_METHOD_CD, STRATA_GLM_METHOD_LBFGS,
                                   STRATA_GLM_METHOD_NEWTON};
    enum { N = 200, D = 5 };
    int64_t indptr[N + 1];
    uint32_t indices[N * D];
    double values[N * D], y[N];
    strata_glm_problem_t *prob = NULL;
    strata_glm_model_t *model;
    strata_glm_param_t p;
    strata_status_t st;
    char msg[512];
    int i, j, k;

    for (k = 0; k < 2; k++) {
        uint32_t idx[3] = {0, 1, 2};
        double val[3] = {1, 1, 1}, lab[2] = {1, -1};

        st = strata_glm_problem_create(2, 4, bad[k], idx, val, lab, 0, MPI_COMM_NULL, msg,
                                       sizeof(msg), &prob);
        CHECK(st == STRATA_ERR_INVALID_PARAM && strstr(msg, "indptr") != NULL,
              "indptr {%lld, %lld, %lld}: status %d, '%s' (expected refused)",
              (long long)bad[k][0], (long long)bad[k][1], (long long)bad[k][2], (int)st, msg);
        if (st == STRATA_OK) {
            strata_glm_problem_free(prob);
        }
    }
    for (i = 0; i <= N; i++) {
        indptr[i] = (int64_t)i * D;
    }
    for (i = 0; i < N; i++) {
        double z = 0;

        for (j = 0; j < D; j++) {
            indices[i * D + j] = (uint32_t)j;
            values[i * D + j]  = (double)((i * 7 + j * 3) % 11) / 11.0 - 0.4;
            z += values[i * D + j] * (j % 2 ? 1.0 : -0.5);
        }
        y[i] = (z + 0.1 * ((i % 5) - 2) > 0) ? 1 : -1;
    }
    st = strata_glm_problem_create(N, D, indptr, indices, values, y, 0, MPI_COMM_NULL, msg,
                                   sizeof(msg), &prob);
    CHECK(st == STRATA_OK, "dense problem: status %d: %s", (int)st, msg);
    for (k = 0; st == STRATA_OK && k < 4; k++) {
        strata_glm_param_default(&p);
        p.method  = (k < 3) ? methods[k] : STRATA_GLM_METHOD_AUTO;
        p.solver  = (k < 3) ? p.solver : "l1-logistic";   /* auto: the serial L1 solver */
        p.lambda  = 1e-2;
        p.verbose = 0;
        model     = NULL;
        st        = strata_glm_train(prob, &p, MPI_COMM_NULL, msg, sizeof(msg), &model);
        CHECK(st == STRATA_OK && model != NULL, "%s, method %d without MPI: status %d: %s",
              p.solver, p.method, (int)st, msg);
        strata_glm_model_free(model);
        st = STRATA_OK;
    }
    strata_glm_problem_free(prob);
}

/*
 * The C API's misuse, each an error and no crash, hang or wrong model (helper-28's
 * review): the accessors of a NULL problem; a regression flag of 2 (true: before,
 * it slipped past the model/data check, and a classifier trained on real targets);
 * a communicator of MPI before MPI_Init (before: an abort in MPI); a GPU run without
 * MPI (MPI_COMM_NULL; before: an abort in MPI_Comm_split_type); with MPI, training
 * on a communicator other than the problem's (before: STRATA_OK and a different wrong
 * model on every rank). Cross-validation and the searches of C refuse both as training
 * does (before: strata_glm_find_cost and _find_cost_epsilon aborted in MPI_Type_size
 * before MPI_Init; cross-validation on MPI_COMM_SELF trained every fold, then failed
 * with "cannot compute the metrics: invalid parameter").
 */
/*
 * An intercommunicator (the two halves of the world) is STRATA_ERR_UNSUPPORTED from
 * every collective, on every rank, naming it (before: MPI_ERR_BUFFER's abort in the
 * first sum in place; under MPI_ERRORS_RETURN, a crash).
 */
static void t_intercomm(const t_set_t *s, const strata_glm_problem_t *prob)
{
    strata_glm_problem_t *made = NULL;
    strata_glm_model_t *model = NULL, *alone = NULL;
    strata_glm_metrics_t met;
    strata_glm_param_t p;
    strata_status_t st[7];
    char msg[7][T_MSG_LEN];
    int64_t counts[2];
    MPI_Comm half, inter;
    double best_c;
    int lower = t_rank < t_size / 2, k;

    strata_glm_param_default(&p);
    st[0] = strata_glm_train(prob, &p, MPI_COMM_NULL, msg[0], sizeof(msg[0]), &alone);
    CHECK(st[0] == STRATA_OK, "train alone: status %d, '%s'", (int)st[0], msg[0]);
    MPI_Comm_split(MPI_COMM_WORLD, lower, t_rank, &half);
    MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, lower ? t_size / 2 : 0, 41, &inter);
    for (k = 0; k < 7; k++) {
        msg[k][0] = '\0';
    }
    st[0] = strata_glm_problem_create(s->n, T_COLS, s->indptr, s->indices, s->values, s->y, 0,
                                      inter, msg[0], sizeof(msg[0]), &made);
    st[1] = strata_glm_train(prob, &p, inter, msg[1], sizeof(msg[1]), &model);
    st[2] = strata_glm_cross_validate(prob, &p, 3, 0, inter, msg[2], sizeof(msg[2]), NULL,
                                      NULL, &met);
    st[3] = strata_glm_find_cost(prob, &p, 3, 0, 4, inter, msg[3], sizeof(msg[3]), &best_c,
                                 &met, NULL);
    st[4] = strata_glm_problem_classes(prob, inter, counts, NULL);
    st[5] = strata_glm_problem_read("no-such-file", 0, inter, msg[5], sizeof(msg[5]), &made);
    st[6] = (alone != NULL) ? strata_glm_evaluate(alone, prob, inter, &met)
                            : STRATA_ERR_UNSUPPORTED;
    for (k = 0; k < 7; k++) {
        CHECK(st[k] == STRATA_ERR_UNSUPPORTED && (k == 4 || k == 5 || k == 6 ||
                                                  strstr(msg[k], "intercommunicator") != NULL),
              "an intercommunicator, call %d: status %d, '%s'", k, (int)st[k],
              (k == 4 || k == 6) ? "" : msg[k]);
    }
    CHECK(made == NULL && model == NULL, "an intercommunicator: a result was set");
    strata_glm_model_free(alone);
    MPI_Comm_free(&inter);
    MPI_Comm_free(&half);
}

/*
 * Communicators MPI refuses, under MPI_ERRORS_RETURN on MPI_COMM_WORLD (where Open MPI
 * reports an invalid handle): a zeroed MPI_Comm is STRATA_ERR_MPI from every
 * collective, naming the communicator (before: STRATA_ERR_NOT_INITIALIZED, "MPI is not
 * initialized", from problem_create, train, cross-validation and the searches).
 */
static void t_bad_comms(const t_set_t *s)
{
    strata_glm_problem_t *prob, *made = NULL;
    strata_glm_model_t *model = NULL;
    strata_glm_metrics_t met;
    strata_glm_param_t p;
    strata_status_t st[6];
    char msg[6][T_MSG_LEN];
    MPI_Errhandler world_eh;
    int64_t counts[2];
    MPI_Comm zero;
    double best_c;
    int k;

    memset(&zero, 0, sizeof(zero));
    prob = t_problem(s, 0, s->n, 0, MPI_COMM_NULL);
    if (prob == NULL) {
        return;
    }
    strata_glm_param_default(&p);
    MPI_Comm_get_errhandler(MPI_COMM_WORLD, &world_eh);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    for (k = 0; k < 6; k++) {
        msg[k][0] = '\0';
    }
    st[0] = strata_glm_problem_create(s->n, T_COLS, s->indptr, s->indices, s->values, s->y, 0,
                                      zero, msg[0], sizeof(msg[0]), &made);
    st[1] = strata_glm_train(prob, &p, zero, msg[1], sizeof(msg[1]), &model);
    st[2] = strata_glm_cross_validate(prob, &p, 3, 0, zero, msg[2], sizeof(msg[2]), NULL, NULL,
                                      &met);
    st[3] = strata_glm_find_cost(prob, &p, 3, 0, 4, zero, msg[3], sizeof(msg[3]), &best_c, &met,
                                 NULL);
    st[4] = strata_glm_problem_classes(prob, zero, counts, NULL);
    st[5] = strata_glm_problem_read("no-such-file", 0, zero, msg[5], sizeof(msg[5]), &made);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, world_eh);
    MPI_Errhandler_free(&world_eh);
    for (k = 0; k < 6; k++) {
        CHECK(st[k] == STRATA_ERR_MPI && strstr(msg[k], "not initialized") == NULL,
              "a zeroed communicator handle, call %d: status %d, '%s'", k, (int)st[k], msg[k]);
    }
    CHECK(made == NULL && model == NULL, "a zeroed communicator handle: a result was set");
    if (t_size >= 2) {
        t_intercomm(s, prob);
    }
    strata_glm_problem_free(prob);
}

static void t_api_misuse(void)
{
    strata_glm_problem_t *prob, *real;
    strata_glm_model_t *model = NULL;
    strata_glm_metrics_t met;
    strata_glm_param_t p;
    strata_status_t st;
    int64_t counts[2], lo, hi;
    double best_c, best_eps;
    char msg[T_MSG_LEN] = "";
    t_set_t s;

    t_make_set(&s, 5);
    if (!t_mpi) {
        CHECK(strata_glm_problem_rows(NULL) == 0 && strata_glm_problem_rows_global(NULL) == 0 &&
              strata_glm_problem_cols(NULL) == 0 && strata_glm_problem_prec(NULL) == 0,
              "the accessors of a NULL problem");
        real = t_problem(&s, 0, s.n, 2, MPI_COMM_NULL);   /* regression = 2: true */
        strata_glm_param_default(&p);
        p.solver = "logistic";
        st = (real != NULL) ? strata_glm_train(real, &p, MPI_COMM_NULL, msg, sizeof(msg), &model)
                            : STRATA_ERR_INVALID_PARAM;
        CHECK(st == STRATA_ERR_INVALID_PARAM && strstr(msg, "classification model") != NULL,
              "logistic on regression = 2 data: status %d, '%s'", (int)st, msg);
        strata_glm_model_free(model);
        model = NULL;
        /* MPI_COMM_WORLD without MPI_Init */
        st = strata_glm_problem_create(s.n, T_COLS, s.indptr, s.indices, s.values, s.y, 0,
                                       MPI_COMM_WORLD, msg, sizeof(msg), &prob);
        CHECK(st == STRATA_ERR_NOT_INITIALIZED, "problem_create on MPI_COMM_WORLD before "
              "MPI_Init: status %d, '%s'", (int)st, msg);
        prob = t_problem(&s, 0, s.n, 0, MPI_COMM_NULL);
        st   = (prob != NULL) ? strata_glm_train(prob, &p, MPI_COMM_WORLD, msg, sizeof(msg),
                                                 &model) : STRATA_ERR_NOT_INITIALIZED;
        CHECK(st == STRATA_ERR_NOT_INITIALIZED, "train on MPI_COMM_WORLD before MPI_Init: "
              "status %d, '%s'", (int)st, msg);
        strata_glm_model_free(model);
        model = NULL;
        if (prob != NULL && real != NULL) {
            st = strata_glm_cross_validate(prob, &p, 3, 0, MPI_COMM_WORLD, msg, sizeof(msg),
                                           NULL, NULL, &met);
            CHECK(st == STRATA_ERR_NOT_INITIALIZED, "cross_validate on MPI_COMM_WORLD before "
                  "MPI_Init: status %d, '%s'", (int)st, msg);
            st = strata_glm_find_cost(prob, &p, 3, 0, 4, MPI_COMM_WORLD, msg, sizeof(msg),
                                      &best_c, &met, NULL);
            CHECK(st == STRATA_ERR_NOT_INITIALIZED, "find_cost on MPI_COMM_WORLD before "
                  "MPI_Init: status %d, '%s'", (int)st, msg);
            p.solver = "sqsvr";
            st = strata_glm_find_cost_epsilon(real, &p, 3, 0, 0, MPI_COMM_WORLD, msg,
                                              sizeof(msg), &best_c, &best_eps, &met, NULL);
            CHECK(st == STRATA_ERR_NOT_INITIALIZED, "find_cost_epsilon on MPI_COMM_WORLD "
                  "before MPI_Init: status %d, '%s'", (int)st, msg);
            p.solver = "logistic";
        }
        /* a GPU run without MPI: a model, or "no GPU"; not an abort */
        p.gpu = 1;
        st    = (prob != NULL) ? strata_glm_train(prob, &p, MPI_COMM_NULL, msg, sizeof(msg),
                                                  &model) : STRATA_OK;
        CHECK(st == STRATA_OK || st == STRATA_ERR_UNSUPPORTED, "--gpu without MPI: status "
              "%d, '%s'", (int)st, msg);
        strata_glm_model_free(model);
        strata_glm_problem_free(prob);
        strata_glm_problem_free(real);
        return;
    }
    t_bad_comms(&s);
    if (t_size < 2) {
        return;
    }
    t_block(s.n, 0, &lo, &hi);
    prob = t_problem(&s, lo, hi, 0, t_comm);
    strata_glm_param_default(&p);
    st = (prob != NULL) ? strata_glm_train(prob, &p, MPI_COMM_SELF, msg, sizeof(msg), &model)
                        : STRATA_ERR_INVALID_PARAM;
    CHECK(st == STRATA_ERR_INVALID_PARAM && strstr(msg, "another communicator") != NULL,
          "a problem of MPI_COMM_WORLD trained on MPI_COMM_SELF: status %d, '%s'", (int)st, msg);
    strata_glm_model_free(model);
    model = NULL;
    st = (prob != NULL) ? strata_glm_cross_validate(prob, &p, 3, 0, MPI_COMM_SELF, msg,
                                                    sizeof(msg), NULL, NULL, &met)
                        : STRATA_ERR_INVALID_PARAM;
    CHECK(st == STRATA_ERR_INVALID_PARAM && strstr(msg, "another communicator") != NULL,
          "... cross-validated on MPI_COMM_SELF: status %d, '%s'", (int)st, msg);
    st = (prob != NULL) ? strata_glm_find_cost(prob, &p, 3, 0, 4, MPI_COMM_SELF, msg,
                                               sizeof(msg), &best_c, &met, NULL)
                        : STRATA_ERR_INVALID_PARAM;
    CHECK(st == STRATA_ERR_INVALID_PARAM && strstr(msg, "another communicator") != NULL,
          "... its C searched on MPI_COMM_SELF: status %d, '%s'", (int)st, msg);
    real     = t_problem(&s, lo, hi, 1, t_comm);
    p.solver = "sqsvr";
    st = (real != NULL) ? strata_glm_find_cost_epsilon(real, &p, 3, 0, 0, MPI_COMM_SELF, msg,
                                                       sizeof(msg), &best_c, &best_eps, &met,
                                                       NULL)
                        : STRATA_ERR_INVALID_PARAM;
    CHECK(st == STRATA_ERR_INVALID_PARAM && strstr(msg, "another communicator") != NULL,
          "a regression problem of MPI_COMM_WORLD, its C and epsilon searched on "
          "MPI_COMM_SELF: status %d, '%s'", (int)st, msg);
    strata_glm_problem_free(real);
    strata_glm_param_default(&p);
    st = (prob != NULL) ? strata_glm_train(prob, &p, MPI_COMM_NULL, msg, sizeof(msg), &model)
                        : STRATA_ERR_INVALID_PARAM;
    CHECK(st == STRATA_ERR_INVALID_PARAM, "... on MPI_COMM_NULL: status %d, '%s'", (int)st, msg);
    strata_glm_model_free(model);
    st = (prob != NULL) ? strata_glm_problem_classes(prob, MPI_COMM_NULL, counts, NULL)
                        : STRATA_ERR_INVALID_PARAM;
    CHECK(st == STRATA_ERR_INVALID_PARAM, "classes of it on MPI_COMM_NULL: status %d", (int)st);
    strata_glm_problem_free(prob);
}

/* ---- MPI calls that fail: this program's MPI_Allreduce, MPI_Bcast and MPI_Allgather
   (the library's resolve to them) fail the t_fail_at-th call on t_fail_comm ---- */

static MPI_Comm t_fail_comm = MPI_COMM_NULL;
static long     t_fail_at, t_fail_calls;

static int t_fail_now(MPI_Comm comm)
{
    int same = MPI_UNEQUAL;

    if (t_fail_comm == MPI_COMM_NULL || comm == MPI_COMM_NULL) {
        return 0;
    }
    PMPI_Comm_compare(comm, t_fail_comm, &same);
    if (same != MPI_IDENT || ++t_fail_calls != t_fail_at) {
        return 0;
    }
    MPI_Comm_call_errhandler(comm, MPI_ERR_OTHER);   /* (returns: MPI_ERRORS_RETURN) */
    return 1;
}

int MPI_Allreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op,
                  MPI_Comm comm)
{
    return t_fail_now(comm) ? MPI_ERR_OTHER
                            : PMPI_Allreduce(sbuf, rbuf, count, type, op, comm);
}

int MPI_Bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm)
{
    return t_fail_now(comm) ? MPI_ERR_OTHER : PMPI_Bcast(buf, count, type, root, comm);
}

int MPI_Allgather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                  MPI_Datatype rtype, MPI_Comm comm)
{
    return t_fail_now(comm) ? MPI_ERR_OTHER
                            : PMPI_Allgather(sbuf, scount, stype, rbuf, rcount, rtype, comm);
}

static void t_watchdog(int sig)
{
    static const char line[] = "test_glm_io: FAIL: a collective call hung (60 s)\n";

    (void)sig;
    if (write(2, line, sizeof(line) - 1) < 0) {
        _exit(1);
    }
    _exit(1);
}

/*
 * Parameters not the same on every rank (a larger lambda, fewer rounds, another solver,
 * another method, a lambda one rank refuses, NULL on one rank): STRATA_ERR_INVALID_PARAM
 * on every rank naming what differs (before: the ranks parted ways: a hang, or
 * MPI_ERR_TRUNCATE's abort, and one rank's model). A thread count of its own is
 * harmless: the same model on every rank.
 */
static void t_param_disagree(void)
{
    static const char *what[] = {"lambda", "max_rounds", "solver", "method", "lambda",
                                 "NULL", "threads"};
    strata_glm_problem_t *prob;
    strata_glm_model_t *model;
    strata_glm_param_t p;
    strata_status_t st;
    char msg[T_MSG_LEN], path[600];
    int64_t indptr[T_ROWS + 1], lo, hi, i;
    double w[2];
    int last = (t_rank == t_size - 1), k;
    t_set_t s;

    t_make_set(&s, 31);
    t_block(s.n, 0, &lo, &hi);
    for (i = lo; i <= hi; i++) {
        indptr[i - lo] = s.indptr[i] - s.indptr[lo];
    }
    prob = t_problem(&s, lo, hi, 0, t_comm);
    if (prob == NULL) {
        return;
    }
    signal(SIGALRM, t_watchdog);
    for (k = 0; k < (int)(sizeof(what) / sizeof(what[0])); k++) {
        strata_glm_param_default(&p);
        if (last) {
            p.lambda     = (k == 0) ? 10 * p.lambda : (k == 4) ? -1 : p.lambda;
            p.max_rounds = (k == 1) ? 2 : p.max_rounds;
            p.solver     = (k == 2) ? "svm" : p.solver;
            p.method     = (k == 3) ? STRATA_GLM_METHOD_NEWTON : p.method;
            p.threads    = (k == 6) ? 2 : p.threads;
        }
        model  = NULL;
        msg[0] = '\0';
        alarm(60);
        st = strata_glm_train(prob, (k == 5 && last) ? NULL : &p, t_comm, msg, sizeof(msg),
                              &model);
        alarm(0);
        if (k == 6) {
            w[0] = (model != NULL) ? strata_glm_model_weights(model)[0] : 0;
            w[1] = -w[0];
            MPI_Allreduce(MPI_IN_PLACE, w, 2, MPI_DOUBLE, MPI_MAX, t_comm);
            CHECK(st == STRATA_OK && w[0] == -w[1], "threads on one rank only: status %d "
                  "'%s', weights not the same on every rank", (int)st, msg);
        } else {
            CHECK(st == STRATA_ERR_INVALID_PARAM && model == NULL &&
                          strstr(msg, "not the same on every rank") != NULL &&
                          strstr(msg, k == 5 ? "NULL" : what[k]) != NULL,
                  "%s on one rank only: status %d, '%s'", what[k], (int)st, msg);
        }
        strata_glm_model_free(model);
    }
    /* a problem made or read for regression on one rank only, read in 32 bits or from
       no file on one rank only (before: MPI_ERR_TRUNCATE's abort in the classes' sums;
       one rank's refusal alone, a hang) */
    snprintf(path, sizeof(path), "%s/disagree.svm", t_dir);
    if (t_rank == 0) {
        t_write(path, "1 1:0.5\n-1 2:1\n1 1:1\n", 21);
    }
    MPI_Barrier(t_comm);
    for (k = 0; k < 4; k++) {
        strata_glm_problem_t *made = NULL;

        msg[0] = '\0';
        alarm(60);
        st = (k == 0) ? strata_glm_problem_create(hi - lo, T_COLS, indptr,
                                                  s.indices + s.indptr[lo],
                                                  s.values + s.indptr[lo], s.y + lo, last,
                                                  t_comm, msg, sizeof(msg), &made)
           : (k == 1) ? strata_glm_problem_read(path, last, t_comm, msg, sizeof(msg), &made)
           : (k == 2) ? strata_glm_problem_read_prec(path, 0, last ? 32 : 0, t_comm, msg,
                                                     sizeof(msg), &made)
                      : strata_glm_problem_read(last ? NULL : path, 0, t_comm, msg,
                                                sizeof(msg), &made);
        alarm(0);
        CHECK(st == STRATA_ERR_INVALID_PARAM && made == NULL &&
                      strstr(msg, "not the same on every rank") != NULL,
              "problem %d, an argument of one rank's own: status %d, '%s'", k, (int)st, msg);
        strata_glm_problem_free(made);
    }
    MPI_Barrier(t_comm);
    if (t_rank == 0) {
        unlink(path);
    }
    /* evaluation with a model of each rank's own (before: STRATA_OK, the metrics of no
       one model) */
    {
        strata_glm_problem_t *alone = t_problem(&s, 0, s.n, 0, MPI_COMM_NULL);
        strata_glm_metrics_t met;

        strata_glm_param_default(&p);
        p.lambda = last ? 1 : p.lambda;
        model    = NULL;
        st = (alone != NULL) ? strata_glm_train(alone, &p, MPI_COMM_NULL, msg, sizeof(msg),
                                                &model)
                             : STRATA_ERR_INVALID_PARAM;
        CHECK(st == STRATA_OK, "a model alone: status %d, '%s'", (int)st, msg);
        alarm(60);
        st = (model != NULL) ? strata_glm_evaluate(model, prob, t_comm, &met)
                             : STRATA_ERR_INVALID_PARAM;
        alarm(0);
        CHECK(st == STRATA_ERR_INVALID_PARAM, "evaluation, a model of one rank's own: "
              "status %d", (int)st);
        strata_glm_model_free(model);
        strata_glm_problem_free(alone);
    }
    /* cross-validation: fewer rounds, or more folds, on one rank; a search: a lambda
       one rank refuses (before: MPI_ERR_TRUNCATE's abort, a hang) */
    for (k = 0; k < 3; k++) {
        strata_glm_metrics_t met;
        double best_c;

        strata_glm_param_default(&p);
        p.max_rounds = (last && k == 0) ? 2 : p.max_rounds;
        p.lambda     = (last && k == 2) ? -1 : p.lambda;
        msg[0]       = '\0';
        alarm(60);
        st = (k < 2) ? strata_glm_cross_validate(prob, &p, (last && k == 1) ? 4 : 3, 0, t_comm,
                                                 msg, sizeof(msg), NULL, NULL, &met)
                     : strata_glm_find_cost(prob, &p, 3, 0, 4, t_comm, msg, sizeof(msg),
                                            &best_c, &met, NULL);
        alarm(0);
        CHECK(st == STRATA_ERR_INVALID_PARAM &&
                      strstr(msg, k == 0 ? "max_rounds differs" : k == 1 ? "arguments (folds"
                                                                         : "lambda differs"),
              "%s on one rank only: status %d, '%s'", k == 0 ? "cross-validation's max_rounds"
              : k == 1 ? "cross-validation's folds" : "a search's lambda", (int)st, msg);
    }
    strata_glm_problem_free(prob);
}

/*
 * A collective failing under MPI_ERRORS_RETURN: its n-th call on the communicator, for
 * every n the call makes, in trainings of each model kind and method, cross-validation,
 * a search of C, evaluation and problem_create: STRATA_ERR_MPI on every rank, saying
 * so, nothing set, and no MPI call after the failed one (before: the failure was
 * ignored: STRATA_OK and a model of one rank's sums, or another error).
 */
static void t_mpi_fails(void)
{
    static const struct {
        const char *solver;
        int         method, what;   /* what: 0 train, 1 cross-validate, 2 find_cost,
                                       3 evaluate, 4 problem_create, 5 problem_read,
                                       6 train with a checkpoint every round */
    } cases[] = {
        {"logistic", STRATA_GLM_METHOD_AUTO, 0}, {"logistic", STRATA_GLM_METHOD_CD, 0},
        {"svm", STRATA_GLM_METHOD_CD, 0}, {"logistic", STRATA_GLM_METHOD_NEWTON, 0},
        {"logistic", STRATA_GLM_METHOD_LBFGS, 0}, {"lasso", STRATA_GLM_METHOD_AUTO, 0},
        {"l1-logistic", STRATA_GLM_METHOD_AUTO, 0}, {"svr", STRATA_GLM_METHOD_AUTO, 0},
        {"logistic", STRATA_GLM_METHOD_AUTO, 1}, {"logistic", STRATA_GLM_METHOD_AUTO, 2},
        {"logistic", STRATA_GLM_METHOD_AUTO, 3}, {"logistic", STRATA_GLM_METHOD_AUTO, 4},
        {"logistic", STRATA_GLM_METHOD_AUTO, 5}, {"logistic", STRATA_GLM_METHOD_CD, 6},
        {"logistic", STRATA_GLM_METHOD_NEWTON, 6}, {"lasso", STRATA_GLM_METHOD_AUTO, 6}
    };
    strata_glm_problem_t *prob[2], *made;
    strata_glm_model_t *model, *trained = NULL;
    strata_glm_metrics_t met;
    strata_glm_param_t p;
    strata_status_t st;
    char msg[T_MSG_LEN];
    MPI_Comm comm;
    int64_t indptr[T_ROWS + 1], lo, hi, i;
    char data[600], ckpt[600];
    double best_c = -1;
    int entries;
    long n, calls;
    int k, reg;
    t_set_t s;

    t_make_set(&s, 57);
    t_block(s.n, 0, &lo, &hi);
    for (i = lo; i <= hi; i++) {
        indptr[i - lo] = s.indptr[i] - s.indptr[lo];
    }
    MPI_Comm_dup(t_comm, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    prob[0] = t_problem(&s, lo, hi, 0, comm);
    prob[1] = t_problem(&s, lo, hi, 1, comm);
    snprintf(data, sizeof(data), "%s/mpi-fails.svm", t_dir);
    snprintf(ckpt, sizeof(ckpt), "%s/mpi-fails.ckpt", t_dir);
    if (t_rank == 0) {
        t_write(data, "1 1:0.5 3:1\n-1 2:1\n1 1:1 2:-1\n-1 3:0.25\n", 40);
    }
    MPI_Barrier(comm);
    strata_glm_param_default(&p);
    if (prob[0] == NULL || prob[1] == NULL ||
        strata_glm_train(prob[0], &p, comm, msg, sizeof(msg), &trained) != STRATA_OK) {
        CHECK(0, "no problem or model to fail MPI calls with");
        goto out;
    }
    signal(SIGALRM, t_watchdog);
    for (k = 0; k < (int)(sizeof(cases) / sizeof(cases[0])); k++) {
        reg = !strcmp(cases[k].solver, "lasso") || !strcmp(cases[k].solver, "svr");
        for (n = 1;; n++) {
            strata_glm_param_default(&p);
            p.solver     = cases[k].solver;
            p.method     = cases[k].method;
            p.max_rounds = 20;
            model        = NULL;
            made         = NULL;
            msg[0]       = '\0';
            t_fail_calls = 0;
            t_fail_at    = n;
            t_fail_comm  = comm;
            alarm(60);
            switch (cases[k].what) {
            case 0:
                st = strata_glm_train(prob[reg], &p, comm, msg, sizeof(msg), &model);
                break;
            case 1:
                st = strata_glm_cross_validate(prob[0], &p, 3, 0, comm, msg, sizeof(msg), NULL,
                                               NULL, &met);
                break;
            case 2:
                best_c = -1;
                st     = strata_glm_find_cost(prob[0], &p, 3, 0, 2, comm, msg, sizeof(msg),
                                              &best_c, &met, NULL);
                break;
            case 3:
                st = strata_glm_evaluate(trained, prob[0], comm, &met);
                strcpy(msg, "an MPI call");   /* (evaluate has no message) */
                break;
            case 5:
                st = strata_glm_problem_read(data, 0, comm, msg, sizeof(msg), &made);
                break;
            case 6:
                p.checkpoint       = ckpt;
                p.checkpoint_every = 1;
                st = strata_glm_train(prob[reg], &p, comm, msg, sizeof(msg), &model);
                break;
            default:
                st = strata_glm_problem_create(hi - lo, T_COLS, indptr, s.indices + s.indptr[lo],
                                               s.values + s.indptr[lo], s.y + lo, 0, comm, msg,
                                               sizeof(msg), &made);
                break;
            }
            alarm(0);
            t_fail_comm = MPI_COMM_NULL;
            calls       = t_fail_calls;
            if (calls < n) {   /* the call made fewer: it ran whole */
                strata_glm_model_free(model);
                strata_glm_problem_free(made);
                break;
            }
            CHECK(st == STRATA_ERR_MPI && model == NULL && made == NULL &&
                          strstr(msg, "an MPI call") != NULL && (cases[k].what != 2 ||
                                                                 best_c == -1),
                  "%s, method %d, call %d: MPI call %ld failed: status %d, '%s'",
                  cases[k].solver, cases[k].method, cases[k].what, n, (int)st, msg);
            CHECK(calls == n, "%s, method %d, call %d: %ld MPI calls after call %ld, which "
                  "failed", cases[k].solver, cases[k].method, cases[k].what, calls - n, n);
            strata_glm_model_free(model);
            strata_glm_problem_free(made);
            if (st != STRATA_ERR_MPI || calls != n) {
                break;   /* (one report a case) */
            }
        }
    }
out:
    MPI_Barrier(comm);
    if (t_rank == 0) {   /* the data and at most the checkpoint: no temporary left */
        unlink(data);
        unlink(ckpt);
        entries = t_count_entries_named(t_dir, "mpi-fails");
        CHECK(entries == 0, "failed checkpoints left %d temporary files", entries);
    }
    strata_glm_model_free(trained);
    strata_glm_problem_free(prob[0]);
    strata_glm_problem_free(prob[1]);
    MPI_Comm_free(&comm);
}

int main(int argc, char **argv)
{
    const char *tmp;
    long fails;

    if (argc == 4 && !strcmp(argv[1], "--resave")) {
        return t_resave(argv[2], argv[3]);
    }
    if (argc == 2 && !strcmp(argv[1], "--mpi")) {
        t_mpi = 1;
    } else if (argc != 1) {
        fprintf(stderr, "usage: test_glm_io [--mpi | --resave IN OUT]\n");
        return 2;
    }
    if (t_mpi) {
        MPI_Init(&argc, &argv);
        MPI_Comm_rank(MPI_COMM_WORLD, &t_rank);
        MPI_Comm_size(MPI_COMM_WORLD, &t_size);
        t_comm = MPI_COMM_WORLD;
        t_self = MPI_COMM_SELF;
    }
    if (t_rank == 0) {
        tmp = getenv("TMPDIR");
        snprintf(t_dir, sizeof(t_dir), "%s/strata-test-glm-io.XXXXXX",
                 tmp != NULL && tmp[0] != '\0' ? tmp : "/tmp");
        if (mkdtemp(t_dir) == NULL) {
            fprintf(stderr, "test_glm_io: mkdtemp %s: %s\n", t_dir, strerror(errno));
            t_dir[0] = '\0';
        }
    }
    if (t_mpi) {
        MPI_Bcast(t_dir, (int)sizeof(t_dir), MPI_CHAR, 0, MPI_COMM_WORLD);
    }
    if (t_dir[0] == '\0') {
        if (t_mpi) {
            MPI_Finalize();
        }
        return 1;
    }

    if (!t_mpi) {
        t_serial_train();
        t_roundtrip();
        t_malformed();
        t_atomic();
        t_read_prec();
    }
    t_api_misuse();
    if (t_size >= 2) {
        t_param_disagree();
    }
    if (t_mpi) {
        t_mpi_fails();
    }
    t_predict_edges();
    t_metrics();
    {
        t_set_t s;

        t_make_set(&s, 77);
        t_predict_float(&s);
    }

    if (t_mpi) {
        MPI_Barrier(MPI_COMM_WORLD);
    }
    t_rmdir();
    fails = t_nfail;
    if (t_mpi) {
        MPI_Allreduce(&t_nfail, &fails, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    }
    if (t_rank == 0) {
        printf("test_glm_io: %s: %d rank(s), %ld checks on rank 0, %ld failed\n",
               fails == 0 ? "PASS" : "FAIL", t_size, t_ncheck, fails);
    }
    if (t_mpi) {
        MPI_Finalize();
    }
    return fails == 0 ? 0 : 1;
}
