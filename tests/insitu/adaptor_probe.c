/* A small "simulation" for the adaptor's tests: a 16^3 grid with two Gaussian blobs split into z
 * slabs over the ranks, and particles on a lattice, handed to phew_catalyst for a few steps.
 *
 *   adaptor_probe STEPS SCRIPT...   (SCRIPT "-": none)
 *
 * Per step and rank it prints "rank R step S status N message M", so that a test can check that
 * every rank got the same answer. Environment:
 *   PROBE_LOG=PREFIX    those lines also go to PREFIX.R, one file per rank (mpiexec may cut a
 *                       rank's output into pieces and interleave them with another rank's)
 *   PROBE_NAN_STEP=S    a NaN in the density at step S (on the last rank)
 *   PROBE_COMM=split    run on a communicator of its own (MPI_Comm_split), not MPI_COMM_WORLD
 *   PROBE_GHOSTS=1      describe the slab with a ghost layer (stored box larger than the active
 *                       one), which the adaptor must refuse
 * The addresses of the arrays go to the scripts as PROBE_ADDRESS_DENSITY, _POSITION, _VELOCITY
 * and _ID (hex), their checksums are compared before and after each call (the adaptor must
 * not write to them). */
#include "phew_catalyst.h"

#include <math.h>
#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { N = 16, SIDE = 8 };

static double checksum(const void *data, size_t bytes)
{
  const unsigned char *b = data;
  double s = 0.0;
  for (size_t k = 0; k < bytes; ++k)
    s = fmod(s * 131.0 + b[k], 1e15);
  return s;
}

static FILE *rank_log; /* PROBE_LOG's file for this rank, or NULL */

/* One line of the probe's report, on stdout and in the rank's log. */
static void report(const char *format, ...)
{
  va_list args;
  va_start(args, format);
  vprintf(format, args);
  va_end(args);
  fflush(stdout);
  if (rank_log) {
    va_start(args, format);
    vfprintf(rank_log, format, args);
    va_end(args);
    fflush(rank_log);
  }
}

/* The message on one line ("-" if empty), its line breaks as " | ". */
static const char *one_line(const char *message)
{
  static char text[8192];
  size_t k = 0;
  for (const char *c = message; *c && k + 4 < sizeof text; ++c)
    if (*c == '\n') {
      memcpy(&text[k], " | ", 3);
      k += 3;
    } else {
      text[k++] = *c;
    }
  text[k] = 0;
  return k ? text : "-";
}

static void set_address(const char *name, const void *p)
{
  char text[64];
  snprintf(text, sizeof text, "%llx", (unsigned long long)(uintptr_t)p);
  setenv(name, text, 1);
}

