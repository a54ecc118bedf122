/* libFuzzer harness for phew_find_clumps on a whole structured grid (one process).
 *
 * The input bytes decode into a small grid (1..12 cells per axis, at least 2 cells), periodic
 * flags, float32 or float64 densities (plateaus, distinct values, raw bit patterns, random
 * fields spanning up to hundreds of decades, and overrides with NaN, Inf, negative, denormal
 * and huge values), the four thresholds, saddle merging on or off, the spacing and the origin
 * (extreme but finite values included, invalid ones sometimes). Errors are fine; crashes,
 * sanitizer reports and broken oracles are not. On every input:
 *
 *  (a) invariants: an error leaves every label -1 with a message, and happens for every bad
 *      input and for no tame one; a success has labels and catalogues that obey the rules of
 *      README.md ("What comes out", "Parameters"), with masses, volumes, means and positions
 *      within 1e-12 of independent long double sums (so no inf, NaN or dropped clump);
 *  (b) a shuffled merge order (params.peak_order_seed != 0) gives identical bits;
 *  (c) on a fully periodic grid whose test cells have distinct densities, a cyclic shift of
 *      the field gives the same clumps: labels shifted, tables equal but for the peak ids and
 *      positions, which shift, and the centres of mass, which shift to within rounding;
 *  (d) float32 densities give the same bits as the same values handed over as float64;
 *  (e) three threads give the same bits as one (the runs above use one; a machine with fewer
 *      cores runs as many as it has, at least two where it can), on every other input (by
 *      the merge-order seed's lowest bit: thread start-ups cost more than these small grids).
 * A broken oracle prints what broke and calls abort(), which libFuzzer records as a crash.
 *
 * Layout of an input (every read past the end gives zeros): dims (3 bytes), flags, shift
 * (3 bytes), merge-order seed (2 bytes), density scale, density threshold, relevance
 * threshold, saddle threshold, mass threshold, spacing (1 or 3 values), origin (1 or 3
 * values), density encoding, the densities, then (cell, special value) overrides to the end.
 * A value is one selector byte, followed by 8 raw bytes for selectors >= 240. Flags: bits 0-2
 * periodic x/y/z (0x80: all), 0x08 float32, 0x10 saddle merging, 0x20 three spacings, 0x40
 * three origins. tests/fuzz/make_inputs.py writes inputs in this layout.
 *
 * Replaying one input by hand: PHEW_FUZZ_VERBOSE=1 prints the decoded case and the result;
 * PHEW_FUZZ_CANONICAL=FILE writes the case in the plainest layout (exact values, raw
 * densities), e.g. to keep an input found by a locally modified harness as a regression. */
#include "phew/phew.h"

#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DIM 12

/* ---- reading the input ------------------------------------------------------------------ */
typedef struct reader {
  const uint8_t *p;
  size_t n, i;
} reader;

static unsigned rd_u8(reader *r) { return r->i < r->n ? r->p[r->i++] : 0u; }
static int rd_more(const reader *r) { return r->i < r->n; }

static uint64_t rd_bytes(reader *r, int k)
{
  uint64_t v = 0;
  for (int j = 0; j < k; ++j)
    v |= (uint64_t)rd_u8(r) << (8 * j);
  return v;
}

static double rd_raw_f64(reader *r)
{
  const uint64_t bits = rd_bytes(r, 8);
  double v;
  memcpy(&v, &bits, sizeof v);
  return v;
}

static float rd_raw_f32(reader *r)
{
  const uint32_t bits = (uint32_t)rd_bytes(r, 4);
  float v;
  memcpy(&v, &bits, sizeof v);
  return v;
}

/* Values that break arithmetic: extremes of both types, denormals, signed zero, invalid ones
 * at the end (negative, NaN, infinite). */
/* clang-format off */
static const double specials[] = {
  0.0, 1.0, 2.0, 0.5, 3.0, 10.0, 100.0, 1e-3, 1e-10, 1e10, 1e-30, 1e30, 1e-100, 1e100,
  1e-200, 1e200, 1e-300, 1e300, DBL_MAX, DBL_MIN, 0x1p-1074, 0x1p-1060, DBL_MAX / 3.0, 0x1p1000,
  FLT_MAX, FLT_MIN, 0x1p-149, 1.0 + DBL_EPSILON, 1.0 - DBL_EPSILON / 2, 1e-320, 7e15, 0x1p63,
  -0.0, -1.0, -DBL_MIN, -DBL_MAX, NAN, INFINITY, -INFINITY,
};
/* clang-format on */
#define N_SPECIALS (sizeof specials / sizeof specials[0])

static double special(unsigned k) { return specials[k % N_SPECIALS]; }

/* A parameter: a default for most selectors, a fraction of `scale` for some (thresholds
 * inside the range of the field), a special value, or 8 raw bytes. */
static double rd_value(reader *r, unsigned n_default, double fallback, unsigned n_fraction, double scale)
{
  const unsigned m = rd_u8(r);
  if (m < n_default)
    return fallback;
  if (m < n_default + n_fraction)
    return scale * ((double)(m - n_default) / (double)n_fraction);
  if (m < 240)
    return special(m);
  return rd_raw_f64(r);
}

/* ---- a small deterministic generator for fields that outrun the input ---------------------- */
static uint64_t splitmix(uint64_t *state)
{
  uint64_t z = (*state += UINT64_C(0x9E3779B97F4A7C15));
  z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
  z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
  return z ^ (z >> 31);
}
static double uniform(uint64_t *state) { return (double)(splitmix(state) >> 11) * 0x1.0p-53; }

/* ---- one decoded case ------------------------------------------------------------------- */
typedef struct fuzz_case {
  int64_t n[3], n_cells;
  int periodic[3];
  int f32;
  double origin[3], spacing[3];
  phew_params params;
  unsigned seed;    /* merge order of oracle (b), nonzero */
  int64_t shift[3]; /* oracle (c) */
  double *rho;      /* the values as the core sees them (float32 widened to double) */
  float *rho32;     /* what the core gets when f32 */
} fuzz_case;

static float to_float(double v)
{
  /* an out-of-range conversion is undefined in C: saturate to infinity ourselves */
  if (v > FLT_MAX)
    return INFINITY;
  if (v < -FLT_MAX)
    return -INFINITY;
  return (float)v;
}

static void *xcalloc(size_t n, size_t size)
{
  void *p = calloc(n ? n : 1, size);
  if (!p) {
    fprintf(stderr, "fuzz: out of memory\n");
    abort();
  }
  return p;
}

static void case_free(fuzz_case *c)
{
  free(c->rho);
  free(c->rho32);
  c->rho = NULL;
  c->rho32 = NULL;
}

static void set_cell(fuzz_case *c, int64_t i, double v)
{
  if (c->f32) {
    c->rho32[i] = to_float(v);
    c->rho[i] = (double)c->rho32[i];
  } else {
    c->rho[i] = v;
  }
}

