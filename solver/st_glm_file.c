/*
 * Output files written whole or not at all (solver/st_glm_file.h).
 */
#include "config.h"

#include "st_glm_file.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define ST_GLM_OUT_TRIES  64      /* names tried for a temporary */
#define ST_GLM_OUT_LINKS  40      /* symbolic links followed, as the kernel's limit */
#define ST_GLM_OUT_INFIX  ".tmp." /* a temporary's name: <dest>.tmp.<pid>.<n> */
#define ST_GLM_OUT_SUFFIX 48      /* room for ".tmp.<pid>.<n>" */
/* a temporary's name takes at most this much of the destination's (so that with
 * ".tmp.<pid>.<n>", 5 + 10 + 1 + 10 bytes, it stays within NAME_MAX, 255: a file
 * whose own name is near that length still gets one) */
#define ST_GLM_OUT_BASE_MAX (255 - 26)
/* a temporary younger than this may be one whose writer has created it and not yet
 * locked it: left alone by the sweep */
#define ST_GLM_OUT_YOUNG  60      /* seconds */
#define ST_GLM_OUT_LIVE   16      /* temporaries a fatal signal's handler removes */

/* The temporaries this process is writing, for the handler of the signals that end
 * a process by default (an interrupt, a batch system's or timeout's SIGTERM): it
 * removes them and lets the signal end the process as it would have (before, each
 * such end left its "<dest>.tmp.<pid>.<n>" behind, as large as what was written).
 * Slots: 0 free, 1 being filled, 2 live; names in static storage, so the handler
 * reads no memory that a thread may free under it. */
static int  st_glm_out_live_state[ST_GLM_OUT_LIVE];
static char st_glm_out_live_name[ST_GLM_OUT_LIVE][PATH_MAX];
static const int st_glm_out_signals[] = {SIGHUP, SIGINT, SIGPIPE, SIGTERM, SIGXCPU, SIGXFSZ};
static pthread_once_t st_glm_out_handlers_once = PTHREAD_ONCE_INIT;

static void st_glm_out_on_signal(int sig)
{
    int i, saved = errno;

    for (i = 0; i < ST_GLM_OUT_LIVE; i++) {
        if (__atomic_load_n(&st_glm_out_live_state[i], __ATOMIC_ACQUIRE) == 2) {
            (void)unlink(st_glm_out_live_name[i]);
        }
    }
    errno = saved;
    raise(sig);   /* SA_RESETHAND: the default action, once the handler returns */
}

/* the handler, for each of those signals whose disposition is still the default (a
 * program's own handler, or an ignored signal, is left as it is) */
static void st_glm_out_handlers(void)
{
    struct sigaction sa, old;
    size_t i;

    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = st_glm_out_on_signal;
    sa.sa_flags   = SA_RESETHAND;
    sigemptyset(&sa.sa_mask);
    for (i = 0; i < sizeof(st_glm_out_signals) / sizeof(st_glm_out_signals[0]); i++) {
        if (sigaction(st_glm_out_signals[i], NULL, &old) == 0 && !(old.sa_flags & SA_SIGINFO) &&
            old.sa_handler == SIG_DFL) {
            (void)sigaction(st_glm_out_signals[i], &sa, NULL);
        }
    }
}

/* Register @a tmp for removal by a fatal signal: its slot, or -1 (none free, or a
 * name too long: then a signal leaves it, as SIGKILL does, for the sweep). */
