/*
 * strata-gen: synthetic datasets for the GLM solver, deterministic by --seed.
 *
 *   criteo      Criteo-like click logs: 13 heavy-tailed counts (log1p, some
 *               missing) and 26 categorical fields with their own vocabulary sizes
 *               and Zipf-distributed ids, hashed into --cols columns; labels from
 *               a planted logistic model whose intercept is calibrated to
 *               --click-rate.
 *   dense       dense classification: Gaussian features, planted linear model,
 *               labels flipped with probability --noise.
 *   regression  dense or sparse (--density) Gaussian features, y = w.x + noise.
 *
 * Randomness: every row draws from its own xoshiro256** generator, seeded through
 * SplitMix64 from (seed, stream, row), so a row does not depend on how many draws
 * the rows before it made, and the held-out set (its own stream) is independent
 * of the training rows. The planted model has its own stream too.
 *
 * Values are written with a fixed number of decimals; the binary output stores
 * what the text reader would read from that text (the same parser, the same
 * precision), so both formats load to the same dataset.
 *
 * convert (not synthetic): reads a dataset in either format, its labels as real
 * targets so that each is kept as it is, and writes it in the other format (or -f's).
 * Text is written with the shortest decimals that read back bit for bit; binary
 * labels are stored as classes where they are all -1/+1 or all 0/1 (0/1: version 2's
 * flag), as regression targets otherwise: every reader reads both back as it reads
 * the text (solver/README.md, "Binary CSR format").
 *
 * Zipf sampling: rejection-inversion (W. Hormann, G. Derflinger, "Rejection-
 * inversion to generate variates from monotone discrete distributions", ACM
 * TOMACS 6(3), 1996): O(1) per draw whatever the vocabulary size.
 */
#include "config.h"

#include "st_glm_data.h"
#include "st_tool.h"
#include "st_stdout.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define GEN_NAME          "strata-gen"
#define GEN_NUMERIC       13
#define GEN_CATEGORICAL   26
#define GEN_CALIB_ROWS    65536
#define GEN_OUTBUF        (1 << 20)
#define GEN_PHI           0x9e3779b97f4a7c15ULL
#define GEN_CRITEO_MIN    1024
#define GEN_MAX_COLS      (1 << 24)
#define GEN_DENSE_MAX     (1 << 20)
/* dense --classes: at most this many (a weight vector each) */
#define GEN_MAX_CLASSES   1000

enum {
    GEN_STREAM_MODEL = 1,
    GEN_STREAM_CALIB,
    GEN_STREAM_TRAIN,
    GEN_STREAM_TEST
};

typedef enum {
    GEN_CRITEO = 0,
    GEN_DENSE,
    GEN_REGRESSION,
    GEN_CONVERT      /* not synthetic: a dataset from one format to the other */
} gen_kind_t;

static const char *const gen_kind_names[] = {"criteo", "dense", "regression", "convert"};

/* ---- Criteo-like fields ---- */

/* numeric: fraction missing, count scale and tail exponent (smaller: heavier) */
static const double gen_num_missing[GEN_NUMERIC] = {
    0.45, 0.00, 0.21, 0.22, 0.03, 0.22, 0.04, 0.00, 0.04, 0.45, 0.04, 0.77, 0.22
};
static const double gen_num_scale[GEN_NUMERIC] = {
    3, 100, 20, 7, 10000, 100, 15, 10, 100, 1, 3, 2, 8
};
static const double gen_num_alpha[GEN_NUMERIC] = {
    1.5, 1.1, 1.3, 1.6, 1.0, 1.2, 1.3, 1.5, 1.2, 2.0, 1.5, 1.6, 1.4
};

/* categorical: vocabulary sizes (those of the Criteo display-ads challenge) and
 * fraction missing */
static const int64_t gen_cat_vocab[GEN_CATEGORICAL] = {
    1460, 583, 10131227, 2202608, 305, 24, 12517, 633, 3, 93145, 5683, 8351593, 3194,
    27, 14992, 5461306, 10, 5652, 2173, 4, 7046547, 18, 15, 286181, 105, 142572
};
static const double gen_cat_missing[GEN_CATEGORICAL] = {
    0.00, 0.00, 0.03, 0.03, 0.00, 0.12, 0.00, 0.00, 0.00, 0.00, 0.00, 0.03, 0.00,
    0.00, 0.00, 0.03, 0.00, 0.00, 0.44, 0.44, 0.03, 0.76, 0.00, 0.03, 0.44, 0.44
};

/* planted logistic model: weight scales, fraction of categorical columns that matter */
#define GEN_NUM_WEIGHT   0.15
#define GEN_CAT_WEIGHT   0.5
#define GEN_CAT_DENSITY  0.3

/* ---- random numbers ---- */

typedef struct {
    uint64_t s[4];
} gen_rng_t;

