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
#include "st_glm_kernels.h"

#include <float.h>
#include <math.h>
#include <string.h>

struct strata_glm_problem {
    st_glm_data_t *data;        /* this rank's rows */
    int            regression;  /* labels are real targets */
    /* classification (st_glm_multi.c): the classes over all ranks in LIBLINEAR's order
     * (their first rows'; 1 before -1 or 0 in a binary set), and whether data->y names
     * them (named: any other set, trained one class against the rest) or holds +1/-1
     * (the classes 1 and -1, or 1 and 0 with data->zero_one) */
    int            nr_class;
    double        *classes;
    int            named;
    double        *class_weight; /* nr_class weights (strata_glm_problem_set_class_weights),
                                    or NULL: all 1 */
    int            view;        /* the rows of another problem: frees the labels alone */
    /* its rows' squared norms, with the bias rows_fine_bias, are known finite
       (st_glm_data_overflow found none: a C search's folds, rows of a problem checked
       once); strata_glm_train_from then skips that pass */
    int            rows_fine;
    double         rows_fine_bias;
    /* memo (a C search's folds: problems the library owns and trains again and again):
       L-BFGS keeps its scaling pass's column sums, sum_i c_i x_ij^2 over all ranks
       (and the bias's), in colsq for the next training of the same loss, class
       weights and bias (colsq_key); the same on every rank */
    int            memo;
    double        *colsq;
    double         colsq_key[3];   /* weight_pos, weight_neg, bias */
    const void    *colsq_loss;
};

/* @a prob's weight of the class named @a label: 1 without class weights or such a
 * class. */
static inline double st_glm_class_weight(const strata_glm_problem_t *prob, double label)
{
    int c;

    for (c = 0; prob->class_weight != NULL && c < prob->nr_class; c++) {
        if (prob->classes[c] == label) {
            return prob->class_weight[c];
        }
    }
    return 1.0;
}

struct strata_glm_model {
    const st_glm_model_t *loss;       /* the model's loss, regularizer and link */
    int64_t               n_features; /* weights for features 0 .. n_features-1 */
    double                bias;       /* > 0: value of the constant feature; else none */
    double               *w;          /* n_features entries, then the bias weight if any */
    double                lambda;     /* as trained (0 when loaded from a file) */
    double                eta;
    int                   zero_positive; /* a score of 0 is class +1 (a file's "label -1 1") */
    int                   zero_one;   /* the classes are named 1 and 0 (0/1 training data,
                                         a file's "label 1 0"), not 1 and -1 */
    /* classes with other names, one class, or more than two (st_glm_multi.c): nr_class
     * > 0 and their labels, LIBLINEAR's "label" line; w then holds nr_w = (nr_class > 2
     * ? nr_class : 1) weights per feature, feature j's at w[j nr_w ...] (LIBLINEAR's
     * layout), and for two classes a positive score is labels[0], others labels[1]; a
     * model of one class (LIBLINEAR's "nr_class 1") predicts labels[0] for every row.
     * 0 (and NULL): the classes 1 and -1 (or 0) above, or regression */
    int                   nr_class;
    double               *labels;
    strata_glm_info_t     info;
};

/* Are the @a n entries of @a v all 0? (A trainer's model->w on entry: from a starting
 * model, strata_glm_train_from, where they are not.) */
static inline int st_glm_all_zero(const double *v, int64_t n)
{
    int64_t j;

    for (j = 0; j < n && v[j] == 0; j++) {
    }
    return j == n;
}

/* The relative duality gap reported and scheduled on: gap / |primal|, the smallest
 * positive double standing in for a primal of 0 (any nonzero primal divides exactly:
 * before, a floor of 1e-300 made a primal of 1e-306's gap 1e-6 of its size). */
static inline double st_glm_rel_gap(double gap, double primal)
{
    return gap / fmax(fabs(primal), DBL_TRUE_MIN);
}

/* The weights per feature of @a model: one, or one per class (more than two). */
static inline int st_glm_model_nr_w(const strata_glm_model_t *model)
{
    return (model->nr_class > 2) ? model->nr_class : 1;
}

