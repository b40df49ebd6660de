/*
 * A randomized differential soak of MPI_Allreduce: a long seeded sequence of calls
 * in which everything the suite's sweeps vary one at a time changes from call to
 * call. Each iteration picks, identically on every rank (one generator, same seed):
 * one of six communicator slots, remade now and then (the world, a dup, an odd/even
 * split, the world reversed, a prefix of it, a shuffle, a subset by
 * MPI_Comm_create_group; the one it replaces freed first, so node segments and UCX
 * lanes are kept and taken again); a type and an op valid for it; a count (0-2, small,
 * mid, around a power of two, or anywhere up to --max-count); MPI_IN_PLACE or not; a
 * misalignment of the buffers.
 *
 * Each rank computes the expected result itself from every member's inputs (pure
 * functions of the iteration, the member's world rank and the index; floating-point
 * values are small integers, so any order of reduction is exact), and checks: the
 * result, bitwise (the pair types' padding excluded); the guard bytes before and after
 * the receive buffer; the send buffer unchanged; the same bytes on every rank; and
 * that the call took Strata's path (the statistics), where it must.
 *
 * With --threads T, T threads run sequences of their own at once (seeds apart), each
 * making its communicators from a duplicate of the world of its own, under
 * MPI_THREAD_MULTIPLE: set-ups, kept segments and lanes taken and frees race.
 *
 * Run under the knobs that change the paths (tests/soak-*.npN): a small segment
 * (STRATA_SHM_SIZE), virtual nodes over UCX, threads. Usage:
 *   test_soak [--iterations N] [--seed S] [--max-count C] [--threads T]
 */
#include "config.h"

#include "st_test.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SOAK_SLOTS 6
#define SOAK_GUARD 16   /* guard bytes around the receive buffer */
#define SOAK_FILL  0x5a
#define SOAK_THREADS_MAX 8

typedef struct { double v; int i; } soak_di_t;
typedef struct { float v; int i; } soak_fi_t;
typedef struct { int v; int i; } soak_ii_t;

typedef enum {
    T_INT, T_FLOAT, T_DOUBLE, T_LDOUBLE, T_INT8, T_UINT16, T_LLONG, T_UINT64, T_BOOL,
    T_DOUBLE_INT, T_FLOAT_INT, T_2INT, T_LAST
} soak_type_t;

typedef enum {
    O_SUM, O_PROD, O_MIN, O_MAX, O_BAND, O_BOR, O_BXOR, O_LAND, O_LOR, O_LXOR, O_MAXLOC,
    O_MINLOC, O_LAST
} soak_op_t;

static const struct {
    const char  *name;
    size_t       size;
    int          kind;   /* 0 integer, 1 floating, 2 bool, 3 pair */
} soak_types[T_LAST] = {
    [T_INT]        = {"MPI_INT", sizeof(int), 0},
    [T_FLOAT]      = {"MPI_FLOAT", sizeof(float), 1},
    [T_DOUBLE]     = {"MPI_DOUBLE", sizeof(double), 1},
    [T_LDOUBLE]    = {"MPI_LONG_DOUBLE", sizeof(long double), 1},
    [T_INT8]       = {"MPI_INT8_T", sizeof(int8_t), 0},
    [T_UINT16]     = {"MPI_UNSIGNED_SHORT", sizeof(unsigned short), 0},
    [T_LLONG]      = {"MPI_LONG_LONG", sizeof(long long), 0},
    [T_UINT64]     = {"MPI_UINT64_T", sizeof(uint64_t), 0},
    [T_BOOL]       = {"MPI_C_BOOL", sizeof(_Bool), 2},
    [T_DOUBLE_INT] = {"MPI_DOUBLE_INT", sizeof(soak_di_t), 3},
    [T_FLOAT_INT]  = {"MPI_FLOAT_INT", sizeof(soak_fi_t), 3},
    [T_2INT]       = {"MPI_2INT", sizeof(soak_ii_t), 3},
};

static const char *const soak_op_names[O_LAST] = {
    "SUM", "PROD", "MIN", "MAX", "BAND", "BOR", "BXOR", "LAND", "LOR", "LXOR", "MAXLOC",
    "MINLOC"};

