/*
 * MPI_Allreduce on device buffers inside a node, GPU to GPU through CUDA IPC.
 *
 * Every rank of the node's segment takes part in each call large enough
 * (STRATA_CUDA_IPC_MIN), host buffers or not, so that all decide alike:
 *
 *   A. exchange descriptors through the segment: is libcuda loaded here, are my
 *      buffers device memory that IPC can share (cudaMalloc'd, one context), their
 *      IPC handles, offsets and buffer ids. If any rank's are not, every rank
 *      returns "not taken" and the caller stages through host memory as before.
 *   B. map the peers' buffers (cached, see below) and agree that every rank could:
 *      if one could not, every rank returns "not taken".
 *   C. reduce-scatter: rank r folds slice r of every rank's send buffer (its own
 *      and the mapped ones, in rank order) into slice r of its own receive buffer,
 *      with Strata's GPU kernel on its own stream; waits for it; then a barrier.
 *   D. allgather: rank r copies slice j of rank j's receive buffer into its own,
 *      for every j; waits; a barrier, after which no rank reads r's buffers.
 *
 * When every rank's buffers are on one GPU (their device UUIDs agree: several
 * ranks sharing it), C and D are one step instead: rank 0 alone maps the others'
 * buffers and folds every rank's send buffer into every rank's receive buffer
 * with one kernel, waits, then a barrier. Splitting the work among the ranks
 * would add no GPU, only bytes (each input read and each output written once: 2
 * x size x count elements, against 3 x size - 1) and, where the ranks' processes
 * share the GPU without MPS, a time slice for each rank that waits on it
 * (measured on an H200: 0.4-1.1 ms a call whatever its size).
 *
 * Each element is reduced once, in rank order, by one GPU: every rank holds the
 * same bits, the host engine's (the kernels are its definitions). In place works
 * (the sources are the receive buffers; a rank writes only its own slice in C,
 * which no other rank reads, and the other slices in D, after every rank's C).
 * Like every CUDA-aware MPI, a buffer must be ready when MPI_Allreduce is called
 * (the stream that wrote it synchronized).
 *
 * Mappings are cached per peer by the driver's buffer id, which the process never
 * reuses (addresses are reused after cudaFree, and opening one handle twice in a
 * process fails): a peer allocation not seen before is opened once; a cached one
 * whose address range a new allocation of that peer overlaps was freed and is
 * closed; beyond ST_IPC_CACHE entries the least recently used is closed. The
 * handles of this rank's own allocations are cached the same way. A cached mapping
 * keeps its memory alive after the owner frees it (CUDA calls freeing an exported
 * buffer that a peer still maps undefined; the driver keeps it), so the owners say
 * which they freed: when a call brings a new allocation of mine, I ask the driver
 * whether the others whose handles I gave are still there (cuMemGetAddressRange:
 * no pointer query, and only then), and the ids of those gone go in my descriptor
 * of that call; every peer closes its mappings of them in step A. So where a
 * program frees its buffers and allocates new ones elsewhere (other sizes: no
 * address overlaps), a freed buffer stays mapped only until its owner's next call
 * with a new allocation, not until 64 others pushed it out. With
 * STRATA_CUDA_IPC_CACHE=n every rank unmaps its peers' buffers before the call's
 * last barrier, so none is mapped once any rank returns.
 */
#include "config.h"

#include "st_cuda_ipc.h"
#include "st_config.h"
#include "st_cuda_kernels.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ST_IPC_CACHE 64   /* mappings of peers' allocations, and own handles */
#define ST_IPC_GONE  16   /* freed allocations of mine said per call (more: the next) */

typedef struct {
    int peer;                 /* node rank; -1 free */
    unsigned long long id;    /* the owner's buffer id */
    uintptr_t base;           /* the allocation's address in its owner */
    size_t size;
    void *mapped;             /* here (peers) */
    void *ctx;                /* where it was opened */
    unsigned char handle[ST_CUDA_IPC_HANDLE_SIZE];   /* own allocations */
    uint64_t used;            /* the call that used it last */
} st_ipc_entry_t;

struct st_cuda_ipc {
    int rank, size;
    int gpu_node;             /* every rank had libcuda loaded at the last look */
    uint64_t calls;           /* calls that reached here (the same count on every rank) */
    st_ipc_entry_t peers[ST_IPC_CACHE];
    st_ipc_entry_t own[ST_IPC_CACHE];
    uint64_t gone[ST_IPC_CACHE];   /* ids of my freed allocations, not said yet */
    int ngone;
};