static void decode(const uint8_t *data, size_t size, fuzz_case *c)
{
  reader r = {data, size, 0};
  memset(c, 0, sizeof *c);
  for (int d = 0; d < 3; ++d)
    c->n[d] = 1 + (int64_t)(rd_u8(&r) % MAX_DIM);
  if (c->n[0] * c->n[1] * c->n[2] < 2)
    c->n[0] = 2;
  c->n_cells = c->n[0] * c->n[1] * c->n[2];
  const unsigned flags = rd_u8(&r);
  for (int d = 0; d < 3; ++d)
    c->periodic[d] = (flags & 0x80) ? 1 : (int)((flags >> d) & 1u); /* 0x80: all periodic */
  c->f32 = (flags >> 3) & 1u;
  const int saddle_merging = (flags >> 4) & 1u;
  const int same_spacing = !((flags >> 5) & 1u);
  const int same_origin = !((flags >> 6) & 1u);
  for (int d = 0; d < 3; ++d) {
    const unsigned b = rd_u8(&r); /* always read: the layout does not depend on the dims */
    c->shift[d] = c->n[d] > 1 ? 1 + (int64_t)(b % (unsigned)(c->n[d] - 1)) : 0;
  }
  c->seed = 1u + (unsigned)rd_bytes(&r, 2);

  const double scale = rd_value(&r, 64, 1.0, 0, 0.0);
  phew_params_init(&c->params);
  c->params.density_threshold = rd_value(&r, 48, 0.0, 128, scale);
  c->params.relevance_threshold = rd_value(&r, 64, 2.0, 64, 4.0);
  /* fractions below 1 (refused since relevance thresholds must be >= 1) keep every peak, as 1
   * does: the kept inputs that drew one replay what they were found with */
  if (c->params.relevance_threshold >= 0.0 && c->params.relevance_threshold < 1.0)
    c->params.relevance_threshold = 1.0;
  c->params.saddle_merging = saddle_merging;
  c->params.saddle_threshold = rd_value(&r, 16, 0.0, 144, scale);
  c->params.mass_threshold = rd_value(&r, 128, 0.0, 32, scale);
  for (int d = 0; d < 3; ++d)
    c->spacing[d] = d > 0 && same_spacing ? c->spacing[0] : rd_value(&r, 128, 1.0, 0, 0.0);
  for (int d = 0; d < 3; ++d)
    c->origin[d] = d > 0 && same_origin ? c->origin[0] : rd_value(&r, 128, 0.0, 0, 0.0);

  c->rho = xcalloc((size_t)c->n_cells, sizeof *c->rho);
  if (c->f32)
    c->rho32 = xcalloc((size_t)c->n_cells, sizeof *c->rho32);
  const unsigned enc = rd_u8(&r);
  uint64_t state = UINT64_C(0x5eed) ^ (uint64_t)size;
  double log_range = 0.0; /* random values: scale * exp(log_range * (u - 1/2)) */
  int64_t i = 0;
  switch (enc % 4) {
  case 0: /* one byte per cell: 32 levels, so many ties and plateaus */
    for (; i < c->n_cells && rd_more(&r); ++i)
      set_cell(c, i, (double)(rd_u8(&r) % 32u) * (scale / 32.0));
    break;
  case 1: /* two bytes per cell: mostly distinct */
    for (; i < c->n_cells && r.n - r.i >= 2; ++i)
      set_cell(c, i, (double)rd_bytes(&r, 2) * (scale / 65536.0));
    break;
  case 2: /* raw bit patterns of the density type */
    for (; i < c->n_cells && r.n - r.i >= (c->f32 ? 4u : 8u); ++i) {
      if (c->f32) {
        c->rho32[i] = rd_raw_f32(&r);
        c->rho[i] = (double)c->rho32[i];
      } else {
        c->rho[i] = rd_raw_f64(&r);
      }
    }
    break;
  default: /* a seeded random field spanning up to e^765 (hundreds of decades) */
    state ^= rd_bytes(&r, 8);
    log_range = 3.0 * (double)rd_u8(&r);
    break;
  }
  for (; i < c->n_cells; ++i) /* cells the input does not reach */
    set_cell(c, i, scale * exp(log_range * (uniform(&state) - 0.5)));
  while (r.n - r.i >= 3) { /* overrides: a cell and a special value */
    const int64_t cell = (int64_t)(rd_bytes(&r, 2) % (uint64_t)c->n_cells);
    set_cell(c, cell, special(rd_u8(&r)));
  }
}

/* The case in the plainest encoding this decoder reads (every value exact, densities raw),
 * so that an input found by a modified harness (a local experiment) or any input can be
 * kept as a regression of this one: PHEW_FUZZ_CANONICAL=FILE writes it. */
static void write_canonical(const fuzz_case *c, const char *path)
{
  FILE *out = fopen(path, "wb");
  if (!out) {
    perror(path);
    return;
  }
  unsigned char flags = (unsigned char)(0x20 | 0x40 | (c->f32 ? 0x08 : 0) | (c->params.saddle_merging ? 0x10 : 0));
  for (int d = 0; d < 3; ++d)
    flags |= (unsigned char)(c->periodic[d] << d);
  for (int d = 0; d < 3; ++d)
    fputc((int)(c->n[d] - 1), out);
  fputc(flags, out);
  for (int d = 0; d < 3; ++d)
    fputc(c->shift[d] > 0 ? (int)(c->shift[d] - 1) : 0, out);
  fputc((int)((c->seed - 1u) & 0xffu), out);
  fputc((int)(((c->seed - 1u) >> 8) & 0xffu), out);
  fputc(0, out); /* scale: the default, 1 */
  /* clang-format off */
  const double values[] = {c->params.density_threshold, c->params.relevance_threshold, c->params.saddle_threshold,
                           c->params.mass_threshold, c->spacing[0], c->spacing[1], c->spacing[2],
                           c->origin[0], c->origin[1], c->origin[2]};
  /* clang-format on */
  for (size_t k = 0; k < sizeof values / sizeof values[0]; ++k) {
    fputc(240, out);
    fwrite(&values[k], sizeof(double), 1, out); /* little-endian, as the decoder reads */
  }
  fputc(2, out); /* raw densities */
  for (int64_t i = 0; i < c->n_cells; ++i) {
    if (c->f32)
      fwrite(&c->rho32[i], sizeof(float), 1, out);
    else
      fwrite(&c->rho[i], sizeof(double), 1, out);
  }
  fclose(out);
}

/* ---- running the core ------------------------------------------------------------------- */
typedef struct run {
  phew_status status;
  phew_context context; /* the run's message */
  phew_clump_result res;
  int64_t *patch, *clump, *halo;
} run;

