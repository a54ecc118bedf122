/* A program outside phew's tree, built against the installed package (tests/install): the
 * density of two Gaussian blobs on a 16^3 grid (not periodic) must give exactly 2 clumps, with
 * their peaks at the blobs' centre cells, on one process (phew_grid_init_whole) and on a grid
 * split over the ranks under mpirun (phew_grid_decompose, phew_exchange_ghosts; the catalogue
 * on rank 0). Prints the clumps; exit status 0 when every check holds on every rank.
 *   consumer [DENSITY.raw]   (or: mpirun -np 2 consumer)
 * DENSITY.raw (one process only): the field written as float64, x fastest, for the installed
 * command-line tool. */
#include <phew/phew.h>

#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define N 16

/* the blobs: centre cell, amplitude, width^2; the first is the denser, so ClumpId 0 */
static const int64_t centre[2][3] = {{4, 5, 5}, {11, 10, 9}};
static const double amplitude[2] = {50.0, 30.0};
static const double width2[2] = {4.0, 3.0};

static double density_at(int64_t x, int64_t y, int64_t z)
{
  double rho = 0.2;
  for (int b = 0; b < 2; ++b) {
    double dx = (double)(x - centre[b][0]), dy = (double)(y - centre[b][1]), dz = (double)(z - centre[b][2]);
    rho += amplitude[b] * exp(-(dx * dx + dy * dy + dz * dz) / width2[b]);
  }
  return rho;
}

static int failures = 0;
static int rank = 0;

static void check(int ok, const char *what)
{
  if (!ok) {
    fprintf(stderr, "rank %d: FAILED: %s\n", rank, what);
    ++failures;
  }
}

/* index of global cell (x, y, z) in the stored box of grid, or -1 if not stored here */
static int64_t stored_index(const phew_grid *g, int64_t x, int64_t y, int64_t z)
{
  int64_t c[3] = {x, y, z};
  for (int d = 0; d < 3; ++d)
    if (c[d] < g->stored_offset[d] || c[d] >= g->stored_offset[d] + g->stored_dims[d])
      return -1;
  return (x - g->stored_offset[0]) +
         g->stored_dims[0] * ((y - g->stored_offset[1]) + g->stored_dims[1] * (z - g->stored_offset[2]));
}

static int is_active(const phew_grid *g, int64_t x, int64_t y, int64_t z)
{
  int64_t c[3] = {x, y, z};
  for (int d = 0; d < 3; ++d)
    if (c[d] < g->active_offset[d] || c[d] >= g->active_offset[d] + g->active_dims[d])
      return 0;
  return 1;
}

