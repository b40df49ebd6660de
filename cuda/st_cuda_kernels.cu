/*
 * GPU reduction kernels, generated from the host engine's own definitions
 * (coll/st_reduce_ops.h): the same op expressions instantiated for the same
 * types, so a device buffer reduces as a host buffer does (integer sums wrap,
 * MAXLOC/MINLOC keep the lower index, complex products recover infinities as
 * C's Annex G says). Built with -fmad=false: no fused multiply-add, so float
 * results are the host's bit for bit.
 *
 * nvcc builds this file into a fatbin that libstrata carries and loads through
 * the driver API (cuModuleLoadData): libstrata never links the CUDA runtime.
 * With ST_CUDA_EMULATE, a host C++ compiler builds the same kernels as plain
 * functions (one thread, a grid-stride loop over everything): the stand-in driver
 * of the tests runs them, so the suite checks them on machines without a GPU.
 */
#include "st_cuda_kernels.h"

#ifdef ST_CUDA_EMULATE
#include <cmath>
#define __global__
#define __device__
#define __forceinline__ inline
struct st_cu_dim_t {
    unsigned x;
};
static const st_cu_dim_t threadIdx = {0}, blockIdx = {0}, blockDim = {1}, gridDim = {1};
using std::copysign;
using std::isinf;
using std::isnan;
#endif

/* ---- complex numbers: C's layout, C's arithmetic ---- */
template <typename R> struct st_cu_complex_t {
    R re, im;
};

template <typename R>
__device__ __forceinline__ st_cu_complex_t<R> operator+(st_cu_complex_t<R> a,
                                                       st_cu_complex_t<R> b)
{
    st_cu_complex_t<R> z = {a.re + b.re, a.im + b.im};
    return z;
}

/* (a + bi)(c + di) as C99 Annex G (G.5.1) defines it: the plain formula, and when
 * both parts come out NaN, the recovery of infinite operands and overflows. */
template <typename R>
__device__ __forceinline__ st_cu_complex_t<R> operator*(st_cu_complex_t<R> u,
                                                       st_cu_complex_t<R> v)
{
    R a = u.re, b = u.im, c = v.re, d = v.im;
    R ac = a * c, bd = b * d, ad = a * d, bc = b * c;
    st_cu_complex_t<R> z = {ac - bd, ad + bc};

    if (isnan(z.re) && isnan(z.im)) {
        int recalc = 0;

        if (isinf(a) || isinf(b)) {
            a = copysign(isinf(a) ? (R)1 : (R)0, a);
            b = copysign(isinf(b) ? (R)1 : (R)0, b);
            c = isnan(c) ? copysign((R)0, c) : c;
            d = isnan(d) ? copysign((R)0, d) : d;
            recalc = 1;
        }
        if (isinf(c) || isinf(d)) {
            c = copysign(isinf(c) ? (R)1 : (R)0, c);
            d = copysign(isinf(d) ? (R)1 : (R)0, d);
            a = isnan(a) ? copysign((R)0, a) : a;
            b = isnan(b) ? copysign((R)0, b) : b;
            recalc = 1;
        }
        if (!recalc && (isinf(ac) || isinf(bd) || isinf(ad) || isinf(bc))) {
            a = isnan(a) ? copysign((R)0, a) : a;
            b = isnan(b) ? copysign((R)0, b) : b;
            c = isnan(c) ? copysign((R)0, c) : c;
            d = isnan(d) ? copysign((R)0, d) : d;
            recalc = 1;
        }
        if (recalc) {
            z.re = (R)INFINITY * (a * c - b * d);
            z.im = (R)INFINITY * (a * d + b * c);
        }
    }
    return z;
}

typedef st_cu_complex_t<float> st_cfloat_t;
typedef st_cu_complex_t<double> st_cdouble_t;

#include "st_reduce_ops.h"

/* ---- one kernel per (type, op): a grid-stride loop, one element per step ---- */
#define ST_CU_KERNEL(_on, _on_name, _X, _tn, _T, _U) \
    extern "C" __global__ void st_fold_##_tn##_##_on_name(st_cuda_fold_args_t args) \
    { \
        unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; \
        unsigned long long step = (unsigned long long)gridDim.x * blockDim.x; \
        int k; \
        for (; i < args.count; i += step) { \
            _T acc = ((const _T *)args.src[0])[i]; \
            for (k = 1; k < args.nsrc; k++) { \
                acc = _X(_T, _U, acc, ((const _T *)args.src[k])[i]); \
            } \
            for (k = 0; k < args.nout; k++) { \
                ((_T *)args.out[k])[i] = acc; \
            } \
        } \
    }

