/*
 * Set-up exchanges through PMPI, safe for ThreadSanitizer (see st_mpi.h).
 */
#include "st_mpi.h"

#include "st_common.h"

#include <stdlib.h>
#include <string.h>

#if ST_TSAN

void __tsan_ignore_thread_begin(void);
void __tsan_ignore_thread_end(void);

/* A private copy of len bytes (of src, when not NULL) for Open MPI to use. */
static void *st_mpi_copy_in(const void *src, size_t len)
{
    void *tmp = malloc((len > 0) ? len : 1);

    if (tmp != NULL && src != NULL) {
        memcpy(tmp, src, len);
    }
    return tmp;
}

/* Copy Open MPI's result out (dst may be NULL) and free the copy, unobserved. */
static void st_mpi_copy_out(void *dst, void *tmp, size_t len)
{
    __tsan_ignore_thread_begin();
    if (dst != NULL) {
        memcpy(dst, tmp, len);
    }
    free(tmp);
    __tsan_ignore_thread_end();
}

int st_mpi_allreduce(void *buf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm)
{
    int tsize = 0, rc;
    size_t len;
    void *tmp;

    if (count < 0 || PMPI_Type_size(type, &tsize) != MPI_SUCCESS || tsize <= 0) {
        return PMPI_Allreduce(MPI_IN_PLACE, buf, count, type, op, comm);
    }
    len = (size_t)count * (size_t)tsize;
    if ((tmp = st_mpi_copy_in(buf, len)) == NULL) {
        return PMPI_Allreduce(MPI_IN_PLACE, buf, count, type, op, comm);
    }
    rc = PMPI_Allreduce(MPI_IN_PLACE, tmp, count, type, op, comm);
    st_mpi_copy_out((rc == MPI_SUCCESS) ? buf : NULL, tmp, len);
    return rc;
}

int st_mpi_bcast(void *buf, int len, int root, MPI_Comm comm)
{
    void *tmp;
    int rc;

    if (len < 0 || (tmp = st_mpi_copy_in(buf, (size_t)len)) == NULL) {
        return PMPI_Bcast(buf, len, MPI_BYTE, root, comm);
    }
    rc = PMPI_Bcast(tmp, len, MPI_BYTE, root, comm);
    st_mpi_copy_out((rc == MPI_SUCCESS) ? buf : NULL, tmp, (size_t)len);
    return rc;
}

int st_mpi_allgather(const void *mine, int len, void *all, MPI_Comm comm)
{
    void *in, *out = NULL;
    int size = 0, rc;

    if (len < 0 || PMPI_Comm_size(comm, &size) != MPI_SUCCESS ||
        (in = st_mpi_copy_in(mine, (size_t)len)) == NULL) {
        return PMPI_Allgather(mine, len, MPI_BYTE, all, len, MPI_BYTE, comm);
    }
    if ((out = st_mpi_copy_in(NULL, (size_t)len * (size_t)size)) == NULL) {
        free(in);
        return PMPI_Allgather(mine, len, MPI_BYTE, all, len, MPI_BYTE, comm);
    }
    rc = PMPI_Allgather(in, len, MPI_BYTE, out, len, MPI_BYTE, comm);
    st_mpi_copy_out(NULL, in, (size_t)len);
    st_mpi_copy_out((rc == MPI_SUCCESS) ? all : NULL, out, (size_t)len * (size_t)size);
    return rc;
}

#else /* !ST_TSAN */

int st_mpi_allreduce(void *buf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm)
{
    return PMPI_Allreduce(MPI_IN_PLACE, buf, count, type, op, comm);
}

int st_mpi_bcast(void *buf, int len, int root, MPI_Comm comm)
{
    return PMPI_Bcast(buf, len, MPI_BYTE, root, comm);
}

int st_mpi_allgather(const void *mine, int len, void *all, MPI_Comm comm)
{
    return PMPI_Allgather(mine, len, MPI_BYTE, all, len, MPI_BYTE, comm);
}

#endif /* ST_TSAN */
