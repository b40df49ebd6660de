/*
 * Strata binary CSR format, versions 1 and 2: written and read collectively.
 *
 * Version 2 is version 1 with a flags half-word at byte 22 (the upper half of version
 * 1's 4-byte label kind, always zero there): bit 0 says the class labels, stored
 * +1/-1 as in version 1, were named 1 and 0 by the data they came from. The writer
 * writes version 1 unless a flag is set, so files without flags stay readable by the
 * builds that read version 1 only; this reader reads both.
 *
 * Layout (little-endian; every section starts on a 64-byte boundary, gaps are zero):
 *
 *     0    128-byte header (st_glm_bin_header_put has the fields, README the table)
 *     128  indptr   int64   n_rows + 1   global row pointers, indptr[0] = 0
 *          indices  uint32  nnz          0-based columns, strictly increasing per row
 *          values   float or double, nnz
 *          labels   double  n_rows
 *
 * Checksums: one 64-bit sum per section, S = sum over elements i of
 * mix(e_i + (i + 1) * PHI + salt) mod 2^64, with e_i the element's bits (zero-
 * extended), mix the SplitMix64 finalizer (a bijection), PHI = 0x9e3779b97f4a7c15
 * and salt = section number * 0xd1b54a32d192ed03. Unlike FNV-1a or CRC32 it is a
 * plain sum of per-element terms, so every rank sums its own slice and the ranks
 * add their partial sums: the file is written and verified in parallel with no
 * rank reading or holding more than its rows. Any change to one element changes
 * its term (mix is a bijection), a moved element changes with its position.
 * The header has the same sum over its first 15 64-bit words.
 */
#include "config.h"

#include "st_glm_data.h"
#include "st_glm_file.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define ST_GLM_BIN_VERSION   2          /* the newest version read and written */
#define ST_GLM_BIN_ZERO_ONE  0x1u       /* flag: the classes were named 1 and 0 */
#define ST_GLM_BIN_FLAGS     ST_GLM_BIN_ZERO_ONE   /* the flags this build knows */
#define ST_GLM_BIN_HEADER    128
#define ST_GLM_BIN_ALIGN     64
#define ST_GLM_BIN_PHI       0x9e3779b97f4a7c15ULL
#define ST_GLM_BIN_SALT      0xd1b54a32d192ed03ULL
#define ST_GLM_BIN_CHUNK     65536      /* elements per conversion/write chunk */
#define ST_GLM_BIN_MAX_COUNT (INT64_C(1) << 56)

enum {
    ST_GLM_SEC_INDPTR = 0,
    ST_GLM_SEC_INDICES,
    ST_GLM_SEC_VALUES,
    ST_GLM_SEC_LABELS,
    ST_GLM_SEC_LAST
};

static const char *const st_glm_sec_names[ST_GLM_SEC_LAST] = {
    "row pointers", "column indices", "values", "labels"
};

typedef struct {
    uint32_t version;
    uint32_t header_size;
    uint32_t prec;
    uint32_t label_kind;    /* 16 bits in the file (version 1: 32, the upper 16 zero) */
    uint32_t flags;         /* 16 bits in the file, after the label kind (version 2) */
    uint64_t n_rows;
    uint64_t n_cols;
    uint64_t nnz;
    uint64_t off[ST_GLM_SEC_LAST];
    uint64_t file_size;
    uint64_t sum[ST_GLM_SEC_LAST];
    uint64_t header_sum;
} st_glm_bin_header_t;

static int st_glm_bin_host_le(void)
{
    const uint16_t one = 1;
    unsigned char b;

    memcpy(&b, &one, 1);
    return b == 1;
}

/* ---- checksums ---- */

