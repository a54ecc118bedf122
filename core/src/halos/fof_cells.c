/* The sets of friends among a rank's particles, on a grid of cells (the idea of hfof, Creasey
 * 2018): cells no wider than the linking length over sqrt(3) along each axis, so that all the
 * particles of a cell are friends of one another and join at once; two cells can hold friends
 * only when they are at most a few cells apart (the stencil). For each pair of neighbouring
 * cells the particles are compared until a pair of friends joins the two cells, and not at
 * all once the cells are in one set. In dense regions that is about one join per particle,
 * instead of every pair within the length.
 *
 * The particles are sorted by cell (x slowest, z fastest); a hash table finds a cell from its
 * coordinates. Cells are cut into ranges, one task each, joining concurrently
 * (union_find.h). Distances are particle_distance2's, compared with <= the length squared, so
 * that the sets are those of every pair compared; cells are whole only with a margin far above
 * the rounding of the distances. */
#include "halos.h"
#include "union_find.h"
#include "../particles/threads.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum {
  CELL_BITS = 20,          /* cells per axis at most 2^20: keys of 60 bits */
  CELLS_PER_TASK = 4096,
  MAX_REACH = 3            /* cells a friend can be away along an axis */
};

typedef struct cell_grid {
  int64_t dims[3];
  double origin[3], width[3]; /* cell (i, j, k) is origin + [i, i + 1) width along x ... */
  int periodic[3];
  int whole;                  /* every cell's particles are all friends of one another */
  int reach;                  /* along each axis, friends are at most this many cells apart */
} cell_grid;

typedef struct cell_table {
  uint64_t mask;
  uint64_t *key; /* UINT64_MAX: empty */
  int64_t *cell;
} cell_table;

/* Cells in x-major order, z fastest: the cells (x, y, z0 .. z1) have consecutive keys. */
static uint64_t cell_key(const cell_grid *g, const int64_t c[3])
{
  return ((uint64_t)c[0] * (uint64_t)g->dims[1] + (uint64_t)c[1]) * (uint64_t)g->dims[2] + (uint64_t)c[2];
}

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
 * long), the axis gets cells at least one length wide instead, and no cell is whole. */
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
    if (!(n <= (double)((int64_t)1 << CELL_BITS)) || (extent > 0.0 && reach_of(length, extent / n) > MAX_REACH)) {
      n = floor(extent / (length * (1.0 + 1e-9)));
      n = n < 1.0 ? 1.0 : (n > (double)((int64_t)1 << CELL_BITS) ? (double)((int64_t)1 << CELL_BITS) : n);
      g->whole = 0;
    }
    g->dims[d] = (int64_t)n;
    g->width[d] = extent > 0.0 ? extent / n : 1.0;
    /* one cell along the axis: no neighbour along it, whatever the length */
    const int reach = extent > 0.0 && g->dims[d] > 1 ? reach_of(length, g->width[d]) : 1;
    g->reach = reach > g->reach ? reach : g->reach;
  }
}

/* ---- sorting particles by cell ------------------------------------------------------------ */

typedef struct keyed {
  uint64_t key;
  int32_t index;
} keyed;

/* LSD radix sort by key, 11 bits at a time over the key's `bits` low bits (stable). */
static int sort_keyed(keyed *a, int64_t n, int bits)
{
  keyed *b = phew_malloc((size_t)n + 1, sizeof *b);
  if (!b)
    return -1;
  keyed *const mine = a;
  int64_t count[2048];
  for (int shift = 0; shift < bits; shift += 11) {
    memset(count, 0, sizeof count);
    for (int64_t i = 0; i < n; ++i)
      count[(a[i].key >> shift) & 2047]++;
    if (n == 0 || count[(a[0].key >> shift) & 2047] == n)
      continue;
    int64_t sum = 0;
    for (int k = 0; k < 2048; ++k) {
      const int64_t c = count[k];
      count[k] = sum;
      sum += c;
    }
    for (int64_t i = 0; i < n; ++i)
      b[count[(a[i].key >> shift) & 2047]++] = a[i];
    keyed *t = a;
    a = b;
    b = t;
  }
  if (a != mine) {
    memcpy(mine, a, (size_t)n * sizeof *a);
    b = a;
  }
  free(b);
  return 0;
}

/* ---- the cells ---------------------------------------------------------------------------- */

