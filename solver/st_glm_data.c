/*
 * The data layer's common parts: options, allocation, invariants, per-row and
 * label statistics, format detection, and how ranks agree on one error.
 */
#include "config.h"

#include "st_glm_data.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The first MPI error of this thread's public call (MPI_SUCCESS: none), and how deep
 * its public calls nest (st_glm_data.h). */
static __thread int st_glm_mpi_err = MPI_SUCCESS;
static __thread int st_glm_mpi_depth;

int st_glm_mpi_note(int rc)
{
    if (rc != MPI_SUCCESS && st_glm_mpi_err == MPI_SUCCESS) {
        st_glm_mpi_err = rc;
    }
    return rc;
}

int st_glm_mpi_failed(void)
{
    return st_glm_mpi_err != MPI_SUCCESS;
}

void st_glm_mpi_enter(void)
{
    if (st_glm_mpi_depth++ == 0) {
        st_glm_mpi_err = MPI_SUCCESS;
    }
}

int st_glm_mpi_exit(void)
{
    int err = st_glm_mpi_err;

    if (--st_glm_mpi_depth == 0) {
        st_glm_mpi_err = MPI_SUCCESS;
    }
    return err;
}

void st_glm_data_opts_init(st_glm_data_opts_t *opts)
{
    memset(opts, 0, sizeof(*opts));
    opts->label_kind      = ST_GLM_LABEL_CLASS;
    opts->prec            = 0;
    opts->allow_nonfinite = 0;
    opts->n_features      = 0;
    opts->max_index       = 0;
}

/* ---- communicator and errors ---- */

st_status_t st_glm_comm_init(MPI_Comm comm, st_glm_comm_t *comm_p)
{
    st_glm_comm_t c = {MPI_COMM_NULL, 0, 1};
    int init = 0, fini = 0, inter = 0;

    if (comm != MPI_COMM_NULL) {
        if (ST_MPI_CALL(MPI_Initialized(&init)) != ST_OK ||
            ST_MPI_CALL(MPI_Finalized(&fini)) != ST_OK) {
            return ST_ERR_MPI;
        }
        if (!init || fini) {
            return ST_ERR_NOT_INITIALIZED;
        }
        if (ST_MPI_CALL(MPI_Comm_size(comm, &c.size)) != ST_OK ||
            ST_MPI_CALL(MPI_Comm_rank(comm, &c.rank)) != ST_OK ||
            ST_MPI_CALL(MPI_Comm_test_inter(comm, &inter)) != ST_OK) {
            return ST_ERR_MPI;
        }
        if (inter) {
            /* (every rank alike; before, the sums in place were MPI_ERR_BUFFER's abort,
               or under MPI_ERRORS_RETURN a crash) */
            return ST_ERR_UNSUPPORTED;
        }
        if (c.size > 1) {
            c.comm = comm;
        } else {
            c.size = 1;
            c.rank = 0;
        }
    }
    *comm_p = c;
    return ST_OK;
}

void st_glm_err_init(st_glm_err_t *err)
{
    err->status = ST_OK;
    err->key    = ST_GLM_ERR_KEY_NONE;
    err->msg[0] = '\0';
}

/* Record an error unless one with a lower (or equal) key is already recorded. */
void st_glm_err_set(st_glm_err_t *err, st_status_t status, int64_t key, const char *fmt, ...)
{
    va_list ap;

    if (key >= ST_GLM_ERR_KEY_NONE) {
        key = ST_GLM_ERR_KEY_NONE - 1;
    }
    if (err->status != ST_OK && err->key <= key) {
        return;
    }
    err->status = status;
    err->key    = key;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
    va_end(ap);
}

st_status_t st_glm_allgather_i64(const st_glm_comm_t *comm, const int64_t *mine, int count,
                                 int64_t *all)
{
    if (comm->comm == MPI_COMM_NULL) {
        memcpy(all, mine, (size_t)count * sizeof(*all));
        return ST_OK;
    }
    return ST_GLM_MPI_CALL(MPI_Allgather(mine, count, MPI_INT64_T, all, count, MPI_INT64_T,
                                     comm->comm));
}

/*
 * Collective: every rank learns the winning error (lowest key, then lowest rank)
 * and returns its status; all ranks call the same collectives whatever failed.
 * Nothing is allocated, so this cannot fail for lack of memory.
 */
