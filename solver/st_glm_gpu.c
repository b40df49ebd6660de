/*
 * The GPU local solver (st_glm_gpu.h): an epoch per launch of the TPA-SCD kernel,
 * through the driver API (cuda/st_cuda.c), so libstrata_glm links no CUDA library
 * and runs where there is none (strata-train --gpu then says why it cannot).
 *
 * In memory: the rank's CSR, labels, weights, norms, dual variables and u live in
 * GPU memory; an epoch is one launch. Its order is computed on the GPU, row by
 * row, from one key the host draws (solver/st_glm_perm.h: the CPU solver's order
 * for the same key), so no order is shuffled or copied.
 *
 * Two kernels (cuda/st_glm_kernels.cuh): a warp a row (the default), or a block
 * of 64 threads a row for long rows (an average of ST_GLM_GPU_LONG_ROW entries or
 * more). STRATA_GLM_GPU_KERNEL=warp or block chooses for measurements.
 *
 * Rows in flight (the kernel's warps or blocks; each row's step counts them in
 * its curvature): param.gpu_rows, or by default as many warps as the GPU holds at
 * once where that costs the steps little (the curvature bound grows the mean
 * curvature by at most half), else STRATA_GLM_GPU_ROWS.
 *
 * Streaming, when the CSR does not fit (in the GPU's free memory, or in
 * param.gpu_mem): the per-row arrays (labels, weights, norms, dual variables) and
 * u stay in GPU memory; each epoch's order of all the rows (the in-memory epoch's,
 * from the same key) is cut into chunks, and the host gathers each chunk's rows,
 * their entries and offsets, into one of two pinned buffers, which goes to the
 * GPU on its own stream: the host gathers chunk k + 1 and the bus carries it while
 * chunk k's kernel runs. Not chunks of consecutive rows visited in turn: an epoch
 * in such blocks converged 40 to 100 times slower than one in a random order of
 * all rows (1 rank, 3000 rows, 4 to 13 chunks: 412 to 1061 rounds against 9), and
 * a feature common inside a block of rows but rare overall escaped the curvature
 * bound (each chunk's rows are now a uniform sample of all).
 *
 * Ranks sharing a GPU (the same UUID) share its free memory: each budgets its part
 * of what the GPU has free once all of them hold their contexts.
 */
#include "config.h"

#include "st_glm_gpu.h"
#include "st_common.h"
#include "st_cuda.h"
#include "st_glm_kernels.h"
#include "st_glm_mem.h"
#include "strata_glm.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* GPU memory left to the driver and other users when the budget is the free memory */
#define ST_GLM_GPU_MARGIN (256u << 20)
/* rows of at least this many entries on average take the block kernel */
#define ST_GLM_GPU_LONG_ROW 256
/* host arrays st_glm_gpu_pin keeps pinned */
#define ST_GLM_GPU_PINS 2
/* rows in flight by default: the GPU's warps while the mean curvature grows by at most
 * this factor */
#define ST_GLM_GPU_MAX_INFLATION 1.5

struct st_glm_gpu {
    int device;
    int sharers;                /* this host's ranks on this GPU (this one included) */
    int rows;                   /* rows in flight: the kernel's warps or blocks */
    int warp;                   /* the warp kernel (else the block kernel) */
    void *kernel;
    void *margins;              /* st_glm_margins (in memory; NULL: the host computes them) */
    double *z;                  /* device: the rows' margins */
    int64_t n, d_all, nnz;
    st_glm_epoch_args_t a;      /* the resident device arrays (and, in memory, the CSR) */
    void *stream[2];            /* [0] in memory; both streaming */
    /* streaming */
    int streaming;
    size_t chunk_bytes;         /* of each of the two chunk buffers */
    const int64_t *h_indptr;    /* the host's rows, which the chunks gather */
    const uint32_t *h_indices;
    const float *h_values;
    float *h_values_own;        /* 64-bit data: its float copy */
    int64_t *order;             /* the epoch's order of the rows */
    int threads;                /* host threads that gather a large chunk */
    char *h_chunk[2];           /* the gathered chunks: host (pinned where it could) */
    int h_pinned[2];
    char *b_chunk[2];           /* ... and device */
    /* the trainer's w, u and dual variables, pinned at the first round where the
     * driver could, so that the round's copies run at the bus's speed */
    int pin_tried, pin_z_tried;
    void *pin[4];               /* w, u, alpha; the host's margins */
    /* method newton: the Hessian-vector product and the conjugate gradients'
     * vectors (st_glm_gpu_cg_*) */
    void *hv_kernel, *vzero, *cg_kernel, *grad_kernel;
    unsigned hv_grid;           /* st_glm_newton_hv's blocks: the GPU's resident ones */
    int64_t hv_hot;             /* ... and its hot columns (st_glm_gpu_hot) */
    double *dd, *hv;            /* device: the rows' D_ii, the product */
    double *ga;                 /* device: the rows' c_i phi'(z_i) (st_glm_gpu_grad) */
    st_glm_cg_args_t cg;        /* device: g, m, s, r, q, H q, the chunks' dots */
    int64_t cg_chunks;
    double *h_part;             /* host: the chunks' dots */
    /* method newton's row passes (st_glm_gpu_newton_rows; NULL kernel: the host's) */
    void *rows_kernel;
    st_glm_rows_args_t pass;    /* device: y, c, X s (the margins' z), the margins (the
                                   dual variables' array, which the method leaves
                                   unused), D, c_i phi'(z_i), the chunks' sums */
    int64_t rows_chunks;
    double *h_rows_part;        /* host: the chunks' sums */
    int h_part_pinned;
    void *pin_nt[ST_GLM_GPU_PINS];   /* the method's host arrays (st_glm_gpu_pin) */
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
    st_cuda_free(g->z);
    if (!g->streaming) {
        st_cuda_free((void*)g->a.indices);
        st_cuda_free((void*)g->a.values);
    }
    for (b = 0; b < 2; b++) {
        st_cuda_stream_free(g->stream[b]);   /* (finishing its work) */
        st_cuda_free(g->b_chunk[b]);
        if (g->h_pinned[b]) {
            st_cuda_host_unregister(g->h_chunk[b]);
        }
        free(g->h_chunk[b]);
    }
    for (b = 0; b < 4; b++) {
        if (g->pin[b] != NULL) {
            st_cuda_host_unregister(g->pin[b]);
        }
    }
    for (b = 0; b < ST_GLM_GPU_PINS; b++) {
        if (g->pin_nt[b] != NULL) {
            st_cuda_host_unregister(g->pin_nt[b]);
        }
    }
    if (g->h_part_pinned) {
        st_cuda_host_unregister(g->h_part);
    }
    free(g->h_part);
    st_cuda_free(g->pass.part);
    free(g->h_rows_part);
    st_cuda_free(g->dd);
    st_cuda_free(g->hv);
    st_cuda_free(g->ga);
    st_cuda_free((void *)g->cg.g);
    st_cuda_free((void *)g->cg.m);
    st_cuda_free(g->cg.s);
    st_cuda_free(g->cg.r);
    st_cuda_free(g->cg.q);
    st_cuda_free(g->cg.hq);
    st_cuda_free(g->cg.part);
    free(g->h_values_own);
    free(g->order);
    free(g);
}

