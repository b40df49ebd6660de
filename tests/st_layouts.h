/*
 * Layouts for the topology tests: a synthetic hwloc topology, where each rank is
 * (assumed to be) bound, and the levels asked for, all set through STRATA_*
 * variables before MPI_Init. Each case also states, independently of the code
 * under test, the package of every world rank; the expected nodes, socket groups
 * and leaders follow from those facts by the rules README.md gives (groups
 * numbered and led by their lowest rank).
 *
 * All cases run on one host: nodes differ only through STRATA_VIRTUAL_NODES.
 */
#ifndef ST_LAYOUTS_H
#define ST_LAYOUTS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ST_LAYOUT_MAX_RANKS 16

typedef struct {
    const char *name;
    const char *synthetic;   /* STRATA_TOPO_SYNTHETIC */
    const char *bind;        /* STRATA_TOPO_BIND */
    const char *levels;      /* STRATA_LEVELS, NULL: auto */
    int         vnodes;      /* STRATA_VIRTUAL_NODES */
    int         round_robin; /* STRATA_VIRTUAL_NODES_MAP=round-robin */
    int         socket_on;   /* socket level expected (given every rank of the case) */
    int         npkgs;       /* packages of the topology */
    /* package of world rank r (-1: unbound or spanning), and its PUs as listed */
    int         pkg[ST_LAYOUT_MAX_RANKS];
    const char *cpus[ST_LAYOUT_MAX_RANKS];
} st_layout_t;

#define ST_L_2X4 "pack:2 [numa] core:4 pu:1"

static const st_layout_t st_layouts[] = {
    {"2x4-core", ST_L_2X4, "core", NULL, 1, 0, 1, 2,
     {0, 0, 0, 0, 1, 1, 1, 1}, {"0", "1", "2", "3", "4", "5", "6", "7"}},
    {"2x4-socket", ST_L_2X4, "socket", NULL, 1, 0, 1, 2,
     {0, 1, 0, 1, 0, 1, 0, 1}, {"0", "4", "1", "5", "2", "6", "3", "7"}},
    {"2x4-unbound", ST_L_2X4, "none", NULL, 1, 0, 0, 2,
     {-1, -1, -1, -1, -1, -1, -1, -1},
     {"0-7", "0-7", "0-7", "0-7", "0-7", "0-7", "0-7", "0-7"}},
    {"2x4-levels-node", ST_L_2X4, "core", "node", 1, 0, 0, 2,
     {0, 0, 0, 0, 1, 1, 1, 1}, {"0", "1", "2", "3", "4", "5", "6", "7"}},
    {"4x2-core", "pack:4 [numa] core:2 pu:1", "core", NULL, 1, 0, 1, 4,
     {0, 0, 1, 1, 2, 2, 3, 3}, {"0", "1", "2", "3", "4", "5", "6", "7"}},
    /* one rank per package: socket-first would not cut the bytes between packages */
    {"8x1-core", "pack:8 [numa] core:1 pu:1", "core", NULL, 1, 0, 0, 8,
     {0, 1, 2, 3, 4, 5, 6, 7}, {"0", "1", "2", "3", "4", "5", "6", "7"}},
    /* uneven, interleaved: 3 ranks on package 0, 5 on package 1 */
    {"uneven-3+5", "pack:2 [numa] core:5 pu:1", "5,0,6,1,7,2,8,9", NULL, 1, 0, 1, 2,
     {1, 0, 1, 0, 1, 0, 1, 1}, {"5", "0", "6", "1", "7", "2", "8", "9"}},
    {"one-package", "pack:1 [numa] core:8 pu:1", "core", NULL, 1, 0, 0, 1,
     {0, 0, 0, 0, 0, 0, 0, 0}, {"0", "1", "2", "3", "4", "5", "6", "7"}},
    /* rank 0 spans both packages: no socket level for anyone */
    {"spanning", ST_L_2X4, "0-4,1,5,6", NULL, 1, 0, 0, 2,
     {-1, 0, 1, 1, -1, 0, 1, 1}, {"0-4", "1", "5", "6", "0-4", "1", "5", "6"}},
    {"vnodes-2", "pack:1 [numa] core:8 pu:1", "core", NULL, 2, 0, 0, 1,
     {0, 0, 0, 0, 0, 0, 0, 0}, {"0", "1", "2", "3", "4", "5", "6", "7"}},
    {"vnodes-3-rr", "pack:1 [numa] core:8 pu:1", "core", NULL, 3, 1, 0, 1,
     {0, 0, 0, 0, 0, 0, 0, 0}, {"0", "1", "2", "3", "4", "5", "6", "7"}},
    /* one rank per node */
    {"vnodes-8", "pack:1 [numa] core:8 pu:1", "core", NULL, 8, 0, 0, 1,
     {0, 0, 0, 0, 0, 0, 0, 0}, {"0", "1", "2", "3", "4", "5", "6", "7"}},
    {"vnodes-2-socket", ST_L_2X4, "socket", NULL, 2, 0, 1, 2,
     {0, 1, 0, 1, 0, 1, 0, 1}, {"0", "4", "1", "5", "2", "6", "3", "7"}},
    /* uneven nodes of 3, 3 and 2 ranks, packages alternating, the socket level
     * forced: groups of 2 and 1, and of 1 and 1 on the last node */
    {"vnodes-3-rr-socket", ST_L_2X4, "socket", "socket", 3, 1, 1, 2,
     {0, 1, 0, 1, 0, 1, 0, 1}, {"0", "4", "1", "5", "2", "6", "3", "7"}},
};

#define ST_NLAYOUTS ((int)(sizeof(st_layouts) / sizeof(st_layouts[0])))

static inline const st_layout_t *st_layout_find(const char *name)
{
    int i;

    for (i = 0; i < ST_NLAYOUTS; i++) {
        if (strcmp(st_layouts[i].name, name) == 0) {
            return &st_layouts[i];
        }
    }
    return NULL;
}

/* Before MPI_Init: make Strata see the case's machine. */
static inline void st_layout_apply(const st_layout_t *l)
{
    char v[16];

    setenv("STRATA_TOPO_SYNTHETIC", l->synthetic, 1);
    setenv("STRATA_TOPO_BIND", l->bind, 1);
    if (l->levels != NULL) {
        setenv("STRATA_LEVELS", l->levels, 1);
    }
    snprintf(v, sizeof(v), "%d", l->vnodes);
    setenv("STRATA_VIRTUAL_NODES", v, 1);
    setenv("STRATA_VIRTUAL_NODES_MAP", l->round_robin ? "round-robin" : "contiguous", 1);
}

/* The virtual node of world rank @a r in a job of @a n ranks (one host). */
static inline int st_layout_vnode(const st_layout_t *l, int r, int n)
{
    int k = (l->vnodes < n) ? l->vnodes : n;

    return l->round_robin ? r % k : (int)((long long)r * k / n);
}

#endif /* ST_LAYOUTS_H */
