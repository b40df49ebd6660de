/*
 * Communicators joining jobs: the parent job (mpirun -np P) spawns children
 * (MPI_Comm_spawn of this program), and MPI_Allreduce runs where the processes of
 * two MPI_COMM_WORLDs meet, on one host:
 *
 *   1. the intercommunicator itself: Open MPI's (counted as `intercomm`), each
 *      group getting the other's sum;
 *   2. MPI_Intercomm_merge of it, parents first or children first: every type and
 *      op the fast path takes (the C, multi-language and Fortran types, pairs,
 *      complex), counts 0, 1, small and past the segment's chunk, in place or not;
 *   3. communicators made from the merged one and freed again, rounds over
 *      (a dup, an odd/even split that mixes the jobs, the ranks reversed, the
 *      children alone): kept segments and lanes are taken again;
 *   4. both jobs at once on their own MPI_COMM_WORLD (segments of two jobs on one
 *      host must not meet);
 *   5. MPI_Comm_connect/MPI_Comm_accept between the jobs (a port the parents open,
 *      its name sent to the children), merged;
 *   6. a second spawn, of other children, merged: the first children's kept segments
 *      and lanes are not theirs;
 *   7. a third, whose children were given other STRATA_* settings (MPI_Info "env";
 *      each job agreed only its own at MPI_Init): the merged communicator must use
 *      Open MPI's allreduce on every rank (counted as `config`), not hang.
 *
 * Each result is checked against a reference computed here from every member's
 * inputs, the same bytes on every rank, Strata's path taken where it must be; with
 * STRATA_SHM_METHOD=posix, no segment of this process left in /dev/shm. A watchdog
 * ends a hang (a step, a call or a spawn, that has not returned after 240 s) as a
 * failure. Run with STRATA_VIRTUAL_NODES too (tests/spawn-*.npN).
 *
 * Usage: test_spawn [--children N] [--rounds R]
 */
#include "config.h"

#include "st_test.h"

#include <complex.h>
#include <dirent.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define WATCHDOG_S  240          /* a step (a call, a spawn) that long is a hang: a failure */
#define WATCHDOG_STR "240"
#define LARGE_BYTES (600 * 1024) /* past the default segment's chunk (512K) */

/* ---- the types the fast path takes, and a reference for each ---- */

typedef enum { K_INT, K_UINT, K_FLOAT, K_COMPLEX, K_PAIR, K_BOOL } kind_t;
enum { O_SUM, O_PROD, O_MIN, O_MAX, O_LAND, O_LOR, O_LXOR, O_BAND, O_BOR, O_BXOR, O_MAXLOC,
       O_MINLOC, O_LAST };

#define OPS_ARITH   ((1u << O_SUM) | (1u << O_PROD) | (1u << O_MIN) | (1u << O_MAX))
#define OPS_LOGICAL ((1u << O_LAND) | (1u << O_LOR) | (1u << O_LXOR))
#define OPS_BITS    ((1u << O_BAND) | (1u << O_BOR) | (1u << O_BXOR))
#define OPS_C_INT   (OPS_ARITH | OPS_LOGICAL | OPS_BITS)
#define OPS_F_INT   (OPS_ARITH | OPS_BITS)
#define OPS_COMPLEX ((1u << O_SUM) | (1u << O_PROD))
#define OPS_PAIR    ((1u << O_MAXLOC) | (1u << O_MINLOC))

typedef struct {
    const char  *name;
    MPI_Datatype type;
    kind_t       kind;
    size_t       size;   /* (of a pair: its value's; of a complex: the whole) */
    unsigned     ops;
} type_t;

static type_t types[64];
static int ntypes;

static const char *const op_names[O_LAST] = {"SUM", "PROD", "MIN", "MAX", "LAND", "LOR",
                                             "LXOR", "BAND", "BOR", "BXOR", "MAXLOC",
                                             "MINLOC"};

static MPI_Op op_mpi(int o)
{
    switch (o) {
    case O_SUM:    return MPI_SUM;
    case O_PROD:   return MPI_PROD;
    case O_MIN:    return MPI_MIN;
    case O_MAX:    return MPI_MAX;
    case O_LAND:   return MPI_LAND;
    case O_LOR:    return MPI_LOR;
    case O_LXOR:   return MPI_LXOR;
    case O_BAND:   return MPI_BAND;
    case O_BOR:    return MPI_BOR;
    case O_BXOR:   return MPI_BXOR;
    case O_MAXLOC: return MPI_MAXLOC;
    default:       return MPI_MINLOC;
    }
}

