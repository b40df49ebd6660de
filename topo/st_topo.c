/*
 * Topology discovery and the level plan.
 *
 * Each rank finds its own place (host, virtual node, package, NUMA node, PUs),
 * the ranks allgather their places once per communicator, and every rank then
 * derives the same groups from the same table:
 *
 *   comm ranks      0  1  2  3  4  5  6  7     e.g. --map-by socket on a host
 *   package         0  1  0  1  0  1  0  1     of 2 packages x 4 cores
 *   node            0  0  0  0  0  0  0  0
 *   socket group    0  1  0  1  0  1  0  1     numbered by lowest rank in the node
 *   group leaders   0  1                       (their lowest ranks)
 *
 * Groups never depend on the order ranks join, only on the table, so a
 * reordered communicator gets the groups of its own rank order.
 */
#include "config.h"

#include "st_topo.h"
#include "st_config.h"
#include "st_mpi.h"

#include <hwloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the process's hwloc topology, loaded once ---- */

static pthread_once_t   st_topo_once = PTHREAD_ONCE_INIT;
static hwloc_topology_t st_topo_hw;       /* NULL when hwloc failed */
static int              st_topo_is_this_system;

static void st_topo_hw_load(void)
{
    hwloc_topology_t topo;

    st_config_init();
    if (hwloc_topology_init(&topo) != 0) {
        st_warn("hwloc_topology_init failed: no topology, no socket level");
        return;
    }
    if (st_config.topo_xml[0] != '\0' && hwloc_topology_set_xml(topo, st_config.topo_xml) != 0) {
        st_warn("STRATA_TOPO_XML=%s: hwloc cannot read it; using the machine's topology",
                st_config.topo_xml);
    } else if (st_config.topo_xml[0] == '\0' && st_config.topo_synthetic[0] != '\0' &&
               hwloc_topology_set_synthetic(topo, st_config.topo_synthetic) != 0) {
        st_warn("STRATA_TOPO_SYNTHETIC='%s' is not a valid hwloc synthetic description; "
                "using the machine's topology", st_config.topo_synthetic);
    }
    if (hwloc_topology_load(topo) != 0) {
        st_warn("hwloc_topology_load failed: no topology, no socket level");
        hwloc_topology_destroy(topo);
        return;
    }
    st_topo_is_this_system = hwloc_topology_is_thissystem(topo);
    st_topo_hw             = topo;
}

/* ---- this process's place ---- */

static int st_topo_bind_warned;   /* STRATA_TOPO_BIND checked against the topology */

/* Item @a idx of the STRATA_TOPO_BIND list (logical PU indexes a or a-b): [a, b]. */
static void st_topo_bind_range(const char *list, int idx, unsigned long *a_p,
                               unsigned long *b_p)
{
    const char *p = list;
    char *end;

    while (idx-- > 0) {
        p = strchr(p, ',') + 1;
    }
    *a_p = *b_p = strtoul(p, &end, 10);
    if (*end == '-') {
        *b_p = strtoul(end + 1, &end, 10);
    }
}

/* A PU of the list's @a items that the topology lacks: said once per process, by
 * rank 0 for the job (every rank checks the whole list, not only its own item). */
static void st_topo_bind_check(hwloc_topology_t topo, const char *list, int items,
                               int world_rank)
{
    int npu = ST_MAX(hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU), 0), i;
    unsigned long a, b;

    if (st_topo_bind_warned) {   /* (the list is read for every communicator set up) */
        return;
    }
    st_topo_bind_warned = 1;
    for (i = 0; i < items; i++) {
        st_topo_bind_range(list, i, &a, &b);
        if (b >= (unsigned long)npu) {
            if (world_rank == 0) {
                st_warn("STRATA_TOPO_BIND: PU %lu does not exist (the topology has %d)",
                        ST_MAX(a, (unsigned long)npu), npu);
            } else {
                st_debug("STRATA_TOPO_BIND: PU %lu does not exist (the topology has %d)",
                         ST_MAX(a, (unsigned long)npu), npu);
            }
            return;
        }
    }
}

/* The PUs of STRATA_TOPO_BIND item @a idx of the list into @a set. */
static void st_topo_bind_item(hwloc_topology_t topo, const char *list, int idx,
                              hwloc_bitmap_t set)
{
    int npu = ST_MAX(hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU), 0);
    unsigned long a, b, i;
    hwloc_obj_t pu;

    st_topo_bind_range(list, idx, &a, &b);
    for (i = a; i <= b && i < (unsigned long)npu; i++) {
        pu = hwloc_get_obj_by_type(topo, HWLOC_OBJ_PU, (unsigned)i);
        if (pu != NULL) {
            hwloc_bitmap_or(set, set, pu->cpuset);
        }
    }
}

