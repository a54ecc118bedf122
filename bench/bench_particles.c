/* Benchmark of PHEW on particles (not a test; bench/run_particle_benchmark.py drives it):
 *
 *   bench_particles --points FILE --type float32|float64 --box LX LY LZ [--periodic]
 *                   [--threads N] [--mpi] [--threshold T] [--relevance R] [--saddle S]
 *
 * Reads raw x,y,z positions (each rank its contiguous share under --mpi), runs
 * phew_find_clumps on them (masses 1, density estimated) and prints, on rank 0:
 *   particles N
 *   stage NAME SECONDS       domain, tree, knn, density, graph, phew (the PHEW stages), total
 *   peak_rss_bytes N         VmHWM at the end (input included; summed over ranks)
 *   baseline_rss_bytes N     VmRSS before the input is read: the process itself, its libraries
 *                            and MPI (summed over ranks)
 *   clumps N / haloes N / padding_rounds N / max_padding N
 * Defaults: threshold 80, relevance 3, saddle 200 (in units of the mean density, as RAMSES
 * runs PHEW on cosmological particles). */
#include "bench_clock.h"
#include "phew/phew.h"

#ifdef PHEW_BENCH_MPI
#include <mpi.h>
#endif

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void die(const char *message)
{
  fprintf(stderr, "bench_particles: %s\n", message);
  exit(1);
}

int main(int argc, char **argv)
{
  const char *path = NULL;
  int f32 = 1, periodic = 0, threads = 0, use_mpi = 0;
  double box[3] = {1, 1, 1};
  phew_params params;
  phew_params_init(&params);
  params.density_threshold = 80.0;
  params.relevance_threshold = 3.0;
  params.saddle_merging = 1;
  params.saddle_threshold = 200.0;
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--points") && i + 1 < argc)
      path = argv[++i];
    else if (!strcmp(argv[i], "--type") && i + 1 < argc)
      f32 = !strcmp(argv[++i], "float32");
    else if (!strcmp(argv[i], "--box") && i + 3 < argc)
      for (int d = 0; d < 3; ++d)
        box[d] = atof(argv[++i]);
    else if (!strcmp(argv[i], "--periodic"))
      periodic = 1;
    else if (!strcmp(argv[i], "--threads") && i + 1 < argc)
      threads = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--mpi"))
      use_mpi = 1;
    else if (!strcmp(argv[i], "--threshold") && i + 1 < argc)
      params.density_threshold = atof(argv[++i]);
    else if (!strcmp(argv[i], "--relevance") && i + 1 < argc)
      params.relevance_threshold = atof(argv[++i]);
    else if (!strcmp(argv[i], "--saddle") && i + 1 < argc)
      params.saddle_threshold = atof(argv[++i]);
    else
      die("usage: bench_particles --points FILE --type float32|float64 --box LX LY LZ [--periodic] [--threads N] "
          "[--mpi] [--threshold T] [--relevance R] [--saddle S]");
  }
  if (!path)
    die("--points is required");
  int rank = 0, n_ranks = 1;
#ifdef PHEW_BENCH_MPI
  MPI_Comm comm = MPI_COMM_WORLD;
  if (use_mpi) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &n_ranks);
  }
#else
  if (use_mpi)
    die("built without MPI");
#endif
  double baseline = (double)proc_status_bytes("VmRSS");
  const size_t size = f32 ? 4 : 8;
  FILE *f = fopen(path, "rb");
  if (!f)
    die("cannot open the positions");
  fseek(f, 0, SEEK_END);
  const int64_t n_total = (int64_t)ftell(f) / (int64_t)(3 * size);
  const int64_t first = n_total * rank / n_ranks, n = n_total * (rank + 1) / n_ranks - first;
  void *pos = malloc((size_t)(3 * n + 1) * size);
  if (!pos)
    die("out of memory");
  fseek(f, (long)(first * 3 * (int64_t)size), SEEK_SET);
  if (fread(pos, 3 * size, (size_t)n, f) != (size_t)n)
    die("short read");
  fclose(f);

  phew_input in;
  memset(&in, 0, sizeof in);
  in.mesh = PHEW_MESH_POINTS;
  phew_points_init(&in.points);
  in.points.n = n;
  in.points.type = f32 ? PHEW_FLOAT32 : PHEW_FLOAT64;
  in.points.position = pos;
  in.points.has_box = 1;
  for (int d = 0; d < 3; ++d) {
    in.points.box_size[d] = box[d];
    in.points.periodic[d] = periodic;
  }
  phew_context context;
  phew_context_init(&context);
  context.n_threads = threads;
