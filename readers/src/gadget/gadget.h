/* GADGET-family HDF5 snapshots (GADGET-2/3/4, AREPO, SWIFT): one file snap_NNN.hdf5 or
 * several, snap_NNN.0.hdf5 ... snap_NNN.(N-1).hdf5, each with a Header group and one group
 * PartTypeK per particle type (Coordinates, Velocities, ParticleIDs, Masses, ...). */
#ifndef PHEW_READERS_GADGET_H
#define PHEW_READERS_GADGET_H

#include "phew/phew_readers.h"
#include "read_error.h"

#include <stddef.h>
#include <stdint.h>

enum { GADGET_MAX_TYPES = 16 };

typedef struct gadget_snapshot {
  char stem[1024];   /* the files are STEM.hdf5 (one file) or STEM.K.hdf5 */
  char extension[8]; /* ".hdf5" or ".h5" */
  int multi_file;
  int n_files;                       /* NumFilesPerSnapshot */
  int n_types;                       /* entries of NumPart_ThisFile: 6 (GADGET), 7 (SWIFT) */
  int64_t n_total[GADGET_MAX_TYPES]; /* NumPart_Total with its HighWord */
  double mass_table[GADGET_MAX_TYPES];
  double box_size[3];
  double time, redshift, scale_factor; /* scale_factor: SWIFT's Scale-factor, NaN if absent */
  double hubble, omega_matter, omega_lambda, omega_baryon;
  int cosmological, swift;
  char code[32];
  /* the code units in cgs (GADGET's defaults when the file does not say) */
  double unit_length_cm, unit_mass_g, unit_velocity_cm_s;
} gadget_snapshot;

/* 1 if path names an HDF5 snapshot (by its name: .hdf5, .h5, or a folder holding them). */
int gadget_recognises(const char *path);
/* The files from the path, and the header of the first. */
int gadget_open_snapshot(const char *path, gadget_snapshot *s, read_error *e);
/* The name of file k. */
int gadget_file_name(const gadget_snapshot *s, int k, char *out, size_t capacity);
/* NumPart_ThisFile[type] of every file (n_files values), checked against NumPart_Total. */
int gadget_count_particles(const gadget_snapshot *s, int type, int64_t *counts, read_error *e);
/* The metadata of phew_snapshot_info, in code units. */
void gadget_snapshot_info(const gadget_snapshot *s, phew_snapshot_info *out);

/* Particles [first, first + n) of the type over the files (counts from
 * gadget_count_particles) into set. */
int gadget_read_particles(const gadget_snapshot *s, const phew_read_options *options, const int64_t *counts,
                          int64_t first, int64_t n, phew_particle_set *set, read_error *e);

#endif
