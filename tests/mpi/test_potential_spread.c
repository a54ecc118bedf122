/* The potentials of a structure spread over the ranks (potential_spread, core/src/physics) are
 * potential_compute's bits. Every rank builds the same structure: Plummer-like clumps in a
 * background, masses over six decades (another order of the sums would change the last bits),
 * each member with a place in a random canonical order. The members are passed by the ranks
 * scattered at random, in slabs along x, with one rank passing none; small structures (direct
 * sums), a root small enough to be one rank's cell, and a third of the members at one point (the
 * depth cap); 1, 2 and 4 threads. Rank 0 computes potential_compute on the whole structure in
 * canonical order and compares every phi bit for bit. In slabs over 3 or more ranks no rank may
 * import more than 60% of the members (the point of the locally essential tree). An order out of
 * range on one rank fails on every rank. */
#include "comm.h"
#include "physics.h"

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

static double uniform(uint64_t *state) /* in [0, 1) */
{
  *state = mix(*state);
  return (double)(*state >> 11) / 9007199254740992.0;
}

/* A structure in canonical order: position[3 k], mass[k] of the member with order k. */
typedef struct structure {
  int64_t n;
  double *position, *mass;
} structure;

enum shape { CLUMPS, PILED, UNIFORM };

/* n members: four Plummer-like clumps (scale radii 0.02 to 0.2) and a uniform background (a
 * fifth of them) in the unit box, every third at one point (PILED), or all uniform; then
 * shuffled into a random canonical order. */
static structure make(int64_t n, enum shape shape, uint64_t seed)
{
  structure s = {n, malloc((size_t)n * 3 * sizeof(double)), malloc((size_t)n * sizeof(double))};
  const double centre[4][3] = {{0.3, 0.3, 0.3}, {0.7, 0.35, 0.6}, {0.5, 0.75, 0.4}, {0.52, 0.74, 0.42}};
  const double radius[4] = {0.05, 0.1, 0.2, 0.02};
  uint64_t state = seed;
  for (int64_t k = 0; k < n; ++k) {
    const int clump = (int)(uniform(&state) * 5);
    double *p = s.position + 3 * k;
    if (clump == 4 || shape == UNIFORM) {
      for (int d = 0; d < 3; ++d)
        p[d] = uniform(&state);
    } else { /* Plummer: r = a / sqrt(u^(-2/3) - 1), capped */
      const double u = 0.02 + 0.96 * uniform(&state), r = radius[clump] / sqrt(pow(u, -2.0 / 3.0) - 1.0);
      const double z = 2.0 * uniform(&state) - 1.0, phi = 2.0 * M_PI * uniform(&state);
      const double q = sqrt(1.0 - z * z), dir[3] = {q * cos(phi), q * sin(phi), z};
      for (int d = 0; d < 3; ++d)
        p[d] = centre[clump][d] + (r < 2.0 ? r : 2.0) * dir[d];
    }
    if (shape == PILED && k % 3 == 0)
      p[0] = 0.25, p[1] = 0.5, p[2] = 0.75;
    s.mass[k] = ldexp(1.0 + uniform(&state), (int)(uniform(&state) * 20) - 10);
  }
  for (int64_t k = n - 1; k > 0; --k) { /* Fisher-Yates: the canonical order */
    const int64_t j = (int64_t)(uniform(&state) * (double)(k + 1));
    double t[4] = {s.position[3 * k], s.position[3 * k + 1], s.position[3 * k + 2], s.mass[k]};
    memcpy(s.position + 3 * k, s.position + 3 * j, 3 * sizeof(double));
    s.mass[k] = s.mass[j];
    memcpy(s.position + 3 * j, t, 3 * sizeof(double));
    s.mass[j] = t[3];
  }
  return s;
}

enum split { SCATTERED, SLABS, ONE_EMPTY };

static int x_rank_cmp(const void *a, const void *b)
{
  const double x = **(const double *const *)a, y = **(const double *const *)b;
  return (x > y) - (x < y);
}

