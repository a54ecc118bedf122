/* k-nearest-neighbour queries on the kd-tree (neighbours.h).
 *
 * What a query needs, with K = max(n_dens + 1, n_keep + 1): the (n_dens + 1)-th and K-th
 * smallest squared distances to all tree particles (values: ties of distance do not change
 * them) and the n_keep + 1 smallest (squared distance, global id) pairs, in order. From a list
 * that holds every particle within some radius of the query, and at least K of them within it,
 * these come out exactly: a selection on the distances, then a sort of the few pairs at or
 * below the (n_keep + 1)-th distance, global ids breaking ties. The distances are
 * particle_distance2's bits (kd_candidates' shifts), so the answer is that of an exhaustive
 * search: it depends on no tree layout, storage order, order of the queries or thread count.
 *
 * Where the lists come from (HOP's reuse of the previous neighbourhood, done per leaf).
 * Queries run leaf by leaf in tree order. A leaf's queries share one candidate list, every
 * particle within a radius R of the leaf's box (kd_tree_gather), in groups (one per tree leaf)
 * with their boxes. R is the previous leaf's largest K-th distance, a little enlarged. A query
 * first scans the groups within the previous query's K-th distance plus the distance between
 * the two (the triangle inequality), which usually holds a few dozen more than K. Neither
 * guess needs to be right: a query with fewer than K particles within that ball retries
 * within R; one with fewer than K within R takes the K-th smallest of its distances to the
 * whole list as a bound (a distance to K actual particles), and the leaf gathers again as
 * wide as the largest bound. */
#include "kd_tree.h"
#include "threads.h"

#include <math.h>
#include <stdlib.h>

enum { KNN_LEAVES_PER_TASK = 32 }; /* consecutive leaves per task (~ 500 particles) */
#define KNN_LEAF_SLACK 1.2         /* R = previous leaf's largest K-th distance times this */
#define KNN_QUERY_STEP 0.3         /* a query's first guess: the previous K-th distance plus this times the step */
#define KNN_FIRST_GUESS 1.5        /* the task's first leaf: R = its box's diagonal times this */

typedef struct knn_entry {
  double d2;
  int32_t slot;
} knn_entry;

/* ---- orders and selections ------------------------------------------------------------------ */

/* (squared distance, global id): particles are distinct, so the order is total. The ids (the
 * caller's array, in storage order) are read only on a tie of distances. */
static inline int entry_less(const kd_tree *t, knn_entry a, knn_entry b)
{
  if (__builtin_expect(a.d2 == b.d2, 0))
    return a.slot != b.slot && kd_slot_id(t, a.slot) < kd_slot_id(t, b.slot);
  return a.d2 < b.d2;
}

/* Puts the k-th smallest pair of e[begin, end) at k, no larger one before, no smaller one
 * after (Wirth's selection, median of three). */
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

static void insertion_sort(const kd_tree *t, knn_entry *e, int count)
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

/* Quicksort down to short runs, then insertion sort: HOP keeps 63 neighbours per query,
 * where insertion sort alone would cost ~2000 comparisons. */
static void sort_entries(const kd_tree *t, knn_entry *e, int count)
{
  while (count > 16) {
    const int mid = count / 2;
    select_entry(t, e, 0, count, mid); /* the median in place, smaller ones before it */
    if (mid < count - mid - 1) {
      sort_entries(t, e, mid);
      e += mid + 1;
      count -= mid + 1;
    } else {
      sort_entries(t, e + mid + 1, count - mid - 1);
      count = mid;
    }
  }
  insertion_sort(t, e, count);
}

/* The k smallest pairs of e[0, n) moved to e[0, k), in order (k small: one pass). */
static void order_prefix(const kd_tree *t, knn_entry *e, int n, int k)
{
  insertion_sort(t, e, k);
  for (int i = k; i < n; ++i) {
    if (!entry_less(t, e[i], e[k - 1]))
      continue;
    const knn_entry x = e[i];
    e[i] = e[k - 1];
    int j = k - 1;
    while (j > 0 && entry_less(t, x, e[j - 1])) {
      e[j] = e[j - 1];
      --j;
    }
    e[j] = x;
  }
}

