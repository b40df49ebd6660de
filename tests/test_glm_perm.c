/*
 * The epochs' orders (solver/st_glm_perm.h): every key gives a permutation of
 * [0, n) (n from 0 to 2000, and around powers of two up to 2^21 + 1), the host's
 * filling function gives the positions the GPU computes one by one (with any
 * base), keys give different orders, and the orders look random: each position's
 * row uniform over the keys (chi-square), no correlation between a position and
 * its row, adjacent rows in either order alike, consecutive positions as far
 * apart as at random.
 */
#include "st_glm_perm.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int t_failures;

static void t_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void t_fail(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    fprintf(stderr, "FAIL: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    t_failures++;
}

/* a permutation of [0, n), and st_glm_perm_fill agrees with st_glm_perm_at */
static void t_bijection(uint64_t n, uint64_t key, int64_t *out, unsigned char *seen)
{
    st_glm_perm_t p;
    uint64_t j, v;

    st_glm_perm_init(&p, n, key);
    memset(seen, 0, (size_t)n + 1);
    st_glm_perm_fill(&p, 7, out, (int64_t)n);
    for (j = 0; j < n; j++) {
        v = st_glm_perm_at(&p, j);
        if (v >= n || seen[v]) {
            t_fail("n %llu key %llu: position %llu gives %llu (out of range or twice)",
                   (unsigned long long)n, (unsigned long long)key, (unsigned long long)j,
                   (unsigned long long)v);
            return;
        }
        seen[v] = 1;
        if (out[j] != 7 + (int64_t)v) {
            t_fail("n %llu: st_glm_perm_fill gives %lld at %llu, st_glm_perm_at %llu",
                   (unsigned long long)n, (long long)out[j], (unsigned long long)j,
                   (unsigned long long)v);
            return;
        }
    }
}

/* position j's row over K keys, for n rows: chi-square over the n x J cells, which
 * for random permutations is about J (n - 1) (standard deviation sqrt(2 J (n - 1))) */
static void t_uniform(int n, int keys)
{
    int J = (n < 16) ? n : 16, j, k;
    long *count = calloc((size_t)n * (size_t)J, sizeof(long));
    double chi = 0, e = (double)keys / n, df = (double)J * (n - 1), d;
    st_glm_perm_t p;

    if (count == NULL) {
        t_fail("out of memory");
        return;
    }
    for (k = 0; k < keys; k++) {
        st_glm_perm_init(&p, (uint64_t)n, (uint64_t)k * 0x9e3779b97f4a7c15ULL + 1);
        for (j = 0; j < J; j++) {
            count[(size_t)j * (size_t)n + st_glm_perm_at(&p, (uint64_t)j)]++;
        }
    }
    for (j = 0; j < J * n; j++) {
        d = (double)count[j] - e;
        chi += d * d / e;
    }
    free(count);
    if (fabs(chi - df) > 6 * sqrt(2 * df)) {
        t_fail("n %d: the positions' rows are not uniform over %d keys: chi-square %.1f, "
               "expected %.0f +- %.1f", n, keys, chi, df, sqrt(2 * df));
    }
}

/* structure within one order of n rows: correlation of position and row; the share
 * of adjacent rows (v, v + 1) visited in increasing order; consecutive positions
 * landing within 16 rows of each other */
static void t_structure(uint64_t n, uint64_t key)
{
    st_glm_perm_t p;
    int64_t *pos = malloc(n * sizeof(int64_t));
    double sx = 0, sy = 0, sxy = 0, sxx = 0, syy = 0, corr, up = 0, near = 0, expect;
    uint64_t j, v, prev = 0;

    if (pos == NULL) {
        t_fail("out of memory");
        return;
    }
    st_glm_perm_init(&p, n, key);
    for (j = 0; j < n; j++) {
        v      = st_glm_perm_at(&p, j);
        pos[v] = (int64_t)j;
        sx += (double)j;
        sy += (double)v;
        sxy += (double)j * (double)v;
        sxx += (double)j * (double)j;
        syy += (double)v * (double)v;
        if (j > 0 && (v > prev ? v - prev : prev - v) < 16) {
            near++;
        }
        prev = v;
    }
    for (v = 0; v + 1 < n; v++) {
        up += (pos[v] < pos[v + 1]);
    }
    free(pos);
    corr   = (sxy - sx * sy / (double)n) /
             sqrt((sxx - sx * sx / (double)n) * (syy - sy * sy / (double)n));
    expect = 30 - 240 / (double)n;   /* (n - 1) pairs x P(0 < |a - b| < 16) */
    if (fabs(corr) > 5 / sqrt((double)n)) {
        t_fail("n %llu: position and row correlate: %.4f", (unsigned long long)n, corr);
    }
    if (fabs(up / (double)(n - 1) - 0.5) > 5 * 0.5 / sqrt((double)(n - 1))) {
        t_fail("n %llu: adjacent rows in increasing order %.4f of the time, not 0.5",
               (unsigned long long)n, up / (double)(n - 1));
    }
    if (fabs(near - expect) > 6 * sqrt(expect) + 1) {
        t_fail("n %llu: %.0f consecutive positions within 16 rows, about %.0f at random",
               (unsigned long long)n, near, expect);
    }
}

int main(void)
{
    static const uint64_t big[] = {
        (1u << 16) - 1, 1u << 16, (1u << 16) + 1, (1u << 21) - 1, 1u << 21, (1u << 21) + 1,
        3000017,
    };
    int64_t *out = malloc(3000018 * sizeof(int64_t));
    unsigned char *seen = malloc(3000018);
    st_glm_perm_t a, b;
    uint64_t n, j;
    size_t i;
    int same = 1;

    if (out == NULL || seen == NULL) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }
    for (n = 0; n <= 2000 && t_failures == 0; n++) {
        t_bijection(n, n * 2654435761u + 5, out, seen);
    }
    for (i = 0; i < sizeof(big) / sizeof(big[0]); i++) {
        t_bijection(big[i], 42 + i, out, seen);
    }
    /* two keys: two orders */
    st_glm_perm_init(&a, 1000, 1);
    st_glm_perm_init(&b, 1000, 2);
    for (j = 0; j < 1000; j++) {
        same &= (st_glm_perm_at(&a, j) == st_glm_perm_at(&b, j));
    }
    if (same) {
        t_fail("keys 1 and 2 give the same order of 1000 rows");
    }
    t_uniform(2, 20000);
    t_uniform(10, 100000);
    t_uniform(100, 50000);
    t_uniform(1000, 20000);
    t_structure(1000, 3);
    t_structure(1000000, 4);
    t_structure(1048577, 5);
    free(out);
    free(seen);
    if (t_failures > 0) {
        return 1;
    }
    printf("test_glm_perm: bijections, fill, keys, uniformity and structure passed\n");
    return 0;
}
