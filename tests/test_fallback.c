/*
 * Everything Strata must hand to PMPI_Allreduce, and the communicator life cycle.
 *
 * - User-defined ops (commutative, non-commutative on a derived type, on a
 *   vector type), Fortran predefined types Strata does not map, an
 *   intercommunicator, one-rank communicators: the result equals what
 *   PMPI_Allreduce gives for the same call (and the test's own reference), and
 *   strata_comm_stats counts exactly one fallback, under the right reason, and no
 *   fast-path call.
 * - Erroneous calls under MPI_ERRORS_RETURN (op not defined on the type, derived
 *   types with predefined ops, negative count, aliased buffers of 2 or more elements,
 *   null handles, a zeroed communicator handle):
 *   MPI_Allreduce fails with the error class PMPI_Allreduce reports, without
 *   hanging, and the communicator stays usable. Count 0 succeeds.
 * - Several communicators alive at once and freed in various orders; freed ones
 *   replaced by new ones (whose statistics must start at zero: no stale plan).
 * - strata_comm_layout after MPI_Allreduce calls that all fell back: its first call
 *   collective, the later ones local.
 */
#include "config.h"

#include "st_test.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int world_rank, world_size;

/* The reason Strata must give: intercomms and one-rank comms are told first. */
static strata_fallback_t want_reason(MPI_Comm comm, strata_fallback_t reason)
{
    int inter, size;

    MPI_Comm_test_inter(comm, &inter);
    MPI_Comm_size(comm, &size);
    if (inter) {
        return STRATA_FALLBACK_INTERCOMM;
    }
    return (size == 1) ? STRATA_FALLBACK_COMM_SIZE : reason;
}

/*
 * Check the statistics of one MPI_Allreduce on @a comm: exactly one fallback,
 * for @a reason (any reason when @a reason is STRATA_FALLBACK_LAST), no fast call.
 */
static void check_one_fallback(const char *what, const strata_comm_stats_t *before,
                               const strata_comm_stats_t *after, strata_fallback_t reason)
{
    uint64_t b = st_test_fallback_total(before), a = st_test_fallback_total(after);

    CHECKF(after->fast_calls == before->fast_calls, "%s: fast calls %llu -> %llu", what,
           (unsigned long long)before->fast_calls, (unsigned long long)after->fast_calls);
    CHECKF(a == b + 1, "%s: fallbacks %llu -> %llu", what, (unsigned long long)b,
           (unsigned long long)a);
    if (reason != STRATA_FALLBACK_LAST) {
        CHECKF(after->fallback_calls[reason] == before->fallback_calls[reason] + 1,
               "%s: fallbacks for %s %llu -> %llu", what, strata_fallback_string(reason),
               (unsigned long long)before->fallback_calls[reason],
               (unsigned long long)after->fallback_calls[reason]);
    }
}

#define GUARD 64

/*
 * One valid call that Strata must hand over: MPI_Allreduce and PMPI_Allreduce on
 * the same arguments, receive buffers of @a rbytes (+ a guard) starting as
 * @a init (the input when @a sbuf is MPI_IN_PLACE). Both results must be
 * identical, byte for byte, guard and gaps included, and equal @a expect (over
 * @a ebytes bytes compared through @a ecmp, or memcmp when NULL) when given.
 */
static void expect_same_as_pmpi(const char *what, MPI_Comm comm, const void *sbuf,
                                const void *init, size_t rbytes, int count, MPI_Datatype type,
                                MPI_Op op, strata_fallback_t reason, const void *expect)
{
    strata_comm_stats_t before, mid, after;
    unsigned char *r1 = malloc(rbytes + GUARD), *r2 = malloc(rbytes + GUARD);
    int rc1, rc2;

    if (r1 == NULL || r2 == NULL) {
        st_test_fail(__FILE__, __LINE__, "out of memory");
        goto out;
    }
    memset(r1, 0x6b, rbytes + GUARD);
    if (init != NULL) {
        memcpy(r1, init, rbytes);
    }
    memcpy(r2, r1, rbytes + GUARD);

    before = st_test_stats(comm);
    rc1    = MPI_Allreduce(sbuf, r1, count, type, op, comm);
    mid    = st_test_stats(comm);
    rc2    = PMPI_Allreduce(sbuf, r2, count, type, op, comm);
    after  = st_test_stats(comm);

    CHECKF(rc1 == MPI_SUCCESS && rc2 == MPI_SUCCESS, "%s: MPI_Allreduce %d, PMPI %d", what,
           rc1, rc2);
    CHECKF(memcmp(r1, r2, rbytes + GUARD) == 0, "%s: result differs from PMPI_Allreduce's",
           what);
    if (expect != NULL) {
        CHECKF(memcmp(r1, expect, rbytes) == 0, "%s: result differs from the reference", what);
    }
    check_one_fallback(what, &before, &mid, want_reason(comm, reason));
    CHECKF(memcmp(&mid, &after, sizeof(mid)) == 0, "%s: PMPI_Allreduce was counted", what);
out:
    free(r1);
    free(r2);
}

/*
 * One erroneous call: MPI_Allreduce must fail with PMPI_Allreduce's error class
 * (the comm has MPI_ERRORS_RETURN) and count one fallback for @a reason.
 */
static void expect_error(const char *what, MPI_Comm comm, const void *sbuf, void *rbuf,
                         int count, MPI_Datatype type, MPI_Op op, strata_fallback_t reason)
{
    strata_comm_stats_t before, mid;
    int rc1, rc2, c1 = -1, c2 = -2;

    before = st_test_stats(comm);
    rc1    = MPI_Allreduce(sbuf, rbuf, count, type, op, comm);
    mid    = st_test_stats(comm);
    rc2    = PMPI_Allreduce(sbuf, rbuf, count, type, op, comm);
    MPI_Error_class(rc1, &c1);
    MPI_Error_class(rc2, &c2);

    CHECKF(rc1 != MPI_SUCCESS && rc2 != MPI_SUCCESS, "%s: MPI_Allreduce %d, PMPI %d", what,
           rc1, rc2);
    CHECKF(c1 == c2, "%s: error class %d, PMPI_Allreduce's %d", what, c1, c2);
    check_one_fallback(what, &before, &mid, reason == STRATA_FALLBACK_LAST
                       ? reason : want_reason(comm, reason));
}

/* ---- a valid fast-path call, used between the other checks ---- */

#define VALID_SEED 77

/* int SUM of @a count elements on @a comm, checked against the reference, counted
 * once as fast (two ranks or more) or as a one-rank fallback. */
