/* RAMSES's spherical potential (physics.h; RAMSES pm/unbinding.f90, get_cmp_noiter,
 * compute_phi and potential, as docs/notes/ramses-unbinding.md reads them):
 * - edges r_0 = 0 < r_1 < ... < r_N = r_max, r_max the largest distance of a member from the
 *   centre; log bins: r_i = r_min (r_max / r_min)^(i / N) for 0 < i < N; linear: i r_max / N;
 * - M_i: the mass of the members in the first bin i >= 1 whose edge r_i is >= their distance,
 *   summed outwards (M_0 = 0);
 * - phi(r_N) = -G M_N / r_N, then inwards by the trapezoid rule on G M(r) / r^2,
 *   phi(r_{i-1}) = phi(r_i) - G/2 (M_i / r_i^2 + M_{i-1} / r_{i-1}^2) (r_i - r_{i-1}), the
 *   M_0 / r_0^2 term taken as 0;
 * - a member at distance r takes phi linearly interpolated in the first interval whose outer
 *   edge is >= r (the last one if none), minus phi at the border when the border is within
 *   r_max (RAMSES's saddle cut). */
#include "physics.h"

#include <math.h>
#include <stdlib.h>

/* phi at distance r from the tables. */
static double interpolate(const double *edge, const double *table, int n_bins, double r)
{
  int i = 1;
  while (i < n_bins && !(r <= edge[i]))
    ++i;
  return table[i - 1] + (table[i] - table[i - 1]) * (r - edge[i - 1]) / (edge[i] - edge[i - 1]);
}

/* cum[i]: the mass of the members in bin i (exact sums, over the ranks of c when not NULL),
 * then summed outwards. */
static phew_status bin_masses(comm *c, const double *distance, const double *mass, int64_t n, const double *edge,
                              int nb, double *cum)
{
  exact_sum *bin = phew_malloc((size_t)nb + 1, sizeof *bin);
  if (reduce_failed(c, !bin)) {
    free(bin);
    return PHEW_ERROR_MEMORY;
  }
  for (int i = 0; i <= nb; ++i)
    exact_sum_clear(&bin[i]);
  for (int64_t k = 0; k < n; ++k) {
    int i = 1;
    while (i < nb && !(distance[k] <= edge[i]))
      ++i;
    exact_sum_add(&bin[i], mass ? mass[k] : 1.0);
  }
  const phew_status status = reduce_exact(c, bin, (int64_t)nb + 1);
  cum[0] = 0.0;
  for (int i = 1; i <= nb; ++i)
    cum[i] = cum[i - 1] + exact_double(&bin[i]);
  free(bin);
  return status;
}

phew_status potential_spherical(comm *c, const double *position, const double *mass, int64_t n, const double *centre,
                                double border, const spherical_params *p, double *phi)
{
  const int nb = p->n_bins;
  double *distance = phew_malloc((size_t)n + 1, sizeof *distance);
  double *edge = phew_calloc((size_t)nb + 1, sizeof *edge), *cum = phew_calloc((size_t)nb + 1, sizeof *cum);
  double *table = phew_calloc((size_t)nb + 1, sizeof *table);
  if (reduce_failed(c, !distance || !edge || !cum || !table)) {
    free(distance);
    free(edge);
    free(cum);
    free(table);
    return PHEW_ERROR_MEMORY;
  }
  double r_max = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    const double dx = position[3 * i] - centre[0], dy = position[3 * i + 1] - centre[1],
                 dz = position[3 * i + 2] - centre[2];
    distance[i] = sqrt((dx * dx + dy * dy) + dz * dz);
    r_max = distance[i] > r_max ? distance[i] : r_max;
  }
  r_max = reduce_max(c, r_max);
  phew_status status = PHEW_OK;
  if (!(r_max > 0.0)) { /* no profile (RAMSES: r_N = 0): no binding */
    for (int64_t i = 0; i < n; ++i)
      phi[i] = 0.0;
  } else {
    for (int i = 1; i < nb; ++i)
      edge[i] = p->log_bins ? p->r_min * pow(r_max / p->r_min, (double)i / nb) : (double)i * r_max / nb;
    edge[nb] = r_max;
    status = bin_masses(c, distance, mass, n, edge, nb, cum);
    const double g = p->g_over_a;
    table[nb] = -g * cum[nb] / edge[nb];
    for (int i = nb; i >= 2; --i)
      table[i - 1] = table[i] - 0.5 * g * (cum[i] / (edge[i] * edge[i]) + cum[i - 1] / (edge[i - 1] * edge[i - 1])) *
                                    (edge[i] - edge[i - 1]);
    table[0] = table[1] - 0.5 * g * (cum[1] / (edge[1] * edge[1])) * edge[1];
    const double shift = border <= r_max ? interpolate(edge, table, nb, border) : 0.0;
    for (int64_t k = 0; k < n; ++k)
      phi[k] = interpolate(edge, table, nb, distance[k]) - shift;
  }
  free(distance);
  free(edge);
  free(cum);
  free(table);
  return status;
}
