/* The leaf cells of a distributed AMR hierarchy (see amr_mesh.h): checking the description,
 * the padded maps of this rank's blocks, the ghost cells, and the neighbours of a leaf. */
#include "amr_mesh.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void create_fine_ghosts(amr_cursor *c);

/* ---- the description ------------------------------------------------------------------- */

/* A fingerprint of everything every rank must pass alike. */
static uint64_t description_hash(const phew_amr *d)
{
  uint64_t h = UINT64_C(1469598103934665603);
#define MIX(v) (h = (h ^ (uint64_t)(v)) * UINT64_C(1099511628211))
  for (int k = 0; k < 3; ++k) {
    MIX(d->level0_dims[k]);
    MIX(d->periodic[k] != 0);
    uint64_t bits;
    memcpy(&bits, &d->origin[k], sizeof bits);
    MIX(bits);
    memcpy(&bits, &d->spacing[k], sizeof bits);
    MIX(bits);
  }
  MIX(d->n_blocks);
  for (int64_t b = 0; b < d->n_blocks; ++b) {
    const phew_amr_block *k = &d->blocks[b];
    MIX(k->level);
    MIX(k->owner);
    for (int a = 0; a < 3; ++a) {
      MIX(k->lo[a]);
      MIX(k->dims[a]);
    }
  }
#undef MIX
  return h;
}

static phew_status check_domain(amr_mesh *a, const phew_amr *d, call_result *result)
{
  for (int k = 0; k < 3; ++k) {
    const char axis = (char)('x' + k);
    if (d->level0_dims[k] < 1 || d->level0_dims[k] > PHEW_MAX_AXIS_CELLS)
      return phew_fail(result, PHEW_ERROR_ARGUMENT, "the AMR level 0 has %lld cells along %c: 1 to 2^53 are allowed",
                       (long long)d->level0_dims[k], axis);
    if (!(d->spacing[k] > 0.0) || !isfinite(d->spacing[k]) || !isfinite(d->origin[k]) ||
        !isfinite(d->origin[k] + (double)d->level0_dims[k] * d->spacing[k]))
      return phew_fail(result, PHEW_ERROR_ARGUMENT,
                       "the AMR domain along %c needs a finite origin and a positive, finite level-0 spacing", axis);
  }
  if (d->n_blocks < 1 || !d->blocks)
    return phew_fail(result, PHEW_ERROR_ARGUMENT, "the AMR hierarchy has no blocks: there is nothing to segment");
  int top = 0;
  for (int64_t b = 0; b < d->n_blocks; ++b)
    if (d->blocks[b].level > top)
      top = d->blocks[b].level;
  if (top >= AMR_MAX_LEVELS)
    top = AMR_MAX_LEVELS - 1; /* the block check names it */
  a->n_levels = top + 1;
  int64_t offset = 0, n_level;
  for (int level = 0; level < a->n_levels; ++level) {
    for (int k = 0; k < 3; ++k) {
      if (d->level0_dims[k] > (PHEW_MAX_AXIS_CELLS >> (level + 1))) /* centres: see amr_cursor_coord */
        return phew_fail(result, PHEW_ERROR_ARGUMENT,
                         "AMR level %d would have more than 2^52 cells along %c: too many levels", level,
                         (char)('x' + k));
      a->level_dims[level][k] = d->level0_dims[k] << level;
    }
    a->level_offset[level] = offset;
    if (phew_checked_product(a->level_dims[level], 3, &n_level) != 0 || n_level > INT64_MAX - offset)
      return phew_fail(result, PHEW_ERROR_ARGUMENT,
                       "the AMR hierarchy has too many cells (levels 0 to %d) for 64-bit cell ids", level);
    offset += n_level;
  }
  return PHEW_OK;
}

