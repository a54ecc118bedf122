/* Inside the kd-tree (kd_tree.c), for the searches that walk it (knn.c, sph_density.c).
 * Internal to core/src/particles; the interface is neighbours.h.
 *
 * Layout: a complete binary tree of depth `depth`, stored implicitly in heap order (node 0 is
 * the root, the children of node v are 2v + 1 and 2v + 2, the leaves are the last 2^depth
 * nodes). The node at level l, number i within its level, holds the particles of tree order
 * [i n >> l, (i + 1) n >> l): no ranges or child pointers are stored, only each node's tight
 * bounding box. Every leaf holds between KD_LEAF / 2 and KD_LEAF particles. The positions
 * are copied in tree order (float64, bitwise equal to the caller's) for locality; index maps
 * a tree slot back to the caller's index. */
#ifndef PHEW_PARTICLES_KD_TREE_H
#define PHEW_PARTICLES_KD_TREE_H

#include "neighbours.h"

#include <stdint.h>

enum { KD_LEAF = 16 };

/* The searches' hot loops are PHEW_VECTOR_CLONES (base.h). */

typedef struct kd_node {
  double lo[3], hi[3]; /* bounding box of the node's particles */
} kd_node;

struct kd_tree {
  int64_t n;
  const double *position; /* the caller's, 3 per particle */
  const int64_t *id;      /* the caller's global ids */
  particle_box box;
  int depth;       /* leaves are at level depth (0: the root is the only leaf) */
  int64_t n_nodes; /* 2^(depth + 1) - 1, or 0 for an empty tree */
  kd_node *node;
  double *x, *y, *z; /* the positions in tree order (float64, bitwise equal to the
                        caller's), one array per axis for loops that vectorise */
  int32_t *index;    /* tree slot -> caller's index */
};

/* First node of the leaf level. */
static inline int64_t kd_first_leaf(const kd_tree *t) { return ((int64_t)1 << t->depth) - 1; }

/* The range [*begin, *end) of tree slots of node v at level `level`. */
static inline void kd_node_range(const kd_tree *t, int64_t v, int level, int64_t *begin, int64_t *end)
{
  const int64_t i = v - (((int64_t)1 << level) - 1);
  *begin = (i * t->n) >> level;
  *end = ((i + 1) * t->n) >> level;
}

/* The position of the particle in tree slot s. */
static inline void kd_position(const kd_tree *t, int64_t s, double *out)
{
  out[0] = t->x[s];
  out[1] = t->y[s];
  out[2] = t->z[s];
}

/* The caller's index of the particle in tree slot s. */
static inline int32_t kd_tree_index(const kd_tree *t, int64_t s) { return t->index[s]; }

/* Global id of the particle in tree slot s. */
static inline int64_t kd_slot_id(const kd_tree *t, int64_t s) { return t->id[t->index[s]]; }

/* Lower bound of |d| for d in [dl, dh] (no image shift). */
static inline double kd_gap(double dl, double dh)
{
  if (dl > 0)
    return dl;
  if (dh < 0)
    return -dh;
  return 0;
}

/* A lower bound of |particle_delta(axis, a, b)| over all a, b whose rounded differences
 * a - b lie in [dl, dh]. particle_delta takes the difference d = a - b (monotone in a and b
 * under rounding) and shifts it by one period where 2d leaves [-p, p]; on each of the three
 * pieces (shifted down, unshifted, shifted up) the result is again monotone in d, so the bound
 * of each piece comes from its end points, and the minimum over the pieces bounds them all.
 * Exact (never above the true minimum) in floating point, so pruning with it never loses a
 * particle. */
