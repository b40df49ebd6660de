/*
 * The GPU local solver (st_glm_gpu.h): an epoch per launch of the TPA-SCD kernel,
 * through the driver API (cuda/st_cuda.c), so libstrata_glm links no CUDA library
 * and runs where there is none (strata-train --gpu then says why it cannot).
 *
 * In memory: the rank's CSR, labels, weights, norms, dual variables and u live in
 * GPU memory; an epoch is one launch over the round's row order.
 *
 * Streaming, when the CSR does not fit (in the GPU's free memory, or in
 * param.gpu_mem): the per-row arrays (indptr, labels, weights, norms, dual
 * variables, the order) and u stay in GPU memory, the rows' entries (indices and
 * float values) stream from pinned host memory in chunks of consecutive rows,
 * into two buffers on two streams: chunk k + 1 is copied while chunk k's kernel
 * runs. An epoch visits the chunks in turn, each chunk's rows in the order the
 * epoch's permutation gives them (a stable partition of the CPU solver's
 * permutation by chunk). Same optimum, another order of the steps.
 */
#include "config.h"

#include "st_glm_gpu.h"
#include "st_common.h"
#include "st_cuda.h"
#include "st_glm_kernels.h"
#include "strata_glm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* GPU memory left to the driver and other users when the budget is the free memory */
#define ST_GLM_GPU_MARGIN (256u << 20)

struct st_glm_gpu {
    int device;
    int rows;                   /* rows in flight: the kernel's thread blocks */
    void *kernel;
    int64_t n, d_all, nnz;
    st_glm_epoch_args_t a;      /* the resident device arrays (and, in memory, the CSR) */
    int64_t *order;             /* device: the epoch's order (n) */
    void *stream[2];            /* [0] in memory; both streaming */
    /* streaming */
    int streaming, nchunks;
    int64_t *chunk_nnz;         /* nchunks + 1: each chunk's first entry, then nnz */
    int32_t *row_chunk;         /* each row's chunk */
    const uint32_t *h_indices;  /* the host's entries, pinned when the driver could */
    const float *h_values;
    float *h_values_own;        /* 64-bit data: its float copy */
    int pinned[2];
    uint32_t *b_indices[2];     /* device chunk buffers */
    float *b_values[2];
    int64_t *h_order;           /* host: the epoch's order, partitioned by chunk */
    int64_t *h_count;           /* host: the chunks' starts in the order (nchunks + 1), and
                                   cursors (nchunks) */
};

static void *st_glm_gpu_put(const void *host, size_t bytes, int *ok)
{
    void *dev;

    if (!*ok) {
        return NULL;
    }
    dev = st_cuda_alloc(bytes);
    if (dev == NULL || (host != NULL && bytes > 0 && st_cuda_copy(dev, host, bytes, NULL) != 0)) {
        st_cuda_free(dev);
        *ok = 0;
        return NULL;
    }
    return dev;
}

void st_glm_gpu_close(st_glm_gpu_t *g)
{
    int b;

    if (g == NULL) {
        return;
    }
    st_cuda_free((void*)g->a.indptr);
    st_cuda_free((void*)g->a.y);
    st_cuda_free((void*)g->a.c);
    st_cuda_free((void*)g->a.sqnorm);
    st_cuda_free(g->a.alpha);
    st_cuda_free(g->a.u);
    st_cuda_free(g->order);
    if (!g->streaming) {
        st_cuda_free((void*)g->a.indices);
        st_cuda_free((void*)g->a.values);
    }
    for (b = 0; b < 2; b++) {
        st_cuda_free(g->b_indices[b]);
        st_cuda_free(g->b_values[b]);
        st_cuda_stream_free(g->stream[b]);
    }
    if (g->pinned[0]) {
        st_cuda_host_unregister((void*)g->h_indices);
    }
    if (g->pinned[1]) {
        st_cuda_host_unregister((void*)g->h_values);
    }
    free(g->h_values_own);
    free(g->chunk_nnz);
    free(g->row_chunk);
    free(g->h_order);
    free(g->h_count);
    free(g);
}

