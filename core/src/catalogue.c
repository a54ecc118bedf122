/* From merged peaks to what users see: clumps and haloes in catalogue order, their
 * properties, the mass threshold, compact ids, and the per-cell ClumpId and HaloId. */
#include "internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The structures of one kind (clumps or haloes) before the mass threshold. */
typedef struct structures {
  int64_t n;
  int64_t *head;       /* local peak index of each structure's peak, in catalogue order */
  int64_t *of_head;    /* structure index of a head peak, -1 for other peaks */
  int64_t *of_peak;    /* structure index of every peak, -1 for none */
  double *reference;   /* cell coordinates of each head (3 per structure) */
  sums *sums;
  int64_t *final_id;   /* id after the mass threshold, -1 if left out */
  int64_t n_kept;
} structures;

static void structures_free(structures *s)
{
  free(s->head);
  free(s->of_head);
  free(s->of_peak);
  free(s->reference);
  free(s->sums);
  free(s->final_id);
  memset(s, 0, sizeof *s);
}

/* Heads are the alive peaks of a merge state; every peak maps to the head of its group. */
static phew_status structures_init(structures *s, const peak_table *peaks,
                                   const merge_state *m, const int64_t *group_of_peak)
{
  memset(s, 0, sizeof *s);
  const int64_t n_peaks = peaks->n;
  for (int64_t p = 0; p < n_peaks; ++p)
    s->n += m->alive[p];
  s->head = phew_malloc((size_t)s->n, sizeof *s->head);
  s->of_head = phew_malloc((size_t)n_peaks, sizeof *s->of_head);
  s->of_peak = phew_malloc((size_t)n_peaks, sizeof *s->of_peak);
  s->reference = phew_malloc((size_t)s->n * 3, sizeof *s->reference);
  s->sums = phew_malloc((size_t)s->n, sizeof *s->sums);
  s->final_id = phew_malloc((size_t)s->n, sizeof *s->final_id);
  if (!s->head || !s->of_head || !s->of_peak || !s->reference || !s->sums || !s->final_id)
    return PHEW_ERROR_MEMORY;
  int64_t k = 0;
  for (int64_t p = 0; p < n_peaks; ++p)
    if (m->alive[p])
      s->head[k++] = p;
  if (peak_sort_higher_first(peaks, s->head, s->n) != PHEW_OK)
    return PHEW_ERROR_MEMORY;
  for (int64_t p = 0; p < n_peaks; ++p)
    s->of_head[p] = -1;
  for (int64_t i = 0; i < s->n; ++i) {
    s->of_head[s->head[i]] = i;
    for (int d = 0; d < 3; ++d)
      s->reference[3 * i + d] = peaks->coord[3 * s->head[i] + d];
  }
  for (int64_t p = 0; p < n_peaks; ++p) {
    const int64_t h = group_of_peak[p];
    s->of_peak[p] = h >= 0 ? s->of_head[h] : -1;
  }
  return PHEW_OK;
}

static void apply_mass_threshold(structures *s, double mass_threshold, double unit_volume)
{
  s->n_kept = 0;
  for (int64_t i = 0; i < s->n; ++i) {
    const double mass = fixed_to_double(s->sums[i].mass, s->sums[i].shift) * unit_volume;
    s->final_id[i] = mass > mass_threshold ? s->n_kept++ : -1;
  }
}

static void fill_object(phew_object *o, const structures *s, int64_t i, const mesh *mesh, const peak_table *peaks,
                        const merge_state *m, double density_threshold, sum_scales scales)
{
  const int64_t p = s->head[i];
  const sums *x = &s->sums[i];
  memset(o, 0, sizeof *o);
  o->id = s->final_id[i];
  o->halo_id = -1;
  o->parent_id = -1;
  o->peak_id = peaks->global_id[p];
  o->n_cells = x->n_cells;
  o->n_clumps = 1;
  const double weight = fixed_to_double(x->mass, x->shift); /* mass / unit volume */
  o->mass = weight * mesh->unit_volume;
  o->volume = mesh->kind == PHEW_MESH_GRAPH ? fixed_to_double(x->volume, scales.volume_shift)
                                            : (double)x->n_cells * mesh->unit_volume;
  o->mean_density = o->volume > 0.0 ? o->mass / o->volume : 0.0;
  o->peak_density = peaks->density[p];
  o->min_density = x->min_density;
  for (int d = 0; d < 3; ++d) {
    const double peak = s->reference[3 * i + d];
    const double shift = weight > 0.0 ? fixed_to_double(x->moment[d], x->shift) / weight : 0.0;
    o->peak_position[d] = mesh_position(mesh, d, peak);
    o->center_of_mass[d] = mesh_wrap(mesh, d, mesh_position(mesh, d, peak + shift));
  }
  const int isolated = m->key_neighbour[p] < 0;
  o->key_saddle_density = isolated ? density_threshold : m->key_saddle[p];
  o->relevance = o->peak_density / o->key_saddle_density;
}

