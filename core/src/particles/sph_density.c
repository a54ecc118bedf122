/* The SPH density of HOP (neighbours.h), symmetrised and summed exactly.
 *
 * For a query i the walk visits every node that may hold a particle j with
 * r_ij < 2 max(h_i, h_j): a node is skipped only when its box lies farther than
 * 2 max(h_i, largest h in the node), with a relative slack above the rounding of the kernel's
 * own test (q = r / h < 2). Each nonzero term m_j [W(r_ij, h_i) + W(r_ij, h_j)] enters an
 * exact accumulator (exact_sum.h), so the result depends on the set of terms only: not on
 * the walk's order, the tree layout, the storage order, the threads, or on other particles
 * the tree may hold far away. The sum is rounded once (then halved, exactly). */
#include "kd_tree.h"
#include "threads.h"

#include <math.h>
#include <stdlib.h>

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

enum { DENSITY_CHUNK = 256 };

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

/* w[a] = W(r_a, h_i) + W(r_a, hj[a]) with r_a = sqrt(d2[a]): the pairs' kernels, in one loop
 * that vectorises. */
PHEW_VECTOR_CLONES
static void kernel_terms(int n, const double *restrict d2, const double *restrict hj, double h_i, double *restrict w)
{
  const double norm_i = M_PI * (h_i * h_i * h_i);
  for (int a = 0; a < n; ++a) {
    const double r = sqrt(d2[a]);
    w[a] = kernel_shape(r / h_i) / norm_i + kernel(r, hj[a]);
  }
}

/* slack on (2h)^2 that covers the rounding of sqrt, r / h and the squares */
#define SUPPORT_SLACK (1.0 + 1e-12)

typedef struct density_job {
  const kd_tree *t;
  const double *h, *mass;  /* the caller's */
  const double *slot_h;    /* h by tree slot */
  const double *slot_mass; /* mass by tree slot, or NULL */
  const double *node_h;    /* largest h of each node */
  const int32_t *query, *slot;
  int64_t n;
  double *rho;
  kd_candidates *candidates; /* per thread */
  double **term_mass, **term_kernel, **term_r2, **term_h; /* per thread: the terms of a query */
  int32_t **term_slot;
  int64_t *term_capacity;
  int64_t *failed;         /* per chunk: the first query (caller's order) whose density left the
                              double range, or -1 */
} density_job;

/* Stores the density of query k from its exact sum; records a value out of range. */
static void store(const density_job *job, int64_t chunk, int64_t k, wide_float value)
{
  const int32_t j = job->query[k];
  if (value.mantissa)
    value.exponent -= 1; /* the 1/2 of the symmetrised kernel */
  double rho;
  if (wide_to_double(value, &rho) != WIDE_FITS) {
    if (job->failed[chunk] < 0 || j < job->failed[chunk])
      job->failed[chunk] = j;
    rho = 0;
  }
  job->rho[j] = rho;
}

/* The sum of the n terms m[k] w[k] (w[k] alone without m), all >= 0, in a fixed-point window
 * whose top is set by the largest term: the bits of a term more than 64 below the largest
 * term's lowest bit are dropped, the rest add exactly (128 bits and a carry word). What is
 * dropped depends only on the set of terms, never on their order or on how they were found,
 * so the result is a function of the set: the same bits on any rank and thread. What is
 * dropped is below 2^-64 of the largest term per term, far under a double's precision. */
