/* Saddle point search (paper section 2.3): for every pair of neighbouring test cells in
 * different peak patches, (rho_a + rho_b) / 2 is a candidate; the saddle of two patches is
 * the highest candidate. The pairs of patches live in a hash map while the cells are
 * scanned and leave as a flat list of edges. */
#include "amr_mesh.h"
#include "segmentation.h"
#include "threads.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct pair_slot {
  uint64_t key; /* (lower peak index << 32 | higher peak index) + 1; 0 marks an empty slot */
  double saddle;
} pair_slot;

typedef struct pair_map {
  pair_slot *slots;
  uint64_t mask; /* capacity - 1, capacity a power of two */
  int64_t n;
  uint64_t last_key; /* neighbouring cells often see the same pair: remember the last slot */
  pair_slot *last;
} pair_map;

static uint64_t pair_hash(uint64_t key) { return (key * UINT64_C(0x9E3779B97F4A7C15)) >> 17; }

static phew_status pair_map_init(pair_map *m, uint64_t capacity)
{
  uint64_t c = 1024;
  while (c < capacity)
    c <<= 1;
  m->slots = calloc(c, sizeof *m->slots);
  if (!m->slots)
    return PHEW_ERROR_MEMORY;
  m->mask = c - 1;
  m->n = 0;
  m->last_key = 0;
  m->last = NULL;
  return PHEW_OK;
}

static pair_slot *pair_map_slot(pair_map *m, uint64_t key)
{
  uint64_t h = pair_hash(key) & m->mask;
  while (m->slots[h].key != 0 && m->slots[h].key != key)
    h = (h + 1) & m->mask;
  return &m->slots[h];
}

static phew_status pair_map_grow(pair_map *m)
{
  pair_map bigger;
  if (pair_map_init(&bigger, 2 * (m->mask + 1)) != PHEW_OK)
    return PHEW_ERROR_MEMORY;
  for (uint64_t h = 0; h <= m->mask; ++h)
    if (m->slots[h].key != 0)
      *pair_map_slot(&bigger, m->slots[h].key) = m->slots[h];
  bigger.n = m->n;
  free(m->slots);
  *m = bigger;
  return PHEW_OK;
}

/* A pair not met last: found or added (the map grows as needed), then raised. */
static phew_status pair_map_raise_other(pair_map *m, uint64_t key, double saddle)
{
  pair_slot *slot = pair_map_slot(m, key);
  if (slot->key == 0) {
    if ((uint64_t)(m->n + 1) * 2 > m->mask + 1) {
      if (pair_map_grow(m) != PHEW_OK)
        return PHEW_ERROR_MEMORY;
      slot = pair_map_slot(m, key);
    }
    slot->key = key;
    slot->saddle = saddle;
    m->n++;
  } else if (saddle > slot->saddle) {
    slot->saddle = saddle;
  }
  m->last_key = key;
  m->last = slot;
  return PHEW_OK;
}

/* Saddle of the pair (a, b) becomes max(current, saddle). Neighbouring cells mostly see the
 * pair the cell before saw: that case inline. */
static inline phew_status pair_map_raise(pair_map *m, int64_t a, int64_t b, double saddle)
{
  const uint64_t lo = (uint64_t)(a < b ? a : b), hi = (uint64_t)(a < b ? b : a);
  const uint64_t key = ((lo << 32) | hi) + 1;
  if (key != m->last_key)
    return pair_map_raise_other(m, key, saddle);
  if (saddle > m->last->saddle)
    m->last->saddle = saddle;
  return PHEW_OK;
}

/* Which of their 13 forward neighbours the cells of a row segment [x0, x1) see in another
 * patch: bit k - 14 of border[x] for stencil entry k, in 13 passes over the row, each a plain
 * loop the compiler vectorises. Most cells lie inside their patch (no bit set); the others then
 * visit exactly the neighbours their bits name, without a branch per neighbour to mispredict. */
PHEW_VECTOR_CLONES
static void row_borders(const int64_t *cp, int64_t x0, int64_t x1, const int64_t *off, uint16_t *border)
{
  for (int64_t x = x0; x < x1; ++x)
    border[x] = 0;
  for (int k = 14; k < 27; ++k) {
    const int64_t *restrict other = cp + off[k];
    uint16_t *restrict b = border;
    for (int64_t x = x0; x < x1; ++x)
      b[x] |= (uint16_t)(((other[x] != cp[x]) & (other[x] >= 0)) << (k - 14));
  }
}

