/* The direct path's merger trees (no Catalyst): each call links the labels of this step's
 * cells to those of the call before with phew_link_steps, and writes the links as
 * OUTPUT/NAME_links_STEP.csv; every step's links also go into OUTPUT/NAME_tree.csv. The
 * columns are those of the PHEW Merger Tree filter (Step, Time, PreviousTime, then the link
 * columns) after TimeStep, the simulation's step: the same files as catalyst/scripts/clumps.py
 * writes, so the two paths can be compared byte for byte. */
#ifndef PM_TREE_H
#define PM_TREE_H

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>

typedef struct pm_tree {
  const char *output, *name;
  int64_t steps; /* calls so far (the Step column) */
  double time;   /* of the last call */
  int64_t n;     /* the last call's labelled cells on this rank */
  int64_t *id, *label;
  double *mass;
  FILE *whole; /* rank 0: OUTPUT/NAME_tree.csv */
} pm_tree;

void pm_tree_init(pm_tree *t, const char *output, const char *name);
/* Collective. The tree takes the arrays (malloc'd, n each: this rank's labelled cells with
 * their global ids, labels and masses) and frees them when done. 0, or -1 (printed by rank 0). */
int pm_tree_step(pm_tree *t, MPI_Comm comm, int step, double time, int64_t n, int64_t *id, int64_t *label,
                 double *mass);
void pm_tree_free(pm_tree *t);

#endif