#define ST_CU_FAMILY(_cls, _tn, _T, _U) ST_OPS_##_cls(ST_CU_KERNEL, _tn, _T, _U)
ST_KERNEL_TYPES(ST_CU_FAMILY)

/* the GPU local solver of libstrata_glm (TPA-SCD) */
#include "st_glm_kernels.cuh"

#ifdef ST_CUDA_EMULATE
/* The stand-in driver (tests/fake_cuda.c) finds the emulated kernels by name, as
 * cuModuleGetFunction does, and launches them through st_cuda_emulated_launch(),
 * which first checks that every pointer a kernel gets is device memory (a GPU
 * cannot dereference host memory): fake_cuda_is_device() is the driver's. */
#include <cstring>

extern "C" int fake_cuda_is_device(const void *p);

/* the epoch kernels: a block a row, or a warp a row (and the margins and Newton's
 * Hessian-vector product: a warp a row); a vector's zeroing */
typedef enum {
    ST_CU_EMU_FOLD,
    ST_CU_EMU_EPOCH,
    ST_CU_EMU_EPOCH_WARP,
    ST_CU_EMU_VECTOR,  /* st_glm_vzero: a.hv alone */
    ST_CU_EMU_CG,      /* st_glm_cg: its own arguments */
    ST_CU_EMU_ROWS     /* st_glm_newton_rows: its own arguments */
} st_cu_emu_kind_t;

typedef struct {
    const char *name;
    st_cu_emu_kind_t kind;
    void (*fold)(st_cuda_fold_args_t);
    void (*epoch)(st_glm_epoch_args_t, unsigned grid);
    void (*cg)(st_glm_cg_args_t);
    void (*rows)(st_glm_rows_args_t);
} st_cu_emu_entry_t;

