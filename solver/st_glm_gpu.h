/*
 * The GPU local solver of the dual models (strata_glm_param_t.gpu): a rank's rows
 * in GPU memory, SDCA epochs by the TPA-SCD kernel (cuda/st_glm_kernels.cuh),
 * the round's updated view of w and dual variables copied back. The CoCoA+ round
 * around it (merging, the allreduce, the gap) is the CPU solver's.
 */
#ifndef ST_GLM_GPU_H
#define ST_GLM_GPU_H

#include "st_glm_data.h"

#include <mpi.h>
#include <stdint.h>

typedef struct st_glm_gpu st_glm_gpu_t;

/*
 * Collective over @a comm (every rank calls it, whether its GPU opens or not). Take
 * the GPU of this rank (its rank among the ranks of @a comm on its host, modulo the
 * host's GPUs) and copy the rows there: CSR with float values
 * (64-bit data is rounded), labels, weights @a c, squared norms @a sqnorm (bias
 * included); @a step is the model's ST_GLM_STEP_* (@a eps: the SVR models'); with
 * @a bias > 0 the bias
 * feature is u[@a d]. @a d_all entries of u. The rows' entries stream from host
 * memory when all of it does not fit in @a mem_cap bytes (0: the GPU's free memory
 * less a margin, divided among the host's ranks on that GPU). @a rows: rows in flight at once (the kernel's warps or blocks;
 * 0: as many warps as the GPU holds where the rows share few features, else
 * STRATA_GLM_GPU_ROWS); above 1, each row's curvature is its mini-batch bound
 * (st_glm_gpu_curvature). @a threads: host threads that gather each streamed
 * chunk (a large one). @a hv: for method newton's st_glm_gpu_cg_*, whose arrays (the
 * rows' D, the product, the CG's vectors) count in the budget and are allocated
 * here; its rows must then fit (no streaming: -1 saying so). @return 0, or -1 with @a msg. Keeps @a data
 * (streaming reads it).
 */
int st_glm_gpu_open(const st_glm_data_t *data, const double *c, const double *sqnorm,
                    int step, double eps, double bias, int64_t d, int64_t d_all,
                    int64_t mem_cap, int rows, int threads, int hv, MPI_Comm comm,
                    st_glm_gpu_t **gpu_p,
                    char *msg, size_t msg_len);

/* host threads that gather a streamed chunk, at most */
#define ST_GLM_GPU_GATHER_MAX 64

/* Bytes of each of the two buffers the rows stream through (0: in GPU memory). */
size_t st_glm_gpu_chunk_bytes(const st_glm_gpu_t *gpu);
void st_glm_gpu_close(st_glm_gpu_t *gpu);

/* The GPU's device number, the ranks of the host sharing it, the rows in flight and
 * the kernel's kind, in words (for the progress header). */
int st_glm_gpu_device(const st_glm_gpu_t *gpu);
int st_glm_gpu_sharers(const st_glm_gpu_t *gpu);
int st_glm_gpu_rows(const st_glm_gpu_t *gpu);
const char *st_glm_gpu_kernel_name(const st_glm_gpu_t *gpu);

/*
 * One round's local epochs: u starts as @a w, the dual variables as @a alpha; each
 * epoch's order is the permutation of the rows that @a next_key(@a arg) selects
 * (solver/st_glm_perm.h: the CPU solver's order for the same key, so the stand-in
 * driver's sequential kernel reproduces the CPU run bit for bit), computed on the
 * GPU; the kernel runs with @a scale = sigma' / (lambda n). @a u and @a alpha get
 * the results. @a w, @a u and @a alpha are the same arrays every round, live until
 * st_glm_gpu_close: the first round pins them where the driver can. @return 0, or
 * -1 (a CUDA call failed; logged).
 */
int st_glm_gpu_round(st_glm_gpu_t *gpu, const double *w, double *u, double *alpha,
                     double scale, int epochs, uint64_t (*next_key)(void *arg), void *arg);

/*
 * The rows' margins against @a w for the duality gap (z[i] = x_i . w, bias included),
 * on the GPU: with the rows in GPU memory (not streaming). @a z is the same array
 * at every call (pinned at the first); NULL: they stay in GPU memory (method newton's
 * X s, for st_glm_gpu_newton_rows). @return 0, 1 (not here: the caller computes
 * them), or -1 (a CUDA call failed; logged).
 */
int st_glm_gpu_margins(st_glm_gpu_t *gpu, const double *w, double *z);
/* Whether st_glm_gpu_margins computes them (else it returns 1). */
int st_glm_gpu_has_margins(const st_glm_gpu_t *gpu);