static void check_valid(const char *what, MPI_Comm comm, int count, uint64_t seed)
{
    strata_comm_stats_t before, after;
    int *in = malloc((size_t)count * sizeof(int) + 1);
    int *out = malloc((size_t)count * sizeof(int) + 1);
    int rank, size, r, i, bad = 0, rc;
    uint32_t sum;

    if (in == NULL || out == NULL) {
        st_test_fail(__FILE__, __LINE__, "out of memory");
        goto out;
    }
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    for (i = 0; i < count; i++) {
        in[i] = (int)st_test_rand(seed, rank, (uint64_t)i);
    }
    before = st_test_stats(comm);
    rc     = MPI_Allreduce(in, out, count, MPI_INT, MPI_SUM, comm);
    after  = st_test_stats(comm);
    CHECKF(rc == MPI_SUCCESS, "%s: returned %d", what, rc);
    for (i = 0; i < count; i++) {
        sum = 0;
        for (r = 0; r < size; r++) {
            sum += (uint32_t)st_test_rand(seed, r, (uint64_t)i);
        }
        bad += (out[i] != (int)sum);
    }
    CHECKF(bad == 0, "%s: %d wrong elements of %d", what, bad, count);
    if (size >= 2) {
        CHECKF(after.fast_calls == before.fast_calls + 1 &&
               st_test_fallback_total(&after) == st_test_fallback_total(&before),
               "%s: not served by the fast path", what);
    } else {
        check_one_fallback(what, &before, &after, STRATA_FALLBACK_COMM_SIZE);
    }
    CHECKF(st_test_same_everywhere(comm, out, (size_t)count * sizeof(int)),
           "%s: ranks disagree", what);
out:
    free(in);
    free(out);
}

/* ---- user-defined ops ---- */

/* commutative: wrapping sum of unsigned 32-bit values */
static void op_wrap_sum(void *in, void *inout, int *len, MPI_Datatype *type)
{
    const uint32_t *a = (const uint32_t*)in;
    uint32_t *b = (uint32_t*)inout;
    int i;

    for (i = 0; i < *len; i++) {
        b[i] += a[i];
    }
}

/* non-commutative: 2x2 matrix product mod 2^32, inout = in x inout */
typedef struct { uint32_t m[4]; } mat_t;

static mat_t mat_mul(mat_t x, mat_t y)
{
    mat_t z;

    z.m[0] = x.m[0] * y.m[0] + x.m[1] * y.m[2];
    z.m[1] = x.m[0] * y.m[1] + x.m[1] * y.m[3];
    z.m[2] = x.m[2] * y.m[0] + x.m[3] * y.m[2];
    z.m[3] = x.m[2] * y.m[1] + x.m[3] * y.m[3];
    return z;
}

static void op_mat_mul(void *in, void *inout, int *len, MPI_Datatype *type)
{
    const mat_t *a = (const mat_t*)in;
    mat_t *b = (mat_t*)inout;
    int i;

    for (i = 0; i < *len; i++) {
        b[i] = mat_mul(a[i], b[i]);
    }
}

/* on the vector type below: 3 blocks of 2 ints, stride 3, extent 8 ints */
#define VEC_BLOCKS 3
#define VEC_LEN    2
#define VEC_STRIDE 3
#define VEC_EXTENT 8

static void op_vec_max(void *in, void *inout, int *len, MPI_Datatype *type)
{
    const int *a = (const int*)in;
    int *b = (int*)inout;
    int k, blk, j, x;

    for (k = 0; k < *len; k++) {
        for (blk = 0; blk < VEC_BLOCKS; blk++) {
            for (j = 0; j < VEC_LEN; j++) {
                x = k * VEC_EXTENT + blk * VEC_STRIDE + j;
                b[x] = a[x] > b[x] ? a[x] : b[x];
            }
        }
    }
}

static mat_t mat_input(uint64_t seed, int rank, int i)
{
    mat_t m;
    int k;

    for (k = 0; k < 4; k++) {
        m.m[k] = (uint32_t)st_test_rand(seed, rank, (uint64_t)(4 * i + k));
    }
    return m;
}

static void test_user_ops(MPI_Comm comm, const char *name)
{
    enum { N = 300 };
    MPI_Op wrap, mat, vmax;
    MPI_Datatype mat_type, vec_type;
    uint32_t u_in[N], u_exp[N];
    mat_t m_in[N], m_exp[N];
    int v_in[2 * VEC_EXTENT], v_exp[2 * VEC_EXTENT];
    int rank, size, r, i, k, blk, j, x, y;
    char what[128];

    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    ST_TEST_MPI(MPI_Op_create(op_wrap_sum, 1, &wrap));
    ST_TEST_MPI(MPI_Op_create(op_mat_mul, 0, &mat));
    ST_TEST_MPI(MPI_Op_create(op_vec_max, 1, &vmax));
    ST_TEST_MPI(MPI_Type_contiguous(4, MPI_UINT32_T, &mat_type));
    ST_TEST_MPI(MPI_Type_commit(&mat_type));
    ST_TEST_MPI(MPI_Type_vector(VEC_BLOCKS, VEC_LEN, VEC_STRIDE, MPI_INT, &vec_type));
    ST_TEST_MPI(MPI_Type_commit(&vec_type));

    /* commutative, predefined type */
    for (i = 0; i < N; i++) {
        u_in[i]  = (uint32_t)st_test_rand(11, rank, (uint64_t)i);
        u_exp[i] = 0;
        for (r = 0; r < size; r++) {
            u_exp[i] += (uint32_t)st_test_rand(11, r, (uint64_t)i);
        }
    }
    snprintf(what, sizeof(what), "%s: commutative user op", name);
    expect_same_as_pmpi(what, comm, u_in, NULL, sizeof(u_in), N, MPI_UINT32_T, wrap,
                        STRATA_FALLBACK_USER_OP, u_exp);
    snprintf(what, sizeof(what), "%s: commutative user op, in place", name);
    expect_same_as_pmpi(what, comm, MPI_IN_PLACE, u_in, sizeof(u_in), N, MPI_UINT32_T, wrap,
                        STRATA_FALLBACK_USER_OP, u_exp);

    /* non-commutative, derived type: the product in rank order */
    for (i = 0; i < N; i++) {
        m_in[i]  = mat_input(12, rank, i);
        m_exp[i] = mat_input(12, 0, i);
        for (r = 1; r < size; r++) {
            m_exp[i] = mat_mul(m_exp[i], mat_input(12, r, i));
        }
    }
    snprintf(what, sizeof(what), "%s: non-commutative user op, contiguous type", name);
    expect_same_as_pmpi(what, comm, m_in, NULL, sizeof(m_in), N, mat_type, mat,
                        STRATA_FALLBACK_USER_OP, m_exp);
    snprintf(what, sizeof(what), "%s: non-commutative user op, in place", name);
    expect_same_as_pmpi(what, comm, MPI_IN_PLACE, m_in, sizeof(m_in), N, mat_type, mat,
                        STRATA_FALLBACK_USER_OP, m_exp);

    /* vector type: the gaps keep what the receive buffer held */
    for (x = 0; x < 2 * VEC_EXTENT; x++) {
        v_in[x]  = (int)(st_test_rand(13, rank, (uint64_t)x) % 1000) - 500;
        v_exp[x] = 0x6b6b6b6b;
    }
    for (k = 0; k < 2; k++) {
        for (blk = 0; blk < VEC_BLOCKS; blk++) {
            for (j = 0; j < VEC_LEN; j++) {
                x = k * VEC_EXTENT + blk * VEC_STRIDE + j;
                v_exp[x] = INT32_MIN;
                for (r = 0; r < size; r++) {
                    y = (int)(st_test_rand(13, r, (uint64_t)x) % 1000) - 500;
                    v_exp[x] = y > v_exp[x] ? y : v_exp[x];
                }
            }
        }
    }
    snprintf(what, sizeof(what), "%s: user op, vector type", name);
    expect_same_as_pmpi(what, comm, v_in, NULL, sizeof(v_in), 2, vec_type, vmax,
                        STRATA_FALLBACK_USER_OP, v_exp);

    /* the comm still takes the fast path for predefined ops */
    snprintf(what, sizeof(what), "%s: predefined op after user ops", name);
    check_valid(what, comm, 500, 14);

    ST_TEST_MPI(MPI_Type_free(&vec_type));
    ST_TEST_MPI(MPI_Type_free(&mat_type));
    ST_TEST_MPI(MPI_Op_free(&vmax));
    ST_TEST_MPI(MPI_Op_free(&mat));
    ST_TEST_MPI(MPI_Op_free(&wrap));
}

