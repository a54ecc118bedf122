/* Each structure's most-bound particles, its tracers (phew_most_bound): every rank keeps, per
 * label, its n elements of lowest energy (equal energies: smaller id) and its exact mass sum;
 * rank 0 merges them. The n lowest of the union are among the ranks' n lowest, so the answer
 * does not depend on how the elements were spread. */
#include "tracking.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct candidate {
  int64_t label;
  double energy;
  int64_t id;
} candidate;

typedef struct label_mass {
  int64_t label;
  exact_sum mass;
} label_mass;

static int by_label_energy_id(const void *a, const void *b)
{
  const candidate *x = a, *y = b;
  if (x->label != y->label)
    return x->label < y->label ? -1 : 1;
  if (x->energy != y->energy)
    return x->energy < y->energy ? -1 : 1;
  return (x->id > y->id) - (x->id < y->id);
}

static int by_label(const void *a, const void *b)
{
  const label_mass *x = a, *y = b;
  return (x->label > y->label) - (x->label < y->label);
}

/* Sorts c and keeps the first n of every label; returns the count kept. */
static int64_t keep_lowest(candidate *c, int64_t count, int64_t n)
{
  qsort(c, (size_t)count, sizeof *c, by_label_energy_id);
  int64_t kept = 0, run = 0;
  for (int64_t k = 0; k < count; ++k) {
    run = k > 0 && c[k].label == c[k - 1].label ? run + 1 : 0;
    if (run < n)
      c[kept++] = c[k];
  }
  return kept;
}

/* Sorts m by label and merges equal labels' sums; returns the count left. */
static int64_t merge_masses(label_mass *m, int64_t count)
{
  qsort(m, (size_t)count, sizeof *m, by_label);
  int64_t k = 0;
  for (int64_t i = 0; i < count; ++i) {
    if (i > 0 && m[i].label == m[k - 1].label)
      exact_sum_merge(&m[k - 1].mass, &m[i].mass);
    else
      m[k++] = m[i];
  }
  return k;
}

/* This rank's share: its candidates (n lowest per label) and mass sums (one per label). */
static phew_status local_share(const phew_step_labels *l, int64_t n, candidate **c, int64_t *n_c, label_mass **m,
                               int64_t *n_m)
{
  *c = phew_malloc((size_t)l->n + 1, sizeof **c);
  *m = phew_malloc((size_t)l->n + 1, sizeof **m);
  if (!*c || !*m)
    return PHEW_ERROR_MEMORY;
  *n_c = *n_m = 0;
  for (int64_t i = 0; i < l->n; ++i) {
    if (l->label[i] < 0)
      continue;
    label_mass *s = &(*m)[(*n_m)++];
    s->label = l->label[i];
    exact_sum_clear(&s->mass);
    exact_sum_add(&s->mass, l->mass ? l->mass[i] : 1.0);
    if (!isnan(l->energy[i]))
      (*c)[(*n_c)++] = (candidate){l->label[i], l->energy[i], l->id[i]};
  }
  *n_c = keep_lowest(*c, *n_c, n);
  *n_m = merge_masses(*m, *n_m);
  return PHEW_OK;
}

/* Rank 0: the set from the merged candidates (sorted, n per label) and masses (by label). */
static phew_status build_set(const candidate *c, int64_t n_c, const label_mass *m, int64_t n_m, int64_t step,
                             phew_tracer_set *set, call_result *result)
{
  set->tracked = phew_malloc((size_t)n_m + 1, sizeof *set->tracked);
  set->ids = phew_malloc((size_t)n_c + 1, sizeof *set->ids);
  if (!set->tracked || !set->ids)
    return phew_fail(result, PHEW_ERROR_MEMORY, "out of memory for the most-bound particles");
  int64_t k = 0;
  for (int64_t s = 0; s < n_m; ++s) {
    phew_tracked *t = &set->tracked[s];
    t->id = m[s].label;
    t->step = step;
    t->orphan_steps = 0;
    if (wide_to_double(exact_sum_value(&m[s].mass), &t->mass) != WIDE_FITS)
      return phew_fail(result, PHEW_ERROR_DATA, "structure %lld's mass lies outside the normal double range",
                       (long long)t->id);
    while (k < n_c && c[k].label < t->id) /* labels of candidates are among the masses' */
      ++k;
    t->tracer_offset = k;
    for (; k < n_c && c[k].label == t->id; ++k)
      set->ids[k] = c[k].id;
    t->n_tracers = k - t->tracer_offset;
  }
  set->n = n_m;
  set->n_ids = n_c;
  return PHEW_OK;
}

phew_status tracking_most_bound(comm *c, const phew_step_labels *l, int64_t step, int64_t n, phew_tracer_set *set,
                                call_result *result)
{
  candidate *cand = NULL, *all_c = NULL;
  label_mass *mass = NULL, *all_m = NULL;
  int64_t n_c = 0, n_m = 0, n_all_c = 0, n_all_m = 0;
  int *counts = NULL;
  phew_status status = local_share(l, n, &cand, &n_c, &mass, &n_m);
  if (status != PHEW_OK)
    phew_fail(result, status, "out of memory for the most-bound particles");
  status = comm_agree(c, status, result);
  if (status == PHEW_OK)
    status = comm_gather(c, cand, n_c, sizeof *cand, (void **)&all_c, &n_all_c, &counts);
  free(counts);
  counts = NULL;
  if (status == PHEW_OK)
    status = comm_gather(c, mass, n_m, sizeof *mass, (void **)&all_m, &n_all_m, &counts);
  free(counts);
  free(cand);
  free(mass);
  if (status != PHEW_OK)
    phew_fail(result, status, "could not gather the most-bound particles on rank 0 (out of memory)");
  if (status == PHEW_OK && c->rank == 0)
    status = build_set(all_c, keep_lowest(all_c, n_all_c, n), all_m, merge_masses(all_m, n_all_m), step, set, result);
  free(all_c);
  free(all_m);
  return comm_agree(c, status, result);
}

static phew_status most_bound(const phew_context *context, const phew_step_labels *l, int64_t step, int64_t n,
                              phew_tracer_set *set, call_result *result)
{
  comm c;
  phew_status status = comm_init(&c, context, result);
  if (status != PHEW_OK)
    return status;
  status = tracking_check_step(l, "given", result);
  if (status == PHEW_OK && l->n > 0 && !l->energy)
    status = phew_fail(result, PHEW_ERROR_ARGUMENT, "the most-bound particles need the elements' energies");
  if (status == PHEW_OK && n < 0)
    status = phew_fail(result, PHEW_ERROR_ARGUMENT, "the number of most-bound particles must be >= 0 (got %lld)",
                       (long long)n);
  status = comm_agree(&c, status, result);
  return status == PHEW_OK ? tracking_most_bound(&c, l, step, n, set, result) : status;
}

phew_status phew_most_bound(phew_context *context, const phew_step_labels *labels, int64_t step, int64_t n_most_bound,
                            phew_tracer_set *set)
{
  if (set)
    memset(set, 0, sizeof *set);
  if (!context || !set)
    return call_refused(context, "phew_most_bound");
  call_result r;
  call_result_start(&r);
  const phew_status status = most_bound(context, labels, step, n_most_bound, set, &r);
  if (status != PHEW_OK)
    phew_tracer_set_free(set);
  call_result_report(&r, status, context);
  return status;
}
