/* The pipeline: check the input, watershed, saddles, noise removal, saddle merging,
 * catalogue and labels. Each stage is timed and reported to the progress callback. */
#include "internal.h"

#include <math.h>
#include <string.h>

int phew_comm_check(const phew_input *input, phew_result *result);

static phew_status check_arguments(const phew_input *in, const phew_params *p, const phew_labels *labels,
                                   phew_result *result)
{
  if (!in || !p || !labels)
    return phew_fail(result, PHEW_ERROR_ARGUMENT, "input, parameters and labels must not be NULL");
  if (!labels->peak_patch_id || !labels->clump_id || !labels->halo_id)
    return phew_fail(result, PHEW_ERROR_ARGUMENT, "the three label arrays must be given");
  if (in->density_type != PHEW_FLOAT32 && in->density_type != PHEW_FLOAT64)
    return phew_fail(result, PHEW_ERROR_ARGUMENT, "unknown density type %d", (int)in->density_type);
  if (!isfinite(p->density_threshold) || p->density_threshold < 0.0)
    return phew_fail(result, PHEW_ERROR_ARGUMENT,
                     "the density threshold must be a finite number >= 0 (got %g)", p->density_threshold);
  if (!isfinite(p->relevance_threshold) || p->relevance_threshold < 0.0)
    return phew_fail(result, PHEW_ERROR_ARGUMENT,
                     "the relevance threshold must be a finite number >= 0 (got %g)", p->relevance_threshold);
  if (p->saddle_merging && !isfinite(p->saddle_threshold))
    return phew_fail(result, PHEW_ERROR_ARGUMENT, "the saddle threshold must be finite (got %g)",
                     p->saddle_threshold);
  if (isnan(p->mass_threshold))
    return phew_fail(result, PHEW_ERROR_ARGUMENT, "the mass threshold is NaN");
  return phew_comm_check(in, result);
}

static void fill_labels(phew_labels *labels, int64_t n, int64_t value)
{
  for (int64_t i = 0; i < n; ++i)
    labels->peak_patch_id[i] = labels->clump_id[i] = labels->halo_id[i] = value;
}

/* Number of label entries the caller provided, when the input says it unambiguously. */
static int64_t label_count(const phew_input *in, const phew_labels *labels)
{
  if (!in || !labels || !labels->peak_patch_id || !labels->clump_id || !labels->halo_id)
    return -1;
  if (in->mesh == PHEW_MESH_GRAPH)
    return in->graph.n_cells;
  if (in->mesh != PHEW_MESH_STRUCTURED)
    return -1;
  int64_t n = 1;
  for (int d = 0; d < 3; ++d) {
    if (in->grid.stored_dims[d] < 0 || (in->grid.stored_dims[d] > 0 && n > INT64_MAX / in->grid.stored_dims[d]))
      return -1;
    n *= in->grid.stored_dims[d];
  }
  return n;
}

typedef struct pipeline {
  const phew_input *in;
  phew_result *result;
  double t0;
  int stage;
} pipeline;

static void stage_begin(pipeline *pl, int stage)
{
  pl->stage = stage;
  pl->t0 = phew_seconds();
  if (pl->in->progress)
    pl->in->progress((double)stage / PHEW_STAGE_COUNT, phew_stage_name(stage), pl->in->progress_data);
}

static void stage_end(pipeline *pl)
{
  pl->result->stats.seconds[pl->stage] = phew_seconds() - pl->t0;
  pl->result->stats.iterations[pl->stage] = 1;
}

/* An isolated peak that is not relevant is noise with nowhere to go: it is discarded. */
static int64_t discard_isolated_noise(merge_state *noise, const peak_table *peaks, const phew_params *p)
{
  int64_t discarded = 0;
  for (int64_t i = 0; i < peaks->n; ++i)
    if (noise->alive[i] && noise->key_neighbour[i] < 0 &&
        peaks->density[i] / p->density_threshold < p->relevance_threshold) {
      noise->alive[i] = 0;
      ++discarded;
    }
  for (int64_t i = 0; i < peaks->n; ++i) { /* their groups lose their head */
    const int64_t g = noise->group[i];
    if (g >= 0 && !noise->alive[g])
      noise->group[i] = -1;
  }
  return discarded;
}

