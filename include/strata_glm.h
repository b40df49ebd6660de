/**
 * @file strata_glm.h
 * @brief libstrata_glm: generalized linear models trained across MPI ranks.
 *
 * In the spirit of LIBLINEAR's linear.h: a problem (this rank's rows of the
 * training set), parameters, train(), predict(), a parameter check that returns a
 * message, a print hook. Training is stochastic dual coordinate ascent on each
 * rank (threads share out the rank's rows) and CoCoA+ across ranks: each round
 * every rank improves its examples' dual variables against its view of the shared
 * vector, then the ranks add their updates with one MPI_Allreduce (Strata's, when
 * the job runs under strata-run). The duality gap certifies the result.
 *
 * Objective, for n examples (x_i, y_i) over all ranks and lambda > 0:
 *     P(w) = (1/n) sum_i c_i loss(x_i . w, y_i) + (lambda/2) ||w||^2
 * LIBLINEAR's and scikit-learn's "C sum_i loss + ||w||^2 / 2" is the same problem
 * with lambda = 1 / (C n) (ridge: lambda = 1 / (2 C n) against LIBLINEAR -s 11,
 * whose loss has no 1/2). solver/MODELS.md gives every model's math.
 *
 * Collective functions must be called by every rank of the communicator, in the
 * same order. MPI_COMM_NULL as the communicator means this process alone: no
 * MPI call is made, so a program may use the library without MPI_Init. Another
 * communicator before MPI_Init or after MPI_Finalize: STRATA_ERR_NOT_INITIALIZED from
 * every collective function; an intercommunicator: STRATA_ERR_UNSUPPORTED (on every
 * rank, before any communication); a handle MPI refuses (a zeroed MPI_Comm) is MPI's error,
 * raised on MPI_COMM_WORLD (fatal by default), then STRATA_ERR_MPI where the handler
 * returns. An MPI call failing on the communicator (its error handler
 * MPI_ERRORS_RETURN): the function makes no further MPI call and returns
 * STRATA_ERR_MPI, with nothing set and no checkpoint written, on every rank that saw
 * the failure. The training parameters must be the same on every rank (all but
 * verbose, threads and gpu_mem), else STRATA_ERR_INVALID_PARAM on every rank. Ownership:
 * objects returned through *_p arguments belong to the caller and are released with
 * the matching _free function. Messages go to the caller's buffer, msg_len bytes at
 * msg, the NUL included (msg NULL or msg_len 0: no message), which the library writes
 * and never reads; it prints nothing except through the print hook, but in one case:
 * a GPU failing in the middle of a training across ranks (whose other ranks wait for
 * its sums) ends the job with MPI_Abort and a line on stderr. A training alone
 * (MPI_COMM_NULL, or one rank) returns STRATA_ERR_NO_RESOURCE instead, whichever
 * method ran on the GPU (the CUDA call that failed named on stderr).
 *
 * Threads: the functions may be called from several threads at once, on different
 * problems and models; collective ones on different communicators proceed side by
 * side (MPI initialized with MPI_THREAD_MULTIPLE), as long as each communicator's
 * calls come in the same order on every rank.
 */
#ifndef STRATA_GLM_H
#define STRATA_GLM_H

#include "strata.h"

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** This rank's rows of a training or test set (opaque). */
typedef struct strata_glm_problem strata_glm_problem_t;

/** A trained model: the same on every rank (opaque). */
typedef struct strata_glm_model strata_glm_model_t;

/** How the threads of a rank work together (strata_glm_param_t.thread_mode). */
enum {
    /** Each thread is a CoCoA+ worker with its own copy of the model, merged once per
        round (as SySCD does): the result does not depend on thread timing, but every
        thread counts in CoCoA+'s sigma', so a round makes less progress. */
    STRATA_GLM_THREADS_REPLICAS = 0,
    /** The threads update one model vector with atomic adds (PASSCoDe-Atomic): a round
        makes nearly a single thread's progress at the threads' speed; the result
        depends on thread timing (to the tolerance). */
    STRATA_GLM_THREADS_SHARED = 1
};

/** How an L2 model's vector is laid out while it trains by _CD or _NEWTON
    (strata_glm_param_t feature_order). The steps, hence the model, are the same in every layout; only
    their speed differs. */
enum {
    /** STRATA_GLM_ORDER_FREQUENCY from 2^17 columns (a vector of 1 MB), else given. */
    STRATA_GLM_ORDER_AUTO = 0,
    /** The columns relabelled by the number of rows holding them, the most frequent
        first, so the hot entries share cache lines (the rows' entries keep their
        order; costs a copy of the column indices, 4 bytes per stored entry, and a
        pass over them). The model and checkpoints keep the given order. */
    STRATA_GLM_ORDER_FREQUENCY = 1,
    /** The columns as given. */
    STRATA_GLM_ORDER_GIVEN = 2
};

