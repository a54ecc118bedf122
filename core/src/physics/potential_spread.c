/* TEMPORARY stand-in (the locally essential tree replaces it): every member on every rank. */
#include "physics.h"

#include <stdlib.h>
#include <string.h>

typedef struct spread_point {
  int64_t order;
  double x[3], m;
} spread_point;

phew_status potential_spread(comm *c, const double *position, const double *mass, const int64_t *order, int64_t n,
                             const potential_params *p, double *phi)
{
  spread_point *mine = phew_malloc((size_t)n + 1, sizeof *mine);
  if (comm_max(c, !mine)) {
    free(mine);
    return PHEW_ERROR_MEMORY;
  }
  for (int64_t k = 0; k < n; ++k) {
    mine[k].order = order[k];
    memcpy(mine[k].x, position + 3 * k, sizeof mine[k].x);
    mine[k].m = mass ? mass[k] : 1.0;
  }
  void *all = NULL;
  int64_t n_all = 0;
  int *counts = NULL;
  phew_status status = comm_gather(c, mine, n, sizeof *mine, &all, &n_all, &counts);
  free(counts);
  free(mine);
  if (status == PHEW_OK)
    status = comm_broadcast(c, &all, &n_all, sizeof(spread_point));
  double *xs = phew_malloc((size_t)n_all + 1, 3 * sizeof *xs), *ms = phew_malloc((size_t)n_all + 1, sizeof *ms);
  double *ph = phew_malloc((size_t)n_all + 1, sizeof *ph);
  if (status == PHEW_OK && comm_max(c, !xs || !ms || !ph))
    status = PHEW_ERROR_MEMORY;
  const spread_point *a = all;
  for (int64_t k = 0; status == PHEW_OK && k < n_all; ++k) {
    memcpy(xs + 3 * a[k].order, a[k].x, 3 * sizeof *xs);
    ms[a[k].order] = a[k].m;
  }
  if (status == PHEW_OK)
    status = potential_compute(xs, ms, n_all, p, ph);
  if (comm_max(c, status != PHEW_OK))
    status = PHEW_ERROR_MEMORY;
  for (int64_t k = 0; status == PHEW_OK && k < n; ++k)
    phi[k] = ph[order[k]];
  free(all);
  free(xs);
  free(ms);
  free(ph);
  return status;
}
