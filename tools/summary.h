/* The --verbose summary of a run, printed by rank 0: counts, the stages' times, rounds and
 * bytes; for particles first the stages before PHEW (domain, trees, neighbours, density,
 * graph) and the padding. Lines with global counts start with a word; per-rank figures and
 * times are indented or on the "ranks" line (the parallel tests compare the others). */
#ifndef PHEW_SUMMARY_H
#define PHEW_SUMMARY_H

#include "phew/phew.h"
#include "phew/phew_readers.h"

/* params: as given, to say which thresholds were automatic. */
void print_summary(const phew_clump_result *r, const phew_params *params, int points);
/* The same for a halo finder: particles, groups, the largest ones, times, padding. */
void print_group_summary(const phew_group_result *r, int fof);
/* --snapshot: what was read (the code, the particles, the box, a, units). */
void print_snapshot(const phew_particle_set *set);

#endif
