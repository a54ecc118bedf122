/* phew: structure finding in density fields (Bleuler, Teyssier et al. 2015).
 *
 * Public C API of libphew. Plain C11, no VTK. The caller owns the density and label
 * arrays; the library owns the catalogues it returns (free them with the result's _free).
 *
 * One convention throughout: every function that works on data takes a phew_context first
 * (the communicator it is collective over, threads, progress and cancel callbacks, and the
 * message of a failure) and returns a phew_status; each finder fills a result type of its own
 * (phew_clump_result, phew_group_result, phew_link_result).
 *
 * Ids seen by users never depend on how the domain is split over MPI ranks:
 *   PeakPatchId  global cell id of the patch's peak (grids: ix + nx*(iy + ny*iz); AMR: see
 *                phew_amr), -1 below threshold
 *   ClumpId      0..n_clumps-1 in catalogue order (decreasing peak density, ties by peak id), -1 none
 *   HaloId       0..n_haloes-1 in the same order, -1 none
 */
#ifndef PHEW_PHEW_H
#define PHEW_PHEW_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The library exports only these functions (it is built with hidden visibility): its internal
 * names cannot clash with those of other libraries loaded into the same process. */
#if defined(__GNUC__)
#define PHEW_API __attribute__((visibility("default")))
#else
#define PHEW_API
#endif

typedef enum phew_status {
  PHEW_OK = 0,
  PHEW_ERROR_ARGUMENT = 1, /* a parameter or a size is out of range */
  PHEW_ERROR_DATA = 2,     /* the density field is unusable (NaN, Inf, negative), or a mass or
                              volume of the catalogue lies outside the normal double range */
  PHEW_ERROR_MEMORY = 3,   /* an allocation failed */
  PHEW_ERROR_MPI = 4,      /* communication failed, or MPI support is not compiled in */
  PHEW_ERROR_IO = 5,       /* reading or writing a file failed (tool helpers only) */
  PHEW_CANCELLED = 6       /* the caller's cancel callback asked to stop (phew_context.cancel) */
} phew_status;

typedef void (*phew_progress_fn)(double fraction, const char *stage, void *user_data);
/* Returns nonzero to stop the run. */
typedef int (*phew_cancel_fn)(void *user_data);

/* How a call runs. Every function that works on data takes one: the communicator it is
 * collective over, the threads each rank may use, the caller's progress and cancel
 * callbacks; a failed call writes why into message (the same on every rank of a collective
 * call), a successful one empties it. Set up with phew_context_init; one context serves any
 * number of calls, one at a time. A function given no context, or no result where it takes
 * one, refuses at once with PHEW_ERROR_ARGUMENT (the message in the context if there is one,
 * the result emptied if there is one, nothing else written); phew_grid_block and
 * phew_layout_dendrogram, which are not collective, accept a NULL context (no message).
 *
 * cancel is asked at the start of every stage, where the ranks agree (one asking stops all),
 * and inside the watershed's and the catalogue's loops (per z plane of a grid, per AMR block,
 * every 65536 cells of a graph), which one rank may leave at once (the others stop at the
 * next agreement); particles are asked between their stages (phew_find_clumps,
 * phew_estimate_density, phew_find_hop_groups; Friends-of-Friends is not asked). A stopped run returns
 * PHEW_CANCELLED with every label -1 and an empty result, on every rank. */
typedef struct phew_context {
  void *mpi_comm;            /* address of an MPI_Comm, or NULL: this process alone */
  int n_threads;             /* threads per rank for every stage (grids and AMR: the mean
                                density, watershed, saddles, sums and labels; particles: the
                                neighbour search, density, halo finders); 0: all cores. More
                                than the cores this process may run on (its affinity mask:
                                one per rank under mpirun's binding to a core) are capped at
                                them; phew_stats.n_threads reports the number used. The
                                answers are the same, bit for bit, for any number */
  phew_progress_fn progress; /* optional: the fraction done (0..1) and the stage's name */
  void *progress_data;
  phew_cancel_fn cancel; /* optional */
  void *cancel_data;
  char message[512]; /* why the last call failed; empty after a success */
} phew_context;

/* This process alone, all cores, no callbacks, no message. */
PHEW_API void phew_context_init(phew_context *context);

/* Collective: a problem that some ranks found on their own (a caller's check of its input before
 * a collective call), agreed by all. Each rank passes its status, with its message in
 * context->message when it is not PHEW_OK; every rank gets the worst status (the highest
 * value) and, with it, the message of the lowest rank that has it; PHEW_OK (message emptied)
 * when every rank passed PHEW_OK. */
PHEW_API phew_status phew_agree(phew_context *context, phew_status status);

/* This rank's place in the context's communicator: 0 and 1 for this process alone. Not
 * collective. */
PHEW_API phew_status phew_context_ranks(phew_context *context, int *rank, int *size);

/* Collective: every rank's n items of item_size bytes, in rank order, on every rank, for
 * callers that read their own share of a file (the readers) and need the others' counts or
 * headers. *out (free it with free(); never NULL after a success) holds *n_out items;
 * counts, when not NULL, gets how many came from each rank (one entry per rank). Fails
 * with PHEW_ERROR_MEMORY on every rank if one ran out (then *out is NULL). */
PHEW_API phew_status phew_gather_all(phew_context *context, const void *items, int64_t n, size_t item_size, void **out,
                                     int64_t *n_out, int64_t *counts);

typedef enum phew_scalar_type { PHEW_FLOAT32 = 0, PHEW_FLOAT64 = 1 } phew_scalar_type;

/* A threshold chosen from the data (phew_params): any negative value means it. */
#define PHEW_THRESHOLD_AUTOMATIC (-1.0)

/* Parameters of the clump finder (paper sections 2.4 and 2.5). Densities and thresholds are
 * in the density's own units (particles with an estimated density: units of the mean density,
 * see phew_points); masses are density x cell volume in the data's units (particles: sums of
 * the mass array). phew_clump_result reports the thresholds used and the mean density.
 *
 * Automatic thresholds (PHEW_THRESHOLD_AUTOMATIC, any negative value; the defaults):
 * - density: 10 x the mean density of the input, the total mass over the total volume of the
 *   active cells of all ranks: grids and AMR leaves sum density x cell volume and cell volume
 *   (a grid: the arithmetic mean); graphs the same with their cell volumes (none: the
 *   arithmetic mean); particles the total mass over the box volume with a box (1 with estimated
 *   densities, which are in units of it), else over the sum of mass / density (0 if a particle
 *   has density 0). The sums are exact: the same bits for any number of ranks and threads.
 * - saddle (with saddle_merging): 2.5 x the density threshold used (PHEW's 200 / 80).
 * NaN or +inf is an error ("must be set"); so is a relevance threshold below 1. */
typedef struct phew_params {
  double density_threshold;   /* test cells have density strictly above it (>= 0, or automatic) */
  double relevance_threshold; /* peaks with peak/key-saddle below it are noise (>= 1; 1 keeps
                                 every peak); default 2 */
  int saddle_merging;         /* 0: haloes are the clumps; 1: merge clumps into haloes */
  double saddle_threshold;    /* merge a clump into its key neighbour if key saddle > this
                                 (or automatic) */
  double mass_threshold;      /* clumps and haloes with mass <= this are left out; default 0 */
  unsigned peak_order_seed;   /* testing only: 0 visits peaks in decreasing order when merging;
                                 any other value visits them in a shuffled order, which must
                                 give the same result (paper section 2.7) */
} phew_params;

/* Defaults: automatic density and saddle thresholds, relevance 2, no saddle merging, mass
 * threshold 0. */
PHEW_API void phew_params_init(phew_params *params);

/* An implicit structured block of a uniform grid: neighbours come from the 26-cell stencil.
 * All indices are global cell indices of the whole grid. The stored box holds the density
 * array (active cells plus ghost layers, x fastest); the active box is the part this rank
 * owns. Ghost layers on a periodic axis may start at -1 or end at global_dims: they wrap. */
typedef struct phew_grid {
  int64_t global_dims[3];
  int64_t stored_offset[3];
  int64_t stored_dims[3];
  int64_t active_offset[3];
  int64_t active_dims[3];
  int periodic[3];
  double origin[3];  /* corner of cell (0,0,0) */
  double spacing[3]; /* cell size */
} phew_grid;

/* The whole nx*ny*nz grid on one process: no ghosts, spacing 1, origin 0, not periodic. */
PHEW_API void phew_grid_init_whole(phew_grid *grid, int64_t nx, int64_t ny, int64_t nz);

