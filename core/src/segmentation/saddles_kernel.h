/* Type-generic part of the saddle search: included by saddles.c once per density type with
 * RHO_T and KERNEL(name) defined. Each pair of neighbouring test cells is visited once from
 * the cell whose stencil offset to the other is positive (the 13 "forward" neighbours). */
/* The pair (cell with peak pa and density ra, cell j) is a saddle candidate if j is a test
 * cell of another patch: its saddle is the mean of the two densities. */
static inline phew_status KERNEL(consider_pair)(pair_map *map, int64_t pa, double ra, const int64_t *cell_peak,
                                                const RHO_T *rho, int64_t j)
{
  const int64_t pb = cell_peak[j];
  if (pb < 0 || pb == pa)
    return PHEW_OK;
  return pair_map_raise(map, pa, pb, 0.5 * (ra + (double)rho[j]));
}

/* One z plane of a block; border is scratch for a row. */
static phew_status KERNEL(scan_plane)(const block *b, const RHO_T *rho, const int64_t *cell_peak, int64_t z,
                                      uint16_t *border, pair_map *map)
{
  const int64_t *off = b->offsets;
  for (int64_t y = b->lo[1]; y < b->hi[1]; ++y) {
    const int row_fast = z >= b->fast_lo[2] && z < b->fast_hi[2] && y >= b->fast_lo[1] && y < b->fast_hi[1];
    const int64_t row = b->dims[0] * (y + b->dims[1] * z);
    if (row_fast)
      row_borders(cell_peak + row, b->fast_lo[0], b->fast_hi[0], off, border);
    for (int64_t x = b->lo[0]; x < b->hi[0]; ++x) {
      const int64_t i = row + x;
      const int64_t pa = cell_peak[i];
      if (pa < 0)
        continue;
      const double ra = (double)rho[i];
      if (row_fast && x >= b->fast_lo[0] && x < b->fast_hi[0]) {
        for (unsigned bits = border[x]; bits; bits &= bits - 1) {
          const int64_t j = i + off[14 + __builtin_ctz(bits)]; /* a test cell of another patch */
          if (pair_map_raise(map, pa, cell_peak[j], 0.5 * (ra + (double)rho[j])) != PHEW_OK)
            return PHEW_ERROR_MEMORY;
        }
        continue;
      }
      for (int k = 14; k < 27; ++k) {
        const int64_t j = block_neighbour(b, x, y, z, k % 3 - 1, (k / 3) % 3 - 1, k / 9 - 1);
        if (j >= 0 && KERNEL(consider_pair)(map, pa, ra, cell_peak, rho, j) != PHEW_OK)
          return PHEW_ERROR_MEMORY;
      }
    }
  }
  return PHEW_OK;
}

/* Over a graph every neighbour of every active cell is visited (a pair is seen from both ends
 * when both are active, which the maximum does not mind). */
static phew_status KERNEL(scan_pairs_list)(cell_walk *w, const RHO_T *rho, const int64_t *cell_peak, pair_map *map)
{
  for (int64_t i = 0; i < w->m->n_local; ++i) {
    const int64_t pa = cell_peak[i];
    if (pa < 0 || !cell_walk_active(w, i))
      continue;
    const double ra = (double)rho[i];
    const neighbour_list list = cell_walk_neighbours(w, i);
    for (int64_t k = 0; k < list.n; ++k)
      if (KERNEL(consider_pair)(map, pa, ra, cell_peak, rho, neighbour_at(&list, k)) != PHEW_OK)
        return PHEW_ERROR_MEMORY;
  }
  return PHEW_OK;
}

/* Own AMR block o: cells of a block without covered cells and away from its faces visit
 * their 13 forward neighbours, as on a grid (the others see them back); the other cells visit
 * all their neighbours through the block's map. */
static phew_status KERNEL(scan_amr_block)(cell_walk *w, const RHO_T *rho, const int64_t *cell_peak, int64_t o,
                                          pair_map *map)
{
  const amr_mesh *a = w->m->amr;
  amr_cursor *c = w->amr;
  const phew_amr_block *k = &a->desc->blocks[a->own_block[o]];
  const int64_t nx = k->dims[0], ny = k->dims[1], nz = k->dims[2], first = a->first_cell[a->own_block[o]];
  int64_t off[27];
  amr_block_stencil(k, off);
  for (int64_t z = 0; z < nz; ++z)
    for (int64_t y = 0; y < ny; ++y) {
      const int row_fast = a->plain[o] && y >= 1 && y < ny - 1 && z >= 1 && z < nz - 1;
      const int64_t row = first + nx * (y + ny * z);
      for (int64_t x = 0; x < nx; ++x) {
        const int64_t i = row + x, pa = cell_peak[i];
        if (pa < 0) /* covered cells have none */
          continue;
        const double ra = (double)rho[i];
        if (row_fast && x >= 1 && x < nx - 1) {
          /* as row_borders: which forward neighbours lie in another patch, then those only */
          const int64_t *cp = cell_peak + i;
          unsigned bits = 0;
          for (int s = 14; s < 27; ++s) {
            const int64_t pb = cp[off[s]];
            bits |= (unsigned)((pb != pa) & (pb >= 0)) << (s - 14);
          }
          for (; bits; bits &= bits - 1) {
            const int64_t j = i + off[14 + __builtin_ctz(bits)];
            if (pair_map_raise(map, pa, cell_peak[j], 0.5 * (ra + (double)rho[j])) != PHEW_OK)
              return PHEW_ERROR_MEMORY;
          }
          continue;
        }
        amr_cursor_at(c, o, x, y, z);
        int refined = 0;
        for (int s = 0; s < 26; ++s) {
          const int64_t j = c->entry[c->stencil[s]];
          refined |= j == AMR_REFINED;
          if (j >= 0 && KERNEL(consider_pair)(map, pa, ra, cell_peak, rho, j) != PHEW_OK)
            return PHEW_ERROR_MEMORY;
        }
        const int64_t n = refined ? amr_cursor_finer(c) : 0;
        if (n < 0)
          return PHEW_ERROR_MEMORY;
        for (int64_t s = 0; s < n; ++s)
          if (KERNEL(consider_pair)(map, pa, ra, cell_peak, rho, c->list[s]) != PHEW_OK)
            return PHEW_ERROR_MEMORY;
      }
    }
  return PHEW_OK;
}
