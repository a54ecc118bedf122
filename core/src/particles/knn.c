/* k-nearest-neighbour queries on the kd-tree (neighbours.h).
 *
 * A query collects, walking the tree nearer child first, every particle whose squared
 * distance is within a radius r2 into a buffer; a node is skipped when the lower bound of the
 * distance to its box exceeds r2. When the buffer fills, it keeps only its K = max(n_dens + 1,
 * n_keep + 1) smallest (squared distance, global id) pairs and r2 shrinks to the K-th of
 * them. At the end the K smallest pairs are selected and the positions the outputs need are
 * put in order (quickselect, then a sort of the n_keep + 1 nearest).
 *
 * The starting radius (HOP's trick). Queries run in tree order, so consecutive queries are
 * close: the largest squared distance from the new query to the previous query's K
 * neighbours bounds its K-th distance from above (these are K particles), and is usually
 * tight. The first query of a run (or one far from the previous) takes the K particles next
 * to it in tree order instead. Either way r2 is the distance to K actual particles, computed
 * with particle_distance2: the true K nearest all lie within it, and every particle within
 * it is considered, so the answer is that of an exhaustive search, with ties of distance
 * ordered by global id. Nothing depends on the tree layout, the storage order, the order in
 * which queries run or the threads.
 *
 * Periodic axes. A query whose radius does not reach any periodic image (every particle that
 * the nearest-image rule would shift lies farther than r2 along that axis alone) walks with
 * plain differences: for every particle within r2 they are exactly particle_delta's. Queries
 * near the box's faces walk with the full nearest-image bounds (kd_axis_gap). */
#include "kd_tree.h"
#include "threads.h"

#include <math.h>
#include <stdlib.h>

enum { KNN_CHUNK = 256 }; /* queries per task: consecutive in tree order */

typedef struct knn_entry {
  double d2;
  int32_t slot;
} knn_entry;

/* (squared distance, global id) order */
static inline int entry_less(const kd_tree *t, knn_entry a, knn_entry b)
{
  return a.d2 < b.d2 || (a.d2 == b.d2 && kd_slot_id(t, a.slot) < kd_slot_id(t, b.slot));
}

/* Puts the k-th smallest of e[begin, end) at k, smaller ones before it, larger after it
 * (Wirth's selection; the particles are distinct, so the order is total). */
static void select_entry(const kd_tree *t, knn_entry *e, int begin, int end, int k)
{
  int l = begin, r = end - 1;
  while (l < r) {
    /* median of three at k */
    knn_entry tmp;
    if (entry_less(t, e[k], e[l])) {
      tmp = e[k]; e[k] = e[l]; e[l] = tmp;
    }
    if (entry_less(t, e[r], e[l])) {
      tmp = e[r]; e[r] = e[l]; e[l] = tmp;
    }
    if (entry_less(t, e[r], e[k])) {
      tmp = e[r]; e[r] = e[k]; e[k] = tmp;
    }
    const knn_entry x = e[k];
    int i = l, j = r;
    do {
      while (entry_less(t, e[i], x))
        ++i;
      while (entry_less(t, x, e[j]))
        --j;
      if (i <= j) {
        tmp = e[i]; e[i] = e[j]; e[j] = tmp;
        ++i;
        --j;
      }
    } while (i <= j);
    if (j < k)
      l = i;
    if (k < i)
      r = j;
  }
}

static void sort_entries(const kd_tree *t, knn_entry *e, int count)
{
  for (int i = 1; i < count; ++i) {
    const knn_entry x = e[i];
    int j = i;
    while (j > 0 && entry_less(t, x, e[j - 1])) {
      e[j] = e[j - 1];
      --j;
    }
    e[j] = x;
  }
}

typedef struct knn_stack {
  double d2;    /* lower bound of the squared distance to the node's box */
  int32_t node; /* heap-order index (fewer than 2^32 nodes: fewer than 2^31 particles) */
  int32_t level;
} knn_stack;

/* Per-thread scratch of a walk. */
typedef struct knn_scratch {
  knn_entry *buf;   /* capacity entries */
  int capacity;     /* >= 2 K */
  int count;
  int K;
  double r2;
  knn_stack *stack; /* depth + 2 */
} knn_scratch;

