/*
 * strata-bench: MPI_Allreduce(SUM) bandwidth and latency, size by size (in the
 * spirit of osu_allreduce and nccl-tests' all_reduce_perf).
 *
 * The program links libstrata, so MPI_Allreduce is Strata's and PMPI_Allreduce
 * is the MPI library's own; --compare times both in the same run, interleaving
 * their repetitions so that machine noise hits both alike.
 *
 * Every (type, size, implementation) is validated: the output of the first timed
 * call (and, out of place, of the last call of every repetition, made back to back
 * with the others) is compared, element by element, with sums each rank computes itself with
 * a scalar loop over all ranks, and the ranks compare hashes of their results.
 * Inputs are small integers (st_bench_input.h), so every summation order gives the
 * exact sum in float, double and int; the sums are never 0, and never one value over
 * 17 elements, on any number of ranks. A size's warm-up and iteration probe run on
 * one seed, each implementation's validated call on one of its own, and each type
 * has its own seeds, so stale data (a result kept from an earlier call of the size)
 * cannot pass for a result.
 * Both depend on i only through i mod 17: a 17-entry table per call serves both.
 *
 * Timing of one repetition: barrier, ITERS calls, average per call, then the
 * maximum over ranks; a size reports the median (and minimum) over repetitions.
 */
#include "config.h"

#include "strata.h"
#include "st_bench_input.h"
#include "st_glm_file.h"   /* the CSV written whole or not at all */
#include "st_stdout.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BENCH_NAME           "strata-bench"
#define BENCH_PERIOD         ST_BENCH_PERIOD   /* inputs depend on i mod 17 */
#define BENCH_GUARD          64          /* bytes past the message that must stay intact */
#define BENCH_SENTINEL       0x7f        /* guard and unwritten-output byte */
#define BENCH_ALIGN          64
#define BENCH_TARGET_SECONDS 0.020       /* adaptive iterations: ~20 ms per repetition */
#define BENCH_PROBE_SECONDS  0.002       /* ... from the fastest call of probes this long */
#define BENCH_PROBES         3           /* ... and this many of them */
#define BENCH_ITERS_MIN      3
#define BENCH_ITERS_MAX      10000
#define BENCH_MAX_TYPES      ST_BENCH_MAX_TYPES

enum {
    BENCH_IMPL_STRATA = 0,
    BENCH_IMPL_PMPI,
    BENCH_IMPL_LAST
};

_Static_assert(BENCH_IMPL_LAST == ST_BENCH_NIMPL, "st_bench_seed's implementations");

static const char *const bench_impl_names[BENCH_IMPL_LAST] = {"strata", "pmpi"};

typedef int (*bench_allreduce_fn_t)(const void *sbuf, void *rbuf, int count,
                                    MPI_Datatype dtype, MPI_Op op, MPI_Comm comm);

/* ---- per-type kernels: fill the input, check the output ---- */

/*
 * bench_fill_T:  p[i] = in_tab[i mod 17], i < count.
 * bench_check_T: how many p[i] differ from exp_tab[i mod 17]; the first one's
 *                index and value go to first_p and got_p.
 * bench_again_T: what an element whose first sum over @a n ranks is @a s holds
 *                after @a k sums in place (each the sum of n copies of the last):
 *                s n^(k-1) in T's arithmetic, to @a out_p; 0 where the order of
 *                the additions decides it (floating point, n > 2, past 2^mantissa).
 * (The tables hold doubles: every value they take is exact in one.)
 */
#define BENCH_TYPE_KERNELS(_sfx, _ctype) \
    static void bench_fill_##_sfx(void *buf, size_t count, const double *in_tab) \
    { \
        _ctype *p = buf; \
        size_t i; \
        unsigned j = 0; \
        \
        for (i = 0; i < count; i++) { \
            p[i] = (_ctype)in_tab[j]; \
            if (++j == BENCH_PERIOD) { \
                j = 0; \
            } \
        } \
    } \
    \
    static size_t bench_check_##_sfx(const void *buf, size_t count, const double *exp_tab, \
                                     size_t *first_p, double *got_p) \
    { \
        const _ctype *p = buf; \
        size_t i, nbad = 0; \
        unsigned j = 0; \
        \
        for (i = 0; i < count; i++) { \
            if (p[i] != (_ctype)exp_tab[j]) { \
                if (nbad++ == 0) { \
                    *first_p = i; \
                    *got_p   = (double)p[i]; \
                } \
            } \
            if (++j == BENCH_PERIOD) { \
                j = 0; \
            } \
        } \
        return nbad; \
    }

BENCH_TYPE_KERNELS(float, float)
BENCH_TYPE_KERNELS(double, double)
BENCH_TYPE_KERNELS(int, int)

/* n copies of x summed in any order: exact while n x is an integer below 2^digits;
 * for n = 2 (x + x) and n = 1 exact always (to infinity, as the sums are) */
#define BENCH_AGAIN_FLOAT(_sfx, _ctype, _digits, _ldexp) \
    static int bench_again_##_sfx(long s, int n, long k, double *out_p) \
    { \
        double x = (double)s; \
        long i; \
        \
        if (n <= 2) { \
            *out_p = (double)_ldexp((_ctype)s, (int)ST_MIN(k - 1, 100000L) * (n - 1)); \
            return 1; \
        } \
        for (i = 1; i < k; i++) { \
            x *= n; \
            if (x >= 0x1p##_digits) { \
                return 0; \
            } \
        } \
        *out_p = x; \
        return 1; \
    }

BENCH_AGAIN_FLOAT(float, float, 24, ldexpf)
BENCH_AGAIN_FLOAT(double, double, 53, ldexp)

/* int sums wrap: s n^(k-1) modulo 2^32 */
static int bench_again_int(long s, int n, long k, double *out_p)
{
    unsigned p = 1, base = (unsigned)n;
    unsigned long e = (unsigned long)(k - 1);

    for (; e != 0; e >>= 1, base *= base) {
        if (e & 1) {
            p *= base;
        }
    }
    *out_p = (double)(int)(p * (unsigned)s);
    return 1;
}

typedef struct {
    const char *name;
    size_t      size;
    void        (*fill)(void *buf, size_t count, const double *in_tab);
    size_t      (*check)(const void *buf, size_t count, const double *exp_tab,
                         size_t *first_p, double *got_p);
    int         (*again)(long s, int n, long k, double *out_p);
} bench_type_t;

static const bench_type_t bench_types[] = {
    {"float",  sizeof(float),  bench_fill_float,  bench_check_float,  bench_again_float},
    {"double", sizeof(double), bench_fill_double, bench_check_double, bench_again_double},
    {"int",    sizeof(int),    bench_fill_int,    bench_check_int,    bench_again_int},
};

#define BENCH_NTYPES ((int)(sizeof(bench_types) / sizeof(bench_types[0])))

