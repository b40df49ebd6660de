/*
 * Fuzz target: the configuration-value parser (common/st_config.c, st_config_parse),
 * over every field of the table.
 *
 * Input: one byte picks the field (modulo the table's size), the rest is the value
 * (up to the first NUL, as an environment variable would be). Checked, against
 * rules written here from st_config.h rather than taken from the parser: a value
 * accepted is within the field's bounds, or its enum, or "auto" where allowed, and
 * is the value the text denotes (the topology's strings: what hwloc takes, asked
 * here directly); a value refused leaves the destination untouched
 * and says why; an accepted value formats (st_config_format) to text that parses
 * back to the same value.
 */
#include "config.h"

#include "st_fuzz.h"
#include "st_config.h"

#include <ctype.h>
#include <hwloc.h>
#include <limits.h>
#include <strings.h>
#include <sys/stat.h>

#define ST_FUZZ_POISON 0xa5

typedef union {
    int    i;
    size_t z;
    char   s[ST_CONFIG_STRLEN];
} st_fuzz_value_t;

/*
 * The number a numeric field's text denotes: blanks, decimal digits, for a size an
 * optional K/M/G (1024-based, case-insensitive) with an optional B, blanks.
 * @return 1 with the value in *v_p, 0 for text that is not such a number, -1 for a
 * number past what a long long holds.
 */
static int st_fuzz_number(const char *s, int is_size, unsigned long long *v_p)
{
    unsigned long long v = 0, mult = 1;
    int digits = 0, big = 0;

    while (isspace((unsigned char)*s)) {
        s++;
    }
    for (; *s >= '0' && *s <= '9'; s++, digits++) {
        if (v > (ULLONG_MAX - 9) / 10) {
            big = 1;
        } else {
            v = v * 10 + (unsigned long long)(*s - '0');
        }
    }
    if (digits == 0) {
        return 0;
    }
    if (is_size && *s != '\0' && !isspace((unsigned char)*s)) {
        switch (*s) {
        case 'k': case 'K': mult = 1ULL << 10; break;
        case 'm': case 'M': mult = 1ULL << 20; break;
        case 'g': case 'G': mult = 1ULL << 30; break;
        default: return 0;
        }
        s++;
        if (*s == 'b' || *s == 'B') {
            s++;
        }
    }
    while (isspace((unsigned char)*s)) {
        s++;
    }
    if (*s != '\0') {
        return 0;
    }
    if (big || v > (unsigned long long)LLONG_MAX / mult) {
        return -1;
    }
    *v_p = v * mult;
    return 1;
}

/* STRATA_TOPO_BIND: os, none, core, socket (any case), or "a" / "a-b" items, a <= b
 * <= 1000000, separated by commas. */
static int st_fuzz_bind_ok(const char *s)
{
    static const char *const words[] = {"os", "none", "core", "socket"};
    unsigned long long a, b;
    size_t i;

    for (i = 0; i < ST_ARRAY_SIZE(words); i++) {
        if (!strcasecmp(s, words[i])) {
            return 1;
        }
    }
    for (;;) {
        if (!isdigit((unsigned char)*s)) {
            return 0;
        }
        for (a = 0; isdigit((unsigned char)*s); s++) {
            a = a > 10000000 ? a : a * 10 + (unsigned)(*s - '0');
        }
        b = a;
        if (*s == '-') {
            s++;
            if (!isdigit((unsigned char)*s)) {
                return 0;
            }
            for (b = 0; isdigit((unsigned char)*s); s++) {
                b = b > 10000000 ? b : b * 10 + (unsigned)(*s - '0');
            }
        }
        if (a > b || b > 1000000) {
            return 0;
        }
        if (*s == '\0') {
            return 1;
        }
        if (*s != ',') {
            return 0;
        }
        s++;
    }
}

/* Does @a path name something that exists and is not a regular file? */
static int st_fuzz_not_file(const char *path)
{
    struct stat st;

    return stat(path, &st) == 0 && !S_ISREG(st.st_mode);
}

/* STRATA_TOPO_SYNTHETIC, STRATA_TOPO_XML: what hwloc itself takes (a scratch topology,
 * not loaded); 1 for an empty value (the default: the machine's). */
static int st_fuzz_hwloc_ok(const char *name, const char *s)
{
    hwloc_topology_t topo;
    int rc;

    if (s[0] == '\0' || hwloc_topology_init(&topo) != 0) {
        return 1;
    }
    rc = !strcmp(name, "TOPO_XML") ? hwloc_topology_set_xml(topo, s)
                                   : hwloc_topology_set_synthetic(topo, s);
    hwloc_topology_destroy(topo);
    return rc == 0;
}

/* 1 when @a a and @a b hold the same value of @a f's type. */
static int st_fuzz_same(const st_config_field_t *f, const st_fuzz_value_t *a,
                        const st_fuzz_value_t *b)
{
    switch (f->type) {
    case ST_CONFIG_SIZE:
        return a->z == b->z;
    case ST_CONFIG_STRING:
        return strcmp(a->s, b->s) == 0;
    default:
        return a->i == b->i;
    }
}

