/*
 * Fuzz target: the svmlight/libsvm text reader (solver/st_glm_data_svm.c) and its
 * number parser.
 *
 * Input: one option byte, then the bytes of the file (or of one number).
 *   bits 0-1  what to call: 0 st_glm_data_read_svm, 1 st_glm_data_load (format
 *             detection first), 2 st_glm_data_parse_real in 64 bits, 3 in 32 bits
 *   bit 2     prec 32 (else the default, 64)
 *   bit 3     regression labels
 *   bit 4     allow_nonfinite
 *   bits 5-6  max_index: the default (2^32-1), 7, 1000, 2^32-1
 *   bit 7     n_features 50 (else 0)
 *
 * The readers run serially (MPI_COMM_NULL: no MPI); under mpirun, the replay also
 * reads each file over MPI_COMM_WORLD and compares (st_fuzz_data.h). Checked: an error is one line
 * naming the file (with a line number within the file for content errors) and
 * leaves the result pointer alone; a dataset passes st_glm_data_check, agrees with
 * the options and with the file as read again by a plain tokenizer here, and survives
 * a round trip through the binary format unchanged; read again for named classes
 * (ST_GLM_LABEL_MULTI), a set read as real targets gives the same rows and labels
 * where they are integers below 2^31 (else an error on a line of the file), and a set
 * read as binary classes the classes as the file named them (0 for -1 in a 0/1 set).
 * The number parser is compared with an independent syntax check and strtod/strtof.
 */
#include "config.h"

#include "st_fuzz_data.h"

#include <math.h>
#include <strings.h>

static const uint64_t st_fuzz_max_index[4] = {0, 7, 1000, UINT32_MAX};


/* The syntax the reader documents: [+-] digits [. digits] [(e|E) [+-] digits], at least
 * one digit before the exponent (".5" and "5." count), or nan/inf/infinity. */
static int st_fuzz_num_syntax(const char *s, size_t n, int *nonfinite_p)
{
    size_t i = 0, digits = 0;
    const char *w;

    *nonfinite_p = 0;
    if (i < n && (s[i] == '+' || s[i] == '-')) {
        i++;
    }
    w = s + i;
    if ((n - i == 3 && (!strncasecmp(w, "nan", 3) || !strncasecmp(w, "inf", 3))) ||
        (n - i == 8 && !strncasecmp(w, "infinity", 8))) {
        *nonfinite_p = 1;
        return 1;
    }
    for (; i < n && s[i] >= '0' && s[i] <= '9'; i++) {
        digits++;
    }
    if (i < n && s[i] == '.') {
        for (i++; i < n && s[i] >= '0' && s[i] <= '9'; i++) {
            digits++;
        }
    }
    if (digits == 0) {
        return 0;
    }
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        if (i < n && (s[i] == '+' || s[i] == '-')) {
            i++;
        }
        if (i == n || s[i] < '0' || s[i] > '9') {
            return 0;
        }
        while (i < n && s[i] >= '0' && s[i] <= '9') {
            i++;
        }
    }
    return i == n;
}

static void st_fuzz_number(const uint8_t *data, size_t size, int prec)
{
    char *s = malloc(size + 1);
    double v = 12345.0, ref;
    st_glm_num_t rc;
    int ok, nonfinite;

    if (s == NULL) {
        return;
    }
    memcpy(s, data, size);
    s[size] = '\0';
    rc = st_glm_data_parse_real(s, size, prec, &v);
    ok = st_fuzz_num_syntax(s, size, &nonfinite);
    ST_FUZZ_CHECK(ok == (rc != ST_GLM_NUM_SYNTAX), "'%.40s': syntax %d, parser says %d", s,
                  ok, (int)rc);
    if (ok) {
        ST_FUZZ_CHECK(nonfinite == (rc == ST_GLM_NUM_NONFINITE), "'%.40s': parser says %d",
                      s, (int)rc);
        ref = (prec == 32) ? (double)strtof(s, NULL) : strtod(s, NULL);
        if (rc == ST_GLM_NUM_RANGE) {
            ST_FUZZ_CHECK(isinf(ref), "'%.40s': out of range for the parser, %g for strtod",
                          s, ref);
        } else if (rc == ST_GLM_NUM_OK) {
            ST_FUZZ_CHECK(isfinite(ref) && memcmp(&v, &ref, sizeof(v)) == 0,
                          "'%.40s' (%d bits): %.17g, strtod says %.17g", s, prec, v, ref);
        } else {
            ST_FUZZ_CHECK(isnan(v) ? isnan(ref) : v == ref, "'%.40s': %g, strtod says %g", s,
                          v, ref);
        }
    }
    free(s);
}

