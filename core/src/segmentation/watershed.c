/* Watershed segmentation (paper section 2.2): every test cell climbs to its highest
 * neighbour until it reaches a peak. Instead of sorting the cells, each cell stores a
 * pointer to its highest neighbour and the pointer chains are resolved with path halving,
 * which gives the same patches in linear time. */
#include "amr_mesh.h"
#include "segmentation.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* What one task of the first pass found: its peaks in raster order, its test cells and its
 * bad densities. */
typedef struct peak_cells {
  int64_t *cell;
  int64_t n, capacity;
  int64_t n_test, n_bad;
  int failed;
} peak_cells;

static phew_status peak_cells_add(peak_cells *p, int64_t cell)
{
  if (p->n == p->capacity) {
    const int64_t capacity = p->capacity ? 2 * p->capacity : 64;
    int64_t *grown = realloc(p->cell, (size_t)capacity * sizeof *grown);
    if (!grown)
      return PHEW_ERROR_MEMORY;
    p->cell = grown;
    p->capacity = capacity;
  }
  p->cell[p->n++] = cell;
  return PHEW_OK;
}

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

/* ---- the first pass on threads (grids: z planes; AMR: own blocks) ------------------------ */

typedef struct uphill_job {
  const mesh *m;
  const field *f;
  int64_t *up, *cell_peak;
  peak_cells *task; /* per task */
  double **best;    /* per thread: a row of densities (float or double) ... */
  int64_t **best_k; /* ... and of stencil indices (int32 or int64) */
  cell_walk *walk;  /* per thread (AMR) */
} uphill_job;

static void uphill_task(void *context, int thread, int64_t task)
{
  uphill_job *j = context;
  const field *f = j->f;
  peak_cells *p = &j->task[task];
  phew_status s;
  if (j->m->kind == PHEW_MESH_AMR)
    s = f->f32 ? uphill_amr_block_f32(&j->walk[thread], f->f32, f->threshold, task, j->up, j->cell_peak,
                                      (float *)j->best[thread], (int32_t *)j->best_k[thread], p)
               : uphill_amr_block_f64(&j->walk[thread], f->f64, f->threshold, task, j->up, j->cell_peak,
                                      j->best[thread], j->best_k[thread], p);
  else
    s = f->f32 ? uphill_plane_f32(&j->m->b, f->f32, f->threshold, j->m->b.lo[2] + task, j->up, j->cell_peak,
                                  (float *)j->best[thread], (int32_t *)j->best_k[thread], p)
               : uphill_plane_f64(&j->m->b, f->f64, f->threshold, j->m->b.lo[2] + task, j->up, j->cell_peak,
                                  j->best[thread], j->best_k[thread], p);
  p->failed = s != PHEW_OK;
}

/* The peaks of every task into the table, in task order: the numbering (and the table's
 * insertion order) of one thread. */
static phew_status number_peaks(const mesh *m, const field *f, const uphill_job *j, int64_t n_tasks, amr_cursor *c,
                                peak_table *peaks)
{
  const block *b = &m->b;
  for (int64_t t = 0; t < n_tasks; ++t)
    for (int64_t k = 0; k < j->task[t].n; ++k) {
      const int64_t i = j->task[t].cell[k];
      double coord[3];
      int64_t id;
      if (m->kind == PHEW_MESH_AMR) {
        const amr_mesh *a = m->amr;
        const phew_amr_block *blk = &a->desc->blocks[a->own_block[t]];
        const int64_t at = i - a->first_cell[a->own_block[t]];
        amr_cursor_at(c, t, at % blk->dims[0], (at / blk->dims[0]) % blk->dims[1], at / (blk->dims[0] * blk->dims[1]));
        amr_cursor_coord(c, coord);
        id = amr_cursor_global_id(c);
      } else {
        id = block_global_id(b, i % b->dims[0], (i / b->dims[0]) % b->dims[1], i / (b->dims[0] * b->dims[1]));
        const int64_t *n = b->grid->global_dims;
        coord[0] = (double)(id % n[0]);
        coord[1] = (double)((id / n[0]) % n[1]);
        coord[2] = (double)(id / (n[0] * n[1]));
      }
      j->cell_peak[i] = peaks->n;
      if (peak_table_add(peaks, id, i, field_value(f, i), coord, 0) != PHEW_OK)
        return PHEW_ERROR_MEMORY;
    }
  return PHEW_OK;
}

