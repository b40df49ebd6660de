/*
 * The PMPI interposer: MPI_Init, MPI_Init_thread, MPI_Finalize, MPI_Allreduce.
 *
 * Each MPI_X entry point is a thin shell around a static st_coll_x (mpiP's
 * style). Internal communication uses PMPI_ calls only, on a private duplicate
 * of the user's communicator, behind a per-thread re-entry guard.
 *
 * A plan is cached on every communicator Strata sees, as an attribute whose
 * delete callback frees it when the user frees the communicator; MPI_Finalize
 * frees the plans still alive. The first call that can take the fast path
 * sets the plan up (collective: all ranks decide the same way, see
 * st_coll_decide), so communicators only ever used with user ops cost nothing.
 */
#include "config.h"

#include "st_coll.h"
#include "st_config.h"
#include "st_cuda.h"
#include "st_cuda_ipc.h"
#include "st_mem.h"
#include "st_ucx.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static __thread int st_coll_in_lib;       /* re-entry guard */
/* the communicators this thread is freeing (MPI_Comm_free/disconnect), innermost
 * first: an attribute's delete callback may free another one, whose callbacks may
 * call MPI_Allreduce on any of them */
typedef struct st_coll_freeing {
    MPI_Comm comm;
    struct st_coll_freeing *outer;
} st_coll_freeing_t;
static __thread st_coll_freeing_t *st_coll_freeing;
static _Atomic int  st_coll_active;       /* between init and finalize, enabled */
static _Atomic int  st_coll_finalizing;   /* MPI_Finalize has begun */
static _Atomic int  st_coll_agreed;       /* the knobs were agreed over MPI_COMM_WORLD */
/* the ranks' words about their STRATA_* variables (invalid, unknown) differ: each
 * rank says its own, not only rank 0 (st_coll_agree_config) */
static int st_coll_config_errors_differ;
static pthread_once_t st_coll_once = PTHREAD_ONCE_INIT;
static int st_coll_keyval = MPI_KEYVAL_INVALID;

/* Is @a comm being freed by this thread? */
static inline int st_coll_is_freeing(MPI_Comm comm)
{
    const st_coll_freeing_t *f;

    for (f = st_coll_freeing; f != NULL; f = f->outer) {
        if (f->comm == comm) {
            return 1;
        }
    }
    return 0;
}
static int st_coll_world_rank;
static int st_coll_world_size;
static st_topo_proc_t st_coll_proc = {0, -1, 0};

/* the parent of the plans' private communicators (st_plan_private): a copy of
 * MPI_COMM_WORLD made at MPI_Init, nothing but MPI_Comm_create_group on it; its
 * MPI_TAG_UB, and the private communicators made by this process as rank 0 of theirs
 * (their tags) */
static MPI_Comm    st_coll_parent = MPI_COMM_NULL;
static int         st_coll_tag_ub = 32767;
static atomic_uint st_coll_made;

/* The plans this thread looked up last, by communicator (direct-mapped): st_plan_get's
 * answer without MPI_Comm_get_attr (a hash lookup under a lock in Open MPI), valid while
 * no plan was freed since (st_coll_plans_freed): the handle of a freed communicator may
 * come back for a new one, which must not be taken for the old. */
#define ST_COLL_KNOWN 8
typedef struct {
    MPI_Comm   comm;
    st_plan_t *plan;
    uint64_t   freed;
} st_coll_known_t;
static __thread st_coll_known_t st_coll_known[ST_COLL_KNOWN];
static _Atomic uint64_t st_coll_plans_freed;

/* live plans, and the statistics of plans already freed */
static pthread_mutex_t st_coll_lock = PTHREAD_MUTEX_INITIALIZER;
static st_plan_t *st_coll_plans;
static strata_comm_stats_t st_coll_retired;
static unsigned st_coll_nretired;

static const char *const st_fallback_names[STRATA_FALLBACK_LAST] = {
    [STRATA_FALLBACK_DISABLED]        = "disabled",
    [STRATA_FALLBACK_NOT_INITIALIZED] = "not-initialized",
    [STRATA_FALLBACK_REENTRY]         = "reentry",
    [STRATA_FALLBACK_INTERCOMM]       = "intercomm",
    [STRATA_FALLBACK_COMM_SIZE]       = "comm-size-1",
    [STRATA_FALLBACK_USER_OP]         = "user-op",
    [STRATA_FALLBACK_DATATYPE]        = "datatype",
    [STRATA_FALLBACK_OP_TYPE]         = "op-type",
    [STRATA_FALLBACK_ARGS]            = "args",
    [STRATA_FALLBACK_MULTINODE]       = "multinode",
    [STRATA_FALLBACK_SHM]             = "shm",
    [STRATA_FALLBACK_CONFIG]          = "config",
};

ST_EXPORT const char *strata_fallback_string(strata_fallback_t reason)
{
    return ((unsigned)reason < STRATA_FALLBACK_LAST) ? st_fallback_names[reason] : "?";
}

static void st_stats_add(strata_comm_stats_t *dst, const strata_comm_stats_t *src)
{
    int i;

    dst->fast_calls   += src->fast_calls;
    dst->fast_bytes   += src->fast_bytes;
    dst->fast_seconds += src->fast_seconds;
    dst->cross_socket_bytes += src->cross_socket_bytes;
    dst->device_calls += src->device_calls;
    dst->ipc_calls    += src->ipc_calls;
    for (i = 0; i < STRATA_FALLBACK_LAST; i++) {
        dst->fallback_calls[i] += src->fallback_calls[i];
    }
}

/* ---- plans ---- */

static void st_plan_destroy(st_plan_t *plan)
{
    int l;

    atomic_fetch_add(&st_coll_plans_freed, 1);   /* (every thread's st_coll_known) */
    pthread_mutex_lock(&st_coll_lock);
    if (plan->prev != NULL) {
        plan->prev->next = plan->next;
    } else {
        st_coll_plans = plan->next;
    }
    if (plan->next != NULL) {
        plan->next->prev = plan->prev;
    }
    st_stats_add(&st_coll_retired, &plan->stats);
    st_coll_nretired++;
    pthread_mutex_unlock(&st_coll_lock);

    st_cuda_ipc_destroy(plan->ipc);
    st_shm_destroy(plan->shm);
    st_hier_destroy(plan->hier);
    st_topo_destroy(plan->topo);
    st_mem_free(plan->stage, plan->stage_size);
    for (l = 0; l < STRATA_LEVEL_LAST; l++) {
        if ((plan->comms_made & (1u << l)) && plan->level_comm[l] != MPI_COMM_NULL) {
            PMPI_Comm_free(&plan->level_comm[l]);
        }
        if ((plan->comms_made & (1u << (8 + l))) && plan->leader_comm[l] != MPI_COMM_NULL) {
            PMPI_Comm_free(&plan->leader_comm[l]);
        }
    }
    if (plan->comm != MPI_COMM_NULL) {
        PMPI_Comm_free(&plan->comm);
    }
    free(plan);
}

static int st_plan_delete_cb(MPI_Comm comm, int keyval, void *attr, void *extra)
{
    /* what freeing the plan's communicators calls back (a user's callbacks, should a
     * communicator carry them) goes to PMPI: no plan is built on a dying one */
    st_coll_in_lib++;
    st_plan_destroy((st_plan_t*)attr);
    st_coll_in_lib--;
    return MPI_SUCCESS;
}

/* This thread's slot for @a comm in st_coll_known. */
static inline st_coll_known_t *st_plan_known(MPI_Comm comm)
{
    return &st_coll_known[(((uintptr_t)comm * 0x9e3779b97f4a7c15ULL) >> 32) % ST_COLL_KNOWN];
}

