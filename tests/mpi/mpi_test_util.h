/* Shared helpers of the distributed tests (test_parallel_clumps.c, test_parallel_amr.c): the
 * labels, context and result of one run, gathering per-rank arrays on rank 0, and comparing a parallel
 * run with a serial one (printing what differs). */
#ifndef PHEW_MPI_TEST_UTIL_H
#define PHEW_MPI_TEST_UTIL_H

#include "phew/phew.h"

#include <mpi.h>
#include <stdint.h>

typedef struct run {
  int64_t n; /* cells with labels */
  int64_t *patch, *clump, *halo;
  phew_context context; /* the run's communicator and threads; its message says why it failed */
  phew_clump_result result;
  phew_status status;
} run;

/* Label arrays for n cells (at least one element each), filled with -7 so unwritten cells show,
 * and r's context set up (phew_context_init: this process alone, all cores). */
void labels_alloc(run *r, int64_t n);
/* phew_find_clumps with r's label arrays and context, collective over comm (NULL: this process
 * alone). */
void run_find(run *r, const phew_input *in, const phew_params *p, MPI_Comm *comm);
void run_free(run *r);

/* Every rank's `count` values gathered on rank 0 in rank order: returns the array there (at
 * least one element; NULL on other ranks), with the total count and, if displs is not NULL,
 * where each rank's values start (to free). */
int64_t *gather_int64(const int64_t *mine, int count, MPI_Comm comm, int *total, int **displs);

/* The labels of r's first n cells (patch, clump, halo), each preceded by ids[i] unless ids is
 * NULL (4 or 3 values per cell), gathered on rank 0 as by gather_int64. */
int64_t *gather_cell_labels(const int64_t *ids, const run *r, int64_t n, MPI_Comm comm, int *total, int **displs);

/* Byte-identical catalogues and dendrograms. */
int same_tables(const phew_clump_result *a, const phew_clump_result *b);
/* Equal statistics of cells, peaks, saddles, noise removal and merging. */
int same_stats(const phew_stats *a, const phew_stats *b);
/* 0 if the tables (and, if with_stats, the statistics) of the serial and parallel results are
 * the same, else 1 after printing what differs under `name`. */
int compare_with_serial(const char *name, const phew_clump_result *serial, const phew_clump_result *parallel,
                        int with_stats);

#endif
