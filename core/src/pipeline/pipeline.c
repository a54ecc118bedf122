/* The stages of the clump finder on a mesh, in order: watershed, saddles, noise removal,
 * saddle merging, catalogue and labels. Each stage is timed and reported to the progress
 * callback; a cancel request stops every rank at the next stage. */
#include "pipeline.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct pipeline {
  const mesh *m;
  comm *c;
  const phew_context *context;
  call_result *result;
  run_control rc;
  double t0; /* the current stage's clock and bytes at its start */
  int64_t bytes0;
  int stage;
  field f;
  const phew_params *params; /* the caller's, then `used` */
  phew_params used;          /* with the automatic thresholds resolved */
  peak_table peaks;
  peak_comm pc;
  ghost_plan plan;
  int ghosts;         /* some rank has ghost cells: the ghost plan is needed */
  void *density_copy; /* graphs and AMR with ghosts: the density with the ghosts' values */
  edge_list edges;
  int64_t sparse_entries;
  merge_state noise, saddle;
  phew_labels *labels; /* the caller's, or `work` */
  phew_labels work;    /* AMR with ghosts: labels of the ghost cells too */
} pipeline;

static void fill_labels(phew_labels *labels, int64_t n, int64_t value)
{
  for (int64_t i = 0; i < n; ++i)
    labels->peak_patch_id[i] = labels->clump_id[i] = labels->halo_id[i] = value;
}

/* Each stage's share of a run, for progress: as timed on a 256^3 grid, where the watershed
 * and the catalogue with the labels take most of the time. */
static const double stage_share[PHEW_STAGE_COUNT] = {0.50, 0.10, 0.02, 0.02, 0.36};

/* Collective: starts the clock of `stage`, reports it, and stops every rank when one was asked
 * to (PHEW_CANCELLED); `s` is the status so far, kept when it is already an error. */
static phew_status stage_begin(pipeline *pl, int stage, phew_status s)
{
  pl->stage = stage;
  pl->t0 = phew_seconds();
  pl->bytes0 = pl->c->bytes_sent;
  double from = 0.0;
  for (int k = 0; k < stage; ++k)
    from += stage_share[k];
  const phew_status asked = run_control_stage(&pl->rc, pl->c, phew_stage_name(stage), from, from + stage_share[stage],
                                              pl->result);
  return s != PHEW_OK ? s : asked;
}

static void stage_end(pipeline *pl)
{
  phew_stats *st = &pl->result->stats;
  st->seconds[pl->stage] = phew_seconds() - pl->t0;
  st->bytes_sent[pl->stage] = pl->c->bytes_sent - pl->bytes0;
  if (st->iterations[pl->stage] == 0)
    st->iterations[pl->stage] = 1;
}

/* Graphs and AMR leaves read their ghost cells' densities from the owners, into a copy of
 * the density (the caller's array is never written). Collective. */
static phew_status local_density(pipeline *pl, const pipeline_density *density)
{
  const mesh *m = pl->m;
  comm *c = pl->c;
  const ghost_plan *plan = &pl->plan;
  const size_t size = density->type == PHEW_FLOAT32 ? sizeof(float) : sizeof(double);
  const int64_t n_given = m->kind == PHEW_MESH_AMR ? m->n_local - m->n_ghosts : m->n_local;
  unsigned char *local = phew_malloc((size_t)(m->n_local > 0 ? m->n_local : 1), size);
  unsigned char *answer = phew_malloc((size_t)(plan->n_answer > 0 ? plan->n_answer : 1), size);
  unsigned char *ask = phew_malloc((size_t)(plan->n_ask > 0 ? plan->n_ask : 1), size);
  phew_status s = PHEW_OK;
  if (comm_max(c, !local || !answer || !ask)) {
    s = phew_fail(pl->result, PHEW_ERROR_MEMORY, "out of memory while copying the density");
  } else {
    memcpy(local, density->values, (size_t)n_given * size);
    for (int64_t k = 0; k < plan->n_answer; ++k)
      memcpy(answer + (size_t)k * size, local + (size_t)plan->answer_cell[k] * size, size);
    s = ghost_plan_exchange(plan, c, answer, ask, size);
    if (comm_max(c, s != PHEW_OK))
      s = phew_fail(pl->result, PHEW_ERROR_MPI, "the exchange of ghost densities failed");
    for (int64_t k = 0; s == PHEW_OK && k < plan->n_ask; ++k)
      memcpy(local + (size_t)plan->ask_cell[k] * size, ask + (size_t)k * size, size);
  }
  free(answer);
  free(ask);
  if (s != PHEW_OK) {
    free(local);
    return s;
  }
  pl->density_copy = local;
  pl->f.f32 = density->type == PHEW_FLOAT32 ? (const float *)local : NULL;
  pl->f.f64 = density->type == PHEW_FLOAT32 ? NULL : (const double *)local;
  return PHEW_OK;
}

