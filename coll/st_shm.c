/*
 * The shared-memory node algorithm: one segment per node communicator.
 *
 * Segment layout (n ranks, C = chunk bytes):
 *
 *   [ ctrl, per rank 6 cache lines: inline[0] | inline[1] | ready | partial |
 *     reduced | gathered ]
 *   [ buffer 0: slot 0 | slot 1 | ... | slot n-1 | result ]    each C bytes
 *   [ buffer 1: slot 0 | slot 1 | ... | slot n-1 | result ]
 *
 * With socket groups (P >= 2 packages in the node, see st_shm_large_socket) a
 * buffer holds P partial areas and P result areas after the slots instead.
 *
 * Step s (1, 2, ... counted alike by every rank) uses buffer (and inline line)
 * s % 2. Flags hold step numbers and are written only by their owner; a rank
 * waits for "flag[j] >= s" on every j.
 *
 * Tiny messages (<= 56 bytes): each rank writes its vector and the step number
 * into its inline line, waits for every line to show s, and folds all lines
 * itself: one cache-line transfer per peer.
 * Small messages: the same through the slots, with the ready flag.
 * Large messages, pipelined in steps of E elements (E * size <= C):
 *   copy my E elements into my slot, except my own sub-range, which only I
 *   read and which I fold straight from the user's buffer; ready = s
 *   wait ready[*] >= s; fold my sub-range over slots 0..n-1 in rank order into
 *   the result area; reduced = s
 *   copy in the next step's elements and post ready = s + 1 (overlaps the
 *   slower ranks' folds)
 *   wait reduced[*] >= s; copy the result area out
 *
 * Why no "buffer free" flag is needed: a rank posts arrival at step s+1 only
 * after its fold of step s, and at step s+2 only after its copy-out of step s.
 * A rank writes buffer s % 2 at step s+2 only after it saw every rank arrive at
 * s+1 (slots: their folds of step s are done) and at s+2 (result area: their
 * copy-outs of step s are done).
 *
 * Each element of the result is computed exactly once per step by a fold over
 * rank order (large), or identically by every rank (tiny, small): all ranks get
 * the same bits, and the same layout gives the same bits every run.
 */
#include "config.h"

#include "st_coll.h"
#include "st_config.h"
#include "st_sysmem.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#define ST_SHM_INLINE_BYTES (ST_CACHE_LINE - sizeof(uint64_t))

/* data first: it starts on the cache line, aligned for any type */
typedef struct {
    char             data[ST_SHM_INLINE_BYTES];
    _Atomic uint64_t value;
} st_shm_flag_t;

typedef struct {
    st_shm_flag_t inl[2];
    st_shm_flag_t ready;
    st_shm_flag_t partial;   /* socket mode: my part of my group's partial sum is written */
    st_shm_flag_t reduced;
    st_shm_flag_t gathered;  /* socket mode: my part of the other groups' slices is copied */
} st_shm_ctrl_t;

/*
 * Non-temporal mode: the copy-in and the fold's result (everything a rank writes
 * for its peers to read) go to the segment with streaming stores. When the ranks
 * share a last-level cache, data a rank has just written is cheapest for its
 * peers to read straight from that cache. When they do not (another die or
 * socket, or a VM whose vCPUs move there), reading dirty lines from a remote
 * cache costs several times a DRAM read, and streaming wins (measured on such a
 * VM: 256 KB 2.9x, 16 MB 2.3x faster; 1.5-1.6x slower with a shared cache).
 * The guest cannot always see which case holds, so with STRATA_SHM_NT=auto every
 * communicator keeps, per power-of-two message size, a moving average of the
 * time per byte in each mode, uses the faster, and tries the other one call in
 * ST_SHM_NT_EXPLORE so it follows a machine that changes under it. The mode only changes how bytes
 * reach the segment, never the result.
 */
#define ST_SHM_NT_BUCKETS  16
#define ST_SHM_NT_EXPLORE  16
#define ST_SHM_NT_MIN_LOG2 15     /* buckets start at 32 KB */
#define ST_SHM_NT_BLOCK    16384  /* a fold block kept in L1 before it is streamed out */

typedef struct {
    double   cost[2];   /* seconds per byte, moving average, [0] cached, [1] NT; 0 unknown */
    unsigned calls;
} st_shm_nt_stats_t;

struct st_shm {
    int            rank, size;
    /* socket mode (ngroups >= 2): my group, its members (node ranks, ascending), my
     * index among them; flat mode: one group of every rank */
    int            ngroups, group, gsize, gindex;
    int           *gmembers;
    int           *group_of;    /* the group of each rank (all 0 in flat mode) */
    int           *pkg;         /* package of each rank (-1 unknown): cross-socket count */
    uint64_t       cross_bytes; /* read from areas written on another package */
    void          *base;
    size_t         seg_size;
    uint64_t       token;       /* the segment's name among kept ones (st_shm_reuse) */
    st_shm_ctrl_t *ctrl;
    char          *data;
    size_t         chunk;       /* bytes of one slot */
    size_t         buf_stride;  /* (size + 1) * chunk */
    size_t         small_msg;
    uint64_t       seq;
    int            spin;
    st_shm_nt_stats_t nt[ST_SHM_NT_BUCKETS];  /* copy-in mode choice, by message size */
    char          *scratch;     /* ST_SHM_NT_BLOCK bytes: folds bound for streamed stores */
    const void   **exchanged;   /* size: the slots of the last st_shm_exchange */
    void         (*progress)(void *);  /* called at every poll of a wait (NULL: none) */
    void          *progress_arg;
};

#define ST_SHM_PAGE          4096
#define ST_SHM_CHUNK_MIN     (16 * 1024)
#define ST_SHM_CHUNK_MAX     (512 * 1024)
#define ST_SHM_SPIN_DEFAULT  1000
#define ST_SHM_SMALL_FIT     (13 * 1024)   /* st_shm_small_auto: 1K at 16 ranks */
#define ST_SHM_PROGRESS_MASK 15
#define ST_SHM_MEM_MARGIN    (32.0 * 1024 * 1024)   /* left free by a new segment */

static inline char *st_shm_slot(st_shm_t *shm, unsigned buf, int rank)
{
    return shm->data + buf * shm->buf_stride + (size_t)rank * shm->chunk;
}

/* Socket mode: group @a g's partial sums; both modes: group @a g's results. Areas
 * of a buffer: n slots, then (socket mode) ngroups partials, then the results. */
static inline char *st_shm_partial(st_shm_t *shm, unsigned buf, int g)
{
    return st_shm_slot(shm, buf, shm->size + g);
}

static inline char *st_shm_result_of(st_shm_t *shm, unsigned buf, int g)
{
    return st_shm_slot(shm, buf, shm->size + (shm->ngroups > 1 ? shm->ngroups : 0) + g);
}

static inline char *st_shm_result(st_shm_t *shm, unsigned buf)
{
    return st_shm_result_of(shm, buf, shm->group);
}

/* Did a rank of another package write what rank @a j's areas hold? */
static inline int st_shm_cross(const st_shm_t *shm, int j)
{
    return shm->pkg[j] >= 0 && shm->pkg[shm->rank] >= 0 && shm->pkg[j] != shm->pkg[shm->rank];
}