/* An explicit cell graph, for particles or any other mesh: the neighbours of each local cell
 * are listed (CSR). In parallel each rank passes the cells it owns ("active") plus copies of
 * the cells of other ranks that its cells list as neighbours ("ghosts", flagged, each with
 * the rank that owns it). The core fills the ghosts' densities from their owners (the values
 * passed for them are ignored) and gives them their owners' labels. The neighbour relation
 * should be symmetric (j lists i when i lists j); ghost cells need not list neighbours. */
typedef struct phew_graph {
  int64_t n_cells;            /* local cells, active and ghost */
  const unsigned char *ghost; /* nonzero for a ghost cell; NULL: every cell is active */
  const int32_t *owner;       /* per cell, the rank owning it (read for ghost cells only);
                                 may be NULL when there are no ghost cells */
  const int64_t *global_id;   /* unique over all ranks; orders cells of equal density */
  const int64_t *offsets;     /* n_cells + 1 entries: cell i's neighbours are */
  const int64_t *neighbours;  /*   neighbours[offsets[i] .. offsets[i+1]) (local indices) */
  const double *volume;       /* per cell; NULL: every cell has volume 1 */
  const double *position;     /* 3 per cell (x, y, z of the centre); NULL: all at the origin */
  double box_origin[3];       /* the periodic box, used by the centre of mass */
  double box_size[3];
  int periodic[3];
} phew_graph;

/* One block of an AMR hierarchy: a box of cells on one level. */
typedef struct phew_amr_block {
  int32_t level;   /* 0 is the coarsest level */
  int32_t owner;   /* the rank that passes its density and receives its labels */
  int64_t lo[3];   /* first cell, in the level's global index space */
  int64_t dims[3]; /* cells per axis, >= 1 */
} phew_amr_block;

/* A block-structured AMR hierarchy with refinement ratio 2 (vtkOverlappingAMR, RAMSES, AMReX).
 * Level l has level0_dims * 2^l cells per axis over the same domain. Level 0 tiles the domain;
 * the blocks of a level do not overlap, and every block of level l > 0 lies inside level l-1
 * and is aligned to its cells (even lo and dims). A cell covered by a block of the next level
 * is not a leaf: it takes no part and gets the label -1 (its density is not read). Two leaf
 * cells are neighbours when their closed boxes touch (face, edge or corner), on any levels.
 *
 * Every rank passes the same list of all blocks. density and the labels hold the cells of the
 * rank's own blocks (owner == rank), block after block in list order, each x fastest; the
 * core fetches whatever it needs from other ranks itself.
 *
 * Global cell id (PeakPatchId, the order of equal densities): offset(l) + ix + nx_l*(iy +
 * ny_l*iz), with (ix, iy, iz) the cell's index on its level, nx_l the cells of level l along
 * x, and offset(l) the number of cells of all coarser levels (as if each covered the domain). */
typedef struct phew_amr {
  int64_t level0_dims[3];
  double origin[3];  /* corner of the domain */
  double spacing[3]; /* size of a level-0 cell; level l cells are 2^-l of it */
  int periodic[3];   /* wrap the whole domain along these axes */
  int64_t n_blocks;
  const phew_amr_block *blocks;
} phew_amr;

/* ---- an AMR hierarchy as the ranks hold it ---------------------------------------------------
 * Readers of block-structured AMR (vtkOverlappingAMR, AMReX plotfiles) give every rank the
 * metadata of the whole hierarchy but the data of some blocks only; their boxes count cells
 * from an origin of their own, not from the domain's corner; a reader asked for the coarse
 * levels only loads no block of the finer ones; a source that ignores piece requests gives
 * every rank every block. phew_plan_amr agrees over the ranks on who holds which block and
 * makes the phew_amr that phew_find_clumps takes.
 *
 * Each rank passes the hierarchy as it sees it: its levels (spacing and refinement ratio of
 * each), its origin and its boxes, level by level (levels never decrease along the list; a
 * message names a box "block i of level l", i its position among the boxes of its level),
 * each with whether this rank holds its data. */
typedef struct phew_amr_level {
  double spacing[3];  /* the level's cell size */
  int32_t refinement; /* refinement ratio to the next finer level */
} phew_amr_level;

typedef struct phew_amr_box {
  int32_t level; /* 0 .. n_levels - 1 */
  int32_t held;  /* nonzero: this rank holds the block's data */
  int64_t lo[3]; /* first cell, in the level's index space (any origin; |lo|, |hi| < 2^62) */
  int64_t hi[3]; /* last cell (inclusive); hi < lo along an axis: the box has no cells there */
} phew_amr_box;

typedef struct phew_amr_hierarchy {
  int32_t n_levels;             /* 0 .. 54 */
  const phew_amr_level *levels; /* n_levels */
  double origin[3];             /* corner of cell (0, 0, 0) of level 0's index space */
  int64_t n_boxes;              /* 0 .. 2^31 - 1 */
  const phew_amr_box *boxes;
} phew_amr_hierarchy;

/* What phew_plan_amr makes of it, the same on every rank. Box k of the hierarchy is block k of
 * amr, for k < amr.n_blocks (the boxes of the levels kept come first). */
typedef struct phew_amr_plan {
  phew_amr amr;             /* for phew_input.amr: the domain (level0_dims, origin, spacing of
                               level 0), the kept blocks with their owners (amr.blocks belongs to
                               the plan); periodic 0: set it */
  int32_t n_levels;         /* levels kept: 0 .. n_levels - 1 */
  int64_t level0_offset[3]; /* the domain's first level-0 cell in the hierarchy's index space */
  int64_t *holder_start;    /* amr.n_blocks + 1 entries */
  int32_t *holders;         /* the ranks holding block k's data, increasing (its owner among
                               them): holders[holder_start[k] .. holder_start[k + 1]) */
} phew_amr_plan;

/* The plan of a hierarchy (the rules, in this order; every message the same on every rank):
 * - every rank must see the same hierarchy (all but the held flags), and it must have blocks;
 * - levels kept: all, when every block is held by some rank. When a block is held by no rank,
 *   it must be the first block of a level l > 0 of which, as of every finer level, no rank
 *   holds anything (a reader that loaded levels 0 .. l-1): levels l and finer are left out
 *   (n_levels = l). Anything else is an error (nothing held at all; a block missing from a
 *   level that is loaded);
 * - the levels kept must be 3-D (every box has cells along every axis), with a positive,
 *   finite level-0 spacing, refinement ratio 2 between them, and each level's spacing half of
 *   the coarser level's (to a relative 1e-4: files store spacings with few digits);
 * - the domain is the bounding box of the level-0 boxes: level0_offset is its first cell,
 *   level0_dims its size, amr.origin = origin + level0_offset * level-0 spacing, amr.spacing
 *   the level-0 spacing; a box of level l becomes a block with lo - level0_offset * 2^l and
 *   dims hi - lo + 1 (phew_find_clumps checks the nesting and tiling);
 * - owners: a block held by one rank is its own; a block held by several goes to the holder
 *   that owns the fewest cells so far, the blocks held by one rank counted first, then the
 *   others in list order, ties to the lowest rank (a hierarchy every rank holds whole is
 *   spread over the ranks). The front end sends the labels of a block from its owner to the
 *   other holders after the run.
 * Collective over context->mpi_comm. On error every rank returns the same status, the
 * message in context->message, and an empty plan. Free a plan with phew_amr_plan_free. */
PHEW_API phew_status phew_plan_amr(phew_context *context, const phew_amr_hierarchy *hierarchy, phew_amr_plan *plan);
PHEW_API void phew_amr_plan_free(phew_amr_plan *plan);

/* Particles (a point set): PHEW runs on the symmetrised graph of their k nearest neighbours
 * (i and j are neighbours when either is among the other's n_neighbours nearest other
 * particles), with the density of each particle given or estimated as HOP does (SPH, M4
 * cubic spline): h_i = half the distance to the (n_density_neighbours + 1)-th nearest particle,
 * the particle itself counted first, and
 *   rho_i = sum_j m_j [W(r_ij, h_i) + W(r_ij, h_j)] / 2  over all particles j (i included),
 * W(r, h) = (1 - 3/2 q^2 + 3/4 q^3) / (pi h^3) for q = r/h < 1, (2 - q)^3 / (4 pi h^3) for
 * 1 <= q < 2, 0 beyond. With a box the densities are in units of the mean density (total mass
 * over box volume). Distances are float64, along periodic axes to the nearest image; equal
 * distances are ordered by global id, so that nothing depends on how the particles are stored.
 *
 * Each rank passes any share of the particles (the shares together are the whole set, each
 * particle once; a set without any particle fails with PHEW_ERROR_ARGUMENT, "no particles",
 * in every finder); labels come back for the particles it passed, in its order. The core
 * redistributes them over the ranks (subvolumes balanced by particle count, padded with
 * copies of the neighbouring subvolumes' particles, as wide as each particle's neighbourhood
 * needs), and threads the neighbour search and the density. The answer is the same, bit for
 * bit, for any number of ranks and threads.
 *
 * Global particle id (PeakPatchId, the order of equal densities): id[i] when given (unique,
 * >= 0), else the index in the global input order (rank 0's particles first, then rank 1's,
 * ...). Catalogue masses are sums of particle masses; a particle's volume is m_i / rho_i. */
