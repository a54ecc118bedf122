/* The halo finders end to end: the caller's particles -> subvolumes -> a finder's group key
 * per particle -> GroupIds and the catalogue -> the GroupIds back where the particles were
 * passed. */
#include "cube_root.h"
#include "halos.h"
#include "threads.h"

#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

void phew_fof_params_init(phew_fof_params *params)
{
  memset(params, 0, sizeof *params);
  params->linking_length = 0.2;
  params->absolute = 0;
  params->min_members = 20;
}

/* The linking length in the positions' units: relative ones times the mean interparticle
 * spacing (volume / N)^(1/3), the volume of the box, or of the particles' bounds. The cube
 * root is rounded correctly: n^3 particles on a lattice whose spacing L / n is a double (8^3
 * in a unit box: volume / N = 2^-9) get exactly that spacing, so that b = 1 links every pair of
 * neighbours; libm's cbrt(2^-9), a hair below 0.125, linked none. */
static phew_status linking_length(const points_context *x, const phew_fof_params *p, double *out)
{
  if (p->absolute) {
    *out = p->linking_length;
    return PHEW_OK;
  }
  double volume = 1.0;
  for (int d = 0; d < 3; ++d)
    volume *= x->points->has_box ? x->points->box_size[d] : x->hi[d] - x->lo[d];
  *out = p->linking_length * cube_root(volume / (double)x->n_total);
  if (!(*out > 0.0 && isfinite(*out)))
    return phew_fail(x->result, PHEW_ERROR_ARGUMENT,
                     "the linking length %g times the mean interparticle spacing is %g: give a box, or an absolute "
                     "linking length, when the particles span no volume",
                     p->linking_length, *out);
  return PHEW_OK;
}

static phew_status check_fof(const phew_fof_params *p, call_result *result)
{
  if (!p)
    return phew_fail(result, PHEW_ERROR_ARGUMENT, "no Friends-of-Friends parameters");
  if (!(p->linking_length > 0.0 && isfinite(p->linking_length)))
    return phew_fail(result, PHEW_ERROR_ARGUMENT, "the linking length must be positive and finite (got %g)",
                     p->linking_length);
  if (p->min_members < 1)
    return phew_fail(result, PHEW_ERROR_ARGUMENT, "the minimum number of members must be at least 1 (got %lld)",
                     (long long)p->min_members);
  return PHEW_OK;
}