/* The cpuset this process is (or is assumed to be) bound to. */
static void st_topo_my_cpuset(hwloc_topology_t topo, int world_rank, hwloc_bitmap_t set)
{
    const char *bind = st_config.topo_bind;
    hwloc_const_bitmap_t all = hwloc_topology_get_topology_cpuset(topo);
    hwloc_obj_t obj, pkg;
    int n, npkg, items;
    const char *p;

    hwloc_bitmap_zero(set);
    if (!strcasecmp(bind, "os")) {
        if (!st_topo_is_this_system ||
            hwloc_get_cpubind(topo, set, HWLOC_CPUBIND_PROCESS) != 0) {
            hwloc_bitmap_copy(set, all);
        }
    } else if (!strcasecmp(bind, "none")) {
        hwloc_bitmap_copy(set, all);
    } else if (!strcasecmp(bind, "core") || !strcasecmp(bind, "socket")) {
        n    = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
        npkg = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PACKAGE);
        obj  = NULL;
        if (!strcasecmp(bind, "socket") && npkg > 0) {
            /* round-robin over packages, then over the cores of each */
            pkg = hwloc_get_obj_by_type(topo, HWLOC_OBJ_PACKAGE, (unsigned)(world_rank % npkg));
            n   = hwloc_get_nbobjs_inside_cpuset_by_type(topo, pkg->cpuset, HWLOC_OBJ_CORE);
            if (n > 0) {
                obj = hwloc_get_obj_inside_cpuset_by_type(topo, pkg->cpuset, HWLOC_OBJ_CORE,
                                                          (unsigned)(world_rank / npkg % n));
            }
        } else if (n > 0) {
            obj = hwloc_get_obj_by_type(topo, HWLOC_OBJ_CORE, (unsigned)(world_rank % n));
        }
        hwloc_bitmap_copy(set, (obj != NULL) ? obj->cpuset : all);
    } else {
        for (items = 1, p = bind; (p = strchr(p, ',')) != NULL; p++) {
            items++;
        }
        st_topo_bind_check(topo, bind, items, world_rank);
        st_topo_bind_item(topo, bind, world_rank % items, set);
    }
    hwloc_bitmap_and(set, set, all);
}

/* The logical index of the only object of @a type that @a set intersects, or -1. */
static int st_topo_only_obj(hwloc_topology_t topo, hwloc_obj_type_t type,
                            hwloc_const_bitmap_t set)
{
    hwloc_obj_t obj = NULL, found = NULL;

    if (hwloc_bitmap_iszero(set)) {
        return -1;
    }
    while ((obj = hwloc_get_next_obj_by_type(topo, type, obj)) != NULL) {
        if (hwloc_bitmap_intersects(obj->cpuset, set)) {
            if (found != NULL) {
                return -1;
            }
            found = obj;
        }
    }
    return (found != NULL) ? (int)found->logical_index : -1;
}

/* @a set as logical PU indexes in list syntax ("0-3,8"), truncated with "...". */
static void st_topo_format_pus(hwloc_topology_t topo, hwloc_const_bitmap_t set, char *buf,
                               size_t len)
{
    int npu = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
    size_t used = 0;
    int i, j, in;

    buf[0] = '\0';
    for (i = 0; i < npu; i = j) {
        in = hwloc_bitmap_isset(set, hwloc_get_obj_by_type(topo, HWLOC_OBJ_PU,
                                                           (unsigned)i)->os_index);
        for (j = i + 1; in && j < npu; j++) {
            if (!hwloc_bitmap_isset(set, hwloc_get_obj_by_type(topo, HWLOC_OBJ_PU,
                                                               (unsigned)j)->os_index)) {
                break;
            }
        }
        if (!in) {
            j = i + 1;
            continue;
        }
        if (used + 24 >= len) {
            snprintf(buf + ST_MIN(used, len - 4), 4, "...");
            return;
        }
        used += (size_t)snprintf(buf + used, len - used, (j - 1 > i) ? "%s%d-%d" : "%s%d",
                                 used ? "," : "", i, j - 1);
    }
}

