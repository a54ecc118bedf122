! A Fortran program outside phew's tree, built against the installed module phew_catalyst and
! libphew_catalyst (tests/install): the density of two Gaussian blobs on a 16^3 grid (the C
! consumer's, not periodic), split in z slabs over the ranks, handed to Catalyst for one step
! with the script SCRIPT (count_clumps.py: the installed plugin's clump finder, which must find
! the 2 clumps at the blobs' centre cells). Exit status 0 when initialisation, the step and
! finalisation all succeed on every rank.
!   fortran_consumer SCRIPT       (or: mpirun -np 2 fortran_consumer SCRIPT)
program fortran_consumer
  use, intrinsic :: iso_c_binding
  use mpi
  use phew_catalyst
  implicit none
  integer, parameter :: n = 16
  real(c_double), allocatable, target :: density(:, :, :)
  type(phew_grid) :: grid
  type(c_ptr) :: adaptor
  character(len=4096) :: script
  integer :: ierr, rank, nranks, z0, z1, x, y, z, status, failures, all_failures
  real(c_double) :: a, b

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)
  call get_command_argument(1, script)
  failures = 0
  z0 = n * rank / nranks
  z1 = n * (rank + 1) / nranks
  allocate(density(0:n - 1, 0:n - 1, z0:z1 - 1))
  do z = z0, z1 - 1
    do y = 0, n - 1
      do x = 0, n - 1
        a = ((x - 4)**2 + (y - 5)**2 + (z - 5)**2) / 4d0
        b = ((x - 11)**2 + (y - 10)**2 + (z - 9)**2) / 3d0
        density(x, y, z) = 0.2d0 + 50d0 * exp(-a) + 30d0 * exp(-b)
      end do
    end do
  end do

  status = phew_catalyst_init(adaptor, [script], MPI_COMM_WORLD)
  if (status /= PHEW_CATALYST_OK) then
    write (*, '(a, i0, a, i0, 2a)') 'rank ', rank, ': phew_catalyst_init status ', status, ': ', &
      phew_catalyst_message(adaptor)
    failures = failures + 1
  else
    grid%global_dims = n
    grid%active_offset = [0, 0, z0]
    grid%active_dims = [n, n, z1 - z0]
    grid%stored_offset = grid%active_offset ! no ghost cells
    grid%stored_dims = grid%active_dims
    grid%spacing = 1d0
    grid%periodic = 0
    status = phew_catalyst_execute(adaptor, 0_c_int64_t, 0d0, grid=grid, density=c_loc(density), &
                                   density_type=PHEW_FLOAT64)
    if (status /= PHEW_CATALYST_OK) then
      write (*, '(a, i0, a, i0, 2a)') 'rank ', rank, ': phew_catalyst_execute status ', status, ': ', &
        phew_catalyst_message(adaptor)
      failures = failures + 1
    end if
  end if
  call phew_catalyst_finalize(adaptor)

  call MPI_Allreduce(failures, all_failures, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank == 0) then
    if (all_failures == 0) then
      write (*, '(a, i0, a)') 'OK: Catalyst step through module phew_catalyst on ', nranks, ' rank(s)'
    else
      write (*, '(a, i0, a)') 'FAILED: ', all_failures, ' failure(s)'
    end if
  end if
  call MPI_Finalize(ierr)
  if (all_failures /= 0) error stop 1
end program
