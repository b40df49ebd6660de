/*
 * The GPU reduction kernels (cuda/st_cuda_kernels.cu) against the host engine
 * (coll/st_reduce.c): every type and op, 1 to 9 sources, in place or not, counts
 * from 1 to past one element per GPU thread; results bitwise equal (NaN equals
 * NaN: a GPU does not keep NaN payloads). Through Strata's launcher
 * (st_cuda_fold) and the driver API only.
 *
 *   test_cuda_fold [LIBCUDA]
 *   test_cuda_fold --time        (a GPU: fold bandwidth against a device copy)
 *
 * With tests/fake/libcuda.so.1 (the suite) the kernels run compiled for the host,
 * on "device memory" the CPU cannot touch; with no argument, the real driver runs
 * them on GPU 0 (tests/gpu/run-all.sh). Exits 77 when there is no driver or GPU,
 * or when the build has no kernels (configure found no nvcc).
 */
#include "config.h"

#include "st_cuda.h"
#include "st_cuda_kernels.h"
#include "st_reduce.h"
#include "st_test.h"

#include <complex.h>
#include <dlfcn.h>
#include <math.h>
#include <time.h>

#define MAX_SRC   9
#define MAX_COUNT 70000
#define BIG_COUNT (65535u * ST_CUDA_FOLD_BLOCK + 1000)   /* past one element per thread */
#define MAX_ELEM  32

typedef unsigned long long dptr_t;

static struct {
    int (*init)(unsigned);
    int (*device_get)(int *, int);
    int (*ctx_retain)(void **, int);
    int (*ctx_set)(void *);
    int (*alloc)(dptr_t *, size_t);
    int (*free_)(dptr_t);
    int (*copy)(dptr_t, dptr_t, size_t);
    int (*sync)(void);
    unsigned long (*launches)(void);   /* the stand-in's count; NULL for a real driver */
} cu;

static uint64_t rng = 88172645463325252ULL;

static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* a value of @a type at @a p: random bits for integers, small numbers, ties and
 * the special values for floating point, 0 or 1 for bool */
static void make_value(st_type_t type, unsigned char *p)
{
    static const double special[] = {0.0, -0.0, INFINITY, -INFINITY, NAN, 1e308, -1e308,
                                     3.0e38, 1e-310};
    size_t size = st_type_size(type), k;
    uint64_t r  = next();
    double d    = (r % 16 == 0) ? special[(r >> 8) % 9] : (double)((int64_t)(r >> 20) % 2001) / 4;

    switch (type) {
    case ST_TYPE_FLOAT:
        *(float*)p = (float)d;
        break;
    case ST_TYPE_DOUBLE:
        *(double*)p = d;
        break;
    case ST_TYPE_CFLOAT:
        *(float complex*)p = CMPLXF((float)d, (float)((r % 7 == 0) ? special[(r >> 12) % 9]
                                                                   : (double)((r >> 40) % 9) - 4));
        break;
    case ST_TYPE_CDOUBLE:
        *(double complex*)p = CMPLX(d, (r % 7 == 0) ? special[(r >> 12) % 9]
                                                    : (double)((r >> 40) % 9) - 4);
        break;
    case ST_TYPE_BOOL:
        *p = (unsigned char)(r & 1);
        break;
    case ST_TYPE_FLOAT_INT:
    case ST_TYPE_DOUBLE_INT:
    case ST_TYPE_LONG_INT:
    case ST_TYPE_TWO_INT:
    case ST_TYPE_SHORT_INT: {
        int v = (int)(r % 5), i = (int)((r >> 16) % 1000);   /* many ties */

        memset(p, 0, size);
        if (type == ST_TYPE_FLOAT_INT) {
            struct { float v; int i; } x = {(float)v, i};
            memcpy(p, &x, sizeof(x));
        } else if (type == ST_TYPE_DOUBLE_INT) {
            struct { double v; int i; } x = {(double)v, i};
            memcpy(p, &x, sizeof(x));
        } else if (type == ST_TYPE_LONG_INT) {
            struct { long v; int i; } x = {(long)v, i};
            memcpy(p, &x, sizeof(x));
        } else if (type == ST_TYPE_TWO_INT) {
            struct { int v; int i; } x = {v, i};
            memcpy(p, &x, sizeof(x));
        } else {
            struct { short v; int i; } x = {(short)v, i};
            memcpy(p, &x, sizeof(x));
        }
        break;
    }
    default:   /* every integer: random bits (sums and products wrap) */
        for (k = 0; k < size; k++) {
            p[k] = (unsigned char)(next() >> 24);
        }
    }
}