/* ---- predefined types Strata does not map: valid calls ---- */

/*
 * Fortran's LOGICAL (its truth values are the compiler's) and the Fortran pair
 * types (index stored as the value's type). Strata maps INTEGER, REAL, DOUBLE
 * PRECISION and COMPLEX; these must still reach PMPI unchanged.
 */
static void test_unmapped_types(MPI_Comm comm, const char *name)
{
    enum { N = 200 };
    int size_log = 0, size_2dp = 0, size_2i = 0;
    int l_in[N], l_exp[N], p_in[2 * N], p_exp[2 * N];
    double d_in[2 * N], d_exp[2 * N];
    int rank, size, r, i, v, ix;
    char what[128];

    MPI_Type_size(MPI_LOGICAL, &size_log);
    MPI_Type_size(MPI_2DOUBLE_PRECISION, &size_2dp);
    MPI_Type_size(MPI_2INTEGER, &size_2i);
    if (size_log != (int)sizeof(int) || size_2dp != 2 * (int)sizeof(double) ||
        size_2i != 2 * (int)sizeof(int)) {
        return;  /* no Fortran types in this MPI build */
    }
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    for (i = 0; i < N; i++) {
        l_in[i] = (st_test_rand(21, rank, (uint64_t)i) % 5) == 0;
        d_in[2 * i]     = (double)(st_test_rand(22, rank, (uint64_t)i) % 4);
        d_in[2 * i + 1] = (double)((st_test_rand(22, rank, (uint64_t)i) >> 32) % 5);
        p_in[2 * i]     = (int)(st_test_rand(23, rank, (uint64_t)i) % 4);
        p_in[2 * i + 1] = (int)(st_test_rand(23, rank, (uint64_t)i) >> 32) % 5;
        l_exp[i] = 0;
        for (r = 0; r < size; r++) {
            l_exp[i] = l_exp[i] || (st_test_rand(21, r, (uint64_t)i) % 5) == 0;
            v  = (int)(st_test_rand(22, r, (uint64_t)i) % 4);
            ix = (int)((st_test_rand(22, r, (uint64_t)i) >> 32) % 5);
            if (r == 0 || v > d_exp[2 * i] || (v == d_exp[2 * i] && ix < d_exp[2 * i + 1])) {
                d_exp[2 * i]     = v;
                d_exp[2 * i + 1] = ix;
            }
            v  = (int)(st_test_rand(23, r, (uint64_t)i) % 4);
            ix = (int)(st_test_rand(23, r, (uint64_t)i) >> 32) % 5;
            if (r == 0 || v > p_exp[2 * i] || (v == p_exp[2 * i] && ix < p_exp[2 * i + 1])) {
                p_exp[2 * i]     = v;
                p_exp[2 * i + 1] = ix;
            }
        }
    }
    snprintf(what, sizeof(what), "%s: MPI_LOGICAL lor", name);
    expect_same_as_pmpi(what, comm, l_in, NULL, sizeof(l_in), N, MPI_LOGICAL, MPI_LOR,
                        STRATA_FALLBACK_DATATYPE, l_exp);
    snprintf(what, sizeof(what), "%s: MPI_2DOUBLE_PRECISION maxloc, in place", name);
    expect_same_as_pmpi(what, comm, MPI_IN_PLACE, d_in, sizeof(d_in), N, MPI_2DOUBLE_PRECISION,
                        MPI_MAXLOC, STRATA_FALLBACK_DATATYPE, d_exp);
    snprintf(what, sizeof(what), "%s: MPI_2INTEGER maxloc", name);
    expect_same_as_pmpi(what, comm, p_in, NULL, sizeof(p_in), N, MPI_2INTEGER, MPI_MAXLOC,
                        STRATA_FALLBACK_DATATYPE, p_exp);
}

/*
 * Pairs the MPI standard does not define (found by tests/fuzz/fuzz_coll.c): MPI_CHAR
 * has no ops; the multi-language types and the Fortran integers no logical ops. A
 * library may accept them (Open MPI 4.1 does), so Strata leaves them to it ("op-type"):
 * the result is the library's, or its error where it refuses the pair.
 */
