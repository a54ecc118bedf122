/* Spherical-overdensity masses from all particles about each structure's centre (physics.h).
 *
 * Rule (docs/physics.md): sort every particle of the snapshot by its distance r from the
 * centre (nearest image; equal distances by id) and walk outward over the distinct distances;
 * M(<= r), the exact sum of the masses at distance <= r rounded once (overdensity_walk.c), counts
 * all particles at distance <= r. The sphere ends at the first distance r > 0
 * where M(<= r) < Delta rho (4/3) pi r^3 (comoving: Delta rho in comoving units); the particles
 * at that distance and beyond are outside. M_Delta is the mass inside and
 * R_Delta = (3 M_Delta / (4 pi Delta rho))^(1/3), so that M_Delta is exactly the mass of a
 * sphere of radius R_Delta at the mean density Delta rho.
 *
 * Distributed: every rank finds its own particles within a search radius of every centre and
 * sends them to the rank holding the structure; a structure whose walk does not end inside its
 * search radius asks again with twice the radius (up to half the smallest periodic box side).
 * The rows of spread structures are walked by every rank together (overdensity_spread.c). */
#include "overdensity.h"
#include "radix_sort.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The four masses and radii of a row from its sorted entries; 0 if a walk did not end. */
static int fill_row(const so_entry *e, int64_t n, const physics_units *u, phew_structure *row)
{
  double density[SO_KINDS], mass[SO_KINDS];
  int found[SO_KINDS];
  exact_sum none;
  exact_sum_clear(&none);
  so_densities(u, density);
  so_walk(e, n, &none, density, found, mass);
  for (int k = 0; k < SO_KINDS; ++k)
    if (!found[k])
      return 0;
  so_fill_row(u, mass, row);
  return 1;
}

/* c200c from Vmax / V200c, and the Bullock spin J / (sqrt(2) Mvir Vvir Rvir), radii proper. */
static void derived_columns(const physics_units *u, phew_structure *row)
{
  const double v200 = sqrt(u->G * row->m200c / (u->a * row->r200c));
  row->c200c = nfw_concentration(row->vmax / v200);
  const double rvir = u->a * row->rvir, vvir = sqrt(u->G * row->mvir / rvir);
  const double *j = row->angular_momentum;
  row->spin_bullock = sqrt((j[0] * j[0] + j[1] * j[1]) + j[2] * j[2]) / (sqrt(2.0) * row->mvir * vvir * rvir);
}

/* Entries grown one at a time (this rank's own queries' entries, which need no exchange). */
typedef struct entry_list {
  int64_t n, capacity;
  so_entry *e;
} entry_list;

static int entry_list_put(entry_list *l, const so_entry *e)
{
  if (l->n == l->capacity) {
    const int64_t capacity = 2 * l->capacity + 1024;
    if (phew_grow(&l->e, (size_t)capacity, sizeof *l->e))
      return -1;
    l->capacity = capacity;
  }
  l->e[l->n++] = *e;
  return 0;
}

/* Collective: this rank's particles within each query's radius: to the query's owner (*in), or
 * kept (*mine) when that is this rank. */
static phew_status find_entries(const points_context *x, ball_query *ball, const particle_set *s, const so_query *q,
                                int64_t n_q, entry_list *mine, inbox *in)
{
  comm *c = x->c;
  outbox o;
  outbox_init(&o, c, sizeof(so_entry));
  phew_status status = PHEW_OK;
  for (int64_t k = 0; k < n_q && status == PHEW_OK && s->n_own > 0; ++k) {
    status = ball_query_run(ball, q[k].centre, q[k].radius * q[k].radius);
    for (int i = 0; status == PHEW_OK && i < ball->n; ++i) {
      const int32_t p = ball->index[i];
      so_entry e = {(uint64_t)k, 0, s->mass ? s->mass[p] : 1.0};
      memcpy(&e.r2_bits, &ball->d2[i], sizeof e.r2_bits);
      if (q[k].owner == c->rank)
        status = entry_list_put(mine, &e) == 0 ? PHEW_OK : PHEW_ERROR_MEMORY;
      else
        status = outbox_put(&o, q[k].owner, &e);
    }
  }
  if (status != PHEW_OK)
    o.failed = 1;
  status = outbox_send(&o, c, in);
  outbox_free(&o);
  return status;
}

/* The entry k of both sources (this rank's own, then the received). */
static const so_entry *entry_at(const entry_list *mine, const inbox *in, int64_t k)
{
  return k < mine->n ? &mine->e[k] : (const so_entry *)in->items + (k - mine->n);
}

/* The entries of both sources grouped by query (start[k] .. start[k + 1] is query k's), each
 * group in distance order: two stable radix sorts of their indices, by distance, then by query
 * (the order within a shell of equal distances does not matter: its masses are summed exactly). */