/* Cut the rows into chunks of consecutive rows with at most @a cap entries each
 * (cap >= the longest row): chunk_nnz[k] is chunk k's first entry, row_chunk[r]
 * the chunk of row r. */
static int st_glm_gpu_chunks(st_glm_gpu_t *g, const int64_t *indptr, int64_t cap)
{
    int64_t r, start = 0;
    int n = 0;

    g->chunk_nnz = malloc((size_t)(g->n + 2) * sizeof(int64_t));
    g->row_chunk = malloc((size_t)ST_MAX(g->n, 1) * sizeof(int32_t));
    if (g->chunk_nnz == NULL || g->row_chunk == NULL) {
        return -1;
    }
    g->chunk_nnz[0] = 0;
    for (r = 0; r < g->n; r++) {
        if (r > start && indptr[r + 1] - indptr[start] > cap) {
            g->chunk_nnz[++n] = indptr[r];
            start             = r;
        }
        g->row_chunk[r] = n;
    }
    g->nchunks          = n + 1;
    g->chunk_nnz[n + 1] = indptr[g->n];
    return 0;
}

/*
 * Each row's curvature for steps taken by @a tau rows at once, as by a mini-batch
 * of tau rows drawn at random (tau-nice sampling: Qu, Richtarik, Zhang, "Quartz:
 * randomized dual coordinate ascent with arbitrary sampling", NIPS 2015):
 *
 *     v_i = sum_j (1 + (tau - 1) (omega_j - 1) / (n - 1)) x_ij^2
 *
 * with omega_j the rows holding feature j (the bias: every row). A feature few
 * rows share counts once; one in every row counts tau times, since the rows in
 * flight all move u along it at once: without this, a thousand blocks stepping on
 * rows that share dense features overshoot together, and the dual oscillates
 * instead of converging (seen on an H200: relative gap 1.1 after 300 rounds on
 * Criteo-like data). tau = 1: the plain squared norms. NULL: out of memory.
 */
static double *st_glm_gpu_curvature(const st_glm_data_t *data, const float *values,
                                    const double *sqnorm, double bias, int64_t d_all,
                                    int64_t tau)
{
    int64_t n = data->n_rows, i, k;
    double f, x, *v;
    uint32_t *omega;

    tau = ST_MIN(tau, ST_MAX(n, 1));
    v   = malloc((size_t)ST_MAX(n, 1) * sizeof(double));
    if (v == NULL || tau <= 1) {
        if (v != NULL) {
            memcpy(v, sqnorm, (size_t)n * sizeof(double));
        }
        return v;
    }
    omega = calloc((size_t)ST_MAX(d_all, 1), sizeof(uint32_t));
    if (omega == NULL) {
        free(v);
        return NULL;
    }
    f = (double)(tau - 1) / (double)ST_MAX(n - 1, 1);
    for (k = 0; k < data->indptr[n]; k++) {
        omega[data->indices[k]]++;
    }
    for (i = 0; i < n; i++) {
        v[i] = (bias > 0) ? (double)tau * bias * bias : 0;   /* in every row */
        for (k = data->indptr[i]; k < data->indptr[i + 1]; k++) {
            x = values[k];
            v[i] += (1 + f * (double)(omega[data->indices[k]] - 1)) * x * x;
        }
    }
    free(omega);
    return v;
}

