/*
 * The level plan on the synthetic machines of tests/st_layouts.h.
 *
 * For MPI_COMM_WORLD, a reversed world and the odd/even halves, the expected
 * layout is derived here from the case's facts (each world rank's package and
 * PUs, the virtual-node rule) and compared with strata_comm_layout(): hosts,
 * nodes, socket groups and whether the socket level is on, every rank's place,
 * the fast path. strata_comm_level() and strata_comm_leaders() must return
 * communicators with exactly the expected members, in order, and the same
 * handles on a second call. On communicators with a fast path, the bytes read
 * across packages (strata_comm_stats) must equal the model: every rank reads
 * every other rank's data on the latency path; flat, large messages cost each
 * rank its fold sub-range times the ranks on other packages plus the other
 * packages' sub-ranges of the result; socket-first cuts each step into one
 * slice per group and costs each rank its share of its group's slice times
 * (groups - 1) plus its share of every other slice. Across nodes with the socket
 * level, a large message costs each node 2 (groups - 1) x the message.
 *
 * Usage: test_topo CASE [--report]   (--report prints the byte counts on rank 0)
 */
#include "config.h"

#include "st_layouts.h"
#include "st_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const st_layout_t *L;
static int world_size, world_rank, report;

/* What the layout of a communicator must be, from the case's facts. */
typedef struct {
    int size;
    int wrank[ST_LAYOUT_MAX_RANKS];   /* world rank of each comm rank */
    int node[ST_LAYOUT_MAX_RANKS];
    int socket[ST_LAYOUT_MAX_RANKS];
    int nnodes, nsockets, socket_on, fast;
} expect_t;

static void expect_layout(MPI_Comm comm, expect_t *e)
{
    int vnode[ST_LAYOUT_MAX_RANKS];
    int i, j, any_unbound = 0, pi, pj, same, others, first;
    double flat = 0, sock = 0;

    memset(e, 0, sizeof(*e));
    MPI_Comm_size(comm, &e->size);
    MPI_Allgather(&world_rank, 1, MPI_INT, e->wrank, 1, MPI_INT, comm);

    /* nodes: by virtual node, numbered by lowest comm rank */
    for (i = 0; i < e->size; i++) {
        vnode[i] = st_layout_vnode(L, e->wrank[i], world_size);
        for (j = 0; j < i && vnode[j] != vnode[i]; j++) {
        }
        e->node[i] = (j < i) ? e->node[j] : e->nnodes++;
    }
    /* the socket level: every rank bound within a package, and (auto) fewer bytes
     * across packages: 2 (P - 1) per node against, flat, 2/n x the sum over the
     * node's n ranks of the ranks on other packages */
    for (i = 0; i < e->size; i++) {
        pi = L->pkg[e->wrank[i]];
        any_unbound |= (pi < 0);
        same = others = first = 0;
        for (j = 0; j < e->size; j++) {
            pj = L->pkg[e->wrank[j]];
            if (e->node[i] == e->node[j]) {
                same++;
                others += (pi != pj);
                first  += (j < i && pi == pj);   /* not the first of its package */
            }
        }
        flat += 2.0 * others / same;
        sock += (first == 0) ? 2.0 : 0;
        for (j = 0; j < i && e->node[j] != e->node[i]; j++) {
        }
        sock -= (j == i) ? 2.0 : 0;              /* the node's first rank */
    }
    if (L->levels != NULL && strcmp(L->levels, "socket") == 0) {
        flat = sock + 1;  /* forced: wherever the binding allows */
    }
    e->socket_on = !any_unbound && sock < flat &&
                   !(L->levels != NULL && (!strcmp(L->levels, "node") ||
                                           !strcmp(L->levels, "flat")));
    /* socket groups: (node, package), numbered by lowest rank within the node */
    for (i = 0; i < e->size; i++) {
        for (j = 0; j < i; j++) {
            if (e->node[j] == e->node[i] &&
                (!e->socket_on || L->pkg[e->wrank[j]] == L->pkg[e->wrank[i]])) {
                break;
            }
        }
        if (j < i) {
            e->socket[i] = e->socket[j];
        } else {
            e->socket[i] = 0;
            for (j = 0; j < i; j++) {
                if (e->node[j] == e->node[i] && e->socket[j] + 1 > e->socket[i]) {
                    e->socket[i] = e->socket[j] + 1;
                }
            }
            e->nsockets++;
        }
    }
    e->fast = ((e->nnodes == 1 || st_test_multinode_fast()) && e->size > 1);
}

