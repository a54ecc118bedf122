/* The clump finder on a mesh (pipeline.c): the PHEW stages in order (watershed, saddles,
 * noise removal, saddle merging) and the catalogue, each timed and reported to the caller's
 * progress callback, with its cancel callback asked between them. The front door
 * (api/find_clumps.c) checks the arguments and makes the mesh of a caller's grid, graph or AMR
 * hierarchy, or of the particles' neighbour graph (api/find_clumps_points.c), and runs this. */
#ifndef PHEW_PIPELINE_H
#define PHEW_PIPELINE_H

#include "catalogue.h"

/* The density of the mesh's cells (as phew_input.density describes it: per stored, local or
 * own block cell) and, when the caller knows it, its mean (phew_params). */
typedef struct pipeline_density {
  const void *values;
  phew_scalar_type type;
  int mean_known; /* 0: the mesh's own mean (mesh_mean_density) */
  double mean;
} pipeline_density;

/* Collective: the stages on the cells of m, whose arguments the caller checked. context
 * gives the progress and cancel callbacks. On success the labels of every local cell (AMR:
 * of the own blocks' cells) and the result's catalogue, thresholds and stats; on failure the
 * same status on every rank, the message, every such label -1 and no catalogue. */
phew_status pipeline_run(const mesh *m, comm *c, const phew_context *context, const pipeline_density *density,
                         const phew_params *params, phew_labels *labels, call_result *result);

#endif
