/* Benchmark program of the snapshot readers (bench/run_readers_benchmark.py drives it):
 * phew_read_particles on every rank, with the read's wall time (the slowest rank's, after a
 * barrier) and each rank's peak resident memory growth during the read against the bytes of
 * its share of the data (what the arrays hold).
 *
 *   [mpirun -np N] bench_readers PATH [--units astro] [--particle-type N] [--family NAME]
 *
 * Prints "read SECONDS" and per rank "rank R: PARTICLES particles, share BYTES, peak growth
 * BYTES, ratio X" (rank 0 prints every rank's line). */
#include "bench_clock.h"
#include "phew/phew_readers.h"

#ifdef PHEW_BENCH_MPI
#include <mpi.h>
#endif

static int parse(int argc, char **argv, phew_read_options *o)
{
  phew_read_options_init(o);
  for (int i = 2; i < argc; ++i) {
    if (!strcmp(argv[i], "--units") && i + 1 < argc)
      o->units = !strcmp(argv[++i], "astro") ? PHEW_UNITS_ASTRO : PHEW_UNITS_CODE;
    else if (!strcmp(argv[i], "--particle-type") && i + 1 < argc)
      o->particle_type = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--family") && i + 1 < argc)
      o->family = argv[++i];
    else
      return -1;
  }
  return 0;
}

static double share_bytes(const phew_particle_set *s)
{
  const double real = s->type == PHEW_FLOAT32 ? 4.0 : 8.0;
  return (double)s->n * (real * (s->velocity ? 7.0 : 4.0) + 8.0);
}

int main(int argc, char **argv)
{
  phew_read_options o;
  if (argc < 2 || parse(argc, argv, &o) != 0) {
    fprintf(stderr, "usage: bench_readers PATH [--units astro] [--particle-type N] [--family NAME]\n");
    return 2;
  }
  int rank = 0, size = 1;
  phew_context context;
  phew_context_init(&context);
#ifdef PHEW_BENCH_MPI
  MPI_Comm world = MPI_COMM_WORLD;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(world, &rank);
  MPI_Comm_size(world, &size);
  context.mpi_comm = &world;
  MPI_Barrier(world);
#endif
  reset_peak_rss();
  const long long before = proc_status_bytes("VmRSS");
  const double t0 = seconds_now();
  phew_particle_set set;
  const phew_status s = phew_read_particles(&context, argv[1], &o, &set);
  double elapsed = seconds_now() - t0;
  const long long peak = proc_status_bytes("VmHWM");
  double line[3] = {(double)set.n, share_bytes(&set), (double)(peak - before)};
  double *all = malloc(3 * (size_t)size * sizeof *all);
#ifdef PHEW_BENCH_MPI
  MPI_Allreduce(MPI_IN_PLACE, &elapsed, 1, MPI_DOUBLE, MPI_MAX, world);
  MPI_Gather(line, 3, MPI_DOUBLE, all, 3, MPI_DOUBLE, 0, world);
#else
  memcpy(all, line, sizeof line);
#endif
  if (rank == 0 && s != PHEW_OK)
    fprintf(stderr, "bench_readers: %s\n", context.message);
  if (rank == 0 && s == PHEW_OK) {
    printf("read %.6f\n", elapsed);
    for (int r = 0; r < size; ++r)
      printf("rank %d: %.0f particles, share %.0f, peak growth %.0f, ratio %.3f\n", r, all[3 * r], all[3 * r + 1],
             all[3 * r + 2], all[3 * r + 1] > 0 ? all[3 * r + 2] / all[3 * r + 1] : 0.0);
  }
  free(all);
  phew_particle_set_free(&set);
#ifdef PHEW_BENCH_MPI
  MPI_Finalize();
#endif
  return s == PHEW_OK ? 0 : 1;
}
