! A Fortran program frees communicators that a C library gave an attribute whose
! delete callback calls MPI_Allreduce on them (tests/fortran_commfree_lib.c): the
! job must end well (before Strata's Fortran MPI_COMM_FREE, the callback's call built
! a plan on the dying communicator and MPI_FINALIZE aborted on its dangling handle).
program fortran_commfree
    use mpi
    implicit none
    integer :: ierr, comm, i, calls

    call MPI_INIT(ierr)
    do i = 1, 3
        call MPI_COMM_DUP(MPI_COMM_WORLD, comm, ierr)
        call st_attach(comm)
        call MPI_COMM_FREE(comm, ierr)
        if (ierr /= MPI_SUCCESS .or. comm /= MPI_COMM_NULL) then
            print *, 'fortran_commfree: MPI_COMM_FREE returned', ierr
            call MPI_ABORT(MPI_COMM_WORLD, 1, ierr)
        end if
    end do
    call st_callbacks(calls)
    if (calls /= 3) then
        print *, 'fortran_commfree: the delete callback ran', calls, 'times, expected 3'
        call MPI_ABORT(MPI_COMM_WORLD, 1, ierr)
    end if
    call MPI_FINALIZE(ierr)
    print '(a)', 'fortran_commfree: OK'
end program fortran_commfree
