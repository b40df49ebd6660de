/*
 * What the command-line tools share: telling whether two paths name one file, so
 * that no tool writes its output over one of its inputs (or two outputs over
 * each other); MPI only when a launcher started the process. Their outputs are
 * written whole or not at all (st_glm_file.h).
 */
#ifndef ST_TOOL_H
#define ST_TOOL_H

#include "st_glm_file.h"   /* st_glm_out_dest */

#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* @a path's directory resolved, then its last name: one string per file, for a
 * file that need not exist yet; 0 when the directory does not resolve. */
static inline int st_tool_canonical(const char *path, char *out, size_t len)
{
    char d[PATH_MAX], b[PATH_MAX], real[PATH_MAX];

    if (strlen(path) >= sizeof(d)) {
        return 0;
    }
    strcpy(d, path);
    strcpy(b, path);
    if (realpath(dirname(d), real) == NULL) {
        return 0;
    }
    return snprintf(out, len, "%s/%s", real, basename(b)) < (int)len;
}

/* Why @a path cannot be written, or NULL where it can: it is a directory (its name
 * into @a dir), its directory (its name, as @a path gives it, into @a dir) does not
 * exist or is not a directory, or neither it nor the file takes a write (the outputs
 * are written beside the file and renamed, or in place where only the file is
 * writable). Checked before a long run, which would
 * otherwise fail at its end (strata-train's model and checkpoint, strata-gen's
 * --test-out, strata-predict's output). */
static inline const char *st_tool_cannot_write(const char *path, char *dir, size_t len)
{
    const char *slash = strrchr(path, '/');
    struct stat st;

    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {   /* (before: found after the work) */
        snprintf(dir, len, "%s", path);
        return "is a directory";
    }
    snprintf(dir, len, "%.*s", (slash == NULL || slash == path) ? 1 : (int)(slash - path),
             (slash == NULL) ? "." : path);
    if (stat(dir, &st) != 0) {
        return (errno == ENOENT) ? "does not exist" : "cannot be looked at";
    }
    if (!S_ISDIR(st.st_mode)) {
        return "is not a directory";
    }
    if (access(dir, W_OK | X_OK) != 0 && access(path, W_OK) != 0) {
        return "takes no new file";
    }
    return NULL;
}

/* Can @a path (NULL: nothing to check) be written? Where not, says so on stderr ("PROG:
 * PATH: cannot write WHAT: DIR WHY") and @return 1: the check of an output before the
 * work (strata-train's model and checkpoint, strata-predict's output; rank 0's). */
static inline int st_tool_unwritable(const char *prog, const char *path, const char *what)
{
    const char *why;
    char dir[4096];

    if (path == NULL || (why = st_tool_cannot_write(path, dir, sizeof(dir))) == NULL) {
        return 0;
    }
    fprintf(stderr, "%s: %s: cannot write %s: %s %s\n", prog, path, what, dir, why);
    return 1;
}

/* Do @a a and @a b name the same file: the same name, the same inode (hard and
 * symbolic links), or, where neither exists yet, the same place (a dangling symbolic
 * link names the place a write creates: its target)? */
static inline int st_tool_same_file(const char *a, const char *b)
{
    char ca[2 * PATH_MAX], cb[2 * PATH_MAX], *da, *db;
    struct stat sa, sb;
    int ea, eb, same;

    if (a == NULL || b == NULL) {
        return 0;
    }
    if (strcmp(a, b) == 0) {
        return 1;
    }
    ea = (stat(a, &sa) == 0);
    eb = (stat(b, &sb) == 0);
    if (ea && eb) {
        return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
    }
    if (ea || eb) {
        return 0;   /* one exists, the other not */
    }
    da   = st_glm_out_dest(a);
    db   = st_glm_out_dest(b);
    same = da != NULL && db != NULL && st_tool_canonical(da, ca, sizeof(ca)) &&
           st_tool_canonical(db, cb, sizeof(cb)) && strcmp(ca, cb) == 0;
    free(da);
    free(db);
    return same;
}

/* ---- MPI, when a launcher started the process ----
 *
 * strata-train and strata-predict started alone (not by mpirun, srun or mpiexec, as
 * their environment tells) initialize no MPI: libstrata_glm takes MPI_COMM_NULL for
 * "this process alone" and calls no MPI then, and Open MPI's singleton start (it spawns
 * its runtime's daemon: 0.3-0.45 s on the VM of bench/RESULTS.md) would be most of a
 * small training's time. Started by a launcher, they are the ranks of
 * MPI_COMM_WORLD. These helpers take the tool's communicator, MPI_COMM_NULL alone. */

/* Did a launcher start this process (Open MPI's mpirun, a PMIx or PMI launcher: srun,
 * MPICH's and Intel MPI's mpiexec; or a Slurm step of several tasks, whose PMI-1 sets
 * only Slurm's variables)? */
