/* phew_context_ranks, phew_gather_all and comm_gather_all: what a caller that reads its own share of a file
 * (the readers) needs to know about the other ranks, without calling MPI itself. */
#include "comm.h"

#include <stdlib.h>
#include <string.h>

phew_status phew_context_ranks(phew_context *context, int *rank, int *size)
{
  if (!context || !rank || !size)
    return call_refused(context, "phew_context_ranks");
  call_result r;
  call_result_start(&r);
  comm c;
  const phew_status s = comm_init(&c, context, &r);
  *rank = s == PHEW_OK ? c.rank : 0;
  *size = s == PHEW_OK ? c.size : 1;
  call_result_report(&r, s, context);
  return s;
}

/* Rank 0 has every rank's items and counts: they go to every other rank, whose own (empty)
 * gather buffers are freed first (comm_broadcast writes a new copy there). */
static phew_status share_gathered(comm *c, void **items, int64_t *n, size_t item_size, int **counts)
{
  if (c->rank != 0) {
    free(*items);
    free(*counts);
    *items = NULL;
    *counts = NULL;
  }
  phew_status s = comm_broadcast(c, items, n, item_size);
  int64_t n_counts = c->size;
  if (s == PHEW_OK)
    s = comm_broadcast(c, (void **)counts, &n_counts, sizeof **counts);
  return s;
}

phew_status comm_gather_all(comm *c, const void *items, int64_t n, size_t item_size, void **out, int64_t *n_out,
                            int **counts)
{
  int *per_rank = NULL;
  phew_status s = comm_gather(c, items, n, item_size, out, n_out, &per_rank);
  if (s == PHEW_OK)
    s = share_gathered(c, out, n_out, item_size, &per_rank);
  if (counts)
    *counts = per_rank;
  else
    free(per_rank);
  return s;
}

phew_status phew_gather_all(phew_context *context, const void *items, int64_t n, size_t item_size, void **out,
                            int64_t *n_out, int64_t *counts)
{
  if (!context || !out || !n_out || n < 0 || item_size == 0 || (n > 0 && !items))
    return call_refused(context, "phew_gather_all");
  *out = NULL;
  *n_out = 0;
  call_result r;
  call_result_start(&r);
  comm c;
  phew_status s = comm_init(&c, context, &r);
  void *all = NULL;
  int64_t n_all = 0;
  int *per_rank = NULL;
  if (s == PHEW_OK)
    s = comm_gather_all(&c, items, n, item_size, &all, &n_all, &per_rank);
  if (s == PHEW_OK) {
    *out = all ? all : calloc(1, 1); /* never NULL after a success, even for no items */
    s = comm_max(&c, *out == NULL) ? PHEW_ERROR_MEMORY : PHEW_OK;
  }
  if (s == PHEW_OK) {
    *n_out = n_all;
    for (int k = 0; counts && k < c.size; ++k)
      counts[k] = per_rank[k];
  } else {
    free(all);
    *out = NULL;
    phew_fail(&r, s, "not enough memory to gather the ranks' items");
  }
  free(per_rank);
  call_result_report(&r, s, context);
  return s;
}
