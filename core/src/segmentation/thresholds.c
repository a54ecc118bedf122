/* The mean density of the input and the automatic thresholds made from it (phew_params).
 *
 * The mean is the total mass over the total volume of the active cells of all ranks. Both
 * sums are exact (exact_sum.h), so the mean, and the thresholds, have the same bits for any
 * number of ranks and threads, as the labels that depend on them must. */
#include "amr_mesh.h"
#include "segmentation.h"
#include "threads.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* PHEW's own parameters (paper, section 4: 80 and 200 times the mean) scaled to a threshold
 * that finds clumps in most fields: the density 10 times the mean, the saddle 200 / 80 times
 * the density threshold. */
static const double density_factor = 10.0;
static const double saddle_factor = 2.5;

static int bad_density(double rho) { return !(rho >= 0.0) || isinf(rho); }

/* Exact sums of many non-negative doubles at the speed of a plain loop (a general exact sum
 * per cell would cost a tenth of the whole clump finder): the mantissas (< 2^53) of each
 * binary exponent add as integers, which cannot overflow before 2^74 terms, and are folded
 * into an exact sum once. */
typedef struct mantissa_sums {
  exact_u128 bin[2048]; /* by biased exponent */
} mantissa_sums;

static inline void mantissa_add(mantissa_sums *m, double x)
{
  uint64_t bits;
  memcpy(&bits, &x, sizeof bits);
  const unsigned biased = (unsigned)(bits >> 52) & 0x7ffu;
  m->bin[biased] += (bits & ((UINT64_C(1) << 52) - 1)) | ((uint64_t)(biased != 0) << 52);
}

/* s += the sum times 2^weight; the bins are emptied. */
static void mantissa_fold(mantissa_sums *m, exact_sum *s, int weight)
{
  for (int b = 0; b < 2048; ++b)
    if (m->bin[b]) {
      exact_sum_add_term(s, 0, m->bin[b], (b ? b - 1075 : -1074) + weight);
      m->bin[b] = 0;
    }
}

/* float32 densities by their own exponent and 24-bit mantissa (no conversion per cell). */
static inline int mantissa_add_f32(mantissa_sums *m, float x)
{
  uint32_t bits;
  memcpy(&bits, &x, sizeof bits);
  const unsigned biased = (bits >> 23) & 0xffu;
  if (biased == 0xffu)
    return 1; /* infinite or NaN */
  if (bits >> 31)
    return (bits & 0x7fffffffu) != 0; /* negative; -0 counts as 0 */
  m->bin[biased] += (bits & 0x7fffffu) | ((uint32_t)(biased != 0) << 23);
  return 0;
}

/* s += the float32 bins' sum; the bins are emptied. */
static void mantissa_fold_f32(mantissa_sums *m, exact_sum *s)
{
  for (int b = 0; b < 256; ++b)
    if (m->bin[b]) {
      exact_sum_add_term(s, 0, m->bin[b], b ? b - 150 : -149);
      m->bin[b] = 0;
    }
}

/* Grids, one z plane per task into its thread's bins: the cell volume is a common factor, so
 * the mean is the sum of the densities over the number of cells. */
typedef struct plane_sums {
  const mesh *m;
  const field *f;
  mantissa_sums *bins; /* per thread */
  int64_t *n_bad;      /* per task */
} plane_sums;

static void sum_plane(void *context, int thread, int64_t task)
{
  const plane_sums *j = context;
  const block *b = &j->m->b;
  const int64_t z = b->lo[2] + task;
  mantissa_sums *bins = &j->bins[thread];
  int64_t bad = 0;
  for (int64_t y = b->lo[1]; y < b->hi[1]; ++y) {
    const int64_t row = b->dims[0] * (y + b->dims[1] * z);
    if (j->f->f32) {
      const float *rho = j->f->f32 + row;
      for (int64_t x = b->lo[0]; x < b->hi[0]; ++x)
        bad += mantissa_add_f32(bins, rho[x]);
      continue;
    }
    for (int64_t x = b->lo[0]; x < b->hi[0]; ++x) {
      const double rho = j->f->f64[row + x];
      if (bad_density(rho))
        ++bad;
      else
        mantissa_add(bins, rho);
    }
  }
  j->n_bad[task] = bad;
}

