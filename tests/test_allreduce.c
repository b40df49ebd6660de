/*
 * The MPI_Allreduce sweep: every predefined (type, op) pair Strata serves, over
 * message sizes chosen around the algorithm's boundaries (latency threshold,
 * pipeline chunk), in place and not, on several communicators.
 *
 * Each rank generates its input as a pure function of (call, comm rank, index)
 * and computes the expected result itself, for every rank's input, with a plain
 * scalar loop: integer sums and products wrap (computed modulo 2^64, then
 * truncated), floating-point inputs are chosen so that any evaluation order is
 * exact, MAXLOC/MINLOC inputs tie often so the lowest index must win.
 *
 * Every call checks: the result against the reference, guard bytes around the
 * receive buffer, the send buffer unchanged, and that Strata's statistics moved
 * by exactly one fast-path call with its bytes (communicators of two ranks or more)
 * or one "comm-size-1" fallback (one rank). Results must hash alike on every rank.
 *
 * The algorithm's boundaries (latency threshold, pipeline chunk) come from
 * strata_comm_layout(). With --layout, the job runs on one of the synthetic
 * machines of tests/st_layouts.h. Communicators that span virtual nodes, or hosts
 * in a multi-host job (tests/cluster.sh runs it on two), take the inter-node level
 * over UCX; built without UCX, or with STRATA_UCX=n, they must fall back
 * ("multinode") on every call.
 *
 * With --device LIB, every buffer is device memory of the CUDA driver LIB
 * (libcuda.so.1 on a GPU machine; tests/fake/libcuda.so.1, the stand-in, in the
 * suite): the inputs and the guard bytes are copied in before the call and back
 * after it, and the same checks run on the host copies. Every call with a buffer
 * counts as a device call, and on one node the calls of at least
 * STRATA_CUDA_IPC_MIN bytes on types the GPU kernels serve (all but long double)
 * must go GPU to GPU through CUDA IPC (in a build with the GPU kernels), but for
 * one call in 8, whose device buffers are off their type's alignment: staged.
 *
 * Usage: test_allreduce [--big] [--layout NAME] [--device LIB]
 *   default  the sweep (all pairs on MPI_COMM_WORLD, a subset elsewhere)
 *   --big    messages of 64 MB and more on MPI_COMM_WORLD and a reversed world
 */
#include "config.h"

#include "st_layouts.h"
#include "st_test.h"

#include <complex.h>
#include <dlfcn.h>
#include <float.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum {
    OP_SUM, OP_PROD, OP_MIN, OP_MAX, OP_LAND, OP_LOR, OP_LXOR, OP_BAND, OP_BOR, OP_BXOR,
    OP_MAXLOC, OP_MINLOC, OP_LAST
} op_t;

static const char *const op_names[OP_LAST] = {
    "sum", "prod", "min", "max", "land", "lor", "lxor", "band", "bor", "bxor", "maxloc",
    "minloc"
};

static MPI_Op op_handle(op_t op)
{
    switch (op) {
    case OP_SUM:    return MPI_SUM;
    case OP_PROD:   return MPI_PROD;
    case OP_MIN:    return MPI_MIN;
    case OP_MAX:    return MPI_MAX;
    case OP_LAND:   return MPI_LAND;
    case OP_LOR:    return MPI_LOR;
    case OP_LXOR:   return MPI_LXOR;
    case OP_BAND:   return MPI_BAND;
    case OP_BOR:    return MPI_BOR;
    case OP_BXOR:   return MPI_BXOR;
    case OP_MAXLOC: return MPI_MAXLOC;
    case OP_MINLOC: return MPI_MINLOC;
    default:        return MPI_OP_NULL;
    }
}

/* the ops the MPI standard defines on each type class */
#define OPB(_op) (1u << OP_##_op)
#define OPS_INT  (OPB(SUM) | OPB(PROD) | OPB(MIN) | OPB(MAX) | OPB(LAND) | OPB(LOR) | \
                  OPB(LXOR) | OPB(BAND) | OPB(BOR) | OPB(BXOR))
#define OPS_FLT  (OPB(SUM) | OPB(PROD) | OPB(MIN) | OPB(MAX))
#define OPS_CPX  (OPB(SUM) | OPB(PROD))
#define OPS_BOOL (OPB(LAND) | OPB(LOR) | OPB(LXOR))
#define OPS_BITS (OPB(BAND) | OPB(BOR) | OPB(BXOR))
#define OPS_PAIR (OPB(MAXLOC) | OPB(MINLOC))
/* Fortran integers and the multi-language types (MPI_AINT, MPI_OFFSET, MPI_COUNT): no
 * logical ops in the standard; MPI_CHAR has no ops at all (test_fallback checks both) */
#define OPS_FINT (OPB(SUM) | OPB(PROD) | OPB(MIN) | OPB(MAX) | OPB(BAND) | OPB(BOR) | OPB(BXOR))
#define OPS_MULTI OPS_FINT

/* bytes of a long double that hold its value (x87 80-bit: 10 of 16) */
#define LDBL_VALUE_BYTES ((LDBL_MANT_DIG == 64) ? 10 : sizeof(long double))
#define VALUE_BYTES(_T) (sizeof(_T) == sizeof(long double) ? LDBL_VALUE_BYTES : sizeof(_T))

/*
 * name, C type, MPI handle, class (how inputs, references and comparisons are
 * made), valid ops. "Small" marks the types also swept on the other communicators.
 */
