/*
 * libstrata_glm internals shared by its files: the objects behind the opaque
 * handles of include/strata_glm.h.
 */
#ifndef ST_GLM_H
#define ST_GLM_H

#include "strata_glm.h"
#include "st_common.h"
#include "st_glm_data.h"
#include "st_glm_model.h"

struct strata_glm_problem {
    st_glm_data_t *data;        /* this rank's rows */
    int            regression;  /* labels are real targets */
};

struct strata_glm_model {
    const st_glm_model_t *loss;       /* the model's loss, regularizer and link */
    int64_t               n_features; /* weights for features 0 .. n_features-1 */
    double                bias;       /* > 0: value of the constant feature; else none */
    double               *w;          /* n_features entries, then the bias weight if any */
    double                lambda;     /* as trained (0 when loaded from a file) */
    double                eta;
    strata_glm_info_t     info;
};

/* A model of @a loss with zero weights; NULL without memory. */
strata_glm_model_t *st_glm_model_new(const st_glm_model_t *loss, int64_t n_features,
                                     double bias);

/* splitmix64: the trainers' coordinate orders */
static inline uint64_t st_glm_rand(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* Progress output: through the user's print function, or to stdout. */
void st_glm_print(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* An error message into msg[len] (nothing when msg is NULL). */
void st_glm_msg(char *msg, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Monotonic seconds. */
double st_glm_now(void);

/* Rank and size of @a comm; MPI_COMM_NULL is one process on its own (no MPI). */
void st_glm_comm_shape(MPI_Comm comm, int *rank_p, int *size_p);

/* In-place allreduce of @a count elements, in pieces an int can count; nothing on
 * MPI_COMM_NULL. */
void st_glm_allreduce(MPI_Comm comm, void *buf, int64_t count, MPI_Datatype type, MPI_Op op);

/* Collective over @a comm: 1 when @a ok is nonzero on every rank (on MPI_COMM_NULL,
 * @a ok itself). */
int st_glm_agree(MPI_Comm comm, int ok);

/* c_i, the weight of an example with label @a y: 1 for regression, else the class's. */
static inline double st_glm_example_weight(const st_glm_model_t *loss,
                                           const strata_glm_param_t *param, double y)
{
    return !loss->classification ? 1.0 : (y > 0) ? param->weight_pos : param->weight_neg;
}

/* A training run's rounds: where progress goes and what it has reached. */
typedef struct {
    MPI_Comm                  comm;
    int                       rank;
    const strata_glm_param_t *param;
    strata_glm_info_t         info;
    double                    t_start;
} st_glm_round_ctx_t;

/* The end of a round: record @a obj in ctx->info, test the tolerance, and print the
 * progress line on rank 0 when verbose. */
void st_glm_round_end(st_glm_round_ctx_t *ctx, const st_glm_objectives_t *obj);

/* The L1 (primal) models across ranks: ProxCoCoA+ over a feature partition
 * (solver/st_glm_train_primal.c). Fills model->w and model->info. */
strata_status_t st_glm_train_primal(const st_glm_model_t *loss, const strata_glm_problem_t *prob,
                                    const strata_glm_param_t *param, MPI_Comm comm, char *msg,
                                    size_t msg_len, strata_glm_model_t *model);

#endif /* ST_GLM_H */
