/* The particle path end to end: the caller's particles -> subvolumes -> exact neighbours and
 * densities -> the symmetrised neighbour graph -> the clump finder on that graph (the same
 * pipeline as every mesh) -> labels and densities back where the particles were passed. */
#include "points.h"
#include "threads.h"

#include <math.h>
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

phew_status points_prepare(points_run *run, const phew_input *in, points_use use, phew_result *result)
{
  const int with_graph = use == POINTS_PHEW, keep_lists = use == POINTS_HOP;
  comm *c = &run->c;
  points_context *x = &run->x;
  x->c = c;
  x->result = result;
  /* progress names the particle stages (at 0: the graph's stages then fill the bar) and a
   * cancel request stops every rank before the next one */
  run_control rc = {.in = in};
  phew_status s = run_control_stage(&rc, c, phew_particle_stage_name(PHEW_PARTICLE_DOMAIN), 0.0, 0.0, result);
  if (s != PHEW_OK)
    return s;
  double t = phew_seconds();
  s = points_distribute(x, in, use, &run->s, &run->parts);
  run->seconds[PHEW_PARTICLE_DOMAIN] += phew_seconds() - t;
  if (s != PHEW_OK)
    return s;
  x->n_ordered = run->n_ordered;

  s = run_control_stage(&rc, c, phew_particle_stage_name(PHEW_PARTICLE_NEIGHBOURS), 0.0, 0.0, result);
  if (s != PHEW_OK)
    return s;
  s = padding_neighbours(x, run->parts, &run->s, &run->nr);
  run->seconds[PHEW_PARTICLE_TREE] += run->nr.seconds_tree;
  run->seconds[PHEW_PARTICLE_NEIGHBOURS] += run->nr.seconds_search;
  if (s != PHEW_OK)
    return s;
  result->stats.padding_rounds = (int32_t)comm_max(c, run->nr.rounds);
  result->stats.max_padding = comm_max(c, run->s.n - run->s.n_own);

  /* the density first: the nearest lists it keeps meanwhile are smaller than the graph made
   * from them. Its padding only adds to the neighbours' padding, which the graph refers to. */
  const int64_t n_own = run->s.n_own;
  if (x->has_density) { /* the caller's, as given */
    run->rho = run->s.density;
    run->s.density = NULL;
  } else {
    /* the smoothing lengths move into the set, with room for the density's padding */
    run->s.h = phew_realloc(run->nr.h, (size_t)(run->s.capacity > n_own ? run->s.capacity : n_own) + 1, sizeof(double));
    if (run->s.h)
      run->nr.h = NULL;
    run->rho = phew_malloc((size_t)n_own + 1, sizeof *run->rho);
    if (comm_max(c, !run->s.h || !run->rho))
      return comm_agree(c, phew_fail(result, PHEW_ERROR_MEMORY, "out of memory for the densities"), result);
    s = run_control_stage(&rc, c, phew_particle_stage_name(PHEW_PARTICLE_DENSITY), 0.0, 0.0, result);
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
  }
  kd_tree_free(run->nr.tree); /* not taken when the densities were given */
  run->nr.tree = NULL;
  if (with_graph) {
    s = run_control_stage(&rc, c, phew_particle_stage_name(PHEW_PARTICLE_GRAPH), 0.0, 0.0, result);
    if (s != PHEW_OK)
      return s;
    t = phew_seconds();
    s = particle_graph_build(x, &run->s, &run->nr, &run->pg);
    run->seconds[PHEW_PARTICLE_GRAPH] += phew_seconds() - t;
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

void points_run_stats(points_run *run, phew_result *result)
{
  for (int k = 0; k < PHEW_PARTICLE_STAGE_COUNT; ++k)
    result->stats.particle_seconds[k] = comm_max_double(&run->c, run->seconds[k]);
  result->stats.n_threads = run->x.n_threads;
}

phew_status phew_estimate_density(const phew_input *in, double *density, phew_result *result)
{
  if (!result)
    return PHEW_ERROR_ARGUMENT;
  memset(result, 0, sizeof *result);
  result->stats.n_ranks = 1;
  points_run run;
  memset(&run, 0, sizeof run);
  phew_status s = comm_init(&run.c, in, result);
  if (s != PHEW_OK)
    return s;
  if (!in || in->mesh != PHEW_MESH_POINTS || (in->points.n > 0 && !density))
    s = phew_fail(result, PHEW_ERROR_ARGUMENT, "phew_estimate_density needs particles and a density array");
  else if (in->density)
    s = phew_fail(result, PHEW_ERROR_ARGUMENT,
                  "phew_estimate_density estimates the densities: input->density must be NULL");
  s = comm_agree(&run.c, s, result);
  if (s == PHEW_OK)
    s = points_prepare(&run, in, POINTS_DENSITY, result);
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

/* Per own particle, what goes back to where it was passed. */
typedef struct particle_answer {
  int64_t patch, clump, halo;
  double density;
} particle_answer;

enum { PLACE_BLOCK = 65536 }; /* particles per task of the placement */

/* The answers of own particles put where they were passed (on their rank). */
typedef struct placing {
  const int64_t *place; /* own particle -> index passed; NULL: the same */
  const phew_labels *local;
  const double *rho;
  phew_labels *labels;
  int64_t n;
} placing;

/* Task: one block of own particles (their places are distinct: no two tasks write one). */
static void place_task(void *context, int thread, int64_t task)
{
  (void)thread;
  const placing *job = context;
  const int64_t end = (task + 1) * PLACE_BLOCK < job->n ? (task + 1) * PLACE_BLOCK : job->n;
  for (int64_t i = task * PLACE_BLOCK; i < end; ++i) {
    const int64_t k = job->place ? job->place[i] : i;
    job->labels->peak_patch_id[k] = job->local->peak_patch_id[i];
    job->labels->clump_id[k] = job->local->clump_id[i];
    job->labels->halo_id[k] = job->local->halo_id[i];
    if (job->labels->density)
      job->labels->density[k] = job->rho[i];
  }
}

phew_status find_clumps_points(const phew_input *in, const phew_params *params, phew_labels *labels,
                               phew_result *result)
{
  memset(result, 0, sizeof *result);
  result->stats.n_ranks = 1;
  result->density_threshold_used = result->saddle_threshold_used = result->mean_density = NAN;
  points_run run;
  memset(&run, 0, sizeof run);
  const int64_t n_passed = in->points.n;
  int64_t *work = NULL;
  particle_answer *answers = NULL;
  phew_status s = comm_init(&run.c, in, result);
  if (s != PHEW_OK)
    goto fail;
  if (!params || !labels || (n_passed > 0 && (!labels->peak_patch_id || !labels->clump_id || !labels->halo_id)))
    s = phew_fail(result, PHEW_ERROR_ARGUMENT, "parameters and the three label arrays must be given");
  else if (in->labels_active_only)
    s = phew_fail(result, PHEW_ERROR_ARGUMENT, "labels_active_only applies to grids only");
  else
    s = params_check(params, result);
  s = comm_agree(&run.c, s, result);
  if (s == PHEW_OK)
    s = points_prepare(&run, in, POINTS_PHEW, result);
  if (s != PHEW_OK)
    goto fail;

  /* the graph's cells: densities (ghosts' come from their owners), physical volumes m / rho */
  particle_graph *pg = &run.pg;
  const int64_t n_own = run.s.n_own, n_cells = pg->g.n_cells;
  const int moved = run.s.origin_rank != NULL; /* the answers travel back */
  double *density = n_cells == n_own ? run.rho : phew_malloc((size_t)n_cells + 1, sizeof *density);
  work = phew_malloc((size_t)n_cells + 1, 3 * sizeof *work);
  answers = moved ? phew_malloc((size_t)n_own + 1, sizeof *answers) : NULL;
  if (comm_max(&run.c, !density || !work || (moved && !answers))) {
    if (density != run.rho)
      free(density);
    s = comm_agree(&run.c, phew_fail(result, PHEW_ERROR_MEMORY, "out of memory for the labels"), result);
    goto fail;
  }
  const double unit = run.x.has_density ? 1.0 : run.x.mean_density;
  for (int64_t i = 0; i < n_cells; ++i) {
    if (density != run.rho)
      density[i] = i < n_own ? run.rho[i] : 0.0;
    const double m = pg->mass ? pg->mass[i] : 1.0;
    const double v = density[i] > 0.0 ? m / (density[i] * unit) : 1.0; /* no volume below any threshold */
    pg->volume[i] = v > 0.0 && isfinite(v) ? v : 1.0;
  }
  phew_input gin = *in;
  gin.mesh = PHEW_MESH_GRAPH;
  gin.graph = pg->g;
  gin.density = density;
  gin.density_type = PHEW_FLOAT64;
  /* the mean density by the particles' own rule (phew_params), not from the graph's volumes */
  const phew_points *pts = &in->points;
  double mean = NAN;
  s = particles_mean_density(&run.c, n_own, pg->mass, run.rho,
                             pts->has_box ? pts->box_size[0] * pts->box_size[1] * pts->box_size[2] : 0.0, unit, &mean);
  if (s != PHEW_OK) {
    if (density != run.rho)
      free(density);
    s = comm_agree(&run.c, phew_fail(result, PHEW_ERROR_MEMORY, "out of memory while summing the mean density"),
                   result);
    goto fail;
  }
  const graph_extras extras = {pg->neighbours, pg->mass, run.x.has_velocity ? run.s.velocity : NULL, unit, mean};
  phew_labels local = {work, work + n_cells, work + 2 * n_cells, NULL};
  double velocity_stub[3] = {0.0, 0.0, 0.0};
  graph_extras with_stub = extras;
  if (run.x.has_velocity && !with_stub.velocity)
    with_stub.velocity = velocity_stub; /* no particles here: still say there are velocities */
  const phew_stats before = result->stats;
  s = find_clumps_mesh(&gin, &with_stub, params, &local, result);
  if (density != run.rho)
    free(density);
  result->stats.padding_rounds = before.padding_rounds;
  result->stats.max_padding = before.max_padding;
  if (s != PHEW_OK)
    goto fail;

  const double t = phew_seconds();
  if (!moved) { /* the particles never left this rank: each answer to its place */
    placing job = {run.s.origin_index, &local, run.rho, labels, n_own};
    particle_parallel(run.x.n_threads, (n_own + PLACE_BLOCK - 1) / PLACE_BLOCK, place_task, &job);
    run.seconds[PHEW_PARTICLE_DOMAIN] += phew_seconds() - t;
    points_run_stats(&run, result);
    free(work);
    points_run_free(&run);
    return PHEW_OK;
  }
  for (int64_t i = 0; i < n_own; ++i)
    answers[i] = (particle_answer){local.peak_patch_id[i], local.clump_id[i], local.halo_id[i], run.rho[i]};
  particle_answer *back = phew_malloc((size_t)n_passed + 1, sizeof *back);
  s = comm_agree(&run.c, back ? PHEW_OK : phew_fail(result, PHEW_ERROR_MEMORY, "out of memory for the labels"), result);
  if (s == PHEW_OK)
    s = domain_return(&run.x, &run.s, answers, sizeof *answers, back, n_passed);
  for (int64_t i = 0; s == PHEW_OK && i < n_passed; ++i) {
    labels->peak_patch_id[i] = back[i].patch;
    labels->clump_id[i] = back[i].clump;
    labels->halo_id[i] = back[i].halo;
    if (labels->density)
      labels->density[i] = back[i].density;
  }
  free(back);
  run.seconds[PHEW_PARTICLE_DOMAIN] += phew_seconds() - t;
  if (s != PHEW_OK) {
    phew_result_free(result);
    goto fail;
  }
  points_run_stats(&run, result);
  free(work);
  free(answers);
  points_run_free(&run);
  return PHEW_OK;

fail:
  for (int64_t i = 0; labels && i < n_passed; ++i) {
    if (labels->peak_patch_id)
      labels->peak_patch_id[i] = -1;
    if (labels->clump_id)
      labels->clump_id[i] = -1;
    if (labels->halo_id)
      labels->halo_id[i] = -1;
    if (labels->density)
      labels->density[i] = NAN;
  }
  points_run_stats(&run, result);
  free(work);
  free(answers);
  points_run_free(&run);
  return s;
}