static inline void st_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield" ::: "memory");
#endif
}

static inline void st_shm_post(st_shm_flag_t *flag, uint64_t s)
{
    atomic_store_explicit(&flag->value, s, memory_order_release);
}

/* Wait until flag @a which of every rank in @a ranks (NULL: all n ranks) reached
 * @a s; spin, then yield the core, and keep MPI progressing for the rest of the
 * process's traffic. */
static void st_shm_wait(st_shm_t *shm, size_t which, uint64_t s, const int *ranks, int n,
                        MPI_Comm progress_comm)
{
    st_shm_flag_t *flag;
    unsigned long polls;
    MPI_Status status;
    int j, found;

    for (j = 0; j < n; j++) {
        flag = (st_shm_flag_t*)((char*)&shm->ctrl[(ranks != NULL) ? ranks[j] : j] + which);
        for (polls = 0; atomic_load_explicit(&flag->value, memory_order_acquire) < s; polls++) {
            if (shm->progress != NULL) {
                shm->progress(shm->progress_arg);
            }
            if (polls < (unsigned long)shm->spin) {
                st_cpu_relax();
                continue;
            }
            sched_yield();
            /* not on the first yield: a progress call costs more than most waits */
            if ((polls & ST_SHM_PROGRESS_MASK) == ST_SHM_PROGRESS_MASK &&
                progress_comm != MPI_COMM_NULL) {
                PMPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, progress_comm, &found, &status);
            }
        }
    }
}

#define ST_SHM_WAIT(_shm, _field, _s, _comm) \
    st_shm_wait((_shm), offsetof(st_shm_ctrl_t, _field), (_s), NULL, (_shm)->size, (_comm))
/* the members of my socket group (every rank in flat mode) */
#define ST_SHM_WAIT_GROUP(_shm, _field, _s, _comm) \
    st_shm_wait((_shm), offsetof(st_shm_ctrl_t, _field), (_s), (_shm)->gmembers, \
                (_shm)->gsize, (_comm))

/* Post my arrival at step @a s (my area of the step is written) and wait for
 * every rank's. */
static void st_shm_arrive(st_shm_t *shm, uint64_t s, MPI_Comm pcomm)
{
    st_shm_post(&shm->ctrl[shm->rank].ready, s);
    ST_SHM_WAIT(shm, ready, s, pcomm);
}

static void st_shm_tiny(st_shm_t *shm, const void *in, void *out, size_t count, size_t esize,
                        const st_reduce_kernel_t *kernel, MPI_Comm pcomm)
{
    const void *src[shm->size];
    uint64_t s   = ++shm->seq;
    unsigned buf = (unsigned)(s & 1);
    st_shm_flag_t *mine = &shm->ctrl[shm->rank].inl[buf];
    int j;

    memcpy(mine->data, in, count * esize);
    st_shm_post(mine, s);
    if (buf == 0) {
        ST_SHM_WAIT(shm, inl[0], s, pcomm);
    } else {
        ST_SHM_WAIT(shm, inl[1], s, pcomm);
    }
    for (j = 0; j < shm->size; j++) {
        src[j] = shm->ctrl[j].inl[buf].data;
        shm->cross_bytes += st_shm_cross(shm, j) ? count * esize : 0;
    }
    st_reduce_fold(kernel, esize, out, src, shm->size, count);
}

static void st_shm_small(st_shm_t *shm, const void *in, void *out, size_t count, size_t esize,
                         const st_reduce_kernel_t *kernel, MPI_Comm pcomm)
{
    const void *src[shm->size];
    uint64_t s   = ++shm->seq;
    unsigned buf = (unsigned)(s & 1);
    int j;

    memcpy(st_shm_slot(shm, buf, shm->rank), in, count * esize);
    st_shm_arrive(shm, s, pcomm);
    for (j = 0; j < shm->size; j++) {
        src[j] = st_shm_slot(shm, buf, j);
        shm->cross_bytes += st_shm_cross(shm, j) ? count * esize : 0;
    }
    st_reduce_fold(kernel, esize, out, src, shm->size, count);
}

const void *const *st_shm_exchange(st_shm_t *shm, const void *mine, size_t len,
                                   MPI_Comm pcomm)
{
    uint64_t s;
    unsigned buf;
    int j;

    if (len > shm->chunk) {
        return NULL;   /* the same on every rank: all callers pass the same size */
    }
    s   = ++shm->seq;   /* (not for a refused call: the steps' buffers alternate) */
    buf = (unsigned)(s & 1);
    if (len > 0) {
        memcpy(st_shm_slot(shm, buf, shm->rank), mine, len);
    }
    st_shm_arrive(shm, s, pcomm);
    for (j = 0; j < shm->size; j++) {
        shm->exchanged[j] = st_shm_slot(shm, buf, j);
    }
    return (const void *const *)shm->exchanged;
}

/* memcpy, or with stores that bypass the caches when @a nt. */
static void st_shm_copy(void *dst, const void *src, size_t len, int nt)
{
#if defined(__SSE2__)
    char *d       = dst;
    const char *p = src;
    size_t head, i;

    if (!nt || len < 1024) {
        memcpy(dst, src, len);
        return;
    }
    head = (size_t)(-(uintptr_t)d & 15);
    memcpy(d, p, head);
    for (i = head; i + 64 <= len; i += 64) {
        __m128i x0 = _mm_loadu_si128((const __m128i*)(p + i));
        __m128i x1 = _mm_loadu_si128((const __m128i*)(p + i + 16));
        __m128i x2 = _mm_loadu_si128((const __m128i*)(p + i + 32));
        __m128i x3 = _mm_loadu_si128((const __m128i*)(p + i + 48));
        _mm_stream_si128((__m128i*)(d + i), x0);
        _mm_stream_si128((__m128i*)(d + i + 16), x1);
        _mm_stream_si128((__m128i*)(d + i + 32), x2);
        _mm_stream_si128((__m128i*)(d + i + 48), x3);
    }
    memcpy(d + i, p + i, len - i);
    _mm_sfence();  /* streamed stores are weakly ordered: drain before the flag */
#else
    (void)nt;
    memcpy(dst, src, len);
#endif
}

/* Sub-range [lo, hi) of member @a index of @a parts in a step of @a n elements:
 * balanced, cache-line aligned. */
static inline void st_shm_range(size_t n, size_t esize, int parts, int index, size_t *lo_p,
                                size_t *hi_p)
{
    size_t align = ST_MAX(ST_CACHE_LINE / esize, 1);
    size_t sub   = ST_ALIGN_UP((n + (size_t)parts - 1) / (size_t)parts, align);

    *lo_p = ST_MIN((size_t)index * sub, n);
    *hi_p = ST_MIN(*lo_p + sub, n);
}

/* My sub-range: I fold it over my group's slots (every rank's in flat mode). */
static inline void st_shm_subrange(const st_shm_t *shm, size_t n, size_t esize, size_t *lo_p,
                                   size_t *hi_p)
{
    st_shm_range(n, esize, shm->gsize, shm->gindex, lo_p, hi_p);
}

/* Publish the @a n elements at @a in for step @a s. My own sub-range stays in my
 * buffer: only I fold it, so copying it in would be wasted traffic. */
