/* The SPH density of HOP (neighbours.h), symmetrised and summed exactly.
 *
 *   rho_i = 1/2 sum_j m_j W(r_ij, h_i) + 1/2 sum_j m_j W(r_ij, h_j)
 *
 * Every nonzero term has r_ij < 2 h_i (first sum) or r_ij < 2 h_j (second): it belongs to the
 * ball of i or to the ball of j. So each tree particle scans its own ball once and, for each
 * particle j in it, computes w = W(r_ij, h_i) once: m_j w goes to i's sum ("gather") and m_i w
 * to j's ("scatter"). Particles of the tree that are not queries (a rank's padding) scan too,
 * for the terms they give the queries.
 *
 * Exactness. Each query's sum is a 128-bit fixed-point number whose scale is set before any
 * term arrives, from the query alone: every term is below T_i = 8 m_max / (pi h_i^3) (m_max
 * bounds every mass; a term of j's ball reaching i has h_j > h_i / 2, as i's ball of radius
 * r_ij + 2 h_j holds j's), so T_i sits 24 bits below the top and each term is cut to the grid
 * 2^-103 T_i below it. Integer addition being associative, the sum depends on the set of terms
 * only: not on the order of the scans, the tree, the storage order, the threads, or the rank
 * that computed a term. It is rounded once (then halved, exactly). What the grid drops is below
 * 2^-100 of T_i per term.
 *
 * Threads. The tree's leaves are cut into a few ranges per thread, one task each. A task adds
 * directly to the sums of its own range's particles, which no other task touches; what it
 * gives particles of other ranges (balls crossing the cut) goes into the task's own small hash
 * table, added to the sums once every task is done. No locks, no atomic operations. */
#include "kd_tree.h"
#include "id_map.h"
#include "threads.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

enum {
  DENSITY_TASKS_PER_THREAD = 16,
  DENSITY_GRID_BITS = 103 /* T_i times 4 at bit 103: room for 2^24 terms of the largest size */
};

/* slack on (2h)^2 that covers the rounding of sqrt, r / h and the squares */
#define SUPPORT_SLACK (1.0 + 1e-12)

/* The kernel's shape w(q) = pi h^3 W, without branches (both pieces, then selected). */
static inline double kernel_shape(double q)
{
  const double inner = (1.0 - 1.5 * (q * q)) + 0.75 * (q * q * q);
  const double u = 2.0 - q;
  const double outer = 0.25 * (u * u * u);
  return q < 1.0 ? inner : (q < 2.0 ? outer : 0.0); /* 0 also when h is 0 (q infinite or NaN) */
}

/* The one formula of the kernel, used for every pair. */
static inline double kernel(double r, double h) { return kernel_shape(r / h) / (M_PI * (h * h * h)); }

double sph_kernel(double r, double h) { return kernel(r, h); }

/* w[a] = W(sqrt(d2[a]), h): the kernels of a ball, in one loop that vectorises. */
PHEW_VECTOR_CLONES
static void ball_kernels(int n, const double *restrict d2, double h, double *restrict w)
{
  for (int a = 0; a < n; ++a)
    w[a] = kernel(sqrt(d2[a]), h);
}

/* ---- the fixed-point sums ---------------------------------------------------------------- */

/* The exponent of the grid of a query's sum: T = 8 m_max / (pi h^3) < 2^(ilogb(T) + 1) (m_max
 * > 0, h > 0). GRID_NONE if T leaves the double range (the density would too). */
#define GRID_NONE INT16_MIN
static int16_t grid_base(double h, double mass_max)
{
  const double top = 8.0 * mass_max / (M_PI * (h * h * h));
  if (!(top > 0 && isfinite(top)))
    return GRID_NONE;
  return (int16_t)(ilogb(top) + 2 - DENSITY_GRID_BITS);
}

