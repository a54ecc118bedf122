/* The arrays of a phew_particle_set, allocated for this rank's share. */
#ifndef PHEW_READERS_PARTICLE_ARRAYS_H
#define PHEW_READERS_PARTICLE_ARRAYS_H

#include "phew/phew_readers.h"
#include "read_error.h"

#include <stddef.h>

size_t value_type_size(phew_value_type type);
size_t scalar_type_size(phew_scalar_type type);

/* Position, mass and id for n particles, velocity too when with_velocity; the set's n. */
int particle_arrays_allocate(phew_particle_set *set, int64_t n, phew_scalar_type type, int with_velocity,
                             read_error *e);
/* One more per-particle field of n x components values; NULL (and e set) on failure. */
phew_particle_field *particle_arrays_add_field(phew_particle_set *set, const char *name, int components,
                                               phew_value_type type, read_error *e);
/* Multiplies n x components values of type (float32 or float64) by factor. */
void scale_values(void *values, int64_t count, phew_scalar_type type, double factor);

#endif
