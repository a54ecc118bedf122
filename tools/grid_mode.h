/* The grid mode (--input): a raw density cube, split over the ranks by phew_grid_decompose. */
#ifndef PHEW_GRID_MODE_H
#define PHEW_GRID_MODE_H

#include "cli_options.h"
#include "cli_procs.h"

/* Collective, before the outputs are prepared: the sizes --dims implies fit in int64, and
 * the input is a regular file of that size (checked by rank 0). Failures go to fail. */
void grid_mode_check(const procs *p, const options *o);

/* Collective, once the outputs are prepared: read, find, write the six files. Returns the
 * exit status (the same on every rank). */
int grid_mode_run(const procs *p, const options *o);

#endif
