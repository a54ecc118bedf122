/* From merged peaks to what users see: clumps and haloes in catalogue order, their
 * properties, the mass threshold, compact ids, and the per-cell ClumpId and HaloId.
 *
 * Each rank sums its cells into the structures they belong to; the sums of ghost heads go
 * to their owners (integer sums: the same bits whatever the split). Owners describe their
 * clumps in records gathered on rank 0, which orders them, applies the mass threshold,
 * fills the tables and the dendrogram, and sends the ids back; owners pass them on to the
 * ranks holding copies, and every rank labels its cells. */
#include "hierarchy.h"

#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

/* The heads of one kind of structure (clumps or haloes) among the peaks known here. */
typedef struct local_structures {
  int64_t n;
  int64_t *head;     /* local peak index of each head */
  int64_t *of_peak;  /* structure of every peak, -1 for none */
  double *reference; /* cell coordinates of each head (3 per structure) */
  sums *sums;
} local_structures;

static void local_structures_free(local_structures *s)
{
  free(s->head);
  free(s->of_peak);
  free(s->reference);
  free(s->sums);
  memset(s, 0, sizeof *s);
}

/* head_of[p] is the head of peak p's group (-1: none); a head is its own head. */
static phew_status local_structures_init(local_structures *s, const peak_table *peaks, const int64_t *head_of)
{
  memset(s, 0, sizeof *s);
  for (int64_t p = 0; p < peaks->n; ++p)
    s->n += head_of[p] == p;
  s->head = phew_malloc((size_t)s->n, sizeof *s->head);
  s->of_peak = phew_malloc((size_t)peaks->n, sizeof *s->of_peak);
  s->reference = phew_malloc((size_t)s->n * 3, sizeof *s->reference);
  s->sums = phew_malloc((size_t)s->n, sizeof *s->sums);
  if (!s->head || !s->of_peak || !s->reference || !s->sums)
    return PHEW_ERROR_MEMORY;
  int64_t k = 0;
  for (int64_t p = 0; p < peaks->n; ++p) {
    s->of_peak[p] = -1;
    if (head_of[p] == p) {
      s->of_peak[p] = k;
      s->head[k] = p;
      memcpy(&s->reference[3 * k], &peaks->coord[3 * p], 3 * sizeof(double));
      ++k;
    }
  }
  for (int64_t p = 0; p < peaks->n; ++p)
    s->of_peak[p] = head_of[p] >= 0 ? s->of_peak[head_of[p]] : -1;
  return PHEW_OK;
}

typedef struct sums_message {
  int64_t peak_id;
  sums s;
} sums_message;

/* The partial sums of ghost heads go to the heads' owners, which add them to their own. */
static phew_status send_to_owners(peak_comm *pc, local_structures *s)
{
  const peak_table *peaks = pc->peaks;
  outbox o;
  outbox_init(&o, pc->c, sizeof(sums_message));
  for (int64_t i = 0; i < s->n; ++i) {
    const int64_t p = s->head[i];
    if (p >= peaks->n_owned && s->sums[i].n_cells > 0) {
      sums_message m;
      memset(&m, 0, sizeof m); /* padding too: messages compare and travel bytewise */
      m.peak_id = peaks->global_id[p];
      m.s = s->sums[i];
      outbox_put(&o, peaks->owner[p], &m);
    }
  }
  inbox in;
  phew_status status = outbox_send(&o, pc->c, &in);
  outbox_free(&o);
  for (int64_t k = 0; status == PHEW_OK && k < in.n; ++k) {
    sums_message m;
    memcpy(&m, in.items + (size_t)k * sizeof m, sizeof m);
    const int64_t p = peak_table_find(peaks, m.peak_id);
    if (p < 0 || p >= peaks->n_owned || s->of_peak[p] < 0 || s->head[s->of_peak[p]] != p)
      status = PHEW_ERROR_MPI;
    else
      sums_merge(&s->sums[s->of_peak[p]], &m.s);
  }
  inbox_free(&in);
  return status;
}

/* Sums of this rank's cells in every clump and every halo (each about its own peak); then the
 * parts of ghost heads go to their owners. */
