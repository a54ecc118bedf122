/* The own particles in space-filling-curve order (Morton, 21 bits per axis over the domain):
 * neighbours in space become neighbours in memory, which every later stage (searches, the
 * graph, PHEW's passes over its cells) reads far faster than an arbitrary input order. The
 * answers still go back to each particle's place (origin_index). Nothing depends on this
 * order: ties anywhere are broken by global ids, and the sums are exact. */
#include "points.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The bits of v spread to every third position. */
static uint64_t spread3(uint64_t v)
{
  v &= 0x1fffff;
  v = (v | v << 32) & 0x1f00000000ffffull;
  v = (v | v << 16) & 0x1f0000ff0000ffull;
  v = (v | v << 8) & 0x100f00f00f00f00full;
  v = (v | v << 4) & 0x10c30c30c30c30c3ull;
  v = (v | v << 2) & 0x1249249249249249ull;
  return v;
}

typedef struct keyed {
  uint64_t key;
  int64_t index;
} keyed;

/* LSD radix sort of (key, index) by key, 16 bits at a time; keys use 63 bits. */
static int radix_sort(keyed *a, int64_t n)
{
  keyed *b = phew_malloc((size_t)n + 1, sizeof *b);
  int64_t *count = phew_malloc(65536, sizeof *count);
  if (!b || !count) {
    free(b);
    free(count);
    return -1;
  }
  for (int shift = 0; shift < 64; shift += 16) {
    memset(count, 0, 65536 * sizeof *count);
    for (int64_t i = 0; i < n; ++i)
      count[(a[i].key >> shift) & 0xffff]++;
    int64_t sum = 0;
    for (int d = 0; d < 65536; ++d) {
      const int64_t c = count[d];
      count[d] = sum;
      sum += c;
    }
    for (int64_t i = 0; i < n; ++i)
      b[count[(a[i].key >> shift) & 0xffff]++] = a[i];
    keyed *t = a;
    a = b;
    b = t;
  }
  /* four passes: the sorted keys are back in the caller's array */
  free(b);
  free(count);
  return 0;
}

/* values (n items of `size` bytes) reordered: item k takes old item order[k]. */
static int permute(void *values, size_t size, const keyed *order, int64_t n)
{
  if (!values)
    return 0;
  unsigned char *copy = phew_malloc((size_t)n + 1, size);
  if (!copy)
    return -1;
  memcpy(copy, values, (size_t)n * size);
  for (int64_t k = 0; k < n; ++k)
    memcpy((unsigned char *)values + (size_t)k * size, copy + (size_t)order[k].index * size, size);
  free(copy);
  return 0;
}

phew_status spatial_order(const points_context *x, particle_set *s)
{
  const int64_t n = s->n_own;
  keyed *order = phew_malloc((size_t)n + 1, sizeof *order);
  int failed = !order;
  if (!failed && !s->origin_index) { /* the particles are where they were passed */
    s->origin_index = phew_malloc((size_t)n + 1, sizeof *s->origin_index);
    failed = !s->origin_index;
    for (int64_t i = 0; !failed && i < n; ++i)
      s->origin_index[i] = i;
  }
  double scale[3];
  for (int d = 0; d < 3; ++d) {
    const double extent = x->hi[d] - x->lo[d];
    scale[d] = extent > 0.0 ? 2097151.0 / extent : 0.0;
  }
  for (int64_t i = 0; !failed && i < n; ++i) {
    uint64_t key = 0;
    for (int d = 0; d < 3; ++d) {
      double c = (s->position[3 * i + d] - x->lo[d]) * scale[d];
      c = c < 0.0 ? 0.0 : (c > 2097151.0 ? 2097151.0 : c);
      key |= spread3((uint64_t)c) << d;
    }
    order[i] = (keyed){key, i};
  }
  failed = failed || radix_sort(order, n) != 0 || permute(s->position, 3 * sizeof(double), order, n) != 0 ||
           permute(s->id, sizeof(int64_t), order, n) != 0 || permute(s->mass, sizeof(double), order, n) != 0 ||
           permute(s->velocity, 3 * sizeof(double), order, n) != 0 ||
           permute(s->density, sizeof(double), order, n) != 0 ||
           permute(s->origin_rank, sizeof(int32_t), order, n) != 0 ||
           permute(s->origin_index, sizeof(int64_t), order, n) != 0;
  free(order);
  return comm_agree(x->c, failed ? phew_fail(x->result, PHEW_ERROR_MEMORY, "out of memory while ordering the particles")
                                 : PHEW_OK,
                    x->result);
}