static inline uint64_t gen_mix(uint64_t x)
{
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

static inline uint64_t gen_splitmix(uint64_t *x)
{
    *x += GEN_PHI;
    return gen_mix(*x);
}

static void gen_rng_seed(gen_rng_t *g, uint64_t seed, uint64_t stream, uint64_t row)
{
    uint64_t x = gen_mix(gen_mix(seed + stream * GEN_PHI) + row);
    int i;

    for (i = 0; i < 4; i++) {
        g->s[i] = gen_splitmix(&x);
    }
}

static inline uint64_t gen_rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

static inline uint64_t gen_next(gen_rng_t *g)
{
    uint64_t r = gen_rotl(g->s[1] * 5, 7) * 9, t = g->s[1] << 17;

    g->s[2] ^= g->s[0];
    g->s[3] ^= g->s[1];
    g->s[1] ^= g->s[2];
    g->s[0] ^= g->s[3];
    g->s[2] ^= t;
    g->s[3] = gen_rotl(g->s[3], 45);
    return r;
}

/* uniform in [0, 1) */
static inline double gen_uniform(gen_rng_t *g)
{
    return (double)(gen_next(g) >> 11) * 0x1p-53;
}

/* standard normal (Box-Muller; one of the pair) */
static inline double gen_normal(gen_rng_t *g)
{
    double u = 1.0 - gen_uniform(g), v = gen_uniform(g);

    return sqrt(-2.0 * log(u)) * cos(2.0 * M_PI * v);
}

/* ---- Zipf(n, s) on {1..n} by rejection-inversion ---- */

typedef struct {
    double  s;
    double  h_x1;     /* H(1.5) - 1 */
    double  h_n;      /* H(n + 0.5) */
    double  cut;      /* 2 - H^-1(H(2.5) - h(2)) */
    int64_t n;
} gen_zipf_t;

/* log1p(t)/t and expm1(t)/t, continuous at t = 0 */
static double gen_log1p_ratio(double t)
{
    return fabs(t) > 1e-8 ? log1p(t) / t : 1.0 - t / 2.0;
}

static double gen_expm1_ratio(double t)
{
    return fabs(t) > 1e-8 ? expm1(t) / t : 1.0 + t / 2.0;
}

/* H(x) = integral of t^-s from 1 to x; h(x) = x^-s */
static double gen_zipf_H(const gen_zipf_t *z, double x)
{
    double lx = log(x);

    return gen_expm1_ratio((1.0 - z->s) * lx) * lx;
}

static double gen_zipf_Hinv(const gen_zipf_t *z, double y)
{
    return exp(gen_log1p_ratio((1.0 - z->s) * y) * y);
}

static double gen_zipf_h(const gen_zipf_t *z, double x)
{
    return exp(-z->s * log(x));
}

static void gen_zipf_init(gen_zipf_t *z, int64_t n, double s)
{
    z->n    = n;
    z->s    = s;
    z->h_x1 = gen_zipf_H(z, 1.5) - 1.0;
    z->h_n  = gen_zipf_H(z, (double)n + 0.5);
    z->cut  = 2.0 - gen_zipf_Hinv(z, gen_zipf_H(z, 2.5) - gen_zipf_h(z, 2.0));
}

static int64_t gen_zipf_draw(const gen_zipf_t *z, gen_rng_t *g)
{
    for (;;) {
        double u = z->h_n + gen_uniform(g) * (z->h_x1 - z->h_n);
        double x = gen_zipf_Hinv(z, u);
        int64_t k = (int64_t)(x + 0.5);

        k = k < 1 ? 1 : (k > z->n ? z->n : k);
        if ((double)k - x <= z->cut || u >= gen_zipf_H(z, (double)k + 0.5) - gen_zipf_h(z, k)) {
            return k;
        }
    }
}

/* ---- options ---- */

typedef struct {
    gen_kind_t  kind;
    int64_t     rows;
    int64_t     cols;
    uint64_t    seed;
    int64_t     test_rows;
    const char *test_out;
    const char *in;      /* convert: the input */
    const char *out;
    int         bin;
    int         prec;
    double      click_rate;
    double      zipf;
    double      noise;
    double      density;
    int         classes;  /* dense: 2 (labels -1/+1), or more (labels 1..classes) */
    int         quiet;
    int         given_prec, given_click, given_zipf, given_noise, given_density, given_test_rows;
    int         given_classes;
    int         given_format;
} gen_opts_t;

enum {
    GEN_OPT_TEST_ROWS = 256,
    GEN_OPT_TEST_OUT,
    GEN_OPT_CLICK_RATE,
    GEN_OPT_ZIPF,
    GEN_OPT_NOISE,
    GEN_OPT_DENSITY,
    GEN_OPT_CLASSES,
    GEN_OPT_VERSION
};

static const struct option gen_long_opts[] = {
    {"rows",       required_argument, NULL, 'n'},
    {"cols",       required_argument, NULL, 'd'},
    {"seed",       required_argument, NULL, 's'},
    {"output",     required_argument, NULL, 'o'},
    {"format",     required_argument, NULL, 'f'},
    {"prec",       required_argument, NULL, 'p'},
    {"test-rows",  required_argument, NULL, GEN_OPT_TEST_ROWS},
    {"test-out",   required_argument, NULL, GEN_OPT_TEST_OUT},
    {"click-rate", required_argument, NULL, GEN_OPT_CLICK_RATE},
    {"zipf",       required_argument, NULL, GEN_OPT_ZIPF},
    {"noise",      required_argument, NULL, GEN_OPT_NOISE},
    {"density",    required_argument, NULL, GEN_OPT_DENSITY},
    {"classes",    required_argument, NULL, GEN_OPT_CLASSES},
    {"quiet",      no_argument,       NULL, 'q'},
    {"help",       no_argument,       NULL, 'h'},
    {"version",    no_argument,       NULL, GEN_OPT_VERSION},
    {NULL, 0, NULL, 0}
};

static void gen_usage(FILE *f)
{
    fprintf(f,
            "Usage: " GEN_NAME " KIND [OPTION]... [OUTPUT]\n"
            "       " GEN_NAME " convert [-f FMT] [-p P] [-q] [-o OUTPUT] INPUT [OUTPUT]\n"
            "Writes a synthetic dataset, the same bytes for the same options and seed; or\n"
            "converts a dataset between the svmlight text and the binary CSR format.\n"
            "KIND:\n"
            "  criteo      Criteo-like click logs: 13 log1p counts + 26 hashed categorical\n"
            "              fields, labels from a planted logistic model\n"
            "  dense       dense classification, planted linear model, label noise\n"
            "  regression  dense or sparse regression, planted model, Gaussian noise\n"
            "  convert     read INPUT (svm text or bin, told apart as strata-train does)\n"
            "              and write it to OUTPUT in the other format (or -f's): the same\n"
            "              rows, indices, values (64 bits: bit for bit) and labels, -1/+1\n"
            "              or 0/1 classes or real targets; takes -o, -f, -p and -q only\n"
            "Options:\n"
            "  -o, --output FILE     output file ('-': standard output, svm format only);\n"
            "                        or give it as the last argument\n"
            "  -n, --rows N          rows (default 100000)\n"
            "  -d, --cols N          columns (criteo: default 1048576, from %d to %d;\n"
            "                        dense: default 100, at most %d; regression: default\n"
            "                        100, at most %d)\n"
            "  -s, --seed S          seed, 0 to 2^64-1 (default 1)\n"
            "  -f, --format FMT      svm (svmlight text, default) or bin (Strata binary CSR);\n"
            "                        convert: default the format INPUT is not in\n"
            "  -p, --prec P          bin values in 32 or 64 bits (default 64; convert: 64 from\n"
            "                        text, the input's from bin); 32 rounds every value to\n"
            "                        the nearest float\n"
            "      --test-rows N     also write N held-out rows from the same model ...\n"
            "      --test-out FILE   ... to FILE (same format)\n"
            "      --click-rate R    criteo: fraction of clicks, 0 < R < 1 (default 0.03)\n"
            "      --zipf S          criteo: Zipf exponent of the ids, 1 < S <= 3 (default 1.1)\n"
            "      --noise X         dense: probability of a flipped label, 0 <= X < 0.5\n"
            "                        (default 0.1); regression: standard deviation of\n"
            "                        the noise, X >= 0 (default 0.1)\n"
            "      --density D       regression: fraction of nonzero features, 0 < D <= 1\n"
            "                        (default 1)\n"
            "      --classes K       dense: K classes, 2 to 1000 (default 2, labels -1/+1);\n"
            "                        K > 2: labels 1..K, the class of the largest of K\n"
            "                        planted margins (--noise: a class drawn at random)\n"
            "  -q, --quiet           no summary on standard output\n"
            "  -h, --help            this message\n"
            "      --version         print the version and exit\n"
            "Exit status: 0 ok, 1 a run-time error (I/O; convert: bad input data too),\n"
            "2 bad usage.\n",
            GEN_CRITEO_MIN, GEN_MAX_COLS, GEN_DENSE_MAX, GEN_MAX_COLS);
}

static const char *gen_opt_name(int val, char *buf, size_t len)
{
    const struct option *o;

    for (o = gen_long_opts; o->name != NULL; o++) {
        if (o->val == val) {
            if (val < 256) {
                snprintf(buf, len, "-%c/--%s", val, o->name);
            } else {
                snprintf(buf, len, "--%s", o->name);
            }
            return buf;
        }
    }
    snprintf(buf, len, "-%c", val);
    return buf;
}

__attribute__((format(printf, 1, 2)))
static void gen_usage_error(const char *fmt, ...)
{
    va_list ap;

    fprintf(stderr, GEN_NAME ": ");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\nTry '" GEN_NAME " --help'.\n");
    exit(2);
}

static int64_t gen_parse_int(int val, const char *arg, int64_t min, int64_t max)
{
    char name[32], *end;
    long long v;

    errno = 0;
    v = strtoll(arg, &end, 10);
    if (arg[0] == '\0' || *end != '\0' || errno != 0 || v < min || v > max) {
        gen_usage_error("%s: expected an integer from %lld to %lld, got '%s'",
                        gen_opt_name(val, name, sizeof(name)), (long long)min, (long long)max,
                        arg);
    }
    return v;
}

static double gen_parse_real(int val, const char *arg, double min, double max, int min_open,
                             int max_open)
{
    char name[32], *end;
    double v;

    errno = 0;
    v = strtod(arg, &end);
    if (arg[0] == '\0' || *end != '\0' || errno != 0 || !isfinite(v) ||
        (min_open ? v <= min : v < min) || (max_open ? v >= max : v > max)) {
        gen_usage_error("%s: expected a number in %c%g, %g%c, got '%s'",
                        gen_opt_name(val, name, sizeof(name)), min_open ? '(' : '[', min, max,
                        max_open ? ')' : ']', arg);
    }
    return v;
}

static void gen_parse_opts(int argc, char **argv, gen_opts_t *o)
{
    char name[32], *end;
    int c, k;

    memset(o, 0, sizeof(*o));
    if (argc < 2) {
        gen_usage_error("missing the dataset kind (criteo, dense, regression or convert)");
    }
    if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
        gen_usage(stdout);
        exit(0);
    }
    if (!strcmp(argv[1], "--version")) {
        printf(GEN_NAME " %s\n", PACKAGE_VERSION);
        exit(0);
    }
    for (k = 0; k < (int)(sizeof(gen_kind_names) / sizeof(gen_kind_names[0])); k++) {
        if (!strcmp(argv[1], gen_kind_names[k])) {
            break;
        }
    }
    if (k == (int)(sizeof(gen_kind_names) / sizeof(gen_kind_names[0]))) {
        gen_usage_error("unknown dataset kind '%s' (criteo, dense, regression or convert)",
                        argv[1]);
    }
    o->kind       = (gen_kind_t)k;
    o->rows       = 100000;
    o->cols       = o->kind == GEN_CRITEO ? (1 << 20) : 100;
    o->seed       = 1;
    o->prec       = 64;
    o->click_rate = 0.03;
    o->zipf       = 1.1;
    o->noise      = 0.1;
    o->density    = 1.0;
    o->classes    = 2;

    argc--;
    argv++;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":n:d:s:o:f:p:qh", gen_long_opts, NULL)) != -1) {
        /* an option that would do nothing is a mistake to report, not to ignore */
        if (o->kind == GEN_CONVERT && c != 'o' && c != 'f' && c != 'p' && c != 'q' &&
            c != 'h' && c != ':' && c != '?') {
            gen_usage_error("%s does nothing with convert (it is for the synthetic kinds: "
                            "criteo, dense, regression)", gen_opt_name(c, name, sizeof(name)));
        }
        switch (c) {
        case 'n':
            o->rows = gen_parse_int(c, optarg, 1, INT64_C(1) << 40);
            break;
        case 'd':
            o->cols = gen_parse_int(c, optarg, o->kind == GEN_CRITEO ? GEN_CRITEO_MIN : 1,
                                    o->kind == GEN_DENSE ? GEN_DENSE_MAX : GEN_MAX_COLS);
            break;
        case 's':
            errno = 0;
            o->seed = strtoull(optarg, &end, 10);
            if (optarg[0] < '0' || optarg[0] > '9' || *end != '\0' || errno != 0) {
                gen_usage_error("%s: expected an integer from 0 to 2^64-1, got '%s'",
                                gen_opt_name(c, name, sizeof(name)), optarg);
            }
            break;
        case 'o':
            o->out = optarg;
            break;
        case 'f':
            if (!strcmp(optarg, "svm")) {
                o->bin = 0;
            } else if (!strcmp(optarg, "bin")) {
                o->bin = 1;
            } else {
                gen_usage_error("%s: expected svm or bin, got '%s'",
                                gen_opt_name(c, name, sizeof(name)), optarg);
            }
            o->given_format = 1;
            break;
        case 'p':
            if (strcmp(optarg, "32") != 0 && strcmp(optarg, "64") != 0) {
                gen_usage_error("%s: expected 32 or 64, got '%s'",
                                gen_opt_name(c, name, sizeof(name)), optarg);
            }
            o->prec       = atoi(optarg);
            o->given_prec = 1;
            break;
        case GEN_OPT_TEST_ROWS:
            o->test_rows = gen_parse_int(c, optarg, 1, INT64_C(1) << 40);
            o->given_test_rows = 1;
            break;
        case GEN_OPT_TEST_OUT:
            o->test_out = optarg;
            break;
        case GEN_OPT_CLICK_RATE:
            o->click_rate  = gen_parse_real(c, optarg, 0.0, 1.0, 1, 1);
            o->given_click = 1;
            break;
        case GEN_OPT_ZIPF:
            o->zipf       = gen_parse_real(c, optarg, 1.0, 3.0, 1, 0);
            o->given_zipf = 1;
            break;
        case GEN_OPT_NOISE:
            o->noise       = gen_parse_real(c, optarg, 0.0, o->kind == GEN_DENSE ? 0.5 : 1e6,
                                            0, o->kind == GEN_DENSE);
            o->given_noise = 1;
            break;
        case GEN_OPT_DENSITY:
            o->density       = gen_parse_real(c, optarg, 0.0, 1.0, 1, 0);
            o->given_density = 1;
            break;
        case GEN_OPT_CLASSES:
            o->classes       = (int)gen_parse_int(c, optarg, 2, GEN_MAX_CLASSES);
            o->given_classes = 1;
            break;
        case 'q':
            o->quiet = 1;
            break;
        case 'h':
            gen_usage(stdout);
            exit(0);
        case GEN_OPT_VERSION:
            printf(GEN_NAME " %s\n", PACKAGE_VERSION);
            exit(0);
        case ':':
            gen_usage_error("%s: missing argument", gen_opt_name(optopt, name, sizeof(name)));
            break;
        default:
            /* GNU getopt: optopt is the option's value for a long option given a value
             * it takes none of ("--quiet=1", then argv[optind - 1]), the character of
             * an unknown short option, 0 for an unknown or ambiguous long option */
            for (k = 0; optopt != 0 && gen_long_opts[k].name != NULL; k++) {
                if (gen_long_opts[k].val == optopt && gen_long_opts[k].has_arg == no_argument) {
                    gen_usage_error("option '--%s' takes no value ('%s')",
                                    gen_long_opts[k].name, argv[optind - 1]);
                }
            }
            if (optopt != 0) {
                gen_usage_error("unknown option '-%c'", optopt);
            }
            gen_usage_error("unknown option '%s'", argv[optind - 1]);
        }
    }
    if (o->kind == GEN_CONVERT) {
        if (optind >= argc) {
            gen_usage_error("convert: no input file");
        }
        o->in = argv[optind++];
        if (o->in[0] == '\0') {   /* (before: ": cannot open", exit 1) */
            gen_usage_error("convert: the input file name is empty");
        }
        if (!strcmp(o->in, "-")) {
            gen_usage_error("convert: the input cannot be standard input (the readers map "
                            "the file): give a file");
        }
    }
    if (optind < argc) {
        if (o->out != NULL || optind + 1 < argc) {
            gen_usage_error("one output file, please (extra argument '%s')",
                            argv[o->out != NULL ? optind : optind + 1]);
        }
        o->out = argv[optind];
    }
    if (o->out == NULL) {
        gen_usage_error("no output file (-o FILE)");
    }
    if (o->out[0] == '\0' || (o->test_out != NULL && o->test_out[0] == '\0')) {
        gen_usage_error("the %s file name is empty", o->out[0] == '\0' ? "output" : "--test-out");
    }
    if (o->kind == GEN_CONVERT) {
        if (strcmp(o->out, "-") != 0 && st_tool_same_file(o->in, o->out)) {
            gen_usage_error("convert: the output file %s is the input file %s: it would be "
                            "overwritten", o->out, o->in);
        }
        return;   /* the rest once the input's format is known (gen_convert_check) */
    }
    if (o->bin && !strcmp(o->out, "-")) {
        gen_usage_error("--format bin cannot go to standard output");
    }
    if (o->given_prec && !o->bin) {
        gen_usage_error("-p/--prec applies to --format bin only");
    }
    if (o->given_test_rows != (o->test_out != NULL)) {
        gen_usage_error("--test-rows and --test-out go together");
    }
    if (o->test_out != NULL && !strcmp(o->test_out, "-")) {
        gen_usage_error("--test-out: standard output is for the training rows");
    }
    if (o->test_out != NULL && strcmp(o->out, "-") != 0 && st_tool_same_file(o->test_out, o->out)) {
        gen_usage_error("--test-out %s is the output file: the test rows would overwrite the "
                        "training rows", o->test_out);
    }
    if ((o->given_click || o->given_zipf) && o->kind != GEN_CRITEO) {
        gen_usage_error("%s applies to criteo only", o->given_click ? "--click-rate" : "--zipf");
    }
    if (o->given_noise && o->kind == GEN_CRITEO) {
        gen_usage_error("--noise applies to dense and regression only");
    }
    if (o->given_density && o->kind != GEN_REGRESSION) {
        gen_usage_error("--density applies to regression only");
    }
    if (o->given_classes && o->kind != GEN_DENSE) {
        gen_usage_error("--classes applies to dense only");
    }
    if ((double)o->classes * (double)o->cols > (double)(1 << 28)) {
        gen_usage_error("--classes %d x --cols %lld: at most 2^28 planted weights",
                        o->classes, (long long)o->cols);
    }
}

