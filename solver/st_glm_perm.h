/*
 * The order of an SDCA epoch: a keyed pseudo-random permutation of [0, n),
 * computed position by position in O(1) memory and time, so the GPU's warps
 * compute their own rows and the host draws one 64-bit key an epoch instead of
 * shuffling (and copying) n row numbers. The CPU solver takes its orders from
 * the same function, so a GPU run on the tests' stand-in driver, one row at a
 * time, takes the CPU run's steps bit for bit.
 *
 * The permutation: a bijection of the b-bit numbers, 2^b >= n > 2^(b-1) (a
 * Feistel network of eight rounds on the two halves of the bits, with a keyed
 * 32-bit hash as the round function), then cycle walking: apply it again until
 * the value falls in [0, n); the cycle through j < n comes back below n, and with
 * 2^b < 2n that takes under two applications on average. This is how GPUs
 * shuffle without a permutation in memory (Mitchell, Stokes, Frank, Holmes,
 * "Bandwidth-optimal random shuffling for GPUs", 2022). SDCA needs every row once
 * an epoch, in an order without structure; tests/test_glm_perm.c checks both.
 * Header only: host C, CUDA device code, and the stand-in's emulation of the
 * kernels all include it.
 */
#ifndef ST_GLM_PERM_H
#define ST_GLM_PERM_H

#include <stdint.h>

#ifdef __CUDACC__
#define ST_GLM_PERM_HD static inline __host__ __device__
#else
#define ST_GLM_PERM_HD static inline
#endif

#define ST_GLM_PERM_ROUNDS 8   /* 4 left n = 10's positions visibly non-uniform */
#define ST_GLM_PERM_LANES  8   /* st_glm_perm_fill: positions computed side by side */

typedef struct {
    uint64_t n;                          /* the permutation is of [0, n) */
    uint32_t key[ST_GLM_PERM_ROUNDS];    /* the round keys */
    uint32_t lo_bits, hi_bits;           /* b = lo_bits + hi_bits, 2^b >= n; each <= 32 */
} st_glm_perm_t;

/* splitmix64's output function: the round keys from the epoch's key */
ST_GLM_PERM_HD uint64_t st_glm_perm_mix(uint64_t x)
{
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

/* The permutation of [0, @a n) that @a key selects (n < 2^63). */
ST_GLM_PERM_HD void st_glm_perm_init(st_glm_perm_t *p, uint64_t n, uint64_t key)
{
    uint32_t b = 0, r;

    while (b < 63 && ((uint64_t)1 << b) < n) {
        b++;
    }
    p->n       = n;
    p->lo_bits = b / 2;
    p->hi_bits = b - b / 2;
    for (r = 0; r < ST_GLM_PERM_ROUNDS; r++) {
        p->key[r] = (uint32_t)st_glm_perm_mix(key + 0x9e3779b97f4a7c15ULL * (r + 1));
    }
}

/* The top @a bits bits of murmur3's 32-bit finalizer of @a v ^ @a key (0 bits: 0). */
ST_GLM_PERM_HD uint32_t st_glm_perm_f(uint32_t v, uint32_t key, uint32_t bits)
{
    v ^= key;
    v ^= v >> 16;
    v *= 0x85ebca6bu;
    v ^= v >> 13;
    v *= 0xc2b2ae35u;
    v ^= v >> 16;
    return (bits == 0) ? 0 : v >> (32 - bits);
}

/* The bijection of [0, 2^b): an alternating Feistel network on the high and low
 * halves, each round xoring a keyed hash of one half into the other (invertible:
 * the hashed half is unchanged). */
ST_GLM_PERM_HD uint64_t st_glm_perm_round(const st_glm_perm_t *p, uint64_t x)
{
    uint32_t hi = (uint32_t)(x >> p->lo_bits);
    uint32_t lo = (uint32_t)(x & (((uint64_t)1 << p->lo_bits) - 1));
    uint32_t r;

    for (r = 0; r < ST_GLM_PERM_ROUNDS; r += 2) {
        lo ^= st_glm_perm_f(hi, p->key[r], p->lo_bits);
        hi ^= st_glm_perm_f(lo, p->key[r + 1], p->hi_bits);
    }
    return ((uint64_t)hi << p->lo_bits) | lo;
}

/* The @a j-th element of the permutation, j < n. */
ST_GLM_PERM_HD uint64_t st_glm_perm_at(const st_glm_perm_t *p, uint64_t j)
{
    do {
        j = st_glm_perm_round(p, j);
    } while (j >= p->n);
    return j;
}

#ifndef __CUDACC__
/* Host: out[j] = @a base + the j-th element, j < n (solver/st_glm_perm.c). */
void st_glm_perm_fill(const st_glm_perm_t *p, int64_t base, int64_t *out, int64_t n);

/*
 * Cross-validation's folds (strata_glm_cross_validate): global row g of n is in the
 * fold of its position p = perm(g) in the permutation keyed by the seed, folds cut at
 * floor(i n / folds) as LIBLINEAR cuts its shuffled rows (fold sizes differ by at
 * most one, whatever the rank count). @a p: st_glm_cv_perm's.
 */
static inline void st_glm_cv_perm(st_glm_perm_t *p, uint64_t n, uint64_t seed)
{
    st_glm_perm_init(p, n, st_glm_perm_mix(seed ^ 0x6a09e667f3bcc909ULL));
}

/* (p + 1) folds > i n holds for folds i = 0 .. the answer: floor(((p + 1) folds - 1) / n) */
static inline int st_glm_cv_fold(const st_glm_perm_t *p, int folds, uint64_t g)
{
    unsigned __int128 pos = st_glm_perm_at(p, g);

    return (int)(((pos + 1) * (unsigned)folds - 1) / p->n);
}
#endif

#endif /* ST_GLM_PERM_H */