int st_glm_gpu_open(const st_glm_data_t *data, const double *c, const double *sqnorm,
                    int step, double bias, int64_t d, int64_t d_all, int64_t mem_cap,
                    int rows, MPI_Comm comm, st_glm_gpu_t **gpu_p, char *msg,
                    size_t msg_len)
{
    double *curv;
    int64_t m = data->n_rows, nnz = data->indptr[data->n_rows], k, cap, longest = 0;
    size_t resident, csr, budget, free_bytes;
    MPI_Comm host;
    st_glm_gpu_t *g;
    int local = 0, ok = 1, b;
    char err[256];

    if (MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &host) ==
        MPI_SUCCESS) {
        MPI_Comm_rank(host, &local);
        MPI_Comm_free(&host);
    }
    if (st_cuda_open(local, &local, err, sizeof(err)) != 0) {
        snprintf(msg, msg_len, "--gpu: %s", err);
        return -1;
    }
    g = calloc(1, sizeof(*g));
    if (g == NULL) {
        snprintf(msg, msg_len, "--gpu: out of host memory");
        return -1;
    }
    g->device    = local;
    g->rows      = (rows > 0) ? rows : STRATA_GLM_GPU_ROWS;
    g->n         = m;
    g->d_all     = d_all;
    g->nnz       = nnz;
    g->kernel    = st_cuda_kernel("st_glm_tpa_epoch");
    g->stream[0] = st_cuda_stream_new();
    if (g->kernel == NULL || g->stream[0] == NULL) {
        snprintf(msg, msg_len, "--gpu: the GPU solver's kernel or stream is unavailable on "
                 "device %d", g->device);
        st_glm_gpu_close(g);
        return -1;
    }
    /* float values (TPA-SCD's data; the sums are in double) */
    g->h_indices = data->indices;
    g->h_values  = data->val32;
    if (data->prec != 32) {
        g->h_values_own = malloc((size_t)ST_MAX(nnz, 1) * sizeof(float));
        if (g->h_values_own == NULL) {
            snprintf(msg, msg_len, "--gpu: out of host memory");
            st_glm_gpu_close(g);
            return -1;
        }
        for (k = 0; k < nnz; k++) {
            g->h_values_own[k] = (float)data->val64[k];
        }
        g->h_values = g->h_values_own;
    }

    /* what must stay on the GPU, what may stream, and the budget */
    resident   = (size_t)(m + 1) * 8 + (size_t)m * 5 * 8 + (size_t)d_all * 8;
    csr        = (size_t)nnz * (sizeof(uint32_t) + sizeof(float));
    free_bytes = st_cuda_mem_free();
    budget     = (mem_cap > 0) ? (size_t)mem_cap
                               : (free_bytes > ST_GLM_GPU_MARGIN ? free_bytes - ST_GLM_GPU_MARGIN
                                                                 : 0);
    if (budget == 0) {
        budget = resident + csr;   /* unknown: try in memory */
    }
    for (k = 0; k < m; k++) {
        longest = ST_MAX(longest, data->indptr[k + 1] - data->indptr[k]);
    }
    g->streaming = (resident + csr > budget);
    if (g->streaming) {
        /* two chunk buffers in what the resident arrays leave */
        cap = (budget > resident) ? (int64_t)((budget - resident) / 2 / 8) : 0;
        if (cap < ST_MAX(longest, 1)) {
            snprintf(msg, msg_len, "--gpu: GPU %d has %.1f MB for this rank: not enough for "
                     "its %lld rows' own arrays (%.1f MB) and two chunks of its longest row "
                     "(use more ranks)", g->device, (double)budget / 1e6, (long long)m,
                     (double)resident / 1e6);
            st_glm_gpu_close(g);
            return -1;
        }
        g->h_order = malloc((size_t)ST_MAX(m, 1) * sizeof(int64_t));
        if (g->h_order == NULL || st_glm_gpu_chunks(g, data->indptr, cap) != 0 ||
            (g->h_count = calloc(2 * (size_t)g->nchunks + 1, sizeof(int64_t))) == NULL ||
            (g->stream[1] = st_cuda_stream_new()) == NULL) {
            snprintf(msg, msg_len, "--gpu: out of memory setting up streaming");
            st_glm_gpu_close(g);
            return -1;
        }
        for (b = 0; b < 2; b++) {
            g->b_indices[b] = st_glm_gpu_put(NULL, (size_t)cap * sizeof(uint32_t), &ok);
            g->b_values[b]  = st_glm_gpu_put(NULL, (size_t)cap * sizeof(float), &ok);
        }
        /* pinned, the copies run while the kernels do (else the driver stages them) */
        g->pinned[0] = (st_cuda_host_register((void*)g->h_indices,
                                              (size_t)nnz * sizeof(uint32_t)) == 0);
        g->pinned[1] = (st_cuda_host_register((void*)g->h_values,
                                              (size_t)nnz * sizeof(float)) == 0);
    } else {
        g->a.indices = st_glm_gpu_put(data->indices, (size_t)nnz * sizeof(uint32_t), &ok);
        g->a.values  = st_glm_gpu_put(g->h_values, (size_t)nnz * sizeof(float), &ok);
    }
    g->a.indptr = st_glm_gpu_put(data->indptr, (size_t)(m + 1) * sizeof(int64_t), &ok);
    g->a.y      = st_glm_gpu_put(data->y, (size_t)m * sizeof(double), &ok);
    g->a.c      = st_glm_gpu_put(c, (size_t)m * sizeof(double), &ok);
    /* streaming, the two chunks' kernels run at once: twice the rows in flight */
    curv = st_glm_gpu_curvature(data, g->h_values, sqnorm, bias, d_all,
                                (int64_t)g->rows * (g->streaming ? 2 : 1));
    ok          = ok && (curv != NULL);
    g->a.sqnorm = st_glm_gpu_put(curv, (size_t)m * sizeof(double), &ok);
    free(curv);
    g->a.alpha  = st_glm_gpu_put(NULL, (size_t)m * sizeof(double), &ok);
    g->a.u      = st_glm_gpu_put(NULL, (size_t)d_all * sizeof(double), &ok);
    g->order    = st_glm_gpu_put(NULL, (size_t)m * sizeof(int64_t), &ok);
    if (!ok) {
        snprintf(msg, msg_len, "--gpu: GPU %d could not allocate %.1f MB for the rank's %lld "
                 "rows and %lld nonzeros%s (set a smaller --gpu-mem to stream more, or use "
                 "more ranks)", g->device,
                 (double)(resident + (g->streaming ? 0 : csr)) / 1e6, (long long)m,
                 (long long)nnz, g->streaming ? " (streaming)" : "");
        st_glm_gpu_close(g);
        return -1;
    }
    if (!g->streaming) {
        g->h_values = NULL;   /* on the GPU now */
        free(g->h_values_own);
        g->h_values_own = NULL;
    }
    g->a.bias       = (bias > 0) ? bias : 0;
    g->a.bias_index = d;
    g->a.step       = step;
    *gpu_p          = g;
    return 0;
}