static void test_nonstandard_pairs(MPI_Comm comm, const char *name)
{
    enum { N = 64 };
    static const struct {
        const char  *desc;
        MPI_Datatype type;
        MPI_Op       op;
    } pairs[] = {
        {"MPI_SUM on MPI_CHAR", MPI_CHAR, MPI_SUM},
        {"MPI_MAX on MPI_CHAR", MPI_CHAR, MPI_MAX},
        {"MPI_BOR on MPI_CHAR", MPI_CHAR, MPI_BOR},
        {"MPI_LAND on MPI_AINT", MPI_AINT, MPI_LAND},
        {"MPI_LOR on MPI_OFFSET", MPI_OFFSET, MPI_LOR},
        {"MPI_LXOR on MPI_COUNT", MPI_COUNT, MPI_LXOR},
        {"MPI_LAND on MPI_INTEGER8", MPI_INTEGER8, MPI_LAND},
        {"MPI_LOR on MPI_INTEGER", MPI_INTEGER, MPI_LOR},
    };
    long long in[N], out[N], a[2] = {1, 0}, b[2] = {1, 1};
    MPI_Errhandler world_eh, self_eh, comm_eh;
    char what[128];
    size_t p;
    int rank, i, size = 0, accepted;

    MPI_Comm_rank(comm, &rank);
    for (i = 0; i < N; i++) {
        in[i] = (long long)(st_test_rand(31, rank, (uint64_t)i) % 3);
    }
    /* errors returned, not fatal (Open MPI 4.1 reports some on MPI_COMM_WORLD, or on
     * MPI_COMM_SELF for MPI_Reduce_local, whatever the comm) */
    ST_TEST_MPI(MPI_Comm_get_errhandler(MPI_COMM_WORLD, &world_eh));
    ST_TEST_MPI(MPI_Comm_get_errhandler(MPI_COMM_SELF, &self_eh));
    ST_TEST_MPI(MPI_Comm_get_errhandler(comm, &comm_eh));
    ST_TEST_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    ST_TEST_MPI(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    ST_TEST_MPI(MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN));
    for (p = 0; p < sizeof(pairs) / sizeof(pairs[0]); p++) {
        if (pairs[p].type == MPI_DATATYPE_NULL ||
            MPI_Type_size(pairs[p].type, &size) != MPI_SUCCESS || size <= 0 ||
            size > (int)sizeof(long long)) {
            continue;
        }
        accepted = PMPI_Reduce_local(a, b, 1, pairs[p].type, pairs[p].op) == MPI_SUCCESS;
        snprintf(what, sizeof(what), "%s: %s", name, pairs[p].desc);
        if (accepted) {
            expect_same_as_pmpi(what, comm, in, NULL, (size_t)size * N, N, pairs[p].type,
                                pairs[p].op, STRATA_FALLBACK_OP_TYPE, NULL);
        } else {
            expect_error(what, comm, in, out, N, pairs[p].type, pairs[p].op,
                         STRATA_FALLBACK_OP_TYPE);
        }
    }
    ST_TEST_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, world_eh));
    ST_TEST_MPI(MPI_Comm_set_errhandler(MPI_COMM_SELF, self_eh));
    ST_TEST_MPI(MPI_Comm_set_errhandler(comm, comm_eh));
    ST_TEST_MPI(MPI_Errhandler_free(&world_eh));
    ST_TEST_MPI(MPI_Errhandler_free(&self_eh));
    ST_TEST_MPI(MPI_Errhandler_free(&comm_eh));
}

/* ---- an intercommunicator between the two halves of world ---- */

static void test_intercomm(void)
{
    enum { N = 257 };
    MPI_Comm local, inter;
    int lower = world_rank < world_size / 2;
    int in[N], expect[N], lrank, rsize, r, i;

    if (world_size < 2) {
        return;
    }
    ST_TEST_MPI(MPI_Comm_split(MPI_COMM_WORLD, lower, world_rank, &local));
    ST_TEST_MPI(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, lower ? world_size / 2 : 0, 99,
                                     &inter));
    MPI_Comm_rank(local, &lrank);
    MPI_Comm_remote_size(inter, &rsize);
    for (i = 0; i < N; i++) {
        /* each side receives the sum of the other side's inputs */
        in[i]     = (int)(st_test_rand(31 + (uint64_t)lower, lrank, (uint64_t)i) % 1000);
        expect[i] = 0;
        for (r = 0; r < rsize; r++) {
            expect[i] += (int)(st_test_rand(31 + (uint64_t)!lower, r, (uint64_t)i) % 1000);
        }
    }
    expect_same_as_pmpi("intercomm: int sum", inter, in, NULL, sizeof(in), N, MPI_INT,
                        MPI_SUM, STRATA_FALLBACK_INTERCOMM, expect);
    expect_same_as_pmpi("intercomm: int sum again", inter, in, NULL, sizeof(in), N, MPI_INT,
                        MPI_SUM, STRATA_FALLBACK_INTERCOMM, expect);
    ST_TEST_MPI(MPI_Comm_free(&inter));
    /* the halves themselves are ordinary communicators */
    check_valid("half of world, after the intercomm", local, 1000, 32);
    ST_TEST_MPI(MPI_Comm_free(&local));
}

/* ---- one-rank communicators ---- */

static void test_one_rank(void)
{
    enum { N = 100 };
    double in[N];
    MPI_Comm alone;
    int i;

    for (i = 0; i < N; i++) {
        in[i] = (double)i * 0.5 - 7;
    }
    expect_same_as_pmpi("MPI_COMM_SELF: double sum", MPI_COMM_SELF, in, NULL, sizeof(in), N,
                        MPI_DOUBLE, MPI_SUM, STRATA_FALLBACK_COMM_SIZE, in);
    expect_same_as_pmpi("MPI_COMM_SELF: double max, in place", MPI_COMM_SELF, MPI_IN_PLACE, in,
                        sizeof(in), N, MPI_DOUBLE, MPI_MAX, STRATA_FALLBACK_COMM_SIZE, in);

    ST_TEST_MPI(MPI_Comm_split(MPI_COMM_WORLD, world_rank, 0, &alone));
    expect_same_as_pmpi("split of one rank: double min", alone, in, NULL, sizeof(in), N,
                        MPI_DOUBLE, MPI_MIN, STRATA_FALLBACK_COMM_SIZE, in);
    ST_TEST_MPI(MPI_Comm_free(&alone));
}

/* ---- erroneous calls ---- */

static void test_errors(MPI_Comm comm, const char *name)
{
    double d[8] = {1, 2, 3, 4, 5, 6, 7, 8}, dr[8];
    int i[8] = {1, 2, 3, 4, 5, 6, 7, 8}, ir[8], before_rc;
    _Bool b[8] = {1, 0, 1, 1, 0, 0, 1, 0}, br[8];
    unsigned char pattern[sizeof(ir)];
    MPI_Datatype contig, dup;
    MPI_Errhandler world_eh;
    strata_comm_stats_t s0, s1;
    char what[128];

    /* Open MPI 4.1 reports some buffer errors on MPI_COMM_WORLD, whatever the comm */
    ST_TEST_MPI(MPI_Comm_get_errhandler(MPI_COMM_WORLD, &world_eh));
    ST_TEST_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    ST_TEST_MPI(MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN));
    ST_TEST_MPI(MPI_Type_contiguous(2, MPI_INT, &contig));
    ST_TEST_MPI(MPI_Type_commit(&contig));
    ST_TEST_MPI(MPI_Type_dup(MPI_INT, &dup));

