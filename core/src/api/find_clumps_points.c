/* phew_find_clumps on particles: the particle path (particles/) makes the neighbour graph and
 * the densities, the pipeline runs on that graph as on any mesh, and the labels and densities
 * go back where the particles were passed. */
#include "api.h"
#include "threads.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

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

/* The density of every cell of the particles' graph (ghosts 0: the pipeline fetches theirs
 * from their owners): the own particles' densities, or a copy with room for the ghosts; NULL
 * if memory ran out. */
static double *graph_density(const points_run *run)
{
  const int64_t n_own = run->s.n_own, n_cells = run->pg.g.n_cells;
  if (n_cells == n_own)
    return run->rho;
  double *density = phew_malloc((size_t)n_cells + 1, sizeof *density);
  for (int64_t i = 0; density && i < n_cells; ++i)
    density[i] = i < n_own ? run->rho[i] : 0.0;
  return density;
}

/* The cells' physical volumes m / rho, for the graph's masses and centres. */
static void graph_volumes(particle_graph *pg, const double *density, double unit)
{
  for (int64_t i = 0; i < pg->g.n_cells; ++i) {
    const double m = pg->mass ? pg->mass[i] : 1.0;
    const double v = density[i] > 0.0 ? m / (density[i] * unit) : 1.0; /* no volume below any threshold */
    pg->volume[i] = v > 0.0 && isfinite(v) ? v : 1.0;
  }
}

/* Collective: the pipeline on the particles' graph, with their mean density by the particles'
 * own rule (phew_params), not from the graph's volumes; local has a label per graph cell. */
static phew_status clumps_on_graph(points_run *run, const phew_context *context, const phew_params *params,
                                   const double *density, phew_labels *local, call_result *result)
{
  const particle_graph *pg = &run->pg;
  const phew_points *pts = run->x.points;
  const double unit = run->x.has_density ? 1.0 : run->x.mean_density;
  pipeline_density d = {density, PHEW_FLOAT64, 1, NAN};
  phew_status s = particles_mean_density(&run->c, run->s.n_own, pg->mass, run->rho,
                                         pts->has_box ? pts->box_size[0] * pts->box_size[1] * pts->box_size[2] : 0.0,
                                         unit, &d.mean);
  if (s != PHEW_OK)
    return comm_agree(&run->c, phew_fail(result, PHEW_ERROR_MEMORY, "out of memory while summing the mean density"),
                      result);
  static const double no_velocity[3] = {0.0, 0.0, 0.0}; /* no particles here: still say there are velocities */
  particle_cells cells = {pg->neighbours, pg->mass, run->x.has_velocity ? run->s.velocity : NULL, unit};
  if (run->x.has_velocity && !cells.velocity)
    cells.velocity = no_velocity;
  mesh m;
  s = mesh_init_particles(&m, &pg->g, &cells, &run->c, result);
  if (s == PHEW_OK)
    s = pipeline_run(&m, &run->c, context, &d, params, local, result);
  mesh_free(&m);
  return s;
}

/* Collective: the own particles' answers to where they were passed: in place when the
 * particles never left this rank, else through their origins. */
static phew_status answers_back(points_run *run, const phew_labels *local, phew_labels *labels, int64_t n_passed,
                                call_result *result)
{
  const int64_t n_own = run->s.n_own;
  if (!run->s.origin_rank) {
    placing job = {run->s.origin_index, local, run->rho, labels, n_own};
    threads_run(run->x.n_threads, (n_own + PLACE_BLOCK - 1) / PLACE_BLOCK, place_task, &job);
    return PHEW_OK;
  }
  particle_answer *answers = phew_malloc((size_t)n_own + 1, sizeof *answers);
  particle_answer *back = phew_malloc((size_t)n_passed + 1, sizeof *back);
  phew_status s = comm_agree(&run->c,
                             answers && back ? PHEW_OK
                                             : phew_fail(result, PHEW_ERROR_MEMORY, "out of memory for the labels"),
                             result);
  for (int64_t i = 0; s == PHEW_OK && i < n_own; ++i)
    answers[i] = (particle_answer){local->peak_patch_id[i], local->clump_id[i], local->halo_id[i], run->rho[i]};
  if (s == PHEW_OK)
    s = domain_return(&run->x, &run->s, answers, sizeof *answers, back, n_passed);
  for (int64_t i = 0; s == PHEW_OK && i < n_passed; ++i) {
    labels->peak_patch_id[i] = back[i].patch;
    labels->clump_id[i] = back[i].clump;
    labels->halo_id[i] = back[i].halo;
    if (labels->density)
      labels->density[i] = back[i].density;
  }
  free(answers);
  free(back);
  return s;
}

void fail_points_labels(const phew_input *in, phew_labels *labels)
{
  for (int64_t i = 0; labels && i < in->points.n; ++i) {
    if (labels->peak_patch_id)
      labels->peak_patch_id[i] = -1;
    if (labels->clump_id)
      labels->clump_id[i] = -1;
    if (labels->halo_id)
      labels->halo_id[i] = -1;
    if (labels->density)
      labels->density[i] = NAN;
  }
}

phew_status find_clumps_points(const phew_context *context, const comm *c, const phew_input *in,
                               const phew_params *params, phew_labels *labels, call_result *result)
{
  points_run run;
  memset(&run, 0, sizeof run);
  run.c = *c;
  int64_t *work = NULL;
  double *density = NULL;
  phew_status s = points_prepare(&run, context, in, POINTS_PHEW, result);
  if (s == PHEW_OK) /* after the neighbours and densities, the run's peak */
    s = points_velocities(&run.x, in, &run.s);
  if (s == PHEW_OK) {
    const int64_t n_cells = run.pg.g.n_cells;
    density = graph_density(&run);
    work = phew_malloc((size_t)n_cells + 1, 3 * sizeof *work);
    s = comm_agree(&run.c,
                   density && work ? PHEW_OK : phew_fail(result, PHEW_ERROR_MEMORY, "out of memory for the labels"),
                   result);
    phew_labels local = {work, NULL, NULL, NULL};
    if (s == PHEW_OK) {
      local.clump_id = work + n_cells;
      local.halo_id = work + 2 * n_cells;
      graph_volumes(&run.pg, density, run.x.has_density ? 1.0 : run.x.mean_density);
      s = clumps_on_graph(&run, context, params, density, &local, result);
    }
    if (density != run.rho)
      free(density);
    if (s == PHEW_OK) {
      const double t = phew_seconds();
      s = answers_back(&run, &local, labels, in->points.n, result);
      run.seconds[PHEW_PARTICLE_DOMAIN] += phew_seconds() - t;
      if (s != PHEW_OK)
        call_result_free(result);
    }
  }
  if (s != PHEW_OK)
    fail_points_labels(in, labels);
  points_run_stats(&run, result);
  free(work);
  points_run_free(&run);
  return s;
}
