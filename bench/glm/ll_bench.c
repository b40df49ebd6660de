/*
 * ll_bench: liblinear-train for benchmarks. Same library (the system's liblinear,
 * linked with -llinear), same train() call and model file as liblinear-train, but it
 * times train() alone (not the parsing of the data file) and can stamp LIBLINEAR's
 * own progress lines with the seconds since train() started.
 *
 *   ll_bench [-s SOLVER] [-c C] [-e EPS[,EPS...]] [-l LAMBDA -T TARGET] [-R N] [-v]
 *            TRAIN.svm MODEL
 *
 * Loads the data once, then trains once per EPS, in the order given, each from
 * scratch, and writes MODEL.K for the K-th EPS (0-based). After each training it
 * computes P(w) = (1/n) sum log(1 + exp(-y x.w)) + lambda/2 ||w||^2 (not timed; the
 * benchmark's judge is objective.py, this is only the stopping aid) and, with -T, stops
 * at the first EPS with P <= TARGET, after training with it N - 1 more times (-R N,
 * for a median). Prints "load_seconds X", then per training
 * "eps E rep R train_seconds X primal P", and with -v, "t=SECONDS LINE" for each
 * progress line of LIBLINEAR. No bias term (LIBLINEAR's -B -1).
 *
 * Build: cc -O2 -o ll_bench ll_bench.c -llinear
 */
#include <errno.h>
#include <linear.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double t_train;
static int verbose;
static char pending[4096];

/* LIBLINEAR prints in pieces; stamp each completed line. */
static void print_hook(const char *s)
{
    size_t len;
    const char *nl;

    if (!verbose) {
        return;
    }
    while (*s) {
        nl  = strchr(s, '\n');
        len = strlen(pending);
        if (!nl) {
            snprintf(pending + len, sizeof(pending) - len, "%s", s);
            return;
        }
        snprintf(pending + len, sizeof(pending) - len, "%.*s", (int)(nl - s), s);
        printf("t=%.6f %s\n", now() - t_train, pending);
        pending[0] = '\0';
        s          = nl + 1;
    }
}

static void die(const char *what)
{
    fprintf(stderr, "ll_bench: %s\n", what);
    exit(1);
}

/* Reads an svmlight file (1-based indices) into a LIBLINEAR problem. */
static void read_problem(const char *path, struct problem *prob)
{
    FILE *f = fopen(path, "rb");
    char *buf, *p, *end, *q;
    long size;
    size_t rows = 0, nnz = 0, k = 0, i = 0;
    struct feature_node *pool;
    int maxidx = 0;

    if (!f) {
        die(strerror(errno));
    }
    fseek(f, 0, SEEK_END);
    size = ftell(f);
    fseek(f, 0, SEEK_SET);
    buf = malloc((size_t)size + 1);
    if (!buf || fread(buf, 1, (size_t)size, f) != (size_t)size) {
        die("cannot read the data file");
    }
    fclose(f);
    buf[size] = '\0';
    for (p = buf; *p; p++) {
        if (*p == '\n') {
            rows++;
        } else if (*p == ':') {
            nnz++;
        }
    }
    if (size > 0 && buf[size - 1] != '\n') {
        rows++;
    }
    prob->l    = (int)rows;
    prob->bias = -1;
    prob->y    = malloc(rows * sizeof(double));
    prob->x    = malloc(rows * sizeof(struct feature_node *));
    pool       = malloc((nnz + rows) * sizeof(struct feature_node));
    if (!prob->y || !prob->x || !pool) {
        die("out of memory");
    }
    p = buf;
    while (*p && i < rows) {
        end = strchr(p, '\n');
        if (end) {
            *end = '\0';
        }
        prob->y[i] = strtod(p, &q) > 0 ? 1.0 : -1.0;
        prob->x[i] = &pool[k];
        p          = q;
        for (;;) {
            long idx;
            double v;

            while (*p == ' ' || *p == '\t') {
                p++;
            }
            if (*p == '\0' || *p == '#' || *p == '\r') {
                break;
            }
            idx = strtol(p, &q, 10);
            if (q == p || *q != ':') {
                die("malformed line");
            }
            v = strtod(q + 1, &p);
            pool[k].index   = (int)idx;
            pool[k++].value = v;
            if (idx > maxidx) {
                maxidx = (int)idx;
            }
        }
        pool[k++].index = -1;
        i++;
        p = end ? end + 1 : p + strlen(p);
    }
    prob->l = (int)i;
    prob->n = maxidx;
    /* buf is no longer needed: every value was parsed out of it */
    free(buf);
}

