/*
 * Fuzz target: the binary CSR reader (solver/st_glm_data_bin.c).
 *
 * Input: one option byte, then the file.
 *   bits 0-1  precision asked for: the file's, 32, 64, the file's
 *   bit 2     regression labels
 *   bit 3     allow_nonfinite
 *   bit 4     repair: make the header consistent and the checksums right before
 *             reading (see st_fuzz_bin_repair), so that the content checks behind
 *             them are reached; without it the file is read as it is
 *   bit 5     through st_glm_data_load (format detection) rather than read_bin
 *   bits 6-7  max_index: the default (2^32-1), 7, 1000, 2^32-1
 *
 * Serial reads (MPI_COMM_NULL); under mpirun, the replay also reads each file over
 * MPI_COMM_WORLD and compares (st_fuzz_data.h). Checked: an error is one line
 * naming the file (and, after a repair, a row of it) and leaves the result alone; a
 * dataset passes st_glm_data_check and agrees with the options and with the file's
 * own arrays, decoded here independently of the reader (including the values in
 * the precision asked for, finite unless allowed, and never made infinite by the
 * conversion to 32 bits, which the text reader refuses as an overflow).
 */
#include "config.h"

#include "st_fuzz_data.h"

#include <math.h>

#define ST_FUZZ_HEADER 128
#define ST_FUZZ_PHI    0x9e3779b97f4a7c15ULL
#define ST_FUZZ_SALT   0xd1b54a32d192ed03ULL

static const uint64_t st_fuzz_max_index[4] = {0, 7, 1000, UINT32_MAX};

static uint64_t st_fuzz_get(const uint8_t *p, int n)
{
    uint64_t v = 0;
    int i;

    for (i = n - 1; i >= 0; i--) {
        v = (v << 8) | p[i];
    }
    return v;
}

static void st_fuzz_put(uint8_t *p, uint64_t v, int n)
{
    int i;

    for (i = 0; i < n; i++) {
        p[i] = (uint8_t)(v >> (8 * i));
    }
}

/* The format's checksum term (solver/README.md, "Data"): SplitMix64's finalizer of
 * element + (index + 1) * PHI + salt. */
