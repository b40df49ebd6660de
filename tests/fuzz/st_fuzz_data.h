/*
 * Shared by the data-reader targets (fuzz_svm.c, fuzz_bin.c): the collective read.
 *
 * The targets read serially (MPI_COMM_NULL). When the replay driver runs under
 * mpirun with --mpi (the tests/fuzz/NAME_mpi-N.npN tests), each input is read again over
 * MPI_COMM_WORLD, every rank holding the same file, and compared with the serial
 * read: the same status and message (but for the file's name, each rank's own), the
 * same totals, and each rank's block of rows, in rank order, equal to the serial
 * rows it covers. libFuzzer never initializes MPI: there the check does nothing.
 */
#ifndef ST_FUZZ_DATA_H
#define ST_FUZZ_DATA_H

#include "st_fuzz.h"
#include "st_glm_data.h"

#include <mpi.h>

typedef st_status_t (*st_fuzz_reader_t)(const char *path, const st_glm_data_opts_t *opts,
                                        MPI_Comm comm, char *msg, size_t msg_len,
                                        st_glm_data_t **data_p);

/* A message past the file's name: its first ':' after the name (names have none). */
static inline const char *st_fuzz_msg_rest(const char *msg)
{
    const char *p = strstr(msg, "/proc/self/fd/"), *c;

    if (p == NULL) {
        p = strstr(msg, "/tmp/strata-fuzz.");
    }
    c = strchr(p != NULL ? p : msg, ':');
    return c != NULL ? c : msg;
}

static inline void st_fuzz_data_mpi(st_fuzz_reader_t reader, const char *path,
                                    const st_glm_data_opts_t *opts, st_status_t rc0,
                                    const char *msg0, const st_glm_data_t *d0)
{
    static st_glm_data_t sentinel;
    char msg[ST_GLM_DATA_MSG_LEN];
    st_glm_data_t *d = &sentinel;
    int64_t mine[2], *all, i, k, next = 0;
    int init = 0, fini = 0, size, rank, r;
    st_status_t rc;

    MPI_Initialized(&init);
    MPI_Finalized(&fini);
    if (!init || fini) {
        return;
    }
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    msg[0] = '\0';
    rc = reader(path, opts, MPI_COMM_WORLD, msg, sizeof(msg), &d);
    ST_FUZZ_CHECK(rc == rc0, "%d ranks: status %d (%s), serially %d (%s)", size, (int)rc, msg,
                  (int)rc0, msg0);
    if (rc != ST_OK) {
        ST_FUZZ_CHECK(d == &sentinel, "%d ranks: the result was set on failure", size);
        ST_FUZZ_CHECK(!strcmp(st_fuzz_msg_rest(msg), st_fuzz_msg_rest(msg0)),
                      "%d ranks: '%s', serially '%s'", size, msg, msg0);
        return;
    }
    ST_FUZZ_CHECK(d->n_rows_global == d0->n_rows && d->nnz_global == d0->nnz &&
                  d->n_cols == d0->n_cols && d->prec == d0->prec &&
                  d->label_kind == d0->label_kind && d->format == d0->format &&
                  d->zero_one == d0->zero_one,
                  "%d ranks: totals differ from the serial read", size);
    /* the blocks: contiguous, in rank order, covering every row */
    all = malloc((size_t)size * 2 * sizeof(*all));
    ST_FUZZ_CHECK(all != NULL, "out of memory");
    mine[0] = d->row_offset;
    mine[1] = d->n_rows;
    MPI_Allgather(mine, 2, MPI_INT64_T, all, 2, MPI_INT64_T, MPI_COMM_WORLD);
    for (r = 0; r < size; r++) {
        ST_FUZZ_CHECK(all[2 * r] == next && all[2 * r + 1] >= 0, "%d ranks: rank %d holds rows "
                      "%lld+%lld, expected from %lld", size, r, (long long)all[2 * r],
                      (long long)all[2 * r + 1], (long long)next);
        next += all[2 * r + 1];
    }
    ST_FUZZ_CHECK(next == d0->n_rows, "%d ranks hold %lld rows, serially %lld", size,
                  (long long)next, (long long)d0->n_rows);
    free(all);
    for (i = 0; i < d->n_rows; i++) {
        int64_t g = d->row_offset + i, n = d->indptr[i + 1] - d->indptr[i];
        size_t vsize = d->prec == 32 ? 4 : 8;
        const char *v = d->prec == 32 ? (const char*)d->val32 : (const char*)d->val64;
        const char *v0 = d0->prec == 32 ? (const char*)d0->val32 : (const char*)d0->val64;

        k = d0->indptr[g];
        ST_FUZZ_CHECK(n == d0->indptr[g + 1] - k && !memcmp(&d->y[i], &d0->y[g], 8) &&
                      !memcmp(&d->indices[d->indptr[i]], &d0->indices[k], (size_t)n * 4) &&
                      !memcmp(v + (size_t)d->indptr[i] * vsize, v0 + (size_t)k * vsize,
                              (size_t)n * vsize),
                      "%d ranks: row %lld differs from the serial read", size, (long long)g + 1);
    }
    st_glm_data_free(d);
}

#endif /* ST_FUZZ_DATA_H */
