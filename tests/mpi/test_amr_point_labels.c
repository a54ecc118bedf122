/* Particles labelled by the AMR leaf cell that holds them (phew_amr_point_labels), distributed
 * over the ranks, against a brute-force search of the blocks: a hierarchy of three levels
 * (level 0 in two blocks, a refined region on level 1 and a deeper one on level 2 that crosses
 * the periodic x face), each block owned by rank b % size, every cell labelled by a function of
 * its level and global position; particles everywhere, some outside the non-periodic y and z
 * faces, on cell faces, and NaN. Then a bad call (no cell labels on a rank with cells): the same
 * message on every rank. */
#include "phew/phew.h"

#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { N_POINTS = 5000, N_BLOCKS = 6 };

/* level 0 in two blocks; level 1: a region and a small block at x = 0; level 2 inside each */
static const phew_amr_block blocks[N_BLOCKS] = {{0, 0, {0, 0, 0}, {8, 8, 4}},    {0, 0, {0, 0, 4}, {8, 8, 4}},
                                                {1, 0, {4, 4, 4}, {8, 6, 8}},    {1, 0, {0, 4, 4}, {2, 2, 2}},
                                                {2, 0, {10, 10, 10}, {4, 2, 6}}, {2, 0, {0, 10, 10}, {2, 2, 2}}};

static int64_t cell_label(int level, int64_t x, int64_t y, int64_t z) { return level * 100000 + x + 64 * (y + 64 * z); }

/* The brute force: the finest block holding the point's cell. */
static int64_t reference(const phew_amr *a, const double p[3])
{
  for (int level = 2; level >= 0; --level) {
    int64_t c[3];
    for (int d = 0; d < 3; ++d) {
      const double h = a->spacing[d] / (double)(1 << level);
      const double f = floor((p[d] - a->origin[d]) / h);
      const int64_t n = a->level0_dims[d] << level;
      if (!isfinite(f))
        return -1;
      c[d] = (int64_t)f;
      if (a->periodic[d])
        c[d] = ((c[d] % n) + n) % n;
      if (c[d] < 0 || c[d] >= n)
        return -1;
    }
    for (int b = 0; b < N_BLOCKS; ++b) {
      const phew_amr_block *k = &blocks[b];
      if (k->level == level && c[0] >= k->lo[0] && c[0] < k->lo[0] + k->dims[0] && c[1] >= k->lo[1] &&
          c[1] < k->lo[1] + k->dims[1] && c[2] >= k->lo[2] && c[2] < k->lo[2] + k->dims[2])
        return cell_label(level, c[0], c[1], c[2]);
    }
  }
  return -1;
}

int main(int argc, char **argv)
{
  MPI_Init(&argc, &argv);
  int rank, size, failures = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  phew_amr_block owned[N_BLOCKS];
  memcpy(owned, blocks, sizeof owned);
  int64_t n_cells = 0;
  for (int b = 0; b < N_BLOCKS; ++b) {
    owned[b].owner = b % size;
    if (owned[b].owner == rank)
      n_cells += owned[b].dims[0] * owned[b].dims[1] * owned[b].dims[2];
  }
  const phew_amr amr = {{8, 8, 8}, {-1.0, 0.0, 2.0}, {0.5, 0.25, 0.5}, {1, 0, 0}, N_BLOCKS, owned};
  int64_t *cells = malloc((size_t)(n_cells + 1) * sizeof *cells), at = 0;
  for (int b = 0; b < N_BLOCKS; ++b) /* own blocks in list order, x fastest */
    for (int64_t z = 0; owned[b].owner == rank && z < owned[b].dims[2]; ++z)
      for (int64_t y = 0; y < owned[b].dims[1]; ++y)
        for (int64_t x = 0; x < owned[b].dims[0]; ++x)
          cells[at++] = cell_label(owned[b].level, owned[b].lo[0] + x, owned[b].lo[1] + y, owned[b].lo[2] + z);
  /* this rank's points: every size-th of a fixed list */
  double *pos = malloc(3 * N_POINTS * sizeof *pos), *all = malloc(3 * N_POINTS * sizeof *all);
  int64_t n = 0, *index = malloc(N_POINTS * sizeof *index);
  srand(12345);
  for (int i = 0; i < N_POINTS; ++i) {
    for (int d = 0; d < 3; ++d) {
      const double lo = amr.origin[d], side = amr.spacing[d] * 8.0;
      all[3 * i + d] = lo - 0.2 * side + 1.4 * side * rand() / (double)RAND_MAX;
      if (i % 7 == 0) /* on a face of the finest cells */
        all[3 * i + d] = lo + (double)(rand() % 33) * amr.spacing[d] / 4.0;
    }
    if (i == 11)
      all[3 * i + 1] = NAN;
    if (i % size == rank) {
      memcpy(pos + 3 * n, all + 3 * i, 3 * sizeof *pos);
      index[n++] = i;
    }
  }
  phew_points points;
  phew_points_init(&points);
  points.n = n;
  points.type = PHEW_FLOAT64;
  points.position = pos;
  int64_t *labels = malloc((size_t)(n + 1) * sizeof *labels);
  MPI_Comm world = MPI_COMM_WORLD;
  phew_context context;
  phew_context_init(&context);
  context.mpi_comm = &world;
  if (phew_amr_point_labels(&context, &amr, cells, &points, labels) != PHEW_OK) {
    printf("FAIL rank %d: %s\n", rank, context.message);
    failures++;
  }
  int64_t wrong = 0, found = 0, levels[3] = {0, 0, 0};
  for (int64_t k = 0; k < n; ++k) {
    const int64_t want = reference(&amr, all + 3 * index[k]);
    wrong += labels[k] != want;
    found += want >= 0;
    if (want >= 0)
      levels[want / 100000]++;
  }
  if (wrong) {
    printf("FAIL rank %d: %lld of %lld particles with another label than the brute force\n", rank, (long long)wrong,
           (long long)n);
    failures++;
  }
  int64_t sums[5] = {n, found, levels[0], levels[1], levels[2]};
  MPI_Allreduce(MPI_IN_PLACE, sums, 5, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0)
    printf("%d rank(s): %lld particles, %lld in cells (levels 0/1/2: %lld/%lld/%lld), labels as the brute force\n",
           size, (long long)sums[0], (long long)sums[1], (long long)sums[2], (long long)sums[3], (long long)sums[4]);
  if (rank == 0 && (sums[2] == 0 || sums[3] == 0 || sums[4] == 0 || sums[1] == sums[0])) {
    printf("FAIL the particles should reach every level and some lie outside\n");
    failures++;
  }
  /* a rank with cells passes no labels: every rank fails with the same message */
  const phew_status bad = phew_amr_point_labels(&context, &amr, rank == 0 ? NULL : cells, &points, labels);
  char first[512];
  memcpy(first, context.message, sizeof first);
  MPI_Bcast(first, (int)sizeof first, MPI_CHAR, 0, MPI_COMM_WORLD);
  if (bad != PHEW_ERROR_ARGUMENT || strcmp(first, context.message) || !strstr(context.message, "cell labels") ||
      (n > 0 && labels[0] != -1)) {
    printf("FAIL rank %d: no cell labels gave status %d, message '%s'\n", rank, (int)bad, context.message);
    failures++;
  }
  free(cells);
  free(pos);
  free(all);
  free(index);
  free(labels);
  int total = 0;
  MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Finalize();
  return total ? 1 : 0;
}
