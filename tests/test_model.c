/*
 * Unit test of the GLM model layer (solver/st_glm_model*.c; the math is in solver/MODELS.md).
 *
 * 1. The table: kinds, CLI names, lookup (and its message), parameter and label checks.
 * 2. Losses: phi' and phi'' against central finite differences at many points (large |z|
 *    included), loss_diff against the direct difference, the sigmoid link.
 * 3. Conjugates: -phi*(-alpha) against a numerical inf over z of (alpha z + c phi(z)), the
 *    domain (-INFINITY outside), Fenchel-Young: equality at alpha = -c phi'(z), >= 0 elsewhere.
 * 4. Dual coordinate steps: against the maximizer found by bisection on the derivative and
 *    by golden-section search on the value, on a grid with huge |z|, tiny and huge q, alpha
 *    on the bounds, c != 1; the logistic Newton's iteration counts.
 * 5. The proximal coordinate step against a golden-section minimization and the 1-D KKT;
 *    the Armijo predicted decrease.
 * 6. Objective helpers: block sums merge; the Lipschitzed conjugate bounds the conjugate of
 *    the ball-restricted regularizer; hand-computed values.
 * 7. The serial solver on random problems (dense and CSR, with and without weights): the
 *    gap reaches 1e-10 relative, weak duality and the certificate hold at every epoch, and
 *    the optimum agrees with independent computations written here: the normal equations
 *    (Cholesky) for ridge, Newton's method for logistic and squared hinge, the KKT
 *    conditions for the SVM and the L1 models.
 *
 * Silent on success (run with -v for a summary on stdout); FAIL lines on stderr, exit 1.
 */
#include "config.h"

#include "st_glm_model.h"

#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int t_failures;
static int t_verbose;

