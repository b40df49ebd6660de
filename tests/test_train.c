/*
 * strata_glm_train against the serial reference solver.
 *
 * Every rank generates the same small data set (a function of the row index),
 * keeps its block of rows for strata_glm_train, and solves the whole problem alone
 * with st_glm_serial_train to a 1e-12 gap. P is lambda-strongly convex, so any w
 * with gap g is within sqrt(2 g / lambda) of the optimum: the distributed model
 * must be that close to the reference (both distances added). Checked for every
 * dual model, with one thread, two replicas and two threads sharing w, a bias
 * feature and class weights, at whatever rank count the job has (tests/train1.np1
 * ... train3.np3): the same optimum whatever the rank count. Also: every rank
 * holds the same weights, the certificate is a real gap (P >= D), the parameter
 * check names bad fields. The L1 models (not strongly convex) are checked by their
 * objective: within the sum of the two gaps of the reference's. Under
 * ThreadSanitizer (make check-tsan) the threaded cases check the trainer's
 * synchronization.
 *
 * Built again as tests/test_train_hier, linked with libstrata, and run as
 * `test_train_hier --vnodes K` (tests/train_hier-*.npN; tests/cluster.sh on 2 hosts:
 * --vnodes 1 --nodes 2): the ranks are split into K virtual nodes, and hierarchical
 * CoCoA+ (fixed and automatic inner rounds) must reach the reference optimum on
 * them, on even and uneven nodes, with replicas and with shared threads; one inner
 * round is flat CoCoA+ step for step (even nodes); several take fewer rounds, i.e.
 * fewer sums over all ranks, than flat.
 */
#include "config.h"

#include "st_glm_test.h"
#include "st_glm_order.h"

#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The reference: the whole set, the bias as an extra column, weights by class. */
static void reference(const dataset_t *ds, const st_glm_model_t *loss,
                      const strata_glm_param_t *p, double *w, double *gap)
{
    static int64_t indptr[N_ROWS + 1];
    static uint32_t indices[N_ROWS * (N_COLS + 2)];
    static double values[N_ROWS * (N_COLS + 2)], c[N_ROWS];
    static st_glm_objectives_t trace[200001];
    const double *y = loss->classification ? ds->y_class : ds->y_real;
    st_glm_serial_problem_t sp;
    st_glm_serial_params_t sparam;
    int64_t i, k, o = 0;
    int epochs = 0;

    for (i = 0; i < N_ROWS; i++) {
        indptr[i] = o;
        for (k = ds->indptr[i]; k < ds->indptr[i + 1]; k++, o++) {
            indices[o] = ds->indices[k];
            values[o]  = ds->values[k];
        }
        if (p->bias > 0) {
            indices[o]  = N_COLS;
            values[o++] = p->bias;
        }
        c[i] = !loss->classification ? 1 : (y[i] > 0) ? p->weight_pos : p->weight_neg;
    }
    indptr[N_ROWS] = o;
    sp.n = N_ROWS;
    sp.d = N_COLS + (p->bias > 0);
    sp.indptr = indptr;
    sp.indices = indices;
    sp.values = values;
    sp.y = y;
    sp.weights = c;
    sparam.lambda = p->lambda;
    sparam.eta = p->eta;
    sparam.max_epochs = 200000;
    sparam.tol = 1e-13;
    sparam.shuffle = 1;
    sparam.seed = 5;
    sparam.eps = st_glm_model_eps(loss, p);
    CHECKF(st_glm_serial_train(loss, &sp, &sparam, w, NULL, trace, &epochs) == ST_OK,
           "reference solver failed");
    *gap = fmax(trace[epochs].gap, 0);
}

