/* The particle mode. Rank r reads the contiguous share [first, first + n) of every particle
 * file (points_io.c) and passes it to the core with the communicator; the core redistributes
 * the particles over subvolumes and returns the labels and densities of the particles this
 * rank passed, in its order, so each rank writes them back at the same offsets. The box is
 * [0, LX) x [0, LY) x [0, LZ), periodic along all three axes with --periodic. */
#include "points_mode.h"
#include "cli_errors.h"
#include "outputs.h"
#include "physics_mode.h"
#include "points_io.h"
#include "progress.h"
#include "summary.h"
#include "tables.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void points_mode_check(const procs *p, const options *o, int64_t *n_total)
{
  *n_total = 0;
  if (o->snapshot) { /* its metadata, before any output is created */
    phew_context context = procs_context(p, o->n_threads);
    phew_snapshot_info info;
    if (phew_read_snapshot_info(&context, o->snapshot, &o->read, &info) != PHEW_OK) /* the same on every rank */
      fail("%s", context.message);
    return;
  }
  particle_files f;
  particle_files_init(&f, o);
  *n_total = 0;
  if (p->rank == 0)
    particle_files_count(&f, n_total);
}

/* This rank's particles and what comes back for them. */
typedef struct share {
  int64_t first, n;
  void *data[POINTS_FILES];   /* NULL for a file not given */
  phew_particle_set snapshot; /* --snapshot: the particles and the metadata */
  phew_labels labels;         /* PHEW */
  int64_t *group;             /* a halo finder */
  physics_outcome physics;    /* the physics of structures (options.physics) */
} share;

static void share_free(share *s)
{
  for (int k = 0; k < POINTS_FILES; ++k)
    free(s->data[k]);
  free(s->labels.peak_patch_id);
  free(s->labels.clump_id);
  free(s->labels.halo_id);
  free(s->labels.density);
  free(s->group);
  physics_outcome_free(&s->physics);
  phew_particle_set_free(&s->snapshot);
}

/* Collective: allocates and reads this rank's share of every given file, and the arrays of
 * the answers. 0, or -1 on every rank after all_ok has printed why. */
static int read_share(const procs *p, const options *o, const particle_files *f, share *s)
{
  if (o->snapshot) { /* the reader reads this rank's share and says which it is */
    progress_stage(p, o->verbose, "reading the snapshot");
    phew_context context = procs_context(p, o->n_threads);
    if (phew_read_particles(&context, o->snapshot, &o->read, &s->snapshot) != PHEW_OK) /* the same on every rank */
      fail("%s", context.message);
    progress_done();
    if (!all_ok(p))
      return -1;
    s->first = s->snapshot.first;
    s->n = s->snapshot.n;
    if (o->verbose && p->rank == 0)
      print_snapshot(&s->snapshot);
  }
  for (int k = 0; k < POINTS_FILES && !failed(); ++k)
    if (f->path[k])
      s->data[k] = allocate(s->n, f->record[k], "the particles");
  if (o->finder == FINDER_GIVEN) {
    if (!failed() && o->snapshot)
      particle_files_check(f, POINTS_GROUPS, s->snapshot.n_total, o->snapshot);
  } else if (o->finder != FINDER_PHEW) {
    if (!failed())
      s->group = allocate(s->n, 8, "the group ids");
    if (!failed() && o->finder == FINDER_HOP)
      s->labels.density = allocate(s->n, 8, "the densities");
  } else if (!failed() && (s->labels.peak_patch_id = allocate(s->n, 8, "the label arrays")) != NULL &&
             (s->labels.clump_id = allocate(s->n, 8, "the label arrays")) != NULL &&
             (s->labels.halo_id = allocate(s->n, 8, "the label arrays")) != NULL)
    s->labels.density = allocate(s->n, 8, "the densities");
  if (!all_ok(p))
    return -1;
  for (int k = 0; k < POINTS_FILES && !failed(); ++k)
    if (f->path[k])
      particle_files_read(f, k, s->first, s->n, s->data[k]);
  return all_ok(p) ? 0 : -1;
}

/* The core's input for this rank's share. */
static void make_input(const options *o, const share *s, phew_input *in)
{
  memset(in, 0, sizeof *in);
  in->mesh = PHEW_MESH_POINTS;
  phew_points *pts = &in->points;
  phew_points_init(pts);
  pts->n = s->n;
  pts->type = o->type;
  pts->position = s->data[POINTS_POSITION];
  pts->mass = s->data[POINTS_MASS];
  pts->velocity = s->data[POINTS_VELOCITY];
  pts->id = s->data[POINTS_ID];
  pts->has_box = 1;
  for (int d = 0; d < 3; ++d) {
    pts->box_origin[d] = 0.0;
    pts->box_size[d] = o->box[d];
    pts->periodic[d] = o->periodic;
  }
  if (o->snapshot) /* the snapshot's arrays, box and periodicity (--periodic: periodic anyway) */
    snapshot_points(&s->snapshot, o->periodic, pts);
  pts->n_neighbours = o->n_neighbours;
  pts->n_density_neighbours = o->n_density_neighbours;
  in->density = s->data[POINTS_DENSITY];
  in->density_type = o->type;
}

