/*
 * The configuration table and its parser.
 */
#include "config.h"

#include "st_config.h"

#include <ctype.h>
#include <errno.h>
#include <hwloc.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define ST_CONFIG_PREFIX "STRATA_"

static const char *const st_config_log_levels[] = {
    "error", "warn", "info", "debug", "trace", NULL
};

static const char *const st_config_nt_modes[] = {
    "auto", "y", "n", NULL
};

static const char *const st_config_shm_methods[] = {
    "auto", "memfd", "posix", NULL
};

static const char *const st_config_levels[] = {
    "auto", "flat", "node", "socket", NULL
};

static const char *const st_config_ucx_modes[] = {
    "auto", "y", "n", NULL
};

static const char *const st_config_vnode_maps[] = {
    "contiguous", "round-robin", NULL
};

/* STRATA_TOPO_SYNTHETIC, STRATA_TOPO_XML: what hwloc can take (@a xml: a file it can
 * read), so that a bad one is a rejected value, said once for the job, and not each
 * rank's failure at loading its topology. */
static st_status_t st_config_check_topo(const char *str, int xml, char *err, size_t errlen)
{
    hwloc_topology_t topo;
    int rc;

    if (str[0] == '\0' || hwloc_topology_init(&topo) != 0) {   /* (none; or: topo says) */
        return ST_OK;
    }
    rc = xml ? hwloc_topology_set_xml(topo, str) : hwloc_topology_set_synthetic(topo, str);
    hwloc_topology_destroy(topo);
    if (rc != 0) {
        snprintf(err, errlen, xml ? "'%s': hwloc cannot read it as a topology" :
                                    "'%s' is not a valid hwloc synthetic description", str);
        return ST_ERR_INVALID_PARAM;
    }
    return ST_OK;
}

static st_status_t st_config_check_synthetic(const char *str, char *err, size_t errlen)
{
    return st_config_check_topo(str, 0, err, errlen);
}

static st_status_t st_config_check_xml(const char *str, char *err, size_t errlen)
{
    return st_config_check_topo(str, 1, err, errlen);
}

/* STRATA_TOPO_BIND: a keyword, or comma-separated items "a" or "a-b" (a <= b). */
static st_status_t st_config_check_bind(const char *str, char *err, size_t errlen)
{
    static const char *const words[] = {"os", "none", "core", "socket", NULL};
    const char *p = str;
    unsigned long a, b;
    char *end;
    int i;

    for (i = 0; words[i] != NULL; i++) {
        if (!strcasecmp(str, words[i])) {
            return ST_OK;
        }
    }
    for (;;) {
        if (!isdigit((unsigned char)*p)) {
            break;
        }
        a = b = strtoul(p, &end, 10);
        p     = end;
        if (*p == '-') {
            if (!isdigit((unsigned char)p[1])) {
                break;
            }
            b = strtoul(p + 1, &end, 10);
            p = end;
        }
        if (a > b || b > 1000000) {
            snprintf(err, errlen, "'%s': bad PU range %lu-%lu", str, a, b);
            return ST_ERR_INVALID_PARAM;
        }
        if (*p == '\0') {
            return ST_OK;
        }
        if (*p != ',') {
            break;
        }
        p++;
    }
    snprintf(err, errlen, "'%s' is not os, none, core, socket or a list like 0,1,2-3", str);
    return ST_ERR_INVALID_PARAM;
}

#define ST_FIELD(_name, _dflt, _desc, _type, _member, _min, _max, _auto, _enums) \
    {_name, _dflt, _desc, _type, offsetof(st_config_t, _member), _min, _max, _auto, _enums, \
     NULL, 0}
/* a knob every rank must hold alike: the ranks take rank 0's at MPI_Init */
#define ST_FIELD_JOB(_name, _dflt, _desc, _type, _member, _min, _max, _auto, _enums) \
    {_name, _dflt, _desc, _type, offsetof(st_config_t, _member), _min, _max, _auto, _enums, \
     NULL, 1}