/* The `want` smallest pairs of e[0, n) (all of them at or below the want-th smallest
 * distance) moved to e[0, want), in no particular order: the want-th distance by a selection
 * on the values (scratch: n doubles), the pairs below it by a branch-free compaction, and of
 * those tied with it the ones with the smallest ids. */
static double select_value(double *d, int begin, int end, int k);
static void nearest_set(const kd_tree *t, knn_entry *e, int n, int want, double *scratch)
{
  if (n <= want)
    return;
  for (int i = 0; i < n; ++i)
    scratch[i] = e[i].d2;
  const double edge = select_value(scratch, 0, n, want - 1);
  int below = 0;
  for (int i = 0; i < n; ++i) { /* the pairs below the edge to the front, in place */
    const knn_entry x = e[i];
    e[i] = e[below];
    e[below] = x;
    below += x.d2 < edge;
  }
  int tied = below;
  for (int i = below; i < n; ++i) {
    const knn_entry x = e[i];
    e[i] = e[tied];
    e[tied] = x;
    tied += x.d2 == edge;
  }
  if (tied > want) /* the smallest ids of the tied pairs */
    select_entry(t, e, below, tied, want - 1);
}

/* The k-th smallest of d[begin, end), moved to k, no larger value before it and no smaller
 * one after it (values only). Quickselect with branch-free partitions (the comparison only
 * decides whether the boundary moves) and median-of-three pivots; a second pass sets the
 * pivot's equals aside, so equal values cannot stall it. */
static double select_value(double *d, int begin, int end, int k)
{
  int l = begin, r = end;
  while (r - l > 1) {
    const double a = d[l], b = d[l + (r - l) / 2], c = d[r - 1];
    const double p = a < b ? (b < c ? b : (a < c ? c : a)) : (a < c ? a : (b < c ? c : b));
    int i = l;
    for (int j = l; j < r; ++j) {
      const double v = d[j];
      d[j] = d[i];
      d[i] = v;
      i += v < p;
    }
    if (k < i) {
      r = i;
      continue;
    }
    int e = i; /* [i, r) holds values >= p: those equal to p to its front */
    for (int j = i; j < r; ++j) {
      const double v = d[j];
      d[j] = d[e];
      d[e] = v;
      e += v <= p;
    }
    if (k < e)
      return d[k];
    l = e;
  }
  return d[k];
}

enum { KNN_BUCKETS = 64 };

/* What one query takes from its m scanned distances d2 (slots in slot), all within top2 and at
 * least K of them: the K-th and (n_dens + 1)-th smallest values (ties of distance change no
 * value) and, when n_keep > 0, a list of pairs holding every pair at or below the
 * (n_keep + 1)-th smallest value (a superset: whole buckets). A histogram of KNN_BUCKETS equal
 * buckets over [0, top2] (a value's bucket is monotone in it, so whole buckets are in order)
 * finds each rank's bucket; one pass then copies out the values of the K-th's bucket and the
 * pairs of the buckets up to the (n_keep + 1)-th's, and a selection among the few copied
 * values finishes. The (n_dens + 1)-th is the K-th in the usual case (K = n_dens + 1); else
 * its bucket gets a pass of its own. */
typedef struct query_ranks {
  double kth2, dens2; /* the K-th and (n_dens + 1)-th smallest squared distances */
  int n_pairs;        /* the pairs copied to `pairs` */
} query_ranks;

/* The bucket holding the value of 0-based rank `rank`, and the number of values below it. */
static int bucket_of_rank(const int *count, int rank, int *below)
{
  int n = 0, b = 0;
  while (n + count[b] <= rank)
    n += count[b++];
  *below = n;
  return b;
}

