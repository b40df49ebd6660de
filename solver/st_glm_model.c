/*
 * libstrata_glm model layer: the math of every model (solver/MODELS.md has the derivations).
 *
 *   P(w) = (1/n) sum_i c_i phi(x_i.w, y_i) + lambda (eta ||w||_1 + (1 - eta)/2 ||w||^2)
 *
 * L2 models (eta = 0), dual of SDCA / CoCoA+ (Shalev-Shwartz & Zhang, JMLR 2013; Smith et
 * al., "CoCoA: A General Framework for Communication-Efficient Distributed Optimization",
 * JMLR 2018):
 *   D(alpha) = (1/n) sum_i -phi_i*(-alpha_i) - (lambda/2) ||w(alpha)||^2,
 *   w(alpha) = (1/(lambda n)) sum_i alpha_i x_i,
 * one coordinate: max_a -phi_i*(-a) - (a - alpha_i) z - (q/2) (a - alpha_i)^2. The logistic
 * step is a Newton method on the entropy-regularized problem after Yu, Huang & Lin, "Dual
 * coordinate descent methods for logistic regression and maximum entropy models" (Machine
 * Learning 2011), with its own two-sided safeguard (MODELS.md 3.3).
 *
 * L1 models: proximal Newton coordinate descent (Friedman, Hastie & Tibshirani 2010; Yuan,
 * Chang, Hsieh & Lin, JMLR 2010 for the logistic line search) and the certificate of
 * Duenner, Forte, Takac & Jaggi, "Primal-Dual Rates and Certificates" (ICML 2016).
 */
#include "config.h"

#include "st_glm_model.h"
#include "st_glm_steps.h"
#include "st_glm_losses.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>


/* ---- scalar helpers ---- */

double st_glm_sigmoid(double z)
{
    return st_glm_sigmoid_of(z);
}

double st_glm_log1pexp(double x)
{
    return st_glm_log1pexp_of(x);
}


double st_glm_reg_coord(double w, double eta)
{
    return eta * fabs(w) + 0.5 * (1.0 - eta) * w * w;
}

/* ---- logistic: phi = log(1 + exp(-y z)) (its loss functions: st_glm_losses.h) ---- */

static void st_glm_box_bounds(double y, double c, double *lo_p, double *hi_p)
{
    *lo_p = (y > 0) ? 0.0 : -c;
    *hi_p = (y > 0) ? c : 0.0;
}




double st_glm_logistic_dual_solve(double c, double m, double q, double beta, int *iters_p)
{
    return st_glm_logistic_root(c, m, q, beta, iters_p);
}

static double st_glm_sigmoid_link(double z)
{
    return st_glm_sigmoid(z);
}

/* ---- the table's signatures: every operation takes the SVR models' eps, which the
 * other models' own functions (st_glm_losses.h, st_glm_steps.h) do without ---- */

#define ST_GLM_NO_EPS(f) \
    static double f##_e(double z, double y, double eps) { (void)eps; return f(z, y); }
#define ST_GLM_NO_EPS_DIFF(f) \
    static double f##_e(double z, double dz, double y, double eps) \
    { (void)eps; return f(z, dz, y); }
#define ST_GLM_NO_EPS_CONJ(f) \
    static double f##_e(double a, double y, double c, double eps) \
    { (void)eps; return f(a, y, c); }
#define ST_GLM_NO_EPS_STEP(f) \
    static double f##_e(double y, double c, double z, double q, double eps, double *a_p) \
    { (void)eps; return f(y, c, z, q, a_p); }