static phew_status fof_groups(const phew_context *context, const phew_input *in, const phew_fof_params *params,
                              int64_t *group_id, call_result *result)
{
  comm c;
  memset(&c, 0, sizeof c);
  c.size = 1;
  points_context x;
  memset(&x, 0, sizeof x);
  particle_set s;
  memset(&s, 0, sizeof s);
  subvolume *parts = NULL;
  int64_t *key = NULL, *label = NULL;
  const int64_t n_passed = in && in->mesh == PHEW_MESH_POINTS ? in->points.n : 0;
  phew_status status = comm_init(&c, context, result);
  if (status != PHEW_OK)
    goto done;
  x.context = context;
  x.c = &c;
  x.result = result;
  if (!in || in->mesh != PHEW_MESH_POINTS)
    status = phew_fail(result, PHEW_ERROR_ARGUMENT, "Friends-of-Friends needs particles (mesh PHEW_MESH_POINTS)");
  else if (n_passed > 0 && !group_id)
    status = phew_fail(result, PHEW_ERROR_ARGUMENT, "Friends-of-Friends needs a GroupId array");
  else
    status = check_fof(params, result);
  status = comm_agree(&c, status, result);
  double t = phew_seconds();
  if (status == PHEW_OK)
    status = points_distribute(&x, in, POINTS_FOF, &s, &parts);
  result->stats.particle_seconds[PHEW_PARTICLE_DOMAIN] += phew_seconds() - t;
  double length = 0.0;
  if (status == PHEW_OK)
    status = comm_agree(&c, linking_length(&x, params, &length), result);
  if (status == PHEW_OK)
    result->linking_length_used = length;
  key = status == PHEW_OK ? phew_malloc((size_t)s.n_own + 1, sizeof *key) : NULL;
  label = status == PHEW_OK ? phew_malloc((size_t)s.n_own + 1, sizeof *label) : NULL;
  if (status == PHEW_OK && comm_max(&c, !key || !label))
    status = comm_agree(&c, phew_fail(result, PHEW_ERROR_MEMORY, "out of memory for the groups"), result);
  t = phew_seconds();
  if (status == PHEW_OK)
    status = fof_find(&x, parts, &s, length, params->min_members, key);
  result->stats.particle_seconds[PHEW_PARTICLE_NEIGHBOURS] += phew_seconds() - t;
  result->stats.max_padding = status == PHEW_OK ? comm_max(&c, s.n - s.n_own) : 0;
  s.n = s.n_own; /* the padding is no longer needed */
  t = phew_seconds();
  if (status == PHEW_OK) {
    const group_keys g = {key, NULL, params->min_members};
    status = groups_build(&x, &s, &g, label);
  }
  if (status == PHEW_OK)
    status = domain_return(&x, &s, label, sizeof *label, group_id, n_passed);
  result->stats.seconds[PHEW_STAGE_PROPERTIES] += phew_seconds() - t;
done:
  if (status != PHEW_OK) {
    call_result_free(result);
    for (int64_t i = 0; group_id && i < n_passed; ++i)
      group_id[i] = -1;
  }
  if (status == PHEW_OK) { /* times: the maximum over ranks */
    for (int k = 0; k < PHEW_PARTICLE_STAGE_COUNT; ++k)
      result->stats.particle_seconds[k] = comm_max_double(&c, result->stats.particle_seconds[k]);
    result->stats.seconds[PHEW_STAGE_PROPERTIES] = comm_max_double(&c, result->stats.seconds[PHEW_STAGE_PROPERTIES]);
  }
  result->stats.n_cells = x.n_total;
  result->stats.n_ranks = c.size;
  result->stats.n_threads = x.n_threads;
  particle_set_free(&s);
  free(parts);
  free(key);
  free(label);
  return status;
}

void phew_hop_params_init(phew_hop_params *params)
{
  memset(params, 0, sizeof *params);
  params->outer = 160.0;
  params->saddle_factor = 2.5;
  params->peak_factor = 3.0;
  params->n_hop = 64;
  params->n_merge = 4;
  params->min_members = 10;
}

static phew_status check_hop(const phew_hop_params *p, call_result *result)
{
  if (!p)
    return phew_fail(result, PHEW_ERROR_ARGUMENT, "no HOP parameters");
  if (!(p->outer > 0.0 && isfinite(p->outer)))
    return phew_fail(result, PHEW_ERROR_ARGUMENT, "the outer density threshold must be positive and finite (got %g)",
                     p->outer);
  if (!(p->saddle_factor > 0.0 && isfinite(p->saddle_factor * p->outer)))
    return phew_fail(result, PHEW_ERROR_ARGUMENT, "the saddle factor must be positive (got %g)", p->saddle_factor);
  if (!(p->peak_factor >= 1.0 && isfinite(p->peak_factor * p->outer)))
    return phew_fail(
        result, PHEW_ERROR_ARGUMENT,
        "the peak factor must be at least 1 (got %g): a proper group's peak lies above the outer threshold",
        p->peak_factor);
  if (p->n_hop < 1 || p->n_hop > 4096 || p->n_merge < 0 || p->n_merge > 4096)
    return phew_fail(result, PHEW_ERROR_ARGUMENT,
                     "HOP needs 1 to 4096 hop neighbours and 0 to 4096 merge neighbours (got %d and %d)", p->n_hop,
                     p->n_merge);
  if (p->min_members < 1)
    return phew_fail(result, PHEW_ERROR_ARGUMENT, "the minimum number of members must be at least 1 (got %lld)",
                     (long long)p->min_members);
  return PHEW_OK;
}

enum { PADDING_BLOCK = 4096 }; /* own particles per task of the padding lists' scan */

/* The scan for the padding particles in the lists: several threads may mark the same
 * particle, each with the same 1, so relaxed atomic stores suffice. */