/* ---- output: svmlight text, or rows gathered for the binary writer ---- */

typedef struct {
    const char *path;
    int         bin;
    int         prec;
    int         label_kind;
    FILE       *f;
    st_glm_out_t out;   /* text to a file: written next to it, renamed once whole */
    const char *name;   /* the file as messages name it: path, or the output it is
                           staged for (gen_stage) */
    char       *buf;
    size_t      len;
    /* binary: the rows so far */
    int64_t     rows, nnz;
    size_t      rows_cap, nnz_cap;
    int64_t    *indptr;
    double     *y;
    uint32_t   *indices;
    float      *v32;
    double     *v64;
    int64_t     n_pos;
} gen_sink_t;

/* one row being built: columns (0-based), values as stored, and the pairs' text */
typedef struct {
    int64_t   n, cap;
    uint32_t *col;
    double   *val;
    char     *text;
    size_t    text_len, text_cap;
} gen_row_t;

static void gen_die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

static st_glm_out_t *gen_open_out;   /* the text file being written, removed on errors */
static st_glm_out_t *gen_staged;     /* the training set, held until the test set is
                                        written (gen_stage): removed on errors */

static void gen_die(const char *fmt, ...)
{
    const char *lost = NULL;
    va_list ap;

    if (gen_open_out != NULL) {
        if (gen_open_out->replaced) {
            lost = st_glm_out_lost(gen_open_out);   /* (rewritten in place) */
        }
        gen_open_out->fd = -1;            /* (its FILE's: closed at exit) */
        st_glm_out_close(gen_open_out);   /* the temporary goes; the file stays as it was */
    }
    if (gen_staged != NULL) {
        st_glm_out_close(gen_staged);     /* (so does a staged training set) */
    }
    fprintf(stderr, GEN_NAME ": ");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, lost != NULL ? " (%s)\n" : "\n", lost);
    st_stdout_failed();
    exit(1);
}