phew_status catalogue_build(const mesh *mesh, const field *f, const phew_params *params, const peak_table *peaks,
                            const merge_state *noise, const merge_state *saddle, const int64_t *cell_peak_in,
                            phew_labels *labels, phew_result *result)
{
  phew_status status = PHEW_OK;
  structures clumps, haloes;
  int64_t *halo_group = phew_malloc((size_t)peaks->n, sizeof *halo_group);
  int64_t *clump_label = phew_malloc((size_t)peaks->n, sizeof *clump_label);
  int64_t *halo_label = phew_malloc((size_t)peaks->n, sizeof *halo_label);
  double *root_saddle = NULL;
  memset(&clumps, 0, sizeof clumps);
  memset(&haloes, 0, sizeof haloes);
  if (!halo_group || !clump_label || !halo_label)
    goto out_of_memory;

  /* clump of a peak: the head of its noise-removal group, if that head survived */
  if (structures_init(&clumps, peaks, noise, noise->group) != PHEW_OK)
    goto out_of_memory;
  for (int64_t p = 0; p < peaks->n; ++p) {
    const int64_t c = clumps.of_peak[p];
    halo_group[p] = c >= 0 ? saddle->group[clumps.head[c]] : -1;
  }
  if (structures_init(&haloes, peaks, saddle, halo_group) != PHEW_OK)
    goto out_of_memory;

  const double max_volume = sums_max_volume(mesh, cell_peak_in);
  const sum_scales scales = sums_scales(max_volume);
  /* no cell of a structure is denser than its peak: that bounds its terms */
  for (int64_t i = 0; i < clumps.n; ++i)
    sums_clear(&clumps.sums[i], peaks->density[clumps.head[i]] * max_volume * mesh->extent);
  for (int64_t i = 0; i < haloes.n; ++i)
    sums_clear(&haloes.sums[i], peaks->density[haloes.head[i]] * max_volume * mesh->extent);
  sums_accumulate(mesh, f, cell_peak_in, clumps.of_peak, clumps.reference, clumps.sums, scales);
  sums_accumulate(mesh, f, cell_peak_in, haloes.of_peak, haloes.reference, haloes.sums, scales);
  apply_mass_threshold(&clumps, params->mass_threshold, mesh->unit_volume);
  apply_mass_threshold(&haloes, params->mass_threshold, mesh->unit_volume);
  result->stats.n_clumps_found = clumps.n;
  result->stats.n_haloes_found = haloes.n;

  result->clumps = phew_malloc((size_t)clumps.n_kept, sizeof *result->clumps);
  result->haloes = phew_malloc((size_t)haloes.n_kept, sizeof *result->haloes);
  if (!result->clumps || !result->haloes)
    goto out_of_memory;
  for (int64_t i = 0; i < haloes.n; ++i) {
    if (haloes.final_id[i] < 0)
      continue;
    phew_object *o = &result->haloes[haloes.final_id[i]];
    fill_object(o, &haloes, i, mesh, peaks, saddle, f->threshold, scales);
    o->halo_id = o->id;
    o->n_clumps = 0;
  }
  for (int64_t i = 0; i < clumps.n; ++i) {
    const int64_t h = haloes.of_peak[clumps.head[i]];
    if (haloes.final_id[h] >= 0) {
      phew_object *halo = &result->haloes[haloes.final_id[h]];
      halo->n_clumps++;
    }
    if (clumps.final_id[i] < 0)
      continue;
    phew_object *o = &result->clumps[clumps.final_id[i]];
    fill_object(o, &clumps, i, mesh, peaks, noise, f->threshold, scales);
    o->halo_id = haloes.final_id[h];
  }
  for (int64_t e = 0; e < saddle->n_events; ++e) {
    const merge_event *ev = &saddle->events[e];
    const int64_t child = clumps.final_id[clumps.of_head[ev->child]];
    if (child >= 0) {
      result->clumps[child].parent_id = clumps.final_id[clumps.of_head[ev->parent]];
      result->clumps[child].level = ev->level;
    }
    const int64_t h = haloes.final_id[haloes.of_peak[ev->child]];
    if (h >= 0 && result->haloes[h].level < ev->level)
      result->haloes[h].level = ev->level;
  }
  result->n_clumps = clumps.n_kept;
  result->n_haloes = haloes.n_kept;

  /* per-cell labels: PeakPatchId and HaloId first, then ClumpId over the peak indices it held */
  for (int64_t p = 0; p < peaks->n; ++p) {
    const int64_t c = clumps.of_peak[p], h = haloes.of_peak[p];
    clump_label[p] = c >= 0 ? clumps.final_id[c] : -1;
    halo_label[p] = h >= 0 ? haloes.final_id[h] : -1;
  }
  int64_t *cell_peak = labels->clump_id;
  for (int64_t i = 0; i < mesh->n_local; ++i) {
    const int64_t p = cell_peak[i];
    labels->peak_patch_id[i] = p >= 0 ? peaks->global_id[p] : -1;
    labels->halo_id[i] = p >= 0 ? halo_label[p] : -1;
    cell_peak[i] = p >= 0 ? clump_label[p] : -1;
  }

  /* the dendrogram's roots sit at their halo's key saddle */
  root_saddle = phew_malloc((size_t)haloes.n, sizeof *root_saddle);
  if (!root_saddle)
    goto out_of_memory;
  for (int64_t i = 0; i < haloes.n; ++i) {
    const int64_t p = haloes.head[i];
    root_saddle[i] = saddle->key_neighbour[p] < 0 ? f->threshold : saddle->key_saddle[p];
  }
  {
    const hierarchy_input h = {peaks, saddle, clumps.n, clumps.head, clumps.of_head, clumps.final_id, clumps.sums,
                               haloes.of_peak, haloes.final_id, root_saddle, haloes.sums, scales, mesh->unit_volume};
    status = hierarchy_build(&h, result);
  }
  goto done;

out_of_memory:
  status = phew_fail(result, PHEW_ERROR_MEMORY, "out of memory while building the catalogue");
done:
  structures_free(&clumps);
  structures_free(&haloes);
  free(halo_group);
  free(clump_label);
  free(halo_label);
  free(root_saddle);
  return status;
}