static void type_add(const char *name, MPI_Datatype t, kind_t kind, size_t size, unsigned ops)
{
    int s = 0;

    if (t == MPI_DATATYPE_NULL || MPI_Type_size(t, &s) != MPI_SUCCESS || s <= 0) {
        return;   /* (a Fortran type of a build without Fortran) */
    }
    types[ntypes++] = (type_t){name, t, kind, (kind == K_INT || kind == K_UINT ||
                                               kind == K_FLOAT) ? (size_t)s : size, ops};
}

#define TYPE(_t, _kind, _size, _ops) type_add(#_t, _t, _kind, _size, _ops)

static void types_init(void)
{
    TYPE(MPI_SIGNED_CHAR, K_INT, 1, OPS_C_INT);
    TYPE(MPI_UNSIGNED_CHAR, K_UINT, 1, OPS_C_INT);
    TYPE(MPI_SHORT, K_INT, 2, OPS_C_INT);
    TYPE(MPI_UNSIGNED_SHORT, K_UINT, 2, OPS_C_INT);
    TYPE(MPI_INT, K_INT, 4, OPS_C_INT);
    TYPE(MPI_UNSIGNED, K_UINT, 4, OPS_C_INT);
    TYPE(MPI_LONG, K_INT, 8, OPS_C_INT);
    TYPE(MPI_UNSIGNED_LONG, K_UINT, 8, OPS_C_INT);
    TYPE(MPI_LONG_LONG_INT, K_INT, 8, OPS_C_INT);
    TYPE(MPI_UNSIGNED_LONG_LONG, K_UINT, 8, OPS_C_INT);
    TYPE(MPI_INT8_T, K_INT, 1, OPS_C_INT);
    TYPE(MPI_UINT8_T, K_UINT, 1, OPS_C_INT);
    TYPE(MPI_INT16_T, K_INT, 2, OPS_C_INT);
    TYPE(MPI_UINT16_T, K_UINT, 2, OPS_C_INT);
    TYPE(MPI_INT32_T, K_INT, 4, OPS_C_INT);
    TYPE(MPI_UINT32_T, K_UINT, 4, OPS_C_INT);
    TYPE(MPI_INT64_T, K_INT, 8, OPS_C_INT);
    TYPE(MPI_UINT64_T, K_UINT, 8, OPS_C_INT);
    TYPE(MPI_AINT, K_INT, 8, OPS_F_INT);
    TYPE(MPI_OFFSET, K_INT, 8, OPS_F_INT);
    TYPE(MPI_COUNT, K_INT, 8, OPS_F_INT);
    TYPE(MPI_BYTE, K_UINT, 1, OPS_BITS);
    TYPE(MPI_C_BOOL, K_BOOL, sizeof(_Bool), OPS_LOGICAL);
    TYPE(MPI_FLOAT, K_FLOAT, 4, OPS_ARITH);
    TYPE(MPI_DOUBLE, K_FLOAT, 8, OPS_ARITH);
    TYPE(MPI_LONG_DOUBLE, K_FLOAT, sizeof(long double), OPS_ARITH);
    TYPE(MPI_C_FLOAT_COMPLEX, K_COMPLEX, sizeof(float _Complex), OPS_COMPLEX);
    TYPE(MPI_C_DOUBLE_COMPLEX, K_COMPLEX, sizeof(double _Complex), OPS_COMPLEX);
    TYPE(MPI_C_LONG_DOUBLE_COMPLEX, K_COMPLEX, sizeof(long double _Complex), OPS_COMPLEX);
    TYPE(MPI_DOUBLE_INT, K_PAIR, sizeof(pair_double_int_t), OPS_PAIR);
    TYPE(MPI_FLOAT_INT, K_PAIR, sizeof(pair_float_int_t), OPS_PAIR);
    TYPE(MPI_LONG_INT, K_PAIR, sizeof(pair_long_int_t), OPS_PAIR);
    TYPE(MPI_2INT, K_PAIR, sizeof(pair_2int_t), OPS_PAIR);
    TYPE(MPI_SHORT_INT, K_PAIR, sizeof(pair_short_int_t), OPS_PAIR);
    TYPE(MPI_LONG_DOUBLE_INT, K_PAIR, sizeof(pair_ldouble_int_t), OPS_PAIR);
    TYPE(MPI_INTEGER, K_INT, 0, OPS_F_INT);
    TYPE(MPI_INTEGER1, K_INT, 0, OPS_F_INT);
    TYPE(MPI_INTEGER2, K_INT, 0, OPS_F_INT);
    TYPE(MPI_INTEGER4, K_INT, 0, OPS_F_INT);
    TYPE(MPI_INTEGER8, K_INT, 0, OPS_F_INT);
    TYPE(MPI_REAL, K_FLOAT, 0, OPS_ARITH);
    TYPE(MPI_DOUBLE_PRECISION, K_FLOAT, 0, OPS_ARITH);
    TYPE(MPI_REAL4, K_FLOAT, 0, OPS_ARITH);
    TYPE(MPI_REAL8, K_FLOAT, 0, OPS_ARITH);
    TYPE(MPI_COMPLEX, K_COMPLEX, sizeof(float _Complex), OPS_COMPLEX);
    TYPE(MPI_DOUBLE_COMPLEX, K_COMPLEX, sizeof(double _Complex), OPS_COMPLEX);
}

