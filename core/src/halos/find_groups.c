/* The halo finders end to end: the caller's particles -> subvolumes -> a finder's group key
 * per particle -> GroupIds and the catalogue -> the GroupIds back where the particles were
 * passed. */
#include "halos.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void phew_fof_params_init(phew_fof_params *params)
{
  memset(params, 0, sizeof *params);
  params->linking_length = 0.2;
  params->absolute = 0;
  params->min_members = 20;
}

/* The linking length in the positions' units: relative ones times the mean interparticle
 * spacing (volume / N)^(1/3), the volume of the box, or of the particles' bounds. */
static phew_status linking_length(const points_context *x, const phew_fof_params *p, double *out)
{
  if (p->absolute) {
    *out = p->linking_length;
    return PHEW_OK;
  }
  double volume = 1.0;
  for (int d = 0; d < 3; ++d)
    volume *= x->points->has_box ? x->points->box_size[d] : x->hi[d] - x->lo[d];
  *out = p->linking_length * cbrt(volume / (double)x->n_total);
  if (!(*out > 0.0 && isfinite(*out)))
    return phew_fail(x->result, PHEW_ERROR_ARGUMENT,
                     "the linking length %g times the mean interparticle spacing is %g: give a box, or an absolute "
                     "linking length, when the particles span no volume",
                     p->linking_length, *out);
  return PHEW_OK;
}

static phew_status check_fof(const phew_fof_params *p, phew_result *result)
{
  if (!p)
    return phew_fail(result, PHEW_ERROR_ARGUMENT, "no Friends-of-Friends parameters");
  if (!(p->linking_length > 0.0 && isfinite(p->linking_length)))
    return phew_fail(result, PHEW_ERROR_ARGUMENT, "the linking length must be positive and finite (got %g)",
                     p->linking_length);
  if (p->min_members < 1)
    return phew_fail(result, PHEW_ERROR_ARGUMENT, "the minimum number of members must be at least 1 (got %lld)",
                     (long long)p->min_members);
  return PHEW_OK;
}

phew_status phew_find_fof_groups(const phew_input *in, const phew_fof_params *params, int64_t *group_id,
                                 phew_result *result)
{
  if (!result)
    return PHEW_ERROR_ARGUMENT;
  memset(result, 0, sizeof *result);
  result->stats.n_ranks = 1;
  comm c;
  memset(&c, 0, sizeof c);
  c.size = 1;
  points_context x;
  memset(&x, 0, sizeof x);
  particle_set s;
  memset(&s, 0, sizeof s);
  subvolume *parts = NULL;
  int64_t *key = NULL, *label = NULL;
  const int64_t n_passed = in && in->mesh == PHEW_MESH_POINTS ? in->points.n : 0;
  phew_status status = comm_init(&c, in, result);
  if (status != PHEW_OK)
    goto done;
  x.c = &c;
  x.result = result;
  if (!in || in->mesh != PHEW_MESH_POINTS)
    status = phew_fail(result, PHEW_ERROR_ARGUMENT, "Friends-of-Friends needs particles (mesh PHEW_MESH_POINTS)");
  else if (n_passed > 0 && !group_id)
    status = phew_fail(result, PHEW_ERROR_ARGUMENT, "Friends-of-Friends needs a GroupId array");
  else
    status = check_fof(params, result);
  status = comm_agree(&c, status, result);
  double t = phew_seconds();
  if (status == PHEW_OK)
    status = points_distribute(&x, in, POINTS_FOF, &s, &parts);
  result->stats.particle_seconds[PHEW_PARTICLE_DOMAIN] += phew_seconds() - t;
  double length = 0.0;
  if (status == PHEW_OK)
    status = comm_agree(&c, linking_length(&x, params, &length), result);
  key = status == PHEW_OK ? phew_malloc((size_t)s.n_own + 1, sizeof *key) : NULL;
  label = status == PHEW_OK ? phew_malloc((size_t)s.n_own + 1, sizeof *label) : NULL;
  if (status == PHEW_OK && comm_max(&c, !key || !label))
    status = comm_agree(&c, phew_fail(result, PHEW_ERROR_MEMORY, "out of memory for the groups"), result);
  t = phew_seconds();
  if (status == PHEW_OK)
    status = fof_find(&x, parts, &s, length, params->min_members, key);
  result->stats.particle_seconds[PHEW_PARTICLE_NEIGHBOURS] += phew_seconds() - t;
  result->stats.max_padding = status == PHEW_OK ? comm_max(&c, s.n - s.n_own) : 0;
  s.n = s.n_own; /* the padding is no longer needed */
  t = phew_seconds();
  if (status == PHEW_OK) {
    const group_keys g = {key, NULL, params->min_members};
    status = groups_build(&x, &s, &g, label);
  }
  if (status == PHEW_OK)
    status = domain_return(&x, &s, label, sizeof *label, group_id, n_passed);
  result->stats.seconds[PHEW_STAGE_PROPERTIES] += phew_seconds() - t;
done:
  if (status != PHEW_OK) {
    phew_result_free(result);
    for (int64_t i = 0; group_id && i < n_passed; ++i)
      group_id[i] = -1;
  }
  if (status == PHEW_OK) { /* times: the maximum over ranks */
    for (int k = 0; k < PHEW_PARTICLE_STAGE_COUNT; ++k)
      result->stats.particle_seconds[k] = comm_max_double(&c, result->stats.particle_seconds[k]);
    result->stats.seconds[PHEW_STAGE_PROPERTIES] = comm_max_double(&c, result->stats.seconds[PHEW_STAGE_PROPERTIES]);
  }
  result->stats.n_cells = x.n_total;
  result->stats.n_ranks = c.size;
  result->stats.n_threads = x.n_threads;
  particle_set_free(&s);
  free(parts);
  free(key);
  free(label);
  return status;
}
