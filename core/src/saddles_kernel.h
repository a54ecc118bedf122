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

static phew_status KERNEL(scan_pairs)(const block *b, const RHO_T *rho, const int64_t *cell_peak,
                                      pair_map *map)
{
  const int64_t *off = b->offsets;
  for (int64_t z = b->lo[2]; z < b->hi[2]; ++z)
    for (int64_t y = b->lo[1]; y < b->hi[1]; ++y) {
      const int row_fast = z >= b->fast_lo[2] && z < b->fast_hi[2] && y >= b->fast_lo[1] && y < b->fast_hi[1];
      const int64_t row = b->dims[0] * (y + b->dims[1] * z);
      for (int64_t x = b->lo[0]; x < b->hi[0]; ++x) {
        const int64_t i = row + x;
        const int64_t pa = cell_peak[i];
        if (pa < 0)
          continue;
        const double ra = (double)rho[i];
        if (row_fast && x >= b->fast_lo[0] && x < b->fast_hi[0]) {
          /* most cells lie inside their patch: a branch-free test skips them */
          const int64_t *cp = cell_peak + i;
          int border = 0;
          for (int k = 14; k < 27; ++k) {
            const int64_t pb = cp[off[k]];
            border |= (pb != pa) & (pb >= 0);
          }
          if (!border)
            continue;
          for (int k = 14; k < 27; ++k)
            if (KERNEL(consider_pair)(map, pa, ra, cell_peak, rho, i + off[k]) != PHEW_OK)
              return PHEW_ERROR_MEMORY;
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

/* Over a graph or AMR leaves every neighbour of every active cell is visited (a pair is seen
 * from both ends when both are active, which the maximum does not mind). */
static phew_status KERNEL(scan_pairs_list)(cell_walk *w, const RHO_T *rho, const int64_t *cell_peak, pair_map *map)
{
  for (int64_t i = 0; i < w->m->n_local; ++i) {
    const int64_t pa = cell_peak[i];
    if (pa < 0 || !cell_walk_active(w, i))
      continue;
    const double ra = (double)rho[i];
    int64_t n = 0; /* listed neighbours: all of a graph's, the finer ones of an AMR leaf */
    const int64_t *list = NULL;
    if (w->amr) { /* the map's stencil, read in place; most cells lie inside their patch */
      const amr_cursor *c = w->amr;
      int refined = 0, border = 0;
      for (int k = 0; k < 26; ++k) {
        const int64_t j = c->entry[c->stencil[k]];
        refined |= j == AMR_REFINED;
        border |= j >= 0 && cell_peak[j] != pa && cell_peak[j] >= 0;
      }
      for (int k = 0; border && k < 26; ++k) {
        const int64_t j = c->entry[c->stencil[k]];
        if (j >= 0 && KERNEL(consider_pair)(map, pa, ra, cell_peak, rho, j) != PHEW_OK)
          return PHEW_ERROR_MEMORY;
      }
      n = refined ? amr_cursor_finer(w->amr) : 0;
      list = c->list;
    } else {
      n = cell_walk_neighbours(w, i, &list);
    }
    if (n < 0)
      return PHEW_ERROR_MEMORY;
    for (int64_t k = 0; k < n; ++k)
      if (KERNEL(consider_pair)(map, pa, ra, cell_peak, rho, list[k]) != PHEW_OK)
        return PHEW_ERROR_MEMORY;
  }
  return PHEW_OK;
}
