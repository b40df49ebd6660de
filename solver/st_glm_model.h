/**
 * @file st_glm_model.h
 * @brief libstrata_glm, model layer: losses, conjugates, coordinate steps, objectives,
 *        duality gaps, and a serial reference solver.
 *
 * Every model minimizes, over w in R^d,
 *
 *     P(w) = (1/n) sum_i c_i phi(x_i.w, y_i) + lambda R_eta(w),
 *     R_eta(w) = eta ||w||_1 + (1 - eta)/2 ||w||^2,
 *
 * with n examples x_i, labels y_i (+1/-1 for classification, real for regression),
 * class weights c_i > 0 (1 when none are given) and lambda > 0. The L2 models
 * (logistic, svm, sqsvm, ridge) have eta = 0 and are solved in the dual by SDCA /
 * CoCoA+; the L1 models (lasso, l1-logistic, l1-sqsvm: eta = 1; elastic-net: eta given) in the
 * primal by coordinate descent. solver/MODELS.md derives every formula used here
 * and states the conventions; read it before building a solver on this header.
 *
 * Scaling against LIBLINEAR / scikit-learn ("C sum_i loss_i + 1/2 ||w||^2"):
 * lambda = 1 / (C n) for the same loss (see MODELS.md for ridge and lasso).
 *
 * All functions are pure (no global state, no allocation, no I/O) unless their
 * description says otherwise, and may be called from any thread. Everything is
 * double precision. Nothing here prints.
 */
#ifndef ST_GLM_MODEL_H
#define ST_GLM_MODEL_H

#include "st_common.h"

#include <stddef.h>
#include <stdint.h>

/** The models, as the solver and the CLI know them. */
typedef enum {
    ST_GLM_LOGISTIC = 0, /**< "logistic":    log(1 + exp(-y z)),     L2, dual */
    ST_GLM_HINGE,        /**< "svm":         max(0, 1 - y z),        L2, dual */
    ST_GLM_SQHINGE,      /**< "sqsvm":       max(0, 1 - y z)^2,      L2, dual */
    ST_GLM_RIDGE,        /**< "ridge":       (z - y)^2 / 2,          L2, dual */
    ST_GLM_LASSO,        /**< "lasso":       (z - y)^2 / 2,          L1, primal */
    ST_GLM_L1_LOGISTIC,  /**< "l1-logistic": log(1 + exp(-y z)),     L1, primal */
    ST_GLM_ELASTIC_NET,  /**< "elastic-net": (z - y)^2 / 2, eta*L1 + (1-eta)*L2/2, primal */
    ST_GLM_L1_SQHINGE,   /**< "l1-sqsvm":    max(0, 1 - y z)^2,      L1, primal */
    ST_GLM_SVR,          /**< "svr":         max(0, |z - y| - eps),  L2, dual */
    ST_GLM_SQSVR,        /**< "sqsvr":       max(0, |z - y| - eps)^2, L2, dual */
    ST_GLM_MODEL_COUNT
} st_glm_model_kind_t;

/** Which problem the solver works on. */
typedef enum {
    ST_GLM_FORM_DUAL = 0, /**< dual coordinate ascent over alpha (examples partitioned) */
    ST_GLM_FORM_PRIMAL    /**< primal coordinate descent over w (features partitioned) */
} st_glm_form_t;

/** In st_glm_model_t.eta: the L1 share comes from the user (elastic net). */
#define ST_GLM_ETA_PARAM (-1.0)

/** Armijo constant and step shrink factor of the primal line search (MODELS.md 4.3). */
#define ST_GLM_ARMIJO_SIGMA  0.01
#define ST_GLM_ARMIJO_SHRINK 0.5

/**
 * One model's operations. The loss functions take the unweighted loss phi(z, y);
 * the solver multiplies by c_i. Labels of classification models are exactly +1 or -1.
 * Every operation takes @a eps, the SVR models' insensitive zone (>= 0): the others
 * ignore it.
 */