static MPI_Datatype bench_type_mpi(const bench_type_t *type)
{
    if (!strcmp(type->name, "float")) {
        return MPI_FLOAT;
    }
    if (!strcmp(type->name, "double")) {
        return MPI_DOUBLE;
    }
    return MPI_INT;
}

/* ---- options ---- */

typedef struct {
    size_t min_bytes;
    size_t max_bytes;
    size_t factor;
    size_t low_bytes;                /* the smallest message actually run (<= min_bytes) */
    size_t top_bytes;                /* the largest message actually run (<= max_bytes) */
    int    types[BENCH_MAX_TYPES];   /* indices into bench_types */
    int    ntypes;
    int    iters;                    /* 0: adaptive */
    int    warmup;
    int    reps;
    int    compare;
    int    in_place;
    const char *csv;
    int    help;   /* 1 --help, 2 --version */
} bench_opts_t;

enum {
    BENCH_OPT_COMPARE = 256,
    BENCH_OPT_IN_PLACE,
    BENCH_OPT_CSV,
    BENCH_OPT_VERSION
};

static const struct option bench_long_opts[] = {
    {"min-bytes", required_argument, NULL, 'b'},
    {"max-bytes", required_argument, NULL, 'e'},
    {"factor",    required_argument, NULL, 'f'},
    {"type",      required_argument, NULL, 't'},
    {"iters",     required_argument, NULL, 'i'},
    {"warmup",    required_argument, NULL, 'w'},
    {"reps",      required_argument, NULL, 'r'},
    {"compare",   no_argument,       NULL, BENCH_OPT_COMPARE},
    {"in-place",  no_argument,       NULL, BENCH_OPT_IN_PLACE},
    {"csv",       required_argument, NULL, BENCH_OPT_CSV},
    {"help",      no_argument,       NULL, 'h'},
    {"version",   no_argument,       NULL, BENCH_OPT_VERSION},
    {NULL, 0, NULL, 0}
};

static void bench_usage(FILE *f)
{
    fprintf(f,
            "Usage: " BENCH_NAME " [OPTION]...   (under mpirun; every rank runs it)\n"
            "Times MPI_Allreduce(MPI_SUM) on MPI_COMM_WORLD size by size, validating\n"
            "every result.\n"
            "  -b, --min-bytes SIZE  smallest message (default 4)\n"
            "  -e, --max-bytes SIZE  largest message (default 64M)\n"
            "  -f, --factor N        size multiplier between steps, 2 to 1048576 (default 2)\n"
            "  -t, --type LIST       float, double, int or a comma list (default double)\n"
            "  -i, --iters N         calls per repetition (default: adaptive, ~20 ms per\n"
            "                        repetition, %d to %d)\n"
            "  -w, --warmup N        untimed calls per size (default 5)\n"
            "  -r, --reps N          repetitions; the median is reported (default 5)\n"
            "      --compare         also time PMPI_Allreduce, interleaved with Strata,\n"
            "                        and print time_pmpi / time_strata\n"
            "      --in-place        use MPI_IN_PLACE\n"
            "      --csv FILE        also write the results as CSV to FILE; - for standard\n"
            "                        output (the table then goes to standard error)\n"
            "  -h, --help            this message\n"
            "      --version         print the version and exit\n"
            "SIZE is a byte count with an optional K, M or G suffix (powers of 1024).\n"
            "Exit status: 0 ok, 1 a result was wrong (or a run-time error), 2 bad usage.\n",
            BENCH_ITERS_MIN, BENCH_ITERS_MAX);
}

/* Name of the option with getopt value @a val, for messages: "-b/--min-bytes", "--csv". */
static void bench_opt_name(int val, char *buf, size_t len)
{
    const struct option *o;

    for (o = bench_long_opts; o->name != NULL; o++) {
        if (o->val == val) {
            if (val < 256) {
                snprintf(buf, len, "-%c/--%s", val, o->name);
            } else {
                snprintf(buf, len, "--%s", o->name);
            }
            return;
        }
    }
    snprintf(buf, len, "-%c", val);
}

/* Is @a val the value of an option that takes no argument? */
static int bench_is_flag(int val)
{
    const struct option *o;

    for (o = bench_long_opts; val != 0 && o->name != NULL; o++) {
        if (o->val == val && o->has_arg == no_argument) {
            return 1;
        }
    }
    return 0;
}

static int bench_bad_value(int rank, int val, const char *arg, const char *expected)
{
    char name[32];

    if (rank == 0) {
        bench_opt_name(val, name, sizeof(name));
        fprintf(stderr, BENCH_NAME ": invalid value '%s' for %s (expected %s)\n", arg, name,
                expected);
    }
    return -1;
}

/* "64", "4K", "64M", "1G" -> bytes; 0 on success. */
static int bench_parse_size(const char *arg, size_t *bytes_p)
{
    unsigned long long v, mult = 1;
    char *end;

    if (arg[0] < '0' || arg[0] > '9') {
        return -1;
    }
    errno = 0;
    v     = strtoull(arg, &end, 10);
    if (errno != 0) {
        return -1;
    }
    if (*end != '\0') {
        switch (*end) {
        case 'k': case 'K': mult = 1ULL << 10; break;
        case 'm': case 'M': mult = 1ULL << 20; break;
        case 'g': case 'G': mult = 1ULL << 30; break;
        default: return -1;
        }
        if (end[1] != '\0') {
            return -1;
        }
    }
    if (v > SIZE_MAX / mult) {
        return -1;
    }
    *bytes_p = (size_t)(v * mult);
    return 0;
}

/* A decimal integer in [lo, hi]; 0 on success. */
static int bench_parse_int(const char *arg, long lo, long hi, int *value_p)
{
    long v;
    char *end;

    if ((arg[0] < '0' || arg[0] > '9') && arg[0] != '-') {
        return -1;
    }
    errno = 0;
    v     = strtol(arg, &end, 10);
    if (errno != 0 || end == arg || *end != '\0' || v < lo || v > hi) {
        return -1;
    }
    *value_p = (int)v;
    return 0;
}

/* -t's list; 0, -1 for a name not a type, -2 for more than BENCH_MAX_TYPES of them. */
static int bench_parse_types(const char *arg, bench_opts_t *opts)
{
    const char *p = arg, *comma;
    size_t len;
    int t;

    opts->ntypes = 0;
    for (;;) {
        comma = strchr(p, ',');
        len   = (comma != NULL) ? (size_t)(comma - p) : strlen(p);
        for (t = 0; t < BENCH_NTYPES; t++) {
            if (strlen(bench_types[t].name) == len && !strncmp(bench_types[t].name, p, len)) {
                break;
            }
        }
        if (t == BENCH_NTYPES) {
            return -1;
        }
        if (opts->ntypes == BENCH_MAX_TYPES) {
            return -2;
        }
        opts->types[opts->ntypes++] = t;
        if (comma == NULL) {
            return 0;
        }
        p = comma + 1;
    }
}