/* The rank passing member k: at random, by slabs of x (equal counts), or at random but never
 * the last rank. */
static int *split_members(const structure *s, enum split how, int size)
{
  int *rank = malloc((size_t)s->n * sizeof *rank);
  if (how == SLABS) {
    const double **by_x = malloc((size_t)s->n * sizeof *by_x);
    for (int64_t k = 0; k < s->n; ++k)
      by_x[k] = s->position + 3 * k;
    qsort(by_x, (size_t)s->n, sizeof *by_x, x_rank_cmp);
    for (int64_t j = 0; j < s->n; ++j)
      rank[(by_x[j] - s->position) / 3] = (int)(j * size / s->n);
    free(by_x);
    return rank;
  }
  const int ranks = how == ONE_EMPTY && size > 1 ? size - 1 : size;
  for (int64_t k = 0; k < s->n; ++k)
    rank[k] = (int)(mix((uint64_t)k * 7 + 3) % (uint64_t)ranks);
  return rank;
}

typedef struct test_case {
  const char *name;
  int64_t n;
  enum shape shape;
  enum split how;
  int n_threads, unit_masses;
  int64_t direct_max;
  double theta;
} test_case;

/* 0 if every rank's phi has rank 0's serial bits, else 1 (on every rank). */
static int run_case(const test_case *t, comm *c)
{
  const structure s = make(t->n, t->shape, 1000 + (uint64_t)t->n);
  int *rank_of = split_members(&s, t->how, c->size);
  int64_t n = 0;
  for (int64_t k = 0; k < s.n; ++k)
    n += rank_of[k] == c->rank;
  double *position = malloc((size_t)(n + 1) * 3 * sizeof(double)), *mass = malloc((size_t)(n + 1) * sizeof(double));
  double *phi = malloc((size_t)(n + 1) * sizeof(double));
  int64_t *order = malloc((size_t)(n + 1) * sizeof(int64_t));
  /* this rank's members in a scrambled order of their own */
  for (int64_t k = 0, i = 0; k < s.n; ++k)
    if (rank_of[k] == c->rank) {
      const int64_t j = (int64_t)(mix((uint64_t)k) % (uint64_t)(i + 1)); /* insert at j */
      memmove(position + 3 * i, position + 3 * j, 3 * sizeof(double));
      mass[i] = mass[j];
      order[i] = order[j];
      memcpy(position + 3 * j, s.position + 3 * k, 3 * sizeof(double));
      mass[j] = s.mass[k];
      order[j] = k;
      ++i;
    }
  const potential_params p = {1e-6, t->theta, t->direct_max, 4.3e-9, t->n_threads};
  spread_stats stats;
  const double t0 = MPI_Wtime();
  const phew_status status = potential_spread_counted(c, position, t->unit_masses ? NULL : mass, order, n, &p, phi,
                                                      &stats);
  const double seconds = MPI_Wtime() - t0;
  int failures = status != PHEW_OK;

  /* every (order, phi) on rank 0 */
  int count = (int)n, *counts = malloc((size_t)c->size * sizeof *counts),
      *displs = malloc((size_t)c->size * sizeof *displs);
  MPI_Gather(&count, 1, MPI_INT, counts, 1, MPI_INT, 0, c->mpi);
  for (int r = 0, at = 0; c->rank == 0 && r < c->size; at += counts[r++])
    displs[r] = at;
  int64_t *all_order = malloc((size_t)(s.n + 1) * sizeof *all_order);
  double *all_phi = malloc((size_t)(s.n + 1) * sizeof *all_phi);
  MPI_Gatherv(order, count, MPI_INT64_T, all_order, counts, displs, MPI_INT64_T, 0, c->mpi);
  MPI_Gatherv(phi, count, MPI_DOUBLE, all_phi, counts, displs, MPI_DOUBLE, 0, c->mpi);
  if (c->rank == 0 && !failures) {
    double *serial = malloc((size_t)s.n * sizeof *serial);
    failures |= potential_compute(s.position, t->unit_masses ? NULL : s.mass, s.n, &p, serial) != PHEW_OK;
    for (int64_t k = 0; !failures && k < s.n; ++k)
      if (memcmp(&all_phi[k], &serial[all_order[k]], sizeof(double)) != 0) {
        printf("%s: member %lld: phi %.17g, potential_compute %.17g\n", t->name, (long long)all_order[k], all_phi[k],
               serial[all_order[k]]);
        failures = 1;
      }
    free(serial);
  }
  /* the locally essential tree: slabs over 3+ ranks import at most 60% of the members */
  const int64_t most = comm_max(c, stats.members_imported), held = comm_max(c, stats.members_held);
  if (t->how == SLABS && c->size >= 3 && most > 6 * s.n / 10) {
    if (c->rank == 0)
      printf("%s: a rank imported %lld of %lld members\n", t->name, (long long)most, (long long)s.n);
    failures = 1;
  }
  failures = (int)comm_max(c, failures);
  if (c->rank == 0)
    printf("%-34s %d ranks: %s (status %d), %.3f s, most held %lld, most imported %lld of %lld\n", t->name, c->size,
           failures ? "FAILED" : "same bits", (int)status, seconds, (long long)held, (long long)most, (long long)s.n);
  free(counts);
  free(displs);
  free(all_order);
  free(all_phi);
  free(position);
  free(mass);
  free(phi);
  free(order);
  free(rank_of);
  free(s.position);
  free(s.mass);
  return failures;
}