#define RHO_T float
#define KERNEL(name) name##_f32
#include "saddles_kernel.h"
#undef RHO_T
#undef KERNEL

#define RHO_T double
#define KERNEL(name) name##_f64
#include "saddles_kernel.h"
#undef RHO_T
#undef KERNEL

/* ---- grids and AMR on threads: a map per thread, merged by maximum --------------------- */

typedef struct scan_job {
  const mesh *m;
  const field *f;
  const int64_t *cell_peak;
  pair_map *map;     /* per thread */
  cell_walk *walk;   /* per thread (AMR) */
  uint16_t **border; /* per thread: a row (grids) */
  char *task_failed; /* per task, read after the threads */
} scan_job;

static void scan_task(void *context, int thread, int64_t task)
{
  scan_job *j = context;
  const field *f = j->f;
  pair_map *map = &j->map[thread];
  phew_status s;
  if (j->m->kind == PHEW_MESH_AMR)
    s = f->f32 ? scan_amr_block_f32(&j->walk[thread], f->f32, j->cell_peak, task, map)
               : scan_amr_block_f64(&j->walk[thread], f->f64, j->cell_peak, task, map);
  else
    s = f->f32 ? scan_plane_f32(&j->m->b, f->f32, j->cell_peak, j->m->b.lo[2] + task, j->border[thread], map)
               : scan_plane_f64(&j->m->b, f->f64, j->cell_peak, j->m->b.lo[2] + task, j->border[thread], map);
  j->task_failed[task] = s != PHEW_OK;
}

/* The maps of threads 1.. into thread 0's, each pair at its highest saddle. */
static phew_status merge_maps(pair_map *map, int threads)
{
  for (int t = 1; t < threads; ++t)
    for (uint64_t h = 0; h <= map[t].mask; ++h) {
      const pair_slot *from = &map[t].slots[h];
      if (from->key == 0)
        continue;
      const uint64_t key = from->key - 1;
      if (pair_map_raise(&map[0], (int64_t)(key >> 32), (int64_t)(key & UINT64_C(0xFFFFFFFF)), from->saddle) != PHEW_OK)
        return PHEW_ERROR_MEMORY;
    }
  return PHEW_OK;
}

static phew_status scan_cells(const mesh *m, const field *f, const int64_t *cell_peak, int64_t n_peaks, int threads,
                              pair_map *out)
{
  const int64_t n_tasks = m->kind == PHEW_MESH_AMR ? m->amr->n_own_blocks : m->b.hi[2] - m->b.lo[2];
  const size_t width = m->kind == PHEW_MESH_AMR ? 1 : (size_t)m->b.dims[0];
  scan_job j = {.m = m,
                .f = f,
                .cell_peak = cell_peak,
                .map = phew_calloc((size_t)threads, sizeof(pair_map)),
                .walk = phew_calloc((size_t)threads, sizeof(cell_walk)),
                .border = phew_calloc((size_t)threads, sizeof(uint16_t *)),
                .task_failed = phew_calloc((size_t)n_tasks + 1, 1)};
  int failed = !j.map || !j.walk || !j.border || !j.task_failed;
  for (int t = 0; !failed && t < threads; ++t) /* one thread: room for all pairs at once */
    failed = pair_map_init(&j.map[t], (uint64_t)n_peaks * 8 / (uint64_t)threads) != PHEW_OK ||
             cell_walk_init(&j.walk[t], m) != PHEW_OK || !(j.border[t] = phew_malloc(width, sizeof(uint16_t)));
  if (!failed)
    threads_run(threads, n_tasks, scan_task, &j);
  for (int64_t t = 0; !failed && t < n_tasks; ++t)
    failed = j.task_failed[t];
  failed = failed || merge_maps(j.map, threads) != PHEW_OK;
  for (int t = 0; j.map && t < threads; ++t) {
    if (t == 0 && !failed)
      *out = j.map[0];
    else
      free(j.map[t].slots);
    if (j.walk)
      cell_walk_free(&j.walk[t]);
    if (j.border)
      free(j.border[t]);
  }
  free(j.map);
  free(j.walk);
  free(j.border);
  free(j.task_failed);
  return failed ? PHEW_ERROR_MEMORY : PHEW_OK;
}

static int compare_edges(const void *pa, const void *pb)
{
  const saddle_edge *a = pa, *b = pb;
  if (a->a != b->a)
    return a->a < b->a ? -1 : 1;
  return a->b < b->b ? -1 : (a->b > b->b);
}