static void *gen_realloc(void *p, size_t n)
{
    p = realloc(p, n == 0 ? 1 : n);
    if (p == NULL) {
        gen_die("out of memory");
    }
    return p;
}

static void gen_sink_open(gen_sink_t *s, const char *path, const char *name,
                          const gen_opts_t *o)
{
    memset(s, 0, sizeof(*s));
    s->path       = path;
    s->name       = name;
    s->bin        = o->bin;
    s->prec       = o->prec;
    /* (more than two classes: their names, 1 to K, go to the binary file as targets) */
    s->label_kind = (o->kind == GEN_REGRESSION || o->classes > 2) ? ST_GLM_LABEL_REAL
                                                                  : ST_GLM_LABEL_CLASS;
    if (s->bin) {
        s->indptr = gen_realloc(NULL, sizeof(*s->indptr));
        s->indptr[0] = 0;
        return;
    }
    s->out.fd = -1;
    if (strcmp(path, "-") == 0) {
        s->f = stdout;
    } else if (st_glm_out_open(&s->out, path) != 0) {
        gen_die("%s: cannot create: %s", name, strerror(errno));
    } else {
        gen_open_out = &s->out;
        s->f         = fdopen(s->out.fd, "wb");
        if (s->f == NULL) {
            gen_die("%s: cannot create: %s", name, strerror(errno));
        }
    }
    s->buf = gen_realloc(NULL, GEN_OUTBUF + 4096);
}

static void gen_sink_flush(gen_sink_t *s)
{
    if (s->len > 0 && fwrite(s->buf, 1, s->len, s->f) != s->len) {
        gen_die("%s: cannot write: %s", s->name, strerror(errno));
    }
    s->len = 0;
}

/* Append a row: label (its text and value) and the pairs of @a row. */
static void gen_sink_row(gen_sink_t *s, const char *ytext, double y, const gen_row_t *row)
{
    int64_t k;

    s->n_pos += y > 0.0;
    if (!s->bin) {
        size_t yl = strlen(ytext);

        if (s->len + yl + row->text_len + 1 > GEN_OUTBUF) {
            gen_sink_flush(s);
        }
        if (yl + row->text_len + 1 > GEN_OUTBUF) {
            if (fwrite(ytext, 1, yl, s->f) != yl ||
                fwrite(row->text, 1, row->text_len, s->f) != row->text_len ||
                fputc('\n', s->f) == EOF) {
                gen_die("%s: cannot write: %s", s->name, strerror(errno));
            }
        } else {
            memcpy(s->buf + s->len, ytext, yl);
            memcpy(s->buf + s->len + yl, row->text, row->text_len);
            s->len += yl + row->text_len;
            s->buf[s->len++] = '\n';
        }
        s->rows++;
        s->nnz += row->n;
        return;
    }
    if ((size_t)s->rows + 1 > s->rows_cap) {
        s->rows_cap = s->rows_cap * 3 / 2 + 1024;
        s->indptr = gen_realloc(s->indptr, (s->rows_cap + 1) * sizeof(*s->indptr));
        s->y = gen_realloc(s->y, s->rows_cap * sizeof(*s->y));
    }
    if ((size_t)(s->nnz + row->n) > s->nnz_cap) {
        s->nnz_cap = (s->nnz_cap + (size_t)row->n) * 3 / 2 + 4096;
        s->indices = gen_realloc(s->indices, s->nnz_cap * sizeof(*s->indices));
        if (s->prec == 32) {
            s->v32 = gen_realloc(s->v32, s->nnz_cap * sizeof(*s->v32));
        } else {
            s->v64 = gen_realloc(s->v64, s->nnz_cap * sizeof(*s->v64));
        }
    }
    for (k = 0; k < row->n; k++) {
        s->indices[s->nnz + k] = row->col[k];
        if (s->prec == 32) {
            s->v32[s->nnz + k] = (float)row->val[k];
        } else {
            s->v64[s->nnz + k] = row->val[k];
        }
    }
    s->nnz += row->n;
    s->y[s->rows++] = y;
    s->indptr[s->rows] = s->nnz;
}

