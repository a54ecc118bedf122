/* The table of peaks known to this process: global id, peak cell and peak density. */
#include "internal.h"

#include <stdlib.h>

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
  if (!gid || !cell || !density || !coord)
    return PHEW_ERROR_MEMORY;
  t->capacity = capacity;
  return PHEW_OK;
}

phew_status peak_table_add(peak_table *t, int64_t global_id, int64_t cell, double density, const double coord[3])
{
  if (t->n == t->capacity) {
    phew_status s = peak_table_reserve(t, t->capacity < 64 ? 64 : 2 * t->capacity);
    if (s != PHEW_OK)
      return s;
  }
  t->global_id[t->n] = global_id;
  t->cell[t->n] = cell;
  t->density[t->n] = density;
  for (int d = 0; d < 3; ++d)
    t->coord[3 * t->n + d] = coord[d];
  t->n++;
  return PHEW_OK;
}

void peak_table_free(peak_table *t)
{
  free(t->global_id);
  free(t->cell);
  free(t->density);
  free(t->coord);
  t->global_id = t->cell = NULL;
  t->density = t->coord = NULL;
  t->n = t->capacity = 0;
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