/* The buffer is full: keep its K smallest, the radius shrinks to the K-th. */
static void knn_compact(const kd_tree *t, knn_scratch *w)
{
  select_entry(t, w->buf, 0, w->count, w->K - 1);
  w->count = w->K;
  w->r2 = w->buf[w->K - 1].d2;
}

/* The walk; periodic is a constant in each of the two callers below. */
static inline void knn_walk(const kd_tree *t, const double *q, knn_scratch *w, const int periodic)
{
  const int64_t first_leaf = kd_first_leaf(t);
  knn_stack *stack = w->stack;
  int top = 0;
  int64_t v = 0;
  int level = 0;
  double vd2 = periodic ? kd_node_distance2(t, &t->node[0], q) : kd_plain_node_distance2(&t->node[0], q);
  for (;;) {
    if (vd2 <= w->r2) {
      if (v >= first_leaf) {
        int64_t begin, end;
        kd_node_range(t, v, level, &begin, &end);
        for (int64_t s = begin; s < end; ++s) {
          const double *x = t->pos + 3 * s;
          const double d2 = periodic ? particle_distance2(&t->box, q, x) : kd_plain_distance2(q, x);
          if (d2 <= w->r2) {
            w->buf[w->count].d2 = d2;
            w->buf[w->count].slot = (int32_t)s;
            if (++w->count == w->capacity)
              knn_compact(t, w);
          }
        }
      } else {
        const int64_t a = 2 * v + 1, b = 2 * v + 2;
        const double da = periodic ? kd_node_distance2(t, &t->node[a], q) : kd_plain_node_distance2(&t->node[a], q);
        const double db = periodic ? kd_node_distance2(t, &t->node[b], q) : kd_plain_node_distance2(&t->node[b], q);
        const int a_first = da <= db;
        const double far_d2 = a_first ? db : da;
        if (far_d2 <= w->r2) {
          stack[top].d2 = far_d2;
          stack[top].node = (int32_t)(a_first ? b : a);
          stack[top].level = level + 1;
          ++top;
        }
        v = a_first ? a : b;
        vd2 = a_first ? da : db;
        ++level;
        continue;
      }
    }
    if (top == 0)
      break;
    --top;
    v = stack[top].node;
    level = stack[top].level;
    vd2 = stack[top].d2;
  }
}

static void knn_walk_plain(const kd_tree *t, const double *q, knn_scratch *w) { knn_walk(t, q, w, 0); }
static void knn_walk_periodic(const kd_tree *t, const double *q, knn_scratch *w) { knn_walk(t, q, w, 1); }

/* ---- leaf buckets ----------------------------------------------------------------------
 * The queries of one leaf share a candidate list: every particle whose box distance to the
 * leaf's box is within a radius R, gathered in one walk. All particles within R of a query
 * are then in the list, so a query that finds at least K of them within R has its answer
 * there (the K nearest are all within R); one that does not (R was a guess, from the K-th
 * distances of the previous leaf) runs its own walk. */

enum { KNN_LEAVES_PER_TASK = 16, KNN_CANDIDATES = 8192 };

typedef struct knn_candidates {
  double *x, *y, *z, *d2; /* KNN_CANDIDATES each */
  int32_t *slot;
  int n;
  knn_stack *stack;
} knn_candidates;

/* Every particle whose box distance to [lo, hi] is within r2; 0 if there are more than the
 * list holds. */
static int gather(const kd_tree *t, const double *lo, const double *hi, double r2, knn_candidates *c)
{
  const int64_t first_leaf = kd_first_leaf(t);
  knn_stack *stack = c->stack;
  int top = 0;
  stack[top].node = 0;
  stack[top].level = 0;
  ++top;
  c->n = 0;
  while (top > 0) {
    --top;
    const int64_t v = stack[top].node;
    const int level = stack[top].level;
    const kd_node *node = &t->node[v];
    if (kd_box_distance2(&t->box, lo, hi, node->lo, node->hi) > r2)
      continue;
    if (v < first_leaf) {
      stack[top].node = (int32_t)(2 * v + 2);
      stack[top].level = level + 1;
      ++top;
      stack[top].node = (int32_t)(2 * v + 1);
      stack[top].level = level + 1;
      ++top;
      continue;
    }
    int64_t begin, end;
    kd_node_range(t, v, level, &begin, &end);
    for (int64_t s = begin; s < end; ++s) {
      const double *x = t->pos + 3 * s;
      if (kd_box_distance2(&t->box, lo, hi, x, x) > r2)
        continue;
      if (c->n == KNN_CANDIDATES)
        return 0;
      c->x[c->n] = x[0];
      c->y[c->n] = x[1];
      c->z[c->n] = x[2];
      c->slot[c->n] = (int32_t)s;
      ++c->n;
    }
  }
  return 1;
}

