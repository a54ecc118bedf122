/* The pipeline: check the input, watershed, saddles, noise removal, saddle merging,
 * catalogue and labels. Each stage is timed and reported to the progress callback. */
#include "internal.h"

#include <math.h>
#include <string.h>

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
  return PHEW_OK;
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
  int64_t n;
  return phew_checked_product(in->grid.stored_dims, 3, &n) == 0 ? n : -1;
}

typedef struct pipeline {
  const phew_input *in;
  phew_result *result;
  comm *c;
  double t0;
  int64_t bytes0;
  int stage;
} pipeline;

static void stage_begin(pipeline *pl, int stage)
{
  pl->stage = stage;
  pl->t0 = phew_seconds();
  pl->bytes0 = pl->c->bytes_sent;
  if (pl->in->progress)
    pl->in->progress((double)stage / PHEW_STAGE_COUNT, phew_stage_name(stage), pl->in->progress_data);
}

static void stage_end(pipeline *pl)
{
  phew_stats *st = &pl->result->stats;
  st->seconds[pl->stage] = phew_seconds() - pl->t0;
  st->bytes_sent[pl->stage] = pl->c->bytes_sent - pl->bytes0;
  if (st->iterations[pl->stage] == 0)
    st->iterations[pl->stage] = 1;
}

/* Times become the maximum over ranks and volumes the sum, so every rank reports the same. */
static void global_stats(comm *c, phew_stats *st, const peak_table *peaks, int64_t sparse_entries)
{
  for (int k = 0; k < PHEW_STAGE_COUNT; ++k) {
    st->seconds[k] = comm_max_double(c, st->seconds[k]);
    st->bytes_sent[k] = comm_sum(c, st->bytes_sent[k]);
  }
  const int64_t ghosts = peaks->n - peaks->n_owned;
  st->max_active_peaks = comm_max(c, peaks->n_owned);
  st->max_ghost_peaks = comm_max(c, ghosts);
  st->max_ghost_ratio = comm_max_double(c, peaks->n_owned > 0 ? (double)ghosts / (double)peaks->n_owned : 0.0);
  st->max_sparse_entries = comm_max(c, sparse_entries);
  st->hash_collisions = comm_sum(c, peaks->collisions);
  st->n_cells = comm_sum(c, st->n_cells);
  st->n_ranks = c->size;
}