static int st_glm_out_live_add(const char *tmp)
{
    int i, expect;

    if (strlen(tmp) >= PATH_MAX) {
        return -1;
    }
    (void)pthread_once(&st_glm_out_handlers_once, st_glm_out_handlers);
    for (i = 0; i < ST_GLM_OUT_LIVE; i++) {
        expect = 0;
        if (__atomic_compare_exchange_n(&st_glm_out_live_state[i], &expect, 1, 0,
                                        __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
            strcpy(st_glm_out_live_name[i], tmp);
            __atomic_store_n(&st_glm_out_live_state[i], 2, __ATOMIC_RELEASE);
            return i;
        }
    }
    return -1;
}

static void st_glm_out_live_remove(int slot)
{
    if (slot >= 0) {
        __atomic_store_n(&st_glm_out_live_state[slot], 0, __ATOMIC_RELEASE);
    }
}

/* The directory holding @a path (malloc'ed; NULL when out of memory) and, in
 * @a base_p, where the file's own name starts in @a path. */
static char *st_glm_dir_of(const char *path, const char **base_p)
{
    const char *slash = strrchr(path, '/');

    *base_p = (slash == NULL) ? path : slash + 1;
    if (slash == NULL) {
        return strdup(".");
    } else if (slash == path) {
        return strdup("/");
    }
    return strndup(path, (size_t)(slash - path));
}

/* 1 when @a s is one or more decimal digits followed by @a end */
static int st_glm_digits(const char *s, char end, const char **rest_p)
{
    const char *p = s;

    while (*p >= '0' && *p <= '9') {
        p++;
    }
    *rest_p = p;
    return p > s && *p == end;
}

/* the target of the link @a link, as a path from where @a link is (malloc'ed) */
static char *st_glm_link_target(const char *link, size_t size_hint)
{
    size_t cap = (size_hint > 0 ? size_hint : PATH_MAX) + 1;
    const char *base;
    char *target = malloc(cap), *dir, *path;
    ssize_t n;

    if (target == NULL) {
        return NULL;
    }
    n = readlink(link, target, cap);
    if (n < 0 || (size_t)n >= cap) {
        free(target);
        errno = (n < 0) ? errno : ENAMETOOLONG;
        return NULL;
    }
    target[n] = '\0';
    if (target[0] == '/') {
        return target;
    }
    dir  = st_glm_dir_of(link, &base);
    path = (dir != NULL) ? malloc(strlen(dir) + (size_t)n + 2) : NULL;
    if (path != NULL) {
        sprintf(path, "%s/%s", dir, target);
    }
    free(dir);
    free(target);
    return path;
}

char *st_glm_out_dest(const char *path)
{
    char *cur = strdup(path), *next;
    struct stat st;
    int hops;

    for (hops = 0; cur != NULL; hops++) {
        if (lstat(cur, &st) != 0 || !S_ISLNK(st.st_mode)) {
            return cur;
        }
        if (hops == ST_GLM_OUT_LINKS) {
            free(cur);
            errno = ELOOP;
            return NULL;
        }
        next = st_glm_link_target(cur, (size_t)st.st_size);
        free(cur);
        cur = next;
    }
    return NULL;
}

/* fsync the directory holding @a path, so a rename survives a crash (best effort) */
static void st_glm_sync_dir(const char *path)
{
    const char *base;
    char *dir;
    int fd;

    dir = st_glm_dir_of(path, &base);
    if (dir == NULL) {
        return;
    }
    fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        (void)fsync(fd);
        close(fd);
    }
    free(dir);
}

/* The bytes of @a dest a temporary's name starts with: all of it, but at most
 * ST_GLM_OUT_BASE_MAX of its last component. */
static int st_glm_out_tmp_len(const char *dest)
{
    const char *slash = strrchr(dest, '/'), *base = (slash != NULL) ? slash + 1 : dest;

    return (int)((size_t)(base - dest) + ST_MIN(strlen(base), (size_t)ST_GLM_OUT_BASE_MAX));
}

/* The temporary of o->dest: created (O_EXCL), locked, with an existing
 * destination's owner and mode. @return 0, or -1 with errno set. */
