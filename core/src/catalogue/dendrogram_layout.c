/* Where each dendrogram node goes in a drawing (phew_layout_dendrogram in phew.h): leaves along
 * x in depth-first order, log10 of the density up y. No VTK: the plugin turns the numbers into
 * polylines.
 *
 * Steps, all O(n log n) and without recursion (a chain of a million nodes must not overflow the
 * C stack): map parent ids to indices; sort the nodes once by (parent, decreasing peak, id), which
 * lists every node's children, in drawing order, as one contiguous run; a depth-first walk with an
 * explicit stack gives the pre-order (and finds cycles: nodes it never reaches); leaves get x in
 * pre-order, then a sweep over the reversed pre-order, which meets children before parents, places
 * the other nodes. Nothing is written to the caller's arrays before every check has passed. */
#include "phew/phew.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct id_index {
  int64_t id;
  int64_t index;
} id_index;

typedef struct sibling_key {
  int64_t parent; /* index of the parent, -1 for roots: roots sort first */
  double first;   /* decreasing: the peak density, or (by mass) the mass */
  double second;  /* then decreasing: 0, or (by mass) the peak density */
  int64_t id;
  int64_t index;
} sibling_key;

static int compare_id_index(const void *pa, const void *pb)
{
  const id_index *a = pa, *b = pb;
  return a->id < b->id ? -1 : (a->id > b->id);
}

/* Siblings in drawing order: decreasing peak density (by mass: decreasing mass, then peak
 * density), then the smaller id. The densities and masses were checked to be finite, so this
 * is a total order. */
static int compare_siblings(const void *pa, const void *pb)
{
  const sibling_key *a = pa, *b = pb;
  if (a->parent != b->parent)
    return a->parent < b->parent ? -1 : 1;
  if (a->first != b->first)
    return a->first > b->first ? -1 : 1;
  if (a->second != b->second)
    return a->second > b->second ? -1 : 1;
  return a->id < b->id ? -1 : (a->id > b->id);
}

/* malloc of count elements, NULL if the size overflows (count >= 0) */
static void *alloc_array(int64_t count, size_t size)
{
  if (count < 1)
    count = 1;
  if ((uint64_t)count > SIZE_MAX / size)
    return NULL;
  return malloc((size_t)count * size);
}

static double log_or_floor(double density, double log_floor) { return density > 0.0 ? log10(density) : log_floor; }

/* Parent index of every node, -1 for roots. Ids are usually the indices (phew_find_clumps
 * numbers its nodes 0..n-1); otherwise they are looked up in a sorted copy. */
static phew_status map_parents(const phew_node *nodes, int64_t n, int64_t *parent, char *message, size_t message_size)
{
  int identity = 1;
  for (int64_t i = 0; i < n && identity; ++i)
    identity = nodes[i].id == i;
  if (identity) {
    for (int64_t i = 0; i < n; ++i) {
      const int64_t p = nodes[i].parent_id;
      if (p != -1 && (p < 0 || p >= n)) {
        snprintf(message, message_size, "dendrogram node %lld names parent %lld, which is not a node",
                 (long long)nodes[i].id, (long long)p);
        return PHEW_ERROR_ARGUMENT;
      }
      parent[i] = p;
    }
    return PHEW_OK;
  }
  id_index *sorted = alloc_array(n, sizeof *sorted);
  if (!sorted) {
    snprintf(message, message_size, "out of memory while laying out the dendrogram");
    return PHEW_ERROR_MEMORY;
  }
  for (int64_t i = 0; i < n; ++i)
    sorted[i] = (id_index){nodes[i].id, i};
  qsort(sorted, (size_t)n, sizeof *sorted, compare_id_index);
  phew_status status = PHEW_OK;
  for (int64_t i = 1; i < n && status == PHEW_OK; ++i)
    if (sorted[i].id == sorted[i - 1].id) {
      snprintf(message, message_size, "two dendrogram nodes (at %lld and %lld) have the same id %lld",
               (long long)sorted[i - 1].index, (long long)sorted[i].index, (long long)sorted[i].id);
      status = PHEW_ERROR_ARGUMENT;
    }
  for (int64_t i = 0; i < n && status == PHEW_OK; ++i) {
    const int64_t p = nodes[i].parent_id;
    parent[i] = -1;
    if (p == -1)
      continue;
    const id_index key = {p, 0};
    const id_index *found = bsearch(&key, sorted, (size_t)n, sizeof *sorted, compare_id_index);
    if (!found) {
      snprintf(message, message_size, "dendrogram node %lld names parent %lld, which is not a node",
               (long long)nodes[i].id, (long long)p);
      status = PHEW_ERROR_ARGUMENT;
    } else {
      parent[i] = found->index;
    }
  }
  free(sorted);
  return status;
}

