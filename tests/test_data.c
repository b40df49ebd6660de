/*
 * Test of the solver's data layer (solver/st_glm_data*.c).
 *
 * Without arguments the test runs serially: MPI is never initialized and every
 * call gets MPI_COMM_NULL. With --mpi (tests/dataN.npN) it runs under mpirun on
 * MPI_COMM_WORLD and compares every parallel read with a serial one.
 *
 * 1. Numbers: st_glm_data_parse_real against strtod/strtof, bit for bit, on edge
 *    cases, float midpoints and random decimal strings; serially, in a locale with a
 *    decimal comma too, and a file read there.
 * 2. Fixtures: every accepted variant of the text format, read and compared with
 *    rows written out by hand in this file.
 * 3. Errors: each malformed input gives its status and a message naming the file
 *    and the global line, the same on every rank; on long files the error of the
 *    lowest line wins wherever the ranks' byte ranges fall.
 * 4. Splits: random files (long lines, comments, CRLF, no final newline), files
 *    with fewer lines than ranks, a single line, line ends around the split
 *    points: the parallel read, gathered, is the serial read and the rows written.
 * 5. Binary: write and read back at every rank count, the bytes equal those of a
 *    serial write and of a writer written here from the format's description,
 *    precision conversion, 0/1 classes (version 2's flag: zero_one read back, 1 and 0
 *    as regression targets, as from the text; regression targets read as classes as
 *    the text's labels are, 0/1 or -1/+1, not both), and damaged files (bit flips in every
 *    section, the header, truncation, bad magic, version, unknown flags, trailing
 *    bytes) refused by name; ranks reading different headers, or writing rows that
 *    disagree about 0/1, get one error.
 * 6. Helpers: row norms, label statistics, the invariant check.
 *
 * test_data [--mpi] --load FILE [--regression] [--prec P] [--to-bin OUT] loads FILE
 * and prints a summary with a hash of the rows and zero_one (tests/data_gen.sh
 * compares formats with it); --to-bin writes the rows read to OUT in the binary
 * format (the shell tests' converter).
 *
 * Failures are printed on stderr (the MPI harness also fails a job that writes
 * there) and the exit status is 1; a passing run prints one line on stdout.
 */
#include "config.h"

#include "st_glm_data.h"
#include "st_comma_locale.h"

#include <ctype.h>
#include <errno.h>
#include <float.h>
#include <locale.h>
#include <math.h>
#include <mpi.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define T_MAX_REPORTS 40
#define T_MAX_PAIRS   8
#define T_MAX_ROWS    8

static int      t_mpi;
static int      t_rank;
static int      t_size = 1;
static MPI_Comm t_comm = MPI_COMM_NULL;
static char     t_dir[512];
static long     t_nfail;
static long     t_ncheck;

/* ---- checks ---- */

