/*
 * The UCX (ucp) transport of the inter-node level, and its allreduce.
 *
 * Why tag matching. The inter-node algorithms exchange whole slices with known
 * peers, sizes and order: exactly what tagged send/receive expresses. UCP's tag
 * matching delivers eager messages and runs the rendezvous protocol (zero copy
 * into the posted buffer, the user's own for the allgather) for large ones, and
 * keeps unexpected messages; active messages would need our own matching and
 * buffering, and RMA a memory registration and rkey exchange for every user
 * buffer. Features: UCP_FEATURE_TAG only.
 *
 * One context and one worker per process, started on the first lane (UCX's own
 * configuration from the environment: UCX_TLS, UCX_NET_DEVICES, ...), shared by
 * every lane. Thread mode UCS_THREAD_MODE_SERIALIZED: every worker call (post,
 * progress, request test) is made under st_ucx_lock, so lanes may be used by
 * several threads at once; error callbacks run inside progress, under the lock,
 * and only set a flag.
 *
 * Tag layout (64 bits), full-mask matching:
 *
 *   63        48 47        32 31     20 19                 0
 *   [ lane id   | epoch (seq) | message | source lane rank  ]
 *      16 bits     16 bits     12 bits      20 bits
 *
 * The lane id is agreed at creation among the members (lowest id free on all of
 * them, retried if another thread took it meanwhile), so a process's live lanes
 * have distinct ids; ids of broken lanes are never reused (their stale messages
 * may still arrive). The epoch counts the lane's collectives, 1 ... 65535, the
 * message number tells a collective's steps apart (0 ... 4093), the source
 * tells senders apart (tag matching is per worker, not per endpoint). Epoch 0
 * is the lane's own: message 0 the handshake, 4094 the abort notice (received
 * from any source), 4095 the goodbye. Messages with equal tags match in the
 * order they were sent (UCP keeps the order between two endpoints), which the
 * pipelined segments rely on.
 *
 * Waiting: progress the worker; after STRATA_SPIN_COUNT polls without an event
 * (auto: 10), sched_yield at every poll, and every 16th yield poll MPI
 * (PMPI_Iprobe) so other MPI traffic moves. On a 2-core machine, busy polling
 * starves the kernel's TCP processing that the transfer itself needs.
 *
 * Between collectives, Open MPI's progress drives the worker (st_ucx_opal_cb): a
 * completed send may still have bytes in this process (below).
 *
 * Errors: endpoints use UCP_ERR_HANDLING_MODE_PEER, whose error callback marks
 * the peer failed (UCX 1.13 offers it on network transports only: tcp, IB;
 * ranks of one host talk over tcp, and a UCX_TLS without a network transport
 * leaves no way to connect). A wait returns ST_ERR_IO when a request fails, or
 * any endpoint of the lane failed (tag receives belong to the worker: UCX
 * cannot fail them itself; and a failed endpoint the wait does not use still
 * means a member that may wait on this one). The lane is then broken, and the
 * member says so: an abort notice to each peer it talks to, who break the lane
 * in turn and pass the notice on (its payload carries a nonce agreed at
 * creation, so a late notice meant for an earlier lane of the same id is
 * ignored). The notice goes through UCX where the endpoint is healthy and
 * through MPI always (st_ucx_mworld, a copy of MPI_COMM_WORLD made at MPI_Init),
 * since a failure may be seen by one side only: a connection whose link went
 * (a bridge deleted under it) fails the sender's endpoint while the receiver's
 * socket looks alive; waits poll for MPI notices every 16th yield. Only then does
 * it cancel its receives and force-close its endpoints, which completes its
 * pending sends: a closed endpoint alone tells the peer nothing while the
 * process and its worker live on. Nothing aborts, nothing prints (st_debug
 * says why).
 *
 * Teardown without losing the last messages: st_ucx_lane_destroy sends a
 * goodbye to each peer the algorithms use and returns; the lane is closed
 * (endpoints flushed and closed) once the peers' goodbyes arrived, i.e. once
 * they are done with it too, checked whenever a lane is created or destroyed
 * and at st_ucx_finalize, which waits a bounded time for the stragglers, then
 * force-closes what is left, drops the messages nobody will receive (UCX warns
 * about them otherwise) and destroys the worker and the context.
 */
#include "config.h"

#include "st_ucx.h"
#include "st_coll.h"
#include "st_config.h"
#include "st_mem.h"
#include "st_mpi.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static __thread char st_ucx_why_buf[256];

__attribute__((format(printf, 1, 2)))
static void st_ucx_set_why(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(st_ucx_why_buf, sizeof(st_ucx_why_buf), fmt, ap);
    va_end(ap);
    st_debug("ucx: %s", st_ucx_why_buf);
}

const char *st_ucx_why(void)
{
    return st_ucx_why_buf;
}

#if HAVE_UCX

#include <ucp/api/ucp.h>
#include <ucs/debug/log_def.h>

#include <dirent.h>
#include <dlfcn.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#define ST_UCX_MAX_RANKS     (1 << 20)   /* source field of the tag */
#define ST_UCX_NIDS          (1 << 16)   /* lane id field */
#define ST_UCX_MSG_LIMIT     4094        /* messages of the collectives: 0 ... 4093 */
#define ST_UCX_MSG_ABORT     4094        /* epoch 0: "I broke the lane" (handshake: 0) */
#define ST_UCX_MSG_BYE       4095        /* epoch 0: the goodbye */
#define ST_UCX_SPIN_DEFAULT  10
#define ST_UCX_PROGRESS_MASK 15
#define ST_UCX_SEG           (256 * 1024)  /* ring reduce-scatter segment (bytes) */
#define ST_UCX_WINDOW        4             /* segments received ahead */
#define ST_UCX_CONNECT_S     30.0        /* handshake of a new lane */
#define ST_UCX_FD_MARGIN     64          /* descriptors a new lane leaves free */
#define ST_UCX_ABORT_S       10.0        /* cancelled requests to complete */
#define ST_UCX_NOTIFY_S      1.0         /* abort notices to leave */
#define ST_UCX_CLOSE_S       10.0        /* st_ucx_finalize: lanes still closing */
#define ST_UCX_MPI_TAG       0x5747      /* the abort notice through MPI (st_ucx_mworld) */
#define ST_UCX_KEEP          2           /* lanes kept for the next communicator */

