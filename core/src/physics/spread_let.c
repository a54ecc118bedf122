/* The locally essential tree (spread.h). Every rank publishes the bounding box of each of its
 * frontier cells' members (each of its groups lies in one). Every other rank walks its own part
 * of the tree once per box, as a group's walk goes (from the root, a cell taken whole is not
 * opened), marking the cells the walk reaches and those it opens. A group's box lies inside its
 * frontier cell's box, and a larger box takes whole no more cells than a smaller one inside it
 * (octree_taken_whole): every cell a group's walk reaches or opens, the box's walk reaches or
 * opens. So the cells marked are a superset of what the walks of the box's rank need. They go
 * breadth first from their frontier cell, with the members of the opened leaves, and are
 * grafted under the receiver's copy of the frontier cell in the same shape; a cell reached but
 * not opened is grafted shut (OCT_PRUNED). A box per group would open hardly fewer cells (most
 * of them lie along the frontier cells' faces) for many more walks. */
#include "spread.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { LET_NONE = 0, LET_REACHED = 1, LET_OPENED = 2 }; /* marks */
enum { LET_SHUT = 0, LET_INNER = 1, LET_LEAF = 2 };     /* kinds of cells sent */

typedef struct let_box {
  double lo[3], hi[3];
} let_box;

typedef struct let_cell {
  double centre[3], half, com[3], mass;
  int64_t frontier; /* the fragment's first cell: its frontier number; -1 below */
  int64_t n;        /* children (LET_INNER) or members (LET_LEAF) that follow */
  int32_t kind, depth;
} let_cell;

typedef struct let_point {
  double x, y, z, m;
} let_point;

static let_box cell_box(const octree *t, const oct_node *v)
{
  let_box b = {{INFINITY, INFINITY, INFINITY}, {-INFINITY, -INFINITY, -INFINITY}};
  for (int64_t s = v->begin; s < v->end; ++s) {
    const double p[3] = {t->x[s], t->y[s], t->z[s]};
    for (int d = 0; d < 3; ++d) {
      b.lo[d] = p[d] < b.lo[d] ? p[d] : b.lo[d];
      b.hi[d] = p[d] > b.hi[d] ? p[d] : b.hi[d];
    }
  }
  return b;
}

/* Collective: the boxes of every other rank's frontier cells, grouped by rank. */
static phew_status publish_boxes(const spread_tree *s, comm *c, inbox *boxes)
{
  outbox o;
  outbox_init(&o, c, sizeof(let_box));
  for (int64_t f = s->first_own; f < s->end_own; ++f) {
    const let_box b = cell_box(&s->t, &s->t.node[s->frontier[f]]);
    for (int r = 0; r < c->size; ++r)
      if (r != c->rank)
        outbox_put(&o, r, &b);
  }
  const phew_status status = outbox_send(&o, c, boxes);
  outbox_free(&o);
  return status;
}

/* Marks the cells of this rank that a walk for box b reaches and opens. */
static void mark_box(const spread_tree *s, int rank, const let_box *b, double theta2, unsigned char *mark,
                     int64_t *stack)
{
  const oct_node *node = s->t.node;
  int64_t top = 0;
  stack[top++] = 0;
  while (top > 0) {
    const int64_t v = stack[--top];
    const int64_t f = v < s->n_top ? s->frontier_of[v] : -1;
    if (f >= 0 && s->owner[f] != rank)
      continue; /* another rank's cell: that rank sends it */
    mark[v] = mark[v] > LET_REACHED ? mark[v] : LET_REACHED;
    if (octree_taken_whole(&node[v], b->lo, b->hi, theta2))
      continue;
    mark[v] = LET_OPENED;
    for (int64_t k = node[v].child; k >= 0 && k < node[v].child + node[v].n_children; ++k)
      stack[top++] = k;
  }
}

/* The marked cells below own frontier cell f, breadth first, and the members of opened leaves,
 * for rank dest. */
static void send_fragment(const spread_tree *s, int64_t f, int dest, const unsigned char *mark, int64_t *queue,
                          outbox *cells, outbox *points)
{
  const octree *t = &s->t;
  int64_t head = 0, tail = 0;
  queue[tail++] = s->frontier[f];
  while (head < tail) {
    const oct_node *v = &t->node[queue[head++]];
    const int32_t kind = mark[v - t->node] != LET_OPENED ? LET_SHUT : v->child < 0 ? LET_LEAF : LET_INNER;
    const let_cell cell = {{v->centre[0], v->centre[1], v->centre[2]},
                           v->half,
                           {v->com[0], v->com[1], v->com[2]},
                           v->mass,
                           head == 1 ? f : -1,
                           kind == LET_LEAF    ? v->end - v->begin
                           : kind == LET_INNER ? v->n_children
                                               : 0,
                           kind,
                           v->depth};
    outbox_put(cells, dest, &cell);
    for (int64_t k = v->begin; kind == LET_LEAF && k < v->end; ++k) {
      const let_point p = {t->x[k], t->y[k], t->z[k], t->m[k]};
      outbox_put(points, dest, &p);
    }
    for (int64_t k = v->child; kind == LET_INNER && k < v->child + v->n_children; ++k)
      queue[tail++] = k;
  }
}

/* Collective: what every other rank's boxes open of this rank's cells goes there; what this
 * rank's boxes open of theirs comes here. */
