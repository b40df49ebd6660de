/*
 * st_topo_package_of_pci: the package nearest a PCI device (for device buffers).
 * Unknown and malformed bus ids give -1; every PCI device hwloc lists gives the
 * package found by walking up from it with hwloc's ancestor query (-1 where the
 * device hangs off the machine rather than a package, as in most VMs).
 */
#include "config.h"

#include "st_topo.h"

#include <hwloc.h>
#include <stdio.h>

int main(void)
{
    static const char *const bad[] = {"ffff:ff:1f.7", "garbage", "", "0000:00:00", NULL};
    hwloc_topology_t topo;
    hwloc_obj_t dev = NULL, up;
    char busid[32];
    int failures = 0, n = 0, want, got, i;

    for (i = 0; bad[i] != NULL; i++) {
        if ((got = st_topo_package_of_pci(bad[i])) != -1) {
            fprintf(stderr, "test_topo_pci: '%s' gave package %d, expected -1\n", bad[i], got);
            failures++;
        }
    }
    if (st_topo_package_of_pci(NULL) != -1) {
        fprintf(stderr, "test_topo_pci: NULL gave a package\n");
        failures++;
    }
    if (hwloc_topology_init(&topo) != 0) {
        return 99;
    }
    hwloc_topology_set_io_types_filter(topo, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
    if (hwloc_topology_load(topo) != 0) {
        return 99;
    }
    while ((dev = hwloc_get_next_pcidev(topo, dev)) != NULL) {
        snprintf(busid, sizeof(busid), "%04x:%02x:%02x.%01x", dev->attr->pcidev.domain,
                 dev->attr->pcidev.bus, dev->attr->pcidev.dev, dev->attr->pcidev.func);
        up   = hwloc_get_ancestor_obj_by_type(topo, HWLOC_OBJ_PACKAGE,
                                              hwloc_get_non_io_ancestor_obj(topo, dev));
        want = (up != NULL) ? (int)up->logical_index : -1;
        if ((got = st_topo_package_of_pci(busid)) != want) {
            fprintf(stderr, "test_topo_pci: %s gave package %d, expected %d\n", busid, got,
                    want);
            failures++;
        }
        n++;
    }
    hwloc_topology_destroy(topo);
    printf("test_topo_pci: %d PCI devices checked, %d failures\n", n, failures);
    return failures ? 1 : 0;
}