/* What each rank posts in step A (the same layout on every rank of a node). */
typedef struct {
    int32_t cuda;             /* libcuda loaded, with what the IPC path needs */
    int32_t ok;               /* my buffers can take the IPC path */
    int32_t in_place;
    int32_t ngone;            /* gone[0 .. ngone): ids of my allocations freed */
    uint64_t gone[ST_IPC_GONE];
    uint64_t sid, rid;        /* buffer ids of the send (or receive, in place) and receive */
    uint64_t sbase, rbase;    /* allocations, in my address space */
    uint64_t ssize, rsize;
    uint64_t soff, roff;      /* offsets of the user's pointers in them */
    unsigned char sh[ST_CUDA_IPC_HANDLE_SIZE], rh[ST_CUDA_IPC_HANDLE_SIZE];
    int32_t gpu_known;        /* gpu is my buffers' GPU's UUID */
    unsigned char gpu[16];
} st_ipc_desc_t;

st_cuda_ipc_t *st_cuda_ipc_create(int rank, int size)
{
    st_cuda_ipc_t *ipc = calloc(1, sizeof(*ipc));
    int k;

    if (ipc == NULL) {
        return NULL;
    }
    ipc->rank = rank;
    ipc->size = size;
    for (k = 0; k < ST_IPC_CACHE; k++) {
        ipc->peers[k].peer = -1;
        ipc->own[k].peer   = -1;
    }
    return ipc;
}

static void st_ipc_close_entry(st_ipc_entry_t *e)
{
    if (e->mapped != NULL && st_cuda_ctx_enter(e->ctx) == 0) {
        st_cuda_ipc_close(e->mapped);
        st_cuda_ctx_leave();
    }
    e->mapped = NULL;
    e->peer   = -1;
}

/* Every mapping of a peer's buffer closed. */
static void st_ipc_close_peers(st_cuda_ipc_t *ipc)
{
    int k;

    for (k = 0; k < ST_IPC_CACHE; k++) {
        if (ipc->peers[k].peer >= 0) {
            st_ipc_close_entry(&ipc->peers[k]);
        }
    }
}

void st_cuda_ipc_destroy(st_cuda_ipc_t *ipc)
{
    if (ipc == NULL) {
        return;
    }
    st_ipc_close_peers(ipc);
    free(ipc);
}

/* A free entry of @a tab, or the least recently used one (closed when mapped). */
static st_ipc_entry_t *st_ipc_victim(st_ipc_entry_t *tab)
{
    st_ipc_entry_t *v = &tab[0];
    int k;

    for (k = 0; k < ST_IPC_CACHE; k++) {
        if (tab[k].peer < 0) {
            return &tab[k];
        }
        if (tab[k].used < v->used) {
            v = &tab[k];
        }
    }
    st_ipc_close_entry(v);
    return v;
}

/* My cached allocation @a e leaves the cache: the peers are told at the next call
 * to close their mappings of it (so a freed allocation's memory is not kept alive
 * by them; a live one is mapped again if it comes back). */
static void st_ipc_own_drop(st_cuda_ipc_t *ipc, st_ipc_entry_t *e)
{
    if (ipc->ngone < ST_IPC_CACHE) {
        ipc->gone[ipc->ngone++] = e->id;
    }
    e->peer = -1;
}

/* A new allocation of mine came: those of my cached handles not used in this call
 * that the driver no longer has are forgotten, their ids kept to be said. */
static void st_ipc_own_sweep(st_cuda_ipc_t *ipc)
{
    st_ipc_entry_t *e;
    int k;

    for (k = 0; k < ST_IPC_CACHE && ipc->ngone < ST_IPC_CACHE; k++) {
        e = &ipc->own[k];
        if (e->peer >= 0 && e->used != ipc->calls && st_cuda_alloc_gone(e->base, e->size)) {
            st_debug("my allocation %#llx (id %llu) was freed: the peers close it",
                     (unsigned long long)e->base, e->id);
            st_ipc_own_drop(ipc, e);
        }
    }
}

