/*
 * The trainer's host communicator and memory reading (solver/st_glm_mem.c), run on 1
 * and 2 ranks (tests/glm_mem1.np1, glm_mem2.np2) and serially without MPI (no
 * arguments):
 *
 * 1. A communicator's host ranks are split once and kept: a second call, and every
 *    training after it (each method), splits nothing more (this file's
 *    MPI_Comm_split_type counts the library's calls); one rank gets MPI_COMM_SELF
 *    without a split, MPI_COMM_NULL gets MPI_COMM_NULL.
 * 2. Freeing the communicator frees its host communicator; the host communicators still
 *    kept are freed at the start of MPI_Finalize (this file's MPI_Comm_free sees them).
 * 3. The host's available memory is read once for needs far below it, again for a need
 *    near it; the host's ranks' needs are summed.
 */
#include "st_glm_test.h"
#include "st_glm_mem.h"
#include "st_comma_locale.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int      t_splits, t_frees;
static int      t_own_hosts;  /* a split by host gives every rank a host of its own */
static MPI_Comm t_watch[4];   /* host communicators whose freeing is counted */

/* (the executable's definitions come before libmpi's: the library's calls land here) */
int MPI_Comm_split_type(MPI_Comm comm, int type, int key, MPI_Info info, MPI_Comm *out)
{
    int me;

    t_splits++;
    if (t_own_hosts) {
        MPI_Comm_rank(comm, &me);
        return PMPI_Comm_split(comm, me, key, out);
    }
    return PMPI_Comm_split_type(comm, type, key, info, out);
}

/* (counted while communicators may still be freed: in MPI_Finalize, before
   MPI_Finalized turns true, as MPI_COMM_SELF's attributes are deleted; Open MPI deletes
   MPI_COMM_WORLD's own only after) */
int MPI_Comm_free(MPI_Comm *comm)
{
    int i, done = 0;

    MPI_Finalized(&done);
    for (i = 0; i < 4 && !done; i++) {
        if (t_watch[i] != MPI_COMM_NULL && *comm == t_watch[i]) {
            t_frees++;
            t_watch[i] = MPI_COMM_NULL;
        }
    }
    return PMPI_Comm_free(comm);
}

static void t_serial(void)
{
    MPI_Comm host = MPI_COMM_SELF;
    double h[2];

    st_glm_host_comm(MPI_COMM_NULL, &host);
    CHECKF(host == MPI_COMM_NULL, "MPI_COMM_NULL's host is not MPI_COMM_NULL");
    st_glm_mem_host(MPI_COMM_NULL, 1000.0, 5000.0, h);
    CHECKF(h[0] == 1000.0 && h[1] == 5000.0, "without MPI: need %g available %g", h[0], h[1]);
    CHECKF(t_splits == 0, "%d splits without MPI", t_splits);
}

/* STRATA_GLM_MEM_AVAILABLE in a program whose locale has a decimal comma: read as in
 * the C locale (before: strtod stopped at the point, "1.5K" was refused) */
static void t_env_locale(void)
{
    char dir[] = "/tmp/st_glm_mem.XXXXXX", cmd[64];
    const char *name, *str;
    double v;
    int ret;

    setenv("STRATA_GLM_MEM_AVAILABLE", "1.5K", 1);
    v = st_glm_mem_env(&str);
    CHECKF(v == 1536.0, "STRATA_GLM_MEM_AVAILABLE=1.5K: %g", v);
    if (mkdtemp(dir) == NULL) {
        CHECKF(0, "mkdtemp %s failed", dir);
        return;
    }
    name = st_test_comma_locale(dir);
    if (name == NULL) {
        printf("test_glm_mem: no locale with a decimal comma: not checked there\n");
    } else {
        v = st_glm_mem_env(&str);
        CHECKF(v == 1536.0, "STRATA_GLM_MEM_AVAILABLE=1.5K in locale %s: %g", name, v);
        setlocale(LC_NUMERIC, "C");
    }
    unsetenv("STRATA_GLM_MEM_AVAILABLE");
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    ret = system(cmd);
    CHECKF(ret == 0, "%s failed", cmd);
}

/* 1 and 2: the cache on MPI_COMM_WORLD and on a communicator freed */
static void t_host(void)
{
    MPI_Comm host, again, dup, dup_host;
    int size, hsize, expect = (nranks > 1);

    st_glm_host_comm(MPI_COMM_WORLD, &host);
    CHECKF(t_splits == expect, "first call: %d splits (expected %d)", t_splits, expect);
    CHECKF(host != MPI_COMM_NULL, "no host communicator");
    if (host == MPI_COMM_NULL) {
        return;
    }
    MPI_Comm_size(host, &hsize);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECKF(hsize == size, "host of %d ranks, %d on this host", hsize, size);
    CHECKF(nranks > 1 || host == MPI_COMM_SELF, "one rank: not MPI_COMM_SELF");
    st_glm_host_comm(MPI_COMM_WORLD, &again);
    CHECKF(again == host && t_splits == expect, "second call: %d splits, the same: %d",
           t_splits, again == host);
    t_watch[0] = (nranks > 1) ? host : MPI_COMM_NULL;   /* (freed at MPI_Finalize) */

    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    st_glm_host_comm(dup, &dup_host);
    CHECKF(t_splits == 2 * expect, "a dup: %d splits (expected %d)", t_splits, 2 * expect);
    CHECKF(nranks == 1 || dup_host != host, "a dup shares its parent's host communicator");
    t_watch[1] = (nranks > 1) ? dup_host : MPI_COMM_NULL;
    t_frees    = 0;
    MPI_Comm_free(&dup);
    CHECKF(t_frees == expect, "freeing the dup freed %d host communicators (expected %d)",
           t_frees, expect);
}