static void uphill_job_free(uphill_job *j, int64_t n_tasks, int threads)
{
  for (int64_t t = 0; j->task && t < n_tasks; ++t)
    free(j->task[t].cell);
  for (int k = 0; k < threads; ++k) {
    if (j->best)
      free(j->best[k]);
    if (j->best_k)
      free(j->best_k[k]);
    if (j->walk)
      cell_walk_free(&j->walk[k]); /* a zeroed walk holds nothing */
  }
  free(j->task);
  free(j->best);
  free(j->best_k);
  free(j->walk);
}

/* Grids and AMR: the first pass on rc's threads, then the peaks numbered. */
static phew_status point_uphill_cells(const mesh *m, const field *f, run_control *rc, int64_t *up, int64_t *cell_peak,
                                      peak_table *peaks, int64_t *n_test, int64_t *n_bad)
{
  const int amr = m->kind == PHEW_MESH_AMR;
  const int64_t n_tasks = amr ? m->amr->n_own_blocks : m->b.hi[2] - m->b.lo[2];
  const int threads = rc && rc->n_threads > 1 ? rc->n_threads : 1;
  int64_t width = amr ? 1 : m->b.dims[0];
  for (int64_t o = 0; amr && o < m->amr->n_own_blocks; ++o) {
    const int64_t nx = m->amr->desc->blocks[m->amr->own_block[o]].dims[0];
    width = nx > width ? nx : width;
  }
  uphill_job j = {m, f, up, cell_peak, NULL, NULL, NULL, NULL};
  j.task = phew_calloc((size_t)n_tasks + 1, sizeof *j.task);
  j.best = phew_calloc((size_t)threads, sizeof *j.best);
  j.best_k = phew_calloc((size_t)threads, sizeof *j.best_k);
  j.walk = phew_calloc((size_t)threads, sizeof *j.walk);
  int failed = !j.task || !j.best || !j.best_k || !j.walk;
  for (int k = 0; !failed && k < threads; ++k) {
    j.best[k] = phew_malloc((size_t)width, sizeof(double));
    j.best_k[k] = phew_malloc((size_t)width, sizeof(int64_t));
    failed = !j.best[k] || !j.best_k[k] || cell_walk_init(&j.walk[k], m) != PHEW_OK;
  }
  phew_status s = failed ? PHEW_ERROR_MEMORY : PHEW_OK;
  if (s == PHEW_OK && run_control_threads(rc, n_tasks, uphill_task, &j))
    s = PHEW_CANCELLED;
  for (int64_t t = 0; s == PHEW_OK && t < n_tasks; ++t) {
    if (j.task[t].failed)
      s = PHEW_ERROR_MEMORY;
    *n_test += j.task[t].n_test;
    *n_bad += j.task[t].n_bad;
  }
  if (s == PHEW_OK)
    s = number_peaks(m, f, &j, n_tasks, amr ? j.walk[0].amr : NULL, peaks);
  uphill_job_free(&j, n_tasks, threads);
  return s;
}

/* ---- the second pass: every cell takes its root's peak, on threads ------------------------- */

/* Tasks are runs of cells in storage order, at least CHAIN_TASK_MIN of them (a few planes):
 * most pointers lead back into the same run, where the peak is already known. */
enum { CHAIN_TASK_MIN = 1 << 18, CHAIN_TASKS_PER_THREAD = 4 };

typedef struct chain_job {
  int64_t n, per_task;
  int64_t *up, *cell_peak;
  int64_t ahead; /* grids: where the next plane's pointers lie, fetched early; else 0 */
} chain_job;

