/*
 * The model vector's layout while a dual model trains (strata_glm_param_t
 * feature_order): the columns relabelled by the number of rows that hold them, the
 * most frequent first.
 *
 * An SDCA step reads and writes the model entries of one row's columns. On
 * Criteo-like data those are a few hot columns (the numeric fields, the most
 * frequent ids) and many cold ones, scattered by the hashing over a vector of 8 MB
 * or more: every hot entry then sits on its own cache line among cold ones, and the
 * lines the hot entries need do not stay in the caches. Relabelled, the hot entries
 * share a few lines at the start of the vector, and training the 300k rows of
 * bench/GLM.md to 1e-3 took 15-21 % less time (bench/RESULTS.md, "feature order").
 *
 * The relabelling is one permutation of the columns for all ranks (from the counts
 * summed over them), so the updates the ranks add up are laid out alike. The rows
 * keep the order of their entries, only the labels change: every dot product and
 * update adds the same terms in the same order, and the steps, hence w, are those
 * of the given order bit for bit (replica threads; only the duality gap's ||w||^2
 * is summed in another order). The trainer works on a copy of the column indices
 * (4 bytes per stored entry; the user's rows are never written) and maps its
 * vectors back (st_glm_order_gather) for the model and the checkpoint, whose files
 * hold the given order.
 *
 * Columns are grouped by their count's leading bits (a counting sort on a key that
 * grows with the count, four keys per power of two), the highest key first, in
 * column order within a key: a linear-time order that puts every column among those
 * of about its frequency, and the same on every rank.
 */
#include "config.h"

#include "st_glm_order.h"

#include <stdlib.h>
#include <string.h>

/* Keys: 0 for an absent column, else 1 + 4 log2(count) + the two bits after the
 * leading one. */
#define ST_GLM_ORDER_KEYS 256

static int st_glm_order_key(int64_t count)
{
    uint64_t c = (uint64_t)count;
    int b;

    if (count <= 0) {
        return 0;
    }
    b = 63 - __builtin_clzll(c);
    return 1 + 4 * b + (int)((b >= 2 ? c >> (b - 2) : c << (2 - b)) & 3);
}

int st_glm_order_wanted(int mode, int64_t n_cols, int shared)
{
    switch (mode) {
    case STRATA_GLM_ORDER_FREQUENCY:
        return n_cols > 1;
    case STRATA_GLM_ORDER_GIVEN:
        return 0;
    default:
        return n_cols > 1 && (shared || n_cols >= ST_GLM_ORDER_AUTO_MIN);
    }
}

int st_glm_order_init(st_glm_order_t *o, const st_glm_data_t *data, int mode, int shared,
                      MPI_Comm comm)
{
    int64_t d = data->n_cols, nnz = data->nnz, j, k, next;
    int64_t start[ST_GLM_ORDER_KEYS];
    int64_t *count;
    uint32_t *map, *idx;
    int key;

    memset(o, 0, sizeof(*o));
    if (!st_glm_order_wanted(mode, d, shared)) {
        return 0;
    }
    count = calloc((size_t)d, sizeof(*count));
    map   = malloc((size_t)d * sizeof(*map));
    idx   = malloc((size_t)ST_MAX(nnz, 1) * sizeof(*idx));
    if (!st_glm_agree(comm, count != NULL && map != NULL && idx != NULL)) {
        /* only an optimization: train in the given order */
        free(count);
        free(map);
        free(idx);
        return 0;
    }
    for (k = 0; k < nnz; k++) {
        count[data->indices[k]]++;
    }
    st_glm_allreduce(comm, count, d, MPI_INT64_T, MPI_SUM);

    memset(start, 0, sizeof(start));
    for (j = 0; j < d; j++) {
        start[st_glm_order_key(count[j])]++;
    }
    for (next = 0, key = ST_GLM_ORDER_KEYS - 1; key >= 0; key--) {
        k          = start[key];
        start[key] = next;
        next      += k;
    }
    for (j = 0; j < d; j++) {
        map[j] = (uint32_t)start[st_glm_order_key(count[j])]++;
    }
    free(count);

    for (k = 0; k < nnz; k++) {
        idx[k] = map[data->indices[k]];
    }
    o->map          = map;
    o->data         = *data;
    o->data.indices = idx;
    return 1;
}

void st_glm_order_free(st_glm_order_t *o)
{
    if (o->map != NULL) {
        free(o->map);
        free(o->data.indices);
    }
    memset(o, 0, sizeof(*o));
}

void st_glm_order_gather(const st_glm_order_t *o, const double *in, double *out, int64_t n)
{
    int64_t j, d = o->data.n_cols;

    if (o->map == NULL) {
        memcpy(out, in, (size_t)n * sizeof(double));
        return;
    }
    for (j = 0; j < d; j++) {
        out[j] = in[o->map[j]];
    }
    for (; j < n; j++) {
        out[j] = in[j];
    }
}

void st_glm_order_scatter(const st_glm_order_t *o, const double *in, double *out, int64_t n)
{
    int64_t j, d = o->data.n_cols;

    if (o->map == NULL) {
        memcpy(out, in, (size_t)n * sizeof(double));
        return;
    }
    for (j = 0; j < d; j++) {
        out[o->map[j]] = in[j];
    }
    for (; j < n; j++) {
        out[j] = in[j];
    }
}
