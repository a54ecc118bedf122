/* A rank's share of a RAMSES output's AMR: boxes with their cells' hydro variables. */
#ifndef PHEW_READERS_RAMSES_AMR_H
#define PHEW_READERS_RAMSES_AMR_H

#include "ramses.h"

#include <stdint.h>

/* One box, as the ranks tell each other about it. */
typedef struct amr_piece {
  int32_t level; /* 0 = levelmin */
  int32_t cpu;   /* the CPU file it comes from */
  int32_t rank;  /* the rank that read it */
  int32_t pad;
  int64_t sequence;          /* its place among the boxes of (cpu, level) */
  int64_t sequence_in_share; /* its place in the reading rank's list (set before sorting) */
  int64_t lo[3], hi[3];      /* cells of the level, inclusive, from the domain's corner */
} amr_piece;

typedef struct amr_share {
  int64_t n, capacity;
  amr_piece *pieces;
  double **values; /* per piece: n_variables x cells, x fastest (NULL without variables) */
} amr_share;

int ramses_read_amr(const ramses_info *info, const int *variables, int n_variables, int rank, int size, amr_share *s,
                    read_error *e);
void amr_share_free(amr_share *s);

#endif
