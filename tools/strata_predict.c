/*
 * strata-predict: LIBLINEAR's predict for Strata's models.
 *
 *   strata-predict [options] TEST_FILE MODEL_FILE [OUTPUT_FILE]
 *
 * Reads a model file (strata-train's, or LIBLINEAR's for the same models), reads the
 * test set (svmlight text or Strata's binary CSR) with every rank taking its share of
 * the rows, prints the metrics over all rows from rank 0 and, with OUTPUT_FILE, writes
 * one line per test row in the file's row order: the predicted label (classification)
 * or value (regression), and with -b 1 the probabilities of every class after a header
 * line "labels 1 -1" (or "labels 1 0", "labels 3 1 7": the classes as the model names
 * them, in its order), as LIBLINEAR's predict -b 1 does. The ranks send their lines to
 * rank 0 in rank order (in bounded chunks), so OUTPUT_FILE may be a pipe and needs no
 * shared file system.
 *
 * Runs alone (one process, no MPI initialized: st_tool.h) or under mpirun. Exit
 * status: 0 ok, 1 a run-time failure (a file that cannot be read or written, a
 * malformed model or test set, a model that does not fit the data), 2 bad usage.
 */
#include "config.h"

#include "strata_glm.h"
#include "st_tool.h"
#include "st_stdout.h"
#include "st_glm.h"   /* the test set's labels, the model's kind: no public accessor */

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PREDICT_NAME      "strata-predict"
#define PREDICT_MSG_LEN   1024
/* bytes of output lines a rank formats, and sends to rank 0, at a time */
#define PREDICT_CHUNK     (4 << 20)
/* longest output line: a label and two probabilities, or a %.17g value (more
   classes: 16 bytes more each) */
#define PREDICT_LINE_MAX  96

/* MPI_COMM_WORLD; MPI_COMM_NULL when no launcher started the process (st_tool.h) */
static MPI_Comm world = MPI_COMM_NULL;

enum {
    PREDICT_OPT_FORCE = 256,
    PREDICT_OPT_VERSION
};

typedef struct {
    int         probability;  /* -b 1 */
    int         quiet;        /* -q */
    int         force;        /* --force */
    int         help;         /* 1 --help, 2 --version */
    const char *test_file;
    const char *model_file;
    const char *output_file;  /* or NULL; "-": /dev/stdout */
    FILE       *metrics;      /* stdout, or stderr where the predictions go to stdout */
} predict_opts_t;

static const struct option predict_long_opts[] = {
    {"probability", required_argument, NULL, 'b'},
    {"quiet",       no_argument,       NULL, 'q'},
    {"force",       no_argument,       NULL, PREDICT_OPT_FORCE},
    {"help",        no_argument,       NULL, 'h'},
    {"version",     no_argument,       NULL, PREDICT_OPT_VERSION},
    {NULL, 0, NULL, 0}
};

static void predict_usage(FILE *f)
{
    fprintf(f,
            "Usage: " PREDICT_NAME " [OPTION]... TEST_FILE MODEL_FILE [OUTPUT_FILE]\n"
            "Predicts TEST_FILE (svmlight text or Strata binary CSR) with the model in\n"
            "MODEL_FILE (strata-train's, or LIBLINEAR's for the same models) and prints the\n"
            "metrics: accuracy, AUC and (logistic models) log loss for classification,\n"
            "the accuracy alone for one class or more than two; a test row of a class the\n"
            "model has not is counted wrong, and then the AUC is nan and the log loss left out;\n"
            "mean squared error, squared correlation coefficient and RMSE for regression.\n"
            "With OUTPUT_FILE, writes one line per test row, in the file's\n"
            "order: the predicted label (1/-1, 1/0 for a model of 0/1 data, or the classes\n"
            "of a multi-class model: that of the largest score) or value; OUTPUT_FILE '-':\n"
            "standard output, the metrics then on standard error.\n"
            "Runs alone or under mpirun (each rank predicts its share of the rows).\n"
            "  -b, --probability 0|1  1: also write P(label) for every class, after a line\n"
            "                         \"labels 1 -1\" (the model's classes, in its order;\n"
            "                         logistic models; default 0)\n"
            "  -q, --quiet            print no metrics\n"
            "      --force            predict with a regression model even when every label\n"
            "                         of TEST_FILE is -1/+1 or 0/1 (a classification set?)\n"
            "  -h, --help             this message\n"
            "      --version          print the version and exit\n"
            "Exit status: 0 ok, 1 a run-time failure, 2 bad usage.\n");
}