phew_status phew_find_clumps(const phew_input *in, const phew_params *params, phew_labels *labels,
                             phew_result *result)
{
  if (!result)
    return PHEW_ERROR_ARGUMENT;
  memset(result, 0, sizeof *result);
  result->stats.n_ranks = 1;
  comm c;
  phew_status s = comm_init(&c, in, result);
  if (s != PHEW_OK) { /* no communicator to agree over: every rank finds the same */
    const int64_t n = label_count(in, labels);
    if (n > 0)
      fill_labels(labels, n, -1);
    return s;
  }
  s = check_arguments(in, params, labels, result);
  if (s == PHEW_OK && !in->density)
    s = phew_fail(result, PHEW_ERROR_ARGUMENT, "the density array must not be NULL");
  if (s == PHEW_OK)
    s = comm_check_mesh(&c, in, result);
  mesh m;
  if (s == PHEW_OK)
    s = mesh_init(&m, in, c.size, result);
  s = comm_agree(&c, s, result); /* a bad block on one rank stops them all */
  if (s != PHEW_OK) {
    const int64_t n = label_count(in, labels);
    if (n > 0)
      fill_labels(labels, n, -1);
    return s;
  }
  result->stats.n_cells = m.n_active;
  if (m.n_active != m.n_local) /* ghost cells are written at the end */
    fill_labels(labels, m.n_local, -1);

  field f = {NULL, NULL, params->density_threshold};
  if (in->density_type == PHEW_FLOAT32)
    f.f32 = in->density;
  else
    f.f64 = in->density;

  pipeline pl = {in, result, &c, 0.0, 0, 0};
  peak_table peaks = {0};
  edge_list edges = {0};
  merge_state noise = {0}, saddle = {0};
  owners own = {0};
  ghost_plan plan = {0};
  peak_comm pc;
  const phew_grid *grid = in->mesh == PHEW_MESH_STRUCTURED ? &in->grid : NULL;
  const int ghosts = grid && (c.size > 1 || m.n_local != m.n_active);
  peak_comm_init(&pc, &c, &own, grid, &peaks);

  stage_begin(&pl, PHEW_STAGE_WATERSHED);
  if (ghosts) {
    s = owners_init(&own, &c, grid);
    if (s == PHEW_OK)
      s = ghost_plan_build(&plan, &c, grid, result->message, sizeof result->message);
    else
      s = phew_fail(result, s, "out of memory while planning the ghost exchange");
  }
  if (s == PHEW_OK)
    s = watershed_run(&m, &f, ghosts ? &plan : NULL, &pc, labels->peak_patch_id, labels->clump_id, &result->stats,
                      result);
  if (s == PHEW_OK && peak_comm_register(&pc, PHEW_OK) != PHEW_OK)
    s = phew_fail(result, PHEW_ERROR_MEMORY, "out of memory while registering ghost peaks");
  stage_end(&pl);
  if (s != PHEW_OK)
    goto fail;

  stage_begin(&pl, PHEW_STAGE_SADDLES);
  s = comm_agree(&c, saddles_find(&m, &f, labels->clump_id, peaks.n, &edges, result), result);
  if (s == PHEW_OK && saddles_count_distinct(&pc, &edges, &result->stats.n_saddle_pairs) != PHEW_OK)
    s = phew_fail(result, PHEW_ERROR_MEMORY, "out of memory while counting saddle pairs");
  const int64_t sparse_entries = 2 * edges.n; /* before merging shrinks the list */
  stage_end(&pl);
  if (s != PHEW_OK)
    goto fail;

  stage_begin(&pl, PHEW_STAGE_NOISE_REMOVAL);
  s = merge_state_init(&noise, peaks.n_owned, peaks.n);
  s = comm_agree(&c, s == PHEW_OK ? s : phew_fail(result, s, "out of memory while merging peaks"), result);
  if (s == PHEW_OK)
    s = merge_levels(&noise, &pc, &edges, MERGE_BY_RELEVANCE, params->relevance_threshold,
                     params->density_threshold, params->peak_order_seed,
                     &result->stats.iterations[PHEW_STAGE_NOISE_REMOVAL], result);
  if (s == PHEW_OK)
    s = merge_discard_isolated_noise(&noise, &pc, params->density_threshold, params->relevance_threshold,
                                     &result->stats.n_noise_discarded, result);
  result->stats.noise_levels = noise.levels;
  stage_end(&pl);
  if (s != PHEW_OK)
    goto fail;

  stage_begin(&pl, PHEW_STAGE_SADDLE_MERGING);
  s = merge_state_init(&saddle, peaks.n_owned, peaks.n);
  if (s == PHEW_OK)
    memcpy(saddle.alive, noise.alive, (size_t)peaks.n);
  s = comm_agree(&c, s == PHEW_OK ? s : phew_fail(result, s, "out of memory while merging peaks"), result);
  /* without saddle merging nothing merges, but the key saddles of the haloes are still found */
  if (s == PHEW_OK)
    s = merge_levels(&saddle, &pc, &edges, MERGE_BY_SADDLE, params->saddle_merging ? params->saddle_threshold : INFINITY,
                     params->density_threshold, params->peak_order_seed,
                     &result->stats.iterations[PHEW_STAGE_SADDLE_MERGING], result);
  result->stats.saddle_levels = saddle.levels;
  /* ghost peaks met while saddle merging are heads of their own clumps */
  if (s == PHEW_OK)
    s = comm_agree(&c, merge_state_fit(&noise, peaks.n) == PHEW_OK ? PHEW_OK
                       : phew_fail(result, PHEW_ERROR_MEMORY, "out of memory while merging peaks"), result);
  stage_end(&pl);
  if (s != PHEW_OK)
    goto fail;

  stage_begin(&pl, PHEW_STAGE_PROPERTIES);
  s = catalogue_build(&m, &f, params, &pc, &noise, &saddle, labels, result);
  stage_end(&pl);
  if (s != PHEW_OK)
    goto fail;
  global_stats(&c, &result->stats, &peaks, sparse_entries);
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
  peak_comm_free(&pc);
  ghost_plan_free(&plan);
  owners_free(&own);
  return s;
}
