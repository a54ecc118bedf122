/* Clumps followed in time: the merger tree between the labels of two steps (phew_link_steps).
 *
 * Every labelled element of both steps goes to the rank that owns its id (a hash of the id),
 * so that the two labels of one element meet wherever the element lay in each step. Each owner
 * adds up the mass its elements share per pair of labels, and each label's whole mass, in
 * exact sums; rank 0 merges those partial sums (exact sums give the same bits however the
 * terms were split over ranks) and picks the main links. */
#include "tracking.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* One labelled element of one step, on its way to the owner of its id. */
typedef struct element_record {
  int64_t id, label;
  double mass;
  int64_t later; /* 0: earlier step, 1: later step */
} element_record;

/* The mass a pair of labels shares (progenitor or descendant -1: a structure's whole mass). */
typedef struct pair_mass {
  int64_t progenitor, descendant;
  exact_sum earlier, later;
} pair_mass;

static int by_id_then_step(const void *a, const void *b)
{
  const element_record *x = a, *y = b;
  if (x->id != y->id)
    return x->id < y->id ? -1 : 1;
  return (x->later > y->later) - (x->later < y->later);
}

static int by_pair(const void *a, const void *b)
{
  const pair_mass *x = a, *y = b;
  if (x->progenitor != y->progenitor)
    return x->progenitor < y->progenitor ? -1 : 1;
  return (x->descendant > y->descendant) - (x->descendant < y->descendant);
}

phew_status tracking_check_step(const phew_step_labels *s, const char *which, call_result *result)
{
  if (!s || s->n < 0 || (s->n > 0 && (!s->id || !s->label)))
    return phew_fail(result, PHEW_ERROR_ARGUMENT, "the %s step's labels are missing (n < 0, or no id or label array)",
                     which);
  for (int64_t i = 0; i < s->n; ++i) {
    if (s->id[i] < 0 || s->label[i] < -1)
      return phew_fail(result, PHEW_ERROR_DATA,
                       "the %s step has element id %lld with label %lld: ids must be >= 0 "
                       "and labels >= -1",
                       which, (long long)s->id[i], (long long)s->label[i]);
    if (s->mass && !(s->mass[i] >= 0.0 && isfinite(s->mass[i])))
      return phew_fail(result, PHEW_ERROR_DATA,
                       "the %s step's element %lld has mass %g: masses must be finite and "
                       ">= 0",
                       which, (long long)s->id[i], s->mass[i]);
  }
  return PHEW_OK;
}

static phew_status send_to_owners(const phew_step_labels *s, int64_t later, comm *c, outbox *o)
{
  for (int64_t i = 0; i < s->n; ++i) {
    if (s->label[i] < 0)
      continue;
    const element_record r = {s->id[i], s->label[i], s->mass ? s->mass[i] : 1.0, later};
    if (outbox_put(o, tracking_owner_of(r.id, c->size), &r) != PHEW_OK)
      return PHEW_ERROR_MEMORY;
  }
  return PHEW_OK;
}

/* One element's masses under a pair of labels: shared (both labels), or a structure's whole
 * mass at one step (progenitor, -1) or (-1, descendant), with only that step's mass used. */
typedef struct pair_term {
  int64_t progenitor, descendant;
  double earlier, later;
} pair_term;

static int by_term_pair(const void *a, const void *b)
{
  const pair_term *x = a, *y = b;
  if (x->progenitor != y->progenitor)
    return x->progenitor < y->progenitor ? -1 : 1;
  return (x->descendant > y->descendant) - (x->descendant < y->descendant);
}

/* Sorts pairs and merges equal ones; returns the count left. */
static int64_t merge_equal_pairs(pair_mass *pairs, int64_t n)
{
  if (n == 0)
    return 0;
  qsort(pairs, (size_t)n, sizeof *pairs, by_pair);
  int64_t k = 0;
  for (int64_t i = 1; i < n; ++i) {
    if (by_pair(&pairs[k], &pairs[i]) == 0) {
      exact_sum_merge(&pairs[k].earlier, &pairs[i].earlier);
      exact_sum_merge(&pairs[k].later, &pairs[i].later);
    } else {
      pairs[++k] = pairs[i];
    }
  }
  return k + 1;
}

/* The owner's part: from the records of its ids, the shared mass of every pair of labels that
 * share an element, and each label's whole mass as the pair (label, -1) for the earlier step
 * and (-1, label) for the later one. One term per record and per shared element, sorted by
 * pair: each pair's exact sums are then added up once, over its run of terms. */
