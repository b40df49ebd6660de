! A plain Fortran MPI program ("use mpi", or "use mpi_f08" built with -DST_F08;
! MPI_INIT_THREAD instead of MPI_INIT with -DST_THREAD):
! under strata-run its MPI_INIT must run Strata's part of MPI_Init (the knobs
! agreed across ranks), its MPI_ALLREDUCE calls must reach Strata and give the
! right answers, in place or not, and its MPI_FINALIZE must run Strata's
! finalize (which prints STRATA_STATS).
program fortran_allreduce
#ifdef ST_F08
    use mpi_f08
#else
    use mpi
#endif
    implicit none
    integer, parameter :: n = 100000
    integer :: ierr, rank, nprocs, i, r, nbad, provided
    double precision, allocatable :: x(:), y(:)
    integer, allocatable :: ix(:)
    integer :: iexp
    double precision :: dexp
    real :: rv(7), rmax(7)
    complex :: c(3), csum(3)

    nbad = 0
#ifdef ST_THREAD
    call MPI_Init_thread(MPI_THREAD_FUNNELED, provided, ierr)
    if (provided < MPI_THREAD_FUNNELED) nbad = nbad + 1
#else
    call MPI_Init(ierr)
#endif
    call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
    call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
    allocate(x(n), y(n), ix(n))

    do i = 1, n
        x(i) = dble(mod(i * 7 + rank * 13, 17))
        ix(i) = mod(i + rank, 11) - 5
    end do
    do i = 1, 7
        rv(i) = real(mod(i * (rank + 3), 10))
    end do
    do i = 1, 3
        c(i) = cmplx(real(rank + i), real(-i))
    end do

    call MPI_Allreduce(x, y, n, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
    if (ierr /= MPI_SUCCESS) nbad = nbad + 1
    call MPI_Allreduce(MPI_IN_PLACE, ix, n, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
    if (ierr /= MPI_SUCCESS) nbad = nbad + 1
    call MPI_Allreduce(rv, rmax, 7, MPI_REAL, MPI_MAX, MPI_COMM_WORLD, ierr)
    if (ierr /= MPI_SUCCESS) nbad = nbad + 1
    call MPI_Allreduce(c, csum, 3, MPI_COMPLEX, MPI_SUM, MPI_COMM_WORLD, ierr)
    if (ierr /= MPI_SUCCESS) nbad = nbad + 1

    do i = 1, n
        dexp = 0
        iexp = 0
        do r = 0, nprocs - 1
            dexp = dexp + dble(mod(i * 7 + r * 13, 17))
            iexp = iexp + mod(i + r, 11) - 5
        end do
        if (y(i) /= dexp .or. ix(i) /= iexp) nbad = nbad + 1
    end do
    do i = 1, 7
        if (rmax(i) /= maxval([(real(mod(i * (r + 3), 10)), r = 0, nprocs - 1)])) then
            nbad = nbad + 1
        end if
    end do
    do i = 1, 3
        if (csum(i) /= cmplx(real(nprocs * i + nprocs * (nprocs - 1) / 2), &
                             real(-i * nprocs))) nbad = nbad + 1
    end do

    if (nbad /= 0) then
        print '(a, i0, a, i0)', 'fortran_allreduce: rank ', rank, ' wrong results: ', nbad
    else if (rank == 0) then
        print '(a)', 'fortran_allreduce: OK'
    end if
    deallocate(x, y, ix)
    call MPI_Finalize(ierr)
end program fortran_allreduce