/* The k-th smallest of d[0 .. n) (a radius bound only: no tie order needed). */
static double select_double(double *d, int n, int k)
{
  int l = 0, r = n - 1;
  while (l < r) {
    const double x = d[k];
    int i = l, j = r;
    do {
      while (d[i] < x)
        ++i;
      while (x < d[j])
        --j;
      if (i <= j) {
        const double tmp = d[i];
        d[i] = d[j];
        d[j] = tmp;
        ++i;
        --j;
      }
    } while (i <= j);
    if (j < k)
      l = i;
    if (k < i)
      r = j;
  }
  return d[k];
}

typedef struct knn_job {
  const kd_tree *t;
  knn_query *q;
  int K;
  const int32_t *query, *slot; /* the queries in tree order */
  int64_t n;
  const int64_t *task_query;   /* per task: its first query (n_tasks + 1) */
  knn_scratch *scratch;        /* per thread */
  knn_candidates *candidates;  /* per thread */
  int32_t **previous;          /* per thread: K slots, the previous query's neighbours */
} knn_job;

typedef struct knn_state {
  int32_t *previous;
  int64_t previous_slot; /* -1: none */
} knn_state;

/* The query's own walk, from a radius given (r2 > 0) or found from the previous query's
 * neighbours or its neighbours in tree order. */
static void own_walk(const kd_tree *t, const double *x, int32_t self, double r2, knn_scratch *w, knn_state *st)
{
  const int K = w->K;
  if (!(r2 > 0)) {
    r2 = 0;
    if (st->previous_slot >= 0 && self - st->previous_slot <= K) {
      for (int c = 0; c < K; ++c) {
        const double d2 = particle_distance2(&t->box, x, t->pos + 3 * (int64_t)st->previous[c]);
        r2 = d2 > r2 ? d2 : r2;
      }
    } else {
      int64_t first = self - K / 2;
      first = first < 0 ? 0 : first;
      first = first + K > t->n ? t->n - K : first;
      for (int64_t s = first; s < first + K; ++s) {
        const double d2 = particle_distance2(&t->box, x, t->pos + 3 * s);
        r2 = d2 > r2 ? d2 : r2;
      }
    }
  }
  w->r2 = r2;
  w->count = 0;
  if (kd_reaches_image(t, x, r2))
    knn_walk_periodic(t, x, w);
  else
    knn_walk_plain(t, x, w);
}

/* The outputs of query j (tree slot self) from the buffer (at least K entries, the K nearest
 * among them); returns its K-th squared distance. */
static double finish_query(const kd_tree *t, const knn_query *kq, knn_scratch *w, int32_t j, int32_t self,
                           knn_state *st)
{
  const int K = w->K;
  knn_entry *e = w->buf;
  select_entry(t, e, 0, w->count, K - 1);
  int sorted = 0;
  if (kq->n_keep > 0) {
    sorted = kq->n_keep + 1;
    if (sorted < K)
      select_entry(t, e, 0, K - 1, sorted - 1);
    sort_entries(t, e, sorted);
  }
  if (kq->n_dens > 0) {
    if (kq->n_dens >= sorted && kq->n_dens < K - 1)
      select_entry(t, e, sorted, K - 1, kq->n_dens);
    kq->h[j] = 0.5 * sqrt(e[kq->n_dens].d2);
  }
  if (kq->reach)
    kq->reach[j] = sqrt(e[K - 1].d2);
  if (kq->n_keep > 0) {
    int32_t *out = kq->nearest + (int64_t)j * kq->n_keep;
    int m = 0;
    for (int c = 0; c < sorted && m < kq->n_keep; ++c)
      if (e[c].slot != self)
        out[m++] = t->index[e[c].slot];
  }
  for (int c = 0; c < K; ++c)
    st->previous[c] = e[c].slot;
  st->previous_slot = self;
  return e[K - 1].d2;
}

