/* Per-structure sums over cells (number of cells, mass, first moments, minimum density).
 *
 * Sums use fixed point: each term is scaled by a power of two chosen from the global maximum
 * density and truncated to a 128-bit integer. Integer addition is associative, so the sums,
 * and every property derived from them, are bit-identical whatever order the cells are
 * visited in and however the grid is split over ranks. */
#include "internal.h"

#include <math.h>
#include <string.h>

static int exponent_of(double x)
{
  int e = 0;
  if (x > 0.0 && isfinite(x))
    frexp(x, &e); /* x < 2^e */
  return e;
}

sum_scales sums_scales(double max_density, const int64_t global_dims[3])
{
  int64_t longest = 1;
  for (int d = 0; d < 3; ++d)
    if (global_dims[d] > longest)
      longest = global_dims[d];
  /* one scale for mass and moments: |rho * displacement| stays below 2^62, so every term
   * converts to int64 in one instruction and 2^64 terms cannot overflow 127 bits */
  sum_scales s;
  s.shift = 62 - exponent_of(max_density * (double)longest);
  s.factor = ldexp(1.0, s.shift);
  return s;
}

void sums_clear(sums *s)
{
  memset(s, 0, sizeof *s);
  s->min_density = INFINITY;
}

void sums_add(sums *into, const sums *from)
{
  into->n_cells += from->n_cells;
  into->mass += from->mass;
  for (int d = 0; d < 3; ++d)
    into->moment[d] += from->moment[d];
  if (from->min_density < into->min_density)
    into->min_density = from->min_density;
}


double fixed_to_double(phew_fixed x, int shift) { return ldexp((double)x, -shift); }

/* Displacement from the reference cell along one axis, by the nearest image if periodic. */
static int64_t displacement(int64_t c, int64_t ref, int64_t n, int periodic)
{
  int64_t d = c - ref;
  if (periodic) {
    if (2 * d > n)
      d -= n;
    else if (2 * d < -n)
      d += n;
  }
  return d;
}

/* Moves the reference of a structure's moments: moment += mass * displacement, exact. */
void sums_shift_reference(sums *s, const int64_t from[3], const int64_t to[3], const phew_grid *g)
{
  for (int d = 0; d < 3; ++d)
    s->moment[d] += s->mass * displacement(from[d], to[d], g->global_dims[d], g->periodic[d]);
}

void sums_accumulate(const block *b, const field *f, const int64_t *cell_peak, const int64_t *structure_of_peak,
                     const int64_t *reference, sums *out, sum_scales scales)
{
  const phew_grid *g = b->grid;
  for (int64_t z = b->lo[2]; z < b->hi[2]; ++z)
    for (int64_t y = b->lo[1]; y < b->hi[1]; ++y) {
      const int64_t row = b->dims[0] * (y + b->dims[1] * z);
      const int64_t cy = g->stored_offset[1] + y, cz = g->stored_offset[2] + z;
      for (int64_t x = b->lo[0]; x < b->hi[0]; ++x) {
        const int64_t p = cell_peak[row + x];
        if (p < 0)
          continue;
        const int64_t k = structure_of_peak[p];
        if (k < 0)
          continue;
        const double rho = field_value(f, row + x);
        const double w = rho * scales.factor; /* exact: a power of two */
        const int64_t *ref = reference + 3 * k;
        const int64_t dx = displacement(g->stored_offset[0] + x, ref[0], g->global_dims[0], g->periodic[0]);
        const int64_t dy = displacement(cy, ref[1], g->global_dims[1], g->periodic[1]);
        const int64_t dz = displacement(cz, ref[2], g->global_dims[2], g->periodic[2]);
        sums *s = &out[k];
        s->n_cells++;
        s->mass += (int64_t)w;
        s->moment[0] += (int64_t)(w * (double)dx);
        s->moment[1] += (int64_t)(w * (double)dy);
        s->moment[2] += (int64_t)(w * (double)dz);
        if (rho < s->min_density)
          s->min_density = rho;
      }
    }
}
