/* Links by most-bound particles, and orphans (phew_link_tracked; docs/merger-trees.md states
 * the rules this file follows).
 *
 * After the links by shared mass (link_steps.c) and the later labels of every tracer
 * (locate.c), rank 0 decides, from counts and the entries' masses and ids only:
 *   - each entry's best descendant: the later structure holding most of its tracers (equal
 *     counts: the one holding its most-bound tracer among them);
 *   - each later structure's main progenitor by tracers: of the earlier structures whose best
 *     descendant it is, the one with the most tracers in it (then the larger mass, then the
 *     smaller id); such a pair is each other's main partner;
 *   - an earlier structure that is not the main progenitor of its best descendant (it merged)
 *     or has none (it vanished) is lost: an orphan from now on;
 *   - an orphan carried here whose best descendant has no main progenitor is a candidate to be
 *     found again there; the candidate with the most tracers in it wins (then the more recent
 *     step, the larger mass, the smaller id). The others stay orphans while they have been
 *     orphans for at most max_orphan_steps steps. */
#include "tracking.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The tracers of one entry that lie in one later structure. */
typedef struct hit {
  int64_t entry, label;
  int64_t count, first; /* how many, and the index of the most bound of them in the entry's list */
} hit;

static int by_entry_label_first(const void *a, const void *b)
{
  const hit *x = a, *y = b;
  if (x->entry != y->entry)
    return x->entry < y->entry ? -1 : 1;
  if (x->label != y->label)
    return x->label < y->label ? -1 : 1;
  return (x->first > y->first) - (x->first < y->first);
}

static int by_int64(const void *a, const void *b)
{
  const int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

/* Rows: by descendant (-1 last), kind, progenitor step, progenitor. */
static int by_row(const void *a, const void *b)
{
  const phew_link *x = a, *y = b;
  const uint64_t dx = (uint64_t)x->descendant_id, dy = (uint64_t)y->descendant_id;
  if (dx != dy)
    return dx < dy ? -1 : 1;
  if (x->kind != y->kind)
    return x->kind < y->kind ? -1 : 1;
  if (x->progenitor_step != y->progenitor_step)
    return x->progenitor_step < y->progenitor_step ? -1 : 1;
  return (x->progenitor_id > y->progenitor_id) - (x->progenitor_id < y->progenitor_id);
}

/* What rank 0 works with. */
typedef struct tracking {
  const phew_tracer_set *set;
  hit *hits; /* by entry, then label */
  int64_t n_hits;
  int64_t *best;       /* per entry: its best hit, -1: none */
  int64_t n_later;     /* the later structures, by label */
  int64_t *later;      /* their labels */
  double *later_mass;  /* their masses */
  int64_t *main_entry; /* per later structure: its main progenitor's entry (-1: none) */
  int64_t *found;      /* per later structure: the orphan entry found again in it (-1: none) */
} tracking;

static void tracking_free(tracking *t)
{
  free(t->hits);
  free(t->best);
  free(t->later);
  free(t->later_mass);
  free(t->main_entry);
  free(t->found);
}

static int64_t find(const int64_t *sorted, int64_t n, int64_t key)
{
  const int64_t *p = bsearch(&key, sorted, (size_t)n, sizeof *sorted, by_int64);
  return p ? p - sorted : -1;
}

/* The hits of every entry from the tracers' later labels, and each entry's best one. */
static int count_hits(tracking *t, const int64_t *located)
{
  const phew_tracer_set *s = t->set;
  t->hits = phew_malloc((size_t)s->n_ids + 1, sizeof *t->hits);
  t->best = phew_malloc((size_t)s->n + 1, sizeof *t->best);
  if (!t->hits || !t->best)
    return -1;
  int64_t n = 0;
  for (int64_t e = 0; e < s->n; ++e)
    for (int64_t j = 0; j < s->tracked[e].n_tracers; ++j)
      if (located[s->tracked[e].tracer_offset + j] >= 0)
        t->hits[n++] = (hit){e, located[s->tracked[e].tracer_offset + j], 1, j};
  qsort(t->hits, (size_t)n, sizeof *t->hits, by_entry_label_first);
  int64_t m = 0; /* merge runs: the first of a run has the smallest index */
  for (int64_t k = 0; k < n; ++k) {
    if (m > 0 && t->hits[m - 1].entry == t->hits[k].entry && t->hits[m - 1].label == t->hits[k].label)
      t->hits[m - 1].count++;
    else
      t->hits[m++] = t->hits[k];
  }
  t->n_hits = m;
  for (int64_t e = 0; e < s->n; ++e)
    t->best[e] = -1;
  for (int64_t k = 0; k < m; ++k) {
    const int64_t e = t->hits[k].entry, b = t->best[e];
    if (b < 0 || t->hits[k].count > t->hits[b].count ||
        (t->hits[k].count == t->hits[b].count && t->hits[k].first < t->hits[b].first))
      t->best[e] = k;
  }
  return 0;
}

/* The count of entry e's tracers in later structure `label` (0: none). */
static int64_t hits_in(const tracking *t, int64_t e, int64_t label)
{
  int64_t lo = 0, hi = t->n_hits;
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo) / 2;
    const hit *h = &t->hits[mid];
    if (h->entry < e || (h->entry == e && h->label < label))
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < t->n_hits && t->hits[lo].entry == e && t->hits[lo].label == label ? t->hits[lo].count : 0;
}

