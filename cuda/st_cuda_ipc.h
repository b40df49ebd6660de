/*
 * MPI_Allreduce on device buffers inside a node through CUDA IPC (st_cuda_ipc.c):
 * GPU reduce-scatter with Strata's kernels, then allgather by device copies,
 * synchronized through the node's shared-memory segment.
 */
#ifndef ST_CUDA_IPC_H
#define ST_CUDA_IPC_H

#include "st_coll.h"
#include "st_cuda.h"

typedef struct st_cuda_ipc st_cuda_ipc_t;

/* The IPC state of one node communicator (rank @a rank of @a size); NULL: no memory. */
st_cuda_ipc_t *st_cuda_ipc_create(int rank, int size);
/* Closes the mappings of peers' buffers. */
void st_cuda_ipc_destroy(st_cuda_ipc_t *ipc);

/*
 * Called by every rank of @a shm for the same calls (those the caller routes here
 * by size, whatever the rank's buffers are): reduce GPU to GPU when every rank's
 * buffers are device memory CUDA IPC can share. @a src and @a r: what the driver
 * said of the send buffer (the receive buffer, in place) and of the receive
 * buffer (st_cuda_query, asked by the caller).
 * @return 1 done; 0 not taken, on every rank alike (nothing was written: the
 *         caller takes its other path); -1 a CUDA call failed after the ranks
 *         committed (the result is wrong: the caller ends the job).
 */
int st_cuda_ipc_allreduce(st_cuda_ipc_t *ipc, st_shm_t *shm, MPI_Comm pcomm, const void *sbuf,
                          void *rbuf, size_t count, st_type_t type, st_op_t op,
                          const st_cuda_buf_t *src, const st_cuda_buf_t *r);

#endif /* ST_CUDA_IPC_H */
