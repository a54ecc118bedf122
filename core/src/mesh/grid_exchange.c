/* phew_exchange_ghosts: the ghost cells of a caller's grid block, filled from the ranks that
 * own them, by boxes rather than cell lists. Every rank publishes its stored and active boxes;
 * the cells rank q needs from rank r are, for each periodic image s of r's active box, the box
 * stored_q & (active_r + s), travelling x fastest. Sender and receiver compute the same boxes
 * in the same order, so the values travel alone (no ids, no plan). */
#include "mesh.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct box {
  int64_t lo[3], hi[3]; /* global cell coordinates, unwrapped: [lo, hi) */
} box;

typedef struct block_boxes {
  box stored, active;
} block_boxes;

/* The box of cells that `stored` holds as images of `active` shifted by `shift` (empty: 0). */
static int64_t image_in(const box *stored, const box *active, const int64_t shift[3], box *out)
{
  int64_t cells = 1;
  for (int d = 0; d < 3; ++d) {
    out->lo[d] = stored->lo[d] > active->lo[d] + shift[d] ? stored->lo[d] : active->lo[d] + shift[d];
    out->hi[d] = stored->hi[d] < active->hi[d] + shift[d] ? stored->hi[d] : active->hi[d] + shift[d];
    cells *= out->hi[d] > out->lo[d] ? out->hi[d] - out->lo[d] : 0;
  }
  return cells;
}

/* The periodic images to try, in a fixed order: 0, -n, +n on each periodic axis (the stored
 * cells reach at most one layer beyond the grid, so these cover every ghost). */
static int images(const phew_grid *g, int64_t shifts[27][3])
{
  int count = 0;
  const int choices[3] = {g->periodic[0] ? 3 : 1, g->periodic[1] ? 3 : 1, g->periodic[2] ? 3 : 1};
  for (int k = 0; k < choices[2]; ++k)
    for (int j = 0; j < choices[1]; ++j)
      for (int i = 0; i < choices[0]; ++i) {
        const int pick[3] = {i, j, k};
        for (int d = 0; d < 3; ++d)
          shifts[count][d] = pick[d] == 0 ? 0 : (pick[d] == 1 ? -g->global_dims[d] : g->global_dims[d]);
        ++count;
      }
  return count;
}

/* Copies values between a block and a packed buffer over the cells of `region`: the block
 * cell of global coordinates c - shift for each c in region, x fastest. to_block: from the
 * buffer into the block. Returns the end of the packed values. */
static unsigned char *copy_region(const box *region, const int64_t shift[3], const box *stored, unsigned char *values,
                                  unsigned char *packed, size_t value_size, int to_block)
{
  const int64_t nx = stored->hi[0] - stored->lo[0], ny = stored->hi[1] - stored->lo[1];
  const size_t row = (size_t)(region->hi[0] - region->lo[0]) * value_size;
  for (int64_t z = region->lo[2]; z < region->hi[2]; ++z)
    for (int64_t y = region->lo[1]; y < region->hi[1]; ++y) {
      const int64_t i = (region->lo[0] - shift[0] - stored->lo[0]) +
                        nx * ((y - shift[1] - stored->lo[1]) + ny * (z - shift[2] - stored->lo[2]));
      unsigned char *cell = values + (size_t)i * value_size;
      if (to_block)
        memcpy(cell, packed, row);
      else
        memcpy(packed, cell, row);
      packed += row;
    }
  return packed;
}

/* What every step of the exchange knows: this rank's boxes, every rank's, the images. */
typedef struct exchange {
  comm *c;
  block_boxes mine;
  block_boxes *all; /* per rank */
  int64_t shifts[27][3];
  int n_images;
  int64_t n_receive; /* ghost cells this rank receives */
} exchange;

/* When the active boxes tile the grid, every ghost cell is the image of exactly one active
 * cell, and no other rank's box overlaps ours: 1 if so on every rank (collective). Checked
 * before anything is written. */
static int tiles_the_grid(exchange *x, int64_t n_ghosts)
{
  const int64_t zero[3] = {0, 0, 0};
  int64_t overlap = 0;
  x->n_receive = 0;
  for (int src = 0; src < x->c->size; ++src)
    for (int k = 0; k < x->n_images; ++k) {
      box region;
      if (src != x->c->rank || k != 0)
        x->n_receive += image_in(&x->mine.stored, &x->all[src].active, x->shifts[k], &region);
      if (src != x->c->rank && k == 0)
        overlap += image_in(&x->mine.active, &x->all[src].active, zero, &region);
    }
  return !comm_max(x->c, x->n_receive != n_ghosts || overlap > 0);
}

/* What each rank needs from this one, packed x fastest, image by image (counts per rank);
 * NULL if memory ran out or a rank needs more than an int of cells (*too_many). */
