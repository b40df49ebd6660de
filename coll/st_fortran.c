/*
 * Fortran bindings. Open MPI's own Fortran wrappers call PMPI_Init,
 * PMPI_Allreduce and PMPI_Finalize directly, so a Fortran program would never
 * reach Strata's C entry points: these symbols take their place.
 *
 * - mpif.h and "use mpi": MPI_INIT, MPI_INIT_THREAD, MPI_ALLREDUCE and
 *   MPI_FINALIZE under the four usual name manglings.
 * - "use mpi_f08": Open MPI's f08 module calls the back-ends its mpif.h
 *   bindings are aliases of (ompi_init_f, ompi_init_thread_f, ompi_allreduce_f,
 *   ompi_finalize_f) through the dynamic linker, so those names are taken too.
 *
 * MPI_INIT runs Open MPI's own (its profiling name), then Strata's part of
 * MPI_Init: without it the job-wide knobs would not be agreed (ranks with
 * different STRATA_SMALL_MSG hung) and virtual nodes not placed once per job.
 * MPI_ALLREDUCE converts the handles and the Fortran MPI_IN_PLACE / MPI_BOTTOM
 * sentinels as Open MPI's wrappers do, and calls the C implementation. One
 * difference: MPI_IN_PLACE passed as the receive buffer (an error) becomes the C
 * MPI_IN_PLACE too, which MPI refuses (MPI_ERR_ARG); Open MPI's own wrapper passes
 * the sentinel's address on as a buffer and writes the result over it.
 * MPI_COMM_FREE and MPI_COMM_DISCONNECT (same names, ompi_comm_free_f and
 * ompi_comm_disconnect_f for mpi_f08) go through Strata's C ones, which mark the
 * dying communicator: an attribute's delete callback that calls MPI_Allreduce on
 * it (a C library's, on a communicator a Fortran program frees) then goes to the
 * MPI, instead of building a plan on a handle about to dangle (MPI_FINALIZE then
 * aborted on it).
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

static void st_fortran_sentinels(void)
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

    pthread_once(&st_fortran_once, st_fortran_sentinels);
    rc = st_coll_mpi_allreduce(st_fortran_buf(sbuf), st_fortran_buf(rbuf), (int)*count,
                               PMPI_Type_f2c(*dtype), PMPI_Op_f2c(*op), PMPI_Comm_f2c(*comm));
    if (ierr != NULL) {
        *ierr = (MPI_Fint)rc;
    }
}

/* MPI_COMM_FREE / MPI_COMM_DISCONNECT through Strata's C @a release */
static void st_fortran_comm_release(int (*release)(MPI_Comm *), MPI_Fint *comm, MPI_Fint *ierr)
{
    MPI_Comm c = PMPI_Comm_f2c(*comm);
    int rc     = release(&c);

    if (rc == MPI_SUCCESS) {
        *comm = PMPI_Comm_c2f(c);
    }
    if (ierr != NULL) {
        *ierr = (MPI_Fint)rc;
    }
}

typedef void (*st_fortran_init_fn_t)(MPI_Fint *ierr);
typedef void (*st_fortran_init_thread_fn_t)(MPI_Fint *required, MPI_Fint *provided,
                                            MPI_Fint *ierr);

/* MPI_INIT: the MPI's own Fortran MPI_INIT (@a real_name, found after libstrata),
 * or PMPI_Init as Open MPI's calls it; then Strata's part. */
static void st_fortran_init(const char *real_name, MPI_Fint *ierr)
{
    st_fortran_init_fn_t real;
    MPI_Fint rc;
    int argc    = 0;
    char **argv = NULL;

    *(void**)&real = dlsym(RTLD_NEXT, real_name);
    if (real != NULL) {
        real(&rc);
    } else {
        rc = (MPI_Fint)PMPI_Init(&argc, &argv);
    }
    if (rc == MPI_SUCCESS) {
        st_coll_init_world();
    }
    if (ierr != NULL) {
        *ierr = rc;
    }
}

