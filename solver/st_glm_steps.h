/*
 * The dual coordinate steps of the L2 models (MODELS.md 3), shared by the CPU
 * solver (solver/st_glm_model.c, through the model table) and the GPU solver's
 * kernel (cuda/st_glm_gpu_kernels.cuh): one definition, so both take the same
 * steps. Static inline; under nvcc also __device__. Each step takes the label y,
 * the example's weight c, the margin z = x_i . u and the curvature q of the
 * local subproblem, moves *alpha_p to the coordinate's maximizer and returns the
 * change.
 */
#ifndef ST_GLM_STEPS_H
#define ST_GLM_STEPS_H

#ifdef __CUDACC__
#define ST_GLM_HD static inline __host__ __device__
#else
#define ST_GLM_HD static inline
#endif

#ifndef ST_CUDA_EMULATE
#include <float.h>
#include <math.h>
#else
#include <cfloat>
#include <cmath>
#endif

/* the steps, by number (the GPU kernel's argument; st_glm_model.c maps its kinds) */
#define ST_GLM_STEP_LOGISTIC 0
#define ST_GLM_STEP_HINGE    1
#define ST_GLM_STEP_SQHINGE  2
#define ST_GLM_STEP_SQUARED  3
#define ST_GLM_STEP_SVR      4   /* epsilon-insensitive (L1-loss SVR) */
#define ST_GLM_STEP_SQSVR    5   /* squared epsilon-insensitive (L2-loss SVR) */

/* logistic dual Newton: iteration cap and the relative step that ends it */
#define ST_GLM_NEWTON_MAX_ITERS 100
#define ST_GLM_NEWTON_TOL       1e-11
#define ST_GLM_NEWTON_WARM_ITERS 6
#define ST_GLM_NEWTON_WARM_TOL   1e-4
#define ST_GLM_HALLEY_WARM_TOL   1e-3

/* 1 / (1 + e^-z), without overflow */
ST_GLM_HD double st_glm_sigmoid_of(double z)
{
    double e;

    if (z >= 0) {
        return 1.0 / (1.0 + exp(-z));
    }
    e = exp(z);
    return e / (1.0 + e);
}

ST_GLM_HD double st_glm_clamp(double x, double lo, double hi)
{
    return (x < lo) ? lo : ((x > hi) ? hi : x);
}

/* g(u) = log(u / (c - u)) + s + q (u - u0): increasing on (0, c). One log of the
 * ratio: u <= c/2 here (the solver folds the interval), so c - u >= c/2 and the
 * ratio is exact to an ulp; down to u = DBL_MIN it stays in range. */
