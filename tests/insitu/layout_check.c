/* The C half of layout_probe (layout_probe.f90): the Fortran module phew_catalyst mirrors the
 * core's phew_grid and phew_points as bind(c) types, which must have C's layout exactly. The
 * Fortran program passes each type's size and the offsets of its components (in declaration
 * order), then a variable of each type filled with known values, and its default-initialised
 * variables; these functions compare them with C's structs and print every difference. Each
 * returns the number of differences. */
#include <phew/phew.h>

#include <stddef.h>
#include <stdio.h>
#include <string.h>

static int differences(const char *type, const char *const *names, const size_t *c_offsets, int n, size_t c_size,
                       const size_t *offsets, size_t size)
{
  int wrong = 0;
  if (size != c_size) {
    printf("%s: size %zu in Fortran, %zu in C\n", type, size, c_size);
    wrong++;
  }
  for (int k = 0; k < n; ++k)
    if (offsets[k] != c_offsets[k]) {
      printf("%s.%s: offset %zu in Fortran, %zu in C\n", type, names[k], offsets[k], c_offsets[k]);
      wrong++;
    }
  return wrong;
}

int layout_check_grid(const size_t *offsets, size_t size)
{
  static const char *const names[] = {"global_dims", "stored_offset", "stored_dims", "active_offset",
                                      "active_dims", "periodic",      "origin",      "spacing"};
  const size_t c[] = {offsetof(phew_grid, global_dims), offsetof(phew_grid, stored_offset),
                      offsetof(phew_grid, stored_dims), offsetof(phew_grid, active_offset),
                      offsetof(phew_grid, active_dims), offsetof(phew_grid, periodic),
                      offsetof(phew_grid, origin),      offsetof(phew_grid, spacing)};
  return differences("phew_grid", names, c, 8, sizeof(phew_grid), offsets, size);
}

int layout_check_points(const size_t *offsets, size_t size)
{
  static const char *const names[] = {"n",        "type",     "position",     "mass",
                                      "velocity", "id",       "has_box",      "box_origin",
                                      "box_size", "periodic", "n_neighbours", "n_density_neighbours"};
  const size_t c[] = {offsetof(phew_points, n),
                      offsetof(phew_points, type),
                      offsetof(phew_points, position),
                      offsetof(phew_points, mass),
                      offsetof(phew_points, velocity),
                      offsetof(phew_points, id),
                      offsetof(phew_points, has_box),
                      offsetof(phew_points, box_origin),
                      offsetof(phew_points, box_size),
                      offsetof(phew_points, periodic),
                      offsetof(phew_points, n_neighbours),
                      offsetof(phew_points, n_density_neighbours)};
  return differences("phew_points", names, c, 12, sizeof(phew_points), offsets, size);
}

static int wrong_int64(const char *what, const int64_t *got, const int64_t *expected, int n)
{
  int wrong = 0;
  for (int k = 0; k < n; ++k)
    if (got[k] != expected[k]) {
      printf("%s[%d]: %lld, expected %lld\n", what, k, (long long)got[k], (long long)expected[k]);
      wrong++;
    }
  return wrong;
}

static int wrong_int(const char *what, const int *got, const int *expected, int n)
{
  int wrong = 0;
  for (int k = 0; k < n; ++k)
    if (got[k] != expected[k]) {
      printf("%s[%d]: %d, expected %d\n", what, k, got[k], expected[k]);
      wrong++;
    }
  return wrong;
}

static int wrong_double(const char *what, const double *got, const double *expected, int n)
{
  int wrong = 0;
  for (int k = 0; k < n; ++k)
    if (got[k] != expected[k]) {
      printf("%s[%d]: %g, expected %g\n", what, k, got[k], expected[k]);
      wrong++;
    }
  return wrong;
}

static int wrong_pointer(const char *what, const void *got, const void *expected)
{
  if (got == expected)
    return 0;
  printf("%s: %p, expected %p\n", what, got, expected);
  return 1;
}

