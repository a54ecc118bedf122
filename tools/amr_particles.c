/* --amr-particles (amr_particles.h). */
#include "amr_particles.h"
#include "cli_errors.h"
#include "points_io.h"
#include "progress.h"
#include "summary.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The particles as the core's input (positions, velocities, masses, ids, the box). */
static void make_points(const phew_particle_set *set, phew_input *in)
{
  memset(in, 0, sizeof *in);
  in->mesh = PHEW_MESH_POINTS;
  phew_points_init(&in->points);
  snapshot_points(set, 0, &in->points);
}

/* Rank 0: the clumps' parents and peaks (the spherical method's centres); 0 or -1 after fail. */
static int hierarchy(const phew_clump_result *clumps, int64_t **parents, double **peaks)
{
  const int64_t n = clumps->n_clumps;
  *parents = allocate(n, 8, "the clumps' parents");
  *peaks = *parents ? allocate(n, 24, "the clumps' peaks") : NULL;
  for (int64_t k = 0; *peaks && k < n; ++k) {
    (*parents)[k] = clumps->clumps[k].parent_id;
    memcpy(*peaks + 3 * k, clumps->clumps[k].peak_position, 3 * sizeof **peaks);
  }
  return *peaks ? 0 : -1;
}

int amr_particles_run(const procs *p, const options *o, const phew_amr *amr, const int64_t *cell_clumps,
                      const phew_clump_result *clumps, physics_outcome *out)
{
  phew_context context = procs_context(p, o->n_threads);
  phew_particle_set set;
  memset(&set, 0, sizeof set);
  progress_stage(p, o->verbose, "reading the particles");
  if (phew_read_particles(&context, o->snapshot, &o->read, &set) != PHEW_OK) /* the same on every rank */
    fail("%s", context.message);
  progress_done();
  int64_t *labels = NULL, *parents = NULL;
  double *peaks = NULL;
  phew_input in;
  make_points(&set, &in);
  if (all_ok(p) && (labels = allocate(set.n, 8, "the particles' clumps")) != NULL && p->rank == 0)
    hierarchy(clumps, &parents, &peaks);
  if (all_ok(p) && phew_amr_point_labels(&context, amr, cell_clumps, &in.points, labels) != PHEW_OK)
    fail("labelling the particles by their cells: %s", context.message);
  int code = -1;
  if (all_ok(p)) {
    if (o->verbose && p->rank == 0)
      print_snapshot(&set);
    const grouping g = {labels, p->rank == 0 ? clumps->n_clumps : 0, 1, parents, 1, peaks};
    code = physics_mode_run(p, o, &in, &set.info, &g, out);
  }
  if (code == 0)
    code = physics_mode_write(p, o, set.first, set.n, out);
  free(labels);
  free(parents);
  free(peaks);
  phew_particle_set_free(&set);
  return code;
}
