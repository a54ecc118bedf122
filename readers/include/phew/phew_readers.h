/* phew readers: simulation snapshots into arrays and metadata (libphew_readers, beside
 * libphew). Plain C11, no VTK; shared by the command-line tool, the ParaView readers and
 * Python.
 *
 * Formats:
 *   RAMSES       an output folder output_NNNNN/ (or its info_NNNNN.txt): particles from
 *                part_NNNNN.outCCCCC (fields from part_file_descriptor.txt, or the classic
 *                layout without it), units and cosmology from the info file
 *   GADGET HDF5  snap_NNN.hdf5 or the multi-file snap_NNN.0.hdf5, snap_NNN.1.hdf5, ...:
 *                GADGET-2/3/4, AREPO and SWIFT (its Units and Cosmology groups)
 *
 * The conventions of libphew hold: a phew_context first (its communicator: the calls are
 * collective over it), a phew_status back, the message of a failure in context->message, the
 * same on every rank. Nothing is printed; nothing of the files is changed.
 *
 * Each rank reads only its share (RAMSES: a contiguous range of the CPU files; HDF5: a
 * contiguous range of the particles, as hyperslabs of the files it spans) and holds only
 * that; the particles' global order is the snapshot's (the files in order, each file's
 * particles in order), and rank r's share comes before rank r+1's. */
#ifndef PHEW_PHEW_READERS_H
#define PHEW_PHEW_READERS_H

#include "phew/phew.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum phew_snapshot_format {
  PHEW_FORMAT_AUTO = 0,   /* from the path: a folder or info_*.txt is RAMSES, *.hdf5 GADGET */
  PHEW_FORMAT_RAMSES = 1, /* */
  PHEW_FORMAT_GADGET_HDF5 = 2
} phew_snapshot_format;

/* The units of the arrays read.
 *   CODE   as stored in the files (RAMSES: positions in [0, boxlen); GADGET: its UnitLength,
 *          UnitMass, UnitVelocity with their h; SWIFT: its U_L, U_M, U_t), velocities as
 *          stored too (GADGET-2/3/4 and AREPO store u = v_peculiar / sqrt(a))
 *   ASTRO  comoving Mpc/h, Msun/h and peculiar km/s (1 Mpc = 3.0856775814913673e24 cm,
 *          1 Msun = 1.98841586e33 g) */
typedef enum phew_unit_system { PHEW_UNITS_CODE = 0, PHEW_UNITS_ASTRO = 1 } phew_unit_system;

/* What a snapshot says about itself: the same on every rank. Lengths, masses and velocities
 * are in the units of the arrays read (phew_read_options.units). */
typedef struct phew_snapshot_info {
  phew_snapshot_format format;
  char code[32];       /* "RAMSES", "GADGET", "GADGET-4", "AREPO", "SWIFT" */
  char path[1024];     /* the file or folder that was read (RAMSES: the info file) */
  int n_files;         /* files the particles are spread over (RAMSES: ncpu) */
  int cosmological;    /* 1: an expanding box (a, h and the Omegas are meaningful) */
  double time;         /* the code's time variable as stored */
  double scale_factor; /* a (1 when not cosmological) */
  double redshift;     /* 1/a - 1 */
  double hubble;       /* h = H0 / (100 km/s/Mpc); 1 when not given */
  double omega_matter, omega_lambda, omega_baryon;
  double box_origin[3]; /* the periodic box: [origin, origin + size) along each axis */
  double box_size[3];
  int periodic[3]; /* cosmological boxes are periodic */
  phew_unit_system units;
  char length_unit[32]; /* "Mpc/h" (comoving), or "code" */
  char mass_unit[32];   /* "Msun/h", or "code" */
  char velocity_unit[32];
  /* one code unit in cgs as the snapshot defines it (RAMSES: proper at this a; GADGET: with
   * its h^-1 factors and comoving; SWIFT: comoving, no h); NaN when the files do not say */
  double code_length_cm, code_mass_g, code_velocity_cm_s;
} phew_snapshot_info;