typedef struct st_glm_model {
    st_glm_model_kind_t kind;
    const char         *name;           /**< CLI name: "logistic", "svm", ... */
    const char         *description;    /**< one line, for help texts */
    st_glm_form_t       form;
    int                 classification; /**< 1: labels +1/-1; 0: real labels */
    /** L1 share of the regularizer: 0 (L2 models), 1 (lasso, l1-logistic, l1-sqsvm) or
     *  ST_GLM_ETA_PARAM (elastic net); see st_glm_model_eta(). */
    double              eta;
    /** sup_z phi''(z, y): 1/4 logistic, 2 squared hinge, 1 squared; INFINITY for the
     *  hinge (its derivative jumps). */
    double              smoothness;
    /** 1 when phi is not quadratic, so the primal coordinate step needs the Armijo
     *  line search of MODELS.md 4.3 (l1-logistic, l1-sqsvm); 0 when the step is
     *  exact. */
    int                 line_search;

    /** phi(z, y) >= 0. Logistic: computed as max(-yz, 0) + log1p(exp(-|yz|)). */
    double (*loss)(double z, double y, double eps);
    /** d phi / dz. At the hinge's kink (yz = 1) the subgradient 0 is returned. */
    double (*dloss)(double z, double y, double eps);
    /** phi(z + dz, y) - phi(z, y), accurate when |dz| is small (the line search
     *  compares such differences with a predicted decrease of order dz^2). */
    double (*loss_diff)(double z, double dz, double y, double eps);
    /** d^2 phi / dz^2 where it exists; at a kink the larger one-sided value
     *  (squared hinge: 2 for yz <= 1), so it is a valid local curvature bound.
     *  The hinge returns 0 (its second derivative almost everywhere). */
    double (*d2loss)(double z, double y, double eps);
    /**
     * -phi_i*(-alpha) = inf_z (alpha z + c phi(z, y)): the dual loss term of example i,
     * with phi_i = c phi(., y). -INFINITY outside the domain (see dual_bounds).
     * With beta = alpha y: logistic c H(beta/c) (H the binary entropy in nats, 0 at the
     * ends); hinge beta; squared hinge beta - beta^2/(4c); squared alpha y - alpha^2/(2c);
     * svr alpha y - eps |alpha|; sqsvr alpha y - eps |alpha| - alpha^2/(4c).
     */
    double (*neg_conj)(double alpha, double y, double c, double eps);
    /** The closed domain of alpha: [*lo_p, *hi_p], possibly infinite ends. Logistic:
     *  alpha y in [0, c] (the dual step keeps it in the open interval). */
    void   (*dual_bounds)(double y, double c, double *lo_p, double *hi_p);
    /**
     * Dual coordinate step (SDCA; CoCoA+ local subproblem), MODELS.md 3: given the
     * current *alpha_p, z = x_i.w_eff and q = sigma' ||x_i||^2 / (lambda n) >= 0, set
     * *alpha_p to the maximizer over a of
     *     -phi_i*(-a) - (a - alpha) z - (q/2) (a - alpha)^2
     * and return delta = new alpha - old alpha, the amount by which the solver moves its
     * view of w: w_eff += sigma' delta x_i / (lambda n). Store *alpha_p as returned
     * (for logistic it is strictly inside the domain; alpha + delta may round onto a
     * bound). NULL for primal models. Never NaN for finite arguments.
     */
    double (*dual_step)(double y, double c, double z, double q, double eps, double *alpha_p);
    /** The prediction link: sigmoid(z) = P(y = +1) for the logistic models (stable for
     *  any finite z), z itself (the score; sign(z) is the class) for the others. */
    double (*link)(double z);
} st_glm_model_t;

/* ------------------------------------------------------------------------------------ */
/* The table                                                                           */
/* ------------------------------------------------------------------------------------ */

/** @return the model of @a kind, or NULL when @a kind is out of range. Static storage. */
const st_glm_model_t *st_glm_model_get(st_glm_model_kind_t kind);

