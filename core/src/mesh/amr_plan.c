/* An AMR hierarchy as the ranks hold it, made into the phew_amr of phew_find_clumps
 * (phew_plan_amr, phew.h has the rules): the ranks check that they see the same hierarchy,
 * learn who holds which block, leave out the levels nobody loaded, check what PHEW needs of
 * the levels kept, move level-0 index 0 to the domain's corner and give every block an owner.
 * After the first two agreements every rank knows the same things, so every rank decides the
 * same; only a failed allocation needs agreeing again. */
#include "amr_mesh.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PLAN_MAX_COORD (INT64_C(1) << 62) /* box corners: their differences fit int64 */

/* The ranks' holdings: held[r * n + k] is nonzero when rank r holds box k. */
typedef struct holdings {
  int n_ranks;
  int64_t n;
  unsigned char *held;
} holdings;

static int holds(const holdings *w, int rank, int64_t box)
{
  return w->held[(size_t)rank * (size_t)w->n + (size_t)box];
}

static int held_anywhere(const holdings *w, int64_t box)
{
  for (int r = 0; r < w->n_ranks; ++r)
    if (holds(w, r, box))
      return 1;
  return 0;
}

/* "block i of level l": i counts the boxes of its level (listed level by level). */
static const char *block_name(const phew_amr_hierarchy *h, int64_t k, char *name, size_t size)
{
  int64_t first = k;
  while (first > 0 && h->boxes[first - 1].level == h->boxes[k].level)
    --first;
  snprintf(name, size, "block %lld of level %d", (long long)(k - first), (int)h->boxes[k].level);
  return name;
}

/* ---- the hierarchy as this rank passed it ------------------------------------------------ */

static phew_status check_box(const phew_amr_hierarchy *h, int64_t k, call_result *result)
{
  const phew_amr_box *b = &h->boxes[k];
  if (b->level < 0 || b->level >= h->n_levels)
    return phew_fail(result, PHEW_ERROR_ARGUMENT, "phew_plan_amr: box %lld has level %d, outside 0 .. %d", (long long)k,
                     (int)b->level, (int)h->n_levels - 1);
  if (k > 0 && b->level < h->boxes[k - 1].level)
    return phew_fail(result, PHEW_ERROR_ARGUMENT,
                     "phew_plan_amr: box %lld (level %d) follows a box of level %d: list the boxes level by level",
                     (long long)k, (int)b->level, (int)h->boxes[k - 1].level);
  for (int d = 0; d < 3; ++d)
    if (b->lo[d] <= -PLAN_MAX_COORD || b->lo[d] >= PLAN_MAX_COORD || b->hi[d] <= -PLAN_MAX_COORD ||
        b->hi[d] >= PLAN_MAX_COORD)
      return phew_fail(result, PHEW_ERROR_ARGUMENT, "phew_plan_amr: box %lld has a corner beyond 2^62 along %c",
                       (long long)k, (char)('x' + d));
  return PHEW_OK;
}

static phew_status check_hierarchy(const phew_amr_hierarchy *h, call_result *result)
{
  if (!h)
    return phew_fail(result, PHEW_ERROR_ARGUMENT, "phew_plan_amr: the hierarchy must not be NULL");
  if (h->n_levels < 0 || h->n_levels > AMR_MAX_LEVELS || (h->n_levels > 0 && !h->levels))
    return phew_fail(result, PHEW_ERROR_ARGUMENT, "phew_plan_amr: %d levels (0 to %d are allowed, and their list)",
                     (int)h->n_levels, AMR_MAX_LEVELS);
  if (h->n_boxes < 0 || h->n_boxes > INT_MAX || (h->n_boxes > 0 && !h->boxes))
    return phew_fail(result, PHEW_ERROR_ARGUMENT,
                     "phew_plan_amr: %lld boxes (0 to 2^31 - 1 are allowed, and their list)", (long long)h->n_boxes);
  phew_status s = PHEW_OK;
  for (int64_t k = 0; k < h->n_boxes && s == PHEW_OK; ++k)
    s = check_box(h, k, result);
  return s;
}

