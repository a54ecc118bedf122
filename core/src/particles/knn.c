/* k-nearest-neighbour queries on the kd-tree (neighbours.h).
 *
 * Each query keeps the K = max(n_dens + 1, n_keep + 1) smallest (squared distance, global
 * id) pairs seen so far in a bounded max-heap and walks the tree nearer child first, skipping
 * every node whose box lies farther than the heap's largest distance. A particle enters when
 * its pair is below the heap's top (ties of distance ordered by global id), which then
 * leaves. At the end the heap holds exactly the K smallest pairs of all tree particles: the
 * answer of an exhaustive search, whatever the tree layout, storage order, order of the
 * queries or thread count. Distances are particle_distance2's, or plain differences where they
 * are provably the same bits (kd_reaches_image).
 *
 * HOP's trick (Stadel's SMOOTH): queries run in tree order, so consecutive queries are close;
 * the heap of a query starts full, with the previous query's K neighbours at their distances
 * to the new one, so the walk starts with a ball already near the final one instead of an
 * infinite one. A particle of that start set met again during the walk is skipped (it is in
 * the heap, or it left it and cannot come back). The first query of a task, or one far from
 * the previous query in tree order, starts from the K particles next to it in tree order. */
#include "kd_tree.h"
#include "threads.h"

#include <math.h>
#include <stdlib.h>

enum {
  KNN_CHUNK = 256, /* queries per task, consecutive in tree order */
  KNN_SEEN_BITS = 9 /* the start set's hash: 512 slots (grown for K > 256) */
};

typedef struct knn_entry {
  double d2;
  int32_t slot;
} knn_entry;

/* (squared distance, global id) order; particles are distinct, so it is total. The ids (the
 * caller's array, in storage order) are read only on a tie between two particles. */
static int tie_less(const kd_tree *t, int32_t a, int32_t b)
{
  return a != b && kd_slot_id(t, a) < kd_slot_id(t, b);
}

static inline int entry_less(const kd_tree *t, knn_entry a, knn_entry b)
{
  if (__builtin_expect(a.d2 == b.d2, 0))
    return tie_less(t, a.slot, b.slot);
  return a.d2 < b.d2;
}

/* ---- the max-heap -------------------------------------------------------------------------- */

static inline void heap_sift_down(const kd_tree *t, knn_entry *heap, int count, int root)
{
  const knn_entry x = heap[root];
  for (;;) {
    int child = 2 * root + 1;
    if (child >= count)
      break;
    /* the larger child, without a branch on the (unpredictable) comparison */
    child += (child + 1 < count) & entry_less(t, heap[child], heap[child + 1]);
    if (!entry_less(t, x, heap[child]))
      break;
    heap[root] = heap[child];
    root = child;
  }
  heap[root] = x;
}

static void heapify(const kd_tree *t, knn_entry *heap, int count)
{
  for (int root = count / 2 - 1; root >= 0; --root)
    heap_sift_down(t, heap, count, root);
}

/* ---- selections for the outputs -------------------------------------------------------------- */

/* Puts the k-th smallest of e[begin, end) at k, no larger one before, no smaller one after
 * (Wirth's selection, median of three). */
