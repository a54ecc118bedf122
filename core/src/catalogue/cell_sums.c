/* The sums of grid cells and AMR leaves into their structures (sums_accumulate), on threads,
 * exact at about the cost of plain sums.
 *
 * A general exact sum (exact_sum.h) spends a wide accumulator on every term. Here every term
 * of a structure is bounded in advance (sums_term_bits: its peak density, the largest
 * displacement, the largest cell), so the integers m * |d| of the terms whose lowest bit lies
 * at or above a base fixed by that bound add to 128-bit counters that cannot overflow before
 * 2^L terms (L the bits of the cell count). The counters go into the exact sums once, as the
 * same integer the terms make (exact_sum_add_fixed): the result has the same bits as adding
 * the terms one by one. The rare terms below the base (densities some 2^40 below their peak,
 * 2^70 for float32) go the general way into exact sums of each partial's own, merged at the end.
 *
 * Threads take z planes of a grid, blocks of AMR, with partial counters of their own, all
 * merged exactly: the sums do not depend on the threads or on which thread took which task. */
#include "amr_mesh.h"
#include "catalogue.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* One thread's counters of one structure: the fixed-point terms in units of 2^base. */
typedef struct fixed_part {
  exact_bin mass, moment[3], volume;
  int64_t n_cells;
  double min_density;
} fixed_part;

/* Where a structure's terms go fixed: the base of each kind of sum. */
typedef struct fixed_base {
  int64_t mass, moment, volume; /* moment: of the widest axis, a base for all three */
} fixed_base;

/* The terms below their base, added the general way (exact_sum.h) into one partial's own
 * exact sums of the structure (in the windows of the structure's sums): memory per structure
 * met, not per cell. */
typedef struct slow_sums {
  int32_t target;
  int64_t structure;
  exact_sum mass, moment[3], volume;
} slow_sums;

typedef struct slow_list {
  slow_sums *sums;
  int64_t n, capacity;
  int64_t *slot[2]; /* per target: per structure, its place in sums, or -1 */
} slow_list;

typedef struct cell_sums_job {
  const mesh *m;
  const field *f;
  const int64_t *cell_peak;
  const sum_target *targets;
  int n_targets;
  int64_t n_structures[2];
  fixed_base *base[2]; /* per target: per structure */
  fixed_part *part[2]; /* per target: n_partials x n_structures */
  slow_list *slow;     /* per partial */
  int64_t period[3];   /* grid: in cells; AMR: twice, in finest cells; 0 on open axes */
  int failed;          /* out of memory on some thread */
} cell_sums_job;

enum { MAX_TARGETS = 2 }; /* clumps and haloes */

/* A density as m * 2^e with m an integer: float32 with its own 24-bit mantissa (smaller
 * products, so more terms take the fixed path), double with its 53 bits. */
static inline uint64_t split_density(const field *f, int64_t i, int64_t *e)
{
  if (f->f32) {
    uint32_t bits;
    memcpy(&bits, &f->f32[i], sizeof bits);
    const int biased = (int)((bits >> 23) & 0xff);
    *e = biased ? biased - 150 : -149;
    return (bits & 0x7fffffu) | ((uint32_t)(biased != 0) << 23);
  }
  int negative;
  return exact_split(f->f64[i], e, &negative);
}

/* The partial's slow sums of structure k of target t, made on first use (NULL without memory). */
static slow_sums *slow_sums_of(const cell_sums_job *j, slow_list *l, int t, int64_t k)
{
  if (l->slot[t][k] < 0) {
    if (l->n == l->capacity) {
      const int64_t capacity = l->capacity ? 2 * l->capacity : 16;
      slow_sums *grown = realloc(l->sums, (size_t)capacity * sizeof *grown);
      if (!grown)
        return NULL;
      l->sums = grown;
      l->capacity = capacity;
    }
    const sums *out = &j->targets[t].out[k]; /* its windows: read only while the threads run */
    slow_sums *x = &l->sums[l->n];
    x->target = t;
    x->structure = k;
    exact_sum_start(&x->mass, out->mass.top);
    exact_sum_start(&x->volume, out->volume.top);
    for (int d = 0; d < 3; ++d)
      exact_sum_start(&x->moment[d], out->moment[d].top);
    l->slot[t][k] = l->n++;
  }
  return &l->sums[l->slot[t][k]];
}

