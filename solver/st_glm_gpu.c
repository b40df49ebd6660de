/*
 * The GPU local solver (st_glm_gpu.h): data in GPU memory, an epoch per launch of
 * the TPA-SCD kernel, through the driver API (cuda/st_cuda.c), so libstrata_glm
 * links no CUDA library and runs where there is none (strata-train --gpu then
 * says why it cannot).
 */
#include "config.h"

#include "st_glm_gpu.h"
#include "st_common.h"
#include "st_cuda.h"
#include "st_glm_kernels.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct st_glm_gpu {
    int device;
    void *kernel, *stream;
    int64_t n, d_all;
    st_glm_epoch_args_t a;   /* the device pointers; order, n, scale set per epoch */
    int64_t *order;          /* device: the epoch's order */
};

static void *st_glm_gpu_put(const void *host, size_t bytes, int *ok)
{
    void *dev;

    if (!*ok) {
        return NULL;
    }
    dev = st_cuda_alloc(bytes);
    if (dev == NULL || (host != NULL && bytes > 0 && st_cuda_copy(dev, host, bytes, dev) != 0)) {
        st_cuda_free(dev);
        *ok = 0;
        return NULL;
    }
    return dev;
}

void st_glm_gpu_close(st_glm_gpu_t *g)
{
    if (g == NULL) {
        return;
    }
    st_cuda_free((void*)g->a.indptr);
    st_cuda_free((void*)g->a.indices);
    st_cuda_free((void*)g->a.values);
    st_cuda_free((void*)g->a.y);
    st_cuda_free((void*)g->a.c);
    st_cuda_free((void*)g->a.sqnorm);
    st_cuda_free(g->a.alpha);
    st_cuda_free(g->a.u);
    st_cuda_free(g->order);
    free(g);
}

int st_glm_gpu_open(const st_glm_data_t *data, const double *c, const double *sqnorm,
                    int step, double bias, int64_t d, int64_t d_all, MPI_Comm comm,
                    st_glm_gpu_t **gpu_p, char *msg, size_t msg_len)
{
    int64_t m = data->n_rows, nnz = data->indptr[data->n_rows], k;
    size_t bytes;
    MPI_Comm host;
    st_glm_gpu_t *g;
    float *vals = NULL;
    int local = 0, ok = 1;
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
    g->device = local;
    g->n      = m;
    g->d_all  = d_all;
    g->kernel = st_cuda_kernel("st_glm_tpa_epoch");
    g->stream = st_cuda_stream();
    if (g->kernel == NULL || g->stream == NULL) {
        snprintf(msg, msg_len, "--gpu: the GPU solver's kernel or stream is unavailable on "
                 "device %d", g->device);
        free(g);
        return -1;
    }
    /* float values on the GPU (TPA-SCD's data; the sums are in double) */
    if (data->prec != 32) {
        vals = malloc((size_t)ST_MAX(nnz, 1) * sizeof(float));
        if (vals == NULL) {
            snprintf(msg, msg_len, "--gpu: out of host memory");
            free(g);
            return -1;
        }
        for (k = 0; k < nnz; k++) {
            vals[k] = (float)data->val64[k];
        }
    }
    bytes = (size_t)(m + 1) * 8 + (size_t)nnz * 8 + (size_t)m * 40 + (size_t)d_all * 8;
    g->a.indptr  = st_glm_gpu_put(data->indptr, (size_t)(m + 1) * sizeof(int64_t), &ok);
    g->a.indices = st_glm_gpu_put(data->indices, (size_t)nnz * sizeof(uint32_t), &ok);
    g->a.values  = st_glm_gpu_put(vals != NULL ? vals : data->val32, (size_t)nnz * sizeof(float),
                                  &ok);
    g->a.y       = st_glm_gpu_put(data->y, (size_t)m * sizeof(double), &ok);
    g->a.c       = st_glm_gpu_put(c, (size_t)m * sizeof(double), &ok);
    g->a.sqnorm  = st_glm_gpu_put(sqnorm, (size_t)m * sizeof(double), &ok);
    g->a.alpha   = st_glm_gpu_put(NULL, (size_t)m * sizeof(double), &ok);
    g->a.u       = st_glm_gpu_put(NULL, (size_t)d_all * sizeof(double), &ok);
    g->order     = st_glm_gpu_put(NULL, (size_t)m * sizeof(int64_t), &ok);
    free(vals);
    if (!ok) {
        snprintf(msg, msg_len, "--gpu: the rank's rows (%lld rows, %lld nonzeros, about %.1f "
                 "MB with the model) do not fit in the memory of GPU %d (streaming is not "
                 "implemented yet: use more ranks)", (long long)m, (long long)nnz,
                 (double)bytes / 1e6, g->device);
        st_glm_gpu_close(g);
        return -1;
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

int st_glm_gpu_round(st_glm_gpu_t *g, const double *w, double *u, double *alpha,
                     double scale, int epochs, int64_t *perm,
                     void (*shuffle)(int64_t *perm, int64_t n, void *arg), void *arg)
{
    st_glm_epoch_args_t a = g->a;
    unsigned grid;
    int epoch;

    if (st_cuda_copy(a.u, w, (size_t)g->d_all * sizeof(double), a.u) != 0 ||
        (g->n > 0 && st_cuda_copy(a.alpha, alpha, (size_t)g->n * sizeof(double), a.alpha) != 0)) {
        return -1;
    }
    a.order = g->order;
    a.n     = g->n;
    a.scale = scale;
    /* a block per row at a time; enough blocks to fill a GPU, not so many that most
     * rows see a stale u (rows of one wave run at once) */
    grid = (unsigned)ST_MAX(ST_MIN(g->n, (int64_t)1024), 1);
    /* one stream: an epoch's order is copied after the previous epoch's kernel, and
     * the host draws the next order while the GPU runs */
    for (epoch = 0; epoch < epochs && g->n > 0; epoch++) {
        shuffle(perm, g->n, arg);
        if (st_cuda_copy_async(g->order, perm, (size_t)g->n * sizeof(int64_t), g->stream) != 0 ||
            st_cuda_launch(g->kernel, grid, ST_GLM_GPU_BLOCK, &a, g->stream) != 0) {
            return -1;
        }
    }
    if (st_cuda_stream_sync(g->stream) != 0 ||
        st_cuda_copy(u, a.u, (size_t)g->d_all * sizeof(double), a.u) != 0 ||
        (g->n > 0 && st_cuda_copy(alpha, a.alpha, (size_t)g->n * sizeof(double), a.alpha) != 0)) {
        return -1;
    }
    return 0;
}