/*
 * Parse the command line identically on every rank; only rank 0 prints.
 * Returns 0, or -1 after a message on stderr (rank 0).
 */
static int bench_parse_args(int argc, char **argv, int rank, bench_opts_t *opts)
{
    char name[32];
    size_t min_type, last, bytes;
    int c, t;

    memset(opts, 0, sizeof(*opts));
    opts->min_bytes = 4;
    opts->max_bytes = 64UL << 20;
    opts->factor    = 2;
    opts->types[0]  = 1; /* double */
    opts->ntypes    = 1;
    opts->warmup    = 5;
    opts->reps      = 5;

    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, ":b:e:f:t:i:w:r:h", bench_long_opts, NULL)) != -1) {
        switch (c) {
        case 'b':
            if (bench_parse_size(optarg, &opts->min_bytes) != 0 || opts->min_bytes == 0) {
                return bench_bad_value(rank, c, optarg, "a size > 0, e.g. 4, 8K, 1M");
            }
            break;
        case 'e':
            if (bench_parse_size(optarg, &opts->max_bytes) != 0 || opts->max_bytes == 0) {
                return bench_bad_value(rank, c, optarg, "a size > 0, e.g. 1M, 64M, 1G");
            }
            break;
        case 'f':
            if (bench_parse_int(optarg, 2, 1 << 20, &t) != 0) {
                return bench_bad_value(rank, c, optarg, "an integer from 2 to 1048576");
            }
            opts->factor = (size_t)t;
            break;
        case 't':
            t = bench_parse_types(optarg, opts);
            if (t == -2) {
                snprintf(name, sizeof(name), "at most %d types", BENCH_MAX_TYPES);
                return bench_bad_value(rank, c, optarg, name);
            }
            if (t != 0) {
                return bench_bad_value(rank, c, optarg, "float, double, int or a comma list");
            }
            break;
        case 'i':
            if (bench_parse_int(optarg, 1, INT_MAX, &opts->iters) != 0) {
                return bench_bad_value(rank, c, optarg, "an integer >= 1");
            }
            break;
        case 'w':
            if (bench_parse_int(optarg, 0, INT_MAX, &opts->warmup) != 0) {
                return bench_bad_value(rank, c, optarg, "an integer >= 0");
            }
            break;
        case 'r':
            if (bench_parse_int(optarg, 1, 100000, &opts->reps) != 0) {
                return bench_bad_value(rank, c, optarg, "an integer from 1 to 100000");
            }
            break;
        case BENCH_OPT_COMPARE:
            opts->compare = 1;
            break;
        case BENCH_OPT_IN_PLACE:
            opts->in_place = 1;
            break;
        case BENCH_OPT_CSV:
            if (optarg[0] == '\0') {
                return bench_bad_value(rank, c, optarg, "a file name");
            }
            opts->csv = optarg;
            break;
        case 'h':
            opts->help = 1;
            break;
        case BENCH_OPT_VERSION:
            opts->help = opts->help ? opts->help : 2;   /* (--help wins) */
            break;
        case ':':
            if (rank == 0) {
                bench_opt_name(optopt, name, sizeof(name));
                fprintf(stderr, BENCH_NAME ": option %s needs a value\n", name);
            }
            return -1;
        default:
            /* GNU getopt: optopt is the option's value for "--flag=value" (then
             * argv[optind - 1]), the character for an unknown short option (argv[optind
             * - 1] may be an earlier argument: "--compare -xw"), 0 for an unknown long
             * one: a known flag's value tells the first case from the second */
            if (rank == 0) {
                if (bench_is_flag(optopt)) {
                    bench_opt_name(optopt, name, sizeof(name));
                    fprintf(stderr, BENCH_NAME ": option %s takes no value ('%s')\n", name,
                            argv[optind - 1]);
                } else if (optopt != 0) {
                    fprintf(stderr, BENCH_NAME ": unknown option '-%c'\n", optopt);
                } else {
                    fprintf(stderr, BENCH_NAME ": unknown or ambiguous option '%s'\n",
                            argv[optind - 1]);
                }
            }
            return -1;
        }
    }
    if (opts->help) {
        return 0;
    }
    if (optind < argc) {
        if (rank == 0) {
            fprintf(stderr, BENCH_NAME ": unexpected argument '%s'\n", argv[optind]);
        }
        return -1;
    }
    if (opts->min_bytes > opts->max_bytes) {
        if (rank == 0) {
            fprintf(stderr, BENCH_NAME ": --min-bytes %zu is larger than --max-bytes %zu\n",
                    opts->min_bytes, opts->max_bytes);
        }
        return -1;
    }
    min_type = SIZE_MAX;
    for (t = 0; t < opts->ntypes; t++) {
        if (bench_types[opts->types[t]].size < min_type) {
            min_type = bench_types[opts->types[t]].size;
        }
    }
    if (opts->max_bytes / min_type > INT_MAX || opts->max_bytes > SIZE_MAX / 2 - BENCH_GUARD) {
        if (rank == 0) {
            fprintf(stderr, BENCH_NAME ": --max-bytes %zu is too large (the element count "
                    "must fit an int)\n", opts->max_bytes);
        }
        return -1;
    }
    /* the sizes run are min, min x factor, ... up to max, each rounded down to whole
     * elements (the loop of bench_run): every type must have one */
    last = opts->min_bytes;
    while (last <= opts->max_bytes / opts->factor) {
        last *= opts->factor;
    }
    opts->low_bytes = SIZE_MAX;
    opts->top_bytes = 0;
    for (t = 0; t < opts->ntypes; t++) {
        const bench_type_t *type = &bench_types[opts->types[t]];

        if (last < type->size) {
            if (rank == 0) {
                fprintf(stderr, BENCH_NAME ": the largest size run, %zu bytes (-b %zu -e %zu "
                        "-f %zu), holds no whole %s (%zu bytes)\n", last, opts->min_bytes,
                        opts->max_bytes, opts->factor, type->name, type->size);
            }
            return -1;
        }
        bytes = last / type->size * type->size;
        if (bytes > opts->top_bytes) {
            opts->top_bytes = bytes;
        }
        /* (the sizes go up to last >= type->size: a whole element on the way) */
        for (bytes = opts->min_bytes; bytes < type->size; bytes *= opts->factor) {
        }
        bytes = bytes / type->size * type->size;
        if (bytes < opts->low_bytes) {
            opts->low_bytes = bytes;
        }
    }
    return 0;
}

/* ---- the run ---- */

