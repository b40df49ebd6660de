/*
 * The inter-node level: a communicator spanning several nodes (hosts, or virtual
 * nodes) reduces inside each node through shared memory, then across nodes over UCX
 * (coll/st_ucx.c), then spreads the result inside each node.
 *
 * Lanes: local rank j of every node form lane j (the split_rail idea of UCC's
 * hierarchical layer), for j < L = the smallest number of ranks on a node, so no
 * lane misses a node; the ranks beyond L on larger nodes take part in the node's
 * steps only.
 *
 * Small messages (up to STRATA_SMALL_MSG bytes, or fewer elements than lanes):
 * every local rank gets the node's sum (st_shm_allreduce), lane 0, the node
 * leaders, reduces it over UCX (recursive doubling or the ring), and the leader
 * broadcasts it inside the node through the segment (st_shm_bcast).
 *
 * Large messages, pipelined in pieces of STRATA_HIER_PIECE bytes: for piece k,
 *   1. reduce-scatter inside the node: lane j gets part j of the node's sum of the
 *      piece (st_shm_reduce_scatter; the parts line up across nodes);
 *   2. lane j starts the ring allreduce of its parts over UCX, and leaves it in
 *      flight (a message of one piece: st_ucx_allreduce, recursive doubling up to
 *      STRATA_UCX_RDB_MAX);
 *   3. lane j waits for piece k - 1's ring, then the node allgathers piece k - 1
 *      (st_shm_allgather_parts).
 * Every wait of steps 1 and 3 advances the rings in flight, so the network
 * carries piece k while the node reduces piece k + 1 and spreads piece k - 1.
 * No rank waits for another without advancing its own rings, and a ring needs
 * nothing but its lane's rings to advance: no cycle of waits can form.
 *
 * With the socket level, the node steps go socket-first (coll/st_shm.c): each
 * package sums the piece over its ranks, and lane j folds part j over the
 * packages' partial sums; the allgather copies each part once into every
 * package.
 *
 * Each element is summed once inside its node (by its part's lane rank, in rank
 * order, or socket-first: in group order within and across the groups), once
 * along its lane's ring, and copied: every rank of the communicator holds the
 * same bits, whatever the piece size.
 */
#include "config.h"

#include "st_coll.h"
#include "st_config.h"
#include "st_cuda.h"
#include "st_mem.h"
#include "st_ucx.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ST_HIER_STEP_ALONE (512 * 1024)   /* node step when every node has one rank */

struct st_hier {
    MPI_Comm       node_comm;   /* my node's ranks, in the plan's order */
    MPI_Comm       lane_comm;   /* local rank j of every node */
    st_shm_t      *shm;         /* on node_comm; NULL when I am alone on my node */
    st_ucx_lane_t *lane;        /* NULL when my local rank is >= nlanes */
    int            node_rank, node_size, nlanes;
    size_t         small;       /* bytes: up to this, only the node leaders' lane */
    size_t         chunk;       /* the largest node segment's chunk (0: none), agreed */
    size_t         step;        /* the smallest node segment's chunk: the node steps' size */
    /* the pipeline (large messages) */
    st_ucx_ring_t *ring[2];     /* piece k's ring is ring[k % 2] */
    char          *pack[2];     /* piece k's parts, as the ring reduces them */
    size_t         pack_size;   /* bytes of each */
    MPI_Comm       comm;        /* of the call in progress: for the progress hook's abort */
    /* device buffers: pinned host copies of pieces, [0] input, [1] output, by parity */
    char          *stage[2][2];
    size_t         stage_size;
    void          *stage_ctx;   /* the CUDA context they are pinned in */
};

/* The pipeline's device side: the buffers that are device memory, and Strata's
 * stream of their context (NULL when both are host memory). */
typedef struct {
    int   in_dev, out_dev;
    void *stream;
} st_hier_dev_t;

/* Free the @a n buffers of @a bytes at @a bufs (NULL ones skipped), set them NULL. */
static void st_hier_free_bufs(char **bufs, int n, size_t bytes)
{
    int i;

    for (i = 0; i < n; i++) {
        st_mem_free(bufs[i], bytes);
        bufs[i] = NULL;
    }
}

