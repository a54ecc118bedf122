/* bench_phew: time one call of phew_find_clumps on a raw density cube and measure the
 * library's working memory. A benchmark, not a test: run it through bench/run_benchmark.py,
 * which generates the input, repeats the runs and reports medians.
 *
 *   bench_phew --input FILE --dims NX NY NZ --type float32|float64 --threshold T
 *              [--relevance R] [--saddle S] [--periodic] [--mpi] [--threads N]
 *
 * --threads N sets phew_context.n_threads (default 0: every core of the process's affinity
 * mask); the count used (phew_stats.n_threads) is printed as "threads".
 *
 * The program loads the cube, allocates and touches the three int64 label arrays, then reads
 * the resident set size (VmRSS) just before the call, resets the peak (VmHWM, via
 * /proc/self/clear_refs) and reads the peak after the call. Working memory is what the call
 * added on top of its input and outputs: (peak RSS after - RSS before) / cells.
 *
 * With --mpi (and a libphew built with MPI) it calls MPI_Init, splits the grid as the
 * command-line tool does (phew_grid_decompose: balanced blocks, one ghost layer, wrapping on
 * a periodic axis) and passes MPI_COMM_WORLD; times are then the maximum over ranks, bytes
 * per cell the summed working memory over the global cell count, and the per-stage rounds,
 * bytes sent and peak diagnostics come from phew_stats.
 *
 * Output: one "name value" pair per line (names without spaces), for people and for the
 * driver alike. */
#define _DEFAULT_SOURCE /* madvise */
#include "phew/phew.h"

#include "bench_clock.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>

#ifdef PHEW_BENCH_MPI
#include <mpi.h>
#endif

typedef struct options {
  const char *input;
  int64_t dims[3];
  phew_scalar_type type;
  int have_type, have_dims, have_threshold, periodic, use_mpi, n_threads;
  phew_params params;
} options;

static int rank = 0, n_ranks = 1;

static void die(const char *message)
{
  fprintf(stderr, "bench_phew: error: %s\n", message);
#ifdef PHEW_BENCH_MPI
  int initialised = 0;
  MPI_Initialized(&initialised);
  if (initialised && n_ranks > 1)
    MPI_Abort(MPI_COMM_WORLD, 1);
#endif
  exit(1);
}

static void usage(void)
{
  fputs("usage: bench_phew --input FILE --dims NX NY NZ --type float32|float64 --threshold T\n"
        "                  [--relevance R] [--saddle S] [--periodic] [--mpi] [--threads N]\n",
        stderr);
  exit(2);
}

static void parse(int argc, char **argv, options *o)
{
  memset(o, 0, sizeof *o);
  phew_params_init(&o->params);
  for (int i = 1; i < argc; ++i) {
    const char *a = argv[i];
    const int left = argc - i - 1;
    if (!strcmp(a, "--input") && left >= 1) {
      o->input = argv[++i];
    } else if (!strcmp(a, "--dims") && left >= 3) {
      for (int d = 0; d < 3; ++d)
        o->dims[d] = strtoll(argv[++i], NULL, 10);
      o->have_dims = 1;
    } else if (!strcmp(a, "--type") && left >= 1) {
      ++i;
      if (!strcmp(argv[i], "float32"))
        o->type = PHEW_FLOAT32;
      else if (!strcmp(argv[i], "float64"))
        o->type = PHEW_FLOAT64;
      else
        usage();
      o->have_type = 1;
    } else if (!strcmp(a, "--threshold") && left >= 1) {
      o->params.density_threshold = strtod(argv[++i], NULL);
      o->have_threshold = 1;
    } else if (!strcmp(a, "--relevance") && left >= 1) {
      o->params.relevance_threshold = strtod(argv[++i], NULL);
    } else if (!strcmp(a, "--saddle") && left >= 1) {
      o->params.saddle_threshold = strtod(argv[++i], NULL);
      o->params.saddle_merging = 1;
    } else if (!strcmp(a, "--periodic")) {
      o->periodic = 1;
    } else if (!strcmp(a, "--mpi")) {
      o->use_mpi = 1;
    } else if (!strcmp(a, "--threads") && left >= 1) {
      char *end = NULL;
      const long t = strtol(argv[++i], &end, 10);
      if (!end || *end || t < 0 || t > 4096)
        die("--threads must be an integer >= 0 (0: every core)");
      o->n_threads = (int)t;
    } else {
      usage();
    }
  }
  if (!o->input || !o->have_dims || !o->have_type || !o->have_threshold)
    usage();
  for (int d = 0; d < 3; ++d)
    if (o->dims[d] < 1)
      die("dimensions must be positive");
}