#define TYPE_LIST(_) \
    _(schar,       signed char,          MPI_SIGNED_CHAR,           INT,  OPS_INT,  0) \
    _(uchar,       unsigned char,        MPI_UNSIGNED_CHAR,         INT,  OPS_INT,  0) \
    _(short,       short,                MPI_SHORT,                 INT,  OPS_INT,  1) \
    _(ushort,      unsigned short,       MPI_UNSIGNED_SHORT,        INT,  OPS_INT,  0) \
    _(int,         int,                  MPI_INT,                   INT,  OPS_INT,  1) \
    _(unsigned,    unsigned,             MPI_UNSIGNED,              INT,  OPS_INT,  0) \
    _(long,        long,                 MPI_LONG,                  INT,  OPS_INT,  0) \
    _(ulong,       unsigned long,        MPI_UNSIGNED_LONG,         INT,  OPS_INT,  1) \
    _(llong,       long long,            MPI_LONG_LONG,             INT,  OPS_INT,  0) \
    _(ullong,      unsigned long long,   MPI_UNSIGNED_LONG_LONG,    INT,  OPS_INT,  0) \
    _(int8,        int8_t,               MPI_INT8_T,                INT,  OPS_INT,  1) \
    _(int16,       int16_t,              MPI_INT16_T,               INT,  OPS_INT,  0) \
    _(int32,       int32_t,              MPI_INT32_T,               INT,  OPS_INT,  0) \
    _(int64,       int64_t,              MPI_INT64_T,               INT,  OPS_INT,  0) \
    _(uint8,       uint8_t,              MPI_UINT8_T,               INT,  OPS_INT,  0) \
    _(uint16,      uint16_t,             MPI_UINT16_T,              INT,  OPS_INT,  0) \
    _(uint32,      uint32_t,             MPI_UINT32_T,              INT,  OPS_INT,  0) \
    _(uint64,      uint64_t,             MPI_UINT64_T,              INT,  OPS_INT,  0) \
    _(aint,        MPI_Aint,             MPI_AINT,                  INT,  OPS_MULTI, 0) \
    _(offset,      MPI_Offset,           MPI_OFFSET,                INT,  OPS_MULTI, 0) \
    _(count,       MPI_Count,            MPI_COUNT,                 INT,  OPS_MULTI, 0) \
    _(float,       float,                MPI_FLOAT,                 FLT,  OPS_FLT,  1) \
    _(double,      double,               MPI_DOUBLE,                FLT,  OPS_FLT,  1) \
    _(ldouble,     long double,          MPI_LONG_DOUBLE,           FLT,  OPS_FLT,  1) \
    _(c_bool,      bool,                 MPI_C_BOOL,                BOOL, OPS_BOOL, 1) \
    _(cfloat,      float _Complex,       MPI_C_FLOAT_COMPLEX,       CPX,  OPS_CPX,  0) \
    _(cdouble,     double _Complex,      MPI_C_DOUBLE_COMPLEX,      CPX,  OPS_CPX,  1) \
    _(cldouble,    long double _Complex, MPI_C_LONG_DOUBLE_COMPLEX, CPX,  OPS_CPX,  1) \
    _(byte,        unsigned char,        MPI_BYTE,                  INT,  OPS_BITS, 1) \
    _(float_int,   pair_float_int_t,     MPI_FLOAT_INT,             PAIR, OPS_PAIR, 0) \
    _(double_int,  pair_double_int_t,    MPI_DOUBLE_INT,            PAIR, OPS_PAIR, 1) \
    _(long_int,    pair_long_int_t,      MPI_LONG_INT,              PAIR, OPS_PAIR, 0) \
    _(2int,        pair_2int_t,          MPI_2INT,                  PAIR, OPS_PAIR, 1) \
    _(short_int,   pair_short_int_t,     MPI_SHORT_INT,             PAIR, OPS_PAIR, 0) \
    _(ldouble_int, pair_ldouble_int_t,   MPI_LONG_DOUBLE_INT,       PAIR, OPS_PAIR, 1) \
    _(f_integer,   int32_t,              MPI_INTEGER,               INT,  OPS_FINT, 0) \
    _(f_integer8,  int64_t,              MPI_INTEGER8,              INT,  OPS_FINT, 0) \
    _(f_real,      float,                MPI_REAL,                  FLT,  OPS_FLT,  0) \
    _(f_dprec,     double,               MPI_DOUBLE_PRECISION,      FLT,  OPS_FLT,  1) \
    _(f_complex,   float _Complex,       MPI_COMPLEX,               CPX,  OPS_CPX,  0) \
    _(f_dcomplex,  double _Complex,      MPI_DOUBLE_COMPLEX,        CPX,  OPS_CPX,  0)

/* ---- integers (and MPI_BYTE): wrap-around arithmetic, computed modulo 2^64 ---- */

#define T_SIGNED(_T) ((_T)~(_T)0 < (_T)1)
#define T_MAX(_T) \
    ((_T)(UINT64_MAX >> (64 - 8 * sizeof(_T) + (T_SIGNED(_T) ? 1 : 0))))
#define T_MIN(_T) ((_T)(T_SIGNED(_T) ? ~(uint64_t)T_MAX(_T) : 0))

static const int8_t prod_ints[8] = {1, 2, -1, 3, 1, -1, 2, 1};

#define GEN_INT(_T, _op, _h, _x) \
    do { \
        uint64_t _g = (_h) >> 8; \
        int64_t _gv; \
        switch (_op) { \
        case OP_SUM: \
            /* near the limits, 100 (int8: 100 + 100 == -56), or small */ \
            switch ((_h) & 7) { \
            case 0:  (_x) = (_T)(T_MAX(_T) - (_T)(_g % 3)); break; \
            case 1:  (_x) = (_T)(T_MIN(_T) + (_T)(_g % 3)); break; \
            case 2:  (_x) = (_T)100; break; \
            default: (_x) = (_T)((int64_t)(_g % 201) - 100); break; \
            } \
            break; \
        case OP_PROD: \
            (_x) = (_T)prod_ints[(_h) & 7]; \
            break; \
        case OP_LAND: case OP_LOR: case OP_LXOR: \
            _gv = ((_h) & 3) == 0 ? 0 : (int64_t)(_g % 200) - 100; \
            (_x) = (_T)((_gv == 0 && ((_h) & 3) != 0) ? -128 : _gv); \
            break; \
        case OP_BAND: \
            (_x) = (_T)((_h) | (_g >> 9)); \
            break; \
        case OP_BOR: \
            (_x) = (_T)((_h) & (_g >> 9)); \
            break; \
        default: /* MIN, MAX, BXOR: the whole range */ \
            (_x) = (_T)(_h); \
            break; \
        } \
    } while (0)