/* The densities decide the floor and must be finite for the sibling order: the floor is one
 * decade below everything drawn, so that a density <= 0 stays visibly below the rest. */
static phew_status density_floor(const phew_node *nodes, int64_t n, double *floor_value, char *message,
                                 size_t message_size)
{
  double smallest = INFINITY;
  for (int64_t i = 0; i < n; ++i) {
    const double d[2] = {nodes[i].peak_density, nodes[i].saddle_density};
    for (int k = 0; k < 2; ++k) {
      if (!isfinite(d[k])) {
        snprintf(message, message_size, "dendrogram node %lld has a %s density that is not finite (%g)",
                 (long long)nodes[i].id, k == 0 ? "peak" : "saddle", d[k]);
        return PHEW_ERROR_DATA;
      }
      if (d[k] > 0.0 && d[k] < smallest)
        smallest = d[k];
    }
  }
  if (smallest == INFINITY) {
    snprintf(message, message_size,
             "no dendrogram node has a positive peak or saddle density: nothing can be drawn on a log axis");
    return PHEW_ERROR_DATA;
  }
  *floor_value = log10(smallest) - 1.0;
  return PHEW_OK;
}

/* The tree's arrays: parent of each node; order, the nodes sorted as siblings, roots first;
 * the children of p are order[first[p] .. first[p+1]); preorder, depth first. */
typedef struct tree_walk {
  int64_t *parent, *first, *order, *stack, *preorder;
  int64_t n_roots;
} tree_walk;

/* Siblings by decreasing peak density or mass (then smaller id), grouped by parent, roots
 * first. */
static phew_status sibling_order(const phew_node *nodes, int64_t n, int by_mass, tree_walk *t)
{
  sibling_key *keys = alloc_array(n, sizeof *keys);
  if (!keys)
    return PHEW_ERROR_MEMORY;
  for (int64_t i = 0; i < n; ++i)
    keys[i] = by_mass ? (sibling_key){t->parent[i], nodes[i].mass, nodes[i].peak_density, nodes[i].id, i}
                      : (sibling_key){t->parent[i], nodes[i].peak_density, 0.0, nodes[i].id, i};
  qsort(keys, (size_t)n, sizeof *keys, compare_siblings);
  t->n_roots = 0;
  for (int64_t i = 0; i < n; ++i) {
    t->order[i] = keys[i].index;
    t->n_roots += keys[i].parent < 0;
  }
  free(keys);
  /* children counts, then prefix sums: the runs follow the roots in parent order */
  for (int64_t p = 0; p <= n; ++p)
    t->first[p] = 0;
  for (int64_t i = 0; i < n; ++i)
    if (t->parent[i] >= 0)
      ++t->first[t->parent[i] + 1];
  t->first[0] = t->n_roots;
  for (int64_t p = 0; p < n; ++p)
    t->first[p + 1] += t->first[p];
  return PHEW_OK;
}

/* The pre-order walk (pushed in reverse, so that the first root and first child come out
 * first); PHEW_ERROR_ARGUMENT, naming a node on the cycle, when parents form a cycle. */
static phew_status walk(const phew_node *nodes, int64_t n, tree_walk *t, char *message, size_t message_size)
{
  int64_t top = 0, visited = 0;
  for (int64_t r = t->n_roots; r-- > 0;)
    t->stack[top++] = t->order[r];
  while (top > 0) {
    const int64_t v = t->stack[--top];
    t->preorder[visited++] = v;
    for (int64_t c = t->first[v + 1]; c-- > t->first[v];)
      t->stack[top++] = t->order[c];
  }
  if (visited == n)
    return PHEW_OK;
  /* the nodes never reached hang below a cycle of parents: walk up n steps from one of them
   * to land on the cycle, and name that node (stack[] is free now: mark the reached ones) */
  for (int64_t i = 0; i < n; ++i)
    t->stack[i] = 0;
  for (int64_t k = 0; k < visited; ++k)
    t->stack[t->preorder[k]] = 1;
  int64_t v = 0;
  while (t->stack[v])
    ++v;
  for (int64_t k = 0; k < n; ++k)
    v = t->parent[v];
  snprintf(message, message_size,
           "the dendrogram's parents form a cycle through node %lld (%lld of %lld nodes are not below a root)",
           (long long)nodes[v].id, (long long)(n - visited), (long long)n);
  return PHEW_ERROR_ARGUMENT;
}