/* A cell's terms the general way: mass m 2^e_mass, moments m d[k] 2^e_moment, volume (AMR)
 * 2^weight. */
static int add_slow(const cell_sums_job *j, slow_list *l, int t, int64_t k, uint64_t m, int64_t e_mass,
                    int64_t e_moment, const int64_t d[3], int weight, int with_volume)
{
  slow_sums *x = slow_sums_of(j, l, t, k);
  if (!x)
    return -1;
  if (with_volume)
    exact_sum_add_below(&x->volume, 0, 1, weight);
  if (m == 0)
    return 0;
  exact_sum_add_below(&x->mass, 0, m, e_mass);
  for (int a = 0; a < 3; ++a)
    if (d[a] != 0)
      exact_sum_add_below(&x->moment[a], d[a] < 0, (exact_u128)m * (uint64_t)(d[a] < 0 ? -d[a] : d[a]), e_moment);
  return 0;
}

/* What a run of cells of one peak reads: per target its structure, counters and base, and
 * its reference (grid: in cells; AMR: twice, in finest cells). */
typedef struct run_cache {
  int64_t peak;
  int64_t structure[MAX_TARGETS];
  fixed_part *part[MAX_TARGETS];
  const fixed_base *base[MAX_TARGETS];
  int64_t ref[MAX_TARGETS][3];
} run_cache;

static void cache_peak(const cell_sums_job *j, int partial, int64_t p, int twice, run_cache *c)
{
  c->peak = p;
  for (int t = 0; t < j->n_targets; ++t) {
    const int64_t k = j->targets[t].structure_of_peak[p];
    c->structure[t] = k;
    c->part[t] = k >= 0 ? &j->part[t][(size_t)partial * (size_t)j->n_structures[t] + (size_t)k] : NULL;
    c->base[t] = k >= 0 ? &j->base[t][k] : NULL;
    for (int d = 0; k >= 0 && d < 3; ++d)
      c->ref[t][d] = (int64_t)((twice ? 2.0 : 1.0) * j->targets[t].reference[3 * k + d]);
  }
}

/* The nearest-image displacement of two integer coordinates along an axis of this period
 * (0: open). */
static inline int64_t wrap(int64_t d, int64_t period)
{
  if (period > 0) {
    if (2 * d > period)
      d -= period;
    else if (2 * d < -period)
      d += period;
  }
  return d;
}

/* A run of cells along x of one peak: cells first + k (k < n), at coordinates x0 + k * step
 * along x and yz along y and z. */
typedef struct cell_run {
  int64_t first, n, x0, step, yz[2];
  int weight; /* AMR: every cell is 2^weight finest cells */
  int shift;  /* moments count twice the displacement times 2^shift (AMR: -1) */
  int with_volume;
} cell_run;

/* A run's cells one by one into the counters of a structure (t, the cache's), its terms that
 * lie below their base into the partial's slow sums. Along the run the y and z displacements
 * do not change: the run's mass terms, counted in the moment's units (whose base lies higher),
 * times them. Per cell that leaves two integer terms, the mass and the x moment. */
