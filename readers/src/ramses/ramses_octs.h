/* One CPU file's own octs (RAMSES's grids of 2x2x2 cells), level by level from levelmin, with
 * the chosen hydro variables on their cells: what the AMR reader builds its boxes from. */
#ifndef PHEW_READERS_RAMSES_OCTS_H
#define PHEW_READERS_RAMSES_OCTS_H

#include "ramses.h"

#include <stdint.h>

typedef struct oct_level {
  int64_t n;      /* octs of this CPU on the level */
  int64_t *ijk;   /* 3 per oct: its index on the level's grid of octs (cells 2i, 2i+1) */
  double *values; /* n_variables x 8 x n: variable v, cell c (c = ix + 2 iy + 4 iz) of oct k
                     at values[(v * 8 + c) * n + k] */
} oct_level;

typedef struct cpu_octs {
  int n_levels; /* levelmin .. levelmax */
  oct_level *levels;
} cpu_octs;

/* The hydro variables' names: hydro_file_descriptor.txt, or RAMSES's classic order (density,
 * velocity_x/y/z, pressure, then scalar_01, ...) for nvar variables; n_names 0 without hydro
 * files. */
int ramses_hydro_names(const ramses_info *info, char (*names)[64], int capacity, int *n_names, read_error *e);

/* Reads CPU file `cpu` (from 1): its own octs from amr_NNNNN.outCCCCC and, for the
 * variables listed (indices into the hydro file's variables), their values from
 * hydro_NNNNN.outCCCCC. */
int ramses_read_octs(const ramses_info *info, int cpu, const int *variables, int n_variables, cpu_octs *octs,
                     read_error *e);
void cpu_octs_free(cpu_octs *octs);

#endif
