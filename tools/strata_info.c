/*
 * strata-info: what this Strata is, how it is built, what machine it sees and
 * every configuration knob (like ucx_info and ompi_info). Runs without mpirun;
 * with --topo, run it under mpirun to see the hierarchy of the job's ranks.
 */
#include "config.h"

#include "strata.h"
#include "st_stdout.h"

#include <hwloc.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *f)
{
    fprintf(f,
            "Usage: strata-info [OPTION]\n"
            "  (none)          version, build, machine and configuration summary\n"
            "  -c, --config    every STRATA_* variable: value, default, type, description\n"
            "  -t, --topo      the hierarchy Strata builds for MPI_COMM_WORLD: levels, and\n"
            "                  each rank's host, node, socket group, package, NUMA node,\n"
            "                  PUs and the groups it leads (run it under mpirun)\n"
            "  -j, --json      with --topo: the same as JSON\n"
            "  -v, --version   the version\n"
            "  -h, --help      this message\n"
            "Exit status: 0 ok, 1 no layout for --topo or standard output not written,\n"
            "2 bad usage.\n");
}

/* The lines MPI_Init would warn about (rejected values, unknown STRATA_* names),
 * each after @a prefix, under a heading; nothing when there are none. */
static void print_config_report(const char *heading, const char *prefix)
{
    const char *p = strata_config_report(), *nl;

    if (*p == '\0') {
        return;
    }
    printf("%s\n", heading);
    for (; *p != '\0'; p = (*nl != '\0') ? nl + 1 : nl) {
        nl = strchr(p, '\n');
        if (nl == NULL) {
            nl = p + strlen(p);
        }
        printf("%s%.*s\n", prefix, (int)(nl - p), p);
    }
}

static void print_config(int verbose)
{
    strata_config_entry_t e;
    const char *why;
    int i;

    if (verbose) {
        print_config_report("# PROBLEMS in the environment (MPI_Init warns about them on "
                            "rank 0):", "#   ");
    }
    for (i = 0; i < strata_config_count(); i++) {
        strata_config_get(i, &e);
        why = strata_config_rejected(i);
        if (verbose) {
            printf("#\n# %s\n#\n# default: %s   type: %s%s%s\n", e.description,
                   e.default_str, e.type, e.job_wide ? "   same on every rank (rank 0's)" : "",
                   e.is_set ? "   (set in the environment)" : "");
            if (why != NULL) {
                printf("# REJECTED: %s; the default is in effect\n", why);
            }
            printf("#\n%s=%s\n", e.name, e.value);
        } else if (why != NULL) {
            printf("  %-22s %-8s (default %s) REJECTED: %s\n", e.name, e.value, e.default_str,
                   why);
        } else {
            printf("  %-22s %-8s (default %s)\n", e.name, e.value, e.default_str);
        }
    }
    if (!verbose) {
        print_config_report("config problems (MPI_Init warns about them on rank 0):", "  ");
    }
}

static void print_machine(void)
{
    hwloc_topology_t topo;
    int npkg, ncore, npu, nnuma;

    if (hwloc_topology_init(&topo) != 0 || hwloc_topology_load(topo) != 0) {
        printf("machine:    (hwloc could not read the topology)\n");
        return;
    }
    npkg  = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PACKAGE);
    ncore = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
    npu   = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
    nnuma = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE);
    printf("machine:    %d package(s), %d NUMA node(s), %d core(s), %d hardware thread(s)\n",
           npkg, nnuma, ncore, npu);
    hwloc_topology_destroy(topo);
}

/* ---- --topo ---- */

/* as MPI_Get_processor_name writes it (Open MPI's: up to 255 characters) */
typedef struct {
    char name[MPI_MAX_PROCESSOR_NAME];
} host_name_t;

/* @a s as a JSON string, quoted: a processor name is whatever the MPI library made of
 * the host's name, which the kernel lets hold any byte */
static void json_string(const char *s)
{
    const unsigned char *c;

    putchar('"');
    for (c = (const unsigned char *)s; *c != '\0'; c++) {
        if (*c == '"' || *c == '\\') {
            printf("\\%c", *c);
        } else if (*c < 0x20 || *c == 0x7f) {
            printf("\\u%04x", *c);
        } else {
            putchar(*c);
        }
    }
    putchar('"');
}

