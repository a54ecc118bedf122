/* The PHEW stages on a mesh (paper, sections 2 and 3): the mean density and the automatic
 * thresholds (thresholds.c), the peaks this rank knows (peaks.c) and their values shared with
 * the ranks holding copies (peak_comm.c), the watershed (watershed.c), the saddles between
 * neighbouring patches (saddles.c), and merging level by level, for noise removal and for
 * saddle merging (merging.c). The catalogue (catalogue/) turns their result into labels and
 * tables. */
#ifndef PHEW_SEGMENTATION_H
#define PHEW_SEGMENTATION_H

#include "id_map.h"
#include "mesh.h"

/* ---- the mean density and the automatic thresholds (thresholds.c) ------------------------ */
/* Collective: the mean density of the active cells of all ranks (phew_params) in *mean.
 * Cells whose density is NaN, infinite or negative are left out and counted in *n_bad (all
 * ranks): the watershed reports them. */
phew_status mesh_mean_density(const mesh *m, const field *f, comm *c, int n_threads, double *mean, int64_t *n_bad);
/* Collective: the same for the own particles of the particle path: n masses (NULL: 1 each)
 * and densities (in the density's units, unit the physical density of 1); with a box of
 * volume box_volume > 0 the total mass over it, else over the sum of mass / density. */
phew_status particles_mean_density(const comm *c, int64_t n, const double *mass, const double *rho, double box_volume,
                                   double unit, double *mean);
/* given with its automatic thresholds replaced by those of this mean density; fails with
 * PHEW_ERROR_DATA when one lies beyond the double range. */
phew_status params_resolve(const phew_params *given, double mean_density, phew_params *used, call_result *result);

/* ---- peaks (peaks.c) ------------------------------------------------------------------- */
/* The peaks this rank knows (paper section 3.2): first its own ("active") peaks, then ghost
 * peaks owned by other ranks, found by global id through a hash table that grows. */
typedef struct peak_table {
  int64_t n;       /* number of peaks */
  int64_t n_owned; /* peaks [0, n_owned) are this rank's */
  int64_t capacity;
  int64_t *global_id; /* global cell id of the peak cell */
  int64_t *cell;      /* stored index of the peak cell, -1 for a ghost peak */
  double *density;
  double *coord; /* cell coordinates of the peak (3 per peak, see mesh) */
  int *owner;    /* rank */
  id_map index;  /* global id -> peak index (its collisions are a statistic) */
} peak_table;

/* A peak as messages carry it: what any rank needs to add it as a ghost peak, so that no
 * rank decodes another rank's ids. global_id < 0 marks "no peak". (The coordinates of ghost
 * peaks, used only by the catalogue, come from their owners once, before it.) */
typedef struct peak_ref {
  int64_t global_id;
  double density;
  int32_t owner;
  int32_t unused; /* zero: messages compare and travel bytewise */
} peak_ref;

phew_status peak_table_reserve(peak_table *t, int64_t capacity);
phew_status peak_table_add(peak_table *t, int64_t global_id, int64_t cell, double density, const double coord[3],
                           int owner);
/* Index of the peak with this global id, or -1. */
int64_t peak_table_find(const peak_table *t, int64_t global_id);
/* The message describing peak p; a reference to no peak for p < 0. */
peak_ref peak_table_ref(const peak_table *t, int64_t p);
/* Index of the peak r refers to, added as a ghost peak if it is new. */
phew_status peak_table_ghost(peak_table *t, const peak_ref *r, int64_t *index);
void peak_table_free(peak_table *t);
/* Sort a list of local peak indices into decreasing order (density, then lower global id). */
phew_status peak_sort_higher_first(const peak_table *t, int64_t *list, int64_t n);

/* ---- the peak communicator (peak_comm.c) ------------------------------------------------ */
typedef struct peak_comm {
  comm *c;
  peak_table *peaks;
  int64_t n_registered; /* peaks [n_owned, n_registered) are known to their owners */
  int64_t n_holders, holders_capacity;
  int64_t *holder_peak; /* owned peak ... */
  int *holder_rank;     /* ... of which this rank holds a ghost copy */
} peak_comm;

/* Called for each received value: peak is the local index of the peak it belongs to. */
typedef phew_status (*peak_receive_fn)(void *context, int64_t peak, const void *value);

