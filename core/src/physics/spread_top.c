/* The top of the distributed octree (spread.h): the serial root cube from the ranks' bounding
 * boxes (min and max are exact), then level by level the cells of more than `cut` members are
 * split as the serial rule splits them, from the members each rank counts per octant summed
 * over the ranks. The cells left are the frontier; in depth-first octant order they are cut
 * into ranges of about equal member counts, one range per rank. */
#include "spread.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void spread_tree_free(spread_tree *s)
{
  octree_free(&s->t);
  free(s->count);
  free(s->frontier);
  free(s->frontier_of);
  free(s->owner);
  free(s->sub_first);
  free(s->sub_end);
  memset(s, 0, sizeof *s);
}

static void global_box(comm *c, const double *position, int64_t n, double lo[3], double hi[3])
{
  for (int d = 0; d < 3; ++d) {
    lo[d] = INFINITY;
    hi[d] = -INFINITY;
  }
  for (int64_t i = 0; i < n; ++i)
    for (int d = 0; d < 3; ++d) {
      lo[d] = position[3 * i + d] < lo[d] ? position[3 * i + d] : lo[d];
      hi[d] = position[3 * i + d] > hi[d] ? position[3 * i + d] : hi[d];
    }
  for (int d = 0; d < 3; ++d) {
    lo[d] = -comm_max_double(c, -lo[d]);
    hi[d] = comm_max_double(c, hi[d]);
  }
}

/* A top cell with `count` members over the ranks; its number, or -1 without memory. */
static int64_t add_top_cell(spread_tree *s, const double centre[3], double half, int64_t count, int32_t depth)
{
  if (s->t.n_nodes == s->t.capacity && phew_grow(&s->count, (size_t)(2 * s->t.capacity + 64), sizeof *s->count))
    return -1;
  const int64_t v = octree_add_node(&s->t, centre, half, 0, 0, depth);
  if (v >= 0)
    s->count[v] = count;
  return v;
}

/* The top cells of one level [begin, end) that the serial rule splits further: their slot
 * (0 .. returned count - 1) in split[v - begin], -1 for the others. */
static int64_t cells_to_split(const spread_tree *s, int64_t begin, int64_t end, int64_t cut, int64_t *split)
{
  int64_t n = 0;
  for (int64_t v = begin; v < end; ++v)
    split[v - begin] = s->count[v] > cut && s->t.node[v].depth < OCT_MAX_DEPTH ? n++ : -1;
  return n;
}

/* The non-empty octants of the split cells become cells of the next level (children in octant
 * order, as split_node makes them); child[8 k + o] is octant o's cell of split cell k. */
static int add_children(spread_tree *s, int64_t begin, int64_t end, const int64_t *split, const int64_t *count,
                        int64_t *child)
{
  for (int64_t v = begin; v < end; ++v) {
    const int64_t k = split[v - begin];
    for (int o = 0; k >= 0 && o < 8; ++o) {
      child[8 * k + o] = -1;
      if (count[8 * k + o] == 0)
        continue;
      const oct_node parent = s->t.node[v]; /* adding cells may move the nodes */
      double centre[3];
      oct_child_centre(&parent, o, centre);
      const int64_t c = add_top_cell(s, centre, 0.5 * parent.half, count[8 * k + o], parent.depth + 1);
      if (c < 0)
        return -1;
      child[8 * k + o] = c;
      if (s->t.node[v].child < 0)
        s->t.node[v].child = c;
      s->t.node[v].n_children++;
    }
  }
  return 0;
}

/* Collective: splits the level [begin, end); cell[i] moves down for the members in split cells.
 * 0, or -1 (on every rank) without memory. */
static int split_level(spread_tree *s, comm *c, const double *position, int64_t n, int64_t *cell, int64_t begin,
                       int64_t end, int64_t cut)
{
  int64_t *split = phew_malloc((size_t)(end - begin), sizeof *split);
  const int64_t n_split = split ? cells_to_split(s, begin, end, cut, split) : 0;
  int64_t *count = phew_calloc((size_t)(8 * n_split), sizeof *count);
  int64_t *child = phew_malloc((size_t)(8 * n_split), sizeof *child);
  int failed = !split || !count || !child;
  for (int64_t i = 0; !failed && i < n; ++i)
    if (cell[i] >= begin && cell[i] < end && split[cell[i] - begin] >= 0) {
      const double *p = position + 3 * i;
      ++count[8 * split[cell[i] - begin] + oct_octant(&s->t.node[cell[i]], p[0], p[1], p[2])];
    }
  failed = (int)comm_max(c, failed);
  if (!failed) {
    comm_sum_array(c, count, 8 * n_split);
    failed = add_children(s, begin, end, split, count, child) != 0;
  }
  for (int64_t i = 0; !failed && i < n; ++i)
    if (cell[i] >= begin && cell[i] < end && split[cell[i] - begin] >= 0) {
      const double *p = position + 3 * i;
      const int o = oct_octant(&s->t.node[cell[i]], p[0], p[1], p[2]);
      cell[i] = child[8 * split[cell[i] - begin] + o];
    }
  free(split);
  free(count);
  free(child);
  return comm_max(c, failed) ? -1 : 0;
}