/* @a n buffers of @a bytes (page-aligned) in @a bufs, all NULL before: memory that
 * goes back to the system when freed (st_mem.h); 0 (all NULL) when out of memory. */
static int st_hier_alloc(char **bufs, int n, size_t bytes)
{
    int i;

    for (i = 0; i < n; i++) {
        if ((bufs[i] = st_mem_alloc(bytes)) == NULL) {
            st_hier_free_bufs(bufs, n, bytes);
            return 0;
        }
    }
    return 1;
}

/* The staging buffers, unpinned (in the context they were pinned in) and freed. */
static void st_hier_stage_free(st_hier_t *h)
{
    int entered = (h->stage_size > 0 && st_cuda_ctx_enter(h->stage_ctx) == 0), i, j;

    for (i = 0; i < 2; i++) {
        for (j = 0; j < 2; j++) {
            if (h->stage[i][j] != NULL && entered) {
                st_cuda_host_unregister(h->stage[i][j]);
            }
            st_mem_free(h->stage[i][j], h->stage_size);
            h->stage[i][j] = NULL;
        }
    }
    if (entered) {
        st_cuda_ctx_leave();
    }
    h->stage_size = 0;
}

/* Staging buffers of @a bytes pinned in the current context @a ctx; 0 when out of
 * memory (pinning may fail: the copies are then synchronous, still right). Whole
 * pages each, so that no two share a page the driver would pin twice. */
static int st_hier_stage_bufs(st_hier_t *h, size_t bytes, void *ctx)
{
    long page = sysconf(_SC_PAGESIZE);
    size_t align = (page > 0) ? (size_t)page : 4096;
    int i;

    if (bytes <= h->stage_size && ctx == h->stage_ctx) {
        return 1;
    }
    st_hier_stage_free(h);
    bytes = (bytes + align - 1) / align * align;
    if (!st_hier_alloc(h->stage[0], 2, bytes) || !st_hier_alloc(h->stage[1], 2, bytes)) {
        st_hier_free_bufs(h->stage[0], 2, bytes);
        return 0;
    }
    for (i = 0; i < 4; i++) {
        st_cuda_host_register(h->stage[i / 2][i % 2], bytes);
    }
    h->stage_size = bytes;
    h->stage_ctx  = ctx;
    return 1;
}

void st_hier_destroy(st_hier_t *h)
{
    if (h == NULL) {
        return;
    }
    st_ucx_lane_keep(h->lane);   /* (for the next plan over the same ranks) */
    st_shm_destroy(h->shm);
    if (h->lane_comm != MPI_COMM_NULL) {
        PMPI_Comm_free(&h->lane_comm);
    }
    if (h->node_comm != MPI_COMM_NULL) {
        PMPI_Comm_free(&h->node_comm);
    }
    st_hier_stage_free(h);
    st_ucx_ring_free(h->ring[0]);
    st_ucx_ring_free(h->ring[1]);
    st_hier_free_bufs(h->pack, 2, h->pack_size);
    free(h);
}

