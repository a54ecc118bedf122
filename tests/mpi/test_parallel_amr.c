/* Distributed PHEW on AMR hierarchies (issue 8) gives exactly the serial answer. Every rank
 * passes the whole block list; the blocks are spread over the ranks in several ways (round
 * robin, contiguous ranges in level order with all of level 0 on rank 0, all blocks on one
 * rank, random). Rank 0 gathers the labels in global block order and compares them, and the
 * tables byte for byte, with a run of the same hierarchy on rank 0 alone (MPI_COMM_SELF).
 *
 * The same leaf cells as an explicit graph (built here by brute force: closed boxes touching,
 * at exact finest-level integer coordinates) are also distributed over the ranks, each rank
 * passing its own cells plus ghost copies (flagged, with their owner) of the other ranks'
 * cells its cells list as neighbours: the labels (ghosts included) and tables must equal a
 * serial run of the whole graph.
 *
 * Errors are collective: NaN in one leaf cell of one block of one rank fails every rank with
 * the same status and message, labels -1, no hang; NaN in a covered cell is fine. */
#include "mpi_test_util.h"

#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t mix(uint64_t z)
{
  z += UINT64_C(0x9E3779B97F4A7C15);
  z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
  z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
  return z ^ (z >> 31);
}

static double hash_uniform(uint64_t a, uint64_t b) { return (double)(mix(mix(a) ^ b) >> 11) / 9007199254740992.0; }

/* ---- the hierarchy ---------------------------------------------------------------------- */

#define MAX_BLOCKS 256

typedef struct hierarchy {
  phew_amr amr;
  phew_amr_block blocks[MAX_BLOCKS];
  int n_blocks;
  int max_level;
} hierarchy;

static void add_block(hierarchy *h, int level, int64_t x, int64_t y, int64_t z, int64_t nx, int64_t ny, int64_t nz)
{
  phew_amr_block *b = &h->blocks[h->n_blocks++];
  memset(b, 0, sizeof *b);
  b->level = level;
  b->lo[0] = x, b->lo[1] = y, b->lo[2] = z;
  b->dims[0] = nx, b->dims[1] = ny, b->dims[2] = nz;
  if (level > h->max_level)
    h->max_level = level;
}

/* A box of `level` split into sub-blocks of at most `step` cells per axis. */
static void add_split(hierarchy *h, int level, const int64_t lo[3], const int64_t dims[3], const int64_t step[3])
{
  for (int64_t z = 0; z < dims[2]; z += step[2])
    for (int64_t y = 0; y < dims[1]; y += step[1])
      for (int64_t x = 0; x < dims[0]; x += step[0]) {
        const int64_t d[3] = {dims[0] - x < step[0] ? dims[0] - x : step[0],
                              dims[1] - y < step[1] ? dims[1] - y : step[1],
                              dims[2] - z < step[2] ? dims[2] - z : step[2]};
        add_block(h, level, lo[0] + x, lo[1] + y, lo[2] + z, d[0], d[1], d[2]);
      }
}

/* 8x8x6 level 0 (spacing 0.5, origin (-1, 0, 2)) in 8 blocks; level 1 over level-0 cells
 * [2,6)x[2,6)x[1,5) in 8 blocks (one 2 cells thick); level 2 over level-1 [12,20)x[12,20)x[6,14)
 * in 8 blocks, plus a level-2 block at the corner of level 1; level 3: one block in the middle
 * and one at a corner of level 2, so that level-3 leaves touch level-1 leaves; two refined
 * corners of the domain (levels 1 and 2 at the low one, level 1 at the high one) that touch
 * only through the periodic wrap; the low-corner level-1 block is wholly covered by level 2 (no
 * leaf in it). Blocks are listed level by level. */
static void sort_by_level(hierarchy *h)
{
  for (int i = 1; i < h->n_blocks; ++i) /* stable insertion sort */
    for (int j = i; j > 0 && h->blocks[j - 1].level > h->blocks[j].level; --j) {
      const phew_amr_block t = h->blocks[j];
      h->blocks[j] = h->blocks[j - 1];
      h->blocks[j - 1] = t;
    }
}

static void make_hierarchy(hierarchy *h, int periodic)
{
  memset(h, 0, sizeof *h);
  const int64_t n0[3] = {8, 8, 6};
  for (int d = 0; d < 3; ++d) {
    h->amr.level0_dims[d] = n0[d];
    h->amr.periodic[d] = periodic;
    h->amr.spacing[d] = 0.5;
  }
  h->amr.origin[0] = -1.0, h->amr.origin[1] = 0.0, h->amr.origin[2] = 2.0;
  const int64_t zero[3] = {0, 0, 0}, s0[3] = {4, 4, 3};
  add_split(h, 0, zero, n0, s0);
  const int64_t l1lo[3] = {4, 4, 2}, l1dims[3] = {8, 8, 8}, s1[3] = {4, 6, 4};
  add_split(h, 1, l1lo, l1dims, s1);
  const int64_t l2lo[3] = {12, 12, 6}, l2dims[3] = {8, 8, 8}, s2[3] = {4, 4, 4};
  add_split(h, 2, l2lo, l2dims, s2);
  add_block(h, 2, 8, 8, 4, 2, 2, 2); /* level-1 corner (4,4,2): touches level-0 leaves */
  add_block(h, 3, 28, 28, 16, 4, 4, 4);
  add_block(h, 3, 24, 24, 12, 2, 2, 2);
  /* refined corners of the domain that touch each other only through the periodic wrap
   * (level 1 at the low corner with level 2 in it, level 1 at the high corner) */
  add_block(h, 1, 0, 0, 0, 2, 4, 2);
  add_block(h, 1, 14, 12, 10, 2, 4, 2);
  add_block(h, 2, 0, 0, 0, 4, 8, 4); /* covers the whole low-corner level-1 block */
  sort_by_level(h);
  h->amr.n_blocks = h->n_blocks;
  h->amr.blocks = h->blocks;
}