#define REF_INT(_T, _op, _seed, _n, _i, _out) \
    do { \
        uint64_t _u = 0; \
        int _l = 0, _r; \
        _T _x, _m = 0; \
        for (_r = 0; _r < (_n); _r++) { \
            GEN_INT(_T, _op, st_test_rand(_seed, _r, _i), _x); \
            if (_r == 0) { \
                _u = (uint64_t)_x; \
                _m = _x; \
                _l = (_x != 0); \
                continue; \
            } \
            switch (_op) { \
            case OP_SUM:  _u += (uint64_t)_x; break; \
            case OP_PROD: _u *= (uint64_t)_x; break; \
            case OP_MIN:  _m = (_x < _m) ? _x : _m; break; \
            case OP_MAX:  _m = (_x > _m) ? _x : _m; break; \
            case OP_LAND: _l = _l && (_x != 0); break; \
            case OP_LOR:  _l = _l || (_x != 0); break; \
            case OP_LXOR: _l = (_l != (_x != 0)); break; \
            case OP_BAND: _u &= (uint64_t)_x; break; \
            case OP_BOR:  _u |= (uint64_t)_x; break; \
            case OP_BXOR: _u ^= (uint64_t)_x; break; \
            default: break; \
            } \
        } \
        if ((_op) == OP_MIN || (_op) == OP_MAX || (_n) == 1) { \
            (_out) = _m; /* one rank: no op applied, the input as is */ \
        } else if ((_op) == OP_LAND || (_op) == OP_LOR || (_op) == OP_LXOR) { \
            (_out) = (_T)_l; \
        } else { \
            (_out) = (_T)_u; /* truncation: the sum modulo 2^bits */ \
        } \
    } while (0)

#define EQ_INT(_T, _a, _b) (memcmp(&(_a), &(_b), sizeof(_T)) == 0)
#define CANON_INT(_T, _x, _dst) memcpy((_dst), &(_x), sizeof(_T))

/* ---- C_BOOL ---- */

#define GEN_BOOL(_T, _op, _h, _x) ((_x) = (((_h) & 3) != 0))

#define REF_BOOL(_T, _op, _seed, _n, _i, _out) \
    do { \
        bool _x, _l = false; \
        int _r; \
        for (_r = 0; _r < (_n); _r++) { \
            GEN_BOOL(_T, _op, st_test_rand(_seed, _r, _i), _x); \
            if (_r == 0) { \
                _l = _x; \
            } else if ((_op) == OP_LAND) { \
                _l = _l && _x; \
            } else if ((_op) == OP_LOR) { \
                _l = _l || _x; \
            } else { \
                _l = (_l != _x); \
            } \
        } \
        (_out) = _l; \
    } while (0)

#define EQ_BOOL  EQ_INT
#define CANON_BOOL CANON_INT

/* ---- float, double, long double: inputs for which every order is exact ---- */

/* SUM: small integers; PROD: +-2^k, |k| <= 3; MIN/MAX: k/4 + 1/8, never zero */
#define GEN_FLT(_T, _op, _h, _x) \
    do { \
        uint64_t _g = (_h) >> 8; \
        switch (_op) { \
        case OP_SUM: \
            (_x) = (_T)((int)(_g % 101) - 50); \
            break; \
        case OP_PROD: \
            (_x) = (_T)(1 << (_g % 7)) / (_T)8 * (((_h) & 1) ? (_T)-1 : (_T)1); \
            break; \
        default: \
            (_x) = (_T)((int)(_g % 4001) - 2000) / (_T)4 + (_T)0.125; \
            break; \
        } \
    } while (0)

#define REF_FLT(_T, _op, _seed, _n, _i, _out) \
    do { \
        _T _x, _a = 0; \
        int _r; \
        for (_r = 0; _r < (_n); _r++) { \
            GEN_FLT(_T, _op, st_test_rand(_seed, _r, _i), _x); \
            if (_r == 0) { \
                _a = _x; \
            } else if ((_op) == OP_SUM) { \
                _a = _a + _x; \
            } else if ((_op) == OP_PROD) { \
                _a = _a * _x; \
            } else if ((_op) == OP_MIN) { \
                _a = (_x < _a) ? _x : _a; \
            } else { \
                _a = (_x > _a) ? _x : _a; \
            } \
        } \
        (_out) = _a; \
    } while (0)

/* bitwise for float and double, by value for long double (padding bytes) */
#define EQ_FLT(_T, _a, _b) \
    (sizeof(_T) == sizeof(long double) ? (_a) == (_b) \
                                       : memcmp(&(_a), &(_b), sizeof(_T)) == 0)
#define CANON_FLT(_T, _x, _dst) memcpy((_dst), &(_x), VALUE_BYTES(_T))

/* ---- complex: Gaussian integers (SUM), units times 2^k (PROD): exact ---- */

#define GEN_CPX(_T, _op, _h, _x) \
    do { \
        uint64_t _g = (_h) >> 8; \
        if ((_op) == OP_SUM) { \
            __real__(_x) = (int)(_g % 41) - 20; \
            __imag__(_x) = (int)((_g >> 8) % 41) - 20; \
        } else { \
            double _gm = (double)(1 << (_g % 5)) / 4; \
            __real__(_x) = ((_h) & 1) ? 0 : (((_h) & 2) ? -_gm : _gm); \
            __imag__(_x) = ((_h) & 1) ? (((_h) & 2) ? -_gm : _gm) : 0; \
        } \
    } while (0)

