/*
 * The large buffers a communicator's plan keeps for its messages (pipeline
 * pieces, ring windows, staging copies): mapped and unmapped whole, so that
 * freeing the communicator gives their pages back to the system.
 *
 * From malloc they would not come back: glibc serves a block above its mmap
 * threshold (128 KB at first) with mmap, but raises the threshold to the size of
 * such a block when it is freed, and serves the next ones from the heap, where
 * freed blocks stay resident. A job that makes and frees communicators (or holds
 * many for a while) then kept its high-water mark for good: 12-20 MB more per rank
 * after 3000 communicators over 2 virtual nodes (tests/test_churn), and a
 * threshold raised for the program's own allocations too.
 *
 * AddressSanitizer builds take them from the heap, where it checks their bounds.
 */
#ifndef ST_MEM_H
#define ST_MEM_H

#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)
#define ST_MEM_FROM_HEAP 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ST_MEM_FROM_HEAP 1
#endif
#endif
#ifndef ST_MEM_FROM_HEAP
#define ST_MEM_FROM_HEAP 0
#endif

/* @a bytes (> 0) of page-aligned memory; NULL when out of memory. */
static inline void *st_mem_alloc(size_t bytes)
{
    void *p;
#if ST_MEM_FROM_HEAP
    long page = sysconf(_SC_PAGESIZE);

    return (posix_memalign(&p, (page > 0) ? (size_t)page : 4096, bytes) == 0) ? p : NULL;
#else
    p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return (p == MAP_FAILED) ? NULL : p;
#endif
}

/* Free @a p (NULL: nothing), allocated by st_mem_alloc(@a bytes). */
static inline void st_mem_free(void *p, size_t bytes)
{
    if (p == NULL) {
        return;
    }
#if ST_MEM_FROM_HEAP
    (void)bytes;
    free(p);
#else
    munmap(p, bytes);
#endif
}

#endif /* ST_MEM_H */