st_status_t st_hier_create(MPI_Comm comm, const st_topo_t *topo, size_t small,
                           st_hier_t **hier_p)
{
    st_hier_t *h = calloc(1, sizeof(*h));
    int ok;
    st_status_t status = ST_OK;
    uint64_t chunk, step;

    *hier_p = NULL;
    if (!st_coll_all_ok(comm, h != NULL)) {
        free(h);
        return ST_ERR_NO_MEMORY;
    }
    h->node_comm = h->lane_comm = MPI_COMM_NULL;
    h->small     = small;
    ok = (PMPI_Comm_split(comm, topo->node_leader[topo->rank], topo->rank, &h->node_comm) ==
          MPI_SUCCESS);
    if (ok) {
        PMPI_Comm_rank(h->node_comm, &h->node_rank);
        PMPI_Comm_size(h->node_comm, &h->node_size);
        ok = (PMPI_Comm_split(comm, h->node_rank, topo->rank, &h->lane_comm) == MPI_SUCCESS);
    }
    if (!st_coll_all_ok(comm, ok)) {
        st_hier_destroy(h);
        return ST_ERR_MPI;
    }
    h->nlanes = h->node_size;
    st_mpi_allreduce(&h->nlanes, 1, MPI_INT, MPI_MIN, comm);

    /* the node's segment (none for a rank alone on its node) */
    ok = 1;
    if (h->node_size > 1) {
        status = st_coll_node_shm(h->node_comm, topo, &h->shm);
        ok     = (status == ST_OK);
    }
    if (!st_coll_all_ok(comm, ok)) {
        st_hier_destroy(h);
        return (status != ST_OK) ? status : ST_ERR_NO_MEMORY;
    }
    chunk = (h->shm != NULL) ? st_shm_chunk(h->shm) : 0;
    st_mpi_allreduce(&chunk, 1, MPI_UINT64_T, MPI_MAX, comm);
    h->chunk = (size_t)chunk;
    step     = (h->shm != NULL) ? st_shm_chunk(h->shm) : UINT64_MAX;
    st_mpi_allreduce(&step, 1, MPI_UINT64_T, MPI_MIN, comm);
    h->step = (step == UINT64_MAX) ? ST_HIER_STEP_ALONE : (size_t)step;

    /* the lanes: every member of a lane comm takes the same branch */
    if (h->node_rank < h->nlanes) {
        status = st_ucx_lane_create(h->lane_comm, &h->lane);
        if (status != ST_OK) {
            st_debug("UCX lane %d: %s (%s)", h->node_rank, strata_status_string(status),
                     st_ucx_why());
        }
    }
    if (!st_coll_all_ok(comm, status == ST_OK)) {
        st_hier_destroy(h);
        return (status != ST_OK) ? status : ST_ERR_NO_RESOURCE;
    }
    if (h->lane != NULL) {
        h->ring[0] = st_ucx_ring_new();
        h->ring[1] = st_ucx_ring_new();
    }
    if (!st_coll_all_ok(comm, h->lane == NULL || (h->ring[0] != NULL && h->ring[1] != NULL))) {
        st_hier_destroy(h);
        return ST_ERR_NO_MEMORY;
    }
    *hier_p = h;
    return ST_OK;
}

size_t st_hier_chunk(const st_hier_t *hier)
{
    return hier->chunk;
}

size_t st_hier_small_msg(const st_hier_t *hier)
{
    return hier->small;
}

uint64_t st_hier_cross_bytes(const st_hier_t *hier)
{
    return (hier->shm != NULL) ? st_shm_cross_bytes(hier->shm) : 0;
}

/* A lane failed (a peer died): the result is lost and the other ranks are waiting
 * for it; end the job rather than return a wrong answer or hang. */
static void st_hier_fatal(MPI_Comm comm, st_status_t status)
{
    st_error("MPI_Allreduce across nodes failed (%s: %s); aborting the job",
             strata_status_string(status), st_ucx_why());
    PMPI_Abort(comm, 1);
}

/* Does a call of @a count elements of @a type take the pipeline? The same answer
 * on every rank. */
static int st_hier_pipelined(const st_hier_t *h, size_t count, st_type_t type)
{
    return count * st_type_size(type) > h->small && count >= (size_t)h->nlanes;
}

/* The shared segment's progress hook during a pipelined call: advance the rings
 * in flight (a failed one ends the job: its result is lost). */
static void st_hier_progress(void *arg)
{
    st_hier_t *h = arg;
    int i;

    for (i = 0; i < 2; i++) {
        if (st_ucx_ring_test(h->ring[i]) < 0) {   /* 1 at once for an inactive ring */
            st_ucx_ring_abort(h->ring[i]);
            st_hier_fatal(h->comm, ST_ERR_IO);
        }
    }
}

/* The first @a n pack buffers, of @a bytes at least (kept from call to call). */
static int st_hier_pack(st_hier_t *h, size_t bytes, int n)
{
    int i;

    if (bytes > h->pack_size) {
        st_hier_free_bufs(h->pack, 2, h->pack_size);
        h->pack_size = bytes;
    }
    for (i = 0; i < n; i++) {
        if (h->pack[i] == NULL && (h->pack[i] = st_mem_alloc(h->pack_size)) == NULL) {
            st_hier_free_bufs(h->pack, 2, h->pack_size);
            h->pack_size = 0;
            return 0;
        }
    }
    return 1;
}

/* Bytes of my parts of a piece (the reduce-scatter's output), the largest of the
 * whole pieces' and the last's: about the piece over the lanes, none beyond them. */
