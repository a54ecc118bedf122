/* Level-by-level merging of peaks through their key saddles (paper sections 2.4 to 2.7).
 *
 * On each level every alive peak finds its key saddle (highest saddle; ties go to the
 * neighbour higher in the order). A peak that meets the rule's criterion merges into its
 * key neighbour if that neighbour is higher, and labels follow chains of such mergers within
 * the level. Then the saddle lists of merged peaks are combined (the edge list is relabelled;
 * the key search takes the maximum over duplicates) and the next level starts, until a level
 * has no merger. The chains are resolved by repeated sweeps until nothing changes, so the
 * visiting order cannot change the result (section 2.7); the sorted order just needs a
 * single sweep.
 *
 * Distributed (sections 3.4 to 3.6): owners decide for their peaks. Key saddles are row
 * maxima collected from the ranks holding ghost copies; changed labels are scattered to the
 * copies after each round of sweeps, until no label moved on any rank. On one rank the
 * exchanges have nothing to send. */
#include "segmentation.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

phew_status merge_state_init(merge_state *m, int64_t n_owned, int64_t n)
{
  memset(m, 0, sizeof *m);
  m->n_owned = n_owned;
  return merge_state_fit(m, n);
}

/* Ghost peaks join the table while merging: every per-peak array follows. New peaks are
 * their own group; only owned peaks are alive (their owner decides for them). */
phew_status merge_state_fit(merge_state *m, int64_t n)
{
  if (n <= m->n && m->group)
    return PHEW_OK;
  int64_t *group = phew_realloc(m->group, (size_t)n, sizeof *group);
  if (group)
    m->group = group;
  unsigned char *alive = phew_realloc(m->alive, (size_t)n, sizeof *alive);
  if (alive)
    m->alive = alive;
  double *key_saddle = phew_realloc(m->key_saddle, (size_t)n, sizeof *key_saddle);
  if (key_saddle)
    m->key_saddle = key_saddle;
  int64_t *key_neighbour = phew_realloc(m->key_neighbour, (size_t)n, sizeof *key_neighbour);
  if (key_neighbour)
    m->key_neighbour = key_neighbour;
  if (!group || !alive || !key_saddle || !key_neighbour)
    return PHEW_ERROR_MEMORY;
  for (int64_t p = m->n; p < n; ++p) {
    m->group[p] = p;
    m->alive[p] = p < m->n_owned;
    m->key_saddle[p] = -INFINITY;
    m->key_neighbour[p] = -1;
  }
  m->n = n;
  return PHEW_OK;
}

void merge_state_free(merge_state *m)
{
  free(m->group);
  free(m->alive);
  free(m->key_saddle);
  free(m->key_neighbour);
  free(m->events);
  memset(m, 0, sizeof *m);
}

static void consider_saddle(merge_state *m, const peak_table *peaks, int64_t p, int64_t q, double s)
{
  const int64_t k = m->key_neighbour[p];
  if (s > m->key_saddle[p] || (s == m->key_saddle[p] && (k < 0 || peak_higher(peaks, q, k)))) {
    m->key_saddle[p] = s;
    m->key_neighbour[p] = q;
  }
}

static void find_key_saddles(merge_state *m, const peak_table *peaks, const edge_list *edges)
{
  for (int64_t p = 0; p < m->n; ++p) {
    m->key_saddle[p] = -INFINITY;
    m->key_neighbour[p] = -1;
  }
  for (int64_t e = 0; e < edges->n; ++e) {
    const saddle_edge *x = &edges->edges[e];
    consider_saddle(m, peaks, x->a, x->b, x->density);
    consider_saddle(m, peaks, x->b, x->a, x->density);
  }
}

/* Alive peaks in decreasing order, or shuffled when a seed is given (testing). */
static int64_t *visiting_order(const merge_state *m, const peak_table *peaks, unsigned seed, int64_t *count)
{
  int64_t n = 0;
  for (int64_t p = 0; p < m->n; ++p)
    n += m->alive[p];
  int64_t *order = phew_malloc((size_t)n, sizeof *order);
  if (!order)
    return NULL;
  n = 0;
  for (int64_t p = 0; p < m->n; ++p)
    if (m->alive[p])
      order[n++] = p;
  if (peak_sort_higher_first(peaks, order, n) != PHEW_OK) {
    free(order);
    return NULL;
  }
  if (seed != 0) {
    uint64_t state = seed;
    for (int64_t i = n - 1; i > 0; --i) { /* Fisher-Yates with splitmix64 */
      uint64_t z = (state += UINT64_C(0x9E3779B97F4A7C15));
      z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
      z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
      z ^= z >> 31;
      const int64_t j = (int64_t)(z % (uint64_t)(i + 1));
      const int64_t t = order[i];
      order[i] = order[j];
      order[j] = t;
    }
  }
  *count = n;
  return order;
}