/* The IPC handle of my allocation @a b, from the cache or the driver. */
static int st_ipc_own_handle(st_cuda_ipc_t *ipc, const st_cuda_buf_t *b, unsigned char *handle)
{
    st_ipc_entry_t *e;
    int k;

    for (k = 0; k < ST_IPC_CACHE; k++) {
        e = &ipc->own[k];
        if (e->peer >= 0 && e->id == b->id) {
            e->used = ipc->calls;
            memcpy(handle, e->handle, sizeof(e->handle));
            return 0;
        }
    }
    /* a cached allocation this one overlaps is gone (the peers see the overlap too,
     * but only if this one reaches them: told, in case this call stages) */
    for (k = 0; k < ST_IPC_CACHE; k++) {
        e = &ipc->own[k];
        if (e->peer >= 0 && e->base < b->base + b->size && b->base < e->base + e->size) {
            st_ipc_own_drop(ipc, e);
        }
    }
    st_ipc_own_sweep(ipc);
    for (k = 0, e = &ipc->own[0]; k < ST_IPC_CACHE && e->peer >= 0; k++) {
        if (ipc->own[k].peer < 0 || ipc->own[k].used < e->used) {
            e = &ipc->own[k];   /* a free entry, else the least recently used */
        }
    }
    if (e->peer >= 0) {   /* evicted: the peers close it too */
        st_ipc_own_drop(ipc, e);
    }
    e = st_ipc_victim(ipc->own);
    if (st_cuda_ipc_get(b->base, e->handle) != 0) {
        return -1;
    }
    e->peer = ipc->rank;
    e->id   = b->id;
    e->base = b->base;
    e->size = b->size;
    e->used = ipc->calls;
    memcpy(handle, e->handle, sizeof(e->handle));
    return 0;
}

/* Peer @a j's allocation (id, base, size, handle) mapped in context @a ctx (the
 * current one), opened at most once there. */
static void *st_ipc_map(st_cuda_ipc_t *ipc, int j, uint64_t id, uint64_t base, uint64_t size,
                        const unsigned char *handle, void *ctx)
{
    st_ipc_entry_t *e;
    int k;

    for (k = 0; k < ST_IPC_CACHE; k++) {
        e = &ipc->peers[k];
        if (e->peer == j && e->id == id && e->ctx == ctx) {
            e->used = ipc->calls;
            return e->mapped;
        }
    }
    /* a cached allocation of j that this one overlaps is gone: j freed it */
    for (k = 0; k < ST_IPC_CACHE; k++) {
        e = &ipc->peers[k];
        if (e->peer == j && e->base < base + size && base < e->base + e->size) {
            st_debug("peer %d's allocation %#llx (id %llu) was freed: mapping closed", j,
                     (unsigned long long)e->base, e->id);
            st_ipc_close_entry(e);
        }
    }
    e = st_ipc_victim(ipc->peers);
    if (st_cuda_ipc_open(handle, &e->mapped) != 0) {
        e->mapped = NULL;
        return NULL;
    }
    e->peer = j;
    e->id   = id;
    e->base = (uintptr_t)base;
    e->size = (size_t)size;
    e->ctx  = ctx;
    e->used = ipc->calls;
    return e->mapped;
}

/* My descriptor for step A: 0 in d->ok when my buffers cannot take the IPC path. */
static void *st_ipc_describe_bufs(st_cuda_ipc_t *ipc, const void *sbuf, void *rbuf,
                                  st_type_t type, st_op_t op, const st_cuda_buf_t *s,
                                  const st_cuda_buf_t *r, st_ipc_desc_t *d)
{
    const void *src = (sbuf == MPI_IN_PLACE) ? rbuf : sbuf;
    size_t align = st_type_align(type);

    memset(d, 0, sizeof(*d));
    d->cuda     = st_cuda_ipc_usable();
    d->in_place = (sbuf == MPI_IN_PLACE);
    /* the kernels load whole elements: a misaligned one would end the context */
    if (!d->cuda || !st_cuda_fold_supported(type, op) || s->kind != ST_MEM_DEVICE ||
        r->kind != ST_MEM_DEVICE || s->ctx == NULL || !r->ipc || !s->ipc || s->ctx != r->ctx ||
        (((uintptr_t)src | (uintptr_t)rbuf) & (align - 1)) != 0) {
        return NULL;
    }
    /* in the buffers' context, whatever the thread's current one is */
    if (st_cuda_ctx_enter(r->ctx) != 0) {
        return NULL;
    }
    if (st_ipc_own_handle(ipc, s, d->sh) != 0 || st_ipc_own_handle(ipc, r, d->rh) != 0) {
        st_cuda_ctx_leave();
        return NULL;
    }
    st_cuda_ctx_leave();
    d->sid   = s->id;
    d->rid   = r->id;
    d->sbase = s->base;
    d->rbase = r->base;
    d->ssize = s->size;
    d->rsize = r->size;
    d->soff  = (uintptr_t)src - s->base;
    d->roff  = (uintptr_t)rbuf - r->base;
    d->ok    = 1;
    d->gpu_known = (st_cuda_gpu_id(r->ordinal, d->gpu) == 0);
    return r->ctx;
}