static void st_shm_copy_in(st_shm_t *shm, uint64_t s, const char *in, size_t n, size_t esize,
                           int nt)
{
    char *slot = st_shm_slot(shm, (unsigned)(s & 1), shm->rank);
    size_t lo, hi;

    st_shm_subrange(shm, n, esize, &lo, &hi);
    st_shm_copy(slot, in, lo * esize, nt);
    st_shm_copy(slot + hi * esize, in + hi * esize, (n - hi) * esize, nt);
    st_shm_post(&shm->ctrl[shm->rank].ready, s);
}

/*
 * The fold of my sub-range into the result area, and (@a mine not NULL) into my
 * own output too, block by block while the block is in L1: my share of the
 * copy-out then costs no second read of the result area. In non-temporal mode the
 * result, which the other ranks read next, is streamed to memory: each block is
 * folded in a private L1-sized buffer, then copied out with streaming stores. The
 * fold never writes into a source (@a mine, when given, is not my input).
 */
static void st_shm_fold(st_shm_t *shm, const st_reduce_kernel_t *kernel, size_t esize,
                        char *dst, char *mine, const void **src, int nsrc, size_t count,
                        int nt)
{
    const void *blk[nsrc];
    size_t block = ST_SHM_NT_BLOCK / esize;
    size_t off, n;
    char *folded;
    int j;

    if (!nt && mine == NULL) {
        st_reduce_fold(kernel, esize, dst, src, nsrc, count);
        return;
    }
    for (off = 0; off < count; off += n) {
        n = ST_MIN(block, count - off);
        for (j = 0; j < nsrc; j++) {
            blk[j] = (const char*)src[j] + off * esize;
        }
        folded = nt ? shm->scratch : dst + off * esize;
        st_reduce_fold(kernel, esize, folded, blk, nsrc, n);
        if (nt) {
            st_shm_copy(dst + off * esize, folded, n * esize, 1);
        }
        if (mine != NULL) {
            memcpy(mine + off * esize, folded, n * esize);
        }
    }
}

/* Bytes of a step of @a n elements that I copy out and ranks of other packages
 * folded (flat mode: each rank folds its sub-range of the whole step). */
static size_t st_shm_cross_result(const st_shm_t *shm, size_t n, size_t esize)
{
    size_t lo, hi, bytes = 0;
    int j;

    for (j = 0; j < shm->size; j++) {
        if (st_shm_cross(shm, j)) {
            st_shm_range(n, esize, shm->size, j, &lo, &hi);
            bytes += (hi - lo) * esize;
        }
    }
    return bytes;
}

static void st_shm_large(st_shm_t *shm, const char *in, char *out, size_t count, size_t esize,
                         const st_reduce_kernel_t *kernel, int nt, MPI_Comm pcomm)
{
    const void *src[shm->size];
    size_t step_elems = shm->chunk / esize;
    size_t off, n, lo, hi;
    unsigned buf;
    uint64_t s;
    int j;
    /* out of place, my sub-range is folded into my output too (no second read of
     * the result area); in place it is not: on a buffer that comes cold from the
     * program's own work (examples/allreduce_demo) that made the call 1.6-2x slower,
     * though it gains on a buffer reduced again and again (bench/RESULTS.md) */
    char *mine = (in == out) ? NULL : out;

    /* the first step's copy-in; later ones overlap the previous step's folds */
    st_shm_copy_in(shm, shm->seq + 1, in, ST_MIN(step_elems, count), esize, nt);

    for (off = 0; off < count; off += n) {
        n   = ST_MIN(step_elems, count - off);
        s   = ++shm->seq;
        buf = (unsigned)(s & 1);
        st_shm_subrange(shm, n, esize, &lo, &hi);

        ST_SHM_WAIT(shm, ready, s, pcomm);
        if (hi > lo) {
            for (j = 0; j < shm->size; j++) {
                src[j] = (j == shm->rank) ? in + (off + lo) * esize
                                          : st_shm_slot(shm, buf, j) + lo * esize;
                shm->cross_bytes += st_shm_cross(shm, j) ? (hi - lo) * esize : 0;
            }
            st_shm_fold(shm, kernel, esize, st_shm_result(shm, buf) + lo * esize,
                        mine ? mine + (off + lo) * esize : NULL, src, shm->size, hi - lo,
                        nt);
        }
        st_shm_post(&shm->ctrl[shm->rank].reduced, s);

        if (off + n < count) {
            st_shm_copy_in(shm, s + 1, in + (off + n) * esize,
                           ST_MIN(step_elems, count - off - n), esize, nt);
        }

        /* the other ranks' sub-ranges, and mine in place; in place, this overwrites
         * only this step's input, already copied in */
        ST_SHM_WAIT(shm, reduced, s, pcomm);
        if (mine == NULL) {
            memcpy(out + off * esize, st_shm_result(shm, buf), n * esize);
        } else {
            memcpy(out + off * esize, st_shm_result(shm, buf), lo * esize);
            memcpy(out + (off + hi) * esize, st_shm_result(shm, buf) + hi * esize,
                   (n - hi) * esize);
        }
        shm->cross_bytes += st_shm_cross_result(shm, n, esize);
    }
}

/*
 * Socket mode, stage 1 of step @a s (buffer @a buf) of @a n elements: wait for my
 * group's slots, fold my sub-range of the step over them, in group order (mine
 * straight from @a in, the step's elements in the user's buffer), into my group's
 * partial area; partial = s.
 */
static void st_shm_stage1(st_shm_t *shm, const char *in, size_t n, size_t esize,
                          const st_reduce_kernel_t *kernel, unsigned buf, uint64_t s, int nt,
                          MPI_Comm pcomm)
{
    const void *src[shm->gsize];
    size_t lo, hi;
    int j, m;

    st_shm_subrange(shm, n, esize, &lo, &hi);
    ST_SHM_WAIT_GROUP(shm, ready, s, pcomm);
    if (hi > lo) {
        for (j = 0; j < shm->gsize; j++) {
            m      = shm->gmembers[j];
            src[j] = (m == shm->rank) ? in + lo * esize : st_shm_slot(shm, buf, m) + lo * esize;
        }
        st_shm_fold(shm, kernel, esize, st_shm_partial(shm, buf, shm->group) + lo * esize, NULL,
                    src, shm->gsize, hi - lo, nt);
    }
    st_shm_post(&shm->ctrl[shm->rank].partial, s);
}

/*
 * Socket mode: the same pipeline with the step's reduction in stages, so that
 * only partial sums and finished results cross between packages, each byte of
 * them once (2 (P - 1) x the message in all for P groups; flat costs each rank's
 * reads from ranks of other packages, 2 (P - 1) x the ranks per package x the
 * message). The step is cut into P slices; group g owns slice g.
 *
 *   copy-in   my elements into my slot (my stage-1 sub-range stays in my buffer)
 *   stage 1   wait ready[my group]; fold my sub-range of the group's split of the
 *             whole step over my group's slots, in group order, into the group's
 *             partial area; partial = s
 *   stage 2   wait partial[all]; fold my sub-range of slice g over every group's
 *             partial area, in group order, into my group's result area and my
 *             output (my input of the step is consumed: stage 1 read it);
 *             reduced = s
 *   stage 3   wait reduced[all]; copy my sub-range of every other slice t from
 *             group t's result area into mine and into my output; gathered = s
 *   copy-in of the next step, ready = s + 1
 *   copy-out  wait gathered[my group]; copy the other sub-ranges of my group's
 *             result area out
 *
 * Each element is computed once, by the group that owns its slice, and copied:
 * every rank gets the same bits. Reusing a buffer two steps later is safe for
 * the reason given above the flat pipeline: every rank posts partial for step
 * s+2 only after it finished all of step s (stage 2 of s+2 waits for it before
 * writing result areas), posts partial s+1 only after it read step s's partials
 * (stage 1 of s+2 comes after that wait), and posts ready s+1 only after its
 * stage 1 of step s read the slots.
 */