static phew_status sum_structures(const mesh *mesh, const field *f, peak_comm *pc, const int64_t *cell_peak,
                                  run_control *rc, local_structures *clumps, local_structures *haloes)
{
  for (int64_t i = 0; i < clumps->n; ++i)
    sums_start(&clumps->sums[i], mesh, pc->peaks->density[clumps->head[i]]);
  for (int64_t i = 0; i < haloes->n; ++i)
    sums_start(&haloes->sums[i], mesh, pc->peaks->density[haloes->head[i]]);
  const sum_target targets[2] = {
      {clumps->of_peak, clumps->reference, clumps->sums, clumps->n, clumps->head, pc->peaks->density},
      {haloes->of_peak, haloes->reference, haloes->sums, haloes->n, haloes->head, pc->peaks->density}};
  /* one pass over the cells for both */
  const phew_status summed = sums_accumulate(mesh, f, cell_peak, targets, 2, rc);
  const phew_status a = send_to_owners(pc, clumps);
  const phew_status b = send_to_owners(pc, haloes);
  return summed != PHEW_OK ? summed : a != PHEW_OK ? a : b;
}

/* Particles: once the owners know the sums of their structures, the centres of mass and
 * mean velocities go to every rank holding a copy of the head, each rank sums the spread of
 * its particles about them, and the owners add those partial sums to their own. */
static phew_status spread_structures(const mesh *mesh, peak_comm *pc, const int64_t *cell_peak,
                                     local_structures *clumps, local_structures *haloes)
{
  const peak_table *peaks = pc->peaks;
  local_structures *kinds[2] = {clumps, haloes};
  double *centre_of_peak = phew_malloc((size_t)(peaks->n > 0 ? peaks->n : 1), 12 * sizeof(double));
  double *centre[2] = {phew_malloc((size_t)clumps->n + 1, 6 * sizeof(double)),
                       phew_malloc((size_t)haloes->n + 1, 6 * sizeof(double))};
  sums *spread[2] = {phew_malloc((size_t)clumps->n + 1, sizeof(sums)),
                     phew_malloc((size_t)haloes->n + 1, sizeof(sums))};
  phew_status status = PHEW_ERROR_MEMORY;
  const int failed = !centre_of_peak || !centre[0] || !centre[1] || !spread[0] || !spread[1];
  if (comm_max(pc->c, failed))
    goto done;
  memset(centre_of_peak, 0, (size_t)peaks->n * 12 * sizeof(double));
  for (int t = 0; t < 2; ++t)
    for (int64_t i = 0; i < kinds[t]->n; ++i)
      if (kinds[t]->head[i] < peaks->n_owned)
        sums_centre(mesh, &kinds[t]->sums[i], &kinds[t]->reference[3 * i],
                    centre_of_peak + 12 * kinds[t]->head[i] + 6 * t);
  if (peak_comm_scatter(pc, centre_of_peak, 12 * sizeof(double), NULL, NULL, NULL) != PHEW_OK)
    goto done;
  for (int t = 0; t < 2; ++t)
    for (int64_t i = 0; i < kinds[t]->n; ++i) {
      memcpy(centre[t] + 6 * i, centre_of_peak + 12 * kinds[t]->head[i] + 6 * t, 6 * sizeof(double));
      sums_clear(&spread[t][i]);
    }
  const sum_target targets[2] = {{clumps->of_peak, clumps->reference, spread[0], clumps->n, NULL, NULL},
                                 {haloes->of_peak, haloes->reference, spread[1], haloes->n, NULL, NULL}};
  sums_accumulate_spread(mesh, cell_peak, targets, (const double *const *)centre, 2);
  status = PHEW_OK;
  for (int t = 0; t < 2; ++t) { /* the partial spreads travel as sums do */
    sums *first = kinds[t]->sums;
    kinds[t]->sums = spread[t];
    const phew_status sent = send_to_owners(pc, kinds[t]);
    kinds[t]->sums = first;
    if (sent != PHEW_OK)
      status = sent;
    for (int64_t i = 0; i < kinds[t]->n; ++i)
      if (kinds[t]->head[i] < peaks->n_owned)
        sums_merge_spread(&first[i], &spread[t][i]);
  }
done:
  free(centre_of_peak);
  for (int t = 0; t < 2; ++t) {
    free(centre[t]);
    free(spread[t]);
  }
  return status;
}

