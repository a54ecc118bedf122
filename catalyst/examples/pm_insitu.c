/* The in-situ calls of phew_pm. Each rank passes planes [n r / size, n (r + 1) / size) of the
 * mesh and the particles in them: its own slab when the simulation is split, a share of its
 * copy when it is replicated. The arrays passed are the simulation's own (no copies). */
#include "pm_insitu.h"

#include "pm_csv.h"

#include <phew/phew.h>

#include <stdlib.h>
#include <string.h>

int insitu_start(insitu *in, const insitu_options *o, const char *output, MPI_Comm comm)
{
  memset(in, 0, sizeof *in);
  in->comm = comm;
  in->o = *o;
  in->output = output;
  pm_tree_init(&in->clump_tree, output, "direct_clump");
  pm_tree_init(&in->halo_tree, output, "direct_halo");
  MPI_Comm_rank(comm, &in->rank);
  MPI_Comm_size(comm, &in->size);
  setenv("PHEW_INSITU_OUTPUT", output, 1); /* where the scripts write */
  int ok = 1;
  if (in->rank == 0) {
    char path[4096];
    snprintf(path, sizeof path, "%s/timing.csv", output);
    in->timing = fopen(path, "w");
    if (in->timing)
      fprintf(in->timing, "step,time,step_seconds,catalyst_seconds,pipeline_seconds,direct_seconds,finder_seconds\n");
    else
      fprintf(stderr, "phew_pm: cannot write %s\n", path);
    ok = in->timing != NULL;
  }
  MPI_Bcast(&ok, 1, MPI_INT, 0, comm);
  if (ok && o->n_scripts > 0 && phew_catalyst_initialize(&in->catalyst, o->n_scripts, o->scripts, &comm) != 0) {
    if (in->rank == 0)
      fprintf(stderr, "phew_pm: Catalyst did not start: %s\n", phew_catalyst_message(in->catalyst));
    ok = 0;
  }
  return ok ? 0 : -1;
}

/* This rank's planes of the mesh. */
static void my_planes(const insitu *in, const pm_mesh *m, int64_t *z_begin, int64_t *z_end)
{
  *z_begin = (int64_t)m->n * in->rank / in->size;
  *z_end = (int64_t)m->n * (in->rank + 1) / in->size;
}

static int catalyst_step(insitu *in, const insitu_state *s)
{
  const pm_mesh *m = s->mesh;
  const pm_particles *p = s->particles;
  int64_t z_begin, z_end, first, count;
  my_planes(in, m, &z_begin, &z_end);
  pm_particles_in_planes(p, m, z_begin, z_end, &first, &count);
  phew_grid grid; /* the whole mesh, then this rank's planes of it (no ghost cells) */
  phew_grid_init_whole(&grid, m->n, m->n, m->n);
  phew_points particles;
  phew_points_init(&particles);
  particles.has_box = 1;
  for (int d = 0; d < 3; ++d) {
    grid.spacing[d] = 1.0 / m->n;
    grid.periodic[d] = 1;
    particles.box_size[d] = 1.0;
    particles.periodic[d] = 1;
  }
  grid.stored_offset[2] = grid.active_offset[2] = z_begin;
  grid.stored_dims[2] = grid.active_dims[2] = z_end - z_begin;
  const double *density = m->density + (size_t)(z_begin - m->z0) * (size_t)m->n * (size_t)m->n;
  particles.n = count;
  particles.position = p->position + 3 * first;
  particles.velocity = p->velocity + 3 * first;
  particles.id = p->id + first;
  const int status = phew_catalyst_execute(in->catalyst, s->step, s->time, &grid, density, PHEW_FLOAT64, NULL,
                                           &particles);
  if (status != 0 && in->rank == 0)
    fprintf(stderr, "phew_pm: in situ at step %d: %s\n", s->step, phew_catalyst_message(in->catalyst));
  return status;
}