phew_status phew_find_clumps(const phew_input *in, const phew_params *params, phew_labels *labels,
                             phew_result *result)
{
  if (!result)
    return PHEW_ERROR_ARGUMENT;
  memset(result, 0, sizeof *result);
  result->stats.n_ranks = 1;
  phew_status s = check_arguments(in, params, labels, result);
  if (s == PHEW_OK && !in->density)
    s = phew_fail(result, PHEW_ERROR_ARGUMENT, "the density array must not be NULL");
  mesh m;
  if (s == PHEW_OK)
    s = mesh_init(&m, in, result);
  if (s != PHEW_OK) {
    const int64_t n = label_count(in, labels);
    if (n > 0)
      fill_labels(labels, n, -1);
    return s;
  }
  result->stats.n_cells = m.n_active;
  if (m.n_active != m.n_local) /* ghost cells that nothing else will label */
    fill_labels(labels, m.n_local, -1);

  field f = {NULL, NULL, params->density_threshold};
  if (in->density_type == PHEW_FLOAT32)
    f.f32 = in->density;
  else
    f.f64 = in->density;

  pipeline pl = {in, result, 0.0, 0};
  peak_table peaks = {0};
  edge_list edges = {0};
  merge_state noise = {0}, saddle = {0};

  stage_begin(&pl, PHEW_STAGE_WATERSHED);
  s = watershed_run(&m, &f, labels->peak_patch_id, labels->clump_id, &peaks, &result->stats, result);
  stage_end(&pl);
  if (s != PHEW_OK)
    goto fail;

  stage_begin(&pl, PHEW_STAGE_SADDLES);
  s = saddles_find(&m, &f, labels->clump_id, peaks.n, &edges, result);
  result->stats.n_saddle_pairs = edges.n;
  result->stats.max_sparse_entries = 2 * edges.n;
  result->stats.max_active_peaks = peaks.n;
  stage_end(&pl);
  if (s != PHEW_OK)
    goto fail;

  stage_begin(&pl, PHEW_STAGE_NOISE_REMOVAL);
  s = merge_state_init(&noise, peaks.n);
  if (s == PHEW_OK)
    s = merge_levels(&noise, &peaks, &edges, MERGE_BY_RELEVANCE, params->relevance_threshold,
                     params->density_threshold, params->peak_order_seed, result);
  if (s == PHEW_OK)
    result->stats.n_noise_discarded = discard_isolated_noise(&noise, &peaks, params);
  result->stats.noise_levels = noise.levels;
  stage_end(&pl);
  if (s != PHEW_OK)
    goto fail;

  stage_begin(&pl, PHEW_STAGE_SADDLE_MERGING);
  s = merge_state_init(&saddle, peaks.n);
  if (s == PHEW_OK) {
    memcpy(saddle.alive, noise.alive, (size_t)peaks.n);
    /* without saddle merging nothing merges, but the key saddles of the haloes are still found */
    const double threshold = params->saddle_merging ? params->saddle_threshold : INFINITY;
    s = merge_levels(&saddle, &peaks, &edges, MERGE_BY_SADDLE, threshold, params->density_threshold,
                     params->peak_order_seed, result);
  }
  result->stats.saddle_levels = saddle.levels;
  stage_end(&pl);
  if (s != PHEW_OK)
    goto fail;

  stage_begin(&pl, PHEW_STAGE_PROPERTIES);
  s = catalogue_build(&m, &f, params, &peaks, &noise, &saddle, labels->clump_id, labels, result);
  stage_end(&pl);
  if (s != PHEW_OK)
    goto fail;
  if (in->progress)
    in->progress(1.0, "done", in->progress_data);
  goto done;

fail:
  if (s == PHEW_ERROR_MEMORY && result->message[0] == '\0')
    phew_fail(result, s, "out of memory");
  fill_labels(labels, m.n_local, -1);
  phew_result_free(result);
done:
  peak_table_free(&peaks);
  edge_list_free(&edges);
  merge_state_free(&noise);
  merge_state_free(&saddle);
  return s;
}