/* A chunk of @a rows rows and @a entries entries in its buffer: the positions'
 * entry offsets (rows + 1), their rows, the indices, the values. */
#define ST_GLM_CHUNK_BYTES(rows, entries) \
    (8 * (2 * (size_t)(rows) + 1) + 8 * (size_t)(entries))
/* at most this much a chunk buffer (two on the host, pinned, two on the GPU), or
 * what the longest row needs */
#define ST_GLM_GPU_CHUNK_MAX ((size_t)256000000)

/* The rows holding each feature (omega_j): NULL, out of memory. */
static uint32_t *st_glm_gpu_omega(const st_glm_data_t *data, int64_t d_all)
{
    uint32_t *omega = calloc((size_t)ST_MAX(d_all, 1), sizeof(uint32_t));
    int64_t k;

    for (k = 0; omega != NULL && k < data->indptr[data->n_rows]; k++) {
        omega[data->indices[k]]++;
    }
    return omega;
}

/*
 * Each row's curvature for steps taken by @a tau rows at once, as by a mini-batch
 * of tau rows drawn at random (tau-nice sampling: Qu, Richtarik, Zhang, "Quartz:
 * randomized dual coordinate ascent with arbitrary sampling", NIPS 2015):
 *
 *     v_i = sum_j (1 + (tau - 1) (omega_j - 1) / (n - 1)) x_ij^2
 *         = |x_i|^2 + (tau - 1) s_i,   s_i = sum_j (omega_j - 1) / (n - 1) x_ij^2
 *
 * with omega_j the rows holding feature j (the bias: every row). A feature few
 * rows share counts once; one in every row counts tau times, since the rows in
 * flight all move u along it at once: without this, a thousand blocks stepping on
 * rows that share dense features overshoot together, and the dual oscillates
 * instead of converging (seen on an H200: relative gap 1.1 after 300 rounds on
 * Criteo-like data). tau = 1: the plain squared norms. With @a mean_share, the
 * mean over the rows of s_i / |x_i|^2 (the mean curvature is 1 + (tau - 1) times
 * it) and @a v NULL: that alone.
 */
static void st_glm_gpu_curvature(const st_glm_data_t *data, const float *values,
                                 const double *sqnorm, const uint32_t *omega, double bias,
                                 int64_t tau, double *v, double *mean_share)
{
    int64_t n = data->n_rows, i, k, rows = 0;
    double f = 1 / (double)ST_MAX(n - 1, 1), x, si, sum = 0, q;

    tau = ST_MIN(tau, ST_MAX(n, 1));
    for (i = 0; i < n; i++) {
        si = (bias > 0) ? bias * bias : 0;   /* in every row */
        q  = si;
        for (k = data->indptr[i]; k < data->indptr[i + 1]; k++) {
            x = values[k];
            si += f * (double)(omega[data->indices[k]] - 1) * x * x;
            q += x * x;
        }
        if (v != NULL) {
            v[i] = (tau <= 1) ? sqnorm[i] : q + (double)(tau - 1) * si;
        }
        if (q > 0) {
            sum += si / q;
            rows++;
        }
    }
    if (mean_share != NULL) {
        *mean_share = (rows > 0) ? sum / (double)rows : 0;
    }
}

/* Rows in flight by default: as many as the GPU's warps (the warp kernel) where that
 * grows the mean curvature by at most ST_GLM_GPU_MAX_INFLATION, else fewer, down to
 * STRATA_GLM_GPU_ROWS (or the warps, if fewer); @a share from st_glm_gpu_curvature;
 * @a in_flight: rows in flight per kernel row (2 when two chunks' kernels run). */
static int st_glm_gpu_auto_rows(int warp, int warps, double share, int in_flight)
{
    double fit;
    int floor_rows, rows;

    if (!warp || warps <= 0) {
        return STRATA_GLM_GPU_ROWS;
    }
    floor_rows = ST_MIN(STRATA_GLM_GPU_ROWS, warps);
    fit = (share > 0) ? 1 + (ST_GLM_GPU_MAX_INFLATION - 1) / share / in_flight : (double)warps;
    rows = (int)ST_MAX((double)floor_rows, ST_MIN((double)warps, fit));
    return (rows >= 8) ? rows - rows % 8 : rows;   /* whole blocks of 8 warps */
}

/* The launch of the chosen kernel for g->rows rows in flight: the block kernel, a
 * block each; the warp kernel, up to 8 warps a block, as many as divide the rows
 * (so that blocks x warps = rows: the curvature counts them) */
static void st_glm_gpu_shape(const st_glm_gpu_t *g, int64_t rows, unsigned *grid,
                             unsigned *block)
{
    unsigned r = (unsigned)ST_MAX(ST_MIN(rows, (int64_t)g->rows), 1), wpb;

    if (!g->warp) {
        *grid  = r;
        *block = ST_GLM_GPU_BLOCK;
        return;
    }
    for (wpb = ST_GLM_GPU_WARP_BLOCK / 32; r % wpb != 0; wpb /= 2) {
    }
    *grid  = r / wpb;
    *block = 32 * wpb;
}

