/*
 * svmlight/libsvm text reader, collective over a communicator.
 *
 * A line is "label index:value index:value ... [# comment]". Rank r of P owns the
 * bytes [r*S/P, (r+1)*S/P) of the S-byte file and parses every line that STARTS
 * in them, reading past its range to finish its last line. A line starts at byte
 * 0 and after every '\n', so rank r > 0 skips to the first '\n' at or after byte
 * start-1. Example, S = 18, P = 2 (rank 1 owns bytes [9, 18)):
 *
 *     byte   0         1
 *            012345 6789012345678 9
 *            +1 1:2\n-1 3:4 5:6\n
 *                    ^ line 2 starts at byte 7, in rank 0's range. Rank 1 looks
 *                      for a '\n' from byte 8 on, finds byte 17, so its first
 *                      line would start at 18 = S: it parses nothing, while rank 0
 *                      parses lines 1 and 2, reading line 2 to byte 17.
 *
 * Every line is parsed by exactly one rank and no rank reads more than its range
 * plus one line. Afterwards one MPI_Allgather of a few counters per rank gives
 * every rank the line and row offsets of all (prefix sums), the totals, and
 * which ranks failed: a rank that failed stops parsing, so the offsets of the
 * ranks after it are short, but only the lowest failed rank's error can win and
 * all lines before it were counted exactly.
 *
 * Numbers: a hand-written decimal parser handles up to 19 significant digits with
 * exponents in [-22, 22] exactly (Clinger's fast path: both operands exact, one
 * correctly rounded IEEE operation); for 32-bit values the double is rounded
 * again only when that cannot differ from a direct rounding (it is not halfway
 * between two floats, and in the normal float range). Everything else goes to
 * strtod_l/strtof_l in the C locale, whatever the program's (a decimal comma read
 * "1.5e-30" as 1), so values are always correctly rounded.
 */
#include "config.h"

#include "st_glm_data.h"

#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <locale.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define ST_GLM_SVM_WHAT_LEN   384
#define ST_GLM_SVM_TOKEN_LEN  48
#define ST_GLM_SVM_STATS      9     /* counters per rank in the MPI_Allgather */

/* bytes that end a token */
#define ST_GLM_DELIM_BLANK 1
#define ST_GLM_DELIM_END   2

static const double st_glm_p10[23] = {
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
    1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22
};

static unsigned char st_glm_delim[256] = {
    [' '] = ST_GLM_DELIM_BLANK, ['\t'] = ST_GLM_DELIM_BLANK,
    ['\n'] = ST_GLM_DELIM_END, ['\r'] = ST_GLM_DELIM_END, ['#'] = ST_GLM_DELIM_END
};

/* ---- numbers ---- */

static inline int st_glm_is_digit(char c)
{
    return (unsigned)(c - '0') < 10u;
}

/* 1 when rounding double @a d to float gives the float nearest to the exact decimal. */
static inline int st_glm_float_safe(double d)
{
    uint64_t b, ex;

    memcpy(&b, &d, sizeof(b));
    ex = (b >> 52) & 0x7ff;
    /* normal floats: 2^-126 <= |d| < 2^128 (biased double exponents 897..1150) */
    if (ex < 897 || ex > 1150) {
        return 0;
    }
    /* a double exactly halfway between two floats would be rounded twice */
    return (b & 0x1fffffffULL) != 0x10000000ULL;
}

static int st_glm_match_ci(const char *p, const char *e, const char *word)
{
    size_t n = strlen(word);

    if ((size_t)(e - p) != n) {
        return 0;
    }
    while (n-- > 0) {
        if ((*p++ | 0x20) != *word++) {
            return 0;
        }
    }
    return 1;
}

/* The C locale for strtod_l and strtof_l, made once: the program's own may have a
 * decimal comma (setlocale(LC_ALL, "de_DE.UTF-8")), where strtod stops at the point.
 * (locale_t)0 where it could not be made. */
static locale_t st_glm_c_locale;
static pthread_once_t st_glm_c_locale_once = PTHREAD_ONCE_INIT;

static void st_glm_c_locale_init(void)
{
    st_glm_c_locale = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
}

