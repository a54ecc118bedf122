/* The sets of friends among a rank's particles, on a grid of cells (the idea of hfof, Creasey
 * 2018): cells no wider than the linking length over sqrt(3) along each axis, so that all the
 * particles of a cell are friends of one another and join at once; two cells can hold friends
 * only when they are at most a few cells apart (the stencil). For each pair of neighbouring
 * cells the particles are compared until a pair of friends joins the two cells, and not at
 * all once the cells are in one set. In dense regions that is about one join per particle,
 * instead of every pair within the length.
 *
 * The particles are sorted by cell. Where the cells are whole and the periodic axes hold at
 * least three blocks of 4^3 cells, cells are keyed by block and joined block by block
 * (fof_blocks.c); else cells are keyed x slowest, z fastest, and a cell's neighbours are found
 * column by column, by cursors walking the sorted cell keys, or by binary search across
 * periodic faces. Cells (or blocks) are cut into ranges, one task each, joining concurrently
 * (union_find.h). Distances are particle_distance2's, compared with <= the length squared, so
 * that the sets are those of every pair compared; cells are whole only with a margin far above
 * the rounding of the distances. */
#include "fof_cells.h"
#include "radix_sort.h"
#include "threads.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void cell_coordinates(const cell_grid *g, uint64_t key, int64_t c[3])
{
  c[2] = (int64_t)(key % (uint64_t)g->dims[2]);
  key /= (uint64_t)g->dims[2];
  c[1] = (int64_t)(key % (uint64_t)g->dims[1]);
  c[0] = (int64_t)(key / (uint64_t)g->dims[1]);
}

static void cell_of(const cell_grid *g, const double *p, int64_t c[3])
{
  for (int d = 0; d < 3; ++d) {
    const double f = floor((p[d] - g->origin[d]) / g->width[d]);
    c[d] = f < 0.0 ? 0 : (f >= (double)g->dims[d] ? g->dims[d] - 1 : (int64_t)f);
  }
}

/* Along an axis, friends are at most this many cells apart: the length over the cell width,
 * plus one for particles that the rounding of their cell's index put one cell over. */
static int reach_of(double length, double width) { return (int)floor(length / width * (1.0 + 1e-9)) + 1; }

/* The grid over [lo, hi] (periodic axes: the box). Cells are whole where they can be; where
 * that would take more than 2^20 cells or a reach beyond MAX_REACH (an axis a few lengths
 * long), the axis gets cells at least one length wide instead, and no cell is whole. Keys
 * stay below 2^60 (blocked: 2^18 blocks per axis, times 64). */
static void grid_init(cell_grid *g, const particle_box *box, const double *lo, const double *hi, double length)
{
  const double side = length / sqrt(3.0) * (1.0 - 1e-9); /* a cell's diagonal stays below the length */
  g->whole = 1;
  g->reach = 1;
  for (int d = 0; d < 3; ++d) {
    g->periodic[d] = box->periodic[d];
    g->origin[d] = lo[d];
    const double extent = box->periodic[d] ? box->size[d] : hi[d] - lo[d];
    double n = extent > 0.0 ? ceil(extent / side) : 1.0;
    if (box->periodic[d]) /* whole blocks of 4 cells across the period (smaller cells stay whole) */
      n = 4.0 * ceil(n / 4.0);
    if (!(n <= (double)((int64_t)1 << CELL_BITS)) || (extent > 0.0 && reach_of(length, extent / n) > MAX_REACH)) {
      n = floor(extent / (length * (1.0 + 1e-9)));
      n = n < 1.0 ? 1.0 : (n > (double)((int64_t)1 << CELL_BITS) ? (double)((int64_t)1 << CELL_BITS) : n);
      g->whole = 0;
    }
    g->dims[d] = (int64_t)n;
  }
  for (int d = 0; d < 3; ++d) {
    const double extent = box->periodic[d] ? box->size[d] : hi[d] - lo[d];
    g->width[d] = extent > 0.0 ? extent / (double)g->dims[d] : 1.0;
    /* one cell along the axis: no neighbour along it, whatever the length */
    const int reach = extent > 0.0 && g->dims[d] > 1 ? reach_of(length, g->width[d]) : 1;
    g->reach = reach > g->reach ? reach : g->reach;
  }
  /* blocks: whole cells (friends within MAX_REACH < 4 cells: in the same or a neighbouring
   * block) and at least three blocks across each periodic axis (a block's neighbours on
   * either side are two other blocks) */
  g->blocked = g->whole;
  for (int d = 0; d < 3; ++d) {
    g->blocks[d] = (g->dims[d] + 3) / 4;
    if (g->periodic[d] && g->dims[d] < 12)
      g->blocked = 0;
  }
}

