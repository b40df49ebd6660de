/*
 * The reduction engine's definitions, shared by the host kernels (coll/st_reduce.c)
 * and the GPU kernels (cuda/st_cuda_kernels.cu): the op expressions, which ops
 * each class of types has, and which kernel serves each type. One definition, so
 * the two engines give the same answers. Preprocessor only; valid C and CUDA C++.
 *
 * Each side defines st_cfloat_t and st_cdouble_t (C's _Complex types on the host,
 * a struct with + and * on the GPU) before instantiating the lists.
 */
#ifndef ST_REDUCE_OPS_H
#define ST_REDUCE_OPS_H

/* ---- the op expressions: a is the left (accumulated) operand ---- */
/* integers compute in the unsigned type so sums and products wrap as in C
 * unsigned arithmetic (signed overflow would be undefined) */
#define ST_X_ISUM(T, U, a, b)  ((T)((U)(a) + (U)(b)))
/* 1u * keeps narrow unsigned types from promoting to (overflowing) int */
#define ST_X_IPROD(T, U, a, b) ((T)((U)(a) * 1u * (U)(b)))
#define ST_X_SUM(T, U, a, b)   ((a) + (b))
#define ST_X_PROD(T, U, a, b)  ((a) * (b))
#define ST_X_MIN(T, U, a, b)   ((b) < (a) ? (b) : (a))
#define ST_X_MAX(T, U, a, b)   ((b) > (a) ? (b) : (a))
#define ST_X_LAND(T, U, a, b)  ((T)((a) && (b)))
#define ST_X_LOR(T, U, a, b)   ((T)((a) || (b)))
#define ST_X_LXOR(T, U, a, b)  ((T)(!(a) != !(b)))
#define ST_X_BAND(T, U, a, b)  ((T)((a) & (b)))
#define ST_X_BOR(T, U, a, b)   ((T)((a) | (b)))
#define ST_X_BXOR(T, U, a, b)  ((T)((a) ^ (b)))
/* pairs {v, i}: the larger (smaller) value; on a tie, the lower index */
#define ST_X_MAXLOC(T, U, a, b) \
    (((b).v > (a).v || ((b).v == (a).v && (b).i < (a).i)) ? (b) : (a))
#define ST_X_MINLOC(T, U, a, b) \
    (((b).v < (a).v || ((b).v == (a).v && (b).i < (a).i)) ? (b) : (a))

/* ---- the ops of each class: _O(OP_ID, op name, expression, args...) ---- */
#define ST_OPS_INT(_O, ...) \
    _O(SUM, sum, ST_X_ISUM, __VA_ARGS__) _O(PROD, prod, ST_X_IPROD, __VA_ARGS__) \
    _O(MIN, min, ST_X_MIN, __VA_ARGS__) _O(MAX, max, ST_X_MAX, __VA_ARGS__) \
    _O(LAND, land, ST_X_LAND, __VA_ARGS__) _O(LOR, lor, ST_X_LOR, __VA_ARGS__) \
    _O(LXOR, lxor, ST_X_LXOR, __VA_ARGS__) _O(BAND, band, ST_X_BAND, __VA_ARGS__) \
    _O(BOR, bor, ST_X_BOR, __VA_ARGS__) _O(BXOR, bxor, ST_X_BXOR, __VA_ARGS__)
#define ST_OPS_FLOAT(_O, ...) \
    _O(SUM, sum, ST_X_SUM, __VA_ARGS__) _O(PROD, prod, ST_X_PROD, __VA_ARGS__) \
    _O(MIN, min, ST_X_MIN, __VA_ARGS__) _O(MAX, max, ST_X_MAX, __VA_ARGS__)
#define ST_OPS_COMPLEX(_O, ...) \
    _O(SUM, sum, ST_X_SUM, __VA_ARGS__) _O(PROD, prod, ST_X_PROD, __VA_ARGS__)
#define ST_OPS_LOGICAL(_O, ...) \
    _O(LAND, land, ST_X_LAND, __VA_ARGS__) _O(LOR, lor, ST_X_LOR, __VA_ARGS__) \
    _O(LXOR, lxor, ST_X_LXOR, __VA_ARGS__)
#define ST_OPS_BITS(_O, ...) \
    _O(BAND, band, ST_X_BAND, __VA_ARGS__) _O(BOR, bor, ST_X_BOR, __VA_ARGS__) \
    _O(BXOR, bxor, ST_X_BXOR, __VA_ARGS__)