/**
 * Look a model up by its CLI name (case-insensitive): logistic, svm, sqsvm, ridge,
 * lasso, l1-logistic, elastic-net, l1-sqsvm, svr, sqsvr.
 * @return the model, or NULL with a message naming the accepted names in @a err
 *         (when @a err is not NULL and @a errlen > 0).
 */
const st_glm_model_t *st_glm_model_lookup(const char *name, char *err, size_t errlen);

/** @return "logistic, svm, sqsvm, ridge, lasso, l1-logistic, elastic-net, l1-sqsvm, svr,
 *  sqsvr" (static). */
const char *st_glm_model_names(void);

/**
 * The effective L1 share eta of the regularizer: @a eta_param for the elastic net,
 * the model's own value (0 or 1) for the others.
 */
double st_glm_model_eta(const st_glm_model_t *model, double eta_param);

/**
 * Check lambda (finite, > 0), for the elastic net eta (in [0, 1]) and for the SVR
 * models eps (finite, >= 0).
 * @return NULL when valid, else a static message (LIBLINEAR's check_parameter).
 */
const char *st_glm_model_check(const st_glm_model_t *model, double lambda, double eta_param,
                               double eps);

/* The dual step of @a model as the GPU kernel numbers it (ST_GLM_STEP_* of
 * st_glm_steps.h), or -1 for a primal model. */
int st_glm_model_step(const st_glm_model_t *model);

/** @return 1 when @a y is a valid label for @a model (+1/-1, or any finite value). */
int st_glm_model_label_ok(const st_glm_model_t *model, double y);

/* ------------------------------------------------------------------------------------ */
/* Scalar helpers                                                                      */
/* ------------------------------------------------------------------------------------ */

/** sigmoid(z) = 1 / (1 + exp(-z)), in [0, 1], without overflow for any z. */
double st_glm_sigmoid(double z);

/** log(1 + exp(x)) without overflow or loss of precision for any x. */
double st_glm_log1pexp(double x);

/**
 * The logistic dual step in the beta = alpha y variable (MODELS.md 3.3): the maximizer
 * over b in (0, c) of c H(b/c) - (b - beta) m - (q/2) (b - beta)^2, m = y z, by Newton
 * from both ends of a bracket. @a beta in [0, c], q >= 0, c > 0. The result lies in
 * [DBL_MIN, c) (never on a bound). @a iters_p (may be NULL) gets the iterations used.
 */
double st_glm_logistic_dual_solve(double c, double m, double q, double beta, int *iters_p);

/* ------------------------------------------------------------------------------------ */
/* Primal coordinate step (L1 models)                                                  */
/* ------------------------------------------------------------------------------------ */

/** r_eta(w) = eta |w| + (1 - eta)/2 w^2: one coordinate of R_eta (without lambda). */
double st_glm_reg_coord(double w, double eta);

/**
 * Proximal Newton step for feature j (MODELS.md 4.2): set *w_p to
 *     argmin_v  g (v - w) + (h/2) (v - w)^2 + lambda r_eta(v)
 *            =  S(h w - g, lambda eta) / (h + lambda (1 - eta)),   S soft-thresholding,
 * and return delta = new w - old w (the solver then does z_i += delta x_ij).
 * @param g  d/dw_j of the loss part F(w) = (1/n) sum_i c_i phi(z_i, y_i):
 *           g = (1/n) sum_i c_i phi'(z_i, y_i) x_ij
 * @param h  its curvature (1/n) sum_i c_i phi''(z_i, y_i) x_ij^2 >= 0 (exact for the
 *           squared loss; for the logistic loss a Newton model: use the line search)
 * When h + lambda (1 - eta) is 0 (an empty column under pure L1) the minimum is at 0
 * if |g| <= lambda eta, and w is left unchanged otherwise. The result is exactly 0
 * whenever |h w - g| <= lambda eta.
 */
double st_glm_prox_step(double g, double h, double lambda, double eta, double *w_p);

/** |the minimum-norm subgradient| along one coordinate of g w + lambda r_eta(w), g the
 *  smooth part's derivative there: 0 exactly where that coordinate is optimal. */
double st_glm_prox_violation(double g, double w, double lambda, double eta);