/* The term x >= 0 on the grid 2^base, cut (every term the same way). */
static inline exact_u128 on_grid(double x, int64_t base)
{
  int64_t e;
  int negative;
  const uint64_t mantissa = exact_split(x, &e, &negative);
  const int64_t shift = e - base;
  if (shift >= 0)
    return (exact_u128)mantissa << shift;
  return shift > -64 ? (exact_u128)(mantissa >> -shift) : 0;
}

/* sum[0..1] (low, high words) += v. */
static inline void sum_add(uint64_t *sum, exact_u128 v)
{
  const uint64_t old = sum[0];
  sum[0] = old + (uint64_t)v;
  sum[1] += (uint64_t)(v >> 64) + (sum[0] < old);
}

/* A task's sums for particles outside its range, by tree slot: the slots in the order met,
 * their sums (two words each) and a map from slot to place. */
typedef struct foreign_sums {
  id_map place;  /* slot -> k */
  int32_t *slot; /* slot of sum k */
  uint64_t *sum; /* two words each */
  int64_t n, capacity;
} foreign_sums;

static void foreign_free(foreign_sums *f)
{
  id_map_free(&f->place);
  free(f->slot);
  free(f->sum);
  memset(f, 0, sizeof *f);
}

/* The table's sum of slot s (made if new); NULL if memory ran out. */
static uint64_t *foreign_sum(foreign_sums *f, int32_t s)
{
  const int64_t k = f->place.slots ? id_map_find(&f->place, s) : -1;
  if (k >= 0)
    return &f->sum[2 * k];
  if (!f->place.slots && id_map_init(&f->place, 512) != 0)
    return NULL;
  if (f->n == f->capacity) {
    const int64_t capacity = f->capacity ? 2 * f->capacity : 512;
    if (phew_grow(&f->slot, (size_t)capacity, sizeof *f->slot) != 0 ||
        phew_grow(&f->sum, (size_t)(2 * capacity), sizeof *f->sum) != 0)
      return NULL;
    f->capacity = capacity;
  }
  int64_t existing;
  if (id_map_insert(&f->place, s, f->n, &existing) != 0)
    return NULL;
  f->slot[f->n] = s;
  f->sum[2 * f->n] = f->sum[2 * f->n + 1] = 0;
  return &f->sum[2 * f->n++];
}

/* The sum acc 2^base, rounded to 64 bits (to nearest, ties to even). */
static wide_float sum_value(exact_u128 acc, int64_t base)
{
  wide_float out = {0, 0, 0};
  if (acc == 0)
    return out;
  const uint64_t hi = (uint64_t)(acc >> 64);
  const int lead = hi ? 64 + 63 - __builtin_clzll(hi) : 63 - __builtin_clzll((uint64_t)acc);
  if (lead <= 63) {
    out.mantissa = (uint64_t)acc << (63 - lead);
    out.exponent = base - (63 - lead);
    return out;
  }
  const int drop = lead - 63; /* 1 .. 64 */
  uint64_t kept = (uint64_t)(acc >> drop);
  const exact_u128 rest = acc & (((exact_u128)1 << drop) - 1), half = (exact_u128)1 << (drop - 1);
  int64_t exponent = base + drop;
  if (rest > half || (rest == half && (kept & 1))) {
    if (++kept == 0) {
      kept = UINT64_C(1) << 63;
      ++exponent;
    }
  }
  out.mantissa = kept;
  out.exponent = exponent;
  return out;
}

/* ---- the scans ----------------------------------------------------------------------------- */

typedef struct density_job {
  const kd_tree *t;
  const double *slot_h;     /* h by tree slot */
  const double *slot_mass;  /* mass by tree slot, or NULL (1) */
  const int16_t *slot_base; /* by tree slot: the grid of its sum, or GRID_NONE if no query's */
  uint64_t *sum;            /* by tree slot: two words */
  int64_t leaves_per_task;
  foreign_sums *foreign;      /* per task */
  kd_candidates *candidates;  /* per thread */
  double **d2, **w;           /* per thread: a ball's distances and kernels */
  int32_t **ball;             /* and its tree slots */
  int *capacity;              /* of those three */
  int *no_memory;             /* per task */
  const density_lists *lists; /* or NULL */
  const int32_t *slot_of;     /* with lists: caller's index -> tree slot */
} density_job;