/* One rank passes an order out of range: every rank fails with PHEW_ERROR_ARGUMENT. */
static int bad_order(comm *c)
{
  double position[3 * 200], phi[200];
  int64_t order[200];
  for (int64_t i = 0; i < 200; ++i) {
    for (int d = 0; d < 3; ++d)
      position[3 * i + d] = (double)((i * 7 + d * 13) % 50);
    order[i] = c->rank * 200 + i;
  }
  if (c->rank == c->size - 1)
    order[17] = -3;
  const potential_params p = {1e-6, 0.5, 100, 1.0, 1};
  const phew_status status = potential_spread(c, position, NULL, order, 200, &p, phi);
  const int failed = (int)comm_max(c, status != PHEW_ERROR_ARGUMENT);
  if (c->rank == 0)
    printf("%-34s %d ranks: %s\n", "order out of range", c->size, failed ? "FAILED" : "refused on every rank");
  return failed;
}

int main(int argc, char **argv)
{
  MPI_Init(&argc, &argv);
  MPI_Comm world = MPI_COMM_WORLD;
  phew_context context;
  phew_context_init(&context);
  context.mpi_comm = &world;
  call_result result;
  call_result_start(&result);
  comm c;
  comm_init(&c, &context, &result);
  const test_case cases[] = {
      {"clumps, scattered, 1 thread", 40000, CLUMPS, SCATTERED, 1, 0, 1000, 0.5},
      {"clumps, slabs, 2 threads", 40000, CLUMPS, SLABS, 2, 0, 1000, 0.5},
      {"clumps, one rank empty, 4 threads", 30000, CLUMPS, ONE_EMPTY, 4, 0, 1000, 0.5},
      {"unit masses, slabs, theta 0.8", 20000, CLUMPS, SLABS, 2, 1, 1000, 0.8},
      {"direct sums (900 <= 1000)", 900, CLUMPS, SCATTERED, 2, 0, 1000, 0.5},
      {"a third at one point", 12000, PILED, SCATTERED, 2, 0, 1000, 0.5},
      {"small root, one owner (120)", 120, CLUMPS, ONE_EMPTY, 1, 0, 50, 0.5},
      {"uniform, just above a group (150)", 150, UNIFORM, SCATTERED, 4, 0, 100, 0.5},
  };
  int failures = 0;
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; ++k)
    failures |= run_case(&cases[k], &c);
  failures |= bad_order(&c);
  if (c.rank == 0)
    printf("%s\n", failures ? "FAILED" : "all passed");
  MPI_Finalize();
  return failures;
}
