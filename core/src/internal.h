/* Internal declarations shared by the core's source files. Not part of the public API. */
#ifndef PHEW_INTERNAL_H
#define PHEW_INTERNAL_H

#include "phew/phew.h"

#include <stdint.h>

#include "exact_sum.h"

/* ---- error reporting ---------------------------------------------------------------- */
phew_status phew_fail(phew_result *result, phew_status status, const char *format, ...);

/* ---- communication (comm.c) ------------------------------------------------------------ */
#ifdef PHEW_WITH_MPI
#include <mpi.h>
#endif

typedef struct comm {
  int rank, size;
#ifdef PHEW_WITH_MPI
  MPI_Comm mpi;
#endif
  int64_t bytes_sent; /* to other ranks, by this rank */
} comm;

phew_status comm_init(comm *c, const phew_input *input, phew_result *result);
int64_t comm_sum(const comm *c, int64_t value);
int64_t comm_max(const comm *c, int64_t value);
double comm_max_double(const comm *c, double value);
/* Collective: receive[r] = what rank r put in its send[this rank] (one double per rank). */
void comm_alltoall_double(const comm *c, const double *send, double *receive);
/* Collective: values[k] becomes the sum over ranks, for k < n. */
void comm_sum_array(const comm *c, int64_t *values, int64_t n);
/* Collective: the worst status of all ranks, with its message on every rank. */
phew_status comm_agree(const comm *c, phew_status status, phew_result *result);

/* Items of a fixed size addressed to ranks, sent in one sparse exchange. */
typedef struct outbox {
  size_t item_size;
  int size;
  int64_t n, capacity;
  int *dest;
  unsigned char *items;
  int failed; /* an item could not be stored: the exchange fails on every rank */
} outbox;

typedef struct inbox {
  int64_t n;
  size_t item_size;
  int *count, *offset; /* per source rank */
  unsigned char *items;
} inbox;

void outbox_init(outbox *o, const comm *c, size_t item_size);
phew_status outbox_put(outbox *o, int dest, const void *item);
/* Collective: delivers every rank's items (grouped by source rank, each in the order put)
 * and empties the outbox. Fails on every rank if one rank failed to fill its outbox. */
phew_status outbox_send(outbox *o, comm *c, inbox *in);
void outbox_free(outbox *o);
void inbox_free(inbox *in);
/* Collective: the same exchange for items already grouped by destination (counts[r] for r). */
phew_status comm_exchange_grouped(comm *c, const void *items, const int *counts, size_t item_size, inbox *in);
void comm_allgather(const comm *c, const void *item, size_t item_size, void *out);
/* Collective: sums[k] becomes the sum over ranks, the same bits on every rank (PHEW_OK, or
 * PHEW_ERROR_MEMORY on every rank). */
phew_status comm_sum_exact(const comm *c, exact_sum *sums, int n);
/* Collective: every rank's items end up on rank 0, in rank order; counts[r] says how many
 * came from rank r (rank 0 only, free it). */
phew_status comm_gather(comm *c, const void *items, int64_t n, size_t item_size, void **out, int64_t *n_out,
                        int **counts);
/* Collective: rank 0's *n items at *items reach every rank: the others get a copy there (and
 * its count in *n; what *items pointed to there is not freed: pass NULL); every rank frees its
 * own. PHEW_ERROR_MEMORY on every rank if one ran out. */
phew_status comm_broadcast(comm *c, void **items, int64_t *n, size_t item_size);
/* Collective: rank 0 sends counts[r] consecutive items to rank r; every rank receives n_out. */
phew_status comm_scatter(comm *c, const void *items, const int *counts, size_t item_size, void *out, int64_t n_out);

/* ---- geometry of a structured block (grid.c) ------------------------------------------ */
typedef struct block {
  const phew_grid *grid;
  int64_t dims[3];     /* stored cells per axis */
  int64_t n_stored;
  int64_t lo[3], hi[3]; /* active cells in stored coordinates: [lo, hi) */
  int wraps[3];        /* the stored box spans a periodic axis: neighbours wrap inside it */
  int64_t fast_lo[3], fast_hi[3]; /* cells whose 26 neighbours are stored and unwrapped */
  int64_t offsets[27]; /* stored-index offsets of the 3x3x3 stencil, increasing, self at 13 */
} block;

