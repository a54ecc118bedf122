/* The end of a run: rank 0 writes the catalogue tables (clumps, haloes, dendrogram) and the
 * run record (run_record.h) into their temporary files and puts every output file in place
 * (outputs_commit). */
#ifndef PHEW_TABLES_H
#define PHEW_TABLES_H

#include "cli_options.h"
#include "cli_procs.h"
#include "phew/phew.h"
#include "phew/phew_readers.h"

/* Rank 0 writes one table into the temporary file of output k; 0 or -1 after fail. */
int tables_write_csv(int k, const phew_column *columns, int n_columns, const void *rows, int64_t n_rows,
                     size_t row_size);
/* The same with the physics columns (but StructureId) joined after the table's own, row by row
 * (physics NULL: none); a name the table has already is left out. */
int tables_write_joined(int k, const phew_column *columns, int n_columns, const void *rows, size_t row_size,
                        const phew_physics_result *physics, int64_t n_rows);

/* Collective, once every rank has written its part of the per-cell files. snapshot: the
 * metadata of --snapshot (NULL for raw files); n_boxes: PHEW on AMR's boxes (0 otherwise).
 * Returns 0, or -1 on every rank after all_ok has printed why. */
/* pp and physics: the physics of structures as run and its result (for the record), or NULL. */
int tables_write_and_commit(const procs *p, const options *o, const phew_clump_result *r,
                            const phew_snapshot_info *snapshot, int64_t n_boxes, const phew_physics_params *pp,
                            const phew_physics_result *physics);
/* The same for a halo finder's group catalogue. */
int groups_write_and_commit(const procs *p, const options *o, const phew_group_result *r,
                            const phew_snapshot_info *snapshot, const phew_physics_params *pp,
                            const phew_physics_result *physics);
/* The same for the physics on a given grouping (--groups): the record, then the commit. */
int structures_commit(const procs *p, const options *o, const phew_snapshot_info *snapshot,
                      const phew_physics_params *pp, const phew_physics_result *physics);

#endif
