/* Geometry of an implicit structured block: index arithmetic, global ids, the 26-cell
 * stencil, and the checks that a phew_grid describes a consistent block. */
#include "mesh.h"

#include <math.h>

phew_status block_init(block *b, const phew_grid *g, call_result *result)
{
  b->grid = g;
  int64_t n_global;
  for (int d = 0; d < 3; ++d) {
    const char axis = (char)('x' + d);
    if (g->global_dims[d] < 1)
      return phew_fail(result, PHEW_ERROR_ARGUMENT, "grid dimension %c is %lld: every axis needs at least one cell",
                       axis, (long long)g->global_dims[d]);
    if (g->global_dims[d] > PHEW_MAX_AXIS_CELLS) /* cell coordinates are exact in a double */
      return phew_fail(result, PHEW_ERROR_ARGUMENT, "grid dimension %c is %lld: at most 2^53 cells per axis", axis,
                       (long long)g->global_dims[d]);
    if (!(g->spacing[d] > 0.0) || !isfinite(g->spacing[d]))
      return phew_fail(result, PHEW_ERROR_ARGUMENT, "grid spacing along %c must be positive and finite (got %g)", axis,
                       g->spacing[d]);
    if (!isfinite(g->origin[d]))
      return phew_fail(result, PHEW_ERROR_ARGUMENT, "grid origin along %c is not finite", axis);
    /* every cell position, and the periodic box, must be finite doubles */
    const double length = (double)g->global_dims[d] * g->spacing[d];
    if (!isfinite(length) || !isfinite(g->origin[d] + length))
      return phew_fail(result, PHEW_ERROR_ARGUMENT,
                       "the grid extends beyond the double range along %c (origin %g, %lld cells of size %g)", axis,
                       g->origin[d], (long long)g->global_dims[d], g->spacing[d]);
    /* n <= 2^53: once every offset and size is known to lie near [0, n], their sums below
     * cannot overflow */
    const int64_t n = g->global_dims[d];
    if (g->stored_dims[d] < 0 || g->active_dims[d] < 0 || g->stored_offset[d] < -1 || g->stored_offset[d] > n ||
        g->stored_dims[d] > n + 2 || g->active_offset[d] > n || g->active_dims[d] > n ||
        g->active_offset[d] < g->stored_offset[d] ||
        g->active_offset[d] + g->active_dims[d] > g->stored_offset[d] + g->stored_dims[d] || g->active_offset[d] < 0 ||
        g->active_offset[d] + g->active_dims[d] > g->global_dims[d] || g->stored_offset[d] < -1 ||
        g->stored_offset[d] + g->stored_dims[d] > g->global_dims[d] + 1)
      return phew_fail(result, PHEW_ERROR_ARGUMENT,
                       "inconsistent block along %c: the active cells must lie inside the stored cells, "
                       "which may extend at most one ghost layer beyond the grid",
                       axis);
    if ((g->stored_offset[d] < 0 || g->stored_offset[d] + g->stored_dims[d] > g->global_dims[d]) && !g->periodic[d])
      return phew_fail(result, PHEW_ERROR_ARGUMENT, "ghost cells beyond the grid along %c need a periodic axis", axis);
    b->dims[d] = g->stored_dims[d];
    b->lo[d] = g->active_offset[d] - g->stored_offset[d];
    b->hi[d] = b->lo[d] + g->active_dims[d];
    b->wraps[d] = g->periodic[d] && g->stored_offset[d] == 0 && g->stored_dims[d] == g->global_dims[d];
    const int wrapped_lo = g->stored_offset[d] < 0;
    const int wrapped_hi = g->stored_offset[d] + g->stored_dims[d] > g->global_dims[d];
    b->fast_lo[d] = 1 + wrapped_lo;
    b->fast_hi[d] = b->dims[d] - 1 - wrapped_hi;
    if (b->fast_lo[d] < b->lo[d])
      b->fast_lo[d] = b->lo[d];
    if (b->fast_hi[d] > b->hi[d])
      b->fast_hi[d] = b->hi[d];
    if (b->fast_hi[d] < b->fast_lo[d])
      b->fast_hi[d] = b->fast_lo[d];
  }
  if (phew_checked_product(g->global_dims, 3, &n_global) != 0)
    return phew_fail(result, PHEW_ERROR_ARGUMENT,
                     "the grid has %lld x %lld x %lld cells: the number of cells overflows a 64-bit integer",
                     (long long)g->global_dims[0], (long long)g->global_dims[1], (long long)g->global_dims[2]);
  if (phew_checked_product(g->stored_dims, 3, &b->n_stored) != 0)
    return phew_fail(result, PHEW_ERROR_ARGUMENT, "the stored block has more cells than a 64-bit integer counts");
  int k = 0;
  for (int dz = -1; dz <= 1; ++dz)
    for (int dy = -1; dy <= 1; ++dy)
      for (int dx = -1; dx <= 1; ++dx)
        b->offsets[k++] = dx + b->dims[0] * (dy + b->dims[1] * dz);
  return PHEW_OK;
}

static int64_t wrap_coordinate(int64_t c, int64_t n)
{
  if (c < 0)
    return c + n;
  if (c >= n)
    return c - n;
  return c;
}

int64_t block_global_id(const block *b, int64_t x, int64_t y, int64_t z)
{
  const phew_grid *g = b->grid;
  const int64_t gx = wrap_coordinate(g->stored_offset[0] + x, g->global_dims[0]);
  const int64_t gy = wrap_coordinate(g->stored_offset[1] + y, g->global_dims[1]);
  const int64_t gz = wrap_coordinate(g->stored_offset[2] + z, g->global_dims[2]);
  return gx + g->global_dims[0] * (gy + g->global_dims[1] * gz);
}

int64_t block_neighbour(const block *b, int64_t x, int64_t y, int64_t z, int dx, int dy, int dz)
{
  int64_t c[3] = {x + dx, y + dy, z + dz};
  for (int d = 0; d < 3; ++d) {
    if (c[d] < 0 || c[d] >= b->dims[d]) {
      if (!b->wraps[d])
        return -1;
      c[d] = wrap_coordinate(c[d], b->dims[d]);
    }
  }
  return c[0] + b->dims[0] * (c[1] + b->dims[1] * c[2]);
}
