/* HOP's second step: boundaries between the groups of the hops, and the regrouping by the
 * three density thresholds (halos.h, phew.h at phew_hop_params).
 *
 * Each rank lists the boundaries its own particles see (per pair of groups the largest) and
 * the peaks of the groups whose maxima it owns; rank 0 gathers them, regroups, and sends every
 * rank the group each HOP group ends in. The group graph is small (a group per density
 * maximum), so it is regrouped whole, in one place, in an order of its own: the answer does
 * not depend on the ranks. */
#include "halos.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A HOP group: its key (the global id of its maximum) and the density there. */
typedef struct hop_peak {
  int64_t key;
  double density;
} hop_peak;

/* The boundary of two groups, keys a < b. */
typedef struct hop_boundary {
  int64_t a, b;
  double density;
} hop_boundary;

/* What a HOP group ends in: the key of its final group, or -1. */
typedef struct hop_final {
  int64_t key, final_key;
} hop_final;

static int boundary_order(const void *pa, const void *pb)
{
  const hop_boundary *a = pa, *b = pb;
  if (a->a != b->a)
    return a->a < b->a ? -1 : 1;
  if (a->b != b->b)
    return a->b < b->b ? -1 : 1;
  return (a->density < b->density) - (a->density > b->density); /* the largest first */
}

static int peak_order(const void *pa, const void *pb)
{
  const hop_peak *a = pa, *b = pb;
  return (a->key > b->key) - (a->key < b->key);
}

/* Sorted, one per pair of groups: the largest. */
static int64_t boundaries_unique(hop_boundary *e, int64_t n)
{
  if (n == 0)
    return 0;
  qsort(e, (size_t)n, sizeof *e, boundary_order);
  int64_t m = 1;
  for (int64_t k = 1; k < n; ++k)
    if (e[k].a != e[m - 1].a || e[k].b != e[m - 1].b)
      e[m++] = e[k];
  return m;
}

static int64_t group_index(const hop_peak *g, int64_t n, int64_t key)
{
  int64_t lo = 0, hi = n;
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo) / 2;
    if (g[mid].key < key)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < n && g[lo].key == key ? lo : -1;
}

/* Of two groups (indices, -1: none), the one with the higher peak, then the smaller key. */
static int64_t higher_peak(const hop_peak *g, int64_t p, int64_t q)
{
  if (p < 0)
    return q;
  if (q < 0)
    return p;
  if (g[p].density != g[q].density)
    return g[p].density > g[q].density ? p : q;
  return g[p].key < g[q].key ? p : q;
}

/* A link of the widest-path search: a fringe group and a fringe or proper group. */
typedef struct hop_link {
  int32_t fringe, other;
  double density;
} hop_link;

static int link_order(const void *pa, const void *pb)
{
  const hop_link *a = pa, *b = pb;
  if (a->density != b->density)
    return a->density > b->density ? -1 : 1;
  if (a->fringe != b->fringe)
    return a->fringe < b->fringe ? -1 : 1;
  return (a->other > b->other) - (a->other < b->other);
}

/* The regrouping, on the whole group graph (groups sorted by key, boundaries unique):
 * final[k] = the key of group k's final group, or -1. 0, or -1 without memory. */