/* The cell holding `target` in key[0, n), or -1. */
static int64_t find_cell(const uint64_t *key, int64_t n, uint64_t target)
{
  const int64_t at = lower_bound(key, 0, n, target);
  return at < n && key[at] == target ? at : -1;
}

/* ---- joining by columns ------------------------------------------------------------------ */

/* Task: a range of cells, each with its neighbours of the half stencil, column by column.
 * Where no axis wraps, a column's cells have the keys of the cell plus a constant range: as the
 * cells go up in key order so do they, and a cursor per column walks forward through the
 * sorted keys (no hash lookup, no cache miss). Cells across a periodic face come from the
 * table. */
static void link_task(void *context, int thread, int64_t task)
{
  (void)thread;
  const link_job *job = context;
  const cell_grid *g = job->g;
  union_find *u = job->sets;
  const int64_t first = task * CELLS_PER_TASK;
  const int64_t last = first + CELLS_PER_TASK < job->n_cells ? first + CELLS_PER_TASK : job->n_cells;
  int64_t cursor[(2 * MAX_REACH + 1) * (2 * MAX_REACH + 1)];
  for (int o = 0; o < job->n_columns; ++o)
    cursor[o] = -1; /* not placed yet */
  for (int64_t a = first; a < last; ++a) {
    const int64_t a0 = job->start[a], a1 = job->start[a + 1];
    if (!g->whole) { /* (a whole cell is one element of the sets) */
      for (int64_t i = a0; i < a1; ++i)
        for (int64_t j = i + 1; j < a1; ++j)
          if (particle_distance2(job->box, &job->position[3 * i], &job->position[3 * j]) <= job->r2)
            union_find_join(u, (int32_t)i, (int32_t)j);
    }
    const uint64_t ka = job->key[a];
    int64_t c[3];
    cell_coordinates(g, ka, c);
    for (int o = 0; o < job->n_columns; ++o) {
      const stencil_column *col = &job->column[o];
      int64_t nx = c[0] + col->dx, ny = c[1] + col->dy;
      int wrapped = 0;
      if (nx >= g->dims[0]) { /* dx >= 0 */
        if (!g->periodic[0])
          continue;
        nx -= g->dims[0];
        wrapped = 1;
      }
      if (ny < 0 || ny >= g->dims[1]) {
        if (!g->periodic[1])
          continue;
        ny = ((ny % g->dims[1]) + g->dims[1]) % g->dims[1];
        wrapped = 1;
      }
      const int64_t z_lo = c[2] + col->dz_lo, z_hi = c[2] + col->dz_hi;
      /* the part of the column inside [0, dims) along z: a run of keys */
      const int64_t in_lo = z_lo < 0 ? 0 : z_lo, in_hi = z_hi >= g->dims[2] ? g->dims[2] - 1 : z_hi;
      const int64_t column_key[3] = {nx, ny, 0};
      const uint64_t base = cell_key(g, column_key);
      if (wrapped) {
        for (int64_t z = in_lo; z <= in_hi; ++z) {
          const int64_t b = find_cell(job->key, job->n_cells, base + (uint64_t)z);
          if (b >= 0 && b != a)
            link_two(job, a, b);
        }
      } else if (in_lo <= in_hi) {
        int64_t at = cursor[o];
        const uint64_t from = base + (uint64_t)in_lo, to = base + (uint64_t)in_hi;
        if (at < 0)
          at = lower_bound(job->key, 0, job->n_cells, from);
        while (at < job->n_cells && job->key[at] < from)
          ++at;
        cursor[o] = at;
        for (int64_t b = at; b < job->n_cells && job->key[b] <= to; ++b)
          if (b != a)
            link_two(job, a, b);
      }
      /* the part beyond a periodic z face */
      if (g->periodic[2] && (z_lo < 0 || z_hi >= g->dims[2]))
        for (int64_t z = z_lo; z <= z_hi; ++z)
          if (z < 0 || z >= g->dims[2]) {
            const int64_t zz = ((z % g->dims[2]) + g->dims[2]) % g->dims[2];
            const int64_t b = find_cell(job->key, job->n_cells, base + (uint64_t)zz);
            if (b >= 0 && b != a)
              link_two(job, a, b);
          }
    }
  }
}

/* The cells that may hold friends of a cell, one of each pair of opposite offsets (dx, dy, dz)
 * != 0 (the lexicographically positive ones), as columns of dz; returns how many. */