/** The optimization method (strata_glm_param_t.method). */
enum {
    /** Coordinate descent: SDCA with CoCoA+ across ranks for the L2 models, primal
        coordinate descent (ProxCoCoA+ across ranks) for the L1 models (on one rank
        their serial solver, whatever the method). */
    STRATA_GLM_METHOD_CD = 0,
    /** L-BFGS on the primal, for the smooth L2 models (logistic, sqsvm, ridge, sqsvr): a pass
        over the rows and an allreduce of a d-vector per evaluation. Much faster than
        SDCA where n >> d and the features are dense (well-conditioned primal), much
        slower on sparse hashed data with many rare columns. No checkpoints,
        hierarchical schedule or GPU; gap_every, local_epochs, thread_mode and
        feature_order do not apply (the gap comes with every iteration). */
    STRATA_GLM_METHOD_LBFGS = 1,
    /** Chosen when training starts, the same on every rank. For a smooth L2 model
        without checkpoints, hierarchical schedule or GPU: _LBFGS on data with at
        least as many rows as columns and at least 5 % of the entries stored (the bias
        counted as a column), where it was far faster than SDCA (short of tol after
        100 iterations, with rounds left, Newton goes on from its point: L-BFGS crawls
        on nearly separable classes at a small lambda); else _NEWTON where
        the dual's condition number L mean(c_i ||x_i||^2) / (lambda n) is at least 10
        (L: the loss's curvature bound), where SDCA needs many epochs (bench/RESULTS.md).
        _CD otherwise. The L1 models: _NEWTON. strata_glm_info_t.method says which
        ran. */
    STRATA_GLM_METHOD_AUTO = 2,
    /** A truncated Newton method on the primal, for the smooth L2 models (logistic,
        sqsvm, ridge, sqsvr): each step solves the Newton system by conjugate gradients
        preconditioned with the Hessian's diagonal (a pass over the rows and an
        allreduce of a d-vector per CG step), then a line search; LIBLINEAR's -s 0
        method, on every thread and rank. Fast where SDCA is slow: small lambda n.
        No checkpoints or hierarchical schedule; with gpu, its conjugate gradients
        (Hessian-vector passes, vector sweeps) run on the GPU (strata_glm_param_t.gpu;
        gpu_rows refused). gap_every (but for lasso and elastic net on one rank,
        whose serial solver runs whatever the method), local_epochs and thread_mode
        do not apply. For the L1 models across ranks
        (lasso, l1-logistic, elastic net, l1-sqsvm): block proximal Newton, the loss's
        quadratic model minimized by block Jacobi over the ranks' features (an
        allreduce of the n margins' update per solve, up to 16 solves a round), then
        an Armijo search along the direction (solver/MODELS.md 4.5); checkpoints
        apply, local_epochs does not. */
    STRATA_GLM_METHOD_NEWTON = 3
};

/** strata_glm_param_t.gap_every: compute the duality gap when it may have reached
    tol, judged from how fast it fell so far (the L2 models with method _CD; lasso
    and elastic net on one rank). */
#define STRATA_GLM_GAP_AUTO (-1)

