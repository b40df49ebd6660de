/*
 * Training of the L1 models (lasso, l1-logistic, elastic net, l1-sqsvm) across ranks, over a
 * partition of the features: ProxCoCoA+ (Smith, Forte, Ma, Takac, Jordan, Jaggi,
 * "CoCoA: A General Framework for Communication-Efficient Distributed Optimization",
 * JMLR 2018, the primal setting, adding with sigma' = K ranks):
 *
 *     min_w  f(X w) + g(w),   f(z) = (1/n) sum_i c_i phi(z_i, y_i),
 *                             g(w) = lambda sum_j (eta |w_j| + (1 - eta)/2 w_j^2).
 *
 * The rows arrive partitioned over ranks (each rank read its share of the file). They
 * are redistributed once, with an all-to-all, so that rank k holds the columns of its
 * block P_k of features (contiguous, balanced by nonzeros) over all n rows, as CSC,
 * and every rank keeps the margins z = X w of all n rows. A round: rank k runs
 * local_epochs passes of coordinate descent over its features, each in a fresh random
 * order, on the local subproblem
 *
 *     min_dw  grad f(z)^T X_k dw + (sigma'/2) sum_i b_i (X_k dw)_i^2 + g_k(w_k + dw),
 *     b_i = c_i beta / n,  beta = sup phi'' (the model's smoothness),
 *
 * whose coordinate minimizers are exact (st_glm_prox_step). Since f's Hessian is
 * diagonal and at most diag(b), and (sum_k a_k)^T B (sum_k a_k) <= K sum_k a_k^T B a_k,
 * the summed steps never increase the objective by more than the subproblems promise.
 * The n-vector dz_k = X_k dw is summed over ranks with one MPI_Allreduce and every rank
 * adds it to z.
 *
 * That is method cd. The default (method newton, MODELS.md 4.5) is block proximal
 * Newton: the direction approximately minimizes the loss's quadratic model at z, with
 * the Hessian X^T D X (D_ii = c_i phi''(z_i) / n, the curvature where the margins are,
 * not its bound), plus the regularizer, by block Jacobi: each rank's coordinate passes
 * over its features that may move, with the other blocks' X d as they stood, the
 * blocks' changes summed (an allreduce of n doubles and a few) and scaled by the step
 * that lowers the model most, up to ST_GLM_PN_SOLVES times; then an Armijo search
 * along the whole direction: every rank computes the loss terms alike from the
 * replicated margins, and the regularizer's change at each trial step comes with one
 * allreduce of ST_GLM_PN_TRIALS + 1 doubles. On the dense rows of tests/glm_train.sh,
 * l1-logistic on 2 ranks took 88 ProxCoCoA+ rounds and takes 6 (bench/RESULTS.md).
 *
 * After every round the certificate of MODELS.md 4.4 (the Lipschitzed and the scaled
 * dual points): the loss gradient on my features at the new z, st_glm_reg_sums over my
 * block, loss and conjugate sums over my share of the rows, all summed over ranks (max
 * for vmax). With one rank the serial solver (newGLMNET for l1-logistic and l1-sqsvm) is used
 * instead.
 */
#include "config.h"

#include "st_glm.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* One nonzero on its way to its column's owner. */
typedef struct {
    uint32_t row;   /* global row */
    uint32_t col;   /* global column */
    double   x;
} st_glm_entry_t;

typedef struct {
    const st_glm_model_t *loss;
    int                   rank, nranks;
    int64_t               n;        /* rows over all ranks */
    int64_t               d_all;    /* features, + 1 with a bias feature */
    int64_t              *bounds;   /* rank k owns features [bounds[k], bounds[k + 1]) */
    int64_t               nloc;     /* my features */
    int64_t              *cp;       /* CSC of my features: nloc + 1 column pointers */
    uint32_t             *ri;       /* rows */
    double               *cv;       /* values */
    double               *y, *c;    /* labels and example weights of all n rows */
    double               *z;        /* margins X w of all n rows */
    double               *gz;       /* c_i phi'(z_i) / n at the round's start */
    double               *dz;       /* X_k dw, then summed over ranks */
    double               *h;        /* sigma' sum_i b_i x_ij^2 of my features */
    double               *w;        /* my features' weights */
    double               *grad;     /* the loss gradient on my features */
    int64_t              *perm;
    int                  *counts, *displs;  /* per rank, for the gathers */
} st_glm_primal_t;

static void st_glm_primal_free(st_glm_primal_t *pt)
{
    free(pt->bounds);
    free(pt->cp);
    free(pt->ri);
    free(pt->cv);
    free(pt->y);
    free(pt->c);
    free(pt->z);
    free(pt->gz);
    free(pt->dz);
    free(pt->h);
    free(pt->w);
    free(pt->grad);
    free(pt->perm);
    free(pt->counts);
    free(pt->displs);
}

