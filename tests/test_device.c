/*
 * MPI_Allreduce on device buffers, without a GPU: tests/fake_cuda.c stands in for
 * libcuda.so.1 (loaded here by path, found by Strata by its soname) and gives out
 * "device memory" the CPU cannot touch. Ranks mix their buffers: device send and
 * receive, host send and device receive, device send and host receive, device in
 * place, all host; small and large counts, doubles and ints. The results must be
 * right on every rank, Strata's fast path must have run, and every rank with a
 * device buffer must have gone through the driver's copies. On one node, all-device
 * calls must take CUDA IPC; across nodes (virtual nodes), large device buffers must
 * be staged piece by piece. Calls Strata hands to (this CUDA-unaware) Open MPI must
 * be staged too. Each call asks the driver about each buffer once. The program
 * makes the device's primary context current, as a CUDA program does; with
 * FAKE_CUDA_POOL=1 (memory of a pool: no context, no IPC handle) it calls MPI with
 * no context current, and every call must be staged in the primary context.
 *
 *   test_device PATH/libcuda.so.1
 *   test_device PATH/libcuda.so.1 --fail: one allreduce of 1M doubles, device to
 *     device, then "rank R returned" (tests/device_fail.sh fails a CUDA call on one
 *     rank: no rank may return, since the others' results are not whole)
 *   test_device PATH/libcuda.so.1 --gone (2 ranks): rank 1 replaces an allocation
 *     that rank 0 mapped by one at the same address during a call rank 0 makes with
 *     host buffers (staged: the overlap never reaches rank 0), then by another
 *     elsewhere; rank 0 must map only the last (the first, freed, must not stay
 *     mapped there, keeping its memory alive)
 */
#include "config.h"

#include "strata.h"
#include "st_test.h"

#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *(*dev_alloc)(size_t);
static void (*dev_free)(void *);
static unsigned long (*dev_copies)(void);
static int (*dev_memcpy)(unsigned long long, unsigned long long, size_t);
static unsigned long (*dev_mapped)(void);
static unsigned long (*dev_queries)(void);
static int (*dev_flag)(const char *);
static int (*dev_set_current)(void *);
static void *dev_ctx;    /* the device's primary context, which this program made */
static int pool;         /* FAKE_CUDA_POOL=1: device memory a pool's, tied to no context */
static int singles;      /* FAKE_CUDA_SINGLES=1: the driver answers single queries only */
static int no_kernels;   /* FAKE_CUDA_NO_KERNELS=1: Strata's kernels do not load */

/* Strata asks the driver once per buffer per call, whatever path the call takes
 * (the send buffer is none in place); where the driver answers single queries
 * only (FAKE_CUDA_SINGLES=1), the failed one, then the memory type, and for
 * device memory six more (the first device buffer's call also the multiple query
 * that failed on it) */
static void check_queries(unsigned long before, const void *sb, const char *what, int n)
{
    unsigned long q = dev_queries() - before, bufs = (sb == MPI_IN_PLACE) ? 1 : 2;
    unsigned long want = singles ? 8 * bufs : bufs;

    CHECKF(!strata_active() || q <= want,
           "%s, count %d: %lu driver pointer queries in one call, expected at most %lu", what,
           n, q, want);
}

/* a copy by the driver in the device's primary context, as a CUDA program makes
 * them; with pool memory the program calls MPI without a current context (a thread
 * of its own for communication), so Strata must find the memory's device's context */
static void to_dev(void *dst, const void *src, size_t n)
{
    int rc;

    if (pool) {
        dev_set_current(dev_ctx);
    }
    rc = dev_memcpy((unsigned long long)(uintptr_t)dst, (unsigned long long)(uintptr_t)src, n);
    if (pool) {
        dev_set_current(NULL);
    }
    CHECKF(rc == 0, "the test's own cuMemcpy failed (CUresult %d)", rc);
}

/* a user-defined op: the sum of doubles, or of one vector of NV blocks of 2 of 3 */
enum { NV = 3 };
static void my_sum(void *in, void *inout, int *len, MPI_Datatype *type)
{
    int i;

    for (i = 0; i < ((*type == MPI_DOUBLE) ? *len : 3 * NV); i++) {
        if (*type == MPI_DOUBLE || i % 3 != 2) {
            ((double*)inout)[i] += ((double*)in)[i];
        }
    }
}

