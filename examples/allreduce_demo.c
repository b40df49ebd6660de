/*
 * A plain MPI program, the kind Strata speeds up without recompiling: every
 * rank computes a "gradient" of a least-squares model on its own rows and the
 * ranks average it with MPI_Allreduce, step after step (data-parallel training
 * in 60 lines). Nothing here knows about Strata.
 *
 *   mpirun -np 2 ./allreduce_demo [dimension] [steps]
 *   strata-run mpirun -np 2 ./allreduce_demo 1000000 20
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

/* argv[@a i], where given, as an int > 0 into @a value; 0 on success, -1 after a message */
static int parse_arg(int argc, char **argv, int i, const char *what, int rank, int *value)
{
    char *end;
    long v;

    if (argc <= i) {
        return 0;
    }
    errno = 0;
    v     = strtol(argv[i], &end, 10);
    if (errno != 0 || end == argv[i] || *end != '\0' || v <= 0 || v > INT_MAX) {
        if (rank == 0) {
            fprintf(stderr, "allreduce_demo: invalid %s '%s' (expected an integer from 1 to "
                    "%d)\n", what, argv[i], INT_MAX);
        }
        return -1;
    }
    *value = (int)v;
    return 0;
}

int main(int argc, char **argv)
{
    int rank, size, d = 1 << 20, steps = 20, s, i;
    double *w, *g, t0, t_comm = 0, norm;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (parse_arg(argc, argv, 1, "dimension", rank, &d) != 0 ||
        parse_arg(argc, argv, 2, "steps", rank, &steps) != 0) {
        if (rank == 0) {
            fprintf(stderr, "usage: allreduce_demo [dimension > 0] [steps > 0]\n");
        }
        MPI_Finalize();
        return 2;
    }
    w = calloc((size_t)d, sizeof(double));
    g = malloc((size_t)d * sizeof(double));
    if (w == NULL || g == NULL) {
        fprintf(stderr, "allreduce_demo: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }

    /* each rank pulls w towards its own target (rank + 1); the average gradient
     * drives w to the mean target (size + 1) / 2 */
    for (s = 0; s < steps; s++) {
        for (i = 0; i < d; i++) {
            g[i] = w[i] - (rank + 1) * (1.0 + (i % 7) / 7.0);
        }
        t0 = MPI_Wtime();
        MPI_Allreduce(MPI_IN_PLACE, g, d, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        t_comm += MPI_Wtime() - t0;
        for (i = 0; i < d; i++) {
            w[i] -= 0.5 * g[i] / size;
        }
    }
    norm = 0;
    for (i = 0; i < d; i++) {
        double target = (size + 1) / 2.0 * (1.0 + (i % 7) / 7.0);
        norm += (w[i] - target) * (w[i] - target);
    }
    if (rank == 0) {
        printf("allreduce_demo: %d ranks, %d doubles, %d steps: distance to optimum %.3e, "
               "allreduce time %.3f s (%.2f GB/s per rank)\n",
               size, d, steps, sqrt(norm), t_comm, (double)d * 8 * steps / t_comm / 1e9);
    }
    free(w);
    free(g);
    MPI_Finalize();
    return 0;
}
