/* phew_plan_amr over 1-4 ranks: every rank passes the same AMR hierarchy (7 boxes: four of
 * level 0, three of level 1, counted from an origin of their own) with its own held flags, and
 * every rank must get the same plan, with owners and holders as the rules say, here written
 * out by hand for each number of ranks:
 *  - each box held by one rank (box k by rank k % size): that rank owns it;
 *  - every box held by every rank: owners by fewest cells so far, ties to the lowest rank;
 *  - box 5 (512 cells) held by the last rank alone, the others by every rank: box 5 counts
 *    first, then the rest spread over the ranks;
 *  - level 1 held by no rank: left out on every rank;
 * and problems fail every rank with the same status and message: a level-1 box no rank holds,
 * the last rank seeing other boxes or fewer boxes, a bad list on the last rank only. */
#include "phew/phew.h"

#include <mpi.h>
#include <stdio.h>
#include <string.h>

enum { N_BOXES = 7 };

static int rank, size, failures;

static void fail(const char *what)
{
  printf("FAIL rank %d of %d: %s\n", rank, size, what);
  failures++;
}

typedef struct hierarchy {
  phew_amr_level levels[2];
  phew_amr_box boxes[N_BOXES];
  phew_amr_hierarchy view;
} hierarchy;

static void add(hierarchy *h, int k, int level, int64_t x, int64_t y, int64_t z, int64_t n)
{
  phew_amr_box *b = &h->boxes[k];
  memset(b, 0, sizeof *b);
  b->level = level;
  const int64_t lo[3] = {x, y, z};
  for (int d = 0; d < 3; ++d) {
    b->lo[d] = lo[d];
    b->hi[d] = lo[d] + n - 1;
  }
}

/* An 8x8x4 level 0 of four 4x4x4 boxes counted from (10, 20, 30); level 1: a 4^3 box, an 8^3
 * box and a 4^3 box (64, 512 and 64 cells). held[k] says which boxes this rank holds. */
static void make(hierarchy *h, const int held[N_BOXES])
{
  memset(h, 0, sizeof *h);
  for (int l = 0; l < 2; ++l) {
    for (int d = 0; d < 3; ++d)
      h->levels[l].spacing[d] = l ? 0.5 : 1.0;
    h->levels[l].refinement = 2;
  }
  add(h, 0, 0, 10, 20, 30, 4);
  add(h, 1, 0, 14, 20, 30, 4);
  add(h, 2, 0, 10, 24, 30, 4);
  add(h, 3, 0, 14, 24, 30, 4);
  add(h, 4, 1, 20, 40, 60, 4);
  add(h, 5, 1, 26, 46, 60, 8);
  add(h, 6, 1, 20, 50, 62, 4);
  for (int k = 0; k < N_BOXES; ++k)
    h->boxes[k].held = held[k];
  h->view.n_levels = 2;
  h->view.levels = h->levels;
  h->view.n_boxes = N_BOXES;
  h->view.boxes = h->boxes;
  h->view.origin[0] = -1.0;
}

static phew_status plan(hierarchy *h, phew_amr_plan *p, char message[512])
{
  MPI_Comm world = MPI_COMM_WORLD;
  phew_context context;
  phew_context_init(&context);
  context.mpi_comm = &world;
  const phew_status s = phew_plan_amr(&context, &h->view, p);
  memcpy(message, context.message, 512);
  return s;
}

/* The plan has these owners and holders (holders: every rank, one rank, or none: -1 all,
 * r >= 0 that rank alone) and the same bytes on every rank. */