/* The plan of @a comm if this thread looked it up since the last plan was freed. */
static inline st_plan_t *st_plan_known_get(MPI_Comm comm)
{
    const st_coll_known_t *k = st_plan_known(comm);

    return (k->comm == comm && k->freed == atomic_load(&st_coll_plans_freed)) ? k->plan : NULL;
}

/* The plan cached on @a comm, created (without communication) on first sight. */
static st_plan_t *st_plan_get(MPI_Comm comm)
{
    st_coll_known_t *k = st_plan_known(comm);
    uint64_t freed     = atomic_load(&st_coll_plans_freed);
    st_plan_t *plan;
    int found;

    if (k->comm == comm && k->freed == freed && k->plan != NULL) {
        return k->plan;
    }
    if (PMPI_Comm_get_attr(comm, st_coll_keyval, &plan, &found) != MPI_SUCCESS) {
        return NULL;
    }
    if (found) {
        *k = (st_coll_known_t){comm, plan, freed};
        return plan;
    }

    plan = calloc(1, sizeof(*plan));
    if (plan == NULL) {
        return NULL;
    }
    plan->user_comm = comm;
    plan->comm      = MPI_COMM_NULL;
    PMPI_Comm_test_inter(comm, &plan->is_inter);
    PMPI_Comm_rank(comm, &plan->rank);
    PMPI_Comm_size(comm, &plan->size);
    if (PMPI_Comm_set_attr(comm, st_coll_keyval, plan) != MPI_SUCCESS) {
        free(plan);
        return NULL;
    }
    pthread_mutex_lock(&st_coll_lock);
    plan->next = st_coll_plans;
    if (st_coll_plans != NULL) {
        st_coll_plans->prev = plan;
    }
    st_coll_plans = plan;
    pthread_mutex_unlock(&st_coll_lock);
    *k = (st_coll_known_t){comm, plan, freed};
    return plan;
}

int st_coll_all_ok(MPI_Comm comm, int ok)
{
    st_mpi_allreduce(&ok, 1, MPI_INT, MPI_MIN, comm);
    return ok;
}

st_status_t st_coll_node_shm(MPI_Comm node_comm, const st_topo_t *topo, st_shm_t **shm_p)
{
    int *group = malloc((size_t)topo->node_size * sizeof(int));
    int *pkg   = malloc((size_t)topo->node_size * sizeof(int));
    st_status_t status = ST_ERR_NO_MEMORY;
    int i, r;

    *shm_p = NULL;
    if (st_coll_all_ok(node_comm, group != NULL && pkg != NULL)) {
        for (i = 0; i < topo->node_size; i++) {
            r        = topo->node_ranks[i];
            group[i] = topo->places[r].socket;
            pkg[i]   = topo->places[r].package;
        }
        status = st_shm_create(node_comm, topo->socket_level ? group : NULL, pkg, shm_p);
    }
    free(group);
    free(pkg);
    /* the latency path's threshold, from each rank's own facts (STRATA_SMALL_MSG=auto:
     * the cores it sees, the ranks of its job on its machine), may differ between
     * ranks that do not share those (a communicator joining spawned jobs): the node's
     * ranks take the least, so that all choose the same path */
    if (st_coll_all_ok(node_comm, status == ST_OK)) {
        uint64_t small = st_shm_small_msg(*shm_p);

        st_mpi_allreduce(&small, 1, MPI_UINT64_T, MPI_MIN, node_comm);
        st_shm_set_small_msg(*shm_p, (size_t)small);
    } else if (status == ST_OK) {
        st_shm_destroy(*shm_p);
        *shm_p = NULL;
        status = ST_ERR_NO_RESOURCE;   /* (another rank's failure) */
    }
    return status;
}

/* FNV-1a of @a n bytes */
static uint64_t st_coll_hash(const void *p, size_t n)
{
    const unsigned char *b = p;
    uint64_t h = 14695981039346656037ULL;
    size_t i;

    for (i = 0; i < n; i++) {
        h = (h ^ b[i]) * 1099511628211ULL;
    }
    return h;
}

/* Fill h[0..n) with a hash of each knob the ranks must hold alike (0 for the
 * others) and h[n..2n) with their complements: after an allreduce (MAX) of the 2n,
 * knob i agrees on every rank iff h[i] == ~h[n + i]. */
static void st_coll_config_hashes(uint64_t *h, int n, const st_config_field_t *f)
{
    size_t size;
    void *mine;
    int i;

    for (i = 0; i < n; i++) {
        mine = st_config_value(&f[i], &st_config, &size);
        if (f[i].type == ST_CONFIG_STRING) {
            size = strnlen(mine, size);
        }
        h[i]     = f[i].job ? st_coll_hash(mine, size) : 0;
        h[n + i] = ~h[i];
    }
}

/*
 * Collective over @a comm: nonzero when its ranks hold every job knob alike.
 * MPI_Init made them so; MPI initialized behind Strata's back (a binding that
 * calls PMPI_Init) leaves each rank its own environment's, and ranks deciding
 * from different thresholds would wait for each other on different paths.
 */
static int st_coll_config_alike(MPI_Comm comm)
{
    int n, i, alike = 1;
    const st_config_field_t *f = st_config_fields(&n);
    uint64_t h[2 * n];

    st_coll_config_hashes(h, n, f);
    if (st_mpi_allreduce(h, 2 * n, MPI_UINT64_T, MPI_MAX, comm) != MPI_SUCCESS) {
        return 0;
    }
    for (i = 0; i < n; i++) {
        alike &= (h[i] == ~h[n + i]);
    }
    return alike;
}

/* The ranks of @a plan's communicator hold different knobs: every call on it goes to
 * PMPI_Allreduce (said once per process, by rank 0 of such a communicator). */
static void st_plan_unalike(st_plan_t *plan)
{
    static atomic_int warned;

    plan->alike           = -1;
    plan->state           = ST_PLAN_FALLBACK;
    plan->fallback_reason = STRATA_FALLBACK_CONFIG;
    if (plan->rank == 0 && atomic_exchange(&warned, 1) == 0) {
        st_warn("the ranks' STRATA_* settings differ (ranks of different jobs, spawned or "
                "connected, or MPI initialized without Strata's MPI_Init: they were not "
                "made alike): communicators whose ranks differ use PMPI_Allreduce (give "
                "every rank the same: mpirun -x, or strata-run)");
    }
}

/* Does @a comm hold processes of another MPI_COMM_WORLD (spawned or connected jobs)?
 * The same answer on every rank: each sees the other jobs' members outside its own
 * world, and a communicator within one world has no such member. */
static int st_coll_beyond_world(MPI_Comm comm, int size)
{
    MPI_Group group, world, both;
    int in = size;

    if (PMPI_Comm_group(comm, &group) != MPI_SUCCESS) {
        return 0;
    }
    if (PMPI_Comm_group(MPI_COMM_WORLD, &world) == MPI_SUCCESS) {
        if (PMPI_Group_intersection(group, world, &both) == MPI_SUCCESS) {
            PMPI_Group_size(both, &in);
            PMPI_Group_free(&both);
        }
        PMPI_Group_free(&world);
    }
    PMPI_Group_free(&group);
    return in < size;
}

/*
 * MPI initialized without Strata's MPI_Init (a binding that calls PMPI_Init), or a
 * communicator joining jobs (MPI_Comm_spawn, MPI_Comm_connect: each job agreed its
 * own knobs at its MPI_Init, not the others'): the knobs were never agreed over it,
 * and ranks that differ in STRATA_ENABLE or STRATA_CHECK_ARGS would run different
 * collectives on their first call on a communicator (one in PMPI_Allreduce, another
 * setting up a plan) and wait for each other forever. So, before anything else on
 * such a communicator, every rank, enabled or not, compares its knobs over it
 * (collective, once per communicator); where they differ, every call on it goes to
 * PMPI_Allreduce. @return nonzero when alike.
 */
