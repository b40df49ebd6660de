/*
 * The instructions one small MPI_Allreduce costs (bench/call_cost/run.sh counts
 * them under callgrind): 20 uncounted calls (the plan's setup), then N counted
 * ones of one shape, a double sum of BYTES bytes (BYTES "64ip": in place). Rank 0
 * comes CG_DELAY_US microseconds after the others to every call, so that it
 * finds their contributions there and does not wait: its count is the call's work.
 *
 *   mpicc -O2 bench/call_cost/call_cost.c -o call_cost
 *   mpirun -np 2 valgrind --tool=callgrind --toggle-collect=MPI_Allreduce ./call_cost 8 200
 */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <valgrind/callgrind.h>

int main(int argc, char **argv)
{
    static double s[512], r[512];
    const char *delay = getenv("CG_DELAY_US");
    int n, count, inplace, i, rank;

    MPI_Init(&argc, &argv);
    count   = (argc > 1) ? atoi(argv[1]) / 8 : 1;
    inplace = (argc > 1) && strstr(argv[1], "ip") != NULL;
    n       = (argc > 2) ? atoi(argv[2]) : 200;
    if (count < 1 || count > 512) {
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    for (i = 0; i < 512; i++) {
        s[i] = r[i] = i;
    }
    for (i = 0; i < 20; i++) {
        MPI_Allreduce(inplace ? MPI_IN_PLACE : s, r, count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Barrier(MPI_COMM_WORLD);
    CALLGRIND_ZERO_STATS;
    for (i = 0; i < n; i++) {
        if (rank == 0) {
            usleep((delay != NULL) ? atoi(delay) : 20000);
        }
        MPI_Allreduce(inplace ? MPI_IN_PLACE : s, r, count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