/* What the text must give, by the rules above; @return 1 accepted, 0 refused. */
static int st_fuzz_expect(const st_config_field_t *f, const char *s, st_fuzz_value_t *want)
{
    static const char *const yes[] = {"y", "yes", "1", "on", "true"};
    static const char *const no[]  = {"n", "no", "0", "off", "false"};
    unsigned long long v;
    size_t i;

    switch (f->type) {
    case ST_CONFIG_BOOL:
        for (i = 0; i < ST_ARRAY_SIZE(yes); i++) {
            if (!strcasecmp(s, yes[i]) || !strcasecmp(s, no[i])) {
                want->i = !strcasecmp(s, yes[i]);
                return 1;
            }
        }
        return 0;
    case ST_CONFIG_ENUM:
        for (i = 0; f->enum_names[i] != NULL; i++) {
            if (!strcasecmp(s, f->enum_names[i])) {
                want->i = (int)i;
                return 1;
            }
        }
        return 0;
    case ST_CONFIG_INT:
    case ST_CONFIG_SIZE:
        if (f->allow_auto && !strcasecmp(s, "auto")) {
            if (f->type == ST_CONFIG_INT) {
                want->i = -1;
            } else {
                want->z = ST_CONFIG_SIZE_AUTO;
            }
            return 1;
        }
        if (st_fuzz_number(s, f->type == ST_CONFIG_SIZE, &v) != 1 ||
            v < (unsigned long long)f->min || v > (unsigned long long)f->max) {
            return 0;
        }
        if (f->type == ST_CONFIG_INT) {
            want->i = (int)v;
        } else {
            want->z = (size_t)v;
        }
        return 1;
    case ST_CONFIG_STRING:
        if (strlen(s) >= ST_CONFIG_STRLEN ||
            (!strcmp(f->name, "TOPO_BIND") && !st_fuzz_bind_ok(s)) ||
            ((!strcmp(f->name, "TOPO_SYNTHETIC") || !strcmp(f->name, "TOPO_XML")) &&
             !st_fuzz_hwloc_ok(f->name, s))) {
            return 0;
        }
        snprintf(want->s, sizeof(want->s), "%s", s);
        return 1;
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static st_fuzz_value_t dst, poison, want, again;
    char err[256], text[ST_CONFIG_STRLEN + 64], *s;
    const st_config_field_t *fields, *f;
    st_status_t rc;
    int n, exp;

    fields = st_config_fields(&n);
    if (size < 1 || n <= 0) {
        return 0;
    }
    f = &fields[data[0] % n];
    s = malloc(size);
    if (s == NULL) {
        return 0;
    }
    memcpy(s, data + 1, size - 1);
    s[size - 1] = '\0';
    /* (an XML path naming something other than a file, /dev/stdin, /dev/zero: hwloc
       would read it until its end; not a case for the parser) */
    if (!strcmp(f->name, "TOPO_XML") && st_fuzz_not_file(s)) {
        free(s);
        return 0;
    }

    memset(&poison, ST_FUZZ_POISON, sizeof(poison));
    memcpy(&dst, &poison, sizeof(dst));
    memset(&want, 0, sizeof(want));
    err[0] = '\0';
    rc  = st_config_parse(f, s, &dst, err, sizeof(err));
    exp = st_fuzz_expect(f, s, &want);
    ST_FUZZ_CHECK((rc == ST_OK) == exp, "STRATA_%s='%.60s': parser says %d, expected %s",
                  f->name, s, (int)rc, exp ? "accepted" : "refused");
    if (rc != ST_OK) {
        ST_FUZZ_CHECK(!memcmp(&dst, &poison, sizeof(dst)), "STRATA_%s='%.60s': refused, but "
                      "the destination changed", f->name, s);
        ST_FUZZ_CHECK(err[0] != '\0' && strlen(err) < sizeof(err), "STRATA_%s='%.60s': "
                      "refused without a reason", f->name, s);
        free(s);
        return 0;
    }
    ST_FUZZ_CHECK(st_fuzz_same(f, &dst, &want), "STRATA_%s='%.60s': not the value the text "
                  "denotes", f->name, s);
    if (f->type == ST_CONFIG_INT || f->type == ST_CONFIG_SIZE) {
        long long v = f->type == ST_CONFIG_INT ? (long long)dst.i : (long long)dst.z;
        int is_auto = f->allow_auto && (f->type == ST_CONFIG_INT ? dst.i == -1
                                                                : dst.z == ST_CONFIG_SIZE_AUTO);

        ST_FUZZ_CHECK(is_auto || (v >= f->min && v <= f->max), "STRATA_%s=%lld outside "
                      "[%lld, %lld]", f->name, v, f->min, f->max);
    }
    /* format, parse again: the same value */
    st_config_format(f, &dst, text, sizeof(text));
    memcpy(&again, &poison, sizeof(again));
    ST_FUZZ_CHECK(st_config_parse(f, text, &again, err, sizeof(err)) == ST_OK,
                  "STRATA_%s: '%s' (formatted from '%.60s') does not parse: %s", f->name,
                  text, s, err);
    ST_FUZZ_CHECK(st_fuzz_same(f, &dst, &again), "STRATA_%s: '%.60s' and '%s' differ",
                  f->name, s, text);
    free(s);
    return 0;
}