static void st_shm_large_socket(st_shm_t *shm, const char *in, char *out, size_t count,
                                size_t esize, const st_reduce_kernel_t *kernel, int nt,
                                MPI_Comm pcomm)
{
    const void *src[shm->ngroups];
    size_t step_elems = shm->chunk / esize;
    size_t off, n, slo, shi, a, b;
    char *mine;
    unsigned buf;
    uint64_t s;
    int t;

    st_shm_copy_in(shm, shm->seq + 1, in, ST_MIN(step_elems, count), esize, nt);

    for (off = 0; off < count; off += n) {
        n    = ST_MIN(step_elems, count - off);
        s    = ++shm->seq;
        buf  = (unsigned)(s & 1);
        mine = st_shm_result(shm, buf);

        /* stage 1: my group's partial sum of the whole step */
        st_shm_stage1(shm, in + off * esize, n, esize, kernel, buf, s, nt, pcomm);

        /* stage 2: my part of my group's slice, over every group's partial sum */
        st_shm_range(n, esize, shm->ngroups, shm->group, &slo, &shi);
        st_shm_range(shi - slo, esize, shm->gsize, shm->gindex, &a, &b);
        ST_SHM_WAIT(shm, partial, s, pcomm);
        if (b > a) {
            for (t = 0; t < shm->ngroups; t++) {
                src[t] = st_shm_partial(shm, buf, t) + (slo + a) * esize;
            }
            shm->cross_bytes += (uint64_t)(shm->ngroups - 1) * (b - a) * esize;
            st_shm_fold(shm, kernel, esize, mine + (slo + a) * esize,
                        out + (off + slo + a) * esize, src, shm->ngroups, b - a, nt);
        }
        st_shm_post(&shm->ctrl[shm->rank].reduced, s);

        /* stage 3: my part of every other group's slice, copied into my group's area */
        ST_SHM_WAIT(shm, reduced, s, pcomm);
        for (t = 0; t < shm->ngroups; t++) {
            if (t == shm->group) {
                continue;
            }
            st_shm_range(n, esize, shm->ngroups, t, &slo, &shi);
            st_shm_range(shi - slo, esize, shm->gsize, shm->gindex, &a, &b);
            if (b > a) {
                memcpy(mine + (slo + a) * esize,
                       st_shm_result_of(shm, buf, t) + (slo + a) * esize, (b - a) * esize);
                memcpy(out + (off + slo + a) * esize, mine + (slo + a) * esize,
                       (b - a) * esize);
                shm->cross_bytes += (b - a) * esize;
            }
        }
        st_shm_post(&shm->ctrl[shm->rank].gathered, s);

        if (off + n < count) {
            st_shm_copy_in(shm, s + 1, in + (off + n) * esize,
                           ST_MIN(step_elems, count - off - n), esize, nt);
        }

        /* the parts of my group's other ranks (mine are out already) */
        ST_SHM_WAIT_GROUP(shm, gathered, s, pcomm);
        for (t = 0; t < shm->ngroups; t++) {
            st_shm_range(n, esize, shm->ngroups, t, &slo, &shi);
            st_shm_range(shi - slo, esize, shm->gsize, shm->gindex, &a, &b);
            memcpy(out + (off + slo) * esize, mine + slo * esize, a * esize);
            memcpy(out + (off + slo + b) * esize, mine + (slo + b) * esize,
                   (shi - slo - b) * esize);
        }
    }
}

static double st_shm_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* STRATA_SHM_NT=auto: the copy-in mode for a large message of @a bytes. */
static st_shm_nt_stats_t *st_shm_nt_choose(st_shm_t *shm, size_t bytes, int *nt_p)
{
    st_shm_nt_stats_t *st;
    int bucket = 0, best;

    if (st_config.shm_nt != ST_NT_AUTO) {
        *nt_p = (st_config.shm_nt == ST_NT_YES);
        return NULL;
    }
    while (bucket < ST_SHM_NT_BUCKETS - 1 && (bytes >> (ST_SHM_NT_MIN_LOG2 + bucket + 1)) != 0) {
        bucket++;
    }
    st   = &shm->nt[bucket];
    best = (st->cost[1] != 0 && st->cost[1] < st->cost[0]);
    /* the first calls learn both modes; then explore the other one now and then */
    if (st->cost[0] == 0 || st->cost[1] == 0) {
        *nt_p = (st->calls & 1);
    } else {
        *nt_p = (st->calls % ST_SHM_NT_EXPLORE == ST_SHM_NT_EXPLORE - 1) ? !best : best;
    }
    st->calls++;
    return st;
}

static void st_shm_nt_learn(st_shm_nt_stats_t *st, int nt, size_t bytes, double seconds)
{
    double cost = seconds / (double)bytes;

    if (st == NULL || st->calls <= 2) {
        return;  /* the first call of each mode also faults the pages in */
    }
    st->cost[nt] = (st->cost[nt] == 0) ? cost : 0.75 * st->cost[nt] + 0.25 * cost;
}

void st_shm_allreduce(st_shm_t *shm, const void *sbuf, void *rbuf, size_t count,
                      st_type_t type, st_op_t op, MPI_Comm progress_comm)
{
    const st_reduce_kernel_t *kernel = st_reduce_kernel(type, op);
    size_t esize                     = st_type_size(type);
    const void *in                   = (sbuf == MPI_IN_PLACE) ? rbuf : sbuf;
    size_t bytes                     = count * esize;
    st_shm_nt_stats_t *nt_stats;
    double t0;
    int nt;

    if (bytes <= ST_SHM_INLINE_BYTES) {
        st_shm_tiny(shm, in, rbuf, count, esize, kernel, progress_comm);
    } else if (bytes <= shm->small_msg) {
        st_shm_small(shm, in, rbuf, count, esize, kernel, progress_comm);
    } else {
        nt_stats = st_shm_nt_choose(shm, bytes, &nt);
        t0       = (nt_stats != NULL) ? st_shm_now() : 0;
        if (shm->ngroups > 1) {
            st_shm_large_socket(shm, in, rbuf, count, esize, kernel, nt, progress_comm);
        } else {
            st_shm_large(shm, in, rbuf, count, esize, kernel, nt, progress_comm);
        }
        if (nt_stats != NULL) {
            st_shm_nt_learn(nt_stats, nt, bytes, st_shm_now() - t0);
        }
    }
}

