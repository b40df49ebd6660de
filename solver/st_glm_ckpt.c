/*
 * Checkpoints of a training run: the whole state between two rounds, written
 * atomically, read back so that the resumed run takes the steps the uninterrupted
 * one would have taken (bit for bit where the run itself is deterministic).
 *
 * Layout (little-endian 64-bit words; solver/README.md has the table):
 *
 *     0     the 512-byte header: magic, version, sizes, the run's identity (the data:
 *           rows, features, nonzeros, precision, checksum; the partition: ranks,
 *           threads, thread mode; the parameters that steer the steps), its progress
 *           (rounds, objectives, times), the section table (offset, elements and
 *           checksum of each section) and the checksum of the header's other words
 *     512   the sections, back to back, 8-byte elements: the rank table (4 words per
 *           rank: first row, rows, workers, first feature), then the trainer's arrays
 *           (dual: v, alpha, random states; ProxCoCoA+: w, margins, feature orders,
 *           random states; the one-rank L1 solver: w, and lasso's and elastic
 *           net's residual). Version 1 had the dual trainer's row orders after alpha
 *           (each epoch's order now comes from the random state alone), version 2
 *           not the residual; both are still read.
 *
 * No gaps: every byte is under a checksum. The checksums are the binary CSR format's
 * (a sum of mixed per-element terms, st_glm_sum64), so each rank sums the slice it
 * wrote or verifies and the ranks add them.
 *
 * Writing (collective): rank 0 creates "<path>.tmp.<pid>.<n>" at its final size, every
 * rank pwrites its slice of every section and fsyncs, the ranks add their checksums,
 * rank 0 writes the header, fsyncs, renames the file over <path> and fsyncs the
 * directory. A run killed at any point leaves the previous checkpoint whole (and
 * perhaps a temporary file, which the next successful write removes). Reading: rank
 * 0 reads the header and broadcasts it, so every rank judges the same bytes; each
 * rank reads its slices; the checksums are added over the ranks; only then is the
 * rank table compared.
 */
#include "config.h"

#include "st_glm.h"
#include "st_glm_file.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define ST_GLM_CKPT_MAGIC   "STGLMCKP"
#define ST_GLM_CKPT_VERSION 3   /* 2: without the dual trainer's row orders; 3: with
                                   the serial solver's residual (lasso, elastic net) */
#define ST_GLM_CKPT_HEADER  512
#define ST_GLM_CKPT_WORDS   (ST_GLM_CKPT_HEADER / 8)
#define ST_GLM_CKPT_SALT    0x8cb92ba72f3d8dd7ULL

/* Header words. */
enum {
    ST_GLM_W_MAGIC = 0,
    ST_GLM_W_VERSION,
    ST_GLM_W_HEADER_SIZE,
    ST_GLM_W_FILE_SIZE,
    ST_GLM_W_ID,                                   /* ST_GLM_CKPT_ID1 words */
    ST_GLM_W_ROUNDS = ST_GLM_W_ID + ST_GLM_CKPT_ID1,
    ST_GLM_W_CERTIFIED,
    ST_GLM_W_PRIMAL,
    ST_GLM_W_DUAL,
    ST_GLM_W_GAP,
    ST_GLM_W_SECONDS,
    ST_GLM_W_COMM_SECONDS,
    ST_GLM_W_NSEC,
    ST_GLM_W_SEC,                                  /* offset, elements, checksum each */
    /* words added in the space the sections leave free, zero in older checkpoints
     * (which are thus flat runs' and stay readable) */
    ST_GLM_W_LAYOUT = ST_GLM_CKPT_WORDS - 6 - ST_GLM_CKPT_STATE, /* identity word 21 */
    ST_GLM_W_STATE,                                /* the trainer's */
    ST_GLM_W_INNER = ST_GLM_CKPT_WORDS - 5,        /* the inner rounds in use */
    ST_GLM_W_ID2,                                  /* identity words ST_GLM_CKPT_ID1 .. */
    ST_GLM_W_SUM = ST_GLM_CKPT_WORDS - 1           /* of words 0 .. ST_GLM_W_SUM - 1 */
};

_Static_assert(ST_GLM_W_SEC + 3 * ST_GLM_CKPT_MAX_SECS <= ST_GLM_W_LAYOUT &&
               ST_GLM_W_STATE + ST_GLM_CKPT_STATE == ST_GLM_W_INNER &&
               ST_GLM_W_ID2 + ST_GLM_ID_LAYOUT - ST_GLM_CKPT_ID1 == ST_GLM_W_SUM &&
               ST_GLM_ID_LAYOUT + 1 == ST_GLM_CKPT_ID,
               "checkpoint header words overlap");

/* The header word of identity word @a i. */
static int st_glm_ckpt_id_word(int i)
{
    return (i < ST_GLM_CKPT_ID1)    ? ST_GLM_W_ID + i
           : (i < ST_GLM_ID_LAYOUT) ? ST_GLM_W_ID2 + i - ST_GLM_CKPT_ID1
                                    : ST_GLM_W_LAYOUT;
}