#define REF_CPX(_T, _op, _seed, _n, _i, _out) \
    do { \
        _T _x, _a = 0; \
        int _r; \
        for (_r = 0; _r < (_n); _r++) { \
            GEN_CPX(_T, _op, st_test_rand(_seed, _r, _i), _x); \
            if (_r == 0) { \
                _a = _x; \
            } else if ((_op) == OP_SUM) { \
                _a = _a + _x; \
            } else { \
                _a = _a * _x; \
            } \
        } \
        (_out) = _a; \
    } while (0)

/* by value, real and imaginary parts (a zero part's sign depends on the order) */
#define EQ_CPX(_T, _a, _b) (__real__(_a) == __real__(_b) && __imag__(_a) == __imag__(_b))
#define CANON_CPX(_T, _x, _dst) \
    do { \
        __typeof__(__real__(_x)) _re = __real__(_x), _im = __imag__(_x); \
        memcpy((_dst), &_re, VALUE_BYTES(__typeof__(_re))); \
        memcpy((_dst) + sizeof(_re), &_im, VALUE_BYTES(__typeof__(_im))); \
    } while (0)

/* ---- MAXLOC / MINLOC pairs: few values, few indices, many ties ---- */

#define GEN_PAIR(_T, _op, _h, _x) \
    do { \
        (_x).v = (__typeof__((_x).v))((int)(((_h) >> 8) % 5) - 2); \
        (_x).i = (int)(((_h) >> 24) % 7) - 1; \
    } while (0)

#define REF_PAIR(_T, _op, _seed, _n, _i, _out) \
    do { \
        _T _x, _b; \
        int _r, _better; \
        memset(&_b, 0, sizeof(_b)); \
        for (_r = 0; _r < (_n); _r++) { \
            GEN_PAIR(_T, _op, st_test_rand(_seed, _r, _i), _x); \
            if ((_op) == OP_MAXLOC) { \
                _better = _x.v > _b.v || (_x.v == _b.v && _x.i < _b.i); \
            } else { \
                _better = _x.v < _b.v || (_x.v == _b.v && _x.i < _b.i); \
            } \
            if (_r == 0 || _better) { \
                _b.v = _x.v; \
                _b.i = _x.i; \
            } \
        } \
        (_out).v = _b.v; \
        (_out).i = _b.i; \
    } while (0)

#define EQ_PAIR(_T, _a, _b) ((_a).v == (_b).v && (_a).i == (_b).i)
#define CANON_PAIR(_T, _x, _dst) \
    do { \
        memcpy((_dst), &(_x).v, VALUE_BYTES(__typeof__((_x).v))); \
        memcpy((_dst) + sizeof((_x).v), &(_x).i, sizeof(int)); \
    } while (0)

/* ---- one descriptor per type, its functions generated from the class ---- */

typedef struct {
    const char  *name;
    MPI_Datatype mpi;
    size_t       size;
    unsigned     ops;
    size_t       align;   /* _Alignof the C type */
    int          small;   /* also swept on the other communicators */
    /* buf[i] = input of @rank at index i, padding zeroed */
    void (*gen)(op_t op, uint64_t seed, int rank, size_t count, void *buf);
    /* buf[i] = op over every rank's input, in a plain scalar loop */
    void (*ref)(op_t op, uint64_t seed, int nranks, size_t count, void *buf);
    /* number of differing elements, the first in *first_p */
    size_t (*diff)(const void *got, const void *expect, size_t count, size_t *first_p);
    /* the value bytes of every element (padding zero), for hashing */
    void (*canon)(const void *buf, size_t count, unsigned char *dst);
} type_t;

#define DEFINE_TYPE(_name, _T, _mpi, _cls, _ops, _small) \
    static void gen_##_name(op_t op, uint64_t seed, int rank, size_t count, void *buf) \
    { \
        _T *x = (_T*)buf; \
        size_t i; \
        memset(buf, 0, count * sizeof(_T)); \
        for (i = 0; i < count; i++) { \
            GEN_##_cls(_T, op, st_test_rand(seed, rank, i), x[i]); \
        } \
    } \
    static void ref_##_name(op_t op, uint64_t seed, int nranks, size_t count, void *buf) \
    { \
        _T *x = (_T*)buf; \
        size_t i; \
        memset(buf, 0, count * sizeof(_T)); \
        for (i = 0; i < count; i++) { \
            REF_##_cls(_T, op, seed, nranks, i, x[i]); \
        } \
    } \
    static size_t diff_##_name(const void *got, const void *expect, size_t count, \
                               size_t *first_p) \
    { \
        const _T *g = (const _T*)got, *e = (const _T*)expect; \
        size_t i, n = 0; \
        for (i = 0; i < count; i++) { \
            if (!EQ_##_cls(_T, g[i], e[i])) { \
                if (n++ == 0) { \
                    *first_p = i; \
                } \
            } \
        } \
        return n; \
    } \
    static void canon_##_name(const void *buf, size_t count, unsigned char *dst) \
    { \
        const _T *x = (const _T*)buf; \
        size_t i; \
        memset(dst, 0, count * sizeof(_T)); \
        for (i = 0; i < count; i++) { \
            CANON_##_cls(_T, x[i], dst + i * sizeof(_T)); \
        } \
    }
TYPE_LIST(DEFINE_TYPE)
#undef DEFINE_TYPE