static int64_t level_dim(const hierarchy *h, int l, int d) { return h->amr.level0_dims[d] << l; }

static int64_t level_offset(const hierarchy *h, int l)
{
  int64_t off = 0;
  for (int k = 0; k < l; ++k)
    off += level_dim(h, k, 0) * level_dim(h, k, 1) * level_dim(h, k, 2);
  return off;
}

static int64_t block_size(const phew_amr_block *b) { return b->dims[0] * b->dims[1] * b->dims[2]; }

static int covered(const hierarchy *h, int level, const int64_t idx[3])
{
  for (int b = 0; b < h->n_blocks; ++b) {
    const phew_amr_block *B = &h->blocks[b];
    if (B->level != level + 1)
      continue;
    int overlap = 1;
    for (int d = 0; d < 3; ++d)
      overlap = overlap && 2 * idx[d] < B->lo[d] + B->dims[d] && B->lo[d] < 2 * idx[d] + 2;
    if (overlap)
      return 1;
  }
  return 0;
}

static int wholly_covered_block(const hierarchy *h)
{
  for (int b = 0; b < h->n_blocks; ++b) {
    const phew_amr_block *B = &h->blocks[b];
    int all = 1;
    for (int64_t z = 0; z < B->dims[2] && all; ++z)
      for (int64_t y = 0; y < B->dims[1] && all; ++y)
        for (int64_t x = 0; x < B->dims[0] && all; ++x) {
          const int64_t idx[3] = {B->lo[0] + x, B->lo[1] + y, B->lo[2] + z};
          all = covered(h, B->level, idx);
        }
    if (all)
      return b;
  }
  return -1;
}

/* ---- the density ------------------------------------------------------------------------- */

typedef enum kind { ONE_BLOB, BLOBS, PLATEAUS } kind;

/* Density of a cell from its centre (in level-0 cell units) and its global id (noise). */
static double density(const hierarchy *h, kind k, int level, const int64_t idx[3], int64_t gid)
{
  static const double c[6][3] = {{4.0, 4.0, 3.0}, {2.7, 5.3, 2.4}, {5.4, 2.7, 3.7},
                                 {1.0, 7.0, 0.5}, {7.0, 1.0, 5.3}, {0.1, 0.2, 0.1}};
  static const double w[6] = {0.6, 0.5, 0.5, 0.8, 0.8, 0.6}, ht[6] = {30.0, 22.0, 18.0, 12.0, 15.0, 14.0};
  double v = 1.0 + 0.4 * hash_uniform(gid, 7);
  const double scale = 1.0 / (double)(1 << level);
  for (int b = 0; b < (k == ONE_BLOB ? 1 : 6); ++b) {
    double r2 = 0.0;
    for (int d = 0; d < 3; ++d) {
      double x = ((double)idx[d] + 0.5) * scale - c[b][d];
      const double n = (double)h->amr.level0_dims[d];
      if (h->amr.periodic[d]) {
        if (x > n / 2)
          x -= n;
        if (x < -n / 2)
          x += n;
      }
      r2 += x * x;
    }
    const double width = k == ONE_BLOB ? 3.0 : w[b];
    v += ht[b] * exp(-0.5 * r2 / (width * width));
  }
  if (k == PLATEAUS)
    v = floor(v / 2.0) * 2.0; /* ties across levels and blocks: the global ids order them */
  return v;
}

/* Density of every block cell (all blocks, list order); covered cells NaN. */
static double *all_densities(const hierarchy *h, kind k, int64_t *n_out)
{
  int64_t n = 0;
  for (int b = 0; b < h->n_blocks; ++b)
    n += block_size(&h->blocks[b]);
  double *rho = malloc((size_t)n * sizeof *rho);
  int64_t i = 0;
  for (int b = 0; b < h->n_blocks; ++b) {
    const phew_amr_block *B = &h->blocks[b];
    const int64_t off = level_offset(h, B->level), nx = level_dim(h, B->level, 0), ny = level_dim(h, B->level, 1);
    for (int64_t z = 0; z < B->dims[2]; ++z)
      for (int64_t y = 0; y < B->dims[1]; ++y)
        for (int64_t x = 0; x < B->dims[0]; ++x, ++i) {
          const int64_t idx[3] = {B->lo[0] + x, B->lo[1] + y, B->lo[2] + z};
          rho[i] = covered(h, B->level, idx) ? NAN
                                             : density(h, k, B->level, idx, off + idx[0] + nx * (idx[1] + ny * idx[2]));
        }
  }
  *n_out = n;
  return rho;
}

/* ---- running ------------------------------------------------------------------------------ */

/* PHEW_MESH_AMR with the blocks owned by `rank` (per the owners set in h); `global` holds the
 * densities of all block cells. */
