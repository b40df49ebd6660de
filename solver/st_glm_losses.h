/*
 * The smooth L2 models' losses phi(z, y) (logistic, squared hinge, squared), their
 * derivatives, the difference phi(z + dz) - phi(z) without cancellation, and the
 * conjugate term of the duality gap, shared by the model table (solver/st_glm_model.c)
 * and method newton's row passes (cuda/st_glm_kernels.h: on the CPU's threads or, on
 * a GPU, st_glm_newton_rows): one definition, so both compute the same. Static
 * inline; under nvcc also __device__ (solver/st_glm_steps.h).
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

/* Method newton's per-row terms of model @a step (ST_GLM_STEP_LOGISTIC, _SQHINGE or
 * _SQUARED) at margin @a z: c phi'(z) into *a, c phi''(z) into *h, c phi(z) into *loss
 * and the conjugate term -phi*(-a) into *conj */
ST_GLM_HD void st_glm_newton_terms(int step, double z, double y, double c, double *a, double *h,
                                   double *loss, double *conj)
{
    switch (step) {
    case ST_GLM_STEP_LOGISTIC:
        *a    = c * st_glm_logistic_dloss(z, y);
        *h    = c * st_glm_logistic_d2loss(z, y);
        *loss = c * st_glm_logistic_loss(z, y);
        *conj = st_glm_logistic_neg_conj(-*a, y, c);
        break;
    case ST_GLM_STEP_SQHINGE:
        *a    = c * st_glm_sqhinge_dloss(z, y);
        *h    = c * st_glm_sqhinge_d2loss(z, y);
        *loss = c * st_glm_sqhinge_loss(z, y);
        *conj = st_glm_sqhinge_neg_conj(-*a, y, c);
        break;
    default:
        *a    = c * st_glm_squared_dloss(z, y);
        *h    = c * st_glm_squared_d2loss(z, y);
        *loss = c * st_glm_squared_loss(z, y);
        *conj = st_glm_squared_neg_conj(-*a, y, c);
        break;
    }
}

/* c (phi(z + dz) - phi(z)) of model @a step */
ST_GLM_HD double st_glm_newton_loss_diff(int step, double z, double dz, double y, double c)
{
    switch (step) {
    case ST_GLM_STEP_LOGISTIC:
        return c * st_glm_logistic_loss_diff(z, dz, y);
    case ST_GLM_STEP_SQHINGE:
        return c * st_glm_sqhinge_loss_diff(z, dz, y);
    default:
        return c * st_glm_squared_loss_diff(z, dz, y);
    }
}

#endif /* ST_GLM_LOSSES_H */