/* Room for n entries in a thread's ball; 0 if memory ran out. */
static int reserve_ball(const density_job *job, int thread, int n)
{
  if (n <= job->capacity[thread])
    return 1;
  const size_t capacity = 2 * (size_t)n;
  if (phew_grow(&job->d2[thread], capacity, sizeof **job->d2) ||
      phew_grow(&job->w[thread], capacity, sizeof **job->w) ||
      phew_grow(&job->ball[thread], capacity, sizeof **job->ball))
    return 0;
  job->capacity[thread] = (int)capacity;
  return 1;
}

/* The particles of one leaf scan their balls from one candidate list (every particle within
 * the largest of their 2h of the leaf's box). Returns 0 if memory ran out. */
static int density_leaf(const density_job *job, int thread, int64_t leaf, int64_t own_begin, int64_t own_end,
                        foreign_sums *foreign)
{
  const kd_tree *t = job->t;
  kd_candidates *c = &job->candidates[thread];
  const kd_node *box = &t->node[kd_first_leaf(t) + leaf];
  int64_t begin, end;
  kd_node_range(t, kd_first_leaf(t) + leaf, t->depth, &begin, &end);
  const density_lists *lists = job->lists;
  double h_leaf = 0; /* of the particles that scan */
  for (int64_t s = begin; s < end; ++s)
    if (!lists || t->index[s] >= lists->n)
      h_leaf = job->slot_h[s] > h_leaf ? job->slot_h[s] : h_leaf;
  if (h_leaf > 0 && !kd_tree_gather(t, box->lo, box->hi, (2.0 * h_leaf) * (2.0 * h_leaf) * SUPPORT_SLACK, c))
    return 0;
  if (!reserve_ball(job, thread, h_leaf > 0 ? kd_candidates_size(c) : 0) ||
      (lists && !reserve_ball(job, thread, lists->n_keep + 1)))
    return 0;
  double *restrict d2 = job->d2[thread], *restrict w = job->w[thread];
  int32_t *restrict ball = job->ball[thread];
  for (int64_t s = begin; s < end; ++s) {
    const double h = job->slot_h[s];
    if (h == 0) /* not a query (those were checked): it reaches no one */
      continue;
    double x[3];
    kd_position(t, s, x);
    const int32_t i = t->index[s];
    int n;
    if (lists && i < lists->n) { /* its ball from its list: itself and its nearest */
      const int32_t *list = &lists->nearest[(size_t)i * (size_t)lists->n_keep];
      d2[0] = 0.0;
      ball[0] = (int32_t)s;
      for (int k = 0; k < lists->n_keep; ++k) {
        const int32_t j = job->slot_of[list[k]];
        double y[3];
        kd_position(t, j, y);
        d2[k + 1] = particle_distance2(&t->box, x, y);
        ball[k + 1] = j;
      }
      n = lists->n_keep + 1;
    } else {
      n = kd_candidates_scan(t, c, x, (2.0 * h) * (2.0 * h) * SUPPORT_SLACK, d2, ball);
    }
    ball_kernels(n, d2, h, w);
    const double m_s = job->slot_mass ? job->slot_mass[s] : 1.0;
    const int16_t base = job->slot_base[s];
    exact_u128 gathered = 0;
    for (int a = 0; a < n; ++a) {
      if (w[a] == 0.0)
        continue;
      const int32_t j = ball[a];
      const double m_j = job->slot_mass ? job->slot_mass[j] : 1.0;
      if (base != GRID_NONE)
        gathered += on_grid(m_j * w[a], base);
      if (job->slot_base[j] == GRID_NONE)
        continue;
      uint64_t *to = j >= own_begin && j < own_end ? &job->sum[2 * (int64_t)j] : foreign_sum(foreign, j);
      if (!to)
        return 0;
      sum_add(to, on_grid(m_s * w[a], job->slot_base[j]));
    }
    if (base != GRID_NONE)
      sum_add(&job->sum[2 * s], gathered);
  }
  return 1;
}

