/* Which AMR block holds a cell: each level is cut into cubic tiles of 2^shift cells (shift
 * near the level's typical block size), and a hash maps every tile to the blocks that
 * overlap it. Every rank indexes every block: the metadata of the whole hierarchy is known
 * everywhere, as in vtkAMRInformation. */
#include "amr_mesh.h"

#include <stdlib.h>
#include <string.h>

static uint64_t tile_hash(int level, const int64_t t[3])
{
  uint64_t h = (uint64_t)level * UINT64_C(0x9E3779B97F4A7C15);
  for (int d = 0; d < 3; ++d)
    h = (h ^ (uint64_t)t[d]) * UINT64_C(0xC2B2AE3D27D4EB4F);
  return h ^ (h >> 29);
}

static amr_tile_slot *tile_slot(const amr_tiles *t, int level, const int64_t tile[3])
{
  uint64_t h = tile_hash(level, tile) & t->mask;
  for (;;) {
    amr_tile_slot *s = &t->slots[h];
    if (s->level < 0 || (s->level == level && s->tile[0] == tile[0] && s->tile[1] == tile[1] && s->tile[2] == tile[2]))
      return s;
    h = (h + 1) & t->mask;
  }
}

static int compare_int64(const void *a, const void *b)
{
  const int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

/* Tiles of about the median block size of each level: few tiles per block, few blocks per tile. */
static phew_status choose_shifts(amr_tiles *t, const phew_amr *desc, int n_levels)
{
  int64_t *sizes = phew_malloc((size_t)(desc->n_blocks > 0 ? desc->n_blocks : 1), sizeof *sizes);
  if (!sizes)
    return PHEW_ERROR_MEMORY;
  for (int level = 0; level < n_levels; ++level) {
    int64_t n = 0;
    for (int64_t b = 0; b < desc->n_blocks; ++b) {
      const phew_amr_block *k = &desc->blocks[b];
      if (k->level != level)
        continue;
      int64_t m = k->dims[0];
      for (int d = 1; d < 3; ++d)
        m = k->dims[d] > m ? k->dims[d] : m;
      sizes[n++] = m;
    }
    int shift = 0;
    if (n > 0) {
      qsort(sizes, (size_t)n, sizeof *sizes, compare_int64);
      while (shift < 40 && (INT64_C(2) << shift) <= sizes[n / 2])
        ++shift;
    }
    t->shift[level] = shift;
  }
  free(sizes);
  return PHEW_OK;
}

/* Tiles a block overlaps; -1 if more than 2^40 (blocks far larger than their level's median). */
static int64_t tiles_of(const amr_tiles *t, const phew_amr_block *k, int64_t lo[3], int64_t hi[3])
{
  int64_t count[3], n;
  for (int d = 0; d < 3; ++d) {
    lo[d] = k->lo[d] >> t->shift[k->level];
    hi[d] = (k->lo[d] + k->dims[d] - 1) >> t->shift[k->level];
    count[d] = hi[d] - lo[d] + 1;
  }
  return phew_checked_product(count, 3, &n) == 0 && n <= (INT64_C(1) << 40) ? n : -1;
}

phew_status amr_tiles_build(amr_tiles *t, const phew_amr *desc, int n_levels)
{
  memset(t, 0, sizeof *t);
  if (choose_shifts(t, desc, n_levels) != PHEW_OK)
    return PHEW_ERROR_MEMORY;
  int64_t n_entries = 0, lo[3], hi[3];
  for (int64_t b = 0; b < desc->n_blocks; ++b) {
    const int64_t n = tiles_of(t, &desc->blocks[b], lo, hi);
    if (n < 0 || n > (INT64_C(1) << 40) - n_entries)
      return PHEW_ERROR_MEMORY; /* an index this large would not fit in memory anyway */
    n_entries += n;
  }
  uint64_t capacity = 1024;
  while (capacity < 2 * (uint64_t)n_entries)
    capacity <<= 1;
  t->slots = phew_malloc((size_t)capacity, sizeof *t->slots);
  t->entry_block = phew_malloc((size_t)(n_entries > 0 ? n_entries : 1), sizeof *t->entry_block);
  t->entry_next = phew_malloc((size_t)(n_entries > 0 ? n_entries : 1), sizeof *t->entry_next);
  if (!t->slots || !t->entry_block || !t->entry_next)
    return PHEW_ERROR_MEMORY;
  t->mask = capacity - 1;
  for (uint64_t s = 0; s < capacity; ++s)
    t->slots[s].level = -1;
  for (int64_t b = 0; b < desc->n_blocks; ++b) {
    const phew_amr_block *k = &desc->blocks[b];
    tiles_of(t, k, lo, hi);
    int64_t tile[3];
    for (tile[2] = lo[2]; tile[2] <= hi[2]; ++tile[2])
      for (tile[1] = lo[1]; tile[1] <= hi[1]; ++tile[1])
        for (tile[0] = lo[0]; tile[0] <= hi[0]; ++tile[0]) {
          amr_tile_slot *s = tile_slot(t, k->level, tile);
          if (s->level < 0) {
            s->level = k->level;
            memcpy(s->tile, tile, sizeof tile);
            s->head = -1;
          }
          t->entry_block[t->n_entries] = b;
          t->entry_next[t->n_entries] = s->head;
          s->head = t->n_entries++;
        }
  }
  return PHEW_OK;
}

void amr_tiles_free(amr_tiles *t)
{
  free(t->slots);
  free(t->entry_block);
  free(t->entry_next);
  memset(t, 0, sizeof *t);
}

static int block_holds(const phew_amr_block *k, const int64_t c[3])
{
  for (int d = 0; d < 3; ++d)
    if (c[d] < k->lo[d] || c[d] - k->lo[d] >= k->dims[d])
      return 0;
  return 1;
}

int64_t amr_tiles_find(const amr_tiles *t, const phew_amr *desc, int level, const int64_t c[3])
{
  if (level < 0 || level >= AMR_MAX_LEVELS || !t->slots)
    return -1;
  const int64_t tile[3] = {c[0] >> t->shift[level], c[1] >> t->shift[level], c[2] >> t->shift[level]};
  const amr_tile_slot *s = tile_slot(t, level, tile);
  if (s->level < 0)
    return -1;
  for (int64_t e = s->head; e >= 0; e = t->entry_next[e])
    if (block_holds(&desc->blocks[t->entry_block[e]], c))
      return t->entry_block[e];
  return -1;
}

int amr_tiles_visit(const amr_tiles *t, const phew_amr *desc, int level, const int64_t lo[3], const int64_t dims[3],
                    int64_t *stamp, int64_t token, int (*visit)(void *context, int64_t block), void *context)
{
  if (level < 0 || level >= AMR_MAX_LEVELS || !t->slots)
    return 0;
  const int shift = t->shift[level];
  int64_t tile[3];
  for (tile[2] = lo[2] >> shift; tile[2] <= (lo[2] + dims[2] - 1) >> shift; ++tile[2])
    for (tile[1] = lo[1] >> shift; tile[1] <= (lo[1] + dims[1] - 1) >> shift; ++tile[1])
      for (tile[0] = lo[0] >> shift; tile[0] <= (lo[0] + dims[0] - 1) >> shift; ++tile[0]) {
        const amr_tile_slot *s = tile_slot(t, level, tile);
        if (s->level < 0)
          continue;
        for (int64_t e = s->head; e >= 0; e = t->entry_next[e]) {
          const int64_t b = t->entry_block[e];
          const phew_amr_block *k = &desc->blocks[b];
          if (stamp[b] == token)
            continue;
          int overlaps = 1;
          for (int d = 0; d < 3; ++d)
            overlaps &= k->lo[d] < lo[d] + dims[d] && lo[d] < k->lo[d] + k->dims[d];
          if (!overlaps)
            continue;
          stamp[b] = token;
          const int r = visit(context, b);
          if (r)
            return r;
        }
      }
  return 0;
}