/* The later structures (every descendant of the links by shared mass) and their masses. */
static int index_later(tracking *t, const phew_link *links, int64_t n_links)
{
  t->later = phew_malloc((size_t)n_links + 1, sizeof *t->later);
  t->later_mass = phew_malloc((size_t)n_links + 1, sizeof *t->later_mass);
  if (!t->later || !t->later_mass)
    return -1;
  for (int64_t k = 0; k < n_links; ++k)
    if (links[k].descendant_id >= 0 && (t->n_later == 0 || t->later[t->n_later - 1] != links[k].descendant_id)) {
      t->later[t->n_later] = links[k].descendant_id; /* the links come by descendant */
      t->later_mass[t->n_later++] = links[k].descendant_mass;
    }
  t->main_entry = phew_malloc((size_t)t->n_later + 1, sizeof *t->main_entry);
  t->found = phew_malloc((size_t)t->n_later + 1, sizeof *t->found);
  if (!t->main_entry || !t->found)
    return -1;
  for (int64_t d = 0; d < t->n_later; ++d)
    t->main_entry[d] = t->found[d] = -1;
  return 0;
}

/* Entry a beats entry b for a later structure: more tracers in it, then (orphans) the more
 * recent step, then the larger mass, then the smaller id. */
static int beats(const tracking *t, int64_t a, int64_t b)
{
  const phew_tracked *x = &t->set->tracked[a], *y = &t->set->tracked[b];
  const int64_t ca = t->hits[t->best[a]].count, cb = t->hits[t->best[b]].count;
  if (ca != cb)
    return ca > cb;
  if (x->step != y->step)
    return x->step > y->step;
  if (x->mass != y->mass)
    return x->mass > y->mass;
  return x->id < y->id;
}

/* Main progenitors (structures of the earlier step), then orphans found again. */
static void decide(tracking *t)
{
  for (int pass = 0; pass < 2; ++pass)
    for (int64_t e = 0; e < t->set->n; ++e) {
      const int orphan = t->set->tracked[e].orphan_steps > 0;
      if (orphan != pass || t->best[e] < 0)
        continue;
      const int64_t d = find(t->later, t->n_later, t->hits[t->best[e]].label);
      if (d < 0 || (orphan && t->main_entry[d] >= 0))
        continue;
      int64_t *winner = orphan ? &t->found[d] : &t->main_entry[d];
      if (*winner < 0 || beats(t, e, *winner))
        *winner = e;
    }
}

typedef struct live_entry {
  int64_t id, entry;
} live_entry;

static int by_live_id(const void *a, const void *b)
{
  const live_entry *x = a, *y = b;
  return (x->id > y->id) - (x->id < y->id);
}

/* A row of the tracers alone: an orphan followed (descendant -1, host: its best descendant) or
 * found again (descendant: where). Shared masses are not known for these: NaN. */
