/* Friends-of-Friends (Davis et al. 1985) with a union-find, threads and MPI as Willis et al.
 * 2020 do it (sections 3 and 4).
 *
 * On a rank: a kd-tree of the own particles and a padding one linking length wide; each leaf
 * of the tree gathers the leaves within the linking length of its box, each of its particles
 * scans them, and every pair found (each once: the partner in a later tree slot) joins its
 * two sets. The leaves are cut into ranges, one task each, and the tasks join concurrently
 * (union_find.h). Sets do not depend on the order of the joins.
 *
 * Across ranks: every pair of friends owned by two ranks is found on both (each holds the
 * other particle as padding). A rank's set that holds own particles gets the smallest
 * global id of those as its key; for each padding particle in it, the owner learns "key k
 * reaches your particle j" and answers with the key of j's own set: an edge between two
 * keys. Every rank then has all the edges (they are few: one per pair of sets that touch
 * across a face) and joins the keys with them; a group's key is the smallest of its keys,
 * which is the smallest global id in the group. Nothing but those edges is gathered. */
#include "halos.h"
#include "union_find.h"
#include "../particles/id_map.h"
#include "../particles/kd_tree.h"
#include "../particles/threads.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { LINK_LEAVES_PER_TASK = 32 };

int union_find_init(union_find *u, int64_t n)
{
  u->n = n;
  u->parent = malloc(((size_t)n + 1) * sizeof *u->parent);
  if (!u->parent)
    return -1;
  for (int64_t i = 0; i < n; ++i)
    atomic_init(&u->parent[i], (int32_t)i);
  return 0;
}

void union_find_free(union_find *u)
{
  free(u->parent);
  memset(u, 0, sizeof *u);
}

/* ---- linking on a rank ------------------------------------------------------------------ */

typedef struct link_job {
  const kd_tree *t;
  union_find *sets; /* by tree slot */
  double r2;        /* the linking length, squared */
  double sure2;     /* below it, rounding cannot put a pair beyond r2 */
  kd_candidates *candidates; /* per thread */
  int *no_memory;            /* per task */
} link_job;

/* particle_distance2 from a (a point of the gathered box) to tree slot b of candidate leaf k. */
static inline double candidate_distance2(const kd_tree *t, const kd_candidates *c, int k, const double *a, int32_t b)
{
  if (!c->uniform[k]) {
    double p[3];
    kd_position(t, b, p);
    return particle_distance2(&t->box, a, p);
  }
  const double dx = (a[0] - t->x[b]) + c->shift[0][k], dy = (a[1] - t->y[b]) + c->shift[1][k],
               dz = (a[2] - t->z[b]) + c->shift[2][k];
  return (dx * dx + dy * dy) + dz * dz;
}

/* Every particle of candidate leaf k within sure2 of every point of the box [lo, hi]: the
 * largest separation of the two boxes (uniform leaves only). */
static int all_within(const kd_candidates *c, int k, const double *lo, const double *hi, double sure2)
{
  if (!c->uniform[k])
    return 0;
  double s2 = 0.0;
  for (int d = 0; d < 3; ++d) {
    const double below = (lo[d] - c->hi[d][k]) + c->shift[d][k], above = (hi[d] - c->lo[d][k]) + c->shift[d][k];
    const double m = fabs(below) > fabs(above) ? fabs(below) : fabs(above);
    s2 += m * m;
  }
  return s2 <= sure2;
}

/* Candidate leaf k is "whole": its own box is so small that all its particles are friends. */
static int whole(const kd_candidates *c, int k, double sure2)
{
  double s2 = 0.0;
  for (int d = 0; d < 3; ++d)
    s2 += (c->hi[d][k] - c->lo[d][k]) * (c->hi[d][k] - c->lo[d][k]);
  return s2 <= sure2;
}

/* The pairs of friends between leaf A (slots [begin, end)) and candidate leaf k (A itself:
 * each pair once), joined; with `first_only`, up to the first. Each particle of A skips the
 * leaf when its distance to the leaf's box exceeds the length. Returns 1 if it stopped at a
 * first pair. */