/* slack on the guessed radius: the previous leaf's largest K-th distance, a little more */
#define KNN_GUESS_SLACK 1.05

static void knn_task(void *context, int thread, int64_t task)
{
  const knn_job *job = context;
  const kd_tree *t = job->t;
  const knn_query *kq = job->q;
  const int K = job->K;
  knn_scratch *w = &job->scratch[thread];
  knn_candidates *c = &job->candidates[thread];
  knn_state st = {job->previous[thread], -1};
  const int64_t first_leaf = kd_first_leaf(t), n_leaves = (int64_t)1 << t->depth;
  const int64_t leaf_end = (task + 1) * KNN_LEAVES_PER_TASK < n_leaves ? (task + 1) * KNN_LEAVES_PER_TASK : n_leaves;
  int64_t k = job->task_query[task];
  const int64_t k_end = job->task_query[task + 1];
  double guess = 0; /* largest K-th distance of the previous leaf; 0: none yet */
  for (int64_t leaf = task * KNN_LEAVES_PER_TASK; leaf < leaf_end && k < k_end; ++leaf) {
    int64_t begin, end;
    kd_node_range(t, first_leaf + leaf, t->depth, &begin, &end);
    int64_t k_leaf_end = k;
    while (k_leaf_end < k_end && job->slot[k_leaf_end] < end)
      ++k_leaf_end;
    if (k_leaf_end == k)
      continue;
    const kd_node *box = &t->node[first_leaf + leaf];
    const double r = guess * KNN_GUESS_SLACK, r2 = r * r;
    const int shared = guess > 0 && gather(t, box->lo, box->hi, r2, c) && c->n >= K;
    double largest = 0;
    for (; k < k_leaf_end; ++k) {
      const int32_t j = job->query[k], self = job->slot[k];
      const double *x = t->pos + 3 * (int64_t)self;
      int found = 0;
      if (shared) {
        const int n = c->n;
        double *d2 = c->d2;
        if (kd_reaches_image(t, x, r2)) {
          for (int i = 0; i < n; ++i) {
            const double p[3] = {c->x[i], c->y[i], c->z[i]};
            d2[i] = particle_distance2(&t->box, x, p);
          }
        } else {
          const double x0 = x[0], x1 = x[1], x2 = x[2];
          const double *cx = c->x, *cy = c->y, *cz = c->z;
          for (int i = 0; i < n; ++i) {
            const double dx = x0 - cx[i], dy = x1 - cy[i], dz = x2 - cz[i];
            d2[i] = (dx * dx + dy * dy) + dz * dz;
          }
        }
        int count = 0;
        knn_entry *e = w->buf;
        for (int i = 0; i < n; ++i) {
          e[count].d2 = d2[i];
          e[count].slot = c->slot[i];
          count += d2[i] <= r2;
        }
        w->count = count;
        found = count >= K;
        if (!found) /* its own walk, from the K-th of the list's distances */
          own_walk(t, x, self, select_double(d2, n, K - 1), w, &st);
      } else {
        own_walk(t, x, self, 0, w, &st);
      }
      const double kth2 = finish_query(t, kq, w, j, self, &st);
      largest = kth2 > largest ? kth2 : largest;
    }
    guess = sqrt(largest);
  }
}