static void find_amr(run *r, const hierarchy *h, const double *global, int rank, int single, const phew_params *p,
                     MPI_Comm *comm)
{
  int64_t n = 0;
  for (int b = 0; b < h->n_blocks; ++b)
    if (h->blocks[b].owner == rank)
      n += block_size(&h->blocks[b]);
  void *rho = malloc((size_t)(n > 0 ? n : 1) * (single ? sizeof(float) : sizeof(double)));
  int64_t g = 0, i = 0;
  for (int b = 0; b < h->n_blocks; ++b) {
    const int64_t s = block_size(&h->blocks[b]);
    if (h->blocks[b].owner == rank)
      for (int64_t c = 0; c < s; ++c, ++i) {
        if (single)
          ((float *)rho)[i] = (float)global[g + c];
        else
          ((double *)rho)[i] = global[g + c];
      }
    g += s;
  }
  labels_alloc(r, n);
  phew_input in;
  memset(&in, 0, sizeof in);
  in.mesh = PHEW_MESH_AMR;
  in.amr = h->amr;
  in.amr.blocks = h->blocks;
  in.amr.n_blocks = h->n_blocks;
  in.density = rho;
  in.density_type = single ? PHEW_FLOAT32 : PHEW_FLOAT64;
  run_find(r, &in, p, comm);
  free(rho);
}

/* Catalogues of two different mesh views of the same cells: ids, counts and densities exactly,
 * masses, volumes and centres to 1e-12. */
static int close_enough(double a, double b) { return fabs(a - b) <= 1e-12 * fmax(fabs(a), fabs(b)) + 1e-300; }

static int same_objects(const phew_object *x, const phew_object *y, int64_t n)
{
  for (int64_t i = 0; i < n; ++i) {
    const phew_object *a = &x[i], *b = &y[i];
    if (a->id != b->id || a->halo_id != b->halo_id || a->parent_id != b->parent_id || a->level != b->level ||
        a->peak_id != b->peak_id || a->n_cells != b->n_cells || a->n_clumps != b->n_clumps ||
        a->peak_density != b->peak_density || a->min_density != b->min_density ||
        a->key_saddle_density != b->key_saddle_density || a->relevance != b->relevance ||
        !close_enough(a->mass, b->mass) || !close_enough(a->volume, b->volume) ||
        !close_enough(a->mean_density, b->mean_density))
      return 0;
    for (int d = 0; d < 3; ++d)
      if (a->peak_position[d] != b->peak_position[d] || fabs(a->center_of_mass[d] - b->center_of_mass[d]) > 1e-9)
        return 0;
  }
  return 1;
}

static int same_catalogue(const phew_clump_result *a, const phew_clump_result *b)
{
  return a->n_clumps == b->n_clumps && a->n_haloes == b->n_haloes && a->n_nodes == b->n_nodes &&
         same_objects(a->clumps, b->clumps, a->n_clumps) && same_objects(a->haloes, b->haloes, a->n_haloes);
}

typedef enum distribution { ROUND_ROBIN, CONTIGUOUS, ONE_RANK, RANDOM, COVERED_ONLY } distribution;
static const char *distribution_name[] = {"round robin", "contiguous, level 0 on rank 0", "all on the last rank",
                                          "random", "last rank: only a covered block"};

/* The first block whose cells are all covered by the next level. */
static int wholly_covered_block(const hierarchy *h);

static void distribute(hierarchy *h, distribution how, int size, unsigned seed)
{
  int n0 = 0;
  for (int b = 0; b < h->n_blocks; ++b)
    n0 += h->blocks[b].level == 0;
  for (int b = 0; b < h->n_blocks; ++b) {
    int owner = 0;
    switch (how) {
    case ROUND_ROBIN: owner = b % size; break;
    case CONTIGUOUS: /* blocks are listed level by level: level 0 first, all of it on rank 0 */
      owner = (b < n0 || size == 1) ? 0 : 1 + (int)((int64_t)(b - n0) * (size - 1) / (h->n_blocks - n0));
      break;
    case ONE_RANK: owner = size - 1; break;
    case RANDOM: owner = (int)(mix(seed * 1000003u + (unsigned)b) % (uint64_t)size); break;
    case COVERED_ONLY: /* the last rank passes one block without a single leaf */
      owner = size == 1 ? 0 : b == wholly_covered_block(h) ? size - 1 : b % (size - 1);
      break;
    }
    h->blocks[b].owner = owner;
  }
}

/* Labels of every rank gathered on rank 0 in global block order (3 per cell). */
static int64_t *gather_labels(const hierarchy *h, const run *r, int rank, int size, MPI_Comm comm, int64_t *n_total)
{
  int total = 0, *displs = NULL;
  int64_t *all = gather_cell_labels(NULL, r, r->n, comm, &total, &displs), *ordered = NULL;
  if (rank == 0) {
    int64_t n = 0;
    for (int b = 0; b < h->n_blocks; ++b)
      n += block_size(&h->blocks[b]);
    ordered = malloc((size_t)(3 * n + 1) * sizeof *ordered);
    int64_t *cursor = calloc((size_t)size, sizeof *cursor), o = 0;
    for (int b = 0; b < h->n_blocks; ++b) {
      const int q = h->blocks[b].owner;
      const int64_t s = 3 * block_size(&h->blocks[b]);
      memcpy(ordered + o, all + displs[q] + cursor[q], (size_t)s * sizeof *ordered);
      cursor[q] += s;
      o += s;
    }
    *n_total = n;
    free(cursor);
  }
  free(all);
  free(displs);
  return ordered;
}