/* Leaves at x = 0, 1, 2, ... in pre-order; every other node at the middle of its children's
 * x, its top where they meet. */
static void write_layout(const phew_node *nodes, int64_t n, const tree_walk *t, double floor_value,
                         phew_node_layout *layout)
{
  double next_leaf = 0.0;
  for (int64_t k = 0; k < n; ++k) {
    const int64_t v = t->preorder[k];
    layout[v].parent_index = t->parent[v];
    layout[v].log_bottom = log_or_floor(nodes[v].saddle_density, floor_value);
    if (t->first[v] == t->first[v + 1]) {
      layout[v].x = next_leaf;
      next_leaf += 1.0;
      layout[v].log_top = log_or_floor(nodes[v].peak_density, floor_value);
    }
  }
  for (int64_t k = n; k-- > 0;) {
    const int64_t v = t->preorder[k];
    if (t->first[v] == t->first[v + 1])
      continue;
    double lo = INFINITY, hi = -INFINITY, junction = -INFINITY;
    for (int64_t c = t->first[v]; c < t->first[v + 1]; ++c) {
      const int64_t child = t->order[c];
      lo = fmin(lo, layout[child].x);
      hi = fmax(hi, layout[child].x);
      junction = fmax(junction, nodes[child].saddle_density);
    }
    layout[v].x = 0.5 * (lo + hi);
    layout[v].log_top = log_or_floor(junction, floor_value);
  }
}

/* By mass: every node gets an interval of x as wide as its mass, its drawn children's
 * intervals one after the other from its left end (the collapsed ones' mass left over at its
 * right end), the roots' one after the other from 0. A drawn node with drawn children stands
 * at the middle of the first and last of them, its top where the highest of them joins it; any
 * other drawn node at the middle of its interval, up to its own peak. */
static void write_mass_layout(const phew_node *nodes, int64_t n, const tree_walk *t, double floor_value,
                              double mass_cut, double *cursor, phew_mass_layout *layout)
{
  double next_root = 0.0;
  for (int64_t k = 0; k < n; ++k) { /* pre-order: parents first, children in sibling order */
    const int64_t v = t->preorder[k], p = t->parent[v];
    phew_mass_layout *at = &layout[v];
    at->parent_index = p;
    at->rank = -1;
    at->log_bottom = log_or_floor(nodes[v].saddle_density, floor_value);
    at->log_top = log_or_floor(nodes[v].peak_density, floor_value);
    const int drawn = nodes[v].mass >= mass_cut && (p < 0 || !isnan(layout[p].x));
    at->x = drawn ? 0.0 : NAN;
    at->x_low = at->x_high = NAN;
    if (!drawn)
      continue;
    double *start = p < 0 ? &next_root : &cursor[p];
    at->x_low = *start;
    at->x_high = *start + nodes[v].mass;
    *start = at->x_high;
    cursor[v] = at->x_low;
  }
  for (int64_t r = 0; r < t->n_roots; ++r)
    layout[t->order[r]].rank = r;
  for (int64_t k = n; k-- > 0;) { /* children before parents */
    const int64_t v = t->preorder[k];
    if (isnan(layout[v].x))
      continue;
    double lo = INFINITY, hi = -INFINITY, junction = -INFINITY;
    for (int64_t c = t->first[v]; c < t->first[v + 1]; ++c) {
      const int64_t child = t->order[c];
      if (isnan(layout[child].x))
        continue;
      lo = fmin(lo, layout[child].x);
      hi = fmax(hi, layout[child].x);
      junction = fmax(junction, nodes[child].saddle_density);
    }
    if (lo <= hi) {
      layout[v].x = 0.5 * (lo + hi);
      layout[v].log_top = log_or_floor(junction, floor_value);
    } else {
      layout[v].x = 0.5 * (layout[v].x_low + layout[v].x_high);
    }
  }
}

/* The checks and the tree's order shared by both layouts; on success `t` holds the walk and
 * *floor_value the log floor. */
