/*
 * Checkpoints of strata_glm_train, through the C API, on whatever rank count the job
 * has (tests/ckpt1.np1 ... ckpt3.np3).
 *
 * A run stopped after K rounds (max_rounds = K, a checkpoint every C rounds) and
 * resumed to R rounds must end with the weights, bit for bit, and the round count of
 * a run of R rounds that was never stopped: for every model (the dual ones with one
 * and two threads, a bias, class weights, gap_every; the L1 ones by ProxCoCoA+ across
 * ranks or the serial solver on one), and for a run that converged at its last
 * checkpoint (the resumed run must stop there too). The uninterrupted run keeps no
 * checkpoint, so writing them is shown not to disturb the steps either; the resumed
 * run's progress lines (the print hook) show that it ran only the remaining rounds.
 *
 * Refusals, each with the same status and message on every rank: another lambda,
 * seed, thread count, local epochs, bias or class weight (named), other data (one
 * value changed), another partition of the same rows (rank count > 1), a byte flipped
 * in the header and in each section, a truncated file, no file (STRATA_ERR_NOT_FOUND),
 * a file that is not a checkpoint (left as it was), a checkpoint that cannot be
 * written (STRATA_ERR_IO). The parameter check rejects bad checkpoint fields.
 */
#include "config.h"

#include "st_glm_test.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[256], path[512];

/* The print hook: progress lines of rounds (epochs of the serial L1 solver). */
static int lines;

static void count_lines(const char *line)
{
    lines += (strncmp(line, "round ", 6) == 0 || strncmp(line, "epoch ", 6) == 0);
}