static phew_status exchange_cells(const spread_tree *s, comm *c, const inbox *boxes, double theta2, inbox *cells_in,
                                  inbox *points_in)
{
  outbox cells, points;
  outbox_init(&cells, c, sizeof(let_cell));
  outbox_init(&points, c, sizeof(let_point));
  const int64_t n_nodes = s->t.n_nodes;
  unsigned char *mark = phew_malloc((size_t)n_nodes, 1);
  int64_t *queue = phew_malloc((size_t)n_nodes, sizeof *queue);
  int64_t *stack = phew_malloc(8 * (OCT_MAX_DEPTH + 2), sizeof *stack);
  cells.failed = !mark || !queue || !stack;
  for (int r = 0; !cells.failed && r < c->size; ++r) {
    if (r == c->rank || boxes->count[r] == 0)
      continue;
    memset(mark, LET_NONE, (size_t)n_nodes);
    for (int64_t k = boxes->offset[r]; k < boxes->offset[r] + boxes->count[r]; ++k) {
      let_box b;
      memcpy(&b, boxes->items + (size_t)k * sizeof b, sizeof b);
      mark_box(s, c->rank, &b, theta2, mark, stack);
    }
    for (int64_t f = s->first_own; f < s->end_own; ++f)
      if (mark[s->frontier[f]] == LET_OPENED)
        send_fragment(s, f, r, mark, queue, &cells, &points);
  }
  free(mark);
  free(queue);
  free(stack);
  phew_status status = outbox_send(&cells, c, cells_in);
  const phew_status points_status = outbox_send(&points, c, points_in);
  status = points_status > status ? points_status : status;
  outbox_free(&cells);
  outbox_free(&points);
  return status;
}

static let_cell read_cell(const inbox *cells, int64_t k)
{
  let_cell cell;
  memcpy(&cell, cells->items + (size_t)k * sizeof cell, sizeof cell);
  return cell;
}

/* Node v takes the members that follow in points (from *next). */
static int graft_leaf(octree *t, int64_t v, const inbox *points, int64_t n, int64_t *next)
{
  if (n < 0 || *next + n > points->n)
    return -1;
  t->node[v].begin = t->n_slots;
  for (int64_t k = 0; k < n; ++k, ++*next) {
    let_point p;
    memcpy(&p, points->items + (size_t)*next * sizeof p, sizeof p);
    const int64_t slot = t->n_slots++;
    t->index[slot] = -1;
    t->x[slot] = p.x;
    t->y[slot] = p.y;
    t->z[slot] = p.z;
    t->m[slot] = p.m;
  }
  t->node[v].end = t->n_slots;
  t->node[v].child = -1;
  return 0;
}

/* Node v gets the n cells at records [first, first + n) as its children. */
static int graft_children(octree *t, int64_t v, const inbox *cells, int64_t first, int64_t n)
{
  if (n <= 0 || n > 8 || first + n > cells->n)
    return -1;
  t->node[v].child = t->n_nodes;
  t->node[v].n_children = (int32_t)n;
  for (int64_t k = first; k < first + n; ++k) {
    const let_cell cell = read_cell(cells, k);
    const int64_t c = octree_add_node(t, cell.centre, cell.half, 0, 0, cell.depth);
    if (c < 0)
      return -1;
    t->node[c].mass = cell.mass;
    memcpy(t->node[c].com, cell.com, sizeof cell.com);
  }
  return 0;
}

/* Grafts the fragment that starts at record *k: its first cell is the receiver's frontier cell,
 * each later record the next node added (breadth first: a cell's children are the next records
 * not yet placed). */
static phew_status graft_fragment(spread_tree *s, const inbox *cells, int64_t *k, const inbox *points,
                                  int64_t *next_point)
{
  octree *t = &s->t;
  const let_cell head = read_cell(cells, *k);
  if (head.frontier < 0 || head.frontier >= s->n_frontier)
    return PHEW_ERROR_MPI;
  const int64_t first = *k, base = t->n_nodes;
  int64_t placed = first + 1;
  for (int64_t r = first; r < placed; ++r) {
    const let_cell cell = read_cell(cells, r);
    const int64_t v = r == first ? s->frontier[head.frontier] : base + (r - first - 1);
    int failed = 0;
    if (cell.kind == LET_SHUT)
      t->node[v].child = OCT_PRUNED;
    else if (cell.kind == LET_LEAF)
      failed = graft_leaf(t, v, points, cell.n, next_point);
    else if ((failed = graft_children(t, v, cells, placed, cell.n)) == 0)
      placed += cell.n;
    if (failed)
      return PHEW_ERROR_MEMORY;
  }
  *k = placed;
  return PHEW_OK;
}

static phew_status graft(spread_tree *s, const inbox *cells, const inbox *points)
{
  if (octree_reserve_slots(&s->t, s->t.n_slots + points->n) != 0)
    return PHEW_ERROR_MEMORY;
  phew_status status = PHEW_OK;
  int64_t next_point = 0;
  for (int64_t k = 0; status == PHEW_OK && k < cells->n;)
    status = graft_fragment(s, cells, &k, points, &next_point);
  s->imported_cells = cells->n;
  s->imported_members = points->n;
  return status;
}

phew_status spread_let_build(spread_tree *s, comm *c, double theta2)
{
  inbox boxes, cells, points;
  memset(&cells, 0, sizeof cells);
  memset(&points, 0, sizeof points);
  phew_status status = publish_boxes(s, c, &boxes);
  if (status == PHEW_OK)
    status = exchange_cells(s, c, &boxes, theta2, &cells, &points);
  if (status == PHEW_OK)
    status = graft(s, &cells, &points);
  inbox_free(&boxes);
  inbox_free(&cells);
  inbox_free(&points);
  return (phew_status)comm_max(c, status);
}