/* One AMR case: 0 if the distributed answer equals the serial one. */
static int check_amr(const char *name, kind k, int periodic, distribution how, unsigned seed, int single,
                     int saddle_merging, double mass_threshold, unsigned order_seed)
{
  int rank, size;
  MPI_Comm comm = MPI_COMM_WORLD, self = MPI_COMM_SELF;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  hierarchy h;
  make_hierarchy(&h, periodic);
  int64_t n_all;
  double *global = all_densities(&h, k, &n_all);
  phew_params p;
  phew_params_init(&p);
  p.density_threshold = k == ONE_BLOB ? 3.0 : 2.5;
  p.relevance_threshold = 1.2;
  p.saddle_merging = saddle_merging;
  p.saddle_threshold = 6.0;
  p.mass_threshold = mass_threshold;
  p.peak_order_seed = order_seed;

  if (wholly_covered_block(&h) < 0) {
    printf("%s: the hierarchy lost its wholly covered block\n", name);
    free(global);
    return 1;
  }
  distribute(&h, how, size, seed);
  run par;
  find_amr(&par, &h, global, rank, single, &p, &comm);
  int64_t n_total = 0;
  int64_t *labels = gather_labels(&h, &par, rank, size, comm, &n_total);

  int failures = 0;
  if (rank == 0) {
    hierarchy serial = h;
    serial.amr.blocks = serial.blocks;
    for (int b = 0; b < serial.n_blocks; ++b)
      serial.blocks[b].owner = 0;
    run ser;
    find_amr(&ser, &serial, global, 0, single, &p, &self);
    if (ser.status != PHEW_OK || par.status != PHEW_OK) {
      printf("%s: status serial %d (%s), parallel %d (%s)\n", name, ser.status, ser.context.message, par.status,
             par.context.message);
      ++failures;
    } else {
      int64_t wrong = 0, first = -1, leaves = 0;
      for (int64_t i = 0; i < n_total; ++i) {
        const int bad = labels[3 * i] != ser.patch[i] || labels[3 * i + 1] != ser.clump[i] ||
                        labels[3 * i + 2] != ser.halo[i];
        if (bad && first < 0)
          first = i;
        wrong += bad;
        leaves += !isnan(global[i]);
        if (isnan(global[i]) && (ser.patch[i] != -1 || ser.clump[i] != -1 || ser.halo[i] != -1)) {
          printf("%s: covered block cell %lld has labels in the serial run\n", name, (long long)i);
          ++failures;
          break;
        }
      }
      if (wrong) {
        printf("%s: %lld block-cell labels differ from the serial run; first: cell %lld, parallel %lld %lld %lld, "
               "serial %lld %lld %lld\n",
               name, (long long)wrong, (long long)first, (long long)labels[3 * first], (long long)labels[3 * first + 1],
               (long long)labels[3 * first + 2], (long long)ser.patch[first], (long long)ser.clump[first],
               (long long)ser.halo[first]);
        ++failures;
      }
      failures += compare_with_serial(name, &ser.result, &par.result, 1);
      if (ser.result.stats.n_cells != leaves) {
        printf("%s: %lld cells counted, %lld leaves\n", name, (long long)ser.result.stats.n_cells, (long long)leaves);
        ++failures;
      }
      if (ser.result.n_clumps < 1 || (k != ONE_BLOB && ser.result.n_clumps < 3)) {
        printf("%s: only %lld clumps: a dull case\n", name, (long long)ser.result.n_clumps);
        ++failures;
      }
      /* the one blob is one clump with cells in blocks of every rank */
      if (k == ONE_BLOB && how == ROUND_ROBIN) {
        int *has = calloc((size_t)size, sizeof *has), all_ranks = 1;
        int64_t c = 0;
        for (int b = 0; b < h.n_blocks; ++b)
          for (int64_t i = 0; i < block_size(&h.blocks[b]); ++i, ++c)
            if (ser.clump[c] == 0)
              has[h.blocks[b].owner] = 1;
        for (int q = 0; q < size; ++q)
          all_ranks &= has[q];
        if (!all_ranks) {
          printf("%s: the blob does not reach the blocks of every rank\n", name);
          ++failures;
        }
        free(has);
      }
      printf("%-44s %4lld leaves %3lld clumps %3lld haloes %3lld nodes: %s\n", name, (long long)leaves,
             (long long)ser.result.n_clumps, (long long)ser.result.n_haloes, (long long)ser.result.n_nodes,
             failures ? "FAIL" : "ok");
    }
    run_free(&ser);
  } else if (par.status == PHEW_OK && par.result.n_clumps != 0) {
    printf("%s: rank %d has %lld clumps (tables belong on rank 0)\n", name, rank, (long long)par.result.n_clumps);
    ++failures;
  }
  MPI_Allreduce(MPI_IN_PLACE, &failures, 1, MPI_INT, MPI_SUM, comm);
  run_free(&par);
  free(global);
  free(labels);
  return failures;
}

/* ---- the leaf graph ------------------------------------------------------------------------ */

typedef struct leaf_graph {
  int64_t n;
  int64_t *gid, *block, *offsets, *neighbours;
  double *rho, *volume, *position;
} leaf_graph;

static void leaf_graph_free(leaf_graph *g)
{
  free(g->gid);
  free(g->block);
  free(g->offsets);
  free(g->neighbours);
  free(g->rho);
  free(g->volume);
  free(g->position);
}

static int touch(int64_t a0, int64_t a1, int64_t b0, int64_t b1, int64_t n, int periodic)
{
  if (a0 <= b1 && b0 <= a1)
    return 1;
  return periodic && ((a0 <= b1 + n && b0 + n <= a1) || (a0 <= b1 - n && b0 - n <= a1));
}

/* Leaves in block list order, neighbours by brute force over the leaves of the touching
 * level-0 cells (cells that touch lie in the same or in touching level-0 cells). */
