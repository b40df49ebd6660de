/*
 * Method newton's conjugate-gradient sweeps (st_glm_cg_sweep, solver/st_glm_newton.c;
 * st_glm_cg_chunk, cuda/st_glm_kernels.h, which the GPU's st_glm_cg repeats step for
 * step). For vector lengths around the chunk and lane sizes and 1 to 7 threads, the
 * four sweeps (INIT, FINISH, UPDATE, DIRECTION) in a CG step's order must give:
 *   - the vectors' entries of the formulas, bit for bit;
 *   - dot products in the documented order, bit for bit, which this test computes
 *     itself: in each chunk of ST_GLM_CG_CHUNK entries, entry e to lane e %
 *     ST_GLM_CG_LANES, the lanes summed pairwise in a tree (l += l + half), the
 *     chunks in order; and near the plain sum (1e-12 relative);
 *   - the same bits on every thread count;
 * and st_glm_sweep's sums (the primal methods' other d-vector sweeps): each chunk's
 * in entry order, the chunks' in order, on every thread count; and the persistent
 * workers under it (st_glm_run_parts) with 4 callers at once, calls from inside a
 * part, and calls in a forked child.
 */
#include "config.h"

#include "st_glm.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static uint64_t t_state = 0x2545f4914f6cdd1dULL;

static double t_unit(void)   /* [0, 1) */
{
    t_state ^= t_state << 13;
    t_state ^= t_state >> 7;
    t_state ^= t_state << 17;
    return (double)(t_state >> 11) / 9007199254740992.0;
}

static double t_signed(void)   /* mixed signs and magnitudes, 1e-4 to 1e4 */
{
    double v = t_unit() * pow(10.0, (double)(int)(t_unit() * 9) - 4);

    return (t_unit() < 0.5) ? -v : v;
}

/* The documented order: lanes of a chunk, their tree, the chunks in order. */
static double t_dot(const double *x, const double *y, const double *div, int64_t len)
{
    double lanes[ST_GLM_CG_LANES], total = 0, term;
    int64_t lo, e;
    int l, half;

    for (lo = 0; lo < len; lo += ST_GLM_CG_CHUNK) {
        memset(lanes, 0, sizeof(lanes));
        for (e = lo; e < len && e < lo + ST_GLM_CG_CHUNK; e++) {
            term = x[e] * y[e];
            if (div != NULL) {
                term = term / div[e];
            }
            lanes[(e - lo) % ST_GLM_CG_LANES] += term;
        }
        for (half = ST_GLM_CG_LANES / 2; half >= 1; half /= 2) {
            for (l = 0; l < half; l++) {
                lanes[l] += lanes[l + half];
            }
        }
        total += lanes[0];
    }
    return total;
}

static double t_plain(const double *x, const double *y, const double *div, int64_t len)
{
    double s = 0;
    int64_t e;

    for (e = 0; e < len; e++) {
        s += (div != NULL) ? x[e] * y[e] / div[e] : x[e] * y[e];
    }
    return s;
}

enum { T_G, T_M, T_HV, T_S, T_R, T_Q, T_HQ, T_VECS };

typedef struct {
    double *v[T_VECS];
    double *part;
    double dots[4][ST_GLM_CG_DOTS];   /* INIT, FINISH, UPDATE (3) */
} t_run_t;

static int t_fail;

static void t_check(int ok, const char *what, int64_t len, int threads)
{
    if (!ok) {
        fprintf(stderr, "FAIL: length %lld, %d thread(s): %s\n", (long long)len, threads, what);
        t_fail = 1;
    }
}

