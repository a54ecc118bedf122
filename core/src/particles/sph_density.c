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

/* The one formula of the kernel, used for every pair. */
static inline double kernel(double r, double h)
{
  const double q = r / h;
  double w;
  if (q < 1.0)
    w = (1.0 - 1.5 * (q * q)) + 0.75 * (q * q * q);
  else if (q < 2.0) {
    const double u = 2.0 - q;
    w = 0.25 * (u * u * u);
  } else
    return 0.0; /* also when h is 0 (q infinite) */
  return w / (M_PI * (h * h * h));
}

double sph_kernel(double r, double h) { return kernel(r, h); }

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
  int64_t **stack;         /* per thread: node << 6 | level */
  int64_t *failed;         /* per chunk: the first query (caller's order) whose density left the
                              double range, or -1 */
} density_job;

static void density_chunk(void *context, int thread, int64_t chunk)
{
  const density_job *job = context;
  const kd_tree *t = job->t;
  const int64_t first_leaf = kd_first_leaf(t);
  int64_t *stack = job->stack[thread];
  const int64_t begin = chunk * DENSITY_CHUNK;
  const int64_t end = begin + DENSITY_CHUNK < job->n ? begin + DENSITY_CHUNK : job->n;
  job->failed[chunk] = -1;
  for (int64_t k = begin; k < end; ++k) {
    const int32_t j = job->query[k];
    const double *x = t->pos + 3 * (int64_t)job->slot[k];
    const double hi = job->h[j];
    exact_sum sum;
    exact_sum_clear(&sum);
    int top = 0;
    stack[top++] = 0;
    while (top > 0) {
      const int64_t entry = stack[--top];
      const int64_t v = entry >> 6;
      const int level = (int)(entry & 63);
      const double hn = job->node_h[v] > hi ? job->node_h[v] : hi;
      const double reach2 = (2.0 * hn) * (2.0 * hn) * SUPPORT_SLACK;
      if (kd_node_distance2(t, &t->node[v], x) > reach2)
        continue;
      if (v < first_leaf) {
        stack[top++] = (2 * v + 2) << 6 | (level + 1);
        stack[top++] = (2 * v + 1) << 6 | (level + 1);
        continue;
      }
      int64_t b, e;
      kd_node_range(t, v, level, &b, &e);
      for (int64_t s = b; s < e; ++s) {
        const double d2 = particle_distance2(&t->box, x, t->pos + 3 * s);
        const double hj = job->slot_h[s];
        const double hm = hj > hi ? hj : hi;
        if (d2 > (2.0 * hm) * (2.0 * hm) * SUPPORT_SLACK)
          continue;
        const double r = sqrt(d2);
        const double w = kernel(r, hi) + kernel(r, hj);
        if (w == 0.0)
          continue;
        if (job->slot_mass)
          exact_sum_add_product(&sum, job->slot_mass[s], w);
        else
          exact_sum_add(&sum, w);
      }
    }
    wide_float value = exact_sum_value(&sum);
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

phew_status sph_density(const kd_tree *tree, const double *h, const double *mass, int64_t n, const int32_t *subset,
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
  int64_t **stack = calloc((size_t)threads, sizeof *stack);
  int ok = slot_h && (!mass || slot_mass) && node_h && failed && stack;
  for (int i = 0; ok && i < threads; ++i) {
    stack[i] = phew_malloc((size_t)tree->depth + 2, sizeof **stack);
    ok = stack[i] != NULL;
  }
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
    density_job job = {tree, h, mass, slot_h, slot_mass, node_h, query, slot, n, rho, stack, failed};
    particle_parallel(threads, n_chunks, density_chunk, &job);
    int64_t worst = -1;
    for (int64_t c = 0; c < n_chunks; ++c)
      if (failed[c] >= 0 && (worst < 0 || failed[c] < worst))
        worst = failed[c];
    if (worst >= 0) {
      const int32_t i = subset ? subset[worst] : (int32_t)worst;
      status = phew_fail(result, PHEW_ERROR_DATA,
                         "SPH density: the density of the particle with global id %lld is beyond the range of "
                         "normal doubles",
                         (long long)tree->id[i]);
    }
  } else {
    status = phew_fail(result, PHEW_ERROR_MEMORY, "SPH density of %lld particles: out of memory", (long long)n);
  }
  if (stack)
    for (int i = 0; i < threads; ++i)
      free(stack[i]);
  free(stack);
  free(failed);
  free(node_h);
  free(slot_mass);
  free(slot_h);
  free(query);
  free(slot);
  return status;
}