ST_GLM_HD double st_glm_logit_g(double u, double c, double s, double q, double u0)
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
ST_GLM_HD double st_glm_logistic_root(double c, double m, double q, double beta, int *iters_p)
{
    double half = 0.5 * c, s, u0, ufloor, lo, hi, glo, ghi, cand[2], gc, dt, du, un, ul, u, b;
    double cross, iu, ic, inv, t, corr;
    int flip, it = 0, k, halley;

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
    /* Warm start. Once training nears the optimum, beta is near the new root, and a
       Newton-type iteration in u from u0, one log per step, gets there in two or three
       steps where the bracket below costs six or more logs and exps. Each step is
       Halley's, -t / (1 - t g''/(2 g')) with t = g/g' the Newton step: g'' = 1/(c-u)^2 -
       1/u^2 costs no log, and the error after a step du is then about
       |g'''/(6 g') - g''^2/(4 g'^2)| du^3 <= 0.92 du^3 / u^2 (on (0, c/2]: g' >= 1/u,
       -1/u^2 <= g'' <= 0, g''' <= 4/u^3), so a step below ST_GLM_HALLEY_WARM_TOL u
       leaves about 1e-9 u. Far below the root the bend would more than double the
       Newton step; there (corr < 1/2) the step is Newton's, which lands at or below the
       root (g is concave) and, below ST_GLM_NEWTON_WARM_TOL u, leaves at most about
       2 du^2 / u < 2e-8 u. Either is the exact root for the ascent: the subproblem is
       flat at its maximum, so its value is within g' err^2 / 2 (about 2e-16 u) of the
       maximum, below its rounding, and stopping there saves the step that would confirm
       the next digits. Halley's steps took 0.87-0.95x the instructions of Newton's,
       logs included (bench/RESULTS.md). Steps that leave (ufloor, c/2) or do not settle
       in ST_GLM_NEWTON_WARM_ITERS go to the bracket. */
    if (u0 > ufloor && u0 < half) {
        for (it = 1, u = u0; it <= ST_GLM_NEWTON_WARM_ITERS; it++) {
            gc  = st_glm_logit_g(u, c, s, q, u0);
            iu  = 1.0 / u;
            ic  = 1.0 / (c - u);
            inv = 1.0 / (iu + ic + q);
            t   = gc * inv;   /* the Newton step is -t */
            /* g''/g' = (ic - iu)(ic + iu) inv; in this order nothing overflows:
               |t (ic - iu)| <= |g| and (iu + ic) inv <= 1 */
            corr   = 1.0 - 0.5 * t * (ic - iu) * ((iu + ic) * inv);
            halley = (corr >= 0.5);
            du     = halley ? -t / corr : -t;
            u += du;
            if (!(u > ufloor && u < half)) {
                break;
            }
            if (fabs(du) <= (halley ? ST_GLM_HALLEY_WARM_TOL : ST_GLM_NEWTON_WARM_TOL) * u) {
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
    cand[0] = c * st_glm_sigmoid_of(-s);
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

ST_GLM_HD double st_glm_logistic_step(double y, double c, double z, double q, double *alpha_p)
{
    double old = *alpha_p, beta = st_glm_clamp(old * y, 0.0, c), anew;

    anew     = y * st_glm_logistic_root(c, y * z, q, beta, NULL);
    *alpha_p = anew;
    return anew - old;
}

/* max_b b - (b - beta) m - (q/2)(b - beta)^2 on [0, c]: b = clip(beta + (1 - m)/q) */
ST_GLM_HD double st_glm_hinge_step(double y, double c, double z, double q, double *alpha_p)
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

/* b = max(0, beta + (1 - m - beta/(2c)) / (q + 1/(2c))) */
ST_GLM_HD double st_glm_sqhinge_step(double y, double c, double z, double q, double *alpha_p)
{
    double old = *alpha_p, beta = fmax(0.0, old * y), m = y * z, b, anew;

    b        = beta + (1.0 - m - beta / (2.0 * c)) / (q + 1.0 / (2.0 * c));
    anew     = y * fmax(0.0, b);
    *alpha_p = anew;
    return anew - old;
}

/* a = alpha + (y - z - alpha/c) / (q + 1/c) */
ST_GLM_HD double st_glm_squared_step(double y, double c, double z, double q, double *alpha_p)
{
    double old = *alpha_p, delta;

    delta    = (y - z - old / c) / (q + 1.0 / c);
    *alpha_p = old + delta;
    return *alpha_p - old;
}

/* sign(t) max(0, |t| - e): soft thresholding */
ST_GLM_HD double st_glm_soft(double t, double e)
{
    return (t > e) ? t - e : ((t < -e) ? t + e : 0.0);
}

/* The SVR models' -phi*(-a) = a y - eps |a| (- a^2/(4c) squared): with t = y - z + q
 * alpha, max_a a t - eps |a| - (q/2 + [1/(4c)]) a^2 is a = S(t, eps) / (q [+ 1/(2c)]),
 * clipped to [-c, c] for the L1 loss (MODELS.md 3.2). */
ST_GLM_HD double st_glm_svr_step(double y, double c, double z, double q, double eps,
                                 double *alpha_p)
{
    double old = *alpha_p, d = y - z, anew;

    if (q > 0.0) {
        anew = st_glm_clamp(st_glm_soft(d + q * old, eps) / q, -c, c);
    } else if (d > eps) {   /* linear: a bound, or anything on a flat side */
        anew = c;
    } else if (d < -eps) {
        anew = -c;
    } else {
        anew = (d == eps) ? st_glm_clamp(old, 0.0, c)
                          : ((d == -eps) ? st_glm_clamp(old, -c, 0.0) : 0.0);
    }
    *alpha_p = anew;
    return anew - old;
}

ST_GLM_HD double st_glm_sqsvr_step(double y, double c, double z, double q, double eps,
                                   double *alpha_p)
{
    double old = *alpha_p, anew;

    anew     = st_glm_soft(y - z + q * old, eps) / (q + 1.0 / (2.0 * c));
    *alpha_p = anew;
    return anew - old;
}

/* the step of model @a step (ST_GLM_STEP_*); @a eps: the SVR models' epsilon */
ST_GLM_HD double st_glm_dual_step_of(int step, double y, double c, double z, double q,
                                     double eps, double *alpha_p)
{
    switch (step) {
    case ST_GLM_STEP_SVR:
        return st_glm_svr_step(y, c, z, q, eps, alpha_p);
    case ST_GLM_STEP_SQSVR:
        return st_glm_sqsvr_step(y, c, z, q, eps, alpha_p);
    case ST_GLM_STEP_LOGISTIC:
        return st_glm_logistic_step(y, c, z, q, alpha_p);
    case ST_GLM_STEP_HINGE:
        return st_glm_hinge_step(y, c, z, q, alpha_p);
    case ST_GLM_STEP_SQHINGE:
        return st_glm_sqhinge_step(y, c, z, q, alpha_p);
    default:
        return st_glm_squared_step(y, c, z, q, alpha_p);
    }
}

#endif /* ST_GLM_STEPS_H */