/* A communicator's attribute whose delete callback reduces device buffers on the
 * communicator being freed (a library tidying up): Strata hands that call to
 * PMPI_Allreduce, which must get host copies (this Open MPI is not CUDA-aware) */
static void *del_ds, *del_dr;
static int del_rc = -1;
static double del_got[4];

static int del_reduce(MPI_Comm comm, int key, void *val, void *extra)
{
    double h[4] = {1, 2, 3, 4};

    (void)key;
    (void)val;
    (void)extra;
    to_dev(del_ds, h, sizeof(h));
    del_rc = MPI_Allreduce(del_ds, del_dr, 4, MPI_DOUBLE, MPI_SUM, comm);
    to_dev(del_got, del_dr, sizeof(del_got));
    return MPI_SUCCESS;
}

/* MPI_COMM_SELF's delete callback, which MPI_Finalize runs first (the standard's
 * hook for a library's last work): device buffers reduced on MPI_COMM_WORLD there
 * go to PMPI_Allreduce too (Strata's plans are gone), staged. Nothing can be
 * counted by then: a wrong sum is said on stderr, which fails the test. */
static int fin_reduce(MPI_Comm comm, int key, void *val, void *extra)
{
    double h[4] = {1, 2, 3, 4};
    int rc, i, size;

    (void)comm;
    (void)key;
    (void)val;
    (void)extra;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    to_dev(del_ds, h, sizeof(h));
    rc = MPI_Allreduce(del_ds, del_dr, 4, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    to_dev(h, del_dr, sizeof(h));
    for (i = 0; i < 4 && h[i] == (double)size * (i + 1); i++) {
    }
    if (rc != MPI_SUCCESS || i < 4) {
        fprintf(stderr, "test_device: device buffers reduced in MPI_Finalize's callback: rc "
                "%d, [%d] = %g, expected %g\n", rc, i, i < 4 ? h[i] : 0.0,
                (double)size * (i + 1));
    }
    return MPI_SUCCESS;
}

/* the sums of the inputs below over @a size ranks */
static double want_d(int size, int k)
{
    return 0.5 * size * (size + 1) / 2.0 + (double)size * (k % 7);
}

static int want_i(int size, int k)
{
    return 3 * size * (size - 1) / 2 + size * (k % 11);
}

int main(int argc, char **argv)
{
    static const int counts[] = {1, 10, 3000, 1 << 20};
    int rank, size, c, mode, k, dev_used = 0, nodes, staged_pieces;
    unsigned long copies0, queries0;
    void *lib;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    lib = (argc > 1) ? dlopen(argv[1], RTLD_NOW | RTLD_GLOBAL) : NULL;
    if (lib == NULL) {
        fprintf(stderr, "test_device: cannot load the fake libcuda: %s\n", dlerror());
        MPI_Abort(MPI_COMM_WORLD, 99);
    }
    *(void**)&dev_alloc  = dlsym(lib, "fake_cuda_alloc");
    *(void**)&dev_free   = dlsym(lib, "fake_cuda_free");
    *(void**)&dev_copies = dlsym(lib, "fake_cuda_copies");
    *(void**)&dev_memcpy = dlsym(lib, "cuMemcpy");
    *(void**)&dev_mapped = dlsym(lib, "fake_cuda_ipc_mapped");
    *(void**)&dev_queries = dlsym(lib, "fake_cuda_queries");
    *(void**)&dev_flag   = dlsym(lib, "fake_cuda_flag");
    *(void**)&dev_set_current = dlsym(lib, "cuCtxSetCurrent");
    {
        int (*retain)(void **, int);

        *(void**)&retain = dlsym(lib, "cuDevicePrimaryCtxRetain");
        if (retain(&dev_ctx, 0) != 0 || dev_set_current(dev_ctx) != 0) {
            fprintf(stderr, "test_device: the stand-in's primary context failed\n");
            MPI_Abort(MPI_COMM_WORLD, 99);
        }
    }
    pool       = dev_flag("FAKE_CUDA_POOL");
    if (pool) {
        dev_set_current(NULL);
    }
    singles    = dev_flag("FAKE_CUDA_SINGLES");
    no_kernels = dev_flag("FAKE_CUDA_NO_KERNELS");
    if (argc > 2 && strcmp(argv[2], "--gone") == 0 && size == 2) {
        size_t n = 1 << 18, bytes = n * sizeof(double);
        double *h = calloc(n, sizeof(double));
        void *a = dev_alloc(bytes), *b, *last, *mine = dev_alloc(bytes);

        /* 1. device in place on both: rank 0 maps rank 1's a */
        MPI_Allreduce(MPI_IN_PLACE, rank ? a : mine, (int)n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        /* 2. rank 1: a freed, b in its place; rank 0 with host buffers (staged) */
        if (rank == 1) {
            dev_free(a);
            b = dev_alloc(bytes);
            CHECKF(b == a, "the stand-in gave the new allocation another address (%p, %p): "
                   "the overlap is not tested", b, a);
        } else {
            b = NULL;
        }
        MPI_Allreduce(MPI_IN_PLACE, rank ? b : (void*)h, (int)n, MPI_DOUBLE, MPI_SUM,
                      MPI_COMM_WORLD);
        /* 3. rank 1: b freed, the last elsewhere (a spacer keeps it from b's place); all
         * device */
        if (rank == 1) {
            void *spacer = dev_alloc(bytes);

            dev_free(b);
            last = dev_alloc(2 * bytes);
            dev_free(spacer);
        } else {
            last = NULL;
        }
        MPI_Allreduce(MPI_IN_PLACE, rank ? last : mine, (int)n, MPI_DOUBLE, MPI_SUM,
                      MPI_COMM_WORLD);
        MPI_Allreduce(MPI_IN_PLACE, rank ? last : mine, (int)n, MPI_DOUBLE, MPI_SUM,
                      MPI_COMM_WORLD);
        if (rank == 0) {
            CHECKF(dev_mapped() == (HAVE_CUDA ? 1u : 0u), "rank 0 maps %lu of rank 1's "
                   "allocations (1 is alive; none without CUDA IPC)", dev_mapped());
        }
        free(h);
        return st_test_finish("test_device --gone");
    }
    if (argc > 2 && strcmp(argv[2], "--fail") == 0) {
        size_t bytes = (size_t)(1 << 20) * sizeof(double);
        void *ds = dev_alloc(bytes), *dr = dev_alloc(bytes);

        MPI_Allreduce(ds, dr, 1 << 20, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        printf("rank %d returned\n", rank);
        fflush(stdout);
        dev_free(ds);
        dev_free(dr);
        MPI_Finalize();
        return 0;
    }

    /* a communicator across nodes (virtual nodes): no CUDA IPC, the staging pipeline */
    {
        strata_layout_t lay;

        nodes = (strata_active() && strata_comm_layout(MPI_COMM_WORLD, &lay, NULL) == STRATA_OK)
                    ? lay.nnodes
                    : 1;
        staged_pieces = HAVE_CUDA && nodes > 1 && getenv("STRATA_HIER_PIECE") == NULL;
    }

    for (c = 0; c < (int)(sizeof(counts) / sizeof(counts[0])); c++) {
        int n = counts[c];
        double *hs = malloc((size_t)n * sizeof(double)), *hr = malloc((size_t)n * sizeof(double));
        int *is = malloc((size_t)n * sizeof(int)), *ir = malloc((size_t)n * sizeof(int));
        void *ds = dev_alloc((size_t)n * sizeof(double)), *dr = dev_alloc((size_t)n * sizeof(double));

        for (mode = 0; mode < 5; mode++) {
            /* the mode of this rank: 0 device/device, 1 host/device, 2 device/host,
               3 device in place, 4 host/host; ranks take different ones */
            int my = (mode + rank) % 5;
            const void *sb;
            void *rb;

            for (k = 0; k < n; k++) {
                hs[k] = (double)(rank + 1) * 0.5 + k % 7;
                is[k] = rank * 3 + k % 11;
            }
            memset(hr, 0, (size_t)n * sizeof(double));
            sb = (my == 0 || my == 2) ? ds : hs;
            rb = (my == 0 || my == 1 || my == 3) ? dr : hr;
            if (my == 0 || my == 2) {
                to_dev(ds, hs, (size_t)n * sizeof(double));
            }
            if (my == 3) {
                to_dev(dr, hs, (size_t)n * sizeof(double));
                sb = MPI_IN_PLACE;
            }
            dev_used += (my != 4);
            copies0 = dev_copies();
            queries0 = dev_queries();
            MPI_Allreduce(sb, rb, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
            check_queries(queries0, sb, "mixed buffers", n);
            /* across nodes, large device buffers are staged piece by piece (1 MB) */
            CHECKF(!staged_pieces || my != 0 || n != 1 << 20 || dev_copies() - copies0 >= 16,
                   "8 MB device to device across nodes: %lu driver copies, expected one in "
                   "and one out per 1 MB piece", dev_copies() - copies0);
            if (rb == dr) {
                to_dev(hr, dr, (size_t)n * sizeof(double));
            }
            for (k = 0; k < n && hr[k] == want_d(size, k); k++) {
            }
            CHECKF(k == n, "count %d mode %d: [%d] = %g, expected %g", n, my, k,
                   k < n ? hr[k] : 0.0, want_d(size, k));

            /* ints, device in and out */
            to_dev(ds, is, (size_t)n * sizeof(int));
            MPI_Allreduce(ds, (my == 4) ? (void*)ir : dr, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
            if (my != 4) {
                to_dev(ir, dr, (size_t)n * sizeof(int));
            }
            for (k = 0; k < n && ir[k] == want_i(size, k); k++) {
            }
            CHECKF(k == n, "int count %d: [%d] = %d, expected %d", n, k, k < n ? ir[k] : 0,
                   want_i(size, k));
        }
        dev_free(ds);
        dev_free(dr);
        free(hs);
        free(hr);
        free(is);
        free(ir);
    }

    /* across nodes, the pipeline's four staging buffers stay pinned with the plan
     * (each on pages of its own: the driver pins whole pages, and fails on one
     * pinned already) */
    if (HAVE_CUDA && strata_active() && nodes > 1) {
        unsigned long *pinned = dlsym(lib, "fake_cuda_registered");

        CHECKF(pinned != NULL && *pinned == 4,
               "%lu host buffers pinned after the staged pipeline, expected its 4",
               pinned != NULL ? *pinned : 0);
    }

    /* CUDA IPC: every rank's buffers on the device and large enough (STRATA_CUDA_IPC_MIN,
     * 1M by default): reduced GPU to GPU through the peers' mapped buffers. Fresh
     * allocations every round, in place every other: each peer's new buffers must be
     * mapped (a handle opens once per process: the cache goes by buffer id), and its
     * freed ones, whose addresses the new ones take, closed. */
    {
        const int n = 1 << 17, rounds = 6;   /* 1 MB of doubles */
        uint64_t ipc0 = st_test_stats(MPI_COMM_WORLD).ipc_calls, ipc;
        double *hs = malloc((size_t)n * sizeof(double)), *hr = malloc((size_t)n * sizeof(double));
        int round, gpu_path = HAVE_CUDA && strata_active() && size > 1 && nodes == 1 &&
                              getenv("STRATA_CUDA_IPC_MIN") == NULL;
        int expect = gpu_path && !no_kernels && !pool;
        int nocache = strcmp(st_test_config("STRATA_CUDA_IPC_CACHE"), "n") == 0;
        unsigned long mapped = 0;

        for (round = 0; round < rounds; round++) {
            void *ds = dev_alloc((size_t)n * sizeof(double));
            void *dr = dev_alloc((size_t)n * sizeof(double));

            for (k = 0; k < n; k++) {
                hs[k] = (double)(rank + 1) * 0.5 + k % 7 + round;
            }
            if (round % 2) {
                to_dev(dr, hs, (size_t)n * sizeof(double));
                queries0 = dev_queries();
                MPI_Allreduce(MPI_IN_PLACE, dr, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
                check_queries(queries0, MPI_IN_PLACE, "CUDA IPC", n);
            } else {
                to_dev(ds, hs, (size_t)n * sizeof(double));
                queries0 = dev_queries();
                MPI_Allreduce(ds, dr, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
                check_queries(queries0, ds, "CUDA IPC", n);
            }
            to_dev(hr, dr, (size_t)n * sizeof(double));
            for (k = 0; k < n && hr[k] == want_d(size, k) + (double)size * round; k++) {
            }
            CHECKF(k == n, "CUDA IPC round %d: [%d] = %g, expected %g", round, k,
                   k < n ? hr[k] : 0.0, want_d(size, k) + (double)size * round);
            if (dev_mapped != NULL) {
                mapped = dev_mapped();
            }
            /* STRATA_CUDA_IPC_CACHE=n: nothing of the peers' stays mapped */
            CHECKF(!expect || !nocache || mapped == 0,
                   "round %d: %lu peer buffers mapped after the call, with the cache off",
                   round, mapped);
            dev_free(ds);
            dev_free(dr);
        }
        ipc = st_test_stats(MPI_COMM_WORLD).ipc_calls - ipc0;
        CHECKF(!expect || ipc == (uint64_t)rounds, "%llu of %d all-device calls took CUDA IPC",
               (unsigned long long)ipc, rounds);
        /* GPUs the kernels do not load on: staged, on every rank alike (not an abort) */
        CHECKF(!gpu_path || !no_kernels || ipc == 0,
               "%llu all-device calls took CUDA IPC without kernels", (unsigned long long)ipc);
        /* a pool's memory has no legacy IPC handle: staged through the host */
        CHECKF(!pool || ipc == 0, "%llu calls on a pool's memory took CUDA IPC",
               (unsigned long long)ipc);
        /* each peer's current send and receive buffers, plus at most one round's
         * leftovers (a freed buffer whose address was not reused yet) */
        CHECKF(!expect || mapped <= 4 * (unsigned long)(size - 1),
               "%lu peer buffers still mapped after %d rounds (stale mappings kept?)", mapped,
               rounds);
        free(hs);
        free(hr);
    }

    /* CUDA IPC again, each round's buffers larger than the last's and kept apart by
     * small allocations, so that no new buffer takes a freed one's addresses: the
     * owners must say which they freed (before: every freed buffer stayed mapped,
     * holding its memory, until 64 others pushed it out of the cache) */
    {
        const int rounds = 8;
        int round, expect = HAVE_CUDA && strata_active() && size > 1 && nodes == 1 &&
                            !no_kernels && !pool && getenv("STRATA_CUDA_IPC_MIN") == NULL;
        unsigned long mapped = 0;
        void *spacer[2 * 8];

        for (round = 0; round < rounds; round++) {
            int n = (1 << 17) + round * 8192;   /* 1 MB of doubles, 64 KB more each round */
            double *h = malloc((size_t)n * sizeof(double));
            void *ds = dev_alloc((size_t)n * sizeof(double));
            void *dr;

            spacer[2 * round] = dev_alloc(4096);
            dr                = dev_alloc((size_t)n * sizeof(double));
            spacer[2 * round + 1] = dev_alloc(4096);
            for (k = 0; k < n; k++) {
                h[k] = (double)(rank + 1) * 0.5 + k % 7 + round;
            }
            to_dev(ds, h, (size_t)n * sizeof(double));
            MPI_Allreduce(ds, dr, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
            to_dev(h, dr, (size_t)n * sizeof(double));
            for (k = 0; k < n && h[k] == want_d(size, k) + (double)size * round; k++) {
            }
            CHECKF(k == n, "CUDA IPC, growing buffers, round %d: [%d] = %g, expected %g", round,
                   k, k < n ? h[k] : 0.0, want_d(size, k) + (double)size * round);
            if (dev_mapped != NULL) {
                mapped = dev_mapped();
            }
            /* each peer's buffers of this round only: the last round's were said freed */
            CHECKF(!expect || mapped <= 2 * (unsigned long)(size - 1),
                   "growing buffers, round %d: %lu peer buffers mapped, expected at most %lu "
                   "(freed ones kept?)", round, mapped, 2 * (unsigned long)(size - 1));
            dev_free(ds);
            dev_free(dr);
            free(h);
        }
        for (round = 0; round < 2 * rounds; round++) {
            dev_free(spacer[round]);
        }
    }

    /* Calls Strata hands to PMPI_Allreduce, on device buffers: this Open MPI is not
     * CUDA-aware, so Strata must stage them (PMPI on the stand-in's memory would
     * crash): a user-defined op, on doubles and on a derived type whose gaps must
     * keep their bytes; a communicator of one rank */
    {
        double hs[3 * NV], hr[3 * NV];
        void *ds = dev_alloc(sizeof(hs)), *dr = dev_alloc(sizeof(hr));
        MPI_Datatype vec;
        MPI_Op myop;
        int i;

        MPI_Op_create(my_sum, 1, &myop);
        for (i = 0; i < 3 * NV; i++) {
            hs[i] = (double)(rank + 1) * (i + 1);
            hr[i] = -7.0;
        }
        to_dev(ds, hs, sizeof(hs));
        to_dev(dr, hr, sizeof(hr));
        MPI_Allreduce(ds, dr, 3 * NV, MPI_DOUBLE, myop, MPI_COMM_WORLD);
        to_dev(hr, dr, sizeof(hr));
        for (i = 0; i < 3 * NV && hr[i] == (double)size * (size + 1) / 2 * (i + 1); i++) {
        }
        CHECKF(i == 3 * NV, "user op on device buffers: [%d] = %g", i, i < 3 * NV ? hr[i] : 0.0);

        MPI_Type_vector(NV, 2, 3, MPI_DOUBLE, &vec);
        MPI_Type_commit(&vec);
        for (i = 0; i < 3 * NV; i++) {
            hr[i] = -7.0;
        }
        to_dev(dr, hr, sizeof(hr));
        MPI_Allreduce(ds, dr, 1, vec, myop, MPI_COMM_WORLD);
        to_dev(hr, dr, sizeof(hr));
        for (i = 0; i < 3 * NV; i++) {
            double want = (i % 3 == 2) ? -7.0 : (double)size * (size + 1) / 2 * (i + 1);
            CHECKF(hr[i] == want, "vector type on device buffers: [%d] = %g, expected %g", i,
                   hr[i], want);
        }
        MPI_Type_free(&vec);

        /* a send buffer that is the receive buffer (more than one element): Open MPI
         * refuses it on host memory (MPI_ERR_BUFFER) before it moves data; on
         * device memory the staged call must be refused alike, the buffer untouched
         * (before: the two host copies hid the aliasing, and the call succeeded) */
        {
            int rc_host, rc_dev, cls_host = -1, cls_dev = -2;

            MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
            rc_host = MPI_Allreduce(hr, hr, 3 * NV, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
            to_dev(dr, hs, sizeof(hs));
            rc_dev = MPI_Allreduce(dr, dr, 3 * NV, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
            MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
            MPI_Error_class(rc_host, &cls_host);
            MPI_Error_class(rc_dev, &cls_dev);
            CHECKF(rc_host != MPI_SUCCESS && cls_dev == cls_host,
                   "aliased buffers: error class %d on the host, %d on the device (MPI_SUCCESS "
                   "%d)", cls_host, cls_dev, MPI_SUCCESS);
            to_dev(hr, dr, sizeof(hr));
            for (i = 0; i < 3 * NV && hr[i] == hs[i]; i++) {
            }
            CHECKF(i == 3 * NV, "aliased device buffers refused, yet written: [%d] = %g, was %g",
                   i, i < 3 * NV ? hr[i] : 0.0, i < 3 * NV ? hs[i] : 0.0);
        }

        /* on a communicator being freed, from an attribute's delete callback (before:
         * Open MPI got the device pointers and crashed on them) */
        {
            MPI_Comm dup;
            int key;

            del_ds = dev_alloc(sizeof(del_got));
            del_dr = dev_alloc(sizeof(del_got));
            MPI_Comm_dup(MPI_COMM_WORLD, &dup);
            MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, del_reduce, &key, NULL);
            MPI_Comm_set_attr(dup, key, NULL);
            MPI_Comm_free(&dup);
            MPI_Comm_free_keyval(&key);
            for (i = 0; i < 4 && del_got[i] == (double)size * (i + 1); i++) {
            }
            CHECKF(del_rc == MPI_SUCCESS && i == 4, "device buffers reduced in a delete "
                   "callback: rc %d, [%d] = %g, expected %g", del_rc, i, i < 4 ? del_got[i] : 0.0,
                   (double)size * (i + 1));
            dev_free(del_ds);
            dev_free(del_dr);
        }

        MPI_Allreduce(ds, dr, 3 * NV, MPI_DOUBLE, MPI_SUM, MPI_COMM_SELF);
        to_dev(hr, dr, sizeof(hr));
        for (i = 0; i < 3 * NV && hr[i] == hs[i]; i++) {
        }
        CHECKF(i == 3 * NV, "MPI_COMM_SELF on device buffers: [%d] = %g", i,
               i < 3 * NV ? hr[i] : 0.0);
        MPI_Op_free(&myop);
        dev_free(ds);
        dev_free(dr);
    }

    /* the callback MPI_Finalize will run (above) */
    {
        int key;

        del_ds = dev_alloc(sizeof(del_got));
        del_dr = dev_alloc(sizeof(del_got));
        MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, fin_reduce, &key, NULL);
        MPI_Comm_set_attr(MPI_COMM_SELF, key, NULL);
    }

    /* Strata's path ran (not a fallback), and the driver moved the device data */
    CHECKF(!strata_active() || size == 1 || st_test_stats(MPI_COMM_WORLD).fast_calls > 0,
           "no call took Strata's fast path");
    CHECKF(dev_copies() >= (unsigned long)dev_used,
           "%lu driver copies for %d calls with device buffers", dev_copies(), dev_used);
    return st_test_finish("test_device");
}
