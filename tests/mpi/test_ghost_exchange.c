/* Under mpiexec with any number of ranks: split grids with phew_grid_block, fill every
 * active cell with its global id, exchange ghosts, and check that every ghost cell now holds
 * the global id of the cell it mirrors (periodic wrap included), for 8-byte and 4-byte
 * values; blocks that do not tile the grid are refused. Exit status 0 on every rank when all
 * checks hold. */
#include "phew/phew.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int64_t wrap(int64_t c, int64_t n) { return c < 0 ? c + n : (c >= n ? c - n : c); }

static int check(const int64_t n[3], int periodic, MPI_Comm comm)
{
  int size, rank, failures = 0;
  MPI_Comm_size(comm, &size);
  MPI_Comm_rank(comm, &rank);
  const int per[3] = {periodic, periodic, periodic};
  phew_grid g;
  if (phew_grid_block(NULL, &g, n, per, size, rank) != PHEW_OK)
    return 1;
  const int64_t sx = g.stored_dims[0], sy = g.stored_dims[1], sz = g.stored_dims[2];
  int64_t *v64 = malloc((size_t)(sx * sy * sz + 1) * sizeof *v64);
  float *v32 = malloc((size_t)(sx * sy * sz + 1) * sizeof *v32);
  for (int64_t z = 0; z < sz; ++z)
    for (int64_t y = 0; y < sy; ++y)
      for (int64_t x = 0; x < sx; ++x) {
        const int64_t gx = g.stored_offset[0] + x, gy = g.stored_offset[1] + y, gz = g.stored_offset[2] + z;
        const int active = gx >= g.active_offset[0] && gx < g.active_offset[0] + g.active_dims[0] &&
                           gy >= g.active_offset[1] && gy < g.active_offset[1] + g.active_dims[1] &&
                           gz >= g.active_offset[2] && gz < g.active_offset[2] + g.active_dims[2];
        const int64_t id = gx + n[0] * (gy + n[1] * gz);
        v64[x + sx * (y + sy * z)] = active ? id : -1;
        v32[x + sx * (y + sy * z)] = active ? (float)id : -1.0f;
      }
  phew_context context;
  phew_context_init(&context);
  context.mpi_comm = &comm;
  if (phew_exchange_ghosts(&context, &g, v64, sizeof *v64) != PHEW_OK ||
      phew_exchange_ghosts(&context, &g, v32, sizeof *v32) != PHEW_OK) {
    fprintf(stderr, "rank %d: exchange failed: %s\n", rank, context.message);
    return 1;
  }
  for (int64_t z = 0; z < sz; ++z)
    for (int64_t y = 0; y < sy; ++y)
      for (int64_t x = 0; x < sx; ++x) {
        const int64_t id = wrap(g.stored_offset[0] + x, n[0]) +
                           n[0] * (wrap(g.stored_offset[1] + y, n[1]) + n[1] * wrap(g.stored_offset[2] + z, n[2]));
        const int64_t i = x + sx * (y + sy * z);
        if (v64[i] != id || v32[i] != (float)id) {
          if (failures++ < 5)
            fprintf(stderr, "rank %d: %lldx%lldx%lld periodic %d: cell %lld holds %lld, expected %lld\n", rank,
                    (long long)n[0], (long long)n[1], (long long)n[2], periodic, (long long)i, (long long)v64[i],
                    (long long)id);
        }
      }
  free(v64);
  free(v32);
  return failures > 0;
}

/* Blocks that do not tile the grid (on one rank a cell owned by nobody; on several, every
 * rank claiming rank 0's block) are refused on every rank, before any value is written. */
static int check_refuses_bad_tiling(MPI_Comm comm)
{
  int size, rank;
  MPI_Comm_size(comm, &size);
  MPI_Comm_rank(comm, &rank);
  const int64_t n[3] = {9, 7, 5};
  const int per[3] = {0, 0, 0};
  phew_grid g;
  if (phew_grid_block(NULL, &g, n, per, size, 0) != PHEW_OK)
    return 1;
  if (size == 1)
    g.active_dims[0] -= 1; /* the last plane of x: stored, active nowhere */
  const int64_t stored = g.stored_dims[0] * g.stored_dims[1] * g.stored_dims[2];
  double *values = malloc((size_t)stored * sizeof *values);
  for (int64_t i = 0; i < stored; ++i)
    values[i] = (double)i + 0.5;
  phew_context context;
  phew_context_init(&context);
  context.mpi_comm = &comm;
  const phew_status status = phew_exchange_ghosts(&context, &g, values, sizeof *values);
  int failures = 0;
  if (status != PHEW_ERROR_ARGUMENT || !strstr(context.message, "do not tile")) {
    fprintf(stderr, "rank %d: bad tiling: status %d, message '%s'\n", rank, (int)status, context.message);
    ++failures;
  }
  for (int64_t i = 0; i < stored; ++i)
    failures += values[i] != (double)i + 0.5; /* nothing written */
  free(values);
  return failures > 0;
}

/* phew_grid_decompose over a communicator gives each rank the block phew_grid_block gives
 * for its rank and the communicator's size. */
static int check_decompose(const int64_t n[3], int periodic, MPI_Comm comm)
{
  int size, rank;
  MPI_Comm_size(comm, &size);
  MPI_Comm_rank(comm, &rank);
  const int per[3] = {periodic, periodic, periodic};
  phew_context context;
  phew_context_init(&context);
  context.mpi_comm = &comm;
  phew_grid mine, expected;
  if (phew_grid_decompose(&context, &mine, n, per) != PHEW_OK ||
      phew_grid_block(NULL, &expected, n, per, size, rank) != PHEW_OK) {
    fprintf(stderr, "rank %d: decomposing %lld x %lld x %lld failed: %s\n", rank, (long long)n[0], (long long)n[1],
            (long long)n[2], context.message);
    return 1;
  }
  if (memcmp(&mine, &expected, sizeof mine) != 0) {
    fprintf(stderr, "rank %d: phew_grid_decompose differs from phew_grid_block(%d, %d)\n", rank, size, rank);
    return 1;
  }
  return 0;
}

int main(int argc, char **argv)
{
  MPI_Init(&argc, &argv);
  MPI_Comm comm = MPI_COMM_WORLD;
  const int64_t grids[][3] = {{9, 7, 5}, {16, 16, 16}, {2, 2, 2}, {12, 1, 1}, {3, 4, 5}};
  int failed = 0;
  for (size_t k = 0; k < sizeof grids / sizeof grids[0]; ++k)
    for (int periodic = 0; periodic <= 1; ++periodic)
      failed |= check(grids[k], periodic, comm) | check_decompose(grids[k], periodic, comm);
  failed |= check_refuses_bad_tiling(comm);
  MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, comm);
  int rank;
  MPI_Comm_rank(comm, &rank);
  if (rank == 0)
    printf(failed ? "ghost exchange: FAILED\n" : "ghost exchange: every ghost holds its owner's value\n");
  MPI_Finalize();
  return failed;
}
