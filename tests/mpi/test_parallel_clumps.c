/* Distributed PHEW gives exactly the serial answer: every rank finds clumps in its block of
 * a field, and rank 0 compares the gathered labels (active and ghost cells) and the tables,
 * byte for byte, with a serial run on the whole grid. Run under mpiexec with any number of
 * ranks; the fields cover smooth and noisy data, plateaus, peaks on block boundaries, one
 * clump over every rank, ranks without test cells, thin blocks, periodic or not. */
#include "mpi_test_util.h"

#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* SPARSE: 12 high blobs, so that ten times the mean density lies below most peaks. */
typedef enum kind { SMOOTH, QUANTIZED, ONE_BLOB, CORNER, BOUNDARY_PEAK, EXTREME, SPARSE } kind;

/* EXTREME: the smooth field mapped monotonically onto 10^(2 (v - 50)), so that one structure
 * spans hundreds of decades (exact sums must still give the same bits on any split). */
static double extreme(double v) { return pow(10.0, (v - 50.0) * 2.0); }

static uint64_t next(uint64_t *state)
{
  uint64_t z = (*state += UINT64_C(0x9E3779B97F4A7C15));
  z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
  z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
  return z ^ (z >> 31);
}

static double uniform(uint64_t *s) { return (double)(next(s) >> 11) / 9007199254740992.0; }

/* Periodic distance along one axis, or plain distance. */
static double axis_distance(double a, double b, int64_t n, int periodic)
{
  double d = fabs(a - b);
  if (periodic && d > 0.5 * (double)n)
    d = (double)n - d;
  return d;
}

/* The whole field, the same on every rank. */
static double *make_field(kind k, const int64_t n[3], int periodic, unsigned seed)
{
  const int64_t total = n[0] * n[1] * n[2];
  double *rho = malloc((size_t)total * sizeof *rho);
  uint64_t s = seed;
  int n_blobs = k == ONE_BLOB || k == CORNER || k == BOUNDARY_PEAK ? 1 : k == SPARSE ? 12 : 50;
  double centre[50][3], width[50], height[50];
  for (int b = 0; b < n_blobs; ++b) {
    for (int d = 0; d < 3; ++d)
      centre[b][d] = uniform(&s) * (double)n[d];
    width[b] = 0.7 + 1.0 * uniform(&s);
    height[b] = k == SPARSE ? 100.0 + 300.0 * uniform(&s) : 20.0 + 80.0 * uniform(&s);
  }
  if (k == ONE_BLOB) {
    for (int d = 0; d < 3; ++d)
      centre[0][d] = 0.5 * (double)n[d];
    width[0] = (double)(n[0] + n[1] + n[2]);
  }
  if (k == CORNER)
    for (int d = 0; d < 3; ++d)
      centre[0][d] = 1.0;
  if (k == BOUNDARY_PEAK) /* blocks split axes at n*i/p: put the peak on the first cell of a block */
    for (int d = 0; d < 3; ++d)
      centre[0][d] = (double)(n[d] / 2);
  for (int64_t z = 0; z < n[2]; ++z)
    for (int64_t y = 0; y < n[1]; ++y)
      for (int64_t x = 0; x < n[0]; ++x) {
        const double c[3] = {(double)x, (double)y, (double)z};
        double v = k == CORNER ? 0.0 : 1.0 + 2.0 * uniform(&s);
        for (int b = 0; b < n_blobs; ++b) {
          double r2 = 0.0;
          for (int d = 0; d < 3; ++d) {
            const double dd = axis_distance(c[d], centre[b][d], n[d], periodic);
            r2 += dd * dd;
          }
          v += height[b] * exp(-0.5 * r2 / (width[b] * width[b]));
        }
        if (k == QUANTIZED)
          v = floor(v / 4.0) * 4.0; /* plateaus everywhere, across block boundaries too */
        if (k == CORNER && v < 1e-3)
          v = 0.0;
        if (k == EXTREME)
          v = extreme(v);
        rho[x + n[0] * (y + n[1] * z)] = v;
      }
  return rho;
}

static int64_t wrap(int64_t c, int64_t n) { return c < 0 ? c + n : (c >= n ? c - n : c); }

