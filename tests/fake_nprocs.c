/*
 * A stand-in for the number of online CPUs, for tests of choices made from it
 * (STRATA_SMALL_MSG=auto): preloaded, sysconf(_SC_NPROCESSORS_ONLN) answers
 * FAKE_NPROCS where that is set; everything else is the C library's.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <unistd.h>

long sysconf(int name)
{
    static long (*real)(int);
    const char *v = getenv("FAKE_NPROCS");

    if (name == _SC_NPROCESSORS_ONLN && v != NULL && atol(v) > 0) {
        return atol(v);
    }
    if (real == NULL) {
        *(void**)&real = dlsym(RTLD_NEXT, "sysconf");
    }
    return real(name);
}