/* Does @a model predict by its classes' scores alone, its "score" the label predicted
 * (more than two classes, or LIBLINEAR's model of one class, nr_class 1, which predicts
 * its class for every row)? Else a score whose sign tells two classes apart. */
static inline int st_glm_model_by_label(const strata_glm_model_t *model)
{
    return model->nr_class == 1 || model->nr_class > 2;
}

/* FNV-1a of what makes @a model the model it is: its loss, features, class flags,
 * labels in their order, bias and weights (a 64-bit word at a time). Ranks compare it
 * (with its complement, in one allreduce) to know they hold the same model. */
static inline uint64_t st_glm_model_hash(const strata_glm_model_t *model)
{
    const uint64_t prime = UINT64_C(0x100000001b3);
    int64_t j, n_w = (model->w == NULL) ? 0 :
                     (model->n_features + (model->bias > 0 ? 1 : 0)) * st_glm_model_nr_w(model);
    uint64_t x = UINT64_C(0xcbf29ce484222325), bits;
    const char *name = (model->loss != NULL) ? model->loss->name : "";
    int c;

    for (; *name != '\0'; name++) {
        x = (x ^ (unsigned char)*name) * prime;
    }
    x = (x ^ (uint64_t)model->n_features) * prime;
    x = (x ^ (uint64_t)(model->zero_positive * 2 + model->zero_one)) * prime;
    x = (x ^ (uint64_t)model->nr_class) * prime;
    for (c = 0; model->labels != NULL && c < model->nr_class; c++) {
        memcpy(&bits, &model->labels[c], sizeof(bits));
        x = (x ^ bits) * prime;
    }
    memcpy(&bits, &model->bias, sizeof(bits));
    x = (x ^ bits) * prime;
    for (j = 0; j < n_w; j++) {
        memcpy(&bits, &model->w[j], sizeof(bits));
        x = (x ^ bits) * prime;
    }
    return x;
}

/* ---- classes (st_glm_multi.c) ---- */

/* Collective: the classes of @a prob's labels (read or given as named classes, data->y
 * as given) into prob->nr_class/classes/named, the binary sets mapped to +1/-1 (0/1:
 * zero_one). ST_OK or ST_ERR_NO_MEMORY, the same on every rank. */
st_status_t st_glm_problem_classify(strata_glm_problem_t *prob, MPI_Comm comm);

/* The class of local row @a i as the data named it (1, -1 or 0 for a binary set), or
 * the target of a regression problem. */
double st_glm_problem_label(const strata_glm_problem_t *prob, int64_t i);

/* strata_glm_problem_free of a view (prob->view). */
void st_glm_problem_view_free(strata_glm_problem_t *prob);

/* A model of @a nr_class classes named @a labels, zero weights; NULL without memory. */
strata_glm_model_t *st_glm_model_new_classes(const st_glm_model_t *loss, int64_t n_features,
                                             double bias, int nr_class, const double *labels);

/* strata_glm_train of a problem of named classes (collective). */
strata_status_t st_glm_train_named(const strata_glm_problem_t *prob,
                                   const strata_glm_param_t *param, MPI_Comm comm, char *msg,
                                   size_t msg_len, const strata_glm_model_t *start,
                                   strata_glm_model_t **model_p);

/* The metrics of this rank's scores @a z of @a prob's rows (strata_glm_predict's;
 * @a local: this rank's status in computing them; any rank's error is every rank's),
 * over all ranks of @a comm as strata_glm_evaluate computes them (st_glm_predict.c). */
/* Why st_glm_comm_init() refused a communicator with @a status, in @a msg: MPI not
 * initialized, an intercommunicator, or MPI_Comm_size/_rank failed (an invalid handle
 * under a handler that returns). @return @a status as the API's. */
strata_status_t st_glm_comm_refused(st_status_t status, char *msg, size_t msg_len);