static int add_cells(const cell_sums_job *j, const run_cache *c, int t, slow_list *slow, const cell_run *r)
{
  fixed_part *u = c->part[t];
  const fixed_base *b = c->base[t];
  const int64_t dy = wrap(r->yz[0] - c->ref[t][1], j->period[1]), dz = wrap(r->yz[1] - c->ref[t][2], j->period[2]);
  const int volume_slow = r->with_volume && r->weight < b->volume;
  exact_bin mass = 0, moment_x = 0; /* in units of 2^(moment's base) */
  int64_t fast = 0;
  for (int64_t k = 0; k < r->n; ++k) {
    int64_t e;
    const uint64_t m = split_density(j->f, r->first + k, &e);
    const int64_t dx = wrap(r->x0 + k * r->step - c->ref[t][0], j->period[0]);
    const int64_t e_moment = e + r->weight + r->shift;
    if (volume_slow || (m != 0 && e_moment < b->moment)) {
      const int64_t d[3] = {dx, dy, dz};
      if (add_slow(j, slow, t, c->structure[t], m, e + r->weight, e_moment, d, r->weight, r->with_volume) != 0)
        return -1;
      continue;
    }
    ++fast;
    if (m == 0)
      continue;
    const int s = (int)(e_moment - b->moment);
    mass += (exact_bin)m << s;
    const exact_bin term = (exact_bin)((exact_u128)m * (uint64_t)(dx < 0 ? -dx : dx)) << s;
    moment_x += dx < 0 ? -term : term;
  }
  /* back to the mass's units: the moment's base lies higher by the moments' extra bits */
  u->mass += mass << (b->moment - r->shift - b->mass);
  u->moment[0] += moment_x;
  u->moment[1] += (exact_bin)dy * mass;
  u->moment[2] += (exact_bin)dz * mass;
  if (r->with_volume)
    u->volume += (exact_bin)fast << (r->weight - b->volume);
  return 0;
}

/* Up to CHUNK float32 cells of a run as two integers in units of 2^e_lo (e_lo: the lowest
 * exponent of their nonzero densities m_k 2^e_k): a = sum m_k 2^(e_k - e_lo) and
 * x = sum k m_k 2^(e_k - e_lo). With exponents at most CHUNK_SPREAD apart both stay below
 * 2^(24 + 20 + 8 + 8) = 2^60, so plain 64-bit sums hold them (else 0: the cells go one by one). */
enum { CHUNK = 256, CHUNK_SPREAD = 20 };

typedef struct chunk_sum {
  uint64_t a, x;
  int64_t e_lo; /* INT64_MAX when every density is 0 */
} chunk_sum;

static int sum_chunk_f32(const float *rho, int64_t n, chunk_sum *out)
{
  int lo = 1 << 30, hi = -(1 << 30);
  for (int64_t k = 0; k < n; ++k) {
    uint32_t bits;
    memcpy(&bits, &rho[k], sizeof bits);
    const int biased = (int)((bits >> 23) & 0xff), e = biased ? biased : 1; /* subnormals: as biased 1 */
    const int zero = (bits & 0x7fffffffu) == 0;
    lo = !zero && e < lo ? e : lo;
    hi = !zero && e > hi ? e : hi;
  }
  *out = (chunk_sum){0, 0, INT64_MAX};
  if (hi < lo)
    return 1; /* all zero */
  if (hi - lo > CHUNK_SPREAD)
    return 0;
  uint64_t a = 0, x = 0;
  for (int64_t k = 0; k < n; ++k) {
    uint32_t bits;
    memcpy(&bits, &rho[k], sizeof bits);
    const int biased = (int)((bits >> 23) & 0xff);
    const uint64_t m = (bits & 0x7fffffu) | ((uint32_t)(biased != 0) << 23);
    const int e = biased ? biased : 1;
    const uint64_t term = m << (m ? e - lo : 0);
    a += term;
    x += (uint64_t)k * term;
  }
  *out = (chunk_sum){a, x, (int64_t)lo - 150};
  return 1;
}

/* A summed chunk into the counters of a structure (t, the cache's), when all its terms lie
 * at or above their bases and no cell's displacement wraps inside it (dx_k = dx_0 + k step):
 * then its mass terms add to a 2^(e_lo - base) and its x moments to (dx_0 a + step x)
 * 2^(e_lo - base), the same integers cell by cell would make. 0: go cell by cell. */