#define ST_OPS_PAIR(_O, ...) \
    _O(MAXLOC, maxloc, ST_X_MAXLOC, __VA_ARGS__) _O(MINLOC, minloc, ST_X_MINLOC, __VA_ARGS__)

/* the pair types, laid out as MPI lays out MPI_FLOAT_INT and its siblings */
typedef struct { float v; int i; }  st_float_int_t;
typedef struct { double v; int i; } st_double_int_t;
typedef struct { long v; int i; }   st_long_int_t;
typedef struct { int v; int i; }    st_2int_t;
typedef struct { short v; int i; }  st_short_int_t;

/* ---- the kernels: _(class, kernel name, element type, computing type) ---- */
/* on the host and on the GPU */
#define ST_KERNEL_TYPES(_) \
    _(INT, char, char, unsigned char) _(INT, schar, signed char, unsigned char) \
    _(INT, uchar, unsigned char, unsigned char) _(INT, short, short, unsigned short) \
    _(INT, ushort, unsigned short, unsigned short) _(INT, int, int, unsigned) \
    _(INT, uint, unsigned, unsigned) _(INT, long, long, unsigned long) \
    _(INT, ulong, unsigned long, unsigned long) _(INT, llong, long long, unsigned long long) \
    _(INT, ullong, unsigned long long, unsigned long long) \
    _(FLOAT, float, float, float) _(FLOAT, double, double, double) \
    _(COMPLEX, cfloat, st_cfloat_t, st_cfloat_t) _(COMPLEX, cdouble, st_cdouble_t, st_cdouble_t) \
    _(LOGICAL, cbool, bool, bool) _(BITS, byte, unsigned char, unsigned char) \
    _(PAIR, float_int, st_float_int_t, st_float_int_t) \
    _(PAIR, double_int, st_double_int_t, st_double_int_t) \
    _(PAIR, long_int, st_long_int_t, st_long_int_t) _(PAIR, 2int, st_2int_t, st_2int_t) \
    _(PAIR, short_int, st_short_int_t, st_short_int_t)
/* on the host only (a GPU has no long double) */
#define ST_KERNEL_TYPES_HOST(_) \
    _(FLOAT, ldouble, long double, long double) \
    _(COMPLEX, cldouble, st_cldouble_t, st_cldouble_t) \
    _(PAIR, ldouble_int, st_ldouble_int_t, st_ldouble_int_t)

/* ---- which kernel serves each type: _(ST_TYPE_ id, class, kernel name, where) ----
 * where: ANY (host and GPU) or HOST. Fixed-width and multi-language types share
 * the kernels of the C type of their width (checked in coll/st_reduce.c). */
#define ST_TYPE_KERNELS(_) \
    _(CHAR, INT, char, ANY) _(SCHAR, INT, schar, ANY) _(UCHAR, INT, uchar, ANY) \
    _(SHORT, INT, short, ANY) _(USHORT, INT, ushort, ANY) _(INT, INT, int, ANY) \
    _(UINT, INT, uint, ANY) _(LONG, INT, long, ANY) _(ULONG, INT, ulong, ANY) \
    _(LLONG, INT, llong, ANY) _(ULLONG, INT, ullong, ANY) \
    _(INT8, INT, schar, ANY) _(INT16, INT, short, ANY) _(INT32, INT, int, ANY) \
    _(INT64, INT, llong, ANY) _(UINT8, INT, uchar, ANY) _(UINT16, INT, ushort, ANY) \
    _(UINT32, INT, uint, ANY) _(UINT64, INT, ullong, ANY) \
    _(AINT, INT, long, ANY) _(OFFSET, INT, llong, ANY) _(COUNT, INT, llong, ANY) \
    _(FLOAT, FLOAT, float, ANY) _(DOUBLE, FLOAT, double, ANY) \
    _(LDOUBLE, FLOAT, ldouble, HOST) _(BOOL, LOGICAL, cbool, ANY) \
    _(CFLOAT, COMPLEX, cfloat, ANY) _(CDOUBLE, COMPLEX, cdouble, ANY) \
    _(CLDOUBLE, COMPLEX, cldouble, HOST) _(BYTE, BITS, byte, ANY) \
    _(FLOAT_INT, PAIR, float_int, ANY) _(DOUBLE_INT, PAIR, double_int, ANY) \
    _(LONG_INT, PAIR, long_int, ANY) _(TWO_INT, PAIR, 2int, ANY) \
    _(SHORT_INT, PAIR, short_int, ANY) _(LDOUBLE_INT, PAIR, ldouble_int, HOST)

#endif /* ST_REDUCE_OPS_H */