static int st_glm_owner(const st_glm_primal_t *pt, int64_t j)
{
    int lo = 0, hi = pt->nranks - 1, mid;

    while (lo < hi) {   /* the last k with bounds[k] <= j */
        mid = (lo + hi + 1) / 2;
        if (pt->bounds[mid] <= j) {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    return lo;
}

/*
 * Everything that does not change during training: the feature blocks, the CSC of my
 * features (an all-to-all of my rows' nonzeros), labels and weights of all rows.
 * Returns 0, or -1 with a message (the same answer on every rank).
 */
static int st_glm_primal_setup(st_glm_primal_t *pt, const st_glm_data_t *data,
                               const strata_glm_param_t *param, MPI_Comm comm, char *msg,
                               size_t msg_len)
{
    int64_t m = data->n_rows, d = data->n_cols, nb = (param->bias > 0), row0 = 0, i, j, k;
    int64_t total = 0, acc, *cnt = NULL, *fill = NULL, nrecv = 0;
    int *scount = NULL, *sdispl = NULL, *rcount = NULL, *rdispl = NULL, ok, r;
    st_glm_entry_t *sbuf = NULL, *rbuf = NULL;
    double beta = pt->loss->smoothness, sig = (double)pt->nranks;
    int64_t send_bytes = 0, recv_bytes = 0;

    pt->n     = data->n_rows_global;
    pt->d_all = d + nb;
    ST_GLM_MPI(MPI_Exscan(&m, &row0, 1, MPI_INT64_T, MPI_SUM, comm));
    if (pt->rank == 0) {
        row0 = 0;
    }

    /* blocks of features with about equal nonzeros, from the column counts */
    cnt        = calloc((size_t)pt->d_all, sizeof(*cnt));
    pt->bounds = malloc(((size_t)pt->nranks + 1) * sizeof(*pt->bounds));
    scount     = calloc((size_t)pt->nranks, sizeof(int));
    sdispl     = calloc((size_t)pt->nranks, sizeof(int));
    rcount     = calloc((size_t)pt->nranks, sizeof(int));
    rdispl     = calloc((size_t)pt->nranks, sizeof(int));
    ok = (cnt && pt->bounds && scount && sdispl && rcount && rdispl && pt->n <= UINT32_MAX);
    if (!st_glm_agree(comm, ok)) {
        st_glm_msg(msg, msg_len, "out of memory, or more than 2^32 rows");
        goto fail;
    }
    for (k = 0; k < data->indptr[m]; k++) {
        cnt[data->indices[k]]++;
    }
    if (nb) {
        cnt[d] = m;
    }
    st_glm_allreduce(comm, cnt, pt->d_all, MPI_INT64_T, MPI_SUM);
    for (j = 0; j < pt->d_all; j++) {
        total += cnt[j] + 1;   /* + 1: empty columns count a little too */
    }
    pt->bounds[0] = 0;
    for (j = 0, acc = 0, r = 1; r < pt->nranks; r++) {
        while (j < pt->d_all && acc + cnt[j] + 1 <= total * r / pt->nranks) {
            acc += cnt[j++] + 1;
        }
        pt->bounds[r] = j;
    }
    pt->bounds[pt->nranks] = pt->d_all;
    pt->nloc = pt->bounds[pt->rank + 1] - pt->bounds[pt->rank];

    /* my rows' nonzeros to their owners */
    for (i = 0; i < m; i++) {
        for (k = data->indptr[i]; k < data->indptr[i + 1]; k++) {
            scount[st_glm_owner(pt, data->indices[k])]++;
        }
        if (nb) {
            scount[pt->nranks - 1]++;
        }
    }
    ST_GLM_MPI(MPI_Alltoall(scount, 1, MPI_INT, rcount, 1, MPI_INT, comm));
    for (r = 0; r < pt->nranks; r++) {
        send_bytes += (int64_t)scount[r] * (int64_t)sizeof(st_glm_entry_t);
        recv_bytes += (int64_t)rcount[r] * (int64_t)sizeof(st_glm_entry_t);
        nrecv += rcount[r];
    }
    if (data->indptr[m] + m * nb >= INT32_MAX / (int64_t)sizeof(st_glm_entry_t)) {
        send_bytes = INT32_MAX;   /* an int count above may have wrapped: refuse */
    }
    sbuf = malloc((size_t)ST_MAX(send_bytes, 1));
    rbuf = malloc((size_t)ST_MAX(recv_bytes, 1));
    fill = calloc((size_t)pt->nranks, sizeof(*fill));
    ok   = (sbuf && rbuf && fill && send_bytes < INT32_MAX && recv_bytes >= 0 &&
            recv_bytes < INT32_MAX);
    if (!st_glm_agree(comm, ok)) {
        st_glm_msg(msg, msg_len, "out of memory, or a rank's share of the nonzeros over 2 GB "
                   "(use more ranks)");
        goto fail;
    }
    for (r = 1; r < pt->nranks; r++) {
        sdispl[r] = sdispl[r - 1] + scount[r - 1];
        rdispl[r] = rdispl[r - 1] + rcount[r - 1];
    }
    for (i = 0; i < m; i++) {
        for (k = data->indptr[i]; k < data->indptr[i + 1]; k++) {
            r = st_glm_owner(pt, data->indices[k]);
            sbuf[sdispl[r] + fill[r]++] = (st_glm_entry_t){
                    (uint32_t)(row0 + i), data->indices[k],
                    st_glm_data_val(data, k)};
        }
        if (nb) {
            r = pt->nranks - 1;
            sbuf[sdispl[r] + fill[r]++] =
                    (st_glm_entry_t){(uint32_t)(row0 + i), (uint32_t)d, param->bias};
        }
    }
    for (r = 0; r < pt->nranks; r++) {   /* now in bytes */
        scount[r] *= (int)sizeof(st_glm_entry_t);
        sdispl[r] *= (int)sizeof(st_glm_entry_t);
        rcount[r] *= (int)sizeof(st_glm_entry_t);
        rdispl[r] *= (int)sizeof(st_glm_entry_t);
    }
    ST_GLM_MPI(MPI_Alltoallv(sbuf, scount, sdispl, MPI_BYTE, rbuf, rcount, rdispl, MPI_BYTE,
                             comm));   /* (failed: the agreement below says so) */
    free(sbuf);
    sbuf = NULL;

    /* CSC: the entries arrive by source rank, in row order, so every column's rows
       are increasing */
    pt->cp     = calloc((size_t)pt->nloc + 1, sizeof(*pt->cp));
    pt->ri     = malloc((size_t)ST_MAX(nrecv, 1) * sizeof(*pt->ri));
    pt->cv     = malloc((size_t)ST_MAX(nrecv, 1) * sizeof(*pt->cv));
    pt->y      = malloc((size_t)pt->n * sizeof(double));
    pt->c      = malloc((size_t)pt->n * sizeof(double));
    pt->z      = calloc((size_t)pt->n, sizeof(double));
    pt->gz     = malloc((size_t)pt->n * sizeof(double));
    pt->dz     = calloc((size_t)pt->n, sizeof(double));
    pt->h      = calloc((size_t)ST_MAX(pt->nloc, 1), sizeof(double));
    pt->w      = calloc((size_t)ST_MAX(pt->nloc, 1), sizeof(double));
    pt->grad   = calloc((size_t)ST_MAX(pt->nloc, 1), sizeof(double));
    pt->perm   = malloc((size_t)ST_MAX(pt->nloc, 1) * sizeof(int64_t));
    pt->counts = malloc((size_t)pt->nranks * sizeof(int));
    pt->displs = malloc((size_t)pt->nranks * sizeof(int));
    ok = (pt->cp && pt->ri && pt->cv && pt->y && pt->c && pt->z && pt->gz && pt->dz && pt->h &&
          pt->w && pt->grad && pt->perm && pt->counts && pt->displs);
    if (!st_glm_agree(comm, ok)) {
        st_glm_msg(msg, msg_len, "out of memory (%lld rows)", (long long)pt->n);
        goto fail;
    }
    for (k = 0; k < nrecv; k++) {
        pt->cp[rbuf[k].col - pt->bounds[pt->rank] + 1]++;
    }
    for (j = 0; j < pt->nloc; j++) {
        pt->cp[j + 1] += pt->cp[j];
    }
    {
        int64_t *pos = calloc((size_t)ST_MAX(pt->nloc, 1), sizeof(int64_t));

        if (pos == NULL) {
            ok = 0;
        }
        for (k = 0; ok && k < nrecv; k++) {
            j              = rbuf[k].col - pt->bounds[pt->rank];
            pt->ri[pt->cp[j] + pos[j]] = rbuf[k].row;
            pt->cv[pt->cp[j] + pos[j]] = rbuf[k].x;
            pos[j]++;
        }
        free(pos);
    }
    free(rbuf);
    rbuf   = NULL;
    if (!st_glm_agree(comm, ok)) {
        st_glm_msg(msg, msg_len, "out of memory (%lld features on a rank)", (long long)pt->nloc);
        goto fail;
    }

    /* labels of all rows, their weights, and the curvature of my columns */
    ST_GLM_MPI(MPI_Allgather(&(int){(int)m}, 1, MPI_INT, pt->counts, 1, MPI_INT, comm));
    if (st_glm_mpi_failed()) {
        goto fail;
    }
    pt->displs[0] = 0;
    for (r = 1; r < pt->nranks; r++) {
        pt->displs[r] = pt->displs[r - 1] + pt->counts[r - 1];
    }
    ST_GLM_MPI(MPI_Allgatherv(data->y, (int)m, MPI_DOUBLE, pt->y, pt->counts, pt->displs,
                              MPI_DOUBLE, comm));
    if (st_glm_mpi_failed()) {
        goto fail;
    }
    for (i = 0; i < pt->n; i++) {
        pt->c[i] = st_glm_example_weight(pt->loss, param, pt->y[i]);
    }
    for (j = 0; j < pt->nloc; j++) {
        for (k = pt->cp[j]; k < pt->cp[j + 1]; k++) {
            pt->h[j] += pt->c[pt->ri[k]] * pt->cv[k] * pt->cv[k];
        }
        pt->h[j] *= sig * beta / (double)pt->n;
        pt->perm[j] = j;
    }
    /* the feature blocks, for gathering w at the end */
    for (r = 0; r < pt->nranks; r++) {
        pt->counts[r] = (int)(pt->bounds[r + 1] - pt->bounds[r]);
        pt->displs[r] = (int)pt->bounds[r];
    }
    free(cnt);
    free(fill);
    free(scount);
    free(sdispl);
    free(rcount);
    free(rdispl);
    return 0;

fail:
    free(cnt);
    free(fill);
    free(sbuf);
    free(rbuf);
    free(scount);
    free(sdispl);
    free(rcount);
    free(rdispl);
    return -1;
}

/* gz = c_i phi'(z_i) / n for all rows, and the loss gradient on my features. */
static void st_glm_primal_gradient(st_glm_primal_t *pt)
{
    double inv_n = 1.0 / (double)pt->n;
    int64_t i, j;

    for (i = 0; i < pt->n; i++) {
        pt->gz[i] = pt->c[i] * pt->loss->dloss(pt->z[i], pt->y[i], 0.0) * inv_n;
    }
    for (j = 0; j < pt->nloc; j++) {
        pt->grad[j] = st_glm_gather_dot(pt->ri, pt->cv, pt->cp[j], pt->cp[j + 1], pt->gz, NULL);
    }
}

/* The local subproblem: passes of exact coordinate steps; dz = X_k dw. */
static void st_glm_primal_local(st_glm_primal_t *pt, const strata_glm_param_t *param,
                                double eta, uint64_t *rng)
{
    double sb = (double)pt->nranks * pt->loss->smoothness / (double)pt->n, g, wn, delta;
    int64_t j, k, t, q, s;
    int epoch;

    memset(pt->dz, 0, (size_t)pt->n * sizeof(double));
    for (epoch = 0; epoch < param->local_epochs; epoch++) {
        for (q = pt->nloc - 1; q > 0; q--) {
            s           = (int64_t)(st_glm_rand(rng) % (uint64_t)(q + 1));
            t           = pt->perm[q];
            pt->perm[q] = pt->perm[s];
            pt->perm[s] = t;
        }
        for (q = 0; q < pt->nloc; q++) {
            j = pt->perm[q];
            /* the subproblem's gradient at dw: grad_j + sigma' sum_i b_i x_ij dz_i */
            g     = pt->grad[j] + sb * st_glm_gather_dot(pt->ri, pt->cv, pt->cp[j],
                                                         pt->cp[j + 1], pt->c, pt->dz);
            wn    = pt->w[j];
            delta = st_glm_prox_step(g, pt->h[j], param->lambda, eta, &wn);
            if (delta == 0.0) {
                continue;
            }
            pt->w[j] = wn;
            for (k = pt->cp[j]; k < pt->cp[j + 1]; k++) {
                pt->dz[pt->ri[k]] += delta * pt->cv[k];
            }
        }
    }
}

/* The block proximal Newton round's arrays (method newton, the default) */
typedef struct {
    double  *dd;    /* n: c_i phi''(z_i) / n */
    double  *dir;   /* nloc: my block of the direction */
    double  *hd;    /* nloc: the model's diagonal on my features */
    int64_t *act;   /* nloc: my features that may move */
    double  *prev;  /* nloc: my direction before a solve, on act */
    double  *xd;    /* n + ST_GLM_PN_TAUS + 4: X d where my passes see it, then the
                       solve's change of it, and its other sums (st_glm_primal_pn) */
    double  *reg;   /* ST_GLM_PN_TRIALS + 1: the regularizer's change at each trial
                       step, and the predicted decrease, summed over ranks */
} st_glm_pn_t;

static void st_glm_pn_free(st_glm_pn_t *pn)
{
    free(pn->dd);
    free(pn->dir);
    free(pn->hd);
    free(pn->act);
    free(pn->prev);
    free(pn->xd);
    free(pn->reg);
}

#define ST_GLM_PN_TRIALS 30    /* trial steps of the line search: 1, 1/2, ... */
#define ST_GLM_PN_TAUS   9     /* trial steps of a solve's change: 1, 2^-1/2, ...,
                                  2^-7/2, and 1/K (K ranks), which never raises the
                                  model (MODELS.md 4.5) */
#define ST_GLM_PN_SOLVES 16    /* block Jacobi solves of the direction per round, at most */
#define ST_GLM_PN_STALL  0.1   /* and the last: one that lowered the model by less than
                                  this fraction of what the round's solves did */

/*
 * A round of block proximal Newton: the direction d minimizes, approximately, the
 * quadratic model of the loss at z (gradient grad, Hessian X^T D X) plus the
 * regularizer over the features that may move, by block Jacobi with a line search
 * on the model: in each solve every rank passes over its block's coordinates with the
 * other blocks' X d as they stood (st_glm_prox_newton_passes), the blocks' changes
 * Delta_k and X_k Delta_k are summed (an allreduce of n + ST_GLM_PN_TAUS + 4 doubles:
 * X Delta, g.Delta, the regularizer's change at each trial step, the stop's sums),
 * and all ranks take d + tau Delta with the trial step tau that lowers the model most
 * (every rank computes the model's smooth part alike from the replicated margins:
 * tau (g + X^T D X d).Delta + tau^2/2 Delta^T X^T D X Delta). Where features on
 * different ranks are correlated the blocks' steps overlap and tau < 1 (plain Jacobi,
 * tau = 1, oscillated on the criteo-like set; the first solve alone, from d = 0, left
 * its dense columns' gradient at 30x lambda for hundreds of rounds). The solves stop
 * when the first pass of the last one found the model's violation, summed over the
 * blocks, a tenth of the objective's (newGLMNET's inner stop on one rank), nothing
 * moved or no trial step lowered the model, the last lowered it by less than a tenth
 * of what the round's solves did, or after ST_GLM_PN_SOLVES. Then an Armijo
 * search along d, whose loss terms every rank computes alike from the replicated
 * margins and whose regularizer terms come with one more allreduce of
 * ST_GLM_PN_TRIALS + 1 doubles.
 */
static void st_glm_primal_pn(st_glm_primal_t *pt, st_glm_pn_t *pn, double lambda, double eta,
                             MPI_Comm comm, double *comm_s)
{
    st_glm_csc_t X = {pt->nloc, pt->cp, pt->ri, pt->cv};
    double inv_n = 1.0 / (double)pt->n, t, diff, tc, viol, first, lin, quad, best, x;
    double total = 0.0;             /* what the round's solves lowered the model by */
    double *sum  = pn->xd + pt->n;  /* after X Delta: the solve's other sums */
    double tau[ST_GLM_PN_TAUS], q[ST_GLM_PN_TAUS];
    int64_t i, j, a, nact, n = pt->n;
    int s, c, moved, agree[2];

    for (tau[0] = 1.0, s = 1; s < ST_GLM_PN_TAUS - 1; s++) {
        tau[s] = tau[s - 1] * M_SQRT1_2;
    }
    tau[ST_GLM_PN_TAUS - 1] = 1.0 / (double)pt->nranks;

    for (i = 0; i < n; i++) {
        pn->dd[i] = pt->c[i] * pt->loss->d2loss(pt->z[i], pt->y[i], 0.0) * inv_n;
        pt->dz[i] = 0.0;   /* X d of all blocks */
    }
    nact = st_glm_prox_newton_setup(&X, pn->dd, pt->grad, pt->w, lambda, eta, pn->dir,
                                    pn->hd, pn->act, &viol);
    for (c = 1;; c++) {
        memcpy(pn->xd, pt->dz, (size_t)n * sizeof(double));
        for (a = 0; a < nact; a++) {
            pn->prev[a] = pn->dir[pn->act[a]];
        }
        first = st_glm_prox_newton_passes(&X, pn->dd, pt->grad, pt->w, lambda, eta, pn->dir,
                                          pn->hd, pn->act, nact, pn->xd, viol, &moved);
        /* Delta in dir (restored below), X_k Delta_k in xd; g.Delta and the
           regularizer's change at each trial step */
        for (i = 0; i < n; i++) {
            pn->xd[i] -= pt->dz[i];
        }
        memset(sum, 0, (ST_GLM_PN_TAUS + 4) * sizeof(double));
        for (a = 0; a < nact; a++) {
            j          = pn->act[a];
            x          = pt->w[j] + pn->prev[a];
            pn->dir[j] = pn->dir[j] - pn->prev[a];
            sum[0]    += pt->grad[j] * pn->dir[j];
            for (s = 0; s < ST_GLM_PN_TAUS; s++) {
                sum[1 + s] += lambda * (st_glm_reg_coord(x + tau[s] * pn->dir[j], eta) -
                                        st_glm_reg_coord(x, eta));
            }
        }
        sum[ST_GLM_PN_TAUS + 1] = first;
        sum[ST_GLM_PN_TAUS + 2] = viol;
        sum[ST_GLM_PN_TAUS + 3] = moved;
        tc = st_glm_now();
        st_glm_allreduce(comm, pn->xd, n + ST_GLM_PN_TAUS + 4, MPI_DOUBLE, MPI_SUM);
        *comm_s += st_glm_now() - tc;
        /* the model along Delta: the best trial step, if any lowers it */
        for (lin = sum[0], quad = 0.0, i = 0; i < n; i++) {
            lin  += pn->dd[i] * pt->dz[i] * pn->xd[i];
            quad += pn->dd[i] * pn->xd[i] * pn->xd[i];
        }
        agree[0] = ST_GLM_PN_TAUS;   /* the trial step taken (none) */
        for (best = 0.0, s = 0; s < ST_GLM_PN_TAUS; s++) {
            q[s] = tau[s] * lin + 0.5 * tau[s] * tau[s] * quad + sum[1 + s];
            if (q[s] < best) {
                best     = q[s];
                agree[0] = s;
            }
        }
        agree[1] = !(sum[ST_GLM_PN_TAUS + 3] > 0.0) ||
                   (c > 1 && (sum[ST_GLM_PN_TAUS + 1] <= ST_GLM_PN_INNER *
                                                        sum[ST_GLM_PN_TAUS + 2] ||
                              -best < ST_GLM_PN_STALL * (total - best)));
        /* the same on every rank (the sums' last bits may differ by rank): the step of
           the largest index (any of them lowers the model where that rank's sums say
           so; 1/K, the last, never raises it), and the end where any rank sees it */
        tc = st_glm_now();
        st_glm_allreduce(comm, agree, 2, MPI_INT, MPI_MAX);
        *comm_s += st_glm_now() - tc;
        t = (agree[0] < ST_GLM_PN_TAUS) ? tau[agree[0]] : 0.0;
        if (t > 0.0) {
            total -= q[agree[0]];   /* (the agreed step's, as this rank sums it) */
        }
        for (a = 0; a < nact; a++) {
            j          = pn->act[a];
            pn->dir[j] = pn->prev[a] + t * pn->dir[j];
        }
        for (i = 0; i < n; i++) {
            pt->dz[i] += t * pn->xd[i];
        }
        if (agree[1] || t == 0.0 || c >= ST_GLM_PN_SOLVES) {
            break;
        }
    }
    /* the predicted decrease and the regularizer's change at each trial step, summed */
    memset(pn->reg, 0, (ST_GLM_PN_TRIALS + 1) * sizeof(double));
    for (a = 0; a < nact; a++) {
        j = pn->act[a];
        pn->reg[ST_GLM_PN_TRIALS] += st_glm_prox_decrease(pt->grad[j], lambda, eta, pt->w[j],
                                                          pn->dir[j]);
        for (s = 0, t = 1.0; s < ST_GLM_PN_TRIALS; s++, t *= ST_GLM_ARMIJO_SHRINK) {
            pn->reg[s] += lambda * (st_glm_reg_coord(pt->w[j] + t * pn->dir[j], eta) -
                                    st_glm_reg_coord(pt->w[j], eta));
        }
    }
    tc = st_glm_now();
    st_glm_allreduce(comm, pn->reg, ST_GLM_PN_TRIALS + 1, MPI_DOUBLE, MPI_SUM);
    *comm_s += st_glm_now() - tc;
    /* no descent left in the model: no step (decided with the others below, as this
       sum's last bits, and so its sign near 0, may differ by rank) */
    s = (pn->reg[ST_GLM_PN_TRIALS] < 0.0) ? 0 : ST_GLM_PN_TRIALS;
    for (t = 1.0; s < ST_GLM_PN_TRIALS; s++, t *= ST_GLM_ARMIJO_SHRINK) {
        diff = st_glm_loss_diff_sum(pt->loss, pt->n, pt->z, t, pt->dz, pt->y, pt->c, 0.0);
        if (diff * inv_n + pn->reg[s] <= ST_GLM_ARMIJO_SIGMA * t * pn->reg[ST_GLM_PN_TRIALS]) {
            break;
        }
    }
    /* the shortest step any rank accepted, for all: an MPI library's allreduce may
     * round the sums in another order on each rank (Open MPI's on 3 ranks), so the
     * replicated margins, and a test at its threshold, can differ in the last bits;
     * ranks that stepped apart made w and z disagree (an objective of 1e14 after 8
     * rounds, l1-logistic on 3 ranks), and a rank that returned alone would leave the
     * others in this allreduce */
    tc = st_glm_now();
    st_glm_allreduce(comm, &s, 1, MPI_INT, MPI_MAX);
    *comm_s += st_glm_now() - tc;
    if (s == ST_GLM_PN_TRIALS) {
        return;   /* no decrease found: w stays */
    }
    t = ldexp(1.0, -s);   /* ST_GLM_ARMIJO_SHRINK^s */
    for (a = 0; a < nact; a++) {
        j         = pn->act[a];
        pt->w[j] += t * pn->dir[j];
    }
    for (i = 0; i < pt->n; i++) {
        pt->z[i] += t * pt->dz[i];
    }
}

/* The certificate at the current z and w (all ranks take part). */
static void st_glm_primal_certificate(st_glm_primal_t *pt, MPI_Comm comm, double lambda,
                                      double eta, st_glm_objectives_t *obj)
{
    int64_t lo = pt->n * pt->rank / pt->nranks, hi = pt->n * (pt->rank + 1) / pt->nranks;
    st_glm_reg_sums_t reg;
    double sums[5], scale;

    /* the largest |v_j| first: it scales the second dual point */
    st_glm_reg_sums(pt->nloc, pt->w, pt->grad, lambda, eta, &reg);
    st_glm_allreduce(comm, &reg.vmax, 1, MPI_DOUBLE, MPI_MAX);
    scale   = st_glm_dual_scale(&reg, lambda, eta);
    sums[0] = reg.reg;
    sums[1] = reg.conj;
    sums[2] = st_glm_loss_sum(pt->loss, hi - lo, pt->z + lo, pt->y + lo, pt->c + lo, 0.0);
    sums[3] = st_glm_grad_conj_sum(pt->loss, hi - lo, pt->z + lo, pt->y + lo, pt->c + lo,
                                   1.0, 0.0);
    sums[4] = (scale < 1.0) ? st_glm_grad_conj_sum(pt->loss, hi - lo, pt->z + lo, pt->y + lo,
                                                   pt->c + lo, scale, 0.0) : 0.0;
    st_glm_allreduce(comm, sums, 5, MPI_DOUBLE, MPI_SUM);
    reg.reg  = sums[0];
    reg.conj = sums[1];
    st_glm_primal_objectives(sums[2], sums[3], sums[4], &reg, pt->n, lambda, eta, 0.0, obj);
}

strata_status_t st_glm_train_primal(const st_glm_model_t *loss, const strata_glm_problem_t *prob,
                                    const strata_glm_param_t *param, MPI_Comm comm, char *msg,
                                    size_t msg_len, strata_glm_model_t *model)
{
    double eta = st_glm_model_eta(loss, param->eta), tc;
    st_glm_round_ctx_t ctx;
    st_glm_objectives_t obj;
    st_glm_primal_t pt;
    st_glm_pn_t pn;
    st_glm_ckpt_t ck;
    strata_status_t status = STRATA_OK;
    uint64_t rng;
    int64_t i, lo, hi, f0, f1;
    int stop = 0, certified = 0, newton = (param->method != STRATA_GLM_METHOD_CD);

    memset(&pt, 0, sizeof(pt));
    memset(&ctx, 0, sizeof(ctx));
    pt.loss = loss;
    st_glm_comm_shape(comm, &pt.rank, &pt.nranks);
    ctx.comm    = comm;
    ctx.rank    = pt.rank;
    ctx.param   = param;
    ctx.t_start = st_glm_now();
    if (!isfinite(loss->smoothness)) {
        st_glm_msg(msg, msg_len, "%s has no bounded curvature for the primal solver",
                   loss->name);
        return STRATA_ERR_UNSUPPORTED;
    }
    if (st_glm_primal_setup(&pt, prob->data, param, comm, msg, msg_len) != 0) {
        st_glm_primal_free(&pt);
        return STRATA_ERR_NO_MEMORY;
    }
    memset(&pn, 0, sizeof(pn));
    if (newton) {
        pn.dd  = malloc((size_t)ST_MAX(pt.n, 1) * sizeof(double));
        pn.dir = malloc((size_t)ST_MAX(pt.nloc, 1) * sizeof(double));
        pn.hd  = malloc((size_t)ST_MAX(pt.nloc, 1) * sizeof(double));
        pn.act  = malloc((size_t)ST_MAX(pt.nloc, 1) * sizeof(int64_t));
        pn.prev = malloc((size_t)ST_MAX(pt.nloc, 1) * sizeof(double));
        pn.xd   = malloc(((size_t)pt.n + ST_GLM_PN_TAUS + 4) * sizeof(double));
        pn.reg  = malloc((ST_GLM_PN_TRIALS + 1) * sizeof(double));
        if (!st_glm_agree(comm, pn.dd && pn.dir && pn.hd && pn.act && pn.prev && pn.xd &&
                                pn.reg)) {
            st_glm_msg(msg, msg_len, "out of memory (%lld rows)", (long long)pt.n);
            st_glm_pn_free(&pn);
            st_glm_primal_free(&pt);
            return STRATA_ERR_NO_MEMORY;
        }
    }
    rng = param->seed * 0x9e3779b97f4a7c15ULL + (uint64_t)pt.rank * 1000003ULL;

    /* the checkpoint: my block of w, its order, my random state; each rank writes a
     * share of the margins (all ranks hold all of them) */
    status = st_glm_ckpt_init(&ck, ST_GLM_CKPT_PRIMAL, loss, prob, param, comm, msg, msg_len);
    if (status == STRATA_OK && ck.path != NULL) {
        f0 = pt.bounds[pt.rank];
        f1 = pt.bounds[pt.rank + 1];
        st_glm_block_range(pt.n, pt.nranks, pt.rank, &lo, &hi);
        st_glm_ckpt_entry(&ck, prob->data->row_offset, prob->data->n_rows, pt.nloc, f0);
        st_glm_ckpt_add(&ck, "weights", pt.w, pt.d_all, f0, f1, f0, f1);
        st_glm_ckpt_add(&ck, "margins", pt.z, pt.n, 0, pt.n, lo, hi);
        st_glm_ckpt_add(&ck, "feature orders", pt.perm, pt.d_all, f0, f1, f0, f1);
        st_glm_ckpt_add(&ck, "random states", &rng, pt.nranks, pt.rank, pt.rank + 1, pt.rank,
                        pt.rank + 1);
    }
    if (status == STRATA_OK && param->resume) {
        status = st_glm_ckpt_load(&ck, &ctx.info, &certified, msg, msg_len);
        if (status == STRATA_OK &&
            !st_glm_agree(comm, st_glm_ckpt_order_ok(pt.perm, pt.nloc, 0))) {
            st_glm_msg(msg, msg_len, "%s: corrupted checkpoint (a feature order is not a "
                       "permutation)", param->checkpoint);
            status = STRATA_ERR_IO;
        }
        stop = st_glm_ckpt_stopped(param, &ctx.info, certified);
    }
    if (status != STRATA_OK) {
        st_glm_pn_free(&pn);
        st_glm_primal_free(&pt);
        return status;
    }
    ctx.t_start = st_glm_now() - ctx.info.seconds;   /* rounds only, as the dual trainer */
    st_glm_primal_gradient(&pt);
    while (!stop && !st_glm_mpi_failed()) {
        if (newton) {
            st_glm_primal_pn(&pt, &pn, param->lambda, eta, comm, &ctx.info.comm_seconds);
        } else {
            st_glm_primal_local(&pt, param, eta, &rng);
            tc = st_glm_now();
            st_glm_allreduce(comm, pt.dz, pt.n, MPI_DOUBLE, MPI_SUM);
            ctx.info.comm_seconds += st_glm_now() - tc;
            for (i = 0; i < pt.n; i++) {
                pt.z[i] += pt.dz[i];
            }
        }
        st_glm_primal_gradient(&pt);
        st_glm_primal_certificate(&pt, comm, param->lambda, eta, &obj);
        st_glm_round_end(&ctx, &obj);
        stop = ctx.info.converged || ctx.info.rounds >= param->max_rounds;
        if (st_glm_ckpt_due(&ck, ctx.info.rounds) &&
            (status = st_glm_ckpt_save(&ck, &ctx.info, 1, msg, msg_len)) != STRATA_OK) {
            break;
        }
    }

    ST_GLM_MPI(MPI_Allgatherv(pt.w, (int)pt.nloc, MPI_DOUBLE, model->w, pt.counts, pt.displs,
                              MPI_DOUBLE, comm));
    model->info = ctx.info;
    st_glm_pn_free(&pn);
    st_glm_primal_free(&pt);
    return status;
}