/** Training parameters; strata_glm_param_default() fills in the defaults. */
typedef struct {
    const char *solver;      /**< "logistic" (default), "svm", "sqsvm", "ridge", "svr",
                                  "sqsvr" (dual, examples partitioned over ranks);
                                  "lasso", "l1-logistic", "elastic-net", "l1-sqsvm"
                                  (primal, features partitioned over ranks) */
    double   lambda;         /**< regularization, > 0 (default 1e-4) */
    double   eta;            /**< elastic net's L1 share in [0, 1] (default 0.5) */
    double   tol;            /**< stop when gap <= tol * |P(w)| (default 1e-3) */
    int      max_rounds;     /**< CoCoA rounds at most (default 200) */
    int      gap_every;      /**< L2 models with method _CD, and lasso and elastic
                                  net on one rank: compute the duality gap (a pass over
                                  the rows) and test tol every this many rounds, and
                                  after the last (default 1; 0 is taken for 1).
                                  STRATA_GLM_GAP_AUTO: after rounds 1 and 2, then
                                  after half the rounds the gap's fall so far says
                                  it still needs to reach tol (at most 16): a few
                                  passes instead of one per round, the progress line
                                  only then */
    int      local_epochs;   /**< passes over the rank's rows per round (default 1) */
    int      threads;        /**< threads per rank (default 1) */
    int      thread_mode;    /**< how a rank's threads combine their work:
                                  STRATA_GLM_THREADS_REPLICAS (default) or
                                  STRATA_GLM_THREADS_SHARED */
    double   bias;           /**< > 0: append a constant feature of this value (an
                                  intercept, regularized like the other weights, as
                                  LIBLINEAR's -B); <= 0 (default -1): none */
    double   weight_pos;     /**< weight c_i of the examples labelled +1 (default 1) */
    double   weight_neg;     /**< weight of the examples labelled -1 (default 1) */
    uint64_t seed;           /**< of the coordinate order (default 1) */
    int      verbose;        /**< 1: a progress line per round on rank 0 (default 0) */
    const char *checkpoint;  /**< checkpoint file (default NULL: none): the training's
                                  whole state (model, dual variables or margins, orders,
                                  random states, round, times) with the identity of the
                                  data, the partition and the parameters, written
                                  atomically (a temporary file next to it, fsync,
                                  rename) and checksummed. The same path on every rank,
                                  on a file system every rank sees. An existing file
                                  that is not a checkpoint is never overwritten
                                  (STRATA_ERR_INVALID_PARAM); a checkpoint is replaced.
                                  Format: solver/README.md */
    int      checkpoint_every; /**< write the checkpoint after every this many rounds
                                  (epochs of the one-rank L1 solver); default 0: never.
                                  A failed write ends the training with STRATA_ERR_IO */
    int      resume;         /**< 1: continue from the checkpoint (default 0): the run
                                  then takes the same steps as the run that wrote it
                                  would have, so with the same max_rounds and tol it
                                  ends with the same model, bit for bit (replicas
                                  thread mode). The data, rank count, threads, thread
                                  mode and the parameters that steer the steps (solver,
                                  lambda, eta, bias, class weights, local_epochs, seed)
                                  must be those of the checkpoint, else
                                  STRATA_ERR_INVALID_PARAM naming what differs; tol,
                                  max_rounds, gap_every may change (max_rounds below
                                  the checkpoint's round: STRATA_ERR_INVALID_PARAM;
                                  equal: that round's model). No checkpoint:
                                  STRATA_ERR_NOT_FOUND; a damaged one: STRATA_ERR_IO
                                  naming the file (the same on every rank) */
    int      hierarchical;   /**< L2 models, method _CD, 1: hierarchical CoCoA+ (default
                                  0: flat).
                                  Each round (an outer round) is inner_rounds rounds in
                                  which the ranks of each node add their updates over
                                  the node only, then one sum over all ranks. The node
                                  is Strata's (strata_comm_level, so virtual nodes
                                  count) when libstrata is loaded, else the ranks that
                                  share memory. On one node: flat CoCoA+. Rounds,
                                  max_rounds and gap_every count outer rounds */
    int      inner_rounds;   /**< hierarchical: inner rounds per outer round, >= 1; 0
                                  (default): chosen after each of the first two outer
                                  rounds from their measured costs: with r = cluster
                                  allreduce / (local round + node allreduce),
                                  min(ceil(2 sqrt(r)), ceil(r)), at most 64 (README) */
    int      gpu;            /**< L2 models, method _CD or _NEWTON, 1: each rank's local
                                  solver runs on a GPU
                                  (TPA-SCD; the rank's rank on its host picks one of
                                  the host's GPUs, modulo their count), its rows in GPU
                                  memory with float values; threads > 1 share the
                                  round's host work (the merge, the duality gap's pass
                                  over the rows, gathering streamed rows; thread_mode
                                  does not apply). With method
                                  STRATA_GLM_METHOD_NEWTON: the Newton method's
                                  conjugate gradients run on the GPU instead (the
                                  rows must fit there). Needs a
                                  build with the CUDA toolkit and a CUDA driver at run
                                  time, else STRATA_ERR_UNSUPPORTED saying why */
    int64_t  gpu_mem;        /**< gpu: GPU memory a rank may use, in bytes (default 0: the
                                  GPU's free memory less 256 MB, divided among the
                                  host's ranks on that GPU). When its rows' entries
                                  do not fit with its per-row arrays and the model, they
                                  stream: each epoch's order of all the rows in
                                  chunks the host gathers into pinned buffers, the
                                  next chunk's gathering and copy overlapping the
                                  current one's kernel. Method _NEWTON does not
                                  stream: its rows, with its own arrays (8 bytes a row
                                  and a column), must fit, else
                                  STRATA_ERR_UNSUPPORTED saying so */
    int      feature_order;  /**< L2 models, method _CD or _NEWTON (_LBFGS and the L1
                                  models leave it unused): the model vector's layout
                                  while training, STRATA_GLM_ORDER_AUTO (default),
                                  _FREQUENCY or _GIVEN */
    int      method;         /**< STRATA_GLM_METHOD_AUTO (default), _CD (0), _LBFGS or
                                  _NEWTON; rounds and max_rounds count L-BFGS or Newton
                                  iterations */
    int      gpu_rows;       /**< gpu: rows the GPU steps on at once (warps or thread
                                  blocks), 1 to 65535; 0 (default): as many warps as
                                  the GPU runs at once where that grows the rows' mean
                                  curvature by at most half, else STRATA_GLM_GPU_ROWS
                                  (README, "GPU local solver"). The
                                  steps of rows in flight together are safe as a
                                  mini-batch of that size: each row's curvature counts
                                  its features by how many rows share them (README).
                                  Coordinate descent only: refused with method
                                  _NEWTON */
    double   epsilon;        /**< svr, sqsvr: the loss's insensitive zone, finite and
                                  >= 0: errors |x.w - y| up to it cost nothing
                                  (default 0.1, LIBLINEAR's -p); other models ignore
                                  it */
} strata_glm_param_t;

