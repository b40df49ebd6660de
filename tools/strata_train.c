/*
 * strata-train: train a GLM over MPI ranks (LIBLINEAR's train, distributed).
 *
 *   mpirun -np 4 strata-run strata-train -s logistic -l 1e-5 train.svm model.txt
 *
 * Rank 0 prints a progress line per round (primal objective, duality gap, time)
 * unless -q; the model is written by rank 0 in LIBLINEAR's format. With
 * --checkpoint-every N the training's state goes to MODEL_FILE.ckpt after every N
 * rounds, and --resume continues from it. With -v N it cross-validates instead (N
 * folds, LIBLINEAR's train -v), with -C it searches C by cross-validation (LIBLINEAR's
 * train -C); neither writes a model. Started alone (no launcher's variables: st_tool.h)
 * it is one process and initializes no MPI.
 */
#include "config.h"

#include "strata_glm.h"
#include "st_tool.h"
#include "st_stdout.h"
#include "st_glm.h"   /* the targets, for -v's squared correlation: no public accessor */

#include <dlfcn.h>
#include <errno.h>
#include <float.h>
#include <getopt.h>
#include <limits.h>
#include <malloc.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

static int rank;
static MPI_Comm world = MPI_COMM_NULL;   /* MPI_COMM_WORLD; MPI_COMM_NULL alone (st_tool.h) */

static void usage(FILE *f)
{
    fprintf(f,
            "Usage: strata-train [OPTION]... TRAIN_FILE [MODEL_FILE]\n"
            "       strata-train -v N [OPTION]... TRAIN_FILE\n"
            "       strata-train -C [-v N] [-c START] [OPTION]... TRAIN_FILE\n"
            "Train a linear model on TRAIN_FILE (svmlight text or strata-gen binary), every\n"
            "MPI rank on its share of the rows (started alone, not by mpirun or srun: one\n"
            "process, no MPI); MODEL_FILE defaults to TRAIN_FILE's name + \".model\" in the\n"
            "current directory. With -v, cross-validate instead; with -C, find the best C\n"
            "by cross-validation.\n"
            "  -s, --solver NAME     logistic (default), svm, sqsvm, ridge, svr, sqsvr;\n"
            "                        lasso, l1-logistic, elastic-net, l1-sqsvm; or\n"
            "                        LIBLINEAR's number of the same model: 0 and 7\n"
            "                        logistic, 1 and 2 sqsvm, 3 svm, 5 l1-sqsvm, 6\n"
            "                        l1-logistic, 11 and 12 sqsvr, 13 svr (then -c\n"
            "                        defaults to 1; -e stays a duality gap; 4, 21: none\n"
            "                        here)\n"
            "  -l, --lambda X        regularization lambda > 0 (default 1e-4): minimizes\n"
            "                        (1/n) sum loss + lambda/2 ||w||^2\n"
            "  -c, --cost C          LIBLINEAR's C instead of -l: lambda = 1/(C n)\n"
            "                        (default with a numeric -s: C = 1, LIBLINEAR's)\n"
            "      --eta X           elastic net's L1 share in [0, 1] (default 0.5;\n"
            "                        -s elastic-net only)\n"
            "      --epsilon X       svr, sqsvr: errors |x.w - y| up to X cost nothing\n"
            "                        (default 0.1; -p X as LIBLINEAR's with these models)\n"
            "  -e, --tol X           stop at relative duality gap X (default 1e-3; 0: run\n"
            "                        all -r rounds)\n"
            "  -r, --rounds N        at most N rounds (default 200)\n"
            "      --gap-every N     the gap (and the stopping test, and the progress\n"
            "                        line) every N rounds only (default 1); auto: when\n"
            "                        the gap's fall so far says it may have reached -e\n"
            "  -E, --local-epochs N  passes over a rank's rows per round (default 1)\n"
            "  -t, --threads N       threads per rank, 1 to 1024 (default 1)\n"
            "      --thread-mode M   replicas (default): a model copy per thread, merged\n"
            "                        each round, results independent of thread timing;\n"
            "                        shared: one model vector, atomic updates, more\n"
            "                        progress per round\n"
            "      --feature-order O L2 models (cd and newton; refused with lbfgs and\n"
            "                        the L1 models), the model vector's layout while\n"
            "                        training: frequency (the most frequent columns\n"
            "                        first, so they share cache lines), given, or auto\n"
            "                        (default: frequency from 131072 columns, and\n"
            "                        with shared threads); the same model either way\n"
            "      --method M        cd: coordinate descent (SDCA and CoCoA+ for L2\n"
            "                        models); lbfgs: L-BFGS on the primal, for logistic,\n"
            "                        sqsvm, ridge, sqsvr (best where rows >> columns and\n"
            "                        the features are dense; -r counts iterations);\n"
            "                        newton: Newton-CG on the primal, for the same\n"
            "                        models (best where lambda x rows is small); auto\n"
            "                        (default): lbfgs where it applies, rows >= columns\n"
            "                        and >= 5%% of the entries are stored (newton from\n"
            "                        its point if it is short of -e after 100 rounds);\n"
            "                        else newton where the dual's condition number is\n"
            "                        >= 10; else cd\n"
            "                        (always cd with --gpu, --hierarchical or\n"
            "                        checkpoints, and for svm and svr). L1 models across\n"
            "                        ranks: newton (auto's choice) is block proximal\n"
            "                        Newton, cd ProxCoCoA+; on one rank their serial\n"
            "                        solver\n"
            "      --hierarchical    hierarchical CoCoA+ (L2 models, method cd; refused\n"
            "                        with lbfgs, newton and the L1 models): each round\n"
            "                        sums the ranks' updates over each node several\n"
            "                        times (inner rounds), then once over all ranks\n"
            "      --inner-rounds N  inner rounds per round with --hierarchical (default\n"
            "                        0: chosen from the measured communication costs)\n"
            "      --gpu             L2 models (method cd or newton; refused with lbfgs\n"
            "                        and the L1 models): each rank's local solver on a GPU\n"
            "                        (TPA-SCD; rows in GPU memory, float values); -t N:\n"
            "                        N threads for the rest of a round (and to gather\n"
            "                        streamed rows); with --method newton: its\n"
            "                        conjugate gradients on the GPU\n"
            "      --gpu-mem SIZE    with --gpu: GPU memory a rank may use (K, M, G;\n"
            "                        default: what is free, shared by the ranks on\n"
            "                        the GPU); rows beyond it stream (--method\n"
            "                        newton: they must fit, or it is refused)\n"
            "      --gpu-rows N      with --gpu: rows stepped on at once (1 to 65535;\n"
            "                        default: the GPU's resident warps where rows share\n"
            "                        few features, else %d); each row's step is safe\n"
            "                        for a mini-batch of N rows (not with --method\n"
            "                        newton)\n"
            "  -p, --prec P          hold the feature values in P = 32 or 64 bits (-p:\n"
            "                        epsilon with svr and sqsvr, as LIBLINEAR's)\n"
            "                        (default: 64 for text, the file's for binary);\n"
            "                        32 rounds each to a float: half their memory\n"
            "  -B, --bias X          add a constant feature X (an intercept; default none)\n"
            "      --weight-pos X    weight of the +1 examples (default 1)\n"
            "      --weight-neg X    weight of the -1 examples (default 1)\n"
            "  -wLABEL X             LIBLINEAR's class weights: the rows of class LABEL weigh\n"
            "                        X (-w1 X: --weight-pos X; with more than two classes,\n"
            "                        in that class's model against the rest)\n"
            "      --seed N          seed of the coordinate order, 0 to 2^64-1 (default 1)\n"
            "      --test FILE       after training, print the metrics on FILE\n"
            "  -v, --cross-validation N  N-fold cross-validation (LIBLINEAR's -v): train N\n"
            "                        models, each on all folds but one, and print the\n"
            "                        metrics of every example scored by the model that\n"
            "                        did not see it; writes no model\n"
            "  -C, --find-c          LIBLINEAR's -C: cross-validate (-v N folds, default\n"
            "                        5) at C = START, 2 START, ... up to 1024 (START: -c,\n"
            "                        default from the data) and print the best C; writes\n"
            "                        no model. sqsvr (-s 11, 12): the best C up to 2^20\n"
            "                        and epsilon from 19/20 of the largest |target| (or\n"
            "                        -p) down to 0 in twentieths, as LIBLINEAR's\n"
            "      --checkpoint-every N  write the training's state after every N rounds\n"
            "                        (atomically) to the checkpoint file\n"
            "      --checkpoint FILE the checkpoint file (default MODEL_FILE.ckpt)\n"
            "      --resume          continue from the checkpoint file: the same data,\n"
            "                        ranks, threads and parameters give the model the\n"
            "                        uninterrupted run would have given\n"
            "  -q, --quiet           no progress lines\n"
            "  -h, --help            this message\n"
            "      --version         print the version and exit\n"
            "Exit status: 0 trained (converged or not), 1 a run-time error, 2 bad usage.\n",
            STRATA_GLM_GPU_ROWS);
}

