/*
 * The configuration table: every STRATA_* knob, parsed once from the environment
 * (UCX's ucs_config_field_t in miniature). getenv() appears nowhere else.
 */
#ifndef ST_CONFIG_H
#define ST_CONFIG_H

#include "st_common.h"

#include <stddef.h>

typedef enum {
    ST_CONFIG_BOOL,   /* y/n, yes/no, 1/0, on/off, true/false */
    ST_CONFIG_INT,    /* decimal integer within [min, max]; "auto" -> -1 when allowed */
    ST_CONFIG_SIZE,   /* bytes with optional K/M/G suffix (powers of 1024); "auto" -> 0 */
    ST_CONFIG_ENUM,   /* one of the names in enum_names; stored as its index */
    ST_CONFIG_STRING  /* text checked by the field's check function; char[ST_CONFIG_STRLEN] */
} st_config_type_t;

#define ST_CONFIG_STRLEN 256

typedef enum {
    ST_SHM_METHOD_AUTO = 0,  /* memfd, else a named POSIX segment */
    ST_SHM_METHOD_MEMFD,
    ST_SHM_METHOD_POSIX
} st_config_shm_method_t;

typedef enum {
    ST_NT_AUTO = 0,  /* measured per message size, per communicator */
    ST_NT_YES,
    ST_NT_NO
} st_config_nt_t;

typedef enum {
    ST_VNODE_CONTIGUOUS = 0,  /* virtual node v holds the host's ranks v*m/k ... */
    ST_VNODE_ROUND_ROBIN      /* local rank i goes to virtual node i % k */
} st_config_vnode_map_t;

typedef enum {
    ST_LEVELS_AUTO = 0,  /* socket level where the binding allows and it helps */
    ST_LEVELS_FLAT,      /* one level: no socket groups, no node hierarchy */
    ST_LEVELS_NODE,      /* node level only */
    ST_LEVELS_SOCKET     /* socket level wherever the binding allows */
} st_config_levels_t;

typedef enum {
    ST_UCX_AUTO = 0,     /* use UCX where it starts, fall back silently otherwise */
    ST_UCX_YES,          /* the same, and warn when it does not start */
    ST_UCX_NO            /* never start UCX */
} st_config_ucx_t;

/* a size knob's "auto" (0 may be a value: STRATA_SMALL_MSG=0) */
#define ST_CONFIG_SIZE_AUTO ((size_t)-1)

typedef struct {
    int    enable;      /* master switch */
    int    log_level;   /* st_log_level_t */
    int    stats;       /* 0 off, 1 job summary at finalize, 2 every rank */
    size_t shm_size;    /* budget of one node segment */
    size_t shm_chunk;   /* bytes per rank per pipeline step; ST_CONFIG_SIZE_AUTO = auto */
    size_t small_msg;   /* latency path up to this many bytes; ST_CONFIG_SIZE_AUTO = auto */
    int    spin_count;  /* polls before yielding the core; -1 = auto */
    int    check_args;  /* agree on the fast-path decision with an extra collective */
    int    shm_method;  /* st_config_shm_method_t */
    int    shm_nt;      /* st_config_nt_t: non-temporal copy-in */
    int    levels;      /* st_config_levels_t */
    int    vnodes;      /* virtual nodes per host */
    int    vnode_map;   /* st_config_vnode_map_t */
    int    ucx;         /* st_config_ucx_t */
    size_t ucx_rdb_max; /* inter-node recursive doubling up to this many bytes */
    size_t hier_piece;  /* inter-node pipeline piece (bytes); 0 = the whole message */
    size_t cuda_ipc_min; /* device buffers from this size: GPU to GPU through CUDA IPC */
    int    cuda_ipc_cache; /* keep peers' buffers mapped after a call */
    char   topo_bind[ST_CONFIG_STRLEN];      /* "os", "none", "core", "socket" or PU list */
    char   topo_synthetic[ST_CONFIG_STRLEN]; /* hwloc synthetic description, "" = off */
    char   topo_xml[ST_CONFIG_STRLEN];       /* hwloc XML file, "" = off */
} st_config_t;

typedef struct {
    const char        *name;        /* without the STRATA_ prefix */
    const char        *default_str;
    const char        *description;
    st_config_type_t   type;
    size_t             offset;      /* into st_config_t */
    long long          min, max;    /* INT and SIZE bounds */
    int                allow_auto;
    const char *const *enum_names;  /* NULL-terminated, ENUM only */
    /* STRING only, may be NULL: ST_OK, or an error with a message in err */
    st_status_t      (*check)(const char *str, char *err, size_t errlen);
    /* every rank must hold the same value (the ranks' algorithms depend on it):
     * at MPI_Init they take rank 0's (st_coll.c) */
    int                job;
} st_config_field_t;

extern st_config_t st_config;

/* Parse the environment (once; later calls return at once). Thread safe. */
void st_config_init(void);

/* Warn about invalid or unknown STRATA_* variables (call on one rank only). */
void st_config_report(void);

/* The table, for strata-info and the tests. */
const st_config_field_t *st_config_fields(int *count_p);

/*
 * Parse @a str as a value of @a field into @a dst (which points to a field of the
 * type the field describes). On failure @a dst is untouched and @a err (of @a errlen
 * bytes) says why.
 */
st_status_t st_config_parse(const st_config_field_t *field, const char *str, void *dst,
                            char *err, size_t errlen);

/* Format the value at @a src as it could be set. */
void st_config_format(const st_config_field_t *field, const void *src, char *buf, size_t len);

/* Where @a field's value lies in @a cfg, and its size in bytes. */
void *st_config_value(const st_config_field_t *field, st_config_t *cfg, size_t *size_p);

#endif /* ST_CONFIG_H */