static query_ranks rank_query(const double *restrict d2, const int32_t *restrict slot, int m, double top2, int K,
                              int n_dens, int n_keep, double *restrict scratch, int32_t *restrict bucket,
                              knn_entry *restrict pairs)
{
  const double scale = top2 > 0 ? KNN_BUCKETS / top2 : 0.0;
  for (int i = 0; i < m; ++i) { /* vectorises */
    const double b = d2[i] * scale;
    bucket[i] = b < KNN_BUCKETS - 1 ? (int32_t)b : KNN_BUCKETS - 1;
  }
  int count[KNN_BUCKETS] = {0};
  for (int i = 0; i < m; ++i)
    ++count[bucket[i]];
  int below_k, below_keep = 0;
  const int bk = bucket_of_rank(count, K - 1, &below_k);
  const int b_keep = n_keep > 0 ? bucket_of_rank(count, n_keep, &below_keep) : -1;
  query_ranks out = {0, 0, 0};
  int n = 0, n_pairs = 0;
  for (int i = 0; i < m; ++i) { /* branch-free copies */
    const double v = d2[i];
    const int32_t b = bucket[i];
    scratch[n] = v;
    n += b == bk;
    pairs[n_pairs].d2 = v;
    pairs[n_pairs].slot = slot[i];
    n_pairs += b <= b_keep;
  }
  out.kth2 = select_value(scratch, 0, n, K - 1 - below_k);
  out.n_pairs = n_pairs;
  out.dens2 = out.kth2;
  if (n_dens > 0 && n_dens != K - 1) {
    int below_d;
    const int bd = bucket_of_rank(count, n_dens, &below_d);
    n = 0;
    for (int i = 0; i < m; ++i) {
      scratch[n] = d2[i];
      n += bucket[i] == bd;
    }
    out.dens2 = select_value(scratch, 0, n, n_dens - below_d);
  }
  return out;
}

/* ---- per-thread scratch ---------------------------------------------------------------------- */

typedef struct knn_scratch {
  kd_candidates c;
  int capacity;    /* of the four arrays below (particles in the listed leaves at least) */
  double *d2;      /* a query's distance to each scanned particle */
  int32_t *slot;   /* and its tree slot */
  double *value;   /* those within its ball, for the selections */
  knn_entry *near; /* the pairs of the nearest */
  int32_t *bucket; /* the histogram bucket of each distance */
} knn_scratch;

static void scratch_free(knn_scratch *w)
{
  if (w->c.stack)
    kd_candidates_free(&w->c);
  free(w->d2);
  free(w->slot);
  free(w->value);
  free(w->near);
  free(w->bucket);
}

/* Room for the particles of the current candidate list; 0 if memory ran out. */
static int scratch_fit(knn_scratch *w)
{
  int need = kd_candidates_size(&w->c);
  need = need < 1024 ? 1024 : need;
  if (need <= w->capacity)
    return 1;
  const size_t capacity = (size_t)(need > 2 * w->capacity ? need : 2 * w->capacity);
  if (phew_grow(&w->d2, capacity, sizeof *w->d2) || phew_grow(&w->slot, capacity, sizeof *w->slot) ||
      phew_grow(&w->value, capacity, sizeof *w->value) || phew_grow(&w->near, capacity, sizeof *w->near) ||
      phew_grow(&w->bucket, capacity, sizeof *w->bucket))
    return 0;
  w->capacity = (int)capacity;
  return 1;
}

/* ---- one query ------------------------------------------------------------------------------- */

enum { KNN_ANSWERED, KNN_WIDER };

/* Query j (tree slot self) from the candidate list, which holds every particle within r2 of
 * it; try2[0 .. n_try): smaller radii to try first, increasing; bound2: a radius known to hold K particles, or
 * INFINITY. Writes the outputs and puts the K-th squared distance in *kth2 (KNN_ANSWERED), or, if the K-th distance may
 * lie beyond r2, a bound for it in *kth2 (KNN_WIDER: bound2, else the K-th smallest distance to the listed particles,
 * infinite if they are fewer than K). */