static void int_store(void *p, size_t size, uint64_t v)
{
    switch (size) {
    case 1:  *(uint8_t *)p = (uint8_t)v; break;
    case 2:  *(uint16_t *)p = (uint16_t)v; break;
    case 4:  *(uint32_t *)p = (uint32_t)v; break;
    default: *(uint64_t *)p = v; break;
    }
}

/* an integer element, sign- or zero-extended to 64 bits */
static int64_t int_load(const void *p, size_t size, int is_signed)
{
    switch (size) {
    case 1:  return is_signed ? *(const int8_t *)p : *(const uint8_t *)p;
    case 2:  return is_signed ? *(const int16_t *)p : *(const uint16_t *)p;
    case 4:  return is_signed ? *(const int32_t *)p : (int64_t)*(const uint32_t *)p;
    default: return *(const int64_t *)p;
    }
}

#define PAIR_SET(_pt, _p, _v, _i) (((_pt *)(_p))->v = (_v), ((_pt *)(_p))->i = (_i))

/* -1, 1 or 2: products exact, and no zero (a complex product's zero parts would take
 * signs that depend on the order of the factors) */
static int prod_factor(uint64_t x)
{
    return (x % 3 == 0) ? 2 : (x % 3 == 1) ? 1 : -1;
}

/* Element @a i of rank @a r's input in call @a call, into @a p. Floating values are
 * small integers: exact in any order of reduction. */
static void elem(const type_t *t, int o, uint64_t call, int r, size_t i, void *p)
{
    uint64_t x = st_test_rand(call, r, i);
    int small = (o == O_PROD) ? prod_factor(x) : (int)(x % 2001) - 1000;
    int v = (int)(x % 7), idx = (int)((x >> 32) % 5);

    if (o == O_LAND || o == O_LOR || o == O_LXOR) {
        x = (x % 4 == 0) ? 0 : (x >> 8);
    }
    switch (t->kind) {
    case K_INT:
    case K_UINT:
        int_store(p, t->size, (o == O_PROD) ? (uint64_t)(int64_t)small : x);
        break;
    case K_BOOL:
        *(_Bool *)p = (x != 0);
        break;
    case K_FLOAT:
        if (t->size == 4) {
            *(float *)p = (float)small;
        } else if (t->size == 8) {
            *(double *)p = (double)small;
        } else {
            memset(p, 0, t->size);
            *(long double *)p = (long double)small;
        }
        break;
    case K_COMPLEX: {
        int im = (o == O_PROD) ? prod_factor(x >> 20) : (int)((x >> 20) % 2001) - 1000;

        memset(p, 0, t->size);
        if (t->size == sizeof(float _Complex)) {
            *(float _Complex *)p = (float)small + (float)im * I;
        } else if (t->size == sizeof(double _Complex)) {
            *(double _Complex *)p = (double)small + (double)im * I;
        } else {
            *(long double _Complex *)p = (long double)small + (long double)im * I;
        }
        break;
    }
    default:
        memset(p, 0, t->size);
        if (t->type == MPI_DOUBLE_INT) {
            PAIR_SET(pair_double_int_t, p, v, idx);
        } else if (t->type == MPI_FLOAT_INT) {
            PAIR_SET(pair_float_int_t, p, (float)v, idx);
        } else if (t->type == MPI_LONG_INT) {
            PAIR_SET(pair_long_int_t, p, v, idx);
        } else if (t->type == MPI_2INT) {
            PAIR_SET(pair_2int_t, p, v, idx);
        } else if (t->type == MPI_SHORT_INT) {
            PAIR_SET(pair_short_int_t, p, (short)v, idx);
        } else {
            PAIR_SET(pair_ldouble_int_t, p, v, idx);
        }
        break;
    }
}

#define FLOAT_OP(_t) \
    do { \
        _t _a = *(_t *)acc, _b = *(const _t *)x; \
        *(_t *)acc = (o == O_SUM) ? _a + _b : (o == O_PROD) ? _a * _b \
                   : (o == O_MIN) ? (_b < _a ? _b : _a) : (_b > _a ? _b : _a); \
    } while (0)
