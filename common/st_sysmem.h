/*
 * The memory a process may still take (common/st_sysmem.c): read where the kernel
 * would otherwise kill the process later, pages of overcommitted memory or of a
 * shared-memory file being touched (inside a memory cgroup even posix_fallocate of a
 * tmpfs file does not fail: the cgroup's OOM killer ends the process).
 */
#ifndef ST_SYSMEM_H
#define ST_SYSMEM_H

/* The host's memory available to new allocations, in bytes: /proc/meminfo's
 * MemAvailable, less where the process's memory cgroup or one above it has less room. */
double st_sys_mem_available(void);

#endif