/* A per-particle array besides position, velocity, mass and id (phew_read_options.all_fields). */
typedef enum phew_value_type {
  PHEW_VALUE_FLOAT32 = 0,
  PHEW_VALUE_FLOAT64 = 1,
  PHEW_VALUE_INT8 = 2,
  PHEW_VALUE_INT16 = 3,
  PHEW_VALUE_INT32 = 4,
  PHEW_VALUE_INT64 = 5,
  PHEW_VALUE_UINT8 = 6,
  PHEW_VALUE_UINT16 = 7,
  PHEW_VALUE_UINT32 = 8,
  PHEW_VALUE_UINT64 = 9
} phew_value_type;

typedef struct phew_particle_field {
  char name[64];  /* as the snapshot names it ("levelp", "Potential", ...) */
  int components; /* values per particle */
  phew_value_type type;
  void *values; /* n x components */
} phew_particle_field;

/* This rank's share of one kind of particle. The arrays belong to the set (free it with
 * phew_particle_set_free); position, velocity and mass are of one type (the widest the files
 * store them in), ready for phew_points. */
typedef struct phew_particle_set {
  int64_t n;       /* particles on this rank */
  int64_t first;   /* global index of the first: the ranks' shares are consecutive */
  int64_t n_total; /* over all ranks */
  phew_scalar_type type;
  void *position; /* 3 per particle */
  void *velocity; /* 3 per particle; NULL when the snapshot has none */
  void *mass;     /* 1 per particle (from the mass table when the files give one mass) */
  int64_t *id;    /* the snapshot's particle ids */
  int n_fields;
  phew_particle_field *fields;
  phew_snapshot_info info;
} phew_particle_set;

typedef struct phew_read_options {
  phew_snapshot_format format; /* PHEW_FORMAT_AUTO: from the path */
  phew_unit_system units;      /* PHEW_UNITS_CODE */
  int particle_type;           /* GADGET's PartTypeN (1, the dark matter, by default) */
  const char *family;          /* RAMSES's particle family: "DM" (default), "star", "cloud",
                                  "debris", "other", "gas_tracer", ... or its number */
  int all_fields;              /* nonzero: also read every other per-particle array */
} phew_read_options;

/* Defaults: the format from the path, code units, dark matter, no other fields. */
PHEW_API void phew_read_options_init(phew_read_options *options);

/* Collective: the snapshot's metadata (reads the headers only). */
PHEW_API phew_status phew_read_snapshot_info(phew_context *context, const char *path, const phew_read_options *options,
                                             phew_snapshot_info *info);

/* Collective: this rank's share of the particles of the chosen type or family, with the
 * metadata. On a failure (a missing, truncated or foreign file, counts that disagree, ...)
 * every rank gets the status and one message naming the file (and, for Fortran records,
 * the byte offset), and *set is empty. */
PHEW_API phew_status phew_read_particles(phew_context *context, const char *path, const phew_read_options *options,
                                         phew_particle_set *set);

/* Frees the arrays and empties the set (safe on an empty or zeroed set). */
PHEW_API void phew_particle_set_free(phew_particle_set *set);

/* A RAMSES output's AMR as the ranks hold it, ready for phew_plan_amr and vtkOverlappingAMR:
 * level 0 is the run's levelmin (the coarse grid, 2^levelmin cells per axis, which tiles the
 * box), level l its levelmin + l. RAMSES's octs (2x2x2 cells) of each CPU file and level are
 * covered by boxes, each a full block of octs; hierarchy.boxes lists every box of every rank
 * in the same order on every rank (by level, then CPU file), with held = 1 for those whose
 * values this rank read (its CPU files, as for particles). Cells of a box that a finer box
 * covers are not leaves (RAMSES's refined cells: their values are the average of their
 * children's). Lengths in the units asked for; the variables always in code units (RAMSES's
 * cosmological density unit makes the mean matter density 1). */
typedef struct phew_amr_set {
  phew_amr_hierarchy hierarchy; /* levels, origin (the box's corner), boxes; owned by the set */
  int32_t *box_rank;            /* hierarchy.n_boxes: the rank holding each box's values */
  int n_variables;
  char (*variable_names)[64];
  double **values;      /* hierarchy.n_boxes pointers, NULL unless held: variable v of cell c (x
                           fastest over the box) at values[b][v * cells + c] */
  int64_t n_leaf_cells; /* over all ranks */
  phew_snapshot_info info;
} phew_amr_set;

