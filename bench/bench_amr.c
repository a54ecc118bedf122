/* bench_amr: time phew_find_clumps on an AMR hierarchy, or on a uniform grid with the same
 * number of cells, and measure the library's working memory. A benchmark, not a test: run it
 * through bench/run_amr_benchmark.py, which repeats the runs and reports medians.
 *
 *   bench_amr --mode amr|grid [--base N] [--levels L] [--mpi] [--split space|level] [--threads N]
 *
 * --threads N sets phew_context.n_threads (default 0: every core of the process's affinity
 * mask); the count used (phew_stats.n_threads) is printed as "threads".
 *
 * The hierarchy: level 0 has N^3 cells (default 96) in blocks of 16^3; a block of level l is
 * refined (into 8 blocks of 16^3 on level l+1) when one of 48 seeded blobs lies within
 * 0.055 / 2^l of the box of its centre, up to level L (default 2), which gives about 6 million
 * leaf cells on 3 levels. The density is the sum of the blobs (Gaussians of widths 0.004 to
 * 0.04) on a smooth background that is above the threshold in half of the box. The grid mode evaluates the same density
 * on a cube with as many cells as the hierarchy has leaves.
 *
 * With --mpi the blocks are split over the ranks (see assign_owners), and the grid as the
 * command-line tool splits it. Times are the maximum over ranks; working memory is the peak
 * RSS the call added on top of its input and label arrays, summed over ranks, per cell.
 *
 * Output: one "name value" pair per line. */
#define _POSIX_C_SOURCE 200809L
#include "phew/phew.h"

#include "bench_clock.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef PHEW_BENCH_MPI
#include <mpi.h>
#endif

enum { BLOCK = 16, N_BLOBS = 48 };
static int rank = 0, n_ranks = 1;

static void die(const char *message)
{
  fprintf(stderr, "bench_amr: error: %s\n", message);
  exit(1);
}

/* ---- the density ----------------------------------------------------------------------- */

static uint64_t mix(uint64_t x)
{
  x ^= x >> 33;
  x *= UINT64_C(0xff51afd7ed558ccd);
  x ^= x >> 33;
  x *= UINT64_C(0xc4ceb9fe1a85ec53);
  return x ^ (x >> 33);
}

static double uniform(uint64_t key) { return (double)(mix(key) >> 11) * 0x1.0p-53; }

typedef struct blob {
  double c[3], width, amplitude;
} blob;

static blob blobs[N_BLOBS];

static void make_blobs(void)
{
  for (int k = 0; k < N_BLOBS; ++k) {
    for (int d = 0; d < 3; ++d)
      blobs[k].c[d] = 0.05 + 0.9 * uniform(1000 + 3 * k + d);
    blobs[k].width = 0.004 * pow(10.0, uniform(2000 + k));
    blobs[k].amplitude = 2.0 + 30.0 * uniform(3000 + k);
  }
}

/* Density at the centre of a cell of size h (unit box): a smooth background around 1, half
 * of it above the threshold, and the blobs (widened by the cell size, as a deposit would). */
static double density(const double x[3], double h)
{
  const double two_pi = 6.283185307179586;
  double rho = 1.0 + 0.3 * sin(two_pi * 3.0 * x[0]) * sin(two_pi * 2.0 * x[1] + 1.0) * sin(two_pi * 4.0 * x[2] + 2.0);
  for (int k = 0; k < N_BLOBS; ++k) {
    double r2 = 0.0;
    for (int d = 0; d < 3; ++d)
      r2 += (x[d] - blobs[k].c[d]) * (x[d] - blobs[k].c[d]);
    const double s2 = blobs[k].width * blobs[k].width + h * h;
    if (r2 < 30.0 * s2)
      rho += blobs[k].amplitude * exp(-0.5 * r2 / s2);
  }
  return rho;
}

/* ---- the hierarchy --------------------------------------------------------------------- */

typedef struct blocks {
  int64_t n, capacity;
  phew_amr_block *b;
} blocks;

static void add_block(blocks *list, int level, const int64_t lo[3])
{
  if (list->n == list->capacity) {
    list->capacity = list->capacity ? 2 * list->capacity : 256;
    list->b = realloc(list->b, (size_t)list->capacity * sizeof *list->b);
    if (!list->b)
      die("out of memory");
  }
  phew_amr_block *k = &list->b[list->n++];
  memset(k, 0, sizeof *k);
  k->level = level;
  for (int d = 0; d < 3; ++d) {
    k->lo[d] = lo[d];
    k->dims[d] = BLOCK;
  }
}