/*
 * The ranks of this host on my GPU (@a dev, the ordinal I opened; -1: none opened):
 * their count into @a sharers_p, and the least free memory any of them sees once all
 * of this host's ranks hold their contexts (collective over @a host; MPI_COMM_NULL:
 * this rank alone). A GPU is known by its UUID, so ranks that number their GPUs
 * differently (CUDA_VISIBLE_DEVICES) still find each other; without a UUID, by the
 * ordinal.
 */
static size_t st_glm_gpu_share(MPI_Comm host, int dev, int *sharers_p)
{
    unsigned char id[16];
    uint64_t mine[3], least[3], most[3] = {0, 0, 0}, hash = 0xcbf29ce484222325ULL;
    MPI_Comm same = MPI_COMM_NULL;
    size_t i;

    *sharers_p = 1;
    if (host != MPI_COMM_NULL) {
        MPI_Barrier(host);   /* every context exists: the free memory counts them */
    }
    if (dev < 0) {
        mine[2] = 0;
    } else {
        memset(id, 0, sizeof(id));
        if (st_cuda_gpu_id(dev, id) != 0) {   /* no UUID: 0xff and the ordinal */
            id[0] = 0xff;
            memcpy(&id[1], &dev, sizeof(dev));
        }
        memcpy(mine, id, sizeof(id));
        mine[2] = (uint64_t)st_cuda_mem_free();
        for (i = 0; i < sizeof(id); i++) {   /* FNV-1a: the GPU's colour */
            hash = (hash ^ id[i]) * 0x100000001b3ULL;
        }
    }
    if (host == MPI_COMM_NULL) {
        return (size_t)mine[2];
    }
    MPI_Comm_split(host, dev < 0 ? MPI_UNDEFINED : (int)(hash >> 33), 0, &same);
    if (same == MPI_COMM_NULL) {
        return 0;
    }
    /* the same UUID on every member (else two GPUs' hashes met: each its own) */
    MPI_Allreduce(mine, least, 3, MPI_UINT64_T, MPI_MIN, same);
    MPI_Allreduce(mine, most, 2, MPI_UINT64_T, MPI_MAX, same);
    if (least[0] == most[0] && least[1] == most[1]) {
        MPI_Comm_size(same, sharers_p);
        mine[2] = least[2];
    }
    MPI_Comm_free(&same);
    return (size_t)mine[2];
}

/* Blocks of the warp-a-row kernels over @a rows rows (at least 1). */
static unsigned st_glm_gpu_row_grid(int64_t rows)
{
    return (unsigned)ST_MAX(ST_MIN((rows + ST_GLM_GPU_WARP_BLOCK / 32 - 1) /
                                       (ST_GLM_GPU_WARP_BLOCK / 32),
                                   (int64_t)1 << 20),
                            1);
}

/*
 * st_glm_newton_hv's hot columns: the leading columns [0, k) that at least
 * 2 @a grid of the rank's rows hold each (each block would add more than twice into
 * such a column; its one add per block then costs less), at most ST_GLM_HV_HOT,
 * @a cap_env (STRATA_GLM_GPU_HV_HOT; 0: none, for measurements) and @a d. In the frequency order
 * (the default from 2^17 columns) these are the most frequent columns.
 */
static int64_t st_glm_gpu_hot(const st_glm_data_t *data, int64_t d, unsigned grid,
                              int64_t cap_env)
{
    int64_t cnt[ST_GLM_HV_HOT] = {0}, cap = ST_MIN(ST_MIN(d, ST_GLM_HV_HOT), cap_env), k, hot;
    const int64_t nnz = data->indptr[data->n_rows];

    for (k = data->indptr[0]; k < nnz; k++) {
        if ((int64_t)data->indices[k] < cap) {
            cnt[data->indices[k]]++;
        }
    }
    for (hot = 0; hot < cap && cnt[hot] >= 2 * (int64_t)grid; hot++) {
    }
    return hot;
}

static int st_glm_gpu_vzero(st_glm_gpu_t *g, double *v, int64_t n);