static inline uint64_t st_glm_mix64(uint64_t x)
{
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

static inline uint64_t st_glm_term(uint64_t e, uint64_t i, uint64_t salt)
{
    return st_glm_mix64(e + (i + 1) * ST_GLM_BIN_PHI + salt);
}

/* Partial sum of @a n elements of @a esize bytes at @a buf, element @a first on. */
uint64_t st_glm_sum64(const void *buf, size_t esize, int64_t n, int64_t first, uint64_t salt)
{
    const unsigned char *p = buf;
    uint64_t s = 0;
    int64_t i;

    if (esize == 8) {
        for (i = 0; i < n; i++) {
            uint64_t e;

            memcpy(&e, p + 8 * i, 8);
            s += st_glm_term(e, (uint64_t)(first + i), salt);
        }
    } else {
        for (i = 0; i < n; i++) {
            uint32_t e;

            memcpy(&e, p + 4 * i, 4);
            s += st_glm_term(e, (uint64_t)(first + i), salt);
        }
    }
    return s;
}

static uint64_t st_glm_bin_sum(const void *buf, size_t esize, int64_t n, int64_t first,
                               int section)
{
    return st_glm_sum64(buf, esize, n, first, (uint64_t)(section + 1) * ST_GLM_BIN_SALT);
}

/*
 * The checksum of a dataset spread over ranks: the format's sums of the row lengths,
 * column indices, values (their bits in the data's precision) and labels, each at its
 * global position, added over the sections and the ranks. The same rows give the same
 * sum whatever the rank count.
 */
st_status_t st_glm_data_checksum(const st_glm_data_t *d, MPI_Comm comm, uint64_t *sum_p)
{
    uint64_t s = 0, len, nnz = (uint64_t)d->nnz, nnz_off = 0;
    st_glm_comm_t c;
    st_status_t status;
    int64_t i;

    status = st_glm_comm_init(comm, &c);
    if (status != ST_OK) {
        return status;
    }
    if (c.comm != MPI_COMM_NULL &&
        ST_GLM_MPI_CALL(MPI_Exscan(&nnz, &nnz_off, 1, MPI_UINT64_T, MPI_SUM, c.comm)) != ST_OK) {
        return ST_ERR_MPI;
    }
    nnz_off = (c.rank == 0) ? 0 : nnz_off;
    for (i = 0; i < d->n_rows; i++) {
        len = (uint64_t)(d->indptr[i + 1] - d->indptr[i]);
        s  += st_glm_sum64(&len, 8, 1, d->row_offset + i, 1 * ST_GLM_BIN_SALT);
    }
    s += st_glm_sum64(d->indices, 4, d->nnz, (int64_t)nnz_off, 2 * ST_GLM_BIN_SALT);
    s += st_glm_sum64((d->prec == 32) ? (const void*)d->val32 : (const void*)d->val64,
                      (size_t)(d->prec / 8), d->nnz, (int64_t)nnz_off, 3 * ST_GLM_BIN_SALT);
    s += st_glm_sum64(d->y, 8, d->n_rows, d->row_offset, 4 * ST_GLM_BIN_SALT);
    if (c.comm != MPI_COMM_NULL &&
        ST_GLM_MPI_CALL(MPI_Allreduce(MPI_IN_PLACE, &s, 1, MPI_UINT64_T, MPI_SUM, c.comm)) !=
                ST_OK) {
        return ST_ERR_MPI;
    }
    *sum_p = s;
    return ST_OK;
}

/* ---- header ---- */

static void st_glm_put64(unsigned char *p, uint64_t v)
{
    int i;

    for (i = 0; i < 8; i++) {
        p[i] = (unsigned char)(v >> (8 * i));
    }
}

static void st_glm_put32(unsigned char *p, uint32_t v)
{
    int i;

    for (i = 0; i < 4; i++) {
        p[i] = (unsigned char)(v >> (8 * i));
    }
}

static uint64_t st_glm_get64(const unsigned char *p)
{
    uint64_t v = 0;
    int i;

    for (i = 7; i >= 0; i--) {
        v = (v << 8) | p[i];
    }
    return v;
}

static uint32_t st_glm_get32(const unsigned char *p)
{
    return (uint32_t)st_glm_get64(p) & 0xffffffffu;
}

static uint64_t st_glm_bin_header_sum(const unsigned char *buf)
{
    uint64_t s = 0;
    int i;

    for (i = 0; i < 15; i++) {
        s += st_glm_term(st_glm_get64(buf + 8 * i), (uint64_t)i, 0);
    }
    return s;
}

static void st_glm_bin_header_put(const st_glm_bin_header_t *h, unsigned char *buf)
{
    int s;

    memset(buf, 0, ST_GLM_BIN_HEADER);
    memcpy(buf, ST_GLM_BIN_MAGIC, 8);
    st_glm_put32(buf + 8, h->version);
    st_glm_put32(buf + 12, h->header_size);
    st_glm_put32(buf + 16, h->prec);
    st_glm_put32(buf + 20, h->label_kind | (h->flags << 16));
    st_glm_put64(buf + 24, h->n_rows);
    st_glm_put64(buf + 32, h->n_cols);
    st_glm_put64(buf + 40, h->nnz);
    for (s = 0; s < ST_GLM_SEC_LAST; s++) {
        st_glm_put64(buf + 48 + 8 * s, h->off[s]);
        st_glm_put64(buf + 88 + 8 * s, h->sum[s]);
    }
    st_glm_put64(buf + 80, h->file_size);
    st_glm_put64(buf + 120, st_glm_bin_header_sum(buf));
}

static void st_glm_bin_header_get(const unsigned char *buf, st_glm_bin_header_t *h)
{
    int s;

    h->version     = st_glm_get32(buf + 8);
    h->header_size = st_glm_get32(buf + 12);
    h->prec        = st_glm_get32(buf + 16);
    h->label_kind  = st_glm_get32(buf + 20) & 0xffffu;
    h->flags       = st_glm_get32(buf + 20) >> 16;
    h->n_rows      = st_glm_get64(buf + 24);
    h->n_cols      = st_glm_get64(buf + 32);
    h->nnz         = st_glm_get64(buf + 40);
    for (s = 0; s < ST_GLM_SEC_LAST; s++) {
        h->off[s] = st_glm_get64(buf + 48 + 8 * s);
        h->sum[s] = st_glm_get64(buf + 88 + 8 * s);
    }
    h->file_size  = st_glm_get64(buf + 80);
    h->header_sum = st_glm_get64(buf + 120);
}

/* The section offsets and file size versions 1 and 2 prescribe for these sizes. */
static void st_glm_bin_layout(uint64_t n_rows, uint64_t nnz, uint32_t prec,
                              st_glm_bin_header_t *h)
{
    h->off[ST_GLM_SEC_INDPTR]  = ST_GLM_BIN_HEADER;
    h->off[ST_GLM_SEC_INDICES] = ST_ALIGN_UP(h->off[ST_GLM_SEC_INDPTR] + (n_rows + 1) * 8,
                                             ST_GLM_BIN_ALIGN);
    h->off[ST_GLM_SEC_VALUES]  = ST_ALIGN_UP(h->off[ST_GLM_SEC_INDICES] + nnz * 4,
                                             ST_GLM_BIN_ALIGN);
    h->off[ST_GLM_SEC_LABELS]  = ST_ALIGN_UP(h->off[ST_GLM_SEC_VALUES] + nnz * (prec / 8),
                                             ST_GLM_BIN_ALIGN);
    h->file_size               = h->off[ST_GLM_SEC_LABELS] + n_rows * 8;
}

/* ---- I/O ---- */

int st_glm_pwrite_all(int fd, const void *buf, size_t len, uint64_t off)
{
    const char *p = buf;

    while (len > 0) {
        ssize_t n = pwrite(fd, p, ST_MIN(len, (size_t)1 << 30), (off_t)off);

        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            return errno;
        }
        p   += n;
        len -= (size_t)n;
        off += (uint64_t)n;
    }
    return 0;
}