static void solve(const fuzz_case *c, unsigned seed, int as_f64, int threads, run *r)
{
  const size_t n = (size_t)c->n_cells;
  memset(r, 0, sizeof *r);
  phew_context_init(&r->context);
  r->context.n_threads = threads;
  r->patch = xcalloc(n, sizeof(int64_t));
  r->clump = xcalloc(n, sizeof(int64_t));
  r->halo = xcalloc(n, sizeof(int64_t));
  for (size_t i = 0; i < n; ++i) /* unwritten labels show */
    r->patch[i] = r->clump[i] = r->halo[i] = -7;
  phew_input in;
  memset(&in, 0, sizeof in);
  phew_grid_init_whole(&in.grid, c->n[0], c->n[1], c->n[2]);
  for (int d = 0; d < 3; ++d) {
    in.grid.periodic[d] = c->periodic[d];
    in.grid.origin[d] = c->origin[d];
    in.grid.spacing[d] = c->spacing[d];
  }
  if (c->f32 && !as_f64) {
    in.density = c->rho32;
    in.density_type = PHEW_FLOAT32;
  } else {
    in.density = c->rho;
    in.density_type = PHEW_FLOAT64;
  }
  phew_params p = c->params;
  p.peak_order_seed = seed;
  phew_labels labels = {r->patch, r->clump, r->halo, NULL};
  r->status = phew_find_clumps(&r->context, &in, &p, &labels, &r->res);
}

static void run_free(run *r)
{
  phew_clump_result_free(&r->res);
  free(r->patch);
  free(r->clump);
  free(r->halo);
}

/* ---- reporting ---------------------------------------------------------------------------- */
static const fuzz_case *current;

static void print_case(const fuzz_case *c)
{
  fprintf(stderr, "  grid %lld x %lld x %lld, periodic %d %d %d, %s\n", (long long)c->n[0], (long long)c->n[1],
          (long long)c->n[2], c->periodic[0], c->periodic[1], c->periodic[2], c->f32 ? "float32" : "float64");
  fprintf(stderr, "  threshold %.17g relevance %.17g saddle merging %d at %.17g mass threshold %.17g\n",
          c->params.density_threshold, c->params.relevance_threshold, c->params.saddle_merging,
          c->params.saddle_threshold, c->params.mass_threshold);
  fprintf(stderr, "  spacing %.17g %.17g %.17g origin %.17g %.17g %.17g\n", c->spacing[0], c->spacing[1], c->spacing[2],
          c->origin[0], c->origin[1], c->origin[2]);
  const int64_t shown = getenv("PHEW_FUZZ_VERBOSE") ? c->n_cells : 64;
  fprintf(stderr, "  densities:");
  for (int64_t i = 0; i < c->n_cells && i < shown; ++i)
    fprintf(stderr, " %.17g", c->rho[i]);
  fprintf(stderr, c->n_cells > shown ? " ...\n" : "\n");
}

static void print_run(const run *r)
{
  fprintf(stderr, "  status %d %s: %lld clumps, %lld haloes, %lld nodes\n", (int)r->status, r->context.message,
          (long long)r->res.n_clumps, (long long)r->res.n_haloes, (long long)r->res.n_nodes);
  for (int64_t k = 0; k < r->res.n_clumps; ++k)
    fprintf(stderr, "  clump %lld: halo %lld parent %lld level %d peak %lld cells %lld mass %.17g\n", (long long)k,
            (long long)r->res.clumps[k].halo_id, (long long)r->res.clumps[k].parent_id, (int)r->res.clumps[k].level,
            (long long)r->res.clumps[k].peak_id, (long long)r->res.clumps[k].n_cells, r->res.clumps[k].mass);
  for (int64_t k = 0; k < r->res.n_haloes; ++k)
    fprintf(stderr, "  halo %lld: peak %lld cells %lld clumps %lld level %d mass %.17g\n", (long long)k,
            (long long)r->res.haloes[k].peak_id, (long long)r->res.haloes[k].n_cells,
            (long long)r->res.haloes[k].n_clumps, (int)r->res.haloes[k].level, r->res.haloes[k].mass);
  for (int64_t k = 0; k < r->res.n_nodes; ++k)
    fprintf(stderr, "  node %lld: parent %lld level %d clump %lld cells %lld mass %.17g\n", (long long)k,
            (long long)r->res.nodes[k].parent_id, (int)r->res.nodes[k].level, (long long)r->res.nodes[k].clump_id,
            (long long)r->res.nodes[k].n_cells, r->res.nodes[k].mass);
}

static void fail(const char *oracle, const char *format, ...)
{
  va_list ap;
  va_start(ap, format);
  fprintf(stderr, "\nphew fuzz: oracle %s broken: ", oracle);
  vfprintf(stderr, format, ap);
  fprintf(stderr, "\n");
  va_end(ap);
  if (current)
    print_case(current);
  abort();
}

/* ---- helpers on the field ----------------------------------------------------------------- */
static void coords(const fuzz_case *c, int64_t id, int64_t x[3])
{
  x[0] = id % c->n[0];
  x[1] = (id / c->n[0]) % c->n[1];
  x[2] = id / (c->n[0] * c->n[1]);
}

/* a is higher than b in the total order: density, then lower global id */
static int higher(const fuzz_case *c, int64_t a, int64_t b)
{
  return c->rho[a] > c->rho[b] || (c->rho[a] == c->rho[b] && a < b);
}

/* Highest of the (up to) 26 neighbours of cell i and i itself, wrapping periodic axes. */
static int64_t highest_around(const fuzz_case *c, int64_t i)
{
  int64_t x[3], best = i;
  coords(c, i, x);
  for (int dz = -1; dz <= 1; ++dz)
    for (int dy = -1; dy <= 1; ++dy)
      for (int dx = -1; dx <= 1; ++dx) {
        const int dd[3] = {dx, dy, dz};
        int64_t y[3];
        int ok = 1;
        for (int a = 0; a < 3 && ok; ++a) {
          y[a] = x[a] + dd[a];
          if (y[a] < 0 || y[a] >= c->n[a]) {
            if (c->periodic[a])
              y[a] = (y[a] + c->n[a]) % c->n[a];
            else
              ok = 0;
          }
        }
        if (!ok)
          continue;
        const int64_t q = y[0] + c->n[0] * (y[1] + c->n[1] * y[2]);
        if (higher(c, q, best))
          best = q;
      }
  return best;
}

/* Negative density and saddle thresholds are automatic (from the mean density). */
static int input_is_valid(const fuzz_case *c)
{
  const phew_params *p = &c->params;
  if (isnan(p->density_threshold) || p->density_threshold == INFINITY)
    return 0;
  if (!isfinite(p->relevance_threshold) || p->relevance_threshold < 1.0)
    return 0;
  if (p->saddle_merging && (isnan(p->saddle_threshold) || p->saddle_threshold == INFINITY))
    return 0;
  if (isnan(p->mass_threshold))
    return 0;
  for (int d = 0; d < 3; ++d)
    if (!(c->spacing[d] > 0.0) || !isfinite(c->spacing[d]) || !isfinite(c->origin[d]))
      return 0;
  for (int64_t i = 0; i < c->n_cells; ++i)
    if (!isfinite(c->rho[i]) || c->rho[i] < 0.0)
      return 0;
  return 1;
}

static int tame(double v, double lo, double hi) { return v == 0.0 || (fabs(v) >= lo && fabs(v) <= hi); }