/* The threads' bins add as integers (the same integers for any split) and are folded once. */
static phew_status sum_block(const mesh *m, const field *f, int threads, exact_sum *mass, int64_t *n_bad)
{
  const block *b = &m->b;
  const int64_t n_tasks = b->hi[2] - b->lo[2];
  plane_sums j = {m, f, phew_calloc((size_t)threads, sizeof(mantissa_sums)),
                  phew_calloc((size_t)n_tasks + 1, sizeof(int64_t))};
  if (!j.bins || !j.n_bad) {
    free(j.bins);
    free(j.n_bad);
    return PHEW_ERROR_MEMORY;
  }
  threads_run(threads, n_tasks, sum_plane, &j);
  for (int64_t t = 0; t < n_tasks; ++t)
    *n_bad += j.n_bad[t];
  for (int t = 1; t < threads; ++t)
    for (int k = 0; k < 2048; ++k)
      j.bins[0].bin[k] += j.bins[t].bin[k];
  if (f->f32)
    mantissa_fold_f32(&j.bins[0], mass);
  else
    mantissa_fold(&j.bins[0], mass, 0);
  free(j.bins);
  free(j.n_bad);
  return PHEW_OK;
}

/* AMR leaves: volumes in finest cells, 8^(finest - level) per cell (a shift of the exponent,
 * exact); level by level, each level's blocks on the threads into their bins, added as
 * integers and folded once per level. */
typedef struct level_sums {
  const mesh *m;
  const field *f;
  int64_t *blocks;         /* own blocks of the level */
  mantissa_sums *bins;     /* per thread */
  int64_t *n_bad, *leaves; /* per task */
} level_sums;

static void sum_amr_block(void *context, int thread, int64_t task)
{
  const level_sums *j = context;
  const amr_mesh *a = j->m->amr;
  const int64_t o = j->blocks[task];
  const phew_amr_block *k = &a->desc->blocks[a->own_block[o]];
  const int64_t first = a->first_cell[a->own_block[o]], px = k->dims[0] + 2, py = k->dims[1] + 2;
  const int64_t *map = a->map + a->map_first[o];
  int64_t bad = 0, leaves = 0;
  for (int64_t z = 0; z < k->dims[2]; ++z)
    for (int64_t y = 0; y < k->dims[1]; ++y) {
      const int64_t row = first + k->dims[0] * (y + k->dims[1] * z);
      const int64_t *entry = map + 1 + px * ((y + 1) + py * (z + 1));
      for (int64_t x = 0; x < k->dims[0]; ++x) {
        if (entry[x] == AMR_REFINED)
          continue; /* covered: not a leaf */
        const double rho = field_value(j->f, row + x);
        if (bad_density(rho)) {
          ++bad;
          continue;
        }
        mantissa_add(&j->bins[thread], rho);
        ++leaves;
      }
    }
  j->n_bad[task] = bad;
  j->leaves[task] = leaves;
}

static phew_status sum_amr(const mesh *m, const field *f, int threads, exact_sum *mass, exact_sum *volume,
                           int64_t *n_bad)
{
  const amr_mesh *a = m->amr;
  const size_t n = (size_t)a->n_own_blocks + 1;
  level_sums j = {m,
                  f,
                  phew_malloc(n, sizeof(int64_t)),
                  phew_calloc((size_t)threads, sizeof(mantissa_sums)),
                  phew_malloc(n, sizeof(int64_t)),
                  phew_malloc(n, sizeof(int64_t))};
  phew_status s = j.blocks && j.bins && j.n_bad && j.leaves ? PHEW_OK : PHEW_ERROR_MEMORY;
  for (int level = 0; s == PHEW_OK && level < a->n_levels; ++level) {
    int64_t n_tasks = 0;
    for (int64_t o = 0; o < a->n_own_blocks; ++o)
      if (a->desc->blocks[a->own_block[o]].level == level)
        j.blocks[n_tasks++] = o;
    threads_run(threads, n_tasks, sum_amr_block, &j);
    int64_t leaves = 0;
    for (int64_t t = 0; t < n_tasks; ++t) {
      *n_bad += j.n_bad[t];
      leaves += j.leaves[t];
    }
    for (int t = 1; t < threads; ++t)
      for (int b = 0; b < 2048; ++b) {
        j.bins[0].bin[b] += j.bins[t].bin[b];
        j.bins[t].bin[b] = 0;
      }
    const int weight = 3 * (a->n_levels - 1 - level);
    mantissa_fold(&j.bins[0], mass, weight);
    exact_sum_add_term(volume, 0, (exact_u128)leaves, weight);
  }
  free(j.blocks);
  free(j.bins);
  free(j.n_bad);
  free(j.leaves);
  return s;
}

