/*
 * Serial reference solver: the baseline the distributed solver is tested against.
 *
 * L2 models, SDCA (Shalev-Shwartz & Zhang, "Stochastic Dual Coordinate Ascent Methods for
 * Regularized Loss Minimization", JMLR 2013), sigma' = 1:
 *   max_alpha D(alpha) = (1/n) sum_i -phi_i*(-alpha_i) - (lambda/2) ||w(alpha)||^2,
 *   w(alpha) = (1/(lambda n)) sum_i alpha_i x_i; per example i the exact maximizer of D
 *   along alpha_i (the model's dual_step with z = x_i.w, q = ||x_i||^2 / (lambda n)).
 * L1 models, min_w (1/n) sum_i c_i phi(x_i.w, y_i) + lambda (eta ||w||_1 + (1 - eta)/2
 *   ||w||^2): the squared loss by cyclic coordinate descent (Friedman, Hastie &
 *   Tibshirani, "Regularization Paths for Generalized Linear Models via Coordinate
 *   Descent", JSS 2010); the logistic loss by newGLMNET (Yuan, Ho & Lin, JMLR 2012),
 *   an epoch being one of its iterations.
 * After every epoch the objectives and the duality gap (MODELS.md 2.3 and 4.4) are
 * evaluated from w(alpha) or X w recomputed from scratch, so rounding drift in the
 * incrementally maintained vectors never enters the certificate; for lasso and
 * elastic net only after the epochs the hooks' certify asks for (gap_every), and
 * their residual X w - y, kept through all the epochs, is not touched by it, so
 * that their steps are the same whatever the schedule.
 */
#include "config.h"

#include "st_glm_model.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define ST_GLM_MAX_HALVINGS 40

/* a CSR view of the problem (the dense input copied into CSR) and its CSC transpose */
typedef struct {
    int64_t         n, d;
    const int64_t  *rp;
    const uint32_t *ci;
    const double   *v;
    const double   *y;
    const double   *c;
    int64_t        *own_rp;   /* allocations, when the input was dense */
    uint32_t       *own_ci;
    double         *own_v;
    int64_t        *cp;       /* CSC (primal models) */
    uint32_t       *ri;       /* (rows below 2^32: st_glm_serial_check) */
    double         *cv;
} st_glm_serial_data_t;

const char *st_glm_serial_check(const st_glm_model_t *model,
                                const st_glm_serial_problem_t *prob,
                                const st_glm_serial_params_t *params)
{
    const char *msg;
    int64_t i, k;

    if (model == NULL || prob == NULL || params == NULL) {
        return "NULL model, problem or parameters";
    }
    msg = st_glm_model_check(model, params->lambda, params->eta, params->eps);
    if (msg != NULL) {
        return msg;
    }
    if (params->max_epochs < 0 || !(params->tol >= 0.0)) {
        return "max_epochs and tol must be >= 0";
    }
    if (prob->n <= 0 || prob->d <= 0 || prob->d > (int64_t)UINT32_MAX || prob->y == NULL ||
        prob->values == NULL) {
        return "the problem needs n > 0 examples, 0 < d <= 2^32 - 1 features, y and values";
    }
    if (model->form == ST_GLM_FORM_PRIMAL && prob->n > (int64_t)UINT32_MAX) {
        return "the L1 models need n <= 2^32 - 1 examples (as across ranks)";
    }
    if (prob->indptr != NULL) {
        if (prob->indices == NULL || prob->indptr[0] != 0) {
            return "CSR: indices missing or indptr[0] != 0";
        }
        for (i = 0; i < prob->n; i++) {
            if (prob->indptr[i + 1] < prob->indptr[i]) {
                return "CSR: indptr decreases";
            }
            for (k = prob->indptr[i]; k < prob->indptr[i + 1]; k++) {
                if ((int64_t)prob->indices[k] >= prob->d) {
                    return "CSR: a column index is >= d";
                }
                if (!isfinite(prob->values[k])) {
                    return "a value is not finite";
                }
            }
        }
    } else {
        for (k = 0; k < prob->n * prob->d; k++) {
            if (!isfinite(prob->values[k])) {
                return "a value is not finite";
            }
        }
    }
    for (i = 0; i < prob->n; i++) {
        if (!st_glm_model_label_ok(model, prob->y[i])) {
            return model->classification ? "labels must be +1 or -1" : "labels must be finite";
        }
        if (prob->weights != NULL && !(prob->weights[i] > 0.0 && isfinite(prob->weights[i]))) {
            return "weights must be finite and > 0";
        }
    }
    return NULL;
}

