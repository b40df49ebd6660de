/*
 * MPI_THREAD_MULTIPLE: two, then three threads per rank, each with its own
 * duplicate of MPI_COMM_WORLD, run hundreds of MPI_Allreduce calls at the same
 * time: small and larger than 1 MB (the pipelined path), several types and ops,
 * in place or not. Every result is checked against a reference computed in the
 * thread, every call must be one fast-path call on the thread's communicator,
 * and the ranks must agree on the results of every thread.
 *
 * Then two and three threads take turns on one shared communicator (legal MPI
 * when the calls are ordered the same way on every rank): a pthread that is not
 * the main thread makes the first call, so the plan is built by one thread, used
 * by all of them and freed by the main thread.
 *
 * Exits 77 (skip) when the MPI library does not provide MPI_THREAD_MULTIPLE.
 */
#include "config.h"

#include "st_test.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ITERS       400  /* calls per thread */
#define LARGE_EVERY 10   /* one call in LARGE_EVERY moves more than 1 MB */
#define MAX_THREADS 3

typedef enum { K_INT_SUM, K_DOUBLE_SUM, K_INT8_SUM, K_U64_BXOR, K_FLOAT_MAX, K_2INT_MINLOC,
               K_LAST } kind_t;

static const char *const kind_names[K_LAST] = {
    "int sum", "double sum", "int8 sum", "uint64 bxor", "float max", "2int minloc"
};

static size_t kind_size(kind_t k)
{
    switch (k) {
    case K_INT_SUM:     return sizeof(int);
    case K_DOUBLE_SUM:  return sizeof(double);
    case K_INT8_SUM:    return sizeof(int8_t);
    case K_U64_BXOR:    return sizeof(uint64_t);
    case K_FLOAT_MAX:   return sizeof(float);
    default:            return sizeof(pair_2int_t);
    }
}

static MPI_Datatype kind_type(kind_t k)
{
    switch (k) {
    case K_INT_SUM:     return MPI_INT;
    case K_DOUBLE_SUM:  return MPI_DOUBLE;
    case K_INT8_SUM:    return MPI_INT8_T;
    case K_U64_BXOR:    return MPI_UINT64_T;
    case K_FLOAT_MAX:   return MPI_FLOAT;
    default:            return MPI_2INT;
    }
}

static MPI_Op kind_op(kind_t k)
{
    switch (k) {
    case K_INT_SUM: case K_DOUBLE_SUM: case K_INT8_SUM: return MPI_SUM;
    case K_U64_BXOR:    return MPI_BXOR;
    case K_FLOAT_MAX:   return MPI_MAX;
    default:            return MPI_MINLOC;
    }
}

/* Input of @a rank at index @a i into @a dst. */
static void gen_elem(kind_t k, uint64_t seed, int rank, size_t i, void *dst)
{
    uint64_t h = st_test_rand(seed, rank, i);
    pair_2int_t p;
    double d;
    float f;

    switch (k) {
    case K_INT_SUM:
    case K_INT8_SUM:
    case K_U64_BXOR:
        memcpy(dst, &h, kind_size(k));  /* the whole range: sums wrap */
        break;
    case K_DOUBLE_SUM:
        d = (double)((int)(h % 2001) - 1000);
        memcpy(dst, &d, sizeof(d));
        break;
    case K_FLOAT_MAX:
        f = (float)((int)(h % 20001) - 10000) / 8;
        memcpy(dst, &f, sizeof(f));
        break;
    default:
        p.v = (int)(h % 4);
        p.i = (int)((h >> 32) % 6);
        memcpy(dst, &p, sizeof(p));
        break;
    }
}