static int st_plan_alike(st_plan_t *plan)
{
    if (ST_LIKELY(plan->alike != 0)) {
        return plan->alike > 0;
    }
    plan->alike = 1;
    if (!plan->is_inter && plan->size > 1 &&
        (!atomic_load(&st_coll_agreed) || st_coll_beyond_world(plan->user_comm, plan->size)) &&
        !st_coll_config_alike(plan->user_comm)) {
        st_plan_unalike(plan);
    }
    return plan->alike > 0;
}

/*
 * The plan's private communicator: the user's ranks in their order (collective over
 * the user's communicator), made without choosing a context id over the user's
 * communicator. The user may have a nonblocking creation pending on it (MPI_Comm_idup,
 * then MPI_Allreduce, then MPI_Wait is legal), and Open MPI 4.1's choice of an id over
 * a communicator whose idup is choosing one hangs where the ranks' free ids differ: a
 * split there on every run of 4 ranks, MPI_Comm_create on about a third of 3 ranks'
 * (tests/test_fallback, test_idup_pending). So MPI_Comm_create_group of the user's
 * group over st_coll_parent, a copy of MPI_COMM_WORLD nobody else uses, tagged by the
 * world rank of the group's rank 0 and a count of that rank's (told to the others:
 * concurrent creations over one parent need distinct tags). Not a dup, which copies
 * the user's attributes, running their copy (and later delete) callbacks on a
 * communicator they never made (create_group copies the parent's: none). A group
 * beyond MPI_COMM_WORLD (processes spawned or connected), or no parent (MPI started
 * behind our back): MPI_Comm_create of the user's communicator, as before.
 */
static int st_plan_private(st_plan_t *plan)
{
    MPI_Group group, world, both;
    int rc = PMPI_Comm_group(plan->user_comm, &group), n = 0, in = -1, zero = 0, root = 0;
    unsigned made = 0, per;

    if (rc != MPI_SUCCESS) {
        return rc;
    }
    if (st_coll_parent != MPI_COMM_NULL &&
        PMPI_Comm_group(MPI_COMM_WORLD, &world) == MPI_SUCCESS) {
        /* (the same group on every rank: the same answer) */
        if (PMPI_Group_intersection(group, world, &both) == MPI_SUCCESS) {
            PMPI_Group_size(both, &in);
            PMPI_Group_free(&both);
        }
        PMPI_Group_size(group, &n);
        PMPI_Group_translate_ranks(group, 1, &zero, world, &root);
        PMPI_Group_free(&world);
    }
    if (in == n && n > 0) {
        if (plan->rank == 0) {
            made = atomic_fetch_add(&st_coll_made, 1);
        }
        rc = PMPI_Bcast(&made, 1, MPI_UNSIGNED, 0, plan->user_comm);
        if (rc == MPI_SUCCESS) {
            /* distinct for up to per creations in flight at one rank 0 (st_coll_tag_ub
               at least 32767, MPI's least) */
            per = ST_MAX(16u, ((unsigned)st_coll_tag_ub + 1u) / (unsigned)st_coll_world_size);
            rc  = PMPI_Comm_create_group(st_coll_parent, group,
                                         (int)(((unsigned)root * per + made % per) %
                                               ((unsigned)st_coll_tag_ub + 1u)),
                                         &plan->comm);
        }
    } else {
        rc = PMPI_Comm_create(plan->user_comm, group, &plan->comm);
    }
    PMPI_Group_free(&group);
    return rc;
}

/*
 * Collective over the plan's communicator: called by every rank on the same call.
 * Builds the layout (topo/), then, on one node, the shared-memory segment.
 */
static void st_plan_setup(st_plan_t *plan)
{
    st_status_t status;

    plan->state           = ST_PLAN_FALLBACK;
    plan->fallback_reason = STRATA_FALLBACK_SHM;
    if (st_plan_private(plan) != MPI_SUCCESS) {
        plan->comm = MPI_COMM_NULL;
    } else {
        PMPI_Comm_set_name(plan->comm, "strata-private");
    }
    /* a step that failed on some ranks only must not split them onto different
     * paths: agree (on the user's comm, the one every rank surely has) */
    if (!st_coll_all_ok(plan->user_comm, plan->comm != MPI_COMM_NULL)) {
        st_debug("private communicator setup failed: falling back");
        return;
    }
    status = st_topo_build(plan->comm, &st_coll_proc, &plan->topo);
    if (!st_coll_all_ok(plan->comm, status == ST_OK)) {
        st_topo_destroy(plan->topo);
        plan->topo = NULL;
        st_debug("layout failed (%s): falling back", strata_status_string(status));
        return;
    }
    if (!st_coll_config_alike(plan->comm)) {
        st_plan_unalike(plan);
        return;
    }
    /* from here on, every rank decides from the same table */
    if (!st_config.enable) {
        plan->fallback_reason = STRATA_FALLBACK_DISABLED;
        return;
    }
    if (plan->size == 1) {
        plan->fallback_reason = STRATA_FALLBACK_COMM_SIZE;
        return;
    }
    if (plan->topo->nnodes > 1) {
        status = st_hier_create(plan->comm, plan->topo,
                                (st_config.small_msg == ST_CONFIG_SIZE_AUTO)
                                        ? ST_SMALL_MSG_DEFAULT
                                        : st_config.small_msg,
                                &plan->hier);
        if (status != ST_OK) {
            plan->fallback_reason = STRATA_FALLBACK_MULTINODE;
            st_debug("communicator spans %d nodes, no inter-node level (%s): falling back",
                     plan->topo->nnodes, strata_status_string(status));
            return;
        }
        plan->state = ST_PLAN_READY;
        return;
    }

    status = st_coll_node_shm(plan->comm, plan->topo, &plan->shm);
    if (status == ST_OK && (plan->ipc = st_cuda_ipc_create(plan->rank, plan->size)) == NULL) {
        status = ST_ERR_NO_MEMORY;
    }
    if (!st_coll_all_ok(plan->comm, status == ST_OK)) {
        st_cuda_ipc_destroy(plan->ipc);
        plan->ipc = NULL;
        st_shm_destroy(plan->shm);
        plan->shm = NULL;
        st_debug("shared memory unavailable (%s): falling back", strata_status_string(status));
        return;
    }
    plan->state = ST_PLAN_READY;
}

/* ---- the fast-path decision ---- */

/*
 * Uses only facts that are identical on every rank of a correct call (comm shape,
 * op, datatype, count), so all ranks decide alike before any data moves.
 */
int st_coll_decide(int is_inter, int size, const void *sbuf, const void *rbuf, int count,
                   MPI_Datatype dtype, MPI_Op mop, int *type_p, int *op_p)
{
    unsigned ops;

    if (is_inter) {
        return STRATA_FALLBACK_INTERCOMM;
    }
    if (size == 1) {
        return STRATA_FALLBACK_COMM_SIZE;
    }
    *op_p = st_mpi_map_op(mop);
    if (*op_p < 0) {
        return STRATA_FALLBACK_USER_OP;
    }
    *type_p = st_mpi_map_type(dtype, &ops);
    if (*type_p < 0) {
        return STRATA_FALLBACK_DATATYPE;
    }
    if (!(ops & (1u << *op_p))) {
        return STRATA_FALLBACK_OP_TYPE;
    }
    /* let MPI report these; one element in one buffer is no error to Open MPI (its
     * aliasing check is for count > 1), nor may it be a path of its own: a rank
     * aliasing while the others did not went alone to PMPI_Allreduce (a hang). The
     * caller reduces it in place. */
    if (count < 0 || rbuf == MPI_IN_PLACE || (sbuf == rbuf && count > 1)) {
        return STRATA_FALLBACK_ARGS;
    }
    return -1;
}