static MPI_Datatype soak_mpi_type(soak_type_t t)
{
    switch (t) {
    case T_INT:        return MPI_INT;
    case T_FLOAT:      return MPI_FLOAT;
    case T_DOUBLE:     return MPI_DOUBLE;
    case T_LDOUBLE:    return MPI_LONG_DOUBLE;
    case T_INT8:       return MPI_INT8_T;
    case T_UINT16:     return MPI_UNSIGNED_SHORT;
    case T_LLONG:      return MPI_LONG_LONG;
    case T_UINT64:     return MPI_UINT64_T;
    case T_BOOL:       return MPI_C_BOOL;
    case T_DOUBLE_INT: return MPI_DOUBLE_INT;
    case T_FLOAT_INT:  return MPI_FLOAT_INT;
    default:           return MPI_2INT;
    }
}

static MPI_Op soak_mpi_op(soak_op_t o)
{
    switch (o) {
    case O_SUM:    return MPI_SUM;
    case O_PROD:   return MPI_PROD;
    case O_MIN:    return MPI_MIN;
    case O_MAX:    return MPI_MAX;
    case O_BAND:   return MPI_BAND;
    case O_BOR:    return MPI_BOR;
    case O_BXOR:   return MPI_BXOR;
    case O_LAND:   return MPI_LAND;
    case O_LOR:    return MPI_LOR;
    case O_LXOR:   return MPI_LXOR;
    case O_MAXLOC: return MPI_MAXLOC;
    default:       return MPI_MINLOC;
    }
}

/* the choices' generator: the same sequence on every rank */
static __thread uint64_t soak_state;   /* (each thread's own: --threads) */

static uint64_t soak_next(void)
{
    soak_state = st_test_mix(soak_state);
    return soak_state;
}

static uint64_t soak_below(uint64_t n)
{
    return soak_next() % n;
}

/* An op valid for @a t (MPI's rules: logical ops on integers and bool, bitwise on
 * integers, arithmetic and min/max on integers and floating types, the LOC ops on
 * pairs). */
static soak_op_t soak_pick_op(soak_type_t t)
{
    static const soak_op_t fl[] = {O_SUM, O_SUM, O_PROD, O_MIN, O_MAX};
    static const soak_op_t bo[] = {O_LAND, O_LOR, O_LXOR};

    switch (soak_types[t].kind) {
    case 0:  return (soak_op_t)soak_below(O_LXOR + 1);
    case 1:  return fl[soak_below(sizeof(fl) / sizeof(fl[0]))];
    case 2:  return bo[soak_below(sizeof(bo) / sizeof(bo[0]))];
    default: return soak_below(2) ? O_MAXLOC : O_MINLOC;
    }
}

/* Element @a i of world rank @a r's input at iteration @a it, written to @a dst. */
static void soak_element(void *dst, soak_type_t t, soak_op_t o, uint64_t it, int r, size_t i)
{
    uint64_t x = st_test_rand(it, r, i);
    /* small integers for the floating types: exact in any order; products of -1, 1, 2 */
    int64_t small = (o == O_PROD) ? (int64_t)((x % 3 == 0) ? 2 : (x % 3 == 1) ? 1 : -1)
                                  : (int64_t)(x % 2001) - 1000;
    /* a zero now and then, for the logical ops */
    uint64_t lg = (x % 4 == 0) ? 0 : (x >> 8);

    if (o == O_LAND || o == O_LOR || o == O_LXOR) {
        x = lg;
    }
    switch (t) {
    case T_INT:        *(int *)dst = (int)x; break;
    case T_FLOAT:      *(float *)dst = (float)small; break;
    case T_DOUBLE:     *(double *)dst = (double)small; break;
    case T_LDOUBLE:    *(long double *)dst = (long double)small; break;
    case T_INT8:       *(int8_t *)dst = (int8_t)x; break;
    case T_UINT16:     *(unsigned short *)dst = (unsigned short)x; break;
    case T_LLONG:      *(long long *)dst = (long long)x; break;
    case T_UINT64:     *(uint64_t *)dst = x; break;
    case T_BOOL:       *(_Bool *)dst = (x != 0); break;
    /* values from a few, indices from a few: ties are frequent */
    case T_DOUBLE_INT: ((soak_di_t *)dst)->v = (double)(x % 7); ((soak_di_t *)dst)->i = (int)((x >> 32) % 5); break;
    case T_FLOAT_INT:  ((soak_fi_t *)dst)->v = (float)(x % 7); ((soak_fi_t *)dst)->i = (int)((x >> 32) % 5); break;
    default:           ((soak_ii_t *)dst)->v = (int)(x % 7); ((soak_ii_t *)dst)->i = (int)((x >> 32) % 5); break;
    }
}