/* Expected element @a i over @a n ranks, a scalar loop over their inputs. */
static void ref_elem(kind_t k, uint64_t seed, int n, size_t i, void *dst)
{
    uint64_t u = 0, x64;
    double d = 0, xd;
    float f = 0, xf;
    int8_t x8;
    int xi;
    pair_2int_t p = {0, 0}, xp;
    int r;

    for (r = 0; r < n; r++) {
        switch (k) {
        case K_INT_SUM:
            gen_elem(k, seed, r, i, &xi);
            u += (uint64_t)xi;
            break;
        case K_INT8_SUM:
            gen_elem(k, seed, r, i, &x8);
            u += (uint64_t)x8;
            break;
        case K_U64_BXOR:
            gen_elem(k, seed, r, i, &x64);
            u ^= x64;
            break;
        case K_DOUBLE_SUM:
            gen_elem(k, seed, r, i, &xd);
            d = (r == 0) ? xd : d + xd;
            break;
        case K_FLOAT_MAX:
            gen_elem(k, seed, r, i, &xf);
            f = (r == 0 || xf > f) ? xf : f;
            break;
        default:
            gen_elem(k, seed, r, i, &xp);
            if (r == 0 || xp.v < p.v || (xp.v == p.v && xp.i < p.i)) {
                p = xp;
            }
            break;
        }
    }
    switch (k) {
    case K_INT_SUM:    xi = (int)(uint32_t)u; memcpy(dst, &xi, sizeof(xi)); break;
    case K_INT8_SUM:   x8 = (int8_t)(uint8_t)u; memcpy(dst, &x8, sizeof(x8)); break;
    case K_U64_BXOR:   memcpy(dst, &u, sizeof(u)); break;
    case K_DOUBLE_SUM: memcpy(dst, &d, sizeof(d)); break;
    case K_FLOAT_MAX:  memcpy(dst, &f, sizeof(f)); break;
    default:           memcpy(dst, &p, sizeof(p)); break;
    }
}

/* The order of the calls on a communicator the threads share: call @c it is
 * made by thread (it + 1) % nthreads. */
typedef struct {
    pthread_mutex_t lock;
    pthread_cond_t  cond;
    int             next;   /* the call whose turn it is */
} turns_t;

typedef struct {
    int       id, nthreads;
    MPI_Comm  comm;
    pthread_t thread;
    uint64_t  hash;
    turns_t  *turns;        /* NULL: the communicator is the thread's own */
} worker_t;

static int turn_owner(const worker_t *w, int it)
{
    return (it + 1) % w->nthreads;
}

static void turn_wait(turns_t *t, int it)
{
    pthread_mutex_lock(&t->lock);
    while (t->next != it) {
        pthread_cond_wait(&t->cond, &t->lock);
    }
    pthread_mutex_unlock(&t->lock);
}

static void turn_pass(turns_t *t)
{
    pthread_mutex_lock(&t->lock);
    t->next++;
    pthread_cond_broadcast(&t->cond);
    pthread_mutex_unlock(&t->lock);
}

static int world_rank, world_size;

static void *worker_run(void *arg)
{
    worker_t *w = (worker_t*)arg;
    strata_comm_stats_t before, after;
    /* (a shared communicator's stats move with the other threads' calls: read
     * them in my turns only) */
    uint64_t fast0 = (w->turns == NULL) ? st_test_fast_calls(w->comm) : 0, seed;
    unsigned char *send, *recv, *expect;
    size_t count, esize, bytes, i, bad;
    int it, inplace, rc, ncalls = 0;
    kind_t k;

    w->hash = ST_TEST_HASH_INIT;
    for (it = 0; it < ITERS; it++) {
        if (w->turns != NULL) {
            if (turn_owner(w, it) != w->id) {
                continue;
            }
            turn_wait(w->turns, it);
        }
        ncalls++;
        k       = (kind_t)((it + w->id) % K_LAST);
        esize   = kind_size(k);
        count   = (it % LARGE_EVERY == LARGE_EVERY - 1)
                  ? (1 << 20) / esize + 1 + (size_t)it   /* > 1 MB */
                  : 1 + ((size_t)it * 37 + (size_t)w->id * 101) % 3000;
        inplace = (it / K_LAST) % 2;
        bytes   = count * esize;
        seed    = st_test_mix(((uint64_t)w->nthreads << 48) + ((uint64_t)w->id << 32) +
                              (uint64_t)it);

        send   = malloc(bytes);
        recv   = malloc(bytes);
        expect = malloc(bytes);
        if (send == NULL || recv == NULL || expect == NULL) {
            st_test_fail(__FILE__, __LINE__, "out of memory");
            free(send);
            free(recv);
            free(expect);
            break;
        }
        for (i = 0; i < count; i++) {
            gen_elem(k, seed, world_rank, i, send + i * esize);
            ref_elem(k, seed, world_size, i, expect + i * esize);
        }
        if (inplace) {
            memcpy(recv, send, bytes);
        } else {
            memset(recv, 0x5a, bytes);
        }

        before = st_test_stats(w->comm);
        rc = MPI_Allreduce(inplace ? MPI_IN_PLACE : send, recv, (int)count, kind_type(k),
                           kind_op(k), w->comm);
        after = st_test_stats(w->comm);
        if (w->turns != NULL) {
            turn_pass(w->turns);  /* the checks below need not wait */
        }

        for (i = 0, bad = 0; i < count; i++) {
            bad += (memcmp(recv + i * esize, expect + i * esize, esize) != 0);
        }
        CHECKF(rc == MPI_SUCCESS && bad == 0,
               "%d threads%s, thread %d, call %d, %s, count %zu%s: rc %d, %zu wrong elements",
               w->nthreads, w->turns ? " taking turns" : "", w->id, it, kind_names[k], count,
               inplace ? " in place" : "", rc, bad);
        if (world_size >= 2 && w->turns == NULL) {
            CHECKF(after.fast_calls == before.fast_calls + 1 &&
                   st_test_fallback_total(&after) == st_test_fallback_total(&before),
                   "%d threads, thread %d, call %d: not one fast-path call (fast %llu -> %llu)",
                   w->nthreads, w->id, it, (unsigned long long)before.fast_calls,
                   (unsigned long long)after.fast_calls);
        }
        w->hash = st_test_hash_more(w->hash, recv, bytes);
        free(send);
        free(recv);
        free(expect);
    }
    if (w->turns != NULL) {
        /* the stats of a shared communicator move with the other threads'
         * calls too: run_turns() checks them, and the agreement, after the join */
        CHECKF(ncalls > 0, "%d threads taking turns, thread %d: no call made", w->nthreads,
               w->id);
        return NULL;
    }
    if (world_size >= 2) {
        CHECKF(st_test_fast_calls(w->comm) - fast0 == ITERS,
               "%d threads, thread %d: %llu fast calls, %d made", w->nthreads, w->id,
               (unsigned long long)(st_test_fast_calls(w->comm) - fast0), ITERS);
    }
    /* concurrently with the other threads, each on its own comm */
    CHECKF(st_test_hash_agree(w->comm, w->hash), "%d threads, thread %d: ranks disagree",
           w->nthreads, w->id);
    return NULL;
}

