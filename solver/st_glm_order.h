/*
 * The model vector's layout while a dual model trains: the columns relabelled by
 * frequency, the most frequent first (solver/st_glm_order.c explains why and how).
 */
#ifndef ST_GLM_ORDER_H
#define ST_GLM_ORDER_H

#include "st_glm.h"

/* feature_order auto relabels from this many columns (a model vector of 1 MB). */
#define ST_GLM_ORDER_AUTO_MIN ((int64_t)1 << 17)

typedef struct {
    uint32_t      *map;    /* n_cols entries: given column -> training column; NULL:
                            * not relabelled (the given order) */
    st_glm_data_t  data;   /* relabelled: the rows with the training columns (its own
                            * indices; the other arrays are the given data's) */
} st_glm_order_t;

/* Would @a mode (STRATA_GLM_ORDER_*) relabel @a n_cols columns (@a shared: for
 * threads sharing the vector, which keep the hot columns apart)? */
int st_glm_order_wanted(int mode, int64_t n_cols, int shared);

/* Collective over @a comm: relabel @a data's columns when @a mode asks for it and
 * memory allows (on every rank, or on none). @return 1 when relabelled (then train
 * on o->data), 0 when not (o->map NULL). */
int st_glm_order_init(st_glm_order_t *o, const st_glm_data_t *data, int mode, int shared,
                      MPI_Comm comm);
void st_glm_order_free(st_glm_order_t *o);

/* A vector of @a n >= n_cols entries (those beyond n_cols, as the bias, keep their
 * place): @a out in the given order from @a in in the training order (gather), or
 * the reverse (scatter). Without relabelling, a copy. */
void st_glm_order_gather(const st_glm_order_t *o, const double *in, double *out, int64_t n);
void st_glm_order_scatter(const st_glm_order_t *o, const double *in, double *out, int64_t n);

#endif /* ST_GLM_ORDER_H */