static phew_status check_block(const amr_mesh *a, const phew_amr_block *k, int64_t b, int n_ranks, call_result *result)
{
  if (k->level < 0 || k->level >= AMR_MAX_LEVELS || k->level >= a->n_levels)
    return phew_fail(result, PHEW_ERROR_ARGUMENT, "AMR block %lld has level %d", (long long)b, (int)k->level);
  if (k->owner < 0 || k->owner >= n_ranks)
    return phew_fail(result, PHEW_ERROR_ARGUMENT, "AMR block %lld names owner rank %d, but there are %d rank(s)",
                     (long long)b, (int)k->owner, n_ranks);
  for (int d = 0; d < 3; ++d) {
    const int64_t n = a->level_dims[k->level][d];
    if (k->dims[d] < 1 || k->lo[d] < 0 || k->lo[d] > n || k->dims[d] > n - k->lo[d])
      return phew_fail(result, PHEW_ERROR_ARGUMENT,
                       "AMR block %lld (level %d) spans cells %lld to %lld along %c, outside the level's 0 to %lld",
                       (long long)b, (int)k->level, (long long)k->lo[d], (long long)(k->lo[d] + k->dims[d] - 1),
                       (char)('x' + d), (long long)(n - 1));
    if (k->level > 0 && ((k->lo[d] | k->dims[d]) & 1))
      return phew_fail(result, PHEW_ERROR_ARGUMENT,
                       "AMR block %lld (level %d) is not aligned to the cells of level %d along %c (first cell %lld, "
                       "%lld cells): PHEW needs a refinement ratio of 2 with even block bounds",
                       (long long)b, (int)k->level, (int)k->level - 1, (char)('x' + d), (long long)k->lo[d],
                       (long long)k->dims[d]);
  }
  return PHEW_OK;
}

/* Overlaps within a level, and the cells of the coarser level under each block. */
typedef struct overlap_check {
  const phew_amr *desc;
  int64_t block;
  int64_t lo[3], hi[3];
  int64_t covered; /* cells of the box that the visited blocks cover */
} overlap_check;

static int count_overlap(void *context, int64_t b)
{
  overlap_check *o = context;
  const phew_amr_block *k = &o->desc->blocks[b];
  if (b == o->block)
    return 0;
  int64_t n = 1;
  for (int d = 0; d < 3; ++d) {
    const int64_t lo = k->lo[d] > o->lo[d] ? k->lo[d] : o->lo[d];
    const int64_t hi = k->lo[d] + k->dims[d] < o->hi[d] ? k->lo[d] + k->dims[d] : o->hi[d];
    n *= hi - lo;
  }
  o->covered += n;
  return 0;
}

static phew_status check_tiling(amr_mesh *a, const phew_amr *d, int64_t *stamp, call_result *result)
{
  int64_t level0 = 0, token = 0;
  for (int64_t b = 0; b < d->n_blocks; ++b) {
    const phew_amr_block *k = &d->blocks[b];
    overlap_check o = {d, b, {0}, {0}, 0};
    for (int i = 0; i < 3; ++i) {
      o.lo[i] = k->lo[i];
      o.hi[i] = k->lo[i] + k->dims[i];
    }
    amr_tiles_visit(&a->tiles, d, k->level, k->lo, k->dims, stamp, ++token, count_overlap, &o);
    if (o.covered > 0)
      return phew_fail(result, PHEW_ERROR_ARGUMENT, "AMR block %lld overlaps another block of level %d", (long long)b,
                       (int)k->level);
    if (k->level == 0) {
      level0 += k->dims[0] * k->dims[1] * k->dims[2]; /* inside the domain: no overflow */
      continue;
    }
    /* the cells of the next coarser level under the block, all covered by its blocks */
    overlap_check under = {d, -1, {0}, {0}, 0};
    int64_t lo[3], dims[3];
    for (int i = 0; i < 3; ++i) {
      lo[i] = under.lo[i] = k->lo[i] / 2;
      dims[i] = k->dims[i] / 2;
      under.hi[i] = lo[i] + dims[i];
    }
    amr_tiles_visit(&a->tiles, d, k->level - 1, lo, dims, stamp, ++token, count_overlap, &under);
    if (under.covered != dims[0] * dims[1] * dims[2])
      return phew_fail(result, PHEW_ERROR_ARGUMENT,
                       "AMR block %lld (level %d) is not inside the blocks of level %d: levels must nest", (long long)b,
                       (int)k->level, (int)k->level - 1);
  }
  int64_t n0;
  phew_checked_product(d->level0_dims, 3, &n0);
  if (level0 != n0)
    return phew_fail(result, PHEW_ERROR_ARGUMENT,
                     "the level-0 blocks hold %lld cells but the domain has %lld: level 0 must cover the domain",
                     (long long)level0, (long long)n0);
  return PHEW_OK;
}

