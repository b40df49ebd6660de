/*
 * Logging: one line per message on stderr, prefixed with the rank.
 */
#include "config.h"

#include "st_common.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int st_log_level = ST_LOG_WARN;

static int st_log_rank = -1;

static const char *st_log_names[] = {"ERROR", "WARN", "INFO", "DEBUG", "TRACE"};

void st_log_set_rank(int rank)
{
    st_log_rank = rank;
}

void st_log_emit(st_log_level_t level, const char *file, int line, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    const char *base = strrchr(file, '/');

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);

    /* one write() so lines of several ranks do not interleave */
    if (level >= ST_LOG_DEBUG) {
        fprintf(stderr, "[strata %d:%d] %s %s:%d %s\n", st_log_rank, (int)getpid(),
                st_log_names[level], base ? base + 1 : file, line, msg);
    } else {
        fprintf(stderr, "[strata %d] %s: %s\n", st_log_rank, st_log_names[level], msg);
    }
}

static const char *st_status_strings[] = {
    [0]                                  = "success",
    [-STRATA_ERR_INVALID_PARAM]          = "invalid parameter",
    [-STRATA_ERR_NO_MEMORY]              = "out of memory",
    [-STRATA_ERR_NO_RESOURCE]            = "resource unavailable",
    [-STRATA_ERR_UNSUPPORTED]            = "unsupported",
    [-STRATA_ERR_MPI]                    = "MPI error",
    [-STRATA_ERR_IO]                     = "input/output error",
    [-STRATA_ERR_NOT_FOUND]              = "not found",
    [-STRATA_ERR_NOT_INITIALIZED]        = "MPI not initialized",
};

ST_EXPORT const char *strata_status_string(strata_status_t status)
{
    if (status > 0 || status <= STRATA_ERR_LAST) {
        return "unknown status";
    }
    return st_status_strings[-status];
}

ST_EXPORT const char *strata_version(void)
{
    return PACKAGE_VERSION;
}