/* @return 0, or -1 after a message (rank 0) for bad usage. */
static int predict_parse_args(int argc, char **argv, int rank, predict_opts_t *opts)
{
    int c, nargs, same;

    memset(opts, 0, sizeof(*opts));
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, ":b:qh", predict_long_opts, NULL)) != -1) {
        switch (c) {
        case 'b':
            if (strcmp(optarg, "0") != 0 && strcmp(optarg, "1") != 0) {
                if (rank == 0) {
                    fprintf(stderr, PREDICT_NAME ": invalid value '%s' for -b/--probability "
                            "(expected 0 or 1)\n", optarg);
                }
                return -1;
            }
            opts->probability = (optarg[0] == '1');
            break;
        case 'q':
            opts->quiet = 1;
            break;
        case PREDICT_OPT_FORCE:
            opts->force = 1;
            break;
        case 'h':
            opts->help = 1;
            break;
        case PREDICT_OPT_VERSION:
            opts->help = opts->help ? opts->help : 2;   /* (--help wins) */
            break;
        case ':':
            if (rank == 0) {
                fprintf(stderr, PREDICT_NAME ": option '%s' needs a value\n", argv[optind - 1]);
            }
            return -1;
        default:
            /* GNU getopt: optopt is the option's value for "--flag=value" (then
             * argv[optind - 1]), the character for an unknown short option (argv[optind
             * - 1] may be an earlier argument: "--force -xq"), 0 for an unknown long one */
            if (rank == 0) {
                const struct option *o;

                for (o = predict_long_opts; optopt != 0 && o->name != NULL; o++) {
                    if (o->val == optopt && o->has_arg == no_argument) {
                        break;
                    }
                }
                if (optopt != 0 && o->name != NULL) {
                    fprintf(stderr, PREDICT_NAME ": option '--%s' takes no value ('%s')\n",
                            o->name, argv[optind - 1]);
                } else if (optopt != 0) {
                    fprintf(stderr, PREDICT_NAME ": unknown option '-%c'\n", optopt);
                } else {
                    fprintf(stderr, PREDICT_NAME ": unknown or ambiguous option '%s'\n",
                            argv[optind - 1]);
                }
            }
            return -1;
        }
    }
    if (opts->help) {
        return 0;
    }
    nargs = argc - optind;
    if (nargs < 2 || nargs > 3) {
        if (rank == 0) {
            if (nargs < 2) {
                fprintf(stderr, PREDICT_NAME ": expected TEST_FILE and MODEL_FILE\n");
            } else {
                fprintf(stderr, PREDICT_NAME ": unexpected argument '%s'\n", argv[optind + 3]);
            }
        }
        return -1;
    }
    opts->test_file  = argv[optind];
    opts->model_file = argv[optind + 1];
    if (nargs == 3) {
        opts->output_file = argv[optind + 2];
    }
    if (opts->test_file[0] == '\0' || opts->model_file[0] == '\0' ||
        (opts->output_file != NULL && opts->output_file[0] == '\0')) {
        if (rank == 0) {
            fprintf(stderr, PREDICT_NAME ": empty file name\n");
        }
        return -1;
    }
    /* "-": standard input is refused by name (each rank reads the test rows at an
       offset and the model file itself; before, "cannot open" or a file named "-"
       read); standard output takes the predictions, as strata-gen's "-o -" takes its
       rows, and the metrics go to stderr (before: a file named "-" was written) */
    if (!strcmp(opts->test_file, "-") || !strcmp(opts->model_file, "-")) {
        if (rank == 0) {
            fprintf(stderr, PREDICT_NAME ": the %s file cannot be standard input ('-'): "
                    "every rank reads it itself; give a file (./- for one named '-')\n",
                    !strcmp(opts->test_file, "-") ? "test" : "model");
        }
        return -1;
    }
    opts->metrics = stdout;
    if (opts->output_file != NULL && !strcmp(opts->output_file, "-")) {
        opts->output_file = "/dev/stdout";
        opts->metrics     = stderr;
    }
    /* each rank judges its own paths (they may differ without a shared file system):
       all refuse if one does, or the others would wait for it forever */
    same = st_tool_same_file(opts->output_file, opts->test_file)    ? 2
           : st_tool_same_file(opts->output_file, opts->model_file) ? 1
                                                                     : 0;
    st_tool_allreduce(world, &same, 1, MPI_INT, MPI_MAX);
    if (same != 0) {
        if (rank == 0) {
            fprintf(stderr, PREDICT_NAME ": the output file %s is the %s file%s: it would be "
                    "overwritten\n", opts->output_file, same == 2 ? "test" : "model",
                    st_tool_same_file(opts->output_file, same == 2 ? opts->test_file
                                                                   : opts->model_file)
                        ? ""
                        : " on another rank");
        }
        return -1;
    }
    return 0;
}