/* This rank's block, as the command-line tool splits the grid (balanced blocks with one
 * ghost layer, periodic across ranks). */
static void decompose(const options *o, phew_grid *g)
{
  const int periodic[3] = {o->periodic, o->periodic, o->periodic};
  if (phew_grid_block(NULL, g, o->dims, periodic, n_ranks, rank) != PHEW_OK)
    die("cannot split the grid");
}

static int64_t wrap(int64_t c, int64_t n) { return c < 0 ? c + n : (c >= n ? c - n : c); }

/* The density and the labels in huge pages where the system offers them, as numpy's large
 * arrays (scipy's peer) and the phew tool's: on some machines (virtual ones) a first touch
 * costs microseconds per 4 KiB page, more than the clump finding's own work on a page. */
static void *big_array(size_t bytes)
{
  void *p = NULL;
  const size_t huge = (size_t)2 << 20;
  if (posix_memalign(&p, huge, bytes ? bytes : 1) != 0)
    return NULL;
#ifdef MADV_HUGEPAGE
  if (bytes >= 2 * huge)
    (void)madvise(p, bytes, MADV_HUGEPAGE);
#endif
  return p;
}

/* Read the whole cube, keep the stored box (ghost layers wrap around). */
static void *load(const options *o, const phew_grid *g, size_t value_size)
{
  const size_t total = (size_t)(o->dims[0] * o->dims[1] * o->dims[2]);
  const size_t n = (size_t)(g->stored_dims[0] * g->stored_dims[1] * g->stored_dims[2]);
  unsigned char *all = malloc(total * value_size), *data = big_array((n ? n : 1) * value_size);
  if (!all || !data)
    die("out of memory for the density");
  FILE *f = fopen(o->input, "rb");
  if (!f)
    die("cannot open the input file");
  if (fread(all, value_size, total, f) != total || fgetc(f) != EOF)
    die("the input file's size does not match --dims and --type");
  fclose(f);
  size_t k = 0;
  for (int64_t z = 0; z < g->stored_dims[2]; ++z)
    for (int64_t y = 0; y < g->stored_dims[1]; ++y)
      for (int64_t x = 0; x < g->stored_dims[0]; ++x, ++k) {
        const int64_t gx = wrap(g->stored_offset[0] + x, o->dims[0]), gy = wrap(g->stored_offset[1] + y, o->dims[1]),
                      gz = wrap(g->stored_offset[2] + z, o->dims[2]);
        memcpy(data + k * value_size, all + (size_t)(gx + o->dims[0] * (gy + o->dims[1] * gz)) * value_size,
               value_size);
      }
  free(all);
  return data;
}

static int64_t *touched_labels(size_t n)
{
  int64_t *p = big_array(n * sizeof *p);
  if (!p)
    die("out of memory for the labels");
  memset(p, 0xff, n * sizeof *p); /* -1 everywhere: every page is resident */
  return p;
}

#ifdef PHEW_BENCH_MPI
static double reduce_over_ranks(double x, MPI_Op op)
{
  if (n_ranks > 1) {
    double y = x;
    MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, op, MPI_COMM_WORLD);
    return y;
  }
  return x;
}
static double max_over_ranks(double x) { return reduce_over_ranks(x, MPI_MAX); }
static double sum_over_ranks(double x) { return reduce_over_ranks(x, MPI_SUM); }
#else
static double max_over_ranks(double x) { return x; }
static double sum_over_ranks(double x) { return x; }
#endif

int main(int argc, char **argv)
{
  options o;
  parse(argc, argv, &o);
#ifdef PHEW_BENCH_MPI
  if (o.use_mpi) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n_ranks);
  }
#endif
  if (o.use_mpi && !phew_has_mpi())
    die("--mpi: libphew was built without MPI support");
#ifndef PHEW_BENCH_MPI
  if (o.use_mpi)
    die("--mpi: bench_phew was built without MPI support");
#endif

  phew_input input;
  memset(&input, 0, sizeof input);
  decompose(&o, &input.grid);
  const size_t value_size = o.type == PHEW_FLOAT32 ? sizeof(float) : sizeof(double);
  const size_t n_stored = (size_t)(input.grid.stored_dims[0] * input.grid.stored_dims[1] * input.grid.stored_dims[2]);
  const double n_cells = (double)o.dims[0] * (double)o.dims[1] * (double)o.dims[2];
  input.density = load(&o, &input.grid, value_size);
  input.density_type = o.type;
  phew_context context;
  phew_context_init(&context);
  context.n_threads = o.n_threads;
#ifdef PHEW_BENCH_MPI
  MPI_Comm comm = MPI_COMM_WORLD;
  if (o.use_mpi)
    context.mpi_comm = &comm;