/* acc = acc op x for an integer type, with C's wrapping (through unsigned) */
#define SOAK_INT_OP(_ut, _t, _acc, _x) \
    do { \
        _t _a = *(_t *)(_acc), _b = *(const _t *)(_x); \
        switch (o) { \
        case O_SUM:  _a = (_t)((_ut)_a + (_ut)_b); break; \
        case O_PROD: _a = (_t)((_ut)_a * (_ut)_b); break; \
        case O_MIN:  _a = _b < _a ? _b : _a; break; \
        case O_MAX:  _a = _b > _a ? _b : _a; break; \
        case O_BAND: _a = (_t)(_a & _b); break; \
        case O_BOR:  _a = (_t)(_a | _b); break; \
        case O_BXOR: _a = (_t)(_a ^ _b); break; \
        case O_LAND: _a = (_t)(_a && _b); break; \
        case O_LOR:  _a = (_t)(_a || _b); break; \
        default:     _a = (_t)(!_a != !_b); break; \
        } \
        *(_t *)(_acc) = _a; \
    } while (0)

#define SOAK_FLOAT_OP(_t, _acc, _x) \
    do { \
        _t _a = *(_t *)(_acc), _b = *(const _t *)(_x); \
        switch (o) { \
        case O_SUM:  _a = _a + _b; break; \
        case O_PROD: _a = _a * _b; break; \
        case O_MIN:  _a = _b < _a ? _b : _a; break; \
        default:     _a = _b > _a ? _b : _a; break; \
        } \
        *(_t *)(_acc) = _a; \
    } while (0)

/* MAXLOC/MINLOC: the better value; on a tie the lower index */
#define SOAK_LOC_OP(_pt, _acc, _x) \
    do { \
        _pt *_a = (_pt *)(_acc); \
        const _pt *_b = (const _pt *)(_x); \
        if (o == O_MAXLOC ? _b->v > _a->v : _b->v < _a->v) { \
            *_a = *_b; \
        } else if (_b->v == _a->v && _b->i < _a->i) { \
            _a->i = _b->i; \
        } \
    } while (0)

static void soak_combine(void *acc, const void *x, soak_type_t t, soak_op_t o)
{
    switch (t) {
    case T_INT:        SOAK_INT_OP(unsigned int, int, acc, x); break;
    case T_INT8:       SOAK_INT_OP(uint8_t, int8_t, acc, x); break;
    case T_UINT16:     SOAK_INT_OP(unsigned short, unsigned short, acc, x); break;
    case T_LLONG:      SOAK_INT_OP(unsigned long long, long long, acc, x); break;
    case T_UINT64:     SOAK_INT_OP(uint64_t, uint64_t, acc, x); break;
    case T_BOOL: {
        _Bool a = *(_Bool *)acc, b = *(const _Bool *)x;
        *(_Bool *)acc = (o == O_LAND) ? (a && b) : (o == O_LOR) ? (a || b) : (a != b);
        break;
    }
    case T_FLOAT:      SOAK_FLOAT_OP(float, acc, x); break;
    case T_DOUBLE:     SOAK_FLOAT_OP(double, acc, x); break;
    case T_LDOUBLE:    SOAK_FLOAT_OP(long double, acc, x); break;
    case T_DOUBLE_INT: SOAK_LOC_OP(soak_di_t, acc, x); break;
    case T_FLOAT_INT:  SOAK_LOC_OP(soak_fi_t, acc, x); break;
    default:           SOAK_LOC_OP(soak_ii_t, acc, x); break;
    }
}

