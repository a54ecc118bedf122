/* Friends-of-Friends (Davis et al. 1985) with a union-find, threads and MPI as Willis et al.
 * 2020 do it (sections 3 and 4).
 *
 * On a rank: the own particles and a padding one linking length wide, linked on a grid of
 * cells by several threads at once (fof_cells.c). Sets do not depend on the order of the
 * joins.
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
#include "id_map.h"
#include "threads.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

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
 * the key of its set here, or -1 if that set holds no own particle; sent: per own particle,
 * whether other ranks hold it, the only ones they can name). */
static phew_status cross_edges(const points_context *x, const particle_set *s, const int64_t *own_key,
                               const int64_t *padding_key, const uint8_t *sent, key_edge **edges, int64_t *n_edges)
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
  int64_t n_sent = 0;
  for (int64_t i = 0; i < s->n_own; ++i)
    n_sent += sent[i];
  int ok = status == PHEW_OK && e && id_map_init(&own, n_sent) == 0;
  for (int64_t i = 0; ok && i < s->n_own; ++i) {
    int64_t ignored;
    if (sent[i])
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
  if (own.slots)
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
  if (index.slots)
    id_map_free(&index);
  union_find_free(&sets);
  return ok ? PHEW_OK : PHEW_ERROR_MEMORY;
}

/* ---- the sets' keys ------------------------------------------------------------------------- */

enum {
  SET_BLOCK = 65536, /* sorted places per task */
  SET_AHEAD = 16     /* places: how far ahead the particles' arrays are fetched */
};
#define SEEN_ELSEWHERE ((int64_t)1 << 62) /* a set's size bit: padding in it, or some of it sent */

/* From the sets to keys, on all threads (the sets' roots are every place's parent): step 0
 * clears the summaries, step 1 gathers per root the smallest own id (an atomic minimum) and
 * the own particles (an atomic sum, or the bit SEEN_ELSEWHERE), step 2 gives each particle
 * its set's key. Minimum and sum do not depend on the order of the threads' updates. */
typedef struct set_job {
  const friend_sets *sets;
  const particle_set *s;
  const uint8_t *sent;       /* own particles other ranks hold */
  _Atomic int64_t *smallest; /* by root place */
  _Atomic int64_t *size;     /* by root place */
  int64_t *key, *padding_key;
  int64_t min_members;
  int step;
} set_job;

/* A run of places with one root, summarised, into the root's summary. */
static void set_flush(const set_job *job, int32_t root, int64_t smallest, int64_t size)
{
  if (root < 0)
    return;
  int64_t now = atomic_load_explicit(&job->smallest[root], memory_order_relaxed);
  while (smallest < now && !atomic_compare_exchange_weak_explicit(&job->smallest[root], &now, smallest,
                                                                  memory_order_relaxed, memory_order_relaxed))
    ;
  if (size & SEEN_ELSEWHERE)
    atomic_fetch_or_explicit(&job->size[root], SEEN_ELSEWHERE, memory_order_relaxed);
  if (size & ~SEEN_ELSEWHERE)
    atomic_fetch_add_explicit(&job->size[root], size & ~SEEN_ELSEWHERE, memory_order_relaxed);
}