/* Valid and far from every limit of a double: such an input must succeed. */
static int input_is_tame(const fuzz_case *c)
{
  if (!input_is_valid(c))
    return 0;
  const phew_params *p = &c->params;
  if (!tame(p->density_threshold, 1e-30, 1e30) || !tame(p->relevance_threshold, 1e-30, 1e30) ||
      !tame(p->saddle_threshold, 1e-30, 1e30) || !(tame(p->mass_threshold, 1e-30, 1e30) || isinf(p->mass_threshold)))
    return 0;
  for (int d = 0; d < 3; ++d)
    if (c->spacing[d] < 1e-20 || c->spacing[d] > 1e20 || !tame(c->origin[d], 1e-30, 1e30))
      return 0;
  for (int64_t i = 0; i < c->n_cells; ++i)
    if (!tame(c->rho[i], 1e-30, 1e30))
      return 0;
  return 1;
}

/* a == b, or both NaN */
static int same_double_value(double a, double b) { return a == b || (isnan(a) && isnan(b)); }

/* |got - want| within 1e-12 of |want|, or within a denormal step of it */
static int close_to(double got, long double want)
{
  if (!isfinite(got))
    return 0;
  const long double err = fabsl((long double)got - want);
  return err <= 1e-12L * fabsl(want) + 2.0L * 0x1p-1074L;
}

/* ---- oracle (a): invariants -------------------------------------------------------------- */
typedef struct truth {
  int64_t n_cells;
  long double mass; /* sum of density * cell volume */
  double min_density;
  int64_t lo[3], hi[3]; /* cell index bounds */
  int64_t far[3];       /* largest periodic distance of a cell from the peak, per axis */
} truth;

static void truths(const fuzz_case *c, const int64_t *label, int64_t n_rows, const phew_object *rows, truth *t,
                   long double cell_volume)
{
  for (int64_t k = 0; k < n_rows; ++k) {
    t[k].n_cells = 0;
    t[k].mass = 0.0L;
    t[k].min_density = INFINITY;
    for (int d = 0; d < 3; ++d) {
      t[k].lo[d] = INT64_MAX;
      t[k].hi[d] = -1;
      t[k].far[d] = 0;
    }
  }
  for (int64_t i = 0; i < c->n_cells; ++i) {
    const int64_t k = label[i];
    if (k < 0)
      continue;
    truth *s = &t[k];
    s->n_cells++;
    s->mass += (long double)c->rho[i] * cell_volume;
    if (c->rho[i] < s->min_density)
      s->min_density = c->rho[i];
    int64_t x[3], pk[3];
    coords(c, i, x);
    coords(c, rows[k].peak_id, pk);
    for (int d = 0; d < 3; ++d) {
      if (x[d] < s->lo[d])
        s->lo[d] = x[d];
      if (x[d] > s->hi[d])
        s->hi[d] = x[d];
      int64_t dist = x[d] > pk[d] ? x[d] - pk[d] : pk[d] - x[d];
      if (c->periodic[d] && c->n[d] - dist < dist)
        dist = c->n[d] - dist;
      if (dist > s->far[d])
        s->far[d] = dist;
    }
  }
}

static void check_rows(const fuzz_case *c, const run *r, const phew_object *rows, int64_t n_rows, const int64_t *label,
                       int clumps)
{
  const char *what = clumps ? "clump" : "halo";
  const phew_params *p = &c->params;
  const long double cell_volume = (long double)c->spacing[0] * c->spacing[1] * c->spacing[2];
  truth *t = xcalloc((size_t)(n_rows > 0 ? n_rows : 1), sizeof *t);
  for (int64_t i = 0; i < c->n_cells; ++i)
    if (label[i] < -1 || label[i] >= n_rows)
      fail("a", "cell %lld has %sId %lld, %lld %ss listed", (long long)i, what, (long long)label[i], (long long)n_rows,
           what);
  for (int64_t k = 0; k < n_rows; ++k)
    if (rows[k].peak_id < 0 || rows[k].peak_id >= c->n_cells)
      fail("a", "%s %lld has peak id %lld", what, (long long)k, (long long)rows[k].peak_id);
  truths(c, label, n_rows, rows, t, cell_volume);
  for (int64_t k = 0; k < n_rows; ++k) {
    const phew_object *o = &rows[k];
    const truth *s = &t[k];
    if (o->id != k)
      fail("a", "%s row %lld has id %lld", what, (long long)k, (long long)o->id);
    if (k > 0 && !(rows[k - 1].peak_density > o->peak_density ||
                   (rows[k - 1].peak_density == o->peak_density && rows[k - 1].peak_id < o->peak_id)))
      fail("a", "%s rows %lld and %lld are not in decreasing peak order", what, (long long)k - 1, (long long)k);
    if (label[o->peak_id] != k || r->patch[o->peak_id] != o->peak_id)
      fail("a", "%s %lld: its peak cell %lld is labelled %lld (PeakPatchId %lld)", what, (long long)k,
           (long long)o->peak_id, (long long)label[o->peak_id], (long long)r->patch[o->peak_id]);
    if (o->peak_density != c->rho[o->peak_id])
      fail("a", "%s %lld: PeakDensity %.17g, the peak cell has %.17g", what, (long long)k, o->peak_density,
           c->rho[o->peak_id]);
    if (o->n_cells != s->n_cells)
      fail("a", "%s %lld: NumberOfCells %lld, %lld cells carry its id", what, (long long)k, (long long)o->n_cells,
           (long long)s->n_cells);
    /* sums: no inf, no NaN, within 1e-12 of long double sums (which hold every double) */
    if (!close_to(o->mass, s->mass))
      fail("a", "%s %lld: Mass %.17g, the cells sum to %.17Lg", what, (long long)k, o->mass, s->mass);
    if (!close_to(o->volume, (long double)s->n_cells * cell_volume))
      fail("a", "%s %lld: Volume %.17g, expected %.17Lg", what, (long long)k, o->volume,
           (long double)s->n_cells * cell_volume);
    const long double mean = s->mass / ((long double)s->n_cells * cell_volume);
    if (!close_to(o->mean_density, mean))
      fail("a", "%s %lld: MeanDensity %.17g, expected %.17Lg", what, (long long)k, o->mean_density, mean);
    if (o->min_density != s->min_density)
      fail("a", "%s %lld: MinDensity %.17g, expected %.17g", what, (long long)k, o->min_density, s->min_density);
    /* the exact mass is above the threshold; its rounding to double may equal it */
    if (!(o->mass >= p->mass_threshold) || !(s->mass > p->mass_threshold || o->mass > p->mass_threshold))
      fail("a", "%s %lld: Mass %.17g is not above the mass threshold", what, (long long)k, o->mass);
    if (!(o->key_saddle_density >= p->density_threshold) || !(o->key_saddle_density <= o->peak_density))
      fail("a", "%s %lld: KeySaddleDensity %.17g outside [threshold, PeakDensity %.17g]", what, (long long)k,
           o->key_saddle_density, o->peak_density);
    if (memcmp(&(double){o->peak_density / o->key_saddle_density}, &o->relevance, sizeof(double)) != 0)
      fail("a", "%s %lld: Relevance %.17g is not PeakDensity / KeySaddleDensity", what, (long long)k, o->relevance);
    int64_t x[3];
    coords(c, o->peak_id, x);
    for (int d = 0; d < 3; ++d) {
      const long double h = c->spacing[d], o0 = c->origin[d];
      const long double centre = o0 + ((long double)x[d] + 0.5L) * h;
      const long double scale_d = fabsl(o0) + ((long double)c->n[d] + 1.0L) * h;
      if (!isfinite(o->peak_position[d]) || fabsl(o->peak_position[d] - centre) > 1e-12L * scale_d + 0x1p-1073L)
        fail("a", "%s %lld: PeakPosition[%d] %.17g, the peak cell's centre is %.17Lg", what, (long long)k, d,
             o->peak_position[d], centre);
      /* centre of mass: between the cell centres of a non-periodic axis, inside the box of a
       * periodic one */
      const long double lo = c->periodic[d] ? o0 : o0 + ((long double)s->lo[d] + 0.5L) * h;
      const long double hi = c->periodic[d] ? o0 + (long double)c->n[d] * h : o0 + ((long double)s->hi[d] + 0.5L) * h;
      const long double slack = 1e-9L * scale_d + 0x1p-1073L;
      if (!isfinite(o->center_of_mass[d]) || o->center_of_mass[d] < lo - slack || o->center_of_mass[d] > hi + slack)
        fail("a", "%s %lld: CenterOfMass[%d] %.17g outside [%.17Lg, %.17Lg]", what, (long long)k, d,
             o->center_of_mass[d], lo, hi);
    }
    if (clumps) {
      if (o->n_clumps != 1)
        fail("a", "clump %lld: NumberOfClumps %lld", (long long)k, (long long)o->n_clumps);
      if (o->halo_id < -1 || o->halo_id >= r->res.n_haloes)
        fail("a", "clump %lld: HaloId %lld", (long long)k, (long long)o->halo_id);
      /* Level 0: it heads its halo (no parent); a parent means a merger at a level > 0. A clump
       * that merged into a clump below the mass threshold has a Level > 0 and ParentId -1. */
      if (o->level < 0 || (o->level == 0 && o->parent_id != -1) || (o->parent_id >= 0 && o->level == 0) ||
          (!p->saddle_merging && o->level != 0))
        fail("a", "clump %lld: Level %d with ParentId %lld", (long long)k, (int)o->level, (long long)o->parent_id);
      if (o->parent_id >= 0) {
        if (o->parent_id >= n_rows ||
            !(rows[o->parent_id].peak_density > o->peak_density ||
              (rows[o->parent_id].peak_density == o->peak_density && rows[o->parent_id].peak_id < o->peak_id)))
          fail("a", "clump %lld merged into clump %lld, which is not higher", (long long)k, (long long)o->parent_id);
        if (rows[o->parent_id].halo_id != o->halo_id)
          fail("a", "clump %lld and its parent are in different haloes", (long long)k);
      }
    } else {
      if (o->halo_id != k || o->n_clumps < 1 || o->level < 0 || o->parent_id != -1)
        fail("a", "halo %lld: HaloId %lld NumberOfClumps %lld Level %d ParentId %lld", (long long)k,
             (long long)o->halo_id, (long long)o->n_clumps, (int)o->level, (long long)o->parent_id);
    }
  }
  free(t);
}