/* STRATA_CHECK_ARGS: make sure every rank took the same decision. */
static int st_coll_agree(st_plan_t *plan, int reason)
{
    int v[2] = {reason, -reason};

    if (st_mpi_allreduce(v, 2, MPI_INT, MPI_MIN, plan->user_comm) != MPI_SUCCESS) {
        return reason;
    }
    if (v[0] != -v[1]) {
        if (plan->rank == 0) {
            st_error("ranks disagree on the MPI_Allreduce path (mismatched datatypes?); "
                     "using PMPI_Allreduce for this call");
        }
        return STRATA_FALLBACK_DATATYPE;
    }
    return reason;
}

/* ---- init / finalize ---- */

static void st_coll_init_once(void)
{
    st_config_init();
    PMPI_Comm_rank(MPI_COMM_WORLD, &st_coll_world_rank);
    st_coll_proc.world_rank = st_coll_world_rank; /* once: plans of other threads read it */
    PMPI_Comm_size(MPI_COMM_WORLD, &st_coll_world_size);
    st_log_set_rank(st_coll_world_rank);
    if (st_coll_world_rank == 0 || st_coll_config_errors_differ) {
        st_config_report();
    }
    /* plans (and the layout API) work even when the allreduce is disabled */
    if (PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, st_plan_delete_cb, &st_coll_keyval,
                                NULL) != MPI_SUCCESS) {
        st_coll_keyval = MPI_KEYVAL_INVALID;
        st_warn("initialization failed; every MPI_Allreduce goes to PMPI_Allreduce");
        return;
    }
    if (!st_config.enable) {
        st_debug("disabled by STRATA_ENABLE");
        return;
    }
    if (st_mpi_map_init() != ST_OK) {
        st_warn("initialization failed; every MPI_Allreduce goes to PMPI_Allreduce");
        return;
    }
    st_coll_active = 1;
}

/* Also called lazily, for MPI initialized behind our back (another language binding). */
static int st_coll_ensure_init(void)
{
    int initialized = 0, finalized = 1;

    if (ST_LIKELY(st_coll_active)) {
        return 1;
    }
    PMPI_Initialized(&initialized);
    PMPI_Finalized(&finalized);
    if (!initialized || finalized || st_coll_finalizing) {
        return 0;
    }
    pthread_once(&st_coll_once, st_coll_init_once);
    return st_coll_active;
}

/* For the layout API: MPI is up and plans can be cached (enabled or not). */
static int st_coll_ensure_plans(void)
{
    int finalized = 1;

    st_coll_ensure_init();
    PMPI_Finalized(&finalized);
    return !finalized && !st_coll_finalizing && st_coll_keyval != MPI_KEYVAL_INVALID;
}

static void st_coll_stats_line(const char *who, const char *name, int size,
                               const strata_comm_stats_t *s)
{
    char fb[512], dev[96] = "", ranks[16] = "-";
    size_t used = 0;
    int i;

    fb[0] = '\0';
    if (size > 0) {   /* (0: the freed communicators, of various sizes) */
        snprintf(ranks, sizeof(ranks), "%d", size);
    }
    for (i = 0; i < STRATA_FALLBACK_LAST; i++) {
        if (s->fallback_calls[i] != 0 && used < sizeof(fb)) {
            used += (size_t)snprintf(fb + used, sizeof(fb) - used, " %s=%llu",
                                     st_fallback_names[i],
                                     (unsigned long long)s->fallback_calls[i]);
        }
    }
    if (s->device_calls != 0) {   /* only in CUDA jobs */
        snprintf(dev, sizeof(dev), " (device %llu, CUDA IPC %llu)",
                 (unsigned long long)s->device_calls, (unsigned long long)s->ipc_calls);
    }
    fprintf(stderr, "[strata%s] %-24s ranks %-5s fast %llu calls%s %.3f MB %.6f s;"
            " fallback%s\n", who, name, ranks, (unsigned long long)s->fast_calls, dev,
            s->fast_bytes / 1e6, s->fast_seconds, used ? fb : " none");
}

/* STRATA_STATS: 1 = rank 0 prints its communicators and the job totals, 2 = every rank. */
static void st_coll_stats_report(void)
{
    strata_comm_stats_t mine, total;
    char who[32], name[MPI_MAX_OBJECT_NAME];
    st_plan_t *plan;
    int len;

    memset(&mine, 0, sizeof(mine));
    pthread_mutex_lock(&st_coll_lock);
    st_stats_add(&mine, &st_coll_retired);
    for (plan = st_coll_plans; plan != NULL; plan = plan->next) {
        st_stats_add(&mine, &plan->stats);
    }
    pthread_mutex_unlock(&st_coll_lock);

    memset(&total, 0, sizeof(total));
    PMPI_Reduce(&mine.fast_calls, &total.fast_calls, 2, MPI_UINT64_T, MPI_SUM, 0,
                MPI_COMM_WORLD);
    PMPI_Reduce(&mine.fast_seconds, &total.fast_seconds, 1, MPI_DOUBLE, MPI_MAX, 0,
                MPI_COMM_WORLD);
    PMPI_Reduce(mine.fallback_calls, total.fallback_calls, STRATA_FALLBACK_LAST, MPI_UINT64_T,
                MPI_SUM, 0, MPI_COMM_WORLD);
    PMPI_Reduce(&mine.device_calls, &total.device_calls, 2, MPI_UINT64_T, MPI_SUM, 0,
                MPI_COMM_WORLD);

    if (st_config.stats < 2 && st_coll_world_rank != 0) {
        return;
    }
    snprintf(who, sizeof(who), " %d", st_coll_world_rank);
    for (plan = st_coll_plans; plan != NULL; plan = plan->next) {
        name[0] = '\0';
        PMPI_Comm_get_name(plan->user_comm, name, &len);
        st_coll_stats_line(who, name[0] ? name : "(unnamed)", plan->size, &plan->stats);
    }
    /* the freed ones in one line: a job that makes and frees communicators by the
     * thousand (a framework's subgroups, a library's dup per call) gets a few lines */
    if (st_coll_nretired != 0) {
        snprintf(name, sizeof(name), "(%u freed comms)", st_coll_nretired);
        st_coll_stats_line(who, name, 0, &st_coll_retired);
    }
    if (st_coll_world_rank == 0) {
        st_coll_stats_line(" job", "all ranks, all comms", st_coll_world_size, &total);
    }
}

