/* The output files of a run (seven for a grid, eight for PHEW on particles, three for FoF and
 * four for HOP, each with the run's record): checked and created
 * (empty, under temporary names) before anything is computed, written during the run, then
 * put in place all or nothing. A failure at any point, or SIGINT / SIGTERM / SIGHUP, leaves
 * the files of a previous run exactly as they were and no temporary file behind. A grid run
 * does not touch a PREFIX-density.raw that a particle run left with the same prefix.
 *
 *   PREFIX-patch.raw  ...                  the files users get
 *   PREFIX-patch.raw.partial  ...          written during the run
 *   PREFIX-patch.raw.previous  ...         a previous run's file, only while the new ones are
 *                                          renamed into place (removed or restored after)
 *
 * One set per process (the signal handler needs it in static storage). Under mpirun every
 * rank knows the names (the per-cell files are written by every rank) and removes the temporary
 * files when signalled; rank 0 alone creates them and renames them into place. */
#ifndef PHEW_OUTPUTS_H
#define PHEW_OUTPUTS_H

#include <stddef.h>

/* Every output of every mode. OUTPUT_RUN (PREFIX-run.json, run_record.h) is written by every
 * PHEW run, OUTPUT_GROUPS_RUN (PREFIX-groups-run.json) by every halo finder's, so that a PHEW
 * run and a halo finder's with the same prefix each keep the record of their own files;
 * OUTPUT_DENSITY (PREFIX-density.raw) for particles only (not by FoF); OUTPUT_GROUP and
 * OUTPUT_GROUPS_CSV by the halo finders (--finder fof, hop) only; OUTPUT_BOXES_CSV (the AMR
 * boxes the per-cell files list) by PHEW on AMR only. Files are created, renamed and removed
 * in this order. */
/* clang-format off */
enum { OUTPUT_PATCH, OUTPUT_CLUMP, OUTPUT_HALO, OUTPUT_CLUMPS_CSV, OUTPUT_HALOES_CSV, OUTPUT_DENDROGRAM_CSV,
       OUTPUT_DENSITY, OUTPUT_GROUP, OUTPUT_GROUPS_CSV, OUTPUT_BOXES_CSV, OUTPUT_RUN,
       OUTPUT_GROUPS_RUN, OUTPUT_BOUND, OUTPUT_GROUP_BOUND, OUTPUT_GIVEN_BOUND, OUTPUT_GIVEN_PHYSICS_CSV, OUTPUT_GIVEN_RUN, OUTPUT_TREE_CSV, OUTPUT_TREE_RUN, OUTPUT_HDF5, OUTPUT_COUNT };
/* clang-format on */

/* Which outputs a run writes, besides run.json: PHEW on a grid (six), PHEW on particles
 * (seven), FoF (group.raw, groups.csv), HOP (those and density.raw), PHEW on AMR (the grid's
 * six and boxes.csv). */
typedef enum output_set {
  OUTPUTS_GRID,
  OUTPUTS_POINTS,
  OUTPUTS_GROUPS,
  OUTPUTS_GROUPS_DENSITY,
  OUTPUTS_AMR,
  OUTPUTS_GIVEN, /* the physics on a given grouping (--groups): PREFIX-given-bound.raw,
                   -given-physics.csv and -given-run.json */
  OUTPUTS_TREE   /* phew link: PREFIX-tree.csv and -tree-run.json */
} output_set;

/* Every rank: the names of the set's outputs from the prefix (with physics: also the bound
 * labels of the set's kind: PREFIX-bound.raw for PHEW, -group-bound.raw for a halo finder, whose
 * tables gain the physics columns), and the HDF5 catalogue at the path
 * hdf5 (--hdf5; NULL: none); from then on SIGINT, SIGTERM and SIGHUP remove
 * the temporary files before the process dies of the signal. Returns 0, or -1 with message
 * when the prefix is too long for a path. */
int outputs_init(const char *prefix, output_set set, int physics, const char *hdf5, char *message, size_t message_size);

/* The temporary file that output k is written to. */
const char *outputs_temporary(int k);

/* Rank 0, before any computation: checks that the output directory exists and is writable,
 * that no output name is a directory or a file that cannot be replaced, and creates the
 * temporary files, empty. Returns 0, or -1 with message (and no temporary file left). */
int outputs_prepare(char *message, size_t message_size);

/* Rank 0, once every temporary file is complete: renames them to the final names, all or
 * nothing. Returns 0, or -1 with message after putting the previous files back and removing
 * the temporary ones. A signal that arrives meanwhile is acted on when this is done. */
int outputs_commit(char *message, size_t message_size);

/* Rank 0 after a failure: removes the temporary files. */
void outputs_discard(void);

/* Every rank at the end: signals no longer touch the files. */
void outputs_done(void);

#endif
