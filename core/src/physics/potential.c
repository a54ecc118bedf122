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
 * and on any rank that holds the same members in the same order. The tree's pieces are in
 * octree.c and octree_walk.c, shared with the distributed potentials (potential_spread.c). */
#include "octree.h"
#include "threads.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

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

/* The members in the slots, in their order; their bounding box. */
static void fill_slots(octree *t, const double *position, const double *mass, int64_t n, double lo[3], double hi[3])
{
  for (int d = 0; d < 3; ++d) {
    lo[d] = INFINITY;
    hi[d] = -INFINITY;
  }
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
  t->n_slots = n;
}

static phew_status octree_build(octree *t, const double *position, const double *mass, int64_t n)
{
  memset(t, 0, sizeof *t);
  split_scratch w = {NULL, NULL, NULL};
  if (octree_reserve_slots(t, n) != 0 || split_scratch_alloc(&w, n) != 0) {
    split_scratch_free(&w);
    return PHEW_ERROR_MEMORY;
  }
  double lo[3], hi[3], centre[3], half;
  fill_slots(t, position, mass, n, lo, hi);
  octree_root_cube(lo, hi, centre, &half);
  phew_status status = octree_add_node(t, centre, half, 0, n, 0) < 0 ? PHEW_ERROR_MEMORY : PHEW_OK;
  if (status == PHEW_OK)
    status = octree_split_below(t, 0, &w);
  split_scratch_free(&w);
  /* children (created after their parents) first */
  for (int64_t v = t->n_nodes - 1; status == PHEW_OK && v >= 0; --v)
    octree_cell_moments(t, v);
  return status;
}

static phew_status tree_sums(const double *position, const double *mass, int64_t n, const potential_params *p,
                             double *phi)
{
  octree t;
  phew_status status = octree_build(&t, position, mass, n);
  int64_t *group = status == PHEW_OK ? phew_malloc((size_t)t.n_nodes, sizeof *group) : NULL;
  if (status == PHEW_OK && !group)
    status = PHEW_ERROR_MEMORY;
  if (status == PHEW_OK) {
    const int64_t n_groups = octree_find_groups(&t, 0, 1, t.n_nodes, OCT_GROUP, group);
    status = octree_walk_groups(&t, group, n_groups, p, phi);
  }
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
