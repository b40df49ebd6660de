/*
 * Strata must keep MPI progressing while it waits for the other ranks.
 *
 * Rank 0 starts a large (8 MB: rendezvous) point-to-point transfer with rank 1,
 * then enters MPI_Allreduce before completing it; rank 1 finishes its blocking
 * side of the transfer first and only then enters MPI_Allreduce. Rank 1's
 * blocking call can only return if rank 0 progresses MPI from inside
 * MPI_Allreduce (Open MPI's own allreduce does): without that, both wait for
 * each other forever. Three patterns are tried:
 *   A: rank 0 MPI_Isend -> rank 1 MPI_Recv
 *   S: the same with a strided send type, which only rank 0 can pack
 *   B: rank 0 MPI_Irecv <- rank 1 MPI_Send
 * (With Open MPI's vader single-copy (CMA) transfers, rank 1 pulls a contiguous
 * message by itself, so A alone passes even without progress; S and B need it.)
 * with small (latency path) and large (pipelined) allreduces; other ranks just
 * call MPI_Allreduce. Transfers and reductions are checked, and every reduction
 * must have taken the fast path. A watchdog turns a deadlock into a failure.
 *
 * --tail [N]: the other way round, across (virtual) nodes: N times (default 300) an
 * allreduce of 6000 ints, then MPI_Barrier. UCX may report a send done while its
 * last bytes still wait in the sender's process (TCP, a full socket buffer: the
 * np file shrinks them); a rank returning from the allreduce into Open MPI's
 * barrier must still get them out, or its neighbour, still in the allreduce,
 * waits forever (Open MPI's progress must drive Strata's UCX worker).
 */
#include "config.h"

#include "st_test.h"

#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MSG_DOUBLES (1 << 20)  /* 8 MB */
#define ROUNDS      4
#define WATCHDOG_S  120

static int world_rank, world_size;

static void watchdog(int sig)
{
    static const char msg[] = "test_progress: deadlock: no progress for a long time (MPI "
                              "not progressed inside MPI_Allreduce, or Strata's UCX worker "
                              "not after it?)\n";
    ssize_t rc = write(STDOUT_FILENO, msg, sizeof(msg) - 1);

    (void)rc;
    (void)sig;
    _exit(3);
}

static double msg_value(uint64_t seed, size_t i)
{
    return (double)(st_test_rand(seed, 0, i) % 1000003);
}

/* int SUM of @a count elements on world, checked; called by every rank. */
static void allreduce_checked(const char *what, int round, int count, int inplace)
{
    uint64_t seed = 1000 + (uint64_t)round * 7 + (uint64_t)count;
    strata_comm_stats_t before, after;
    int *in = malloc((size_t)count * sizeof(int)), *out = malloc((size_t)count * sizeof(int));
    int i, r, rc, bad = 0;
    uint32_t sum;

    if (in == NULL || out == NULL) {
        st_test_fail(__FILE__, __LINE__, "out of memory");
        MPI_Abort(MPI_COMM_WORLD, 1);
        return;
    }
    for (i = 0; i < count; i++) {
        in[i] = (int)st_test_rand(seed, world_rank, (uint64_t)i);
    }
    if (inplace) {
        memcpy(out, in, (size_t)count * sizeof(int));
    }
    before = st_test_stats(MPI_COMM_WORLD);
    rc = MPI_Allreduce(inplace ? MPI_IN_PLACE : in, out, count, MPI_INT, MPI_SUM,
                       MPI_COMM_WORLD);
    after = st_test_stats(MPI_COMM_WORLD);
    for (i = 0; i < count; i++) {
        sum = 0;
        for (r = 0; r < world_size; r++) {
            sum += (uint32_t)st_test_rand(seed, r, (uint64_t)i);
        }
        bad += (out[i] != (int)sum);
    }
    CHECKF(rc == MPI_SUCCESS && bad == 0, "%s, round %d, count %d: rc %d, %d wrong elements",
           what, round, count, rc, bad);
    CHECKF(after.fast_calls == before.fast_calls + 1, "%s, round %d, count %d: not fast", what,
           round, count);
    free(in);
    free(out);
}

static void check_msg(const char *what, int round, const double *msg, uint64_t seed)
{
    size_t i, bad = 0;

    for (i = 0; i < MSG_DOUBLES; i++) {
        bad += (msg[i] != msg_value(seed, i));
    }
    CHECKF(bad == 0, "%s, round %d: %zu wrong elements in the 8 MB message", what, round, bad);
}