static int grid_differences(const char *what, const phew_grid *g, const phew_grid *e)
{
  char name[64];
  int wrong = 0;
#define PHEW_FIELD(field, check, n)                   \
  snprintf(name, sizeof name, "%s.%s", what, #field); \
  wrong += check(name, g->field, e->field, n)
  PHEW_FIELD(global_dims, wrong_int64, 3);
  PHEW_FIELD(stored_offset, wrong_int64, 3);
  PHEW_FIELD(stored_dims, wrong_int64, 3);
  PHEW_FIELD(active_offset, wrong_int64, 3);
  PHEW_FIELD(active_dims, wrong_int64, 3);
  PHEW_FIELD(periodic, wrong_int, 3);
  PHEW_FIELD(origin, wrong_double, 3);
  PHEW_FIELD(spacing, wrong_double, 3);
#undef PHEW_FIELD
  return wrong;
}

static int points_differences(const char *what, const phew_points *p, const phew_points *e)
{
  char name[64];
  int wrong = 0;
  const int type = (int)p->type, expected_type = (int)e->type;
#define PHEW_FIELD(field, check, n)                   \
  snprintf(name, sizeof name, "%s.%s", what, #field); \
  wrong += check(name, p->field, e->field, n)
  PHEW_FIELD(box_origin, wrong_double, 3);
  PHEW_FIELD(box_size, wrong_double, 3);
  PHEW_FIELD(periodic, wrong_int, 3);
#undef PHEW_FIELD
#define PHEW_FIELD(field, check)                      \
  snprintf(name, sizeof name, "%s.%s", what, #field); \
  wrong += check(name, &p->field, &e->field, 1)
  PHEW_FIELD(n, wrong_int64);
  PHEW_FIELD(has_box, wrong_int);
  PHEW_FIELD(n_neighbours, wrong_int);
  PHEW_FIELD(n_density_neighbours, wrong_int);
#undef PHEW_FIELD
  snprintf(name, sizeof name, "%s.type", what);
  wrong += wrong_int(name, &type, &expected_type, 1);
  wrong += wrong_pointer("position", p->position, e->position);
  wrong += wrong_pointer("mass", p->mass, e->mass);
  wrong += wrong_pointer("velocity", p->velocity, e->velocity);
  wrong += wrong_pointer("id", (const void *)p->id, (const void *)e->id);
  return wrong;
}

/* g and p as layout_probe.f90 fills them (the arrays' addresses passed beside them). */
int layout_check_values(const phew_grid *g, const phew_points *p, const void *position, const void *mass,
                        const void *velocity, const int64_t *id)
{
  const phew_grid eg = {{101, 102, 103}, {-1, 4, 9}, {52, 103, 13},     {0, 5, 10},
                        {50, 101, 11},   {1, 0, 1},  {-0.5, 0.25, 1.5}, {0.125, 0.0625, 2.0}};
  phew_points ep;
  memset(&ep, 0, sizeof ep);
  ep.n = 12345678901LL;
  ep.type = PHEW_FLOAT32;
  ep.position = position;
  ep.mass = mass;
  ep.velocity = velocity;
  ep.id = id;
  ep.has_box = 1;
  const double origin[3] = {-1.0, -2.0, -3.0}, size[3] = {10.0, 20.0, 30.0};
  const int periodic[3] = {1, 1, 0};
  memcpy(ep.box_origin, origin, sizeof origin);
  memcpy(ep.box_size, size, sizeof size);
  memcpy(ep.periodic, periodic, sizeof periodic);
  ep.n_neighbours = 7;
  ep.n_density_neighbours = 33;
  return grid_differences("grid", g, &eg) + points_differences("points", p, &ep);
}

/* The Fortran types' default initialisation: phew_grid_init_whole of 0 cells, phew_points_init. */
int layout_check_defaults(const phew_grid *g, const phew_points *p)
{
  phew_grid eg;
  phew_grid_init_whole(&eg, 0, 0, 0);
  phew_points ep;
  phew_points_init(&ep);
  return grid_differences("default grid", g, &eg) + points_differences("default points", p, &ep);
}