/* Every rank got the same status and message. */
static void check_agreed(strata_status_t st, const char *msg, const char *what)
{
    int v[2] = {(int)st, -(int)st};
    uint64_t h = 1469598103934665603ULL, hv[2];
    const char *p;

    for (p = msg; *p; p++) {
        h = (h ^ (unsigned char)*p) * 1099511628211ULL;
    }
    hv[0] = h;
    hv[1] = ~h;
    MPI_Allreduce(MPI_IN_PLACE, v, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, hv, 2, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
    CHECKF(v[0] == -v[1] && hv[0] == ~hv[1], "%s: the ranks disagree (status %d, '%s')", what,
           (int)st, msg);
}

/* Train; returns the status, the model in *model_p (NULL on failure). */
static strata_status_t train(const strata_glm_problem_t *prob, const strata_glm_param_t *p,
                             char *msg, size_t msg_len, strata_glm_model_t **model_p)
{
    strata_status_t st;

    *model_p = NULL;
    msg[0]   = '\0';
    st = strata_glm_train(prob, p, MPI_COMM_WORLD, msg, msg_len, model_p);
    check_agreed(st, st == STRATA_OK ? "" : msg, p->solver);
    return st;
}

/* (the model accessors live in libstrata_glm's I/O half; this test links the core) */
static void model_free(strata_glm_model_t *model)
{
    if (model != NULL) {
        free(model->w);
        free(model);
    }
}

static int same_weights(const strata_glm_model_t *a, const strata_glm_model_t *b)
{
    int64_t n = a->n_features + (a->bias > 0);

    return a->n_features == b->n_features && a->bias == b->bias &&
           memcmp(a->w, b->w, (size_t)n * sizeof(double)) == 0;
}

static void remove_ckpt(void)
{
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        unlink(path);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

/*
 * Uninterrupted R rounds against K rounds with a checkpoint every C, resumed to R;
 * the K rounds in the model vector's layout @a part_order (feature_order), the
 * others in p's.
 */
static void check_resume(const strata_glm_problem_t *prob, strata_glm_param_t p, int k,
                         int c, int part_order, const char *what)
{
    strata_glm_model_t *full = NULL, *part = NULL, *res = NULL, *again = NULL;
    const st_glm_model_t *loss = st_glm_model_lookup(p.solver, NULL, 0);
    /* gap_every: the dual models', and one rank's squared-loss L1 models' (lasso,
       elastic net: their serial coordinate descent) */
    int every = (loss->form == ST_GLM_FORM_DUAL || (nranks == 1 && !loss->line_search))
                        ? ST_MAX(p.gap_every, 1) : 1;
    strata_glm_info_t fi, ri;
    char msg[512];
    int r = p.max_rounds, t, want = 0, want_again = 0, seen, seen_again, last;

    remove_ckpt();
    CHECKF(train(prob, &p, msg, sizeof(msg), &full) == STRATA_OK, "%s: full: %s", what, msg);
    p.checkpoint       = path;
    p.checkpoint_every = c;
    p.max_rounds       = k;
    t                  = p.feature_order;
    p.feature_order    = part_order;
    CHECKF(train(prob, &p, msg, sizeof(msg), &part) == STRATA_OK, "%s: part: %s", what, msg);
    p.feature_order = t;
    p.max_rounds = r;
    p.resume     = 1;
    p.verbose    = 1;
    lines        = 0;
    CHECKF(train(prob, &p, msg, sizeof(msg), &res) == STRATA_OK, "%s: resume: %s", what, msg);
    seen  = lines;
    lines = 0;
    /* once more from the last checkpoint (of round R, or of the converged round) */
    CHECKF(train(prob, &p, msg, sizeof(msg), &again) == STRATA_OK, "%s: again: %s", what, msg);
    seen_again = lines;
    if (full != NULL && res != NULL && again != NULL) {
        /* the progress lines of the rounds after the last checkpoint */
        last = full->info.rounds;
        for (t = part->info.rounds - part->info.rounds % c + 1; t <= last; t++) {
            want += (t % every == 0 || t == last);
        }
        for (t = last - last % c + 1; t <= last; t++) {
            want_again += (t % every == 0 || t == last);
        }
        CHECKF(rank != 0 || (seen == want && seen_again == want_again), "%s: the resumed runs "
               "printed %d and %d round lines, not %d and %d", what, seen, seen_again, want,
               want_again);
        fi = full->info;
        ri = res->info;
        CHECKF(same_weights(full, res), "%s: the resumed run's weights differ", what);
        CHECKF(fi.rounds == ri.rounds && fi.converged == ri.converged &&
                       fi.primal == ri.primal && fi.dual == ri.dual && fi.gap == ri.gap,
               "%s: rounds %d/%d, converged %d/%d, primal %.17g/%.17g, dual %.17g/%.17g",
               what, fi.rounds, ri.rounds, fi.converged, ri.converged, fi.primal, ri.primal,
               fi.dual, ri.dual);
        /* no round left to run: the progress all comes from the checkpoint */
        ri = again->info;
        CHECKF(same_weights(full, again) && ri.rounds == fi.rounds &&
                       ri.converged == fi.converged && ri.primal == fi.primal &&
                       ri.dual == fi.dual && ri.gap == fi.gap,
               "%s: resuming a finished run changed it (%d rounds, converged %d, primal "
               "%.17g, dual %.17g, gap %.17g; before %d, %d, %.17g, %.17g, %.17g)", what,
               ri.rounds, ri.converged, ri.primal, ri.dual, ri.gap, fi.rounds, fi.converged,
               fi.primal, fi.dual, fi.gap);
    }
    model_free(full);
    model_free(part);
    model_free(res);
    model_free(again);
}

static void param_checks(void)
{
    strata_glm_param_t p;

    strata_glm_param_default(&p);
    CHECKF(p.checkpoint == NULL && p.checkpoint_every == 0 && p.resume == 0 &&
                   strata_glm_check_param(&p) == NULL, "checkpoint defaults");
    p.checkpoint_every = 5;
    CHECKF(strata_glm_check_param(&p) != NULL &&
                   strstr(strata_glm_check_param(&p), "checkpoint") != NULL,
           "checkpoint_every without a file accepted");
    p.checkpoint = "";
    CHECKF(strata_glm_check_param(&p) != NULL, "an empty checkpoint name accepted");
    p.checkpoint = "x.ckpt";
    CHECKF(strata_glm_check_param(&p) == NULL, "a checkpoint refused");
    p.checkpoint_every = -1;
    CHECKF(strata_glm_check_param(&p) != NULL, "checkpoint_every -1 accepted");
    strata_glm_param_default(&p);
    p.resume = 1;
    CHECKF(strata_glm_check_param(&p) != NULL, "resume without a file accepted");
    p.checkpoint = "x.ckpt";
    CHECKF(strata_glm_check_param(&p) == NULL, "resume refused");
    p.resume = 2;
    CHECKF(strata_glm_check_param(&p) != NULL, "resume 2 accepted");
}

/* Rank 0 changes the file: byte @a at flipped, or cut to @a at bytes (@a cut). */
static void damage(long at, int cut)
{
    FILE *f;
    int ch;

    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        if (cut) {
            CHECKF(truncate(path, at) == 0, "truncate: %s", strerror(errno));
        } else {
            f = fopen(path, "r+b");
            CHECKF(f != NULL && fseek(f, at, SEEK_SET) == 0 && (ch = fgetc(f)) != EOF &&
                           fseek(f, at, SEEK_SET) == 0 && fputc(ch ^ 0x10, f) != EOF,
                   "cannot flip byte %ld", at);
            if (f != NULL) {
                fclose(f);
            }
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

/* Rank 0 sets the checkpoint's version word to @a version and, if @a sum, the
 * header's checksum (word 63, of words 0-62) to match, as a newer Strata would. */
static void set_version(uint64_t version, int sum)
{
    uint64_t h[64];
    FILE *f;

    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        f = fopen(path, "r+b");
        CHECKF(f != NULL && fread(h, 8, 64, f) == 64, "cannot read the header");
        h[1] = version;
        if (sum) {
            h[63] = st_glm_sum64(h, 8, 63, 0, 0);
        }
        CHECKF(f != NULL && fseek(f, 0, SEEK_SET) == 0 && fwrite(h, 8, 64, f) == 64,
               "cannot write the header");
        if (f != NULL) {
            fclose(f);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

static void copy_file(const char *from, const char *to)
{
    char buf[65536];
    size_t n;
    FILE *a, *b;

    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        a = fopen(from, "rb");
        b = fopen(to, "wb");
        while (a != NULL && b != NULL && (n = fread(buf, 1, sizeof(buf), a)) > 0) {
            fwrite(buf, 1, n, b);
        }
        if (a != NULL) {
            fclose(a);
        }
        if (b != NULL) {
            fclose(b);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

/* Resume with @a p on @a prob must fail with @a want, naming @a needle. */
static void refused(const strata_glm_problem_t *prob, const strata_glm_param_t *p,
                    strata_status_t want, const char *needle, const char *what)
{
    strata_glm_model_t *model = NULL;
    strata_status_t st;
    char msg[512];

    st = train(prob, p, msg, sizeof(msg), &model);
    CHECKF(st == want && strstr(msg, needle) != NULL, "%s: status %d (want %d), '%s' "
           "lacks '%s'", what, (int)st, (int)want, msg, needle);
    model_free(model);
}

static void refusals(const dataset_t *ds)
{
    strata_glm_problem_t *prob = my_rows(ds, 0, 0), *other = NULL;
    static dataset_t changed;
    strata_glm_model_t *model = NULL;
    strata_glm_param_t p, q;
    char good[600], msg[512], buf[64];
    struct stat st;
    long size = 0;
    int s;

    strata_glm_param_default(&p);
    p.method = STRATA_GLM_METHOD_CD;   /* auto: L-BFGS where no checkpoint */
    p.lambda           = 0.01;
    p.tol              = 0;
    p.max_rounds       = 4;
    p.threads          = 2;
    p.checkpoint       = path;
    p.checkpoint_every = 2;
    remove_ckpt();
    CHECKF(train(prob, &p, msg, sizeof(msg), &model) == STRATA_OK, "write: %s", msg);
    model_free(model);
    snprintf(good, sizeof(good), "%s/good.ckpt", dir);
    copy_file(path, good);
    if (stat(path, &st) == 0) {
        size = (long)st.st_size;
    }
    /* versions 2 and 3: the header, the rank table, v, alpha and 2 random states a rank
     * (not version 1's row orders) */
    CHECKF(size == 512 + 32 * nranks + 240 + 8 * N_ROWS + 16 * nranks,
           "checkpoint of %ld bytes (want %ld)", size,
           (long)(512 + 32 * nranks + 240 + 8 * N_ROWS + 16 * nranks));
    p.resume     = 1;
    p.max_rounds = 8;

    q        = p;
    q.lambda = 0.02;
    refused(prob, &q, STRATA_ERR_INVALID_PARAM, "lambda 0.01 (this run: 0.02)", "lambda");
    q      = p;
    q.seed = 7;
    refused(prob, &q, STRATA_ERR_INVALID_PARAM, "seed 1 (this run: 7)", "seed");
    q         = p;
    q.threads = 1;
    refused(prob, &q, STRATA_ERR_INVALID_PARAM, "threads per rank 2 (this run: 1)", "threads");
    /* the other parameters that steer the steps */
    q              = p;
    q.local_epochs = p.local_epochs + 1;
    snprintf(buf, sizeof(buf), "local epochs %d (this run: %d)", p.local_epochs,
             q.local_epochs);
    refused(prob, &q, STRATA_ERR_INVALID_PARAM, buf, "local epochs");
    q      = p;
    q.bias = 1;
    refused(prob, &q, STRATA_ERR_INVALID_PARAM, "bias -1 (this run: 1)", "bias");
    q            = p;
    q.weight_pos = 2;
    refused(prob, &q, STRATA_ERR_INVALID_PARAM, "weight of the +1 examples 1 (this run: 2)",
            "weight_pos");
    q            = p;
    q.weight_neg = 0.5;
    refused(prob, &q, STRATA_ERR_INVALID_PARAM, "weight of the -1 examples 1 (this run: 0.5)",
            "weight_neg");

    changed = *ds;
    changed.values[N_ROWS] += 1e-9;   /* one value */
    other = my_rows(&changed, 0, 0);
    refused(other, &p, STRATA_ERR_INVALID_PARAM, "data checksum", "other data");
    strata_glm_problem_free(other);
    if (nranks > 1) {
        other = my_rows(ds, 0, 3);
        refused(other, &p, STRATA_ERR_INVALID_PARAM, "another partition: rank 0 held rows",
                "other partition");
        strata_glm_problem_free(other);
    }

    /* a flipped byte in the header, the rank table (32 bytes a rank), v (30 weights),
     * alpha (8 bytes a row), the random states (the last words) */
    for (s = 0; s < 5; s++) {
        const long table = 512 + 32 * nranks, at[5] = {
            100, 512 + 3, table + 5, table + 240 + 8 * 100 + 1, size - 3};
        long where = at[s];

        copy_file(good, path);
        damage(where, 0);
        snprintf(buf, sizeof(buf), "flipped byte %ld", where);
        refused(prob, &p, STRATA_ERR_IO, "corrupted checkpoint", buf);
    }
    /* a version word this build does not read: a newer Strata's, where the header's
     * checksum holds; else damage (before: "checkpoint version N" either way) */
    copy_file(good, path);
    set_version(4, 1);
    refused(prob, &p, STRATA_ERR_UNSUPPORTED, "checkpoint version 4, written by a newer Strata",
            "version 4");
    copy_file(good, path);
    set_version(4, 0);
    refused(prob, &p, STRATA_ERR_IO, "corrupted checkpoint (its version word reads 4",
            "version 4, damaged");
    copy_file(good, path);
    damage(15, 0);   /* the version word's last byte */
    refused(prob, &p, STRATA_ERR_IO, "corrupted checkpoint", "flipped byte in the version");
    copy_file(good, path);
    set_version(0, 1);
    refused(prob, &p, STRATA_ERR_IO, "corrupted checkpoint", "version 0");
    copy_file(good, path);
    damage(size - 8, 1);
    refused(prob, &p, STRATA_ERR_IO, "truncated checkpoint", "truncated");
    damage(100, 1);
    refused(prob, &p, STRATA_ERR_IO, "truncated checkpoint", "truncated in the header");
    remove_ckpt();
    refused(prob, &p, STRATA_ERR_NOT_FOUND, "no checkpoint to resume from", "no file");

    /* a file that is not a checkpoint is left alone; one that cannot be written fails */
    copy_file(good, path);
    damage(0, 0);
    refused(prob, &p, STRATA_ERR_IO, "not a Strata checkpoint", "not a checkpoint");
    p.resume = 0;
    refused(prob, &p, STRATA_ERR_INVALID_PARAM, "not overwriting it", "overwrite");
    CHECKF(stat(path, &st) == 0 && (long)st.st_size == size, "the other file changed");
    snprintf(good, sizeof(good), "%s/none/x.ckpt", dir);
    p.checkpoint = good;
    refused(prob, &p, STRATA_ERR_IO, "cannot write the checkpoint: No such file", "unwritable");
    strata_glm_problem_free(prob);
}

int main(int argc, char **argv)
{
    static const char *const models[] = {"logistic", "svm", "sqsvm", "ridge", "lasso",
                                         "elastic-net", "l1-logistic", "l1-sqsvm"};
    static dataset_t ds;
    strata_glm_problem_t *prob;
    const st_glm_model_t *loss;
    strata_glm_param_t p;
    char what[128];
    size_t m;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    make_data(&ds, 0);
    strata_glm_set_print_function(count_lines);
    if (rank == 0) {
        snprintf(dir, sizeof(dir), "%s/st_ckpt.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR")
                                                                           : "/tmp");
        if (mkdtemp(dir) == NULL) {
            dir[0] = '\0';
        }
    }
    MPI_Bcast(dir, sizeof(dir), MPI_CHAR, 0, MPI_COMM_WORLD);
    if (dir[0] == '\0') {
        printf("test_ckpt: cannot make a directory\n");
        MPI_Finalize();
        return 1;
    }
    snprintf(path, sizeof(path), "%s/train.ckpt", dir);

    param_checks();
    for (m = 0; m < sizeof(models) / sizeof(models[0]); m++) {
        loss = st_glm_model_lookup(models[m], NULL, 0);
        prob = my_rows(&ds, !loss->classification, 0);
        strata_glm_param_default(&p);
        p.method = STRATA_GLM_METHOD_CD;   /* auto: L-BFGS where no checkpoint */
        p.solver     = models[m];
        p.lambda     = 0.01;
        p.tol        = 0;
        p.max_rounds = 13;
        snprintf(what, sizeof(what), "%s", models[m]);
        check_resume(prob, p, 7, 3, p.feature_order, what);
        /* an intercept, class weights, two local passes, two threads, gap every 2 */
        p.bias         = 1;
        p.weight_pos   = 2;
        p.local_epochs = 2;
        p.threads      = 2;
        p.gap_every    = 2;
        snprintf(what, sizeof(what), "%s, bias, weights, 2 epochs, 2 threads", models[m]);
        check_resume(prob, p, 5, 2, p.feature_order, what);
        /* converged at a checkpoint: the resumed run stops there too */
        p.tol        = 0.05;
        p.max_rounds = 1000;
        p.gap_every  = 1;
        snprintf(what, sizeof(what), "%s, converging", models[m]);
        check_resume(prob, p, 1000, 1, p.feature_order, what);
        strata_glm_problem_free(prob);
    }
    /* the columns relabelled by frequency (feature_order): the file holds the given
     * order, so a run resumes alike in either layout */
    prob = my_rows(&ds, 0, 0);
    strata_glm_param_default(&p);
    p.method = STRATA_GLM_METHOD_CD;   /* auto: L-BFGS where no checkpoint */
    p.lambda        = 0.01;
    p.tol           = 0;
    p.max_rounds    = 13;
    p.bias          = 1;
    p.threads       = 2;
    p.feature_order = STRATA_GLM_ORDER_FREQUENCY;
    check_resume(prob, p, 7, 3, STRATA_GLM_ORDER_FREQUENCY, "logistic, relabelled");
    p.feature_order = STRATA_GLM_ORDER_GIVEN;
    check_resume(prob, p, 7, 3, STRATA_GLM_ORDER_FREQUENCY, "logistic, written relabelled, "
                 "resumed in the given order");
    strata_glm_problem_free(prob);
    refusals(&ds);

    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        char cmd[300];

        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
        if (system(cmd) != 0) {
            printf("test_ckpt: cannot remove %s\n", dir);
        }
    }
    MPI_Allreduce(MPI_IN_PLACE, &failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("test_ckpt: %s: %d ranks, %d failures\n", failures ? "FAIL" : "PASS", nranks,
               failures);
    }
    MPI_Finalize();
    return failures ? 1 : 0;
}
