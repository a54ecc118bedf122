/* phew_find_clumps, the one way in: the arguments are checked once, here; grids, graphs and
 * AMR hierarchies become a mesh for the pipeline, and particles go through the particle path
 * to the pipeline on their neighbour graph (find_clumps_points.c). */
#include "api.h"

#include <math.h>
#include <string.h>

static phew_status check_points_arguments(const phew_input *in, const phew_params *p, const phew_labels *labels,
                                          call_result *result)
{
  if (!p || !labels || (in->points.n > 0 && (!labels->peak_patch_id || !labels->clump_id || !labels->halo_id)))
    return phew_fail(result, PHEW_ERROR_ARGUMENT, "parameters and the three label arrays must be given");
  if (in->labels_active_only)
    return phew_fail(result, PHEW_ERROR_ARGUMENT, "labels_active_only applies to grids only");
  return params_check(p, result);
}

static phew_status check_arguments(const phew_input *in, const phew_params *p, const phew_labels *labels,
                                   call_result *result)
{
  if (in && in->mesh == PHEW_MESH_POINTS)
    return check_points_arguments(in, p, labels, result);
  if (!in || !p || !labels)
    return phew_fail(result, PHEW_ERROR_ARGUMENT, "input, parameters and labels must not be NULL");
  if (!labels->peak_patch_id || !labels->clump_id || !labels->halo_id)
    return phew_fail(result, PHEW_ERROR_ARGUMENT, "the three label arrays must be given");
  if (in->labels_active_only && in->mesh != PHEW_MESH_STRUCTURED)
    return phew_fail(result, PHEW_ERROR_ARGUMENT, "labels_active_only applies to grids only");
  if (in->density_type != PHEW_FLOAT32 && in->density_type != PHEW_FLOAT64)
    return phew_fail(result, PHEW_ERROR_ARGUMENT, "unknown density type %d", (int)in->density_type);
  phew_status s = params_check(p, result);
  if (s == PHEW_OK && !in->density)
    s = phew_fail(result, PHEW_ERROR_ARGUMENT, "the density array must not be NULL");
  return s;
}

/* Number of label entries the caller provided on a mesh, when the input says it
 * unambiguously; -1 otherwise. */
static int64_t label_count(const phew_input *in, const phew_labels *labels, int rank)
{
  if (!in || !labels || !labels->peak_patch_id || !labels->clump_id || !labels->halo_id)
    return -1;
  int64_t n = 0;
  switch (in->mesh) {
  case PHEW_MESH_GRAPH: return in->graph.n_cells;
  case PHEW_MESH_STRUCTURED: return phew_checked_product(in->grid.stored_dims, 3, &n) == 0 ? n : -1;
  case PHEW_MESH_AMR:
    if (in->amr.n_blocks > 0 && !in->amr.blocks)
      return -1;
    for (int64_t b = 0; b < in->amr.n_blocks; ++b) {
      int64_t cells;
      if (in->amr.blocks[b].owner != rank)
        continue;
      if (phew_checked_product(in->amr.blocks[b].dims, 3, &cells) != 0 || cells > INT64_MAX - n)
        return -1;
      n += cells;
    }
    return n;
  default: return -1;
  }
}

/* A call that failed before the pipeline: every label -1 where the input says how many. */
static void fail_labels(const phew_input *in, phew_labels *labels, int rank)
{
  if (in && in->mesh == PHEW_MESH_POINTS) {
    fail_points_labels(in, labels);
    return;
  }
  const int64_t n = label_count(in, labels, rank);
  for (int64_t i = 0; i < n; ++i)
    labels->peak_patch_id[i] = labels->clump_id[i] = labels->halo_id[i] = -1;
}

static phew_status find_clumps(const phew_context *context, const phew_input *in, const phew_params *params,
                               phew_labels *labels, call_result *result)
{
  comm c;
  phew_status s = comm_init(&c, context, result);
  if (s == PHEW_OK) /* no communicator to agree over otherwise: every rank finds the same */
    s = comm_agree(&c, check_arguments(in, params, labels, result), result);
  if (s != PHEW_OK) {
    fail_labels(in, labels, c.rank);
    return s;
  }
  if (in->mesh == PHEW_MESH_POINTS)
    return find_clumps_points(context, &c, in, params, labels, result);
  mesh m;
  s = mesh_init(&m, in, &c, result); /* collective: a bad block on one rank stops them all */
  if (s == PHEW_OK) {
    const pipeline_density density = {in->density, in->density_type, 0, NAN};
    s = pipeline_run(&m, &c, context, &density, params, labels, result);
  } else {
    fail_labels(in, labels, c.rank);
  }
  mesh_free(&m);
  return s;
}

phew_status phew_find_clumps(phew_context *context, const phew_input *in, const phew_params *params,
                             phew_labels *labels, phew_clump_result *result)
{
  if (result)
    memset(result, 0, sizeof *result);
  if (!context || !result)
    return call_refused(context, "phew_find_clumps");
  call_result r;
  call_result_start(&r);
  const phew_status s = find_clumps(context, in, params, labels, &r);
  call_result_report(&r, s, context);
  *result = (phew_clump_result){.columns = r.columns,
                                .n_clumps = r.n_clumps,
                                .clumps = r.clumps,
                                .n_haloes = r.n_haloes,
                                .haloes = r.haloes,
                                .n_nodes = r.n_nodes,
                                .nodes = r.nodes,
                                .stats = r.stats,
                                .density_threshold_used = r.density_threshold_used,
                                .saddle_threshold_used = r.saddle_threshold_used,
                                .mean_density = r.mean_density};
  return s;
}