static int add_chunk(const cell_sums_job *j, const run_cache *c, int t, const cell_run *r, const chunk_sum *s)
{
  fixed_part *u = c->part[t];
  const fixed_base *b = c->base[t];
  if (r->with_volume && r->weight < b->volume)
    return 0;
  const int64_t d_first = r->x0 - c->ref[t][0], d_last = d_first + (r->n - 1) * r->step;
  const int64_t dx = wrap(d_first, j->period[0]);
  if (dx - d_first != wrap(d_last, j->period[0]) - d_last)
    return 0; /* the nearest image changes inside the chunk */
  if (s->e_lo != INT64_MAX) {
    const int64_t shift = s->e_lo + r->weight + r->shift - b->moment;
    if (shift < 0)
      return 0;
    const int64_t dy = wrap(r->yz[0] - c->ref[t][1], j->period[1]), dz = wrap(r->yz[1] - c->ref[t][2], j->period[2]);
    const exact_bin mass = (exact_bin)s->a << shift; /* in the moment's units, as add_cells */
    u->mass += mass << (b->moment - r->shift - b->mass);
    /* the run's x moment before the shift, negative or not: shifted as its magnitude (a left
     * shift of a negative integer is undefined in C) */
    const exact_bin moment = (exact_bin)dx * (exact_bin)s->a + (exact_bin)r->step * (exact_bin)s->x;
    const exact_bin shifted = (exact_bin)((moment < 0 ? -(exact_u128)moment : (exact_u128)moment) << shift);
    u->moment[0] += moment < 0 ? -shifted : shifted;
    u->moment[1] += (exact_bin)dy * mass;
    u->moment[2] += (exact_bin)dz * mass;
  }
  if (r->with_volume)
    u->volume += (exact_bin)r->n << (r->weight - b->volume);
  return 1;
}

/* A run of cells of one peak into the counters of its structures (the cache's): float32
 * chunks of up to CHUNK cells summed once for all structures where they fit, else (and for
 * float64) cell by cell. */
static int add_run(const cell_sums_job *j, const run_cache *c, slow_list *slow, const cell_run *r)
{
  for (int64_t k0 = 0; k0 < r->n; k0 += CHUNK) {
    cell_run part = *r;
    part.first = r->first + k0;
    part.n = r->n - k0 < CHUNK ? r->n - k0 : CHUNK;
    part.x0 = r->x0 + k0 * r->step;
    double lowest = INFINITY;
    for (int64_t k = 0; k < part.n; ++k) {
      const double rho = field_value(j->f, part.first + k);
      lowest = rho < lowest ? rho : lowest;
    }
    chunk_sum s = {0, 0, INT64_MAX};
    const int summed = j->f->f32 && sum_chunk_f32(j->f->f32 + part.first, part.n, &s);
    for (int t = 0; t < j->n_targets; ++t) {
      fixed_part *u = c->part[t];
      if (!u)
        continue;
      u->n_cells += part.n;
      u->min_density = lowest < u->min_density ? lowest : u->min_density;
      if (!(summed && add_chunk(j, c, t, &part, &s)) && add_cells(j, c, t, slow, &part) != 0)
        return -1;
    }
  }
  return 0;
}

/* The runs of equal peaks of the row segment [x0, x1) of cells row + x (coordinates of x
 * along x: c0 + x * step); entry (AMR: the row's map) marks covered cells, skipped. */
static int add_row(const cell_sums_job *j, int partial, run_cache *c, const cell_run *shape, int64_t row, int64_t x0,
                   int64_t x1, const int64_t *entry, int twice)
{
  cell_run r = *shape;
  for (int64_t x = x0; x < x1;) {
    const int64_t p = j->cell_peak[row + x];
    if (p < 0 || (entry && entry[x] == AMR_REFINED)) {
      ++x;
      continue;
    }
    int64_t end = x + 1;
    while (end < x1 && j->cell_peak[row + end] == p && !(entry && entry[end] == AMR_REFINED))
      ++end;
    if (p != c->peak)
      cache_peak(j, partial, p, twice, c);
    r.first = row + x;
    r.n = end - x;
    r.x0 = shape->x0 + x * shape->step;
    if (add_run(j, c, &j->slow[partial], &r) != 0)
      return -1;
    x = end;
  }
  return 0;
}