#define COMPLEX_OP(_t) \
    do { \
        _t _a = *(_t *)acc, _b = *(const _t *)x; \
        *(_t *)acc = (o == O_SUM) ? _a + _b : _a * _b; \
    } while (0)
/* MAXLOC/MINLOC: the better value; on a tie the lower index */
#define PAIR_OP(_pt) \
    do { \
        _pt *_a = (_pt *)acc; \
        const _pt *_b = (const _pt *)x; \
        if (o == O_MAXLOC ? _b->v > _a->v : _b->v < _a->v) { \
            *_a = *_b; \
        } else if (_b->v == _a->v && _b->i < _a->i) { \
            _a->i = _b->i; \
        } \
    } while (0)
#define PAIR_SAME(_pt) \
    (((const _pt *)a)->v == ((const _pt *)b)->v && ((const _pt *)a)->i == ((const _pt *)b)->i)

/* acc = acc op x, as C computes it (integers wrap) */
static void combine(const type_t *t, int o, void *acc, const void *x)
{
    int sg = (t->kind == K_INT);
    int64_t a, b;
    uint64_t r = 0;

    switch (t->kind) {
    case K_INT:
    case K_UINT:
        a = int_load(acc, t->size, sg);
        b = int_load(x, t->size, sg);
        switch (o) {
        case O_SUM:  r = (uint64_t)a + (uint64_t)b; break;
        case O_PROD: r = (uint64_t)a * (uint64_t)b; break;
        case O_MIN:  r = (uint64_t)((sg ? a < b : (uint64_t)a < (uint64_t)b) ? a : b); break;
        case O_MAX:  r = (uint64_t)((sg ? a > b : (uint64_t)a > (uint64_t)b) ? a : b); break;
        case O_LAND: r = (a != 0 && b != 0); break;
        case O_LOR:  r = (a != 0 || b != 0); break;
        case O_LXOR: r = ((a != 0) != (b != 0)); break;
        case O_BAND: r = (uint64_t)(a & b); break;
        case O_BOR:  r = (uint64_t)(a | b); break;
        default:     r = (uint64_t)(a ^ b); break;
        }
        int_store(acc, t->size, r);
        break;
    case K_BOOL: {
        _Bool p = *(_Bool *)acc, q = *(const _Bool *)x;

        *(_Bool *)acc = (o == O_LAND) ? (p && q) : (o == O_LOR) ? (p || q) : (p != q);
        break;
    }
    case K_FLOAT:
        if (t->size == 4) {
            FLOAT_OP(float);
        } else if (t->size == 8) {
            FLOAT_OP(double);
        } else {
            FLOAT_OP(long double);
        }
        break;
    case K_COMPLEX:
        if (t->size == sizeof(float _Complex)) {
            COMPLEX_OP(float _Complex);
        } else if (t->size == sizeof(double _Complex)) {
            COMPLEX_OP(double _Complex);
        } else {
            COMPLEX_OP(long double _Complex);
        }
        break;
    default:
        if (t->type == MPI_DOUBLE_INT) {
            PAIR_OP(pair_double_int_t);
        } else if (t->type == MPI_FLOAT_INT) {
            PAIR_OP(pair_float_int_t);
        } else if (t->type == MPI_LONG_INT) {
            PAIR_OP(pair_long_int_t);
        } else if (t->type == MPI_2INT) {
            PAIR_OP(pair_2int_t);
        } else if (t->type == MPI_SHORT_INT) {
            PAIR_OP(pair_short_int_t);
        } else {
            PAIR_OP(pair_ldouble_int_t);
        }
        break;
    }
}

/* Do the meaningful bytes of two elements agree (long double's and pairs' padding
 * is not data)? */
static int same(const type_t *t, const void *a, const void *b)
{
    if (t->kind == K_FLOAT && t->size > 8) {
        return *(const long double *)a == *(const long double *)b;
    }
    if (t->kind == K_COMPLEX && t->size > 16) {
        return *(const long double _Complex *)a == *(const long double _Complex *)b;
    }
    if (t->kind != K_PAIR) {
        return memcmp(a, b, t->size) == 0;
    }
    if (t->type == MPI_DOUBLE_INT) {
        return PAIR_SAME(pair_double_int_t);
    } else if (t->type == MPI_FLOAT_INT) {
        return PAIR_SAME(pair_float_int_t);
    } else if (t->type == MPI_LONG_INT) {
        return PAIR_SAME(pair_long_int_t);
    } else if (t->type == MPI_2INT) {
        return PAIR_SAME(pair_2int_t);
    } else if (t->type == MPI_SHORT_INT) {
        return PAIR_SAME(pair_short_int_t);
    }
    return PAIR_SAME(pair_ldouble_int_t);
}