/* The identity words, in order, and how a message shows them. */
enum { ST_GLM_T_INT, ST_GLM_T_HEX, ST_GLM_T_REAL, ST_GLM_T_NAME, ST_GLM_T_MODE,
       ST_GLM_T_KIND, ST_GLM_T_SCHED, ST_GLM_T_AUTO };

static const struct {
    const char *what;   /* NULL: the second word of a name */
    int         type;
} st_glm_ckpt_fields[ST_GLM_CKPT_ID] = {
    {"trainer", ST_GLM_T_KIND},
    {"solver", ST_GLM_T_NAME},
    {NULL, ST_GLM_T_NAME},
    {"rows", ST_GLM_T_INT},
    {"features", ST_GLM_T_INT},
    {"nonzeros", ST_GLM_T_INT},
    {"value precision", ST_GLM_T_INT},
    {"data checksum", ST_GLM_T_HEX},
    {"ranks", ST_GLM_T_INT},
    {"threads per rank", ST_GLM_T_INT},
    {"local solver (thread mode, --gpu, or the L1 models' --method)", ST_GLM_T_MODE},
    {"lambda", ST_GLM_T_REAL},
    {"eta (svr, sqsvr: epsilon)", ST_GLM_T_REAL},
    {"bias", ST_GLM_T_REAL},
    {"weight of the +1 examples", ST_GLM_T_REAL},
    {"weight of the -1 examples", ST_GLM_T_REAL},
    {"local epochs", ST_GLM_T_INT},
    {"seed", ST_GLM_T_INT},
    {"schedule", ST_GLM_T_SCHED},
    {"nodes", ST_GLM_T_INT},
    {"inner rounds", ST_GLM_T_AUTO},
    {"ranks on each node (a hash)", ST_GLM_T_HEX},
};

#define ST_GLM_ID_RANKS 8   /* the identity word of the rank count */
#define ST_GLM_ID_GPU   0x100   /* in the local solver's word: the GPU's (rows above 16) */
#define ST_GLM_ID_PN    0x200   /* ... the L1 models' block proximal Newton (else ProxCoCoA+) */

static const char *const st_glm_ckpt_trainers[] = {
    "?", "CoCoA+ over rows", "ProxCoCoA+ over features", "the serial L1 solver"
};

static uint64_t st_glm_bits(double x)
{
    uint64_t u;

    memcpy(&u, &x, 8);
    return u;
}

static double st_glm_real(uint64_t u)
{
    double x;

    memcpy(&x, &u, 8);
    return x;
}

static uint64_t st_glm_ckpt_header_sum(const uint64_t *h)
{
    return st_glm_sum64(h, 8, ST_GLM_W_SUM, 0, 0);
}

static uint64_t st_glm_ckpt_salt(int s)
{
    return (uint64_t)(s + 1) * ST_GLM_CKPT_SALT;
}

/* ---- setting up ---- */

static int st_glm_host_le(void)
{
    const uint16_t one = 1;
    unsigned char b;

    memcpy(&b, &one, 1);
    return b == 1;
}

/* Rank 0: is @a path absent, or a checkpoint (which this run may replace)? */
static void st_glm_ckpt_probe(const st_glm_ckpt_t *ck, const char *source, st_glm_err_t *err)
{
    struct stat st, st_src;
    char magic[8];
    int fd, rc;

    if (stat(ck->path, &st) != 0) {
        if (errno != ENOENT) {
            st_glm_err_set(err, ST_ERR_IO, ST_GLM_ERR_KEY_FIRST, "%s: cannot use it as the "
                           "checkpoint: %s", ck->path, strerror(errno));
        }
        return;
    }
    if (source != NULL && stat(source, &st_src) == 0 && st.st_dev == st_src.st_dev &&
        st.st_ino == st_src.st_ino) {
        st_glm_err_set(err, ST_ERR_INVALID_PARAM, ST_GLM_ERR_KEY_FIRST, "%s: the checkpoint "
                       "file is the training data: choose another checkpoint file", ck->path);
        return;
    }
    fd = S_ISREG(st.st_mode) ? open(ck->path, O_RDONLY | O_CLOEXEC) : -1;
    rc = (fd >= 0) ? st_glm_pread_all(fd, magic, 8, 0) : -1;
    if (fd >= 0) {
        close(fd);
    }
    if (rc != 0 || memcmp(magic, ST_GLM_CKPT_MAGIC, 8) != 0) {
        st_glm_err_set(err, ST_ERR_INVALID_PARAM, ST_GLM_ERR_KEY_FIRST, "%s exists and is "
                       "not a Strata checkpoint: not overwriting it (choose another "
                       "checkpoint file)", ck->path);
        return;
    }
    if (ck->verbose) {
        st_glm_print("checkpoint: %s exists; this run replaces it (resume continues from "
                     "it instead)\n", ck->path);
    }
}