/** sum_k val[k] a[idx[k]] (@a b NULL) or sum_k val[k] a[idx[k]] b[idx[k]] over k in
 *  [lo, hi), in four partial sums: a single sum's chain of dependent additions bounds
 *  a long column's or row's dot at an addition's latency a nonzero. */
static inline double st_glm_gather_dot(const uint32_t *idx, const double *val, int64_t lo,
                                       int64_t hi, const double *a, const double *b)
{
    double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
    int64_t k;

    if (b == NULL) {
        for (k = lo; k + 4 <= hi; k += 4) {
            s0 += val[k] * a[idx[k]];
            s1 += val[k + 1] * a[idx[k + 1]];
            s2 += val[k + 2] * a[idx[k + 2]];
            s3 += val[k + 3] * a[idx[k + 3]];
        }
        for (; k < hi; k++) {
            s0 += val[k] * a[idx[k]];
        }
    } else {
        for (k = lo; k + 4 <= hi; k += 4) {
            s0 += val[k] * a[idx[k]] * b[idx[k]];
            s1 += val[k + 1] * a[idx[k + 1]] * b[idx[k + 1]];
            s2 += val[k + 2] * a[idx[k + 2]] * b[idx[k + 2]];
            s3 += val[k + 3] * a[idx[k + 3]] * b[idx[k + 3]];
        }
        for (; k < hi; k++) {
            s0 += val[k] * a[idx[k]] * b[idx[k]];
        }
    }
    return (s0 + s1) + (s2 + s3);
}

/** newGLMNET: coordinate passes over its quadratic model at most, and their end: the
 *  model's minimum-norm subgradient at most this fraction of the objective's */
#define ST_GLM_PN_PASSES 100
#define ST_GLM_PN_INNER  0.1

/** Columns of a block of features: CSC with 32-bit row indices. */
typedef struct {
    int64_t         ncols;
    const int64_t  *cp;   /**< ncols + 1 column pointers */
    const uint32_t *ri;   /**< rows */
    const double   *cv;   /**< values */
} st_glm_csc_t;

/**
 * The proximal Newton direction on the features of @a X (newGLMNET's, Yuan, Ho and
 * Lin 2012; MODELS.md 4.3 and 4.5): approximately
 *     argmin_d  grad.d + (1/2) d^T (X^T D X + nu I) d + lambda R_eta(w + d),
 * D = diag(@a dd), by cyclic coordinate passes over the features that may move (w_j
 * != 0 or |grad_j| > lambda eta) until the model's minimum-norm subgradient is a
 * tenth of the objective's, a pass moves nothing, or after 100 passes.
 * @param dir  d (ncols; 0 off the features that moved)
 * @param hd   the model's diagonal (ncols, set on those that may move)
 * @param act  the features that may move (ncols)
 * @param xd   X d (rows; all 0 on entry)
 * @return how many features may move (act's length)
 */
int64_t st_glm_prox_newton_dir(const st_glm_csc_t *X, const double *dd, const double *grad,
                               const double *w, double lambda, double eta, double *dir,
                               double *hd, int64_t *act, double *xd);

/**
 * st_glm_prox_newton_dir in two steps, for a caller that goes on passing over the
 * model after others moved @a xd (block proximal Newton across ranks, MODELS.md 4.5).
 * The setup: d = 0, @a hd and @a act as above; *@a viol_p the objective's
 * minimum-norm subgradient's 1-norm on these features (the passes' yardstick).
 */
int64_t st_glm_prox_newton_setup(const st_glm_csc_t *X, const double *dd, const double *grad,
                                 const double *w, double lambda, double eta, double *dir,
                                 double *hd, int64_t *act, double *viol_p);

/**
 * Coordinate passes over the model from the given @a dir, @a xd being X d (whatever
 * else it holds: other blocks' X d), each step's change added to it, until the
 * model's violation is a tenth of @a viol, a pass moves nothing, or 100 passes.
 * *@a moved_p (may be NULL): whether any step moved.
 * @return the model's minimum-norm subgradient's 1-norm over the first pass (each
 *         feature's before its step): how far from the block's optimum @a dir was
 */
