/* Union-find (union_find.h): the sets' storage; joins and finds are inline. */
#include "union_find.h"

#include <stdlib.h>
#include <string.h>

int union_find_init(union_find *u, int64_t n)
{
  u->n = n;
  u->parent = malloc(((size_t)n + 1) * sizeof *u->parent);
  if (!u->parent)
    return -1;
  for (int64_t i = 0; i < n; ++i)
    atomic_init(&u->parent[i], (int32_t)i);
  return 0;
}

void union_find_free(union_find *u)
{
  free(u->parent);
  memset(u, 0, sizeof *u);
}
