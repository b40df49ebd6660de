/*
 * Strata's set-up exchanges (common/st_mpi.c) when another thread completes them.
 *
 * Under MPI_THREAD_MULTIPLE, Open MPI's progress engine may run in any thread: it
 * then copies a message into the receiving thread's buffer and marks the request
 * complete through atomics that ThreadSanitizer cannot see (Open MPI is not built
 * with it). The receiving thread's first read of its buffer then looks like a data
 * race: the ThreadSanitizer run of tests/threads-3 failed on it now and then, in
 * the node segment's set-up (st_shm_attach_memfd reading a PMPI_Bcast result).
 *
 * This test makes that happen every time. It replaces PMPI_Bcast, PMPI_Allreduce
 * and PMPI_Allgather (the definitions in this program come before libmpi's, for
 * the copy of common/st_mpi.c linked into it) by versions that hand each call to
 * a "progress" thread, which writes the result into the caller's buffers with
 * memcpy and signals completion with a plain store hidden from ThreadSanitizer,
 * as Open MPI does. The caller then reads the result from its stack buffers, as
 * Strata's set-up code does.
 *
 * In a ThreadSanitizer build (make check-tsan), st_mpi_* must keep Open MPI away
 * from the caller's buffers, or ThreadSanitizer reports a race and the test fails
 * (its harness fails any output on stderr). In every build, the results are
 * checked: each call returns what the "other ranks" sent.
 */
#include "config.h"

#include "st_mpi.h"
#include "st_test.h"

#include <dlfcn.h>
#include <pthread.h>
#include <sched.h>

#define FAKE_LEN 256

typedef enum { FAKE_BCAST, FAKE_ALLREDUCE, FAKE_ALLGATHER } fake_kind_t;

/* one call handed to the progress thread (under fake_lock) */
static struct {
    fake_kind_t kind;
    const void *in;     /* allgather: this rank's block */
    void *out;          /* where the result goes */
    int len;            /* bytes (allreduce: ints) */
    int posted;
} fake_req;

static pthread_mutex_t fake_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t fake_cond  = PTHREAD_COND_INITIALIZER;
static MPI_Comm fake_comm = MPI_COMM_NULL;   /* the calls on it are faked */
static int fake_stop;
static int fake_done;   /* only through fake_store/fake_load: invisible to TSan */

/* The "other rank's" contributions */
static unsigned char peer_bytes[FAKE_LEN];
static int peer_ints[FAKE_LEN];

#if defined(__x86_64__) || defined(__i386__)
static void fake_store(int *p, int v)
{
    __asm__ volatile("movl %1, %0" : "=m"(*p) : "r"(v) : "memory");
}

static int fake_load(const int *p)
{
    int v;

    __asm__ volatile("movl %1, %0" : "=r"(v) : "m"(*p) : "memory");
    return v;
}
#else
/* elsewhere ThreadSanitizer sees this hand-over, and the test checks less */
static void fake_store(int *p, int v)
{
    __atomic_store_n(p, v, __ATOMIC_RELEASE);
}

static int fake_load(const int *p)
{
    return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}
#endif

static void *fake_progress(void *arg)
{
    int tmp[FAKE_LEN], i, n;

    (void)arg;
    pthread_mutex_lock(&fake_lock);
    for (;;) {
        while (!fake_req.posted && !fake_stop) {
            pthread_cond_wait(&fake_cond, &fake_lock);
        }
        if (fake_stop) {
            break;
        }
        fake_req.posted = 0;
        n               = fake_req.len;
        switch (fake_req.kind) {
        case FAKE_BCAST:   /* the root's bytes arrive */
            memcpy(fake_req.out, peer_bytes, (size_t)n);
            break;
        case FAKE_ALLREDUCE:   /* MPI_MIN with the peer's ints, in place */
            memcpy(tmp, fake_req.out, (size_t)n * sizeof(int));
            for (i = 0; i < n; i++) {
                tmp[i] = (peer_ints[i] < tmp[i]) ? peer_ints[i] : tmp[i];
            }
            memcpy(fake_req.out, tmp, (size_t)n * sizeof(int));
            break;
        case FAKE_ALLGATHER:   /* this rank's block, then the peer's */
            memcpy(fake_req.out, fake_req.in, (size_t)n);
            memcpy((char *)fake_req.out + n, peer_bytes, (size_t)n);
            break;
        }
        fake_store(&fake_done, 1);
    }
    pthread_mutex_unlock(&fake_lock);
    return NULL;
}

/* Post a call to the progress thread; wait as Open MPI's request wait does. */
static int fake_call(fake_kind_t kind, const void *in, void *out, int len)
{
    fake_store(&fake_done, 0);
    pthread_mutex_lock(&fake_lock);
    fake_req.kind   = kind;
    fake_req.in     = in;
    fake_req.out    = out;
    fake_req.len    = len;
    fake_req.posted = 1;
    pthread_cond_signal(&fake_cond);
    pthread_mutex_unlock(&fake_lock);
    while (!fake_load(&fake_done)) {
        sched_yield();
    }
    return MPI_SUCCESS;
}

static void *real(const char *name)
{
    void *f = dlsym(RTLD_NEXT, name);

    if (f == NULL) {
        fprintf(stderr, "test_setup_mpi: %s not found\n", name);
        abort();
    }
    return f;
}

