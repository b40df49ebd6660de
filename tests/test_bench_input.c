/*
 * strata-bench's inputs (tools/st_bench_input.h) on 1 to 64 ranks and every seed a
 * run uses: the expected sums, added up here rank by rank, are never 0, never one
 * value over the 17 elements of a period, never a rank's own input on every element
 * (an allreduce that copied it), differ at every element between two seeds (a
 * stale result), and stay exact in float. Before, on 17 and 34 ranks every sum was
 * 0: an allreduce that wrote zeros passed.
 */
#include "config.h"

#include "st_bench_input.h"

#include <stdarg.h>
#include <stdio.h>

#define MAX_RANKS 64

static long expected[ST_BENCH_SEEDS][ST_BENCH_PERIOD];
static int seen[ST_BENCH_SEEDS];
static int nfail;

/* a failure: the first 20 are printed */
static void fail(const char *fmt, ...)
{
    va_list ap;

    if (nfail++ < 20) {
        printf("FAIL: ");
        va_start(ap, fmt);
        vprintf(fmt, ap);
        va_end(ap);
        printf("\n");
    }
}

int main(void)
{
    long in, lo, hi;
    int n, r, s, t, j, call, same;

    /* every seed a run uses is one of ST_BENCH_SEEDS, none twice */
    for (t = 0; t < ST_BENCH_MAX_TYPES; t++) {
        for (call = 0; call <= ST_BENCH_NIMPL; call++) {
            s = (int)st_bench_seed(t, call);
            if (s < 0 || s >= ST_BENCH_SEEDS || seen[s]++) {
                fail("type %d call %d: seed %d", t, call, s);
            }
        }
    }
    for (n = 1; n <= MAX_RANKS; n++) {
        for (s = 0; s < ST_BENCH_SEEDS; s++) {
            lo = hi = 0;
            for (j = 0; j < ST_BENCH_PERIOD; j++) {
                expected[s][j] = 0;
                for (r = 0; r < n; r++) {
                    in = st_bench_input(j, r, (unsigned)s);
                    if (in < 0 || in > 128) {
                        fail("input %ld (j %d rank %d seed %d): not in [0, 128]", in, j, r,
                             s);
                    }
                    expected[s][j] += in;
                }
                if (expected[s][j] == 0) {
                    fail("%d ranks, seed %d: element %d sums to 0", n, s, j);
                }
                if (j == 0 || expected[s][j] < lo) {
                    lo = expected[s][j];
                }
                if (j == 0 || expected[s][j] > hi) {
                    hi = expected[s][j];
                }
            }
            if (lo == hi) {
                fail("%d ranks, seed %d: every element sums to %ld", n, s, lo);
            }
            if (lo < 0 || hi > (16L + s) * n + 17) {   /* the bound the header says */
                fail("%d ranks, seed %d: sums from %ld to %ld", n, s, lo, hi);
            }
            for (r = 0; n > 1 && r < n; r++) {
                same = 0;
                for (j = 0; j < ST_BENCH_PERIOD; j++) {
                    same += (expected[s][j] == st_bench_input(j, r, (unsigned)s));
                }
                if (same == ST_BENCH_PERIOD) {
                    fail("%d ranks, seed %d: the sum is rank %d's input", n, s, r);
                }
            }
        }
        for (s = 0; s < ST_BENCH_SEEDS; s++) {
            for (t = 0; t < s; t++) {
                for (j = 0; j < ST_BENCH_PERIOD; j++) {
                    if (expected[s][j] == expected[t][j]) {
                        fail("%d ranks: seeds %d and %d: element %d sums to %ld on both",
                             n, t, s, j, expected[s][j]);
                        break;
                    }
                }
            }
        }
    }
    if (nfail != 0) {
        printf("%d failures\n", nfail);
        return 1;
    }
    printf("ok: 1 to %d ranks, %d seeds\n", MAX_RANKS, ST_BENCH_SEEDS);
    return 0;
}
