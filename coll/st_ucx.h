/*
 * coll/st_ucx.h: the UCX (ucp) transport of the inter-node level, and the
 * allreduce that runs on it.
 *
 * A lane is a group of processes that talk over UCX: in the hierarchical
 * allreduce, local rank j of every node (the ranks one MPI communicator holds).
 * It is built collectively over that communicator and then used on its own: a
 * lane needs no MPI call after st_ucx_lane_create, except the optional progress
 * polls of st_ucx_wait and st_ucx_allreduce.
 *
 * Typical use by the plan (collective over @a lane_comm, every rank alike):
 *
 *     st_ucx_lane_t *lane;
 *     if (st_ucx_lane_create(lane_comm, &lane) != ST_OK) {
 *         st_debug("no UCX lane (%s): falling back", st_ucx_why());
 *         ... fall back: the status is the same on every rank of lane_comm ...
 *     }
 *     ...
 *     status = st_ucx_allreduce(lane, slice, slice_count, type, op, plan->comm);
 *     ...
 *     st_ucx_lane_destroy(lane);
 *
 * Thread safety: any function may be called from any thread (the UCP worker is
 * shared by the process and serialized by a lock), but the calls on one lane
 * must be serialized by the caller, and made in the same order by every member
 * (as the calls on a communicator are).
 *
 * Built without UCX (HAVE_UCX 0), every function is still defined:
 * st_ucx_lane_create returns ST_ERR_UNSUPPORTED and the rest do nothing.
 */
#ifndef ST_UCX_H
#define ST_UCX_H

#include "st_common.h"
#include "st_reduce.h"

#include <mpi.h>
#include <stddef.h>

typedef struct st_ucx_lane st_ucx_lane_t;

/* A nonblocking send or receive of st_ucx_isend / st_ucx_irecv. Owned by the
 * caller; valid from the post until st_ucx_wait returns. */
typedef struct {
    void       *ucp;      /* UCP request handle; NULL once complete */
    int         peer;     /* lane rank of the peer */
    int         is_recv;
    size_t      bytes;    /* a receive's length: a message of another fails it */
    st_status_t status;   /* ST_OK, or why it failed (valid once complete) */
} st_ucx_req_t;

/*
 * The reason for the last failure of an st_ucx_ function in the calling thread
 * ("" if none): a static string, valid until the next call in this thread.
 */
const char *st_ucx_why(void);

/*
 * Collective over @a comm (an intracommunicator; every rank calls it): build a
 * lane of the processes of @a comm, lane rank = rank in @a comm.
 *
 * The process-wide UCP context and worker are started on the first call
 * (features TAG, UCX's own configuration from the environment: UCX_TLS,
 * UCX_NET_DEVICES, ...). The ranks agree on the outcome of each step with
 * PMPI_Allreduce, exchange worker addresses with PMPI_Allgather (padded to the
 * longest), create endpoints to the peers the algorithms use (error handling
 * mode PEER: UCX must offer a network transport between them, tcp will do),
 * and check each connection with a message both ways (30 s at most).
 *
 * @return ST_OK with the lane in @a lane_p, or, with the same status on every
 *         rank of @a comm and nothing left allocated:
 *         ST_ERR_UNSUPPORTED  built without UCX, STRATA_UCX=n, or more than 2^20
 *                             ranks;
 *         ST_ERR_NO_RESOURCE  UCX did not start or a peer could not be reached
 *                             (on some rank: st_ucx_why() says which and why);
 *         ST_ERR_NOT_INITIALIZED after st_ucx_finalize;
 *         ST_ERR_NO_MEMORY, ST_ERR_MPI;
 *         ST_ERR_INVALID_PARAM (this rank only) for NULL @a lane_p, or @a comm
 *         MPI_COMM_NULL or an intercommunicator.
 *         Never aborts; prints nothing (the reason is logged at debug level, or
 *         as a warning with STRATA_UCX=y), except what UCX itself prints when
 *         no transport it may use reaches a peer.
 */
st_status_t st_ucx_lane_create(MPI_Comm comm, st_ucx_lane_t **lane_p);