/* The records of the clumps this rank owns. */
static clump_record *describe_clumps(const peak_table *peaks, const merge_state *noise, const merge_state *saddle,
                                     const local_structures *clumps, const local_structures *haloes,
                                     const int64_t *halo_head, int64_t *n_records)
{
  int64_t n = 0;
  for (int64_t i = 0; i < clumps->n; ++i)
    n += clumps->head[i] < peaks->n_owned;
  clump_record *r = phew_malloc((size_t)n, sizeof *r);
  int64_t *event_of = phew_malloc((size_t)peaks->n_owned, sizeof *event_of);
  if (!r || !event_of) {
    free(r);
    free(event_of);
    return NULL;
  }
  for (int64_t p = 0; p < peaks->n_owned; ++p)
    event_of[p] = -1;
  for (int64_t e = 0; e < saddle->n_events; ++e)
    event_of[saddle->events[e].child] = e;
  n = 0;
  for (int64_t i = 0; i < clumps->n; ++i) {
    const int64_t p = clumps->head[i];
    if (p >= peaks->n_owned)
      continue;
    clump_record *x = &r[n++];
    memset(x, 0, sizeof *x);
    x->peak_id = peaks->global_id[p];
    x->peak_density = peaks->density[p];
    memcpy(x->coord, &peaks->coord[3 * p], sizeof x->coord);
    x->isolated = noise->key_neighbour[p] < 0;
    x->key_saddle = noise->key_saddle[p];
    const int64_t h = halo_head[p];
    x->is_halo = h == p;
    x->halo_peak_id = peaks->global_id[h];
    x->halo_peak_density = peaks->density[h];
    x->clump = clumps->sums[i];
    if (x->is_halo) {
      x->halo_isolated = saddle->key_neighbour[p] < 0;
      x->halo_key_saddle = saddle->key_saddle[p];
      x->halo = haloes->sums[haloes->of_peak[p]];
    }
    if (event_of[p] >= 0) {
      const merge_event *ev = &saddle->events[event_of[p]];
      x->merge_level = ev->level;
      x->parent_peak_id = peaks->global_id[ev->parent];
      x->parent_peak_density = peaks->density[ev->parent];
      x->merge_saddle = ev->saddle;
    }
  }
  free(event_of);
  *n_records = n;
  return r;
}

/* ---- rank 0: the catalogue from the records ------------------------------------------- */

static int compare_records(const void *pa, const void *pb)
{
  const clump_record *a = *(const clump_record *const *)pa, *b = *(const clump_record *const *)pb;
  if (a->peak_density != b->peak_density)
    return a->peak_density > b->peak_density ? -1 : 1;
  return a->peak_id < b->peak_id ? -1 : (a->peak_id > b->peak_id);
}

/* Catalogue index of the clump with this peak (records sorted), -1 if none. */
static int64_t clump_index(clump_record *const *sorted, int64_t n, int64_t peak_id, double density)
{
  clump_record key;
  key.peak_id = peak_id;
  key.peak_density = density;
  const clump_record *k = &key;
  clump_record *const *hit = bsearch(&k, sorted, (size_t)n, sizeof *sorted, compare_records);
  return hit ? hit - sorted : -1;
}

static int merger_level_order(const void *pa, const void *pb)
{
  const merger *a = pa, *b = pb;
  if (a->level != b->level)
    return a->level < b->level ? -1 : 1;
  return a->child < b->child ? -1 : (a->child > b->child);
}

/* What a message calls the structure of a record. */
static void describe(char *text, size_t size, const char *kind, const clump_record *r, const mesh *m)
{
  snprintf(text, size, "the %s whose peak is %s %lld (density %g)", kind, m->particles ? "particle" : "cell",
           (long long)r->peak_id, r->peak_density);
}