static st_glm_num_t st_glm_num_slow(const char *s, size_t len, int prec, double *val_p)
{
    char buf[128], *tmp = buf, *endp;
    locale_t c;
    double v;
    int whole;

    if (len >= sizeof(buf)) {
        tmp = malloc(len + 1);
        if (tmp == NULL) {
            return ST_GLM_NUM_SYNTAX;
        }
    }
    memcpy(tmp, s, len);
    tmp[len] = '\0';
    pthread_once(&st_glm_c_locale_once, st_glm_c_locale_init);
    c     = st_glm_c_locale;
    errno = 0;
    if (c != (locale_t)0) {
        v = (prec == 32) ? (double)strtof_l(tmp, &endp, c) : strtod_l(tmp, &endp, c);
    } else {   /* (no memory for it: the program's locale, whose misreads are refused) */
        v = (prec == 32) ? (double)strtof(tmp, &endp) : strtod(tmp, &endp);
    }
    whole = (endp == tmp + len);
    if (tmp != buf) {
        free(tmp);
    }
    if (!whole) {   /* (the syntax was checked: a locale's other decimal point) */
        return ST_GLM_NUM_SYNTAX;
    }
    if (isinf(v)) {
        return ST_GLM_NUM_RANGE;
    }
    *val_p = v;
    return ST_GLM_NUM_OK;
}

static inline st_glm_num_t st_glm_num_parse(const char *s, size_t len, int prec,
                                            double *val_p)
{
    const char *p = s, *e = s + len, *w;
    uint64_t mant = 0;
    int64_t exp10 = 0, x;
    int ndig = 0, any = 0, inexact = 0, neg = 0, eneg = 0;
    double d;

    if (p < e && (*p == '+' || *p == '-')) {
        neg = (*p == '-');
        p++;
    }
    w = p;   /* where a word (nan, inf) must start: right after the sign */
    while (p < e && st_glm_is_digit(*p)) {
        any = 1;
        if (ndig < 19) {
            mant = mant * 10 + (uint64_t)(*p - '0');
            ndig += (mant != 0);
        } else {
            exp10++;
            inexact |= (*p != '0');
        }
        p++;
    }
    if (p < e && *p == '.') {
        p++;
        while (p < e && st_glm_is_digit(*p)) {
            any = 1;
            if (ndig < 19) {
                mant = mant * 10 + (uint64_t)(*p - '0');
                ndig += (mant != 0);
                exp10--;
            } else {
                inexact |= (*p != '0');
            }
            p++;
        }
    }
    if (!any) {
        if (st_glm_match_ci(w, e, "nan")) {
            *val_p = neg ? -NAN : NAN;
            return ST_GLM_NUM_NONFINITE;
        }
        if (st_glm_match_ci(w, e, "inf") || st_glm_match_ci(w, e, "infinity")) {
            *val_p = neg ? -INFINITY : INFINITY;
            return ST_GLM_NUM_NONFINITE;
        }
        return ST_GLM_NUM_SYNTAX;
    }
    if (p < e && (*p == 'e' || *p == 'E')) {
        p++;
        if (p < e && (*p == '+' || *p == '-')) {
            eneg = (*p == '-');
            p++;
        }
        if (p == e || !st_glm_is_digit(*p)) {
            return ST_GLM_NUM_SYNTAX;
        }
        for (x = 0; p < e && st_glm_is_digit(*p); p++) {
            if (x < 1000000) {
                x = x * 10 + (*p - '0');
            }
        }
        exp10 += eneg ? -x : x;
    }
    if (p != e) {
        return ST_GLM_NUM_SYNTAX;
    }
    if (mant == 0) {
        *val_p = neg ? -0.0 : 0.0;
        return ST_GLM_NUM_OK;
    }
    if (!inexact && mant <= (1ULL << 53) && exp10 >= -22 && exp10 <= 22) {
        d = (double)mant;
        d = (exp10 < 0) ? d / st_glm_p10[-exp10] : d * st_glm_p10[exp10];
        d = neg ? -d : d;
        if (prec != 32) {
            *val_p = d;
            return ST_GLM_NUM_OK;
        }
        if (st_glm_float_safe(d)) {
            float f = (float)d;

            if (isinf(f)) {
                return ST_GLM_NUM_RANGE;
            }
            *val_p = f;
            return ST_GLM_NUM_OK;
        }
    }
    return st_glm_num_slow(s, len, prec, val_p);
}

st_glm_num_t st_glm_data_parse_real(const char *s, size_t len, int prec, double *val_p)
{
    return st_glm_num_parse(s, len, prec, val_p);
}