double st_glm_prox_newton_passes(const st_glm_csc_t *X, const double *dd, const double *grad,
                                 const double *w, double lambda, double eta, double *dir,
                                 const double *hd, const int64_t *act, int64_t nact,
                                 double *xd, double viol, int *moved_p);

/**
 * The predicted decrease of the Armijo rule (MODELS.md 4.3, Tseng & Yun 2009):
 *     Delta = g delta + lambda (r_eta(w + delta) - r_eta(w))  (< 0 for a non-zero step).
 * A step t in {1, 1/2, 1/4, ...} along delta is accepted when
 *     F(w + t delta e_j) - F(w) + lambda (r_eta(w_j + t delta) - r_eta(w_j))
 *         <= ST_GLM_ARMIJO_SIGMA t Delta.
 */
double st_glm_prox_decrease(double g, double lambda, double eta, double w, double delta);

/* ------------------------------------------------------------------------------------ */
/* Objectives and duality gaps                                                         */
/* ------------------------------------------------------------------------------------ */

/** Primal and dual objective values and the certificate gap = primal - dual >= 0. */
typedef struct {
    double primal; /**< P(w) */
    double dual;   /**< D(alpha); L1 models: the dual of the Lipschitzed problem */
    double gap;    /**< primal - dual: bounds P(w) - min P from above */
    double radius; /**< L1 models: the radius B of the L1 ball used; 0 for L2 models */
} st_glm_objectives_t;

/** @return sum_i c_i phi(z_i, y_i) over the n given examples (@a c NULL: all 1).
 *  A partial sum: ranks add theirs. @a eps: the SVR models' (the others ignore it), as
 *  in every sum below. */
double st_glm_loss_sum(const st_glm_model_t *model, int64_t n, const double *z,
                       const double *y, const double *c, double eps);

/** @return sum_i c_i (phi(z_i + t dz_i, y_i) - phi(z_i, y_i)) over the n given examples
 *  (@a c NULL: all 1), each term by the model's loss_diff: a line search's trial step
 *  t along the margins' change dz. */
double st_glm_loss_diff_sum(const st_glm_model_t *model, int64_t n, const double *z,
                            double t, const double *dz, const double *y, const double *c,
                            double eps);

/** @return sum_i -phi_i*(-alpha_i) over the n given examples (-INFINITY if one alpha is
 *  outside its domain). A partial sum. */
double st_glm_neg_conj_sum(const st_glm_model_t *model, int64_t n, const double *alpha,
                           const double *y, const double *c, double eps);

/**
 * @return sum_i -phi_i*(-alpha_i) at the primal-dual point alpha_i = -c_i phi'(z_i, y_i)
 *         of the margins z scaled by @a scale (in (0, 1]; st_glm_dual_scale): the dual
 *         loss term of the L1 models' certificate.
 */
double st_glm_grad_conj_sum(const st_glm_model_t *model, int64_t n, const double *z,
                            const double *y, const double *c, double scale, double eps);

/**
 * @return sum_i [c_i phi(z_i) + phi_i*(-alpha_i) + alpha_i z_i] >= 0: the duality gap of
 *         the L2 models split by example (MODELS.md 2.3), exact when z = X w(alpha).
 */
double st_glm_dual_gap_sum(const st_glm_model_t *model, int64_t n, const double *z,
                           const double *alpha, const double *y, const double *c,
                           double eps);

/**
 * L2 (dual) models: P(w), D(alpha) and the gap from global sums, w = w(alpha):
 *     P = loss_sum / n + (lambda/2) w_sqnorm,  D = conj_sum / n - (lambda/2) w_sqnorm,
 * with loss_sum = st_glm_loss_sum(z = X w), conj_sum = st_glm_neg_conj_sum(alpha),
 * w_sqnorm = ||w(alpha)||^2.
 */
void st_glm_dual_objectives(double loss_sum, double conj_sum, double w_sqnorm, int64_t n,
                            double lambda, st_glm_objectives_t *obj_p);