typedef struct phew_points {
  int64_t n;             /* particles passed by this rank */
  phew_scalar_type type; /* of position, mass, velocity (the density has its own type) */
  const void *position;  /* 3 per particle: x, y, z */
  const void *mass;      /* 1 per particle, > 0; NULL: every particle has mass 1 */
  const void *velocity;  /* 3 per particle; NULL: no velocity columns in the catalogue */
  const int64_t *id;     /* NULL: the index in the global input order */
  int has_box;           /* 0: no box (densities in mass per volume; no periodic axis) */
  double box_origin[3];  /* the box: every particle inside, [origin, origin + size) */
  double box_size[3];
  int periodic[3];          /* wrap along these axes with the box size (needs the box) */
  int n_neighbours;         /* PHEW's graph: nearest other particles per particle (16) */
  int n_density_neighbours; /* the SPH estimate (64, the particle itself counted) */
} phew_points;

/* Defaults: no particles, float64, no box, 16 and 64 neighbours. */
PHEW_API void phew_points_init(phew_points *points);

/* Collective: the box of the particles from the bounds of their positions on every rank, for
 * data that come without one. Sets has_box; along each axis the origin is the lowest
 * coordinate and the size the smallest that still reaches the highest (origin + size >= the
 * highest, in floating point), so every particle lies in the box. Coordinates that are not
 * finite are left out (the finder then names their particle); an axis without any finite
 * coordinate, or no particle at all, leaves the box as it was, for the finder to report.
 * Fails (PHEW_ERROR_ARGUMENT, on every rank, the box unchanged) when an axis is periodic (the
 * bounds are not a period) or when all particles have the same coordinate along an axis. */
PHEW_API phew_status phew_points_box_from_bounds(phew_context *context, phew_points *points);

/* Collective: each particle of `points` (this rank's; positions only) gets the label of the AMR
 * leaf cell that holds it (RAMSES's way of giving the particles the clumps found on the grid):
 * cell_labels are this rank's blocks' cells as phew_find_clumps labels them (e.g. ClumpId),
 * point_labels (points->n) get them, -1 for a particle in no block (outside a non-periodic
 * domain, or where no level has a block). A particle on a cell face belongs to the cell above
 * it (floor). On error every rank returns the same status and the labels are -1. */
PHEW_API phew_status phew_amr_point_labels(phew_context *context, const phew_amr *amr, const int64_t *cell_labels,
                                           const phew_points *points, int64_t *point_labels);

typedef enum phew_mesh_kind {
  PHEW_MESH_STRUCTURED = 0,
  PHEW_MESH_GRAPH = 1,
  PHEW_MESH_AMR = 2,
  PHEW_MESH_POINTS = 3
} phew_mesh_kind;

/* Block `block` (0 .. n_blocks - 1) of the whole grid split into n_blocks: blocks balanced by
 * cell count (the factorisation with the smallest cut), one ghost layer towards every
 * neighbouring block, across periodic edges too. Blocks may have no cells when n_blocks is
 * larger than the grid allows. The origin and spacing are left at 0 and 1. Fails with
 * PHEW_ERROR_ARGUMENT (and context->message) when a dimension is below 1 or above 2^53, the
 * cell count overflows int64, or block is not in 0 .. n_blocks - 1. Not collective. */
PHEW_API phew_status phew_grid_block(phew_context *context, phew_grid *grid, const int64_t global_dims[3],
                                     const int periodic[3], int n_blocks, int block);

/* This rank's block of the grid split over the ranks of context->mpi_comm (phew_grid_block
 * with the communicator's size and this rank). Not collective. */
PHEW_API phew_status phew_grid_decompose(phew_context *context, phew_grid *grid, const int64_t global_dims[3],
                                         const int periodic[3]);

/* Copy into the ghost cells of this rank's block (stored but not active) the values of the
 * cells they mirror, from the ranks whose active boxes hold them. values has one entry of
 * value_size bytes per stored cell, x fastest. Collective over context->mpi_comm (alone, ghosts
 * wrap onto this process's own cells). On error every rank returns the same status and
 * context->message says why. */
PHEW_API phew_status phew_exchange_ghosts(phew_context *context, const phew_grid *grid, void *values,
                                          size_t value_size);

typedef struct phew_input {
  phew_mesh_kind mesh; /* which of grid, graph, amr and points describes the cells (0: grid) */
  phew_grid grid;
  phew_graph graph;
  phew_amr amr;
  phew_points points;
  const void *density; /* one value per stored (grid), local (graph) or own block (amr) cell,
                          or per particle passed (points; NULL there: estimate it) */
  phew_scalar_type density_type;
  int labels_active_only; /* grids only: 1 writes the labels of the active cells alone,
                             laid out over the active box (x fastest) at the start of
                             each label array, for a caller whose output has no ghost
                             cells; the arrays still hold one entry per stored cell (the
                             core works in them), the rest left undefined */
} phew_input;

/* Per stored (grid), local (graph) or own block (amr) cell, written by phew_find_clumps; all
 * three are required (on grids and graphs they double as working memory, which keeps the
 * library's own footprint small). Ghost cells get the labels of the cells they copy. */
typedef struct phew_labels {
  int64_t *peak_patch_id;
  int64_t *clump_id;
  int64_t *halo_id;
  double *density; /* points only, optional: the density of each particle passed (estimated or
                      given), in the units PHEW used */
} phew_labels;

/* One row of the clump catalogue or of the halo catalogue. */
typedef struct phew_object {
  int64_t id;        /* ClumpId or HaloId */
  int64_t halo_id;   /* clumps: the halo they belong to (-1 if it is below the mass threshold) */
  int64_t parent_id; /* clumps: ClumpId of the clump whose peak they merged into, -1 if none */
  int32_t level;     /* clumps: saddle level at which they merged (0: never); haloes: depth */
  int64_t peak_id;   /* global cell id of the peak */
  int64_t n_cells;
  int64_t n_clumps; /* haloes: clumps merged into them (clumps: 1) */
  double volume;
  double mass; /* sum of density * cell volume */
  double peak_density;
  double peak_position[3];  /* centre of the peak cell */
  double center_of_mass[3]; /* periodic-aware, wrapped into the box on periodic axes */
  double min_density;
  double mean_density;
  double key_saddle_density; /* highest saddle to any neighbour; the threshold if isolated */
  double relevance;          /* peak_density / key_saddle_density; +inf when the key saddle is 0
                                (isolated at threshold 0) or the ratio exceeds the double range */
  /* points only (NaN otherwise): the largest distance of a member from the centre of mass,
   * and, with velocities, the mass-weighted mean velocity and the velocity dispersion
   * sqrt(sum m |v - mean|^2 / sum m) (3D) */
  double radius;
  double mean_velocity[3];
  double velocity_dispersion;
} phew_object;

/* One node of the dendrogram. Leaves are clumps; roots are haloes. */
typedef struct phew_node {
  int64_t id;
  int64_t parent_id; /* -1 for roots */
  int32_t level;     /* 0 for clumps, n for a structure formed by a level-n saddle merger */
  int64_t clump_id;  /* leaves: their ClumpId (-1 if below the mass threshold); others -1 */
  int64_t halo_id;
  int64_t peak_id;
  double peak_density;
  double saddle_density; /* density at which it joins its parent; roots: their key saddle */
  int64_t n_cells;
  double mass;
} phew_node;

enum phew_stage {
  PHEW_STAGE_WATERSHED = 0,
  PHEW_STAGE_SADDLES,
  PHEW_STAGE_NOISE_REMOVAL,
  PHEW_STAGE_SADDLE_MERGING,
  PHEW_STAGE_PROPERTIES, /* sums, catalogue, dendrogram and per-cell labels */
  PHEW_STAGE_COUNT
};

