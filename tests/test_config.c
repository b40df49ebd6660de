/*
 * Unit test of the configuration table (common/st_config.c).
 *
 * 1. st_config_parse on every field type, from a table of cases: accepted spellings
 *    and their values, rejected ones (destination untouched, a message in err, the
 *    bounds named when a number is out of range).
 * 2. st_config_format: the text of a few values, and format-then-parse round trips.
 * 3. The environment: STRATA_* variables set before the first st_config_init(), read
 *    back through st_config and strata_config_get(), and the warnings of
 *    st_config_report() captured from stderr.
 * 4. strata_config_get() from two threads at once, each reading the strings it got
 *    (the header: any thread, any time). Before, every call wrote its index's slots
 *    again while the other thread read them: a data race ThreadSanitizer reported
 *    (make check-tsan runs this test).
 */
#include "config.h"

#include "st_config.h"
#include "st_coll.h"

#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define T_SENTINEL_INT  0x5a5a5a5
#define T_SENTINEL_SIZE ((size_t)0x5a5a5a5a)
#define T_K             1024LL
#define T_M             (1024LL * 1024)
#define T_G             (1024LL * 1024 * 1024)

static int t_failures;

static void t_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void t_fail(const char *fmt, ...)
{
    va_list ap;

    t_failures++;
    va_start(ap, fmt);
    fprintf(stderr, "test_config: FAIL: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
}

static const st_config_field_t *t_field(const char *name)
{
    const st_config_field_t *fields;
    int i, count;

    fields = st_config_fields(&count);
    for (i = 0; i < count; i++) {
        if (!strcmp(fields[i].name, name)) {
            return &fields[i];
        }
    }
    return NULL;
}

/* ---- 1. parsing ---- */
typedef enum {
    T_OK,       /* accepted, with this value */
    T_BAD,      /* rejected */
    T_RANGE     /* rejected, and the message names [min, max] */
} t_expect_t;

typedef struct {
    const char *field;
    const char *str;
    t_expect_t  expect;
    long long   value;
} t_case_t;

static const t_case_t t_cases[] = {
    /* bool */
    {"ENABLE", "y", T_OK, 1}, {"ENABLE", "Y", T_OK, 1}, {"ENABLE", "yes", T_OK, 1},
    {"ENABLE", "YES", T_OK, 1}, {"ENABLE", "Yes", T_OK, 1}, {"ENABLE", "1", T_OK, 1},
    {"ENABLE", "on", T_OK, 1}, {"ENABLE", "ON", T_OK, 1}, {"ENABLE", "oN", T_OK, 1},
    {"ENABLE", "true", T_OK, 1}, {"ENABLE", "TRUE", T_OK, 1}, {"ENABLE", "tRuE", T_OK, 1},
    {"ENABLE", "n", T_OK, 0}, {"ENABLE", "N", T_OK, 0}, {"ENABLE", "no", T_OK, 0},
    {"ENABLE", "NO", T_OK, 0}, {"ENABLE", "No", T_OK, 0}, {"ENABLE", "0", T_OK, 0},
    {"ENABLE", "off", T_OK, 0}, {"ENABLE", "OFF", T_OK, 0}, {"ENABLE", "Off", T_OK, 0},
    {"ENABLE", "false", T_OK, 0}, {"ENABLE", "FALSE", T_OK, 0}, {"ENABLE", "fAlSe", T_OK, 0},
    {"CHECK_ARGS", "yes", T_OK, 1}, {"CHECK_ARGS", "off", T_OK, 0},
    {"ENABLE", "", T_BAD, 0}, {"ENABLE", "maybe", T_BAD, 0}, {"ENABLE", "2", T_BAD, 0},
    {"ENABLE", "-1", T_BAD, 0}, {"ENABLE", "yess", T_BAD, 0}, {"ENABLE", "t", T_BAD, 0},
    {"ENABLE", "nope", T_BAD, 0}, {"ENABLE", "enable", T_BAD, 0},
    {"ENABLE", "auto", T_BAD, 0},
    /* enum */
    {"LOG_LEVEL", "error", T_OK, 0}, {"LOG_LEVEL", "warn", T_OK, 1},
    {"LOG_LEVEL", "info", T_OK, 2}, {"LOG_LEVEL", "debug", T_OK, 3},
    {"LOG_LEVEL", "trace", T_OK, 4}, {"LOG_LEVEL", "ERROR", T_OK, 0},
    {"LOG_LEVEL", "Warn", T_OK, 1}, {"LOG_LEVEL", "iNFo", T_OK, 2},
    {"LOG_LEVEL", "DEBUG", T_OK, 3}, {"LOG_LEVEL", "Trace", T_OK, 4},
    {"LOG_LEVEL", "verbose", T_BAD, 0}, {"LOG_LEVEL", "warning", T_BAD, 0},
    {"LOG_LEVEL", "", T_BAD, 0}, {"LOG_LEVEL", "1", T_BAD, 0},
    {"LOG_LEVEL", "auto", T_BAD, 0},
    /* int in [0, 2], no auto */
    {"STATS", "0", T_OK, 0}, {"STATS", "1", T_OK, 1}, {"STATS", "2", T_OK, 2},
    {"STATS", " 1", T_OK, 1}, {"STATS", "2 ", T_OK, 2}, {"STATS", " 0 ", T_OK, 0},
    {"STATS", "3", T_RANGE, 0}, {"STATS", "1000", T_RANGE, 0},
    {"STATS", "-1", T_BAD, 0}, {"STATS", "auto", T_BAD, 0}, {"STATS", "bogus", T_BAD, 0},
    {"STATS", "", T_BAD, 0}, {"STATS", "1.5", T_BAD, 0}, {"STATS", "1K", T_BAD, 0},
    {"STATS", "1 2", T_BAD, 0}, {"STATS", "99999999999999999999", T_BAD, 0},
    /* int in [0, INT_MAX], auto -> -1 */
    {"SPIN_COUNT", "auto", T_OK, -1}, {"SPIN_COUNT", "AUTO", T_OK, -1},
    {"SPIN_COUNT", "Auto", T_OK, -1}, {"SPIN_COUNT", "0", T_OK, 0},
    {"SPIN_COUNT", "1000", T_OK, 1000}, {"SPIN_COUNT", "2147483647", T_OK, INT_MAX},
    {"SPIN_COUNT", "2147483648", T_RANGE, 0}, {"SPIN_COUNT", "9223372036854775807", T_RANGE, 0},
    {"SPIN_COUNT", "-1", T_BAD, 0}, {"SPIN_COUNT", "12X", T_BAD, 0},
    {"SPIN_COUNT", "autox", T_BAD, 0}, {"SPIN_COUNT", "99999999999999999999", T_BAD, 0},
    /* size in [0, 1G], auto -> ST_CONFIG_SIZE_AUTO (0 is a value) */
    {"SMALL_MSG", "4096", T_OK, 4096}, {"SMALL_MSG", "64K", T_OK, 64 * T_K},
    {"SMALL_MSG", "8M", T_OK, 8 * T_M}, {"SMALL_MSG", "1G", T_OK, T_G},
    {"SMALL_MSG", "16k", T_OK, 16 * T_K}, {"SMALL_MSG", "2MB", T_OK, 2 * T_M},
    {"SMALL_MSG", "2mb", T_OK, 2 * T_M}, {"SMALL_MSG", "3kB", T_OK, 3 * T_K},
    {"SMALL_MSG", " 8M", T_OK, 8 * T_M}, {"SMALL_MSG", "8M ", T_OK, 8 * T_M},
    {"SMALL_MSG", "  8M  ", T_OK, 8 * T_M}, {"SMALL_MSG", " 4096", T_OK, 4096},
    {"SMALL_MSG", "0", T_OK, 0}, {"SMALL_MSG", "1", T_OK, 1},
    {"SMALL_MSG", "1073741824", T_OK, T_G},
    {"SMALL_MSG", "1073741825", T_RANGE, 0}, {"SMALL_MSG", "2G", T_RANGE, 0},
    {"SMALL_MSG", "1025M", T_RANGE, 0},
    {"SMALL_MSG", "auto", T_OK, -1}, {"SMALL_MSG", "AUTO", T_OK, -1},
    {"SMALL_MSG", "autos", T_BAD, 0}, {"SMALL_MSG", "-1", T_BAD, 0},
    {"SMALL_MSG", "12X", T_BAD, 0}, {"SMALL_MSG", "8 M", T_BAD, 0},
    {"SMALL_MSG", "4096 ", T_OK, 4096}, {"SMALL_MSG", "4096\t", T_OK, 4096},
    {"SMALL_MSG", "8MBB", T_BAD, 0}, {"SMALL_MSG", "K", T_BAD, 0},
    {"SMALL_MSG", "", T_BAD, 0}, {"SMALL_MSG", "1.5M", T_BAD, 0},
    {"SMALL_MSG", "99999999999999999999", T_BAD, 0},
    {"SMALL_MSG", "18446744073709551615", T_BAD, 0},
    {"SMALL_MSG", "9007199254740992K", T_BAD, 0}, {"SMALL_MSG", "8589934592G", T_BAD, 0},
    /* size in [64K, 4G], no auto */
    {"SHM_SIZE", "64K", T_OK, 64 * T_K}, {"SHM_SIZE", "8M", T_OK, 8 * T_M},
    {"SHM_SIZE", "4G", T_OK, 4 * T_G}, {"SHM_SIZE", "65536", T_OK, 64 * T_K},
    {"SHM_SIZE", "4096", T_RANGE, 0}, {"SHM_SIZE", "63K", T_RANGE, 0},
    {"SHM_SIZE", "65535", T_RANGE, 0}, {"SHM_SIZE", "0", T_RANGE, 0},
    {"SHM_SIZE", "4097M", T_RANGE, 0}, {"SHM_SIZE", "5G", T_RANGE, 0},
    {"SHM_SIZE", "auto", T_BAD, 0}, {"SHM_SIZE", "-1", T_BAD, 0},
    /* size in [4K, 1G], auto -> ST_CONFIG_SIZE_AUTO */
    {"SHM_CHUNK", "auto", T_OK, -1}, {"SHM_CHUNK", "AUTO", T_OK, -1},
    {"SHM_CHUNK", "aUtO", T_OK, -1}, {"SHM_CHUNK", "4096", T_OK, 4096},
    {"SHM_CHUNK", "4K", T_OK, 4 * T_K}, {"SHM_CHUNK", "256k", T_OK, 256 * T_K},
    {"SHM_CHUNK", "1G", T_OK, T_G}, {"SHM_CHUNK", "1gb", T_OK, T_G},
    {"SHM_CHUNK", "4095", T_RANGE, 0}, {"SHM_CHUNK", "3K", T_RANGE, 0},
    {"SHM_CHUNK", "0", T_RANGE, 0}, {"SHM_CHUNK", "1025M", T_RANGE, 0},
    {"SHM_CHUNK", "-1", T_BAD, 0}, {"SHM_CHUNK", "12X", T_BAD, 0},
    {"SHM_CHUNK", "automatic", T_BAD, 0}, {"SHM_CHUNK", "99999999999999999999", T_BAD, 0},
};

/* parse into an int or a size_t, as the field's type says; *value_p as long long */
static st_status_t t_parse(const st_config_field_t *f, const char *str, long long *value_p,
                           char *err, size_t errlen)
{
    st_status_t status;
    size_t s = T_SENTINEL_SIZE;
    int i    = T_SENTINEL_INT;
    char text[ST_CONFIG_STRLEN];

    if (f->type == ST_CONFIG_STRING) {
        status   = st_config_parse(f, str, text, err, errlen);
        *value_p = 0;
    } else if (f->type == ST_CONFIG_SIZE) {
        status   = st_config_parse(f, str, &s, err, errlen);
        *value_p = (long long)s;
    } else {
        status   = st_config_parse(f, str, &i, err, errlen);
        *value_p = i;
    }
    return status;
}

static void t_parse_case(const t_case_t *c)
{
    const st_config_field_t *f = t_field(c->field);
    char err[256], lo[32], hi[32];
    st_status_t status;
    long long value, sentinel;

    if (f == NULL) {
        t_fail("no field %s", c->field);
        return;
    }
    err[0]   = '\0';
    sentinel = (f->type == ST_CONFIG_SIZE) ? (long long)T_SENTINEL_SIZE : T_SENTINEL_INT;
    status   = t_parse(f, c->str, &value, err, sizeof(err));

    if (c->expect == T_OK) {
        if (status != ST_OK || value != c->value) {
            t_fail("%s '%s': status %d value %lld, expected %lld (err '%s')", c->field, c->str,
                   (int)status, value, c->value, err);
        }
        return;
    }
    if (status == ST_OK) {
        t_fail("%s '%s' accepted (value %lld), expected a rejection", c->field, c->str, value);
        return;
    }
    if (value != sentinel) {
        t_fail("%s '%s' rejected but the destination changed to %lld", c->field, c->str, value);
    }
    if (err[0] == '\0') {
        t_fail("%s '%s' rejected with an empty message", c->field, c->str);
    }
    snprintf(lo, sizeof(lo), "%lld", f->min);
    snprintf(hi, sizeof(hi), "%lld", f->max);
    if (c->expect == T_RANGE && (strstr(err, lo) == NULL || strstr(err, hi) == NULL)) {
        t_fail("%s '%s': message '%s' does not name the bounds %s and %s", c->field, c->str,
               err, lo, hi);
    }
}

static void t_check_fields(void)
{
    static const struct {
        const char      *name;
        st_config_type_t type;
        size_t           offset;
    } expected[] = {
        {"ENABLE", ST_CONFIG_BOOL, offsetof(st_config_t, enable)},
        {"LOG_LEVEL", ST_CONFIG_ENUM, offsetof(st_config_t, log_level)},
        {"STATS", ST_CONFIG_INT, offsetof(st_config_t, stats)},
        {"SHM_SIZE", ST_CONFIG_SIZE, offsetof(st_config_t, shm_size)},
        {"SHM_CHUNK", ST_CONFIG_SIZE, offsetof(st_config_t, shm_chunk)},
        {"SMALL_MSG", ST_CONFIG_SIZE, offsetof(st_config_t, small_msg)},
        {"SPIN_COUNT", ST_CONFIG_INT, offsetof(st_config_t, spin_count)},
        {"CHECK_ARGS", ST_CONFIG_BOOL, offsetof(st_config_t, check_args)},
    };
    const st_config_field_t *fields, *f;
    char err[256];
    long long value;
    size_t i;
    int count, j;

    for (i = 0; i < ST_ARRAY_SIZE(expected); i++) {
        f = t_field(expected[i].name);
        if (f == NULL) {
            t_fail("no field %s", expected[i].name);
        } else if (f->type != expected[i].type || f->offset != expected[i].offset) {
            t_fail("field %s: type %d offset %zu, expected %d %zu", f->name, (int)f->type,
                   f->offset, (int)expected[i].type, expected[i].offset);
        }
    }
    fields = st_config_fields(&count);
    if (count != strata_config_count()) {
        t_fail("st_config_fields counts %d, strata_config_count %d", count,
               strata_config_count());
    }
    for (j = 0; j < count; j++) {
        err[0] = '\0';
        if (t_parse(&fields[j], fields[j].default_str, &value, err, sizeof(err)) != ST_OK) {
            t_fail("the default '%s' of %s does not parse: %s", fields[j].default_str,
                   fields[j].name, err);
        }
    }
}

/* STRATA_TOPO_BIND: keywords and PU lists; the text is stored as given */
static const struct {
    const char *str;
    int         ok;
} t_bind_cases[] = {
    {"os", 1}, {"none", 1}, {"core", 1}, {"socket", 1}, {"SOCKET", 1}, {"0", 1},
    {"7", 1}, {"0,1,2,3", 1}, {"0-3", 1}, {"0-3,8,10-11", 1}, {"5,0,6,1", 1}, {"2-2", 1},
    {"", 0}, {"3-1", 0}, {"0,", 0}, {",0", 0}, {"1-", 0}, {"-1", 0}, {"a", 0}, {"0;1", 0},
    {"0-1-2", 0}, {"cores", 0}, {"0, 1", 0}, {"99999999", 0},
};

static void t_string_cases(void)
{
    const st_config_field_t *f = t_field("TOPO_BIND");
    char dst[ST_CONFIG_STRLEN], err[256], longstr[ST_CONFIG_STRLEN + 8];
    st_status_t status;
    size_t i;

    if (f == NULL || f->type != ST_CONFIG_STRING) {
        t_fail("no string field TOPO_BIND");
        return;
    }
    for (i = 0; i < ST_ARRAY_SIZE(t_bind_cases); i++) {
        strcpy(dst, "sentinel");
        err[0] = '\0';
        status = st_config_parse(f, t_bind_cases[i].str, dst, err, sizeof(err));
        if (t_bind_cases[i].ok && (status != ST_OK || strcmp(dst, t_bind_cases[i].str))) {
            t_fail("TOPO_BIND '%s': status %d, stored '%s' (err '%s')", t_bind_cases[i].str,
                   (int)status, dst, err);
        }
        if (!t_bind_cases[i].ok &&
            (status == ST_OK || strcmp(dst, "sentinel") || err[0] == '\0')) {
            t_fail("TOPO_BIND '%s': accepted or destination changed ('%s') or no message",
                   t_bind_cases[i].str, dst);
        }
    }
    /* what hwloc can take, or rejected naming the value (before: each rank warned as
       it loaded its topology, and strata-info -c showed no problem) */
    {
        static const struct {
            const char *field, *str;
            int         ok;
        } topo[] = {
            {"TOPO_SYNTHETIC", "", 1}, {"TOPO_SYNTHETIC", "pack:2 core:2 pu:1", 1},
            {"TOPO_SYNTHETIC", "garbage", 0}, {"TOPO_SYNTHETIC", "pack:0 core:x", 0},
            {"TOPO_XML", "", 1}, {"TOPO_XML", "/nonexistent/topo.xml", 0},
        };

        for (i = 0; i < ST_ARRAY_SIZE(topo); i++) {
            f = t_field(topo[i].field);
            strcpy(dst, "sentinel");
            err[0] = '\0';
            status = (f != NULL) ? st_config_parse(f, topo[i].str, dst, err, sizeof(err))
                                 : ST_ERR_INVALID_PARAM;
            if (topo[i].ok ? (status != ST_OK || strcmp(dst, topo[i].str))
                           : (status == ST_OK || strcmp(dst, "sentinel") ||
                              strstr(err, topo[i].str) == NULL)) {
                t_fail("%s '%s': status %d, stored '%s' (err '%s')", topo[i].field,
                       topo[i].str, (int)status, dst, err);
            }
        }
    }
    /* too long for the field: rejected, untouched */
    memset(longstr, '1', sizeof(longstr) - 1);
    longstr[sizeof(longstr) - 1] = '\0';
    strcpy(dst, "sentinel");
    f = t_field("TOPO_SYNTHETIC");
    if (f == NULL || st_config_parse(f, longstr, dst, err, sizeof(err)) == ST_OK ||
        strcmp(dst, "sentinel")) {
        t_fail("TOPO_SYNTHETIC: an over-long value was accepted");
    }
}

/* ---- 2. formatting ---- */
typedef struct {
    const char *field;
    long long   value;
    const char *text;   /* the expected text, or NULL to check only the round trip */
} t_format_t;

static const t_format_t t_formats[] = {
    {"ENABLE", 1, "y"}, {"ENABLE", 0, "n"}, {"CHECK_ARGS", 1, "y"},
    {"LOG_LEVEL", 0, "error"}, {"LOG_LEVEL", 1, "warn"}, {"LOG_LEVEL", 4, "trace"},
    {"STATS", 0, "0"}, {"STATS", 2, "2"},
    {"SPIN_COUNT", -1, "auto"}, {"SPIN_COUNT", 0, "0"}, {"SPIN_COUNT", 1000, "1000"},
    {"SPIN_COUNT", INT_MAX, NULL},
    {"SMALL_MSG", 0, "0"}, {"SMALL_MSG", 1, "1"}, {"SMALL_MSG", -1, "auto"}, {"SMALL_MSG", 1023, NULL},
    {"SMALL_MSG", 16 * T_K, "16K"}, {"SMALL_MSG", 32 * T_K, "32K"},
    {"SMALL_MSG", 3 * T_M, "3M"}, {"SMALL_MSG", T_G, "1G"}, {"SMALL_MSG", T_M + T_K, NULL},
    {"SMALL_MSG", T_M + 1, NULL},
    {"SHM_SIZE", 64 * T_K, "64K"}, {"SHM_SIZE", 8 * T_M, "8M"}, {"SHM_SIZE", 4 * T_G, "4G"},
    {"SHM_SIZE", 64 * T_K + 1, NULL}, {"SHM_SIZE", 3 * T_G + 5 * T_M, NULL},
    {"SHM_CHUNK", -1, "auto"}, {"SHM_CHUNK", 4096, "4K"}, {"SHM_CHUNK", 12 * T_K, "12K"},
    {"SHM_CHUNK", 4097, NULL}, {"SHM_CHUNK", T_G, "1G"},
};

static void t_format_case(const t_format_t *c)
{
    const st_config_field_t *f = t_field(c->field);
    char buf[64], err[256];
    long long value;
    size_t s;
    int i;

    if (f == NULL) {
        t_fail("no field %s", c->field);
        return;
    }
    s = (size_t)c->value;
    i = (int)c->value;
    buf[0] = '\0';
    st_config_format(f, (f->type == ST_CONFIG_SIZE) ? (const void*)&s : (const void*)&i, buf,
                     sizeof(buf));
    if (c->text != NULL && strcmp(buf, c->text)) {
        t_fail("format %s %lld: '%s', expected '%s'", c->field, c->value, buf, c->text);
    }
    err[0] = '\0';
    if (t_parse(f, buf, &value, err, sizeof(err)) != ST_OK || value != c->value) {
        t_fail("format %s %lld gives '%s', which parses to %lld (err '%s')", c->field,
               c->value, buf, value, err);
    }
}

/* ---- 3. the environment ---- */

/* unset every STRATA_* variable inherited from the caller: this test sets its own */
static void t_env_clear(void)
{
    extern char **environ;
    char *names[256];
    int n = 0, j;
    char **env;

    for (env = environ; env != NULL && *env != NULL && n < (int)ST_ARRAY_SIZE(names); env++) {
        if (!strncmp(*env, "STRATA_", 7)) {
            names[n++] = strndup(*env, strcspn(*env, "="));
        }
    }
    for (j = 0; j < n; j++) {
        if (names[j] != NULL) {
            unsetenv(names[j]);
            free(names[j]);
        }
    }
}

/* run st_config_report() with stderr sent to a temporary file; its text into buf */
static int t_capture_report(char *buf, size_t len)
{
    FILE *tmp = tmpfile();
    size_t n;
    int saved;

    if (tmp == NULL) {
        return -1;
    }
    fflush(stderr);
    saved = dup(STDERR_FILENO);
    if (saved < 0 || dup2(fileno(tmp), STDERR_FILENO) < 0) {
        fclose(tmp);
        return -1;
    }
    st_config_report();
    fflush(stderr);
    dup2(saved, STDERR_FILENO);
    close(saved);

    rewind(tmp);
    n      = fread(buf, 1, len - 1, tmp);
    buf[n] = '\0';
    fclose(tmp);
    return 0;
}

static void t_check_environment(void)
{
    strata_config_entry_t e;
    char report[4096];
    const char *line;
    int i, count, lines, seen = 0;

    st_config_init();
    if (st_config.small_msg != 32768) {
        t_fail("STRATA_SMALL_MSG=32K: small_msg %zu", st_config.small_msg);
    }
    if (st_config.stats != 0) {
        t_fail("STRATA_STATS=bogus: stats %d, expected the default 0", st_config.stats);
    }
    if (st_config.enable != 1 || st_config.log_level != 1 || st_config.shm_size != 8 * T_M ||
        st_config.shm_chunk != ST_CONFIG_SIZE_AUTO || st_config.spin_count != -1 || st_config.check_args != 0) {
        t_fail("defaults: enable %d log_level %d shm_size %zu shm_chunk %zu spin_count %d "
               "check_args %d", st_config.enable, st_config.log_level, st_config.shm_size,
               st_config.shm_chunk, st_config.spin_count, st_config.check_args);
    }

    count = strata_config_count();
    for (i = 0; i < count; i++) {
        if (strata_config_get(i, &e) != STRATA_OK || e.name == NULL || e.value == NULL ||
            e.default_str == NULL || e.type == NULL || e.description == NULL) {
            t_fail("strata_config_get(%d) failed or left a NULL string", i);
            continue;
        }
        if (strncmp(e.name, "STRATA_", 7)) {
            t_fail("strata_config_get(%d): name '%s'", i, e.name);
        }
        if (!strcmp(e.name, "STRATA_SMALL_MSG")) {
            seen |= 1;
            if (strcmp(e.value, "32K") || e.is_set != 1 || strcmp(e.type, "size")) {
                t_fail("STRATA_SMALL_MSG: value '%s' is_set %d type '%s'", e.value, e.is_set,
                       e.type);
            }
        } else if (!strcmp(e.name, "STRATA_STATS")) {
            seen |= 2;
            if (strcmp(e.value, "0") || e.is_set != 1 || strcmp(e.type, "int")) {
                t_fail("STRATA_STATS: value '%s' is_set %d type '%s'", e.value, e.is_set,
                       e.type);
            }
        } else if (e.is_set != 0) {
            t_fail("%s: is_set %d, the variable is not set", e.name, e.is_set);
        }
        if (!strcmp(e.name, "STRATA_LOG_LEVEL") &&
            strcmp(e.type, "enum(error|warn|info|debug|trace)")) {
            t_fail("STRATA_LOG_LEVEL: type '%s'", e.type);
        }
    }
    if (seen != 3) {
        t_fail("strata_config_get lists no STRATA_SMALL_MSG or no STRATA_STATS");
    }
    if (strata_config_get(-1, &e) != STRATA_ERR_INVALID_PARAM ||
        strata_config_get(count, &e) != STRATA_ERR_INVALID_PARAM) {
        t_fail("strata_config_get(-1) or (%d) did not return STRATA_ERR_INVALID_PARAM", count);
    }

    if (t_capture_report(report, sizeof(report)) != 0) {
        t_fail("cannot redirect stderr");
        return;
    }
    for (lines = 0, line = report; (line = strchr(line, '\n')) != NULL; line++) {
        lines++;
    }
    if (strstr(report, "STRATA_STATS") == NULL || strstr(report, "STRATA_NO_SUCH_KNOB") == NULL ||
        strstr(report, "STRATA_SMALL_MSG") != NULL || lines != 2) {
        t_fail("st_config_report wrote %d lines, expected 2 warnings naming STRATA_STATS and "
               "STRATA_NO_SUCH_KNOB:\n%s", lines, report);
    }
}

/* STRATA_SMALL_MSG=auto: 16K up to 3 ranks or oversubscribed; else a power of two
 * that falls with the ranks (1K at 16: bench/RESULTS.md), from 16K to a cache line */
static void t_small_auto(void)
{
    static const struct {
        int    nranks, over;
        size_t bytes;
    } c[] = {
        {2, 0, 16384}, {3, 0, 16384}, {4, 0, 8192}, {5, 0, 4096}, {8, 0, 2048},
        {16, 0, 1024}, {32, 0, 256}, {1024, 0, 64}, {4, 1, 16384}, {16, 1, 16384},
    };
    size_t i, got, prev = (size_t)-1;
    int p;

    for (i = 0; i < ST_ARRAY_SIZE(c); i++) {
        got = st_shm_small_auto(c[i].nranks, c[i].over);
        if (got != c[i].bytes) {
            t_fail("small_auto(%d ranks, oversubscribed %d) = %zu, expected %zu", c[i].nranks,
                   c[i].over, got, c[i].bytes);
        }
    }
    for (p = 2; p <= 4096; p++) {
        got = st_shm_small_auto(p, 0);
        if (got > prev || (got & (got - 1)) != 0 || got == 0) {
            t_fail("small_auto(%d ranks) = %zu: not a power of two falling with the ranks",
                   p, got);
            break;
        }
        prev = got;
    }
}

static void *t_config_reader(void *arg)
{
    strata_config_entry_t e;
    int *bad = arg, i, k;

    for (k = 0; k < 100; k++) {
        for (i = 0; i < strata_config_count(); i++) {
            /* (the value read too: a knob's may be "") */
            if (strata_config_get(i, &e) != STRATA_OK || strncmp(e.name, "STRATA_", 7) != 0 ||
                e.type[0] == '\0' || strlen(e.value) >= ST_CONFIG_STRLEN) {
                (*bad)++;
            }
        }
    }
    return NULL;
}

static void t_threads(void)
{
    pthread_t thread[2];
    int bad[2] = {0, 0}, k;

    for (k = 0; k < 2; k++) {
        if (pthread_create(&thread[k], NULL, t_config_reader, &bad[k]) != 0) {
            t_fail("pthread_create failed");
            return;
        }
    }
    for (k = 0; k < 2; k++) {
        pthread_join(thread[k], NULL);
        if (bad[k] != 0) {
            t_fail("thread %d: %d bad strata_config_get entries", k, bad[k]);
        }
    }
}

int main(void)
{
    size_t i;

    /* before anything parses the environment (st_config_init parses it once) */
    t_env_clear();
    setenv("STRATA_SMALL_MSG", "32K", 1);
    setenv("STRATA_STATS", "bogus", 1);
    setenv("STRATA_NO_SUCH_KNOB", "1", 1);

    t_check_fields();
    for (i = 0; i < ST_ARRAY_SIZE(t_cases); i++) {
        t_parse_case(&t_cases[i]);
    }
    t_string_cases();
    for (i = 0; i < ST_ARRAY_SIZE(t_formats); i++) {
        t_format_case(&t_formats[i]);
    }
    t_check_environment();
    t_small_auto();
    t_threads();

    if (t_failures > 0) {
        return 1;
    }
    printf("test_config: %zu parse cases, %zu format cases and the environment passed\n",
           ST_ARRAY_SIZE(t_cases), ST_ARRAY_SIZE(t_formats));
    return 0;
}