int st_coll_finalize(void)
{
    st_plan_t *plan;
    int report, initialized = 0, finalized = 1;

    /* the report's reductions by every rank or none: where MPI started behind our
     * back (PMPI_Init), STRATA_STATS is each rank's own (not agreed at MPI_Init), and
     * only the ranks that called MPI_Allreduce had set Strata up */
    PMPI_Initialized(&initialized);
    PMPI_Finalized(&finalized);
    if (initialized && !finalized && !st_coll_finalizing) {
        st_coll_ensure_init();
        report = (st_coll_active && st_config.stats != 0);
        st_coll_in_lib = 1;
        if (PMPI_Allreduce(MPI_IN_PLACE, &report, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD) ==
                    MPI_SUCCESS &&
            report) {
            st_coll_stats_report();
        }
        st_coll_in_lib = 0;
    }
    if (st_coll_keyval != MPI_KEYVAL_INVALID && !st_coll_finalizing) {
        st_coll_in_lib = 1;
        st_coll_finalizing = 1;
        st_coll_active     = 0;
        for (;;) {
            pthread_mutex_lock(&st_coll_lock);
            plan = st_coll_plans;
            pthread_mutex_unlock(&st_coll_lock);
            if (plan == NULL) {
                break;
            }
            /* the delete callback unlinks and frees the plan; if MPI cannot run it
             * (a handle gone behind our back), free the plan here */
            if (PMPI_Comm_delete_attr(plan->user_comm, st_coll_keyval) != MPI_SUCCESS) {
                st_plan_destroy(plan);
            }
        }
        PMPI_Comm_free_keyval(&st_coll_keyval);
        st_coll_in_lib = 0;
    }
    if (st_coll_parent != MPI_COMM_NULL) {
        PMPI_Comm_free(&st_coll_parent);
    }
    st_shm_release_kept();   /* (the plans' segments, kept for more plans) */
#if HAVE_UCX
    st_ucx_finalize();   /* after the plans (and their lanes), before MPI goes */
#endif
    return PMPI_Finalize();
}

/* ---- MPI_Allreduce ---- */

/* A staging step failed: the other ranks are already inside the collective, so this
 * rank can neither leave it nor give a wrong answer. */
static void st_coll_stage_fatal(MPI_Comm comm, const char *what, size_t bytes)
{
    st_error("MPI_Allreduce on a device buffer: %s (%zu bytes); aborting the job", what,
             bytes);
    PMPI_Abort(comm, 1);
}

/* What the driver says of the user's buffers: one query per buffer per call (the
 * send buffer is host memory in place), none while libcuda is not loaded (one
 * look at that per call, not one per buffer). */
static void st_coll_where(const void *sbuf, const void *rbuf, st_cuda_buf_t *s_p,
                          st_cuda_buf_t *r_p)
{
    if (ST_LIKELY(!st_cuda_loaded())) {
        memset(s_p, 0, sizeof(*s_p));
        memset(r_p, 0, sizeof(*r_p));
        s_p->kind = r_p->kind = ST_MEM_HOST;
        return;
    }
    st_cuda_query((sbuf == MPI_IN_PLACE) ? NULL : sbuf, s_p);
    st_cuda_query(rbuf, r_p);
}

/* The algorithm of the plan on host buffers: one node, or several. */
static void st_coll_host(st_plan_t *plan, const void *sbuf, void *rbuf, size_t count,
                         st_type_t type, st_op_t op)
{
    if (plan->hier != NULL) {
        st_hier_allreduce(plan->hier, sbuf, rbuf, count, type, op, plan->comm);
    } else {
        st_shm_allreduce(plan->shm, sbuf, rbuf, count, type, op, plan->comm);
    }
}

/*
 * The fast path. On one node, large calls first try the GPU path (every rank,
 * whatever its buffers: st_cuda_ipc.c), which reduces device buffers GPU to GPU
 * when every rank's are device memory. Otherwise device buffers (a CUDA program's)
 * are staged: copied into host memory kept with the plan, reduced there, copied
 * back. Which path runs never depends on one rank's buffers alone, so ranks may
 * mix host and device buffers.
 */
static void st_coll_fast(st_plan_t *plan, const void *sbuf, void *rbuf, size_t count,
                         st_type_t type, st_op_t op)
{
    size_t bytes = count * st_type_size(type), need;
    st_cuda_buf_t sinfo, rinfo;
    const st_cuda_buf_t *src_info = (sbuf == MPI_IN_PLACE) ? &rinfo : &sinfo;
    const void *s;
    void *r, *grown;
    int rc, s_dev, r_dev;

    st_coll_where(sbuf, rbuf, &sinfo, &rinfo);
    s_dev = (sinfo.kind == ST_MEM_DEVICE);
    r_dev = (rinfo.kind == ST_MEM_DEVICE);

    plan->stats.device_calls += (s_dev || r_dev);
    /* the program's copies into its buffers may still be landing (st_cuda_settle):
     * the paths below read them on Strata's stream, or the peers do through IPC */
    if ((s_dev && st_cuda_settle(sinfo.ctx) != 0) ||
        (r_dev && (!s_dev || rinfo.ctx != sinfo.ctx) && st_cuda_settle(rinfo.ctx) != 0)) {
        st_coll_stage_fatal(plan->user_comm, "waiting for the program's copies failed", bytes);
        return;
    }
    if (plan->ipc != NULL && bytes >= st_config.cuda_ipc_min) {
        rc = st_cuda_ipc_allreduce(plan->ipc, plan->shm, plan->comm, sbuf, rbuf, count, type,
                                   op, src_info, &rinfo);
        if (rc == 1) {
            plan->stats.ipc_calls++;
            st_trace("CUDA IPC: %zu bytes", bytes);
            return;
        }
        if (rc < 0) {
            st_coll_stage_fatal(plan->user_comm, "a CUDA call of the IPC path failed", bytes);
            return;
        }
    }
    if (ST_LIKELY(!s_dev && !r_dev)) {
        st_coll_host(plan, sbuf, rbuf, count, type, op);
        return;
    }
    if (plan->hier != NULL && st_hier_allreduce_device(plan->hier, sbuf, rbuf, count, type, op,
                                                       plan->comm, src_info, &rinfo)) {
        st_trace("staging device buffers in pieces: %zu bytes", bytes);
        return;
    }
    need = (s_dev ? bytes : 0) + (r_dev ? bytes : 0);
    if (plan->stage_size < need) {
        if ((grown = st_mem_alloc(need)) == NULL) {
            st_coll_stage_fatal(plan->user_comm, "no host memory to stage it", need);
            return;
        }
        st_mem_free(plan->stage, plan->stage_size);
        plan->stage      = grown;
        plan->stage_size = need;
    }
    s = sbuf;
    r = r_dev ? plan->stage : rbuf;
    if (s_dev) {
        s = (char*)plan->stage + (r_dev ? bytes : 0);
        if (st_cuda_copy((void*)s, sbuf, bytes, sinfo.ctx) != 0) {
            st_coll_stage_fatal(plan->user_comm, "copy to host failed", bytes);
        }
    } else if (sbuf == MPI_IN_PLACE && r_dev && st_cuda_copy(r, rbuf, bytes, rinfo.ctx) != 0) {
        st_coll_stage_fatal(plan->user_comm, "copy to host failed", bytes);
    }
    st_trace("staging device buffers: %zu bytes (send %s, receive %s)", bytes,
             s_dev ? "device" : (sbuf == MPI_IN_PLACE ? "in place" : "host"),
             r_dev ? "device" : "host");
    st_coll_host(plan, s, r, count, type, op);
    if (r_dev && st_cuda_copy(rbuf, r, bytes, rinfo.ctx) != 0) {
        st_coll_stage_fatal(plan->user_comm, "copy back to the device failed", bytes);
    }
}

/* Does the MPI library take device buffers itself (MPIX_Query_cuda_support)? Asked
 * once; 0 where the library does not say. */
static int st_coll_mpi_cuda_aware(void)
{
    static int answer = -1;
    int (*query)(void);

    if (answer < 0) {
        *(void**)&query = dlsym(RTLD_DEFAULT, "MPIX_Query_cuda_support");
        answer          = (query != NULL && query() == 1);
    }
    return answer;
}

