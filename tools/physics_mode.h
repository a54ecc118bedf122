/* The physics of structures in the tool (physics_mode.c): after a finder on particles, on its
 * grouping, or on a given one (--groups, --parents): the core's unbinding and properties, then
 * the bound labels (int64 per particle: the innermost structure it is bound to, -1 none) and the
 * physics columns (phew_structure_columns): PREFIX-bound.raw and the columns joined to
 * PREFIX-clumps.csv after PHEW, -group-bound.raw and the columns joined to -groups.csv after a
 * halo finder, -given-bound.raw and -given-physics.csv on a given grouping. */
#ifndef PHEW_PHYSICS_MODE_H
#define PHEW_PHYSICS_MODE_H

#include "cli_options.h"
#include "cli_procs.h"
#include "phew/phew.h"
#include "phew/phew_readers.h"

typedef struct physics_outcome {
  phew_physics_params params; /* as run: the cosmology resolved */
  phew_physics_result result;
  int64_t *bound; /* per particle of this rank's share */
} physics_outcome;

/* Collective: the physics on the grouping `labels` (per particle of this rank's share, as
 * passed in `in`) of n_structures structures with these parents (-1 at the top; has_parents 0
 * on every rank: all at the top); n_structures and parents are read on rank 0 only. The cosmology is --cosmology's,
 * else a snapshot's in astronomers' units, else none. 0, or -1 on every rank after all_ok. */
typedef struct grouping {
  const int64_t *labels;  /* per particle of this rank's share */
  int64_t n_structures;   /* rank 0 */
  int has_parents;        /* every rank: parents are given (else all top-level) */
  const int64_t *parents; /* rank 0: per structure */
  int has_centres;        /* every rank: centres are given (else NULL: centres of mass) */
  const double *centres;  /* rank 0: 3 per structure (the spherical method's) */
} grouping;

int physics_mode_run(const procs *p, const options *o, const phew_input *in, const phew_snapshot_info *snapshot,
                     const grouping *g, physics_outcome *out);

/* Collective: --parents (rank 0 reads the CSV "Id,ParentId" or "Id,ParentId,CenterX,CenterY,
 * CenterZ") and the number of structures, 1 + the largest id of the file or label of any rank.
 * Rank 0 gets *parents (free it; n_structures entries, -1 for ids not in the file) and, when
 * the file has them on every line, *centres (3 per structure, NaN for ids not in the file);
 * *has_centres on every rank. 0, or -1 on every rank after all_ok. */
int physics_read_parents(const procs *p, const options *o, const int64_t *labels, int64_t n, int64_t *n_structures,
                         int64_t **parents, double **centres, int *has_centres);

/* Collective: every rank writes its share of the bound labels, and with --groups rank 0 the
 * physics table (a finder's run joins the columns to its own table: tables.c). */
int physics_mode_write(const procs *p, const options *o, int64_t first, int64_t n, const physics_outcome *out);

void physics_outcome_free(physics_outcome *out);

#endif