static phew_status prepare_tree(const phew_node *nodes, int64_t n, int by_mass, tree_walk *t, double *floor_value,
                                char *message, size_t message_size)
{
  phew_status status = density_floor(nodes, n, floor_value, message, message_size);
  for (int64_t i = 0; i < n && status == PHEW_OK && by_mass; ++i)
    if (!isfinite(nodes[i].mass) || nodes[i].mass < 0.0) {
      snprintf(message, message_size, "dendrogram node %lld has a mass that is negative or not finite (%g)",
               (long long)nodes[i].id, nodes[i].mass);
      status = PHEW_ERROR_DATA;
    }
  if (status != PHEW_OK)
    return status;
  *t = (tree_walk){alloc_array(n, sizeof(int64_t)), alloc_array(n + 1, sizeof(int64_t)),
                   alloc_array(n, sizeof(int64_t)), alloc_array(n, sizeof(int64_t)),
                   alloc_array(n, sizeof(int64_t)), 0};
  if (!t->parent || !t->first || !t->order || !t->stack || !t->preorder)
    status = PHEW_ERROR_MEMORY;
  if (status == PHEW_OK)
    status = map_parents(nodes, n, t->parent, message, message_size);
  if (status == PHEW_OK)
    status = sibling_order(nodes, n, by_mass, t);
  if (status == PHEW_OK)
    status = walk(nodes, n, t, message, message_size);
  return status;
}

static void free_tree(tree_walk *t)
{
  free(t->parent);
  free(t->first);
  free(t->order);
  free(t->stack);
  free(t->preorder);
}

/* The argument checks of both layouts: PHEW_OK to go on (*done set when there is nothing to
 * lay out), else the status. */
static phew_status check_layout_arguments(const phew_node *nodes, int64_t n_nodes, const void *layout,
                                          double *log_floor, int *done, char *message, size_t message_size)
{
  *done = 0;
  if (n_nodes < 0) {
    snprintf(message, message_size, "the dendrogram has a negative number of nodes (%lld)", (long long)n_nodes);
    return PHEW_ERROR_ARGUMENT;
  }
  if (n_nodes > 0 && (!nodes || !layout)) {
    snprintf(message, message_size, "the dendrogram has %lld nodes but the %s array is NULL", (long long)n_nodes,
             !nodes ? "node" : "layout");
    return PHEW_ERROR_ARGUMENT;
  }
  if (n_nodes == 0) {
    if (log_floor)
      *log_floor = NAN;
    *done = 1;
  }
  return PHEW_OK;
}

/* The context's message, emptied (NULL without a context: snprintf with size 0 then writes
 * nothing), and its size. */
static char *start_message(phew_context *context, size_t *size)
{
  *size = context ? sizeof context->message : 0;
  if (*size)
    context->message[0] = '\0';
  return context ? context->message : NULL;
}

/* A failed allocation says so, unless a message was written already. */
static void say_out_of_memory(phew_status status, char *message, size_t size)
{
  if (status == PHEW_ERROR_MEMORY && (!size || message[0] == '\0'))
    snprintf(message, size, "out of memory while laying out the dendrogram");
}

phew_status phew_layout_dendrogram(phew_context *context, const phew_node *nodes, int64_t n_nodes,
                                   phew_node_layout *layout, double *log_floor)
{
  size_t message_size = 0;
  char *message = start_message(context, &message_size);
  int done = 0;
  phew_status status = check_layout_arguments(nodes, n_nodes, layout, log_floor, &done, message, message_size);
  if (status != PHEW_OK || done)
    return status;
  double floor_value = 0.0;
  tree_walk t = {0};
  status = prepare_tree(nodes, n_nodes, 0, &t, &floor_value, message, message_size);
  if (status == PHEW_OK) { /* every check passed: now write the layout */
    write_layout(nodes, n_nodes, &t, floor_value, layout);
    if (log_floor)
      *log_floor = floor_value;
  }
  say_out_of_memory(status, message, message_size);
  free_tree(&t);
  return status;
}

phew_status phew_layout_dendrogram_by_mass(phew_context *context, const phew_node *nodes, int64_t n_nodes,
                                           double mass_cut, phew_mass_layout *layout, double *log_floor)
{
  size_t message_size = 0;
  char *message = start_message(context, &message_size);
  if (isnan(mass_cut)) {
    snprintf(message, message_size, "the dendrogram's mass cut is NaN");
    return PHEW_ERROR_ARGUMENT;
  }
  int done = 0;
  phew_status status = check_layout_arguments(nodes, n_nodes, layout, log_floor, &done, message, message_size);
  if (status != PHEW_OK || done)
    return status;
  double floor_value = 0.0;
  tree_walk t = {0};
  double *cursor = alloc_array(n_nodes, sizeof *cursor);
  status = cursor ? prepare_tree(nodes, n_nodes, 1, &t, &floor_value, message, message_size) : PHEW_ERROR_MEMORY;
  if (status == PHEW_OK) {
    write_mass_layout(nodes, n_nodes, &t, floor_value, mass_cut, cursor, layout);
    if (log_floor)
      *log_floor = floor_value;
  }
  say_out_of_memory(status, message, message_size);
  free(cursor);
  free_tree(&t);
  return status;
}