static phew_status fill_object(phew_object *o, int64_t id, const clump_record *r, const sums *x, double key_saddle,
                               int isolated, const mesh *mesh, const char *kind, double density_threshold,
                               call_result *result)
{
  memset(o, 0, sizeof *o);
  o->id = id;
  o->halo_id = -1;
  o->parent_id = -1;
  o->peak_id = r->peak_id;
  o->n_cells = x->n_cells;
  o->n_clumps = 1;
  o->peak_density = r->peak_density;
  o->radius = o->velocity_dispersion = NAN;
  for (int d = 0; d < 3; ++d)
    o->mean_velocity[d] = NAN;
  char object[128], why[sizeof result->message];
  describe(object, sizeof object, kind, r, mesh);
  if (sums_values(mesh, x, r->coord, object, o, why, sizeof why) != 0)
    return phew_fail(result, PHEW_ERROR_DATA, "%s", why);
  o->key_saddle_density = isolated ? density_threshold : key_saddle;
  /* +inf when the key saddle is 0 (an isolated clump at threshold 0) or the ratio exceeds
   * the double range: larger than any relevance threshold, which is what it is compared to */
  o->relevance = o->peak_density / o->key_saddle_density;
  return PHEW_OK;
}

/* final_id[i] = rank of structure i among those with mass above the threshold, else -1. The
 * comparison is exact: a mass beyond the double range is still above or below it. */
static int64_t threshold_ids(int64_t n, const sums *const *s, const mesh *mesh, double mass_threshold,
                             int64_t *final_id)
{
  int64_t kept = 0;
  for (int64_t i = 0; i < n; ++i) {
    int above;
    if (isinf(mass_threshold))
      above = mass_threshold < 0.0;
    else
      above = wide_compare(sums_mass_value(mesh, &s[i]->mass), wide_from_double(mass_threshold)) > 0;
    final_id[i] = above ? kept++ : -1;
  }
  return kept;
}

/* ids[2 * k] and ids[2 * k + 1]: ClumpId and HaloId of the k-th gathered record. */
/* The catalogue as rank 0 assembles it: the clumps in catalogue order and what each says
 * about its halo and its mergers. */
typedef struct assembly {
  int64_t n; /* clumps */
  clump_record **sorted;
  int64_t *clump_id;
  int64_t *halo_of;    /* halo index of each clump */
  int64_t *halo_index; /* of a clump heading a halo, else -1 */
  int64_t *halo_head;  /* clump heading each halo */
  int64_t *halo_id;
  double *root_saddle; /* per halo */
  const sums **clump_sums, **halo_sums;
  merger *mergers;
  int64_t n_haloes, n_mergers;
} assembly;

static int assembly_init(assembly *a, clump_record *records, int64_t n)
{
  a->n = n;
  a->sorted = phew_malloc((size_t)n, sizeof *a->sorted);
  a->clump_id = phew_malloc((size_t)n, sizeof *a->clump_id);
  a->halo_of = phew_malloc((size_t)n, sizeof *a->halo_of);
  a->halo_index = phew_malloc((size_t)n, sizeof *a->halo_index);
  a->halo_head = phew_malloc((size_t)n, sizeof *a->halo_head);
  a->halo_id = phew_malloc((size_t)n, sizeof *a->halo_id);
  a->root_saddle = phew_malloc((size_t)n, sizeof *a->root_saddle);
  a->clump_sums = phew_malloc((size_t)n, sizeof *a->clump_sums);
  a->halo_sums = phew_malloc((size_t)n, sizeof *a->halo_sums);
  a->mergers = phew_malloc((size_t)n, sizeof *a->mergers);
  if (!a->sorted || !a->clump_id || !a->halo_of || !a->halo_index || !a->halo_head || !a->halo_id || !a->root_saddle ||
      !a->clump_sums || !a->halo_sums || !a->mergers)
    return 0;
  for (int64_t i = 0; i < n; ++i)
    a->sorted[i] = &records[i];
  qsort(a->sorted, (size_t)n, sizeof *a->sorted, compare_records);
  return 1;
}