/* Collective over @a comm: may @a prob be worked on over @a comm? MPI is up (where
 * @a comm is not MPI_COMM_NULL: else STRATA_ERR_NOT_INITIALIZED, or STRATA_ERR_MPI
 * for a handle MPI refused under a handler that returns) and these ranks hold
 * all of the problem's rows: it was read or made on @a comm, or on a communicator of
 * the same ranks (else STRATA_ERR_INVALID_PARAM). The training and the searches ask. */
strata_status_t st_glm_problem_on(const strata_glm_problem_t *prob, MPI_Comm comm, char *msg,
                                  size_t msg_len);

st_status_t st_glm_evaluate_scores(const strata_glm_model_t *model,
                                   const strata_glm_problem_t *prob, const double *z,
                                   st_status_t local, MPI_Comm comm, strata_glm_metrics_t *m);

/* The scores of @a prob's rows (strata_glm_predict's, in @a scores) as LIBLINEAR's model
 * of the classes present[c] != 0 alone (strata_glm_model_classes' order) would give
 * them, @a model trained on rows that lack the others: more than two classes, the label
 * of the largest score among those present; two, of which one present, a score of that
 * class's sign (its magnitude kept). Cross-validation's folds (st_glm_cv.c).
 * ST_ERR_NO_MEMORY, or ST_OK. */
st_status_t st_glm_predict_present(const strata_glm_model_t *model,
                                   const strata_glm_problem_t *prob, const int *present,
                                   double *scores);

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

/* Rank and size (@a size_p may be NULL) of @a comm; MPI_COMM_NULL is one process on
 * its own (no MPI). */
void st_glm_comm_shape(MPI_Comm comm, int *rank_p, int *size_p);

/* In-place allreduce of @a count elements, in pieces an int can count; nothing on
 * MPI_COMM_NULL, nor once an MPI call of this thread's public call failed. */
void st_glm_allreduce(MPI_Comm comm, void *buf, int64_t count, MPI_Datatype type, MPI_Op op);

/* Collective over @a comm: 1 when @a ok is nonzero on every rank (on MPI_COMM_NULL,
 * @a ok itself); 0 once an MPI call failed. */
int st_glm_agree(MPI_Comm comm, int ok);

/* Collective over @a comm: the index of the first of the @a n (at most
 * ST_GLM_WORDS_MAX) words at @a mine that is not the same on every rank (each word's
 * maximum and its complement's, in one allreduce), or -1 where all are (so too on
 * MPI_COMM_NULL, and once an MPI call failed: the caller's status says it). */
#define ST_GLM_WORDS_MAX 32
int st_glm_words_differ(MPI_Comm comm, const uint64_t *mine, int n);

/* At the end of a public collective function (st_glm_mpi_enter, st_glm_data.h), with the
 * status it would return: STRATA_ERR_MPI, saying so in @a msg, where an MPI call failed
 * in it, else @a status. */
strata_status_t st_glm_mpi_leave(strata_status_t status, char *msg, size_t msg_len);


/* Are @a param's fields that steer a training (all but verbose, threads and gpu_mem) and
 * the call's own @a nargs arguments at @a args the same on every rank of @a comm (a NULL
 * param on every rank or none)? NULL when so (the same answer on every rank), else the
 * first that differs. Collective. */
const char *st_glm_param_alike(const strata_glm_param_t *param, const double *args, int nargs,
                               MPI_Comm comm);

/* st_glm_param_alike, as STRATA_ERR_INVALID_PARAM with "the parameters are not the same
 * on every rank: X differs" in @a msg where they differ. Collective. */
strata_status_t st_glm_params_agree(const strata_glm_param_t *param, const double *args,
                                    int nargs, MPI_Comm comm, char *msg, size_t msg_len);

/* Collective: STRATA_OK, or STRATA_ERR_INVALID_PARAM naming (in @a msg) the first
 * feature whose square, or a row's sum of squares with @a bias's, overflows double
 * precision on some rank (the solvers' curvatures would be infinite); a problem whose
 * rows are known fine at @a bias (rows_fine) is not looked at (st_glm_train.c). */
strata_status_t st_glm_rows_check(const strata_glm_problem_t *prob, double bias, MPI_Comm comm,
                                  char *msg, size_t msg_len);