/* The particle path's stages before PHEW. */
enum phew_particle_stage {
  PHEW_PARTICLE_DOMAIN = 0, /* checks, subvolumes, particles to their ranks and back */
  PHEW_PARTICLE_TREE,       /* kd-trees */
  PHEW_PARTICLE_NEIGHBOURS, /* nearest-neighbour searches and the padding */
  PHEW_PARTICLE_DENSITY,    /* the SPH density and its padding */
  PHEW_PARTICLE_GRAPH,      /* the symmetrised neighbour graph */
  PHEW_PARTICLE_STAGE_COUNT
};

PHEW_API const char *phew_particle_stage_name(int stage);

/* Counts and per-stage diagnostics (global figures; times are the maximum over ranks). */
typedef struct phew_stats {
  int64_t n_cells; /* active cells, all ranks */
  int64_t n_test_cells;
  int64_t n_peaks;
  int64_t n_saddle_pairs;               /* distinct pairs of neighbouring peak patches */
  int64_t n_noise_discarded;            /* isolated irrelevant peaks */
  int64_t n_clumps_found;               /* before the mass threshold */
  int64_t n_haloes_found;               /* before the mass threshold */
  int32_t noise_levels;                 /* merging levels in noise removal */
  int32_t saddle_levels;                /* merging levels in saddle merging */
  int32_t iterations[PHEW_STAGE_COUNT]; /* communication rounds per stage: ghost exchanges of the
                                  watershed; key-saddle collections plus label scatters of the
                                  merging stages (1 for a stage without rounds) */
  double seconds[PHEW_STAGE_COUNT];     /* maximum over ranks */
  int64_t bytes_sent[PHEW_STAGE_COUNT]; /* to other ranks, summed over ranks */
  int64_t max_active_peaks;             /* maximum over ranks of the peaks a rank owns */
  int64_t max_ghost_peaks;              /* maximum over ranks of the ghost peaks a rank holds */
  double max_ghost_ratio;               /* maximum over ranks of ghost / active peaks */
  int64_t max_sparse_entries;           /* maximum over ranks of saddle-matrix entries (2 per pair) */
  int64_t hash_collisions;              /* peak hash tables, summed over ranks */
  int n_ranks;
  /* particles: seconds of the stages before PHEW (maximum over ranks), the padding */
  double particle_seconds[PHEW_PARTICLE_STAGE_COUNT];
  int32_t padding_rounds; /* searches until every neighbourhood was inside the padding */
  int64_t max_padding;    /* maximum over ranks of the padding particles held */
  int n_threads;          /* threads per rank, as run (phew_context.n_threads, capped at
                             the cores) */
} phew_stats;

/* Which optional columns the catalogue of a result has (its `columns`). */
enum phew_column_set {
  PHEW_COLUMNS_PARTICLES = 1, /* counts are NumberOfParticles; Radius */
  PHEW_COLUMNS_VELOCITY = 2,  /* MeanVelocityX/Y/Z, VelocityDispersion */
  PHEW_COLUMNS_PEAK = 4       /* groups: PeakId, PeakDensity, PeakX/Y/Z (HOP) */
};

/* One group of a halo finder on particles (Friends-of-Friends, HOP), in catalogue order:
 * decreasing number of particles, equal counts by the smallest particle id. */
typedef struct phew_group {
  int64_t id; /* GroupId: 0 .. n_groups - 1 */
  int64_t n_particles;
  double mass;                /* sum of the particle masses */
  double center_of_mass[3];   /* periodic-aware, wrapped into the box on periodic axes */
  double radius;              /* largest distance of a member from the centre of mass */
  int64_t min_particle_id;    /* the smallest global particle id in the group */
  double mean_velocity[3];    /* with velocities (NaN otherwise): mass-weighted */
  double velocity_dispersion; /* sqrt(sum m |v - mean|^2 / sum m), 3D */
  int64_t peak_id;            /* HOP (-1 otherwise): the group's densest particle */
  double peak_density;        /* its density (NaN otherwise) */
  double peak_position[3];
} phew_group;

/* One link of the merger tree between two steps (phew_link_steps): a structure of the earlier
 * step (the progenitor) and one of the later step (the descendant) that share elements (cells
 * or particles), or a structure alone (the other id -1) when it shares none. */
typedef struct phew_link {
  int64_t progenitor_id;      /* label in the earlier step; -1: the descendant is new */
  int64_t descendant_id;      /* label in the later step; -1: the progenitor left no descendant */
  double progenitor_mass;     /* the progenitor's mass (its elements' masses, earlier step) */
  double descendant_mass;     /* the descendant's mass (later step) */
  double shared_mass_earlier; /* the shared elements' mass in the earlier step */
  double shared_mass_later;   /* the shared elements' mass in the later step (the same as
                                 shared_mass_earlier for particles of constant mass) */
  double progenitor_fraction; /* shared_mass_earlier / progenitor_mass: the part of the
                                 progenitor that went into the descendant (0 if no mass) */
  double descendant_fraction; /* shared_mass_later / descendant_mass: the part of the descendant
                                 that came from the progenitor */
  int32_t main_progenitor;    /* 1: of the descendant's progenitors this one gave it the most
                                 (shared_mass_later; equal shares: the smaller id) */
  int32_t main_descendant;    /* 1: of the progenitor's descendants this one got the most of it
                                 (shared_mass_earlier; equal shares: the smaller id) */
  int64_t n_progenitors;      /* progenitors whose main descendant is this descendant: 2 or
                                 more is a merger */
  int64_t n_descendants;      /* descendants whose main progenitor is this progenitor: 2 or more
                                 is a split */
  /* Links by most-bound particles (phew_link_tracked; phew_link_steps leaves kind 0, the
   * step -1 and the tracer fields 0, host -1). docs/merger-trees.md states the rules. */
  int64_t progenitor_step;         /* the step the progenitor was last seen in as a structure: the
                                      earlier step, or an older one for an orphan */
  int32_t kind;                    /* phew_link_kind */
  int32_t orphan_steps;            /* ORPHAN: steps followed as an orphan, this one included;
                                      REFOUND: steps it was an orphan before it was found again */
  int64_t n_tracers;               /* the progenitor's most-bound particles */
  int64_t shared_tracers;          /* of them, those in the descendant (ORPHAN: in the host) */
  int32_t main_progenitor_tracers; /* 1: the descendant's main progenitor by most-bound particles */
  int32_t main_descendant_tracers; /* 1: the progenitor's main descendant by most-bound particles */
  int64_t host_id;                 /* ORPHAN: the later structure holding most of its most-bound
                                      particles (-1: none); -1 otherwise */
} phew_link;

typedef enum phew_link_kind {
  PHEW_LINK_DIRECT = 0, /* a structure of the earlier step and one of the later step */
  PHEW_LINK_ORPHAN = 1, /* a lost structure followed by its most-bound particles (descendant -1) */
  PHEW_LINK_REFOUND = 2 /* an orphan found again as a later structure */
} phew_link_kind;

/* What phew_find_clumps finds: the catalogues and the dendrogram (complete on rank 0 of the
 * communicator, empty elsewhere), the statistics, the thresholds used and the mean density
 * (the same on every rank). */
typedef struct phew_clump_result {
  int columns; /* phew_column_set flags of this catalogue (0 for grids, graphs, AMR) */
  int64_t n_clumps;
  phew_object *clumps;
  int64_t n_haloes;
  phew_object *haloes;
  int64_t n_nodes;
  phew_node *nodes;
  phew_stats stats;
  /* the thresholds used (the given ones, or the automatic ones; the saddle threshold is NaN
   * without saddle merging) and the mean density of the input (see phew_params), always
   * computed, in the density's units; NaN if the call failed before they were known */
  double density_threshold_used;
  double saddle_threshold_used;
  double mean_density;
} phew_clump_result;

PHEW_API void phew_clump_result_free(phew_clump_result *result);