/*
 * The node steps of the inter-node pipeline. One protocol serves both: at step
 * s, write my area of buffer s % 2, post ready = s, wait until every rank
 * posted s, read. A rank posts s only after it finished reading step s - 1, so
 * once I saw every rank at s - 1, nobody reads buffer s % 2 for step s - 2 any
 * more: no other flag is needed. The segment's other operations also end
 * knowing that every rank finished their next-to-last step (their last wait is
 * on flags posted after it), and start with a write into the buffer that step
 * used, so all of them mix in any order.
 *
 * Socket mode: each step in stages, so that only the groups' partial sums and the
 * finished parts cross packages, each byte once: (P - 1) x the piece per node for
 * each of the two steps, where a flat step costs each part's lane the part times
 * the ranks of other packages, and each rank the parts of other packages' lanes.
 *   reduce-scatter: write my slot (but for my stage-1 sub-range), ready = s; wait
 *     ready[my group]; fold my sub-range of the step over my group's slots, in
 *     group order, into its partial area; partial = s; wait partial[all]; lane j
 *     folds part j over every group's partial area, in group order.
 *   allgather: lane j writes part j into its group's result area; ready = s; wait
 *     ready[all]; copy my share of each part of another group's lanes from that
 *     group's area into mine; gathered = s; wait gathered[my group]; copy my
 *     group's area out.
 * Buffer s % 2 again at step s + 2: every rank posts its first flag of step s + 1
 * (ready) only after all of its reads of step s, and I waited for every rank's
 * partial (reduce-scatter) or ready (allgather) of step s + 1. The last step ends
 * the same way (every rank's first flag of it seen), so these mix with the
 * segment's other operations as above.
 */
static size_t st_shm_reduce_scatter_socket(st_shm_t *shm, const char *in, size_t count,
                                           size_t esize, const st_reduce_kernel_t *kernel,
                                           int nparts, size_t step_elems, char *out,
                                           MPI_Comm pcomm)
{
    const void *src[shm->ngroups];
    size_t off, n, plo, phi, got = 0;
    unsigned buf;
    uint64_t s;
    int t;

    for (off = 0; off < count; off += n) {
        n   = ST_MIN(step_elems, count - off);
        s   = ++shm->seq;
        buf = (unsigned)(s & 1);
        st_shm_copy_in(shm, s, in + off * esize, n, esize, 0);
        st_shm_stage1(shm, in + off * esize, n, esize, kernel, buf, s, 0, pcomm);

        st_shm_range(n, esize, nparts, shm->rank, &plo, &phi);  /* empty for ranks >= nparts */
        ST_SHM_WAIT(shm, partial, s, pcomm);
        if (phi > plo) {
            for (t = 0; t < shm->ngroups; t++) {
                src[t] = st_shm_partial(shm, buf, t) + plo * esize;
            }
            shm->cross_bytes += (uint64_t)(shm->ngroups - 1) * (phi - plo) * esize;
            st_reduce_fold(kernel, esize, out + got * esize, src, shm->ngroups, phi - plo);
            got += phi - plo;
        }
    }
    return got;
}

static void st_shm_allgather_parts_socket(st_shm_t *shm, const char *parts, size_t count,
                                          size_t esize, int nparts, size_t step_elems,
                                          char *out, MPI_Comm pcomm)
{
    size_t off, n, lo, hi, a, b, used = 0;
    char *mine;
    unsigned buf;
    uint64_t s;
    int j, g;

    for (off = 0; off < count; off += n) {
        n    = ST_MIN(step_elems, count - off);
        s    = ++shm->seq;
        buf  = (unsigned)(s & 1);
        mine = st_shm_result(shm, buf);
        st_shm_range(n, esize, nparts, shm->rank, &lo, &hi);
        memcpy(mine + lo * esize, parts + used * esize, (hi - lo) * esize);
        used += hi - lo;
        st_shm_post(&shm->ctrl[shm->rank].ready, s);

        ST_SHM_WAIT(shm, ready, s, pcomm);
        for (j = 0; j < nparts && j < shm->size; j++) {
            g = shm->group_of[j];
            if (g == shm->group) {
                continue;
            }
            st_shm_range(n, esize, nparts, j, &lo, &hi);
            st_shm_range(hi - lo, esize, shm->gsize, shm->gindex, &a, &b);
            if (b > a) {
                memcpy(mine + (lo + a) * esize, st_shm_result_of(shm, buf, g) + (lo + a) * esize,
                       (b - a) * esize);
                shm->cross_bytes += (b - a) * esize;
            }
        }
        st_shm_post(&shm->ctrl[shm->rank].gathered, s);

        ST_SHM_WAIT_GROUP(shm, gathered, s, pcomm);
        memcpy(out + off * esize, mine, n * esize);
    }
}

size_t st_shm_reduce_scatter(st_shm_t *shm, const void *in, size_t count, st_type_t type,
                             st_op_t op, int nparts, size_t step, void *out,
                             MPI_Comm progress_comm)
{
    const st_reduce_kernel_t *kernel = st_reduce_kernel(type, op);
    size_t esize = st_type_size(type), step_elems = step / esize;
    const char *src_in = in;
    const void *src[shm->size];
    char *slot, *dst = out;
    size_t off, n, lo, hi, got = 0;
    uint64_t s;
    int j;

    if (shm->ngroups > 1) {
        return st_shm_reduce_scatter_socket(shm, in, count, esize, kernel, nparts, step_elems,
                                            out, progress_comm);
    }
    for (off = 0; off < count; off += n) {
        n    = ST_MIN(step_elems, count - off);
        s    = ++shm->seq;
        slot = st_shm_slot(shm, (unsigned)(s & 1), shm->rank);
        st_shm_range(n, esize, nparts, shm->rank, &lo, &hi);   /* empty for ranks >= nparts */
        memcpy(slot, src_in + off * esize, lo * esize);
        memcpy(slot + hi * esize, src_in + (off + hi) * esize, (n - hi) * esize);
        st_shm_arrive(shm, s, progress_comm);
        if (hi > lo) {
            for (j = 0; j < shm->size; j++) {
                src[j] = (j == shm->rank) ? src_in + (off + lo) * esize
                                          : st_shm_slot(shm, (unsigned)(s & 1), j) + lo * esize;
                shm->cross_bytes += st_shm_cross(shm, j) ? (hi - lo) * esize : 0;
            }
            st_reduce_fold(kernel, esize, dst + got * esize, src, shm->size, hi - lo);
            got += hi - lo;
        }
    }
    return got;
}

size_t st_shm_part_count(size_t count, size_t esize, int nparts, int index, size_t step)
{
    size_t step_elems = step / esize, lo, hi, whole = 0;

    if (count >= step_elems) {   /* every whole step gives the same part */
        st_shm_range(step_elems, esize, nparts, index, &lo, &hi);
        whole = (count / step_elems) * (hi - lo);
    }
    st_shm_range(count % step_elems, esize, nparts, index, &lo, &hi);
    return whole + (hi - lo);
}

