/* How a count of things (particles, files) is split into consecutive shares over ranks. */
#ifndef PHEW_READERS_SHARES_H
#define PHEW_READERS_SHARES_H

#include <stdint.h>

/* Rank r of size gets [*first, *first + *n) of total: the first total % size ranks one more. */
void share_of(int64_t total, int rank, int size, int64_t *first, int64_t *n);

#endif