static int same_real(const unsigned char *a, const unsigned char *b, size_t size)
{
    if (size == sizeof(float)) {
        float x, y;
        memcpy(&x, a, sizeof(x));
        memcpy(&y, b, sizeof(y));
        return (isnan(x) && isnan(y)) || memcmp(a, b, size) == 0;
    } else {
        double x, y;
        memcpy(&x, a, sizeof(x));
        memcpy(&y, b, sizeof(y));
        return (isnan(x) && isnan(y)) || memcmp(a, b, size) == 0;
    }
}

/* element @a i of two results: bitwise, but any NaN equals any NaN */
static int same_elem(st_type_t type, const unsigned char *a, const unsigned char *b)
{
    switch (type) {
    case ST_TYPE_FLOAT:
    case ST_TYPE_DOUBLE:
        return same_real(a, b, st_type_size(type));
    case ST_TYPE_CFLOAT:
    case ST_TYPE_CDOUBLE: {
        size_t half = st_type_size(type) / 2;
        return same_real(a, b, half) && same_real(a + half, b + half, half);
    }
    default:   /* pairs: padding bytes are not compared */
        if (type == ST_TYPE_FLOAT_INT || type == ST_TYPE_SHORT_INT) {
            return memcmp(a, b, (type == ST_TYPE_FLOAT_INT) ? 8 : 2) == 0 &&
                   memcmp(a + 4, b + 4, 4) == 0;
        }
        if (type == ST_TYPE_DOUBLE_INT || type == ST_TYPE_LONG_INT) {
            return memcmp(a, b, 12) == 0;
        }
        return memcmp(a, b, st_type_size(type)) == 0;
    }
}

static unsigned char *host_src[MAX_SRC], *host_want, *host_got;
static dptr_t dev_src[MAX_SRC], dev_out;

/* one fold of @a nsrc sources of @a count elements on the GPU, checked; @a in_place
 * 0: into another buffer, 1: into the first source, 2: into every source at once
 * (st_cuda_fold_to, as the CUDA IPC path's one-GPU step) */
static void check_fold(st_type_t type, st_op_t op, int nsrc, size_t count, int in_place)
{
    const st_reduce_kernel_t *kernel = st_reduce_kernel(type, op);
    size_t size = st_type_size(type), i, bad = 0, first = 0;
    const void *hs[MAX_SRC], *ds[MAX_SRC];
    void *outs[MAX_SRC];
    int k, o, nout = (in_place == 2) ? nsrc : 1;

    for (k = 0; k < nsrc; k++) {
        for (i = 0; i < count; i++) {
            make_value(type, host_src[k] + i * size);
        }
        cu.copy(dev_src[k], (dptr_t)(uintptr_t)host_src[k], count * size);
        hs[k] = host_src[k];
        ds[k] = (const void*)(uintptr_t)dev_src[k];
    }
    st_reduce_fold(kernel, size, host_want, hs, nsrc, count);
    outs[0] = in_place ? (void*)(uintptr_t)dev_src[0] : (void*)(uintptr_t)dev_out;
    for (k = 1; k < nout; k++) {
        outs[k] = (void*)(uintptr_t)dev_src[k];
    }
    if (!CHECKF(st_cuda_fold_to(type, op, outs, nout, ds, nsrc, count, NULL) == 0,
                "%s %s: st_cuda_fold failed", st_type_name(type), st_op_name(op))) {
        return;
    }
    CHECK(cu.sync() == 0);
    for (o = 0; o < nout; o++) {
        memset(host_got, 0xa5, count * size);
        cu.copy((dptr_t)(uintptr_t)host_got, (dptr_t)(uintptr_t)outs[o], count * size);
        for (i = 0; i < count; i++) {
            if (!same_elem(type, host_got + i * size, host_want + i * size) && bad++ == 0) {
                first = i;
            }
        }
    }
    CHECKF(bad == 0, "%s %s, %d sources, %zu elements%s: %zu differ from the host engine "
           "(first at %zu)", st_type_name(type), st_op_name(op), nsrc, count,
           in_place == 2 ? ", into every source" : in_place ? ", in place" : "", bad, first);
}

static double now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Fold bandwidth (bytes read and written per second) of float sums of 2 and 4
 * sources, 1 MB to 1 GB per source, against a device-to-device copy of the same
 * size, each the best of 5 after a warm-up. */
