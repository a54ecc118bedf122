/* Type-generic part of the watershed: included by watershed.c once per density type with
 * RHO_T (the C type) and KERNEL(name) (a name mangler) defined. */

/* Highest neighbour of a cell on the block's edge, in the total order (density, global id). */
static int64_t KERNEL(highest_neighbour_slow)(const block *b, const RHO_T *rho, int64_t x, int64_t y, int64_t z,
                                              int64_t i)
{
  int64_t best = i;
  RHO_T best_rho = rho[i];
  int64_t best_id = block_global_id(b, x, y, z);
  for (int dz = -1; dz <= 1; ++dz)
    for (int dy = -1; dy <= 1; ++dy)
      for (int dx = -1; dx <= 1; ++dx) {
        const int64_t j = block_neighbour(b, x, y, z, dx, dy, dz);
        if (j < 0 || j == best)
          continue;
        const RHO_T r = rho[j];
        if (r < best_rho)
          continue;
        const int64_t id = block_global_id(b, x + dx, y + dy, z + dz);
        if (r > best_rho || id < best_id) {
          best = j;
          best_rho = r;
          best_id = id;
        }
      }
  return best;
}

/* One stencil offset k over a row segment: keep the higher of the running best and the
 * shifted row. Written with restrict pointers and a mask so that the compiler vectorises it. */
static void KERNEL(row_step)(const RHO_T *restrict shifted, RHO_T *restrict best, RHO_INDEX_T *restrict best_k,
                             int64_t n, RHO_INDEX_T k)
{
  for (int64_t x = 0; x < n; ++x) {
    const RHO_T v = shifted[x], b = best[x];
    const RHO_INDEX_T higher = -(RHO_INDEX_T)(v > b);
    best[x] = v > b ? v : b;
    best_k[x] = (k & higher) | (best_k[x] & ~higher);
  }
}

/* Index (0..26) of the highest of the 27 stencil cells around each cell of the row segment
 * [x0, x1), for all its cells at once. Offsets increase, so a strict '>' keeps the lowest
 * index among equal densities, and inside the block the index order is the global id order. */
PHEW_VECTOR_CLONES
static void KERNEL(row_highest)(const RHO_T *row, int64_t x0, int64_t x1, const int64_t *off, RHO_T *best,
                                RHO_INDEX_T *best_k)
{
  for (int64_t x = x0; x < x1; ++x) {
    best[x] = row[x + off[0]];
    best_k[x] = 0;
  }
  for (int k = 1; k < 27; ++k)
    KERNEL(row_step)(row + off[k] + x0, best + x0, best_k + x0, x1 - x0, (RHO_INDEX_T)k);
}

/* First pass over one z plane of a block: every active test cell points at its highest
 * neighbour (itself for a peak); other cells get -1, and every cell_peak -1. The plane's
 * peaks are listed in raster order, numbered later (watershed.c). */
static phew_status KERNEL(uphill_plane)(const block *b, const RHO_T *rho, double threshold, int64_t z, int64_t *up,
                                        int64_t *cell_peak, RHO_T *best, RHO_INDEX_T *best_k, peak_cells *peaks)
{
  const int64_t *off = b->offsets;
  for (int64_t y = b->lo[1]; y < b->hi[1]; ++y) {
    const int row_fast = z >= b->fast_lo[2] && z < b->fast_hi[2] && y >= b->fast_lo[1] && y < b->fast_hi[1];
    const int64_t row = b->dims[0] * (y + b->dims[1] * z);
    if (row_fast)
      KERNEL(row_highest)(rho + row, b->fast_lo[0], b->fast_hi[0], off, best, best_k);
    for (int64_t x = b->lo[0]; x < b->hi[0]; ++x) {
      const int64_t i = row + x;
      const RHO_T r = rho[i];
      cell_peak[i] = -1;
      up[i] = -1;
      if (!(r >= 0) || r == (RHO_T)INFINITY) {
        ++peaks->n_bad;
        continue;
      }
      if (!((double)r > threshold))
        continue;
      ++peaks->n_test;
      int64_t highest = row_fast && x >= b->fast_lo[0] && x < b->fast_hi[0]
                            ? i + off[best_k[x]]
                            : KERNEL(highest_neighbour_slow)(b, rho, x, y, z, i);
      /* an active neighbour earlier in this plane (this row, or the row before) already
       * points further up its chain: start there (the same root, shorter chains for the
       * second pass; only cells this task wrote are read, no ghost cells) */
      if (highest < i && (highest >= row + b->lo[0] || (y > b->lo[1] && highest >= row - b->dims[0] + b->lo[0] &&
                                                        highest < row - b->dims[0] + b->hi[0])))
        highest = up[highest];
      up[i] = highest;
      if (highest == i && peak_cells_add(peaks, i) != PHEW_OK)
        return PHEW_ERROR_MEMORY;
    }
  }
  return PHEW_OK;
}

/* best becomes j if j is higher in the total order (density, then lower global id; ids are
 * found only when densities tie). */