static int wants_to_merge(const merge_state *m, const peak_table *peaks, int64_t p, merge_rule rule,
                          double threshold_value, double density_threshold)
{
  const int64_t k = m->key_neighbour[p];
  if (rule == MERGE_BY_SADDLE)
    return k >= 0 && m->key_saddle[p] > threshold_value;
  const double base = k >= 0 ? m->key_saddle[p] : density_threshold;
  return peaks->density[p] / base < threshold_value;
}

static phew_status record_event(merge_state *m, int64_t child, int64_t parent, double saddle, int32_t level)
{
  if (m->n_events == m->events_capacity) {
    const int64_t c = m->events_capacity < 64 ? 64 : 2 * m->events_capacity;
    merge_event *e = phew_realloc(m->events, (size_t)c, sizeof *e);
    if (!e)
      return PHEW_ERROR_MEMORY;
    m->events = e;
    m->events_capacity = c;
  }
  m->events[m->n_events++] = (merge_event){child, parent, saddle, level};
  return PHEW_OK;
}

/* What travels between ranks while merging: a row maximum of the saddle matrix (ghost
 * copy -> owner), and the label a peak merged into (owner -> ghost copies). */
typedef struct row_max {
  double saddle;
  peak_ref neighbour;
} row_max;

typedef peak_ref label; /* global_id -1: the peak's group is gone (discarded noise) */

typedef struct merge_pass {
  merge_state *m;
  peak_comm *pc;
  int64_t *final;
  unsigned char *changed;
  int64_t n_alloc; /* entries allocated in final and changed */
} merge_pass;

/* Per-peak working arrays follow the peak table as ghost peaks are added. */
static phew_status pass_fit(merge_pass *w)
{
  const int64_t n = w->pc->peaks->n;
  if (merge_state_fit(w->m, n) != PHEW_OK)
    return PHEW_ERROR_MEMORY;
  if (n <= w->n_alloc)
    return PHEW_OK;
  const int64_t c = n < 2 * w->n_alloc ? 2 * w->n_alloc : n;
  int64_t *final = phew_realloc(w->final, (size_t)c, sizeof *final);
  if (final)
    w->final = final;
  unsigned char *changed = phew_realloc(w->changed, (size_t)c, sizeof *changed);
  if (changed)
    w->changed = changed;
  if (!final || !changed)
    return PHEW_ERROR_MEMORY;
  for (int64_t p = w->n_alloc; p < c; ++p) {
    w->final[p] = p;
    w->changed[p] = 0;
  }
  w->n_alloc = c;
  return PHEW_OK;
}

/* A ghost peak from a message: found, or added to the table (and to every per-peak array). */
static phew_status known_peak(merge_pass *w, const peak_ref *r, int64_t *index)
{
  if (peak_table_ghost(w->pc->peaks, r, index) != PHEW_OK)
    return PHEW_ERROR_MEMORY;
  return pass_fit(w);
}

static phew_status receive_row_max(void *context, int64_t p, const void *value)
{
  merge_pass *w = context;
  const row_max *r = value;
  int64_t q;
  if (known_peak(w, &r->neighbour, &q) != PHEW_OK)
    return PHEW_ERROR_MEMORY;
  consider_saddle(w->m, w->pc->peaks, p, q, r->saddle);
  return PHEW_OK;
}

/* Key saddles (section 3.5): each rank takes row maxima over its part of the sparse saddle
 * matrix; only the maxima of ghost rows travel, to the owners, which keep the highest. */
