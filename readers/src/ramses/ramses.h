/* RAMSES outputs: the folder output_NNNNN/ with info_NNNNN.txt and one file per CPU of each
 * kind (amr_, hydro_, part_NNNNN.outCCCCC), Fortran unformatted records. */
#ifndef PHEW_READERS_RAMSES_H
#define PHEW_READERS_RAMSES_H

#include "phew/phew_readers.h"
#include "read_error.h"

#include <stddef.h>

typedef struct ramses_info {
  char folder[1000];
  char info_path[1024];
  int output; /* NNNNN */
  int ncpu, ndim, levelmin, levelmax;
  double boxlen, time, aexp, H0, omega_m, omega_l, omega_k, omega_b;
  double unit_l, unit_d, unit_t; /* cgs; proper lengths at this aexp */
} ramses_info;

/* From an output folder or its info file: the folder, the output number, the info file. */
int ramses_locate(const char *path, ramses_info *info, read_error *e);
/* Reads the info file's values (after ramses_locate). */
int ramses_read_info(ramses_info *info, read_error *e);
/* FOLDER/KIND_NNNNN.outCCCCC for CPU file cpu (from 1); -1 if it does not fit. */
int ramses_file_name(const ramses_info *info, const char *kind, int cpu, char *out, size_t capacity);
/* 1 if path looks like a RAMSES output (a folder with an info_*.txt, or such a file). */
int ramses_recognises(const char *path);
/* The metadata of phew_snapshot_info from the info file, in code units. */
void ramses_snapshot_info(const ramses_info *info, phew_snapshot_info *out);

/* This rank's share of the particles of one family (ramses_particles.c). */
int ramses_read_particles(const ramses_info *info, const phew_read_options *options, int rank, int size,
                          phew_particle_set *set, read_error *e);

#endif