/*
 * Destroy @a lane (NULL: nothing). Returns at once, without waiting for the
 * peers: the lane sends each peer it talks to a goodbye, and its endpoints are
 * flushed and closed (and its memory freed) once every such peer's goodbye has
 * arrived, i.e. once they are done with the lane too, so no last message is cut
 * off. That is checked whenever a lane is created or destroyed, while waiting,
 * and at st_ucx_finalize (which waits for stragglers a bounded time). No
 * operation may be in flight on the lane.
 */
void st_ucx_lane_destroy(st_ucx_lane_t *lane);

/*
 * Destroy @a lane (NULL: nothing) as st_ucx_lane_destroy does, unless it is healthy:
 * then it is kept, its endpoints open, for the next st_ucx_lane_create over the same
 * processes in the same order (ranks of MPI_COMM_WORLD), which takes it when every
 * member holds it (one allreduce it makes anyway: no address exchange, connection or
 * handshake). The last ST_UCX_KEEP (2) lanes kept stay; an older one, one not held by
 * every member of a later lane over its processes, and all of them at st_ucx_finalize
 * (or st_ucx_quiesce) are destroyed. A lane damaged (an endpoint failed, a member
 * broke it) when it is to be kept, or when it is to be taken again, is broken (its
 * abort notices sent) and destroyed. No operation may be in flight on the lane.
 */
void st_ucx_lane_keep(st_ucx_lane_t *lane);

/* This process's rank in @a lane, and the number of processes. */
int st_ucx_lane_rank(const st_ucx_lane_t *lane);
int st_ucx_lane_size(const st_ucx_lane_t *lane);

/* The communicators @a lane has served: 1 for a new lane, one more each time a
 * kept lane is taken again (st_ucx_lane_keep). */
unsigned st_ucx_lane_uses(const st_ucx_lane_t *lane);

/*
 * In place on every member of @a lane: @a buf (@a count contiguous elements of
 * @a type) becomes op(all members' buffers). Collective over the lane.
 *
 * Up to STRATA_UCX_RDB_MAX bytes: recursive doubling (any lane size: the ranks
 * beyond the largest power of two are folded in first, as MPICH does); larger:
 * ring reduce-scatter then ring allgather, the reduce-scatter pipelined in
 * segments. The result is bitwise identical on every member and from run to
 * run for the same lane size and count: each element is reduced in one order
 * fixed by the layout (lower lane rank as the left operand in recursive
 * doubling; along the ring, once, in the ring reduce-scatter), then copied.
 *
 * While waiting, MPI is polled (PMPI_Iprobe on @a progress_comm, now and then,
 * unless it is MPI_COMM_NULL) so other MPI traffic of the process keeps moving.
 *
 * @return ST_OK; ST_ERR_INVALID_PARAM for an (type, op) pair without a kernel;
 *         ST_ERR_NO_MEMORY; ST_ERR_IO when the transport failed (a peer died or
 *         closed): then @a buf holds garbage, the other members return
 *         ST_ERR_IO too (or hang no longer than UCX takes to notice), and the
 *         lane is broken: every later call returns ST_ERR_IO; destroy it.
 */
st_status_t st_ucx_allreduce(st_ucx_lane_t *lane, void *buf, size_t count, st_type_t type,
                             st_op_t op, MPI_Comm progress_comm);

/* ---- a nonblocking ring allreduce, several in flight on a lane ---- */

typedef struct st_ucx_ring st_ucx_ring_t;

/* A ring's state (its requests and scratch, kept between uses); NULL when out of
 * memory. Free with st_ucx_ring_free (which does not wait: the ring must not be
 * active). */
st_ucx_ring_t *st_ucx_ring_new(void);
void st_ucx_ring_free(st_ucx_ring_t *ring);

/*
 * Start the ring allreduce (reduce-scatter, then allgather) of @a count elements
 * at @a buf over @a lane, in place: the same result as st_ucx_allreduce's ring,
 * bitwise identical on every member. Every member starts its rings on a lane in
 * the same order (each takes the lane's next epoch, so rings in flight at once
 * never mix), and keeps @a buf untouched until the ring completes. Returns at
 * once; the ring advances when st_ucx_ring_test or st_ucx_ring_wait is called.
 * ST_OK also for a ring with nothing to do (count 0 or one member), which is
 * complete at once. On an error the lane is broken and the ring inactive.
 */
st_status_t st_ucx_ring_start(st_ucx_ring_t *ring, st_ucx_lane_t *lane, void *buf, size_t count,
                              st_type_t type, st_op_t op);

