/* A merger tree's history as a drawing (phew_layout_merger_tree in phew.h): a node per
 * structure per step, an edge per link, each node's final halo, and a column for each node.
 * No VTK: the plugin turns the numbers into points and lines.
 *
 * Steps, all O(n log n) in the rows and without recursion (a branch of many steps must not
 * overflow the C stack): the nodes are the rows' descendants, sorted by (step, id) for lookups;
 * the rows give the edges, main descendants and main progenitors; one sort lists every node's
 * children (the nodes whose main descendant it is) by decreasing mass. Children lie at earlier
 * steps, so at smaller node indices: a sweep up the indices gives each subtree's width, a sweep
 * down gives columns, final haloes and main branches. Nothing is written to the caller's
 * drawing before every check has passed. */
#include "phew/phew.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A node, or a child of a node, while sorting. */
typedef struct node_key {
  int64_t step, id;
  double mass;
  int64_t row; /* the first row naming it (nodes); its parent's index (children) */
} node_key;

typedef struct layout_work {
  node_key *nodes;     /* by (step, id) */
  int64_t n;           /* distinct nodes */
  int64_t *descendant; /* main descendant per node, -1 */
  int64_t *main_progenitor;
  int64_t *first; /* children of node v: child[first[v] .. first[v + 1]) */
  int64_t *child; /* node indices, by decreasing mass then id */
  int64_t *main;  /* the main child per node, -1 */
  int64_t *width; /* columns of the node's subtree */
  int64_t *roots; /* nodes without a main descendant, in drawing order */
  int64_t n_roots;
  phew_tree_edge *edges;
  int64_t n_edges;
} layout_work;

static int by_step_id_row(const void *pa, const void *pb)
{
  const node_key *a = pa, *b = pb;
  if (a->step != b->step)
    return a->step < b->step ? -1 : 1;
  if (a->id != b->id)
    return a->id < b->id ? -1 : 1;
  return (a->row > b->row) - (a->row < b->row);
}

/* Children: by parent (row holds the parent index), then decreasing mass, then smaller id. */
static int by_parent_mass_id(const void *pa, const void *pb)
{
  const node_key *a = pa, *b = pb;
  if (a->row != b->row)
    return a->row < b->row ? -1 : 1;
  if (a->mass != b->mass)
    return a->mass > b->mass ? -1 : 1;
  return (a->id > b->id) - (a->id < b->id);
}

/* Roots: decreasing step (the last step's first), decreasing mass, smaller id. */
static int by_root_order(const void *pa, const void *pb)
{
  const node_key *a = pa, *b = pb;
  if (a->step != b->step)
    return a->step > b->step ? -1 : 1;
  if (a->mass != b->mass)
    return a->mass > b->mass ? -1 : 1;
  return (a->id > b->id) - (a->id < b->id);
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

static int64_t find_node(const layout_work *w, int64_t step, int64_t id)
{
  const node_key key = {step, id, 0.0, 0};
  int64_t lo = 0, hi = w->n;
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo) / 2;
    const node_key *m = &w->nodes[mid];
    if (m->step < key.step || (m->step == key.step && m->id < key.id))
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < w->n && w->nodes[lo].step == step && w->nodes[lo].id == id ? lo : -1;
}

static int64_t progenitor_step(const phew_link *link, int64_t step)
{
  return link->progenitor_step >= 0 ? link->progenitor_step : step - 1;
}

/* The rows checked; the nodes (distinct descendants) sorted by (step, id). */
static phew_status collect_nodes(const phew_link *links, const int64_t *steps, int64_t n_links, layout_work *w,
                                 char *message, size_t message_size)
{
  int64_t n = 0;
  for (int64_t k = 0; k < n_links; ++k) {
    const phew_link *l = &links[k];
    if (steps[k] < 0 || (l->progenitor_id >= 0 && progenitor_step(l, steps[k]) >= steps[k])) {
      snprintf(message, message_size,
               "merger tree row %lld: step %lld with progenitor step %lld (steps count from 0, a progenitor "
               "lies in an earlier step)",
               (long long)k, (long long)steps[k], (long long)progenitor_step(l, steps[k]));
      return PHEW_ERROR_ARGUMENT;
    }
    if (l->descendant_id < 0)
      continue;
    if (!isfinite(l->descendant_mass) || l->descendant_mass < 0.0) {
      snprintf(message, message_size, "merger tree row %lld: structure %lld of step %lld has mass %g", (long long)k,
               (long long)l->descendant_id, (long long)steps[k], l->descendant_mass);
      return PHEW_ERROR_DATA;
    }
    w->nodes[n++] = (node_key){steps[k], l->descendant_id, l->descendant_mass, k};
  }
  qsort(w->nodes, (size_t)n, sizeof *w->nodes, by_step_id_row);
  int64_t distinct = 0;
  for (int64_t i = 0; i < n; ++i)
    if (distinct == 0 || w->nodes[i].step != w->nodes[distinct - 1].step || w->nodes[i].id != w->nodes[distinct - 1].id)
      w->nodes[distinct++] = w->nodes[i]; /* the first row's mass */
  w->n = distinct;
  return PHEW_OK;
}

