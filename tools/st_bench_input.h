/*
 * strata-bench's inputs and seeds (tests/test_bench_input.c checks what is said
 * here for 1 to 64 ranks). Element i of rank r's input on seed s:
 *
 *     in(i, r, s) = (i + 13 r) mod 17 + s        r > 0
 *     in(i, 0, s) = 2 (i mod 17) + 1 + s         rank 0
 *
 * Small non-negative integers: every partial sum, in any order, is at most the
 * whole one, at most (16 + s) n + 17 on n ranks: exact in float up to 2^24 (with
 * the 16 types -t allows, s < 48: 260,000 ranks; with one type, s < 3: 930,000)
 * and in double and int. The sum over n ranks, E(i) = S(u) + n s with u = i mod 17:
 * - is at least n (rank 0's input is at least 1): never 0;
 * - differs, at every element, between two seeds (by n per step of s);
 * - takes two values or more over any 17 consecutive elements, whatever n. With
 *   n = 17 q + m, S(u) = 136 q + 1 + u + sum over k < m of ((u + 13 k) mod 17):
 *   m + 1 terms, each gaining 1 from u to u + 1 but 1 - 17 where it wraps from 16
 *   to 0. A step is 0 only where m + 1 = 17 w, w terms wrapping: never for m < 16
 *   (neighbours always differ); for m = 16 the terms are u twice and u + a for
 *   every a but 4 (13 k misses 4 for k < 16), so two wrap at u = 16, none at 12.
 * (The older inputs, ((7 i + 13 r + 5 s) mod 17) - 8, summed to 0 at every element
 * on 17 k ranks, where an allreduce that wrote zeros passed.)
 */
#ifndef ST_BENCH_INPUT_H
#define ST_BENCH_INPUT_H

#define ST_BENCH_PERIOD    17   /* inputs depend on i mod 17 */
#define ST_BENCH_MAX_TYPES 16   /* types of one run (-t) */
#define ST_BENCH_NIMPL     2    /* implementations timed: Strata's, PMPI's (--compare) */
#define ST_BENCH_SEEDS     (ST_BENCH_MAX_TYPES * (1 + ST_BENCH_NIMPL))   /* seeds used */

/*
 * The seed of a call of the @a type'th type of the run (any size): @a call 0 for
 * the warm-up and the iteration probe, 1 + i for implementation i's validated
 * call. No validated call has the inputs of an earlier call of its size, of any
 * type (the sizes of one type all differ).
 */
static inline unsigned st_bench_seed(int type, int call)
{
    return (unsigned)(type * (1 + ST_BENCH_NIMPL) + call);
}

/* in(@a j, @a rank, @a seed), @a j = i mod 17. */
static inline long st_bench_input(int j, int rank, unsigned seed)
{
    if (rank == 0) {
        return 2L * j + 1 + (long)seed;
    }
    return (j + 13L * rank) % ST_BENCH_PERIOD + (long)seed;
}

#endif