/* Run the whole pipeline: watershed, saddles, noise removal, saddle merging, properties.
 * Collective over context->mpi_comm. On error every rank returns the same status,
 * context->message says why, and the labels are filled with -1 (whenever the label arrays and the
 * number of cells are known; the density is never written).
 *
 * In parallel each rank passes its block of the grid: the active box it owns plus one ghost
 * layer towards every neighbouring block (phew_grid_decompose gives such blocks; any tiling
 * of the grid by active boxes works), with the ghost densities filled (phew_exchange_ghosts).
 * Ranks may own no cells. Labels come back for active and ghost cells. The catalogue and the
 * dendrogram (clumps, haloes, nodes) are complete on rank 0 of the communicator and empty on
 * the other ranks; the stats are global and the same on every rank. The answer is identical,
 * bit for bit, for any number of ranks.
 *
 * Masses, volumes and centres come from exact sums (no rounding until the final value, so
 * any dynamic range of densities and cell sizes is summed right and in any order). A mass or
 * a volume of a listed clump, halo or dendrogram node that lies outside the normal double
 * range [DBL_MIN, DBL_MAX] fails the call with PHEW_ERROR_DATA and a message naming it;
 * structures left out by the mass threshold need not fit. */
PHEW_API phew_status phew_find_clumps(phew_context *context, const phew_input *input, const phew_params *params,
                                      phew_labels *labels, phew_clump_result *result);

/* Particles only: the density of every particle passed (input->mesh == PHEW_MESH_POINTS),
 * the SPH estimate described at phew_points, without the clump finder. Collective; on error
 * every rank returns the same status and context->message says why. stats (optional) gets
 * n_cells, n_ranks, n_threads, the particle stages' seconds and the padding figures. */
PHEW_API phew_status phew_estimate_density(phew_context *context, const phew_input *input, double *density,
                                           phew_stats *stats);

/* ---- halo finders on particles -------------------------------------------------------------
 * Both take particles as phew_find_clumps does (input->mesh == PHEW_MESH_POINTS, phew_points),
 * distribute them over the ranks the same way, and label every particle passed with its
 * GroupId (-1: in no group), in the order passed. The catalogue (result->groups) is complete
 * on rank 0 and empty elsewhere; the labels and the catalogue are the same, bit for bit, for
 * any number of ranks and threads. Collective; on error every rank returns the same status,
 * context->message says why and the labels are -1. */

/* What a halo finder finds: the group catalogue (complete on rank 0, empty elsewhere), the
 * statistics and, for Friends-of-Friends, the linking length used (the same on every rank). */
typedef struct phew_group_result {
  int columns; /* phew_column_set flags: PHEW_COLUMNS_PARTICLES, and PHEW_COLUMNS_VELOCITY,
                  PHEW_COLUMNS_PEAK when the catalogue has those columns */
  int64_t n_groups;
  phew_group *groups;
  phew_stats stats;
  double linking_length_used; /* Friends-of-Friends: the linking length in the positions'
                                 units (a relative one times the mean spacing); NaN for HOP,
                                 and if the call failed before it was known */
} phew_group_result;

PHEW_API void phew_group_result_free(phew_group_result *result);

/* Friends-of-Friends: two particles are friends when their distance (the nearest image on
 * periodic axes) is at most the linking length; groups are the connected components. */
typedef struct phew_fof_params {
  double linking_length; /* relative: times the mean interparticle spacing (box volume / N)^(1/3)
                            (the volume of the particles' bounds without a box), the cube
                            root rounded correctly: exact when volume / N is the cube of a
                            double (n^3 particles on a lattice of spacing L / n, L / n exact) */
  int absolute;          /* 1: linking_length is a length, in the positions' units */
  int64_t min_members;   /* smaller groups get GroupId -1 (1: every particle is in a group) */
} phew_fof_params;

/* b = 0.2 relative, groups of at least 20 particles. */
PHEW_API void phew_fof_params_init(phew_fof_params *params);

PHEW_API phew_status phew_find_fof_groups(phew_context *context, const phew_input *input, const phew_fof_params *params,
                                          int64_t *group_id, phew_group_result *result);

#define PHEW_ARRAY_GROUP_ID "GroupId"

/* HOP (Eisenstein & Hut 1998, with the regrouping of their code as distributed in yt), on the
 * SPH density described at phew_points (n_density_neighbours, 64 by default; or the density
 * given in input->density, then compared with the thresholds as it is):
 * - hop: each particle hops to the densest of its n_hop nearest particles (itself counted,
 *   first; a denser one wins only when strictly denser, so equal densities go to the closer
 *   particle); chains end at maxima (particles densest among their own n_hop); each maximum's
 *   particles form one HOP group, named by the maximum (its peak);
 * - boundaries: for every particle and each of its n_merge nearest other particles in another
 *   group, the mean of their two densities; the boundary of two groups is the largest;
 * - regroup, with densities in units of the mean density: particles below `outer` are in no
 *   group; groups whose peak is >= peak_factor * outer are proper, and proper groups whose
 *   boundary is >= saddle_factor * outer join. A fringe group (peak below that) joins the
 *   proper group it reaches along the widest path of boundaries (the path whose weakest link
 *   is the strongest; paths run from the fringe group through fringe groups whose peaks are
 *   >= outer, by boundaries >= outer, to a proper group), if that weakest link is >= outer;
 *   equally strong paths go to the proper group with the higher peak, then the smaller peak
 *   id. Otherwise its particles are in no group. Groups with fewer than min_members particles
 *   (all of them are above outer) get GroupId -1.
 * The catalogue has the peak columns: a group's peak is its densest particle (the peak of its
 * densest proper group). */
typedef struct phew_hop_params {
  double outer;         /* delta_outer, in units of the mean density (160) */
  double saddle_factor; /* delta_saddle = saddle_factor * outer (2.5) */
  double peak_factor;   /* delta_peak = peak_factor * outer (3) */
  int n_hop;            /* particles a particle hops among, itself counted (64) */
  int n_merge;          /* nearest other particles that make boundaries (4) */
  int64_t min_members;  /* smaller groups get GroupId -1 (10) */
} phew_hop_params;

/* delta_outer 160, saddle factor 2.5, peak factor 3, 64 and 4 neighbours, 10 members. */
PHEW_API void phew_hop_params_init(phew_hop_params *params);

/* density (optional, per particle passed): the density HOP used, in units of the mean density
 * when estimated (NaN on error). */
PHEW_API phew_status phew_find_hop_groups(phew_context *context, const phew_input *input, const phew_hop_params *params,
                                          int64_t *group_id, double *density, phew_group_result *result);

/* ---- clumps followed in time ---------------------------------------------------------------
 * The labels of one step, as each rank holds them: element i (a cell or a particle) has the
 * global id id[i] and lies in structure label[i] (a ClumpId, HaloId or GroupId; -1: in none).
 * Over all ranks an id appears at most once per step; the elements may lie on other ranks in
 * the other step (particles move between ranks). */
typedef struct phew_step_labels {
  int64_t n;
  const int64_t *id;    /* >= 0: grids use the global cell id, particles their own ids */
  const int64_t *label; /* >= -1 */
  const double *mass;   /* finite and >= 0 (cells: density * volume); NULL: 1 per element */
  const double *energy; /* phew_most_bound only: each element's specific energy in its structure
                           (NaN: none; phew_structure_physics's bound_energy) */
} phew_step_labels;

/* The merger tree from one step to the next: every pair of structures, one of each step, that
 * share elements, with the shared mass both ways; structures sharing none appear alone. The
 * links are complete on rank 0 of context->mpi_comm and empty elsewhere, and the same, bit
 * for bit, for any number of ranks (masses are exact sums). Collective; on error every rank
 * returns the same status and context->message says why (an id passed twice in a step, a
 * negative id or label, a mass that is not finite and non-negative). */
/* (The result is overwritten: free a previous one before passing it again.) */
typedef struct phew_link_result {
  int64_t n_links; /* ordered by descendant id (-1 last), then progenitor id */
  phew_link *links;
} phew_link_result;

PHEW_API void phew_link_result_free(phew_link_result *result);

PHEW_API phew_status phew_link_steps(phew_context *context, const phew_step_labels *earlier,
                                     const phew_step_labels *later, phew_link_result *result);

/* ---- most-bound particles and orphans (docs/merger-trees.md) ---------------------------------
 * A structure is followed by its most-bound particles (its tracers: the particles labelled with
 * it of lowest specific energy, equal energies by id), as RAMSES's merger trees and HBT+ do; a
 * structure that merged or vanished stays followed by them as an orphan for a few steps, until
 * it is found again as a structure without a progenitor. */
typedef struct phew_tracked {
  int64_t id;            /* the structure's label in the step it was last seen in */
  int64_t step;          /* that step (the caller's numbering) */
  int64_t orphan_steps;  /* 0: a structure of the step; k > 0: followed as an orphan k steps */
  double mass;           /* its mass in that step (its elements' masses, exact sum) */
  int64_t tracer_offset; /* its tracers: ids[tracer_offset .. tracer_offset + n_tracers), most
                            bound first */
  int64_t n_tracers;
} phew_tracked;

