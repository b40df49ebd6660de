/*
 * The UCX transport of the inter-node level (coll/st_ucx.c), on any number of
 * ranks of one machine (every rank plays a node).
 *
 * 1. A lane over MPI_COMM_WORLD: st_ucx_allreduce in place for double sum and
 *    prod, int32 sum and max, int64 prod, double max; counts 0, 1, 7, around
 *    STRATA_UCX_RDB_MAX (recursive doubling up to it, the ring above) and 1M.
 *    Every rank computes the reference itself from the inputs of all ranks (a
 *    pure function of rank and index): integers must match exactly, doubles
 *    within rounding; the result must be bitwise identical on every rank, and
 *    the same when the call is repeated.
 * 2. Two groups (even and odd world ranks) each with a lane over their
 *    sub-communicator, used interleaved with the world lane: three lanes, two
 *    collectives running at once, hundreds of iterations (tags reused).
 * 3. Lanes created and destroyed in a loop (lane ids reused).
 *    Kept lanes (st_ucx_lane_keep): taken again by the next lane over the same
 *    ranks, and only then: not by a lane over other ranks, not when one rank's
 *    copy failed meanwhile, not when one rank still holds it; the oldest goes when
 *    a third is kept; sums checked on every lane taken again.
 *    A kept lane damaged on one rank (its endpoint to rank 0): on the lanes after
 *    it (its id again among them) rank 1's copy still waits for rank 0's goodbye,
 *    not one left over from the damaged lane. A lane a member broke while the
 *    others held it to keep (the notice through MPI only): no rank waits for its
 *    goodbye.
 * 4. With MPI_THREAD_MULTIPLE: two threads per rank, each with its own lane.
 * 5. Teardown: once every lane is destroyed no endpoint stays open.
 * One-sided failure: rank 1's endpoint to rank 0 fails (as if a link went), so
 *    its wait fails; rank 0's wait for rank 1 must fail too, not hang.
 * --dead: the last rank shuts UCX down (as if it died); the others' next
 *    allreduce on a lane with it must fail (ST_ERR_IO), not hang, and so must
 *    the one after; before them, rank 0's wait for a message rank 1 never sends
 *    must fail too (the lane lost a member, though not the one waited on). Run
 *    with UCX_TLS=tcp,self: only a connection tells a peer
 *    is gone (a shared-memory transport keeps no connection to lose).
 * --bench [--sizes=8,65536,...]: times st_ucx_allreduce against PMPI_Allreduce
 *    (no checks).
 * --quick: smaller counts and fewer iterations (to run under valgrind).
 * --churn=N: section 3 alone, with N lanes (a stress of lane set-up and teardown:
 *    every lane connects each pair of ranks at once, from both sides).
 *
 * Exits 77 (skip) when Strata is built without UCX or UCX does not start.
 */
#include "config.h"

#include "st_config.h"
#include "st_test.h"
#include "st_ucx.h"

#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define WATCHDOG_S   240

static int world_rank, world_size;
/* sizes of the sections (--quick: smaller, for valgrind) */
static size_t big_count    = 1 << 20;
static int    loop_iters   = 300;
static int    churn_lanes  = 20;
static int    thread_iters = 150;
static int    churn_only;

/* the section running, for the watchdog's message (a hang in CI says where) */
static const char *volatile section = "set-up";

static void watchdog(int sig)
{
    static const char msg[] = "test_ucx: no progress for a long time: deadlock? in ";
    const char *s = section;
    ssize_t rc = write(STDOUT_FILENO, msg, sizeof(msg) - 1);

    rc = write(STDOUT_FILENO, s, strlen(s));
    rc = write(STDOUT_FILENO, "\n", 1);
    (void)rc;
    (void)sig;
    _exit(3);
}

/* ---- inputs and references ---- */

typedef enum { K_DOUBLE_SUM, K_INT32_SUM, K_INT32_MAX, K_DOUBLE_MAX, K_INT64_PROD,
               K_DOUBLE_PROD, K_LAST } kind_t;

