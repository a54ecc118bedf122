/* The hierarchy of a grouping (physics.h): the parent table checked, each structure's root and
 * height, and a preorder in which every subtree is a contiguous range. */
#include "physics.h"

#include <stdlib.h>
#include <string.h>

void structure_tree_free(structure_tree *t)
{
  free(t->parent);
  free(t->root);
  free(t->height);
  free(t->order);
  free(t->place);
  free(t->subtree_end);
  memset(t, 0, sizeof *t);
}

/* Parents in range; following parents from any structure reaches the top within n steps
 * (a longer path repeats a structure: a cycle). */
static phew_status check_parents(const structure_tree *t, call_result *result)
{
  for (int64_t s = 0; s < t->n; ++s)
    if (t->parent[s] < -1 || t->parent[s] >= t->n || t->parent[s] == s)
      return phew_fail(result, PHEW_ERROR_ARGUMENT,
                       "structure %lld has parent %lld: parents must be -1 or another structure (0 .. %lld)",
                       (long long)s, (long long)t->parent[s], (long long)t->n - 1);
  /* roots by memoised walks: root[s] = -2 unknown, -3 on the current path */
  for (int64_t s = 0; s < t->n; ++s)
    t->root[s] = -2;
  for (int64_t s = 0; s < t->n; ++s) {
    int64_t v = s;
    while (t->root[v] == -2) {
      t->root[v] = -3;
      if (t->parent[v] < 0) {
        t->root[v] = v;
        break;
      }
      v = t->parent[v];
    }
    if (t->root[v] == -3)
      return phew_fail(result, PHEW_ERROR_ARGUMENT, "structure %lld is its own ancestor: the parents form a cycle",
                       (long long)v);
    const int64_t root = t->root[v];
    for (int64_t w = s; t->root[w] == -3; w = t->parent[w])
      t->root[w] = root;
  }
  return PHEW_OK;
}

/* Preorder without recursion: the children of each structure listed by id (list p + 1 for
 * parent p, list 0 for the roots), then a stack. */
static phew_status build_order(structure_tree *t)
{
  const int64_t n = t->n;
  int64_t *start = phew_calloc((size_t)n + 2, sizeof *start), *cursor = phew_malloc((size_t)n + 2, sizeof *cursor);
  int64_t *child = phew_malloc((size_t)n + 1, sizeof *child), *stack = phew_malloc((size_t)n + 1, sizeof *stack);
  if (!start || !cursor || !child || !stack) {
    free(start);
    free(cursor);
    free(child);
    free(stack);
    return PHEW_ERROR_MEMORY;
  }
  for (int64_t s = 0; s < n; ++s)
    ++start[t->parent[s] + 2];
  for (int64_t k = 1; k <= n + 1; ++k)
    start[k] += start[k - 1]; /* list L is child[start[L] .. start[L + 1]) */
  memcpy(cursor, start, ((size_t)n + 2) * sizeof *cursor);
  for (int64_t s = 0; s < n; ++s)
    child[cursor[t->parent[s] + 1]++] = s;
  int64_t top = 0;
  for (int64_t i = start[1] - 1; i >= start[0]; --i)
    stack[top++] = child[i];
  int64_t placed = 0;
  while (top > 0) {
    const int64_t s = stack[--top];
    t->place[s] = placed;
    t->order[placed++] = s;
    for (int64_t i = start[s + 2] - 1; i >= start[s + 1]; --i)
      stack[top++] = child[i];
  }
  free(start);
  free(cursor);
  free(child);
  free(stack);
  /* subtree ends and heights, children before parents: reverse preorder */
  for (int64_t s = 0; s < n; ++s) {
    t->subtree_end[s] = t->place[s] + 1;
    t->height[s] = 0;
  }
  t->max_height = 0;
  for (int64_t i = n - 1; i >= 0; --i) {
    const int64_t s = t->order[i], p = t->parent[s];
    if (t->height[s] > t->max_height)
      t->max_height = t->height[s];
    if (p < 0)
      continue;
    if (t->subtree_end[s] > t->subtree_end[p])
      t->subtree_end[p] = t->subtree_end[s];
    if (t->height[s] + 1 > t->height[p])
      t->height[p] = t->height[s] + 1;
  }
  return PHEW_OK;
}

phew_status structure_tree_build(structure_tree *t, int64_t n, const int64_t *parent, call_result *result)
{
  memset(t, 0, sizeof *t);
  if (n < 0)
    return phew_fail(result, PHEW_ERROR_ARGUMENT, "the number of structures is negative (%lld)", (long long)n);
  t->n = n;
  t->parent = phew_malloc((size_t)n + 1, sizeof *t->parent);
  t->root = phew_malloc((size_t)n + 1, sizeof *t->root);
  t->height = phew_malloc((size_t)n + 1, sizeof *t->height);
  t->order = phew_malloc((size_t)n + 1, sizeof *t->order);
  t->place = phew_malloc((size_t)n + 1, sizeof *t->place);
  t->subtree_end = phew_malloc((size_t)n + 1, sizeof *t->subtree_end);
  if (!t->parent || !t->root || !t->height || !t->order || !t->place || !t->subtree_end) {
    structure_tree_free(t);
    return phew_fail(result, PHEW_ERROR_MEMORY, "out of memory for %lld structures", (long long)n);
  }
  for (int64_t s = 0; s < n; ++s)
    t->parent[s] = parent ? parent[s] : -1;
  phew_status status = check_parents(t, result);
  if (status == PHEW_OK && build_order(t) != PHEW_OK)
    status = phew_fail(result, PHEW_ERROR_MEMORY, "out of memory for %lld structures", (long long)n);
  if (status != PHEW_OK)
    structure_tree_free(t);
  return status;
}
