/* PHEW on the AMR leaf cells of a RAMSES output (--snapshot PATH --amr-variable NAME): the
 * setting in which RAMSES runs its clump finder on gas. */
#ifndef PHEW_AMR_MODE_H
#define PHEW_AMR_MODE_H

#include "cli_options.h"
#include "cli_procs.h"

/* Before the outputs are prepared: the output's metadata is readable (failures go to fail). */
void amr_mode_check(const procs *p, const options *o);

/* Collective, once the outputs are prepared: every rank reads the boxes of its CPU files, the
 * core finds the clumps on the leaf cells, every rank writes its boxes' cells into the
 * per-cell files (at the offsets PREFIX-boxes.csv lists) and rank 0 the tables. Returns the
 * exit status (the same on every rank). */
int amr_mode_run(const procs *p, const options *o);

#endif