/** Rows the GPU local solver steps on at once by default where the rows share dense
 * features (strata_glm_param_t.gpu_rows). */
#define STRATA_GLM_GPU_ROWS 1024

/** Progress of a training run, as the last round left it. */
typedef struct {
    int    rounds;       /**< rounds run */
    int    converged;    /**< 1 when the gap reached tol */
    double primal;       /**< P(w) */
    double dual;         /**< D(alpha) */
    double gap;          /**< P - D >= 0: bounds P(w) - min P */
    double seconds;      /**< wall time of the training, on rank 0 */
    double comm_seconds; /**< of which in MPI_Allreduce */
    int    nodes;        /**< hierarchical: nodes the ranks are on (0: flat CoCoA+) */
    int    inner_rounds; /**< hierarchical: inner rounds per outer round in use */
    int    method;       /**< the method that ran: STRATA_GLM_METHOD_CD, _LBFGS or
                              _NEWTON (CD for a model read from a file) */
} strata_glm_info_t;

/** Test metrics over all ranks' rows; a metric that does not apply is NaN. */
typedef struct {
    int64_t n;           /**< examples */
    double  accuracy;    /**< classification: share of rows whose predicted class is
                              their label (a class the model has not: wrong) */
    double  logloss;     /**< logistic models: mean -log P(label) */
    double  auc;         /**< classification: area under the ROC curve (ties count 1/2);
                              NaN for more than two classes, as the log loss */
    double  rmse;        /**< regression: root mean squared error */
} strata_glm_metrics_t;

/** Fill @a param with the defaults listed in strata_glm_param_t (no checkpoints). */
void strata_glm_param_default(strata_glm_param_t *param);

/** @return NULL when @a param is valid, else a message naming the bad field (a
 *  static string, or one valid until the next call from the same thread). */
const char *strata_glm_check_param(const strata_glm_param_t *param);

/**
 * Read a data set, each rank its own share of the rows. svmlight/libsvm text
 * (class labels for classification: integers below 2^31 in magnitude, any number of
 * classes, as LIBLINEAR's; real targets with @a regression = 1; 1-based increasing
 * indices; numbers with a decimal point whatever the program's locale) or Strata's
 * binary CSR (strata-gen --format bin), told apart by content. Collective over
 * @a comm. The classes are those of all ranks' rows (strata_glm_problem_labels):
 * +1/-1 and 1/0 are the two classes of a binary model; any other set trains one model
 * per class against the rest (two classes: one model, the first class positive), as
 * LIBLINEAR does.
 *
 * @param [out] msg      on failure, "FILE:LINE: what" (the same on every rank).
 * @param [out] prob_p   set on success.
 * @return STRATA_OK, or an error (the same on every rank).
 */
strata_status_t strata_glm_problem_read(const char *path, int regression, MPI_Comm comm,
                                        char *msg, size_t msg_len,
                                        strata_glm_problem_t **prob_p);

/**
 * strata_glm_problem_read() holding the feature values in @a prec bits: 32 (each
 * value rounded to the nearest float, as Snap ML holds its data: half the memory of
 * the values; a value beyond float's range is an error naming its line), 64 (double),
 * or 0: strata_glm_problem_read()'s choice, 64 for text and the file's own for binary
 * files. Labels, the model and every sum are double either way.
 */
strata_status_t strata_glm_problem_read_prec(const char *path, int regression, int prec,
                                             MPI_Comm comm, char *msg, size_t msg_len,
                                             strata_glm_problem_t **prob_p);