phew_status peak_comm_init(peak_comm *pc, comm *c, peak_table *peaks);
void peak_comm_free(peak_comm *pc);
/* Collective: tell the owners about the ghost peaks added since the last call. A failed
 * status on any rank makes it fail on every rank. */
phew_status peak_comm_register(peak_comm *pc, phew_status status);
int64_t peak_comm_ghosts(const peak_comm *pc);
/* Collective: values of owned peaks (those flagged in only, or all) go to their ghost copies;
 * receive (or, if NULL, a plain copy into values) takes each of them. */
phew_status peak_comm_scatter(peak_comm *pc, void *values, size_t value_size, const unsigned char *only,
                              peak_receive_fn receive, void *context);
/* Collective: ghost peaks get their coordinates from their owners. */
phew_status peak_comm_share_coordinates(peak_comm *pc);
/* Collective: values of ghost peaks (flagged in only, or all) go to the owners' receive. */
phew_status peak_comm_collect(peak_comm *pc, const void *values, size_t value_size, const unsigned char *only,
                              peak_receive_fn receive, void *context);

/* a is higher than b in the total order (density, then lower global id). */
static inline int peak_higher(const peak_table *t, int64_t a, int64_t b)
{
  return t->density[a] > t->density[b] || (t->density[a] == t->density[b] && t->global_id[a] < t->global_id[b]);
}

/* ---- watershed (watershed.c) ----------------------------------------------------------- */
/* Fills cell_peak with the local peak index of every active test cell (-1 otherwise) and
 * the peak table; peak_patch_id is used as working memory (catalogue_build fills it).
 * PHEW_CANCELLED when rc says stop (on every rank). */
phew_status watershed_run(const mesh *m, const field *f, const ghost_plan *plan, peak_comm *pc, run_control *rc,
                          int64_t *peak_patch_id, int64_t *cell_peak, phew_stats *stats, call_result *result);

/* ---- saddles (saddles.c) ----------------------------------------------------------------- */
typedef struct saddle_edge {
  int64_t a, b;   /* local peak indices, a != b */
  double density; /* highest (rho_a + rho_b) / 2 over neighbouring cell pairs */
} saddle_edge;

typedef struct edge_list {
  int64_t n;
  int64_t capacity;
  saddle_edge *edges;
} edge_list;

phew_status saddles_find(const mesh *m, const field *f, const int64_t *cell_peak, int64_t n_peaks, int n_threads,
                         edge_list *out, call_result *result);
void edge_list_free(edge_list *e);
/* Collective: the number of distinct pairs of neighbouring patches over all ranks. */
phew_status saddles_count_distinct(peak_comm *pc, const edge_list *edges, int64_t *count);

/* ---- level-by-level merging (merging.c) ------------------------------------------------- */
typedef struct merge_event {
  int64_t child;  /* local peak index of the merged peak */
  int64_t parent; /* the peak whose group it joins (final label at that level) */
  double saddle;  /* the key saddle it merged through */
  int32_t level;
} merge_event;

typedef enum merge_rule { MERGE_BY_RELEVANCE, MERGE_BY_SADDLE } merge_rule;

typedef struct merge_state {
  int64_t n; /* peaks known here: owned ones first, then ghost peaks */
  int64_t n_owned;
  int64_t *group;       /* final label (local peak index) of each peak, -1 for none */
  unsigned char *alive; /* owned peaks that have not merged (ghost peaks: 0) */
  double *key_saddle;   /* after the last level: highest saddle of every alive peak, or -inf */
  int64_t *key_neighbour;
  merge_event *events; /* of owned peaks */
  int64_t n_events, events_capacity;
  int32_t levels;
} merge_state;

phew_status merge_state_init(merge_state *m, int64_t n_owned, int64_t n_peaks);
phew_status merge_state_fit(merge_state *m, int64_t n_peaks);
void merge_state_free(merge_state *m);
/* Collective: merge alive peaks level by level until a level has no merger anywhere. Ghost
 * peaks may be added to the table (and to the state). rounds counts communication rounds. */
phew_status merge_levels(merge_state *m, peak_comm *pc, edge_list *edges, merge_rule rule, double threshold_value,
                         double density_threshold, unsigned order_seed, int32_t *rounds, call_result *result);
/* Collective: alive peaks without any saddle and below the relevance threshold are dropped,
 * with the groups they head on every rank. */
phew_status merge_discard_isolated_noise(merge_state *m, peak_comm *pc, double density_threshold,
                                         double relevance_threshold, int64_t *discarded, call_result *result);

#endif