/* Lines in @a data as the reader counts them (a last line without '\n' counts). */
static int64_t st_fuzz_lines(const uint8_t *data, size_t size)
{
    int64_t n = 0;
    size_t i;

    for (i = 0; i < size; i++) {
        n += (data[i] == '\n');
    }
    return n + (size > 0 && data[size - 1] != '\n');
}

/*
 * An accepted file, read again here the simple way (every line of it is well-formed,
 * so splitting at blanks is enough): each non-blank line is a row, its label and its
 * index:value pairs must be the dataset's, each number of the documented syntax and
 * equal to strtod's (strtof's for 32 bits).
 */
static void st_fuzz_oracle(const uint8_t *data, size_t size, const st_glm_data_t *d)
{
    char *text = malloc(size + 1), *line, *save = NULL, *tok, *save2, *colon;
    int64_t row = 0, k = 0;
    int nonfinite;

    if (text == NULL) {
        return;
    }
    memcpy(text, data, size);
    text[size] = '\0';
    for (k = 0; k < (int64_t)size; k++) {
        text[k] = (text[k] == '\0') ? ' ' : text[k];   /* NULs: only in comments here */
    }
    k = 0;
    for (line = strtok_r(text, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save)) {
        char *hash = strchr(line, '#');
        double v;

        if (hash != NULL) {
            *hash = '\0';
        }
        tok = strtok_r(line, " \t\r", &save2);
        if (tok == NULL) {
            continue;
        }
        ST_FUZZ_CHECK(row < d->n_rows, "more rows in the file than %lld", (long long)d->n_rows);
        ST_FUZZ_CHECK(st_fuzz_num_syntax(tok, strlen(tok), &nonfinite) && !nonfinite,
                      "row %lld: label '%.40s' accepted", (long long)row + 1, tok);
        v = strtod(tok, NULL);
        if (d->label_kind == ST_GLM_LABEL_CLASS) {
            v = (v > 0) ? 1.0 : -1.0;
        }
        ST_FUZZ_CHECK(d->y[row] == v, "row %lld: label %g, the file says '%.40s'",
                      (long long)row + 1, d->y[row], tok);
        ST_FUZZ_CHECK(d->indptr[row] == k, "row %lld starts at entry %lld, not %lld",
                      (long long)row + 1, (long long)d->indptr[row], (long long)k);
        while ((tok = strtok_r(NULL, " \t\r", &save2)) != NULL) {
            double got;

            colon = strchr(tok, ':');
            ST_FUZZ_CHECK(colon != NULL && k < d->nnz, "row %lld: pair '%.40s'",
                          (long long)row + 1, tok);
            *colon = '\0';
            ST_FUZZ_CHECK(strtoull(tok, NULL, 10) == (unsigned long long)d->indices[k] + 1,
                          "row %lld: index '%.40s' read as %u", (long long)row + 1, tok,
                          d->indices[k] + 1);
            ST_FUZZ_CHECK(st_fuzz_num_syntax(colon + 1, strlen(colon + 1), &nonfinite),
                          "row %lld: value '%.40s' accepted", (long long)row + 1, colon + 1);
            v   = (d->prec == 32) ? (double)strtof(colon + 1, NULL) : strtod(colon + 1, NULL);
            got = (d->prec == 32) ? (double)d->val32[k] : d->val64[k];
            ST_FUZZ_CHECK(isnan(v) ? isnan(got) : memcmp(&v, &got, sizeof(v)) == 0,
                          "row %lld: value '%.40s' read as %.17g", (long long)row + 1,
                          colon + 1, got);
            k++;
        }
        row++;
    }
    ST_FUZZ_CHECK(row == d->n_rows && k == d->nnz, "%lld rows and %lld entries in the file, "
                  "%lld and %lld read", (long long)row, (long long)k, (long long)d->n_rows,
                  (long long)d->nnz);
    free(text);
}