#define ERR(_desc, _s, _r, _n, _t, _o, _reason) \
    do { \
        snprintf(what, sizeof(what), "%s: %s", name, _desc); \
        expect_error(what, comm, _s, _r, _n, _t, _o, _reason); \
    } while (0)
    ERR("MPI_LAND on MPI_DOUBLE", d, dr, 8, MPI_DOUBLE, MPI_LAND, STRATA_FALLBACK_OP_TYPE);
    ERR("MPI_MAXLOC on MPI_INT", i, ir, 8, MPI_INT, MPI_MAXLOC, STRATA_FALLBACK_OP_TYPE);
    ERR("MPI_SUM on MPI_C_BOOL", b, br, 8, MPI_C_BOOL, MPI_SUM, STRATA_FALLBACK_OP_TYPE);
    ERR("MPI_BXOR on MPI_FLOAT", d, dr, 4, MPI_FLOAT, MPI_BXOR, STRATA_FALLBACK_OP_TYPE);
    ERR("negative count", i, ir, -1, MPI_INT, MPI_SUM, STRATA_FALLBACK_ARGS);
    ERR("aliased buffers", i, i, 8, MPI_INT, MPI_SUM, STRATA_FALLBACK_ARGS);
    ERR("MPI_IN_PLACE as receive buffer", i, MPI_IN_PLACE, 8, MPI_INT, MPI_SUM,
        STRATA_FALLBACK_ARGS);
    ERR("MPI_SUM on a contiguous derived type", i, ir, 4, contig, MPI_SUM,
        STRATA_FALLBACK_DATATYPE);
    ERR("MPI_MAX on a dup of MPI_INT", i, ir, 8, dup, MPI_MAX, STRATA_FALLBACK_DATATYPE);
    ERR("MPI_DATATYPE_NULL", i, ir, 8, MPI_DATATYPE_NULL, MPI_SUM, STRATA_FALLBACK_LAST);
    ERR("MPI_OP_NULL", i, ir, 8, MPI_INT, MPI_OP_NULL, STRATA_FALLBACK_LAST);
#undef ERR

    /* count 0 succeeds and writes nothing, with real and with NULL buffers */
    memset(ir, 0x3c, sizeof(ir));
    memcpy(pattern, ir, sizeof(ir));
    s0 = st_test_stats(comm);
    before_rc = MPI_Allreduce(i, ir, 0, MPI_INT, MPI_SUM, comm);
    snprintf(what, sizeof(what), "%s: count 0", name);
    CHECKF(before_rc == MPI_SUCCESS, "%s: returned %d", what, before_rc);
    CHECKF(memcmp(ir, pattern, sizeof(ir)) == 0, "%s: receive buffer written", what);
    before_rc = MPI_Allreduce(MPI_IN_PLACE, ir, 0, MPI_INT, MPI_SUM, comm);
    CHECKF(before_rc == MPI_SUCCESS, "%s, in place: returned %d", what, before_rc);
    CHECKF(memcmp(ir, pattern, sizeof(ir)) == 0, "%s, in place: buffer written", what);
    before_rc = MPI_Allreduce(NULL, NULL, 0, MPI_DOUBLE, MPI_MAX, comm);
    CHECKF(before_rc == MPI_SUCCESS, "%s, NULL buffers: returned %d", what, before_rc);
    s1 = st_test_stats(comm);
    CHECKF(s1.fast_calls + st_test_fallback_total(&s1) ==
           s0.fast_calls + st_test_fallback_total(&s0) + 3, "%s: 3 calls not counted", what);
    /* valid calls (NULL buffers alias, but nothing moves): never an argument error */
    CHECKF(s1.fallback_calls[STRATA_FALLBACK_ARGS] == s0.fallback_calls[STRATA_FALLBACK_ARGS],
           "%s: counted as an argument error", what);

    /* the comm works after all that */
    snprintf(what, sizeof(what), "%s: valid call after the errors", name);
    check_valid(what, comm, 3000, 41);

    ST_TEST_MPI(MPI_Type_free(&dup));
    ST_TEST_MPI(MPI_Type_free(&contig));
    ST_TEST_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, world_eh));
    ST_TEST_MPI(MPI_Errhandler_free(&world_eh));
}

/*
 * The same buffer as send and receive buffer, one element: Open MPI 4.1 takes it
 * (its aliasing check is for count > 1) and reduces the buffer's value, in place.
 * So must Strata, on the path the other ranks take: a rank whose buffers alias
 * while the others' do not went to PMPI_Allreduce alone, the others to the fast
 * path, and the job hung. First every rank aliasing (the fast path, counted as
 * such), then only the even ranks (run only when the first held: it would hang).
 */
static void test_alias_one(MPI_Comm comm, const char *name)
{
    strata_comm_stats_t before, after;
    int rank, size, round, alias, rc, ok;
    double x, y, want;
    char what[128];

    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    want = (double)size * (size + 1) / 2;
    for (round = 0; round < 2; round++) {
        x      = rank + 1;
        y      = -1;
        alias  = (round == 0 || rank % 2 == 0);
        before = st_test_stats(comm);
        rc     = MPI_Allreduce(&x, alias ? &x : &y, 1, MPI_DOUBLE, MPI_SUM, comm);
        after  = st_test_stats(comm);
        snprintf(what, sizeof(what), "%s: one element, %s", name,
                 round == 0 ? "every rank's buffers aliased" : "aliased on even ranks");
        CHECKF(rc == MPI_SUCCESS, "%s: returned %d", what, rc);
        CHECKF((alias ? x : y) == want, "%s: %g, not %g", what, alias ? x : y, want);
        if (size >= 2) {
            CHECKF(after.fast_calls == before.fast_calls + 1 &&
                   st_test_fallback_total(&after) == st_test_fallback_total(&before),
                   "%s: not served by the fast path%s", what,
                   round == 0 ? " (ranks that alias and ranks that do not would take "
                                "different paths: not tried)" : "");
            ok = (after.fast_calls == before.fast_calls + 1);
            PMPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, comm);
            if (!ok) {
                break;
            }
        }
    }
}

/*
 * A communicator handle Open MPI finds invalid without a lookup (a zeroed MPI_Comm,
 * a field never set; a Fortran handle of a freed communicator converts to one):
 * MPI_Allreduce reports MPI_ERR_COMM on MPI_COMM_WORLD once, as Open MPI's does.
 * Strata's attribute lookup reported it first, as an error of MPI_Comm_get_attr: a
 * custom handler ran twice, and the fatal default named a function the program
 * never called. strata.h's functions refuse the handle, STRATA_ERR_INVALID_PARAM as
 * for MPI_COMM_NULL, without an MPI error (before: MPI_Comm_get_attr's, which aborted
 * the job under the default handler).
 */
static int zero_comm_calls, zero_comm_class;