phew_status knn_search(const kd_tree *tree, knn_query *q, phew_result *result)
{
  if (!tree || !q)
    return phew_fail(result, PHEW_ERROR_ARGUMENT, "knn_search: no tree or no query");
  if (q->n_dens < 0 || q->n_keep < 0 || (q->n_dens == 0 && q->n_keep == 0))
    return phew_fail(result, PHEW_ERROR_ARGUMENT, "knn_search: n_dens = %d, n_keep = %d (nothing to search for)",
                     q->n_dens, q->n_keep);
  if ((q->n_dens > 0 && !q->h) || (q->n_keep > 0 && !q->nearest))
    return phew_fail(result, PHEW_ERROR_ARGUMENT, "knn_search: missing output array");
  const int64_t need = (q->n_dens > q->n_keep ? (int64_t)q->n_dens : (int64_t)q->n_keep) + 1;
  if (q->n > 0 && tree->n < need)
    return phew_fail(result, PHEW_ERROR_ARGUMENT,
                     "neighbour search: %lld particles, fewer than the %lld nearest a query needs (itself included)",
                     (long long)tree->n, (long long)need);
  if (q->n == 0)
    return PHEW_OK;
  const int K = (int)need;
  int32_t *query, *slot;
  phew_status status = kd_tree_order_queries(tree, q->n, q->subset, &query, &slot, result);
  if (status != PHEW_OK)
    return status;
  const int64_t n_leaves = (int64_t)1 << tree->depth;
  const int64_t n_tasks = (n_leaves + KNN_LEAVES_PER_TASK - 1) / KNN_LEAVES_PER_TASK;
  int threads = particle_threads(q->n_threads);
  if (threads > n_tasks)
    threads = (int)n_tasks;
  knn_job job = {tree, q, K, query, slot, q->n, NULL, NULL, NULL, NULL};
  int64_t *task_query = phew_malloc((size_t)n_tasks + 1, sizeof *task_query);
  job.scratch = calloc((size_t)threads, sizeof *job.scratch);
  job.candidates = calloc((size_t)threads, sizeof *job.candidates);
  job.previous = calloc((size_t)threads, sizeof *job.previous);
  int ok = task_query && job.scratch && job.candidates && job.previous;
  const int capacity = 4 * K < KNN_CANDIDATES ? KNN_CANDIDATES : 4 * K;
  for (int i = 0; ok && i < threads; ++i) {
    knn_scratch *w = &job.scratch[i];
    knn_candidates *c = &job.candidates[i];
    w->K = K;
    w->capacity = capacity;
    w->buf = phew_malloc((size_t)capacity, sizeof *w->buf);
    w->stack = phew_malloc((size_t)tree->depth + 2, sizeof *w->stack);
    c->x = phew_malloc(KNN_CANDIDATES, sizeof *c->x);
    c->y = phew_malloc(KNN_CANDIDATES, sizeof *c->y);
    c->z = phew_malloc(KNN_CANDIDATES, sizeof *c->z);
    c->d2 = phew_malloc(KNN_CANDIDATES, sizeof *c->d2);
    c->slot = phew_malloc(KNN_CANDIDATES, sizeof *c->slot);
    c->stack = phew_malloc(2 * ((size_t)tree->depth + 2), sizeof *c->stack);
    job.previous[i] = phew_malloc((size_t)K, sizeof **job.previous);
    ok = w->buf && w->stack && c->x && c->y && c->z && c->d2 && c->slot && c->stack && job.previous[i];
  }
  if (ok) {
    /* first query of each task: the queries are in increasing slot order */
    const int64_t first_leaf = kd_first_leaf(tree);
    int64_t k = 0;
    for (int64_t task = 0; task < n_tasks; ++task) {
      int64_t begin, end;
      kd_node_range(tree, first_leaf + task * KNN_LEAVES_PER_TASK, tree->depth, &begin, &end);
      while (k < q->n && slot[k] < begin)
        ++k;
      task_query[task] = k;
    }
    task_query[n_tasks] = q->n;
    job.task_query = task_query;
    particle_parallel(threads, n_tasks, knn_task, &job);
  } else {
    status = phew_fail(result, PHEW_ERROR_MEMORY, "neighbour search: out of memory");
  }
  for (int i = 0; i < threads; ++i) {
    if (job.scratch) {
      free(job.scratch[i].buf);
      free(job.scratch[i].stack);
    }
    if (job.candidates) {
      knn_candidates *c = &job.candidates[i];
      free(c->x);
      free(c->y);
      free(c->z);
      free(c->d2);
      free(c->slot);
      free(c->stack);
    }
    if (job.previous)
      free(job.previous[i]);
  }
  free(job.scratch);
  free(job.candidates);
  free(job.previous);
  free(task_query);
  free(query);
  free(slot);
  return status;
}