static inline double kd_axis_gap(const particle_box *box, int axis, double dl, double dh)
{
  if (!box->periodic[axis])
    return kd_gap(dl, dh);
  const double p = box->size[axis];
  if (2.0 * dl >= -p && 2.0 * dh <= p) /* the usual case: no shift anywhere */
    return kd_gap(dl, dh);
  const double half = 0.5 * p;
  double g = p;                        /* every piece is below this */
  if (2.0 * dl <= p && 2.0 * dh >= -p) /* unshifted piece: d in [-p/2, p/2] */
    g = kd_gap(dl > -half ? dl : -half, dh < half ? dh : half);
  if (2.0 * dh > p) { /* shifted down: d in (p/2, dh] */
    const double s = kd_gap((dl > half ? dl : half) - p, dh - p);
    g = s < g ? s : g;
  }
  if (2.0 * dl < -p) { /* shifted up: d in [dl, -p/2) */
    const double s = kd_gap(dl + p, (dh < -half ? dh : -half) + p);
    g = s < g ? s : g;
  }
  return g;
}

/* Lower bound of particle_distance2(box, q, x) over every x in node v's box, evaluated in
 * the same order as particle_distance2 (so it is below it for every particle in the box). */
static inline double kd_node_distance2(const kd_tree *t, const kd_node *v, const double *q)
{
  const double gx = kd_axis_gap(&t->box, 0, v->lo[0] - q[0], v->hi[0] - q[0]);
  const double gy = kd_axis_gap(&t->box, 1, v->lo[1] - q[1], v->hi[1] - q[1]);
  const double gz = kd_axis_gap(&t->box, 2, v->lo[2] - q[2], v->hi[2] - q[2]);
  return (gx * gx + gy * gy) + gz * gz;
}

/* Lower bound of particle_distance2 between any point of box a and any point of box b (a point
 * is a box with lo = hi): the rounded differences of their coordinates lie in
 * [b.lo - a.hi, b.hi - a.lo], and kd_axis_gap bounds every nearest image of those. */
static inline double kd_box_distance2(const particle_box *box, const double *alo, const double *ahi, const double *blo,
                                      const double *bhi)
{
  const double gx = kd_axis_gap(box, 0, blo[0] - ahi[0], bhi[0] - alo[0]);
  const double gy = kd_axis_gap(box, 1, blo[1] - ahi[1], bhi[1] - alo[1]);
  const double gz = kd_axis_gap(box, 2, blo[2] - ahi[2], bhi[2] - alo[2]);
  return (gx * gx + gy * gy) + gz * gz;
}

/* Leaf number of tree slot s (the leaf i with (i n) >> depth <= s < ((i + 1) n) >> depth). */
static inline int64_t kd_leaf_of_slot(const kd_tree *t, int64_t s) { return (((s + 1) << t->depth) - 1) / t->n; }

/* Level of node v (its depth below the root). */
static inline int kd_level(int64_t v) { return 63 - __builtin_clzll((uint64_t)v + 1); }

/* Whether some particle of the tree may be within squared distance r2 of some point of the
 * box [lo, hi] only through the nearest-image shift: per periodic axis, the shifted pieces of
 * kd_axis_gap between the box and the tree's whole box. When none can, plain differences give
 * particle_delta's bits for every pair within r2 (and plain distances above r2 for the
 * others), so the walk may use them. */
static inline int kd_reaches_image(const kd_tree *t, const double *lo, const double *hi, double r2)
{
  const kd_node *root = &t->node[0];
  for (int d = 0; d < 3; ++d) {
    if (!t->box.periodic[d])
      continue;
    const double p = t->box.size[d], half = 0.5 * p;
    const double dl = root->lo[d] - hi[d], dh = root->hi[d] - lo[d];
    if (2.0 * dh > p) {
      const double g = kd_gap((dl > half ? dl : half) - p, dh - p);
      if (!(g * g > r2))
        return 1;
    }
    if (2.0 * dl < -p) {
      const double g = kd_gap(dl + p, (dh < -half ? dh : -half) + p);
      if (!(g * g > r2))
        return 1;
    }
  }
  return 0;
}