strata_status_t st_glm_ckpt_init(st_glm_ckpt_t *ck, int trainer, const st_glm_model_t *loss,
                                 const strata_glm_problem_t *prob,
                                 const strata_glm_param_t *param, MPI_Comm comm, char *msg,
                                 size_t msg_len)
{
    const st_glm_data_t *data = prob->data;
    int dual = (trainer == ST_GLM_CKPT_DUAL);
    uint64_t *id = ck->id, sum = 0;
    st_glm_err_t err;
    st_status_t status;

    memset(ck, 0, sizeof(*ck));
    if (param->checkpoint == NULL || (param->checkpoint_every <= 0 && !param->resume)) {
        return STRATA_OK;
    }
    status = st_glm_comm_init(comm, &ck->c);
    if (status == ST_OK) {
        status = st_glm_data_checksum(data, comm, &sum);
    }
    if (status != ST_OK) {
        st_glm_msg(msg, msg_len, "checkpoint: %s", strata_status_string(status));
        return status;
    }
    if (!st_glm_host_le()) {
        st_glm_msg(msg, msg_len, "checkpoints need a little-endian host");
        return STRATA_ERR_UNSUPPORTED;
    }
    ck->path       = param->checkpoint;
    ck->every      = param->checkpoint_every;
    ck->max_rounds = param->max_rounds;
    ck->verbose    = param->verbose && ck->c.rank == 0;
    id[0]          = (uint64_t)trainer;
    memcpy(&id[1], loss->name, ST_MIN(strlen(loss->name), (size_t)16));   /* 2 words */
    id[3]  = (uint64_t)data->n_rows_global;
    id[4]  = (uint64_t)data->n_cols;
    id[5]  = (uint64_t)data->nnz_global;
    id[6]  = (uint64_t)data->prec;
    id[7]  = sum;
    id[ST_GLM_ID_RANKS] = (uint64_t)ck->c.size;
    id[9]  = dual ? (uint64_t)param->threads : 0;
    /* the local solver: the threads' mode, or the GPU's with its rows in flight (a
       CPU run's words as before the GPU's were kept: its checkpoints still match) */
    id[10] = ((dual && param->threads > 1) ? (uint64_t)param->thread_mode : 0) |
             (param->gpu ? ST_GLM_ID_GPU | ((uint64_t)param->gpu_rows << 16) : 0) |
             ((trainer == ST_GLM_CKPT_PRIMAL && param->method != STRATA_GLM_METHOD_CD)
                  ? ST_GLM_ID_PN : 0);
    id[11] = st_glm_bits(param->lambda);
    /* the dual models have no eta: the SVR models' epsilon there (0 for the others) */
    id[12] = st_glm_bits(dual ? st_glm_model_eps(loss, param)
                              : st_glm_model_eta(loss, param->eta));
    id[13] = st_glm_bits(param->bias > 0 ? param->bias : -1.0);
    id[14] = st_glm_bits(loss->classification ? param->weight_pos : 1.0);
    id[15] = st_glm_bits(loss->classification ? param->weight_neg : 1.0);
    id[16] = (trainer == ST_GLM_CKPT_SERIAL) ? 0 : (uint64_t)param->local_epochs;
    id[17] = (trainer == ST_GLM_CKPT_SERIAL) ? 0 : param->seed;   /* serial: cyclic */
    st_glm_ckpt_add(ck, "rank table", ck->entry, (int64_t)ST_GLM_CKPT_ENTRY * ck->c.size,
                    (int64_t)ST_GLM_CKPT_ENTRY * ck->c.rank,
                    (int64_t)ST_GLM_CKPT_ENTRY * (ck->c.rank + 1),
                    (int64_t)ST_GLM_CKPT_ENTRY * ck->c.rank,
                    (int64_t)ST_GLM_CKPT_ENTRY * (ck->c.rank + 1));

    st_glm_err_init(&err);
    if (!param->resume && ck->c.rank == 0) {
        st_glm_ckpt_probe(ck, data->source, &err);
    }
    status = st_glm_err_agree(&ck->c, &err);
    if (status != ST_OK) {
        st_glm_err_report(&err, msg, msg_len);
        ck->path = NULL;
    }
    return status;
}

void st_glm_ckpt_schedule(st_glm_ckpt_t *ck, int nodes, int inner_rounds, uint64_t layout)
{
    ck->id[ST_GLM_ID_SCHEDULE] = 1;
    ck->id[ST_GLM_ID_NODES]    = (uint64_t)nodes;
    ck->id[ST_GLM_ID_INNER]    = (uint64_t)inner_rounds;
    ck->id[ST_GLM_ID_LAYOUT]   = layout;
}

void st_glm_ckpt_entry(st_glm_ckpt_t *ck, int64_t row0, int64_t rows, int64_t workers,
                       int64_t col0)
{
    ck->entry[0] = (uint64_t)row0;
    ck->entry[1] = (uint64_t)rows;
    ck->entry[2] = (uint64_t)workers;
    ck->entry[3] = (uint64_t)col0;
}

/* The sections of format @a version, in the file's order (that of the adds). */
static void st_glm_ckpt_view(st_glm_ckpt_t *ck, uint64_t version)
{
    int s;

    ck->nsec = 0;
    for (s = 0; s < ck->nall; s++) {
        if ((uint64_t)ck->all[s].since <= version &&
            (ck->all[s].upto == 0 || (uint64_t)ck->all[s].upto >= version)) {
            ck->sec[ck->nsec++] = ck->all[s];
        }
    }
}