/* no padding: the ranks' bytes themselves must agree */
static int dense(const type_t *t)
{
    return !(t->kind == K_FLOAT && t->size == sizeof(long double)) &&
           !(t->kind == K_COMPLEX && t->size == sizeof(long double _Complex)) &&
           !(t->kind == K_PAIR && t->type != MPI_FLOAT_INT && t->type != MPI_2INT);
}

/* ---- checked calls ---- */

/* the calls so far: the inputs' seed, the same on every member (both jobs make the
 * same calls in the same order, from 0 at each spawn) */
static uint64_t ncalls;

/*
 * One MPI_Allreduce of @a count elements of @a t with op @a o on @a comm (in place or
 * not), checked against the reference from every member's inputs (rank r of @a comm
 * contributes the inputs of r), and on Strata's path if @a fast. Collective.
 */
static void check_call(MPI_Comm comm, const type_t *t, int o, size_t count, int inplace,
                       int fast, const char *what)
{
    size_t es = t->size, bytes = count * es, e;
    unsigned char *sbuf = malloc(bytes + 1), *rbuf = malloc(bytes + 1);
    unsigned char *expect = calloc(bytes + 1, 1), *x = malloc(es);
    uint64_t call = ++ncalls, fast0 = 0;
    int rank, size, k;
    long wrong = 0;

    alarm(WATCHDOG_S);   /* (re-armed at each step: a slow machine is no hang) */
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    for (e = 0; e < count; e++) {
        elem(t, o, call, rank, e, sbuf + e * es);
    }
    memset(rbuf, 0x5a, bytes + 1);
    if (inplace) {
        memcpy(rbuf, sbuf, bytes);
    }
    if (fast) {
        fast0 = st_test_fast_calls(comm);
    }
    CHECKF(MPI_Allreduce(inplace ? MPI_IN_PLACE : sbuf, rbuf, (int)count, t->type, op_mpi(o),
                         comm) == MPI_SUCCESS, "%s: %s %s: MPI_Allreduce failed", what,
           t->name, op_names[o]);
    for (k = 0; k < size; k++) {
        for (e = 0; e < count; e++) {
            if (k == 0) {
                elem(t, o, call, k, e, expect + e * es);
            } else {
                elem(t, o, call, k, e, x);
                combine(t, o, expect + e * es, x);
            }
        }
    }
    for (e = 0; e < count; e++) {
        if (!same(t, rbuf + e * es, expect + e * es) && wrong++ < 2) {
            CHECKF(0, "%s: %s %s count %zu%s over %d ranks: element %zu wrong", what, t->name,
                   op_names[o], count, inplace ? " in place" : "", size, e);
        }
    }
    CHECKF(rbuf[bytes] == 0x5a, "%s: %s count %zu: a byte past the receive buffer written",
           what, t->name, count);
    if (dense(t)) {
        CHECKF(st_test_same_everywhere(comm, rbuf, bytes), "%s: %s %s count %zu: ranks disagree",
               what, t->name, op_names[o], count);
    }
    if (fast) {
        CHECKF(st_test_fast_calls(comm) == fast0 + 1,
               "%s: %s %s count %zu over %d ranks not on Strata's path", what, t->name,
               op_names[o], count, size);
    }
    free(sbuf);
    free(rbuf);
    free(expect);
    free(x);
}

static const type_t *type_named(MPI_Datatype d)
{
    int i;

    for (i = 0; i < ntypes && types[i].type != d; i++) {
    }
    return &types[i];
}

/* Can a communicator of @a size ranks take Strata's path here? (Spanning virtual nodes
 * takes UCX; one rank never.) */
static int fast_expected(MPI_Comm comm)
{
    int size;

    MPI_Comm_size(comm, &size);
    return size > 1 &&
           (st_test_multinode_fast() || atoi(st_test_config("STRATA_VIRTUAL_NODES")) <= 1);
}

/* A few calls (small and large, in place or not) on @a comm. */
static void check_some(MPI_Comm comm, const char *what)
{
    int fast = fast_expected(comm);

    check_call(comm, type_named(MPI_INT), O_SUM, 37, 0, fast, what);
    check_call(comm, type_named(MPI_DOUBLE), O_SUM, LARGE_BYTES / 8, 1, fast, what);
    check_call(comm, type_named(MPI_UINT64_T), O_BXOR, 1, 1, fast, what);
    check_call(comm, type_named(MPI_DOUBLE_INT), O_MAXLOC, 1000, 0, fast, what);
}