/**
 * Build a problem from this rank's rows in CSR form (copied): @a n_rows rows,
 * row r's entries at [indptr[r], indptr[r+1]) with 0-based, strictly increasing
 * @a indices, @a y the labels (classification: class labels, integers below 2^31 in
 * magnitude, as strata_glm_problem_read takes them). Collective over
 * @a comm (the ranks agree on the column count: the largest of theirs).
 */
strata_status_t strata_glm_problem_create(int64_t n_rows, int64_t n_cols,
                                          const int64_t *indptr, const uint32_t *indices,
                                          const double *values, const double *y,
                                          int regression, MPI_Comm comm, char *msg,
                                          size_t msg_len, strata_glm_problem_t **prob_p);

/** Rows on this rank, rows over all ranks, and columns of @a prob. */
int64_t strata_glm_problem_rows(const strata_glm_problem_t *prob);
int64_t strata_glm_problem_rows_global(const strata_glm_problem_t *prob);
int64_t strata_glm_problem_cols(const strata_glm_problem_t *prob);
/** The bits, 32 or 64, in which @a prob holds its feature values. */
int strata_glm_problem_prec(const strata_glm_problem_t *prob);

/**
 * The examples of each class over all ranks (collective over @a comm): counts_p[0]
 * of class 1, counts_p[1] of the other (-1, or 0 where the data named the classes 1
 * and 0: *zero_one_p, which may be NULL). A classifier trained where one count is 0
 * never sees the other class. STRATA_ERR_INVALID_PARAM for a regression problem,
 * STRATA_ERR_UNSUPPORTED for classes other than 1 and -1 (or 0), and for a set of one
 * class (LIBLINEAR's model of one class: strata_glm_train): see
 * strata_glm_problem_labels.
 */
strata_status_t strata_glm_problem_classes(const strata_glm_problem_t *prob, MPI_Comm comm,
                                           int64_t counts_p[2], int *zero_one_p);

/**
 * LIBLINEAR's class weights (train -wi): the rows of the class named labels[i] weigh
 * weights[i] (finite, > 0) in every training on @a prob (others keep theirs, at first
 * 1): one against the rest weighs a class's rows by its weight and the rest's by 1,
 * as LIBLINEAR; a binary model its two classes' rows by theirs, times
 * param->weight_pos and weight_neg. Labels the problem has not are left aside: *found_p
 * (may be NULL) counts those it has. Cross-validation's folds keep them. Call it alike
 * on every rank (not collective). STRATA_ERR_INVALID_PARAM for a regression problem or
 * a weight that is not positive and finite.
 */
strata_status_t strata_glm_problem_set_class_weights(strata_glm_problem_t *prob, int count,
                                                     const double *labels,
                                                     const double *weights, int *found_p,
                                                     char *msg, size_t msg_len);

/**
 * The classes of a classification problem's labels over all ranks (found when it was
 * read or made, the same on every rank), in LIBLINEAR's order: that of their first
 * rows, but 1 first in a set of 1 and -1 (as LIBLINEAR) or of 1 and 0 (Strata's binary
 * models score 1 positive; LIBLINEAR keeps 0 first where a 0 comes first). @return their number (0 for a
 * regression problem); @a labels, when not NULL, receives them (room for that many).
 */
int strata_glm_problem_labels(const strata_glm_problem_t *prob, double *labels);

void strata_glm_problem_free(strata_glm_problem_t *prob);

/**
 * Train on @a prob (collective over @a comm, the communicator the problem was
 * read on). Every rank gets the same model. More than two classes (or two named
 * otherwise than 1 and -1 or 0): one-vs-rest as LIBLINEAR, one binary training per
 * class in turn over the same ranks (with param->verbose a line names each class;
 * strata_glm_model_info then sums their rounds, objectives, gaps and times, and
 * converged says all did); with more than two classes, weight_pos and weight_neg (the
 * problem's class weights name any class: strata_glm_problem_set_class_weights) and
 * checkpoints are refused (STRATA_ERR_INVALID_PARAM); two named classes train one
 * model whose positive class, the one weight_pos weighs, is the first. A set of one class
 * (any name, 1, -1 and 0 too) trains LIBLINEAR's model of one class (nr_class 1: its
 * rows all positive, weighed by the class's weight, and weight_pos for 1, weight_neg for
 * -1 or 0), which predicts that class for every row. With param->checkpoint_every or
 * param->resume, the rows are checksummed first (one pass over them) to tie the
 * checkpoint to the data. STRATA_ERR_NO_MEMORY, before any work, where the host's
 * available memory (STRATA_GLM_MEM_AVAILABLE replaces its figure) cannot hold the
 * vectors of the model's size the method keeps on each of the host's ranks.
 *
 * @param [out] msg      on failure, why.
 * @param [out] model_p  set on success; strata_glm_model_info() tells how it went.
 */