static void zero_comm_handler(MPI_Comm *comm, int *code, ...)
{
    (void)comm;
    zero_comm_calls++;
    MPI_Error_class(*code, &zero_comm_class);
}

static void test_zero_comm(void)
{
    MPI_Errhandler world_eh, counting;
    MPI_Comm zero;
    int x = 1, y = 0, rc, cls = -1, pass;
    const char *what[2] = {"a zeroed communicator handle", "... and through PMPI"};

    memset(&zero, 0, sizeof(zero));
    ST_TEST_MPI(MPI_Comm_get_errhandler(MPI_COMM_WORLD, &world_eh));
    ST_TEST_MPI(MPI_Comm_create_errhandler(zero_comm_handler, &counting));
    ST_TEST_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, counting));
    for (pass = 0; pass < 2; pass++) {
        zero_comm_calls = 0;
        zero_comm_class = -1;
        rc = (pass == 0) ? MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, zero)
                         : PMPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, zero);
        MPI_Error_class(rc, &cls);
        CHECKF(cls == MPI_ERR_COMM, "%s: error class %d", what[pass], cls);
        CHECKF(zero_comm_calls == 1 && zero_comm_class == MPI_ERR_COMM,
               "%s: the handler ran %d times (last class %d)", what[pass], zero_comm_calls,
               zero_comm_class);
    }
    zero_comm_calls = 0;
    {
        strata_comm_stats_t st;
        strata_layout_t lay;
        MPI_Comm sub = MPI_COMM_WORLD;
        strata_status_t got[5];
        int k;

        got[0] = strata_comm_stats(zero, &st);
        got[1] = strata_comm_layout(zero, &lay, NULL);
        got[2] = strata_comm_level(zero, STRATA_LEVEL_NODE, &sub);
        got[3] = strata_comm_level(zero, STRATA_LEVEL_CLUSTER, &sub);
        got[4] = strata_comm_leaders(zero, STRATA_LEVEL_NODE, &sub);
        for (k = 0; k < 5; k++) {
            CHECKF(got[k] == STRATA_ERR_INVALID_PARAM, "a zeroed handle: strata.h call %d "
                   "returned %d (%s)", k, (int)got[k], strata_status_string(got[k]));
        }
        CHECKF(sub == MPI_COMM_WORLD, "a zeroed handle: strata_comm_level set its result");
        CHECKF(zero_comm_calls == 0, "a zeroed handle: strata.h's calls raised %d MPI errors "
               "(class %d)", zero_comm_calls, zero_comm_class);
    }
    ST_TEST_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, world_eh));
    ST_TEST_MPI(MPI_Errhandler_free(&world_eh));
    ST_TEST_MPI(MPI_Errhandler_free(&counting));
}

/* ---- communicator life cycle ---- */

/* A comm Strata never saw reports all-zero statistics. */
static void check_fresh(const char *what, MPI_Comm comm)
{
    strata_comm_stats_t s = st_test_stats(comm);

    CHECKF(s.fast_calls == 0 && st_test_fallback_total(&s) == 0 && s.fast_bytes == 0,
           "%s: new comm has statistics (fast %llu, fallbacks %llu): a stale plan?", what,
           (unsigned long long)s.fast_calls, (unsigned long long)st_test_fallback_total(&s));
}

static void test_lifecycle(void)
{
    MPI_Comm a, b, c, d, e, f;
    const int big = 300000;  /* 1.2 MB: the pipelined path */
    char what[64];
    int k;

    ST_TEST_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &a));
    ST_TEST_MPI(MPI_Comm_split(MPI_COMM_WORLD, world_rank % 2, world_rank, &b));
    ST_TEST_MPI(MPI_Comm_split(MPI_COMM_WORLD, 0, world_size - world_rank, &c));
    check_fresh("dup", a);
    check_fresh("split", b);
    check_fresh("reversed", c);

    check_valid("a: dup", a, 100, 51);
    /* a dup of a comm Strata knows does not inherit its plan */
    ST_TEST_MPI(MPI_Comm_dup(a, &d));
    check_fresh("dup of dup", d);
    check_valid("b: odd/even", b, 100, 52);
    check_valid("c: reversed", c, big, 53);
    check_valid("d: dup of dup", d, 5000, 54);

    ST_TEST_MPI(MPI_Comm_free(&b));
    check_valid("a after freeing b", a, 70, 55);
    check_valid("c after freeing b", c, 70, 56);
    check_valid("d after freeing b", d, 70, 57);
    check_valid("world after freeing b", MPI_COMM_WORLD, 70, 58);

    ST_TEST_MPI(MPI_Comm_free(&a));
    check_valid("d after freeing its parent", d, big, 59);
    check_valid("world after freeing a", MPI_COMM_WORLD, 70, 60);

    /* new comms of other shapes, likely on the freed handles */
    ST_TEST_MPI(MPI_Comm_split(MPI_COMM_WORLD, world_rank < world_size - 1, world_rank, &e));
    ST_TEST_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &b));
    check_fresh("e: new split", e);
    check_fresh("b: new dup", b);
    check_valid("e: new split", e, big, 61);
    check_valid("b: new dup", b, 1000, 62);

    ST_TEST_MPI(MPI_Comm_free(&c));
    ST_TEST_MPI(MPI_Comm_free(&e));
    check_valid("world after freeing c and e", MPI_COMM_WORLD, big, 63);
    ST_TEST_MPI(MPI_Comm_free(&d));
    check_valid("b after freeing d", b, 9, 64);
    ST_TEST_MPI(MPI_Comm_free(&b));
    check_valid("world after freeing everything", MPI_COMM_WORLD, 1000, 65);

    /* create, use, free, many times, alternating shapes: Open MPI hands out the
     * freed handle again, so a cache keyed by handle would return a stale plan */
    for (k = 0; k < 12; k++) {
        if (k % 3 == 0) {
            ST_TEST_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &f));
        } else if (k % 3 == 1) {
            ST_TEST_MPI(MPI_Comm_split(MPI_COMM_WORLD, world_rank % 2, -world_rank, &f));
        } else {
            ST_TEST_MPI(MPI_Comm_split(MPI_COMM_WORLD, world_rank < 2, world_rank, &f));
        }
        snprintf(what, sizeof(what), "cycle %d", k);
        check_fresh(what, f);
        check_valid(what, f, (k % 2) ? 333 : big, 70 + (uint64_t)k);
        check_valid(what, f, 17, 90 + (uint64_t)k);
        ST_TEST_MPI(MPI_Comm_free(&f));
        /* every other time, the next comm (likely on the same handle) comes right after */
        if (k % 2) {
            check_valid("world in the cycle", MPI_COMM_WORLD, 5, 110 + (uint64_t)k);
        }
    }

    /* one left alive: MPI_Finalize frees its plan */
    ST_TEST_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &f));
    check_valid("left for MPI_Finalize", f, 100, 130);
}