static int regroup(const hop_peak *g, int64_t n, const hop_boundary *e, int64_t n_e, double outer, double saddle,
                   double peak, int64_t *final)
{
  union_find proper, fringe;
  int32_t *best = phew_malloc((size_t)n + 1, sizeof *best); /* proper: its final group's peak; */
  int32_t *head = phew_malloc((size_t)n + 1, sizeof *head); /* fringe roots: the best proper */
  int32_t *tail = phew_malloc((size_t)n + 1, sizeof *tail); /* group reached, and the members */
  int32_t *next = phew_malloc((size_t)n + 1, sizeof *next); /* not yet given one (a list) */
  hop_link *links = phew_malloc((size_t)n_e + 1, sizeof *links);
  int32_t *touched = phew_malloc((size_t)n_e + 1, sizeof *touched);
  const int ok = best && head && tail && next && links && touched && union_find_init(&proper, n) == 0;
  if (!ok || union_find_init(&fringe, n) != 0) {
    if (ok)
      union_find_free(&proper);
    free(best), free(head), free(tail), free(next), free(links), free(touched);
    return -1;
  }
#define IS_PROPER(k) (g[k].density >= peak)
  /* proper groups joined by boundaries >= saddle; each final group named by its highest peak */
  for (int64_t k = 0; k < n_e; ++k) {
    const int64_t a = group_index(g, n, e[k].a), b = group_index(g, n, e[k].b);
    if (IS_PROPER(a) && IS_PROPER(b) && e[k].density >= saddle)
      union_find_join(&proper, (int32_t)a, (int32_t)b);
  }
  for (int64_t k = 0; k < n; ++k)
    best[k] = -1;
  for (int64_t k = 0; k < n; ++k)
    if (IS_PROPER(k)) {
      const int32_t r = union_find_root(&proper, (int32_t)k);
      best[r] = (int32_t)higher_peak(g, best[r], k);
    }
  for (int64_t k = 0; k < n; ++k)
    final[k] = IS_PROPER(k) ? g[best[union_find_root(&proper, (int32_t)k)]].key : -1;

  /* fringe groups: the links of widest paths, strongest first. All links of one strength join
   * their fringe groups before any fringe group is given the best proper group it then
   * reaches: the strength of its widest path */
  int64_t n_links = 0;
  for (int64_t k = 0; k < n_e; ++k) {
    const int64_t a = group_index(g, n, e[k].a), b = group_index(g, n, e[k].b);
    if (!(e[k].density >= outer) || (IS_PROPER(a) && IS_PROPER(b)))
      continue;
    if (!IS_PROPER(a) && !IS_PROPER(b) && !(g[a].density >= outer && g[b].density >= outer))
      continue;
    links[n_links++] = IS_PROPER(a) ? (hop_link){(int32_t)b, (int32_t)a, e[k].density}
                                    : (hop_link){(int32_t)a, (int32_t)b, e[k].density};
  }
  qsort(links, (size_t)n_links, sizeof *links, link_order);
  for (int64_t k = 0; k < n; ++k) {
    head[k] = tail[k] = (int32_t)k;
    next[k] = -1;
  }
  for (int64_t k = 0; k < n_links;) {
    int64_t end = k, n_touched = 0;
    while (end < n_links && links[end].density == links[k].density)
      ++end;
    for (int64_t l = k; l < end; ++l) {
      const hop_link *L = &links[l];
      int32_t a = union_find_root(&fringe, L->fringe);
      if (IS_PROPER(L->other)) {
        best[a] = (int32_t)higher_peak(g, best[a], L->other);
      } else {
        const int32_t b = union_find_root(&fringe, L->other);
        if (a == b)
          continue;
        union_find_join(&fringe, a, b);
        const int32_t root = a < b ? a : b, gone = a < b ? b : a;
        best[root] = (int32_t)higher_peak(g, best[root], best[gone]);
        if (head[gone] >= 0) { /* the members without a proper group, together */
          if (head[root] >= 0)
            next[tail[root]] = head[gone];
          else
            head[root] = head[gone];
          tail[root] = tail[gone];
        }
        a = root;
      }
      touched[n_touched++] = a;
    }
    for (int64_t t = 0; t < n_touched; ++t) {
      const int32_t r = union_find_root(&fringe, touched[t]);
      if (best[r] < 0)
        continue;
      const int64_t to = final[best[r]];
      for (int32_t m = head[r]; m >= 0; m = next[m])
        final[m] = to;
      head[r] = -1;
    }
    k = end;
  }
#undef IS_PROPER
  union_find_free(&proper);
  union_find_free(&fringe);
  free(best), free(head), free(tail), free(next), free(links), free(touched);
  return 0;
}

