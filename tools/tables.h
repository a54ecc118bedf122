/* The end of a run: rank 0 writes the catalogue tables (clumps, haloes, dendrogram) and the
 * run record (run_record.h) into their temporary files and puts every output file in place
 * (outputs_commit). */
#ifndef PHEW_TABLES_H
#define PHEW_TABLES_H

#include "cli_options.h"
#include "cli_procs.h"
#include "phew/phew.h"

/* Collective, once every rank has written its part of the per-cell files. snapshot: the
 * metadata of --snapshot (NULL for raw files); n_boxes: PHEW on AMR's boxes (0 otherwise).
 * Returns 0, or -1 on every rank after all_ok has printed why. */
int tables_write_and_commit(const procs *p, const options *o, const phew_clump_result *r,
                            const phew_snapshot_info *snapshot, int64_t n_boxes);
/* The same for a halo finder's group catalogue. */
int groups_write_and_commit(const procs *p, const options *o, const phew_group_result *r,
                            const phew_snapshot_info *snapshot);

#endif