int st_glm_gpu_device(const st_glm_gpu_t *g)
{
    return g->device;
}

int st_glm_gpu_chunks_used(const st_glm_gpu_t *g)
{
    return g->streaming ? g->nchunks : 0;
}

/* A block per row at a time: g->rows blocks, fewer on fewer rows. */
static unsigned st_glm_gpu_grid(const st_glm_gpu_t *g, int64_t rows)
{
    return (unsigned)ST_MAX(ST_MIN(rows, (int64_t)g->rows), 1);
}

/* One streamed epoch: the epoch's order @a perm partitioned by chunk (stably), then
 * chunk after chunk, on its buffer's stream: its entries and its rows' order to the
 * GPU, and its kernel. A chunk always takes the same buffer, stream and range of
 * the device order, so a chunk's kernels never overlap each other, and the copies
 * of chunk k + 1 overlap the kernel of chunk k. */
static int st_glm_gpu_epoch_streamed(st_glm_gpu_t *g, const st_glm_epoch_args_t *a0,
                                     const int64_t *perm)
{
    int64_t j, r, e0, e1, rows, *start = g->h_count, *cursor = g->h_count + g->nchunks + 1;
    st_glm_epoch_args_t a;
    int k, b;

    memset(start, 0, (size_t)(g->nchunks + 1) * sizeof(int64_t));
    for (j = 0; j < g->n; j++) {
        start[g->row_chunk[perm[j]] + 1]++;
    }
    for (k = 0; k < g->nchunks; k++) {
        start[k + 1] += start[k];
    }
    memcpy(cursor, start, (size_t)g->nchunks * sizeof(int64_t));
    for (j = 0; j < g->n; j++) {
        r = perm[j];
        g->h_order[cursor[g->row_chunk[r]]++] = r;
    }
    for (k = 0; k < g->nchunks; k++) {
        b    = k % 2;
        e0   = g->chunk_nnz[k];
        e1   = g->chunk_nnz[k + 1];
        rows = start[k + 1] - start[k];
        a    = *a0;
        a.order    = g->order + start[k];
        a.n        = rows;
        a.indices  = g->b_indices[b];
        a.values   = g->b_values[b];
        a.nnz_base = e0;
        if (st_cuda_copy_async(g->b_indices[b], g->h_indices + e0,
                               (size_t)(e1 - e0) * sizeof(uint32_t), g->stream[b]) != 0 ||
            st_cuda_copy_async(g->b_values[b], g->h_values + e0,
                               (size_t)(e1 - e0) * sizeof(float), g->stream[b]) != 0 ||
            st_cuda_copy_async(g->order + start[k], g->h_order + start[k],
                               (size_t)rows * sizeof(int64_t), g->stream[b]) != 0 ||
            st_cuda_launch(g->kernel, st_glm_gpu_grid(g, rows), ST_GLM_GPU_BLOCK, &a,
                           g->stream[b]) != 0) {
            return -1;
        }
    }
    return 0;
}