#define ST_UCS_CALL_GOTO(_call, _label, _status) \
    do { \
        ucs_status_t _s = (_call); \
        if (_s != UCS_OK) { \
            st_ucx_set_why("%s: %s", #_call, ucs_status_string(_s)); \
            (_status) = ST_ERR_NO_RESOURCE; \
            goto _label; \
        } \
    } while (0)

typedef struct {
    ucp_ep_h            ep;       /* NULL until connected, and once closed */
    _Atomic int         failed;   /* ucs_status_t of the endpoint's error, 0 while healthy */
    int                 used;     /* the algorithms talk to this peer (handshake, goodbye) */
    struct st_ucx_lane *lane;     /* the lane (the error callback's argument is the peer) */
} st_ucx_peer_t;

typedef enum {
    ST_UCX_LANE_ACTIVE = 0,
    ST_UCX_LANE_CLOSING,    /* destroyed, waiting for the peers' goodbyes */
    ST_UCX_LANE_FLUSHING,   /* endpoints closing */
    ST_UCX_LANE_KEPT        /* put aside by st_ucx_lane_keep, endpoints open */
} st_ucx_lane_state_t;

struct st_ucx_lane {
    int            rank, size;
    unsigned       id;        /* 16 bits */
    unsigned       seq;       /* epoch, 1 ... 65535 (0: handshake and goodbye) */
    int            broken;
    int            bye_lost;  /* stopped waiting for a failed peer's goodbye, which may
                               * still come: the id stays taken, as a broken lane's */
    int            notified;  /* sent the abort notices */
    int            spin;
    unsigned       uses;      /* communicators served (kept and taken again: 2, ...) */
    uint64_t       me;        /* my lane rank: the handshake's payload */
    uint64_t       nonce;     /* agreed at creation: tells this lane from an earlier one */
    uint64_t       notice[2]; /* abort notice: {nonce, my lane rank} */
    uint64_t       abort_in[2];  /* the abort notice received */
    int           *world;     /* lane rank i's rank in st_ucx_mworld (MPI_UNDEFINED: none) */
    _Atomic long long heard;  /* 1 + the lane rank whose abort notice came through MPI */
    st_ucx_req_t   abort_req; /* receive of an abort notice, posted for the lane's life */
    st_ucx_peer_t *peers;
    _Atomic int    nfailed;   /* endpoints failed (error callbacks): the lane is damaged */
    char          *addrs;     /* worker address of lane rank i at i * addr_len */
    size_t         addr_len;
    char          *scratch;
    size_t         scratch_size;
    st_ucx_req_t  *reqs;
    int            nreqs;     /* capacity of reqs */
    struct st_ucx_ring *ring; /* st_ucx_allreduce's */
    /* teardown */
    st_ucx_lane_state_t state;
    uint64_t       bye_out, *bye_in;   /* goodbye payloads */
    st_ucx_req_t  *bye;                /* 2 per used peer */
    int            nbye;
    void         **closing;            /* close requests, one per peer */
    struct st_ucx_lane *prev, *next;
};

typedef enum { ST_UCX_NEW = 0, ST_UCX_READY, ST_UCX_FAILED, ST_UCX_DONE } st_ucx_state_t;

static pthread_mutex_t st_ucx_lock = PTHREAD_MUTEX_INITIALIZER;
static st_ucx_state_t  st_ucx_state;
static ucp_context_h   st_ucx_context;
static ucp_worker_h    st_ucx_worker;
static ucp_address_t  *st_ucx_address;
static size_t          st_ucx_address_len;
static char            st_ucx_failure[256];  /* why the start failed */
/* A copy of MPI_COMM_WORLD made at MPI_Init (st_ucx_init_world), for abort notices
 * through MPI: it lives until st_ucx_finalize, so a notice nobody waits for any more
 * is still received (and dropped) on it, never by a later communicator that reused
 * a freed one's id (Open MPI then matches it, and its sequence numbers, there). */
static MPI_Comm        st_ucx_mworld = MPI_COMM_NULL;
static uint8_t         st_ucx_ids[ST_UCX_NIDS / 8];  /* lane ids in use (or poisoned) */
static st_ucx_lane_t  *st_ucx_lanes;     /* active lanes */
static st_ucx_lane_t  *st_ucx_closing;   /* destroyed lanes still closing */
static st_ucx_lane_t  *st_ucx_kept;      /* kept lanes, the last kept first */
static int             st_ucx_nkept;

static double st_ucx_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static inline ucp_tag_t st_ucx_tag(const st_ucx_lane_t *lane, unsigned seq, unsigned msg,
                                   int src)
{
    return ((ucp_tag_t)(lane->id & 0xffff) << 48) | ((ucp_tag_t)(seq & 0xffff) << 32) |
           ((ucp_tag_t)(msg & 0xfff) << 20) | (ucp_tag_t)((unsigned)src & 0xfffff);
}

static int st_ucx_id_used(unsigned id)
{
    return (st_ucx_ids[id / 8] >> (id % 8)) & 1;
}

static void st_ucx_id_set(unsigned id, int used)
{
    if (used) {
        st_ucx_ids[id / 8] |= (uint8_t)(1u << (id % 8));
    } else {
        st_ucx_ids[id / 8] &= (uint8_t)~(1u << (id % 8));
    }
}

static void st_ucx_list_remove(st_ucx_lane_t **head, st_ucx_lane_t *lane)
{
    if (lane->prev != NULL) {
        lane->prev->next = lane->next;
    } else {
        *head = lane->next;
    }
    if (lane->next != NULL) {
        lane->next->prev = lane->prev;
    }
    lane->prev = lane->next = NULL;
}

static void st_ucx_list_push(st_ucx_lane_t **head, st_ucx_lane_t *lane)
{
    lane->prev = NULL;
    lane->next = *head;
    if (*head != NULL) {
        (*head)->prev = lane;
    }
    *head = lane;
}

/* ---- the process-wide context and worker ---- */

/*
 * 1 when TCP is the only network transport of @a context (the lanes' endpoints ask
 * for peer failure handling, which UCX gives on network transports only, so the
 * lanes then run over TCP). From the resource list ucp_context_print_info writes:
 * "resource N : md M dev D flags -- <transport>/<device>".
 */
static int st_ucx_tcp_only(ucp_context_h context)
{
    static const char *const local[] = {"self", "sysv", "posix", "cma", "knem", "xpmem",
                                        "cuda_copy", "cuda_ipc", "gdr_copy", "rocm_copy",
                                        "rocm_ipc", "rocm_gdr"};
    char *text = NULL, *line, *tl, *end;
    size_t size = 0, n, k;
    int tcp = 0, other = 0, known;
    FILE *f = open_memstream(&text, &size);

    if (f == NULL) {
        return 0;
    }
    ucp_context_print_info(context, f);
    fclose(f);
    for (line = text; line != NULL && *line != '\0'; line = end ? end + 1 : NULL) {
        end = strchr(line, '\n');
        if (end != NULL) {
            *end = '\0';
        }
        if (strstr(line, "resource") == NULL || (tl = strstr(line, "-- ")) == NULL) {
            continue;
        }
        tl += 3;
        n   = strcspn(tl, "/");
        if (n == 3 && strncmp(tl, "tcp", 3) == 0) {
            tcp = 1;
            continue;
        }
        for (k = 0, known = 0; k < ST_ARRAY_SIZE(local); k++) {
            known |= (strlen(local[k]) == n && strncmp(tl, local[k], n) == 0);
        }
        other |= !known;
    }
    free(text);
    return tcp && !other;
}

/*
 * Over TCP, UCX's rendezvous protocol costs a handshake per message, whose control
 * messages queue behind the bulk data on a loaded link: on 2 hosts at 2 Gbit/s the
 * ring's 256 KB segments and blocks went 1.2-2.3x faster with eager sends
 * (bench/RESULTS.md). So when TCP is the lanes' only transport and the user did not
 * set UCX_RNDV_THRESH, the context is made again with the threshold at infinity.
 * With RDMA transports UCX's own choice (zero-copy rendezvous) stays. Failures keep
 * the first context.
 */
static void st_ucx_tune_tcp(const ucp_params_t *params, ucp_config_t *config)
{
    ucp_context_h eager;

    if (getenv("UCX_RNDV_THRESH") != NULL || !st_ucx_tcp_only(st_ucx_context) ||
        ucp_config_modify(config, "RNDV_THRESH", "inf") != UCS_OK ||
        ucp_init(params, config, &eager) != UCS_OK) {
        return;
    }
    ucp_cleanup(st_ucx_context);
    st_ucx_context = eager;
    st_debug("ucx: TCP only: eager protocol for every message size (UCX_RNDV_THRESH=inf)");
}

/*
 * Progress between collectives. UCX reports a send complete once UCX holds its
 * data, not once it is on the wire: over TCP, a write to a full socket buffer leaves
 * the rest in the endpoint, sent when the worker is progressed again. A rank that
 * returns from MPI_Allreduce into one of Open MPI's blocking calls (a barrier) must
 * still get those bytes out, or its peer, still inside the allreduce, waits for them
 * forever (seen: 3 virtual nodes over tcp with 4 KB socket buffers, an allreduce of
 * 24 KB then MPI_Barrier, hung within 3 iterations; tests/progress_tail-3). So the
 * worker is also progressed from opal_progress, which Open MPI's blocking calls
 * spin on, as its own UCX components' workers are: a low-priority callback (every
 * 8th call), registered while the worker lives, found in the process by dlsym (not
 * Open MPI: nothing to register with, a debug line). Never blocks: with the lock
 * taken (a collective in progress in another thread, or this one), it does nothing.
 */
typedef int (*st_opal_cb_t)(void);
static int (*st_opal_unregister)(st_opal_cb_t);

static int st_ucx_opal_cb(void)
{
    int events = 0;

    if (pthread_mutex_trylock(&st_ucx_lock) == 0) {
        if (st_ucx_state == ST_UCX_READY) {
            events = (int)ucp_worker_progress(st_ucx_worker);
        }
        pthread_mutex_unlock(&st_ucx_lock);
    }
    return events;
}

static void st_ucx_opal_hook(void)
{
    int (*reg)(st_opal_cb_t);

    *(void**)&reg = dlsym(RTLD_DEFAULT, "opal_progress_register_lp");
    if (reg == NULL) {
        *(void**)&reg = dlsym(RTLD_DEFAULT, "opal_progress_register");
    }
    *(void**)&st_opal_unregister = dlsym(RTLD_DEFAULT, "opal_progress_unregister");
    if (reg == NULL || st_opal_unregister == NULL || reg(st_ucx_opal_cb) != 0) {
        st_opal_unregister = NULL;
        st_debug("ucx: no Open MPI progress to join: a send's last bytes wait for the "
                 "next collective");
    }
}

/* Lock held. */
static st_status_t st_ucx_start(void)
{
    ucp_config_t *config = NULL;
    ucp_params_t params;
    ucp_worker_params_t wparams;
    ucp_worker_attr_t wattr;
    st_status_t status = ST_OK;

    switch (st_ucx_state) {
    case ST_UCX_READY:
        return ST_OK;
    case ST_UCX_FAILED:
        st_ucx_set_why("%s", st_ucx_failure);
        return ST_ERR_NO_RESOURCE;
    case ST_UCX_DONE:
        st_ucx_set_why("UCX already finalized");
        return ST_ERR_NOT_INITIALIZED;
    case ST_UCX_NEW:
        break;
    }

    ST_UCS_CALL_GOTO(ucp_config_read(NULL, NULL, &config), err, status);
    memset(&params, 0, sizeof(params));
    params.field_mask        = UCP_PARAM_FIELD_FEATURES | UCP_PARAM_FIELD_MT_WORKERS_SHARED |
                               UCP_PARAM_FIELD_NAME;
    params.features          = UCP_FEATURE_TAG;
    params.mt_workers_shared = 0;
    params.name              = "strata";
    ST_UCS_CALL_GOTO(ucp_init(&params, config, &st_ucx_context), err_config, status);
    st_ucx_tune_tcp(&params, config);
    ucp_config_release(config);

    memset(&wparams, 0, sizeof(wparams));
    wparams.field_mask  = UCP_WORKER_PARAM_FIELD_THREAD_MODE | UCP_WORKER_PARAM_FIELD_NAME;
    wparams.thread_mode = UCS_THREAD_MODE_SERIALIZED;
    wparams.name        = "strata";
    ST_UCS_CALL_GOTO(ucp_worker_create(st_ucx_context, &wparams, &st_ucx_worker), err_context,
                     status);
    wattr.field_mask = UCP_WORKER_ATTR_FIELD_THREAD_MODE;
    ST_UCS_CALL_GOTO(ucp_worker_query(st_ucx_worker, &wattr), err_worker, status);
    if (wattr.thread_mode == UCS_THREAD_MODE_SINGLE) {
        st_ucx_set_why("the UCP worker offers no serialized thread mode");
        status = ST_ERR_NO_RESOURCE;
        goto err_worker;
    }
    ST_UCS_CALL_GOTO(ucp_worker_get_address(st_ucx_worker, &st_ucx_address, &st_ucx_address_len),
                     err_worker, status);
    st_ucx_state = ST_UCX_READY;
    st_ucx_opal_hook();
    st_debug("ucx: %s started, worker address %zu bytes", ucp_get_version_string(),
             st_ucx_address_len);
    return ST_OK;

err_worker:
    ucp_worker_destroy(st_ucx_worker);
    st_ucx_worker = NULL;
err_context:
    ucp_cleanup(st_ucx_context);
    st_ucx_context = NULL;
    goto err;
err_config:
    ucp_config_release(config);
err:
    snprintf(st_ucx_failure, sizeof(st_ucx_failure), "%s", st_ucx_why_buf);
    st_ucx_state = ST_UCX_FAILED;
    return status;
}

/* ---- requests ---- */

static void st_ucx_ep_error(void *arg, ucp_ep_h ep, ucs_status_t status)
{
    st_ucx_peer_t *peer = arg;
    st_ucx_lane_t *lane = peer->lane;

    (void)ep;
    if (atomic_exchange(&peer->failed,
                        (status != UCS_OK) ? (int)status : (int)UCS_ERR_NO_MESSAGE) == 0) {
        atomic_fetch_add(&lane->nfailed, 1);
        st_debug("ucx: lane %u: the endpoint to lane rank %d failed (%s)%s", lane->id,
                 (int)(peer - lane->peers), ucs_status_string(status),
                 (lane->state == ST_UCX_LANE_ACTIVE && !lane->broken) ? "" : " while closing");
    }
}

/* UCX's own words on an endpoint this process could not create (UCX_TLS naming no
 * transport that reports a peer's failure, say): said once, at debug level, and
 * every later lane falls back at once (before: UCX printed an error line on every
 * rank for every communicator, thousands in a job that makes many) */
static char st_ucx_ep_failure[256];
static __thread int st_ucx_ep_hearing;   /* this thread's ucp_ep_create is being heard */

static ucs_log_func_rc_t st_ucx_ep_log(const char *file, unsigned line, const char *function,
                                       ucs_log_level_t level,
                                       const ucs_log_component_config_t *comp_conf,
                                       const char *message, va_list ap)
{
    (void)file, (void)line, (void)function, (void)comp_conf;
    if (level > UCS_LOG_LEVEL_WARN || !st_ucx_ep_hearing) {
        return UCS_LOG_FUNC_RC_CONTINUE;
    }
    if (st_ucx_ep_failure[0] == '\0') {
        vsnprintf(st_ucx_ep_failure, sizeof(st_ucx_ep_failure), message, ap);
    }
    return UCS_LOG_FUNC_RC_STOP;
}

/* Lock held. */
static st_status_t st_ucx_connect(st_ucx_lane_t *lane, int peer)
{
    static int broken;   /* an endpoint failed before: UCX cannot make them here */
    ucp_ep_params_t params;
    ucs_status_t s;

    if (lane->peers[peer].ep != NULL) {
        return ST_OK;
    }
    if (atomic_load(&lane->peers[peer].failed) != 0) {
        st_ucx_set_why("lane rank %d failed earlier", peer);
        return ST_ERR_IO;
    }
    if (broken) {
        st_ucx_set_why("no UCX endpoints here (the first one: %s)", st_ucx_ep_failure);
        return ST_ERR_NO_RESOURCE;
    }
    memset(&params, 0, sizeof(params));
    params.field_mask      = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS |
                             UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE |
                             UCP_EP_PARAM_FIELD_ERR_HANDLER;
    params.address         = (const ucp_address_t*)(lane->addrs + (size_t)peer * lane->addr_len);
    params.err_mode        = UCP_ERR_HANDLING_MODE_PEER;
    params.err_handler.cb  = st_ucx_ep_error;
    params.err_handler.arg = &lane->peers[peer];
    st_ucx_ep_failure[0] = '\0';
    st_ucx_ep_hearing    = 1;
    ucs_log_push_handler(st_ucx_ep_log);
    s = ucp_ep_create(st_ucx_worker, &params, &lane->peers[peer].ep);
    ucs_log_pop_handler();
    st_ucx_ep_hearing = 0;
    if (s == UCS_OK && st_ucx_ep_failure[0] != '\0') {
        st_debug("ucx: endpoint to lane rank %d made; UCX said: %s", peer, st_ucx_ep_failure);
    }
    if (s != UCS_OK) {
        lane->peers[peer].ep = NULL;
        if (st_ucx_ep_failure[0] == '\0') {
            snprintf(st_ucx_ep_failure, sizeof(st_ucx_ep_failure), "%s", ucs_status_string(s));
        }
        broken = 1;
        st_ucx_set_why("no UCX endpoint to lane rank %d: %s (%s)", peer, ucs_status_string(s),
                       st_ucx_ep_failure);
        return ST_ERR_NO_RESOURCE;
    }
    return ST_OK;
}

/* A receive of @a req's length got @a got bytes: 0, or -1 with the reason set. */
static int st_ucx_check_length(const st_ucx_req_t *req, size_t got)
{
    if (got == req->bytes) {
        return 0;
    }
    st_ucx_set_why("a message of %zu bytes from lane rank %d, where %zu were expected", got,
                   req->peer, req->bytes);
    return -1;
}

static st_status_t st_ucx_post(st_ucx_lane_t *lane, int peer, unsigned seq, unsigned msg,
                               void *buf, size_t bytes, int is_recv, st_ucx_req_t *req)
{
    ucp_request_param_t param;
    ucp_tag_recv_info_t info;
    ucs_status_ptr_t p;
    st_status_t status;

    req->ucp     = NULL;
    req->peer    = peer;
    req->is_recv = is_recv;
    req->bytes   = bytes;
    req->status  = ST_ERR_IO;
    memset(&param, 0, sizeof(param));
    pthread_mutex_lock(&st_ucx_lock);
    if (is_recv) {
        /* always a request, whose test gives the length received: a message already
         * there (the worker is progressed between calls too, st_ucx_opal_cb) would
         * complete at once, and UCX 1.13 left the recv_info of such a completion
         * unwritten (an 8-byte message passed for a 16-byte one: test_ucx, tcp-4) */
        param.op_attr_mask       = UCP_OP_ATTR_FIELD_RECV_INFO | UCP_OP_ATTR_FLAG_NO_IMM_CMPL;
        param.recv_info.tag_info = &info;
        info.length              = 0;
        p = ucp_tag_recv_nbx(st_ucx_worker, buf, bytes, st_ucx_tag(lane, seq, msg, peer),
                             (ucp_tag_t)-1, &param);
    } else {
        status = st_ucx_connect(lane, peer);
        if (status != ST_OK) {
            pthread_mutex_unlock(&st_ucx_lock);
            return status;
        }
        p = ucp_tag_send_nbx(lane->peers[peer].ep, buf, bytes,
                             st_ucx_tag(lane, seq, msg, lane->rank), &param);
    }
    pthread_mutex_unlock(&st_ucx_lock);
    if (UCS_PTR_IS_ERR(p)) {
        st_ucx_set_why("%s lane rank %d failed: %s", is_recv ? "receive from" : "send to", peer,
                       ucs_status_string(UCS_PTR_STATUS(p)));
        return ST_ERR_IO;
    }
    if (p == NULL && is_recv && st_ucx_check_length(req, info.length) != 0) {
        return ST_ERR_IO;   /* complete, and failed: the waits see req->status */
    }
    req->ucp    = p;
    req->status = ST_OK;
    return ST_OK;
}

/* Every 16th yield of a wait: MPI progress, and the closing lanes. */
static int st_ucx_reap(void);
static void st_ucx_abort_arrived(st_ucx_lane_t *lane);

/*
 * Lock held: check @a n requests (and the lane's abort notice) without
 * progressing the worker. Completed ones are freed and marked. Returns 1 when
 * all are complete, 0 while some are pending, -1 when one failed or the lane
 * broke (st_ucx_why() says why).
 */
static int st_ucx_test_locked(st_ucx_lane_t *lane, st_ucx_req_t *reqs, int n)
{
    ucp_tag_recv_info_t info;
    st_ucx_req_t *r;
    ucs_status_t s;
    int i, pending = 0, failed = 0;

    if (lane->abort_req.ucp != NULL &&
        ucp_request_check_status(lane->abort_req.ucp) != UCS_INPROGRESS) {
        st_ucx_abort_arrived(lane);
    }
    for (i = 0; i < n; i++) {
        r = &reqs[i];
        if (r->ucp == NULL) {
            failed = failed || (r->status != ST_OK);
            continue;
        }
        if (r->is_recv) {
            s = ucp_tag_recv_request_test(r->ucp, &info);
        } else {
            s = ucp_request_check_status(r->ucp);
        }
        if (s == UCS_INPROGRESS) {
            if (r->is_recv && atomic_load(&lane->peers[r->peer].failed) != 0) {
                st_ucx_set_why("lane rank %d failed: %s", r->peer,
                               ucs_status_string(atomic_load(&lane->peers[r->peer].failed)));
                failed = 1;
            }
            pending++;
            continue;
        }
        ucp_request_free(r->ucp);
        r->ucp    = NULL;
        r->status = (s == UCS_OK) ? ST_OK : ST_ERR_IO;
        if (s != UCS_OK) {
            st_ucx_set_why("%s lane rank %d failed: %s", r->is_recv ? "receive from" : "send to",
                           r->peer, ucs_status_string(s));
            failed = 1;
        } else if (r->is_recv && st_ucx_check_length(r, info.length) != 0) {
            r->status = ST_ERR_IO;
            failed    = 1;
        }
    }
    if (!lane->broken && atomic_load(&lane->heard) != 0) {
        st_ucx_set_why("lane rank %lld broke the lane (said through MPI)",
                       atomic_load(&lane->heard) - 1);
        lane->broken = 1;
    }
    if (!failed && atomic_load(&lane->nfailed) != 0) {
        /* an endpoint this wait does not use failed: the lane is damaged all the
         * same (a later step or collective needs it), and the peer behind it may
         * wait on this rank for a message that cannot come; breaking the lane now
         * sends the abort notices (through MPI too), so no member waits forever
         * (a link gone under a connection: RELIABILITY.md) */
        for (i = 0; i < lane->size && atomic_load(&lane->peers[i].failed) == 0; i++) {
        }
        st_ucx_set_why("lane rank %d failed: %s", i,
                       (i < lane->size)
                           ? ucs_status_string(atomic_load(&lane->peers[i].failed))
                           : "unknown error");
        failed = 1;
    }
    return (failed || lane->broken) ? -1 : (pending == 0);
}

/* The same, taking the lock. */
static int st_ucx_test(st_ucx_lane_t *lane, st_ucx_req_t *reqs, int n)
{
    int t;

    pthread_mutex_lock(&st_ucx_lock);
    t = st_ucx_test_locked(lane, reqs, n);
    pthread_mutex_unlock(&st_ucx_lock);
    return t;
}

/* Progress the worker once; nonzero if it did something. */
static int st_ucx_progress(void)
{
    int progressed;

    pthread_mutex_lock(&st_ucx_lock);
    progressed = (int)ucp_worker_progress(st_ucx_worker);
    pthread_mutex_unlock(&st_ucx_lock);
    return progressed;
}

/* An abort notice through MPI into @a in, if one is there: 1, else 0. */
static int st_ucx_mpi_take(uint64_t in[2])
{
    MPI_Message msg;
    int found = 0;

    /* a matched probe: another thread's receive cannot take the message probed */
    return st_ucx_mworld != MPI_COMM_NULL &&
           PMPI_Improbe(MPI_ANY_SOURCE, ST_UCX_MPI_TAG, st_ucx_mworld, &found, &msg,
                        MPI_STATUS_IGNORE) == MPI_SUCCESS &&
           found && PMPI_Mrecv(in, 2, MPI_UINT64_T, &msg, MPI_STATUS_IGNORE) == MPI_SUCCESS;
}

/*
 * Lock not held: abort notices through MPI (a member's notice through UCX cannot
 * reach a peer whose endpoint to it failed on the member's side only: a link gone
 * under a connection leaves the other side waiting on a socket that looks alive).
 * Each is for a live lane of this process (which its owner's next test breaks) or
 * for one destroyed since (dropped).
 */
static void st_ucx_mpi_heard(void)
{
    st_ucx_lane_t *l;
    uint64_t in[2];

    while (st_ucx_mpi_take(in)) {
        pthread_mutex_lock(&st_ucx_lock);
        for (l = st_ucx_lanes; l != NULL && l->nonce != in[0]; l = l->next) {
        }
        for (l = (l != NULL) ? l : st_ucx_kept; l != NULL && l->nonce != in[0]; l = l->next) {
        }
        for (l = (l != NULL) ? l : st_ucx_closing; l != NULL && l->nonce != in[0];
             l = l->next) {
        }
        if (l != NULL) {
            atomic_store(&l->heard, (long long)in[1] + 1);
        }
        pthread_mutex_unlock(&st_ucx_lock);
    }
}

/* A waiting loop's idle pass: spin @a spin passes, then yield the core; every
 * 16th yield, MPI progress, abort notices through MPI, and the closing lanes. */
static void st_ucx_idle(st_ucx_lane_t *lane, int progressed, unsigned long *idle_p,
                        unsigned long *yields_p, MPI_Comm pcomm)
{
    MPI_Status mstatus;
    int found;

    if (progressed) {
        *idle_p = 0;
        return;
    }
    if (++*idle_p <= (unsigned long)lane->spin) {
        return;
    }
    sched_yield();
    if ((++*yields_p & ST_UCX_PROGRESS_MASK) == 0) {
        if (pcomm != MPI_COMM_NULL) {
            PMPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, pcomm, &found, &mstatus);
        }
        st_ucx_mpi_heard();
        st_ucx_reap();
    }
}