static void select_entry(const kd_tree *t, knn_entry *e, int begin, int end, int k)
{
  int l = begin, r = end - 1;
  while (l < r) {
    knn_entry tmp;
    if (entry_less(t, e[k], e[l]))
      tmp = e[k], e[k] = e[l], e[l] = tmp;
    if (entry_less(t, e[r], e[l]))
      tmp = e[r], e[r] = e[l], e[l] = tmp;
    if (entry_less(t, e[r], e[k]))
      tmp = e[r], e[r] = e[k], e[k] = tmp;
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

/* ---- the start set: a small hash of tree slots --------------------------------------------- */

static inline uint32_t seen_hash(int32_t slot, int bits)
{
  return ((uint32_t)slot * 2654435761u) >> (32 - bits);
}

static inline void seen_insert(int32_t *seen, int bits, int32_t slot)
{
  const uint32_t mask = (1u << bits) - 1;
  uint32_t i = seen_hash(slot, bits);
  while (seen[i] >= 0)
    i = (i + 1) & mask;
  seen[i] = slot;
}

static inline int seen_contains(const int32_t *seen, int bits, int32_t slot)
{
  const uint32_t mask = (1u << bits) - 1;
  for (uint32_t i = seen_hash(slot, bits);; i = (i + 1) & mask) {
    if (seen[i] == slot)
      return 1;
    if (seen[i] < 0)
      return 0;
  }
}

/* ---- per-thread scratch ---------------------------------------------------------------------- */

typedef struct knn_scratch {
  int K;
  knn_entry *heap;   /* K */
  knn_entry *sorted; /* K: the outputs' selections */
  double *value;     /* K */
  int32_t *seen;     /* 2^seen_bits */
  int seen_bits;
  int32_t *stack;    /* depth + 2 */
  double *stack_d2;
} knn_scratch;

static void scratch_free(knn_scratch *w)
{
  free(w->heap);
  free(w->sorted);
  free(w->value);
  free(w->seen);
  free(w->stack);
  free(w->stack_d2);
}

static int scratch_init(knn_scratch *w, const kd_tree *t, int K)
{
  w->K = K;
  w->seen_bits = KNN_SEEN_BITS;
  while ((1 << w->seen_bits) < 2 * K)
    ++w->seen_bits;
  w->heap = phew_malloc((size_t)K, sizeof *w->heap);
  w->sorted = phew_malloc((size_t)K, sizeof *w->sorted);
  w->value = phew_malloc((size_t)K, sizeof *w->value);
  w->seen = phew_malloc((size_t)1 << w->seen_bits, sizeof *w->seen);
  w->stack = phew_malloc((size_t)t->depth + 2, sizeof *w->stack);
  w->stack_d2 = phew_malloc((size_t)t->depth + 2, sizeof *w->stack_d2);
  return w->heap && w->sorted && w->value && w->seen && w->stack && w->stack_d2;
}

/* ---- one query ------------------------------------------------------------------------------- */

/* The walk from a full heap; periodic is a constant in each caller. */
static inline void walk(const kd_tree *t, const double *q, knn_scratch *w, const int periodic)
{
  const int64_t first_leaf = kd_first_leaf(t);
  const int K = w->K, bits = w->seen_bits;
  knn_entry *heap = w->heap;
  const int32_t *seen = w->seen;
  int32_t *stack = w->stack;
  double *stack_d2 = w->stack_d2;
  int top = 0;
  int64_t v = 0;
  double vd2 = periodic ? kd_node_distance2(t, &t->node[0], q) : kd_plain_node_distance2(&t->node[0], q);
  for (;;) {
    if (vd2 <= heap[0].d2) {
      if (v >= first_leaf) {
        int64_t begin, end;
        kd_node_range(t, v, t->depth, &begin, &end);
        for (int64_t s = begin; s < end; ++s) {
          const double *x = t->pos + 3 * s;
          const double d2 = periodic ? particle_distance2(&t->box, q, x) : kd_plain_distance2(q, x);
          if (d2 > heap[0].d2)
            continue;
          const knn_entry e = {d2, (int32_t)s};
          if (d2 == heap[0].d2 && !entry_less(t, e, heap[0]))
            continue;
          if (seen_contains(seen, bits, (int32_t)s))
            continue;
          heap[0] = e;
          heap_sift_down(t, heap, K, 0);
        }
      } else {
        const int64_t a = 2 * v + 1, b = 2 * v + 2;
        const double da = periodic ? kd_node_distance2(t, &t->node[a], q) : kd_plain_node_distance2(&t->node[a], q);
        const double db = periodic ? kd_node_distance2(t, &t->node[b], q) : kd_plain_node_distance2(&t->node[b], q);
        const int a_first = da <= db;
        const double far_d2 = a_first ? db : da;
        if (far_d2 <= heap[0].d2) {
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
}

static void walk_plain(const kd_tree *t, const double *q, knn_scratch *w) { walk(t, q, w, 0); }
static void walk_periodic(const kd_tree *t, const double *q, knn_scratch *w) { walk(t, q, w, 1); }

/* The K nearest pairs of the particle in tree slot self, from the start set start[0 .. K)
 * (K distinct tree slots), into w->heap. */
static void search(const kd_tree *t, int32_t self, const int32_t *start, knn_scratch *w)
{
  const int K = w->K;
  const double *x = t->pos + 3 * (int64_t)self;
  knn_entry *heap = w->heap;
  /* plain distances first: if their largest reaches no periodic image, they are exact */
  double r2 = 0;
  for (int i = 0; i < K; ++i) {
    heap[i].slot = start[i];
    heap[i].d2 = kd_plain_distance2(x, t->pos + 3 * (int64_t)start[i]);
    r2 = heap[i].d2 > r2 ? heap[i].d2 : r2;
  }
  int periodic = kd_reaches_image(t, x, x, r2);
  if (periodic) {
    r2 = 0;
    for (int i = 0; i < K; ++i) {
      heap[i].d2 = particle_distance2(&t->box, x, t->pos + 3 * (int64_t)start[i]);
      r2 = heap[i].d2 > r2 ? heap[i].d2 : r2;
    }
    periodic = kd_reaches_image(t, x, x, r2);
  }
  heapify(t, heap, K);
  const int size = 1 << w->seen_bits;
  for (int i = 0; i < size; ++i)
    w->seen[i] = -1;
  for (int i = 0; i < K; ++i)
    seen_insert(w->seen, w->seen_bits, start[i]);
  if (periodic)
    walk_periodic(t, x, w);
  else
    walk_plain(t, x, w);
}

/* The outputs of query j (tree slot self) from its K nearest pairs in w->heap. */
static void answer(const kd_tree *t, const knn_query *kq, knn_scratch *w, int32_t j, int32_t self)
{
  const int K = w->K;
  if (kq->reach)
    kq->reach[j] = sqrt(w->heap[0].d2);
  if (kq->n_dens > 0) {
    double v = w->heap[0].d2; /* the K-th */
    if (kq->n_dens < K - 1) {
      double *value = w->value;
      for (int i = 0; i < K; ++i)
        value[i] = w->heap[i].d2;
      /* quickselect of rank n_dens on the values */
      int l = 0, r = K - 1;
      const int k = kq->n_dens;
      while (l < r) {
        const double x = value[k];
        int i = l, m = r;
        do {
          while (value[i] < x)
            ++i;
          while (x < value[m])
            --m;
          if (i <= m) {
            const double tmp = value[i];
            value[i] = value[m];
            value[m] = tmp;
            ++i;
            --m;
          }
        } while (i <= m);
        if (m < k)
          l = i;
        if (k < i)
          r = m;
      }
      v = value[k];
    }
    kq->h[j] = 0.5 * sqrt(v);
  }
  if (kq->n_keep > 0) {
    knn_entry *e = w->sorted;
    for (int i = 0; i < K; ++i)
      e[i] = w->heap[i];
    const int want = kq->n_keep + 1;
    if (want < K)
      select_entry(t, e, 0, K, want - 1);
    sort_entries(t, e, want);
    int32_t *out = kq->nearest + (int64_t)j * kq->n_keep;
    int k = 0;
    for (int i = 0; i < want && k < kq->n_keep; ++i)
      if (e[i].slot != self)
        out[k++] = t->index[e[i].slot];
  }
}

/* ---- the batch ----------------------------------------------------------------------------- */

typedef struct knn_job {
  const kd_tree *t;
  const knn_query *q;
  const int32_t *query, *slot; /* the queries in tree order */
  int64_t n;
  knn_scratch *scratch;        /* per thread */
  int32_t **start;             /* per thread: K slots */
} knn_job;

static void knn_task(void *context, int thread, int64_t task)
{
  const knn_job *job = context;
  const kd_tree *t = job->t;
  knn_scratch *w = &job->scratch[thread];
  int32_t *start = job->start[thread];
  const int K = w->K;
  const int64_t begin = task * KNN_CHUNK;
  const int64_t end = begin + KNN_CHUNK < job->n ? begin + KNN_CHUNK : job->n;
  int64_t previous = -1;
  for (int64_t k = begin; k < end; ++k) {
    const int32_t self = job->slot[k];
    if (previous >= 0 && self - previous <= K) {
      for (int i = 0; i < K; ++i) /* the previous query's neighbours */
        start[i] = w->heap[i].slot;
    } else { /* the K particles next to it in tree order */
      int64_t first = self - K / 2;
      first = first < 0 ? 0 : first;
      first = first + K > t->n ? t->n - K : first;
      for (int i = 0; i < K; ++i)
        start[i] = (int32_t)(first + i);
    }
    search(t, self, start, w);
    answer(t, job->q, w, job->query[k], self);
    previous = self;
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
  const int64_t n_tasks = (q->n + KNN_CHUNK - 1) / KNN_CHUNK;
  int threads = particle_threads(q->n_threads);
  if (threads > n_tasks)
    threads = (int)n_tasks;
  knn_scratch *scratch = calloc((size_t)threads, sizeof *scratch);
  int32_t **start = calloc((size_t)threads, sizeof *start);
  int ok = scratch && start;
  for (int i = 0; ok && i < threads; ++i) {
    start[i] = phew_malloc((size_t)need, sizeof **start);
    ok = scratch_init(&scratch[i], tree, (int)need) && start[i];
  }
  if (ok) {
    knn_job job = {tree, q, query, slot, q->n, scratch, start};
    particle_parallel(threads, n_tasks, knn_task, &job);
  } else {
    status = phew_fail(result, PHEW_ERROR_MEMORY, "neighbour search: out of memory");
  }
  for (int i = 0; i < threads; ++i) {
    if (scratch)
      scratch_free(&scratch[i]);
    if (start)
      free(start[i]);
  }
  free(scratch);
  free(start);
  free(query);
  free(slot);
  return status;
}