typedef struct padding_scan {
  const particle_set *s;
  const hop_lists *lists;
  int depth;
  _Atomic uint8_t *wanted;
} padding_scan;

static void padding_task(void *context, int thread, int64_t task)
{
  (void)thread;
  const padding_scan *scan = context;
  const int64_t n_own = scan->s->n_own, begin = task * PADDING_BLOCK;
  const int64_t end = begin + PADDING_BLOCK < n_own ? begin + PADDING_BLOCK : n_own;
  for (int64_t i = begin; i < end; ++i)
    for (int k = 0; k < scan->depth; ++k) {
      const int32_t j = scan->lists->nearest[(size_t)i * (size_t)scan->lists->n_keep + (size_t)k];
      if (j >= n_own)
        atomic_store_explicit(&scan->wanted[j - n_own], 1, memory_order_relaxed);
    }
}

/* Per padding particle among the first `depth` of an own particle's list: 1 (all 0, without
 * a scan, when there is no padding: one rank). */
static _Atomic uint8_t *padding_in_lists(const points_context *x, const particle_set *s, const hop_lists *lists,
                                         int depth)
{
  padding_scan scan = {s, lists, depth, calloc((size_t)(s->n - s->n_own) + 1, 1)};
  if (scan.wanted && s->n > s->n_own)
    threads_run(x->n_threads, (s->n_own + PADDING_BLOCK - 1) / PADDING_BLOCK, padding_task, &scan);
  return scan.wanted;
}

static void reply_density(const void *context, int64_t i, void *out)
{
  memcpy(out, (const double *)context + i, sizeof(double));
}
static void reply_key(const void *context, int64_t i, void *out)
{
  memcpy(out, (const int64_t *)context + i, sizeof(int64_t));
}

/* Collective: per padding particle among the first `depth` of a list, its owner's value
 * (value_size bytes per own particle in `values`) into out (one per padding particle). */
static phew_status padding_from_owners(const points_context *x, const particle_set *s, const id_map *own,
                                       const hop_lists *lists, int depth, owner_reply reply, const void *values,
                                       size_t value_size, void *out)
{
  comm *c = x->c;
  const int64_t n_padding = s->n - s->n_own;
  _Atomic uint8_t *wanted = padding_in_lists(x, s, lists, depth);
  int64_t n = 0;
  for (int64_t j = 0; wanted && j < n_padding; ++j)
    n += atomic_load_explicit(&wanted[j], memory_order_relaxed);
  int64_t *id = phew_malloc((size_t)n + 1, sizeof *id);
  int32_t *rank = phew_malloc((size_t)n + 1, sizeof *rank);
  unsigned char *answers = phew_malloc((size_t)n + 1, value_size);
  phew_status status = PHEW_OK;
  if (comm_max(c, !wanted || !id || !rank || !answers))
    status = comm_agree(c, phew_fail(x->result, PHEW_ERROR_MEMORY, "out of memory for the padding"), x->result);
  for (int64_t j = 0, k = 0; status == PHEW_OK && j < n_padding; ++j)
    if (atomic_load_explicit(&wanted[j], memory_order_relaxed)) {
      id[k] = s->id[s->n_own + j];
      rank[k++] = s->owner[j];
    }
  if (status == PHEW_OK)
    status = ask_owners(x, own, rank, id, n, reply, values, value_size, answers);
  for (int64_t j = 0, k = 0; status == PHEW_OK && j < n_padding; ++j)
    if (atomic_load_explicit(&wanted[j], memory_order_relaxed))
      memcpy((unsigned char *)out + (size_t)j * value_size, answers + (size_t)k++ * value_size, value_size);
  free((void *)wanted);
  free(id);
  free(rank);
  free(answers);
  return status;
}

/* HOP's working arrays beside the particle path's run. */
typedef struct hop_work {
  id_map own; /* own particle's global id -> index (several ranks) */
  double *rho_padding;
  int64_t *key, *key_padding, *final_key, *label;
} hop_work;

static void hop_work_free(hop_work *w)
{
  if (w->own.slots)
    id_map_free(&w->own);
  free(w->rho_padding);
  free(w->key);
  free(w->key_padding);
  free(w->final_key);
  free(w->label);
}

