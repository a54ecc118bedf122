/* Per-structure sums over cells (number of cells, mass, first moments, volume, minimum
 * density) and the physical values derived from them.
 *
 * The sums are exact (exact_sum.h): every term is added without rounding, whatever its
 * magnitude, so the sums, and every property derived from them, have the same bits whatever
 * order the cells are visited in and however the cells are split over ranks. Values are
 * checked against the double range only at the end, where a clear error replaces an inf, a
 * nan or a silent zero. */
#include "amr_mesh.h"
#include "catalogue.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

void sums_clear(sums *s)
{
  memset(s, 0, sizeof *s); /* padding too: sums travel between ranks bytewise */
  exact_sum_clear(&s->mass);
  for (int d = 0; d < 3; ++d)
    exact_sum_clear(&s->moment[d]);
  exact_sum_clear(&s->volume);
  s->min_density = INFINITY;
  for (int d = 0; d < 3; ++d)
    exact_sum_clear(&s->momentum[d]);
  exact_sum_clear(&s->dispersion);
  s->max_distance2 = 0.0;
}

static int64_t bit_length(uint64_t k) { return 64 - __builtin_clzll(k); }

void sums_term_bits(const mesh *m, double peak_density, term_bits *bits)
{
  int64_t e;
  int negative;
  const uint64_t mantissa = exact_split(peak_density, &e, &negative);
  const int64_t peak = e + bit_length(mantissa); /* densities < 2^peak */
  if (m->kind == PHEW_MESH_STRUCTURED) {
    /* masses count densities (the cell volume is a common factor; one bit spare), moments
     * densities times whole-cell displacements, at most half the axis on a periodic one */
    bits->mass = peak + 1;
    bits->volume = 0;
    for (int d = 0; d < 3; ++d) {
      const int64_t n = m->b.grid->global_dims[d];
      bits->moment[d] = peak + bit_length((uint64_t)(m->b.grid->periodic[d] ? n / 2 + 1 : n));
    }
    return;
  }
  /* AMR, in finest cells: a cell counts up to 8^finest of them, its moments densities times
   * twice the displacement (at most twice the finest level's extent) times 2^-1 */
  const amr_mesh *a = m->amr;
  const int64_t scale = 3 * (int64_t)(a->n_levels - 1);
  bits->mass = peak + scale;
  bits->volume = 1 + scale;
  for (int d = 0; d < 3; ++d)
    bits->moment[d] = peak + scale + bit_length((uint64_t)(2 * a->level_dims[a->n_levels - 1][d])) - 1;
}

void sums_start(sums *s, const mesh *m, double peak_density)
{
  sums_clear(s);
  if (m->kind == PHEW_MESH_GRAPH)
    return;
  /* grids and AMR bound every term in advance (by the peak density): the windows can be
   * placed, and the cells' terms added as integers (cell_sums.c) */
  term_bits bits;
  sums_term_bits(m, peak_density, &bits);
  exact_sum_start(&s->mass, (bits.mass - 1) >> 6);
  exact_sum_start(&s->volume, (bits.volume - 1) >> 6);
  for (int d = 0; d < 3; ++d)
    exact_sum_start(&s->moment[d], (bits.moment[d] - 1) >> 6);
}

void sums_merge(sums *to, const sums *from)
{
  to->n_cells += from->n_cells;
  exact_sum_merge(&to->mass, &from->mass);
  for (int d = 0; d < 3; ++d)
    exact_sum_merge(&to->moment[d], &from->moment[d]);
  exact_sum_merge(&to->volume, &from->volume);
  if (from->min_density < to->min_density)
    to->min_density = from->min_density;
  for (int d = 0; d < 3; ++d)
    exact_sum_merge(&to->momentum[d], &from->momentum[d]);
  exact_sum_merge(&to->dispersion, &from->dispersion);
  if (from->max_distance2 > to->max_distance2)
    to->max_distance2 = from->max_distance2;
}