/* The peak of cell i, whose task began at cell start: the cells of the task before i hold
 * theirs already, so the climb stops at the first of them (or at a root), halving the path on
 * the way. Threads climb at once: the chains form a fixed forest and every write replaces a
 * pointer by an ancestor, so any interleaving ends at the same roots (relaxed atomic loads and
 * stores, plain moves on common machines, keep the races defined). A thread reads the peaks
 * of roots (written before the threads) and of its own task's cells only. */
static int64_t chain_peak(const chain_job *j, int64_t start, int64_t i)
{
  int64_t *up = j->up;
  int64_t k = i;
  for (;;) {
    const int64_t next = __atomic_load_n(&up[k], __ATOMIC_RELAXED);
    if (next == k || (next >= start && next < i))
      return j->cell_peak[next]; /* a root's (written before the threads) or a done cell's */
    const int64_t after = __atomic_load_n(&up[next], __ATOMIC_RELAXED);
    if (after == next || (after >= start && after < i))
      return j->cell_peak[after];
    __atomic_store_n(&up[k], after, __ATOMIC_RELAXED);
    k = after;
  }
}

static void chain_task(void *context, int thread, int64_t task)
{
  (void)thread;
  const chain_job *j = context;
  const int64_t start = task * j->per_task, end = start + j->per_task < j->n ? start + j->per_task : j->n;
  for (int64_t i = start; i < end; ++i) {
    if (j->ahead && (i & 7) == 0 && i + j->ahead < j->n)
      __builtin_prefetch(&j->up[i + j->ahead]); /* half the cells climb into the next plane */
    const int64_t next = __atomic_load_n(&j->up[i], __ATOMIC_RELAXED);
    if (next >= 0 && next != i)
      j->cell_peak[i] = next >= start && next < i ? j->cell_peak[next] : chain_peak(j, start, i);
  }
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
  if (m->kind == PHEW_MESH_GRAPH) {
    cell_walk w;
    s = cell_walk_init(&w, m);
    if (s == PHEW_OK)
      s = f->f32 ? point_uphill_list_f32(&w, rc, f->f32, f->threshold, up, cell_peak, peaks, &n_test, &n_bad)
                 : point_uphill_list_f64(&w, rc, f->f64, f->threshold, up, cell_peak, peaks, &n_test, &n_bad);
    cell_walk_free(&w);
  } else {
    if (m->kind == PHEW_MESH_AMR)
      for (int64_t i = m->amr->n_own_cells; i < m->n_local; ++i)
        up[i] = cell_peak[i] = -1; /* ghosts */
    s = point_uphill_cells(m, f, rc, up, cell_peak, peaks, &n_test, &n_bad);
  }
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
  const int threads = rc && rc->n_threads > 1 ? rc->n_threads : 1;
  int64_t per_task = (m->n_local + CHAIN_TASKS_PER_THREAD * threads - 1) / (CHAIN_TASKS_PER_THREAD * threads);
  per_task = per_task > CHAIN_TASK_MIN ? per_task : CHAIN_TASK_MIN;
  const int64_t ahead = m->kind == PHEW_MESH_STRUCTURED ? m->b.dims[0] * (m->b.dims[1] + 1) + 8 : 0;
  chain_job chains = {m->n_local, per_task, up, cell_peak, ahead};
  threads_run(threads, (m->n_local + per_task - 1) / per_task, chain_task, &chains);
  stats->iterations[PHEW_STAGE_WATERSHED] = 1;
  if (plan) {
    stats->iterations[PHEW_STAGE_WATERSHED] = 0;
    s = resolve_across_ranks(m, plan, pc, up, cell_peak, &stats->iterations[PHEW_STAGE_WATERSHED], result);
  }
  stats->n_test_cells = comm_sum(pc->c, n_test);
  stats->n_peaks = comm_sum(pc->c, peaks->n_owned);
  return s;
}
