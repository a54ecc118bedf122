/* Sorting particles by a key: 64-bit keys, with the particles' indices either packed into
 * their low bits (an order that is total, 8 bytes a particle moved) or in a payload array that
 * moves with them (keys of up to 64 bits). */
#ifndef PHEW_BASE_RADIX_SORT_H
#define PHEW_BASE_RADIX_SORT_H

#include <stdint.h>

/* Bits that hold the indices 0 .. n - 1 (at least 1). */
int radix_index_bits(int64_t n);

/* Stable LSD radix sort of key[0, n) by the bits [low, high) of each key (high <= 64), 11 bits
 * per pass on up to n_threads threads, payload[k] (if not NULL) moving with key[k]; a pass
 * whose digit is the same in every key is skipped. The result does not depend on the thread
 * count. 0, or -1 if memory ran out (the arrays are then unchanged). */
int radix_sort(uint64_t *key, int32_t *payload, int64_t n, int low, int high, int n_threads);

#endif
