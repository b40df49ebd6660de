/*
 * Fortran bindings (mpif.h and "use mpi"). Open MPI's own Fortran wrappers call
 * PMPI_Allreduce and PMPI_Finalize directly, so a Fortran program would never
 * reach Strata's C entry points: these symbols take their place, convert the
 * handles and the Fortran MPI_IN_PLACE / MPI_BOTTOM sentinels exactly as Open
 * MPI's wrappers do, and call the C implementation. Each is exported under the
 * four usual name manglings. ("use mpi_f08" has bindings of its own: not
 * intercepted.)
 */
#include "config.h"

#include "st_coll.h"

#include <dlfcn.h>
#include <pthread.h>

/* The addresses of the Fortran sentinels, whichever mangling this MPI uses. */
static void *st_fortran_in_place[4];
static void *st_fortran_bottom[4];
static pthread_once_t st_fortran_once = PTHREAD_ONCE_INIT;

static void st_fortran_lookup(void **addrs, const char *const *names)
{
    int i;

    for (i = 0; i < 4; i++) {
        addrs[i] = dlsym(RTLD_DEFAULT, names[i]);
    }
}

static void st_fortran_init(void)
{
    static const char *const in_place[] = {
        "mpi_fortran_in_place_", "mpi_fortran_in_place", "mpi_fortran_in_place__",
        "MPI_FORTRAN_IN_PLACE"
    };
    static const char *const bottom[] = {
        "mpi_fortran_bottom_", "mpi_fortran_bottom", "mpi_fortran_bottom__",
        "MPI_FORTRAN_BOTTOM"
    };

    st_fortran_lookup(st_fortran_in_place, in_place);
    st_fortran_lookup(st_fortran_bottom, bottom);
}

static int st_fortran_is(void *const *addrs, const void *p)
{
    int i;

    for (i = 0; i < 4; i++) {
        if (addrs[i] != NULL && addrs[i] == p) {
            return 1;
        }
    }
    return 0;
}

/* A Fortran buffer argument as the C API wants it. */
static void *st_fortran_buf(void *p)
{
    if (st_fortran_is(st_fortran_in_place, p)) {
        return MPI_IN_PLACE;
    }
    if (st_fortran_is(st_fortran_bottom, p)) {
        return MPI_BOTTOM;
    }
    return p;
}

static void st_fortran_allreduce(void *sbuf, void *rbuf, MPI_Fint *count, MPI_Fint *dtype,
                                 MPI_Fint *op, MPI_Fint *comm, MPI_Fint *ierr)
{
    int rc;

    pthread_once(&st_fortran_once, st_fortran_init);
    rc = st_coll_mpi_allreduce(st_fortran_buf(sbuf), st_fortran_buf(rbuf), (int)*count,
                               PMPI_Type_f2c(*dtype), PMPI_Op_f2c(*op), PMPI_Comm_f2c(*comm));
    if (ierr != NULL) {
        *ierr = (MPI_Fint)rc;
    }
}

static void st_fortran_finalize(MPI_Fint *ierr)
{
    int rc = st_coll_finalize();

    if (ierr != NULL) {
        *ierr = (MPI_Fint)rc;
    }
}

#define ST_FORTRAN_ALLREDUCE(_name) \
    ST_EXPORT void _name(void *sbuf, void *rbuf, MPI_Fint *count, MPI_Fint *dtype, \
                         MPI_Fint *op, MPI_Fint *comm, MPI_Fint *ierr) \
    { \
        st_fortran_allreduce(sbuf, rbuf, count, dtype, op, comm, ierr); \
    }

#define ST_FORTRAN_FINALIZE(_name) \
    ST_EXPORT void _name(MPI_Fint *ierr) \
    { \
        st_fortran_finalize(ierr); \
    }

/* prototypes keep -Wmissing-prototypes quiet: these exist only for Fortran */
#define ST_FORTRAN_PROTOS(_a, _f) \
    void _a(void *, void *, MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *); \
    void _f(MPI_Fint *);

ST_FORTRAN_PROTOS(mpi_allreduce_, mpi_finalize_)
ST_FORTRAN_PROTOS(mpi_allreduce, mpi_finalize)
ST_FORTRAN_PROTOS(mpi_allreduce__, mpi_finalize__)
ST_FORTRAN_PROTOS(MPI_ALLREDUCE, MPI_FINALIZE)

ST_FORTRAN_ALLREDUCE(mpi_allreduce_)
ST_FORTRAN_ALLREDUCE(mpi_allreduce)
ST_FORTRAN_ALLREDUCE(mpi_allreduce__)
ST_FORTRAN_ALLREDUCE(MPI_ALLREDUCE)
ST_FORTRAN_FINALIZE(mpi_finalize_)
ST_FORTRAN_FINALIZE(mpi_finalize)
ST_FORTRAN_FINALIZE(mpi_finalize__)
ST_FORTRAN_FINALIZE(MPI_FINALIZE)
