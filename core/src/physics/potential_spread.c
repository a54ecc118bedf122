/* The potentials of one structure spread over the ranks (physics.h; the steps in spread.h).
 * Small structures (at most direct_max members) are gathered whole on every rank, in canonical
 * order, and each rank sums its own members as direct_sums does. Larger ones: the top of the
 * octree from the ranks' counts, every member to the owner of its frontier cell, each owner's
 * subtrees from its members in canonical order, the moments of the top, the locally essential
 * tree, the owners' group walks, and phi back to where each member was passed. */
#include "radix_sort.h"
#include "spread.h"
#include "threads.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A negative count or orders out of range, or positions that are not finite (the criterion
 * would not be monotone, spread_let.c), fail on every rank. */
static phew_status check_input(comm *c, const double *position, const int64_t *order, int64_t n, int64_t n_total)
{
  phew_status status = n < 0 ? PHEW_ERROR_ARGUMENT : PHEW_OK;
  for (int64_t i = 0; i < n; ++i) {
    if (order[i] < 0 || order[i] >= n_total)
      status = PHEW_ERROR_ARGUMENT;
    if (!isfinite(position[3 * i]) || !isfinite(position[3 * i + 1]) || !isfinite(position[3 * i + 2]))
      status = status == PHEW_OK ? PHEW_ERROR_DATA : status;
  }
  return (phew_status)comm_max(c, status);
}

/* ---- direct sums ------------------------------------------------------------------------- */
typedef struct direct_point {
  double position[3], mass;
  int64_t order;
} direct_point;

typedef struct direct_job {
  const point_masses *all; /* every member, in canonical order */
  const double *position;
  const int64_t *order;
  int64_t n;
  double eps2, scale;
  double *phi;
} direct_job;

static void direct_task(void *context, int thread, int64_t task)
{
  (void)thread;
  const direct_job *job = context;
  const int64_t end = (task + 1) * OCT_TASK < job->n ? (task + 1) * OCT_TASK : job->n;
  for (int64_t i = task * OCT_TASK; i < end; ++i)
    job->phi[i] = job->scale * sum_point_masses(job->all, job->order[i], job->position + 3 * i, job->eps2);
}

/* Every member in canonical order in all (allocated here); PHEW_ERROR_ARGUMENT if an order
 * comes twice. */
static phew_status place_all(const inbox *in, point_masses *all)
{
  const int64_t n = in->n;
  all->x = phew_malloc((size_t)n, sizeof *all->x);
  all->y = phew_malloc((size_t)n, sizeof *all->y);
  all->z = phew_malloc((size_t)n, sizeof *all->z);
  all->m = phew_malloc((size_t)n, sizeof *all->m);
  unsigned char *placed = phew_calloc((size_t)n, 1);
  phew_status status = all->x && all->y && all->z && all->m && placed ? PHEW_OK : PHEW_ERROR_MEMORY;
  for (int64_t k = 0; status == PHEW_OK && k < n; ++k) {
    direct_point q;
    memcpy(&q, in->items + (size_t)k * sizeof q, sizeof q);
    if (placed[q.order]++)
      status = PHEW_ERROR_ARGUMENT;
    all->x[q.order] = q.position[0];
    all->y[q.order] = q.position[1];
    all->z[q.order] = q.position[2];
    all->m[q.order] = q.mass;
  }
  all->n = all->capacity = n;
  free(placed);
  return status;
}

static phew_status spread_direct(comm *c, const double *position, const double *mass, const int64_t *order, int64_t n,
                                 const potential_params *p, double *phi)
{
  outbox o;
  outbox_init(&o, c, sizeof(direct_point));
  for (int64_t i = 0; i < n; ++i) {
    const direct_point q = {{position[3 * i], position[3 * i + 1], position[3 * i + 2]},
                            mass ? mass[i] : 1.0,
                            order[i]};
    for (int r = 0; r < c->size; ++r)
      outbox_put(&o, r, &q);
  }
  inbox in;
  phew_status status = outbox_send(&o, c, &in);
  outbox_free(&o);
  point_masses all = {0, 0, NULL, NULL, NULL, NULL};
  if (status == PHEW_OK)
    status = (phew_status)comm_max(c, place_all(&in, &all));
  inbox_free(&in);
  if (status == PHEW_OK) {
    direct_job job = {&all, position, order, n, p->eps2, -p->g_over_a, phi};
    threads_run(p->n_threads, (n + OCT_TASK - 1) / OCT_TASK, direct_task, &job);
  }
  point_masses_free(&all);
  return status;
}

/* ---- the members to their owners and back ------------------------------------------------ */
/* Collective: this rank's members go to the owners of their frontier cells (cell[i]), grouped
 * by owner in one buffer (counted first: the largest exchange, no buffer grown item by item);
 * *in gets the members this rank owns. */
