/*
 * Output files written whole or not at all: models, checkpoints, binary datasets,
 * and the tools' text outputs (solver/st_glm_file.c).
 */
#ifndef ST_GLM_FILE_H
#define ST_GLM_FILE_H

#include "st_glm_data.h"   /* st_glm_comm_t, st_glm_err_t */

#include <stddef.h>
#include <stdint.h>

/*
 * An output on its way: written to a temporary file next to its destination, then
 * renamed over it, so that a failed or killed writer leaves the old file as it was
 * (and a reader never sees half a file). The destination is the path given, or,
 * where that is a symbolic link (dangling or not), the file it names: a link is
 * followed as fopen would, not replaced. An existing destination's permissions
 * (and, where allowed, owner) carry over to the new file.
 *
 * The temporary, "<dest>.tmp.<pid>.<n>", is locked (flock) by its writer until it
 * is closed; after each successful rename the writer removes the temporaries of
 * the same destination that nobody holds (writers killed before their rename),
 * so writers of one file at once (each one's rename wins in turn) never remove
 * each other's. A signal that ends the process by default (SIGINT, SIGTERM, SIGHUP,
 * SIGPIPE, SIGXCPU, SIGXFSZ, where the program has not set their disposition)
 * removes the temporaries being written before it ends it.
 */
typedef struct {
    char *dest;       /**< where the file lands (links followed) */
    char *tmp;        /**< the temporary next to it */
    int   fd;         /**< open for writing on tmp; -1 once the caller closed it */
    int   committed;  /**< tmp renamed over dest */
    int   owner;      /**< this process made tmp (and removes it unless committed) */
    int   live;       /**< owner: tmp's slot among those a fatal signal removes, or -1 */
    int   direct;     /**< no temporary: dest itself, written in place (a device, a
                           pipe, /dev/stdout; a directory that takes no new file) */
    int   created;    /**< direct: dest did not exist (removed unless committed) */
    int   replaced;   /**< direct: dest is an existing regular file, truncated (its
                           directory takes no temporary, or another user's in a
                           sticky directory) */
} st_glm_out_t;

/** The file writing @a path lands on (symbolic links followed, the last one may
 * dangle), malloc'ed; NULL with errno set (ELOOP beyond 40 links, ENOMEM). */
char *st_glm_out_dest(const char *path);

/** Create the temporary of @a path (mode 0666 less the umask, or the destination's).
 * @return 0, or -1 with errno set (@a o then needs no st_glm_out_close). */
int st_glm_out_open(st_glm_out_t *o, const char *path);

/** Collective over @a c: rank 0 opens the temporary of @a path, sized to @a size
 * bytes, and sends its name; the other ranks open it by that name, for writing (so
 * the ranks must share a file system). The outcome is agreed (the messages name the
 * file as @a what, "the checkpoint"): ST_OK everywhere, or the same error on every
 * rank and nothing left behind. Rank 0 alone commits, once all have written. */
st_status_t st_glm_out_open_all(st_glm_out_t *o, const char *path, uint64_t size,
                                const st_glm_comm_t *c, const char *what, st_glm_err_t *err);

/** fsync the temporary, rename it over the destination, fsync the directory and
 * remove killed writers' temporaries. The descriptor stays open (the caller closes
 * it, or its FILE). @return 0, or an errno value (the destination is unchanged). */
int st_glm_out_commit(st_glm_out_t *o);

/** What a write that failed left of the destination, in words for a message ("the
 * file is unchanged", or that it was rewritten in place and is incomplete now); to be
 * asked before st_glm_out_close. */
const char *st_glm_out_lost(const st_glm_out_t *o);

/** Close the descriptor unless the caller did (o->fd = -1), remove the temporary
 * unless committed, free the names. */
void st_glm_out_close(st_glm_out_t *o);

#endif /* ST_GLM_FILE_H */