static void find(run *r, const phew_grid *g, const double *global, int single, const phew_params *p, MPI_Comm *comm)
{
  const int64_t n = g->stored_dims[0] * g->stored_dims[1] * g->stored_dims[2];
  void *rho = malloc((size_t)(n > 0 ? n : 1) * (single ? sizeof(float) : sizeof(double)));
  for (int64_t z = 0; z < g->stored_dims[2]; ++z)
    for (int64_t y = 0; y < g->stored_dims[1]; ++y)
      for (int64_t x = 0; x < g->stored_dims[0]; ++x) {
        const int64_t gx = wrap(g->stored_offset[0] + x, g->global_dims[0]);
        const int64_t gy = wrap(g->stored_offset[1] + y, g->global_dims[1]);
        const int64_t gz = wrap(g->stored_offset[2] + z, g->global_dims[2]);
        const double v = global[gx + g->global_dims[0] * (gy + g->global_dims[1] * gz)];
        const int64_t i = x + g->stored_dims[0] * (y + g->stored_dims[1] * z);
        if (single)
          ((float *)rho)[i] = (float)v;
        else
          ((double *)rho)[i] = v;
      }
  labels_alloc(r, n);
  phew_input in;
  memset(&in, 0, sizeof in);
  in.mesh = PHEW_MESH_STRUCTURED;
  in.grid = *g;
  in.density = rho;
  in.density_type = single ? PHEW_FLOAT32 : PHEW_FLOAT64;
  run_find(r, &in, p, comm);
  free(rho);
}

/* Masses and volumes positive and finite, mean densities and centres finite: exact sums keep
 * them right whatever the dynamic range. */
static int masses_sane(const phew_clump_result *r)
{
  for (int64_t i = 0; i < r->n_clumps + r->n_haloes; ++i) {
    const phew_object *o = i < r->n_clumps ? &r->clumps[i] : &r->haloes[i - r->n_clumps];
    if (!(o->mass > 0.0 && isfinite(o->mass) && o->volume > 0.0 && isfinite(o->volume) &&
          o->mean_density >= o->min_density && o->mean_density <= o->peak_density))
      return 0;
    for (int d = 0; d < 3; ++d)
      if (!isfinite(o->center_of_mass[d]))
        return 0;
  }
  for (int64_t i = 0; i < r->n_nodes; ++i)
    if (!(r->nodes[i].mass > 0.0 && isfinite(r->nodes[i].mass)))
      return 0;
  return 1;
}

/* The thresholds used and the mean density, the same bits on every rank as in the serial
 * run (ser: rank 0 only); 0 if so. */
static int same_thresholds(const char *name, const phew_clump_result *par, const phew_clump_result *ser, MPI_Comm comm)
{
  int rank;
  MPI_Comm_rank(comm, &rank);
  const double mine[3] = {par->density_threshold_used, par->saddle_threshold_used, par->mean_density};
  double first[3] = {mine[0], mine[1], mine[2]};
  if (ser) { /* rank 0 */
    first[0] = ser->density_threshold_used;
    first[1] = ser->saddle_threshold_used;
    first[2] = ser->mean_density;
  }
  MPI_Bcast(first, 3, MPI_DOUBLE, 0, comm);
  if (memcmp(first, mine, sizeof mine) == 0)
    return 0;
  printf("%s: rank %d: thresholds %.17g %.17g, mean density %.17g; serial %.17g %.17g %.17g\n", name, rank, mine[0],
         mine[1], mine[2], first[0], first[1], first[2]);
  return 1;
}

/* One case: 0 if the distributed answer equals the serial one (checked on rank 0). automatic:
 * the density and saddle thresholds are automatic (from the mean density). */
