/*
 * The small exchanges by which Strata agrees on its own set-up (plans, node
 * segments, UCX lanes, the topology): an in-place allreduce, a broadcast and an
 * allgather of bytes, through PMPI.
 *
 * Why not call PMPI directly: under MPI_THREAD_MULTIPLE, whichever thread drives
 * Open MPI's progress engine may copy a message into (or out of) another thread's
 * buffer, then hand the request over through Open MPI's own atomics. Open MPI is
 * not built with ThreadSanitizer, so it sees only the copy (an intercepted memcpy
 * by the other thread) and then the owner's first access, with nothing ordering
 * them: a false data race, reported now and then in a multi-threaded job. In a
 * ThreadSanitizer build these functions let Open MPI touch only a private heap
 * copy, and copy the result out and free that copy with ThreadSanitizer ignoring
 * the thread (which also clears the freed range's history): so the caller's own
 * buffers are never seen written by another thread, and Strata's accesses to
 * them are still checked. In every other build they are the PMPI call itself.
 * Each returns the MPI error code.
 */
#ifndef ST_MPI_H
#define ST_MPI_H

#include <mpi.h>

/* PMPI_Allreduce(MPI_IN_PLACE, buf, ...) */
int st_mpi_allreduce(void *buf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm);

/* PMPI_Bcast of len bytes from root */
int st_mpi_bcast(void *buf, int len, int root, MPI_Comm comm);

/* PMPI_Allgather of len bytes per rank: all holds len x (size of comm) bytes */
int st_mpi_allgather(const void *mine, int len, void *all, MPI_Comm comm);

#endif /* ST_MPI_H */