static void check_members(MPI_Comm sub, const expect_t *e, int (*same)(const expect_t*, int, int),
                          int me, const char *what, const char *name)
{
    int got[ST_LAYOUT_MAX_RANKS], n = 0, i, k = 0, ok = 1;

    if (sub == MPI_COMM_NULL) {
        CHECKF(0, "%s: %s is MPI_COMM_NULL", name, what);
        return;
    }
    MPI_Comm_size(sub, &n);
    if (n > ST_LAYOUT_MAX_RANKS) {
        CHECKF(0, "%s: %s has %d ranks", name, what, n);
        return;
    }
    MPI_Allgather(&world_rank, 1, MPI_INT, got, 1, MPI_INT, sub);
    for (i = 0; i < e->size; i++) {
        if (same(e, me, i)) {
            ok &= (k < n && got[k] == e->wrank[i]);
            k++;
        }
    }
    CHECKF(ok && k == n, "%s: %s has %d ranks (world %d, ...), expected %d", name, what, n,
           got[0], k);
}

static int same_socket(const expect_t *e, int a, int b)
{
    return e->node[a] == e->node[b] && e->socket[a] == e->socket[b];
}

static int same_node(const expect_t *e, int a, int b)
{
    return e->node[a] == e->node[b];
}

static int leads_socket(const expect_t *e, int i)
{
    int j;

    for (j = 0; j < i; j++) {
        if (same_socket(e, i, j)) {
            return 0;
        }
    }
    return 1;
}

static int leads_node(const expect_t *e, int i)
{
    int j;

    for (j = 0; j < i; j++) {
        if (same_node(e, i, j)) {
            return 0;
        }
    }
    return 1;
}

static int socket_leaders_of_node(const expect_t *e, int a, int b)
{
    return leads_socket(e, b) && e->node[a] == e->node[b];
}

static int node_leaders(const expect_t *e, int a, int b)
{
    return leads_node(e, b);
}

/* ---- the layout and the level communicators ---- */

