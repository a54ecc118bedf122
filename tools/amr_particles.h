/* --amr-particles (amr_particles.c): after PHEW on a RAMSES output's AMR cells, the snapshot's
 * particles (--family, DM by default) take the clump of the leaf cell that holds them
 * (phew_amr_point_labels, RAMSES's own rule), then the physics of structures runs on them with
 * the clumps' hierarchy: PREFIX-bound.raw (per particle, in the snapshot's order of that kind)
 * and the physics columns joined to PREFIX-clumps.csv. */
#ifndef PHEW_AMR_PARTICLES_H
#define PHEW_AMR_PARTICLES_H

#include "physics_mode.h"

/* Collective: reads the particles, labels them from the cells' ClumpId (this rank's blocks of
 * amr) and runs the physics on the clumps of `clumps` (complete on rank 0); writes the bound
 * labels. 0, or -1 on every rank after all_ok. */
int amr_particles_run(const procs *p, const options *o, const phew_amr *amr, const int64_t *cell_clumps,
                      const phew_clump_result *clumps, physics_outcome *out);

#endif