static so_entry *group_entries(const entry_list *mine, const inbox *in, int64_t n_q, int64_t *start, int n_threads)
{
  const int64_t n = mine->n + in->n;
  so_entry *out = phew_malloc((size_t)n + 1, sizeof *out);
  uint64_t *key = phew_malloc((size_t)n + 1, sizeof *key);
  int32_t *index = phew_malloc((size_t)n + 1, sizeof *index);
  int failed = !out || !key || !index || n > INT32_MAX;
  for (int64_t k = 0; !failed && k < n; ++k) {
    key[k] = entry_at(mine, in, k)->r2_bits;
    index[k] = (int32_t)k;
  }
  failed = failed || radix_sort(key, index, n, 0, 64, n_threads) != 0;
  for (int64_t k = 0; !failed && k < n; ++k)
    key[k] = entry_at(mine, in, index[k])->query;
  failed = failed || radix_sort(key, index, n, 0, 64, n_threads) != 0;
  if (!failed) {
    memset(start, 0, ((size_t)n_q + 1) * sizeof *start);
    for (int64_t k = 0; k < n; ++k) {
      out[k] = *entry_at(mine, in, index[k]);
      ++start[out[k].query + 1];
    }
    for (int64_t q = 0; q < n_q; ++q)
      start[q + 1] += start[q];
  }
  free(key);
  free(index);
  if (failed) {
    free(out);
    return NULL;
  }
  return out;
}

/* The largest search radius: half the smallest periodic side, else the domain's diagonal. */
static double largest_radius(const points_context *x)
{
  double limit = INFINITY, diagonal = 0.0;
  for (int d = 0; d < 3; ++d) {
    if (x->box.periodic[d])
      limit = fmin(limit, 0.5 * x->box.size[d]);
    diagonal += (x->hi[d] - x->lo[d]) * (x->hi[d] - x->lo[d]);
  }
  return isfinite(limit) ? limit : 2.0 * sqrt(diagonal);
}

/* Collective: the pending rows, each on the rank holding it. */
static phew_status rounds(const points_context *x, const particle_set *s, const physics_units *u, phew_structure *rows,
                          int64_t n_rows, double *radius, unsigned char *pending, ball_query *ball, double limit)
{
  comm *c = x->c;
  phew_status status = PHEW_OK;
  so_query *mine = phew_malloc((size_t)n_rows + 1, sizeof *mine);
  if (comm_max(c, !mine)) {
    free(mine);
    return PHEW_ERROR_MEMORY;
  }
  for (;;) {
    int64_t n_mine = 0; /* a batch at a time: a substructure's sphere holds its host, and the
                           entries of all at once would outweigh the particles */
    for (int64_t r = 0; r < n_rows && n_mine < SO_BATCH; ++r)
      if (pending[r]) {
        so_query q = {r, c->rank, 0, {rows[r].centre[0], rows[r].centre[1], rows[r].centre[2]}, radius[r]};
        mine[n_mine++] = q;
      }
    so_query *all = NULL;
    int64_t n_all = 0;
    status = comm_gather_all(c, mine, n_mine, sizeof *mine, (void **)&all, &n_all, NULL);
    if (status != PHEW_OK || n_all == 0) {
      free(all);
      break;
    }
    inbox in;
    entry_list local = {0, 0, NULL};
    int64_t *start = phew_malloc((size_t)n_all + 1, sizeof *start);
    status = find_entries(x, ball, s, all, n_all, &local, &in);
    so_entry *e = status == PHEW_OK && start ? group_entries(&local, &in, n_all, start, x->n_threads) : NULL;
    status = comm_agree(c, status == PHEW_OK && !e ? PHEW_ERROR_MEMORY : status, x->result);
    if (status == PHEW_OK) {
      for (int64_t k = 0; k < n_all; ++k)
        if (all[k].owner == c->rank && fill_row(e + start[k], start[k + 1] - start[k], u, &rows[all[k].row]))
          pending[all[k].row] = 0;
      for (int64_t k = 0; k < n_mine; ++k) { /* not ended inside the radius: a wider one, if any */
        const int64_t r = mine[k].row;
        if (pending[r]) {
          if (radius[r] >= limit)
            pending[r] = 0;
          else
            radius[r] = fmin(2.0 * radius[r], limit);
        }
      }
    }
    inbox_free(&in);
    free(local.e);
    free(start);
    free(e);
    free(all);
    if (status != PHEW_OK)
      break;
  }
  free(mine);
  return status;
}

typedef struct id_row {
  int64_t id, row;
} id_row;

static int by_structure_id(const void *pa, const void *pb)
{
  const id_row *a = pa, *b = pb;
  return a->id < b->id ? -1 : (a->id > b->id);
}