/* Every type x op the fast path takes, at several counts, on @a comm. */
static void check_all_types(MPI_Comm comm, const char *what)
{
    static const size_t counts[] = {0, 1, 37};
    int fast = fast_expected(comm), i, o, c, n = 0;

    for (i = 0; i < ntypes; i++) {
        for (o = 0; o < O_LAST; o++) {
            if (!(types[i].ops & (1u << o))) {
                continue;
            }
            for (c = 0; c < (int)(sizeof(counts) / sizeof(counts[0])); c++) {
                check_call(comm, &types[i], o, counts[c], (n++ % 2), fast && counts[c] > 0,
                           what);
            }
        }
        /* one call past the chunk per type */
        check_call(comm, &types[i], (types[i].ops & (1u << O_MAX)) ? O_MAX
                                    : (types[i].ops & (1u << O_BOR)) ? O_BOR
                                    : (types[i].ops & (1u << O_LOR)) ? O_LOR
                                    : (types[i].ops & (1u << O_SUM)) ? O_SUM : O_MINLOC,
                   LARGE_BYTES / types[i].size, n++ % 2, fast, what);
    }
}

/* On a merged communicator: every type in the first spawn's, a few calls after. */
static void check_merged(MPI_Comm merged, const char *phase, const char *what)
{
    if (strcmp(phase, "first") == 0) {
        check_all_types(merged, what);
    } else {
        check_some(merged, what);
    }
}

/* Communicators made from @a merged and freed, @a rounds times over. */
static void check_churn(MPI_Comm merged, int is_child, int rounds)
{
    MPI_Comm c;
    int r, rank, size;

    MPI_Comm_rank(merged, &rank);
    MPI_Comm_size(merged, &size);
    for (r = 0; r < rounds; r++) {
        ST_TEST_MPI(MPI_Comm_dup(merged, &c));
        check_some(c, "dup of the merged");
        ST_TEST_MPI(MPI_Comm_free(&c));
        ST_TEST_MPI(MPI_Comm_split(merged, rank % 2, rank, &c));
        check_some(c, "odd/even split of the merged");
        ST_TEST_MPI(MPI_Comm_free(&c));
        ST_TEST_MPI(MPI_Comm_split(merged, 0, size - rank, &c));
        check_some(c, "the merged reversed");
        ST_TEST_MPI(MPI_Comm_free(&c));
        ST_TEST_MPI(MPI_Comm_split(merged, is_child, rank, &c));
        check_some(c, is_child ? "the children alone" : "the parents alone");
        ST_TEST_MPI(MPI_Comm_free(&c));
    }
}

/* The intercommunicator: Open MPI's allreduce (each group gets the other's sum). */
static void check_inter(MPI_Comm inter, int is_child)
{
    int rsize, r, mine, got = -1, want = 0;
    uint64_t fb0 = st_test_fallback_calls(inter, STRATA_FALLBACK_INTERCOMM);

    MPI_Comm_remote_size(inter, &rsize);
    MPI_Comm_rank(inter, &r);
    mine = (is_child ? 1000 : 1) * (r + 1);
    for (r = 0; r < rsize; r++) {
        want += (is_child ? 1 : 1000) * (r + 1);
    }
    ST_TEST_MPI(MPI_Allreduce(&mine, &got, 1, MPI_INT, MPI_SUM, inter));
    CHECKF(got == want, "intercommunicator: %d, expected %d", got, want);
    CHECK(st_test_fallback_calls(inter, STRATA_FALLBACK_INTERCOMM) == fb0 + 1);
}

/* With STRATA_SHM_METHOD=posix: no segment of this process left in /dev/shm. */
static void check_no_names(const char *what)
{
    char prefix[64];
    struct dirent *d;
    DIR *dir = opendir("/dev/shm");

    snprintf(prefix, sizeof(prefix), "strata-%d-", (int)getpid());
    while (dir != NULL && (d = readdir(dir)) != NULL) {
        CHECKF(strncmp(d->d_name, prefix, strlen(prefix)) != 0, "%s: /dev/shm/%s left",
               what, d->d_name);
    }
    if (dir != NULL) {
        closedir(dir);
    }
}

/* Both jobs at once, each on its own MPI_COMM_WORLD. */
static void check_own_world(void)
{
    int i;

    for (i = 0; i < 3; i++) {
        check_some(MPI_COMM_WORLD, "the job's own MPI_COMM_WORLD");
    }
}

/* What both sides of @a inter (the spawn's) check together: the intercommunicator,
 * both merge orders, communicators made from the merged one, then each job on its own
 * world at once. @a child: this side is the children. */
