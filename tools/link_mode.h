/* phew link: merger trees offline (link_mode.c). From the HDF5 catalogues of two or more runs
 * with the physics of structures (--hdf5), given in time order, the structures of each step
 * are linked to the next step's by shared particles and by their most-bound particles, with
 * orphans followed (phew_link_tracked):
 *
 *   phew link --output PREFIX [--max-orphan-steps K] [--hdf5 FILE] [--verbose] CAT0.h5 CAT1.h5 ...
 *
 * Output: PREFIX-tree.csv (Step: the later step, the catalogues counted from 0 in the order
 * given; then the link columns),
 * PREFIX-tree-run.json and with --hdf5 the same table as the group MergerTree; all or nothing,
 * as the finders' outputs. Distributed under mpirun: each rank reads its share of each
 * catalogue's bound particles. */
#ifndef PHEW_LINK_MODE_H
#define PHEW_LINK_MODE_H

#include "cli_procs.h"

/* The whole of `phew link` (argv[0] is "link"); the exit status, the same on every rank. */
int link_mode_main(const procs *p, int argc, char **argv);

#endif
