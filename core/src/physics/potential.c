/* Softened gravitational potentials of a structure's members (physics.h).
 *
 * Small structures (at most direct_max members) sum every other member directly, in the
 * members' order. Larger ones use an octree:
 * - the root is the cube centred on the middle of the members' bounding box, with the box's
 *   largest side; a cell with more than OCT_LEAF members is split into its eight octants (a
 *   member goes to the upper half of an axis when its coordinate is >= the cell's centre),
 *   down to OCT_MAX_DEPTH; the members keep their order within every cell;
 * - a cell's mass and centre of mass are summed over its members in that order (a leaf) or
 *   over its children in octant order;
 * - a member walks the tree depth first, children in octant order: a cell of side s is taken
 *   whole (mass at its centre of mass, softened like a particle) when the member lies outside
 *   the cell's cube and s < theta d, d the distance to the cell's centre of mass; a leaf that
 *   is not taken whole adds its members one by one, the member itself left out.
 * Every sum runs in an order fixed by the members' order: the same bits on any thread count,
 * and on any rank that holds the same members in the same order. */
#include "physics.h"
#include "threads.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { OCT_LEAF = 16, OCT_MAX_DEPTH = 48, OCT_TASK = 64 };

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

typedef struct direct_job {
  const double *position, *mass;
  int64_t n;
  double eps2, scale;
  double *phi;
} direct_job;

static void direct_task(void *context, int thread, int64_t task)
{
  (void)thread;
  const direct_job *job = context;
  const int64_t end = (task + 1) * OCT_TASK < job->n ? (task + 1) * OCT_TASK : job->n;
  for (int64_t i = task * OCT_TASK; i < end; ++i) {
    const double *p = job->position + 3 * i;
    double sum = 0.0;
    for (int64_t j = 0; j < job->n; ++j) {
      const double *q = job->position + 3 * j;
      const double dx = q[0] - p[0], dy = q[1] - p[1], dz = q[2] - p[2];
      const double r2 = (dx * dx + dy * dy) + dz * dz;
      const double term = (job->mass ? job->mass[j] : 1.0) / sqrt(r2 + job->eps2);
      sum += j == i ? 0.0 : term;
    }
    job->phi[i] = job->scale * sum;
  }
}

typedef struct tree_job {
  const octree *t;
  double eps2, theta2, scale;
  int64_t **stacks; /* per thread */
  double *phi;
} tree_job;

static int taken_whole(const oct_node *v, const double *p, double theta2, double *d2)
{
  const double dx = v->com[0] - p[0], dy = v->com[1] - p[1], dz = v->com[2] - p[2];
  *d2 = (dx * dx + dy * dy) + dz * dz;
  const int outside = fabs(p[0] - v->centre[0]) > v->half || fabs(p[1] - v->centre[1]) > v->half ||
                      fabs(p[2] - v->centre[2]) > v->half;
  const double side = 2.0 * v->half;
  return outside && side * side < theta2 * *d2;
}

static double tree_sum(const octree *t, int64_t slot, double eps2, double theta2, int64_t *stack)
{
  const double p[3] = {t->x[slot], t->y[slot], t->z[slot]};
  double sum = 0.0;
  int64_t top = 0;
  stack[top++] = 0;
  while (top > 0) {
    const int64_t v = stack[--top];
    const oct_node *node = &t->node[v];
    double d2;
    if (v != 0 && taken_whole(node, p, theta2, &d2)) {
      sum += node->mass / sqrt(d2 + eps2);
      continue;
    }
    if (node->child < 0) {
      for (int64_t s = node->begin; s < node->end; ++s) {
        const double dx = t->x[s] - p[0], dy = t->y[s] - p[1], dz = t->z[s] - p[2];
        const double r2 = (dx * dx + dy * dy) + dz * dz;
        sum += s == slot ? 0.0 : t->m[s] / sqrt(r2 + eps2);
      }
      continue;
    }
    for (int64_t c = node->child + node->n_children - 1; c >= node->child; --c)
      stack[top++] = c;
  }
  return sum;
}

static void tree_task(void *context, int thread, int64_t task)
{
  const tree_job *job = context;
  const int64_t n = job->t->node[0].end;
  const int64_t end = (task + 1) * OCT_TASK < n ? (task + 1) * OCT_TASK : n;
  for (int64_t s = task * OCT_TASK; s < end; ++s)
    job->phi[job->t->index[s]] = job->scale * tree_sum(job->t, s, job->eps2, job->theta2, job->stacks[thread]);
}

phew_status potential_compute(const double *position, const double *mass, int64_t n, const potential_params *p,
                              double *phi)
{
  if (n <= 0)
    return PHEW_OK;
  const int64_t n_tasks = (n + OCT_TASK - 1) / OCT_TASK;
  if (n <= p->direct_max) {
    direct_job job = {position, mass, n, p->eps2, -p->g_over_a, phi};
    threads_run(p->n_threads, n_tasks, direct_task, &job);
    return PHEW_OK;
  }
  octree t;
  phew_status status = octree_build(&t, position, mass, n);
  /* a walk holds at most 7 siblings per level on the stack, plus one */
  const int64_t stack_size = 8 * (OCT_MAX_DEPTH + 2);
  int64_t **stacks = phew_calloc((size_t)p->n_threads, sizeof *stacks);
  for (int k = 0; status == PHEW_OK && k < p->n_threads; ++k)
    if (!stacks || !(stacks[k] = phew_malloc((size_t)stack_size, sizeof **stacks)))
      status = PHEW_ERROR_MEMORY;
  if (status == PHEW_OK) {
    tree_job job = {&t, p->eps2, p->theta * p->theta, -p->g_over_a, stacks, phi};
    threads_run(p->n_threads, n_tasks, tree_task, &job);
  }
  for (int k = 0; stacks && k < p->n_threads; ++k)
    free(stacks[k]);
  free(stacks);
  octree_free(&t);
  return status;
}