#define ST_FIELD_STRING_JOB(_name, _dflt, _desc, _member, _check) \
    {_name, _dflt, _desc, ST_CONFIG_STRING, offsetof(st_config_t, _member), 0, 0, 0, NULL, \
     _check, 1}

static const st_config_field_t st_config_table[] = {
    ST_FIELD_JOB("ENABLE", "y",
             "Use Strata's algorithms; n sends every MPI_Allreduce to PMPI_Allreduce.",
             ST_CONFIG_BOOL, enable, 0, 1, 0, NULL),
    ST_FIELD("LOG_LEVEL", "warn",
             "Log messages up to this level on stderr (a healthy run prints nothing at warn).",
             ST_CONFIG_ENUM, log_level, 0, 0, 0, st_config_log_levels),
    ST_FIELD_JOB("STATS", "0",
             "Print statistics at MPI_Finalize: 1 job summary on rank 0, 2 every rank.",
             ST_CONFIG_INT, stats, 0, 2, 0, NULL),
    ST_FIELD_JOB("SHM_SIZE", "8M",
             "Budget of the shared-memory segment of one node communicator.",
             ST_CONFIG_SIZE, shm_size, 64 * 1024, 1LL << 32, 0, NULL),
    ST_FIELD_JOB("SHM_CHUNK", "auto",
             "Bytes each rank moves per pipeline step (auto: from SHM_SIZE and ranks).",
             ST_CONFIG_SIZE, shm_chunk, 4096, 1LL << 30, 1, NULL),
    ST_FIELD_JOB("SMALL_MSG", "auto",
             "Messages up to this size take the latency path (every rank reduces all; auto: "
             "16K, less on a node of 4 or more ranks on their own cores).",
             ST_CONFIG_SIZE, small_msg, 0, 1LL << 30, 1, NULL),
    ST_FIELD("SPIN_COUNT", "auto",
             "Polls of a shared flag, or idle polls of UCX, before yielding the core (auto: 0 "
             "when the job's ranks on this machine outnumber its cores; else 1000, 10 for UCX).",
             ST_CONFIG_INT, spin_count, 0, INT_MAX, 1, NULL),
    ST_FIELD_JOB("CHECK_ARGS", "n",
             "Check with one extra collective that all ranks took the same path (debugging).",
             ST_CONFIG_BOOL, check_args, 0, 1, 0, NULL),
    ST_FIELD_JOB("SHM_METHOD", "auto",
             "Shared segment: memfd (no name, opened through /proc), posix (shm_open, "
             "unlinked once attached) or auto (memfd, else posix).",
             ST_CONFIG_ENUM, shm_method, 0, 0, 0, st_config_shm_methods),
    ST_FIELD("SHM_NT", "auto",
             "Write large messages' chunks and partial results to the segment with "
             "non-temporal stores: y, n, or auto (try both, keep the faster per size).",
             ST_CONFIG_ENUM, shm_nt, 0, 0, 0, st_config_nt_modes),
    ST_FIELD_JOB("LEVELS", "auto",
             "Levels of the hierarchy: auto (socket level where ranks are bound within "
             "packages and a node spans several), socket, node (no socket level) or flat.",
             ST_CONFIG_ENUM, levels, 0, 0, 0, st_config_levels),
    ST_FIELD_JOB("VIRTUAL_NODES", "1",
             "Split the ranks of each host into this many nodes (tests the multi-node "
             "levels on one machine).",
             ST_CONFIG_INT, vnodes, 1, 65536, 0, NULL),
    ST_FIELD_JOB("VIRTUAL_NODES_MAP", "contiguous",
             "How virtual nodes take a host's ranks: contiguous blocks or round-robin.",
             ST_CONFIG_ENUM, vnode_map, 0, 0, 0, st_config_vnode_maps),
    ST_FIELD_JOB("UCX", "auto",
             "UCX transport between nodes: auto (where it can be used), y (the same, and warn "
             "when it cannot), n (never start UCX).",
             ST_CONFIG_ENUM, ucx, 0, 0, 0, st_config_ucx_modes),
    ST_FIELD_JOB("UCX_RDB_MAX", "16K",
             "Between nodes, messages up to this size take recursive doubling; larger "
             "ones the ring (reduce-scatter + allgather).",
             ST_CONFIG_SIZE, ucx_rdb_max, 0, 1LL << 40, 0, NULL),
    ST_FIELD_JOB("HIER_PIECE", "1M",
             "Between nodes, large messages go through the node steps and the network in "
             "pieces of this size, so that they overlap (0: the whole message at once).",
             ST_CONFIG_SIZE, hier_piece, 0, 1LL << 40, 0, NULL),
    ST_FIELD_JOB("CUDA_IPC_MIN", "1M",
             "On one node, device buffers of at least this size reduce GPU to GPU through "
             "CUDA IPC when every rank's are device memory; smaller ones are staged through "
             "host memory.",
             ST_CONFIG_SIZE, cuda_ipc_min, 0, 1LL << 50, 0, NULL),
    ST_FIELD("CUDA_IPC_CACHE", "y",
             "Keep the peers' device buffers mapped after a CUDA IPC call, for the next "
             "(n: unmap them before the call returns, so a freed buffer's memory is not held "
             "by the peers' mappings).",
             ST_CONFIG_BOOL, cuda_ipc_cache, 0, 1, 0, NULL),
    ST_FIELD_STRING_JOB("TOPO_BIND", "os",
                    "Binding Strata assumes for each rank: os (ask the OS), none, core "
                    "(rank r on core r), socket (ranks round-robin over packages), or a "
                    "list of PU sets, one per rank (r takes item r mod count): 0,1,2-3.",
                    topo_bind, st_config_check_bind),
    ST_FIELD_STRING_JOB("TOPO_SYNTHETIC", "",
                    "Use this hwloc synthetic topology (\"pack:2 core:4 pu:1\") instead of "
                    "the machine's; for tests (hwloc's HWLOC_SYNTHETIC also works).",
                    topo_synthetic, st_config_check_synthetic),
    ST_FIELD_STRING_JOB("TOPO_XML", "",
                    "Use the topology in this hwloc XML file instead of the machine's.",
                    topo_xml, st_config_check_xml),
};

