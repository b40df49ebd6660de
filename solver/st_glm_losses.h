/*
 * The smooth L2 models' losses phi(z, y) (logistic, squared hinge, squared, squared
 * epsilon-insensitive), their derivatives, the difference phi(z + dz) - phi(z) without
 * cancellation, and the conjugate term of the duality gap, shared by the model table
 * (solver/st_glm_model.c) and method newton's row passes (cuda/st_glm_kernels.h: on
 * the CPU's threads or, on a GPU, st_glm_newton_rows): one definition, so both compute
 * the same. Static inline; under nvcc also __device__ (solver/st_glm_steps.h).
 */
#ifndef ST_GLM_LOSSES_H
#define ST_GLM_LOSSES_H

#include "st_glm_steps.h"

/* log(1 + e^x), without overflow */
ST_GLM_HD double st_glm_log1pexp_of(double x)
{
    if (x > 0) {
        return x + log1p(exp(-x));
    }
    return log1p(exp(x));
}

/* ---- logistic: phi = log(1 + exp(-y z)) ---- */

ST_GLM_HD double st_glm_logistic_loss(double z, double y)
{
    return st_glm_log1pexp_of(-y * z);
}

ST_GLM_HD double st_glm_logistic_dloss(double z, double y)
{
    return -y * st_glm_sigmoid_of(-y * z);
}

ST_GLM_HD double st_glm_logistic_d2loss(double z, double y)
{
    double e = exp(-fabs(y * z));

    return e / ((1.0 + e) * (1.0 + e));
}

/* log((1 + e^-(m+dm)) / (1 + e^-m)) = log1p(sigmoid(-m) expm1(-dm)), m = y z, dm = y dz */
ST_GLM_HD double st_glm_logistic_loss_diff(double z, double dz, double y)
{
    double m = y * z, dm = y * dz, a;

    /* log(1 + a), a = sigmoid(-m) (exp(-dm) - 1): exact for small steps. The plain
       difference where expm1 would overflow, and where a nears -1 (a misclassified
       row, m << 0, made right by a long step): there a's rounding is the whole answer
       (-INFINITY at a = -1), and the difference, a fall of more than log 2, is accurate */
    if (-dm <= 700.0 && (a = st_glm_sigmoid_of(-m) * expm1(-dm)) >= -0.5) {
        return log1p(a);
    }
    return st_glm_logistic_loss(z + dz, y) - st_glm_logistic_loss(z, y);
}

/* c H(beta / c), H the binary entropy in nats; -INFINITY outside [0, c] */
ST_GLM_HD double st_glm_logistic_neg_conj(double alpha, double y, double c)
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

/* ---- squared hinge: phi = max(0, 1 - y z)^2 ---- */

ST_GLM_HD double st_glm_sqhinge_loss(double z, double y)
{
    double r = fmax(0.0, 1.0 - y * z);

    return r * r;
}

ST_GLM_HD double st_glm_sqhinge_dloss(double z, double y)
{
    return -2.0 * y * fmax(0.0, 1.0 - y * z);
}

ST_GLM_HD double st_glm_sqhinge_d2loss(double z, double y)
{
    return (y * z <= 1.0) ? 2.0 : 0.0;
}

/* phi(z + dz) - phi(z) without the cancellation of the difference: where both
 * sides are active, r1^2 - r0^2 = dm (dm - 2 r0) (r = 1 - y z, dm = y dz) */
ST_GLM_HD double st_glm_sqhinge_loss_diff(double z, double dz, double y)
{
    double r0 = 1.0 - y * z, dm = y * dz, r1 = r0 - dm, a, b;

    if (r0 > 0.0 && r1 > 0.0) {
        return dm * (dm - 2.0 * r0);
    }
    a = fmax(0.0, r0);
    b = fmax(0.0, r1);
    return b * b - a * a;
}

ST_GLM_HD double st_glm_sqhinge_neg_conj(double alpha, double y, double c)
{
    double beta = alpha * y;

    return (beta >= 0.0) ? beta - beta * beta / (4.0 * c) : -INFINITY;
}

/* ---- squared loss: phi = (z - y)^2 / 2 ---- */

ST_GLM_HD double st_glm_squared_loss(double z, double y)
{
    double r = z - y;

    return 0.5 * r * r;
}

ST_GLM_HD double st_glm_squared_dloss(double z, double y)
{
    return z - y;
}

ST_GLM_HD double st_glm_squared_d2loss(double z, double y)
{
    return 1.0;
}

ST_GLM_HD double st_glm_squared_loss_diff(double z, double dz, double y)
{
    return dz * ((z - y) + 0.5 * dz);
}

ST_GLM_HD double st_glm_squared_neg_conj(double alpha, double y, double c)
{
    return alpha * y - alpha * alpha / (2.0 * c);
}