/*
 * Method newton's conjugate gradients (solver/st_glm_newton.c) on the GPU, with the
 * rows in GPU memory (not streaming; opened with hv): the vectors s, r, q, H q (and
 * the step's g and preconditioner m) stay in GPU memory, each sweep is one launch of
 * st_glm_cg (cuda/st_glm_kernels.h: the CPU's sweep bit for bit) and a copy of its
 * chunks' dot products, summed here in the CPU's order. Every call @return 0, or -1
 * (a CUDA call failed; logged).
 *
 * st_glm_gpu_cg_start: copies @a grad and @a m (d_all entries), the rows over all
 * ranks @a n and @a lambda; s = 0, r = -g, q = r / m; @a zr = q.r.
 * st_glm_gpu_cg_hv: the rank's part of H q's sum, sum_i @a dd[i] (x_i . q) x_i over
 * its rows (the atomics' order is the GPU's); @a dd (the rows' D_ii) is copied when
 * @a dd_changed (and the first time). With @a part, the sum is also copied there (to
 * be summed over ranks).
 * st_glm_gpu_cg_finish: H q = hv / n + lambda q, with @a hv (the sum over ranks, d_all
 * entries) copied in first, or NULL (one rank: the GPU's own); @a qhq = q.Hq.
 * st_glm_gpu_cg_update: s += @a alpha q, r -= @a alpha H q; @a dots g.s, r.s, r.r / m.
 * st_glm_gpu_cg_direction: q = r / m + @a beta q.
 * st_glm_gpu_cg_step: s into @a s.
 */
int st_glm_gpu_cg_start(st_glm_gpu_t *gpu, const double *grad, const double *m, double n,
                        double lambda, double *zr);
int st_glm_gpu_cg_hv(st_glm_gpu_t *gpu, const double *dd, int dd_changed, double *part);
int st_glm_gpu_cg_finish(st_glm_gpu_t *gpu, const double *hv, double *qhq);
int st_glm_gpu_cg_update(st_glm_gpu_t *gpu, double alpha, double dots[3]);
int st_glm_gpu_cg_direction(st_glm_gpu_t *gpu, double beta);
int st_glm_gpu_cg_step(st_glm_gpu_t *gpu, double *s);

/*
 * Method newton's gradient pass over the rank's rows (rows in GPU memory; opened with
 * hv): @a grad = sum_i @a ga[i] x_i and @a diag = sum_i @a dd[i] x_i^2 (entrywise;
 * d_all entries each, bias as in st_glm_gpu_open), @a ga and @a dd (the rows' c_i
 * phi'(z_i) and D_ii, m entries) copied first (NULL: st_glm_gpu_newton_rows left
 * them there), so the next st_glm_gpu_cg_hv needs no copy of D. The atomics' order of the sums is the GPU's. @return 0, or -1 (a CUDA
 * call failed; logged).
 */
int st_glm_gpu_grad(st_glm_gpu_t *gpu, const double *ga, const double *dd, double *grad,
                    double *diag);

/*
 * Method newton's passes over the rows' own terms on the GPU (st_glm_rows_args_t,
 * cuda/st_glm_kernels.h), where the margins are (rows in GPU memory, opened with hv):
 * the margins z and D and c_i phi'(z_i) stay in GPU memory (z starts at 0), X s comes
 * from st_glm_gpu_margins(gpu, s, NULL). @a op ST_GLM_ROWS_GRAD moves z to z + @a t X s
 * and computes D and c_i phi'(z_i) there (so that st_glm_gpu_grad(gpu, NULL, NULL, ...)
 * and st_glm_gpu_cg_hv(gpu, NULL, 0, ...) need no copy), with the chunks' loss and
 * conjugate sums; ST_GLM_ROWS_LOSS the chunks' sums of c_i (phi(z_i + t xs_i) -
 * phi(z_i)). The chunks' sums (2 a chunk of ST_GLM_ROWS_CHUNK rows) into @a part.
 * @return 0, 1 (not here: the host runs them), or -1 (a CUDA call failed; logged).
 */
int st_glm_gpu_newton_rows(st_glm_gpu_t *gpu, int op, double t, double *part);
int st_glm_gpu_has_newton_rows(const st_glm_gpu_t *gpu);

/* The Hessian-vector kernel's hot columns (st_glm_newton_hv: summed per block first;
 * STRATA_GLM_GPU_HV_HOT caps them). */
int64_t st_glm_gpu_hv_hot(const st_glm_gpu_t *gpu);

/* Pin @a bytes of host memory at @a p for the GPU's copies until st_glm_gpu_close (a
 * few arrays; the method's host arrays that the copies above read or write).
 * @return 0, or -1 (not pinned: the copies are staged). */
int st_glm_gpu_pin(st_glm_gpu_t *gpu, void *p, size_t bytes);

#endif /* ST_GLM_GPU_H */