/* Largest number of cells along one axis of a grid: cell coordinates stay exact in a double. */
#define PHEW_MAX_AXIS_CELLS (INT64_C(1) << 53)

phew_status block_init(block *b, const phew_grid *grid, phew_result *result);
/* Global id of a stored cell given its stored coordinates. */
int64_t block_global_id(const block *b, int64_t x, int64_t y, int64_t z);
/* Stored index of the neighbour (x+dx, y+dy, z+dz), or -1 if it does not exist here. */
int64_t block_neighbour(const block *b, int64_t x, int64_t y, int64_t z, int dx, int dy, int dz);

/* ---- ghost cells filled from their owners (ghost_exchange.c) ----------------------------- */
/* The ghost cells of this rank: for each, its local index, the rank owning it and its global
 * id (which travel with the requests, so that no rank decodes another rank's layout). */
typedef struct ghost_list {
  int64_t n;
  int64_t *cell;
  int32_t *owner;
  int64_t *global_id;
} ghost_list;

phew_status ghost_list_reserve(ghost_list *g, int64_t n); /* room for n, empty */
void ghost_list_free(ghost_list *g);

/* Local index of the active cell of this rank with this global id, or -1. */
typedef int64_t (*cell_of_id_fn)(const void *context, int64_t global_id);

typedef struct ghost_plan {
  int64_t n_ask;        /* ghost cells of this rank */
  int64_t *ask_cell;    /* their local indices, grouped by owner rank */
  int64_t n_answer;     /* active cells of this rank that other ranks hold as ghosts */
  int64_t *answer_cell; /* their local indices, grouped by the rank that asked */
  int *answer_count;    /* per rank */
} ghost_plan;

/* Collective. Fails on every rank if some ghost names no valid owner, or an owner does not
 * have the cell. */
phew_status ghost_plan_build(ghost_plan *p, comm *c, const ghost_list *ghosts, cell_of_id_fn find,
                             const void *context, char *message, size_t message_size);
/* Collective: answer[i] (value of answer_cell[i]) travels to the ghost copies; ask[i]
 * receives the value of ask_cell[i]. */
phew_status ghost_plan_exchange(const ghost_plan *p, comm *c, const void *answer, void *ask, size_t value_size);
void ghost_plan_free(ghost_plan *p);
/* Collective: the plan of a structured block's ghost layers (grid_ghosts.c). */
phew_status grid_ghost_plan(ghost_plan *p, comm *c, const block *b, char *message, size_t message_size);

/* ---- the cells: a structured block, an explicit graph or AMR leaves (mesh.c) --------------- */
typedef struct amr_mesh amr_mesh; /* amr_mesh.h */

typedef struct mesh {
  phew_mesh_kind kind;
  block b;                 /* PHEW_MESH_STRUCTURED */
  const phew_graph *graph; /* PHEW_MESH_GRAPH */
  amr_mesh *amr;           /* PHEW_MESH_AMR (owned: mesh_free) */
  int64_t n_local;         /* cells stored here (active, ghost and, on AMR, covered) */
  int64_t n_active;        /* cells this rank owns and labels (AMR: leaves) */
  int64_t n_ghosts;        /* copies of other ranks' cells (or of our own across a periodic edge) */
  /* Cell coordinates used for centres: position = origin + (c + shift) * spacing, where c is
   * the global cell index on a grid (shift 0.5), in finest cells on AMR (as on a grid of the
   * finest level; multiples of 1/2), the position itself on a graph (shift 0). period[d] > 0 makes axis d
   * periodic with that period (in coordinates). Masses and volumes of grids and AMR are
   * counted in cells of size cell_size (AMR: finest cells). */
  double period[3];
  double origin[3], spacing[3], shift;
  double cell_size[3];
  int active_labels; /* grids: the labels of the active cells alone, at the start of the arrays
                        (phew_input.labels_active_only) */
  /* Graphs the core builds from particles (particles/): 32-bit neighbour lists in place of
   * graph->neighbours, the particles' masses (summed instead of density times volume; NULL:
   * 1 each) and velocities (3 per cell, or NULL). */
  int particles;
  const int32_t *neighbours32;
  const double *cell_mass;
  const double *velocity;
  double density_unit;
} mesh;