static void assembly_free(assembly *a)
{
  free(a->sorted);
  free(a->clump_id);
  free(a->halo_of);
  free(a->halo_index);
  free(a->halo_head);
  free(a->halo_id);
  free(a->root_saddle);
  free(a->clump_sums);
  free(a->halo_sums);
  free(a->mergers);
}

/* The haloes (the clumps heading one), each clump's halo and the saddle-merging events. */
static phew_status link_structures(assembly *a, const phew_params *params, call_result *result)
{
  for (int64_t c = 0; c < a->n; ++c) {
    const clump_record *r = a->sorted[c];
    a->clump_sums[c] = &r->clump;
    a->halo_index[c] = -1;
    if (r->is_halo) {
      a->halo_index[c] = a->n_haloes;
      a->halo_head[a->n_haloes] = c;
      a->halo_sums[a->n_haloes] = &r->halo;
      a->root_saddle[a->n_haloes] = r->halo_isolated ? params->density_threshold : r->halo_key_saddle;
      ++a->n_haloes;
    }
  }
  for (int64_t c = 0; c < a->n; ++c) {
    const clump_record *r = a->sorted[c];
    const int64_t head = clump_index(a->sorted, a->n, r->halo_peak_id, r->halo_peak_density);
    a->halo_of[c] = head >= 0 ? a->halo_index[head] : -1;
    if (a->halo_of[c] < 0)
      return phew_fail(result, PHEW_ERROR_MPI, "clump %lld has no halo", (long long)r->peak_id);
    if (r->merge_level > 0) {
      const int64_t parent = clump_index(a->sorted, a->n, r->parent_peak_id, r->parent_peak_density);
      a->mergers[a->n_mergers++] = (merger){c, parent, r->merge_saddle, r->merge_level};
    }
  }
  qsort(a->mergers, (size_t)a->n_mergers, sizeof *a->mergers, merger_level_order);
  return PHEW_OK;
}

/* The rows of the haloes and clumps above the mass threshold. */
static phew_status write_rows(const assembly *a, const mesh *mesh, const phew_params *params, call_result *result)
{
  for (int64_t h = 0; h < a->n_haloes; ++h) {
    if (a->halo_id[h] < 0)
      continue;
    const clump_record *r = a->sorted[a->halo_head[h]];
    phew_object *o = &result->haloes[a->halo_id[h]];
    const phew_status status = fill_object(o, a->halo_id[h], r, &r->halo, r->halo_key_saddle, r->halo_isolated, mesh,
                                           "halo", params->density_threshold, result);
    if (status != PHEW_OK)
      return status;
    o->halo_id = o->id;
    o->n_clumps = 0;
  }
  for (int64_t c = 0; c < a->n; ++c) {
    const clump_record *r = a->sorted[c];
    const int64_t h = a->halo_id[a->halo_of[c]];
    if (h >= 0) {
      phew_object *halo = &result->haloes[h];
      halo->n_clumps++;
      if (halo->level < r->merge_level)
        halo->level = r->merge_level;
    }
    if (a->clump_id[c] < 0)
      continue;
    phew_object *o = &result->clumps[a->clump_id[c]];
    const phew_status status = fill_object(o, a->clump_id[c], r, &r->clump, r->key_saddle, r->isolated, mesh, "clump",
                                           params->density_threshold, result);
    if (status != PHEW_OK)
      return status;
    o->halo_id = h;
  }
  for (int64_t e = 0; e < a->n_mergers; ++e) {
    const int64_t child = a->clump_id[a->mergers[e].child];
    if (child >= 0) {
      result->clumps[child].parent_id = a->clump_id[a->mergers[e].parent];
      result->clumps[child].level = a->mergers[e].level;
    }
  }
  return PHEW_OK;
}