static void st_topo_my_place(int world_rank, strata_place_t *place)
{
    hwloc_topology_t topo;
    hwloc_bitmap_t set;

    memset(place, 0, sizeof(*place));
    place->package = place->numa = -1;
    pthread_once(&st_topo_once, st_topo_hw_load);
    topo = st_topo_hw;
    set  = (topo != NULL) ? hwloc_bitmap_alloc() : NULL;
    if (set == NULL) {
        return;
    }
    st_topo_my_cpuset(topo, world_rank, set);
    place->bound   = !hwloc_bitmap_isequal(set, hwloc_topology_get_topology_cpuset(topo));
    place->package = st_topo_only_obj(topo, HWLOC_OBJ_PACKAGE, set);
    place->numa    = st_topo_only_obj(topo, HWLOC_OBJ_NUMANODE, set);
    st_topo_format_pus(topo, set, place->cpus, sizeof(place->cpus));
    hwloc_bitmap_free(set);
}

/* ---- the layout ---- */

/* Exchanged by every rank: its host (lowest rank of its host), virtual node, place. */
typedef struct {
    int            host_leader;
    int            vnode;
    strata_place_t place;
} st_topo_rec_t;

/* Ranks sorted by (key1, key2, rank): groups of equal keys, lowest rank first. */
typedef struct {
    int key1, key2, rank;
} st_topo_key_t;

static int st_topo_key_cmp(const void *a, const void *b)
{
    const st_topo_key_t *x = a, *y = b;

    if (x->key1 != y->key1) {
        return (x->key1 < y->key1) ? -1 : 1;
    }
    if (x->key2 != y->key2) {
        return (x->key2 < y->key2) ? -1 : 1;
    }
    return (x->rank > y->rank) - (x->rank < y->rank);
}

/*
 * Group the ranks by (key1[r], key2[r]): leader_p[r] gets the lowest rank of r's
 * group. Returns the number of groups, or -1 without memory.
 */
static int st_topo_group(int size, const int *key1, const int *key2, int *leader)
{
    st_topo_key_t *k = malloc((size_t)size * sizeof(*k));
    int r, i, ngroups = 0, first = 0;

    if (k == NULL) {
        return -1;
    }
    for (r = 0; r < size; r++) {
        k[r].key1 = key1[r];
        k[r].key2 = key2[r];
        k[r].rank = r;
    }
    qsort(k, (size_t)size, sizeof(*k), st_topo_key_cmp);
    for (i = 0; i < size; i++) {
        if (i == 0 || k[i].key1 != k[first].key1 || k[i].key2 != k[first].key2) {
            first = i;
            ngroups++;
        }
        leader[k[i].rank] = k[first].rank;
    }
    free(k);
    return ngroups;
}

/* Number the groups given by @a leader in order of their leaders: index_p[r]. With
 * @a within (NULL or a group per rank), numbering restarts in each such group. */
static void st_topo_number(int size, const int *leader, const int *within, int *index)
{
    int *next = calloc((size_t)size, sizeof(int));
    int r, w;

    for (r = 0; r < size; r++) {
        if (leader[r] == r) {
            w        = (within != NULL) ? within[r] : 0;
            index[r] = (next != NULL) ? next[w]++ : 0;
        }
    }
    for (r = 0; r < size; r++) {
        index[r] = index[leader[r]];
    }
    free(next);
}

/*
 * The socket level: on when every rank is bound within a package and, unless
 * STRATA_LEVELS=socket forces it, when it cuts the bytes that cross packages.
 * Per node of n ranks over P packages, for a message of N bytes, the flat
 * algorithm moves 2 N/n x (sum over ranks of the ranks on other packages) across
 * packages, socket-first 2 (P - 1) N (see coll/st_shm.c); with one rank per
 * package the two are equal and the flat algorithm, with fewer copies, wins.
 */
