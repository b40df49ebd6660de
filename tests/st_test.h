/*
 * Helpers shared by the MPI tests: checks that count failures, deterministic
 * inputs, a 64-bit buffer hash, cross-rank agreement, Strata statistics and the
 * final verdict. Everything is static: each test is one translation unit.
 *
 * A failed check prints "rank R: file:line: CHECK(cond) failed" on stdout (the
 * harness fails a job that writes anything to stderr, so a healthy run is
 * silent there) and is counted; st_test_finish() sums the counts over
 * MPI_COMM_WORLD and turns them into the exit status.
 */
#ifndef ST_TEST_H
#define ST_TEST_H

#include "strata.h"

#include <mpi.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* the C layouts of MPI's pair types (MPI_FLOAT_INT ... MPI_LONG_DOUBLE_INT) */
typedef struct { float v; int i; }       pair_float_int_t;
typedef struct { double v; int i; }      pair_double_int_t;
typedef struct { long v; int i; }        pair_long_int_t;
typedef struct { int v; int i; }         pair_2int_t;
typedef struct { short v; int i; }       pair_short_int_t;
typedef struct { long double v; int i; } pair_ldouble_int_t;

/* failed checks printed in full per rank; the rest are only counted */
#define ST_TEST_MAX_REPORTS 30

static _Atomic long st_test_nfail;
static _Atomic long st_test_ncheck;
static int st_test_rank = -1;

/* Can communicators spanning (virtual) nodes take Strata's path? They need the
 * UCX transport: built in, and not turned off by STRATA_UCX=n. */
static inline int st_test_multinode_fast(void)
{
    const char *v = getenv("STRATA_UCX");

    return HAVE_UCX && !(v != NULL && (v[0] == 'n' || v[0] == 'N' || v[0] == '0' ||
                                       strcasecmp(v, "off") == 0 || strcasecmp(v, "false") == 0));
}

static inline int st_test_world_rank(void)
{
    int init = 0;

    if (st_test_rank < 0) {
        MPI_Initialized(&init);
        if (init) {
            MPI_Comm_rank(MPI_COMM_WORLD, &st_test_rank);
        }
    }
    return st_test_rank;
}

__attribute__((format(printf, 3, 4)))
static inline void st_test_fail(const char *file, int line, const char *fmt, ...)
{
    long n = atomic_fetch_add(&st_test_nfail, 1);
    va_list ap;

    if (n >= ST_TEST_MAX_REPORTS) {
        return;
    }
    flockfile(stdout);
    printf("rank %d: %s:%d: ", st_test_world_rank(), file, line);
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    if (n == ST_TEST_MAX_REPORTS - 1) {
        printf("rank %d: (further failures are counted, not printed)\n", st_test_world_rank());
    }
    fflush(stdout);
    funlockfile(stdout);
}