/* ---- local cells, ghosts and maps --------------------------------------------------------- */

/* Ghost k of the ghost cell with this global id, or -1. */
static int64_t ghost_find(const amr_mesh *a, int64_t id)
{
  return a->ghost_index.slots ? id_map_find(&a->ghost_index, id) : -1;
}

/* Local index of the ghost copy of cell id (owned by owner), added if new; AMR_FAILED if out
 * of memory. */
static int64_t ghost_add(amr_mesh *a, int64_t id, int owner)
{
  const int64_t k = ghost_find(a, id);
  if (k >= 0)
    return a->n_own_cells + k;
  if (a->n_ghosts == a->ghost_capacity) {
    const int64_t c = a->ghost_capacity < 1024 ? 1024 : 2 * a->ghost_capacity;
    int64_t *ids = phew_realloc(a->ghost_id, (size_t)c, sizeof *ids);
    if (ids)
      a->ghost_id = ids;
    int32_t *owners = phew_realloc(a->ghost_owner, (size_t)c, sizeof *owners);
    if (owners)
      a->ghost_owner = owners;
    if (!ids || !owners)
      return AMR_FAILED;
    a->ghost_capacity = c;
  }
  int64_t existing;
  if (id_map_insert(&a->ghost_index, id, a->n_ghosts, &existing) != 0)
    return AMR_FAILED;
  a->ghost_id[a->n_ghosts] = id;
  a->ghost_owner[a->n_ghosts] = owner;
  a->n_ghosts++;
  return a->n_own_cells + a->n_ghosts - 1;
}

static int64_t level_id(const amr_mesh *a, int level, const int64_t c[3])
{
  const int64_t *n = a->level_dims[level];
  return a->level_offset[level] + c[0] + n[0] * (c[1] + n[1] * c[2]);
}

static int block_holds(const phew_amr_block *k, const int64_t c[3])
{
  for (int d = 0; d < 3; ++d)
    if (c[d] < k->lo[d] || c[d] - k->lo[d] >= k->dims[d])
      return 0;
  return 1;
}

/* The block of a level holding c, trying the last one found on that level first (while
 * building, neighbouring positions mostly fall in the same blocks). */
static int64_t find_block(amr_mesh *a, int level, const int64_t c[3])
{
  const int64_t h = a->hint[level];
  if (h >= 0 && block_holds(&a->desc->blocks[h], c))
    return h;
  const int64_t b = amr_tiles_find(&a->tiles, a->desc, level, c);
  if (b >= 0)
    a->hint[level] = b;
  return b;
}

static int refined(const amr_mesh *a, int level, const int64_t c[3])
{
  if (level + 1 >= a->n_levels)
    return 0;
  const int64_t child[3] = {2 * c[0], 2 * c[1], 2 * c[2]};
  return amr_tiles_find(&a->tiles, a->desc, level + 1, child) >= 0;
}

/* Local index of cell c of a level inside block b, which holds it as a leaf. */
static int64_t leaf_index(amr_mesh *a, int64_t b, int level, const int64_t c[3], int create)
{
  const phew_amr_block *k = &a->desc->blocks[b];
  if (a->first_cell[b] >= 0)
    return a->first_cell[b] + (c[0] - k->lo[0]) + k->dims[0] * ((c[1] - k->lo[1]) + k->dims[1] * (c[2] - k->lo[2]));
  const int64_t id = level_id(a, level, c);
  if (create)
    return ghost_add(a, id, k->owner);
  const int64_t g = ghost_find(a, id);
  return g >= 0 ? a->n_own_cells + g : AMR_FAILED;
}

/* The leaf cell at position c of a level (wrapped on periodic axes): the cell itself, or
 * the coarser leaf holding it; AMR_REFINED if the cell is covered, AMR_OUTSIDE beyond a
 * non-periodic edge. */