static int half_stencil(const cell_grid *g, double length, stencil_column *column)
{
  int n = 0;
  const int r = g->reach;
  for (int dx = 0; dx <= r; ++dx)
    for (int dy = dx == 0 ? 0 : -r; dy <= r; ++dy) {
      stencil_column col = {dx, dy, 1, 0}; /* empty */
      for (int dz = dx == 0 && dy == 0 ? 1 : -r; dz <= r; ++dz) {
        const int e[3] = {dx, dy, dz};
        if (!in_stencil(g, length, e))
          continue;
        if (col.dz_lo > col.dz_hi)
          col.dz_lo = dz;
        col.dz_hi = dz; /* the gap grows with |dz|: the kept dz are one run */
      }
      if (col.dz_lo <= col.dz_hi)
        column[n++] = col;
    }
  return n;
}

enum {
  KEY_BLOCK = 65536,  /* particles per task of the keys, the copies and the cells' starts */
  PREFETCH_AHEAD = 16 /* particles: the copies read positions in sorted order, scattered */
};

/* The particles' cell keys, then (after the sort) their positions in sorted order and the
 * starts of the cells. */
typedef struct key_job {
  const cell_grid *g;
  const double *position;
  uint64_t *cell; /* per particle, then per sorted place: its cell's key */
  double *sorted;
  int32_t *place; /* per particle its index, then per sorted place the particle there */
  int packed;     /* > 0: the sort moves 8 bytes a particle, the index in the key's low
                     `packed` bits (split again after it); 0: the index as a payload */
  int64_t n;
  int step;       /* 0: keys; 1: packed keys split; 2: copies and the count of cells each block
                     starts; 3: starts */
  int64_t *first; /* per block: the cells started before it (step 3) or in it (step 2) */
  int64_t *start; /* per cell: its first sorted place */
  uint64_t *key;  /* per cell */
} key_job;

static void key_task(void *context, int thread, int64_t task)
{
  (void)thread;
  const key_job *job = context;
  const int64_t begin = task * KEY_BLOCK, end = begin + KEY_BLOCK < job->n ? begin + KEY_BLOCK : job->n;
  const uint64_t *cell = job->cell;
  if (job->step == 0) {
    for (int64_t i = begin; i < end; ++i) {
      int64_t c[3];
      cell_of(job->g, &job->position[3 * i], c);
      job->cell[i] = job->packed ? cell_key(job->g, c) << job->packed | (uint64_t)i : cell_key(job->g, c);
      job->place[i] = (int32_t)i;
    }
  } else if (job->step == 1) { /* a step of its own: step 2 reads places of the next block ahead */
    for (int64_t i = begin; job->packed && i < end; ++i) {
      job->place[i] = (int32_t)(job->cell[i] & (((uint64_t)1 << job->packed) - 1));
      job->cell[i] >>= job->packed;
    }
  } else if (job->step == 2) {
    int64_t starts = 0;
    for (int64_t i = begin; i < end; ++i) {
      if (i + PREFETCH_AHEAD < job->n)
        __builtin_prefetch(&job->position[3 * (int64_t)job->place[i + PREFETCH_AHEAD]]);
      memcpy(&job->sorted[3 * i], &job->position[3 * (int64_t)job->place[i]], 3 * sizeof *job->sorted);
      starts += i == 0 || cell[i] != cell[i - 1];
    }
    job->first[task] = starts;
  } else {
    int64_t c = job->first[task];
    for (int64_t i = begin; i < end; ++i)
      if (i == 0 || cell[i] != cell[i - 1]) {
        job->start[c] = i;
        job->key[c++] = cell[i];
      }
  }
}

/* The sets by sorted place, each place's parent its root (the smallest place of its set). */
typedef struct flatten_job {
  union_find *places;
  union_find *cells; /* whole cells: the sets by cell, whose root is the set's smallest cell */
  const int64_t *start;
  int64_t n_cells;
} flatten_job;

static void flatten_task(void *context, int thread, int64_t task)
{
  (void)thread;
  const flatten_job *job = context;
  union_find *u = job->places;
  if (job->cells) {
    const int64_t end = (task + 1) * KEY_BLOCK < job->n_cells ? (task + 1) * KEY_BLOCK : job->n_cells;
    for (int64_t c = task * KEY_BLOCK; c < end; ++c) {
      const int32_t root = (int32_t)job->start[union_find_root(job->cells, (int32_t)c)];
      for (int64_t t = job->start[c]; t < job->start[c + 1]; ++t)
        atomic_store_explicit(&u->parent[t], root, memory_order_relaxed);
    }
    return;
  }
  const int64_t end = (task + 1) * KEY_BLOCK < u->n ? (task + 1) * KEY_BLOCK : u->n;
  for (int64_t t = task * KEY_BLOCK; t < end; ++t)
    atomic_store_explicit(&u->parent[t], union_find_root(u, (int32_t)t), memory_order_relaxed);
}