static void gen_sink_close(gen_sink_t *s, int64_t n_cols)
{
    char msg[ST_GLM_DATA_MSG_LEN];
    st_glm_data_t d;

    if (!s->bin) {
        int err;

        gen_sink_flush(s);
        if (fflush(s->f) != 0) {
            gen_die("%s: cannot write: %s", s->name, strerror(errno));
        }
        if (s->f != stdout) {
            if ((err = st_glm_out_commit(&s->out)) != 0) {
                gen_die("%s: cannot write: %s", s->name, strerror(err));
            }
            gen_open_out = NULL;
            fclose(s->f);   /* (written and renamed: nothing of it is lost now) */
            s->out.fd = -1;
            st_glm_out_close(&s->out);
        }
        free(s->buf);
        return;
    }
    memset(&d, 0, sizeof(d));
    d.n_rows        = s->rows;
    d.n_rows_global = s->rows;
    d.n_cols        = n_cols;
    d.nnz           = s->nnz;
    d.nnz_global    = s->nnz;
    d.indptr        = s->indptr;
    d.indices       = s->indices != NULL ? s->indices : gen_realloc(NULL, 4);
    d.prec          = s->prec;
    d.val32         = s->prec == 32 ? (s->v32 != NULL ? s->v32 : gen_realloc(NULL, 4)) : NULL;
    d.val64         = s->prec == 64 ? (s->v64 != NULL ? s->v64 : gen_realloc(NULL, 8)) : NULL;
    d.y             = s->y;
    d.label_kind    = (st_glm_label_kind_t)s->label_kind;
    if (st_glm_data_write_bin(&d, s->path, MPI_COMM_NULL, msg, sizeof(msg)) != ST_OK) {
        size_t plen = strlen(s->path);

        /* (a staged file's message names the output it stands for) */
        if (s->name != s->path && strncmp(msg, s->path, plen) == 0) {
            gen_die("%s%s", s->name, msg + plen);
        }
        gen_die("%s", msg);
    }
    free(d.indptr);
    free(d.indices);
    free(d.val32);
    free(d.val64);
    free(d.y);
}

/* ---- rows ---- */

static void gen_row_reset(gen_row_t *r)
{
    r->n        = 0;
    r->text_len = 0;
}

static void gen_row_reserve(gen_row_t *r, int64_t n)
{
    if (n > r->cap) {
        r->cap  = n;
        r->col  = gen_realloc(r->col, (size_t)n * sizeof(*r->col));
        r->val  = gen_realloc(r->val, (size_t)n * sizeof(*r->val));
    }
    if (r->text_cap < (size_t)n * 40 + 64) {
        r->text_cap = (size_t)n * 40 + 64;
        r->text     = gen_realloc(r->text, r->text_cap);
    }
}

/* Decimal digits of @a v at @a p; returns the end. */
static inline char *gen_utoa(char *p, uint64_t v)
{
    char tmp[24];
    int n = 0;

    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v > 0);
    while (n > 0) {
        *p++ = tmp[--n];
    }
    return p;
}

/*
 * x rounded to @a dec decimals (0 < dec <= 9), as text without trailing zeros
 * (NUL-terminated at @a p; returns the end). The value the reader gets from that
 * text is what the caller must store: see gen_row_add.
 */
static char *gen_fixed(char *p, double x, int dec)
{
    static const uint64_t p10[10] = {
        1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000, 1000000000
    };
    int64_t n = llround(x * (double)p10[dec]);
    uint64_t a = (uint64_t)(n < 0 ? -n : n), ip = a / p10[dec], fp = a % p10[dec];

    if (n < 0) {
        *p++ = '-';
    }
    p = gen_utoa(p, ip);
    if (fp != 0) {
        char frac[12];
        int i;

        for (i = dec - 1; i >= 0; i--) {
            frac[i] = (char)('0' + fp % 10);
            fp /= 10;
        }
        for (i = dec; i > 0 && frac[i - 1] == '0'; i--) {
        }
        *p++ = '.';
        memcpy(p, frac, (size_t)i);
        p += i;
    }
    *p = '\0';
    return p;
}

/*
 * Add column @a col (0-based, increasing) with value @a x rounded to @a dec
 * decimals (dec 0: x is a small integer, written as such). The row stores what
 * the reader parses from that text in the output precision @a prec.
 * @return the value of the text (64 bits, whatever @a prec: the planted model
 *         sees the same data in every format), or 0 (nothing added) for zero.
 */
static double gen_row_add(gen_row_t *r, int prec, uint32_t col, double x, int dec)
{
    char *p, *v;
    double val, out;

    if (r->n == r->cap || r->text_len + 64 > r->text_cap) {
        gen_row_reserve(r, r->cap * 2 + 16);
    }
    p = r->text + r->text_len;
    *p++ = ' ';
    p = gen_utoa(p, (uint64_t)col + 1);
    *p++ = ':';
    v = p;
    if (dec == 0) {
        p = gen_utoa(p, (uint64_t)x);
        val = out = x;
    } else {
        p = gen_fixed(p, x, dec);
        if (st_glm_data_parse_real(v, (size_t)(p - v), 64, &val) != ST_GLM_NUM_OK ||
            st_glm_data_parse_real(v, (size_t)(p - v), prec, &out) != ST_GLM_NUM_OK) {
            gen_die("internal error: cannot read back '%s'", v);
        }
    }
    if (val == 0.0) {
        return 0.0;
    }
    r->text_len  = (size_t)(p - r->text);
    r->col[r->n] = col;
    r->val[r->n] = out;
    r->n++;
    return val;
}

/* ---- the planted models ---- */

typedef struct {
    const gen_opts_t *o;
    float            *w;        /* one weight per column */
    float            *wk;       /* dense --classes K > 2: K x cols, class k's at k cols */
    double            b;        /* intercept */
    gen_zipf_t        zipf[GEN_CATEGORICAL];
    double            scale;    /* regression/dense: 1/sqrt(expected entries per row) */
    int               prec;     /* precision the stored values are rounded to */
} gen_model_t;