#define ST_CU_EMU_ENTRY(_on, _on_name, _X, _tn, _T, _U) \
    {"st_fold_" #_tn "_" #_on_name, ST_CU_EMU_FOLD, st_fold_##_tn##_##_on_name, NULL, NULL, NULL},
#define ST_CU_EMU_FAMILY(_cls, _tn, _T, _U) ST_OPS_##_cls(ST_CU_EMU_ENTRY, _tn, _T, _U)
static const st_cu_emu_entry_t st_cu_emulated[] = {
    ST_KERNEL_TYPES(ST_CU_EMU_FAMILY)
    {"st_glm_tpa_epoch", ST_CU_EMU_EPOCH, NULL, st_glm_tpa_epoch_waves, NULL, NULL},
    {"st_glm_tpa_epoch_warp", ST_CU_EMU_EPOCH_WARP, NULL, st_glm_tpa_epoch_waves, NULL, NULL},
    {"st_glm_margins", ST_CU_EMU_EPOCH_WARP, NULL, st_glm_margins_rows, NULL, NULL},
    {"st_glm_newton_hv", ST_CU_EMU_EPOCH_WARP, NULL, st_glm_newton_hv_rows, NULL, NULL},
    {"st_glm_newton_grad", ST_CU_EMU_EPOCH_WARP, NULL, st_glm_newton_grad_rows, NULL, NULL},
    {"st_glm_vzero", ST_CU_EMU_VECTOR, NULL, st_glm_vzero_all, NULL, NULL},
    {"st_glm_cg", ST_CU_EMU_CG, NULL, NULL, st_glm_cg_all, NULL},
    {"st_glm_newton_rows", ST_CU_EMU_ROWS, NULL, NULL, NULL, st_glm_rows_all},
};

extern "C" const void *st_cuda_emulated_kernel(const char *name)
{
    for (size_t k = 0; k < sizeof(st_cu_emulated) / sizeof(st_cu_emulated[0]); k++) {
        if (strcmp(st_cu_emulated[k].name, name) == 0) {
            return &st_cu_emulated[k];
        }
    }
    return NULL;
}

/* @return 0, or the CUresult a GPU would give (700: an illegal address); @a grid
 * blocks of @a block threads (an epoch runs in waves of its rows in flight: the
 * blocks, or their warps) */
extern "C" int st_cuda_emulated_launch(const void *kernel, unsigned grid, unsigned block,
                                       void **params)
{
    const st_cu_emu_entry_t *e = (const st_cu_emu_entry_t *)kernel;

    if (e->kind == ST_CU_EMU_FOLD) {
        st_cuda_fold_args_t a;

        memcpy(&a, params[0], sizeof(a));
        if (a.nsrc < 1 || a.nsrc > ST_CUDA_MAX_SRC || a.nout < 1 || a.nout > ST_CUDA_MAX_SRC) {
            return 700;
        }
        for (int k = 0; k < a.nout; k++) {
            if (!fake_cuda_is_device(a.out[k])) {
                return 700;
            }
        }
        for (int k = 0; k < a.nsrc; k++) {
            if (!fake_cuda_is_device(a.src[k])) {
                return 700;
            }
        }
        e->fold(a);
    } else if (e->kind == ST_CU_EMU_ROWS) {
        st_glm_rows_args_t a;

        memcpy(&a, params[0], sizeof(a));
        if (block != ST_GLM_ROWS_LANES || grid < 1) {
            return 1;   /* the chunk's lanes are the block's threads */
        }
        if (a.m > 0 && (!fake_cuda_is_device(a.y) || !fake_cuda_is_device(a.c) ||
                        !fake_cuda_is_device(a.xs) || !fake_cuda_is_device(a.z) ||
                        !fake_cuda_is_device(a.part) ||
                        (a.op == ST_GLM_ROWS_GRAD && (!fake_cuda_is_device(a.dd) ||
                                                      !fake_cuda_is_device(a.ga))))) {
            return 700;
        }
        e->rows(a);
    } else if (e->kind == ST_CU_EMU_CG) {
        st_glm_cg_args_t a;

        memcpy(&a, params[0], sizeof(a));
        if (block != ST_GLM_CG_LANES || grid < 1) {
            return 1;   /* the chunk's lanes are the block's threads */
        }
        if (a.len > 0 && (!fake_cuda_is_device(a.g) || !fake_cuda_is_device(a.m) ||
                          !fake_cuda_is_device(a.s) || !fake_cuda_is_device(a.r) ||
                          !fake_cuda_is_device(a.q) || !fake_cuda_is_device(a.hq) ||
                          !fake_cuda_is_device(a.part) ||
                          (a.op == ST_GLM_CG_FINISH && !fake_cuda_is_device(a.hv)))) {
            return 700;
        }
        e->cg(a);
    } else {
        st_glm_epoch_args_t a;

        memcpy(&a, params[0], sizeof(a));
        if (e->kind == ST_CU_EMU_EPOCH_WARP && (block % 32 != 0)) {
            return 1;   /* a warp a row: whole warps only */
        }
        if (a.hot < 0 || a.hot > ST_GLM_HV_HOT) {
            return 700;   /* st_glm_newton_hv's shared memory overrun */
        }
        if (e->kind == ST_CU_EMU_VECTOR) {
            if (a.n > 0 && !fake_cuda_is_device(a.hv)) {
                return 700;
            }
            e->epoch(a, grid);
            return 0;
        }
        if (a.n > 0 && (!fake_cuda_is_device(a.indptr) ||
                        !fake_cuda_is_device(a.indices) || !fake_cuda_is_device(a.values) ||
                        !fake_cuda_is_device(a.y) || !fake_cuda_is_device(a.c) ||
                        !fake_cuda_is_device(a.sqnorm) || !fake_cuda_is_device(a.alpha) ||
                        !fake_cuda_is_device(a.u) ||
                        (a.z != NULL && !fake_cuda_is_device(a.z)) ||
                        (a.dd != NULL && !fake_cuda_is_device(a.dd)) ||
                        (a.hv != NULL && !fake_cuda_is_device(a.hv)) ||
                        (a.ga != NULL && !fake_cuda_is_device(a.ga)) ||
                        (a.hd != NULL && !fake_cuda_is_device(a.hd)))) {
            return 700;
        }
        e->epoch(a, (e->kind == ST_CU_EMU_EPOCH_WARP) ? grid * (block / 32) : grid);
    }
    return 0;
}
#endif