static int refine(const phew_amr_block *k, int64_t base)
{
  const double h = 1.0 / (double)(base << k->level), radius = 0.055 / (double)(1 << k->level);
  for (int j = 0; j < N_BLOBS; ++j) {
    double r2 = 0.0;
    for (int d = 0; d < 3; ++d) {
      const double lo = (double)k->lo[d] * h, hi = (double)(k->lo[d] + k->dims[d]) * h;
      const double c = blobs[j].c[d] < lo ? lo : (blobs[j].c[d] > hi ? hi : blobs[j].c[d]);
      r2 += (c - blobs[j].c[d]) * (c - blobs[j].c[d]);
    }
    if (r2 < radius * radius)
      return 1;
  }
  return 0;
}

static void build_hierarchy(blocks *list, int64_t base, int levels, int64_t *leaves)
{
  int64_t lo[3];
  for (lo[2] = 0; lo[2] < base; lo[2] += BLOCK)
    for (lo[1] = 0; lo[1] < base; lo[1] += BLOCK)
      for (lo[0] = 0; lo[0] < base; lo[0] += BLOCK)
        add_block(list, 0, lo);
  for (int64_t i = 0; i < list->n; ++i) { /* the list grows level by level behind i */
    const phew_amr_block k = list->b[i];
    if (k.level >= levels || !refine(&k, base))
      continue;
    for (int c = 0; c < 8; ++c) {
      const int64_t child[3] = {2 * k.lo[0] + (c & 1) * BLOCK, 2 * k.lo[1] + ((c >> 1) & 1) * BLOCK,
                                2 * k.lo[2] + ((c >> 2) & 1) * BLOCK};
      add_block(list, k.level + 1, child);
    }
  }
  *leaves = 0; /* count directly: cells of each block minus those its children cover */
  for (int64_t i = 0; i < list->n; ++i)
    *leaves += (int64_t)BLOCK * BLOCK * BLOCK;
  for (int64_t i = 0; i < list->n; ++i)
    if (list->b[i].level > 0)
      *leaves -= (int64_t)(BLOCK / 2) * (BLOCK / 2) * (BLOCK / 2);
}

/* --split level: contiguous ranges of blocks in list (level) order, of about equal cell
 * counts, as ParaView's AMR reader hands them out. --split space (the default): ranges of
 * blocks along a Morton curve, of about equal leaf counts, as a simulation's domain
 * decomposition keeps neighbours together. */
typedef struct ordered {
  uint64_t key;
  int64_t block;
} ordered;

static uint64_t morton(const int64_t c[3])
{
  uint64_t key = 0;
  for (int bit = 20; bit >= 0; --bit)
    for (int d = 2; d >= 0; --d)
      key = (key << 1) | (uint64_t)((c[d] >> bit) & 1);
  return key;
}

static int compare_keys(const void *a, const void *b)
{
  const ordered *x = a, *y = b;
  return x->key != y->key ? (x->key > y->key ? 1 : -1) : (x->block > y->block) - (x->block < y->block);
}

static void assign_owners(blocks *list, int spatial, int levels)
{
  const int64_t per_block = (int64_t)BLOCK * BLOCK * BLOCK;
  if (!spatial) {
    for (int64_t i = 0; i < list->n; ++i)
      list->b[i].owner = (int32_t)((i * per_block * n_ranks) / (list->n * per_block));
    return;
  }
  /* a refined block is covered by its 8 children: it has no leaves */
  unsigned char *refined = calloc((size_t)(list->n > 0 ? list->n : 1), 1);
  ordered *order = malloc((size_t)(list->n > 0 ? list->n : 1) * sizeof *order);
  if (!refined || !order)
    die("out of memory");
  int64_t n_leaf_blocks = 0;
  for (int64_t i = 0; i < list->n; ++i) {
    const phew_amr_block *k = &list->b[i];
    int64_t c[3];
    for (int d = 0; d < 3; ++d)
      c[d] = (k->lo[d] << (levels - k->level)) / BLOCK;
    order[i] = (ordered){morton(c), i};
    if (k->level > 0) { /* its parent block */
      for (int64_t j = 0; j < i; ++j) {
        const phew_amr_block *p = &list->b[j];
        if (p->level == k->level - 1 && p->lo[0] == (k->lo[0] / 2) / BLOCK * BLOCK &&
            p->lo[1] == (k->lo[1] / 2) / BLOCK * BLOCK && p->lo[2] == (k->lo[2] / 2) / BLOCK * BLOCK)
          refined[j] = 1;
      }
    }
  }
  for (int64_t i = 0; i < list->n; ++i)
    n_leaf_blocks += !refined[i];
  qsort(order, (size_t)list->n, sizeof *order, compare_keys);
  int64_t seen = 0;
  for (int64_t i = 0; i < list->n; ++i) {
    const int64_t b = order[i].block;
    list->b[b].owner = (int32_t)((seen * n_ranks) / (n_leaf_blocks > 0 ? n_leaf_blocks : 1));
    if (list->b[b].owner >= n_ranks)
      list->b[b].owner = n_ranks - 1;
    seen += !refined[b];
  }
  free(refined);
  free(order);
}