int st_glm_gpu_open(const st_glm_data_t *data, const double *c, const double *sqnorm,
                    int step, double eps, double bias, int64_t d, int64_t d_all,
                    int64_t mem_cap,
                    int rows, int threads, int hv, MPI_Comm comm, st_glm_gpu_t **gpu_p,
                    char *msg, size_t msg_len)
{
    const char *kind = getenv("STRATA_GLM_GPU_KERNEL"), *hot = getenv("STRATA_GLM_GPU_HV_HOT");
    long long hot_cap = ST_GLM_HV_HOT;
    char *end = NULL;
    double *curv, share = 0;
    int64_t m = data->n_rows, nnz = data->indptr[data->n_rows], k, longest = 0;
    size_t resident, csr, budget, free_bytes;
    uint32_t *omega;
    MPI_Comm host;
    st_glm_gpu_t *g;
    int local = 0, ok = 1, b, opened, sharers;
    char err[256];

    /* the collective part first: a rank that returns early must not leave the others
     * in it (the caller agrees on the outcome) */
    st_glm_host_comm(comm, &host);   /* (no MPI: NULL, the host's only rank) */
    if (host != MPI_COMM_NULL) {
        MPI_Comm_rank(host, &local);
    }
    opened     = (st_cuda_open(local, &local, err, sizeof(err)) == 0);
    free_bytes = st_glm_gpu_share(host, opened ? local : -1, &sharers);
    if (!opened) {
        snprintf(msg, msg_len, "--gpu: %s", err);
        return -1;
    }
    if (kind != NULL && *kind != '\0' && strcmp(kind, "warp") != 0 &&
        strcmp(kind, "block") != 0) {
        snprintf(msg, msg_len, "--gpu: STRATA_GLM_GPU_KERNEL='%s' is not warp or block", kind);
        return -1;
    }
    if (hot != NULL && *hot != '\0') {
        hot_cap = strtoll(hot, &end, 10);
        if (*end != '\0' || hot_cap < 0 || hot_cap > ST_GLM_HV_HOT) {
            snprintf(msg, msg_len, "--gpu: STRATA_GLM_GPU_HV_HOT='%s' is not a count of columns "
                     "from 0 to %d", hot, ST_GLM_HV_HOT);
            return -1;
        }
    }
    g = calloc(1, sizeof(*g));
    if (g == NULL) {
        snprintf(msg, msg_len, "--gpu: out of host memory");
        return -1;
    }
    g->device    = local;
    g->sharers   = sharers;
    g->threads   = ST_MAX(1, ST_MIN(threads, ST_GLM_GPU_GATHER_MAX));
    g->n         = m;
    g->d_all     = d_all;
    g->nnz       = nnz;
    g->warp      = (kind != NULL && *kind != '\0') ? (strcmp(kind, "warp") == 0)
                                                    : (nnz < ST_GLM_GPU_LONG_ROW * ST_MAX(m, 1));
    g->kernel    = st_cuda_kernel(g->warp ? "st_glm_tpa_epoch_warp" : "st_glm_tpa_epoch");
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

    /* what must stay on the GPU (offsets; labels, weights, curvatures, dual variables,
     * margins; u), what may stream, and the budget */
    resident   = (size_t)(m + 1) * 8 + (size_t)m * 5 * 8 + (size_t)d_all * 8;
    if (hv) {   /* method newton's: the rows' D and c_i phi'(z_i), the product, the CG's
                   6 vectors and its chunks' dots */
        resident += (size_t)m * 2 * 8 + (size_t)d_all * 7 * 8 +
                    (size_t)st_glm_cg_chunks(d_all) * ST_GLM_CG_DOTS * 8 +
                    (size_t)ST_MAX(st_glm_rows_chunks(m), 1) * 2 * 8;   /* (the row passes') */
    }
    csr        = (size_t)nnz * (sizeof(uint32_t) + sizeof(float));
    if (mem_cap > 0) {
        budget = (size_t)mem_cap;
    } else if (free_bytes == 0) {
        budget = resident + csr;   /* the driver cannot say: try in memory */
    } else {   /* (less than the margin: too little, said below) */
        budget = (free_bytes > ST_GLM_GPU_MARGIN)
                         ? (free_bytes - ST_GLM_GPU_MARGIN) / (size_t)sharers : 0;
    }
    for (k = 0; k < m; k++) {
        longest = ST_MAX(longest, data->indptr[k + 1] - data->indptr[k]);
    }
    g->streaming = (resident + csr > budget);
    if (g->streaming && hv) {
        snprintf(msg, msg_len, "--gpu --method newton: this rank's rows do not fit in its "
                 "GPU's memory (or --gpu-mem): %.4g MB with the method's arrays, %.4g MB "
                 "allowed, and the Newton method does not stream them (use more ranks, or "
                 "--method cd)", (double)(resident + csr) / 1e6, (double)budget / 1e6);
        st_glm_gpu_close(g);
        return -1;
    }
    if (g->streaming) {
        /* two chunk buffers in what the resident arrays leave */
        g->chunk_bytes = ST_MIN((budget > resident) ? (budget - resident) / 2 : 0,
                                ST_MAX(ST_GLM_GPU_CHUNK_MAX, ST_GLM_CHUNK_BYTES(1, longest)));
        if (g->chunk_bytes < ST_GLM_CHUNK_BYTES(1, longest)) {
            snprintf(msg, msg_len, "--gpu: GPU %d has %.3g MB for this rank: not enough for "
                     "its %lld rows' own arrays (%.3g MB) and two chunks of its longest row "
                     "(%.3g MB each; use more ranks)", g->device, (double)budget / 1e6,
                     (long long)m, (double)resident / 1e6,
                     (double)ST_GLM_CHUNK_BYTES(1, longest) / 1e6);
            st_glm_gpu_close(g);
            return -1;
        }
        g->h_indptr = data->indptr;
        g->order    = malloc((size_t)ST_MAX(m, 1) * sizeof(int64_t));
        g->stream[1] = st_cuda_stream_new();
        for (b = 0; b < 2; b++) {
            g->h_chunk[b] = malloc(g->chunk_bytes);
            g->b_chunk[b] = st_glm_gpu_put(NULL, g->chunk_bytes, &ok);
        }
        if (g->order == NULL || g->stream[1] == NULL || g->h_chunk[0] == NULL ||
            g->h_chunk[1] == NULL) {
            snprintf(msg, msg_len, "--gpu: out of host memory setting up streaming");
            st_glm_gpu_close(g);
            return -1;
        }
        /* pinned, the copies run while the kernels do (else the driver stages them) */
        for (b = 0; b < 2; b++) {
            g->h_pinned[b] = (st_cuda_host_register(g->h_chunk[b], g->chunk_bytes) == 0);
        }
    } else {
        g->a.indices = st_glm_gpu_put(data->indices, (size_t)nnz * sizeof(uint32_t), &ok);
        g->a.values  = st_glm_gpu_put(g->h_values, (size_t)nnz * sizeof(float), &ok);
    }
    g->a.indptr = st_glm_gpu_put(data->indptr, (size_t)(m + 1) * sizeof(int64_t), &ok);
    g->a.y      = st_glm_gpu_put(data->y, (size_t)m * sizeof(double), &ok);
    g->a.c      = st_glm_gpu_put(c, (size_t)m * sizeof(double), &ok);
    /* the rows in flight, and their curvatures; streaming, the two chunks' kernels
     * run at once: twice the rows in flight */
    omega = st_glm_gpu_omega(data, d_all);
    curv  = malloc((size_t)ST_MAX(m, 1) * sizeof(double));
    if (omega == NULL || curv == NULL) {
        free(omega);
        free(curv);
        snprintf(msg, msg_len, "--gpu: out of host memory");
        st_glm_gpu_close(g);
        return -1;
    }
    g->rows = rows;
    if (rows <= 0) {
        st_glm_gpu_curvature(data, g->h_values, sqnorm, omega, bias, 1, NULL, &share);
        g->rows = st_glm_gpu_auto_rows(g->warp, st_cuda_resident_warps(g->device, g->kernel,
                                                                       ST_GLM_GPU_WARP_BLOCK),
                                       share, g->streaming ? 2 : 1);
    }
    st_glm_gpu_curvature(data, g->h_values, sqnorm, omega, bias,
                         (int64_t)g->rows * (g->streaming ? 2 : 1), curv, NULL);
    free(omega);
    g->a.sqnorm = st_glm_gpu_put(curv, (size_t)m * sizeof(double), &ok);
    free(curv);
    g->a.alpha  = st_glm_gpu_put(NULL, (size_t)m * sizeof(double), &ok);
    g->a.u      = st_glm_gpu_put(NULL, (size_t)d_all * sizeof(double), &ok);
    if (!g->streaming) {   /* the gap's margins need the rows in GPU memory */
        g->margins = st_cuda_kernel("st_glm_margins");
        g->z       = (g->margins != NULL) ? st_glm_gpu_put(NULL, (size_t)m * sizeof(double), &ok)
                                          : NULL;
    }
    if (hv) {   /* (here, not at the first product: a failure is the caller's to agree on) */
        size_t vbytes = (size_t)d_all * sizeof(double);

        g->hv_kernel = st_cuda_kernel("st_glm_newton_hv");
        g->vzero     = st_cuda_kernel("st_glm_vzero");
        g->cg_kernel = st_cuda_kernel("st_glm_cg");
        g->grad_kernel = st_cuda_kernel("st_glm_newton_grad");
        g->dd        = st_glm_gpu_put(NULL, (size_t)m * sizeof(double), &ok);
        g->ga        = st_glm_gpu_put(NULL, (size_t)m * sizeof(double), &ok);
        g->hv        = st_glm_gpu_put(NULL, vbytes, &ok);
        g->cg_chunks = st_glm_cg_chunks(d_all);
        g->cg.len    = d_all;
        g->cg.hv     = g->hv;
        g->cg.g      = st_glm_gpu_put(NULL, vbytes, &ok);
        g->cg.m      = st_glm_gpu_put(NULL, vbytes, &ok);
        g->cg.s      = st_glm_gpu_put(NULL, vbytes, &ok);
        g->cg.r      = st_glm_gpu_put(NULL, vbytes, &ok);
        g->cg.q      = st_glm_gpu_put(NULL, vbytes, &ok);
        g->cg.hq     = st_glm_gpu_put(NULL, vbytes, &ok);
        g->cg.part   = st_glm_gpu_put(NULL, (size_t)ST_MAX(g->cg_chunks, 1) * ST_GLM_CG_DOTS *
                                                sizeof(double), &ok);
        g->h_part    = malloc((size_t)ST_MAX(g->cg_chunks, 1) * ST_GLM_CG_DOTS *
                              sizeof(double));
        if (g->h_part == NULL) {
            snprintf(msg, msg_len, "--gpu: out of host memory");
            st_glm_gpu_close(g);
            return -1;
        }
        g->h_part_pinned = (st_cuda_host_register(g->h_part, (size_t)ST_MAX(g->cg_chunks, 1) *
                                                                 ST_GLM_CG_DOTS *
                                                                 sizeof(double)) == 0);
        /* the row passes where the margins' kernel is (the rows in GPU memory) */
        g->rows_chunks = st_glm_rows_chunks(m);
        g->pass.part   = st_glm_gpu_put(NULL, (size_t)ST_MAX(g->rows_chunks, 1) * 2 *
                                                  sizeof(double), &ok);
        g->h_rows_part = malloc((size_t)ST_MAX(g->rows_chunks, 1) * 2 * sizeof(double));
        if (g->h_rows_part == NULL) {
            snprintf(msg, msg_len, "--gpu: out of host memory");
            st_glm_gpu_close(g);
            return -1;
        }
        g->rows_kernel = (g->z != NULL) ? st_cuda_kernel("st_glm_newton_rows") : NULL;
        if (g->hv_kernel != NULL) {   /* the resident blocks take the rows in turn */
            g->hv_grid = st_glm_gpu_row_grid(m);
            b = st_cuda_resident_warps(g->device, g->hv_kernel, ST_GLM_GPU_WARP_BLOCK) /
                (ST_GLM_GPU_WARP_BLOCK / 32);
            if (b > 0 && (unsigned)b < g->hv_grid) {
                g->hv_grid = (unsigned)b;
            }
            g->hv_hot = st_glm_gpu_hot(data, d, g->hv_grid, hot_cap);
        }
        if (g->hv_kernel == NULL || g->vzero == NULL || g->cg_kernel == NULL ||
            g->grad_kernel == NULL) {
            snprintf(msg, msg_len, "--gpu: the Newton method's kernels are unavailable on "
                     "device %d", g->device);
            st_glm_gpu_close(g);
            return -1;
        }
    }
    if (!ok) {
        snprintf(msg, msg_len, "--gpu: GPU %d could not allocate %.1f MB for the rank's %lld "
                 "rows and %lld nonzeros%s (%suse more ranks)", g->device,
                 (double)(resident + (g->streaming ? 0 : csr)) / 1e6, (long long)m,
                 (long long)nnz, g->streaming ? " (streaming)" : "",
                 hv ? "" : "set a smaller --gpu-mem to stream more, or ");
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
    g->a.eps        = eps;
    if (g->rows_kernel != NULL) {
        g->pass = (st_glm_rows_args_t){.y = g->a.y, .c = g->a.c, .xs = g->z, .z = g->a.alpha,
                                       .dd = g->dd, .ga = g->ga, .part = g->pass.part, .m = m,
                                       .step = step, .eps = eps};
        /* the margins z and X s start at 0 (w = 0, no step yet) */
        if (st_glm_gpu_vzero(g, g->pass.z, m) != 0 || st_glm_gpu_vzero(g, g->z, m) != 0 ||
            st_cuda_stream_sync(g->stream[0]) != 0) {
            snprintf(msg, msg_len, "--gpu: GPU %d failed to set the margins up", g->device);
            st_glm_gpu_close(g);
            return -1;
        }
    }
    *gpu_p          = g;
    return 0;
}

int st_glm_gpu_device(const st_glm_gpu_t *g)
{
    return g->device;
}

int st_glm_gpu_sharers(const st_glm_gpu_t *g)
{
    return g->sharers;
}

int64_t st_glm_gpu_hv_hot(const st_glm_gpu_t *g)
{
    return g->hv_hot;
}

size_t st_glm_gpu_chunk_bytes(const st_glm_gpu_t *g)
{
    return g->streaming ? g->chunk_bytes : 0;
}

int st_glm_gpu_rows(const st_glm_gpu_t *g)
{
    return g->rows;
}

const char *st_glm_gpu_kernel_name(const st_glm_gpu_t *g)
{
    return g->warp ? "a warp a row" : "a block a row";
}

/* Launch the epoch kernel on @a a's rows, on @a stream. */
static int st_glm_gpu_launch(const st_glm_gpu_t *g, st_glm_epoch_args_t *a, void *stream)
{
    unsigned grid, block;

    st_glm_gpu_shape(g, a->n, &grid, &block);
    return st_cuda_launch(g->kernel, grid, block, a, stream);
}

/* Chunks of at least this many entries are gathered by g->threads threads */
#define ST_GLM_GATHER_PAR (1 << 20)

typedef struct {
    const st_glm_gpu_t *g;
    const int64_t *order, *cptr;
    int64_t lo, hi;             /* positions */
    uint32_t *indices;
    float *values;
} st_glm_gather_part_t;

/* The entries of positions lo .. hi - 1 into their places. */
static void *st_glm_gather_part(void *arg)
{
    const st_glm_gather_part_t *p = arg;
    int64_t j, beg, len;

    for (j = p->lo; j < p->hi; j++) {
        beg = p->g->h_indptr[p->order[j]];
        len = p->cptr[j + 1] - p->cptr[j];
        memcpy(p->indices + p->cptr[j], p->g->h_indices + beg, (size_t)len * sizeof(uint32_t));
        memcpy(p->values + p->cptr[j], p->g->h_values + beg, (size_t)len * sizeof(float));
    }
    return NULL;
}

/* Gather the rows order[0 .. rows) into the chunk buffer @a buf: their entries'
 * offsets, the rows, their indices and values (layout: ST_GLM_CHUNK_BYTES); a large
 * chunk's entries by g->threads threads, each a share of the entries. */
static size_t st_glm_gpu_gather(const st_glm_gpu_t *g, const int64_t *order, int64_t rows,
                                int64_t entries, char *buf)
{
    int64_t *cptr = (int64_t*)buf, *row = cptr + rows + 1, j, at = 0;
    uint32_t *indices = (uint32_t*)(row + rows);
    float *values     = (float*)(indices + entries);
    st_glm_gather_part_t part[ST_GLM_GPU_GATHER_MAX];
    pthread_t tid[ST_GLM_GPU_GATHER_MAX];
    int t, nt = (entries >= ST_GLM_GATHER_PAR) ? g->threads : 1, started[ST_GLM_GPU_GATHER_MAX];

    for (j = 0; j < rows; j++) {
        cptr[j] = at;
        row[j]  = order[j];
        at += g->h_indptr[order[j] + 1] - g->h_indptr[order[j]];
    }
    cptr[rows] = at;
    /* thread t takes the positions from the first whose entries start at or after
     * t / nt of them */
    for (t = 0, j = 0; t < nt; t++) {
        part[t].g       = g;
        part[t].order   = order;
        part[t].cptr    = cptr;
        part[t].indices = indices;
        part[t].values  = values;
        part[t].lo      = j;
        while (j < rows && cptr[j] < entries * (t + 1) / nt) {
            j++;
        }
        part[t].hi = (t == nt - 1) ? rows : j;
    }
    for (t = 1; t < nt; t++) {
        started[t] = (pthread_create(&tid[t], NULL, st_glm_gather_part, &part[t]) == 0);
        if (!started[t]) {
            st_glm_gather_part(&part[t]);   /* no thread: this one does it */
        }
    }
    st_glm_gather_part(&part[0]);
    for (t = 1; t < nt; t++) {
        if (started[t]) {
            pthread_join(tid[t], NULL);
        }
    }
    return ST_GLM_CHUNK_BYTES(rows, entries);
}

/* One streamed epoch under @a key: the epoch's order of all the rows (the in-memory
 * epoch's), cut into chunks that fill a buffer; each chunk gathered on the host
 * into buffer k % 2 (once that buffer's stream has finished with it), copied on
 * that stream and its kernel launched there, so the host gathers chunk k + 1 while
 * the GPU runs chunk k. */
static int st_glm_gpu_epoch_streamed(st_glm_gpu_t *g, const st_glm_epoch_args_t *a0,
                                     uint64_t key)
{
    st_glm_epoch_args_t a;
    int64_t pos = 0, rows, entries, len;
    size_t bytes;
    int k, b;

    st_glm_perm_init(&a.perm, (uint64_t)g->n, key);
    st_glm_perm_fill(&a.perm, 0, g->order, g->n);
    for (k = 0; pos < g->n; k++) {
        b       = k % 2;
        rows    = 0;
        entries = 0;
        while (pos + rows < g->n) {   /* (the longest row fits alone: checked at open) */
            len = g->h_indptr[g->order[pos + rows] + 1] - g->h_indptr[g->order[pos + rows]];
            if (rows > 0 && ST_GLM_CHUNK_BYTES(rows + 1, entries + len) > g->chunk_bytes) {
                break;
            }
            rows++;
            entries += len;
        }
        if (st_cuda_stream_sync(g->stream[b]) != 0) {   /* its last copy and kernel */
            return -1;
        }
        bytes     = st_glm_gpu_gather(g, g->order + pos, rows, entries, g->h_chunk[b]);
        /* the epoch's first chunk shares rows with the last epoch's last chunks, whose
         * kernel may still run on the other stream (two kernels stepping on one row
         * lose one's dual update); within an epoch the chunks' rows are disjoint */
        if (k == 0 && st_cuda_stream_sync(g->stream[1 - b]) != 0) {
            return -1;
        }
        a         = *a0;
        a.row0    = 0;
        a.n       = rows;
        a.cptr    = (const int64_t*)g->b_chunk[b];
        a.rows    = a.cptr + rows + 1;
        a.indices = (const uint32_t*)(a.rows + rows);
        a.values  = (const float*)(a.indices + entries);
        if (st_cuda_copy_async(g->b_chunk[b], g->h_chunk[b], bytes, g->stream[b]) != 0 ||
            st_glm_gpu_launch(g, &a, g->stream[b]) != 0) {
            return -1;
        }
        pos += rows;
    }
    return 0;
}

int st_glm_gpu_round(st_glm_gpu_t *g, const double *w, double *u, double *alpha,
                     double scale, int epochs, uint64_t (*next_key)(void *arg), void *arg)
{
    st_glm_epoch_args_t a = g->a;
    void *host[3] = {(void*)w, u, alpha};
    size_t bytes[3] = {(size_t)g->d_all * sizeof(double), (size_t)g->d_all * sizeof(double),
                       (size_t)g->n * sizeof(double)};
    uint64_t key;
    int epoch, b;

    for (b = 0; !g->pin_tried && b < 3; b++) {   /* the same arrays every round */
        g->pin[b] = (st_cuda_host_register(host[b], bytes[b]) == 0) ? host[b] : NULL;
    }
    g->pin_tried = 1;
    if (st_cuda_copy(a.u, w, (size_t)g->d_all * sizeof(double), NULL) != 0 ||
        (g->n > 0 && st_cuda_copy(a.alpha, alpha, (size_t)g->n * sizeof(double), NULL) != 0)) {
        return -1;
    }
    a.scale = scale;
    /* in memory: one launch an epoch, on one stream; the host only draws the keys */
    for (epoch = 0; epoch < epochs && g->n > 0; epoch++) {
        key = next_key(arg);
        if (g->streaming) {
            if (st_glm_gpu_epoch_streamed(g, &a, key) != 0) {
                return -1;
            }
            continue;
        }
        a.row0 = 0;
        a.n    = g->n;
        st_glm_perm_init(&a.perm, (uint64_t)g->n, key);
        if (st_glm_gpu_launch(g, &a, g->stream[0]) != 0) {
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

int st_glm_gpu_has_margins(const st_glm_gpu_t *g)
{
    return g->margins != NULL && g->z != NULL;
}

/* st_glm_vzero on @a n entries at @a v */
static int st_glm_gpu_vzero(st_glm_gpu_t *g, double *v, int64_t n)
{
    st_glm_epoch_args_t a = g->a;

    a.hv = v;
    a.n  = n;
    return st_cuda_launch(g->vzero, (unsigned)ST_MAX(ST_MIN((n + 255) / 256, 65535), 1), 256, &a,
                          g->stream[0]);
}

int st_glm_gpu_pin(st_glm_gpu_t *g, void *p, size_t bytes)
{
    int b;

    for (b = 0; b < ST_GLM_GPU_PINS && g->pin_nt[b] != NULL; b++) {
    }
    if (b == ST_GLM_GPU_PINS || st_cuda_host_register(p, bytes) != 0) {
        return -1;
    }
    g->pin_nt[b] = p;
    return 0;
}

/* One sweep of the CG on the GPU's vectors, its dots summed into @a dots. */
static int st_glm_gpu_cg_run(st_glm_gpu_t *g, int op, double *dots)
{
    size_t pbytes = (size_t)g->cg_chunks * ST_GLM_CG_DOTS * sizeof(double);

    g->cg.op = op;
    if (g->cg_chunks == 0) {
        st_glm_cg_total(g->h_part, 0, op, dots);
        return 0;
    }
    if (st_cuda_launch(g->cg_kernel, (unsigned)ST_MIN(g->cg_chunks, (int64_t)1 << 16),
                       ST_GLM_CG_LANES, &g->cg, g->stream[0]) != 0) {
        return -1;
    }
    if (st_glm_cg_dots(op) == 0) {
        return 0;   /* (nothing to wait for: the stream orders the next launch after it) */
    }
    if (st_cuda_copy_async(g->h_part, g->cg.part, pbytes, g->stream[0]) != 0 ||
        st_cuda_stream_sync(g->stream[0]) != 0) {
        return -1;
    }
    st_glm_cg_total(g->h_part, g->cg_chunks, op, dots);
    return 0;
}

int st_glm_gpu_cg_start(st_glm_gpu_t *g, const double *grad, const double *m, double n,
                        double lambda, double *zr)
{
    size_t vbytes = (size_t)g->d_all * sizeof(double);

    if (g->cg_kernel == NULL) {
        return -1;   /* not opened for it (st_glm_gpu_open refuses that) */
    }
    g->cg.n      = n;
    g->cg.lambda = lambda;
    if (st_cuda_copy_async((void *)g->cg.g, grad, vbytes, g->stream[0]) != 0 ||
        st_cuda_copy_async((void *)g->cg.m, m, vbytes, g->stream[0]) != 0) {
        return -1;
    }
    return st_glm_gpu_cg_run(g, ST_GLM_CG_INIT, zr);
}

int st_glm_gpu_cg_hv(st_glm_gpu_t *g, const double *dd, int dd_changed, double *part)
{
    st_glm_epoch_args_t a = g->a;
    size_t vbytes = (size_t)g->d_all * sizeof(double), rbytes = (size_t)g->n * sizeof(double);

    a.row0 = 0;
    a.dd   = g->dd;
    a.hv   = g->hv;
    a.u    = g->cg.q;
    /* every copy on the kernels' stream: ordered with them whether or not the host's
       arrays could be pinned (a synchronous copy from pageable memory may return
       before its data reach the GPU, and the stream does not wait for it) */
    if ((dd_changed && g->n > 0 && st_cuda_copy_async(g->dd, dd, rbytes, g->stream[0]) != 0) ||
        st_glm_gpu_vzero(g, g->hv, g->d_all) != 0) {
        return -1;
    }
    a.n   = g->n;
    a.hot = g->hv_hot;
    if ((g->n > 0 && st_cuda_launch(g->hv_kernel, g->hv_grid, ST_GLM_GPU_WARP_BLOCK, &a,
                                    g->stream[0]) != 0) ||
        (part != NULL && (st_cuda_copy_async(part, g->hv, vbytes, g->stream[0]) != 0 ||
                          st_cuda_stream_sync(g->stream[0]) != 0))) {
        return -1;
    }
    return 0;
}

int st_glm_gpu_cg_finish(st_glm_gpu_t *g, const double *hv, double *qhq)
{
    if (hv != NULL &&
        st_cuda_copy_async(g->hv, hv, (size_t)g->d_all * sizeof(double), g->stream[0]) != 0) {
        return -1;
    }
    return st_glm_gpu_cg_run(g, ST_GLM_CG_FINISH, qhq);
}

int st_glm_gpu_cg_update(st_glm_gpu_t *g, double alpha, double dots[3])
{
    g->cg.alpha = alpha;
    return st_glm_gpu_cg_run(g, ST_GLM_CG_UPDATE, dots);
}

int st_glm_gpu_cg_direction(st_glm_gpu_t *g, double beta)
{
    g->cg.beta = beta;
    return st_glm_gpu_cg_run(g, ST_GLM_CG_DIRECTION, NULL);
}

int st_glm_gpu_cg_step(st_glm_gpu_t *g, double *s)
{
    if (st_cuda_copy_async(s, g->cg.s, (size_t)g->d_all * sizeof(double), g->stream[0]) != 0 ||
        st_cuda_stream_sync(g->stream[0]) != 0) {
        return -1;
    }
    return 0;
}

int st_glm_gpu_grad(st_glm_gpu_t *g, const double *ga, const double *dd, double *grad,
                    double *diag)
{
    st_glm_epoch_args_t a = g->a;
    size_t vbytes = (size_t)g->d_all * sizeof(double), rbytes = (size_t)g->n * sizeof(double);

    if (g->grad_kernel == NULL || g->streaming) {
        return -1;   /* not opened for it (st_glm_gpu_open refuses that) */
    }
    a.row0 = 0;
    a.n    = g->n;
    a.hot  = g->hv_hot;
    a.ga   = g->ga;
    a.dd   = g->dd;
    a.hv   = g->hv;      /* (scratch between the CG's products) */
    a.hd   = g->cg.hq;   /* (scratch between the CG's sweeps) */
    if ((g->n > 0 && ga != NULL && (st_cuda_copy_async(g->ga, ga, rbytes, g->stream[0]) != 0 ||
                                    st_cuda_copy_async(g->dd, dd, rbytes, g->stream[0]) != 0)) ||
        st_glm_gpu_vzero(g, a.hv, g->d_all) != 0 || st_glm_gpu_vzero(g, a.hd, g->d_all) != 0 ||
        (g->n > 0 && st_cuda_launch(g->grad_kernel, g->hv_grid, ST_GLM_GPU_WARP_BLOCK, &a,
                                    g->stream[0]) != 0) ||
        st_cuda_copy_async(grad, a.hv, vbytes, g->stream[0]) != 0 ||
        st_cuda_copy_async(diag, a.hd, vbytes, g->stream[0]) != 0 ||
        st_cuda_stream_sync(g->stream[0]) != 0) {
        return -1;
    }
    return 0;
}

int st_glm_gpu_margins(st_glm_gpu_t *g, const double *w, double *z)
{
    st_glm_epoch_args_t a = g->a;
    unsigned grid;

    if (g->margins == NULL || g->z == NULL) {
        return 1;
    }
    if (!g->pin_z_tried && z != NULL) {
        g->pin[3]      = (st_cuda_host_register(z, (size_t)g->n * sizeof(double)) == 0) ? z
                                                                                       : NULL;
        g->pin_z_tried = 1;
    }
    a.row0 = 0;
    a.n    = g->n;
    a.z    = g->z;
    grid   = st_glm_gpu_row_grid(g->n);
    if (st_cuda_copy(a.u, w, (size_t)g->d_all * sizeof(double), NULL) != 0 ||
        (g->n > 0 && (st_cuda_launch(g->margins, grid, ST_GLM_GPU_WARP_BLOCK, &a,
                                     g->stream[0]) != 0 ||
                      (z != NULL && (st_cuda_stream_sync(g->stream[0]) != 0 ||
                                     st_cuda_copy(z, g->z, (size_t)g->n * sizeof(double),
                                                  NULL) != 0))))) {
        return -1;
    }
    return 0;
}

int st_glm_gpu_has_newton_rows(const st_glm_gpu_t *g)
{
    return g->rows_kernel != NULL;
}

int st_glm_gpu_newton_rows(st_glm_gpu_t *g, int op, double t, double *part)
{
    size_t pbytes = (size_t)g->rows_chunks * 2 * sizeof(double);

    if (g->rows_kernel == NULL) {
        return 1;
    }
    g->pass.op = op;
    g->pass.t  = t;
    if (g->rows_chunks == 0) {
        return 0;
    }
    if (st_cuda_launch(g->rows_kernel, (unsigned)ST_MIN(g->rows_chunks, (int64_t)1 << 16),
                       ST_GLM_ROWS_LANES, &g->pass, g->stream[0]) != 0 ||
        st_cuda_copy_async(g->h_rows_part, g->pass.part, pbytes, g->stream[0]) != 0 ||
        st_cuda_stream_sync(g->stream[0]) != 0) {
        return -1;
    }
    memcpy(part, g->h_rows_part, pbytes);
    return 0;
}