/* 1 when some rank failed (@a failed on this one); the lowest failing rank prints its
 * @a msg, so a failure that differs between ranks is still reported once. */
static int predict_any_failed(int failed, const char *msg, int rank, int size)
{
    int first = failed ? rank : size;

    st_tool_allreduce(world, &first, 1, MPI_INT, MPI_MIN);
    if (first == size) {
        return 0;
    }
    if (first == rank) {
        fprintf(stderr, PREDICT_NAME ": %s\n", msg);
    }
    return 1;
}

/* The line of @a path's example @a row (0-based, in the file's order: lines that are
 * neither blank nor comments, as the reader counts them), or 0 for a binary file or
 * where it cannot be read again. */
static long long predict_example_line(const char *path, int64_t row)
{
    char magic[ST_GLM_BIN_MAGIC_LEN], *line = NULL;
    size_t cap = 0, k;
    long long no = 0, found = 0;
    int64_t seen = 0;
    FILE *f = fopen(path, "r");

    if (f == NULL) {
        return 0;
    }
    if (fread(magic, 1, sizeof(magic), f) == sizeof(magic) &&
        memcmp(magic, ST_GLM_BIN_MAGIC, sizeof(magic)) == 0) {
        fclose(f);
        return 0;
    }
    rewind(f);
    while (!found && getline(&line, &cap, f) >= 0) {
        no++;
        k = strspn(line, " \t");
        if (line[k] != '\0' && line[k] != '\n' && line[k] != '#' &&
            strcmp(line + k, "\r\n") != 0 && strcmp(line + k, "\r") != 0 && seen++ == row) {
            found = no;
        }
    }
    free(line);
    fclose(f);
    return found;
}

/*
 * Collective: a score that is not a number (a row whose terms overflow to +inf and
 * -inf, features near double precision's limits) names no class and no probability;
 * it ends the run, naming the first such example, rather than printing "nan" and
 * dropping it from the metrics (before: exit 0).
 */
static int predict_nan_scores(const char *path, const double *scores, int64_t n, int rank)
{
    int64_t off = 0, bad = INT64_MAX, r;
    long long line;

    if (world != MPI_COMM_NULL) {
        MPI_Exscan(&n, &off, 1, MPI_INT64_T, MPI_SUM, world);
    }
    off = (rank == 0) ? 0 : off;
    for (r = 0; r < n && bad == INT64_MAX; r++) {
        bad = isnan(scores[r]) ? off + r : INT64_MAX;
    }
    st_tool_allreduce(world, &bad, 1, MPI_INT64_T, MPI_MIN);
    if (bad == INT64_MAX) {
        return 0;
    }
    if (rank == 0) {
        line = predict_example_line(path, bad);
        if (line > 0) {
            fprintf(stderr, PREDICT_NAME ": %s:%lld: ", path, line);
        } else {
            fprintf(stderr, PREDICT_NAME ": %s: example %lld: ", path, (long long)bad + 1);
        }
        fprintf(stderr, "its score is not a number (its terms overflow double precision "
                "both ways); scale the features\n");
    }
    return 1;
}