static void die_usage(const char *fmt, ...)
{
    va_list ap;

    if (rank == 0) {
        fprintf(stderr, "strata-train: ");
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fprintf(stderr, "\nTry 'strata-train --help'.\n");
    }
    st_tool_mpi_finalize(world);
    exit(2);
}

/*
 * getopt_long's '?' (opterr 0), with @a arg = argv[optind - 1]. GNU getopt sets
 * optopt to the option's value for a long option given a value it takes none of
 * ("--quiet=1": then @a arg is that argument), to the character of an unknown
 * short option (@a arg may then be an earlier argument: "-r 5 -xq" is at "5"),
 * and to 0 for an unknown or ambiguous long option (@a arg is it).
 */
static void bad_option(const char *arg, const struct option *longopts)
{
    const struct option *o;

    for (o = longopts; optopt != 0 && o->name != NULL; o++) {
        if (o->val == optopt && o->has_arg == no_argument) {
            die_usage("option '--%s' takes no value ('%s')", o->name, arg);
        }
    }
    if (optopt != 0) {
        die_usage("unknown option '-%c'", optopt);
    }
    die_usage("unknown or ambiguous option '%s'", arg);
}

static double parse_double(const char *opt, const char *s)
{
    char *end;
    double v;

    errno = 0;
    v     = strtod(s, &end);
    /* ERANGE with a finite result: an underflow (1e-320), a number still */
    if (*s == '\0' || *end != '\0' || !isfinite(v)) {
        die_usage("option %s needs a number", opt);
    }
    return v;
}

/* The index of @a s in @a names (NULL-terminated, listed in the order of the values
 * they stand for); else a usage error, @a fmt naming the choices. */
static int parse_choice(const char *s, const char *const *names, const char *fmt)
{
    int i;

    for (i = 0; names[i] != NULL; i++) {
        if (strcmp(s, names[i]) == 0) {
            return i;
        }
    }
    die_usage(fmt, s);
    return -1;
}

/* @a s as a whole decimal integer into *v_p; 0 when it is not one (or out of range). */
static int str_to_long(const char *s, long *v_p)
{
    char *end;

    errno = 0;
    *v_p  = strtol(s, &end, 10);
    return !(*s == '\0' || *end != '\0' || errno == ERANGE);
}

/*
 * LIBLINEAR's train -s numbers (its README and train usage, 2.3 to 2.4x): the Strata
 * model of the same objective (solver/MODELS.md 1.1: lambda = 1/(C n) for each), or
 * NULL with what LIBLINEAR's solves and what comes nearest here. The primal and dual
 * variants (0/7, 1/2) are methods for one problem: --method picks Strata's.
 */
static const struct {
    int         type;
    const char *liblinear;  /* LIBLINEAR's solver_type name */
    const char *solver;     /* Strata's model, or NULL */
    const char *what;       /* NULL solver: LIBLINEAR's model, and the nearest here */
} liblinear_types[] = {
    {0,  "L2R_LR",              "logistic",    NULL},
    {1,  "L2R_L2LOSS_SVC_DUAL", "sqsvm",       NULL},
    {2,  "L2R_L2LOSS_SVC",      "sqsvm",       NULL},
    {3,  "L2R_L1LOSS_SVC_DUAL", "svm",         NULL},
    {4,  "MCSVM_CS",            NULL,
     "Crammer and Singer's joint multi-class SVM; Strata trains more than two classes "
     "one against the rest (nearest: -s svm, the hinge loss)"},
    {5,  "L1R_L2LOSS_SVC",      "l1-sqsvm",    NULL},
    {6,  "L1R_LR",              "l1-logistic", NULL},
    {7,  "L2R_LR_DUAL",         "logistic",    NULL},
    {11, "L2R_L2LOSS_SVR",      "sqsvr",       NULL},
    {12, "L2R_L2LOSS_SVR_DUAL", "sqsvr",       NULL},
    {13, "L2R_L1LOSS_SVR_DUAL", "svr",         NULL},
    {21, "ONECLASS_SVM",        NULL,
     "the one-class SVM (outlier detection); Strata has no such model"},
};

#define LIBLINEAR_TYPES "0-7, 11-13, 21"
#define MODEL_NAMES     "logistic, svm, sqsvm, ridge, lasso, l1-logistic, elastic-net, " \
                        "l1-sqsvm, svr, sqsvr"

/* The models, as the checks below need them (MODEL_NAMES in this order) */
static const struct {
    const char *name;
    int         regression;   /* real targets, every row weighing 1 */
    int         l1;           /* the L1 models: one thread */
    int         svr;          /* takes epsilon (-p, --epsilon) */
} models[] = {
    {"logistic", 0, 0, 0}, {"svm", 0, 0, 0},         {"sqsvm", 0, 0, 0},
    {"ridge", 1, 0, 0},    {"lasso", 1, 1, 0},       {"l1-logistic", 0, 1, 0},
    {"elastic-net", 1, 1, 0}, {"l1-sqsvm", 0, 1, 0}, {"svr", 1, 0, 1},
    {"sqsvr", 1, 0, 1},
};

/* @a name's entry in models[] (in any case, as the library takes it), or -1 */
static int model_index(const char *name)
{
    size_t i;

    for (i = 0; name != NULL && i < sizeof(models) / sizeof(models[0]); i++) {
        if (!strcasecmp(name, models[i].name)) {
            return (int)i;
        }
    }
    return -1;
}

/* -s: a model name (in any case; given back in its own, which the checks below compare;
 * an unknown one is left to strata_glm_check_param), or LIBLINEAR's number of one
 * (*type_p = it; else -1); a number Strata has no model for is a usage error. */
static const char *parse_solver(const char *s, int *type_p)
{
    size_t i;
    long v;
    int m;

    *type_p = -1;
    if (!(s[0] >= '0' && s[0] <= '9') &&
        !((s[0] == '-' || s[0] == '+') && s[1] >= '0' && s[1] <= '9')) {
        return ((m = model_index(s)) >= 0) ? models[m].name : s;
    }
    if (!str_to_long(s, &v)) {
        die_usage("-s '%s' is neither a model name (" MODEL_NAMES ") nor a LIBLINEAR "
                  "solver type (" LIBLINEAR_TYPES ")", s);
    }
    for (i = 0; i < sizeof(liblinear_types) / sizeof(liblinear_types[0]); i++) {
        if (liblinear_types[i].type != v) {
            continue;
        }
        if (liblinear_types[i].solver == NULL) {
            die_usage("-s %ld is LIBLINEAR's %s: %s", v, liblinear_types[i].liblinear,
                      liblinear_types[i].what);
        }
        *type_p = (int)v;
        return liblinear_types[i].solver;
    }
    die_usage("-s %s is not a LIBLINEAR solver type (those are " LIBLINEAR_TYPES
              ") nor a model name (" MODEL_NAMES ")", s);
    return NULL;
}

static long parse_long(const char *opt, const char *s)
{
    long v;

    if (!str_to_long(s, &v)) {
        die_usage("option %s needs an integer", opt);
    }
    return v;
}