static phew_status sum_owned(element_record *r, int64_t n, pair_mass **pairs, int64_t *n_pairs, call_result *result)
{
  *pairs = NULL;
  *n_pairs = 0;
  qsort(r, (size_t)n, sizeof *r, by_id_then_step);
  for (int64_t i = 0; i + 1 < n; ++i)
    if (by_id_then_step(&r[i], &r[i + 1]) == 0)
      return phew_fail(result, PHEW_ERROR_DATA,
                       "element id %lld is passed twice in the %s step (ids must be unique "
                       "over all ranks: ghost cells left in?)",
                       (long long)r[i].id, r[i].later ? "later" : "earlier");
  pair_term *terms = phew_malloc((size_t)(n + n / 2) + 1, sizeof *terms); /* at most one shared per 2 records */
  if (!terms)
    return phew_fail(result, PHEW_ERROR_MEMORY, "out of memory while adding up the shared masses");
  int64_t m = 0;
  for (int64_t i = 0; i < n; ++i) {
    const pair_term whole = {r[i].later ? -1 : r[i].label, r[i].later ? r[i].label : -1, r[i].mass, r[i].mass};
    terms[m++] = whole;
    if (i + 1 < n && r[i + 1].id == r[i].id) { /* sorted by step: r[i] earlier, r[i + 1] later */
      const pair_term shared = {r[i].label, r[i + 1].label, r[i].mass, r[i + 1].mass};
      terms[m++] = shared;
    }
  }
  qsort(terms, (size_t)m, sizeof *terms, by_term_pair);
  int64_t runs = 0;
  for (int64_t t = 0; t < m; ++t)
    runs += t == 0 || by_term_pair(&terms[t - 1], &terms[t]) != 0;
  *pairs = phew_malloc((size_t)runs + 1, sizeof **pairs);
  if (!*pairs) {
    free(terms);
    return phew_fail(result, PHEW_ERROR_MEMORY, "out of memory while adding up the shared masses");
  }
  for (int64_t t = 0; t < m; ++t) {
    if (t == 0 || by_term_pair(&terms[t - 1], &terms[t]) != 0) {
      pair_mass *q = &(*pairs)[(*n_pairs)++];
      q->progenitor = terms[t].progenitor;
      q->descendant = terms[t].descendant;
      exact_sum_clear(&q->earlier);
      exact_sum_clear(&q->later);
    }
    pair_mass *q = &(*pairs)[*n_pairs - 1];
    if (q->progenitor >= 0)
      exact_sum_add(&q->earlier, terms[t].earlier);
    if (q->descendant >= 0)
      exact_sum_add(&q->later, terms[t].later);
  }
  free(terms);
  return PHEW_OK;
}

static phew_status to_double(const exact_sum *s, double *out, call_result *result)
{
  if (s->top == EXACT_SUM_EMPTY) {
    *out = 0.0;
    return PHEW_OK;
  }
  if (wide_to_double(exact_sum_value(s), out) != WIDE_FITS)
    return phew_fail(result, PHEW_ERROR_DATA, "a shared or whole mass lies outside the normal double range");
  return PHEW_OK;
}

static double fraction(const exact_sum *part, const exact_sum *whole)
{
  if (part->top == EXACT_SUM_EMPTY || whole->top == EXACT_SUM_EMPTY)
    return 0.0;
  const wide_float w = exact_sum_value(whole);
  return w.mantissa ? wide_ratio(exact_sum_value(part), w) : 0.0;
}

/* a's shared mass beats b's (larger; equal: smaller id). */
static int better(const exact_sum *a, int64_t id_a, const exact_sum *b, int64_t id_b)
{
  const wide_float x = a->top == EXACT_SUM_EMPTY ? wide_from_int(0) : exact_sum_value(a);
  const wide_float y = b->top == EXACT_SUM_EMPTY ? wide_from_int(0) : exact_sum_value(b);
  const int order = wide_compare(x, y);
  return order > 0 || (order == 0 && id_a < id_b);
}

static int by_descendant_then_progenitor(const void *a, const void *b)
{
  const phew_link *x = a, *y = b;
  const uint64_t dx = (uint64_t)x->descendant_id, dy = (uint64_t)y->descendant_id; /* -1 last */
  if (dx != dy)
    return dx < dy ? -1 : 1;
  return (x->progenitor_id > y->progenitor_id) - (x->progenitor_id < y->progenitor_id);
}

static int64_t find_label(const int64_t *labels, int64_t n, int64_t label)
{
  int64_t lo = 0, hi = n;
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo) / 2;
    if (labels[mid] < label)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < n && labels[lo] == label ? lo : -1;
}