static phew_link tracer_row(const tracking *t, int64_t e, int kind, int64_t orphan_steps)
{
  const phew_tracked *x = &t->set->tracked[e];
  const int64_t label = t->best[e] >= 0 ? t->hits[t->best[e]].label : -1;
  const int64_t d = label >= 0 ? find(t->later, t->n_later, label) : -1;
  phew_link l;
  memset(&l, 0, sizeof l);
  l.progenitor_id = x->id;
  l.descendant_id = kind == PHEW_LINK_REFOUND ? label : -1;
  l.progenitor_mass = x->mass;
  l.descendant_mass = kind == PHEW_LINK_REFOUND && d >= 0 ? t->later_mass[d] : NAN;
  l.shared_mass_earlier = l.shared_mass_later = l.progenitor_fraction = l.descendant_fraction = NAN;
  l.progenitor_step = x->step;
  l.kind = kind;
  l.orphan_steps = (int32_t)orphan_steps;
  l.n_tracers = x->n_tracers;
  l.shared_tracers = t->best[e] >= 0 ? t->hits[t->best[e]].count : 0;
  l.main_progenitor_tracers = l.main_descendant_tracers = kind == PHEW_LINK_REFOUND;
  l.host_id = kind == PHEW_LINK_ORPHAN ? label : -1;
  return l;
}

/* The links by shared mass get their tracer fields; *seen[e]: entry e's best pair has a row. */
static void annotate(const tracking *t, phew_link *links, int64_t n_links, const live_entry *live, int64_t n_live,
                     unsigned char *seen)
{
  for (int64_t k = 0; k < n_links; ++k) {
    phew_link *l = &links[k];
    const live_entry key = {l->progenitor_id, 0};
    const live_entry *p = l->progenitor_id >= 0 ? bsearch(&key, live, (size_t)n_live, sizeof *live, by_live_id) : NULL;
    if (!p)
      continue;
    const int64_t e = p->entry;
    l->progenitor_step = t->set->tracked[e].step;
    l->n_tracers = t->set->tracked[e].n_tracers;
    if (l->descendant_id < 0)
      continue;
    const int64_t d = find(t->later, t->n_later, l->descendant_id);
    l->shared_tracers = hits_in(t, e, l->descendant_id);
    l->main_descendant_tracers = t->best[e] >= 0 && t->hits[t->best[e]].label == l->descendant_id;
    l->main_progenitor_tracers = d >= 0 && t->main_entry[d] == e;
    seen[e] |= (unsigned char)l->main_descendant_tracers;
  }
}

/* Entry e's best pair when the links by shared mass lack it (tracers that were not among the
 * structure's elements in the earlier step): a row with no shared mass. */
static phew_link best_row(const tracking *t, int64_t e)
{
  const phew_tracked *x = &t->set->tracked[e];
  const hit *h = &t->hits[t->best[e]];
  const int64_t d = find(t->later, t->n_later, h->label);
  phew_link l;
  memset(&l, 0, sizeof l);
  l.progenitor_id = x->id;
  l.descendant_id = h->label;
  l.progenitor_mass = x->mass;
  l.descendant_mass = d >= 0 ? t->later_mass[d] : NAN;
  l.progenitor_step = x->step;
  l.n_tracers = x->n_tracers;
  l.shared_tracers = h->count;
  l.main_descendant_tracers = 1;
  l.main_progenitor_tracers = d >= 0 && t->main_entry[d] == e;
  l.host_id = -1;
  return l;
}

typedef struct carried {
  int64_t step, id; /* what the orphans are ordered by */
  int64_t entry, orphan_steps;
} carried;

static int by_step_then_id(const void *a, const void *b)
{
  const carried *x = a, *y = b;
  if (x->step != y->step)
    return x->step < y->step ? -1 : 1;
  return (x->id > y->id) - (x->id < y->id);
}

/* The orphans carried on, by step then id, with their tracers copied. */
static int carry_on(const phew_tracer_set *s, carried *c, int64_t n, phew_tracer_set *out)
{
  qsort(c, (size_t)n, sizeof *c, by_step_then_id);
  int64_t n_ids = 0;
  for (int64_t k = 0; k < n; ++k)
    n_ids += s->tracked[c[k].entry].n_tracers;
  out->tracked = phew_malloc((size_t)n + 1, sizeof *out->tracked);
  out->ids = phew_malloc((size_t)n_ids + 1, sizeof *out->ids);
  if (!out->tracked || !out->ids)
    return -1;
  int64_t at = 0;
  for (int64_t k = 0; k < n; ++k) {
    phew_tracked x = s->tracked[c[k].entry];
    if (x.n_tracers)
      memcpy(out->ids + at, s->ids + x.tracer_offset, (size_t)x.n_tracers * sizeof *out->ids);
    x.tracer_offset = at;
    x.orphan_steps = c[k].orphan_steps;
    at += x.n_tracers;
    out->tracked[k] = x;
  }
  out->n = n;
  out->n_ids = n_ids;
  return 0;
}