/*
 * Wait for @a n requests; on an error or past @a deadline (0: none) return
 * ST_ERR_IO with the rest still pending (the caller aborts them).
 */
static st_status_t st_ucx_wait_reqs(st_ucx_lane_t *lane, st_ucx_req_t *reqs, int n,
                                    MPI_Comm pcomm, double deadline)
{
    unsigned long idle = 0, yields = 0;
    int progressed, t;

    for (;;) {
        pthread_mutex_lock(&st_ucx_lock);
        progressed = (int)ucp_worker_progress(st_ucx_worker);
        t          = st_ucx_test_locked(lane, reqs, n);
        pthread_mutex_unlock(&st_ucx_lock);
        if (t != 0) {
            return (t > 0) ? ST_OK : ST_ERR_IO;
        }
        if (deadline != 0 && st_ucx_now() > deadline) {
            st_ucx_set_why("timed out waiting for lane rank(s), e.g. %d", reqs[0].peer);
            return ST_ERR_IO;
        }
        st_ucx_idle(lane, progressed, &idle, &yields, pcomm);
    }
}

/* Lock held: force-close the endpoint of @a peer (completes its pending sends). */
static void st_ucx_ep_kill(st_ucx_lane_t *lane, int peer)
{
    ucp_request_param_t param;
    ucs_status_ptr_t p;

    if (lane->peers[peer].ep == NULL) {
        return;
    }
    memset(&param, 0, sizeof(param));
    param.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
    param.flags        = UCP_EP_CLOSE_FLAG_FORCE;
    p = ucp_ep_close_nbx(lane->peers[peer].ep, &param);
    lane->peers[peer].ep = NULL;
    if (UCS_PTR_IS_PTR(p)) {
        while (ucp_request_check_status(p) == UCS_INPROGRESS) {
            ucp_worker_progress(st_ucx_worker);
        }
        ucp_request_free(p);
    }
    if (atomic_load(&lane->peers[peer].failed) == 0) {
        atomic_store(&lane->peers[peer].failed, (int)UCS_ERR_CANCELED);
    }
}

/*
 * Lock held (released while yielding): progress until the @a n requests at @a reqs
 * are complete, or @a deadline passes; each is then freed (one still in flight is
 * released to UCX, which frees it when it completes) and marked failed.
 */
static void st_ucx_settle(st_ucx_req_t *reqs, int n, double deadline)
{
    int i, pending;

    do {
        ucp_worker_progress(st_ucx_worker);
        pending = 0;
        for (i = 0; i < n; i++) {
            if (reqs[i].ucp != NULL && ucp_request_check_status(reqs[i].ucp) == UCS_INPROGRESS) {
                pending++;
            }
        }
        if (pending != 0) {
            pthread_mutex_unlock(&st_ucx_lock);
            sched_yield();
            pthread_mutex_lock(&st_ucx_lock);
        }
    } while (pending != 0 && st_ucx_now() < deadline);
    for (i = 0; i < n; i++) {
        if (reqs[i].ucp != NULL) {
            ucp_request_free(reqs[i].ucp);
            reqs[i].ucp    = NULL;
            reqs[i].status = ST_ERR_IO;
        }
    }
}

/*
 * Tell the peers of @a lane that it is broken (the peers of a member that
 * stops waiting would wait for it forever: its worker is alive, so UCX sees
 * nothing wrong): an abort notice to every peer the algorithms use, through
 * UCX where its endpoint is healthy and through MPI always (a failed endpoint
 * may look healthy from the other side), given a moment to leave before the
 * endpoints are closed.
 */