static int64_t leaf_at(amr_mesh *a, int level, const int64_t position[3], int create)
{
  int64_t c[3];
  for (int d = 0; d < 3; ++d) {
    const int64_t n = a->level_dims[level][d];
    c[d] = position[d];
    if (c[d] < 0 || c[d] >= n) {
      if (!a->desc->periodic[d])
        return AMR_OUTSIDE;
      c[d] = c[d] < 0 ? c[d] + n : c[d] - n;
    }
  }
  if (level + 1 < a->n_levels) {
    const int64_t child[3] = {2 * c[0], 2 * c[1], 2 * c[2]};
    if (find_block(a, level + 1, child) >= 0)
      return AMR_REFINED;
  }
  for (int l = level; l >= 0; --l) {
    const int64_t b = find_block(a, l, c);
    if (b >= 0)
      return leaf_index(a, b, l, c, create);
    for (int d = 0; d < 3; ++d)
      c[d] >>= 1;
  }
  return AMR_OUTSIDE; /* level 0 covers the domain: not reached */
}

typedef struct cover_context {
  amr_mesh *a;
  const phew_amr_block *k;
  int64_t *map;
  int64_t covered; /* fine blocks do not overlap: each covered cell is marked once */
} cover_context;

/* Marks the cells of an own block that a block of the next level covers. */
static int mark_covered(void *context, int64_t b)
{
  cover_context *x = context;
  const phew_amr_block *fine = &x->a->desc->blocks[b], *k = x->k;
  int64_t lo[3], hi[3];
  for (int d = 0; d < 3; ++d) {
    lo[d] = fine->lo[d] / 2 > k->lo[d] ? fine->lo[d] / 2 : k->lo[d];
    hi[d] = (fine->lo[d] + fine->dims[d]) / 2 < k->lo[d] + k->dims[d] ? (fine->lo[d] + fine->dims[d]) / 2
                                                                      : k->lo[d] + k->dims[d];
  }
  const int64_t px = k->dims[0] + 2, py = k->dims[1] + 2;
  if (hi[0] > lo[0] && hi[1] > lo[1] && hi[2] > lo[2])
    x->covered += (hi[0] - lo[0]) * (hi[1] - lo[1]) * (hi[2] - lo[2]);
  for (int64_t z = lo[2]; z < hi[2]; ++z)
    for (int64_t y = lo[1]; y < hi[1]; ++y)
      for (int64_t x0 = lo[0]; x0 < hi[0]; ++x0)
        x->map[(x0 - k->lo[0] + 1) + px * ((y - k->lo[1] + 1) + py * (z - k->lo[2] + 1))] = AMR_REFINED;
  return 0;
}

/* The padded map of own block o: interior from the block itself and the next level, the
 * shell from the leaves around it (ghost cells are created for other ranks' leaves). */
static phew_status build_map(amr_mesh *a, int64_t o, int64_t *stamp, int64_t token)
{
  const int64_t b = a->own_block[o];
  const phew_amr_block *k = &a->desc->blocks[b];
  int64_t *map = a->map + a->map_first[o];
  const int64_t p[3] = {k->dims[0] + 2, k->dims[1] + 2, k->dims[2] + 2};
  int64_t c[3];
  for (c[2] = 0; c[2] < p[2]; ++c[2])
    for (c[1] = 0; c[1] < p[1]; ++c[1])
      for (c[0] = 0; c[0] < p[0]; ++c[0]) {
        const int64_t e = c[0] + p[0] * (c[1] + p[1] * c[2]);
        const int inside = c[0] > 0 && c[0] <= k->dims[0] && c[1] > 0 && c[1] <= k->dims[1] && c[2] > 0 &&
                           c[2] <= k->dims[2];
        if (inside) {
          map[e] = a->first_cell[b] + (c[0] - 1) + k->dims[0] * ((c[1] - 1) + k->dims[1] * (c[2] - 1));
          continue;
        }
        const int64_t position[3] = {k->lo[0] + c[0] - 1, k->lo[1] + c[1] - 1, k->lo[2] + c[2] - 1};
        map[e] = leaf_at(a, k->level, position, 1);
        if (map[e] == AMR_FAILED)
          return PHEW_ERROR_MEMORY;
      }
  cover_context x = {a, k, map, 0};
  if (k->level + 1 < a->n_levels) {
    const int64_t lo[3] = {2 * k->lo[0], 2 * k->lo[1], 2 * k->lo[2]};
    const int64_t dims[3] = {2 * k->dims[0], 2 * k->dims[1], 2 * k->dims[2]};
    amr_tiles_visit(&a->tiles, a->desc, k->level + 1, lo, dims, stamp, token, mark_covered, &x);
  }
  a->n_leaves += k->dims[0] * k->dims[1] * k->dims[2] - x.covered;
  a->plain[o] = x.covered == 0;
  return PHEW_OK;
}