static void time_folds(void)
{
    static const int nsrcs[] = {2, 4};
    dptr_t src[4], out;
    const void *ds[4];
    size_t bytes;
    double t, best_fold, best_copy;
    int k, n, r;

    printf("%12s %6s %12s %12s %8s\n", "bytes/src", "srcs", "fold GB/s", "copy GB/s", "ratio");
    for (bytes = 1 << 20; bytes <= ((size_t)1 << 30); bytes *= 4) {
        for (k = 0; k < 4; k++) {
            CHECK(cu.alloc(&src[k], bytes) == 0);
            ds[k] = (const void*)(uintptr_t)src[k];
        }
        CHECK(cu.alloc(&out, bytes) == 0);
        for (n = 0; n < (int)ST_ARRAY_SIZE(nsrcs); n++) {
            best_fold = best_copy = 1e30;
            for (r = 0; r < 6; r++) {
                t = now();
                st_cuda_fold(ST_TYPE_FLOAT, ST_OP_SUM, (void*)(uintptr_t)out, ds, nsrcs[n],
                             bytes / sizeof(float), NULL);
                cu.sync();
                t = now() - t;
                best_fold = (r > 0 && t < best_fold) ? t : best_fold;
                t = now();
                cu.copy(out, src[0], bytes);
                cu.sync();
                t = now() - t;
                best_copy = (r > 0 && t < best_copy) ? t : best_copy;
            }
            printf("%12zu %6d %12.1f %12.1f %8.2f\n", bytes, nsrcs[n],
                   (double)(nsrcs[n] + 1) * (double)bytes / best_fold / 1e9,
                   2.0 * (double)bytes / best_copy / 1e9,
                   ((double)(nsrcs[n] + 1) * (double)bytes / best_fold) /
                           (2.0 * (double)bytes / best_copy));
        }
        for (k = 0; k < 4; k++) {
            cu.free_(src[k]);
        }
        cu.free_(out);
    }
}

static int load_driver(const char *path)
{
    void *lib = dlopen(path, RTLD_NOW | RTLD_GLOBAL);

    if (lib == NULL) {
        return 0;
    }
    *(void**)&cu.init       = dlsym(lib, "cuInit");
    *(void**)&cu.device_get = dlsym(lib, "cuDeviceGet");
    *(void**)&cu.ctx_retain = dlsym(lib, "cuDevicePrimaryCtxRetain");
    *(void**)&cu.ctx_set    = dlsym(lib, "cuCtxSetCurrent");
    *(void**)&cu.alloc      = dlsym(lib, "cuMemAlloc_v2");
    *(void**)&cu.free_      = dlsym(lib, "cuMemFree_v2");
    *(void**)&cu.copy       = dlsym(lib, "cuMemcpy");
    *(void**)&cu.sync       = dlsym(lib, "cuCtxSynchronize");
    *(void**)&cu.launches   = dlsym(lib, "fake_cuda_launches");
    return cu.init && cu.device_get && cu.ctx_retain && cu.ctx_set && cu.alloc && cu.free_ &&
           cu.copy && cu.sync;
}