/* A: rank 0 sends (nonblocking), rank 1 receives (blocking) before its allreduce. */
static void round_isend(int round, int count, double *msg)
{
    uint64_t seed = 500 + (uint64_t)round;
    MPI_Request req;
    size_t i;

    if (world_rank == 0) {
        for (i = 0; i < MSG_DOUBLES; i++) {
            msg[i] = msg_value(seed, i);
        }
        ST_TEST_MPI(MPI_Isend(msg, MSG_DOUBLES, MPI_DOUBLE, 1, round, MPI_COMM_WORLD, &req));
        allreduce_checked("isend before allreduce", round, count, round % 2);
        ST_TEST_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
    } else if (world_rank == 1) {
        memset(msg, 0, MSG_DOUBLES * sizeof(double));
        ST_TEST_MPI(MPI_Recv(msg, MSG_DOUBLES, MPI_DOUBLE, 0, round, MPI_COMM_WORLD,
                             MPI_STATUS_IGNORE));
        check_msg("recv before allreduce", round, msg, seed);
        allreduce_checked("recv before allreduce", round, count, round % 2);
    } else {
        allreduce_checked("bystander", round, count, round % 2);
    }
}

/* S: as A, but rank 0 sends every other double of a 16 MB buffer (a vector type). */
static void round_isend_strided(int round, int count, double *msg)
{
    uint64_t seed = 700 + (uint64_t)round;
    MPI_Datatype strided;
    MPI_Request req;
    size_t i;

    if (world_rank == 0) {
        for (i = 0; i < MSG_DOUBLES; i++) {
            msg[2 * i]     = msg_value(seed, i);
            msg[2 * i + 1] = -1;
        }
        ST_TEST_MPI(MPI_Type_vector(MSG_DOUBLES, 1, 2, MPI_DOUBLE, &strided));
        ST_TEST_MPI(MPI_Type_commit(&strided));
        ST_TEST_MPI(MPI_Isend(msg, 1, strided, 1, round, MPI_COMM_WORLD, &req));
        allreduce_checked("strided isend before allreduce", round, count, 0);
        ST_TEST_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
        ST_TEST_MPI(MPI_Type_free(&strided));
    } else if (world_rank == 1) {
        memset(msg, 0, MSG_DOUBLES * sizeof(double));
        ST_TEST_MPI(MPI_Recv(msg, MSG_DOUBLES, MPI_DOUBLE, 0, round, MPI_COMM_WORLD,
                             MPI_STATUS_IGNORE));
        check_msg("recv of a strided send before allreduce", round, msg, seed);
        allreduce_checked("recv of a strided send before allreduce", round, count, 0);
    } else {
        allreduce_checked("bystander", round, count, 0);
    }
}

/* B: rank 0 receives (nonblocking), rank 1 sends (blocking) before its allreduce. */
static void round_irecv(int round, int count, double *msg)
{
    uint64_t seed = 600 + (uint64_t)round;
    MPI_Request req;
    size_t i;

    if (world_rank == 0) {
        memset(msg, 0, MSG_DOUBLES * sizeof(double));
        ST_TEST_MPI(MPI_Irecv(msg, MSG_DOUBLES, MPI_DOUBLE, 1, round, MPI_COMM_WORLD, &req));
        allreduce_checked("irecv before allreduce", round, count, 0);
        ST_TEST_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
        check_msg("irecv before allreduce", round, msg, seed);
    } else if (world_rank == 1) {
        for (i = 0; i < MSG_DOUBLES; i++) {
            msg[i] = msg_value(seed, i);
        }
        ST_TEST_MPI(MPI_Send(msg, MSG_DOUBLES, MPI_DOUBLE, 0, round, MPI_COMM_WORLD));
        allreduce_checked("send before allreduce", round, count, 0);
    } else {
        allreduce_checked("bystander", round, count, 0);
    }
}

int main(int argc, char **argv)
{
    /* small: the latency path; large (2 MB): the pipelined path */
    static const int counts[2] = {1000, 1 << 19};
    double *msg;
    int round;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world_size);
    if (world_size < 2) {
        MPI_Finalize();
        return 77;
    }
    CHECK(strata_active());
    signal(SIGALRM, watchdog);
    alarm(WATCHDOG_S);
    if (argc > 1 && strcmp(argv[1], "--tail") == 0) {
        int n = (argc > 2) ? atoi(argv[2]) : 300;

        if (!HAVE_UCX) {   /* no path between (virtual) nodes */
            MPI_Finalize();
            return 77;
        }

        for (round = 0; round < n; round++) {
            allreduce_checked("tail", round, 6000, round % 2);
            ST_TEST_MPI(MPI_Barrier(MPI_COMM_WORLD));
        }
        alarm(0);
        return st_test_finish("test_progress");
    }

    msg = malloc(2 * MSG_DOUBLES * sizeof(double));
    if (msg == NULL) {
        MPI_Abort(MPI_COMM_WORLD, 1);
        return 1;
    }
    /* round 0 also sets the plan up while the transfer is pending */
    for (round = 0; round < ROUNDS; round++) {
        round_isend(round, counts[round % 2], msg);
        round_isend_strided(round, counts[(round + 1) % 2], msg);
        round_irecv(round, counts[(round + 1) % 2], msg);
    }
    free(msg);
    alarm(0);
    return st_test_finish("test_progress");
}