/* P(w) of the whole set, computed here from the definition (MODELS.md 1). */
static double primal_of(const dataset_t *ds, const st_glm_model_t *loss,
                        const strata_glm_param_t *p, const double *w)
{
    const double *y = loss->classification ? ds->y_class : ds->y_real;
    double eta = st_glm_model_eta(loss, p->eta), sum = 0, z, c, reg = 0;
    int64_t i, k, j, d = N_COLS + (p->bias > 0);

    for (i = 0; i < N_ROWS; i++) {
        for (z = 0, k = ds->indptr[i]; k < ds->indptr[i + 1]; k++) {
            z += ds->values[k] * w[ds->indices[k]];
        }
        if (p->bias > 0) {
            z += p->bias * w[N_COLS];
        }
        c = !loss->classification ? 1 : (y[i] > 0) ? p->weight_pos : p->weight_neg;
        sum += c * loss->loss(z, y[i], st_glm_model_eps(loss, p));
    }
    for (j = 0; j < d; j++) {
        reg += st_glm_reg_coord(w[j], eta);
    }
    return sum / N_ROWS + p->lambda * reg;
}

/*
 * Train on my rows and compare with the reference. The L2 models are
 * lambda-strongly convex: the weights must be within sqrt(2 gap / lambda) of each
 * other's (both gaps). The L1 models (not strongly convex for eta = 1): the
 * objectives, recomputed here from w, agree within the sum of the two gaps.
 */
static strata_glm_info_t last_info;      /* of the last check_model's training */
static double last_w[N_COLS + 1];        /* and its weights */