/* How many searches of C (or of C and epsilon) this process made that kept their
 * folds' rows between their C's (st_glm_cv.c; tests). */
long st_glm_cv_kept_searches(void);

/* Does @a param weigh the classes (weight_pos or weight_neg other than 1)? Messages
 * about overflows then name the weights too. */
int st_glm_weighted(const strata_glm_param_t *param);

/* c_i, the weight of an example with label @a y: 1 for regression, else the class's. */
static inline double st_glm_example_weight(const st_glm_model_t *loss,
                                           const strata_glm_param_t *param, double y)
{
    return !loss->classification ? 1.0 : (y > 0) ? param->weight_pos : param->weight_neg;
}

/* The epsilon the model's operations take: the SVR models' param->epsilon, 0 for the
 * others (which ignore it). */
static inline double st_glm_model_eps(const st_glm_model_t *loss,
                                      const strata_glm_param_t *param)
{
    return (loss->kind == ST_GLM_SVR || loss->kind == ST_GLM_SQSVR) ? param->epsilon : 0.0;
}

/* A training run's rounds: where progress goes and what it has reached. */
typedef struct {
    MPI_Comm                  comm;
    int                       rank;
    const strata_glm_param_t *param;
    strata_glm_info_t         info;
    double                    t_start;
    /* > 0: P(0), for a run from a starting model (strata_glm_train_from), whose gap must
     * also be within tol of the decrease from w = 0 (st_glm_converged) */
    double                    p0;
} st_glm_round_ctx_t;

/* The end of a round: record @a obj in ctx->info, test the tolerance, and print the
 * progress line on rank 0 when verbose. */
void st_glm_round_end(st_glm_round_ctx_t *ctx, const st_glm_objectives_t *obj);

/* Has a run reached its tolerance? gap <= tol |P|; from a starting model (ctx->p0 > 0)
 * also gap <= tol (P(0) - D): where lambda is large, P is within tol of P(0) and
 * so is a start from another lambda's optimum, which is not this one's (one-vs-rest's
 * classes, each left at another scale, then disagree on the rows' classes). */
int st_glm_converged(const st_glm_round_ctx_t *ctx, const st_glm_objectives_t *obj);

/* P(0) = (1/n) sum_i c_i phi(0, y_i) over all ranks' rows (collective), @a c the
 * example weights, @a eps the SVR models' epsilon. */
double st_glm_primal_zero(const st_glm_model_t *loss, const st_glm_data_t *data,
                          const double *c, double eps, MPI_Comm comm);

/* Hierarchical CoCoA+: the inner rounds per outer round for a cluster-wide sum that
 * takes @a ratio times an inner round (st_glm_train.c explains the rule): 1 ..
 * ST_GLM_HIER_MAX (NaN and ratios <= 1 give 1). */
#define ST_GLM_HIER_MAX 64
int st_glm_hier_choose(double ratio);

/* ---- checkpoints (solver/st_glm_ckpt.c; the format: solver/README.md) ---- */

/* Which trainer wrote a checkpoint. */
enum {
    ST_GLM_CKPT_DUAL   = 1,   /* CoCoA+ over rows (st_glm_train.c) */
    ST_GLM_CKPT_PRIMAL = 2,   /* L1 models over features (st_glm_train_primal.c) */
    ST_GLM_CKPT_SERIAL = 3    /* the serial L1 solver on one rank */
};

#define ST_GLM_CKPT_ID1      18  /* header words that identify the run: a first block */
#define ST_GLM_CKPT_ID       22  /* ... and in all (the schedule's 4 words came later) */
#define ST_GLM_ID_SCHEDULE   18  /* identity words of the schedule: 0 flat, 1 hierarchical, */
#define ST_GLM_ID_NODES      19  /* the node count of a hierarchical run (0: flat), */
#define ST_GLM_ID_INNER      20  /* its inner_rounds parameter (0: auto), */
#define ST_GLM_ID_LAYOUT     21  /* and which ranks share a node (st_glm_ckpt_schedule) */
#define ST_GLM_CKPT_ENTRY    4   /* words per rank in the rank table */
#define ST_GLM_CKPT_MAX_SECS 6   /* the rank table and the trainer's arrays */
#define ST_GLM_CKPT_STATE    6   /* header words of the trainer's own between rounds */