static int link_pairs_of(const link_job *job, const kd_candidates *c, int k, int64_t begin, int64_t end, int same,
                         int first_only)
{
  const kd_tree *t = job->t;
  const double r2 = job->r2;
  const int32_t b_begin = c->begin[k], b_end = c->end[k];
  const double *restrict px = t->x, *restrict py = t->y, *restrict pz = t->z;
  const double s[3] = {c->shift[0][k], c->shift[1][k], c->shift[2][k]};
  const double lo[3] = {c->lo[0][k], c->lo[1][k], c->lo[2][k]}, hi[3] = {c->hi[0][k], c->hi[1][k], c->hi[2][k]};
  for (int64_t a = begin; a < end; ++a) {
    double x[3];
    kd_position(t, a, x);
    const int32_t first = same ? (int32_t)a + 1 : b_begin;
    if (!c->uniform[k]) { /* the canonical formula */
      for (int32_t b = first; b < b_end; ++b)
        if (candidate_distance2(t, c, k, x, b) <= r2) {
          union_find_join(job->sets, (int32_t)a, b);
          if (first_only)
            return 1;
        }
      continue;
    }
    double bound = 0.0; /* as leaf_bounds in kd_tree.c: a lower bound of every distance */
    for (int d = 0; d < 3; ++d) {
      const double below = (x[d] - hi[d]) + s[d], above = (x[d] - lo[d]) + s[d];
      const double gap = (below > 0.0 ? below : 0.0) + (-above > 0.0 ? -above : 0.0);
      bound += gap * gap;
    }
    if (bound > r2)
      continue;
    for (int32_t b = first; b < b_end; ++b) {
      const double dx = (x[0] - px[b]) + s[0], dy = (x[1] - py[b]) + s[1], dz = (x[2] - pz[b]) + s[2];
      if ((dx * dx + dy * dy) + dz * dz <= r2) {
        union_find_join(job->sets, (int32_t)a, b);
        if (first_only)
          return 1;
      }
    }
  }
  return 0;
}

/* A leaf against the leaves near it (each pair of leaves once: from the one of lower slots).
 * Where both are whole one pair of friends joins them, and none is looked for once they are
 * in one set; where every pair is within the length, no distance is needed. */
static void link_leaf(const link_job *job, kd_candidates *c, int64_t begin, int64_t end)
{
  union_find *u = job->sets;
  int self = -1; /* the leaf itself among its candidates */
  for (int k = 0; k < c->n; ++k)
    self = c->begin[k] == begin ? k : self;
  const double lo_a[3] = {c->lo[0][self], c->lo[1][self], c->lo[2][self]};
  const double hi_a[3] = {c->hi[0][self], c->hi[1][self], c->hi[2][self]};
  const int whole_a = whole(c, self, job->sure2);
  if (whole_a)
    for (int64_t a = begin + 1; a < end; ++a)
      union_find_join(u, (int32_t)begin, (int32_t)a);
  for (int k = 0; k < c->n; ++k) {
    const int32_t b_begin = c->begin[k], b_end = c->end[k];
    if (b_begin < begin || (k == self && whole_a))
      continue;
    if (k != self && all_within(c, k, lo_a, hi_a, job->sure2)) { /* every pair: A and B are one set */
      const int whole_b = whole(c, k, job->sure2);
      for (int64_t a = whole_a ? begin : begin + 1; a < (whole_a ? begin + 1 : end); ++a)
        union_find_join(u, (int32_t)a, b_begin);
      for (int32_t b = whole_b ? b_begin : b_begin + 1; b < (whole_b ? b_begin + 1 : b_end); ++b)
        union_find_join(u, (int32_t)begin, b);
      continue;
    }
    const int both_whole = k != self && whole_a && whole(c, k, job->sure2);
    if (both_whole && union_find_root(u, (int32_t)begin) == union_find_root(u, b_begin))
      continue;
    if (link_pairs_of(job, c, k, begin, end, k == self, both_whole))
      continue;
  }
}