static phew_status members_to_owners(comm *c, const spread_tree *s, const double *position, const double *mass,
                                     const int64_t *order, int64_t n, const int64_t *cell, inbox *in)
{
  int *count = phew_calloc((size_t)c->size, sizeof *count);
  int64_t *at = phew_calloc((size_t)c->size, sizeof *at);
  spread_member *items = phew_malloc((size_t)n, sizeof *items);
  if (comm_max(c, !count || !at || !items || n > INT_MAX)) {
    free(count);
    free(at);
    free(items);
    return PHEW_ERROR_MEMORY;
  }
  for (int64_t i = 0; i < n; ++i)
    count[s->owner[cell[i]]]++;
  for (int r = 1; r < c->size; ++r)
    at[r] = at[r - 1] + count[r - 1];
  for (int64_t i = 0; i < n; ++i) {
    const spread_member m = {{position[3 * i], position[3 * i + 1], position[3 * i + 2]},
                             mass ? mass[i] : 1.0,
                             order[i],
                             cell[i],
                             i,
                             c->rank,
                             0};
    items[at[s->owner[cell[i]]]++] = m;
  }
  const phew_status status = comm_exchange_grouped(c, items, count, sizeof *items, in);
  free(count);
  free(at);
  free(items);
  return status;
}

static spread_member member_at(const inbox *in, int64_t k)
{
  spread_member m;
  memcpy(&m, in->items + (size_t)k * sizeof m, sizeof m);
  return m;
}

/* The members received, by frontier cell and canonical order in each (a radix sort by order,
 * then a stable counting sort by cell). PHEW_ERROR_ARGUMENT if an order comes twice. */
static phew_status sort_members(const spread_tree *s, const inbox *in, int64_t n_total, int n_threads,
                                spread_member **out)
{
  const int64_t n = in->n, n_cells = s->end_own - s->first_own;
  uint64_t *key = phew_malloc((size_t)n, sizeof *key);
  int32_t *at = phew_malloc((size_t)n, sizeof *at);
  int64_t *start = phew_calloc((size_t)n_cells + 1, sizeof *start);
  *out = phew_malloc((size_t)n, sizeof **out);
  phew_status status = key && at && start && *out ? PHEW_OK : PHEW_ERROR_MEMORY;
  for (int64_t k = 0; status == PHEW_OK && k < n; ++k) {
    const spread_member m = member_at(in, k);
    key[k] = (uint64_t)m.order;
    at[k] = (int32_t)k;
    if (m.cell < s->first_own || m.cell >= s->end_own)
      status = PHEW_ERROR_MPI; /* not this rank's cell: cannot happen */
    else
      start[m.cell - s->first_own + 1]++;
  }
  if (status == PHEW_OK && radix_sort(key, at, n, 0, radix_index_bits(n_total), n_threads) != 0)
    status = PHEW_ERROR_MEMORY;
  for (int64_t k = 1; status == PHEW_OK && k < n; ++k)
    if (key[k] == key[k - 1])
      status = PHEW_ERROR_ARGUMENT;
  for (int64_t f = 0; status == PHEW_OK && f < n_cells; ++f)
    start[f + 1] += start[f];
  for (int64_t k = 0; status == PHEW_OK && k < n; ++k) {
    const spread_member m = member_at(in, at[k]);
    (*out)[start[m.cell - s->first_own]++] = m;
  }
  free(key);
  free(at);
  free(start);
  return status;
}

typedef struct phi_back {
  int64_t index;
  double phi;
} phi_back;

/* Collective: phi_own[k] (of own[k]) to where that member was passed. */
static phew_status phi_to_origins(comm *c, const spread_member *own, int64_t n_own, const double *phi_own, double *phi,
                                  int64_t n)
{
  outbox o;
  outbox_init(&o, c, sizeof(phi_back));
  for (int64_t k = 0; k < n_own; ++k) {
    const phi_back b = {own[k].origin_index, phi_own[k]};
    outbox_put(&o, own[k].origin_rank, &b);
  }
  inbox in;
  phew_status status = outbox_send(&o, c, &in);
  outbox_free(&o);
  if (status == PHEW_OK && in.n != n)
    status = PHEW_ERROR_MPI; /* cannot happen */
  for (int64_t k = 0; status == PHEW_OK && k < in.n; ++k) {
    phi_back b;
    memcpy(&b, in.items + (size_t)k * sizeof b, sizeof b);
    phi[b.index] = b.phi;
  }
  inbox_free(&in);
  return (phew_status)comm_max(c, status);
}

