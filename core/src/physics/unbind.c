/* One structure's unbinding (physics.h): the bulk velocity iterated on the bound members, then
 * the candidates with E >= 0 passed to the parent. The sums are exact sums, merged over the
 * ranks when the structure is spread (c not NULL): the same bits on one rank or several. */
#include "physics.h"

#include <math.h>
#include <stdlib.h>

/* The mass-weighted mean velocity v of the members that count (bound to substructure, or
 * candidates still bound), and their dispersion about it; *mass 0 (v untouched) if none
 * counts. */
static phew_status mean_velocity(comm *c, const member *m, int64_t n, int64_t structure, const unsigned char *still,
                                 double v[3], double *dispersion, double *mass)
{
  exact_sum sum[4];
  for (int k = 0; k < 4; ++k)
    exact_sum_clear(&sum[k]);
  for (int64_t k = 0; k < n; ++k) {
    if (m[k].bound == structure && !still[k])
      continue;
    exact_sum_add(&sum[0], m[k].mass);
    for (int d = 0; d < 3; ++d)
      exact_sum_add_product(&sum[1 + d], m[k].mass, m[k].velocity[d]);
  }
  phew_status status = reduce_exact(c, sum, 4);
  *mass = exact_double(&sum[0]);
  if (status != PHEW_OK || !(*mass > 0.0))
    return status;
  for (int d = 0; d < 3; ++d)
    v[d] = exact_double(&sum[1 + d]) / *mass;
  exact_sum spread;
  exact_sum_clear(&spread);
  for (int64_t k = 0; k < n; ++k) {
    if (m[k].bound == structure && !still[k])
      continue;
    const double dx = m[k].velocity[0] - v[0], dy = m[k].velocity[1] - v[1], dz = m[k].velocity[2] - v[2];
    exact_sum_add_product(&spread, m[k].mass, (dx * dx + dy * dy) + dz * dz);
  }
  status = reduce_exact(c, &spread, 1);
  *dispersion = sqrt(exact_double(&spread) / *mass);
  return status;
}

/* still[k] for the candidates: E < 0 with the bulk velocity v. */
static void test_energies(const member *m, int64_t n, const double *phi, int64_t structure, const double v[3],
                          unsigned char *still)
{
  for (int64_t k = 0; k < n; ++k) {
    if (m[k].bound != structure)
      continue;
    const double dx = m[k].velocity[0] - v[0], dy = m[k].velocity[1] - v[1], dz = m[k].velocity[2] - v[2];
    still[k] = 0.5 * ((dx * dx + dy * dy) + dz * dz) + phi[k] < 0.0;
  }
}

void bound_energies(const member *m, int64_t n, const double *phi, int64_t structure, const double bulk[3],
                    double *energy)
{
  for (int64_t k = 0; k < n; ++k) {
    if (m[k].bound != structure)
      continue;
    const double dx = m[k].velocity[0] - bulk[0], dy = m[k].velocity[1] - bulk[1], dz = m[k].velocity[2] - bulk[2];
    energy[k] = 0.5 * ((dx * dx + dy * dy) + dz * dz) + phi[k];
  }
}

/* The bulk velocity v iterated from all members to the bound ones (the rules in physics.h). */
static phew_status iterate(comm *c, member *m, int64_t n, const double *phi, int64_t structure, const unbind_params *p,
                           unsigned char *still, double v[3], int *iterations)
{
  double dispersion = 0.0, mass = 0.0;
  phew_status status = mean_velocity(c, m, n, structure, still, v, &dispersion, &mass);
  *iterations = 1;
  while (status == PHEW_OK && *iterations < p->max_iterations) {
    test_energies(m, n, phi, structure, v, still);
    double w[3] = {v[0], v[1], v[2]};
    status = mean_velocity(c, m, n, structure, still, w, &dispersion, &mass);
    if (status != PHEW_OK || !(mass > 0.0))
      break; /* nothing bound: the last estimate stands, and unbinds every candidate */
    ++*iterations;
    const double dx = w[0] - v[0], dy = w[1] - v[1], dz = w[2] - v[2];
    const double moved = sqrt((dx * dx + dy * dy) + dz * dz);
    for (int d = 0; d < 3; ++d)
      v[d] = w[d];
    if (moved <= p->tolerance * dispersion)
      break;
  }
  return status;
}

phew_status unbind_structure(comm *c, member *m, int64_t n, const double *phi, int64_t structure, int64_t parent,
                             const unbind_params *p, int *iterations, int64_t *n_candidates)
{
  *iterations = 0;
  *n_candidates = 0;
  for (int64_t k = 0; k < n; ++k)
    *n_candidates += m[k].bound == structure;
  reduce_counts(c, n_candidates, 1);
  if (!p->unbind || *n_candidates == 0)
    return PHEW_OK;
  unsigned char *still = phew_malloc((size_t)n + 1, 1);
  if (reduce_failed(c, !still)) {
    free(still);
    return PHEW_ERROR_MEMORY;
  }
  for (int64_t k = 0; k < n; ++k)
    still[k] = 1;
  double v[3] = {0.0, 0.0, 0.0};
  const phew_status status = iterate(c, m, n, phi, structure, p, still, v, iterations);
  if (status == PHEW_OK) {
    test_energies(m, n, phi, structure, v, still);
    for (int64_t k = 0; k < n; ++k)
      if (m[k].bound == structure && !still[k])
        m[k].bound = parent;
  }
  free(still);
  return status;
}