void st_shm_allgather_parts(st_shm_t *shm, const void *parts, size_t count, size_t esize,
                            int nparts, size_t step, void *out, MPI_Comm progress_comm)
{
    size_t step_elems = step / esize, off, n, lo, hi, used = 0;
    const char *mine = parts;
    char *area;
    uint64_t s;
    int j;

    if (shm->ngroups > 1) {
        st_shm_allgather_parts_socket(shm, parts, count, esize, nparts, step_elems, out,
                                      progress_comm);
        return;
    }
    for (off = 0; off < count; off += n) {
        n    = ST_MIN(step_elems, count - off);
        s    = ++shm->seq;
        area = st_shm_result_of(shm, (unsigned)(s & 1), 0);
        st_shm_range(n, esize, nparts, shm->rank, &lo, &hi);
        memcpy(area + lo * esize, mine + used * esize, (hi - lo) * esize);
        memcpy((char*)out + (off + lo) * esize, mine + used * esize, (hi - lo) * esize);
        used += hi - lo;
        st_shm_arrive(shm, s, progress_comm);
        /* the other lanes' parts (mine is out already) */
        memcpy((char*)out + off * esize, area, lo * esize);
        memcpy((char*)out + (off + hi) * esize, area + hi * esize, (n - hi) * esize);
        for (j = 0; j < nparts && j < shm->size; j++) {
            if (st_shm_cross(shm, j)) {
                st_shm_range(n, esize, nparts, j, &lo, &hi);
                shm->cross_bytes += (hi - lo) * esize;
            }
        }
    }
}

void st_shm_bcast(st_shm_t *shm, void *buf, size_t bytes, int root, MPI_Comm progress_comm)
{
    size_t off, n;
    char *slot;
    uint64_t s;

    for (off = 0; off < bytes; off += n) {
        n    = ST_MIN(shm->chunk, bytes - off);
        s    = ++shm->seq;
        slot = st_shm_slot(shm, (unsigned)(s & 1), root);
        if (shm->rank == root) {
            memcpy(slot, (const char*)buf + off, n);
        }
        st_shm_arrive(shm, s, progress_comm);
        if (shm->rank != root) {
            memcpy((char*)buf + off, slot, n);
            shm->cross_bytes += st_shm_cross(shm, root) ? n : 0;
        }
    }
}

void st_shm_set_progress(st_shm_t *shm, void (*fn)(void *), void *arg)
{
    shm->progress     = fn;
    shm->progress_arg = arg;
}

/* ---- segment setup ---- */

typedef struct {
    int      ok;
    int      err;        /* rank 0's errno when not ok */
    int      pid;
    int      fd;
    uint64_t dev, ino;   /* identity of rank 0's file, checked by the others */
    char     name[64];
} st_shm_info_t;

/* Is @a fd the file rank 0 described (not whatever /proc/<pid>/fd/<fd> names in
 * another PID namespace)? */
static int st_shm_same_file(int fd, const st_shm_info_t *info)
{
    struct stat st;

    return fstat(fd, &st) == 0 && (uint64_t)st.st_dev == info->dev &&
           (uint64_t)st.st_ino == info->ino;
}

/*
 * Size rank 0's new file and reserve its pages. tmpfs (/dev/shm, and memfd's) gives
 * a page on first touch, and one it cannot give (/dev/shm full, a memory limit) is
 * a SIGBUS in the middle of an allreduce; reserved here, it is an error now, and
 * the communicator falls back. Inside a memory cgroup the reservation does not fail
 * but calls the cgroup's OOM killer (a rank killed with 137, the job ended): a
 * segment that would leave less than ST_SHM_MEM_MARGIN of what the host or the
 * cgroup has free is not made (ENOMEM). Returns 0 or an errno.
 */
static int st_shm_reserve(int fd, size_t size)
{
    int rc;

    if ((double)size + ST_SHM_MEM_MARGIN > st_sys_mem_available()) {
        return ENOMEM;
    }
    if (ftruncate(fd, (off_t)size) != 0) {
        return errno;
    }
    do {
        rc = posix_fallocate(fd, 0, (off_t)size);
    } while (rc == EINTR);
    return rc;
}

static void *st_shm_map_fd(int fd, size_t size)
{
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

    return (p == MAP_FAILED) ? NULL : p;
}

/* Method 1: an anonymous memfd, opened by the others through /proc: it has no
 * name anywhere, so nothing can outlive the job. */
static int st_shm_attach_memfd(MPI_Comm comm, int rank, size_t size, void **base_p,
                               int *err_p)
{
    st_shm_info_t info;
    char path[64];
    int fd = -1, ok;
    void *base = NULL;

    memset(&info, 0, sizeof(info));
#if HAVE_MEMFD_CREATE
    if (rank == 0) {
        struct stat st;

        fd       = memfd_create("strata-shm", MFD_CLOEXEC);
        info.err = (fd < 0) ? errno : st_shm_reserve(fd, size);
        if (info.err == 0 && fstat(fd, &st) == 0) {
            info.ok  = 1;
            info.pid = (int)getpid();
            info.fd  = fd;
            info.dev = (uint64_t)st.st_dev;
            info.ino = (uint64_t)st.st_ino;
        }
    }
#endif
    st_mpi_bcast(&info, (int)sizeof(info), 0, comm);
    *err_p = info.err;
    if (info.ok && rank != 0) {
        snprintf(path, sizeof(path), "/proc/%d/fd/%d", info.pid, info.fd);
        fd = open(path, O_RDWR | O_CLOEXEC);
        if (fd < 0) {
            st_debug("open(%s) failed: %s", path, strerror(errno));
        } else if (!st_shm_same_file(fd, &info)) {
            st_debug("%s is not rank 0's segment (another PID namespace?)", path);
            close(fd);
            fd = -1;
        }
    }
    if (info.ok && fd >= 0) {
        base = st_shm_map_fd(fd, size);
    }
    ok = (base != NULL);
    /* rank 0 keeps its descriptor open until every rank has attached */
    st_mpi_allreduce(&ok, 1, MPI_INT, MPI_MIN, comm);
    if (fd >= 0) {
        close(fd);
    }
    if (!ok) {
        if (base != NULL) {
            munmap(base, size);
        }
        return 0;
    }
    *base_p = base;
    return 1;
}

/* Method 2: a named POSIX segment, unlinked as soon as every rank has attached. */
static int st_shm_attach_posix(MPI_Comm comm, int rank, size_t size, void **base_p,
                               int *err_p)
{
    static _Atomic unsigned counter;
    st_shm_info_t info;
    struct timespec now;
    int fd = -1, ok, created = 0;
    void *base = NULL;

    memset(&info, 0, sizeof(info));
    if (rank == 0) {
        /* pid alone repeats across containers sharing /dev/shm: add the time */
        clock_gettime(CLOCK_REALTIME, &now);
        snprintf(info.name, sizeof(info.name), "/strata-%d-%u-%lx", (int)getpid(),
                 atomic_fetch_add(&counter, 1),
                 (unsigned long)(now.tv_sec * 1000000000L + now.tv_nsec));
        fd       = shm_open(info.name, O_CREAT | O_EXCL | O_RDWR, 0600);
        created  = (fd >= 0);
        info.err = (fd < 0) ? errno : st_shm_reserve(fd, size);
        info.ok  = (info.err == 0);
    }
    st_mpi_bcast(&info, (int)sizeof(info), 0, comm);
    *err_p = info.err;
    if (info.ok && rank != 0) {
        fd = shm_open(info.name, O_RDWR, 0600);
    }
    if (info.ok && fd >= 0) {
        base = st_shm_map_fd(fd, size);
    }
    if (fd >= 0) {
        close(fd);
    }
    ok = (base != NULL);
    st_mpi_allreduce(&ok, 1, MPI_INT, MPI_MIN, comm);
    if (created) {
        shm_unlink(info.name);  /* only a name this process made */
    }
    if (!ok) {
        if (base != NULL) {
            munmap(base, size);
        }
        return 0;
    }
    *base_p = base;
    return 1;
}

