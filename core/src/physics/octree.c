/* The octree's cells (octree.h): nodes, the split of a cell into its octants, moments and
 * groups. */
#include "octree.h"

#include <stdlib.h>
#include <string.h>

void octree_free(octree *t)
{
  free(t->node);
  free(t->index);
  free(t->x);
  free(t->y);
  free(t->z);
  free(t->m);
  memset(t, 0, sizeof *t);
}

int octree_reserve_slots(octree *t, int64_t n)
{
  if (n <= t->slot_capacity)
    return 0;
  if (phew_grow(&t->index, (size_t)n, sizeof *t->index) || phew_grow(&t->x, (size_t)n, sizeof *t->x) ||
      phew_grow(&t->y, (size_t)n, sizeof *t->y) || phew_grow(&t->z, (size_t)n, sizeof *t->z) ||
      phew_grow(&t->m, (size_t)n, sizeof *t->m))
    return -1;
  t->slot_capacity = n;
  return 0;
}

int64_t octree_add_node(octree *t, const double centre[3], double half, int64_t begin, int64_t end, int32_t depth)
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

void octree_root_cube(const double lo[3], const double hi[3], double centre[3], double *half)
{
  double side = 0.0;
  for (int d = 0; d < 3; ++d) {
    side = hi[d] - lo[d] > side ? hi[d] - lo[d] : side;
    centre[d] = 0.5 * (lo[d] + hi[d]);
  }
  *half = 0.5 * side;
}

int split_scratch_alloc(split_scratch *w, int64_t n)
{
  w->slot = phew_malloc((size_t)n, sizeof *w->slot);
  w->moved = phew_malloc((size_t)n, sizeof *w->moved);
  w->value = phew_malloc((size_t)n, sizeof *w->value);
  return w->slot && w->moved && w->value ? 0 : -1;
}

void split_scratch_free(split_scratch *w)
{
  free(w->slot);
  free(w->moved);
  free(w->value);
  memset(w, 0, sizeof *w);
}

/* Node v's slots [begin, end) permuted so that the new slot k holds the old w->slot[k]. */
static void permute_slots(octree *t, const oct_node *node, const split_scratch *w)
{
  const int64_t n = node->end - node->begin;
  double *column[4] = {t->x, t->y, t->z, t->m};
  for (int64_t k = 0; k < n; ++k)
    w->moved[k] = t->index[w->slot[k]];
  memcpy(t->index + node->begin, w->moved, (size_t)n * sizeof *w->moved);
  for (int c = 0; c < 4; ++c) {
    for (int64_t k = 0; k < n; ++k)
      w->value[k] = column[c][w->slot[k]];
    memcpy(column[c] + node->begin, w->value, (size_t)n * sizeof *w->value);
  }
}

/* Splits node v into its non-empty octants (a stable counting sort of its slots). */
static int split_node(octree *t, int64_t v, const split_scratch *w)
{
  const oct_node node = t->node[v]; /* adding children may move the nodes */
  int64_t count[8] = {0}, start[9];
  for (int64_t s = node.begin; s < node.end; ++s)
    ++count[oct_octant(&node, t->x[s], t->y[s], t->z[s])];
  start[0] = node.begin;
  for (int o = 0; o < 8; ++o)
    start[o + 1] = start[o] + count[o];
  int64_t cursor[8];
  memcpy(cursor, start, sizeof cursor);
  for (int64_t s = node.begin; s < node.end; ++s)
    w->slot[cursor[oct_octant(&node, t->x[s], t->y[s], t->z[s])]++ - node.begin] = s;
  permute_slots(t, &node, w);
  int64_t first = -1;
  int32_t n_children = 0;
  for (int o = 0; o < 8; ++o) {
    if (count[o] == 0)
      continue;
    double centre[3];
    oct_child_centre(&node, o, centre);
    const int64_t c = octree_add_node(t, centre, 0.5 * node.half, start[o], start[o + 1], node.depth + 1);
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

static int to_split(const oct_node *v) { return v->end - v->begin > OCT_LEAF && v->depth < OCT_MAX_DEPTH; }

phew_status octree_split_below(octree *t, int64_t root, const split_scratch *w)
{
  const int64_t first = t->n_nodes;
  if (to_split(&t->node[root]) && split_node(t, root, w) != 0)
    return PHEW_ERROR_MEMORY;
  /* the cells below root are split in creation order: a queue over the node array itself */
  for (int64_t v = first; v < t->n_nodes; ++v)
    if (to_split(&t->node[v]) && split_node(t, v, w) != 0)
      return PHEW_ERROR_MEMORY;
  return PHEW_OK;
}

void octree_cell_moments(octree *t, int64_t v)
{
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

static int64_t members(const oct_node *v) { return v->end - v->begin; }

/* Appends the children of v that are groups (v has more than limit members). */
static int64_t groups_below(const octree *t, int64_t v, int64_t limit, int64_t *group, int64_t n)
{
  const oct_node *node = t->node;
  if (node[v].child < 0 || members(&node[v]) <= limit)
    return n;
  for (int64_t c = node[v].child; c < node[v].child + node[v].n_children; ++c)
    if (node[c].child < 0 || members(&node[c]) <= limit)
      group[n++] = c;
  return n;
}

int64_t octree_find_groups(const octree *t, int64_t root, int64_t first, int64_t end, int64_t limit, int64_t *group)
{
  if (members(&t->node[root]) <= limit || t->node[root].child < 0) {
    group[0] = root;
    return 1;
  }
  int64_t n = groups_below(t, root, limit, group, 0);
  for (int64_t v = first; v < end; ++v)
    n = groups_below(t, v, limit, group, n);
  return n;
}
