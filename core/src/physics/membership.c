/* The membership lists of phew_physics_result (physics.h): this rank's bound and unbound
 * particle ids in catalogue order, and each structure's offsets into the global lists. The
 * ranks' top-level structures are consecutive in id order, so the lists of all ranks, rank
 * after rank, are the global lists. */
#include "physics.h"

#include <stdlib.h>
#include <string.h>

typedef struct place_id {
  int64_t place, id;
} place_id;

static int by_place_id(const void *pa, const void *pb)
{
  const place_id *a = pa, *b = pb;
  if (a->place != b->place)
    return a->place < b->place ? -1 : 1;
  return a->id < b->id ? -1 : (a->id > b->id);
}

static int bound_below(const member *m, const structure_tree *t)
{
  if (m->bound < 0)
    return 0;
  const int64_t place = t->place[m->bound];
  return place >= t->place[m->label] && place < t->subtree_end[m->label];
}

/* The first entry at or after place `place` (entries sorted by place). */
static int64_t first_place(const place_id *e, int64_t n, int64_t place)
{
  int64_t lo = 0, hi = n;
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo) / 2;
    if (e[mid].place < place)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

/* Collective: the global index of this rank's first entry, and the total. */
static void global_start(comm *c, int64_t n, int64_t *first, int64_t *total)
{
  int64_t *counts = phew_malloc((size_t)c->size, sizeof *counts);
  *first = *total = 0;
  if (!counts)
    return; /* the caller's memory check agrees */
  comm_allgather(c, &n, sizeof n, counts);
  for (int r = 0; r < c->size; ++r) {
    if (r < c->rank)
      *first += counts[r];
    *total += counts[r];
  }
  free(counts);
}

phew_status membership_lists(comm *c, const member_set *ms, const structure_tree *t, phew_structure *rows,
                             int64_t n_rows, phew_physics_result *out)
{
  place_id *bound = phew_malloc((size_t)ms->n + 1, sizeof *bound),
           *unbound = phew_malloc((size_t)ms->n + 1, sizeof *unbound);
  int64_t *counts = phew_malloc((size_t)c->size, sizeof *counts);
  out->bound_ids = phew_malloc((size_t)ms->n + 1, sizeof *out->bound_ids);
  out->unbound_ids = phew_malloc((size_t)ms->n + 1, sizeof *out->unbound_ids);
  const int failed = !bound || !unbound || !counts || !out->bound_ids || !out->unbound_ids;
  free(counts);
  if (comm_max(c, failed)) {
    free(bound);
    free(unbound);
    return PHEW_ERROR_MEMORY;
  }
  int64_t nb = 0, nu = 0;
  for (int64_t k = 0; k < ms->n; ++k) { /* members come by (place of the given label, id) */
    const member *m = &ms->m[k];
    if (m->bound >= 0)
      bound[nb++] = (place_id){t->place[m->bound], m->id};
    if (!bound_below(m, t))
      unbound[nu++] = (place_id){t->place[m->label], m->id};
  }
  qsort(bound, (size_t)nb, sizeof *bound, by_place_id);
  for (int64_t k = 0; k < nb; ++k)
    out->bound_ids[k] = bound[k].id;
  for (int64_t k = 0; k < nu; ++k)
    out->unbound_ids[k] = unbound[k].id;
  out->n_bound_ids = nb;
  out->n_unbound_ids = nu;
  global_start(c, nb, &out->bound_ids_first, &out->n_bound_ids_total);
  global_start(c, nu, &out->unbound_ids_first, &out->n_unbound_ids_total);
  for (int64_t r = 0; r < n_rows; ++r) {
    const int64_t place = t->place[rows[r].id];
    rows[r].bound_offset = out->bound_ids_first + first_place(bound, nb, place);
    const int64_t u = first_place(unbound, nu, place);
    rows[r].unbound_offset = out->unbound_ids_first + u;
    rows[r].n_unbound = first_place(unbound, nu, place + 1) - u;
  }
  free(bound);
  free(unbound);
  return PHEW_OK;
}