/* Graphs: densities times the cell volumes (1 each without volumes). */
static void sum_graph(const mesh *m, const field *f, exact_sum *mass, exact_sum *volume, int64_t *n_bad)
{
  const phew_graph *g = m->graph;
  for (int64_t i = 0; i < m->n_local; ++i) {
    if (g->ghost && g->ghost[i])
      continue;
    const double rho = field_value(f, i), v = g->volume ? g->volume[i] : 1.0;
    if (bad_density(rho)) {
      ++*n_bad;
      continue;
    }
    exact_sum_add_product(mass, rho, v);
    exact_sum_add(volume, v);
  }
}

phew_status mesh_mean_density(const mesh *m, const field *f, comm *c, int n_threads, double *mean, int64_t *n_bad)
{
  exact_sum sums[2]; /* mass, volume */
  exact_sum_clear(&sums[0]);
  exact_sum_clear(&sums[1]);
  int64_t bad = 0;
  const int threads = n_threads > 1 ? n_threads : 1;
  int failed = 0;
  if (m->kind == PHEW_MESH_STRUCTURED)
    failed = sum_block(m, f, threads, &sums[0], &bad) != PHEW_OK;
  else if (m->kind == PHEW_MESH_AMR)
    failed = sum_amr(m, f, threads, &sums[0], &sums[1], &bad) != PHEW_OK;
  else
    sum_graph(m, f, &sums[0], &sums[1], &bad);
  if (comm_max(c, failed))
    return PHEW_ERROR_MEMORY;
  *n_bad = comm_sum(c, bad);
  if (comm_sum_exact(c, sums, 2) != PHEW_OK)
    return PHEW_ERROR_MEMORY;
  const wide_float volume = m->kind == PHEW_MESH_STRUCTURED ? wide_from_int(comm_sum(c, m->n_active - bad))
                                                            : exact_sum_value(&sums[1]);
  /* a mean of densities lies between them: no overflow; no cells at all give 0 */
  *mean = wide_ratio(exact_sum_value(&sums[0]), volume);
  return PHEW_OK;
}

phew_status particles_mean_density(const comm *c, int64_t n, const double *mass, const double *rho, double box_volume,
                                   double unit, double *mean)
{
  exact_sum sums[2]; /* mass, volume */
  exact_sum_clear(&sums[0]);
  exact_sum_clear(&sums[1]);
  int64_t empty = 0; /* particles of density 0: an infinite volume */
  for (int64_t i = 0; i < n; ++i) {
    const double m = mass ? mass[i] : 1.0;
    exact_sum_add(&sums[0], m);
    if (box_volume > 0.0 || bad_density(rho[i])) /* bad ones: the watershed reports them */
      continue;
    if (rho[i] == 0.0)
      ++empty;
    else
      exact_sum_add(&sums[1], m / rho[i]);
  }
  empty = comm_sum(c, empty);
  if (comm_sum_exact(c, sums, 2) != PHEW_OK)
    return PHEW_ERROR_MEMORY;
  if (box_volume > 0.0) {
    /* as the density estimate's unit is computed, so that estimated densities have mean 1 */
    double total = 0.0;
    if (wide_to_double(exact_sum_value(&sums[0]), &total) != WIDE_FITS)
      total = INFINITY; /* beyond the range: the particle checks refuse it before */
    *mean = total / box_volume / unit;
  } else {
    *mean = empty > 0 ? 0.0 : wide_ratio(exact_sum_value(&sums[0]), exact_sum_value(&sums[1])) / unit;
  }
  return PHEW_OK;
}

phew_status params_resolve(const phew_params *given, double mean_density, phew_params *used, call_result *result)
{
  *used = *given;
  if (given->density_threshold < 0.0) {
    used->density_threshold = density_factor * mean_density;
    if (!isfinite(used->density_threshold))
      return phew_fail(result, PHEW_ERROR_DATA,
                       "the automatic density threshold, %g x the mean density %g, is beyond the double range: "
                       "give the threshold, or rescale the density",
                       density_factor, mean_density);
  }
  if (given->saddle_merging && given->saddle_threshold < 0.0) {
    used->saddle_threshold = saddle_factor * used->density_threshold;
    if (!isfinite(used->saddle_threshold))
      return phew_fail(result, PHEW_ERROR_DATA,
                       "the automatic saddle threshold, %g x the density threshold %g, is beyond the double range: "
                       "give the saddle threshold, or rescale the density",
                       saddle_factor, used->density_threshold);
  }
  return PHEW_OK;
}