/* Collective: every rank writes its share of the per-particle files, rank 0 the tables,
 * then rank 0 puts the seven files in place. 0, or -1 on every rank after all_ok. */
static int write_outputs(const procs *p, const options *o, const share *s, const phew_clump_result *r)
{
  const int physics = o->physics;
  if (physics && physics_mode_write(p, o, s->first, s->n, &s->physics) != 0)
    return -1;
  const void *arrays[4] = {s->labels.peak_patch_id, s->labels.clump_id, s->labels.halo_id, s->labels.density};
  const int files[4] = {OUTPUT_PATCH, OUTPUT_CLUMP, OUTPUT_HALO, OUTPUT_DENSITY};
  for (int k = 0; k < 4; ++k) {
    particle_files_write(outputs_temporary(files[k]), 8, s->first, s->n, arrays[k]);
    if (!all_ok(p))
      return -1;
  }
  return tables_write_and_commit(p, o, r, o->snapshot ? &s->snapshot.info : NULL, 0,
                                 physics ? &s->physics.params : NULL, physics ? &s->physics.result : NULL);
}

/* The same for a halo finder: GroupIds (and HOP's densities), then the group catalogue. */
static int write_groups(const procs *p, const options *o, const share *s, const phew_group_result *r)
{
  const int physics = o->physics;
  if (physics && physics_mode_write(p, o, s->first, s->n, &s->physics) != 0)
    return -1;
  particle_files_write(outputs_temporary(OUTPUT_GROUP), 8, s->first, s->n, s->group);
  if (!all_ok(p))
    return -1;
  if (s->labels.density) {
    particle_files_write(outputs_temporary(OUTPUT_DENSITY), 8, s->first, s->n, s->labels.density);
    if (!all_ok(p))
      return -1;
  }
  return groups_write_and_commit(p, o, r, o->snapshot ? &s->snapshot.info : NULL, physics ? &s->physics.params : NULL,
                                 physics ? &s->physics.result : NULL);
}

/* Collective, after the core failed: a repeated particle id (the core names the id) is also
 * said with the places of its first two particles in the input's order and the file the ids
 * came from. Any other failure is passed on as it is. */
static void fail_with(const options *o, const share *s, phew_context *context)
{
  long long id;
  int matched = -1; /* set only when the whole pattern matched */
  if (sscanf(context->message, "particle id %lld is given to more than one particle%n", &id, &matched) != 1 ||
      matched < 0) {
    fail("%s", context->message);
    return;
  }
  const int64_t *ids = o->snapshot ? s->snapshot.id : s->data[POINTS_ID];
  int64_t mine[2], n_mine = 0, *all = NULL, n_all = 0;
  for (int64_t i = 0; ids && i < s->n && n_mine < 2; ++i)
    if (ids[i] == id)
      mine[n_mine++] = s->first + i;
  char message[sizeof context->message];
  snprintf(message, sizeof message, "%s", context->message);
  if (phew_gather_all(context, mine, n_mine, sizeof *mine, (void **)&all, &n_all, NULL) != PHEW_OK || n_all < 2)
    fail("%s", message);
  else if (o->snapshot)
    fail("%s (particles %lld and %lld of the snapshot '%s', counting its particles of that kind from 0, file by file)",
         message, (long long)all[0], (long long)all[1], o->snapshot);
  else
    fail("%s (particles %lld and %lld of --ids '%s')", message, (long long)all[0], (long long)all[1], o->ids);
  free(all);
}

/* --box auto: the box from the bounds of the positions over all ranks (collective); 0, or -1
 * on every rank after all_ok. */
static int box_from_bounds(const procs *p, const options *o, phew_context *context, phew_points *pts)
{
  if (phew_points_box_from_bounds(context, pts) != PHEW_OK) /* the same on every rank */
    fail("--box auto: %s; give the box with --box LX LY LZ", context->message);
  if (!all_ok(p))
    return -1;
  if (o->verbose && p->rank == 0 && pts->has_box)
    printf("box from the bounds of the positions: origin %.17g %.17g %.17g, size %.17g %.17g %.17g\n",
           pts->box_origin[0], pts->box_origin[1], pts->box_origin[2], pts->box_size[0], pts->box_size[1],
           pts->box_size[2]);
  return 0;
}