/* Collective: the arrays of the hops and the regrouping. */
static phew_status hop_work_init(hop_work *w, points_run *run, call_result *result)
{
  const particle_set *s = &run->s;
  const int64_t n_own = s->n_own, n_padding = s->n - s->n_own;
  int ok = run->c.size == 1 || id_map_init(&w->own, n_own) == 0;
  for (int64_t i = 0; ok && run->c.size > 1 && i < n_own; ++i) {
    int64_t existing;
    ok = id_map_insert(&w->own, s->id[i], i, &existing) == 0;
  }
  w->rho_padding = phew_malloc((size_t)n_padding + 1, sizeof *w->rho_padding);
  w->key = phew_malloc((size_t)n_own + 1, sizeof *w->key);
  w->key_padding = phew_malloc((size_t)n_padding + 1, sizeof *w->key_padding);
  w->final_key = phew_malloc((size_t)n_own + 1, sizeof *w->final_key);
  w->label = phew_malloc((size_t)n_own + 1, sizeof *w->label);
  if (comm_max(&run->c, !ok || !w->rho_padding || !w->key || !w->key_padding || !w->final_key || !w->label))
    return comm_agree(&run->c, phew_fail(result, PHEW_ERROR_MEMORY, "out of memory for the HOP groups"), result);
  return PHEW_OK;
}

/* Collective: the hops (timed as the watershed) and the regrouping (as saddle merging) into
 * w->final_key. */
static phew_status hop_stages(points_run *run, hop_work *w, const phew_hop_params *params, call_result *result)
{
  const points_context *x = &run->x;
  const particle_set *s = &run->s;
  const hop_lists lists = {run->nr.nearest, run->nr.n_keep, params->n_hop, params->n_merge};
  double t = phew_seconds();
  const int depth = lists.n_hop - 1 > lists.n_merge ? lists.n_hop - 1 : lists.n_merge;
  phew_status status = padding_from_owners(x, s, &w->own, &lists, depth < lists.n_keep ? depth : lists.n_keep,
                                           reply_density, run->rho, sizeof(double), w->rho_padding);
  if (status == PHEW_OK)
    status = hop_chains(x, s, &w->own, &lists, run->rho, w->rho_padding, w->key);
  result->stats.seconds[PHEW_STAGE_WATERSHED] += phew_seconds() - t;
  t = phew_seconds();
  if (status == PHEW_OK)
    status = padding_from_owners(x, s, &w->own, &lists, lists.n_merge < lists.n_keep ? lists.n_merge : lists.n_keep,
                                 reply_key, w->key, sizeof(int64_t), w->key_padding);
  const hop_thresholds thresholds = {params->outer, params->saddle_factor * params->outer,
                                     params->peak_factor * params->outer};
  if (status == PHEW_OK)
    status = hop_regroup(x, s, &lists, run->rho, w->rho_padding, w->key, w->key_padding, &thresholds, w->final_key);
  result->stats.seconds[PHEW_STAGE_SADDLE_MERGING] += phew_seconds() - t;
  return status;
}

/* Collective: the group catalogue, and each particle's GroupId and density back where it was
 * passed. */
static phew_status hop_catalogue(points_run *run, hop_work *w, const phew_hop_params *params, int64_t n_passed,
                                 int64_t *group_id, double *density, call_result *result)
{
  const points_context *x = &run->x;
  particle_set *s = &run->s;
  const int64_t n_own = s->n_own;
  const double t = phew_seconds();
  s->n = n_own; /* the padding is no longer needed */
  const group_keys g = {w->final_key, run->rho, params->min_members};
  phew_status status = groups_build(x, s, &g, w->label);
  /* straight into the caller's arrays: no copies of a million particles' answers to fill */
  if (status == PHEW_OK)
    status = domain_return(x, s, w->label, sizeof *w->label, group_id, n_passed);
  if (status == PHEW_OK && comm_max(&run->c, density != NULL)) { /* a rank that wants none: into scratch */
    double *into = density ? density : phew_malloc((size_t)n_passed + 1, sizeof *into);
    if (comm_max(&run->c, !into))
      status = comm_agree(&run->c, phew_fail(result, PHEW_ERROR_MEMORY, "out of memory for the HOP groups"), result);
    else
      status = domain_return(x, s, run->rho, sizeof *run->rho, into, n_passed);
    if (into != density)
      free(into);
  }
  result->stats.seconds[PHEW_STAGE_PROPERTIES] += phew_seconds() - t;
  return status;
}