static int write_catalogue(const insitu *in, const phew_clump_result *r, int step)
{
  char path[4096];
  snprintf(path, sizeof path, "%s/direct_clumps_%06d.csv", in->output, step);
  FILE *f = fopen(path, "w");
  if (!f)
    return -1;
  int n_columns = 0;
  const phew_column *columns = phew_clump_columns(r->columns, &n_columns);
  pm_csv_header(f, "", columns, n_columns);
  for (int64_t k = 0; k < r->n_clumps; ++k)
    pm_csv_row(f, "", columns, n_columns, &r->clumps[k]);
  return fclose(f) == 0 ? 0 : -1;
}

/* Both merger trees after a successful clump finding: this rank's active cells in a clump (or
 * a halo), named by their global cell id, weighing density * cell volume. */
static int follow_clumps(insitu *in, const insitu_state *s, const phew_grid *g, const double *density,
                         const phew_labels *l)
{
  const int64_t n = g->global_dims[0], nz = g->active_dims[2];
  const double volume = 1.0 * g->spacing[0] * g->spacing[1] * g->spacing[2]; /* as the filter computes it */
  pm_tree *trees[2] = {&in->clump_tree, &in->halo_tree};
  const int64_t *labels[2] = {l->clump_id, l->halo_id};
  int status = 0;
  for (int t = 0; t < 2; ++t) {
    int64_t count = 0;
    for (int pass = 0; pass < 2; ++pass) { /* count, then fill */
      int64_t *id = NULL, *label = NULL;
      double *mass = NULL;
      if (pass == 1) {
        id = malloc((size_t)(count + 1) * sizeof *id);
        label = malloc((size_t)(count + 1) * sizeof *label);
        mass = malloc((size_t)(count + 1) * sizeof *mass);
        if (!id || !label || !mass) { /* an empty step instead: the tree goes on */
          free(id), free(label), free(mass);
          id = label = NULL, mass = NULL;
          count = 0;
          status = -1;
        }
      }
      int64_t k = 0;
      for (int64_t z = 0; z < nz && (pass == 0 || id); ++z)
        for (int64_t y = 0; y < n; ++y)
          for (int64_t x = 0; x < n; ++x) {
            const size_t c = ((size_t)(z + 1) * (size_t)(n + 2) + (size_t)(y + 1)) * (size_t)(n + 2) + (size_t)(x + 1);
            if (labels[t][c] < 0)
              continue;
            if (pass == 1) {
              id[k] = x + n * (y + n * (z + g->active_offset[2]));
              label[k] = labels[t][c];
              mass[k] = density[c] * volume;
            }
            k++;
          }
      if (pass == 0)
        count = k;
      else if (pm_tree_step(trees[t], in->comm, s->step, s->time, count, id, label, mass) != 0)
        status = -1;
    }
  }
  return status;
}

/* The lightest path: libphew on this rank's planes, with one ghost layer around them filled by
 * phew_exchange_ghosts (the core needs its neighbours' cells; this copy into a block with
 * ghosts is the caller's, as a simulation with ghost layers of its own would not need it). */