typedef struct {
    const bench_opts_t *opts;
    MPI_Comm            comm;
    int                 rank, nranks, nhosts;
    char               *sbuf;     /* NULL with --in-place */
    char               *rbuf;
    FILE               *csv;      /* rank 0: the CSV's, stdout for --csv - */
    FILE               *out;      /* rank 0: the table's, stderr for --csv - */
    st_glm_out_t        csv_out;        /* rank 0: its temporary, renamed at the end */
    int                 csv_errno;      /* rank 0: the first write error on the CSV, or 0 */
    int                 csv_failed;     /* every rank: the CSV could not be written */
    int                 nothing;        /* no size ran (no memory): the CSV is not kept */
    int                 failed;
    uint64_t           *hashes;   /* nranks x BENCH_IMPL_LAST, for bench_agree */
    bench_allreduce_fn_t fn[BENCH_IMPL_LAST];
    double              copy_gbps;      /* memcpy bandwidth per rank, all ranks at once */
    size_t              copy_bytes;     /* ... measured on this many bytes */
    size_t              last_bytes;     /* the largest size run so far ... */
    double              last_strata_s;  /* ... and Strata's median time on it */
    int                 noisy;          /* rows whose median is over 2x their minimum */
} bench_t;

/* What one (type, size) is being run with. */
typedef struct {
    const bench_type_t *type;
    MPI_Datatype        dtype;
    size_t              count;
    size_t              bytes;
    int                 tindex;   /* its place in -t's list, which gives its seeds */
    double              in_tab[BENCH_PERIOD];   /* this rank's inputs */
    double              exp_tab[BENCH_PERIOD];  /* their sum over all ranks */
    long                sum_tab[BENCH_PERIOD];  /* ... as integers */
} bench_case_t;

/* Per implementation results of one size. */
typedef struct {
    int      iters;
    double  *times;       /* seconds per call, max over ranks, one per repetition */
    size_t   nbad;        /* this rank's validation errors */
    size_t   first_bad;
    double   first_got;
    double   first_exp;
    const char *what;     /* which check found the first error */
    int      has_value;   /* first_bad, first_got and first_exp describe it */
    uint64_t hash;        /* of this rank's validated output */
    int      ok;          /* all ranks valid and identical */
} bench_result_t;

static void bench_case_seed(const bench_t *b, bench_case_t *c, unsigned seed)
{
    int j, r;

    for (j = 0; j < BENCH_PERIOD; j++) {
        c->in_tab[j]  = (double)st_bench_input(j, b->rank, seed);
        c->sum_tab[j] = 0;
        for (r = 0; r < b->nranks; r++) {
            c->sum_tab[j] += st_bench_input(j, r, seed);
        }
        c->exp_tab[j] = (double)c->sum_tab[j];
    }
}

/* Fill the input with the current seed's values; the output (and guard) with sentinels. */
static void bench_case_fill(bench_t *b, bench_case_t *c)
{
    if (b->opts->in_place) {
        c->type->fill(b->rbuf, c->count, c->in_tab);
        memset(b->rbuf + c->bytes, BENCH_SENTINEL, BENCH_GUARD);
    } else {
        c->type->fill(b->sbuf, c->count, c->in_tab);
        memset(b->rbuf, BENCH_SENTINEL, c->bytes + BENCH_GUARD);
    }
}

static uint64_t bench_hash(const void *buf, size_t bytes)
{
    const unsigned char *p = buf;
    uint64_t h = 1469598103934665603ULL, w;
    size_t i;

    for (i = 0; i + sizeof(w) <= bytes; i += sizeof(w)) {
        memcpy(&w, p + i, sizeof(w));
        h = (h ^ w) * 1099511628211ULL;
    }
    for (; i < bytes; i++) {
        h = (h ^ p[i]) * 1099511628211ULL;
    }
    return h;
}

/* What the output holds after @a k calls in place from bench_case_fill's data, to
 * @a want; 0 where floating point's order of additions decides it. */
static int bench_case_again(const bench_t *b, const bench_case_t *c, long k, double *want)
{
    int j;

    for (j = 0; j < BENCH_PERIOD; j++) {
        if (!c->type->again(c->sum_tab[j], b->nranks, k, &want[j])) {
            return 0;
        }
    }
    return 1;
}

/* Check the output (local, no communication) against @a want, a period of expected
 * values (NULL: not known, the rest checked); @a last: the last call of a
 * repetition, made back to back with the others. */
static void bench_case_validate(bench_t *b, bench_case_t *c, bench_result_t *res, int last,
                                const double *want)
{
    size_t i, n = 0, first = 0;
    double got = 0;

    if (want != NULL) {
        n = c->type->check(b->rbuf, c->count, want, &first, &got);
    }
    if (n != 0 && res->nbad == 0) {
        res->first_bad = first;
        res->first_got = got;
        res->first_exp = want[first % BENCH_PERIOD];
        res->what      = !last ? "output element" :
                         b->opts->in_place ? "the last call of a repetition (in place, each "
                                             "call summing the last's output): output element" :
                                             "the last call of a repetition: output element";
        res->has_value = 1;
    }
    res->nbad += n;

    n = 0;
    for (i = 0; i < BENCH_GUARD; i++) {
        if ((unsigned char)b->rbuf[c->bytes + i] != BENCH_SENTINEL) {
            n++;
        }
    }
    if (n != 0 && res->nbad == 0) {
        res->what = last ? "the last call of a repetition: bytes written past the end of "
                           "the output:" : "bytes written past the end of the output:";
    }
    res->nbad += n;

    if (!b->opts->in_place) {
        n = c->type->check(b->sbuf, c->count, c->in_tab, &first, &got);
        if (n != 0 && res->nbad == 0) {
            res->first_bad = first;
            res->first_got = got;
            res->first_exp = c->in_tab[first % BENCH_PERIOD];
            res->what      = last ? "the last call of a repetition: input element modified" :
                                    "input element modified";
            res->has_value = 1;
        }
        res->nbad += n;
    }
    /* every output checked goes into the hash the ranks compare */
    res->hash = (res->hash ^ bench_hash(b->rbuf, c->bytes)) * 1099511628211ULL;
}

static int bench_call(bench_t *b, bench_case_t *c, int impl)
{
    return b->fn[impl](b->opts->in_place ? MPI_IN_PLACE : b->sbuf, b->rbuf, (int)c->count,
                       c->dtype, MPI_SUM, b->comm);
}

static double bench_max_over_ranks(bench_t *b, double t)
{
    PMPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, b->comm);
    return t;
}

/* Seconds for @a n calls, the maximum over ranks. */
static double bench_time_calls(bench_t *b, bench_case_t *c, int impl, int n)
{
    double t0;
    int i;

    PMPI_Barrier(b->comm);
    t0 = MPI_Wtime();
    for (i = 0; i < n; i++) {
        bench_call(b, c, impl);
    }
    return bench_max_over_ranks(b, MPI_Wtime() - t0);
}