static void build_leaf_graph(leaf_graph *g, const hierarchy *h, const double *global)
{
  const int L = h->max_level;
  int64_t total = 0;
  for (int b = 0; b < h->n_blocks; ++b)
    total += block_size(&h->blocks[b]);
  memset(g, 0, sizeof *g);
  g->gid = malloc((size_t)total * sizeof *g->gid);
  g->block = malloc((size_t)total * sizeof *g->block);
  g->rho = malloc((size_t)total * sizeof *g->rho);
  g->volume = malloc((size_t)total * sizeof *g->volume);
  g->position = malloc((size_t)total * 3 * sizeof *g->position);
  int64_t(*box)[6] = malloc((size_t)total * sizeof *box);
  int64_t c = 0;
  for (int b = 0; b < h->n_blocks; ++b) {
    const phew_amr_block *B = &h->blocks[b];
    const int l = B->level;
    const int64_t s = (int64_t)1 << (L - l);
    for (int64_t z = 0; z < B->dims[2]; ++z)
      for (int64_t y = 0; y < B->dims[1]; ++y)
        for (int64_t x = 0; x < B->dims[0]; ++x, ++c) {
          const int64_t idx[3] = {B->lo[0] + x, B->lo[1] + y, B->lo[2] + z};
          if (covered(h, l, idx))
            continue;
          const int64_t i = g->n++;
          g->gid[i] = level_offset(h, l) + idx[0] + level_dim(h, l, 0) * (idx[1] + level_dim(h, l, 1) * idx[2]);
          g->block[i] = b;
          g->rho[i] = global[c];
          g->volume[i] = 1.0;
          for (int d = 0; d < 3; ++d) {
            const double hd = h->amr.spacing[d] / (double)(1 << l);
            g->volume[i] *= hd;
            g->position[3 * i + d] = h->amr.origin[d] + ((double)idx[d] + 0.5) * hd;
            box[i][d] = idx[d] * s;
            box[i][d + 3] = (idx[d] + 1) * s;
          }
        }
  }
  /* buckets by level-0 cell */
  const int64_t *n0 = h->amr.level0_dims, s0 = (int64_t)1 << L;
  const int64_t n_buckets = n0[0] * n0[1] * n0[2];
  int64_t *start = calloc((size_t)n_buckets + 1, sizeof *start), *members = malloc((size_t)g->n * sizeof *members);
  int64_t *home = malloc((size_t)g->n * sizeof *home);
  for (int64_t i = 0; i < g->n; ++i) {
    home[i] = box[i][0] / s0 + n0[0] * (box[i][1] / s0 + n0[1] * (box[i][2] / s0));
    start[home[i] + 1]++;
  }
  for (int64_t k = 0; k < n_buckets; ++k)
    start[k + 1] += start[k];
  int64_t *fill = calloc((size_t)n_buckets, sizeof *fill);
  for (int64_t i = 0; i < g->n; ++i)
    members[start[home[i]] + fill[home[i]]++] = i;
  int64_t N[3];
  for (int d = 0; d < 3; ++d)
    N[d] = n0[d] << L;
  int64_t cap = 64 * g->n, used = 0;
  g->neighbours = malloc((size_t)cap * sizeof *g->neighbours);
  g->offsets = malloc((size_t)(g->n + 1) * sizeof *g->offsets);
  g->offsets[0] = 0;
  char *seen = calloc((size_t)g->n, 1);
  for (int64_t i = 0; i < g->n; ++i) {
    const int64_t hx = box[i][0] / s0, hy = box[i][1] / s0, hz = box[i][2] / s0;
    int64_t visited[27], n_visited = 0;
    const int64_t first = used;
    for (int dz = -1; dz <= 1; ++dz)
      for (int dy = -1; dy <= 1; ++dy)
        for (int dx = -1; dx <= 1; ++dx) {
          int64_t q[3] = {hx + dx, hy + dy, hz + dz};
          int ok = 1;
          for (int d = 0; d < 3; ++d)
            if (q[d] < 0 || q[d] >= n0[d]) {
              if (!h->amr.periodic[d])
                ok = 0;
              q[d] = (q[d] + n0[d]) % n0[d];
            }
          if (!ok)
            continue;
          const int64_t bk = q[0] + n0[0] * (q[1] + n0[1] * q[2]);
          int dup = 0;
          for (int64_t v = 0; v < n_visited; ++v)
            dup |= visited[v] == bk;
          if (dup)
            continue;
          visited[n_visited++] = bk;
          for (int64_t m = start[bk]; m < start[bk + 1]; ++m) {
            const int64_t j = members[m];
            if (j == i || seen[j])
              continue;
            int t = 1;
            for (int d = 0; d < 3 && t; ++d)
              t = touch(box[i][d], box[i][d + 3], box[j][d], box[j][d + 3], N[d], h->amr.periodic[d]);
            if (t) {
              if (used == cap) {
                cap *= 2;
                g->neighbours = realloc(g->neighbours, (size_t)cap * sizeof *g->neighbours);
              }
              g->neighbours[used++] = j;
              seen[j] = 1;
            }
          }
        }
    for (int64_t k = first; k < used; ++k)
      seen[g->neighbours[k]] = 0;
    g->offsets[i + 1] = used;
  }
  free(seen);
  free(start);
  free(members);
  free(home);
  free(fill);
  free(box);
}

/* A graph run: the cells listed by `cells` (indices into g; the first n_active are active,
 * the rest ghosts owned by ghost_owner[]), stored in a shuffled local order. Labels come back
 * per listed cell (in the order of `cells`). */
