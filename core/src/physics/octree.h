/* The octree of the potentials (potential.c describes it), in the pieces that the serial
 * potentials (potential.c) and the distributed ones (potential_spread.c) share, so that both
 * are one computation with the same bits:
 *
 *   octree.c       cells, their split, their moments, the groups
 *   octree_walk.c  point masses and their sums, the groups' walks
 *
 * Nothing here depends on how the nodes are numbered: a cell's members, moments and walk
 * follow from its geometry and its members' order alone. */
#ifndef PHEW_PHYSICS_OCTREE_H
#define PHEW_PHYSICS_OCTREE_H

#include "physics.h"

enum { OCT_LEAF = 16, OCT_GROUP = 128, OCT_MAX_DEPTH = 48, OCT_TASK = 64 };
/* The `child` of a cell whose children or members this rank does not hold (another rank's
 * cell in a locally essential tree): a walk that would open it fails. */
enum { OCT_PRUNED = -2 };

typedef struct oct_node {
  double centre[3]; /* of the cube */
  double half;      /* half its side */
  double com[3];
  double mass;
  int64_t begin, end; /* members in tree order */
  int64_t child;      /* first child (the children are consecutive), -1 for a leaf */
  int32_t n_children;
  int32_t depth;
} oct_node;

typedef struct octree {
  int64_t n_nodes, capacity;
  oct_node *node;
  int64_t n_slots, slot_capacity;
  int64_t *index;        /* tree slot -> member (-1: a member of another rank) */
  double *x, *y, *z, *m; /* per tree slot */
} octree;

/* The octant of cell `node` that (x, y, z) falls in: bit d set in the upper half of axis d
 * (coordinate >= the centre's). */
static inline int oct_octant(const oct_node *node, double x, double y, double z)
{
  return (x >= node->centre[0]) | (y >= node->centre[1]) << 1 | (z >= node->centre[2]) << 2;
}

/* The centre of octant o of cell `node`. */
static inline void oct_child_centre(const oct_node *node, int o, double centre[3])
{
  const double h = 0.5 * node->half;
  for (int d = 0; d < 3; ++d)
    centre[d] = node->centre[d] + ((o >> d & 1) ? h : -h);
}

/* ---- octree.c ---------------------------------------------------------------------------- */
void octree_free(octree *t);
/* Room for n slots in all; 0, or -1 without memory. */
int octree_reserve_slots(octree *t, int64_t n);
/* A new leaf; its number, or -1 without memory. */
int64_t octree_add_node(octree *t, const double centre[3], double half, int64_t begin, int64_t end, int32_t depth);
/* The root cube of members whose bounding box is [lo, hi]. */
void octree_root_cube(const double lo[3], const double hi[3], double centre[3], double *half);

/* Scratch of the splits, as long as the largest cell split. */
typedef struct split_scratch {
  int64_t *slot, *moved;
  double *value;
} split_scratch;

int split_scratch_alloc(split_scratch *w, int64_t n); /* 0, or -1 without memory */
void split_scratch_free(split_scratch *w);
/* Splits cell `root` (its slots filled) and its descendants as long as the rule says. */
phew_status octree_split_below(octree *t, int64_t root, const split_scratch *w);
/* Cell v's mass and centre of mass, from its members (a leaf) or its children's moments. */
void octree_cell_moments(octree *t, int64_t v);
/* The groups in the subtree of `root`, whose other cells are [first, end): the cells of at most
 * `limit` members (or leaves) whose parent has more, or `root`. Returns how many. */
int64_t octree_find_groups(const octree *t, int64_t root, int64_t first, int64_t end, int64_t limit, int64_t *group);

/* ---- octree_walk.c ----------------------------------------------------------------------- */
/* Point masses at (x, y, z) with masses m, whose sum a member takes: cells taken whole and the
 * members of opened leaves (the octree), or every member (direct sums). */
typedef struct point_masses {
  int64_t n, capacity;
  double *x, *y, *z, *m;
} point_masses;

void point_masses_free(point_masses *w);
int point_masses_put(point_masses *w, double x, double y, double z, double m); /* -1 without memory */
/* sum_j m_j / sqrt(r_j^2 + eps2) over the point masses but `self` (-1: none) seen from p. */
double sum_point_masses(const point_masses *w, int64_t self, const double p[3], double eps2);

/* Cell v is taken whole by every member of a group whose members lie in [lo, hi]. Monotone: a
 * box inside [lo, hi] takes whole whatever [lo, hi] takes whole. */
int octree_taken_whole(const oct_node *v, const double lo[3], const double hi[3], double theta2);
/* phi[index of s] for the slots s of every group (one walk each, from the root, node 0).
 * PHEW_ERROR_MEMORY, or PHEW_ERROR_DATA if a walk had to open a pruned cell. */
phew_status octree_walk_groups(const octree *t, const int64_t *group, int64_t n_groups, const potential_params *p,
                               double *phi);

#endif