/* 0, an errno, or -1 when the file ends first */
int st_glm_pread_all(int fd, void *buf, size_t len, uint64_t off)
{
    char *p = buf;

    while (len > 0) {
        ssize_t n = pread(fd, p, ST_MIN(len, (size_t)1 << 30), (off_t)off);

        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            return errno;
        }
        if (n == 0) {
            return -1;
        }
        p   += n;
        len -= (size_t)n;
        off += (uint64_t)n;
    }
    return 0;
}

static void st_glm_bin_io_error(st_glm_err_t *err, const char *path, const char *what, int rc)
{
    if (rc == -1) {
        st_glm_err_set(err, ST_ERR_IO, ST_GLM_ERR_KEY_FIRST, "%s: truncated while reading %s",
                       path, what);
    } else {
        st_glm_err_set(err, ST_ERR_IO, ST_GLM_ERR_KEY_FIRST, "%s: cannot %s: %s", path, what,
                       strerror(rc));
    }
}

/* ---- writing ---- */

enum {
    ST_GLM_W_ROWS = 0, ST_GLM_W_NNZ, ST_GLM_W_COLS, ST_GLM_W_PREC, ST_GLM_W_KIND,
    ST_GLM_W_FLAGS, ST_GLM_W_OFFSET, ST_GLM_W_LAST
};