int main(int argc, char **argv)
{
  MPI_Init(&argc, &argv);
  MPI_Comm comm = MPI_COMM_WORLD;
  const char *which = getenv("PROBE_COMM");
  if (which && !strcmp(which, "split"))
    MPI_Comm_split(MPI_COMM_WORLD, 0, 0, &comm);
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  if (getenv("PROBE_LOG")) {
    char path[4096];
    snprintf(path, sizeof path, "%s.%d", getenv("PROBE_LOG"), rank);
    rank_log = fopen(path, "w");
  }
  const int steps = argc > 1 ? atoi(argv[1]) : 1;
  const int n_scripts = argc > 2 && strcmp(argv[2], "-") ? argc - 2 : 0;
  const int nan_step = getenv("PROBE_NAN_STEP") ? atoi(getenv("PROBE_NAN_STEP")) : -1;
  const int ghosts = getenv("PROBE_GHOSTS") != NULL;

  const int z0 = N * rank / size, z1 = N * (rank + 1) / size;
  const size_t cells = (size_t)N * N * (size_t)(z1 - z0);
  double *density = malloc((cells + 1) * sizeof *density);
  int64_t n = 0;
  double *position = malloc(3 * SIDE * SIDE * SIDE * sizeof *position);
  float *velocity = malloc(3 * SIDE * SIDE * SIDE * sizeof *velocity);
  int64_t *id = malloc(SIDE * SIDE * SIDE * sizeof *id);
  for (int z = z0; z < z1; ++z)
    for (int y = 0; y < N; ++y)
      for (int x = 0; x < N; ++x) {
        const double a = ((x - 4.5) * (x - 4.5) + (y - 5.5) * (y - 5.5) + (z - 5.5) * (z - 5.5)) / 4.0;
        const double b = ((x - 11.5) * (x - 11.5) + (y - 10.5) * (y - 10.5) + (z - 9.5) * (z - 9.5)) / 3.0;
        density[((size_t)(z - z0) * N + (size_t)y) * N + (size_t)x] = 0.2 + 50.0 * exp(-a) + 30.0 * exp(-b);
      }
  for (int k = 0; k < SIDE * SIDE * SIDE; ++k) /* the lattice points in this rank's slab */
    if ((k / (SIDE * SIDE)) * N / SIDE >= z0 && (k / (SIDE * SIDE)) * N / SIDE < z1) {
      const int c[3] = {k % SIDE, (k / SIDE) % SIDE, k / (SIDE * SIDE)};
      for (int d = 0; d < 3; ++d) {
        position[3 * n + d] = (c[d] + 0.5) / SIDE;
        velocity[3 * n + d] = (float)d;
      }
      id[n++] = k;
    }
  set_address("PROBE_ADDRESS_DENSITY", density);
  set_address("PROBE_ADDRESS_POSITION", position);
  set_address("PROBE_ADDRESS_VELOCITY", velocity);
  set_address("PROBE_ADDRESS_ID", id);

  phew_catalyst *adaptor = NULL;
  const int started = phew_catalyst_initialize(&adaptor, n_scripts, (const char *const *)argv + 2,
                                               comm == MPI_COMM_WORLD ? NULL : &comm);
  report("rank %d init status %d message %s\n", rank, started, one_line(phew_catalyst_message(adaptor)));
  int changed = 0;
  for (int step = 0; started == 0 && step < steps; ++step) {
    if (step == nan_step && rank == size - 1 && cells > 0)
      density[cells / 2] = NAN;
    phew_grid grid; /* the whole mesh, then this rank's slab of it */
    phew_grid_init_whole(&grid, N, N, N);
    phew_points particles;
    phew_points_init(&particles);
    particles.has_box = 1;
    for (int d = 0; d < 3; ++d) {
      grid.spacing[d] = 1.0 / N;
      grid.periodic[d] = 1;
      particles.box_size[d] = 1.0;
      particles.periodic[d] = 1;
    }
    grid.stored_offset[2] = grid.active_offset[2] = z0;
    grid.stored_dims[2] = grid.active_dims[2] = z1 - z0;
    if (ghosts) { /* a ghost layer around the slab, which the adaptor refuses */
      grid.stored_offset[2] -= 1;
      grid.stored_dims[2] += 2;
    }
    particles.n = n;
    particles.type = PHEW_FLOAT64;
    particles.position = position;
    particles.id = id;
    particles.velocity = NULL; /* float velocities would need a float particle set: not passed */
    const double before = checksum(density, cells * sizeof *density) + checksum(position, (size_t)n * 24) +
                          checksum(id, (size_t)n * 8);
    const int status = phew_catalyst_execute(adaptor, step, 0.1 * step, &grid, density, PHEW_FLOAT64, NULL, &particles);
    const double after = checksum(density, cells * sizeof *density) + checksum(position, (size_t)n * 24) +
                         checksum(id, (size_t)n * 8);
    changed |= before != after;
    report("rank %d step %d status %d message %s\n", rank, step, status, one_line(phew_catalyst_message(adaptor)));
    if (step == nan_step && rank == size - 1 && cells > 0)
      density[cells / 2] = 1.0;
  }
  report("rank %d arrays %s\n", rank, changed ? "CHANGED" : "unchanged");
  phew_catalyst_finalize(adaptor);
  free(density);
  free(position);
  free(velocity);
  free(id);
  if (rank_log)
    fclose(rank_log);
  if (comm != MPI_COMM_WORLD)
    MPI_Comm_free(&comm);
  MPI_Finalize();
  return 0;
}