/* Task: the leaves of range `task`, adding to its particles' sums and its foreign table. */
static void density_task(void *context, int thread, int64_t task)
{
  const density_job *job = context;
  const kd_tree *t = job->t;
  const int64_t n_leaves = (int64_t)1 << t->depth;
  const int64_t first = task * job->leaves_per_task;
  const int64_t last = first + job->leaves_per_task < n_leaves ? first + job->leaves_per_task : n_leaves;
  job->no_memory[task] = 0;
  if (first >= last)
    return;
  int64_t own_begin, own_end, unused;
  kd_node_range(t, kd_first_leaf(t) + first, t->depth, &own_begin, &unused);
  kd_node_range(t, kd_first_leaf(t) + last - 1, t->depth, &unused, &own_end);
  for (int64_t leaf = first; leaf < last; ++leaf)
    if (!density_leaf(job, thread, leaf, own_begin, own_end, &job->foreign[task])) {
      job->no_memory[task] = 1;
      return;
    }
}

phew_status sph_density(kd_tree *tree, const double *h, const double *mass, double mass_max, int64_t n,
                        const int32_t *subset, double *rho, int n_threads, call_result *result)
{
  return sph_density_listed(tree, h, mass, mass_max, n, subset, NULL, rho, n_threads, result);
}

/* The queries and every tree particle's h and mass, checked; a query with h = 0 has more
 * than n_dens particles at its position: no density (the first such query in the caller's
 * order is named, whatever the threads). */
static phew_status check_density_inputs(const kd_tree *tree, const double *h, const double *mass, double mass_max,
                                        int64_t n, const int32_t *subset, const double *rho, call_result *result)
{
  if (!tree || (n > 0 && (!h || !rho)))
    return phew_fail(result, PHEW_ERROR_ARGUMENT, "sph_density: missing tree, h or output");
  const int64_t N = tree->n;
  if (n < 0 || (!subset && n > N))
    return phew_fail(result, PHEW_ERROR_ARGUMENT, "%lld queries for a tree of %lld particles", (long long)n,
                     (long long)N);
  for (int64_t j = 0; subset && j < n; ++j)
    if (subset[j] < 0 || subset[j] >= N)
      return phew_fail(result, PHEW_ERROR_ARGUMENT, "query %lld is particle %ld, outside the tree's 0 .. %lld",
                       (long long)j, (long)subset[j], (long long)N - 1);
  for (int64_t i = 0; i < N; ++i) { /* finite, h >= 0, mass in [0, mass_max] */
    if (!(h[i] >= 0 && isfinite(h[i])))
      return phew_fail(result, PHEW_ERROR_DATA, "SPH density: the particle with global id %lld has smoothing length %g",
                       (long long)tree->id[i], h[i]);
    const double m = mass ? mass[i] : 1.0;
    if (!(m >= 0 && m <= mass_max && isfinite(mass_max)))
      return phew_fail(result, PHEW_ERROR_DATA, "SPH density: the particle with global id %lld has mass %g (bound %g)",
                       (long long)tree->id[i], m, mass_max);
  }
  for (int64_t j = 0; j < n; ++j) {
    const int32_t i = subset ? subset[j] : (int32_t)j;
    if (h[i] == 0)
      return phew_fail(result, PHEW_ERROR_DATA,
                       "SPH density: the particle with global id %lld has smoothing length 0: more particles than "
                       "the density's neighbour count sit at its position",
                       (long long)tree->id[i]);
  }
  return PHEW_OK;
}

/* The work arrays of one density call: by tree slot, per task and per thread. */
typedef struct density_work {
  int threads;
  int64_t n_tasks;
  double *slot_h, *slot_mass;
  int16_t *slot_base;
  int32_t *query_of; /* by caller's index: the query it is (only for a subset) */
  int32_t *slot_of;  /* with lists: caller's index -> tree slot */
  uint64_t *sum;
  int *no_memory;
  foreign_sums *foreign;
  kd_candidates *candidates;
  double **d2, **w;
  int32_t **ball;
  int *capacity;
} density_work;

