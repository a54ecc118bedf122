/* A particle set's arrays (particle_arrays.h) and phew_particle_set_free. */
#include "particle_arrays.h"
#include "large_arrays.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

size_t value_type_size(phew_value_type type)
{
  static const size_t sizes[] = {4, 8, 1, 2, 4, 8, 1, 2, 4, 8};
  return sizes[type];
}

size_t scalar_type_size(phew_scalar_type type) { return type == PHEW_FLOAT32 ? 4 : 8; }

static void *allocate(int64_t count, size_t size, const char *what, read_error *e)
{
  const size_t n = count > 0 ? (size_t)count : 1;
  void *p = n <= (size_t)-1 / size ? large_array_alloc(n * size) : NULL;
  if (!p)
    read_fail_memory(e, what, (double)n * (double)size);
  return p;
}

int particle_arrays_allocate(phew_particle_set *set, int64_t n, phew_scalar_type type, int with_velocity, read_error *e)
{
  const size_t s = scalar_type_size(type);
  set->n = n;
  set->type = type;
  set->position = allocate(3 * n, s, "the particle positions", e);
  set->mass = allocate(n, s, "the particle masses", e);
  set->id = allocate(n, sizeof *set->id, "the particle ids", e);
  if (with_velocity)
    set->velocity = allocate(3 * n, s, "the particle velocities", e);
  return e->status == PHEW_OK ? 0 : -1;
}

phew_particle_field *particle_arrays_add_field(phew_particle_set *set, const char *name, int components,
                                               phew_value_type type, read_error *e)
{
  phew_particle_field *grown = realloc(set->fields, (size_t)(set->n_fields + 1) * sizeof *grown);
  if (!grown) {
    read_fail_memory(e, "the list of particle fields", 0.0);
    return NULL;
  }
  set->fields = grown;
  phew_particle_field *f = &set->fields[set->n_fields];
  memset(f, 0, sizeof *f);
  f->values = allocate(set->n * components, value_type_size(type), name, e);
  if (!f->values)
    return NULL;
  snprintf(f->name, sizeof f->name, "%s", name);
  f->components = components;
  f->type = type;
  set->n_fields += 1;
  return f;
}

void scale_values(void *values, int64_t count, phew_scalar_type type, double factor)
{
  if (type == PHEW_FLOAT32) {
    float *v = values;
    for (int64_t i = 0; i < count; ++i)
      v[i] = (float)(v[i] * factor);
  } else {
    double *v = values;
    for (int64_t i = 0; i < count; ++i)
      v[i] *= factor;
  }
}

void phew_particle_set_free(phew_particle_set *set)
{
  if (!set)
    return;
  free(set->position);
  free(set->velocity);
  free(set->mass);
  free(set->id);
  for (int k = 0; k < set->n_fields; ++k)
    free(set->fields[k].values);
  free(set->fields);
  memset(set, 0, sizeof *set);
}