/* A z plane of a grid block (task = plane). */
static void grid_plane(void *context, int partial, int64_t task)
{
  cell_sums_job *j = context;
  const block *b = &j->m->b;
  const phew_grid *g = b->grid;
  const int64_t z = b->lo[2] + task;
  run_cache c = {.peak = -1};
  for (int64_t y = b->lo[1]; y < b->hi[1]; ++y) {
    const cell_run shape = {0, 0, g->stored_offset[0], 1, {g->stored_offset[1] + y, g->stored_offset[2] + z}, 0, 0, 0};
    if (add_row(j, partial, &c, &shape, b->dims[0] * (y + b->dims[1] * z), b->lo[0], b->hi[0], NULL, 0) != 0) {
      j->failed = 1; /* one thread's flag; read after the threads are done */
      return;
    }
  }
}

/* An own AMR block (task = its place among the own blocks): in finest cells, a cell of level
 * l counts 8^(finest - l) of them, and twice the displacements are integers. */
static void amr_block(void *context, int partial, int64_t task)
{
  cell_sums_job *j = context;
  const amr_mesh *a = j->m->amr;
  const phew_amr_block *k = &a->desc->blocks[a->own_block[task]];
  const int scale = a->n_levels - 1 - k->level;
  const int64_t first = a->first_cell[a->own_block[task]], px = k->dims[0] + 2, py = k->dims[1] + 2;
  const int64_t *map = a->map + a->map_first[task];
  run_cache c = {.peak = -1};
  for (int64_t z = 0; z < k->dims[2]; ++z)
    for (int64_t y = 0; y < k->dims[1]; ++y) {
      const int64_t row = first + k->dims[0] * (y + k->dims[1] * z);
      const int64_t *entry = map + 1 + px * ((y + 1) + py * (z + 1));
      /* twice the centre of cell i of the level, in finest cells: (2 i + 1) 2^scale - 1 */
      const cell_run shape = {0,
                              0,
                              ((2 * k->lo[0] + 1) << scale) - 1,
                              (int64_t)2 << scale,
                              {((2 * (k->lo[1] + y) + 1) << scale) - 1, ((2 * (k->lo[2] + z) + 1) << scale) - 1},
                              3 * scale,
                              -1,
                              1};
      if (add_row(j, partial, &c, &shape, row, 0, k->dims[0], entry, 1) != 0) {
        j->failed = 1;
        return;
      }
    }
}

/* Every partial's counters and slow terms into the sums. */
static void fold(const cell_sums_job *j, int partials)
{
  for (int t = 0; t < j->n_targets; ++t)
    for (int64_t k = 0; k < j->n_structures[t]; ++k) {
      sums *s = &j->targets[t].out[k];
      const fixed_base *b = &j->base[t][k];
      for (int q = 0; q < partials; ++q) {
        const fixed_part *u = &j->part[t][(size_t)q * (size_t)j->n_structures[t] + (size_t)k];
        if (u->n_cells == 0)
          continue;
        s->n_cells += u->n_cells;
        if (u->min_density < s->min_density)
          s->min_density = u->min_density;
        exact_sum_add_fixed(&s->mass, u->mass, b->mass);
        exact_sum_add_fixed(&s->volume, u->volume, b->volume);
        for (int d = 0; d < 3; ++d)
          exact_sum_add_fixed(&s->moment[d], u->moment[d], b->moment);
      }
    }
  for (int q = 0; q < partials; ++q)
    for (int64_t i = 0; i < j->slow[q].n; ++i) {
      const slow_sums *x = &j->slow[q].sums[i];
      sums *s = &j->targets[x->target].out[x->structure];
      exact_sum_merge(&s->mass, &x->mass); /* the same windows: exact */
      exact_sum_merge(&s->volume, &x->volume);
      for (int d = 0; d < 3; ++d)
        exact_sum_merge(&s->moment[d], &x->moment[d]);
    }
}

/* The bases of every structure: its terms' bound less the headroom of 2^L terms in 126 bits. */
static void place_bases(cell_sums_job *j)
{
  const int64_t n = j->m->n_local > 0 ? j->m->n_local : 1;
  const int64_t headroom = 126 - (64 - __builtin_clzll((uint64_t)n));
  for (int t = 0; t < j->n_targets; ++t)
    for (int64_t k = 0; k < j->n_structures[t]; ++k) {
      term_bits bits;
      sums_term_bits(j->m, j->targets[t].peak_density[j->targets[t].head[k]], &bits);
      int64_t widest = bits.moment[0];
      for (int d = 1; d < 3; ++d)
        widest = bits.moment[d] > widest ? bits.moment[d] : widest;
      j->base[t][k] = (fixed_base){bits.mass - headroom, widest - headroom, bits.volume - headroom};
    }
}