#define TYPE_ENTRY(_name, _T, _mpi, _cls, _ops, _small) \
    {#_name, _mpi, sizeof(_T), _ops, _Alignof(_T), _small, gen_##_name, ref_##_name, diff_##_name, \
     canon_##_name},
static const type_t types[] = {TYPE_LIST(TYPE_ENTRY)};
#undef TYPE_ENTRY
#define NTYPES ((int)(sizeof(types) / sizeof(types[0])))

static const type_t *type_by_name(const char *name)
{
    int t;

    for (t = 0; t < NTYPES; t++) {
        if (strcmp(types[t].name, name) == 0) {
            return &types[t];
        }
    }
    return NULL;
}

static const st_layout_t *layout;  /* --layout, or NULL */

/* ---- --device LIB: the buffers in device memory, through the CUDA driver API ---- */

typedef unsigned long long devptr_t;
static struct {
    const char *lib;                             /* NULL: host buffers */
    int (*alloc)(devptr_t *dptr, size_t bytes);  /* cuMemAlloc_v2 */
    int (*free)(devptr_t dptr);                  /* cuMemFree_v2 */
    int (*copy)(devptr_t dst, devptr_t src, size_t bytes);   /* cuMemcpy (unified) */
    unsigned long long ipc_min;                  /* STRATA_CUDA_IPC_MIN, in bytes */
} dev;

#define DEV_SYM(_h, _name, _fp) (*(void**)&(_fp) = dlsym((_h), (_name)), (_fp) != NULL)

/* Open the driver, make the primary context of GPU (local rank mod GPUs) current.
 * 1: ready; 0: the driver sees no GPU; -1: failed (said on stdout). */
static int dev_open(void)
{
    int (*init)(unsigned), (*ndev)(int *), (*get)(int *, int), (*retain)(void **, int);
    int (*set)(void *);
    void *h = dlopen(dev.lib, RTLD_NOW | RTLD_GLOBAL), *ctx = NULL;
    int n = 0, d = 0, local = 0;
    MPI_Comm node;
    char *end;

    if (h == NULL || !DEV_SYM(h, "cuInit", init) || !DEV_SYM(h, "cuDeviceGetCount", ndev) ||
        !DEV_SYM(h, "cuDeviceGet", get) || !DEV_SYM(h, "cuDevicePrimaryCtxRetain", retain) ||
        !DEV_SYM(h, "cuCtxSetCurrent", set) || !DEV_SYM(h, "cuMemAlloc_v2", dev.alloc) ||
        !DEV_SYM(h, "cuMemFree_v2", dev.free) || !DEV_SYM(h, "cuMemcpy", dev.copy)) {
        printf("test_allreduce: --device %s: %s\n", dev.lib, h ? "a driver call is missing"
                                                              : dlerror());
        return -1;
    }
    if (init(0) != 0 || ndev(&n) != 0 || n == 0) {
        return 0;
    }
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &local);
    MPI_Comm_free(&node);
    if (get(&d, local % n) != 0 || retain(&ctx, d) != 0 || set(ctx) != 0) {
        printf("test_allreduce: no context on GPU %d\n", local % n);
        return -1;
    }
    dev.ipc_min = strtoull(st_test_config("STRATA_CUDA_IPC_MIN"), &end, 10);
    dev.ipc_min <<= (*end == 'K') ? 10 : (*end == 'M') ? 20 : (*end == 'G') ? 30 : 0;
    return 1;
}

static void *dev_ptr(devptr_t p, size_t offset)
{
    return (void*)(uintptr_t)(p + offset);
}

static devptr_t dev_addr(const void *p)
{
    return (devptr_t)(uintptr_t)p;
}

/* ---- one communicator under test ---- */

typedef struct {
    MPI_Comm    comm;
    const char *name;
    int         rank, size;
    uint64_t    tag;    /* seeds the inputs; equal on the ranks of the comm */
    uint64_t    ncalls; /* calls made, the inputs' sequence number */
    uint64_t    hash;   /* of every result so far */
    uint64_t    fast0;  /* fast_calls when the sweep started */
    int         expect; /* the fallback reason every call must have, or -1: fast path */
    int         multi;  /* the comm spans (virtual) nodes or hosts */
    uint64_t    expect0;
    size_t      small;  /* latency threshold and pipeline chunk (bytes) */
    size_t      chunk;
} ctx_t;

/* Whether the ranks of @a comm run on more than one host (by their processor
 * names: a multi-host job, such as one on tools/strata-cluster's hosts). */
static int spans_hosts(MPI_Comm comm, int size)
{
    char name[MPI_MAX_PROCESSOR_NAME] = "", *names;
    int len, i, multi = 0;

    MPI_Get_processor_name(name, &len);
    names = calloc((size_t)size, MPI_MAX_PROCESSOR_NAME);
    CHECK(names != NULL);
    if (names == NULL) {
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_Allgather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, names, MPI_MAX_PROCESSOR_NAME,
                  MPI_CHAR, comm);
    for (i = 1; i < size; i++) {
        multi |= (strcmp(names + (size_t)i * MPI_MAX_PROCESSOR_NAME, names) != 0);
    }
    free(names);
    return multi;
}

/* Which path calls on @a comm must take: one rank, spanning hosts or (virtual)
 * nodes, or fast; *multi_p: whether it spans nodes. */
static int expected_path(MPI_Comm comm, int *multi_p)
{
    int size, world_size, wrank, node, i, *nodes, multi = 0;

    *multi_p = 0;
    MPI_Comm_size(comm, &size);
    if (size == 1) {
        return STRATA_FALLBACK_COMM_SIZE;
    }
    if (spans_hosts(comm, size)) {
        *multi_p = 1;
        return st_test_multinode_fast() ? -1 : STRATA_FALLBACK_MULTINODE;
    }
    if (layout == NULL) {
        return -1;
    }
    MPI_Comm_size(MPI_COMM_WORLD, &world_size);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    node  = st_layout_vnode(layout, wrank, world_size);
    nodes = malloc((size_t)size * sizeof(int));
    MPI_Allgather(&node, 1, MPI_INT, nodes, 1, MPI_INT, comm);
    for (i = 1; i < size; i++) {
        multi |= (nodes[i] != nodes[0]);
    }
    free(nodes);
    *multi_p = multi;
    return (multi && !st_test_multinode_fast()) ? STRATA_FALLBACK_MULTINODE : -1;
}