/* What the particle path adds to a graph (all NULL for a caller's graph). */
typedef struct graph_extras {
  const int32_t *neighbours32;
  const double *mass;
  const double *velocity;
  double density_unit; /* physical density of 1 in the density's units (mean densities) */
  double mean_density; /* the particles' mean density (phew_params), in the density's units */
} graph_extras;

/* The clump finder on a mesh: phew_find_clumps without the particle path (which builds a
 * graph and calls this with its extras). */
phew_status find_clumps_mesh(const phew_input *in, const graph_extras *extras, const phew_params *params,
                             phew_labels *labels, phew_result *result);
/* The checks of the parameters, as phew_find_clumps makes them. */
phew_status params_check(const phew_params *p, phew_result *result);

/* Collective: checks the description on every rank (one bad rank stops all). extras: NULL,
 * or what the particle path adds to its graph. */
phew_status mesh_init(mesh *m, const phew_input *in, const graph_extras *extras, comm *c, phew_result *result);
void mesh_free(mesh *m);
/* Collective: the plan that fills the ghost cells from their owners. */
phew_status mesh_ghost_plan(const mesh *m, comm *c, ghost_plan *plan, char *message, size_t message_size);
/* Position (in the user's units) of a point given in cell coordinates. */
static inline double mesh_position(const mesh *m, int axis, double c)
{
  return m->origin[axis] + (c + m->shift) * m->spacing[axis];
}
/* A position wrapped into the periodic box along a periodic axis (unchanged otherwise). */
double mesh_wrap(const mesh *m, int axis, double position);

/* The cells of a graph, or of AMR leaves (through a cursor, amr_mesh.h), for the kernels
 * that are not the grid's stencil kernels: whether a graph cell is active, its neighbours,
 * centre and volume; the global id of any cell of either. */
typedef struct cell_walk {
  const mesh *m;
  struct amr_cursor *amr; /* AMR only */
} cell_walk;

phew_status cell_walk_init(cell_walk *w, const mesh *m);
void cell_walk_free(cell_walk *w);
/* Graphs: 1 if this rank owns cell i (not a ghost). */
int cell_walk_active(cell_walk *w, int64_t i);
/* Graphs: the neighbours of cell i (local indices): n of them, entry k is
 * neighbour_at(&list, k), from 64-bit or 32-bit lists. */
typedef struct neighbour_list {
  const int64_t *wide;
  const int32_t *narrow;
  int64_t n;
} neighbour_list;

static inline neighbour_list cell_walk_neighbours(const cell_walk *w, int64_t i)
{
  const phew_graph *g = w->m->graph;
  const int64_t first = g->offsets[i];
  neighbour_list l = {NULL, NULL, g->offsets[i + 1] - first};
  if (w->m->neighbours32)
    l.narrow = w->m->neighbours32 + first;
  else
    l.wide = g->neighbours + first;
  return l;
}

static inline int64_t neighbour_at(const neighbour_list *l, int64_t k) { return l->narrow ? l->narrow[k] : l->wide[k]; }
/* Global id of any local cell. */
int64_t cell_walk_global_id(const cell_walk *w, int64_t cell);
/* Cell coordinates (see mesh) and volume (graphs) of the current cell. */
void cell_walk_coord(const cell_walk *w, int64_t i, double c[3]);
double cell_walk_volume(const cell_walk *w, int64_t i);

/* Nearest-image displacement a - b along an axis. */
static inline double mesh_displacement(const mesh *m, int axis, double a, double b)
{
  double d = a - b;
  const double p = m->period[axis];
  if (p > 0.0) {
    if (2.0 * d > p)
      d -= p;
    else if (2.0 * d < -p)
      d += p;
  }
  return d;
}

/* ---- the density field ------------------------------------------------------------------ */
typedef struct field {
  const float *f32; /* exactly one of the two is set */
  const double *f64;
  double threshold;
} field;

static inline double field_value(const field *f, int64_t i) { return f->f32 ? (double)f->f32[i] : f->f64[i]; }

/* ---- the mean density and the automatic thresholds (thresholds.c) ------------------------ */
/* Collective: the mean density of the active cells of all ranks (phew_params) in *mean.
 * Cells whose density is NaN, infinite or negative are left out and counted in *n_bad (all
 * ranks): the watershed reports them. */
