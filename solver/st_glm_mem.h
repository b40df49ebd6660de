/*
 * How much memory a host has for training, and whether what a run needs fits
 * (solver/st_glm_mem.c): read where the kernel would otherwise kill the run much
 * later, an allocation of overcommitted memory being touched.
 */
#ifndef ST_GLM_MEM_H
#define ST_GLM_MEM_H

#include "st_glm.h"

/* STRATA_GLM_MEM_AVAILABLE (the host's available bytes, instead of what it reports):
 * @return them; -1 where unset or empty; -2 where not a size (its text in *str_p). */
double st_glm_mem_env(const char **str_p);

/* Collective over @a comm: the bytes @a need of this rank summed over the ranks of its
 * host (host_p[0]) and the host's available memory (host_p[1]: @a avail where >= 0,
 * else what the host reports; a rank needing nothing reads nothing). */
void st_glm_mem_host(MPI_Comm comm, double need, double avail, double host_p[2]);

#endif
