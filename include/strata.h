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
    STRATA_FALLBACK_DISABLED = 0,  /**< STRATA_ENABLE=n (in strata_layout_t also: the
                                        process's MPI_Allreduce is not libstrata's,
                                        strata_active() 0) */
    STRATA_FALLBACK_NOT_INITIALIZED, /**< called outside MPI_Init ... MPI_Finalize */
    STRATA_FALLBACK_REENTRY,       /**< called from inside Strata (a nested tool) */
    STRATA_FALLBACK_INTERCOMM,     /**< intercommunicator */
    STRATA_FALLBACK_COMM_SIZE,     /**< communicator of one rank */
    STRATA_FALLBACK_USER_OP,       /**< user-defined (MPI_Op_create) operation */
    STRATA_FALLBACK_DATATYPE,      /**< derived, non-contiguous or unknown datatype */
    STRATA_FALLBACK_OP_TYPE,       /**< this op is not defined on this type (MPI reports it) */
    STRATA_FALLBACK_ARGS,          /**< invalid arguments (negative count, aliased buffers of
                                        2 or more elements) */
    STRATA_FALLBACK_MULTINODE,     /**< spans several nodes, and no UCX lane (no UCX, or it failed) */
    STRATA_FALLBACK_SHM,           /**< the shared-memory segment could not be set up */
    STRATA_FALLBACK_CONFIG,        /**< the ranks' job knobs differ (MPI initialized without
                                        Strata's MPI_Init: they were not made alike) */
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
    const char *value;       /**< value in effect, formatted as it can be set (the
                                  library's string, written again only where that
                                  value changes: at MPI_Init, a job-wide knob taking
                                  rank 0's) */
    const char *default_str; /**< default value */
    const char *type;        /**< "bool", "size", "int", "enum(a|b|c)", ... */
    const char *description; /**< one sentence */
    int         is_set;      /**< 1 when the variable is set in the environment */
    int         job_wide;    /**< 1 when every rank must hold the same value (the ranks'
                                  algorithms depend on it): at MPI_Init every rank takes
                                  rank 0's, and rank 0 warns where some differed */
} strata_config_entry_t;

/** @return the number of entries of the configuration table. */
int strata_config_count(void);

/**
 * Read entry @a index (0 <= index < strata_config_count()) of the configuration
 * table, parsing the environment on first use.
 *
 * @param [out] entry_p  filled on success.
 * @return STRATA_OK, or STRATA_ERR_INVALID_PARAM when @a index is out of range or
 *         @a entry_p is NULL.
 */
strata_status_t strata_config_get(int index, strata_config_entry_t *entry_p);

/**
 * What is wrong with the environment's STRATA_* variables, the lines rank 0 warns
 * about at MPI_Init: "invalid STRATA_X: why; using the default" for a value that
 * was rejected, "unknown variable STRATA_Y ..." for a name that is no knob. Parses
 * the environment on first use.
 *
 * @return those lines, each ending in '\n', or "" when there are none; the string
 *         belongs to the library and lives as long as the process.
 */
const char *strata_config_report(void);

/**
 * Why entry @a index of the configuration table (as in strata_config_get()) did
 * not take its environment variable's value ("'abc' has trailing characters"):
 * the default is in effect instead.
 *
 * @return the reason (owned by the library, lives as long as the process), or
 *         NULL when the variable is unset or its value was taken, or @a index is
 *         out of range.
 */
const char *strata_config_rejected(int index);

/** Statistics of one communicator, as seen by the calling rank. */
typedef struct {
    uint64_t fast_calls;    /**< calls served by Strata's algorithm */
    uint64_t fast_bytes;    /**< bytes reduced by those calls (count x type size) */
    double   fast_seconds;  /**< time spent in those calls */
    /** bytes this rank's fast-path calls read from shared memory that ranks of
     *  another socket group wrote (counted by the algorithm from the layout; 0
     *  when the node has one socket group) */
    uint64_t cross_socket_bytes;
    uint64_t fallback_calls[STRATA_FALLBACK_LAST]; /**< calls handed to PMPI, by reason */
    uint64_t device_calls;  /**< fast-path calls with a device (CUDA) buffer on this rank */
    uint64_t ipc_calls;     /**< fast-path calls reduced GPU to GPU through CUDA IPC (the
                                 other device calls were staged through host memory) */
} strata_comm_stats_t;

/**
 * Statistics of @a comm since Strata first saw it in MPI_Allreduce. Like the
 * communicator itself under MPI_THREAD_MULTIPLE: not while another thread is in a
 * collective call on @a comm (the counters are plain; a communicator per thread, or
 * calls that take turns, are fine).
 *
 * @param [out] stats_p  filled on success (all zero when Strata never saw @a comm, as
 *                       when it is disabled: STRATA_ENABLE=n).
 * @return STRATA_OK, STRATA_ERR_INVALID_PARAM for a NULL pointer, MPI_COMM_NULL or a
 *         null handle (a zeroed MPI_Comm), STRATA_ERR_NOT_INITIALIZED outside
 *         MPI_Init ... MPI_Finalize. Another invalid handle (a copy of a freed
 *         communicator's) is as erroneous as in any MPI call: Open MPI's error handler
 *         reports it, or the process crashes as in MPI_Comm_size.
 */
strata_status_t strata_comm_stats(MPI_Comm comm, strata_comm_stats_t *stats_p);

/**
 * The levels of Strata's hierarchy. Every rank belongs to one group at each
 * level; each group is led by its lowest rank (in the communicator's order).
 */