static void check_model(const dataset_t *ds, const strata_glm_param_t *p, const char *what)
{
    const st_glm_model_t *loss = st_glm_model_lookup(p->solver, NULL, 0);
    double wref[N_COLS + 1], gref = 0, dist = 0, bound, lo, hi, pm, pr;
    strata_glm_problem_t *prob = my_rows(ds, !loss->classification, 0);
    strata_glm_model_t *model  = NULL;
    int64_t j, d = N_COLS + (p->bias > 0);
    char msg[256];

    memset(&last_info, 0, sizeof(last_info));
    if (prob == NULL) {
        return;
    }
    reference(ds, loss, p, wref, &gref);
    CHECKF(strata_glm_train(prob, p, MPI_COMM_WORLD, msg, sizeof(msg), &model) == STRATA_OK,
           "%s: train: %s", what, msg);
    if (model != NULL) {
        pm = primal_of(ds, loss, p, model->w);
        CHECKF(model->info.converged && model->info.gap >= 0 &&
                       model->info.primal >= model->info.dual - 1e-15 &&
                       fabs(model->info.primal - pm) <= 1e-9 * fabs(pm),
               "%s: converged %d after %d rounds, primal %.17g (from w: %.17g) dual %.17g",
               what, model->info.converged, model->info.rounds, model->info.primal, pm,
               model->info.dual);
        if (loss->form == ST_GLM_FORM_DUAL) {
            for (j = 0; j < d; j++) {
                dist += (model->w[j] - wref[j]) * (model->w[j] - wref[j]);
            }
            dist  = sqrt(dist);
            bound = sqrt(2 * model->info.gap / p->lambda) + sqrt(2 * gref / p->lambda) + 1e-12;
            CHECKF(dist <= bound, "%s: |w - w_ref| = %.3e > %.3e (gap %.3e after %d rounds)",
                   what, dist, bound, model->info.gap, model->info.rounds);
        } else {
            pr = primal_of(ds, loss, p, wref);
            CHECKF(fabs(pm - pr) <= model->info.gap + gref + 1e-12 * fabs(pr),
                   "%s: P(w) = %.17g, reference %.17g (gaps %.3e, %.3e)", what, pm, pr,
                   model->info.gap, gref);
        }
        last_info = model->info;
        memcpy(last_w, model->w, (size_t)d * sizeof(double));
        /* the same weights on every rank */
        for (j = 0; j < d; j++) {
            MPI_Allreduce(&model->w[j], &lo, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
            MPI_Allreduce(&model->w[j], &hi, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
            CHECKF(lo == hi, "%s: ranks hold different w[%lld]", what, (long long)j);
        }
        free(model->w);
        free(model);
    }
    strata_glm_problem_free(prob);
}

/* @a dst: the rows of @a src without their entries in columns 10 and 26.. (columns no
 * row holds, the last ones among them) */
static void drop_columns(dataset_t *dst, const dataset_t *src)
{
    int64_t i, k, o = 0;

    for (i = 0; i < N_ROWS; i++) {
        dst->indptr[i] = o;
        for (k = src->indptr[i]; k < src->indptr[i + 1]; k++) {
            if (src->indices[k] != 10 && src->indices[k] < 26) {
                dst->indices[o]  = src->indices[k];
                dst->values[o++] = src->values[k];
            }
        }
        dst->y_class[i] = src->y_class[i];
        dst->y_real[i]  = src->y_real[i];
    }
    dst->indptr[N_ROWS] = o;
}

/*
 * The model vector's layout (feature_order). The relabelling itself: a permutation
 * of the columns, the same on every rank, in which no column comes after one of
 * less than 4/5 its count (keys of a quarter octave), the rows' entries relabelled
 * in place; the vectors mapped back and forth. Then
 * training: relabelled, the steps and so the weights are those of the given order
 * bit for bit (replicas: one thread, two), and threads sharing the vector (which
 * keep the hot columns apart) reach the optimum with and without a bias.
 */
static void check_order(const dataset_t *ds)
{
    strata_glm_problem_t *prob = my_rows(ds, 0, 0);
    const st_glm_data_t *data;
    strata_glm_model_t *model[2];
    strata_glm_param_t p;
    st_glm_order_t o;
    int64_t count[N_COLS], by_label[N_COLS], j, k, seen[N_COLS], lo, hi;
    double in[N_COLS + 1], mid[N_COLS + 1], back[N_COLS + 1];
    int ok, moved = 0, threads, mode;
    char msg[256];

    if (prob == NULL) {
        return;
    }
    data = prob->data;
    CHECKF(!st_glm_order_wanted(STRATA_GLM_ORDER_AUTO, N_COLS, 0) &&
                   st_glm_order_wanted(STRATA_GLM_ORDER_AUTO, N_COLS, 1) &&
                   st_glm_order_wanted(STRATA_GLM_ORDER_AUTO, ST_GLM_ORDER_AUTO_MIN, 0) &&
                   st_glm_order_wanted(STRATA_GLM_ORDER_FREQUENCY, N_COLS, 0) &&
                   !st_glm_order_wanted(STRATA_GLM_ORDER_GIVEN, ST_GLM_ORDER_AUTO_MIN, 1),
           "feature_order: when to relabel");
    CHECKF(st_glm_order_init(&o, data, STRATA_GLM_ORDER_GIVEN, 1, MPI_COMM_WORLD) == 0 &&
                   o.map == NULL, "feature_order given relabelled");
    ok = st_glm_order_init(&o, data, STRATA_GLM_ORDER_FREQUENCY, 0, MPI_COMM_WORLD);
    CHECKF(ok && o.map != NULL && o.data.indices != data->indices &&
                   o.data.nnz == data->nnz && o.data.indptr == data->indptr,
           "feature_order frequency: not relabelled");
    if (ok) {
        memset(count, 0, sizeof(count));
        for (k = 0; k < data->nnz; k++) {
            count[data->indices[k]]++;
        }
        MPI_Allreduce(MPI_IN_PLACE, count, N_COLS, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
        memset(seen, 0, sizeof(seen));
        for (j = 0; j < N_COLS; j++) {
            CHECKF(o.map[j] < N_COLS && seen[o.map[j]]++ == 0, "map[%lld] = %u: not a "
                   "permutation", (long long)j, o.map[j]);
            moved += (o.map[j] != j);
            /* the same map on every rank */
            lo = hi = o.map[j];
            MPI_Allreduce(MPI_IN_PLACE, &lo, 1, MPI_INT64_T, MPI_MIN, MPI_COMM_WORLD);
            MPI_Allreduce(MPI_IN_PLACE, &hi, 1, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD);
            CHECKF(lo == hi, "ranks map column %lld to %lld .. %lld", (long long)j,
                   (long long)lo, (long long)hi);
        }
        CHECKF(moved > 0, "no column moved (the counts differ)");
        for (j = 0; j < N_COLS; j++) {
            by_label[o.map[j] < N_COLS ? o.map[j] : 0] = count[j];
        }
        for (j = 0; j < N_COLS; j++) {
            CHECKF(4 * count[j] < 5 * by_label[0], "label 0 has count %lld, column %lld "
                   "%lld", (long long)by_label[0], (long long)j, (long long)count[j]);
            for (k = j + 1; k < N_COLS; k++) {
                CHECKF(4 * by_label[k] < 5 * by_label[j], "label %lld (count %lld) after "
                       "label %lld (count %lld)", (long long)k, (long long)by_label[k],
                       (long long)j, (long long)by_label[j]);
            }
        }
        for (k = 0; k < data->nnz; k++) {
            CHECKF(o.data.indices[k] == o.map[data->indices[k]], "entry %lld relabelled "
                   "%u, not %u", (long long)k, o.data.indices[k], o.map[data->indices[k]]);
        }
        for (j = 0; j <= N_COLS; j++) {
            in[j] = j + 0.5;
        }
        st_glm_order_scatter(&o, in, mid, N_COLS + 1);
        st_glm_order_gather(&o, mid, back, N_COLS + 1);
        CHECKF(memcmp(in, back, sizeof(in)) == 0 && mid[o.map[3]] == in[3] &&
                       mid[N_COLS] == in[N_COLS], "gather(scatter(v)) is not v");
    }
    st_glm_order_free(&o);
    strata_glm_problem_free(prob);

    for (threads = 1; threads <= 2; threads++) {
        prob = my_rows(ds, 0, 0);
        for (mode = 0; prob != NULL && mode < 2; mode++) {
            strata_glm_param_default(&p);
            p.method = STRATA_GLM_METHOD_CD;   /* what auto picks is checked apart */
            p.lambda        = 0.01;
            p.tol           = 0;
            p.max_rounds    = 7;
            p.threads       = threads;
            p.bias          = 1;
            p.feature_order = mode ? STRATA_GLM_ORDER_FREQUENCY : STRATA_GLM_ORDER_GIVEN;
            model[mode]     = NULL;
            CHECKF(strata_glm_train(prob, &p, MPI_COMM_WORLD, msg, sizeof(msg),
                                    &model[mode]) == STRATA_OK, "train: %s", msg);
        }
        if (prob != NULL && model[0] != NULL && model[1] != NULL) {
            CHECKF(memcmp(model[0]->w, model[1]->w, (N_COLS + 1) * sizeof(double)) == 0 &&
                           model[0]->info.rounds == model[1]->info.rounds,
                   "%d thread(s): relabelled, other weights than in the given order",
                   threads);
        }
        for (mode = 0; prob != NULL && mode < 2; mode++) {
            if (model[mode] != NULL) {
                free(model[mode]->w);
                free(model[mode]);
            }
        }
        strata_glm_problem_free(prob);
    }
    for (mode = 0; mode < 2; mode++) {   /* sharing: hot columns, the bias's too */
        strata_glm_param_default(&p);
        p.method = STRATA_GLM_METHOD_CD;   /* what auto picks is checked apart */
        p.lambda        = 0.01;
        p.tol           = 1e-11;
        p.max_rounds    = 20000;
        p.threads       = 2;
        p.thread_mode   = STRATA_GLM_THREADS_SHARED;
        p.bias          = mode ? 1 : -1;
        p.feature_order = STRATA_GLM_ORDER_FREQUENCY;
        check_model(ds, &p, mode ? "2 threads sharing w, relabelled, bias" :
                                   "2 threads sharing w, relabelled");
    }
}

/*
 * Hierarchical CoCoA+ on K virtual nodes (Strata's node level: the library is linked
 * in). Flat and hierarchical runs each meet the reference (check_model).
 */
static void check_hierarchical(const dataset_t *ds, int vnodes, int even)
{
    static const char *const duals[] = {"logistic", "svm", "ridge", "sqsvr"};
    int (*active)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "strata_active");
    strata_glm_info_t flat;
    double wflat[N_COLS + 1];
    strata_glm_param_t p;
    char what[128];
    size_t m;
    int mode, inner;

    CHECKF(active != NULL && active(), "Strata's MPI_Allreduce is not the one in use");
    /* the automatic choice: as many inner rounds as the cluster sum costs inner
     * rounds, up to 4, then 2 sqrt of that, at most ST_GLM_HIER_MAX */
    CHECKF(st_glm_hier_choose(0.3) == 1 && st_glm_hier_choose(1) == 1 &&
                   st_glm_hier_choose(2.5) == 3 && st_glm_hier_choose(4) == 4 &&
                   st_glm_hier_choose(16) == 8 && st_glm_hier_choose(100) == 20 &&
                   st_glm_hier_choose(1e9) == ST_GLM_HIER_MAX &&
                   st_glm_hier_choose(NAN) == 1 && st_glm_hier_choose(INFINITY) == 64,
           "inner rounds chosen: %d %d %d %d %d", st_glm_hier_choose(2.5),
           st_glm_hier_choose(4), st_glm_hier_choose(16), st_glm_hier_choose(100),
           st_glm_hier_choose(NAN));
    for (m = 0; m < sizeof(duals) / sizeof(duals[0]); m++) {
        for (mode = 0; mode < 3; mode++) {   /* 1 thread, 2 replicas, 2 sharing w */
            strata_glm_param_default(&p);
            p.method      = STRATA_GLM_METHOD_CD;   /* flat; auto would pick L-BFGS */
            p.solver      = duals[m];
            p.lambda      = 0.01;
            p.tol         = 1e-11;
            p.max_rounds  = 20000;
            p.threads     = mode ? 2 : 1;
            p.thread_mode = mode == 2 ? STRATA_GLM_THREADS_SHARED : STRATA_GLM_THREADS_REPLICAS;
            snprintf(what, sizeof(what), "%s, %d thread(s)%s, flat", duals[m], p.threads,
                     mode == 2 ? " sharing w" : "");
            check_model(ds, &p, what);
            flat = last_info;
            memcpy(wflat, last_w, sizeof(wflat));
            CHECKF(flat.nodes == 0 && flat.inner_rounds == 0, "%s: nodes %d, inner %d",
                   what, flat.nodes, flat.inner_rounds);
            for (inner = 0; inner <= 3; inner++) {   /* 0: auto */
                if (inner == 2) {
                    continue;
                }
                p.hierarchical = 1;
                p.inner_rounds = inner;
                p.method       = STRATA_GLM_METHOD_AUTO;   /* CD: hierarchical */
                snprintf(what, sizeof(what), "%s, %d thread(s)%s, hierarchical, inner %d",
                         duals[m], p.threads, mode == 2 ? " sharing w" : "", inner);
                check_model(ds, &p, what);
                CHECKF(last_info.nodes == vnodes && last_info.inner_rounds >= 1 &&
                               (inner == 0 || last_info.inner_rounds == inner) &&
                               last_info.method == STRATA_GLM_METHOD_CD,
                       "%s: nodes %d (expected %d), inner rounds %d, method %d", what,
                       last_info.nodes, vnodes, last_info.inner_rounds, last_info.method);
                if (mode == 2) {
                    continue;   /* shared threads: steps depend on timing */
                }
                /* one inner round on even nodes is flat CoCoA+, bit for bit */
                CHECKF(inner != 1 || !even ||
                               (last_info.rounds == flat.rounds &&
                                memcmp(last_w, wflat, sizeof(wflat)) == 0),
                       "%s: %d rounds, flat %d, or other weights", what, last_info.rounds,
                       flat.rounds);
                /* three: each node's subproblem solved further, fewer sums over all */
                CHECKF(inner != 3 || last_info.rounds < flat.rounds,
                       "%s: %d rounds, not fewer than flat's %d", what, last_info.rounds,
                       flat.rounds);
            }
        }
    }
}

int main(int argc, char **argv)
{
    static const char *const duals[] = {"logistic", "svm", "sqsvm", "ridge", "svr", "sqsvr"};
    static const char *const primals[] = {"lasso", "elastic-net", "l1-logistic", "l1-sqsvm"};
    static const char *const smooth[] = {"logistic", "sqsvm", "ridge", "sqsvr"};
    static dataset_t ds;
    strata_glm_param_t p;
    char what[128];
    size_t m;
    int threads, k;

    /* --vnodes K [--nodes N]: K virtual nodes per host, N nodes in all (default K) */
    if ((argc == 3 || (argc == 5 && strcmp(argv[3], "--nodes") == 0)) &&
        strcmp(argv[1], "--vnodes") == 0) {
        int nodes = atoi(argv[argc - 1]);

        setenv("STRATA_VIRTUAL_NODES", argv[2], 1);   /* before MPI_Init */
        MPI_Init(&argc, &argv);
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        MPI_Comm_size(MPI_COMM_WORLD, &nranks);
        make_data(&ds, 1);
        check_hierarchical(&ds, nodes, nodes > 0 && nranks % nodes == 0);
        goto done;
    }
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    make_data(&ds, 1);

    for (m = 0; m < sizeof(duals) / sizeof(duals[0]); m++) {
        /* 1 thread, 2 replicas, 2 threads sharing one vector */
        for (threads = 1; threads <= 3; threads++) {
            strata_glm_param_default(&p);
            p.method = STRATA_GLM_METHOD_CD;   /* what auto picks is checked apart */
            p.solver      = duals[m];
            p.lambda      = 0.01;
            p.tol         = strcmp(duals[m], "svr") ? 1e-11 : 1e-6;   /* nonsmooth: slow */
            p.max_rounds  = 20000;
            p.threads     = threads > 1 ? 2 : 1;
            p.thread_mode = threads == 3 ? STRATA_GLM_THREADS_SHARED : STRATA_GLM_THREADS_REPLICAS;
            snprintf(what, sizeof(what), "%s, %d thread(s)%s", duals[m], p.threads,
                     threads == 3 ? " sharing w" : "");
            check_model(&ds, &p, what);
        }
        /* an intercept, class weights, several local passes; the gap when it may
           have reached tol (every rank must choose the same rounds) */
        strata_glm_param_default(&p);
        p.method = STRATA_GLM_METHOD_CD;   /* what auto picks is checked apart */
        p.solver       = duals[m];
        p.lambda       = 0.003;
        p.tol          = strcmp(duals[m], "svr") ? 1e-11 : 1e-6;
        p.max_rounds   = 20000;
        p.bias         = 1;
        p.local_epochs = 3;
        p.weight_pos   = 2;
        p.weight_neg   = 0.5;
        p.gap_every    = STRATA_GLM_GAP_AUTO;
        snprintf(what, sizeof(what), "%s, bias, weights, 3 local epochs, gap auto", duals[m]);
        check_model(&ds, &p, what);
    }

    /* L-BFGS and Newton on the primal of the smooth L2 models: their optimum, on 1 and
       2 threads, with an intercept, class weights and (Newton) the columns relabelled
       by frequency (the ranks split the rows); Newton in a few steps */
    for (k = 0; k < 2; k++) {
        for (m = 0; m < sizeof(smooth) / sizeof(smooth[0]); m++) {
            for (threads = 1; threads <= 2; threads++) {
                strata_glm_param_default(&p);
                p.solver     = smooth[m];
                p.method     = k == 0 ? STRATA_GLM_METHOD_LBFGS : STRATA_GLM_METHOD_NEWTON;
                p.lambda     = threads == 1 ? 0.01 : 0.003;
                p.tol        = 1e-11;
                p.max_rounds = 2000;
                p.threads    = threads;
                if (threads == 2) {
                    p.bias          = 1;
                    p.weight_pos    = 2;
                    p.weight_neg    = 0.5;
                    p.feature_order = STRATA_GLM_ORDER_FREQUENCY;
                }
                snprintf(what, sizeof(what), "%s, %s, %d thread(s)%s", smooth[m],
                         k == 0 ? "L-BFGS" : "Newton", threads,
                         threads == 2 ? ", bias, weights, frequency order" : "");
                check_model(&ds, &p, what);
                CHECKF(last_info.method == p.method && (k == 0 || last_info.rounds <= 40),
                       "%s: method %d, %d steps", what, last_info.method, last_info.rounds);
            }
        }
    }

    /* auto (the default): L-BFGS for the smooth models on these rows (240 x 30, over
       a third of the entries stored), their optimum; CD for the hinge, svr's
       epsilon-insensitive loss and for a
       hierarchical run; for the L1 models newton (block proximal Newton across
       ranks, the serial solver on one) */
    for (m = 0; m <= sizeof(duals) / sizeof(duals[0]); m++) {
        int dual = m < sizeof(duals) / sizeof(duals[0]);   /* else lasso */

        strata_glm_param_default(&p);
        p.solver     = dual ? duals[m] : "lasso";
        p.lambda     = 0.01;
        p.tol        = !dual ? 1e-6 : strcmp(p.solver, "svr") ? 1e-11 : 1e-6;
        p.max_rounds = 20000;
        snprintf(what, sizeof(what), "%s, method auto", p.solver);
        check_model(&ds, &p, what);
        CHECKF(last_info.method == (!dual ? STRATA_GLM_METHOD_NEWTON
                                    : strcmp(p.solver, "svm") != 0 &&
                                            strcmp(p.solver, "svr") != 0
                                        ? STRATA_GLM_METHOD_LBFGS
                                        : STRATA_GLM_METHOD_CD),
               "%s: ran method %d", what, last_info.method);
    }

    /* Newton works on the columns up to the last one held, the bias after them: the
       model keeps zeros for the others and its bias weight in its place (its primal,
       recomputed from the weights, matches; given and frequency order, bias or not) */
    {
        static dataset_t holes;

        drop_columns(&holes, &ds);
        for (k = 0; k < 4; k++) {
            strata_glm_param_default(&p);
            p.solver        = k == 3 ? "ridge" : "logistic";
            p.method        = STRATA_GLM_METHOD_NEWTON;
            p.lambda        = 0.003;
            p.tol           = 1e-11;
            p.threads       = 2;
            p.bias          = (k & 1) ? 1 : -1;
            p.feature_order = (k & 2) ? STRATA_GLM_ORDER_FREQUENCY : STRATA_GLM_ORDER_GIVEN;
            snprintf(what, sizeof(what), "%s, Newton, columns 10 and 26-29 empty%s, %s order",
                     p.solver, p.bias > 0 ? ", bias" : "", (k & 2) ? "frequency" : "given");
            check_model(&holes, &p, what);
            CHECKF(last_w[10] == 0 && last_w[26] == 0 && last_w[29] == 0,
                   "%s: weights of empty columns %g %g %g", what, last_w[10], last_w[26],
                   last_w[29]);
        }
    }

    check_order(&ds);

    /* the parameter check names the problem */
    strata_glm_param_default(&p);
    CHECKF(strata_glm_check_param(&p) == NULL, "defaults rejected");
    p.solver = "logistik";
    CHECKF(strata_glm_check_param(&p) != NULL &&
                   strstr(strata_glm_check_param(&p), "logistik") != NULL,
           "unknown solver: '%s'", strata_glm_check_param(&p));
    strata_glm_param_default(&p);
    p.lambda = 0;
    CHECKF(strata_glm_check_param(&p) != NULL, "lambda 0 accepted");
    strata_glm_param_default(&p);
    p.threads = 0;
    CHECKF(strata_glm_check_param(&p) != NULL, "0 threads accepted");
    strata_glm_param_default(&p);
    p.method = STRATA_GLM_METHOD_LBFGS;
    p.solver = "svm";
    CHECKF(strata_glm_check_param(&p) != NULL &&
                   strstr(strata_glm_check_param(&p), "lbfgs") != NULL,
           "lbfgs on the hinge accepted: '%s'", strata_glm_check_param(&p));
    p.solver = "lasso";
    CHECKF(strata_glm_check_param(&p) != NULL, "lbfgs on lasso accepted");
    p.solver = "logistic";
    p.hierarchical = 1;
    CHECKF(strata_glm_check_param(&p) != NULL, "lbfgs with hierarchical accepted");
    strata_glm_param_default(&p);
    CHECKF(p.method == STRATA_GLM_METHOD_AUTO, "the default method is %d, not auto", p.method);
    p.method = STRATA_GLM_METHOD_NEWTON;
    CHECKF(strata_glm_check_param(&p) == NULL, "newton on logistic refused");
    p.solver = "svm";
    CHECKF(strata_glm_check_param(&p) != NULL &&
                   strstr(strata_glm_check_param(&p), "method newton needs") != NULL,
           "newton on the hinge accepted: '%s'", strata_glm_check_param(&p));
    p.solver = "l1-logistic";   /* the L1 models' newton: block proximal Newton */
    CHECKF(strata_glm_check_param(&p) == NULL, "newton on l1-logistic refused");
    p.method = STRATA_GLM_METHOD_LBFGS;
    CHECKF(strata_glm_check_param(&p) != NULL, "lbfgs on l1-logistic accepted");
    p.method = STRATA_GLM_METHOD_NEWTON;
    p.solver       = "ridge";
    p.hierarchical = 1;
    CHECKF(strata_glm_check_param(&p) != NULL &&
                   strstr(strata_glm_check_param(&p), "method newton has no") != NULL,
           "newton with hierarchical accepted: '%s'", strata_glm_check_param(&p));
    strata_glm_param_default(&p);
    p.method = 4;
    CHECKF(strata_glm_check_param(&p) != NULL, "method 4 accepted");
    strata_glm_param_default(&p);
    p.gap_every = -2;
    CHECKF(strata_glm_check_param(&p) != NULL, "gap_every -2 accepted");
    p.gap_every = STRATA_GLM_GAP_AUTO;
    CHECKF(strata_glm_check_param(&p) == NULL, "gap_every auto refused");
    strata_glm_param_default(&p);
    p.feature_order = 3;
    CHECKF(strata_glm_check_param(&p) != NULL &&
                   strstr(strata_glm_check_param(&p), "feature_order") != NULL,
           "feature_order 3 accepted");

    /* L1 models: ProxCoCoA+ over features across ranks (the serial solver on one);
     * with a bias feature (owned by the last rank) and class weights too */
    for (m = 0; m < sizeof(primals) / sizeof(primals[0]); m++) {
        strata_glm_param_default(&p);
        p.solver     = primals[m];
        p.lambda     = 0.01;
        p.tol        = 1e-6;
        p.max_rounds = 20000;
        snprintf(what, sizeof(what), "%s", primals[m]);
        check_model(&ds, &p, what);
        p.lambda     = 0.003;
        p.bias       = 1;
        p.weight_pos = 2;
        p.weight_neg = 0.5;
        snprintf(what, sizeof(what), "%s, bias, weights", primals[m]);
        check_model(&ds, &p, what);
        /* ProxCoCoA+ (--method cd; on one rank the serial solver all the same) */
        p.method       = STRATA_GLM_METHOD_CD;
        p.local_epochs = 2;
        snprintf(what, sizeof(what), "%s, ProxCoCoA+, bias, weights, 2 local epochs",
                 primals[m]);
        check_model(&ds, &p, what);
    }

done:
    MPI_Allreduce(MPI_IN_PLACE, &failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("test_train: %s: %d ranks, %d failures\n", failures ? "FAIL" : "PASS", nranks,
               failures);
    }
    MPI_Finalize();
    return failures ? 1 : 0;
}
