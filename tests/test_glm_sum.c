/*
 * The primal methods' sum over their threads' outputs (st_glm_sum_parts,
 * solver/st_glm_lbfgs.c): summed by up to nparts threads, a slice of the columns
 * each, it must give the bits of the plain loop over the parts in order, which this
 * test computes itself: counts below, at and above the slicing threshold (2 x
 * ST_GLM_SUM_SLICE_MIN), 1 to 9 parts, the stride the count or above it, on values of
 * mixed signs and magnitudes (where the order of the additions shows). No MPI: one
 * process, MPI_COMM_NULL (the sum over ranks is then nothing).
 */
#include "config.h"

#include "st_glm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t t_state = 0x9e3779b97f4a7c15ULL;

/* values of mixed signs and magnitudes, 1e-8 to 1e8 */
static double t_value(void)
{
    uint64_t x;
    double m;

    t_state ^= t_state << 13;
    t_state ^= t_state >> 7;
    t_state ^= t_state << 17;
    x = t_state;
    m = (double)(x >> 11) / 9007199254740992.0;   /* [0, 1) */
    switch ((x >> 3) % 5) {
    case 0: m *= 1e-8; break;
    case 1: m *= 1e-3; break;
    case 2: break;
    case 3: m *= 1e4; break;
    default: m *= 1e8; break;
    }
    return (x & 1) ? -m : m;
}

static int t_case(int64_t count, int nparts, int64_t stride)
{
    st_glm_round_ctx_t ctx;
    double *sum, *ref;
    int64_t j, total = stride * (nparts + 1);
    int k, bad = 0;

    sum = malloc((size_t)total * sizeof(double));
    ref = malloc((size_t)count * sizeof(double));
    if (sum == NULL || ref == NULL) {
        fprintf(stderr, "FAIL: out of memory\n");
        exit(1);
    }
    for (j = 0; j < total; j++) {
        sum[j] = t_value();
    }
    for (j = 0; j < count; j++) {   /* the reference: part 0, then 1, ..., in order */
        ref[j] = sum[stride + j];
        for (k = 1; k < nparts; k++) {
            ref[j] += sum[stride * (k + 1) + j];
        }
    }
    memset(&ctx, 0, sizeof(ctx));
    ctx.comm = MPI_COMM_NULL;
    st_glm_sum_parts(&ctx, sum, count, nparts, stride);
    if (memcmp(sum, ref, (size_t)count * sizeof(double)) != 0) {
        for (j = 0; j < count && sum[j] == ref[j]; j++) {
        }
        fprintf(stderr, "FAIL: count %lld, %d parts, stride %lld: entry %lld is %.17g, the "
                "parts in order give %.17g\n", (long long)count, nparts, (long long)stride,
                (long long)j, sum[j], ref[j]);
        bad = 1;
    }
    free(sum);
    free(ref);
    return bad;
}

int main(void)
{
    static const int64_t counts[] = {0, 1, 1000, 2 * ST_GLM_SUM_SLICE_MIN - 1,
                                     2 * ST_GLM_SUM_SLICE_MIN, 5 * ST_GLM_SUM_SLICE_MIN + 7,
                                     300001};
    static const int parts[] = {1, 2, 3, 4, 9};
    size_t c, p;
    int fail = 0;

    for (c = 0; c < sizeof(counts) / sizeof(counts[0]); c++) {
        for (p = 0; p < sizeof(parts) / sizeof(parts[0]); p++) {
            fail |= t_case(counts[c], parts[p], counts[c] + (int64_t)(p % 2) * 2);
        }
    }
    if (!fail) {
        printf("test_glm_sum: PASS\n");
    }
    return fail;
}