strata_status_t strata_glm_train(const strata_glm_problem_t *prob,
                                 const strata_glm_param_t *param, MPI_Comm comm,
                                 char *msg, size_t msg_len, strata_glm_model_t **model_p);

/**
 * strata_glm_train starting from @a start's weights (a warm start: a model trained on
 * the same problem with another lambda, as along a regularization path or LIBLINEAR's
 * -C search), where the method takes a starting point: newton and lbfgs for the L2
 * models, and the L1 models on one rank (their serial solver); the other methods
 * (coordinate descent for the L2 models, the L1 models across ranks) start from 0 as
 * strata_glm_train does. strata_glm_model_info's rounds count from the start. @a start
 * (NULL: strata_glm_train) must be a model of the same kind, features, bias and
 * classes as this training makes, the same on every rank: else, or with checkpoints,
 * STRATA_ERR_INVALID_PARAM.
 */
strata_status_t strata_glm_train_from(const strata_glm_problem_t *prob,
                                      const strata_glm_param_t *param, MPI_Comm comm,
                                      char *msg, size_t msg_len,
                                      const strata_glm_model_t *start,
                                      strata_glm_model_t **model_p);

/** How the training of @a model went (zeros for a model read from a file). */
void strata_glm_model_info(const strata_glm_model_t *model, strata_glm_info_t *info_p);

/** The solver name ("logistic", ...), the feature count (without the bias) and the
 *  weights (owned by the model; n_features entries, then the bias weight when
 *  strata_glm_model_bias() > 0; a model of more than two classes holds that many
 *  per feature, LIBLINEAR's layout: feature j's weight for class c at
 *  [j x classes + c], the classes in strata_glm_model_classes' order). */
const char *strata_glm_model_solver(const strata_glm_model_t *model);
int64_t strata_glm_model_features(const strata_glm_model_t *model);
double strata_glm_model_bias(const strata_glm_model_t *model);
const double *strata_glm_model_weights(const strata_glm_model_t *model);

/** The classes of a classification model: 2 for a binary model of the classes 1 and
 *  -1 (or 1 and 0), 1 first (the class of positive scores; a file's "label -1 1"
 *  too, whose weights are negated on loading); for named classes their file's order
 *  (its "label" line), the first scored positive where there are two, one-vs-rest
 *  where there are more; 1 for LIBLINEAR's model of one class ("nr_class 1", from
 *  training data of a single label), which predicts it for every row; 0 for a
 *  regression model. @a labels, when not NULL,
 *  receives them (room for that many). */
int strata_glm_model_classes(const strata_glm_model_t *model, double *labels);

/** The score x . w (+ bias term) of one row given as @a nnz 0-based indices and
 *  values; features beyond the model's are ignored. For a model of one class or of
 *  more than two classes: the label predicted (strata_glm_predict_label). */
double strata_glm_predict_row(const strata_glm_model_t *model, int64_t nnz,
                              const uint32_t *indices, const double *values);

/** LIBLINEAR's predict_values: the label predicted for one row (classification: one of
 *  strata_glm_model_classes', by name, 0 for a model of 0/1 data; more than two
 *  classes: that of the largest score, the first of equals; regression: the value),
 *  and, when @a dec_values is not NULL, the scores (one; one per class for more than
 *  two). */
double strata_glm_predict_label(const strata_glm_model_t *model, int64_t nnz,
                                const uint32_t *indices, const double *values,
                                double *dec_values);

/** LIBLINEAR's predict_probability: the label predicted, and in @a probs (one per
 *  class, strata_glm_model_classes' order) P(class): for two classes the logistic
 *  link of the score and its complement; for more each class's link normalized to
 *  sum 1; for one class 1. Logistic models (others: NaN probabilities); NaN for
 *  regression. */
double strata_glm_predict_probability(const strata_glm_model_t *model, int64_t nnz,
                                      const uint32_t *indices, const double *values,
                                      double *probs);

/** P(y = +1) for the logistic models (two named classes: P(the first)), the score
 *  itself for the others; NaN for a model of one class or more than two, whose score is a
 *  label (their probabilities: strata_glm_predict_probability). */
double strata_glm_predict_prob(const strata_glm_model_t *model, double score);