static void link_task(void *context, int thread, int64_t task)
{
  const link_job *job = context;
  const kd_tree *t = job->t;
  kd_candidates *c = &job->candidates[thread];
  const int64_t n_leaves = (int64_t)1 << t->depth;
  const int64_t first = task * LINK_LEAVES_PER_TASK;
  const int64_t last = first + LINK_LEAVES_PER_TASK < n_leaves ? first + LINK_LEAVES_PER_TASK : n_leaves;
  job->no_memory[task] = 0;
  for (int64_t leaf = first; leaf < last; ++leaf) {
    const kd_node *box = &t->node[kd_first_leaf(t) + leaf];
    int64_t begin, end;
    kd_node_range(t, kd_first_leaf(t) + leaf, t->depth, &begin, &end);
    if (begin == end)
      continue;
    if (!kd_tree_gather(t, box->lo, box->hi, job->r2, c)) {
      job->no_memory[task] = 1;
      return;
    }
    link_leaf(job, c, begin, end);
  }
}

/* Joins every pair of friends among the tree's particles (sets by tree slot). */
static phew_status link_pairs(const kd_tree *t, union_find *sets, double linking_length, int n_threads)
{
  const int64_t n_leaves = (int64_t)1 << t->depth;
  const int64_t n_tasks = (n_leaves + LINK_LEAVES_PER_TASK - 1) / LINK_LEAVES_PER_TASK;
  int threads = particle_threads(n_threads);
  threads = threads > n_tasks ? (int)n_tasks : threads;
  kd_candidates *candidates = calloc((size_t)threads, sizeof *candidates);
  int *no_memory = calloc((size_t)n_tasks + 1, sizeof *no_memory);
  int ok = candidates && no_memory;
  for (int i = 0; ok && i < threads; ++i)
    ok = kd_candidates_init(&candidates[i], t) == PHEW_OK;
  if (ok) {
    const double r2 = linking_length * linking_length;
    link_job job = {t, sets, r2, r2 * (1.0 - 1e-9), candidates, no_memory};
    particle_parallel(threads, n_tasks, link_task, &job);
    for (int64_t task = 0; task < n_tasks; ++task)
      ok = ok && !no_memory[task];
  }
  for (int i = 0; i < threads; ++i)
    if (candidates && candidates[i].stack)
      kd_candidates_free(&candidates[i]);
  free(candidates);
  free(no_memory);
  return ok ? PHEW_OK : PHEW_ERROR_MEMORY;
}

/* ---- across ranks ------------------------------------------------------------------------ */

/* "Key k (a set of the sender) reaches your particle j." */
typedef struct reach_item {
  int64_t key, particle;
} reach_item;

/* An edge between two keys (a < b). */
typedef struct key_edge {
  int64_t a, b;
} key_edge;

static int edge_order(const void *pa, const void *pb)
{
  const key_edge *a = pa, *b = pb;
  if (a->a != b->a)
    return a->a < b->a ? -1 : 1;
  return a->b < b->b ? -1 : (a->b > b->b);
}

static int key_order(const void *pa, const void *pb)
{
  const int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;
  return a < b ? -1 : (a > b);
}

/* Sorts and removes repeats; returns the count left. */
static int64_t unique_edges(key_edge *e, int64_t n)
{
  if (n == 0)
    return 0;
  qsort(e, (size_t)n, sizeof *e, edge_order);
  int64_t k = 1;
  for (int64_t i = 1; i < n; ++i)
    if (e[i].a != e[k - 1].a || e[i].b != e[k - 1].b)
      e[k++] = e[i];
  return k;
}

/* The edges between this rank's keys and the keys of the sets that its padding particles
 * belong to on their owners (own_key: per own particle; padding_key: per padding particle,
 * the key of its set here, or -1 if that set holds no own particle). */
