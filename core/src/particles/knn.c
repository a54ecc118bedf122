/* k-nearest-neighbour queries on the kd-tree (neighbours.h).
 *
 * What a query needs: with K = max(n_dens + 1, n_keep + 1), the (n_dens + 1)-th and K-th
 * smallest squared distances to all tree particles (values only: ties do not change them)
 * and the n_keep + 1 smallest (squared distance, global id) pairs in order. Given any list
 * that holds every particle within some radius r2 and at least K of them, these come out
 * exactly: quickselect on the distances within r2, then the pairs at or below the (n_keep +
 * 1)-th distance, sorted with the global id breaking ties. Distances are particle_distance2's
 * (or plain differences where they are provably the same bits, see kd_reaches_image), so the
 * answer is that of an exhaustive search: it depends on no tree layout, storage order, order
 * of the queries or thread count.
 *
 * Where the lists come from (HOP's trick of reusing the previous radius, per leaf bucket):
 * queries run leaf by leaf in tree order. A leaf's queries share one candidate list, every
 * particle within a radius R of the leaf's box (kd_tree_gather), with R guessed from the
 * largest K-th distance of the previous leaf (consecutive leaves are neighbours). A query
 * with at least K candidates within R is answered from the list. The others (R was too
 * small for them) get a second list with a radius from the first one: the K-th smallest of
 * their distances to the first list, a true bound since those are K particles. A leaf whose
 * list would be too long, and a task's first query, fall back to a query's own walk. */
#include "kd_tree.h"
#include "threads.h"

#include <math.h>
#include <stdlib.h>

enum {
  KNN_LEAVES_PER_TASK = 16, /* consecutive leaves per task (~ 200 particles) */
  KNN_CANDIDATES = 16384    /* longest candidate list */
};
/* a leaf's radius: the guess (below) times the slack; times the growth for another round
 * when some query has fewer than K candidates within it; after the last round, own walks */
#define KNN_GUESS_SLACK 1.02
#define KNN_GROWTH 1.25
enum { KNN_ROUNDS = 3 };

/* ---- selections ----------------------------------------------------------------------- */

typedef struct knn_entry {
  double d2;
  int32_t slot;
} knn_entry;

/* (squared distance, global id) order; particles are distinct, so it is total */
static inline int entry_less(const kd_tree *t, knn_entry a, knn_entry b)
{
  return a.d2 < b.d2 || (a.d2 == b.d2 && kd_slot_id(t, a.slot) < kd_slot_id(t, b.slot));
}

/* Puts the k-th smallest of e[begin, end) at k, no larger one before, no smaller one after
 * (Wirth's selection, median of three). */
