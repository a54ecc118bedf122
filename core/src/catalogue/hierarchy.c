/* The dendrogram (paper section 2.6). Leaves are the clumps. When peaks merge on saddle
 * level n, every peak that receives mergers on that level becomes a new node of level n whose
 * children are its own previous node and the nodes of the peaks that merged into it; each
 * child records the saddle through which it joined (the peak's own previous node joins at
 * the highest of those saddles). Roots are the haloes. */
#include "hierarchy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct tree_node {
  int64_t head; /* clump whose peak heads the node */
  int32_t level;
  int64_t parent; /* index into the node array, -1 for roots */
  double saddle;
  int64_t clump; /* leaves: clump index, else -1 */
  int64_t n_cells;
  exact_sum mass; /* the exact sum of its leaves' masses */
} tree_node;

typedef struct sort_key {
  int32_t level;
  double density;
  int64_t global_id;
  int64_t node;
} sort_key;

static int compare_nodes(const void *pa, const void *pb)
{
  const sort_key *a = pa, *b = pb;
  if (a->level != b->level)
    return a->level < b->level ? -1 : 1;
  if (a->density != b->density)
    return a->density > b->density ? -1 : 1;
  return a->global_id < b->global_id ? -1 : (a->global_id > b->global_id);
}

/* The nodes of the merger levels, level by level; returns the number of nodes (the leaves
 * first). current[c]: the node clump c's peak heads now; created[c]: its new node on the
 * level being merged, or -1. */
static int64_t merge_nodes(const hierarchy_input *h, tree_node *nodes, int64_t *current, int64_t *created)
{
  int64_t n = 0;
  for (int64_t c = 0; c < h->n_clumps; ++c) {
    const sums *clump = &h->clump[c]->clump;
    nodes[n] = (tree_node){c, 0, -1, 0.0, c, clump->n_cells, clump->mass};
    current[c] = n++;
    created[c] = -1;
  }
  for (int64_t e0 = 0; e0 < h->n_mergers;) {
    const int32_t level = h->mergers[e0].level;
    int64_t e1 = e0;
    while (e1 < h->n_mergers && h->mergers[e1].level == level)
      ++e1;
    for (int64_t e = e0; e < e1; ++e) {
      const merger *ev = &h->mergers[e];
      const int64_t target = ev->parent, child = ev->child;
      if (created[target] < 0) {
        nodes[n] = (tree_node){target, level, -1, 0.0, -1, 0, {{0}, EXACT_SUM_EMPTY}};
        created[target] = n++;
        tree_node *own = &nodes[current[target]];
        own->parent = created[target];
        own->saddle = ev->saddle;
      }
      tree_node *own = &nodes[current[target]];
      if (ev->saddle > own->saddle)
        own->saddle = ev->saddle;
      nodes[current[child]].parent = created[target];
      nodes[current[child]].saddle = ev->saddle;
    }
    for (int64_t e = e0; e < e1; ++e) {
      const int64_t target = h->mergers[e].parent;
      if (created[target] >= 0) {
        current[target] = created[target];
        created[target] = -1;
      }
    }
    e0 = e1;
  }
  /* children always come before their parent, so one forward sweep adds up the sizes; the
   * sums are exact, so a root's mass is its halo's, bit for bit */
  for (int64_t i = 0; i < n; ++i)
    if (nodes[i].parent >= 0) {
      nodes[nodes[i].parent].n_cells += nodes[i].n_cells;
      exact_sum_merge(&nodes[nodes[i].parent].mass, &nodes[i].mass);
    }
  return n;
}

/* The nodes of haloes above the mass threshold, by level, then peak order: their keys (and
 * new_index, node -> place or -1); returns how many. */
static int64_t keep_nodes(const hierarchy_input *h, tree_node *nodes, int64_t n, sort_key *keys, int64_t *new_index)
{
  int64_t kept = 0;
  for (int64_t i = 0; i < n; ++i) {
    new_index[i] = -1;
    const int64_t halo = h->halo_of_clump[nodes[i].head];
    if (h->halo_final_id[halo] < 0)
      continue;
    if (nodes[i].parent < 0)
      nodes[i].saddle = h->root_saddle[halo];
    const clump_record *head = h->clump[nodes[i].head];
    keys[kept++] = (sort_key){nodes[i].level, head->peak_density, head->peak_id, i};
  }
  qsort(keys, (size_t)kept, sizeof *keys, compare_nodes);
  for (int64_t k = 0; k < kept; ++k)
    new_index[keys[k].node] = k;
  return kept;
}

/* Row k of the dendrogram table. */
static phew_status write_node(const hierarchy_input *h, const tree_node *t, const int64_t *new_index, int64_t k,
                              phew_node *o, call_result *result)
{
  const clump_record *head = h->clump[t->head];
  const int64_t halo = h->halo_of_clump[t->head];
  o->id = k;
  o->parent_id = t->parent >= 0 ? new_index[t->parent] : -1;
  o->level = t->level;
  o->clump_id = t->clump >= 0 ? h->clump_final_id[t->clump] : -1;
  o->halo_id = h->halo_final_id[halo];
  o->peak_id = head->peak_id;
  o->peak_density = head->peak_density;
  o->saddle_density = t->saddle;
  o->n_cells = t->n_cells;
  char object[96], why[sizeof result->message];
  snprintf(object, sizeof object, "dendrogram node %lld (peak %s %lld)", (long long)k,
           h->mesh->particles ? "particle" : "cell", (long long)head->peak_id);
  if (sums_to_double(h->mesh, sums_mass_value(h->mesh, &t->mass), "mass", object, &o->mass, why, sizeof why) != 0)
    return phew_fail(result, PHEW_ERROR_DATA, "%s", why);
  return PHEW_OK;
}

phew_status hierarchy_build(const hierarchy_input *h, call_result *result)
{
  const int64_t capacity = h->n_clumps + h->n_mergers; /* each merger adds at most one node */
  tree_node *nodes = phew_malloc((size_t)capacity, sizeof *nodes);
  int64_t *current = phew_malloc((size_t)h->n_clumps, sizeof *current);
  int64_t *created = phew_malloc((size_t)h->n_clumps, sizeof *created);
  int64_t *new_index = phew_malloc((size_t)capacity, sizeof *new_index);
  sort_key *keys = phew_malloc((size_t)capacity, sizeof *keys);
  phew_status status = PHEW_OK;
  int64_t kept = 0;
  if (nodes && current && created && new_index && keys)
    kept = keep_nodes(h, nodes, merge_nodes(h, nodes, current, created), keys, new_index);
  else
    status = phew_fail(result, PHEW_ERROR_MEMORY, "out of memory while building the dendrogram");
  if (status == PHEW_OK) {
    result->nodes = calloc((size_t)(kept > 0 ? kept : 1),
                           sizeof *result->nodes); /* padding too: tables compare bytewise */
    if (!result->nodes)
      status = phew_fail(result, PHEW_ERROR_MEMORY, "out of memory while building the dendrogram");
  }
  for (int64_t k = 0; status == PHEW_OK && k < kept; ++k)
    status = write_node(h, &nodes[keys[k].node], new_index, k, &result->nodes[k], result);
  if (status == PHEW_OK)
    result->n_nodes = kept;
  free(nodes);
  free(current);
  free(created);
  free(new_index);
  free(keys);
  return status;
}