void st_glm_ckpt_add(st_glm_ckpt_t *ck, const char *name, void *buf, int64_t count,
                     int64_t blo, int64_t bhi, int64_t lo, int64_t hi)
{
    st_glm_ckpt_sec_t *sec = &ck->all[ck->nall++];

    sec->name  = name;
    sec->buf   = buf;
    sec->count = count;
    sec->blo   = blo;
    sec->bhi   = bhi;
    sec->lo    = lo;
    sec->hi    = hi;
    sec->upto  = 0;
    sec->since = 1;
    st_glm_ckpt_view(ck, ST_GLM_CKPT_VERSION);
}

void st_glm_ckpt_retired(st_glm_ckpt_t *ck, int version)
{
    ck->all[ck->nall - 1].upto = version;
    st_glm_ckpt_view(ck, ST_GLM_CKPT_VERSION);
}

void st_glm_ckpt_since(st_glm_ckpt_t *ck, int version)
{
    ck->all[ck->nall - 1].since = version;
    st_glm_ckpt_view(ck, ST_GLM_CKPT_VERSION);
}

/* Section offsets and the file size: the sections follow the header back to back. */
static uint64_t st_glm_ckpt_layout(const st_glm_ckpt_t *ck, uint64_t *off)
{
    uint64_t o = ST_GLM_CKPT_HEADER;
    int s;

    for (s = 0; s < ck->nsec; s++) {
        off[s] = o;
        o     += 8 * (uint64_t)ck->sec[s].count;
    }
    return o;
}

/* ---- writing ---- */

/* Every rank: my slices into the temporary file, fsynced; my partial checksums. */
static void st_glm_ckpt_write_slices(const st_glm_ckpt_t *ck, int fd, const char *tmp,
                                     const uint64_t *off, uint64_t *sums, st_glm_err_t *err)
{
    const st_glm_ckpt_sec_t *sec;
    const char *p;
    int s, rc = 0;

    for (s = 0; s < ck->nsec; s++) {
        sec     = &ck->sec[s];
        p       = (const char*)sec->buf + 8 * (sec->lo - sec->blo);
        sums[s] = st_glm_sum64(p, 8, sec->hi - sec->lo, sec->lo, st_glm_ckpt_salt(s));
        if (rc == 0 && sec->hi > sec->lo) {
            rc = st_glm_pwrite_all(fd, p, 8 * (size_t)(sec->hi - sec->lo),
                                   off[s] + 8 * (uint64_t)sec->lo);
        }
    }
    if (rc == 0 && fsync(fd) != 0) {
        rc = errno;
    }
    if (rc != 0) {
        st_glm_err_set(err, ST_ERR_IO, ST_GLM_ERR_KEY_FIRST, "%s: cannot write the "
                       "checkpoint (%s): %s", ck->path, tmp, strerror(rc));
    }
}

/* Rank 0: the header, then the rename over the old checkpoint. */
static void st_glm_ckpt_commit(const st_glm_ckpt_t *ck, st_glm_out_t *out, const uint64_t *off,
                               uint64_t size, const uint64_t *sums,
                               const strata_glm_info_t *info, int certified, st_glm_err_t *err)
{
    uint64_t h[ST_GLM_CKPT_WORDS];
    int s, rc;

    memset(h, 0, sizeof(h));
    memcpy(&h[ST_GLM_W_MAGIC], ST_GLM_CKPT_MAGIC, 8);
    h[ST_GLM_W_VERSION]      = ST_GLM_CKPT_VERSION;
    h[ST_GLM_W_HEADER_SIZE]  = ST_GLM_CKPT_HEADER;
    h[ST_GLM_W_FILE_SIZE]    = size;
    for (s = 0; s < ST_GLM_CKPT_ID; s++) {
        h[st_glm_ckpt_id_word(s)] = ck->id[s];
    }
    h[ST_GLM_W_INNER]        = (uint64_t)info->inner_rounds;
    memcpy(&h[ST_GLM_W_STATE], ck->state, sizeof(ck->state));
    h[ST_GLM_W_ROUNDS]       = (uint64_t)info->rounds;
    h[ST_GLM_W_CERTIFIED]    = (uint64_t)(certified != 0);
    h[ST_GLM_W_PRIMAL]       = st_glm_bits(info->primal);
    h[ST_GLM_W_DUAL]         = st_glm_bits(info->dual);
    h[ST_GLM_W_GAP]          = st_glm_bits(info->gap);
    h[ST_GLM_W_SECONDS]      = st_glm_bits(info->seconds);
    h[ST_GLM_W_COMM_SECONDS] = st_glm_bits(info->comm_seconds);
    h[ST_GLM_W_NSEC]         = (uint64_t)ck->nsec;
    for (s = 0; s < ck->nsec; s++) {
        h[ST_GLM_W_SEC + 3 * s]     = off[s];
        h[ST_GLM_W_SEC + 3 * s + 1] = (uint64_t)ck->sec[s].count;
        h[ST_GLM_W_SEC + 3 * s + 2] = sums[s];
    }
    h[ST_GLM_W_SUM] = st_glm_ckpt_header_sum(h);
    rc = st_glm_pwrite_all(out->fd, h, sizeof(h), 0);
    if (rc == 0) {
        rc = st_glm_out_commit(out);
    }
    if (rc != 0) {
        st_glm_err_set(err, ST_ERR_IO, ST_GLM_ERR_KEY_FIRST, "%s: cannot write the "
                       "checkpoint: %s (%s)", ck->path, strerror(rc),
                       out->replaced ? st_glm_out_lost(out) : "the previous one is unchanged");
    }
}