static int direct_step(insitu *in, const insitu_state *s, double *finder_seconds)
{
  const pm_mesh *m = s->mesh;
  const int64_t n = m->n;
  int64_t z_begin, z_end;
  my_planes(in, m, &z_begin, &z_end);
  phew_input input;
  memset(&input, 0, sizeof input);
  phew_grid *g = &input.grid;
  for (int d = 0; d < 3; ++d) {
    g->global_dims[d] = n;
    g->active_dims[d] = n;
    g->stored_offset[d] = -1;
    g->stored_dims[d] = n + 2;
    g->periodic[d] = 1;
    g->spacing[d] = 1.0 / (double)n;
  }
  g->active_offset[2] = z_begin;
  g->active_dims[2] = z_end - z_begin;
  g->stored_offset[2] = z_begin - 1;
  g->stored_dims[2] = z_end - z_begin + 2;
  const size_t stored = (size_t)g->stored_dims[0] * (size_t)g->stored_dims[1] * (size_t)g->stored_dims[2];
  double *density = malloc(stored * sizeof *density);
  int64_t *labels = malloc(3 * stored * sizeof *labels);
  int ok = density && labels;
  for (int64_t z = 0; ok && z < z_end - z_begin; ++z)
    for (int64_t y = 0; y < n; ++y)
      memcpy(&density[((size_t)(z + 1) * (size_t)(n + 2) + (size_t)(y + 1)) * (size_t)(n + 2) + 1],
             &m->density[((size_t)(z + z_begin - m->z0) * (size_t)n + (size_t)y) * (size_t)n],
             (size_t)n * sizeof *density);
  int all_ok = 0;
  MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, in->comm);
  phew_status status = all_ok ? PHEW_OK : PHEW_ERROR_MEMORY;
  phew_context context;
  phew_context_init(&context);
  context.mpi_comm = &in->comm;
  snprintf(context.message, sizeof context.message, "out of memory");
  if (status == PHEW_OK)
    status = phew_exchange_ghosts(&context, g, density, sizeof *density);
  phew_clump_result result;
  memset(&result, 0, sizeof result);
  int tracked = 1;
  if (status == PHEW_OK) {
    input.density = density;
    input.density_type = PHEW_FLOAT64;
    phew_params params;
    phew_params_init(&params);
    params.density_threshold = in->o.threshold;
    params.relevance_threshold = in->o.relevance;
    params.saddle_merging = 1;
    params.saddle_threshold = in->o.saddle;
    phew_labels l = {labels, labels + stored, labels + 2 * stored, NULL};
    const double t0 = MPI_Wtime();
    status = phew_find_clumps(&context, &input, &params, &l, &result);
    *finder_seconds = MPI_Wtime() - t0;
    if (status == PHEW_OK && follow_clumps(in, s, g, density, &l) != 0)
      tracked = 0;
  }
  int written = status != PHEW_OK || in->rank != 0 || write_catalogue(in, &result, s->step) == 0;
  MPI_Bcast(&written, 1, MPI_INT, 0, in->comm);
  if (in->rank == 0) {
    if (status != PHEW_OK)
      fprintf(stderr, "phew_pm: clump finding at step %d failed: %s\n", s->step, context.message);
    else if (!written)
      fprintf(stderr, "phew_pm: cannot write the catalogue of step %d in %s\n", s->step, in->output);
    else
      printf("phew_pm: step %d, t = %.3f: %lld clumps, %lld haloes\n", s->step, s->time, (long long)result.n_clumps,
             (long long)result.n_haloes);
  }
  phew_clump_result_free(&result);
  free(density);
  free(labels);
  return status == PHEW_OK && written && tracked ? 0 : -1;
}

int insitu_step(insitu *in, const insitu_state *s)
{
  double catalyst = 0.0, pipelines = 0.0, direct = 0.0, finder = 0.0;
  int status = 0;
  if (in->catalyst) {
    status = catalyst_step(in, s) != 0 ? -1 : status;
    phew_catalyst_timing(in->catalyst, &catalyst, &pipelines);
  }
  if (in->o.direct) {
    const double t0 = MPI_Wtime();
    status = direct_step(in, s, &finder) != 0 ? -1 : status;
    direct = MPI_Wtime() - t0;
  }
  double mine[5] = {s->step_seconds, catalyst, pipelines, direct, finder}, most[5];
  MPI_Reduce(mine, most, 5, MPI_DOUBLE, MPI_MAX, 0, in->comm);
  if (in->timing) {
    fprintf(in->timing, "%d,%.6g,%.6f,%.6f,%.6f,%.6f,%.6f\n", s->step, s->time, most[0], most[1], most[2], most[3],
            most[4]);
    fflush(in->timing);
  }
  return status;
}

void insitu_stop(insitu *in)
{
  phew_catalyst_finalize(in->catalyst);
  in->catalyst = NULL;
  if (in->timing)
    fclose(in->timing);
  in->timing = NULL;
  pm_tree_free(&in->clump_tree);
  pm_tree_free(&in->halo_tree);
}