/* Variables read by the tools (LIBRARY: strata-run) or by libstrata_glm
 * (GLM_GPU_KERNEL, GLM_GPU_HV_HOT, GLM_GPU_NEWTON_ROWS, GLM_NEWTON_BY_COLUMN,
 * GLM_MEM_AVAILABLE), not by this table: not reported as unknown. */
static const char *const st_config_tool_vars[] = {
    "LIBRARY", "GLM_GPU_KERNEL", "GLM_GPU_HV_HOT", "GLM_GPU_NEWTON_ROWS", "GLM_NEWTON_BY_COLUMN",
    "GLM_MEM_AVAILABLE", NULL
};

st_config_t st_config;

static pthread_once_t st_config_once = PTHREAD_ONCE_INIT;
static char st_config_errors[2048];
/* why each knob's environment value was rejected, "" where it was not */
static char st_config_rejects[ST_ARRAY_SIZE(st_config_table)][256];

const st_config_field_t *st_config_fields(int *count_p)
{
    *count_p = (int)ST_ARRAY_SIZE(st_config_table);
    return st_config_table;
}

static st_status_t st_config_parse_number(const char *str, int is_size, long long *value_p,
                                          char *err, size_t errlen)
{
    const char *p = str;
    char *end;
    unsigned long long v, mult = 1;

    while (isspace((unsigned char)*p)) {
        p++;
    }
    if (*p == '-' || *p == '+' || !isdigit((unsigned char)*p)) {
        snprintf(err, errlen, "'%s' is not a non-negative number", str);
        return ST_ERR_INVALID_PARAM;
    }
    errno = 0;
    v = strtoull(p, &end, 10);
    if (errno == ERANGE || v > (unsigned long long)LLONG_MAX) {
        snprintf(err, errlen, "'%s' is out of range", str);
        return ST_ERR_INVALID_PARAM;
    }
    if (is_size && *end != '\0' && !isspace((unsigned char)*end)) {
        switch (toupper((unsigned char)*end)) {
        case 'K': mult = 1ULL << 10; break;
        case 'M': mult = 1ULL << 20; break;
        case 'G': mult = 1ULL << 30; break;
        default:
            snprintf(err, errlen, "'%s': unknown size suffix (use K, M or G)", str);
            return ST_ERR_INVALID_PARAM;
        }
        end++;
        if (toupper((unsigned char)*end) == 'B') {
            end++;
        }
    }
    while (isspace((unsigned char)*end)) {
        end++;
    }
    if (*end != '\0') {
        snprintf(err, errlen, "'%s' has trailing characters", str);
        return ST_ERR_INVALID_PARAM;
    }
    if (v > (unsigned long long)LLONG_MAX / mult) {
        snprintf(err, errlen, "'%s' is out of range", str);
        return ST_ERR_INVALID_PARAM;
    }
    *value_p = (long long)(v * mult);
    return ST_OK;
}

