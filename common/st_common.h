/*
 * Strata internals shared by every layer: status codes, logging, checks.
 */
#ifndef ST_COMMON_H
#define ST_COMMON_H

#include "strata.h"

#include <stddef.h>
#include <stdint.h>

#define ST_EXPORT __attribute__((visibility("default")))
#define ST_LIKELY(x)   __builtin_expect(!!(x), 1)
#define ST_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define ST_CACHE_LINE  64
#define ST_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define ST_MIN(a, b) ((a) < (b) ? (a) : (b))
#define ST_MAX(a, b) ((a) > (b) ? (a) : (b))
#define ST_ALIGN_UP(x, a) ((((x) + (a) - 1) / (a)) * (a))

/* Built with ThreadSanitizer (configure --enable-sanitizers=thread)? */
#if defined(__SANITIZE_THREAD__)
#define ST_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define ST_TSAN 1
#endif
#endif
#ifndef ST_TSAN
#define ST_TSAN 0
#endif

typedef strata_status_t st_status_t;
#define ST_OK                  STRATA_OK
#define ST_ERR_INVALID_PARAM   STRATA_ERR_INVALID_PARAM
#define ST_ERR_NO_MEMORY       STRATA_ERR_NO_MEMORY
#define ST_ERR_NO_RESOURCE     STRATA_ERR_NO_RESOURCE
#define ST_ERR_UNSUPPORTED     STRATA_ERR_UNSUPPORTED
#define ST_ERR_MPI             STRATA_ERR_MPI
#define ST_ERR_IO              STRATA_ERR_IO
#define ST_ERR_NOT_FOUND       STRATA_ERR_NOT_FOUND
#define ST_ERR_NOT_INITIALIZED STRATA_ERR_NOT_INITIALIZED

/* ---- logging (silent by default; STRATA_LOG_LEVEL) ---- */
typedef enum {
    ST_LOG_ERROR = 0,
    ST_LOG_WARN,
    ST_LOG_INFO,
    ST_LOG_DEBUG,
    ST_LOG_TRACE
} st_log_level_t;

extern int st_log_level;   /* current level, set from the configuration */

void st_log_set_rank(int rank);
void st_log_emit(st_log_level_t level, const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#define st_log(_lvl, ...) \
    do { \
        if (ST_UNLIKELY((int)(_lvl) <= st_log_level)) { \
            st_log_emit((_lvl), __FILE__, __LINE__, __VA_ARGS__); \
        } \
    } while (0)
#define st_error(...) st_log(ST_LOG_ERROR, __VA_ARGS__)
#define st_warn(...)  st_log(ST_LOG_WARN, __VA_ARGS__)
#define st_info(...)  st_log(ST_LOG_INFO, __VA_ARGS__)
#define st_debug(...) st_log(ST_LOG_DEBUG, __VA_ARGS__)
#define st_trace(...) st_log(ST_LOG_TRACE, __VA_ARGS__)

/* ---- checks around foreign calls ---- */
#define ST_MPI_CALL(_call) \
    ({ \
        int _rc = (_call); \
        if (ST_UNLIKELY(_rc != MPI_SUCCESS)) { \
            st_debug("%s failed: MPI error %d", #_call, _rc); \
        } \
        (_rc == MPI_SUCCESS) ? ST_OK : ST_ERR_MPI; \
    })

#define ST_MPI_CALL_GOTO(_call, _label, _status) \
    do { \
        if (ST_MPI_CALL(_call) != ST_OK) { \
            (_status) = ST_ERR_MPI; \
            goto _label; \
        } \
    } while (0)

#define ST_CALL_GOTO(_call, _label, _status) \
    do { \
        (_status) = (_call); \
        if ((_status) != ST_OK) { \
            goto _label; \
        } \
    } while (0)

#define ST_CALL(_call) \
    do { \
        st_status_t _st = (_call); \
        if (_st != ST_OK) { \
            return _st; \
        } \
    } while (0)

#endif /* ST_COMMON_H */