strata_status_t st_glm_ckpt_save(st_glm_ckpt_t *ck, const strata_glm_info_t *info,
                                 int certified, char *msg, size_t msg_len)
{
    uint64_t off[ST_GLM_CKPT_MAX_SECS], sums[ST_GLM_CKPT_MAX_SECS], size;
    double t0 = st_glm_now();
    st_glm_out_t out;
    st_glm_err_t err;
    st_status_t status;

    if (st_glm_mpi_failed()) {   /* (the state holds this rank's sums only) */
        st_glm_msg(msg, msg_len, "an MPI call failed: no checkpoint written");
        return STRATA_ERR_MPI;
    }
    st_glm_err_init(&err);
    size = st_glm_ckpt_layout(ck, off);
    /* 1. rank 0 creates the temporary file; the others open it by the name it sends */
    status = st_glm_out_open_all(&out, ck->path, size, &ck->c, "the checkpoint", &err);
    if (status == ST_OK) {
        /* 2. every rank writes its slices */
        st_glm_ckpt_write_slices(ck, out.fd, out.tmp, off, sums, &err);
        status = st_glm_err_agree(&ck->c, &err);
    }
    if (status == ST_OK) {
        /* 3. rank 0 adds the checksums, writes the header and renames */
        st_glm_allreduce(ck->c.comm, sums, ck->nsec, MPI_UINT64_T, MPI_SUM);
        if (ck->c.rank == 0) {
            st_glm_ckpt_commit(ck, &out, off, size, sums, info, certified, &err);
        }
        status = st_glm_err_agree(&ck->c, &err);
    }
    if (out.fd >= 0 || out.tmp != NULL) {
        st_glm_out_close(&out);   /* (rank 0: the temporary too, unless renamed) */
    }
    if (status != ST_OK) {
        st_glm_err_report(&err, msg, msg_len);
    } else if (ck->verbose) {
        st_glm_print("checkpoint: round %d written to %s (%.1f MB, %.3f s)\n", info->rounds,
                     ck->path, (double)size / 1e6, st_glm_now() - t0);
    }
    return status;
}

/* ---- reading ---- */

static void st_glm_ckpt_show(int type, const uint64_t *w, uint64_t trainer, char *out,
                             size_t len)
{
    char name[17];

    switch (type) {
    case ST_GLM_T_HEX:  snprintf(out, len, "%016" PRIx64, w[0]); break;
    case ST_GLM_T_REAL: {   /* the shortest that reads back as the same double */
        char real[ST_GLM_REAL_TEXT_LEN];

        st_glm_data_real_text(real, st_glm_real(w[0]));
        snprintf(out, len, "%s", real);
        break;
    }
    case ST_GLM_T_NAME:
        memcpy(name, w, 16);
        name[16] = '\0';
        st_glm_token_quote(name, strlen(name), out, len);
        break;
    case ST_GLM_T_MODE:
        if (trainer == ST_GLM_CKPT_PRIMAL) {
            snprintf(out, len, "%s", (w[0] & ST_GLM_ID_PN) ? "block proximal Newton "
                     "(--method newton)" : "ProxCoCoA+'s coordinate descent (--method cd)");
        } else if (w[0] & ST_GLM_ID_GPU) {
            snprintf(out, len, "the GPU's, %" PRIu64 " rows in flight%s", w[0] >> 16,
                     (w[0] >> 16) == 0 ? " (the default)" : "");
        } else {
            snprintf(out, len, "%s", w[0] == 0 ? "replicas" : "shared");
        }
        break;
    case ST_GLM_T_SCHED: snprintf(out, len, "%s", w[0] == 0 ? "flat" : "hierarchical"); break;
    case ST_GLM_T_AUTO:
        if (w[0] == 0) {
            snprintf(out, len, "auto");
        } else {
            snprintf(out, len, "%" PRIu64, w[0]);
        }
        break;
    case ST_GLM_T_KIND:
        snprintf(out, len, "%s", w[0] < 4 ? st_glm_ckpt_trainers[w[0]] : "?");
        break;
    default:            snprintf(out, len, "%" PRIu64, w[0]); break;
    }
}