static int predict_is_logistic(const strata_glm_model_t *model)
{
    const char *name = strata_glm_model_solver(model);

    return !strcmp(name, "logistic") || !strcmp(name, "l1-logistic");
}

/* A regression model meeting labels that are all -1/+1 or all 0/1: the user most
 * likely gave a classification set. @return 1 when that is so over all ranks. */
static int predict_labels_look_binary(const strata_glm_problem_t *prob)
{
    const st_glm_data_t *d = prob->data;
    int flags[2] = {1, 1};    /* all in {-1, 1}; all in {0, 1} */
    int64_t i;

    for (i = 0; i < d->n_rows; i++) {
        flags[0] &= (d->y[i] == 1.0 || d->y[i] == -1.0);
        flags[1] &= (d->y[i] == 1.0 || d->y[i] == 0.0);
    }
    st_tool_allreduce(world, flags, 2, MPI_INT, MPI_LAND);
    return d->n_rows_global > 0 && (flags[0] || flags[1]);
}

/* What the output lines say: a row's value (regression) or label, and with -b 1 the
 * probability of each of the model's k classes, after their header line; computed a
 * row at a time as the lines are formatted (the probabilities of more than two classes
 * from the row itself: @a row and @a probs are scratch). */
typedef struct {
    const strata_glm_model_t *model;
    const st_glm_data_t      *data;
    const double             *scores;   /* strata_glm_predict's */
    int                       probability;
    int                       k;
    const double             *classes;  /* k, in the model file's order */
    int                       one_second; /* a binary model whose file says "label 0 1"
                                             or "label -1 1": class 1 second */
    double                   *row;      /* the longest row's values in double */
    double                   *probs;    /* k */
    size_t                    line_max; /* longest line */
    size_t                    chunk;    /* bytes formatted and sent at a time */
} predict_out_t;

/* Row @a i's label, and its probabilities into o->probs with -b 1. */
static double predict_row(const predict_out_t *o, int64_t i)
{
    const strata_glm_model_t *model = o->model;
    const st_glm_data_t *d = o->data;
    double label, p;
    int64_t k, len;

    label = strata_glm_predict_class(model, o->scores[i]);   /* (0/1 models: 0, not -1) */
    if (!o->probability) {
        return label;
    }
    if (o->k == 2) {   /* (P(1) first, or second after a file's "label 0 1": its order) */
        p                           = strata_glm_predict_prob(model, o->scores[i]);
        o->probs[o->one_second]  = p;
        o->probs[!o->one_second]    = 1.0 - p;
        return label;
    }
    len = d->indptr[i + 1] - d->indptr[i];
    for (k = 0; k < len; k++) {
        o->row[k] = st_glm_data_val(d, d->indptr[i] + k);
    }
    strata_glm_predict_probability(model, len, d->indices + d->indptr[i], o->row, o->probs);
    return label;
}

/* Output lines of rows [*next, n) into @a buf (o->chunk bytes) until it is nearly
 * full; the header line first on rank 0 with -b 1. @return the bytes. */
static size_t predict_format(const predict_out_t *o, int64_t n, int header, int64_t *next,
                             char *buf)
{
    size_t len = 0, cap = o->chunk;
    double label;
    int64_t i;
    int c;

    /* the classes as the model names them (0 for -1 where it was trained on 0/1), as
       LIBLINEAR's header prints them (integers: %.17g writes them whole) */
    if (header) {
        len += (size_t)snprintf(buf, cap, "labels");
        for (c = 0; c < o->k; c++) {
            len += (size_t)snprintf(buf + len, cap - len, " %.17g", o->classes[c]);
        }
        len += (size_t)snprintf(buf + len, cap - len, "\n");
    }
    for (i = *next; i < n && cap - len >= o->line_max; i++) {
        if (o->k == 0) {
            len += (size_t)snprintf(buf + len, cap - len, "%.17g\n", o->scores[i]);
            continue;
        }
        label = predict_row(o, i);
        len  += (size_t)snprintf(buf + len, cap - len, "%.17g", label);
        for (c = 0; o->probability && c < o->k; c++) {
            len += (size_t)snprintf(buf + len, cap - len, " %g", o->probs[c]);
        }
        len += (size_t)snprintf(buf + len, cap - len, "\n");
    }
    *next = i;
    return len;
}