static int answer(const kd_tree *t, const knn_query *kq, int K, knn_scratch *w, double r2, const double *try2,
                  int n_try, double bound2, int32_t j, int32_t self, double *kth2)
{
  kd_candidates *c = &w->c;
  double x[3];
  kd_position(t, self, x);
  int m = 0;
  double top2 = r2; /* the radius of the scan that found them */
  for (int i = 0; i < n_try && m < K; ++i) {
    m = kd_candidates_scan(t, c, x, try2[i], w->d2, w->slot);
    top2 = try2[i];
  }
  if (m < K) {
    m = kd_candidates_scan(t, c, x, r2, w->d2, w->slot);
    top2 = r2;
  }
  if (m < K && bound2 < INFINITY) {
    *kth2 = bound2;
    return KNN_WIDER;
  }
  if (m < K) {
    const int all = kd_candidates_scan(t, c, x, INFINITY, w->d2, w->slot);
    *kth2 = all >= K ? select_value(w->d2, 0, all, K - 1) : INFINITY;
    return KNN_WIDER;
  }
  const query_ranks found = rank_query(w->d2, w->slot, m, top2, K, kq->n_dens, kq->n_keep, w->value, w->bucket,
                                       w->near);
  const double k2 = found.kth2;
  if (kq->reach)
    kq->reach[j] = sqrt(k2);
  if (kq->n_dens > 0)
    kq->h[j] = 0.5 * sqrt(found.dens2);
  if (kq->n_keep > 0) {
    /* the pairs copied hold the n_keep + 1 nearest: select them, in order */
    knn_entry *e = w->near;
    const int want = kq->n_keep + 1;
    if (kq->n_ordered > 0 && kq->n_ordered < kq->n_keep) {
      nearest_set(t, e, found.n_pairs, want, w->value);
      order_prefix(t, e, want, kq->n_ordered + 1);
    } else {
      if (found.n_pairs > want)
        select_entry(t, e, 0, found.n_pairs, want - 1);
      sort_entries(t, e, want);
    }
    int32_t *out = kq->nearest + (int64_t)j * kq->n_keep;
    int k = 0;
    for (int i = 0; i < want && k < kq->n_keep; ++i)
      if (e[i].slot != self)
        out[k++] = t->index[e[i].slot];
  }
  *kth2 = k2;
  return KNN_ANSWERED;
}

/* ---- the batch ----------------------------------------------------------------------------- */

typedef struct knn_job {
  const kd_tree *t;
  const knn_query *q;
  int K;
  const int32_t *query, *slot; /* the queries in tree order */
  const int64_t *task_query;   /* per task: its first query (n_tasks + 1) */
  knn_scratch *scratch;        /* per thread */
  uint8_t *done;               /* per query (tree order): answered */
  int *no_memory;              /* per task */
} knn_job;

