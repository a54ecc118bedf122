/* The table of peaks known to this process: global id, peak cell, peak density, owner, and
 * a hash from global id to index that grows with the table (no fixed maximum to overflow). */
#include "segmentation.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

phew_status peak_table_reserve(peak_table *t, int64_t capacity)
{
  if (capacity <= t->capacity)
    return PHEW_OK;
  int64_t *gid = phew_realloc(t->global_id, (size_t)capacity, sizeof *gid);
  if (gid)
    t->global_id = gid;
  int64_t *cell = phew_realloc(t->cell, (size_t)capacity, sizeof *cell);
  if (cell)
    t->cell = cell;
  double *density = phew_realloc(t->density, (size_t)capacity, sizeof *density);
  if (density)
    t->density = density;
  double *coord = phew_realloc(t->coord, (size_t)capacity * 3, sizeof *coord);
  if (coord)
    t->coord = coord;
  int *owner = phew_realloc(t->owner, (size_t)capacity, sizeof *owner);
  if (owner)
    t->owner = owner;
  if (!gid || !cell || !density || !coord || !owner)
    return PHEW_ERROR_MEMORY;
  t->capacity = capacity;
  return PHEW_OK;
}

phew_status peak_table_add(peak_table *t, int64_t global_id, int64_t cell, double density, const double coord[3],
                           int owner)
{
  if (t->n == t->capacity) {
    phew_status s = peak_table_reserve(t, t->capacity < 64 ? 64 : 2 * t->capacity);
    if (s != PHEW_OK)
      return s;
  }
  int64_t existing;
  if ((!t->index.slots && id_map_init(&t->index, 512) != 0) ||
      id_map_insert(&t->index, global_id, t->n, &existing) != 0)
    return PHEW_ERROR_MEMORY;
  t->global_id[t->n] = global_id;
  t->cell[t->n] = cell;
  t->density[t->n] = density;
  t->owner[t->n] = owner;
  for (int d = 0; d < 3; ++d)
    t->coord[3 * t->n + d] = coord[d];
  t->n++;
  return PHEW_OK;
}

int64_t peak_table_find(const peak_table *t, int64_t global_id)
{
  return t->index.slots ? id_map_find(&t->index, global_id) : -1;
}

peak_ref peak_table_ref(const peak_table *t, int64_t p)
{
  peak_ref r;
  memset(&r, 0, sizeof r);
  r.global_id = -1;
  if (p >= 0) {
    r.global_id = t->global_id[p];
    r.density = t->density[p];
    r.owner = t->owner[p];
  }
  return r;
}

phew_status peak_table_ghost(peak_table *t, const peak_ref *r, int64_t *index)
{
  *index = peak_table_find(t, r->global_id);
  if (*index >= 0)
    return PHEW_OK;
  *index = t->n;
  const double unknown[3] = {NAN, NAN, NAN}; /* until peak_comm_share_coordinates */
  return peak_table_add(t, r->global_id, -1, r->density, unknown, r->owner);
}

void peak_table_free(peak_table *t)
{
  free(t->global_id);
  free(t->cell);
  free(t->density);
  free(t->coord);
  free(t->owner);
  id_map_free(&t->index);
  t->global_id = t->cell = NULL;
  t->density = t->coord = NULL;
  t->owner = NULL;
  t->n = t->n_owned = t->capacity = 0;
}

typedef struct order_key {
  double density;
  int64_t global_id;
  int64_t peak;
} order_key;

static int compare_higher_first(const void *pa, const void *pb)
{
  const order_key *a = pa, *b = pb;
  if (a->density != b->density)
    return a->density > b->density ? -1 : 1;
  return a->global_id < b->global_id ? -1 : (a->global_id > b->global_id);
}

phew_status peak_sort_higher_first(const peak_table *t, int64_t *list, int64_t n)
{
  order_key *keys = phew_malloc((size_t)n, sizeof *keys);
  if (!keys)
    return PHEW_ERROR_MEMORY;
  for (int64_t i = 0; i < n; ++i)
    keys[i] = (order_key){t->density[list[i]], t->global_id[list[i]], list[i]};
  qsort(keys, (size_t)n, sizeof *keys, compare_higher_first);
  for (int64_t i = 0; i < n; ++i)
    list[i] = keys[i].peak;
  free(keys);
  return PHEW_OK;
}