/* ... with the ids of my freed allocations (up to ST_IPC_GONE), whatever my buffers. */
static void *st_ipc_describe(st_cuda_ipc_t *ipc, const void *sbuf, void *rbuf,
                             st_type_t type, st_op_t op, const st_cuda_buf_t *s,
                             const st_cuda_buf_t *r, st_ipc_desc_t *d)
{
    void *ctx = st_ipc_describe_bufs(ipc, sbuf, rbuf, type, op, s, r, d);
    int n = ST_MIN(ipc->ngone, ST_IPC_GONE);

    d->ngone = n;
    memcpy(d->gone, ipc->gone, (size_t)n * sizeof(*d->gone));
    ipc->ngone -= n;
    memmove(ipc->gone, ipc->gone + n, (size_t)ipc->ngone * sizeof(*ipc->gone));
    return ctx;
}

/* Peer @a j freed the allocations @a gone: its mappings here closed. */
static void st_ipc_forget(st_cuda_ipc_t *ipc, int j, const uint64_t *gone, int n)
{
    st_ipc_entry_t *e;
    int i, k;

    for (i = 0; i < n; i++) {
        for (k = 0; k < ST_IPC_CACHE; k++) {
            e = &ipc->peers[k];
            if (e->peer == j && e->id == gone[i]) {
                st_debug("peer %d freed its allocation %#llx (id %llu): mapping closed", j,
                         (unsigned long long)e->base, e->id);
                st_ipc_close_entry(e);
            }
        }
    }
}

/* Slice @a j of @a count elements: [lo, lo + n). */
static void st_ipc_slice(size_t count, int size, int j, size_t *lo_p, size_t *n_p)
{
    size_t q = count / (size_t)size, rem = count % (size_t)size;

    *lo_p = (size_t)j * q + ST_MIN((size_t)j, rem);
    *n_p  = q + ((size_t)j < rem);
}

/* A barrier that also says whether every rank's @a rc is still 1 (else -1 on all:
 * each rank then ends the job, none returns another rank's unfinished result). */
static int st_ipc_agree(st_cuda_ipc_t *ipc, st_shm_t *shm, int rc, MPI_Comm pcomm)
{
    const void *const *all = st_shm_exchange(shm, &rc, sizeof(rc), pcomm);
    int j, v;

    for (j = 0; all != NULL && j < ipc->size; j++) {
        memcpy(&v, all[j], sizeof(v));
        rc = (v == 1) ? rc : -1;
    }
    return rc;
}

