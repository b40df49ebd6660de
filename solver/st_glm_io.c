/*
 * Model files: LIBLINEAR's text model format (save_model / load_model of linear.cpp),
 * so that LIBLINEAR's predict reads the models it has, and Strata reads LIBLINEAR's
 * models of the same problems (two classes or more):
 *
 *     solver_type L2R_LR          one name per model, see st_glm_io_types
 *     nr_class 2                  2 (regression models too, as LIBLINEAR), or the
 *                                 classes of a one-vs-rest model, or 1 (LIBLINEAR's
 *                                 model of a single label: predicts it for every row)
 *     label 1 -1                  classification only: w scores label 1 positive
 *                                 ("label 1 0" for a model of 0/1 data)
 *                                 ("label -1 1" read: w negated, a score of 0 is +1,
 *                                 and written back so); any other names kept as
 *                                 given ("label 2 7": w scores 2 positive), one per
 *                                 class
 *     nr_feature 13
 *     bias -1                     > 0: constant feature of this value; -1: none
 *     w
 *     0.35138541186502564         one weight per line ("%.17g \n", LIBLINEAR's own
 *     ...                         layout), nr_feature of them, then the bias weight;
 *                                 more than two classes: a weight per class on each
 *                                 line, in the label line's order
 *
 * LIBLINEAR's rule for the weight count is "bias >= 0": a file with "bias 0" holds the
 * bias weight, which multiplies 0; it is read and dropped (the model has no bias).
 * Saving is atomic (a temporary file in the same directory, fsync, rename); loading is
 * strict and reports "FILE:LINE: what". solver/README.md ("Models and prediction")
 * states the rules.
 */
#include "config.h"

#include "st_glm.h"
#include "st_glm_file.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* token lengths quoted in messages */
#define ST_GLM_IO_QUOTE_LEN   48

/* solver_type names: the first one of each model is the one written */
static const struct {
    const char         *name;
    st_glm_model_kind_t kind;
} st_glm_io_types[] = {
    {"L2R_LR",              ST_GLM_LOGISTIC},
    {"L2R_L1LOSS_SVC_DUAL", ST_GLM_HINGE},
    {"L2R_L2LOSS_SVC_DUAL", ST_GLM_SQHINGE},
    {"L2R_L2LOSS_SVR",      ST_GLM_RIDGE},
    {"STRATA_LASSO",        ST_GLM_LASSO},
    {"L1R_LR",              ST_GLM_L1_LOGISTIC},  /* LIBLINEAR -s 6: the same problem */
    {"STRATA_ELASTIC_NET",  ST_GLM_ELASTIC_NET},
    {"L1R_L2LOSS_SVC",      ST_GLM_L1_SQHINGE},   /* LIBLINEAR -s 5: the same problem */
    {"L2R_L1LOSS_SVR_DUAL", ST_GLM_SVR},          /* -s 13 */
    {"L2R_L2LOSS_SVR_DUAL", ST_GLM_SQSVR},        /* -s 12 (-s 11 writes ridge's name) */
    /* read only: LIBLINEAR's other solvers of the same problems, and Strata's own name
     * for the L1 logistic model */
    {"L2R_LR_DUAL",         ST_GLM_LOGISTIC},     /* -s 7 */
    {"L2R_L2LOSS_SVC",      ST_GLM_SQHINGE},      /* -s 2 */
    {"STRATA_L1_LOGISTIC",  ST_GLM_L1_LOGISTIC},
};

static const char *st_glm_io_type_name(st_glm_model_kind_t kind)
{
    size_t i;

    for (i = 0; i < ST_ARRAY_SIZE(st_glm_io_types); i++) {
        if (st_glm_io_types[i].kind == kind) {
            return st_glm_io_types[i].name;
        }
    }
    return NULL;
}