/*
 * Iterations for ~BENCH_TARGET_SECONDS per repetition; identical on every rank.
 * The time per call is the fastest probe's: probes of 1 call, then of ~1.5 x
 * BENCH_PROBE_SECONDS at that time, until BENCH_PROBES of them have lasted
 * BENCH_PROBE_SECONDS. One call stalled by the scheduler only makes its probe slow
 * (before: the first probe that lasted 2 ms set the count, and one stalled call of
 * 2 us gave 3 to 10 iterations, whose median was mostly the stall).
 */
static int bench_auto_iters(bench_t *b, bench_case_t *c, int impl)
{
    double t, best = 0, want;
    int n = 1, nlong = 0, probe;

    for (probe = 0;; probe++) {
        t = bench_time_calls(b, c, impl, n);
        if (probe == 0 || t / n < best) {
            best = t / n;
        }
        nlong += (t >= BENCH_PROBE_SECONDS);
        if (nlong >= BENCH_PROBES || n >= BENCH_ITERS_MAX) {
            break;
        }
        /* after a short probe at least 1.5 x n: best <= t / n < BENCH_PROBE_SECONDS / n */
        want = (best > 0) ? 1.5 * BENCH_PROBE_SECONDS / best : 8.0 * n;
        n    = (want > BENCH_ITERS_MAX) ? BENCH_ITERS_MAX : (want < 1) ? 1 : (int)want;
    }
    if (best <= 0) {
        return BENCH_ITERS_MAX;
    }
    want = BENCH_TARGET_SECONDS / best;
    if (want < BENCH_ITERS_MIN) {
        return BENCH_ITERS_MIN;
    }
    return (want > BENCH_ITERS_MAX) ? BENCH_ITERS_MAX : (int)(want + 0.5);
}

/*
 * One repetition: seconds per call, the maximum over ranks. With @a validate, the
 * first call runs on fresh data and its output is checked before the others run
 * (the check and a barrier are not timed). The last call's output is checked too,
 * after the timing: it ran back to back with the calls before it (before: only the
 * first, isolated by barriers, and an allreduce wrong only in a loop passed). Out of
 * place, on the inputs the case holds. In place, where each call sums the previous
 * one's output, against that output's value after the repetition's calls where it
 * is known (bench_case_again: ints always; floating point on 1 or 2 ranks, or while
 * the sums stay exact integers), and always for the bytes past the end and for
 * bitwise agreement across ranks (before: the first call alone was checked).
 */
static double bench_rep(bench_t *b, bench_case_t *c, int impl, int validate,
                        bench_result_t *res)
{
    double t0, elapsed = 0;
    int i = 0;

    if (validate) {
        bench_case_seed(b, c, st_bench_seed(c->tindex, 1 + impl));
        bench_case_fill(b, c);
    }
    PMPI_Barrier(b->comm);
    t0 = MPI_Wtime();
    if (validate) {
        bench_call(b, c, impl);
        elapsed = MPI_Wtime() - t0;
        bench_case_validate(b, c, res, 0, c->exp_tab);
        PMPI_Barrier(b->comm);
        t0 = MPI_Wtime();
        i  = 1;
    }
    for (; i < res->iters; i++) {
        bench_call(b, c, impl);
    }
    elapsed += MPI_Wtime() - t0;
    if (!(validate && res->iters == 1)) {
        double again[BENCH_PERIOD];

        bench_case_validate(b, c, res, 1,
                            !b->opts->in_place ? c->exp_tab :
                            (validate && bench_case_again(b, c, res->iters, again)) ? again :
                                                                                     NULL);
    }
    return bench_max_over_ranks(b, elapsed / res->iters);
}

/* Combine every rank's validation of each implementation; sets res[i].ok everywhere. */
static void bench_agree(bench_t *b, bench_case_t *c, bench_result_t *res, int nimpl)
{
    unsigned long long nbad[BENCH_IMPL_LAST], total[BENCH_IMPL_LAST];
    uint64_t mine[BENCH_IMPL_LAST], *all = b->hashes;
    int impl, r, same;

    for (impl = 0; impl < BENCH_IMPL_LAST; impl++) {
        nbad[impl] = (impl < nimpl) ? res[impl].nbad : 0;
        mine[impl] = (impl < nimpl) ? res[impl].hash : 0;
    }
    PMPI_Allreduce(nbad, total, BENCH_IMPL_LAST, MPI_UNSIGNED_LONG_LONG, MPI_SUM, b->comm);
    MPI_Allgather(mine, BENCH_IMPL_LAST, MPI_UINT64_T, all, BENCH_IMPL_LAST, MPI_UINT64_T,
                  b->comm);
    for (impl = 0; impl < nimpl; impl++) {
        same = 1;
        for (r = 0; same && r < b->nranks; r++) {
            same = (all[(size_t)r * BENCH_IMPL_LAST + impl] == all[impl]);
        }
        res[impl].ok = (total[impl] == 0 && same);
        if (res[impl].nbad != 0) {
            if (!res[impl].has_value) {
                fprintf(stderr, BENCH_NAME ": rank %d: %s %s %zu bytes: %s %zu\n", b->rank,
                        bench_impl_names[impl], c->type->name, c->bytes, res[impl].what,
                        res[impl].nbad);
            } else {
                fprintf(stderr, BENCH_NAME ": rank %d: %s %s %zu bytes: %s %zu is %.17g, "
                        "expected %.17g (%zu wrong)\n", b->rank, bench_impl_names[impl],
                        c->type->name, c->bytes, res[impl].what, res[impl].first_bad,
                        res[impl].first_got, res[impl].first_exp, res[impl].nbad);
            }
        }
        if (!same && b->rank == 0) {
            fprintf(stderr, BENCH_NAME ": %s %s %zu bytes: the ranks' results are not "
                    "bitwise identical\n", bench_impl_names[impl], c->type->name, c->bytes);
        }
        if (!res[impl].ok) {
            b->failed = 1;
        }
    }
}

static int bench_cmp_double(const void *a, const void *b)
{
    double x = *(const double*)a, y = *(const double*)b;

    return (x > y) - (x < y);
}

/* Median and minimum of @a n values (sorts them). */
static void bench_stats(double *v, int n, double *median_p, double *min_p)
{
    qsort(v, (size_t)n, sizeof(*v), bench_cmp_double);
    *median_p = (n % 2) ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
    *min_p    = v[0];
}