/* Collective: the AMR of a RAMSES output with the hydro variables named (variables NULL: all
 * of them; n_variables 0: none, the hierarchy only). Names come from
 * hydro_file_descriptor.txt (or RAMSES's classic order: density, velocity_x, velocity_y,
 * velocity_z, pressure, ...). A GADGET snapshot has no AMR (an error). */
PHEW_API phew_status phew_read_amr(phew_context *context, const char *path, const phew_read_options *options,
                                   const char *const *variables, int n_variables, phew_amr_set *set);
PHEW_API void phew_amr_set_free(phew_amr_set *set);

/* The format of the snapshot at path (its RAMSES info file, or an HDF5 file with a GADGET
 * Header), PHEW_FORMAT_AUTO when it is neither. Not collective; reads a header at most. */
PHEW_API phew_snapshot_format phew_snapshot_format_of(const char *path);

/* "RAMSES", "GADGET HDF5" */
PHEW_API const char *phew_snapshot_format_name(phew_snapshot_format format);

/* ---- writing a catalogue as HDF5 ------------------------------------------------------------
 * One group per table (structure kind: "Clumps", "Haloes", "Groups", "Structures"), one dataset per
 * column (int64, int32 or float64, little-endian) with a "units" attribute; a table may join the
 * columns of several row arrays of the same length (a finder's catalogue and the physics
 * catalogue), a name met twice written once (the first). The membership lists of the physics
 * (phew_physics_result) go into the group `members_table` as BoundParticleIds and
 * UnboundParticleIds; the table's BoundOffset, NumberOfBoundParticlesInclusive, UnboundOffset
 * and NumberOfUnboundParticles columns slice them. The root gets the attributes (the run record
 * as JSON text, the program's version). Rank 0 writes the tables and attributes; then each rank,
 * in turn, writes its own share of the membership lists (hyperslabs): no rank holds them all. */
typedef struct phew_hdf5_part {
  const phew_column *columns;
  int n_columns;
  const void *rows; /* rank 0: n_rows rows of row_size bytes */
  size_t row_size;
} phew_hdf5_part;

typedef struct phew_hdf5_table {
  const char *name;
  int64_t n_rows; /* rank 0 */
  int n_parts;
  phew_hdf5_part parts[2];
} phew_hdf5_table;

typedef struct phew_hdf5_catalogue {
  int n_tables; /* the same tables on every rank */
  const phew_hdf5_table *tables;
  /* the unit of a column (a string, "" when it has none), or NULL: no unit attributes */
  const char *(*unit_of)(const char *column, const void *data);
  const void *unit_data;
  const char *record; /* rank 0: the run record (JSON), or NULL */
  const char *version;
  const char *members_table;                   /* NULL: no membership lists */
  int64_t n_bound, bound_first, n_bound_total; /* this rank's share of the lists */
  const int64_t *bound_ids;
  int64_t n_unbound, unbound_first, n_unbound_total;
  const int64_t *unbound_ids;
  /* rank 0: the structures' most-bound particles (phew_physics_result's), written as the group
   * members_table/MostBound (StructureId, Mass, Offset, Count, ParticleIds); NULL: none */
  const phew_tracer_set *most_bound;
} phew_hdf5_catalogue;

/* Collective: writes the catalogue to path (created, or replaced). On error every rank returns
 * the same status and context->message says why (the file may be left incomplete: write to a
 * temporary name and rename). */
PHEW_API phew_status phew_write_catalogue_hdf5(phew_context *context, const char *path,
                                               const phew_hdf5_catalogue *catalogue);

/* One step of a merger tree as read back from an HDF5 catalogue with membership lists (a run
 * with the physics and --hdf5): this rank's contiguous share of the bound particles, each with
 * the structure it is bound to itself (its innermost), and on rank 0 the structures' tracers
 * (MostBound, with `step` as given). */
typedef struct phew_catalogue_step {
  int64_t n;
  int64_t *id;
  int64_t *label;
  phew_tracer_set tracers;
} phew_catalogue_step;

/* Collective: reads the step; on error every rank returns the same status and
 * context->message says why (not a catalogue, no membership lists or tracers, bad offsets). */
PHEW_API phew_status phew_read_catalogue_step(phew_context *context, const char *path, int64_t step,
                                              phew_catalogue_step *out);
PHEW_API void phew_catalogue_step_free(phew_catalogue_step *step);

#ifdef __cplusplus
}
#endif

#endif