/* Edges (rows between two structures), main descendants and main progenitors. */
static phew_status link_nodes(const phew_link *links, const int64_t *steps, int64_t n_links, layout_work *w,
                              char *message, size_t message_size)
{
  for (int64_t v = 0; v < w->n; ++v)
    w->descendant[v] = w->main_progenitor[v] = -1;
  w->n_edges = 0;
  for (int64_t k = 0; k < n_links; ++k) {
    const phew_link *l = &links[k];
    if (l->progenitor_id < 0 || l->descendant_id < 0)
      continue;
    const int64_t from = progenitor_step(l, steps[k]);
    const int64_t p = find_node(w, from, l->progenitor_id), d = find_node(w, steps[k], l->descendant_id);
    if (p < 0) {
      snprintf(message, message_size,
               "merger tree row %lld links structure %lld of step %lld, which is no structure of that step",
               (long long)k, (long long)l->progenitor_id, (long long)from);
      return PHEW_ERROR_ARGUMENT;
    }
    w->edges[w->n_edges++] = (phew_tree_edge){p, d, k};
    if (l->kind != PHEW_LINK_DIRECT)
      continue;
    if (l->main_descendant && w->descendant[p] < 0)
      w->descendant[p] = d;
    if (l->main_progenitor && w->main_progenitor[d] < 0)
      w->main_progenitor[d] = p;
  }
  return PHEW_OK;
}

/* Children lists in drawing order, each node's main child, the roots in drawing order. */
static void order_children(layout_work *w, node_key *scratch)
{
  int64_t n_children = 0;
  for (int64_t v = 0; v < w->n; ++v)
    if (w->descendant[v] >= 0)
      scratch[n_children++] = (node_key){w->nodes[v].step, w->nodes[v].id, w->nodes[v].mass, w->descendant[v]};
  qsort(scratch, (size_t)n_children, sizeof *scratch, by_parent_mass_id);
  for (int64_t v = 0; v <= w->n; ++v)
    w->first[v] = 0;
  for (int64_t c = 0; c < n_children; ++c)
    ++w->first[scratch[c].row + 1];
  for (int64_t v = 0; v < w->n; ++v)
    w->first[v + 1] += w->first[v];
  for (int64_t c = 0; c < n_children; ++c) /* scratch is sorted by parent: in place */
    w->child[c] = find_node(w, scratch[c].step, scratch[c].id);
  for (int64_t v = 0; v < w->n; ++v) {
    const int64_t mp = w->main_progenitor[v];
    /* the main progenitor, if its main descendant is this node; else the most massive child */
    w->main[v] = mp >= 0 && w->descendant[mp] == v ? mp : w->first[v] < w->first[v + 1] ? w->child[w->first[v]] : -1;
  }
  w->n_roots = 0;
  for (int64_t v = 0; v < w->n; ++v)
    if (w->descendant[v] < 0)
      scratch[w->n_roots++] = (node_key){w->nodes[v].step, w->nodes[v].id, w->nodes[v].mass, v};
  qsort(scratch, (size_t)w->n_roots, sizeof *scratch, by_root_order);
  for (int64_t r = 0; r < w->n_roots; ++r)
    w->roots[r] = scratch[r].row;
}

/* Columns of every subtree: the main child's subtree (or the node's own column), then each
 * other child's subtree. Children lie at earlier steps, at smaller indices. */
static void measure(layout_work *w)
{
  for (int64_t v = 0; v < w->n; ++v) {
    int64_t width = w->main[v] >= 0 ? w->width[w->main[v]] : 1;
    for (int64_t c = w->first[v]; c < w->first[v + 1]; ++c)
      if (w->child[c] != w->main[v])
        width += w->width[w->child[c]];
    w->width[v] = width;
  }
}

/* Columns, final haloes and main branches, from the latest step down: a node's values are set
 * before its children's (they lie at smaller indices). */
