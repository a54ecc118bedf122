/* Internal declarations shared by the core's source files. Not part of the public API. */
#ifndef PHEW_INTERNAL_H
#define PHEW_INTERNAL_H

#include "phew/phew.h"

#include <stdint.h>

/* Exact, order-independent sums: every term is scaled by a power of two and truncated to
 * an integer, so adding terms in any order (any number of ranks) gives the same bits. */
__extension__ typedef __int128 phew_fixed;

/* ---- error reporting ---------------------------------------------------------------- */
phew_status phew_fail(phew_result *result, phew_status status, const char *format, ...);

/* ---- geometry of a structured block (grid.c) ------------------------------------------ */
typedef struct block {
  const phew_grid *grid;
  int64_t dims[3];     /* stored cells per axis */
  int64_t n_stored;
  int64_t lo[3], hi[3]; /* active cells in stored coordinates: [lo, hi) */
  int wraps[3];        /* the stored box spans a periodic axis: neighbours wrap inside it */
  int64_t fast_lo[3], fast_hi[3]; /* cells whose 26 neighbours are stored and unwrapped */
  int64_t offsets[27]; /* stored-index offsets of the 3x3x3 stencil, increasing, self at 13 */
  double cell_volume;
} block;

phew_status block_init(block *b, const phew_grid *grid, phew_result *result);
/* Global id of a stored cell given its stored coordinates. */
int64_t block_global_id(const block *b, int64_t x, int64_t y, int64_t z);
/* Stored index of the neighbour (x+dx, y+dy, z+dz), or -1 if it does not exist here. */
int64_t block_neighbour(const block *b, int64_t x, int64_t y, int64_t z, int dx, int dy, int dz);

/* ---- the cells: a structured block or an explicit graph (mesh.c) -------------------------- */
typedef struct mesh {
  phew_mesh_kind kind;
  block b;                 /* PHEW_MESH_STRUCTURED */
  const phew_graph *graph; /* PHEW_MESH_GRAPH */
  int64_t n_local;         /* cells stored here (active and ghost) */
  int64_t n_active;
  /* Cell coordinates used for centres: global cell indices on a grid, positions on a graph.
   * period[d] > 0 makes axis d periodic with that period (nearest-image displacements). */
  double period[3];
  double extent;           /* bound on any displacement between two cells of a structure */
  double unit_volume;      /* a grid's sums count cells of this volume; a graph's carry volumes */
} mesh;

phew_status mesh_init(mesh *m, const phew_input *in, phew_result *result);
/* Global id and coordinates of a local cell. */
int64_t mesh_global_id(const mesh *m, int64_t cell);
void mesh_coordinates(const mesh *m, int64_t cell, double c[3]);
/* Position (in the user's units) of a point given in cell coordinates. */
double mesh_position(const mesh *m, int axis, double c);
/* A position wrapped into the periodic box along a periodic axis (unchanged otherwise). */
double mesh_wrap(const mesh *m, int axis, double position);
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

/* ---- peaks (peaks.c) ------------------------------------------------------------------- */
typedef struct peak_table {
  int64_t n;           /* number of peaks */
  int64_t capacity;
  int64_t *global_id;  /* global cell id of the peak cell */
  int64_t *cell;       /* stored index of the peak cell */
  double *density;
  double *coord;       /* cell coordinates of the peak (3 per peak, see mesh) */
} peak_table;

phew_status peak_table_reserve(peak_table *t, int64_t capacity);
phew_status peak_table_add(peak_table *t, int64_t global_id, int64_t cell, double density, const double coord[3]);
void peak_table_free(peak_table *t);
/* Sort a list of local peak indices into decreasing order (density, then lower global id). */
phew_status peak_sort_higher_first(const peak_table *t, int64_t *list, int64_t n);

/* a is higher than b in the total order (density, then lower global id). */
static inline int peak_higher(const peak_table *t, int64_t a, int64_t b)
{
  return t->density[a] > t->density[b] ||
         (t->density[a] == t->density[b] && t->global_id[a] < t->global_id[b]);
}

/* ---- watershed (watershed.c) ----------------------------------------------------------- */
/* Fills cell_peak with the local peak index of every active test cell (-1 otherwise) and
 * the peak table; peak_patch_id is used as working memory (catalogue_build fills it). */
