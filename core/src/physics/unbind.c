/* One structure's unbinding (physics.h): the bulk velocity iterated on the bound members, then
 * the candidates with E >= 0 passed to the parent. Sums run in the members' order. */
#include "physics.h"

#include <math.h>
#include <stdlib.h>

/* The mass-weighted mean velocity of the members that count (bound to substructure, or
 * candidates still bound), and their dispersion about it; 0 if none counts. */
static double mean_velocity(const member *m, int64_t n, int64_t structure, const unsigned char *still, double v[3],
                            double *dispersion)
{
  double mass = 0.0, p[3] = {0.0, 0.0, 0.0};
  for (int64_t k = 0; k < n; ++k) {
    if (m[k].bound == structure && !still[k])
      continue;
    mass += m[k].mass;
    for (int d = 0; d < 3; ++d)
      p[d] += m[k].mass * m[k].velocity[d];
  }
  if (!(mass > 0.0))
    return 0.0;
  for (int d = 0; d < 3; ++d)
    v[d] = p[d] / mass;
  double spread = 0.0;
  for (int64_t k = 0; k < n; ++k) {
    if (m[k].bound == structure && !still[k])
      continue;
    const double dx = m[k].velocity[0] - v[0], dy = m[k].velocity[1] - v[1], dz = m[k].velocity[2] - v[2];
    spread += m[k].mass * ((dx * dx + dy * dy) + dz * dz);
  }
  *dispersion = sqrt(spread / mass);
  return mass;
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

int unbind_structure(member *m, int64_t n, const double *phi, int64_t structure, int64_t parent, const unbind_params *p,
                     int64_t *n_candidates)
{
  *n_candidates = 0;
  for (int64_t k = 0; k < n; ++k)
    *n_candidates += m[k].bound == structure;
  if (!p->unbind || *n_candidates == 0)
    return 0;
  unsigned char *still = phew_malloc((size_t)n, 1);
  if (!still)
    return -1;
  for (int64_t k = 0; k < n; ++k)
    still[k] = 1;
  double v[3] = {0.0, 0.0, 0.0}, dispersion = 0.0;
  mean_velocity(m, n, structure, still, v, &dispersion);
  int iterations = 1;
  while (iterations < p->max_iterations) {
    test_energies(m, n, phi, structure, v, still);
    double w[3] = {v[0], v[1], v[2]};
    if (!(mean_velocity(m, n, structure, still, w, &dispersion) > 0.0))
      break; /* nothing bound: the last estimate stands, and unbinds every candidate */
    ++iterations;
    const double dx = w[0] - v[0], dy = w[1] - v[1], dz = w[2] - v[2];
    const double moved = sqrt((dx * dx + dy * dy) + dz * dz);
    for (int d = 0; d < 3; ++d)
      v[d] = w[d];
    if (moved <= p->tolerance * dispersion)
      break;
  }
  test_energies(m, n, phi, structure, v, still);
  for (int64_t k = 0; k < n; ++k)
    if (m[k].bound == structure && !still[k])
      m[k].bound = parent;
  free(still);
  return iterations;
}