static int check_case(const char *name, kind k, int64_t nx, int64_t ny, int64_t nz, int periodic, int single,
                      int saddle_merging, double mass_threshold, unsigned order_seed, unsigned seed, int automatic)
{
  int rank, size;
  MPI_Comm comm = MPI_COMM_WORLD;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const int64_t n[3] = {nx, ny, nz};
  const int per[3] = {periodic, periodic, periodic};
  double *global = make_field(k, n, periodic, seed);
  phew_params p;
  phew_params_init(&p);
  p.density_threshold = k == EXTREME ? extreme(6.0) : 6.0;
  p.relevance_threshold = 1.5;
  p.saddle_merging = saddle_merging;
  p.saddle_threshold = k == EXTREME ? extreme(20.0) : 20.0;
  p.mass_threshold = mass_threshold;
  p.peak_order_seed = order_seed;
  if (automatic)
    p.density_threshold = p.saddle_threshold = PHEW_THRESHOLD_AUTOMATIC;

  phew_grid g;
  phew_grid_block(NULL, &g, n, per, size, rank);
  run par;
  find(&par, &g, global, single, &p, &comm);

  /* every stored cell (active and ghost) reports its global id and labels to rank 0 */
  const int64_t n_stored = g.stored_dims[0] * g.stored_dims[1] * g.stored_dims[2];
  int64_t *ids = malloc((size_t)(n_stored > 0 ? n_stored : 1) * sizeof *ids);
  for (int64_t z = 0, i = 0; z < g.stored_dims[2]; ++z)
    for (int64_t y = 0; y < g.stored_dims[1]; ++y)
      for (int64_t x = 0; x < g.stored_dims[0]; ++x, ++i)
        ids[i] = wrap(g.stored_offset[0] + x, nx) +
                 nx * (wrap(g.stored_offset[1] + y, ny) + ny * wrap(g.stored_offset[2] + z, nz));
  int total = 0;
  int64_t *all = gather_cell_labels(ids, &par, n_stored, comm, &total, NULL);

  int failures = 0;
  if (rank == 0) {
    phew_grid whole;
    phew_grid_init_whole(&whole, nx, ny, nz);
    for (int d = 0; d < 3; ++d)
      whole.periodic[d] = periodic;
    run ser;
    find(&ser, &whole, global, single, &p, NULL);
    failures += same_thresholds(name, &par.result, &ser.result, comm);
    if (ser.status != PHEW_OK || par.status != PHEW_OK) {
      printf("%s: status serial %d parallel %d (%s)\n", name, ser.status, par.status, par.context.message);
      ++failures;
    } else {
      int64_t wrong = 0;
      for (int i = 0; i < total / 4; ++i) {
        const int64_t id = all[4 * i];
        wrong += all[4 * i + 1] != ser.patch[id] || all[4 * i + 2] != ser.clump[id] || all[4 * i + 3] != ser.halo[id];
      }
      if (wrong) {
        printf("%s: %lld cell labels differ from the serial run\n", name, (long long)wrong);
        ++failures;
      }
      failures += compare_with_serial(name, &ser.result, &par.result, 0);
      if (!masses_sane(&ser.result)) {
        printf("%s: a mass, volume or centre is not a positive finite number\n", name);
        ++failures;
      }
      if (ser.result.n_clumps == 0 && k != CORNER)
        printf("%s: warning: no clumps\n", name);
      printf("%-28s %3lld clumps %3lld haloes %3lld nodes, %d watershed rounds, %lld ghost peaks max: %s\n", name,
             (long long)ser.result.n_clumps, (long long)ser.result.n_haloes, (long long)ser.result.n_nodes,
             par.result.stats.iterations[0], (long long)par.result.stats.max_ghost_peaks,
             wrong || !same_tables(&ser.result, &par.result) ? "FAIL" : "ok");
    }
    run_free(&ser);
  } else if (par.status != PHEW_OK || par.result.n_clumps != 0) {
    printf("%s: rank %d: status %d, %lld clumps (tables belong on rank 0)\n", name, rank, par.status,
           (long long)par.result.n_clumps);
    ++failures;
  }
  if (rank != 0)
    failures += same_thresholds(name, &par.result, NULL, comm);
  MPI_Allreduce(MPI_IN_PLACE, &failures, 1, MPI_INT, MPI_SUM, comm);
  run_free(&par);
  free(global);
  free(ids);
  free(all);
  return failures;
}

/* Errors are collective: a problem seen by one rank only (bad data in its block, a bad
 * parameter, an inconsistent block) fails every rank with the same message, no deadlock. */