static void job_free(cell_sums_job *j, int partials)
{
  for (int t = 0; t < MAX_TARGETS; ++t) {
    free(j->base[t]);
    free(j->part[t]);
  }
  for (int q = 0; j->slow && q < partials; ++q) {
    free(j->slow[q].sums);
    for (int t = 0; t < MAX_TARGETS; ++t)
      free(j->slow[q].slot[t]);
  }
  free(j->slow);
}

/* Partial counters for as many threads as run, while they stay small against the cells (a
 * quarter of a byte per cell; beyond, fewer threads). */
static int count_partials(const cell_sums_job *j, int threads)
{
  int64_t per_partial = 0;
  for (int t = 0; t < j->n_targets; ++t)
    per_partial += j->n_structures[t] * (int64_t)sizeof(fixed_part);
  const double budget = 0.25 * (double)j->m->n_local + 1048576.0;
  int partials = threads > 1 ? threads : 1;
  while (partials > 1 && (double)partials * (double)per_partial > budget)
    --partials;
  return partials;
}

static int job_init(cell_sums_job *j, int partials)
{
  for (int t = 0; t < j->n_targets; ++t) {
    const size_t n = (size_t)j->n_structures[t];
    j->base[t] = phew_malloc(n + 1, sizeof *j->base[t]);
    j->part[t] = phew_malloc((size_t)partials * n + 1, sizeof *j->part[t]);
    if (!j->base[t] || !j->part[t])
      return -1;
    for (size_t i = 0; i < (size_t)partials * n; ++i)
      j->part[t][i] = (fixed_part){.min_density = INFINITY};
  }
  j->slow = phew_malloc((size_t)partials, sizeof *j->slow);
  if (!j->slow)
    return -1;
  memset(j->slow, 0, (size_t)partials * sizeof *j->slow);
  for (int q = 0; q < partials; ++q)
    for (int t = 0; t < j->n_targets; ++t) {
      j->slow[q].slot[t] = phew_malloc((size_t)j->n_structures[t] + 1, sizeof(int64_t));
      if (!j->slow[q].slot[t])
        return -1;
      for (int64_t k = 0; k < j->n_structures[t]; ++k)
        j->slow[q].slot[t][k] = -1;
    }
  place_bases(j);
  return 0;
}

phew_status sums_accumulate_cells(const mesh *m, const field *f, const int64_t *cell_peak, const sum_target *targets,
                                  int n_targets, run_control *rc)
{
  cell_sums_job j = {.m = m, .f = f, .cell_peak = cell_peak, .targets = targets, .n_targets = n_targets};
  if (n_targets > MAX_TARGETS)
    return PHEW_ERROR_ARGUMENT; /* cannot happen: the catalogue sums clumps and haloes */
  for (int t = 0; t < n_targets; ++t)
    j.n_structures[t] = targets[t].n;
  const int amr = m->kind == PHEW_MESH_AMR;
  for (int d = 0; d < 3; ++d)
    j.period[d] = (amr ? 2 : 1) * (int64_t)m->period[d];
  const int partials = count_partials(&j, rc ? rc->n_threads : 1);
  phew_status status = PHEW_ERROR_MEMORY;
  if (job_init(&j, partials) == 0) {
    run_control mine = rc ? *rc : (run_control){0};
    mine.n_threads = partials;
    const int64_t n_tasks = amr ? m->amr->n_own_blocks : m->b.hi[2] - m->b.lo[2];
    const int stopped = run_control_threads(&mine, n_tasks, amr ? amr_block : grid_plane, &j);
    if (rc)
      rc->stopped = mine.stopped;
    status = j.failed ? PHEW_ERROR_MEMORY : PHEW_OK;
    if (status == PHEW_OK && !stopped)
      fold(&j, partials);
  }
  job_free(&j, partials);
  return status;
}
