/* The front door of the clump finder (find_clumps.c): phew_find_clumps checks its arguments
 * once and sends grids, graphs and AMR hierarchies to the pipeline on their mesh, and
 * particles through the particle path to the pipeline on their graph (find_clumps_points.c).
 * Also the public structures' defaults (defaults.c) and the results' lifetime (results.c).
 * Internal to api/. */
#ifndef PHEW_API_H
#define PHEW_API_H

#include "particles.h"
#include "pipeline.h"

/* The checks of the parameters of phew_find_clumps (params.c). */
phew_status params_check(const phew_params *p, call_result *result);

/* Collective: phew_find_clumps on particles (in->mesh == PHEW_MESH_POINTS), arguments checked. */
phew_status find_clumps_points(const phew_context *context, const comm *c, const phew_input *in,
                               const phew_params *params, phew_labels *labels, call_result *result);
/* Every label of the particles passed -1 and their density NaN, where the arrays are given. */
void fail_points_labels(const phew_input *in, phew_labels *labels);

#endif