/* Do the meaningful bytes of elements @a a and @a b agree? (long double: its 10 value
 * bytes on x86, the rest padding; pairs: value and index) */
static int soak_same(const void *a, const void *b, soak_type_t t)
{
    switch (t) {
    case T_LDOUBLE:    return *(const long double *)a == *(const long double *)b;
    case T_DOUBLE_INT: return ((const soak_di_t *)a)->v == ((const soak_di_t *)b)->v &&
                              ((const soak_di_t *)a)->i == ((const soak_di_t *)b)->i;
    case T_FLOAT_INT:  return ((const soak_fi_t *)a)->v == ((const soak_fi_t *)b)->v &&
                              ((const soak_fi_t *)a)->i == ((const soak_fi_t *)b)->i;
    default:           return memcmp(a, b, soak_types[t].size) == 0;
    }
}

/* A communicator for a slot, by kind (collective over @a parent, a duplicate of the
 * world or the world itself; kinds 4 and 6 leave the ranks outside with
 * MPI_COMM_NULL). */
static MPI_Comm soak_make_comm(MPI_Comm parent, int kind, int wrank, int wsize, uint64_t it)
{
    MPI_Comm c = MPI_COMM_NULL;
    int k = 1 + (int)(it % (uint64_t)wsize), i, n = 0, *ranks;
    MPI_Group world, sub;

    switch (kind) {
    case 0:
        return parent;
    case 1:
        ST_TEST_MPI(MPI_Comm_dup(parent, &c));
        break;
    case 2:
        ST_TEST_MPI(MPI_Comm_split(parent, wrank % 2, wrank, &c));
        break;
    case 3:
        ST_TEST_MPI(MPI_Comm_split(parent, 0, wsize - wrank, &c));
        break;
    case 4:
        ST_TEST_MPI(MPI_Comm_split(parent, wrank < k ? 0 : MPI_UNDEFINED, wrank, &c));
        break;
    case 5:
        ST_TEST_MPI(MPI_Comm_split(parent, 0,
                                   (int)(st_test_rand(it, wrank, 0) % 1000) * wsize + wrank, &c));
        break;
    default:
        /* the world ranks whose bit of the iteration's draw is set (at least one) */
        ranks = malloc(sizeof(int) * (size_t)wsize);
        for (i = 0; i < wsize; i++) {
            if ((st_test_rand(it, -1, 0) >> i) & 1) {
                ranks[n++] = i;
            }
        }
        if (n == 0) {
            ranks[n++] = wsize - 1;
        }
        ST_TEST_MPI(MPI_Comm_group(parent, &world));
        ST_TEST_MPI(MPI_Group_incl(world, n, ranks, &sub));
        for (i = 0; i < n && ranks[i] != wrank; i++) {
        }
        if (i < n) {
            ST_TEST_MPI(MPI_Comm_create_group(parent, sub, 7, &c));
        }
        MPI_Group_free(&sub);
        MPI_Group_free(&world);
        free(ranks);
        break;
    }
    return c;
}

static void soak_free_comm(MPI_Comm *c, MPI_Comm parent)
{
    if (*c != MPI_COMM_NULL && *c != parent) {
        ST_TEST_MPI(MPI_Comm_free(c));
    }
    *c = MPI_COMM_NULL;
}

/* Are the @a n bytes at @a p all still SOAK_FILL? */
static int soak_untouched(const unsigned char *p, size_t n)
{
    size_t i;

    for (i = 0; i < n && p[i] == SOAK_FILL; i++) {
    }
    return i == n;
}

static size_t soak_pick_count(size_t max_count)
{
    uint64_t c = soak_below(10);
    size_t n;

    if (c == 0) {
        n = (size_t)soak_below(3);
    } else if (c < 4) {
        n = (size_t)soak_below(300);
    } else if (c < 7) {
        n = (size_t)soak_below(70000);
    } else if (c < 9) {
        n = ((size_t)1 << (6 + soak_below(15))) + (size_t)soak_below(5) - 2;
    } else {
        n = (size_t)soak_below(max_count + 1);
    }
    return n < max_count ? n : max_count;
}

