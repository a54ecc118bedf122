! The Fortran face of the adaptor: the probe's two-blob grid (16^3, z slabs over the ranks) from
! Fortran arrays, through module phew_catalyst, for one step.
!   adaptor_probe_fortran SCRIPT
program adaptor_probe_fortran
  use, intrinsic :: iso_c_binding
  use mpi
  use phew_catalyst
  implicit none
  integer, parameter :: n = 16
  real(c_double), allocatable, target :: density(:, :, :)
  type(phew_grid) :: grid
  type(c_ptr) :: adaptor
  character(len=1024) :: script
  integer :: ierr, rank, size, z0, z1, x, y, z, status
  real(c_double) :: a, b

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, size, ierr)
  call get_command_argument(1, script)
  z0 = n * rank / size
  z1 = n * (rank + 1) / size
  allocate(density(0:n - 1, 0:n - 1, z0:z1 - 1))
  do z = z0, z1 - 1
    do y = 0, n - 1
      do x = 0, n - 1
        a = ((x - 4.5d0)**2 + (y - 5.5d0)**2 + (z - 5.5d0)**2) / 4d0
        b = ((x - 11.5d0)**2 + (y - 10.5d0)**2 + (z - 9.5d0)**2) / 3d0
        density(x, y, z) = 0.2d0 + 50d0 * exp(-a) + 30d0 * exp(-b)
      end do
    end do
  end do

  status = phew_catalyst_init(adaptor, [script], MPI_COMM_WORLD)
  write (*, '(a, i0, a, a)') 'fortran init status ', status, ' message ', phew_catalyst_message(adaptor)
  if (status == PHEW_CATALYST_OK) then
    grid%global_dims = n
    grid%active_offset = [0, 0, z0]
    grid%active_dims = [n, n, z1 - z0]
    grid%stored_offset = grid%active_offset
    grid%stored_dims = grid%active_dims
    grid%spacing = 1d0 / n
    grid%periodic = 1
    status = phew_catalyst_execute(adaptor, 0_c_int64_t, 0d0, grid=grid, density=c_loc(density), &
                                   density_type=PHEW_FLOAT64)
    write (*, '(a, i0, a, a)') 'fortran status ', status, ' message ', phew_catalyst_message(adaptor)
  end if
  call phew_catalyst_finalize(adaptor)
  call MPI_Finalize(ierr)
end program