/* One CG step's sweeps on @a threads threads, from the inputs in @a in. */
static void t_sweeps(t_run_t *run, const double *const in[3], int64_t len, int threads,
                     double alpha, double beta)
{
    st_glm_cg_args_t cg;
    int k;

    memset(run->dots, 0, sizeof(run->dots));   /* (the entries no sweep gives) */
    for (k = 0; k < T_VECS; k++) {
        run->v[k] = calloc((size_t)len + 1, sizeof(double));
    }
    run->part = malloc((size_t)(st_glm_cg_chunks(len) + 1) * ST_GLM_CG_DOTS * sizeof(double));
    for (k = 0; k < 3; k++) {
        memcpy(run->v[k], in[k], (size_t)len * sizeof(double));
    }
    memset(&cg, 0, sizeof(cg));
    cg.g      = run->v[T_G];
    cg.m      = run->v[T_M];
    cg.hv     = run->v[T_HV];
    cg.s      = run->v[T_S];
    cg.r      = run->v[T_R];
    cg.q      = run->v[T_Q];
    cg.hq     = run->v[T_HQ];
    cg.part   = run->part;
    cg.n      = 1000.0;
    cg.lambda = 1e-3;
    cg.len    = len;
    cg.op     = ST_GLM_CG_INIT;
    st_glm_cg_sweep(&cg, threads, run->dots[0]);
    cg.op = ST_GLM_CG_FINISH;
    st_glm_cg_sweep(&cg, threads, run->dots[1]);
    cg.op    = ST_GLM_CG_UPDATE;
    cg.alpha = alpha;
    st_glm_cg_sweep(&cg, threads, run->dots[2]);
    cg.op   = ST_GLM_CG_DIRECTION;
    cg.beta = beta;
    st_glm_cg_sweep(&cg, threads, NULL);
}

static void t_free(t_run_t *run)
{
    int k;

    for (k = 0; k < T_VECS; k++) {
        free(run->v[k]);
    }
    free(run->part);
}

static void t_case(int64_t len)
{
    static const int threads[] = {1, 2, 3, 7};
    double *in[3], *s, *r, *q0, *q, *hq, alpha = 0.37, beta = 0.61, want[5], plain[5];
    t_run_t one, other;
    int64_t e;
    int t, k;

    for (k = 0; k < 3; k++) {
        in[k] = calloc((size_t)len + 1, sizeof(double));
    }
    s  = calloc((size_t)len + 1, sizeof(double));
    r  = calloc((size_t)len + 1, sizeof(double));
    q0 = calloc((size_t)len + 1, sizeof(double));
    q  = calloc((size_t)len + 1, sizeof(double));
    hq = calloc((size_t)len + 1, sizeof(double));
    for (e = 0; e < len; e++) {
        in[0][e] = t_signed();                 /* g */
        in[1][e] = 1e-3 + t_unit() * 10;       /* m > 0 */
        in[2][e] = t_signed();                 /* hv */
    }
    /* the reference: the formulas, one entry at a time */
    for (e = 0; e < len; e++) {
        r[e]  = -in[0][e];
        q0[e] = r[e] / in[1][e];
        hq[e] = in[2][e] / 1000.0 + 1e-3 * q0[e];
        s[e]  = 0 + alpha * q0[e];
        r[e]  = r[e] - alpha * hq[e];
        q[e]  = r[e] / in[1][e] + beta * q0[e];
    }
    {
        double *rm = calloc((size_t)len + 1, sizeof(double));

        for (e = 0; e < len; e++) {
            rm[e] = -in[0][e];
        }
        want[0]  = t_dot(q0, rm, NULL, len);
        plain[0] = t_plain(q0, rm, NULL, len);
        free(rm);
    }
    want[1]  = t_dot(q0, hq, NULL, len);
    plain[1] = t_plain(q0, hq, NULL, len);
    want[2]  = t_dot(in[0], s, NULL, len);
    plain[2] = t_plain(in[0], s, NULL, len);
    want[3]  = t_dot(r, s, NULL, len);
    plain[3] = t_plain(r, s, NULL, len);
    want[4]  = t_dot(r, r, in[1], len);
    plain[4] = t_plain(r, r, in[1], len);

    t_sweeps(&one, (const double *const *)in, len, 1, alpha, beta);
    for (e = 0; e < len; e++) {
        if (one.v[T_S][e] != s[e] || one.v[T_R][e] != r[e] || one.v[T_Q][e] != q[e] ||
            one.v[T_HQ][e] != hq[e]) {
            t_check(0, "a vector's entry is not its formula's", len, 1);
            break;
        }
    }
    {
        double got[5] = {one.dots[0][0], one.dots[1][0], one.dots[2][0], one.dots[2][1],
                         one.dots[2][2]};
        static const char *names[5] = {"q.r", "q.Hq", "g.s", "r.s", "r.r / m"};
        char what[128];

        for (k = 0; k < 5; k++) {
            snprintf(what, sizeof(what), "%s is %.17g, the documented order gives %.17g",
                     names[k], got[k], want[k]);
            t_check(memcmp(&got[k], &want[k], sizeof(double)) == 0, what, len, 1);
            snprintf(what, sizeof(what), "%s is %.17g, the plain sum %.17g", names[k], got[k],
                     plain[k]);
            t_check(fabs(got[k] - plain[k]) <= 1e-12 * (fabs(plain[k]) + 1e-300) ||
                            (len == 0 && got[k] == 0),
                    what, len, 1);
        }
    }
    for (t = 1; t < (int)(sizeof(threads) / sizeof(threads[0])); t++) {
        t_sweeps(&other, (const double *const *)in, len, threads[t], alpha, beta);
        for (k = T_S; k < T_VECS; k++) {
            t_check(len == 0 || memcmp(other.v[k], one.v[k], (size_t)len * sizeof(double)) == 0,
                    "a vector differs from one thread's", len, threads[t]);
        }
        t_check(memcmp(other.dots, one.dots, sizeof(one.dots)) == 0,
                "a dot product differs from one thread's", len, threads[t]);
        t_free(&other);
    }
    t_free(&one);
    for (k = 0; k < 3; k++) {
        free(in[k]);
    }
    free(s);
    free(r);
    free(q0);
    free(q);
    free(hq);
}

