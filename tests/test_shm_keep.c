/*
 * A node segment kept for the next communicator over the same ranks (coll/st_shm.c,
 * st_shm_reuse): run by tests/shm_keep.sh on 3 ranks, with STRATA_LOG_LEVEL=debug,
 * which counts the segments made and kept in the log. Every MPI_Allreduce here is
 * checked against a reference computed in the test, on every path of the node
 * algorithm (tiny, small, large over several pipeline steps), so a kept segment
 * whose flags still held the last communicator's step numbers (its waits satisfied
 * before the data is there) gives wrong sums or hangs.
 *
 * 1. --cycles communicators made from MPI_COMM_WORLD (dup and split by turns), each
 *    with its calls, then freed: the first makes a segment, the others take it.
 * 2. Rank 1 keeps the last one while the others free theirs and make the next: the
 *    segment is not on every rank then, so a new one is made (and the log says so);
 *    rank 1 frees its old communicator after using the new one.
 * 3. Two communicators alive at once, freed in the opposite order, then two made
 *    again: each takes one of the two kept.
 * 4. With --halves (4 ranks, STRATA_SHM_SIZE=240K: tests/shm_keep.sh): a communicator
 *    of all, freed, then the two halves at once. There the segment of 4 ranks has
 *    the bytes of one of 2 (5 areas of 24K, 3 of 40K): each half's ranks all held
 *    it, and both halves took it, reducing in one segment at the same time (wrong
 *    sums on every rank).
 *
 * Usage: test_shm_keep [--cycles N] [--halves]
 */
#include "config.h"

#include "st_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LARGE (3 * 1024 * 1024 / (int)sizeof(int))   /* ints: 3 MB, several steps */

static int t_rank, t_size;

/* Element i of rank r's input on call @a call */
static int t_input(int call, int r, int i)
{
    return (int)(((unsigned)call * 2654435761u) ^ ((unsigned)r * 40503u) ^ (unsigned)i) % 1000;
}

/* Sums of @a count ints on @a comm (its ranks are world ranks @a members), checked. */
static void t_check_sum(MPI_Comm comm, const int *members, int count, int call)
{
    int *in = malloc((size_t)count * sizeof(int)), *out = malloc((size_t)count * sizeof(int));
    int n, me, i, r, want, bad = 0, first = -1, got = 0, first_want = 0;

    MPI_Comm_size(comm, &n);
    MPI_Comm_rank(comm, &me);
    if (!CHECK(in != NULL && out != NULL)) {
        free(in);
        free(out);
        return;
    }
    for (i = 0; i < count; i++) {
        in[i] = t_input(call, members[me], i);
    }
    CHECK(MPI_Allreduce(in, out, count, MPI_INT, MPI_SUM, comm) == MPI_SUCCESS);
    for (i = 0; i < count; i++) {
        for (want = 0, r = 0; r < n; r++) {
            want += t_input(call, members[r], i);
        }
        if (out[i] != want && bad++ == 0) {
            first      = i;
            got        = out[i];
            first_want = want;
        }
    }
    CHECKF(bad == 0, "call %d, %d ints: %d wrong, the first element %d: %d, want %d", call,
           count, bad, first, got, first_want);
    free(in);
    free(out);
}

/* One tiny, one small and one large sum on @a comm: the node algorithm's paths. */
static void t_calls(MPI_Comm comm, const int *members, int call)
{
    t_check_sum(comm, members, 3, call);
    t_check_sum(comm, members, 1000, call + 1);
    t_check_sum(comm, members, LARGE, call + 2);
}

static void t_world_members(int *members)
{
    int i;

    for (i = 0; i < t_size; i++) {
        members[i] = i;
    }
}

int main(int argc, char **argv)
{
    int cycles = 6, i, members[64], call = 0, halves = 0;
    MPI_Comm c, a, b;

    for (i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--cycles") == 0 && i + 1 < argc) {
            cycles = atoi(argv[++i]);
        } else if (strcmp(argv[i], "--halves") == 0) {
            halves = 1;
        }
    }
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &t_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &t_size);
    if (t_size > 64 || t_size < 3) {
        if (t_rank == 0) {
            printf("test_shm_keep: needs 3 to 64 ranks\n");
        }
        MPI_Finalize();
        return 1;
    }
    t_world_members(members);
    if (halves) {
        /* 4: every rank holds the segment of all; each half must make its own */
        MPI_Comm_dup(MPI_COMM_WORLD, &c);
        t_calls(c, members, call += 3);
        MPI_Comm_free(&c);
        MPI_Comm_split(MPI_COMM_WORLD, t_rank < t_size / 2, t_rank, &c);
        for (i = 0; i < t_size / 2; i++) {
            members[i] = (t_rank < t_size / 2) ? i : t_size / 2 + i;
        }
        for (i = 0; i < cycles; i++) {
            t_calls(c, members, call += 3);
        }
        MPI_Comm_free(&c);
        return st_test_finish("test_shm_keep");
    }

    /* 1 */
    for (i = 0; i < cycles; i++) {
        if (i % 2) {
            MPI_Comm_split(MPI_COMM_WORLD, 0, t_rank, &c);
        } else {
            MPI_Comm_dup(MPI_COMM_WORLD, &c);
        }
        t_calls(c, members, call += 3);
        MPI_Comm_free(&c);
    }

    /* 2: rank 1 holds a while b is set up over the same ranks */
    MPI_Comm_dup(MPI_COMM_WORLD, &a);
    t_calls(a, members, call += 3);
    if (t_rank != 1) {
        MPI_Comm_free(&a);
    }
    MPI_Comm_dup(MPI_COMM_WORLD, &b);
    t_calls(b, members, call += 3);
    if (t_rank == 1) {
        MPI_Comm_free(&a);
    }
    MPI_Comm_free(&b);

    /* 3: two alive, freed in the other order, two made again */
    MPI_Comm_dup(MPI_COMM_WORLD, &a);
    MPI_Comm_dup(MPI_COMM_WORLD, &b);
    t_calls(a, members, call += 3);
    t_calls(b, members, call += 3);
    MPI_Comm_free(&b);
    MPI_Comm_free(&a);
    MPI_Comm_dup(MPI_COMM_WORLD, &a);
    MPI_Comm_dup(MPI_COMM_WORLD, &b);
    t_calls(b, members, call += 3);
    t_calls(a, members, call += 3);
    t_calls(b, members, call += 3);
    MPI_Comm_free(&a);
    MPI_Comm_free(&b);
    return st_test_finish("test_shm_keep");
}