static phew_status cross_edges(const points_context *x, const particle_set *s, const int64_t *own_key,
                               const int64_t *padding_key, key_edge **edges, int64_t *n_edges)
{
  comm *c = x->c;
  *edges = NULL;
  *n_edges = 0;
  outbox o;
  outbox_init(&o, c, sizeof(reach_item));
  for (int64_t j = s->n_own; j < s->n; ++j)
    if (padding_key[j - s->n_own] >= 0) {
      const reach_item it = {padding_key[j - s->n_own], s->id[j]};
      outbox_put(&o, s->owner[j - s->n_own], &it);
    }
  inbox in = {0};
  phew_status status = outbox_send(&o, c, &in);
  outbox_free(&o);
  id_map own;
  memset(&own, 0, sizeof own);
  key_edge *e = status == PHEW_OK ? phew_malloc((size_t)in.n + 1, sizeof *e) : NULL;
  int ok = status == PHEW_OK && e && id_map_init(&own, s->n_own) == 0;
  for (int64_t i = 0; ok && i < s->n_own; ++i) {
    int64_t ignored;
    ok = id_map_insert(&own, s->id[i], i, &ignored) == 0;
  }
  int64_t n = 0;
  for (int64_t k = 0; ok && k < in.n; ++k) {
    reach_item it;
    memcpy(&it, in.items + (size_t)k * sizeof it, sizeof it);
    const int64_t i = id_map_find(&own, it.particle);
    if (i < 0) { /* cannot happen: the owner sent it */
      ok = 0;
      status = PHEW_ERROR_MPI;
      break;
    }
    const int64_t mine = own_key[i];
    if (mine != it.key)
      e[n++] = (key_edge){mine < it.key ? mine : it.key, mine < it.key ? it.key : mine};
  }
  inbox_free(&in);
  if (own.key)
    id_map_free(&own);
  if (!ok) {
    free(e);
    return status == PHEW_OK || status == PHEW_ERROR_MEMORY ? PHEW_ERROR_MEMORY : status;
  }
  *edges = e;
  *n_edges = unique_edges(e, n);
  return PHEW_OK;
}

/* Every rank's edges on every rank, without repeats. */
static phew_status share_edges(comm *c, key_edge *mine, int64_t n_mine, key_edge **all, int64_t *n_all)
{
  *all = NULL;
  *n_all = 0;
  outbox o;
  outbox_init(&o, c, sizeof(key_edge));
  for (int64_t k = 0; k < n_mine; ++k)
    for (int r = 0; r < c->size; ++r)
      outbox_put(&o, r, &mine[k]);
  inbox in = {0};
  const phew_status status = outbox_send(&o, c, &in);
  outbox_free(&o);
  if (status != PHEW_OK) {
    inbox_free(&in);
    return status;
  }
  *all = (key_edge *)in.items; /* taken from the inbox */
  in.items = NULL;
  *n_all = unique_edges(*all, in.n);
  inbox_free(&in);
  return PHEW_OK;
}

/* The keys joined by the edges: each key that appears in an edge becomes the smallest key of
 * its component. */
static phew_status join_keys(const key_edge *edges, int64_t n_edges, int64_t *key, int64_t n_own)
{
  if (n_edges == 0)
    return PHEW_OK;
  /* the keys in increasing order: a set's root (its smallest index) is then its smallest key */
  int64_t *sorted = phew_malloc((size_t)(2 * n_edges), sizeof *sorted);
  id_map index;
  memset(&index, 0, sizeof index);
  union_find sets;
  memset(&sets, 0, sizeof sets);
  int ok = sorted != NULL;
  int64_t n = 0;
  for (int64_t k = 0; ok && k < n_edges; ++k) {
    sorted[n++] = edges[k].a;
    sorted[n++] = edges[k].b;
  }
  if (ok) {
    qsort(sorted, (size_t)n, sizeof *sorted, key_order);
    int64_t m = 0;
    for (int64_t k = 0; k < n; ++k)
      if (m == 0 || sorted[k] != sorted[m - 1])
        sorted[m++] = sorted[k];
    n = m;
    ok = n < INT32_MAX && id_map_init(&index, n) == 0 && union_find_init(&sets, n) == 0;
  }
  for (int64_t k = 0; ok && k < n; ++k) {
    int64_t ignored;
    ok = id_map_insert(&index, sorted[k], k, &ignored) == 0;
  }
  for (int64_t k = 0; ok && k < n_edges; ++k)
    union_find_join(&sets, (int32_t)id_map_find(&index, edges[k].a), (int32_t)id_map_find(&index, edges[k].b));
  for (int64_t i = 0; ok && i < n_own; ++i) {
    const int64_t k = key[i] >= 0 ? id_map_find(&index, key[i]) : -1; /* -1: a small group of this rank */
    if (k >= 0)
      key[i] = sorted[union_find_root(&sets, (int32_t)k)];
  }
  free(sorted);
  if (index.key)
    id_map_free(&index);
  union_find_free(&sets);
  return ok ? PHEW_OK : PHEW_ERROR_MEMORY;
}