static void st_ucx_notify(st_ucx_lane_t *lane)
{
    double deadline = st_ucx_now() + ST_UCX_NOTIFY_S;
    st_ucx_req_t *sent;
    MPI_Request *msent;
    int i, k = 0, m = 0, done = 0;

    if (lane->notified) {
        return;   /* told them already */
    }
    lane->notified = 1;
    msent = calloc((size_t)lane->size, sizeof(*msent));
    for (i = 0; msent != NULL && lane->world != NULL && i < lane->size; i++) {
        if (lane->peers[i].used && lane->world[i] != MPI_UNDEFINED &&
            PMPI_Isend(lane->notice, 2, MPI_UINT64_T, lane->world[i], ST_UCX_MPI_TAG,
                       st_ucx_mworld, &msent[m]) == MPI_SUCCESS) {
            m++;
        }
    }
    sent = calloc((size_t)lane->size, sizeof(*sent));
    for (i = 0; sent != NULL && i < lane->size; i++) {
        if (lane->peers[i].used && lane->peers[i].ep != NULL &&
            atomic_load(&lane->peers[i].failed) == 0 &&
            st_ucx_post(lane, i, 0, ST_UCX_MSG_ABORT, lane->notice, sizeof(lane->notice), 0,
                        &sent[k]) == ST_OK) {
            k++;
        }
    }
    pthread_mutex_lock(&st_ucx_lock);
    st_ucx_settle(sent, k, deadline);   /* the rest complete (cancelled) when the endpoints close */
    pthread_mutex_unlock(&st_ucx_lock);
    free(sent);
    /* small messages leave at once; one that does not (a dead peer) is let go */
    while (m > 0 && PMPI_Testall(m, msent, &done, MPI_STATUSES_IGNORE) == MPI_SUCCESS && !done &&
           st_ucx_now() < deadline) {
        sched_yield();
    }
    for (i = 0; i < m && !done; i++) {
        if (msent[i] != MPI_REQUEST_NULL) {
            PMPI_Request_free(&msent[i]);
        }
    }
    free(msent);
}

/* Lock held: listen for abort notices from any member, for the lane's life. */
static void st_ucx_arm(st_ucx_lane_t *lane)
{
    ucp_request_param_t param;
    ucs_status_ptr_t p;

    for (;;) {
        memset(&param, 0, sizeof(param));
        p = ucp_tag_recv_nbx(st_ucx_worker, lane->abort_in, sizeof(lane->abort_in),
                             st_ucx_tag(lane, 0, ST_UCX_MSG_ABORT, 0), ~(ucp_tag_t)0xfffff,
                             &param);
        if (UCS_PTR_IS_ERR(p)) {
            st_debug("ucx: lane %u: no receive for abort notices: %s", lane->id,
                     ucs_status_string(UCS_PTR_STATUS(p)));
            return;
        }
        if (p != NULL) {
            lane->abort_req.ucp = p;
            return;
        }
        if (lane->abort_in[0] == lane->nonce) {
            lane->broken = 1;   /* a member broke it already */
            return;
        }
        /* a notice for an earlier lane of the same id: listen again */
    }
}

/* Lock held: the abort notice receive completed. Break the lane, unless the
 * notice was meant for an earlier lane of the same id (then listen again). */
static void st_ucx_abort_arrived(st_ucx_lane_t *lane)
{
    ucs_status_t s = ucp_request_check_status(lane->abort_req.ucp);

    ucp_request_free(lane->abort_req.ucp);
    lane->abort_req.ucp = NULL;
    if (s == UCS_OK && lane->abort_in[0] != lane->nonce) {
        st_ucx_arm(lane);
        return;
    }
    st_ucx_set_why("lane rank %llu broke the lane", (unsigned long long)lane->abort_in[1]);
    lane->broken = 1;
}

/* Lock held: stop listening for abort notices. */
static void st_ucx_disarm(st_ucx_lane_t *lane)
{
    void *req = lane->abort_req.ucp;

    if (req == NULL) {
        return;
    }
    ucp_request_cancel(st_ucx_worker, req);
    while (ucp_request_check_status(req) == UCS_INPROGRESS) {
        ucp_worker_progress(st_ucx_worker);
    }
    ucp_request_free(req);
    lane->abort_req.ucp = NULL;
}

/*
 * Break @a lane: cancel the pending receives of @a reqs, force-close every
 * endpoint of the lane (pending sends complete, and the peers notice), and wait
 * (bounded) until every request of @a reqs is complete.
 */
static void st_ucx_abort(st_ucx_lane_t *lane, st_ucx_req_t *reqs, int n)
{
    double deadline = st_ucx_now() + ST_UCX_ABORT_S;
    int i;

    st_ucx_notify(lane);
    pthread_mutex_lock(&st_ucx_lock);
    lane->broken = 1;
    for (i = 0; i < n; i++) {
        if (reqs[i].ucp != NULL && reqs[i].is_recv) {
            ucp_request_cancel(st_ucx_worker, reqs[i].ucp);
        }
    }
    for (i = 0; i < lane->size; i++) {
        st_ucx_ep_kill(lane, i);
    }
    st_ucx_settle(reqs, n, deadline);
    pthread_mutex_unlock(&st_ucx_lock);
    st_debug("ucx: lane %u broken", lane->id);
}

/* ---- public point-to-point ---- */

void st_ucx_lane_next(st_ucx_lane_t *lane)
{
    lane->seq = lane->seq % 0xffff + 1;
}

static st_status_t st_ucx_check_post(st_ucx_lane_t *lane, int peer, unsigned msg,
                                     st_ucx_req_t *req)
{
    if (lane == NULL || req == NULL || peer < 0 || peer >= lane->size ||
        msg >= ST_UCX_MSG_LIMIT) {
        return ST_ERR_INVALID_PARAM;
    }
    if (lane->broken || lane->state != ST_UCX_LANE_ACTIVE) {
        st_ucx_set_why("lane %u is broken", lane->id);
        return ST_ERR_IO;
    }
    return ST_OK;
}

st_status_t st_ucx_isend(st_ucx_lane_t *lane, int peer, unsigned msg, const void *buf,
                         size_t bytes, st_ucx_req_t *req)
{
    st_status_t status = st_ucx_check_post(lane, peer, msg, req);

    return (status != ST_OK) ? status
                             : st_ucx_post(lane, peer, lane->seq, msg, (void*)buf, bytes, 0, req);
}

st_status_t st_ucx_irecv(st_ucx_lane_t *lane, int peer, unsigned msg, void *buf, size_t bytes,
                         st_ucx_req_t *req)
{
    st_status_t status = st_ucx_check_post(lane, peer, msg, req);

    return (status != ST_OK) ? status
                             : st_ucx_post(lane, peer, lane->seq, msg, buf, bytes, 1, req);
}

st_status_t st_ucx_wait(st_ucx_lane_t *lane, st_ucx_req_t *reqs, int n, MPI_Comm progress_comm)
{
    st_status_t status = st_ucx_wait_reqs(lane, reqs, n, progress_comm, 0);

    if (status != ST_OK) {
        st_ucx_abort(lane, reqs, n);
    }
    return status;
}

/* ---- the allreduce ---- */

static st_ucx_req_t *st_ucx_reqs(st_ucx_lane_t *lane, int n)
{
    st_ucx_req_t *reqs;

    if (n > lane->nreqs) {
        reqs = realloc(lane->reqs, (size_t)n * sizeof(*reqs));
        if (reqs == NULL) {
            return NULL;
        }
        lane->reqs  = reqs;
        lane->nreqs = n;
    }
    memset(lane->reqs, 0, (size_t)n * sizeof(*lane->reqs));
    return lane->reqs;
}

static char *st_ucx_scratch(st_ucx_lane_t *lane, size_t bytes)
{
    void *p;

    if (bytes > lane->scratch_size) {
        if ((p = st_mem_alloc(bytes)) == NULL) {
            return NULL;
        }
        st_mem_free(lane->scratch, lane->scratch_size);
        lane->scratch      = p;
        lane->scratch_size = bytes;
    }
    return lane->scratch;
}

/* Largest power of two <= n (n >= 1). */
static int st_ucx_pof2(int n)
{
    int p = 1;

    while (p <= n / 2) {
        p *= 2;
    }
    return p;
}

/*
 * Recursive doubling, MPICH's way for any size: with p = pof2 + rem, ranks
 * 2i and 2i+1 (i < rem) first combine into the odd one, the pof2 remaining
 * ranks exchange and reduce with partner newrank ^ mask, then each odd rank
 * hands the result to its even neighbour. The lower rank's operand is always
 * the left one, so both partners compute the same bits.
 */
static st_status_t st_ucx_rdb(st_ucx_lane_t *lane, char *buf, size_t count, size_t esize,
                              const st_reduce_kernel_t *kernel, MPI_Comm pcomm)
{
    int p = lane->size, r = lane->rank, pof2 = st_ucx_pof2(p), rem = p - pof2;
    size_t bytes = count * esize;
    char *cur = buf, *other, *swap;
    st_ucx_req_t *reqs = st_ucx_reqs(lane, 2);
    st_status_t status = ST_OK;
    int newrank, mask, np, peer;
    unsigned step = 1, last = 1;

    for (mask = 1; mask < pof2; mask <<= 1) {
        last++;   /* fold 0, exchanges 1 ... log2(pof2), hand-over last */
    }

    other = st_ucx_scratch(lane, bytes);
    if (reqs == NULL || other == NULL) {   /* the epoch is taken: the peers must know */
        st_ucx_abort(lane, NULL, 0);
        return ST_ERR_NO_MEMORY;
    }
    if (r < 2 * rem) {
        if (r % 2 == 0) {
            ST_CALL_GOTO(st_ucx_post(lane, r + 1, lane->seq, 0, cur, bytes, 0, &reqs[0]), err,
                         status);
            ST_CALL_GOTO(st_ucx_wait_reqs(lane, reqs, 1, pcomm, 0), err, status);
            newrank = -1;
        } else {
            ST_CALL_GOTO(st_ucx_post(lane, r - 1, lane->seq, 0, other, bytes, 1, &reqs[0]), err,
                         status);
            ST_CALL_GOTO(st_ucx_wait_reqs(lane, reqs, 1, pcomm, 0), err, status);
            kernel->reduce2(other, cur, count);  /* op(x[r-1], x[r]) */
            swap = cur, cur = other, other = swap;
            newrank = r / 2;
        }
    } else {
        newrank = r - rem;
    }
    if (newrank >= 0) {
        for (mask = 1; mask < pof2; mask <<= 1, step++) {
            np   = newrank ^ mask;
            peer = (np < rem) ? np * 2 + 1 : np + rem;
            ST_CALL_GOTO(st_ucx_post(lane, peer, lane->seq, step, other, bytes, 1, &reqs[0]),
                         err, status);
            ST_CALL_GOTO(st_ucx_post(lane, peer, lane->seq, step, cur, bytes, 0, &reqs[1]), err,
                         status);
            ST_CALL_GOTO(st_ucx_wait_reqs(lane, reqs, 2, pcomm, 0), err, status);
            if (peer < r) {
                kernel->reduce2(other, cur, count);  /* op(peer's, mine) */
                swap = cur, cur = other, other = swap;
            } else {
                kernel->reduce2(cur, other, count);  /* op(mine, peer's) */
            }
        }
        if (cur != buf) {
            memcpy(buf, cur, bytes);
        }
    }
    if (r < 2 * rem) {
        /* the odd rank hands the result to its even neighbour */
        ST_CALL_GOTO(st_ucx_post(lane, (r % 2) ? r - 1 : r + 1, lane->seq, last, buf, bytes,
                                 r % 2 == 0, &reqs[0]), err, status);
        ST_CALL_GOTO(st_ucx_wait_reqs(lane, reqs, 1, pcomm, 0), err, status);
    }
    return ST_OK;

err:
    st_ucx_abort(lane, reqs, 2);
    return (status == ST_ERR_NO_MEMORY) ? status : ST_ERR_IO;
}

/* Block @a b of @a p of a vector of @a count elements: [lo, lo + n). */
static void st_ucx_block(size_t count, int p, int b, size_t *lo_p, size_t *n_p)
{
    size_t base = count / (size_t)p, extra = count % (size_t)p;

    *lo_p = (size_t)b * base + ST_MIN((size_t)b, extra);
    *n_p  = base + ((size_t)b < extra);
}