phew_status friend_sets_find(friend_sets *f, const double *position, int64_t n, const particle_box *box,
                             const double *lo, const double *hi, double length, int n_threads)
{
  memset(f, 0, sizeof *f);
  f->n = n;
  if (n > INT32_MAX)
    return PHEW_ERROR_ARGUMENT;
  cell_grid g;
  grid_init(&g, box, lo, hi, length);
  const uint64_t n_keys = g.blocked ? ((uint64_t)g.blocks[0] * (uint64_t)g.blocks[1] * (uint64_t)g.blocks[2]) << 6
                                    : (uint64_t)g.dims[0] * (uint64_t)g.dims[1] * (uint64_t)g.dims[2];
  int key_bits = 1;
  while (key_bits < 63 && ((uint64_t)1 << key_bits) < n_keys)
    ++key_bits;
  const int64_t n_blocks = (n + KEY_BLOCK - 1) / KEY_BLOCK;
  uint64_t *cell = phew_malloc((size_t)n + 1, sizeof *cell);
  double *sorted = phew_malloc((size_t)n + 1, 3 * sizeof *sorted);
  int64_t *first = phew_malloc((size_t)n_blocks + 1, sizeof *first);
  f->order = phew_malloc((size_t)n + 1, sizeof *f->order);
  int ok = cell && sorted && first && f->order && union_find_init(&f->sets, n) == 0;
  const int threads = threads_resolve(n_threads);
  const int index_bits = radix_index_bits(n), packed = key_bits + index_bits <= 64 ? index_bits : 0;
  key_job keys = {&g, position, cell, sorted, f->order, packed, n, 0, first, NULL, NULL};
  if (ok)
    threads_run(threads, n_blocks, key_task, &keys);
  ok = ok && radix_sort(cell, packed ? NULL : f->order, n, packed, packed + key_bits, threads) == 0;
  for (keys.step = 1; ok && keys.step <= 2; ++keys.step)
    threads_run(threads, n_blocks, key_task, &keys);
  int64_t n_cells = 0;
  for (int64_t b = 0; ok && b < n_blocks; ++b) {
    const int64_t in_block = first[b];
    first[b] = n_cells;
    n_cells += in_block;
  }
  int64_t *start = ok ? phew_malloc((size_t)n_cells + 1, sizeof *start) : NULL;
  uint64_t *key = ok ? phew_malloc((size_t)n_cells + 1, sizeof *key) : NULL;
  ok = ok && start && key;
  keys.step = 3;
  keys.start = start;
  keys.key = key;
  if (ok) {
    threads_run(threads, n_blocks, key_task, &keys);
    start[n_cells] = n;
  }
  free(cell);
  free(first);
  stencil_column column[(2 * MAX_REACH + 1) * (2 * MAX_REACH + 1)];
  if (ok && n_cells > 0) {
    const int n_columns = half_stencil(&g, length, column);
    /* one shift per pair of cells: along periodic axes, neighbouring cells (reach + 1 cells
     * apart at most) stay well inside half a period, or well beyond it when they wrap */
    int shifts = 1;
    for (int d = 0; d < 3; ++d)
      shifts = shifts && (!g.periodic[d] || g.dims[d] >= 4 * (g.reach + 1));
    /* whole cells are the elements of the sets: a cell's particles are one from the start */
    union_find cells;
    memset(&cells, 0, sizeof cells);
    ok = !g.whole || union_find_init(&cells, n_cells) == 0;
    link_job job = {&g,     box,       start,  key,
                    sorted, n_cells,   length, length * length,
                    column, n_columns, shifts, g.whole ? &cells : &f->sets};
    if (ok && g.blocked)
      ok = link_blocks(&job, threads) == 0;
    else if (ok)
      threads_run(threads, (n_cells + CELLS_PER_TASK - 1) / CELLS_PER_TASK, link_task, &job);
    flatten_job flat = {&f->sets, g.whole ? &cells : NULL, start, n_cells};
    if (ok)
      threads_run(threads, ((g.whole ? n_cells : n) + KEY_BLOCK - 1) / KEY_BLOCK, flatten_task, &flat);
    union_find_free(&cells);
  }
  free(start);
  free(key);
  free(sorted);
  if (!ok) {
    friend_sets_free(f);
    return PHEW_ERROR_MEMORY;
  }
  return PHEW_OK;
}

void friend_sets_free(friend_sets *f)
{
  free(f->order);
  union_find_free(&f->sets);
  memset(f, 0, sizeof *f);
}
