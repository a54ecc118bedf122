/* phew_estimate_density: the SPH density of every particle passed, without the clump finder. */
#include "particles.h"

#include <math.h>
#include <string.h>

static phew_status estimate_density(const phew_context *context, const phew_input *in, double *density,
                                    call_result *result)
{
  points_run run;
  memset(&run, 0, sizeof run);
  phew_status s = comm_init(&run.c, context, result);
  if (s != PHEW_OK)
    return s;
  if (!in || in->mesh != PHEW_MESH_POINTS || (in->points.n > 0 && !density))
    s = phew_fail(result, PHEW_ERROR_ARGUMENT, "phew_estimate_density needs particles and a density array");
  else if (in->density)
    s = phew_fail(result, PHEW_ERROR_ARGUMENT,
                  "phew_estimate_density estimates the densities: input->density must be NULL");
  s = comm_agree(&run.c, s, result);
  if (s == PHEW_OK)
    s = points_prepare(&run, context, in, POINTS_DENSITY, result);
  if (s == PHEW_OK) {
    const double t = phew_seconds();
    s = domain_return(&run.x, &run.s, run.rho, sizeof(double), density, in->points.n);
    run.seconds[PHEW_PARTICLE_DOMAIN] += phew_seconds() - t;
  }
  if (s != PHEW_OK && in && density)
    for (int64_t i = 0; i < in->points.n; ++i)
      density[i] = NAN;
  points_run_stats(&run, result);
  result->stats.n_cells = run.x.n_total;
  result->stats.n_ranks = run.c.size;
  points_run_free(&run);
  return s;
}

phew_status phew_estimate_density(phew_context *context, const phew_input *in, double *density, phew_stats *stats)
{
  if (!context)
    return call_refused(context, "phew_estimate_density");
  call_result r;
  call_result_start(&r);
  const phew_status s = estimate_density(context, in, density, &r);
  call_result_report(&r, s, context);
  if (stats)
    *stats = r.stats;
  return s;
}
