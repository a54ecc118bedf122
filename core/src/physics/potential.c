/* Softened gravitational potentials of a structure's members (physics.h).
 *
 * Every sum of point masses runs in four interleaved partial sums (sum_point_masses), so that
 * it vectorises. Small structures (at most direct_max members) sum every other member
 * directly, in the members' order. Larger ones use an octree:
 * - the root is the cube centred on the middle of the members' bounding box, with the box's
 *   largest side; a cell with more than OCT_LEAF members is split into its eight octants (a
 *   member goes to the upper half of an axis when its coordinate is >= the cell's centre),
 *   down to OCT_MAX_DEPTH; the members keep their order within every cell;
 * - a cell's mass and centre of mass are summed over its members in that order (a leaf) or
 *   over its children in octant order;
 * - the members of a group (a cell of at most OCT_GROUP members, or a leaf, whose parent has
 *   more) share one walk of the tree, depth first, children in octant order: a cell of side s
 *   other than the group is taken whole (mass at its centre of mass, softened like a particle)
 *   when the bounding box of the group's members lies outside the cell's cube and s < theta d,
 *   d the distance from the cell's centre of mass to the nearest point of that box (so every
 *   member meets the one-member criterion: the error bound is that of a walk per member, the
 *   walk's cost is shared); a leaf that is not taken whole, and the group, add their members
 *   one by one, the member itself left out.
 * Every sum runs in an order fixed by the members' order: the same bits on any thread count,
 * and on any rank that holds the same members in the same order. */
#include "physics.h"
#include "threads.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { OCT_LEAF = 16, OCT_GROUP = 128, OCT_MAX_DEPTH = 48, OCT_TASK = 64 };

typedef struct oct_node {
  double centre[3]; /* of the cube */
  double half;      /* half its side */
  double com[3];
  double mass;
  int64_t begin, end; /* members in tree order */
  int64_t child;      /* first child (the children are consecutive), -1 for a leaf */
  int32_t n_children;
  int32_t depth;
} oct_node;

typedef struct octree {
  int64_t n_nodes, capacity;
  oct_node *node;
  int64_t *index;        /* tree slot -> member */
  double *x, *y, *z, *m; /* per tree slot */
} octree;

static void octree_free(octree *t)
{
  free(t->node);
  free(t->index);
  free(t->x);
  free(t->y);
  free(t->z);
  free(t->m);
  memset(t, 0, sizeof *t);
}

static int64_t add_node(octree *t, const double centre[3], double half, int64_t begin, int64_t end, int32_t depth)
{
  if (t->n_nodes == t->capacity) {
    const int64_t capacity = 2 * t->capacity + 64;
    if (phew_grow(&t->node, (size_t)capacity, sizeof *t->node))
      return -1;
    t->capacity = capacity;
  }
  oct_node *v = &t->node[t->n_nodes];
  memcpy(v->centre, centre, sizeof v->centre);
  v->half = half;
  v->begin = begin;
  v->end = end;
  v->child = -1;
  v->n_children = 0;
  v->depth = depth;
  return t->n_nodes++;
}

/* The build's scratch, as long as the members: the new order of a node's slots, and one column
 * of it at a time. */
typedef struct split_scratch {
  int64_t *slot, *moved;
  double *value;
} split_scratch;

/* Splits node v into its non-empty octants (a stable counting sort of its slots). */
static int split_node(octree *t, int64_t v, const split_scratch *w)
{
  const oct_node node = t->node[v];
  int64_t count[8] = {0}, start[9];
  for (int64_t s = node.begin; s < node.end; ++s) {
    const int o = (t->x[s] >= node.centre[0]) | (t->y[s] >= node.centre[1]) << 1 | (t->z[s] >= node.centre[2]) << 2;
    ++count[o];
  }
  start[0] = node.begin;
  for (int o = 0; o < 8; ++o)
    start[o + 1] = start[o] + count[o];
  int64_t cursor[8];
  memcpy(cursor, start, sizeof cursor);
  for (int64_t s = node.begin; s < node.end; ++s) {
    const int o = (t->x[s] >= node.centre[0]) | (t->y[s] >= node.centre[1]) << 1 | (t->z[s] >= node.centre[2]) << 2;
    w->slot[cursor[o]++ - node.begin] = s;
  }
  /* permute the slots' contents by w->slot (index first, then the coordinates) */
  const int64_t n = node.end - node.begin;
  double *column[4] = {t->x, t->y, t->z, t->m};
  for (int64_t k = 0; k < n; ++k)
    w->moved[k] = t->index[w->slot[k]];
  memcpy(t->index + node.begin, w->moved, (size_t)n * sizeof *w->moved);
  for (int c = 0; c < 4; ++c) {
    for (int64_t k = 0; k < n; ++k)
      w->value[k] = column[c][w->slot[k]];
    memcpy(column[c] + node.begin, w->value, (size_t)n * sizeof *w->value);
  }
  const double h = 0.5 * node.half;
  int64_t first = -1;
  int32_t n_children = 0;
  for (int o = 0; o < 8; ++o) {
    if (count[o] == 0)
      continue;
    const double centre[3] = {node.centre[0] + ((o & 1) ? h : -h), node.centre[1] + ((o & 2) ? h : -h),
                              node.centre[2] + ((o & 4) ? h : -h)};
    const int64_t c = add_node(t, centre, h, start[o], start[o + 1], node.depth + 1);
    if (c < 0)
      return -1;
    if (first < 0)
      first = c;
    ++n_children;
  }
  t->node[v].child = first;
  t->node[v].n_children = n_children;
  return 0;
}