static phew_status assemble(const mesh *mesh, const phew_params *params, clump_record *records, int64_t n, int64_t *ids,
                            call_result *result)
{
  assembly a;
  memset(&a, 0, sizeof a);
  phew_status status = assembly_init(&a, records, n)
                           ? link_structures(&a, params, result)
                           : phew_fail(result, PHEW_ERROR_MEMORY, "out of memory while building the catalogue");
  int64_t n_clumps_kept = 0, n_haloes_kept = 0;
  if (status == PHEW_OK) {
    n_clumps_kept = threshold_ids(n, a.clump_sums, mesh, params->mass_threshold, a.clump_id);
    n_haloes_kept = threshold_ids(a.n_haloes, a.halo_sums, mesh, params->mass_threshold, a.halo_id);
    result->clumps = phew_malloc((size_t)n_clumps_kept, sizeof *result->clumps);
    result->haloes = phew_malloc((size_t)n_haloes_kept, sizeof *result->haloes);
    if (!result->clumps || !result->haloes)
      status = phew_fail(result, PHEW_ERROR_MEMORY, "out of memory while building the catalogue");
  }
  if (status == PHEW_OK)
    status = write_rows(&a, mesh, params, result);
  if (status == PHEW_OK) {
    result->n_clumps = n_clumps_kept;
    result->n_haloes = n_haloes_kept;
    for (int64_t c = 0; c < n; ++c) {
      const int64_t k = a.sorted[c] - records;
      ids[2 * k] = a.clump_id[c];
      ids[2 * k + 1] = a.halo_id[a.halo_of[c]];
    }
    const hierarchy_input h = {n,           (const clump_record *const *)a.sorted,
                               a.clump_id,  a.halo_of,
                               a.n_mergers, a.mergers,
                               a.halo_id,   a.root_saddle,
                               a.halo_sums, mesh};
    status = hierarchy_build(&h, result);
  }
  assembly_free(&a);
  return status;
}

/* ---- back on every rank: ids of the heads, then the cells ------------------------------ */

typedef struct head_ids {
  int64_t clump, halo;
} head_ids;

/* The labels of cell i (its peak in clump_id until then) go to entry `to`. */
static inline void label_cell(const peak_table *peaks, const merge_state *noise, const head_ids *ids,
                              phew_labels *labels, int64_t i, int64_t to)
{
  const int64_t p = labels->clump_id[i];
  const int64_t h = p >= 0 ? noise->group[p] : -1;
  labels->peak_patch_id[to] = p >= 0 ? peaks->global_id[p] : -1;
  labels->halo_id[to] = h >= 0 ? ids[h].halo : -1;
  labels->clump_id[to] = h >= 0 ? ids[h].clump : -1;
}

typedef struct label_job {
  const peak_table *peaks;
  const merge_state *noise;
  const head_ids *ids;
  phew_labels *labels;
  int64_t n;
} label_job;

static void label_task(void *context, int thread, int64_t task)
{
  (void)thread;
  const label_job *j = context;
  const int64_t end = (task + 1) * RUN_CONTROL_CELLS < j->n ? (task + 1) * RUN_CONTROL_CELLS : j->n;
  for (int64_t i = task * RUN_CONTROL_CELLS; i < end; ++i)
    label_cell(j->peaks, j->noise, j->ids, j->labels, i, i);
}

/* Ticks rc; leaves early (the labels unfinished) when rc says stop. */
static void label_cells(const mesh *mesh, const peak_table *peaks, const merge_state *noise, const head_ids *ids,
                        run_control *rc, phew_labels *labels)
{
  if (mesh->active_labels) {
    /* In place, in storage order: each active cell's entry goes to an index no larger than
     * its own, so no cell's peak is overwritten before it is read (one thread: another's
     * entries could land on cells not read yet). */
    const block *b = &mesh->b;
    int64_t to = 0;
    for (int64_t z = b->lo[2]; z < b->hi[2]; ++z) {
      if (run_control_tick(rc, z - b->lo[2], b->hi[2] - b->lo[2]))
        return;
      for (int64_t y = b->lo[1]; y < b->hi[1]; ++y)
        for (int64_t x = b->lo[0], i = (z * b->dims[1] + y) * b->dims[0] + x; x < b->hi[0]; ++x, ++i)
          label_cell(peaks, noise, ids, labels, i, to++);
    }
    return;
  }
  /* each cell in place, on the threads: a task of cells per tick */
  label_job j = {peaks, noise, ids, labels, mesh->n_local};
  run_control_threads(rc, (mesh->n_local + RUN_CONTROL_CELLS - 1) / RUN_CONTROL_CELLS, label_task, &j);
}