/* ---- the owners' subtrees and walks ------------------------------------------------------ */
/* The subtrees of this rank's frontier cells from their members (own, sorted), with moments. */
static phew_status build_subtrees(spread_tree *s, const spread_member *own, int64_t n_own)
{
  octree *t = &s->t;
  const int64_t n_cells = s->end_own - s->first_own;
  s->sub_first = phew_malloc((size_t)n_cells, sizeof *s->sub_first);
  s->sub_end = phew_malloc((size_t)n_cells, sizeof *s->sub_end);
  split_scratch w = {NULL, NULL, NULL};
  if (!s->sub_first || !s->sub_end || octree_reserve_slots(t, n_own) != 0 || split_scratch_alloc(&w, n_own) != 0) {
    split_scratch_free(&w);
    return PHEW_ERROR_MEMORY;
  }
  for (int64_t k = 0; k < n_own; ++k) {
    t->index[k] = k;
    t->x[k] = own[k].position[0];
    t->y[k] = own[k].position[1];
    t->z[k] = own[k].position[2];
    t->m[k] = own[k].mass;
  }
  t->n_slots = n_own;
  phew_status status = PHEW_OK;
  for (int64_t f = s->first_own, at = 0; status == PHEW_OK && f < s->end_own; ++f) {
    const int64_t v = s->frontier[f], k = f - s->first_own;
    t->node[v].begin = at;
    t->node[v].end = at += s->count[v];
    t->node[v].child = -1;
    if (at > n_own || own[at - 1].cell != f || (f + 1 == s->end_own && at != n_own))
      status = PHEW_ERROR_MPI; /* the counts and the members disagree: cannot happen */
    s->sub_first[k] = t->n_nodes;
    if (status == PHEW_OK)
      status = octree_split_below(t, v, &w);
    s->sub_end[k] = t->n_nodes;
    for (int64_t u = s->sub_end[k] - 1; status == PHEW_OK && u >= s->sub_first[k]; --u)
      octree_cell_moments(t, u);
    if (status == PHEW_OK)
      octree_cell_moments(t, v);
  }
  split_scratch_free(&w);
  return status;
}

/* phi_own[k] of own[k]: the groups of this rank's subtrees walked. */
static phew_status own_potentials(const spread_tree *s, const potential_params *p, double *phi_own)
{
  int64_t *group = phew_malloc((size_t)s->t.n_nodes, sizeof *group);
  if (!group)
    return PHEW_ERROR_MEMORY;
  int64_t n_groups = 0;
  for (int64_t f = s->first_own; f < s->end_own; ++f) {
    const int64_t k = f - s->first_own;
    n_groups += octree_find_groups(&s->t, s->frontier[f], s->sub_first[k], s->sub_end[k], OCT_GROUP, group + n_groups);
  }
  const phew_status status = octree_walk_groups(&s->t, group, n_groups, p, phi_own);
  free(group);
  return status;
}

/* Collective: the octree steps of spread.h, in order, each agreed on every rank. */
static phew_status spread_tree_sums(comm *c, const double *position, const double *mass, const int64_t *order,
                                    int64_t n, int64_t n_total, const potential_params *p, double *phi,
                                    spread_stats *stats)
{
  spread_tree s;
  memset(&s, 0, sizeof s);
  spread_member *own = NULL;
  double *phi_own = NULL;
  inbox in;
  memset(&in, 0, sizeof in);
  int64_t *cell = phew_malloc((size_t)n, sizeof *cell);
  phew_status status = comm_max(c, !cell) ? PHEW_ERROR_MEMORY : PHEW_OK;
  if (status == PHEW_OK)
    status = spread_top_build(&s, c, position, n, n_total, cell);
  if (status == PHEW_OK)
    status = members_to_owners(c, &s, position, mass, order, n, cell, &in);
  free(cell);
  if (status == PHEW_OK)
    status = (phew_status)comm_max(c, sort_members(&s, &in, n_total, p->n_threads, &own));
  const int64_t n_own = in.n;
  inbox_free(&in);
  if (status == PHEW_OK)
    status = (phew_status)comm_max(c, build_subtrees(&s, own, n_own));
  if (status == PHEW_OK)
    status = spread_top_moments(&s, c);
  if (status == PHEW_OK)
    status = spread_let_build(&s, c, p->theta * p->theta);
  if (status == PHEW_OK) {
    phi_own = phew_malloc((size_t)n_own, sizeof *phi_own);
    status = (phew_status)comm_max(c, phi_own ? own_potentials(&s, p, phi_own) : PHEW_ERROR_MEMORY);
  }
  if (status == PHEW_OK)
    status = phi_to_origins(c, own, n_own, phi_own, phi, n);
  if (stats) {
    stats->members_held = n_own;
    stats->members_imported = s.imported_members;
    stats->cells_imported = s.imported_cells;
  }
  free(phi_own);
  free(own);
  spread_tree_free(&s);
  return status;
}

phew_status potential_spread_counted(comm *c, const double *position, const double *mass, const int64_t *order,
                                     int64_t n, const potential_params *p, double *phi, spread_stats *stats)
{
  if (stats)
    memset(stats, 0, sizeof *stats);
  const int64_t n_total = comm_sum(c, n > 0 ? n : 0);
  const phew_status status = check_input(c, position, order, n, n_total);
  if (status != PHEW_OK || n_total == 0)
    return status;
  if (n_total <= p->direct_max) {
    if (stats)
      stats->members_held = stats->members_imported = n_total;
    return spread_direct(c, position, mass, order, n, p, phi);
  }
  return spread_tree_sums(c, position, mass, order, n, n_total, p, phi, stats);
}

phew_status potential_spread(comm *c, const double *position, const double *mass, const int64_t *order, int64_t n,
                             const potential_params *p, double *phi)
{
  return potential_spread_counted(c, position, mass, order, n, p, phi, NULL);
}
