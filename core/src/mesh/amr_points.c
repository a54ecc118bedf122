/* Particles labelled by the AMR leaf cell that holds them (phew_amr_point_labels): RAMSES's
 * way of giving the particles the clumps found on the grid. Each rank finds, for its own
 * particles, the block of the finest level that holds the particle's cell (the first level,
 * going down from the finest, with a block there: that cell is a leaf, since a finer block
 * holding it would have been found first), then asks the block's owner for the cell's label. */
#include "amr_mesh.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct label_question {
  int64_t point, block, cell; /* cell: its index in the block, x fastest */
} label_question;

typedef struct label_answer {
  int64_t point, label;
} label_answer;

static double coordinate(const phew_points *p, int64_t i, int d)
{
  return p->type == PHEW_FLOAT32 ? (double)((const float *)p->position)[3 * i + d]
                                 : ((const double *)p->position)[3 * i + d];
}

/* The question about point i: the leaf cell's block and place; block -1 outside every block. */
static label_question locate(const amr_mesh *a, const phew_points *p, int64_t i)
{
  const phew_amr *d = a->desc;
  label_question q = {i, -1, 0};
  for (int level = a->n_levels - 1; level >= 0; --level) {
    int64_t c[3];
    int inside = 1;
    for (int k = 0; k < 3; ++k) {
      const double h = ldexp(d->spacing[k], -level), x = coordinate(p, i, k);
      const double f = floor((x - d->origin[k]) / h);
      const int64_t n = a->level_dims[level][k];
      if (!(f > -9e18 && f < 9e18)) { /* NaN or beyond int64: in no cell */
        inside = 0;
        break;
      }
      c[k] = (int64_t)f;
      if (d->periodic[k])
        c[k] = ((c[k] % n) + n) % n;
      inside &= c[k] >= 0 && c[k] < n;
    }
    if (!inside)
      return q;
    const int64_t b = amr_tiles_find(&a->tiles, d, level, c);
    if (b >= 0) {
      const phew_amr_block *k = &d->blocks[b];
      q.block = b;
      q.cell = (c[0] - k->lo[0]) + k->dims[0] * ((c[1] - k->lo[1]) + k->dims[1] * (c[2] - k->lo[2]));
      return q;
    }
  }
  return q;
}

/* Collective: the questions to the blocks' owners, their answers back. */
static phew_status ask(const amr_mesh *a, comm *c, const phew_points *p, const int64_t *cell_labels, int64_t *labels)
{
  outbox o;
  outbox_init(&o, c, sizeof(label_question));
  for (int64_t i = 0; i < p->n; ++i) {
    labels[i] = -1;
    const label_question q = locate(a, p, i);
    if (q.block >= 0 && outbox_put(&o, a->desc->blocks[q.block].owner, &q) != PHEW_OK)
      break; /* the exchange fails on every rank */
  }
  inbox in;
  memset(&in, 0, sizeof in);
  phew_status s = outbox_send(&o, c, &in);
  outbox_free(&o);
  outbox_init(&o, c, sizeof(label_answer));
  const label_question *q = (const label_question *)in.items;
  for (int source = 0; s == PHEW_OK && source < c->size; ++source) /* the inbox groups by source */
    for (int64_t k = in.offset[source]; k < in.offset[source] + in.count[source]; ++k) {
      const label_answer r = {q[k].point, cell_labels[a->first_cell[q[k].block] + q[k].cell]};
      outbox_put(&o, source, &r); /* a failure is the exchange's, on every rank */
    }
  inbox_free(&in);
  inbox answers;
  memset(&answers, 0, sizeof answers);
  const phew_status t = outbox_send(&o, c, &answers);
  s = s == PHEW_OK ? t : s;
  outbox_free(&o);
  const label_answer *r = (const label_answer *)answers.items;
  for (int64_t k = 0; s == PHEW_OK && k < answers.n; ++k)
    labels[r[k].point] = r[k].label;
  inbox_free(&answers);
  return s;
}

static phew_status label_points(const phew_context *context, const phew_amr *amr, const int64_t *cell_labels,
                                const phew_points *p, int64_t *labels, call_result *r)
{
  comm c;
  phew_status s = comm_init(&c, context, r);
  if (s != PHEW_OK)
    return s;
  if (!amr || !p || p->n < 0 || (p->n > 0 && (!p->position || !labels)) ||
      (p->type != PHEW_FLOAT32 && p->type != PHEW_FLOAT64))
    s = phew_fail(r, PHEW_ERROR_ARGUMENT,
                  "phew_amr_point_labels needs the AMR description, the points (n >= 0, positions of "
                  "type float32 or float64) and the output labels");
  s = comm_agree(&c, s, r);
  if (s != PHEW_OK)
    return s;
  amr_mesh a;
  s = amr_mesh_init(&a, amr, &c, r);
  if (s == PHEW_OK && a.n_own_cells > 0 && !cell_labels)
    s = phew_fail(r, PHEW_ERROR_ARGUMENT, "no cell labels for this rank's blocks");
  s = comm_agree(&c, s, r);
  if (s == PHEW_OK) {
    s = ask(&a, &c, p, cell_labels, labels);
    if (s != PHEW_OK)
      phew_fail(r, s, "could not ask for the particles' cells (out of memory)");
    s = comm_agree(&c, s, r);
  }
  amr_mesh_free(&a);
  return s;
}

phew_status phew_amr_point_labels(phew_context *context, const phew_amr *amr, const int64_t *cell_labels,
                                  const phew_points *points, int64_t *point_labels)
{
  if (!context)
    return call_refused(context, "phew_amr_point_labels");
  call_result r;
  call_result_start(&r);
  const phew_status s = label_points(context, amr, cell_labels, points, point_labels, &r);
  if (s != PHEW_OK)
    for (int64_t i = 0; points && point_labels && i < points->n; ++i)
      point_labels[i] = -1;
  call_result_report(&r, s, context);
  return s;
}
