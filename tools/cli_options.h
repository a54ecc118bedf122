/* The tool's command line: a grid (--input and --dims), particles (--points and --box) or the
 * particles of a simulation snapshot (--snapshot), the PHEW parameters they share, and the
 * output prefix. */
#ifndef PHEW_CLI_OPTIONS_H
#define PHEW_CLI_OPTIONS_H

#include "phew/phew.h"
#include "phew/phew_readers.h"

#include <stdio.h>

/* What runs on the particles: PHEW (the default), a halo finder, or none: the physics of
 * structures on a given grouping (--groups). */
typedef enum finder { FINDER_PHEW, FINDER_FOF, FINDER_HOP, FINDER_GIVEN } finder;

typedef struct options {
  int points;          /* 1: the particle mode (--points, or --snapshot without --amr-variable) */
  int amr;             /* 1: PHEW on a RAMSES output's AMR cells (--snapshot --amr-variable) */
  finder finder;       /* particles: --finder */
  phew_fof_params fof; /* --finder fof: --linking-length / --linking-absolute, --min-members */
  phew_hop_params hop; /* --finder hop: --outer, --saddle-factor, --peak-factor, --hop-neighbours,
                          --merge-neighbours, --min-members */
  const char *output;  /* the prefix */
  phew_scalar_type type;
  int periodic, verbose;
  phew_params params;
  /* grid */
  const char *input;
  int64_t dims[3];
  double spacing[3], origin[3];
  int labels_int32; /* --labels int32: the label files of a grid in 4-byte integers */
  /* particles: the files (NULL when not given), the box, the neighbours, the threads */
  const char *positions, *masses, *velocities, *ids, *density;
  /* particles from a simulation snapshot (--snapshot; NULL when not given) and how to read it:
   * --format, --particle-type, --family, --units */
  const char *snapshot;
  phew_read_options read;
  const char *amr_variable; /* --amr-variable: the hydro variable PHEW runs on (NULL: particles) */
  int amr_particles;        /* --amr-particles: the particles take their AMR cell's clump, then the
                               physics of structures runs on them (amr_particles.c) */
  double box[3];
  int box_from_bounds; /* --box auto: the bounds of the positions over every rank */
  int n_neighbours, n_density_neighbours, n_threads;
  /* the physics of structures (physics_mode.c): on for particles with velocities (of a
   * snapshot: in astronomers' units, or with --gravitational-constant) unless --no-physics */
  int physics;
  phew_physics_params physics_params; /* --no-unbind, --potential, --softening, --opening-angle,
                                         --direct-max, --unbind-tolerance, --unbind-iterations,
                                         --gravitational-constant, --cosmology, --scale-factor */
  int cosmology_given, scale_factor_given, gravitational_constant_given;
  const char *groups, *parents; /* --groups FILE (int64 per particle), --parents FILE (CSV) */
  const char *hdf5;             /* --hdf5 FILE: the catalogue as HDF5 too (NULL: not) */
} options;

void usage(FILE *out);

/* Returns 0 on success, 1 after a failure (fail), 2 for --help. The same on every rank. */
int parse_options(int argc, char **argv, options *o);

#endif