static const struct {
    const char *name;
    st_type_t   type;
    st_op_t     op;
    size_t      size;
} kinds[K_LAST] = {
    [K_DOUBLE_SUM]  = {"double sum", ST_TYPE_DOUBLE, ST_OP_SUM, sizeof(double)},
    [K_INT32_SUM]   = {"int32 sum", ST_TYPE_INT32, ST_OP_SUM, sizeof(int32_t)},
    [K_INT32_MAX]   = {"int32 max", ST_TYPE_INT32, ST_OP_MAX, sizeof(int32_t)},
    [K_DOUBLE_MAX]  = {"double max", ST_TYPE_DOUBLE, ST_OP_MAX, sizeof(double)},
    [K_INT64_PROD]  = {"int64 prod", ST_TYPE_INT64, ST_OP_PROD, sizeof(int64_t)},
    [K_DOUBLE_PROD] = {"double prod", ST_TYPE_DOUBLE, ST_OP_PROD, sizeof(double)},
};

/* Element @a i of rank @a rank's input, as bits of the kind's type. */
static void input(kind_t k, uint64_t seed, int rank, size_t i, void *dst)
{
    uint64_t x = st_test_rand(seed, rank, i);
    double d;
    int32_t i32;
    int64_t i64;

    switch (k) {
    case K_DOUBLE_SUM:
    case K_DOUBLE_MAX:
        /* 53 random bits, signed, magnitudes spread over 2^-10 ... 2^10 */
        d = ldexp((double)(x >> 11), -53 + (int)(x % 21) - 10) * ((x & 1024) ? -1.0 : 1.0);
        memcpy(dst, &d, sizeof(d));
        break;
    case K_DOUBLE_PROD:
        d = 1.0 + ((double)(x % 20001) - 10000.0) * 1e-6;
        memcpy(dst, &d, sizeof(d));
        break;
    case K_INT32_SUM:
    case K_INT32_MAX:
        i32 = (int32_t)(uint32_t)x;
        memcpy(dst, &i32, sizeof(i32));
        break;
    default:
        i64 = (int64_t)(x | 1);
        memcpy(dst, &i64, sizeof(i64));
        break;
    }
}

/* Check @a out (the result on this rank) against the inputs of all @a size ranks. */
static long check_result(kind_t k, uint64_t seed, int size, const void *out, size_t count)
{
    long bad = 0;
    size_t i;
    int r;

    for (i = 0; i < count; i++) {
        union { double d; int32_t i32; int64_t i64; } v, acc;
        double abs_sum = 0, got;
        uint64_t p64 = 1;
        uint32_t s32 = 0;
        int ok = 1;

        for (r = 0; r < size; r++) {
            input(k, seed, r, i, &v);
            switch (k) {
            case K_DOUBLE_SUM:
                acc.d    = (r == 0) ? v.d : acc.d + v.d;
                abs_sum += fabs(v.d);
                break;
            case K_DOUBLE_PROD:
                acc.d    = (r == 0) ? v.d : acc.d * v.d;
                break;
            case K_DOUBLE_MAX:
                acc.d    = (r == 0 || v.d > acc.d) ? v.d : acc.d;
                break;
            case K_INT32_SUM:
                s32     += (uint32_t)v.i32;
                break;
            case K_INT32_MAX:
                acc.i32  = (r == 0 || v.i32 > acc.i32) ? v.i32 : acc.i32;
                break;
            default:
                p64     *= (uint64_t)v.i64;
                break;
            }
        }
        switch (k) {
        case K_DOUBLE_SUM:
            memcpy(&got, (const double*)out + i, sizeof(got));
            ok = fabs(got - acc.d) <= 1e-13 * abs_sum;
            break;
        case K_DOUBLE_PROD:
            memcpy(&got, (const double*)out + i, sizeof(got));
            ok = fabs(got - acc.d) <= 1e-13 * fabs(acc.d);
            break;
        case K_DOUBLE_MAX:
            ok = !memcmp((const double*)out + i, &acc.d, sizeof(double));
            break;
        case K_INT32_SUM:
            ok = ((const uint32_t*)out)[i] == s32;
            break;
        case K_INT32_MAX:
            ok = ((const int32_t*)out)[i] == acc.i32;
            break;
        default:
            ok = ((const uint64_t*)out)[i] == p64;
            break;
        }
        if (!ok && bad++ < 3) {
            CHECKF(0, "%s count %zu: element %zu wrong", kinds[k].name, count, i);
        }
    }
    return bad;
}

