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

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

/* logistic dual Newton: iteration cap and the relative step that ends it */
#define ST_GLM_NEWTON_MAX_ITERS 100
#define ST_GLM_NEWTON_TOL       1e-11
#define ST_GLM_NEWTON_WARM_ITERS 6
#define ST_GLM_NEWTON_WARM_TOL   1e-8

/* ---- scalar helpers ---- */

double st_glm_sigmoid(double z)
{
    double e;

    if (z >= 0) {
        return 1.0 / (1.0 + exp(-z));
    }
    e = exp(z);
    return e / (1.0 + e);
}

double st_glm_log1pexp(double x)
{
    if (x > 0) {
        return x + log1p(exp(-x));
    }
    return log1p(exp(x));
}

static double st_glm_clamp(double x, double lo, double hi)
{
    return (x < lo) ? lo : ((x > hi) ? hi : x);
}

double st_glm_reg_coord(double w, double eta)
{
    return eta * fabs(w) + 0.5 * (1.0 - eta) * w * w;
}

/* ---- logistic: phi = log(1 + exp(-y z)) ---- */

static double st_glm_logistic_loss(double z, double y)
{
    return st_glm_log1pexp(-y * z);
}

static double st_glm_logistic_dloss(double z, double y)
{
    return -y * st_glm_sigmoid(-y * z);
}

static double st_glm_logistic_d2loss(double z, double y)
{
    double e = exp(-fabs(y * z));

    return e / ((1.0 + e) * (1.0 + e));
}

/* log((1 + e^-(m+dm)) / (1 + e^-m)) = log1p(sigmoid(-m) expm1(-dm)), m = y z, dm = y dz */
static double st_glm_logistic_loss_diff(double z, double dz, double y)
{
    double m = y * z, dm = y * dz;

    if (-dm > 700.0) {
        return st_glm_logistic_loss(z + dz, y) - st_glm_logistic_loss(z, y);
    }
    return log1p(st_glm_sigmoid(-m) * expm1(-dm));
}

/* c H(beta / c), H the binary entropy in nats; -INFINITY outside [0, c] */
static double st_glm_logistic_neg_conj(double alpha, double y, double c)
{
    double beta = alpha * y, rest, p;

    if (!(beta >= 0.0 && beta <= c)) {
        return -INFINITY;
    }
    rest = c - beta;
    if (beta == 0.0 || rest == 0.0) {
        return 0.0;
    }
    p = beta / c;
    if (p <= 0.5) {
        return -beta * log(p) - rest * log1p(-p);
    }
    p = rest / c;
    return -rest * log(p) - beta * log1p(-p);
}

static void st_glm_box_bounds(double y, double c, double *lo_p, double *hi_p)
{
    *lo_p = (y > 0) ? 0.0 : -c;
    *hi_p = (y > 0) ? c : 0.0;
}

/* g(u) = log(u / (c - u)) + s + q (u - u0): increasing on (0, c). One log of the
 * ratio: u <= c/2 here (the solver folds the interval), so c - u >= c/2 and the
 * ratio is exact to an ulp; down to u = DBL_MIN it stays in range. */
static double st_glm_logit_g(double u, double c, double s, double q, double u0)
{
    return log(u / (c - u)) + (s + q * (u - u0));
}

/*
 * The maximizer b of c H(b/c) - (b - beta) m - (q/2)(b - beta)^2 on (0, c) solves
 * f'(b) = log((c - b)/b) - m - q (b - beta) = 0, f' decreasing. The sign of f'(c/2) tells
 * the side; folding, u = b or u = c - b is the distance to the nearer end and solves
 * g(u) = 0 on (0, c/2] with (s, u0) = (m, beta) or (-m, c - beta). g is concave there and
 * G(t) = g(e^t) is convex, so Newton on g from below and Newton on G from above both
 * approach the root monotonically; each iteration takes one step from each end of the
 * bracket [lo, hi], and whichever linearization is the better one (the q u term or the
 * log term dominating) brings its end close at once. Worked out in MODELS.md 3.3.
 */