static void check_dendrogram(const fuzz_case *c, const run *r)
{
  const phew_clump_result *res = &r->res;
  const int64_t nn = res->n_nodes;
  int64_t *leaf_of = xcalloc((size_t)(res->n_clumps + 1), sizeof *leaf_of);
  int64_t *root_of = xcalloc((size_t)(res->n_haloes + 1), sizeof *root_of);
  int64_t *child_cells = xcalloc((size_t)(nn + 1), sizeof *child_cells);
  long double *child_mass = xcalloc((size_t)(nn + 1), sizeof *child_mass);
  int64_t *n_children = xcalloc((size_t)(nn + 1), sizeof *n_children);
  for (int64_t k = 0; k < res->n_clumps; ++k)
    leaf_of[k] = -1;
  for (int64_t k = 0; k < res->n_haloes; ++k)
    root_of[k] = -1;
  int64_t roots = 0;
  for (int64_t i = 0; i < nn; ++i) {
    const phew_node *x = &res->nodes[i];
    if (x->id != i || x->halo_id < 0 || x->halo_id >= res->n_haloes || x->level < 0 || x->peak_id < 0 ||
        x->peak_id >= c->n_cells)
      fail("a", "node %lld: id %lld HaloId %lld Level %d PeakId %lld", (long long)i, (long long)x->id,
           (long long)x->halo_id, (int)x->level, (long long)x->peak_id);
    if (x->peak_density != c->rho[x->peak_id] || !(x->saddle_density <= x->peak_density) ||
        !isfinite(x->saddle_density))
      fail("a", "node %lld: PeakDensity %.17g SaddleDensity %.17g", (long long)i, x->peak_density, x->saddle_density);
    if (!isfinite(x->mass) || !(x->mass >= 0.0) || x->n_cells < 1)
      fail("a", "node %lld: Mass %.17g NumberOfCells %lld", (long long)i, x->mass, (long long)x->n_cells);
    if (x->level == 0) {
      if (x->clump_id < -1 || x->clump_id >= res->n_clumps)
        fail("a", "leaf %lld: ClumpId %lld", (long long)i, (long long)x->clump_id);
      if (x->clump_id >= 0) {
        const phew_object *k = &res->clumps[x->clump_id];
        if (leaf_of[x->clump_id] != -1)
          fail("a", "two leaves for clump %lld", (long long)x->clump_id);
        leaf_of[x->clump_id] = i;
        if (x->peak_id != k->peak_id || x->n_cells != k->n_cells || x->halo_id != k->halo_id ||
            !close_to(x->mass, k->mass))
          fail("a", "leaf %lld (Mass %.17g, %lld cells) differs from clump %lld (Mass %.17g, %lld cells)", (long long)i,
               x->mass, (long long)x->n_cells, (long long)x->clump_id, k->mass, (long long)k->n_cells);
      }
    } else if (x->clump_id != -1) {
      fail("a", "node %lld of level %d has ClumpId %lld", (long long)i, (int)x->level, (long long)x->clump_id);
    }
    if (x->parent_id < 0) {
      const phew_object *h = &res->haloes[x->halo_id];
      ++roots;
      if (root_of[x->halo_id] != -1)
        fail("a", "two roots for halo %lld", (long long)x->halo_id);
      root_of[x->halo_id] = i;
      if (x->peak_id != h->peak_id || x->n_cells != h->n_cells || !close_to(x->mass, h->mass) || x->level != h->level ||
          x->saddle_density != h->key_saddle_density)
        fail("a", "root %lld (Mass %.17g) differs from halo %lld (Mass %.17g)", (long long)i, x->mass,
             (long long)x->halo_id, h->mass);
    } else {
      if (x->parent_id >= nn)
        fail("a", "node %lld: ParentId %lld", (long long)i, (long long)x->parent_id);
      const phew_node *up = &res->nodes[x->parent_id];
      if (up->level <= x->level || up->halo_id != x->halo_id ||
          !(up->peak_density > x->peak_density || (up->peak_density == x->peak_density && up->peak_id <= x->peak_id)))
        fail("a", "node %lld and its parent %lld break the hierarchy", (long long)i, (long long)x->parent_id);
      child_cells[x->parent_id] += x->n_cells;
      child_mass[x->parent_id] += x->mass;
      n_children[x->parent_id]++;
    }
  }
  if (roots != res->n_haloes)
    fail("a", "%lld dendrogram roots for %lld haloes", (long long)roots, (long long)res->n_haloes);
  for (int64_t i = 0; i < nn; ++i)
    if (res->nodes[i].level > 0 &&
        (n_children[i] < 2 || res->nodes[i].n_cells != child_cells[i] || !close_to(res->nodes[i].mass, child_mass[i])))
      fail("a", "node %lld (Mass %.17g, %lld cells) is not the sum of its %lld children (Mass %.17Lg, %lld cells)",
           (long long)i, res->nodes[i].mass, (long long)res->nodes[i].n_cells, (long long)n_children[i], child_mass[i],
           (long long)child_cells[i]);
  for (int64_t k = 0; k < res->n_clumps; ++k)
    if (res->clumps[k].halo_id >= 0 && leaf_of[k] < 0)
      fail("a", "clump %lld has no leaf", (long long)k);
  free(leaf_of);
  free(root_of);
  free(child_cells);
  free(child_mass);
  free(n_children);
}