/** The class of a classification model's @a score, one of strata_glm_model_classes'
 *  (as strata_glm_predict_label names it): +1 above 0, below it -1, or 0 for a model
 *  of 0/1 data; a score of exactly 0 is the second label of the model file's "label"
 *  line, as in LIBLINEAR (-1 for the models strata-train writes, "label 1 -1"; 0 for
 *  "label 1 0"). Models of named classes: the class's name (two classes: the first
 *  above 0, the second else; one or more than two: @a score, which is the label
 *  already). */
double strata_glm_predict_class(const strata_glm_model_t *model, double score);

/** Scores of this rank's rows of @a prob into @a scores (rows(prob) entries); for a
 *  model of one class or more than two, the labels predicted. Features beyond the
 *  model's are ignored, as in strata_glm_predict_row and LIBLINEAR's predict. */
strata_status_t strata_glm_predict(const strata_glm_model_t *model,
                                   const strata_glm_problem_t *prob, double *scores);

/** Metrics of @a model on @a prob over all ranks (collective over @a comm). A row of a
 *  class the model has not is wrong (0 for a model of the classes 1 and -1, -1 for
 *  one of 1 and 0: LIBLINEAR's predict counts them so) and leaves no AUC or log loss.
 *  Features beyond the model's are ignored, as in strata_glm_predict. @a model must be
 *  the same on every rank, else STRATA_ERR_INVALID_PARAM on every rank. */
strata_status_t strata_glm_evaluate(const strata_glm_model_t *model,
                                    const strata_glm_problem_t *prob, MPI_Comm comm,
                                    strata_glm_metrics_t *metrics_p);

/**
 * K-fold cross-validation, LIBLINEAR's train -v (collective over @a comm): the rows
 * over all ranks are dealt into @a folds folds by a permutation of their global
 * indices keyed by param->seed (the same folds whatever the rank count; sizes differ
 * by at most one); for each fold a model is trained with @a param on the other folds'
 * rows (strata_glm_train over the same ranks, each rank its own rows) and scores the
 * fold's rows. The metrics are those of all rows' out-of-fold scores, as
 * strata_glm_evaluate computes them. As LIBLINEAR's folds, a class that a fold's
 * training rows lack is never predicted for its rows (more than two classes: the
 * label of the largest score among the classes present; a fold trained on one of two
 * classes: its rows' scores take that class's sign).
 *
 * @param folds      2 to the number of rows
 * @param cost       > 0 and finite: each fold's lambda is 1/(cost x the fold's training
 *                   rows), LIBLINEAR's C for the rows it trains on (strata-train -c; a
 *                   C whose lambda is beyond double precision: STRATA_ERR_INVALID_PARAM
 *                   naming the C); 0: param->lambda for every fold
 * @param scores     NULL, or this rank's rows' out-of-fold scores (rows(prob) entries;
 *                   more than two classes: the labels predicted)
 * @param infos      NULL, or @a folds entries: how each fold's training went
 * @param [out] msg  on failure, why ("fold K of N: " and the trainer's message where a
 *                   fold's training failed)
 * @return STRATA_OK; STRATA_ERR_NOT_INITIALIZED (a communicator of MPI before MPI_Init
 *         or after MPI_Finalize); STRATA_ERR_INVALID_PARAM (a problem read or made on
 *         other ranks than @a comm's, as strata_glm_train refuses it; folds out of
 *         range, checkpoints asked for, a parameter strata_glm_check_param refuses);
 *         STRATA_ERR_UNSUPPORTED (more than 2^31 - 1 rows, which the metrics cannot
 *         gather); what a fold's training returned. The same on every rank.
 */
strata_status_t strata_glm_cross_validate(const strata_glm_problem_t *prob,
                                          const strata_glm_param_t *param, int folds,
                                          double cost, MPI_Comm comm, char *msg,
                                          size_t msg_len, double *scores,
                                          strata_glm_info_t *infos,
                                          strata_glm_metrics_t *metrics_p);

