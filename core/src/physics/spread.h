/* The distributed potentials (potential_spread, physics.h), in three steps:
 *
 *   spread_top.c        the top of the octree, the same on every rank, built from the ranks'
 *                       counts down to the frontier cells (at most `cut` members), each of them
 *                       owned by one rank (contiguous ranges in depth-first octant order)
 *   spread_let.c        the locally essential tree: the cells and members of other ranks that
 *                       this rank's walks open, grafted under its copy of the top
 *   potential_spread.c  the driver: direct sums of small structures, the members to the owners
 *                       of their frontier cells, the owners' subtrees, the walks, phi back
 *
 * The owners build the subtrees of their frontier cells with the serial code (octree.c) from
 * the members in canonical order, so every cell, moment and interaction list is the serial
 * one. */
#ifndef PHEW_PHYSICS_SPREAD_H
#define PHEW_PHYSICS_SPREAD_H

#include "octree.h"

/* A member on its way to the owner of its frontier cell; phi goes back to (rank, index). */
typedef struct spread_member {
  double position[3];
  double mass;
  int64_t order;
  int64_t cell; /* frontier cell */
  int64_t origin_index;
  int32_t origin_rank;
  int32_t pad;
} spread_member;

typedef struct spread_tree {
  octree t;       /* nodes [0, n_top): the top; then this rank's subtrees; then imported cells */
  int64_t n_top;  /* nodes of the top */
  int64_t *count; /* per top node: its members over every rank */
  int64_t n_frontier;
  int64_t *frontier;            /* the frontier cells' nodes in depth-first octant order */
  int64_t *frontier_of;         /* per top node: its frontier number, or -1 */
  int32_t *owner;               /* per frontier cell */
  int64_t first_own, end_own;   /* this rank's frontier cells */
  int64_t *sub_first, *sub_end; /* per own frontier cell: the nodes below it (a range) */
  int64_t imported_members, imported_cells;
} spread_tree;

void spread_tree_free(spread_tree *s);

/* ---- spread_top.c ------------------------------------------------------------------------ */
/* Collective: the top, its frontier and owners; cell[i] the frontier cell of member i. The
 * status is agreed on every rank. */
phew_status spread_top_build(spread_tree *s, comm *c, const double *position, int64_t n, int64_t n_total,
                             int64_t *cell);
/* Collective: every frontier cell's moments from its owner (own ones computed), then the top's
 * inner cells'. */
phew_status spread_top_moments(spread_tree *s, comm *c);

/* ---- spread_let.c ------------------------------------------------------------------------ */
/* Collective: the cells and members of other ranks that this rank's walks open (with opening
 * angle theta), grafted under the top. Call when every rank's subtrees and the top's moments
 * are built. The status is agreed on every rank. */
phew_status spread_let_build(spread_tree *s, comm *c, double theta2);

#endif