static int table_init(cell_table *t, int64_t n_cells)
{
  uint64_t size = 16;
  while (size < 2 * (uint64_t)n_cells)
    size <<= 1;
  t->mask = size - 1;
  t->key = phew_malloc((size_t)size, sizeof *t->key);
  t->cell = phew_malloc((size_t)size, sizeof *t->cell);
  if (!t->key || !t->cell)
    return -1;
  for (uint64_t k = 0; k < size; ++k)
    t->key[k] = UINT64_MAX;
  return 0;
}

static void table_free(cell_table *t)
{
  free(t->key);
  free(t->cell);
}

static void table_put(cell_table *t, uint64_t key, int64_t cell)
{
  uint64_t at = hash_id((int64_t)key) & t->mask;
  while (t->key[at] != UINT64_MAX)
    at = (at + 1) & t->mask;
  t->key[at] = key;
  t->cell[at] = cell;
}

static int64_t table_find(const cell_table *t, uint64_t key)
{
  uint64_t at = hash_id((int64_t)key) & t->mask;
  while (t->key[at] != UINT64_MAX) {
    if (t->key[at] == key)
      return t->cell[at];
    at = (at + 1) & t->mask;
  }
  return -1;
}

/* ---- joining ------------------------------------------------------------------------------ */

/* The cells (x + dx, y + dy, z + dz) of the half stencil with dz in [dz_lo, dz_hi]: a run of
 * consecutive keys when no axis wraps. */
typedef struct stencil_column {
  int dx, dy, dz_lo, dz_hi;
} stencil_column;

typedef struct link_job {
  const cell_grid *g;
  const particle_box *box;
  const cell_table *table;
  const int64_t *start;    /* per cell: its first particle in sorted order (n_cells + 1) */
  const uint64_t *key;     /* per cell */
  const double *position;  /* in sorted order, 3 per particle */
  int64_t n_cells;
  double r2;
  const stencil_column *column; /* the half stencil, by column */
  int n_columns;
  int shifts;              /* every pair of neighbouring cells has one nearest-image shift */
  union_find *sets;        /* by sorted order */
} link_job;

/* Joins the friends between cells a and b (a != b); with both whole, up to the first pair.
 * When the grid has room (job->shifts), every pair of the two cells takes the same branch of
 * particle_delta per axis, found from their first particles: (x_i - x_j) + shift, with the
 * shift -size, 0 or +size, is then bitwise its difference ((x - y) + (-L) is x - y - L), and
 * the loop needs no branch per axis. */
static void link_two(const link_job *job, int64_t a, int64_t b)
{
  union_find *u = job->sets;
  const int64_t a0 = job->start[a], a1 = job->start[a + 1], b0 = job->start[b], b1 = job->start[b + 1];
  const int whole = job->g->whole;
  if (whole && union_find_root(u, (int32_t)a0) == union_find_root(u, (int32_t)b0))
    return;
  const double *restrict p = job->position;
  if (!job->shifts) {
    for (int64_t i = a0; i < a1; ++i)
      for (int64_t j = b0; j < b1; ++j)
        if (particle_distance2(job->box, &p[3 * i], &p[3 * j]) <= job->r2) {
          union_find_join(u, (int32_t)i, (int32_t)j);
          if (whole)
            return;
        }
    return;
  }
  double shift[3]; /* particle_delta's branch for the first two particles: -size, 0 or +size */
  for (int d = 0; d < 3; ++d) {
    const double diff = p[3 * a0 + d] - p[3 * b0 + d], period = job->box->size[d];
    shift[d] = !job->box->periodic[d] ? 0.0 : 2.0 * diff > period ? -period : (2.0 * diff < -period ? period : 0.0);
  }
  const double r2 = job->r2;
  for (int64_t i = a0; i < a1; ++i) {
    const double xi = p[3 * i], yi = p[3 * i + 1], zi = p[3 * i + 2];
    for (int64_t j = b0; j < b1; ++j) {
      const double dx = (xi - p[3 * j]) + shift[0], dy = (yi - p[3 * j + 1]) + shift[1],
                   dz = (zi - p[3 * j + 2]) + shift[2];
      if ((dx * dx + dy * dy) + dz * dz <= r2) {
        union_find_join(u, (int32_t)i, (int32_t)j);
        if (whole)
          return;
      }
    }
  }
}