/* st_glm_sweep with sums: x.y and x.x per chunk (in entry order), the chunks' sums in
 * chunk order, whatever the threads */
static void t_sweep_chunk(void *arg, int64_t lo, int64_t hi, double *part)
{
    const double *const *xy = arg;
    double a = 0, b = 0;
    int64_t e;

    for (e = lo; e < hi; e++) {
        a += xy[0][e] * xy[1][e];
        b += xy[0][e] * xy[0][e];
    }
    part[0] = a;
    part[1] = b;
}

static void t_sweep_sums(int64_t len)
{
    static const int threads[] = {1, 2, 3, 7};
    double *x = calloc((size_t)len + 1, sizeof(double)), *y = calloc((size_t)len + 1,
                                                                        sizeof(double));
    const double *xy[2] = {x, y};
    double want[2] = {0, 0}, got[2], chunk[2];
    int64_t e, lo;
    int t;

    for (e = 0; e < len; e++) {
        x[e] = t_signed();
        y[e] = t_signed();
    }
    for (lo = 0; lo < len; lo += ST_GLM_CG_CHUNK) {
        chunk[0] = chunk[1] = 0;
        for (e = lo; e < len && e < lo + ST_GLM_CG_CHUNK; e++) {
            chunk[0] += x[e] * y[e];
            chunk[1] += x[e] * x[e];
        }
        want[0] += chunk[0];
        want[1] += chunk[1];
    }
    for (t = 0; t < (int)(sizeof(threads) / sizeof(threads[0])); t++) {
        got[0] = got[1] = -1;
        st_glm_sweep(threads[t], len, 2, t_sweep_chunk, (void *)xy, NULL, got);
        t_check(memcmp(got, want, sizeof(got)) == 0,
                "st_glm_sweep's sums are not the chunks' in order", len, threads[t]);
    }
    free(x);
    free(y);
}

/* The workers of st_glm_run_parts (solver/st_glm_lbfgs.c) under concurrent callers,
 * nested calls and fork(): the same sums as one thread, and no hang. */
#define T_POOL_LEN (40 * ST_GLM_CG_CHUNK + 77)

static double *t_pool_x, *t_pool_y, t_pool_want[2];

static void *t_pool_caller(void *arg)
{
    const double *xy[2] = {t_pool_x, t_pool_y};
    double got[2];
    int k, *bad = arg;

    for (k = 0; k < 50; k++) {
        st_glm_sweep(3 + k % 5, T_POOL_LEN, 2, t_sweep_chunk, (void *)xy, NULL, got);
        if (memcmp(got, t_pool_want, sizeof(got)) != 0) {
            *bad = 1;
        }
    }
    return NULL;
}