static phew_status find_key_saddles_everywhere(merge_pass *w, const edge_list *edges)
{
  merge_state *m = w->m;
  const peak_table *peaks = w->pc->peaks;
  find_key_saddles(m, peaks, edges);
  row_max *rows = phew_malloc((size_t)peaks->n, sizeof *rows);
  unsigned char *has = phew_malloc((size_t)peaks->n, sizeof *has);
  const int ok = rows && has;
  for (int64_t p = 0; ok && p < peaks->n; ++p) {
    const int64_t k = m->key_neighbour[p];
    has[p] = k >= 0;
    if (k >= 0) {
      memset(&rows[p], 0, sizeof rows[p]);
      rows[p].saddle = m->key_saddle[p];
      rows[p].neighbour = peak_table_ref(peaks, k);
    }
  }
  /* without its arrays a rank still takes part, sending nothing, and the exchange fails */
  phew_status s = peak_comm_collect(w->pc, ok ? rows : NULL, sizeof *rows, has, receive_row_max, w);
  free(rows);
  free(has);
  /* key neighbours new to an owner become ghost peaks there: their owners must know */
  return peak_comm_register(w->pc, s);
}

static phew_status receive_label(void *context, int64_t p, const void *value)
{
  merge_pass *w = context;
  const label *l = value;
  if (l->global_id < 0) {
    w->final[p] = -1;
    return PHEW_OK;
  }
  return known_peak(w, l, &w->final[p]);
}

/* Owned peaks whose label changed tell their ghost copies the new label. */
static phew_status scatter_changed_labels(merge_pass *w)
{
  const peak_table *peaks = w->pc->peaks;
  label *labels = phew_malloc((size_t)peaks->n_owned, sizeof *labels);
  const int ok = labels != NULL;
  for (int64_t p = 0; ok && p < peaks->n_owned; ++p) {
    const int64_t f = w->final[p];
    labels[p] = peak_table_ref(peaks, f);
  }
  phew_status s = peak_comm_scatter(w->pc, labels, sizeof *labels, w->changed, receive_label, w);
  free(labels);
  for (int64_t p = 0; p < peaks->n_owned; ++p)
    w->changed[p] = 0;
  return peak_comm_register(w->pc, s);
}

/* Chains of mergers within a level (section 3.6): sweep the owned peaks until nothing moves
 * locally, send the changed labels to the ghost copies, and repeat until no label moved on
 * any rank. */
static phew_status follow_chains(merge_pass *w, const int64_t *order, int64_t n_order, const int64_t *into,
                                 int32_t *rounds)
{
  for (int64_t p = 0; p < w->pc->peaks->n; ++p)
    w->final[p] = p;
  int64_t moved_here;
  do {
    moved_here = 0;
    int64_t moved;
    do {
      moved = 0;
      for (int64_t i = 0; i < n_order; ++i) {
        const int64_t p = order[i];
        if (into[p] != p && w->final[p] != w->final[into[p]]) {
          w->final[p] = w->final[into[p]];
          w->changed[p] = 1;
          ++moved;
        }
      }
      moved_here += moved;
    } while (moved > 0);
    if (scatter_changed_labels(w) != PHEW_OK)
      return PHEW_ERROR_MEMORY;
    ++*rounds;
  } while (comm_sum(w->pc->c, moved_here) > 0);
  return PHEW_OK;
}

/* The mergers of a level: into[p] is the key neighbour an alive peak p merges into, or p
 * itself; how many merge here. */
static int64_t choose_mergers(const merge_state *m, const peak_table *peaks, const int64_t *order, int64_t n_order,
                              merge_rule rule, double threshold_value, double density_threshold, int64_t *into)
{
  int64_t n_mergers = 0;
  for (int64_t p = 0; p < m->n; ++p)
    into[p] = p;
  for (int64_t i = 0; i < n_order; ++i) {
    const int64_t p = order[i];
    const int64_t k = m->key_neighbour[p];
    if (m->alive[p] && k >= 0 && peak_higher(peaks, k, p) &&
        wants_to_merge(m, peaks, p, rule, threshold_value, density_threshold)) {
      into[p] = k;
      ++n_mergers;
    }
  }
  return n_mergers;
}

/* The level's mergers done (final: the head each peak's chain ends at): the merged peaks
 * recorded as events and no longer alive, and every peak known here, owned or ghost,
 * following its group's head. Nonzero if memory ran out for an event. */
static int apply_mergers(merge_state *m, const int64_t *order, int64_t n_order, const int64_t *into,
                         const int64_t *final, int32_t level)
{
  int failed = 0;
  for (int64_t i = 0; i < n_order; ++i) {
    const int64_t p = order[i];
    if (into[p] != p) {
      failed |= record_event(m, p, final[p], m->key_saddle[p], level) != PHEW_OK;
      m->alive[p] = 0;
    }
  }
  for (int64_t p = 0; p < m->n; ++p)
    if (m->group[p] >= 0)
      m->group[p] = final[m->group[p]];
  return failed;
}