static inline void KERNEL(raise_best)(const cell_walk *w, const RHO_T *rho, int64_t j, int64_t *best, RHO_T *best_rho,
                                      int64_t *best_id)
{
  const RHO_T v = rho[j];
  if (v < *best_rho || j == *best)
    return;
  if (v == *best_rho) {
    if (*best_id < 0)
      *best_id = cell_walk_global_id(w, *best);
    const int64_t id = cell_walk_global_id(w, j);
    if (id >= *best_id)
      return;
    *best_id = id;
  } else {
    *best_id = -1;
  }
  *best = j;
  *best_rho = v;
}

/* The same first pass over the cells of a graph. */
static phew_status KERNEL(point_uphill_list)(cell_walk *w, run_control *rc, const RHO_T *rho, double threshold,
                                             int64_t *up, int64_t *cell_peak, peak_table *peaks, int64_t *n_test,
                                             int64_t *n_bad)
{
  const mesh *m = w->m;
  for (int64_t i = 0; i < m->n_local; ++i) {
    if (run_control_tick_cells(rc, i, m->n_local))
      return PHEW_CANCELLED;
    up[i] = -1;
    cell_peak[i] = -1;
    if (!cell_walk_active(w, i))
      continue;
    const RHO_T r = rho[i];
    if (!(r >= 0) || r == (RHO_T)INFINITY) {
      ++*n_bad;
      continue;
    }
    if (!((double)r > threshold))
      continue;
    ++*n_test;
    int64_t best = i, best_id = -1;
    RHO_T best_rho = r;
    const neighbour_list list = cell_walk_neighbours(w, i);
    for (int64_t k = 0; k < list.n; ++k)
      KERNEL(raise_best)(w, rho, neighbour_at(&list, k), &best, &best_rho, &best_id);
    up[i] = best;
    if (best == i) {
      cell_peak[i] = peaks->n;
      double coord[3];
      cell_walk_coord(w, i, coord);
      if (peak_table_add(peaks, cell_walk_global_id(w, i), i, (double)r, coord, 0) != PHEW_OK)
        return PHEW_ERROR_MEMORY;
    }
  }
  return PHEW_OK;
}

/* The first pass over the leaves of own AMR block o: cells without covered cells around
 * and away from the block's faces take the vectorised stencil of the grid (inside a block the
 * index order is the global id order, as on a grid); the others read the block's map. */
static phew_status KERNEL(uphill_amr_block)(cell_walk *w, const RHO_T *rho, double threshold, int64_t o, int64_t *up,
                                            int64_t *cell_peak, RHO_T *best, RHO_INDEX_T *best_k, peak_cells *peaks)
{
  const amr_mesh *a = w->m->amr;
  amr_cursor *c = w->amr;
  const phew_amr_block *k = &a->desc->blocks[a->own_block[o]];
  const int64_t nx = k->dims[0], ny = k->dims[1], nz = k->dims[2], first = a->first_cell[a->own_block[o]];
  const int64_t *map = a->map + a->map_first[o];
  int64_t off[27];
  amr_block_stencil(k, off);
  for (int64_t z = 0; z < nz; ++z)
    for (int64_t y = 0; y < ny; ++y) {
      const int row_fast = a->plain[o] && nx >= 3 && y >= 1 && y < ny - 1 && z >= 1 && z < nz - 1;
      const int64_t row = first + nx * (y + ny * z);
      const int64_t *entry = map + 1 + (nx + 2) * ((y + 1) + (ny + 2) * (z + 1));
      if (row_fast)
        KERNEL(row_highest)(rho + row, 1, nx - 1, off, best, best_k);
      for (int64_t x = 0; x < nx; ++x) {
        const int64_t i = row + x;
        up[i] = cell_peak[i] = -1;
        if (entry[x] == AMR_REFINED)
          continue; /* covered: not a leaf */
        const RHO_T r = rho[i];
        if (!(r >= 0) || r == (RHO_T)INFINITY) {
          ++peaks->n_bad;
          continue;
        }
        if (!((double)r > threshold))
          continue;
        ++peaks->n_test;
        int64_t highest = i;
        if (row_fast && x >= 1 && x < nx - 1) {
          highest = i + off[best_k[x]];
        } else {
          amr_cursor_at(c, o, x, y, z);
          int64_t best_id = -1;
          RHO_T best_rho = r;
          int refined = 0;
          for (int s = 0; s < 26; ++s) {
            const int64_t j = c->entry[c->stencil[s]];
            if (j >= 0)
              KERNEL(raise_best)(w, rho, j, &highest, &best_rho, &best_id);
            else
              refined |= j == AMR_REFINED;
          }
          const int64_t n = refined ? amr_cursor_finer(c) : 0;
          if (n < 0)
            return PHEW_ERROR_MEMORY;
          for (int64_t s = 0; s < n; ++s)
            KERNEL(raise_best)(w, rho, c->list[s], &highest, &best_rho, &best_id);
        }
        if (highest < i && highest >= first) /* as on a grid: this block's cells only */
          highest = up[highest];
        up[i] = highest;
        if (highest == i && peak_cells_add(peaks, i) != PHEW_OK)
          return PHEW_ERROR_MEMORY;
      }
    }
  return PHEW_OK;
}