static void ctx_init(ctx_t *c, MPI_Comm comm, const char *name, uint64_t tag)
{
    strata_comm_stats_t s = st_test_stats(comm);

    c->comm = comm;
    c->name = name;
    MPI_Comm_rank(comm, &c->rank);
    MPI_Comm_size(comm, &c->size);
    strata_layout_t lay;

    c->tag     = tag;
    c->ncalls  = 0;
    c->hash    = ST_TEST_HASH_INIT;
    c->fast0   = s.fast_calls;
    c->expect  = expected_path(comm, &c->multi);
    c->expect0 = (c->expect >= 0) ? s.fallback_calls[c->expect] : 0;
    /* without a fast path, sizes that would be the boundaries on one node */
    c->small = 16 * 1024;
    c->chunk = 64 * 1024;
    CHECK(strata_comm_layout(comm, &lay, NULL) == STRATA_OK);
    CHECKF(lay.fast_path == (c->expect < 0), "%s: layout says fast path %d", name,
           lay.fast_path);
    if (lay.fast_path) {   /* (no chunk across nodes when a node has one rank) */
        c->small = lay.small_msg;
        c->chunk = lay.shm_chunk ? lay.shm_chunk : c->chunk;
    }
}

/* Totals: every call of the sweep was counted, and every rank saw the same results. */
static void ctx_finish(ctx_t *c)
{
    strata_comm_stats_t s = st_test_stats(c->comm);

    if (c->expect < 0) {
        CHECKF(s.fast_calls - c->fast0 == c->ncalls, "%s: %llu fast calls, %llu made", c->name,
               (unsigned long long)(s.fast_calls - c->fast0), (unsigned long long)c->ncalls);
    } else {
        CHECKF(s.fallback_calls[c->expect] - c->expect0 == c->ncalls &&
               s.fast_calls == c->fast0, "%s: %llu %s fallbacks, %llu fast, %llu made",
               c->name, (unsigned long long)(s.fallback_calls[c->expect] - c->expect0),
               strata_fallback_string((strata_fallback_t)c->expect),
               (unsigned long long)(s.fast_calls - c->fast0), (unsigned long long)c->ncalls);
    }
    CHECKF(st_test_hash_agree(c->comm, c->hash), "%s: ranks hold different results",
           c->name);
}

#define GUARD_BYTES 128
#define GUARD_FILL  0xa5
#define RECV_FILL   0x5a

static void hexdump(char *dst, size_t len, const void *p, size_t bytes)
{
    const unsigned char *b = (const unsigned char*)p;
    size_t i, used = 0;

    dst[0] = '\0';
    for (i = 0; i < bytes && i < 32 && used + 3 < len; i++) {
        used += (size_t)snprintf(dst + used, len - used, "%02x", b[i]);
    }
}

static int guard_intact(const unsigned char *p)
{
    size_t i;

    for (i = 0; i < GUARD_BYTES; i++) {
        if (p[i] != GUARD_FILL) {
            return 0;
        }
    }
    return 1;
}

/*
 * One MPI_Allreduce of @a count elements of @a t with @a op on @a c, fully checked.
 * The buffers start 0 to 3 alignments of the type past a cache line, in turn.
 */