/* AMR labels cover ghost cells too while the stages run: working copies, copied back at the end. */
static phew_status working_labels(pipeline *pl)
{
  phew_labels *work = &pl->work;
  const size_t n = (size_t)(pl->m->n_local > 0 ? pl->m->n_local : 1);
  work->peak_patch_id = phew_malloc(n, sizeof(int64_t));
  work->clump_id = phew_malloc(n, sizeof(int64_t));
  work->halo_id = phew_malloc(n, sizeof(int64_t));
  if (comm_max(pl->c, !work->peak_patch_id || !work->clump_id || !work->halo_id))
    return phew_fail(pl->result, PHEW_ERROR_MEMORY, "out of memory for the labels of the AMR cells");
  pl->labels = work;
  return PHEW_OK;
}

/* The mean density (the caller's, or the mesh's) and the thresholds used, into the result.
 * Collective; bad densities are left to the watershed, which names them. */
static phew_status resolve_thresholds(pipeline *pl, const pipeline_density *density)
{
  call_result *result = pl->result;
  double mean = density->mean_known ? density->mean : NAN;
  int64_t n_bad = 0;
  if (!density->mean_known && mesh_mean_density(pl->m, &pl->f, pl->c, pl->rc.n_threads, &mean, &n_bad) != PHEW_OK)
    return phew_fail(result, PHEW_ERROR_MEMORY, "out of memory while summing the mean density");
  phew_status s = params_resolve(pl->params, mean, &pl->used, result);
  if (s != PHEW_OK && n_bad > 0) { /* the data's fault: let the watershed say so */
    result->message[0] = '\0';
    pl->used = *pl->params;
    pl->used.density_threshold = pl->used.saddle_threshold = 0.0;
    s = PHEW_OK;
  }
  result->mean_density = mean;
  result->density_threshold_used = pl->used.density_threshold;
  result->saddle_threshold_used = pl->used.saddle_merging ? pl->used.saddle_threshold : NAN;
  pl->params = &pl->used;
  pl->f.threshold = pl->used.density_threshold;
  return s;
}

/* The ghosts' densities, the thresholds, then every cell's peak patch (paper, section 2.2). */
static phew_status watershed_stage(pipeline *pl, const pipeline_density *density, phew_status s)
{
  const mesh *m = pl->m;
  call_result *result = pl->result;
  s = stage_begin(pl, PHEW_STAGE_WATERSHED, s);
  if (s == PHEW_OK && pl->ghosts)
    s = mesh_ghost_plan(m, pl->c, &pl->plan, result->message, sizeof result->message);
  if (s == PHEW_OK && pl->ghosts && m->kind != PHEW_MESH_STRUCTURED)
    s = local_density(pl, density);
  if (s == PHEW_OK)
    s = resolve_thresholds(pl, density);
  if (s == PHEW_OK)
    s = watershed_run(m, &pl->f, pl->ghosts ? &pl->plan : NULL, &pl->pc, &pl->rc, pl->labels->peak_patch_id,
                      pl->labels->clump_id, &result->stats, result);
  if (s == PHEW_OK && peak_comm_register(&pl->pc, PHEW_OK) != PHEW_OK)
    s = phew_fail(result, PHEW_ERROR_MEMORY, "out of memory while registering ghost peaks");
  stage_end(pl);
  return s;
}