/* Rank 0: the rows of the tracers (the links by shared mass annotated, then a row per orphan
 * followed or found again) and the orphans to carry on. */
static phew_status assemble(tracking *t, const phew_track_params *p, call_result *r, phew_tracer_set *orphans)
{
  const phew_tracer_set *s = t->set;
  live_entry *live = phew_malloc((size_t)s->n + 1, sizeof *live);
  unsigned char *seen = phew_calloc((size_t)s->n + 1, 1);
  carried *carry = phew_malloc((size_t)s->n + 1, sizeof *carry);
  int ok = live && seen && carry && phew_grow(&r->links, (size_t)(r->n_links + 2 * s->n) + 1, sizeof *r->links) == 0;
  int64_t n_live = 0, n_carry = 0, n = r->n_links;
  for (int64_t e = 0; ok && e < s->n; ++e)
    if (s->tracked[e].orphan_steps == 0)
      live[n_live++] = (live_entry){s->tracked[e].id, e};
  if (ok) {
    qsort(live, (size_t)n_live, sizeof *live, by_live_id);
    annotate(t, r->links, r->n_links, live, n_live, seen);
  }
  for (int64_t e = 0; ok && e < s->n; ++e) {
    const phew_tracked *x = &s->tracked[e];
    const int64_t d = t->best[e] >= 0 ? find(t->later, t->n_later, t->hits[t->best[e]].label) : -1;
    if (x->orphan_steps == 0) {
      if (t->best[e] >= 0 && !seen[e])
        r->links[n++] = best_row(t, e);
      if ((d < 0 || t->main_entry[d] != e) && p->max_orphan_steps >= 1 && x->n_tracers > 0) {
        r->links[n++] = tracer_row(t, e, PHEW_LINK_ORPHAN, 1);
        carry[n_carry++] = (carried){x->step, x->id, e, 1};
      }
    } else if (d >= 0 && t->found[d] == e) {
      r->links[n++] = tracer_row(t, e, PHEW_LINK_REFOUND, x->orphan_steps);
    } else if (x->orphan_steps + 1 <= p->max_orphan_steps) {
      r->links[n++] = tracer_row(t, e, PHEW_LINK_ORPHAN, x->orphan_steps + 1);
      carry[n_carry++] = (carried){x->step, x->id, e, x->orphan_steps + 1};
    }
  }
  if (ok) {
    r->n_links = n;
    qsort(r->links, (size_t)n, sizeof *r->links, by_row);
    ok = carry_on(s, carry, n_carry, orphans) == 0;
  }
  free(live);
  free(seen);
  free(carry);
  return ok ? PHEW_OK : phew_fail(r, PHEW_ERROR_MEMORY, "out of memory for the links by most-bound particles");
}