/* One array of 8-byte elements in a checkpoint: @a count over all ranks; this rank
 * holds elements [blo, bhi) at @a buf and writes (and, loading, verifies) [lo, hi),
 * within [blo, bhi). A loaded array fills all of [blo, bhi). */
typedef struct {
    const char *name;
    void       *buf;
    int64_t     count, blo, bhi, lo, hi;
    int         upto;   /* the last format version that has it (0: every version) */
    int         since;  /* the first format version that has it */
} st_glm_ckpt_sec_t;

/* A run's checkpoint: path NULL when the run keeps none. */
typedef struct {
    const char       *path;
    st_glm_comm_t     c;
    int               every, verbose;
    int               max_rounds;                /* the run's: a later checkpoint is refused */
    uint64_t          id[ST_GLM_CKPT_ID];        /* the run's identity */
    uint64_t          entry[ST_GLM_CKPT_ENTRY];  /* my line of the rank table */
    st_glm_ckpt_sec_t all[ST_GLM_CKPT_MAX_SECS];  /* every array added, */
    st_glm_ckpt_sec_t sec[ST_GLM_CKPT_MAX_SECS];  /* those of the version in hand */
    int               nall, nsec;
    uint64_t          state[ST_GLM_CKPT_STATE];  /* the trainer's scalars, saved and
                                                    loaded as they are (0 in older files) */
    int               loaded;                    /* the format version loaded (0: none) */
} st_glm_ckpt_t;

/* Set up @a ck for a run of @a trainer (collective): nothing unless the parameters ask
 * for checkpoints; else the identity of the data (its checksum: a pass over the rows),
 * the partition and the parameters, and, when not resuming, a check that the file is
 * absent or a checkpoint (never overwrite anything else). The trainer then sets its
 * line of the rank table (st_glm_ckpt_entry) and adds its arrays (st_glm_ckpt_add).
 * @return STRATA_OK or an error with @a msg, the same on every rank. */
strata_status_t st_glm_ckpt_init(st_glm_ckpt_t *ck, int trainer, const st_glm_model_t *loss,
                                 const strata_glm_problem_t *prob,
                                 const strata_glm_param_t *param, MPI_Comm comm, char *msg,
                                 size_t msg_len);
void st_glm_ckpt_entry(st_glm_ckpt_t *ck, int64_t row0, int64_t rows, int64_t workers,
                       int64_t col0);
void st_glm_ckpt_add(st_glm_ckpt_t *ck, const char *name, void *buf, int64_t count,
                     int64_t blo, int64_t bhi, int64_t lo, int64_t hi);

/* The array added last was in the checkpoints of format versions up to @a version
 * only: a checkpoint of such a version is read with it (into its buffer), newer ones
 * are written without it. */
void st_glm_ckpt_retired(st_glm_ckpt_t *ck, int version);

/* The array added last is in the checkpoints of format versions from @a version on
 * only: an older checkpoint is read without it (the buffer is left as it was;
 * ck->loaded says which version was read), and the next save writes it. */
void st_glm_ckpt_since(st_glm_ckpt_t *ck, int version);

/* A hierarchical run (st_glm_train.c) on @a nodes nodes: its identity words, set after
 * st_glm_ckpt_init (flat runs leave them 0, as checkpoints from before had them);
 * @a layout, not 0, tells which ranks share a node (the same on every rank; 0 in
 * checkpoints from before it, which are resumed without that check). */
void st_glm_ckpt_schedule(st_glm_ckpt_t *ck, int nodes, int inner_rounds, uint64_t layout);

/* After round info->rounds: write the arrays and @a info (@a certified: its objectives
 * are this round's) atomically (collective). @return as st_glm_ckpt_init. */
strata_status_t st_glm_ckpt_save(st_glm_ckpt_t *ck, const strata_glm_info_t *info,
                                 int certified, char *msg, size_t msg_len);