phew_status mesh_mean_density(const mesh *m, const field *f, comm *c, double *mean, int64_t *n_bad);
/* Collective: the same for the own particles of the particle path: n masses (NULL: 1 each)
 * and densities (in the density's units, unit the physical density of 1); with a box of
 * volume box_volume > 0 the total mass over it, else over the sum of mass / density. */
phew_status particles_mean_density(const comm *c, int64_t n, const double *mass, const double *rho, double box_volume,
                                   double unit, double *mean);
/* given with its automatic thresholds replaced by those of this mean density; fails with
 * PHEW_ERROR_DATA when one lies beyond the double range. */
phew_status params_resolve(const phew_params *given, double mean_density, phew_params *used, phew_result *result);

/* ---- peaks (peaks.c) ------------------------------------------------------------------- */
/* The peaks this rank knows (paper section 3.2): first its own ("active") peaks, then ghost
 * peaks owned by other ranks, found by global id through a hash table that grows. */
typedef struct peak_table {
  int64_t n;           /* number of peaks */
  int64_t n_owned;     /* peaks [0, n_owned) are this rank's */
  int64_t capacity;
  int64_t *global_id;  /* global cell id of the peak cell */
  int64_t *cell;       /* stored index of the peak cell, -1 for a ghost peak */
  double *density;
  double *coord;       /* cell coordinates of the peak (3 per peak, see mesh) */
  int *owner;          /* rank */
  int64_t *slots;      /* hash of global ids: peak index + 1, 0 for an empty slot */
  uint64_t mask;       /* number of slots - 1 */
  int64_t collisions;  /* occupied slots passed while inserting */
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
  int64_t n_registered;  /* peaks [n_owned, n_registered) are known to their owners */
  int64_t n_holders, holders_capacity;
  int64_t *holder_peak;  /* owned peak ... */
  int *holder_rank;      /* ... of which this rank holds a ghost copy */
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
  return t->density[a] > t->density[b] ||
         (t->density[a] == t->density[b] && t->global_id[a] < t->global_id[b]);
}

/* ---- progress and cancel (run_control.c) ------------------------------------------------- */
/* The caller's progress and cancel callbacks (phew_input). A stage reports where it starts in
 * the run and asks whether to go on, the ranks agreeing; a long loop ticks, which reports how
 * far it is and asks again on this rank alone: it may then leave early, and the ranks agree at
 * the next stage boundary (or the loop's own agreement). NULL controls do nothing. */
typedef struct run_control {
  const phew_input *in;
  const char *stage;
  double from, to; /* the stage's share of the run */
  double part_from, part_to; /* the share of the loop ticking now (run_control_part) */
  int stopped;     /* the cancel callback said stop (it stays said) */
} run_control;

/* Collective: reports `stage` at `from`, then PHEW_CANCELLED on every rank if any was asked
 * to stop (with the message), else PHEW_OK. */
phew_status run_control_stage(run_control *rc, const comm *c, const char *stage, double from, double to,
                              phew_result *result);
/* Local: `done` of `total` items of the stage (or of its part); 1 when this rank was asked to
 * stop. */
int run_control_tick(run_control *rc, int64_t done, int64_t total);
/* The same for loops over single cells, every RUN_CONTROL_CELLS cells only (a callback per
 * cell would cost more than the cell). */
#define RUN_CONTROL_CELLS 65536
static inline int run_control_tick_cells(run_control *rc, int64_t cell, int64_t total)
{
  return cell % RUN_CONTROL_CELLS == 0 && run_control_tick(rc, cell, total);
}
/* The ticks that follow cover the fractions [lo, hi] of the current stage (a stage with several
 * long loops); a stage starts whole. */
void run_control_part(run_control *rc, double lo, double hi);
/* Collective: PHEW_CANCELLED on every rank (with the message) if a tick on any rank was asked
 * to stop, else PHEW_OK; for a stage whose loops cannot wait for the next boundary. */
phew_status run_control_agree(run_control *rc, const comm *c, phew_result *result);

/* ---- watershed (watershed.c) ----------------------------------------------------------- */
/* Fills cell_peak with the local peak index of every active test cell (-1 otherwise) and
 * the peak table; peak_patch_id is used as working memory (catalogue_build fills it).
 * PHEW_CANCELLED when rc says stop (on every rank). */
