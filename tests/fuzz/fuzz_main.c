/*
 * A plain driver for the fuzz targets, for "make check" without clang: feeds every
 * file named on the command line, and every file of every directory named there,
 * to LLVMFuzzerTestOneInput, in name order. Without arguments it replays the
 * target's committed inputs, tests/fuzz/corpus/NAME/ and tests/fuzz/regress/NAME/
 * under $top_srcdir (default "."), NAME being ST_FUZZ_NAME; finding none fails.
 *
 * With --mpi first (under mpirun), MPI is initialized before the target and
 * finalized after it, for the targets that also check collective reads.
 *
 * A target's failed check aborts, so the test fails; before each input the driver
 * notes its name on stderr only when ST_FUZZ_VERBOSE is set, and the name of the
 * input being replayed is printed when the process dies of a signal anyway (see
 * st_fuzz_main_current).
 */
#include "config.h"

#include "st_fuzz.h"

#include <dirent.h>
#include <mpi.h>
#include <errno.h>
#include <signal.h>
#include <sys/stat.h>

#ifndef ST_FUZZ_NAME
#error "ST_FUZZ_NAME must name the target"
#endif

int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));

static const char *st_fuzz_main_current = "(none)";
static int st_fuzz_main_verbose;

static void st_fuzz_main_on_signal(int sig)
{
    static const char what[] = "fuzz_main: died while replaying ";

    /* async-signal-safe: write(2) only */
    if (write(2, what, sizeof(what) - 1) > 0 &&
        write(2, st_fuzz_main_current, strlen(st_fuzz_main_current)) > 0) {
        (void)write(2, "\n", 1);
    }
    signal(sig, SIG_DFL);
    raise(sig);
}

/* Replay one file; @return 0, or -1 when it cannot be read. */
static int st_fuzz_main_file(const char *path)
{
    uint8_t *buf = NULL;
    size_t len = 0;
    struct stat st;
    FILE *f;

    f = fopen(path, "rb");
    if (f == NULL || fstat(fileno(f), &st) != 0) {
        fprintf(stderr, "fuzz_main: %s: %s\n", path, strerror(errno));
        if (f != NULL) {
            fclose(f);
        }
        return -1;
    }
    /* exactly the input's size, so that a sanitizer sees any read past its end */
    len = (size_t)st.st_size;
    buf = malloc(len > 0 ? len : 1);
    if (buf == NULL || fread(buf, 1, len, f) != len) {
        fprintf(stderr, "fuzz_main: %s: cannot read\n", path);
        free(buf);
        fclose(f);
        return -1;
    }
    fclose(f);
    st_fuzz_main_current = path;
    if (st_fuzz_main_verbose) {
        fprintf(stderr, "fuzz_main: %s\n", path);
    }
    LLVMFuzzerTestOneInput(buf, len);
    st_fuzz_main_current = "(none)";
    free(buf);
    return 0;
}

static void st_fuzz_main_finalize(void)
{
    int fini = 0;

    MPI_Finalized(&fini);
    if (!fini) {
        MPI_Finalize();
    }
}

static int st_fuzz_main_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Replay a file, or the regular files of a directory; @return inputs replayed or -1. */
static long st_fuzz_main_path(const char *path, int must_exist)
{
    struct dirent *e;
    char **names = NULL, full[4096];
    size_t n = 0, cap = 0, i;
    long count = 0;
    struct stat st;
    DIR *dir;

    if (stat(path, &st) != 0) {
        if (!must_exist && errno == ENOENT) {
            return 0;
        }
        fprintf(stderr, "fuzz_main: %s: %s\n", path, strerror(errno));
        return -1;
    }
    if (!S_ISDIR(st.st_mode)) {
        return st_fuzz_main_file(path) == 0 ? 1 : -1;
    }
    dir = opendir(path);
    if (dir == NULL) {
        fprintf(stderr, "fuzz_main: %s: %s\n", path, strerror(errno));
        return -1;
    }
    while ((e = readdir(dir)) != NULL) {
        if (e->d_name[0] == '.') {
            continue;
        }
        if (n == cap) {
            char **grown;

            cap   = cap ? 2 * cap : 64;
            grown = realloc(names, cap * sizeof(*names));
            if (grown == NULL) {
                break;
            }
            names = grown;
        }
        names[n] = strdup(e->d_name);
        if (names[n] != NULL) {
            n++;
        }
    }
    closedir(dir);
    if (n > 0) {
        qsort(names, n, sizeof(*names), st_fuzz_main_cmp);
    }
    for (i = 0; i < n; i++) {
        snprintf(full, sizeof(full), "%s/%s", path, names[i]);
        if (count >= 0 && stat(full, &st) == 0 && S_ISREG(st.st_mode)) {
            count = (st_fuzz_main_file(full) == 0) ? count + 1 : -1;
        }
        free(names[i]);
    }
    free(names);
    return count;
}

int main(int argc, char **argv)
{
    const char *srcdir = getenv("top_srcdir");
    char dirs[2][4096];
    long n, total = 0;
    int i;

    st_fuzz_main_verbose = getenv("ST_FUZZ_VERBOSE") != NULL;
    if (argc > 1 && !strcmp(argv[1], "--mpi")) {
        if (MPI_Init(&argc, &argv) != MPI_SUCCESS) {
            fprintf(stderr, "fuzz_main: MPI_Init failed\n");
            return 1;
        }
        atexit(st_fuzz_main_finalize);
        argv[1] = argv[0];
        argv++;
        argc--;
    }
    signal(SIGSEGV, st_fuzz_main_on_signal);
    signal(SIGBUS, st_fuzz_main_on_signal);
    signal(SIGFPE, st_fuzz_main_on_signal);
    signal(SIGABRT, st_fuzz_main_on_signal);
    if (LLVMFuzzerInitialize != NULL) {
        LLVMFuzzerInitialize(&argc, &argv);
    }
    if (argc > 1) {
        for (i = 1; i < argc; i++) {
            n = st_fuzz_main_path(argv[i], 1);
            if (n < 0) {
                return 1;
            }
            total += n;
        }
        printf("%s: %ld inputs replayed\n", ST_FUZZ_NAME, total);
        return 0;
    }
    snprintf(dirs[0], sizeof(dirs[0]), "%s/tests/fuzz/corpus/%s", srcdir ? srcdir : ".",
             ST_FUZZ_NAME);
    snprintf(dirs[1], sizeof(dirs[1]), "%s/tests/fuzz/regress/%s", srcdir ? srcdir : ".",
             ST_FUZZ_NAME);
    for (i = 0; i < 2; i++) {
        n = st_fuzz_main_path(dirs[i], i == 0);
        if (n < 0) {
            return 1;
        }
        printf("%s: %ld inputs replayed\n", dirs[i], n);
        total += n;
    }
    if (total == 0) {
        fprintf(stderr, "fuzz_main: no inputs for %s under %s/tests/fuzz\n", ST_FUZZ_NAME,
                srcdir ? srcdir : ".");
        return 1;
    }
    return 0;
}
