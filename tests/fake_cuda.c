/*
 * A stand-in for libcuda.so.1 (built with that soname) for tests/test_device.c: it
 * hands out "device memory" that the CPU cannot touch (PROT_NONE pages, opened only
 * inside cuMemcpy), and answers the few driver calls Strata makes. A direct access
 * to a device buffer by Strata is a segmentation fault, so the test proves that
 * device buffers only move through the driver.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#define FAKE_REGIONS 64
#define FAKE_CTX     ((void*)0x5eed)

static struct {
    char  *base;
    size_t size;
} fake_region[FAKE_REGIONS];
static unsigned long fake_copies, fake_pushes;

static int fake_find(uintptr_t p)
{
    int k;

    for (k = 0; k < FAKE_REGIONS; k++) {
        if (fake_region[k].base != NULL && p >= (uintptr_t)fake_region[k].base &&
            p < (uintptr_t)fake_region[k].base + fake_region[k].size) {
            return k;
        }
    }
    return -1;
}

static void fake_protect(int k, int prot)
{
    if (k >= 0) {
        mprotect(fake_region[k].base, fake_region[k].size, prot);
    }
}

void *fake_cuda_alloc(size_t bytes)
{
    size_t size = (bytes + 4095) / 4096 * 4096;
    int k;

    for (k = 0; k < FAKE_REGIONS; k++) {
        if (fake_region[k].base == NULL) {
            void *p = mmap(NULL, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

            if (p == MAP_FAILED) {
                return NULL;
            }
            fake_region[k].base = p;
            fake_region[k].size = size;
            return p;
        }
    }
    return NULL;
}

void fake_cuda_free(void *p)
{
    int k = fake_find((uintptr_t)p);

    if (k >= 0) {
        munmap(fake_region[k].base, fake_region[k].size);
        fake_region[k].base = NULL;
    }
}

unsigned long fake_cuda_copies(void)
{
    return fake_copies;
}

unsigned long fake_cuda_pushes(void)
{
    return fake_pushes;
}

int cuPointerGetAttribute(void *data, int attribute, unsigned long long ptr)
{
    if (fake_find((uintptr_t)ptr) < 0) {
        return 1;   /* CUDA_ERROR_INVALID_VALUE: not memory the driver knows */
    }
    if (attribute == 2) {            /* CU_POINTER_ATTRIBUTE_MEMORY_TYPE */
        *(unsigned int*)data = 2;    /* CU_MEMORYTYPE_DEVICE */
    } else if (attribute == 1) {     /* CU_POINTER_ATTRIBUTE_CONTEXT */
        *(void**)data = FAKE_CTX;
    } else {
        return 1;
    }
    return 0;
}

int cuMemcpy(unsigned long long dst, unsigned long long src, size_t bytes)
{
    int kd = fake_find((uintptr_t)dst), ks = fake_find((uintptr_t)src);

    fake_protect(kd, PROT_READ | PROT_WRITE);
    fake_protect(ks, PROT_READ | PROT_WRITE);
    memmove((void*)(uintptr_t)dst, (const void*)(uintptr_t)src, bytes);
    fake_protect(kd, PROT_NONE);
    fake_protect(ks, PROT_NONE);
    fake_copies++;
    return 0;
}

int cuCtxPushCurrent_v2(void *ctx)
{
    if (ctx != FAKE_CTX) {
        return 201;  /* CUDA_ERROR_INVALID_CONTEXT */
    }
    fake_pushes++;
    return 0;
}

int cuCtxPopCurrent_v2(void **ctx)
{
    if (ctx != NULL) {
        *ctx = FAKE_CTX;
    }
    return 0;
}