double st_glm_logistic_dual_solve(double c, double m, double q, double beta, int *iters_p)
{
    double half = 0.5 * c, s, u0, ufloor, lo, hi, glo, ghi, cand[2], gc, dt, du, un, ul, u, b;
    double cross;
    int flip, it = 0, k;

    flip = (-m - q * (half - beta)) > 0.0;
    if (flip) {
        s      = -m;
        u0     = c - beta;
        ufloor = c * DBL_EPSILON;  /* c - u must stay below c in double */
    } else {
        s      = m;
        u0     = beta;
        ufloor = DBL_MIN;
    }
    hi  = half;
    ghi = s + q * (half - u0);     /* = g(c/2) >= 0 by the choice of side */
    if (ghi == 0.0) {
        u = half;
        goto out;
    }
    /* Warm start. Once training nears the optimum, beta is near the new root, and plain
       Newton in u from u0, one log per step, gets there in two to four steps where the
       bracket below costs six or more logs and exps. g is concave, so every Newton step
       lands at or below the root, and from there the steps rise monotonically; with
       0 <= -g'' <= 1/u^2 and g' >= 1/u on (0, c/2], the error after a step du is at most
       about du^2 / (2u): a step below ST_GLM_NEWTON_WARM_TOL u leaves < 1e-16 u. Steps that
       leave (ufloor, c/2) or do not settle in ST_GLM_NEWTON_WARM_ITERS go to the bracket. */
    if (u0 > ufloor && u0 < half) {
        for (it = 1, u = u0; it <= ST_GLM_NEWTON_WARM_ITERS; it++) {
            du = -st_glm_logit_g(u, c, s, q, u0) / (1.0 / u + 1.0 / (c - u) + q);
            u += du;
            if (!(u > ufloor && u < half)) {
                break;
            }
            if (fabs(du) <= ST_GLM_NEWTON_WARM_TOL * u) {
                goto out;
            }
        }
        it = 0;
    }

    lo  = ufloor;
    glo = st_glm_logit_g(lo, c, s, q, u0);
    if (glo >= 0.0) {
        u = lo;                    /* the root lies below what double can hold: stay inside */
        goto out;
    }

    /* the roots of the q = 0 and q = infinity problems bracket the root */
    cand[0] = c * st_glm_sigmoid(-s);
    cand[1] = u0;
    for (k = 0; k < 2; k++) {
        if (cand[k] > lo && cand[k] < hi) {
            gc = st_glm_logit_g(cand[k], c, s, q, u0);
            if (gc == 0.0) {
                u = cand[k];
                goto out;
            } else if (gc < 0.0) {
                lo  = cand[k];
                glo = gc;
            } else {
                hi  = cand[k];
                ghi = gc;
            }
        }
    }

    for (it = 1; it <= ST_GLM_NEWTON_MAX_ITERS; it++) {
        /* Newton in t = log u (G' = u g'(u) = 1 + u/(c - u) + q u) never lands below the
           root: from hi it is the upper end's own iteration, from lo a cross step */
        dt = ghi / (1.0 + hi / (c - hi) + q * hi);
        un = hi * exp(-dt);
        if (dt <= ST_GLM_NEWTON_TOL) {
            u = (un > lo) ? un : lo;
            goto out;
        }
        cross = lo * exp(-glo / (1.0 + lo / (c - lo) + q * lo));
        if (cross < un) {
            un = cross;
        }
        /* Newton in u (g' = 1/u + 1/(c - u) + q) never lands above it: from lo, the lower
           end's own iteration, from hi a cross step */
        du = -glo / (1.0 / lo + 1.0 / (c - lo) + q);
        ul = lo + du;
        if (du <= ST_GLM_NEWTON_TOL * ul) {
            u = (ul < hi) ? ul : hi;
            goto out;
        }
        cross = hi - ghi / (1.0 / hi + 1.0 / (c - hi) + q);
        if (cross > ul) {
            ul = cross;
        }
        if (!(un > lo && un < hi)) {
            un = sqrt(lo) * sqrt(hi);  /* rounding pushed it out: bisect in log u */
        }
        cand[0] = un;
        cand[1] = ul;
        for (k = 0; k < 2; k++) {
            if (!(cand[k] > lo && cand[k] < hi)) {
                continue;
            }
            gc = st_glm_logit_g(cand[k], c, s, q, u0);
            if (gc == 0.0) {
                u = cand[k];
                goto out;
            } else if (gc < 0.0) {
                lo  = cand[k];
                glo = gc;
            } else {
                hi  = cand[k];
                ghi = gc;
            }
        }
        if (hi - lo <= 2.0 * DBL_EPSILON * hi) {
            break;
        }
    }
    if (it > ST_GLM_NEWTON_MAX_ITERS) {
        it = ST_GLM_NEWTON_MAX_ITERS;
    }
    u = (-glo < ghi) ? lo : hi;

out:
    if (iters_p != NULL) {
        *iters_p = it;
    }
    b = flip ? c - u : u;
    if (b >= c) {
        b = nextafter(c, 0.0);
    }
    if (b <= 0.0) {
        b = DBL_MIN;
    }
    return b;
}

static double st_glm_logistic_step(double y, double c, double z, double q, double *alpha_p)
{
    double old = *alpha_p, beta = st_glm_clamp(old * y, 0.0, c), anew;

    anew     = y * st_glm_logistic_dual_solve(c, y * z, q, beta, NULL);
    *alpha_p = anew;
    return anew - old;
}

static double st_glm_sigmoid_link(double z)
{
    return st_glm_sigmoid(z);
}