st_status_t st_glm_data_write_bin(const st_glm_data_t *d, const char *path, MPI_Comm comm,
                                  char *msg, size_t msg_len)
{
    int64_t mine[ST_GLM_W_LAST], *all = NULL, sums[ST_GLM_SEC_LAST], *all_sums = NULL;
    int64_t row_off = 0, nnz_off = 0, rows = 0, nnz = 0, cols = 0, *buf = NULL, i, n, k;
    unsigned char hbuf[ST_GLM_BIN_HEADER];
    char check[ST_GLM_DATA_MSG_LEN];
    st_glm_bin_header_t h;
    st_glm_out_t out;
    st_glm_comm_t c;
    st_glm_err_t err;
    st_status_t status;
    int fd = -1, r, s, rc;

    st_glm_err_init(&err);
    memset(&out, 0, sizeof(out));
    out.fd = -1;
    memset(&h, 0, sizeof(h));
    memset(sums, 0, sizeof(sums));
    status = st_glm_comm_init(comm, &c);
    if (status != ST_OK) {
        st_glm_err_set(&err, status, ST_GLM_ERR_KEY_FIRST, "%s: %s", path ? path : "(null)",
                       strata_status_string(status));
        st_glm_err_report(&err, msg, msg_len);
        return status;
    }
    if (path == NULL) {
        path = "(null)";
        st_glm_err_set(&err, ST_ERR_INVALID_PARAM, ST_GLM_ERR_KEY_FIRST,
                       "st_glm_data_write_bin: no file name");
    } else if (!st_glm_bin_host_le()) {
        st_glm_err_set(&err, ST_ERR_UNSUPPORTED, ST_GLM_ERR_KEY_FIRST, "%s: the binary "
                       "format is little-endian and this host is not", path);
    } else if (st_glm_data_check(d, check, sizeof(check)) != ST_OK) {
        st_glm_err_set(&err, ST_ERR_INVALID_PARAM, ST_GLM_ERR_KEY_FIRST, "%s: rank %d's "
                       "rows are invalid: %s", path, c.rank, check);
    }

    /* 1. sizes and offsets of every rank */
    memset(mine, 0, sizeof(mine));
    if (err.status == ST_OK) {
        mine[ST_GLM_W_ROWS]   = d->n_rows;
        mine[ST_GLM_W_NNZ]    = d->nnz;
        mine[ST_GLM_W_COLS]   = d->n_cols;
        mine[ST_GLM_W_PREC]   = d->prec;
        /* (named classes go as targets: a reader of classes takes them back) */
        mine[ST_GLM_W_KIND]   = (d->label_kind == ST_GLM_LABEL_MULTI) ? ST_GLM_LABEL_REAL
                                                                      : d->label_kind;
        mine[ST_GLM_W_FLAGS]  = (d->label_kind == ST_GLM_LABEL_CLASS && d->zero_one) ?
                                ST_GLM_BIN_ZERO_ONE : 0;
        mine[ST_GLM_W_OFFSET] = d->row_offset;
    }
    all = malloc((size_t)c.size * ST_GLM_W_LAST * sizeof(*all));
    all_sums = malloc((size_t)c.size * ST_GLM_SEC_LAST * sizeof(*all_sums));
    buf = malloc(ST_GLM_BIN_CHUNK * sizeof(*buf));
    if (all == NULL || all_sums == NULL || buf == NULL) {
        if (c.comm != MPI_COMM_NULL) {
            MPI_Abort(c.comm, 1);   /* cannot take part in the collectives */
        }
        st_glm_err_set(&err, ST_ERR_NO_MEMORY, ST_GLM_ERR_KEY_FIRST, "%s: out of memory",
                       path);
        goto out;
    }
    ST_CALL_GOTO(st_glm_allgather_i64(&c, mine, ST_GLM_W_LAST, all), err_mpi, status);
    for (r = 0; r < c.size; r++) {
        const int64_t *a = all + (size_t)r * ST_GLM_W_LAST;

        if (r == c.rank) {
            row_off = rows;
            nnz_off = nnz;
        }
        rows += a[ST_GLM_W_ROWS];
        nnz  += a[ST_GLM_W_NNZ];
        cols  = ST_MAX(cols, a[ST_GLM_W_COLS]);
        if (err.status == ST_OK && (a[ST_GLM_W_PREC] != all[ST_GLM_W_PREC] ||
                                    a[ST_GLM_W_KIND] != all[ST_GLM_W_KIND] ||
                                    a[ST_GLM_W_FLAGS] != all[ST_GLM_W_FLAGS])) {
            st_glm_err_set(&err, ST_ERR_INVALID_PARAM, ST_GLM_ERR_KEY_FIRST, "%s: ranks 0 "
                           "and %d differ in precision, label kind or class names (0/1 or "
                           "-1/+1)", path, r);
        }
    }
    if (err.status == ST_OK && d->row_offset != row_off) {
        st_glm_err_set(&err, ST_ERR_INVALID_PARAM, ST_GLM_ERR_KEY_FIRST, "%s: rank %d holds "
                       "rows from %lld, but the ranks before it hold %lld rows: rows must be "
                       "in rank order", path, c.rank, (long long)d->row_offset,
                       (long long)row_off);
    }
    if (st_glm_err_agree(&c, &err) != ST_OK) {
        goto out;
    }
    h.flags       = (uint32_t)all[ST_GLM_W_FLAGS];
    h.version     = h.flags != 0 ? 2 : 1;   /* version 1 where it says it all */
    h.header_size = ST_GLM_BIN_HEADER;
    h.prec        = (uint32_t)d->prec;
    h.label_kind  = (uint32_t)all[ST_GLM_W_KIND];
    h.n_rows      = (uint64_t)rows;
    h.n_cols      = (uint64_t)cols;
    h.nnz         = (uint64_t)nnz;
    st_glm_bin_layout(h.n_rows, h.nnz, h.prec, &h);

    /* 2. rank 0 creates a temporary file next to it, at its size (the header zero:
     * not valid until written), which the others open by name; renamed over @a path
     * once whole (a failed or killed write leaves the old file as it was) */
    if (st_glm_out_open_all(&out, path, h.file_size, &c, "the data", &err) != ST_OK) {
        goto out;
    }
    fd = out.fd;

    /* 3. my rows: global row pointers (the last rank adds the final one), the rest as is */
    n = d->n_rows + (c.rank == c.size - 1 ? 1 : 0);
    for (i = 0, rc = 0; i < n && rc == 0; i += k) {
        int64_t j;

        k = ST_MIN(n - i, (int64_t)ST_GLM_BIN_CHUNK);
        for (j = 0; j < k; j++) {
            buf[j] = d->indptr[i + j] + nnz_off;
        }
        sums[ST_GLM_SEC_INDPTR] += (int64_t)st_glm_bin_sum(buf, 8, k, row_off + i,
                                                           ST_GLM_SEC_INDPTR);
        rc = st_glm_pwrite_all(fd, buf, (size_t)k * 8,
                               h.off[ST_GLM_SEC_INDPTR] + (uint64_t)(row_off + i) * 8);
    }
    if (rc == 0) {
        rc = st_glm_pwrite_all(fd, d->indices, (size_t)d->nnz * 4,
                               h.off[ST_GLM_SEC_INDICES] + (uint64_t)nnz_off * 4);
        sums[ST_GLM_SEC_INDICES] = (int64_t)st_glm_bin_sum(d->indices, 4, d->nnz, nnz_off,
                                                           ST_GLM_SEC_INDICES);
    }
    if (rc == 0) {
        const void *v = d->prec == 32 ? (const void*)d->val32 : (const void*)d->val64;

        rc = st_glm_pwrite_all(fd, v, (size_t)d->nnz * (size_t)(d->prec / 8),
                               h.off[ST_GLM_SEC_VALUES] + (uint64_t)nnz_off * (h.prec / 8));
        sums[ST_GLM_SEC_VALUES] = (int64_t)st_glm_bin_sum(v, (size_t)(d->prec / 8), d->nnz,
                                                          nnz_off, ST_GLM_SEC_VALUES);
    }
    if (rc == 0) {
        rc = st_glm_pwrite_all(fd, d->y, (size_t)d->n_rows * 8,
                               h.off[ST_GLM_SEC_LABELS] + (uint64_t)row_off * 8);
        sums[ST_GLM_SEC_LABELS] = (int64_t)st_glm_bin_sum(d->y, 8, d->n_rows, row_off,
                                                          ST_GLM_SEC_LABELS);
    }
    if (rc != 0) {
        st_glm_err_set(&err, ST_ERR_IO, ST_GLM_ERR_KEY_FIRST, "%s: cannot write: %s (%s)", path,
                       strerror(rc), st_glm_out_lost(&out));
    }
    if (rc == 0 && c.rank != 0 && fsync(fd) != 0) {
        st_glm_err_set(&err, ST_ERR_IO, ST_GLM_ERR_KEY_FIRST, "%s: cannot write: %s", path,
                       strerror(errno));
    }
    if (st_glm_err_agree(&c, &err) != ST_OK) {
        goto out;
    }

    /* 4. rank 0 adds the partial checksums and writes the header last */
    ST_CALL_GOTO(st_glm_allgather_i64(&c, sums, ST_GLM_SEC_LAST, all_sums), err_mpi, status);
    if (c.rank == 0) {
        for (s = 0; s < ST_GLM_SEC_LAST; s++) {
            for (r = 0; r < c.size; r++) {
                h.sum[s] += (uint64_t)all_sums[(size_t)r * ST_GLM_SEC_LAST + s];
            }
        }
        st_glm_bin_header_put(&h, hbuf);
        rc = st_glm_pwrite_all(fd, hbuf, sizeof(hbuf), 0);
        if (rc == 0) {
            rc = st_glm_out_commit(&out);
        }
        if (rc != 0) {
            st_glm_err_set(&err, ST_ERR_IO, ST_GLM_ERR_KEY_FIRST, "%s: cannot write: %s (%s)",
                           path, strerror(rc), st_glm_out_lost(&out));
        }
    }
    st_glm_err_agree(&c, &err);
    goto out;

err_mpi:
    st_glm_err_set(&err, ST_ERR_MPI, ST_GLM_ERR_KEY_FIRST, "%s: MPI error", path);
out:
    if (out.fd >= 0 || out.tmp != NULL) {
        st_glm_out_close(&out);   /* (rank 0: the temporary too, unless renamed) */
    }
    free(buf);
    free(all);
    free(all_sums);
    if (err.status != ST_OK) {
        st_glm_err_report(&err, msg, msg_len);
    }
    return err.status;
}