phew_status hop_regroup(const points_context *x, const particle_set *s, const hop_lists *lists, const double *rho,
                        const double *rho_padding, const int64_t *key, const int64_t *key_padding,
                        const hop_thresholds *t, int64_t *final_key)
{
  comm *c = x->c;
  const int64_t n_own = s->n_own;
  const int n_merge = lists->n_merge < lists->n_keep ? lists->n_merge : lists->n_keep;
  /* this rank's boundaries and peaks */
  int64_t n_e = 0, capacity = 1024, n_peaks = 0;
  hop_boundary *e = phew_malloc((size_t)capacity, sizeof *e);
  hop_peak *peaks = phew_malloc((size_t)n_own + 1, sizeof *peaks);
  int ok = e && peaks;
  for (int64_t i = 0; ok && i < n_own; ++i) {
    if (key[i] == s->id[i])
      peaks[n_peaks++] = (hop_peak){key[i], rho[i]};
    const int32_t *list = &lists->nearest[(size_t)i * (size_t)lists->n_keep];
    for (int k = 0; ok && k < n_merge; ++k) {
      const int32_t j = list[k];
      const int64_t kj = j < n_own ? key[j] : key_padding[j - n_own];
      if (kj == key[i])
        continue;
      if (n_e == capacity) {
        capacity *= 2;
        ok = !phew_grow(&e, (size_t)capacity, sizeof *e);
        if (!ok)
          break;
      }
      const double mean = 0.5 * (rho[i] + (j < n_own ? rho[j] : rho_padding[j - n_own]));
      e[n_e++] = key[i] < kj ? (hop_boundary){key[i], kj, mean} : (hop_boundary){kj, key[i], mean};
    }
  }
  if (comm_max(c, !ok)) {
    free(e);
    free(peaks);
    return comm_agree(c, phew_fail(x->result, PHEW_ERROR_MEMORY, "out of memory for the HOP boundaries"), x->result);
  }
  n_e = boundaries_unique(e, n_e);

  /* the group graph on rank 0, regrouped there */
  void *all_e = NULL, *all_peaks = NULL;
  int64_t n_all_e = 0, n_groups = 0;
  int *from = NULL;
  phew_status status = comm_gather(c, e, n_e, sizeof *e, &all_e, &n_all_e, &from);
  free(e);
  free(from);
  from = NULL;
  if (status == PHEW_OK)
    status = comm_gather(c, peaks, n_peaks, sizeof *peaks, &all_peaks, &n_groups, &from);
  free(peaks);
  free(from);
  hop_final *ends = NULL;
  int64_t n_ends = 0;
  if (status == PHEW_OK && c->rank == 0) {
    hop_peak *g = all_peaks;
    qsort(g, (size_t)n_groups, sizeof *g, peak_order);
    n_all_e = boundaries_unique(all_e, n_all_e);
    int64_t *final = phew_malloc((size_t)n_groups + 1, sizeof *final);
    ends = phew_malloc((size_t)n_groups + 1, sizeof *ends);
    if (!final || !ends || regroup(g, n_groups, all_e, n_all_e, t->outer, t->saddle, t->peak, final) != 0) {
      status = PHEW_ERROR_MEMORY;
    } else {
      for (int64_t k = 0; k < n_groups; ++k)
        ends[k] = (hop_final){g[k].key, final[k]};
      n_ends = n_groups;
    }
    free(final);
  }
  free(all_e);
  free(all_peaks);
  status = comm_agree(
      c, status == PHEW_OK ? PHEW_OK : phew_fail(x->result, PHEW_ERROR_MEMORY, "out of memory regrouping HOP groups"),
      x->result);
  if (status == PHEW_OK)
    status = comm_broadcast(c, (void **)&ends, &n_ends, sizeof *ends);
  if (status != PHEW_OK) {
    free(ends);
    return comm_agree(c, phew_fail(x->result, status, "out of memory regrouping HOP groups"), x->result);
  }
  /* each own particle above outer in its group's final group (ends are sorted by key) */
  for (int64_t i = 0; i < n_own; ++i) {
    final_key[i] = -1;
    if (!(rho[i] >= t->outer))
      continue;
    int64_t lo = 0, hi = n_ends;
    while (lo < hi) {
      const int64_t mid = lo + (hi - lo) / 2;
      if (ends[mid].key < key[i])
        lo = mid + 1;
      else
        hi = mid;
    }
    if (lo < n_ends && ends[lo].key == key[i])
      final_key[i] = ends[lo].final_key;
  }
  free(ends);
  return PHEW_OK;
}