st_status_t st_glm_err_agree(const st_glm_comm_t *comm, st_glm_err_t *err)
{
    int64_t key = (err->status != ST_OK) ? err->key : ST_GLM_ERR_KEY_NONE, min_key;
    int cand, winner;

    if (comm->comm == MPI_COMM_NULL) {
        return err->status;
    }
    if (ST_GLM_MPI_CALL(MPI_Allreduce(&key, &min_key, 1, MPI_INT64_T, MPI_MIN,
                                  comm->comm)) != ST_OK) {
        goto err_mpi;
    }
    if (min_key == ST_GLM_ERR_KEY_NONE) {
        return ST_OK;
    }
    cand = (key == min_key) ? comm->rank : comm->size;
    if (ST_GLM_MPI_CALL(MPI_Allreduce(&cand, &winner, 1, MPI_INT, MPI_MIN,
                                  comm->comm)) != ST_OK ||
        ST_GLM_MPI_CALL(MPI_Bcast(err, (int)sizeof(*err), MPI_BYTE, winner,
                              comm->comm)) != ST_OK) {
        goto err_mpi;
    }
    err->msg[sizeof(err->msg) - 1] = '\0';
    return err->status;

err_mpi:
    err->status = ST_ERR_MPI;
    err->key    = ST_GLM_ERR_KEY_FIRST;
    snprintf(err->msg, sizeof(err->msg), "MPI error while agreeing on the outcome");
    return ST_ERR_MPI;
}

void st_glm_err_report(const st_glm_err_t *err, char *msg, size_t msg_len)
{
    if (msg != NULL && msg_len > 0) {
        snprintf(msg, msg_len, "%s", err->msg);
    }
}

/* Rows [lo, hi) of part @a part when @a n rows are split evenly into @a parts. */
void st_glm_block_range(int64_t n, int parts, int part, int64_t *lo_p, int64_t *hi_p)
{
    int64_t q = n / parts, r = n % parts;

    *lo_p = q * part + ST_MIN((int64_t)part, r);
    *hi_p = *lo_p + q + (part < r ? 1 : 0);
}

/* A token for a message: at most 40 characters, non-printable ones as '?'. */
void st_glm_token_quote(const char *s, size_t len, char *out, size_t out_len)
{
    size_t i, n = ST_MIN(len, (size_t)40);

    if (out_len == 0) {
        return;
    }
    n = ST_MIN(n, out_len - 1);
    for (i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];

        out[i] = (c >= 0x20 && c < 0x7f) ? (char)c : '?';
    }
    out[i] = '\0';
    if (len > n && out_len > n + 3 && n >= 3) {
        memcpy(out + n - 3, "...", 3);
    }
}

/* ---- allocation and checks ---- */

void st_glm_data_opts_resolve(const st_glm_data_opts_t *opts, const char *path, int prec0,
                              st_glm_data_opts_t *o_p, st_glm_err_t *err)
{
    if (opts == NULL) {
        st_glm_data_opts_init(o_p);
    } else {
        *o_p = *opts;
    }
    if (o_p->max_index == 0) {
        o_p->max_index = ST_GLM_DATA_MAX_INDEX;
    }
    if (o_p->prec == 0) {
        o_p->prec = prec0;
    }
    if (o_p->prec != prec0 && o_p->prec != 32 && o_p->prec != 64) {
        st_glm_err_set(err, ST_ERR_INVALID_PARAM, ST_GLM_ERR_KEY_FIRST,
                       "%s: precision %d (expected 32 or 64)", path, o_p->prec);
    } else if (o_p->label_kind != ST_GLM_LABEL_CLASS && o_p->label_kind != ST_GLM_LABEL_REAL &&
               o_p->label_kind != ST_GLM_LABEL_MULTI) {
        st_glm_err_set(err, ST_ERR_INVALID_PARAM, ST_GLM_ERR_KEY_FIRST,
                       "%s: unknown label kind %d", path, (int)o_p->label_kind);
    } else if (o_p->max_index > ST_GLM_DATA_MAX_INDEX) {
        st_glm_err_set(err, ST_ERR_INVALID_PARAM, ST_GLM_ERR_KEY_FIRST,
                       "%s: max_index %llu is above %llu", path,
                       (unsigned long long)o_p->max_index,
                       (unsigned long long)ST_GLM_DATA_MAX_INDEX);
    } else if (o_p->n_features < 0 || o_p->n_features > (int64_t)ST_GLM_DATA_MAX_INDEX) {
        st_glm_err_set(err, ST_ERR_INVALID_PARAM, ST_GLM_ERR_KEY_FIRST,
                       "%s: n_features %lld out of range [0, %llu]", path,
                       (long long)o_p->n_features, (unsigned long long)ST_GLM_DATA_MAX_INDEX);
    }
}