/**
 * The feature-side sums of the L1 models' certificate over a block of features; ranks
 * combine theirs with st_glm_reg_sums_merge (SUM for reg and conj, MAX for vmax).
 */
typedef struct {
    double reg;   /**< sum_j r_eta(w_j) */
    double conj;  /**< sum_j max(0, |v_j| - lambda eta)^2 / (2 lambda (1 - eta));
                       +INFINITY when eta = 1 and some |v_j| > lambda */
    double vmax;  /**< max_j |v_j| */
} st_glm_reg_sums_t;

/**
 * Feature-side sums over @a d features (a rank's block or all), where v = -grad and
 *     grad_j = (1/n) sum_i c_i phi'(z_i, y_i) x_ij   (the gradient of the loss part,
 * the same g the coordinate step takes, at the current margins z = X w).
 * This is the vector the solver must compute: v = X^T alpha / n with the dual candidate
 * alpha_i = -c_i phi'(z_i, y_i) (MODELS.md 4.4).
 */
void st_glm_reg_sums(int64_t d, const double *w, const double *grad, double lambda,
                     double eta, st_glm_reg_sums_t *sums_p);

/** Combine two blocks' sums into @a into (what an allreduce over ranks computes). */
void st_glm_reg_sums_merge(st_glm_reg_sums_t *into, const st_glm_reg_sums_t *from);

/**
 * @return s = min(1, lambda eta / vmax) (1 for eta = 0): the dual candidate scaled by s
 *         is feasible, ||s v||_inf <= lambda eta, so the regularizer's conjugate at it
 *         is 0 (MODELS.md 4.4).
 */
double st_glm_dual_scale(const st_glm_reg_sums_t *reg, double lambda, double eta);

/**
 * L1 (primal) models: P(w), the dual D and the gap: the better of two dual points,
 * the Lipschitzed one (Duenner et al. 2016) and the scaled one,
 *     P = loss_sum / n + lambda reg,
 *     D = max(conj_sum / n - min(conj, B max(0, vmax - lambda eta)), scaled_sum / n),
 * with loss_sum = st_glm_loss_sum(z), conj_sum = st_glm_grad_conj_sum(z, 1) and
 * scaled_sum = st_glm_grad_conj_sum(z, st_glm_dual_scale(reg)) over all examples,
 * @a reg the merged st_glm_reg_sums. @a radius is B (> 0, at least ||w||_1 and
 * ||w*||_1 for a valid certificate), or <= 0 for the default B = P(w)/(lambda eta),
 * always valid (MODELS.md 4.4). eta = 0 uses neither the ball nor the scaling.
 */
void st_glm_primal_objectives(double loss_sum, double conj_sum, double scaled_sum,
                              const st_glm_reg_sums_t *reg, int64_t n, double lambda,
                              double eta, double radius, st_glm_objectives_t *obj_p);

/* ------------------------------------------------------------------------------------ */
/* Serial reference solver                                                             */
/* ------------------------------------------------------------------------------------ */

/** A small problem, as plain arrays owned by the caller. */
typedef struct {
    int64_t         n;       /**< examples */
    int64_t         d;       /**< features */
    const int64_t  *indptr;  /**< CSR row pointers (n + 1), or NULL: dense */
    const uint32_t *indices; /**< CSR column indices (indptr[n]); unused when dense */
    const double   *values;  /**< CSR values, or the dense n x d matrix, row-major */
    const double   *y;       /**< n labels */
    const double   *weights; /**< n weights c_i > 0, or NULL for all 1 */
} st_glm_serial_problem_t;

typedef struct {
    double   lambda;     /**< > 0 */
    double   eta;        /**< elastic net's L1 share in [0, 1]; ignored by other models */
    int      max_epochs; /**< >= 0 */
    double   tol;        /**< stop when gap <= tol |P(w)| (0: run max_epochs) */
    int      shuffle;    /**< SDCA order: 1 a fresh random permutation per epoch, 0 cyclic */
    uint64_t seed;       /**< of the permutations */
    double   eps;        /**< the SVR models' insensitive zone, >= 0; ignored by others */
} st_glm_serial_params_t;