/* The structures a step links from: its own (orphan_steps 0, by id) then the orphans carried
 * (by step, then id). Complete on rank 0 of the communicator, empty elsewhere. */
typedef struct phew_tracer_set {
  int64_t n;
  phew_tracked *tracked;
  int64_t n_ids;
  int64_t *ids;
} phew_tracer_set;

PHEW_API void phew_tracer_set_free(phew_tracer_set *set);

/* Collective: the tracers of every structure of a step: the n_most_bound elements of lowest
 * labels->energy (required; NaN energies never count), with the structures' masses. The set
 * (overwritten) is on rank 0. */
PHEW_API phew_status phew_most_bound(phew_context *context, const phew_step_labels *labels, int64_t step,
                                     int64_t n_most_bound, phew_tracer_set *set);

/* out = a's entries, then b's (e.g. a step's own tracers, then the orphans carried to it); ids
 * copied; out must be neither a nor b. Returns PHEW_ERROR_MEMORY (out empty) if memory ran
 * out. Not collective. */
PHEW_API phew_status phew_tracer_set_join(const phew_tracer_set *a, const phew_tracer_set *b, phew_tracer_set *out);

typedef struct phew_track_params {
  int64_t max_orphan_steps; /* follow a lost structure at most this many steps (3); 0: never */
} phew_track_params;

PHEW_API void phew_track_params_init(phew_track_params *params);

/* Collective: the links from the earlier step to the later one by shared mass
 * (as phew_link_steps) and by the tracers of `tracers` (the earlier step's structures and the
 * orphans carried to it, on rank 0): every structure's main partners both ways by most-bound
 * particles, the structures lost in the later step as orphans (kind ORPHAN), orphans found
 * again (kind REFOUND). `orphans` gets the orphans to carry on to the next step (rank 0;
 * join them after the later step's own tracers). Links and orphans the same, bit for bit, for
 * any number of ranks. */
PHEW_API phew_status phew_link_tracked(phew_context *context, const phew_step_labels *earlier,
                                       const phew_step_labels *later, const phew_tracer_set *tracers,
                                       const phew_track_params *params, phew_link_result *links,
                                       phew_tracer_set *orphans);

/* ---- a merger tree drawn (the Merger Tree filter's Tree Drawing) ------------------------------
 * The rows of a merger tree's history (one phew_link_steps or phew_link_tracked result per step,
 * one after the other; steps[k] is row k's later step, counting from 0) as a drawing: one node
 * per structure per step, one edge per row that links two structures, each node's final halo,
 * and a column for each node so that the trees of the final haloes stand side by side.
 * - Nodes: the rows' descendants (DescendantId >= 0), sorted by step, then id; a node's mass is
 *   its rows' descendant_mass. A row's progenitor is a node of progenitor_step (-1: step - 1).
 * - A node's main descendant: the row with it as progenitor that has main_descendant = 1 (by
 *   shared mass; kind DIRECT). Following main descendants from a node ends at a node with none;
 *   final_id is that node's id if it lies in the last step of the rows, else -1.
 * - main_progenitor: the row into the node with main_progenitor = 1 (kind DIRECT), the usual
 *   main branch of a mass history.
 * - Columns: a node's tree is the nodes whose main descendants lead to it. The trees of the nodes
 *   without a main descendant stand side by side, one empty column apart: those of the last step
 *   first, by decreasing mass (equal: smaller id), then the others by decreasing step, mass, then
 *   id. In a tree the node's main child (its main progenitor when that is one of the nodes whose
 *   main descendant it is, else the most massive of those; main_branch marks the chains of main
 *   children from the tree's top) keeps its column; its other children's trees follow to the
 *   right, the earlier mergers of the branch nearer to it, so that the tree's own edges never
 *   cross. x is the column, 0 .. n_columns - 1.
 * Fails with PHEW_ERROR_ARGUMENT (n_links < 0, a NULL array, a negative step, a progenitor step
 * not before the row's step, a progenitor that is no node of its step) or PHEW_ERROR_DATA (a
 * descendant mass that is not finite and >= 0) and context->message; the drawing is then empty.
 * `drawing` must be zero-initialised or hold an earlier call's drawing: it is freed first.
 * Not collective; context may be NULL (no message). Free with phew_tree_drawing_free. */
typedef struct phew_tree_node {
  int64_t step;            /* the step it is a structure of */
  int64_t id;              /* its label in that step */
  double mass;             /* its mass (descendant_mass of its rows) */
  double x;                /* its column */
  int64_t final_id;        /* the id of the last step's structure its main descendants lead to, -1 */
  int64_t descendant;      /* its main descendant's node index, -1: none */
  int64_t main_progenitor; /* its main progenitor's node index (main_progenitor = 1), -1: none */
  int64_t n_progenitors;   /* nodes whose main descendant it is (2 or more: a merger) */
  int32_t main_branch;     /* 1: on its tree's main branch (the chain of main children from the top) */
} phew_tree_node;

typedef struct phew_tree_edge {
  int64_t progenitor; /* node index */
  int64_t descendant; /* node index */
  int64_t row;        /* the row of the links it draws */
} phew_tree_edge;

typedef struct phew_tree_drawing {
  int64_t n_nodes;
  phew_tree_node *nodes; /* by step, then id */
  int64_t n_edges;
  phew_tree_edge *edges; /* in the rows' order */
  int64_t n_columns;     /* the columns used, gaps between trees included */
  int64_t last_step;     /* the largest step of the rows, -1 without rows */
} phew_tree_drawing;

PHEW_API phew_status phew_layout_merger_tree(phew_context *context, const phew_link *links, const int64_t *steps,
                                             int64_t n_links, phew_tree_drawing *drawing);

PHEW_API void phew_tree_drawing_free(phew_tree_drawing *drawing);

PHEW_API const char *phew_status_string(phew_status status);
PHEW_API const char *phew_stage_name(int stage);

/* Names users see, the same in the CLI's CSV headers, the ParaView arrays and tables. */
#define PHEW_ARRAY_PEAK_PATCH_ID "PeakPatchId"
#define PHEW_ARRAY_CLUMP_ID "ClumpId"
#define PHEW_ARRAY_HALO_ID "HaloId"

typedef enum phew_column_type { PHEW_COLUMN_INT64 = 0, PHEW_COLUMN_INT32, PHEW_COLUMN_DOUBLE } phew_column_type;

/* A catalogue column: its name and where it sits in phew_object or phew_node. */
typedef struct phew_column {
  const char *name;
  phew_column_type type;
  size_t offset;
} phew_column;

/* Column lists in output order: the clump table, the halo table, the dendrogram, for a
 * catalogue with these optional columns (the result's columns; 0 for grids, graphs, AMR). */
PHEW_API const phew_column *phew_clump_columns(int columns, int *count);
PHEW_API const phew_column *phew_halo_columns(int columns, int *count);
PHEW_API const phew_column *phew_node_columns(int columns, int *count);
/* The group catalogue of the halo finders (PHEW_COLUMNS_VELOCITY, PHEW_COLUMNS_PEAK). */
PHEW_API const phew_column *phew_group_columns(int columns, int *count);

/* The merger tree's columns (phew_link). */
PHEW_API const phew_column *phew_link_columns(int *count);

/* ---- the physics of structures: unbinding and halo properties --------------------------------
 * Any grouping of particles (PHEW's clumps with their parents, Friends-of-Friends or HOP groups,
 * or labels made elsewhere with a parent table) becomes a halo catalogue: particles that are not
 * gravitationally bound to their structure are passed up the hierarchy, and every structure gets
 * its bound mass, centre, spherical-overdensity masses, Vmax, spin and shape. The exact rules and
 * units are in docs/physics.md; the summary:
 *
 * Units. With a comoving cosmology (phew_cosmology.comoving) positions are comoving Mpc/h,
 * velocities peculiar km/s and masses Msun/h (the readers' astronomers' units); separations are
 * made proper with the scale factor a, G = 4.30091727e-9 Mpc (km/s)^2 / Msun, and energies are
 * (km/s)^2. Otherwise positions, velocities and masses are in any units in which the
 * gravitational constant is params.gravitational_constant (a = 1).
 *
 * Unbinding (params.unbind), bottom-up over the hierarchy: structures are taken by height (a
 * structure without substructure has height 0; a parent is one higher than its highest child).
 * A structure's members are the particles labelled with it or with any structure below it.
 * Each member i gets the softened potential of all the other members,
 *   phi_i = -(G / a) sum_j m_j / sqrt(r_ij^2 + eps^2)   (r_ij comoving, nearest image),
 * by direct summation up to params.direct_max members, else from an octree (docs/physics.md:
 * its cells, the opening criterion and the order of the sums). The candidates are the members
 * labelled with the structure itself (its own particles and those passed up from its
 * substructure). With v_b the mass-weighted mean velocity of the bound members (at first:
 * all of them), a candidate is bound when E = |v - v_b|^2 / 2 + phi < 0; v_b is recomputed on
 * the candidates found bound plus the members bound to substructure, until it moves by at most
 * params.tolerance times the bound members' velocity dispersion, or params.max_iterations
 * times. The candidates left with E >= 0 go to the parent structure, where they are
 * candidates again; at the top they are bound to nothing (-1). Velocities are peculiar: no
 * Hubble flow, as in RAMSES's unbinding.
 *
 * Everything is computed in an order that depends only on the particles' ids and the
 * structures, so the labels and the catalogue are the same, bit for bit, for any number of
 * ranks and threads. */