static void *fill(kind_t k, uint64_t seed, int rank, size_t count)
{
    char *buf = malloc(count * kinds[k].size + 1);
    size_t i;

    if (buf == NULL) {
        st_test_fail(__FILE__, __LINE__, "out of memory");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (i = 0; i < count; i++) {
        input(k, seed, rank, i, buf + i * kinds[k].size);
    }
    return buf;
}

/* One checked allreduce of @a count elements of kind @a k on @a lane over @a comm. */
static void one_case(st_ucx_lane_t *lane, MPI_Comm comm, kind_t k, size_t count, uint64_t seed,
                     int repeat)
{
    int rank, size;
    size_t bytes = count * kinds[k].size;
    char *buf, *again;
    st_status_t status;

    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    buf    = fill(k, seed, rank, count);
    status = st_ucx_allreduce(lane, buf, count, kinds[k].type, kinds[k].op, comm);
    if (!CHECKF(status == ST_OK, "%s count %zu: %s (%s)", kinds[k].name, count,
                strata_status_string(status), st_ucx_why())) {
        free(buf);
        return;
    }
    CHECKF(check_result(k, seed, size, buf, count) == 0, "%s count %zu on %d ranks",
           kinds[k].name, count, size);
    CHECKF(st_test_same_everywhere(comm, buf, bytes), "%s count %zu: ranks disagree",
           kinds[k].name, count);
    if (repeat) {
        again  = fill(k, seed, rank, count);
        status = st_ucx_allreduce(lane, again, count, kinds[k].type, kinds[k].op,
                                  MPI_COMM_NULL);
        CHECKF(status == ST_OK && !memcmp(buf, again, bytes),
               "%s count %zu: not the same bits the second time", kinds[k].name, count);
        free(again);
    }
    free(buf);
}

/* ---- 1. the world lane ---- */

static void test_cases(st_ucx_lane_t *lane)
{
    size_t counts[16], t, c;
    int n = 0, i, j, dup;
    kind_t k;

    for (k = 0; k < K_LAST; k++) {
        t = st_config.ucx_rdb_max / kinds[k].size;   /* elements on recursive doubling */
        n = 0;
        counts[n++] = 0;
        counts[n++] = 1;
        counts[n++] = 7;
        if (t > 1 && t - 1 <= big_count) {
            counts[n++] = t - 1;
        }
        if (t > 0 && t <= big_count) {
            counts[n++] = t;
            counts[n++] = t + 1;
        }
        if (t <= big_count / 8) {
            counts[n++] = 5 * t + 3;
        }
        counts[n++] = big_count;
        for (i = 0; i < n; i++) {
            c   = counts[i];
            dup = 0;
            for (j = 0; j < i; j++) {
                dup = dup || (counts[j] == c);
            }
            if (!dup) {
                one_case(lane, MPI_COMM_WORLD, k, c, 100 + (uint64_t)k * 31 + c, c < big_count);
            }
        }
    }
}

/* ---- 2. groups and the world lane, interleaved ---- */

static void test_groups(st_ucx_lane_t *world)
{
    st_ucx_lane_t *lane = NULL;
    MPI_Comm group;
    st_status_t status;
    size_t count;
    int it;

    ST_TEST_MPI(MPI_Comm_split(MPI_COMM_WORLD, world_rank % 2, world_rank, &group));
    status = st_ucx_lane_create(group, &lane);
    if (!CHECKF(status == ST_OK, "group lane: %s (%s)", strata_status_string(status),
                st_ucx_why())) {
        MPI_Comm_free(&group);
        return;
    }
    for (it = 0; it < loop_iters; it++) {
        count = (it % 25 == 0) ? 100000 + (size_t)it : 1 + (size_t)(it % 13) * 97;
        one_case(lane, group, (it % 2) ? K_INT32_SUM : K_DOUBLE_SUM, count, 5000 + (uint64_t)it,
                 0);
        one_case(world, MPI_COMM_WORLD, (it % 3) ? K_INT64_PROD : K_INT32_MAX, count / 2 + 1,
                 9000 + (uint64_t)it, 0);
    }
    st_ucx_lane_destroy(lane);
    MPI_Comm_free(&group);
}

/* ---- 3. churn ---- */

static void test_churn(void)
{
    st_ucx_lane_t *lane;
    st_status_t status;
    MPI_Comm dup;
    int i;

    for (i = 0; i < churn_lanes; i++) {
        ST_TEST_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
        status = st_ucx_lane_create(dup, &lane);
        if (CHECKF(status == ST_OK, "lane %d: %s (%s)", i, strata_status_string(status),
                   st_ucx_why())) {
            CHECK(st_ucx_lane_rank(lane) == world_rank && st_ucx_lane_size(lane) == world_size);
            one_case(lane, dup, K_INT32_SUM, 1 + (size_t)(i % 20) * 1000, 700 + (uint64_t)i, 0);
            st_ucx_lane_destroy(lane);
        }
        MPI_Comm_free(&dup);
    }
}

/* ---- 3b. kept lanes ---- */

/* A lane over @a comm with two sums checked on it (short and ring), and the lowest
 * and highest number of communicators it served over the ranks (@a uses). */
static st_ucx_lane_t *keep_lane(MPI_Comm comm, uint64_t seed, unsigned uses[2])
{
    st_ucx_lane_t *lane = NULL;
    st_status_t status = st_ucx_lane_create(comm, &lane);
    unsigned u;

    uses[0] = uses[1] = 0;
    if (!CHECKF(status == ST_OK, "kept lanes: %s (%s)", strata_status_string(status),
                st_ucx_why())) {
        return NULL;
    }
    one_case(lane, comm, K_INT32_SUM, 7, seed, 0);
    one_case(lane, comm, K_DOUBLE_SUM, 100000, seed + 1, 0);
    u = st_ucx_lane_uses(lane);
    PMPI_Allreduce(&u, &uses[0], 1, MPI_UNSIGNED, MPI_MIN, comm);
    PMPI_Allreduce(&u, &uses[1], 1, MPI_UNSIGNED, MPI_MAX, comm);
    return lane;
}

#define CHECK_USES(_u, _lo, _hi, _what) \
    CHECKF((_u)[0] == (_lo) && (_u)[1] == (_hi), "%s: the lane served %u to %u " \
           "communicators, expected %u to %u", (_what), (_u)[0], (_u)[1], (_lo), (_hi))

static void test_keep(void)
{
    st_ucx_lane_t *a, *b, *g, *x[3];
    MPI_Comm c, c2, group, cx[3];
    unsigned u[2];
    int i;

    /* kept, then taken by the next lane over the same ranks */
    ST_TEST_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    a = keep_lane(c, 100, u);
    CHECK_USES(u, 1u, 1u, "a new lane");
    st_ucx_lane_keep(a);
    MPI_Comm_free(&c);
    ST_TEST_MPI(MPI_Comm_split(MPI_COMM_WORLD, 0, world_rank, &c));
    b = keep_lane(c, 110, u);
    CHECK_USES(u, 2u, 2u, "a lane kept over the same ranks");
    /* not over the same ranks: a group's lane is its own */
    ST_TEST_MPI(MPI_Comm_split(MPI_COMM_WORLD, world_rank % 2, world_rank, &group));
    g = keep_lane(group, 120, u);
    CHECK_USES(u, 1u, 1u, "a lane over other ranks than the one kept");
    st_ucx_lane_destroy(g);
    MPI_Comm_free(&group);
    st_ucx_lane_keep(b);
    MPI_Comm_free(&c);
    if (world_size < 2) {
        return;
    }
    /* failed on one rank while kept (rank 1's endpoint to rank 0): taken by none
     * (b is still this process's: a whole lane kept stays until a third is kept, or
     * a lane over its ranks is made; a test of the library's insides) */
    if (world_rank == 1 && b != NULL) {
        st_ucx_lane_fail(b, 0);
    }
    ST_TEST_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    a = keep_lane(c, 130, u);
    CHECK_USES(u, 1u, 1u, "a lane kept, failed on rank 1 since");
    /* still held by rank 0: the others' copy is not taken */
    if (world_rank != 0) {
        st_ucx_lane_keep(a);
    }
    ST_TEST_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &c2));
    b = keep_lane(c2, 140, u);
    CHECK_USES(u, 1u, 1u, "a lane kept where rank 0 still holds it");
    if (world_rank == 0) {
        st_ucx_lane_keep(a);
    }
    MPI_Comm_free(&c);
    st_ucx_lane_keep(b);
    MPI_Comm_free(&c2);
    /* three kept: the first kept goes, so of three lanes made again the last is new
     * (the first takes the last kept, the second the one before; rank 0's extra
     * copy of a, taken by none, goes on the way) */
    for (i = 0; i < 3; i++) {
        ST_TEST_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &cx[i]));
        x[i] = keep_lane(cx[i], 150 + 2 * (uint64_t)i, u);
    }
    for (i = 0; i < 3; i++) {
        st_ucx_lane_keep(x[i]);
        MPI_Comm_free(&cx[i]);
    }
    for (i = 0; i < 3; i++) {
        ST_TEST_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &cx[i]));
        x[i] = keep_lane(cx[i], 160 + 2 * (uint64_t)i, u);
        if (i < 2) {
            CHECKF(u[0] >= 2 && u[0] == u[1], "kept lane %d of 3: served %u to %u "
                   "communicators, expected the same number, 2 or more", i, u[0], u[1]);
        } else {
            CHECK_USES(u, 1u, 1u, "the third of three lanes kept (two are kept at most)");
        }
    }
    for (i = 0; i < 3; i++) {
        st_ucx_lane_keep(x[i]);   /* (st_ucx_quiesce in section 5 ends them) */
        MPI_Comm_free(&cx[i]);
    }
}