phew_status watershed_run(const mesh *m, const field *f, const ghost_plan *plan, peak_comm *pc, run_control *rc,
                          int64_t *peak_patch_id, int64_t *cell_peak, phew_stats *stats, phew_result *result);

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

phew_status saddles_find(const mesh *m, const field *f, const int64_t *cell_peak,
                         int64_t n_peaks, edge_list *out, phew_result *result);
void edge_list_free(edge_list *e);
/* Collective: the number of distinct pairs of neighbouring patches over all ranks. */
phew_status saddles_count_distinct(peak_comm *pc, const edge_list *edges, int64_t *count);

/* ---- level-by-level merging (merging.c) ------------------------------------------------- */
typedef struct merge_event {
  int64_t child;   /* local peak index of the merged peak */
  int64_t parent;  /* the peak whose group it joins (final label at that level) */
  double saddle;   /* the key saddle it merged through */
  int32_t level;
} merge_event;

typedef enum merge_rule { MERGE_BY_RELEVANCE, MERGE_BY_SADDLE } merge_rule;

typedef struct merge_state {
  int64_t n;          /* peaks known here: owned ones first, then ghost peaks */
  int64_t n_owned;
  int64_t *group;     /* final label (local peak index) of each peak, -1 for none */
  unsigned char *alive; /* owned peaks that have not merged (ghost peaks: 0) */
  double *key_saddle; /* after the last level: highest saddle of every alive peak, or -inf */
  int64_t *key_neighbour;
  merge_event *events;  /* of owned peaks */
  int64_t n_events, events_capacity;
  int32_t levels;
} merge_state;

phew_status merge_state_init(merge_state *m, int64_t n_owned, int64_t n_peaks);
phew_status merge_state_fit(merge_state *m, int64_t n_peaks);
void merge_state_free(merge_state *m);
/* Collective: merge alive peaks level by level until a level has no merger anywhere. Ghost
 * peaks may be added to the table (and to the state). rounds counts communication rounds. */
phew_status merge_levels(merge_state *m, peak_comm *pc, edge_list *edges, merge_rule rule, double threshold_value,
                         double density_threshold, unsigned order_seed, int32_t *rounds, phew_result *result);
/* Collective: alive peaks without any saddle and below the relevance threshold are dropped,
 * with the groups they head on every rank. */
phew_status merge_discard_isolated_noise(merge_state *m, peak_comm *pc, double density_threshold,
                                         double relevance_threshold, int64_t *discarded, phew_result *result);

/* ---- per-structure sums and the values derived from them (properties.c) ------------------ */
typedef struct sums {
  int64_t n_cells;
  exact_sum mass;      /* sum of rho (grids: the cell volume is a common factor) or rho * volume */
  exact_sum moment[3]; /* sum of the mass terms times the displacement from the reference cell
                          (grids: in cells; graphs: in the positions' units) */
  exact_sum volume;    /* graphs: sum of cell volumes */
  double min_density;
  /* particles: the sum of m v (with velocities); then, once the centre of mass and the mean
   * velocity are known, the sum of m |v - mean|^2 and the largest squared distance of a
   * member from the centre */
  exact_sum momentum[3];
  exact_sum dispersion;
  double max_distance2;
} sums;

void sums_clear(sums *s);
/* Empty sums of a structure with this peak density, ready for sums_accumulate. */
void sums_start(sums *s, const mesh *m, double peak_density);
void sums_merge(sums *to, const sums *from);

/* One kind of structure to sum cells into: the structure of every peak (-1: none), the cell
 * coordinates of each structure's peak (3 per structure), their sums. */
typedef struct sum_target {
  const int64_t *structure_of_peak;
  const double *reference;
  sums *out;
} sum_target;

/* Add every active test cell to the sums of its structure, for each target, in one pass,
 * ticking rc; leaves early (the sums unfinished) when rc says stop. */
void sums_accumulate(const mesh *m, const field *f, const int64_t *cell_peak, const sum_target *targets,
                     int n_targets, run_control *rc);