st_status_t st_config_parse(const st_config_field_t *field, const char *str, void *dst,
                            char *err, size_t errlen)
{
    static const char *const yes[] = {"y", "yes", "1", "on", "true", NULL};
    static const char *const no[]  = {"n", "no", "0", "off", "false", NULL};
    long long v;
    int i;

    switch (field->type) {
    case ST_CONFIG_BOOL:
        for (i = 0; yes[i] != NULL; i++) {
            if (!strcasecmp(str, yes[i])) {
                *(int*)dst = 1;
                return ST_OK;
            }
            if (!strcasecmp(str, no[i])) {
                *(int*)dst = 0;
                return ST_OK;
            }
        }
        snprintf(err, errlen, "'%s' is not a boolean (use y or n)", str);
        return ST_ERR_INVALID_PARAM;
    case ST_CONFIG_ENUM:
        for (i = 0; field->enum_names[i] != NULL; i++) {
            if (!strcasecmp(str, field->enum_names[i])) {
                *(int*)dst = i;
                return ST_OK;
            }
        }
        snprintf(err, errlen, "'%s' is not one of the allowed values", str);
        return ST_ERR_INVALID_PARAM;
    case ST_CONFIG_INT:
    case ST_CONFIG_SIZE:
        if (field->allow_auto && !strcasecmp(str, "auto")) {
            if (field->type == ST_CONFIG_INT) {
                *(int*)dst = -1;
            } else {
                *(size_t*)dst = ST_CONFIG_SIZE_AUTO;
            }
            return ST_OK;
        }
        if (st_config_parse_number(str, field->type == ST_CONFIG_SIZE, &v, err, errlen) != ST_OK) {
            return ST_ERR_INVALID_PARAM;
        }
        if (v < field->min || v > field->max) {
            snprintf(err, errlen, "'%s' is outside [%lld, %lld]", str, field->min, field->max);
            return ST_ERR_INVALID_PARAM;
        }
        if (field->type == ST_CONFIG_INT) {
            *(int*)dst = (int)v;
        } else {
            *(size_t*)dst = (size_t)v;
        }
        return ST_OK;
    case ST_CONFIG_STRING:
        if (strlen(str) >= ST_CONFIG_STRLEN) {
            snprintf(err, errlen, "longer than %d characters", ST_CONFIG_STRLEN - 1);
            return ST_ERR_INVALID_PARAM;
        }
        if (field->check != NULL && field->check(str, err, errlen) != ST_OK) {
            return ST_ERR_INVALID_PARAM;
        }
        snprintf((char*)dst, ST_CONFIG_STRLEN, "%s", str);
        return ST_OK;
    }
    snprintf(err, errlen, "bad field type");
    return ST_ERR_INVALID_PARAM;
}

