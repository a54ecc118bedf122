/* The checks of the clump finder's parameters (phew_params), made once per call. */
#include "api.h"

#include <math.h>

/* Negative thresholds are automatic (PHEW_THRESHOLD_AUTOMATIC): only NaN and +inf are refused. */
phew_status params_check(const phew_params *p, call_result *result)
{
  if (isnan(p->density_threshold) || p->density_threshold == INFINITY)
    return phew_fail(result, PHEW_ERROR_ARGUMENT,
                     "the density threshold must be set: a finite number >= 0, or negative "
                     "(PHEW_THRESHOLD_AUTOMATIC) for 10 x the mean density (got %g)",
                     p->density_threshold);
  if (isnan(p->relevance_threshold) || p->relevance_threshold == INFINITY)
    return phew_fail(result, PHEW_ERROR_ARGUMENT, "the relevance threshold must be a finite number >= 1 (got %g)",
                     p->relevance_threshold);
  if (p->relevance_threshold < 1.0) /* a threshold below 1 reads as "more permissive", but is 1 */
    return phew_fail(result, PHEW_ERROR_ARGUMENT,
                     "the relevance threshold must be >= 1 (got %g): a peak's relevance, peak density / key "
                     "saddle density, is at least 1; 1 keeps every peak",
                     p->relevance_threshold);
  if (p->saddle_merging && (isnan(p->saddle_threshold) || p->saddle_threshold == INFINITY))
    return phew_fail(result, PHEW_ERROR_ARGUMENT,
                     "the saddle threshold must be set: a finite number, or negative (PHEW_THRESHOLD_AUTOMATIC) "
                     "for 2.5 x the density threshold (got %g)",
                     p->saddle_threshold);
  if (isnan(p->mass_threshold))
    return phew_fail(result, PHEW_ERROR_ARGUMENT, "the mass threshold is NaN");
  return PHEW_OK;
}
