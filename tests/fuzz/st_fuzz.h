/*
 * Shared by the fuzz targets of tests/fuzz/: the libFuzzer entry points, a check
 * that aborts (libFuzzer and tests/fuzz/fuzz_main.c both report an abort as a
 * failure, with the input that caused it), and a file holding the input for the
 * readers that take a path.
 *
 * A target is one file, tests/fuzz/fuzz_NAME.c, defining LLVMFuzzerTestOneInput
 * (and LLVMFuzzerInitialize when it needs set-up). "make fuzz" links it with
 * libFuzzer (clang); "make check" links it with fuzz_main.c, which replays the
 * committed inputs of tests/fuzz/corpus/NAME/ and tests/fuzz/regress/NAME/.
 */
#ifndef ST_FUZZ_H
#define ST_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

/* A property of the code under test that does not hold: say which, and abort. */
#define ST_FUZZ_CHECK(_cond, ...) \
    do { \
        if (!(_cond)) { \
            fprintf(stderr, "fuzz check failed at %s:%d: %s: ", __FILE__, __LINE__, #_cond); \
            fprintf(stderr, __VA_ARGS__); \
            fputc('\n', stderr); \
            abort(); \
        } \
    } while (0)

/*
 * A regular file whose contents are @a data, named by @a path (reused from one
 * input to the next: an anonymous memory file, or a temporary file without
 * memfd_create). @return 0, or -1 when no file could be made.
 */
static inline int st_fuzz_file(const uint8_t *data, size_t size, char *path, size_t len)
{
    static int fd = -1;
    size_t done = 0;

    if (fd < 0) {
#if HAVE_MEMFD_CREATE
        fd = memfd_create("strata-fuzz", MFD_CLOEXEC);
#endif
        if (fd < 0) {
            char tmpl[] = "/tmp/strata-fuzz.XXXXXX";

            fd = mkstemp(tmpl);
            if (fd >= 0) {
                unlink(tmpl);
            }
        }
        if (fd < 0) {
            return -1;
        }
    }
    if (ftruncate(fd, 0) != 0) {
        return -1;
    }
    while (done < size) {
        ssize_t n = pwrite(fd, data + done, size - done, (off_t)done);

        if (n <= 0) {
            return -1;
        }
        done += (size_t)n;
    }
    snprintf(path, len, "/proc/self/fd/%d", fd);
    return 0;
}

/* 1 when @a msg is one non-empty line naming @a path. */
static inline int st_fuzz_msg_ok(const char *msg, const char *path)
{
    return msg[0] != '\0' && strchr(msg, '\n') == NULL && strstr(msg, path) != NULL;
}

#endif /* ST_FUZZ_H */
