/*
 * Unit test of the reduction engine (coll/st_reduce.c).
 *
 * 1. The kernel table: st_reduce_kernel(type, op) is non-NULL exactly for the pairs
 *    of the MPI table of predefined ops; st_type_size, st_type_name, st_op_name.
 * 2. Every kernel, through reduce2, reduce3 and st_reduce_fold (1, 2, 3, 5 sources,
 *    counts from 0 to several fold blocks), against a scalar reference written here
 *    independently of the kernels, on pseudo-random data with edge values, and with
 *    guard elements after the output that no kernel may write.
 *
 * Every test function is generated from one row per type (T_TYPES), by type class.
 */
#include "config.h"

#include "st_reduce.h"

#include <complex.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define T_MAX_FAILURES 20
#define T_MAX_COUNT    5000
#define T_MAX_SRC      5
#define T_GUARD        4       /* elements after the output that must stay untouched */
#define T_GUARD_BYTE   0xa5

static const size_t t_counts[] = {0, 1, 2, 3, 7, 15, 16, 17, 31, 1023, 1025, T_MAX_COUNT};
static const int    t_nsrcs[]  = {1, 2, 3, 5};

static int t_failures;

static void t_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void t_fail(const char *fmt, ...)
{
    va_list ap;

    if (++t_failures > T_MAX_FAILURES) {
        return;
    }
    va_start(ap, fmt);
    fprintf(stderr, "test_reduce: FAIL: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
}

/* splitmix64 with a fixed seed: the same data on every run */
static uint64_t t_rng_state = 0x5eed0123456789abULL;

static uint64_t t_rand(void)
{
    uint64_t z = (t_rng_state += 0x9e3779b97f4a7c15ULL);

    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* the pair types, as MPI lays them out */
typedef struct { float v; int i; }       t_float_int_t;
typedef struct { double v; int i; }      t_double_int_t;
typedef struct { long v; int i; }        t_long_int_t;
typedef struct { int v; int i; }         t_2int_t;
typedef struct { short v; int i; }       t_short_int_t;
typedef struct { long double v; int i; } t_ldouble_int_t;

/* ---- the ops each class of types must have (the MPI table) ---- */
#define T_BIT(_op)   (1u << (_op))
#define T_OPS_INT    (T_BIT(ST_OP_SUM) | T_BIT(ST_OP_PROD) | T_BIT(ST_OP_MIN) | \
                      T_BIT(ST_OP_MAX) | T_BIT(ST_OP_LAND) | T_BIT(ST_OP_LOR) | \
                      T_BIT(ST_OP_LXOR) | T_BIT(ST_OP_BAND) | T_BIT(ST_OP_BOR) | \
                      T_BIT(ST_OP_BXOR))
#define T_OPS_FLT    (T_BIT(ST_OP_SUM) | T_BIT(ST_OP_PROD) | T_BIT(ST_OP_MIN) | \
                      T_BIT(ST_OP_MAX))
#define T_OPS_CPX    (T_BIT(ST_OP_SUM) | T_BIT(ST_OP_PROD))
#define T_OPS_LOG    (T_BIT(ST_OP_LAND) | T_BIT(ST_OP_LOR) | T_BIT(ST_OP_LXOR))
#define T_OPS_BYTE   (T_BIT(ST_OP_BAND) | T_BIT(ST_OP_BOR) | T_BIT(ST_OP_BXOR))
#define T_OPS_PAIR   (T_BIT(ST_OP_MAXLOC) | T_BIT(ST_OP_MINLOC))

/*
 * One row per st_type_t, in enum order: id, C type, class, auxiliary type (the real
 * type of a complex, the value type of a pair), how to compare two values (bitwise,
 * or by value where the representation has padding: long double).
 */