/* ---- 3c. a kept lane damaged on one rank ---- */

/*
 * Rank 1's copy of a kept lane loses its endpoint to rank 0 (as if the link went)
 * while kept, so the next lane over the ranks makes a new one and every copy of the
 * damaged lane goes. Then on each of the next lanes (the damaged one's id comes
 * back among them) the ranks but 0 destroy theirs first: rank 1's must stay open
 * until rank 0 says goodbye, not close on a goodbye left over from the damaged lane
 * (its peer, on an endpoint that looks healthy, would see it fail mid-use).
 */
static void test_keep_damaged(void)
{
    st_ucx_lane_t *l;
    MPI_Comm c;
    unsigned u[2];
    int i, n0, n;

    if (world_size < 2) {
        return;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    st_ucx_quiesce(20.0);   /* (every rank: the lanes kept go, their goodbyes meet) */
    MPI_Barrier(MPI_COMM_WORLD);
    n0 = st_ucx_quiesce(0);
    ST_TEST_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    l = keep_lane(c, 200, u);
    st_ucx_lane_keep(l);
    MPI_Comm_free(&c);
    if (world_rank == 1 && l != NULL) {
        st_ucx_lane_fail(l, 0);   /* (kept: held by every rank, so still there) */
    }
    for (i = 0; i < 4; i++) {
        ST_TEST_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &c));
        l = keep_lane(c, 210 + 2 * (uint64_t)i, u);
        if (i == 0) {
            CHECK_USES(u, 1u, 1u, "the lane after one damaged while kept");
        }
        if (world_rank != 0) {
            st_ucx_lane_destroy(l);
            n = st_ucx_quiesce(0.5);
            CHECKF(world_rank != 1 || n > n0, "lane %d after the damaged one: rank 1's copy "
                   "closed before rank 0 said goodbye (%d endpoints open, %d before)", i, n,
                   n0);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        if (world_rank == 0) {
            st_ucx_lane_destroy(l);
        }
        MPI_Comm_free(&c);
        MPI_Barrier(MPI_COMM_WORLD);
        st_ucx_quiesce(20.0);
        MPI_Barrier(MPI_COMM_WORLD);
    }
}

