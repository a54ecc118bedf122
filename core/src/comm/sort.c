/* A sort of records spread over the ranks (comm.h): a sample sort. Each rank sorts its own
 * records, offers regular samples of their keys, every rank picks the same splitters from all
 * the samples, the records go to the rank of their splitter range, and each rank sorts what it
 * received. */
#include "comm.h"

#include <stdlib.h>
#include <string.h>

enum { SAMPLES_PER_RANK = 16 };

typedef struct sort_key {
  uint64_t high, low;
} sort_key;

static sort_key key_of(const void *record)
{
  sort_key k;
  memcpy(&k, record, sizeof k);
  return k;
}

static int compare_keys(sort_key a, sort_key b)
{
  if (a.high != b.high)
    return a.high < b.high ? -1 : 1;
  return a.low < b.low ? -1 : (a.low > b.low);
}

static int by_key(const void *a, const void *b) { return compare_keys(key_of(a), key_of(b)); }

static int by_sample(const void *a, const void *b) { return compare_keys(*(const sort_key *)a, *(const sort_key *)b); }

/* Collective: size - 1 splitters, the same on every rank, from every rank's regular samples
 * of its sorted records (empty ranks offer none: their slots hold the largest key). */
static phew_status choose_splitters(comm *c, const unsigned char *sorted, int64_t n, size_t item_size, sort_key *split)
{
  sort_key mine[SAMPLES_PER_RANK];
  int64_t offered[2] = {0, 0};
  for (int k = 0; k < SAMPLES_PER_RANK; ++k) {
    mine[k] = (sort_key){UINT64_MAX, UINT64_MAX};
    if (n > 0) {
      mine[k] = key_of(sorted + (size_t)((n * (2 * k + 1)) / (2 * SAMPLES_PER_RANK)) * item_size);
      ++offered[0];
    }
  }
  sort_key *all = phew_malloc((size_t)c->size * SAMPLES_PER_RANK, sizeof *all);
  if (comm_max(c, !all)) {
    free(all);
    return PHEW_ERROR_MEMORY;
  }
  comm_allgather(c, mine, sizeof mine, all);
  offered[1] = comm_sum(c, offered[0]);
  qsort(all, (size_t)c->size * SAMPLES_PER_RANK, sizeof *all, by_sample); /* offered ones first */
  for (int r = 1; r < c->size; ++r)
    split[r - 1] = offered[1] > 0 ? all[(offered[1] * r) / c->size] : (sort_key){UINT64_MAX, UINT64_MAX};
  free(all);
  return PHEW_OK;
}

/* The first of the n sorted records whose key is >= k. */
static int64_t lower_bound(const unsigned char *sorted, int64_t n, size_t item_size, sort_key k)
{
  int64_t lo = 0, hi = n;
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo) / 2;
    if (compare_keys(key_of(sorted + (size_t)mid * item_size), k) < 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

phew_status comm_sort(comm *c, const void *items, int64_t n, size_t item_size, inbox *out)
{
  memset(out, 0, sizeof *out);
  unsigned char *sorted = phew_malloc((size_t)n + 1, item_size);
  sort_key *split = phew_malloc((size_t)c->size, sizeof *split);
  int *count = phew_calloc((size_t)c->size, sizeof *count);
  const int failed = !sorted || !split || !count || n > INT32_MAX;
  phew_status status = comm_max(c, failed) ? PHEW_ERROR_MEMORY : PHEW_OK;
  if (status == PHEW_OK) {
    if (n > 0)
      memcpy(sorted, items, (size_t)n * item_size);
    qsort(sorted, (size_t)n, item_size, by_key);
    status = choose_splitters(c, sorted, n, item_size, split);
  }
  if (status == PHEW_OK) {
    int64_t from = 0;
    for (int r = 0; r < c->size; ++r) { /* rank r takes the keys in [split[r - 1], split[r]) */
      const int64_t to = r + 1 < c->size ? lower_bound(sorted, n, item_size, split[r]) : n;
      count[r] = (int)(to - from);
      from = to;
    }
    status = comm_exchange_grouped(c, sorted, count, item_size, out);
  }
  if (status == PHEW_OK)
    qsort(out->items, (size_t)out->n, item_size, by_key);
  free(sorted);
  free(split);
  free(count);
  return status;
}