phew_status saddles_find(const mesh *m, const field *f, const int64_t *cell_peak, int64_t n_peaks, int n_threads,
                         edge_list *out, call_result *result)
{
  if (n_peaks >= (INT64_C(1) << 32) - 1)
    return phew_fail(result, PHEW_ERROR_ARGUMENT, "too many peaks on one process (%lld)", (long long)n_peaks);
  pair_map map = {0};
  phew_status s;
  if (m->kind == PHEW_MESH_GRAPH) {
    cell_walk w = {0};
    s = pair_map_init(&map, (uint64_t)n_peaks * 8);
    if (s == PHEW_OK)
      s = cell_walk_init(&w, m);
    if (s == PHEW_OK)
      s = f->f32 ? scan_pairs_list_f32(&w, f->f32, cell_peak, &map) : scan_pairs_list_f64(&w, f->f64, cell_peak, &map);
    cell_walk_free(&w);
  } else
    s = scan_cells(m, f, cell_peak, n_peaks, n_threads > 1 ? n_threads : 1, &map);
  if (s == PHEW_OK) {
    out->edges = phew_malloc((size_t)map.n, sizeof *out->edges);
    if (!out->edges)
      s = PHEW_ERROR_MEMORY;
  }
  if (s != PHEW_OK) {
    free(map.slots);
    return phew_fail(result, PHEW_ERROR_MEMORY, "out of memory in the saddle search");
  }
  out->n = 0;
  out->capacity = map.n;
  for (uint64_t h = 0; h <= map.mask; ++h)
    if (map.slots[h].key != 0) {
      const uint64_t key = map.slots[h].key - 1;
      saddle_edge *e = &out->edges[out->n++];
      e->a = (int64_t)(key >> 32);
      e->b = (int64_t)(key & UINT64_C(0xFFFFFFFF));
      e->density = map.slots[h].saddle;
    }
  free(map.slots);
  /* by pair: the same list whatever the threads and the maps' histories */
  qsort(out->edges, (size_t)out->n, sizeof *out->edges, compare_edges);
  return PHEW_OK;
}

void edge_list_free(edge_list *e)
{
  free(e->edges);
  e->edges = NULL;
  e->n = e->capacity = 0;
}

/* Distinct pairs of neighbouring patches over all ranks (a pair may be seen on several
 * ranks): each pair is counted by the owner of its lower peak, once. */
typedef struct id_pair {
  int64_t lo, hi;
} id_pair;

static uint64_t id_pair_hash(id_pair k)
{
  return ((uint64_t)k.lo * UINT64_C(0x9E3779B97F4A7C15) ^ (uint64_t)k.hi * UINT64_C(0xC2B2AE3D27D4EB4F)) >> 7;
}

phew_status saddles_count_distinct(peak_comm *pc, const edge_list *edges, int64_t *count)
{
  const peak_table *t = pc->peaks;
  outbox o;
  outbox_init(&o, pc->c, sizeof(id_pair));
  for (int64_t e = 0; e < edges->n; ++e) {
    const int64_t a = t->global_id[edges->edges[e].a], b = t->global_id[edges->edges[e].b];
    const id_pair k = {a < b ? a : b, a < b ? b : a};
    outbox_put(&o, t->owner[a < b ? edges->edges[e].a : edges->edges[e].b], &k);
  }
  inbox in;
  phew_status s = outbox_send(&o, pc->c, &in);
  outbox_free(&o);
  int64_t n = 0;
  uint64_t mask = 1;
  while (mask < 2 * (uint64_t)in.n + 1)
    mask <<= 1;
  id_pair *set = s == PHEW_OK ? phew_malloc((size_t)mask, sizeof *set) : NULL;
  for (uint64_t h = 0; set && h < mask; ++h)
    set[h].lo = -1;
  mask -= 1;
  for (int64_t i = 0; set && i < in.n; ++i) {
    id_pair k;
    memcpy(&k, in.items + (size_t)i * sizeof k, sizeof k);
    uint64_t h = id_pair_hash(k) & mask;
    while (set[h].lo >= 0 && (set[h].lo != k.lo || set[h].hi != k.hi))
      h = (h + 1) & mask;
    if (set[h].lo < 0) {
      set[h] = k;
      ++n;
    }
  }
  const int failed = !set;
  free(set);
  inbox_free(&in);
  *count = comm_sum(pc->c, n);
  return comm_max(pc->c, failed) ? PHEW_ERROR_MEMORY : PHEW_OK;
}
