/*
 * libstrata loaded with dlopen(RTLD_LOCAL) into a program linked with Open MPI alone,
 * as Python's ctypes loads it to ask for a layout: the process's MPI_Allreduce stays
 * Open MPI's. strata_active() says 0, and strata_comm_layout() says so too: fast_path
 * 0, fallback_reason STRATA_FALLBACK_DISABLED (before: fast_path 1 while every call
 * went to Open MPI); strata_comm_stats() counts no fast call. Usage: test_dlopen
 * PATH-TO-libstrata.so (tests/dlopen-2.np2).
 */
#include "strata.h"

#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    strata_status_t (*layout)(MPI_Comm, strata_layout_t *, strata_place_t *);
    strata_status_t (*stats)(MPI_Comm, strata_comm_stats_t *);
    int (*active)(void);
    strata_comm_stats_t st;
    strata_layout_t lay;
    double x = 1, sum = 0;
    int rank, size, bad = 0, i;
    void *lib;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    lib = (argc == 2) ? dlopen(argv[1], RTLD_NOW | RTLD_LOCAL) : NULL;
    if (lib == NULL) {
        printf("rank %d: usage: test_dlopen LIBSTRATA (%s)\n", rank,
               argc == 2 ? dlerror() : "no path");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    *(void**)&active = dlsym(lib, "strata_active");
    *(void**)&layout = dlsym(lib, "strata_comm_layout");
    *(void**)&stats  = dlsym(lib, "strata_comm_stats");
    if (active == NULL || layout == NULL || stats == NULL) {
        printf("rank %d: libstrata's API not found\n", rank);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    if (active()) {
        printf("rank %d: strata_active() is 1 with Open MPI's MPI_Allreduce\n", rank);
        bad++;
    }
    if (layout(MPI_COMM_WORLD, &lay, NULL) != STRATA_OK) {
        printf("rank %d: strata_comm_layout failed\n", rank);
        bad++;
    } else if (lay.fast_path || lay.fallback_reason != STRATA_FALLBACK_DISABLED) {
        printf("rank %d: strata_comm_layout: fast_path %d, fallback_reason %d: no call "
               "takes Strata's path\n", rank, lay.fast_path, (int)lay.fallback_reason);
        bad++;
    }
    for (i = 0; i < 3; i++) {
        MPI_Allreduce(&x, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    }
    if (sum != size) {
        printf("rank %d: sum %g\n", rank, sum);
        bad++;
    }
    if (stats(MPI_COMM_WORLD, &st) != STRATA_OK || st.fast_calls != 0) {
        printf("rank %d: strata_comm_stats: %llu fast calls\n", rank,
               (unsigned long long)st.fast_calls);
        bad++;
    }
    MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("test_dlopen: %s\n", bad ? "FAIL" : "PASS");
    }
    MPI_Finalize();
    return bad ? 1 : 0;
}
