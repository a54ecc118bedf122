/* The grid of cells of Friends-of-Friends and the joining of two cells: shared by the column
 * walk (fof_cells.c) and the block walk (fof_blocks.c). Internal to core/src/halos. */
#ifndef PHEW_HALOS_FOF_CELLS_H
#define PHEW_HALOS_FOF_CELLS_H

#include "halos.h"
#include "union_find.h"

#include <stdlib.h>

enum {
  CELL_BITS = 20, /* cells per axis at most 2^20: keys of 60 bits */
  CELLS_PER_TASK = 4096,
  MAX_REACH = 3 /* cells a friend can be away along an axis */
};

typedef struct cell_grid {
  int64_t dims[3];
  double origin[3], width[3]; /* cell (i, j, k) is origin + [i, i + 1) width along x ... */
  int periodic[3];
  int whole;         /* every cell's particles are all friends of one another */
  int reach;         /* along each axis, friends are at most this many cells apart */
  int blocked;       /* cells keyed by blocks of 4^3 (fof_blocks); else in columns */
  int64_t blocks[3]; /* blocks per axis, when blocked */
} cell_grid;

/* Unblocked: cells in x-major order, z fastest: the cells (x, y, z0 .. z1) have consecutive
 * keys. Blocked: the block's key (x-major) times 64, plus the cell's place in its block. */
static inline uint64_t cell_key(const cell_grid *g, const int64_t c[3])
{
  if (g->blocked)
    return (((uint64_t)(c[0] >> 2) * (uint64_t)g->blocks[1] + (uint64_t)(c[1] >> 2)) * (uint64_t)g->blocks[2] +
            (uint64_t)(c[2] >> 2))
               << 6 |
           (uint64_t)((c[0] & 3) << 4 | (c[1] & 3) << 2 | (c[2] & 3));
  return ((uint64_t)c[0] * (uint64_t)g->dims[1] + (uint64_t)c[1]) * (uint64_t)g->dims[2] + (uint64_t)c[2];
}

/* The cells (x + dx, y + dy, z + dz) of the half stencil with dz in [dz_lo, dz_hi]: a run of
 * consecutive keys when no axis wraps. */
typedef struct stencil_column {
  int dx, dy, dz_lo, dz_hi;
} stencil_column;

typedef struct link_job {
  const cell_grid *g;
  const particle_box *box;
  const int64_t *start;   /* per cell: its first particle in sorted order (n_cells + 1) */
  const uint64_t *key;    /* per cell */
  const double *position; /* in sorted order, 3 per particle */
  int64_t n_cells;
  double length, r2;
  const stencil_column *column; /* the half stencil, by column */
  int n_columns;
  int shifts;       /* every pair of neighbouring cells has one nearest-image shift */
  union_find *sets; /* whole cells: by cell; else by sorted place */
} link_job;

/* Joins the friends between cells a and b (a != b); with whole cells, the two cells at the
 * first pair.
 * When the grid has room (job->shifts), every pair of the two cells takes the same branch of
 * particle_delta per axis, found from their first particles: (x_i - x_j) + shift, with the
 * shift -size, 0 or +size, is then bitwise its difference ((x - y) + (-L) is x - y - L), and
 * the loop needs no branch per axis. */
static inline void link_two(const link_job *job, int64_t a, int64_t b)
{
  union_find *u = job->sets;
  const int64_t a0 = job->start[a], a1 = job->start[a + 1], b0 = job->start[b], b1 = job->start[b + 1];
  const int whole = job->g->whole;
  if (whole && union_find_root(u, (int32_t)a) == union_find_root(u, (int32_t)b))
    return;
  const double *restrict p = job->position;
  if (!job->shifts) {
    for (int64_t i = a0; i < a1; ++i)
      for (int64_t j = b0; j < b1; ++j)
        if (particle_distance2(job->box, &p[3 * i], &p[3 * j]) <= job->r2) {
          if (whole) {
            union_find_join(u, (int32_t)a, (int32_t)b);
            return;
          }
          union_find_join(u, (int32_t)i, (int32_t)j);
        }
    return;
  }
  double shift[3]; /* particle_delta's branch for the first two particles: -size, 0 or +size */
  for (int d = 0; d < 3; ++d) {
    const double diff = p[3 * a0 + d] - p[3 * b0 + d], period = job->box->size[d];
    shift[d] = !job->box->periodic[d] ? 0.0 : 2.0 * diff > period ? -period : (2.0 * diff < -period ? period : 0.0);
  }
  const double r2 = job->r2;
  for (int64_t i = a0; i < a1; ++i) {
    const double xi = p[3 * i], yi = p[3 * i + 1], zi = p[3 * i + 2];
    for (int64_t j = b0; j < b1; ++j) {
      const double dx = (xi - p[3 * j]) + shift[0], dy = (yi - p[3 * j + 1]) + shift[1],
                   dz = (zi - p[3 * j + 2]) + shift[2];
      if ((dx * dx + dy * dy) + dz * dz <= r2) {
        if (whole) {
          union_find_join(u, (int32_t)a, (int32_t)b);
          return;
        }
        union_find_join(u, (int32_t)i, (int32_t)j);
      }
    }
  }
}

/* The first cell whose key is not below `target`, in key[from, n). */
static inline int64_t lower_bound(const uint64_t *key, int64_t from, int64_t n, uint64_t target)
{
  int64_t lo = from, hi = n;
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo) / 2;
    if (key[mid] < target)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

/* Whether two cells e = (ex, ey, ez) cells apart may hold friends: the smallest distance
 * between their particles, |e| - 1 cells along each axis less a margin for the rounding of
 * the cell indices, is within the length. */
static inline int in_stencil(const cell_grid *g, double length, const int e[3])
{
  double gap2 = 0.0;
  for (int d = 0; d < 3; ++d) {
    const int cells = abs(e[d]) - 1;
    const double gap = cells > 0 ? cells * g->width[d] * (1.0 - 1e-9) : 0.0;
    gap2 += gap * gap;
  }
  return gap2 <= length * length;
}

/* The block walk (fof_blocks.c): every pair of neighbouring cells of a blocked grid joined as
 * link_two does; 0, or -1 if memory ran out. */
int link_blocks(const link_job *job, int threads);

#endif