static void st_fuzz_roundtrip(const st_glm_data_t *d, const char *path)
{
    char msg[ST_GLM_DATA_MSG_LEN];
    st_glm_data_opts_t o;
    st_glm_data_t *e = NULL;
    int64_t k;

    ST_FUZZ_CHECK(st_glm_data_write_bin(d, path, MPI_COMM_NULL, msg, sizeof(msg)) == ST_OK,
                  "binary write of a dataset just read failed: %s", msg);
    st_glm_data_opts_init(&o);
    o.label_kind      = d->label_kind;
    o.allow_nonfinite = 1;
    ST_FUZZ_CHECK(st_glm_data_read_bin(path, &o, MPI_COMM_NULL, msg, sizeof(msg), &e) == ST_OK,
                  "binary read of a file just written failed: %s", msg);
    ST_FUZZ_CHECK(e->n_rows == d->n_rows && e->nnz == d->nnz && e->n_cols == d->n_cols &&
                  e->prec == d->prec, "binary round trip changed the shape");
    ST_FUZZ_CHECK(e->zero_one == d->zero_one, "binary round trip changed zero_one from %d "
                  "to %d", d->zero_one, e->zero_one);
    ST_FUZZ_CHECK(!memcmp(e->indptr, d->indptr, (size_t)(d->n_rows + 1) * sizeof(int64_t)) &&
                  !memcmp(e->indices, d->indices, (size_t)d->nnz * sizeof(uint32_t)) &&
                  !memcmp(e->y, d->y, (size_t)d->n_rows * sizeof(double)),
                  "binary round trip changed the rows or labels");
    for (k = 0; k < d->nnz; k++) {
        ST_FUZZ_CHECK(d->prec == 32 ? !memcmp(&e->val32[k], &d->val32[k], 4)
                                    : !memcmp(&e->val64[k], &d->val64[k], 8),
                      "binary round trip changed value %lld", (long long)k);
    }
    st_glm_data_free(e);
}

/* The file read again for named classes: against @a d, read with options @a o (real
 * targets, or binary classes). */
