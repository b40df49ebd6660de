/*
 * strata-info: what this Strata is, how it is built, what machine it sees and
 * every configuration knob (like ucx_info and ompi_info). Runs without mpirun.
 */
#include "config.h"

#include "strata.h"

#include <hwloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *f)
{
    fprintf(f,
            "Usage: strata-info [OPTION]\n"
            "  (none)          version, build, machine and configuration summary\n"
            "  -c, --config    every STRATA_* variable: value, default, type, description\n"
            "  -v, --version   the version\n"
            "  -h, --help      this message\n");
}

static void print_config(int verbose)
{
    strata_config_entry_t e;
    int i;

    for (i = 0; i < strata_config_count(); i++) {
        strata_config_get(i, &e);
        if (verbose) {
            printf("#\n# %s\n#\n# default: %s   type: %s%s\n#\n%s=%s\n", e.description,
                   e.default_str, e.type, e.is_set ? "   (set in the environment)" : "",
                   e.name, e.value);
        } else {
            printf("  %-22s %-8s (default %s)\n", e.name, e.value, e.default_str);
        }
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

int main(int argc, char **argv)
{
    if (argc > 2) {
        fprintf(stderr, "strata-info: too many arguments\n");
        usage(stderr);
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
        usage(stderr);
        return 2;
    }

    printf("strata:     %s\n", strata_version());
    printf("build:      hwloc %s, UCX %s, CUDA %s\n", HWLOC_API_VERSION >= 0x20000 ? "2.x" : "1.x",
           HAVE_UCX ? "yes" : "no", HAVE_CUDA ? "yes" : "no");
    print_machine();
    printf("allreduce:  %s\n", strata_active() ? "Strata (interposed)"
                                               : "disabled (STRATA_ENABLE=n)");
    printf("config:\n");
    print_config(0);
    return 0;
}