typedef struct foreign_check {
  const amr_mesh *a;
  int found;
} foreign_check;

static int is_foreign(void *context, int64_t b)
{
  foreign_check *x = context;
  x->found |= x->a->desc->blocks[b].owner != x->a->rank;
  return x->found;
}

/* Whether a leaf of own block o may touch finer leaves of other ranks: some finer block of
 * another rank overlaps the block grown by one cell (near a periodic edge: assumed). */
static int may_touch_foreign_fine(amr_mesh *a, int64_t o, int64_t *stamp, int64_t *token)
{
  const phew_amr_block *k = &a->desc->blocks[a->own_block[o]];
  for (int d = 0; d < 3; ++d)
    if (a->desc->periodic[d] && (k->lo[d] == 0 || k->lo[d] + k->dims[d] == a->level_dims[k->level][d]))
      return 1;
  foreign_check x = {a, 0};
  for (int level = k->level + 1; level < a->n_levels && !x.found; ++level) {
    int64_t lo[3], dims[3];
    for (int d = 0; d < 3; ++d) {
      const int s = level - k->level;
      lo[d] = (k->lo[d] - 1) * (INT64_C(1) << s); /* may be -2^s: no shift of a negative */
      dims[d] = (k->dims[d] + 2) << s;
      if (lo[d] < 0) { /* the open domain edge: nothing beyond */
        dims[d] += lo[d];
        lo[d] = 0;
      }
    }
    amr_tiles_visit(&a->tiles, a->desc, level, lo, dims, stamp, --*token, is_foreign, &x);
  }
  return x.found;
}

static phew_status build_cells(amr_mesh *a, int c_size, int64_t *stamp, call_result *result)
{
  const phew_amr *d = a->desc;
  a->first_cell = phew_malloc((size_t)d->n_blocks, sizeof *a->first_cell);
  a->own_block = phew_malloc((size_t)d->n_blocks, sizeof *a->own_block);
  a->map_first = phew_malloc((size_t)d->n_blocks + 1, sizeof *a->map_first);
  a->plain = phew_malloc((size_t)d->n_blocks, 1);
  if (!a->first_cell || !a->own_block || !a->map_first || !a->plain)
    return phew_fail(result, PHEW_ERROR_MEMORY, "out of memory while indexing the AMR blocks");
  int64_t n_cells = 0, n_map = 0;
  for (int64_t b = 0; b < d->n_blocks; ++b) {
    const phew_amr_block *k = &d->blocks[b];
    a->first_cell[b] = -1;
    if (k->owner != a->rank)
      continue;
    int64_t cells, padded;
    const int64_t p[3] = {k->dims[0] + 2, k->dims[1] + 2, k->dims[2] + 2};
    if (phew_checked_product(k->dims, 3, &cells) != 0 || phew_checked_product(p, 3, &padded) != 0 ||
        cells > INT64_MAX / 2 - n_cells || padded > INT64_MAX / 2 - n_map)
      return phew_fail(result, PHEW_ERROR_ARGUMENT, "this rank's AMR blocks hold more cells than 64-bit indices count");
    a->first_cell[b] = n_cells;
    a->map_first[a->n_own_blocks] = n_map;
    a->own_block[a->n_own_blocks++] = b;
    n_cells += cells;
    n_map += padded;
  }
  a->map_first[a->n_own_blocks] = n_map;
  a->n_own_cells = n_cells;
  for (int l = 0; l < AMR_MAX_LEVELS; ++l)
    a->hint[l] = -1;
  a->map = phew_malloc((size_t)(n_map > 0 ? n_map : 1), sizeof *a->map);
  if (!a->map || id_map_init(&a->ghost_index, 1024) != 0)
    return phew_fail(result, PHEW_ERROR_MEMORY, "out of memory while mapping the AMR blocks");
  for (int64_t o = 0; o < a->n_own_blocks; ++o)
    if (build_map(a, o, stamp, -2 - o) != PHEW_OK)
      return phew_fail(result, PHEW_ERROR_MEMORY, "out of memory while mapping the AMR blocks");
  /* finer leaves of other ranks next to our coarse leaves become ghosts too: only blocks
   * with refined entries in their maps, near finer blocks of other ranks, have any */
  int64_t token = -2 - a->n_own_blocks; /* below the maps' tokens */
  amr_cursor cur;
  amr_cursor_init(&cur, a);
  cur.create = 1;
  for (int64_t o = 0; o < a->n_own_blocks && !cur.failed; ++o) {
    const int64_t *map = a->map + a->map_first[o], n_map = a->map_first[o + 1] - a->map_first[o];
    const phew_amr_block *k = &d->blocks[a->own_block[o]];
    const int64_t first = a->first_cell[a->own_block[o]], n = k->dims[0] * k->dims[1] * k->dims[2];
    int64_t refined_entries = 0;
    for (int64_t e = 0; c_size > 1 && e < n_map; ++e)
      refined_entries += map[e] == AMR_REFINED;
    if (refined_entries == 0 || !may_touch_foreign_fine(a, o, stamp, &token))
      continue;
    for (int64_t i = first; i < first + n && !cur.failed; ++i)
      if (amr_cursor_leaf(&cur, i))
        create_fine_ghosts(&cur);
  }
  const int failed = cur.failed;
  amr_cursor_free(&cur);
  if (failed)
    return phew_fail(result, PHEW_ERROR_MEMORY, "out of memory while finding the AMR ghost cells");
  return PHEW_OK;
}

