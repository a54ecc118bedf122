/* Defaults of the public structures (phew.h). */
#include "api.h"

#include <string.h>

void phew_params_init(phew_params *params)
{
  memset(params, 0, sizeof *params);
  /* automatic: a first run on data nobody has looked at yet finds clumps */
  params->density_threshold = PHEW_THRESHOLD_AUTOMATIC;
  params->relevance_threshold = 2.0;
  params->saddle_merging = 0;
  params->saddle_threshold = PHEW_THRESHOLD_AUTOMATIC;
  params->mass_threshold = 0.0;
  params->peak_order_seed = 0;
}

void phew_context_init(phew_context *context) { memset(context, 0, sizeof *context); }

void phew_points_init(phew_points *points)
{
  memset(points, 0, sizeof *points);
  points->type = PHEW_FLOAT64;
  points->n_neighbours = 16;
  points->n_density_neighbours = 64;
}