/* Squared distance with plain differences, evaluated as particle_distance2. */
static inline double kd_plain_distance2(const double *a, const double *b)
{
  const double dx = a[0] - b[0], dy = a[1] - b[1], dz = a[2] - b[2];
  return (dx * dx + dy * dy) + dz * dz;
}

static inline double kd_plain_node_distance2(const kd_node *v, const double *q)
{
  const double gx = kd_gap(v->lo[0] - q[0], v->hi[0] - q[0]);
  const double gy = kd_gap(v->lo[1] - q[1], v->hi[1] - q[1]);
  const double gz = kd_gap(v->lo[2] - q[2], v->hi[2] - q[2]);
  return (gx * gx + gy * gy) + gz * gz;
}

static inline double kd_plain_box_distance2(const double *alo, const double *ahi, const double *blo, const double *bhi)
{
  const double gx = kd_gap(blo[0] - ahi[0], bhi[0] - alo[0]);
  const double gy = kd_gap(blo[1] - ahi[1], bhi[1] - alo[1]);
  const double gz = kd_gap(blo[2] - ahi[2], bhi[2] - alo[2]);
  return (gx * gx + gy * gy) + gz * gz;
}

/* ---- candidate lists: the leaves near a box, gathered in one walk ---------------------- */

/* The leaves of the tree near a box, as arrays (one entry per leaf, for loops that
 * vectorise): each leaf's bounding box, its tree slots, and the nearest-image shift of the
 * differences between the points of the box and the leaf's particles: for every point a of
 * the box and particle x of the leaf, particle_delta(axis, a, x) is bitwise (a - x) + shift
 * (the canonical formula subtracts or adds the period, or nothing, and adding 0 changes no
 * square). A leaf whose particles need different shifts for different points of the box
 * (boxes as wide as half a period) is not `uniform`: its distances take the canonical
 * formula. */
typedef struct kd_candidates {
  int capacity;          /* of the arrays, which grow */
  int n;                 /* leaves listed */
  double *lo[3], *hi[3]; /* per axis: the leaves' bounding boxes */
  double *shift[3];      /* per axis: the shifts (when uniform) */
  int32_t *begin, *end;  /* tree slots */
  int32_t *uniform;
  double *bound;  /* scratch of a scan: lower bounds of the squared distances */
  int32_t *near;  /* scratch of a scan: the leaves within reach */
  int32_t *stack; /* the walk's */
} kd_candidates;

phew_status kd_candidates_init(kd_candidates *c, const kd_tree *t);
void kd_candidates_free(kd_candidates *c);

/* Every leaf of the tree whose box may hold a particle within r2 of the box [lo, hi] (the
 * lower bound of particle_distance2 between the boxes is <= r2). Leaves come in tree order; the
 * list grows as needed; returns 0 if memory ran out. */
int kd_tree_gather(const kd_tree *t, const double *lo, const double *hi, double r2, kd_candidates *c);

/* The particles of the listed leaves within r2 of the point x (of the list's box): their
 * particle_distance2 from x into d2 and their tree slots into slot (room for the particles of
 * all listed leaves needed). Leaves farther than r2 from x (by their boxes) are skipped.
 * Returns how many. */
int kd_candidates_scan(const kd_tree *t, kd_candidates *c, const double *x, double r2, double *restrict d2,
                       int32_t *restrict slot);

/* Particles in the listed leaves. */
int kd_candidates_size(const kd_candidates *c);

/* The queries of a batch (n of them: subset[0 .. n), or particles 0 .. n-1) in tree order:
 * the t-th is query (*query)[t], in tree slot (*slot)[t]. Fails (PHEW_ERROR_ARGUMENT) on an
 * index outside the tree; free both arrays. */
phew_status kd_tree_order_queries(const kd_tree *t, int64_t n, const int32_t *subset, int32_t **query, int32_t **slot,
                                  call_result *result);

#endif