/* P(w) as Strata defines it; w is LIBLINEAR's, oriented towards model->label[0]. */
static double primal(const struct problem *prob, const struct model *m, double lambda)
{
    double sgn = (m->label[0] > 0) ? 1.0 : -1.0, loss = 0, reg = 0, z, t;
    const struct feature_node *x;
    int i;

    for (i = 0; i < prob->l; i++) {
        z = 0;
        for (x = prob->x[i]; x->index != -1; x++) {
            if (x->index <= m->nr_feature) {
                z += m->w[x->index - 1] * x->value;
            }
        }
        t = -prob->y[i] * sgn * z;   /* loss = log(1 + exp(t)) */
        loss += (t > 0) ? t + log1p(exp(-t)) : log1p(exp(t));
    }
    for (i = 0; i < m->nr_feature; i++) {
        reg += m->w[i] * m->w[i];
    }
    return loss / prob->l + 0.5 * lambda * reg;
}

int main(int argc, char **argv)
{
    struct parameter param = {0};
    struct problem prob;
    struct model *model;
    const char *err, *eps_list = "0.01";
    char *p, *q, name[4096];
    double t0, secs, pw = HUGE_VAL, lambda = 0, target = -1;
    int i, k, r, repeats = 1;

    param.solver_type = L2R_LR;
    param.C           = 1;
    param.eps         = 0.01;
    param.p           = 0.1;
    for (i = 1; i < argc && argv[i][0] == '-'; i++) {
        if (!strcmp(argv[i], "-v")) {
            verbose = 1;
        } else if (i + 1 < argc && !strcmp(argv[i], "-s")) {
            param.solver_type = atoi(argv[++i]);
        } else if (i + 1 < argc && !strcmp(argv[i], "-c")) {
            param.C = atof(argv[++i]);
        } else if (i + 1 < argc && !strcmp(argv[i], "-e")) {
            eps_list = argv[++i];
        } else if (i + 1 < argc && !strcmp(argv[i], "-l")) {
            lambda = atof(argv[++i]);
        } else if (i + 1 < argc && !strcmp(argv[i], "-T")) {
            target = atof(argv[++i]);
        } else if (i + 1 < argc && !strcmp(argv[i], "-R")) {
            repeats = atoi(argv[++i]);
        } else {
            die("usage: ll_bench [-s SOLVER] [-c C] [-e EPS,...] [-l LAMBDA -T TARGET] [-R N] [-v] TRAIN.svm MODEL");
        }
    }
    if (argc - i != 2) {
        die("usage: ll_bench [-s SOLVER] [-c C] [-e EPS,...] [-l LAMBDA -T TARGET] [-R N] [-v] TRAIN.svm MODEL");
    }
    set_print_string_function(print_hook);
    t0 = now();
    read_problem(argv[i], &prob);
    printf("load_seconds %.6f\n", now() - t0);
    if (lambda <= 0) {
        lambda = 1.0 / (param.C * prob.l);
    }
    for (k = 0, p = (char *)eps_list; *p; k++) {
        param.eps = strtod(p, &q);
        if (q == p) {
            die("bad -e list");
        }
        p = (*q == ',') ? q + 1 : q;
        if ((err = check_parameter(&prob, &param)) != NULL) {
            die(err);
        }
        for (r = 0; r < repeats; r++) {
            fflush(stdout);
            t_train = now();
            model   = train(&prob, &param);
            secs    = now() - t_train;
            pw      = primal(&prob, model, lambda);
            printf("eps %g rep %d train_seconds %.6f primal %.12e\n", param.eps, r, secs, pw);
            fflush(stdout);
            if (r == 0) {
                snprintf(name, sizeof(name), "%s.%d", argv[i + 1], k);
                if (save_model(name, model) != 0) {
                    die("cannot save the model");
                }
            }
            free_and_destroy_model(&model);
            if (target < 0 || pw > target) {
                break;   /* repeats only for the run that reaches the target */
            }
        }
        if (target >= 0 && pw <= target) {
            break;
        }
    }
    return 0;
}
