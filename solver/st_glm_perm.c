/*
 * The host's fill of an epoch's order (st_glm_perm.h). The positions go
 * ST_GLM_PERM_LANES at a time, side by side, so that their rounds' multiplies
 * overlap instead of each round waiting on the last, and on x86-64 a second copy
 * for AVX2 does 8 lanes in one vector, chosen at load time (GCC's target_clones;
 * this file is built with the dynamic vectorizer cost model, which -O2's cheap one
 * does not allow). Per million rows on the 2-core VM: one position at a time
 * 19 ms, these lanes 10.5 ms, with AVX2 5.1 ms; a Fisher-Yates shuffle took 3-4 ms,
 * an SDCA epoch some 270-400 ms.
 */
#include "config.h"

#include "st_glm_perm.h"

/* not under the sanitizers: the clones' resolver (an ifunc) runs before their
 * runtimes are up, and crashed every TSan run */
#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define ST_GLM_PERM_SANITIZED 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define ST_GLM_PERM_SANITIZED 1
#endif
#if defined(__x86_64__) && defined(__GLIBC__) && defined(__has_attribute) && \
    !defined(ST_GLM_PERM_SANITIZED)
#if __has_attribute(target_clones)
#define ST_GLM_PERM_CLONES __attribute__((target_clones("avx2", "default")))
#endif
#endif
#ifndef ST_GLM_PERM_CLONES
#define ST_GLM_PERM_CLONES
#endif

/* (static, behind st_glm_perm_fill below: GCC gives the clones' dispatcher, an ifunc,
 * and its resolver default visibility whatever -fvisibility or a visibility
 * attribute says (GCC 12), so a global clone was exported by libstrata_glm.so;
 * tests/exports.sh) */
ST_GLM_PERM_CLONES
static void st_glm_perm_fill_lanes(const st_glm_perm_t *p, int64_t base, int64_t *out,
                                   int64_t n)
{
    uint32_t hi[ST_GLM_PERM_LANES], lo[ST_GLM_PERM_LANES], r, t;
    const uint64_t lo_mask = ((uint64_t)1 << p->lo_bits) - 1;
    int64_t j = 0;
    uint64_t x;

    for (; j + ST_GLM_PERM_LANES <= n; j += ST_GLM_PERM_LANES) {
        for (t = 0; t < ST_GLM_PERM_LANES; t++) {
            hi[t] = (uint32_t)((uint64_t)(j + t) >> p->lo_bits);
            lo[t] = (uint32_t)((uint64_t)(j + t) & lo_mask);
        }
        for (r = 0; r < ST_GLM_PERM_ROUNDS; r += 2) {
            for (t = 0; t < ST_GLM_PERM_LANES; t++) {
                lo[t] ^= st_glm_perm_f(hi[t], p->key[r], p->lo_bits);
            }
            for (t = 0; t < ST_GLM_PERM_LANES; t++) {
                hi[t] ^= st_glm_perm_f(lo[t], p->key[r + 1], p->hi_bits);
            }
        }
        for (t = 0; t < ST_GLM_PERM_LANES; t++) {
            x          = ((uint64_t)hi[t] << p->lo_bits) | lo[t];
            out[j + t] = base + (int64_t)((x < p->n) ? x : st_glm_perm_at(p, x));
        }
    }
    for (; j < n; j++) {
        out[j] = base + (int64_t)st_glm_perm_at(p, (uint64_t)j);
    }
}

__attribute__((visibility("hidden")))
void st_glm_perm_fill(const st_glm_perm_t *p, int64_t base, int64_t *out, int64_t n)
{
    st_glm_perm_fill_lanes(p, base, out, n);
}
