/*
 * A host's ranks, how much memory the host has for training, and whether what a run
 * needs fits (solver/st_glm_mem.c): read where the kernel would otherwise kill the run much
 * later, an allocation of overcommitted memory being touched.
 */
#ifndef ST_GLM_MEM_H
#define ST_GLM_MEM_H

#include "st_glm.h"

/* STRATA_GLM_MEM_AVAILABLE (the host's available bytes, instead of what it reports):
 * @return them; -1 where unset or empty; -2 where not a size (its text in *str_p). */
double st_glm_mem_env(const char **str_p);

/* Collective over @a comm: its ranks on this rank's host (MPI_COMM_TYPE_SHARED), made
 * on the first call and kept with @a comm (freed with it, or at the start of
 * MPI_Finalize); MPI_COMM_SELF where @a comm has one rank, MPI_COMM_NULL for
 * MPI_COMM_NULL or where MPI could not split it. The caller does not free it. */
void st_glm_host_comm(MPI_Comm comm, MPI_Comm *host_p);

/* How many times this process has read the host's available memory (tests: the
 * readings a second's trainings share). */
long st_glm_mem_reads(void);

/* Collective over @a comm: the bytes @a need of this rank summed over the ranks of its
 * host (host_p[0]) and the host's available memory (host_p[1]: @a avail where >= 0,
 * else what the host reports; a host needing nothing reads nothing). */
void st_glm_mem_host(MPI_Comm comm, double need, double avail, double host_p[2]);

/* Collective over @a comm, after st_glm_mem_host: the figures of the host shortest of
 * memory (the largest need beyond what it has) in @a host (each rank's own, in), and
 * its name in @a name (@a len bytes, the same on every rank). */
void st_glm_mem_worst(MPI_Comm comm, double host[2], char *name, int len);

#endif