/**
 * LIBLINEAR's train -C (collective): strata_glm_cross_validate with @a folds folds at
 * every C = start_c, 2 start_c, 4 start_c, ... up to @a max_c (each fold's lambda 1/(C
 * x its training rows), each fold's model trained from its model at the last C, as
 * LIBLINEAR's warm starts (strata_glm_train_from); LIBLINEAR's early stop once they stop
 * moving is not here: every C is tried). The best C is the one of
 * the highest accuracy (classification) or the least mean squared error (regression),
 * the smallest of equals. With param->verbose rank 0 prints LIBLINEAR's line per C
 * ("log2c=  -3.00\trate=96.3", or "...\tMSE=...") through the print function.
 *
 * @param start_c  the first C; 0: from the data, LIBLINEAR's (the power of two at or
 *                 below 1/(n max ||x_i||^2), halved for the models other than logistic;
 *                 for svr and sqsvr LIBLINEAR's for -s 11, strata_glm_find_cost_epsilon)
 *                 or, for the L1 models, the power of two at or below the C whose model
 *                 is just w = 0; above max_c: max_c alone
 * @param max_c    the last C tried (LIBLINEAR: 1024)
 * @param unconverged_c_p  NULL, or the smallest C at which some fold's training stopped
 *                 at param->max_rounds before param->tol (0: none)
 * @return STRATA_OK with *best_c_p and its metrics in *best_p, and @a msg empty, or
 *         a note where the search ended before max_c: a C the data cannot train at in
 *         double precision (STRATA_ERR_INVALID_PARAM's reasons: its lambda, an objective
 *         or coordinate descent's curvature ||x_i||^2 / (lambda n) overflowing) after
 *         C's that trained, the best then of those; otherwise as
 *         strata_glm_cross_validate, the same on every rank.
 */
strata_status_t strata_glm_find_cost(const strata_glm_problem_t *prob,
                                     const strata_glm_param_t *param, int folds,
                                     double start_c, double max_c, MPI_Comm comm, char *msg,
                                     size_t msg_len, double *best_c_p,
                                     strata_glm_metrics_t *best_p, double *unconverged_c_p);

/**
 * LIBLINEAR's train -C for support vector regression (its -s 11; collective): for the
 * models svr and sqsvr, epsilon = k max_i |y_i| / 20 for k = 19 (or the k of
 * @a start_eps, if lower) down to 0, and at each the search of strata_glm_find_cost
 * with C from LIBLINEAR's start for these models (@a start_c 0: 0.01 sum_i max(0, |y_i|
 * - epsilon)^2 / (8 (sum_i |y_i|)^2 max_i ||x_i||^2), as a power of two; the last C
 * alone where epsilon is beyond every |y_i|) up to 2^20, ended as LIBLINEAR's too once
 * every fold's model stayed the same over 5 C's in a row (the first C counting as
 * one): here within 1e-6 of its norm (LIBLINEAR: 1e-15, its solvers taking no step
 * then), and a fold's model of zeros restarts the count. The best pair is that of the
 * least mean squared error: the smallest C of equals, the first epsilon;
 * *@a unconverged_c_p is of the best pair's epsilon. With param->verbose rank
 * 0 prints LIBLINEAR's line per pair ("log2c= -3.00\tp=   0.25\tMean squared
 * error=0.0102").
 *
 * @param start_eps  0: from 19/20 of the largest |y_i|
 * @return as strata_glm_find_cost, with the best epsilon in *@a best_eps_p;
 *         STRATA_ERR_INVALID_PARAM for another model.
 */
strata_status_t strata_glm_find_cost_epsilon(const strata_glm_problem_t *prob,
                                             const strata_glm_param_t *param, int folds,
                                             double start_c, double start_eps, MPI_Comm comm,
                                             char *msg, size_t msg_len, double *best_c_p,
                                             double *best_eps_p, strata_glm_metrics_t *best_p,
                                             double *unconverged_c_p);

/**
 * Save @a model as text in LIBLINEAR's model format (readable by LIBLINEAR's
 * predict for the models LIBLINEAR has: logistic, svm, sqsvm, ridge, l1-logistic,
 * l1-sqsvm, svr, sqsvr), atomically:
 * a temporary file in the same directory, then a rename. While a temporary is being
 * written (here, and for checkpoints), SIGHUP, SIGINT, SIGPIPE, SIGTERM, SIGXCPU and
 * SIGXFSZ, where their disposition is still the default when the library first
 * makes one, get a handler that removes the temporaries in progress and then ends
 * the process by the signal as before; a program's own handlers are left alone.
 */
strata_status_t strata_glm_model_save(const strata_glm_model_t *model, const char *path,
                                      char *msg, size_t msg_len);

/** Read a model written by strata_glm_model_save() (or by LIBLINEAR for the
 *  models above). */
strata_status_t strata_glm_model_load(const char *path, char *msg, size_t msg_len,
                                      strata_glm_model_t **model_p);

void strata_glm_model_free(strata_glm_model_t *model);

/** Route the library's progress output (verbose training) through @a fn; NULL
 *  restores the default (stdout). Process-wide; may be called from any thread, also
 *  while another thread trains: each line goes to the function set when it is printed
 *  (a line printed as the function is replaced may still reach the one before). */
void strata_glm_set_print_function(void (*fn)(const char *line));

#ifdef __cplusplus
}
#endif

#endif /* STRATA_GLM_H */
