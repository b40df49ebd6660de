/*
 * coll/: the MPI_Allreduce interposer, the per-communicator plan and the
 * algorithms. Internal interfaces between its files.
 */
#ifndef ST_COLL_H
#define ST_COLL_H

#include "st_common.h"
#include "st_cuda.h"
#include "st_mpi.h"
#include "st_reduce.h"
#include "st_topo.h"

#include <mpi.h>
#include <stdatomic.h>

/* ---- MPI handles -> engine ids (st_mpi_map.c) ---- */

/* Build the handle tables and ask the MPI library which (type, op) pairs it
 * accepts. Called once after MPI is initialized. */
st_status_t st_mpi_map_init(void);

/* ST_OP_* or -1 for a user-defined or unknown op. */
int st_mpi_map_op(MPI_Op op);

/* ST_TYPE_* or -1 for a derived, non-contiguous or unknown type; @a ops_p gets
 * the ops (bit ST_OP_*) Strata implements on it and the MPI library accepts. */
int st_mpi_map_type(MPI_Datatype type, unsigned *ops_p);

/* ---- the shared-memory node algorithm (st_shm.c) ---- */

typedef struct st_shm st_shm_t;

/*
 * Collective over @a comm (all ranks on one node): create and attach the segment.
 * @a group (NULL: flat) gives each rank's socket group (0 ..): with two groups or
 * more, large messages reduce inside each group first. @a pkg (NULL: unknown)
 * gives each rank's package, for counting the bytes read across packages.
 */
st_status_t st_shm_create(MPI_Comm comm, const int *group, const int *pkg, st_shm_t **shm_p);
/* Detach; the segment is kept for a later communicator over the same ranks (a few,
 * the oldest unmapped), until st_shm_release_kept (at MPI_Finalize). */
void st_shm_destroy(st_shm_t *shm);
void st_shm_release_kept(void);

/*
 * The ranks of the job that share this machine's cores (one kernel: hosts that are
 * network namespaces or containers of one machine count together; 0: unknown), set
 * once at MPI_Init; and whether @a nranks ranks (those of a node), or those, are
 * more than its cores: waits then yield at once (STRATA_SPIN_COUNT=auto).
 */
void st_set_machine_ranks(int n);
int st_oversubscribed(int nranks);

/* STRATA_SMALL_MSG=auto: 16K between nodes and on nodes of up to 3 ranks or of
 * more ranks than cores; less on a node of more ranks on their own cores. */
#define ST_SMALL_MSG_DEFAULT 16384
size_t st_shm_small_auto(int nranks, int oversubscribed);

/*
 * Allreduce of @a count elements of @a type with @a op among the ranks of the
 * segment; @a sbuf may be MPI_IN_PLACE. @a progress_comm is polled with
 * PMPI_Iprobe while waiting so other MPI traffic of this process keeps moving.
 */
void st_shm_allreduce(st_shm_t *shm, const void *sbuf, void *rbuf, size_t count,
                      st_type_t type, st_op_t op, MPI_Comm progress_comm);

/*
 * Every rank of the segment posts @a len bytes (at most the chunk, the same @a len
 * on every rank) and waits for all: a step of the segment's sequence, like one
 * allreduce. @return the ranks' bytes, indexed by rank; valid until this rank's
 * next call on the segment (st_shm_allreduce or st_shm_exchange). NULL when @a len
 * is too large (on every rank: nothing was posted).
 */
const void *const *st_shm_exchange(st_shm_t *shm, const void *mine, size_t len,
                                   MPI_Comm pcomm);

/*
 * The node steps of the inter-node pipeline (st_hier.c). Both cut @a count
 * elements into steps of @a step bytes (at most the chunk; the same on every
 * node of a lane, so the parts line up across nodes) and give part j of each
 * step, st_shm's cache-line aligned cut into @a nparts, to rank j < @a nparts:
 *
 * st_shm_reduce_scatter: rank j gets its parts of the ranks' sum of @a in, one
 * after the other at @a out (the same bits as a fold in rank order); returns
 * how many elements it wrote (0 for ranks >= nparts).
 * st_shm_allgather_parts: rank j posts its parts from @a parts (as written by
 * the reduce-scatter), every rank gets the whole vector at @a out.
 *
 * While waiting, both call the segment's progress hook (st_shm_set_progress).
 */
