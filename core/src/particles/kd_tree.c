/* The kd-tree (kd_tree.h): a balanced tree built by splitting every node at its middle
 * particle along the widest side of its bounding box, level by level, the nodes of a level
 * in parallel. The layout depends only on the particles and their storage order, never on
 * the number of threads; the searches' answers do not depend on the layout at all. */
#include "kd_tree.h"
#include "threads.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- selection: the k-th smallest coordinate along an axis, moving whole particles ---- */

static inline void swap_particles(double *const *pos, int32_t *index, int64_t a, int64_t b)
{
  for (int d = 0; d < 3; ++d) {
    const double x = pos[d][a];
    pos[d][a] = pos[d][b];
    pos[d][b] = x;
  }
  const int32_t i = index[a];
  index[a] = index[b];
  index[b] = i;
}

/* Heapsort of [begin, end) by the coordinate: the fallback that bounds the selection's cost. */
static void sift_down(double *const *pos, int32_t *index, int64_t begin, int64_t root, int64_t count, int axis)
{
  for (;;) {
    int64_t child = 2 * root + 1;
    if (child >= count)
      return;
    if (child + 1 < count && pos[axis][begin + child] < pos[axis][begin + child + 1])
      ++child;
    if (!(pos[axis][begin + root] < pos[axis][begin + child]))
      return;
    swap_particles(pos, index, begin + root, begin + child);
    root = child;
  }
}

static void heapsort_axis(double *const *pos, int32_t *index, int64_t begin, int64_t end, int axis)
{
  const int64_t count = end - begin;
  for (int64_t r = count / 2 - 1; r >= 0; --r)
    sift_down(pos, index, begin, r, count, axis);
  for (int64_t last = count - 1; last > 0; --last) {
    swap_particles(pos, index, begin, begin + last);
    sift_down(pos, index, begin, 0, last, axis);
  }
}

/* Reorders [begin, end) so that slot k holds the particle that sorting by the coordinate
 * would put there, with no larger coordinate before it and no smaller one after it (Wirth's
 * selection with a median-of-three pivot: equal coordinates split evenly; after too many
 * rounds the rest is sorted, so the cost stays O(n log n) at worst). */
static void select_axis(double *const *pos, int32_t *index, int64_t begin, int64_t end, int64_t k, int axis)
{
  int64_t l = begin, r = end - 1;
  int rounds = 0;
  int64_t size = end - begin;
  while (size > 1) {
    ++rounds;
    size >>= 1;
  }
  const int max_rounds = 2 * rounds + 8;
  rounds = 0;
  while (l < r) {
    if (++rounds > max_rounds) {
      heapsort_axis(pos, index, l, r + 1, axis);
      return;
    }
    /* median of pos[l], pos[k], pos[r] moved to k */
    const int64_t m = k;
#define KEY(s) pos[axis][s]
    if (KEY(m) < KEY(l))
      swap_particles(pos, index, m, l);
    if (KEY(r) < KEY(l))
      swap_particles(pos, index, r, l);
    if (KEY(r) < KEY(m))
      swap_particles(pos, index, r, m);
    const double x = KEY(k);
    int64_t i = l, j = r;
    do {
      while (KEY(i) < x)
        ++i;
      while (x < KEY(j))
        --j;
      if (i <= j) {
        swap_particles(pos, index, i, j);
        ++i;
        --j;
      }
    } while (i <= j);
#undef KEY
    if (j < k)
      l = i;
    if (k < i)
      r = j;
  }
}

/* ---- building ---------------------------------------------------------------------------- */

typedef struct build_level {
  kd_tree *t;
  int level;
} build_level;

/* Task: node i of the level gets its bounding box and, above the leaves, is split. */
static void build_node(void *context, int thread, int64_t i)
{
  (void)thread;
  const build_level *b = context;
  kd_tree *t = b->t;
  const int level = b->level;
  const int64_t v = (((int64_t)1 << level) - 1) + i;
  int64_t begin, end;
  kd_node_range(t, v, level, &begin, &end);
  kd_node *node = &t->node[v];
  double *const pos[3] = {t->x, t->y, t->z};
  for (int d = 0; d < 3; ++d) {
    double lo = pos[d][begin], hi = lo;
    for (int64_t s = begin + 1; s < end; ++s) {
      lo = pos[d][s] < lo ? pos[d][s] : lo;
      hi = pos[d][s] > hi ? pos[d][s] : hi;
    }
    node->lo[d] = lo;
    node->hi[d] = hi;
  }
  if (level == t->depth)
    return;
  int axis = 0;
  for (int d = 1; d < 3; ++d)
    if (node->hi[d] - node->lo[d] > node->hi[axis] - node->lo[axis])
      axis = d;
  const int64_t split = ((2 * i + 1) * t->n) >> (level + 1); /* first slot of the right child */
  select_axis(pos, t->index, begin, end, split, axis);
}