/*
 * A call handed to PMPI_Allreduce with a device buffer, when the MPI library is not
 * CUDA-aware: the buffers' data ranges (true extent, count - 1 extents beyond) are
 * copied to host memory, PMPI_Allreduce runs on the copies, and the receive range
 * is copied back whole; it is copied in first too, so that the gaps of a derived
 * type keep their bytes. Each rank stages alone; the others cannot tell. A send
 * buffer that is the receive buffer stays one buffer, so that Open MPI sees it.
 */
static int st_coll_pmpi_staged(const void *sbuf, void *rbuf, int count,
                               MPI_Datatype dtype, MPI_Op mop, MPI_Comm comm,
                               const st_cuda_buf_t *sinfo, const st_cuda_buf_t *rinfo)
{
    int s_dev = (sinfo->kind == ST_MEM_DEVICE), r_dev = (rinfo->kind == ST_MEM_DEVICE);
    MPI_Aint lb, extent, tlb, textent;
    size_t span;
    char *hs = NULL, *hr = NULL;
    const void *s = sbuf;
    void *r = rbuf;
    int rc;

    if (PMPI_Type_get_extent(dtype, &lb, &extent) != MPI_SUCCESS ||
        PMPI_Type_get_true_extent(dtype, &tlb, &textent) != MPI_SUCCESS || extent < 0 ||
        textent < 0 || count <= 0) {
        return PMPI_Allreduce(sbuf, rbuf, count, dtype, mop, comm);  /* MPI's own error */
    }
    span = (size_t)textent + (size_t)(count - 1) * (size_t)extent;
    if ((s_dev && (hs = malloc(span)) == NULL) || (r_dev && (hr = malloc(span)) == NULL)) {
        st_coll_stage_fatal(comm, "no host memory to stage it", span);
    }
    if (s_dev) {
        if (st_cuda_copy(hs, (const char*)sbuf + tlb, span, sinfo->ctx) != 0) {
            st_coll_stage_fatal(comm, "copy to host failed", span);
        }
        s = hs - tlb;
    }
    if (r_dev) {
        if (st_cuda_copy(hr, (char*)rbuf + tlb, span, rinfo->ctx) != 0) {
            st_coll_stage_fatal(comm, "copy to host failed", span);
        }
        r = hr - tlb;
    }
    if (sbuf == rbuf) {
        s = r;   /* aliased: Open MPI's to refuse (count > 1) as on host memory, not hidden */
    }
    st_trace("fallback on a device buffer: staged, %zu bytes", span);
    rc = PMPI_Allreduce(s, r, count, dtype, mop, comm);
    if (r_dev && rc == MPI_SUCCESS &&
        st_cuda_copy((char*)rbuf + tlb, hr, span, rinfo->ctx) != 0) {
        st_coll_stage_fatal(comm, "copy back to the device failed", span);
    }
    free(hs);
    free(hr);
    return rc;
}

/* A fallback call: to PMPI_Allreduce, through host copies of device buffers when
 * the library would not take them. */
static int st_coll_pmpi(const void *sbuf, void *rbuf, int count,
                        MPI_Datatype dtype, MPI_Op mop, MPI_Comm comm)
{
    st_cuda_buf_t sinfo, rinfo;

    if (ST_LIKELY(!st_cuda_loaded()) || st_coll_mpi_cuda_aware()) {
        return PMPI_Allreduce(sbuf, rbuf, count, dtype, mop, comm);
    }
    st_coll_where(sbuf, rbuf, &sinfo, &rinfo);
    if (sinfo.kind == ST_MEM_HOST && rinfo.kind == ST_MEM_HOST) {
        return PMPI_Allreduce(sbuf, rbuf, count, dtype, mop, comm);
    }
    return st_coll_pmpi_staged(sbuf, rbuf, count, dtype, mop, comm, &sinfo, &rinfo);
}

/* A rank where Strata is disabled (STRATA_ENABLE=n): on a communicator whose knobs
 * were not agreed (MPI started behind our back, or one joining jobs) it takes part in
 * the communicator's agreement (st_plan_alike), which the enabled ranks run on their
 * first call on it. */
static void st_coll_lazy_alike(MPI_Comm comm)
{
    int initialized = 0, finalized = 1;
    st_plan_t *plan;

    if (st_coll_keyval == MPI_KEYVAL_INVALID || st_coll_finalizing) {
        return;
    }
    PMPI_Initialized(&initialized);
    PMPI_Finalized(&finalized);
    if (!initialized || finalized) {
        return;
    }
    st_coll_in_lib = 1;
    plan           = st_plan_get(comm);
    if (plan != NULL) {
        st_plan_alike(plan);
    }
    st_coll_in_lib = 0;
}

static int st_coll_allreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dtype,
                             MPI_Op mop, MPI_Comm comm)
{
    st_plan_t *plan;
    int reason, type = 0, op = 0, rc;
    double t0;

    /* a comm being freed has lost its plan already: a user attribute callback
     * calling MPI_Allreduce on it must not build a new one. A null handle (a zeroed
     * MPI_Comm; PMPI_Comm_f2c of a freed Fortran handle) is Open MPI's to report:
     * looking up its plan reported it first, as MPI_Comm_get_attr's error. The
     * callback's device buffers are staged as on any fallback */
    if (ST_UNLIKELY(st_coll_in_lib || comm == MPI_COMM_NULL || comm == (MPI_Comm)NULL)) {
        return PMPI_Allreduce(sbuf, rbuf, count, dtype, mop, comm);
    }
    if (ST_UNLIKELY(st_coll_freeing != NULL && st_coll_is_freeing(comm))) {
        return st_coll_pmpi(sbuf, rbuf, count, dtype, mop, comm);
    }
    if (ST_UNLIKELY(!st_coll_active)) {
        /* disabled here (STRATA_ENABLE=n), and this thread already took part in the
         * agreement of @a comm's ranks (st_coll_lazy_alike): nothing of Strata's to do */
        plan = st_plan_known_get(comm);
        if (plan != NULL && plan->alike != 0 && !st_coll_finalizing) {
            return PMPI_Allreduce(sbuf, rbuf, count, dtype, mop, comm);
        }
    }
    if (ST_UNLIKELY(!st_coll_ensure_init())) {
        if (st_coll_finalizing && st_config.enable) {
            /* a callback of MPI_Finalize (MPI_COMM_SELF's attributes): the plans are
             * gone, the call is Open MPI's, with device buffers staged */
            return st_coll_pmpi(sbuf, rbuf, count, dtype, mop, comm);
        }
        st_coll_lazy_alike(comm);   /* disabled here: perhaps not on the other ranks */
        return PMPI_Allreduce(sbuf, rbuf, count, dtype, mop, comm);
    }
    st_coll_in_lib = 1;

    plan = st_plan_get(comm);
    if (ST_UNLIKELY(plan == NULL)) {
        st_coll_in_lib = 0;
        return PMPI_Allreduce(sbuf, rbuf, count, dtype, mop, comm);
    }
    st_plan_alike(plan);   /* (then a plan in fallback: the call goes to PMPI below) */

    reason = st_coll_decide(plan->is_inter, plan->size, sbuf, rbuf, count, dtype, mop, &type,
                            &op);
    if (ST_UNLIKELY(st_config.check_args) && plan->alike >= 0 && !plan->is_inter &&
        plan->size > 1) {
        reason = st_coll_agree(plan, reason);
    }
    if (reason < 0 && ST_UNLIKELY(plan->state != ST_PLAN_READY)) {
        if (plan->state == ST_PLAN_NEW) {
            st_plan_setup(plan);
        }
        if (plan->state == ST_PLAN_FALLBACK) {
            reason = plan->fallback_reason;
        }
    }
    if (reason >= 0) {
        plan->stats.fallback_calls[reason]++;
        st_trace("fallback (%s): count %d", st_fallback_names[reason], count);
        rc = st_coll_pmpi(sbuf, rbuf, count, dtype, mop, comm);
        st_coll_in_lib = 0;
        return rc;
    }

    t0 = PMPI_Wtime();
    if (count > 0) {
        /* (one element in one buffer, st_coll_decide: its value is the contribution) */
        st_coll_fast(plan, (sbuf == rbuf) ? MPI_IN_PLACE : sbuf, rbuf, (size_t)count,
                     (st_type_t)type, (st_op_t)op);
    }
    plan->stats.fast_calls++;
    plan->stats.fast_bytes   += (uint64_t)count * st_type_size((st_type_t)type);
    plan->stats.fast_seconds += PMPI_Wtime() - t0;
    plan->stats.cross_socket_bytes = (plan->shm != NULL)  ? st_shm_cross_bytes(plan->shm)
                                     : (plan->hier != NULL) ? st_hier_cross_bytes(plan->hier)
                                                            : 0;
    st_coll_in_lib = 0;
    return MPI_SUCCESS;
}

