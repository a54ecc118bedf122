/* Grids split into blocks, and the whole grid as one block. Splitting over ranks: a px * py * pz grid of blocks,
 * balanced by cell count, with the factorisation that minimises the cut surface; each block stores one ghost layer
 * wherever a neighbouring block exists (across periodic edges too). */
#include "mesh.h"

#include <stdio.h>
#include <string.h>

/* Cells cut by splitting into p[0] x p[1] x p[2] blocks (the faces between blocks). */
static double cut_surface(const int64_t n[3], const int p[3])
{
  const double x = (double)n[0], y = (double)n[1], z = (double)n[2];
  return (double)(p[0] - 1) * y * z + (double)(p[1] - 1) * x * z + (double)(p[2] - 1) * x * y;
}

static void best_factors(const int64_t n[3], int n_ranks, int p[3])
{
  int best_empty = 4;
  double best_cut = 0.0;
  for (int a = 1; a <= n_ranks; ++a) {
    if (n_ranks % a)
      continue;
    for (int b = 1; b <= n_ranks / a; ++b) {
      if ((n_ranks / a) % b)
        continue;
      const int q[3] = {a, b, n_ranks / a / b};
      /* fewest axes with more blocks than cells (empty blocks), then the smallest cut */
      const int empty = (q[0] > n[0]) + (q[1] > n[1]) + (q[2] > n[2]);
      const double cut = cut_surface(n, q);
      if (empty < best_empty || (empty == best_empty && cut < best_cut)) {
        best_empty = empty;
        best_cut = cut;
        memcpy(p, q, sizeof q);
      }
    }
  }
}

void phew_grid_init_whole(phew_grid *grid, int64_t nx, int64_t ny, int64_t nz)
{
  memset(grid, 0, sizeof *grid);
  const int64_t n[3] = {nx, ny, nz};
  for (int d = 0; d < 3; ++d) {
    grid->global_dims[d] = grid->stored_dims[d] = grid->active_dims[d] = n[d];
    grid->spacing[d] = 1.0;
  }
}

/* A refused block: the reason into the context, if there is one. */
static phew_status refuse(phew_context *context, const char *why)
{
  if (context)
    snprintf(context->message, sizeof context->message, "%s", why);
  return PHEW_ERROR_ARGUMENT;
}

phew_status phew_grid_block(phew_context *context, phew_grid *grid, const int64_t global_dims[3], const int periodic[3],
                            int n_blocks, int block)
{
  if (!grid || !global_dims)
    return refuse(context, "phew_grid_block: the grid and the dimensions must not be NULL");
  if (n_blocks < 1 || block < 0 || block >= n_blocks)
    return refuse(context, "phew_grid_block: the block must be one of 0 .. n_blocks - 1, n_blocks >= 1");
  int64_t n_cells;
  for (int d = 0; d < 3; ++d)
    if (global_dims[d] < 1 || global_dims[d] > PHEW_MAX_AXIS_CELLS)
      return refuse(context, "phew_grid_block: every dimension must be between 1 and 2^53");
  if (phew_checked_product(global_dims, 3, &n_cells) != PHEW_OK)
    return refuse(context, "phew_grid_block: the number of cells does not fit in int64");
  phew_grid_init_whole(grid, global_dims[0], global_dims[1], global_dims[2]);
  int p[3] = {n_blocks, 1, 1};
  best_factors(global_dims, n_blocks, p);
  const int coord[3] = {block % p[0], (block / p[0]) % p[1], block / (p[0] * p[1])};
  for (int d = 0; d < 3; ++d) {
    const int64_t n = global_dims[d];
    /* n * coord needs up to 53 + 31 bits */
    const int64_t lo = (int64_t)((exact_bin)n * coord[d] / p[d]), hi = (int64_t)((exact_bin)n * (coord[d] + 1) / p[d]);
    grid->periodic[d] = periodic ? periodic[d] : 0;
    grid->active_offset[d] = lo;
    grid->active_dims[d] = hi - lo;
    grid->stored_offset[d] = lo;
    grid->stored_dims[d] = hi - lo;
    if (p[d] == 1 || hi == lo)
      continue; /* the block spans the axis (a periodic axis wraps inside it) or is empty */
    if (lo > 0 || grid->periodic[d]) {
      grid->stored_offset[d] -= 1;
      grid->stored_dims[d] += 1;
    }
    if (hi < n || grid->periodic[d])
      grid->stored_dims[d] += 1;
  }
  if (context)
    context->message[0] = '\0';
  return PHEW_OK;
}

phew_status phew_grid_decompose(phew_context *context, phew_grid *grid, const int64_t global_dims[3],
                                const int periodic[3])
{
  if (!context)
    return call_refused(context, "phew_grid_decompose");
  call_result r;
  call_result_start(&r);
  comm c;
  const phew_status s = comm_init(&c, context, &r);
  if (s != PHEW_OK) {
    call_result_report(&r, s, context);
    return s;
  }
  return phew_grid_block(context, grid, global_dims, periodic, c.size, c.rank);
}
