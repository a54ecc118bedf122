/* Watershed segmentation (paper section 2.2): every test cell climbs to its highest
 * neighbour until it reaches a peak. Instead of sorting the cells, each cell stores a
 * pointer to its highest neighbour and the pointer chains are resolved with path halving,
 * which gives the same patches in linear time. */
#include "amr_mesh.h"
#include "segmentation.h"

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

enum { NOT_TEST = -1, PENDING = -2 };

/* What a cell tells the ranks that hold it as a ghost: its peak, or that it has none (yet). */
static peak_ref cell_label(const peak_table *peaks, const int64_t *cell_peak, int64_t cell)
{
  const int64_t p = cell_peak[cell];
  peak_ref r = peak_table_ref(peaks, p >= 0 ? p : -1);
  if (p < 0)
    r.global_id = p <= PENDING ? PENDING : NOT_TEST;
  return r;
}

/* Parallel watershed (paper section 3.1): ghost test cells are roots whose peak is not known
 * yet, and the active cells that climbed into them wait. Rounds of ghost exchange hand the
 * peaks over until no label changes anywhere. */
static phew_status resolve_across_ranks(const mesh *m, const ghost_plan *plan, peak_comm *pc, int64_t *up,
                                        int64_t *cell_peak, int32_t *rounds, call_result *result)
{
  peak_table *peaks = pc->peaks;
  int64_t n_pending = 0;
  int64_t *pending = NULL;
  peak_ref *answer = phew_malloc((size_t)plan->n_answer, sizeof *answer);
  peak_ref *ask = phew_malloc((size_t)plan->n_ask, sizeof *ask);
  int failed = !answer || !ask;
  /* pending: active cells that climbed into a ghost root (ghost roots point at themselves) */
  for (int64_t i = 0; !failed && i < m->n_local; ++i)
    n_pending += cell_peak[i] <= PENDING && up[i] != i;
  pending = phew_malloc((size_t)n_pending, sizeof *pending);
  failed |= !pending;
  n_pending = 0;
  for (int64_t i = 0; !failed && i < m->n_local; ++i)
    if (cell_peak[i] <= PENDING && up[i] != i)
      pending[n_pending++] = i;
  phew_status s = PHEW_OK;
  int64_t changes = 0;
  if (!comm_max(pc->c, failed))
    do {
      for (int64_t k = 0; k < plan->n_answer; ++k)
        answer[k] = cell_label(peaks, cell_peak, plan->answer_cell[k]);
      failed = ghost_plan_exchange(plan, pc->c, answer, ask, sizeof *answer) != PHEW_OK;
      changes = 0;
      int64_t still = 0;
      for (int64_t k = 0; !failed && k < n_pending; ++k) {
        const int64_t i = pending[k];
        const peak_ref *r = &ask[-cell_peak[i] - 2];
        if (r->global_id < 0) {
          pending[still++] = i;
          continue;
        }
        if (peak_table_ghost(peaks, r, &cell_peak[i]) != PHEW_OK)
          failed = 1;
        ++changes;
      }
      n_pending = still;
      ++*rounds;
      if (comm_max(pc->c, failed))
        break;
      changes = comm_sum(pc->c, changes);
    } while (changes > 0);
  failed = comm_max(pc->c, failed);
  /* the last exchange changed nothing: every ghost copy now holds its cell's final peak */
  for (int64_t k = 0; !failed && k < plan->n_ask; ++k) {
    const int64_t g = plan->ask_cell[k];
    cell_peak[g] = -1;
    if (ask[k].global_id >= 0 && peak_table_ghost(peaks, &ask[k], &cell_peak[g]) != PHEW_OK)
      failed = 1;
  }
  if (!failed && n_pending > 0)
    failed = 2; /* cannot happen: every chain climbs strictly and ends at a peak */
  failed = (int)comm_max(pc->c, failed);
  if (failed)
    s = phew_fail(result, failed == 2 ? PHEW_ERROR_MPI : PHEW_ERROR_MEMORY,
                  failed == 2 ? "the parallel watershed left cells without a peak"
                              : "out of memory in the parallel watershed");
  free(pending);
  free(answer);
  free(ask);
  return s;
}

phew_status watershed_run(const mesh *m, const field *f, const ghost_plan *plan, peak_comm *pc, run_control *rc,
                          int64_t *peak_patch_id, int64_t *cell_peak, phew_stats *stats, call_result *result)
{
  int64_t *up = peak_patch_id; /* pointers now; the catalogue's last pass writes peak ids */
  peak_table *peaks = pc->peaks;
  int64_t n_test = 0, n_bad = 0;
  phew_status s;
  if (m->kind != PHEW_MESH_STRUCTURED) {
    cell_walk w;
    s = cell_walk_init(&w, m);
    if (s == PHEW_OK && m->kind == PHEW_MESH_AMR)
      s = f->f32 ? point_uphill_amr_f32(&w, rc, f->f32, f->threshold, up, cell_peak, peaks, &n_test, &n_bad)
                 : point_uphill_amr_f64(&w, rc, f->f64, f->threshold, up, cell_peak, peaks, &n_test, &n_bad);
    else if (s == PHEW_OK)
      s = f->f32 ? point_uphill_list_f32(&w, rc, f->f32, f->threshold, up, cell_peak, peaks, &n_test, &n_bad)
                 : point_uphill_list_f64(&w, rc, f->f64, f->threshold, up, cell_peak, peaks, &n_test, &n_bad);
    cell_walk_free(&w);
  } else
    s = f->f32 ? point_uphill_f32(&m->b, rc, f->f32, f->threshold, up, cell_peak, peaks, &n_test, &n_bad)
               : point_uphill_f64(&m->b, rc, f->f64, f->threshold, up, cell_peak, peaks, &n_test, &n_bad);
  peaks->n_owned = peaks->n;
  for (int64_t p = 0; p < peaks->n; ++p)
    peaks->owner[p] = pc->c->rank;
  if (s == PHEW_CANCELLED)
    s = phew_fail(result, s, "stopped on request");
  else if (s != PHEW_OK)
    s = phew_fail(result, s, "out of memory while collecting peaks");
  s = comm_agree(pc->c, s, result);
  if (s != PHEW_OK)
    return s;
  n_bad = comm_sum(pc->c, n_bad);
  if (n_bad > 0)
    return phew_fail(result, PHEW_ERROR_DATA,
                     "the density has %lld value(s) that are NaN, infinite or negative; "
                     "densities must be finite and non-negative",
                     (long long)n_bad);

  /* cells that are not active test cells hold -1 here; ghost test cells are roots whose
   * peak is not known yet: -(their position in the plan) - 2 */
  if (plan)
    for (int64_t k = 0; k < plan->n_ask; ++k) {
      const int64_t g = plan->ask_cell[k];
      const int test = field_value(f, g) > f->threshold;
      up[g] = test ? g : -1;
      cell_peak[g] = test ? -k - 2 : -1;
    }
  for (int64_t i = 0; i < m->n_local; ++i)
    if (up[i] >= 0) {
      const int64_t peak = find_peak(up, i);
      up[i] = peak;
      cell_peak[i] = cell_peak[peak];
    }
  stats->iterations[PHEW_STAGE_WATERSHED] = 1;
  if (plan) {
    stats->iterations[PHEW_STAGE_WATERSHED] = 0;
    s = resolve_across_ranks(m, plan, pc, up, cell_peak, &stats->iterations[PHEW_STAGE_WATERSHED], result);
  }
  stats->n_test_cells = comm_sum(pc->c, n_test);
  stats->n_peaks = comm_sum(pc->c, peaks->n_owned);
  return s;
}