/* --seed: 0 to 2^64-1, as strata-gen's (a sign or anything beyond is refused, not
 * wrapped). */
static uint64_t parse_seed(const char *s)
{
    unsigned long long v;
    char *end;

    errno = 0;
    v     = strtoull(s, &end, 10);
    if (*s < '0' || *s > '9' || *end != '\0' || errno != 0) {
        die_usage("option --seed needs an integer from 0 to 2^64-1, not '%s'", s);
    }
    return (uint64_t)v;
}

/* An integer option stored as an int: out of its range is an error, not a wrap. */
static int parse_int(const char *opt, const char *s)
{
    long v = parse_long(opt, s);

    if (v < INT_MIN || v > INT_MAX) {
        die_usage("option %s: %s is out of range (at most %d)", opt, s, INT_MAX);
    }
    return (int)v;
}

/* --prec P (or -p P for a model without epsilon, @a opt "-p"): 32 or 64 */
static void set_prec(int *prec_p, const char *opt, const char *s)
{
    *prec_p = parse_int(opt, s);
    if (*prec_p != 32 && *prec_p != 64) {
        die_usage("%s (the values' precision) must be 32 or 64, not '%s'", opt, s);
    }
}

/* A byte count with an optional K, M or G suffix (powers of 1024), >= 0. */
static int64_t parse_size(const char *opt, const char *s)
{
    char *end;
    double v;

    errno = 0;
    v     = strtod(s, &end);
    if (end != s && *end != '\0' && end[1] == '\0') {
        switch (*end) {
        case 'k': case 'K': v *= 1024.0; end++; break;
        case 'm': case 'M': v *= 1048576.0; end++; break;
        case 'g': case 'G': v *= 1073741824.0; end++; break;
        default: break;
        }
    }
    if (*s == '\0' || *end != '\0' || errno == ERANGE || !(v >= 0) || v > 9.2e18) {
        (void)opt;
        die_usage("option --gpu-mem needs a size in bytes (K, M or G allowed), not '%s'", s);
    }
    return (int64_t)v;
}

/* Is Strata's MPI_Allreduce the one this process calls (strata-run preloads it)? */
static const char *allreduce_name(void)
{
    int (*active)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "strata_active");

    if (world == MPI_COMM_NULL) {
        return "none (one process, no MPI)";
    }
    return (active != NULL && active()) ? "Strata (preloaded)" : "Open MPI's";
}

/* What would otherwise fail only after the training, or at its first checkpoint
 * (collective): a --test file this rank cannot read, a model or checkpoint file rank 0
 * (the writer of both) cannot write: no such directory, or one that takes no new file
 * (before: the checkpoint's was found at the first checkpoint, the rounds so far lost).
 * Each rank names its own; @return 0, or -1 on every rank. */
static int early_checks(const char *test_file, const char *model_file, const char *ckpt_file)
{
    const char *files[2] = {model_file, ckpt_file}, *what[2] = {"the model", "checkpoints"};
    int bad = 0, k;

    if (test_file != NULL && access(test_file, R_OK) != 0) {
        fprintf(stderr, "strata-train: %s: cannot read the test file: %s\n", test_file,
                strerror(errno));
        bad = 1;
    }
    for (k = 0; k < 2 && rank == 0; k++) {
        bad |= st_tool_unwritable("strata-train", files[k], what[k]);
    }
    st_tool_allreduce(world, &bad, 1, MPI_INT, MPI_MAX);
    return bad ? -1 : 0;
}

/* a relative gap from which no number of rounds is expected to come back */
#define ST_TRAIN_FAR_OFF 1e6

/* The training data's classes where more than two (one-vs-rest: the info sums them) */
static int train_classes;
/* an L1 model (lasso, l1-logistic, elastic-net, l1-sqsvm); the ranks */
static int train_l1, train_nranks = 1;

/* Rank 0, a run that ended before the gap reached -e (LIBLINEAR warns as well):
 * say so on stderr, with what would help. Not for -e 0 (a fixed number of rounds). */
static void warn_unconverged(const strata_glm_info_t *info, const strata_glm_param_t *param,
                             const char *what)
{
    const char *s = param->solver;
    double rel    = st_glm_rel_gap(info->gap, info->primal);
    const char *hint;

    if (train_classes > 2) {   /* (the rounds and the gap are the classes' sums) */
        fprintf(stderr, "strata-train: warning: %sthe training of a class (of %d, each against "
                "the rest) stopped before its relative gap reached -e %g (all classes: %d "
                "rounds, summed relative gap %.3e): raise -r (a class's rounds)\n", what,
                train_classes, param->tol, info->rounds, rel);
        return;
    }
    if (!(rel < ST_TRAIN_FAR_OFF) || (!(rel <= 1) && info->rounds < param->max_rounds)) {
        /* a gap far beyond the objective (infinite, 1e265), or beyond it where the
           method stopped by itself: far from any optimum, where neither more rounds nor
           a larger -e help (a run that was still going at -r, 2400 times the objective
           after 3 Newton steps in tests/glm_train.sh, is told to raise -r) */
        hint = "the certificate is far off: features of very different scales, or values "
               "near the limits of double precision (scale the features)";
    } else if (info->rounds < param->max_rounds) {
        /* L-BFGS and Newton end when no step changes P any more */
        hint = "no step makes progress any more in double precision; a larger -e is within "
               "reach";
    } else if (info->method == STRATA_GLM_METHOD_CD &&
               (!strcmp(s, "logistic") || !strcmp(s, "sqsvm") || !strcmp(s, "ridge") ||
                !strcmp(s, "sqsvr")) &&
               param->checkpoint == NULL && !param->hierarchical) {
        /* SDCA needs many epochs where lambda n is small or the features' scales differ
           widely (a model worse than w = 0 after thousands of rounds, bench/GLM.md); the
           primal methods take no checkpoints or hierarchical schedule, L-BFGS no GPU */
        hint = param->gpu ? "raise -r, or try --method newton (fewer passes where lambda n "
                            "is small or the features' scales differ widely)"
                          : "raise -r, or try --method newton or lbfgs (fewer passes where "
                            "lambda n is small or the features' scales differ widely)";
    } else if (info->method == STRATA_GLM_METHOD_LBFGS) {
        /* L-BFGS (auto's pick for dense rows outnumbering the columns) crawls where the
           curvature is uneven: classes nearly separable at a small lambda (a squared
           hinge's rows past the margin add none), features of very different scales;
           -s sqsvm, 74 rows of 37 dense features, lambda 7.8e-4, 3 ranks: relative gap
           819 after 200 rounds, where newton converges in 74 */
        hint = "raise -r, or try --method newton (fewer rounds where classes are nearly "
               "separable at a small lambda or the features' scales differ widely)";
    } else if (info->method == STRATA_GLM_METHOD_CD && train_l1 && train_nranks > 1 &&
               param->checkpoint == NULL) {
        /* ProxCoCoA+ across ranks: its rounds barely move where C is large (-s 5 -c 4 on
           400 rows, 3 ranks: relative gap 0.97 after 200 rounds, 0.27 after 3000;
           newton's block proximal Newton converges in a few) */
        hint = "raise -r, or try --method newton (the L1 models' default across ranks: "
               "far fewer rounds where C is large)";
    } else if (!strcmp(s, "svr")) {
        /* coordinate descent only, and slow where lambda n is small (LIBLINEAR's -s 13
           says the same of its own) */
        hint = "raise -r, or try -s sqsvr (LIBLINEAR's -s 11: its squared loss takes "
               "--method newton or lbfgs, often many times faster)";
    } else {
        hint = "raise -r to go on";
    }
    fprintf(stderr, "strata-train: warning: %sthe relative gap %.3e did not reach -e %g in %d "
            "rounds: %s\n", what, rel, param->tol, info->rounds, hint);
}

