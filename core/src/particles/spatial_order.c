/* The own particles in space-filling-curve order (Morton keys of 21 bits per axis over the
 * domain, sorted by their top 11 bits per axis):
 * neighbours in space become neighbours in memory, which every later stage (searches, the
 * graph, PHEW's passes over its cells) reads far faster than an arbitrary input order. The
 * answers still go back to each particle's place (origin_index). Nothing depends on this
 * order: ties anywhere are broken by global ids, and the sums are exact. */
#include "particles.h"
#include "radix_sort.h"
#include "threads.h"

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

enum {
  ORDER_KEY_TOP = 63,    /* the Morton key's bits: 21 per axis */
  ORDER_SORTED_BITS = 33 /* its top 11 bits per axis are sorted: the lower ones only order
                            particles inside a cell of 2^-11 of the domain per axis, which
                            gains memory locality nothing */
};

/* One array of the particle set to reorder: item k takes old item order[k]. */
typedef struct permutation {
  void *values; /* NULL: the set has no such array */
  size_t size;  /* bytes per item */
} permutation;

typedef struct permute_job {
  permutation *arrays;
  const uint64_t *order; /* sorted words: the particle's old place in the low index_bits */
  uint64_t index_mask;
  int64_t n;
  int *failed; /* per array */
} permute_job;

/* Task: one array reordered, through a copy. */
static void permute_task(void *context, int thread, int64_t task)
{
  (void)thread;
  const permute_job *job = context;
  const permutation *p = &job->arrays[task];
  job->failed[task] = 0;
  if (!p->values)
    return;
  unsigned char *copy = phew_malloc((size_t)job->n + 1, p->size);
  if (!copy) {
    job->failed[task] = 1;
    return;
  }
  memcpy(copy, p->values, (size_t)job->n * p->size);
  for (int64_t k = 0; k < job->n; ++k)
    memcpy((unsigned char *)p->values + (size_t)k * p->size, copy + (size_t)(job->order[k] & job->index_mask) * p->size,
           p->size);
  free(copy);
}

enum { KEY_BLOCK = 65536 }; /* particles per task of the keys */

typedef struct key_job {
  const points_context *x;
  const double *position;
  double scale[3];
  uint64_t *order;
  int64_t n;
  int index_bits; /* below the key's top bits, the particle's place */
} key_job;

/* Task: the Morton keys of one block of particles. */
static void key_task(void *context, int thread, int64_t task)
{
  (void)thread;
  const key_job *job = context;
  const int64_t end = (task + 1) * KEY_BLOCK < job->n ? (task + 1) * KEY_BLOCK : job->n;
  for (int64_t i = task * KEY_BLOCK; i < end; ++i) {
    uint64_t key = 0;
    for (int d = 0; d < 3; ++d) {
      double c = (job->position[3 * i + d] - job->x->lo[d]) * job->scale[d];
      c = c < 0.0 ? 0.0 : (c > 2097151.0 ? 2097151.0 : c);
      key |= spread3((uint64_t)c) << d;
    }
    /* the key's top bits above the index */
    job->order[i] = (key >> job->index_bits) << job->index_bits | (uint64_t)i;
  }
}

phew_status spatial_order(const points_context *x, particle_set *s)
{
  const int64_t n = s->n_own;
  uint64_t *order = phew_malloc((size_t)n + 1, sizeof *order);
  const int index_bits = radix_index_bits(n);
  int failed = !order;
  if (!failed && !s->origin_index) { /* the particles are where they were passed */
    s->origin_index = phew_malloc((size_t)n + 1, sizeof *s->origin_index);
    failed = !s->origin_index;
    for (int64_t i = 0; !failed && i < n; ++i)
      s->origin_index[i] = i;
  }
  key_job keys = {x, s->position, {0, 0, 0}, order, n, index_bits};
  for (int d = 0; d < 3; ++d) {
    const double extent = x->hi[d] - x->lo[d];
    keys.scale[d] = extent > 0.0 ? 2097151.0 / extent : 0.0;
  }
  if (!failed)
    threads_run(x->n_threads, (n + KEY_BLOCK - 1) / KEY_BLOCK, key_task, &keys);
  failed = failed ||
           radix_sort(order, NULL, n,
                      index_bits > ORDER_KEY_TOP - ORDER_SORTED_BITS ? index_bits : ORDER_KEY_TOP - ORDER_SORTED_BITS,
                      ORDER_KEY_TOP, x->n_threads) != 0;
  if (!failed) { /* the arrays in parallel, one task each */
    permutation arrays[] = {{s->position, 3 * sizeof(double)}, {s->velocity, 3 * sizeof(double)},
                            {s->id, sizeof(int64_t)},          {s->origin_index, sizeof(int64_t)},
                            {s->mass, sizeof(double)},         {s->density, sizeof(double)},
                            {s->origin_rank, sizeof(int32_t)}};
    enum { N_ARRAYS = sizeof arrays / sizeof arrays[0] };
    int array_failed[N_ARRAYS];
    permute_job job = {arrays, order, ((uint64_t)1 << index_bits) - 1, n, array_failed};
    threads_run(x->n_threads, N_ARRAYS, permute_task, &job);
    for (int k = 0; k < N_ARRAYS; ++k)
      failed = failed || array_failed[k];
  }
  free(order);
  return comm_agree(x->c,
                    failed ? phew_fail(x->result, PHEW_ERROR_MEMORY, "out of memory while ordering the particles")
                           : PHEW_OK,
                    x->result);
}