static void expect_plan(const char *name, const phew_amr_plan *p, int n_levels, int64_t n_blocks, const int *owners,
                        const int *holder)
{
  char what[256];
  if (p->n_levels != n_levels || p->amr.n_blocks != n_blocks) {
    snprintf(what, sizeof what, "%s: %d levels, %lld blocks (expected %d, %lld)", name, (int)p->n_levels,
             (long long)p->amr.n_blocks, n_levels, (long long)n_blocks);
    fail(what);
    return;
  }
  const int64_t shifted[N_BOXES][3] = {{0, 0, 0}, {4, 0, 0}, {0, 4, 0}, {4, 4, 0}, {0, 0, 0}, {6, 6, 0}, {0, 10, 2}};
  for (int64_t k = 0; k < n_blocks; ++k) {
    const phew_amr_block *b = &p->amr.blocks[k];
    const int expected_holders = holder[k] < 0 ? size : 1;
    int ok = b->owner == owners[k] && p->holder_start[k + 1] - p->holder_start[k] == expected_holders;
    for (int64_t i = p->holder_start[k]; ok && i < p->holder_start[k + 1]; ++i)
      ok = p->holders[i] == (holder[k] < 0 ? (int)(i - p->holder_start[k]) : holder[k]);
    for (int d = 0; d < 3; ++d)
      ok = ok && b->lo[d] == shifted[k][d];
    if (!ok) {
      snprintf(what, sizeof what, "%s: block %lld has owner %d (expected %d), %lld holders, lo %lld %lld %lld", name,
               (long long)k, (int)b->owner, owners[k], (long long)(p->holder_start[k + 1] - p->holder_start[k]),
               (long long)b->lo[0], (long long)b->lo[1], (long long)b->lo[2]);
      fail(what);
    }
  }
  if (p->amr.level0_dims[0] != 8 || p->amr.level0_dims[1] != 8 || p->amr.level0_dims[2] != 4 ||
      p->level0_offset[0] != 10 || p->amr.origin[0] != 9.0 || p->amr.origin[1] != 20.0) {
    snprintf(what, sizeof what, "%s: domain %lld x %lld x %lld from %g %g", name, (long long)p->amr.level0_dims[0],
             (long long)p->amr.level0_dims[1], (long long)p->amr.level0_dims[2], p->amr.origin[0], p->amr.origin[1]);
    fail(what);
  }
  /* the same blocks on every rank */
  phew_amr_block first[N_BOXES];
  memcpy(first, p->amr.blocks, (size_t)n_blocks * sizeof *first);
  MPI_Bcast(first, (int)(n_blocks * (int64_t)sizeof *first), MPI_BYTE, 0, MPI_COMM_WORLD);
  if (memcmp(first, p->amr.blocks, (size_t)n_blocks * sizeof *first)) {
    snprintf(what, sizeof what, "%s: other blocks than rank 0's", name);
    fail(what);
  }
}

static void run_plan(const char *name, const int held[N_BOXES], int n_levels, int64_t n_blocks, const int *owners,
                     const int *holder)
{
  hierarchy h;
  make(&h, held);
  phew_amr_plan p;
  char message[512];
  if (plan(&h, &p, message) != PHEW_OK) {
    char what[700];
    snprintf(what, sizeof what, "%s: failed: %s", name, message);
    fail(what);
  } else
    expect_plan(name, &p, n_levels, n_blocks, owners, holder);
  phew_amr_plan_free(&p);
}

/* Every rank fails with the status and the message expected (the same on every rank). */
static void expect_failure(const char *name, hierarchy *h, const char *expected)
{
  phew_amr_plan p;
  char message[512], first[512];
  const phew_status s = plan(h, &p, message);
  memcpy(first, message, sizeof first);
  MPI_Bcast(first, (int)sizeof first, MPI_CHAR, 0, MPI_COMM_WORLD);
  if (s != PHEW_ERROR_ARGUMENT || strcmp(message, expected) || strcmp(message, first) || p.amr.blocks) {
    char what[1400];
    snprintf(what, sizeof what, "%s: status %d, message '%s' (expected '%s')", name, (int)s, message, expected);
    fail(what);
  }
  phew_amr_plan_free(&p);
}