static void print_metrics(const char *file, const strata_glm_metrics_t *m)
{
    printf("test %s: %lld examples", file, (long long)m->n);
    if (!isnan(m->accuracy)) {
        printf(", accuracy %.4f%%", 100 * m->accuracy);
    }
    if (!isnan(m->logloss)) {
        printf(", logloss %.6f", m->logloss);
    }
    if (!isnan(m->auc)) {
        printf(", AUC %.6f", m->auc);
    }
    if (!isnan(m->rmse)) {
        printf(", RMSE %.6g", m->rmse);
    }
    printf("\n");
}

/* The training's summary line (rank 0): "converged after ..." (@a what: "" or a fold's
 * "fold K of N: "), and its warning where it stopped before -e (where @a warn) */
static void print_info(const char *what, const strata_glm_info_t *info,
                       const strata_glm_param_t *param, int line, int warn)
{
    if (line) {
        printf("%s%s after %d rounds: primal %.10e, gap %.3e (relative %.3e), %.3f s "
               "(allreduce %.3f s)\n", what, info->converged ? "converged" : "stopped",
               info->rounds, info->primal, info->gap,
               st_glm_rel_gap(info->gap, info->primal), info->seconds,
               info->comm_seconds);
        if (info->nodes > 0) {
            /* (auto: the choice, which the first rounds, measuring, may not have run) */
            printf("%shierarchical: %d nodes, %d inner rounds per round%s\n", what,
                   info->nodes, info->inner_rounds,
                   param->inner_rounds == 0 ? " (chosen from the first rounds' costs)" : "");
        }
    }
    if (!info->converged && param->tol > 0 && warn) {
        warn_unconverged(info, param, what);
    }
}

/* Rank 0: LIBLINEAR's cross-validation lines (accuracy, or mean squared error and,
 * with @a with_scc (-v; not -C, as LIBLINEAR's), the squared correlation coefficient
 * @a scc, printed as LIBLINEAR prints it, NaN too: constant predictions), then the
 * other metrics */
static void print_cv_metrics(const strata_glm_metrics_t *m, int folds, int classes,
                             int with_scc, double scc)
{
    if (!isnan(m->rmse)) {
        printf("Cross Validation Mean squared error = %g\n", m->rmse * m->rmse);
        if (with_scc) {
            printf("Cross Validation Squared correlation coefficient = %g\n", scc);
        }
        printf("Cross Validation RMSE = %g (%lld examples, %d folds)\n", m->rmse,
               (long long)m->n, folds);
        return;
    }
    printf("Cross Validation Accuracy = %g%%\n", 100.0 * m->accuracy);
    if (classes > 2) {   /* (the accuracy alone: no AUC or log loss of one score) */
        printf("Cross Validation: %lld examples, %d classes, %d folds\n", (long long)m->n,
               classes, folds);
        return;
    }
    printf("Cross Validation AUC = %.6f", m->auc);
    if (!isnan(m->logloss)) {
        printf(", log loss = %.6f", m->logloss);
    }
    printf(" (%lld examples, %d folds)\n", (long long)m->n, folds);
}

/* -v: @a folds-fold cross-validation (collective), each fold's training quiet and
 * summed up in a line (unless -q), then LIBLINEAR's result lines and the other
 * metrics. @return the exit status. */
static int cross_validate(const strata_glm_problem_t *prob, const strata_glm_param_t *param,
                          int folds, double cost)
{
    strata_glm_param_t p = *param;
    strata_glm_metrics_t m;
    strata_glm_info_t *infos;
    strata_status_t status;
    char msg[1024], what[64];
    int k, stopped = 0;
    double *scores, scc = NAN;

    infos  = calloc((size_t)folds, sizeof(*infos));
    scores = malloc((size_t)ST_MAX(strata_glm_problem_rows(prob), 1) * sizeof(double));
    if (infos == NULL || scores == NULL) {
        fprintf(stderr, "strata-train: out of memory\n");
        st_tool_abort(world, 1);   /* (the other ranks would wait in the folds) */
    }
    p.verbose = 0;
    status    = strata_glm_cross_validate(prob, &p, folds, cost, world, msg,
                                          sizeof(msg), scores, infos, &m);
    if (status != STRATA_OK) {
        if (rank == 0) {
            fprintf(stderr, "strata-train: %s\n", msg);
        }
        free(scores);
        free(infos);
        return 1;
    }
    if (!isnan(m.rmse)) {   /* (regression: the scores are the values predicted) */
        double sums[ST_TOOL_REG_SUMS];

        st_tool_regression_sums(world, scores, prob->data->y, prob->data->n_rows, sums);
        scc = st_tool_squared_correlation(sums, (double)prob->data->n_rows_global);
    }
    free(scores);
    /* (the first fold that stopped before -e warns; the others are counted: a
       leave-one-out's thousands of folds warned a line each) */
    for (k = 0; k < folds && rank == 0; k++) {
        snprintf(what, sizeof(what), "fold %d of %d: ", k + 1, folds);
        print_info(what, &infos[k], param, param->verbose, stopped == 0);
        stopped += (!infos[k].converged && param->tol > 0);
    }
    if (rank == 0 && stopped > 1) {
        fprintf(stderr, "strata-train: warning: %d more of the %d folds stopped before their "
                "relative gap reached -e %g\n", stopped - 1, folds, param->tol);
    }
    if (rank == 0) {
        print_cv_metrics(&m, folds, strata_glm_problem_labels(prob, NULL), 1, scc);
    }
    free(infos);
    return 0;
}

/* -C: the best C by cross-validation (collective); LIBLINEAR's lines per C unless -q,
 * then its result line and the best C's metrics; for sqsvr (LIBLINEAR's -s 11) the best
 * C and epsilon, the search's from @a start_eps (0: the largest). @return the exit
 * status. */
static int find_cost(const strata_glm_problem_t *prob, const strata_glm_param_t *param,
                     int folds, double start, double start_eps)
{
    strata_glm_metrics_t m;
    strata_status_t status;
    char msg[1024];
    double c, eps = -1, unconverged, max_c = 1024;

    if (!strcmp(param->solver, "sqsvr")) {
        max_c  = 1048576;   /* (strata_glm_find_cost_epsilon's, LIBLINEAR's) */
        status = strata_glm_find_cost_epsilon(prob, param, folds, start, start_eps,
                                              world, msg, sizeof(msg), &c, &eps, &m,
                                              &unconverged);
    } else {
        status = strata_glm_find_cost(prob, param, folds, start, max_c, world, msg,
                                      sizeof(msg), &c, &m, &unconverged);
    }
    if (status != STRATA_OK) {
        if (rank == 0) {
            fprintf(stderr, "strata-train: %s\n", msg);
        }
        return 1;
    }
    if (rank == 0 && eps >= 0) {
        printf("Best C = %g Best p = %g  CV MSE = %g\n", c, eps, m.rmse * m.rmse);
    } else if (rank == 0 && !isnan(m.rmse)) {
        printf("Best C = %g  CV MSE = %g\n", c, m.rmse * m.rmse);
    } else if (rank == 0) {
        printf("Best C = %g  CV accuracy = %g%%\n", c, 100.0 * m.accuracy);
    }
    if (rank == 0) {
        print_cv_metrics(&m, folds, strata_glm_problem_labels(prob, NULL), 0, NAN);
        fflush(stdout);   /* (the warnings after the lines they are about) */
        if (c == max_c) {
            fprintf(stderr, "strata-train: warning: the best C is the largest tried, %g: "
                    "a larger one may do better\n", max_c);
        }
        if (unconverged > 0) {
            fprintf(stderr, "strata-train: warning: from C = %g on, folds stopped at -r %d "
                    "before the gap reached -e %g: their scores are of models short of "
                    "the optimum (raise -r)\n", unconverged, param->max_rounds, param->tol);
        }
        if (msg[0] != '\0') {   /* (the search ended before its last C) */
            fprintf(stderr, "strata-train: warning: the search stopped short of C = %g: "
                    "%s\n", max_c, msg);
        }
    }
    return 0;
}

/* Does argument @a arg, an option, take the next argument as its value? (a long
 * option without "=value" of @a longopts, or a cluster of short options of
 * @a shortopts, getopt's string, ending in one that takes a value) */