/* Read the checkpoint into the arrays and @a info_p (collective; info_p->nodes and
 * inner_rounds too: the inner rounds a hierarchical run chose), after verifying its
 * header, identity, size and checksums. @return STRATA_OK; STRATA_ERR_NOT_FOUND (no
 * file), STRATA_ERR_INVALID_PARAM (another run's), STRATA_ERR_IO (unreadable,
 * truncated, corrupted), STRATA_ERR_UNSUPPORTED (another version): the same on every
 * rank, with @a msg. */
strata_status_t st_glm_ckpt_load(st_glm_ckpt_t *ck, strata_glm_info_t *info_p,
                                 int *certified_p, char *msg, size_t msg_len);

/* Is a checkpoint due after round @a rounds? */
static inline int st_glm_ckpt_due(const st_glm_ckpt_t *ck, int rounds)
{
    return ck->path != NULL && ck->every > 0 && rounds % ck->every == 0;
}

/* After a load: 1 when the run stops at the loaded round under @a param (max_rounds
 * reached, or certified within tol), as the uninterrupted run would have; sets
 * info->converged. */
int st_glm_ckpt_stopped(const strata_glm_param_t *param, strata_glm_info_t *info,
                        int certified);

/* 1 when @a order (n entries) is a permutation of [lo, lo + n): a loaded row or
 * feature order, before it is used as an index. */
int st_glm_ckpt_order_ok(const int64_t *order, int64_t n, int64_t lo);


/* The L1 (primal) models across ranks over a feature partition: block proximal Newton
 * (param->method other than CD) or ProxCoCoA+ (CD) (solver/st_glm_train_primal.c).
 * Fills model->w and model->info. */
strata_status_t st_glm_train_primal(const st_glm_model_t *loss, const strata_glm_problem_t *prob,
                                    const strata_glm_param_t *param, MPI_Comm comm, char *msg,
                                    size_t msg_len, strata_glm_model_t *model);

/* ---- the primal methods of the smooth L2 models (lbfgs, newton) ---- */

#define ST_GLM_LBFGS_PAIRS 10   /* L-BFGS's curvature pairs kept */

/* L-BFGS on the primal of a smooth L2 model, rows partitioned over the ranks
 * (solver/st_glm_lbfgs.c). Fills model->w and model->info. */
strata_status_t st_glm_train_lbfgs(const st_glm_model_t *loss, const strata_glm_problem_t *prob,
                                   const strata_glm_param_t *param, MPI_Comm comm, char *msg,
                                   size_t msg_len, strata_glm_model_t *model);

/* A truncated Newton method (preconditioned conjugate gradients, line search) on the
 * primal of a smooth L2 model, rows partitioned over the ranks (solver/st_glm_newton.c).
 * Fills model->w and model->info. */
strata_status_t st_glm_train_newton(const st_glm_model_t *loss, const strata_glm_problem_t *prob,
                                    const strata_glm_param_t *param, MPI_Comm comm, char *msg,
                                    size_t msg_len, strata_glm_model_t *model);

/* Run @a fn on the @a n parts at @a parts (@a size bytes each): parts 1.. on threads
 * of their own, part 0 on the caller, which then joins them; a part whose thread
 * cannot start runs on the caller too (solver/st_glm_lbfgs.c). */
void st_glm_run_parts(void *(*fn)(void *), void *parts, size_t size, int n);

/* Sum the @a nparts threads' first @a count outputs, at sum + stride (k + 1) for part
 * k, into @a sum, then over the ranks of ctx->comm (timed into ctx->info). From
 * ST_GLM_SUM_SLICE_PARTS parts, up to @a nparts threads sum slices of at least
 * ST_GLM_SUM_SLICE_MIN columns each (the same bits as one thread). */
#define ST_GLM_SUM_SLICE_MIN   32768
#define ST_GLM_SUM_SLICE_PARTS 4
void st_glm_sum_parts(st_glm_round_ctx_t *ctx, double *sum, int64_t count, int nparts,
                      int64_t stride);
