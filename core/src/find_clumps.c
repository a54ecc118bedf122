/* The pipeline: check the input, watershed, saddles, noise removal, saddle merging,
 * catalogue and labels. Each stage is timed and reported to the progress callback. */
#include "internal.h"
#include "particles/points.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static phew_status check_arguments(const phew_input *in, const phew_params *p, const phew_labels *labels,
                                   phew_result *result)
{
  if (!in || !p || !labels)
    return phew_fail(result, PHEW_ERROR_ARGUMENT, "input, parameters and labels must not be NULL");
  if (!labels->peak_patch_id || !labels->clump_id || !labels->halo_id)
    return phew_fail(result, PHEW_ERROR_ARGUMENT, "the three label arrays must be given");
  if (in->labels_active_only && in->mesh != PHEW_MESH_STRUCTURED)
    return phew_fail(result, PHEW_ERROR_ARGUMENT, "labels_active_only applies to grids only");
  if (in->density_type != PHEW_FLOAT32 && in->density_type != PHEW_FLOAT64)
    return phew_fail(result, PHEW_ERROR_ARGUMENT, "unknown density type %d", (int)in->density_type);
  return params_check(p, result);
}

/* Negative thresholds are automatic (PHEW_THRESHOLD_AUTOMATIC): only NaN and +inf are refused. */
phew_status params_check(const phew_params *p, phew_result *result)
{
  if (isnan(p->density_threshold) || p->density_threshold == INFINITY)
    return phew_fail(result, PHEW_ERROR_ARGUMENT,
                     "the density threshold must be set: a finite number >= 0, or negative "
                     "(PHEW_THRESHOLD_AUTOMATIC) for 10 x the mean density (got %g)",
                     p->density_threshold);
  if (isnan(p->relevance_threshold) || p->relevance_threshold == INFINITY)
    return phew_fail(result, PHEW_ERROR_ARGUMENT, "the relevance threshold must be a finite number >= 1 (got %g)",
                     p->relevance_threshold);
  if (p->relevance_threshold < 1.0) /* a threshold below 1 reads as "more permissive", but is 1 */
    return phew_fail(result, PHEW_ERROR_ARGUMENT,
                     "the relevance threshold must be >= 1 (got %g): a peak's relevance, peak density / key "
                     "saddle density, is at least 1; 1 keeps every peak",
                     p->relevance_threshold);
  if (p->saddle_merging && (isnan(p->saddle_threshold) || p->saddle_threshold == INFINITY))
    return phew_fail(result, PHEW_ERROR_ARGUMENT,
                     "the saddle threshold must be set: a finite number, or negative (PHEW_THRESHOLD_AUTOMATIC) "
                     "for 2.5 x the density threshold (got %g)",
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

/* Graphs and AMR leaves read their ghost cells' densities from the owners, into a copy of
 * the density (the caller's array is never written). Collective. */
static phew_status local_density(const mesh *m, const phew_input *in, comm *c, const ghost_plan *plan, field *f,
                                 void **copy, phew_result *result)
{
  const size_t size = in->density_type == PHEW_FLOAT32 ? sizeof(float) : sizeof(double);
  const int64_t n_given = m->kind == PHEW_MESH_AMR ? m->n_local - m->n_ghosts : m->n_local;
  unsigned char *local = phew_malloc((size_t)(m->n_local > 0 ? m->n_local : 1), size);
  unsigned char *answer = phew_malloc((size_t)(plan->n_answer > 0 ? plan->n_answer : 1), size);
  unsigned char *ask = phew_malloc((size_t)(plan->n_ask > 0 ? plan->n_ask : 1), size);
  phew_status s = PHEW_OK;
  if (comm_max(c, !local || !answer || !ask)) {
    s = phew_fail(result, PHEW_ERROR_MEMORY, "out of memory while copying the density");
  } else {
    memcpy(local, in->density, (size_t)n_given * size);
    for (int64_t k = 0; k < plan->n_answer; ++k)
      memcpy(answer + (size_t)k * size, local + (size_t)plan->answer_cell[k] * size, size);
    s = ghost_plan_exchange(plan, c, answer, ask, size);
    if (comm_max(c, s != PHEW_OK))
      s = phew_fail(result, PHEW_ERROR_MPI, "the exchange of ghost densities failed");
    for (int64_t k = 0; s == PHEW_OK && k < plan->n_ask; ++k)
      memcpy(local + (size_t)plan->ask_cell[k] * size, ask + (size_t)k * size, size);
  }
  free(answer);
  free(ask);
  if (s != PHEW_OK) {
    free(local);
    return s;
  }
  *copy = local;
  f->f32 = in->density_type == PHEW_FLOAT32 ? (const float *)local : NULL;
  f->f64 = in->density_type == PHEW_FLOAT32 ? NULL : (const double *)local;
  return PHEW_OK;
}

/* AMR labels cover ghost cells too while the stages run: working copies, copied back at the end. */
static phew_status working_labels(const mesh *m, comm *c, phew_labels *work, phew_result *result)
{
  const size_t n = (size_t)(m->n_local > 0 ? m->n_local : 1);
  work->peak_patch_id = phew_malloc(n, sizeof(int64_t));
  work->clump_id = phew_malloc(n, sizeof(int64_t));
  work->halo_id = phew_malloc(n, sizeof(int64_t));
  if (comm_max(c, !work->peak_patch_id || !work->clump_id || !work->halo_id))
    return phew_fail(result, PHEW_ERROR_MEMORY, "out of memory for the labels of the AMR cells");
  return PHEW_OK;
}

/* The mean density (particles: the particle path's) and the thresholds used, into the result.
 * Collective; bad densities are left to the watershed, which names them. */
static phew_status resolve_thresholds(const mesh *m, const field *f, comm *c, const graph_extras *extras,
                                      const phew_params *params, phew_params *used, phew_result *result)
{
  double mean = extras ? extras->mean_density : NAN;
  int64_t n_bad = 0;
  if (!extras && mesh_mean_density(m, f, c, &mean, &n_bad) != PHEW_OK)
    return phew_fail(result, PHEW_ERROR_MEMORY, "out of memory while summing the mean density");
  phew_status s = params_resolve(params, mean, used, result);
  if (s != PHEW_OK && n_bad > 0) { /* the data's fault: let the watershed say so */
    result->message[0] = '\0';
    *used = *params;
    used->density_threshold = used->saddle_threshold = 0.0;
    s = PHEW_OK;
  }
  result->mean_density = mean;
  result->density_threshold_used = used->density_threshold;
  result->saddle_threshold_used = used->saddle_merging ? used->saddle_threshold : NAN;
  return s;
}

typedef struct pipeline {
  const phew_input *in;
  phew_result *result;
  comm *c;
  run_control rc;
  double t0;
  int64_t bytes0;
  int stage;
} pipeline;

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
  const phew_status asked =
      run_control_stage(&pl->rc, pl->c, phew_stage_name(stage), from, from + stage_share[stage], pl->result);
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
  if (result && in && in->mesh == PHEW_MESH_POINTS)
    return find_clumps_points(in, params, labels, result);
  return find_clumps_mesh(in, NULL, params, labels, result);
}

phew_status find_clumps_mesh(const phew_input *in, const graph_extras *extras, const phew_params *params,
                             phew_labels *labels, phew_result *result)
{
  if (!result)
    return PHEW_ERROR_ARGUMENT;
  memset(result, 0, sizeof *result);
  result->stats.n_ranks = 1;
  result->density_threshold_used = result->saddle_threshold_used = result->mean_density = NAN;
  comm c;
  phew_status s = comm_init(&c, in, result);
  if (s != PHEW_OK) { /* no communicator to agree over: every rank finds the same */
    const int64_t n = label_count(in, labels, c.rank);
    if (n > 0)
      fill_labels(labels, n, -1);
    return s;
  }
  s = check_arguments(in, params, labels, result);
  if (s == PHEW_OK && !in->density)
    s = phew_fail(result, PHEW_ERROR_ARGUMENT, "the density array must not be NULL");
  s = comm_agree(&c, s, result);
  mesh m;
  memset(&m, 0, sizeof m);
  if (s == PHEW_OK)
    s = mesh_init(&m, in, extras, &c, result); /* collective: a bad block on one rank stops them all */
  if (s != PHEW_OK) {
    const int64_t n = label_count(in, labels, c.rank);
    if (n > 0)
      fill_labels(labels, n, -1);
    mesh_free(&m);
    return s;
  }
  result->stats.n_cells = m.n_active;

  field f = {NULL, NULL, 0.0}; /* the threshold once it is known */
  if (in->density_type == PHEW_FLOAT32)
    f.f32 = in->density;
  else
    f.f64 = in->density;

  phew_params used; /* params with the automatic thresholds resolved */
  pipeline pl = {.in = in, .result = result, .c = &c, .rc = {.in = in}};
  peak_table peaks = {0};
  edge_list edges = {0};
  merge_state noise = {0}, saddle = {0};
  ghost_plan plan = {0};
  peak_comm pc;
  void *density_copy = NULL;
  phew_labels caller_labels = *labels, work = {0};
  const int amr = m.kind == PHEW_MESH_AMR;
  const int ghosts = c.size > 1 || m.n_ghosts > 0;
  peak_comm_init(&pc, &c, &peaks);
  const int amr_copies = amr && comm_max(&c, m.n_ghosts > 0); /* else the caller's arrays suffice */
  if (amr_copies) {
    s = working_labels(&m, &c, &work, result);
    labels = &work;
  }
  if (s == PHEW_OK && m.n_active != m.n_local) /* ghost cells are written at the end */
    fill_labels(labels, m.n_local, -1);

  s = stage_begin(&pl, PHEW_STAGE_WATERSHED, s);
  if (s == PHEW_OK && ghosts)
    s = mesh_ghost_plan(&m, &c, &plan, result->message, sizeof result->message);
  if (s == PHEW_OK && ghosts && m.kind != PHEW_MESH_STRUCTURED)
    s = local_density(&m, in, &c, &plan, &f, &density_copy, result);
  if (s == PHEW_OK) {
    s = resolve_thresholds(&m, &f, &c, extras, params, &used, result);
    params = &used;
    f.threshold = used.density_threshold;
  }
  if (s == PHEW_OK)
    s = watershed_run(&m, &f, ghosts ? &plan : NULL, &pc, &pl.rc, labels->peak_patch_id, labels->clump_id, &result->stats,
                      result);
  if (s == PHEW_OK && peak_comm_register(&pc, PHEW_OK) != PHEW_OK)
    s = phew_fail(result, PHEW_ERROR_MEMORY, "out of memory while registering ghost peaks");
  stage_end(&pl);
  if (s != PHEW_OK)
    goto fail;

  s = stage_begin(&pl, PHEW_STAGE_SADDLES, s);
  if (s == PHEW_OK)
    s = comm_agree(&c, saddles_find(&m, &f, labels->clump_id, peaks.n, &edges, result), result);
  if (s == PHEW_OK && saddles_count_distinct(&pc, &edges, &result->stats.n_saddle_pairs) != PHEW_OK)
    s = phew_fail(result, PHEW_ERROR_MEMORY, "out of memory while counting saddle pairs");
  const int64_t sparse_entries = 2 * edges.n; /* before merging shrinks the list */
  stage_end(&pl);
  if (s != PHEW_OK)
    goto fail;

  s = stage_begin(&pl, PHEW_STAGE_NOISE_REMOVAL, s);
  if (s != PHEW_OK)
    goto fail;
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

  s = stage_begin(&pl, PHEW_STAGE_SADDLE_MERGING, s);
  if (s != PHEW_OK)
    goto fail;
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

  s = stage_begin(&pl, PHEW_STAGE_PROPERTIES, s);
  if (s == PHEW_OK)
    s = catalogue_build(&m, &f, params, &pc, &noise, &saddle, &pl.rc, labels, result);
  stage_end(&pl);
  if (s != PHEW_OK)
    goto fail;
  global_stats(&c, &result->stats, &peaks, sparse_entries);
  if (amr_copies) { /* the own blocks' cells come first */
    const size_t n = (size_t)(m.n_local - m.n_ghosts) * sizeof(int64_t);
    memcpy(caller_labels.peak_patch_id, work.peak_patch_id, n);
    memcpy(caller_labels.clump_id, work.clump_id, n);
    memcpy(caller_labels.halo_id, work.halo_id, n);
  }
  if (in->progress)
    in->progress(1.0, "done", in->progress_data);
  goto done;

fail:
  if (s == PHEW_ERROR_MEMORY && result->message[0] == '\0')
    phew_fail(result, s, "out of memory");
  fill_labels(&caller_labels, amr ? m.n_local - m.n_ghosts : m.n_local, -1);
  phew_result_free(result);
done:
  free(work.peak_patch_id);
  free(work.clump_id);
  free(work.halo_id);
  free(density_copy);
  mesh_free(&m);
  peak_table_free(&peaks);
  edge_list_free(&edges);
  merge_state_free(&noise);
  merge_state_free(&saddle);
  peak_comm_free(&pc);
  ghost_plan_free(&plan);
  return s;
}