/*
 * Ring: reduce-scatter, then allgather, as a state machine so that several can
 * be in flight on a lane and progress while their caller does other work (the
 * hierarchical allreduce's node steps). At reduce-scatter step s, rank r sends
 * block r - s (its partial sum) to r + 1 and folds block r - s - 1 from r - 1
 * into its own buffer, segment by segment as they arrive (ST_UCX_WINDOW
 * segments received ahead into the ring's scratch). After p - 1 steps rank r
 * holds the finished block r + 1: every element was reduced once, along the
 * ring from its block's first rank. The allgather then copies the finished
 * blocks around, received straight into the buffer. Each ring has its own epoch
 * (tag), so the messages of rings in flight at once never mix.
 */
struct st_ucx_ring {
    st_ucx_lane_t            *lane;
    const st_reduce_kernel_t *kernel;
    char                     *buf;
    size_t                    count, esize, seg;
    unsigned                  seq;      /* the ring's epoch */
    int                       active;   /* started, not complete */
    int                       step;     /* 0 ... 2 (p - 1) - 1; then done */
    int                       posted;   /* the step's messages are posted */
    int                       nsend;    /* reqs[0 .. nsend): the step's sends (allgather: both) */
    size_t                    rlo, rn, nrseg, k;  /* reduce-scatter: block received, segments folded */
    st_ucx_req_t             *reqs;
    int                       nreqs;
    char                     *tmp;
    size_t                    tmp_size;
};

/* An allreduce's arguments and lane: ST_OK with the kernel in @a kernel_p, or the
 * error to return. */
static st_status_t st_ucx_check_args(st_ucx_lane_t *lane, const void *buf, size_t count,
                                     st_type_t type, st_op_t op,
                                     const st_reduce_kernel_t **kernel_p)
{
    if (lane == NULL || (unsigned)type >= ST_TYPE_LAST || (unsigned)op >= ST_OP_LAST ||
        (*kernel_p = st_reduce_kernel(type, op)) == NULL || (buf == NULL && count > 0)) {
        return ST_ERR_INVALID_PARAM;
    }
    if (lane->broken || lane->state != ST_UCX_LANE_ACTIVE) {
        st_ucx_set_why("lane %u is broken", lane->id);
        return ST_ERR_IO;
    }
    return ST_OK;
}

st_ucx_ring_t *st_ucx_ring_new(void)
{
    return calloc(1, sizeof(st_ucx_ring_t));
}

void st_ucx_ring_free(st_ucx_ring_t *ring)
{
    if (ring != NULL) {
        free(ring->reqs);
        st_mem_free(ring->tmp, ring->tmp_size);
        free(ring);
    }
}

int st_ucx_ring_active(const st_ucx_ring_t *ring)
{
    return ring != NULL && ring->active;
}

/* Post the messages of the ring's current step. */
static st_status_t st_ucx_ring_post(st_ucx_ring_t *ring)
{
    st_ucx_lane_t *lane = ring->lane;
    int p = lane->size, r = lane->rank, right = (r + 1) % p, left = (r + p - 1) % p;
    int s = ring->step, t;
    size_t esize = ring->esize, seg = ring->seg, slo, sn, off, len, k;
    unsigned msg;

    memset(ring->reqs, 0, (size_t)ring->nreqs * sizeof(*ring->reqs));
    ring->nsend = 0;
    if (s < p - 1) {
        msg = (unsigned)s % ST_UCX_MSG_LIMIT;
        st_ucx_block(ring->count, p, (r - s + p) % p, &slo, &sn);
        st_ucx_block(ring->count, p, (r - s - 1 + 2 * p) % p, &ring->rlo, &ring->rn);
        for (off = 0; off < sn; off += seg) {
            len = ST_MIN(seg, sn - off);
            ST_CALL(st_ucx_post(lane, right, ring->seq, msg, ring->buf + (slo + off) * esize,
                                len * esize, 0, &ring->reqs[ring->nsend]));
            ring->nsend++;
        }
        ring->nrseg = (ring->rn + seg - 1) / seg;
        ring->k     = 0;
        for (k = 0; k < ring->nrseg && k < ST_UCX_WINDOW; k++) {
            len = ST_MIN(seg, ring->rn - k * seg);
            ST_CALL(st_ucx_post(lane, left, ring->seq, msg, ring->tmp + k * seg * esize,
                                len * esize, 1, &ring->reqs[ring->nsend + (int)k]));
        }
    } else {
        t   = s - (p - 1);
        msg = (unsigned)(p - 1 + t) % ST_UCX_MSG_LIMIT;
        st_ucx_block(ring->count, p, (r + 1 - t + p) % p, &slo, &sn);
        st_ucx_block(ring->count, p, (r - t + p) % p, &ring->rlo, &ring->rn);
        ring->nsend = 2;
        if (ring->rn > 0) {
            ST_CALL(st_ucx_post(lane, left, ring->seq, msg, ring->buf + ring->rlo * esize,
                                ring->rn * esize, 1, &ring->reqs[0]));
        }
        if (sn > 0) {
            ST_CALL(st_ucx_post(lane, right, ring->seq, msg, ring->buf + slo * esize,
                                sn * esize, 0, &ring->reqs[1]));
        }
    }
    ring->posted = 1;
    return ST_OK;
}

/* Do what has arrived, without progressing the worker: 1 done, 0 pending, -1
 * failed (the requests still pending; st_ucx_ring_abort cleans up). */
static int st_ucx_ring_advance(st_ucx_ring_t *ring)
{
    st_ucx_lane_t *lane = ring->lane;
    int p = lane->size, t;
    size_t esize = ring->esize, seg = ring->seg, len;
    st_ucx_req_t *rreq;
    char *slot;

    while (ring->step < 2 * (p - 1)) {
        if (!ring->posted && st_ucx_ring_post(ring) != ST_OK) {
            return -1;
        }
        while (ring->step < p - 1 && ring->k < ring->nrseg) {
            rreq = &ring->reqs[ring->nsend + (int)(ring->k % ST_UCX_WINDOW)];
            t    = st_ucx_test(lane, rreq, 1);
            if (t <= 0) {
                return t;
            }
            slot = ring->tmp + (ring->k % ST_UCX_WINDOW) * seg * esize;
            len  = ST_MIN(seg, ring->rn - ring->k * seg);
            ring->kernel->reduce2(ring->buf + (ring->rlo + ring->k * seg) * esize, slot, len);
            if (ring->k + ST_UCX_WINDOW < ring->nrseg) {
                len = ST_MIN(seg, ring->rn - (ring->k + ST_UCX_WINDOW) * seg);
                if (st_ucx_post(lane, (lane->rank + p - 1) % p, ring->seq,
                                (unsigned)ring->step % ST_UCX_MSG_LIMIT, slot, len * esize, 1,
                                rreq) != ST_OK) {
                    return -1;
                }
            }
            ring->k++;
        }
        t = st_ucx_test(lane, ring->reqs, ring->nsend);
        if (t <= 0) {
            return t;
        }
        ring->step++;
        ring->posted = 0;
    }
    ring->active = 0;
    return 1;
}

st_status_t st_ucx_ring_start(st_ucx_ring_t *ring, st_ucx_lane_t *lane, void *buf, size_t count,
                              st_type_t type, st_op_t op)
{
    const st_reduce_kernel_t *kernel;
    size_t esize, maxblock, tmp;
    int nreq;
    void *p;

    if (ring == NULL || ring->active) {
        return ST_ERR_INVALID_PARAM;
    }
    ST_CALL(st_ucx_check_args(lane, buf, count, type, op, &kernel));
    if (count == 0 || lane->size == 1) {
        return ST_OK;
    }
    esize    = st_type_size(type);
    maxblock = count / (size_t)lane->size + 1;
    ring->seg = ST_MAX(ST_UCX_SEG / esize, 1);
    nreq      = ST_MAX((int)((maxblock + ring->seg - 1) / ring->seg) + ST_UCX_WINDOW, 2);
    tmp       = ST_UCX_WINDOW * ring->seg * esize;
    /* the memory first: once the epoch is taken, the peers count on this rank */
    if (nreq > ring->nreqs) {
        p = realloc(ring->reqs, (size_t)nreq * sizeof(*ring->reqs));
        if (p == NULL) {
            return ST_ERR_NO_MEMORY;
        }
        ring->reqs  = p;
        ring->nreqs = nreq;
    }
    if (tmp > ring->tmp_size) {
        if ((p = st_mem_alloc(tmp)) == NULL) {
            return ST_ERR_NO_MEMORY;
        }
        st_mem_free(ring->tmp, ring->tmp_size);
        ring->tmp      = p;
        ring->tmp_size = tmp;
    }
    st_ucx_lane_next(lane);
    ring->lane   = lane;
    ring->kernel = kernel;
    ring->buf    = buf;
    ring->count  = count;
    ring->esize  = esize;
    ring->seq    = lane->seq;
    ring->step   = 0;
    ring->posted = 0;
    ring->active = 1;
    if (st_ucx_ring_advance(ring) < 0) {
        st_ucx_ring_abort(ring);
        return ST_ERR_IO;
    }
    return ST_OK;
}

int st_ucx_ring_test(st_ucx_ring_t *ring)
{
    if (ring == NULL || !ring->active) {
        return 1;
    }
    st_ucx_progress();
    return st_ucx_ring_advance(ring);
}

void st_ucx_ring_abort(st_ucx_ring_t *ring)
{
    if (ring != NULL && ring->active) {
        ring->active = 0;
        st_ucx_abort(ring->lane, ring->reqs, ring->nreqs);
    }
}

st_status_t st_ucx_ring_wait(st_ucx_ring_t *ring, st_ucx_ring_t *other, MPI_Comm progress_comm)
{
    unsigned long idle = 0, yields = 0;
    int t, u = 1;

    while (ring != NULL && ring->active) {
        int progressed = st_ucx_progress();

        t = st_ucx_ring_advance(ring);
        if (other != NULL && other->active) {
            u = st_ucx_ring_advance(other);
        }
        if (t < 0 || u < 0) {
            st_ucx_ring_abort(ring);
            st_ucx_ring_abort(other);
            return ST_ERR_IO;
        }
        if (t == 0) {
            st_ucx_idle(ring->lane, progressed, &idle, &yields, progress_comm);
        }
    }
    return ST_OK;
}

st_status_t st_ucx_allreduce(st_ucx_lane_t *lane, void *buf, size_t count, st_type_t type,
                             st_op_t op, MPI_Comm progress_comm)
{
    const st_reduce_kernel_t *kernel;
    size_t esize;

    ST_CALL(st_ucx_check_args(lane, buf, count, type, op, &kernel));
    if (count == 0 || lane->size == 1) {
        return ST_OK;
    }
    esize = st_type_size(type);
    if (count * esize <= st_config.ucx_rdb_max) {
        st_ucx_lane_next(lane);
        return st_ucx_rdb(lane, buf, count, esize, kernel, progress_comm);
    }
    if (lane->ring == NULL && (lane->ring = st_ucx_ring_new()) == NULL) {
        return ST_ERR_NO_MEMORY;
    }
    ST_CALL(st_ucx_ring_start(lane->ring, lane, buf, count, type, op));
    return st_ucx_ring_wait(lane->ring, NULL, progress_comm);
}

/* ---- lanes ---- */

int st_ucx_lane_rank(const st_ucx_lane_t *lane)
{
    return lane->rank;
}

int st_ucx_lane_size(const st_ucx_lane_t *lane)
{
    return lane->size;
}

unsigned st_ucx_lane_uses(const st_ucx_lane_t *lane)
{
    return lane->uses;
}

/* Mark the peers the algorithms talk to (the relation is symmetric). */
static void st_ucx_mark_used(st_ucx_lane_t *lane)
{
    int p = lane->size, r = lane->rank, pof2 = st_ucx_pof2(p), rem = p - pof2;
    int newrank, mask, np;

    if (p == 1) {
        return;
    }
    lane->peers[(r + 1) % p].used     = 1;
    lane->peers[(r + p - 1) % p].used = 1;
    if (r < 2 * rem) {
        lane->peers[(r % 2) ? r - 1 : r + 1].used = 1;
        newrank = (r % 2) ? r / 2 : -1;
    } else {
        newrank = r - rem;
    }
    for (mask = 1; newrank >= 0 && mask < pof2; mask <<= 1) {
        np = newrank ^ mask;
        lane->peers[(np < rem) ? np * 2 + 1 : np + rem].used = 1;
    }
}