static void check_layout(MPI_Comm comm, const char *name)
{
    strata_place_t places[ST_LAYOUT_MAX_RANKS];
    strata_layout_t lay;
    MPI_Comm sub, again;
    expect_t e;
    int i, rank, w, cmp;

    expect_layout(comm, &e);
    MPI_Comm_rank(comm, &rank);
    CHECK(strata_comm_layout(comm, &lay, places) == STRATA_OK);
    CHECKF(lay.size == e.size && lay.nhosts == 1 && lay.nnodes == e.nnodes,
           "%s: size %d hosts %d nodes %d, expected %d 1 %d", name, lay.size, lay.nhosts,
           lay.nnodes, e.size, e.nnodes);
    CHECKF(lay.socket_level == e.socket_on && lay.nsockets == e.nsockets,
           "%s: socket level %d with %d groups (%s), expected %d with %d", name,
           lay.socket_level, lay.nsockets, lay.why, e.socket_on, e.nsockets);
    CHECKF(lay.socket_level || lay.why[0] != '\0', "%s: socket level off, no reason", name);
    CHECKF(lay.fast_path == e.fast, "%s: fast path %d, expected %d", name, lay.fast_path,
           e.fast);
    if (!e.fast && e.size > 1) {
        CHECKF(lay.fallback_reason == STRATA_FALLBACK_MULTINODE, "%s: fallback reason %s", name,
               strata_fallback_string(lay.fallback_reason));
    }
    /* no segment at all when every node has one rank */
    CHECKF(!e.fast || lay.shm_chunk >= 4096 || e.nnodes == e.size, "%s: chunk %zu", name,
           lay.shm_chunk);
    for (i = 0; i < e.size; i++) {
        w = e.wrank[i];
        CHECKF(places[i].host == 0 && places[i].node == e.node[i] &&
               places[i].socket == e.socket[i] && places[i].package == L->pkg[w] &&
               places[i].numa == L->pkg[w] && !strcmp(places[i].cpus, L->cpus[w]) &&
               places[i].bound == (strcmp(L->bind, "none") != 0),
               "%s: rank %d (world %d): host %d node %d socket %d package %d numa %d bound %d "
               "cpus '%s'; expected node %d socket %d package %d cpus '%s'", name, i, w,
               places[i].host, places[i].node, places[i].socket, places[i].package,
               places[i].numa, places[i].bound, places[i].cpus, e.node[i], e.socket[i],
               L->pkg[w], L->cpus[w]);
    }

    /* levels, twice: the second call returns the same communicator */
    CHECK(strata_comm_level(comm, STRATA_LEVEL_SOCKET, &sub) == STRATA_OK);
    check_members(sub, &e, same_socket, rank, "socket level", name);
    CHECK(strata_comm_level(comm, STRATA_LEVEL_SOCKET, &again) == STRATA_OK && again == sub);
    CHECK(strata_comm_level(comm, STRATA_LEVEL_NODE, &sub) == STRATA_OK);
    check_members(sub, &e, same_node, rank, "node level", name);
    CHECK(strata_comm_level(comm, STRATA_LEVEL_CLUSTER, &sub) == STRATA_OK);
    MPI_Comm_compare(sub, comm, &cmp);
    CHECKF(cmp == MPI_IDENT, "%s: cluster level is not the communicator", name);

    CHECK(strata_comm_leaders(comm, STRATA_LEVEL_SOCKET, &sub) == STRATA_OK);
    if (leads_socket(&e, rank)) {
        check_members(sub, &e, socket_leaders_of_node, rank, "socket leaders", name);
    } else {
        CHECKF(sub == MPI_COMM_NULL, "%s: a socket leaders comm on a non-leader", name);
    }
    CHECK(strata_comm_leaders(comm, STRATA_LEVEL_NODE, &sub) == STRATA_OK);
    if (leads_node(&e, rank)) {
        check_members(sub, &e, node_leaders, rank, "node leaders", name);
    } else {
        CHECKF(sub == MPI_COMM_NULL, "%s: a node leaders comm on a non-leader", name);
    }
    CHECK(strata_comm_leaders(comm, STRATA_LEVEL_CLUSTER, &sub) == STRATA_ERR_INVALID_PARAM);
    CHECK(strata_comm_level(comm, STRATA_LEVEL_LAST, &sub) == STRATA_ERR_INVALID_PARAM);
}

/* ---- bytes across packages ---- */

/* [lo, hi) of member @a idx of @a parts in a step of @a n doubles: balanced, cut
 * on cache lines (8 doubles), as README.md describes the split. */
static void range(size_t n, int parts, int idx, size_t *lo, size_t *hi)
{
    size_t sub = ((n + (size_t)parts - 1) / (size_t)parts + 7) / 8 * 8;

    *lo = (size_t)idx * sub < n ? (size_t)idx * sub : n;
    *hi = *lo + sub < n ? *lo + sub : n;
}

/* The model: bytes comm rank @a i reads across packages in one call of @a count
 * doubles. */
