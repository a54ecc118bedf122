/* Neighbours of particles: a kd-tree over float64 positions, exact k-nearest-neighbour
 * queries and the SPH density of HOP (Eisenstein & Hut 1998), threaded.
 *
 * Everything here is exact and independent of the tree's layout, of the order in which the
 * particles are stored and of the number of threads: distances are float64 squared
 * distances, always evaluated as (dx*dx + dy*dy) + dz*dz from nearest-image differences
 * (particle_delta); equal distances are ordered by global id; density sums are exact. Two
 * ranks holding the same particle with the same neighbourhood therefore compute the same bits. */
#ifndef PHEW_PARTICLES_NEIGHBOURS_H
#define PHEW_PARTICLES_NEIGHBOURS_H

#include "comm.h"

#include <stdint.h>

/* The periodic box: axis d wraps with period size[d] when periodic[d] (positions then lie in
 * [origin, origin + size)). Non-periodic axes ignore size. */
typedef struct particle_box {
  double size[3];
  int periodic[3];
} particle_box;

/* Nearest-image difference a - b along an axis. */
static inline double particle_delta(const particle_box *box, int axis, double a, double b)
{
  double d = a - b;
  if (box->periodic[axis]) {
    const double p = box->size[axis];
    if (2.0 * d > p)
      d -= p;
    else if (2.0 * d < -p)
      d += p;
  }
  return d;
}

/* Squared distance of two particles (3 coordinates each), in the one evaluation order. */
static inline double particle_distance2(const particle_box *box, const double *a, const double *b)
{
  const double dx = particle_delta(box, 0, a[0], b[0]);
  const double dy = particle_delta(box, 1, a[1], b[1]);
  const double dz = particle_delta(box, 2, a[2], b[2]);
  return (dx * dx + dy * dy) + dz * dz;
}

/* The M4 cubic spline of SPH (Monaghan & Lattanzio 1985) with support 2h:
 * W = (1 - 3/2 q^2 + 3/4 q^3) / (pi h^3) for q = r/h < 1, (2 - q)^3 / (4 pi h^3) for q < 2. */
double sph_kernel(double r, double h);

/* A kd-tree over n particles (n < 2^31): positions (3 per particle, float64) and global ids
 * stay the caller's and must outlive the tree. Particles are addressed by their index in
 * the caller's arrays ("tree index"). */
typedef struct kd_tree kd_tree;

phew_status kd_tree_build(kd_tree **tree, int64_t n, const double *position, const int64_t *id, const particle_box *box,
                          int n_threads, call_result *result);
void kd_tree_free(kd_tree *tree);
int64_t kd_tree_size(const kd_tree *tree);
/* The caller's arrays were moved (reallocated, maybe longer): the tree's particles are the
 * first kd_tree_size of them, unchanged. */
void kd_tree_moved(kd_tree *tree, const double *position, const int64_t *id);

/* A batch of k-nearest-neighbour queries. The nearest particles of a query are all tree
 * particles, itself included, ordered by increasing (squared distance, global id). */
typedef struct knn_query {
  int n_dens;            /* > 0: h = half the distance to the (n_dens + 1)-th nearest (itself first
                            or tied at distance 0); 0: h is not wanted */
  int n_keep;            /* nearest OTHER particles listed per query (itself left out), >= 0 */
  int64_t n;             /* number of queries */
  const int32_t *subset; /* tree indices of the queries; NULL: particles 0 .. n-1 */
  double *h;             /* out, if n_dens > 0: per query */
  double *reach;         /* out, optional: per query, the distance of the
                            max(n_dens + 1, n_keep + 1)-th nearest, itself counted: the answer
                            depends on no particle farther than this */
  int32_t *nearest;      /* out, if n_keep > 0: n_keep tree indices per query */
  int n_threads;         /* 0: all cores */
  int n_ordered;         /* 0 (or >= n_keep): the n_keep are in order; else only the first
                            n_ordered are, the others follow as a set, in no fixed order */
} knn_query;

/* Fails (PHEW_ERROR_ARGUMENT, message) when the tree holds fewer particles than a query needs. */
phew_status knn_search(const kd_tree *tree, knn_query *q, call_result *result);

/* The SPH density of HOP, symmetrised:
 *   rho_i = sum_j m_j [W(r_ij, h_i) + W(r_ij, h_j)] / 2
 * over every tree particle j (i included; W is 0 beyond 2h), for the queries subset[0 .. n)
 * (distinct tree indices; or 0 .. n-1). h is known for every tree particle (0 for one that is
 * no query and should give nothing); mass NULL means mass 1; mass_max >= every mass, the same
 * value wherever the same particles are summed (it sets the sums' fixed-point grid). The sums
 * are exact (order-independent) and rounded once. Fails with PHEW_ERROR_DATA when a query's h
 * is 0 (more than n_dens particles at one position). */
phew_status sph_density(kd_tree *tree, const double *h, const double *mass, double mass_max, int64_t n,
                        const int32_t *subset, double *rho, int n_threads, call_result *result);

/* Balls known from the neighbour search: for tree particles 0 .. n-1, the n_keep nearest
 * other particles (tree indices, as knn_query gives them, in any order). With n_keep at least
 * n_dens - 1 they hold every particle whose kernel term is not zero (r < 2h: fewer than n_dens
 * others), so the density takes them instead of searching the tree, with the same terms. */
typedef struct density_lists {
  const int32_t *nearest;
  int n_keep;
  int64_t n;
} density_lists;

/* sph_density with lists (NULL: none): the same densities, bit for bit. */
phew_status sph_density_listed(kd_tree *tree, const double *h, const double *mass, double mass_max, int64_t n,
                               const int32_t *subset, const density_lists *lists, double *rho, int n_threads,
                               call_result *result);

/* Every particle of a tree within a distance of a point (ball_query.c): after a run, n
 * particles with particle_distance2(x, particle) <= r2, their caller's indices in index and
 * squared distances in d2, in tree order. One query at a time per ball_query. */
typedef struct ball_query {
  const kd_tree *tree;
  void *candidates; /* the walk's scratch */
  int capacity, n;
  double *d2;
  int32_t *slot, *index;
} ball_query;

phew_status ball_query_init(ball_query *q, const kd_tree *t);
phew_status ball_query_run(ball_query *q, const double *x, double r2);
void ball_query_free(ball_query *q);

#endif