/* 0 if memory ran out (free what was made with density_work_free). */
static int density_work_init(density_work *d, const kd_tree *tree, int n_threads, int with_mass, int with_subset,
                             int with_lists)
{
  const int64_t N = tree->n, n_leaves = (int64_t)1 << tree->depth;
  d->threads = threads_resolve(n_threads);
  d->n_tasks = d->threads > 1 ? (int64_t)d->threads * DENSITY_TASKS_PER_THREAD : 1;
  d->n_tasks = d->n_tasks < n_leaves ? d->n_tasks : n_leaves;
  d->slot_h = phew_malloc((size_t)N, sizeof *d->slot_h);
  d->slot_mass = with_mass ? phew_malloc((size_t)N, sizeof *d->slot_mass) : NULL;
  d->slot_base = phew_malloc((size_t)N, sizeof *d->slot_base);
  d->query_of = with_subset ? phew_malloc((size_t)N, sizeof *d->query_of) : NULL;
  d->sum = phew_calloc((size_t)(2 * N), sizeof *d->sum);
  d->no_memory = phew_malloc((size_t)d->n_tasks, sizeof *d->no_memory);
  d->foreign = calloc((size_t)d->n_tasks, sizeof *d->foreign);
  d->candidates = calloc((size_t)d->threads, sizeof *d->candidates);
  d->d2 = calloc((size_t)d->threads, sizeof *d->d2);
  d->w = calloc((size_t)d->threads, sizeof *d->w);
  d->ball = calloc((size_t)d->threads, sizeof *d->ball);
  d->capacity = calloc((size_t)d->threads, sizeof *d->capacity);
  d->slot_of = with_lists ? phew_malloc((size_t)N, sizeof *d->slot_of) : NULL;
  int ok = (!with_lists || d->slot_of) && d->slot_h && (!with_mass || d->slot_mass) && d->slot_base &&
           (!with_subset || d->query_of) && d->sum && d->no_memory && d->foreign && d->candidates && d->d2 && d->w &&
           d->ball && d->capacity;
  for (int i = 0; ok && i < d->threads; ++i)
    ok = kd_candidates_init(&d->candidates[i], tree) == PHEW_OK;
  return ok;
}

static void density_work_free(density_work *d)
{
  for (int i = 0; i < d->threads; ++i) {
    if (d->candidates && d->candidates[i].stack)
      kd_candidates_free(&d->candidates[i]);
    if (d->d2)
      free(d->d2[i]);
    if (d->w)
      free(d->w[i]);
    if (d->ball)
      free(d->ball[i]);
  }
  for (int64_t task = 0; d->foreign && task < d->n_tasks; ++task)
    foreign_free(&d->foreign[task]);
  free(d->foreign);
  free(d->candidates);
  free(d->d2);
  free(d->w);
  free(d->ball);
  free(d->capacity);
  free(d->slot_of);
  free(d->no_memory);
  free(d->sum);
  free(d->query_of);
  free(d->slot_base);
  free(d->slot_mass);
  free(d->slot_h);
}

/* The query of tree slot s, or -1. */
static int64_t query_at(const kd_tree *tree, const density_work *d, int64_t n, int64_t s)
{
  const int32_t i = tree->index[s];
  return d->query_of ? d->query_of[i] : (i < n ? i : -1);
}

/* h, mass and each query's grid by tree slot; -1, or the first query (caller's order) whose
 * grid is out of range. */