static void st_glm_serial_data_free(st_glm_serial_data_t *data)
{
    free(data->own_rp);
    free(data->own_ci);
    free(data->own_v);
    free(data->cp);
    free(data->ri);
    free(data->cv);
}

static st_status_t st_glm_serial_data_init(const st_glm_serial_problem_t *prob, int csc,
                                           st_glm_serial_data_t *data)
{
    int64_t n = prob->n, d = prob->d, i, j, k, nnz, p;

    memset(data, 0, sizeof(*data));
    data->n = n;
    data->d = d;
    data->y = prob->y;
    data->c = prob->weights;
    if (prob->indptr != NULL) {
        data->rp = prob->indptr;
        data->ci = prob->indices;
        data->v  = prob->values;
    } else {
        data->own_rp = malloc((size_t)(n + 1) * sizeof(int64_t));
        data->own_ci = malloc((size_t)(n * d) * sizeof(uint32_t));
        data->own_v  = malloc((size_t)(n * d) * sizeof(double));
        if (data->own_rp == NULL || data->own_ci == NULL || data->own_v == NULL) {
            goto err_free;
        }
        data->own_rp[0] = 0;
        for (i = 0, k = 0; i < n; i++) {
            for (j = 0; j < d; j++) {
                if (prob->values[i * d + j] != 0.0) {
                    data->own_ci[k]  = (uint32_t)j;
                    data->own_v[k++] = prob->values[i * d + j];
                }
            }
            data->own_rp[i + 1] = k;
        }
        data->rp = data->own_rp;
        data->ci = data->own_ci;
        data->v  = data->own_v;
    }
    if (!csc) {
        return ST_OK;
    }

    nnz      = data->rp[n];
    data->cp = calloc((size_t)d + 1, sizeof(int64_t));
    data->ri = malloc((size_t)(nnz > 0 ? nnz : 1) * sizeof(uint32_t));
    data->cv = malloc((size_t)(nnz > 0 ? nnz : 1) * sizeof(double));
    if (data->cp == NULL || data->ri == NULL || data->cv == NULL) {
        goto err_free;
    }
    for (k = 0; k < nnz; k++) {
        data->cp[data->ci[k] + 1]++;
    }
    for (j = 0; j < d; j++) {
        data->cp[j + 1] += data->cp[j];
    }
    for (i = 0; i < n; i++) {            /* rows in order: each column's rows ascend */
        for (k = data->rp[i]; k < data->rp[i + 1]; k++) {
            j = data->ci[k];
            p = data->cp[j]++;
            data->ri[p] = (uint32_t)i;
            data->cv[p] = data->v[k];
        }
    }
    for (j = d; j > 0; j--) {
        data->cp[j] = data->cp[j - 1];
    }
    data->cp[0] = 0;
    return ST_OK;

err_free:
    st_glm_serial_data_free(data);
    return ST_ERR_NO_MEMORY;
}

static double st_glm_serial_weight(const st_glm_serial_data_t *data, int64_t i)
{
    return (data->c != NULL) ? data->c[i] : 1.0;
}

static double st_glm_serial_row_dot(const st_glm_serial_data_t *data, int64_t i,
                                    const double *w)
{
    return st_glm_gather_dot(data->ci, data->v, data->rp[i], data->rp[i + 1], w, NULL);
}

/* z = X w */
static void st_glm_serial_margins(const st_glm_serial_data_t *data, const double *w, double *z)
{
    int64_t i;

    for (i = 0; i < data->n; i++) {
        z[i] = st_glm_serial_row_dot(data, i, w);
    }
}