/* The sums of the structure of peak p in target t, with the cell (of density rho) counted,
 * and the structure's reference; NULL if p belongs to none. */
static inline sums *structure_sums(const sum_target *t, int64_t p, double rho, const double **reference)
{
  const int64_t k = t->structure_of_peak[p];
  if (k < 0)
    return NULL;
  *reference = t->reference + 3 * k;
  sums *s = &t->out[k];
  s->n_cells++;
  if (rho < s->min_density)
    s->min_density = rho;
  return s;
}

/* Graphs: masses are densities times cell volumes (particles: their masses), moments those
 * times displacements. */
static void accumulate_list(const mesh *m, const field *f, const int64_t *cell_peak, const sum_target *targets,
                            int n_targets, run_control *rc)
{
  cell_walk w;
  if (cell_walk_init(&w, m) != PHEW_OK)
    return; /* cannot happen: the walk was made before, by the watershed */
  const int has_position = m->graph->position != NULL;
  for (int64_t i = 0; i < m->n_local; ++i) {
    if (run_control_tick_cells(rc, i, m->n_local))
      break;
    const int64_t p = cell_peak[i];
    if (p < 0 || !cell_walk_active(&w, i))
      continue;
    const double rho = field_value(f, i);
    const double volume = cell_walk_volume(&w, i);
    double c[3] = {0.0, 0.0, 0.0};
    if (has_position)
      cell_walk_coord(&w, i, c);
    const double mass = m->particles ? (m->cell_mass ? m->cell_mass[i] : 1.0) : 0.0;
    const double *v = m->velocity ? m->velocity + 3 * i : NULL;
    for (int t = 0; t < n_targets; ++t) {
      const double *ref;
      sums *s = structure_sums(&targets[t], p, rho, &ref);
      if (!s)
        continue;
      exact_sum_add(&s->volume, volume);
      if (m->particles) {
        exact_sum_add(&s->mass, mass);
        for (int a = 0; a < 3; ++a) {
          exact_sum_add_product(&s->moment[a], mass, mesh_displacement(m, a, c[a], ref[a]));
          if (v)
            exact_sum_add_product(&s->momentum[a], mass, v[a]);
        }
        continue;
      }
      exact_sum_add_product(&s->mass, rho, volume);
      if (has_position)
        for (int a = 0; a < 3; ++a)
          exact_sum_add_product3(&s->moment[a], rho, volume, mesh_displacement(m, a, c[a], ref[a]));
    }
  }
  cell_walk_free(&w);
}

phew_status sums_accumulate(const mesh *m, const field *f, const int64_t *cell_peak, const sum_target *targets,
                            int n_targets, run_control *rc)
{
  if (m->kind != PHEW_MESH_GRAPH)
    return sums_accumulate_cells(m, f, cell_peak, targets, n_targets, rc);
  accumulate_list(m, f, cell_peak, targets, n_targets, rc);
  return PHEW_OK;
}

void sums_merge_spread(sums *to, const sums *from)
{
  exact_sum_merge(&to->dispersion, &from->dispersion);
  if (from->max_distance2 > to->max_distance2)
    to->max_distance2 = from->max_distance2;
}

void sums_centre(const mesh *m, const sums *s, const double reference[3], double out[6])
{
  const wide_float mass = exact_sum_value(&s->mass);
  for (int d = 0; d < 3; ++d) {
    out[d] = reference[d] + wide_ratio(exact_sum_value(&s->moment[d]), mass);
    out[3 + d] = m->velocity ? wide_ratio(exact_sum_value(&s->momentum[d]), mass) : 0.0;
  }
}