/* GPUs (and other coprocessors) hwloc sees, with the package they hang off. */
static void print_gpus(int json)
{
    hwloc_topology_t topo;
    hwloc_obj_t obj = NULL, up;
    int n = 0;

    if (hwloc_topology_init(&topo) != 0) {
        return;
    }
    hwloc_topology_set_io_types_filter(topo, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
    if (hwloc_topology_load(topo) != 0) {
        hwloc_topology_destroy(topo);
        return;
    }
    printf(json ? ",\n  \"gpus\": [" : "gpus on this host:");
    while ((obj = hwloc_get_next_osdev(topo, obj)) != NULL) {
        if (obj->attr->osdev.type != HWLOC_OBJ_OSDEV_GPU &&
            obj->attr->osdev.type != HWLOC_OBJ_OSDEV_COPROC) {
            continue;
        }
        for (up = hwloc_get_non_io_ancestor_obj(topo, obj);
             up != NULL && up->type != HWLOC_OBJ_PACKAGE; up = up->parent) {
        }
        if (json) {
            printf("%s{\"name\": ", n ? ", " : "");
            json_string(obj->name ? obj->name : "?");
            printf(", \"package\": %d}", up ? (int)up->logical_index : -1);
        } else {
            printf("\n  %-12s near package %d", obj->name ? obj->name : "?",
                   up ? (int)up->logical_index : -1);
        }
        n++;
    }
    printf(json ? "]" : (n ? "\n" : " none found by hwloc\n"));
    hwloc_topology_destroy(topo);
}

/* The groups rank @a r leads, the lowest rank of each: "cluster node socket", the
 * socket only where the layout has that level. */
static void leads(const strata_layout_t *lay, const strata_place_t *p, int r, char *buf,
                  size_t len)
{
    int j, node = 1, sock = lay->socket_level;
    size_t n;

    for (j = 0; j < r; j++) {
        node &= (p[j].node != p[r].node);
        sock &= !(p[j].node == p[r].node && p[j].socket == p[r].socket);
    }
    snprintf(buf, len, "%s%s%s", r == 0 ? "cluster " : "", node ? "node " : "",
             sock ? "socket " : "");
    n = strlen(buf);
    if (n > 0) {
        buf[n - 1] = '\0';   /* the last word's blank */
    }
}

static int print_topo(int json)
{
    strata_layout_t lay;
    strata_place_t *places;
    host_name_t me, *hosts;
    char lead[64];
    int rank, size, len, r, rc;

    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    places = calloc((size_t)size, sizeof(*places));
    hosts  = calloc((size_t)size, sizeof(*hosts));
    memset(&me, 0, sizeof(me));
    MPI_Get_processor_name(me.name, &len);
    me.name[sizeof(me.name) - 1] = '\0';
    rc = strata_comm_layout(MPI_COMM_WORLD, &lay, places);
    MPI_Gather(&me, sizeof(me), MPI_BYTE, hosts, sizeof(me), MPI_BYTE, 0, MPI_COMM_WORLD);
    if (rank != 0) {
        free(places);
        free(hosts);
        return rc == STRATA_OK ? 0 : 1;
    }
    if (rc != STRATA_OK) {
        fprintf(stderr, "strata-info: no layout for MPI_COMM_WORLD: %s\n",
                strata_status_string(rc));
        free(places);
        free(hosts);
        return 1;
    }
    if (json) {
        printf("{\n  \"ranks\": %d, \"hosts\": %d, \"nodes\": %d,\n"
               "  \"socket_level\": %s, \"socket_groups\": %d, \"socket_level_off\": ",
               lay.size, lay.nhosts, lay.nnodes, lay.socket_level ? "true" : "false",
               lay.nsockets);
        json_string(lay.why);
        printf(",\n  \"allreduce\": ");
        json_string(lay.fast_path ? "strata" : strata_fallback_string(lay.fallback_reason));
        printf(", \"shm_chunk\": %zu, \"small_msg\": %zu,\n  \"places\": [\n", lay.shm_chunk,
               lay.small_msg);
    } else {
        printf("MPI_COMM_WORLD: %d ranks, %d host(s), %d node(s)\n", lay.size, lay.nhosts,
               lay.nnodes);
        if (lay.socket_level) {
            printf("levels:    socket (%d groups) -> node (%d) -> cluster\n", lay.nsockets,
                   lay.nnodes);
        } else {
            printf("levels:    node (%d) -> cluster; no socket level: %s\n", lay.nnodes,
                   lay.why);
        }
        if (lay.fast_path && lay.nnodes > 1) {
            /* shm_chunk is the largest node segment's step, 0 where no node has two
             * ranks (and so no segment) */
            if (lay.shm_chunk > 0) {
                printf("allreduce: Strata, shared memory in each node (%zu KB per rank per "
                       "pipeline step), ", lay.shm_chunk >> 10);
            } else {
                printf("allreduce: Strata, one rank in each node (no shared memory), ");
            }
            printf("UCX across the %d nodes (node leaders up to %zu bytes, a lane per local "
                   "rank above)\n", lay.nnodes, lay.small_msg);
        } else if (lay.fast_path) {
            printf("allreduce: Strata shared memory, %zu KB per rank per pipeline step, "
                   "latency path up to %zu bytes\n", lay.shm_chunk >> 10, lay.small_msg);
        } else {
            printf("allreduce: PMPI_Allreduce (%s)\n",
                   strata_fallback_string(lay.fallback_reason));
        }
        printf("%-5s %-16s %-4s %-4s %-6s %-7s %-4s %-5s %-12s %s\n", "rank", "host", "hidx",
               "node", "socket", "package", "numa", "bound", "cpus", "leads");
    }
    for (r = 0; r < size; r++) {
        leads(&lay, places, r, lead, sizeof(lead));
        if (json) {
            printf("    {\"rank\": %d, \"host\": ", r);
            json_string(hosts[r].name);
            printf(", \"host_index\": %d, \"node\": %d, \"socket\": %d, \"package\": %d, "
                   "\"numa\": %d, \"bound\": %s, \"cpus\": ", places[r].host, places[r].node,
                   places[r].socket, places[r].package, places[r].numa,
                   places[r].bound ? "true" : "false");
            json_string(places[r].cpus);
            printf(", \"leads\": ");
            json_string(lead);
            printf("}%s\n", r + 1 < size ? "," : "");
        } else {
            printf("%-5d %-16s %-4d %-4d %-6d %-7d %-4d %-5s %-12s %s\n", r, hosts[r].name,
                   places[r].host, places[r].node, places[r].socket, places[r].package,
                   places[r].numa, places[r].bound ? "yes" : "no", places[r].cpus, lead);
        }
    }
    if (json) {
        printf("  ]");
    }
    print_gpus(json);
    if (json) {
        printf("\n}\n");
    }
    free(places);
    free(hosts);
    return 0;
}

int main(int argc, char **argv)
{
    int topo = 0, json = 0, i, rc;

    st_stdout_check("strata-info");

    for (i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-t") || !strcmp(argv[i], "--topo")) {
            topo = 1;
        } else if (!strcmp(argv[i], "-j") || !strcmp(argv[i], "--json")) {
            json = 1;
        } else {
            break;
        }
    }
    if (topo || json) {
        if (i < argc) {
            fprintf(stderr, "strata-info: unexpected argument '%s' with --topo\n", argv[i]);
            fprintf(stderr, "Try 'strata-info --help'.\n");
            return 2;
        }
        if (!topo) {
            fprintf(stderr, "strata-info: --json goes with --topo\n");
            fprintf(stderr, "Try 'strata-info --help'.\n");
            return 2;
        }
        MPI_Init(&argc, &argv);
        rc = print_topo(json);
        MPI_Finalize();
        return rc;
    }
    if (argc > 2) {
        fprintf(stderr, "strata-info: too many arguments\n");
        fprintf(stderr, "Try 'strata-info --help'.\n");
        return 2;
    }
    if (argc == 2) {
        if (!strcmp(argv[1], "-c") || !strcmp(argv[1], "--config")) {
            print_config(1);
            return 0;
        }
        if (!strcmp(argv[1], "-v") || !strcmp(argv[1], "--version")) {
            printf("strata %s\n", strata_version());
            return 0;
        }
        if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
            usage(stdout);
            return 0;
        }
        fprintf(stderr, "strata-info: unknown option '%s'\n", argv[1]);
        fprintf(stderr, "Try 'strata-info --help'.\n");
        return 2;
    }

    printf("strata:     %s\n", strata_version());
    printf("build:      hwloc %s, UCX %s, CUDA %s%s%s\n",
           HWLOC_API_VERSION >= 0x20000 ? "2.x" : "1.x", HAVE_UCX ? "yes" : "no",
           HAVE_CUDA ? "yes (GPU kernels: " : "no", ST_CUDA_TARGETS, HAVE_CUDA ? ")" : "");
    print_machine();
    printf("allreduce:  %s\n", strata_active() ? "Strata (interposed)"
                                               : "disabled (STRATA_ENABLE=n)");
    printf("config:\n");
    print_config(0);
    return 0;
}