st_status_t st_glm_data_alloc(int64_t n_rows, int64_t nnz, int prec, st_glm_data_t **data_p)
{
    st_glm_data_t *d;

    if (n_rows < 0 || nnz < 0 || (prec != 32 && prec != 64) || data_p == NULL) {
        return ST_ERR_INVALID_PARAM;
    }
    d = calloc(1, sizeof(*d));
    if (d == NULL) {
        return ST_ERR_NO_MEMORY;
    }
    d->n_rows        = n_rows;
    d->n_rows_global = n_rows;
    d->nnz           = nnz;
    d->nnz_global    = nnz;
    d->prec          = prec;
    d->label_kind    = ST_GLM_LABEL_CLASS;
    d->format        = ST_GLM_FORMAT_SVM;
    d->indptr        = malloc(((size_t)n_rows + 1) * sizeof(*d->indptr));
    d->indices       = malloc(ST_MAX((size_t)nnz, (size_t)1) * sizeof(*d->indices));
    d->y             = malloc(ST_MAX((size_t)n_rows, (size_t)1) * sizeof(*d->y));
    if (prec == 32) {
        d->val32 = malloc(ST_MAX((size_t)nnz, (size_t)1) * sizeof(*d->val32));
    } else {
        d->val64 = malloc(ST_MAX((size_t)nnz, (size_t)1) * sizeof(*d->val64));
    }
    if (d->indptr == NULL || d->indices == NULL || d->y == NULL ||
        (d->val32 == NULL && d->val64 == NULL)) {
        st_glm_data_free(d);
        return ST_ERR_NO_MEMORY;
    }
    d->indptr[0] = 0;
    *data_p = d;
    return ST_OK;
}

void st_glm_data_free(st_glm_data_t *data)
{
    if (data == NULL) {
        return;
    }
    free(data->indptr);
    free(data->indices);
    free(data->val32);
    free(data->val64);
    free(data->y);
    free(data->source);
    free(data);
}

st_status_t st_glm_data_check(const st_glm_data_t *d, char *msg, size_t msg_len)
{
    int64_t i, k;

#define ST_GLM_CHECK_FAIL(...) \
    do { \
        if (msg != NULL && msg_len > 0) { \
            snprintf(msg, msg_len, __VA_ARGS__); \
        } \
        return ST_ERR_INVALID_PARAM; \
    } while (0)

    if (d == NULL) {
        ST_GLM_CHECK_FAIL("no data");
    }
    if (d->n_rows < 0 || d->nnz < 0 || d->n_cols < 0 || d->n_cols > (int64_t)UINT32_MAX ||
        d->row_offset < 0 || d->n_rows_global < d->row_offset + d->n_rows) {
        ST_GLM_CHECK_FAIL("bad sizes: n_rows %lld, n_rows_global %lld, row_offset %lld, "
                          "n_cols %lld, nnz %lld", (long long)d->n_rows,
                          (long long)d->n_rows_global, (long long)d->row_offset,
                          (long long)d->n_cols, (long long)d->nnz);
    }
    if ((d->prec == 32) != (d->val32 != NULL) || (d->prec == 64) != (d->val64 != NULL) ||
        (d->prec != 32 && d->prec != 64)) {
        ST_GLM_CHECK_FAIL("precision %d does not match the value arrays", d->prec);
    }
    if (d->indptr == NULL || d->indices == NULL || d->y == NULL) {
        ST_GLM_CHECK_FAIL("missing array");
    }
    if (d->indptr[0] != 0 || d->indptr[d->n_rows] != d->nnz) {
        ST_GLM_CHECK_FAIL("indptr runs from %lld to %lld, not from 0 to nnz %lld",
                          (long long)d->indptr[0], (long long)d->indptr[d->n_rows],
                          (long long)d->nnz);
    }
    for (i = 0; i < d->n_rows; i++) {
        if (d->indptr[i + 1] < d->indptr[i]) {
            ST_GLM_CHECK_FAIL("row %lld: indptr decreases", (long long)i);
        }
        for (k = d->indptr[i]; k < d->indptr[i + 1]; k++) {
            if ((int64_t)d->indices[k] >= d->n_cols) {
                ST_GLM_CHECK_FAIL("row %lld: column %u >= n_cols %lld", (long long)i,
                                  d->indices[k], (long long)d->n_cols);
            }
            if (k > d->indptr[i] && d->indices[k] <= d->indices[k - 1]) {
                ST_GLM_CHECK_FAIL("row %lld: column %u after %u", (long long)i, d->indices[k],
                                  d->indices[k - 1]);
            }
        }
        if (d->label_kind == ST_GLM_LABEL_CLASS ? (d->y[i] != 1.0 && d->y[i] != -1.0) :
            d->label_kind == ST_GLM_LABEL_MULTI ? !st_glm_data_class_name(d->y[i])
                                                : !isfinite(d->y[i])) {
            ST_GLM_CHECK_FAIL("row %lld: label %g invalid for %s", (long long)i, d->y[i],
                              d->label_kind == ST_GLM_LABEL_CLASS ? "classification" :
                              d->label_kind == ST_GLM_LABEL_MULTI ? "classes"
                                                                  : "regression");
        }
    }
#undef ST_GLM_CHECK_FAIL
    return ST_OK;
}