phew_status kd_tree_build(kd_tree **tree, int64_t n, const double *position, const int64_t *id, const particle_box *box,
                          int n_threads, call_result *result)
{
  if (!tree)
    return phew_fail(result, PHEW_ERROR_ARGUMENT, "kd_tree_build: no place for the tree");
  *tree = NULL;
  if (n < 0 || n >= ((int64_t)1 << 31))
    return phew_fail(result, PHEW_ERROR_ARGUMENT,
                     "kd-tree of %lld particles: a tree holds at most 2^31 - 1 particles (split the particles "
                     "over more ranks)",
                     (long long)n);
  if (!box || (n > 0 && (!position || !id)))
    return phew_fail(result, PHEW_ERROR_ARGUMENT, "kd_tree_build: missing positions, ids or box");
  for (int d = 0; d < 3; ++d)
    if (box->periodic[d] && !(box->size[d] > 0 && isfinite(box->size[d])))
      return phew_fail(result, PHEW_ERROR_ARGUMENT,
                       "kd-tree: periodic axis %d has size %g (must be positive and finite)", d, box->size[d]);
  for (int64_t i = 0; i < 3 * n; ++i)
    if (!isfinite(position[i]))
      return phew_fail(result, PHEW_ERROR_DATA, "kd-tree: the particle with global id %lld has a non-finite position",
                       (long long)id[i / 3]);

  kd_tree *t = calloc(1, sizeof *t);
  if (!t)
    return phew_fail(result, PHEW_ERROR_MEMORY, "kd-tree: out of memory");
  t->n = n;
  t->position = position;
  t->id = id;
  t->box = *box;
  int depth = 0;
  while (((n + ((int64_t)1 << depth) - 1) >> depth) > KD_LEAF)
    ++depth;
  t->depth = depth;
  t->n_nodes = n > 0 ? ((int64_t)2 << depth) - 1 : 0;
  t->node = phew_malloc((size_t)t->n_nodes, sizeof *t->node);
  t->index = phew_malloc((size_t)n, sizeof *t->index);
  t->x = phew_malloc((size_t)n, sizeof *t->x);
  t->y = phew_malloc((size_t)n, sizeof *t->y);
  t->z = phew_malloc((size_t)n, sizeof *t->z);
  if (!t->node || !t->index || !t->x || !t->y || !t->z) {
    kd_tree_free(t);
    return phew_fail(result, PHEW_ERROR_MEMORY, "kd-tree of %lld particles: out of memory", (long long)n);
  }
  if (n > 0) {
    for (int64_t i = 0; i < n; ++i) {
      t->x[i] = position[3 * i];
      t->y[i] = position[3 * i + 1];
      t->z[i] = position[3 * i + 2];
      t->index[i] = (int32_t)i;
    }
    const int threads = threads_resolve(n_threads);
    for (int level = 0; level <= depth; ++level) {
      build_level b = {t, level};
      threads_run(threads, (int64_t)1 << level, build_node, &b);
    }
  }
  *tree = t;
  return PHEW_OK;
}

void kd_tree_free(kd_tree *tree)
{
  if (!tree)
    return;
  free(tree->node);
  free(tree->x);
  free(tree->y);
  free(tree->z);
  free(tree->index);
  free(tree);
}

int64_t kd_tree_size(const kd_tree *tree) { return tree ? tree->n : 0; }

void kd_tree_moved(kd_tree *tree, const double *position, const int64_t *id)
{
  tree->position = position;
  tree->id = id;
}

/* ---- queries in tree order -------------------------------------------------------------- */

