/* The particle mode (--points): PHEW on the symmetrised graph of nearest neighbours, with
 * the SPH density estimated by the core unless given. */
#ifndef PHEW_POINTS_MODE_H
#define PHEW_POINTS_MODE_H

#include "cli_options.h"
#include "cli_procs.h"

#include <stdint.h>

/* Before the outputs are prepared: rank 0 checks the particle files' sizes and sets
 * *n_total from POS (the other ranks learn it in points_mode_run). Failures go to fail. */
void points_mode_check(const procs *p, const options *o, int64_t *n_total);

/* Collective, once the outputs are prepared: every rank reads its share of the particles,
 * the core finds the clumps, every rank writes its share of the four per-particle files and
 * rank 0 the tables. Returns the exit status (the same on every rank). */
int points_mode_run(const procs *p, const options *o, int64_t n_total);

#endif