static void st_fortran_init_thread(const char *real_name, MPI_Fint *required,
                                   MPI_Fint *provided, MPI_Fint *ierr)
{
    st_fortran_init_thread_fn_t real;
    MPI_Fint rc;
    int argc    = 0, c_provided = MPI_THREAD_SINGLE;
    char **argv = NULL;

    *(void**)&real = dlsym(RTLD_NEXT, real_name);
    if (real != NULL) {
        real(required, provided, &rc);
    } else {
        rc        = (MPI_Fint)PMPI_Init_thread(&argc, &argv, (int)*required, &c_provided);
        *provided = (MPI_Fint)c_provided;
    }
    if (rc == MPI_SUCCESS) {
        st_coll_init_world();
    }
    if (ierr != NULL) {
        *ierr = rc;
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

/* @a _real: the MPI's own, to run first */
#define ST_FORTRAN_INIT(_name, _real) \
    ST_EXPORT void _name(MPI_Fint *ierr) \
    { \
        st_fortran_init(#_real, ierr); \
    }

#define ST_FORTRAN_INIT_THREAD(_name, _real) \
    ST_EXPORT void _name(MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierr) \
    { \
        st_fortran_init_thread(#_real, required, provided, ierr); \
    }

#define ST_FORTRAN_COMM_RELEASE(_name, _c_release) \
    ST_EXPORT void _name(MPI_Fint *comm, MPI_Fint *ierr) \
    { \
        st_fortran_comm_release(_c_release, comm, ierr); \
    }

/* prototypes keep -Wmissing-prototypes quiet: these exist only for Fortran */
#define ST_FORTRAN_PROTOS(_a, _f, _i, _t) \
    void _a(void *, void *, MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *); \
    void _f(MPI_Fint *); \
    void _i(MPI_Fint *); \
    void _t(MPI_Fint *, MPI_Fint *, MPI_Fint *);

ST_FORTRAN_PROTOS(mpi_allreduce_, mpi_finalize_, mpi_init_, mpi_init_thread_)
ST_FORTRAN_PROTOS(mpi_allreduce, mpi_finalize, mpi_init, mpi_init_thread)
ST_FORTRAN_PROTOS(mpi_allreduce__, mpi_finalize__, mpi_init__, mpi_init_thread__)
ST_FORTRAN_PROTOS(MPI_ALLREDUCE, MPI_FINALIZE, MPI_INIT, MPI_INIT_THREAD)
ST_FORTRAN_PROTOS(ompi_allreduce_f, ompi_finalize_f, ompi_init_f, ompi_init_thread_f)
#define ST_FORTRAN_RELEASE_PROTOS(_free, _disconnect) \
    void _free(MPI_Fint *, MPI_Fint *); \
    void _disconnect(MPI_Fint *, MPI_Fint *);
ST_FORTRAN_RELEASE_PROTOS(mpi_comm_free_, mpi_comm_disconnect_)
ST_FORTRAN_RELEASE_PROTOS(mpi_comm_free, mpi_comm_disconnect)
ST_FORTRAN_RELEASE_PROTOS(mpi_comm_free__, mpi_comm_disconnect__)
ST_FORTRAN_RELEASE_PROTOS(MPI_COMM_FREE, MPI_COMM_DISCONNECT)
ST_FORTRAN_RELEASE_PROTOS(ompi_comm_free_f, ompi_comm_disconnect_f)
ST_FORTRAN_COMM_RELEASE(mpi_comm_free_, MPI_Comm_free)
ST_FORTRAN_COMM_RELEASE(mpi_comm_free, MPI_Comm_free)
ST_FORTRAN_COMM_RELEASE(mpi_comm_free__, MPI_Comm_free)
ST_FORTRAN_COMM_RELEASE(MPI_COMM_FREE, MPI_Comm_free)
ST_FORTRAN_COMM_RELEASE(ompi_comm_free_f, MPI_Comm_free)
ST_FORTRAN_COMM_RELEASE(mpi_comm_disconnect_, MPI_Comm_disconnect)
ST_FORTRAN_COMM_RELEASE(mpi_comm_disconnect, MPI_Comm_disconnect)
ST_FORTRAN_COMM_RELEASE(mpi_comm_disconnect__, MPI_Comm_disconnect)
ST_FORTRAN_COMM_RELEASE(MPI_COMM_DISCONNECT, MPI_Comm_disconnect)
ST_FORTRAN_COMM_RELEASE(ompi_comm_disconnect_f, MPI_Comm_disconnect)

ST_FORTRAN_ALLREDUCE(mpi_allreduce_)
ST_FORTRAN_ALLREDUCE(mpi_allreduce)
ST_FORTRAN_ALLREDUCE(mpi_allreduce__)
ST_FORTRAN_ALLREDUCE(MPI_ALLREDUCE)
ST_FORTRAN_FINALIZE(mpi_finalize_)
ST_FORTRAN_FINALIZE(mpi_finalize)
ST_FORTRAN_FINALIZE(mpi_finalize__)
ST_FORTRAN_FINALIZE(MPI_FINALIZE)
ST_FORTRAN_FINALIZE(ompi_finalize_f)
ST_FORTRAN_ALLREDUCE(ompi_allreduce_f)
ST_FORTRAN_INIT(mpi_init_, pmpi_init_)
ST_FORTRAN_INIT(mpi_init, pmpi_init)
ST_FORTRAN_INIT(mpi_init__, pmpi_init__)
ST_FORTRAN_INIT(MPI_INIT, PMPI_INIT)
ST_FORTRAN_INIT(ompi_init_f, ompi_init_f)
ST_FORTRAN_INIT_THREAD(mpi_init_thread_, pmpi_init_thread_)
ST_FORTRAN_INIT_THREAD(mpi_init_thread, pmpi_init_thread)
ST_FORTRAN_INIT_THREAD(mpi_init_thread__, pmpi_init_thread__)
ST_FORTRAN_INIT_THREAD(MPI_INIT_THREAD, PMPI_INIT_THREAD)
ST_FORTRAN_INIT_THREAD(ompi_init_thread_f, ompi_init_thread_f)