/* Started and not yet complete. */
int st_ucx_ring_active(const st_ucx_ring_t *ring);

/*
 * Progress the worker once and advance @a ring as far as what arrived allows,
 * without waiting: 1 complete (or not active), 0 still in flight, -1 failed
 * (st_ucx_why() says why; call st_ucx_ring_abort).
 */
int st_ucx_ring_test(st_ucx_ring_t *ring);

/* Break the lane of a failed @a ring: cancel what it has pending (bounded wait)
 * and tell the lane's members. Nothing for an inactive ring. */
void st_ucx_ring_abort(st_ucx_ring_t *ring);

/*
 * Wait until @a ring completes, advancing @a other (may be NULL) too; yields
 * the core like st_ucx_wait. On a failure of either, both are aborted and
 * ST_ERR_IO returned.
 */
st_status_t st_ucx_ring_wait(st_ucx_ring_t *ring, st_ucx_ring_t *other, MPI_Comm progress_comm);

/* ---- point-to-point, for algorithms built on a lane ---- */

/*
 * Start a new epoch on @a lane: messages of earlier epochs never match those of
 * later ones. Every member calls it at the same point (st_ucx_allreduce calls
 * it itself).
 */
void st_ucx_lane_next(st_ucx_lane_t *lane);

/*
 * Post a send of @a bytes bytes at @a buf to lane rank @a peer, or a receive of
 * exactly that many bytes from @a peer, as message @a msg (0 ... 4093) of the
 * current epoch (a message of another length fails the receive: the members
 * disagree, and the lane breaks rather than fold a partial buffer). Messages
 * between two members with the same @a msg match in the order they were posted.
 * The buffer belongs to UCX until st_ucx_wait returns.
 *
 * @return ST_OK (@a req is in flight or already complete), ST_ERR_INVALID_PARAM,
 *         ST_ERR_IO (nothing posted; the lane is broken).
 */
st_status_t st_ucx_isend(st_ucx_lane_t *lane, int peer, unsigned msg, const void *buf,
                         size_t bytes, st_ucx_req_t *req);
st_status_t st_ucx_irecv(st_ucx_lane_t *lane, int peer, unsigned msg, void *buf, size_t bytes,
                         st_ucx_req_t *req);

/*
 * Wait until the @a n requests at @a reqs are complete: progress the worker,
 * spin for STRATA_SPIN_COUNT idle polls (auto: 10), then yield the core at
 * every poll (sched_yield), polling MPI on @a progress_comm (unless
 * MPI_COMM_NULL) every 16th yield.
 *
 * @return ST_OK; or ST_ERR_IO when one failed, or the lane broke (an endpoint
 *         of it failed, or a member said it broke the lane): then every
 *         request of @a reqs is complete or cancelled when it returns (the
 *         buffers are free again) and the lane is broken.
 */
st_status_t st_ucx_wait(st_ucx_lane_t *lane, st_ucx_req_t *reqs, int n, MPI_Comm progress_comm);

/*
 * For tests: progress until no destroyed lane is still closing, or @a seconds
 * passed. @return the number of endpoints still open, in every lane (active,
 * or destroyed but still closing).
 */
int st_ucx_quiesce(double seconds);

/*
 * For tests: mark the endpoint of @a lane to lane rank @a peer failed, as UCX's
 * error callback does (a failure this side sees and the peer may not: a link
 * gone under a connection). The next wait on the lane fails.
 */
void st_ucx_lane_fail(st_ucx_lane_t *lane, int peer);

/*
 * At MPI_Init, on every rank of MPI_COMM_WORLD (st_coll_init_world, after the
 * configuration is agreed): the communicator over which a member that breaks a
 * lane tells its peers, besides UCX (whose endpoint to a peer may be the thing
 * that failed). Without it (MPI started behind Strata's back), notices go through
 * UCX only.
 */
void st_ucx_init_world(void);

/*
 * Process teardown (st_coll_finalize calls it before PMPI_Finalize): lanes still
 * alive lose their endpoints (st_ucx_lane_destroy still frees them later), then
 * the worker and the context go. Later st_ucx_lane_create calls return
 * ST_ERR_NOT_INITIALIZED. Idempotent; a process that never used UCX pays
 * nothing.
 */
void st_ucx_finalize(void);

#endif /* ST_UCX_H */
