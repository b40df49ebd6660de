/*
 * topo/: where the ranks of a communicator sit (hwloc), and the levels of the
 * hierarchy built on it: socket groups inside nodes, nodes inside the cluster.
 */
#ifndef ST_TOPO_H
#define ST_TOPO_H

#include "st_common.h"

#include <mpi.h>

typedef struct st_topo {
    int             rank, size;     /* in the communicator the layout was built on */
    int             nhosts, nnodes;
    int             socket_level;   /* socket groups in use */
    int             nsockets;       /* socket groups over all nodes */
    char            why[96];        /* why the socket level is off */
    strata_place_t *places;         /* size entries, by rank */
    int            *node_leader;    /* size entries: lowest rank of each rank's node */
    int            *sock_leader;    /* size entries: lowest rank of each rank's socket group */
    /* my node: its ranks in ascending order, my index, the socket group of each */
    int             node_size, node_rank;
    int            *node_ranks;
    int            *node_group;
    int             node_ngroups;   /* socket groups in my node */
} st_topo_t;

/* Facts about this process that do not depend on the communicator. */
typedef struct {
    int world_rank;  /* selects this process's item of a STRATA_TOPO_BIND list */
    int host_rank;   /* its rank among MPI_COMM_WORLD's ranks on its host, -1 unknown */
    int host_size;   /* how many there are */
} st_topo_proc_t;

/*
 * Collective over @a comm: find each rank's host, node (virtual nodes split hosts
 * per STRATA_VIRTUAL_NODES, by the process's rank on its host in MPI_COMM_WORLD,
 * so a process is on the same node in every communicator; by its rank in @a comm's
 * part of the host when that is unknown), package and NUMA node (its binding, or
 * the one STRATA_TOPO_BIND says, on the machine's or a synthetic/XML topology),
 * and decide the levels (STRATA_LEVELS). Every rank computes the same layout.
 */
st_status_t st_topo_build(MPI_Comm comm, const st_topo_proc_t *proc, st_topo_t **topo_p);

void st_topo_destroy(st_topo_t *topo);

/* The color of my group at @a level (for MPI_Comm_split): equal on the ranks of
 * one group, distinct between groups. */
int st_topo_group_color(const st_topo_t *topo, strata_level_t level);

/* Do I lead my group at @a level (am I its lowest rank)? */
int st_topo_is_leader(const st_topo_t *topo, strata_level_t level);

/*
 * The hwloc package nearest to the PCI device @a busid ("0000:3b:00.0"), for
 * device buffers: its logical index, or -1 when hwloc does not know the device.
 */
int st_topo_package_of_pci(const char *busid);

#endif /* ST_TOPO_H */