static size_t st_hier_part_bytes(const st_hier_t *h, size_t count, size_t piece, size_t esize)
{
    size_t last = count % piece, n;

    n = st_shm_part_count(piece, esize, h->nlanes, h->node_rank, h->step);
    if (last != 0) {
        n = ST_MAX(n, st_shm_part_count(last, esize, h->nlanes, h->node_rank, h->step));
    }
    return ST_MAX(n, 1) * esize;
}

/* Elements of a piece: whole node steps, the same on every node (at most @a count). */
static size_t st_hier_piece_elems(const st_hier_t *h, size_t count, size_t esize)
{
    size_t piece = ST_MAX(st_config.hier_piece / h->step, 1) * (h->step / esize);

    return (st_config.hier_piece == 0) ? count : ST_MIN(piece, count);
}

/* Piece @a k of a vector of @a count elements cut into pieces of @a piece:
 * its offset and length. */
static void st_hier_piece(size_t count, size_t piece, size_t k, size_t *off_p, size_t *n_p)
{
    *off_p = k * piece;
    *n_p   = ST_MIN(piece, count - *off_p);
}

/* A copy of the device side failed: the other ranks are inside the collective. */
static void st_hier_dev_fatal(MPI_Comm comm, const char *what)
{
    st_error("MPI_Allreduce on a device buffer across nodes: %s; aborting the job", what);
    PMPI_Abort(comm, 1);
}

/*
 * The pipeline. With device buffers (@a dev->stream), piece k + 1 is copied to a
 * pinned host buffer while piece k goes through the node, and each piece's result
 * is copied back while the next ones go on, all on one stream: the sync at the
 * top of iteration k waits for piece k's copy in and for the copy out of piece k -
 * 2, the last user of the output buffer that piece k - 1 reuses.
 */
static void st_hier_pipeline(st_hier_t *h, const char *in, char *out, size_t count,
                             st_type_t type, st_op_t op, MPI_Comm comm,
                             const st_hier_dev_t *dev)
{
    size_t esize = st_type_size(type), piece, npieces, k, bytes;
    size_t off, n, parts[2] = {0, 0};
    int lane = (h->node_rank < h->nlanes), b;
    const char *src;
    char *dst;
    st_status_t status;

    piece   = st_hier_piece_elems(h, count, esize);
    npieces = (count + piece - 1) / piece;
    /* (a rank alone on its node has one lane: its parts are the pieces) */
    bytes = st_hier_part_bytes(h, count, piece, esize);
    if (!st_hier_pack(h, bytes, (npieces > 1) ? 2 : 1)) {
        st_error("MPI_Allreduce across nodes: no memory for %zu bytes; aborting the job",
                 ((npieces > 1) ? 2 : 1) * bytes);
        PMPI_Abort(comm, 1);
    }
    h->comm = comm;
    if (h->shm != NULL) {
        st_shm_set_progress(h->shm, st_hier_progress, h);
    }
    if (dev->in_dev &&
        st_cuda_copy_async(h->stage[0][0], in, ST_MIN(piece, count) * esize, dev->stream) != 0) {
        st_hier_dev_fatal(comm, "copy to host failed");
    }
    for (k = 0; k <= npieces; k++) {
        if (dev->stream != NULL && st_cuda_stream_sync(dev->stream) != 0) {
            st_hier_dev_fatal(comm, "a copy between host and device failed");
        }
        if (k < npieces) {
            b = (int)(k % 2);
            st_hier_piece(count, piece, k, &off, &n);
            src = in + off * esize;
            if (dev->in_dev) {
                src = h->stage[0][b];
                if (k + 1 < npieces &&
                    st_cuda_copy_async(h->stage[0][1 - b], in + (off + n) * esize,
                                       ST_MIN(piece, count - off - n) * esize, dev->stream) != 0) {
                    st_hier_dev_fatal(comm, "copy to host failed");
                }
            }
            if (h->shm != NULL) {
                parts[b] = st_shm_reduce_scatter(h->shm, src, n, type, op, h->nlanes, h->step,
                                                 h->pack[b], comm);
            } else {
                memcpy(h->pack[b], src, n * esize);
                parts[b] = n;
            }
            if (lane) {
                /* one piece: nothing to overlap; recursive doubling for small parts */
                status = (npieces == 1)
                             ? st_ucx_allreduce(h->lane, h->pack[b], parts[b], type, op, comm)
                             : st_ucx_ring_start(h->ring[b], h->lane, h->pack[b], parts[b], type,
                                                 op);
                if (status != ST_OK) {
                    st_hier_fatal(comm, status);
                }
            }
        }
        if (k > 0) {
            b = (int)((k - 1) % 2);
            st_hier_piece(count, piece, k - 1, &off, &n);
            if (lane) {
                status = st_ucx_ring_wait(h->ring[b], h->ring[1 - b], comm);
                if (status != ST_OK) {
                    st_hier_fatal(comm, status);
                }
            }
            dst = dev->out_dev ? h->stage[1][b] : out + off * esize;
            if (h->shm != NULL) {
                st_shm_allgather_parts(h->shm, h->pack[b], n, esize, h->nlanes, h->step, dst,
                                       comm);
            } else {
                memcpy(dst, h->pack[b], n * esize);
            }
            if (dev->out_dev &&
                st_cuda_copy_async(out + off * esize, dst, n * esize, dev->stream) != 0) {
                st_hier_dev_fatal(comm, "copy back to the device failed");
            }
        }
    }
    if (dev->out_dev && st_cuda_stream_sync(dev->stream) != 0) {
        st_hier_dev_fatal(comm, "copy back to the device failed");
    }
    if (h->shm != NULL) {
        st_shm_set_progress(h->shm, NULL, NULL);
    }
}