typedef enum {
    STRATA_LEVEL_SOCKET = 0, /**< ranks of my node bound within my package (the whole
                                  node when the socket level is off, see
                                  strata_layout_t.socket_level) */
    STRATA_LEVEL_NODE,       /**< ranks of my node: one host, or one virtual node of it
                                  (STRATA_VIRTUAL_NODES) */
    STRATA_LEVEL_CLUSTER,    /**< every rank of the communicator */
    STRATA_LEVEL_LAST
} strata_level_t;

/** Where one rank of a communicator sits, as Strata's plan for it sees it. */
typedef struct {
    int  host;      /**< host (shared-memory domain) index, hosts numbered by lowest rank */
    int  node;      /**< node index (equals host unless STRATA_VIRTUAL_NODES splits hosts) */
    int  socket;    /**< socket group within the node, numbered by lowest rank; 0 for
                         every rank when the socket level is off */
    int  package;   /**< hwloc package (logical index) the rank is bound within;
                         -1 when its binding spans packages or it is unbound */
    int  numa;      /**< NUMA node (logical index) likewise, -1 when it spans several */
    int  bound;     /**< 1 when bound to part of the machine, 0 when unbound */
    char cpus[48];  /**< bound PUs as logical indexes in hwloc's list syntax ("0-3,8") */
} strata_place_t;

/** The layout of a communicator: the levels Strata uses for it. */
typedef struct {
    int    size;          /**< ranks in the communicator */
    int    nhosts;        /**< hosts it spans */
    int    nnodes;        /**< nodes it spans (virtual nodes count as nodes) */
    int    socket_level;  /**< 1 when the socket level is in use */
    int    nsockets;      /**< socket groups in all, over all nodes (nnodes when off) */
    char   why[96];       /**< when socket_level is 0: why ("ranks are not bound ...") */
    int    fast_path;     /**< 1 when eligible MPI_Allreduce calls take Strata's path;
                               0 where strata_active() is 0 (libstrata linked after
                               libmpi, or loaded by dlopen with RTLD_LOCAL: the
                               process's MPI_Allreduce is Open MPI's) */
    strata_fallback_t fallback_reason; /**< otherwise, why not */
    size_t shm_chunk;     /**< bytes per rank per pipeline step of large messages (0: no
                               shared-memory path) */
    size_t small_msg;     /**< messages up to this size take the latency path */
} strata_layout_t;

/**
 * The layout of @a comm and, optionally, the place of each of its ranks.
 *
 * Collective over @a comm the first time it (or strata_comm_level(), or
 * strata_comm_leaders()) is called on @a comm: every rank calls it then. It builds the
 * communicator's plan, unless an MPI_Allreduce on @a comm already has: MPI_Allreduce
 * builds it at its first call Strata could take, not at calls that fell back before
 * (a user-defined op's, ...). Later calls are local.
 *
 * @param [out] layout_p  filled on success.
 * @param [out] places    NULL, or an array of size(comm) entries filled by rank.
 * @return STRATA_OK; STRATA_ERR_INVALID_PARAM for MPI_COMM_NULL, a null handle (a
 *         zeroed MPI_Comm), NULL @a layout_p, or @a comm being freed (called from its
 *         attribute delete callbacks; other invalid handles: as strata_comm_stats());
 *         STRATA_ERR_UNSUPPORTED for an intercommunicator;
 *         STRATA_ERR_NOT_INITIALIZED outside MPI_Init ... MPI_Finalize;
 *         STRATA_ERR_MPI when building the plan failed.
 */
strata_status_t strata_comm_layout(MPI_Comm comm, strata_layout_t *layout_p,
                                   strata_place_t *places);

/**
 * The communicator of the calling rank's group at @a level of @a comm's hierarchy:
 * for STRATA_LEVEL_NODE, the ranks of @a comm on my node, ordered as in @a comm.
 *
 * Collective over @a comm, like MPI_Comm_split: every rank of @a comm calls it
 * with the same @a level (the first call per level creates the communicator;
 * later calls return the same one and are local). Use it as any communicator:
 * MPI_Allreduce on it takes Strata's path (where strata_active() is 1). It belongs
 * to Strata: do not free it; it stays valid until @a comm is freed (or MPI_Finalize).
 * STRATA_LEVEL_CLUSTER returns @a comm itself.
 *
 * @param [out] subcomm_p  set on success.
 * @return as strata_comm_layout(), and STRATA_ERR_INVALID_PARAM for a bad level.
 */
strata_status_t strata_comm_level(MPI_Comm comm, strata_level_t level, MPI_Comm *subcomm_p);

/**
 * The communicator that joins the leaders of the groups at @a level inside one
 * group of the level above: STRATA_LEVEL_SOCKET, the socket leaders of my node;
 * STRATA_LEVEL_NODE, the node leaders of the whole communicator (one rank per
 * node). Ranks that lead no group get MPI_COMM_NULL. Collective and owned as for
 * strata_comm_level().
 *
 * @param [out] leaders_p  set on success (MPI_COMM_NULL on non-leaders).
 * @return as strata_comm_level(); STRATA_ERR_INVALID_PARAM for STRATA_LEVEL_CLUSTER.
 */
strata_status_t strata_comm_leaders(MPI_Comm comm, strata_level_t level,
                                    MPI_Comm *leaders_p);

/**
 * @return 1 when libstrata's MPI_Allreduce is the one the process calls (the
 * library is preloaded or linked before libmpi and enabled), 0 otherwise.
 */
int strata_active(void);

#ifdef __cplusplus
}
#endif

#endif /* STRATA_H */