phew_status kd_tree_order_queries(const kd_tree *t, int64_t n, const int32_t *subset, int32_t **query, int32_t **slot,
                                  call_result *result)
{
  *query = NULL;
  *slot = NULL;
  if (n < 0 || (!subset && n > t->n) || n >= ((int64_t)1 << 31))
    return phew_fail(result, PHEW_ERROR_ARGUMENT, "%lld queries for a tree of %lld particles", (long long)n,
                     (long long)t->n);
  if (subset)
    for (int64_t j = 0; j < n; ++j)
      if (subset[j] < 0 || subset[j] >= t->n)
        return phew_fail(result, PHEW_ERROR_ARGUMENT, "query %lld is particle %ld, outside the tree's 0 .. %lld",
                         (long long)j, (long)subset[j], (long long)t->n - 1);
  int32_t *q = phew_malloc((size_t)n, sizeof *q), *s = phew_malloc((size_t)n, sizeof *s);
  /* the queries of each particle, as lists: first[particle], next[query] */
  int32_t *first = subset ? phew_malloc((size_t)t->n, sizeof *first) : NULL;
  int32_t *next = subset ? phew_malloc((size_t)n, sizeof *next) : NULL;
  if (!q || !s || (subset && (!first || !next))) {
    free(q);
    free(s);
    free(first);
    free(next);
    return phew_fail(result, PHEW_ERROR_MEMORY, "ordering %lld queries: out of memory", (long long)n);
  }
  int64_t k = 0;
  if (!subset) {
    for (int64_t slot_i = 0; slot_i < t->n; ++slot_i)
      if (t->index[slot_i] < n) {
        q[k] = t->index[slot_i];
        s[k++] = (int32_t)slot_i;
      }
  } else {
    for (int64_t i = 0; i < t->n; ++i)
      first[i] = -1;
    for (int64_t j = n - 1; j >= 0; --j) {
      next[j] = first[subset[j]];
      first[subset[j]] = (int32_t)j;
    }
    for (int64_t slot_i = 0; slot_i < t->n; ++slot_i)
      for (int32_t j = first[t->index[slot_i]]; j >= 0; j = next[j]) {
        q[k] = j;
        s[k++] = (int32_t)slot_i;
      }
    free(first);
    free(next);
  }
  *query = q;
  *slot = s;
  return PHEW_OK;
}

/* ---- candidate lists -------------------------------------------------------------------- */

static int candidates_grow(kd_candidates *c)
{
  if (c->n < c->capacity)
    return 1;
  const size_t capacity = c->capacity < 256 ? 256 : 2 * (size_t)c->capacity;
  for (int d = 0; d < 3; ++d)
    if (phew_grow(&c->lo[d], capacity, sizeof *c->lo[d]) || phew_grow(&c->hi[d], capacity, sizeof *c->hi[d]) ||
        phew_grow(&c->shift[d], capacity, sizeof *c->shift[d]))
      return 0;
  if (phew_grow(&c->bound, capacity, sizeof *c->bound) || phew_grow(&c->begin, capacity, sizeof *c->begin) ||
      phew_grow(&c->end, capacity, sizeof *c->end) || phew_grow(&c->uniform, capacity, sizeof *c->uniform) ||
      phew_grow(&c->near, capacity, sizeof *c->near))
    return 0;
  c->capacity = (int)capacity;
  return 1;
}

phew_status kd_candidates_init(kd_candidates *c, const kd_tree *t)
{
  memset(c, 0, sizeof *c);
  c->stack = phew_malloc((size_t)t->depth + 2, sizeof *c->stack);
  if (!c->stack || !candidates_grow(c)) {
    kd_candidates_free(c);
    return PHEW_ERROR_MEMORY;
  }
  return PHEW_OK;
}

void kd_candidates_free(kd_candidates *c)
{
  for (int d = 0; d < 3; ++d) {
    free(c->lo[d]);
    free(c->hi[d]);
    free(c->shift[d]);
  }
  free(c->bound);
  free(c->begin);
  free(c->end);
  free(c->uniform);
  free(c->near);
  free(c->stack);
  memset(c, 0, sizeof *c);
}

/* The nearest-image shift of particle_delta(axis, a, x) for every difference a - x in
 * [dl, dh]; 0 (with *uniform cleared) when the ends need different shifts (the difference is
 * monotone in a and x, the shift monotone in the difference). */
static inline double image_shift(const particle_box *box, int axis, double dl, double dh, int32_t *uniform)
{
  if (!box->periodic[axis])
    return 0.0;
  const double p = box->size[axis];
  const double sl = 2.0 * dl > p ? -p : (2.0 * dl < -p ? p : 0.0);
  const double sh = 2.0 * dh > p ? -p : (2.0 * dh < -p ? p : 0.0);
  *uniform &= sl == sh;
  return sl;
}

/* The walk of kd_tree_gather; periodic is a constant in each caller. */
static inline int gather_walk(const kd_tree *t, const double *lo, const double *hi, double r2, kd_candidates *c,
                              const int periodic)
{
  const int64_t first_leaf = kd_first_leaf(t);
  int32_t *stack = c->stack;
  int top = 0;
  stack[top++] = 0;
  c->n = 0;
  while (top > 0) {
    const int64_t v = stack[--top];
    const kd_node *node = &t->node[v];
    const double lb = periodic ? kd_box_distance2(&t->box, lo, hi, node->lo, node->hi)
                               : kd_plain_box_distance2(lo, hi, node->lo, node->hi);
    if (lb > r2)
      continue;
    if (v < first_leaf) {
      /* depth first, the left child next: the list comes out in tree order */
      stack[top++] = (int32_t)(2 * v + 2);
      stack[top++] = (int32_t)(2 * v + 1);
      continue;
    }
    if (!candidates_grow(c))
      return 0;
    const int k = c->n++;
    int64_t begin, end;
    kd_node_range(t, v, t->depth, &begin, &end);
    c->begin[k] = (int32_t)begin;
    c->end[k] = (int32_t)end;
    c->uniform[k] = 1;
    for (int d = 0; d < 3; ++d) {
      c->lo[d][k] = node->lo[d];
      c->hi[d][k] = node->hi[d];
      c->shift[d][k] = periodic ? image_shift(&t->box, d, lo[d] - node->hi[d], hi[d] - node->lo[d], &c->uniform[k])
                                : 0.0;
    }
    if (!c->uniform[k]) /* no bound: the infinite box */
      for (int d = 0; d < 3; ++d) {
        c->lo[d][k] = -INFINITY;
        c->hi[d][k] = INFINITY;
        c->shift[d][k] = 0.0;
      }
  }
  return 1;
}