typedef struct {
    MPI_Comm parent;      /* the slots' communicators are made from it */
    uint64_t seed;
    long     iterations;
    size_t   max_count;
    int      wrank, wsize;
} soak_args_t;

/* One sequence of calls (a thread's, with --threads). */
static void *soak_run(void *arg)
{
    const soak_args_t *a = arg;
    MPI_Comm slot[SOAK_SLOTS];
    int made[SOAK_SLOTS] = {0};
    long it;
    int i;

    for (i = 0; i < SOAK_SLOTS; i++) {
        slot[i] = MPI_COMM_NULL;
    }
    soak_state = a->seed;

    for (it = 0; it < a->iterations; it++) {
        int s = (int)soak_below(SOAK_SLOTS), remake = soak_below(20) == 0;
        int kind = (int)soak_below(7), inplace, n, k, must_be_fast;
        soak_type_t t;
        soak_op_t o;
        size_t count, es, off, bytes, e;
        unsigned char *sbuf, *rbuf, *copy, *expect, *x;
        uint64_t fast0 = 0;
        int *members;
        long wrong = 0;   /* elements wrong: the first few reported */
        MPI_Comm comm;

        if (!made[s] || remake) {   /* (the same decision on every rank) */
            soak_free_comm(&slot[s], a->parent);
            slot[s] = soak_make_comm(a->parent, kind, a->wrank, a->wsize, (uint64_t)it);
            made[s] = 1;
        }
        t       = (soak_type_t)soak_below(T_LAST);
        o       = soak_pick_op(t);
        count   = soak_pick_count(a->max_count);
        es      = soak_types[t].size;
        count   = count * 8 / (es > 8 ? 16 : 8);   /* about the same bytes for 16-byte types */
        inplace = (int)soak_below(2);
        off     = (size_t)soak_below(4) * es;      /* misaligned by whole elements */
        comm    = slot[s];
        if (comm == MPI_COMM_NULL) {
            continue;
        }
        MPI_Comm_size(comm, &n);
        members = malloc(sizeof(int) * (size_t)n);
        st_test_world_ranks(comm, members, n);
        bytes   = count * es;
        sbuf    = malloc(bytes + off + 1);
        rbuf    = malloc(bytes + off + 2 * SOAK_GUARD);
        copy    = malloc(bytes + 1);
        expect  = calloc(bytes + 1, 1);
        x       = malloc(es);
        memset(sbuf, 0, bytes + off + 1);
        for (e = 0; e < count; e++) {
            soak_element(sbuf + off + e * es, t, o, (uint64_t)it, a->wrank, e);
        }
        memcpy(copy, sbuf + off, bytes);
        memset(rbuf, SOAK_FILL, bytes + off + 2 * SOAK_GUARD);
        if (inplace) {
            memcpy(rbuf + SOAK_GUARD + off, sbuf + off, bytes);
        }
        must_be_fast = n > 1 && count > 0 && st_test_multinode_fast();
        if (must_be_fast) {
            fast0 = st_test_fast_calls(comm);
        }

        CHECKF(MPI_Allreduce(inplace ? MPI_IN_PLACE : sbuf + off, rbuf + SOAK_GUARD + off,
                             (int)count, soak_mpi_type(t), soak_mpi_op(o), comm) == MPI_SUCCESS,
               "iteration %ld: MPI_Allreduce failed", it);

        /* the expected result, from every member's inputs in the communicator's order */
        for (k = 0; k < n; k++) {
            for (e = 0; e < count; e++) {
                if (k == 0) {
                    soak_element(expect + e * es, t, o, (uint64_t)it, members[k], e);
                } else {
                    soak_element(x, t, o, (uint64_t)it, members[k], e);
                    soak_combine(expect + e * es, x, t, o);
                }
            }
        }
        for (e = 0; e < count; e++) {
            if (!soak_same(rbuf + SOAK_GUARD + off + e * es, expect + e * es, t) && wrong++ < 3) {
                CHECKF(0, "iteration %ld: %s %s count %zu%s over %d ranks (slot %d): element %zu wrong",
                       it, soak_types[t].name, soak_op_names[o], count,
                       inplace ? " in place" : "", n, s, e);
            }
        }
        CHECKF(soak_untouched(rbuf, SOAK_GUARD + off) &&
                   soak_untouched(rbuf + SOAK_GUARD + off + bytes, SOAK_GUARD),
               "iteration %ld: %s count %zu: a guard byte around the receive buffer written",
               it, soak_types[t].name, count);
        if (!inplace) {
            CHECKF(memcmp(copy, sbuf + off, bytes) == 0, "iteration %ld: the send buffer changed",
                   it);
        }
        /* (long double's and the pairs' padding is not data: agreement on the rest
         * follows from each rank's check against the same reference) */
        if (t != T_LDOUBLE && t != T_DOUBLE_INT && t != T_FLOAT_INT) {
            CHECKF(st_test_same_everywhere(comm, rbuf + SOAK_GUARD + off, bytes),
                   "iteration %ld: ranks disagree", it);
        }
        if (must_be_fast) {
            CHECKF(st_test_fast_calls(comm) == fast0 + 1,
                   "iteration %ld: %s %s count %zu over %d ranks not on Strata's path",
                   it, soak_types[t].name, soak_op_names[o], count, n);
        }
        free(sbuf);
        free(rbuf);
        free(copy);
        free(expect);
        free(x);
        free(members);
    }
    for (i = 0; i < SOAK_SLOTS; i++) {
        soak_free_comm(&slot[i], a->parent);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    soak_args_t args[SOAK_THREADS_MAX];
    pthread_t tid[SOAK_THREADS_MAX];
    long iterations = 600;
    uint64_t seed = 1;
    size_t max_count = (size_t)1 << 20;
    int wrank, wsize, i, nthreads = 1, provided = MPI_THREAD_SINGLE;

    for (i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc) {
            nthreads = atoi(argv[++i]);
        }
    }
    if (nthreads > 1) {
        MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    } else {
        MPI_Init(&argc, &argv);
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    for (i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--iterations") == 0 && i + 1 < argc) {
            iterations = atol(argv[++i]);
        } else if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc) {
            seed = strtoull(argv[++i], NULL, 0);
        } else if (strcmp(argv[i], "--max-count") == 0 && i + 1 < argc) {
            max_count = (size_t)atol(argv[++i]);
        } else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc) {
            i++;
        } else {
            nthreads = 0;
            break;
        }
    }
    if (nthreads < 1 || nthreads > SOAK_THREADS_MAX ||
        (nthreads > 1 && provided < MPI_THREAD_MULTIPLE)) {
        if (wrank == 0) {
            fprintf(stderr, "usage: test_soak [--iterations N] [--seed S] [--max-count C] "
                    "[--threads T (1-%d; T > 1 needs MPI_THREAD_MULTIPLE)]\n", SOAK_THREADS_MAX);
        }
        MPI_Finalize();
        return 2;
    }
    /* one thread: the world itself; more: each its own duplicate (no two threads'
     * collectives on one communicator), its own seed */
    for (i = 0; i < nthreads; i++) {
        args[i] = (soak_args_t){.parent = MPI_COMM_WORLD, .seed = seed + (uint64_t)i * 7919,
                                .iterations = iterations, .max_count = max_count,
                                .wrank = wrank, .wsize = wsize};
        if (nthreads > 1) {
            ST_TEST_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &args[i].parent));
        }
    }
    if (nthreads == 1) {
        soak_run(&args[0]);
    } else {
        for (i = 0; i < nthreads; i++) {
            pthread_create(&tid[i], NULL, soak_run, &args[i]);
        }
        for (i = 0; i < nthreads; i++) {
            pthread_join(tid[i], NULL);
            ST_TEST_MPI(MPI_Comm_free(&args[i].parent));
        }
    }
    return st_test_finish("test_soak");
}