/**
 * Check a problem and parameters for st_glm_serial_train.
 * @return NULL when valid, else a static message.
 */
const char *st_glm_serial_check(const st_glm_model_t *model,
                                const st_glm_serial_problem_t *prob,
                                const st_glm_serial_params_t *params);

/**
 * Train @a model on @a prob, from w = 0 (alpha = 0): SDCA epochs (sigma' = 1) for the
 * dual models, cyclic coordinate descent over features for the squared-loss primal ones
 * (lasso, elastic net), newGLMNET's iterations for those with a line search
 * (l1-logistic, l1-sqsvm; MODELS.md 4.3). After every epoch, w(alpha) (dual) or the
 * margins X w (primal) are recomputed from scratch and the objectives evaluated.
 * Allocates O(n + d + nnz) scratch, freed before returning.
 * @param w_p      d doubles: the model, on success
 * @param alpha_p  n doubles: the dual variables (dual models) or the dual candidate
 *                 -c_i phi'(z_i, y_i) (primal models), on success; may be NULL
 * @param trace_p  max_epochs + 1 entries: [0] at the start, [k] after epoch k (with
 *                 st_glm_serial_train_hooked's certify: the last computed); may be NULL
 * @param epochs_p epochs run (the last entry of the trace); may be NULL
 * @return ST_OK; ST_ERR_INVALID_PARAM (st_glm_serial_check fails); ST_ERR_NO_MEMORY.
 */
st_status_t st_glm_serial_train(const st_glm_model_t *model,
                                const st_glm_serial_problem_t *prob,
                                const st_glm_serial_params_t *params, double *w_p,
                                double *alpha_p, st_glm_objectives_t *trace_p, int *epochs_p);

/** Where a primal run of the serial solver starts, whom it tells after each epoch (the
 *  trainer's checkpoints) and whom it asks when to compute the certificate. The dual
 *  models ignore them. */
typedef struct {
    const double *w0;   /**< d doubles to start from instead of 0; NULL: 0 */
    /** after epoch @a epoch (1, 2, ... in this call), with the new w and its objectives,
     *  NULL where the epoch computed none (certify); anything but ST_OK ends the
     *  training with that status; NULL: none */
    st_status_t (*epoch_done)(void *arg, int epoch, const double *w,
                              const st_glm_objectives_t *obj);
    /** the squared-loss models (lasso, elastic net; the others compute the certificate
     *  with every epoch's gradient): whether to compute the certificate, and test tol,
     *  after epoch @a epoch; epoch 0: whether to test the start's (the start's is
     *  always computed, and so is the last epoch's); NULL: always */
    int         (*certify)(void *arg, int epoch);
    void         *arg;
    st_glm_objectives_t *start;   /**< the starting point's objectives go here; NULL: none */
    /** the squared-loss models: n doubles where the residual X w - y is kept through the
     *  epochs (part of the state between them: a checkpoint saves it); NULL: the
     *  solver's own */
    double       *resid;
    int           resid_set;   /**< resid holds w0's residual on entry (a resumed run's),
                                    else it is computed from w0 */
} st_glm_serial_hooks_t;

/**
 * st_glm_serial_train() with @a hooks (NULL: none). A primal run started from w0 (and,
 * for the squared-loss models, its residual in hooks->resid) takes the same steps as
 * the run that reached w0 would have taken from there: the state between epochs is w
 * (the line-search models recompute their margins from it), the squared-loss models'
 * residual, and nothing else (the order is cyclic).
 * @return as st_glm_serial_train(), or what epoch_done returned.
 */
st_status_t st_glm_serial_train_hooked(const st_glm_model_t *model,
                                       const st_glm_serial_problem_t *prob,
                                       const st_glm_serial_params_t *params,
                                       const st_glm_serial_hooks_t *hooks, double *w_p,
                                       double *alpha_p, st_glm_objectives_t *trace_p,
                                       int *epochs_p);

#endif /* ST_GLM_MODEL_H */