phew_status amr_mesh_init(amr_mesh *a, const phew_amr *d, comm *c, call_result *result)
{
  memset(a, 0, sizeof *a);
  a->desc = d;
  a->rank = c->rank;
  phew_status s = check_domain(a, d, result);
  for (int64_t b = 0; s == PHEW_OK && b < d->n_blocks; ++b)
    s = check_block(a, &d->blocks[b], b, c->size, result);
  s = comm_agree(c, s, result);
  if (s != PHEW_OK)
    return s;
  const int64_t h = (int64_t)(description_hash(d) >> 2); /* max == min: the same everywhere */
  if (comm_max(c, h) != -comm_max(c, -h))
    return phew_fail(result, PHEW_ERROR_ARGUMENT,
                     "the ranks passed different AMR descriptions: every rank must pass every block alike");
  int64_t *stamp = phew_malloc((size_t)d->n_blocks, sizeof *stamp);
  if (stamp)
    for (int64_t b = 0; b < d->n_blocks; ++b)
      stamp[b] = -1;
  if (!stamp || amr_tiles_build(&a->tiles, d, a->n_levels) != PHEW_OK)
    s = phew_fail(result, PHEW_ERROR_MEMORY, "out of memory while indexing the AMR blocks");
  if (s == PHEW_OK)
    s = check_tiling(a, d, stamp, result);
  if (s == PHEW_OK)
    s = build_cells(a, c->size, stamp, result);
  free(stamp);
  return comm_agree(c, s, result);
}

void amr_mesh_free(amr_mesh *a)
{
  amr_tiles_free(&a->tiles);
  free(a->first_cell);
  free(a->own_block);
  free(a->map_first);
  free(a->plain);
  free(a->map);
  free(a->ghost_id);
  free(a->ghost_owner);
  id_map_free(&a->ghost_index);
  memset(a, 0, sizeof *a);
}

/* ---- the cursor ------------------------------------------------------------------------- */

void amr_cursor_init(amr_cursor *c, const amr_mesh *a)
{
  memset(c, 0, sizeof *c);
  c->a = a;
}

void amr_cursor_free(amr_cursor *c)
{
  free(c->list);
  c->list = NULL;
}

/* The map entry of the current cell. */
static const int64_t *current_entry(const amr_cursor *c, const phew_amr_block *k)
{
  const int64_t px = k->dims[0] + 2, py = k->dims[1] + 2;
  return c->a->map + c->a->map_first[c->own] + (c->xyz[0] + 1) + px * ((c->xyz[1] + 1) + py * (c->xyz[2] + 1));
}