static phew_status hop_groups(const phew_context *context, const phew_input *in, const phew_hop_params *params,
                              int64_t *group_id, double *density, call_result *result)
{
  points_run run;
  memset(&run, 0, sizeof run);
  hop_work w;
  memset(&w, 0, sizeof w);
  const int64_t n_passed = in && in->mesh == PHEW_MESH_POINTS ? in->points.n : 0;
  phew_status status = comm_init(&run.c, context, result);
  if (status == PHEW_OK) {
    if (!in || in->mesh != PHEW_MESH_POINTS)
      status = phew_fail(result, PHEW_ERROR_ARGUMENT, "HOP needs particles (mesh PHEW_MESH_POINTS)");
    else if (n_passed > 0 && !group_id)
      status = phew_fail(result, PHEW_ERROR_ARGUMENT, "HOP needs a GroupId array");
    else
      status = check_hop(params, result);
    status = comm_agree(&run.c, status, result);
  }
  if (status == PHEW_OK) {
    /* the neighbours HOP needs: n_hop - 1 others to hop among, n_merge for the boundaries */
    phew_input hop_in = *in;
    const int n_keep = params->n_hop - 1 > params->n_merge ? params->n_hop - 1 : params->n_merge;
    hop_in.points.n_neighbours = n_keep > 1 ? n_keep : 1;
    run.n_ordered = params->n_merge > 0 ? params->n_merge : 1; /* the hops need only the set */
    status = points_prepare(&run, context, &hop_in, POINTS_HOP, result);
  }
  if (status == PHEW_OK)
    status = hop_work_init(&w, &run, result);
  if (status == PHEW_OK)
    status = hop_stages(&run, &w, params, result);
  if (status == PHEW_OK)
    status = hop_catalogue(&run, &w, params, n_passed, group_id, density, result);
  if (status != PHEW_OK) {
    call_result_free(result);
    for (int64_t i = 0; i < n_passed; ++i) {
      if (group_id)
        group_id[i] = -1;
      if (density)
        density[i] = NAN;
    }
  }
  points_run_stats(&run, result);
  for (int k = 0; k < PHEW_STAGE_COUNT; ++k)
    result->stats.seconds[k] = comm_max_double(&run.c, result->stats.seconds[k]);
  result->stats.n_cells = run.x.n_total;
  result->stats.n_ranks = run.c.size;
  hop_work_free(&w);
  points_run_free(&run);
  return status;
}

/* The group catalogue of a halo finder's call into the caller's result. */
static phew_status report_groups(phew_context *context, call_result *r, phew_status s, phew_group_result *result)
{
  call_result_report(r, s, context);
  *result = (phew_group_result){.columns = r->columns,
                                .n_groups = r->n_groups,
                                .groups = r->groups,
                                .stats = r->stats,
                                .linking_length_used = r->linking_length_used};
  return s;
}

phew_status phew_find_fof_groups(phew_context *context, const phew_input *in, const phew_fof_params *params,
                                 int64_t *group_id, phew_group_result *result)
{
  if (result)
    memset(result, 0, sizeof *result);
  if (!context || !result)
    return call_refused(context, "phew_find_fof_groups");
  call_result r;
  call_result_start(&r);
  return report_groups(context, &r, fof_groups(context, in, params, group_id, &r), result);
}

phew_status phew_find_hop_groups(phew_context *context, const phew_input *in, const phew_hop_params *params,
                                 int64_t *group_id, double *density, phew_group_result *result)
{
  if (result)
    memset(result, 0, sizeof *result);
  if (!context || !result)
    return call_refused(context, "phew_find_hop_groups");
  call_result r;
  call_result_start(&r);
  return report_groups(context, &r, hop_groups(context, in, params, group_id, density, &r), result);
}
