/*
 * libstrata_glm: a host's memory for training (st_glm_mem.h). The figures the kernel
 * gives (MemAvailable, the memory cgroups' limits) are read here only.
 */
#include "config.h"

#include "st_glm_mem.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* What a memory cgroup (v2, else v1's memory controller) of directory @a dir lets its
 * processes still take: its limit less its usage net of the page cache it can drop
 * (inactive files); a larger @a avail stays (no limit, or no such files). */
static double st_glm_mem_cgroup_avail(const char *dir, int v2, double avail)
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
double st_glm_mem_available(void)
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
            avail = st_glm_mem_cgroup_avail(dir, v2, avail);
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

/* Each rank of a host alone would see the whole of its memory free: the host's ranks
 * sum their needs. */
void st_glm_mem_host(MPI_Comm comm, double need, double avail, double host_p[2])
{
    MPI_Comm host = MPI_COMM_NULL;

    if (avail < 0) {   /* (a rank that needs nothing reads nothing: the others' answer) */
        avail = (need > 0) ? st_glm_mem_available() : HUGE_VAL;
    }
    if (comm != MPI_COMM_NULL &&
        MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &host) ==
                MPI_SUCCESS &&
        host != MPI_COMM_NULL) {
        st_glm_allreduce(host, &need, 1, MPI_DOUBLE, MPI_SUM);
        st_glm_allreduce(host, &avail, 1, MPI_DOUBLE, MPI_MIN);
        MPI_Comm_free(&host);
    }
    host_p[0] = need;
    host_p[1] = avail;
}

/* STRATA_GLM_MEM_AVAILABLE: bytes, with K, M, G or T (powers of 1024) after them;
 * @return them, -1 where unset or empty, -2 where it is not such a size. */
double st_glm_mem_env(const char **str_p)
{
    const char *str = getenv("STRATA_GLM_MEM_AVAILABLE"), *units = "KMGT", *u;
    char *end;
    double v;

    *str_p = str;
    if (str == NULL || *str == '\0') {
        return -1;
    }
    if (!isdigit((unsigned char)*str)) {
        return -2;
    }
    v = strtod(str, &end);
    if (*end != '\0' && (u = strchr(units, toupper((unsigned char)*end))) != NULL) {
        v = ldexp(v, 10 * (int)(u - units + 1));
        end++;
    }
    return (*end == '\0' && isfinite(v)) ? v : -2;
}