/*
 * A user's attribute delete callback may still use the communicator being freed.
 * Strata's own plan is gone by then (its keyval is older, so its callback runs
 * first): the call must go to PMPI, not build a new plan on a dying comm (that
 * leaked a segment and aborted the job at MPI_Finalize); the layout API must
 * refuse it for the same reason (it built a plan there too).
 */
static int delete_cb_calls, delete_cb_layouts;

static int user_delete_cb(MPI_Comm comm, int keyval, void *attr, void *extra)
{
    strata_layout_t layout;
    MPI_Comm level;
    long v = 1, sum = 0;
    int size;

    MPI_Comm_size(comm, &size);
    if (MPI_Allreduce(&v, &sum, 1, MPI_LONG, MPI_SUM, comm) != MPI_SUCCESS || sum != size) {
        return MPI_ERR_OTHER;
    }
    delete_cb_layouts += (strata_comm_layout(comm, &layout, NULL) == STRATA_OK);
    delete_cb_layouts += (strata_comm_level(comm, STRATA_LEVEL_NODE, &level) == STRATA_OK);
    delete_cb_calls++;
    return MPI_SUCCESS;
}

static int copy_cb_calls;

static int user_copy_cb(MPI_Comm comm, int keyval, void *extra, void *in, void *out, int *flag)
{
    copy_cb_calls++;
    *(void**)out = in;
    *flag        = 1;
    return MPI_SUCCESS;
}

/* Three dups of world with an attribute of a keyval with @a copy and the delete
 * callback above, each used and freed: the callback ran once each. */
static void delete_callback_rounds(MPI_Comm_copy_attr_function *copy, const char *what,
                                   uint64_t seed)
{
    MPI_Comm c;
    int k, keyval;

    delete_cb_calls = 0;
    ST_TEST_MPI(MPI_Comm_create_keyval(copy, user_delete_cb, &keyval, NULL));
    for (k = 0; k < 3; k++) {
        ST_TEST_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &c));
        ST_TEST_MPI(MPI_Comm_set_attr(c, keyval, NULL));
        check_valid(what, c, 1000, seed + (uint64_t)k);
        ST_TEST_MPI(MPI_Comm_free(&c));
    }
    CHECKF(delete_cb_calls == 3, "%s: user delete callback ran %d times, expected 3", what,
           delete_cb_calls);
    ST_TEST_MPI(MPI_Comm_free_keyval(&keyval));
}

static void test_delete_callback(void)
{
    strata_comm_stats_t st;

    delete_callback_rounds(MPI_COMM_NULL_COPY_FN, "comm with a user delete callback", 150);
    CHECKF(delete_cb_layouts == 0, "the layout API answered %d times on a dying comm",
           delete_cb_layouts);
    /* an attribute that dups copy: Strata's own communicator is not a dup of the
     * user's (their copy callback would run on it, and their delete callback, calling
     * MPI_Allreduce, built a plan on it as it was freed: MPI_Finalize aborted) */
    delete_callback_rounds(user_copy_cb, "comm with a copied attribute", 160);
    CHECKF(copy_cb_calls == 0, "the user's copy callback ran %d times (no dup of theirs)",
           copy_cb_calls);
    /* the stats of world still answer, and no plan was left on a freed handle */
    CHECK(strata_comm_stats(MPI_COMM_WORLD, &st) == STRATA_OK);
}

/* Nested frees: freeing A runs A's delete callback, which frees B, whose delete
 * callback calls MPI_Allreduce on A (still being freed). The inner free hid the
 * outer one: a plan was built on the dying A and left on its freed handle, and
 * MPI_Finalize aborted deleting it (helper-24's review). */
static MPI_Comm nested_a, nested_b;
static int nested_sums;

static int nested_delete_a(MPI_Comm comm, int keyval, void *val, void *extra)
{
    (void)comm, (void)keyval, (void)val, (void)extra;
    if (nested_b != MPI_COMM_NULL) {
        return MPI_Comm_free(&nested_b);
    }
    return MPI_SUCCESS;
}

static int nested_delete_b(MPI_Comm comm, int keyval, void *val, void *extra)
{
    long v = 1, sum = 0;

    (void)comm, (void)keyval, (void)val, (void)extra;
    if (MPI_Allreduce(&v, &sum, 1, MPI_LONG, MPI_SUM, nested_a) != MPI_SUCCESS ||
        sum != world_size) {
        return MPI_ERR_OTHER;
    }
    nested_sums++;
    return MPI_SUCCESS;
}

static void test_nested_free(void)
{
    strata_comm_stats_t st;
    int ka, kb, k;
    long v = 1, sum;

    ST_TEST_MPI(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, nested_delete_a, &ka, NULL));
    ST_TEST_MPI(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, nested_delete_b, &kb, NULL));
    for (k = 0; k < 20; k++) {
        ST_TEST_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &nested_a));
        ST_TEST_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &nested_b));
        ST_TEST_MPI(MPI_Comm_set_attr(nested_a, ka, NULL));   /* (before Strata's plan) */
        ST_TEST_MPI(MPI_Comm_set_attr(nested_b, kb, NULL));
        ST_TEST_MPI(MPI_Allreduce(&v, &sum, 1, MPI_LONG, MPI_SUM, nested_a));
        ST_TEST_MPI(MPI_Allreduce(&v, &sum, 1, MPI_LONG, MPI_SUM, nested_b));
        ST_TEST_MPI(MPI_Comm_free(&nested_a));
    }
    CHECKF(nested_sums == 20, "nested frees: %d of 20 sums on the dying communicator",
           nested_sums);
    ST_TEST_MPI(MPI_Comm_free_keyval(&ka));
    ST_TEST_MPI(MPI_Comm_free_keyval(&kb));
    /* no plan left behind on a freed handle: MPI_Finalize would delete it (abort) */
    CHECK(strata_comm_stats(MPI_COMM_WORLD, &st) == STRATA_OK);
}

/* The first MPI_Allreduce on a communicator with an MPI_Comm_idup of it pending
 * (legal MPI), @a rounds times: Strata's plan is set up inside that call, and a split
 * of the user's communicator there hung Open MPI 4.1 (4 ranks: 8 runs of 10;
 * helper-24's review); so did MPI_Comm_create of its group where the ranks' free
 * context ids differ (3 ranks: half the runs of 100 rounds; helper-42's), as the
 * communicators the first and last ranks make alone (where @a diverge) leave them, in a
 * fresh process (tests/fallback_idup-3.np3: --idup). The plan's communicator is now
 * made over a copy of MPI_COMM_WORLD (MPI_Comm_create_group): no id is chosen over the
 * user's communicator. */