#define T_TYPES(_) \
    _(CHAR, char, INT, void, T_EQ_BITS) \
    _(SCHAR, signed char, INT, void, T_EQ_BITS) \
    _(UCHAR, unsigned char, INT, void, T_EQ_BITS) \
    _(SHORT, short, INT, void, T_EQ_BITS) \
    _(USHORT, unsigned short, INT, void, T_EQ_BITS) \
    _(INT, int, INT, void, T_EQ_BITS) \
    _(UINT, unsigned, INT, void, T_EQ_BITS) \
    _(LONG, long, INT, void, T_EQ_BITS) \
    _(ULONG, unsigned long, INT, void, T_EQ_BITS) \
    _(LLONG, long long, INT, void, T_EQ_BITS) \
    _(ULLONG, unsigned long long, INT, void, T_EQ_BITS) \
    _(INT8, int8_t, INT, void, T_EQ_BITS) \
    _(INT16, int16_t, INT, void, T_EQ_BITS) \
    _(INT32, int32_t, INT, void, T_EQ_BITS) \
    _(INT64, int64_t, INT, void, T_EQ_BITS) \
    _(UINT8, uint8_t, INT, void, T_EQ_BITS) \
    _(UINT16, uint16_t, INT, void, T_EQ_BITS) \
    _(UINT32, uint32_t, INT, void, T_EQ_BITS) \
    _(UINT64, uint64_t, INT, void, T_EQ_BITS) \
    _(AINT, MPI_Aint, INT, void, T_EQ_BITS) \
    _(OFFSET, MPI_Offset, INT, void, T_EQ_BITS) \
    _(COUNT, MPI_Count, INT, void, T_EQ_BITS) \
    _(FLOAT, float, FLT, void, T_EQ_BITS) \
    _(DOUBLE, double, FLT, void, T_EQ_BITS) \
    _(LDOUBLE, long double, FLT, void, T_EQ_VAL) \
    _(BOOL, bool, LOG, void, T_EQ_BITS) \
    _(CFLOAT, float _Complex, CPX, float, T_EQ_BITS) \
    _(CDOUBLE, double _Complex, CPX, double, T_EQ_BITS) \
    _(CLDOUBLE, long double _Complex, CPX, long double, T_EQ_CVAL) \
    _(BYTE, uint8_t, BYTE, void, T_EQ_BITS) \
    _(FLOAT_INT, t_float_int_t, PAIR, float, T_EQ_BITS) \
    _(DOUBLE_INT, t_double_int_t, PAIR, double, T_EQ_BITS) \
    _(LONG_INT, t_long_int_t, PAIR, long, T_EQ_BITS) \
    _(TWO_INT, t_2int_t, PAIR, int, T_EQ_BITS) \
    _(SHORT_INT, t_short_int_t, PAIR, short, T_EQ_BITS) \
    _(LDOUBLE_INT, t_ldouble_int_t, PAIR, long double, T_EQ_VAL)

#define T_EQ_BITS(a, b) (memcmp(&(a), &(b), sizeof(a)) == 0)
#define T_EQ_VAL(a, b)  ((a) == (b))
#define T_EQ_CVAL(a, b) (creall(a) == creall(b) && cimagl(a) == cimagl(b))

/* element equality by class: pairs compare their two fields */
#define T_SAME_INT(_eq, a, b)  _eq(a, b)
#define T_SAME_FLT(_eq, a, b)  _eq(a, b)
#define T_SAME_CPX(_eq, a, b)  _eq(a, b)
#define T_SAME_LOG(_eq, a, b)  _eq(a, b)
#define T_SAME_BYTE(_eq, a, b) _eq(a, b)
#define T_SAME_PAIR(_eq, a, b) (_eq((a).v, (b).v) && (a).i == (b).i)

#define T_IS_SIGNED(_T) ((_T)-1 < (_T)1)
#define T_INT_MAX(_T) \
    (T_IS_SIGNED(_T) ? (_T)((UINT64_C(1) << (sizeof(_T) * CHAR_BIT - 1)) - 1) \
                     : (_T)~UINT64_C(0))
#define T_INT_MIN(_T) (T_IS_SIGNED(_T) ? (_T)(-T_INT_MAX(_T) - 1) : (_T)0)

/*
 * Integers. Sums and products wrap: computed modulo 2^64 in uint64_t, whose low
 * bits are those of the same computation in the unsigned type of the type's width,
 * then converted back (modulo, as GCC and Clang define it).
 */