/*
 * Write every rank's output lines to @a path in rank order, in pieces of at most
 * o->chunk bytes (@a buf, one per rank): rank 0 formats and writes its own rows,
 * then receives each other rank's pieces in turn (an empty piece ends a rank's). Memory
 * stays bounded and no file system needs to be shared. Rank 0 keeps receiving after a
 * write error, so no rank is left blocked in a send. @return 0 or -1 (the same on every
 * rank; rank 0 printed why).
 */
static int predict_write(const char *path, const predict_out_t *o,
                         const predict_opts_t *opts, int64_t n, char *buf, int rank, int size)
{
    int64_t next = 0;
    st_glm_out_t out;
    const char *lost;
    MPI_Status st;
    FILE *f = NULL;
    int r, count, err = 0, first = 1;
    size_t len;

    if (rank != 0) {
        do {
            len = predict_format(o, n, 0, &next, buf);
            MPI_Send(buf, (int)len, MPI_CHAR, 0, 0, world);
        } while (len > 0);
    } else {
        /* written next to it, renamed over it once whole */
        if (st_glm_out_open(&out, path) != 0 || (f = fdopen(out.fd, "w")) == NULL) {
            err = errno;
        }
        do {
            len = predict_format(o, n, opts->probability && first, &next, buf);
            first = 0;
            if (f != NULL && err == 0 && len > 0 && fwrite(buf, 1, len, f) != len) {
                err = errno;
            }
        } while (len > 0);
        for (r = 1; r < size; r++) {
            do {
                MPI_Recv(buf, (int)o->chunk, MPI_CHAR, r, 0, world, &st);
                MPI_Get_count(&st, MPI_CHAR, &count);
                if (f != NULL && err == 0 && count > 0 &&
                    fwrite(buf, 1, (size_t)count, f) != (size_t)count) {
                    err = errno;
                }
            } while (count > 0);
        }
        if (f != NULL && fflush(f) != 0 && err == 0) {
            err = errno;
        }
        if (f != NULL && err == 0) {
            err = st_glm_out_commit(&out);
        }
        if (f != NULL) {
            fclose(f);
            out.fd = -1;
        }
        lost = st_glm_out_lost(&out);
        st_glm_out_close(&out);   /* (the temporary too, unless renamed) */
        if (err != 0) {
            fprintf(stderr, PREDICT_NAME ": %s: %s (%s)\n", path, strerror(err), lost);
        }
    }
    st_tool_bcast(world, &err, 1, MPI_INT);
    return (err != 0) ? -1 : 0;
}

/* the metrics (rank 0): LIBLINEAR's lines, then Strata's; regression: @a sums are
 * st_tool_regression_sums' */
static void predict_print_metrics(const strata_glm_metrics_t *m, int classification,
                                  int classes, const double *sums, FILE *f)
{
    double n = (double)m->n;

    if (!classification) {
        /* LIBLINEAR's two lines, its formulas */
        fprintf(f, "Mean squared error = %g (regression)\n", sums[0] / n);
        fprintf(f, "Squared correlation coefficient = %g (regression)\n",
                st_tool_squared_correlation(sums, n));
        fprintf(f, "RMSE = %g (regression, %" PRId64 " rows)\n", m->rmse, m->n);
        return;
    }
    fprintf(f, "Accuracy = %g%% (%" PRId64 "/%" PRId64 ")\n", 100.0 * m->accuracy,
            (int64_t)llround(m->accuracy * (double)m->n), m->n);
    if (classes != 2) {   /* (one class, or more than two) */
        return;   /* (LIBLINEAR's line alone) */
    }
    if (isnan(m->auc)) {
        fprintf(f, "AUC = nan (the test set holds one class, or classes the model has not)\n");
    } else {
        fprintf(f, "AUC = %.6f\n", m->auc);
    }
    if (!isnan(m->logloss)) {
        fprintf(f, "Log loss = %.6f\n", m->logloss);
    }
}