static void find_graph(run *r, const leaf_graph *g, const hierarchy *h, const int64_t *cells, int64_t n_active,
                       int64_t n_ghost, const int32_t *ghost_owner, int garbage_ghosts, unsigned shuffle,
                       MPI_Comm *comm, const phew_params *p)
{
  const int64_t n = n_active + n_ghost;
  const size_t m = (size_t)(n > 0 ? n : 1);
  int64_t *perm = malloc(m * sizeof *perm), *local_of = malloc((size_t)(g->n > 0 ? g->n : 1) * sizeof *local_of);
  for (int64_t i = 0; i < n; ++i)
    perm[i] = i;
  for (int64_t i = n - 1; i > 0 && shuffle; --i) {
    const int64_t j = (int64_t)(mix(shuffle * 7919u + (uint64_t)i) % (uint64_t)(i + 1));
    const int64_t t = perm[i];
    perm[i] = perm[j];
    perm[j] = t;
  }
  /* local slot perm[i] holds listed cell i */
  for (int64_t i = 0; i < g->n; ++i)
    local_of[i] = -1;
  for (int64_t i = 0; i < n; ++i)
    local_of[cells[i]] = perm[i];
  unsigned char *ghost = calloc(m, 1);
  int32_t *owner = calloc(m, sizeof *owner);
  int64_t *gid = malloc(m * sizeof *gid), *offsets = malloc((m + 1) * sizeof *offsets);
  double *rho = malloc(m * sizeof *rho), *volume = malloc(m * sizeof *volume),
         *position = malloc(3 * m * sizeof *position);
  int64_t *count = calloc(m, sizeof *count);
  for (int64_t i = 0; i < n_active; ++i) /* neighbour counts of active cells; ghosts list none */
    count[perm[i]] = g->offsets[cells[i] + 1] - g->offsets[cells[i]];
  offsets[0] = 0;
  for (int64_t s = 0; s < n; ++s)
    offsets[s + 1] = offsets[s] + count[s];
  int64_t *nb = malloc((size_t)(offsets[n] > 0 ? offsets[n] : 1) * sizeof *nb);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t c = cells[i], s = perm[i];
    gid[s] = g->gid[c];
    volume[s] = g->volume[c];
    for (int d = 0; d < 3; ++d)
      position[3 * s + d] = g->position[3 * c + d];
    if (i < n_active) {
      rho[s] = g->rho[c];
      for (int64_t k = g->offsets[c], o = offsets[s]; k < g->offsets[c + 1]; ++k, ++o)
        nb[o] = local_of[g->neighbours[k]]; /* every neighbour is listed (active or ghost) */
    } else {
      ghost[s] = 1;
      owner[s] = ghost_owner[i - n_active];
      rho[s] = garbage_ghosts ? NAN : g->rho[c]; /* filled by the core from the owners */
    }
  }
  labels_alloc(r, n);
  int64_t *a = malloc(m * sizeof *a), *b = malloc(m * sizeof *b), *cc = malloc(m * sizeof *cc);
  for (size_t i = 0; i < m; ++i)
    a[i] = b[i] = cc[i] = -7;
  phew_input in;
  memset(&in, 0, sizeof in);
  in.mesh = PHEW_MESH_GRAPH;
  in.graph.n_cells = n;
  in.graph.ghost = ghost;
  in.graph.owner = owner;
  in.graph.global_id = gid;
  in.graph.offsets = offsets;
  in.graph.neighbours = nb;
  in.graph.volume = volume;
  in.graph.position = position;
  for (int d = 0; d < 3; ++d) {
    in.graph.box_origin[d] = h->amr.origin[d];
    in.graph.box_size[d] = (double)h->amr.level0_dims[d] * h->amr.spacing[d];
    in.graph.periodic[d] = h->amr.periodic[d];
  }
  in.density = rho;
  in.density_type = PHEW_FLOAT64;
  r->context.mpi_comm = comm;
  phew_labels labels = {a, b, cc, NULL};
  r->status = phew_find_clumps(&r->context, &in, p, &labels, &r->result);
  for (int64_t i = 0; i < n; ++i) {
    r->patch[i] = a[perm[i]];
    r->clump[i] = b[perm[i]];
    r->halo[i] = cc[perm[i]];
  }
  free(a), free(b), free(cc);
  free(perm), free(local_of), free(ghost), free(owner), free(gid), free(offsets), free(rho), free(volume);
  free(position), free(count), free(nb);
}

/* The leaf graph distributed over the ranks (leaf owner: the owner of its block under `how`,
 * or, for per_leaf, a hash of the leaf), against the whole graph on rank 0 alone. */