static int takes_next(const char *arg, const struct option *longopts, const char *shortopts)
{
    const struct option *o;
    const char *c, *p;

    if (strncmp(arg, "--", 2) == 0) {
        for (o = longopts; o->name != NULL && strchr(arg, '=') == NULL; o++) {
            if (strcmp(arg + 2, o->name) == 0) {
                return o->has_arg == required_argument;
            }
        }
        return 0;
    }
    for (c = arg + 1; *c != '\0'; c++) {
        if ((p = strchr(shortopts, *c)) == NULL || *c == ':') {
            return 0;
        }
        if (p[1] == ':') {
            return c[1] == '\0';   /* (else the rest of the argument is its value) */
        }
    }
    return 0;
}

/* LIBLINEAR's class weights, "-wLABEL WEIGHT", in the order given, a class once (a later
 * one of a class multiplies its weight, as LIBLINEAR's train multiplies its C by each) */
#define TRAIN_MAX_WEIGHTS 1024
static int    class_weights;
static double class_weight_label[TRAIN_MAX_WEIGHTS], class_weight[TRAIN_MAX_WEIGHTS];

/* LIBLINEAR's class weights, "-wLABEL WEIGHT" (two arguments, the label inside the
 * first, which getopt cannot take): taken into class_weight*, and the pair removed
 * from @a argv (@a argc_p less 2), before the options are parsed. A label that is not
 * an integer below 2^31 in magnitude, a weight that is not a number, or an argument
 * starting "-w" that is no such pair, is a usage error. (Before: the pair was
 * rewritten as an option of its own, "--class-weights-given", which a user could type,
 * or abbreviate, to set no weight and have strata-train think one was given.) */
static void liblinear_weights(int *argc_p, char **argv, const struct option *longopts,
                              const char *shortopts)
{
    long label;
    double weight;
    int argc = *argc_p, i = 1, j = 1, n, k;

    while (i < argc) {
        if (strcmp(argv[i], "--") == 0) {
            n = argc - i;   /* (the rest, as it is) */
        } else if (strncmp(argv[i], "-w", 2) != 0) {
            n = 1 + (argv[i][0] == '-' && i + 1 < argc &&
                     takes_next(argv[i], longopts, shortopts));   /* (with its value) */
        } else {
            n = 0;
        }
        if (n > 0) {
            for (; n > 0; n--) {
                argv[j++] = argv[i++];
            }
            continue;
        }
        if (!str_to_long(argv[i] + 2, &label) || label <= INT32_MIN || label > INT32_MAX) {
            die_usage("'%s': LIBLINEAR's class weight is -wLABEL WEIGHT, LABEL a class (an "
                      "integer below 2^31 in magnitude)", argv[i]);
        }
        if (i + 1 >= argc) {
            die_usage("option %s needs a value", argv[i]);
        }
        weight = parse_double(argv[i], argv[i + 1]);
        for (k = 0; k < class_weights && class_weight_label[k] != (double)label; k++) {
        }
        if (k < class_weights) {
            /* (-w1 2 -w1 3: 6; a weight that is not positive stays, to be refused) */
            class_weight[k] = (weight > 0) ? class_weight[k] * weight : weight;
        } else if (class_weights == TRAIN_MAX_WEIGHTS) {
            die_usage("%s: more than %d class weights", argv[i], TRAIN_MAX_WEIGHTS);
        } else {
            class_weight_label[class_weights] = (double)label;
            class_weight[class_weights++]     = weight;
        }
        i += 2;   /* (the pair, dropped) */
    }
    argv[j]  = NULL;
    *argc_p  = j;
}

/* The class weights given, on the problem read (rank 0 warns of a class the data have
 * not, whose weight is not used, as LIBLINEAR does). @return 0, or an exit status. */
static int apply_class_weights(strata_glm_problem_t *prob)
{
    int k = strata_glm_problem_labels(prob, NULL), i, c, found;
    double *labels;
    char msg[1024];

    if (class_weights == 0) {
        return 0;
    }
    labels = malloc((size_t)ST_MAX(k, 1) * sizeof(double));
    if (labels == NULL) {
        fprintf(stderr, "strata-train: out of memory\n");
        return 1;
    }
    strata_glm_problem_labels(prob, labels);
    for (i = 0; i < class_weights && rank == 0; i++) {
        for (c = 0; c < k && labels[c] != class_weight_label[i]; c++) {
        }
        if (c == k) {
            fprintf(stderr, "strata-train: warning: -w%.17g: the data have no class %.17g "
                    "(their classes are", class_weight_label[i], class_weight_label[i]);
            for (c = 0; c < k && c < 8; c++) {
                fprintf(stderr, "%s %.17g", c == 0 ? "" : c == k - 1 ? " and" : ",",
                        labels[c]);
            }
            fprintf(stderr, "%s): that weight is not used\n", k > 8 ? ", ..." : "");
        }
    }
    free(labels);
    if (strata_glm_problem_set_class_weights(prob, class_weights, class_weight_label,
                                             class_weight, &found, msg, sizeof(msg)) !=
        STRATA_OK) {
        if (rank == 0) {
            fprintf(stderr, "strata-train: %s\n", msg);
        }
        return 2;
    }
    return 0;
}