static uint64_t model_bytes(const expect_t *e, const strata_layout_t *lay, int i, size_t count)
{
    size_t step = lay->shm_chunk / sizeof(double), off, n, lo, hi, slo, shi;
    int j, t, other = 0, gsize = 0, gidx = 0, ngroups = 0;
    uint64_t bytes = 0;

    for (j = 0; j < e->size; j++) {
        other += (L->pkg[e->wrank[j]] != L->pkg[e->wrank[i]] && L->pkg[e->wrank[j]] >= 0 &&
                  L->pkg[e->wrank[i]] >= 0);
        if (e->socket[j] == e->socket[i]) {
            gidx += (j < i);
            gsize++;
        }
        ngroups = (e->socket[j] + 1 > ngroups) ? e->socket[j] + 1 : ngroups;
    }
    if (count * sizeof(double) <= lay->small_msg) {
        return (uint64_t)other * count * sizeof(double);
    }
    for (off = 0; off < count; off += n) {
        n = (count - off < step) ? count - off : step;
        if (e->socket_on) {
            /* stage 2: my part of my group's slice, over the other groups' partials;
             * stage 3: my part of each other group's slice, copied */
            for (t = 0; t < ngroups; t++) {
                range(n, ngroups, t, &slo, &shi);
                range(shi - slo, gsize, gidx, &lo, &hi);
                bytes += (uint64_t)(t == e->socket[i] ? ngroups - 1 : 1) * (hi - lo) *
                         sizeof(double);
            }
            continue;
        }
        range(n, e->size, i, &lo, &hi);
        bytes += (uint64_t)other * (hi - lo) * sizeof(double);
        for (j = 0; j < e->size; j++) {
            if (L->pkg[e->wrank[j]] != L->pkg[e->wrank[i]] && L->pkg[e->wrank[j]] >= 0 &&
                L->pkg[e->wrank[i]] >= 0) {
                range(n, e->size, j, &lo, &hi);
                bytes += (hi - lo) * sizeof(double);
            }
        }
    }
    return bytes;
}

/*
 * Across nodes, a large message goes through the pipeline's node steps (a
 * reduce-scatter, then an allgather, coll/st_hier.c). With the socket level each of
 * them moves every byte of the message once between the node's P groups: 2 (P - 1)
 * x the message per node, summed over its ranks (flat: each part's lane reads it
 * from the ranks of other packages, and each rank the other packages' parts).
 */
static void check_bytes_nodes(MPI_Comm comm, const expect_t *e, const strata_layout_t *lay,
                              const char *name)
{
    size_t count = 3 * (lay->shm_chunk / sizeof(double)) + 1001, i;
    uint64_t before, got, tot = 0, want;
    int rank, node_rank, j, k, groups = 0;
    MPI_Comm node;
    double *buf;

    if (!e->socket_on) {
        return;
    }
    MPI_Comm_rank(comm, &rank);
    for (j = 0; j < e->size; j++) {   /* the socket groups on my node */
        for (k = 0; k < j && !(e->node[k] == e->node[j] && e->socket[k] == e->socket[j]); k++) {
        }
        groups += (e->node[j] == e->node[rank] && k == j);
    }
    buf = malloc(count * sizeof(double));
    for (i = 0; i < count; i++) {
        buf[i] = (double)(rank + i % 7);
    }
    before = st_test_stats(comm).cross_socket_bytes;
    MPI_Allreduce(MPI_IN_PLACE, buf, (int)count, MPI_DOUBLE, MPI_SUM, comm);
    got = st_test_stats(comm).cross_socket_bytes - before;
    CHECKF(buf[count - 1] == (double)e->size * (double)((count - 1) % 7) +
                                     (double)e->size * (e->size - 1) / 2,
           "%s: wrong sum across nodes", name);
    MPI_Comm_split(comm, e->node[rank], rank, &node);
    MPI_Comm_rank(node, &node_rank);
    MPI_Reduce(&got, &tot, 1, MPI_UINT64_T, MPI_SUM, 0, node);
    want = 2 * (uint64_t)(groups - 1) * count * sizeof(double);
    CHECKF(node_rank != 0 || tot == want, "%s: %zu doubles across nodes: node %d read %llu "
           "bytes across packages, model %llu (%d groups)", name, count, e->node[rank],
           (unsigned long long)tot, (unsigned long long)want, groups);
    if (report && node_rank == 0) {
        printf("%s %s: %zu bytes across nodes, node %d, socket level on: %llu bytes read "
               "across packages (model %llu), %.2f x the message\n", L->name, name,
               count * sizeof(double), e->node[rank], (unsigned long long)tot,
               (unsigned long long)want, (double)tot / (count * sizeof(double)));
    }
    MPI_Comm_free(&node);
    free(buf);
}