static int check_graph(const char *name, kind k, int periodic, distribution how, int per_leaf, int garbage_ghosts,
                       unsigned seed)
{
  int rank, size;
  MPI_Comm comm = MPI_COMM_WORLD, self = MPI_COMM_SELF;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  hierarchy h;
  make_hierarchy(&h, periodic);
  distribute(&h, how, size, seed);
  int64_t n_all;
  double *global = all_densities(&h, k, &n_all);
  leaf_graph g;
  build_leaf_graph(&g, &h, global);
  phew_params p;
  phew_params_init(&p);
  p.density_threshold = k == ONE_BLOB ? 3.0 : 2.5;
  p.relevance_threshold = 1.2;
  p.saddle_merging = 1;
  p.saddle_threshold = 6.0;

  int32_t *owner_of = malloc((size_t)g.n * sizeof *owner_of);
  for (int64_t i = 0; i < g.n; ++i)
    owner_of[i] = per_leaf ? (int32_t)(mix(seed + (uint64_t)g.gid[i]) % (uint64_t)size) : h.blocks[g.block[i]].owner;
  /* my active cells, then the ghosts: other ranks' neighbours of my cells */
  int64_t *cells = malloc((size_t)(g.n + 1) * sizeof *cells), n_active = 0, n_ghost = 0;
  int32_t *ghost_owner = malloc((size_t)(g.n + 1) * sizeof *ghost_owner);
  char *listed = calloc((size_t)g.n, 1);
  for (int64_t i = 0; i < g.n; ++i)
    if (owner_of[i] == rank) {
      cells[n_active++] = i;
      listed[i] = 1;
    }
  for (int64_t a = 0; a < n_active; ++a)
    for (int64_t k2 = g.offsets[cells[a]]; k2 < g.offsets[cells[a] + 1]; ++k2) {
      const int64_t j = g.neighbours[k2];
      if (!listed[j]) {
        listed[j] = 1;
        ghost_owner[n_ghost] = owner_of[j];
        cells[n_active + n_ghost++] = j;
      }
    }
  run par;
  find_graph(&par, &g, &h, cells, n_active, n_ghost, ghost_owner, garbage_ghosts, seed, &comm, &p);

  /* (gid, patch, clump, halo) of every listed cell, ghosts included, to rank 0 */
  int total = 0;
  int64_t *all = gather_cell_labels(cells, &par, n_active + n_ghost, comm, &total, NULL);

  int failures = 0;
  if (rank == 0) {
    int64_t *every = malloc((size_t)g.n * sizeof *every);
    for (int64_t i = 0; i < g.n; ++i)
      every[i] = i;
    run ser;
    find_graph(&ser, &g, &h, every, g.n, 0, NULL, 0, 0, &self, &p);
    if (ser.status != PHEW_OK || par.status != PHEW_OK) {
      printf("%s: status serial %d (%s), parallel %d (%s)\n", name, ser.status, ser.context.message, par.status,
             par.context.message);
      ++failures;
    } else {
      int64_t wrong = 0, first = -1;
      for (int i = 0; i < total / 4; ++i) {
        const int64_t c = all[4 * i];
        const int bad = all[4 * i + 1] != ser.patch[c] || all[4 * i + 2] != ser.clump[c] ||
                        all[4 * i + 3] != ser.halo[c];
        if (bad && first < 0)
          first = i;
        wrong += bad;
      }
      if (wrong) {
        const int64_t c = all[4 * first];
        printf("%s: %lld cell labels (active or ghost) differ from the serial graph; first: global id %lld, parallel "
               "%lld %lld %lld, serial %lld %lld %lld\n",
               name, (long long)wrong, (long long)g.gid[c], (long long)all[4 * first + 1],
               (long long)all[4 * first + 2], (long long)all[4 * first + 3], (long long)ser.patch[c],
               (long long)ser.clump[c], (long long)ser.halo[c]);
        ++failures;
      }
      failures += compare_with_serial(name, &ser.result, &par.result, 1);
      if (ser.result.n_clumps < 1) {
        printf("%s: no clumps\n", name);
        ++failures;
      }
      /* the same leaves through PHEW_MESH_AMR (serial): the same labels and catalogue */
      hierarchy serial = h;
      serial.amr.blocks = serial.blocks;
      for (int b = 0; b < serial.n_blocks; ++b)
        serial.blocks[b].owner = 0;
      run amr;
      find_amr(&amr, &serial, global, 0, 0, &p, &self);
      int64_t differ = 0;
      for (int64_t i = 0, c = 0, leaf = 0; amr.status == PHEW_OK && c < amr.n; ++c)
        if (!isnan(global[c])) {
          i = leaf++;
          differ += amr.patch[c] != ser.patch[i] || amr.clump[c] != ser.clump[i] || amr.halo[c] != ser.halo[i];
        }
      if (amr.status != PHEW_OK || differ || !same_catalogue(&amr.result, &ser.result)) {
        printf("%s: the AMR path on the same leaves differs from the graph: status %d (%s), %lld labels, "
               "catalogue %s\n",
               name, amr.status, amr.context.message, (long long)differ,
               amr.status == PHEW_OK && same_catalogue(&amr.result, &ser.result) ? "equal" : "different");
        ++failures;
      }
      run_free(&amr);
      printf("%-44s %4lld cells %3lld clumps: %s\n", name, (long long)g.n, (long long)ser.result.n_clumps,
             failures ? "FAIL" : "ok");
    }
    run_free(&ser);
    free(every);
  } else if (par.status == PHEW_OK && par.result.n_clumps != 0) {
    printf("%s: rank %d has %lld clumps (tables belong on rank 0)\n", name, rank, (long long)par.result.n_clumps);
    ++failures;
  }
  MPI_Allreduce(MPI_IN_PLACE, &failures, 1, MPI_INT, MPI_SUM, comm);
  run_free(&par);
  leaf_graph_free(&g);
  free(global), free(owner_of), free(cells), free(ghost_owner), free(listed), free(all);
  return failures;
}

/* ---- errors -------------------------------------------------------------------------------- */

/* what 0: NaN in a leaf cell of the last rank's first block (every rank must fail alike);
 * what 1: NaN in a covered cell of that block (fine);
 * what 2: a block owner out of range (every rank sees it). */