/* Did every rank read the same model (each reads the file itself: without a shared
 * file system, files of one name may differ)? Ranks with models of different kinds
 * would take different paths and wait for each other; with other weights, print
 * metrics of no one model. One allreduce of a hash and its complement. */
static int predict_models_alike(const strata_glm_model_t *model)
{
    uint64_t h[2];

    h[0] = st_glm_model_hash(model);
    h[1] = ~h[0];
    st_tool_allreduce(world, h, 2, MPI_UINT64_T, MPI_MAX);
    return h[0] == ~h[1];
}

/* The output lines' set-up for this rank's rows: @a o, its scratch (@a row_p, @a
 * probs_p, freed by the caller). @return 0, -1 without memory. */
static int predict_outputs(const strata_glm_model_t *model, const strata_glm_problem_t *prob,
                           const predict_opts_t *opts, const double *scores, predict_out_t *o,
                           double **row_p, double **probs_p)
{
    static const double pm[2] = {1.0, -1.0}, zo[2] = {1.0, 0.0};
    static const double mp[2] = {-1.0, 1.0}, oz[2] = {0.0, 1.0};   /* LIBLINEAR's files */
    const st_glm_data_t *d = prob->data;
    int64_t i, maxlen = 0;

    memset(o, 0, sizeof(*o));
    o->model       = model;
    o->data        = d;
    o->scores      = scores;
    o->probability = opts->probability;
    o->k           = strata_glm_model_classes(model, NULL);
    /* the classes in the file's label line's order, as LIBLINEAR's predict -b 1 writes
       them and their probabilities (before: 1 first whatever the file said) */
    o->one_second  = (model->nr_class == 0 && model->zero_positive);
    o->classes     = (model->nr_class > 0) ? model->labels
                     : o->one_second ? (model->zero_one ? oz : mp)
                                     : (model->zero_one ? zo : pm);
    o->line_max    = PREDICT_LINE_MAX + (opts->probability ? 16 * (size_t)o->k : 0);
    o->chunk       = ST_MAX((size_t)PREDICT_CHUNK, 4 * o->line_max);
    if (!opts->probability) {
        return 0;
    }
    for (i = 0; i < d->n_rows; i++) {
        maxlen = ST_MAX(maxlen, d->indptr[i + 1] - d->indptr[i]);
    }
    *row_p   = o->row   = malloc((size_t)ST_MAX(maxlen, 1) * sizeof(double));
    *probs_p = o->probs = malloc((size_t)ST_MAX(o->k, 2) * sizeof(double));
    return (o->row != NULL && o->probs != NULL) ? 0 : -1;
}

