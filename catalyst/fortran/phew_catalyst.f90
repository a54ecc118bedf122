! Fortran interface of the phew Catalyst adaptor (catalyst/include/phew_catalyst.h), on
! ISO_C_BINDING. The grid and the particles are the core's types (phew/phew.h), mirrored here
! as bind(c) types of the same names and layout: phew_grid (this rank's block of cells) and
! phew_points (its particles). The arrays passed are wrapped, not copied: they must be
! contiguous, have the TARGET attribute (or be allocatable), and stay valid and unchanged until
! the call returns.
!
!   use phew_catalyst
!   type(c_ptr) :: adaptor
!   type(phew_grid) :: grid            ! zeros, spacing 1, not periodic (default initialisation)
!   ierr = phew_catalyst_init(adaptor, ['clumps.py'], MPI_COMM_WORLD)
!   grid%global_dims = [n, n, n]
!   grid%active_offset = [0, 0, z0];  grid%active_dims = [n, n, z1 - z0]
!   grid%stored_offset = grid%active_offset;  grid%stored_dims = grid%active_dims   ! no ghosts
!   grid%spacing = 1d0 / n;  grid%periodic = 1
!   ierr = phew_catalyst_execute(adaptor, step, time, grid=grid, density=c_loc(rho), &
!                                density_type=PHEW_FLOAT64)
!   if (ierr /= PHEW_CATALYST_OK) print *, phew_catalyst_message(adaptor)
!   call phew_catalyst_finalize(adaptor)
module phew_catalyst
  use, intrinsic :: iso_c_binding
  implicit none
  private

  ! the adaptor's status codes (phew_catalyst.h) and the core's phew_scalar_type (a C int)
  integer(c_int), parameter, public :: PHEW_CATALYST_OK = 0, PHEW_CATALYST_ERROR_ARGUMENT = 1, &
                                       PHEW_CATALYST_ERROR_SCRIPT = 2, PHEW_CATALYST_ERROR_PIPELINE = 3, &
                                       PHEW_CATALYST_ERROR_MPI = 4
  integer(c_int), parameter, public :: PHEW_FLOAT32 = 0, PHEW_FLOAT64 = 1

  ! C layout of phew_grid (phew/phew.h), field for field; indices are 0-based global cell
  ! indices, x fastest, as in C. The adaptor takes no ghost cells: stored box = active box.
  ! Default: no cells, origin 0, spacing 1, not periodic (phew_grid_init_whole of 0 cells).
  type, bind(c), public :: phew_grid
    integer(c_int64_t) :: global_dims(3) = 0
    integer(c_int64_t) :: stored_offset(3) = 0, stored_dims(3) = 0
    integer(c_int64_t) :: active_offset(3) = 0, active_dims(3) = 0
    integer(c_int) :: periodic(3) = 0
    real(c_double) :: origin(3) = 0.0_c_double  ! corner of cell (0, 0, 0)
    real(c_double) :: spacing(3) = 1.0_c_double ! cell size
  end type

  ! C layout of phew_points (phew/phew.h), field for field. Default: phew_points_init's (no
  ! particles, PHEW_FLOAT64, no box, 16 and 64 neighbours; the adaptor does not use the last
  ! two). position, mass, velocity: c_loc of arrays of type `type`; id: of integer(c_int64_t).
  type, bind(c), public :: phew_points
    integer(c_int64_t) :: n = 0
    integer(c_int) :: type = PHEW_FLOAT64
    type(c_ptr) :: position = c_null_ptr, mass = c_null_ptr, velocity = c_null_ptr, id = c_null_ptr
    integer(c_int) :: has_box = 0
    real(c_double) :: box_origin(3) = 0.0_c_double, box_size(3) = 0.0_c_double
    integer(c_int) :: periodic(3) = 0
    integer(c_int) :: n_neighbours = 16, n_density_neighbours = 64
  end type

  public :: phew_catalyst_init, phew_catalyst_execute, phew_catalyst_message, phew_catalyst_finalize, &
            phew_catalyst_timing

  interface
    function c_initialize(adaptor, n_scripts, scripts, comm) result(status) bind(c, name='phew_catalyst_initialize_f')
      import :: c_ptr, c_int, c_char
      type(c_ptr), intent(out) :: adaptor
      integer(c_int), value :: n_scripts, comm
      character(kind=c_char), intent(in) :: scripts(*)
      integer(c_int) :: status
    end function
    function c_execute(adaptor, step, time, grid, density, density_type, density_name, particles) result(status) &
        bind(c, name='phew_catalyst_execute')
      import :: c_ptr, c_int, c_int64_t, c_double
      type(c_ptr), value :: adaptor, grid, density, density_name, particles
      integer(c_int64_t), value :: step
      real(c_double), value :: time
      integer(c_int), value :: density_type
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

  ! phew_catalyst_execute of the C API: run the pipelines that want this step on the grid
  ! and/or the particles (absent: that channel is not passed; the same on every rank).
  !   grid          this rank's block (stored box = active box), with
  !   density       c_loc of its active cells' densities, x fastest (c_null_ptr: no cells)
  !   density_type  PHEW_FLOAT32 or PHEW_FLOAT64 (absent: PHEW_FLOAT64)
  !   density_name  the cell array's name (absent: 'density')
  !   particles     this rank's particles
  ! step is an integer(c_int64_t), time a real(c_double); collective; returns 0 or a status.
  function phew_catalyst_execute(adaptor, step, time, grid, density, density_type, density_name, particles) &
      result(status)
    type(c_ptr), intent(in) :: adaptor
    integer(c_int64_t), intent(in) :: step
    real(c_double), intent(in) :: time
    type(phew_grid), intent(in), target, optional :: grid
    type(c_ptr), intent(in), optional :: density
    integer(c_int), intent(in), optional :: density_type
    character(len=*), intent(in), optional :: density_name
    type(phew_points), intent(in), target, optional :: particles
    integer :: status
    type(c_ptr) :: grid_ptr, density_ptr, name_ptr, particles_ptr
    integer(c_int) :: scalar_type
    character(kind=c_char), allocatable, target :: name(:)
    grid_ptr = c_null_ptr
    density_ptr = c_null_ptr
    name_ptr = c_null_ptr
    particles_ptr = c_null_ptr
    scalar_type = PHEW_FLOAT64
    if (present(grid)) grid_ptr = c_loc(grid)
    if (present(density)) density_ptr = density
    if (present(density_type)) scalar_type = density_type
    if (present(density_name)) then
      allocate(name(len(density_name) + 1))
      name(1:len(density_name)) = transfer(density_name, name(1:len(density_name)))
      name(len(density_name) + 1) = c_null_char
      name_ptr = c_loc(name)
    end if
    if (present(particles)) particles_ptr = c_loc(particles)
    status = c_execute(adaptor, step, time, grid_ptr, density_ptr, scalar_type, name_ptr, particles_ptr)
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