int PMPI_Bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm)
{
    int (*f)(void *, int, MPI_Datatype, int, MPI_Comm);

    if (comm == fake_comm && type == MPI_BYTE && count <= FAKE_LEN) {
        return fake_call(FAKE_BCAST, NULL, buf, count);
    }
    f = (int (*)(void *, int, MPI_Datatype, int, MPI_Comm))real("PMPI_Bcast");
    return f(buf, count, type, root, comm);
}

int PMPI_Allreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op,
                   MPI_Comm comm)
{
    int (*f)(const void *, void *, int, MPI_Datatype, MPI_Op, MPI_Comm);

    if (comm == fake_comm && sbuf == MPI_IN_PLACE && type == MPI_INT && op == MPI_MIN &&
        count <= FAKE_LEN) {
        return fake_call(FAKE_ALLREDUCE, NULL, rbuf, count);
    }
    f = (int (*)(const void *, void *, int, MPI_Datatype, MPI_Op, MPI_Comm))real(
            "PMPI_Allreduce");
    return f(sbuf, rbuf, count, type, op, comm);
}

int PMPI_Allgather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                   MPI_Datatype rtype, MPI_Comm comm)
{
    int (*f)(const void *, int, MPI_Datatype, void *, int, MPI_Datatype, MPI_Comm);

    if (comm == fake_comm && stype == MPI_BYTE && scount <= FAKE_LEN) {
        return fake_call(FAKE_ALLGATHER, sbuf, rbuf, scount);
    }
    f = (int (*)(const void *, int, MPI_Datatype, void *, int, MPI_Datatype, MPI_Comm))real(
            "PMPI_Allgather");
    return f(sbuf, scount, stype, rbuf, rcount, rtype, comm);
}

/* fake_comm has two ranks: this one and the progress thread's "peer" */
int PMPI_Comm_size(MPI_Comm comm, int *size)
{
    int (*f)(MPI_Comm, int *);

    if (comm == fake_comm) {
        *size = 2;
        return MPI_SUCCESS;
    }
    f = (int (*)(MPI_Comm, int *))real("PMPI_Comm_size");
    return f(comm, size);
}

/* A fresh stack frame per call, as each set-up function has. */
static __attribute__((noinline)) void check_bcast(int round, int len)
{
    unsigned char buf[FAKE_LEN];
    int i, bad = 0;

    memset(buf, 0xee, sizeof(buf));
    CHECK(st_mpi_bcast(buf, len, 1, fake_comm) == MPI_SUCCESS);
    for (i = 0; i < len; i++) {
        bad += (buf[i] != peer_bytes[i]);
    }
    for (; i < FAKE_LEN; i++) {
        bad += (buf[i] != 0xee);
    }
    CHECKF(bad == 0, "round %d: st_mpi_bcast of %d bytes: %d bytes wrong", round, len, bad);
}

static __attribute__((noinline)) void check_allreduce(int round, int n)
{
    int v[FAKE_LEN], i, bad = 0;

    for (i = 0; i < FAKE_LEN; i++) {
        v[i] = (i * 7 + round) % 13 - 6;
    }
    CHECK(st_mpi_allreduce(v, n, MPI_INT, MPI_MIN, fake_comm) == MPI_SUCCESS);
    for (i = 0; i < FAKE_LEN; i++) {
        int mine = (i * 7 + round) % 13 - 6;
        int want = (i < n && peer_ints[i] < mine) ? peer_ints[i] : mine;

        bad += (v[i] != want);
    }
    CHECKF(bad == 0, "round %d: st_mpi_allreduce of %d ints: %d wrong", round, n, bad);
}

static __attribute__((noinline)) void check_allgather(int round, int len)
{
    unsigned char mine[FAKE_LEN], all[2 * FAKE_LEN];
    int i, bad = 0;

    memset(mine, 0, sizeof(mine));
    for (i = 0; i < len; i++) {
        mine[i] = (unsigned char)(i + round);
    }
    memset(all, 0xee, sizeof(all));
    CHECK(st_mpi_allgather(mine, len, all, fake_comm) == MPI_SUCCESS);
    for (i = 0; i < len; i++) {
        bad += (all[i] != (unsigned char)(i + round)) + (all[len + i] != peer_bytes[i]);
    }
    CHECKF(bad == 0, "round %d: st_mpi_allgather of %d bytes: %d bytes wrong", round, len, bad);
}

int main(int argc, char **argv)
{
    pthread_t progress;
    int provided = 0, i, round;

    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    for (i = 0; i < FAKE_LEN; i++) {
        peer_bytes[i] = (unsigned char)(255 - i);
        peer_ints[i]  = (i % 5) - 2;
    }
    CHECK(MPI_Comm_dup(MPI_COMM_SELF, &fake_comm) == MPI_SUCCESS);
    CHECK(pthread_create(&progress, NULL, fake_progress, NULL) == 0);
    for (round = 0; round < 20; round++) {
        int len = 1 + (round * 37) % FAKE_LEN;

        check_bcast(round, len);
        check_allreduce(round, len);
        check_allgather(round, len);
    }
    pthread_mutex_lock(&fake_lock);
    fake_stop = 1;
    pthread_cond_signal(&fake_cond);
    pthread_mutex_unlock(&fake_lock);
    pthread_join(progress, NULL);
    MPI_Comm_free(&fake_comm);
    return st_test_finish("setup_mpi");
}