static void check_invariants(const fuzz_case *c, const run *r)
{
  const phew_clump_result *res = &r->res;
  const int valid = input_is_valid(c);
  if (r->status != PHEW_OK) {
    if (valid && input_is_tame(c))
      fail("a", "a tame input failed: %s (%s)", phew_status_string(r->status), r->context.message);
    if (r->context.message[0] == '\0')
      fail("a", "status %d without a message", (int)r->status);
    if (strlen(r->context.message) >= sizeof r->context.message)
      fail("a", "the message is not terminated");
    for (int64_t i = 0; i < c->n_cells; ++i)
      if (r->patch[i] != -1 || r->clump[i] != -1 || r->halo[i] != -1)
        fail("a", "after an error cell %lld has labels %lld %lld %lld", (long long)i, (long long)r->patch[i],
             (long long)r->clump[i], (long long)r->halo[i]);
    if (res->n_clumps || res->n_haloes || res->n_nodes || res->clumps || res->haloes || res->nodes)
      fail("a", "after an error the result still holds tables");
    return;
  }
  if (!valid)
    fail("a", "bad input accepted (a NaN, infinite or negative density, or a parameter out of range)");
  if (r->context.message[0] != '\0')
    fail("a", "success with a message: %s", r->context.message);
  const double thr = c->params.density_threshold;
  int64_t n_test = 0, n_peaks = 0;
  for (int64_t i = 0; i < c->n_cells; ++i) {
    const int test = c->rho[i] > thr;
    if (!test) {
      if (r->patch[i] != -1 || r->clump[i] != -1 || r->halo[i] != -1)
        fail("a", "cell %lld at or below the threshold has labels %lld %lld %lld", (long long)i, (long long)r->patch[i],
             (long long)r->clump[i], (long long)r->halo[i]);
      continue;
    }
    ++n_test;
    /* watershed: a peak labels itself; any other test cell has its highest neighbour's patch */
    const int64_t up = highest_around(c, i), pk = r->patch[i];
    if (up == i) {
      ++n_peaks;
      if (pk != i)
        fail("a", "peak cell %lld has PeakPatchId %lld", (long long)i, (long long)pk);
    } else if (pk < 0 || pk >= c->n_cells || pk != r->patch[up]) {
      fail("a", "cell %lld has PeakPatchId %lld, its highest neighbour %lld has %lld", (long long)i, (long long)pk,
           (long long)up, (long long)r->patch[up]);
    }
    if (higher(c, i, pk) || !(c->rho[pk] > thr) || r->patch[pk] != pk)
      fail("a", "cell %lld climbs to %lld, which is not a peak above it", (long long)i, (long long)pk);
    if ((r->clump[i] >= 0 || r->halo[i] >= 0) && r->patch[i] < 0)
      fail("a", "cell %lld has a ClumpId or HaloId but no PeakPatchId", (long long)i);
  }
  for (int64_t i = 0; i < c->n_cells; ++i) {
    if (r->clump[i] >= 0 && r->clump[i] < res->n_clumps && res->clumps[r->clump[i]].halo_id != r->halo[i])
      fail("a", "cell %lld: ClumpId %lld in halo %lld, HaloId %lld", (long long)i, (long long)r->clump[i],
           (long long)res->clumps[r->clump[i]].halo_id, (long long)r->halo[i]);
    /* a peak patch is never split */
    const int64_t pk = r->patch[i];
    if (pk >= 0 && (r->clump[i] != r->clump[pk] || r->halo[i] != r->halo[pk]))
      fail("a", "patch %lld is split: cell %lld has %lld/%lld, the peak %lld/%lld", (long long)pk, (long long)i,
           (long long)r->clump[i], (long long)r->halo[i], (long long)r->clump[pk], (long long)r->halo[pk]);
  }
  const phew_stats *st = &res->stats;
  if (st->n_cells != c->n_cells || st->n_test_cells != n_test || st->n_peaks != n_peaks)
    fail("a", "stats: %lld cells, %lld test cells, %lld peaks; expected %lld, %lld, %lld", (long long)st->n_cells,
         (long long)st->n_test_cells, (long long)st->n_peaks, (long long)c->n_cells, (long long)n_test,
         (long long)n_peaks);
  if (st->n_clumps_found < res->n_clumps || st->n_haloes_found < res->n_haloes ||
      st->n_haloes_found > st->n_clumps_found || st->n_clumps_found + st->n_noise_discarded > st->n_peaks ||
      (!c->params.saddle_merging && st->n_haloes_found != st->n_clumps_found))
    fail("a", "stats: %lld clumps and %lld haloes found, %lld discarded, %lld listed and %lld listed",
         (long long)st->n_clumps_found, (long long)st->n_haloes_found, (long long)st->n_noise_discarded,
         (long long)res->n_clumps, (long long)res->n_haloes);
  /* Every structure has a positive true mass (densities above a threshold >= 0, positive
   * volumes), so with a mass threshold <= 0 nothing may be left out of the catalogues: a mass
   * that underflows to 0 does not fit in a double and must be an error, not a dropped clump. */
  const double mt = c->params.mass_threshold;
  if (mt <= 0.0 && (res->n_clumps != st->n_clumps_found || res->n_haloes != st->n_haloes_found))
    fail("a", "%lld of %lld clumps and %lld of %lld haloes listed, but none is below the mass threshold %.17g",
         (long long)res->n_clumps, (long long)st->n_clumps_found, (long long)res->n_haloes,
         (long long)st->n_haloes_found, mt);
  check_rows(c, r, res->clumps, res->n_clumps, r->clump, 1);
  check_rows(c, r, res->haloes, res->n_haloes, r->halo, 0);
  for (int64_t h = 0; h < res->n_haloes; ++h) {
    int64_t listed = 0;
    for (int64_t k = 0; k < res->n_clumps; ++k)
      listed += res->clumps[k].halo_id == h;
    if (res->haloes[h].n_clumps < listed)
      fail("a", "halo %lld: NumberOfClumps %lld, %lld clumps listed in it", (long long)h,
           (long long)res->haloes[h].n_clumps, (long long)listed);
  }
  check_dendrogram(c, r);
}