size_t st_shm_reduce_scatter(st_shm_t *shm, const void *in, size_t count, st_type_t type,
                             st_op_t op, int nparts, size_t step, void *out,
                             MPI_Comm progress_comm);
void st_shm_allgather_parts(st_shm_t *shm, const void *parts, size_t count, size_t esize,
                            int nparts, size_t step, void *out, MPI_Comm progress_comm);
/* How many elements st_shm_reduce_scatter writes for part @a index of @a count
 * elements (of @a esize bytes) in steps of @a step bytes: what its @a out must hold. */
size_t st_shm_part_count(size_t count, size_t esize, int nparts, int index, size_t step);

/* Broadcast @a bytes at @a buf from segment rank @a root, in steps of the chunk
 * (the protocol of the pipeline's steps above). */
void st_shm_bcast(st_shm_t *shm, void *buf, size_t bytes, int root, MPI_Comm progress_comm);

/* Call @a fn(@a arg) at every poll while waiting on the segment (NULL: none). */
void st_shm_set_progress(st_shm_t *shm, void (*fn)(void *), void *arg);

/* The segment's pipeline chunk and latency threshold (bytes). */
size_t st_shm_chunk(const st_shm_t *shm);
size_t st_shm_small_msg(const st_shm_t *shm);
/* Set the latency threshold (every rank of the segment alike; at most the chunk). */
void st_shm_set_small_msg(st_shm_t *shm, size_t bytes);

/* Bytes this rank read from areas written by ranks of another package. */
uint64_t st_shm_cross_bytes(const st_shm_t *shm);

/* ---- plan helpers (st_coll.c) ---- */

/* Collective over @a comm: 1 when @a ok is nonzero on every rank. */
int st_coll_all_ok(MPI_Comm comm, int ok);

/*
 * Collective over @a node_comm, the ranks of my node in @a topo in ascending order
 * (the plan's communicator on one node): the node's segment, with the socket groups
 * of @a topo when its socket level is on. The status is this rank's; the caller
 * agrees on it.
 */
st_status_t st_coll_node_shm(MPI_Comm node_comm, const st_topo_t *topo, st_shm_t **shm_p);

/* ---- the inter-node level (st_hier.c, over st_ucx.c) ---- */

typedef struct st_hier st_hier_t;

/*
 * Collective over @a comm (several nodes in @a topo): node communicators and
 * segments, and the UCX lanes (local rank j of every node). Messages up to @a small
 * bytes cross the nodes on the node leaders' lane only. @return ST_OK, or the same
 * failure on every rank (no UCX, a segment or a lane that could not be made).
 */
st_status_t st_hier_create(MPI_Comm comm, const st_topo_t *topo, size_t small,
                           st_hier_t **hier_p);
void st_hier_destroy(st_hier_t *hier);

/* The largest pipeline chunk of the nodes' segments (0: no node has one), and the
 * latency threshold across nodes: the same on every rank. */
size_t st_hier_chunk(const st_hier_t *hier);
size_t st_hier_small_msg(const st_hier_t *hier);

/* Bytes this rank read across packages in its node's segment. */
uint64_t st_hier_cross_bytes(const st_hier_t *hier);

/*
 * Allreduce over all nodes: the node's sum (shared memory), the lanes (UCX), the
 * result spread inside the node. @a dtype is the predefined MPI datatype of @a type
 * (the node steps move elements with it); @a comm is polled while waiting. A lane
 * that fails (a peer died) ends the job with a message.
 */
void st_hier_allreduce(st_hier_t *hier, const void *sbuf, void *rbuf, size_t count,
                       st_type_t type, st_op_t op, MPI_Comm comm);