/*
 * Segments kept for the next communicator over the same ranks. A segment costs its
 * making (rank 0 reserves every page: 0.85 ms of the 1.4 ms a plan of 2 ranks took to
 * set up) and its unmapping (0.2 ms): a program that makes communicators as it goes
 * (dup, allreduce, free) paid that each time. A destroyed plan's segment stays mapped
 * here, up to ST_SHM_KEEP of them (the oldest unmapped beyond), under a token rank 0
 * drew when it made it. A new plan's rank 0 offers one of its size and of as many
 * ranks; it is taken only if every rank still holds it, which each does only after
 * its own plan over it was destroyed: so no rank can still be reading it (another
 * thread of a rank may be finishing its last allreduce over it, waiting on its flags,
 * while this one sets up another communicator), and the ranks are the ones that
 * shared it (as many, each with it: fewer, and two communicators of some of them each,
 * their segments' sizes equal by the rounding of the chunk, took it at once). Only
 * then does rank 0 zero the flags (their step numbers start again from 0), before one
 * more agreement.
 */
#define ST_SHM_KEEP 2

typedef struct {
    void    *base;
    size_t   size;
    uint64_t token;
    int      nranks;   /* the ranks that shared it */
} st_shm_kept_t;

static st_shm_kept_t   st_shm_kept[ST_SHM_KEEP];   /* [0] the newest; base NULL: none */
static pthread_mutex_t st_shm_kept_lock = PTHREAD_MUTEX_INITIALIZER;

/* Take the kept segment of @a size (0: any), @a nranks (0: any) and @a token (0: any;
 * else the newest that fits) out of the cache into @a k. @return 1 when there was one. */
static int st_shm_kept_take(size_t size, int nranks, uint64_t token, st_shm_kept_t *k)
{
    int i, found = 0;

    pthread_mutex_lock(&st_shm_kept_lock);
    for (i = 0; i < ST_SHM_KEEP && !found; i++) {
        if (st_shm_kept[i].base != NULL && (size == 0 || st_shm_kept[i].size == size) &&
            (nranks == 0 || st_shm_kept[i].nranks == nranks) &&
            (token == 0 || st_shm_kept[i].token == token)) {
            *k    = st_shm_kept[i];
            found = 1;
            memmove(&st_shm_kept[i], &st_shm_kept[i + 1],
                    (size_t)(ST_SHM_KEEP - 1 - i) * sizeof(*st_shm_kept));
            st_shm_kept[ST_SHM_KEEP - 1].base = NULL;
        }
    }
    pthread_mutex_unlock(&st_shm_kept_lock);
    return found;
}

/* Keep @a base (@a size bytes, @a token, shared by @a nranks) as the newest; the oldest
 * beyond is unmapped. */
static void st_shm_kept_put(void *base, size_t size, uint64_t token, int nranks)
{
    st_shm_kept_t out;

    pthread_mutex_lock(&st_shm_kept_lock);
    out = st_shm_kept[ST_SHM_KEEP - 1];
    memmove(&st_shm_kept[1], &st_shm_kept[0], (ST_SHM_KEEP - 1) * sizeof(*st_shm_kept));
    st_shm_kept[0] = (st_shm_kept_t){.base = base, .size = size, .token = token,
                                     .nranks = nranks};
    pthread_mutex_unlock(&st_shm_kept_lock);
    if (out.base != NULL) {
        munmap(out.base, out.size);
    }
}

void st_shm_release_kept(void)
{
    st_shm_kept_t k;

    while (st_shm_kept_take(0, 0, 0, &k)) {
        munmap(k.base, k.size);
    }
}

/* A token for a new segment: this process, a count, the time (as the POSIX names) */
static uint64_t st_shm_new_token(void)
{
    static _Atomic unsigned counter;
    struct timespec now;
    uint64_t t;

    clock_gettime(CLOCK_REALTIME, &now);
    t = ((uint64_t)getpid() << 32) ^ ((uint64_t)atomic_fetch_add(&counter, 1) << 16) ^
        (uint64_t)now.tv_sec * 1000000000ULL ^ (uint64_t)now.tv_nsec;
    return t | 1;   /* (never 0: 0 means "none") */
}

/*
 * Collective over @a comm (@a nranks ranks): a kept segment of @a size, shared by as
 * many, that every rank holds, into *base_p and *token_p (return 1); else (return 0)
 * *token_p is the token rank 0 drew for the segment to be made.
 */
static int st_shm_reuse(MPI_Comm comm, int rank, int nranks, size_t size, size_t ctrl_bytes,
                        void **base_p, uint64_t *token_p)
{
    uint64_t offer[2] = {0, 0};   /* a kept segment's token (0: none), a new token */
    st_shm_kept_t k = {NULL, 0, 0, 0};
    int ok;

    if (rank == 0) {
        if (st_shm_kept_take(size, nranks, 0, &k)) {
            offer[0] = k.token;
        }
        offer[1] = st_shm_new_token();
    }
    st_mpi_bcast(offer, (int)sizeof(offer), 0, comm);
    *token_p = offer[1];
    if (offer[0] == 0) {
        return 0;
    }
    if (rank != 0) {
        st_shm_kept_take(size, nranks, offer[0], &k);
    }
    ok = (k.base != NULL);
    st_mpi_allreduce(&ok, 1, MPI_INT, MPI_MIN, comm);
    if (!ok) {
        if (k.base != NULL) {
            munmap(k.base, k.size);   /* (another rank lacks it: nobody may use it) */
        }
        st_debug("a kept segment of %zu bytes is not on every rank: a new one", size);
        return 0;
    }
    if (rank == 0) {
        memset(k.base, 0, ctrl_bytes);   /* (every rank's plan over it is gone) */
    }
    st_mpi_allreduce(&ok, 1, MPI_INT, MPI_MIN, comm);   /* (the flags zeroed for all) */
    *base_p  = k.base;
    *token_p = k.token;
    return 1;
}

/* Bytes of one area; a buffer holds @a nareas areas, the segment two buffers. */
static size_t st_shm_chunk_size(int nareas)
{
    size_t chunk;

    if (st_config.shm_chunk != ST_CONFIG_SIZE_AUTO) {
        return ST_ALIGN_UP(st_config.shm_chunk, ST_SHM_PAGE);
    }
    chunk = st_config.shm_size / (2 * (size_t)nareas);
    chunk = chunk / ST_SHM_PAGE * ST_SHM_PAGE;
    return ST_MAX(ST_MIN(chunk, (size_t)ST_SHM_CHUNK_MAX), (size_t)ST_SHM_CHUNK_MIN);
}

static _Atomic int st_machine_ranks;

void st_set_machine_ranks(int n)
{
    st_machine_ranks = n;
}