static int64_t arrange_slots(const kd_tree *tree, density_work *d, const double *h, const double *mass, double mass_max,
                             int64_t n, const int32_t *subset)
{
  const int64_t N = tree->n;
  for (int64_t s = 0; d->slot_of && s < N; ++s)
    d->slot_of[tree->index[s]] = (int32_t)s;
  for (int64_t i = 0; subset && i < N; ++i)
    d->query_of[i] = -1;
  for (int64_t j = 0; subset && j < n; ++j)
    d->query_of[subset[j]] = (int32_t)j;
  const double grid_mass = mass_max > 0 ? mass_max : 1.0; /* all masses 0: every term is 0 */
  int64_t worst = -1;
  for (int64_t s = 0; s < N; ++s) {
    const int32_t i = tree->index[s];
    const int64_t j = query_at(tree, d, n, s);
    d->slot_h[s] = h[i];
    d->slot_base[s] = j >= 0 ? grid_base(h[i], grid_mass) : GRID_NONE;
    if (j >= 0 && d->slot_base[s] == GRID_NONE && (worst < 0 || j < worst))
      worst = j;
    if (mass)
      d->slot_mass[s] = mass[i];
  }
  return worst;
}

/* The sums (by slot) into the queries' places; -1, or the first query (caller's order) out of
 * range. */
static int64_t write_densities(const kd_tree *tree, const density_work *d, int64_t n, double *rho)
{
  int64_t worst = -1;
  for (int64_t s = 0; s < tree->n; ++s) {
    const int64_t j = query_at(tree, d, n, s);
    if (j < 0)
      continue;
    wide_float value = sum_value((exact_u128)d->sum[2 * s] | (exact_u128)d->sum[2 * s + 1] << 64, d->slot_base[s]);
    if (value.mantissa)
      value.exponent -= 1; /* the 1/2 of the symmetrised kernel */
    if (wide_to_double(value, &rho[j]) != WIDE_FITS && (worst < 0 || j < worst))
      worst = j;
  }
  return worst;
}

phew_status sph_density_listed(kd_tree *tree, const double *h, const double *mass, double mass_max, int64_t n,
                               const int32_t *subset, const density_lists *lists, double *rho, int n_threads,
                               call_result *result)
{
  if (!tree || (n > 0 && (!h || !rho)))
    return phew_fail(result, PHEW_ERROR_ARGUMENT, "sph_density: missing tree, h or output");
  if (n == 0)
    return PHEW_OK;
  phew_status status = check_density_inputs(tree, h, mass, mass_max, n, subset, rho, result);
  if (status != PHEW_OK)
    return status;
  density_work d;
  memset(&d, 0, sizeof d);
  int ok = density_work_init(&d, tree, n_threads, mass != NULL, subset != NULL, lists != NULL);
  int64_t worst = ok ? arrange_slots(tree, &d, h, mass, mass_max, n, subset) : -1;
  if (ok && worst < 0) {
    const int64_t n_leaves = (int64_t)1 << tree->depth;
    density_job job = {tree,        d.slot_h,     d.slot_mass,
                       d.slot_base, d.sum,        (n_leaves + d.n_tasks - 1) / d.n_tasks,
                       d.foreign,   d.candidates, d.d2,
                       d.w,         d.ball,       d.capacity,
                       d.no_memory, lists,        d.slot_of};
    threads_run(d.threads, d.n_tasks, density_task, &job);
    for (int64_t task = 0; task < d.n_tasks; ++task) {
      ok = ok && !d.no_memory[task];
      for (int64_t k = 0; ok && k < d.foreign[task].n; ++k) { /* what tasks gave other ranges */
        const uint64_t *f = &d.foreign[task].sum[2 * k];
        sum_add(&d.sum[2 * (int64_t)d.foreign[task].slot[k]], (exact_u128)f[0] | (exact_u128)f[1] << 64);
      }
    }
    if (ok)
      worst = write_densities(tree, &d, n, rho);
  }
  if (worst >= 0)
    status = phew_fail(result, PHEW_ERROR_DATA,
                       "SPH density: the density of the particle with global id %lld (mass per volume) is beyond "
                       "the range of double precision (%g to %g): rescale the particle masses or positions",
                       (long long)tree->id[subset ? subset[worst] : worst], DBL_MIN, DBL_MAX);
  else if (!ok)
    status = phew_fail(result, PHEW_ERROR_MEMORY, "SPH density of %lld particles: out of memory", (long long)n);
  density_work_free(&d);
  return status;
}