static void start_threads(worker_t *w, int nthreads)
{
    int t;

    for (t = 1; t < nthreads; t++) {
        if (pthread_create(&w[t].thread, NULL, worker_run, &w[t]) != 0) {
            st_test_fail(__FILE__, __LINE__, "pthread_create failed");
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }
    worker_run(&w[0]);
    for (t = 1; t < nthreads; t++) {
        pthread_join(w[t].thread, NULL);
    }
}

static void run_threads(int nthreads)
{
    worker_t w[MAX_THREADS];
    int t;

    /* collective creation, in the same order on every rank */
    for (t = 0; t < nthreads; t++) {
        w[t].id       = t;
        w[t].nthreads = nthreads;
        w[t].turns    = NULL;
        ST_TEST_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &w[t].comm));
    }
    start_threads(w, nthreads);
    for (t = 0; t < nthreads; t++) {
        ST_TEST_MPI(MPI_Comm_free(&w[t].comm));
    }
}

/* @a nthreads threads take turns on one communicator, new to Strata (no plan
 * yet): thread 1 makes call 0 and builds the plan. */
static void run_turns(int nthreads)
{
    turns_t turns = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0 };
    worker_t w[MAX_THREADS];
    uint64_t fast0;
    MPI_Comm comm;
    int t;

    ST_TEST_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &comm));
    fast0 = st_test_fast_calls(comm);  /* 0: reading stats builds no plan */
    for (t = 0; t < nthreads; t++) {
        w[t].id       = t;
        w[t].nthreads = nthreads;
        w[t].comm     = comm;
        w[t].turns    = &turns;
    }
    start_threads(w, nthreads);
    if (world_size >= 2) {
        CHECKF(st_test_fast_calls(comm) - fast0 == ITERS,
               "%d threads taking turns: %llu fast calls, %d made", nthreads,
               (unsigned long long)(st_test_fast_calls(comm) - fast0), ITERS);
    }
    for (t = 0; t < nthreads; t++) {
        CHECKF(st_test_hash_agree(comm, w[t].hash),
               "%d threads taking turns, thread %d: ranks disagree", nthreads, t);
    }
    ST_TEST_MPI(MPI_Comm_free(&comm));
}

int main(int argc, char **argv)
{
    int provided = MPI_THREAD_SINGLE;

    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    if (provided < MPI_THREAD_MULTIPLE) {
        MPI_Finalize();
        return 77;
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world_size);
    CHECK(strata_active());

    run_threads(2);
    run_threads(3);
    run_turns(2);
    run_turns(3);

    return st_test_finish("test_threads");
}