/* 3: the readings */
static void t_mem(void)
{
    double h[2], first;
    long reads = st_glm_mem_reads();
    int size, expect;

    MPI_Comm_size(MPI_COMM_WORLD, &size);
    st_glm_mem_host(MPI_COMM_WORLD, 1000.0, -1, h);
    first = h[1];
    CHECKF(h[0] == 1000.0 * size, "need summed over the host: %g", h[0]);
    CHECKF(first > 0 && isfinite(first), "available: %g", first);
    CHECKF(st_glm_mem_reads() == reads + 1, "first need: %ld readings", st_glm_mem_reads() - reads);
    st_glm_mem_host(MPI_COMM_WORLD, 2000.0, -1, h);
    st_glm_mem_host(MPI_COMM_WORLD, 3000.0, -1, h);
    CHECKF(st_glm_mem_reads() == reads + 1, "small needs: %ld readings (expected 1)",
           st_glm_mem_reads() - reads);
    /* (each rank's need far below the reading, the host's sum not on 2 ranks: read again
       there; before, each rank judged its own need) */
    expect = 1 + (size > 1);
    st_glm_mem_host(MPI_COMM_WORLD, 0.2 * first, -1, h);
    CHECKF(st_glm_mem_reads() == reads + expect, "a fifth of the reading on each of %d "
           "rank(s): %ld readings (expected %d)", size, st_glm_mem_reads() - reads, expect);
    expect++;
    st_glm_mem_host(MPI_COMM_WORLD, 0.5 * first, -1, h);   /* (near it: read again) */
    CHECKF(st_glm_mem_reads() == reads + expect, "a need near the reading: %ld readings "
           "(expected %d)", st_glm_mem_reads() - reads, expect);
    st_glm_mem_host(MPI_COMM_WORLD, 0, -1, h);   /* (no need: no reading) */
    CHECKF(st_glm_mem_reads() == reads + expect, "no need: %ld readings (expected %d)",
           st_glm_mem_reads() - reads, expect);
    st_glm_mem_host(MPI_COMM_WORLD, 1000.0, 123456.0, h);   /* (a figure given) */
    CHECKF(h[1] == 123456.0 && st_glm_mem_reads() == reads + expect,
           "a given figure: available %g, %ld readings", h[1], st_glm_mem_reads() - reads);
}

/* 1: trainings (a cross-validation's, a search's: thousands) split nothing more */
static void t_train(void)
{
    static dataset_t ds;
    strata_glm_problem_t *prob;
    strata_glm_model_t *model = NULL;
    strata_glm_param_t p;
    char msg[512] = "";
    int splits = t_splits, k;

    make_data(&ds, 0);
    prob = my_rows(&ds, 0, 0);
    strata_glm_param_default(&p);
    p.lambda = 1e-2;
    p.tol    = 1e-6;
    for (k = 0; k < 3; k++) {
        p.method = (k == 0) ? STRATA_GLM_METHOD_CD
                 : (k == 1) ? STRATA_GLM_METHOD_LBFGS
                            : STRATA_GLM_METHOD_NEWTON;
        CHECKF(strata_glm_train(prob, &p, MPI_COMM_WORLD, msg, sizeof(msg), &model) ==
                       STRATA_OK, "method %d: %s", p.method, msg);
        strata_glm_model_free(model);
        model = NULL;
    }
    CHECKF(t_splits == splits, "trainings split %d more times", t_splits - splits);
    strata_glm_problem_free(prob);
}

/* 4: every rank a host of its own, one of them short of memory: the training is
 * refused on every rank (before, on that host's only: the others trained, and waited
 * for it in their first sum), with that host's figures */
static void t_short_host(void)
{
    static dataset_t ds;
    strata_glm_problem_t *prob;
    strata_glm_model_t *model = NULL;
    strata_glm_param_t p;
    strata_status_t status;
    char msg[1024] = "";
    MPI_Comm comm;

    make_data(&ds, 0);
    prob = my_rows(&ds, 0, 0);
    strata_glm_param_default(&p);
    p.lambda    = 1e-2;
    t_own_hosts = 1;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    if (rank == 0) {
        setenv("STRATA_GLM_MEM_AVAILABLE", "1K", 1);
    }
    status = strata_glm_train(prob, &p, comm, msg, sizeof(msg), &model);
    unsetenv("STRATA_GLM_MEM_AVAILABLE");
    CHECKF(status == STRATA_ERR_NO_MEMORY, "a host short of memory: status %d (%s)",
           (int)status, msg);
    CHECKF(strstr(msg, "and it has 0.00102 MB available") != NULL,
           "the short host's figure not named: %s", msg);
    strata_glm_model_free(model);
    strata_glm_problem_free(prob);
    MPI_Comm_free(&comm);
    t_own_hosts = 0;
}

int main(int argc, char **argv)
{
    int frees;

    if (argc < 2 || strcmp(argv[1], "--mpi") != 0) {
        t_serial();
        t_env_locale();
        printf("%s\n", failures ? "FAILED" : "OK");
        return failures ? 1 : 0;
    }
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    t_host();
    t_mem();
    t_train();
    t_short_host();
    t_frees = 0;
    MPI_Finalize();
    frees = t_frees;   /* (2: MPI_COMM_WORLD's host, freed at the start of MPI_Finalize) */
    CHECKF(frees == (nranks > 1), "MPI_Finalize freed %d host communicators (expected %d)",
           frees, nranks > 1);
    if (rank == 0 || failures) {
        printf("rank %d: %s\n", rank, failures ? "FAILED" : "OK");
    }
    return failures ? 1 : 0;
}