static void run_case(ctx_t *c, const type_t *t, op_t op, size_t count, int inplace)
{
    size_t bytes = count * t->size;
    size_t shift = (size_t)(c->ncalls % 4) * t->align;
    /* one device call in 8 on buffers off their type's alignment: the GPU kernels
     * cannot load such elements (a misaligned load ends the CUDA context), so
     * they must be staged */
    size_t dmis = (dev.lib != NULL && c->ncalls % 8 == 5) ? t->align / 2 : 0;
    uint64_t seed = st_test_mix(c->tag * 0x100000001b3ULL + c->ncalls);
    size_t region_bytes = bytes + shift + 2 * GUARD_BYTES;
    unsigned char *send_mem = NULL, *send, *copy, *region = NULL, *recv, *expect, *canon;
    void *call_send, *call_recv;
    devptr_t d_send = 0, d_region = 0;
    strata_comm_stats_t before, after;
    size_t ndiff, first = 0;
    char got_s[80] = "", exp_s[80] = "", where[160];
    int rc, ipc;

    copy   = malloc(bytes + 1);
    expect = malloc(bytes + 1);
    canon  = malloc(bytes + 1);
    if (posix_memalign((void**)&send_mem, 64, bytes + shift + 1) != 0) {
        send_mem = NULL;
    }
    if (posix_memalign((void**)&region, 64, region_bytes) != 0) {
        region = NULL;
    }
    if (dev.lib != NULL && (dev.alloc(&d_send, bytes + shift + dmis + 1) != 0 ||
                            dev.alloc(&d_region, region_bytes + dmis) != 0)) {
        d_send = d_region = 0;   /* (a failed cuMemAlloc leaves its pointer alone) */
        free(region);
        region = NULL;
    }
    if (send_mem == NULL || copy == NULL || expect == NULL || canon == NULL || region == NULL) {
        st_test_fail(__FILE__, __LINE__, "out of memory (%zu bytes)", bytes);
        goto out;
    }
    send = send_mem + shift;
    recv = region + GUARD_BYTES + shift;
    memset(region, GUARD_FILL, GUARD_BYTES + shift);
    memset(recv + bytes, GUARD_FILL, GUARD_BYTES);

    t->gen(op, seed, c->rank, count, send);
    if (inplace) {
        memcpy(recv, send, bytes);
    } else {
        memset(recv, RECV_FILL, bytes);
        memcpy(copy, send, bytes);
    }
    t->ref(op, seed, c->size, count, expect);

    call_send = send;
    call_recv = recv;
    if (dev.lib != NULL) {   /* the same bytes, guards included, in device memory */
        CHECK(dev.copy(d_send + dmis + shift, dev_addr(send), bytes + 1) == 0);
        CHECK(dev.copy(d_region + dmis, dev_addr(region), region_bytes) == 0);
        call_send = dev_ptr(d_send, dmis + shift);
        call_recv = dev_ptr(d_region, dmis + GUARD_BYTES + shift);
    }

    before = st_test_stats(c->comm);
    rc = MPI_Allreduce(inplace ? MPI_IN_PLACE : call_send, call_recv, (int)count, t->mpi,
                       op_handle(op), c->comm);
    after = st_test_stats(c->comm);
    c->ncalls++;
    if (dev.lib != NULL) {
        CHECK(dev.copy(dev_addr(region), d_region + dmis, region_bytes) == 0);
        CHECK(dev.copy(dev_addr(send), d_send + dmis + shift, bytes + 1) == 0);
    }

    snprintf(where, sizeof(where), "%s (size %d), %s %s, count %zu%s%s", c->name, c->size,
             t->name, op_names[op], count, inplace ? " in place" : "",
             dmis ? " misaligned" : "");
    CHECKF(rc == MPI_SUCCESS, "%s: returned %d", where, rc);
    /* Calls that fall back (the virtual-node layouts) get Open MPI's answer, and
     * Open MPI 4.1's AVX op differs from C arithmetic: it saturates 8- and 16-bit
     * sums and compares unsigned 64-bit integers as signed in MIN and MAX. Only
     * Strata's own path is held to the reference. */
    ndiff = (c->expect >= 0 && c->size > 1) ? 0 : t->diff(recv, expect, count, &first);
    if (ndiff != 0) {
        hexdump(got_s, sizeof(got_s), recv + first * t->size, t->size);
        hexdump(exp_s, sizeof(exp_s), expect + first * t->size, t->size);
    }
    CHECKF(ndiff == 0, "%s: %zu wrong elements, first [%zu] = %s, expected %s", where, ndiff,
           first, got_s, exp_s);
    CHECKF(guard_intact(recv - GUARD_BYTES), "%s: bytes before the receive buffer overwritten",
           where);
    CHECKF(guard_intact(recv + bytes), "%s: bytes after the receive buffer overwritten", where);
    if (!inplace) {
        CHECKF(memcmp(send, copy, bytes) == 0, "%s: send buffer modified", where);
    }
    if (c->expect < 0) {
        CHECKF(after.fast_calls == before.fast_calls + 1 &&
               st_test_fallback_total(&after) == st_test_fallback_total(&before),
               "%s: fast calls %llu -> %llu, fallbacks %llu -> %llu", where,
               (unsigned long long)before.fast_calls, (unsigned long long)after.fast_calls,
               (unsigned long long)st_test_fallback_total(&before),
               (unsigned long long)st_test_fallback_total(&after));
        CHECKF(after.fast_bytes - before.fast_bytes == bytes,
               "%s: fast bytes %llu -> %llu, expected + %zu", where,
               (unsigned long long)before.fast_bytes, (unsigned long long)after.fast_bytes,
               bytes);
    } else {
        CHECKF(after.fallback_calls[c->expect] == before.fallback_calls[c->expect] + 1 &&
               after.fast_calls == before.fast_calls,
               "%s: %s fallbacks %llu -> %llu, fast calls %llu -> %llu", where,
               strata_fallback_string((strata_fallback_t)c->expect),
               (unsigned long long)before.fallback_calls[c->expect],
               (unsigned long long)after.fallback_calls[c->expect],
               (unsigned long long)before.fast_calls, (unsigned long long)after.fast_calls);
        CHECKF(after.fast_bytes == before.fast_bytes, "%s: fast bytes %llu -> %llu on a "
               "fallback", where, (unsigned long long)before.fast_bytes,
               (unsigned long long)after.fast_bytes);
    }

    if (dev.lib != NULL && c->expect < 0) {
        /* GPU to GPU on one node, for the types the kernels serve; staged otherwise */
        ipc = HAVE_CUDA && !c->multi && c->size > 1 && count > 0 && bytes >= dev.ipc_min &&
              strstr(t->name, "ldouble") == NULL && dmis == 0;
        CHECKF(after.device_calls - before.device_calls == (count > 0) &&
               after.ipc_calls - before.ipc_calls == (uint64_t)ipc,
               "%s: device calls %llu -> %llu, CUDA IPC calls %llu -> %llu (expected %d)", where,
               (unsigned long long)before.device_calls, (unsigned long long)after.device_calls,
               (unsigned long long)before.ipc_calls, (unsigned long long)after.ipc_calls, ipc);
    }

    t->canon(recv, count, canon);
    c->hash = st_test_hash_more(c->hash, canon, bytes);

out:
    if (d_send != 0) {
        dev.free(d_send);
    }
    if (d_region != 0) {
        dev.free(d_region);
    }
    free(send_mem);
    free(copy);
    free(expect);
    free(canon);
    free(region);
}

/* ---- sweeps ---- */

static const size_t fixed_counts[] = {0, 1, 2, 7, 13, 31, 63, 64, 65, 127, 129, 1000};
#define NFIXED (sizeof(fixed_counts) / sizeof(fixed_counts[0]))
#define MAX_COUNTS (NFIXED + 4)

/* The counts every (type, op) runs: fixed, then around the latency threshold. */
static int counts_for(const ctx_t *c, const type_t *t, size_t *counts)
{
    size_t small = c->small / t->size;
    int n = 0;
    size_t i;

    for (i = 0; i < NFIXED; i++) {
        counts[n++] = fixed_counts[i];
    }
    counts[n++] = small - 1;
    counts[n++] = small;
    counts[n++] = small + 1;
    return n;
}