/* Receive @a bytes at @a buf from lane rank @a peer as message @a msg, and wait. */
static st_status_t recv_wait(st_ucx_lane_t *lane, int peer, unsigned msg, void *buf,
                             size_t bytes);

/*
 * A lane a member broke while the others hold it to keep: rank 1's endpoint to rank
 * 0 fails, so its wait breaks the lane, and its abort notice reaches rank 0 through
 * MPI only. Rank 1 sends no goodbye (a broken lane says none), so rank 0's copy,
 * not kept (a notice came), must not wait for one: within seconds no lane is left
 * closing anywhere (it stayed until st_ucx_finalize, which waited 10 s for it).
 */
static void test_keep_broken(void)
{
    st_ucx_lane_t *l;
    st_status_t status;
    MPI_Comm c;
    unsigned u[2];
    double v[2];
    int n0, n, i, flag;

    if (world_size < 2) {
        return;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    st_ucx_quiesce(20.0);
    MPI_Barrier(MPI_COMM_WORLD);
    n0 = st_ucx_quiesce(0);
    ST_TEST_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    l = keep_lane(c, 300, u);
    if (world_rank == 1 && l != NULL) {
        st_ucx_lane_fail(l, 0);
        status = recv_wait(l, 0, 9, v, sizeof(v));
        CHECKF(status == ST_ERR_IO, "a wait on a damaged lane: %s, expected an I/O error",
               strata_status_string(status));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    for (i = 0; i < 100; i++) {   /* (the notice through MPI arrives meanwhile) */
        MPI_Iprobe(MPI_ANY_SOURCE, 12345, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
        usleep(1000);
    }
    st_ucx_lane_keep(l);
    MPI_Comm_free(&c);
    MPI_Barrier(MPI_COMM_WORLD);
    n = st_ucx_quiesce(5.0);
    CHECKF(n == n0, "a lane a member broke while the others kept it: still closing on "
           "rank %d after 5 s (%d endpoints open, %d before)", world_rank, n, n0);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* ---- 4. threads ---- */

typedef struct {
    MPI_Comm       comm;
    st_ucx_lane_t *lane;
    int            index;
} thread_arg_t;

static void *thread_main(void *p)
{
    thread_arg_t *arg = p;
    size_t count;
    int it;

    for (it = 0; it < thread_iters; it++) {
        count = (it % 20 == 0) ? 50000 : 1 + (size_t)((it * 37 + arg->index * 11) % 500);
        one_case(arg->lane, arg->comm, (it + arg->index) % 2 ? K_INT32_SUM : K_DOUBLE_SUM, count,
                 30000 + (uint64_t)arg->index * 1000 + (uint64_t)it, 0);
    }
    return NULL;
}

static void test_threads(void)
{
    thread_arg_t args[2];
    pthread_t tid[2];
    st_status_t status;
    int i;

    for (i = 0; i < 2; i++) {
        args[i].index = i;
        args[i].lane  = NULL;
        ST_TEST_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &args[i].comm));
        status = st_ucx_lane_create(args[i].comm, &args[i].lane);
        CHECKF(status == ST_OK, "thread lane %d: %s (%s)", i, strata_status_string(status),
               st_ucx_why());
    }
    if (args[0].lane != NULL && args[1].lane != NULL) {
        for (i = 0; i < 2; i++) {
            CHECK(pthread_create(&tid[i], NULL, thread_main, &args[i]) == 0);
        }
        for (i = 0; i < 2; i++) {
            pthread_join(tid[i], NULL);
        }
    }
    for (i = 0; i < 2; i++) {
        st_ucx_lane_destroy(args[i].lane);
        MPI_Comm_free(&args[i].comm);
    }
}

/* Receive @a bytes at @a buf from lane rank @a peer as message @a msg, and wait. */
static st_status_t recv_wait(st_ucx_lane_t *lane, int peer, unsigned msg, void *buf,
                             size_t bytes)
{
    st_ucx_req_t req;
    st_status_t status = st_ucx_irecv(lane, peer, msg, buf, bytes, &req);

    return (status == ST_OK) ? st_ucx_wait(lane, &req, 1, MPI_COMM_NULL) : status;
}

/* ---- --dead ---- */

static void test_dead(void)
{
    st_ucx_lane_t *lane;
    st_status_t status;
    int32_t v[64];
    int i;

    status = st_ucx_lane_create(MPI_COMM_WORLD, &lane);
    if (!CHECKF(status == ST_OK, "dead lane: %s (%s)", strata_status_string(status),
                st_ucx_why())) {
        return;
    }
    one_case(lane, MPI_COMM_WORLD, K_INT32_SUM, 64, 77, 0);
    if (world_rank == world_size - 1) {
        st_ucx_finalize();   /* as if this process died: its connections close */
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (world_rank == 0 && world_size >= 3) {
        /* a wait on a live member (who sends nothing) fails too: the lane lost
         * another member, whose failed endpoint this wait does not use */
        alarm(60);
        status = recv_wait(lane, 1, 9, v, sizeof(v));
        alarm(WATCHDOG_S);
        CHECKF(status == ST_ERR_IO,
               "a wait on a live member of a lane that lost another: %s, expected an I/O "
               "error", strata_status_string(status));
    }
    if (world_rank != world_size - 1) {
        for (i = 0; i < 64; i++) {
            v[i] = i;
        }
        status = st_ucx_allreduce(lane, v, 64, ST_TYPE_INT32, ST_OP_SUM, MPI_COMM_NULL);
        CHECKF(status == ST_ERR_IO, "allreduce with a dead peer: %s, expected an I/O error",
               strata_status_string(status));
        status = st_ucx_allreduce(lane, v, 64, ST_TYPE_INT32, ST_OP_SUM, MPI_COMM_NULL);
        CHECKF(status == ST_ERR_IO, "allreduce on a broken lane: %s, expected an I/O error",
               strata_status_string(status));
    }
    st_ucx_lane_destroy(lane);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* A message shorter than its receive (members disagreeing on a size): the receive
 * fails, not folds a partial buffer; the lane breaks on both sides. Twice: the
 * message arriving after the receive is posted, and before (Open MPI's progress,
 * MPI_Iprobe here, drives Strata's worker between calls: the receive then completes
 * at once, and its length must still be checked). */
static void test_short_one(int early)
{
    st_ucx_lane_t *lane;
    st_ucx_req_t req;
    st_status_t status;
    double v[2] = {1, 2};

    if (world_size < 2) {
        return;
    }
    status = st_ucx_lane_create(MPI_COMM_WORLD, &lane);
    if (!CHECKF(status == ST_OK, "short-message lane: %s (%s)", strata_status_string(status),
                st_ucx_why())) {
        return;
    }
    if (world_rank == 0) {
        status = st_ucx_isend(lane, 1, 5, v, sizeof(double), &req);
        if (status == ST_OK) {
            st_ucx_wait(lane, &req, 1, MPI_COMM_NULL);
        }
    }
    if (early) {   /* the message is in rank 1's worker before its receive */
        int i, flag;

        MPI_Barrier(MPI_COMM_WORLD);
        for (i = 0; i < 2000; i++) {
            MPI_Iprobe(MPI_ANY_SOURCE, 12345, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
            if (i % 100 == 99) {
                usleep(1000);
            }
        }
    }
    if (world_rank == 1) {
        status = recv_wait(lane, 0, 5, v, sizeof(v));
        CHECKF(status == ST_ERR_IO, "8 bytes into a 16-byte receive: %s, expected an I/O error",
               strata_status_string(status));
        CHECKF(strstr(st_ucx_why(), "8 bytes") != NULL && strstr(st_ucx_why(), "16") != NULL,
               "the reason names the lengths: %s", st_ucx_why());
    }
    st_ucx_lane_destroy(lane);
    MPI_Barrier(MPI_COMM_WORLD);
}

static void test_short(void)
{
    test_short_one(0);
    test_short_one(1);
}

/* A failure one side sees and the other does not (a link gone under a connection):
 * rank 1's endpoint to rank 0 fails, rank 1's wait fails and breaks the lane; rank
 * 0, waiting for a message from rank 1 on an endpoint that looks healthy, must
 * hear of it (through MPI: rank 1's notice through UCX has no way to it). */
static void test_one_sided(void)
{
    st_ucx_lane_t *lane;
    st_status_t status;
    double v[2];

    if (world_size < 2) {
        return;
    }
    status = st_ucx_lane_create(MPI_COMM_WORLD, &lane);
    if (!CHECKF(status == ST_OK, "one-sided lane: %s (%s)", strata_status_string(status),
                st_ucx_why())) {
        return;
    }
    alarm(60);
    if (world_rank <= 1) {
        if (world_rank == 1) {
            st_ucx_lane_fail(lane, 0);
        }
        status = recv_wait(lane, 1 - world_rank, 3, v, sizeof(v));
        CHECKF(status == ST_ERR_IO, "rank %d: a wait on a lane whose endpoint failed on one "
               "side: %s, expected an I/O error", world_rank, strata_status_string(status));
    }
    alarm(WATCHDOG_S);
    st_ucx_lane_destroy(lane);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* ---- --bench ---- */

static size_t bench_sizes[32] = {8, 64 * 1024, 16 * 1024 * 1024};
static size_t bench_nsizes = 3;

static void bench(st_ucx_lane_t *lane)
{
    const size_t *sizes = bench_sizes;
    double t0, t, t_ucx, t_mpi, *buf;
    size_t s, count;
    int it, iters, rep;

    for (s = 0; s < bench_nsizes; s++) {
        count = ST_MAX(sizes[s] / sizeof(double), 1);
        iters = (sizes[s] <= 65536) ? 500 : (sizes[s] <= 1048576) ? 50 : 5;
        buf   = calloc(count, sizeof(double));
        t_ucx = t_mpi = 1e30;
        /* the best of 7 rounds, the two interleaved: the machine is shared */
        for (rep = 0; rep < 7; rep++) {
            MPI_Barrier(MPI_COMM_WORLD);
            t0 = MPI_Wtime();
            for (it = 0; it < iters; it++) {
                st_ucx_allreduce(lane, buf, count, ST_TYPE_DOUBLE, ST_OP_SUM, MPI_COMM_WORLD);
            }
            t = (MPI_Wtime() - t0) / iters;
            PMPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
            t_ucx = ST_MIN(t_ucx, t);
            MPI_Barrier(MPI_COMM_WORLD);
            t0 = MPI_Wtime();
            for (it = 0; it < iters; it++) {
                PMPI_Allreduce(MPI_IN_PLACE, buf, (int)count, MPI_DOUBLE, MPI_SUM,
                               MPI_COMM_WORLD);
            }
            t = (MPI_Wtime() - t0) / iters;
            PMPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
            t_mpi = ST_MIN(t_mpi, t);
        }
        if (world_rank == 0) {
            printf("bench: %d ranks %9zu B: st_ucx_allreduce %10.1f us (%7.1f MB/s)   "
                   "PMPI_Allreduce %10.1f us (%7.1f MB/s)\n", world_size, sizes[s], t_ucx * 1e6,
                   sizes[s] / t_ucx / 1e6, t_mpi * 1e6, sizes[s] / t_mpi / 1e6);
        }
        free(buf);
    }
}

int main(int argc, char **argv)
{
    st_ucx_lane_t *lane = NULL;
    st_status_t status;
    int provided, dead = 0, do_bench = 0, i, ok;

    for (i = 1; i < argc; i++) {
        dead     = dead || !strcmp(argv[i], "--dead");
        do_bench = do_bench || !strcmp(argv[i], "--bench");
        if (!strncmp(argv[i], "--sizes=", 8)) {   /* bytes, comma-separated */
            char *p = argv[i] + 8;
            for (bench_nsizes = 0; *p && bench_nsizes < ST_ARRAY_SIZE(bench_sizes); ) {
                bench_sizes[bench_nsizes++] = strtoull(p, &p, 10);
                p += (*p == ',');
            }
        }
        if (!strncmp(argv[i], "--churn=", 8)) {
            churn_only  = 1;
            churn_lanes = atoi(argv[i] + 8);
        }
        if (!strcmp(argv[i], "--quick")) {
            big_count    = 20000;
            loop_iters   = 30;
            churn_lanes  = 4;
            thread_iters = 20;
        }
    }
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world_size);
    signal(SIGALRM, watchdog);
    alarm(WATCHDOG_S);

    status = st_ucx_lane_create(MPI_COMM_WORLD, &lane);
    ok     = (status == ST_OK);
    if (!ok) {
        if (world_rank == 0) {
            printf("test_ucx: SKIP: no UCX lane: %s (%s)\n", strata_status_string(status),
                   st_ucx_why());
        }
        MPI_Finalize();
        return 77;
    }
    CHECK(st_ucx_lane_rank(lane) == world_rank && st_ucx_lane_size(lane) == world_size);

    if (do_bench) {
        bench(lane);
    } else if (dead) {
        section = "--dead";
        test_dead();
    } else if (churn_only) {
        section = "3. churn";
        test_churn();
    } else {
        section = "1. cases";
        test_cases(lane);
        section = "2. groups";
        test_groups(lane);
        section = "3. churn";
        test_churn();
        section = "3b. kept lanes";
        test_keep();
        section = "3c. a kept lane damaged";
        test_keep_damaged();
        test_keep_broken();
        section = "short messages";
        test_short();
        section = "one-sided failure";
        test_one_sided();
        if (provided == MPI_THREAD_MULTIPLE) {
            section = "4. threads";
            test_threads();
        }
    }
    section = "5. teardown";
    st_ucx_lane_destroy(lane);
    if (!dead) {
        /* every lane destroyed: once the peers said goodbye, no endpoint is left */
        MPI_Barrier(MPI_COMM_WORLD);
        CHECKF(st_ucx_quiesce(20.0) == 0, "endpoints still open after every lane was destroyed");
    }
    alarm(0);
    return st_test_finish("test_ucx");
}
