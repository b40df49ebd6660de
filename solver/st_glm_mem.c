/*
 * libstrata_glm: a host's ranks and its memory for training (st_glm_mem.h); what the
 * host has free comes from common/st_sysmem.c.
 */
#include "config.h"

#include "st_glm_mem.h"
#include "st_sysmem.h"

#include <ctype.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* ---- the ranks of a user's communicator on this host, cached on it ----
 *
 * MPI_Comm_split_type costs a context id's agreement (several allreduces, and under
 * mpi_yield_when_idle a yield of the core each): made per training it was most of a
 * -C search's fixed cost (5350 trainings). It is made once per communicator instead and
 * kept as an attribute of it; freeing the communicator frees it, and so does the start
 * of MPI_Finalize (an attribute of MPI_COMM_SELF: MPI_COMM_WORLD's own are deleted only
 * when communicators may no longer be freed), through the list of those that have one. */

typedef struct st_glm_host_entry {
    MPI_Comm                  comm;   /* the user's */
    MPI_Comm                  host;
    struct st_glm_host_entry *next;
} st_glm_host_entry_t;

static pthread_mutex_t      st_glm_host_lock    = PTHREAD_MUTEX_INITIALIZER;
static int                  st_glm_host_keyval  = MPI_KEYVAL_INVALID;
static int                  st_glm_self_keyval  = MPI_KEYVAL_INVALID;
static st_glm_host_entry_t *st_glm_host_entries = NULL;

/* A user's communicator freed (or the library finalizing it): its host's freed. */
static int st_glm_host_delete(MPI_Comm comm, int keyval, void *value, void *extra)
{
    st_glm_host_entry_t *e = value, **pp;

    (void)comm;
    (void)keyval;
    (void)extra;
    pthread_mutex_lock(&st_glm_host_lock);
    for (pp = &st_glm_host_entries; *pp != NULL; pp = &(*pp)->next) {
        if (*pp == e) {
            *pp = e->next;
            break;
        }
    }
    pthread_mutex_unlock(&st_glm_host_lock);
    MPI_Comm_free(&e->host);
    free(e);
    return MPI_SUCCESS;
}

/* The start of MPI_Finalize (MPI_COMM_SELF's attributes go first): every host freed
 * while communicators still may be, then the keyvals. */
static int st_glm_host_finalize(MPI_Comm comm, int keyval, void *value, void *extra)
{
    st_glm_host_entry_t *e;

    (void)comm;
    (void)keyval;
    (void)value;
    (void)extra;
    for (;;) {
        pthread_mutex_lock(&st_glm_host_lock);
        e = st_glm_host_entries;
        pthread_mutex_unlock(&st_glm_host_lock);
        if (e == NULL) {
            break;
        }
        if (MPI_Comm_delete_attr(e->comm, st_glm_host_keyval) != MPI_SUCCESS) {
            st_glm_host_delete(e->comm, st_glm_host_keyval, e, NULL);   /* (MPI did not) */
        }
    }
    MPI_Comm_free_keyval(&st_glm_host_keyval);
    MPI_Comm_free_keyval(&st_glm_self_keyval);
    return MPI_SUCCESS;
}

void st_glm_host_comm(MPI_Comm comm, MPI_Comm *host_p)
{
    st_glm_host_entry_t *e = NULL;
    MPI_Comm host = MPI_COMM_NULL;
    int size = 1, found = 0, ok;

    if (comm != MPI_COMM_NULL) {
        MPI_Comm_size(comm, &size);
    }
    if (comm == MPI_COMM_NULL || size == 1) {   /* (no MPI; or a host of one rank) */
        *host_p = (comm == MPI_COMM_NULL) ? MPI_COMM_NULL : MPI_COMM_SELF;
        return;
    }
    pthread_mutex_lock(&st_glm_host_lock);
    ok = (st_glm_host_keyval != MPI_KEYVAL_INVALID ||
          (MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, st_glm_host_delete,
                                  &st_glm_host_keyval, NULL) == MPI_SUCCESS &&
           MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, st_glm_host_finalize,
                                  &st_glm_self_keyval, NULL) == MPI_SUCCESS &&
           MPI_Comm_set_attr(MPI_COMM_SELF, st_glm_self_keyval, NULL) == MPI_SUCCESS));
    pthread_mutex_unlock(&st_glm_host_lock);
    if (ok) {   /* (every rank sets and finds it in the same calls: they agree) */
        MPI_Comm_get_attr(comm, st_glm_host_keyval, &e, &found);
    }
    if (found) {
        *host_p = e->host;
        return;
    }
    if (MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &host) !=
                MPI_SUCCESS) {
        host = MPI_COMM_NULL;
    }
    e = (ok && host != MPI_COMM_NULL) ? malloc(sizeof(*e)) : NULL;
    /* (kept by every rank or by none: a rank that split again while the others found
       theirs would wait alone) */
    if (st_glm_agree(comm, e != NULL)) {
        e->comm = comm;
        e->host = host;
        pthread_mutex_lock(&st_glm_host_lock);
        e->next             = st_glm_host_entries;
        st_glm_host_entries = e;
        pthread_mutex_unlock(&st_glm_host_lock);
        MPI_Comm_set_attr(comm, st_glm_host_keyval, e);
    } else if (host != MPI_COMM_NULL) {   /* (not kept: this call's alone) */
        free(e);
        MPI_Comm_free(&host);
        host = MPI_COMM_NULL;
    }
    *host_p = host;
}

/* ---- the host's memory ---- */

static pthread_mutex_t st_glm_mem_lock     = PTHREAD_MUTEX_INITIALIZER;
static long            st_glm_mem_readings = 0;

long st_glm_mem_reads(void)
{
    long n;

    pthread_mutex_lock(&st_glm_mem_lock);
    n = st_glm_mem_readings;
    pthread_mutex_unlock(&st_glm_mem_lock);
    return n;
}

/* The host's available memory, read at most once a second while needs stay below a
 * quarter of the last reading (a -C search trains thousands of times a second; each
 * reading opens some 17 files of /proc and the cgroups'). */
static double st_glm_mem_read(double need)
{
    static double last = -1, last_at = 0;
    struct timespec ts;
    double now, avail;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    now = (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
    pthread_mutex_lock(&st_glm_mem_lock);
    avail = (last >= 0 && now - last_at < 1.0 && need <= 0.25 * last) ? last : -1;
    pthread_mutex_unlock(&st_glm_mem_lock);
    if (avail < 0) {
        avail = st_sys_mem_available();
        pthread_mutex_lock(&st_glm_mem_lock);
        last    = avail;
        last_at = now;
        st_glm_mem_readings++;
        pthread_mutex_unlock(&st_glm_mem_lock);
    }
    return avail;
}

/* Each rank of a host alone would see the whole of its memory free: the host's ranks
 * sum their needs. */
void st_glm_mem_host(MPI_Comm comm, double need, double avail, double host_p[2])
{
    MPI_Comm host;

    if (avail < 0) {   /* (a rank that needs nothing reads nothing: the others' answer) */
        avail = (need > 0) ? st_glm_mem_read(need) : HUGE_VAL;
    }
    st_glm_host_comm(comm, &host);
    if (host != MPI_COMM_NULL) {
        st_glm_allreduce(host, &need, 1, MPI_DOUBLE, MPI_SUM);
        st_glm_allreduce(host, &avail, 1, MPI_DOUBLE, MPI_MIN);
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
