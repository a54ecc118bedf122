/* PHEW on a RAMSES output's AMR cells. The reader gives every rank the whole list of boxes
 * (the same on every rank) and the values of the boxes of its own CPU files; phew_plan_amr
 * makes the core's hierarchy of it (each box is owned by the rank that read it). The
 * per-cell files hold every box's cells, box after box in the list's order, each x fastest
 * (covered cells -1), so each rank writes its boxes at their offsets; PREFIX-boxes.csv says
 * where each box starts. */
#include "amr_mode.h"
#include "amr_particles.h"
#include "cli_errors.h"
#include "file_io.h"
#include "outputs.h"
#include "points_io.h"
#include "progress.h"
#include "summary.h"
#include "tables.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void amr_mode_check(const procs *p, const options *o)
{
  phew_context context = procs_context(p, o->n_threads);
  phew_snapshot_info info;
  if (phew_read_snapshot_info(&context, o->snapshot, &o->read, &info) != PHEW_OK) /* the same on every rank */
    fail("%s", context.message);
  else if (info.format != PHEW_FORMAT_RAMSES)
    fail("--amr-variable needs a RAMSES output; %s is a %s snapshot", o->snapshot, info.code);
}

static int64_t cells_of(const phew_amr_box *b)
{
  return (b->hi[0] - b->lo[0] + 1) * (b->hi[1] - b->lo[1] + 1) * (b->hi[2] - b->lo[2] + 1);
}

/* What this rank passes to the core and gets back: its boxes' cells, box after box. */
typedef struct amr_share {
  phew_amr_set set;
  phew_amr_plan plan;
  int64_t *first_cell; /* per box: its first cell in the per-cell files */
  int64_t n_cells;     /* of this rank's boxes */
  double *density;
  phew_labels labels;
} amr_share;

static void share_free(amr_share *s)
{
  phew_amr_plan_free(&s->plan);
  phew_amr_set_free(&s->set);
  free(s->first_cell);
  free(s->density);
  free(s->labels.peak_patch_id);
  free(s->labels.clump_id);
  free(s->labels.halo_id);
}

/* The density of this rank's boxes in list order, and the label arrays. */
static int gather_cells(const procs *p, amr_share *s, int rank)
{
  const phew_amr_hierarchy *h = &s->set.hierarchy;
  s->first_cell = allocate(h->n_boxes + 1, sizeof *s->first_cell, "the boxes' offsets");
  if (s->first_cell)
    s->first_cell[0] = 0;
  for (int64_t k = 0; s->first_cell && k < h->n_boxes; ++k) {
    s->first_cell[k + 1] = s->first_cell[k] + cells_of(&h->boxes[k]);
    if (s->set.box_rank[k] == rank)
      s->n_cells += cells_of(&h->boxes[k]);
  }
  if (s->first_cell && (s->density = allocate(s->n_cells, sizeof *s->density, "the density")) != NULL &&
      (s->labels.peak_patch_id = allocate(s->n_cells, 8, "the label arrays")) != NULL &&
      (s->labels.clump_id = allocate(s->n_cells, 8, "the label arrays")) != NULL)
    s->labels.halo_id = allocate(s->n_cells, 8, "the label arrays");
  if (!all_ok(p))
    return -1;
  for (int64_t k = 0, at = 0; k < h->n_boxes; ++k)
    if (s->set.box_rank[k] == rank) {
      memcpy(s->density + at, s->set.values[k], (size_t)cells_of(&h->boxes[k]) * sizeof *s->density);
      at += cells_of(&h->boxes[k]);
    }
  return 0;
}

/* Rank 0: the boxes, in the order of the per-cell files. */
static void write_boxes(const amr_share *s)
{
  const char *path = outputs_temporary(OUTPUT_BOXES_CSV);
  text_file *out = malloc(sizeof *out);
  int err = out ? text_open(out, path) : ENOMEM;
  if (err == 0) {
    const phew_amr_hierarchy *h = &s->set.hierarchy;
    text_printf(out, "Level,LoX,LoY,LoZ,HiX,HiY,HiZ,FirstCell,NumberOfCells\n");
    for (int64_t k = 0; k < h->n_boxes; ++k) {
      const phew_amr_box *b = &h->boxes[k];
      text_printf(out, "%d,%lld,%lld,%lld,%lld,%lld,%lld,%lld,%lld\n", b->level, (long long)b->lo[0],
                  (long long)b->lo[1], (long long)b->lo[2], (long long)b->hi[0], (long long)b->hi[1],
                  (long long)b->hi[2], (long long)s->first_cell[k], (long long)cells_of(b));
    }
    err = text_close(out);
  }
  if (err)
    fail("writing '%s' failed: %s", path, strerror(err));
  free(out);
}