/* The highest saddle between every two neighbouring patches (section 2.3). */
static phew_status saddles_stage(pipeline *pl)
{
  call_result *result = pl->result;
  phew_status s = stage_begin(pl, PHEW_STAGE_SADDLES, PHEW_OK);
  if (s == PHEW_OK)
    s = comm_agree(pl->c,
                   saddles_find(pl->m, &pl->f, pl->labels->clump_id, pl->peaks.n, pl->rc.n_threads, &pl->edges, result),
                   result);
  if (s == PHEW_OK && saddles_count_distinct(&pl->pc, &pl->edges, &result->stats.n_saddle_pairs) != PHEW_OK)
    s = phew_fail(result, PHEW_ERROR_MEMORY, "out of memory while counting saddle pairs");
  pl->sparse_entries = 2 * pl->edges.n; /* before merging shrinks the list */
  stage_end(pl);
  return s;
}

/* Collective: a merge state for every peak known here, alive where `alive` says (NULL: the
 * owned peaks); agreed over the ranks. */
static phew_status start_merging(pipeline *pl, merge_state *m, const merge_state *alive)
{
  phew_status s = merge_state_init(m, pl->peaks.n_owned, pl->peaks.n);
  if (s == PHEW_OK && alive)
    memcpy(m->alive, alive->alive, (size_t)pl->peaks.n);
  return comm_agree(pl->c, s == PHEW_OK ? s : phew_fail(pl->result, s, "out of memory while merging peaks"),
                    pl->result);
}

/* Peaks below the relevance threshold merge into their key neighbours (section 2.4). */
static phew_status noise_stage(pipeline *pl)
{
  call_result *result = pl->result;
  const phew_params *params = pl->params;
  phew_status s = stage_begin(pl, PHEW_STAGE_NOISE_REMOVAL, PHEW_OK);
  if (s != PHEW_OK)
    return s;
  s = start_merging(pl, &pl->noise, NULL);
  if (s == PHEW_OK)
    s = merge_levels(&pl->noise, &pl->pc, &pl->edges, MERGE_BY_RELEVANCE, params->relevance_threshold,
                     params->density_threshold, params->peak_order_seed,
                     &result->stats.iterations[PHEW_STAGE_NOISE_REMOVAL], result);
  if (s == PHEW_OK)
    s = merge_discard_isolated_noise(&pl->noise, &pl->pc, params->density_threshold, params->relevance_threshold,
                                     &result->stats.n_noise_discarded, result);
  result->stats.noise_levels = pl->noise.levels;
  stage_end(pl);
  return s;
}

/* Clumps whose key saddle is above the saddle threshold merge into haloes (section 2.5). */
static phew_status saddle_merging_stage(pipeline *pl)
{
  call_result *result = pl->result;
  const phew_params *params = pl->params;
  phew_status s = stage_begin(pl, PHEW_STAGE_SADDLE_MERGING, PHEW_OK);
  if (s != PHEW_OK)
    return s;
  s = start_merging(pl, &pl->saddle, &pl->noise);
  /* without saddle merging nothing merges, but the key saddles of the haloes are still found */
  if (s == PHEW_OK)
    s = merge_levels(&pl->saddle, &pl->pc, &pl->edges, MERGE_BY_SADDLE,
                     params->saddle_merging ? params->saddle_threshold : INFINITY, params->density_threshold,
                     params->peak_order_seed, &result->stats.iterations[PHEW_STAGE_SADDLE_MERGING], result);
  result->stats.saddle_levels = pl->saddle.levels;
  /* ghost peaks met while saddle merging are heads of their own clumps */
  if (s == PHEW_OK)
    s = comm_agree(pl->c,
                   merge_state_fit(&pl->noise, pl->peaks.n) == PHEW_OK
                       ? PHEW_OK
                       : phew_fail(result, PHEW_ERROR_MEMORY, "out of memory while merging peaks"),
                   result);
  stage_end(pl);
  return s;
}