/* ---- statistics ---- */

double st_glm_data_row_sqnorm(const st_glm_data_t *d, int64_t i)
{
    double s = 0.0;
    int64_t k;

    if (d->prec == 32) {
        for (k = d->indptr[i]; k < d->indptr[i + 1]; k++) {
            s += (double)d->val32[k] * (double)d->val32[k];
        }
    } else {
        for (k = d->indptr[i]; k < d->indptr[i + 1]; k++) {
            s += d->val64[k] * d->val64[k];
        }
    }
    return s;
}

void st_glm_data_set_global(st_glm_data_t *data, MPI_Comm comm)
{
    int64_t all[2] = {data->n_rows, data->nnz}, offset = 0;
    int rank;

    data->n_rows_global = data->n_rows;
    data->nnz_global    = data->nnz;
    data->row_offset    = 0;
    if (comm == MPI_COMM_NULL) {
        return;
    }
    ST_GLM_MPI(MPI_Allreduce(MPI_IN_PLACE, all, 2, MPI_INT64_T, MPI_SUM, comm));
    ST_GLM_MPI(MPI_Exscan(&data->n_rows, &offset, 1, MPI_INT64_T, MPI_SUM, comm));
    MPI_Comm_rank(comm, &rank);
    data->n_rows_global = all[0];
    data->nnz_global    = all[1];
    data->row_offset    = (rank == 0) ? 0 : offset;   /* (Exscan leaves rank 0's undefined) */
}

void st_glm_data_row_sqnorms(const st_glm_data_t *d, double *sqnorm)
{
    int64_t i;

    for (i = 0; i < d->n_rows; i++) {
        sqnorm[i] = st_glm_data_row_sqnorm(d, i);
    }
}

st_status_t st_glm_data_label_stats(const st_glm_data_t *d, MPI_Comm comm,
                                    st_glm_label_stats_t *stats_p)
{
    /* counts, then the sum, then the sum of squared deviations: two passes */
    double loc[4] = {0.0, 0.0, 0.0, 0.0}, glob[4];
    double lmin = INFINITY, lmax = -INFINITY, gmin, gmax, mean = 0.0;
    int64_t lcnt[3] = {0, 0, 0}, gcnt[3];
    st_glm_comm_t c;
    st_glm_label_stats_t s;
    st_status_t status;
    int64_t i;

    status = st_glm_comm_init(comm, &c);
    if (status != ST_OK) {
        return status;
    }
    for (i = 0; i < d->n_rows; i++) {
        lcnt[0]++;
        lcnt[1] += d->y[i] > 0.0;
        lcnt[2] += d->y[i] < 0.0;
        loc[0] += d->y[i];
        lmin = ST_MIN(lmin, d->y[i]);
        lmax = ST_MAX(lmax, d->y[i]);
    }
    memcpy(gcnt, lcnt, sizeof(gcnt));
    glob[0] = loc[0];
    gmin = lmin;
    gmax = lmax;
    if (c.comm != MPI_COMM_NULL) {
        if (ST_GLM_MPI_CALL(MPI_Allreduce(lcnt, gcnt, 3, MPI_INT64_T, MPI_SUM, c.comm)) != ST_OK ||
            ST_GLM_MPI_CALL(MPI_Allreduce(loc, glob, 1, MPI_DOUBLE, MPI_SUM, c.comm)) != ST_OK ||
            ST_GLM_MPI_CALL(MPI_Allreduce(&lmin, &gmin, 1, MPI_DOUBLE, MPI_MIN, c.comm)) != ST_OK ||
            ST_GLM_MPI_CALL(MPI_Allreduce(&lmax, &gmax, 1, MPI_DOUBLE, MPI_MAX, c.comm)) != ST_OK) {
            return ST_ERR_MPI;
        }
    }
    if (gcnt[0] > 0) {
        mean = glob[0] / (double)gcnt[0];
    }
    for (i = 0; i < d->n_rows; i++) {
        loc[1] += (d->y[i] - mean) * (d->y[i] - mean);
    }
    glob[1] = loc[1];
    if (c.comm != MPI_COMM_NULL &&
        ST_GLM_MPI_CALL(MPI_Allreduce(&loc[1], &glob[1], 1, MPI_DOUBLE, MPI_SUM, c.comm)) !=
                ST_OK) {
        return ST_ERR_MPI;
    }
    s.n     = gcnt[0];
    s.n_pos = gcnt[1];
    s.n_neg = gcnt[2];
    s.mean  = mean;
    s.var   = gcnt[0] > 0 ? glob[1] / (double)gcnt[0] : 0.0;
    s.min   = gcnt[0] > 0 ? gmin : 0.0;
    s.max   = gcnt[0] > 0 ? gmax : 0.0;
    *stats_p = s;
    return ST_OK;
}