void st_hier_allreduce(st_hier_t *h, const void *sbuf, void *rbuf, size_t count,
                       st_type_t type, st_op_t op, MPI_Comm comm)
{
    size_t esize = st_type_size(type);
    st_status_t status = ST_OK;

    if (st_hier_pipelined(h, count, type)) {
        st_hier_dev_t host = {0, 0, NULL};

        st_hier_pipeline(h, (sbuf == MPI_IN_PLACE) ? rbuf : sbuf, rbuf, count, type, op, comm,
                         &host);
        return;
    }

    /* small: the node's sum on every local rank, the leaders' lane, a broadcast */
    if (h->shm != NULL) {
        st_shm_allreduce(h->shm, sbuf, rbuf, count, type, op, comm);
    } else if (sbuf != MPI_IN_PLACE) {
        memcpy(rbuf, sbuf, count * esize);
    }
    if (h->node_rank == 0) {
        status = st_ucx_allreduce(h->lane, rbuf, count, type, op, comm);
    }
    if (status != ST_OK) {
        st_hier_fatal(comm, status);
    }
    if (h->shm != NULL) {
        st_shm_bcast(h->shm, rbuf, count * esize, 0, comm);
    }
}

int st_hier_allreduce_device(st_hier_t *h, const void *sbuf, void *rbuf, size_t count,
                             st_type_t type, st_op_t op, MPI_Comm comm, const st_cuda_buf_t *bin,
                             const st_cuda_buf_t *bout)
{
    const void *in = (sbuf == MPI_IN_PLACE) ? rbuf : sbuf;
    st_hier_dev_t dev = {bin->kind == ST_MEM_DEVICE, bout->kind == ST_MEM_DEVICE, NULL};
    size_t piece;
    void *ctx;

    if (!st_hier_pipelined(h, count, type) || (dev.in_dev && bin->ctx == NULL) ||
        (dev.out_dev && bout->ctx == NULL) ||
        (dev.in_dev && dev.out_dev && bin->ctx != bout->ctx)) {
        return 0;
    }
    ctx = dev.in_dev ? bin->ctx : bout->ctx;
    if (st_cuda_ctx_enter(ctx) != 0) {
        return 0;
    }
    piece = st_hier_piece_elems(h, count, st_type_size(type)) * st_type_size(type);
    if ((dev.stream = st_cuda_stream()) == NULL || !st_hier_stage_bufs(h, piece, ctx)) {
        st_cuda_ctx_leave();
        return 0;
    }
    st_hier_pipeline(h, in, rbuf, count, type, op, comm, &dev);
    st_cuda_ctx_leave();
    return 1;
}