/* Every rank, on the same header: is it a checkpoint of this run? */
static void st_glm_ckpt_check_header(const st_glm_ckpt_t *ck, const uint64_t *h,
                                     uint64_t fsize, st_glm_err_t *err)
{
    uint64_t off[ST_GLM_CKPT_MAX_SECS], size = st_glm_ckpt_layout(ck, off);
    char diff[ST_GLM_DATA_MSG_LEN], a[64], b[64];
    size_t used = 0;
    int i, s, ndiff = 0, other, sched;

    if (fsize < 8 || memcmp(&h[ST_GLM_W_MAGIC], ST_GLM_CKPT_MAGIC, 8) != 0) {
        st_glm_err_set(err, ST_ERR_IO, ST_GLM_ERR_KEY_FIRST, "%s: not a Strata checkpoint",
                       ck->path);
        return;
    }
    if (fsize < ST_GLM_CKPT_HEADER) {
        st_glm_err_set(err, ST_ERR_IO, ST_GLM_ERR_KEY_FIRST, "%s: truncated checkpoint "
                       "(%" PRIu64 " bytes)", ck->path, fsize);
        return;
    }
    /* every version keeps the magic, the version and the header's checksum (word 63,
     * of words 0-62) where they are: an unknown version under a checksum that holds is
     * a newer Strata's; under one that does not, a damaged word (before, any damage to
     * the version word was reported as a version this build cannot read) */
    if (h[ST_GLM_W_VERSION] < 1 || h[ST_GLM_W_VERSION] > ST_GLM_CKPT_VERSION) {
        if (h[ST_GLM_W_VERSION] > ST_GLM_CKPT_VERSION &&
            h[ST_GLM_W_SUM] == st_glm_ckpt_header_sum(h)) {
            st_glm_err_set(err, ST_ERR_UNSUPPORTED, ST_GLM_ERR_KEY_FIRST, "%s: checkpoint "
                           "version %" PRIu64 ", written by a newer Strata; this Strata reads "
                           "versions 1 to %d", ck->path, h[ST_GLM_W_VERSION],
                           ST_GLM_CKPT_VERSION);
        } else {
            st_glm_err_set(err, ST_ERR_IO, ST_GLM_ERR_KEY_FIRST, "%s: corrupted checkpoint "
                           "(its version word reads %" PRIu64 ", and the header's checksum "
                           "does not match)", ck->path, h[ST_GLM_W_VERSION]);
        }
        return;
    }
    if (h[ST_GLM_W_SUM] != st_glm_ckpt_header_sum(h)) {
        st_glm_err_set(err, ST_ERR_IO, ST_GLM_ERR_KEY_FIRST, "%s: corrupted checkpoint "
                       "(the header's checksum does not match)", ck->path);
        return;
    }
    if (h[ST_GLM_W_HEADER_SIZE] != ST_GLM_CKPT_HEADER) {
        st_glm_err_set(err, ST_ERR_IO, ST_GLM_ERR_KEY_FIRST, "%s: corrupted checkpoint "
                       "(header size %" PRIu64 ")", ck->path, h[ST_GLM_W_HEADER_SIZE]);
        return;
    }
    if (fsize != h[ST_GLM_W_FILE_SIZE]) {
        st_glm_err_set(err, ST_ERR_IO, ST_GLM_ERR_KEY_FIRST, "%s: %s checkpoint (%" PRIu64
                       " bytes, the header says %" PRIu64 ")", ck->path,
                       fsize < h[ST_GLM_W_FILE_SIZE] ? "truncated" : "corrupted", fsize,
                       h[ST_GLM_W_FILE_SIZE]);
        return;
    }
    /* another solver or trainer: the other fields differ as a consequence; another
     * schedule: its node count, inner rounds and layout (a flat run has none) */
    other   = (memcmp(&h[ST_GLM_W_ID], ck->id, 3 * 8) != 0);
    sched   = (h[st_glm_ckpt_id_word(ST_GLM_ID_SCHEDULE)] != ck->id[ST_GLM_ID_SCHEDULE]);
    diff[0] = '\0';
    for (i = 0; i < ST_GLM_CKPT_ID; i++) {
        int words = (st_glm_ckpt_fields[i].type == ST_GLM_T_NAME) ? 2 : 1;

        if (st_glm_ckpt_fields[i].what == NULL || (other && i > 2 && i != ST_GLM_ID_RANKS) ||
            (sched && i > ST_GLM_ID_SCHEDULE) ||
            (i == ST_GLM_ID_LAYOUT && h[st_glm_ckpt_id_word(i)] == 0) ||  /* not recorded */
            memcmp(&h[st_glm_ckpt_id_word(i)], &ck->id[i], 8 * (size_t)words) == 0) {
            continue;
        }
        st_glm_ckpt_show(st_glm_ckpt_fields[i].type, &h[st_glm_ckpt_id_word(i)],
                         h[st_glm_ckpt_id_word(0)], a, sizeof(a));
        st_glm_ckpt_show(st_glm_ckpt_fields[i].type, &ck->id[i], ck->id[0], b, sizeof(b));
        if (used < sizeof(diff)) {
            used += (size_t)snprintf(diff + used, sizeof(diff) - used, "%s%s %s (this run: %s)",
                                     ndiff ? "; " : "", st_glm_ckpt_fields[i].what, a, b);
        }
        ndiff++;
    }
    if (ndiff > 0) {
        st_glm_err_set(err, ST_ERR_INVALID_PARAM, ST_GLM_ERR_KEY_FIRST, "%s: the checkpoint "
                       "is of another run: %s", ck->path, diff);
        return;
    }
    /* the same run has the same sections: anything else is damage */
    if (h[ST_GLM_W_NSEC] != (uint64_t)ck->nsec || size != fsize) {
        st_glm_err_set(err, ST_ERR_IO, ST_GLM_ERR_KEY_FIRST, "%s: corrupted checkpoint (its "
                       "sections are not this run's)", ck->path);
        return;
    }
    for (s = 0; s < ck->nsec; s++) {
        if (h[ST_GLM_W_SEC + 3 * s] != off[s] ||
            h[ST_GLM_W_SEC + 3 * s + 1] != (uint64_t)ck->sec[s].count) {
            st_glm_err_set(err, ST_ERR_IO, ST_GLM_ERR_KEY_FIRST, "%s: corrupted checkpoint "
                           "(the %s section is not this run's)", ck->path, ck->sec[s].name);
            return;
        }
    }
    /* the run ends at max_rounds: it cannot go back to an earlier round */
    if (h[ST_GLM_W_ROUNDS] > (uint64_t)ck->max_rounds) {
        st_glm_err_set(err, ST_ERR_INVALID_PARAM, ST_GLM_ERR_KEY_FIRST, "%s: the checkpoint "
                       "is after round %" PRIu64 ", past this run's last (%d rounds): resume with "
                       "at least %" PRIu64 " rounds (that round's model), or train from the "
                       "first round without resume", ck->path, h[ST_GLM_W_ROUNDS],
                       ck->max_rounds, h[ST_GLM_W_ROUNDS]);
    }
}

