/* One level's octs covered by boxes: what a vtkOverlappingAMR and phew_amr take instead of
 * RAMSES's octs. */
#ifndef PHEW_READERS_RAMSES_BOXES_H
#define PHEW_READERS_RAMSES_BOXES_H

#include "ramses_octs.h"

typedef struct level_box {
  int64_t lo[3], hi[3]; /* cells of the level, inclusive */
  double *values;       /* n_variables x cells (x fastest); NULL without variables */
} level_box;

/* Covers the level's octs with boxes, greedily and the same way for the same octs: runs of
 * octs along x, runs of equal rows along y, runs of equal slabs along z. Each box holds
 * exactly the octs inside it, and its cells' values. *boxes is allocated (free each box's
 * values, then the array). */
int octs_to_boxes(const oct_level *level, int n_variables, level_box **boxes, int64_t *n_boxes, read_error *e);

#endif
