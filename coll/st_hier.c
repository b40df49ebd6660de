/*
 * The inter-node level: a communicator spanning several nodes (hosts, or virtual
 * nodes) reduces inside each node through shared memory, then across nodes over UCX
 * (coll/st_ucx.c), then spreads the result inside each node.
 *
 * Lanes: local rank j of every node form lane j (the split_rail idea of UCC's
 * hierarchical layer), for j < L = the smallest number of ranks on a node, so no
 * lane misses a node; the ranks beyond L on larger nodes take part in the node's
 * steps only. A call:
 *
 *   1. every rank of a node gets the node's sum (st_shm_allreduce on the node's
 *      segment: one fixed order, the same bits on every local rank);
 *   2. small messages (up to STRATA_SMALL_MSG bytes, or fewer elements than lanes):
 *      lane 0, the node leaders, reduces the whole vector over UCX; large ones: the
 *      vector is cut into L slices and lane j reduces slice j, all lanes at once, so
 *      every local rank drives the network;
 *   3. the node leader broadcasts (small), or the lane ranks allgather their slices
 *      (large), inside the node.
 *
 * Each lane's result is bitwise identical on its members (st_ucx_allreduce), and
 * steps 1 and 3 copy, so every rank of the communicator holds the same bits. Not yet:
 * pipelining the node steps with the network transfers (issue 8).
 */
#include "config.h"

#include "st_coll.h"
#include "st_ucx.h"

#include <stdlib.h>
#include <string.h>

struct st_hier {
    MPI_Comm       node_comm;   /* my node's ranks, in the plan's order */
    MPI_Comm       lane_comm;   /* local rank j of every node */
    st_shm_t      *shm;         /* on node_comm; NULL when I am alone on my node */
    st_ucx_lane_t *lane;        /* NULL when my local rank is >= nlanes */
    int            node_rank, node_size, nlanes;
    size_t         small;       /* bytes: up to this, only the node leaders' lane */
    size_t         chunk;       /* the largest node segment's chunk (0: none), agreed */
    int           *counts, *displs;  /* node_size entries: elements, for the allgather */
};

void st_hier_destroy(st_hier_t *h)
{
    if (h == NULL) {
        return;
    }
    st_ucx_lane_destroy(h->lane);
    st_shm_destroy(h->shm);
    if (h->lane_comm != MPI_COMM_NULL) {
        PMPI_Comm_free(&h->lane_comm);
    }
    if (h->node_comm != MPI_COMM_NULL) {
        PMPI_Comm_free(&h->node_comm);
    }
    free(h->counts);
    free(h->displs);
    free(h);
}

st_status_t st_hier_create(MPI_Comm comm, const st_topo_t *topo, size_t small,
                           st_hier_t **hier_p)
{
    st_hier_t *h = calloc(1, sizeof(*h));
    int ok;
    st_status_t status = ST_OK;
    uint64_t chunk;

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
    h->counts = malloc((size_t)h->node_size * sizeof(int));
    h->displs = malloc((size_t)h->node_size * sizeof(int));
    ok        = (h->counts != NULL && h->displs != NULL);
    if (st_coll_all_ok(comm, ok) && h->node_size > 1) {
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

void st_hier_allreduce(st_hier_t *h, const void *sbuf, void *rbuf, size_t count,
                       st_type_t type, st_op_t op, MPI_Datatype dtype, MPI_Comm comm)
{
    size_t esize = st_type_size(type), off;
    st_status_t status = ST_OK;
    int j;

    /* 1. the node's sum on every local rank */
    if (h->shm != NULL) {
        st_shm_allreduce(h->shm, sbuf, rbuf, count, type, op, comm);
    } else if (sbuf != MPI_IN_PLACE) {
        memcpy(rbuf, sbuf, count * esize);
    }

    /* 2-3. across nodes, then inside */
    if (count * esize <= h->small || count < (size_t)h->nlanes) {
        if (h->node_rank == 0) {
            status = st_ucx_allreduce(h->lane, rbuf, count, type, op, comm);
        }
        if (status != ST_OK) {
            st_hier_fatal(comm, status);
        }
        if (h->node_size > 1) {
            PMPI_Bcast(rbuf, (int)count, dtype, 0, h->node_comm);
        }
        return;
    }
    for (j = 0; j < h->node_size; j++) {
        if (j < h->nlanes) {
            off          = count * (size_t)j / (size_t)h->nlanes;
            h->displs[j] = (int)off;
            h->counts[j] = (int)(count * (size_t)(j + 1) / (size_t)h->nlanes - off);
        } else {
            h->displs[j] = (int)count;
            h->counts[j] = 0;
        }
    }
    if (h->node_rank < h->nlanes) {
        status = st_ucx_allreduce(h->lane, (char*)rbuf + (size_t)h->displs[h->node_rank] * esize,
                                  (size_t)h->counts[h->node_rank], type, op, comm);
    }
    if (status != ST_OK) {
        st_hier_fatal(comm, status);
    }
    if (h->node_size > 1) {
        PMPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, rbuf, h->counts, h->displs, dtype,
                        h->node_comm);
    }
}