/* The share of the stage's time taken by summing the cells, for progress: on a 256^3 grid,
 * 0.04 s for the sums (only cells above the threshold count) and 0.3 s for the labels of every
 * cell (three arrays written). */
#define SUMS_SHARE 0.15

/* What the steps of catalogue_build share; the arrays are freed at the end. */
typedef struct catalogue_work {
  const mesh *mesh;
  peak_comm *pc;
  const merge_state *noise, *saddle;
  run_control *rc;
  phew_labels *labels;
  call_result *result;
  local_structures clumps, haloes;
  int64_t *halo_head;       /* per peak: the head of its halo, or -1 */
  head_ids *ids;            /* per peak: the ids of the clump and halo it heads */
  clump_record *mine, *all; /* the records of this rank's clumps; rank 0: of every rank's */
  int64_t n_mine, n_all;
  int *counts;               /* rank 0: the records per rank */
  int64_t *all_ids, *my_ids; /* rank 0: the ids of every clump (two each); the ids of this rank's */
} catalogue_work;

static void catalogue_work_free(catalogue_work *w)
{
  local_structures_free(&w->clumps);
  local_structures_free(&w->haloes);
  free(w->halo_head);
  free(w->ids);
  free(w->mine);
  free(w->all);
  free(w->counts);
  free(w->all_ids);
  free(w->my_ids);
}

/* Collective, every rank at the same point: the one error of the steps that run out of
 * memory. */
static phew_status catalogue_out_of_memory(comm *c, call_result *result)
{
  return comm_agree(c, phew_fail(result, PHEW_ERROR_MEMORY, "out of memory while building the catalogue"), result);
}

/* Collective: the clumps and haloes among the peaks known here, with the references of their
 * sums: the ghost peaks' coordinates, from their owners. */
static phew_status find_structures(catalogue_work *w)
{
  const peak_table *peaks = w->pc->peaks;
  w->halo_head = phew_malloc((size_t)peaks->n, sizeof *w->halo_head);
  w->ids = phew_malloc((size_t)peaks->n, sizeof *w->ids);
  const int shared = peak_comm_share_coordinates(w->pc) == PHEW_OK; /* collective: every rank */
  int failed = !w->halo_head || !w->ids || !shared;

  /* the halo of a peak: the saddle-merging group of its clump's head */
  for (int64_t p = 0; !failed && p < peaks->n; ++p) {
    const int64_t h = w->noise->group[p];
    w->halo_head[p] = h >= 0 ? w->saddle->group[h] : -1;
  }
  failed = failed || local_structures_init(&w->clumps, peaks, w->noise->group) != PHEW_OK ||
           local_structures_init(&w->haloes, peaks, w->halo_head) != PHEW_OK;
  if (comm_max(w->pc->c, failed))
    return catalogue_out_of_memory(w->pc->c, w->result);
  return PHEW_OK;
}

/* Collective: the cells summed into their structures (the first part of the stage's
 * progress), and for particles the structures' spreads. */
static phew_status sum_cells_into_structures(catalogue_work *w, const field *f)
{
  comm *c = w->pc->c;
  run_control_part(w->rc, 0.0, SUMS_SHARE);
  if (comm_max(c, sum_structures(w->mesh, f, w->pc, w->labels->clump_id, w->rc, &w->clumps, &w->haloes) != PHEW_OK))
    return catalogue_out_of_memory(c, w->result);
  const phew_status status = run_control_agree(w->rc, c, w->result);
  if (status != PHEW_OK)
    return status;
  if (w->mesh->particles &&
      comm_max(c, spread_structures(w->mesh, w->pc, w->labels->clump_id, &w->clumps, &w->haloes) != PHEW_OK))
    return catalogue_out_of_memory(c, w->result);
  return PHEW_OK;
}

/* Collective: owners describe their clumps; the records gathered on rank 0, the numbers of
 * clumps and haloes found into the statistics. */
