/*
 * libstrata_glm: a host's ranks and its memory for training (st_glm_mem.h); what the
 * host has free comes from common/st_sysmem.c.
 */
#include "config.h"

#include "st_glm_mem.h"
#include "st_sysmem.h"

#include <ctype.h>
#include <locale.h>
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
    int size = 1, found = 0, ok, kept, set;

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
    kept = st_glm_agree(comm, e != NULL);
    if (kept) {
        e->comm = comm;
        e->host = host;
        set     = (MPI_Comm_set_attr(comm, st_glm_host_keyval, e) == MPI_SUCCESS);
        if (set) {
            pthread_mutex_lock(&st_glm_host_lock);
            e->next             = st_glm_host_entries;
            st_glm_host_entries = e;
            pthread_mutex_unlock(&st_glm_host_lock);
        }
        kept = st_glm_agree(comm, set);
        if (!kept && set) {   /* (set on some ranks only: undone, its callback frees both) */
            MPI_Comm_delete_attr(comm, st_glm_host_keyval);
            e    = NULL;
            host = MPI_COMM_NULL;
        }
    }
    if (!kept) {
        free(e);
        if (host != MPI_COMM_NULL) {
            MPI_Comm_free(&host);
        }
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

    st_glm_host_comm(comm, &host);
    /* (the host's sum decides whether a reading may be reused: its ranks together) */
    st_glm_allreduce(host, &need, 1, MPI_DOUBLE, MPI_SUM);
    if (avail < 0) {
        avail = (need > 0) ? st_glm_mem_read(need) : HUGE_VAL;
    }
    st_glm_allreduce(host, &avail, 1, MPI_DOUBLE, MPI_MIN);
    host_p[0] = need;
    host_p[1] = avail;
}

void st_glm_mem_worst(MPI_Comm comm, double host[2], char *name, int len)
{
    struct {
        double short_by;
        int    rank;
    } me, worst;

    if (gethostname(name, (size_t)len) != 0) {
        snprintf(name, (size_t)len, "(unnamed)");
    }
    name[len - 1] = '\0';
    if (comm == MPI_COMM_NULL) {
        return;
    }
    MPI_Comm_rank(comm, &me.rank);
    me.short_by = host[0] - host[1];
    worst = me;
    ST_GLM_MPI(MPI_Allreduce(&me, &worst, 1, MPI_DOUBLE_INT, MPI_MAXLOC, comm));
    ST_GLM_MPI(MPI_Bcast(host, 2, MPI_DOUBLE, worst.rank, comm));
    ST_GLM_MPI(MPI_Bcast(name, len, MPI_CHAR, worst.rank, comm));
}

/* STRATA_GLM_MEM_AVAILABLE: bytes, with K, M, G or T (powers of 1024) after them,
 * read in the C locale whatever the program's (a decimal comma refused "1.5G");
 * @return them, -1 where unset or empty, -2 where it is not such a size. */
double st_glm_mem_env(const char **str_p)
{
    const char *str = getenv("STRATA_GLM_MEM_AVAILABLE"), *units = "KMGT", *u;
    locale_t c;
    char *end;
    double v;

    *str_p = str;
    if (str == NULL || *str == '\0') {
        return -1;
    }
    if (!isdigit((unsigned char)*str)) {
        return -2;
    }
    c = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
    if (c == (locale_t)0) {
        return -2;   /* (no memory for a locale: nothing else will work either) */
    }
    v = strtod_l(str, &end, c);
    freelocale(c);
    if (*end != '\0' && (u = strchr(units, toupper((unsigned char)*end))) != NULL) {
        v = ldexp(v, 10 * (int)(u - units + 1));
        end++;
    }
    return (*end == '\0' && isfinite(v)) ? v : -2;
}
