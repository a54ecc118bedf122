/* Every particle of a kd-tree within a distance of a point (neighbours.h), for callers outside
 * this folder (the spherical-overdensity masses). */
#include "kd_tree.h"

#include <stdlib.h>
#include <string.h>

phew_status ball_query_init(ball_query *q, const kd_tree *t)
{
  memset(q, 0, sizeof *q);
  q->tree = t;
  if (t->n == 0)
    return PHEW_OK;
  q->candidates = malloc(sizeof(kd_candidates));
  if (!q->candidates || kd_candidates_init(q->candidates, t) != PHEW_OK) {
    free(q->candidates);
    q->candidates = NULL;
    return PHEW_ERROR_MEMORY;
  }
  return PHEW_OK;
}

void ball_query_free(ball_query *q)
{
  if (q->candidates)
    kd_candidates_free(q->candidates);
  free(q->candidates);
  free(q->d2);
  free(q->slot);
  free(q->index);
  memset(q, 0, sizeof *q);
}

phew_status ball_query_run(ball_query *q, const double *x, double r2)
{
  q->n = 0;
  const kd_tree *t = q->tree;
  if (t->n == 0)
    return PHEW_OK;
  if (!kd_tree_gather(t, x, x, r2, q->candidates))
    return PHEW_ERROR_MEMORY;
  const int size = kd_candidates_size(q->candidates);
  if (size > q->capacity) {
    if (phew_grow(&q->d2, (size_t)size, sizeof *q->d2) || phew_grow(&q->slot, (size_t)size, sizeof *q->slot) ||
        phew_grow(&q->index, (size_t)size, sizeof *q->index))
      return PHEW_ERROR_MEMORY;
    q->capacity = size;
  }
  q->n = kd_candidates_scan(t, q->candidates, x, r2, q->d2, q->slot);
  for (int k = 0; k < q->n; ++k)
    q->index[k] = t->index[q->slot[k]];
  return PHEW_OK;
}