static wide_float window_sum(const double *m, const double *w, int64_t n)
{
  int64_t top = INT64_MIN;
  for (int64_t k = 0; k < n; ++k) {
    int64_t e;
    int negative;
    if (exact_split(m ? m[k] * w[k] : w[k], &e, &negative) && e > top)
      top = e;
  }
  wide_float out = {0, 0, 0};
  if (top == INT64_MIN)
    return out;
  const int64_t base = top - 64; /* the largest term's mantissa sits at bits [64, 117) */
  exact_u128 acc = 0;
  uint64_t carry = 0;
  for (int64_t k = 0; k < n; ++k) {
    int64_t e;
    int negative;
    const uint64_t mantissa = exact_split(m ? m[k] * w[k] : w[k], &e, &negative);
    const int64_t shift = e - base;
    const exact_u128 part = shift >= 0 ? (exact_u128)mantissa << shift
                                       : (shift > -64 ? (exact_u128)(mantissa >> -shift) : 0);
    acc += part;
    carry += acc < part;
  }
  /* the value carry 2^128 + acc, times 2^base, to 64 bits: nearest, ties to even */
  int lead; /* highest set bit of the 192-bit value */
  const uint64_t hi = (uint64_t)(acc >> 64);
  if (carry)
    lead = 128 + 63 - __builtin_clzll(carry);
  else if (hi)
    lead = 64 + 63 - __builtin_clzll(hi);
  else
    lead = 63 - __builtin_clzll((uint64_t)acc);
  if (lead <= 63) {
    out.mantissa = (uint64_t)acc << (63 - lead);
    out.exponent = base - (63 - lead);
    return out;
  }
  const int drop = lead - 63; /* 1 .. 128 */
  exact_u128 kept128, rest, half;
  if (drop < 128) {
    kept128 = (acc >> drop) | ((exact_u128)carry << (128 - drop));
    rest = acc & (((exact_u128)1 << drop) - 1);
    half = (exact_u128)1 << (drop - 1);
  } else {
    kept128 = carry;
    rest = acc;
    half = (exact_u128)1 << 127;
  }
  uint64_t kept = (uint64_t)kept128;
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

/* Room for n terms in a thread's buffers; 0 if memory ran out. */
static int reserve_terms(const density_job *job, int thread, int64_t n)
{
  if (n <= job->term_capacity[thread])
    return 1;
  const int64_t capacity = 2 * n;
  double *m = phew_realloc(job->term_mass[thread], (size_t)capacity, sizeof *m);
  if (m)
    job->term_mass[thread] = m;
  double *w = phew_realloc(job->term_kernel[thread], (size_t)capacity, sizeof *w);
  if (w)
    job->term_kernel[thread] = w;
  double *r2 = phew_realloc(job->term_r2[thread], (size_t)capacity, sizeof *r2);
  if (r2)
    job->term_r2[thread] = r2;
  double *h = phew_realloc(job->term_h[thread], (size_t)capacity, sizeof *h);
  if (h)
    job->term_h[thread] = h;
  int32_t *e = phew_realloc(job->term_slot[thread], (size_t)capacity, sizeof *e);
  if (e)
    job->term_slot[thread] = e;
  if (!m || !w || !r2 || !h || !e)
    return 0;
  job->term_capacity[thread] = capacity;
  return 1;
}

/* The queries of one leaf together: one candidate list for all of them (every particle
 * within twice the largest query h of the leaf's box, or whose own 2h reaches it), then each
 * query sums over the list. Returns 0 if memory ran out. */
static int density_leaf(const density_job *job, int thread, int64_t chunk, int64_t first, int64_t last)
{
  const kd_tree *t = job->t;
  kd_candidates *c = &job->candidates[thread];
  double lo[3], hi[3], h_leaf = 0;
  for (int d = 0; d < 3; ++d) {
    lo[d] = INFINITY;
    hi[d] = -INFINITY;
  }
  for (int64_t k = first; k < last; ++k) {
    double x[3];
    kd_position(t, job->slot[k], x);
    for (int d = 0; d < 3; ++d) {
      lo[d] = x[d] < lo[d] ? x[d] : lo[d];
      hi[d] = x[d] > hi[d] ? x[d] : hi[d];
    }
    const double h = job->h[job->query[k]];
    h_leaf = h > h_leaf ? h : h_leaf;
  }
  if (!kd_tree_gather(t, lo, hi, (2.0 * h_leaf) * (2.0 * h_leaf) * SUPPORT_SLACK, job->node_h, SUPPORT_SLACK, c) ||
      !reserve_terms(job, thread, kd_candidates_size(c)))
    return 0;
  double *restrict m = job->term_mass[thread], *restrict w = job->term_kernel[thread];
  double *restrict d2 = job->term_r2[thread], *restrict hj = job->term_h[thread];
  int32_t *restrict slot = job->term_slot[thread];
  const double *restrict slot_h = job->slot_h;
  for (int64_t k = first; k < last; ++k) {
    const double h_i = job->h[job->query[k]];
    const double reach2 = (2.0 * h_i) * (2.0 * h_i) * SUPPORT_SLACK;
    /* the particles within reach: r < 2 max(h_i, h_j), with the slack */
    double x[3];
    kd_position(t, job->slot[k], x);
    const int n = kd_candidates_scan(t, c, x, reach2, slot_h, SUPPORT_SLACK, d2, slot);
    for (int a = 0; a < n; ++a)
      hj[a] = slot_h[slot[a]];
    if (job->slot_mass)
      for (int a = 0; a < n; ++a)
        m[a] = job->slot_mass[slot[a]];
    kernel_terms(n, d2, hj, h_i, w);
    const int terms = n; /* zero terms add nothing to the sum */
    store(job, chunk, k, window_sum(job->slot_mass ? m : NULL, w, terms));
  }
  return 1;
}

static void density_chunk(void *context, int thread, int64_t chunk)
{
  const density_job *job = context;
  const int64_t begin = chunk * DENSITY_CHUNK;
  const int64_t end = begin + DENSITY_CHUNK < job->n ? begin + DENSITY_CHUNK : job->n;
  job->failed[chunk] = -1;
  for (int64_t k = begin; k < end;) { /* runs of queries in one leaf */
    const int64_t leaf = kd_leaf_of_slot(job->t, job->slot[k]);
    int64_t e = k + 1;
    while (e < end && kd_leaf_of_slot(job->t, job->slot[e]) == leaf)
      ++e;
    if (!density_leaf(job, thread, chunk, k, e)) {
      job->failed[chunk] = -2;
      return;
    }
    k = e;
  }
}

typedef struct node_h_job {
  const kd_tree *t;
  double *node_h;
  const double *slot_h;
  int level;
} node_h_job;

/* Task: the largest h of node i of the level (leaves: from their particles; above: from the
 * children, done the level before). */
static void node_h_task(void *context, int thread, int64_t i)
{
  (void)thread;
  const node_h_job *job = context;
  const int64_t v = (((int64_t)1 << job->level) - 1) + i;
  double m = 0;
  if (job->level == job->t->depth) {
    int64_t b, e;
    kd_node_range(job->t, v, job->level, &b, &e);
    for (int64_t s = b; s < e; ++s)
      m = job->slot_h[s] > m ? job->slot_h[s] : m;
  } else {
    m = job->node_h[2 * v + 1] > job->node_h[2 * v + 2] ? job->node_h[2 * v + 1] : job->node_h[2 * v + 2];
  }
  job->node_h[v] = m;
}

phew_status sph_density(kd_tree *tree, const double *h, const double *mass, int64_t n, const int32_t *subset,
                        double *rho, int n_threads, phew_result *result)
{
  if (!tree || (n > 0 && (!h || !rho)))
    return phew_fail(result, PHEW_ERROR_ARGUMENT, "sph_density: missing tree, h or output");
  if (n == 0)
    return PHEW_OK;
  const int64_t N = tree->n;
  /* h and mass of every tree particle: finite, h >= 0 (the walk's pruning relies on it) */
  for (int64_t i = 0; i < N; ++i) {
    if (!(h[i] >= 0 && isfinite(h[i])))
      return phew_fail(result, PHEW_ERROR_DATA, "SPH density: the particle with global id %lld has smoothing length %g",
                       (long long)tree->id[i], h[i]);
    if (mass && !isfinite(mass[i]))
      return phew_fail(result, PHEW_ERROR_DATA, "SPH density: the particle with global id %lld has mass %g",
                       (long long)tree->id[i], mass[i]);
  }
  kd_tree_sort_leaves(tree, h, n_threads); /* for the scans' early stop */
  int32_t *query, *slot;
  phew_status status = kd_tree_order_queries(tree, n, subset, &query, &slot, result);
  if (status != PHEW_OK)
    return status;
  /* a query with h = 0 has more than n_dens particles at its position: no density (the
   * first such query in the caller's order is named, whatever the threads) */
  for (int64_t j = 0; j < n; ++j) {
    const int32_t i = subset ? subset[j] : (int32_t)j;
    if (h[i] == 0) {
      free(query);
      free(slot);
      return phew_fail(result, PHEW_ERROR_DATA,
                       "SPH density: the particle with global id %lld has smoothing length 0: more particles than "
                       "the density's neighbour count sit at its position",
                       (long long)tree->id[i]);
    }
  }
  const int64_t n_chunks = (n + DENSITY_CHUNK - 1) / DENSITY_CHUNK;
  int threads = particle_threads(n_threads);
  if (threads > n_chunks)
    threads = (int)n_chunks;
  double *slot_h = phew_malloc((size_t)N, sizeof *slot_h);
  double *slot_mass = mass ? phew_malloc((size_t)N, sizeof *slot_mass) : NULL;
  double *node_h = phew_malloc((size_t)tree->n_nodes, sizeof *node_h);
  int64_t *failed = phew_malloc((size_t)n_chunks, sizeof *failed);
  kd_candidates *candidates = calloc((size_t)threads, sizeof *candidates);
  double **term_mass = calloc((size_t)threads, sizeof *term_mass);
  double **term_kernel = calloc((size_t)threads, sizeof *term_kernel);
  double **term_r2 = calloc((size_t)threads, sizeof *term_r2);
  double **term_h = calloc((size_t)threads, sizeof *term_h);
  int32_t **term_slot = calloc((size_t)threads, sizeof *term_slot);
  int64_t *term_capacity = calloc((size_t)threads, sizeof *term_capacity);
  int ok = slot_h && (!mass || slot_mass) && node_h && failed && candidates && term_mass && term_kernel && term_r2 && term_h &&
           term_slot && term_capacity;
  for (int i = 0; ok && i < threads; ++i)
    ok = kd_candidates_init(&candidates[i], tree) == PHEW_OK;
  if (ok) {
    for (int64_t s = 0; s < N; ++s) {
      slot_h[s] = h[tree->index[s]];
      if (mass)
        slot_mass[s] = mass[tree->index[s]];
    }
    for (int level = tree->depth; level >= 0; --level) {
      node_h_job nj = {tree, node_h, slot_h, level};
      particle_parallel(threads, (int64_t)1 << level, node_h_task, &nj);
    }
    density_job job = {tree,       h,         mass,        slot_h,  slot_mass, node_h,    query,         slot,  n, rho,
                       candidates, term_mass, term_kernel, term_r2, term_h,    term_slot, term_capacity, failed};
    particle_parallel(threads, n_chunks, density_chunk, &job);
    int64_t worst = -1, no_memory = 0;
    for (int64_t c = 0; c < n_chunks; ++c) {
      no_memory |= failed[c] == -2;
      if (failed[c] >= 0 && (worst < 0 || failed[c] < worst))
        worst = failed[c];
    }
    if (no_memory) {
      status = phew_fail(result, PHEW_ERROR_MEMORY, "SPH density of %lld particles: out of memory", (long long)n);
    } else if (worst >= 0) {
      const int32_t i = subset ? subset[worst] : (int32_t)worst;
      status = phew_fail(result, PHEW_ERROR_DATA,
                         "SPH density: the density of the particle with global id %lld is beyond the range of "
                         "normal doubles",
                         (long long)tree->id[i]);
    }
  } else {
    status = phew_fail(result, PHEW_ERROR_MEMORY, "SPH density of %lld particles: out of memory", (long long)n);
  }
  for (int i = 0; i < threads; ++i) {
    if (candidates && candidates[i].stack)
      kd_candidates_free(&candidates[i]);
    if (term_mass)
      free(term_mass[i]);
    if (term_kernel)
      free(term_kernel[i]);
    if (term_r2)
      free(term_r2[i]);
    if (term_h)
      free(term_h[i]);
    if (term_slot)
      free(term_slot[i]);
  }
  free(candidates);
  free(term_mass);
  free(term_kernel);
  free(term_r2);
  free(term_h);
  free(term_slot);
  free(term_capacity);
  free(failed);
  free(node_h);
  free(slot_mass);
  free(slot_h);
  free(query);
  free(slot);
  return status;
}