/* The catalogue, the dendrogram and the labels of every cell (section 2.6). */
static phew_status catalogue_stage(pipeline *pl)
{
  phew_status s = stage_begin(pl, PHEW_STAGE_PROPERTIES, PHEW_OK);
  if (s == PHEW_OK)
    s = catalogue_build(pl->m, &pl->f, pl->params, &pl->pc, &pl->noise, &pl->saddle, &pl->rc, pl->labels, pl->result);
  stage_end(pl);
  return s;
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
  st->hash_collisions = comm_sum(c, peaks->index.collisions);
  st->n_cells = comm_sum(c, st->n_cells);
  st->n_ranks = c->size;
}

/* Collective: the labels, the density and the stages' state ready; the labels of cells that
 * are not active are -1 until the catalogue writes the ghosts'. */
static phew_status pipeline_start(pipeline *pl, const pipeline_density *density, phew_labels *labels)
{
  const mesh *m = pl->m;
  pl->f.f32 = density->type == PHEW_FLOAT32 ? density->values : NULL;
  pl->f.f64 = density->type == PHEW_FLOAT32 ? NULL : density->values;
  pl->labels = labels;
  pl->ghosts = pl->c->size > 1 || m->n_ghosts > 0;
  peak_comm_init(&pl->pc, pl->c, &pl->peaks);
  phew_status s = PHEW_OK;
  /* AMR ghosts need labels of their own; else the caller's arrays suffice */
  if (m->kind == PHEW_MESH_AMR && comm_max(pl->c, m->n_ghosts > 0))
    s = working_labels(pl);
  if (s == PHEW_OK && m->n_active != m->n_local) /* ghost cells are written at the end */
    fill_labels(pl->labels, m->n_local, -1);
  return s;
}

static void pipeline_free(pipeline *pl)
{
  free(pl->work.peak_patch_id);
  free(pl->work.clump_id);
  free(pl->work.halo_id);
  free(pl->density_copy);
  peak_table_free(&pl->peaks);
  edge_list_free(&pl->edges);
  merge_state_free(&pl->noise);
  merge_state_free(&pl->saddle);
  peak_comm_free(&pl->pc);
  ghost_plan_free(&pl->plan);
}

phew_status pipeline_run(const mesh *m, comm *c, const phew_context *context, const pipeline_density *density,
                         const phew_params *params, phew_labels *labels, call_result *result)
{
  pipeline pl = {.m = m, .c = c, .context = context, .result = result, .rc = {.context = context}, .params = params};
  pl.rc.n_threads = threads_resolve(context->n_threads); /* once: every stage runs on as many */
  result->stats.n_cells = m->n_active;
  result->stats.n_threads = pl.rc.n_threads;
  phew_status s = pipeline_start(&pl, density, labels);
  s = watershed_stage(&pl, density, s);
  if (s == PHEW_OK)
    s = saddles_stage(&pl);
  if (s == PHEW_OK)
    s = noise_stage(&pl);
  if (s == PHEW_OK)
    s = saddle_merging_stage(&pl);
  if (s == PHEW_OK)
    s = catalogue_stage(&pl);
  const int64_t n_own = m->kind == PHEW_MESH_AMR ? m->n_local - m->n_ghosts : m->n_local;
  if (s == PHEW_OK) {
    global_stats(c, &result->stats, &pl.peaks, pl.sparse_entries);
    if (pl.labels != labels) { /* the own blocks' cells come first */
      memcpy(labels->peak_patch_id, pl.work.peak_patch_id, (size_t)n_own * sizeof(int64_t));
      memcpy(labels->clump_id, pl.work.clump_id, (size_t)n_own * sizeof(int64_t));
      memcpy(labels->halo_id, pl.work.halo_id, (size_t)n_own * sizeof(int64_t));
    }
    if (context->progress)
      context->progress(1.0, "done", context->progress_data);
  } else {
    if (s == PHEW_ERROR_MEMORY && result->message[0] == '\0')
      phew_fail(result, s, "out of memory");
    fill_labels(labels, n_own, -1);
    call_result_free(result);
  }
  pipeline_free(&pl);
  return s;
}