/* The tracer set rank 0 was given, checked. */
static phew_status check_set(const phew_tracer_set *s, call_result *r)
{
  if (!s || s->n < 0 || s->n_ids < 0 || (s->n > 0 && !s->tracked) || (s->n_ids > 0 && !s->ids))
    return phew_fail(r, PHEW_ERROR_ARGUMENT, "the tracer set is missing or inconsistent (counts < 0, or no arrays)");
  for (int64_t e = 0; e < s->n; ++e) {
    const phew_tracked *x = &s->tracked[e];
    if (x->id < 0 || x->orphan_steps < 0 || x->orphan_steps >= INT32_MAX || x->n_tracers < 0 || x->tracer_offset < 0 ||
        x->tracer_offset > s->n_ids - x->n_tracers || !(x->mass >= 0.0))
      return phew_fail(r, PHEW_ERROR_ARGUMENT,
                       "tracked structure %lld (entry %lld) has id < 0, a negative count, mass or orphan age, or "
                       "tracers outside the set's %lld ids",
                       (long long)x->id, (long long)e, (long long)s->n_ids);
  }
  for (int64_t e = 1; e < s->n; ++e) /* each kind in its documented order: no entry twice */
    if (s->tracked[e].orphan_steps == 0
            ? s->tracked[e - 1].orphan_steps == 0 && s->tracked[e - 1].id >= s->tracked[e].id
            : s->tracked[e - 1].orphan_steps > 0 &&
                  (s->tracked[e - 1].step > s->tracked[e].step ||
                   (s->tracked[e - 1].step == s->tracked[e].step && s->tracked[e - 1].id >= s->tracked[e].id)))
      return phew_fail(r, PHEW_ERROR_ARGUMENT,
                       "the tracer set's entries %lld and %lld are out of order or the same structure (the step's "
                       "structures by id, then the orphans by step and id)",
                       (long long)(e - 1), (long long)e);
  for (int64_t k = 0; k < s->n_ids; ++k)
    if (s->ids[k] < 0)
      return phew_fail(r, PHEW_ERROR_ARGUMENT, "tracer %lld has the negative particle id %lld", (long long)k,
                       (long long)s->ids[k]);
  return PHEW_OK;
}

static phew_status link_tracked(const phew_context *context, const phew_step_labels *earlier,
                                const phew_step_labels *later, const phew_tracer_set *tracers,
                                const phew_track_params *params, call_result *r, phew_tracer_set *orphans)
{
  comm c;
  phew_status status = comm_init(&c, context, r);
  if (status != PHEW_OK)
    return status;
  status = tracking_check_step(earlier, "earlier", r);
  if (status == PHEW_OK)
    status = tracking_check_step(later, "later", r);
  if (status == PHEW_OK && c.rank == 0)
    status = check_set(tracers, r);
  if (status == PHEW_OK && (!params || params->max_orphan_steps < 0 || params->max_orphan_steps >= INT32_MAX))
    status = phew_fail(r, PHEW_ERROR_ARGUMENT,
                       "the tracking parameters are missing or max_orphan_steps is not in 0 .. 2^31 - 2");
  status = comm_agree(&c, status, r);
  if (status == PHEW_OK)
    status = tracking_shared_links(&c, earlier, later, r);
  int64_t *located = NULL;
  const int64_t n_ids = c.rank == 0 && tracers ? tracers->n_ids : 0;
  if (status == PHEW_OK) {
    located = phew_malloc((size_t)n_ids + 1, sizeof *located);
    status = comm_agree(&c, located ? PHEW_OK : phew_fail(r, PHEW_ERROR_MEMORY, "out of memory for the tracers"), r);
  }
  if (status == PHEW_OK)
    status = tracking_locate(&c, later, c.rank == 0 ? tracers->ids : NULL, n_ids, located, r);
  if (status == PHEW_OK && c.rank == 0) {
    tracking t;
    memset(&t, 0, sizeof t);
    t.set = tracers;
    if (count_hits(&t, located) != 0 || index_later(&t, r->links, r->n_links) != 0) {
      status = phew_fail(r, PHEW_ERROR_MEMORY, "out of memory for the links by most-bound particles");
    } else {
      decide(&t);
      status = assemble(&t, params, r, orphans);
    }
    tracking_free(&t);
  }
  free(located);
  return comm_agree(&c, status, r);
}

void phew_track_params_init(phew_track_params *params)
{
  if (params)
    params->max_orphan_steps = 3;
}

phew_status phew_link_tracked(phew_context *context, const phew_step_labels *earlier, const phew_step_labels *later,
                              const phew_tracer_set *tracers, const phew_track_params *params, phew_link_result *links,
                              phew_tracer_set *orphans)
{
  if (links)
    memset(links, 0, sizeof *links);
  if (orphans)
    memset(orphans, 0, sizeof *orphans);
  if (!context || !links || !orphans)
    return call_refused(context, "phew_link_tracked");
  call_result r;
  call_result_start(&r);
  const phew_status status = link_tracked(context, earlier, later, tracers, params, &r, orphans);
  if (status != PHEW_OK) {
    call_result_free(&r);
    phew_tracer_set_free(orphans);
  }
  call_result_report(&r, status, context);
  *links = (phew_link_result){r.n_links, r.links};
  return status;
}