/* Per row, the bound mass of its top-level structure (a rank holds every structure of its
 * top-level ones). 0, or -1 without memory. */
static int top_masses(const phew_structure *rows, int64_t n_rows, double *top)
{
  id_row *map = phew_malloc((size_t)n_rows + 1, sizeof *map);
  if (!map)
    return -1;
  for (int64_t r = 0; r < n_rows; ++r)
    map[r] = (id_row){rows[r].id, r};
  qsort(map, (size_t)n_rows, sizeof *map, by_structure_id);
  for (int64_t r = 0; r < n_rows; ++r) {
    int64_t k = r;
    for (int64_t step = 0; rows[k].parent_id >= 0 && step < n_rows; ++step) {
      const id_row key = {rows[k].parent_id, 0};
      const id_row *found = bsearch(&key, map, (size_t)n_rows, sizeof *map, by_structure_id);
      if (!found)
        break;
      k = found->row;
    }
    top[r] = rows[k].bound_mass_inclusive;
  }
  free(map);
  return 0;
}

/* Collective: the one-rank rows, then those of spread structures (on any rank), by every rank. */
static phew_status both_paths(const points_context *x, const particle_set *s, const physics_units *u,
                              phew_structure *rows, int64_t n_rows, double *radius, unsigned char *pending,
                              const unsigned char *spread, const kd_tree *tree)
{
  const double limit = largest_radius(x);
  ball_query ball;
  phew_status status = ball_query_init(&ball, tree);
  if (comm_max(x->c, status != PHEW_OK)) {
    ball_query_free(&ball);
    return PHEW_ERROR_MEMORY;
  }
  status = rounds(x, s, u, rows, n_rows, radius, pending, &ball, limit);
  if (status == PHEW_OK)
    status = overdensity_spread(x, s, &ball, u, rows, n_rows, spread, radius, limit);
  ball_query_free(&ball);
  return status;
}

/* Per row, whether to walk it (a centre and a bound mass), and whether its structure is spread
 * (then pending stays 0: overdensity_spread takes it). */
static void row_paths(const phew_structure *rows, int64_t n_rows, const structure_tree *t, const int32_t *root_owner,
                      unsigned char *pending, unsigned char *spread)
{
  for (int64_t r = 0; r < n_rows; ++r) {
    const int walk = rows[r].centre_id >= 0 && rows[r].bound_mass_inclusive > 0.0;
    spread[r] = walk && root_owner[t->root[rows[r].id]] == MEMBERS_SPREAD;
    pending[r] = walk && !spread[r];
  }
}

phew_status overdensity_masses(const points_context *x, const particle_set *s, const physics_units *u,
                               const structure_tree *t, const int32_t *root_owner, phew_structure *rows, int64_t n_rows)
{
  comm *c = x->c;
  if (!u->comoving)
    return PHEW_OK; /* no critical density: the columns stay NaN */
  double *radius = phew_malloc((size_t)n_rows + 1, sizeof *radius);
  double *top_mass = phew_malloc((size_t)n_rows + 1, sizeof *top_mass);
  unsigned char *pending = phew_calloc((size_t)n_rows + 1, 1), *spread = phew_calloc((size_t)n_rows + 1, 1);
  kd_tree *tree = NULL;
  phew_status status = !radius || !top_mass || !pending || !spread || top_masses(rows, n_rows, top_mass) != 0
                           ? PHEW_ERROR_MEMORY
                           : PHEW_OK;
  if (status == PHEW_OK)
    status = kd_tree_build(&tree, s->n_own, s->position, s->id, &x->box, x->n_threads, x->result);
  status = comm_agree(c, status, x->result);
  if (status == PHEW_OK) {
    const double smallest = fmin(fmin(200.0, 200.0 * u->omega_m_a), u->delta_vir) * u->rho_crit;
    row_paths(rows, n_rows, t, root_owner, pending, spread);
    for (int64_t r = 0; r < n_rows; ++r) {
      /* the sphere of a substructure takes in its host: start from the top-level's mass */
      const double mass = fmax(rows[r].bound_mass_inclusive, top_mass[r]);
      radius[r] = 1.5 * cbrt(3.0 * mass / (4.0 * M_PI * smallest));
    }
    status = both_paths(x, s, u, rows, n_rows, radius, pending, spread, tree);
    status = comm_agree(c,
                        status == PHEW_OK ? PHEW_OK
                                          : phew_fail(x->result, status,
                                                      "out of memory for the "
                                                      "spherical-overdensity masses"),
                        x->result);
  }
  for (int64_t r = 0; status == PHEW_OK && r < n_rows; ++r)
    if (rows[r].centre_id >= 0)
      derived_columns(u, &rows[r]);
  kd_tree_free(tree);
  free(radius);
  free(top_mass);
  free(pending);
  free(spread);
  return status;
}