int main(int argc, char **argv)
{
  const char *mode = "amr";
  int64_t base = 96;
  int levels = 2, use_mpi = 0, spatial = 1, n_threads = 0;
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--mode") && i + 1 < argc)
      mode = argv[++i];
    else if (!strcmp(argv[i], "--base") && i + 1 < argc)
      base = atoll(argv[++i]);
    else if (!strcmp(argv[i], "--levels") && i + 1 < argc)
      levels = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--mpi"))
      use_mpi = 1;
    else if (!strcmp(argv[i], "--split") && i + 1 < argc)
      spatial = strcmp(argv[++i], "level") != 0;
    else if (!strcmp(argv[i], "--threads") && i + 1 < argc) {
      char *end = NULL;
      const long t = strtol(argv[++i], &end, 10);
      if (!end || *end || t < 0 || t > 4096)
        die("--threads must be an integer >= 0 (0: every core)");
      n_threads = (int)t;
    } else
      die("usage: bench_amr --mode amr|grid [--base N] [--levels L] [--mpi] [--split space|level] [--threads N]");
  }
  if (base % BLOCK != 0 || base < BLOCK)
    die("--base must be a multiple of 16");
#ifdef PHEW_BENCH_MPI
  if (use_mpi) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n_ranks);
  }
  MPI_Comm comm = MPI_COMM_WORLD;
#else
  if (use_mpi)
    die("--mpi: built without MPI");
#endif
  make_blobs();
  blocks list = {0, 0, NULL};
  int64_t leaves;
  build_hierarchy(&list, base, levels, &leaves);
  assign_owners(&list, spatial, levels);

  phew_input in;
  memset(&in, 0, sizeof in);
  phew_params params;
  phew_params_init(&params);
  params.density_threshold = 1.0;
  params.relevance_threshold = 2.0;
  params.saddle_merging = 1;
  params.saddle_threshold = 4.0;
  int64_t n_local = 0, n_cells;
  float *rho;
  const int is_amr = !strcmp(mode, "amr");
  if (is_amr) {
    in.mesh = PHEW_MESH_AMR;
    for (int d = 0; d < 3; ++d) {
      in.amr.level0_dims[d] = base;
      in.amr.spacing[d] = 1.0 / (double)base;
    }
    in.amr.n_blocks = list.n;
    in.amr.blocks = list.b;
    for (int64_t i = 0; i < list.n; ++i)
      n_local += list.b[i].owner == rank ? (int64_t)BLOCK * BLOCK * BLOCK : 0;
    rho = malloc((size_t)(n_local > 0 ? n_local : 1) * sizeof *rho);
    int64_t k = 0;
    for (int64_t i = 0; i < list.n; ++i) {
      const phew_amr_block *b = &list.b[i];
      if (b->owner != rank)
        continue;
      const int64_t n = base << b->level;
      const double h = 1.0 / (double)n;
      for (int z = 0; z < BLOCK; ++z)
        for (int y = 0; y < BLOCK; ++y)
          for (int x = 0; x < BLOCK; ++x) {
            const int64_t g[3] = {b->lo[0] + x, b->lo[1] + y, b->lo[2] + z};
            const double c[3] = {((double)g[0] + 0.5) * h, ((double)g[1] + 0.5) * h, ((double)g[2] + 0.5) * h};
            rho[k++] = (float)density(c, h);
          }
    }
    n_cells = leaves;
  } else if (!strcmp(mode, "grid")) {
    const int64_t n = (int64_t)llround(cbrt((double)leaves));
    const int64_t dims[3] = {n, n, n};
    if (phew_grid_block(NULL, &in.grid, dims, NULL, n_ranks, rank) != PHEW_OK)
      die("cannot decompose the grid");
    const phew_grid *g = &in.grid;
    n_local = g->stored_dims[0] * g->stored_dims[1] * g->stored_dims[2];
    rho = malloc((size_t)(n_local > 0 ? n_local : 1) * sizeof *rho);
    const double h = 1.0 / (double)n;
    int64_t k = 0;
    for (int64_t z = 0; z < g->stored_dims[2]; ++z)
      for (int64_t y = 0; y < g->stored_dims[1]; ++y)
        for (int64_t x = 0; x < g->stored_dims[0]; ++x) {
          const int64_t gx = g->stored_offset[0] + x, gy = g->stored_offset[1] + y, gz = g->stored_offset[2] + z;
          const double c[3] = {((double)gx + 0.5) * h, ((double)gy + 0.5) * h, ((double)gz + 0.5) * h};
          rho[k++] = (float)density(c, h);
        }
    n_cells = n * n * n;
  } else {
    die("--mode must be amr or grid");
  }
  if (!rho)
    die("out of memory");
  in.density = rho;
  in.density_type = PHEW_FLOAT32;
  phew_context context;
  phew_context_init(&context);
  context.n_threads = n_threads;