#endif
  phew_labels labels = {touched_labels(n_stored), touched_labels(n_stored), touched_labels(n_stored), NULL};
  phew_clump_result result;
  memset(&result, 0, sizeof result);

#ifdef PHEW_BENCH_MPI
  if (o.use_mpi)
    MPI_Barrier(MPI_COMM_WORLD);
#endif
  const long long rss_before = proc_status_bytes("VmRSS");
  const int reset = reset_peak_rss();
  const long long hwm_before = proc_status_bytes("VmHWM");
  const double t0 = seconds_now();
  const phew_status status = phew_find_clumps(&context, &input, &o.params, &labels, &result);
  const double wall = seconds_now() - t0;
  const long long hwm_after = proc_status_bytes("VmHWM");
  struct rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  if (status != PHEW_OK) {
    fprintf(stderr, "bench_phew: phew_find_clumps failed: %s: %s\n", phew_status_string(status), context.message);
    die("the clump finder failed");
  }

  /* Working memory: what the call added to the resident set at its peak. Without the
   * reset the peak before the call is the baseline (nothing large was freed before). */
  const long long base = reset ? rss_before : (hwm_before > rss_before ? hwm_before : rss_before);
  const double working = (double)(hwm_after - base);
  const double working_max = max_over_ranks(working);
  const double working_sum = sum_over_ranks(working);
  const double wall_max = max_over_ranks(wall);
  const phew_stats *s = &result.stats;

  if (rank == 0) {
    printf("ranks                     %d\n", n_ranks);
    printf("threads                   %d\n", s->n_threads);
    printf("cells                     %.0f\n", n_cells);
    printf("dims                      %lld %lld %lld\n", (long long)o.dims[0], (long long)o.dims[1],
           (long long)o.dims[2]);
    printf("type                      %s\n", o.type == PHEW_FLOAT32 ? "float32" : "float64");
    printf("test_cells                %lld\n", (long long)s->n_test_cells);
    printf("peaks                     %lld\n", (long long)s->n_peaks);
    printf("saddle_pairs              %lld\n", (long long)s->n_saddle_pairs);
    printf("noise_discarded           %lld\n", (long long)s->n_noise_discarded);
    printf("noise_levels              %d\n", s->noise_levels);
    printf("saddle_levels             %d\n", s->saddle_levels);
    printf("clumps                    %lld\n", (long long)result.n_clumps);
    printf("haloes                    %lld\n", (long long)result.n_haloes);
    printf("dendrogram_nodes          %lld\n", (long long)result.n_nodes);
    for (int k = 0; k < PHEW_STAGE_COUNT; ++k) {
      char stage[48];
      snprintf(stage, sizeof stage, "%s", phew_stage_name(k));
      for (char *c = stage; *c; ++c)
        if (*c == ' ' || *c == '-')
          *c = '_';
      printf("seconds_%-17s %.6f\n", stage, s->seconds[k]);
      printf("rounds_%-18s %d\n", stage, s->iterations[k]); /* communication rounds */
      printf("bytes_%-19s %lld\n", stage, (long long)s->bytes_sent[k]);
    }
    printf("max_active_peaks          %lld\n", (long long)s->max_active_peaks);
    printf("max_ghost_peaks           %lld\n", (long long)s->max_ghost_peaks);
    printf("max_ghost_ratio           %.4f\n", s->max_ghost_ratio);
    printf("max_sparse_entries        %lld\n", (long long)s->max_sparse_entries);
    printf("hash_collisions           %lld\n", (long long)s->hash_collisions);
    printf("seconds_total             %.6f\n", wall_max);
    printf("cells_per_second          %.0f\n", n_cells / wall_max);
    printf("rss_before_bytes          %lld\n", rss_before);
    printf("peak_rss_after_bytes      %lld\n", hwm_after);
    printf("peak_reset                %s\n", reset ? "yes" : "no");
    printf("ru_maxrss_bytes           %lld\n", (long long)usage.ru_maxrss * 1024);
    printf("working_bytes             %.0f\n", working_sum);
    printf("working_bytes_max_rank    %.0f\n", working_max);
    printf("working_bytes_per_cell    %.3f\n", working_sum / n_cells);
    printf("input_bytes_per_cell      %.0f\n", (double)value_size);
    printf("labels_bytes_per_cell     %.0f\n", 3.0 * sizeof(int64_t));
  }

  phew_clump_result_free(&result);
  free(labels.peak_patch_id);
  free(labels.clump_id);
  free(labels.halo_id);
  free((void *)input.density);
#ifdef PHEW_BENCH_MPI
  if (o.use_mpi)
    MPI_Finalize();
#endif
  return 0;
}