static int check_error(const char *name, int what, const char *expected)
{
  int rank, size;
  MPI_Comm comm = MPI_COMM_WORLD;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const int64_t n[3] = {16, 12, 10};
  const int per[3] = {1, 1, 1};
  double *global = make_field(SMOOTH, n, 1, 3);
  const int culprit = size - 1;
  phew_params p;
  phew_params_init(&p);
  p.density_threshold = 6.0;
  if (what == 1 && rank == culprit)
    p.density_threshold = NAN; /* negative ones are automatic */
  phew_grid g;
  phew_grid_block(NULL, &g, n, per, size, rank);
  if (what == 2 && rank == culprit)
    g.active_dims[0] = g.stored_dims[0] + 1;
  if (what == 0) { /* NaN in the culprit's first active cell, as every rank sees the field */
    phew_grid mine;
    phew_grid_block(NULL, &mine, n, per, size, culprit);
    const int64_t bad = mine.active_offset[0] + n[0] * (mine.active_offset[1] + n[1] * mine.active_offset[2]);
    global[bad] = NAN;
  }
  run r;
  find(&r, &g, global, 0, &p, &comm);
  int failures = 0;
  if (r.status == PHEW_OK || strstr(r.context.message, expected) == NULL || r.result.n_clumps != 0) {
    printf("%s: rank %d: status %d, message '%s' (expected '%s')\n", name, rank, r.status, r.context.message, expected);
    ++failures;
  }
  const int64_t n_stored = g.stored_dims[0] * g.stored_dims[1] * g.stored_dims[2];
  for (int64_t i = 0; what != 2 && i < n_stored; ++i)
    if (r.patch[i] != -1 || r.clump[i] != -1 || r.halo[i] != -1) {
      printf("%s: rank %d: labels not reset to -1 after the error\n", name, rank);
      ++failures;
      break;
    }
  MPI_Allreduce(MPI_IN_PLACE, &failures, 1, MPI_INT, MPI_SUM, comm);
  if (rank == 0)
    printf("%-28s every rank: '%s': %s\n", name, r.context.message, failures ? "FAIL" : "ok");
  run_free(&r);
  free(global);
  return failures;
}

int main(int argc, char **argv)
{
  MPI_Init(&argc, &argv);
  int failures = 0;
  failures += check_case("smooth periodic f64", SMOOTH, 24, 20, 16, 1, 0, 1, 0.0, 0, 1, 0);
  failures += check_case("smooth open f32", SMOOTH, 23, 17, 19, 0, 1, 1, 0.0, 0, 2, 0);
  failures += check_case("smooth no saddle merging", SMOOTH, 20, 20, 20, 1, 0, 0, 0.0, 0, 3, 0);
  failures += check_case("smooth mass threshold", SMOOTH, 20, 18, 22, 0, 0, 1, 400.0, 0, 4, 0);
  failures += check_case("smooth shuffled order", SMOOTH, 21, 19, 17, 1, 0, 1, 0.0, 7, 5, 0);
  failures += check_case("plateaus periodic", QUANTIZED, 22, 16, 18, 1, 0, 1, 0.0, 0, 6, 0);
  failures += check_case("plateaus open f32", QUANTIZED, 16, 24, 12, 0, 1, 1, 0.0, 0, 7, 0);
  failures += check_case("one blob over all ranks", ONE_BLOB, 20, 16, 12, 1, 0, 1, 0.0, 0, 8, 0);
  failures += check_case("corner: ranks without cells", CORNER, 24, 24, 24, 0, 0, 1, 0.0, 0, 9, 0);
  failures += check_case("peak on a block boundary", BOUNDARY_PEAK, 16, 16, 16, 1, 0, 1, 0.0, 0, 10, 0);
  failures += check_case("thin blocks 8x3x40", SMOOTH, 8, 3, 40, 1, 0, 1, 0.0, 0, 11, 0);
  failures += check_case("thin blocks open 2x2x64", SMOOTH, 2, 2, 64, 0, 0, 1, 0.0, 0, 12, 0);
  failures += check_case("400 decades periodic", EXTREME, 20, 18, 16, 1, 0, 1, 0.0, 0, 13, 0);
  failures += check_case("400 decades open, mass cut", EXTREME, 19, 21, 15, 0, 0, 1, 1e100, 0, 14, 0);
  /* automatic thresholds: the mean density summed over the blocks gives the serial bits */
  failures += check_case("automatic periodic f64", SPARSE, 24, 20, 16, 1, 0, 1, 0.0, 0, 1, 1);
  failures += check_case("automatic open f32", SPARSE, 23, 17, 19, 0, 1, 1, 0.0, 0, 2, 1);
  failures += check_case("automatic 400 decades", EXTREME, 19, 21, 15, 0, 0, 1, 0.0, 0, 14, 1);
  failures += check_error("NaN on one rank", 0, "NaN, infinite or negative");
  failures += check_error("bad threshold on one rank", 1, "density threshold");
  failures += check_error("bad block on one rank", 2, "inconsistent block");
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0)
    printf("%s\n", failures ? "FAILED" : "all cases identical to the serial run");
  MPI_Finalize();
  return failures ? 1 : 0;
}