static void test_idup_pending(int rounds, int diverge)
{
    MPI_Comm c, d, *ends = calloc((size_t)rounds, sizeof(*ends));
    MPI_Group world, two;
    MPI_Request req;
    long v, sum;
    int k, pair[2] = {0, world_size - 1};

    CHECK(ends != NULL);
    if (ends == NULL) {
        return;
    }
    ST_TEST_MPI(MPI_Comm_group(MPI_COMM_WORLD, &world));
    ST_TEST_MPI(MPI_Group_incl(world, world_size > 1 ? 2 : 1, pair, &two));
    for (k = 0; k < rounds; k++) {
        ends[k] = MPI_COMM_NULL;
        ST_TEST_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &c));
        if (diverge && world_size > 2 && (world_rank == 0 || world_rank == world_size - 1)) {
            ST_TEST_MPI(MPI_Comm_create_group(MPI_COMM_WORLD, two, k, &ends[k]));
        }
        ST_TEST_MPI(MPI_Comm_idup(c, &d, &req));
        v = world_rank + k;
        ST_TEST_MPI(MPI_Allreduce(&v, &sum, 1, MPI_LONG, MPI_SUM, c));
        CHECKF(sum == (long)world_size * (world_size - 1) / 2 + (long)k * world_size,
               "allreduce with an idup pending, round %d: %ld", k, sum);
        ST_TEST_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
        ST_TEST_MPI(MPI_Allreduce(&v, &sum, 1, MPI_LONG, MPI_SUM, d));
        CHECKF(sum == (long)world_size * (world_size - 1) / 2 + (long)k * world_size,
               "allreduce on the idup'ed communicator, round %d: %ld", k, sum);
        ST_TEST_MPI(MPI_Comm_free(&d));
        ST_TEST_MPI(MPI_Comm_free(&c));
    }
    for (k = 0; k < rounds; k++) {
        if (ends[k] != MPI_COMM_NULL) {
            ST_TEST_MPI(MPI_Comm_free(&ends[k]));
        }
    }
    free(ends);
    ST_TEST_MPI(MPI_Group_free(&two));
    ST_TEST_MPI(MPI_Group_free(&world));
}

/* strata_comm_layout's first call on a communicator whose MPI_Allreduce calls all fell
 * back before any plan was built (a user-defined op's): collective, as the header says
 * (every rank calls it; it builds the plan then), and the calls after it local: rank 0
 * alone asks again, and gets the same layout (before, the header called a call after
 * such an MPI_Allreduce local, and rank 0 alone waited in the plan's set-up forever). */
static void test_layout_after_fallbacks(void)
{
    strata_layout_t first, again;
    uint32_t v = (uint32_t)world_rank + 1, sum = 0;
    MPI_Comm comm, node = MPI_COMM_NULL, node2 = MPI_COMM_NULL;
    MPI_Op op;

    ST_TEST_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &comm));
    ST_TEST_MPI(MPI_Op_create(op_wrap_sum, 1, &op));
    ST_TEST_MPI(MPI_Allreduce(&v, &sum, 1, MPI_UINT32_T, op, comm));
    CHECKF(sum == (uint32_t)(world_size * (world_size + 1) / 2), "user op: sum %u", sum);
    CHECK(strata_comm_layout(comm, &first, NULL) == STRATA_OK);   /* (every rank) */
    CHECK(strata_comm_level(comm, STRATA_LEVEL_NODE, &node) == STRATA_OK);
    if (world_rank == 0) {   /* (local now) */
        CHECK(strata_comm_layout(comm, &again, NULL) == STRATA_OK);
        CHECKF(again.size == first.size && again.nnodes == first.nnodes &&
                       again.fast_path == first.fast_path,
               "a later layout: %d ranks, %d nodes, fast path %d (first: %d, %d, %d)",
               again.size, again.nnodes, again.fast_path, first.size, first.nnodes,
               first.fast_path);
        CHECK(strata_comm_level(comm, STRATA_LEVEL_NODE, &node2) == STRATA_OK &&
              node2 == node);
    }
    ST_TEST_MPI(MPI_Barrier(MPI_COMM_WORLD));
    ST_TEST_MPI(MPI_Op_free(&op));
    ST_TEST_MPI(MPI_Comm_free(&comm));
}

/* Run with STRATA_ENABLE=n (tests/fallback_disabled-2.np2): every call is Open MPI's,
 * and strata_comm_stats says so, zeros and STRATA_OK, between MPI_Init and
 * MPI_Finalize (before: STRATA_ERR_NOT_INITIALIZED, which the header promises only
 * outside them; helper-28). */
static void test_disabled(void)
{
    strata_comm_stats_t st;
    long v = world_rank + 1, sum = 0;

    CHECK(!strata_active());
    ST_TEST_MPI(MPI_Allreduce(&v, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD));
    CHECKF(sum == (long)world_size * (world_size + 1) / 2, "disabled: sum %ld", sum);
    memset(&st, 0xff, sizeof(st));
    CHECKF(strata_comm_stats(MPI_COMM_WORLD, &st) == STRATA_OK, "disabled: strata_comm_stats "
           "is not STRATA_OK");
    CHECKF(st.fast_calls == 0 && st.fast_bytes == 0, "disabled: %llu fast calls counted",
           (unsigned long long)st.fast_calls);
}

int main(int argc, char **argv)
{
    MPI_Comm dup;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world_size);
    if (argc == 2 && strcmp(argv[1], "--disabled") == 0) {   /* (STRATA_ENABLE=n) */
        test_disabled();
        return st_test_finish("test_fallback --disabled");
    }
    if (argc == 2 && strcmp(argv[1], "--idup") == 0) {   /* (a fresh process's ids) */
        test_idup_pending(600, 1);
        return st_test_finish("test_fallback --idup");
    }
    CHECK(strata_active());

    test_user_ops(MPI_COMM_WORLD, "world");
    ST_TEST_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    test_user_ops(dup, "dup");
    test_unmapped_types(MPI_COMM_WORLD, "world");
    test_unmapped_types(dup, "dup");
    test_nonstandard_pairs(MPI_COMM_WORLD, "world");
    test_nonstandard_pairs(dup, "dup");
    test_intercomm();
    test_one_rank();
    test_errors(dup, "dup");
    test_alias_one(dup, "dup");
    ST_TEST_MPI(MPI_Comm_free(&dup));
    test_errors(MPI_COMM_SELF, "self");
    test_zero_comm();
    test_lifecycle();
    test_delete_callback();
    test_nested_free();
    test_idup_pending(10, 0);
    test_layout_after_fallbacks();
    check_valid("world at the end", MPI_COMM_WORLD, 100000, 140);

    return st_test_finish("test_fallback");
}