#define T_DEFINE_INT(_id, _T, _aux) \
    static _T t_op_##_id(st_op_t op, _T a, _T b) \
    { \
        switch (op) { \
        case ST_OP_SUM:  return (_T)((uint64_t)a + (uint64_t)b); \
        case ST_OP_PROD: return (_T)((uint64_t)a * (uint64_t)b); \
        case ST_OP_MIN:  return (a <= b) ? a : b; \
        case ST_OP_MAX:  return (a >= b) ? a : b; \
        case ST_OP_LAND: return (_T)((a != 0 && b != 0) ? 1 : 0); \
        case ST_OP_LOR:  return (_T)((a != 0 || b != 0) ? 1 : 0); \
        case ST_OP_LXOR: return (_T)(((a != 0) != (b != 0)) ? 1 : 0); \
        case ST_OP_BAND: return (_T)(a & b); \
        case ST_OP_BOR:  return (_T)(a | b); \
        case ST_OP_BXOR: return (_T)(a ^ b); \
        default:         return a; \
        } \
    } \
    static void t_gen_##_id(void *buf, size_t n) \
    { \
        _T *x = (_T*)buf; \
        size_t i; \
        for (i = 0; i < n; i++) { \
            uint64_t r = t_rand(); \
            switch (r % 8) { \
            case 0:  x[i] = 0; break; \
            case 1:  x[i] = T_INT_MIN(_T); break; \
            case 2:  x[i] = T_INT_MAX(_T); break; \
            case 3:  x[i] = (_T)((r >> 8) % 4); break; \
            case 4:  x[i] = (_T)-1; break; \
            default: x[i] = (_T)(r >> 8); break; \
            } \
        } \
    } \
    static void t_show_##_id(const void *buf, size_t i, char *s, size_t len) \
    { \
        _T v = ((const _T*)buf)[i]; \
        if (T_IS_SIGNED(_T)) { \
            snprintf(s, len, "%lld", (long long)v); \
        } else { \
            snprintf(s, len, "%llu", (unsigned long long)v); \
        } \
    }

/* Floating point: the same operations in the same order give the same bits. No NaN,
 * no infinity, no -0.0 among the inputs (MIN and MAX of 0.0 and -0.0 are unspecified). */
#define T_FLT_VALUE(_T, r) \
    (((r) % 8 == 0) ? (_T)0 : \
     ((r) % 8 == 1) ? (_T)(int)((r) >> 8 & 3) - (_T)1 : \
     (_T)((int)(((r) >> 8) % 2000001) - 1000000) / (_T)997)

#define T_DEFINE_FLT(_id, _T, _aux) \
    static _T t_op_##_id(st_op_t op, _T a, _T b) \
    { \
        switch (op) { \
        case ST_OP_SUM:  return a + b; \
        case ST_OP_PROD: return a * b; \
        case ST_OP_MIN:  return (a <= b) ? a : b; \
        case ST_OP_MAX:  return (a >= b) ? a : b; \
        default:         return a; \
        } \
    } \
    static void t_gen_##_id(void *buf, size_t n) \
    { \
        _T *x = (_T*)buf; \
        size_t i; \
        for (i = 0; i < n; i++) { \
            uint64_t r = t_rand(); \
            x[i] = T_FLT_VALUE(_T, r); \
        } \
    } \
    static void t_show_##_id(const void *buf, size_t i, char *s, size_t len) \
    { \
        snprintf(s, len, "%.21Lg", (long double)((const _T*)buf)[i]); \
    }

/* Complex: C's complex arithmetic; _aux is the type of the two parts. */
#define T_DEFINE_CPX(_id, _T, _aux) \
    static _T t_op_##_id(st_op_t op, _T a, _T b) \
    { \
        switch (op) { \
        case ST_OP_SUM:  return a + b; \
        case ST_OP_PROD: return a * b; \
        default:         return a; \
        } \
    } \
    static void t_gen_##_id(void *buf, size_t n) \
    { \
        _T *x = (_T*)buf; \
        _aux part[2]; \
        size_t i; \
        for (i = 0; i < n; i++) { \
            uint64_t r0 = t_rand(), r1 = t_rand(); \
            part[0] = T_FLT_VALUE(_aux, r0); \
            part[1] = T_FLT_VALUE(_aux, r1); \
            memcpy(&x[i], part, sizeof(x[i])); \
        } \
    } \
    static void t_show_##_id(const void *buf, size_t i, char *s, size_t len) \
    { \
        long double _Complex v = ((const _T*)buf)[i]; \
        snprintf(s, len, "(%.21Lg, %.21Lg)", creall(v), cimagl(v)); \
    }