/* Masses and centres of mass, children (created after their parents) first. */
static void node_moments(octree *t)
{
  for (int64_t v = t->n_nodes - 1; v >= 0; --v) {
    oct_node *node = &t->node[v];
    double mass = 0.0, mx = 0.0, my = 0.0, mz = 0.0;
    if (node->child < 0) {
      for (int64_t s = node->begin; s < node->end; ++s) {
        mass += t->m[s];
        mx += t->m[s] * t->x[s];
        my += t->m[s] * t->y[s];
        mz += t->m[s] * t->z[s];
      }
    } else {
      for (int64_t c = node->child; c < node->child + node->n_children; ++c) {
        const oct_node *k = &t->node[c];
        mass += k->mass;
        mx += k->mass * k->com[0];
        my += k->mass * k->com[1];
        mz += k->mass * k->com[2];
      }
    }
    node->mass = mass;
    node->com[0] = mx / mass;
    node->com[1] = my / mass;
    node->com[2] = mz / mass;
  }
}

static phew_status octree_build(octree *t, const double *position, const double *mass, int64_t n)
{
  memset(t, 0, sizeof *t);
  t->index = phew_malloc((size_t)n, sizeof *t->index);
  t->x = phew_malloc((size_t)n, sizeof *t->x);
  t->y = phew_malloc((size_t)n, sizeof *t->y);
  t->z = phew_malloc((size_t)n, sizeof *t->z);
  t->m = phew_malloc((size_t)n, sizeof *t->m);
  split_scratch w = {phew_malloc((size_t)n, sizeof *w.slot), phew_malloc((size_t)n, sizeof *w.moved),
                     phew_malloc((size_t)n, sizeof *w.value)};
  if (!t->index || !t->x || !t->y || !t->z || !t->m || !w.slot || !w.moved || !w.value) {
    free(w.slot);
    free(w.moved);
    free(w.value);
    return PHEW_ERROR_MEMORY;
  }
  double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
  for (int64_t i = 0; i < n; ++i) {
    t->index[i] = i;
    t->x[i] = position[3 * i];
    t->y[i] = position[3 * i + 1];
    t->z[i] = position[3 * i + 2];
    t->m[i] = mass ? mass[i] : 1.0;
    for (int d = 0; d < 3; ++d) {
      lo[d] = position[3 * i + d] < lo[d] ? position[3 * i + d] : lo[d];
      hi[d] = position[3 * i + d] > hi[d] ? position[3 * i + d] : hi[d];
    }
  }
  double side = 0.0, centre[3];
  for (int d = 0; d < 3; ++d) {
    side = hi[d] - lo[d] > side ? hi[d] - lo[d] : side;
    centre[d] = 0.5 * (lo[d] + hi[d]);
  }
  phew_status status = add_node(t, centre, 0.5 * side, 0, n, 0) < 0 ? PHEW_ERROR_MEMORY : PHEW_OK;
  /* nodes are split in creation order: a queue over the node array itself */
  for (int64_t v = 0; status == PHEW_OK && v < t->n_nodes; ++v)
    if (t->node[v].end - t->node[v].begin > OCT_LEAF && t->node[v].depth < OCT_MAX_DEPTH && split_node(t, v, &w) != 0)
      status = PHEW_ERROR_MEMORY;
  free(w.slot);
  free(w.moved);
  free(w.value);
  if (status == PHEW_OK)
    node_moments(t);
  return status;
}

/* Point masses at (x, y, z) with masses m, whose sum a member takes: cells taken whole and the
 * members of opened leaves (the octree), or every member (direct sums). */
typedef struct point_masses {
  int64_t n, capacity;
  double *x, *y, *z, *m;
} point_masses;

static void point_masses_free(point_masses *w)
{
  free(w->x);
  free(w->y);
  free(w->z);
  free(w->m);
  memset(w, 0, sizeof *w);
}