static phew_status gather_clump_records(catalogue_work *w)
{
  const peak_table *peaks = w->pc->peaks;
  comm *c = w->pc->c;
  w->mine = describe_clumps(peaks, w->noise, w->saddle, &w->clumps, &w->haloes, w->halo_head, &w->n_mine);
  int64_t n_haloes_mine = 0;
  for (int64_t i = 0; i < w->haloes.n; ++i)
    n_haloes_mine += w->haloes.head[i] < peaks->n_owned;
  w->result->stats.n_clumps_found = comm_sum(c, w->n_mine);
  w->result->stats.n_haloes_found = comm_sum(c, n_haloes_mine);
  if (comm_max(c, !w->mine) ||
      comm_gather(c, w->mine, w->n_mine, sizeof *w->mine, (void **)&w->all, &w->n_all, &w->counts) != PHEW_OK)
    return catalogue_out_of_memory(c, w->result);
  return PHEW_OK;
}

/* Collective: rank 0 assembles the catalogue from the records and gives every clump its
 * ids, which go back to the clumps' owners. */
static phew_status assign_ids(catalogue_work *w, const phew_params *params)
{
  comm *c = w->pc->c;
  phew_status status = PHEW_OK;
  if (c->rank == 0) {
    w->all_ids = phew_malloc((size_t)w->n_all * 2, sizeof *w->all_ids);
    status = w->all_ids ? assemble(w->mesh, params, w->all, w->n_all, w->all_ids, w->result)
                        : phew_fail(w->result, PHEW_ERROR_MEMORY, "out of memory while building the catalogue");
  }
  status = comm_agree(c, status, w->result);
  if (status != PHEW_OK)
    return status;
  w->my_ids = phew_malloc((size_t)w->n_mine * 2, sizeof *w->my_ids);
  if (comm_max(c, !w->my_ids) ||
      comm_scatter(c, w->all_ids, w->counts, 2 * sizeof *w->all_ids, w->my_ids, w->n_mine) != PHEW_OK)
    return catalogue_out_of_memory(c, w->result);
  return PHEW_OK;
}

/* Collective: owners know the ids of their clumps; the ranks holding copies of the heads
 * learn them, and every rank labels its cells (the rest of the stage's progress). */
static phew_status label_by_ids(catalogue_work *w)
{
  const peak_table *peaks = w->pc->peaks;
  for (int64_t p = 0; p < peaks->n; ++p)
    w->ids[p] = (head_ids){-1, -1};
  for (int64_t k = 0, i = 0; i < w->clumps.n; ++i)
    if (w->clumps.head[i] < peaks->n_owned) {
      w->ids[w->clumps.head[i]] = (head_ids){w->my_ids[2 * k], w->my_ids[2 * k + 1]};
      ++k;
    }
  if (peak_comm_scatter(w->pc, w->ids, sizeof *w->ids, NULL, NULL, NULL) != PHEW_OK)
    return catalogue_out_of_memory(w->pc->c, w->result);
  run_control_part(w->rc, SUMS_SHARE, 1.0);
  label_cells(w->mesh, peaks, w->noise, w->ids, w->rc, w->labels);
  return run_control_agree(w->rc, w->pc->c, w->result);
}

phew_status catalogue_build(const mesh *mesh, const field *f, const phew_params *params, peak_comm *pc,
                            const merge_state *noise, const merge_state *saddle, run_control *rc, phew_labels *labels,
                            call_result *result)
{
  catalogue_work w;
  memset(&w, 0, sizeof w);
  w.mesh = mesh;
  w.pc = pc;
  w.noise = noise;
  w.saddle = saddle;
  w.rc = rc;
  w.labels = labels;
  w.result = result;
  if (mesh->particles)
    result->columns = PHEW_COLUMNS_PARTICLES | (mesh->velocity ? PHEW_COLUMNS_VELOCITY : 0);
  phew_status status = find_structures(&w);
  if (status == PHEW_OK)
    status = sum_cells_into_structures(&w, f);
  if (status == PHEW_OK)
    status = gather_clump_records(&w);
  if (status == PHEW_OK)
    status = assign_ids(&w, params);
  if (status == PHEW_OK)
    status = label_by_ids(&w);
  catalogue_work_free(&w);
  return status;
}