/* Every rank: its boxes' labels at their offsets in the three per-cell files. */
static void write_cells(const amr_share *s, int rank)
{
  const int64_t *arrays[3] = {s->labels.peak_patch_id, s->labels.clump_id, s->labels.halo_id};
  const int files[3] = {OUTPUT_PATCH, OUTPUT_CLUMP, OUTPUT_HALO};
  const phew_amr_hierarchy *h = &s->set.hierarchy;
  for (int f = 0; f < 3 && !failed(); ++f)
    for (int64_t k = 0, at = 0; k < h->n_boxes && !failed(); ++k)
      if (s->set.box_rank[k] == rank) {
        particle_files_write(outputs_temporary(files[f]), 8, s->first_cell[k], cells_of(&h->boxes[k]), arrays[f] + at);
        at += cells_of(&h->boxes[k]);
      }
}

/* The read, the plan and the core's input; 0, or -1 on every rank after all_ok. */
static int prepare(const procs *p, const options *o, phew_context *context, amr_share *s, phew_input *in)
{
  const char *variables[1] = {o->amr_variable};
  progress_stage(p, o->verbose, "reading the AMR");
  if (phew_read_amr(context, o->snapshot, &o->read, variables, 1, &s->set) != PHEW_OK ||
      phew_plan_amr(context, &s->set.hierarchy, &s->plan) != PHEW_OK) /* the same on every rank */
    fail("%s", context->message);
  progress_done();
  if (!all_ok(p) || gather_cells(p, s, p->rank) != 0)
    return -1;
  if (o->verbose && p->rank == 0)
    printf("snapshot: %s, %s, %lld boxes on %d levels, %lld leaf cells, variable %s\n", s->set.info.path,
           s->set.info.code, (long long)s->set.hierarchy.n_boxes, s->set.hierarchy.n_levels,
           (long long)s->set.n_leaf_cells, o->amr_variable);
  memset(in, 0, sizeof *in);
  in->mesh = PHEW_MESH_AMR;
  in->amr = s->plan.amr;
  for (int d = 0; d < 3; ++d)
    in->amr.periodic[d] = s->set.info.periodic[d] || o->periodic;
  in->density = s->density;
  in->density_type = PHEW_FLOAT64;
  return 0;
}

int amr_mode_run(const procs *p, const options *o)
{
  amr_share s;
  memset(&s, 0, sizeof s);
  phew_clump_result result;
  memset(&result, 0, sizeof result);
  physics_outcome physics;
  memset(&physics, 0, sizeof physics);
  phew_context context = procs_context(p, o->n_threads);
  progress_attach(&context, p, o->verbose);
  phew_input in;
  int code = 1;
  if (prepare(p, o, &context, &s, &in) != 0)
    goto done;
  if (phew_find_clumps(&context, &in, &o->params, &s.labels, &result) != PHEW_OK)
    fail("%s", context.message);
  progress_done();
  if (!all_ok(p))
    goto done;
  if (o->verbose && p->rank == 0)
    print_summary(&result, &o->params, 0);
  if (o->physics && amr_particles_run(p, o, &in.amr, s.labels.clump_id, &result, &physics) != 0)
    goto done;
  write_cells(&s, p->rank);
  if (p->rank == 0 && !failed())
    write_boxes(&s);
  if (all_ok(p) &&
      tables_write_and_commit(p, o, &result, &s.set.info, s.set.hierarchy.n_boxes, o->physics ? &physics.params : NULL,
                              o->physics ? &physics.result : NULL) == 0)
    code = 0;
done:
  physics_outcome_free(&physics);
  phew_clump_result_free(&result);
  share_free(&s);
  return code;
}