static void meet(MPI_Comm inter, int child, const char *phase, int rounds)
{
    MPI_Comm merged;

    check_inter(inter, child);
    ST_TEST_MPI(MPI_Intercomm_merge(inter, child, &merged));
    check_merged(merged, phase, "merged, parents first");
    ST_TEST_MPI(MPI_Comm_free(&merged));
    ST_TEST_MPI(MPI_Intercomm_merge(inter, !child, &merged));
    check_merged(merged, phase, "merged, children first");
    check_churn(merged, child, rounds);
    ST_TEST_MPI(MPI_Comm_free(&merged));
    ST_TEST_MPI(MPI_Barrier(inter));
    check_own_world();
    ST_TEST_MPI(MPI_Barrier(inter));
}

/* The same two jobs connected (MPI_Comm_connect/accept) and merged; disconnects. */
static void meet_connected(MPI_Comm *inter2, int child)
{
    MPI_Comm merged;

    check_inter(*inter2, child);
    ST_TEST_MPI(MPI_Intercomm_merge(*inter2, child, &merged));
    check_some(merged, "connected and merged");
    check_churn(merged, child, 1);
    ST_TEST_MPI(MPI_Comm_free(&merged));
    ST_TEST_MPI(MPI_Comm_disconnect(inter2));
}

/* Jobs whose STRATA_* settings differ, merged children first (rank 0 of the merged
 * is a child, whose log level is error: the difference is said at warning level, and
 * the harness fails on stderr): Open MPI's calls, counted as 'config'; disconnects. */
static void meet_unalike(MPI_Comm *inter, int child)
{
    MPI_Comm merged;
    uint64_t fb0;

    ST_TEST_MPI(MPI_Intercomm_merge(*inter, !child, &merged));
    fb0 = st_test_fallback_calls(merged, STRATA_FALLBACK_CONFIG);
    check_call(merged, type_named(MPI_INT), O_SUM, 37, 0, 0, "jobs with other settings");
    check_call(merged, type_named(MPI_DOUBLE), O_SUM, LARGE_BYTES / 8, 1, 0,
               "jobs with other settings");
    CHECK(st_test_fallback_calls(merged, STRATA_FALLBACK_CONFIG) == fb0 + 2);
    ST_TEST_MPI(MPI_Comm_free(&merged));
    ST_TEST_MPI(MPI_Comm_disconnect(inter));
}

/* ---- the children ---- */

/* A child of phase @a phase ("first", "second", "env"). */
static int child_main(MPI_Comm parent, const char *phase, int rounds)
{
    char port[MPI_MAX_PORT_NAME];
    MPI_Comm inter2;

    if (strcmp(phase, "env") == 0) {
        meet_unalike(&parent, 1);
        return st_test_finish("test_spawn (children, other settings)");
    }
    meet(parent, 1, phase, rounds);
    if (strcmp(phase, "first") == 0) {
        /* connect to the port the parents opened */
        ST_TEST_MPI(MPI_Bcast(port, MPI_MAX_PORT_NAME, MPI_CHAR, 0, parent));
        ST_TEST_MPI(MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter2));
        meet_connected(&inter2, 1);
    }
    check_no_names("children");
    ST_TEST_MPI(MPI_Comm_disconnect(&parent));
    return st_test_finish("test_spawn (children)");
}

/* ---- the parents ---- */

/*
 * Spawn @a nchildren children of phase @a phase, with this process's STRATA_* and
 * UCX_* variables and LD_LIBRARY_PATH (Open MPI gives spawned processes mpirun's
 * environment, not the parent's: a spec's "env STRATA_...=", or libtool's wrapper's
 * library path, reaches only the parents), and @a other (a
 * newline-separated NAME=VALUE list setting STRATA_CHECK_ARGS and STRATA_LOG_LEVEL, or
 * NULL).
 */