void *st_config_value(const st_config_field_t *field, st_config_t *cfg, size_t *size_p)
{
    switch (field->type) {
    case ST_CONFIG_SIZE:
        *size_p = sizeof(size_t);
        break;
    case ST_CONFIG_STRING:
        *size_p = ST_CONFIG_STRLEN;
        break;
    default:
        *size_p = sizeof(int);
        break;
    }
    return (char*)cfg + field->offset;
}

void st_config_format(const st_config_field_t *field, const void *src, char *buf, size_t len)
{
    size_t s;

    switch (field->type) {
    case ST_CONFIG_BOOL:
        snprintf(buf, len, "%s", *(const int*)src ? "y" : "n");
        break;
    case ST_CONFIG_ENUM:
        snprintf(buf, len, "%s", field->enum_names[*(const int*)src]);
        break;
    case ST_CONFIG_INT:
        if (field->allow_auto && *(const int*)src == -1) {
            snprintf(buf, len, "auto");
        } else {
            snprintf(buf, len, "%d", *(const int*)src);
        }
        break;
    case ST_CONFIG_SIZE:
        s = *(const size_t*)src;
        if (field->allow_auto && s == ST_CONFIG_SIZE_AUTO) {
            snprintf(buf, len, "auto");
        } else if (s != 0 && s % (1u << 30) == 0) {
            snprintf(buf, len, "%zuG", s >> 30);
        } else if (s != 0 && s % (1u << 20) == 0) {
            snprintf(buf, len, "%zuM", s >> 20);
        } else if (s != 0 && s % (1u << 10) == 0) {
            snprintf(buf, len, "%zuK", s >> 10);
        } else {
            snprintf(buf, len, "%zu", s);
        }
        break;
    case ST_CONFIG_STRING:
        snprintf(buf, len, "%s", (const char*)src);
        break;
    }
}

static void st_config_error_add(const char *fmt, const char *a, const char *b)
{
    size_t used = strlen(st_config_errors);

    snprintf(st_config_errors + used, sizeof(st_config_errors) - used, fmt, a, b);
}

static void st_config_do_init(void)
{
    extern char **environ;
    const st_config_field_t *f;
    char name[128], err[256];
    const char *str;
    size_t i, k;
    char **env;
    int known;

    for (i = 0; i < ST_ARRAY_SIZE(st_config_table); i++) {
        f = &st_config_table[i];
        st_config_parse(f, f->default_str, (char*)&st_config + f->offset, err, sizeof(err));
        snprintf(name, sizeof(name), ST_CONFIG_PREFIX "%s", f->name);
        str = getenv(name);
        if (str != NULL &&
            st_config_parse(f, str, (char*)&st_config + f->offset, err, sizeof(err)) != ST_OK) {
            st_config_error_add("invalid %s: %s; using the default\n", name, err);
            snprintf(st_config_rejects[i], sizeof(st_config_rejects[i]), "%s", err);
        }
    }

    for (env = environ; env != NULL && *env != NULL; env++) {
        if (strncmp(*env, ST_CONFIG_PREFIX, strlen(ST_CONFIG_PREFIX)) != 0) {
            continue;
        }
        str   = *env + strlen(ST_CONFIG_PREFIX);
        known = 0;
        for (i = 0; i < ST_ARRAY_SIZE(st_config_table) && !known; i++) {
            k     = strlen(st_config_table[i].name);
            known = !strncmp(str, st_config_table[i].name, k) && str[k] == '=';
        }
        for (i = 0; st_config_tool_vars[i] != NULL && !known; i++) {
            k     = strlen(st_config_tool_vars[i]);
            known = !strncmp(str, st_config_tool_vars[i], k) && str[k] == '=';
        }
        if (!known) {
            snprintf(name, sizeof(name), "%.*s", (int)strcspn(*env, "="), *env);
            st_config_error_add("unknown variable %s%s (strata-info -c lists them all)\n",
                                name, "");
        }
    }

    st_log_level = st_config.log_level;
}

