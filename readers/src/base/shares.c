/* Consecutive shares of a count over ranks (shares.h). */
#include "shares.h"

void share_of(int64_t total, int rank, int size, int64_t *first, int64_t *n)
{
  const int64_t base = total / size, extra = total % size;
  *first = base * rank + (rank < extra ? rank : extra);
  *n = base + (rank < extra ? 1 : 0);
}