static void owners_as_the_rules_say(void)
{
  const int one[N_BOXES] = {1, 1, 1, 1, 1, 1, 1};
  /* box k held by rank k % size */
  int round[N_BOXES], owners_round[N_BOXES], holder_round[N_BOXES];
  for (int k = 0; k < N_BOXES; ++k) {
    round[k] = k % size == rank;
    owners_round[k] = holder_round[k] = k % size;
  }
  run_plan("round robin", round, 2, N_BOXES, owners_round, holder_round);

  /* everything everywhere: 64, 64, 64, 64, 64, 512, 64 cells by fewest so far */
  static const int everywhere[5][N_BOXES] = {
      {0}, {0, 0, 0, 0, 0, 0, 0}, {0, 1, 0, 1, 0, 1, 0}, {0, 1, 2, 0, 1, 2, 0}, {0, 1, 2, 3, 0, 1, 2}};
  const int all[N_BOXES] = {-1, -1, -1, -1, -1, -1, -1};
  run_plan("every box on every rank", one, 2, N_BOXES, everywhere[size], all);

  /* box 5 on the last rank alone, counted first */
  int lonely[N_BOXES], holder_lonely[N_BOXES];
  for (int k = 0; k < N_BOXES; ++k) {
    lonely[k] = k != 5 || rank == size - 1;
    holder_lonely[k] = k == 5 ? size - 1 : -1;
  }
  static const int lonely_owners[5][N_BOXES] = {
      {0}, {0, 0, 0, 0, 0, 0, 0}, {0, 0, 0, 0, 0, 1, 0}, {0, 1, 0, 1, 0, 2, 1}, {0, 1, 2, 0, 1, 3, 2}};
  run_plan("box 5 on the last rank alone", lonely, 2, N_BOXES, lonely_owners[size], holder_lonely);

  /* level 1 loaded nowhere */
  const int coarse[N_BOXES] = {1, 1, 1, 1, 0, 0, 0};
  run_plan("level 1 not loaded", coarse, 1, 4, everywhere[size], all);
}

static void failures_on_every_rank(void)
{
  char expected[512];
  hierarchy h;
  const int gap[N_BOXES] = {1, 1, 1, 1, 1, 0, 1};
  make(&h, gap);
  expect_failure("a level-1 box nobody holds", &h,
                 "no rank holds the dataset of block 1 of level 1 of the AMR (every block of a level that is loaded "
                 "must be present on some rank)");
  if (size == 1)
    return;
  const int one[N_BOXES] = {1, 1, 1, 1, 1, 1, 1};
  make(&h, one);
  if (rank == size - 1)
    h.boxes[6].lo[0] += 2; /* the last rank sees another box */
  snprintf(expected, sizeof expected,
           "the ranks do not see the same AMR hierarchy (rank 0 has 7 blocks, rank %d has 7 blocks with other boxes, "
           "spacings or origin)",
           size - 1);
  expect_failure("another box on the last rank", &h, expected);
  make(&h, one);
  if (rank == size - 1)
    h.view.n_boxes = 6;
  snprintf(expected, sizeof expected,
           "the ranks do not see the same AMR hierarchy (rank 0 has 7 blocks, rank %d has 6 blocks)", size - 1);
  expect_failure("fewer boxes on the last rank", &h, expected);
  make(&h, one);
  if (rank == size - 1)
    h.boxes[6].level = 0; /* out of order on that rank alone */
  expect_failure("a bad list on the last rank", &h,
                 "phew_plan_amr: box 6 (level 0) follows a box of level 1: list the boxes level by level");
}

int main(int argc, char **argv)
{
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size > 4) {
    if (rank == 0)
      printf("FAIL this test runs on 1 to 4 ranks\n");
    MPI_Finalize();
    return 1;
  }
  owners_as_the_rules_say();
  failures_on_every_rank();
  int total = 0;
  MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0)
    printf("%d rank(s): %s\n", size, total ? "FAILED" : "owners, holders, levels and failures as expected");
  MPI_Finalize();
  return total ? 1 : 0;
}
