/* Spherical-overdensity masses of the rows of spread structures (overdensity.h), by every rank
 * together, so that no rank receives a sphere whole. Every rank's queries reach every rank; each
 * rank finds its own particles within the search radii; the entries are sorted over the ranks
 * by (query, distance), equal keys on one rank so that a shell never splits; each rank walks
 * its share after the exact mass of the shares before it, and the first rank whose walk ends
 * gives each answer. Every rank keeps the same queries and radii: a walk that does not end
 * widens its radius the same way everywhere. */
#include "overdensity.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* One rank's walk of one query. */
typedef struct so_answer {
  double mass[SO_KINDS];
  int32_t found[SO_KINDS];
} so_answer;

/* Collective: every rank's queries (its rows with spread[r], with their owner) on every rank,
 * in rank order. */
static phew_status share_spread_queries(comm *c, const phew_structure *rows, int64_t n_rows,
                                        const unsigned char *spread, const double *radius, so_query **q, int64_t *n)
{
  *q = NULL;
  *n = 0;
  so_query *mine = phew_malloc((size_t)n_rows + 1, sizeof *mine);
  if (comm_max(c, !mine)) {
    free(mine);
    return PHEW_ERROR_MEMORY;
  }
  int64_t n_mine = 0;
  for (int64_t r = 0; r < n_rows; ++r)
    if (spread[r])
      mine[n_mine++] = (so_query){r, c->rank, 0, {rows[r].centre[0], rows[r].centre[1], rows[r].centre[2]}, radius[r]};
  const phew_status status = comm_gather_all(c, mine, n_mine, sizeof *mine, (void **)q, n, NULL);
  free(mine);
  return status;
}

/* This rank's particles within the radius of each query of the batch (entry query: b). */
static phew_status own_entries(const particle_set *s, ball_query *ball, const so_query *q, const int64_t *batch,
                               int n_b, so_entry **out, int64_t *n_out)
{
  int64_t n = 0, capacity = 0;
  so_entry *e = NULL;
  phew_status status = PHEW_OK;
  for (int b = 0; b < n_b && status == PHEW_OK && s->n_own > 0; ++b) {
    const so_query *k = &q[batch[b]];
    status = ball_query_run(ball, k->centre, k->radius * k->radius);
    if (status == PHEW_OK && n + ball->n > capacity) {
      capacity = 2 * (n + ball->n) + 1024;
      status = phew_grow(&e, (size_t)capacity, sizeof *e) ? PHEW_ERROR_MEMORY : PHEW_OK;
    }
    for (int i = 0; status == PHEW_OK && i < ball->n; ++i) {
      const int32_t p = ball->index[i];
      e[n] = (so_entry){(uint64_t)b, 0, s->mass ? s->mass[p] : 1.0};
      memcpy(&e[n++].r2_bits, &ball->d2[i], sizeof e->r2_bits);
    }
  }
  *out = e;
  *n_out = n;
  return status;
}

/* Collective: this rank's walks of its share e[0 .. n) (in (query, distance) order), each after
 * the exact mass of the lower ranks' shares of its query; out[r * SO_BATCH + b]: rank r's. */
static phew_status walk_shares(comm *c, const so_entry *e, int64_t n, int n_b, const double density[SO_KINDS],
                               so_answer *out)
{
  exact_sum own[SO_BATCH];
  int64_t start[SO_BATCH + 1], k = 0;
  for (int b = 0; b < SO_BATCH; ++b) {
    start[b] = k;
    exact_sum_clear(&own[b]);
    while (k < n && e[k].query == (uint64_t)b)
      exact_sum_add(&own[b], e[k++].mass);
  }
  start[SO_BATCH] = k;
  exact_sum before[SO_BATCH];
  const phew_status status = reduce_exact_before(c, own, SO_BATCH, before);
  if (status != PHEW_OK)
    return status;
  so_answer mine[SO_BATCH];
  memset(mine, 0, sizeof mine);
  for (int b = 0; b < n_b; ++b) {
    int found[SO_KINDS];
    so_walk(e + start[b], start[b + 1] - start[b], &before[b], density, found, mine[b].mass);
    for (int j = 0; j < SO_KINDS; ++j)
      mine[b].found[j] = found[j];
  }
  comm_allgather(c, mine, sizeof mine, out);
  return PHEW_OK;
}