static void select_entry(const kd_tree *t, knn_entry *e, int begin, int end, int k)
{
  int l = begin, r = end - 1;
  while (l < r) {
    knn_entry tmp;
    if (entry_less(t, e[k], e[l])) {
      tmp = e[k], e[k] = e[l], e[l] = tmp;
    }
    if (entry_less(t, e[r], e[l])) {
      tmp = e[r], e[r] = e[l], e[l] = tmp;
    }
    if (entry_less(t, e[r], e[k])) {
      tmp = e[r], e[r] = e[k], e[k] = tmp;
    }
    const knn_entry x = e[k];
    int i = l, j = r;
    do {
      while (entry_less(t, e[i], x))
        ++i;
      while (entry_less(t, x, e[j]))
        --j;
      if (i <= j) {
        tmp = e[i], e[i] = e[j], e[j] = tmp;
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

/* The k-th smallest of d[begin, end) moved to k (values only). */
static double select_double(double *d, int begin, int end, int k)
{
  int l = begin, r = end - 1;
  while (l < r) {
    double tmp;
    if (d[k] < d[l]) {
      tmp = d[k], d[k] = d[l], d[l] = tmp;
    }
    if (d[r] < d[l]) {
      tmp = d[r], d[r] = d[l], d[l] = tmp;
    }
    if (d[r] < d[k]) {
      tmp = d[r], d[r] = d[k], d[k] = tmp;
    }
    const double x = d[k];
    int i = l, j = r;
    do {
      while (d[i] < x)
        ++i;
      while (x < d[j])
        --j;
      if (i <= j) {
        tmp = d[i], d[i] = d[j], d[j] = tmp;
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

/* ---- per-thread scratch ------------------------------------------------------------------ */

typedef struct knn_scratch {
  int K, capacity;       /* capacity >= 4 K: every array below */
  kd_candidates c;       /* the leaf's list */
  double *d2;            /* a query's distance to each candidate */
  double *value;         /* the distances within the radius, for the selections */
  knn_entry *near;       /* the pairs of the nearest list */
  knn_entry *walk;       /* a query's own walk: its buffer */
  double *walk_d2;       /* ... and the same split in two arrays */
  int32_t *walk_slot;
  int32_t *stack;        /* own walks: depth + 2 */
  double *stack_d2;
} knn_scratch;

static void scratch_free(knn_scratch *w)
{
  kd_candidates_free(&w->c);
  free(w->d2);
  free(w->value);
  free(w->near);
  free(w->walk);
  free(w->walk_d2);
  free(w->walk_slot);
  free(w->stack);
  free(w->stack_d2);
}

static int scratch_init(knn_scratch *w, const kd_tree *t, int K)
{
  w->K = K;
  w->capacity = 4 * K > KNN_CANDIDATES ? 4 * K : KNN_CANDIDATES;
  const size_t n = (size_t)w->capacity;
  int ok = kd_candidates_init(&w->c, t, w->capacity) == PHEW_OK;
  w->d2 = phew_malloc(n, sizeof *w->d2);
  w->value = phew_malloc(n, sizeof *w->value);
  w->near = phew_malloc(n, sizeof *w->near);
  w->walk = phew_malloc(n, sizeof *w->walk);
  w->walk_d2 = phew_malloc(n, sizeof *w->walk_d2);
  w->walk_slot = phew_malloc(n, sizeof *w->walk_slot);
  w->stack = phew_malloc((size_t)t->depth + 2, sizeof *w->stack);
  w->stack_d2 = phew_malloc((size_t)t->depth + 2, sizeof *w->stack_d2);
  return ok && w->d2 && w->value && w->near && w->walk && w->walk_d2 && w->walk_slot && w->stack && w->stack_d2;
}

/* ---- answering a query from a list --------------------------------------------------------- */

/* Query j (tree slot self) from the list d2[i], slot[i] (i < n) that holds every particle
 * within r2: writes its outputs and returns its K-th squared distance, or returns -1 (nothing
 * written) if fewer than K are within r2. */
static double answer(const kd_tree *t, const knn_query *kq, knn_scratch *w, const double *d2, const int32_t *slot,
                     int n, double r2, int32_t j, int32_t self)
{
  const int K = w->K;
  double *v = w->value;
  int m = 0;
  for (int i = 0; i < n; ++i) {
    v[m] = d2[i];
    m += d2[i] <= r2;
  }
  if (m < K)
    return -1;
  const double kth2 = select_double(v, 0, m, K - 1);
  /* the ranks n_dens and n_keep (both <= K - 1) in place, larger first */
  const int a = kq->n_dens > kq->n_keep ? kq->n_dens : kq->n_keep;
  const int b = kq->n_dens > kq->n_keep ? kq->n_keep : kq->n_dens;
  if (a < K - 1)
    select_double(v, 0, K - 1, a);
  if (b > 0 && b < a)
    select_double(v, 0, a, b);
  if (kq->n_dens > 0)
    kq->h[j] = 0.5 * sqrt(v[kq->n_dens]);
  if (kq->reach)
    kq->reach[j] = sqrt(kth2);
  if (kq->n_keep > 0) {
    /* the pairs at or below the (n_keep + 1)-th distance hold the n_keep + 1 nearest */
    const double limit = v[kq->n_keep];
    knn_entry *e = w->near;
    int c = 0;
    for (int i = 0; i < n; ++i)
      if (d2[i] <= limit) {
        e[c].d2 = d2[i];
        e[c].slot = slot[i];
        ++c;
      }
    const int want = kq->n_keep + 1;
    if (c > want)
      select_entry(t, e, 0, c, want - 1);
    sort_entries(t, e, want);
    int32_t *out = kq->nearest + (int64_t)j * kq->n_keep;
    int k = 0;
    for (int i = 0; i < want && k < kq->n_keep; ++i)
      if (e[i].slot != self)
        out[k++] = t->index[e[i].slot];
  }
  return kth2;
}

/* ---- a query's own walk ------------------------------------------------------------------ */

/* Every particle within the radius, walking nearer child first; when the buffer fills it
 * keeps its K smallest pairs and the radius shrinks to the K-th. periodic is a constant in
 * each caller. */
static inline int own_walk(const kd_tree *t, const double *q, knn_scratch *w, double r2, const int periodic)
{
  const int64_t first_leaf = kd_first_leaf(t);
  int32_t *stack = w->stack;
  double *stack_d2 = w->stack_d2;
  knn_entry *buf = w->walk;
  int count = 0, top = 0;
  int64_t v = 0;
  double vd2 = periodic ? kd_node_distance2(t, &t->node[0], q) : kd_plain_node_distance2(&t->node[0], q);
  for (;;) {
    if (vd2 <= r2) {
      if (v >= first_leaf) {
        int64_t begin, end;
        kd_node_range(t, v, t->depth, &begin, &end);
        for (int64_t s = begin; s < end; ++s) {
          const double *x = t->pos + 3 * s;
          const double d2 = periodic ? particle_distance2(&t->box, q, x) : kd_plain_distance2(q, x);
          if (d2 <= r2) {
            buf[count].d2 = d2;
            buf[count].slot = (int32_t)s;
            if (++count == w->capacity) {
              select_entry(t, buf, 0, count, w->K - 1);
              count = w->K;
              r2 = buf[w->K - 1].d2;
            }
          }
        }
      } else {
        const int64_t a = 2 * v + 1, b = 2 * v + 2;
        const double da = periodic ? kd_node_distance2(t, &t->node[a], q) : kd_plain_node_distance2(&t->node[a], q);
        const double db = periodic ? kd_node_distance2(t, &t->node[b], q) : kd_plain_node_distance2(&t->node[b], q);
        const int a_first = da <= db;
        const double far_d2 = a_first ? db : da;
        if (far_d2 <= r2) {
          stack[top] = (int32_t)(a_first ? b : a);
          stack_d2[top] = far_d2;
          ++top;
        }
        v = a_first ? a : b;
        vd2 = a_first ? da : db;
        continue;
      }
    }
    if (top == 0)
      break;
    --top;
    v = stack[top];
    vd2 = stack_d2[top];
  }
  for (int i = 0; i < count; ++i) {
    w->walk_d2[i] = buf[i].d2;
    w->walk_slot[i] = buf[i].slot;
  }
  return count;
}

/* Query j answered by its own walk from the radius r2, which K particles are known to be
 * within (or, r2 <= 0, from the K particles next to it in tree order). */
static double answer_alone(const kd_tree *t, const knn_query *kq, knn_scratch *w, int32_t j, int32_t self, double r2)
{
  const int K = w->K;
  const double *x = t->pos + 3 * (int64_t)self;
  if (!(r2 > 0)) {
    int64_t first = self - K / 2;
    first = first < 0 ? 0 : first;
    first = first + K > t->n ? t->n - K : first;
    r2 = 0;
    for (int64_t s = first; s < first + K; ++s) {
      const double d2 = particle_distance2(&t->box, x, t->pos + 3 * s);
      r2 = d2 > r2 ? d2 : r2;
    }
  }
  const int n = kd_reaches_image(t, x, x, r2) ? own_walk(t, x, w, r2, 1) : own_walk(t, x, w, r2, 0);
  /* the buffer holds every particle within its final radius, K of them at least */
  double final_r2 = 0;
  for (int i = 0; i < n; ++i)
    final_r2 = w->walk_d2[i] > final_r2 ? w->walk_d2[i] : final_r2;
  return answer(t, kq, w, w->walk_d2, w->walk_slot, n, final_r2, j, self);
}

/* ---- leaf buckets -------------------------------------------------------------------------- */

/* Each candidate's squared distance to x. */
static void candidate_distances(const kd_tree *t, const kd_candidates *c, const double *x, double r2, double *d2)
{
  const int n = c->n;
  if (kd_reaches_image(t, x, x, r2)) {
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
}

typedef struct knn_job {
  const kd_tree *t;
  const knn_query *q;
  const int32_t *query, *slot; /* the queries in tree order */
  const int64_t *task_query;   /* per task: its first query (n_tasks + 1) */
  knn_scratch *scratch;        /* per thread */
} knn_job;

static void knn_task(void *context, int thread, int64_t task)
{
  const knn_job *job = context;
  const kd_tree *t = job->t;
  const knn_query *kq = job->q;
  knn_scratch *w = &job->scratch[thread];
  const int K = w->K;
  kd_candidates *c = &w->c;
  const int64_t first_leaf = kd_first_leaf(t), n_leaves = (int64_t)1 << t->depth;
  const int64_t last_leaf = (task + 1) * KNN_LEAVES_PER_TASK < n_leaves ? (task + 1) * KNN_LEAVES_PER_TASK : n_leaves;
  int64_t k = job->task_query[task];
  const int64_t k_end = job->task_query[task + 1];
  /* the guess of a leaf's radius: its box's diagonal times the ratio of the largest K-th
   * distance to the diagonal in the previous leaf (leaves hold equal counts, so their size
   * follows the local spacing); -1: none yet */
  double ratio = -1;
  for (int64_t leaf = task * KNN_LEAVES_PER_TASK; leaf < last_leaf && k < k_end; ++leaf) {
    int64_t begin, end;
    kd_node_range(t, first_leaf + leaf, t->depth, &begin, &end);
    const int64_t k_first = k;
    while (k < k_end && job->slot[k] < end)
      ++k;
    if (k == k_first)
      continue;
    const kd_node *box = &t->node[first_leaf + leaf];
    const double dx = box->hi[0] - box->lo[0], dy = box->hi[1] - box->lo[1], dz = box->hi[2] - box->lo[2];
    const double diagonal = sqrt((dx * dx + dy * dy) + dz * dz);
    double r;
    if (ratio < 0 || !(diagonal > 0)) /* the first query's own walk sets the scale */
      r = sqrt(answer_alone(t, kq, w, job->query[k_first], job->slot[k_first], 0)) + diagonal;
    else
      r = ratio * diagonal * KNN_GUESS_SLACK;
    double largest = 0;
    for (int round = 0; round < KNN_ROUNDS; ++round) {
      const double r2 = r * r;
      const int listed = kd_tree_gather(t, box->lo, box->hi, r2, NULL, NULL, 0, c) && c->n >= K;
      int missing = 0;
      for (int64_t i = k_first; i < k; ++i) {
        const int32_t j = job->query[i], self = job->slot[i];
        if (round > 0 && (kq->n_dens > 0 ? kq->h[j] >= 0 : kq->nearest[(int64_t)j * kq->n_keep] >= 0))
          continue; /* answered by an earlier list */
        double kth2 = -1;
        if (listed) {
          candidate_distances(t, c, t->pos + 3 * (int64_t)self, r2, w->d2);
          kth2 = answer(t, kq, w, w->d2, c->slot, c->n, r2, j, self);
        }
        if (kth2 < 0 && (!listed || round == KNN_ROUNDS - 1))
          kth2 = answer_alone(t, kq, w, j, self, 0);
        if (kth2 < 0)
          ++missing;
        else
          largest = kth2 > largest ? kth2 : largest;
      }
      if (!missing)
        break;
      r *= KNN_GROWTH;
    }
    if (diagonal > 0)
      ratio = sqrt(largest) / diagonal;
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
  int32_t *query, *slot;
  phew_status status = kd_tree_order_queries(tree, q->n, q->subset, &query, &slot, result);
  if (status != PHEW_OK)
    return status;
  /* "not answered yet" marks for the second lists: h < 0, or a nearest index < 0 */
  for (int64_t j = 0; j < q->n; ++j) {
    if (q->n_dens > 0)
      q->h[j] = -1;
    else
      q->nearest[j * q->n_keep] = -1;
  }
  const int64_t n_leaves = (int64_t)1 << tree->depth;
  const int64_t n_tasks = (n_leaves + KNN_LEAVES_PER_TASK - 1) / KNN_LEAVES_PER_TASK;
  int threads = particle_threads(q->n_threads);
  if (threads > n_tasks)
    threads = (int)n_tasks;
  int64_t *task_query = phew_malloc((size_t)n_tasks + 1, sizeof *task_query);
  knn_scratch *scratch = calloc((size_t)threads, sizeof *scratch);
  int ok = task_query && scratch;
  for (int i = 0; ok && i < threads; ++i)
    ok = scratch_init(&scratch[i], tree, (int)need);
  if (ok) {
    /* the first query of each task (the queries are in increasing slot order) */
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
    knn_job job = {tree, q, query, slot, task_query, scratch};
    particle_parallel(threads, n_tasks, knn_task, &job);
  } else {
    status = phew_fail(result, PHEW_ERROR_MEMORY, "neighbour search: out of memory");
  }
  if (scratch)
    for (int i = 0; i < threads; ++i)
      scratch_free(&scratch[i]);
  free(scratch);
  free(task_query);
  free(query);
  free(slot);
  return status;
}