/* Collective: the physics on the finder's grouping (PHEW's clumps with their parents, or the
 * groups). 0, or -1 on every rank after all_ok. */
static int finder_physics(const procs *p, const options *o, share *s, const phew_input *in,
                          const phew_clump_result *clumps, const phew_group_result *groups)
{
  const phew_snapshot_info *info = o->snapshot ? &s->snapshot.info : NULL;
  const int phew = o->finder == FINDER_PHEW, hop = o->finder == FINDER_HOP;
  const int64_t n = phew ? clumps->n_clumps : groups->n_groups;
  int64_t *parents = NULL;
  double *centres = NULL;
  /* PHEW's hierarchy, and the peaks as the spherical method's centres (PHEW, HOP) */
  if (p->rank == 0 && phew && (parents = allocate(n, 8, "the clumps' parents")) != NULL)
    for (int64_t k = 0; k < n; ++k)
      parents[k] = clumps->clumps[k].parent_id;
  if (p->rank == 0 && (phew || hop) && (centres = allocate(n, 24, "the peaks")) != NULL)
    for (int64_t k = 0; k < n; ++k)
      memcpy(centres + 3 * k, phew ? clumps->clumps[k].peak_position : groups->groups[k].peak_position,
             3 * sizeof *centres);
  int code = -1;
  if (all_ok(p)) {
    const grouping g = {phew ? s->labels.clump_id : s->group, n, phew, parents, phew || hop, centres};
    code = physics_mode_run(p, o, in, info, &g, &s->physics);
  }
  free(parents);
  free(centres);
  return code;
}

/* Collective: --groups (and --parents): the physics alone, its outputs and record. */
static int given_grouping(const procs *p, const options *o, share *s, const phew_input *in)
{
  const int64_t *labels = s->data[POINTS_GROUPS];
  int64_t n_structures = 0, *parents = NULL;
  double *centres = NULL;
  int has_centres = 0;
  if (physics_read_parents(p, o, labels, s->n, &n_structures, &parents, &centres, &has_centres) != 0)
    return 1;
  const phew_snapshot_info *info = o->snapshot ? &s->snapshot.info : NULL;
  const grouping g = {labels, n_structures, o->parents != NULL, parents, has_centres, centres};
  const int ran = physics_mode_run(p, o, in, info, &g, &s->physics);
  free(parents);
  free(centres);
  if (ran != 0 || physics_mode_write(p, o, s->first, s->n, &s->physics) != 0)
    return 1;
  return structures_commit(p, o, info, &s->physics.params, &s->physics.result) == 0 ? 0 : 1;
}

int points_mode_run(const procs *p, const options *o, int64_t n_total)
{
  procs_broadcast_int64(p, &n_total);
  particle_files f;
  particle_files_init(&f, o);
  share s;
  memset(&s, 0, sizeof s);
  if (!o->snapshot)
    particle_files_share(p, n_total, &s.first, &s.n);
  phew_clump_result clumps;
  memset(&clumps, 0, sizeof clumps);
  phew_group_result groups;
  memset(&groups, 0, sizeof groups);
  int code = 1;
  if (read_share(p, o, &f, &s) != 0)
    goto done;
  phew_input in;
  make_input(o, &s, &in);
  phew_context context = procs_context(p, o->n_threads);
  progress_attach(&context, p, o->verbose);
  if (o->box_from_bounds && box_from_bounds(p, o, &context, &in.points) != 0)
    goto done;
  if (o->finder == FINDER_GIVEN) {
    code = given_grouping(p, o, &s, &in);
    goto done;
  }
  const phew_status status = o->finder == FINDER_FOF ? phew_find_fof_groups(&context, &in, &o->fof, s.group, &groups)
                             : o->finder == FINDER_HOP
                                 ? phew_find_hop_groups(&context, &in, &o->hop, s.group, s.labels.density, &groups)
                                 : phew_find_clumps(&context, &in, &o->params, &s.labels, &clumps);
  progress_done();
  if (status != PHEW_OK) /* the same status and message on every rank */
    fail_with(o, &s, &context);
  if (!all_ok(p))
    goto done;
  if (o->verbose && p->rank == 0) {
    if (o->finder == FINDER_PHEW)
      print_summary(&clumps, &o->params, 1);
    else
      print_group_summary(&groups, o->finder == FINDER_FOF);
  }
  if (o->physics && finder_physics(p, o, &s, &in, &clumps, &groups) != 0)
    goto done;
  if (o->finder == FINDER_PHEW ? write_outputs(p, o, &s, &clumps) == 0 : write_groups(p, o, &s, &groups) == 0)
    code = 0;
done:
  phew_clump_result_free(&clumps);
  phew_group_result_free(&groups);
  share_free(&s);
  return code;
}