static void set_task(void *context, int thread, int64_t task)
{
  (void)thread;
  const set_job *job = context;
  const particle_set *s = job->s;
  const int64_t n = s->n, n_own = s->n_own;
  const int64_t end = (task + 1) * SET_BLOCK < n ? (task + 1) * SET_BLOCK : n;
  int32_t run_root = -1; /* step 1: consecutive places of one root (a cell's, often a set's
                            neighbouring cells') are summed here, then into the root's summary */
  int64_t run_smallest = INT64_MAX, run_size = 0;
  for (int64_t t = task * SET_BLOCK; t < end; ++t) {
    if (job->step == 0) {
      atomic_init(&job->smallest[t], INT64_MAX);
      atomic_init(&job->size[t], 0);
      continue;
    }
    const int32_t i = job->sets->order[t];
    const int32_t root = atomic_load_explicit(&job->sets->sets.parent[t], memory_order_relaxed);
    if (t + SET_AHEAD < end) { /* the particles' own arrays are read in sorted order: scattered */
      const int32_t ahead = job->sets->order[t + SET_AHEAD];
      if (ahead < n_own) {
        __builtin_prefetch(&s->id[ahead]);
        __builtin_prefetch(&job->sent[ahead]);
        __builtin_prefetch(&job->key[ahead], 1);
      }
    }
    if (job->step == 1) {
      if (root != run_root) {
        set_flush(job, run_root, run_smallest, run_size);
        run_root = root;
        run_smallest = INT64_MAX;
        run_size = 0;
      }
      if (i < n_own && s->id[i] < run_smallest)
        run_smallest = s->id[i];
      if (i >= n_own || job->sent[i])
        run_size |= SEEN_ELSEWHERE;
      else
        run_size++;
      continue;
    }
    /* a set that no other rank sees (no padding in it, none of it sent) is a whole group: too
     * small, it is no group at all */
    const int64_t k = atomic_load_explicit(&job->smallest[root], memory_order_relaxed);
    const int64_t size = atomic_load_explicit(&job->size[root], memory_order_relaxed);
    if (i < n_own)
      job->key[i] = !(size & SEEN_ELSEWHERE) && size < job->min_members ? -1 : k;
    else
      job->padding_key[i - n_own] = k == INT64_MAX ? -1 : k;
  }
  if (job->step == 1)
    set_flush(job, run_root, run_smallest, run_size);
}

/* ---- the whole ----------------------------------------------------------------------------- */

phew_status fof_find(const points_context *x, const subvolume *parts, particle_set *s, double linking_length,
                     int64_t min_members, int64_t *key)
{
  comm *c = x->c;
  uint8_t *sent = phew_malloc((size_t)s->n_own + 1, sizeof *sent); /* own particles other ranks hold */
  phew_status status = comm_max(c, !sent)
                           ? comm_agree(c, phew_fail(x->result, PHEW_ERROR_MEMORY, "Friends-of-Friends: out of memory"),
                                        x->result)
                           : padding_width(x, parts, s, linking_length, sent);
  if (status != PHEW_OK) {
    free(sent);
    return status;
  }
  const int64_t n = s->n, n_own = s->n_own;
  friend_sets sets;
  status = friend_sets_find(&sets, s->position, n, &x->box, x->lo, x->hi, linking_length, x->n_threads);
  if (status != PHEW_OK)
    status = phew_fail(x->result, status, "Friends-of-Friends: %s",
                       status == PHEW_ERROR_MEMORY ? "out of memory" : "more than 2^31 - 1 particles on one rank");
  status = comm_agree(c, status, x->result);
  if (status != PHEW_OK) {
    free(sent);
    return status;
  }
  _Atomic int64_t *smallest = phew_malloc((size_t)n + 1, sizeof *smallest);
  _Atomic int64_t *size = phew_malloc((size_t)n + 1, sizeof *size);
  int64_t *padding_key = phew_malloc((size_t)(n - n_own) + 1, sizeof *padding_key);
  int ok = smallest && size && padding_key;
  set_job job = {&sets, s, sent, smallest, size, key, padding_key, min_members, 0};
  for (job.step = 0; ok && job.step < 3; ++job.step)
    threads_run(x->n_threads, (n + SET_BLOCK - 1) / SET_BLOCK, set_task, &job);
  friend_sets_free(&sets);
  free((void *)smallest);
  free((void *)size);
  status = comm_agree(c, ok ? PHEW_OK : phew_fail(x->result, PHEW_ERROR_MEMORY, "Friends-of-Friends: out of memory"),
                      x->result);
  if (status != PHEW_OK || c->size == 1) {
    free(padding_key);
    free(sent);
    return status;
  }
  key_edge *mine = NULL, *all = NULL;
  int64_t n_mine = 0, n_all = 0;
  status = cross_edges(x, s, key, padding_key, sent, &mine, &n_mine);
  free(padding_key);
  free(sent);
  status = comm_agree(c,
                      status == PHEW_OK
                          ? PHEW_OK
                          : phew_fail(x->result, status, "Friends-of-Friends: the groups across ranks failed"),
                      x->result);
  if (status == PHEW_OK)
    status = share_edges(c, mine, n_mine, &all, &n_all);
  if (status == PHEW_OK)
    status = join_keys(all, n_all, key, n_own);
  free(mine);
  free(all);
  return comm_agree(c,
                    status == PHEW_OK ? PHEW_OK
                                      : phew_fail(x->result, PHEW_ERROR_MEMORY, "Friends-of-Friends: out of memory"),
                    x->result);
}