/* splitmix64 */
static uint64_t st_glm_serial_rand(uint64_t *state)
{
    uint64_t x = (*state += 0x9e3779b97f4a7c15ULL);

    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

/* ---- L2 models: SDCA ---- */

/* w = w(alpha) = (1/(lambda n)) sum_i alpha_i x_i, recomputed; then the objectives */
static void st_glm_serial_dual_eval(const st_glm_model_t *model, const st_glm_serial_data_t *data,
                                    double lambda, double eps, const double *alpha, double *w,
                                    double *z, st_glm_objectives_t *obj)
{
    double scale = 1.0 / (lambda * (double)data->n), sq = 0.0;
    int64_t i, j, k;

    memset(w, 0, (size_t)data->d * sizeof(double));
    for (i = 0; i < data->n; i++) {
        for (k = data->rp[i]; k < data->rp[i + 1]; k++) {
            w[data->ci[k]] += alpha[i] * data->v[k];
        }
    }
    for (j = 0; j < data->d; j++) {
        w[j] *= scale;
        sq   += w[j] * w[j];
    }
    st_glm_serial_margins(data, w, z);
    st_glm_dual_objectives(st_glm_loss_sum(model, data->n, z, data->y, data->c, eps),
                           st_glm_neg_conj_sum(model, data->n, alpha, data->y, data->c, eps), sq,
                           data->n, lambda, obj);
}

static st_status_t st_glm_serial_dual(const st_glm_model_t *model,
                                      const st_glm_serial_data_t *data,
                                      const st_glm_serial_params_t *params, double *w,
                                      double *alpha, st_glm_objectives_t *trace, int *epochs)
{
    int64_t n = data->n, i, j, k, t;
    double *q, *z, scale = 1.0 / (params->lambda * (double)n), delta, zi, sq;
    int64_t *perm;
    uint64_t rng = params->seed;
    st_glm_objectives_t obj;
    int epoch;

    q    = malloc((size_t)n * sizeof(double));
    z    = malloc((size_t)n * sizeof(double));
    perm = malloc((size_t)n * sizeof(int64_t));
    if (q == NULL || z == NULL || perm == NULL) {
        free(q);
        free(z);
        free(perm);
        return ST_ERR_NO_MEMORY;
    }
    for (i = 0; i < n; i++) {
        for (sq = 0.0, k = data->rp[i]; k < data->rp[i + 1]; k++) {
            sq += data->v[k] * data->v[k];
        }
        q[i]     = sq * scale;
        perm[i]  = i;
        alpha[i] = 0.0;
    }
    st_glm_serial_dual_eval(model, data, params->lambda, params->eps, alpha, w, z, &obj);
    if (trace != NULL) {
        trace[0] = obj;
    }
    for (epoch = 1; epoch <= params->max_epochs; epoch++) {
        if (obj.gap <= params->tol * fabs(obj.primal)) {
            break;
        }
        if (params->shuffle) {
            for (t = n - 1; t > 0; t--) {
                j       = (int64_t)(st_glm_serial_rand(&rng) % (uint64_t)(t + 1));
                i       = perm[t];
                perm[t] = perm[j];
                perm[j] = i;
            }
        }
        for (t = 0; t < n; t++) {
            i     = perm[t];
            zi    = st_glm_serial_row_dot(data, i, w);
            delta = model->dual_step(data->y[i], st_glm_serial_weight(data, i), zi, q[i],
                                     params->eps, &alpha[i]);
            if (delta != 0.0) {
                for (k = data->rp[i]; k < data->rp[i + 1]; k++) {
                    w[data->ci[k]] += delta * scale * data->v[k];
                }
            }
        }
        st_glm_serial_dual_eval(model, data, params->lambda, params->eps, alpha, w, z, &obj);
        if (trace != NULL) {
            trace[epoch] = obj;
        }
    }
    *epochs = epoch - 1;
    free(q);
    free(z);
    free(perm);
    return ST_OK;
}

/* ---- L1 models: cyclic coordinate descent ---- */

/* z = X w recomputed; grad = X^T (c phi'(z)) / n (one pass over the rows: each row's
 * gradient term while the row is in cache; a second pass, over the columns, to gather
 * grad took c20k's every-epoch lasso 1.1-1.2x longer); the objectives */
static void st_glm_serial_primal_eval(const st_glm_model_t *model,
                                      const st_glm_serial_data_t *data, double lambda,
                                      double eta, const double *w, double *z, double *grad,
                                      st_glm_objectives_t *obj)
{
    st_glm_reg_sums_t sums;
    double u, scale;
    int64_t i, k;

    memset(grad, 0, (size_t)data->d * sizeof(double));
    for (i = 0; i < data->n; i++) {
        z[i] = st_glm_serial_row_dot(data, i, w);
        u    = st_glm_serial_weight(data, i) * model->dloss(z[i], data->y[i], 0.0) /
               (double)data->n;
        for (k = data->rp[i]; k < data->rp[i + 1]; k++) {
            grad[data->ci[k]] += u * data->v[k];
        }
    }
    st_glm_reg_sums(data->d, w, grad, lambda, eta, &sums);
    scale = st_glm_dual_scale(&sums, lambda, eta);
    st_glm_primal_objectives(st_glm_loss_sum(model, data->n, z, data->y, data->c, 0.0),
                             st_glm_grad_conj_sum(model, data->n, z, data->y, data->c, 1.0, 0.0),
                             (scale < 1.0) ? st_glm_grad_conj_sum(model, data->n, z, data->y,
                                                                  data->c, scale, 0.0) : 0.0,
                             &sums, data->n, lambda, eta, 0.0, obj);
}

/* the squared-loss models' coordinate descent: each feature's curvature
 * h_j = sum_i c_i x_ij^2 / n, fixed, and the residual r = X w - y, kept through the
 * epochs (as scikit-learn's coordinate descent keeps it): no pass over the rows
 * between two epochs, and the steps are the same whatever epochs compute the
 * certificate (which recomputes X w for itself) */
typedef struct {
    double *h;       /* d */
    double *r;       /* n */
    int     own_r;   /* r is ours to free (else the caller's: hooks->resid) */
    int     unit;    /* every c_i is 1 */
} st_glm_sqcd_t;

static void st_glm_serial_sqcd_init(const st_glm_serial_data_t *data, st_glm_sqcd_t *cd)
{
    double inv_n = 1.0 / (double)data->n, h;
    int64_t i, j, k;

    for (cd->unit = 1, i = 0; i < data->n; i++) {
        cd->unit = cd->unit && (st_glm_serial_weight(data, i) == 1.0);
    }
    for (j = 0; j < data->d; j++) {
        for (h = 0.0, k = data->cp[j]; k < data->cp[j + 1]; k++) {
            h += st_glm_serial_weight(data, data->ri[k]) * data->cv[k] * data->cv[k];
        }
        cd->h[j] = h * inv_n;
    }
}

/* one epoch, cyclic, each coordinate's exact step on the squared loss */
static void st_glm_serial_sqcd_epoch(const st_glm_serial_data_t *data, st_glm_sqcd_t *cd,
                                     double lambda, double eta, double *w)
{
    const uint32_t *ri = data->ri;
    const double *cv = data->cv;
    double inv_n = 1.0 / (double)data->n, *r = cd->r, g, wn, delta;
    int64_t j, k;

    for (j = 0; j < data->d; j++) {
        g = st_glm_gather_dot(ri, cv, data->cp[j], data->cp[j + 1], r,
                              cd->unit ? NULL : data->c);
        wn    = w[j];
        delta = st_glm_prox_step(g * inv_n, cd->h[j], lambda, eta, &wn);
        if (delta == 0.0) {
            continue;
        }
        w[j] = wn;
        for (k = data->cp[j]; k < data->cp[j + 1]; k++) {
            r[ri[k]] += delta * cv[k];
        }
    }
}

/* newGLMNET's work arrays (the line-search models) */
typedef struct {
    double  *dd;     /* n: c_i phi''(z_i) / n */
    double  *xd;     /* n: X d */
    double  *dir;    /* d: the direction d */
    double  *hdiag;  /* d: the quadratic model's diagonal */
    int64_t *act;    /* d: the features that may move this iteration */
} st_glm_glmnet_t;

/*
 * L1 models with a line search (l1-logistic, l1-sqsvm): one iteration of newGLMNET (Yuan, Ho &
 * Lin, "An Improved GLMNET for L1-regularized Logistic Regression", JMLR 2012). The
 * loss's quadratic model at w, g.d + d^T X^T D X d / 2 (D_ii = c_i phi''(z_i) / n),
 * plus lambda R(w + d), is minimized over d by cyclic coordinate descent on the
 * features that may move (w_j != 0, or |g_j| > lambda eta; the others stay at 0 this
 * iteration, and the next iteration's gradient frees them), until the model's
 * minimum-norm subgradient is a tenth of the objective's at w; then an Armijo search
 * along d. Cyclic coordinate descent on the objective itself (one Newton step per
 * coordinate) zig-zags where features are correlated: on a 20000 x 65535 criteo-like
 * set at lambda 5e-5 it had not certified a relative gap of 1e-3 after 200 epochs.
 * Nothing is carried from one iteration to the next but w, so a resumed run takes the
 * same steps. @a z and @a grad are the margins and the loss's gradient at w.
 */
static void st_glm_serial_glmnet(const st_glm_model_t *model, const st_glm_serial_data_t *data,
                                 double lambda, double eta, st_glm_glmnet_t *ws, double *w,
                                 double *z, const double *grad)
{
    st_glm_csc_t X = {data->d, data->cp, data->ri, data->cv};
    double pred, diff, t;
    int64_t i, j, a, nact;
    int s;

    for (i = 0; i < data->n; i++) {
        ws->dd[i] = st_glm_serial_weight(data, i) * model->d2loss(z[i], data->y[i], 0.0) /
                    (double)data->n;
        ws->xd[i] = 0.0;
    }
    nact = st_glm_prox_newton_dir(&X, ws->dd, grad, w, lambda, eta, ws->dir, ws->hdiag,
                                  ws->act, ws->xd);
    /* the line search along d */
    for (pred = 0.0, a = 0; a < nact; a++) {
        j     = ws->act[a];
        pred += st_glm_prox_decrease(grad[j], lambda, eta, w[j], ws->dir[j]);
    }
    if (!(pred < 0.0)) {
        return;   /* no descent left in the model */
    }
    for (t = 1.0, s = 0; s < ST_GLM_MAX_HALVINGS; s++, t *= ST_GLM_ARMIJO_SHRINK) {
        diff  = st_glm_loss_diff_sum(model, data->n, z, t, ws->xd, data->y, data->c, 0.0);
        diff /= (double)data->n;
        for (a = 0; a < nact; a++) {
            j     = ws->act[a];
            diff += lambda * (st_glm_reg_coord(w[j] + t * ws->dir[j], eta) -
                              st_glm_reg_coord(w[j], eta));
        }
        if (diff <= ST_GLM_ARMIJO_SIGMA * t * pred) {
            break;
        }
    }
    if (s == ST_GLM_MAX_HALVINGS) {
        return;   /* no decrease found: w stays */
    }
    for (a = 0; a < nact; a++) {
        j     = ws->act[a];
        w[j] += t * ws->dir[j];
    }
    for (i = 0; i < data->n; i++) {
        z[i] += t * ws->xd[i];
    }
}

static st_status_t st_glm_serial_primal(const st_glm_model_t *model,
                                        const st_glm_serial_data_t *data,
                                        const st_glm_serial_params_t *params,
                                        const st_glm_serial_hooks_t *hooks, double *w,
                                        double *alpha, st_glm_objectives_t *trace, int *epochs)
{
    double eta = st_glm_model_eta(model, params->eta), *z, *grad, ci;
    st_glm_objectives_t obj;
    st_glm_glmnet_t ws;
    st_glm_sqcd_t cd;
    st_status_t status = ST_OK;
    int64_t i;
    int epoch, certified, glmnet = model->line_search;

    memset(&ws, 0, sizeof(ws));
    memset(&cd, 0, sizeof(cd));
    z    = malloc((size_t)data->n * sizeof(double));
    grad = malloc((size_t)data->d * sizeof(double));
    if (!glmnet) {   /* lasso, elastic net: the squared loss */
        cd.h     = malloc((size_t)data->d * sizeof(double));
        cd.own_r = (hooks == NULL || hooks->resid == NULL);
        cd.r     = cd.own_r ? malloc((size_t)data->n * sizeof(double)) : hooks->resid;
    }
    if (glmnet) {
        ws.dd    = malloc((size_t)data->n * sizeof(double));
        ws.xd    = malloc((size_t)data->n * sizeof(double));
        ws.dir   = malloc((size_t)data->d * sizeof(double));
        ws.hdiag = malloc((size_t)data->d * sizeof(double));
        ws.act   = malloc((size_t)data->d * sizeof(int64_t));
    }
    if (z == NULL || grad == NULL || (glmnet && (ws.dd == NULL || ws.xd == NULL ||
                                                 ws.dir == NULL || ws.hdiag == NULL ||
                                                 ws.act == NULL)) ||
        (!glmnet && (cd.h == NULL || cd.r == NULL))) {
        status = ST_ERR_NO_MEMORY;
        goto out;
    }
    if (!glmnet) {
        st_glm_serial_sqcd_init(data, &cd);
    }
    if (hooks != NULL && hooks->w0 != NULL) {
        if (w != hooks->w0) {   /* (the caller's may be w itself) */
            memcpy(w, hooks->w0, (size_t)data->d * sizeof(double));
        }
    } else {
        memset(w, 0, (size_t)data->d * sizeof(double));
    }
    st_glm_serial_primal_eval(model, data, params->lambda, eta, w, z, grad, &obj);
    if (!glmnet && (cd.own_r || !hooks->resid_set)) {
        for (i = 0; i < data->n; i++) {
            cd.r[i] = z[i] - data->y[i];
        }
    }
    if (trace != NULL) {
        trace[0] = obj;
    }
    if (hooks != NULL && hooks->start != NULL) {
        *hooks->start = obj;
    }
    certified = glmnet || hooks == NULL || hooks->certify == NULL ||
                hooks->certify(hooks->arg, 0);
    for (epoch = 1; epoch <= params->max_epochs; epoch++) {
        if (certified && obj.gap <= params->tol * fabs(obj.primal)) {
            break;
        }
        if (glmnet) {
            st_glm_serial_glmnet(model, data, params->lambda, eta, &ws, w, z, grad);
        } else {
            st_glm_serial_sqcd_epoch(data, &cd, params->lambda, eta, w);
        }
        certified = glmnet || hooks == NULL || hooks->certify == NULL ||
                    epoch == params->max_epochs || hooks->certify(hooks->arg, epoch);
        if (certified) {
            st_glm_serial_primal_eval(model, data, params->lambda, eta, w, z, grad, &obj);
        }
        if (trace != NULL) {
            trace[epoch] = obj;   /* (the last certificate, where none was computed) */
        }
        if (hooks != NULL && hooks->epoch_done != NULL &&
            (status = hooks->epoch_done(hooks->arg, epoch, w, certified ? &obj : NULL)) !=
                    ST_OK) {
            break;
        }
    }
    *epochs = epoch - 1;
    for (i = 0; alpha != NULL && i < data->n; i++) {
        ci       = st_glm_serial_weight(data, i);
        alpha[i] = -ci * model->dloss(z[i], data->y[i], 0.0);
    }
out:
    free(z);
    free(grad);
    free(ws.dd);
    free(ws.xd);
    free(ws.dir);
    free(ws.hdiag);
    free(ws.act);
    free(cd.h);
    if (cd.own_r) {
        free(cd.r);
    }
    return status;
}

st_status_t st_glm_serial_train(const st_glm_model_t *model,
                                const st_glm_serial_problem_t *prob,
                                const st_glm_serial_params_t *params, double *w_p,
                                double *alpha_p, st_glm_objectives_t *trace_p, int *epochs_p)
{
    return st_glm_serial_train_hooked(model, prob, params, NULL, w_p, alpha_p, trace_p,
                                      epochs_p);
}

st_status_t st_glm_serial_train_hooked(const st_glm_model_t *model,
                                       const st_glm_serial_problem_t *prob,
                                       const st_glm_serial_params_t *params,
                                       const st_glm_serial_hooks_t *hooks, double *w_p,
                                       double *alpha_p, st_glm_objectives_t *trace_p,
                                       int *epochs_p)
{
    st_glm_serial_data_t data;
    st_status_t status;
    double *w, *alpha;
    int epochs = 0;

    if (st_glm_serial_check(model, prob, params) != NULL || w_p == NULL) {
        return ST_ERR_INVALID_PARAM;
    }
    status = st_glm_serial_data_init(prob, model->form == ST_GLM_FORM_PRIMAL, &data);
    if (status != ST_OK) {
        return status;
    }
    w     = malloc((size_t)prob->d * sizeof(double));
    alpha = malloc((size_t)prob->n * sizeof(double));
    if (w == NULL || alpha == NULL) {
        status = ST_ERR_NO_MEMORY;
        goto out_free;
    }
    if (model->form == ST_GLM_FORM_DUAL) {
        status = st_glm_serial_dual(model, &data, params, w, alpha, trace_p, &epochs);
    } else {
        status = st_glm_serial_primal(model, &data, params, hooks, w, alpha, trace_p, &epochs);
    }
    if (status == ST_OK) {
        memcpy(w_p, w, (size_t)prob->d * sizeof(double));
        if (alpha_p != NULL) {
            memcpy(alpha_p, alpha, (size_t)prob->n * sizeof(double));
        }
        if (epochs_p != NULL) {
            *epochs_p = epochs;
        }
    }

out_free:
    free(w);
    free(alpha);
    st_glm_serial_data_free(&data);
    return status;
}