typedef struct phew_cosmology {
  int comoving;        /* 1: the units above, with the fields below; 0: no cosmology */
  double hubble;       /* h = H0 / (100 km/s/Mpc) */
  double omega_m;      /* Omega_matter today; flat LCDM: Omega_m + Omega_Lambda = 1 */
  double omega_lambda; /* Omega_Lambda today */
  double scale_factor; /* a of the snapshot, in (0, 1e3] */
} phew_cosmology;

typedef enum phew_potential_method {
  PHEW_POTENTIAL_EXACT = 0,    /* pairwise, softened: direct sums or the octree */
  PHEW_POTENTIAL_SPHERICAL = 1 /* RAMSES's binned mass profile (docs/physics.md) */
} phew_potential_method;

typedef struct phew_physics_params {
  int unbind; /* 1: unbind (the default); 0: every member counts as bound */
  phew_potential_method potential;
  double softening;              /* Plummer softening eps in the positions' units; negative:
                                    1/50 of the mean interparticle spacing (the default) */
  double opening_angle;          /* the octree's theta (0.5): a cell of side s is taken whole by
                                    a particle farther than s / theta from its centre of mass */
  int64_t direct_max;            /* structures with at most this many members sum directly (1000) */
  double tolerance;              /* bulk velocity convergence, in units of the dispersion (0.01) */
  int max_iterations;            /* at most this many estimates of the bulk velocity (100) */
  double gravitational_constant; /* without a comoving cosmology (1) */
  phew_cosmology cosmology;      /* comoving 0 by default */
  int unbind_top;                /* 1: top-level structures lose their unbound particles too (-1);
                                    0: they keep them all (RAMSES's rule for haloes) */
  /* the spherical method (RAMSES's, docs/physics.md) */
  int n_mass_bins;      /* bins of the mass profile (50) */
  int log_bins;         /* 1: logarithmic bins from profile_r_min (RAMSES's default) */
  double profile_r_min; /* inner radius of the log bins (RAMSES: its finest cell size);
                           negative: the softening */
  int saddle_cut;       /* 1: a substructure's potential is taken relative to its value at the
                           nearest particle of another structure of its top-level structure
                           (RAMSES's saddle_pot, as its source describes it); 0 (default): no
                           cut, which reproduces RAMSES's own output on the shared run
                           (docs/physics.md) */
  int64_t n_most_bound; /* tracers kept per structure: its most-bound particles (200, as
                           RAMSES's nmost_bound) for the merger trees (phew_link_tracked);
                           0: none (result.most_bound empty) */
  int64_t gather_max;   /* a top-level structure with at most this many members is worked on by
                           one rank; a larger one by every rank together, each with a share of
                           its members (no structure has to fit on one rank). The results do
                           not depend on it. 0 (default): the mean number of particles per rank */
} phew_physics_params;

/* Unbinding on (top level too), exact potential, automatic softening, theta 0.5, 1000 direct
 * members, tolerance 0.01, 100 iterations, G = 1, no cosmology; spherical: 50 log bins from the
 * softening, no saddle cut; 200 most-bound particles; gather_max automatic. */
PHEW_API void phew_physics_params_init(phew_physics_params *params);

/* A grouping: per particle passed, its innermost structure (0 .. n_structures - 1, or -1:
 * none), and per structure its parent (-1: a top-level structure; the same table on every
 * rank; NULL: every structure is top-level). */
typedef struct phew_structures {
  int64_t n_structures;
  const int64_t *parent;
  const int64_t *label;
  const double *centre; /* 3 per structure (the same on every rank): the centres of the spherical
                           method (PHEW: the peaks); NULL: each structure's centre of mass */
} phew_structures;

/* One structure of the physics catalogue (docs/physics.md defines every field). "Bound" is
 * inclusive (with the substructure's bound members) unless said exclusive. Lengths are in the
 * positions' units (comoving Mpc/h with a cosmology), masses in the masses' units, velocities
 * proper (km/s), NaN where a value is undefined (no bound member, no cosmology for the
 * spherical-overdensity columns). */
typedef struct phew_structure {
  int64_t id;
  int64_t parent_id;
  int32_t height;            /* 0: no substructure */
  int32_t iterations;        /* bulk velocity estimates of the unbinding (0 without it) */
  int64_t mass_rank;         /* 0: the largest bound mass; equal masses by id */
  int64_t n_members;         /* particles of the structure and its substructure, as given */
  int64_t n_bound;           /* bound particles, exclusive (own, not the substructure's) */
  int64_t n_bound_inclusive; /* bound particles with the substructure's */
  double member_mass;        /* mass of the n_members */
  double bound_mass;         /* exclusive */
  double bound_mass_inclusive;
  double bound_fraction;      /* bound_mass_inclusive / member_mass */
  int64_t centre_id;          /* the bound particle of lowest potential (equal: smaller id) */
  double centre[3];           /* its position */
  double centre_potential;    /* its potential */
  double center_of_mass[3];   /* of the bound particles, wrapped into the box on periodic axes */
  double bulk_velocity[3];    /* mass-weighted mean velocity of the bound particles */
  double velocity_dispersion; /* sqrt(sum m |v - v_b|^2 / sum m), 3D */
  double m200c, r200c, m500c, r500c, m200m, r200m, mvir, rvir; /* all particles, about centre */
  double vmax, rmax;                                           /* circular velocity peak of the bound particles */
  double angular_momentum[3]; /* about the centre of mass, proper (mass x length x velocity) */
  double spin_peebles;        /* J |E|^(1/2) / (G M^(5/2)) of the bound particles */
  double spin_bullock;        /* J / (sqrt(2) Mvir Vvir Rvir) */
  double axis_ratio_ba, axis_ratio_ca;
  double major_axis[3];   /* unit vector, first nonzero component positive */
  double c200c;           /* NFW concentration from Vmax / V200c */
  int64_t n_unbound;      /* particles given to this structure (innermost) that are bound to
                             neither it nor its substructure */
  int64_t bound_offset;   /* its bound particles (inclusive) in the membership lists of
                             phew_physics_result: bound ids [bound_offset, bound_offset +
                             n_bound_inclusive), its own (n_bound) first */
  int64_t unbound_offset; /* unbound ids [unbound_offset, unbound_offset + n_unbound) */
} phew_structure;

/* What phew_structure_physics finds: the catalogue (complete on rank 0 in id order, empty
 * elsewhere) and figures the same on every rank. */
typedef struct phew_physics_result {
  int64_t n_structures;
  phew_structure *structures;
  double softening_used;              /* eps, in the positions' units */
  double gravitational_constant_used; /* in the units of the energies (see above) */
  int64_t n_candidates;               /* particles tested, summed over the structures */
  int64_t n_unbound;                  /* particles left bound to nothing (were labelled) */
  double seconds;                     /* maximum over ranks, the whole call */
  /* the stages' seconds (maximum over ranks): the members to the ranks holding their top-level
   * structures and the labels back; potentials, unbinding and the member-based properties; the
   * spherical-overdensity spheres; the catalogue and the membership lists */
  double seconds_members, seconds_unbinding, seconds_overdensity, seconds_catalogue;
  /* The membership lists, each rank holding a contiguous share (for writers that write in
   * parallel): the bound particles' ids ordered by the preorder of the structure they are bound
   * to (roots by id, children by id), then by id; the unbound ones (given to a structure, bound
   * to neither it nor below) by the preorder of the structure they were given to, then by id.
   * This rank's share starts at global index *_first; the totals are over all ranks. */
  int64_t n_bound_ids, bound_ids_first, n_bound_ids_total;
  int64_t *bound_ids;
  int64_t n_unbound_ids, unbound_ids_first, n_unbound_ids_total;
  int64_t *unbound_ids;
  /* Rank 0: every structure with bound particles and its n_most_bound particles of lowest
   * specific energy (phew_most_bound on the bound labels and energies): the tracers of the
   * merger trees, written to the HDF5 catalogue. Their step is 0: set tracked[].step to the
   * caller's step before linking several runs. */
  phew_tracer_set most_bound;
} phew_physics_result;