/* ---- the whole ----------------------------------------------------------------------------- */

phew_status fof_find(const points_context *x, const subvolume *parts, particle_set *s, double linking_length,
                     int64_t min_members, int64_t *key)
{
  comm *c = x->c;
  uint8_t *sent = phew_malloc((size_t)s->n_own + 1, sizeof *sent); /* own particles other ranks hold */
  phew_status status = comm_max(c, !sent) ? comm_agree(c, phew_fail(x->result, PHEW_ERROR_MEMORY,
                                                                    "Friends-of-Friends: out of memory"),
                                                       x->result)
                                          : padding_width(x, parts, s, linking_length, sent);
  if (status != PHEW_OK) {
    free(sent);
    return status;
  }
  const int64_t n = s->n, n_own = s->n_own;
  kd_tree *tree = NULL;
  status = comm_agree(c, kd_tree_build(&tree, n, s->position, s->id, &x->box, x->n_threads, x->result), x->result);
  if (status != PHEW_OK) {
    free(sent);
    return status;
  }
  union_find sets;
  memset(&sets, 0, sizeof sets);
  int64_t *smallest = phew_malloc((size_t)n + 1, sizeof *smallest); /* by root slot: smallest own id */
  int64_t *size = phew_malloc((size_t)n + 1, sizeof *size); /* by root slot: own particles, -1: has padding */
  int64_t *padding_key = phew_malloc((size_t)(n - n_own) + 1, sizeof *padding_key);
  int ok = smallest && size && padding_key && union_find_init(&sets, n) == 0;
  if (ok && n > 0)
    ok = link_pairs(tree, &sets, linking_length, x->n_threads) == PHEW_OK;
  if (ok) {
    for (int64_t t = 0; t < n; ++t) {
      smallest[t] = INT64_MAX;
      size[t] = 0;
    }
    for (int64_t t = 0; t < n; ++t) {
      const int32_t i = kd_tree_index(tree, t);
      const int32_t root = union_find_root(&sets, (int32_t)t);
      if (i < n_own && s->id[i] < smallest[root])
        smallest[root] = s->id[i];
      if (i >= n_own || sent[i])
        size[root] = -1;
      else if (size[root] >= 0)
        size[root]++;
    }
    /* a set that no other rank sees (no padding in it, none of it sent) is a whole group: too
     * small, it is no group at all */
    for (int64_t t = 0; t < n; ++t) {
      const int32_t i = kd_tree_index(tree, t);
      const int32_t root = union_find_root(&sets, (int32_t)t);
      const int64_t k = smallest[root];
      if (i < n_own)
        key[i] = size[root] >= 0 && size[root] < min_members ? -1 : k;
      else
        padding_key[i - n_own] = k == INT64_MAX ? -1 : k;
    }
  }
  kd_tree_free(tree);
  union_find_free(&sets);
  free(smallest);
  free(size);
  free(sent);
  status = comm_agree(c, ok ? PHEW_OK : phew_fail(x->result, PHEW_ERROR_MEMORY, "Friends-of-Friends: out of memory"),
                      x->result);
  if (status != PHEW_OK || c->size == 1) {
    free(padding_key);
    return status;
  }
  key_edge *mine = NULL, *all = NULL;
  int64_t n_mine = 0, n_all = 0;
  status = cross_edges(x, s, key, padding_key, &mine, &n_mine);
  free(padding_key);
  status = comm_agree(c, status == PHEW_OK ? PHEW_OK
                                           : phew_fail(x->result, status, "Friends-of-Friends: the groups across ranks failed"),
                      x->result);
  if (status == PHEW_OK)
    status = share_edges(c, mine, n_mine, &all, &n_all);
  if (status == PHEW_OK)
    status = join_keys(all, n_all, key, n_own);
  free(mine);
  free(all);
  return comm_agree(c, status == PHEW_OK ? PHEW_OK
                                         : phew_fail(x->result, PHEW_ERROR_MEMORY, "Friends-of-Friends: out of memory"),
                    x->result);
}
