/* Union-find over up to 2^31 elements (the particles of a rank), with unions made by several
 * threads at once (Willis et al. 2020, section 3: lock-free, compare-and-swap).
 *
 * Parents are C11 atomics. A union links the larger of two roots under the smaller with a
 * compare-and-swap on the larger one, and starts again from the two roots if another thread
 * changed it in between. A root therefore only ever gains parents of smaller index, so the
 * root of a set is always its smallest element: the answer does not depend on the order of
 * the unions or on the threads' timing. A find halves the path it walks (each element it
 * passes points to its grandparent): any ancestor is a correct parent, so racing halvings are
 * harmless, and relaxed memory order suffices (each parent only ever moves up its own
 * chain). */
#ifndef PHEW_BASE_UNION_FIND_H
#define PHEW_BASE_UNION_FIND_H

#include <stdatomic.h>
#include <stdint.h>

typedef struct union_find {
  int64_t n;
  _Atomic int32_t *parent;
} union_find;

/* Every element its own set; 0, or -1 if memory ran out. */
int union_find_init(union_find *u, int64_t n);
void union_find_free(union_find *u);

/* The root (smallest element) of i's set. */
static inline int32_t union_find_root(union_find *u, int32_t i)
{
  for (;;) {
    int32_t p = atomic_load_explicit(&u->parent[i], memory_order_relaxed);
    if (p == i)
      return i;
    const int32_t g = atomic_load_explicit(&u->parent[p], memory_order_relaxed);
    if (g == p)
      return p;
    /* i -> g, unless another thread moved i meanwhile (to an ancestor: as good) */
    atomic_compare_exchange_weak_explicit(&u->parent[i], &p, g, memory_order_relaxed, memory_order_relaxed);
    i = g;
  }
}

/* Joins the sets of a and b. */
static inline void union_find_join(union_find *u, int32_t a, int32_t b)
{
  for (;;) {
    a = union_find_root(u, a);
    b = union_find_root(u, b);
    if (a == b)
      return;
    if (a < b) {
      const int32_t t = a;
      a = b;
      b = t;
    }
    int32_t expected = a; /* a is still a root: it goes under b */
    if (atomic_compare_exchange_strong_explicit(&u->parent[a], &expected, b, memory_order_relaxed,
                                                memory_order_relaxed))
      return;
  }
}

#endif