PHEW_API void phew_physics_result_free(phew_physics_result *result);

/* Unbinding and properties of the structures of `structures` on the particles of `input`
 * (mesh PHEW_MESH_POINTS: positions, masses, velocities and ids as the finders take them;
 * velocities are required). bound_label (per particle passed, optional) gets the innermost
 * structure each particle is bound to, or -1; bound_energy (optional) its specific energy
 * there, 0.5 |v - bulk velocity|^2 + potential (the unbinding's energy, in its units; NaN
 * where unbound): phew_most_bound's energies. Collective; on error every rank returns the same
 * status, context->message says why and bound_label is -1. */
PHEW_API phew_status phew_structure_physics(phew_context *context, const phew_input *input,
                                            const phew_structures *structures, const phew_physics_params *params,
                                            int64_t *bound_label, double *bound_energy, phew_physics_result *result);

/* The catalogue's columns (phew_structure), in output order. */
PHEW_API const phew_column *phew_structure_columns(int *count);

/* Value of a column in a row (a phew_object or a phew_node), as a double or as an integer. */
PHEW_API double phew_column_as_double(const phew_column *column, const void *row);
PHEW_API int64_t phew_column_as_int64(const phew_column *column, const void *row);

/* *product = factors[0] * ... * factors[n_factors - 1]. Returns PHEW_OK, or
 * PHEW_ERROR_ARGUMENT (and leaves *product unchanged) when a factor is negative or the product
 * does not fit in int64_t. The core checks
 * every size it derives from its input with it; front ends use it for the sizes they compute
 * from user input (cell counts, byte counts) before allocating or reading anything. */
PHEW_API phew_status phew_checked_product(const int64_t *factors, int n_factors, int64_t *product);

/* 1 if the library was built with MPI support. */
PHEW_API int phew_has_mpi(void);

/* ---- drawing the dendrogram ----------------------------------------------------------------
 * Where each node of a dendrogram (phew_clump_result.nodes) goes in a plot with the leaves along x
 * and log10 of the density up y: a node is a vertical segment at x from log_top down to
 * log_bottom, and every node c with a parent p also a horizontal one at height log_bottom of c,
 * from x of c to x of p.
 * - x: depth first from the roots, the roots and the children of every node taken in
 *   decreasing peak density (equal peaks: the smaller id first), so the leaves of every subtree
 *   are contiguous. Leaves get x = 0, 1, 2, ... in that order; any other node the midpoint of
 *   the smallest and largest x of its children.
 * - log_bottom = log10(saddle_density), where the node joins its parent (roots: their key
 *   saddle). log_top = log10(peak_density) for a leaf, else log10 of the highest saddle_density
 *   of its children (where they meet). A top below the bottom (phew_find_clumps never makes
 *   one) is kept as it is.
 * - A density <= 0 (a saddle at threshold 0) is drawn at *log_floor (optional output): one
 *   decade below the smallest positive peak or saddle density of all nodes.
 * Parents are found by id; ids need not be the array indices (phew_find_clumps numbers its
 * nodes 0..n-1, children before parents). layout[i] describes nodes[i]. O(n log n), no
 * recursion. Fails with PHEW_ERROR_ARGUMENT (n_nodes < 0, a NULL array, two nodes with one id,
 * a parent id that is no node's, parents in a cycle) or PHEW_ERROR_DATA (a NaN or infinite
 * density, no positive density at all) and context->message, and then writes neither layout
 * nor *log_floor. Not collective. No nodes: PHEW_OK, *log_floor = NaN. */
typedef struct phew_node_layout {
  double x;
  double log_top;
  double log_bottom;
  int64_t parent_index; /* the parent's index in the node array, -1 for roots */
} phew_node_layout;

PHEW_API phew_status phew_layout_dendrogram(phew_context *context, const phew_node *nodes, int64_t n_nodes,
                                            phew_node_layout *layout, double *log_floor);

/* The same drawing with room by mass, for dendrograms of hundreds of haloes: each node gets an
 * interval of x as wide as its mass, so that the massive structures take the room and the
 * small ones thin slices; structures below a mass cut are collapsed into their parent.
 * - Order: depth first from the roots, the roots and the children of every node taken in
 *   decreasing mass (equal masses: decreasing peak density, then the smaller id); the leaves of
 *   every subtree are contiguous.
 * - Drawn nodes: a root with mass >= mass_cut, and a node with mass >= mass_cut whose parent is
 *   drawn; the others (and all their descendants) get x = NaN and are not drawn (their mass stays
 *   counted in their ancestors'). A mass_cut <= 0 draws every node.
 * - x_low .. x_high, of width the node's mass: the drawn roots' intervals follow each other
 *   from 0; a drawn node's drawn children's follow each other from its x_low (what its
 *   collapsed children weigh is left over at its right end).
 * - x: a drawn node with drawn children at the middle of the smallest and largest x of those,
 *   log_top the log10 of the highest saddle_density among them; any other drawn node at the
 *   middle of its interval, log_top the log10 of its peak_density. log_bottom as in
 *   phew_layout_dendrogram, the same log floor.
 * - rank: the roots numbered in decreasing mass (0: the most massive, drawn or not); -1 for
 *   every other node.
 * Fails as phew_layout_dendrogram does, and also with PHEW_ERROR_DATA for a mass that is
 * negative or not finite and PHEW_ERROR_ARGUMENT for a NaN mass_cut. Not collective. */
typedef struct phew_mass_layout {
  double x;     /* NaN: not drawn (collapsed into an ancestor) */
  double x_low; /* the node's interval of x, as wide as its mass (NaN if not drawn) */
  double x_high;
  double log_top;
  double log_bottom;
  int64_t parent_index; /* the parent's index in the node array, -1 for roots */
  int64_t rank;         /* roots: 0, 1, ... by decreasing mass; other nodes -1 */
} phew_mass_layout;

PHEW_API phew_status phew_layout_dendrogram_by_mass(phew_context *context, const phew_node *nodes, int64_t n_nodes,
                                                    double mass_cut, phew_mass_layout *layout, double *log_floor);

/* Colours for drawings of many haloes (docs/gui.md, "Colours"): one categorical colour index
 * per halo, so that the largest haloes are told apart at a glance and neighbours differ.
 * - The PHEW_COLOURS_OWN (10) most massive haloes get a colour each: 0, 1, ... in decreasing
 *   mass (equal masses: the lower index first; a NaN mass counts as the lightest).
 * - Every other halo, in decreasing mass, gets one of the PHEW_COLOURS_SHARED (8) colours
 *   PHEW_COLOURS_OWN .. PHEW_COLOURS - 1: the one whose nearest halo already coloured with it
 *   is farthest away, looking within about twice the mean separation of the haloes (a halo
 *   with every shared colour free around it takes the one after the previous halo's).
 * mass[n] and centre[3 n] (x, y, z per halo); period: the box length along each periodic axis,
 * 0 for an open axis (NULL: all open). A halo whose centre is not finite is far from all.
 * Fails with PHEW_ERROR_ARGUMENT (n < 0, a NULL array, a period negative or not finite) or
 * PHEW_ERROR_MEMORY and context->message (context may be NULL: no message), and then writes
 * nothing. Not collective; the same answer on every machine. */
#define PHEW_COLOURS_OWN 10
#define PHEW_COLOURS_SHARED 8
#define PHEW_COLOURS 18
PHEW_API phew_status phew_colour_haloes(phew_context *context, int64_t n, const double *mass, const double *centre,
                                        const double period[3], int32_t *colour);

/* The red, green and blue (0..1) of colour index 0 .. PHEW_COLOURS - 1 of phew_colour_haloes;
 * any other index (-1: no structure) gives the light grey of what belongs to no structure. */
PHEW_API void phew_colour_rgb(int32_t colour, double rgb[3]);

#ifdef __cplusplus
}
#endif

#endif
