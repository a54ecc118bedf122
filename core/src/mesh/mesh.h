/* The cells the stages run on (mesh.c), of three kinds: an implicit structured block of a
 * uniform grid (grid.c; neighbours from the 26-cell stencil), an explicit graph (graph.c;
 * neighbours listed) and the leaves of an AMR hierarchy (amr_mesh.h). Each kind checks its
 * description, knows its ghost cells and plans their exchange; a cell walk gives the kernels
 * of graphs and AMR their neighbours, centres and volumes. Also here: the density field, and
 * the grids' public helpers (decompose.c: blocks for n ranks; grid_exchange.c: their ghost
 * layers filled). */
#ifndef PHEW_MESH_H
#define PHEW_MESH_H

#include "comm.h"

/* ---- geometry of a structured block (grid.c) ------------------------------------------ */
typedef struct block {
  const phew_grid *grid;
  int64_t dims[3]; /* stored cells per axis */
  int64_t n_stored;
  int64_t lo[3], hi[3];           /* active cells in stored coordinates: [lo, hi) */
  int wraps[3];                   /* the stored box spans a periodic axis: neighbours wrap inside it */
  int64_t fast_lo[3], fast_hi[3]; /* cells whose 26 neighbours are stored and unwrapped */
  int64_t offsets[27];            /* stored-index offsets of the 3x3x3 stencil, increasing, self at 13 */
} block;

/* Largest number of cells along one axis of a grid: cell coordinates stay exact in a double. */
#define PHEW_MAX_AXIS_CELLS (INT64_C(1) << 53)

phew_status block_init(block *b, const phew_grid *grid, call_result *result);
/* Global id of a stored cell given its stored coordinates. */
int64_t block_global_id(const block *b, int64_t x, int64_t y, int64_t z);
/* Stored index of the neighbour (x+dx, y+dy, z+dz), or -1 if it does not exist here. */
int64_t block_neighbour(const block *b, int64_t x, int64_t y, int64_t z, int dx, int dy, int dz);

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

/* What the particle path adds to the graph it builds of its particles (particles/). */
typedef struct particle_cells {
  const int32_t *neighbours32; /* the neighbour lists, 32-bit (the graph's neighbours are NULL) */
  const double *mass;          /* per cell; NULL: 1 each (summed instead of density x volume) */
  const double *velocity;      /* 3 per cell, or NULL */
  double density_unit;         /* physical density of 1 in the density's units */
} particle_cells;

/* Collective: the cells of a caller's grid, graph or AMR hierarchy (in->mesh), checked on
 * every rank (one bad rank stops all). */
phew_status mesh_init(mesh *m, const phew_input *in, comm *c, call_result *result);
/* Collective: the cells of the graph the particle path built (g and cells outlive m). */
phew_status mesh_init_particles(mesh *m, const phew_graph *g, const particle_cells *cells, comm *c,
                                call_result *result);
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

#endif
