/* Sorting particles by a key: 64-bit words that hold the key in their high bits and the
 * particle's index in their low bits, so that a pass moves 8 bytes per particle and the
 * order is total (equal keys keep increasing indices). Internal to the core. */
#ifndef PHEW_PARTICLES_RADIX_SORT_H
#define PHEW_PARTICLES_RADIX_SORT_H

#include <stdint.h>

/* Bits that hold the indices 0 .. n - 1 (at least 1). */
int radix_index_bits(int64_t n);

/* Stable LSD radix sort of a[0, n) by the bits [low, high) of each word (high <= 64), 11 bits
 * per pass on up to n_threads threads; a pass whose digit is the same in every word is
 * skipped. The result does not depend on the thread count. 0, or -1 if memory ran out (a is
 * then unchanged). */
int radix_sort_words(uint64_t *a, int64_t n, int low, int high, int n_threads);

#endif