/* ---- oracles (b) and (d): identical bits -------------------------------------------------- */
static int same_double(double a, double b) { return memcmp(&a, &b, sizeof a) == 0; }

static int same_object(const phew_object *a, const phew_object *b)
{
  int same = a->id == b->id && a->halo_id == b->halo_id && a->parent_id == b->parent_id && a->level == b->level &&
             a->peak_id == b->peak_id && a->n_cells == b->n_cells && a->n_clumps == b->n_clumps &&
             same_double(a->volume, b->volume) && same_double(a->mass, b->mass) &&
             same_double(a->peak_density, b->peak_density) && same_double(a->min_density, b->min_density) &&
             same_double(a->mean_density, b->mean_density) &&
             same_double(a->key_saddle_density, b->key_saddle_density) && same_double(a->relevance, b->relevance);
  for (int d = 0; d < 3; ++d)
    same = same && same_double(a->peak_position[d], b->peak_position[d]) &&
           same_double(a->center_of_mass[d], b->center_of_mass[d]);
  return same;
}

static int same_node(const phew_node *a, const phew_node *b)
{
  return a->id == b->id && a->parent_id == b->parent_id && a->level == b->level && a->clump_id == b->clump_id &&
         a->halo_id == b->halo_id && a->peak_id == b->peak_id && same_double(a->peak_density, b->peak_density) &&
         same_double(a->saddle_density, b->saddle_density) && a->n_cells == b->n_cells && same_double(a->mass, b->mass);
}

static int same_counts(const phew_stats *a, const phew_stats *b)
{
  return a->n_cells == b->n_cells && a->n_test_cells == b->n_test_cells && a->n_peaks == b->n_peaks &&
         a->n_saddle_pairs == b->n_saddle_pairs && a->n_noise_discarded == b->n_noise_discarded &&
         a->n_clumps_found == b->n_clumps_found && a->n_haloes_found == b->n_haloes_found &&
         a->noise_levels == b->noise_levels && a->saddle_levels == b->saddle_levels;
}

static void expect_identical(const char *oracle, const fuzz_case *c, const run *a, const run *b, int same_message)
{
  if (a->status != b->status)
    fail(oracle, "status %d (%s) vs %d (%s)", (int)a->status, a->context.message, (int)b->status, b->context.message);
  if (same_message && strcmp(a->context.message, b->context.message) != 0)
    fail(oracle, "message \"%s\" vs \"%s\"", a->context.message, b->context.message);
  for (int64_t i = 0; i < c->n_cells; ++i)
    if (a->patch[i] != b->patch[i] || a->clump[i] != b->clump[i] || a->halo[i] != b->halo[i])
      fail(oracle, "cell %lld: labels %lld %lld %lld vs %lld %lld %lld", (long long)i, (long long)a->patch[i],
           (long long)a->clump[i], (long long)a->halo[i], (long long)b->patch[i], (long long)b->clump[i],
           (long long)b->halo[i]);
  const phew_clump_result *x = &a->res, *y = &b->res;
  if (x->n_clumps != y->n_clumps || x->n_haloes != y->n_haloes || x->n_nodes != y->n_nodes)
    fail(oracle, "%lld/%lld/%lld clumps/haloes/nodes vs %lld/%lld/%lld", (long long)x->n_clumps, (long long)x->n_haloes,
         (long long)x->n_nodes, (long long)y->n_clumps, (long long)y->n_haloes, (long long)y->n_nodes);
  for (int64_t k = 0; k < x->n_clumps; ++k)
    if (!same_object(&x->clumps[k], &y->clumps[k]))
      fail(oracle, "clump %lld differs (Mass %.17g vs %.17g)", (long long)k, x->clumps[k].mass, y->clumps[k].mass);
  for (int64_t k = 0; k < x->n_haloes; ++k)
    if (!same_object(&x->haloes[k], &y->haloes[k]))
      fail(oracle, "halo %lld differs (Mass %.17g vs %.17g)", (long long)k, x->haloes[k].mass, y->haloes[k].mass);
  for (int64_t k = 0; k < x->n_nodes; ++k)
    if (!same_node(&x->nodes[k], &y->nodes[k]))
      fail(oracle, "node %lld differs", (long long)k);
  if (a->status == PHEW_OK && !same_counts(&x->stats, &y->stats))
    fail(oracle, "the counts in the stats differ");
}

/* ---- oracle (c): periodic shift ------------------------------------------------------------ */
static int64_t shifted(const fuzz_case *c, int64_t id)
{
  int64_t x[3];
  coords(c, id, x);
  for (int d = 0; d < 3; ++d)
    x[d] = (x[d] + c->shift[d]) % c->n[d];
  return x[0] + c->n[0] * (x[1] + c->n[1] * x[2]);
}