static int point_masses_put(point_masses *w, double x, double y, double z, double m)
{
  if (w->n == w->capacity) {
    const size_t capacity = 2 * (size_t)w->capacity + 256;
    if (phew_grow(&w->x, capacity, sizeof *w->x) || phew_grow(&w->y, capacity, sizeof *w->y) ||
        phew_grow(&w->z, capacity, sizeof *w->z) || phew_grow(&w->m, capacity, sizeof *w->m))
      return -1;
    w->capacity = (int64_t)capacity;
  }
  w->x[w->n] = x;
  w->y[w->n] = y;
  w->z[w->n] = z;
  w->m[w->n] = m;
  ++w->n;
  return 0;
}

/* sum_j m_j / sqrt(r_j^2 + eps2) over the point masses but `self` (-1: none) seen from p: four
 * partial sums, point j in sum j mod 4 (so that the loop vectorises), added as
 * (s0 + s1) + (s2 + s3). The order is fixed by the list: the same bits on every processor. */
PHEW_VECTOR_CLONES
static double sum_point_masses(const point_masses *w, int64_t self, const double p[3], double eps2)
{
  const double *restrict x = w->x, *restrict y = w->y, *restrict z = w->z, *restrict m = w->m;
  double acc[4] = {0.0, 0.0, 0.0, 0.0};
  int64_t j = 0;
  for (; j + 4 <= w->n; j += 4)
    for (int l = 0; l < 4; ++l) {
      const double dx = x[j + l] - p[0], dy = y[j + l] - p[1], dz = z[j + l] - p[2];
      const double term = m[j + l] / sqrt(((dx * dx + dy * dy) + dz * dz) + eps2);
      acc[l] += j + l == self ? 0.0 : term;
    }
  for (; j < w->n; ++j) {
    const double dx = x[j] - p[0], dy = y[j] - p[1], dz = z[j] - p[2];
    const double term = m[j] / sqrt(((dx * dx + dy * dy) + dz * dz) + eps2);
    acc[j & 3] += j == self ? 0.0 : term;
  }
  return (acc[0] + acc[1]) + (acc[2] + acc[3]);
}

typedef struct direct_job {
  const point_masses *all; /* every member, in the members' order */
  double eps2, scale;
  double *phi;
} direct_job;

static void direct_task(void *context, int thread, int64_t task)
{
  (void)thread;
  const direct_job *job = context;
  const int64_t n = job->all->n, end = (task + 1) * OCT_TASK < n ? (task + 1) * OCT_TASK : n;
  for (int64_t i = task * OCT_TASK; i < end; ++i) {
    const double p[3] = {job->all->x[i], job->all->y[i], job->all->z[i]};
    job->phi[i] = job->scale * sum_point_masses(job->all, i, p, job->eps2);
  }
}

static phew_status direct_sums(const double *position, const double *mass, int64_t n, const potential_params *p,
                               double *phi)
{
  point_masses all = {0, 0, NULL, NULL, NULL, NULL};
  phew_status status = PHEW_OK;
  for (int64_t i = 0; status == PHEW_OK && i < n; ++i)
    if (point_masses_put(&all, position[3 * i], position[3 * i + 1], position[3 * i + 2], mass ? mass[i] : 1.0))
      status = PHEW_ERROR_MEMORY;
  if (status == PHEW_OK) {
    direct_job job = {&all, p->eps2, -p->g_over_a, phi};
    threads_run(p->n_threads, (n + OCT_TASK - 1) / OCT_TASK, direct_task, &job);
  }
  point_masses_free(&all);
  return status;
}

/* Per thread: the interaction list of the leaf being worked on and the walk's stack. */
typedef struct walk_scratch {
  point_masses list;
  int64_t *stack;
  int failed; /* a list could not grow */
} walk_scratch;

typedef struct tree_job {
  const octree *t;
  const int64_t *group; /* the groups' node numbers */
  double eps2, theta2, scale;
  walk_scratch *scratch; /* per thread */
  double *phi;
} tree_job;

/* Cell v is taken whole for every member of a leaf whose members lie in [lo, hi]: the box lies
 * outside the cell's cube, and s < theta d for the box's point nearest the cell's centre of
 * mass, so that every member would take it whole by itself. */
static int taken_whole(const oct_node *v, const double lo[3], const double hi[3], double theta2)
{
  int outside = 0;
  double d2 = 0.0;
  for (int d = 0; d < 3; ++d) {
    outside |= lo[d] > v->centre[d] + v->half || hi[d] < v->centre[d] - v->half;
    const double gap = lo[d] > v->com[d] ? lo[d] - v->com[d] : (v->com[d] > hi[d] ? v->com[d] - hi[d] : 0.0);
    d2 += gap * gap;
  }
  const double side = 2.0 * v->half;
  return outside && side * side < theta2 * d2;
}