int main(int argc, char **argv)
{
    static const int nsrcs[]     = {1, 2, 3, 9};
    static const size_t counts[] = {1, 257, 3001};
    unsigned long launches0 = 0;
    int dev = 0, k, t, o, n, c, ntested = 0;
    void *ctx = NULL;
    const char *path = "libcuda.so.1";
    int timing = 0;
    st_type_t type;
    st_op_t op;

    MPI_Init(&argc, &argv);
    for (k = 1; k < argc; k++) {
        if (strcmp(argv[k], "--time") == 0) {
            timing = 1;
        } else {
            path = argv[k];
        }
    }
    if (!HAVE_CUDA) {
        printf("test_cuda_fold: built without nvcc: no GPU kernels (skipped)\n");
        MPI_Finalize();
        return 77;
    }
    if (!load_driver(path) || cu.init(0) != 0 ||
        cu.device_get(&dev, 0) != 0 || cu.ctx_retain(&ctx, dev) != 0 || cu.ctx_set(ctx) != 0) {
        printf("test_cuda_fold: no CUDA driver or GPU (skipped)\n");
        MPI_Finalize();
        return 77;
    }
    if (timing) {
        time_folds();
        return st_test_finish("cuda_fold --time");
    }
    for (k = 0; k < MAX_SRC; k++) {
        host_src[k] = malloc(MAX_COUNT * MAX_ELEM);
        CHECK(host_src[k] != NULL && cu.alloc(&dev_src[k], MAX_COUNT * MAX_ELEM) == 0);
    }
    host_want = malloc(BIG_COUNT);
    host_got  = malloc(BIG_COUNT);
    CHECK(host_want != NULL && host_got != NULL && cu.alloc(&dev_out, BIG_COUNT) == 0);
    if (st_test_nfail > 0) {
        return st_test_finish("cuda_fold");
    }
    if (cu.launches != NULL) {
        launches0 = cu.launches();
    }

    for (t = 0; t < ST_TYPE_LAST; t++) {
        type = (st_type_t)t;
        for (o = 0; o < ST_OP_LAST; o++) {
            op = (st_op_t)o;
            if (st_reduce_kernel(type, op) == NULL) {
                CHECKF(!st_cuda_fold_supported(type, op), "%s %s: a GPU kernel for an invalid "
                       "pair", st_type_name(type), st_op_name(op));
                continue;
            }
            n = (type == ST_TYPE_LDOUBLE || type == ST_TYPE_CLDOUBLE ||
                 type == ST_TYPE_LDOUBLE_INT);
            if (!CHECKF(st_cuda_fold_supported(type, op) == !n, "%s %s: GPU kernel %s",
                        st_type_name(type), st_op_name(op), n ? "for long double" : "missing")) {
                continue;
            }
            if (n) {
                continue;
            }
            for (n = 0; n < (int)ST_ARRAY_SIZE(nsrcs); n++) {
                for (c = 0; c < (int)ST_ARRAY_SIZE(counts); c++) {
                    check_fold(type, op, nsrcs[n], counts[c], (n + c) % 3);
                }
            }
            ntested++;
        }
    }
    printf("test_cuda_fold: %d (type, op) kernels checked\n", ntested);

    /* a count past one element per thread of the largest launch (grid-stride) */
    {
        const void *ds[2] = {(const void*)(uintptr_t)dev_out, (const void*)(uintptr_t)dev_out};
        size_t i, bad = 0;

        for (i = 0; i < BIG_COUNT; i++) {
            host_want[i] = (unsigned char)(next() >> 30);
        }
        cu.copy(dev_out, (dptr_t)(uintptr_t)host_want, BIG_COUNT);
        CHECK(st_cuda_fold(ST_TYPE_UINT8, ST_OP_SUM, (void*)(uintptr_t)dev_out, ds, 2, BIG_COUNT,
                           NULL) == 0);
        CHECK(cu.sync() == 0);
        cu.copy((dptr_t)(uintptr_t)host_got, dev_out, BIG_COUNT);
        for (i = 0; i < BIG_COUNT; i++) {
            bad += (host_got[i] != (unsigned char)(2 * host_want[i]));
        }
        CHECKF(bad == 0, "%u uint8 sums in place: %zu wrong", BIG_COUNT, bad);
    }

    /* what the launcher refuses, without launching */
    {
        const void *ds[1] = {(const void*)(uintptr_t)dev_src[0]};

        CHECK(st_cuda_fold(ST_TYPE_INT, ST_OP_SUM, (void*)(uintptr_t)dev_out, ds, 0, 10, NULL) ==
              -1);
        CHECK(st_cuda_fold(ST_TYPE_INT, ST_OP_SUM, (void*)(uintptr_t)dev_out, ds,
                           ST_CUDA_MAX_SRC + 1, 10, NULL) == -1);
        CHECK(st_cuda_fold(ST_TYPE_LDOUBLE, ST_OP_SUM, (void*)(uintptr_t)dev_out, ds, 1, 10,
                           NULL) == -1);
        CHECK(st_cuda_fold(ST_TYPE_FLOAT, ST_OP_BXOR, (void*)(uintptr_t)dev_out, ds, 1, 10,
                           NULL) == -1);
        CHECK(st_cuda_fold(ST_TYPE_INT, ST_OP_SUM, (void*)(uintptr_t)dev_out, ds, 1, 0, NULL) ==
              0);
    }
    if (cu.launches != NULL) {   /* the stand-in: every check above launched a kernel */
        CHECKF(cu.launches() - launches0 == (unsigned long)ntested * 12 + 1,
               "%lu launches for %d kernels x 12 folds + 1", cu.launches() - launches0, ntested);
    }

    for (k = 0; k < MAX_SRC; k++) {
        cu.free_(dev_src[k]);
        free(host_src[k]);
    }
    cu.free_(dev_out);
    free(host_want);
    free(host_got);
    return st_test_finish("cuda_fold");
}
