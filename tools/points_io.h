/* The particle files: their sizes, and each rank's share of them. Rank r of R reads and
 * writes the contiguous particles [first, first + n) of every file (particle_files_share), with
 * pread/pwrite at their offsets, like the grid mode's block_io.c: no MPI-IO, so that a
 * failure reports its errno; every share is its own byte range. Failures go to fail (the
 * caller agrees them with all_ok). Files are raw little-endian, like this machine. */
#ifndef PHEW_POINTS_IO_H
#define PHEW_POINTS_IO_H

#include "cli_options.h"
#include "cli_procs.h"
#include "phew/phew_readers.h"

#include <stdint.h>

/* The particle files of a run, POS first; path NULL when not given. */
enum { POINTS_POSITION, POINTS_MASS, POINTS_VELOCITY, POINTS_ID, POINTS_DENSITY, POINTS_GROUPS, POINTS_FILES };

typedef struct particle_files {
  const char *path[POINTS_FILES];
  int64_t record[POINTS_FILES]; /* bytes per particle */
} particle_files;

void particle_files_init(particle_files *f, const options *o);

/* Rank 0, before anything is read: every given file is a regular file, POS holds a whole
 * number of particles (*n_total of them) and every other file exactly as many. */
void particle_files_count(const particle_files *f, int64_t *n_total);

/* Rank 0: file k holds exactly n_total particles (of the snapshot `source`). */
void particle_files_check(const particle_files *f, int k, int64_t n_total, const char *source);

/* This rank's share of n_total particles: [*first, *first + *n), balanced by count. */
void particle_files_share(const procs *p, int64_t n_total, int64_t *first, int64_t *n);

/* Reads particles [first, first + n) of file k into data (n * record bytes). */
void particle_files_read(const particle_files *f, int k, int64_t first, int64_t n, void *data);

/* Writes n values of `size` bytes at particle `first` of the file at path (which exists). */
void particle_files_write(const char *path, int64_t size, int64_t first, int64_t n, const void *data);

/* A snapshot's particles as the core's points: its arrays, box and periodicity (periodic:
 * periodic along every axis anyway, --periodic). */
void snapshot_points(const phew_particle_set *set, int periodic, phew_points *pts);

#endif