char *st_glm_data_real_text(char *out, double v)
{
    char digits[24], *p = out;
    double back;
    int prec, n = 0, k;

    if (v == 0.0) {
        return out + snprintf(out, ST_GLM_REAL_TEXT_LEN, signbit(v) ? "-0" : "0");
    }
    if (v == floor(v) && fabs(v) < 0x1p53) {
        uint64_t u = (uint64_t)fabs(v);

        if (v < 0) {
            *p++ = '-';
        }
        do {
            digits[n++] = (char)('0' + u % 10);
            u /= 10;
        } while (u > 0);
        for (k = n - 1; k >= 0; k--) {
            *p++ = digits[k];
        }
        *p = '\0';
        return p;
    }
    for (prec = 15; prec <= 17; prec++) {
        n = snprintf(out, ST_GLM_REAL_TEXT_LEN, "%.*g", prec, v);
        if (st_glm_num_parse(out, (size_t)n, 64, &back) == ST_GLM_NUM_OK && back == v) {
            break;
        }
    }
    return out + n;
}

/* ---- one rank's lines ---- */

typedef struct {
    const char *path;
    int         prec;
    int         label_kind;
    int         allow_nonfinite;
    uint64_t    max_index;
    /* results, growing */
    int64_t    *indptr;
    double     *y;
    size_t      rows_cap;
    uint32_t   *indices;
    float      *v32;
    double     *v64;
    size_t      nnz_cap;
    int64_t     n_rows;
    int64_t     nnz;
    int64_t     n_lines;        /* lines seen, comments and blank lines included */
    uint64_t    max_seen;       /* largest 1-based index */
    int64_t     max_line;       /* the first local line holding it */
    int64_t     first_zero;     /* first local line labelled 0 (0: none) */
    int64_t     first_neg;      /* first local line labelled -1 (0: none) */
    /* the first error: the line it is on, local */
    st_status_t err_status;
    int64_t     err_line;
    char        err_what[ST_GLM_SVM_WHAT_LEN];
} st_glm_svm_chunk_t;