#ifdef PHEW_BENCH_MPI
  if (use_mpi)
    context.mpi_comm = &comm;
#endif
  const size_t n_labels = (size_t)(n_local > 0 ? n_local : 1);
  phew_labels labels = {malloc(n_labels * 8), malloc(n_labels * 8), malloc(n_labels * 8), NULL};
  if (!labels.peak_patch_id || !labels.clump_id || !labels.halo_id)
    die("out of memory");
  memset(labels.peak_patch_id, 0xff, n_labels * 8);
  memset(labels.clump_id, 0xff, n_labels * 8);
  memset(labels.halo_id, 0xff, n_labels * 8);
  phew_clump_result result;
#ifdef PHEW_BENCH_MPI
  if (use_mpi)
    MPI_Barrier(MPI_COMM_WORLD);
#endif
  const long long rss_before = proc_status_bytes("VmRSS");
  (void)reset_peak_rss();
  const double t0 = seconds_now();
  const phew_status s = phew_find_clumps(&context, &in, &params, &labels, &result);
  double wall = seconds_now() - t0;
  double added = (double)(proc_status_bytes("VmHWM") - rss_before);
  if (s != PHEW_OK) {
    fprintf(stderr, "bench_amr: %s\n", context.message);
    return 1;
  }
#ifdef PHEW_BENCH_MPI
  if (use_mpi && n_ranks > 1) {
    MPI_Allreduce(MPI_IN_PLACE, &wall, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, &added, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  }
#endif
  if (rank == 0) {
    int per_level[64] = {0};
    int top = 0;
    for (int64_t i = 0; i < list.n; ++i) {
      per_level[list.b[i].level]++;
      top = list.b[i].level > top ? list.b[i].level : top;
    }
    printf("mode %s\nranks %d\nthreads %d\ncells %lld\nblocks %lld\nlevels %d\n", mode, n_ranks, result.stats.n_threads,
           (long long)n_cells, (long long)list.n, top + 1);
    for (int l = 0; l <= top; ++l)
      printf("blocks_level%d %d\n", l, per_level[l]);
    printf("seconds %.6f\ncells_per_second %.6g\nbytes_per_cell %.3f\n", wall, (double)n_cells / wall,
           added / (double)n_cells);
    printf("test_cells %lld\npeaks %lld\nclumps %lld\nhaloes %lld\n", (long long)result.stats.n_test_cells,
           (long long)result.stats.n_peaks, (long long)result.n_clumps, (long long)result.n_haloes);
    for (int k = 0; k < PHEW_STAGE_COUNT; ++k) {
      char name[64];
      snprintf(name, sizeof name, "%s", phew_stage_name(k));
      for (char *c = name; *c; ++c)
        *c = *c == ' ' ? '_' : *c;
      printf("seconds_%s %.6f\nrounds_%s %d\nbytes_sent_%s %lld\n", name, result.stats.seconds[k], name,
             result.stats.iterations[k], name, (long long)result.stats.bytes_sent[k]);
    }
  }
  phew_clump_result_free(&result);
#ifdef PHEW_BENCH_MPI
  if (use_mpi)
    MPI_Finalize();
#endif
  return 0;
}
