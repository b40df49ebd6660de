/**
 * @file strata.h
 * @brief Strata: a drop-in, topology-aware MPI_Allreduce.
 *
 * Most users never include this header: preloading libstrata.so (see strata-run)
 * into an unmodified Open MPI job is enough. The functions below let a program or
 * tool look inside: the library version, the configuration table read from the
 * STRATA_* environment variables, and per-communicator statistics (how many calls
 * took the fast path, and why the others fell back to PMPI_Allreduce).
 *
 * Ownership: every string returned by this API is owned by the library and stays
 * valid until the process exits; callers never free it.
 *
 * Thread safety: every function may be called from any thread at any time,
 * before MPI_Init and after MPI_Finalize included, unless its description says
 * otherwise.
 */
#ifndef STRATA_H
#define STRATA_H

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#define STRATA_VERSION_MAJOR 0
#define STRATA_VERSION_MINOR 1
#define STRATA_VERSION_PATCH 0

/** Status codes of the Strata API: 0 on success, negative on failure. */
typedef enum {
    STRATA_OK                  = 0,
    STRATA_ERR_INVALID_PARAM   = -1, /**< an argument is invalid */
    STRATA_ERR_NO_MEMORY       = -2, /**< an allocation failed */
    STRATA_ERR_NO_RESOURCE     = -3, /**< a system resource (shared memory, ...) failed */
    STRATA_ERR_UNSUPPORTED     = -4, /**< not supported by this build or this case */
    STRATA_ERR_MPI             = -5, /**< an MPI call failed */
    STRATA_ERR_IO              = -6, /**< reading or writing a file failed */
    STRATA_ERR_NOT_FOUND       = -7, /**< no such object */
    STRATA_ERR_NOT_INITIALIZED = -8, /**< MPI is not initialized (or already finalized) */
    STRATA_ERR_LAST            = -9
} strata_status_t;

/**
 * Why an MPI_Allreduce call went to PMPI_Allreduce instead of Strata's algorithm.
 * The decision is taken before any data moves, from facts identical on every rank
 * of the communicator, so all ranks of one call take the same path.
 */
typedef enum {
    STRATA_FALLBACK_DISABLED = 0,  /**< STRATA_ENABLE=n */
    STRATA_FALLBACK_NOT_INITIALIZED, /**< called outside MPI_Init ... MPI_Finalize */
    STRATA_FALLBACK_REENTRY,       /**< called from inside Strata (a nested tool) */
    STRATA_FALLBACK_INTERCOMM,     /**< intercommunicator */
    STRATA_FALLBACK_COMM_SIZE,     /**< communicator of one rank */
    STRATA_FALLBACK_USER_OP,       /**< user-defined (MPI_Op_create) operation */
    STRATA_FALLBACK_DATATYPE,      /**< derived, non-contiguous or unknown datatype */
    STRATA_FALLBACK_OP_TYPE,       /**< this op is not defined on this type (MPI reports it) */
    STRATA_FALLBACK_ARGS,          /**< invalid arguments (negative count, aliased buffers) */
    STRATA_FALLBACK_MULTINODE,     /**< communicator spans several nodes (not yet supported) */
    STRATA_FALLBACK_SHM,           /**< the shared-memory segment could not be set up */
    STRATA_FALLBACK_LAST
} strata_fallback_t;

/** @return the library version, "MAJOR.MINOR.PATCH". */
const char *strata_version(void);

/** @return a short description of @a status ("invalid parameter", ...). */
const char *strata_status_string(strata_status_t status);

/** @return the short name of a fallback reason ("user-op", ...), or "?" when out of range. */
const char *strata_fallback_string(strata_fallback_t reason);

/** One knob of the configuration table. */
typedef struct {
    const char *name;        /**< environment variable, e.g. "STRATA_LOG_LEVEL" */
    const char *value;       /**< value in effect, formatted as it can be set */
    const char *default_str; /**< default value */
    const char *type;        /**< "bool", "size", "int", "enum(a|b|c)", ... */
    const char *description; /**< one sentence */
    int         is_set;      /**< 1 when the variable is set in the environment */
} strata_config_entry_t;

/** @return the number of entries of the configuration table. */
int strata_config_count(void);

/**
 * Read entry @a index (0 <= index < strata_config_count()) of the configuration
 * table, parsing the environment on first use.
 *
 * @param [out] entry_p  filled on success.
 * @return STRATA_OK, or STRATA_ERR_INVALID_PARAM when @a index is out of range.
 */
strata_status_t strata_config_get(int index, strata_config_entry_t *entry_p);

/** Statistics of one communicator, as seen by the calling rank. */
typedef struct {
    uint64_t fast_calls;    /**< calls served by Strata's algorithm */
    uint64_t fast_bytes;    /**< bytes reduced by those calls (count x type size) */
    double   fast_seconds;  /**< time spent in those calls */
    uint64_t fallback_calls[STRATA_FALLBACK_LAST]; /**< calls handed to PMPI, by reason */
} strata_comm_stats_t;

/**
 * Statistics of @a comm since Strata first saw it in MPI_Allreduce.
 *
 * @param [out] stats_p  filled on success (all zero when Strata never saw @a comm).
 * @return STRATA_OK, STRATA_ERR_INVALID_PARAM for a NULL pointer or MPI_COMM_NULL,
 *         STRATA_ERR_NOT_INITIALIZED outside MPI_Init ... MPI_Finalize.
 */
strata_status_t strata_comm_stats(MPI_Comm comm, strata_comm_stats_t *stats_p);

/**
 * @return 1 when libstrata's MPI_Allreduce is the one the process calls (the
 * library is preloaded or linked before libmpi and enabled), 0 otherwise.
 */
int strata_active(void);

#ifdef __cplusplus
}
#endif

#endif /* STRATA_H */
