/* The particle path up to the densities and the graph (particles.h: points_prepare): the
 * caller's particles -> subvolumes -> exact neighbours and densities -> the symmetrised
 * neighbour graph. phew_find_clumps (api/find_clumps_points.c), phew_estimate_density and the
 * halo finders start here. */
#include "particles.h"

#include <stdlib.h>
#include <string.h>

void points_run_free(points_run *run)
{
  particle_set_free(&run->s);
  free(run->parts);
  free(run->nr.h);
  free(run->nr.nearest);
  kd_tree_free(run->nr.tree);
  particle_graph_free(&run->pg);
  free(run->rho);
  memset(run, 0, sizeof *run);
}

phew_status points_distribute(points_context *x, const phew_input *in, points_use use, particle_set *s,
                              subvolume **parts)
{
  comm *c = x->c;
  phew_status status = points_read(x, in, use, s);
  if (status != PHEW_OK)
    return status;
  *parts = phew_malloc((size_t)c->size, sizeof **parts);
  if (comm_max(c, !*parts))
    return comm_agree(c, phew_fail(x->result, PHEW_ERROR_MEMORY, "out of memory"), x->result);
  if (c->size > 1) {
    status = domain_split(x, s, *parts);
    if (status == PHEW_OK)
      status = domain_redistribute(x, *parts, s);
    if (status != PHEW_OK)
      return status;
  }
  /* FoF sorts the particles by its own cells; the others want space-filling-curve order */
  return use == POINTS_FOF ? PHEW_OK : spatial_order(x, s);
}

/* Collective: the particles distributed over the ranks (the domain stage), then their
 * neighbours, with the padding they need (the neighbours stage). */
static phew_status distribute_and_find_neighbours(points_run *run, run_control *rc, const phew_input *in,
                                                  points_use use, call_result *result)
{
  comm *c = &run->c;
  points_context *x = &run->x;
  phew_status s = run_control_stage(rc, c, phew_particle_stage_name(PHEW_PARTICLE_DOMAIN), 0.0, 0.0, result);
  if (s != PHEW_OK)
    return s;
  double t = phew_seconds();
  s = points_distribute(x, in, use, &run->s, &run->parts);
  run->seconds[PHEW_PARTICLE_DOMAIN] += phew_seconds() - t;
  if (s != PHEW_OK)
    return s;
  x->n_ordered = run->n_ordered;

  s = run_control_stage(rc, c, phew_particle_stage_name(PHEW_PARTICLE_NEIGHBOURS), 0.0, 0.0, result);
  if (s != PHEW_OK)
    return s;
  s = padding_neighbours(x, run->parts, &run->s, &run->nr);
  run->seconds[PHEW_PARTICLE_TREE] += run->nr.seconds_tree;
  run->seconds[PHEW_PARTICLE_NEIGHBOURS] += run->nr.seconds_search;
  if (s != PHEW_OK)
    return s;
  result->stats.padding_rounds = (int32_t)comm_max(c, run->nr.rounds);
  result->stats.max_padding = comm_max(c, run->s.n - run->s.n_own);
  return PHEW_OK;
}

/* Collective: an own particle with h = 0 has more particles than the density's neighbour count
 * at its position, and no density. The smallest such global id of all ranks is named, the same
 * for any number of ranks (each rank's first one depended on how the particles were split). */
static phew_status check_smoothing_lengths(const points_run *run, call_result *result)
{
  int64_t first = INT64_MAX;
  for (int64_t i = 0; i < run->s.n_own; ++i)
    if (run->s.h[i] == 0.0 && run->s.id[i] < first)
      first = run->s.id[i];
  first = -comm_max(&run->c, -first);
  if (first == INT64_MAX)
    return PHEW_OK;
  return comm_agree(&run->c,
                    phew_fail(result, PHEW_ERROR_DATA,
                              "SPH density: the particle with global id %lld has smoothing length 0: more particles "
                              "than the density's neighbour count sit at its position",
                              (long long)first),
                    result);
}

/* Collective: the SPH densities of the own particles into run->rho, in units of the mean
 * density (the density stage), when the caller gave none. */