int kd_tree_gather(const kd_tree *t, const double *lo, const double *hi, double r2, kd_candidates *c)
{
  if (kd_reaches_image(t, lo, hi, r2))
    return gather_walk(t, lo, hi, r2, c, 1);
  return gather_walk(t, lo, hi, r2, c, 0);
}

int kd_candidates_size(const kd_candidates *c)
{
  int n = 0;
  for (int k = 0; k < c->n; ++k)
    n += c->end[k] - c->begin[k];
  return n;
}

/* Per listed leaf, a lower bound of the squared distances from x to its particles: each
 * difference (x - m) + shift lies in [dl, dh] = [(x - hi) + shift, (x - lo) + shift] (rounding
 * is monotone), whose gap to 0 is max(dl, 0) + max(-dh, 0) (one of the two is 0 as dl <= dh).
 * Leaves that are not uniform have an infinite box: bound 0. Written to vectorise. */
__attribute__((always_inline)) static inline void leaf_bounds(kd_candidates *c, const double *x)
{
  double *restrict bound = c->bound;
  const int n = c->n;
  for (int k = 0; k < n; ++k)
    bound[k] = 0.0;
  for (int d = 0; d < 3; ++d) {
    const double *restrict lo = c->lo[d], *restrict hi = c->hi[d], *restrict shift = c->shift[d];
    const double xd = x[d];
    for (int k = 0; k < n; ++k) {
      const double dl = (xd - hi[k]) + shift[k], dh = (xd - lo[k]) + shift[k];
      const double a = dl > 0.0 ? dl : 0.0, b = -dh > 0.0 ? -dh : 0.0;
      const double gap = a + b;
      bound[k] += gap * gap; /* (gx^2 + gy^2) + gz^2, in that order */
    }
  }
}

/* The particles of the listed leaves within r2 of x (kd_candidates_scan). */
__attribute__((always_inline)) static inline int scan_leaves(const kd_tree *t, kd_candidates *c, const double *x,
                                                             double r2, double *restrict d2, int32_t *restrict slot)
{
  leaf_bounds(c, x);
  /* the leaves within r2, branch-free */
  const double *restrict bound = c->bound;
  int32_t *restrict near = c->near;
  int n_near = 0;
  for (int k = 0; k < c->n; ++k) {
    near[n_near] = k;
    n_near += bound[k] <= r2;
  }
  /* the distances to their particles */
  const double x0 = x[0], x1 = x[1], x2 = x[2];
  int m = 0;
  for (int i = 0; i < n_near; ++i) {
    const int k = near[i];
    const int32_t begin = c->begin[k], count = c->end[k] - begin;
    if (!c->uniform[k]) { /* the canonical formula */
      for (int32_t a = 0; a < count; ++a) {
        double p[3];
        kd_position(t, begin + a, p);
        d2[m + a] = particle_distance2(&t->box, x, p);
      }
    } else {
      const double sx = c->shift[0][k], sy = c->shift[1][k], sz = c->shift[2][k];
      const double *restrict px = t->x + begin, *restrict py = t->y + begin, *restrict pz = t->z + begin;
      double *restrict out = d2 + m;
      for (int32_t a = 0; a < count; ++a) {
        const double dx = (x0 - px[a]) + sx, dy = (x1 - py[a]) + sy, dz = (x2 - pz[a]) + sz;
        out[a] = (dx * dx + dy * dy) + dz * dz;
      }
    }
    for (int32_t a = 0; a < count; ++a)
      slot[m + a] = begin + a;
    m += count;
  }
  /* those within r2, in place */
  int kept = 0;
  for (int a = 0; a < m; ++a) {
    const double e = d2[a];
    const int32_t s = slot[a];
    d2[kept] = e;
    slot[kept] = s;
    kept += e <= r2;
  }
  return kept;
}

PHEW_VECTOR_CLONES
int kd_candidates_scan(const kd_tree *t, kd_candidates *c, const double *x, double r2, double *restrict d2,
                       int32_t *restrict slot)
{
  return scan_leaves(t, c, x, r2, d2, slot);
}