phew_status watershed_run(const mesh *m, const field *f, int64_t *peak_patch_id,
                          int64_t *cell_peak, peak_table *peaks, phew_stats *stats,
                          phew_result *result);

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

/* ---- level-by-level merging (merging.c) ------------------------------------------------- */
typedef struct merge_event {
  int64_t child;   /* local peak index of the merged peak */
  int64_t parent;  /* the peak whose group it joins (final label at that level) */
  double saddle;   /* the key saddle it merged through */
  int32_t level;
} merge_event;

typedef enum merge_rule { MERGE_BY_RELEVANCE, MERGE_BY_SADDLE } merge_rule;

typedef struct merge_state {
  int64_t n;          /* peaks */
  int64_t *group;     /* final label (local peak index) of each peak */
  unsigned char *alive;
  double *key_saddle; /* after the last level: highest saddle of every alive peak, or -inf */
  int64_t *key_neighbour;
  merge_event *events;
  int64_t n_events, events_capacity;
  int32_t levels;
} merge_state;

phew_status merge_state_init(merge_state *m, int64_t n_peaks);
void merge_state_free(merge_state *m);
/* Merge alive peaks level by level until a level has no merger. */
phew_status merge_levels(merge_state *m, const peak_table *peaks, edge_list *edges,
                         merge_rule rule, double threshold_value, double density_threshold,
                         unsigned order_seed, phew_result *result);

/* ---- per-clump sums (properties.c) -------------------------------------------------------- */
typedef struct sums {
  int64_t n_cells;
  phew_fixed mass;      /* sum of rho, scaled */
  phew_fixed moment[3]; /* sum of rho * (cell - reference cell), in cells, scaled */
  phew_fixed volume;    /* graphs: sum of cell volumes, scaled by volume_factor */
  int shift;            /* mass and moment terms are scaled by 2^shift, chosen per structure */
  double factor;        /* 2^shift */
  double min_density;
} sums;

typedef struct sum_scales {
  int volume_shift; /* graphs: cell volumes are scaled by 2^volume_shift */
  double volume_factor;
} sum_scales;

/* The global scale of volume sums (graphs), from the largest cell volume. */
sum_scales sums_scales(double max_volume);
/* Empty sums for a structure whose cells have rho * volume / unit_volume * |displacement|
 * below bound: the scale follows the structure, so faint ones keep their precision. */
void sums_clear(sums *s, double bound);
double fixed_to_double(phew_fixed x, int shift);

/* Add every active test cell to the sums of its structure; reference holds the cell
 * coordinates of each structure's peak (3 per structure). */
void sums_accumulate(const mesh *m, const field *f, const int64_t *cell_peak, const int64_t *structure_of_peak,
                     const double *reference, sums *out, sum_scales scales);
/* Largest cell volume over the active test cells of a graph (1 for a grid). */
double sums_max_volume(const mesh *m, const int64_t *cell_peak);
/* ---- hierarchy and catalogue (hierarchy.c, catalogue.c) ----------------------------------- */
phew_status catalogue_build(const mesh *m, const field *f, const phew_params *params,
                            const peak_table *peaks, const merge_state *noise,
                            const merge_state *saddle, const int64_t *cell_peak,
                            phew_labels *labels, phew_result *result);

/* What the dendrogram is made of: the clumps (leaves), the saddle-merging events, haloes. */
typedef struct hierarchy_input {
  const peak_table *peaks;
  const merge_state *saddle;    /* events of the saddle merging, in level order */
  int64_t n_clumps;             /* before the mass threshold */
  const int64_t *clump_head;    /* peak of each clump */
  const int64_t *clump_of_head; /* clump index of a head peak, -1 otherwise */
  const int64_t *clump_final_id;
  const sums *clump_sums;
  const int64_t *halo_of_peak;
  const int64_t *halo_final_id;
  const double *root_saddle;    /* per halo */
  const sums *halo_sums;
  sum_scales scales;
  double cell_volume;
} hierarchy_input;

phew_status hierarchy_build(const hierarchy_input *h, phew_result *result);

/* ---- small helpers ------------------------------------------------------------------------- */
double phew_seconds(void);
void *phew_malloc(size_t count, size_t size);
void *phew_realloc(void *p, size_t count, size_t size);

#endif
