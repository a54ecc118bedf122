! Fortran interface of the phew Catalyst adaptor (catalyst/include/phew_catalyst.h), on
! ISO_C_BINDING. The arrays passed are wrapped, not copied: they must be contiguous, have the
! TARGET attribute (or be allocatable), and stay valid and unchanged until the call returns.
!
!   use phew_catalyst
!   type(c_ptr) :: adaptor
!   type(phew_catalyst_grid) :: grid
!   ierr = phew_catalyst_init(adaptor, ['clumps.py'], MPI_COMM_WORLD)
!   call phew_catalyst_grid_init(grid)
!   grid%global_dims = [n, n, n]; ...; grid%density = c_loc(rho)
!   ierr = phew_catalyst_execute(adaptor, step, time, c_loc(grid), c_null_ptr)
!   if (ierr /= 0) print *, phew_catalyst_message(adaptor)
!   call phew_catalyst_finalize(adaptor)
module phew_catalyst
  use, intrinsic :: iso_c_binding
  implicit none
  private

  integer(c_int), parameter, public :: PHEW_CATALYST_OK = 0, PHEW_CATALYST_FLOAT32 = 0, &
                                       PHEW_CATALYST_FLOAT64 = 1

  ! C layout of phew_catalyst_grid; indices are 0-based cell indices, x fastest, as in C
  type, bind(c), public :: phew_catalyst_grid
    integer(c_int64_t) :: global_dims(3), offset(3), dims(3)
    real(c_double) :: origin(3), spacing(3)
    integer(c_int) :: periodic(3), type
    type(c_ptr) :: density, name
  end type

  type, bind(c), public :: phew_catalyst_particles
    integer(c_int64_t) :: n
    integer(c_int) :: type
    type(c_ptr) :: position, mass, velocity, id
    real(c_double) :: box_origin(3), box_size(3)
    integer(c_int) :: periodic(3)
  end type

  public :: phew_catalyst_init, phew_catalyst_execute, phew_catalyst_message, phew_catalyst_finalize, &
            phew_catalyst_grid_init, phew_catalyst_particles_init, phew_catalyst_timing

  interface
    subroutine phew_catalyst_grid_init(grid) bind(c, name='phew_catalyst_grid_init')
      import :: phew_catalyst_grid
      type(phew_catalyst_grid), intent(out) :: grid
    end subroutine
    subroutine phew_catalyst_particles_init(particles) bind(c, name='phew_catalyst_particles_init')
      import :: phew_catalyst_particles
      type(phew_catalyst_particles), intent(out) :: particles
    end subroutine
    function c_initialize(adaptor, n_scripts, scripts, comm) result(status) bind(c, name='phew_catalyst_initialize_f')
      import :: c_ptr, c_int, c_char
      type(c_ptr), intent(out) :: adaptor
      integer(c_int), value :: n_scripts, comm
      character(kind=c_char), intent(in) :: scripts(*)
      integer(c_int) :: status
    end function
    ! grid and particles: c_loc of a phew_catalyst_grid / phew_catalyst_particles, or c_null_ptr
    function phew_catalyst_execute(adaptor, step, time, grid, particles) result(status) &
        bind(c, name='phew_catalyst_execute')
      import :: c_ptr, c_int, c_int64_t, c_double
      type(c_ptr), value :: adaptor, grid, particles
      integer(c_int64_t), value :: step
      real(c_double), value :: time
      integer(c_int) :: status
    end function
    function c_message(adaptor) result(text) bind(c, name='phew_catalyst_message')
      import :: c_ptr
      type(c_ptr), value :: adaptor
      type(c_ptr) :: text
    end function
    subroutine phew_catalyst_timing(adaptor, total, pipelines) bind(c, name='phew_catalyst_timing')
      import :: c_ptr, c_double
      type(c_ptr), value :: adaptor
      real(c_double), intent(out) :: total, pipelines
    end subroutine
    subroutine c_finalize(adaptor) bind(c, name='phew_catalyst_finalize')
      import :: c_ptr
      type(c_ptr), value :: adaptor
    end subroutine
    function c_strlen(text) result(n) bind(c, name='strlen')
      import :: c_ptr, c_size_t
      type(c_ptr), value :: text
      integer(c_size_t) :: n
    end function
  end interface

contains

  ! Start Catalyst with these scripts on a Fortran MPI communicator (MPI_COMM_WORLD or any
  ! other); returns 0, or a status whose reason phew_catalyst_message gives.
  function phew_catalyst_init(adaptor, scripts, comm) result(status)
    type(c_ptr), intent(out) :: adaptor
    character(len=*), intent(in) :: scripts(:)
    integer, intent(in) :: comm
    integer :: status, k, at, n
    character(kind=c_char), allocatable :: joined(:)
    allocate(joined(sum(len_trim(scripts)) + size(scripts) + 1))
    at = 1
    do k = 1, size(scripts)
      n = len_trim(scripts(k))
      joined(at:at + n - 1) = transfer(scripts(k)(1:n), joined(1:n))
      joined(at + n) = c_null_char
      at = at + n + 1
    end do
    status = c_initialize(adaptor, int(size(scripts), c_int), joined, int(comm, c_int))
  end function

  ! Why the last call failed ('' after a success).
  function phew_catalyst_message(adaptor) result(text)
    type(c_ptr), intent(in) :: adaptor
    character(len=:), allocatable :: text
    character(kind=c_char), pointer :: chars(:)
    type(c_ptr) :: p
    integer :: n
    p = c_message(adaptor)
    n = int(c_strlen(p))
    call c_f_pointer(p, chars, [n])
    allocate(character(len=n) :: text)
    text = transfer(chars(1:n), text)
  end function

  subroutine phew_catalyst_finalize(adaptor)
    type(c_ptr), intent(inout) :: adaptor
    call c_finalize(adaptor)
    adaptor = c_null_ptr
  end subroutine
end module