void st_config_init(void)
{
    pthread_once(&st_config_once, st_config_do_init);
}

void st_config_report(void)
{
    char *line, *save = NULL;
    char copy[sizeof(st_config_errors)];

    st_config_init();
    memcpy(copy, st_config_errors, sizeof(copy));
    for (line = strtok_r(copy, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save)) {
        st_warn("%s", line);
    }
}

ST_EXPORT const char *strata_config_report(void)
{
    st_config_init();
    return st_config_errors;   /* written once, by st_config_do_init */
}

ST_EXPORT const char *strata_config_rejected(int index)
{
    if (index < 0 || index >= (int)ST_ARRAY_SIZE(st_config_table)) {
        return NULL;
    }
    st_config_init();
    return st_config_rejects[index][0] != '\0' ? st_config_rejects[index] : NULL;
}

ST_EXPORT int strata_config_count(void)
{
    return (int)ST_ARRAY_SIZE(st_config_table);
}

/* Copy @a s into @a slot unless it holds it already: a string strata_config_get has
 * handed out is written again only where the value in effect changed (st_coll's
 * agreement at MPI_Init), so threads reading what they got race with no one. */
static void st_config_keep(char *slot, size_t len, const char *s)
{
    if (strcmp(slot, s) != 0) {
        snprintf(slot, len, "%s", s);
    }
}

ST_EXPORT strata_status_t strata_config_get(int index, strata_config_entry_t *entry_p)
{
    /* formatted strings live as long as the process: one slot per knob */
    static char names[ST_ARRAY_SIZE(st_config_table)][64];
    static char values[ST_ARRAY_SIZE(st_config_table)][ST_CONFIG_STRLEN];
    static char types[ST_ARRAY_SIZE(st_config_table)][128];
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    char name[sizeof(names[0])], value[sizeof(values[0])], type[sizeof(types[0])];
    const st_config_field_t *f;
    size_t used;
    int i;

    if (index < 0 || index >= (int)ST_ARRAY_SIZE(st_config_table) || entry_p == NULL) {
        return STRATA_ERR_INVALID_PARAM;
    }
    st_config_init();
    f = &st_config_table[index];

    snprintf(name, sizeof(name), ST_CONFIG_PREFIX "%s", f->name);
    st_config_format(f, (const char*)&st_config + f->offset, value, sizeof(value));
    switch (f->type) {
    case ST_CONFIG_BOOL: snprintf(type, sizeof(type), "bool"); break;
    case ST_CONFIG_INT:  snprintf(type, sizeof(type), "int"); break;
    case ST_CONFIG_SIZE: snprintf(type, sizeof(type), "size"); break;
    case ST_CONFIG_STRING: snprintf(type, sizeof(type), "string"); break;
    case ST_CONFIG_ENUM:
        used = (size_t)snprintf(type, sizeof(type), "enum(");
        for (i = 0; f->enum_names[i] != NULL && used < sizeof(type); i++) {
            used += (size_t)snprintf(type + used, sizeof(type) - used, "%s%s",
                                     i ? "|" : "", f->enum_names[i]);
        }
        if (used < sizeof(type)) {
            snprintf(type + used, sizeof(type) - used, ")");
        }
        break;
    }
    pthread_mutex_lock(&lock);
    st_config_keep(names[index], sizeof(names[index]), name);
    st_config_keep(values[index], sizeof(values[index]), value);
    st_config_keep(types[index], sizeof(types[index]), type);
    pthread_mutex_unlock(&lock);

    entry_p->name        = names[index];
    entry_p->value       = values[index];
    entry_p->default_str = f->default_str;
    entry_p->type        = types[index];
    entry_p->description = f->description;
    entry_p->is_set      = getenv(names[index]) != NULL;
    entry_p->job_wide    = f->job;
    return STRATA_OK;
}