static void knn_task(void *context, int thread, int64_t task)
{
  const knn_job *job = context;
  const kd_tree *t = job->t;
  knn_scratch *w = &job->scratch[thread];
  const int K = job->K;
  const int64_t first_leaf = kd_first_leaf(t), n_leaves = (int64_t)1 << t->depth;
  const int64_t last_leaf = (task + 1) * KNN_LEAVES_PER_TASK < n_leaves ? (task + 1) * KNN_LEAVES_PER_TASK : n_leaves;
  int64_t k = job->task_query[task];
  const int64_t k_end = job->task_query[task + 1];
  double guess2 = -1;    /* the previous leaf's largest K-th squared distance; -1: none yet */
  int64_t previous = -1; /* the previous query answered: its slot and K-th squared distance */
  double previous_kth2 = 0;
  job->no_memory[task] = 0;
  for (int64_t leaf = task * KNN_LEAVES_PER_TASK; leaf < last_leaf && k < k_end; ++leaf) {
    int64_t begin, end;
    kd_node_range(t, first_leaf + leaf, t->depth, &begin, &end);
    const int64_t k_first = k;
    while (k < k_end && job->slot[k] < end)
      ++k;
    if (k == k_first)
      continue;
    const kd_node *box = &t->node[first_leaf + leaf];
    double r2;
    if (guess2 < 0) {
      const double dx = box->hi[0] - box->lo[0], dy = box->hi[1] - box->lo[1], dz = box->hi[2] - box->lo[2];
      r2 = ((dx * dx + dy * dy) + dz * dz) * (KNN_FIRST_GUESS * KNN_FIRST_GUESS);
    } else {
      r2 = guess2 * (KNN_LEAF_SLACK * KNN_LEAF_SLACK);
    }
    double largest = 0;
    /* at most three rounds: the guess, the largest bound, everything (the bounds are
     * distances to K particles, all of them listed in the second round) */
    for (int round = 0; round < 3; ++round) {
      if (!kd_tree_gather(t, box->lo, box->hi, r2, &w->c) || !scratch_fit(w)) {
        job->no_memory[task] = 1;
        return;
      }
      double wider2 = 0;
      for (int64_t i = k_first; i < k; ++i) {
        if (job->done[i])
          continue;
        const int32_t self = job->slot[i];
        /* radii to try: the previous query's K-th distance plus a part of the step (a guess), then
         * that distance plus the step between the two (certain, by the triangle inequality,
         * with a slack far above the rounding), both if below R */
        double try2[2], bound2 = INFINITY;
        int n_try = 0;
        if (previous >= 0) {
          double a[3], b[3];
          kd_position(t, previous, a);
          kd_position(t, self, b);
          const double step = particle_distance2(&t->box, a, b);
          const double g = sqrt(previous_kth2) + KNN_QUERY_STEP * sqrt(step);
          const double guess = g * g;
          const double r = (sqrt(previous_kth2) + sqrt(step)) * (1 + 1e-9);
          if (guess < r * r && guess < r2)
            try2[n_try++] = guess;
          if (r * r < r2)
            try2[n_try++] = r * r;
          bound2 = r * r;
        }
        double kth2;
        if (answer(t, job->q, K, w, r2, try2, n_try, bound2, job->query[i], self, &kth2) == KNN_WIDER) {
          wider2 = kth2 > wider2 ? kth2 : wider2;
          continue;
        }
        job->done[i] = 1;
        largest = kth2 > largest ? kth2 : largest;
        previous = self;
        previous_kth2 = kth2;
      }
      if (wider2 == 0)
        break;
      r2 = round == 0 ? wider2 : INFINITY;
    }
    guess2 = largest;
  }
}

phew_status knn_search(const kd_tree *tree, knn_query *q, call_result *result)
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
  const int64_t n_leaves = (int64_t)1 << tree->depth;
  const int64_t n_tasks = (n_leaves + KNN_LEAVES_PER_TASK - 1) / KNN_LEAVES_PER_TASK;
  int threads = threads_resolve(q->n_threads);
  if (threads > n_tasks)
    threads = (int)n_tasks;
  knn_scratch *scratch = calloc((size_t)threads, sizeof *scratch);
  int64_t *task_query = phew_malloc((size_t)n_tasks + 1, sizeof *task_query);
  uint8_t *done = phew_calloc((size_t)q->n, sizeof *done);
  int *no_memory = calloc((size_t)n_tasks, sizeof *no_memory);
  int ok = scratch && task_query && done && no_memory;
  for (int i = 0; ok && i < threads; ++i)
    ok = kd_candidates_init(&scratch[i].c, tree) == PHEW_OK && scratch_fit(&scratch[i]);
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
    knn_job job = {tree, q, (int)need, query, slot, task_query, scratch, done, no_memory};
    threads_run(threads, n_tasks, knn_task, &job);
    for (int64_t task = 0; task < n_tasks; ++task)
      ok = ok && !no_memory[task];
  }
  if (!ok)
    status = phew_fail(result, PHEW_ERROR_MEMORY, "neighbour search of %lld queries: out of memory", (long long)q->n);
  if (scratch)
    for (int i = 0; i < threads; ++i)
      scratch_free(&scratch[i]);
  free(scratch);
  free(task_query);
  free(done);
  free(no_memory);
  free(query);
  free(slot);
  return status;
}