/* Every rank: my slices of the sections (the rank table's line into @a entry). */
static void st_glm_ckpt_read_slices(const st_glm_ckpt_t *ck, int fd, const uint64_t *h,
                                    uint64_t *entry, uint64_t *sums, st_glm_err_t *err)
{
    const st_glm_ckpt_sec_t *sec;
    int s, rc = 0;
    char *p;

    for (s = 0; s < ck->nsec; s++) {
        sec = &ck->sec[s];
        p   = (s == 0) ? (char*)entry : (char*)sec->buf;
        if (rc == 0 && sec->bhi > sec->blo) {
            rc = st_glm_pread_all(fd, p, 8 * (size_t)(sec->bhi - sec->blo),
                                  h[ST_GLM_W_SEC + 3 * s] + 8 * (uint64_t)sec->blo);
        }
        sums[s] = st_glm_sum64(p + 8 * (sec->lo - sec->blo), 8, sec->hi - sec->lo, sec->lo,
                               st_glm_ckpt_salt(s));
    }
    if (rc != 0) {
        st_glm_err_set(err, ST_ERR_IO, ST_GLM_ERR_KEY_FIRST, "%s: cannot read the checkpoint: "
                       "%s", ck->path, rc < 0 ? "truncated" : strerror(rc));
    }
}