/* The frontier cells (top cells without children) in depth-first octant order, and each cell's
 * frontier number. 0, or -1 without memory. */
static int number_frontier(spread_tree *s)
{
  const int64_t n = s->t.n_nodes;
  int64_t *stack = phew_malloc((size_t)n, sizeof *stack);
  s->frontier = phew_malloc((size_t)n, sizeof *s->frontier);
  s->frontier_of = phew_malloc((size_t)n, sizeof *s->frontier_of);
  if (!stack || !s->frontier || !s->frontier_of) {
    free(stack);
    return -1;
  }
  int64_t top = 0;
  stack[top++] = 0;
  s->n_frontier = 0;
  while (top > 0) {
    const oct_node *v = &s->t.node[stack[--top]];
    s->frontier_of[v - s->t.node] = v->child < 0 ? s->n_frontier : -1;
    if (v->child < 0)
      s->frontier[s->n_frontier++] = v - s->t.node;
    for (int64_t k = v->child + v->n_children - 1; v->child >= 0 && k >= v->child; --k)
      stack[top++] = k;
  }
  free(stack);
  return 0;
}

/* Contiguous ranges of frontier cells, of about n_total / ranks members each: a cell goes to the
 * rank whose share holds its middle member. */
static int assign_owners(spread_tree *s, const comm *c, int64_t n_total)
{
  s->owner = phew_malloc((size_t)s->n_frontier, sizeof *s->owner);
  if (!s->owner)
    return -1;
  const int64_t share = (n_total + c->size - 1) / c->size;
  int64_t before = 0;
  s->first_own = s->end_own = -1;
  for (int64_t f = 0; f < s->n_frontier; ++f) {
    const int64_t count = s->count[s->frontier[f]];
    s->owner[f] = (int32_t)((before + count / 2) / share);
    before += count;
    if (s->owner[f] == c->rank) {
      s->first_own = s->first_own < 0 ? f : s->first_own;
      s->end_own = f + 1;
    }
  }
  if (s->first_own < 0)
    s->first_own = s->end_own = 0;
  /* another rank's frontier cell stays shut until its owner sends what this rank opens */
  for (int64_t f = 0; f < s->n_frontier; ++f)
    if (s->owner[f] != c->rank)
      s->t.node[s->frontier[f]].child = OCT_PRUNED;
  return 0;
}

phew_status spread_top_build(spread_tree *s, comm *c, const double *position, int64_t n, int64_t n_total, int64_t *cell)
{
  memset(s, 0, sizeof *s);
  /* frontier cells of at most cut members: about 8 per rank, and never below a group */
  const int64_t cut = n_total / (8 * (int64_t)c->size) > OCT_GROUP ? n_total / (8 * (int64_t)c->size) : OCT_GROUP;
  double lo[3], hi[3], centre[3], half;
  global_box(c, position, n, lo, hi);
  octree_root_cube(lo, hi, centre, &half);
  if (comm_max(c, add_top_cell(s, centre, half, n_total, 0) < 0))
    return PHEW_ERROR_MEMORY;
  for (int64_t i = 0; i < n; ++i)
    cell[i] = 0;
  /* every rank has the same top: the same levels, the same collectives */
  for (int64_t begin = 0, end = 1; begin < end; begin = end, end = s->t.n_nodes)
    if (split_level(s, c, position, n, cell, begin, end, cut) < 0)
      return PHEW_ERROR_MEMORY;
  s->n_top = s->t.n_nodes;
  const int failed = number_frontier(s) != 0 || assign_owners(s, c, n_total) != 0;
  for (int64_t i = 0; !failed && i < n; ++i)
    cell[i] = s->frontier_of[cell[i]];
  return comm_max(c, failed) ? PHEW_ERROR_MEMORY : PHEW_OK;
}

/* A frontier cell's moments on their way to every rank. */
typedef struct cell_moments {
  int64_t cell;
  double mass, com[3];
} cell_moments;

phew_status spread_top_moments(spread_tree *s, comm *c)
{
  outbox o;
  outbox_init(&o, c, sizeof(cell_moments));
  for (int64_t f = s->first_own; f < s->end_own; ++f) {
    const oct_node *v = &s->t.node[s->frontier[f]];
    const cell_moments m = {f, v->mass, {v->com[0], v->com[1], v->com[2]}};
    for (int r = 0; r < c->size; ++r)
      if (r != c->rank)
        outbox_put(&o, r, &m);
  }
  inbox in;
  const phew_status status = outbox_send(&o, c, &in);
  outbox_free(&o);
  for (int64_t k = 0; status == PHEW_OK && k < in.n; ++k) {
    cell_moments m;
    memcpy(&m, in.items + (size_t)k * sizeof m, sizeof m);
    oct_node *v = &s->t.node[s->frontier[m.cell]];
    v->mass = m.mass;
    memcpy(v->com, m.com, sizeof v->com);
  }
  inbox_free(&in);
  /* the top's inner cells, children (created after their parents) first */
  for (int64_t v = s->n_top - 1; status == PHEW_OK && v >= 0; --v)
    if (s->frontier_of[v] < 0)
      octree_cell_moments(&s->t, v);
  return status;
}