static void st_glm_svm_fail(st_glm_svm_chunk_t *ck, st_status_t status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void st_glm_svm_fail(st_glm_svm_chunk_t *ck, st_status_t status, const char *fmt, ...)
{
    va_list ap;

    ck->err_status = status;
    ck->err_line   = ck->n_lines;
    va_start(ap, fmt);
    vsnprintf(ck->err_what, sizeof(ck->err_what), fmt, ap);
    va_end(ap);
}

static int st_glm_svm_grow(void **arr, size_t elem, size_t cap)
{
    void *p = realloc(*arr, cap * elem);

    if (p == NULL) {
        return -1;
    }
    *arr = p;
    return 0;
}

static int st_glm_svm_grow_rows(st_glm_svm_chunk_t *ck)
{
    size_t cap = ck->rows_cap + ck->rows_cap / 2 + 64;

    if (st_glm_svm_grow((void**)&ck->indptr, sizeof(*ck->indptr), cap + 1) ||
        st_glm_svm_grow((void**)&ck->y, sizeof(*ck->y), cap)) {
        return -1;
    }
    ck->rows_cap = cap;
    return 0;
}

static int st_glm_svm_grow_nnz(st_glm_svm_chunk_t *ck)
{
    size_t cap = ck->nnz_cap + ck->nnz_cap / 2 + 256;

    if (st_glm_svm_grow((void**)&ck->indices, sizeof(*ck->indices), cap) ||
        (ck->prec == 32 ? st_glm_svm_grow((void**)&ck->v32, sizeof(*ck->v32), cap)
                        : st_glm_svm_grow((void**)&ck->v64, sizeof(*ck->v64), cap))) {
        return -1;
    }
    ck->nnz_cap = cap;
    return 0;
}

/* The token starting at @a p: up to the next blank, line end, '#' or @a end. */
static inline const char *st_glm_token_end(const char *p, const char *end)
{
    while (p < end && !st_glm_delim[(unsigned char)*p]) {
        p++;
    }
    return p;
}

static int st_glm_svm_label(st_glm_svm_chunk_t *ck, const char *tok, const char *tend,
                            double *y_p)
{
    char q[ST_GLM_SVM_TOKEN_LEN];
    st_glm_num_t rc;
    double v = 0.0;

    rc = st_glm_num_parse(tok, (size_t)(tend - tok), 64, &v);
    if (ST_UNLIKELY(rc != ST_GLM_NUM_OK)) {
        st_glm_token_quote(tok, (size_t)(tend - tok), q, sizeof(q));
        if (memchr(tok, ':', (size_t)(tend - tok)) != NULL) {
            st_glm_svm_fail(ck, ST_ERR_INVALID_PARAM, "missing label (the line starts with "
                            "'%s')", q);
        } else if (rc == ST_GLM_NUM_SYNTAX) {
            st_glm_svm_fail(ck, ST_ERR_INVALID_PARAM, "bad label '%s'", q);
        } else if (rc == ST_GLM_NUM_RANGE) {
            st_glm_svm_fail(ck, ST_ERR_INVALID_PARAM, "label '%s' out of range", q);
        } else {
            st_glm_svm_fail(ck, ST_ERR_INVALID_PARAM, "non-finite label '%s'", q);
        }
        return -1;
    }
    if (ck->label_kind == ST_GLM_LABEL_REAL) {
        *y_p = v;
        return 0;
    }
    if (ck->label_kind == ST_GLM_LABEL_MULTI) {
        if (!st_glm_data_class_name(v)) {
            st_glm_token_quote(tok, (size_t)(tend - tok), q, sizeof(q));
            st_glm_svm_fail(ck, ST_ERR_INVALID_PARAM, "label '%s' is not a class label (an "
                            "integer below 2^31 in magnitude; read real targets in "
                            "regression mode)", q);
            return -1;
        }
        *y_p = v + 0.0;   /* (-0 is the class 0) */
        return 0;
    }
    if (v == 1.0) {
        *y_p = 1.0;
    } else if (v == -1.0) {
        *y_p = -1.0;
        if (ck->first_neg == 0) {
            ck->first_neg = ck->n_lines;
        }
    } else if (v == 0.0) {
        *y_p = -1.0;
        if (ck->first_zero == 0) {
            ck->first_zero = ck->n_lines;
        }
    } else {
        st_glm_token_quote(tok, (size_t)(tend - tok), q, sizeof(q));
        st_glm_svm_fail(ck, ST_ERR_INVALID_PARAM, "label '%s' is not a class label (-1, +1, "
                        "0 or 1; read real targets in regression mode)", q);
        return -1;
    }
    return 0;
}

/* Error for a token that is not a well-formed "index:value" pair. */
static void st_glm_svm_bad_pair(st_glm_svm_chunk_t *ck, const char *tok, const char *end)
{
    const char *tend = st_glm_token_end(tok, end);
    const char *colon = memchr(tok, ':', (size_t)(tend - tok));
    char q[ST_GLM_SVM_TOKEN_LEN];

    st_glm_token_quote(tok, (size_t)(tend - tok), q, sizeof(q));
    if (tend - tok >= 4 && !memcmp(tok, "qid:", 4)) {
        st_glm_svm_fail(ck, ST_ERR_INVALID_PARAM, "'%s': qid tokens (ranking data) are not "
                        "supported", q);
    } else if (colon == tok) {
        st_glm_svm_fail(ck, ST_ERR_INVALID_PARAM, "truncated pair '%s' (no index)", q);
    } else if (colon != NULL) {
        st_glm_svm_fail(ck, ST_ERR_INVALID_PARAM, "bad index in pair '%s'", q);
    } else {
        st_glm_svm_fail(ck, ST_ERR_INVALID_PARAM, "expected index:value, got '%s'", q);
    }
}

/* Parse the lines starting in [p, lim); the last one may run on to @a end. */
static void st_glm_svm_parse(st_glm_svm_chunk_t *ck, const char *p, const char *lim,
                             const char *end)
{
    const uint64_t max_index = ck->max_index;
    char q[ST_GLM_SVM_TOKEN_LEN];

    while (p < lim) {
        const char *tok, *tend;
        uint64_t prev = 0;
        double y;

        ck->n_lines++;
        while (p < end && st_glm_delim[(unsigned char)*p] == ST_GLM_DELIM_BLANK) {
            p++;
        }
        if (p == end) {
            break;
        }
        if (*p == '\n') {
            p++;
            continue;
        }
        if (*p == '#') {
            tok = memchr(p, '\n', (size_t)(end - p));
            p = (tok != NULL) ? tok + 1 : end;
            continue;
        }
        if (*p == '\r') {
            if (p + 1 == end || p[1] == '\n') {
                p += (p + 1 == end) ? 1 : 2;
                continue;
            }
            st_glm_svm_fail(ck, ST_ERR_INVALID_PARAM, "stray carriage return (only CRLF "
                            "line ends are accepted)");
            return;
        }

        /* a row: the label */
        tok = p;
        tend = st_glm_token_end(p, end);
        if (st_glm_svm_label(ck, tok, tend, &y) != 0) {
            return;
        }
        if ((size_t)ck->n_rows >= ck->rows_cap && st_glm_svm_grow_rows(ck) != 0) {
            goto err_nomem;
        }
        ck->y[ck->n_rows]      = y;
        ck->indptr[ck->n_rows] = ck->nnz;
        ck->n_rows++;
        p = tend;

        /* the pairs */
        for (;;) {
            uint64_t idx = 0;
            const char *v;
            st_glm_num_t rc;
            double val = 0.0;
            int over = 0;
            char c;

            while (p < end && st_glm_delim[(unsigned char)*p] == ST_GLM_DELIM_BLANK) {
                p++;
            }
            if (p == end) {
                break;
            }
            c = *p;
            if (c == '\n') {
                p++;
                break;
            }
            if (c == '#') {
                tok = memchr(p, '\n', (size_t)(end - p));
                p = (tok != NULL) ? tok + 1 : end;
                break;
            }
            if (c == '\r') {
                if (p + 1 == end || p[1] == '\n') {
                    p += (p + 1 == end) ? 1 : 2;
                    break;
                }
                st_glm_svm_fail(ck, ST_ERR_INVALID_PARAM, "stray carriage return (only CRLF "
                                "line ends are accepted)");
                return;
            }
            tok = p;
            if (!st_glm_is_digit(c)) {
                st_glm_svm_bad_pair(ck, tok, end);
                return;
            }
            do {
                idx = idx * 10 + (uint64_t)(*p - '0');
                if (idx > max_index) {
                    over = 1;
                    idx  = max_index + 1;
                }
                p++;
            } while (p < end && st_glm_is_digit(*p));
            if (p == end || *p != ':') {
                st_glm_svm_bad_pair(ck, tok, end);
                return;
            }
            v = ++p;
            p = st_glm_token_end(p, end);
            if (p == v) {
                st_glm_token_quote(tok, (size_t)(p - tok), q, sizeof(q));
                st_glm_svm_fail(ck, ST_ERR_INVALID_PARAM, "truncated pair '%s' (no value)", q);
                return;
            }
            if (ST_UNLIKELY(over || idx == 0 || idx <= prev)) {
                st_glm_token_quote(tok, (size_t)(v - 1 - tok), q, sizeof(q));
                if (over) {
                    st_glm_svm_fail(ck, ST_ERR_INVALID_PARAM, "index %s exceeds the largest "
                                    "allowed index %llu", q, (unsigned long long)max_index);
                } else if (idx == 0) {
                    st_glm_svm_fail(ck, ST_ERR_INVALID_PARAM, "index 0 (indices are "
                                    "1-based)");
                } else if (idx == prev) {
                    st_glm_svm_fail(ck, ST_ERR_INVALID_PARAM, "duplicate index %llu",
                                    (unsigned long long)idx);
                } else {
                    st_glm_svm_fail(ck, ST_ERR_INVALID_PARAM, "index %llu after index %llu "
                                    "(indices must increase within a line)",
                                    (unsigned long long)idx, (unsigned long long)prev);
                }
                return;
            }
            rc = st_glm_num_parse(v, (size_t)(p - v), ck->prec, &val);
            if (ST_UNLIKELY(rc != ST_GLM_NUM_OK)) {
                if (rc != ST_GLM_NUM_NONFINITE || !ck->allow_nonfinite) {
                    st_glm_token_quote(v, (size_t)(p - v), q, sizeof(q));
                    if (rc == ST_GLM_NUM_SYNTAX) {
                        st_glm_svm_fail(ck, ST_ERR_INVALID_PARAM, "bad value '%s' for index "
                                        "%llu", q, (unsigned long long)idx);
                    } else if (rc == ST_GLM_NUM_RANGE) {
                        st_glm_svm_fail(ck, ST_ERR_INVALID_PARAM, "value '%s' for index %llu "
                                        "overflows %d-bit floating point", q,
                                        (unsigned long long)idx, ck->prec);
                    } else {
                        st_glm_svm_fail(ck, ST_ERR_INVALID_PARAM, "non-finite value '%s' for "
                                        "index %llu (not allowed)", q,
                                        (unsigned long long)idx);
                    }
                    return;
                }
            }
            if ((size_t)ck->nnz >= ck->nnz_cap && st_glm_svm_grow_nnz(ck) != 0) {
                goto err_nomem;
            }
            ck->indices[ck->nnz] = (uint32_t)(idx - 1);
            if (ck->prec == 32) {
                ck->v32[ck->nnz] = (float)val;
            } else {
                ck->v64[ck->nnz] = val;
            }
            ck->nnz++;
            prev = idx;
        }
        if (prev > ck->max_seen) {
            ck->max_seen = prev;
            ck->max_line = ck->n_lines;
        }
    }
    return;

err_nomem:
    st_glm_svm_fail(ck, ST_ERR_NO_MEMORY, "out of memory after %lld rows",
                    (long long)ck->n_rows);
}

static void st_glm_svm_chunk_free(st_glm_svm_chunk_t *ck)
{
    free(ck->indptr);
    free(ck->y);
    free(ck->indices);
    free(ck->v32);
    free(ck->v64);
}

/* Check the options; a message in @a err (key FIRST) when they are invalid. */
static void st_glm_svm_opts(const st_glm_data_opts_t *opts, const char *path,
                            st_glm_svm_chunk_t *ck, int64_t *n_features_p, st_glm_err_t *err)
{
    st_glm_data_opts_t o;

    st_glm_data_opts_resolve(opts, path, 64, &o, err);
    ck->path            = path;
    ck->prec            = o.prec;
    ck->label_kind      = o.label_kind;
    ck->allow_nonfinite = o.allow_nonfinite;
    ck->max_index       = o.max_index;
    *n_features_p       = o.n_features;
}

/* Hand the chunk's arrays over to a new st_glm_data_t, trimmed to size. */
static st_status_t st_glm_svm_build(st_glm_svm_chunk_t *ck, const char *path,
                                    st_glm_data_t **data_p)
{
    st_glm_data_t *d = calloc(1, sizeof(*d));

    if (d == NULL) {
        return ST_ERR_NO_MEMORY;
    }
    if (ck->indptr == NULL) {
        if (st_glm_svm_grow((void**)&ck->indptr, sizeof(*ck->indptr), (size_t)ck->n_rows + 1)) {
            free(d);
            return ST_ERR_NO_MEMORY;
        }
    }
    ck->indptr[ck->n_rows] = ck->nnz;
    /* trimming never fails for lack of memory; keep the larger block if it does */
    st_glm_svm_grow((void**)&ck->indptr, sizeof(*ck->indptr), (size_t)ck->n_rows + 1);
    st_glm_svm_grow((void**)&ck->y, sizeof(*ck->y), ST_MAX((size_t)ck->n_rows, (size_t)1));
    st_glm_svm_grow((void**)&ck->indices, sizeof(*ck->indices),
                    ST_MAX((size_t)ck->nnz, (size_t)1));
    if (ck->prec == 32) {
        st_glm_svm_grow((void**)&ck->v32, sizeof(*ck->v32), ST_MAX((size_t)ck->nnz, (size_t)1));
    } else {
        st_glm_svm_grow((void**)&ck->v64, sizeof(*ck->v64), ST_MAX((size_t)ck->nnz, (size_t)1));
    }
    if (ck->y == NULL || ck->indices == NULL || (ck->v32 == NULL && ck->v64 == NULL)) {
        free(d);
        return ST_ERR_NO_MEMORY;
    }
    d->source = strdup(path);
    if (d->source == NULL) {
        free(d);
        return ST_ERR_NO_MEMORY;
    }
    d->n_rows     = ck->n_rows;
    d->nnz        = ck->nnz;
    d->indptr     = ck->indptr;
    d->y          = ck->y;
    d->indices    = ck->indices;
    d->prec       = ck->prec;
    d->val32      = ck->v32;
    d->val64      = ck->v64;
    d->label_kind = (st_glm_label_kind_t)ck->label_kind;
    d->format     = ST_GLM_FORMAT_SVM;
    ck->indptr  = NULL;
    ck->y       = NULL;
    ck->indices = NULL;
    ck->v32     = NULL;
    ck->v64     = NULL;
    *data_p = d;
    return ST_OK;
}

st_status_t st_glm_data_read_svm(const char *path, const st_glm_data_opts_t *opts,
                                 MPI_Comm comm, char *msg, size_t msg_len,
                                 st_glm_data_t **data_p)
{
    int64_t mine[ST_GLM_SVM_STATS], *all = NULL;
    int64_t size = -1, size0, lo, hi, n_features = 0;
    int64_t line_off = 0, row_off = 0, rows = 0, nnz = 0, max_seen = 0, max_line = 0;
    int64_t g_zero = INT64_MAX, g_neg = INT64_MAX, off, any_err = 0;
    st_glm_svm_chunk_t ck;
    st_glm_data_t *d = NULL;
    const char *base = NULL, *p;
    st_glm_comm_t c;
    st_glm_err_t err;
    st_status_t status;
    struct stat st;
    int fd = -1, r;

    memset(&ck, 0, sizeof(ck));
    st_glm_err_init(&err);
    status = st_glm_comm_init(comm, &c);
    if (status != ST_OK) {
        st_glm_err_set(&err, status, ST_GLM_ERR_KEY_FIRST, "%s: %s", path ? path : "(null)",
                       strata_status_string(status));
        st_glm_err_report(&err, msg, msg_len);
        return status;
    }
    if (path == NULL || data_p == NULL) {
        st_glm_err_set(&err, ST_ERR_INVALID_PARAM, ST_GLM_ERR_KEY_FIRST,
                       "st_glm_data_read_svm: no file or no result pointer");
        path = "(null)";
    } else {
        st_glm_svm_opts(opts, path, &ck, &n_features, &err);
    }

    /* 1. open and map the file; all ranks must see the same size */
    if (err.status == ST_OK) {
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
            st_glm_err_set(&err, errno == ENOENT ? ST_ERR_NOT_FOUND : ST_ERR_IO,
                           ST_GLM_ERR_KEY_FIRST, "%s: cannot open: %s", path, strerror(errno));
        } else if (fstat(fd, &st) != 0) {
            st_glm_err_set(&err, ST_ERR_IO, ST_GLM_ERR_KEY_FIRST, "%s: cannot stat: %s", path,
                           strerror(errno));
        } else if (!S_ISREG(st.st_mode)) {
            st_glm_err_set(&err, ST_ERR_IO, ST_GLM_ERR_KEY_FIRST, "%s: not a regular file",
                           path);
        } else {
            size = (int64_t)st.st_size;
        }
    }
    size0 = size;
    if (c.comm != MPI_COMM_NULL) {
        ST_GLM_MPI_CALL_GOTO(MPI_Bcast(&size0, 1, MPI_INT64_T, 0, c.comm), err_mpi, status);
    }
    if (err.status == ST_OK && size != size0) {
        st_glm_err_set(&err, ST_ERR_IO, ST_GLM_ERR_KEY_FIRST, "%s: %lld bytes here but %lld "
                       "on rank 0 (do all ranks see the same file?)", path, (long long)size,
                       (long long)size0);
    }
    if (err.status == ST_OK && size == 0) {
        st_glm_err_set(&err, ST_ERR_INVALID_PARAM, ST_GLM_ERR_KEY_FIRST, "%s: empty file",
                       path);
    }
    if (err.status == ST_OK) {
        base = mmap(NULL, (size_t)size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (base == MAP_FAILED) {
            base = NULL;
            st_glm_err_set(&err, ST_ERR_IO, ST_GLM_ERR_KEY_FIRST, "%s: cannot map: %s", path,
                           strerror(errno));
        }
    }
    if (st_glm_err_agree(&c, &err) != ST_OK) {
        goto out;
    }

    /* 2. parse the lines that start in my share of the bytes */
    st_glm_block_range(size, c.size, c.rank, &lo, &hi);
    p = base + lo;
    if (lo > 0) {
        p = memchr(base + lo - 1, '\n', (size_t)(size - lo + 1));
        p = (p != NULL) ? p + 1 : base + size;
    }
    if (p < base + hi) {
        size_t page = (size_t)sysconf(_SC_PAGESIZE);
        uintptr_t a = (uintptr_t)p & ~(uintptr_t)(page - 1);

        madvise((void*)a, (size_t)(base + size - (const char*)a), MADV_SEQUENTIAL);
        /* capacity guesses: ~10 bytes per entry, ~100 per row; they grow as needed */
        ck.rows_cap = (size_t)(hi - lo) / 128 + 16;
        ck.nnz_cap  = (size_t)(hi - lo) / 12 + 64;
        if (st_glm_svm_grow((void**)&ck.indptr, sizeof(*ck.indptr), ck.rows_cap + 1) ||
            st_glm_svm_grow((void**)&ck.y, sizeof(*ck.y), ck.rows_cap) ||
            st_glm_svm_grow((void**)&ck.indices, sizeof(*ck.indices), ck.nnz_cap) ||
            (ck.prec == 32 ? st_glm_svm_grow((void**)&ck.v32, sizeof(*ck.v32), ck.nnz_cap)
                           : st_glm_svm_grow((void**)&ck.v64, sizeof(*ck.v64), ck.nnz_cap))) {
            st_glm_svm_fail(&ck, ST_ERR_NO_MEMORY, "out of memory");
        } else {
            st_glm_svm_parse(&ck, p, base + hi, base + size);
        }
    }

    /* 3. agree: offsets, totals, the first error */
    mine[0] = ck.n_lines;
    mine[1] = ck.n_rows;
    mine[2] = ck.nnz;
    mine[3] = (int64_t)ck.max_seen;
    mine[4] = ck.err_status;
    mine[5] = ck.err_line;
    mine[6] = ck.first_zero;
    mine[7] = ck.first_neg;
    mine[8] = ck.max_line;
    all = malloc((size_t)c.size * ST_GLM_SVM_STATS * sizeof(*all));
    if (all == NULL) {
        /* every rank must reach the same collectives: give up on the whole job */
        if (c.comm != MPI_COMM_NULL) {
            MPI_Abort(c.comm, 1);
        }
        status = ST_ERR_NO_MEMORY;
        st_glm_err_set(&err, status, ST_GLM_ERR_KEY_FIRST, "%s: out of memory", path);
        goto out;
    }
    ST_CALL_GOTO(st_glm_allgather_i64(&c, mine, ST_GLM_SVM_STATS, all), err_mpi, status);
    for (r = 0, off = 0; r < c.size; r++) {
        const int64_t *s = all + (size_t)r * ST_GLM_SVM_STATS;

        if (r == c.rank) {
            line_off = off;
            row_off  = rows;
        }
        if (s[6] > 0) {
            g_zero = ST_MIN(g_zero, off + s[6]);
        }
        if (s[7] > 0) {
            g_neg = ST_MIN(g_neg, off + s[7]);
        }
        if (s[3] > max_seen) {   /* (the ranks in the file's order: its first line) */
            max_seen = s[3];
            max_line = off + s[8];
        }
        any_err |= (s[4] != ST_OK);
        off     += s[0];
        rows    += s[1];
        nnz     += s[2];
    }
    if (ck.err_status == ST_ERR_NO_MEMORY) {
        st_glm_err_set(&err, ck.err_status, ST_GLM_ERR_KEY_FIRST, "%s:%lld: %s", path,
                       (long long)(line_off + ck.err_line), ck.err_what);
    } else if (ck.err_status != ST_OK) {
        st_glm_err_set(&err, ck.err_status, 2 * (line_off + ck.err_line), "%s:%lld: %s",
                       path, (long long)(line_off + ck.err_line), ck.err_what);
    }
    /* keys: 2 x line for the errors found on a line, 2 x line + 1 for mixed labels, so
     * that on one line the parse error wins however many ranks there are (every rank
     * knows the mix, one the parse error: a tie would go to the lowest rank) */
    if (g_zero != INT64_MAX && g_neg != INT64_MAX) {
        int64_t line = ST_MAX(g_zero, g_neg);

        st_glm_err_set(&err, ST_ERR_INVALID_PARAM, 2 * line + 1, "%s:%lld: label %s after "
                       "label %s on line %lld: class labels are either -1/+1 or 0/1, not "
                       "both", path, (long long)line, g_zero > g_neg ? "0" : "-1",
                       g_zero > g_neg ? "-1" : "0", (long long)ST_MIN(g_zero, g_neg));
    }
    if (!any_err && rows == 0) {
        st_glm_err_set(&err, ST_ERR_INVALID_PARAM, ST_GLM_ERR_KEY_FIRST, "%s: no examples "
                       "(only comments and blank lines)", path);
    }
    if (st_glm_err_agree(&c, &err) != ST_OK) {
        goto out;
    }

    /* 4. my rows */
    status = st_glm_svm_build(&ck, path, &d);
    if (status != ST_OK) {
        st_glm_err_set(&err, status, ST_GLM_ERR_KEY_FIRST, "%s: out of memory", path);
    }
    if (st_glm_err_agree(&c, &err) != ST_OK) {
        goto out;
    }
    d->n_rows_global = rows;
    d->row_offset    = row_off;
    d->nnz_global    = nnz;
    d->zero_one      = (g_zero != INT64_MAX);   /* (a 0 label on some rank: 0/1 data) */
    d->n_cols        = ST_MAX(max_seen, n_features);
    d->n_cols_line   = (max_seen >= n_features) ? max_line : 0;
    *data_p = d;
    d = NULL;
    goto out;

err_mpi:
    st_glm_err_set(&err, ST_ERR_MPI, ST_GLM_ERR_KEY_FIRST, "%s: MPI error", path);
out:
    st_glm_data_free(d);
    free(all);
    st_glm_svm_chunk_free(&ck);
    if (base != NULL) {
        munmap((void*)base, (size_t)size);
    }
    if (fd >= 0) {
        close(fd);
    }
    if (err.status != ST_OK) {
        st_glm_err_report(&err, msg, msg_len);
    }
    return err.status;
}