/* Around the pipeline chunk of the comm: returns how many. */
static int chunk_counts(const ctx_t *c, const type_t *t, size_t *counts)
{
    size_t chunk = c->chunk / t->size;

    counts[0] = chunk - 1;
    counts[1] = chunk;
    counts[2] = chunk + 1;
    counts[3] = 2 * chunk + 3;
    return 4;
}

/*
 * Sweep @a c. full: every type x op at the fixed counts and around the latency
 * threshold, in both buffer modes; then every type around the chunk, its ops and
 * the buffer modes taking turns. Otherwise the same for the "small" types only,
 * and the chunk counts for int and double only.
 */
static void sweep(ctx_t *c, int full)
{
    size_t counts[MAX_COUNTS];
    const type_t *t;
    int ti, op, n, k, inplace, turn = 0;

    for (ti = 0; ti < NTYPES; ti++) {
        t = &types[ti];
        if (!full && !t->small) {
            continue;
        }
        for (op = 0; op < OP_LAST; op++) {
            if (!(t->ops & (1u << op))) {
                continue;
            }
            n = counts_for(c, t, counts);
            for (k = 0; k < n; k++) {
                for (inplace = 0; inplace < 2; inplace++) {
                    run_case(c, t, (op_t)op, counts[k], inplace);
                }
            }
        }
        if (!full && strcmp(t->name, "int") != 0 && strcmp(t->name, "double") != 0) {
            continue;
        }
        n = chunk_counts(c, t, counts);
        for (k = 0; k < n; k++) {
            /* the next op of this type, in turn */
            do {
                op = turn++ % OP_LAST;
            } while (!(t->ops & (1u << op)));
            run_case(c, t, (op_t)op, counts[k], (int)(c->ncalls & 1));
        }
    }
}

static void test_comm(MPI_Comm comm, const char *name, uint64_t tag, int full)
{
    ctx_t c;

    ctx_init(&c, comm, name, tag);
    sweep(&c, full);
    ctx_finish(&c);
}

static void test_default(void)
{
    MPI_Comm dup, oddeven, reversed, prefix;
    char name[64];
    int rank, size, k;

    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    test_comm(MPI_COMM_WORLD, "world", 1, 1);

    ST_TEST_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    test_comm(dup, "dup(world)", 2, 0);

    ST_TEST_MPI(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &oddeven));
    test_comm(oddeven, rank % 2 ? "odd ranks" : "even ranks", 3 + (uint64_t)(rank % 2), 0);

    ST_TEST_MPI(MPI_Comm_split(MPI_COMM_WORLD, 0, size - 1 - rank, &reversed));
    test_comm(reversed, "reversed world", 5, 0);

    for (k = 1; k <= size; k++) {
        ST_TEST_MPI(MPI_Comm_split(MPI_COMM_WORLD, rank < k, rank, &prefix));
        snprintf(name, sizeof(name), rank < k ? "ranks < %d" : "ranks >= %d", k);
        test_comm(prefix, name, 10 + 2 * (uint64_t)k + (rank < k), 0);
        ST_TEST_MPI(MPI_Comm_free(&prefix));
    }

    test_comm(MPI_COMM_SELF, "self", 100 + (uint64_t)rank, 0);

    /* the dup again, after other comms came and went: its plan is still right */
    test_comm(dup, "dup(world) again", 6, 0);

    ST_TEST_MPI(MPI_Comm_free(&reversed));
    ST_TEST_MPI(MPI_Comm_free(&oddeven));
    ST_TEST_MPI(MPI_Comm_free(&dup));
}

/* 64 MB and more in one call: many pipeline steps, offsets past 2^32 bits. */
static void test_big(void)
{
    const size_t mega = 1 << 20;
    MPI_Comm reversed;
    ctx_t c;
    int rank, size;

    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    ST_TEST_MPI(MPI_Comm_split(MPI_COMM_WORLD, 0, size - 1 - rank, &reversed));

    ctx_init(&c, MPI_COMM_WORLD, "world", 1);
    run_case(&c, type_by_name("double"), OP_SUM, 8 * mega + 3, 0);
    run_case(&c, type_by_name("int8"), OP_SUM, 64 * mega + 5, 1);
    ctx_finish(&c);

    ctx_init(&c, reversed, "reversed world", 5);
    run_case(&c, type_by_name("double"), OP_SUM, 8 * mega + 3, 1);
    run_case(&c, type_by_name("int8"), OP_SUM, 64 * mega + 5, 0);
    ctx_finish(&c);

    ST_TEST_MPI(MPI_Comm_free(&reversed));
}

int main(int argc, char **argv)
{
    int big = 0, i, rc;

    for (i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--big") == 0) {
            big = 1;
        } else if (strcmp(argv[i], "--layout") == 0 && i + 1 < argc &&
                   (layout = st_layout_find(argv[i + 1])) != NULL) {
            st_layout_apply(layout);
            i++;
        } else if (strcmp(argv[i], "--device") == 0 && i + 1 < argc) {
            dev.lib = argv[++i];
        } else {
            fprintf(stderr, "usage: test_allreduce [--big] [--layout NAME] [--device LIB]\n");
            return 99;
        }
    }
    MPI_Init(&argc, &argv);
    CHECK(strata_active());
    if (dev.lib != NULL && (rc = dev_open()) <= 0) {
        if (rc == 0 && st_test_world_rank() == 0) {
            printf("test_allreduce: --device %s: no GPU: skipped\n", dev.lib);
        }
        MPI_Finalize();
        return rc == 0 ? 77 : 1;
    }
    if (big) {
        test_big();
    } else {
        test_default();
    }
    if (dev.lib != NULL) {
        return st_test_finish(big ? "test_allreduce --big --device" : "test_allreduce --device");
    }
    return st_test_finish(big ? "test_allreduce --big" : "test_allreduce");
}