/*
 * Room among the process's file descriptors for the endpoints of @a lane: over TCP
 * each is a socket to the peer, and the peer's endpoint to this process another
 * (accepted here). UCX that runs out of descriptors fails inside its progress, not
 * at ucp_ep_create: accept() errors printed, an assertion in its TCP transport (a
 * job of 4 ranks on 2 virtual nodes under ulimit -n 64, 50 communicators alive,
 * each with a lane of its own, aborted). A lane that would leave fewer than
 * ST_UCX_FD_MARGIN free is not made (its communicator's inter-node level falls back
 * to MPI). @return 1 where there is room.
 */
static int st_ucx_fd_room(st_ucx_lane_t *lane)
{
    struct rlimit rl;
    struct dirent *e;
    long need = ST_UCX_FD_MARGIN, open = 0;
    DIR *d;
    int i;

    for (i = 0; i < lane->size; i++) {
        need += lane->peers[i].used ? 2 : 0;
    }
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY ||
        rl.rlim_cur >= (rlim_t)1 << 24 || (d = opendir("/proc/self/fd")) == NULL) {
        return 1;   /* no limit to speak of, or none to count against */
    }
    while ((e = readdir(d)) != NULL) {
        open += (e->d_name[0] != '.');
    }
    closedir(d);
    if (open - 1 + need <= (long)rl.rlim_cur) {   /* (the directory's own descriptor) */
        return 1;
    }
    st_ucx_set_why("%ld of the process's %llu file descriptors are open, and the lane's "
                   "endpoints would leave fewer than %d free (ulimit -n)", open - 1,
                   (unsigned long long)rl.rlim_cur, ST_UCX_FD_MARGIN);
    return 0;
}

/* Where the @a size members of @a comm are in st_ucx_mworld (an array to free), or
 * NULL (no notices through MPI, no lane kept) without it or without memory. */
static int *st_ucx_world_ranks(MPI_Comm comm, int size)
{
    MPI_Group mine = MPI_GROUP_NULL, world = MPI_GROUP_NULL;
    int *ranks, *out;
    int i;

    if (st_ucx_mworld == MPI_COMM_NULL) {
        return NULL;
    }
    ranks = malloc((size_t)size * sizeof(*ranks));
    out   = malloc((size_t)size * sizeof(*out));
    if (ranks == NULL || out == NULL || PMPI_Comm_group(comm, &mine) != MPI_SUCCESS ||
        PMPI_Comm_group(st_ucx_mworld, &world) != MPI_SUCCESS) {
        free(out);
        out = NULL;
    } else {
        for (i = 0; i < size; i++) {
            ranks[i] = i;
        }
        if (PMPI_Group_translate_ranks(mine, size, ranks, world, out) != MPI_SUCCESS) {
            free(out);
            out = NULL;
        }
    }
    if (mine != MPI_GROUP_NULL) {
        PMPI_Group_free(&mine);
    }
    if (world != MPI_GROUP_NULL) {
        PMPI_Group_free(&world);
    }
    free(ranks);
    return out;
}

/* Free the lane's memory (endpoints already closed) and release its id. */
static void st_ucx_lane_free(st_ucx_lane_t *lane)
{
    free(lane->world);
    if (lane->id != 0 && !lane->broken && !lane->bye_lost) {
        pthread_mutex_lock(&st_ucx_lock);
        st_ucx_id_set(lane->id, 0);   /* a broken lane's id stays poisoned (and one whose
                                       * goodbye from a failed peer may still come: a
                                       * later lane of the id would take it for its own) */
        pthread_mutex_unlock(&st_ucx_lock);
    }
    free(lane->bye);
    free(lane->bye_in);
    free(lane->closing);
    free(lane->reqs);
    st_mem_free(lane->scratch, lane->scratch_size);
    st_ucx_ring_free(lane->ring);
    free(lane->addrs);
    free(lane->peers);
    free(lane);
}

/* Exchange a message both ways with every used peer, within @a seconds. */
static st_status_t st_ucx_handshake(st_ucx_lane_t *lane, double seconds)
{
    uint64_t *theirs;
    st_ucx_req_t *reqs;
    st_status_t status = ST_OK;
    int i, n = 0;

    theirs = calloc((size_t)lane->size, sizeof(*theirs));
    reqs   = st_ucx_reqs(lane, 2 * lane->size);
    if (theirs == NULL || reqs == NULL) {
        free(theirs);
        st_ucx_set_why("out of memory");
        return ST_ERR_NO_MEMORY;
    }
    for (i = 0; i < lane->size && status == ST_OK; i++) {
        if (!lane->peers[i].used) {
            continue;
        }
        status = st_ucx_post(lane, i, 0, 0, &theirs[i], sizeof(theirs[i]), 1, &reqs[n++]);
        if (status == ST_OK) {
            status = st_ucx_post(lane, i, 0, 0, &lane->me, sizeof(lane->me), 0, &reqs[n++]);
        }
    }
    if (status == ST_OK) {
        status = st_ucx_wait_reqs(lane, reqs, n, MPI_COMM_NULL, st_ucx_now() + seconds);
    }
    for (i = 0; i < lane->size && status == ST_OK; i++) {
        if (lane->peers[i].used && theirs[i] != (uint64_t)i) {
            st_ucx_set_why("handshake: lane rank %d says it is %llu", i,
                           (unsigned long long)theirs[i]);
            status = ST_ERR_IO;
        }
    }
    if (status != ST_OK) {
        st_ucx_abort(lane, reqs, n);   /* nothing may write theirs[] later */
        status = (status == ST_ERR_NO_MEMORY) ? status : ST_ERR_NO_RESOURCE;
    }
    free(theirs);
    return status;
}

/*
 * Agree with the members of @a comm on a lane id free in every one of them:
 * the highest of their lowest free ids, taken where it is still free (another
 * thread may have taken it meanwhile), else retried above it.
 */
static st_status_t st_ucx_lane_id(MPI_Comm comm, unsigned *id_p)
{
    int cand = 1, mine, ok, took;
    unsigned id;

    for (;;) {
        pthread_mutex_lock(&st_ucx_lock);
        for (id = (unsigned)cand; id < ST_UCX_NIDS && st_ucx_id_used(id); id++) {
        }
        pthread_mutex_unlock(&st_ucx_lock);
        mine = (int)id;
        if (ST_MPI_CALL(st_mpi_allreduce(&mine, 1, MPI_INT, MPI_MAX, comm)) != ST_OK) {
            st_ucx_set_why("MPI failed while agreeing on a lane id");
            return ST_ERR_MPI;
        }
        if (mine >= ST_UCX_NIDS) {
            st_ucx_set_why("no free lane id (%d lanes alive or broken)", ST_UCX_NIDS - 1);
            return ST_ERR_NO_RESOURCE;
        }
        pthread_mutex_lock(&st_ucx_lock);
        took = ok = !st_ucx_id_used((unsigned)mine);
        if (took) {
            st_ucx_id_set((unsigned)mine, 1);
        }
        pthread_mutex_unlock(&st_ucx_lock);
        if (ST_MPI_CALL(st_mpi_allreduce(&ok, 1, MPI_INT, MPI_MIN, comm)) != ST_OK) {
            st_ucx_set_why("MPI failed while agreeing on a lane id");
            return ST_ERR_MPI;   /* the id stays taken here: harmless */
        }
        if (ok) {
            *id_p = (unsigned)mine;
            return ST_OK;
        }
        if (took) {
            pthread_mutex_lock(&st_ucx_lock);
            st_ucx_id_set((unsigned)mine, 0);
            pthread_mutex_unlock(&st_ucx_lock);
        }
        cand = mine + 1;
    }
}

/*
 * Lock held: whether @a lane may serve another communicator: 1 when it is whole (not
 * broken, no endpoint failed, no abort notice arrived through UCX or MPI, an endpoint
 * to every peer it talks to) and can be kept (it listens for abort notices and knows
 * its members' ranks in MPI_COMM_WORLD); 0 when whole but not keepable; -1 damaged.
 */
static int st_ucx_lane_healthy(st_ucx_lane_t *lane)
{
    int i;

    if (lane->abort_req.ucp != NULL &&
        ucp_request_check_status(lane->abort_req.ucp) != UCS_INPROGRESS) {
        st_ucx_abort_arrived(lane);   /* (listens again if it was an earlier lane's) */
    }
    if (lane->broken || atomic_load(&lane->nfailed) != 0 || atomic_load(&lane->heard) != 0) {
        return -1;
    }
    for (i = 0; i < lane->size; i++) {
        if (lane->peers[i].used &&
            (lane->peers[i].ep == NULL || atomic_load(&lane->peers[i].failed) != 0)) {
            return -1;
        }
    }
    return lane->abort_req.ucp != NULL && lane->world != NULL;
}

/*
 * Lock not held: destroy @a lane, found damaged where it was to be kept or taken
 * again. Unless broken already, it is broken first (st_ucx_abort: the abort notices
 * go through UCX and MPI): a peer whose copy looks healthy then waits for no goodbye
 * of it, which over an endpoint that failed might never come (before: the peer's copy
 * waited until UCX noticed, or st_ucx_finalize's 10 s).
 */
static void st_ucx_lane_damaged(st_ucx_lane_t *lane)
{
    if (!lane->broken) {
        st_ucx_abort(lane, NULL, 0);
    }
    st_ucx_lane_destroy(lane);
}

/* Lock held: @a lane off the kept list, active again. */
static void st_ucx_unkeep(st_ucx_lane_t *lane)
{
    st_ucx_list_remove(&st_ucx_kept, lane);
    st_ucx_nkept--;
    lane->state = ST_UCX_LANE_ACTIVE;
    st_ucx_list_push(&st_ucx_lanes, lane);
}

void st_ucx_lane_keep(st_ucx_lane_t *lane)
{
    st_ucx_lane_t *old = NULL;
    int keep = 0;

    if (lane == NULL) {
        return;
    }
    st_ucx_mpi_heard();
    pthread_mutex_lock(&st_ucx_lock);
    if (st_ucx_state == ST_UCX_READY && lane->state == ST_UCX_LANE_ACTIVE) {
        keep = st_ucx_lane_healthy(lane);
    }
    if (keep > 0) {
        st_ucx_list_remove(&st_ucx_lanes, lane);
        lane->state = ST_UCX_LANE_KEPT;
        st_ucx_list_push(&st_ucx_kept, lane);
        if (++st_ucx_nkept > ST_UCX_KEEP) {   /* the oldest goes */
            for (old = st_ucx_kept; old->next != NULL; old = old->next) {
            }
            st_ucx_unkeep(old);
        }
    }
    pthread_mutex_unlock(&st_ucx_lock);
    if (keep < 0) {
        st_ucx_lane_damaged(lane);
    } else if (keep == 0) {
        st_ucx_lane_destroy(lane);
    } else if (old != NULL) {
        st_ucx_lane_destroy(old);
    }
}

/*
 * The last lane kept over the processes @a world (their ranks in st_ucx_mworld),
 * this one lane rank @a rank of @a size: off the kept list and active again (the
 * caller uses it, or keeps or destroys it again), or NULL. Such a lane damaged
 * meanwhile (a peer gone) is destroyed instead.
 */
static st_ucx_lane_t *st_ucx_kept_take(const int *world, int rank, int size)
{
    st_ucx_lane_t *l;
    int healthy = 0;

    if (world == NULL) {
        return NULL;
    }
    st_ucx_mpi_heard();
    pthread_mutex_lock(&st_ucx_lock);
    if (st_ucx_kept != NULL && st_ucx_state == ST_UCX_READY) {
        ucp_worker_progress(st_ucx_worker);   /* (a peer's failure, if any, arrives) */
    }
    for (l = st_ucx_kept; l != NULL; l = l->next) {
        if (l->rank == rank && l->size == size &&
            !memcmp(l->world, world, (size_t)size * sizeof(*world))) {
            healthy = (st_ucx_lane_healthy(l) > 0);   /* (kept: it was keepable) */
            st_ucx_unkeep(l);
            break;
        }
    }
    pthread_mutex_unlock(&st_ucx_lock);
    if (l != NULL && !healthy) {
        st_debug("ucx: lane %u: kept, failed since: destroyed", l->id);
        st_ucx_lane_damaged(l);
        l = NULL;
    }
    return l;
}

