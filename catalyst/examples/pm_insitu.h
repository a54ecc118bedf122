/* What phew_pm does in situ every few steps: hand the density grid and the particles to the
 * Catalyst scripts (phew_catalyst), and/or find the clumps of the grid with libphew directly
 * and follow them from call to call (merger trees of the clumps and of the haloes). */
#ifndef PM_INSITU_H
#define PM_INSITU_H

#include "pm.h"
#include "pm_tree.h"
#include "phew_catalyst.h"

#include <stdio.h>

enum { INSITU_MAX_SCRIPTS = 8 };

typedef struct insitu_options {
  int n_scripts;
  const char *scripts[INSITU_MAX_SCRIPTS];
  int direct;                          /* libphew on the grid, no Catalyst */
  double threshold, relevance, saddle; /* the direct path's, in units of the mean density */
  int stop_on_error;
} insitu_options;

typedef struct insitu {
  MPI_Comm comm; /* all ranks: the clump finding is split over them in any mode */
  int rank, size;
  insitu_options o;
  const char *output;
  phew_catalyst *catalyst;
  FILE *timing;                  /* rank 0: OUTPUT/timing.csv */
  pm_tree clump_tree, halo_tree; /* the direct path's merger trees (direct_clump_, direct_halo_) */
} insitu;

typedef struct insitu_state {
  const pm_mesh *mesh;
  const pm_particles *particles;
  int step;
  double time;
  double step_seconds; /* of the last simulation step */
} insitu_state;

/* Collective over comm; 0 or -1 (the reason printed by rank 0). */
int insitu_start(insitu *in, const insitu_options *o, const char *output, MPI_Comm comm);
int insitu_step(insitu *in, const insitu_state *s);
void insitu_stop(insitu *in);

#endif
