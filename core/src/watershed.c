/* Watershed segmentation (paper section 2.2): every test cell climbs to its highest
 * neighbour until it reaches a peak. Instead of sorting the cells, each cell stores a
 * pointer to its highest neighbour and the pointer chains are resolved with path halving,
 * which gives the same patches in linear time. */
#include "internal.h"

#include <math.h>
#include <stdlib.h>

#define RHO_T float
#define RHO_INDEX_T int32_t /* as wide as RHO_T, so compare and select vectorise together */
#define KERNEL(name) name##_f32
#include "watershed_kernel.h"
#undef RHO_T
#undef RHO_INDEX_T
#undef KERNEL

#define RHO_T double
#define RHO_INDEX_T int64_t
#define KERNEL(name) name##_f64
#include "watershed_kernel.h"
#undef RHO_T
#undef RHO_INDEX_T
#undef KERNEL

/* Root of the pointer chain starting at i, halving the path on the way. */
static int64_t find_peak(int64_t *up, int64_t i)
{
  while (up[i] != i) {
    up[i] = up[up[i]];
    i = up[i];
  }
  return i;
}

phew_status watershed_run(const mesh *m, const field *f, int64_t *peak_patch_id, int64_t *cell_peak,
                          peak_table *peaks, phew_stats *stats, phew_result *result)
{
  int64_t *up = peak_patch_id; /* pointers now; the catalogue's last pass writes peak ids */
  int64_t n_test = 0, n_bad = 0;
  phew_status s;
  if (m->kind == PHEW_MESH_GRAPH)
    s = f->f32 ? point_uphill_graph_f32(m->graph, f->f32, f->threshold, up, cell_peak, peaks, &n_test, &n_bad)
               : point_uphill_graph_f64(m->graph, f->f64, f->threshold, up, cell_peak, peaks, &n_test, &n_bad);
  else
    s = f->f32 ? point_uphill_f32(&m->b, f->f32, f->threshold, up, cell_peak, peaks, &n_test, &n_bad)
               : point_uphill_f64(&m->b, f->f64, f->threshold, up, cell_peak, peaks, &n_test, &n_bad);
  if (s != PHEW_OK)
    return phew_fail(result, s, "out of memory while collecting peaks");
  if (n_bad > 0)
    return phew_fail(result, PHEW_ERROR_DATA,
                     "the density has %lld value(s) that are NaN, infinite or negative; "
                     "densities must be finite and non-negative",
                     (long long)n_bad);

  /* cells that are not active test cells hold -1 here */
  for (int64_t i = 0; i < m->n_local; ++i)
    if (up[i] >= 0) {
      const int64_t peak = find_peak(up, i);
      up[i] = peak;
      cell_peak[i] = cell_peak[peak];
    }
  stats->n_test_cells = n_test;
  stats->n_peaks = peaks->n;
  return PHEW_OK;
}