/* Sum @a count entries at @a sum over the ranks of ctx->comm (timed into ctx->info). */
void st_glm_sum_ranks(st_glm_round_ctx_t *ctx, double *sum, int64_t count);

/*
 * A sweep over the entries [0, @a len) of d-vectors in chunks of ST_GLM_CG_CHUNK, on up
 * to @a threads threads (a block of at least ST_GLM_SWEEP_MIN_CHUNKS chunks each):
 * @a fn(@a arg, lo, hi, part) does entries [lo, hi) and writes the chunk's @a nsums
 * sums (at most ST_GLM_SWEEP_SUMS_MAX) to part; the chunks' sums are added into
 * @a sums in chunk order (NULL: left in @a part, @a nsums per chunk; @a part NULL: a
 * buffer of its own). The same bits whatever the threads.
 */
#define ST_GLM_SWEEP_THREADS_MAX 256
#define ST_GLM_SWEEP_MIN_CHUNKS  8
#define ST_GLM_SWEEP_SUMS_MAX    4
typedef void (*st_glm_sweep_fn_t)(void *arg, int64_t lo, int64_t hi, double *part);
void st_glm_sweep(int threads, int64_t len, int nsums, st_glm_sweep_fn_t fn, void *arg,
                  double *part, double *sums);

/* Method newton's CG sweep @a cg->op over all the chunks of @a cg's vectors on up to
 * @a threads threads (st_glm_sweep), its dot products summed into @a dots (NULL:
 * none): the same bits whatever the threads, and as the GPU's st_glm_cg
 * (cuda/st_glm_kernels.h). */
void st_glm_cg_sweep(const st_glm_cg_args_t *cg, int threads, double *dots);

static inline double st_glm_vdot(const double *a, const double *b, int64_t n)
{
    double s = 0;
    int64_t j;

    for (j = 0; j < n; j++) {
        s += a[j] * b[j];
    }
    return s;
}

/* Row @a i of @a data dotted with @a v, whose entry j is at v[stride j] (d features,
 * then the bias weight at v[stride d] when @a bias > 0). */
static inline double st_glm_row_dot(const st_glm_data_t *data, int64_t i, const double *v,
                                    int64_t stride, int64_t d, double bias)
{
    const uint32_t *idx = data->indices;
    int64_t k, end = data->indptr[i + 1];
    double z = (bias > 0) ? bias * v[stride * d] : 0;

    if (data->prec == 32) {
        for (k = data->indptr[i]; k < end; k++) {
            z += (double)data->val32[k] * v[stride * (int64_t)idx[k]];
        }
    } else {
        for (k = data->indptr[i]; k < end; k++) {
            z += data->val64[k] * v[stride * (int64_t)idx[k]];
        }
    }
    return z;
}

/* g += a x_i (row @a i of @a data; g's entries and the bias as st_glm_row_dot). */
static inline void st_glm_row_axpy(const st_glm_data_t *data, int64_t i, double a, double *g,
                                   int64_t stride, int64_t d, double bias)
{
    const uint32_t *idx = data->indices;
    int64_t k, end = data->indptr[i + 1];

    if (data->prec == 32) {
        for (k = data->indptr[i]; k < end; k++) {
            g[stride * (int64_t)idx[k]] += a * (double)data->val32[k];
        }
    } else {
        for (k = data->indptr[i]; k < end; k++) {
            g[stride * (int64_t)idx[k]] += a * data->val64[k];
        }
    }
    if (bias > 0) {
        g[stride * d] += a * bias;
    }
}

/* After a pass summed over threads and ranks: @a sum holds sum_i c_i phi'(z_i) x_i (the
 * d_all entries), then sum_i c_i phi(z_i) and sum_i -phi_i*(-alpha_i) at alpha_i =
 * -c_i phi'(z_i), z = X w. Sets the gradient @a g, P(w) in *f_p and the certificate
 * in @a obj (st_glm_lbfgs.c explains the dual point). */
void st_glm_primal_finish(const double *sum, const double *w, int64_t d_all, double n,
                          double lambda, int threads, double *g, double *f_p,
                          st_glm_objectives_t *obj);

#endif /* ST_GLM_H */