static void st_glm_io_msg(char *msg, size_t msg_len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void st_glm_io_msg(char *msg, size_t msg_len, const char *fmt, ...)
{
    va_list ap;

    if (msg == NULL || msg_len == 0) {
        return;
    }
    va_start(ap, fmt);
    vsnprintf(msg, msg_len, fmt, ap);
    va_end(ap);
}

/* Numbers in the C locale whatever the program's LC_NUMERIC (a decimal comma would
 * break the format both ways). */
typedef struct {
    locale_t c_locale;
    locale_t saved;
} st_glm_io_locale_t;

static void st_glm_io_locale_enter(st_glm_io_locale_t *loc)
{
    loc->c_locale = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
    loc->saved    = (loc->c_locale != (locale_t)0) ? uselocale(loc->c_locale) : (locale_t)0;
}

static void st_glm_io_locale_leave(st_glm_io_locale_t *loc)
{
    if (loc->c_locale != (locale_t)0) {
        uselocale(loc->saved);
        freelocale(loc->c_locale);
    }
}

/* ------------------------------------------------------------------------------------ */
/* Saving                                                                              */
/* ------------------------------------------------------------------------------------ */

static int st_glm_io_write(FILE *f, const strata_glm_model_t *model, const char *type_name)
{
    int64_t j, n_w = model->n_features + (model->bias > 0 ? 1 : 0);
    int c, nr_w = st_glm_model_nr_w(model);
    double sign = model->zero_positive ? -1.0 : 1.0;

    if (fprintf(f, "solver_type %s\nnr_class %d\n", type_name,
                model->nr_class > 0 ? model->nr_class : 2) < 0) {
        return -1;
    }
    if (model->nr_class > 0) {   /* named classes: their names, in the model's order */
        if (fprintf(f, "label") < 0) {
            return -1;
        }
        for (c = 0; c < model->nr_class; c++) {
            if (fprintf(f, " %d", (int)model->labels[c]) < 0) {
                return -1;
            }
        }
        if (fprintf(f, "\n") < 0) {
            return -1;
        }
    } else if (model->loss->classification &&
               /* a model read from "label -1 1" goes back as it came (its weights negated
                * back): its ties (a score of 0) are label[1], +1, there, and LIBLINEAR
                * reads the same classes from it; the negative class is named 0 where the
                * training data named it so (LIBLINEAR's predict then prints, and counts
                * as right, the labels of such test data) */
               fprintf(f, model->zero_positive ? "label %s 1\n" : "label 1 %s\n",
                       model->zero_one ? "0" : "-1") < 0) {
        return -1;
    }
    if (fprintf(f, "nr_feature %" PRId64 "\n", model->n_features) < 0) {
        return -1;
    }
    if (model->bias > 0) {
        if (fprintf(f, "bias %.17g\n", model->bias) < 0) {
            return -1;
        }
    } else if (fprintf(f, "bias -1\n") < 0) {
        return -1;
    }
    if (fprintf(f, "w\n") < 0) {
        return -1;
    }
    /* a line per feature: its weight for each of the nr_w scores, "%.17g " each */
    for (j = 0; j < n_w; j++) {
        for (c = 0; c < nr_w; c++) {
            if (fprintf(f, "%.17g ", sign * model->w[j * nr_w + c]) < 0) {
                return -1;
            }
        }
        if (fprintf(f, "\n") < 0) {
            return -1;
        }
    }
    return 0;
}

ST_EXPORT strata_status_t strata_glm_model_save(const strata_glm_model_t *model,
                                                const char *path, char *msg, size_t msg_len)
{
    st_glm_io_locale_t loc;
    const char *type_name;
    st_glm_out_t out;
    const char *lost;
    int64_t j, n_w;
    FILE *f;
    int err;

    if (model == NULL || model->loss == NULL || model->w == NULL || path == NULL ||
        path[0] == '\0') {
        st_glm_io_msg(msg, msg_len, "strata_glm_model_save: no model or no file name");
        return ST_ERR_INVALID_PARAM;
    }
    type_name = st_glm_io_type_name(model->loss->kind);
    if (type_name == NULL || model->n_features < 0) {
        st_glm_io_msg(msg, msg_len, "%s: the model is not valid (kind %d, %" PRId64
                      " features)", path, (int)model->loss->kind, model->n_features);
        return ST_ERR_INVALID_PARAM;
    }
    if (!isfinite(model->bias)) {
        st_glm_io_msg(msg, msg_len, "%s: the model's bias is not finite", path);
        return ST_ERR_INVALID_PARAM;
    }
    n_w = (model->n_features + (model->bias > 0 ? 1 : 0)) * st_glm_model_nr_w(model);
    for (j = 0; j < n_w; j++) {
        if (!isfinite(model->w[j])) {
            st_glm_io_msg(msg, msg_len, "%s: weight %" PRId64 " of the model is %g: not "
                          "saved", path, j + 1, model->w[j]);
            return ST_ERR_INVALID_PARAM;
        }
    }

    /* a temporary file next to it, renamed over it once whole */
    if (st_glm_out_open(&out, path) != 0 || (f = fdopen(out.fd, "w")) == NULL) {
        err = errno;
        goto fail;
    }
    st_glm_io_locale_enter(&loc);
    err   = 0;
    errno = 0;
    if (st_glm_io_write(f, model, type_name) != 0 || fflush(f) != 0) {
        err = errno != 0 ? errno : EIO;
    }
    st_glm_io_locale_leave(&loc);
    if (err == 0) {
        err = st_glm_out_commit(&out);   /* (renamed while the file is locked) */
    }
    if (fclose(f) != 0 && err == 0 && !out.committed) {
        err = errno;
    }
    out.fd = -1;   /* closed with f */
fail:
    lost = st_glm_out_lost(&out);
    st_glm_out_close(&out);
    if (err != 0) {
        st_glm_io_msg(msg, msg_len, "%s: cannot write the model: %s (%s)", path, strerror(err),
                      lost);
        return ST_ERR_IO;
    }
    return ST_OK;
}

/* ------------------------------------------------------------------------------------ */
/* Loading                                                                             */
/* ------------------------------------------------------------------------------------ */

typedef struct {
    const char *path;
    FILE       *f;
    char       *line;
    size_t      cap;
    int64_t     lineno;
    int         ntok;                          /* tokens on the line */
    char      **tok;                           /* them */
    int         tokcap;
    char       *msg;
    size_t      msg_len;
    st_status_t status;
} st_glm_io_reader_t;

static void st_glm_io_fail(st_glm_io_reader_t *rd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* "PATH:LINE: what" into the caller's buffer; the status is ST_ERR_INVALID_PARAM. */
static void st_glm_io_fail(st_glm_io_reader_t *rd, const char *fmt, ...)
{
    char what[512];   /* (the longest: an unsupported solver_type, its list) */
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(what, sizeof(what), fmt, ap);
    va_end(ap);
    st_glm_io_msg(rd->msg, rd->msg_len, "%s:%" PRId64 ": %s", rd->path,
                  rd->lineno > 0 ? rd->lineno : 1, what);
    rd->status = ST_ERR_INVALID_PARAM;
}

/* @a s for a message: at most ST_GLM_IO_QUOTE_LEN characters, "..." when cut. */
static const char *st_glm_io_quote(const char *s, char *buf, size_t len)
{
    if (strlen(s) < len) {
        return s;
    }
    snprintf(buf, len, "%.*s...", (int)len - 4, s);
    return buf;
}

/* Next line, split into blank-separated tokens (spaces, tabs; a CR is a blank, so
 * CRLF files read). @return 1 with a line, 0 at the end of the file, -1 on error. */
static int st_glm_io_next(st_glm_io_reader_t *rd)
{
    char *p, *save = NULL;
    ssize_t len;

    errno = 0;
    len   = getline(&rd->line, &rd->cap, rd->f);
    if (len < 0) {
        if (ferror(rd->f)) {
            st_glm_io_msg(rd->msg, rd->msg_len, "%s: read error: %s", rd->path,
                          strerror(errno != 0 ? errno : EIO));
            rd->status = (errno == ENOMEM) ? ST_ERR_NO_MEMORY : ST_ERR_IO;
            return -1;
        }
        return 0;
    }
    rd->lineno++;
    if (strlen(rd->line) != (size_t)len) {
        st_glm_io_fail(rd, "NUL byte in the line (not a text model file)");
        return -1;
    }
    rd->ntok = 0;
    for (p = strtok_r(rd->line, " \t\r\n", &save); p != NULL;
         p = strtok_r(NULL, " \t\r\n", &save)) {
        if (rd->ntok == rd->tokcap) {
            char **grown = realloc(rd->tok, (size_t)ST_MAX(2 * rd->tokcap, 8) * sizeof(char *));

            if (grown == NULL) {
                st_glm_io_msg(rd->msg, rd->msg_len, "%s: out of memory", rd->path);
                rd->status = ST_ERR_NO_MEMORY;
                return -1;
            }
            rd->tok    = grown;
            rd->tokcap = ST_MAX(2 * rd->tokcap, 8);
        }
        rd->tok[rd->ntok++] = p;
    }
    return 1;
}

/* An integer token in [lo, hi]: optional sign, decimal digits only. */
static int st_glm_io_parse_int(const char *s, int64_t lo, int64_t hi, int64_t *v_p)
{
    const char *d = (s[0] == '+' || s[0] == '-') ? s + 1 : s;
    long long v;
    char *end;

    if (*d < '0' || *d > '9') {
        return -1;
    }
    errno = 0;
    v     = strtoll(s, &end, 10);
    if (errno != 0 || *end != '\0' || v < lo || v > hi) {
        return -1;
    }
    *v_p = (int64_t)v;
    return 0;
}

/* A real token: 0 finite, -1 not a number, -2 a number that is not finite (nan, inf,
 * or out of range). */
static int st_glm_io_parse_real(const char *s, double *v_p)
{
    char *end;
    double v;

    v = strtod(s, &end);
    if (end == s || *end != '\0') {
        return -1;
    }
    if (!isfinite(v)) {
        return -2;
    }
    *v_p = v;
    return 0;
}

/* What the header said. */
typedef struct {
    const st_glm_model_t *loss;
    const char           *type_name;
    int64_t               n_features;
    double                bias;
    int                   negate;     /* "label -1 1": w scores label -1 positive */
    int                   zero_one;   /* "label 1 0" or "label 0 1": the classes 1 and 0 */
    int                   nr_class;
    int                   nr_label;   /* names on the label line */
    double               *labels;     /* nr_class names where they are not those above */
    int64_t               line_type, line_class, line_label, line_feature, line_bias;
} st_glm_io_header_t;

/* A header line "KEY VALUE...": exactly @a nval values, KEY seen once. */
static int st_glm_io_key_ok(st_glm_io_reader_t *rd, int64_t *seen, int64_t nval)
{
    char q[ST_GLM_IO_QUOTE_LEN];

    if (*seen != 0) {
        st_glm_io_fail(rd, "%s given twice (first on line %" PRId64 ")", rd->tok[0], *seen);
        return 0;
    }
    /* (in 64 bits: nr_class may be 2^31 - 1) */
    if ((int64_t)rd->ntok < 1 + nval) {
        st_glm_io_fail(rd, "%s needs %" PRId64 " value%s", rd->tok[0], nval,
                       nval > 1 ? "s" : "");
        return 0;
    }
    if ((int64_t)rd->ntok > 1 + nval) {
        st_glm_io_fail(rd, "trailing text after %s: '%s'", rd->tok[0],
                       st_glm_io_quote(rd->tok[1 + nval], q, sizeof(q)));
        return 0;
    }
    *seen = rd->lineno;
    return 1;
}

static int st_glm_io_read_header(st_glm_io_reader_t *rd, st_glm_io_header_t *h)
{
    char q[ST_GLM_IO_QUOTE_LEN];
    int64_t v, l0, l1;
    size_t i;
    int rc;

    memset(h, 0, sizeof(*h));
    for (;;) {
        rc = st_glm_io_next(rd);
        if (rc < 0) {
            return -1;
        }
        if (rc == 0) {
            st_glm_io_fail(rd, rd->lineno == 0 ? "empty file, not a model" :
                           "end of file before the 'w' line (not a complete model)");
            return -1;
        }
        if (rd->ntok == 0) {
            continue;
        }
        if (!strcmp(rd->tok[0], "solver_type")) {
            if (!st_glm_io_key_ok(rd, &h->line_type, 1)) {
                return -1;
            }
            for (i = 0; i < ST_ARRAY_SIZE(st_glm_io_types); i++) {
                if (!strcmp(rd->tok[1], st_glm_io_types[i].name)) {
                    h->loss      = st_glm_model_get(st_glm_io_types[i].kind);
                    h->type_name = st_glm_io_types[i].name;
                }
            }
            if (h->loss == NULL) {
                /* LIBLINEAR's own models that Strata has not, named as such (before:
                   "unknown", and the list lacked L2R_L1LOSS_SVR_DUAL, which it reads) */
                const char *other = !strcmp(rd->tok[1], "MCSVM_CS")
                                        ? "LIBLINEAR's Crammer and Singer multi-class SVM "
                                          "(train -s 4)"
                                    : !strcmp(rd->tok[1], "ONECLASS_SVM")
                                        ? "LIBLINEAR's one-class SVM (train -s 21)"
                                        : NULL;

                st_glm_io_fail(rd, "%s solver_type '%s'%s%s%s (Strata reads L2R_LR, "
                               "L2R_LR_DUAL, L2R_L1LOSS_SVC_DUAL, L2R_L2LOSS_SVC_DUAL, "
                               "L2R_L2LOSS_SVC, L2R_L2LOSS_SVR, L2R_L2LOSS_SVR_DUAL, "
                               "L2R_L1LOSS_SVR_DUAL, L1R_LR, L1R_L2LOSS_SVC, STRATA_LASSO, "
                               "STRATA_ELASTIC_NET)", other ? "unsupported" : "unknown",
                               st_glm_io_quote(rd->tok[1], q, sizeof(q)), other ? ": " : "",
                               other ? other : "", other ? ", a model Strata has not" : "");
                return -1;
            }
        } else if (!strcmp(rd->tok[0], "nr_class")) {
            if (!st_glm_io_key_ok(rd, &h->line_class, 1)) {
                return -1;
            }
            /* (a class's weights take 8 bytes a feature: no bound but the memory's; 1:
               LIBLINEAR's model of training data of a single label, which predicts that
               label for every row) */
            if (st_glm_io_parse_int(rd->tok[1], 1, INT32_MAX, &v) != 0) {
                st_glm_io_fail(rd, "nr_class '%s' is not an integer from 1 to %d",
                               st_glm_io_quote(rd->tok[1], q, sizeof(q)), INT32_MAX);
                return -1;
            }
            h->nr_class = (int)v;
        } else if (!strcmp(rd->tok[0], "label")) {
            /* (before nr_class: as many as given, checked against it at 'w') */
            h->nr_label = (h->line_class != 0) ? h->nr_class : ST_MAX(rd->ntok - 1, 1);
            if (!st_glm_io_key_ok(rd, &h->line_label, h->nr_label)) {
                return -1;
            }
            h->labels = malloc((size_t)h->nr_label * sizeof(double));
            if (h->labels == NULL) {
                st_glm_io_msg(rd->msg, rd->msg_len, "%s: out of memory", rd->path);
                rd->status = ST_ERR_NO_MEMORY;
                return -1;
            }
            for (i = 0; i < (size_t)h->nr_label; i++) {
                if (st_glm_io_parse_int(rd->tok[1 + i], INT32_MIN + 1, INT32_MAX, &l0) != 0) {
                    st_glm_io_fail(rd, "label '%s' is not an integer below 2^31 in magnitude",
                                   st_glm_io_quote(rd->tok[1 + i], q, sizeof(q)));
                    return -1;
                }
                for (l1 = 0; l1 < (int64_t)i; l1++) {
                    if (h->labels[l1] == (double)l0) {
                        st_glm_io_fail(rd, "label %" PRId64 " given twice", l0);
                        return -1;
                    }
                }
                h->labels[i] = (double)l0;
            }

        } else if (!strcmp(rd->tok[0], "nr_feature")) {
            if (!st_glm_io_key_ok(rd, &h->line_feature, 1)) {
                return -1;
            }
            if (st_glm_io_parse_int(rd->tok[1], 0, (int64_t)ST_GLM_DATA_MAX_INDEX,
                                    &h->n_features) != 0) {
                st_glm_io_fail(rd, "nr_feature '%s' is not an integer from 0 to %" PRIu64,
                               st_glm_io_quote(rd->tok[1], q, sizeof(q)),
                               (uint64_t)ST_GLM_DATA_MAX_INDEX);
                return -1;
            }
        } else if (!strcmp(rd->tok[0], "bias")) {
            if (!st_glm_io_key_ok(rd, &h->line_bias, 1)) {
                return -1;
            }
            if (st_glm_io_parse_real(rd->tok[1], &h->bias) != 0) {
                st_glm_io_fail(rd, "bias '%s' is not a finite number",
                               st_glm_io_quote(rd->tok[1], q, sizeof(q)));
                return -1;
            }
        } else if (!strcmp(rd->tok[0], "w")) {
            if (rd->ntok > 1) {
                st_glm_io_fail(rd, "trailing text after w: '%s'",
                               st_glm_io_quote(rd->tok[1], q, sizeof(q)));
                return -1;
            }
            break;
        } else {
            st_glm_io_fail(rd, "unknown keyword '%s' in the header",
                           st_glm_io_quote(rd->tok[0], q, sizeof(q)));
            return -1;
        }
    }

    /* the 'w' line: is the header complete? */
    if (h->line_type == 0 || h->line_class == 0 || h->line_feature == 0 ||
        h->line_bias == 0) {
        st_glm_io_fail(rd, "w before %s (the header is incomplete)",
                       h->line_type == 0 ? "solver_type" :
                       h->line_class == 0 ? "nr_class" :
                       h->line_feature == 0 ? "nr_feature" : "bias");
        return -1;
    }
    if (h->loss->classification && h->line_label == 0) {
        st_glm_io_fail(rd, "w before label (a %s model needs the line 'label 1 -1')",
                       h->type_name);
        return -1;
    }
    if (!h->loss->classification && h->line_label != 0) {
        rd->lineno = h->line_label;
        st_glm_io_fail(rd, "label line in a regression model (%s)", h->type_name);
        return -1;
    }
    if (!h->loss->classification && h->nr_class != 2) {
        rd->lineno = h->line_class;
        st_glm_io_fail(rd, "nr_class %d in a regression model (%s): LIBLINEAR writes 2",
                       h->nr_class, h->type_name);
        return -1;
    }
    if (!h->loss->classification) {
        return 0;
    }
    if (h->nr_label != h->nr_class) {   /* (a label line before nr_class) */
        rd->lineno = h->line_label;
        st_glm_io_fail(rd, "%d labels, but nr_class %d (on line %" PRId64 ")", h->nr_label,
                       h->nr_class, h->line_class);
        return -1;
    }
    /* the classes 1 and -1 (or 0): the binary model of before, 0/1 read as -1/+1 */
    l0 = (int64_t)h->labels[0];
    l1 = (h->nr_class == 2) ? (int64_t)h->labels[1] : 0;
    if (h->nr_class == 2 &&
        ((l0 == 1 && (l1 == -1 || l1 == 0)) || ((l0 == -1 || l0 == 0) && l1 == 1))) {
        h->negate   = (l0 != 1);
        h->zero_one = (l0 == 0 || l1 == 0);
        free(h->labels);
        h->labels = NULL;
    }
    return 0;
}

/* The weights after 'w': exactly @a count lines of @a nr_w numbers (blank lines are
 * skipped); grows the array as they come, so a header claiming a huge nr_feature costs
 * memory only for the weights the file really has. */
static int st_glm_io_read_weights(st_glm_io_reader_t *rd, const st_glm_io_header_t *h,
                                  int64_t count, int nr_w, double **w_p)
{
    char q[ST_GLM_IO_QUOTE_LEN];
    int64_t n = 0, cap = 0;
    double *w = NULL, *grown;
    int rc, c;

    for (;;) {
        rc = st_glm_io_next(rd);
        if (rc < 0) {
            goto err;
        }
        if (rc == 0) {
            break;
        }
        if (rd->ntok == 0) {
            continue;
        }
        if (n == count) {
            st_glm_io_fail(rd, "trailing text after the %" PRId64 " weights (nr_feature %"
                           PRId64 "%s): '%s'", count, h->n_features,
                           count > h->n_features ? " and the bias" : "",
                           st_glm_io_quote(rd->tok[0], q, sizeof(q)));
            goto err;
        }
        if (rd->ntok > nr_w) {
            st_glm_io_fail(rd, "trailing text after weight %" PRId64 ": '%s' (%d weight%s a "
                           "line)", n + 1, st_glm_io_quote(rd->tok[nr_w], q, sizeof(q)), nr_w,
                           nr_w > 1 ? "s, one per class," : "");
            goto err;
        }
        if (rd->ntok < nr_w) {
            st_glm_io_fail(rd, "weight %" PRId64 ": %d value%s, not %d (one per class)",
                           n + 1, rd->ntok, rd->ntok == 1 ? "" : "s", nr_w);
            goto err;
        }
        if (n == cap) {
            /* (lines of nr_w weights: at first 1024 weights' worth, so that a short file
               claiming many classes and features costs no more) */
            cap   = ST_MIN(count, ST_MAX(2 * cap, ST_MAX(1024 / nr_w, 1)));
            grown = realloc(w, (size_t)cap * (size_t)nr_w * sizeof(double));
            if (grown == NULL) {
                st_glm_io_msg(rd->msg, rd->msg_len, "%s: out of memory", rd->path);
                rd->status = ST_ERR_NO_MEMORY;
                goto err;
            }
            w = grown;
        }
        for (c = 0; c < nr_w; c++) {
            rc = st_glm_io_parse_real(rd->tok[c], &w[n * nr_w + c]);
            if (rc != 0) {
                st_glm_io_fail(rd, "weight %" PRId64 ": '%s' is %s", n + 1,
                               st_glm_io_quote(rd->tok[c], q, sizeof(q)),
                               rc == -1 ? "not a number" : "not finite");
                goto err;
            }
        }
        n++;
    }
    if (n < count) {
        st_glm_io_fail(rd, "end of file after %" PRId64 " weight%s: nr_feature %" PRId64
                       "%s needs %" PRId64, n, n == 1 ? "" : "s", h->n_features,
                       count > h->n_features ? " and the bias" : "", count);
        goto err;
    }
    *w_p = w;   /* NULL when there are none (nr_feature 0, no bias) */
    return 0;

err:
    free(w);
    return -1;
}

ST_EXPORT strata_status_t strata_glm_model_load(const char *path, char *msg, size_t msg_len,
                                                strata_glm_model_t **model_p)
{
    st_glm_io_reader_t rd;
    st_glm_io_header_t h;
    st_glm_io_locale_t loc;
    strata_glm_model_t *model;
    int64_t j, count;
    double *w = NULL;
    int rc, err, nr_w;

    if (path == NULL || model_p == NULL) {
        st_glm_io_msg(msg, msg_len, "strata_glm_model_load: no file name or no result");
        return ST_ERR_INVALID_PARAM;
    }
    memset(&rd, 0, sizeof(rd));
    rd.path    = path;
    rd.msg     = msg;
    rd.msg_len = msg_len;
    rd.f       = fopen(path, "re");
    if (rd.f == NULL) {
        err = errno;
        st_glm_io_msg(msg, msg_len, "%s: %s", path, strerror(err));
        return (err == ENOENT) ? ST_ERR_NOT_FOUND : ST_ERR_IO;
    }

    st_glm_io_locale_enter(&loc);
    rc = st_glm_io_read_header(&rd, &h);
    nr_w = (h.labels != NULL && h.nr_class > 2) ? h.nr_class : 1;
    if (rc == 0) {
        /* LIBLINEAR: the bias weight is there when bias >= 0 */
        count = h.n_features + (h.bias >= 0 ? 1 : 0);
        rc    = st_glm_io_read_weights(&rd, &h, count, nr_w, &w);
    }
    st_glm_io_locale_leave(&loc);
    fclose(rd.f);
    free(rd.line);
    free(rd.tok);
    if (rc != 0) {
        free(h.labels);
        return rd.status;
    }

    /* a bias of 0 (LIBLINEAR -B 0) contributes nothing: no bias */
    model = (h.labels != NULL)
                ? st_glm_model_new_classes(h.loss, h.n_features, h.bias > 0 ? h.bias : -1.0,
                                           h.nr_class, h.labels)
                : st_glm_model_new(h.loss, h.n_features, h.bias > 0 ? h.bias : -1.0);
    free(h.labels);
    if (model == NULL) {
        free(w);
        st_glm_io_msg(msg, msg_len, "%s: out of memory", path);
        return ST_ERR_NO_MEMORY;
    }
    count = (h.n_features + (h.bias > 0 ? 1 : 0)) * nr_w;
    for (j = 0; j < count; j++) {
        model->w[j] = h.negate ? -w[j] : w[j];
    }
    model->zero_positive = h.negate;   /* LIBLINEAR: a score of 0 is label[1] */
    model->zero_one      = h.zero_one;
    free(w);
    *model_p = model;
    return ST_OK;
}