static inline int st_tool_launched(void)
{
    static const char *const vars[] = {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK",
                                       "PMI_SIZE"};
    const char *tasks = getenv("SLURM_STEP_NUM_TASKS");
    size_t k;

    for (k = 0; k < sizeof(vars) / sizeof(vars[0]); k++) {
        if (getenv(vars[k]) != NULL) {
            return 1;
        }
    }
    return tasks != NULL && atol(tasks) > 1;
}

/* MPI_Init where a launcher started the process: MPI_COMM_WORLD, this rank and the
 * ranks in *rank_p and *size_p; else MPI_COMM_NULL, rank 0 of 1. */
static inline MPI_Comm st_tool_mpi_init(int *argc, char ***argv, int *rank_p, int *size_p)
{
    *rank_p = 0;
    *size_p = 1;
    if (!st_tool_launched()) {
        return MPI_COMM_NULL;
    }
    MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, rank_p);
    MPI_Comm_size(MPI_COMM_WORLD, size_p);
    return MPI_COMM_WORLD;
}

/* Were all ranks of @a comm given the same command line (@a argc, @a argv: an MPMD
 * launch, "A : B", can give each its own)? Collective; the same answer on every rank.
 * Before any of them parses it: a rank refusing an option of its own, or taking
 * another path, left the others waiting in a collective (strata-train, strata-predict:
 * a hang), or made one rank's output of another kind. */
static inline int st_tool_args_agree(MPI_Comm comm, int argc, char **argv)
{
    unsigned long long h = 0xcbf29ce484222325ULL, v[2];
    const char *c;
    int i;

    if (comm == MPI_COMM_NULL) {
        return 1;
    }
    for (i = 1; i < argc; i++) {
        for (c = argv[i];; c++) {   /* (the NUL too: "ab" "c" is not "a" "bc") */
            h = (h ^ (unsigned char)*c) * 0x100000001b3ULL;
            if (*c == '\0') {
                break;
            }
        }
    }
    v[0] = h;
    v[1] = ~h;
    MPI_Allreduce(MPI_IN_PLACE, v, 2, MPI_UNSIGNED_LONG_LONG, MPI_MAX, comm);
    return v[0] == h && v[1] == ~h;
}

static inline void st_tool_mpi_finalize(MPI_Comm comm)
{
    if (comm != MPI_COMM_NULL) {
        MPI_Finalize();
    }
}

/* @a count values of @a buf combined by @a op over the ranks, in place */
static inline void st_tool_allreduce(MPI_Comm comm, void *buf, int count, MPI_Datatype type,
                                     MPI_Op op)
{
    if (comm != MPI_COMM_NULL) {
        MPI_Allreduce(MPI_IN_PLACE, buf, count, type, op, comm);
    }
}

static inline void st_tool_bcast(MPI_Comm comm, void *buf, int count, MPI_Datatype type)
{
    if (comm != MPI_COMM_NULL) {
        MPI_Bcast(buf, count, type, 0, comm);
    }
}

/* LIBLINEAR's regression lines' sums over every rank's rows (@a n here) of the values
 * @a v predicted and the targets @a t (collective over @a comm): sum (v - t)^2, sum v,
 * sum t, sum v^2, sum t^2, sum v t into @a sums[ST_TOOL_REG_SUMS] */
#define ST_TOOL_REG_SUMS 6
static inline void st_tool_regression_sums(MPI_Comm comm, const double *v, const double *t,
                                           int64_t n, double *sums)
{
    int64_t i;

    memset(sums, 0, ST_TOOL_REG_SUMS * sizeof(double));
    for (i = 0; i < n; i++) {
        sums[0] += (v[i] - t[i]) * (v[i] - t[i]);
        sums[1] += v[i];
        sums[2] += t[i];
        sums[3] += v[i] * v[i];
        sums[4] += t[i] * t[i];
        sums[5] += v[i] * t[i];
    }
    st_tool_allreduce(comm, sums, ST_TOOL_REG_SUMS, MPI_DOUBLE, MPI_SUM);
}

/* LIBLINEAR's squared correlation coefficient from those sums over @a rows rows */
static inline double st_tool_squared_correlation(const double *sums, double rows)
{
    double cov = rows * sums[5] - sums[1] * sums[2];

    return (cov * cov) /
           ((rows * sums[3] - sums[1] * sums[1]) * (rows * sums[4] - sums[2] * sums[2]));
}

/* the job ended: every rank, or this process alone */
static inline void st_tool_abort(MPI_Comm comm, int code)
{
    if (comm != MPI_COMM_NULL) {
        MPI_Abort(comm, code);
    }
    exit(code);
}

#endif /* ST_TOOL_H */
