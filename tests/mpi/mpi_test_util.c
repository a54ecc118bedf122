#include "mpi_test_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void labels_alloc(run *r, int64_t n)
{
  r->n = n;
  r->patch = malloc((size_t)(n > 0 ? n : 1) * sizeof(int64_t));
  r->clump = malloc((size_t)(n > 0 ? n : 1) * sizeof(int64_t));
  r->halo = malloc((size_t)(n > 0 ? n : 1) * sizeof(int64_t));
  for (int64_t i = 0; i < n; ++i)
    r->patch[i] = r->clump[i] = r->halo[i] = -7;
  phew_context_init(&r->context);
}

void run_find(run *r, const phew_input *in, const phew_params *p, MPI_Comm *comm)
{
  phew_labels labels = {r->patch, r->clump, r->halo, NULL};
  r->context.mpi_comm = comm;
  r->status = phew_find_clumps(&r->context, in, p, &labels, &r->result);
}

void run_free(run *r)
{
  free(r->patch);
  free(r->clump);
  free(r->halo);
  phew_clump_result_free(&r->result);
}

int64_t *gather_int64(const int64_t *mine, int count, MPI_Comm comm, int *total, int **displs_out)
{
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  int *counts = NULL, *displs = NULL;
  int64_t *all = NULL;
  if (rank == 0) {
    counts = malloc((size_t)size * sizeof *counts);
    displs = malloc((size_t)size * sizeof *displs);
  }
  MPI_Gather(&count, 1, MPI_INT, counts, 1, MPI_INT, 0, comm);
  *total = 0;
  if (rank == 0) {
    for (int q = 0; q < size; ++q) {
      displs[q] = *total;
      *total += counts[q];
    }
    all = malloc((size_t)(*total + 1) * sizeof *all);
  }
  MPI_Gatherv(mine, count, MPI_INT64_T, all, counts, displs, MPI_INT64_T, 0, comm);
  free(counts);
  if (displs_out)
    *displs_out = displs;
  else
    free(displs);
  return all;
}

int64_t *gather_cell_labels(const int64_t *ids, const run *r, int64_t n, MPI_Comm comm, int *total, int **displs)
{
  const int64_t w = ids ? 4 : 3;
  int64_t *mine = malloc((size_t)(w * n + 1) * sizeof *mine), *m = mine;
  for (int64_t i = 0; i < n; ++i) {
    if (ids)
      *m++ = ids[i];
    *m++ = r->patch[i];
    *m++ = r->clump[i];
    *m++ = r->halo[i];
  }
  int64_t *all = gather_int64(mine, (int)(w * n), comm, total, displs);
  free(mine);
  return all;
}

int same_tables(const phew_clump_result *a, const phew_clump_result *b)
{
  return a->n_clumps == b->n_clumps && a->n_haloes == b->n_haloes && a->n_nodes == b->n_nodes &&
         memcmp(a->clumps, b->clumps, (size_t)a->n_clumps * sizeof *a->clumps) == 0 &&
         memcmp(a->haloes, b->haloes, (size_t)a->n_haloes * sizeof *a->haloes) == 0 &&
         memcmp(a->nodes, b->nodes, (size_t)a->n_nodes * sizeof *a->nodes) == 0;
}

int same_stats(const phew_stats *a, const phew_stats *b)
{
  return a->n_cells == b->n_cells && a->n_test_cells == b->n_test_cells && a->n_peaks == b->n_peaks &&
         a->n_saddle_pairs == b->n_saddle_pairs && a->n_noise_discarded == b->n_noise_discarded &&
         a->n_clumps_found == b->n_clumps_found && a->n_haloes_found == b->n_haloes_found &&
         a->noise_levels == b->noise_levels && a->saddle_levels == b->saddle_levels;
}

int compare_with_serial(const char *name, const phew_clump_result *ser, const phew_clump_result *par, int with_stats)
{
  int failures = 0;
  if (!same_tables(ser, par)) {
    printf("%s: tables differ: clumps %lld/%lld haloes %lld/%lld nodes %lld/%lld\n", name, (long long)ser->n_clumps,
           (long long)par->n_clumps, (long long)ser->n_haloes, (long long)par->n_haloes, (long long)ser->n_nodes,
           (long long)par->n_nodes);
    ++failures;
  }
  if (with_stats && !same_stats(&ser->stats, &par->stats)) {
    printf("%s: statistics differ (peaks %lld/%lld, pairs %lld/%lld)\n", name, (long long)ser->stats.n_peaks,
           (long long)par->stats.n_peaks, (long long)ser->stats.n_saddle_pairs, (long long)par->stats.n_saddle_pairs);
    ++failures;
  }
  return failures;
}