static void check_bytes(MPI_Comm comm, const char *name)
{
    strata_layout_t lay;
    expect_t e;
    double *buf;
    size_t counts[2], k, i;
    uint64_t before, got, want, tot[2];
    int rank;

    expect_layout(comm, &e);
    if (!e.fast) {
        return;
    }
    MPI_Comm_rank(comm, &rank);
    CHECK(strata_comm_layout(comm, &lay, NULL) == STRATA_OK);
    if (e.nnodes > 1) {
        check_bytes_nodes(comm, &e, &lay, name);
        return;
    }
    counts[0] = 1000;                                          /* latency path */
    counts[1] = 3 * (lay.shm_chunk / sizeof(double)) + 1001;   /* 4 pipeline steps */
    buf = malloc(counts[1] * sizeof(double));
    for (k = 0; k < 2; k++) {
        for (i = 0; i < counts[k]; i++) {
            buf[i] = (double)(rank + i % 7);
        }
        before = st_test_stats(comm).cross_socket_bytes;
        MPI_Allreduce(MPI_IN_PLACE, buf, (int)counts[k], MPI_DOUBLE, MPI_SUM, comm);
        got  = st_test_stats(comm).cross_socket_bytes - before;
        want = model_bytes(&e, &lay, rank, counts[k]);
        CHECKF(got == want, "%s: %zu doubles: %llu bytes read across packages, model %llu",
               name, counts[k], (unsigned long long)got, (unsigned long long)want);
        CHECKF(buf[counts[k] - 1] ==
                       (double)e.size * (double)((counts[k] - 1) % 7) +
                               (double)e.size * (e.size - 1) / 2,
               "%s: wrong sum", name);
        /* totals over the comm, without MPI_Allreduce (it would count itself) */
        MPI_Reduce(&got, &tot[0], 1, MPI_UINT64_T, MPI_SUM, 0, comm);
        MPI_Reduce(&want, &tot[1], 1, MPI_UINT64_T, MPI_SUM, 0, comm);
        if (report && rank == 0) {
            printf("%s %s: %zu bytes, socket level %d: %llu bytes read across packages "
                   "(model %llu), %.2f x the message\n", L->name, name,
                   counts[k] * sizeof(double), lay.socket_level, (unsigned long long)tot[0],
                   (unsigned long long)tot[1], (double)tot[0] / (counts[k] * sizeof(double)));
        }
    }
    free(buf);
}

int main(int argc, char **argv)
{
    MPI_Comm reversed, half;
    int i;

    L = (argc > 1) ? st_layout_find(argv[1]) : NULL;
    for (i = 2; i < argc; i++) {
        report |= !strcmp(argv[i], "--report");
    }
    if (L == NULL) {
        fprintf(stderr, "usage: test_topo CASE [--report]; cases:");
        for (i = 0; i < ST_NLAYOUTS; i++) {
            fprintf(stderr, " %s", st_layouts[i].name);
        }
        fprintf(stderr, "\n");
        return 99;
    }
    st_layout_apply(L);
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world_size);
    if (world_size > 8) {
        if (world_rank == 0) {
            fprintf(stderr, "test_topo: the cases describe 8 ranks at most\n");
        }
        MPI_Finalize();
        return 99;
    }

    /* the case's data agree with its own rules on the whole world */
    {
        expect_t e;

        expect_layout(MPI_COMM_WORLD, &e);
        CHECKF(e.socket_on == L->socket_on, "case %s: socket level %d by the rules, %d stated",
               L->name, e.socket_on, L->socket_on);
    }
    check_layout(MPI_COMM_WORLD, "world");
    check_bytes(MPI_COMM_WORLD, "world");

    MPI_Comm_split(MPI_COMM_WORLD, 0, world_size - 1 - world_rank, &reversed);
    check_layout(reversed, "reversed world");
    check_bytes(reversed, "reversed world");

    MPI_Comm_split(MPI_COMM_WORLD, world_rank % 2, world_rank, &half);
    check_layout(half, world_rank % 2 ? "odd ranks" : "even ranks");
    check_bytes(half, world_rank % 2 ? "odd ranks" : "even ranks");

    MPI_Comm_free(&half);
    MPI_Comm_free(&reversed);
    return st_test_finish("test_topo");
}
