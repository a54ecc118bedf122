/* PREFIX-run.json (PHEW) or PREFIX-groups-run.json (a halo finder): what a run's catalogues
 * came from, written beside them by rank 0. The
 * input (the files, or the snapshot with its box, periodicity, a, cosmology and units), the
 * finder's parameters as given and as used, the units of the catalogues' columns and the
 * counts found. Nothing that depends on the ranks, threads or output prefix, so that runs on
 * any number of ranks write the same bytes. */
#ifndef PHEW_RUN_RECORD_H
#define PHEW_RUN_RECORD_H

#include "cli_options.h"
#include "phew/phew.h"
#include "phew/phew_readers.h"

typedef struct run_facts {
  const phew_snapshot_info *snapshot;        /* --snapshot (particles or AMR); NULL for raw files */
  const phew_clump_result *clumps;           /* PHEW's result, or NULL */
  const phew_group_result *groups;           /* a halo finder's result, or NULL */
  int64_t n_boxes;                           /* PHEW on AMR: the boxes of the hierarchy */
  const phew_physics_params *physics_params; /* the physics of structures as run, or NULL */
  const phew_physics_result *physics;
} run_facts;

/* Writes the record to path. Returns 0 or the errno of the failure. */
int run_record_write(const char *path, const options *o, const run_facts *facts);

#endif