static int by_int64(const void *a, const void *b)
{
  const int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

/* Rank 0: the links from the merged pairs (sorted by progenitor, then descendant). */
/* The structures of one step, in label order: per structure its label, the pair holding its
 * whole mass, its main partner's pair (-1: none) and the partners for which it is the main
 * one. */
typedef struct step_structures {
  int64_t n;
  int64_t *label, *whole, *main, *count;
} step_structures;

static int structures_alloc(step_structures *t, int64_t n)
{
  t->n = n;
  t->label = phew_malloc((size_t)n + 1, sizeof *t->label);
  t->whole = phew_malloc((size_t)n + 1, sizeof *t->whole);
  t->main = phew_malloc((size_t)n + 1, sizeof *t->main);
  t->count = calloc((size_t)n + 1, sizeof *t->count);
  for (int64_t i = 0; t->main && i < n; ++i)
    t->main[i] = -1;
  return t->label && t->whole && t->main && t->count;
}

static void structures_free(step_structures *t)
{
  free(t->label);
  free(t->whole);
  free(t->main);
  free(t->count);
}

/* The structures' labels and whole masses: progenitors in order, descendants sorted. */
static void index_wholes(const pair_mass *pairs, int64_t n, step_structures *p, step_structures *d)
{
  int64_t n_p = 0, n_d = 0;
  for (int64_t k = 0; k < n; ++k) {
    if (pairs[k].descendant < 0)
      p->label[n_p++] = pairs[k].progenitor;
    if (pairs[k].progenitor < 0)
      d->label[n_d++] = pairs[k].descendant;
  }
  qsort(d->label, (size_t)d->n, sizeof *d->label, by_int64);
  for (int64_t k = 0; k < n; ++k) {
    const pair_mass *q = &pairs[k];
    if (q->descendant < 0)
      p->whole[find_label(p->label, p->n, q->progenitor)] = k;
    else if (q->progenitor < 0)
      d->whole[find_label(d->label, d->n, q->descendant)] = k;
  }
}

/* Each structure's main partner, and how often each is the main one of its partners. */
static phew_status main_partners(const pair_mass *pairs, int64_t n, step_structures *p, step_structures *d,
                                 call_result *result)
{
  for (int64_t k = 0; k < n; ++k) {
    const pair_mass *q = &pairs[k];
    if (q->progenitor < 0 || q->descendant < 0)
      continue;
    const int64_t ip = find_label(p->label, p->n, q->progenitor), id = find_label(d->label, d->n, q->descendant);
    if (ip < 0 || id < 0) /* every shared element counted in both wholes: cannot happen */
      return phew_fail(result, PHEW_ERROR_DATA, "internal error: a shared pair without its structures");
    if (p->main[ip] < 0 ||
        better(&q->earlier, q->descendant, &pairs[p->main[ip]].earlier, pairs[p->main[ip]].descendant))
      p->main[ip] = k;
    if (d->main[id] < 0 || better(&q->later, q->progenitor, &pairs[d->main[id]].later, pairs[d->main[id]].progenitor))
      d->main[id] = k;
  }
  for (int64_t i = 0; i < p->n; ++i)
    if (p->main[i] >= 0)
      d->count[find_label(d->label, d->n, pairs[p->main[i]].descendant)]++;
  for (int64_t i = 0; i < d->n; ++i)
    if (d->main[i] >= 0)
      p->count[find_label(p->label, p->n, pairs[d->main[i]].progenitor)]++;
  return PHEW_OK;
}

/* The link of pair k (ip, id: its structures, -1 for none). */
static phew_status write_link(const pair_mass *pairs, int64_t k, const step_structures *p, const step_structures *d,
                              int64_t ip, int64_t id, phew_link *l, call_result *result)
{
  const pair_mass *q = &pairs[k];
  memset(l, 0, sizeof *l);
  l->progenitor_step = -1;
  l->host_id = -1;
  l->progenitor_id = q->progenitor;
  l->descendant_id = q->descendant;
  const exact_sum *pw = ip >= 0 ? &pairs[p->whole[ip]].earlier : NULL,
                  *dw = id >= 0 ? &pairs[d->whole[id]].later : NULL;
  if ((pw && to_double(pw, &l->progenitor_mass, result) != PHEW_OK) ||
      (dw && to_double(dw, &l->descendant_mass, result) != PHEW_OK) ||
      to_double(&q->earlier, &l->shared_mass_earlier, result) != PHEW_OK ||
      to_double(&q->later, &l->shared_mass_later, result) != PHEW_OK)
    return PHEW_ERROR_DATA;
  if (ip >= 0 && id >= 0) {
    l->progenitor_fraction = fraction(&q->earlier, pw);
    l->descendant_fraction = fraction(&q->later, dw);
  } else { /* alone: all of it is unshared */
    l->shared_mass_earlier = l->shared_mass_later = 0.0;
  }
  l->main_progenitor = ip >= 0 && id >= 0 ? d->main[id] == k : 0;
  l->main_descendant = ip >= 0 && id >= 0 ? p->main[ip] == k : 0;
  l->n_progenitors = id >= 0 ? d->count[id] : 0;
  l->n_descendants = ip >= 0 ? p->count[ip] : 0;
  return PHEW_OK;
}

static phew_status build_links(const pair_mass *pairs, int64_t n, call_result *result)
{
  int64_t n_p = 0, n_d = 0, n_shared = 0;
  for (int64_t k = 0; k < n; ++k) {
    n_p += pairs[k].descendant < 0;
    n_d += pairs[k].progenitor < 0;
    n_shared += pairs[k].progenitor >= 0 && pairs[k].descendant >= 0;
  }
  step_structures p = {0}, d = {0};
  phew_link *links = phew_malloc((size_t)(n_shared + n_p + n_d) + 1, sizeof *links);
  const int ok = structures_alloc(&p, n_p) & structures_alloc(&d, n_d);
  phew_status status =
      ok && links ? PHEW_OK : phew_fail(result, PHEW_ERROR_MEMORY, "out of memory while building the merger tree");
  if (status == PHEW_OK) {
    index_wholes(pairs, n, &p, &d);
    status = main_partners(pairs, n, &p, &d, result);
  }
  int64_t m = 0;
  for (int64_t k = 0; k < n && status == PHEW_OK; ++k) {
    const pair_mass *q = &pairs[k];
    const int64_t ip = q->progenitor >= 0 ? find_label(p.label, p.n, q->progenitor) : -1;
    const int64_t id = q->descendant >= 0 ? find_label(d.label, d.n, q->descendant) : -1;
    /* a whole mass is a link of its own only for a structure with no partner */
    if ((q->descendant < 0 && p.main[ip] >= 0) || (q->progenitor < 0 && d.main[id] >= 0))
      continue;
    status = write_link(pairs, k, &p, &d, ip, id, &links[m++], result);
  }
  if (status == PHEW_OK) {
    qsort(links, (size_t)m, sizeof *links, by_descendant_then_progenitor);
    result->links = links;
    result->n_links = m;
    links = NULL;
  }
  structures_free(&p);
  structures_free(&d);
  free(links);
  return status;
}

phew_status tracking_shared_links(comm *c, const phew_step_labels *earlier, const phew_step_labels *later,
                                  call_result *result)
{
  outbox o;
  outbox_init(&o, c, sizeof(element_record));
  if (send_to_owners(earlier, 0, c, &o) != PHEW_OK || send_to_owners(later, 1, c, &o) != PHEW_OK)
    o.failed = 1; /* the exchange then fails on every rank */
  inbox in;
  memset(&in, 0, sizeof in);
  phew_status status = outbox_send(&o, c, &in);
  outbox_free(&o);
  if (status != PHEW_OK) {
    inbox_free(&in);
    phew_fail(result, status, "could not send the labels to their owners (out of memory)");
    return comm_agree(c, status, result);
  }

  pair_mass *pairs = NULL, *all = NULL;
  int64_t n_pairs = 0, n_all = 0;
  int *counts = NULL;
  status = sum_owned((element_record *)in.items, in.n, &pairs, &n_pairs, result);
  inbox_free(&in);
  status = comm_agree(c, status, result);
  if (status == PHEW_OK) {
    status = comm_gather(c, pairs, n_pairs, sizeof *pairs, (void **)&all, &n_all, &counts);
    if (status != PHEW_OK)
      phew_fail(result, status, "could not gather the shared masses on rank 0 (out of memory)");
  }
  free(pairs);
  free(counts);
  if (status == PHEW_OK && c->rank == 0)
    status = build_links(all, merge_equal_pairs(all, n_all), result);
  free(all);
  return comm_agree(c, status, result);
}

static phew_status link_steps(const phew_context *context, const phew_step_labels *earlier,
                              const phew_step_labels *later, call_result *result)
{
  comm c;
  phew_status status = comm_init(&c, context, result);
  if (status != PHEW_OK)
    return status; /* no communicator to agree over */
  status = tracking_check_step(earlier, "earlier", result);
  if (status == PHEW_OK)
    status = tracking_check_step(later, "later", result);
  status = comm_agree(&c, status, result);
  if (status != PHEW_OK)
    return status;
  return tracking_shared_links(&c, earlier, later, result);
}

phew_status phew_link_steps(phew_context *context, const phew_step_labels *earlier, const phew_step_labels *later,
                            phew_link_result *result)
{
  if (result)
    memset(result, 0, sizeof *result);
  if (!context || !result)
    return call_refused(context, "phew_link_steps");
  call_result r;
  call_result_start(&r);
  const phew_status s = link_steps(context, earlier, later, &r);
  call_result_report(&r, s, context);
  *result = (phew_link_result){r.n_links, r.links};
  return s;
}
