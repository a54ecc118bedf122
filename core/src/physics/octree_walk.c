/* The octree's walks (octree.h): the point masses a member sums, and each group's interaction
 * list from one walk of the tree, depth first, children in octant order. */
#include "octree.h"
#include "threads.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void point_masses_free(point_masses *w)
{
  free(w->x);
  free(w->y);
  free(w->z);
  free(w->m);
  memset(w, 0, sizeof *w);
}

int point_masses_put(point_masses *w, double x, double y, double z, double m)
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

/* Four partial sums, point j in sum j mod 4 (so that the loop vectorises), added as
 * (s0 + s1) + (s2 + s3). The order is fixed by the list: the same bits on every processor. */
PHEW_VECTOR_CLONES
double sum_point_masses(const point_masses *w, int64_t self, const double p[3], double eps2)
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

/* The box lies outside the cell's cube, and s < theta d for the box's point nearest the cell's
 * centre of mass, so that every member would take it whole by itself. A larger box is nearer
 * (each gap, rounded, only shrinks) and overlaps more: it takes whole no more cells. */
int octree_taken_whole(const oct_node *v, const double lo[3], const double hi[3], double theta2)
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

/* Per thread: the interaction list of the group being worked on and the walk's stack. */
typedef struct walk_scratch {
  point_masses list;
  int64_t *stack;
  phew_status failed;
} walk_scratch;

static void group_box(const octree *t, const oct_node *group, double lo[3], double hi[3])
{
  for (int d = 0; d < 3; ++d) {
    lo[d] = INFINITY;
    hi[d] = -INFINITY;
  }
  for (int64_t s = group->begin; s < group->end; ++s) {
    const double p[3] = {t->x[s], t->y[s], t->z[s]};
    for (int d = 0; d < 3; ++d) {
      lo[d] = p[d] < lo[d] ? p[d] : lo[d];
      hi[d] = p[d] > hi[d] ? p[d] : hi[d];
    }
  }
}

/* The interaction list of a group (one walk shared by its members): cells taken whole as point
 * masses at their centres of mass, the members of the leaves reached, and the group's own
 * members, which start at *own in the list. */
static phew_status group_list(const octree *t, int64_t group, double theta2, walk_scratch *w, int64_t *own)
{
  double lo[3], hi[3];
  group_box(t, &t->node[group], lo, hi);
  w->list.n = 0;
  int64_t top = 0;
  w->stack[top++] = 0;
  while (top > 0) {
    const int64_t v = w->stack[--top];
    const oct_node *node = &t->node[v];
    if (v != group && octree_taken_whole(node, lo, hi, theta2)) {
      if (point_masses_put(&w->list, node->com[0], node->com[1], node->com[2], node->mass))
        return PHEW_ERROR_MEMORY;
      continue;
    }
    if (node->child == OCT_PRUNED && v != group)
      return PHEW_ERROR_DATA; /* another rank did not send a cell this walk opens */
    if (node->child < 0 || v == group) {
      if (v == group)
        *own = w->list.n;
      for (int64_t s = node->begin; s < node->end; ++s)
        if (point_masses_put(&w->list, t->x[s], t->y[s], t->z[s], t->m[s]))
          return PHEW_ERROR_MEMORY;
      continue;
    }
    for (int64_t c = node->child + node->n_children - 1; c >= node->child; --c)
      w->stack[top++] = c;
  }
  return PHEW_OK;
}

typedef struct tree_job {
  const octree *t;
  const int64_t *group; /* the groups' node numbers */
  double eps2, theta2, scale;
  walk_scratch *scratch; /* per thread */
  double *phi;
} tree_job;

static void tree_task(void *context, int thread, int64_t task)
{
  tree_job *job = context;
  const octree *t = job->t;
  const int64_t group = job->group[task];
  walk_scratch *w = &job->scratch[thread];
  int64_t own = 0;
  if (w->failed != PHEW_OK || (w->failed = group_list(t, group, job->theta2, w, &own)) != PHEW_OK)
    return;
  for (int64_t s = t->node[group].begin; s < t->node[group].end; ++s) {
    const double p[3] = {t->x[s], t->y[s], t->z[s]};
    job->phi[t->index[s]] = job->scale * sum_point_masses(&w->list, own + (s - t->node[group].begin), p, job->eps2);
  }
}

phew_status octree_walk_groups(const octree *t, const int64_t *group, int64_t n_groups, const potential_params *p,
                               double *phi)
{
  /* a walk holds at most 7 siblings per level on the stack, plus one */
  const int64_t stack_size = 8 * (OCT_MAX_DEPTH + 2);
  walk_scratch *scratch = phew_calloc((size_t)p->n_threads, sizeof *scratch);
  phew_status status = scratch ? PHEW_OK : PHEW_ERROR_MEMORY;
  for (int k = 0; status == PHEW_OK && k < p->n_threads; ++k)
    if (!(scratch[k].stack = phew_malloc((size_t)stack_size, sizeof *scratch[k].stack)))
      status = PHEW_ERROR_MEMORY;
  if (status == PHEW_OK) {
    tree_job job = {t, group, p->eps2, p->theta * p->theta, -p->g_over_a, scratch, phi};
    threads_run(p->n_threads, n_groups, tree_task, &job);
  }
  for (int k = 0; scratch && k < p->n_threads; ++k) {
    status = scratch[k].failed > status ? scratch[k].failed : status;
    point_masses_free(&scratch[k].list);
    free(scratch[k].stack);
  }
  free(scratch);
  return status;
}