/* Saddle lists combined: both ends relabelled, the saddles now inside one group dropped. */
static void combine_saddle_lists(edge_list *edges, const int64_t *final)
{
  int64_t kept = 0;
  for (int64_t e = 0; e < edges->n; ++e) {
    saddle_edge x = edges->edges[e];
    x.a = final[x.a];
    x.b = final[x.b];
    if (x.a != x.b)
      edges->edges[kept++] = x;
  }
  edges->n = kept;
}

/* Dead peaks leave the visiting order; how many stay. */
static int64_t drop_dead_peaks(const merge_state *m, int64_t *order, int64_t n_order)
{
  int64_t n_alive = 0;
  for (int64_t i = 0; i < n_order; ++i)
    if (m->alive[order[i]])
      order[n_alive++] = order[i];
  return n_alive;
}

phew_status merge_levels(merge_state *m, peak_comm *pc, edge_list *edges, merge_rule rule, double threshold_value,
                         double density_threshold, unsigned order_seed, int32_t *rounds, call_result *result)
{
  const peak_table *peaks = pc->peaks;
  merge_pass w = {m, pc, NULL, NULL, 0};
  int64_t n_order = 0;
  int64_t *order = visiting_order(m, peaks, order_seed, &n_order);
  int64_t *into = NULL;
  int failed = !order || pass_fit(&w) != PHEW_OK;
  phew_status status = PHEW_OK;
  for (;;) {
    if (comm_max(pc->c, failed) || find_key_saddles_everywhere(&w, edges) != PHEW_OK) {
      status = phew_fail(result, PHEW_ERROR_MEMORY, "out of memory while merging peaks");
      goto done;
    }
    ++*rounds;
    int64_t *bigger = phew_realloc(into, (size_t)w.n_alloc, sizeof *into);
    failed = !bigger;
    if (bigger)
      into = bigger;
    const int64_t n_mergers =
        failed ? 0 : choose_mergers(m, peaks, order, n_order, rule, threshold_value, density_threshold, into);
    if (comm_max(pc->c, failed)) {
      status = phew_fail(result, PHEW_ERROR_MEMORY, "out of memory while merging peaks");
      goto done;
    }
    if (comm_sum(pc->c, n_mergers) == 0)
      break;
    const int32_t level = ++m->levels;
    if (follow_chains(&w, order, n_order, into, rounds) != PHEW_OK) {
      status = phew_fail(result, PHEW_ERROR_MEMORY, "out of memory while merging peaks");
      goto done;
    }
    failed = apply_mergers(m, order, n_order, into, w.final, level);
    combine_saddle_lists(edges, w.final);
    n_order = drop_dead_peaks(m, order, n_order);
  }
done:
  free(order);
  free(into);
  free(w.final);
  free(w.changed);
  return status;
}

/* An isolated peak that is not relevant is noise with nowhere to go: it is discarded, and
 * the groups it headed, on every rank, lose their head. */
phew_status merge_discard_isolated_noise(merge_state *m, peak_comm *pc, double density_threshold,
                                         double relevance_threshold, int64_t *discarded, call_result *result)
{
  const peak_table *peaks = pc->peaks;
  merge_pass w = {m, pc, NULL, NULL, 0};
  int64_t n = 0;
  phew_status s = pass_fit(&w);
  for (int64_t i = 0; s == PHEW_OK && i < peaks->n_owned; ++i)
    if (m->alive[i] && m->key_neighbour[i] < 0 && peaks->density[i] / density_threshold < relevance_threshold) {
      m->alive[i] = 0;
      w.final[i] = -1;
      w.changed[i] = 1;
      ++n;
    }
  if (comm_max(pc->c, s != PHEW_OK) || scatter_changed_labels(&w) != PHEW_OK)
    s = phew_fail(result, PHEW_ERROR_MEMORY, "out of memory while removing noise");
  for (int64_t p = 0; s == PHEW_OK && p < m->n; ++p) {
    const int64_t g = m->group[p];
    if (g >= 0 && w.final[g] < 0)
      m->group[p] = -1;
  }
  *discarded = comm_sum(pc->c, n);
  free(w.final);
  free(w.changed);
  return s;
}