static int st_glm_out_tmp(st_glm_out_t *o)
{
    static unsigned counter;
    struct stat st;
    size_t len = strlen(o->dest) + ST_GLM_OUT_SUFFIX;
    int tries;

    o->tmp = malloc(len);
    if (o->tmp == NULL) {
        errno = ENOMEM;
        return -1;
    }
    for (tries = 0; tries < ST_GLM_OUT_TRIES; tries++) {
        unsigned n = __atomic_fetch_add(&counter, 1, __ATOMIC_RELAXED);

        snprintf(o->tmp, len, "%.*s" ST_GLM_OUT_INFIX "%ld.%u", st_glm_out_tmp_len(o->dest),
                 o->dest, (long)getpid(), n);
        o->fd = open(o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (o->fd >= 0 || errno != EEXIST) {
            break;
        }
    }
    if (o->fd < 0) {
        if (tries == ST_GLM_OUT_TRIES) {
            errno = EEXIST;
        }
        free(o->tmp);
        o->tmp = NULL;
        return -1;
    }
    o->owner = 1;
    o->live  = st_glm_out_live_add(o->tmp);
    (void)flock(o->fd, LOCK_EX | LOCK_NB);   /* where the file system has locks */
    if (stat(o->dest, &st) == 0 && S_ISREG(st.st_mode)) {
        /* owner first: a change of owner clears the set-id bits */
        if (fchown(o->fd, st.st_uid, st.st_gid) != 0) {
            /* best effort: only root may give a file away */
        }
        (void)fchmod(o->fd, st.st_mode & 07777);
    }
    return 0;
}

/* The file itself, opened as fopen(path, "w") would (truncated), written in place:
 * where a temporary and a rename cannot stand for it (st_glm_out_open).
 * @return 0, or -1 with errno set. */
static int st_glm_out_direct(st_glm_out_t *o, const char *path, int exists, int regular)
{
    int err;

    free(o->dest);
    o->dest = strdup(path);
    if (o->dest == NULL) {
        errno = ENOMEM;
        return -1;
    }
    o->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (o->fd < 0) {
        err = errno;
        free(o->dest);
        o->dest = NULL;
        errno   = err;
        return -1;
    }
    o->direct   = 1;
    o->created  = !exists;   /* (removed again if the write fails) */
    o->replaced = exists && regular;
    return 0;
}

/* A sticky directory (/tmp) lets only the file's owner, the directory's or root
 * rename over a file: is @a dest (whose status is @a st) another user's there? */
static int st_glm_out_sticky_other(const char *dest, const struct stat *st)
{
    const char *base;
    struct stat ds;
    char *dir = st_glm_dir_of(dest, &base);
    uid_t uid = geteuid();
    int other;

    other = dir != NULL && stat(dir, &ds) == 0 && (ds.st_mode & S_ISVTX) && uid != 0 &&
            st->st_uid != uid && ds.st_uid != uid;
    free(dir);
    return other;
}

int st_glm_out_open(st_glm_out_t *o, const char *path)
{
    struct stat st;
    int exists, err;

    memset(o, 0, sizeof(*o));
    o->fd  = -1;
    exists = (stat(path, &st) == 0);
    /* not a regular file (a device such as /dev/null, a named pipe), or a name of
     * one of the process's descriptors (/dev/stdout, /dev/fd/3, anything in /proc),
     * whatever it holds: the file itself, in place. Not the rest of /dev: a file in
     * /dev/shm is a file like any other (before, all of /dev was written in place,
     * and a run that failed or was killed left the user's file half written). */
    if ((exists && !S_ISREG(st.st_mode)) || strncmp(path, "/dev/fd/", 8) == 0 ||
        strcmp(path, "/dev/stdout") == 0 || strcmp(path, "/dev/stderr") == 0 ||
        strcmp(path, "/dev/stdin") == 0 || strncmp(path, "/proc/", 6) == 0) {
        return st_glm_out_direct(o, path, exists, 0);
    }
    o->dest = st_glm_out_dest(path);
    if (o->dest == NULL) {
        return -1;
    }
    /* an existing file the user may not write stays as it is, as with fopen */
    if (exists && access(o->dest, W_OK) != 0) {
        err = errno;
        goto fail;
    }
    if (exists && st_glm_out_sticky_other(o->dest, &st)) {
        return st_glm_out_direct(o, path, exists, 1);   /* no rename over it allowed */
    }
    if (st_glm_out_tmp(o) == 0) {
        return 0;
    }
    err = errno;
    /* no new file in the directory (not writable, read-only): in place, as fopen
     * would (where that fails too, so be it; a failure then says what is lost) */
    if (err == EACCES || err == EPERM || err == EROFS) {
        return st_glm_out_direct(o, path, exists, 1);
    }

fail:
    free(o->dest);
    memset(o, 0, sizeof(*o));
    o->fd = -1;
    errno = err;
    return -1;
}

/* Remove the temporaries of @a dest that no writer holds: older than a minute, and
 * locked by nobody (where the file system has no locks, none is removed). The test
 * is a shared lock, which a writer's exclusive one refuses, on a read-only
 * descriptor (NFS's emulated flock refuses an exclusive lock on one). */
static void st_glm_out_sweep(const char *dest)
{
    const char *base, *rest;
    time_t now = time(NULL);
    struct dirent *e;
    struct stat st;
    size_t blen, ilen = strlen(ST_GLM_OUT_INFIX);
    char *dir, *victim;
    DIR *d;
    int fd;

    dir = st_glm_dir_of(dest, &base);
    if (dir == NULL) {
        return;
    }
    blen = ST_MIN(strlen(base), (size_t)ST_GLM_OUT_BASE_MAX);   /* (as st_glm_out_tmp_len) */
    d    = opendir(dir);
    while (d != NULL && (e = readdir(d)) != NULL) {
        /* "<base>.tmp.<digits>.<digits>", as st_glm_out_open makes them */
        if (strncmp(e->d_name, base, blen) != 0 ||
            strncmp(e->d_name + blen, ST_GLM_OUT_INFIX, ilen) != 0 ||
            !st_glm_digits(e->d_name + blen + ilen, '.', &rest) ||
            !st_glm_digits(rest + 1, '\0', &rest)) {
            continue;
        }
        victim = malloc(strlen(dir) + strlen(e->d_name) + 2);
        if (victim == NULL) {
            continue;
        }
        sprintf(victim, "%s/%s", dir, e->d_name);
        fd = open(victim, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
        if (fd >= 0) {
            if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
                st.st_mtime + ST_GLM_OUT_YOUNG <= now && flock(fd, LOCK_SH | LOCK_NB) == 0) {
                (void)unlink(victim);
            }
            close(fd);
        }
        free(victim);
    }
    if (d != NULL) {
        closedir(d);
    }
    free(dir);
}

st_status_t st_glm_out_open_all(st_glm_out_t *o, const char *path, uint64_t size,
                                const st_glm_comm_t *c, const char *what, st_glm_err_t *err)
{
    st_status_t status;
    int len = 0;

    memset(o, 0, sizeof(*o));
    o->fd = -1;
    if (c->rank == 0) {
        if (st_glm_out_open(o, path) != 0 || ftruncate(o->fd, (off_t)size) != 0) {
            st_glm_err_set(err, ST_ERR_IO, ST_GLM_ERR_KEY_FIRST, "%s: cannot write %s: %s",
                           path, what, strerror(errno));
        } else {
            len = (int)strlen(o->direct ? o->dest : o->tmp) + 1;
        }
    }
    status = st_glm_err_agree(c, err);
    if (status == ST_OK && c->comm != MPI_COMM_NULL && c->size > 1) {
        int how[3] = {len, o->direct, o->replaced};

        ST_GLM_MPI(MPI_Bcast(how, 3, MPI_INT, 0, c->comm));
        if (st_glm_mpi_failed()) {
            st_glm_err_set(err, ST_ERR_MPI, ST_GLM_ERR_KEY_FIRST, "MPI_Bcast failed");
            return st_glm_err_agree(c, err);
        }
        len         = how[0];
        o->direct   = how[1];   /* (the others write rank 0's file: what a failure left of */
        o->replaced = how[2];   /* it, st_glm_out_lost; they create and remove nothing) */
        if (c->rank != 0 && (o->tmp = malloc((size_t)len)) == NULL) {
            st_glm_err_set(err, ST_ERR_NO_MEMORY, ST_GLM_ERR_KEY_FIRST, "out of memory");
        }
        status = st_glm_err_agree(c, err);
    }
    if (status == ST_OK && c->comm != MPI_COMM_NULL && c->size > 1) {
        /* the name to open: the temporary's, or the file's own where rank 0 writes it
           in place (the other ranks' copy is theirs to close, not to remove) */
        ST_GLM_MPI(MPI_Bcast(c->rank == 0 && o->direct ? o->dest : o->tmp, len, MPI_CHAR, 0,
                             c->comm));
        if (st_glm_mpi_failed()) {
            st_glm_err_set(err, ST_ERR_MPI, ST_GLM_ERR_KEY_FIRST, "MPI_Bcast failed");
        }
        if (c->rank != 0) {
            o->fd = open(o->tmp, O_WRONLY | O_CLOEXEC);
            if (o->fd < 0) {
                st_glm_err_set(err, ST_ERR_IO, ST_GLM_ERR_KEY_FIRST, "%s: rank %d cannot open "
                               "%s's temporary file %s that rank 0 created (no shared file "
                               "system?): %s", path, c->rank, what, o->tmp, strerror(errno));
            }
        }
        status = st_glm_err_agree(c, err);
    }
    if (status != ST_OK) {
        st_glm_out_close(o);
    }
    return status;
}

int st_glm_out_commit(st_glm_out_t *o)
{
    if (o->direct) {
        /* written in place: synced where it is a file (not a pipe or a device) */
        if (fsync(o->fd) != 0 && errno != EINVAL && errno != EROFS) {
            return errno;
        }
        o->committed = 1;
        return 0;
    }
    if (fsync(o->fd) != 0 || rename(o->tmp, o->dest) != 0) {
        return errno;
    }
    o->committed = 1;
    if (o->owner) {
        st_glm_out_live_remove(o->live);
    }
    st_glm_sync_dir(o->dest);
    st_glm_out_sweep(o->dest);
    return 0;
}

const char *st_glm_out_lost(const st_glm_out_t *o)
{
    if (o->direct && o->replaced && !o->committed) {
        return "the file was being rewritten in place, as its directory takes no temporary "
               "file: what it held is lost, and it is incomplete now";
    }
    if (o->direct && !o->created) {
        return "written in place";   /* (a device, a pipe) */
    }
    return o->direct ? "no file left" : "the file is unchanged";
}

void st_glm_out_close(st_glm_out_t *o)
{
    if (o->fd >= 0) {
        close(o->fd);
    }
    if (o->owner && !o->committed && o->tmp != NULL) {
        (void)unlink(o->tmp);
    }
    if (o->owner) {
        st_glm_out_live_remove(o->live);
    }
    if (o->direct && o->created && !o->committed) {
        (void)unlink(o->dest);   /* a file this writer created and did not finish */
    }
    free(o->dest);
    free(o->tmp);
    memset(o, 0, sizeof(*o));
    o->fd = -1;
}
