/* The merger tree between two steps (phew_link_steps) distributed over the ranks gives exactly
 * the serial answer. Every rank builds the same two labellings of 20000 elements (masses over
 * 12 decades, so that summing them in another order would change the last bits); rank 0 links
 * them alone (MPI_COMM_SELF); then each rank passes a share: the earlier step in contiguous
 * blocks, the later one scattered by another rule (elements move between ranks), some ranks
 * passing nothing. The links must be the same bytes. Then one rank passes a NaN mass: every
 * rank gets PHEW_ERROR_DATA and the same message. */
#include "phew/phew.h"

#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { N = 20000 };

static uint64_t mix(uint64_t z)
{
  z += UINT64_C(0x9E3779B97F4A7C15);
  z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
  z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
  return z ^ (z >> 31);
}

typedef struct labelling {
  int64_t id[N], label[N];
  double mass[N];
} labelling;

/* Labels in clusters: element k lies in structure k / 700 (earlier); later, in (k + 350) / 900
 * (mergers) in the first half and in 1000 + k / 400 (splits) in the second,
 * or in none for one element in 5; ids are a scramble of k. */
static void make(labelling *l, int later)
{
  for (int64_t k = 0; k < N; ++k) {
    const uint64_t r = mix((uint64_t)k * 2 + (uint64_t)later);
    l->id[k] = (int64_t)(mix((uint64_t)k) >> 20);
    l->label[k] = r % 5 == 0 ? -1 : !later ? k / 700 : k < N / 2 ? (k + 350) / 900 : 1000 + k / 400;
    l->mass[k] = ldexp(1.0 + (double)(r >> 40) / 16777216.0, (int)(r % 40) - 20);
  }
}

/* The elements rank `rank` of `size` passes: contiguous blocks (rank 0 none when size > 1), or
 * element k on rank mix(k) % size. */
static phew_step_labels share(const labelling *l, int scattered, int rank, int size, int64_t *id, int64_t *label,
                              double *mass)
{
  phew_step_labels s = {0, id, label, mass, NULL};
  for (int64_t k = 0; k < N; ++k) {
    const int owner = scattered   ? (int)(mix((uint64_t)k + 99) % (uint64_t)size)
                      : size == 1 ? 0
                                  : 1 + (int)(k * (size - 1) / N);
    if (owner == rank) {
      id[s.n] = l->id[k];
      label[s.n] = l->label[k];
      mass[s.n] = l->mass[k];
      s.n++;
    }
  }
  return s;
}

int main(int argc, char **argv)
{
  MPI_Init(&argc, &argv);
  int rank, size, failures = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  static labelling a, b;
  make(&a, 0);
  make(&b, 1);

  phew_link_result serial;
  memset(&serial, 0, sizeof serial);
  if (rank == 0) {
    const phew_step_labels x = {N, a.id, a.label, a.mass, NULL}, y = {N, b.id, b.label, b.mass, NULL};
    MPI_Comm self = MPI_COMM_SELF;
    phew_context alone;
    phew_context_init(&alone);
    alone.mpi_comm = &self;
    if (phew_link_steps(&alone, &x, &y, &serial) != PHEW_OK || serial.n_links < 20) {
      printf("FAIL serial run: %s (%lld links)\n", alone.message, (long long)serial.n_links);
      failures++;
    }
  }

  static int64_t id[2][N], label[2][N];
  static double mass[2][N];
  const phew_step_labels x = share(&a, 0, rank, size, id[0], label[0], mass[0]);
  const phew_step_labels y = share(&b, 1, rank, size, id[1], label[1], mass[1]);
  MPI_Comm world = MPI_COMM_WORLD;
  phew_context context;
  phew_context_init(&context);
  context.mpi_comm = &world;
  phew_link_result parallel;
  memset(&parallel, 0, sizeof parallel);
  const phew_status status = phew_link_steps(&context, &x, &y, &parallel);
  if (status != PHEW_OK) {
    printf("FAIL rank %d: distributed run failed: %s\n", rank, context.message);
    failures++;
  }
  if (rank == 0 && (parallel.n_links != serial.n_links ||
                    memcmp(parallel.links, serial.links, (size_t)serial.n_links * sizeof *serial.links))) {
    printf("FAIL %d ranks: %lld links, serial %lld, or different bytes\n", size, (long long)parallel.n_links,
           (long long)serial.n_links);
    failures++;
  }
  if (rank != 0 && parallel.n_links != 0) {
    printf("FAIL rank %d holds links (only rank 0 should)\n", rank);
    failures++;
  }
  if (rank == 0) {
    int mergers = 0, splits = 0;
    for (int64_t k = 0; k < serial.n_links; ++k) {
      mergers += serial.links[k].n_progenitors >= 2 && serial.links[k].main_progenitor;
      splits += serial.links[k].n_descendants >= 2 && serial.links[k].main_descendant;
    }
    printf("%d rank(s): %lld links, %d mergers, %d splits, the same bytes as serial\n", size, (long long)serial.n_links,
           mergers, splits);
    if (!mergers || !splits) {
      printf("FAIL the labellings should hold mergers and splits\n");
      failures++;
    }
  }
  phew_link_result_free(&parallel);

  /* one rank (the last) passes a NaN mass: every rank fails with the same message */
  if (y.n > 0 && rank == size - 1)
    mass[1][0] = NAN;
  const phew_status bad = phew_link_steps(&context, &x, &y, &parallel);
  char first[512];
  memcpy(first, context.message, sizeof first);
  MPI_Bcast(first, (int)sizeof first, MPI_CHAR, 0, MPI_COMM_WORLD);
  if (bad != PHEW_ERROR_DATA || strcmp(first, context.message) || !strstr(context.message, "finite")) {
    printf("FAIL rank %d: a NaN mass gave status %d, message '%s'\n", rank, (int)bad, context.message);
    failures++;
  }
  phew_link_result_free(&parallel);
  phew_link_result_free(&serial);

  int total = 0;
  MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Finalize();
  return total ? 1 : 0;
}
