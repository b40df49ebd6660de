/*
 * libstrata_glm: a host's memory for training (st_glm_mem.h); what the host has free
 * comes from common/st_sysmem.c.
 */
#include "config.h"

#include "st_glm_mem.h"
#include "st_sysmem.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Each rank of a host alone would see the whole of its memory free: the host's ranks
 * sum their needs. */
void st_glm_mem_host(MPI_Comm comm, double need, double avail, double host_p[2])
{
    MPI_Comm host = MPI_COMM_NULL;

    if (avail < 0) {   /* (a rank that needs nothing reads nothing: the others' answer) */
        avail = (need > 0) ? st_sys_mem_available() : HUGE_VAL;
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
