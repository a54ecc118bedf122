/* Which rank owns a cell of the grid: the rank whose active box holds it. Every rank
 * publishes its active box once (N boxes per rank, six numbers each). */
#include "internal.h"

#include <stdlib.h>

phew_status owners_init(owners *o, comm *c, const phew_grid *grid)
{
  o->size = c->size;
  o->last = 0;
  for (int d = 0; d < 3; ++d)
    o->dims[d] = grid->global_dims[d];
  o->boxes = phew_malloc((size_t)c->size, sizeof *o->boxes);
  int64_t mine[6];
  for (int d = 0; d < 3; ++d) {
    mine[d] = grid->active_offset[d];
    mine[3 + d] = grid->active_dims[d];
  }
  int ok = o->boxes != NULL;
  if (comm_max(c, !ok)) { /* collective: nobody goes on alone */
    owners_free(o);
    return PHEW_ERROR_MEMORY;
  }
  comm_allgather(c, mine, sizeof mine, o->boxes);
  return PHEW_OK;
}

static int box_holds(const int64_t *box, const int64_t c[3])
{
  for (int d = 0; d < 3; ++d)
    if (c[d] < box[d] || c[d] >= box[d] + box[3 + d])
      return 0;
  return 1;
}

int owners_of_coord(owners *o, const int64_t c[3])
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

int owners_of_id(owners *o, int64_t id)
{
  const int64_t c[3] = {id % o->dims[0], (id / o->dims[0]) % o->dims[1], id / (o->dims[0] * o->dims[1])};
  return owners_of_coord(o, c);
}

void owners_free(owners *o)
{
  free(o->boxes);
  o->boxes = NULL;
}
