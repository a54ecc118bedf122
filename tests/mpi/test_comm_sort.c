/* comm_sort (core/src/comm/sort.c) over 1-4 ranks: every record arrives once, each rank's share
 * is sorted, the shares follow each other in rank order, and records with equal keys share a
 * rank. Cases: random keys with repeats, every record on one rank, no records at all, and all
 * keys equal. Each rank checks against the whole list, which every rank builds the same way. */
#include "comm.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct record {
  uint64_t high, low; /* the key */
  int64_t serial;     /* which record: each once */
} record;

static uint64_t mix(uint64_t z)
{
  z += UINT64_C(0x9E3779B97F4A7C15);
  z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
  z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
  return z ^ (z >> 31);
}

enum layout { SPREAD_RANDOM, ALL_ON_LAST, NOTHING, ALL_EQUAL };

/* Record k of the case: its key and the rank that passes it. */
static record record_of(int64_t k, enum layout l, int size, int *rank)
{
  const uint64_t z = mix((uint64_t)k);
  *rank = l == ALL_ON_LAST ? size - 1 : (int)(mix(z) % (uint64_t)size);
  if (l == ALL_EQUAL)
    return (record){7, 7, k};
  return (record){z % 50, mix(z + 1) % 3, k}; /* few distinct keys: many repeats */
}

static int key_less(const record *a, const record *b)
{
  return a->high != b->high ? a->high < b->high : a->low < b->low;
}

static int run_case(comm *c, const char *name, enum layout l, int64_t n)
{
  record *mine = malloc((size_t)n * sizeof *mine + 1);
  int64_t n_mine = 0;
  for (int64_t k = 0; l != NOTHING && k < n; ++k) {
    int r;
    const record e = record_of(k, l, c->size, &r);
    if (r == c->rank)
      mine[n_mine++] = e;
  }
  inbox in;
  int bad = comm_sort(c, mine, n_mine, sizeof *mine, &in) != PHEW_OK;
  const record *got = (const record *)in.items;
  for (int64_t k = 1; !bad && k < in.n; ++k)
    bad = key_less(&got[k], &got[k - 1]);
  /* every record once: count them over the ranks */
  int64_t expected = l == NOTHING ? 0 : n, total = comm_sum(c, in.n);
  int64_t *seen = calloc((size_t)n + 1, sizeof *seen);
  for (int64_t k = 0; k < in.n; ++k)
    ++seen[got[k].serial];
  comm_sum_array(c, seen, n);
  for (int64_t k = 0; k < expected; ++k)
    bad |= seen[k] != 1;
  bad |= total != expected;
  /* the shares in rank order, equal keys on one rank: each rank's last key is below the next
   * nonempty rank's first */
  record edge[2] = {{UINT64_MAX, UINT64_MAX, -1}, {0, 0, -1}};
  if (in.n > 0) {
    edge[0] = got[0];
    edge[1] = got[in.n - 1];
  }
  record *edges = malloc((size_t)c->size * sizeof edge);
  comm_allgather(c, edge, sizeof edge, edges);
  const record *last = NULL;
  for (int r = 0; r < c->size; ++r) {
    if (edges[2 * r].serial < 0)
      continue;
    if (last && !key_less(last, &edges[2 * r]))
      bad = 1;
    last = &edges[2 * r + 1];
  }
  bad = (int)comm_max(c, bad);
  if (c->rank == 0)
    printf("%-28s %d ranks, %lld records: %s\n", name, c->size, (long long)expected, bad ? "FAILED" : "ok");
  free(mine);
  free(seen);
  free(edges);
  inbox_free(&in);
  return bad;
}

int main(int argc, char **argv)
{
  MPI_Init(&argc, &argv);
  MPI_Comm world = MPI_COMM_WORLD;
  phew_context context;
  phew_context_init(&context);
  context.mpi_comm = &world;
  call_result result;
  call_result_start(&result);
  comm c;
  comm_init(&c, &context, &result);
  int failures = 0;
  failures |= run_case(&c, "random keys with repeats", SPREAD_RANDOM, 20000);
  failures |= run_case(&c, "all on the last rank", ALL_ON_LAST, 5000);
  failures |= run_case(&c, "no records", NOTHING, 10);
  failures |= run_case(&c, "all keys equal", ALL_EQUAL, 3000);
  if (c.rank == 0)
    printf("%s\n", failures ? "FAILED" : "all passed");
  MPI_Finalize();
  return failures;
}