/* ---- format detection ---- */

st_status_t st_glm_data_load(const char *path, const st_glm_data_opts_t *opts, MPI_Comm comm,
                             char *msg, size_t msg_len, st_glm_data_t **data_p)
{
    char magic[ST_GLM_BIN_MAGIC_LEN];
    st_glm_comm_t c;
    st_glm_err_t err;
    st_status_t status;
    ssize_t got = 0;
    int64_t is_bin = 0;
    struct stat st;
    int fd;

    status = st_glm_comm_init(comm, &c);
    if (status != ST_OK) {
        if (msg != NULL && msg_len > 0) {
            snprintf(msg, msg_len, "%s: %s", path ? path : "(null)",
                     strata_status_string(status));
        }
        return status;
    }
    st_glm_err_init(&err);
    if (path == NULL || data_p == NULL) {
        st_glm_err_set(&err, ST_ERR_INVALID_PARAM, ST_GLM_ERR_KEY_FIRST,
                       "st_glm_data_load: no file or no result pointer");
    } else {
        /* (without blocking: a named pipe, refused below, waited for a writer for ever) */
        fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
        if (fd < 0) {
            st_glm_err_set(&err, errno == ENOENT ? ST_ERR_NOT_FOUND : ST_ERR_IO,
                           ST_GLM_ERR_KEY_FIRST, "%s: cannot open: %s", path, strerror(errno));
        } else if (fstat(fd, &st) == 0 && !S_ISREG(st.st_mode)) {
            /* the readers read it twice, at offsets: not a pipe */
            st_glm_err_set(&err, ST_ERR_IO, ST_GLM_ERR_KEY_FIRST, "%s: %s", path,
                           S_ISDIR(st.st_mode) ? "a directory, not a data file"
                                               : "not a regular file (a pipe or a device: "
                                                 "give the data as a file)");
            close(fd);
        } else {
            do {
                got = pread(fd, magic, sizeof(magic), 0);
            } while (got < 0 && errno == EINTR);
            if (got < 0) {
                st_glm_err_set(&err, ST_ERR_IO, ST_GLM_ERR_KEY_FIRST, "%s: cannot read: %s",
                               path, strerror(errno));
            }
            is_bin = (got == (ssize_t)sizeof(magic) &&
                      !memcmp(magic, ST_GLM_BIN_MAGIC, ST_GLM_BIN_MAGIC_LEN));
            /* no text starts with NUL bytes: a binary file whose header was never
               written (by a writer of an older version, killed) */
            if (got == (ssize_t)sizeof(magic) && magic[0] == 0 &&
                !memcmp(magic, magic + 1, sizeof(magic) - 1)) {
                st_glm_err_set(&err, ST_ERR_INVALID_PARAM, ST_GLM_ERR_KEY_FIRST, "%s: starts "
                               "with zero bytes, not a binary file's magic: an incomplete "
                               "binary file (its writer did not finish)", path);
            }
            close(fd);
        }
    }
    if (st_glm_err_agree(&c, &err) != ST_OK) {
        st_glm_err_report(&err, msg, msg_len);
        return err.status;
    }
    /* the ranks may disagree only if the file changes under them: rank 0 decides */
    if (c.comm != MPI_COMM_NULL &&
        ST_GLM_MPI_CALL(MPI_Bcast(&is_bin, 1, MPI_INT64_T, 0, c.comm)) != ST_OK) {
        return ST_ERR_MPI;
    }
    if (is_bin) {
        return st_glm_data_read_bin(path, opts, comm, msg, msg_len, data_p);
    }
    return st_glm_data_read_svm(path, opts, comm, msg, msg_len, data_p);
}