/* The interaction list of a group (one walk shared by its members): cells taken whole as point
 * masses at their centres of mass, the members of the leaves reached, and the group's own
 * members, which start at *own in the list. -1 without memory. */
static int group_list(const octree *t, int64_t group, double theta2, walk_scratch *w, int64_t *own)
{
  const oct_node *self = &t->node[group];
  double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
  for (int64_t s = self->begin; s < self->end; ++s) {
    const double p[3] = {t->x[s], t->y[s], t->z[s]};
    for (int d = 0; d < 3; ++d) {
      lo[d] = p[d] < lo[d] ? p[d] : lo[d];
      hi[d] = p[d] > hi[d] ? p[d] : hi[d];
    }
  }
  w->list.n = 0;
  int64_t top = 0;
  w->stack[top++] = 0;
  while (top > 0) {
    const int64_t v = w->stack[--top];
    const oct_node *node = &t->node[v];
    if (v != group && taken_whole(node, lo, hi, theta2)) {
      if (point_masses_put(&w->list, node->com[0], node->com[1], node->com[2], node->mass))
        return -1;
      continue;
    }
    if (node->child < 0 || v == group) {
      if (v == group)
        *own = w->list.n;
      for (int64_t s = node->begin; s < node->end; ++s)
        if (point_masses_put(&w->list, t->x[s], t->y[s], t->z[s], t->m[s]))
          return -1;
      continue;
    }
    for (int64_t c = node->child + node->n_children - 1; c >= node->child; --c)
      w->stack[top++] = c;
  }
  return 0;
}

static void tree_task(void *context, int thread, int64_t task)
{
  tree_job *job = context;
  const octree *t = job->t;
  const int64_t group = job->group[task];
  walk_scratch *w = &job->scratch[thread];
  int64_t own = 0;
  if (w->failed || group_list(t, group, job->theta2, w, &own) != 0) {
    w->failed = 1;
    return;
  }
  for (int64_t s = t->node[group].begin; s < t->node[group].end; ++s) {
    const double p[3] = {t->x[s], t->y[s], t->z[s]};
    job->phi[t->index[s]] = job->scale * sum_point_masses(&w->list, own + (s - t->node[group].begin), p, job->eps2);
  }
}

/* The groups: the cells of at most OCT_GROUP members (or leaves) whose parent has more, or the
 * root. Returns how many. */
static int64_t find_groups(const octree *t, int64_t *group)
{
  const oct_node *node = t->node;
  if (node[0].end - node[0].begin <= OCT_GROUP || node[0].child < 0) {
    group[0] = 0;
    return 1;
  }
  int64_t n = 0;
  for (int64_t v = 0; v < t->n_nodes; ++v) {
    if (node[v].child < 0 || node[v].end - node[v].begin <= OCT_GROUP)
      continue;
    for (int64_t c = node[v].child; c < node[v].child + node[v].n_children; ++c)
      if (node[c].child < 0 || node[c].end - node[c].begin <= OCT_GROUP)
        group[n++] = c;
  }
  return n;
}

static phew_status tree_sums(const double *position, const double *mass, int64_t n, const potential_params *p,
                             double *phi)
{
  octree t;
  phew_status status = octree_build(&t, position, mass, n);
  int64_t *group = status == PHEW_OK ? phew_malloc((size_t)t.n_nodes, sizeof *group) : NULL;
  const int64_t n_groups = group ? find_groups(&t, group) : 0;
  /* a walk holds at most 7 siblings per level on the stack, plus one */
  const int64_t stack_size = 8 * (OCT_MAX_DEPTH + 2);
  walk_scratch *scratch = phew_calloc((size_t)p->n_threads, sizeof *scratch);
  if (!group || !scratch)
    status = PHEW_ERROR_MEMORY;
  for (int k = 0; status == PHEW_OK && k < p->n_threads; ++k)
    if (!(scratch[k].stack = phew_malloc((size_t)stack_size, sizeof *scratch[k].stack)))
      status = PHEW_ERROR_MEMORY;
  if (status == PHEW_OK) {
    tree_job job = {&t, group, p->eps2, p->theta * p->theta, -p->g_over_a, scratch, phi};
    threads_run(p->n_threads, n_groups, tree_task, &job);
  }
  for (int k = 0; scratch && k < p->n_threads; ++k) {
    status = scratch[k].failed ? PHEW_ERROR_MEMORY : status;
    point_masses_free(&scratch[k].list);
    free(scratch[k].stack);
  }
  free(scratch);
  free(group);
  octree_free(&t);
  return status;
}

phew_status potential_compute(const double *position, const double *mass, int64_t n, const potential_params *p,
                              double *phi)
{
  if (n <= 0)
    return PHEW_OK;
  return n <= p->direct_max ? direct_sums(position, mass, n, p, phi) : tree_sums(position, mass, n, p, phi);
}