/* CHECK(cond): count a failure, print where and what. Evaluates to cond != 0. */
#define CHECK(_cond) \
    ({ \
        int _ok = !!(_cond); \
        atomic_fetch_add(&st_test_ncheck, 1); \
        if (!_ok) { \
            st_test_fail(__FILE__, __LINE__, "CHECK(%s) failed", #_cond); \
        } \
        _ok; \
    })

/* CHECKF(cond, fmt, ...): the same, with a printf-style context. */
#define CHECKF(_cond, ...) \
    ({ \
        int _ok = !!(_cond); \
        atomic_fetch_add(&st_test_ncheck, 1); \
        if (!_ok) { \
            char _msg[512]; \
            snprintf(_msg, sizeof(_msg), __VA_ARGS__); \
            st_test_fail(__FILE__, __LINE__, "CHECK(%s) failed: %s", #_cond, _msg); \
        } \
        _ok; \
    })

/* MPI calls the test relies on (not the ones under test) must succeed. */
#define ST_TEST_MPI(_call) \
    do { \
        int _rc = (_call); \
        if (_rc != MPI_SUCCESS) { \
            st_test_fail(__FILE__, __LINE__, "%s returned %d", #_call, _rc); \
        } \
    } while (0)

/* ---- deterministic inputs ---- */

/* SplitMix64's finalizer: a bijective, well-mixed 64-bit hash. */
static inline uint64_t st_test_mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

/* 64 random-looking bits, a pure function of (seed, rank, index). */
static inline uint64_t st_test_rand(uint64_t seed, int rank, uint64_t index)
{
    return st_test_mix(seed * 0x2545f4914f6cdd1dULL + ((uint64_t)(unsigned)rank << 40) +
                       index);
}

/* The world ranks of @a comm's @a n members, in @a comm's order, into @a world. */
static inline void st_test_world_ranks(MPI_Comm comm, int *world, int n)
{
    MPI_Group g, wg;
    int i, *ranks = (int *)malloc(sizeof(int) * (size_t)(n > 0 ? n : 1));

    for (i = 0; i < n; i++) {
        ranks[i] = i;
    }
    ST_TEST_MPI(MPI_Comm_group(comm, &g));
    ST_TEST_MPI(MPI_Comm_group(MPI_COMM_WORLD, &wg));
    ST_TEST_MPI(MPI_Group_translate_ranks(g, n, ranks, wg, world));
    MPI_Group_free(&g);
    MPI_Group_free(&wg);
    free(ranks);
}

/* ---- hashing and agreement ---- */

#define ST_TEST_HASH_INIT 0xcbf29ce484222325ULL

/* Combine @a bytes bytes into the running hash @a h (FNV-1a on 8-byte words). */
static inline uint64_t st_test_hash_more(uint64_t h, const void *buf, size_t bytes)
{
    const unsigned char *p = (const unsigned char*)buf;
    uint64_t w;
    size_t i;

    for (i = 0; i + 8 <= bytes; i += 8) {
        memcpy(&w, p + i, 8);
        h = (h ^ w) * 0x100000001b3ULL;
        h ^= h >> 29;
    }
    for (; i < bytes; i++) {
        h = (h ^ p[i]) * 0x100000001b3ULL;
    }
    return st_test_mix(h ^ bytes);
}

static inline uint64_t st_test_hash(const void *buf, size_t bytes)
{
    return st_test_hash_more(ST_TEST_HASH_INIT, buf, bytes);
}

/*
 * 1 when every rank of @a comm passed the same @a hash (collective over @a comm;
 * uses MPI_Allgather, which Strata does not intercept). On a mismatch, rank 0 of
 * @a comm prints the hashes.
 */
static inline int st_test_hash_agree(MPI_Comm comm, uint64_t hash)
{
    uint64_t *all;
    int size, rank, i, same = 1;

    MPI_Comm_size(comm, &size);
    MPI_Comm_rank(comm, &rank);
    all = (uint64_t*)malloc((size_t)size * sizeof(*all));
    if (all == NULL) {
        st_test_fail(__FILE__, __LINE__, "out of memory");
        return 0;
    }
    ST_TEST_MPI(MPI_Allgather(&hash, 1, MPI_UINT64_T, all, 1, MPI_UINT64_T, comm));
    for (i = 1; i < size; i++) {
        same = same && (all[i] == all[0]);
    }
    if (!same && rank == 0) {
        for (i = 0; i < size; i++) {
            printf("rank %d: comm rank %d result hash %016llx\n", st_test_world_rank(), i,
                   (unsigned long long)all[i]);
        }
    }
    free(all);
    return same;
}

/* 1 when every rank of @a comm holds the same @a bytes bytes at @a buf. */
static inline int st_test_same_everywhere(MPI_Comm comm, const void *buf, size_t bytes)
{
    return st_test_hash_agree(comm, st_test_hash(buf, bytes));
}

/* The value of Strata's knob @a name ("STRATA_CUDA_IPC_MIN") in effect, as
 * strata-info prints it ("1M", "y"); "" when there is no such knob. */
static inline const char *st_test_config(const char *name)
{
    strata_config_entry_t e;
    int i;

    for (i = 0; i < strata_config_count(); i++) {
        if (strata_config_get(i, &e) == STRATA_OK && strcmp(e.name, name) == 0) {
            return e.value;
        }
    }
    return "";
}

/* ---- Strata statistics ---- */

static inline strata_comm_stats_t st_test_stats(MPI_Comm comm)
{
    strata_comm_stats_t s;
    strata_status_t status = strata_comm_stats(comm, &s);

    if (status != STRATA_OK) {
        st_test_fail(__FILE__, __LINE__, "strata_comm_stats: %s", strata_status_string(status));
        memset(&s, 0, sizeof(s));
    }
    return s;
}

/* Calls of @a comm that took Strata's fast path, as seen by this rank. */
static inline uint64_t st_test_fast_calls(MPI_Comm comm)
{
    return st_test_stats(comm).fast_calls;
}

/* Calls of @a comm handed to PMPI_Allreduce for @a reason. */
static inline uint64_t st_test_fallback_calls(MPI_Comm comm, strata_fallback_t reason)
{
    return st_test_stats(comm).fallback_calls[reason];
}

/* Sum of the fallback counters of @a s. */
static inline uint64_t st_test_fallback_total(const strata_comm_stats_t *s)
{
    uint64_t n = 0;
    int i;

    for (i = 0; i < STRATA_FALLBACK_LAST; i++) {
        n += s->fallback_calls[i];
    }
    return n;
}

/* ---- verdict ---- */

/*
 * Sum the failures over MPI_COMM_WORLD (with PMPI_Allreduce: the verdict must not
 * depend on the code under test), print one line on rank 0, finalize MPI.
 * @return the exit status: 0 when no rank failed a check, 1 otherwise.
 */
static inline int st_test_finish(const char *name)
{
    long mine[2] = {atomic_load(&st_test_nfail), atomic_load(&st_test_ncheck)};
    long total[2] = {0, 0};
    int rank, size, rc;

    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    rc = PMPI_Allreduce(mine, total, 2, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (rc != MPI_SUCCESS) {
        total[0] = mine[0] + 1;
    }
    if (rank == 0) {
        printf("%s: %s: %d ranks, %ld checks, %ld failed\n", name,
               total[0] == 0 ? "PASS" : "FAIL", size, total[1], total[0]);
        fflush(stdout);
    }
    MPI_Finalize();
    return (total[0] == 0 && mine[0] == 0) ? 0 : 1;
}

#endif /* ST_TEST_H */
