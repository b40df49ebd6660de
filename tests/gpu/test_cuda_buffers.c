/*
 * MPI_Allreduce on real CUDA device buffers (a GPU machine; tests/gpu/run-all.sh
 * builds and runs it). Checks, for several counts: device send and receive, host
 * send and device receive, device in place; integer sums exactly, double sums
 * bitwise equal on every rank; buffers freed and allocated again between calls
 * (addresses get reused), and freed and replaced elsewhere (their memory must not
 * stay held by the peers' mappings). Then times, for each size, the allreduce on device
 * buffers through the preloaded library, against what a program does without a
 * CUDA-aware path (copy to host, MPI_Allreduce on host, copy back), and a
 * device-to-device copy of the same size (the bound).
 *
 *   test_cuda_buffers [--time]
 *   test_cuda_buffers --pool: the counts' check on memory of the stream-ordered
 *     allocator (cudaMallocAsync: no context of its own, no CUDA IPC handle), each
 *     MPI_Allreduce called with no context current (as from a thread that never used
 *     CUDA): staged in the device's primary context, no call through CUDA IPC
 *
 * Built with -DCUDA_API_PER_THREAD_DEFAULT_STREAM=1 (run-all.sh's check-2-ptds), the
 * program's copies go to the per-thread default stream: the device-to-device copy
 * before an in-place call must still be complete when Strata reads the buffer.
 */
#define _GNU_SOURCE
#include "strata.h"

#include <cuda_runtime.h>
#include <dlfcn.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size, failures;
static int pool;   /* --pool: cudaMallocAsync memory, MPI called with no context current */
static int (*set_current)(void *);   /* the driver's cuCtxSetCurrent */