/* ---- reading ---- */


/* Read and validate the header (every rank does); errors name the file. */
static void st_glm_bin_read_header(int fd, const char *path, st_glm_bin_header_t *h,
                                   st_glm_err_t *err)
{
    unsigned char buf[ST_GLM_BIN_HEADER];
    st_glm_bin_header_t want;
    struct stat st;
    int rc;

    if (fstat(fd, &st) != 0) {
        st_glm_err_set(err, ST_ERR_IO, ST_GLM_ERR_KEY_FIRST, "%s: cannot stat: %s", path,
                       strerror(errno));
        return;
    }
    if (!S_ISREG(st.st_mode)) {
        st_glm_err_set(err, ST_ERR_IO, ST_GLM_ERR_KEY_FIRST, "%s: not a regular file", path);
        return;
    }
    memset(buf, 0, sizeof(buf));
    rc = st_glm_pread_all(fd, buf, (size_t)ST_MIN((int64_t)sizeof(buf), (int64_t)st.st_size),
                          0);
    if (rc > 0) {
        st_glm_bin_io_error(err, path, "read", rc);
        return;
    }
    if (st.st_size < 8 || memcmp(buf, ST_GLM_BIN_MAGIC, 8) != 0) {
        st_glm_err_set(err, ST_ERR_INVALID_PARAM, ST_GLM_ERR_KEY_FIRST, "%s: not a Strata "
                       "binary CSR file (bad magic number)", path);
        return;
    }
    if (st.st_size < ST_GLM_BIN_HEADER) {
        st_glm_err_set(err, ST_ERR_IO, ST_GLM_ERR_KEY_FIRST, "%s: truncated: %lld bytes, "
                       "shorter than the %d-byte header", path, (long long)st.st_size,
                       ST_GLM_BIN_HEADER);
        return;
    }
    st_glm_bin_header_get(buf, h);
    /* every version keeps the magic, the version and the header's checksum (bytes 120-127,
     * of bytes 0-119) where they are: an unknown version under a checksum that holds is
     * a newer Strata's; under one that does not (or version 0), damage (before, a damaged
     * version word was reported as a version this build cannot read) */
    if (h->version < 1 || h->version > ST_GLM_BIN_VERSION) {
        if (h->version > ST_GLM_BIN_VERSION && st_glm_bin_header_sum(buf) == h->header_sum) {
            st_glm_err_set(err, ST_ERR_UNSUPPORTED, ST_GLM_ERR_KEY_FIRST, "%s: binary format "
                           "version %u, written by a newer Strata; this build reads versions 1 "
                           "to %d", path, h->version, ST_GLM_BIN_VERSION);
        } else {
            st_glm_err_set(err, ST_ERR_IO, ST_GLM_ERR_KEY_FIRST, "%s: corrupted header (its "
                           "version reads %u%s)", path, h->version,
                           st_glm_bin_header_sum(buf) == h->header_sum
                               ? ", no version's" : ", and the checksum does not match");
        }
        return;
    }
    if (st_glm_bin_header_sum(buf) != h->header_sum) {
        st_glm_err_set(err, ST_ERR_IO, ST_GLM_ERR_KEY_FIRST, "%s: corrupted header "
                       "(checksum mismatch)", path);
        return;
    }
    want = *h;
    if (h->n_rows < ST_GLM_BIN_MAX_COUNT && h->nnz < ST_GLM_BIN_MAX_COUNT &&
        (h->prec == 32 || h->prec == 64)) {
        st_glm_bin_layout(h->n_rows, h->nnz, h->prec, &want);
    }
    /* version 1 has no flags: its 4-byte label kind is 0 or 1; a 0/1 flag is for classes */
    if (h->header_size != ST_GLM_BIN_HEADER || (h->prec != 32 && h->prec != 64) ||
        h->label_kind > ST_GLM_LABEL_REAL || (h->version == 1 && h->flags != 0) ||
        ((h->flags & ST_GLM_BIN_ZERO_ONE) && h->label_kind != ST_GLM_LABEL_CLASS) ||
        h->n_cols > ST_GLM_DATA_MAX_INDEX ||
        h->n_rows >= ST_GLM_BIN_MAX_COUNT || h->nnz >= ST_GLM_BIN_MAX_COUNT ||
        memcmp(want.off, h->off, sizeof(h->off)) != 0 || want.file_size != h->file_size) {
        st_glm_err_set(err, ST_ERR_IO, ST_GLM_ERR_KEY_FIRST, "%s: corrupted header "
                       "(inconsistent fields)", path);
        return;
    }
    if ((h->flags & ~ST_GLM_BIN_FLAGS) != 0) {
        st_glm_err_set(err, ST_ERR_UNSUPPORTED, ST_GLM_ERR_KEY_FIRST, "%s: binary format "
                       "version %u with flags 0x%x; this build knows flags 0x%x only", path,
                       h->version, h->flags, ST_GLM_BIN_FLAGS);
        return;
    }
    if ((uint64_t)st.st_size < h->file_size) {
        st_glm_err_set(err, ST_ERR_IO, ST_GLM_ERR_KEY_FIRST, "%s: truncated: %lld bytes, the "
                       "header says %llu", path, (long long)st.st_size,
                       (unsigned long long)h->file_size);
    } else if ((uint64_t)st.st_size > h->file_size) {
        st_glm_err_set(err, ST_ERR_IO, ST_GLM_ERR_KEY_FIRST, "%s: %lld bytes, the header "
                       "says %llu (trailing data)", path, (long long)st.st_size,
                       (unsigned long long)h->file_size);
    } else if (h->n_rows == 0) {
        st_glm_err_set(err, ST_ERR_INVALID_PARAM, ST_GLM_ERR_KEY_FIRST, "%s: no examples",
                       path);
    }
}