/* ---- squared epsilon-insensitive: phi = max(0, |z - y| - eps)^2 (L2-loss SVR) ---- */

ST_GLM_HD double st_glm_sqsvr_loss(double z, double y, double eps)
{
    double u = fmax(0.0, fabs(z - y) - eps);

    return u * u;
}

ST_GLM_HD double st_glm_sqsvr_dloss(double z, double y, double eps)
{
    double r = z - y, u = fmax(0.0, fabs(r) - eps);

    return (r > 0.0) ? 2.0 * u : -2.0 * u;
}

/* the larger one-sided value at |z - y| = eps, as the squared hinge's at its kink */
ST_GLM_HD double st_glm_sqsvr_d2loss(double z, double y, double eps)
{
    return (fabs(z - y) >= eps) ? 2.0 : 0.0;
}

/* where both sides are active on the same side of y, u1^2 - u0^2 = s dz (s dz + 2 u0),
 * u = |r| - eps, r = z - y, s = sign(r0) */
ST_GLM_HD double st_glm_sqsvr_loss_diff(double z, double dz, double y, double eps)
{
    double r0 = z - y, r1 = r0 + dz, u0 = fabs(r0) - eps, u1 = fabs(r1) - eps, sdz;

    if (u0 > 0.0 && u1 > 0.0 && (r0 > 0.0) == (r1 > 0.0)) {
        sdz = (r0 > 0.0) ? dz : -dz;
        return sdz * (sdz + 2.0 * u0);
    }
    u0 = fmax(0.0, u0);
    u1 = fmax(0.0, u1);
    return u1 * u1 - u0 * u0;
}

/* inf_z alpha z + c phi(z) = alpha y - eps |alpha| - alpha^2 / (4c) */
ST_GLM_HD double st_glm_sqsvr_neg_conj(double alpha, double y, double c, double eps)
{
    return alpha * y - eps * fabs(alpha) - alpha * alpha / (4.0 * c);
}

/* Method newton's per-row terms of model @a step (ST_GLM_STEP_LOGISTIC, _SQHINGE,
 * _SQUARED or _SQSVR, the last with its @a eps) at margin @a z: c phi'(z) into *a,
 * c phi''(z) into *h (@a h NULL: not computed, as L-BFGS needs none; a constant NULL
 * folds the test away), c phi(z) into *loss and the conjugate term -phi*(-a) into
 * *conj */
ST_GLM_HD void st_glm_newton_terms(int step, double z, double y, double c, double eps,
                                   double *a, double *h, double *loss, double *conj)
{
    switch (step) {
    case ST_GLM_STEP_SQSVR:
        *a    = c * st_glm_sqsvr_dloss(z, y, eps);
        if (h != NULL) {
            *h = c * st_glm_sqsvr_d2loss(z, y, eps);
        }
        *loss = c * st_glm_sqsvr_loss(z, y, eps);
        *conj = st_glm_sqsvr_neg_conj(-*a, y, c, eps);
        break;
    case ST_GLM_STEP_LOGISTIC:
        *a    = c * st_glm_logistic_dloss(z, y);
        if (h != NULL) {
            *h = c * st_glm_logistic_d2loss(z, y);
        }
        *loss = c * st_glm_logistic_loss(z, y);
        *conj = st_glm_logistic_neg_conj(-*a, y, c);
        break;
    case ST_GLM_STEP_SQHINGE:
        *a    = c * st_glm_sqhinge_dloss(z, y);
        if (h != NULL) {
            *h = c * st_glm_sqhinge_d2loss(z, y);
        }
        *loss = c * st_glm_sqhinge_loss(z, y);
        *conj = st_glm_sqhinge_neg_conj(-*a, y, c);
        break;
    default:
        *a    = c * st_glm_squared_dloss(z, y);
        if (h != NULL) {
            *h = c * st_glm_squared_d2loss(z, y);
        }
        *loss = c * st_glm_squared_loss(z, y);
        *conj = st_glm_squared_neg_conj(-*a, y, c);
        break;
    }
}

/* c (phi(z + dz) - phi(z)) of model @a step */
ST_GLM_HD double st_glm_newton_loss_diff(int step, double z, double dz, double y, double c,
                                         double eps)
{
    switch (step) {
    case ST_GLM_STEP_SQSVR:
        return c * st_glm_sqsvr_loss_diff(z, dz, y, eps);
    case ST_GLM_STEP_LOGISTIC:
        return c * st_glm_logistic_loss_diff(z, dz, y);
    case ST_GLM_STEP_SQHINGE:
        return c * st_glm_sqhinge_loss_diff(z, dz, y);
    default:
        return c * st_glm_squared_loss_diff(z, dz, y);
    }
}

#endif /* ST_GLM_LOSSES_H */