/* Points the cursor at cell (x, y, z) of own block o. */
void amr_cursor_at(amr_cursor *c, int64_t o, int64_t x, int64_t y, int64_t z)
{
  const amr_mesh *a = c->a;
  const phew_amr_block *k = &a->desc->blocks[a->own_block[o]];
  if (c->block != k) {
    c->own = o;
    c->block = k;
    c->stride[0] = k->dims[0] + 2;
    c->stride[1] = (k->dims[0] + 2) * (k->dims[1] + 2);
    int n = 0;
    for (int dz = -1; dz <= 1; ++dz)
      for (int dy = -1; dy <= 1; ++dy)
        for (int dx = -1; dx <= 1; ++dx)
          if (dx || dy || dz)
            c->stencil[n++] = dx + c->stride[0] * dy + c->stride[1] * dz;
  }
  c->xyz[0] = x;
  c->xyz[1] = y;
  c->xyz[2] = z;
  c->cell = a->first_cell[a->own_block[o]] + x + k->dims[0] * (y + k->dims[1] * z);
  c->entry = current_entry(c, k);
}

int amr_cursor_leaf(amr_cursor *c, int64_t i)
{
  const amr_mesh *a = c->a;
  if (i < 0 || i >= a->n_own_cells)
    return 0;
  const phew_amr_block *k = c->block;
  if (k && i == c->cell + 1 && c->xyz[0] + 1 < k->dims[0]) { /* the next cell of the row: most calls */
    c->xyz[0]++;
    c->cell = i;
    c->entry++;
    return *c->entry != AMR_REFINED;
  }
  int64_t o = c->own;
  if (o >= a->n_own_blocks || i < a->first_cell[a->own_block[o]])
    o = 0;
  while (o + 1 < a->n_own_blocks && i >= a->first_cell[a->own_block[o + 1]])
    o++;
  k = &a->desc->blocks[a->own_block[o]];
  const int64_t r = i - a->first_cell[a->own_block[o]];
  amr_cursor_at(c, o, r % k->dims[0], (r / k->dims[0]) % k->dims[1], r / (k->dims[0] * k->dims[1]));
  return *c->entry != AMR_REFINED;
}

static void push(amr_cursor *c, int64_t cell)
{
  if (cell < 0) {
    c->failed |= cell == AMR_FAILED;
    return;
  }
  if (c->n == c->capacity) {
    const int64_t cap = c->capacity < 64 ? 64 : 2 * c->capacity;
    int64_t *l = phew_realloc(c->list, (size_t)cap, sizeof *l);
    if (!l) {
      c->failed = 1;
      return;
    }
    c->list = l;
    c->capacity = cap;
  }
  c->list[c->n++] = cell;
}

/* The leaves inside covered cell q of a level that touch the cell on the side -d of it: the
 * children of q facing that side, and so on down. */
static void descend(amr_cursor *c, int level, const int64_t q[3], const int d[3])
{
  amr_mesh *a = (amr_mesh *)c->a; /* may add ghost cells while building */
  int64_t s[3][2], ns[3];
  for (int k = 0; k < 3; ++k) {
    ns[k] = d[k] == 0 ? 2 : 1;
    s[k][0] = 2 * q[k] + (d[k] < 0 ? 1 : 0);
    s[k][1] = 2 * q[k] + 1;
  }
  for (int z = 0; z < ns[2]; ++z)
    for (int y = 0; y < ns[1]; ++y)
      for (int x = 0; x < ns[0]; ++x) {
        const int64_t child[3] = {s[0][x], s[1][y], s[2][z]};
        if (refined(a, level + 1, child)) {
          descend(c, level + 1, child, d);
          continue;
        }
        const int64_t b = amr_tiles_find(&a->tiles, a->desc, level + 1, child);
        push(c, b >= 0 ? leaf_index(a, b, level + 1, child, c->create) : AMR_FAILED);
      }
}