/*
 * Collective: add the ranks' partial sums of sections [first, first + count) and
 * compare them with the header; a mismatch is an error on every rank.
 */
static st_status_t st_glm_bin_verify(const st_glm_comm_t *c, const char *path,
                                     const st_glm_bin_header_t *h, const int64_t *part,
                                     int first, int count, st_glm_err_t *err)
{
    int64_t all[ST_GLM_SEC_LAST * 64], *a = all;
    uint64_t total;
    int r, s;

    if ((size_t)c->size * (size_t)count > ST_GLM_SEC_LAST * 64) {
        a = malloc((size_t)c->size * (size_t)count * sizeof(*a));
        if (a == NULL) {
            MPI_Abort(c->comm, 1);   /* cannot take part in the collective */
            return ST_ERR_NO_MEMORY;
        }
    }
    if (st_glm_allgather_i64(c, part + first, count, a) != ST_OK) {
        if (a != all) {
            free(a);
        }
        st_glm_err_set(err, ST_ERR_MPI, ST_GLM_ERR_KEY_FIRST, "%s: MPI error", path);
        return ST_ERR_MPI;
    }
    for (s = 0; s < count; s++) {
        for (r = 0, total = 0; r < c->size; r++) {
            total += (uint64_t)a[(size_t)r * (size_t)count + (size_t)s];
        }
        if (total != h->sum[first + s]) {
            st_glm_err_set(err, ST_ERR_IO, ST_GLM_ERR_KEY_FIRST, "%s: corrupted data: the "
                           "checksum of the %s does not match the header", path,
                           st_glm_sec_names[first + s]);
            break;
        }
    }
    if (a != all) {
        free(a);
    }
    return err->status;
}