/* ---- public introspection ---- */

ST_EXPORT strata_status_t strata_comm_stats(MPI_Comm comm, strata_comm_stats_t *stats_p)
{
    st_plan_t *plan;
    int found, finalized;

    /* a null handle (a zeroed MPI_Comm) is refused here, as MPI_COMM_NULL: looking up
     * its plan would raise MPI_Comm_get_attr's error, fatal by default */
    if (stats_p == NULL || comm == MPI_COMM_NULL || comm == (MPI_Comm)NULL) {
        return STRATA_ERR_INVALID_PARAM;
    }
    if (!st_coll_ensure_plans()) {   /* (MPI up; Strata enabled or not: zeros then) */
        return STRATA_ERR_NOT_INITIALIZED;
    }
    PMPI_Finalized(&finalized);
    if (finalized) {
        /* MPI finalized without our MPI_Finalize (a Fortran main program) */
        return STRATA_ERR_NOT_INITIALIZED;
    }
    memset(stats_p, 0, sizeof(*stats_p));
    if (PMPI_Comm_get_attr(comm, st_coll_keyval, &plan, &found) != MPI_SUCCESS) {
        return STRATA_ERR_INVALID_PARAM;
    }
    if (found) {
        *stats_p = plan->stats;
    }
    return STRATA_OK;
}

/* ---- the layout API ---- */

/* The plan of @a comm with its layout, set up now if it is new (collective). Not
 * on a communicator being freed (a user's attribute delete callback): its plan is
 * gone, and a new one would outlive the handle. */
static strata_status_t st_coll_plan_layout(MPI_Comm comm, st_plan_t **plan_p)
{
    st_plan_t *plan;

    if (comm == MPI_COMM_NULL || comm == (MPI_Comm)NULL || st_coll_is_freeing(comm)) {
        return STRATA_ERR_INVALID_PARAM;   /* (a null handle: as in strata_comm_stats) */
    }
    if (!st_coll_ensure_plans()) {
        return STRATA_ERR_NOT_INITIALIZED;
    }
    plan = st_plan_get(comm);
    if (plan == NULL) {
        return STRATA_ERR_MPI;
    }
    if (plan->is_inter) {
        return STRATA_ERR_UNSUPPORTED;
    }
    if (plan->state == ST_PLAN_NEW) {
        st_plan_setup(plan);
    }
    if (plan->topo == NULL) {
        return STRATA_ERR_MPI;
    }
    *plan_p = plan;
    return STRATA_OK;
}

ST_EXPORT strata_status_t strata_comm_layout(MPI_Comm comm, strata_layout_t *layout_p,
                                             strata_place_t *places)
{
    const st_topo_t *topo;
    strata_status_t status;
    st_plan_t *plan;

    if (layout_p == NULL) {
        return STRATA_ERR_INVALID_PARAM;
    }
    st_coll_in_lib++;
    status = st_coll_plan_layout(comm, &plan);
    st_coll_in_lib--;
    if (status != STRATA_OK) {
        return status;
    }
    topo = plan->topo;
    memset(layout_p, 0, sizeof(*layout_p));
    layout_p->size            = topo->size;
    layout_p->nhosts          = topo->nhosts;
    layout_p->nnodes          = topo->nnodes;
    layout_p->socket_level    = topo->socket_level;
    layout_p->nsockets        = topo->nsockets;
    /* a plan ready, but the process's MPI_Allreduce is Open MPI's (libstrata linked
     * after libmpi, or dlopen'ed as by ctypes): no call takes Strata's path */
    layout_p->fast_path       = (plan->state == ST_PLAN_READY) && strata_active();
    layout_p->fallback_reason = layout_p->fast_path ? STRATA_FALLBACK_LAST
                                : (plan->state == ST_PLAN_READY) ? STRATA_FALLBACK_DISABLED
                                                                 : plan->fallback_reason;
    if (plan->hier != NULL) {
        layout_p->shm_chunk = st_hier_chunk(plan->hier);
        layout_p->small_msg = st_hier_small_msg(plan->hier);
    } else if (plan->shm != NULL) {
        layout_p->shm_chunk = st_shm_chunk(plan->shm);
        layout_p->small_msg = st_shm_small_msg(plan->shm);
    }
    snprintf(layout_p->why, sizeof(layout_p->why), "%s", topo->socket_level ? "" : topo->why);
    if (places != NULL) {
        memcpy(places, topo->places, (size_t)topo->size * sizeof(*places));
    }
    return STRATA_OK;
}

static const char *const st_level_names[STRATA_LEVEL_LAST] = {
    [STRATA_LEVEL_SOCKET] = "socket", [STRATA_LEVEL_NODE] = "node",
    [STRATA_LEVEL_CLUSTER] = "cluster"
};

/* strata_comm_level (leaders = 0) and strata_comm_leaders (leaders = 1). */
static strata_status_t st_coll_level_comm(MPI_Comm comm, strata_level_t level, int leaders,
                                          MPI_Comm *comm_p)
{
    unsigned bit = 1u << ((leaders ? 8 : 0) + (int)level);
    MPI_Comm *slot, made = MPI_COMM_NULL;
    strata_status_t status;
    char name[MPI_MAX_OBJECT_NAME];
    st_plan_t *plan;
    int color;

    if ((unsigned)level >= STRATA_LEVEL_LAST || comm_p == NULL ||
        (leaders && level == STRATA_LEVEL_CLUSTER)) {
        return STRATA_ERR_INVALID_PARAM;
    }
    st_coll_in_lib++;
    status = st_coll_plan_layout(comm, &plan);
    if (status != STRATA_OK || (!leaders && level == STRATA_LEVEL_CLUSTER)) {
        st_coll_in_lib--;
        if (status == STRATA_OK) {
            *comm_p = comm;
        }
        return status;
    }
    slot = leaders ? &plan->leader_comm[level] : &plan->level_comm[level];
    if (!(plan->comms_made & bit)) {
        if (!leaders) {
            color = st_topo_group_color(plan->topo, level);
        } else if (!st_topo_is_leader(plan->topo, level)) {
            color = MPI_UNDEFINED;
        } else {
            /* socket leaders of one node; node leaders of the whole comm */
            color = (level == STRATA_LEVEL_SOCKET)
                            ? st_topo_group_color(plan->topo, STRATA_LEVEL_NODE) : 0;
        }
        if (PMPI_Comm_split(plan->comm, color, plan->rank, &made) != MPI_SUCCESS) {
            st_coll_in_lib--;
            return STRATA_ERR_MPI;
        }
        if (made != MPI_COMM_NULL) {
            snprintf(name, sizeof(name), "strata-%s%s", st_level_names[level],
                     leaders ? "-leaders" : "");
            PMPI_Comm_set_name(made, name);
        }
        *slot             = made;
        plan->comms_made |= bit;
    }
    st_coll_in_lib--;
    *comm_p = *slot;
    return STRATA_OK;
}

