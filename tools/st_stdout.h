/*
 * Every tool's standard output: a write that failed (a full disk, /dev/full) is a
 * failure of the run, said on stderr with exit status 1, as coreutils' close_stdout
 * does: what the user asked for was not written. First thing in main:
 *     st_stdout_check("strata-bench");
 */
#ifndef ST_STDOUT_H
#define ST_STDOUT_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *st_stdout_prog = "strata";
static int st_stdout_said;   /* the run failed and said why: nothing more at exit */

/* at exit: flush standard output and close it; a failure ends the process with 1 */
static void st_stdout_close(void)
{
    int err = 0, failed;

    errno  = 0;
    failed = (fflush(stdout) != 0);
    if (failed) {
        err = errno;
    } else if (ferror(stdout)) {
        failed = 1;   /* an earlier write's error: its errno is gone, none is made up */
    }
    errno = 0;
    if (fclose(stdout) != 0 && !failed) {
        failed = 1;
        err    = errno;
    }
    if (failed && !st_stdout_said) {
        if (err != 0) {
            fprintf(stderr, "%s: cannot write standard output: %s\n", st_stdout_prog,
                    strerror(err));
        } else {
            fprintf(stderr, "%s: cannot write standard output\n", st_stdout_prog);
        }
        _exit(1);
    }
}

/* a run ending on an error it has said (a failed write of -o - among them) */
static inline void st_stdout_failed(void)
{
    st_stdout_said = 1;
}

static inline void st_stdout_check(const char *prog)
{
    st_stdout_prog = prog;
    atexit(st_stdout_close);
}

#endif