/* The finer leaves beyond the refined stencil entry (dx, dy, dz) of the current cell. */
static void descend_from(amr_cursor *c, int dx, int dy, int dz)
{
  const amr_mesh *a = c->a;
  const phew_amr_block *k = c->block;
  const int d[3] = {dx, dy, dz};
  int64_t q[3];
  for (int i = 0; i < 3; ++i) {
    const int64_t n = a->level_dims[k->level][i];
    q[i] = k->lo[i] + c->xyz[i] + d[i];
    q[i] = q[i] < 0 ? q[i] + n : (q[i] >= n ? q[i] - n : q[i]);
  }
  descend(c, k->level, q, d);
}

/* Stencil entry k is the direction (k' % 3 - 1, k' / 3 % 3 - 1, k' / 9 - 1), k' = k + (k >= 13). */
int64_t amr_cursor_finer(amr_cursor *c)
{
  c->n = 0;
  for (int k = 0; k < 26; ++k)
    if (c->entry[c->stencil[k]] == AMR_REFINED) {
      const int q = k + (k >= 13);
      descend_from(c, q % 3 - 1, q / 3 % 3 - 1, q / 9 - 1);
    }
  return c->failed ? -1 : c->n;
}

/* While building: the ghost copies of the finer leaves next to the current cell. */
static void create_fine_ghosts(amr_cursor *c)
{
  const int64_t sy = c->stride[0], sz = c->stride[1];
  for (int dz = -1; dz <= 1; ++dz)
    for (int dy = -1; dy <= 1; ++dy)
      for (int dx = -1; dx <= 1; ++dx)
        if (c->entry[dx + sy * dy + sz * dz] == AMR_REFINED && (dx | dy | dz) != 0) {
          c->n = 0;
          descend_from(c, dx, dy, dz);
        }
}

int64_t amr_cursor_global_id(const amr_cursor *c)
{
  const amr_mesh *a = c->a;
  const phew_amr_block *k = c->block;
  const int64_t g[3] = {k->lo[0] + c->xyz[0], k->lo[1] + c->xyz[1], k->lo[2] + c->xyz[2]};
  return level_id(a, k->level, g);
}

void amr_cursor_coord(const amr_cursor *c, double coord[3])
{
  const phew_amr_block *k = c->block;
  for (int d = 0; d < 3; ++d) /* a multiple of 1/2 below 2^52: exact */
    coord[d] = 0.5 * (double)(((2 * (k->lo[d] + c->xyz[d]) + 1) << (c->a->n_levels - 1 - k->level)) - 1);
}

int64_t amr_global_id(const amr_mesh *a, int64_t cell)
{
  if (cell >= a->n_own_cells)
    return a->ghost_id[cell - a->n_own_cells];
  int64_t lo = 0, hi = a->n_own_blocks - 1; /* the last own block starting at or before cell */
  while (lo < hi) {
    const int64_t mid = (lo + hi + 1) / 2;
    if (a->first_cell[a->own_block[mid]] <= cell)
      lo = mid;
    else
      hi = mid - 1;
  }
  amr_cursor c;
  amr_cursor_init(&c, a);
  c.own = lo;
  const phew_amr_block *k = c.block = &a->desc->blocks[a->own_block[lo]];
  const int64_t r = cell - a->first_cell[a->own_block[lo]];
  c.xyz[0] = r % k->dims[0];
  c.xyz[1] = (r / k->dims[0]) % k->dims[1];
  c.xyz[2] = r / (k->dims[0] * k->dims[1]);
  return amr_cursor_global_id(&c);
}

int64_t amr_cell_of_id(const void *context, int64_t id)
{
  const amr_mesh *a = context;
  if (id < 0)
    return -1;
  int level = a->n_levels - 1;
  while (level > 0 && id < a->level_offset[level])
    --level;
  const int64_t *n = a->level_dims[level], r = id - a->level_offset[level];
  const int64_t c[3] = {r % n[0], (r / n[0]) % n[1], r / (n[0] * n[1])};
  if (c[2] >= n[2] || refined(a, level, c))
    return -1;
  const int64_t b = amr_tiles_find(&a->tiles, a->desc, level, c);
  if (b < 0 || a->first_cell[b] < 0)
    return -1;
  const phew_amr_block *k = &a->desc->blocks[b];
  return a->first_cell[b] + (c[0] - k->lo[0]) + k->dims[0] * ((c[1] - k->lo[1]) + k->dims[1] * (c[2] - k->lo[2]));
}
