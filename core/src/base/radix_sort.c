/* LSD radix sort of 64-bit keys (radix_sort.h). Each pass cuts the keys into blocks, one task
 * each: the blocks count their digits, the offsets of (digit, block) come from those counts
 * in digit-major order, and each block scatters its keys (and payloads) to its offsets. Within
 * a digit the blocks keep their order and each block its own, so the pass is stable whatever
 * the number of blocks. */
#include "radix_sort.h"
#include "base.h"
#include "threads.h"

#include <stdlib.h>
#include <string.h>

enum {
  RADIX_BITS = 11, /* a block's counts stay in the L1 cache */
  RADIX_BUCKETS = 1 << RADIX_BITS,
  RADIX_MIN_BLOCK = 1 << 16 /* words per block at least */
};

int radix_index_bits(int64_t n)
{
  int bits = 1;
  while (bits < 63 && ((int64_t)1 << bits) < n)
    ++bits;
  return bits;
}

typedef struct radix_pass {
  const uint64_t *from;
  uint64_t *to;
  const int32_t *payload_from; /* or NULL */
  int32_t *payload_to;
  int64_t n, block; /* keys, keys per block */
  int shift, width; /* the digit: bits [shift, shift + width) */
  int64_t *count;   /* per block: RADIX_BUCKETS counts, then offsets */
  int scatter;      /* 0: count; 1: scatter */
} radix_pass;

static void pass_task(void *context, int thread, int64_t task)
{
  (void)thread;
  const radix_pass *p = context;
  const int64_t begin = task * p->block, end = begin + p->block < p->n ? begin + p->block : p->n;
  int64_t *restrict count = p->count + task * RADIX_BUCKETS;
  const uint64_t mask = ((uint64_t)1 << p->width) - 1;
  const int shift = p->shift;
  const uint64_t *restrict from = p->from;
  if (!p->scatter) {
    memset(count, 0, RADIX_BUCKETS * sizeof *count);
    for (int64_t i = begin; i < end; ++i)
      count[(from[i] >> shift) & mask]++;
    return;
  }
  uint64_t *restrict to = p->to;
  if (!p->payload_from) {
    for (int64_t i = begin; i < end; ++i)
      to[count[(from[i] >> shift) & mask]++] = from[i];
    return;
  }
  const int32_t *restrict payload_from = p->payload_from;
  int32_t *restrict payload_to = p->payload_to;
  for (int64_t i = begin; i < end; ++i) {
    const int64_t at = count[(from[i] >> shift) & mask]++;
    to[at] = from[i];
    payload_to[at] = payload_from[i];
  }
}

int radix_sort(uint64_t *key, int32_t *payload, int64_t n, int low, int high, int n_threads)
{
  if (n < 2 || low >= high)
    return 0;
  const int threads = threads_resolve(n_threads);
  int64_t blocks = (n + RADIX_MIN_BLOCK - 1) / RADIX_MIN_BLOCK;
  blocks = blocks > threads ? threads : blocks;
  uint64_t *other = phew_malloc((size_t)n, sizeof *other);
  int32_t *other_payload = payload ? phew_malloc((size_t)n, sizeof *other_payload) : NULL;
  int64_t *count = phew_malloc((size_t)blocks * RADIX_BUCKETS, sizeof *count);
  if (!other || (payload && !other_payload) || !count) {
    free(other);
    free(other_payload);
    free(count);
    return -1;
  }
  uint64_t *from = key, *to = other;
  int32_t *payload_from = payload, *payload_to = other_payload;
  for (int shift = low; shift < high; shift += RADIX_BITS) {
    const int width = high - shift < RADIX_BITS ? high - shift : RADIX_BITS;
    radix_pass p = {from, to, payload_from, payload_to, n, (n + blocks - 1) / blocks, shift, width, count, 0};
    threads_run(threads, blocks, pass_task, &p);
    /* the offsets, digit-major; a digit that holds every key leaves the order as it is */
    int64_t sum = 0, largest = 0;
    for (int d = 0; d < RADIX_BUCKETS; ++d) {
      int64_t in_digit = 0;
      for (int64_t k = 0; k < blocks; ++k) {
        const int64_t c = count[k * RADIX_BUCKETS + d];
        count[k * RADIX_BUCKETS + d] = sum;
        sum += c;
        in_digit += c;
      }
      largest = in_digit > largest ? in_digit : largest;
    }
    if (largest == n)
      continue;
    p.scatter = 1;
    threads_run(threads, blocks, pass_task, &p);
    to = from;
    from = p.to;
    payload_to = payload_from;
    payload_from = p.payload_to;
  }
  if (from != key) {
    memcpy(key, from, (size_t)n * sizeof *key);
    if (payload)
      memcpy(payload, payload_from, (size_t)n * sizeof *payload);
  }
  free(other);
  free(other_payload);
  free(count);
  return 0;
}