/* C bool: logical ops only; a bool holds 0 or 1 */
#define T_DEFINE_LOG(_id, _T, _aux) \
    static _T t_op_##_id(st_op_t op, _T a, _T b) \
    { \
        switch (op) { \
        case ST_OP_LAND: return a && b; \
        case ST_OP_LOR:  return a || b; \
        case ST_OP_LXOR: return a != b; \
        default:         return a; \
        } \
    } \
    static void t_gen_##_id(void *buf, size_t n) \
    { \
        _T *x = (_T*)buf; \
        size_t i; \
        for (i = 0; i < n; i++) { \
            x[i] = (t_rand() & 1) != 0; \
        } \
    } \
    static void t_show_##_id(const void *buf, size_t i, char *s, size_t len) \
    { \
        snprintf(s, len, "%d", (int)((const _T*)buf)[i]); \
    }

/* bytes: bitwise ops only */
#define T_DEFINE_BYTE(_id, _T, _aux) \
    static _T t_op_##_id(st_op_t op, _T a, _T b) \
    { \
        switch (op) { \
        case ST_OP_BAND: return (_T)(a & b); \
        case ST_OP_BOR:  return (_T)(a | b); \
        case ST_OP_BXOR: return (_T)(a ^ b); \
        default:         return a; \
        } \
    } \
    static void t_gen_##_id(void *buf, size_t n) \
    { \
        _T *x = (_T*)buf; \
        size_t i; \
        for (i = 0; i < n; i++) { \
            uint64_t r = t_rand(); \
            x[i] = (r % 4 == 0) ? 0x00 : (r % 4 == 1) ? 0xff : (_T)(r >> 8); \
        } \
    } \
    static void t_show_##_id(const void *buf, size_t i, char *s, size_t len) \
    { \
        snprintf(s, len, "0x%02x", (unsigned)((const _T*)buf)[i]); \
    }

/*
 * Pairs {v, i}: MAXLOC takes the larger value, MINLOC the smaller; on equal values,
 * the lower index. Values come mostly from a set of five, indexes from a set of
 * eight, so that many elements tie on the value and some on both.
 */
#define T_DEFINE_PAIR(_id, _T, _aux) \
    static _T t_op_##_id(st_op_t op, _T a, _T b) \
    { \
        switch (op) { \
        case ST_OP_MAXLOC: \
            if (a.v != b.v) { \
                return (a.v > b.v) ? a : b; \
            } \
            return (a.i <= b.i) ? a : b; \
        case ST_OP_MINLOC: \
            if (a.v != b.v) { \
                return (a.v < b.v) ? a : b; \
            } \
            return (a.i <= b.i) ? a : b; \
        default: \
            return a; \
        } \
    } \
    static void t_gen_##_id(void *buf, size_t n) \
    { \
        _T *x = (_T*)buf; \
        size_t i; \
        memset(buf, 0, n * sizeof(_T)); \
        for (i = 0; i < n; i++) { \
            uint64_t r = t_rand(); \
            x[i].v = (r % 4 == 0) ? (_aux)((int)(r >> 8 & 0x7fff) - 16384) \
                                  : (_aux)((int)(r >> 8 & 0xff) % 5 - 2); \
            x[i].i = (int)(r >> 40 & 7); \
        } \
    } \
    static void t_show_##_id(const void *buf, size_t i, char *s, size_t len) \
    { \
        const _T *x = (const _T*)buf; \
        snprintf(s, len, "{v %.21Lg, i %d}", (long double)x[i].v, x[i].i); \
    }

/* the fold reference (left to right) and the comparison, common to all classes */
#define T_DEFINE_COMMON(_id, _T, _same, _eq) \
    static void t_ref_##_id(st_op_t op, void *out, const void *const *src, int nsrc, \
                            size_t count) \
    { \
        _T *o = (_T*)out; \
        size_t i; \
        int j; \
        for (i = 0; i < count; i++) { \
            _T acc = ((const _T*)src[0])[i]; \
            for (j = 1; j < nsrc; j++) { \
                acc = t_op_##_id(op, acc, ((const _T*)src[j])[i]); \
            } \
            o[i] = acc; \
        } \
    } \
    static size_t t_diff_##_id(const void *got, const void *exp, size_t count, \
                               size_t *first_p) \
    { \
        const _T *g = (const _T*)got; \
        const _T *e = (const _T*)exp; \
        size_t i, nbad = 0; \
        for (i = 0; i < count; i++) { \
            if (!(_same(_eq, g[i], e[i])) && nbad++ == 0) { \
                *first_p = i; \
            } \
        } \
        return nbad; \
    }

