/* Reductions over one structure's members (physics.h): on this rank alone (c NULL) or over
 * every rank of c. Sums are exact sums, so both give the same bits whatever the split. */
#include "physics.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

double exact_double(const exact_sum *s)
{
  const wide_float w = exact_sum_value(s);
  double x = 0.0;
  const wide_range r = wide_to_double(w, &x);
  if (r == WIDE_TOO_SMALL)
    return w.negative ? -0.0 : 0.0;
  if (r == WIDE_TOO_LARGE)
    return w.negative ? -INFINITY : INFINITY;
  return x;
}

enum { REDUCE_CHUNK = 1024 }; /* sums gathered at a time (the gather holds ranks x chunk) */

phew_status reduce_exact(comm *c, exact_sum *sums, int64_t n)
{
  phew_status status = PHEW_OK;
  for (int64_t k = 0; c && status == PHEW_OK && k < n; k += REDUCE_CHUNK)
    status = comm_sum_exact(c, sums + k, (int)(n - k < REDUCE_CHUNK ? n - k : REDUCE_CHUNK));
  return status;
}

void reduce_counts(comm *c, int64_t *counts, int64_t n)
{
  if (c)
    comm_sum_array(c, counts, n);
}

double reduce_max(comm *c, double x) { return c ? comm_max_double(c, x) : x; }

int reduce_failed(comm *c, int failed) { return c ? (int)comm_max(c, failed != 0) : failed != 0; }

int64_t reduce_before(comm *c, int64_t n)
{
  if (!c || c->size == 1)
    return 0;
  int64_t *all = phew_malloc((size_t)c->size, sizeof *all), before = 0;
  if (comm_max(c, !all)) {
    free(all);
    return -1;
  }
  comm_allgather(c, &n, sizeof n, all);
  for (int r = 0; r < c->rank; ++r)
    before += all[r];
  free(all);
  return before;
}

phew_status reduce_exact_before(comm *c, const exact_sum *own, int64_t n, exact_sum *before)
{
  for (int64_t k = 0; k < n; ++k)
    exact_sum_clear(&before[k]);
  if (!c)
    return PHEW_OK;
  exact_sum *all = phew_malloc((size_t)c->size * (size_t)n + 1, sizeof *all);
  if (comm_max(c, !all)) {
    free(all);
    return PHEW_ERROR_MEMORY;
  }
  comm_allgather(c, own, (size_t)n * sizeof *own, all);
  for (int r = 0; r < c->rank; ++r) /* in any order: exact */
    for (int64_t k = 0; k < n; ++k)
      exact_sum_merge(&before[k], &all[(size_t)r * (size_t)n + (size_t)k]);
  free(all);
  return PHEW_OK;
}

int reduce_parts(const comm *c) { return c ? c->size : 1; }

void reduce_allgather(comm *c, const void *item, size_t item_size, void *out)
{
  if (c)
    comm_allgather(c, item, item_size, out);
  else
    memcpy(out, item, item_size);
}
