/*
 * The C library of tests/fortran_commfree.F90: st_attach gives a communicator an
 * attribute whose delete callback calls MPI_Allreduce on it (after one call of its
 * own, so Strata has a plan for it); st_callbacks says how often the callback ran
 * and whether every sum was right.
 */
#include <mpi.h>

void st_attach_(MPI_Fint *fcomm);
void st_callbacks_(MPI_Fint *calls);

static int st_calls;

static int st_delete(MPI_Comm comm, int key, void *val, void *extra)
{
    int one = 1, sum = 0, size = 0;

    (void)key;
    (void)val;
    (void)extra;
    MPI_Comm_size(comm, &size);
    MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, comm);
    st_calls += (sum == size) ? 1 : 1000;
    return MPI_SUCCESS;
}

void st_attach_(MPI_Fint *fcomm)
{
    MPI_Comm comm = MPI_Comm_f2c(*fcomm);
    int key, one = 1, sum = 0;

    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, st_delete, &key, NULL);
    MPI_Comm_set_attr(comm, key, NULL);
    MPI_Comm_free_keyval(&key);
    MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, comm);
}

void st_callbacks_(MPI_Fint *calls)
{
    *calls = (MPI_Fint)st_calls;
}
