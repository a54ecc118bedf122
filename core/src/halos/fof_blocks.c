/* Friends-of-Friends: the cells of a blocked grid joined block by block (fof_cells.h). */
#include "fof_cells.h"
#include "threads.h"

#include <string.h>

/* With whole cells keyed by blocks of 4^3 (the layout of hfof): a cell's friends are in its own
 * block or in the blocks next to it, and which cells of those it can reach depends only on its
 * place in its block. Per place, a table lists the cells of its own block that come before it
 * in the stencil, and the "earlier" neighbouring blocks its stencil reaches (the 13 directions
 * of the 26 whose offset is negative in x-major order: one of each opposite pair), each with
 * the mask of the cells there. Every pair of cells is then visited once: within a block from
 * its later cell, between blocks from the block the other lies in an earlier direction of (the
 * one with the larger key, unless the pair crosses a periodic face). A block's neighbours are
 * found once per block, by a cursor per direction through the sorted block keys (binary
 * search across periodic faces). In sparse regions a cell asks for about four blocks, where
 * the columns ask for thirteen. */

enum { BLOCKS_PER_TASK = 2048, EARLIER_BLOCKS = 13 };

typedef struct block_walk {
  int delta[EARLIER_BLOCKS][3]; /* the earlier neighbouring blocks */
  uint64_t self[64];            /* per place: the cells of its block before it */
  int n_reached[64];            /* per place: the earlier blocks it reaches */
  int8_t reached[64][EARLIER_BLOCKS];
  uint64_t mask[64][EARLIER_BLOCKS]; /* and the cells there */
} block_walk;

typedef struct block_list { /* the occupied blocks, in key order */
  int64_t n;
  uint64_t *key;
  int64_t *first;     /* per block: its first cell (n + 1) */
  uint64_t *occupied; /* per block: its cells, one bit per place */
} block_list;

static void block_walk_init(block_walk *w, const cell_grid *g, double length)
{
  int k = 0;
  for (int dx = -1; dx <= 0; ++dx)
    for (int dy = -1; dy <= 1; ++dy)
      for (int dz = -1; dz <= 1; ++dz)
        if (dx < 0 || (dy < 0 || (dy == 0 && dz < 0))) {
          w->delta[k][0] = dx;
          w->delta[k][1] = dy;
          w->delta[k++][2] = dz;
        }
  for (int a = 0; a < 64; ++a) {
    const int pa[3] = {a >> 4, (a >> 2) & 3, a & 3};
    w->self[a] = 0;
    w->n_reached[a] = 0;
    for (int b = 0; b < 64; ++b) {
      const int e[3] = {(b >> 4) - pa[0], ((b >> 2) & 3) - pa[1], (b & 3) - pa[2]};
      if (b < a && in_stencil(g, length, e))
        w->self[a] |= (uint64_t)1 << b;
    }
    for (int o = 0; o < EARLIER_BLOCKS; ++o) {
      uint64_t mask = 0;
      for (int b = 0; b < 64; ++b) {
        const int e[3] = {4 * w->delta[o][0] + (b >> 4) - pa[0], 4 * w->delta[o][1] + ((b >> 2) & 3) - pa[1],
                          4 * w->delta[o][2] + (b & 3) - pa[2]};
        if (in_stencil(g, length, e))
          mask |= (uint64_t)1 << b;
      }
      if (mask) {
        w->reached[a][w->n_reached[a]] = (int8_t)o;
        w->mask[a][w->n_reached[a]++] = mask;
      }
    }
  }
}

typedef struct block_job {
  const link_job *link;
  const block_walk *walk;
  const block_list *blocks;
} block_job;

/* The block holding key `target`, or -1; *cursor: where the previous search of this direction
 * ended (searches of one direction ask for increasing keys), -1 at first. */
static int64_t find_block(const block_list *b, uint64_t target, int64_t *cursor)
{
  int64_t at = *cursor;
  if (at < 0)
    at = lower_bound(b->key, 0, b->n, target);
  while (at < b->n && b->key[at] < target)
    ++at;
  *cursor = at;
  return at < b->n && b->key[at] == target ? at : -1;
}

/* Bits set in v (without the processor's popcount instruction, which the portable build lacks:
 * the compiler's builtin would be a library call). */
static inline int count_bits(uint64_t v)
{
  v = v - ((v >> 1) & 0x5555555555555555ull);
  v = (v & 0x3333333333333333ull) + ((v >> 2) & 0x3333333333333333ull);
  v = (v + (v >> 4)) & 0x0f0f0f0f0f0f0f0full;
  return (int)((v * 0x0101010101010101ull) >> 56);
}