/* A fingerprint (FNV-1a) of everything every rank must see alike: all but the held flags. */
static uint64_t hierarchy_hash(const phew_amr_hierarchy *h)
{
  uint64_t hash = UINT64_C(1469598103934665603);
#define MIX(v) (hash = (hash ^ (uint64_t)(v)) * UINT64_C(1099511628211))
#define MIX_DOUBLE(x) (memcpy(&bits, &(x), sizeof bits), MIX(bits))
  uint64_t bits;
  MIX(h->n_levels);
  for (int l = 0; l < h->n_levels; ++l) {
    for (int d = 0; d < 3; ++d)
      MIX_DOUBLE(h->levels[l].spacing[d]);
    MIX(h->levels[l].refinement);
  }
  for (int d = 0; d < 3; ++d)
    MIX_DOUBLE(h->origin[d]);
  MIX(h->n_boxes);
  for (int64_t k = 0; k < h->n_boxes; ++k) {
    MIX(h->boxes[k].level);
    for (int d = 0; d < 3; ++d) {
      MIX(h->boxes[k].lo[d]);
      MIX(h->boxes[k].hi[d]);
    }
  }
#undef MIX_DOUBLE
#undef MIX
  return hash;
}

/* Collective: every rank sees rank 0's hierarchy (its fingerprint and number of boxes). */
static phew_status agree_on_hierarchy(const comm *c, const phew_amr_hierarchy *h, call_result *result)
{
  typedef struct seen {
    uint64_t hash;
    int64_t n_boxes;
  } seen;
  const seen mine = {hierarchy_hash(h), h->n_boxes};
  seen *all = phew_malloc((size_t)c->size, sizeof *all);
  if (comm_max(c, !all)) {
    free(all);
    return phew_fail(result, PHEW_ERROR_MEMORY, "out of memory while comparing the ranks' AMR hierarchies");
  }
  comm_allgather(c, &mine, sizeof mine, all);
  phew_status s = PHEW_OK;
  for (int r = 1; r < c->size && s == PHEW_OK; ++r)
    if (all[r].hash != all[0].hash || all[r].n_boxes != all[0].n_boxes)
      s = phew_fail(result, PHEW_ERROR_ARGUMENT,
                    "the ranks do not see the same AMR hierarchy (rank 0 has %lld blocks, rank %d has %lld blocks%s)",
                    (long long)all[0].n_boxes, r, (long long)all[r].n_boxes,
                    all[r].n_boxes == all[0].n_boxes ? " with other boxes, spacings or origin" : "");
  free(all);
  return s;
}

/* Collective: who holds which box. */
static phew_status gather_holdings(const comm *c, const phew_amr_hierarchy *h, holdings *w, call_result *result)
{
  w->n_ranks = c->size;
  w->n = h->n_boxes;
  unsigned char *mine = phew_malloc((size_t)w->n, 1);
  w->held = phew_malloc((size_t)w->n * (size_t)c->size, 1);
  if (comm_max(c, !mine || !w->held)) {
    free(mine);
    return phew_fail(result, PHEW_ERROR_MEMORY, "out of memory while gathering which rank holds which AMR block");
  }
  for (int64_t k = 0; k < w->n; ++k)
    mine[k] = h->boxes[k].held != 0;
  comm_allgather(c, mine, (size_t)w->n, w->held);
  free(mine);
  return PHEW_OK;
}

/* ---- the levels kept -------------------------------------------------------------------- */

/* All levels, or those below the first level of which no rank holds anything. */
static phew_status keep_levels(const phew_amr_hierarchy *h, const holdings *w, int32_t *kept, call_result *result)
{
  *kept = h->n_levels;
  int64_t missing = 0;
  while (missing < h->n_boxes && held_anywhere(w, missing))
    ++missing;
  if (missing == h->n_boxes)
    return PHEW_OK;
  const int32_t level = h->boxes[missing].level;
  int whole_levels = 1; /* nothing held from this level on */
  for (int64_t k = 0; k < h->n_boxes; ++k)
    whole_levels &= h->boxes[k].level < level || !held_anywhere(w, k);
  char name[64];
  if (whole_levels && level == 0)
    return phew_fail(result, PHEW_ERROR_ARGUMENT,
                     "the input AMR holds no data: none of its %lld blocks has a dataset on any rank",
                     (long long)h->n_boxes);
  if (!whole_levels || (missing > 0 && h->boxes[missing - 1].level == level))
    return phew_fail(result, PHEW_ERROR_ARGUMENT,
                     "no rank holds the dataset of %s of the AMR (every block of a level that is loaded must be "
                     "present on some rank)",
                     block_name(h, missing, name, sizeof name));
  *kept = level;
  return PHEW_OK;
}