strata_status_t st_glm_ckpt_load(st_glm_ckpt_t *ck, strata_glm_info_t *info_p,
                                 int *certified_p, char *msg, size_t msg_len)
{
    uint64_t h[ST_GLM_CKPT_WORDS], sums[ST_GLM_CKPT_MAX_SECS], entry[ST_GLM_CKPT_ENTRY];
    uint64_t fsize = 0;
    struct stat st;
    st_glm_err_t err;
    st_status_t status;
    int fd = -1, s, rc;

    st_glm_err_init(&err);
    memset(h, 0, sizeof(h));
    memset(entry, 0, sizeof(entry));
    /* 1. rank 0 reads the header; every rank judges the same bytes (opened without
       blocking: a named pipe given as the checkpoint waited for a writer for ever) */
    if (ck->c.rank == 0) {
        fd = open(ck->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
        if (fd < 0 && errno == ENOENT) {
            st_glm_err_set(&err, ST_ERR_NOT_FOUND, ST_GLM_ERR_KEY_FIRST, "%s: no checkpoint "
                           "to resume from (one is written after every checkpoint_every "
                           "rounds; train without resume to start from the first round)",
                           ck->path);
        } else if (fd < 0 || fstat(fd, &st) != 0) {
            st_glm_err_set(&err, ST_ERR_IO, ST_GLM_ERR_KEY_FIRST, "%s: cannot read the "
                           "checkpoint: %s", ck->path, strerror(errno));
        } else if (!S_ISREG(st.st_mode)) {
            st_glm_err_set(&err, ST_ERR_INVALID_PARAM, ST_GLM_ERR_KEY_FIRST, "%s: not a "
                           "checkpoint: not a regular file", ck->path);
        } else {
            fsize = (uint64_t)st.st_size;
            rc    = st_glm_pread_all(fd, h, (size_t)ST_MIN(fsize, sizeof(h)), 0);
            if (rc > 0) {
                st_glm_err_set(&err, ST_ERR_IO, ST_GLM_ERR_KEY_FIRST, "%s: cannot read the "
                               "checkpoint: %s", ck->path, strerror(rc));
            }
        }
    }
    status = st_glm_err_agree(&ck->c, &err);
    if (status == ST_OK && ck->c.comm != MPI_COMM_NULL) {
        ST_GLM_MPI(MPI_Bcast(h, (int)sizeof(h), MPI_BYTE, 0, ck->c.comm));
        ST_GLM_MPI(MPI_Bcast(&fsize, 1, MPI_UINT64_T, 0, ck->c.comm));
        status = st_glm_mpi_failed() ? ST_ERR_MPI : ST_OK;
    }
    if (status == ST_OK) {
        /* an older version's sections, if the header is one (else it is refused) */
        if (fsize >= 16 && h[ST_GLM_W_VERSION] >= 1) {
            st_glm_ckpt_view(ck, h[ST_GLM_W_VERSION]);
        }
        st_glm_ckpt_check_header(ck, h, fsize, &err);
        status = st_glm_err_agree(&ck->c, &err);
    }
    /* 2. every rank reads its slices and sums what it verifies */
    if (status == ST_OK) {
        if (fd < 0) {
            fd = open(ck->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
        }
        if (fd < 0) {
            st_glm_err_set(&err, ST_ERR_IO, ST_GLM_ERR_KEY_FIRST, "%s: cannot read the "
                           "checkpoint: %s", ck->path, strerror(errno));
        } else {
            st_glm_ckpt_read_slices(ck, fd, h, entry, sums, &err);
        }
        status = st_glm_err_agree(&ck->c, &err);
    }
    if (fd >= 0) {
        close(fd);
    }
    /* 3. the checksums over all ranks, then the partition */
    if (status == ST_OK) {
        st_glm_allreduce(ck->c.comm, sums, ck->nsec, MPI_UINT64_T, MPI_SUM);
        for (s = 0; s < ck->nsec; s++) {
            if (sums[s] != h[ST_GLM_W_SEC + 3 * s + 2]) {
                st_glm_err_set(&err, ST_ERR_IO, ST_GLM_ERR_KEY_FIRST, "%s: corrupted "
                               "checkpoint (the checksum of the %s does not match)",
                               ck->path, ck->sec[s].name);
                break;
            }
        }
        if (s == ck->nsec && memcmp(entry, ck->entry, sizeof(entry)) != 0) {
            st_glm_err_set(&err, ST_ERR_INVALID_PARAM, ck->c.rank, "%s: the checkpoint is of "
                           "another partition: rank %d held rows [%" PRIu64 ", %" PRIu64
                           "), %" PRIu64 " worker(s), features from %" PRIu64 " (this run: "
                           "[%" PRIu64 ", %" PRIu64 "), %" PRIu64 ", %" PRIu64 ")", ck->path,
                           ck->c.rank, entry[0], entry[0] + entry[1], entry[2], entry[3],
                           ck->entry[0], ck->entry[0] + ck->entry[1], ck->entry[2],
                           ck->entry[3]);
        }
        status = st_glm_err_agree(&ck->c, &err);
    }
    st_glm_ckpt_view(ck, ST_GLM_CKPT_VERSION);   /* the next save writes this version */
    if (status != ST_OK) {
        st_glm_err_report(&err, msg, msg_len);
        return status;
    }
    memset(info_p, 0, sizeof(*info_p));
    info_p->rounds       = (int)h[ST_GLM_W_ROUNDS];
    info_p->primal       = st_glm_real(h[ST_GLM_W_PRIMAL]);
    info_p->dual         = st_glm_real(h[ST_GLM_W_DUAL]);
    info_p->gap          = st_glm_real(h[ST_GLM_W_GAP]);
    info_p->seconds      = st_glm_real(h[ST_GLM_W_SECONDS]);
    info_p->comm_seconds = st_glm_real(h[ST_GLM_W_COMM_SECONDS]);
    info_p->nodes        = (int)h[ST_GLM_W_ID2 + ST_GLM_ID_NODES - ST_GLM_CKPT_ID1];
    info_p->inner_rounds = (int)h[ST_GLM_W_INNER];
    memcpy(ck->state, &h[ST_GLM_W_STATE], sizeof(ck->state));
    *certified_p         = (h[ST_GLM_W_CERTIFIED] != 0);
    ck->loaded           = (int)h[ST_GLM_W_VERSION];
    if (ck->verbose) {
        st_glm_print("checkpoint: resuming from %s after round %d\n", ck->path,
                     info_p->rounds);
    }
    return STRATA_OK;
}

int st_glm_ckpt_stopped(const strata_glm_param_t *param, strata_glm_info_t *info,
                        int certified)
{
    info->converged = certified && info->gap <= param->tol * fabs(info->primal);
    return info->converged || info->rounds >= param->max_rounds;
}

int st_glm_ckpt_order_ok(const int64_t *order, int64_t n, int64_t lo)
{
    unsigned char *seen = calloc((size_t)ST_MAX(n, 1), 1);
    int64_t i;
    int ok = (seen != NULL);

    for (i = 0; ok && i < n; i++) {
        ok = (order[i] >= lo && order[i] < lo + n && !seen[order[i] - lo]);
        if (ok) {
            seen[order[i] - lo] = 1;
        }
    }
    free(seen);
    return ok;
}