int main(int argc, char **argv)
{
    enum { OPT_ETA = 256, OPT_WPOS, OPT_WNEG, OPT_SEED, OPT_TEST, OPT_TMODE, OPT_GAP,
           OPT_CKPT, OPT_CKPT_EVERY, OPT_RESUME, OPT_HIER, OPT_INNER, OPT_GPU, OPT_GPU_MEM,
           OPT_GPU_ROWS,
           OPT_FORDER, OPT_METHOD, OPT_EPS, OPT_VERSION };
    static const struct option longopts[] = {
        {"solver", required_argument, NULL, 's'}, {"lambda", required_argument, NULL, 'l'},
        {"cost", required_argument, NULL, 'c'},   {"eta", required_argument, NULL, OPT_ETA},
        {"tol", required_argument, NULL, 'e'},    {"rounds", required_argument, NULL, 'r'},
        {"local-epochs", required_argument, NULL, 'E'},
        {"threads", required_argument, NULL, 't'}, {"bias", required_argument, NULL, 'B'},
        {"prec", required_argument, NULL, 'p'},
        {"epsilon", required_argument, NULL, OPT_EPS},
        {"thread-mode", required_argument, NULL, OPT_TMODE},
        {"gap-every", required_argument, NULL, OPT_GAP},
        {"hierarchical", no_argument, NULL, OPT_HIER},
        {"gpu", no_argument, NULL, OPT_GPU},
        {"gpu-mem", required_argument, NULL, OPT_GPU_MEM},
        {"gpu-rows", required_argument, NULL, OPT_GPU_ROWS},
        {"feature-order", required_argument, NULL, OPT_FORDER},
        {"method", required_argument, NULL, OPT_METHOD},
        {"inner-rounds", required_argument, NULL, OPT_INNER},
        {"weight-pos", required_argument, NULL, OPT_WPOS},
        {"weight-neg", required_argument, NULL, OPT_WNEG},
        {"seed", required_argument, NULL, OPT_SEED}, {"test", required_argument, NULL, OPT_TEST},
        {"checkpoint", required_argument, NULL, OPT_CKPT},
        {"checkpoint-every", required_argument, NULL, OPT_CKPT_EVERY},
        {"resume", no_argument, NULL, OPT_RESUME},
        {"cross-validation", required_argument, NULL, 'v'},
        {"find-c", no_argument, NULL, 'C'},
        {"quiet", no_argument, NULL, 'q'},        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, OPT_VERSION},
        {NULL, 0, NULL, 0}};
    strata_glm_problem_t *prob = NULL, *test = NULL;
    strata_glm_model_t *model  = NULL;
    strata_glm_param_t param;
    strata_glm_metrics_t metrics;
    strata_glm_info_t info;
    const char *train_file, *test_file = NULL, *why, *base, *ckpt_opt = NULL;
    const char *p_opt = NULL;   /* -p: --prec, or the SVR models' epsilon (LIBLINEAR's) */
    char model_file[4096], ckpt_file[4096 + 8], msg[1024];
    double cost = 0;
    int ll_type = -1;   /* -s given as LIBLINEAR's number: it */
    int opt, nranks, regression, l1, kind, cost_set = 0, prec = 0, rc = 0, weights_set = 0, same;
    int lambda_set = 0, eta_set = 0, inner_set = 0, gpu_mem_set = 0, gpu_rows_set = 0;
    int eps_set = 0, forder_set = 0, longindex = -1;
    int folds = 0, find_c = 0;
    static const char shortopts[] = ":s:l:c:e:r:E:t:p:B:v:Cqh";
    double classes_one[1];
    strata_status_t status;

    st_stdout_check("strata-train");
    /* the heap's top kept (to 64 MB) when freed: glibc's default gives back all above
       128 KB at once, and -C and -v, training thousands of times, took each training's
       buffers from the kernel again (-C -s 11 on 2000 rows: 10,800 brk calls, 0.7 s of
       page faults; Open MPI's own memory hooks had hidden that) */
    mallopt(M_TRIM_THRESHOLD, 64 << 20);

    world = st_tool_mpi_init(&argc, &argv, &rank, &nranks);
    if (!st_tool_args_agree(world, argc, argv)) {
        die_usage("%s", "the ranks were not given the same command line (an MPMD launch: "
                  "every rank must run the same options and files)");
    }
    strata_glm_param_default(&param);
    param.verbose = 1;
    opterr        = 0;
    liblinear_weights(&argc, argv, longopts, shortopts);
    weights_set = (class_weights > 0);
    while ((longindex = -1, opt = getopt_long(argc, argv, shortopts, longopts, &longindex)) !=
           -1) {
        switch (opt) {
        case 's': param.solver = parse_solver(optarg, &ll_type); break;
        case 'l': param.lambda = parse_double("--lambda", optarg); lambda_set = 1; break;
        case 'c': cost = parse_double("--cost", optarg); cost_set = 1; break;
        case OPT_ETA: param.eta = parse_double("--eta", optarg); eta_set = 1; break;
        case OPT_EPS: param.epsilon = parse_double("--epsilon", optarg); eps_set = 1; break;
        case 'e':
            param.tol = parse_double("--tol", optarg);
            /* parse_double leaves strtod's errno: ERANGE with 0 is an underflow (1e-400) */
            if (errno == ERANGE || !(param.tol == 0 || (param.tol > 0 && isnormal(param.tol)))) {
                die_usage("--tol must be 0 (run all -r rounds) or a positive normal number "
                          "(at least %g), not '%s'", DBL_MIN, optarg);
            }
            break;
        case 'r': param.max_rounds = parse_int("--rounds", optarg); break;
        case OPT_GAP: {
            long v;

            if (strcmp(optarg, "auto") == 0) {
                param.gap_every = STRATA_GLM_GAP_AUTO;
                break;
            }
            if (!str_to_long(optarg, &v) || v < 1 || v > INT_MAX) {
                die_usage("--gap-every must be 'auto' or between 1 and 2^31 - 1, not '%s'",
                          optarg);
            }
            param.gap_every = (int)v;
            break;
        }
        case OPT_HIER: param.hierarchical = 1; break;
        case OPT_GPU: param.gpu = 1; break;
        case OPT_GPU_MEM:
            param.gpu_mem = parse_size("--gpu-mem", optarg);
            gpu_mem_set   = 1;
            break;
        case OPT_GPU_ROWS:
            param.gpu_rows = parse_int("--gpu-rows", optarg);
            gpu_rows_set   = 1;
            if (param.gpu_rows < 1 || param.gpu_rows > 65535) {
                die_usage("option --gpu-rows needs 1 to 65535 rows, not '%s'", optarg);
            }
            break;
        case OPT_INNER: {
            long v = parse_long("--inner-rounds", optarg);

            if (v < 0 || v > 100000) {
                die_usage("--inner-rounds must be between 0 (auto) and 100000, not '%s'",
                          optarg);
            }
            param.inner_rounds = (int)v;
            inner_set          = 1;
            break;
        }
        case 'E': param.local_epochs = parse_int("--local-epochs", optarg); break;
        case 't': param.threads = parse_int("--threads", optarg); break;
        case OPT_TMODE:   /* STRATA_GLM_THREADS_REPLICAS, _SHARED */
            param.thread_mode =
                parse_choice(optarg, (const char *const[]){"replicas", "shared", NULL},
                             "--thread-mode must be replicas or shared, not '%s'");
            break;
        case OPT_FORDER:  /* STRATA_GLM_ORDER_AUTO, _FREQUENCY, _GIVEN */
            param.feature_order =
                parse_choice(optarg, (const char *const[]){"auto", "frequency", "given", NULL},
                             "--feature-order must be auto, frequency or given, not '%s'");
            forder_set = 1;
            break;
        case OPT_METHOD:  /* STRATA_GLM_METHOD_CD, _LBFGS, _AUTO, _NEWTON */
            param.method = parse_choice(optarg,
                                        (const char *const[]){"cd", "lbfgs", "auto", "newton",
                                                              NULL},
                                        "--method must be cd, lbfgs, newton or auto, not '%s'");
            break;
        case 'p':
            if (longindex >= 0) {   /* --prec */
                set_prec(&prec, "--prec", optarg);
            } else {
                p_opt = optarg;   /* after -s is known */
            }
            break;
        case 'B': param.bias = parse_double("--bias", optarg); break;
        case OPT_WPOS:
            param.weight_pos = parse_double("--weight-pos", optarg);
            weights_set      = 1;
            break;
        case OPT_WNEG:
            param.weight_neg = parse_double("--weight-neg", optarg);
            weights_set      = 1;
            break;
        case OPT_SEED: param.seed = parse_seed(optarg); break;
        case OPT_TEST: test_file = optarg; break;
        case OPT_CKPT: ckpt_opt = optarg; break;
        case OPT_CKPT_EVERY: {
            long v = parse_long("--checkpoint-every", optarg);

            if (v < 1 || v > INT_MAX) {
                die_usage("--checkpoint-every must be between 1 and 2^31 - 1, not '%s'",
                          optarg);
            }
            param.checkpoint_every = (int)v;
            break;
        }
        case OPT_RESUME: param.resume = 1; break;
        case 'v':
            folds = parse_int("--cross-validation", optarg);
            if (folds < 2) {
                die_usage("-v needs 2 folds or more, not '%s'", optarg);
            }
            break;
        case 'C': find_c = 1; break;
        case 'q': param.verbose = 0; break;
        case 'h':
            if (rank == 0) {
                usage(stdout);
            }
            st_tool_mpi_finalize(world);
            return 0;
        case OPT_VERSION:
            if (rank == 0) {
                printf("strata-train %s\n", PACKAGE_VERSION);
            }
            st_tool_mpi_finalize(world);
            return 0;
        case ':':
            /* the option is the last argument: "--name", or a cluster ending in it */
            if (strncmp(argv[optind - 1], "--", 2) == 0) {
                die_usage("option %s needs a value", argv[optind - 1]);
            }
            die_usage("option -%c needs a value", optopt);
            break;
        default:
            bad_option(argv[optind - 1], longopts);
        }
    }
    if (argc - optind < 1 || argc - optind > 2) {
        die_usage("%s", argc - optind < 1 ? "no training file" : "too many arguments");
    }
    if (cost_set && !(cost > 0)) {
        die_usage("%s", "--cost must be > 0");
    }
    /* an option that would do nothing here is a mistake to report, not to ignore */
    if (lambda_set && cost_set) {
        die_usage("%s", "-l/--lambda and -c/--cost both set lambda: give one of them");
    }
    if (find_c && lambda_set) {
        die_usage("%s", "-C searches C: give its start as -c C (or none: from the data), "
                  "not -l");
    }
    if (find_c && folds == 0) {
        folds = 5;   /* LIBLINEAR's default with -C */
    }
    if (ll_type >= 0 && !lambda_set && !cost_set && !find_c) {
        /* LIBLINEAR's command line, LIBLINEAR's problem: its default C */
        cost     = 1;
        cost_set = 1;
    }
    if (gpu_mem_set && !param.gpu) {
        die_usage("%s", "--gpu-mem applies only with --gpu");
    }
    if (gpu_rows_set && !param.gpu) {
        die_usage("%s", "--gpu-rows applies only with --gpu");
    }
    if (inner_set && !param.hierarchical) {
        die_usage("%s", "--inner-rounds applies only with --hierarchical");
    }
    kind = model_index(param.solver);
    if (p_opt != NULL && kind >= 0 && models[kind].svr) {
        /* LIBLINEAR's -p: the SVR models' epsilon */
        if (eps_set) {
            die_usage("%s", "-p and --epsilon both set epsilon: give one of them");
        }
        param.epsilon = parse_double("-p", p_opt);
        eps_set       = 1;
    } else if (p_opt != NULL) {
        long v;

        if (prec != 0) {
            die_usage("%s", "-p and --prec both set the values' precision: give one of them");
        }
        if (!str_to_long(p_opt, &v) || (v >= INT_MIN && v <= INT_MAX && v != 32 && v != 64)) {
            /* (LIBLINEAR's -p 0.1 copied over: before, "option -p needs an integer") */
            char given[16] = "";

            if (ll_type >= 0) {
                snprintf(given, sizeof(given), "%d, ", ll_type);
            }
            die_usage("-p with -s %s%s is the values' precision, 32 or 64, not '%s' "
                      "(LIBLINEAR's -p, the SVR models' epsilon, applies to -s 11, 12, 13: "
                      "sqsvr, svr)", given, param.solver ? param.solver : "logistic", p_opt);
        }
        set_prec(&prec, "-p", p_opt);
    }
    if (eps_set && !(kind >= 0 && models[kind].svr)) {
        die_usage("--epsilon applies only to -s svr and sqsvr (LIBLINEAR's 11-13), not to "
                  "-s %s", param.solver ? param.solver : "logistic");
    }
    if (eta_set && (param.solver == NULL || strcmp(param.solver, "elastic-net") != 0)) {
        die_usage("--eta applies only to -s elastic-net, not to -s %s",
                  param.solver ? param.solver : "logistic");
    }
    /* the L1 models and L-BFGS never lay the model vector out otherwise (with --method
       auto an L2 model may still run cd or newton: accepted there) */
    if (forder_set && kind >= 0 && models[kind].l1) {
        die_usage("--feature-order applies to the L2 models (methods cd and newton), not "
                  "to -s %s, whose methods never use it", param.solver);
    }
    if (forder_set && param.method == STRATA_GLM_METHOD_LBFGS) {
        die_usage("%s", "--feature-order applies to methods cd and newton, not to --method "
                  "lbfgs, which never uses it");
    }
    if (folds > 0 && argc - optind == 2) {
        die_usage("%s cross-validates and writes no model: no MODEL_FILE ('%s')",
                  find_c ? "-C" : "-v", argv[optind + 1]);
    }
    if (folds > 0 && (param.checkpoint_every > 0 || param.resume || ckpt_opt != NULL)) {
        die_usage("%s cross-validates: no checkpoints (--checkpoint-every, --resume, "
                  "--checkpoint)", find_c ? "-C" : "-v");
    }
    if (folds > 0 && test_file != NULL) {
        die_usage("%s cross-validates on the training file: no --test (train a model "
                  "without it to test it)", find_c ? "-C" : "-v");
    }
    train_file = argv[optind];
    if (train_file[0] == '\0' || (test_file != NULL && test_file[0] == '\0')) {
        /* (before: ": cannot open", exit 1) */
        die_usage("the %s file name is empty", train_file[0] == '\0' ? "training" : "test");
    }
    /* "-" names no file here (before: "-: cannot open", a file named "-" read, or the
       model written to one): every rank reads the data at an offset, and the model
       would share standard output with the progress lines */
    if (!strcmp(train_file, "-") || (test_file != NULL && !strcmp(test_file, "-"))) {
        die_usage("the %s file cannot be standard input ('-'): every rank reads its part "
                  "at an offset; give a file (./- for one named '-')",
                  !strcmp(train_file, "-") ? "training" : "test");
    }
    if (argc - optind == 2 && !strcmp(argv[optind + 1], "-")) {
        die_usage("%s", "the model file cannot be standard output ('-'): the progress "
                  "lines go there; give a file (./- for one named '-')");
    }
    if (ckpt_opt != NULL && !strcmp(ckpt_opt, "-")) {
        die_usage("%s", "the checkpoint file cannot be '-': give a file (./- for one named "
                  "'-')");
    }
    if (argc - optind == 2) {
        if (argv[optind + 1][0] == '\0' || strlen(argv[optind + 1]) >= sizeof(model_file)) {
            die_usage("the model file name is %s", argv[optind + 1][0] ? "too long" : "empty");
        }
        snprintf(model_file, sizeof(model_file), "%s", argv[optind + 1]);
    } else {
        base = strrchr(train_file, '/');
        snprintf(model_file, sizeof(model_file), "%s.model", base ? base + 1 : train_file);
    }
    /* each rank judges its own paths (they may differ without a shared file system):
       all refuse if one does, or the others would wait for it forever */
    same = st_tool_same_file(model_file, train_file)  ? 1
           : st_tool_same_file(model_file, test_file) ? 2
                                                       : 0;
    st_tool_allreduce(world, &same, 1, MPI_INT, MPI_MAX);
    if (same != 0) {
        die_usage("the model file %s is the %s file%s: it would be overwritten", model_file,
                  same == 1 ? "training" : "test",
                  st_tool_same_file(model_file, same == 1 ? train_file : test_file)
                      ? ""
                      : " on another rank");
    }
    if (ckpt_opt != NULL && (ckpt_opt[0] == '\0' || strlen(ckpt_opt) >= sizeof(ckpt_file))) {
        die_usage("the checkpoint file name is %s", ckpt_opt[0] ? "too long" : "empty");
    }
    snprintf(ckpt_file, sizeof(ckpt_file), "%s", ckpt_opt ? ckpt_opt : model_file);
    if (ckpt_opt == NULL) {
        strcat(ckpt_file, ".ckpt");
    }
    if (ckpt_opt != NULL && param.checkpoint_every == 0 && !param.resume) {
        die_usage("%s", "--checkpoint needs --checkpoint-every N or --resume");
    }
    if (param.checkpoint_every > 0 || param.resume) {
        param.checkpoint = ckpt_file;
        same = st_tool_same_file(ckpt_file, model_file) || st_tool_same_file(ckpt_file, train_file) ||
               st_tool_same_file(ckpt_file, test_file);
        st_tool_allreduce(world, &same, 1, MPI_INT, MPI_MAX);
        if (same != 0) {
            die_usage("the checkpoint file %s is the model, training or test file",
                      ckpt_file);
        }
    }
    if ((why = strata_glm_check_param(&param)) != NULL) {
        die_usage("%s", why);
    }

    if (param.resume) {
        /* before reading the data: a missing checkpoint is a mistake to report now */
        int found = (rank == 0) ? (access(ckpt_file, F_OK) == 0) : 0;

        st_tool_bcast(world, &found, 1, MPI_INT);
        if (!found) {
            if (rank == 0) {
                fprintf(stderr, "strata-train: --resume: no checkpoint %s to resume from (a "
                        "run with --checkpoint-every N writes one; without --resume the "
                        "training starts from the first round)\n", ckpt_file);
            }
            rc = 1;
            goto out;
        }
    }
    regression = (kind >= 0 && models[kind].regression);
    if (regression && weights_set) {   /* the regression models weigh every row 1 */
        /* (named as given: -w1 2 was told of as --weight-pos) */
        die_usage("class weights (%s) apply to the classification models, not to %s",
                  class_weights > 0 ? "-wLABEL" : "--weight-pos and --weight-neg",
                  param.solver);
    }
    if (early_checks(test_file, folds > 0 ? NULL : model_file,
                     param.checkpoint_every > 0 ? ckpt_file : NULL) != 0) {
        rc = 1;   /* (a run-time error, found before the training rather than after it) */
        goto out;
    }
    status = strata_glm_problem_read_prec(train_file, regression, prec, world, msg,
                                          sizeof(msg), &prob);
    if (status != STRATA_OK) {
        if (rank == 0) {
            fprintf(stderr, "strata-train: %s\n", msg);
        }
        rc = 1;
        goto out;
    }
    if (folds > strata_glm_problem_rows_global(prob) && strata_glm_problem_rows_global(prob) >= 2) {
        /* LIBLINEAR's train -v and -C: a warning, and leave-one-out (before: exit 1) */
        if (rank == 0) {
            fprintf(stderr, "strata-train: warning: %d folds of %lld examples: "
                    "leave-one-out cross-validation (%lld folds) instead, as LIBLINEAR's\n",
                    folds, (long long)strata_glm_problem_rows_global(prob),
                    (long long)strata_glm_problem_rows_global(prob));
        }
        folds = (int)strata_glm_problem_rows_global(prob);
    }
    if (cost_set) {
        param.lambda = 1.0 / (cost * (double)strata_glm_problem_rows_global(prob));
        if ((why = strata_glm_check_param(&param)) != NULL) {
            if (rank == 0 && !(param.lambda > 0 && isfinite(param.lambda))) {
                /* (-c 1e-320, 1e308: named as given, not as a lambda the user never gave) */
                fprintf(stderr, "strata-train: -c %g: lambda = 1/(C n) = 1/(%g x %lld) is %g, "
                        "beyond double precision: give a C nearer 1\n", cost, cost,
                        (long long)strata_glm_problem_rows_global(prob), param.lambda);
            } else if (rank == 0) {
                fprintf(stderr, "strata-train: %s\n", why);
            }
            rc = 2;
            goto out;
        }
    }
    l1 = (kind >= 0 && models[kind].l1);
    train_l1     = l1;   /* (warn_unconverged) */
    train_nranks = nranks;
    if (rank == 0 && param.verbose) {
        char ll[64] = "", lam[192], eps[40] = "";

        if (ll_type >= 0 && cost_set && !find_c) {
            snprintf(ll, sizeof(ll), " (LIBLINEAR -s %d, C %g)", ll_type, cost);
        } else if (ll_type >= 0) {
            snprintf(ll, sizeof(ll), " (LIBLINEAR -s %d)", ll_type);
        }
        if (kind >= 0 && models[kind].svr && !(find_c && !strcmp(param.solver, "sqsvr"))) {
            snprintf(eps, sizeof(eps), ", epsilon %g", param.epsilon);   /* (-p's reading) */
        }
        /* (-C and -v -c: each fold's lambda is 1/(C x its training rows)) */
        if (find_c && !strcmp(param.solver, "sqsvr")) {
            /* LIBLINEAR's -C for -s 11: C and epsilon (strata_glm_find_cost_epsilon) */
            char from_c[32] = "the data's", upto[40] = ", k = 19";

            if (cost_set) {
                snprintf(from_c, sizeof(from_c), "%g", cost);
            }
            if (eps_set && param.epsilon > 0) {   /* (-p 0: from the top, LIBLINEAR's) */
                snprintf(upto, sizeof(upto), " <= %g", param.epsilon);
            }
            snprintf(lam, sizeof(lam), "C from %s to 1048576 at epsilon = k/20 of the "
                     "largest |y|%s down to 0, %d folds", from_c, upto, folds);
        } else if (find_c && cost_set) {
            snprintf(lam, sizeof(lam), "C from %g to 1024, %d folds", cost, folds);
        } else if (find_c) {
            snprintf(lam, sizeof(lam), "C from the data's to 1024, %d folds", folds);
        } else if (folds > 0 && cost_set) {
            snprintf(lam, sizeof(lam), "C %g, %d folds", cost, folds);
        } else if (folds > 0) {
            snprintf(lam, sizeof(lam), "lambda %g, %d folds", param.lambda, folds);
        } else {
            snprintf(lam, sizeof(lam), "lambda %g", param.lambda);
        }
        printf("strata-train: %s%s%s, %s, %lld examples x %lld features (%d-bit "
               "values), %d rank(s) x %d thread(s), allreduce: %s\n", param.solver, ll, eps, lam,
               (long long)strata_glm_problem_rows_global(prob),
               (long long)strata_glm_problem_cols(prob), strata_glm_problem_prec(prob), nranks,
               l1 ? 1 : param.threads, allreduce_name());   /* the L1 models use one */
        if (strata_glm_problem_labels(prob, NULL) > 2) {
            printf("strata-train: %d classes: a model for each against the rest\n",
                   strata_glm_problem_labels(prob, NULL));
        }
    }
    train_classes = strata_glm_problem_labels(prob, NULL);
    /* integer targets read as classes (LIBLINEAR does the same, silently): a model of
       their count x the features, and classes of a few rows each */
    if (!regression && rank == 0 && strata_glm_problem_labels(prob, NULL) >= 64 &&
        strata_glm_problem_labels(prob, NULL) * (int64_t)10 > strata_glm_problem_rows_global(prob)) {
        fprintf(stderr, "strata-train: warning: %d classes in %lld examples (fewer than 10 "
                "each): regression targets? (-s ridge, lasso or elastic-net read them as "
                "such)\n", strata_glm_problem_labels(prob, NULL),
                (long long)strata_glm_problem_rows_global(prob));
    }
    if (!regression && (rc = apply_class_weights(prob)) != 0) {
        goto out;
    }
    /* one class: LIBLINEAR's model of it, which predicts it for every row */
    if (!regression && strata_glm_problem_labels(prob, NULL) == 1 && rank == 0) {
        strata_glm_problem_labels(prob, classes_one);
        fprintf(stderr, "strata-train: warning: every training example is of class %.17g: "
                "the model never sees another class, so it predicts that class for every row "
                "(is this the data you meant?)\n", classes_one[0]);
    }
    if (find_c) {
        rc = find_cost(prob, &param, folds, cost_set ? cost : 0, eps_set ? param.epsilon : 0);
        goto out;
    }
    if (folds > 0) {
        rc = cross_validate(prob, &param, folds, cost_set ? cost : 0);
        goto out;
    }
    status = strata_glm_train(prob, &param, world, msg, sizeof(msg), &model);
    if (status != STRATA_OK) {
        if (rank == 0) {
            fprintf(stderr, "strata-train: %s\n", msg);
        }
        rc = 1;
        goto out;
    }
    strata_glm_model_info(model, &info);
    if (rank == 0) {
        print_info("", &info, &param, 1, 1);
        status = strata_glm_model_save(model, model_file, msg, sizeof(msg));
        if (status != STRATA_OK) {
            fprintf(stderr, "strata-train: %s\n", msg);
        } else if (param.verbose) {
            printf("model written to %s\n", model_file);
        }
    }
    st_tool_bcast(world, &status, 1, MPI_INT);
    if (status != STRATA_OK) {
        rc = 1;
        goto out;
    }
    if (test_file != NULL) {
        status = strata_glm_problem_read(test_file, regression, world, msg,
                                         sizeof(msg), &test);
        if (status == STRATA_OK) {
            status = strata_glm_evaluate(model, test, world, &metrics);
            snprintf(msg, sizeof(msg), "%s: cannot evaluate: %s", test_file,
                     strata_status_string(status));
        }
        if (status != STRATA_OK) {
            if (rank == 0) {
                fprintf(stderr, "strata-train: %s\n", msg);
            }
            rc = 1;
        } else if (rank == 0) {
            print_metrics(test_file, &metrics);
        }
    }
out:
    strata_glm_model_free(model);
    strata_glm_problem_free(prob);
    strata_glm_problem_free(test);
    st_tool_mpi_finalize(world);
    return rc;
}
