! The bind(c) types of module phew_catalyst, phew_grid and phew_points, against the core's C
! structs (layout_check.c): the same size and component offsets, known values read back through
! C, and default initialisation equal to phew_grid_init_whole (0 cells) and phew_points_init.
! Prints every difference and "layout: ok" when there is none; exit status 1 otherwise.
!   layout_probe
program layout_probe
  use, intrinsic :: iso_c_binding
  use phew_catalyst
  implicit none
  interface
    function layout_check_grid(offsets, size) result(wrong) bind(c, name='layout_check_grid')
      import :: c_size_t, c_int
      integer(c_size_t), intent(in) :: offsets(*)
      integer(c_size_t), value :: size
      integer(c_int) :: wrong
    end function
    function layout_check_points(offsets, size) result(wrong) bind(c, name='layout_check_points')
      import :: c_size_t, c_int
      integer(c_size_t), intent(in) :: offsets(*)
      integer(c_size_t), value :: size
      integer(c_int) :: wrong
    end function
    function layout_check_values(grid, points, position, mass, velocity, id) result(wrong) &
        bind(c, name='layout_check_values')
      import :: c_int, c_ptr, phew_grid, phew_points
      type(phew_grid), intent(in) :: grid
      type(phew_points), intent(in) :: points
      type(c_ptr), value :: position, mass, velocity, id
      integer(c_int) :: wrong
    end function
    function layout_check_defaults(grid, points) result(wrong) bind(c, name='layout_check_defaults')
      import :: c_int, phew_grid, phew_points
      type(phew_grid), intent(in) :: grid
      type(phew_points), intent(in) :: points
      integer(c_int) :: wrong
    end function
  end interface
  type(phew_grid), target :: grid, default_grid
  type(phew_points), target :: points, default_points
  real(c_float), target :: position(3, 2), mass(2), velocity(3, 2)
  integer(c_int64_t), target :: id(2)
  integer :: wrong

  position = 0
  mass = 1
  velocity = 0
  id = [3, 4]
  wrong = layout_check_grid([at(c_loc(grid%global_dims)), at(c_loc(grid%stored_offset)), &
                             at(c_loc(grid%stored_dims)), at(c_loc(grid%active_offset)), &
                             at(c_loc(grid%active_dims)), at(c_loc(grid%periodic)), &
                             at(c_loc(grid%origin)), at(c_loc(grid%spacing))] - at(c_loc(grid)), &
                            c_sizeof(grid))
  wrong = wrong + layout_check_points([at(c_loc(points%n)), at(c_loc(points%type)), at(c_loc(points%position)), &
                                       at(c_loc(points%mass)), at(c_loc(points%velocity)), at(c_loc(points%id)), &
                                       at(c_loc(points%has_box)), at(c_loc(points%box_origin)), &
                                       at(c_loc(points%box_size)), at(c_loc(points%periodic)), &
                                       at(c_loc(points%n_neighbours)), at(c_loc(points%n_density_neighbours))] &
                                      - at(c_loc(points)), c_sizeof(points))

  grid%global_dims = [101, 102, 103]
  grid%stored_offset = [-1, 4, 9]
  grid%stored_dims = [52, 103, 13]
  grid%active_offset = [0, 5, 10]
  grid%active_dims = [50, 101, 11]
  grid%periodic = [1, 0, 1]
  grid%origin = [-0.5d0, 0.25d0, 1.5d0]
  grid%spacing = [0.125d0, 0.0625d0, 2d0]
  points%n = 12345678901_c_int64_t
  points%type = PHEW_FLOAT32
  points%position = c_loc(position)
  points%mass = c_loc(mass)
  points%velocity = c_loc(velocity)
  points%id = c_loc(id)
  points%has_box = 1
  points%box_origin = [-1d0, -2d0, -3d0]
  points%box_size = [10d0, 20d0, 30d0]
  points%periodic = [1, 1, 0]
  points%n_neighbours = 7
  points%n_density_neighbours = 33
  wrong = wrong + layout_check_values(grid, points, c_loc(position), c_loc(mass), c_loc(velocity), c_loc(id))
  wrong = wrong + layout_check_defaults(default_grid, default_points)

  if (wrong /= 0) then
    write (*, '(a, i0, a)') 'layout: ', wrong, ' difference(s)'
    error stop 1
  end if
  write (*, '(a, i0, a, i0, a)') 'layout: ok (phew_grid ', c_sizeof(grid), ' bytes, phew_points ', &
    c_sizeof(points), ' bytes)'

contains

  ! An address as an integer, for offsets.
  integer(c_size_t) function at(p)
    type(c_ptr), intent(in) :: p
    at = int(transfer(p, 0_c_intptr_t), c_size_t)
  end function
end program