static void st_topo_decide_sockets(st_topo_t *topo, const int *node_index,
                                   const int *node_leader)
{
    int *pkg = NULL, *group = NULL, *cnt = NULL;
    double flat = 0, sock = 0;
    int r, size = topo->size;

    if (st_config.levels == ST_LEVELS_FLAT || st_config.levels == ST_LEVELS_NODE) {
        snprintf(topo->why, sizeof(topo->why), "STRATA_LEVELS=%s",
                 st_config.levels == ST_LEVELS_FLAT ? "flat" : "node");
        return;
    }
    if (size < 1) {
        return;
    }
    for (r = 0; r < size; r++) {
        if (topo->places[r].package < 0) {
            snprintf(topo->why, sizeof(topo->why), "rank %d is %s", r,
                     topo->places[r].bound ? "bound across packages" : "not bound");
            return;
        }
    }
    pkg   = calloc((size_t)size, sizeof(int));
    group = calloc((size_t)size, sizeof(int));
    cnt   = calloc((size_t)size, sizeof(int));
    if (pkg == NULL || group == NULL || cnt == NULL) {
        snprintf(topo->why, sizeof(topo->why), "out of memory");
        goto out;
    }
    for (r = 0; r < size; r++) {
        pkg[r] = topo->places[r].package;
    }
    /* ranks per (node, package), counted at each group's leader */
    if (st_topo_group(size, node_index, pkg, group) < 0) {
        snprintf(topo->why, sizeof(topo->why), "out of memory");
        goto out;
    }
    for (r = 0; r < size; r++) {
        cnt[group[r]]++;
    }
    for (r = 0; r < size; r++) {
        pkg[r] = cnt[group[r]];              /* ranks on my package in my node */
        sock  += (group[r] == r) ? 2.0 : 0;  /* 2 per package of each node ... */
    }
    memset(cnt, 0, (size_t)size * sizeof(int));
    for (r = 0; r < size; r++) {
        cnt[node_leader[r]]++;
    }
    for (r = 0; r < size; r++) {
        flat += 2.0 * (cnt[node_leader[r]] - pkg[r]) / cnt[node_leader[r]];
        sock -= (node_leader[r] == r) ? 2.0 : 0;  /* ... less 2 per node: 2 (P - 1) */
    }
    if (st_config.levels == ST_LEVELS_AUTO && !(sock < flat)) {
        snprintf(topo->why, sizeof(topo->why), "%s", (sock == 0)
                 ? "each node's ranks share one package"
                 : "socket-first would not cut the bytes crossing packages");
        goto out;
    }
    topo->socket_level = 1;
out:
    free(pkg);
    free(group);
    free(cnt);
}

st_status_t st_topo_build(MPI_Comm comm, const st_topo_proc_t *proc, st_topo_t **topo_p)
{
    st_topo_rec_t mine, *table = NULL;
    MPI_Comm host = MPI_COMM_NULL;
    int *key1 = NULL, *key2 = NULL, *node_leader = NULL, *sock_leader = NULL;
    int hrank, hsize, k, r, j;
    st_status_t status = ST_OK;
    st_topo_t *topo;

    topo = calloc(1, sizeof(*topo));
    if (topo == NULL) {
        return ST_ERR_NO_MEMORY;
    }
    PMPI_Comm_rank(comm, &topo->rank);
    PMPI_Comm_size(comm, &topo->size);

    /* my host: the shared-memory split; its leader is its lowest rank */
    ST_MPI_CALL_GOTO(PMPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, topo->rank,
                                          MPI_INFO_NULL, &host), out, status);
    PMPI_Comm_rank(host, &hrank);
    PMPI_Comm_size(host, &hsize);
    mine.host_leader = topo->rank;
    ST_MPI_CALL_GOTO(st_mpi_allreduce(&mine.host_leader, 1, MPI_INT, MPI_MIN, host),
                     out, status);
    if (proc->host_rank >= 0) {
        hrank = proc->host_rank;
        hsize = proc->host_size;
    }
    k          = ST_MIN(st_config.vnodes, hsize);
    mine.vnode = (st_config.vnode_map == ST_VNODE_ROUND_ROBIN)
                         ? hrank % k
                         : (int)((long long)hrank * k / hsize);
    st_topo_my_place(proc->world_rank, &mine.place);

    table       = malloc((size_t)topo->size * sizeof(*table));
    topo->places = calloc((size_t)topo->size, sizeof(*topo->places));
    key1        = malloc((size_t)topo->size * sizeof(int));
    key2        = malloc((size_t)topo->size * sizeof(int));
    node_leader = malloc((size_t)topo->size * sizeof(int));
    sock_leader = malloc((size_t)topo->size * sizeof(int));
    if (table == NULL || topo->places == NULL || key1 == NULL || key2 == NULL ||
        node_leader == NULL || sock_leader == NULL) {
        status = ST_ERR_NO_MEMORY;
    }
    /* every rank must reach the allgather, whatever failed above */
    r = (status == ST_OK);
    ST_MPI_CALL_GOTO(st_mpi_allreduce(&r, 1, MPI_INT, MPI_MIN, comm), out, status);
    if (!r) {
        status = ST_ERR_NO_MEMORY;
        goto out;
    }
    ST_MPI_CALL_GOTO(st_mpi_allgather(&mine, (int)sizeof(mine), table, comm), out, status);

    /* hosts and nodes, numbered by their lowest ranks */
    for (r = 0; r < topo->size; r++) {
        topo->places[r] = table[r].place;
        key1[r]         = table[r].host_leader;
        key2[r]         = 0;
    }
    topo->nhosts = st_topo_group(topo->size, key1, key2, node_leader);
    st_topo_number(topo->size, node_leader, NULL, key1);
    for (r = 0; r < topo->size; r++) {
        topo->places[r].host = key1[r];
        key2[r]              = table[r].vnode;
    }
    topo->nnodes = st_topo_group(topo->size, key1, key2, node_leader);
    st_topo_number(topo->size, node_leader, NULL, key1);
    for (r = 0; r < topo->size; r++) {
        topo->places[r].node = key1[r];
    }

    /* socket groups: (node, package) */
    st_topo_decide_sockets(topo, key1, node_leader);
    for (r = 0; r < topo->size; r++) {
        key2[r] = topo->socket_level ? topo->places[r].package : 0;
    }
    topo->nsockets = st_topo_group(topo->size, key1, key2, sock_leader);
    st_topo_number(topo->size, sock_leader, key1, key2);
    for (r = 0; r < topo->size; r++) {
        topo->places[r].socket = key2[r];
    }
    if (topo->nhosts < 0 || topo->nnodes < 0 || topo->nsockets < 0) {
        status = ST_ERR_NO_MEMORY;
        goto out;
    }

    /* my node, for the shared-memory algorithm */
    for (r = 0; r < topo->size; r++) {
        topo->node_size += (node_leader[r] == node_leader[topo->rank]);
    }
    topo->node_ranks = malloc((size_t)topo->node_size * sizeof(int));
    topo->node_group = malloc((size_t)topo->node_size * sizeof(int));
    topo->node_leader = node_leader;
    topo->sock_leader = sock_leader;
    node_leader = sock_leader = NULL;
    if (topo->node_ranks == NULL || topo->node_group == NULL) {
        status = ST_ERR_NO_MEMORY;
        goto out;
    }
    for (r = 0, j = 0; r < topo->size; r++) {
        if (topo->node_leader[r] == topo->node_leader[topo->rank]) {
            if (r == topo->rank) {
                topo->node_rank = j;
            }
            topo->node_group[j]  = topo->places[r].socket;
            topo->node_ranks[j++] = r;
            topo->node_ngroups   = ST_MAX(topo->node_ngroups, topo->places[r].socket + 1);
        }
    }
    st_debug("layout: %d ranks, %d hosts, %d nodes, %d socket groups%s%s", topo->size,
             topo->nhosts, topo->nnodes, topo->nsockets, topo->socket_level ? "" : "; off: ",
             topo->why);