int st_glm_gpu_round(st_glm_gpu_t *g, const double *w, double *u, double *alpha,
                     double scale, int epochs, int64_t *perm,
                     void (*shuffle)(int64_t *perm, int64_t n, void *arg), void *arg)
{
    st_glm_epoch_args_t a = g->a;
    int epoch;

    if (st_cuda_copy(a.u, w, (size_t)g->d_all * sizeof(double), NULL) != 0 ||
        (g->n > 0 && st_cuda_copy(a.alpha, alpha, (size_t)g->n * sizeof(double), NULL) != 0)) {
        return -1;
    }
    a.scale = scale;
    /* in memory, one stream: an epoch's order is copied after the previous epoch's
     * kernel, and the host draws the next order while the GPU runs */
    for (epoch = 0; epoch < epochs && g->n > 0; epoch++) {
        shuffle(perm, g->n, arg);
        if (g->streaming) {
            if (st_glm_gpu_epoch_streamed(g, &a, perm) != 0) {
                return -1;
            }
            continue;
        }
        a.order = g->order;
        a.n     = g->n;
        if (st_cuda_copy_async(g->order, perm, (size_t)g->n * sizeof(int64_t), g->stream[0]) !=
                    0 ||
            st_cuda_launch(g->kernel, st_glm_gpu_grid(g, g->n), ST_GLM_GPU_BLOCK, &a,
                           g->stream[0]) != 0) {
            return -1;
        }
    }
    if (st_cuda_stream_sync(g->stream[0]) != 0 ||
        (g->streaming && st_cuda_stream_sync(g->stream[1]) != 0) ||
        st_cuda_copy(u, a.u, (size_t)g->d_all * sizeof(double), NULL) != 0 ||
        (g->n > 0 && st_cuda_copy(alpha, a.alpha, (size_t)g->n * sizeof(double), NULL) != 0)) {
        return -1;
    }
    return 0;
}