/* Joins cell a to the cells of block k that `mask` selects. */
static inline void link_masked(const link_job *job, const block_list *b, int64_t a, int64_t k, uint64_t mask)
{
  const uint64_t present = b->occupied[k];
  for (uint64_t m = mask & present; m; m &= m - 1) {
    const int place = __builtin_ctzll(m);
    link_two(job, a, b->first[k] + count_bits(present & (((uint64_t)1 << place) - 1)));
  }
}

static void block_task(void *context, int thread, int64_t task)
{
  (void)thread;
  const block_job *bj = context;
  const link_job *job = bj->link;
  const cell_grid *g = job->g;
  const block_walk *w = bj->walk;
  const block_list *b = bj->blocks;
  const int64_t first = task * BLOCKS_PER_TASK, last = first + BLOCKS_PER_TASK < b->n ? first + BLOCKS_PER_TASK : b->n;
  int64_t cursor[EARLIER_BLOCKS];
  for (int o = 0; o < EARLIER_BLOCKS; ++o)
    cursor[o] = -1;
  for (int64_t k = first; k < last; ++k) {
    const uint64_t key = b->key[k];
    const int64_t c[3] = {(int64_t)(key / (uint64_t)(g->blocks[1] * g->blocks[2])),
                          (int64_t)(key / (uint64_t)g->blocks[2] % (uint64_t)g->blocks[1]),
                          (int64_t)(key % (uint64_t)g->blocks[2])};
    int64_t neighbour[EARLIER_BLOCKS];
    for (int o = 0; o < EARLIER_BLOCKS; ++o)
      neighbour[o] = -2; /* not looked for yet */
    for (int64_t a = b->first[k]; a < b->first[k + 1]; ++a) {
      const int place = (int)(job->key[a] & 63);
      link_masked(job, b, a, k, w->self[place]);
      for (int r = 0; r < w->n_reached[place]; ++r) {
        const int o = w->reached[place][r];
        if (neighbour[o] == -2) {
          int64_t n[3];
          int wrapped = 0, outside = 0;
          for (int d = 0; d < 3; ++d) {
            n[d] = c[d] + w->delta[o][d];
            if (n[d] < 0 || n[d] >= g->blocks[d]) {
              outside |= !g->periodic[d];
              n[d] = (n[d] + g->blocks[d]) % g->blocks[d];
              wrapped = 1;
            }
          }
          const uint64_t target = ((uint64_t)n[0] * (uint64_t)g->blocks[1] + (uint64_t)n[1]) * (uint64_t)g->blocks[2] +
                                  (uint64_t)n[2];
          int64_t once = -1;
          neighbour[o] = outside ? -1 : find_block(b, target, wrapped ? &once : &cursor[o]);
        }
        if (neighbour[o] >= 0)
          link_masked(job, b, a, neighbour[o], w->mask[place][r]);
      }
    }
  }
}

int link_blocks(const link_job *job, int threads)
{
  block_list b;
  memset(&b, 0, sizeof b);
  for (int64_t c = 0; c < job->n_cells; ++c)
    b.n += c == 0 || job->key[c] >> 6 != job->key[c - 1] >> 6;
  b.key = phew_malloc((size_t)b.n + 1, sizeof *b.key);
  b.first = phew_malloc((size_t)b.n + 1, sizeof *b.first);
  b.occupied = phew_malloc((size_t)b.n + 1, sizeof *b.occupied);
  block_walk *w = phew_malloc(1, sizeof *w);
  const int ok = b.key && b.first && b.occupied && w;
  if (ok) {
    for (int64_t c = 0, k = -1; c < job->n_cells; ++c) {
      if (c == 0 || job->key[c] >> 6 != job->key[c - 1] >> 6) {
        b.key[++k] = job->key[c] >> 6;
        b.first[k] = c;
        b.occupied[k] = 0;
      }
      b.occupied[k] |= (uint64_t)1 << (job->key[c] & 63);
    }
    b.first[b.n] = job->n_cells;
    block_walk_init(w, job->g, job->length);
    block_job bj = {job, w, &b};
    threads_run(threads, (b.n + BLOCKS_PER_TASK - 1) / BLOCKS_PER_TASK, block_task, &bj);
  }
  free(b.key);
  free(b.first);
  free(b.occupied);
  free(w);
  return ok ? 0 : -1;
}