/* The first cell whose key is not below `key`, in key[from, n). */
static int64_t lower_bound(const uint64_t *key, int64_t from, int64_t n, uint64_t target)
{
  int64_t lo = from, hi = n;
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo) / 2;
    if (key[mid] < target)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

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
    if (g->whole) {
      for (int64_t i = a0 + 1; i < a1; ++i)
        union_find_join(u, (int32_t)a0, (int32_t)i);
    } else {
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
          const int64_t b = table_find(job->table, base + (uint64_t)z);
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
            const int64_t b = table_find(job->table, base + (uint64_t)zz);
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
        /* the smallest distance between particles of the two cells: |e| - 1 cells along each
         * axis, less a margin for the rounding of the cell indices */
        const int e[3] = {dx, dy, dz};
        double gap2 = 0.0;
        for (int d = 0; d < 3; ++d) {
          const int cells = abs(e[d]) - 1;
          const double gap = cells > 0 ? cells * g->width[d] * (1.0 - 1e-9) : 0.0;
          gap2 += gap * gap;
        }
        if (gap2 > length * length)
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

enum { KEY_BLOCK = 65536 }; /* particles per task of the keys and the copies */

/* The particles' cells, then (after the sort) their positions in sorted order. */
typedef struct key_job {
  const cell_grid *g;
  const double *position;
  keyed *order;
  double *sorted;
  int32_t *place; /* sorted place -> particle */
  int64_t n;
  int copy;       /* 0: keys; 1: copies */
} key_job;

static void key_task(void *context, int thread, int64_t task)
{
  (void)thread;
  const key_job *job = context;
  const int64_t end = (task + 1) * KEY_BLOCK < job->n ? (task + 1) * KEY_BLOCK : job->n;
  for (int64_t i = task * KEY_BLOCK; i < end; ++i) {
    if (job->copy) {
      const int32_t k = job->order[i].index;
      job->place[i] = k;
      memcpy(&job->sorted[3 * i], &job->position[3 * (int64_t)k], 3 * sizeof *job->sorted);
    } else {
      int64_t c[3];
      cell_of(job->g, &job->position[3 * i], c);
      job->order[i] = (keyed){cell_key(job->g, c), (int32_t)i};
    }
  }
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
  keyed *order = phew_malloc((size_t)n + 1, sizeof *order);
  double *sorted = phew_malloc((size_t)n + 1, 3 * sizeof *sorted);
  f->order = phew_malloc((size_t)n + 1, sizeof *f->order);
  int ok = order && sorted && f->order && union_find_init(&f->sets, n) == 0;
  const int threads = particle_threads(n_threads);
  key_job keys = {&g, position, order, sorted, f->order, n, 0};
  if (ok)
    particle_parallel(threads, (n + KEY_BLOCK - 1) / KEY_BLOCK, key_task, &keys);
  int bits = 1;
  while (bits < 63 && ((uint64_t)1 << bits) < (uint64_t)g.dims[0] * (uint64_t)g.dims[1] * (uint64_t)g.dims[2])
    ++bits;
  ok = ok && sort_keyed(order, n, bits) == 0;
  keys.copy = 1;
  if (ok)
    particle_parallel(threads, (n + KEY_BLOCK - 1) / KEY_BLOCK, key_task, &keys);
  int64_t n_cells = 0;
  for (int64_t i = 0; ok && i < n; ++i)
    n_cells += i == 0 || order[i].key != order[i - 1].key;
  int64_t *start = ok ? phew_malloc((size_t)n_cells + 1, sizeof *start) : NULL;
  uint64_t *key = ok ? phew_malloc((size_t)n_cells + 1, sizeof *key) : NULL;
  cell_table table;
  memset(&table, 0, sizeof table);
  ok = ok && start && key && table_init(&table, n_cells) == 0;
  for (int64_t i = 0, c = 0; ok && i < n; ++i)
    if (i == 0 || order[i].key != order[i - 1].key) {
      start[c] = i;
      key[c] = order[i].key;
      table_put(&table, key[c], c);
      ++c;
    }
  if (ok)
    start[n_cells] = n;
  free(order);
  stencil_column column[(2 * MAX_REACH + 1) * (2 * MAX_REACH + 1)];
  if (ok && n_cells > 0) {
    const int n_columns = half_stencil(&g, length, column);
    /* one shift per pair of cells: along periodic axes, neighbouring cells (reach + 1 cells
     * apart at most) stay well inside half a period, or well beyond it when they wrap */
    int shifts = 1;
    for (int d = 0; d < 3; ++d)
      shifts = shifts && (!g.periodic[d] || g.dims[d] >= 4 * (g.reach + 1));
    link_job job = {&g, box, &table, start, key, sorted, n_cells, length * length, column, n_columns, shifts, &f->sets};
    particle_parallel(threads, (n_cells + CELLS_PER_TASK - 1) / CELLS_PER_TASK, link_task, &job);
  }
  table_free(&table);
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