#define CUDA_OK(call)                                                                  \
    do {                                                                               \
        cudaError_t e_ = (call);                                                       \
        if (e_ != cudaSuccess) {                                                       \
            printf("rank %d: %s: %s\n", rank, #call, cudaGetErrorString(e_));          \
            MPI_Abort(MPI_COMM_WORLD, 2);                                              \
        }                                                                              \
    } while (0)

static void dev_alloc(void **p, size_t bytes)
{
    if (pool) {
        CUDA_OK(cudaMallocAsync(p, bytes, 0));
        CUDA_OK(cudaStreamSynchronize(0));
    } else {
        CUDA_OK(cudaMalloc(p, bytes));
    }
}

static void dev_free(void *p)
{
    if (pool) {
        CUDA_OK(cudaFreeAsync(p, 0));
        CUDA_OK(cudaStreamSynchronize(0));
    } else {
        CUDA_OK(cudaFree(p));
    }
}

/* --pool: MPI_Allreduce with no context current (the runtime makes the primary one
 * current again at its next call) */
static int allreduce(const void *s, void *r, int n, MPI_Datatype t)
{
    if (pool) {
        set_current(NULL);
    }
    return MPI_Allreduce(s, r, n, t, MPI_SUM, MPI_COMM_WORLD);
}

static uint64_t hash(const void *p, size_t n)
{
    const unsigned char *b = p;
    uint64_t h = 1469598103934665603ULL;
    size_t k;

    for (k = 0; k < n; k++) {
        h = (h ^ b[k]) * 1099511628211ULL;
    }
    return h;
}

/* Under strata-run, the all-device calls of 1 MB and more went GPU to GPU. */
static void check_ipc_used(void)
{
    strata_status_t (*stats)(MPI_Comm, strata_comm_stats_t *);
    strata_comm_stats_t s;

    *(void **)&stats = dlsym(RTLD_DEFAULT, "strata_comm_stats");
    if (stats == NULL || stats(MPI_COMM_WORLD, &s) != STRATA_OK) {
        if (rank == 0) {
            printf("test_cuda_buffers: not under strata-run: CUDA IPC use not checked\n");
        }
        return;
    }
    if (rank == 0) {
        printf("test_cuda_buffers: rank 0: %llu calls with device buffers, %llu through CUDA "
               "IPC\n", (unsigned long long)s.device_calls, (unsigned long long)s.ipc_calls);
    }
    if (pool) {   /* a pool's memory has no legacy IPC handle: every call staged */
        if (s.ipc_calls != 0) {
            printf("rank %d: %llu calls on a pool's memory took CUDA IPC\n", rank,
                   (unsigned long long)s.ipc_calls);
            failures++;
        }
        return;
    }
    if (getenv("STRATA_VIRTUAL_NODES") != NULL && atoi(getenv("STRATA_VIRTUAL_NODES")) > 1) {
        return;   /* across (virtual) nodes: staged in pieces, no CUDA IPC */
    }
    if (size > 1 && s.ipc_calls == 0) {
        printf("rank %d: no call took CUDA IPC\n", rank);
        failures++;
    }
}

static void check_counts(void)
{
    static const int counts[] = {1, 1000, 65537, 1 << 20, 1 << 24};
    int c, mode, k, n;

    for (c = 0; c < (int)(sizeof(counts) / sizeof(counts[0])); c++) {
        n = counts[c];
        for (mode = 0; mode < 3; mode++) {
            double *h = malloc((size_t)n * sizeof(double)), *d_s, *d_r;
            int *hi = malloc((size_t)n * sizeof(int)), *di;
            uint64_t mine, lo, hi_h;
            int bad = 0;

            /* fresh allocations every time: addresses are reused after cudaFree */
            dev_alloc((void**)&d_s, (size_t)n * sizeof(double));
            dev_alloc((void**)&d_r, (size_t)n * sizeof(double));
            dev_alloc((void**)&di, (size_t)n * sizeof(int));
            for (k = 0; k < n; k++) {
                h[k]  = 0.1 * (rank + 1) + k % 13;
                hi[k] = rank * 7 + k % 17;
            }
            CUDA_OK(cudaMemcpy(d_s, h, (size_t)n * sizeof(double), cudaMemcpyHostToDevice));
            CUDA_OK(cudaMemcpy(di, hi, (size_t)n * sizeof(int), cudaMemcpyHostToDevice));
            CUDA_OK(cudaDeviceSynchronize());
            if (mode == 0) {
                allreduce(d_s, d_r, n, MPI_DOUBLE);
            } else if (mode == 1) {
                allreduce(h, d_r, n, MPI_DOUBLE);
            } else {
                CUDA_OK(cudaMemcpy(d_r, d_s, (size_t)n * sizeof(double),
                                   cudaMemcpyDeviceToDevice));
                allreduce(MPI_IN_PLACE, d_r, n, MPI_DOUBLE);
            }
            CUDA_OK(cudaMemcpy(h, d_r, (size_t)n * sizeof(double), cudaMemcpyDeviceToHost));
            mine = hash(h, (size_t)n * sizeof(double));
            MPI_Allreduce(&mine, &lo, 1, MPI_UINT64_T, MPI_MIN, MPI_COMM_WORLD);
            MPI_Allreduce(&mine, &hi_h, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
            if (lo != hi_h) {
                printf("rank %d: count %d mode %d: ranks differ\n", rank, n, mode);
                bad = 1;
            }
            for (k = 0; k < n && !bad; k++) {
                double want = 0.1 * size * (size + 1) / 2.0 + (double)size * (k % 13);

                if (h[k] < want - 1e-9 * want || h[k] > want + 1e-9 * want) {
                    printf("rank %d: count %d mode %d: [%d] = %.17g, expected %.17g\n", rank,
                           n, mode, k, h[k], want);
                    bad = 1;
                }
            }
            allreduce(MPI_IN_PLACE, di, n, MPI_INT);
            CUDA_OK(cudaMemcpy(hi, di, (size_t)n * sizeof(int), cudaMemcpyDeviceToHost));
            for (k = 0; k < n && !bad; k++) {
                if (hi[k] != 7 * size * (size - 1) / 2 + size * (k % 17)) {
                    printf("rank %d: int count %d: [%d] = %d\n", rank, n, k, hi[k]);
                    bad = 1;
                }
            }
            failures += bad;
            dev_free(d_s);
            dev_free(d_r);
            dev_free(di);
            free(h);
            free(hi);
        }
    }
}

/*
 * Buffers freed and replaced by larger ones elsewhere (no address reuse, 2 MB apart):
 * the peers' mappings of the freed ones must not keep their memory (the owners say
 * which they freed, at their next call with a new allocation). After 8 rounds of
 * 64 MB and more, and one call on new buffers, the GPU's free memory must be back
 * within what is still allocated (each rank's spacers and last buffers) and 256 MB.
 */
static void check_freed_memory(void)
{
    const size_t spacer_bytes = 2 << 20, last = 1 << 20;
    size_t free0 = 0, free1 = 0, total = 0, held, allowed;
    void *spacer[16], *d_s, *d_r;
    int round, n, k, per_gpu, ndev = 1;

    if (dlsym(RTLD_DEFAULT, "strata_comm_stats") == NULL) {
        return;   /* not under strata-run: Open MPI's path, not Strata's mappings */
    }
    cudaGetDeviceCount(&ndev);
    per_gpu = (size + ndev - 1) / ndev;
    CUDA_OK(cudaDeviceSynchronize());
    MPI_Barrier(MPI_COMM_WORLD);
    CUDA_OK(cudaMemGetInfo(&free0, &total));
    MPI_Barrier(MPI_COMM_WORLD);
    for (round = 0; round < 8; round++) {
        n = (8 << 20) + round * (256 << 10);   /* doubles: 64 MB, 2 MB more a round */
        CUDA_OK(cudaMalloc(&d_s, (size_t)n * sizeof(double)));
        CUDA_OK(cudaMalloc(&spacer[2 * round], spacer_bytes));
        CUDA_OK(cudaMalloc(&d_r, (size_t)n * sizeof(double)));
        CUDA_OK(cudaMalloc(&spacer[2 * round + 1], spacer_bytes));
        CUDA_OK(cudaMemset(d_s, 0, (size_t)n * sizeof(double)));
        CUDA_OK(cudaDeviceSynchronize());
        MPI_Allreduce(d_s, d_r, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        CUDA_OK(cudaFree(d_s));
        CUDA_OK(cudaFree(d_r));
    }
    CUDA_OK(cudaMalloc(&d_s, last * sizeof(double)));
    CUDA_OK(cudaMalloc(&d_r, last * sizeof(double)));
    CUDA_OK(cudaMemset(d_s, 0, last * sizeof(double)));
    CUDA_OK(cudaDeviceSynchronize());
    MPI_Allreduce(d_s, d_r, (int)last, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    CUDA_OK(cudaMemGetInfo(&free1, &total));
    MPI_Barrier(MPI_COMM_WORLD);
    held    = (free0 > free1) ? free0 - free1 : 0;
    allowed = (size_t)per_gpu * (16 * spacer_bytes + 2 * last * sizeof(double)) + (256 << 20);
    if (held > allowed) {
        printf("rank %d: freed buffers: %.0f MB of the GPU still held after 8 rounds of "
               "freed buffers (at most %.0f MB expected): the peers' mappings keep them\n",
               rank, held / 1e6, allowed / 1e6);
        failures++;
    } else if (rank == 0) {
        printf("test_cuda_buffers: freed buffers: %.0f MB held (at most %.0f MB)\n",
               held / 1e6, allowed / 1e6);
    }
    for (k = 0; k < 16; k++) {
        CUDA_OK(cudaFree(spacer[k]));
    }
    CUDA_OK(cudaFree(d_s));
    CUDA_OK(cudaFree(d_r));
}

static double time_it(void (*fn)(void *, void *, void *, int), void *a, void *b, void *c, int n,
                      int iters)
{
    double t0, t;
    int k;

    fn(a, b, c, n);   /* warm-up */
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    for (k = 0; k < iters; k++) {
        fn(a, b, c, n);
    }
    t = (MPI_Wtime() - t0) / iters;
    MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return t;
}

static void run_device(void *d, void *unused1, void *unused2, int n)
{
    (void)unused1;
    (void)unused2;
    MPI_Allreduce(MPI_IN_PLACE, d, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
}

static void run_staged_by_hand(void *d, void *h, void *unused, int n)
{
    (void)unused;
    cudaMemcpy(h, d, (size_t)n * sizeof(double), cudaMemcpyDeviceToHost);
    PMPI_Allreduce(MPI_IN_PLACE, h, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    cudaMemcpy(d, h, (size_t)n * sizeof(double), cudaMemcpyHostToDevice);
}

static void run_d2d(void *d, void *unused, void *d2, int n)
{
    (void)unused;
    cudaMemcpy(d2, d, (size_t)n * sizeof(double), cudaMemcpyDeviceToDevice);
    cudaDeviceSynchronize();
}

static void timing(void)
{
    size_t bytes;
    int n, iters;

    if (rank == 0) {
        printf("# bytes  strata_device_us  host_staged_by_hand_us  ratio  d2d_copy_us  "
               "(PMPI on pinned host memory by hand; ratio > 1: Strata faster)\n");
    }
    for (bytes = 1024; bytes <= (1u << 30); bytes *= 4) {
        void *d, *d2, *h;

        n     = (int)(bytes / sizeof(double));
        iters = bytes <= (1u << 20) ? 50 : (bytes <= (64u << 20) ? 10 : 3);
        CUDA_OK(cudaMalloc(&d, bytes));
        CUDA_OK(cudaMalloc(&d2, bytes));
        CUDA_OK(cudaMallocHost(&h, bytes));
        CUDA_OK(cudaMemset(d, 0, bytes));
        double ts = time_it(run_device, d, NULL, NULL, n, iters);
        double th = time_it(run_staged_by_hand, d, h, NULL, n, iters);
        double tc = time_it(run_d2d, d, NULL, d2, n, iters);
        if (rank == 0) {
            printf("%10zu  %14.1f  %14.1f  %6.2f  %10.1f\n", bytes, ts * 1e6, th * 1e6, th / ts,
                   tc * 1e6);
        }
        cudaFree(d);
        cudaFree(d2);
        cudaFreeHost(h);
    }
}

int main(int argc, char **argv)
{
    int ndev = 0;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
        if (rank == 0) {
            printf("test_cuda_buffers: no GPU: skipped\n");
        }
        MPI_Finalize();
        return 77;
    }
    CUDA_OK(cudaSetDevice(rank % ndev));   /* several ranks may share one GPU */
    pool = (argc > 1 && strcmp(argv[1], "--pool") == 0);
    if (pool) {   /* (the runtime loaded the driver, perhaps not into the global scope) */
        void *drv = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);

        *(void **)&set_current = (drv != NULL) ? dlsym(drv, "cuCtxSetCurrent") : NULL;
    }
    if (pool && set_current == NULL) {
        printf("rank %d: --pool: no cuCtxSetCurrent in the process\n", rank);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    check_counts();
    check_ipc_used();
    if (!pool) {
        check_freed_memory();
    }
    MPI_Allreduce(MPI_IN_PLACE, &failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("test_cuda_buffers: %s: %d ranks on %d GPU(s), %d failures\n",
               failures ? "FAIL" : "PASS", size, ndev, failures);
    }
    if (argc > 1 && strcmp(argv[1], "--time") == 0 && failures == 0) {
        timing();
    }
    MPI_Finalize();
    return failures ? 1 : 0;
}
