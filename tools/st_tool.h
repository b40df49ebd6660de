/*
 * What the command-line tools share: telling whether two paths name one file, so
 * that no tool writes its output over one of its inputs (or two outputs over
 * each other). Their outputs are written whole or not at all (st_glm_file.h).
 */
#ifndef ST_TOOL_H
#define ST_TOOL_H

#include "st_glm_file.h"   /* st_glm_out_dest */

#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* @a path's directory resolved, then its last name: one string per file, for a
 * file that need not exist yet; 0 when the directory does not resolve. */
static inline int st_tool_canonical(const char *path, char *out, size_t len)
{
    char d[PATH_MAX], b[PATH_MAX], real[PATH_MAX];

    if (strlen(path) >= sizeof(d)) {
        return 0;
    }
    strcpy(d, path);
    strcpy(b, path);
    if (realpath(dirname(d), real) == NULL) {
        return 0;
    }
    return snprintf(out, len, "%s/%s", real, basename(b)) < (int)len;
}

/* Why @a path cannot be written, or NULL where it can: its directory (its name, as
 * @a path gives it, into @a dir) is not a directory, or neither it nor the file takes
 * a write (the outputs are written beside the file and renamed, or in place where only
 * the file is writable). Checked before a long run, which would otherwise fail at its
 * end (strata-train's model and checkpoint, strata-gen's --test-out). */
static inline const char *st_tool_cannot_write(const char *path, char *dir, size_t len)
{
    const char *slash = strrchr(path, '/');
    struct stat st;

    snprintf(dir, len, "%.*s", (slash == NULL || slash == path) ? 1 : (int)(slash - path),
             (slash == NULL) ? "." : path);
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        return "is not a directory";
    }
    if (access(dir, W_OK | X_OK) != 0 && access(path, W_OK) != 0) {
        return "takes no new file";
    }
    return NULL;
}

/* Do @a a and @a b name the same file: the same name, the same inode (hard and
 * symbolic links), or, where neither exists yet, the same place (a dangling symbolic
 * link names the place a write creates: its target)? */
static inline int st_tool_same_file(const char *a, const char *b)
{
    char ca[2 * PATH_MAX], cb[2 * PATH_MAX], *da, *db;
    struct stat sa, sb;
    int ea, eb, same;

    if (a == NULL || b == NULL) {
        return 0;
    }
    if (strcmp(a, b) == 0) {
        return 1;
    }
    ea = (stat(a, &sa) == 0);
    eb = (stat(b, &sb) == 0);
    if (ea && eb) {
        return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
    }
    if (ea || eb) {
        return 0;   /* one exists, the other not */
    }
    da   = st_glm_out_dest(a);
    db   = st_glm_out_dest(b);
    same = da != NULL && db != NULL && st_tool_canonical(da, ca, sizeof(ca)) &&
           st_tool_canonical(db, cb, sizeof(cb)) && strcmp(ca, cb) == 0;
    free(da);
    free(db);
    return same;
}

#endif /* ST_TOOL_H */