/* Every kept lane destroyed (each says goodbye to its peers). */
static void st_ucx_kept_retire(void)
{
    st_ucx_lane_t *l;

    for (;;) {
        pthread_mutex_lock(&st_ucx_lock);
        l = st_ucx_kept;
        if (l != NULL) {
            st_ucx_unkeep(l);
        }
        pthread_mutex_unlock(&st_ucx_lock);
        if (l == NULL) {
            return;
        }
        st_ucx_lane_destroy(l);
    }
}

st_status_t st_ucx_lane_create(MPI_Comm comm, st_ucx_lane_t **lane_p)
{
    st_ucx_lane_t *lane = NULL, *kept = NULL;
    st_status_t status = ST_OK;
    char *mine = NULL;
    int *world = NULL;
    long long v[6];
    struct timespec ts;
    int rank, size, i, inter = 1, local = 0, agreed;

    st_config_init();
    st_ucx_why_buf[0] = '\0';
    if (lane_p == NULL || comm == MPI_COMM_NULL ||
        PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter ||
        PMPI_Comm_rank(comm, &rank) != MPI_SUCCESS || PMPI_Comm_size(comm, &size) != MPI_SUCCESS) {
        st_ucx_set_why("not an intracommunicator");
        return ST_ERR_INVALID_PARAM;
    }
    st_ucx_reap();

    /* 1. UCX up here? (agreed, with the longest worker address) */
    if (st_config.ucx == ST_UCX_NO) {
        st_ucx_set_why("disabled by STRATA_UCX=n");
        status = ST_ERR_UNSUPPORTED;
    } else if (size > ST_UCX_MAX_RANKS) {
        st_ucx_set_why("%d ranks: a lane holds at most %d", size, ST_UCX_MAX_RANKS);
        status = ST_ERR_UNSUPPORTED;
    } else {
        pthread_mutex_lock(&st_ucx_lock);
        status = st_ucx_start();
        pthread_mutex_unlock(&st_ucx_lock);
    }
    if (status == ST_OK) {
        lane = calloc(1, sizeof(*lane));
        if (lane == NULL || (lane->peers = calloc((size_t)size, sizeof(*lane->peers))) == NULL) {
            free(lane);
            lane   = NULL;
            status = ST_ERR_NO_MEMORY;
            st_ucx_set_why("out of memory");
        }
    }
    if (status == ST_OK) {
        world = st_ucx_world_ranks(comm, size);
        kept  = st_ucx_kept_take(world, rank, size);
    }
    local = (status != ST_OK);
    clock_gettime(CLOCK_REALTIME, &ts);
    v[0] = status;
    v[1] = (status == ST_OK) ? -(long long)st_ucx_address_len : 0;
    v[2] = -(long long)(((uint64_t)ts.tv_nsec << 20 ^ (uint64_t)ts.tv_sec << 1 ^
                         (uint64_t)getpid() << 40) >> 2);   /* the highest one wins */
    /* a kept lane every rank holds: its nonce is the lowest and the highest offered
     * (a rank without one offers 0); and the latest epoch any of them used */
    v[3] = (kept != NULL) ? (long long)kept->nonce : 0;
    v[4] = -v[3];
    v[5] = (kept != NULL) ? -(long long)kept->seq : 0;
    if (ST_MPI_CALL(st_mpi_allreduce(v, 6, MPI_LONG_LONG, MPI_MIN, comm)) != ST_OK) {
        v[0] = ST_ERR_MPI;
        v[3] = 0;
    }
    agreed = (v[3] != 0 && v[3] == -v[4]);
    if (kept != NULL && agreed && v[0] == ST_OK) {
        st_ucx_lane_free(lane);   /* (the new one, unused: no id, no endpoint) */
        free(world);
        pthread_mutex_lock(&st_ucx_lock);
        kept->seq = (unsigned)(-v[5]) % 0xffff + 1;   /* (past the last one's messages) */
        kept->uses++;
        pthread_mutex_unlock(&st_ucx_lock);
        st_debug("ucx: lane %u: rank %d of %d, spin %d (kept from a communicator freed)",
                 kept->id, rank, size, kept->spin);
        *lane_p = kept;
        return ST_OK;
    }
    if (kept != NULL) {
        /* not held by every rank (a member still used it, or it failed on one since):
         * it goes, its goodbyes said (kept, its peers would wait for them until
         * finalize); or every rank holds it but the lane fails for another reason */
        if (!agreed) {
            st_debug("ucx: lane %u: kept, not on every rank of the lane: a new one",
                     kept->id);
            st_ucx_lane_destroy(kept);
        } else {
            st_ucx_lane_keep(kept);
        }
        kept = NULL;
    }
    if (v[0] != ST_OK) {
        if (status == ST_OK) {
            st_ucx_set_why("UCX is unavailable on another rank of the lane");
        }
        status = (st_status_t)v[0];
        goto out_free;
    }
    for (i = 0; i < size; i++) {
        lane->peers[i].lane = lane;
    }
    lane->rank      = rank;
    lane->size      = size;
    lane->me        = (uint64_t)rank;
    lane->nonce     = (uint64_t)-v[2];
    lane->notice[0] = lane->nonce;
    lane->notice[1] = (uint64_t)rank;
    lane->addr_len  = (size_t)-v[1];
    lane->uses      = 1;
    lane->spin      = (st_config.spin_count >= 0) ? st_config.spin_count
                      : st_oversubscribed(0)      ? 0
                                                  : ST_UCX_SPIN_DEFAULT;

    /* 2. worker addresses, padded to the longest */
    lane->addrs = malloc((size_t)size * lane->addr_len);
    mine        = calloc(1, lane->addr_len);
    i           = (lane->addrs != NULL && mine != NULL);
    if (ST_MPI_CALL(st_mpi_allreduce(&i, 1, MPI_INT, MPI_MIN, comm)) != ST_OK || !i) {
        st_ucx_set_why("out of memory for %d worker addresses", size);
        status = ST_ERR_NO_MEMORY;
        goto out_free;
    }
    memcpy(mine, st_ucx_address, st_ucx_address_len);
    if (ST_MPI_CALL(st_mpi_allgather(mine, (int)lane->addr_len, lane->addrs, comm)) != ST_OK) {
        st_ucx_set_why("MPI failed while exchanging worker addresses");
        status = ST_ERR_MPI;
        goto out_free;
    }
    ST_CALL_GOTO(st_ucx_lane_id(comm, &lane->id), out_free, status);
    lane->seq   = 1;   /* epoch 0 is the handshake's and the goodbye's */
    lane->world = world;
    world       = NULL;

    /* 3. endpoints to the peers the algorithms use, checked both ways */
    st_ucx_mark_used(lane);
    i = st_ucx_fd_room(lane);   /* agreed before any rank connects (or waits for one) */
    if (ST_MPI_CALL(st_mpi_allreduce(&i, 1, MPI_INT, MPI_MIN, comm)) != ST_OK) {
        st_ucx_set_why("MPI failed while agreeing on the lane's descriptors");
        status = ST_ERR_MPI;
        goto out_free;
    }
    if (!i) {
        if (st_ucx_why_buf[0] == '\0') {
            st_ucx_set_why("another rank of the lane has no room for its endpoints' "
                           "descriptors (ulimit -n)");
        }
        status = ST_ERR_NO_RESOURCE;
        goto out_free;
    }
    pthread_mutex_lock(&st_ucx_lock);
    for (i = 0; i < size && status == ST_OK; i++) {
        if (lane->peers[i].used) {
            status = st_ucx_connect(lane, i);
        }
    }
    pthread_mutex_unlock(&st_ucx_lock);
    if (status == ST_OK) {
        status = st_ucx_handshake(lane, ST_UCX_CONNECT_S);
    }
    local = (status != ST_OK);
    i     = status;
    if (ST_MPI_CALL(st_mpi_allreduce(&i, 1, MPI_INT, MPI_MIN, comm)) != ST_OK) {
        i = ST_ERR_MPI;
    }
    if (i != ST_OK) {
        if (status == ST_OK) {
            st_ucx_set_why("another rank of the lane could not connect");
        }
        status = (st_status_t)i;
        pthread_mutex_lock(&st_ucx_lock);
        lane->broken = 1;   /* handshake messages may be in flight: poison the id */
        for (i = 0; i < size; i++) {
            st_ucx_ep_kill(lane, i);
        }
        pthread_mutex_unlock(&st_ucx_lock);
        goto out_free;
    }
    pthread_mutex_lock(&st_ucx_lock);
    st_ucx_arm(lane);
    st_ucx_list_push(&st_ucx_lanes, lane);
    pthread_mutex_unlock(&st_ucx_lock);
    free(mine);
    st_debug("ucx: lane %u: rank %d of %d, spin %d", lane->id, rank, size, lane->spin);
    *lane_p = lane;
    return ST_OK;

out_free:
    free(mine);
    free(world);
    if (lane != NULL) {
        st_ucx_lane_free(lane);
    }
    if (st_config.ucx == ST_UCX_YES && (local || rank == 0)) {
        st_warn("no UCX lane (%s): the inter-node level falls back to MPI", st_ucx_why_buf);
    } else {
        st_debug("ucx: no lane: %s (%s)", strata_status_string(status), st_ucx_why_buf);
    }
    return status;
}

/* Lock held: close the endpoints of @a lane (flushing them unless @a force). */
static void st_ucx_lane_close_eps(st_ucx_lane_t *lane, int force)
{
    ucp_request_param_t param;
    ucs_status_ptr_t p;
    int i;

    memset(&param, 0, sizeof(param));
    for (i = 0; i < lane->size; i++) {
        if (lane->peers[i].ep == NULL) {
            continue;
        }
        if (force || lane->closing == NULL || atomic_load(&lane->peers[i].failed) != 0) {
            st_ucx_ep_kill(lane, i);
            continue;
        }
        p = ucp_ep_close_nbx(lane->peers[i].ep, &param);
        lane->peers[i].ep = NULL;
        if (UCS_PTR_IS_PTR(p)) {
            lane->closing[i] = p;
        }
    }
}

/*
 * Lock held: move @a lane (closing) on as far as it goes without waiting.
 * @return 1 when it is closed and off the list (the caller frees it, unlocked).
 */
static int st_ucx_lane_step(st_ucx_lane_t *lane)
{
    ucs_status_t s;
    int i, pending = 0;

    if (lane->state == ST_UCX_LANE_CLOSING) {
        if (lane->abort_req.ucp != NULL &&
            ucp_request_check_status(lane->abort_req.ucp) != UCS_INPROGRESS) {
            st_ucx_abort_arrived(lane);
        }
        if (atomic_load(&lane->heard) != 0) {
            lane->broken = 1;   /* a member broke it (said through MPI): no goodbye from it */
        }
        for (i = 0; i < lane->nbye; i++) {
            if (lane->bye[i].ucp == NULL) {
                continue;
            }
            s = ucp_request_check_status(lane->bye[i].ucp);
            if (s == UCS_INPROGRESS) {
                /* a failed peer, or one that broke the lane, sends no goodbye */
                if (!lane->bye[i].is_recv ||
                    (!lane->broken && atomic_load(&lane->peers[lane->bye[i].peer].failed) == 0)) {
                    pending++;
                    continue;
                }
                lane->bye_lost |= !lane->broken;
                ucp_request_cancel(st_ucx_worker, lane->bye[i].ucp);
                if (ucp_request_check_status(lane->bye[i].ucp) == UCS_INPROGRESS) {
                    pending++;
                    continue;
                }
            }
            ucp_request_free(lane->bye[i].ucp);
            lane->bye[i].ucp = NULL;
        }
        if (pending != 0) {
            return 0;
        }
        st_ucx_disarm(lane);
        st_ucx_lane_close_eps(lane, 0);
        lane->state = ST_UCX_LANE_FLUSHING;
    }
    for (i = 0; i < lane->size; i++) {
        if (lane->closing[i] == NULL) {
            continue;
        }
        if (ucp_request_check_status(lane->closing[i]) == UCS_INPROGRESS) {
            pending++;
            continue;
        }
        ucp_request_free(lane->closing[i]);
        lane->closing[i] = NULL;
    }
    if (pending != 0) {
        return 0;
    }
    st_ucx_list_remove(&st_ucx_closing, lane);
    return 1;
}