static void st_fuzz_named(const char *path, const st_glm_data_opts_t *o,
                          const st_glm_data_t *d, const uint8_t *data, size_t size)
{
    static st_glm_data_t sentinel;
    st_glm_data_t *m = &sentinel;
    st_glm_data_opts_t mo = *o;
    char msg[512], check[256];
    long long line = 0;
    int64_t i, bad = -1;
    const char *p;
    st_status_t rc;
    double want;

    mo.label_kind = ST_GLM_LABEL_MULTI;
    for (i = 0; i < d->n_rows && bad < 0; i++) {
        bad = st_glm_data_class_name(d->y[i]) ? -1 : i;
    }
    msg[0] = '\0';
    rc = st_glm_data_read_svm(path, &mo, MPI_COMM_NULL, msg, sizeof(msg), &m);
    if (bad >= 0) {   /* (real targets only: a class label is an integer) */
        ST_FUZZ_CHECK(rc == ST_ERR_INVALID_PARAM && m == &sentinel &&
                      strstr(msg, "is not a class label") != NULL &&
                      (p = strstr(msg, path)) != NULL &&
                      sscanf(p + strlen(path), ":%lld:", &line) == 1 && line >= 1 &&
                      line <= st_fuzz_lines(data, size),
                      "label %.17g of row %lld read as a class: %d, '%s'", d->y[bad],
                      (long long)bad, (int)rc, msg);
        return;
    }
    ST_FUZZ_CHECK(rc == ST_OK, "read as real targets or classes, not as named classes: %s",
                  msg);
    ST_FUZZ_CHECK(st_glm_data_check(m, check, sizeof(check)) == ST_OK, "%s", check);
    ST_FUZZ_CHECK(m->n_rows == d->n_rows && m->nnz == d->nnz && m->n_cols == d->n_cols &&
                  m->label_kind == ST_GLM_LABEL_MULTI && !m->zero_one &&
                  !memcmp(m->indptr, d->indptr, ((size_t)d->n_rows + 1) * sizeof(int64_t)) &&
                  !memcmp(m->indices, d->indices, (size_t)d->nnz * sizeof(uint32_t)),
                  "named classes: other rows");
    for (i = 0; i < d->n_rows; i++) {
        want = (d->label_kind == ST_GLM_LABEL_CLASS && d->zero_one && d->y[i] == -1.0)
                   ? 0.0 : d->y[i] + 0.0;
        ST_FUZZ_CHECK(!memcmp(&m->y[i], &want, sizeof(double)), "row %lld: class %.17g, "
                      "expected %.17g", (long long)i, m->y[i], want);
    }
    st_glm_data_free(m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[64], msg[ST_GLM_DATA_MSG_LEN], check[ST_GLM_DATA_MSG_LEN];
    static st_glm_data_t sentinel;
    st_glm_data_t *d = &sentinel;
    st_glm_data_opts_t o;
    st_status_t rc;
    unsigned opt;
    int64_t k;

    if (size < 1) {
        return 0;
    }
    opt = data[0];
    data++;
    size--;
    if ((opt & 3) >= 2) {
        st_fuzz_number(data, size, (opt & 3) == 3 ? 32 : 64);
        return 0;
    }
    if (st_fuzz_file(data, size, path, sizeof(path)) != 0) {
        return 0;
    }
    st_glm_data_opts_init(&o);
    o.prec            = (opt & 4) ? 32 : 0;
    o.label_kind      = (opt & 8) ? ST_GLM_LABEL_REAL : ST_GLM_LABEL_CLASS;
    o.allow_nonfinite = (opt & 16) != 0;
    o.max_index       = st_fuzz_max_index[(opt >> 5) & 3];
    o.n_features      = (opt & 128) ? 50 : 0;
    msg[0] = '\0';
    if ((opt & 3) == 1) {
        rc = st_glm_data_load(path, &o, MPI_COMM_NULL, msg, sizeof(msg), &d);
    } else {
        rc = st_glm_data_read_svm(path, &o, MPI_COMM_NULL, msg, sizeof(msg), &d);
    }
    st_fuzz_data_mpi((opt & 3) == 1 ? st_glm_data_load : st_glm_data_read_svm, path, &o, rc, msg,
                     rc == ST_OK ? d : NULL);

    if (rc != ST_OK) {
        const char *p = strstr(msg, path);
        long long line = 0;

        ST_FUZZ_CHECK(d == &sentinel, "the result was set on failure");
        ST_FUZZ_CHECK(st_fuzz_msg_ok(msg, path), "bad message '%s'", msg);
        /* (UNSUPPORTED: a binary file of another version, through st_glm_data_load) */
        ST_FUZZ_CHECK(rc == ST_ERR_INVALID_PARAM || rc == ST_ERR_IO ||
                      rc == ST_ERR_UNSUPPORTED, "status %d: %s", (int)rc, msg);
        /* "FILE:LINE: what" names a line of the file */
        if (p != NULL && sscanf(p + strlen(path), ":%lld:", &line) == 1) {
            ST_FUZZ_CHECK(line >= 1 && line <= st_fuzz_lines(data, size),
                          "line %lld of a %lld-line file: %s", line,
                          (long long)st_fuzz_lines(data, size), msg);
        }
        return 0;
    }

    ST_FUZZ_CHECK(st_glm_data_check(d, check, sizeof(check)) == ST_OK, "%s", check);
    if (d->format != ST_GLM_FORMAT_SVM) {
        ST_FUZZ_CHECK((opt & 3) == 1, "the text reader returned format %d", (int)d->format);
        st_glm_data_free(d);   /* a binary file, through st_glm_data_load: fuzz_bin's job */
        return 0;
    }
    ST_FUZZ_CHECK(d->n_rows >= 1 && d->n_rows == d->n_rows_global && d->row_offset == 0 &&
                  d->nnz == d->nnz_global, "serial read: bad global sizes");
    ST_FUZZ_CHECK(d->n_rows <= st_fuzz_lines(data, size), "%lld rows from %lld lines",
                  (long long)d->n_rows, (long long)st_fuzz_lines(data, size));
    ST_FUZZ_CHECK(d->prec == ((opt & 4) ? 32 : 64), "precision %d", d->prec);
    ST_FUZZ_CHECK(d->label_kind == o.label_kind, "label kind %d", (int)d->label_kind);
    ST_FUZZ_CHECK(d->n_cols >= o.n_features, "n_cols %lld < n_features %lld",
                  (long long)d->n_cols, (long long)o.n_features);
    for (k = 0; k < d->nnz; k++) {
        double v = d->prec == 32 ? d->val32[k] : d->val64[k];

        ST_FUZZ_CHECK(o.allow_nonfinite || isfinite(v), "value %lld is %g", (long long)k, v);
        ST_FUZZ_CHECK(o.max_index == 0 || d->indices[k] < o.max_index,
                      "index %u above max_index %llu", d->indices[k] + 1,
                      (unsigned long long)o.max_index);
    }
    for (k = 0; k < d->n_rows; k++) {
        ST_FUZZ_CHECK(isfinite(d->y[k]), "label %lld is %g", (long long)k, d->y[k]);
    }
    st_fuzz_oracle(data, size, d);
    st_fuzz_named(path, &o, d, data, size);   /* (before the round trip rewrites path) */
    st_fuzz_roundtrip(d, path);
    st_glm_data_free(d);
    return 0;
}
