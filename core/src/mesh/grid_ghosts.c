/* The ghost cells of a structured block: the cells of its ghost layers, each owned by the
 * rank whose active box holds it. Every rank publishes its active box once (six numbers per
 * rank), and owners find the stored cell of a global id by decoding it into coordinates. */
#include "mesh.h"

#include <stdio.h>
#include <stdlib.h>

typedef struct owners {
  int size;
  int64_t (*boxes)[6]; /* active box of every rank: lo[3], n[3] */
  int last;            /* neighbouring lookups often hit the same rank */
} owners;

static int box_holds(const int64_t *box, const int64_t c[3])
{
  for (int d = 0; d < 3; ++d)
    if (c[d] < box[d] || c[d] >= box[d] + box[3 + d])
      return 0;
  return 1;
}

/* Rank whose active box holds the cell with global coordinates c, -1 if none. */
static int owner_of(owners *o, const int64_t c[3])
{
  if (box_holds(o->boxes[o->last], c))
    return o->last;
  for (int r = 0; r < o->size; ++r)
    if (box_holds(o->boxes[r], c)) {
      o->last = r;
      return r;
    }
  return -1;
}

static int64_t wrap(int64_t c, int64_t n) { return c < 0 ? c + n : (c >= n ? c - n : c); }

/* Stored index of the active cell with this global id, -1 if this block does not own it. */
static int64_t grid_cell_of_id(const void *context, int64_t id)
{
  const block *b = context;
  const phew_grid *g = b->grid;
  const int64_t c[3] = {id % g->global_dims[0], (id / g->global_dims[0]) % g->global_dims[1],
                        id / (g->global_dims[0] * g->global_dims[1])};
  int64_t s[3];
  for (int d = 0; d < 3; ++d) {
    if (id < 0 || c[d] < g->active_offset[d] || c[d] >= g->active_offset[d] + g->active_dims[d])
      return -1;
    s[d] = c[d] - g->stored_offset[d];
  }
  return s[0] + b->dims[0] * (s[1] + b->dims[1] * s[2]);
}

phew_status grid_ghost_plan(ghost_plan *p, comm *c, const block *b, char *message, size_t message_size)
{
  const phew_grid *g = b->grid;
  owners own = {c->size, phew_malloc((size_t)c->size, sizeof *own.boxes), 0};
  int64_t mine[6];
  for (int d = 0; d < 3; ++d) {
    mine[d] = g->active_offset[d];
    mine[3 + d] = g->active_dims[d];
  }
  ghost_list ghosts = {0};
  const int64_t n_ghost = b->n_stored - g->active_dims[0] * g->active_dims[1] * g->active_dims[2];
  const int failed = !own.boxes || ghost_list_reserve(&ghosts, n_ghost) != PHEW_OK;
  if (comm_max(c, failed)) { /* collective: nobody goes on alone */
    free(own.boxes);
    ghost_list_free(&ghosts);
    snprintf(message, message_size, "out of memory while planning the ghost exchange");
    return PHEW_ERROR_MEMORY;
  }
  comm_allgather(c, mine, sizeof mine, own.boxes);
  int64_t orphans = 0;
  for (int64_t z = 0; z < b->dims[2]; ++z)
    for (int64_t y = 0; y < b->dims[1]; ++y) {
      const int row_active = y >= b->lo[1] && y < b->hi[1] && z >= b->lo[2] && z < b->hi[2];
      for (int64_t x = 0; x < b->dims[0]; ++x) {
        if (row_active && x == b->lo[0] && b->hi[0] > b->lo[0])
          x = b->hi[0]; /* skip the active run of the row */
        if (x >= b->dims[0])
          break;
        const int64_t w[3] = {wrap(g->stored_offset[0] + x, g->global_dims[0]),
                              wrap(g->stored_offset[1] + y, g->global_dims[1]),
                              wrap(g->stored_offset[2] + z, g->global_dims[2])};
        const int r = owner_of(&own, w);
        if (r < 0) {
          ++orphans;
          continue;
        }
        ghosts.cell[ghosts.n] = x + b->dims[0] * (y + b->dims[1] * z);
        ghosts.owner[ghosts.n] = r;
        ghosts.global_id[ghosts.n++] = w[0] + g->global_dims[0] * (w[1] + g->global_dims[1] * w[2]);
      }
    }
  free(own.boxes);
  phew_status s;
  if (comm_max(c, orphans > 0)) {
    snprintf(message, message_size, "some ghost cells lie in no rank's active box: the blocks do not tile the grid");
    s = PHEW_ERROR_ARGUMENT;
  } else {
    s = ghost_plan_build(p, c, &ghosts, grid_cell_of_id, b, message, message_size);
  }
  ghost_list_free(&ghosts);
  return s;
}