out:
    if (host != MPI_COMM_NULL) {
        PMPI_Comm_free(&host);
    }
    free(table);
    free(key1);
    free(key2);
    free(node_leader);
    free(sock_leader);
    if (status != ST_OK) {
        st_topo_destroy(topo);
        return status;
    }
    *topo_p = topo;
    return ST_OK;
}

void st_topo_destroy(st_topo_t *topo)
{
    if (topo == NULL) {
        return;
    }
    free(topo->places);
    free(topo->node_ranks);
    free(topo->node_group);
    free(topo->node_leader);
    free(topo->sock_leader);
    free(topo);
}

int st_topo_group_color(const st_topo_t *topo, strata_level_t level)
{
    switch (level) {
    case STRATA_LEVEL_SOCKET: return topo->sock_leader[topo->rank];
    case STRATA_LEVEL_NODE:   return topo->node_leader[topo->rank];
    default:                  return 0;
    }
}

int st_topo_is_leader(const st_topo_t *topo, strata_level_t level)
{
    switch (level) {
    case STRATA_LEVEL_SOCKET: return topo->sock_leader[topo->rank] == topo->rank;
    case STRATA_LEVEL_NODE:   return topo->node_leader[topo->rank] == topo->rank;
    default:                  return topo->rank == 0;
    }
}

/* ---- devices ---- */

int st_topo_package_of_pci(const char *busid)
{
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    static hwloc_topology_t io;  /* with I/O objects: loaded on first use only */
    static int tried;
    hwloc_obj_t obj;
    int pkg = -1;

    pthread_mutex_lock(&lock);
    if (!tried) {
        tried = 1;
        if (hwloc_topology_init(&io) == 0) {
            hwloc_topology_set_io_types_filter(io, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
            if (hwloc_topology_load(io) != 0) {
                hwloc_topology_destroy(io);
                io = NULL;
            }
        }
    }
    obj = (io != NULL && busid != NULL) ? hwloc_get_pcidev_by_busidstring(io, busid) : NULL;
    obj = (obj != NULL) ? hwloc_get_non_io_ancestor_obj(io, obj) : NULL;
    while (obj != NULL && obj->type != HWLOC_OBJ_PACKAGE) {
        obj = obj->parent;
    }
    if (obj != NULL) {
        pkg = (int)obj->logical_index;
    }
    pthread_mutex_unlock(&lock);
    return pkg;
}
