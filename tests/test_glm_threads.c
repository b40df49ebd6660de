/*
 * Trainings on two communicators at once, under MPI_THREAD_MULTIPLE (tests/
 * glm_threads-2.np2): each rank trains on two duplicates of MPI_COMM_WORLD from two
 * threads, rank 0 starting the one on the first communicator, rank 1 the other, the
 * second thread 0 to 0.2 s later (eight tries a method: which one takes the lock below
 * first is a race). Each communicator's calls come in the same order on every
 * rank (legal MPI), so both trainings must end, and each with the model a training on
 * MPI_COMM_WORLD alone makes, bit for bit. Before: a process-wide lock, held across the
 * trainings' sums, made each rank's first training wait for the peer's, which waited
 * for its own lock: a hang (a watchdog ends the test with a message after 60 s).
 * Last, the print hook swapped while a training prints (test_print_swap).
 */
#include "config.h"

#include "st_glm_test.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define WATCHDOG_SECONDS 60

typedef struct {
    MPI_Comm             comm;
    strata_glm_problem_t *prob;
    int                  method;
    strata_glm_model_t   *model;
    strata_status_t      status;
    char                 msg[256];
    volatile int         done;
} job_t;

static void param_of(strata_glm_param_t *p, int method)
{
    strata_glm_param_default(p);
    p->lambda     = 1e-3;
    p->tol        = 0;
    p->max_rounds = 40;
    p->method     = method;
}

static void *train_job(void *arg)
{
    job_t *j = arg;
    strata_glm_param_t p;

    param_of(&p, j->method);
    j->status = strata_glm_train(j->prob, &p, j->comm, j->msg, sizeof(j->msg), &j->model);
    __atomic_store_n(&j->done, 1, __ATOMIC_RELEASE);
    return NULL;
}

/* Both jobs on @a method, started in the orders above (the second @a delay us after
 * the first), against @a ref's weights. */
static void run_pair(const dataset_t *ds, int method, const strata_glm_model_t *ref,
                     useconds_t delay)
{
    job_t job[2];
    pthread_t thread[2];
    int first = rank % 2, k, waited;

    memset(job, 0, sizeof(job));
    for (k = 0; k < 2; k++) {
        MPI_Comm_dup(MPI_COMM_WORLD, &job[k].comm);
        job[k].method = method;
        job[k].prob   = my_rows(ds, 0, 0);
    }
    CHECKF(pthread_create(&thread[first], NULL, train_job, &job[first]) == 0, "thread");
    usleep(delay);
    CHECKF(pthread_create(&thread[1 - first], NULL, train_job, &job[1 - first]) == 0,
           "thread");
    for (waited = 0; waited < 10 * WATCHDOG_SECONDS; waited++) {
        if (__atomic_load_n(&job[0].done, __ATOMIC_ACQUIRE) &&
            __atomic_load_n(&job[1].done, __ATOMIC_ACQUIRE)) {
            break;
        }
        usleep(100000);
    }
    if (waited == 10 * WATCHDOG_SECONDS) {
        printf("rank %d: method %d: the two trainings did not end in %d s (a hang)\n", rank,
               method, WATCHDOG_SECONDS);
        fflush(stdout);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (k = 0; k < 2; k++) {
        pthread_join(thread[k], NULL);
        CHECKF(job[k].status == STRATA_OK, "method %d, communicator %d: %s", method, k,
               job[k].msg);
        if (job[k].status == STRATA_OK) {
            CHECKF(memcmp(job[k].model->w, ref->w, N_COLS * sizeof(double)) == 0,
                   "method %d, communicator %d: another model than on MPI_COMM_WORLD alone",
                   method, k);
        }
        strata_glm_model_free(job[k].model);
        strata_glm_problem_free(job[k].prob);
        MPI_Comm_free(&job[k].comm);
    }
}

/* The print hook swapped by one thread while another trains verbosely (the header:
 * any thread, at any time). Before, a plain pointer: ThreadSanitizer (make check-tsan)
 * reported the data race between the swap and the training's progress line. */
static int hook_lines[2];
static void hook_a(const char *line)
{
    (void)line;
    __atomic_add_fetch(&hook_lines[0], 1, __ATOMIC_RELAXED);
}
static void hook_b(const char *line)
{
    (void)line;
    __atomic_add_fetch(&hook_lines[1], 1, __ATOMIC_RELAXED);
}

static void *swap_hooks(void *arg)
{
    job_t *j = arg;

    while (!__atomic_load_n(&j->done, __ATOMIC_ACQUIRE)) {
        strata_glm_set_print_function(hook_b);
        strata_glm_set_print_function(hook_a);
    }
    return NULL;
}

static void test_print_swap(const dataset_t *ds)
{
    strata_glm_param_t p;
    pthread_t thread;
    job_t job;

    memset(&job, 0, sizeof(job));
    job.prob = my_rows(ds, 0, 0);
    strata_glm_set_print_function(hook_a);
    CHECKF(pthread_create(&thread, NULL, swap_hooks, &job) == 0, "thread");
    param_of(&p, STRATA_GLM_METHOD_CD);
    p.verbose  = 1;
    job.status = strata_glm_train(job.prob, &p, MPI_COMM_WORLD, job.msg, sizeof(job.msg),
                                  &job.model);
    __atomic_store_n(&job.done, 1, __ATOMIC_RELEASE);
    pthread_join(thread, NULL);
    strata_glm_set_print_function(NULL);
    CHECKF(job.status == STRATA_OK, "verbose training, hooks swapped: %s", job.msg);
    CHECKF(rank != 0 || hook_lines[0] + hook_lines[1] >= p.max_rounds, "verbose training, "
           "hooks swapped: %d + %d progress lines, expected %d or more", hook_lines[0],
           hook_lines[1], p.max_rounds);
    strata_glm_model_free(job.model);
    strata_glm_problem_free(job.prob);
}

int main(int argc, char **argv)
{
    static const int methods[] = {STRATA_GLM_METHOD_CD, STRATA_GLM_METHOD_NEWTON};
    /* which thread reaches a training's rounds first is a race: several tries */
    static const useconds_t delays[] = {0, 0, 1000, 1000, 5000, 20000, 50000, 200000};
    static dataset_t ds;
    strata_glm_problem_t *prob;
    strata_glm_model_t *ref;
    strata_glm_param_t p;
    char msg[256];
    int provided, m, d;

    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    if (provided < MPI_THREAD_MULTIPLE) {
        if (rank == 0) {
            printf("test_glm_threads: no MPI_THREAD_MULTIPLE here: skipped\n");
        }
        MPI_Finalize();
        return 77;
    }
    make_data(&ds, 0);
    for (m = 0; m < (int)(sizeof(methods) / sizeof(methods[0])); m++) {
        prob = my_rows(&ds, 0, 0);
        ref  = NULL;
        param_of(&p, methods[m]);
        CHECKF(strata_glm_train(prob, &p, MPI_COMM_WORLD, msg, sizeof(msg), &ref) == STRATA_OK,
               "method %d on MPI_COMM_WORLD: %s", methods[m], msg);
        for (d = 0; ref != NULL && d < (int)(sizeof(delays) / sizeof(delays[0])); d++) {
            run_pair(&ds, methods[m], ref, delays[d]);
        }
        strata_glm_model_free(ref);
        strata_glm_problem_free(prob);
    }
    test_print_swap(&ds);
    MPI_Allreduce(MPI_IN_PLACE, &failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("test_glm_threads: %s\n", failures ? "FAIL" : "PASS");
    }
    MPI_Finalize();
    return failures ? 1 : 0;
}