int main(int argc, char **argv)
{
  MPI_Init(&argc, &argv);
  MPI_Comm comm = MPI_COMM_WORLD;
  int size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  check(phew_has_mpi() == 1, "the installed libphew was built with MPI");

  phew_context ctx;
  phew_context_init(&ctx);
  ctx.mpi_comm = &comm;

  phew_input in = {0};
  const int64_t dims[3] = {N, N, N};
  const int periodic[3] = {0, 0, 0};
  if (size == 1) {
    phew_grid_init_whole(&in.grid, N, N, N);
  } else if (phew_grid_decompose(&ctx, &in.grid, dims, periodic) != PHEW_OK) {
    fprintf(stderr, "rank %d: phew_grid_decompose: %s\n", rank, ctx.message);
    MPI_Abort(comm, 1);
  }
  const phew_grid *g = &in.grid;
  const int64_t n_stored = g->stored_dims[0] * g->stored_dims[1] * g->stored_dims[2];
  double *rho = malloc((size_t)(n_stored > 0 ? n_stored : 1) * sizeof *rho);
  int64_t *patch = malloc((size_t)(n_stored > 0 ? n_stored : 1) * sizeof *patch);
  int64_t *clump = malloc((size_t)(n_stored > 0 ? n_stored : 1) * sizeof *clump);
  int64_t *halo = malloc((size_t)(n_stored > 0 ? n_stored : 1) * sizeof *halo);
  if (!rho || !patch || !clump || !halo)
    MPI_Abort(comm, 1);

  /* this rank's cells; the ghost cells come from their owners */
  int64_t n_ghosts = 0;
  for (int64_t z = g->stored_offset[2]; z < g->stored_offset[2] + g->stored_dims[2]; ++z)
    for (int64_t y = g->stored_offset[1]; y < g->stored_offset[1] + g->stored_dims[1]; ++y)
      for (int64_t x = g->stored_offset[0]; x < g->stored_offset[0] + g->stored_dims[0]; ++x) {
        int active = is_active(g, x, y, z);
        rho[stored_index(g, x, y, z)] = active ? density_at(x, y, z) : NAN;
        n_ghosts += !active;
      }
  check(size == 1 || n_ghosts > 0, "a split grid has ghost cells");
  if (phew_exchange_ghosts(&ctx, g, rho, sizeof *rho) != PHEW_OK) {
    fprintf(stderr, "rank %d: phew_exchange_ghosts: %s\n", rank, ctx.message);
    MPI_Abort(comm, 1);
  }
  int64_t wrong = 0;
  for (int64_t z = g->stored_offset[2]; z < g->stored_offset[2] + g->stored_dims[2]; ++z)
    for (int64_t y = g->stored_offset[1]; y < g->stored_offset[1] + g->stored_dims[1]; ++y)
      for (int64_t x = g->stored_offset[0]; x < g->stored_offset[0] + g->stored_dims[0]; ++x)
        wrong += rho[stored_index(g, x, y, z)] != density_at(x, y, z);
  check(wrong == 0, "phew_exchange_ghosts filled every ghost cell with its owner's value");

  if (argc > 1 && size == 1) {
    FILE *out = fopen(argv[1], "wb");
    check(out && fwrite(rho, sizeof *rho, (size_t)n_stored, out) == (size_t)n_stored, "writing the density file");
    check(out && fclose(out) == 0, "writing the density file");
  }

  in.density = rho;
  in.density_type = PHEW_FLOAT64;
  phew_params p;
  phew_params_init(&p);
  p.density_threshold = 1.0; /* the blobs are apart at this level: two isolated clumps */
  phew_labels labels = {patch, clump, halo, NULL};
  phew_clump_result result = {0};
  phew_status status = phew_find_clumps(&ctx, &in, &p, &labels, &result);
  if (status != PHEW_OK) {
    fprintf(stderr, "rank %d: phew_find_clumps: %s (%s)\n", rank, phew_status_string(status), ctx.message);
    MPI_Abort(comm, 1);
  }

  /* the catalogue, on rank 0: the two blobs, the denser first, peaks at their centres */
  if (rank == 0) {
    check(result.n_clumps == 2, "exactly 2 clumps");
    check(result.n_haloes == 2, "exactly 2 haloes (no saddle merging)");
    for (int64_t k = 0; k < result.n_clumps && k < 2; ++k) {
      const phew_object *c = &result.clumps[k];
      int64_t peak = centre[k][0] + N * (centre[k][1] + N * centre[k][2]);
      double peak_density = density_at(centre[k][0], centre[k][1], centre[k][2]);
      check(c->id == k, "ClumpIds 0 and 1 in catalogue order");
      check(c->peak_id == peak, "each clump's peak at its blob's centre cell");
      check(fabs(c->peak_density - peak_density) <= 1e-12 * peak_density, "each clump's peak density");
      printf("clump %lld: peak cell %lld (expected %lld), peak density %.6f, %lld cells, mass %.6f\n", (long long)c->id,
             (long long)c->peak_id, (long long)peak, c->peak_density, (long long)c->n_cells, c->mass);
    }
  } else {
    check(result.n_clumps == 0 && result.n_haloes == 0, "the catalogue only on rank 0");
  }
  /* the labels, on whichever rank owns the cells: the peaks in their clumps, the cell between
   * the blobs (density 0.91) below the threshold */
  for (int k = 0; k < 2; ++k)
    if (is_active(g, centre[k][0], centre[k][1], centre[k][2]))
      check(clump[stored_index(g, centre[k][0], centre[k][1], centre[k][2])] == k, "a peak's ClumpId");
  if (is_active(g, 7, 7, 7))
    check(clump[stored_index(g, 7, 7, 7)] == -1 && patch[stored_index(g, 7, 7, 7)] == -1,
          "a cell below the threshold in no clump");
  phew_clump_result_free(&result);

  int all_failures = 0;
  MPI_Allreduce(&failures, &all_failures, 1, MPI_INT, MPI_SUM, comm);
  if (rank == 0)
    printf("%s: 2 clumps expected on %d rank(s), %d failed check(s)\n", all_failures ? "FAILED" : "OK", size,
           all_failures);
  free(rho);
  free(patch);
  free(clump);
  free(halo);
  MPI_Finalize();
  return all_failures ? 1 : 0;
}