static void gen_model_init(gen_model_t *m, const gen_opts_t *o)
{
    gen_rng_t g;
    int64_t j;
    int f;

    memset(m, 0, sizeof(*m));
    m->o    = o;
    m->prec = o->bin ? o->prec : 64;
    m->w    = gen_realloc(NULL, (size_t)o->cols * sizeof(*m->w));
    gen_rng_seed(&g, o->seed, GEN_STREAM_MODEL, 0);
    if (o->kind == GEN_CRITEO) {
        for (j = 0; j < o->cols; j++) {
            if (j < GEN_NUMERIC) {
                m->w[j] = (float)(GEN_NUM_WEIGHT * gen_normal(&g));
            } else if (gen_uniform(&g) < GEN_CAT_DENSITY) {
                m->w[j] = (float)(GEN_CAT_WEIGHT * gen_normal(&g));
            } else {
                m->w[j] = 0.0f;
            }
        }
        for (f = 0; f < GEN_CATEGORICAL; f++) {
            gen_zipf_init(&m->zipf[f], gen_cat_vocab[f], o->zipf);
        }
    } else {
        for (j = 0; j < o->cols; j++) {
            m->w[j] = (float)gen_normal(&g);
        }
        m->scale = 1.0 / sqrt((double)o->cols * (o->kind == GEN_REGRESSION ? o->density : 1.0));
        if (o->kind == GEN_DENSE && o->classes > 2) {   /* (after w: two classes as before) */
            m->wk = gen_realloc(NULL, (size_t)o->classes * (size_t)o->cols * sizeof(*m->wk));
            for (j = 0; j < (int64_t)o->classes * o->cols; j++) {
                m->wk[j] = (float)gen_normal(&g);
            }
        }
    }
}

/* The column of id @a id of categorical field @a f: fixed, independent of the seed. */
static inline uint32_t gen_hash_col(int f, int64_t id, int64_t cols)
{
    uint64_t h = gen_mix(((uint64_t)(f + 1) << 40) ^ (uint64_t)id);

    return (uint32_t)(GEN_NUMERIC +
                      (uint64_t)(((unsigned __int128)h * (uint64_t)(cols - GEN_NUMERIC)) >> 64));
}

/* Features of one Criteo-like row into @a r; returns its margin w.x (no intercept). */
static double gen_criteo_features(const gen_model_t *m, gen_rng_t *g, gen_row_t *r)
{
    uint32_t cat[GEN_CATEGORICAL];
    double margin = 0.0;
    int i, j, n = 0;

    gen_row_reset(r);
    for (i = 0; i < GEN_NUMERIC; i++) {
        double u = gen_uniform(g), v = gen_uniform(g), count;

        if (u < gen_num_missing[i]) {
            continue;
        }
        count = floor(gen_num_scale[i] * (pow(1.0 - v, -1.0 / gen_num_alpha[i]) - 1.0));
        if (count > 0.0) {
            margin += m->w[i] * gen_row_add(r, m->prec, (uint32_t)i, log1p(count), 6);
        }
    }
    for (i = 0; i < GEN_CATEGORICAL; i++) {
        if (gen_uniform(g) < gen_cat_missing[i]) {
            continue;
        }
        cat[n++] = gen_hash_col(i, gen_zipf_draw(&m->zipf[i], g), m->o->cols);
    }
    /* sort (insertion: 26 at most), then merge equal columns into counts */
    for (i = 1; i < n; i++) {
        uint32_t x = cat[i];

        for (j = i; j > 0 && cat[j - 1] > x; j--) {
            cat[j] = cat[j - 1];
        }
        cat[j] = x;
    }
    for (i = 0; i < n; i = j) {
        for (j = i + 1; j < n && cat[j] == cat[i]; j++) {
        }
        margin += m->w[cat[i]] * gen_row_add(r, m->prec, cat[i], (double)(j - i), 0);
    }
    return margin;
}

/* Gaussian features of a dense or sparse row into @a r; returns w.x * scale. */
static double gen_gauss_features(const gen_model_t *m, gen_rng_t *g, gen_row_t *r)
{
    const double d = m->o->kind == GEN_REGRESSION ? m->o->density : 1.0;
    double margin = 0.0, lq = d < 1.0 ? log1p(-d) : 0.0;
    int64_t j = 0;

    gen_row_reset(r);
    for (;;) {
        if (d < 1.0) {
            /* skip to the next nonzero: a geometric gap, so each column is in with prob. d */
            double gap = floor(log(1.0 - gen_uniform(g)) / lq);

            if (gap >= (double)(m->o->cols - j)) {
                break;
            }
            j += (int64_t)gap;
        }
        if (j >= m->o->cols) {
            break;
        }
        margin += m->w[j] * gen_row_add(r, m->prec, (uint32_t)j, gen_normal(g), 4);
        j++;
    }
    return margin * m->scale;
}

/* dense --classes: the class (0-based) whose planted weights give row @a r the largest
 * margin, the first of equals. */
static int gen_argmax_class(const gen_model_t *m, const gen_row_t *r)
{
    int c, best = 0;
    double z, best_z = -INFINITY;
    int64_t k;

    for (c = 0; c < m->o->classes; c++) {
        const float *w = m->wk + (int64_t)c * m->o->cols;

        for (z = 0.0, k = 0; k < r->n; k++) {
            z += w[r->col[k]] * r->val[k];
        }
        if (z > best_z) {
            best_z = z;
            best   = c;
        }
    }
    return best;
}

static double gen_sigmoid(double t)
{
    return t >= 0 ? 1.0 / (1.0 + exp(-t)) : exp(t) / (1.0 + exp(t));
}

/* Criteo intercept: mean sigmoid(margin + b) over a calibration sample = click rate. */
static void gen_calibrate(gen_model_t *m)
{
    double *mg = gen_realloc(NULL, GEN_CALIB_ROWS * sizeof(*mg)), lo = -60.0, hi = 60.0, b;
    gen_row_t r;
    gen_rng_t g;
    int64_t i;
    int it;

    memset(&r, 0, sizeof(r));
    gen_row_reserve(&r, GEN_NUMERIC + GEN_CATEGORICAL);
    for (i = 0; i < GEN_CALIB_ROWS; i++) {
        gen_rng_seed(&g, m->o->seed, GEN_STREAM_CALIB, (uint64_t)i);
        mg[i] = gen_criteo_features(m, &g, &r);
    }
    /* Newton's method on f(b) = mean sigmoid(m_i + b) - rate (increasing in b), kept
     * inside a bracket that shrinks with every step: bisection where Newton leaves it */
    b = log(m->o->click_rate / (1.0 - m->o->click_rate));
    for (it = 0; it < 200 && hi - lo > 1e-12; it++) {
        double f = 0.0, df = 0.0;

        for (i = 0; i < GEN_CALIB_ROWS; i++) {
            double p = gen_sigmoid(mg[i] + b);

            f  += p;
            df += p * (1.0 - p);
        }
        f = f / GEN_CALIB_ROWS - m->o->click_rate;
        df /= GEN_CALIB_ROWS;
        if (f == 0.0) {
            break;
        }
        if (f < 0.0) {
            lo = b;
        } else {
            hi = b;
        }
        b = (df > 0.0) ? b - f / df : 0.5 * (lo + hi);
        if (!(b > lo && b < hi)) {
            b = 0.5 * (lo + hi);
        }
        if (fabs(f) < 1e-12) {
            break;
        }
    }
    m->b = b;
    free(mg);
    free(r.col);
    free(r.val);
    free(r.text);
}

typedef struct {
    int64_t rows, nnz, pos;
    double  ysum, ysq;
} gen_summary_t;