static void place(const layout_work *w, int64_t last_step, phew_tree_node *out, int64_t *n_columns)
{
  int64_t next = 0;
  for (int64_t r = 0; r < w->n_roots; ++r) {
    const int64_t v = w->roots[r];
    out[v].x = (double)next;
    out[v].main_branch = 1;
    out[v].final_id = w->nodes[v].step == last_step ? w->nodes[v].id : -1;
    next += w->width[v] + 1; /* an empty column between trees */
  }
  *n_columns = next > 0 ? next - 1 : 0;
  for (int64_t v = w->n; v-- > 0;) {
    const int64_t main = w->main[v];
    double column = out[v].x + (main >= 0 ? (double)w->width[main] : 1.0);
    if (main >= 0) {
      out[main].x = out[v].x;
      out[main].main_branch = out[v].main_branch;
    }
    for (int64_t c = w->first[v]; c < w->first[v + 1]; ++c) {
      const int64_t child = w->child[c];
      out[child].final_id = out[v].final_id;
      if (child == main)
        continue;
      out[child].x = column;
      out[child].main_branch = 0;
      column += (double)w->width[child];
    }
  }
}

static void fill_nodes(const layout_work *w, phew_tree_node *out)
{
  for (int64_t v = 0; v < w->n; ++v) {
    out[v].step = w->nodes[v].step;
    out[v].id = w->nodes[v].id;
    out[v].mass = w->nodes[v].mass;
    out[v].descendant = w->descendant[v];
    out[v].main_progenitor = w->main_progenitor[v];
    out[v].n_progenitors = w->first[v + 1] - w->first[v];
  }
}

void phew_tree_drawing_free(phew_tree_drawing *drawing)
{
  if (!drawing)
    return;
  free(drawing->nodes);
  free(drawing->edges);
  memset(drawing, 0, sizeof *drawing);
  drawing->last_step = -1;
}

static void free_work(layout_work *w)
{
  free(w->nodes);
  free(w->descendant);
  free(w->main_progenitor);
  free(w->first);
  free(w->child);
  free(w->main);
  free(w->width);
  free(w->roots);
  free(w->edges);
}

phew_status phew_layout_merger_tree(phew_context *context, const phew_link *links, const int64_t *steps,
                                    int64_t n_links, phew_tree_drawing *drawing)
{
  /* snprintf with size 0 writes nothing: without a context there is no message */
  char *message = context ? context->message : NULL;
  const size_t message_size = context ? sizeof context->message : 0;
  if (message_size)
    message[0] = '\0';
  if (!drawing || n_links < 0 || (n_links > 0 && (!links || !steps))) {
    snprintf(message, message_size, "phew_layout_merger_tree: %s",
             !drawing      ? "no drawing to fill"
             : n_links < 0 ? "a negative number of rows"
                           : "a NULL row array");
    if (drawing)
      phew_tree_drawing_free(drawing);
    return PHEW_ERROR_ARGUMENT;
  }
  phew_tree_drawing_free(drawing);
  const int64_t n = n_links;
  layout_work w = {alloc_array(n, sizeof(node_key)),       0,
                   alloc_array(n, sizeof(int64_t)),        alloc_array(n, sizeof(int64_t)),
                   alloc_array(n + 1, sizeof(int64_t)),    alloc_array(n, sizeof(int64_t)),
                   alloc_array(n, sizeof(int64_t)),        alloc_array(n, sizeof(int64_t)),
                   alloc_array(n, sizeof(int64_t)),        0,
                   alloc_array(n, sizeof(phew_tree_edge)), 0};
  node_key *scratch = alloc_array(n, sizeof *scratch);
  phew_tree_node *out = NULL;
  phew_status status = w.nodes && w.descendant && w.main_progenitor && w.first && w.child && w.main && w.width &&
                               w.roots && w.edges && scratch
                           ? PHEW_OK
                           : PHEW_ERROR_MEMORY;
  if (status == PHEW_OK)
    status = collect_nodes(links, steps, n, &w, message, message_size);
  if (status == PHEW_OK)
    status = link_nodes(links, steps, n, &w, message, message_size);
  if (status == PHEW_OK && !(out = calloc((size_t)(w.n > 0 ? w.n : 1), sizeof *out)))
    status = PHEW_ERROR_MEMORY;
  if (status == PHEW_OK) { /* every check passed: now lay out and hand over */
    int64_t last_step = -1;
    for (int64_t k = 0; k < n; ++k)
      last_step = steps[k] > last_step ? steps[k] : last_step;
    order_children(&w, scratch);
    measure(&w);
    fill_nodes(&w, out);
    place(&w, last_step, out, &drawing->n_columns);
    drawing->n_nodes = w.n;
    drawing->nodes = out;
    drawing->n_edges = w.n_edges;
    drawing->edges = w.edges;
    drawing->last_step = last_step;
    w.edges = NULL;
    out = NULL;
  }
  if (status == PHEW_ERROR_MEMORY)
    snprintf(message, message_size, "out of memory while drawing the merger tree (%lld rows)", (long long)n);
  free(out);
  free(scratch);
  free_work(&w);
  return status;
}