st_status_t st_glm_data_read_bin(const char *path, const st_glm_data_opts_t *opts,
                                 MPI_Comm comm, char *msg, size_t msg_len,
                                 st_glm_data_t **data_p)
{
    int64_t part[ST_GLM_SEC_LAST] = {0, 0, 0, 0}, lo = 0, hi = 0, n = 0, a = 0, b = 0, i, k;
    st_glm_bin_header_t h;
    st_glm_data_opts_t o;
    st_glm_data_t *d = NULL;
    void *raw = NULL;
    st_glm_comm_t c;
    st_glm_err_t err;
    st_status_t status;
    int64_t first[2] = {INT64_MAX, INT64_MAX};   /* targets read as classes: the first
                                                    row labelled 0, the first labelled -1 */
    int fd = -1, rc, prec = 64, fsize, as_classes = 0;

    st_glm_err_init(&err);
    memset(&h, 0, sizeof(h));
    status = st_glm_comm_init(comm, &c);
    if (status != ST_OK) {
        st_glm_err_set(&err, status, ST_GLM_ERR_KEY_FIRST, "%s: %s", path ? path : "(null)",
                       strata_status_string(status));
        st_glm_err_report(&err, msg, msg_len);
        return status;
    }
    if (path == NULL || data_p == NULL) {
        path = "(null)";
        st_glm_err_set(&err, ST_ERR_INVALID_PARAM, ST_GLM_ERR_KEY_FIRST,
                       "st_glm_data_read_bin: no file or no result pointer");
    } else if (!st_glm_bin_host_le()) {
        st_glm_err_set(&err, ST_ERR_UNSUPPORTED, ST_GLM_ERR_KEY_FIRST, "%s: the binary "
                       "format is little-endian and this host is not", path);
    } else {
        st_glm_data_opts_resolve(opts, path, 0, &o, &err);  /* precision: the file's */
    }

    /* 1. every rank reads and checks the header */
    if (err.status == ST_OK) {
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
            st_glm_err_set(&err, errno == ENOENT ? ST_ERR_NOT_FOUND : ST_ERR_IO,
                           ST_GLM_ERR_KEY_FIRST, "%s: cannot open: %s", path, strerror(errno));
        } else {
            st_glm_bin_read_header(fd, path, &h, &err);
        }
    }
    if (st_glm_err_agree(&c, &err) != ST_OK) {
        goto out;
    }
    /* every rank reads the header on its own: the same header (its checksum) as rank 0's,
     * or the ranks would split other files' rows, or name the classes differently */
    if (c.comm != MPI_COMM_NULL) {
        uint64_t sum0 = h.header_sum;

        ST_GLM_MPI_CALL_GOTO(MPI_Bcast(&sum0, 1, MPI_UINT64_T, 0, c.comm), err_mpi, status);
        if (sum0 != h.header_sum) {
            st_glm_err_set(&err, ST_ERR_IO, ST_GLM_ERR_KEY_FIRST, "%s: rank %d reads another "
                           "header than rank 0 (do all ranks see the same file?)", path,
                           c.rank);
        }
        if (st_glm_err_agree(&c, &err) != ST_OK) {
            goto out;
        }
    }
    prec  = o.prec == 0 ? (int)h.prec : o.prec;
    fsize = (int)h.prec / 8;
    as_classes = h.label_kind == ST_GLM_LABEL_REAL && o.label_kind == ST_GLM_LABEL_CLASS;
    st_glm_block_range((int64_t)h.n_rows, c.size, c.rank, &lo, &hi);
    n = hi - lo;
    status = st_glm_data_alloc(n, 0, prec, &d);
    if (status != ST_OK) {
        st_glm_err_set(&err, status, ST_GLM_ERR_KEY_FIRST, "%s: out of memory", path);
    } else {
        /* 2. my row pointers, verified before they say what else to read */
        rc = st_glm_pread_all(fd, d->indptr, (size_t)(n + 1) * 8,
                              h.off[ST_GLM_SEC_INDPTR] + (uint64_t)lo * 8);
        if (rc != 0) {
            st_glm_bin_io_error(&err, path, "read", rc);
        }
        /* the final pointer is the last rank's (with more ranks than rows, several
         * ranks end at n_rows) */
        part[ST_GLM_SEC_INDPTR] = (int64_t)st_glm_bin_sum(d->indptr, 8,
                                                          n + (c.rank == c.size - 1), lo,
                                                          ST_GLM_SEC_INDPTR);
    }
    if (st_glm_err_agree(&c, &err) != ST_OK ||
        st_glm_bin_verify(&c, path, &h, part, ST_GLM_SEC_INDPTR, 1, &err) != ST_OK) {
        goto out;
    }
    /*
     * The first bad pointer k (pointer k ends row k, 1-based; pointer 0 must be 0): each
     * rank checks its pointers lo..hi, pointer lo against the one before it only on the
     * rank that holds both, so the lowest over the ranks is the serial answer.
     */
    for (i = 0; i <= n; i++) {
        int64_t ptr = lo + i, p = d->indptr[i];

        if ((ptr == 0 && p != 0) || (i > 0 && p < d->indptr[i - 1]) || p < 0 ||
            p > (int64_t)h.nnz || (ptr == (int64_t)h.n_rows && p != (int64_t)h.nnz)) {
            break;
        }
    }
    if (i <= n) {
        st_glm_err_set(&err, ST_ERR_IO, ST_MAX(lo + i, 1), "%s: row %lld: corrupted row "
                       "pointers", path, (long long)ST_MAX(lo + i, 1));
    }
    a = d->indptr[0];
    b = d->indptr[n];
    if (st_glm_err_agree(&c, &err) != ST_OK) {
        goto out;
    }

    /* 3. my entries and labels */
    for (i = 0; i <= n; i++) {
        d->indptr[i] -= a;
    }
    d->nnz = b - a;
    free(d->indices);
    d->indices = malloc(ST_MAX((size_t)d->nnz, (size_t)1) * 4);
    raw = malloc(ST_MAX((size_t)d->nnz, (size_t)1) * (size_t)fsize);
    if (d->indices == NULL || raw == NULL) {
        st_glm_err_set(&err, ST_ERR_NO_MEMORY, ST_GLM_ERR_KEY_FIRST, "%s: out of memory",
                       path);
    }
    if (err.status == ST_OK) {
        rc = st_glm_pread_all(fd, d->indices, (size_t)d->nnz * 4,
                              h.off[ST_GLM_SEC_INDICES] + (uint64_t)a * 4);
        if (rc == 0) {
            rc = st_glm_pread_all(fd, raw, (size_t)d->nnz * (size_t)fsize,
                                  h.off[ST_GLM_SEC_VALUES] + (uint64_t)a * (uint64_t)fsize);
        }
        if (rc == 0) {
            rc = st_glm_pread_all(fd, d->y, (size_t)n * 8,
                                  h.off[ST_GLM_SEC_LABELS] + (uint64_t)lo * 8);
        }
        if (rc != 0) {
            st_glm_bin_io_error(&err, path, "read", rc);
        }
        part[ST_GLM_SEC_INDICES] = (int64_t)st_glm_bin_sum(d->indices, 4, d->nnz, a,
                                                           ST_GLM_SEC_INDICES);
        part[ST_GLM_SEC_VALUES]  = (int64_t)st_glm_bin_sum(raw, (size_t)fsize, d->nnz, a,
                                                           ST_GLM_SEC_VALUES);
        part[ST_GLM_SEC_LABELS]  = (int64_t)st_glm_bin_sum(d->y, 8, n, lo, ST_GLM_SEC_LABELS);
    }
    if (st_glm_err_agree(&c, &err) != ST_OK ||
        st_glm_bin_verify(&c, path, &h, part, ST_GLM_SEC_INDICES, 3, &err) != ST_OK) {
        goto out;
    }

    /* 4. contents: what the checksums cannot vouch for (a file written by another tool);
     * the classes of 0/1 data read as regression targets are 1 and 0, as from the text,
     * and regression targets read as classes are read as the text's labels: -1/+1 or
     * 0/1 (0 becomes -1), not both. Keys: 2 x row for a row's error, 2 x row + 1 for
     * mixed labels, so that on one row the row's error wins (as in the text reader). */
    for (i = 0; i < n && err.status == ST_OK; i++) {
        int64_t row = lo + i + 1;
        double y;

        if ((h.flags & ST_GLM_BIN_ZERO_ONE) && o.label_kind != ST_GLM_LABEL_CLASS &&
            d->y[i] == -1.0) {
            d->y[i] = 0.0;
        }
        y = d->y[i];
        if (as_classes && (y == 0.0 || y == -1.0)) {
            if (y == 0.0) {
                first[0] = ST_MIN(first[0], row);
            } else {
                first[1] = ST_MIN(first[1], row);
            }
            d->y[i] = -1.0;
        } else if (as_classes && y != 1.0) {
            st_glm_err_set(&err, ST_ERR_INVALID_PARAM, 2 * row, "%s: row %lld: label %g is "
                           "not a class label (-1, +1, 0 or 1; the file holds regression "
                           "targets)", path, (long long)row, y);
            break;
        }

        for (k = d->indptr[i]; k < d->indptr[i + 1]; k++) {
            uint32_t col = d->indices[k];
            double v;

            if ((uint64_t)col >= h.n_cols || (uint64_t)col + 1 > o.max_index ||
                (k > d->indptr[i] && col <= d->indices[k - 1])) {
                st_glm_err_set(&err, ST_ERR_INVALID_PARAM, 2 * row, "%s: row %lld: column %llu "
                               "%s", path, (long long)row, (unsigned long long)col + 1,
                               (uint64_t)col >= h.n_cols ? "beyond the column count" :
                               (uint64_t)col + 1 > o.max_index ?
                               "exceeds the largest allowed index" : "out of order");
                break;
            }
            if (fsize == 4) {
                float f;

                memcpy(&f, (char*)raw + 4 * k, 4);
                v = f;
            } else {
                memcpy(&v, (char*)raw + 8 * k, 8);
            }
            if (!o.allow_nonfinite && !isfinite(v)) {
                st_glm_err_set(&err, ST_ERR_INVALID_PARAM, 2 * row, "%s: row %lld: non-finite "
                               "value for column %llu (not allowed)", path, (long long)row,
                               (unsigned long long)col + 1);
                break;
            }
            /* as the text reader: a finite value must stay finite in the precision asked */
            if (prec == 32 && isfinite(v) && isinf((float)v)) {
                st_glm_err_set(&err, ST_ERR_INVALID_PARAM, 2 * row, "%s: row %lld: value %g for "
                               "column %llu overflows 32-bit floating point", path,
                               (long long)row, v, (unsigned long long)col + 1);
                break;
            }
        }
        if (!isfinite(y) ||
            (o.label_kind == ST_GLM_LABEL_CLASS && !as_classes && y != 1.0 && y != -1.0) ||
            (o.label_kind == ST_GLM_LABEL_MULTI && !st_glm_data_class_name(y))) {
            st_glm_err_set(&err, ST_ERR_INVALID_PARAM, 2 * row, "%s: row %lld: label %g is "
                           "not %s", path, (long long)row, y,
                           o.label_kind == ST_GLM_LABEL_CLASS ? "-1 or +1" :
                           o.label_kind == ST_GLM_LABEL_MULTI ? "a class label (an integer "
                           "below 2^31 in magnitude)" : "finite");
        }
        if (o.label_kind == ST_GLM_LABEL_MULTI) {
            d->y[i] += 0.0;   /* (-0 is the class 0) */
        }
    }
    /* the first 0 and the first -1 over the ranks (rows past a rank's error are not
     * looked at: a mix there would come after that error) */
    if (as_classes && c.comm != MPI_COMM_NULL) {
        ST_GLM_MPI_CALL_GOTO(MPI_Allreduce(MPI_IN_PLACE, first, 2, MPI_INT64_T, MPI_MIN,
                                       c.comm), err_mpi, status);
    }
    if (first[0] != INT64_MAX && first[1] != INT64_MAX) {
        int64_t row = ST_MAX(first[0], first[1]);

        st_glm_err_set(&err, ST_ERR_INVALID_PARAM, 2 * row + 1, "%s: row %lld: label %s after "
                       "label %s in row %lld: class labels are either -1/+1 or 0/1, not both",
                       path, (long long)row, first[0] > first[1] ? "0" : "-1",
                       first[0] > first[1] ? "-1" : "0",
                       (long long)ST_MIN(first[0], first[1]));
    }
    if (st_glm_err_agree(&c, &err) != ST_OK) {
        goto out;
    }

    /* 5. values in the precision asked for */
    if (prec == (int)h.prec) {
        if (prec == 32) {
            free(d->val32);
            d->val32 = raw;
        } else {
            free(d->val64);
            d->val64 = raw;
        }
        raw = NULL;
    } else if (prec == 32) {
        free(d->val32);
        d->val32 = malloc(ST_MAX((size_t)d->nnz, (size_t)1) * sizeof(float));
        if (d->val32 != NULL) {
            for (k = 0; k < d->nnz; k++) {
                d->val32[k] = (float)((double*)raw)[k];
            }
        }
    } else {
        free(d->val64);
        d->val64 = malloc(ST_MAX((size_t)d->nnz, (size_t)1) * sizeof(double));
        if (d->val64 != NULL) {
            for (k = 0; k < d->nnz; k++) {
                d->val64[k] = ((float*)raw)[k];
            }
        }
    }
    d->source = strdup(path);
    if ((d->val32 == NULL && d->val64 == NULL) || d->source == NULL) {
        st_glm_err_set(&err, ST_ERR_NO_MEMORY, ST_GLM_ERR_KEY_FIRST, "%s: out of memory",
                       path);
    }
    if (st_glm_err_agree(&c, &err) != ST_OK) {
        goto out;
    }
    d->n_rows_global = (int64_t)h.n_rows;
    d->row_offset    = lo;
    d->nnz_global    = (int64_t)h.nnz;
    d->n_cols        = ST_MAX((int64_t)h.n_cols, o.n_features);
    d->label_kind    = o.label_kind;
    d->zero_one      = o.label_kind == ST_GLM_LABEL_CLASS &&
                       ((h.flags & ST_GLM_BIN_ZERO_ONE) || first[0] != INT64_MAX);
    d->format        = ST_GLM_FORMAT_BIN;
    *data_p = d;
    d = NULL;
    goto out;

err_mpi:
    st_glm_err_set(&err, ST_ERR_MPI, ST_GLM_ERR_KEY_FIRST, "%s: MPI error", path);
out:
    free(raw);
    st_glm_data_free(d);
    if (fd >= 0) {
        close(fd);
    }
    if (err.status != ST_OK) {
        st_glm_err_report(&err, msg, msg_len);
    }
    return err.status;
}