#define ST_GLM_NO_EPS_LOSS(l) \
    ST_GLM_NO_EPS(st_glm_##l##_loss) ST_GLM_NO_EPS(st_glm_##l##_dloss) \
    ST_GLM_NO_EPS(st_glm_##l##_d2loss) ST_GLM_NO_EPS_DIFF(st_glm_##l##_loss_diff) \
    ST_GLM_NO_EPS_CONJ(st_glm_##l##_neg_conj)

ST_GLM_NO_EPS_LOSS(logistic)
ST_GLM_NO_EPS_LOSS(sqhinge)
ST_GLM_NO_EPS_LOSS(squared)
ST_GLM_NO_EPS_STEP(st_glm_logistic_step)
ST_GLM_NO_EPS_STEP(st_glm_hinge_step)
ST_GLM_NO_EPS_STEP(st_glm_sqhinge_step)
ST_GLM_NO_EPS_STEP(st_glm_squared_step)

/* ---- hinge: phi = max(0, 1 - y z) ---- */

static double st_glm_hinge_loss(double z, double y, double eps)
{
    return fmax(0.0, 1.0 - y * z);
}

static double st_glm_hinge_dloss(double z, double y, double eps)
{
    return (y * z < 1.0) ? -y : 0.0;
}

/* the hinge's and svr's: 0 almost everywhere (their derivatives jump at the kinks) */
static double st_glm_zero_d2loss(double z, double y, double eps)
{
    return 0.0;
}

static double st_glm_hinge_loss_diff(double z, double dz, double y, double eps)
{
    return st_glm_hinge_loss(z + dz, y, eps) - st_glm_hinge_loss(z, y, eps);
}

static double st_glm_hinge_neg_conj(double alpha, double y, double c, double eps)
{
    double beta = alpha * y;

    return (beta >= 0.0 && beta <= c) ? beta : -INFINITY;
}

/* ---- epsilon-insensitive: phi = max(0, |z - y| - eps) (L1-loss SVR; the squared one,
 * L2-loss SVR: st_glm_losses.h) ---- */

static double st_glm_svr_loss(double z, double y, double eps)
{
    return fmax(0.0, fabs(z - y) - eps);
}

static double st_glm_svr_dloss(double z, double y, double eps)
{
    double r = z - y;

    return (r > eps) ? 1.0 : ((r < -eps) ? -1.0 : 0.0);
}

static double st_glm_svr_loss_diff(double z, double dz, double y, double eps)
{
    return st_glm_svr_loss(z + dz, y, eps) - st_glm_svr_loss(z, y, eps);
}

/* inf_z alpha z + c phi(z) = alpha y - eps |alpha| on |alpha| <= c */
static double st_glm_svr_neg_conj(double alpha, double y, double c, double eps)
{
    return (fabs(alpha) <= c) ? alpha * y - eps * fabs(alpha) : -INFINITY;
}

static void st_glm_sym_box_bounds(double y, double c, double *lo_p, double *hi_p)
{
    *lo_p = -c;
    *hi_p = c;
}


/* ---- squared hinge: phi = max(0, 1 - y z)^2 (st_glm_losses.h) ---- */

static void st_glm_halfline_bounds(double y, double c, double *lo_p, double *hi_p)
{
    *lo_p = (y > 0) ? 0.0 : -INFINITY;
    *hi_p = (y > 0) ? INFINITY : 0.0;
}


/* ---- squared loss: phi = (z - y)^2 / 2 (st_glm_losses.h) ---- */

static void st_glm_free_bounds(double y, double c, double *lo_p, double *hi_p)
{
    *lo_p = -INFINITY;
    *hi_p = INFINITY;
}


static double st_glm_identity_link(double z)
{
    return z;
}

/* ---- the table ---- */

#define ST_GLM_LOGISTIC_OPS \
    .loss = st_glm_logistic_loss_e, .dloss = st_glm_logistic_dloss_e, \
    .loss_diff = st_glm_logistic_loss_diff_e, .d2loss = st_glm_logistic_d2loss_e, \
    .neg_conj = st_glm_logistic_neg_conj_e, .dual_bounds = st_glm_box_bounds, \
    .smoothness = 0.25, .link = st_glm_sigmoid_link, .classification = 1
#define ST_GLM_SQUARED_OPS \
    .loss = st_glm_squared_loss_e, .dloss = st_glm_squared_dloss_e, \
    .loss_diff = st_glm_squared_loss_diff_e, .d2loss = st_glm_squared_d2loss_e, \
    .neg_conj = st_glm_squared_neg_conj_e, .dual_bounds = st_glm_free_bounds, \
    .smoothness = 1.0, .link = st_glm_identity_link, .classification = 0
#define ST_GLM_SQHINGE_OPS \
    .loss = st_glm_sqhinge_loss_e, .dloss = st_glm_sqhinge_dloss_e, \
    .loss_diff = st_glm_sqhinge_loss_diff_e, .d2loss = st_glm_sqhinge_d2loss_e, \
    .neg_conj = st_glm_sqhinge_neg_conj_e, .dual_bounds = st_glm_halfline_bounds, \
    .smoothness = 2.0, .link = st_glm_identity_link, .classification = 1

static const st_glm_model_t st_glm_models[ST_GLM_MODEL_COUNT] = {
    [ST_GLM_LOGISTIC] = {
        .kind = ST_GLM_LOGISTIC, .name = "logistic",
        .description = "L2-regularized logistic regression (dual SDCA)",
        .form = ST_GLM_FORM_DUAL, .eta = 0.0, ST_GLM_LOGISTIC_OPS,
        .dual_step = st_glm_logistic_step_e,
    },
    [ST_GLM_HINGE] = {
        .kind = ST_GLM_HINGE, .name = "svm",
        .description = "L2-regularized linear SVM, hinge loss (dual SDCA)",
        .form = ST_GLM_FORM_DUAL, .classification = 1, .eta = 0.0, .smoothness = INFINITY,
        .loss = st_glm_hinge_loss, .dloss = st_glm_hinge_dloss,
        .loss_diff = st_glm_hinge_loss_diff, .d2loss = st_glm_zero_d2loss,
        .neg_conj = st_glm_hinge_neg_conj, .dual_bounds = st_glm_box_bounds,
        .dual_step = st_glm_hinge_step_e, .link = st_glm_identity_link,
    },
    [ST_GLM_SQHINGE] = {
        .kind = ST_GLM_SQHINGE, .name = "sqsvm",
        .description = "L2-regularized linear SVM, squared hinge loss (dual SDCA)",
        .form = ST_GLM_FORM_DUAL, .eta = 0.0, ST_GLM_SQHINGE_OPS,
        .dual_step = st_glm_sqhinge_step_e,
    },
    [ST_GLM_RIDGE] = {
        .kind = ST_GLM_RIDGE, .name = "ridge",
        .description = "ridge regression, squared loss + L2 (dual SDCA)",
        .form = ST_GLM_FORM_DUAL, .eta = 0.0, ST_GLM_SQUARED_OPS,
        .dual_step = st_glm_squared_step_e,
    },
    [ST_GLM_LASSO] = {
        .kind = ST_GLM_LASSO, .name = "lasso",
        .description = "lasso, squared loss + L1 (primal CD)",
        .form = ST_GLM_FORM_PRIMAL, .eta = 1.0, ST_GLM_SQUARED_OPS,
    },
    [ST_GLM_L1_LOGISTIC] = {
        .kind = ST_GLM_L1_LOGISTIC, .name = "l1-logistic",
        .description = "L1-regularized logistic regression (primal CD, line search)",
        .form = ST_GLM_FORM_PRIMAL, .eta = 1.0, .line_search = 1, ST_GLM_LOGISTIC_OPS,
    },
    [ST_GLM_ELASTIC_NET] = {
        .kind = ST_GLM_ELASTIC_NET, .name = "elastic-net",
        .description = "elastic net, squared loss + eta L1 + (1 - eta) L2/2 (primal CD)",
        .form = ST_GLM_FORM_PRIMAL, .eta = ST_GLM_ETA_PARAM, ST_GLM_SQUARED_OPS,
    },
    [ST_GLM_L1_SQHINGE] = {
        .kind = ST_GLM_L1_SQHINGE, .name = "l1-sqsvm",
        .description = "L1-regularized linear SVM, squared hinge loss (primal CD, line "
                       "search)",
        .form = ST_GLM_FORM_PRIMAL, .eta = 1.0, .line_search = 1, ST_GLM_SQHINGE_OPS,
    },
    [ST_GLM_SVR] = {
        .kind = ST_GLM_SVR, .name = "svr",
        .description = "L2-regularized support vector regression, epsilon-insensitive loss "
                       "(dual SDCA)",
        .form = ST_GLM_FORM_DUAL, .classification = 0, .eta = 0.0, .smoothness = INFINITY,
        .loss = st_glm_svr_loss, .dloss = st_glm_svr_dloss,
        .loss_diff = st_glm_svr_loss_diff, .d2loss = st_glm_zero_d2loss,
        .neg_conj = st_glm_svr_neg_conj, .dual_bounds = st_glm_sym_box_bounds,
        .dual_step = st_glm_svr_step, .link = st_glm_identity_link,
    },
    [ST_GLM_SQSVR] = {
        .kind = ST_GLM_SQSVR, .name = "sqsvr",
        .description = "L2-regularized support vector regression, squared "
                       "epsilon-insensitive loss (dual SDCA)",
        .form = ST_GLM_FORM_DUAL, .classification = 0, .eta = 0.0, .smoothness = 2.0,
        .loss = st_glm_sqsvr_loss, .dloss = st_glm_sqsvr_dloss,
        .loss_diff = st_glm_sqsvr_loss_diff, .d2loss = st_glm_sqsvr_d2loss,
        .neg_conj = st_glm_sqsvr_neg_conj, .dual_bounds = st_glm_free_bounds,
        .dual_step = st_glm_sqsvr_step, .link = st_glm_identity_link,
    },
};

int st_glm_model_step(const st_glm_model_t *model)
{
    switch (model->kind) {
    case ST_GLM_LOGISTIC: return ST_GLM_STEP_LOGISTIC;
    case ST_GLM_HINGE:    return ST_GLM_STEP_HINGE;
    case ST_GLM_SQHINGE:  return ST_GLM_STEP_SQHINGE;
    case ST_GLM_RIDGE:    return ST_GLM_STEP_SQUARED;
    case ST_GLM_SVR:      return ST_GLM_STEP_SVR;
    case ST_GLM_SQSVR:    return ST_GLM_STEP_SQSVR;
    default:              return -1;
    }
}

const st_glm_model_t *st_glm_model_get(st_glm_model_kind_t kind)
{
    if ((int)kind < 0 || kind >= ST_GLM_MODEL_COUNT) {
        return NULL;
    }
    return &st_glm_models[kind];
}

const char *st_glm_model_names(void)
{
    return "logistic, svm, sqsvm, ridge, lasso, l1-logistic, elastic-net, l1-sqsvm, svr, sqsvr";
}

const st_glm_model_t *st_glm_model_lookup(const char *name, char *err, size_t errlen)
{
    int k;

    for (k = 0; name != NULL && k < ST_GLM_MODEL_COUNT; k++) {
        if (!strcasecmp(name, st_glm_models[k].name)) {
            return &st_glm_models[k];
        }
    }
    if (err != NULL && errlen > 0) {
        snprintf(err, errlen, "unknown model '%s' (known: %s)", name ? name : "(null)",
                 st_glm_model_names());
    }
    return NULL;
}

double st_glm_model_eta(const st_glm_model_t *model, double eta_param)
{
    return (model->eta == ST_GLM_ETA_PARAM) ? eta_param : model->eta;
}

const char *st_glm_model_check(const st_glm_model_t *model, double lambda, double eta_param,
                               double eps)
{
    if (model == NULL) {
        return "no model";
    }
    if (!(lambda > 0.0) || !isfinite(lambda)) {
        return "lambda must be finite and > 0";
    }
    if (model->eta == ST_GLM_ETA_PARAM && !(eta_param >= 0.0 && eta_param <= 1.0)) {
        return "eta (the L1 share of the elastic net) must be in [0, 1]";
    }
    if ((model->kind == ST_GLM_SVR || model->kind == ST_GLM_SQSVR) &&
        !(eps >= 0.0 && isfinite(eps))) {
        return "epsilon (the SVR models' insensitive zone) must be finite and >= 0";
    }
    return NULL;
}

int st_glm_model_label_ok(const st_glm_model_t *model, double y)
{
    if (model->classification) {
        return y == 1.0 || y == -1.0;
    }
    return isfinite(y);
}

/* ---- primal coordinate step ---- */

double st_glm_prox_step(double g, double h, double lambda, double eta, double *w_p)
{
    double w = *w_p, l1 = lambda * eta, curv = h + lambda * (1.0 - eta), t, wn;

    if (!(curv > 0.0)) {
        wn = (fabs(g) <= l1) ? 0.0 : w;
    } else {
        t  = h * w - g;
        wn = (t > l1) ? (t - l1) / curv : ((t < -l1) ? (t + l1) / curv : 0.0);
    }
    *w_p = wn;
    return wn - w;
}

double st_glm_prox_violation(double g, double w, double lambda, double eta)
{
    double s = g + lambda * (1.0 - eta) * w, l1 = lambda * eta;

    if (w > 0.0) {
        return fabs(s + l1);
    }
    if (w < 0.0) {
        return fabs(s - l1);
    }
    return fmax(0.0, fabs(s) - l1);
}

int64_t st_glm_prox_newton_setup(const st_glm_csc_t *X, const double *dd, const double *grad,
                                 const double *w, double lambda, double eta, double *dir,
                                 double *hd, int64_t *act, double *viol_p)
{
    double l1 = lambda * eta, viol = 0.0, x;
    int64_t j, k, nact = 0;

    for (j = 0; j < X->ncols; j++) {
        dir[j] = 0.0;
        viol  += st_glm_prox_violation(grad[j], w[j], lambda, eta);
        if (w[j] == 0.0 && fabs(grad[j]) <= l1) {
            continue;
        }
        for (x = 1e-12, k = X->cp[j]; k < X->cp[j + 1]; k++) {
            x += dd[X->ri[k]] * X->cv[k] * X->cv[k];
        }
        hd[j]       = x;
        act[nact++] = j;
    }
    *viol_p = viol;
    return nact;
}

double st_glm_prox_newton_passes(const st_glm_csc_t *X, const double *dd, const double *grad,
                                 const double *w, double lambda, double eta, double *dir,
                                 const double *hd, const int64_t *act, int64_t nact,
                                 double *xd, double viol, int *moved_p)
{
    double inner, first = 0.0, G, cur, wn, delta;
    int64_t j, k, a;
    int pass, moved, any = 0;

    for (pass = 0, moved = 1; pass < ST_GLM_PN_PASSES && nact > 0 && moved; pass++) {
        inner = 0.0;
        moved = 0;   /* a pass that moves nothing is the last: the next would repeat it */
        for (a = 0; a < nact; a++) {
            j      = act[a];
            G      = grad[j] + st_glm_gather_dot(X->ri, X->cv, X->cp[j], X->cp[j + 1], dd, xd);
            cur    = w[j] + dir[j];
            inner += st_glm_prox_violation(G, cur, lambda, eta);
            wn     = cur;
            delta  = st_glm_prox_step(G, hd[j], lambda, eta, &wn);
            if (delta == 0.0) {
                continue;
            }
            moved  = 1;
            dir[j] = wn - w[j];
            for (k = X->cp[j]; k < X->cp[j + 1]; k++) {
                xd[X->ri[k]] += delta * X->cv[k];
            }
        }
        if (pass == 0) {
            first = inner;
        }
        any |= moved;
        if (inner <= ST_GLM_PN_INNER * viol) {
            break;
        }
    }
    if (moved_p != NULL) {
        *moved_p = any;
    }
    return first;
}

int64_t st_glm_prox_newton_dir(const st_glm_csc_t *X, const double *dd, const double *grad,
                               const double *w, double lambda, double eta, double *dir,
                               double *hd, int64_t *act, double *xd)
{
    double viol;
    int64_t nact = st_glm_prox_newton_setup(X, dd, grad, w, lambda, eta, dir, hd, act, &viol);

    st_glm_prox_newton_passes(X, dd, grad, w, lambda, eta, dir, hd, act, nact, xd, viol, NULL);
    return nact;
}

double st_glm_prox_decrease(double g, double lambda, double eta, double w, double delta)
{
    return g * delta + lambda * (st_glm_reg_coord(w + delta, eta) - st_glm_reg_coord(w, eta));
}

/* ---- objectives ---- */

static double st_glm_weight(const double *c, int64_t i)
{
    return (c != NULL) ? c[i] : 1.0;
}

double st_glm_loss_sum(const st_glm_model_t *model, int64_t n, const double *z,
                       const double *y, const double *c, double eps)
{
    double sum = 0.0;
    int64_t i;

    for (i = 0; i < n; i++) {
        sum += st_glm_weight(c, i) * model->loss(z[i], y[i], eps);
    }
    return sum;
}

double st_glm_loss_diff_sum(const st_glm_model_t *model, int64_t n, const double *z,
                            double t, const double *dz, const double *y, const double *c,
                            double eps)
{
    double sum = 0.0;
    int64_t i;

    for (i = 0; i < n; i++) {
        sum += st_glm_weight(c, i) * model->loss_diff(z[i], t * dz[i], y[i], eps);
    }
    return sum;
}

double st_glm_neg_conj_sum(const st_glm_model_t *model, int64_t n, const double *alpha,
                           const double *y, const double *c, double eps)
{
    double sum = 0.0;
    int64_t i;

    for (i = 0; i < n; i++) {
        sum += model->neg_conj(alpha[i], y[i], st_glm_weight(c, i), eps);
    }
    return sum;
}

double st_glm_grad_conj_sum(const st_glm_model_t *model, int64_t n, const double *z,
                            const double *y, const double *c, double scale, double eps)
{
    double sum = 0.0, ci;
    int64_t i;

    for (i = 0; i < n; i++) {
        ci   = st_glm_weight(c, i);
        sum += model->neg_conj(-scale * ci * model->dloss(z[i], y[i], eps), y[i], ci, eps);
    }
    return sum;
}

double st_glm_dual_gap_sum(const st_glm_model_t *model, int64_t n, const double *z,
                           const double *alpha, const double *y, const double *c,
                           double eps)
{
    double sum = 0.0, ci;
    int64_t i;

    for (i = 0; i < n; i++) {
        ci   = st_glm_weight(c, i);
        sum += ci * model->loss(z[i], y[i], eps) - model->neg_conj(alpha[i], y[i], ci, eps) +
               alpha[i] * z[i];
    }
    return sum;
}

void st_glm_dual_objectives(double loss_sum, double conj_sum, double w_sqnorm, int64_t n,
                            double lambda, st_glm_objectives_t *obj_p)
{
    double reg = 0.5 * lambda * w_sqnorm;

    obj_p->primal = loss_sum / (double)n + reg;
    obj_p->dual   = conj_sum / (double)n - reg;
    obj_p->gap    = obj_p->primal - obj_p->dual;
    obj_p->radius = 0.0;
}

void st_glm_reg_sums(int64_t d, const double *w, const double *grad, double lambda,
                     double eta, st_glm_reg_sums_t *sums_p)
{
    double reg = 0.0, conj = 0.0, vmax = 0.0, l1 = lambda * eta, a, e;
    int64_t j;

    for (j = 0; j < d; j++) {
        reg += st_glm_reg_coord(w[j], eta);
        a    = fabs(grad[j]);
        vmax = fmax(vmax, a);
        e    = a - l1;
        if (e > 0.0) {
            conj += (eta < 1.0) ? e * e / (2.0 * lambda * (1.0 - eta)) : INFINITY;
        }
    }
    sums_p->reg  = reg;
    sums_p->conj = conj;
    sums_p->vmax = vmax;
}

void st_glm_reg_sums_merge(st_glm_reg_sums_t *into, const st_glm_reg_sums_t *from)
{
    into->reg  += from->reg;
    into->conj += from->conj;
    into->vmax  = fmax(into->vmax, from->vmax);
}

double st_glm_dual_scale(const st_glm_reg_sums_t *reg, double lambda, double eta)
{
    return (eta > 0.0 && reg->vmax > lambda * eta) ? lambda * eta / reg->vmax : 1.0;
}

void st_glm_primal_objectives(double loss_sum, double conj_sum, double scaled_sum,
                              const st_glm_reg_sums_t *reg, int64_t n, double lambda,
                              double eta, double radius, st_glm_objectives_t *obj_p)
{
    double primal, bound, ball;

    primal = loss_sum / (double)n + lambda * reg->reg;
    bound  = reg->conj;
    if (eta > 0.0) {
        if (!(radius > 0.0)) {
            radius = primal / (lambda * eta);
        }
        ball  = radius * fmax(0.0, reg->vmax - lambda * eta);
        bound = fmin(bound, ball);
    } else {
        radius = 0.0;
    }
    obj_p->primal = primal;
    obj_p->dual   = conj_sum / (double)n - bound;
    /* the scaled point: its regularizer's conjugate is 0; the ball's bound grows with
       B = P / lambda, which far from w = 0 (small lambda) leaves a gap many times the
       distance to the optimum */
    if (st_glm_dual_scale(reg, lambda, eta) < 1.0) {
        obj_p->dual = fmax(obj_p->dual, scaled_sum / (double)n);
    }
    obj_p->gap    = primal - obj_p->dual;
    obj_p->radius = radius;
}