static void gen_write(const gen_model_t *m, const char *path, const char *name, int64_t rows,
                      int stream, gen_summary_t *sum_p)
{
    const gen_opts_t *o = m->o;
    gen_summary_t sum;
    gen_sink_t s;
    gen_row_t r;
    gen_rng_t g;
    int64_t i;

    memset(&sum, 0, sizeof(sum));
    memset(&r, 0, sizeof(r));
    gen_row_reserve(&r, o->kind == GEN_CRITEO ? GEN_NUMERIC + GEN_CATEGORICAL :
                        (int64_t)ST_MIN((double)o->cols, 2.0 * (double)o->cols * o->density + 64));
    gen_sink_open(&s, path, name, o);
    for (i = 0; i < rows; i++) {
        char ytext[40];
        double margin, y;

        gen_rng_seed(&g, o->seed, (uint64_t)stream, (uint64_t)i);
        if (o->kind == GEN_CRITEO) {
            margin = gen_criteo_features(m, &g, &r);
            y = gen_uniform(&g) < gen_sigmoid(margin + m->b) ? 1.0 : -1.0;
        } else if (o->kind == GEN_DENSE && o->classes > 2) {
            /* the class of the largest planted margin, or with probability noise one
               drawn at random */
            (void)gen_gauss_features(m, &g, &r);
            y = (double)(1 + gen_argmax_class(m, &r));
            if (gen_uniform(&g) < o->noise) {
                y = (double)(1 + (int)(gen_uniform(&g) * o->classes) % o->classes);
            }
        } else if (o->kind == GEN_DENSE) {
            margin = gen_gauss_features(m, &g, &r);
            y = margin >= 0.0 ? 1.0 : -1.0;
            if (gen_uniform(&g) < o->noise) {
                y = -y;
            }
        } else {
            margin = gen_gauss_features(m, &g, &r) + o->noise * gen_normal(&g);
            gen_fixed(ytext, margin, 6);
            if (st_glm_data_parse_real(ytext, strlen(ytext), 64, &y) != ST_GLM_NUM_OK) {
                gen_die("internal error: cannot read back '%s'", ytext);
            }
        }
        if (o->kind == GEN_DENSE && o->classes > 2) {
            snprintf(ytext, sizeof(ytext), "%d", (int)y);
        } else if (o->kind != GEN_REGRESSION) {
            strcpy(ytext, y > 0 ? "+1" : "-1");
        }
        gen_sink_row(&s, ytext, y, &r);
        sum.rows++;
        sum.nnz  += r.n;
        sum.pos  += y > 0.0;
        sum.ysum += y;
        sum.ysq  += y * y;
    }
    gen_sink_close(&s, o->cols);
    free(r.col);
    free(r.val);
    free(r.text);
    *sum_p = sum;
}

static void gen_report(const gen_opts_t *o, const char *what, const char *path,
                       const gen_summary_t *s)
{
    printf("  %s %s: %lld rows, %lld cols, %lld nnz (%.2f per row)", what, path,
           (long long)s->rows, (long long)o->cols, (long long)s->nnz,
           (double)s->nnz / (double)s->rows);
    if (o->kind == GEN_REGRESSION) {
        double mean = s->ysum / (double)s->rows;

        printf(", label mean %.6f std %.6f\n", mean,
               sqrt(fmax(0.0, s->ysq / (double)s->rows - mean * mean)));
    } else if (o->kind == GEN_CRITEO) {
        printf(", click rate %.6f\n", (double)s->pos / (double)s->rows);
    } else if (o->classes > 2) {
        printf(", %d classes\n", o->classes);
    } else {
        printf(", positive rate %.6f\n", (double)s->pos / (double)s->rows);
    }
}

/* ---- convert: a dataset from one format to the other ---- */

/* Does @a path start with the binary format's magic? -1: not a file to read (missing,
 * unreadable, a directory, a pipe or a device), which the loader then names. Opened
 * without blocking: fopen of a named pipe waited for a writer for ever. */
static int gen_is_bin(const char *path)
{
    char magic[ST_GLM_BIN_MAGIC_LEN];
    struct stat st;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK), bin;

    if (fd < 0) {
        return -1;
    }
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return -1;
    }
    bin = pread(fd, magic, sizeof(magic), 0) == (ssize_t)sizeof(magic) &&
          memcmp(magic, ST_GLM_BIN_MAGIC, sizeof(magic)) == 0;
    close(fd);
    return bin;
}

/* The options that depend on the input's format: the output format (default: the
 * other one) and its precision. */
static void gen_convert_check(gen_opts_t *o, int in_bin)
{
    if (!o->given_format) {
        o->bin = !in_bin;
    }
    if (o->bin && !strcmp(o->out, "-")) {
        gen_usage_error("--format bin cannot go to standard output%s",
                        o->given_format ? "" : " (bin: the default for a text input)");
    }
    if (o->given_prec && !o->bin) {
        gen_usage_error("-p/--prec applies to --format bin only%s",
                        o->given_format ? "" : " (svm: the default for a binary input)");
    }
}

/* What the labels of @a d (read as targets) are: 0 all -1/+1, 1 all 0/1 (a "-0" is
 * a target: it would read back as 0), 2 real targets. */
static int gen_label_class(const st_glm_data_t *d)
{
    int pm = 1, zo = 1;
    int64_t i;

    for (i = 0; i < d->n_rows && (pm || zo); i++) {
        double y = d->y[i];

        pm = pm && (y == 1.0 || y == -1.0);
        zo = zo && (y == 1.0 || (y == 0.0 && !signbit(y)));
    }
    return pm ? 0 : zo ? 1 : 2;
}

static const char *const gen_label_names[] = {
    "classes -1/+1", "classes 0/1", "real targets"
};

/* The rows of @a d as svmlight text, through the text sink (written whole or not at all). */
static void gen_convert_svm(const st_glm_data_t *d, const gen_opts_t *o)
{
    char ytext[ST_GLM_REAL_TEXT_LEN];
    gen_sink_t s;
    gen_row_t r;
    int64_t i, k;

    memset(&r, 0, sizeof(r));
    gen_sink_open(&s, o->out, o->out, o);
    for (i = 0; i < d->n_rows; i++) {
        int64_t n = d->indptr[i + 1] - d->indptr[i];
        char *p;

        gen_row_reset(&r);
        gen_row_reserve(&r, n);
        p = r.text;
        for (k = d->indptr[i]; k < d->indptr[i + 1]; k++) {
            *p++ = ' ';
            p = gen_utoa(p, (uint64_t)d->indices[k] + 1);
            *p++ = ':';
            /* the shortest decimal that reads back bit for bit (a float's value as
             * the double it is: the same at either precision) */
            p = st_glm_data_real_text(p, d->prec == 32 ? (double)d->val32[k] : d->val64[k]);
        }
        r.text_len = (size_t)(p - r.text);
        r.n        = n;
        st_glm_data_real_text(ytext, d->y[i]);
        gen_sink_row(&s, ytext, d->y[i], &r);
    }
    gen_sink_close(&s, d->n_cols);
    free(r.col);
    free(r.val);
    free(r.text);
}

/*
 * Read o->in (either format; labels as targets, so that every label is kept as it
 * is) and write it to o->out. Binary output stores the labels as classes where they
 * are -1/+1 or 0/1 (0/1: version 2's flag), as targets otherwise; every reader reads
 * them back as it reads the text's (solver/README.md, "Binary CSR format").
 */