ST_EXPORT strata_status_t strata_comm_level(MPI_Comm comm, strata_level_t level,
                                            MPI_Comm *subcomm_p)
{
    return st_coll_level_comm(comm, level, 0, subcomm_p);
}

ST_EXPORT strata_status_t strata_comm_leaders(MPI_Comm comm, strata_level_t level,
                                              MPI_Comm *leaders_p)
{
    return st_coll_level_comm(comm, level, 1, leaders_p);
}

ST_EXPORT int strata_active(void)
{
    /* is the MPI_Allreduce the process resolves ours? */
    void *sym = dlsym(RTLD_DEFAULT, "MPI_Allreduce");

    st_config_init();
    return st_config.enable && sym == (void*)st_coll_mpi_allreduce;
}

/* ---- the MPI entry points ---- */

int st_coll_mpi_allreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dtype,
                          MPI_Op op, MPI_Comm comm)
{
    return st_coll_allreduce(sbuf, rbuf, count, dtype, op, comm);
}

ST_EXPORT int MPI_Allreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dtype,
                            MPI_Op op, MPI_Comm comm)
    __attribute__((alias("st_coll_mpi_allreduce")));

/*
 * The knobs every rank must hold alike (st_config_field_t.job: the ranks' algorithms
 * depend on them; a plain mpirun passes the launching shell's variables to the
 * ranks of its own host only): a rank whose values differ from rank 0's takes
 * rank 0's, and rank 0 names the knobs that differed. One allreduce of a hash
 * per knob (the maximum of it and of its complement tell whether all agree); a
 * broadcast of rank 0's values only when some differ. The same allreduce hashes
 * each rank's words about its variables (invalid values, unknown names): rank 0
 * says them for all where they are alike; where not, each rank says its own (a
 * typo in the environment of another host's ranks is not lost).
 */
static void st_coll_agree_config(void)
{
    int n, i, rank, differ = 0;
    const st_config_field_t *f = st_config_fields(&n);
    const char *errors;
    st_config_t root;
    uint64_t h[2 * n + 2];
    char value[ST_CONFIG_STRLEN + 32];
    size_t size;
    void *mine;

    st_config_init();
    st_coll_config_hashes(h, n, f);
    /* and the words about this rank's own variables (invalid, unknown) */
    errors       = strata_config_report();
    h[2 * n]     = st_coll_hash(errors, strlen(errors));
    h[2 * n + 1] = ~h[2 * n];
    if (PMPI_Allreduce(MPI_IN_PLACE, h, 2 * n + 2, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD) !=
        MPI_SUCCESS) {
        return;
    }
    st_coll_config_errors_differ = (h[2 * n] != ~h[2 * n + 1]);
    for (i = 0; i < n; i++) {
        differ |= (h[i] != ~h[n + i]);
    }
    if (!differ) {
        return;
    }
    root = st_config;
    PMPI_Bcast(&root, sizeof(root), MPI_BYTE, 0, MPI_COMM_WORLD);
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    for (i = 0; i < n; i++) {
        if (h[i] == ~h[n + i]) {
            continue;
        }
        mine = st_config_value(&f[i], &st_config, &size);
        memcpy(mine, st_config_value(&f[i], &root, &size), size);
        if (rank == 0) {
            st_config_format(&f[i], mine, value, sizeof(value));
            st_log_set_rank(0);
            st_warn("STRATA_%s is not the same on every rank: all use rank 0's, %s (give "
                    "every rank the same: mpirun -x STRATA_%s, or strata-run)", f[i].name,
                    value, f[i].name);
        }
    }
}

/* A hash of this kernel's boot id (the same in every network namespace and
 * container of one machine), MPI_UNDEFINED when it cannot be read. */
static int st_coll_machine_color(void)
{
    char id[64];
    size_t n = 0;
    FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");

    if (f != NULL) {
        n = fread(id, 1, sizeof(id), f);
        fclose(f);
    }
    return (n > 0) ? (int)(st_coll_hash(id, n) & 0x7fffffff) : MPI_UNDEFINED;
}

/*
 * After PMPI_Init, where every rank of MPI_COMM_WORLD is: the ranks agree on the
 * knobs they must hold alike; count the ranks on this machine's kernel (spin
 * counts); with virtual nodes, find this process's rank on its host once, so it is
 * on the same virtual node in every communicator (collectives, so never done
 * lazily).
 */
void st_coll_init_world(void)
{
    MPI_Comm host, machine;
    int n, *ub, flag = 0;

    st_coll_agree_config();
    atomic_store(&st_coll_agreed, 1);
    pthread_once(&st_coll_once, st_coll_init_once);
    st_ucx_init_world();
    /* the plans' parent (a split: no attribute copied); MPI_TAG_UB for their tags */
    if (st_coll_parent == MPI_COMM_NULL &&
        PMPI_Comm_split(MPI_COMM_WORLD, 0, st_coll_world_rank, &st_coll_parent) !=
                MPI_SUCCESS) {
        st_coll_parent = MPI_COMM_NULL;
    }
    if (PMPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag) == MPI_SUCCESS && flag &&
        *ub > 0) {
        st_coll_tag_ub = *ub;
    }
    /* the ranks on this machine's cores, whatever the hosts MPI sees (spin counts) */
    if (PMPI_Comm_split(MPI_COMM_WORLD, st_coll_machine_color(), st_coll_world_rank,
                        &machine) == MPI_SUCCESS && machine != MPI_COMM_NULL) {
        PMPI_Comm_size(machine, &n);
        st_set_machine_ranks(n);
        PMPI_Comm_free(&machine);
    }
    if (st_config.vnodes > 1 &&
        PMPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, st_coll_world_rank,
                             MPI_INFO_NULL, &host) == MPI_SUCCESS) {
        PMPI_Comm_rank(host, &st_coll_proc.host_rank);
        PMPI_Comm_size(host, &st_coll_proc.host_size);
        PMPI_Comm_free(&host);
    }
}

ST_EXPORT int MPI_Init(int *argc, char ***argv)
{
    int rc = PMPI_Init(argc, argv);

    if (rc == MPI_SUCCESS) {
        st_coll_init_world();
    }
    return rc;
}

ST_EXPORT int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    int rc = PMPI_Init_thread(argc, argv, required, provided);

    if (rc == MPI_SUCCESS) {
        st_coll_init_world();
    }
    return rc;
}

ST_EXPORT int MPI_Finalize(void)
{
    return st_coll_finalize();
}

/* Free @a comm with @a pmpi_free, marking it for this thread meanwhile (see
 * st_coll_allreduce: attribute callbacks may still call MPI_Allreduce on it). */
static int st_coll_comm_release(int (*pmpi_free)(MPI_Comm*), MPI_Comm *comm)
{
    st_coll_freeing_t me = {(comm != NULL) ? *comm : MPI_COMM_NULL, st_coll_freeing};
    int rc;

    st_coll_freeing = &me;
    rc              = pmpi_free(comm);
    st_coll_freeing = me.outer;
    return rc;
}

ST_EXPORT int MPI_Comm_free(MPI_Comm *comm)
{
    return st_coll_comm_release(PMPI_Comm_free, comm);
}

ST_EXPORT int MPI_Comm_disconnect(MPI_Comm *comm)
{
    return st_coll_comm_release(PMPI_Comm_disconnect, comm);
}
