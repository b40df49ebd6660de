/*
 * Broken MPI calls, preloaded by tests/tools.sh to show that strata-bench and
 * strata-info notice them or survive them (FAKE_ALLREDUCE picks the fault):
 *   stale  MPI_Allreduce and PMPI_Allreduce (SUM of float, double or int) compute
 *          the first call of each size and return that result ever after, each
 *          entry point its own
 *   stall  the first MPI_Allreduce sleeps 5 ms after its (right) result: a rank
 *          descheduled once
 *   racy   an MPI_Allreduce (SUM of float, double or int) called back to back with
 *          the previous one, no PMPI_Barrier between them, adds 1 to its last
 *          output element: a race between consecutive calls, seen only in a loop
 *   skew   as racy, on rank 0 of the communicator only, and doubling that element:
 *          the ranks' outputs differ, by more than rounding
 * and FAKE_PROCESSOR_NAME, where set, is MPI_Get_processor_name's answer (cut to
 * MPI_MAX_PROCESSOR_NAME - 1 characters, as the standard allows).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FAKE_NCACHE 64

typedef int (*fake_allreduce_fn_t)(const void *, void *, int, MPI_Datatype, MPI_Op, MPI_Comm);

typedef struct {
    size_t bytes[FAKE_NCACHE];
    void  *result[FAKE_NCACHE];
    int    n;
} fake_cache_t;

static fake_cache_t fake_mpi_cache, fake_pmpi_cache;
static int fake_inside;   /* in MPI_Allreduce: libstrata's PMPI calls are its own */
static int fake_since_barrier;   /* MPI_Allreduce calls since the last PMPI_Barrier */

static int fake_mode(const char *mode)
{
    const char *v = getenv("FAKE_ALLREDUCE");

    return v != NULL && !strcmp(v, mode);
}

static fake_allreduce_fn_t fake_next(const char *name)
{
    fake_allreduce_fn_t fn;

    *(void**)&fn = dlsym(RTLD_NEXT, name);
    return fn;
}

/* A call answered from @a cache where one of its size was made before; else made, and
 * its result kept. */
static int fake_stale(fake_cache_t *cache, fake_allreduce_fn_t fn, const void *sbuf,
                      void *rbuf, int count, MPI_Datatype dtype, MPI_Op op, MPI_Comm comm)
{
    size_t bytes;
    int size, k, rc;

    if (op != MPI_SUM || (dtype != MPI_FLOAT && dtype != MPI_DOUBLE && dtype != MPI_INT)) {
        return fn(sbuf, rbuf, count, dtype, op, comm);
    }
    MPI_Type_size(dtype, &size);
    bytes = (size_t)count * (size_t)size;
    for (k = 0; k < cache->n; k++) {
        if (cache->bytes[k] == bytes) {
            memcpy(rbuf, cache->result[k], bytes);
            return MPI_SUCCESS;
        }
    }
    rc = fn(sbuf, rbuf, count, dtype, op, comm);
    if (rc == MPI_SUCCESS && cache->n < FAKE_NCACHE &&
        (cache->result[cache->n] = malloc(bytes ? bytes : 1)) != NULL) {
        memcpy(cache->result[cache->n], rbuf, bytes);
        cache->bytes[cache->n++] = bytes;
    }
    return rc;
}

static int fake_rank(MPI_Comm comm)
{
    int rank = -1;

    MPI_Comm_rank(comm, &rank);
    return rank;
}

int MPI_Allreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dtype, MPI_Op op,
                  MPI_Comm comm)
{
    static fake_allreduce_fn_t next;
    static int calls;
    int rc;

    if (next == NULL) {
        next = fake_next("MPI_Allreduce");
    }
    fake_inside++;
    if (fake_mode("stale")) {
        rc = fake_stale(&fake_mpi_cache, next, sbuf, rbuf, count, dtype, op, comm);
    } else {
        rc = next(sbuf, rbuf, count, dtype, op, comm);
    }
    fake_inside--;
    if ((fake_mode("racy") || (fake_mode("skew") && fake_rank(comm) == 0)) &&
        fake_since_barrier++ > 0 && rc == MPI_SUCCESS && count > 0 && op == MPI_SUM) {
        int twice = fake_mode("skew");   /* (seen at any magnitude) */

        if (dtype == MPI_FLOAT) {
            ((float*)rbuf)[count - 1] += twice ? ((float*)rbuf)[count - 1] : 1;
        } else if (dtype == MPI_DOUBLE) {
            ((double*)rbuf)[count - 1] += twice ? ((double*)rbuf)[count - 1] : 1;
        } else if (dtype == MPI_INT) {
            ((int*)rbuf)[count - 1] += twice ? ((int*)rbuf)[count - 1] : 1;
        }
    }
    if (fake_mode("stall") && calls++ == 0) {
        usleep(5000);
    }
    return rc;
}

int PMPI_Allreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dtype, MPI_Op op,
                   MPI_Comm comm)
{
    static fake_allreduce_fn_t next;

    if (next == NULL) {
        next = fake_next("PMPI_Allreduce");
    }
    if (fake_mode("stale") && !fake_inside) {
        return fake_stale(&fake_pmpi_cache, next, sbuf, rbuf, count, dtype, op, comm);
    }
    return next(sbuf, rbuf, count, dtype, op, comm);
}

int PMPI_Barrier(MPI_Comm comm)
{
    static int (*next)(MPI_Comm);

    if (next == NULL) {
        *(void**)&next = dlsym(RTLD_NEXT, "PMPI_Barrier");
    }
    fake_since_barrier = 0;
    return next(comm);
}

int MPI_Get_processor_name(char *name, int *len)
{
    static int (*next)(char *, int *);
    const char *v = getenv("FAKE_PROCESSOR_NAME");

    if (v == NULL) {
        if (next == NULL) {
            *(void**)&next = dlsym(RTLD_NEXT, "MPI_Get_processor_name");
        }
        return next(name, len);
    }
    *len = (int)strnlen(v, MPI_MAX_PROCESSOR_NAME - 1);
    memcpy(name, v, (size_t)*len);
    name[*len] = '\0';
    return MPI_SUCCESS;
}