static void t_fail(int line, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void t_fail(int line, const char *fmt, ...)
{
    va_list ap;

    if (t_nfail++ >= T_MAX_REPORTS) {
        return;
    }
    fprintf(stderr, "test_data: rank %d: line %d: FAIL: ", t_rank, line);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n");
}

#define CHECK(_cond, ...) \
    ({ \
        int _ok = !!(_cond); \
        t_ncheck++; \
        if (!_ok) { \
            t_fail(__LINE__, __VA_ARGS__); \
        } \
        _ok; \
    })

static void t_sync(void)
{
    if (t_mpi) {
        MPI_Barrier(MPI_COMM_WORLD);
    }
}

/* ---- deterministic randomness ---- */

static uint64_t t_mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

static uint64_t t_rand(uint64_t *state)
{
    *state += 0x632be59bd9b4e019ULL;
    return t_mix(*state);
}

static int t_rand_int(uint64_t *state, int n)
{
    return (int)(t_rand(state) % (uint64_t)n);
}

/* ---- growing text ---- */

typedef struct {
    char  *p;
    size_t len, cap;
} t_buf_t;

static void t_buf_add(t_buf_t *b, const char *s, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        b->cap = (b->len + n + 1) * 2;
        b->p = realloc(b->p, b->cap);
        if (b->p == NULL) {
            fprintf(stderr, "test_data: out of memory\n");
            exit(1);
        }
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

static void t_buf_printf(t_buf_t *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void t_buf_printf(t_buf_t *b, const char *fmt, ...)
{
    char tmp[512];
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
    va_end(ap);
    t_buf_add(b, tmp, (size_t)n);
}

/* ---- files: rank 0 writes, everyone reads after the barrier ---- */

/* "<temp dir>/<name>", valid until the end of the test */
static char **t_paths;
static size_t t_npaths;

static const char *t_path(const char *name)
{
    size_t len = strlen(t_dir) + strlen(name) + 2;
    char *p = malloc(len);

    t_paths = realloc(t_paths, (t_npaths + 1) * sizeof(*t_paths));
    if (p == NULL || t_paths == NULL) {
        fprintf(stderr, "test_data: out of memory\n");
        exit(1);
    }
    snprintf(p, len, "%s/%s", t_dir, name);
    t_paths[t_npaths++] = p;
    return p;
}

static const char *t_write(const char *name, const void *data, size_t len)
{
    const char *path = t_path(name);
    FILE *f;

    t_sync();   /* nobody is still reading an older file of that name */
    if (t_rank == 0) {
        f = fopen(path, "wb");
        if (f == NULL || (len > 0 && fwrite(data, 1, len, f) != len) || fclose(f) != 0) {
            t_fail(__LINE__, "cannot write %s: %s", path, strerror(errno));
        }
    }
    t_sync();
    return path;
}

static void *t_slurp(const char *path, size_t *len_p)
{
    FILE *f = fopen(path, "rb");
    char *p = NULL;
    long n;

    *len_p = 0;
    if (f == NULL) {
        return NULL;
    }
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    fseek(f, 0, SEEK_SET);
    p = malloc((size_t)n + 1);
    if (p != NULL && fread(p, 1, (size_t)n, f) != (size_t)n) {
        free(p);
        p = NULL;
    }
    fclose(f);
    *len_p = (size_t)n;
    return p;
}

/* ---- a whole dataset, for comparisons ---- */

typedef struct {
    int64_t   n_rows, nnz, n_cols;
    int64_t  *indptr;
    uint32_t *idx;
    double   *val;     /* float values widened (exactly) */
    double   *y;
} t_full_t;

static void t_full_free(t_full_t *f)
{
    free(f->indptr);
    free(f->idx);
    free(f->val);
    free(f->y);
    memset(f, 0, sizeof(*f));
}

static void t_full_alloc(t_full_t *f, int64_t n_rows, int64_t nnz)
{
    f->n_rows = n_rows;
    f->nnz    = nnz;
    f->indptr = calloc((size_t)n_rows + 1, sizeof(*f->indptr));
    f->idx    = calloc((size_t)nnz + 1, sizeof(*f->idx));
    f->val    = calloc((size_t)nnz + 1, sizeof(*f->val));
    f->y      = calloc((size_t)n_rows + 1, sizeof(*f->y));
}

/* Every rank gets all rows of @a d, in rank order (collective in MPI mode). */
static void t_gather(const st_glm_data_t *d, MPI_Comm comm, t_full_t *f)
{
    int64_t k, r, tot_rows = d->n_rows, tot_nnz = d->nnz;
    int size = 1, *rc = NULL, *rd = NULL, *nc = NULL, *nd = NULL;
    int64_t *len = malloc(((size_t)d->n_rows + 1) * sizeof(*len));
    double *val = malloc(((size_t)d->nnz + 1) * sizeof(*val));
    int64_t *all_len;

    for (k = 0; k < d->n_rows; k++) {
        len[k] = d->indptr[k + 1] - d->indptr[k];
    }
    for (k = 0; k < d->nnz; k++) {
        val[k] = d->prec == 32 ? (double)d->val32[k] : d->val64[k];
    }
    if (comm != MPI_COMM_NULL) {
        int mine[2] = {(int)d->n_rows, (int)d->nnz};
        int *both;

        MPI_Comm_size(comm, &size);
        both = malloc(2 * (size_t)size * sizeof(*both));
        rc = calloc((size_t)size, sizeof(*rc));
        rd = calloc((size_t)size, sizeof(*rd));
        nc = calloc((size_t)size, sizeof(*nc));
        nd = calloc((size_t)size, sizeof(*nd));
        MPI_Allgather(mine, 2, MPI_INT, both, 2, MPI_INT, comm);
        tot_rows = tot_nnz = 0;
        for (r = 0; r < size; r++) {
            rc[r] = both[2 * r];
            rd[r] = (int)tot_rows;
            nc[r] = both[2 * r + 1];
            nd[r] = (int)tot_nnz;
            tot_rows += rc[r];
            tot_nnz += nc[r];
        }
        free(both);
    }
    t_full_alloc(f, tot_rows, tot_nnz);
    f->n_cols = d->n_cols;
    all_len = calloc((size_t)tot_rows + 1, sizeof(*all_len));
    if (comm != MPI_COMM_NULL) {
        MPI_Allgatherv(len, (int)d->n_rows, MPI_INT64_T, all_len, rc, rd, MPI_INT64_T, comm);
        MPI_Allgatherv(d->y, (int)d->n_rows, MPI_DOUBLE, f->y, rc, rd, MPI_DOUBLE, comm);
        MPI_Allgatherv(d->indices, (int)d->nnz, MPI_UINT32_T, f->idx, nc, nd, MPI_UINT32_T,
                       comm);
        MPI_Allgatherv(val, (int)d->nnz, MPI_DOUBLE, f->val, nc, nd, MPI_DOUBLE, comm);
    } else {
        memcpy(all_len, len, (size_t)d->n_rows * sizeof(*len));
        memcpy(f->y, d->y, (size_t)d->n_rows * sizeof(*f->y));
        memcpy(f->idx, d->indices, (size_t)d->nnz * sizeof(*f->idx));
        memcpy(f->val, val, (size_t)d->nnz * sizeof(*val));
    }
    for (k = 0; k < tot_rows; k++) {
        f->indptr[k + 1] = f->indptr[k] + all_len[k];
    }
    free(all_len);
    free(len);
    free(val);
    free(rc);
    free(rd);
    free(nc);
    free(nd);
}

/* 1 when @a a and @a b hold the same rows, bit for bit; reports the first difference. */
static int t_full_equal(const t_full_t *a, const t_full_t *b, const char *what, int line)
{
    int64_t i, k;

    t_ncheck++;
    if (a->n_rows != b->n_rows || a->nnz != b->nnz || a->n_cols != b->n_cols) {
        t_fail(line, "%s: %lld rows %lld nnz %lld cols, expected %lld rows %lld nnz %lld "
               "cols", what, (long long)a->n_rows, (long long)a->nnz, (long long)a->n_cols,
               (long long)b->n_rows, (long long)b->nnz, (long long)b->n_cols);
        return 0;
    }
    for (i = 0; i < a->n_rows; i++) {
        if (a->indptr[i + 1] != b->indptr[i + 1] ||
            memcmp(&a->y[i], &b->y[i], sizeof(double)) != 0) {
            t_fail(line, "%s: row %lld: %lld entries label %g, expected %lld entries label %g",
                   what, (long long)i, (long long)(a->indptr[i + 1] - a->indptr[i]), a->y[i],
                   (long long)(b->indptr[i + 1] - b->indptr[i]), b->y[i]);
            return 0;
        }
        for (k = a->indptr[i]; k < a->indptr[i + 1]; k++) {
            if (a->idx[k] != b->idx[k] || memcmp(&a->val[k], &b->val[k], sizeof(double))) {
                t_fail(line, "%s: row %lld: entry %u:%.17g, expected %u:%.17g", what,
                       (long long)i, a->idx[k], a->val[k], b->idx[k], b->val[k]);
                return 0;
            }
        }
    }
    return 1;
}

/* The ranks' blocks tile [0, n_rows_global) in rank order; local invariants hold. */
static void t_check_blocks(const st_glm_data_t *d, const char *what)
{
    char msg[ST_GLM_DATA_MSG_LEN];
    int64_t mine[3] = {d->row_offset, d->n_rows, d->nnz}, *all, next = 0, nnz = 0;
    int r;

    CHECK(st_glm_data_check(d, msg, sizeof(msg)) == ST_OK, "%s: %s", what, msg);
    all = malloc(3 * (size_t)t_size * sizeof(*all));
    if (t_mpi) {
        MPI_Allgather(mine, 3, MPI_INT64_T, all, 3, MPI_INT64_T, MPI_COMM_WORLD);
    } else {
        memcpy(all, mine, sizeof(mine));
    }
    for (r = 0; r < t_size; r++) {
        CHECK(all[3 * r] == next, "%s: rank %d starts at row %lld, expected %lld", what, r,
              (long long)all[3 * r], (long long)next);
        next += all[3 * r + 1];
        nnz  += all[3 * r + 2];
    }
    CHECK(next == d->n_rows_global && nnz == d->nnz_global, "%s: blocks hold %lld rows %lld "
          "nnz; n_rows_global %lld, nnz_global %lld", what, (long long)next, (long long)nnz,
          (long long)d->n_rows_global, (long long)d->nnz_global);
    free(all);
}

/* Read @a path with @a opts on t_comm; on success check the blocks, gather all rows. */
static st_status_t t_read(const char *path, const st_glm_data_opts_t *opts, t_full_t *f,
                          char *msg, size_t msg_len)
{
    st_glm_data_t *d = NULL;
    st_status_t s;

    msg[0] = '\0';
    s = st_glm_data_load(path, opts, t_comm, msg, msg_len, &d);
    if (s == ST_OK) {
        t_check_blocks(d, path);
        t_gather(d, t_comm, f);
        st_glm_data_free(d);
    }
    return s;
}

/* Serial read on this rank alone. */
static st_status_t t_read_serial(const char *path, const st_glm_data_opts_t *opts,
                                 t_full_t *f, char *msg, size_t msg_len)
{
    st_glm_data_t *d = NULL;
    st_status_t s;

    msg[0] = '\0';
    s = st_glm_data_load(path, opts, MPI_COMM_NULL, msg, msg_len, &d);
    if (s == ST_OK) {
        CHECK(d->row_offset == 0 && d->n_rows == d->n_rows_global, "%s: serial read has "
              "offset %lld, %lld of %lld rows", path, (long long)d->row_offset,
              (long long)d->n_rows, (long long)d->n_rows_global);
        t_gather(d, MPI_COMM_NULL, f);
        st_glm_data_free(d);
    }
    return s;
}

/* Same string and status on every rank. */
static void t_check_agree(const char *msg, st_status_t s, const char *what)
{
    char root[ST_GLM_DATA_MSG_LEN];
    int st = s, st0 = s;

    if (!t_mpi) {
        return;
    }
    snprintf(root, sizeof(root), "%s", msg);
    MPI_Bcast(root, (int)sizeof(root), MPI_CHAR, 0, MPI_COMM_WORLD);
    MPI_Bcast(&st0, 1, MPI_INT, 0, MPI_COMM_WORLD);
    CHECK(st == st0 && !strcmp(root, msg), "%s: rank %d got %d '%s', rank 0 %d '%s'", what,
          t_rank, st, msg, st0, root);
}

/* ================= 1. numbers ================= */

static void t_number(const char *s, int prec)
{
    st_glm_num_t rc;
    double got = 12345.0, want;
    char *end;

    errno = 0;
    want = prec == 32 ? (double)strtof(s, &end) : strtod(s, &end);
    rc = st_glm_data_parse_real(s, strlen(s), prec, &got);
    if (*s == '\0' || *end != '\0' || (s[0] == '0' && (s[1] | 0x20) == 'x') ||
        isspace((unsigned char)s[0]) || strchr(s, '(') != NULL) {
        CHECK(rc == ST_GLM_NUM_SYNTAX, "'%s' (%d bits): %d, expected a syntax error", s, prec,
              (int)rc);
    } else if (isnan(want)) {
        CHECK(rc == ST_GLM_NUM_NONFINITE && isnan(got), "'%s' (%d bits): %d %g, expected nan",
              s, prec, (int)rc, got);
    } else if (isinf(want)) {
        int word = strchr(s, 'n') != NULL || strchr(s, 'N') != NULL;

        CHECK(rc == (word ? ST_GLM_NUM_NONFINITE : ST_GLM_NUM_RANGE),
              "'%s' (%d bits): %d, expected %s", s, prec, (int)rc, word ? "inf" : "overflow");
    } else {
        CHECK(rc == ST_GLM_NUM_OK && memcmp(&got, &want, sizeof(got)) == 0,
              "'%s' (%d bits): %d %.17g, strto%s gives %.17g", s, prec, (int)rc, got,
              prec == 32 ? "f" : "d", want);
    }
}

static void t_numbers(void)
{
    static const char *const cases[] = {
        "0", "-0", "+0", "00", "0.0", "-0.0e5", "1", "-1", "+1", "1.5", ".5", "5.", "-.5",
        "+.5e1", "1e0", "1E+2", "1e-2", "12345678", "0.1", "0.2", "0.3", "2.302585",
        "0.693147", "1e22", "1e23", "9007199254740992", "9007199254740993",
        "9007199254740995", "18446744073709551615", "18446744073709551616",
        "1234567890123456789", "12345678901234567890", "0.000001", "123.456e-10",
        "1.7976931348623157e308", "1.7976931348623158e308", "1.7976931348623159e308",
        "2.2250738585072014e-308", "2.2250738585072011e-308", "4.9e-324", "2.4703282292062328e-324",
        "2.4703282292062327e-324", "1e-400", "1e400", "-1e400", "3.4028234663852886e38",
        "3.4028235e38", "3.40282356e38", "3.4028236e38", "1.17549435e-38", "1.1754942e-38",
        "1e-45", "1.4e-45", "7e-46", "7.1e-46", "1e-50", "16777216", "16777217",
        "16777218", "16777219", "16777217.000000001", "16777216.999999999", "33554435",
        "0.1000000000000000055511151231257827021181583404541015625",
        "123456789012345678901234567890", "1e", "1e+", "e5", ".", "+", "-", "", "1x",
        "1.2.3", "--1", "+-1", "1e5.5", " 1", "1 ", "0x10", "1,5", "nan", "NaN", "-nan",
        "inf", "-inf", "+Infinity", "INF", "infinit", "nanx", "in", "1e99999999999999999",
        "1e-99999999999999999", "0e99999999999999999", "nan(1)",
    };
    char buf[128];
    uint64_t st = 42;
    size_t i;
    int n, prec;

    for (i = 0; i < ST_ARRAY_SIZE(cases); i++) {
        t_number(cases[i], 64);
        t_number(cases[i], 32);
    }
    /* a 400-digit mantissa */
    memset(buf, '7', 100);
    buf[100] = '\0';
    t_number(buf, 64);
    t_number(buf, 32);
    /* random decimals: digits, point, exponent */
    for (n = 0; n < 100000; n++) {
        int nd = 1 + t_rand_int(&st, 22), pt = t_rand_int(&st, nd + 2), j, len = 0;

        if (t_rand_int(&st, 4) == 0) {
            buf[len++] = t_rand_int(&st, 2) ? '-' : '+';
        }
        for (j = 0; j < nd; j++) {
            if (j == pt) {
                buf[len++] = '.';
            }
            buf[len++] = (char)('0' + t_rand_int(&st, 10));
        }
        if (t_rand_int(&st, 3) == 0) {
            len += snprintf(buf + len, sizeof(buf) - (size_t)len, "e%d",
                            t_rand_int(&st, 90) - 45);
        }
        buf[len] = '\0';
        prec = t_rand_int(&st, 2) ? 32 : 64;
        t_number(buf, prec);
    }
    /* near float midpoints: 17 significant digits, and the exact midpoint */
    for (n = 0; n < 20000; n++) {
        float f = ldexpf(1.0f + (float)t_rand_int(&st, 1 << 23) * 0x1p-23f,
                         t_rand_int(&st, 200) - 100);
        double mid = ((double)f + (double)nextafterf(f, INFINITY)) / 2.0;

        /* 16 digits: often a decimal that is not the midpoint but whose nearest
         * double is, so rounding that double to float would round twice */
        snprintf(buf, sizeof(buf), "%.15e", mid);
        t_number(buf, 32);
        snprintf(buf, sizeof(buf), "%.16e", mid);
        t_number(buf, 32);
        snprintf(buf, sizeof(buf), "%.17g", nextafter(mid, (n & 1) ? 0.0 : INFINITY));
        t_number(buf, 32);
        snprintf(buf, sizeof(buf), "%.60g", mid);
        t_number(buf, 32);
    }
}

/*
 * Numbers in a program whose locale has a decimal comma (setlocale(LC_ALL,
 * "de_DE.UTF-8")): those the parser hands to strtod (more than 19 significant digits,
 * exponents beyond 22) are read as in the C locale, from a file too (before: strtod in
 * the program's locale stopped at the point, "1.5e-30" read as 1 and
 * "0.12345678901234567890123" as 0, and the read succeeded). The locale is made by
 * localedef in the temporary directory (LOCPATH); where that fails, an installed
 * de_DE.UTF-8 or fr_FR.UTF-8; without any, the check is skipped, saying so.
 */
static void t_locale(void)
{
    static const char *const cases[] = {
        "1.5e-30", "-2.5e-30", "0.12345678901234567890123", "1e+25", "3.4028235e38",
        "123456789012345678901234567890.5", "1.17549435e-38", "4.9e-324",
    };
    static const char text[] = "1.5e-30 1:1.5e-30 2:0.12345678901234567890123\n"
                               "-2.5e-30 1:-2.5e-30 2:1e+25\n";
    static const int file_case[2][2] = {{0, 2}, {1, 3}};   /* (the rows' values) */
    double want[ST_ARRAY_SIZE(cases)][2], got, v;
    char msg[ST_GLM_DATA_MSG_LEN];
    const char *path, *name;
    st_glm_data_opts_t o;
    st_glm_data_t *d;
    st_glm_num_t rc;
    st_status_t s;
    size_t i;
    int k, r, j;

    for (i = 0; i < ST_ARRAY_SIZE(cases); i++) {   /* (in the C locale, still) */
        want[i][0] = strtod(cases[i], NULL);
        want[i][1] = (double)strtof(cases[i], NULL);
    }
    name = st_test_comma_locale(t_dir);
    if (name == NULL) {
        printf("test_data: no locale with a decimal comma (localedef failed, no de_DE.UTF-8 "
               "or fr_FR.UTF-8): the numbers in such a locale not checked\n");
        return;
    }
    for (i = 0; i < ST_ARRAY_SIZE(cases); i++) {
        for (k = 0; k < 2; k++) {
            got = 12345.0;
            rc  = st_glm_data_parse_real(cases[i], strlen(cases[i]), k ? 32 : 64, &got);
            CHECK(rc == ST_GLM_NUM_OK && memcmp(&got, &want[i][k], sizeof(got)) == 0,
                  "'%s' (%d bits) in locale %s: %d %.17g, the C locale's %.17g", cases[i],
                  k ? 32 : 64, name, (int)rc, got, want[i][k]);
        }
    }
    path = t_write("comma.svm", text, sizeof(text) - 1);
    for (k = 0; k < 2; k++) {
        st_glm_data_opts_init(&o);
        o.label_kind = ST_GLM_LABEL_REAL;
        o.prec       = k ? 32 : 64;
        d            = NULL;
        s = st_glm_data_load(path, &o, MPI_COMM_NULL, msg, sizeof(msg), &d);
        if (!CHECK(s == ST_OK && d->n_rows == 2 && d->nnz == 4, "%s (%d bits) in locale %s: "
                   "status %d, '%s'", path, o.prec, name, (int)s, msg)) {
            st_glm_data_free(d);
            continue;
        }
        for (r = 0; r < 2; r++) {
            CHECK(d->y[r] == want[r][0], "%s in locale %s: row %d's label %.17g, want %.17g",
                  path, name, r + 1, d->y[r], want[r][0]);
            for (j = 0; j < 2; j++) {
                v = k ? (double)d->val32[2 * r + j] : d->val64[2 * r + j];
                CHECK(v == want[file_case[r][j]][k], "%s (%d bits) in locale %s: row %d, "
                      "value %d: %.17g, want %.17g", path, o.prec, name, r + 1, j + 1, v,
                      want[file_case[r][j]][k]);
            }
        }
        st_glm_data_free(d);
    }
    setlocale(LC_NUMERIC, "C");
}

/* ================= 2. fixtures ================= */

typedef struct {
    double   y;
    int      n;
    uint32_t col[T_MAX_PAIRS];   /* 1-based, as in the file */
    double   val[T_MAX_PAIRS];
} t_row_t;

typedef struct {
    const char *name;
    const char *text;
    int         regression;
    int         prec;
    int         allow_nonfinite;
    int64_t     n_features;
    int64_t     n_cols;
    int         n_rows;
    t_row_t     rows[T_MAX_ROWS];
} t_fixture_t;

static const t_fixture_t t_fixtures_tab[] = {
    {"basic", "+1 1:2 3:4.5\n-1 2:-1e3 7:0.25\n", 0, 0, 0, 0, 7, 2,
     {{1, 2, {1, 3}, {2.0, 4.5}}, {-1, 2, {2, 7}, {-1000.0, 0.25}}}},
    {"crlf", "+1 1:1\r\n-1 2:2\r\n\r\n\r", 0, 0, 0, 0, 2, 2,
     {{1, 1, {1}, {1.0}}, {-1, 1, {2}, {2.0}}}},
    {"comments", "# header\n\n+1 1:1 # trailing\n   \n\t# indented\n-1 3:3#tight\n#x 1:1\n",
     0, 0, 0, 0, 3, 2, {{1, 1, {1}, {1.0}}, {-1, 1, {3}, {3.0}}}},
    {"no-final-newline", "+1 1:1\n-1 2:2", 0, 0, 0, 0, 2, 2,
     {{1, 1, {1}, {1.0}}, {-1, 1, {2}, {2.0}}}},
    {"crlf-no-final-newline", "+1 1:1\r\n-1 2:2\r", 0, 0, 0, 0, 2, 2,
     {{1, 1, {1}, {1.0}}, {-1, 1, {2}, {2.0}}}},
    {"comment-last", "+1 1:1\r\n# end", 0, 0, 0, 0, 1, 1, {{1, 1, {1}, {1.0}}}},
    {"labels-01", "1 1:1\n0 2:2\n1.0 3:3\n0.0 4:4\n+0 5:5\n", 0, 0, 0, 0, 5, 5,
     {{1, 1, {1}, {1.0}}, {-1, 1, {2}, {2.0}}, {1, 1, {3}, {3.0}}, {-1, 1, {4}, {4.0}},
      {-1, 1, {5}, {5.0}}}},
    {"labels-pm1", "-1.0 1:1\n+1.00 2:2\n-1e0 3:3\n", 0, 0, 0, 0, 3, 3,
     {{-1, 1, {1}, {1.0}}, {1, 1, {2}, {2.0}}, {-1, 1, {3}, {3.0}}}},
    {"regression", "2.5 1:1\n-0.125 2:2\n1e-3 3:3\n0 4:4\n7 5:5\n", 1, 0, 0, 0, 5, 5,
     {{2.5, 1, {1}, {1.0}}, {-0.125, 1, {2}, {2.0}}, {1e-3, 1, {3}, {3.0}},
      {0.0, 1, {4}, {4.0}}, {7.0, 1, {5}, {5.0}}}},
    {"label-only-and-tabs", "+1\n-1\t1:5\t2:6\n+1 \n  +1 4:1\n", 0, 0, 0, 0, 4, 4,
     {{1, 0, {0}, {0}}, {-1, 2, {1, 2}, {5.0, 6.0}}, {1, 0, {0}, {0}}, {1, 1, {4}, {1.0}}}},
    {"n-features-larger", "+1 1:1\n-1 3:1\n", 0, 0, 0, 10, 10, 2,
     {{1, 1, {1}, {1.0}}, {-1, 1, {3}, {1.0}}}},
    {"n-features-smaller", "+1 1:1\n-1 30:1\n", 0, 0, 0, 10, 30, 2,
     {{1, 1, {1}, {1.0}}, {-1, 1, {30}, {1.0}}}},
    {"prec32", "+1 1:0.1 2:3.25 3:16777217 4:1e-40\n", 0, 32, 0, 0, 4, 1,
     {{1, 4, {1, 2, 3, 4}, {(double)0.1f, 3.25, 16777216.0, (double)1e-40f}}}},
    {"prec64", "+1 1:0.1 2:3.25 3:16777217 4:1e-40\n", 0, 64, 0, 0, 4, 1,
     {{1, 4, {1, 2, 3, 4}, {0.1, 3.25, 16777217.0, 1e-40}}}},
    {"max-index", "+1 4294967295:1\n", 0, 0, 0, 0, 4294967295LL, 1,
     {{1, 1, {4294967295U}, {1.0}}}},
    {"explicit-zeros", "+1 1:0 2:-0 3:0e10\n", 0, 0, 0, 0, 3, 1,
     {{1, 3, {1, 2, 3}, {0.0, -0.0, 0.0}}}},
    {"nonfinite-allowed", "+1 1:nan 2:inf 3:-Infinity 4:1\n", 0, 0, 1, 0, 4, 1,
     {{1, 4, {1, 2, 3, 4}, {NAN, INFINITY, -INFINITY, 1.0}}}},
    {"number-forms", "-1 1:1E2 2:.5 3:5. 4:+3 5:-2.5e-1 007:7\n", 0, 0, 0, 0, 7, 1,
     {{-1, 6, {1, 2, 3, 4, 5, 7}, {100.0, 0.5, 5.0, 3.0, -0.25, 7.0}}}},
    {"single-line", "-1 5:1 9:2", 0, 0, 0, 0, 9, 1, {{-1, 2, {5, 9}, {1.0, 2.0}}}},
};

static void t_fixture_expect(const t_fixture_t *fx, t_full_t *f)
{
    int64_t nnz = 0;
    int i, k;

    for (i = 0; i < fx->n_rows; i++) {
        nnz += fx->rows[i].n;
    }
    t_full_alloc(f, fx->n_rows, nnz);
    f->n_cols = fx->n_cols;
    for (i = 0, nnz = 0; i < fx->n_rows; i++) {
        f->y[i] = fx->rows[i].y;
        for (k = 0; k < fx->rows[i].n; k++, nnz++) {
            f->idx[nnz] = fx->rows[i].col[k] - 1;
            f->val[nnz] = fx->prec == 32 ? (double)(float)fx->rows[i].val[k]
                                         : fx->rows[i].val[k];
        }
        f->indptr[i + 1] = nnz;
    }
}

static void t_fixtures(void)
{
    char msg[ST_GLM_DATA_MSG_LEN], name[128];
    st_glm_data_opts_t o;
    t_full_t got, want, ser;
    size_t i;

    for (i = 0; i < ST_ARRAY_SIZE(t_fixtures_tab); i++) {
        const t_fixture_t *fx = &t_fixtures_tab[i];
        const char *path;
        st_status_t s;

        snprintf(name, sizeof(name), "fx-%s.svm", fx->name);
        path = t_write(name, fx->text, strlen(fx->text));
        st_glm_data_opts_init(&o);
        o.label_kind      = fx->regression ? ST_GLM_LABEL_REAL : ST_GLM_LABEL_CLASS;
        o.prec            = fx->prec;
        o.allow_nonfinite = fx->allow_nonfinite;
        o.n_features      = fx->n_features;
        t_fixture_expect(fx, &want);
        memset(&got, 0, sizeof(got));
        s = t_read(path, &o, &got, msg, sizeof(msg));
        if (CHECK(s == ST_OK, "fixture %s: %d %s", fx->name, s, msg)) {
            t_full_equal(&got, &want, fx->name, __LINE__);
        }
        if (t_mpi) {
            memset(&ser, 0, sizeof(ser));
            s = t_read_serial(path, &o, &ser, msg, sizeof(msg));
            if (CHECK(s == ST_OK, "fixture %s serially: %s", fx->name, msg)) {
                t_full_equal(&ser, &want, fx->name, __LINE__);
            }
            t_full_free(&ser);
        }
        t_full_free(&got);
        t_full_free(&want);
    }
}

/* ================= 3. errors ================= */

typedef struct {
    const char *text;
    size_t      len;          /* 0: strlen(text) */
    int         regression;
    int         prec;
    uint64_t    max_index;
    int         line;         /* 0: the message names the file only */
    st_status_t status;
    const char *expect;       /* substring of the message */
} t_err_case_t;

static const t_err_case_t t_err_cases[] = {
    {"+1 1:1\n-1 0:1\n", 0, 0, 0, 0, 2, ST_ERR_INVALID_PARAM, "index 0 (indices are 1-based)"},
    {"+1 3:1 2:1\n", 0, 0, 0, 0, 1, ST_ERR_INVALID_PARAM, "index 2 after index 3"},
    {"+1 3:1 3:2\n", 0, 0, 0, 0, 1, ST_ERR_INVALID_PARAM, "duplicate index 3"},
    {"+1 1:abc\n", 0, 0, 0, 0, 1, ST_ERR_INVALID_PARAM, "bad value 'abc' for index 1"},
    {"+1 1:1 2:1.2.3\n", 0, 0, 0, 0, 1, ST_ERR_INVALID_PARAM, "bad value '1.2.3' for index 2"},
    {"+1 1:0x10\n", 0, 0, 0, 0, 1, ST_ERR_INVALID_PARAM, "bad value '0x10'"},
    {"+1 1:1::2\n", 0, 0, 0, 0, 1, ST_ERR_INVALID_PARAM, "bad value '1::2' for index 1"},
    {"+1 1:1e999\n", 0, 0, 0, 0, 1, ST_ERR_INVALID_PARAM, "'1e999' for index 1 overflows 64-bit"},
    {"+1 1:1e39\n", 0, 0, 32, 0, 1, ST_ERR_INVALID_PARAM, "'1e39' for index 1 overflows 32-bit"},
    {"+1 4294967296:1\n", 0, 0, 0, 0, 1, ST_ERR_INVALID_PARAM,
     "index 4294967296 exceeds the largest allowed index 4294967295"},
    {"+1 99999999999999999999999:1\n", 0, 0, 0, 0, 1, ST_ERR_INVALID_PARAM,
     "exceeds the largest allowed index 4294967295"},
    {"+1 100:1\n+1 101:1\n", 0, 0, 0, 100, 2, ST_ERR_INVALID_PARAM,
     "index 101 exceeds the largest allowed index 100"},
    {"+1 1:nan\n", 0, 0, 0, 0, 1, ST_ERR_INVALID_PARAM, "non-finite value 'nan' for index 1"},
    {"+1 1:1 2:-inf\n", 0, 0, 0, 0, 1, ST_ERR_INVALID_PARAM, "non-finite value '-inf'"},
    {"2 1:1\n", 0, 0, 0, 0, 1, ST_ERR_INVALID_PARAM, "label '2' is not a class label"},
    {"+1 1:1\n0.5 1:1\n", 0, 0, 0, 0, 2, ST_ERR_INVALID_PARAM, "label '0.5' is not a class"},
    {"abc 1:1\n", 0, 0, 0, 0, 1, ST_ERR_INVALID_PARAM, "bad label 'abc'"},
    {"1e999 1:1\n", 0, 1, 0, 0, 1, ST_ERR_INVALID_PARAM, "label '1e999' out of range"},
    {"nan 1:1\n", 0, 1, 0, 0, 1, ST_ERR_INVALID_PARAM, "non-finite label 'nan'"},
    {"+1 3:\n", 0, 0, 0, 0, 1, ST_ERR_INVALID_PARAM, "truncated pair '3:' (no value)"},
    {"+1 3:", 0, 0, 0, 0, 1, ST_ERR_INVALID_PARAM, "truncated pair '3:' (no value)"},
    {"+1 3: 4:1\n", 0, 0, 0, 0, 1, ST_ERR_INVALID_PARAM, "truncated pair '3:' (no value)"},
    {"+1 :4\n", 0, 0, 0, 0, 1, ST_ERR_INVALID_PARAM, "truncated pair ':4' (no index)"},
    {"+1 3\n", 0, 0, 0, 0, 1, ST_ERR_INVALID_PARAM, "expected index:value, got '3'"},
    {"+1 1:1 junk\n", 0, 0, 0, 0, 1, ST_ERR_INVALID_PARAM, "expected index:value, got 'junk'"},
    {"+1 a:1\n", 0, 0, 0, 0, 1, ST_ERR_INVALID_PARAM, "bad index in pair 'a:1'"},
    {"+1 -3:1\n", 0, 0, 0, 0, 1, ST_ERR_INVALID_PARAM, "bad index in pair '-3:1'"},
    {"+1 3a:1\n", 0, 0, 0, 0, 1, ST_ERR_INVALID_PARAM, "bad index in pair '3a:1'"},
    {"+1 qid:3 1:1\n", 0, 0, 0, 0, 1, ST_ERR_INVALID_PARAM,
     "'qid:3': qid tokens (ranking data) are not supported"},
    {"1:1 2:2\n", 0, 0, 0, 0, 1, ST_ERR_INVALID_PARAM,
     "missing label (the line starts with '1:1')"},
    {"+1 1:1\r-1 2:2\n", 0, 0, 0, 0, 1, ST_ERR_INVALID_PARAM, "stray carriage return"},
    {"+1 1:1\n\r-1 2:2\n", 0, 0, 0, 0, 2, ST_ERR_INVALID_PARAM, "stray carriage return"},
    {"+1 1:1\n+1 1:1\0\n", 14, 0, 0, 0, 2, ST_ERR_INVALID_PARAM, "bad value '1?' for index 1"},
    {"", 0, 0, 0, 0, 0, ST_ERR_INVALID_PARAM, "empty file"},
    {"# only a comment\n\n\r\n", 0, 0, 0, 0, 0, ST_ERR_INVALID_PARAM, "no examples"},
    {"1 1:1\n0 1:1\n-1 1:1\n", 0, 0, 0, 0, 3, ST_ERR_INVALID_PARAM,
     "label -1 after label 0 on line 2"},
    {"-1 1:1\n1 1:1\n0 1:1\n", 0, 0, 0, 0, 3, ST_ERR_INVALID_PARAM,
     "label 0 after label -1 on line 1"},
};

/* Check one failed read: status, "path:line: " prefix, substring, same everywhere. */
static void t_expect_error(const char *path, st_status_t s, const char *msg, st_status_t want,
                           int64_t line, const char *expect, const char *what)
{
    char prefix[ST_GLM_DATA_MSG_LEN];

    if (line > 0) {
        snprintf(prefix, sizeof(prefix), "%s:%lld: ", path, (long long)line);
    } else {
        snprintf(prefix, sizeof(prefix), "%s: ", path);
    }
    CHECK(s == want, "%s: status %d, expected %d ('%s')", what, s, want, msg);
    CHECK(!strncmp(msg, prefix, strlen(prefix)) && strstr(msg, expect) != NULL,
          "%s: message '%s', expected '%s...%s'", what, msg, prefix, expect);
    t_check_agree(msg, s, what);
}

static void t_error_case(const char *path, const st_glm_data_opts_t *o, st_status_t want,
                         int64_t line, const char *expect, const char *what)
{
    char msg[ST_GLM_DATA_MSG_LEN];
    st_glm_data_t *d = (st_glm_data_t*)&msg;   /* must stay untouched */
    st_status_t s;

    msg[0] = '\0';
    s = st_glm_data_load(path, o, t_comm, msg, sizeof(msg), &d);
    CHECK(d == (st_glm_data_t*)&msg, "%s: result set on failure", what);
    t_expect_error(path, s, msg, want, line, expect, what);
}

/* A long file of valid lines (varied lengths, comments, CRLF) with some replaced. */
static const char *t_long_file(const char *name, int n_lines, const int *bad_line,
                               const char *const *bad_text, int n_bad)
{
    t_buf_t b = {NULL, 0, 0};
    uint64_t st = 7;
    const char *path;
    int l, j, k;

    for (l = 1; l <= n_lines; l++) {
        for (j = 0; j < n_bad && bad_line[j] != l; j++) {
        }
        if (j < n_bad) {
            t_buf_printf(&b, "%s\n", bad_text[j]);
            continue;
        }
        switch (t_rand_int(&st, 10)) {
        case 0:
            t_buf_printf(&b, "# comment %d\n", l);
            break;
        case 1:
            t_buf_add(&b, "\n", 1);
            break;
        default:
            t_buf_add(&b, "+1", 2);
            for (k = 0, j = 1 + t_rand_int(&st, 40); k < j; k++) {
                t_buf_printf(&b, " %d:%d.%d", 1 + 3 * k, k, l % 10);
            }
            k = t_rand_int(&st, 2);
            t_buf_add(&b, k ? "\r\n" : "\n", k ? 2 : 1);
        }
    }
    path = t_write(name, b.p, b.len);
    free(b.p);
    return path;
}

static void t_errors(void)
{
    char msg[ST_GLM_DATA_MSG_LEN], name[64], what[64];
    st_glm_data_opts_t o;
    const char *path;
    st_status_t s;
    size_t i;

    for (i = 0; i < ST_ARRAY_SIZE(t_err_cases); i++) {
        const t_err_case_t *e = &t_err_cases[i];

        snprintf(name, sizeof(name), "err-%zu.svm", i);
        snprintf(what, sizeof(what), "error case %zu", i);
        path = t_write(name, e->text, e->len ? e->len : strlen(e->text));
        st_glm_data_opts_init(&o);
        o.label_kind = e->regression ? ST_GLM_LABEL_REAL : ST_GLM_LABEL_CLASS;
        o.prec       = e->prec;
        o.max_index  = e->max_index;
        t_error_case(path, &o, e->status, e->line, e->expect, what);
    }

    /* missing file, bad options */
    path = t_path("no-such-file.svm");
    t_error_case(path, NULL, ST_ERR_NOT_FOUND, 0, "cannot open", "missing file");
    path = t_write("opts.svm", "+1 1:1\n", 7);
    st_glm_data_opts_init(&o);
    o.prec = 16;
    t_error_case(path, &o, ST_ERR_INVALID_PARAM, 0, "precision 16", "precision 16");
    s = st_glm_data_read_svm(path, &o, t_comm, msg, sizeof(msg), NULL);
    CHECK(s == ST_ERR_INVALID_PARAM, "NULL result pointer: %d", s);

    /* ranks that disagree about the file (a user bug, or no shared file system): the
     * same error everywhere, no hang */
    if (t_size > 1) {
        const char *good = t_write("good.svm", "+1 1:1\n-1 2:2\n", 14);
        const char *other = t_write("other.svm", "+1 1:1\n", 7);
        const char *none = t_path("missing-on-some-ranks.svm");
        char expect[600];
        st_glm_data_t *d = NULL;

        msg[0] = '\0';
        s = st_glm_data_load(t_rank == 0 ? good : none, NULL, t_comm, msg, sizeof(msg), &d);
        snprintf(expect, sizeof(expect), "%s: cannot open", none);
        CHECK(s == ST_ERR_NOT_FOUND && strstr(msg, expect) == msg, "file on rank 0 only: "
              "%d '%s'", s, msg);
        t_check_agree(msg, s, "file on rank 0 only");
        msg[0] = '\0';
        s = st_glm_data_read_svm(t_rank == 0 ? good : other, NULL, t_comm, msg, sizeof(msg),
                                 &d);
        CHECK(s == ST_ERR_IO && strstr(msg, "on rank 0 (do all ranks see the same file?)"),
              "different files: %d '%s'", s, msg);
        t_check_agree(msg, s, "different files");
        msg[0] = '\0';
        s = st_glm_data_read_bin(t_rank == 0 ? t_path("rt-random-64.bin") : good, NULL,
                                 t_comm, msg, sizeof(msg), &d);
        CHECK(s != ST_OK && strstr(msg, "bad magic"), "binary on rank 0 only: %d '%s'", s,
              msg);
        t_check_agree(msg, s, "binary on rank 0 only");
    }

    /* long files: the lowest line wins wherever the ranks' ranges fall */
    {
        static const char *const bad2[] = {"+1 5:1 0:1", "+1 1:x"};
        static const char *const bad1[] = {"+1 1:1 1:2"};
        static const char *const conflict[] = {"0 1:1", "-1 2:2", "+1 3:"};
        static const int lines_a[] = {157, 380}, lines_b[] = {399}, lines_c[] = {2, 390};
        static const char *const late[] = {"0 1:1", "+1 1:1 1:2", "-1 2:2"};
        static const int lines_d[] = {100, 250, 260}, lines_e[] = {100, 250, 200};
        static const int lines_f[] = {10, 200, 380};

        path = t_long_file("long-a.svm", 400, lines_a, bad2, 2);
        t_error_case(path, NULL, ST_ERR_INVALID_PARAM, 157, "index 0", "long file a");
        path = t_long_file("long-b.svm", 400, lines_b, bad1, 1);
        t_error_case(path, NULL, ST_ERR_INVALID_PARAM, 399, "duplicate index 1", "long file b");
        path = t_long_file("long-c.svm", 400, lines_c, bad2, 2);
        t_error_case(path, NULL, ST_ERR_INVALID_PARAM, 2, "index 0", "long file c");
        path = t_long_file("long-d.svm", 400, lines_d, conflict, 3);
        t_error_case(path, NULL, ST_ERR_INVALID_PARAM, 250, "label -1 after label 0 on line "
                     "100", "long file d");
        path = t_long_file("long-e.svm", 400, lines_e, conflict, 3);
        t_error_case(path, NULL, ST_ERR_INVALID_PARAM, 200, "truncated pair '3:'",
                     "long file e");
        /* the labels conflict on line 380, seen by every rank, after a parse error on
         * line 200 (the lowest line wins, not the lowest rank that saw an error) */
        path = t_long_file("long-f.svm", 400, lines_f, late, 3);
        t_error_case(path, NULL, ST_ERR_INVALID_PARAM, 200, "duplicate index 1",
                     "long file f");
    }
}

/* ================= 4. splits ================= */

/* Random rows as text, and the same rows as expected. */
static const char *t_random_file(const char *name, uint64_t seed, int n_lines, int long_every,
                                 int final_newline, t_full_t *want)
{
    t_buf_t b = {NULL, 0, 0};
    int64_t cap = 1024, nnz = 0, rows = 0, max_col = 0;
    uint64_t st = seed;
    const char *path;
    int l, k;

    t_full_alloc(want, n_lines, cap);
    for (l = 0; l < n_lines; l++) {
        int kind = t_rand_int(&st, 20), n, col = 0;

        if (kind == 0) {
            t_buf_add(&b, "# a comment line 1:2 3:4\n", 25);
            continue;
        }
        if (kind == 1) {
            t_buf_add(&b, (l & 1) ? "\r\n" : "  \n", (l & 1) ? 2 : 3);
            continue;
        }
        want->y[rows] = t_rand_int(&st, 2) ? 1.0 : -1.0;
        t_buf_add(&b, want->y[rows] > 0 ? "+1" : "-1", 2);
        n = (long_every > 0 && l % long_every == long_every - 1) ? 3000 : t_rand_int(&st, 30);
        for (k = 0; k < n; k++) {
            int num = t_rand_int(&st, 20001) - 10000;

            col += 1 + t_rand_int(&st, 50);
            if (nnz == cap) {
                cap *= 2;
                want->idx = realloc(want->idx, (size_t)cap * sizeof(*want->idx));
                want->val = realloc(want->val, (size_t)cap * sizeof(*want->val));
            }
            want->idx[nnz] = (uint32_t)(col - 1);
            want->val[nnz] = num / 100.0;   /* the value of the text "%d.%02d" */
            t_buf_printf(&b, "%s%d:%s%d.%02d", t_rand_int(&st, 8) ? " " : "\t", col,
                         num < 0 ? "-" : "", abs(num) / 100, abs(num) % 100);
            nnz++;
        }
        max_col = col > max_col ? col : max_col;
        if (t_rand_int(&st, 10) == 0) {
            t_buf_add(&b, " # trailing", 11);
        }
        if (l < n_lines - 1 || final_newline) {
            t_buf_add(&b, (st & 4) ? "\r\n" : "\n", (st & 4) ? 2 : 1);
        }
        rows++;
        want->indptr[rows] = nnz;
    }
    want->n_rows = rows;
    want->nnz    = nnz;
    want->n_cols = max_col;
    path = t_write(name, b.p, b.len);
    free(b.p);
    return path;
}

/* Read @a path in parallel and serially, compare both with @a want. */
static void t_split_check(const char *path, const t_full_t *want, const char *what)
{
    char msg[ST_GLM_DATA_MSG_LEN];
    t_full_t got, ser;
    st_status_t s;

    memset(&got, 0, sizeof(got));
    memset(&ser, 0, sizeof(ser));
    s = t_read(path, NULL, &got, msg, sizeof(msg));
    if (CHECK(s == ST_OK, "%s: %s", what, msg)) {
        t_full_equal(&got, want, what, __LINE__);
    }
    s = t_read_serial(path, NULL, &ser, msg, sizeof(msg));
    if (CHECK(s == ST_OK, "%s serially: %s", what, msg)) {
        t_full_equal(&got, &ser, what, __LINE__);
    }
    t_full_free(&got);
    t_full_free(&ser);
}

static void t_splits(void)
{
    t_full_t want;
    const char *path;
    char text[256], what[64], name[64];
    int k;

    path = t_random_file("random-a.svm", 1, 3000, 0, 1, &want);
    t_split_check(path, &want, "random file a");
    t_full_free(&want);
    path = t_random_file("random-b.svm", 2, 800, 97, 0, &want);
    t_split_check(path, &want, "random file b (long lines, no final newline)");
    t_full_free(&want);
    path = t_random_file("random-c.svm", 3, 5, 3, 0, &want);
    t_split_check(path, &want, "random file c (5 lines, some long)");
    t_full_free(&want);
    path = t_random_file("random-d.svm", 4, 1, 1, 0, &want);
    t_split_check(path, &want, "random file d (one long line)");
    t_full_free(&want);
    path = t_random_file("random-e.svm", 5, 2, 0, 1, &want);
    t_split_check(path, &want, "random file e (2 lines)");
    t_full_free(&want);

    /* two or three short lines, the first growing by a byte: every split point lands
     * before, on and after each line end, for 2 and 3 ranks */
    for (k = 0; k < 24; k++) {
        t_fixture_t fx;
        int n = snprintf(text, sizeof(text), "+1 1:%.*s1\n-1 2:2\n%s", k,
                         "000000000000000000000000", (k & 1) ? "+1 3:3\n" : "");

        memset(&fx, 0, sizeof(fx));
        fx.n_cols = (k & 1) ? 3 : 2;
        fx.n_rows = (k & 1) ? 3 : 2;
        fx.rows[0] = (t_row_t){1, 1, {1}, {1.0}};
        fx.rows[1] = (t_row_t){-1, 1, {2}, {2.0}};
        fx.rows[2] = (t_row_t){1, 1, {3}, {3.0}};
        t_fixture_expect(&fx, &want);
        snprintf(what, sizeof(what), "short file %d", k);
        snprintf(name, sizeof(name), "short-%d.svm", k);
        path = t_write(name, text, (size_t)n);
        t_split_check(path, &want, what);
        t_full_free(&want);
    }
}

/* ================= 5. binary ================= */

/* The format as solver/README.md describes it, written independently of the library. */
static uint64_t t_fmt_mix(uint64_t x)
{
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

static uint64_t t_fmt_term(uint64_t e, uint64_t i, uint64_t salt)
{
    return t_fmt_mix(e + (i + 1) * 0x9e3779b97f4a7c15ULL + salt);
}

static void t_fmt_u64(unsigned char *p, uint64_t v)
{
    int i;

    for (i = 0; i < 8; i++) {
        p[i] = (unsigned char)(v >> (8 * i));
    }
}

static uint64_t t_fmt_align(uint64_t x)
{
    return (x + 63) / 64 * 64;
}

/* Version 1, or version 2 with @a flags in the half-word after the label kind. */
static unsigned char *t_fmt_write(const t_full_t *f, int prec, int kind, unsigned flags,
                                  size_t *len_p)
{
    uint64_t off[4], size, sum[4] = {0, 0, 0, 0}, salt, h = 0;
    unsigned char *p;
    int64_t i;
    int s;

    off[0] = 128;
    off[1] = t_fmt_align(off[0] + 8 * ((uint64_t)f->n_rows + 1));
    off[2] = t_fmt_align(off[1] + 4 * (uint64_t)f->nnz);
    off[3] = t_fmt_align(off[2] + (uint64_t)(prec / 8) * (uint64_t)f->nnz);
    size   = off[3] + 8 * (uint64_t)f->n_rows;
    p = calloc(size, 1);
    memcpy(p, "STGLMCSR", 8);
    p[8] = flags != 0 ? 2 : 1;      /* version */
    p[12] = 128;                    /* header size */
    p[16] = (unsigned char)prec;
    p[20] = (unsigned char)kind;
    p[22] = (unsigned char)flags;
    p[23] = (unsigned char)(flags >> 8);
    t_fmt_u64(p + 24, (uint64_t)f->n_rows);
    t_fmt_u64(p + 32, (uint64_t)f->n_cols);
    t_fmt_u64(p + 40, (uint64_t)f->nnz);
    for (s = 0; s < 4; s++) {
        t_fmt_u64(p + 48 + 8 * s, off[s]);
    }
    t_fmt_u64(p + 80, size);
    for (i = 0; i <= f->n_rows; i++) {
        salt = 1 * 0xd1b54a32d192ed03ULL;
        t_fmt_u64(p + off[0] + 8 * i, (uint64_t)f->indptr[i]);
        sum[0] += t_fmt_term((uint64_t)f->indptr[i], (uint64_t)i, salt);
    }
    for (i = 0; i < f->nnz; i++) {
        uint64_t bits;

        p[off[1] + 4 * i]     = (unsigned char)f->idx[i];
        p[off[1] + 4 * i + 1] = (unsigned char)(f->idx[i] >> 8);
        p[off[1] + 4 * i + 2] = (unsigned char)(f->idx[i] >> 16);
        p[off[1] + 4 * i + 3] = (unsigned char)(f->idx[i] >> 24);
        sum[1] += t_fmt_term(f->idx[i], (uint64_t)i, 2 * 0xd1b54a32d192ed03ULL);
        if (prec == 32) {
            float v = (float)f->val[i];
            uint32_t b32;

            memcpy(&b32, &v, 4);
            bits = b32;
            memcpy(p + off[2] + 4 * i, &v, 4);
        } else {
            memcpy(&bits, &f->val[i], 8);
            t_fmt_u64(p + off[2] + 8 * i, bits);
        }
        sum[2] += t_fmt_term(bits, (uint64_t)i, 3 * 0xd1b54a32d192ed03ULL);
    }
    for (i = 0; i < f->n_rows; i++) {
        uint64_t bits;

        memcpy(&bits, &f->y[i], 8);
        t_fmt_u64(p + off[3] + 8 * i, bits);
        sum[3] += t_fmt_term(bits, (uint64_t)i, 4 * 0xd1b54a32d192ed03ULL);
    }
    for (s = 0; s < 4; s++) {
        t_fmt_u64(p + 88 + 8 * s, sum[s]);
    }
    for (i = 0; i < 15; i++) {
        uint64_t w = 0;
        int j;

        for (j = 7; j >= 0; j--) {
            w = (w << 8) | p[8 * i + j];
        }
        h += t_fmt_term(w, (uint64_t)i, 0);
    }
    t_fmt_u64(p + 120, h);
    *len_p = size;
    return p;
}

/* Set the version and the 4 bytes at 20 (label kind, flags) of a header, with its sum. */
static void t_fmt_rehead(unsigned char *p, unsigned version, uint32_t kind_flags)
{
    uint64_t h = 0;
    int i, j;

    for (i = 0; i < 4; i++) {
        p[8 + i]  = (unsigned char)(version >> (8 * i));
        p[20 + i] = (unsigned char)(kind_flags >> (8 * i));
    }
    for (i = 0; i < 15; i++) {
        uint64_t w = 0;

        for (j = 7; j >= 0; j--) {
            w = (w << 8) | p[8 * i + j];
        }
        h += t_fmt_term(w, (uint64_t)i, 0);
    }
    t_fmt_u64(p + 120, h);
}

/* The rows of @a f as text with the class labels 1 and 0 (values exactly, %.17g). */
static const char *t_write01(const char *name, const t_full_t *f)
{
    t_buf_t b = {NULL, 0, 0};
    const char *path;
    int64_t i, k;

    for (i = 0; i < f->n_rows; i++) {
        t_buf_printf(&b, "%s", f->y[i] > 0 ? "1" : "0");
        for (k = f->indptr[i]; k < f->indptr[i + 1]; k++) {
            t_buf_printf(&b, " %u:%.17g", f->idx[k] + 1, f->val[k]);
        }
        t_buf_printf(&b, "\n");
    }
    path = t_write(name, b.p, b.len);
    free(b.p);
    return path;
}

/* text -> parallel write -> parallel read; serial write and the format writer agree */
static void t_roundtrip(const char *txt, const char *tag, int prec, int regression,
                        int zero_one)
{
    char msg[ST_GLM_DATA_MSG_LEN], name[64], what[96];
    const char *bin, *bin1, *bin2;
    st_glm_data_t *d = NULL, *ds = NULL;
    st_glm_data_opts_t o;
    t_full_t text, back, conv;
    unsigned char *ref;
    size_t len_a, len_b;
    void *a, *b;
    st_status_t s;

    st_glm_data_opts_init(&o);
    o.prec       = prec;
    o.label_kind = regression ? ST_GLM_LABEL_REAL : ST_GLM_LABEL_CLASS;
    snprintf(what, sizeof(what), "round trip %s/%d", tag, prec);
    snprintf(name, sizeof(name), "rt-%s-%d.bin", tag, prec);
    bin = t_path(name);
    snprintf(name, sizeof(name), "rt-%s-%d-serial.bin", tag, prec);
    bin1 = t_path(name);
    memset(&text, 0, sizeof(text));
    memset(&back, 0, sizeof(back));

    s = st_glm_data_read_svm(txt, &o, t_comm, msg, sizeof(msg), &d);
    if (!CHECK(s == ST_OK, "%s: reading %s: %s", what, txt, msg)) {
        return;
    }
    t_gather(d, t_comm, &text);
    CHECK(d->zero_one == zero_one, "%s: text read with zero_one %d", what, d->zero_one);
    msg[0] = '\0';
    s = st_glm_data_write_bin(d, bin, t_comm, msg, sizeof(msg));
    CHECK(s == ST_OK, "%s: writing: %s", what, msg);
    t_check_agree(msg, s, what);
    st_glm_data_free(d);
    d = NULL;

    /* read back: every rank count, auto-detected, split by rows */
    o.prec = 0;
    s = st_glm_data_load(bin, &o, t_comm, msg, sizeof(msg), &d);
    if (CHECK(s == ST_OK, "%s: reading back: %s", what, msg)) {
        int64_t lo = d->n_rows_global * t_rank / t_size;

        CHECK(d->format == ST_GLM_FORMAT_BIN && d->prec == prec && d->zero_one == zero_one,
              "%s: format %d prec %d zero_one %d", what, d->format, d->prec, d->zero_one);
        CHECK(d->row_offset == d->n_rows_global / t_size * t_rank +
              (t_rank < d->n_rows_global % t_size ? t_rank : d->n_rows_global % t_size),
              "%s: rows split unevenly: offset %lld (about %lld expected)", what,
              (long long)d->row_offset, (long long)lo);
        t_check_blocks(d, what);
        t_gather(d, t_comm, &back);
        t_full_equal(&back, &text, what, __LINE__);
        t_full_free(&back);
        st_glm_data_free(d);
        d = NULL;
    }

    /* the other precision: values converted as documented */
    o.prec = prec == 32 ? 64 : 32;
    s = st_glm_data_read_bin(bin, &o, t_comm, msg, sizeof(msg), &d);
    if (CHECK(s == ST_OK, "%s: reading as %d bits: %s", what, o.prec, msg)) {
        int64_t k;

        t_gather(d, t_comm, &back);
        memset(&conv, 0, sizeof(conv));
        t_full_alloc(&conv, text.n_rows, text.nnz);
        conv.n_cols = text.n_cols;
        memcpy(conv.indptr, text.indptr, ((size_t)text.n_rows + 1) * sizeof(*conv.indptr));
        memcpy(conv.idx, text.idx, (size_t)text.nnz * sizeof(*conv.idx));
        memcpy(conv.y, text.y, (size_t)text.n_rows * sizeof(*conv.y));
        for (k = 0; k < text.nnz; k++) {
            conv.val[k] = o.prec == 32 ? (double)(float)text.val[k] : text.val[k];
        }
        t_full_equal(&back, &conv, what, __LINE__);
        CHECK(d->zero_one == zero_one, "%s: zero_one %d as %d bits", what, d->zero_one,
              o.prec);
        t_full_free(&back);
        t_full_free(&conv);
        st_glm_data_free(d);
        d = NULL;
    }

    /* 0/1 classes read as regression targets: 1 and 0, as the text reader reads them */
    if (zero_one) {
        st_glm_data_t *dt = NULL;
        t_full_t ttext;

        o.prec       = prec;
        o.label_kind = ST_GLM_LABEL_REAL;
        s = st_glm_data_read_svm(txt, &o, t_comm, msg, sizeof(msg), &dt);
        if (CHECK(s == ST_OK, "%s: text as regression: %s", what, msg)) {
            int64_t i, n01 = 0;

            t_gather(dt, t_comm, &ttext);
            for (i = 0; i < ttext.n_rows; i++) {
                n01 += ttext.y[i] == (text.y[i] > 0 ? 1.0 : 0.0);
            }
            CHECK(n01 == text.n_rows, "%s: the text's targets are not its 0/1 labels", what);
            s = st_glm_data_read_bin(bin, &o, t_comm, msg, sizeof(msg), &d);
            if (CHECK(s == ST_OK, "%s: reading as regression: %s", what, msg)) {
                t_gather(d, t_comm, &back);
                t_full_equal(&back, &ttext, what, __LINE__);
                CHECK(d->zero_one == 0 && d->label_kind == ST_GLM_LABEL_REAL,
                      "%s: as regression: zero_one %d kind %d", what, d->zero_one,
                      (int)d->label_kind);
                t_full_free(&back);
                st_glm_data_free(d);
                d = NULL;
            }
            t_full_free(&ttext);
            st_glm_data_free(dt);
        }
        o.label_kind = ST_GLM_LABEL_CLASS;
    }

    /* rank 0 alone: serial read and write, and the format written here */
    ref = NULL;
    len_b = 0;
    if (t_rank == 0) {
        o.prec = prec;
        s = st_glm_data_read_svm(txt, &o, MPI_COMM_NULL, msg, sizeof(msg), &ds);
        if (CHECK(s == ST_OK, "%s: serial read: %s", what, msg)) {
            s = st_glm_data_write_bin(ds, bin1, MPI_COMM_NULL, msg, sizeof(msg));
            CHECK(s == ST_OK, "%s: serial write: %s", what, msg);
            st_glm_data_free(ds);
        }
        ref = t_fmt_write(&text, prec, regression, zero_one ? 1 : 0, &len_b);
        a = t_slurp(bin, &len_a);
        CHECK(a != NULL && len_a == len_b && !memcmp(a, ref, len_a),
              "%s: %s differs from the format written by the test", what, bin);
        free(a);
        b = t_slurp(bin1, &len_a);
        CHECK(b != NULL && len_a == len_b && !memcmp(b, ref, len_a),
              "%s: serial %s differs from the format written by the test", what, bin1);
        free(b);
    }

    /* and the library reads what the test wrote */
    snprintf(name, sizeof(name), "rt-%s-%d-format.bin", tag, prec);
    bin2 = t_write(name, ref, len_b);
    free(ref);
    o.prec = prec;
    s = st_glm_data_read_bin(bin2, &o, t_comm, msg, sizeof(msg), &d);
    if (CHECK(s == ST_OK, "%s: reading %s: %s", what, bin2, msg)) {
        t_gather(d, t_comm, &back);
        t_full_equal(&back, &text, what, __LINE__);
        CHECK(d->zero_one == zero_one, "%s: %s read with zero_one %d", what, bin2,
              d->zero_one);
        t_full_free(&back);
        st_glm_data_free(d);
    }
    t_full_free(&text);
}

/* Damage a copy of @a src and expect @a expect from reading it. */
static void t_damage(const unsigned char *src, size_t len, size_t at, int flip,
                     size_t new_len, const char *expect, st_status_t want, const char *what)
{
    unsigned char *p = malloc(len + 64);
    const char *path;

    memcpy(p, src, len);
    if (new_len > len) {
        memset(p + len, 0, new_len - len);
    }
    if (flip) {
        p[at] ^= (unsigned char)flip;
    }
    path = t_write("damaged.bin", p, new_len);
    free(p);
    {
        st_glm_data_opts_t o;
        char msg[ST_GLM_DATA_MSG_LEN];
        st_glm_data_t *d = NULL;
        st_status_t s;

        st_glm_data_opts_init(&o);
        msg[0] = '\0';
        s = st_glm_data_read_bin(path, &o, t_comm, msg, sizeof(msg), &d);
        t_expect_error(path, s, msg, want, 0, expect, what);
        if (s == ST_OK) {
            st_glm_data_free(d);
        }
    }
}

/* Read the small file @a p as @a kind: two rows labelled @a y0, @a y1, zero_one @a z. */
static void t_read_small(const unsigned char *p, size_t len, st_glm_label_kind_t kind, int z,
                         double y0, double y1, const char *what)
{
    const char *path = t_write("small.bin", p, len);
    char msg[ST_GLM_DATA_MSG_LEN];
    st_glm_data_opts_t o;
    st_glm_data_t *d = NULL;
    t_full_t got;
    st_status_t s;

    st_glm_data_opts_init(&o);
    o.label_kind = kind;
    msg[0] = '\0';
    s = st_glm_data_load(path, &o, t_comm, msg, sizeof(msg), &d);
    t_check_agree(msg, s, what);
    if (!CHECK(s == ST_OK, "%s: %d '%s'", what, s, msg)) {
        return;
    }
    t_gather(d, t_comm, &got);
    CHECK(d->zero_one == z && d->label_kind == kind && got.n_rows == 2 && got.y[0] == y0 &&
          got.y[1] == y1, "%s: zero_one %d kind %d, %lld rows labelled %g %g, expected "
          "zero_one %d, %g %g", what, d->zero_one, (int)d->label_kind, (long long)got.n_rows,
          got.n_rows > 0 ? got.y[0] : 0.0, got.n_rows > 1 ? got.y[1] : 0.0, z, y0, y1);
    t_full_free(&got);
    st_glm_data_free(d);
}

static uint64_t t_get64(const unsigned char *p)
{
    uint64_t v = 0;
    int i;

    for (i = 7; i >= 0; i--) {
        v = (v << 8) | p[i];
    }
    return v;
}

static void t_binary(void)
{
    char msg[ST_GLM_DATA_MSG_LEN];
    const char *txt, *path;
    unsigned char *src;
    t_full_t want;
    uint64_t off[4];
    size_t len;
    int s;

    txt = t_random_file("bin-src.svm", 11, 600, 50, 1, &want);
    t_roundtrip(txt, "random", 64, 0, 0);
    t_roundtrip(txt, "random", 32, 0, 0);
    /* the same rows labelled 1 and 0: version 2, its flag set, zero_one read back */
    t_roundtrip(t_write01("bin-src01.svm", &want), "random01", 64, 0, 1);
    t_roundtrip(t_path("bin-src01.svm"), "random01", 32, 0, 1);
    t_full_free(&want);
    txt = t_random_file("bin-small.svm", 12, 2, 0, 1, &want);
    t_full_free(&want);
    t_roundtrip(txt, "two-rows", 64, 0, 0);
    t_roundtrip(t_write("bin-reg.svm", t_fixtures_tab[8].text, strlen(t_fixtures_tab[8].text)),
                "regression", 64, 1, 0);
    t_roundtrip(t_write("bin-empty-rows.svm", "+1\n-1\n+1\n+1 2:1\n", 16), "empty-rows",
                32, 0, 0);
    t_roundtrip(t_write("bin-empty-rows01.svm", "1\n0\n1\n1 2:1\n", 12), "empty-rows01",
                32, 0, 1);

    /* damage the random file's binary form */
    src = t_slurp(t_path("rt-random-64.bin"), &len);
    if (!CHECK(src != NULL && len > 1024, "cannot read rt-random-64.bin back")) {
        free(src);
        return;
    }
    for (s = 0; s < 4; s++) {
        off[s] = t_get64(src + 48 + 8 * s);
    }
    t_damage(src, len, 30, 0x04, len, "corrupted header (checksum mismatch)", ST_ERR_IO,
             "flipped n_rows");
    t_damage(src, len, 100, 0x80, len, "corrupted header (checksum mismatch)", ST_ERR_IO,
             "flipped checksum");
    t_damage(src, len, off[0] + 8 * 5 + 1, 0x01, len, "checksum of the row pointers", ST_ERR_IO,
             "flipped indptr");
    t_damage(src, len, off[1] + 4 * 77, 0x10, len, "checksum of the column indices", ST_ERR_IO,
             "flipped index");
    t_damage(src, len, off[2] + 8 * 123 + 7, 0x40, len, "checksum of the values", ST_ERR_IO,
             "flipped value");
    t_damage(src, len, len - 3, 0x01, len, "checksum of the labels", ST_ERR_IO,
             "flipped label");
    t_damage(src, len, 0, 0, len - 1, "truncated", ST_ERR_IO, "truncated by a byte");
    t_damage(src, len, 0, 0, 1000, "truncated", ST_ERR_IO, "truncated in the data");
    t_damage(src, len, 0, 0, 100, "shorter than the 128-byte header", ST_ERR_IO,
             "truncated header");
    t_damage(src, len, 0, 0, len + 8, "trailing data", ST_ERR_IO, "trailing bytes");
    t_damage(src, len, 2, 0x20, len, "not a Strata binary CSR file (bad magic number)",
             ST_ERR_INVALID_PARAM, "bad magic");
    /* a damaged version word is damage, not a newer version (before: "binary format
     * version 3; this build reads versions 1 to 2") */
    t_damage(src, len, 8, 0x02, len, "corrupted header (its version reads 3, and the "
             "checksum does not match)", ST_ERR_IO, "version 3, damaged");
    t_damage(src, len, 11, 0x01, len, "corrupted header (its version reads 16777217",
             ST_ERR_IO, "the version's last byte flipped");
    t_damage(src, len, 0, 0, 0, "bad magic", ST_ERR_INVALID_PARAM, "empty binary");
    free(src);

    /* valid checksums, invalid contents: from the format writer of this test */
    {
        static const t_row_t rows[2] = {{1, 2, {1, 5}, {1.0, 2.0}}, {-1, 1, {3}, {3.0}}};
        t_full_t f;
        unsigned char *p;

        t_full_alloc(&f, 2, 3);
        f.n_cols = 4;    /* column 5 is beyond it */
        f.indptr[1] = 2;
        f.indptr[2] = 3;
        f.idx[0] = rows[0].col[0] - 1;
        f.idx[1] = rows[0].col[1] - 1;
        f.idx[2] = rows[1].col[0] - 1;
        f.val[0] = 1.0;
        f.val[1] = 2.0;
        f.val[2] = 3.0;
        f.y[0] = 1.0;
        f.y[1] = -1.0;
        p = t_fmt_write(&f, 64, 0, 0, &len);
        t_damage(p, len, 0, 0, len, "row 1: column 5 beyond the column count",
                 ST_ERR_INVALID_PARAM, "column beyond n_cols");
        free(p);
        f.n_cols = 5;
        f.y[1] = 0.5;
        p = t_fmt_write(&f, 64, 0, 0, &len);
        t_damage(p, len, 0, 0, len, "row 2: label 0.5 is not -1 or +1", ST_ERR_INVALID_PARAM,
                 "label 0.5");
        free(p);
        f.y[1] = -1.0;
        f.idx[1] = 0;
        p = t_fmt_write(&f, 64, 0, 0, &len);
        t_damage(p, len, 0, 0, len, "row 1: column 1 out of order", ST_ERR_INVALID_PARAM,
                 "duplicate column");
        free(p);

        /* the flags: version 2's 0/1 flag; unknown flags, the flag in version 1 or on
         * regression labels, and versions 0 (damage) and 3 (a newer Strata's) refused */
        f.idx[1] = 4;
        p = t_fmt_write(&f, 64, 0, 1, &len);
        t_read_small(p, len, ST_GLM_LABEL_CLASS, 1, 1.0, -1.0, "version 2, 0/1");
        t_read_small(p, len, ST_GLM_LABEL_REAL, 0, 1.0, 0.0, "version 2, 0/1 as targets");
        t_fmt_rehead(p, 2, 0);
        t_read_small(p, len, ST_GLM_LABEL_CLASS, 0, 1.0, -1.0, "version 2, no flags");
        t_read_small(p, len, ST_GLM_LABEL_REAL, 0, 1.0, -1.0, "version 2, no flags, targets");
        t_fmt_rehead(p, 2, 2u << 16);
        t_damage(p, len, 0, 0, len, "binary format version 2 with flags 0x2; this build "
                 "knows flags 0x1 only", ST_ERR_UNSUPPORTED, "unknown flag");
        t_fmt_rehead(p, 2, 0x8001u << 16);
        t_damage(p, len, 0, 0, len, "binary format version 2 with flags 0x8001; this build "
                 "knows flags 0x1 only", ST_ERR_UNSUPPORTED, "a known and an unknown flag");
        t_fmt_rehead(p, 1, 1u << 16);
        t_damage(p, len, 0, 0, len, "corrupted header (inconsistent fields)", ST_ERR_IO,
                 "a flag in version 1");
        t_fmt_rehead(p, 2, 1 | (1u << 16));
        t_damage(p, len, 0, 0, len, "corrupted header (inconsistent fields)", ST_ERR_IO,
                 "the 0/1 flag on regression labels");
        t_fmt_rehead(p, 2, 2);
        t_damage(p, len, 0, 0, len, "corrupted header (inconsistent fields)", ST_ERR_IO,
                 "label kind 2");
        t_fmt_rehead(p, 0, 0);
        t_damage(p, len, 0, 0, len, "corrupted header (its version reads 0, no version's)",
                 ST_ERR_IO, "version 0");
        t_fmt_rehead(p, 3, 1u << 16);
        t_damage(p, len, 0, 0, len, "binary format version 3, written by a newer Strata; this "
                 "build reads versions 1 to 2", ST_ERR_UNSUPPORTED, "version 3 with a flag");
        free(p);

        /* regression targets read as classes are read as the text's labels: 0/1 (0 as
         * -1, zero_one set) or -1/+1, not both, at the row where the second kind comes
         * (on another rank than the first at 2 and 3 ranks), unless that row has an
         * error of its own; other values refused by row (before: every 0 refused as
         * "not -1 or +1", where the text's 0 is read) */
        f.y[0] = 1.0;
        f.y[1] = 0.0;
        p = t_fmt_write(&f, 64, ST_GLM_LABEL_REAL, 0, &len);
        t_read_small(p, len, ST_GLM_LABEL_CLASS, 1, 1.0, -1.0, "targets 1 0 as classes");
        t_read_small(p, len, ST_GLM_LABEL_REAL, 0, 1.0, 0.0, "targets 1 0");
        free(p);
        f.y[0] = -1.0;
        f.y[1] = 1.0;
        p = t_fmt_write(&f, 32, ST_GLM_LABEL_REAL, 0, &len);
        t_read_small(p, len, ST_GLM_LABEL_CLASS, 0, -1.0, 1.0, "targets -1 1 as classes");
        free(p);
        f.y[0] = -0.0;   /* a zero, as "-0" in the text */
        p = t_fmt_write(&f, 64, ST_GLM_LABEL_REAL, 0, &len);
        t_read_small(p, len, ST_GLM_LABEL_CLASS, 1, -1.0, 1.0, "targets -0 1 as classes");
        free(p);
        f.y[0] = 0.0;
        f.y[1] = -1.0;
        p = t_fmt_write(&f, 64, ST_GLM_LABEL_REAL, 0, &len);
        t_damage(p, len, 0, 0, len, "row 2: label -1 after label 0 in row 1: class labels "
                 "are either -1/+1 or 0/1, not both", ST_ERR_INVALID_PARAM, "targets 0 -1");
        t_read_small(p, len, ST_GLM_LABEL_REAL, 0, 0.0, -1.0, "targets 0 -1");
        free(p);
        f.idx[2] = 7;    /* row 2: column 8 beyond the 5 columns */
        p = t_fmt_write(&f, 64, ST_GLM_LABEL_REAL, 0, &len);
        t_damage(p, len, 0, 0, len, "row 2: column 8 beyond the column count",
                 ST_ERR_INVALID_PARAM, "targets 0 -1, the row's error first");
        free(p);
        f.idx[2] = 2;
        f.y[0] = 1.0;
        f.y[1] = 0.5;
        p = t_fmt_write(&f, 64, ST_GLM_LABEL_REAL, 0, &len);
        t_damage(p, len, 0, 0, len, "row 2: label 0.5 is not a class label (-1, +1, 0 or 1; "
                 "the file holds regression targets)", ST_ERR_INVALID_PARAM,
                 "target 0.5 as a class");
        free(p);
        t_full_free(&f);
    }

    /* ranks that disagree: reading one file with the flag and one without (the same
     * rows), writing rows that say 0/1 on rank 0 only; the same error everywhere */
    if (t_size > 1) {
        const char *t01 = t_path("bin-src01.svm");
        st_glm_data_t *d = NULL;

        msg[0] = '\0';
        s = st_glm_data_read_bin(t_rank == 0 ? t_path("rt-random01-64.bin")
                                             : t_path("rt-random-64.bin"), NULL, t_comm, msg,
                                 sizeof(msg), &d);
        CHECK(s == ST_ERR_IO && strstr(msg, ": rank 1 reads another header than rank 0 (do "
                                       "all ranks see the same file?)") != NULL,
              "a 0/1 file on rank 0 only: %d '%s'", s, msg);
        t_check_agree(msg, s, "a 0/1 file on rank 0 only");
        s = st_glm_data_load(t01, NULL, t_comm, msg, sizeof(msg), &d);
        if (CHECK(s == ST_OK && d->zero_one, "reading %s: %d %s", t01, s, msg)) {
            d->zero_one = t_rank == 0;
            msg[0] = '\0';
            s = st_glm_data_write_bin(d, t_path("never01.bin"), t_comm, msg, sizeof(msg));
            CHECK(s == ST_ERR_INVALID_PARAM && strstr(msg, "never01.bin: ranks 0 and 1 differ "
                                                      "in precision, label kind or class "
                                                      "names") != NULL,
                  "writing 0/1 on rank 0 only: %d '%s'", s, msg);
            t_check_agree(msg, s, "writing 0/1 on rank 0 only");
            st_glm_data_free(d);
        }
    }

    /* a file that is not binary goes to the text reader through st_glm_data_load */
    path = t_write("looks-binary.svm", "STGLMCSX 1:1\n", 13);
    t_error_case(path, NULL, ST_ERR_INVALID_PARAM, 1, "bad label 'STGLMCSX'", "near magic");
    (void)msg;
}

/* ================= 6. helpers ================= */

static void t_helpers(void)
{
    static const char text[] = "+1 1:3 2:4\n-1\n-1 3:-2\n+1 1:0.5 4:0.5\n+1 2:1\n";
    st_glm_label_stats_t ls;
    char msg[ST_GLM_DATA_MSG_LEN];
    st_glm_data_opts_t o;
    st_glm_data_t *d = NULL;
    const double want_norm[5] = {25.0, 0.0, 4.0, 0.5, 1.0};
    const char *path = t_write("helpers.svm", text, strlen(text));
    double *norm;
    int64_t i;
    st_status_t s;

    st_glm_data_opts_init(&o);
    s = st_glm_data_load(path, &o, t_comm, msg, sizeof(msg), &d);
    if (!CHECK(s == ST_OK, "helpers: %s", msg)) {
        return;
    }
    norm = malloc(((size_t)d->n_rows + 1) * sizeof(*norm));
    st_glm_data_row_sqnorms(d, norm);
    for (i = 0; i < d->n_rows; i++) {
        CHECK(norm[i] == want_norm[d->row_offset + i], "row %lld: squared norm %g, "
              "expected %g", (long long)(d->row_offset + i), norm[i],
              want_norm[d->row_offset + i]);
    }
    free(norm);
    s = st_glm_data_label_stats(d, t_comm, &ls);
    CHECK(s == ST_OK && ls.n == 5 && ls.n_pos == 3 && ls.n_neg == 2 &&
          fabs(ls.mean - 0.2) < 1e-15 && fabs(ls.var - 0.96) < 1e-15 && ls.min == -1.0 &&
          ls.max == 1.0, "label stats: n %lld pos %lld neg %lld mean %g var %g min %g max %g",
          (long long)ls.n, (long long)ls.n_pos, (long long)ls.n_neg, ls.mean, ls.var, ls.min,
          ls.max);
    CHECK(d->n_cols == 4 && d->n_rows_global == 5 && d->nnz_global == 6 &&
          !strcmp(d->source, path), "helpers: %lld cols %lld rows %lld nnz source %s",
          (long long)d->n_cols, (long long)d->n_rows_global, (long long)d->nnz_global,
          d->source);

    /* the invariant check catches what it promises */
    if (d->nnz > 1) {
        uint32_t keep = d->indices[0];

        d->indices[0] = (uint32_t)d->n_cols;
        CHECK(st_glm_data_check(d, msg, sizeof(msg)) == ST_ERR_INVALID_PARAM &&
              strstr(msg, ">= n_cols") != NULL, "check missed a column beyond n_cols: %s", msg);
        d->indices[0] = keep;
    }
    if (d->n_rows > 0) {
        d->y[0] = 0.0;
        CHECK(st_glm_data_check(d, msg, sizeof(msg)) == ST_ERR_INVALID_PARAM &&
              strstr(msg, "label") != NULL, "check missed a label 0: %s", msg);
    }
    s = st_glm_data_write_bin(d, t_path("never.bin"), t_comm, msg, sizeof(msg));
    CHECK(s == ST_ERR_INVALID_PARAM && strstr(msg, "never.bin") != NULL && strstr(msg, "label"),
          "writing invalid rows: %d %s", s, msg);
    t_check_agree(msg, s, "writing invalid rows");
    st_glm_data_free(d);
    st_glm_data_free(NULL);
    CHECK(st_glm_data_alloc(-1, 0, 64, &d) == ST_ERR_INVALID_PARAM, "alloc accepted -1 rows");
    CHECK(st_glm_data_alloc(1, 1, 16, &d) == ST_ERR_INVALID_PARAM, "alloc accepted prec 16");
}

/* ================= --load ================= */

static int t_load(const char *path, int regression, int prec, const char *to_bin)
{
    char msg[ST_GLM_DATA_MSG_LEN];
    st_glm_label_stats_t ls;
    st_glm_data_opts_t o;
    st_glm_data_t *d = NULL;
    uint64_t h = 0, all = 0;
    struct timespec t0, t1;
    struct stat st;
    int64_t i, k;
    double sec;

    st_glm_data_opts_init(&o);
    o.label_kind = regression ? ST_GLM_LABEL_REAL : ST_GLM_LABEL_CLASS;
    o.prec = prec;
    t_sync();
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if (st_glm_data_load(path, &o, t_comm, msg, sizeof(msg), &d) != ST_OK) {
        if (t_rank == 0) {
            fprintf(stderr, "test_data: %s\n", msg);
        }
        return 1;
    }
    t_sync();
    clock_gettime(CLOCK_MONOTONIC, &t1);
    sec = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    /* order-free hash: a sum over rows of a hash of (global row, label, entries) */
    for (i = 0; i < d->n_rows; i++) {
        uint64_t r = t_mix((uint64_t)(d->row_offset + i)), bits;

        memcpy(&bits, &d->y[i], 8);
        r = t_mix(r ^ bits);
        for (k = d->indptr[i]; k < d->indptr[i + 1]; k++) {
            double v = d->prec == 32 ? (double)d->val32[k] : d->val64[k];

            memcpy(&bits, &v, 8);
            r = t_mix(r ^ d->indices[k]);
            r = t_mix(r ^ bits);
        }
        h += r;
    }
    all = h;
    if (t_mpi) {
        MPI_Allreduce(&h, &all, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    }
    if (st_glm_data_label_stats(d, t_comm, &ls) != ST_OK) {
        fprintf(stderr, "test_data: label statistics failed\n");
        return 1;
    }
    if (t_rank == 0) {
        printf("rows %lld cols %lld nnz %lld pos %lld neg %lld mean %.6f hash %016llx "
               "zero_one %d\n", (long long)d->n_rows_global, (long long)d->n_cols,
               (long long)d->nnz_global, (long long)ls.n_pos, (long long)ls.n_neg, ls.mean,
               (unsigned long long)all, d->zero_one);
        if (stat(path, &st) == 0) {
            printf("load %.3f s, %.1f MB/s, %d rank(s), %s\n", sec,
                   (double)st.st_size / 1e6 / sec, t_size,
                   d->format == ST_GLM_FORMAT_BIN ? "binary" : "svmlight");
        }
    }
    /* --to-bin: the rows as read, written in the binary format, labels of the kind
     * read (the shell tests' converter: regression targets that are 0/1 stay targets,
     * where strata-gen convert stores them as 0/1 classes) */
    if (to_bin != NULL && st_glm_data_write_bin(d, to_bin, t_comm, msg, sizeof(msg)) != ST_OK) {
        if (t_rank == 0) {
            fprintf(stderr, "test_data: %s\n", msg);
        }
        st_glm_data_free(d);
        return 1;
    }
    st_glm_data_free(d);
    return 0;
}

/* ================= main ================= */

static void t_rmdir(void)
{
    char cmd[600];

    if (t_rank == 0 && t_dir[0] != '\0') {
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", t_dir);
        if (system(cmd) != 0) {
            t_fail(__LINE__, "cannot remove %s", t_dir);
        }
    }
}

int main(int argc, char **argv)
{
    const char *load = NULL, *to_bin = NULL, *tmp;
    long fails;
    int i, regression = 0, prec = 0, rc = 0;

    for (i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--mpi")) {
            t_mpi = 1;
        } else if (!strcmp(argv[i], "--load") && i + 1 < argc) {
            load = argv[++i];
        } else if (!strcmp(argv[i], "--regression")) {
            regression = 1;
        } else if (!strcmp(argv[i], "--prec") && i + 1 < argc) {
            prec = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "--to-bin") && i + 1 < argc) {
            to_bin = argv[++i];
        } else {
            fprintf(stderr, "usage: test_data [--mpi] [--load FILE [--regression] "
                    "[--prec P] [--to-bin OUT]]\n");
            return 2;
        }
    }
    if (t_mpi) {
        MPI_Init(&argc, &argv);
        MPI_Comm_rank(MPI_COMM_WORLD, &t_rank);
        MPI_Comm_size(MPI_COMM_WORLD, &t_size);
        t_comm = MPI_COMM_WORLD;
    }
    if (load != NULL) {
        rc = t_load(load, regression, prec, to_bin);
        if (t_mpi) {
            MPI_Allreduce(MPI_IN_PLACE, &rc, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
            MPI_Finalize();
        }
        return rc;
    }

    if (t_rank == 0) {
        tmp = getenv("TMPDIR");
        snprintf(t_dir, sizeof(t_dir), "%s/strata-test-data.XXXXXX",
                 tmp != NULL && tmp[0] != '\0' ? tmp : "/tmp");
        if (mkdtemp(t_dir) == NULL) {
            fprintf(stderr, "test_data: mkdtemp %s: %s\n", t_dir, strerror(errno));
            t_dir[0] = '\0';
        }
    }
    if (t_mpi) {
        MPI_Bcast(t_dir, (int)sizeof(t_dir), MPI_CHAR, 0, MPI_COMM_WORLD);
    }
    if (t_dir[0] == '\0') {
        if (t_mpi) {
            MPI_Finalize();
        }
        return 1;
    }

    t_numbers();
    if (!t_mpi) {
        t_locale();
    }
    t_fixtures();
    t_splits();
    t_binary();
    t_errors();
    t_helpers();
    t_sync();
    t_rmdir();
    while (t_npaths > 0) {
        free(t_paths[--t_npaths]);
    }
    free(t_paths);

    fails = t_nfail;
    if (t_mpi) {
        MPI_Allreduce(&t_nfail, &fails, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    }
    if (t_rank == 0) {
        printf("test_data: %s: %d rank(s), %ld checks on rank 0, %ld failed\n",
               fails == 0 ? "PASS" : "FAIL", t_size, t_ncheck, fails);
    }
    if (t_mpi) {
        MPI_Finalize();
    }
    return fails == 0 ? 0 : 1;
}
