/* phew: the command-line clump finder, on a raw density cube or on particles.
 *
 *   phew --input FILE --dims NX NY NZ --type float32|float64 --threshold T
 *        [--relevance R] [--saddle S] [--mass-threshold M] [--periodic]
 *        [--spacing DX DY DZ] [--origin OX OY OZ] --output PREFIX [--verbose]
 *
 *   phew link --output PREFIX CATALOGUE0.hdf5 CATALOGUE1.hdf5 ...   (link_mode.c: merger trees)
 *
 *   phew --points POS --type float32|float64 --box LX LY LZ [--periodic]
 *        [--masses FILE] [--velocities FILE] [--ids FILE] [--density FILE]
 *        [--neighbours K] [--density-neighbours N] --threshold T [--relevance R]
 *        [--saddle S] [--mass-threshold M] [--threads N] --output PREFIX [--verbose]
 *
 * A grid (grid_mode.c): a raw little-endian cube, x fastest. Output: PREFIX-patch.raw,
 * PREFIX-clump.raw, PREFIX-halo.raw (int64 little-endian, same layout, -1 = none),
 * PREFIX-clumps.csv, PREFIX-haloes.csv, PREFIX-dendrogram.csv.
 *
 * Particles (points_mode.c): POS holds raw little-endian x, y, z per particle, inside the box
 * [0,LX) x [0,LY) x [0,LZ) with --periodic (periodic along all axes), the closed box
 * [0,LX] x [0,LY] x [0,LZ] without; velocities likewise,
 * masses and a given density one value per particle, all of --type; ids int64. The particle
 * count comes from the size of POS; every other file must hold exactly as many. Output: the
 * same six files, one value per particle in input order (PeakPatchId: the id of the peak
 * particle), plus PREFIX-density.raw (float64, in units of the mean density when estimated).
 *
 * Before anything is computed the tool checks that it can write the outputs and creates them
 * under temporary names; at the end they replace a previous run's files all or nothing
 * (outputs.c). A failed or killed run leaves the previous files as they were and nothing
 * half-written behind.
 *
 * Under mpirun (when built with MPI) the same command runs distributed: each rank reads its
 * block of the cube or its contiguous share of the particles, the core does the rest, each
 * rank writes its cells or particles of the per-cell files and rank 0 writes the tables.
 * Reads and writes of a rank's part use POSIX pread/pwrite at its offsets (block_io.c,
 * points_io.c), not MPI-IO, so that failures can say their errno (file_io.h). Every failure
 * is agreed by all ranks (all_ok), so all of them exit with status 1, rank 0 prints the one
 * message, and nothing is left behind. The outputs are the same bytes on any number of ranks. */
#include "amr_mode.h"
#include "cli_errors.h"
#include "cli_options.h"
#include "cli_procs.h"
#include "grid_mode.h"
#include "link_mode.h"
#include "outputs.h"
#include "points_mode.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* The whole run on every rank; returns the exit status (the same on every rank). */
static int run(const procs *p, int argc, char **argv)
{
  options o;
  const int parsed = parse_options(argc, argv, &o);
  if (parsed == 2) {
    if (p->rank == 0)
      usage(stdout);
    return 0;
  }
  if (!all_ok(p))
    return 1;
  int64_t n_particles = 0;
  if (o.points)
    points_mode_check(p, &o, &n_particles);
  else if (o.amr)
    amr_mode_check(p, &o);
  else
    grid_mode_check(p, &o);
  if (!all_ok(p))
    return 1;

  /* the outputs, before anything is computed: the names on every rank (for the signal
   * handlers and the per-cell writes), the checks and the temporary files on rank 0 */
  char message[512];
  const output_set set = o.finder == FINDER_GIVEN ? OUTPUTS_GIVEN
                         : o.finder == FINDER_FOF ? OUTPUTS_GROUPS
                         : o.finder == FINDER_HOP ? OUTPUTS_GROUPS_DENSITY
                         : o.points               ? OUTPUTS_POINTS
                         : o.amr                  ? OUTPUTS_AMR
                                                  : OUTPUTS_GRID;
  if (outputs_init(o.output, set, o.physics, o.hdf5, message, sizeof message) != 0)
    fail("%s", message);
  else if (p->rank == 0 && outputs_prepare(message, sizeof message) != 0)
    fail("%s", message);
  if (!all_ok(p)) {
    outputs_done();
    return 1;
  }
  const int code = o.points ? points_mode_run(p, &o, n_particles) : o.amr ? amr_mode_run(p, &o) : grid_mode_run(p, &o);
  if (code != 0 && p->rank == 0)
    outputs_discard();
  outputs_done();
  return code;
}

int main(int argc, char **argv)
{
  procs p;
  procs_init(&p, &argc, &argv);
  const int code = argc >= 2 && !strcmp(argv[1], "link") ? link_mode_main(&p, argc - 1, argv + 1) : run(&p, argc, argv);
  procs_finalize();
  return code;
}
