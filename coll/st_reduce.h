/*
 * The reduction engine: every predefined type x op, with the semantics of C
 * arithmetic (integer sums and products wrap, MAXLOC/MINLOC keep the lowest
 * index on ties). MPI-agnostic: coll/st_mpi_map.c maps MPI handles to these ids.
 *
 * Operand order: for op(a, b), a is the accumulated left operand (lower ranks),
 * b the right one. Every predefined op is commutative, but floating-point
 * results depend on the order, so folds always run in rank order.
 */
#ifndef ST_REDUCE_H
#define ST_REDUCE_H

#include "st_common.h"

#include <stddef.h>

typedef enum {
    ST_OP_SUM, ST_OP_PROD, ST_OP_MIN, ST_OP_MAX,
    ST_OP_LAND, ST_OP_LOR, ST_OP_LXOR,
    ST_OP_BAND, ST_OP_BOR, ST_OP_BXOR,
    ST_OP_MAXLOC, ST_OP_MINLOC,
    ST_OP_LAST
} st_op_t;

#define ST_TYPE_LIST(_) \
    _(CHAR, "char") _(SCHAR, "signed_char") _(UCHAR, "unsigned_char") \
    _(SHORT, "short") _(USHORT, "unsigned_short") _(INT, "int") _(UINT, "unsigned") \
    _(LONG, "long") _(ULONG, "unsigned_long") _(LLONG, "long_long") \
    _(ULLONG, "unsigned_long_long") \
    _(INT8, "int8_t") _(INT16, "int16_t") _(INT32, "int32_t") _(INT64, "int64_t") \
    _(UINT8, "uint8_t") _(UINT16, "uint16_t") _(UINT32, "uint32_t") _(UINT64, "uint64_t") \
    _(AINT, "aint") _(OFFSET, "offset") _(COUNT, "count") \
    _(FLOAT, "float") _(DOUBLE, "double") _(LDOUBLE, "long_double") \
    _(BOOL, "c_bool") \
    _(CFLOAT, "c_float_complex") _(CDOUBLE, "c_double_complex") \
    _(CLDOUBLE, "c_long_double_complex") \
    _(BYTE, "byte") \
    _(FLOAT_INT, "float_int") _(DOUBLE_INT, "double_int") _(LONG_INT, "long_int") \
    _(TWO_INT, "2int") _(SHORT_INT, "short_int") _(LDOUBLE_INT, "long_double_int")

#define ST_TYPE_ENUM(_id, _name) ST_TYPE_##_id,
typedef enum {
    ST_TYPE_LIST(ST_TYPE_ENUM)
    ST_TYPE_LAST
} st_type_t;
#undef ST_TYPE_ENUM

/* inout[i] = op(inout[i], in[i]) */
typedef void (*st_reduce2_fn_t)(void *restrict inout, const void *restrict in, size_t count);
/* out[i] = op(a[i], b[i]); out overlaps neither input */
typedef void (*st_reduce3_fn_t)(void *restrict out, const void *restrict a,
                                const void *restrict b, size_t count);

typedef struct {
    st_reduce2_fn_t reduce2;
    st_reduce3_fn_t reduce3;
} st_reduce_kernel_t;

/* Size in bytes of one element of @a type (C sizeof, padding of pair types included). */
size_t st_type_size(st_type_t type);
/* Alignment in bytes of @a type (C _Alignof): the GPU kernels need it. */
size_t st_type_align(st_type_t type);
const char *st_type_name(st_type_t type);
const char *st_op_name(st_op_t op);

/* The kernel of (type, op), or NULL when the op is not defined on the type. */
const st_reduce_kernel_t *st_reduce_kernel(st_type_t type, st_op_t op);

/*
 * out[i] = op(...op(op(src[0][i], src[1][i]), src[2][i])..., src[nsrc-1][i]) for
 * i < count, in blocks that stay in the first-level cache. @a out overlaps no source.
 */
void st_reduce_fold(const st_reduce_kernel_t *kernel, size_t elem_size, void *out,
                    const void *const *src, int nsrc, size_t count);

#endif /* ST_REDUCE_H */