static void gen_convert(gen_opts_t *o)
{
    char msg[ST_GLM_DATA_MSG_LEN];
    struct timespec t0, t1;
    st_glm_data_opts_t lo;
    st_glm_data_t *d = NULL;
    int in_bin, labels;
    int64_t i, max_col = 0;

    st_glm_data_opts_init(&lo);
    lo.label_kind = ST_GLM_LABEL_REAL;
    in_bin = gen_is_bin(o->in);
    if (in_bin < 0) {
        /* the loader's words for what the input is (as strata-train's), before the
           options that depend on its format can be misjudged */
        if (st_glm_data_load(o->in, &lo, MPI_COMM_NULL, msg, sizeof(msg), &d) != ST_OK) {
            gen_die("%s", msg);
        }
        st_glm_data_free(d);   /* (it became a file meanwhile) */
        d      = NULL;
        in_bin = gen_is_bin(o->in) > 0;
    }
    gen_convert_check(o, in_bin);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    /* text read once at the output's precision (a decimal rounded once to a float, as
     * strata-train --prec 32 reads it); binary: the file's, or the one asked for */
    lo.prec = o->bin && o->given_prec ? o->prec : in_bin ? 0 : 64;
    if (st_glm_data_load(o->in, &lo, MPI_COMM_NULL, msg, sizeof(msg), &d) != ST_OK) {
        gen_die("%s", msg);
    }
    o->prec = d->prec;
    labels  = gen_label_class(d);
    for (i = 0; i < d->n_rows; i++) {
        if (d->indptr[i + 1] > d->indptr[i]) {
            max_col = ST_MAX(max_col, (int64_t)d->indices[d->indptr[i + 1] - 1] + 1);
        }
    }
    if (o->bin) {
        if (labels < 2) {
            d->label_kind = ST_GLM_LABEL_CLASS;
            d->zero_one   = labels == 1;
            for (i = 0; labels == 1 && i < d->n_rows; i++) {
                d->y[i] = d->y[i] == 0.0 ? -1.0 : 1.0;
            }
        }
        if (st_glm_data_write_bin(d, o->out, MPI_COMM_NULL, msg, sizeof(msg)) != ST_OK) {
            gen_die("%s", msg);
        }
    } else {
        gen_convert_svm(d, o);
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (!o->quiet && strcmp(o->out, "-") != 0) {
        printf(GEN_NAME " convert, %s to %s", in_bin ? "bin" : "svm", o->bin ? "bin" : "svm");
        if (o->bin) {
            printf(" (%d-bit values)", o->prec);
        }
        printf("\n  %s: %lld rows, %lld cols, %lld nnz (%.2f per row), %s\n", o->out,
               (long long)d->n_rows, (long long)d->n_cols, (long long)d->nnz,
               (double)d->nnz / (double)d->n_rows, gen_label_names[labels]);
        if (!o->bin && max_col < d->n_cols) {
            printf("  the text has no column count: read back, it has %lld columns (its "
                   "largest index)\n", (long long)max_col);
        }
        printf("  time %.2f s\n", (double)(t1.tv_sec - t0.tv_sec) +
               1e-9 * (double)(t1.tv_nsec - t0.tv_nsec));
    }
    st_glm_data_free(d);
}

/* With --test-out, the training set is written whole to a temporary next to OUTPUT
 * (@a held: st_glm_out_open's, the writers write it through a temporary of their own
 * and rename that over it) and renamed over OUTPUT only once the test set is written
 * too, so a run that fails on the test set (a full disk) leaves both files as they
 * were (before: a new training set beside the old test set, rows of two different
 * planted models). @return the path to write the training set to: OUTPUT itself
 * where it is written in place (standard output, a pipe, a device, a directory
 * that takes no new file) or there is no test set. */
static const char *gen_stage(const gen_opts_t *o, st_glm_out_t *held)
{
    struct stat st;

    if (o->test_out == NULL || strcmp(o->out, "-") == 0 ||
        (stat(o->out, &st) == 0 && !S_ISREG(st.st_mode))) {
        return o->out;   /* (a named pipe is not opened before its writer) */
    }
    if (st_glm_out_open(held, o->out) != 0) {
        gen_die("%s: cannot create: %s", o->out, strerror(errno));
    }
    if (held->direct) {
        st_glm_out_close(held);
        return o->out;
    }
    gen_staged = held;
    return held->tmp;
}

/* The directory an output goes to exists (standard output aside), or the run ends. */
static void gen_check_dir(const char *path)
{
    char dir[4096];
    const char *why;

    if (path != NULL && strcmp(path, "-") != 0 &&
        (why = st_tool_cannot_write(path, dir, sizeof(dir))) != NULL) {
        gen_die("%s: cannot create: %s %s", path, dir, why);
    }
}

int main(int argc, char **argv)
{
    struct timespec t0, t1;
    gen_summary_t train, test;
    st_glm_out_t held;
    gen_model_t m;
    gen_opts_t o;

    st_stdout_check("strata-gen");

    gen_parse_opts(argc, argv, &o);
    if (o.kind == GEN_CONVERT) {
        gen_convert(&o);
        return 0;
    }
    gen_check_dir(o.out);   /* both, before the training set is written (before: a */
    gen_check_dir(o.test_out);   /* missing directory of --test-out was found after it) */
    clock_gettime(CLOCK_MONOTONIC, &t0);
    gen_model_init(&m, &o);
    if (o.kind == GEN_CRITEO) {
        gen_calibrate(&m);
    }
    gen_write(&m, gen_stage(&o, &held), o.out, o.rows, GEN_STREAM_TRAIN, &train);
    if (o.test_out != NULL) {
        gen_write(&m, o.test_out, o.test_out, o.test_rows, GEN_STREAM_TEST, &test);
    }
    if (gen_staged != NULL) {
        int err = st_glm_out_commit(gen_staged);

        if (err != 0) {
            gen_die("%s: cannot write: %s (the file is unchanged; %s is written)", o.out,
                    strerror(err), o.test_out);
        }
        st_glm_out_close(gen_staged);
        gen_staged = NULL;
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (!o.quiet && strcmp(o.out, "-") != 0) {
        printf(GEN_NAME " %s, seed %llu, format %s", gen_kind_names[o.kind],
               (unsigned long long)o.seed, o.bin ? "bin" : "svm");
        if (o.bin) {
            printf(" (%d-bit values)", o.prec);
        }
        printf("\n");
        gen_report(&o, "train", o.out, &train);
        if (o.test_out != NULL) {
            gen_report(&o, "test", o.test_out, &test);
        }
        if (o.kind == GEN_CRITEO) {
            printf("  click rate target %.6f, intercept %.6f\n", o.click_rate, m.b);
        } else if (o.kind == GEN_DENSE) {
            printf("  label noise %.6f%s\n", o.noise,
                   o.classes > 2 ? " (a class drawn at random)" : "");
        } else {
            printf("  noise std %.6f, density %.6f\n", o.noise, o.density);
        }
        printf("  time %.2f s\n", (double)(t1.tv_sec - t0.tv_sec) +
               1e-9 * (double)(t1.tv_nsec - t0.tv_nsec));
    }
    free(m.w);
    free(m.wk);
    return 0;
}
