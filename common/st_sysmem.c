/*
 * The memory a process may still take (st_sysmem.h). The figures the kernel gives
 * (MemAvailable, the memory cgroups' limits) are read here only: by libstrata's
 * shared-memory segments and libstrata_glm's check before training.
 */
#include "config.h"

#include "st_sysmem.h"
#include "st_common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* What a memory cgroup (v2, else v1's memory controller) of directory @a dir lets its
 * processes still take: its limit less its usage net of the page cache it can drop
 * (inactive files); a larger @a avail stays (no limit, or no such files). */
static double st_sys_mem_cgroup_avail(const char *dir, int v2, double avail)
{
    char path[4224], line[256];
    double limit = -1, usage = -1, inactive = 0, v;
    FILE *f;

    snprintf(path, sizeof(path), "%s/%s", dir, v2 ? "memory.max" : "memory.limit_in_bytes");
    if ((f = fopen(path, "r")) != NULL) {
        if (fgets(line, sizeof(line), f) != NULL && sscanf(line, "%lf", &v) == 1) {
            limit = v;   /* ("max": none) */
        }
        fclose(f);
    }
    snprintf(path, sizeof(path), "%s/%s", dir, v2 ? "memory.current" : "memory.usage_in_bytes");
    if ((f = fopen(path, "r")) != NULL) {
        if (fgets(line, sizeof(line), f) != NULL && sscanf(line, "%lf", &v) == 1) {
            usage = v;
        }
        fclose(f);
    }
    snprintf(path, sizeof(path), "%s/memory.stat", dir);
    if ((f = fopen(path, "r")) != NULL) {
        while (fgets(line, sizeof(line), f) != NULL) {
            if (sscanf(line, v2 ? "inactive_file %lf" : "total_inactive_file %lf", &v) == 1) {
                inactive = v;
            }
        }
        fclose(f);
    }
    if (limit < 0 || usage < 0) {
        return avail;
    }
    return ST_MIN(avail, ST_MAX(0.0, limit - ST_MAX(0.0, usage - inactive)));
}

/* The host's memory available to new allocations, in bytes: /proc/meminfo's
 * MemAvailable (which counts the page cache the kernel can drop; else the free
 * pages), less where the process's memory cgroup or one above it (a batch system's
 * job, a container) has a lower limit. The cgroup's directory is looked for under its
 * controller's mount, each of its ancestors too; in a container whose mount is its own
 * cgroup the path /proc/self/cgroup gives is not there, and the mount's top serves. */
double st_sys_mem_available(void)
{
    FILE *f = fopen("/proc/meminfo", "r");
    char line[4096], dir[4160], *p, *cut;
    double kb = -1, avail;
    int v2;

    while (f != NULL && fgets(line, sizeof(line), f) != NULL) {
        if (sscanf(line, "MemAvailable: %lf kB", &kb) == 1) {
            break;
        }
    }
    if (f != NULL) {
        fclose(f);
    }
    avail = (kb >= 0) ? kb * 1024.0
                      : (double)sysconf(_SC_AVPHYS_PAGES) * (double)sysconf(_SC_PAGESIZE);
    if ((f = fopen("/proc/self/cgroup", "r")) == NULL) {
        return avail;
    }
    while (fgets(line, sizeof(line), f) != NULL) {   /* "0::/path" or "4:memory:/path" */
        line[strcspn(line, "\n")] = '\0';
        v2 = (strncmp(line, "0::", 3) == 0);
        p  = strchr(line, ':');
        if (p == NULL || (!v2 && strstr(p, ":memory:") == NULL && strstr(p, ",memory:") == NULL &&
                          strstr(p, ":memory,") == NULL && strstr(p, ",memory,") == NULL)) {
            continue;
        }
        p = strchr(p + 1, ':');
        if (p == NULL || p[1] != '/') {
            continue;
        }
        snprintf(dir, sizeof(dir), "%s%s", v2 ? "/sys/fs/cgroup" : "/sys/fs/cgroup/memory",
                 p + 1);
        if (v2 && access("/sys/fs/cgroup/cgroup.controllers", F_OK) != 0) {
            snprintf(dir, sizeof(dir), "/sys/fs/cgroup/unified%s", p + 1);   /* hybrid */
        }
        for (;;) {   /* the cgroup and each one above it, to the mount's top */
            avail = st_sys_mem_cgroup_avail(dir, v2, avail);
            cut   = strrchr(dir, '/');
            if (cut == NULL ||
                strcmp(dir, v2 ? "/sys/fs/cgroup" : "/sys/fs/cgroup/memory") == 0 ||
                strcmp(dir, "/sys/fs/cgroup/unified") == 0) {
                break;
            }
            *cut = '\0';
        }
    }
    fclose(f);
    return avail;
}