/* ---- hinge: phi = max(0, 1 - y z) ---- */

static double st_glm_hinge_loss(double z, double y)
{
    return fmax(0.0, 1.0 - y * z);
}

static double st_glm_hinge_dloss(double z, double y)
{
    return (y * z < 1.0) ? -y : 0.0;
}

static double st_glm_hinge_d2loss(double z, double y)
{
    return 0.0;
}

static double st_glm_hinge_loss_diff(double z, double dz, double y)
{
    return st_glm_hinge_loss(z + dz, y) - st_glm_hinge_loss(z, y);
}

static double st_glm_hinge_neg_conj(double alpha, double y, double c)
{
    double beta = alpha * y;

    return (beta >= 0.0 && beta <= c) ? beta : -INFINITY;
}

/* max_b b - (b - beta) m - (q/2)(b - beta)^2 on [0, c]: b = clip(beta + (1 - m)/q) */
static double st_glm_hinge_step(double y, double c, double z, double q, double *alpha_p)
{
    double old = *alpha_p, beta = old * y, m = y * z, b, anew;

    if (q > 0.0) {
        b = beta + (1.0 - m) / q;
    } else {
        b = (m < 1.0) ? c : ((m > 1.0) ? 0.0 : beta);
    }
    anew     = y * st_glm_clamp(b, 0.0, c);
    *alpha_p = anew;
    return anew - old;
}

/* ---- squared hinge: phi = max(0, 1 - y z)^2 ---- */

static double st_glm_sqhinge_loss(double z, double y)
{
    double r = fmax(0.0, 1.0 - y * z);

    return r * r;
}

static double st_glm_sqhinge_dloss(double z, double y)
{
    return -2.0 * y * fmax(0.0, 1.0 - y * z);
}

static double st_glm_sqhinge_d2loss(double z, double y)
{
    return (y * z <= 1.0) ? 2.0 : 0.0;
}

static double st_glm_sqhinge_loss_diff(double z, double dz, double y)
{
    return st_glm_sqhinge_loss(z + dz, y) - st_glm_sqhinge_loss(z, y);
}

static double st_glm_sqhinge_neg_conj(double alpha, double y, double c)
{
    double beta = alpha * y;

    return (beta >= 0.0) ? beta - beta * beta / (4.0 * c) : -INFINITY;
}

static void st_glm_halfline_bounds(double y, double c, double *lo_p, double *hi_p)
{
    *lo_p = (y > 0) ? 0.0 : -INFINITY;
    *hi_p = (y > 0) ? INFINITY : 0.0;
}

/* b = max(0, beta + (1 - m - beta/(2c)) / (q + 1/(2c))) */
static double st_glm_sqhinge_step(double y, double c, double z, double q, double *alpha_p)
{
    double old = *alpha_p, beta = fmax(0.0, old * y), m = y * z, b, anew;

    b        = beta + (1.0 - m - beta / (2.0 * c)) / (q + 1.0 / (2.0 * c));
    anew     = y * fmax(0.0, b);
    *alpha_p = anew;
    return anew - old;
}

/* ---- squared loss: phi = (z - y)^2 / 2 ---- */

static double st_glm_squared_loss(double z, double y)
{
    double r = z - y;

    return 0.5 * r * r;
}

static double st_glm_squared_dloss(double z, double y)
{
    return z - y;
}

static double st_glm_squared_d2loss(double z, double y)
{
    return 1.0;
}

static double st_glm_squared_loss_diff(double z, double dz, double y)
{
    return dz * ((z - y) + 0.5 * dz);
}

static double st_glm_squared_neg_conj(double alpha, double y, double c)
{
    return alpha * y - alpha * alpha / (2.0 * c);
}

static void st_glm_free_bounds(double y, double c, double *lo_p, double *hi_p)
{
    *lo_p = -INFINITY;
    *hi_p = INFINITY;
}

/* a = alpha + (y - z - alpha/c) / (q + 1/c) */
static double st_glm_squared_step(double y, double c, double z, double q, double *alpha_p)
{
    double old = *alpha_p, delta;

    delta    = (y - z - old / c) / (q + 1.0 / c);
    *alpha_p = old + delta;
    return *alpha_p - old;
}

static double st_glm_identity_link(double z)
{
    return z;
}

/* ---- the table ---- */

#define ST_GLM_LOGISTIC_OPS \
    .loss = st_glm_logistic_loss, .dloss = st_glm_logistic_dloss, \
    .loss_diff = st_glm_logistic_loss_diff, .d2loss = st_glm_logistic_d2loss, \
    .neg_conj = st_glm_logistic_neg_conj, .dual_bounds = st_glm_box_bounds, \
    .smoothness = 0.25, .link = st_glm_sigmoid_link, .classification = 1
