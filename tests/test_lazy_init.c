/*
 * MPI initialized behind Strata's back: PMPI_Init, as a language binding that does
 * not call MPI_Init would, so Strata starts at the first MPI_Allreduce without
 * having made the ranks' knobs alike. Sums of doubles at sizes around the latency
 * threshold and the pipeline's chunks, on MPI_COMM_WORLD and on a duplicate, each
 * checked against the exact answer (small integers: every order of summation gives
 * the same bits). Prints, on rank 0, "fast F config C": the calls of
 * MPI_COMM_WORLD that took Strata's path and those that went to PMPI_Allreduce
 * because the ranks' settings differ (tests/config_agree.sh runs it both ways).
 * --split: the same on a communicator of all ranks but the last, which never calls
 * MPI_Allreduce (so Strata is set up on some ranks only when MPI_Finalize comes);
 * prints "ok" or "FAILED" alone.
 */
#include "strata.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int check(MPI_Comm comm, int rank, int size)
{
    static const int counts[] = {1, 7, 1000, 2047, 2048, 2049, 4096, 8191, 8193, 65536,
                                 131073, 262144};
    int k, bad = 0;

    for (k = 0; k < (int)(sizeof(counts) / sizeof(counts[0])); k++) {
        int n = counts[k], i;
        double *s = malloc((size_t)n * sizeof(double));
        double *r = malloc((size_t)n * sizeof(double));

        if (s == NULL || r == NULL) {
            fprintf(stdout, "rank %d: out of memory\n", rank);
            exit(1);
        }
        for (i = 0; i < n; i++) {
            s[i] = (double)(rank + 1) * (double)(i % 1009);
        }
        if (MPI_Allreduce(s, r, n, MPI_DOUBLE, MPI_SUM, comm) != MPI_SUCCESS) {
            bad++;
        }
        for (i = 0; i < n; i++) {
            if (r[i] != (double)size * (size + 1) / 2 * (double)(i % 1009)) {
                printf("rank %d: count %d: element %d is %g\n", rank, n, i, r[i]);
                bad++;
                break;
            }
        }
        free(s);
        free(r);
    }
    return bad;
}

int main(int argc, char **argv)
{
    strata_comm_stats_t st;
    MPI_Comm dup, part;
    int rank, size, bad = 0;

    PMPI_Init(&argc, &argv);
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc > 1 && strcmp(argv[1], "--split") == 0) {
        PMPI_Comm_split(MPI_COMM_WORLD, rank < size - 1 ? 0 : MPI_UNDEFINED, rank, &part);
        if (part != MPI_COMM_NULL) {
            bad = check(part, rank, size - 1);
            PMPI_Comm_free(&part);
        }
        PMPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        if (rank == 0) {
            printf("%s\n", bad ? "FAILED" : "ok");
        }
        MPI_Finalize();
        return bad ? 1 : 0;
    }
    bad = check(MPI_COMM_WORLD, rank, size);
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    bad += check(dup, rank, size);
    MPI_Comm_free(&dup);
    if (strata_comm_stats(MPI_COMM_WORLD, &st) != STRATA_OK && strata_active()) {
        bad++;   /* (a rank with STRATA_ENABLE=n has none to give) */
    }
    PMPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("fast %llu config %llu\n", (unsigned long long)st.fast_calls,
               (unsigned long long)st.fallback_calls[STRATA_FALLBACK_CONFIG]);
        printf("%s\n", bad ? "FAILED" : "ok");
    }
    MPI_Finalize();
    return bad ? 1 : 0;
}