/* Progress the worker once and move every closing lane on. @return 1 while
 * some lane is still closing. */
static int st_ucx_reap(void)
{
    st_ucx_lane_t *lane, *next, *done = NULL;
    int more;

    pthread_mutex_lock(&st_ucx_lock);
    if (st_ucx_state == ST_UCX_READY && st_ucx_closing != NULL) {
        ucp_worker_progress(st_ucx_worker);
        for (lane = st_ucx_closing; lane != NULL; lane = next) {
            next = lane->next;
            if (st_ucx_lane_step(lane)) {
                lane->next = done;
                done       = lane;
            }
        }
    }
    more = (st_ucx_closing != NULL);
    pthread_mutex_unlock(&st_ucx_lock);
    for (lane = done; lane != NULL; lane = next) {
        next = lane->next;
        st_ucx_lane_free(lane);
    }
    return more;
}

void st_ucx_lane_destroy(st_ucx_lane_t *lane)
{
    int i, n = 0, ok = 1, ready;

    if (lane == NULL) {
        return;
    }
    pthread_mutex_lock(&st_ucx_lock);
    st_ucx_list_remove(&st_ucx_lanes, lane);
    ready = (st_ucx_state == ST_UCX_READY);
    pthread_mutex_unlock(&st_ucx_lock);
    if (!ready) {
        st_ucx_lane_free(lane);   /* after st_ucx_finalize: endpoints are gone */
        return;
    }
    lane->bye     = calloc(2 * (size_t)lane->size, sizeof(*lane->bye));
    lane->bye_in  = calloc((size_t)lane->size, sizeof(*lane->bye_in));
    lane->closing = calloc((size_t)lane->size, sizeof(*lane->closing));
    if (lane->bye == NULL || lane->bye_in == NULL || lane->closing == NULL) {
        ok = 0;
    }
    /* goodbyes: a peer's arrives once it is done with the lane */
    for (i = 0; ok && !lane->broken && i < lane->size; i++) {
        if (!lane->peers[i].used || lane->peers[i].ep == NULL) {
            continue;
        }
        if (st_ucx_post(lane, i, 0, ST_UCX_MSG_BYE, &lane->bye_in[i], sizeof(uint64_t), 1,
                        &lane->bye[n]) == ST_OK) {
            n++;
        }
        if (st_ucx_post(lane, i, 0, ST_UCX_MSG_BYE, &lane->bye_out, sizeof(uint64_t), 0,
                        &lane->bye[n]) == ST_OK) {
            n++;
        }
    }
    lane->nbye = n;
    pthread_mutex_lock(&st_ucx_lock);
    if (!ok) {
        st_ucx_disarm(lane);
        st_ucx_lane_close_eps(lane, 1);
        pthread_mutex_unlock(&st_ucx_lock);
        st_ucx_lane_free(lane);
        return;
    }
    lane->state = ST_UCX_LANE_CLOSING;
    st_ucx_list_push(&st_ucx_closing, lane);
    pthread_mutex_unlock(&st_ucx_lock);
    st_ucx_reap();
}

void st_ucx_lane_fail(st_ucx_lane_t *lane, int peer)
{
    if (lane == NULL || peer < 0 || peer >= lane->size) {
        return;
    }
    pthread_mutex_lock(&st_ucx_lock);
    st_ucx_ep_error(&lane->peers[peer], lane->peers[peer].ep, UCS_ERR_ENDPOINT_TIMEOUT);
    pthread_mutex_unlock(&st_ucx_lock);
}

/* Until no destroyed lane is still closing, or @a deadline: the peers' goodbyes,
 * or their abort notices through MPI (a member that broke a lane says no goodbye). */
static void st_ucx_wait_closing(double deadline)
{
    while (st_ucx_reap() && st_ucx_now() < deadline) {
        sched_yield();
        st_ucx_mpi_heard();
    }
}

int st_ucx_quiesce(double seconds)
{
    double deadline = st_ucx_now() + seconds;
    st_ucx_lane_t *lanes[2], *lane;
    int i, k, n = 0;

    st_ucx_kept_retire();
    st_ucx_wait_closing(deadline);
    pthread_mutex_lock(&st_ucx_lock);
    lanes[0] = st_ucx_lanes;
    lanes[1] = st_ucx_closing;
    for (k = 0; k < 2; k++) {
        for (lane = lanes[k]; lane != NULL; lane = lane->next) {
            for (i = 0; i < lane->size; i++) {
                n += (lane->peers[i].ep != NULL);
            }
        }
    }
    pthread_mutex_unlock(&st_ucx_lock);
    return n;
}

/*
 * Lock held: receive and drop the messages nobody will receive (extra abort
 * notices, a broken lane's late messages), so that the worker goes quietly.
 */
static void st_ucx_drain(double seconds)
{
    double deadline = st_ucx_now() + seconds;
    ucp_request_param_t param;
    ucp_tag_recv_info_t info;
    ucp_tag_message_h msg;
    ucs_status_ptr_t p;
    char *buf;

    memset(&param, 0, sizeof(param));
    while (st_ucx_now() < deadline) {
        ucp_worker_progress(st_ucx_worker);
        msg = ucp_tag_probe_nb(st_ucx_worker, 0, 0, 1, &info);
        if (msg == NULL) {
            break;
        }
        buf = malloc(ST_MAX(info.length, 1));
        if (buf == NULL) {
            break;
        }
        p = ucp_tag_msg_recv_nbx(st_ucx_worker, buf, info.length, msg, &param);
        if (UCS_PTR_IS_PTR(p)) {
            while (ucp_request_check_status(p) == UCS_INPROGRESS && st_ucx_now() < deadline) {
                ucp_worker_progress(st_ucx_worker);
            }
            if (ucp_request_check_status(p) == UCS_INPROGRESS) {
                ucp_request_cancel(st_ucx_worker, p);
                ucp_worker_progress(st_ucx_worker);
                ucp_request_free(p);   /* buf leaks: the request may still write it */
                break;
            }
            ucp_request_free(p);
        }
        free(buf);
    }
}

void st_ucx_init_world(void)
{
    MPI_Comm c;

    /* a split (equal keys keep the ranks' order), not a dup: no attribute copied */
    if (!st_config.enable || st_config.ucx == ST_UCX_NO || st_ucx_mworld != MPI_COMM_NULL ||
        PMPI_Comm_split(MPI_COMM_WORLD, 0, 0, &c) != MPI_SUCCESS) {
        return;
    }
    PMPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
    st_ucx_mworld = c;
}

/* Drop the abort notices nobody received, and the communicator. */
static void st_ucx_mworld_free(void)
{
    uint64_t in[2];

    if (st_ucx_mworld == MPI_COMM_NULL) {
        return;
    }
    while (st_ucx_mpi_take(in)) {
    }
    PMPI_Comm_free(&st_ucx_mworld);   /* (sets it to MPI_COMM_NULL) */
}

void st_ucx_finalize(void)
{
    st_ucx_lane_t *lane, *next;
    double deadline = st_ucx_now() + ST_UCX_CLOSE_S;
    int i;

    st_ucx_kept_retire();   /* (every rank at once: the goodbyes meet) */
    pthread_mutex_lock(&st_ucx_lock);
    if (st_ucx_state != ST_UCX_READY) {
        st_ucx_state = ST_UCX_DONE;
        pthread_mutex_unlock(&st_ucx_lock);
        st_ucx_mworld_free();
        return;
    }
    /* lanes never destroyed: their endpoints go now */
    for (lane = st_ucx_lanes; lane != NULL; lane = lane->next) {
        st_debug("ucx: lane %u still alive at finalize", lane->id);
        st_ucx_disarm(lane);
        st_ucx_lane_close_eps(lane, 1);
    }
    pthread_mutex_unlock(&st_ucx_lock);
    st_ucx_wait_closing(deadline);   /* (lanes closing: the peers' goodbyes) */
    st_ucx_mworld_free();
    pthread_mutex_lock(&st_ucx_lock);
    for (lane = st_ucx_closing; lane != NULL; lane = next) {
        next = lane->next;
        st_debug("ucx: lane %u: peers did not say goodbye; closing anyway", lane->id);
        st_ucx_disarm(lane);
        st_ucx_lane_close_eps(lane, 1);
        for (i = 0; i < lane->nbye; i++) {
            if (lane->bye[i].ucp != NULL) {
                if (lane->bye[i].is_recv) {
                    ucp_request_cancel(st_ucx_worker, lane->bye[i].ucp);
                }
                ucp_request_free(lane->bye[i].ucp);
            }
        }
        for (i = 0; i < lane->size; i++) {
            if (lane->closing[i] != NULL) {
                ucp_request_free(lane->closing[i]);
            }
        }
        st_ucx_list_remove(&st_ucx_closing, lane);
        pthread_mutex_unlock(&st_ucx_lock);
        st_ucx_lane_free(lane);
        pthread_mutex_lock(&st_ucx_lock);
    }
    st_ucx_drain(1.0);
    if (st_opal_unregister != NULL) {   /* (its calls from now on find the lock taken) */
        st_opal_unregister(st_ucx_opal_cb);
        st_opal_unregister = NULL;
    }
    ucp_worker_release_address(st_ucx_worker, st_ucx_address);
    ucp_worker_destroy(st_ucx_worker);
    ucp_cleanup(st_ucx_context);
    st_ucx_address = NULL;
    st_ucx_worker  = NULL;
    st_ucx_context = NULL;
    st_ucx_state   = ST_UCX_DONE;
    pthread_mutex_unlock(&st_ucx_lock);
}

#else /* !HAVE_UCX */

st_status_t st_ucx_lane_create(MPI_Comm comm, st_ucx_lane_t **lane_p)
{
    st_ucx_set_why("built without UCX");
    return ST_ERR_UNSUPPORTED;
}

void st_ucx_lane_destroy(st_ucx_lane_t *lane)
{
}

void st_ucx_lane_keep(st_ucx_lane_t *lane)
{
}

int st_ucx_lane_rank(const st_ucx_lane_t *lane)
{
    return 0;
}

int st_ucx_lane_size(const st_ucx_lane_t *lane)
{
    return 1;
}

unsigned st_ucx_lane_uses(const st_ucx_lane_t *lane)
{
    return 0;
}

st_status_t st_ucx_allreduce(st_ucx_lane_t *lane, void *buf, size_t count, st_type_t type,
                             st_op_t op, MPI_Comm progress_comm)
{
    return ST_ERR_UNSUPPORTED;
}

void st_ucx_lane_next(st_ucx_lane_t *lane)
{
}

void st_ucx_lane_fail(st_ucx_lane_t *lane, int peer)
{
}

void st_ucx_init_world(void)
{
}

st_ucx_ring_t *st_ucx_ring_new(void)
{
    return NULL;
}

void st_ucx_ring_free(st_ucx_ring_t *ring)
{
}

st_status_t st_ucx_ring_start(st_ucx_ring_t *ring, st_ucx_lane_t *lane, void *buf, size_t count,
                              st_type_t type, st_op_t op)
{
    return ST_ERR_UNSUPPORTED;
}

int st_ucx_ring_active(const st_ucx_ring_t *ring)
{
    return 0;
}

int st_ucx_ring_test(st_ucx_ring_t *ring)
{
    return -1;
}

void st_ucx_ring_abort(st_ucx_ring_t *ring)
{
}

st_status_t st_ucx_ring_wait(st_ucx_ring_t *ring, st_ucx_ring_t *other, MPI_Comm progress_comm)
{
    return ST_ERR_UNSUPPORTED;
}

st_status_t st_ucx_isend(st_ucx_lane_t *lane, int peer, unsigned msg, const void *buf,
                         size_t bytes, st_ucx_req_t *req)
{
    return ST_ERR_UNSUPPORTED;
}

st_status_t st_ucx_irecv(st_ucx_lane_t *lane, int peer, unsigned msg, void *buf, size_t bytes,
                         st_ucx_req_t *req)
{
    return ST_ERR_UNSUPPORTED;
}

st_status_t st_ucx_wait(st_ucx_lane_t *lane, st_ucx_req_t *reqs, int n, MPI_Comm progress_comm)
{
    return ST_ERR_UNSUPPORTED;
}

int st_ucx_quiesce(double seconds)
{
    return 0;
}

void st_ucx_finalize(void)
{
}

#endif /* HAVE_UCX */