static int compare_doubles(const void *a, const void *b)
{
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The test cells (and every value, for an error) have distinct densities. */
static int distinct_test_densities(const fuzz_case *c)
{
  double *v = xcalloc((size_t)c->n_cells, sizeof *v);
  int64_t m = 0;
  for (int64_t i = 0; i < c->n_cells; ++i) {
    if (isnan(c->rho[i])) /* NaN: the run fails whatever the order */
      continue;
    if (!isfinite(c->params.density_threshold) || c->rho[i] > c->params.density_threshold)
      v[m++] = c->rho[i];
  }
  qsort(v, (size_t)m, sizeof *v, compare_doubles);
  int distinct = 1;
  for (int64_t i = 1; i < m && distinct; ++i)
    distinct = v[i] != v[i - 1];
  free(v);
  return distinct;
}

static void check_object_shifted(const fuzz_case *c, const char *what, int64_t k, const phew_object *a,
                                 const phew_object *b, const truth *t)
{
  if (a->id != b->id || a->halo_id != b->halo_id || a->parent_id != b->parent_id || a->level != b->level ||
      shifted(c, a->peak_id) != b->peak_id || a->n_cells != b->n_cells || a->n_clumps != b->n_clumps ||
      !same_double(a->volume, b->volume) || !same_double(a->mass, b->mass) ||
      !same_double(a->peak_density, b->peak_density) || !same_double(a->min_density, b->min_density) ||
      !same_double(a->mean_density, b->mean_density) || !same_double(a->key_saddle_density, b->key_saddle_density) ||
      !same_double(a->relevance, b->relevance))
    fail("c", "%s %lld differs after the shift (Mass %.17g vs %.17g, peak %lld vs %lld)", what, (long long)k, a->mass,
         b->mass, (long long)a->peak_id, (long long)b->peak_id);
  /* The centre of mass moves with the field, to within rounding, along the axes where the
   * object lies within a quarter of the box of its peak (beyond that the nearest image of a
   * cell, and so the centre, depends on where the box edges are). */
  for (int d = 0; d < 3; ++d) {
    if (4 * t->far[d] >= c->n[d])
      continue;
    const long double box = (long double)c->n[d] * c->spacing[d];
    long double moved = (long double)a->center_of_mass[d] + (long double)c->shift[d] * c->spacing[d];
    long double diff = fmodl(fabsl(moved - (long double)b->center_of_mass[d]), box);
    if (box - diff < diff)
      diff = box - diff;
    if (!(diff <= 1e-9L * (fabsl(c->origin[d]) + box)))
      fail("c", "%s %lld: CenterOfMass[%d] %.17g, after the shift %.17g", what, (long long)k, d, a->center_of_mass[d],
           b->center_of_mass[d]);
  }
}

static void check_shift(const fuzz_case *c, const run *a)
{
  if (!(c->periodic[0] && c->periodic[1] && c->periodic[2]) || !distinct_test_densities(c))
    return;
  fuzz_case s = *c;
  s.rho = xcalloc((size_t)c->n_cells, sizeof *s.rho);
  s.rho32 = c->f32 ? xcalloc((size_t)c->n_cells, sizeof *s.rho32) : NULL;
  for (int64_t i = 0; i < c->n_cells; ++i) {
    s.rho[shifted(c, i)] = c->rho[i];
    if (c->f32)
      s.rho32[shifted(c, i)] = c->rho32[i];
  }
  run b;
  solve(&s, 0, 0, 1, &b);
  if (a->status != b.status)
    fail("c", "status %d (%s) vs %d (%s) after the shift", (int)a->status, a->context.message, (int)b.status,
         b.context.message);
  if (a->status == PHEW_OK) {
    for (int64_t i = 0; i < c->n_cells; ++i) {
      const int64_t j = shifted(c, i);
      const int64_t want = a->patch[i] < 0 ? -1 : shifted(c, a->patch[i]);
      if (b.patch[j] != want || b.clump[j] != a->clump[i] || b.halo[j] != a->halo[i])
        fail("c", "cell %lld: labels %lld %lld %lld, after the shift %lld %lld %lld", (long long)i,
             (long long)a->patch[i], (long long)a->clump[i], (long long)a->halo[i], (long long)b.patch[j],
             (long long)b.clump[j], (long long)b.halo[j]);
    }
    const phew_clump_result *x = &a->res, *y = &b.res;
    if (x->n_clumps != y->n_clumps || x->n_haloes != y->n_haloes || x->n_nodes != y->n_nodes ||
        !same_counts(&x->stats, &y->stats))
      fail("c", "different counts after the shift");
    const long double cell_volume = (long double)c->spacing[0] * c->spacing[1] * c->spacing[2];
    truth *t = xcalloc((size_t)(x->n_clumps + x->n_haloes + 1), sizeof *t);
    truths(c, a->clump, x->n_clumps, x->clumps, t, cell_volume);
    truths(c, a->halo, x->n_haloes, x->haloes, t + x->n_clumps, cell_volume);
    for (int64_t k = 0; k < x->n_clumps; ++k)
      check_object_shifted(c, "clump", k, &x->clumps[k], &y->clumps[k], &t[k]);
    for (int64_t k = 0; k < x->n_haloes; ++k)
      check_object_shifted(c, "halo", k, &x->haloes[k], &y->haloes[k], &t[x->n_clumps + k]);
    free(t);
    for (int64_t k = 0; k < x->n_nodes; ++k) {
      phew_node moved = x->nodes[k];
      moved.peak_id = shifted(c, moved.peak_id);
      if (!same_node(&moved, &y->nodes[k]))
        fail("c", "node %lld differs after the shift", (long long)k);
    }
  }
  run_free(&b);
  case_free(&s);
}

/* ---- automatic thresholds ---------------------------------------------------------------- */
/* After a successful run: the thresholds it reports used are the given ones, or 10 x the mean
 * density (a long double sum: within 1e-12, the core's exact sum rounds differently) and 2.5 x
 * that; the case with them in place, for the oracles that compare cells with the thresholds. */
static const fuzz_case *resolve_thresholds(const fuzz_case *c, const run *r, fuzz_case *out)
{
  const phew_params *p = &c->params;
  long double sum = 0.0L;
  for (int64_t i = 0; i < c->n_cells; ++i)
    sum += c->rho[i];
  const long double mean = sum / (long double)c->n_cells;
  if (!close_to(r->res.mean_density, mean))
    fail("a", "mean density %.17g, the cells' mean is %.17Lg", r->res.mean_density, mean);
  const double want = p->density_threshold < 0.0 ? 10.0 * r->res.mean_density : p->density_threshold;
  if (!same_double_value(r->res.density_threshold_used, want))
    fail("a", "density threshold used %.17g, expected %.17g", r->res.density_threshold_used, want);
  const double saddle = !p->saddle_merging ? NAN : p->saddle_threshold < 0.0 ? 2.5 * want : p->saddle_threshold;
  if (!same_double_value(r->res.saddle_threshold_used, saddle))
    fail("a", "saddle threshold used %.17g, expected %.17g", r->res.saddle_threshold_used, saddle);
  *out = *c;
  out->params.density_threshold = r->res.density_threshold_used;
  if (p->saddle_merging)
    out->params.saddle_threshold = r->res.saddle_threshold_used;
  return out;
}

/* ---- entry point -------------------------------------------------------------------------- */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  fuzz_case c, resolved;
  decode(data, size, &c);
  current = &c;
  const int verbose = getenv("PHEW_FUZZ_VERBOSE") != NULL; /* replaying an input by hand */
  if (verbose)
    print_case(&c);
  if (getenv("PHEW_FUZZ_CANONICAL"))
    write_canonical(&c, getenv("PHEW_FUZZ_CANONICAL"));
  run a;
  solve(&c, 0, 0, 1, &a);
  if (verbose)
    print_run(&a);
  check_invariants(a.status == PHEW_OK ? resolve_thresholds(&c, &a, &resolved) : &c, &a); /* (a) */

  run b;
  solve(&c, c.seed, 0, 1, &b); /* (b) shuffled merge order */
  expect_identical("b", &c, &a, &b, 1);
  run_free(&b);

  if (c.f32) { /* (d) the same values as float64 */
    run d;
    solve(&c, 0, 1, 1, &d);
    expect_identical("d", &c, &a, &d, 0);
    run_free(&d);
  }

  if (c.seed & 1) { /* (e) on threads */
    run e;
    solve(&c, 0, 0, 3, &e);
    expect_identical("e", &c, &a, &e, 1);
    run_free(&e);
  }

  check_shift(&c, &a); /* (c) */

  run_free(&a);
  current = NULL;
  case_free(&c);
  return 0;
}