static void bench_print_row(bench_t *b, bench_case_t *c, bench_result_t *res, int nimpl)
{
    double med[BENCH_IMPL_LAST], tmin[BENCH_IMPL_LAST], algbw[BENCH_IMPL_LAST];
    double busbw[BENCH_IMPL_LAST], ratio = 0, bus_factor;
    const char *check;
    int impl, noisy = 0;

    bus_factor = 2.0 * (b->nranks - 1) / b->nranks;
    for (impl = 0; impl < nimpl; impl++) {
        bench_stats(res[impl].times, b->opts->reps, &med[impl], &tmin[impl]);
        algbw[impl] = (med[impl] > 0) ? c->bytes / med[impl] / 1e9 : 0;
        busbw[impl] = algbw[impl] * bus_factor;
        noisy      |= (med[impl] > 2 * tmin[impl]);
    }
    b->noisy += noisy;
    if (nimpl > 1 && med[BENCH_IMPL_STRATA] > 0) {
        ratio = med[BENCH_IMPL_PMPI] / med[BENCH_IMPL_STRATA];
    }
    if (c->bytes >= b->last_bytes) {
        b->last_bytes    = c->bytes;
        b->last_strata_s = med[BENCH_IMPL_STRATA];
    }
    if (b->rank != 0) {
        return;
    }

    if (nimpl == 1) {
        check = res[0].ok ? "ok" : "FAIL";
        fprintf(b->out, "%12zu %11zu %6s %11.2f %12.3f %6s\n", c->bytes, c->count,
                c->type->name, med[0] * 1e6, busbw[0], check);
    } else {
        check = (res[0].ok && res[1].ok) ? "ok" :
                (!res[0].ok && !res[1].ok) ? "FAIL(both)" :
                !res[0].ok ? "FAIL(strata)" : "FAIL(pmpi)";
        fprintf(b->out, "%12zu %11zu %6s %11.2f %11.2f %7.3f %12.3f %12.3f %6s\n", c->bytes,
                c->count, c->type->name, med[0] * 1e6, med[1] * 1e6, ratio, busbw[0], busbw[1],
                check);
    }
    fflush(b->out);

    if (b->csv != NULL) {
        errno = 0;
        for (impl = 0; impl < nimpl; impl++) {
            fprintf(b->csv, "sum,%s,%zu,%zu,%s,%d,%d,%.3f,%.3f,%.4f,%.4f,", c->type->name,
                    c->bytes, c->count, bench_impl_names[impl], b->opts->reps, res[impl].iters,
                    med[impl] * 1e6, tmin[impl] * 1e6, algbw[impl], busbw[impl]);
            if (nimpl > 1) {
                fprintf(b->csv, "%.4f", impl == BENCH_IMPL_STRATA ? ratio : 1.0);
            }
            fprintf(b->csv, ",%s\n", res[impl].ok ? "ok" : "FAIL");
        }
        if ((fflush(b->csv) != 0 || ferror(b->csv)) && b->csv_errno == 0) {
            b->csv_errno = (errno != 0) ? errno : -1;   /* -1: failed, no errno to say */
        }
    }
}

/* rank 0: the CSV could not be written; @a err the errno, or -1 where none is known
 * (an earlier write's error, its errno gone: none is made up) */
static void bench_csv_say(const char *path, int err)
{
    if (err > 0) {
        fprintf(stderr, BENCH_NAME ": --csv %s: cannot write: %s\n", path, strerror(err));
    } else {
        fprintf(stderr, BENCH_NAME ": --csv %s: cannot write\n", path);
    }
}

/*
 * After a row: did rank 0 write it to the CSV file? Agreed on every rank (one
 * broadcast), so that all of them stop at the same size. @return 0, or -1 after
 * rank 0's message.
 */
static int bench_csv_agree(bench_t *b)
{
    int err = b->csv_errno;

    if (b->opts->csv == NULL) {
        return 0;
    }
    PMPI_Bcast(&err, 1, MPI_INT, 0, b->comm);
    if (err == 0) {
        return 0;
    }
    if (b->rank == 0) {
        bench_csv_say(b->opts->csv, err);
    }
    b->csv_failed = 1;
    return -1;
}

/* Warm-up, iteration count, interleaved repetitions, validation and the row of one size. */
static void bench_run_size(bench_t *b, bench_case_t *c, bench_result_t *res)
{
    int nimpl = b->opts->compare ? 2 : 1;
    int impl, k, rep, i;

    for (impl = 0; impl < nimpl; impl++) {
        res[impl].nbad = 0;
        res[impl].hash = 0;
        res[impl].what      = "";
        res[impl].has_value = 0;
    }
    /* the warm-up and the iteration probe take one seed, each implementation's
     * validated call one of its own after it: no validated call sees the inputs of
     * an earlier call of its size (before: Strata's saw the warm-up's, and an
     * allreduce that kept its first result passed) */
    bench_case_seed(b, c, st_bench_seed(c->tindex, 0));
    bench_case_fill(b, c);
    for (impl = 0; impl < nimpl; impl++) {
        for (i = 0; i < b->opts->warmup; i++) {
            bench_call(b, c, impl);
        }
    }
    for (impl = 0; impl < nimpl; impl++) {
        res[impl].iters = b->opts->iters ? b->opts->iters : bench_auto_iters(b, c, impl);
    }
    /* alternate which implementation goes first, so drifts hit both alike */
    for (rep = 0; rep < b->opts->reps; rep++) {
        for (k = 0; k < nimpl; k++) {
            impl = (rep % 2) ? nimpl - 1 - k : k;
            res[impl].times[rep] = bench_rep(b, c, impl, rep == 0, &res[impl]);
        }
    }
    bench_agree(b, c, res, nimpl);
    bench_print_row(b, c, res, nimpl);
}

static int bench_count_hosts(bench_t *b)
{
    char name[MPI_MAX_PROCESSOR_NAME], *all;
    int len, r, q, nhosts = 0;

    memset(name, 0, sizeof(name));
    MPI_Get_processor_name(name, &len);
    all = calloc((size_t)b->nranks, MPI_MAX_PROCESSOR_NAME);
    if (all == NULL) {
        return 0;
    }
    MPI_Allgather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, all, MPI_MAX_PROCESSOR_NAME, MPI_CHAR,
                  b->comm);
    for (r = 0; r < b->nranks; r++) {
        for (q = 0; q < r; q++) {
            if (!strncmp(all + (size_t)q * MPI_MAX_PROCESSOR_NAME,
                         all + (size_t)r * MPI_MAX_PROCESSOR_NAME, MPI_MAX_PROCESSOR_NAME)) {
                break;
            }
        }
        nhosts += (q == r);
    }
    free(all);
    return nhosts;
}

/*
 * The memory-copy bound: memcpy bandwidth of the largest message (in place, of
 * half of it: the one buffer is both source and destination), measured on every
 * rank at once (ranks share the memory system as they do in the allreduce). Any
 * allreduce must at least read its input and write its output, one memcpy's
 * worth of traffic: bytes / copy_gbps is a lower bound on its time.
 */