#define T_DEFINE(_id, _T, _cls, _aux, _eq) \
    T_DEFINE_##_cls(_id, _T, _aux) \
    T_DEFINE_COMMON(_id, _T, T_SAME_##_cls, _eq)

T_TYPES(T_DEFINE)

typedef struct {
    st_type_t   type;
    const char *id;
    size_t      size;
    unsigned    ops;    /* the ops MPI defines on the type */
    void      (*gen)(void *buf, size_t n);
    void      (*ref)(st_op_t op, void *out, const void *const *src, int nsrc, size_t count);
    size_t    (*diff)(const void *got, const void *exp, size_t count, size_t *first_p);
    void      (*show)(const void *buf, size_t i, char *s, size_t len);
} t_type_t;

#define T_DESC(_id, _T, _cls, _aux, _eq) \
    {ST_TYPE_##_id, #_id, sizeof(_T), T_OPS_##_cls, t_gen_##_id, t_ref_##_id, t_diff_##_id, \
     t_show_##_id},
static const t_type_t t_types[] = {T_TYPES(T_DESC)};
#undef T_DESC

_Static_assert(ST_ARRAY_SIZE(t_types) == ST_TYPE_LAST, "one row per st_type_t");

static void t_check_table(void)
{
    const st_reduce_kernel_t *k;
    const t_type_t *t;
    const char *name;
    int i, j, op, expected;

    for (i = 0; i < ST_TYPE_LAST; i++) {
        t = &t_types[i];
        if ((int)t->type != i) {
            t_fail("row %d of the test table is %s", i, t->id);
            continue;
        }
        if (st_type_size(t->type) != t->size) {
            t_fail("st_type_size(%s) = %zu, sizeof = %zu", t->id, st_type_size(t->type),
                   t->size);
        }
        name = st_type_name(t->type);
        if (name == NULL || name[0] == '\0' || !strcmp(name, "?")) {
            t_fail("st_type_name(%s) = \"%s\"", t->id, name ? name : "(null)");
        }
        for (j = 0; j < i && name != NULL; j++) {
            if (!strcmp(name, st_type_name(t_types[j].type))) {
                t_fail("st_type_name(%s) = st_type_name(%s) = \"%s\"", t->id,
                       t_types[j].id, name);
            }
        }
        for (op = 0; op < ST_OP_LAST; op++) {
            k        = st_reduce_kernel(t->type, (st_op_t)op);
            expected = (t->ops & T_BIT(op)) != 0;
            if ((k != NULL) != expected) {
                t_fail("st_reduce_kernel(%s, %s) is %s, expected %s", t->id,
                       st_op_name((st_op_t)op), k ? "defined" : "NULL",
                       expected ? "defined" : "NULL");
            }
            if (k != NULL && (k->reduce2 == NULL || k->reduce3 == NULL)) {
                t_fail("st_reduce_kernel(%s, %s) has a NULL function", t->id,
                       st_op_name((st_op_t)op));
            }
        }
    }

    for (op = 0; op < ST_OP_LAST; op++) {
        name = st_op_name((st_op_t)op);
        if (name == NULL || name[0] == '\0' || !strcmp(name, "?")) {
            t_fail("st_op_name(%d) = \"%s\"", op, name ? name : "(null)");
        }
    }
    if (strcmp(st_type_name(ST_TYPE_LAST), "?") || strcmp(st_type_name((st_type_t)-1), "?")) {
        t_fail("st_type_name of an invalid type is not \"?\"");
    }
    if (strcmp(st_op_name(ST_OP_LAST), "?") || strcmp(st_op_name((st_op_t)-1), "?")) {
        t_fail("st_op_name of an invalid op is not \"?\"");
    }
    if (st_reduce_kernel(ST_TYPE_LAST, ST_OP_SUM) != NULL ||
        st_reduce_kernel((st_type_t)-1, ST_OP_SUM) != NULL ||
        st_reduce_kernel(ST_TYPE_INT, ST_OP_LAST) != NULL ||
        st_reduce_kernel(ST_TYPE_INT, (st_op_t)-1) != NULL) {
        t_fail("st_reduce_kernel of an invalid type or op is not NULL");
    }
}

/* output buffer: every byte, guard elements included, set to T_GUARD_BYTE */
static void t_poison(void *out, const t_type_t *t, size_t count)
{
    memset(out, T_GUARD_BYTE, (count + T_GUARD) * t->size);
}

static void t_compare(const t_type_t *t, st_op_t op, const char *how, int nsrc, size_t count,
                      const void *got, const void *exp)
{
    const unsigned char *guard = (const unsigned char*)got + count * t->size;
    char gs[128], es[128];
    size_t first = 0, nbad, b;

    nbad = t->diff(got, exp, count, &first);
    if (nbad != 0) {
        t->show(got, first, gs, sizeof(gs));
        t->show(exp, first, es, sizeof(es));
        t_fail("%s %s %s nsrc %d count %zu index %zu: got %s expected %s (%zu wrong)",
               t->id, st_op_name(op), how, nsrc, count, first, gs, es, nbad);
    }
    for (b = 0; b < T_GUARD * t->size; b++) {
        if (guard[b] != T_GUARD_BYTE) {
            t_fail("%s %s %s nsrc %d count %zu: wrote byte %zu past the end", t->id,
                   st_op_name(op), how, nsrc, count, b);
            break;
        }
    }
}

static void t_run(const t_type_t *t, st_op_t op, const st_reduce_kernel_t *k,
                  void *const *srcbuf, void *out, void *ref)
{
    const void *src[T_MAX_SRC];
    size_t c, count;
    int j, s;

    for (j = 0; j < T_MAX_SRC; j++) {
        src[j] = srcbuf[j];
    }
    for (c = 0; c < ST_ARRAY_SIZE(t_counts); c++) {
        count = t_counts[c];
        for (j = 0; j < T_MAX_SRC; j++) {
            t->gen(srcbuf[j], count);
        }

        t->ref(op, ref, src, 2, count);
        t_poison(out, t, count);
        k->reduce3(out, src[0], src[1], count);
        t_compare(t, op, "reduce3", 2, count, out, ref);

        t_poison(out, t, count);
        memcpy(out, src[0], count * t->size);
        k->reduce2(out, src[1], count);
        t_compare(t, op, "reduce2", 2, count, out, ref);

        for (s = 0; s < (int)ST_ARRAY_SIZE(t_nsrcs); s++) {
            t->ref(op, ref, src, t_nsrcs[s], count);
            t_poison(out, t, count);
            st_reduce_fold(k, t->size, out, src, t_nsrcs[s], count);
            t_compare(t, op, "fold", t_nsrcs[s], count, out, ref);
        }
    }
}

int main(void)
{
    const st_reduce_kernel_t *k;
    void *srcbuf[T_MAX_SRC], *out, *ref;
    size_t maxsize = 0, bytes;
    int i, j, op, pairs = 0;

    for (i = 0; i < ST_TYPE_LAST; i++) {
        maxsize = ST_MAX(maxsize, t_types[i].size);
    }
    bytes = (T_MAX_COUNT + T_GUARD) * maxsize;
    out   = malloc(bytes);
    ref   = malloc(bytes);
    for (j = 0; j < T_MAX_SRC; j++) {
        srcbuf[j] = malloc(bytes);
        if (srcbuf[j] == NULL) {
            return 99;
        }
    }
    if (out == NULL || ref == NULL) {
        return 99;
    }

    t_check_table();
    for (i = 0; i < ST_TYPE_LAST; i++) {
        for (op = 0; op < ST_OP_LAST; op++) {
            k = st_reduce_kernel(t_types[i].type, (st_op_t)op);
            if (k != NULL && (t_types[i].ops & T_BIT(op)) && k->reduce2 && k->reduce3) {
                t_run(&t_types[i], (st_op_t)op, k, srcbuf, out, ref);
                pairs++;
            }
        }
    }

    for (j = 0; j < T_MAX_SRC; j++) {
        free(srcbuf[j]);
    }
    free(out);
    free(ref);

    if (t_failures > 0) {
        if (t_failures > T_MAX_FAILURES) {
            fprintf(stderr, "test_reduce: ... %d failures in all\n", t_failures);
        }
        return 1;
    }
    printf("test_reduce: %d type x op kernels checked, all passed\n", pairs);
    return 0;
}
