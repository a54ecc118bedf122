/* Level-by-level merging of peaks through their key saddles (paper sections 2.4 to 2.7).
 *
 * On each level every alive peak finds its key saddle (highest saddle; ties go to the
 * neighbour higher in the order). A peak that meets the rule's criterion merges into its
 * key neighbour if that neighbour is higher, and labels follow chains of such mergers within
 * the level. Then the saddle lists of merged peaks are combined (the edge list is relabelled;
 * the key search takes the maximum over duplicates) and the next level starts, until a level
 * has no merger. The chains are resolved by repeated sweeps until nothing changes, exactly
 * as the parallel algorithm does between communications, so the visiting order cannot
 * change the result (section 2.7); the sorted order just needs a single sweep. */
#include "internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

phew_status merge_state_init(merge_state *m, int64_t n)
{
  memset(m, 0, sizeof *m);
  m->n = n;
  m->group = phew_malloc((size_t)n, sizeof *m->group);
  m->alive = phew_malloc((size_t)n, sizeof *m->alive);
  m->key_saddle = phew_malloc((size_t)n, sizeof *m->key_saddle);
  m->key_neighbour = phew_malloc((size_t)n, sizeof *m->key_neighbour);
  if (!m->group || !m->alive || !m->key_saddle || !m->key_neighbour) {
    merge_state_free(m);
    return PHEW_ERROR_MEMORY;
  }
  for (int64_t p = 0; p < n; ++p) {
    m->group[p] = p;
    m->alive[p] = 1;
    m->key_saddle[p] = -INFINITY;
    m->key_neighbour[p] = -1;
  }
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

phew_status merge_levels(merge_state *m, const peak_table *peaks, edge_list *edges, merge_rule rule,
                         double threshold_value, double density_threshold, unsigned order_seed,
                         phew_result *result)
{
  int64_t n_order = 0;
  int64_t *order = visiting_order(m, peaks, order_seed, &n_order);
  int64_t *into = phew_malloc((size_t)m->n, sizeof *into);
  int64_t *final = phew_malloc((size_t)m->n, sizeof *final);
  phew_status status = PHEW_OK;
  if (!order || !into || !final) {
    status = phew_fail(result, PHEW_ERROR_MEMORY, "out of memory while merging peaks");
    goto done;
  }
  for (;;) {
    find_key_saddles(m, peaks, edges);
    for (int64_t p = 0; p < m->n; ++p)
      final[p] = p;
    int64_t n_mergers = 0;
    for (int64_t i = 0; i < n_order; ++i) {
      const int64_t p = order[i];
      const int64_t k = m->key_neighbour[p];
      into[p] = p;
      if (m->alive[p] && k >= 0 && peak_higher(peaks, k, p) &&
          wants_to_merge(m, peaks, p, rule, threshold_value, density_threshold)) {
        into[p] = k;
        ++n_mergers;
      }
    }
    if (n_mergers == 0)
      break;
    const int32_t level = ++m->levels;

    /* follow chains of mergers within the level until no label moves */
    int64_t moved;
    do {
      moved = 0;
      for (int64_t i = 0; i < n_order; ++i) {
        const int64_t p = order[i];
        if (into[p] != p && final[p] != final[into[p]]) {
          final[p] = final[into[p]];
          ++moved;
        }
      }
    } while (moved > 0);

    for (int64_t i = 0; i < n_order; ++i) {
      const int64_t p = order[i];
      if (into[p] != p) {
        if (record_event(m, p, final[p], m->key_saddle[p], level) != PHEW_OK) {
          status = phew_fail(result, PHEW_ERROR_MEMORY, "out of memory while merging peaks");
          goto done;
        }
        m->alive[p] = 0;
      }
    }
    for (int64_t p = 0; p < m->n; ++p)
      if (m->group[p] >= 0)
        m->group[p] = final[m->group[p]];

    /* combine saddle lists: relabel both ends, drop the saddles now inside one group */
    int64_t kept = 0;
    for (int64_t e = 0; e < edges->n; ++e) {
      saddle_edge x = edges->edges[e];
      x.a = final[x.a];
      x.b = final[x.b];
      if (x.a != x.b)
        edges->edges[kept++] = x;
    }
    edges->n = kept;

    /* dead peaks leave the visiting order */
    int64_t n_alive = 0;
    for (int64_t i = 0; i < n_order; ++i)
      if (m->alive[order[i]])
        order[n_alive++] = order[i];
    n_order = n_alive;
  }
done:
  free(order);
  free(into);
  free(final);
  return status;
}