static void bench_copy_bound(bench_t *b)
{
    size_t bytes = b->opts->top_bytes;
    char *src    = b->sbuf ? b->sbuf : b->rbuf + bytes / 2;
    double t, best = 0;
    int rep;

    if (b->sbuf == NULL) {
        bytes /= 2;  /* in place: copy one half of the buffer onto the other */
    }
    if (bytes == 0) {
        return;
    }
    for (rep = 0; rep < 5; rep++) {
        PMPI_Barrier(b->comm);
        t = MPI_Wtime();
        memcpy(b->rbuf, src, bytes);
        t = bench_max_over_ranks(b, MPI_Wtime() - t);
        if (rep == 0 || t < best) {
            best = t;
        }
    }
    b->copy_gbps  = (best > 0) ? bytes / best / 1e9 : 0;
    b->copy_bytes = bytes;
}

static void bench_print_header(bench_t *b, int active)
{
    const bench_opts_t *o = b->opts;
    char types[128], iters[64];
    size_t used = 0;
    int t;

    types[0] = '\0';
    for (t = 0; t < o->ntypes && used < sizeof(types); t++) {
        used += (size_t)snprintf(types + used, sizeof(types) - used, "%s%s", t ? "," : "",
                                 bench_types[o->types[t]].name);
    }
    if (o->iters) {
        snprintf(iters, sizeof(iters), "%d", o->iters);
    } else {
        snprintf(iters, sizeof(iters), "auto(~%.0f ms/rep)", BENCH_TARGET_SECONDS * 1e3);
    }
    fprintf(b->out, "# " BENCH_NAME " (strata %s): MPI_Allreduce sum, %d ranks on %d host(s); "
            "type %s; bytes %zu..%zu x%zu; iters %s; warmup %d; reps %d; %s%s\n",
            strata_version(), b->nranks, b->nhosts, types, o->low_bytes, o->top_bytes, o->factor,
            iters, o->warmup, o->reps, o->in_place ? "in-place" : "out-of-place",
            o->compare ? "; compare with PMPI (interleaved reps)" : "");
    if (!active) {
        fprintf(b->out, "# WARNING: Strata is not active (not linked first, or STRATA_ENABLE=n): "
                "the 'strata' numbers are PMPI_Allreduce's\n");
    }
    fprintf(b->out, "# copy bound: memcpy %.2f GB/s per rank, all %d ranks copying at once, "
            "measured on %zu bytes%s (a lower bound on any allreduce: bytes / this)\n",
            b->copy_gbps, b->nranks, b->copy_bytes,
            o->in_place ? " (in place: half the largest message)" : "");
    fprintf(b->out, "# time: us per call, median over reps of the slowest rank's average; "
            "busbw GB/s = bytes/time * 2(n-1)/n%s\n",
            o->compare ? "; ratio = pmpi_us/strata_us (> 1: Strata faster)" : "");
    if (o->compare) {
        fprintf(b->out, "# %10s %11s %6s %11s %11s %7s %12s %12s %6s\n", "bytes", "count",
                "type", "strata_us", "pmpi_us", "ratio", "strata_busbw", "pmpi_busbw", "check");
    } else {
        fprintf(b->out, "# %10s %11s %6s %11s %12s %6s\n", "bytes", "count", "type",
                "strata_us", "strata_busbw", "check");
    }
    fflush(b->out);
}

/* After the table: which Strata calls fell back to PMPI, from rank 0's statistics. */
static void bench_print_footer(bench_t *b, int active)
{
    strata_comm_stats_t st;
    unsigned long long nfb = 0;
    int i;

    if (b->rank != 0 || !active || strata_comm_stats(b->comm, &st) != STRATA_OK) {
        return;
    }
    for (i = 0; i < STRATA_FALLBACK_LAST; i++) {
        nfb += st.fallback_calls[i];
    }
    fprintf(b->out, "# strata: %llu fast-path calls, %llu handed to PMPI_Allreduce",
            (unsigned long long)st.fast_calls, nfb);
    for (i = 0; i < STRATA_FALLBACK_LAST; i++) {
        if (st.fallback_calls[i] != 0) {
            fprintf(b->out, " %s=%llu", strata_fallback_string((strata_fallback_t)i),
                    (unsigned long long)st.fallback_calls[i]);
        }
    }
    fprintf(b->out, "%s\n", nfb ? " (those 'strata' times are PMPI's)" : "");
    if (b->copy_gbps > 0 && b->last_strata_s > 0) {
        fprintf(b->out, "# largest message, %zu bytes: Strata %.2f GB/s per rank = %.0f%% of "
                "the copy bound\n", b->last_bytes, b->last_bytes / b->last_strata_s / 1e9,
                100.0 * b->last_bytes / b->last_strata_s / 1e9 / b->copy_gbps);
    }
}

static void *bench_alloc(size_t bytes)
{
    void *p = NULL;

    if (posix_memalign(&p, BENCH_ALIGN, bytes) != 0) {
        return NULL;
    }
    memset(p, 0, bytes);  /* fault the pages in before any timing */
    return p;
}

static int bench_run(bench_t *b)
{
    const bench_opts_t *o = b->opts;
    bench_result_t res[BENCH_IMPL_LAST];
    bench_case_t c;
    size_t bytes;
    int ok, t, impl, active;

    memset(res, 0, sizeof(res));
    b->rbuf = bench_alloc(o->top_bytes + BENCH_GUARD);
    ok      = (b->rbuf != NULL);
    if (!o->in_place) {
        b->sbuf = bench_alloc(o->top_bytes + BENCH_GUARD);
        ok      = ok && (b->sbuf != NULL);
    }
    for (impl = 0; impl < BENCH_IMPL_LAST; impl++) {
        res[impl].times = malloc((size_t)o->reps * sizeof(double));
        ok              = ok && (res[impl].times != NULL);
    }
    /* here, where every rank learns whether all allocations succeeded: a failure
     * inside bench_agree would leave the other ranks waiting in its allgather */
    b->hashes = malloc((size_t)b->nranks * BENCH_IMPL_LAST * sizeof(*b->hashes));
    ok        = ok && (b->hashes != NULL);
    PMPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, b->comm);
    if (!ok) {
        if (b->rank == 0) {
            fprintf(stderr, BENCH_NAME ": cannot allocate 2 x %zu bytes (and the buffers of "
                    "the results) on some rank\n", o->top_bytes);
        }
        b->failed = 1;
        b->nothing = 1;
        goto out_free;
    }

    b->nhosts = bench_count_hosts(b);
    bench_copy_bound(b);
    active    = strata_active();
    PMPI_Allreduce(MPI_IN_PLACE, &active, 1, MPI_INT, MPI_MIN, b->comm);
    if (b->rank == 0) {
        bench_print_header(b, active);
    }

    for (t = 0; t < o->ntypes; t++) {
        memset(&c, 0, sizeof(c));
        c.type   = &bench_types[o->types[t]];
        c.tindex = t;
        c.dtype  = bench_type_mpi(c.type);
        for (bytes = o->min_bytes;; bytes *= o->factor) {
            c.count = bytes / c.type->size;
            c.bytes = c.count * c.type->size;
            if (c.count > 0) {
                bench_run_size(b, &c, res);
                if (bench_csv_agree(b) != 0) {
                    goto out_footer;
                }
            }
            if (bytes > o->max_bytes / o->factor) {
                break;
            }
        }
    }