static unsigned char *pack(const exchange *x, void *values, size_t value_size, int *counts, int *too_many)
{
  const comm *c = x->c;
  int64_t n_send = 0;
  *too_many = 0;
  for (int q = 0; q < c->size; ++q) {
    int64_t cells = 0;
    box region;
    for (int k = 0; k < x->n_images; ++k)
      if (q != c->rank || k != 0) /* (image 0 of our own box: our active cells) */
        cells += image_in(&x->all[q].stored, &x->mine.active, x->shifts[k], &region);
    *too_many |= cells > INT32_MAX;
    counts[q] = (int)cells;
    n_send += cells;
  }
  unsigned char *packed = phew_malloc((size_t)(n_send > 0 ? n_send : 1), value_size);
  if (!packed || *too_many)
    return packed;
  unsigned char *at = packed;
  for (int q = 0; q < c->size; ++q)
    for (int k = 0; k < x->n_images; ++k) {
      box region;
      if ((q != c->rank || k != 0) && image_in(&x->all[q].stored, &x->mine.active, x->shifts[k], &region) > 0)
        at = copy_region(&region, x->shifts[k], &x->mine.stored, values, at, value_size, 0);
    }
  return packed;
}

/* The values arrive grouped by source rank, each group in the order its sender packed it;
 * they land on the ghost cells themselves (no shift). */
static void unpack(const exchange *x, const inbox *received, void *values, size_t value_size)
{
  const int64_t zero[3] = {0, 0, 0};
  unsigned char *from = received->items;
  for (int src = 0; src < x->c->size; ++src)
    for (int k = 0; k < x->n_images; ++k) {
      box region;
      if ((src != x->c->rank || k != 0) && image_in(&x->mine.stored, &x->all[src].active, x->shifts[k], &region) > 0)
        from = copy_region(&region, zero, &x->mine.stored, values, from, value_size, 1);
    }
}

/* Collective: phew_exchange_ghosts over c; the message of a failure into r. */
static phew_status exchange_ghosts(comm *c, const phew_grid *g, void *values, size_t value_size, call_result *r)
{
  /* a bad block on one rank stops them all, before any size taken from it is used */
  block b;
  phew_status s = comm_agree(c, g ? block_init(&b, g, r) : phew_fail(r, PHEW_ERROR_ARGUMENT, "no grid given"), r);
  if (s != PHEW_OK)
    return s;
  exchange x = {.c = c};
  for (int d = 0; d < 3; ++d) {
    x.mine.stored.lo[d] = g->stored_offset[d];
    x.mine.stored.hi[d] = g->stored_offset[d] + g->stored_dims[d];
    x.mine.active.lo[d] = g->active_offset[d];
    x.mine.active.hi[d] = g->active_offset[d] + g->active_dims[d];
  }
  x.n_images = images(g, x.shifts);
  x.all = phew_malloc((size_t)c->size, sizeof *x.all);
  int *counts = phew_malloc((size_t)c->size, sizeof *counts);
  unsigned char *packed = NULL;
  int too_many = 0;
  if (comm_max(c, !x.all || !counts)) {
    s = phew_fail(r, PHEW_ERROR_MEMORY, "out of memory in the ghost exchange");
    goto done;
  }
  comm_allgather(c, &x.mine, sizeof x.mine, x.all);
  if (!tiles_the_grid(&x, b.n_stored - g->active_dims[0] * g->active_dims[1] * g->active_dims[2])) {
    s = phew_fail(r, PHEW_ERROR_ARGUMENT,
                  "some ghost cells lie in no rank's active box, or active boxes overlap: the "
                  "blocks do not tile the grid");
    goto done;
  }
  packed = pack(&x, values, value_size, counts, &too_many);
  if (comm_max(c, !packed || too_many)) {
    s = too_many ? phew_fail(r, PHEW_ERROR_ARGUMENT, "too many ghost cells for one exchange")
                 : phew_fail(r, PHEW_ERROR_MEMORY, "out of memory in the ghost exchange");
    goto done;
  }
  inbox received;
  s = comm_exchange_grouped(c, packed, counts, value_size, &received);
  if (s == PHEW_OK && comm_max(c, received.n != x.n_receive))
    s = PHEW_ERROR_MPI;
  if (s == PHEW_OK)
    unpack(&x, &received, values, value_size);
  inbox_free(&received);
  if (s != PHEW_OK)
    s = phew_fail(r, s, "the ghost exchange failed");
done:
  free(packed);
  free(counts);
  free(x.all);
  return s;
}

phew_status phew_exchange_ghosts(phew_context *context, const phew_grid *grid, void *values, size_t value_size)
{
  if (!context)
    return call_refused(context, "phew_exchange_ghosts");
  call_result r;
  call_result_start(&r);
  comm c;
  phew_status s = comm_init(&c, context, &r);
  if (s == PHEW_OK)
    s = exchange_ghosts(&c, grid, values, value_size, &r);
  call_result_report(&r, s, context);
  return s;
}