/* 3-D boxes, a usable level-0 spacing, ratio 2 and halving spacings on the levels kept. */
static phew_status check_kept_levels(const phew_amr_hierarchy *h, int32_t kept, int64_t n_kept, call_result *result)
{
  if (h->boxes[0].level != 0)
    return phew_fail(result, PHEW_ERROR_ARGUMENT, "the AMR has no blocks on level 0 (level 0 must cover the domain)");
  char name[64];
  for (int64_t k = 0; k < n_kept; ++k)
    for (int d = 0; d < 3; ++d)
      if (h->boxes[k].hi[d] < h->boxes[k].lo[d])
        return phew_fail(result, PHEW_ERROR_ARGUMENT,
                         "the AMR is not 3-D (%s has no cells along %c); PHEW on AMR needs 3-D blocks (2-D AMR is "
                         "not supported)",
                         block_name(h, k, name, sizeof name), (char)('x' + d));
  const double *spacing0 = h->levels[0].spacing;
  for (int d = 0; d < 3; ++d)
    if (!(spacing0[d] > 0.0) || !isfinite(spacing0[d]))
      return phew_fail(result, PHEW_ERROR_ARGUMENT, "the AMR's level-0 spacing along %c is %f; it must be positive",
                       (char)('x' + d), spacing0[d]);
  for (int l = 0; l + 1 < kept; ++l) {
    const int ratio = h->levels[l].refinement;
    if (ratio != 2)
      return phew_fail(result, PHEW_ERROR_ARGUMENT,
                       "the refinement ratio between levels %d and %d of the AMR is %d; PHEW on AMR needs refinement "
                       "ratio 2 on every level",
                       l, l + 1, ratio);
    /* a sanity check only (phew_amr takes level 0's spacing and halves it): .vthb files store
     * spacings with 6 significant digits, so level 3 of 1/64 reads back as 0.00195312 */
    const double *coarse = h->levels[l].spacing, *fine = h->levels[l + 1].spacing;
    for (int d = 0; d < 3; ++d)
      if (fabs(2.0 * fine[d] - coarse[d]) > 1e-4 * coarse[d])
        return phew_fail(result, PHEW_ERROR_ARGUMENT,
                         "the spacing of level %d of the AMR along %c is %f, not half of level %d's %f (refinement "
                         "ratio 2 is needed on every level)",
                         l + 1, (char)('x' + d), fine[d], l, coarse[d]);
  }
  return PHEW_OK;
}

/* ---- the blocks of the core -------------------------------------------------------------- */

/* The domain: the bounding box of the level-0 boxes (the first ones of the list). */
static void set_domain(const phew_amr_hierarchy *h, phew_amr_plan *plan)
{
  int64_t lo[3], hi[3];
  for (int d = 0; d < 3; ++d) {
    lo[d] = h->boxes[0].lo[d];
    hi[d] = h->boxes[0].hi[d] + 1;
  }
  for (int64_t k = 1; k < h->n_boxes && h->boxes[k].level == 0; ++k)
    for (int d = 0; d < 3; ++d) {
      lo[d] = h->boxes[k].lo[d] < lo[d] ? h->boxes[k].lo[d] : lo[d];
      hi[d] = h->boxes[k].hi[d] + 1 > hi[d] ? h->boxes[k].hi[d] + 1 : hi[d];
    }
  for (int d = 0; d < 3; ++d) {
    plan->level0_offset[d] = lo[d];
    plan->amr.level0_dims[d] = hi[d] - lo[d];
    plan->amr.spacing[d] = h->levels[0].spacing[d];
    plan->amr.origin[d] = h->origin[d] + (double)lo[d] * h->levels[0].spacing[d];
  }
}

/* Box k moved so that level-0 index 0 is the domain's corner. */
static phew_status shift_box(const phew_amr_hierarchy *h, const phew_amr_plan *plan, int64_t k, phew_amr_block *b,
                             call_result *result)
{
  const phew_amr_box *box = &h->boxes[k];
  b->level = box->level;
  for (int d = 0; d < 3; ++d) {
    const exact_bin lo = (exact_bin)box->lo[d] - (exact_bin)plan->level0_offset[d] * ((exact_bin)1 << box->level);
    if (lo < INT64_MIN || lo > INT64_MAX) {
      char name[64];
      return phew_fail(result, PHEW_ERROR_ARGUMENT,
                       "%s of the AMR lies too far from the domain's corner along %c for 64-bit cell indices",
                       block_name(h, k, name, sizeof name), (char)('x' + d));
    }
    b->lo[d] = (int64_t)lo;
    b->dims[d] = box->hi[d] - box->lo[d] + 1;
  }
  return PHEW_OK;
}

/* Owners: single holders first, then the holder owning the fewest cells so far (ties: the
 * lowest rank), in list order; load[] counts the cells each rank owns (saturating). */