/*
 * The same with device buffers (@a in, @a out: what st_cuda_query said of the send
 * buffer, the receive buffer's in place, and of the receive buffer): on the pipeline, each piece is staged through pinned host
 * memory on Strata's stream of the buffers' context while the others go through
 * the node and the network. @return 1 when done; 0 when this call does not take
 * the pipeline (small) or cannot stage this way (buffers in two contexts, no
 * stream, no memory): the caller stages the whole buffers instead, which the
 * other ranks cannot tell from this.
 */
int st_hier_allreduce_device(st_hier_t *hier, const void *sbuf, void *rbuf, size_t count,
                             st_type_t type, st_op_t op, MPI_Comm comm, const st_cuda_buf_t *in,
                             const st_cuda_buf_t *out);

/* ---- the fast-path decision (st_coll.c) ---- */

/*
 * Fast path or fallback for one MPI_Allreduce call on a communicator of @a size ranks
 * (@a is_inter: an intercommunicator), from the call's arguments alone: a
 * STRATA_FALLBACK_* reason, or -1 for the fast path, with the engine's type and op
 * in *type_p and *op_p. Pure: the same arguments give the same answer on every rank
 * and every call. The handle tables of st_mpi_map_init() must be built.
 */
int st_coll_decide(int is_inter, int size, const void *sbuf, const void *rbuf, int count,
                   MPI_Datatype dtype, MPI_Op mop, int *type_p, int *op_p);

/* ---- entry points shared with the Fortran bindings (st_coll.c) ---- */

/* MPI_Allreduce as libstrata implements it (the C MPI_Allreduce is its alias). */
int st_coll_mpi_allreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dtype,
                          MPI_Op op, MPI_Comm comm);

/* MPI_Finalize: statistics, plans freed, then PMPI_Finalize. */
int st_coll_finalize(void);

/* Strata's part of MPI_Init and MPI_Init_thread, once MPI is up (collective over
 * MPI_COMM_WORLD): the job-wide knobs agreed, virtual nodes placed. */
void st_coll_init_world(void);

/* ---- plans (st_coll.c) ---- */

typedef enum {
    ST_PLAN_NEW = 0,     /* not set up yet */
    ST_PLAN_READY,       /* shared-memory path set up */
    ST_PLAN_FALLBACK     /* every call goes to PMPI (reason in fallback_reason) */
} st_plan_state_t;

typedef struct st_plan {
    MPI_Comm          user_comm;  /* the communicator this plan is cached on */
    MPI_Comm          comm;       /* private duplicate (MPI_COMM_NULL before setup) */
    int               rank, size;
    int               is_inter;
    int               alike;      /* the ranks' knobs alike on it (1: agreed at MPI_Init,
                                     or asked where not: MPI started behind our back, a
                                     communicator joining jobs), not (-1), not asked
                                     yet (0) */
    st_plan_state_t   state;
    strata_fallback_t fallback_reason;
    st_shm_t         *shm;        /* one node: its segment */
    st_hier_t        *hier;       /* several nodes: the levels below and across them */
    struct st_cuda_ipc *ipc;      /* one node: the GPU path's state (cuda/st_cuda_ipc.c) */
    st_topo_t        *topo;       /* layout (NULL before setup, or when it failed) */
    MPI_Comm          level_comm[STRATA_LEVEL_LAST];   /* strata_comm_level, made on demand */
    MPI_Comm          leader_comm[STRATA_LEVEL_LAST];  /* strata_comm_leaders */
    unsigned          comms_made;   /* bit l: level_comm[l]; bit 8 + l: leader_comm[l] */
    strata_comm_stats_t stats;
    void             *stage;        /* host copies of device buffers (st_coll_staged) */
    size_t            stage_size;
    char              name[MPI_MAX_OBJECT_NAME];
    struct st_plan   *prev, *next;  /* list of live plans */
} st_plan_t;

#endif /* ST_COLL_H */