static void t_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void t_fail(const char *fmt, ...)
{
    va_list ap;

    if (++t_failures > 200) {
        return;
    }
    va_start(ap, fmt);
    fprintf(stderr, "test_model: FAIL: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
}

static void t_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void t_note(const char *fmt, ...)
{
    va_list ap;

    if (!t_verbose) {
        return;
    }
    va_start(ap, fmt);
    vprintf(fmt, ap);
    printf("\n");
    va_end(ap);
}

/* ---- deterministic random numbers (xorshift64*) ---- */
static uint64_t t_rng = 88172645463325252ULL;

static double t_unif(void)
{
    t_rng ^= t_rng >> 12;
    t_rng ^= t_rng << 25;
    t_rng ^= t_rng >> 27;
    return (double)((t_rng * 2685821657736338717ULL) >> 11) * (1.0 / 9007199254740992.0);
}

static double t_gauss(void)
{
    double u = t_unif(), v = t_unif();

    return sqrt(-2.0 * log(u + 1e-300)) * cos(2.0 * M_PI * v);
}

static int t_close(double a, double b, double abs_tol, double rel_tol)
{
    return fabs(a - b) <= abs_tol + rel_tol * fmax(fabs(a), fabs(b));
}

static const st_glm_model_t *t_model(st_glm_model_kind_t kind)
{
    return st_glm_model_get(kind);
}

/* the SVR models' epsilon in these tests (the others take 0) */
#define T_EPS 0.3

static double t_eps(const st_glm_model_t *m)
{
    return (m->kind == ST_GLM_SVR || m->kind == ST_GLM_SQSVR) ? T_EPS : 0.0;
}

/* the models' losses, as written here: 0 logistic, 1 hinge, 2 squared hinge, 3 squared,
 * 4 epsilon-insensitive, 5 its square */
static int t_loss_of(st_glm_model_kind_t kind)
{
    switch (kind) {
    case ST_GLM_SVR:
        return 4;
    case ST_GLM_SQSVR:
        return 5;
    case ST_GLM_LOGISTIC:
    case ST_GLM_L1_LOGISTIC:
        return 0;
    case ST_GLM_HINGE:
        return 1;
    case ST_GLM_SQHINGE:
    case ST_GLM_L1_SQHINGE:
        return 2;
    default:
        return 3;
    }
}

/* ======================================================================================== */
/* 1. the table                                                                            */
/* ======================================================================================== */

static void t_check_table(void)
{
    static const char *names[ST_GLM_MODEL_COUNT] = {
        "logistic", "svm", "sqsvm", "ridge", "lasso", "l1-logistic", "elastic-net",
        "l1-sqsvm", "svr", "sqsvr"};
    const st_glm_model_t *m, *l;
    char err[256], upper[32];
    size_t k;
    int i;

    for (i = 0; i < ST_GLM_MODEL_COUNT; i++) {
        m = st_glm_model_get((st_glm_model_kind_t)i);
        if (m == NULL || (int)m->kind != i || strcmp(m->name, names[i])) {
            t_fail("st_glm_model_get(%d): %s", i, m ? m->name : "NULL");
            continue;
        }
        err[0] = '\0';
        l      = st_glm_model_lookup(names[i], err, sizeof(err));
        if (l != m || err[0] != '\0') {
            t_fail("lookup '%s' gave %s, err '%s'", names[i], l ? l->name : "NULL", err);
        }
        for (k = 0; names[i][k] != '\0' && k + 1 < sizeof(upper); k++) {
            upper[k] = (char)((names[i][k] >= 'a' && names[i][k] <= 'z') ? names[i][k] - 32
                                                                           : names[i][k]);
        }
        upper[k] = '\0';
        if (st_glm_model_lookup(upper, NULL, 0) != m) {
            t_fail("lookup '%s' (upper case) failed", upper);
        }
        if (strstr(st_glm_model_names(), names[i]) == NULL) {
            t_fail("st_glm_model_names() lacks %s", names[i]);
        }
        if (m->loss == NULL || m->dloss == NULL || m->d2loss == NULL || m->loss_diff == NULL ||
            m->neg_conj == NULL || m->dual_bounds == NULL || m->link == NULL ||
            m->description == NULL) {
            t_fail("%s: a NULL operation", m->name);
        }
        if (m->form == ST_GLM_FORM_DUAL) {
            if (m->dual_step == NULL || m->eta != 0.0 || m->line_search) {
                t_fail("%s: dual model with no step, eta %g or a line search", m->name, m->eta);
            }
        } else if (m->dual_step != NULL || !(m->eta == 1.0 || m->eta == ST_GLM_ETA_PARAM)) {
            t_fail("%s: primal model with a dual step or eta %g", m->name, m->eta);
        }
        if (m->classification != (t_loss_of(m->kind) < 3)) {
            t_fail("%s: classification %d", m->name, m->classification);
        }
        if ((m->line_search != 0) !=
            (m->kind == ST_GLM_L1_LOGISTIC || m->kind == ST_GLM_L1_SQHINGE)) {
            t_fail("%s: line_search %d", m->name, m->line_search);
        }
    }
    if (st_glm_model_get(ST_GLM_MODEL_COUNT) != NULL ||
        st_glm_model_get((st_glm_model_kind_t)-1) != NULL) {
        t_fail("st_glm_model_get accepts an out-of-range kind");
    }
    err[0] = '\0';
    if (st_glm_model_lookup("hinge-svm", err, sizeof(err)) != NULL ||
        strstr(err, "hinge-svm") == NULL || strstr(err, "elastic-net") == NULL) {
        t_fail("lookup of an unknown name: message '%s'", err);
    }
    if (st_glm_model_lookup("", err, sizeof(err)) != NULL ||
        st_glm_model_lookup(NULL, err, sizeof(err)) != NULL ||
        st_glm_model_lookup("logistic ", NULL, 0) != NULL) {
        t_fail("lookup accepts '', NULL or a trailing blank");
    }

    m = t_model(ST_GLM_ELASTIC_NET);
    if (st_glm_model_check(m, 0.1, 0.5, 0.0) != NULL ||
        st_glm_model_check(m, 0.1, 0.0, 0.0) != NULL ||
        st_glm_model_check(m, 0.1, 1.0, 0.0) != NULL ||
        st_glm_model_check(m, 0.1, 1.5, 0.0) == NULL ||
        st_glm_model_check(m, 0.1, -0.1, 0.0) == NULL ||
        st_glm_model_check(m, 0.1, NAN, 0.0) == NULL ||
        st_glm_model_check(m, 0.0, 0.5, 0.0) == NULL ||
        st_glm_model_check(m, -1.0, 0.5, 0.0) == NULL ||
        st_glm_model_check(m, INFINITY, 0.5, 0.0) == NULL ||
        st_glm_model_check(m, NAN, 0.5, 0.0) == NULL) {
        t_fail("st_glm_model_check(elastic-net) accepts or rejects wrongly");
    }
    if (st_glm_model_check(t_model(ST_GLM_LASSO), 0.1, 7.0, 0.0) != NULL ||
        st_glm_model_eta(t_model(ST_GLM_LASSO), 7.0) != 1.0 ||
        st_glm_model_eta(t_model(ST_GLM_LOGISTIC), 7.0) != 0.0 ||
        st_glm_model_eta(m, 0.25) != 0.25) {
        t_fail("eta: the models' own value must win over the parameter outside elastic-net");
    }
    if (st_glm_model_check(t_model(ST_GLM_SVR), 0.1, 0.5, 0.0) != NULL ||
        st_glm_model_check(t_model(ST_GLM_SQSVR), 0.1, 0.5, 2.0) != NULL ||
        st_glm_model_check(t_model(ST_GLM_SVR), 0.1, 0.5, -0.1) == NULL ||
        st_glm_model_check(t_model(ST_GLM_SQSVR), 0.1, 0.5, NAN) == NULL ||
        st_glm_model_check(t_model(ST_GLM_SQSVR), 0.1, 0.5, INFINITY) == NULL ||
        st_glm_model_check(t_model(ST_GLM_RIDGE), 0.1, 0.5, -1.0) != NULL) {
        t_fail("st_glm_model_check: the SVR models' epsilon accepted or refused wrongly");
    }
    if (!st_glm_model_label_ok(t_model(ST_GLM_HINGE), -1.0) ||
        st_glm_model_label_ok(t_model(ST_GLM_HINGE), 0.0) ||
        st_glm_model_label_ok(t_model(ST_GLM_LOGISTIC), 2.0) ||
        !st_glm_model_label_ok(t_model(ST_GLM_RIDGE), 2.5) ||
        st_glm_model_label_ok(t_model(ST_GLM_LASSO), NAN)) {
        t_fail("st_glm_model_label_ok");
    }
}

/* ======================================================================================== */
/* 2. losses and their derivatives                                                         */
/* ======================================================================================== */

static const double t_zs[] = {
    -1e4, -3000.0, -745.0, -700.0, -60.0, -20.0, -5.0, -2.0, -1.3, -0.9, -0.5, -1e-3, 0.0,
    1e-3, 0.4, 0.8, 1.25, 2.0, 3.7, 10.0, 36.0, 60.0, 700.0, 745.0, 3000.0, 1e4};

static void t_check_derivatives(void)
{
    static const double ycls[] = {1.0, -1.0}, yreg[] = {-2.5, 0.0, 1.7};
    const st_glm_model_t *m;
    const double *ys;
    double y, z, h, fd, an, an2, dz, direct, diff;
    int kind, ny, iy, loss;
    size_t k;

    for (kind = 0; kind < ST_GLM_MODEL_COUNT; kind++) {
        m    = t_model((st_glm_model_kind_t)kind);
        loss = t_loss_of(m->kind);
        ys   = m->classification ? ycls : yreg;
        ny   = m->classification ? 2 : 3;
        for (iy = 0; iy < ny; iy++) {
            y = ys[iy];
            for (k = 0; k < ST_ARRAY_SIZE(t_zs); k++) {
                z = t_zs[k];
                if (!m->classification) {
                    z = y + z / 7.0;   /* keep (z - y)^2 finite and varied */
                }
                h = 1e-4 * fmax(1.0, fabs(z));
                if ((loss == 1 || loss == 2) && fabs(y * z - 1.0) <= 2.0 * h) {
                    continue;  /* the kink */
                }
                if (loss >= 4 && fabs(fabs(z - y) - T_EPS) <= 2.0 * h) {
                    continue;  /* the kinks at |z - y| = eps */
                }
                an  = m->dloss(z, y, t_eps(m));
                an2 = m->d2loss(z, y, t_eps(m));
                if (!isfinite(m->loss(z, y, t_eps(m))) || !isfinite(an) || !isfinite(an2) ||
                    m->loss(z, y, t_eps(m)) < 0.0) {
                    t_fail("%s: phi(%g, %g) = %g, phi' %g, phi'' %g", m->name, z, y,
                           m->loss(z, y, t_eps(m)), an, an2);
                    continue;
                }
                fd = (m->loss(z + h, y, t_eps(m)) - m->loss(z - h, y, t_eps(m))) / (2.0 * h);
                if (!t_close(fd, an, 1e-9, 1e-6)) {
                    t_fail("%s: phi'(%g, %g) = %.17g, finite difference %.17g", m->name, z, y,
                           an, fd);
                }
                fd = (m->dloss(z + h, y, t_eps(m)) - m->dloss(z - h, y, t_eps(m))) / (2.0 * h);
                if (!t_close(fd, an2, 1e-9, 1e-6)) {
                    t_fail("%s: phi''(%g, %g) = %.17g, finite difference %.17g", m->name, z, y,
                           an2, fd);
                }
                if (an2 < 0.0 || an2 > m->smoothness) {
                    t_fail("%s: phi''(%g, %g) = %g outside [0, %g]", m->name, z, y, an2,
                           m->smoothness);
                }
                /* loss_diff: against the direct difference where that is accurate, and
                   against the second-order expansion where the step is tiny */
                for (dz = 0.5; dz > 1e-10; dz *= 1e-3) {
                    diff   = m->loss_diff(z, dz, y, t_eps(m));
                    direct = m->loss(z + dz, y, t_eps(m)) - m->loss(z, y, t_eps(m));
                    if (dz > 1e-3 &&
                        !t_close(diff, direct, 1e-12 * fmax(1.0, m->loss(z, y, t_eps(m))),
                                              1e-9)) {
                        t_fail("%s: loss_diff(%g, %g, %g) = %.17g, direct %.17g", m->name, z,
                               dz, y, diff, direct);
                    }
                    if (dz < 1e-6 && (loss == 0 || loss == 3) &&
                        !t_close(diff, an * dz + 0.5 * an2 * dz * dz, 1e-300, 1e-6 * dz)) {
                        t_fail("%s: loss_diff(%g, %g, %g) = %.17g, expansion %.17g", m->name,
                               z, dz, y, diff, an * dz + 0.5 * an2 * dz * dz);
                    }
                }
            }
        }
    }

    /* stable logistic values at the extremes */
    m = t_model(ST_GLM_LOGISTIC);
    if (m->loss(-1e4, 1.0, 0.0) != 1e4 || m->loss(1e4, 1.0, 0.0) != 0.0 ||
        !t_close(m->loss(0.0, -1.0, 0.0), log(2.0), 0.0, 1e-15) ||
        !t_close(m->loss(-40.0, 1.0, 0.0), 40.0 + exp(-40.0), 0.0, 1e-15) ||
        !t_close(m->loss(40.0, 1.0, 0.0), exp(-40.0), 0.0, 1e-14) ||
        m->dloss(-1e4, 1.0, 0.0) != -1.0 || m->dloss(1e4, 1.0, 0.0) != 0.0) {
        t_fail("logistic loss at the extremes: %g %g %g %g", m->loss(-1e4, 1.0, 0.0),
               m->loss(1e4, 1.0, 0.0), m->loss(40.0, 1.0, 0.0), m->dloss(-1e4, 1.0, 0.0));
    }
    /* a long step that makes a badly misclassified row right: the fall of its loss,
       finite (before: log1p(-1) = -inf, which a line search took for a decrease and
       accepted a step that raised the objective to 1e14: block proximal Newton, 3 ranks) */
    for (k = 0; k < 3; k++) {
        double zs[3] = {-40.0, -800.0, -3.0}, dzs[3] = {1e9, 3e8, 50.0};
        double d = m->loss_diff(zs[k], dzs[k], 1.0, 0.0);

        if (!isfinite(d) ||
            !t_close(d, m->loss(zs[k] + dzs[k], 1.0, 0.0) - m->loss(zs[k], 1.0, 0.0), 1e-12,
                     1e-12)) {
            t_fail("logistic loss_diff(%g, %g, 1) = %.17g, expected %.17g", zs[k], dzs[k], d,
                   m->loss(zs[k] + dzs[k], 1.0, 0.0) - m->loss(zs[k], 1.0, 0.0));
        }
    }
    /* the link */
    for (k = 0; k < ST_ARRAY_SIZE(t_zs); k++) {
        z  = t_zs[k];
        an = m->link(z);
        if (!(an >= 0.0 && an <= 1.0) || !t_close(an + m->link(-z), 1.0, 1e-15, 0.0) ||
            (fabs(z) < 30.0 && !t_close(an, 1.0 / (1.0 + exp(-z)), 0.0, 1e-15))) {
            t_fail("sigmoid(%g) = %.17g, sigmoid(-z) = %.17g", z, an, m->link(-z));
        }
        if (k > 0 && an < m->link(t_zs[k - 1])) {
            t_fail("sigmoid is not monotone at %g", z);
        }
        if (!t_close(st_glm_log1pexp(z), z > 0 ? z + log1p(exp(-z)) : log1p(exp(z)), 0.0,
                     1e-15)) {
            t_fail("log1pexp(%g) = %.17g", z, st_glm_log1pexp(z));
        }
        if (t_model(ST_GLM_RIDGE)->link(z) != z || t_model(ST_GLM_HINGE)->link(z) != z ||
            t_model(ST_GLM_L1_LOGISTIC)->link(z) != an) {
            t_fail("link(%g) of ridge, svm or l1-logistic", z);
        }
    }
    if (m->link(1e4) != 1.0 || m->link(-1e4) != 0.0 || m->link(0.0) != 0.5 ||
        st_glm_log1pexp(1e4) != 1e4 || st_glm_log1pexp(-1e4) != 0.0) {
        t_fail("sigmoid/log1pexp at +-1e4 and 0");
    }
}

/* ======================================================================================== */
/* 3. conjugates                                                                           */
/* ======================================================================================== */

/* golden-section minimum of a convex function of one variable on [a, b] */
typedef double (*t_fn_t)(const void *ctx, double x);

static double t_golden_min(t_fn_t f, const void *ctx, double a, double b, double *xmin_p)
{
    const double r = 0.5 * (sqrt(5.0) - 1.0);
    double x1 = b - r * (b - a), x2 = a + r * (b - a), f1 = f(ctx, x1), f2 = f(ctx, x2);
    double best, xb;
    int it;

    for (it = 0; it < 400 && x2 - x1 > 0.0; it++) {
        if (f1 <= f2) {
            b  = x2;
            x2 = x1;
            f2 = f1;
            x1 = b - r * (b - a);
            f1 = f(ctx, x1);
        } else {
            a  = x1;
            x1 = x2;
            f1 = f2;
            x2 = a + r * (b - a);
            f2 = f(ctx, x2);
        }
    }
    xb   = (f1 <= f2) ? x1 : x2;
    best = fmin(f1, f2);
    /* the ends too: the minimum of a monotone function sits there */
    if (f(ctx, a) < best) {
        best = f(ctx, a);
        xb   = a;
    }
    if (f(ctx, b) < best) {
        best = f(ctx, b);
        xb   = b;
    }
    if (xmin_p != NULL) {
        *xmin_p = xb;
    }
    return best;
}

typedef struct {
    const st_glm_model_t *m;
    double alpha, y, c;
} t_conj_ctx_t;

static double t_conj_obj(const void *ctx, double z)
{
    const t_conj_ctx_t *t = ctx;

    return t->alpha * z + t->c * t->m->loss(z, t->y, t_eps(t->m));
}

static void t_check_conjugates(void)
{
    static const double cs[] = {1.0, 0.37, 4.5};
    static const double ps[] = {0.0, 1e-8, 1e-3, 0.2, 0.5, 0.77, 0.999, 1.0 - 1e-8, 1.0};
    static const double sqb[] = {0.0, 0.1, 1.0, 3.3, 12.0};
    static const double ra[] = {-20.0, -1.0, 0.0, 0.4, 7.0};
    const st_glm_model_t *m;
    t_conj_ctx_t ctx;
    double y, c, alpha, lo, hi, num, an, z, fy, bad[4];
    int kind, iy, ny, loss, j, nb;
    size_t ic, ia, na;

    for (kind = 0; kind < ST_GLM_MODEL_COUNT; kind++) {
        m    = t_model((st_glm_model_kind_t)kind);
        loss = t_loss_of(m->kind);
        ny   = m->classification ? 2 : 3;
        for (iy = 0; iy < ny; iy++) {
            y = m->classification ? (iy ? -1.0 : 1.0) : (iy - 1) * 1.3;
            for (ic = 0; ic < ST_ARRAY_SIZE(cs); ic++) {
                c  = cs[ic];
                na = (loss == 0 || loss == 1 || loss == 4) ? ST_ARRAY_SIZE(ps)
                     : (loss == 2 ? ST_ARRAY_SIZE(sqb) : ST_ARRAY_SIZE(ra));
                m->dual_bounds(y, c, &lo, &hi);
                for (ia = 0; ia < na; ia++) {
                    alpha = (loss == 0 || loss == 1) ? y * c * ps[ia]
                            : (loss == 4)   ? c * (2.0 * ps[ia] - 1.0)
                            : (loss == 2 ? y * c * sqb[ia] : ra[ia]);
                    if (alpha < lo || alpha > hi) {
                        t_fail("%s: alpha %g outside its own bounds [%g, %g]", m->name, alpha,
                               lo, hi);
                    }
                    ctx.m     = m;
                    ctx.alpha = alpha;
                    ctx.y     = y;
                    ctx.c     = c;
                    num       = t_golden_min(t_conj_obj, &ctx, -80.0, 80.0, NULL);
                    an        = m->neg_conj(alpha, y, c, t_eps(m));
                    if (!t_close(an, num, 1e-10, 1e-10)) {
                        t_fail("%s: -phi*(-%g) (y %g, c %g) = %.17g, numerical inf %.17g",
                               m->name, alpha, y, c, an, num);
                    }
                }
                /* outside the domain: -INFINITY, and the inf is indeed unbounded */
                nb = 0;
                if (isfinite(lo)) {
                    bad[nb++] = lo - 1e-9 * c;
                    bad[nb++] = lo - 3.0 * c;
                }
                if (isfinite(hi)) {
                    bad[nb++] = hi + 1e-9 * c;
                    bad[nb++] = hi + 3.0 * c;
                }
                for (j = 0; j < nb; j++) {
                    ctx.m     = m;
                    ctx.alpha = bad[j];
                    ctx.y     = y;
                    ctx.c     = c;
                    z         = (bad[j] - lo < 0.0) ? 1e12 : -1e12;  /* alpha z -> -inf */
                    if (m->neg_conj(bad[j], y, c, t_eps(m)) != -INFINITY ||
                        t_conj_obj(&ctx, z) > -1.0) {
                        t_fail("%s: alpha %.17g outside [%g, %g]: -phi* = %g, obj(%g) = %g",
                               m->name, bad[j], lo, hi, m->neg_conj(bad[j], y, c, t_eps(m)), z,
                               t_conj_obj(&ctx, z));
                    }
                }
                /* Fenchel-Young: c phi(z) - (-phi*(-alpha)) + alpha z = 0 at alpha = -c phi'(z)
                   and >= 0 for any alpha in the domain */
                for (j = 0; j < (int)ST_ARRAY_SIZE(t_zs); j++) {
                    z = m->classification ? t_zs[j] : y + t_zs[j] / 30.0;
                    if (fabs(z) > 1e3 || ((loss == 1 || loss == 2) && y * z == 1.0) ||
                        (loss >= 4 && fabs(z - y) == T_EPS)) {
                        continue;
                    }
                    alpha = -c * m->dloss(z, y, t_eps(m));
                    an    = m->neg_conj(alpha, y, c, t_eps(m));
                    fy    = c * m->loss(z, y, t_eps(m)) - an + alpha * z;
                    if (!isfinite(an) ||
                        fabs(fy) > 1e-12 * (1.0 + c * m->loss(z, y, t_eps(m)) + fabs(alpha * z))) {
                        t_fail("%s: Fenchel-Young at z %g (y %g, c %g, alpha %.17g): %.3g",
                               m->name, z, y, c, alpha, fy);
                    }
                    if (isfinite(lo)) {
                        alpha = lo + t_unif() * (fmin(hi, lo + 5.0 * c) - lo);
                    } else if (isfinite(hi)) {
                        alpha = hi - t_unif() * 5.0 * c;
                    } else {
                        alpha = 10.0 * t_gauss();
                    }
                    fy = c * m->loss(z, y, t_eps(m)) - m->neg_conj(alpha, y, c, t_eps(m)) +
                         alpha * z;
                    if (!(fy >= -1e-12 * (1.0 + fabs(alpha * z)))) {
                        t_fail("%s: Fenchel-Young inequality at z %g alpha %g: %.3g", m->name,
                               z, alpha, fy);
                    }
                }
            }
        }
    }
    /* the entropy's ends and its middle */
    m = t_model(ST_GLM_LOGISTIC);
    if (m->neg_conj(0.0, 1.0, 2.0, 0.0) != 0.0 || m->neg_conj(-2.0, -1.0, 2.0, 0.0) != 0.0 ||
        !t_close(m->neg_conj(1.0, 1.0, 2.0, 0.0), 2.0 * log(2.0), 0.0, 1e-15) ||
        !t_close(m->neg_conj(-1e-300, -1.0, 1.0, 0.0), 1e-300 * (690.77552789821368 + 1.0), 0.0,
                 1e-12)) {
        t_fail("logistic entropy: %.17g %.17g", m->neg_conj(1.0, 1.0, 2.0, 0.0),
               m->neg_conj(-1e-300, -1.0, 1.0, 0.0));
    }
}

/* ======================================================================================== */
/* 4. dual coordinate steps                                                                */
/* ======================================================================================== */

/* the test's own -phi*(-a), written from MODELS.md 2.2 in the variable b = a y (a for the
   squared loss) */
static double t_ref_conj(int loss, double b, double y, double c)
{
    double r;

    switch (loss) {
    case 0:
        r = c - b;
        return ((b > 0.0) ? -b * log(b / c) : 0.0) + ((r > 0.0) ? -r * log(r / c) : 0.0);
    case 1:
        return b;
    case 2:
        return b - b * b / (4.0 * c);
    case 4:
        return b * y - T_EPS * fabs(b);
    case 5:
        return b * y - T_EPS * fabs(b) - b * b / (4.0 * c);
    default:
        return b * y - b * b / (2.0 * c);
    }
}

typedef struct {
    int loss;
    double y, c, m, q, b0;  /* m = y z (classification) or z */
} t_step_ctx_t;

/* the 1-D dual objective in b: conj(b) - (b - b0) m - (q/2)(b - b0)^2, negated for
   minimization */
static double t_step_negobj(const void *ctx, double b)
{
    const t_step_ctx_t *t = ctx;
    double d = b - t->b0;

    return -(t_ref_conj(t->loss, b, t->y, t->c) - d * t->m - 0.5 * t->q * d * d);
}

/* its derivative in b (decreasing); the constant parts first, so that a tiny q d counts */
static double t_step_deriv(const t_step_ctx_t *t, double b)
{
    double qd = t->q * (b - t->b0);

    switch (t->loss) {
    case 0:
        return (log(t->c - b) - log(b) - t->m) - qd;
    case 1:
        return (1.0 - t->m) - qd;
    case 2:
        return ((1.0 - t->m) - b / (2.0 * t->c)) - qd;
    case 4:
    case 5:   /* a subgradient at b = 0: the one that makes 0 a maximizer if one is */
        return ((t->y - t->m) - (b > 0.0 ? T_EPS : b < 0.0 ? -T_EPS : 0.0) -
                (t->loss == 5 ? b / (2.0 * t->c) : 0.0)) - qd;
    default:
        return ((t->y - t->m) - b / t->c) - qd;
    }
}

/* the maximizer by bisection on the derivative over [lo, hi] (lo/hi may be infinite) */
static double t_step_bisect(const t_step_ctx_t *t, double lo, double hi)
{
    double a = lo, b = hi, mid, span, base;
    int it;

    base = isfinite(lo) ? lo : t->b0;
    if (!isfinite(b)) {
        for (span = 1.0; t_step_deriv(t, base + span) > 0.0; span *= 2.0) {
        }
        b = base + span;
    }
    if (!isfinite(a)) {
        for (span = 1.0; t_step_deriv(t, t->b0 - span) < 0.0; span *= 2.0) {
        }
        a = t->b0 - span;
    }
    if (t->loss != 0 && t_step_deriv(t, a) <= 0.0) {
        return a;       /* the maximum is at the lower end */
    }
    if (t_step_deriv(t, b) >= 0.0) {
        return b;       /* at the upper end */
    }
    for (it = 0; it < 2000; it++) {
        mid = 0.5 * (a + b);
        if (mid <= a || mid >= b) {
            break;
        }
        if (t_step_deriv(t, mid) > 0.0) {
            a = mid;
        } else {
            b = mid;
        }
    }
    return 0.5 * (a + b);
}

static int t_iter_hist[ST_GLM_MODEL_COUNT > 0 ? 101 : 1];

static void t_check_one_step(const st_glm_model_t *m, double y, double c, double z, double q,
                             double alpha0, double *worst_p)
{
    t_step_ctx_t ctx;
    double lo, hi, alpha, delta, b, bref, bgold, fstep, fgold, dom_lo, dom_hi, tol, f;
    int loss = t_loss_of(m->kind), it;

    alpha = alpha0;
    delta = m->dual_step(y, c, z, q, t_eps(m), &alpha);
    if (!isfinite(alpha) || !isfinite(delta) || delta != alpha - alpha0) {
        t_fail("%s step (y %g c %g z %g q %g alpha %g): alpha %g delta %g", m->name, y, c, z, q,
               alpha0, alpha, delta);
        return;
    }
    m->dual_bounds(y, c, &dom_lo, &dom_hi);
    if (alpha < dom_lo || alpha > dom_hi ||
        (loss == 0 && !(alpha * y > 0.0 && alpha * y < c))) {
        t_fail("%s step (y %g c %g z %g q %g alpha %g): alpha %.17g outside the domain", m->name,
               y, c, z, q, alpha0, alpha);
        return;
    }
    ctx.loss = loss;
    ctx.y    = y;
    ctx.c    = c;
    if (loss >= 3) {
        ctx.m  = z;
        ctx.b0 = alpha0;
        b      = alpha;
        lo     = (loss == 4) ? -c : -INFINITY;
        hi     = (loss == 4) ? c : INFINITY;
    } else {
        ctx.m  = y * z;
        ctx.b0 = alpha0 * y;
        b      = alpha * y;
        lo     = 0.0;
        hi     = (loss == 2) ? INFINITY : c;
    }
    ctx.q = q;

    /* the argmax, by bisection on the derivative */
    bref = t_step_bisect(&ctx, lo, hi);
    if (loss == 1 && q == 0.0 && ctx.m == 1.0) {
        bref = b;       /* a flat objective: every b is a maximizer */
    }
    if (loss == 4 && q == 0.0 && fabs(y - z) == T_EPS && b * (y - z) >= 0.0) {
        bref = b;       /* flat on that side of 0 */
    }
    tol  = 1e-12 * (c + fabs(ctx.b0)) + 1e-9 * fabs(bref);
    if (loss == 0) {
        /* the warm Newton path stops at a step of 1e-4 u (u the distance to the nearer
           end of (0, c)): up to 2e-8 u may be left, where the value (checked below) is
           already at its maximum to rounding */
        tol += 4e-8 * fmin(bref, c - bref);
    }
    if (loss == 3 || loss == 2 || loss >= 4) {
        /* closed forms with rounding in (q + 1/c): relative to the scale of the terms */
        tol += 1e-13 * (fabs(ctx.m) + 1.0 + fabs(y)) * c;
    }
    if (!(fabs(b - bref) <= tol)) {
        t_fail("%s step (y %g c %g z %g q %g alpha %g): b %.17g, bisection %.17g", m->name, y,
               c, z, q, alpha0, b, bref);
    }
    *worst_p = fmax(*worst_p, fabs(b - bref) / (c + fabs(bref)));

    /* the value, against golden-section search on a bracket around the argmax */
    if (isfinite(hi)) {
        fgold = t_golden_min(t_step_negobj, &ctx, lo, hi, &bgold);
    } else {
        f     = 4.0 * (1.0 + fabs(bref));
        fgold = t_golden_min(t_step_negobj, &ctx, isfinite(lo) ? fmax(lo, bref - f) : bref - f,
                             bref + f, &bgold);
    }
    fstep = t_step_negobj(&ctx, b);
    /* staying strictly inside (0, c) may cost an ulp of c times the slope at the bound */
    tol = 1e-12 * (1.0 + fabs(fgold));
    if (loss == 0) {
        tol += 4.0 * DBL_EPSILON * c * (fabs(ctx.m) + q * c + 40.0);
    }
    if (!(fstep <= fgold + tol)) {
        t_fail("%s step (y %g c %g z %g q %g alpha %g): value %.17g, golden section %.17g at "
               "%.17g", m->name, y, c, z, q, alpha0, -fstep, -fgold, bgold);
    }
    if (loss == 0) {
        st_glm_logistic_dual_solve(c, ctx.m, q, fmin(fmax(ctx.b0, 0.0), c), &it);
        t_iter_hist[it > 100 ? 100 : it]++;
    }
}

static void t_check_dual_steps(void)
{
    static const double cs[] = {1.0, 0.3, 7.5};
    static const double zs[] = {-1e4, -300.0, -30.0, -3.0, -1.0, -0.1, 0.0, 0.5, 1.0,
                                1.5, 4.0, 40.0, 700.0, 1e4};
    static const double qs[] = {0.0, 1e-12, 1e-6, 1e-2, 1.0, 30.0, 1e4, 1e12};
    static const double box[] = {0.0, 1e-300, 1e-12, 0.3, 0.5, 0.9, 1.0 - 1e-12, 1.0};
    static const double half[] = {0.0, 1e-12, 0.3, 2.0, 100.0};
    static const double reg[] = {-50.0, -1.0, 0.0, 0.7, 20.0};
    static const double yreg[] = {-2.5, 0.0, 1.7};
    const st_glm_model_t *m;
    double worst, y, c, a0, sum;
    int kind, iy, ny, loss, maxit, count, k;
    size_t ic, iz, iq, ia, na;

    for (kind = 0; kind < ST_GLM_MODEL_COUNT; kind++) {
        m = t_model((st_glm_model_kind_t)kind);
        if (m->form != ST_GLM_FORM_DUAL) {
            continue;
        }
        loss  = t_loss_of(m->kind);
        ny    = m->classification ? 2 : 3;
        worst = 0.0;
        na    = (loss <= 1 || loss == 4) ? ST_ARRAY_SIZE(box)
                : (loss == 2 ? ST_ARRAY_SIZE(half) : ST_ARRAY_SIZE(reg));
        for (iy = 0; iy < ny; iy++) {
            y = m->classification ? (iy ? -1.0 : 1.0) : yreg[iy];
            for (ic = 0; ic < ST_ARRAY_SIZE(cs); ic++) {
                c = cs[ic];
                for (iz = 0; iz < ST_ARRAY_SIZE(zs); iz++) {
                    for (iq = 0; iq < ST_ARRAY_SIZE(qs); iq++) {
                        for (ia = 0; ia < na; ia++) {
                            a0 = (loss <= 1)   ? y * c * box[ia]
                                 : (loss == 4) ? c * (2.0 * box[ia] - 1.0)
                                 : (loss == 2 ? y * c * half[ia] : reg[ia]);
                            t_check_one_step(m, y, c, zs[iz], qs[iq], a0, &worst);
                        }
                    }
                }
            }
        }
        /* random cases */
        for (k = 0; k < 20000; k++) {
            y  = m->classification ? (t_unif() < 0.5 ? -1.0 : 1.0) : 3.0 * t_gauss();
            c  = exp(3.0 * t_gauss());
            a0 = (loss <= 1)   ? y * c * t_unif()
                 : (loss == 4) ? c * (2.0 * t_unif() - 1.0)
                 : (loss == 2 ? y * c * 3.0 * t_unif() : 10.0 * t_gauss());
            t_check_one_step(m, y, c, 5.0 * t_gauss() * exp(2.0 * t_gauss()),
                             exp(6.0 * t_gauss()), a0, &worst);
        }
        /* warm starts, as the solver sees them near the optimum (the logistic step's
           Newton path from beta): beta near the root b*, with z moved along so that the
           root stays b* (y z' = y z + q (beta' - beta)) */
        for (k = 0; loss == 0 && k < 20000; k++) {
            static const double warm[] = {0.0, 1e-12, -1e-9, 1e-6, -1e-4, 1e-3, -1e-2,
                                          3e-2, -0.2, 0.5};
            double z = 5.0 * t_gauss() * exp(2.0 * t_gauss()), q = exp(6.0 * t_gauss());
            double alpha, b1;

            y     = (t_unif() < 0.5) ? -1.0 : 1.0;
            c     = exp(3.0 * t_gauss());
            a0    = y * c * t_unif();
            alpha = a0;
            m->dual_step(y, c, z, q, t_eps(m), &alpha);
            b1 = fmin(alpha * y * (1.0 + warm[k % ST_ARRAY_SIZE(warm)]), c);
            t_check_one_step(m, y, c, z + y * q * (b1 - a0 * y), q, y * b1, &worst);
        }
        t_note("dual step %-8s: worst |b - b_bisection| / (c + |b|) = %.2e", m->name, worst);
    }
    for (k = 0, maxit = 0, count = 0, sum = 0.0; k <= 100; k++) {
        if (t_iter_hist[k] > 0) {
            maxit = k;
        }
        count += t_iter_hist[k];
        sum   += (double)k * t_iter_hist[k];
    }
    t_note("logistic dual Newton: %d solves, mean %.2f iterations, max %d", count,
           sum / count, maxit);
    if (maxit > 12) {
        t_fail("logistic dual Newton took %d iterations (expected <= 12)", maxit);
    }
}

/* ======================================================================================== */
/* 5. the proximal coordinate step                                                         */
/* ======================================================================================== */

typedef struct {
    double g, h, lambda, eta, w;
} t_prox_ctx_t;

static double t_prox_obj(const void *ctx, double v)
{
    const t_prox_ctx_t *t = ctx;
    double d = v - t->w;

    return t->g * d + 0.5 * t->h * d * d +
           t->lambda * (t->eta * fabs(v) + 0.5 * (1.0 - t->eta) * v * v);
}

static void t_check_prox_one(double g, double h, double lambda, double eta, double w)
{
    t_prox_ctx_t ctx = {g, h, lambda, eta, w};
    double v = w, delta, curv = h + lambda * (1.0 - eta), vg, fg, fv, kkt, r, pred;

    delta = st_glm_prox_step(g, h, lambda, eta, &v);
    if (!isfinite(v) || delta != v - w) {
        t_fail("prox(g %g h %g lambda %g eta %g w %g): v %g delta %g", g, h, lambda, eta, w, v,
               delta);
        return;
    }
    if (!(curv > 0.0)) {
        if (v != ((fabs(g) <= lambda * eta) ? 0.0 : w)) {
            t_fail("prox with no curvature (g %g lambda %g eta %g w %g): v %g", g, lambda, eta,
                   w, v);
        }
        return;
    }
    /* 1-D KKT: 0 in g + h (v - w) + lambda (1 - eta) v + lambda eta d|v| */
    kkt = g + h * (v - w) + lambda * (1.0 - eta) * v;
    if (v == 0.0) {
        if (fabs(kkt) > lambda * eta * (1.0 + 1e-12) + 1e-15) {
            t_fail("prox(g %g h %g lambda %g eta %g w %g) = 0 but |slope| %g > %g", g, h, lambda,
                   eta, w, fabs(kkt), lambda * eta);
        }
    } else if (fabs(kkt + lambda * eta * (v > 0 ? 1.0 : -1.0)) >
               1e-12 * (fabs(g) + fabs(h * w) + lambda + curv * fabs(v))) {
        t_fail("prox(g %g h %g lambda %g eta %g w %g) = %.17g: KKT residual %g", g, h, lambda,
               eta, w, v, kkt + lambda * eta * (v > 0 ? 1.0 : -1.0));
    }
    if (fabs(h * w - g) <= lambda * eta && v != 0.0) {
        t_fail("prox(g %g h %g lambda %g eta %g w %g) = %g, not exactly 0", g, h, lambda, eta, w,
               v);
    }
    /* brute force */
    r  = fabs(v) + fabs(w) + (fabs(g) + fabs(h * w) + lambda) / curv + 1.0;
    fg = t_golden_min(t_prox_obj, &ctx, -r, r, &vg);
    fv = t_prox_obj(&ctx, v);
    if (fv > fg + 1e-13 * (1.0 + fabs(fg)) ||
        fabs(v - vg) > 1e-6 * (1.0 + fabs(v)) / fmin(1.0, sqrt(curv))) {
        t_fail("prox(g %g h %g lambda %g eta %g w %g) = %.17g (value %.17g), golden %.17g "
               "(%.17g)", g, h, lambda, eta, w, v, fv, vg, fg);
    }
    /* Armijo's predicted decrease: <= -(h + curv)/2 delta^2 */
    pred = st_glm_prox_decrease(g, lambda, eta, w, delta);
    if (!t_close(pred, g * delta + lambda * (st_glm_reg_coord(v, eta) -
                                             st_glm_reg_coord(w, eta)), 1e-300, 1e-14) ||
        pred > -0.5 * (h + curv) * delta * delta + 1e-13 * (1.0 + fabs(g * delta))) {
        t_fail("prox decrease(g %g h %g lambda %g eta %g w %g delta %g) = %g", g, h, lambda, eta,
               w, delta, pred);
    }
}

static void t_check_prox(void)
{
    static const double gs[] = {-3.0, -0.5, -0.1, -0.01, 0.0, 0.01, 0.1, 0.5, 3.0};
    static const double hs[] = {0.0, 1e-8, 0.01, 1.0, 50.0};
    static const double ls[] = {1e-4, 0.1, 1.0};
    static const double es[] = {0.0, 0.3, 1.0};
    static const double ws[] = {-2.0, -0.1, 0.0, 1e-9, 0.5, 4.0};
    size_t a, b, c, d, e;
    int k;

    for (a = 0; a < ST_ARRAY_SIZE(gs); a++) {
        for (b = 0; b < ST_ARRAY_SIZE(hs); b++) {
            for (c = 0; c < ST_ARRAY_SIZE(ls); c++) {
                for (d = 0; d < ST_ARRAY_SIZE(es); d++) {
                    for (e = 0; e < ST_ARRAY_SIZE(ws); e++) {
                        t_check_prox_one(gs[a], hs[b], ls[c], es[d], ws[e]);
                    }
                }
            }
        }
    }
    for (k = 0; k < 20000; k++) {
        t_check_prox_one(t_gauss() * exp(t_gauss()), exp(2.0 * t_gauss()),
                         exp(2.0 * t_gauss() - 2.0), (k % 3 == 0) ? 1.0 : t_unif(),
                         (k % 5 == 0) ? 0.0 : t_gauss());
    }
    /* the exact threshold: |h w - g| = lambda eta gives exactly 0 */
    t_check_prox_one(0.5, 1.0, 0.5, 1.0, 0.0);
    t_check_prox_one(-0.25, 2.0, 0.5, 0.5, 0.0);
}

/* ======================================================================================== */
/* 6. objective helpers                                                                    */
/* ======================================================================================== */

static void t_check_objective_helpers(void)
{
    st_glm_reg_sums_t all, part, tmp;
    st_glm_objectives_t obj;
    double w[40], grad[40], lambda = 0.3, eta, B, wp[40], vw, val, l1, U, best;
    const st_glm_model_t *m;
    double z[3] = {0.5, -2.0, 1.0}, y[3] = {1.0, 1.0, -1.0}, c[3] = {1.0, 2.0, 0.5};
    double alpha[3] = {0.3, 1.5, -0.25}, expect;
    int j, k, e, d = 40;

    /* hand values: a 3-example logistic problem */
    m      = t_model(ST_GLM_LOGISTIC);
    expect = log1p(exp(-0.5)) + 2.0 * log1p(exp(2.0)) + 0.5 * log1p(exp(1.0));
    if (!t_close(st_glm_loss_sum(m, 3, z, y, c, 0.0), expect, 0.0, 1e-15) ||
        !t_close(st_glm_loss_sum(m, 3, z, y, NULL, 0.0),
                 log1p(exp(-0.5)) + log1p(exp(2.0)) + log1p(exp(1.0)), 0.0, 1e-15)) {
        t_fail("st_glm_loss_sum: %.17g, expected %.17g", st_glm_loss_sum(m, 3, z, y, c, 0.0),
               expect);
    }
    /* the SVR models' epsilon reaches the sums: (|z - y| - 0.2)^2, weighted */
    expect = 0.3 * 0.3 + 2.0 * 2.8 * 2.8 + 0.5 * 1.8 * 1.8;
    if (!t_close(st_glm_loss_sum(t_model(ST_GLM_SQSVR), 3, z, y, c, 0.2), expect, 0.0,
                 1e-14) ||
        !t_close(st_glm_loss_sum(t_model(ST_GLM_SVR), 3, z, y, c, 0.2),
                 0.3 + 2.0 * 2.8 + 0.5 * 1.8, 0.0, 1e-14)) {
        t_fail("st_glm_loss_sum of the SVR models with epsilon 0.2: %.17g, expected %.17g",
               st_glm_loss_sum(t_model(ST_GLM_SQSVR), 3, z, y, c, 0.2), expect);
    }
    expect = t_ref_conj(0, 0.3, 1.0, 1.0) + t_ref_conj(0, 1.5, 1.0, 2.0) +
             t_ref_conj(0, 0.25, -1.0, 0.5);
    if (!t_close(st_glm_neg_conj_sum(m, 3, alpha, y, c, 0.0), expect, 0.0, 1e-14)) {
        t_fail("st_glm_neg_conj_sum: %.17g, expected %.17g",
               st_glm_neg_conj_sum(m, 3, alpha, y, c, 0.0), expect);
    }
    alpha[0] = 1.5;   /* outside [0, c_0] */
    if (st_glm_neg_conj_sum(m, 3, alpha, y, c, 0.0) != -INFINITY) {
        t_fail("st_glm_neg_conj_sum with alpha outside the domain is finite");
    }
    st_glm_dual_objectives(6.0, 2.0, 4.0, 3, 0.5, &obj);
    if (obj.primal != 3.0 || !t_close(obj.dual, 2.0 / 3.0 - 1.0, 0.0, 1e-15) ||
        !t_close(obj.gap, obj.primal - obj.dual, 0.0, 1e-15) || obj.radius != 0.0) {
        t_fail("st_glm_dual_objectives: P %g D %g gap %g", obj.primal, obj.dual, obj.gap);
    }

    for (e = 0; e < 3; e++) {
        eta = (e == 0) ? 1.0 : (e == 1 ? 0.6 : 0.0);
        for (j = 0; j < d; j++) {
            w[j]    = (j % 3 == 0) ? 0.0 : t_gauss();
            grad[j] = 0.4 * t_gauss();
        }
        /* merging blocks gives the sums over all features */
        st_glm_reg_sums(d, w, grad, lambda, eta, &all);
        st_glm_reg_sums(13, w, grad, lambda, eta, &part);
        st_glm_reg_sums(d - 13, w + 13, grad + 13, lambda, eta, &tmp);
        st_glm_reg_sums_merge(&part, &tmp);
        if (!t_close(part.reg, all.reg, 0.0, 1e-14) || part.vmax != all.vmax ||
            !(part.conj == all.conj || t_close(part.conj, all.conj, 0.0, 1e-14))) {
            t_fail("reg sums: merged blocks %g %g %g, all %g %g %g", part.reg, part.conj,
                   part.vmax, all.reg, all.conj, all.vmax);
        }
        for (j = 0, val = 0.0, l1 = 0.0; j < d; j++) {
            val += eta * fabs(w[j]) + 0.5 * (1.0 - eta) * w[j] * w[j];
            l1  += fabs(w[j]);
        }
        if (!t_close(all.reg, val, 0.0, 1e-14) || (eta == 1.0 && all.conj != INFINITY)) {
            t_fail("reg sums (eta %g): reg %.17g expected %.17g, conj %g", eta, all.reg, val,
                   all.conj);
        }
        /* with loss sums making P: the bound U = conj/n - D must dominate
           v.w' - lambda R(w') for every w' in the ball ||w'||_1 <= B (v = -grad) */
        st_glm_primal_objectives(2.0, 1.0, -INFINITY, &all, 4, lambda, eta, 0.0, &obj);
        B = obj.radius;
        if (!t_close(obj.primal, 0.5 + lambda * all.reg, 0.0, 1e-14) ||
            (eta > 0.0 && !t_close(B, obj.primal / (lambda * eta), 0.0, 1e-14)) ||
            (eta > 0.0 && !(B >= l1))) {
            t_fail("primal objectives (eta %g): P %g B %g ||w||_1 %g", eta, obj.primal, B, l1);
        }
        U    = 0.25 - obj.dual;
        best = -INFINITY;
        for (k = 0; k < 3000; k++) {
            double s = 0.0;

            for (j = 0; j < d; j++) {
                wp[j] = (k < 2 * d) ? 0.0 : t_gauss() * (t_unif() < 0.2 ? 1.0 : 0.0);
                s    += fabs(wp[j]);
            }
            if (k < 2 * d) {   /* the vertices of the ball */
                wp[k / 2] = (k % 2) ? -1.0 : 1.0;
                s         = 1.0;
            }
            if (eta == 0.0) {
                s = 1.0;  /* no ball: any point */
            } else {
                s = B * t_unif() / s;
                if (k < 2 * d) {
                    s = B;
                }
            }
            for (j = 0, vw = 0.0, val = 0.0; j < d; j++) {
                wp[j] *= s;
                vw    += -grad[j] * wp[j];
                val   += lambda * (eta * fabs(wp[j]) + 0.5 * (1.0 - eta) * wp[j] * wp[j]);
            }
            best = fmax(best, vw - val);
            if (vw - val > U + 1e-12 * (1.0 + fabs(U))) {
                t_fail("Lipschitzed conjugate (eta %g): %.17g < v.w' - lambda R(w') = %.17g",
                       eta, U, vw - val);
                break;
            }
        }
        if (eta == 1.0 && !t_close(best, U, 1e-12, 1e-12)) {
            t_fail("Lipschitzed conjugate (eta 1) %.17g not attained at a vertex (%.17g)", U,
                   best);
        }
        /* an explicit radius is used as given */
        st_glm_primal_objectives(2.0, 1.0, -INFINITY, &all, 4, lambda, eta, 1e3, &obj);
        if (eta > 0.0 && obj.radius != 1e3) {
            t_fail("primal objectives ignore the given radius");
        }
    }
    /* at a KKT point the L1 certificate is 0: w = (1, 0), v = (lambda, lambda / 2) */
    w[0]    = 1.0;
    w[1]    = 0.0;
    grad[0] = -lambda;
    grad[1] = -0.5 * lambda;
    st_glm_reg_sums(2, w, grad, lambda, 1.0, &all);
    /* loss and conj sums chosen so that they cancel v.w (Fenchel-Young equality) */
    st_glm_primal_objectives(1.0, 1.0 + 2.0 * lambda, -INFINITY, &all, 2, lambda, 1.0, 0.0,
                             &obj);
    if (!t_close(obj.gap, 0.0, 1e-15, 0.0)) {
        t_fail("L1 certificate at a KKT point: gap %g", obj.gap);
    }
}

/* ======================================================================================== */
/* 7. the serial solver                                                                    */
/* ======================================================================================== */

typedef struct {
    int64_t   n, d;
    double   *dense;    /* n x d */
    int64_t  *indptr;
    uint32_t *indices;
    double   *values;
    double   *y;
    double   *c;
} t_prob_t;

static void t_prob_free(t_prob_t *p)
{
    free(p->dense);
    free(p->indptr);
    free(p->indices);
    free(p->values);
    free(p->y);
    free(p->c);
    memset(p, 0, sizeof(*p));
}

/* a random problem; density < 1 leaves zeros; classification labels from a noisy linear
   rule; weights: class weights (classification) or per-example (regression), or none */
static int t_prob_make(t_prob_t *p, int64_t n, int64_t d, double density, int cls,
                       int weights)
{
    double *w0, s, *colscale;
    int64_t i, j, k;

    memset(p, 0, sizeof(*p));
    p->n       = n;
    p->d       = d;
    p->dense   = calloc((size_t)(n * d), sizeof(double));
    p->indptr  = malloc((size_t)(n + 1) * sizeof(int64_t));
    p->indices = malloc((size_t)(n * d + 1) * sizeof(uint32_t));
    p->values  = malloc((size_t)(n * d + 1) * sizeof(double));
    p->y       = malloc((size_t)n * sizeof(double));
    p->c       = weights ? malloc((size_t)n * sizeof(double)) : NULL;
    w0         = malloc((size_t)d * sizeof(double));
    colscale   = malloc((size_t)d * sizeof(double));
    if (p->dense == NULL || p->indptr == NULL || p->indices == NULL || p->values == NULL ||
        p->y == NULL || (weights && p->c == NULL) || w0 == NULL || colscale == NULL) {
        free(w0);
        free(colscale);
        return -1;
    }
    for (j = 0; j < d; j++) {
        w0[j]       = (t_unif() < 0.5) ? t_gauss() : 0.0;
        colscale[j] = exp(0.5 * t_gauss());
    }
    p->indptr[0] = 0;
    for (i = 0, k = 0; i < n; i++) {
        s = 0.0;
        for (j = 0; j < d; j++) {
            if (t_unif() < density) {
                p->dense[i * d + j] = colscale[j] * t_gauss();
                p->indices[k]       = (uint32_t)j;
                p->values[k++]      = p->dense[i * d + j];
                s                  += p->dense[i * d + j] * w0[j];
            }
        }
        p->indptr[i + 1] = k;
        if (cls) {
            p->y[i] = (s + 0.5 * t_gauss() > 0.0) ? 1.0 : -1.0;
        } else {
            p->y[i] = s + 0.3 * t_gauss();
        }
        if (weights) {
            p->c[i] = cls ? ((p->y[i] > 0) ? 2.5 : 0.7) : 0.5 + 2.0 * t_unif();
        }
    }
    free(w0);
    free(colscale);
    return 0;
}

static double t_prob_weight(const t_prob_t *p, int64_t i)
{
    return (p->c != NULL) ? p->c[i] : 1.0;
}

/* z = X w from the dense copy */
static void t_margins(const t_prob_t *p, const double *w, double *z)
{
    int64_t i, j;

    for (i = 0; i < p->n; i++) {
        for (z[i] = 0.0, j = 0; j < p->d; j++) {
            z[i] += p->dense[i * p->d + j] * w[j];
        }
    }
}

/* the losses, written here */
static double t_loss(int loss, double z, double y, double *d1_p, double *d2_p)
{
    double m = y * z, r, s;

    switch (loss) {
    case 0:
        s     = 1.0 / (1.0 + exp(m));   /* sigmoid(-m); the test keeps |m| moderate */
        *d1_p = -y * s;
        *d2_p = s * (1.0 - s);
        return (m > 0) ? log1p(exp(-m)) : -m + log1p(exp(m));
    case 1:
        *d1_p = (m < 1.0) ? -y : 0.0;
        *d2_p = 0.0;
        return fmax(0.0, 1.0 - m);
    case 2:
        r     = fmax(0.0, 1.0 - m);
        *d1_p = -2.0 * y * r;
        *d2_p = (m < 1.0) ? 2.0 : 0.0;
        return r * r;
    default:
        *d1_p = z - y;
        *d2_p = 1.0;
        return 0.5 * (z - y) * (z - y);
    }
}

/* P(w), its smooth part's gradient (loss + the L2 part), and the smooth Hessian (or NULL) */
static double t_primal(const t_prob_t *p, int loss, double lambda, double eta, const double *w,
                       double *grad, double *hess)
{
    double *z = malloc((size_t)p->n * sizeof(double)), f = 0.0, d1, d2, ci, reg = 0.0;
    int64_t i, j, k, d = p->d;

    if (z == NULL) {
        return NAN;
    }
    t_margins(p, w, z);
    for (j = 0; j < d; j++) {
        grad[j] = lambda * (1.0 - eta) * w[j];
        reg    += lambda * (eta * fabs(w[j]) + 0.5 * (1.0 - eta) * w[j] * w[j]);
        for (k = 0; hess != NULL && k < d; k++) {
            hess[j * d + k] = (j == k) ? lambda * (1.0 - eta) : 0.0;
        }
    }
    for (i = 0; i < p->n; i++) {
        ci = t_prob_weight(p, i) / (double)p->n;
        f += ci * t_loss(loss, z[i], p->y[i], &d1, &d2);
        for (j = 0; j < d; j++) {
            grad[j] += ci * d1 * p->dense[i * d + j];
            for (k = 0; hess != NULL && k <= j; k++) {
                hess[j * d + k] += ci * d2 * p->dense[i * d + j] * p->dense[i * d + k];
            }
        }
    }
    for (j = 0; hess != NULL && j < d; j++) {
        for (k = 0; k < j; k++) {
            hess[k * d + j] = hess[j * d + k];
        }
    }
    free(z);
    return f + reg;
}

/* solve A x = b (A symmetric positive definite, d x d, overwritten) by Cholesky */
static int t_cholesky_solve(double *a, int64_t d, const double *b, double *x)
{
    int64_t i, j, k;
    double s;

    for (j = 0; j < d; j++) {
        for (s = a[j * d + j], k = 0; k < j; k++) {
            s -= a[j * d + k] * a[j * d + k];
        }
        if (!(s > 0.0)) {
            return -1;
        }
        a[j * d + j] = sqrt(s);
        for (i = j + 1; i < d; i++) {
            for (s = a[i * d + j], k = 0; k < j; k++) {
                s -= a[i * d + k] * a[j * d + k];
            }
            a[i * d + j] = s / a[j * d + j];
        }
    }
    for (i = 0; i < d; i++) {          /* L u = b */
        for (s = b[i], k = 0; k < i; k++) {
            s -= a[i * d + k] * x[k];
        }
        x[i] = s / a[i * d + i];
    }
    for (i = d - 1; i >= 0; i--) {     /* L^T x = u */
        for (s = x[i], k = i + 1; k < d; k++) {
            s -= a[k * d + i] * x[k];
        }
        x[i] = s / a[i * d + i];
    }
    return 0;
}

/* the L2 models' optimum by (damped) Newton's method: exact for ridge in one step */
static int t_newton(const t_prob_t *p, int loss, double lambda, double *w)
{
    int64_t d = p->d, j;
    double *g = malloc((size_t)d * sizeof(double)), *h = malloc((size_t)(d * d) *
                                                                 sizeof(double));
    double *step = malloc((size_t)d * sizeof(double)), *wt = malloc((size_t)d * sizeof(double));
    double f, ft, t, gn;
    int it, rc = -1;

    if (g == NULL || h == NULL || step == NULL || wt == NULL) {
        goto out;
    }
    memset(w, 0, (size_t)d * sizeof(double));
    for (it = 0; it < 200; it++) {
        f = t_primal(p, loss, lambda, 0.0, w, g, h);
        for (gn = 0.0, j = 0; j < d; j++) {
            gn = fmax(gn, fabs(g[j]));
        }
        if (gn <= 1e-15) {
            rc = 0;
            break;
        }
        if (t_cholesky_solve(h, d, g, step) != 0) {
            break;
        }
        for (t = 1.0; t > 1e-12; t *= 0.5) {
            for (j = 0; j < d; j++) {
                wt[j] = w[j] - t * step[j];
            }
            ft = t_primal(p, loss, lambda, 0.0, wt, g, NULL);
            if (ft <= f) {
                break;
            }
        }
        if (!(t > 1e-12)) {
            rc = 0;   /* no decrease left: converged to rounding */
            break;
        }
        memcpy(w, wt, (size_t)d * sizeof(double));
    }
    if (it == 200) {
        rc = 0;
    }
out:
    free(g);
    free(h);
    free(step);
    free(wt);
    return rc;
}

typedef struct {
    st_glm_model_kind_t kind;
    int64_t n, d;
    double density;
    int weights;
    double lambda_scale;   /* lambda = this (L2) or this * lambda_max (L1) */
    double eta;
} t_case_t;

static const t_case_t t_cases[] = {
    {ST_GLM_LOGISTIC, 200, 20, 1.0, 0, 1e-2, 0.0},
    {ST_GLM_LOGISTIC, 300, 60, 0.1, 1, 1e-3, 0.0},
    {ST_GLM_LOGISTIC, 60, 100, 0.3, 0, 1e-2, 0.0},
    {ST_GLM_HINGE, 200, 20, 1.0, 0, 1e-2, 0.0},
    {ST_GLM_HINGE, 300, 60, 0.1, 1, 1e-2, 0.0},
    {ST_GLM_HINGE, 60, 100, 0.3, 1, 1e-2, 0.0},
    {ST_GLM_SQHINGE, 200, 20, 1.0, 1, 1e-2, 0.0},
    {ST_GLM_SQHINGE, 300, 60, 0.1, 0, 1e-3, 0.0},
    {ST_GLM_SQHINGE, 60, 100, 0.3, 0, 1e-2, 0.0},
    {ST_GLM_RIDGE, 200, 20, 1.0, 0, 1e-2, 0.0},
    {ST_GLM_RIDGE, 300, 60, 0.1, 1, 1e-3, 0.0},
    {ST_GLM_RIDGE, 60, 100, 0.3, 1, 1e-2, 0.0},
    {ST_GLM_RIDGE, 500, 5, 1.0, 1, 1e-1, 0.0},
    {ST_GLM_LASSO, 200, 20, 1.0, 0, 0.1, 1.0},
    {ST_GLM_LASSO, 300, 60, 0.1, 1, 0.05, 1.0},
    {ST_GLM_LASSO, 60, 100, 0.3, 0, 0.2, 1.0},
    {ST_GLM_L1_LOGISTIC, 200, 20, 1.0, 1, 0.1, 1.0},
    {ST_GLM_L1_LOGISTIC, 300, 60, 0.1, 0, 0.05, 1.0},
    {ST_GLM_L1_LOGISTIC, 60, 100, 0.3, 1, 0.2, 1.0},
    {ST_GLM_ELASTIC_NET, 200, 20, 1.0, 1, 0.1, 0.5},
    {ST_GLM_ELASTIC_NET, 300, 60, 0.1, 0, 0.05, 0.9},
    {ST_GLM_ELASTIC_NET, 60, 100, 0.3, 1, 0.2, 0.2},
    {ST_GLM_ELASTIC_NET, 100, 10, 1.0, 0, 0.05, 0.0},
    {ST_GLM_L1_SQHINGE, 200, 20, 1.0, 1, 0.1, 1.0},
    {ST_GLM_L1_SQHINGE, 300, 60, 0.1, 0, 0.05, 1.0},
    {ST_GLM_L1_SQHINGE, 60, 100, 0.3, 1, 0.2, 1.0},
};

#define T_MAX_EPOCHS 20000

/* lambda_max of an L1 model: the smallest lambda with w* = 0, ||grad F(0)||_inf / eta */
static double t_lambda_max(const t_prob_t *p, int loss, double eta)
{
    double *g = malloc((size_t)p->d * sizeof(double)), *w = calloc((size_t)p->d,
                                                                   sizeof(double)), gmax = 0.0;
    int64_t j;

    if (g == NULL || w == NULL) {
        free(g);
        free(w);
        return 1.0;
    }
    t_primal(p, loss, 1.0, 1.0, w, g, NULL);
    for (j = 0; j < p->d; j++) {
        gmax = fmax(gmax, fabs(g[j]));
    }
    free(g);
    free(w);
    return gmax / fmax(eta, 0.05);
}

static void t_run_case(const t_case_t *tc, int index)
{
    const st_glm_model_t *m = t_model(tc->kind);
    st_glm_serial_problem_t prob;
    st_glm_serial_params_t par;
    st_glm_objectives_t *trace;
    t_prob_t p;
    double *w, *alpha, *wref, *g, *z, *wa, lambda, eta, Pfin, Pw, Pref, gn, dist, tol, gap, pg;
    double beta, ci, term, sum, scale, worst;
    int loss = t_loss_of(tc->kind), epochs = -1, dense, k, nz;
    int64_t i, j, d = tc->d, n = tc->n;
    st_status_t status;

    if (t_prob_make(&p, n, d, tc->density, m->classification, tc->weights) != 0) {
        t_fail("case %d: out of memory", index);
        t_prob_free(&p);
        return;
    }
    w     = calloc((size_t)d, sizeof(double));
    wref  = calloc((size_t)d, sizeof(double));
    wa    = calloc((size_t)d, sizeof(double));
    g     = calloc((size_t)d, sizeof(double));
    alpha = calloc((size_t)n, sizeof(double));
    z     = calloc((size_t)n, sizeof(double));
    trace = calloc(T_MAX_EPOCHS + 1, sizeof(*trace));
    if (w == NULL || wref == NULL || wa == NULL || g == NULL || alpha == NULL || z == NULL ||
        trace == NULL) {
        t_fail("case %d: out of memory", index);
        goto out;
    }
    dense  = tc->density >= 1.0;
    eta    = st_glm_model_eta(m, tc->eta);
    lambda = (m->form == ST_GLM_FORM_DUAL) ? tc->lambda_scale
             : tc->lambda_scale * t_lambda_max(&p, loss, eta);

    prob.n       = n;
    prob.d       = d;
    prob.indptr  = dense ? NULL : p.indptr;
    prob.indices = dense ? NULL : p.indices;
    prob.values  = dense ? p.dense : p.values;
    prob.y       = p.y;
    prob.weights = p.c;
    par.lambda     = lambda;
    par.eta        = tc->eta;
    par.max_epochs = T_MAX_EPOCHS;
    par.tol        = 1e-12;
    par.shuffle    = 1;
    par.seed       = 1234 + (uint64_t)index;

    status = st_glm_serial_train(m, &prob, &par, w, alpha, trace, &epochs);
    if (status != ST_OK || epochs < 0 || epochs > T_MAX_EPOCHS) {
        t_fail("case %d (%s): status %d epochs %d", index, m->name, (int)status, epochs);
        goto out;
    }
    Pfin = trace[epochs].primal;
    gap  = trace[epochs].gap;

    /* convergence and the certificate along the way */
    if (!(gap <= 1e-10 * fabs(Pfin))) {
        t_fail("case %d (%s, n %lld d %lld): gap %.3g (relative %.3g) after %d epochs", index,
               m->name, (long long)n, (long long)d, gap, gap / fabs(Pfin), epochs);
    }
    for (k = 0; k <= epochs; k++) {
        scale = 1e-12 * fmax(1.0, fabs(trace[k].primal));
        if (!(trace[k].gap >= -scale) ||
            !t_close(trace[k].gap, trace[k].primal - trace[k].dual, 1e-15, 1e-12)) {
            t_fail("case %d (%s) epoch %d: gap %.3g (P %.17g D %.17g)", index, m->name, k,
                   trace[k].gap, trace[k].primal, trace[k].dual);
            break;
        }
        if (trace[k].primal - Pfin > trace[k].gap + scale || trace[k].dual > Pfin + scale) {
            t_fail("case %d (%s) epoch %d: P %.17g D %.17g not a certificate for P_final %.17g",
                   index, m->name, k, trace[k].primal, trace[k].dual, Pfin);
            break;
        }
    }
    /* the returned w is the one the trace describes */
    Pw = t_primal(&p, loss, lambda, eta, w, g, NULL);
    if (!t_close(Pw, Pfin, 1e-14, 1e-12)) {
        t_fail("case %d (%s): P(w) recomputed %.17g, trace %.17g", index, m->name, Pw, Pfin);
    }

    if (m->form == ST_GLM_FORM_DUAL) {
        /* w = w(alpha), alpha in its domain */
        for (i = 0; i < n; i++) {
            double lo, hi;

            m->dual_bounds(p.y[i], t_prob_weight(&p, i), &lo, &hi);
            if (alpha[i] < lo || alpha[i] > hi) {
                t_fail("case %d (%s): alpha[%lld] = %g outside [%g, %g]", index, m->name,
                       (long long)i, alpha[i], lo, hi);
                break;
            }
            for (j = 0; j < d; j++) {
                wa[j] += alpha[i] * p.dense[i * d + j] / (lambda * (double)n);
            }
        }
        for (j = 0, worst = 0.0; j < d; j++) {
            worst = fmax(worst, fabs(wa[j] - w[j]));
        }
        if (worst > 1e-12 * (1.0 + fabs(Pfin) / lambda)) {
            t_fail("case %d (%s): |w - w(alpha)|_inf = %g", index, m->name, worst);
        }
    }

    if (loss != 1 && m->form == ST_GLM_FORM_DUAL) {
        /* independent optimum: Newton (Cholesky normal equations for ridge) */
        if (t_newton(&p, loss, lambda, wref) != 0) {
            t_fail("case %d (%s): the reference Newton failed", index, m->name);
            goto out;
        }
        Pref = t_primal(&p, loss, lambda, 0.0, wref, g, NULL);
        for (j = 0, gn = 0.0; j < d; j++) {
            gn = fmax(gn, fabs(g[j]));
        }
        for (j = 0, dist = 0.0; j < d; j++) {
            dist += (w[j] - wref[j]) * (w[j] - wref[j]);
        }
        dist = sqrt(dist);
        /* P is lambda-strongly convex: ||w - w*||^2 <= 2 (P(w) - P*) / lambda <= 2 gap / lambda */
        tol = sqrt(2.0 * fmax(gap, 0.0) / lambda) * 1.001 + 1e-9;
        if (dist > tol || Pw - Pref > gap + 1e-13 * fabs(Pref) ||
            trace[epochs].dual > Pref + 1e-13 * fabs(Pref)) {
            t_fail("case %d (%s): |w - w_newton| %.3g (bound %.3g), P(w) - P* %.3g, gap %.3g, "
                   "D - P* %.3g", index, m->name, dist, tol, Pw - Pref, gap,
                   trace[epochs].dual - Pref);
        }
        if (dist > 1e-6 * (1.0 + sqrt(Pfin / lambda))) {
            t_fail("case %d (%s): |w - w_newton| = %.3g", index, m->name, dist);
        }
        /* KKT: the gradient of P vanishes */
        t_primal(&p, loss, lambda, 0.0, w, g, NULL);
        for (j = 0, pg = 0.0; j < d; j++) {
            pg = fmax(pg, fabs(g[j]));
        }
        if (pg > 1e-5 * (1.0 + lambda)) {
            t_fail("case %d (%s): |grad P(w)|_inf = %.3g", index, m->name, pg);
        }
        t_note("case %2d %-11s n %3lld d %3lld %s%s: %4d epochs, gap %.1e, |w - w_newton| "
               "%.1e, |grad P| %.1e", index, m->name, (long long)n, (long long)d,
               dense ? "dense" : "csr  ", tc->weights ? " c_i" : "    ", epochs,
               gap / fabs(Pfin), dist, pg);
    } else if (loss == 1) {
        /* SVM KKT from alpha and the margins, recomputed here: every term
           (c - beta)(1 - m)_+ + beta (m - 1)_+ is >= 0 and they sum to n * gap */
        t_margins(&p, w, z);
        for (i = 0, sum = 0.0, worst = 0.0; i < n; i++) {
            ci   = t_prob_weight(&p, i);
            beta = alpha[i] * p.y[i];
            term = (ci - beta) * fmax(0.0, 1.0 - p.y[i] * z[i]) +
                   beta * fmax(0.0, p.y[i] * z[i] - 1.0);
            sum  += term;
            worst = fmax(worst, term);
        }
        if (!t_close(sum / (double)n, gap, 1e-13 * (1.0 + Pfin), 1e-6) ||
            worst > 1e-8 * (1.0 + Pfin)) {
            t_fail("case %d (svm): KKT terms sum to %.3g (gap %.3g), worst %.3g", index,
                   sum / (double)n, gap, worst);
        }
        t_note("case %2d %-11s n %3lld d %3lld %s%s: %4d epochs, gap %.1e, worst KKT term %.1e",
               index, m->name, (long long)n, (long long)d, dense ? "dense" : "csr  ",
               tc->weights ? " c_i" : "    ", epochs, gap / fabs(Pfin), worst);
    } else {
        /* L1 KKT: g_j + lambda eta sign(w_j) = 0 where w_j != 0, |g_j| <= lambda eta else;
           g = grad of the smooth part (loss + lambda (1 - eta)/2 ||w||^2) */
        t_primal(&p, loss, lambda, eta, w, g, NULL);
        for (j = 0, worst = 0.0, nz = 0; j < d; j++) {
            if (w[j] != 0.0) {
                nz++;
                worst = fmax(worst, fabs(g[j] + lambda * eta * (w[j] > 0 ? 1.0 : -1.0)));
            } else {
                worst = fmax(worst, fabs(g[j]) - lambda * eta);
            }
        }
        /* CD drives the pure-L1 KKT residual to rounding; with an L2 part the certificate
           is quadratic in the residual, so 1e-12 relative gap leaves ~1e-7 lambda */
        if (worst > ((eta == 1.0) ? 1e-8 : 1e-5) * lambda) {
            t_fail("case %d (%s): KKT violation %.3g (lambda %.3g)", index, m->name, worst,
                   lambda);
        }
        if (eta > 0.0 && (nz == 0 || nz == d) && tc->lambda_scale < 1.0) {
            t_fail("case %d (%s): %d of %lld weights non-zero: lambda no test of sparsity",
                   index, m->name, nz, (long long)d);
        }
        /* the returned alpha is the primal-dual candidate */
        t_margins(&p, w, z);
        for (i = 0; i < n; i++) {
            double d1, d2;

            t_loss(loss, z[i], p.y[i], &d1, &d2);
            if (!t_close(alpha[i], -t_prob_weight(&p, i) * d1, 1e-12, 1e-9)) {
                t_fail("case %d (%s): alpha[%lld] %g, -c phi'(z) %g", index, m->name,
                       (long long)i, alpha[i], -t_prob_weight(&p, i) * d1);
                break;
            }
        }
        t_note("case %2d %-11s n %3lld d %3lld %s%s: %4d epochs, gap %.1e, KKT %.1e, nnz %d, "
               "B %.3g", index, m->name, (long long)n, (long long)d,
               dense ? "dense" : "csr  ", tc->weights ? " c_i" : "    ", epochs,
               gap / fabs(Pfin), worst / lambda, nz, trace[epochs].radius);
    }

    /* the same problem in the other layout gives the same model */
    if (d <= 60) {
        double *w2 = calloc((size_t)d, sizeof(double));

        prob.indptr  = dense ? p.indptr : NULL;   /* p's CSR holds the same entries */
        prob.indices = dense ? p.indices : NULL;
        prob.values  = dense ? p.values : p.dense;
        if (w2 == NULL ||
            st_glm_serial_train(m, &prob, &par, w2, NULL, NULL, &k) != ST_OK || k != epochs) {
            t_fail("case %d (%s): the other layout: %d epochs, not %d", index, m->name, k,
                   epochs);
        } else {
            for (j = 0; j < d; j++) {
                if (!t_close(w[j], w2[j], 1e-12, 1e-9)) {
                    t_fail("case %d (%s): dense and CSR disagree at w[%lld]: %.17g %.17g",
                           index, m->name, (long long)j, w[j], w2[j]);
                    break;
                }
            }
        }
        free(w2);
    }

out:
    free(w);
    free(wref);
    free(wa);
    free(g);
    free(alpha);
    free(z);
    free(trace);
    t_prob_free(&p);
}

/* lambda at lambda_max: the L1 models stop at once with w = 0 and gap 0 */
static void t_check_l1_null(void)
{
    static const st_glm_model_kind_t kinds[] = {ST_GLM_LASSO, ST_GLM_L1_LOGISTIC,
                                                ST_GLM_ELASTIC_NET, ST_GLM_L1_SQHINGE};
    st_glm_serial_problem_t prob;
    st_glm_serial_params_t par;
    st_glm_objectives_t trace[11];
    const st_glm_model_t *m;
    double w[8], eta;
    int epochs, j;
    size_t k;
    t_prob_t p;

    for (k = 0; k < ST_ARRAY_SIZE(kinds); k++) {
        m = t_model(kinds[k]);
        if (t_prob_make(&p, 40, 8, 1.0, m->classification, 1) != 0) {
            t_fail("out of memory");
            t_prob_free(&p);
            return;
        }
        eta = st_glm_model_eta(m, 0.5);
        memset(&prob, 0, sizeof(prob));
        prob.n          = p.n;
        prob.d          = p.d;
        prob.values     = p.dense;
        prob.y          = p.y;
        prob.weights    = p.c;
        par.lambda      = t_lambda_max(&p, t_loss_of(m->kind), eta) * 1.0000001;
        par.eta         = 0.5;
        par.max_epochs  = 10;
        par.tol         = 1e-12;
        par.shuffle     = 0;
        par.seed        = 0;
        if (st_glm_serial_train(m, &prob, &par, w, NULL, trace, &epochs) != ST_OK ||
            epochs != 0 || trace[0].gap > 1e-15 || trace[0].gap < -1e-15) {
            t_fail("%s at lambda_max: %d epochs, gap %g", m->name, epochs, trace[0].gap);
        }
        for (j = 0; j < 8; j++) {
            if (w[j] != 0.0) {
                t_fail("%s at lambda_max: w[%d] = %g", m->name, j, w[j]);
            }
        }
        t_prob_free(&p);
    }
}

/* st_glm_gather_dot, the solvers' four-sum sparse dot: against a one-sum reference for
 * every length 0..13 (the four-wide body and each remainder), plain and weighted */
static void t_check_gather_dot(void)
{
    uint32_t idx[13];
    double val[13], a[40], b[40], ref, got;
    int64_t len, k, lo;
    int weighted;

    for (k = 0; k < 40; k++) {
        a[k] = 1.0 + 0.37 * (double)k - 0.011 * (double)(k * k);
        b[k] = 0.5 + 0.05 * (double)k;
    }
    for (k = 0; k < 13; k++) {
        idx[k] = (uint32_t)((7 * k + 3) % 40);
        val[k] = (k % 3 == 0) ? -1.25 * (double)k : 0.5 + (double)k;
    }
    for (weighted = 0; weighted < 2; weighted++) {
        for (lo = 0; lo < 2; lo++) {
            for (len = 0; lo + len <= 13; len++) {
                for (ref = 0.0, k = lo; k < lo + len; k++) {
                    ref += val[k] * a[idx[k]] * (weighted ? b[idx[k]] : 1.0);
                }
                got = st_glm_gather_dot(idx, val, lo, lo + len, a, weighted ? b : NULL);
                if (!t_close(got, ref, 1e-13, 1e-13)) {
                    t_fail("gather_dot(%s, [%lld, %lld)) = %.17g, reference %.17g",
                           weighted ? "weighted" : "plain", (long long)lo,
                           (long long)(lo + len), got, ref);
                }
            }
        }
    }
}

/*
 * The L1 models' second dual point, alpha scaled by s = min(1, lambda eta / ||v||_inf):
 * the certificate stays valid (D <= P(w') for every w' tried) and, at points far
 * from w = 0 where the ball's B = P / (lambda eta) is large, is the tighter one.
 */
static void t_check_l1_scaled_dual(void)
{
    static const st_glm_model_kind_t kinds[] = {ST_GLM_LASSO, ST_GLM_L1_LOGISTIC,
                                                ST_GLM_ELASTIC_NET, ST_GLM_L1_SQHINGE};
    const st_glm_model_t *m;
    st_glm_objectives_t obj, ball;
    st_glm_reg_sums_t reg;
    double w[6], wp[6], g[6], z[40], lambda, eta, scale, loss_sum, conj, scaled, pw, low;
    int trial, k2, tighter = 0, loss;
    int64_t j;
    size_t k;
    t_prob_t p;

    for (k = 0; k < ST_ARRAY_SIZE(kinds); k++) {
        m    = t_model(kinds[k]);
        loss = t_loss_of(m->kind);
        if (t_prob_make(&p, 40, 6, 1.0, m->classification, 1) != 0) {
            t_fail("out of memory");
            t_prob_free(&p);
            return;
        }
        eta    = st_glm_model_eta(m, 0.7);
        lambda = 0.01 * t_lambda_max(&p, loss, eta);
        for (trial = 0; trial < 40; trial++) {
            for (j = 0; j < p.d; j++) {
                w[j] = (trial % 4 == 0 && j % 2) ? 0.0 : 0.3 * t_gauss();
            }
            /* the certificate's sums, as the solvers compute them: the smooth part's
               gradient from t_primal (at eta 1: the loss part only) */
            t_primal(&p, loss, lambda, 1.0, w, g, NULL);
            t_margins(&p, w, z);
            st_glm_reg_sums(p.d, w, g, lambda, eta, &reg);
            scale    = st_glm_dual_scale(&reg, lambda, eta);
            loss_sum = st_glm_loss_sum(m, p.n, z, p.y, p.c, 0.0);
            conj     = st_glm_grad_conj_sum(m, p.n, z, p.y, p.c, 1.0, 0.0);
            scaled   = st_glm_grad_conj_sum(m, p.n, z, p.y, p.c, scale, 0.0);
            if (!(scale > 0.0 && scale <= 1.0) ||
                (reg.vmax > lambda * eta) != (scale < 1.0)) {
                t_fail("%s: scale %g for vmax %g, lambda eta %g", m->name, scale, reg.vmax,
                       lambda * eta);
            }
            st_glm_primal_objectives(loss_sum, conj, scaled, &reg, p.n, lambda, eta, 0.0,
                                     &obj);
            st_glm_primal_objectives(loss_sum, conj, -INFINITY, &reg, p.n, lambda, eta, 0.0,
                                     &ball);
            pw = t_primal(&p, loss, lambda, eta, w, g, NULL);
            if (!t_close(obj.primal, pw, 1e-13, 1e-12) || obj.dual < ball.dual ||
                (scale < 1.0 && obj.dual < scaled / (double)p.n)) {
                t_fail("%s: P %.17g (expected %.17g), D %.17g, ball D %.17g, scaled %.17g",
                       m->name, obj.primal, pw, obj.dual, ball.dual, scaled / (double)p.n);
            }
            tighter += (obj.dual > ball.dual + 1e-9 * fabs(ball.dual));
            /* weak duality: no w' below D (random points, and steps from w) */
            for (k2 = 0; k2 < 300; k2++) {
                for (j = 0; j < p.d; j++) {
                    wp[j] = (k2 < 150) ? w[j] + 0.1 * t_gauss() * (k2 % 7)
                                       : t_gauss() * (t_unif() < 0.5 ? 0.0 : 1.0);
                }
                low = t_primal(&p, loss, lambda, eta, wp, g, NULL);
                if (low < obj.dual - 1e-12 * (1.0 + fabs(obj.dual))) {
                    t_fail("%s: P(w') %.17g below the certificate's D %.17g (scale %g)",
                           m->name, low, obj.dual, scale);
                    break;
                }
            }
        }
        t_prob_free(&p);
    }
    if (tighter == 0) {
        t_fail("the scaled dual point was never the tighter one");
    }
    t_note("scaled dual point tighter in %d of 120 certificates", tighter);
}

static void t_check_serial_args(void)
{
    const st_glm_model_t *lr = t_model(ST_GLM_LOGISTIC), *en = t_model(ST_GLM_ELASTIC_NET);
    double x[4] = {1.0, 0.0, 0.0, 1.0}, y[2] = {1.0, -1.0}, c[2] = {1.0, 1.0}, w[2] = {7, 7};
    int64_t ip[3] = {0, 1, 2};
    uint32_t ix[2] = {0, 1};
    st_glm_serial_problem_t prob = {2, 2, NULL, NULL, x, y, NULL};
    st_glm_serial_params_t par = {0.1, 0.5, 10, 0.0, 1, 1, 0.0};
    int epochs = -1;

    if (st_glm_serial_check(lr, &prob, &par) != NULL ||
        st_glm_serial_train(lr, &prob, &par, w, NULL, NULL, &epochs) != ST_OK || epochs != 10) {
        t_fail("serial: a valid tiny problem is refused or stops early (%d epochs)", epochs);
    }
    y[0] = 0.0;
    if (st_glm_serial_check(lr, &prob, &par) == NULL) {
        t_fail("serial: label 0 accepted for logistic");
    }
    if (st_glm_serial_check(t_model(ST_GLM_RIDGE), &prob, &par) != NULL) {
        t_fail("serial: label 0 refused for ridge");
    }
    y[0] = 1.0;
    prob.weights = c;
    c[1] = 0.0;
    w[0] = 7.0;
    if (st_glm_serial_check(lr, &prob, &par) == NULL ||
        st_glm_serial_train(lr, &prob, &par, w, NULL, NULL, NULL) != ST_ERR_INVALID_PARAM ||
        w[0] != 7.0) {
        t_fail("serial: weight 0 accepted, or w written on failure");
    }
    c[1] = 1.0;
    par.eta = 1.5;
    if (st_glm_serial_check(en, &prob, &par) == NULL || st_glm_serial_check(lr, &prob, &par)) {
        t_fail("serial: eta 1.5 accepted for elastic-net, or refused for logistic");
    }
    par.eta    = 0.5;
    par.lambda = 0.0;
    if (st_glm_serial_check(lr, &prob, &par) == NULL) {
        t_fail("serial: lambda 0 accepted");
    }
    par.lambda   = 0.1;
    prob.indptr  = ip;
    prob.indices = ix;
    if (st_glm_serial_check(lr, &prob, &par) != NULL) {
        t_fail("serial: a valid CSR refused");
    }
    ix[1] = 2;
    if (st_glm_serial_check(lr, &prob, &par) == NULL) {
        t_fail("serial: a column index >= d accepted");
    }
    ix[1] = 1;
    x[1]  = NAN;
    if (st_glm_serial_check(lr, &prob, &par) == NULL) {
        t_fail("serial: a NaN value accepted");
    }
}

int main(int argc, char **argv)
{
    size_t k;

    t_verbose = (argc > 1 && !strcmp(argv[1], "-v"));

    t_check_table();
    t_check_derivatives();
    t_check_conjugates();
    t_check_dual_steps();
    t_check_prox();
    t_check_objective_helpers();
    t_check_serial_args();
    t_check_l1_null();
    t_check_l1_scaled_dual();
    t_check_gather_dot();
    for (k = 0; k < ST_ARRAY_SIZE(t_cases); k++) {
        t_run_case(&t_cases[k], (int)k);
    }
    if (t_failures > 0) {
        fprintf(stderr, "test_model: %d failures\n", t_failures);
        return 1;
    }
    return 0;
}