static void pick_owners(phew_amr_plan *plan, int64_t *load)
{
  phew_amr_block *blocks = (phew_amr_block *)plan->amr.blocks;
  for (int pass = 0; pass < 2; ++pass)
    for (int64_t k = 0; k < plan->amr.n_blocks; ++k) {
      const int64_t first = plan->holder_start[k], n = plan->holder_start[k + 1] - first;
      if ((pass == 0) != (n == 1))
        continue;
      int32_t owner = plan->holders[first];
      for (int64_t i = 1; i < n; ++i)
        owner = load[plan->holders[first + i]] < load[owner] ? plan->holders[first + i] : owner;
      int64_t cells;
      if (phew_checked_product(blocks[k].dims, 3, &cells) != PHEW_OK)
        cells = INT64_MAX;
      blocks[k].owner = owner;
      load[owner] = cells > INT64_MAX - load[owner] ? INT64_MAX : load[owner] + cells;
    }
}

/* The holders of every kept block, as lists of ranks. */
static void list_holders(const holdings *w, phew_amr_plan *plan)
{
  int64_t at = 0;
  for (int64_t k = 0; k < plan->amr.n_blocks; ++k) {
    plan->holder_start[k] = at;
    for (int r = 0; r < w->n_ranks; ++r)
      if (holds(w, r, k))
        plan->holders[at++] = r;
  }
  plan->holder_start[plan->amr.n_blocks] = at;
}

static phew_status make_blocks(const phew_amr_hierarchy *h, const holdings *w, int64_t n_kept, phew_amr_plan *plan,
                               call_result *result)
{
  int64_t n_holders = 0;
  for (int64_t k = 0; k < n_kept; ++k)
    for (int r = 0; r < w->n_ranks; ++r)
      n_holders += holds(w, r, k) != 0;
  phew_amr_block *blocks = phew_calloc((size_t)n_kept, sizeof *blocks);
  plan->holder_start = phew_malloc((size_t)n_kept + 1, sizeof *plan->holder_start);
  plan->holders = phew_malloc((size_t)n_holders, sizeof *plan->holders);
  int64_t *load = phew_calloc((size_t)w->n_ranks, sizeof *load);
  plan->amr.blocks = blocks;
  phew_status s = PHEW_OK;
  if (!blocks || !plan->holder_start || !plan->holders || !load)
    s = phew_fail(result, PHEW_ERROR_MEMORY, "out of memory while listing the AMR blocks");
  set_domain(h, plan);
  for (int64_t k = 0; k < n_kept && s == PHEW_OK; ++k)
    s = shift_box(h, plan, k, &blocks[k], result);
  if (s == PHEW_OK) {
    plan->amr.n_blocks = n_kept;
    list_holders(w, plan);
    pick_owners(plan, load);
  }
  free(load);
  return s;
}

static phew_status plan_amr(const phew_context *context, const phew_amr_hierarchy *h, phew_amr_plan *plan,
                            call_result *result)
{
  comm c;
  phew_status s = comm_init(&c, context, result);
  if (s != PHEW_OK)
    return s; /* no communicator to agree over */
  s = comm_agree(&c, check_hierarchy(h, result), result);
  if (s == PHEW_OK)
    s = comm_agree(&c, agree_on_hierarchy(&c, h, result), result);
  if (s != PHEW_OK)
    return s;
  if (h->n_boxes == 0)
    return phew_fail(result, PHEW_ERROR_ARGUMENT, "the input AMR is empty (no blocks)");
  holdings w = {0, 0, NULL};
  s = gather_holdings(&c, h, &w, result);
  int32_t kept = 0;
  if (s == PHEW_OK)
    s = keep_levels(h, &w, &kept, result);
  int64_t n_kept = 0;
  while (n_kept < h->n_boxes && h->boxes[n_kept].level < kept)
    ++n_kept;
  if (s == PHEW_OK)
    s = check_kept_levels(h, kept, n_kept, result);
  if (s == PHEW_OK)
    s = make_blocks(h, &w, n_kept, plan, result);
  plan->n_levels = kept;
  free(w.held);
  return comm_agree(&c, s, result); /* only an allocation can have failed on some ranks alone */
}

phew_status phew_plan_amr(phew_context *context, const phew_amr_hierarchy *hierarchy, phew_amr_plan *plan)
{
  if (plan)
    memset(plan, 0, sizeof *plan);
  if (!context || !plan)
    return call_refused(context, "phew_plan_amr");
  call_result r;
  call_result_start(&r);
  const phew_status s = plan_amr(context, hierarchy, plan, &r);
  if (s != PHEW_OK)
    phew_amr_plan_free(plan);
  call_result_report(&r, s, context);
  return s;
}

void phew_amr_plan_free(phew_amr_plan *plan)
{
  if (!plan)
    return;
  free((void *)plan->amr.blocks);
  free(plan->holder_start);
  free(plan->holders);
  memset(plan, 0, sizeof *plan);
}