/* a sweep whose chunks each run a sweep of their own (the workers busy: threads of
 * its own) */
static void t_nested_chunk(void *arg, int64_t lo, int64_t hi, double *part)
{
    const double *xy[2] = {t_pool_x, t_pool_y};
    double got[2];

    (void)arg;
    (void)lo;
    (void)hi;
    st_glm_sweep(2, 20 * ST_GLM_CG_CHUNK, 2, t_sweep_chunk, (void *)xy, NULL, got);
    part[0] = got[0];
}

static void t_pool(void)
{
    const double *xy[2];
    double got[2], nested[2], inner[2];
    pthread_t tid[4];
    int bad[4] = {0, 0, 0, 0}, k, status;
    pid_t pid;

    t_pool_x = calloc(T_POOL_LEN, sizeof(double));
    t_pool_y = calloc(T_POOL_LEN, sizeof(double));
    for (k = 0; k < T_POOL_LEN; k++) {
        t_pool_x[k] = t_signed();
        t_pool_y[k] = t_signed();
    }
    xy[0] = t_pool_x;
    xy[1] = t_pool_y;
    st_glm_sweep(1, T_POOL_LEN, 2, t_sweep_chunk, (void *)xy, NULL, t_pool_want);
    for (k = 0; k < 4; k++) {
        if (pthread_create(&tid[k], NULL, t_pool_caller, &bad[k]) != 0) {
            t_pool_caller(&bad[k]);
            tid[k] = pthread_self();
        }
    }
    for (k = 0; k < 4; k++) {
        if (!pthread_equal(tid[k], pthread_self())) {
            pthread_join(tid[k], NULL);
        }
        t_check(!bad[k], "concurrent callers: other sums than one thread's", T_POOL_LEN, 3);
    }
    st_glm_sweep(1, 20 * ST_GLM_CG_CHUNK, 2, t_sweep_chunk, (void *)xy, NULL, inner);
    st_glm_sweep(4, 40 * ST_GLM_CG_CHUNK, 1, t_nested_chunk, NULL, NULL, nested);
    for (got[0] = 0, k = 0; k < 40; k++) {
        got[0] += inner[0];   /* the 40 chunks' sums in order */
    }
    t_check(nested[0] == got[0], "nested calls: other sums than one thread's",
            40 * ST_GLM_CG_CHUNK, 4);
    /* a forked child has no workers: its calls must not wait for the parent's
       (ThreadSanitizer stops a child of a threaded process that starts threads) */
#ifndef __SANITIZE_THREAD__
    fflush(NULL);
    pid = fork();
    if (pid == 0) {
        alarm(20);
        st_glm_sweep(5, T_POOL_LEN, 2, t_sweep_chunk, (void *)xy, NULL, got);
        _exit(memcmp(got, t_pool_want, sizeof(got)) == 0 ? 0 : 1);
    }
    t_check(pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
                    WEXITSTATUS(status) == 0,
            "a forked child's call hung or summed otherwise", T_POOL_LEN, 5);
#else
    (void)pid;
    (void)status;
#endif
    free(t_pool_x);
    free(t_pool_y);
}

int main(void)
{
    static const int64_t lengths[] = {0, 1, 2, ST_GLM_CG_LANES - 1, ST_GLM_CG_LANES,
                                      ST_GLM_CG_CHUNK - 1, ST_GLM_CG_CHUNK,
                                      ST_GLM_CG_CHUNK + 1, 3 * ST_GLM_CG_CHUNK + 5,
                                      16 * ST_GLM_CG_CHUNK, 40000, 100003, 300007};
    int k;

    for (k = 0; k < (int)(sizeof(lengths) / sizeof(lengths[0])); k++) {
        t_case(lengths[k]);
        t_sweep_sums(lengths[k]);
    }
    t_pool();
    if (!t_fail) {
        printf("PASS: the CG sweeps over %d lengths, 1 to 7 threads\n",
               (int)(sizeof(lengths) / sizeof(lengths[0])));
    }
    return t_fail;
}