int st_cuda_ipc_allreduce(st_cuda_ipc_t *ipc, st_shm_t *shm, MPI_Comm pcomm, const void *sbuf,
                          void *rbuf, size_t count, st_type_t type, st_op_t op,
                          const st_cuda_buf_t *src_info, const st_cuda_buf_t *r_info)
{
    const void *const *all;
    const st_ipc_desc_t *peer;
    const void *src[ST_CUDA_MAX_SRC];
    void *peer_r[ST_CUDA_MAX_SRC];
    st_ipc_desc_t mine;
    size_t esize = st_type_size(type), lo, n;
    void *ctx, *stream = NULL, *m;
    int j, ok, entered, cuda_all = 1, ok_all = 1, one_gpu = 1, rc = 1;

    /* who looks: every rank alike (the same count of calls, the same plan) */
    ipc->calls++;
    if (ipc->size > ST_CUDA_MAX_SRC ||
        (!ipc->gpu_node && (ipc->calls & (ipc->calls - 1)) != 0)) {
        return 0;   /* libcuda was not loaded everywhere: look again at calls 2^k */
    }

    /* A. what every rank has */
    ctx = st_ipc_describe(ipc, sbuf, rbuf, type, op, src_info, r_info, &mine);
    all = st_shm_exchange(shm, &mine, sizeof(mine), pcomm);
    if (all == NULL) {
        return 0;
    }
    for (j = 0; j < ipc->size; j++) {
        peer = (const st_ipc_desc_t*)all[j];
        cuda_all &= (peer->cuda != 0);
        ok_all &= (peer->ok != 0);
        one_gpu &= (peer->gpu_known && memcmp(peer->gpu, ((const st_ipc_desc_t*)all[0])->gpu,
                                              sizeof(peer->gpu)) == 0);
        if (j != ipc->rank && peer->ngone > 0) {
            st_ipc_forget(ipc, j, peer->gone, ST_MIN(peer->ngone, ST_IPC_GONE));
        }
    }
    ipc->gpu_node = cuda_all;
    if (!ok_all) {
        return 0;
    }

    /* B. the peers' buffers mapped here, and my GPU can run the kernel; agree that
     * every rank could (a GPU the build's kernels do not load on stages) */
    ok = entered = (st_cuda_ctx_enter(ctx) == 0);
    if (ok) {
        stream = st_cuda_stream();
        ok     = (stream != NULL && st_cuda_fold_ready(type, op));
    }
    for (j = 0; j < ipc->size; j++) {
        peer = (const st_ipc_desc_t*)all[j];
        if (j == ipc->rank) {
            src[j]    = (sbuf == MPI_IN_PLACE) ? rbuf : sbuf;
            peer_r[j] = rbuf;
            continue;
        }
        src[j] = peer_r[j] = NULL;
        if (!ok || (one_gpu && ipc->rank != 0)) {
            continue;   /* on one GPU, rank 0 alone reads the peers' buffers */
        }
        m = st_ipc_map(ipc, j, peer->rid, peer->rbase, peer->rsize, peer->rh, ctx);
        peer_r[j] = (m != NULL) ? (char*)m + peer->roff : NULL;
        if (peer->in_place) {
            src[j] = peer_r[j];
        } else {
            m      = st_ipc_map(ipc, j, peer->sid, peer->sbase, peer->ssize, peer->sh, ctx);
            src[j] = (m != NULL) ? (char*)m + peer->soff : NULL;
        }
        ok = (src[j] != NULL && peer_r[j] != NULL);
    }
    /* the descriptors are read: the next exchange may reuse their slots */
    all = st_shm_exchange(shm, &ok, sizeof(ok), pcomm);
    for (j = 0; j < ipc->size; j++) {
        ok_all &= (*(const int*)all[j] != 0);
    }
    if (!ok_all) {
        if (!st_config.cuda_ipc_cache) {
            st_ipc_close_peers(ipc);
        }
        if (entered) {
            st_cuda_ctx_leave();
        }
        st_debug("CUDA IPC: a rank could not map its peers' buffers or load the kernels: "
                 "staging");
        return 0;
    }

    /* C'. every rank's buffer on one GPU: rank 0 folds them all into all of them,
     * one pass (2 x size x count elements move, not 3 x size - 1), one time slice
     * of the GPU's (when the ranks' processes share it without MPS, each step a
     * rank waits for costs it one) */
    if (one_gpu) {
        if (ipc->rank == 0 && count > 0 &&
            (st_cuda_fold_to(type, op, peer_r, ipc->size, src, ipc->size, count, stream) != 0 ||
             st_cuda_stream_sync(stream) != 0)) {
            rc = -1;
        }
        if (!st_config.cuda_ipc_cache) {
            st_ipc_close_peers(ipc);
        }
        rc = st_ipc_agree(ipc, shm, rc, pcomm);
        st_cuda_ctx_leave();
        return rc;
    }

    /* C. my slice of every rank's buffer, folded into mine */
    st_ipc_slice(count, ipc->size, ipc->rank, &lo, &n);
    for (j = 0; j < ipc->size; j++) {
        src[j] = (const char*)src[j] + lo * esize;
    }
    if (n > 0 && (st_cuda_fold(type, op, (char*)rbuf + lo * esize, src, ipc->size, n, stream) !=
                          0 ||
                  st_cuda_stream_sync(stream) != 0)) {
        rc = -1;
    }
    rc = st_ipc_agree(ipc, shm, rc, pcomm);   /* every slice folded, or none is read */

    /* D. the other slices from their owners */
    for (j = 0; j < ipc->size && rc == 1; j++) {
        st_ipc_slice(count, ipc->size, j, &lo, &n);
        if (j != ipc->rank && n > 0 &&
            st_cuda_copy_async((char*)rbuf + lo * esize, (const char*)peer_r[j] + lo * esize,
                               n * esize, stream) != 0) {
            rc = -1;
        }
    }
    if (rc == 1 && st_cuda_stream_sync(stream) != 0) {
        rc = -1;
    }
    if (!st_config.cuda_ipc_cache) {   /* done with the peers' buffers: before the barrier */
        st_ipc_close_peers(ipc);
    }
    rc = st_ipc_agree(ipc, shm, rc, pcomm);
    st_cuda_ctx_leave();
    return rc;
}