static uint64_t st_fuzz_term(uint64_t e, uint64_t i, uint64_t salt)
{
    uint64_t x = e + (i + 1) * ST_FUZZ_PHI + salt;

    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

static uint64_t st_fuzz_align(uint64_t x)
{
    return (x + 63) / 64 * 64;
}

/*
 * Turn @a in into a file the reader's header checks accept: magic, version 1 (version
 * 2 where the input's byte 22 has bit 0 set on a classification file: the 0/1 flag),
 * sizes kept small (n_rows < 256, nnz < 1024), offsets and size as the format lays
 * them out, the sections filled with the input's remaining bytes (zeros past its end),
 * and every checksum right. What is left to the fuzzer: the sizes, n_cols, the label
 * kind, the 0/1 flag, and the contents of every section. @return the new buffer
 * (free it) and its size in *len_p.
 */
static uint8_t *st_fuzz_bin_repair(const uint8_t *in, size_t in_len, size_t *len_p)
{
    uint8_t hdr[ST_FUZZ_HEADER];
    uint64_t n_rows, nnz, prec, kind, flags, off[4], elem[4], count[4], fsize, sum, i;
    uint8_t *buf;
    size_t rest;
    int s;

    memset(hdr, 0, sizeof(hdr));
    memcpy(hdr, in, in_len < sizeof(hdr) ? in_len : sizeof(hdr));
    n_rows = st_fuzz_get(hdr + 24, 8) % 256;
    nnz    = st_fuzz_get(hdr + 40, 8) % 1024;
    prec   = (st_fuzz_get(hdr + 16, 4) == 32) ? 32 : 64;
    kind   = st_fuzz_get(hdr + 20, 1) & 1;
    flags  = kind == 0 ? (st_fuzz_get(hdr + 22, 1) & 1) : 0;
    off[0] = ST_FUZZ_HEADER;
    off[1] = st_fuzz_align(off[0] + (n_rows + 1) * 8);
    off[2] = st_fuzz_align(off[1] + nnz * 4);
    off[3] = st_fuzz_align(off[2] + nnz * (prec / 8));
    fsize  = off[3] + n_rows * 8;
    buf = calloc(1, fsize);
    if (buf == NULL) {
        return NULL;
    }
    rest = in_len > sizeof(hdr) ? in_len - sizeof(hdr) : 0;
    memcpy(buf + ST_FUZZ_HEADER, in + sizeof(hdr),
           rest < fsize - ST_FUZZ_HEADER ? rest : fsize - ST_FUZZ_HEADER);
    memcpy(buf, "STGLMCSR", 8);
    st_fuzz_put(buf + 8, flags != 0 ? 2 : 1, 4);
    st_fuzz_put(buf + 12, ST_FUZZ_HEADER, 4);
    st_fuzz_put(buf + 16, prec, 4);
    st_fuzz_put(buf + 20, kind, 2);
    st_fuzz_put(buf + 22, flags, 2);
    st_fuzz_put(buf + 24, n_rows, 8);
    st_fuzz_put(buf + 32, st_fuzz_get(hdr + 32, 8) & 0xffffffffULL, 8);
    st_fuzz_put(buf + 40, nnz, 8);
    elem[0]  = 8;
    elem[1]  = 4;
    elem[2]  = prec / 8;
    elem[3]  = 8;
    count[0] = n_rows + 1;
    count[1] = nnz;
    count[2] = nnz;
    count[3] = n_rows;
    for (s = 0; s < 4; s++) {
        uint64_t salt = (uint64_t)(s + 1) * ST_FUZZ_SALT;

        for (i = 0, sum = 0; i < count[s]; i++) {
            sum += st_fuzz_term(st_fuzz_get(buf + off[s] + i * elem[s], (int)elem[s]), i,
                                salt);
        }
        st_fuzz_put(buf + 48 + 8 * s, off[s], 8);
        st_fuzz_put(buf + 88 + 8 * s, sum, 8);
    }
    st_fuzz_put(buf + 80, fsize, 8);
    for (i = 0, sum = 0; i < 15; i++) {
        sum += st_fuzz_term(st_fuzz_get(buf + 8 * i, 8), i, 0);
    }
    st_fuzz_put(buf + 120, sum, 8);
    *len_p = (size_t)fsize;
    return buf;
}

/* The dataset against the file it came from (a valid one: the checks below hold). */
static void st_fuzz_bin_compare(const st_glm_data_t *d, const uint8_t *f, size_t len,
                                const st_glm_data_opts_t *o)
{
    uint64_t n_rows = st_fuzz_get(f + 24, 8), n_cols = st_fuzz_get(f + 32, 8);
    uint64_t nnz = st_fuzz_get(f + 40, 8), prec = st_fuzz_get(f + 16, 4), i;
    uint64_t off_ind = st_fuzz_get(f + 56, 8), off_val = st_fuzz_get(f + 64, 8);
    uint64_t off_lab = st_fuzz_get(f + 72, 8);
    int want = o->prec != 0 ? o->prec : (int)prec;
    /* version 2's 0/1 flag: zero_one for classification; targets 1 and 0 for -1 */
    int zero_one = st_fuzz_get(f + 8, 4) == 2 && (st_fuzz_get(f + 22, 2) & 1);
    /* regression targets read as classes: read as the text's labels, -1/+1 or 0/1 (0
     * becomes -1, and zero_one is set when a 0 is there) */
    int as_classes = st_fuzz_get(f + 20, 2) == ST_GLM_LABEL_REAL &&
                     o->label_kind == ST_GLM_LABEL_CLASS, has_zero = 0;

    ST_FUZZ_CHECK(len == st_fuzz_get(f + 80, 8), "read a file whose size is not the header's");
    ST_FUZZ_CHECK((uint64_t)d->n_rows == n_rows && (uint64_t)d->nnz == nnz &&
                  d->n_rows_global == d->n_rows && d->row_offset == 0,
                  "sizes differ from the header");
    ST_FUZZ_CHECK(d->n_cols == (int64_t)(n_cols > (uint64_t)o->n_features ? n_cols
                                                                      : (uint64_t)o->n_features),
                  "n_cols %lld, header %llu", (long long)d->n_cols, (unsigned long long)n_cols);
    ST_FUZZ_CHECK(d->prec == want, "precision %d, asked for %d", d->prec, want);
    ST_FUZZ_CHECK(d->label_kind == o->label_kind && d->format == ST_GLM_FORMAT_BIN,
                  "label kind or format");
    for (i = 0; i < n_rows && as_classes; i++) {
        uint64_t bits = st_fuzz_get(f + off_lab + 8 * i, 8);
        double y;

        memcpy(&y, &bits, 8);
        has_zero |= (y == 0.0);
    }
    ST_FUZZ_CHECK(d->zero_one == ((zero_one || has_zero) && o->label_kind == ST_GLM_LABEL_CLASS),
                  "zero_one %d, the file's flag %d, a 0 target read as a class %d",
                  d->zero_one, zero_one, has_zero);
    for (i = 0; i <= n_rows; i++) {
        ST_FUZZ_CHECK((uint64_t)d->indptr[i] == st_fuzz_get(f + ST_FUZZ_HEADER + 8 * i, 8),
                      "row pointer %llu differs from the file", (unsigned long long)i);
    }
    for (i = 0; i < nnz; i++) {
        double v, got = d->prec == 32 ? d->val32[i] : d->val64[i];
        uint64_t bits = st_fuzz_get(f + off_val + i * (prec / 8), (int)(prec / 8));

        ST_FUZZ_CHECK(d->indices[i] == st_fuzz_get(f + off_ind + 4 * i, 4),
                      "index %llu differs from the file", (unsigned long long)i);
        ST_FUZZ_CHECK(o->max_index == 0 || d->indices[i] < o->max_index,
                      "index %u above max_index", d->indices[i] + 1);
        if (prec == 32) {
            float fv;
            uint32_t b32 = (uint32_t)bits;

            memcpy(&fv, &b32, 4);
            v = fv;
        } else {
            memcpy(&v, &bits, 8);
        }
        /* a finite value stays finite (the text reader refuses what overflows) */
        ST_FUZZ_CHECK(!isfinite(v) || isfinite(want == 32 ? (double)(float)v : v),
                      "value %llu: %g overflows %d bits, and was read", (unsigned long long)i,
                      v, want);
        if (want == 32) {
            v = (float)v;
        }
        ST_FUZZ_CHECK(isnan(v) ? isnan(got) : memcmp(&v, &got, 8) == 0,
                      "value %llu: %g, the file says %g", (unsigned long long)i, got, v);
        ST_FUZZ_CHECK(o->allow_nonfinite || isfinite(got), "value %llu is %g (not allowed)",
                      (unsigned long long)i, got);
    }
    for (i = 0; i < n_rows; i++) {
        uint64_t bits = st_fuzz_get(f + off_lab + 8 * i, 8);
        double y;

        memcpy(&y, &bits, 8);
        if (zero_one && o->label_kind == ST_GLM_LABEL_REAL && y == -1.0) {
            y = 0.0;
        }
        if (as_classes && y == 0.0) {
            y = -1.0;
        }
        ST_FUZZ_CHECK(!memcmp(&d->y[i], &y, 8), "label %llu differs from the file",
                      (unsigned long long)i);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const int precs[4] = {0, 32, 64, 0};
    static st_glm_data_t sentinel;
    char path[64], msg[ST_GLM_DATA_MSG_LEN], check[ST_GLM_DATA_MSG_LEN];
    st_glm_data_t *d = &sentinel;
    st_glm_data_opts_t o;
    uint8_t *fixed = NULL;
    st_status_t rc;
    unsigned opt;

    if (size < 1) {
        return 0;
    }
    opt = data[0];
    data++;
    size--;
    if (opt & 16) {
        fixed = st_fuzz_bin_repair(data, size, &size);
        if (fixed == NULL) {
            return 0;
        }
        data = fixed;
    }
    if (st_fuzz_file(data, size, path, sizeof(path)) != 0) {
        free(fixed);
        return 0;
    }
    st_glm_data_opts_init(&o);
    o.prec            = precs[opt & 3];
    o.label_kind      = (opt & 4) ? ST_GLM_LABEL_REAL : ST_GLM_LABEL_CLASS;
    o.allow_nonfinite = (opt & 8) != 0;
    o.max_index       = st_fuzz_max_index[(opt >> 6) & 3];
    msg[0] = '\0';
    if (opt & 32) {
        rc = st_glm_data_load(path, &o, MPI_COMM_NULL, msg, sizeof(msg), &d);
    } else {
        rc = st_glm_data_read_bin(path, &o, MPI_COMM_NULL, msg, sizeof(msg), &d);
    }
    st_fuzz_data_mpi((opt & 32) ? st_glm_data_load : st_glm_data_read_bin, path, &o, rc, msg,
                     rc == ST_OK ? d : NULL);
    if (rc != ST_OK) {
        ST_FUZZ_CHECK(d == &sentinel, "the result was set on failure");
        ST_FUZZ_CHECK(st_fuzz_msg_ok(msg, path), "bad message '%s'", msg);
        ST_FUZZ_CHECK(rc == ST_ERR_INVALID_PARAM || rc == ST_ERR_IO || rc == ST_ERR_UNSUPPORTED,
                      "status %d: %s", (int)rc, msg);
        /* "row R: ..." names a row of the file (its header is right after a repair) */
        if ((opt & 16) && strstr(msg, ": row ") != NULL) {
            long long row = 0;

            ST_FUZZ_CHECK(sscanf(strstr(msg, ": row ") + 6, "%lld", &row) == 1 && row >= 1 &&
                          (uint64_t)row <= st_fuzz_get(data + 24, 8),
                          "row %lld of a %llu-row file: %s", row,
                          (unsigned long long)st_fuzz_get(data + 24, 8), msg);
        }
    } else {
        ST_FUZZ_CHECK(st_glm_data_check(d, check, sizeof(check)) == ST_OK, "%s", check);
        if (d->format == ST_GLM_FORMAT_BIN) {
            st_fuzz_bin_compare(d, data, size, &o);
        }
        st_glm_data_free(d);
    }
    free(fixed);
    return 0;
}