static phew_status estimate_densities(points_run *run, run_control *rc, const phew_input *in, call_result *result)
{
  comm *c = &run->c;
  points_context *x = &run->x;
  const int64_t n_own = run->s.n_own;
  /* the smoothing lengths move into the set, with room for the density's padding */
  run->s.h = phew_realloc(run->nr.h, (size_t)(run->s.capacity > n_own ? run->s.capacity : n_own) + 1, sizeof(double));
  if (run->s.h)
    run->nr.h = NULL;
  run->rho = phew_malloc((size_t)n_own + 1, sizeof *run->rho);
  if (comm_max(c, !run->s.h || !run->rho))
    return comm_agree(c, phew_fail(result, PHEW_ERROR_MEMORY, "out of memory for the densities"), result);
  phew_status s = run_control_stage(rc, c, phew_particle_stage_name(PHEW_PARTICLE_DENSITY), 0.0, 0.0, result);
  if (s == PHEW_OK)
    s = check_smoothing_lengths(run, result);
  if (s != PHEW_OK)
    return s;
  double seconds = 0.0;
  /* lists holding every particle of a kernel (n_dens - 1 others) serve as the balls */
  const density_lists lists = {run->nr.nearest, run->nr.n_keep, n_own};
  const int listed = run->nr.n_keep >= in->points.n_density_neighbours - 1;
  s = padding_density(x, run->parts, &run->s, &run->nr.tree, listed ? &lists : NULL, run->rho, &seconds);
  run->seconds[PHEW_PARTICLE_DENSITY] += seconds;
  if (s != PHEW_OK)
    return s;
  for (int64_t i = 0; i < n_own; ++i)
    run->rho[i] /= x->mean_density;
  free(run->s.h); /* what PHEW needs from here on is the graph */
  run->s.h = NULL;
  return PHEW_OK;
}

/* Collective: the symmetrised neighbour graph PHEW runs on (the graph stage). */
static phew_status build_neighbour_graph(points_run *run, run_control *rc, call_result *result)
{
  phew_status s = run_control_stage(rc, &run->c, phew_particle_stage_name(PHEW_PARTICLE_GRAPH), 0.0, 0.0, result);
  if (s != PHEW_OK)
    return s;
  const double t = phew_seconds();
  s = particle_graph_build(&run->x, &run->s, &run->nr, &run->pg);
  run->seconds[PHEW_PARTICLE_GRAPH] += phew_seconds() - t;
  return s;
}

phew_status points_prepare(points_run *run, const phew_context *context, const phew_input *in, points_use use,
                           call_result *result)
{
  const int with_graph = use == POINTS_PHEW, keep_lists = use == POINTS_HOP;
  points_context *x = &run->x;
  x->context = context;
  x->c = &run->c;
  x->result = result;
  /* progress names the particle stages (at 0: the graph's stages then fill the bar) and a
   * cancel request stops every rank before the next one */
  run_control rc = {.context = context};
  phew_status s = distribute_and_find_neighbours(run, &rc, in, use, result);
  if (s != PHEW_OK)
    return s;

  /* the density first: the nearest lists it keeps meanwhile are smaller than the graph made
   * from them. Its padding only adds to the neighbours' padding, which the graph refers to. */
  const int64_t n_own = run->s.n_own;
  if (x->has_density) { /* the caller's, as given */
    run->rho = run->s.density;
    run->s.density = NULL;
  } else {
    s = estimate_densities(run, &rc, in, result);
    if (s != PHEW_OK)
      return s;
  }
  kd_tree_free(run->nr.tree); /* not taken when the densities were given */
  run->nr.tree = NULL;
  if (with_graph) {
    s = build_neighbour_graph(run, &rc, result);
    if (s != PHEW_OK)
      return s;
  }
  if (keep_lists)
    return PHEW_OK;
  free(run->nr.nearest);
  run->nr.nearest = NULL;
  run->s.n = n_own; /* the padding is no longer needed */
  return PHEW_OK;
}

void points_run_stats(points_run *run, call_result *result)
{
  for (int k = 0; k < PHEW_PARTICLE_STAGE_COUNT; ++k)
    result->stats.particle_seconds[k] = comm_max_double(&run->c, run->seconds[k]);
  result->stats.n_threads = run->x.n_threads;
}
