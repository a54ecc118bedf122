/* The membership lists of phew_physics_result (physics.h): the bound and unbound particle ids
 * in catalogue order, sorted over the ranks (each rank holds a contiguous share of each list,
 * rank after rank: a top-level structure may be spread over several), and each structure's
 * offsets into the global lists from the counts of every structure. */
#include "physics.h"

#include <stdlib.h>
#include <string.h>

typedef struct place_id {
  uint64_t place, id; /* the key of comm_sort */
} place_id;

static int bound_below(const member *m, const structure_tree *t)
{
  if (m->bound < 0)
    return 0;
  const int64_t place = t->place[m->bound];
  return place >= t->place[m->label] && place < t->subtree_end[m->label];
}

/* Collective: the entries sorted over the ranks into ids (this rank's share) and its global
 * start; counts[place] += the entries of each place (the caller sums them over the ranks). */
static phew_status sort_list(comm *c, const place_id *entries, int64_t n, int64_t **ids, int64_t *n_ids, int64_t *first,
                             int64_t *total, int64_t *counts)
{
  inbox in;
  phew_status status = comm_sort(c, entries, n, sizeof *entries, &in);
  *ids = phew_malloc((size_t)in.n + 1, sizeof **ids);
  if (status == PHEW_OK && comm_max(c, !*ids))
    status = PHEW_ERROR_MEMORY;
  const place_id *e = (const place_id *)in.items;
  for (int64_t k = 0; status == PHEW_OK && k < in.n; ++k)
    (*ids)[k] = (int64_t)e[k].id;
  for (int64_t k = 0; k < n; ++k)
    ++counts[entries[k].place];
  *n_ids = status == PHEW_OK ? in.n : 0;
  inbox_free(&in);
  if (status == PHEW_OK) {
    *first = reduce_before(c, *n_ids);
    *total = comm_sum(c, *n_ids);
    status = *first < 0 ? PHEW_ERROR_MEMORY : PHEW_OK; /* agreed by reduce_before */
  }
  return status;
}

phew_status membership_lists(comm *c, const member_set *ms, const structure_tree *t, phew_structure *rows,
                             int64_t n_rows, phew_physics_result *out)
{
  place_id *bound = phew_malloc((size_t)ms->n + 1, sizeof *bound),
           *unbound = phew_malloc((size_t)ms->n + 1, sizeof *unbound);
  int64_t *counts = phew_calloc(2 * (size_t)t->n + 1, sizeof *counts); /* bound, unbound per place */
  const int failed = !bound || !unbound || !counts;
  phew_status status = comm_max(c, failed) ? PHEW_ERROR_MEMORY : PHEW_OK;
  int64_t nb = 0, nu = 0;
  for (int64_t k = 0; status == PHEW_OK && k < ms->n; ++k) {
    const member *m = &ms->m[k];
    if (m->bound >= 0)
      bound[nb++] = (place_id){(uint64_t)t->place[m->bound], (uint64_t)m->id};
    if (!bound_below(m, t))
      unbound[nu++] = (place_id){(uint64_t)t->place[m->label], (uint64_t)m->id};
  }
  if (status == PHEW_OK)
    status = sort_list(c, bound, nb, &out->bound_ids, &out->n_bound_ids, &out->bound_ids_first, &out->n_bound_ids_total,
                       counts);
  if (status == PHEW_OK)
    status = sort_list(c, unbound, nu, &out->unbound_ids, &out->n_unbound_ids, &out->unbound_ids_first,
                       &out->n_unbound_ids_total, counts + t->n);
  if (status == PHEW_OK) {
    comm_sum_array(c, counts, 2 * t->n);
    for (int64_t k = 1; k < t->n; ++k) { /* counts before each place */
      counts[k] += counts[k - 1];
      counts[t->n + k] += counts[t->n + k - 1];
    }
    for (int64_t r = 0; r < n_rows; ++r) {
      const int64_t place = t->place[rows[r].id];
      rows[r].bound_offset = place > 0 ? counts[place - 1] : 0;
      rows[r].unbound_offset = place > 0 ? counts[t->n + place - 1] : 0;
      rows[r].n_unbound = counts[t->n + place] - rows[r].unbound_offset;
    }
  }
  free(bound);
  free(unbound);
  free(counts);
  return status;
}