#ifdef PHEW_BENCH_MPI
  if (use_mpi)
    context.mpi_comm = &comm;
#endif
  const size_t n_labels = (size_t)(n > 0 ? n : 1);
  phew_labels labels = {malloc(n_labels * 8), malloc(n_labels * 8), malloc(n_labels * 8), malloc(n_labels * 8)};
  if (!labels.peak_patch_id || !labels.clump_id || !labels.halo_id || !labels.density)
    die("out of memory");
  memset(labels.peak_patch_id, 0xff, n_labels * 8); /* touched: counted in the resident memory */
  memset(labels.clump_id, 0xff, n_labels * 8);
  memset(labels.halo_id, 0xff, n_labels * 8);
  memset(labels.density, 0xff, n_labels * 8);
#ifdef PHEW_BENCH_MPI
  if (use_mpi)
    MPI_Barrier(comm);
#endif
  phew_clump_result result;
  const double t0 = seconds_now();
  const phew_status s = phew_find_clumps(&context, &in, &params, &labels, &result);
  double wall = seconds_now() - t0;
  double peak = (double)proc_status_bytes("VmHWM");
  if (s != PHEW_OK) {
    fprintf(stderr, "bench_particles: %s\n", context.message);
    return 1;
  }
#ifdef PHEW_BENCH_MPI
  if (use_mpi && n_ranks > 1) {
    MPI_Allreduce(MPI_IN_PLACE, &wall, 1, MPI_DOUBLE, MPI_MAX, comm);
    MPI_Allreduce(MPI_IN_PLACE, &peak, 1, MPI_DOUBLE, MPI_SUM, comm);
    MPI_Allreduce(MPI_IN_PLACE, &baseline, 1, MPI_DOUBLE, MPI_SUM, comm);
  }
#endif
  if (rank == 0) {
    const phew_stats *st = &result.stats;
    double phew_seconds = 0.0;
    for (int k = 0; k < PHEW_STAGE_COUNT; ++k)
      phew_seconds += st->seconds[k];
    printf("particles %lld\n", (long long)st->n_cells);
    printf("ranks %d threads %d\n", st->n_ranks, st->n_threads);
    static const char *names[PHEW_PARTICLE_STAGE_COUNT] = {"domain", "tree", "knn", "density", "graph"};
    for (int k = 0; k < PHEW_PARTICLE_STAGE_COUNT; ++k)
      printf("stage %s %.4f\n", names[k], st->particle_seconds[k]);
    printf("stage phew %.4f\n", phew_seconds);
    printf("stage total %.4f\n", wall);
    printf("peak_rss_bytes %.0f\n", peak);
    printf("baseline_rss_bytes %.0f\n", baseline);
    printf("bytes_per_particle %.1f\n", peak / (double)st->n_cells);
    printf("clumps %lld\nhaloes %lld\npadding_rounds %d\nmax_padding %lld\n", (long long)result.n_clumps,
           (long long)result.n_haloes, st->padding_rounds, (long long)st->max_padding);
    if (result.n_haloes > 0)
      printf("largest_halo_particles %lld\n", (long long)result.haloes[0].n_cells);
  }
  phew_clump_result_free(&result);
  free(labels.peak_patch_id);
  free(labels.clump_id);
  free(labels.halo_id);
  free(labels.density);
  free(pos);
#ifdef PHEW_BENCH_MPI
  if (use_mpi)
    MPI_Finalize();
#endif
  return 0;
}