static int check_error(const char *name, int what)
{
  int rank, size;
  MPI_Comm comm = MPI_COMM_WORLD;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  hierarchy h;
  make_hierarchy(&h, 1);
  distribute(&h, ROUND_ROBIN, size, 0);
  int64_t n_all;
  double *global = all_densities(&h, BLOBS, &n_all);
  const int culprit = size - 1;
  /* the culprit's first block with both a leaf cell and (for what 1) a covered cell */
  int64_t c = 0, target = -1;
  for (int b = 0; b < h.n_blocks && target < 0; ++b) {
    const int64_t s = block_size(&h.blocks[b]);
    if (h.blocks[b].owner == culprit) {
      int64_t leaf = -1, cov = -1;
      for (int64_t i = 0; i < s; ++i) {
        if (isnan(global[c + i]) && cov < 0)
          cov = c + i;
        if (!isnan(global[c + i]) && leaf < 0)
          leaf = c + i;
      }
      target = what == 1 ? cov : leaf;
    }
    c += s;
  }
  if (what == 1 && target < 0) { /* the culprit holds no covered cell: nothing to test */
    free(global);
    return 0;
  }
  if (what == 0)
    global[target] = NAN;
  if (what == 2)
    h.blocks[h.n_blocks - 1].owner = size; /* no such rank */
  phew_params p;
  phew_params_init(&p);
  p.density_threshold = 2.5;
  run r;
  find_amr(&r, &h, global, rank, 0, &p, &comm);
  int failures = 0;
  const phew_status want = what == 0 ? PHEW_ERROR_DATA : what == 1 ? PHEW_OK : PHEW_ERROR_ARGUMENT;
  if (r.status != want) {
    printf("%s: rank %d: status %d, expected %d ('%s')\n", name, rank, r.status, want, r.context.message);
    ++failures;
  }
  if (want != PHEW_OK) {
    if (r.context.message[0] == '\0' || r.result.n_clumps != 0) {
      printf("%s: rank %d: no message or a catalogue after an error\n", name, rank);
      ++failures;
    }
    for (int64_t i = 0; i < r.n; ++i)
      if (r.patch[i] != -1 || r.clump[i] != -1 || r.halo[i] != -1) {
        printf("%s: rank %d: labels not reset to -1 after the error\n", name, rank);
        ++failures;
        break;
      }
  }
  /* every rank holds the same status and message */
  char message[512], *messages = NULL;
  memset(message, 0, sizeof message);
  strncpy(message, r.context.message, sizeof message - 1);
  int status = (int)r.status, lo = status, hi = status;
  MPI_Allreduce(&status, &lo, 1, MPI_INT, MPI_MIN, comm);
  MPI_Allreduce(&status, &hi, 1, MPI_INT, MPI_MAX, comm);
  if (rank == 0)
    messages = malloc((size_t)size * sizeof message);
  MPI_Gather(message, (int)sizeof message, MPI_CHAR, messages, (int)sizeof message, MPI_CHAR, 0, comm);
  if (rank == 0) {
    if (lo != hi) {
      printf("%s: the ranks return different statuses (%d..%d)\n", name, lo, hi);
      ++failures;
    }
    for (int q = 1; q < size; ++q)
      if (strcmp(messages, messages + (size_t)q * sizeof message) != 0) {
        printf("%s: rank %d says '%s', rank 0 '%s'\n", name, q, messages + (size_t)q * sizeof message, messages);
        ++failures;
      }
    free(messages);
  }
  MPI_Allreduce(MPI_IN_PLACE, &failures, 1, MPI_INT, MPI_SUM, comm);
  if (rank == 0)
    printf("%-44s every rank: status %d '%s': %s\n", name, r.status, r.context.message, failures ? "FAIL" : "ok");
  run_free(&r);
  free(global);
  return failures;
}

int main(int argc, char **argv)
{
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int failures = 0;
  const kind kinds[3] = {BLOBS, ONE_BLOB, PLATEAUS};
  const char *kind_name[3] = {"blobs", "one blob", "plateaus"};
  char name[128];
  for (int how = ROUND_ROBIN; how <= COVERED_ONLY; ++how)
    for (int k = 0; k < 3; ++k)
      for (int periodic = 0; periodic < 2; ++periodic) {
        snprintf(name, sizeof name, "amr %s, %s, %s", kind_name[k], periodic ? "periodic" : "open",
                 distribution_name[how]);
        failures += check_amr(name, kinds[k], periodic, (distribution)how, 11u + (unsigned)(k + 3 * periodic), 0, 1,
                              0.0, 0);
      }
  failures += check_amr("amr blobs f32, no saddle merging", BLOBS, 1, RANDOM, 5, 1, 0, 0.0, 0);
  failures += check_amr("amr blobs, mass threshold 7", BLOBS, 0, ROUND_ROBIN, 6, 0, 1, 7.0, 0);
  failures += check_amr("amr blobs, shuffled peak order", BLOBS, 1, CONTIGUOUS, 7, 0, 1, 0.0, 9);
  failures += check_graph("graph blobs, block owners", BLOBS, 1, ROUND_ROBIN, 0, 0, 21);
  failures += check_graph("graph one blob, random cell owners", ONE_BLOB, 0, RANDOM, 1, 0, 22);
  failures += check_graph("graph plateaus, cell owners, NaN ghosts", PLATEAUS, 1, RANDOM, 1, 1, 23);
  failures += check_graph("graph blobs, contiguous owners", BLOBS, 0, CONTIGUOUS, 0, 0, 24);
  failures += check_error("amr NaN in a leaf on one rank", 0);
  failures += check_error("amr NaN in a covered cell on one rank", 1);
  failures += check_error("amr block owner out of range", 2);
  if (rank == 0)
    printf("%s\n", failures ? "FAILED" : "all cases identical to the serial run");
  MPI_Finalize();
  return failures ? 1 : 0;
}
