/* Per-structure sums over cells (number of cells, mass, first moments, minimum density).
 *
 * Sums use fixed point: each term is scaled by a power of two chosen from global bounds and
 * truncated to an integer. Integer addition is associative, so the sums, and every property
 * derived from them, are bit-identical whatever order the cells are visited in and however
 * the cells are split over ranks. */
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

sum_scales sums_scales(double max_volume)
{
  sum_scales s;
  s.volume_shift = 62 - exponent_of(max_volume);
  s.volume_factor = ldexp(1.0, s.volume_shift);
  return s;
}

void sums_clear(sums *s, double bound)
{
  /* |term| stays below 2^62: every term converts to int64 in one instruction and 2^64
   * terms cannot overflow 127 bits */
  memset(s, 0, sizeof *s);
  s->min_density = INFINITY;
  s->shift = 62 - exponent_of(bound);
  s->factor = ldexp(1.0, s->shift);
}

double fixed_to_double(phew_fixed x, int shift) { return ldexp((double)x, -shift); }

static inline void add_cell(sums *s, double rho, double w, const double d[3])
{
  s->n_cells++;
  s->mass += (int64_t)w;
  s->moment[0] += (int64_t)(w * d[0]);
  s->moment[1] += (int64_t)(w * d[1]);
  s->moment[2] += (int64_t)(w * d[2]);
  if (rho < s->min_density)
    s->min_density = rho;
}

static void accumulate_block(const mesh *m, const field *f, const int64_t *cell_peak, const int64_t *structure_of_peak,
                             const double *reference, sums *out)
{
  const block *b = &m->b;
  const phew_grid *g = b->grid;
  for (int64_t z = b->lo[2]; z < b->hi[2]; ++z)
    for (int64_t y = b->lo[1]; y < b->hi[1]; ++y) {
      const int64_t row = b->dims[0] * (y + b->dims[1] * z);
      const double cy = (double)(g->stored_offset[1] + y), cz = (double)(g->stored_offset[2] + z);
      for (int64_t x = b->lo[0]; x < b->hi[0]; ++x) {
        const int64_t p = cell_peak[row + x];
        if (p < 0)
          continue;
        const int64_t k = structure_of_peak[p];
        if (k < 0)
          continue;
        const double rho = field_value(f, row + x);
        const double *ref = reference + 3 * k;
        const double d[3] = {mesh_displacement(m, 0, (double)(g->stored_offset[0] + x), ref[0]),
                             mesh_displacement(m, 1, cy, ref[1]), mesh_displacement(m, 2, cz, ref[2])};
        add_cell(&out[k], rho, rho * out[k].factor, d); /* times a power of two: exact */
      }
    }
}

static void accumulate_graph(const mesh *m, const field *f, const int64_t *cell_peak, const int64_t *structure_of_peak,
                             const double *reference, sums *out, sum_scales scales)
{
  const phew_graph *g = m->graph;
  for (int64_t i = 0; i < g->n_cells; ++i) {
    const int64_t p = cell_peak[i];
    if (p < 0)
      continue;
    const int64_t k = structure_of_peak[p];
    if (k < 0)
      continue;
    const double rho = field_value(f, i);
    const double volume = g->volume ? g->volume[i] : 1.0;
    const double *ref = reference + 3 * k;
    double d[3] = {0.0, 0.0, 0.0};
    if (g->position)
      for (int a = 0; a < 3; ++a)
        d[a] = mesh_displacement(m, a, g->position[3 * i + a], ref[a]);
    add_cell(&out[k], rho, rho * volume * out[k].factor, d);
    out[k].volume += (int64_t)(volume * scales.volume_factor);
  }
}

void sums_accumulate(const mesh *m, const field *f, const int64_t *cell_peak, const int64_t *structure_of_peak,
                     const double *reference, sums *out, sum_scales scales)
{
  if (m->kind == PHEW_MESH_GRAPH)
    accumulate_graph(m, f, cell_peak, structure_of_peak, reference, out, scales);
  else
    accumulate_block(m, f, cell_peak, structure_of_peak, reference, out);
}

double sums_max_volume(const mesh *m, const int64_t *cell_peak)
{
  if (m->kind != PHEW_MESH_GRAPH || !m->graph->volume)
    return 1.0; /* grids: sums count cells; graphs without volumes: every cell has volume 1 */
  double max = 0.0;
  for (int64_t i = 0; i < m->n_local; ++i)
    if (cell_peak[i] >= 0 && m->graph->volume[i] > max)
      max = m->graph->volume[i];
  return max > 0.0 ? max : 1.0;
}