void sums_accumulate_spread(const mesh *m, const int64_t *cell_peak, const sum_target *targets,
                            const double *const *centre, int n_targets)
{
  const double *position = m->graph->position;
  for (int64_t i = 0; i < m->n_local; ++i) {
    const int64_t p = cell_peak[i];
    if (p < 0 || (m->graph->ghost && m->graph->ghost[i]))
      continue;
    const double mass = m->cell_mass ? m->cell_mass[i] : 1.0;
    for (int t = 0; t < n_targets; ++t) {
      const int64_t k = targets[t].structure_of_peak[p];
      if (k < 0)
        continue;
      const double *c = centre[t] + 6 * k;
      sums *s = &targets[t].out[k];
      s->n_cells++;
      double r2 = 0.0, v2 = 0.0;
      for (int a = 0; a < 3; ++a) {
        const double dx = position ? mesh_displacement(m, a, position[3 * i + a], c[a]) : 0.0;
        r2 += dx * dx;
        if (m->velocity) {
          const double dv = m->velocity[3 * i + a] - c[3 + a];
          v2 += dv * dv;
        }
      }
      if (r2 > s->max_distance2)
        s->max_distance2 = r2;
      if (m->velocity)
        exact_sum_add_product(&s->dispersion, mass, v2);
    }
  }
}

/* ---- physical values --------------------------------------------------------------------- */

/* Grids and AMR sum in cells (AMR: finest cells): times the cell volume, one axis at a time. */
static wide_float times_cell_volume(const mesh *m, wide_float w)
{
  if (m->kind != PHEW_MESH_GRAPH)
    for (int d = 0; d < 3; ++d)
      w = wide_mul(w, wide_from_double(m->cell_size[d]));
  return w;
}

wide_float sums_mass_value(const mesh *m, const exact_sum *mass) { return times_cell_volume(m, exact_sum_value(mass)); }

static wide_float volume_value(const mesh *m, const sums *s)
{
  return times_cell_volume(m,
                           m->kind == PHEW_MESH_STRUCTURED ? wide_from_int(s->n_cells) : exact_sum_value(&s->volume));
}

int sums_to_double(const mesh *m, wide_float value, const char *what, const char *object, double *out, char *why,
                   size_t why_size)
{
  char subject[192];
  snprintf(subject, sizeof subject, "the %s of %s", what, object);
  /* particles have masses and positions, no density field or cells to rescale */
  const char *hint = !m->particles           ? "rescale the density or the cell size"
                     : !strcmp(what, "mass") ? "rescale the particle masses"
                                             : "rescale the particle masses or positions";
  return wide_to_double_why(value, subject, hint, out, why, why_size);
}

int sums_values(const mesh *m, const sums *s, const double reference[3], const char *object, phew_object *o, char *why,
                size_t why_size)
{
  const wide_float mass = sums_mass_value(m, &s->mass), volume = volume_value(m, s);
  if (sums_to_double(m, mass, "mass", object, &o->mass, why, why_size) != 0 ||
      sums_to_double(m, volume, "volume", object, &o->volume, why, why_size) != 0)
    return -1;
  const wide_float weight = exact_sum_value(&s->mass); /* what the moments are weighted by */
  /* a weighted mean of densities: never beyond the densities themselves */
  o->mean_density = m->kind == PHEW_MESH_STRUCTURED ? wide_ratio(weight, wide_from_int(s->n_cells))
                                                    : wide_ratio(weight, exact_sum_value(&s->volume));
  o->min_density = s->min_density;
  for (int d = 0; d < 3; ++d) {
    const double shift = wide_ratio(exact_sum_value(&s->moment[d]), weight);
    o->peak_position[d] = mesh_position(m, d, reference[d]);
    o->center_of_mass[d] = mesh_wrap(m, d, mesh_position(m, d, reference[d] + shift));
  }
  if (m->particles) {
    o->mean_density /= m->density_unit; /* volumes are physical, densities may be relative */
    o->radius = sqrt(s->max_distance2);
    if (m->velocity) {
      for (int d = 0; d < 3; ++d)
        o->mean_velocity[d] = wide_ratio(exact_sum_value(&s->momentum[d]), weight);
      o->velocity_dispersion = sqrt(wide_ratio(exact_sum_value(&s->dispersion), weight));
    }
  }
  return 0;
}