/* The answers of the batch (the same on every rank): a query whose four walks ended is done
 * (its row filled on its owner); another one widens its radius, or gives up at the limit. */
static void settle(const comm *c, const so_answer *all, so_query *q, const int64_t *batch, int n_b,
                   const physics_units *u, phew_structure *rows, unsigned char *left, double limit)
{
  for (int b = 0; b < n_b; ++b) {
    double mass[SO_KINDS];
    int done = 1;
    for (int j = 0; j < SO_KINDS; ++j) {
      int r = 0; /* the first rank whose walk ended */
      while (r < c->size && !all[r * SO_BATCH + b].found[j])
        ++r;
      done = done && r < c->size;
      mass[j] = r < c->size ? all[r * SO_BATCH + b].mass[j] : 0.0;
    }
    so_query *k = &q[batch[b]];
    if (done && c->rank == k->owner)
      so_fill_row(u, mass, &rows[k->row]);
    if (done || k->radius >= limit)
      left[batch[b]] = 0;
    else
      k->radius = fmin(2.0 * k->radius, limit);
  }
}

/* Collective: one batch of queries, from the entries to the answers. */
static phew_status one_round(const points_context *x, const particle_set *s, ball_query *ball, const physics_units *u,
                             so_query *q, const int64_t *batch, int n_b, phew_structure *rows, unsigned char *left,
                             double limit)
{
  comm *c = x->c;
  so_entry *mine = NULL;
  int64_t n_mine = 0;
  const phew_status found = own_entries(s, ball, q, batch, n_b, &mine, &n_mine);
  so_answer *all = phew_malloc((size_t)c->size * SO_BATCH, sizeof *all);
  if (comm_max(c, found != PHEW_OK || !all)) {
    free(mine);
    free(all);
    return PHEW_ERROR_MEMORY;
  }
  inbox in;
  phew_status status = comm_sort(c, mine, n_mine, sizeof *mine, &in);
  free(mine);
  double density[SO_KINDS];
  so_densities(u, density);
  if (status == PHEW_OK)
    status = walk_shares(c, (const so_entry *)in.items, in.n, n_b, density, all);
  if (status == PHEW_OK)
    settle(c, all, q, batch, n_b, u, rows, left, limit);
  inbox_free(&in);
  free(all);
  return status;
}

phew_status overdensity_spread(const points_context *x, const particle_set *s, ball_query *ball, const physics_units *u,
                               phew_structure *rows, int64_t n_rows, const unsigned char *spread, const double *radius,
                               double limit)
{
  comm *c = x->c;
  so_query *q = NULL;
  int64_t n_q = 0;
  phew_status status = share_spread_queries(c, rows, n_rows, spread, radius, &q, &n_q);
  unsigned char *left = status == PHEW_OK ? phew_malloc((size_t)n_q + 1, 1) : NULL;
  if (status == PHEW_OK && comm_max(c, !left))
    status = PHEW_ERROR_MEMORY;
  if (status == PHEW_OK)
    memset(left, 1, (size_t)n_q);
  while (status == PHEW_OK) {
    int64_t batch[SO_BATCH]; /* a batch at a time, as the one-rank path: the entries stay few */
    int n_b = 0;
    for (int64_t k = 0; k < n_q && n_b < SO_BATCH; ++k)
      if (left[k])
        batch[n_b++] = k;
    if (n_b == 0)
      break;
    status = one_round(x, s, ball, u, q, batch, n_b, rows, left, limit);
  }
  free(q);
  free(left);
  return status;
}