/* Particles, second pass: the spread of every structure about its centre. centre holds 6
 * values per structure (of target.reference's structures): the centre of mass in cell
 * coordinates (unwrapped) and the mean velocity; only n_cells (the members seen),
 * dispersion and max_distance2 of the out sums are written. */
void sums_accumulate_spread(const mesh *m, const int64_t *cell_peak, const sum_target *targets, const double *const *centre,
                            int n_targets);
/* Adds only the second-pass values (dispersion, max_distance2) of from. */
void sums_merge_spread(sums *to, const sums *from);
/* Particles: the centre of mass (cell coordinates, unwrapped) and mean velocity (0 without
 * velocities) of a structure from its first-pass sums. */
void sums_centre(const mesh *m, const sums *s, const double reference[3], double out[6]);
/* The mass in the user's units (grids: times the cell volume), before any range check. */
wide_float sums_mass_value(const mesh *m, const exact_sum *mass);
/* value as a double, or -1 with why saying that the "what" (mass, volume) of the object
 * ("the clump whose peak is cell 12") is beyond the double range. */
int sums_to_double(wide_float value, const char *what, const char *object, double *out, char *why, size_t why_size);
/* Mass, volume, mean density, minimum density, peak position and centre of mass of o; -1
 * (why filled) when the mass or the volume does not fit in a double. */
int sums_values(const mesh *m, const sums *s, const double reference[3], const char *object, phew_object *o, char *why,
                size_t why_size);

/* ---- hierarchy and catalogue (hierarchy.c, catalogue.c) ----------------------------------- */
/* PHEW_CANCELLED (on every rank) when rc says stop while the cells are summed or labelled. */
phew_status catalogue_build(const mesh *m, const field *f, const phew_params *params, peak_comm *pc,
                            const merge_state *noise, const merge_state *saddle, run_control *rc,
                            phew_labels *labels, phew_result *result);

/* One clump as its owner describes it to rank 0, which assembles the catalogue. */
typedef struct clump_record {
  int64_t peak_id;
  double peak_density;
  double coord[3];
  double key_saddle;   /* noise removal; isolated: no saddle at all */
  int32_t isolated;
  int32_t is_halo;     /* it heads its halo */
  int64_t halo_peak_id;
  double halo_peak_density;
  double halo_key_saddle; /* if it heads its halo */
  int32_t halo_isolated;
  int32_t merge_level; /* saddle merging: level at which it merged (0: never) */
  int64_t parent_peak_id;
  double parent_peak_density;
  double merge_saddle;
  sums clump;
  sums halo;           /* if it heads its halo */
} clump_record;

/* What the dendrogram is made of (on rank 0): the clumps in catalogue order, the
 * saddle-merging events and the haloes. */
typedef struct merger {
  int64_t child, parent; /* clump indices */
  double saddle;
  int32_t level;
} merger;

typedef struct hierarchy_input {
  int64_t n_clumps;
  const clump_record *const *clump; /* in catalogue order */
  const int64_t *clump_final_id;
  const int64_t *halo_of_clump;     /* halo index */
  int64_t n_mergers;
  const merger *mergers;            /* by increasing level */
  const int64_t *halo_final_id;
  const double *root_saddle;        /* per halo */
  const sums *const *halo_sums;     /* per halo */
  const mesh *mesh;
} hierarchy_input;

phew_status hierarchy_build(const hierarchy_input *h, phew_result *result);

/* ---- small helpers ------------------------------------------------------------------------- */
/* A hash of a global id whose low bits depend on every bit of the id (splitmix64's
 * finaliser): ids that differ only in high bits must not share a probe run. */
static inline uint64_t hash_id(int64_t id)
{
  uint64_t z = (uint64_t)id;
  z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
  z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
  return z ^ (z >> 31);
}

double phew_seconds(void);
/* malloc, calloc and realloc of count items (at least one) of size bytes; NULL if the product
 * overflows. Arrays of several MiB are advised onto transparent huge pages (status.c). */
void *phew_malloc(size_t count, size_t size);
void *phew_calloc(size_t count, size_t size);
void *phew_realloc(void *p, size_t count, size_t size);
/* *p resized to count items of size bytes (at least one); 0, or -1 without memory (*p then
 * unchanged). Arrays that grow together call it once each. */
int phew_grow(void *p, size_t count, size_t size);

#endif