#define ST_GLM_SQUARED_OPS \
    .loss = st_glm_squared_loss, .dloss = st_glm_squared_dloss, \
    .loss_diff = st_glm_squared_loss_diff, .d2loss = st_glm_squared_d2loss, \
    .neg_conj = st_glm_squared_neg_conj, .dual_bounds = st_glm_free_bounds, \
    .smoothness = 1.0, .link = st_glm_identity_link, .classification = 0

static const st_glm_model_t st_glm_models[ST_GLM_MODEL_COUNT] = {
    [ST_GLM_LOGISTIC] = {
        .kind = ST_GLM_LOGISTIC, .name = "logistic",
        .description = "L2-regularized logistic regression (dual SDCA)",
        .form = ST_GLM_FORM_DUAL, .eta = 0.0, ST_GLM_LOGISTIC_OPS,
        .dual_step = st_glm_logistic_step,
    },
    [ST_GLM_HINGE] = {
        .kind = ST_GLM_HINGE, .name = "svm",
        .description = "L2-regularized linear SVM, hinge loss (dual SDCA)",
        .form = ST_GLM_FORM_DUAL, .classification = 1, .eta = 0.0, .smoothness = INFINITY,
        .loss = st_glm_hinge_loss, .dloss = st_glm_hinge_dloss,
        .loss_diff = st_glm_hinge_loss_diff, .d2loss = st_glm_hinge_d2loss,
        .neg_conj = st_glm_hinge_neg_conj, .dual_bounds = st_glm_box_bounds,
        .dual_step = st_glm_hinge_step, .link = st_glm_identity_link,
    },
    [ST_GLM_SQHINGE] = {
        .kind = ST_GLM_SQHINGE, .name = "sqsvm",
        .description = "L2-regularized linear SVM, squared hinge loss (dual SDCA)",
        .form = ST_GLM_FORM_DUAL, .classification = 1, .eta = 0.0, .smoothness = 2.0,
        .loss = st_glm_sqhinge_loss, .dloss = st_glm_sqhinge_dloss,
        .loss_diff = st_glm_sqhinge_loss_diff, .d2loss = st_glm_sqhinge_d2loss,
        .neg_conj = st_glm_sqhinge_neg_conj, .dual_bounds = st_glm_halfline_bounds,
        .dual_step = st_glm_sqhinge_step, .link = st_glm_identity_link,
    },
    [ST_GLM_RIDGE] = {
        .kind = ST_GLM_RIDGE, .name = "ridge",
        .description = "ridge regression, squared loss + L2 (dual SDCA)",
        .form = ST_GLM_FORM_DUAL, .eta = 0.0, ST_GLM_SQUARED_OPS,
        .dual_step = st_glm_squared_step,
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
};

const st_glm_model_t *st_glm_model_get(st_glm_model_kind_t kind)
{
    if ((int)kind < 0 || kind >= ST_GLM_MODEL_COUNT) {
        return NULL;
    }
    return &st_glm_models[kind];
}

const char *st_glm_model_names(void)
{
    return "logistic, svm, sqsvm, ridge, lasso, l1-logistic, elastic-net";
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

const char *st_glm_model_check(const st_glm_model_t *model, double lambda, double eta_param)
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
                       const double *y, const double *c)
{
    double sum = 0.0;
    int64_t i;

    for (i = 0; i < n; i++) {
        sum += st_glm_weight(c, i) * model->loss(z[i], y[i]);
    }
    return sum;
}

double st_glm_neg_conj_sum(const st_glm_model_t *model, int64_t n, const double *alpha,
                           const double *y, const double *c)
{
    double sum = 0.0;
    int64_t i;

    for (i = 0; i < n; i++) {
        sum += model->neg_conj(alpha[i], y[i], st_glm_weight(c, i));
    }
    return sum;
}

double st_glm_grad_conj_sum(const st_glm_model_t *model, int64_t n, const double *z,
                            const double *y, const double *c)
{
    double sum = 0.0, ci;
    int64_t i;

    for (i = 0; i < n; i++) {
        ci   = st_glm_weight(c, i);
        sum += model->neg_conj(-ci * model->dloss(z[i], y[i]), y[i], ci);
    }
    return sum;
}

double st_glm_dual_gap_sum(const st_glm_model_t *model, int64_t n, const double *z,
                           const double *alpha, const double *y, const double *c)
{
    double sum = 0.0, ci;
    int64_t i;

    for (i = 0; i < n; i++) {
        ci   = st_glm_weight(c, i);
        sum += ci * model->loss(z[i], y[i]) - model->neg_conj(alpha[i], y[i], ci) +
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

void st_glm_primal_objectives(double loss_sum, double conj_sum, const st_glm_reg_sums_t *reg,
                              int64_t n, double lambda, double eta, double radius,
                              st_glm_objectives_t *obj_p)
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
    obj_p->gap    = primal - obj_p->dual;
    obj_p->radius = radius;
}
