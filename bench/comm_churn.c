/*
 * What a communicator costs a program that makes one, reduces on it and frees it:
 * N times MPI_Comm_dup of MPI_COMM_WORLD, two 8-byte MPI_Allreduce, MPI_Comm_free.
 * Rank 0 prints the time per communicator, of its first MPI_Allreduce (where
 * Strata sets its plan up) and of the second (bench/RESULTS.md).
 *
 *   mpicc -O2 bench/comm_churn.c -o comm_churn
 *   mpirun -np 2 -x LD_PRELOAD=.libs/libstrata.so ./comm_churn 1000
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    int n = (argc > 1) ? atoi(argv[1]) : 200, i, rank;
    double x = 1, y, t0, first = 0, second = 0, a, b;
    MPI_Comm c;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    for (i = 0; i < n; i++) {
        MPI_Comm_dup(MPI_COMM_WORLD, &c);
        a = MPI_Wtime();
        MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, c);
        b = MPI_Wtime();
        MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, c);
        first += b - a;
        second += MPI_Wtime() - b;
        MPI_Comm_free(&c);
    }
    if (rank == 0) {
        printf("%d comms: %.3f ms each, first allreduce %.3f ms, second %.3f ms\n", n,
               1e3 * (MPI_Wtime() - t0) / n, 1e3 * first / n, 1e3 * second / n);
    }
    MPI_Finalize();
    return 0;
}