int st_oversubscribed(int nranks)
{
    return ST_MAX(nranks, (int)st_machine_ranks) > (int)sysconf(_SC_NPROCESSORS_ONLN);
}

/*
 * STRATA_SMALL_MSG=auto: the latency path (every rank reads all p inputs) against
 * the bandwidth path (each reads about 2n, behind two more synchronizations). On
 * 16 ranks with 16 cores the latency path cost 3.7 us per KB and the bandwidth path
 * 0.66 us per KB plus about 0.7 us: it paid only to about 1 KB (bench/RESULTS.md,
 * "16 ranks on 16 cores"); at 2 ranks 16K was best. The reads' difference grows
 * with p - 3 (p inputs against about 3 times the message in both directions),
 * hence ST_SHM_SMALL_FIT / (p - 3), fitted to the 16-rank point, rounded down to a
 * power of two (a cache line at least). Oversubscribed ranks keep 16K: there a
 * synchronization may cost a time slice (4 ranks on 2 cores: 16K beat 4K at 8-16 KB
 * by 10-35 %).
 */
size_t st_shm_small_auto(int nranks, int oversubscribed)
{
    size_t s;

    if (oversubscribed || nranks <= 3) {
        return ST_SMALL_MSG_DEFAULT;
    }
    s = ST_SHM_SMALL_FIT / (size_t)(nranks - 3);
    s = (size_t)1 << (63 - __builtin_clzll((unsigned long long)s | 1));
    return ST_MIN(ST_MAX(s, (size_t)ST_CACHE_LINE), (size_t)ST_SMALL_MSG_DEFAULT);
}

static int st_shm_spin_count(int nranks)
{
    if (st_config.spin_count >= 0) {
        return st_config.spin_count;
    }
    /* oversubscribed: a spinning rank only delays the one it waits for (on the
       namespace cluster, 4 hosts x 2 ranks on 2 cores: 8 B took 170-210 us spinning
       1000 polls, 60-80 us yielding at once; bench/RESULTS.md) */
    return st_oversubscribed(nranks) ? 0 : ST_SHM_SPIN_DEFAULT;
}

st_status_t st_shm_create(MPI_Comm comm, const int *group, const int *pkg, st_shm_t **shm_p)
{
    size_t chunk, ctrl_bytes, seg_size;
    void *base = NULL;
    uint64_t token;
    st_shm_t *shm;
    int rank, size, ngroups = 1, nareas, j, err, err_memfd = 0, err_posix = 0, reused;
    static _Atomic int st_shm_warned;  /* plans may be built by several threads */

    PMPI_Comm_rank(comm, &rank);
    PMPI_Comm_size(comm, &size);
    for (j = 0; group != NULL && j < size; j++) {
        ngroups = ST_MAX(ngroups, group[j] + 1);
    }
    nareas     = size + ((ngroups > 1) ? 2 * ngroups : 1);
    chunk      = st_shm_chunk_size(nareas);
    ctrl_bytes = ST_ALIGN_UP((size_t)size * sizeof(st_shm_ctrl_t), ST_SHM_PAGE);
    seg_size   = ctrl_bytes + 2 * (size_t)nareas * chunk;

    reused = st_shm_reuse(comm, rank, size, seg_size, ctrl_bytes, &base, &token);
    if (!reused &&
        !(st_config.shm_method != ST_SHM_METHOD_POSIX &&
          st_shm_attach_memfd(comm, rank, seg_size, &base, &err_memfd)) &&
        !(st_config.shm_method != ST_SHM_METHOD_MEMFD &&
          st_shm_attach_posix(comm, rank, seg_size, &base, &err_posix))) {
        /* out of room (a full /dev/shm, a memory limit) is the user's to know;
         * once per process, by the node's first rank */
        err = err_posix ? err_posix : err_memfd;
        if (err != 0 && rank == 0 && !atomic_exchange(&st_shm_warned, 1)) {
            st_warn("no shared-memory segment of %zu bytes (%s): Open MPI's allreduce "
                    "serves this communicator", seg_size, strerror(err));
        }
        st_debug("no shared-memory segment of %zu bytes", seg_size);
        return ST_ERR_NO_RESOURCE;
    }
    shm = calloc(1, sizeof(*shm));
    if (shm == NULL || posix_memalign((void**)&shm->scratch, ST_CACHE_LINE, ST_SHM_NT_BLOCK) ||
        (shm->gmembers = malloc((size_t)size * sizeof(int))) == NULL ||
        (shm->group_of = malloc((size_t)size * sizeof(int))) == NULL ||
        (shm->pkg = malloc((size_t)size * sizeof(int))) == NULL ||
        (shm->exchanged = calloc((size_t)size, sizeof(*shm->exchanged))) == NULL) {
        if (shm != NULL) {
            free(shm->gmembers);
            free(shm->group_of);
            free(shm->scratch);
            free(shm->pkg);
        }
        free(shm);
        munmap(base, seg_size);
        return ST_ERR_NO_MEMORY;
    }
    shm->ngroups = ngroups;
    shm->group   = (ngroups > 1) ? group[rank] : 0;
    for (j = 0; j < size; j++) {
        shm->pkg[j]      = (pkg != NULL) ? pkg[j] : -1;
        shm->group_of[j] = (ngroups > 1) ? group[j] : 0;
        if (ngroups == 1 || group[j] == shm->group) {
            if (j == rank) {
                shm->gindex = shm->gsize;
            }
            shm->gmembers[shm->gsize++] = j;
        }
    }
    shm->rank       = rank;
    shm->size       = size;
    shm->base       = base;
    shm->seg_size   = seg_size;
    shm->token      = token;
    shm->ctrl       = (st_shm_ctrl_t*)base;
    shm->data       = (char*)base + ctrl_bytes;
    shm->chunk      = chunk;
    shm->buf_stride = (size_t)nareas * chunk;
    shm->small_msg  = ST_MIN((st_config.small_msg == ST_CONFIG_SIZE_AUTO)
                                 ? st_shm_small_auto(size, st_oversubscribed(size))
                                 : st_config.small_msg,
                             chunk);
    shm->spin       = st_shm_spin_count(size);
    st_debug("segment %zu bytes%s, %d ranks, %d socket groups, chunk %zu, small <= %zu, "
             "spin %d", seg_size, reused ? " (kept from a communicator freed)" : "", size,
             ngroups, chunk, shm->small_msg, shm->spin);
    *shm_p = shm;
    return ST_OK;
}

void st_shm_destroy(st_shm_t *shm)
{
    if (shm == NULL) {
        return;
    }
    st_shm_kept_put(shm->base, shm->seg_size, shm->token, shm->size);
    free(shm->scratch);
    free(shm->gmembers);
    free(shm->group_of);
    free(shm->pkg);
    free(shm->exchanged);
    free(shm);
}

size_t st_shm_chunk(const st_shm_t *shm)
{
    return shm->chunk;
}

size_t st_shm_small_msg(const st_shm_t *shm)
{
    return shm->small_msg;
}

void st_shm_set_small_msg(st_shm_t *shm, size_t bytes)
{
    shm->small_msg = ST_MIN(bytes, shm->chunk);
}

uint64_t st_shm_cross_bytes(const st_shm_t *shm)
{
    return shm->cross_bytes;
}