static MPI_Comm spawn(char *self, const char *phase, int nchildren, const char *other,
                      int rounds)
{
    extern char **environ;
    char rounds_s[16], *args[] = {"--child", (char *)phase, "--rounds", rounds_s, NULL};
    char env[8192] = "", **e;
    MPI_Comm inter = MPI_COMM_NULL;
    MPI_Info info;
    size_t used = 0;
    int errs[64];

    snprintf(rounds_s, sizeof(rounds_s), "%d", rounds);
    for (e = environ; *e != NULL && used < sizeof(env); e++) {
        if ((strncmp(*e, "STRATA_", 7) != 0 && strncmp(*e, "UCX_", 4) != 0 &&
             strncmp(*e, "LD_LIBRARY_PATH=", 16) != 0) ||
            (other != NULL && (strncmp(*e, "STRATA_CHECK_ARGS=", 18) == 0 ||
                               strncmp(*e, "STRATA_LOG_LEVEL=", 17) == 0))) {
            continue;   /* (not ours, or one that @a other sets) */
        }
        used += (size_t)snprintf(env + used, sizeof(env) - used, "%s%s", used ? "\n" : "",
                                 *e);
    }
    if (other != NULL && used < sizeof(env)) {
        used += (size_t)snprintf(env + used, sizeof(env) - used, "%s%s", used ? "\n" : "",
                                 other);
    }
    CHECKF(used < sizeof(env), "the children's environment is too long (%zu bytes)", used);
    ST_TEST_MPI(MPI_Info_create(&info));
    if (used > 0) {
        ST_TEST_MPI(MPI_Info_set(info, "env", env));
    }
    alarm(WATCHDOG_S);
    ST_TEST_MPI(MPI_Comm_spawn(self, args, nchildren, info, 0, MPI_COMM_WORLD, &inter, errs));
    MPI_Info_free(&info);
    ncalls = 0;
    return inter;
}

/* A spawned job of phase "first" or "second": what its children check, with them. */
static void parent_phase(char *self, const char *phase, int nchildren, int rounds)
{
    char port[MPI_MAX_PORT_NAME] = "";
    MPI_Comm inter, inter2;
    int rank, root;

    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    root  = (rank == 0) ? MPI_ROOT : MPI_PROC_NULL;
    inter = spawn(self, phase, nchildren, NULL, rounds);
    if (inter == MPI_COMM_NULL) {
        return;
    }
    meet(inter, 0, phase, rounds);
    if (strcmp(phase, "first") == 0) {
        if (rank == 0) {
            ST_TEST_MPI(MPI_Open_port(MPI_INFO_NULL, port));
        }
        ST_TEST_MPI(MPI_Bcast(port, MPI_MAX_PORT_NAME, MPI_CHAR, root, inter));
        ST_TEST_MPI(MPI_Comm_accept(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter2));
        meet_connected(&inter2, 0);
        if (rank == 0) {
            ST_TEST_MPI(MPI_Close_port(port));
        }
    }
    ST_TEST_MPI(MPI_Comm_disconnect(&inter));
}

/* Children with other STRATA_* settings (MPI_Info "env"). */
static void parent_env(char *self, int nchildren)
{
    MPI_Comm inter;
    /* the opposite of ours for a knob that changes the first thing a rank does */
    const char *env = (strcmp(st_test_config("STRATA_CHECK_ARGS"), "y") == 0)
                              ? "STRATA_CHECK_ARGS=n\nSTRATA_LOG_LEVEL=error"
                              : "STRATA_CHECK_ARGS=y\nSTRATA_LOG_LEVEL=error";

    inter = spawn(self, "env", nchildren, env, 1);
    if (inter == MPI_COMM_NULL) {
        return;
    }
    meet_unalike(&inter, 0);
}

static void watchdog(int sig)
{
    static const char msg[] = "test_spawn: a step took " WATCHDOG_STR " s: a hang\n";

    (void)sig;
    if (write(STDOUT_FILENO, msg, sizeof(msg) - 1) < 0) {
        _exit(3);
    }
    _exit(3);
}

int main(int argc, char **argv)
{
    int nchildren = 2, rounds = 2, i;
    const char *phase = NULL;
    char self[4096];
    ssize_t n;
    MPI_Comm parent;

    signal(SIGALRM, watchdog);
    alarm(WATCHDOG_S);
    MPI_Init(&argc, &argv);
    for (i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--children") == 0 && i + 1 < argc) {
            nchildren = atoi(argv[++i]);
        } else if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc) {
            rounds = atoi(argv[++i]);
        } else if (strcmp(argv[i], "--child") == 0 && i + 1 < argc) {
            phase = argv[++i];
        }
    }
    types_init();
    MPI_Comm_get_parent(&parent);
    if (parent != MPI_COMM_NULL) {
        return child_main(parent, phase != NULL ? phase : "first", rounds);
    }
    if (nchildren < 1 || nchildren > 16) {
        fprintf(stderr, "usage: test_spawn [--children N (1-16)] [--rounds R]\n");
        MPI_Finalize();
        return 2;
    }
    /* the children run this very program (not a libtool wrapper around it) */
    n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    if (n <= 0) {
        fprintf(stderr, "test_spawn: /proc/self/exe unreadable\n");
        MPI_Finalize();
        return 2;
    }
    self[n] = '\0';
    parent_phase(self, "first", nchildren, rounds);
    parent_phase(self, "second", nchildren, rounds);
    parent_env(self, nchildren);
    check_no_names("parents");
    return st_test_finish("test_spawn (parents)");
}