static int predict_run(const predict_opts_t *opts, int rank, int size)
{
    char msg[PREDICT_MSG_LEN] = "";
    strata_glm_model_t *model = NULL;
    strata_glm_problem_t *prob = NULL;
    strata_glm_metrics_t metrics;
    strata_status_t status;
    double *scores = NULL, *row = NULL, *probs = NULL, sums[ST_TOOL_REG_SUMS] = {0};
    predict_out_t out;
    char *buf = NULL;
    int classification, rc = 1, failed;
    int64_t n;

    /* an output file rank 0 cannot write: said before any work (before: after the
       metrics, with "the file is unchanged" of a file that did not exist) */
    failed = (rank == 0 && st_tool_unwritable(PREDICT_NAME, opts->output_file,
                                              "the predictions"));
    st_tool_allreduce(world, &failed, 1, MPI_INT, MPI_MAX);
    if (failed) {
        goto out;
    }
    /* every rank reads the (small) model file itself */
    status = strata_glm_model_load(opts->model_file, msg, sizeof(msg), &model);
    if (predict_any_failed(status != STRATA_OK, msg, rank, size)) {
        goto out;
    }
    if (!predict_models_alike(model)) {
        if (rank == 0) {
            fprintf(stderr, PREDICT_NAME ": the ranks read different models from %s (each "
                    "rank reads it: give them all the same file)\n", opts->model_file);
        }
        goto out;
    }
    classification = model->loss->classification;
    if (opts->probability && !predict_is_logistic(model)) {
        if (rank == 0) {
            fprintf(stderr, PREDICT_NAME ": -b 1: probabilities come from logistic models "
                    "only; %s holds a '%s' model\n", opts->model_file,
                    strata_glm_model_solver(model));
        }
        goto out;
    }

    status = strata_glm_problem_read(opts->test_file, !classification, world, msg,
                                     sizeof(msg), &prob);
    if (status != STRATA_OK) {
        if (rank == 0) {
            fprintf(stderr, PREDICT_NAME ": %s\n", msg);
            if (classification && strstr(msg, "not a class label") != NULL) {
                fprintf(stderr, PREDICT_NAME ": %s holds a '%s' model: the test set needs "
                        "class labels (integers)\n", opts->model_file,
                        strata_glm_model_solver(model));
            }
        }
        goto out;
    }
    if (!classification && !opts->force && predict_labels_look_binary(prob)) {
        if (rank == 0) {
            fprintf(stderr, PREDICT_NAME ": %s holds a '%s' (regression) model but every label "
                    "of %s is -1/+1 or 0/1: a classification set? (--force predicts anyway)\n",
                    opts->model_file, strata_glm_model_solver(model), opts->test_file);
        }
        goto out;
    }

    n      = strata_glm_problem_rows(prob);
    scores = malloc((size_t)(n > 0 ? n : 1) * sizeof(double));
    failed = (scores == NULL || strata_glm_predict(model, prob, scores) != STRATA_OK);
    if (predict_any_failed(failed, "out of memory for the scores", rank, size) ||
        predict_nan_scores(opts->test_file, scores, n, rank)) {
        goto out;
    }
    status = strata_glm_evaluate(model, prob, world, &metrics);
    if (status != STRATA_OK) {
        if (rank == 0) {
            fprintf(stderr, PREDICT_NAME ": evaluation failed: %s\n",
                    strata_status_string(status));
        }
        goto out;
    }
    if (!classification) {
        st_tool_regression_sums(world, scores, prob->data->y, prob->data->n_rows, sums);
    }
    if (rank == 0 && !opts->quiet) {
        predict_print_metrics(&metrics, classification, strata_glm_model_classes(model, NULL),
                              sums, opts->metrics);
        fflush(opts->metrics);
    }

    if (opts->output_file != NULL) {
        failed = predict_outputs(model, prob, opts, scores, &out, &row, &probs) != 0 ||
                 (buf = malloc(out.chunk)) == NULL;
        if (predict_any_failed(failed, "out of memory for the output lines", rank, size)) {
            goto out;
        }
        if (predict_write(opts->output_file, &out, opts, n, buf, rank, size) != 0) {
            goto out;
        }
    }
    rc = 0;

out:
    free(buf);
    free(row);
    free(probs);
    free(scores);
    if (prob != NULL) {
        strata_glm_problem_free(prob);
    }
    strata_glm_model_free(model);
    return rc;
}

int main(int argc, char **argv)
{
    predict_opts_t opts;
    int rank, size, rc;

    st_stdout_check("strata-predict");

    world = st_tool_mpi_init(&argc, &argv, &rank, &size);

    if (!st_tool_args_agree(world, argc, argv)) {
        if (rank == 0) {
            fprintf(stderr, PREDICT_NAME ": the ranks were not given the same command line "
                    "(an MPMD launch: every rank must run the same options and files)\n");
        }
        st_tool_mpi_finalize(world);
        return 2;
    }
    if (predict_parse_args(argc, argv, rank, &opts) != 0) {
        if (rank == 0) {
            fprintf(stderr, "Try '" PREDICT_NAME " --help'.\n");
        }
        st_tool_mpi_finalize(world);
        return 2;
    }
    if (opts.help) {
        if (rank == 0 && opts.help == 2) {
            printf(PREDICT_NAME " %s\n", PACKAGE_VERSION);
        } else if (rank == 0) {
            predict_usage(stdout);
        }
        st_tool_mpi_finalize(world);
        return 0;
    }
    rc = predict_run(&opts, rank, size);
    st_tool_mpi_finalize(world);
    return rc;
}