out_footer:
    bench_print_footer(b, active);
    if (b->rank == 0 && b->noisy) {
        fprintf(b->out, "# noisy: %d row(s) with a median over twice the minimum (the machine "
                "was busy: rerun, or raise -r)\n", b->noisy);
    }
    if (b->rank == 0 && b->failed) {
        fprintf(b->out, "# FAIL: some results were wrong (see stderr)\n");
    }

out_free:
    for (impl = 0; impl < BENCH_IMPL_LAST; impl++) {
        free(res[impl].times);
    }
    free(b->hashes);
    free(b->sbuf);
    free(b->rbuf);
    return (b->failed || b->csv_failed) ? 1 : 0;
}

/*
 * Each rank parsed its own command line (@a parsed: its bench_parse_args result); an
 * MPMD launch can give ranks different ones, whose collectives would not match
 * (before: rank 1's bad -e left rank 0 to report no memory and hang). @return 0 where
 * every rank parsed the same options, else -1 on every rank, after rank 0's message
 * where its own line was good.
 */
static int bench_args_agree(bench_t *b, const bench_opts_t *o, int parsed)
{
    unsigned long long v[8 + BENCH_MAX_TYPES], in[3], out[3], h;
    int n = 0, t;

    memset(v, 0, sizeof(v));
    if (parsed == 0) {
        v[n++] = o->min_bytes;
        v[n++] = o->max_bytes;
        v[n++] = o->factor;
        v[n++] = (unsigned long long)o->iters << 32 | (unsigned)o->warmup;
        v[n++] = (unsigned long long)o->reps << 32 | (unsigned)o->help;
        v[n++] = (unsigned)o->compare << 2 | (unsigned)o->in_place << 1 | (o->csv != NULL);
        v[n++] = (o->csv != NULL && !strcmp(o->csv, "-"));
        v[n++] = (unsigned)o->ntypes;
        for (t = 0; t < o->ntypes; t++) {
            v[n++] = (unsigned)o->types[t];
        }
    }
    h     = bench_hash(v, sizeof(v));
    in[0] = (parsed != 0);
    in[1] = h;
    in[2] = ~h;
    PMPI_Allreduce(in, out, 3, MPI_UNSIGNED_LONG_LONG, MPI_MAX, b->comm);
    if (out[0] == 0 && out[1] == ~out[2]) {   /* (the largest hash is the smallest) */
        return 0;
    }
    if (b->rank == 0 && parsed == 0) {
        fprintf(stderr, BENCH_NAME ": the ranks were not given the same options (every "
                "rank must run the same command line)\n");
    }
    return -1;
}

int main(int argc, char **argv)
{
    bench_opts_t opts;
    bench_t b;
    int rc, ok;

    st_stdout_check("strata-bench");

    MPI_Init(&argc, &argv);
    memset(&b, 0, sizeof(b));
    b.opts                  = &opts;
    b.comm                  = MPI_COMM_WORLD;
    b.fn[BENCH_IMPL_STRATA] = MPI_Allreduce;
    b.fn[BENCH_IMPL_PMPI]   = PMPI_Allreduce;
    MPI_Comm_rank(b.comm, &b.rank);
    MPI_Comm_size(b.comm, &b.nranks);

    rc = bench_parse_args(argc, argv, b.rank, &opts);
    if (bench_args_agree(&b, &opts, rc) != 0) {
        if (b.rank == 0 && rc != 0) {
            fprintf(stderr, "Try '" BENCH_NAME " --help'.\n");
        }
        MPI_Finalize();
        return 2;
    }
    if (opts.help) {
        if (b.rank == 0 && opts.help == 2) {
            printf(BENCH_NAME " %s\n", PACKAGE_VERSION);
        } else if (b.rank == 0) {
            bench_usage(stdout);
        }
        MPI_Finalize();
        return 0;
    }

    ok    = 1;
    b.out = stdout;
    if (opts.csv != NULL && !strcmp(opts.csv, "-")) {
        /* the CSV on standard output, alone: the table goes to standard error */
        b.csv = (b.rank == 0) ? stdout : NULL;
        b.out = stderr;
    } else if (opts.csv != NULL && b.rank == 0) {
        /* the CSV goes to a temporary beside the file, renamed over it once whole: a run
           that fails or is killed leaves the file as it was (before: emptied at the start) */
        if (st_glm_out_open(&b.csv_out, opts.csv) == 0 &&
            (b.csv = fdopen(b.csv_out.fd, "w")) == NULL) {
            st_glm_out_close(&b.csv_out);
        }
        if (b.csv == NULL) {
            fprintf(stderr, BENCH_NAME ": --csv %s: %s\n", opts.csv, strerror(errno));
            ok = 0;
        }
    }
    if (b.csv != NULL) {
        fprintf(b.csv, "op,type,bytes,count,impl,reps,iters,time_us_median,time_us_min,"
                "algbw_GBps,busbw_GBps,ratio_vs_pmpi,check\n");
    }
    MPI_Bcast(&ok, 1, MPI_INT, 0, b.comm);
    if (!ok) {
        MPI_Finalize();
        return 1;   /* a run-time error, as --help says: the usage was right */
    }

    rc = bench_run(&b);

    /* rank 0 closes the CSV; every rank exits 1 when it could not be written */
    if (opts.csv != NULL) {
        ok = 1;
        if (b.csv != NULL) {
            errno = 0;
            ok    = (fflush(b.csv) == 0) && !ferror(b.csv) && !b.csv_failed;
        }
        if (b.csv != NULL && b.csv != stdout) {
            if (ok && !b.nothing && (errno = st_glm_out_commit(&b.csv_out)) != 0) {
                ok = 0;
            }
            b.csv_out.fd = -1;   /* (its FILE's) */
            ok = (fclose(b.csv) == 0) && ok;
            st_glm_out_close(&b.csv_out);   /* not committed: the temporary goes */
        }
        if (!ok) {
            if (!b.csv_failed) {   /* not said yet */
                bench_csv_say(opts.csv, b.csv_errno ? b.csv_errno : errno ? errno : -1);
            }
            if (b.csv == stdout) {
                st_stdout_failed();   /* said: not again at exit */
            }
        }
        MPI_Bcast(&ok, 1, MPI_INT, 0, b.comm);
        if (!ok) {
            rc = 1;
        }
    }
    MPI_Finalize();
    return rc;
}
