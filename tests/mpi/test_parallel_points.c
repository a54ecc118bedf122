/* Distributed PHEW on particles (issue 9) gives exactly the serial answer. Every rank builds
 * the same particle set; rank 0 runs it alone (MPI_COMM_SELF); then the ranks pass shares of
 * it to a distributed run: contiguous shares of uneven sizes (rank 0 passing none when there
 * are several ranks; default ids), or scattered shares in a scrambled order with ids given.
 * Rank 0 gathers (id, labels, density) and compares them bit for bit with the serial run, and
 * the tables byte for byte.
 *
 * Sets: clustered blobs with one across the periodic corner; a lattice whose particles lie
 * exactly on the subvolume faces; a dense clump plus a few far, isolated particles (their
 * neighbourhoods reach far beyond any first padding width); all particles in one corner (most
 * subvolumes nearly empty). Threads differ between ranks. */
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

static double uniform(uint64_t *s)
{
  *s = mix(*s);
  return (double)(*s >> 11) / 9007199254740992.0;
}

static double normal(uint64_t *s)
{
  const double u = 1.0 - uniform(s), v = uniform(s);
  return sqrt(-2.0 * log(u)) * cos(6.283185307179586 * v);
}

typedef enum kind { BLOBS, LATTICE, SPARSE, CORNER, TINY, PLANES, CLUMP_AND_BLOCK } kind;

typedef struct particles {
  int64_t n;
  double *pos, *vel, *mass;
  int periodic;
} particles;

static double wrap(double x, int periodic)
{
  if (periodic) {
    x = fmod(x, 1.0);
    if (x < 0.0)
      x += 1.0;
    return x >= 1.0 ? 0.0 : x;
  }
  x = fabs(x);
  return x > 1.0 ? 2.0 - x : x;
}

static void make(particles *p, kind k, int periodic, uint64_t seed)
{
  const int64_t n_max = 6000;
  p->pos = malloc(3 * n_max * sizeof(double));
  p->vel = malloc(3 * n_max * sizeof(double));
  p->mass = malloc(n_max * sizeof(double));
  p->periodic = periodic;
  p->n = 0;
  uint64_t s = seed;
#define PUT(x, y, z)                                                               \
  do {                                                                             \
    const double c[3] = {wrap(x, periodic), wrap(y, periodic), wrap(z, periodic)}; \
    for (int d = 0; d < 3; ++d) {                                                  \
      p->pos[3 * p->n + d] = c[d];                                                 \
      p->vel[3 * p->n + d] = 50.0 * normal(&s);                                    \
    }                                                                              \
    p->mass[p->n++] = 0.5 + uniform(&s);                                           \
  } while (0)
  if (k == BLOBS || k == CORNER) {
    const double scale = k == CORNER ? 0.2 : 1.0;
    const double centre[5][4] = {{0.3, 0.3, 0.3, 0.03},
                                 {0.34, 0.32, 0.3, 0.01},
                                 {0.7, 0.6, 0.55, 0.045},
                                 {0.01, 0.99, 0.02, 0.03},
                                 {0.5, 0.8, 0.2, 0.02}};
    for (int b = 0; b < 5; ++b)
      for (int j = 0; j < 500; ++j)
        PUT(scale * (centre[b][0] + centre[b][3] * normal(&s)), scale * (centre[b][1] + centre[b][3] * normal(&s)),
            scale * (centre[b][2] + centre[b][3] * normal(&s)));
    for (int j = 0; j < 1000; ++j)
      PUT(scale * uniform(&s), scale * uniform(&s), scale * uniform(&s));
  } else if (k == LATTICE) { /* 16^3 lattice points on multiples of 1/16 (every face of a bisection) */
    for (int z = 0; z < 16; ++z)
      for (int y = 0; y < 16; ++y)
        for (int x = 0; x < 16; ++x) {
          const double bump = exp(-((x - 5) * (x - 5) + (y - 9) * (y - 9) + (z - 4) * (z - 4)) / 6.0);
          if (uniform(&s) < 0.3 + 0.7 * bump)
            PUT(x / 16.0, y / 16.0, z / 16.0);
        }
    for (int j = 0; j < 600; ++j) /* blobs on top, so that structures exist */
      PUT(0.3125 + 0.03 * normal(&s), 0.5625 + 0.03 * normal(&s), 0.25 + 0.03 * normal(&s));
    for (int j = 0; j < 500; ++j)
      PUT(0.75 + 0.02 * normal(&s), 0.5 + 0.02 * normal(&s), 0.5 + 0.02 * normal(&s));
    for (int j = 0; j < 300; ++j)
      PUT(0.5 + 0.015 * normal(&s), 0.25 + 0.015 * normal(&s), 0.75 + 0.015 * normal(&s));
  } else if (k == TINY) { /* 150 particles: some ranks hold fewer than one neighbourhood */
    for (int j = 0; j < 60; ++j)
      PUT(0.3 + 0.05 * normal(&s), 0.3 + 0.05 * normal(&s), 0.3 + 0.05 * normal(&s));
    for (int j = 0; j < 40; ++j)
      PUT(0.7 + 0.04 * normal(&s), 0.6 + 0.04 * normal(&s), 0.7 + 0.04 * normal(&s));
    for (int j = 0; j < 50; ++j)
      PUT(uniform(&s), uniform(&s), uniform(&s));
  } else if (k == CLUMP_AND_BLOCK) { /* no nearest list crosses the cut, but kernels do: density
                                        padding arrives where the graph has no ghost */
    for (int j = 0; j < 999; ++j)
      PUT(0.2 + 0.01 * normal(&s), 0.5 + 0.01 * normal(&s), 0.5 + 0.01 * normal(&s));
    for (int j = 0; j < 1001; ++j)
      PUT(0.35 + 0.3 * uniform(&s), 0.35 + 0.3 * uniform(&s), 0.35 + 0.3 * uniform(&s));
  } else if (k == PLANES) { /* two planes x = 0.25 and 0.75: subvolumes without particles */
    for (int j = 0; j < 400; ++j)
      PUT(j < 200 ? 0.25 : 0.75, uniform(&s), 0.5 + 0.1 * normal(&s));
  } else { /* SPARSE: a dense clump and a handful of far particles */
    for (int j = 0; j < 2000; ++j)
      PUT(0.25 + 0.04 * normal(&s), 0.25 + 0.04 * normal(&s), 0.25 + 0.04 * normal(&s));
    for (int j = 0; j < 800; ++j)
      PUT(0.32 + 0.015 * normal(&s), 0.22 + 0.015 * normal(&s), 0.27 + 0.015 * normal(&s));
    for (int j = 0; j < 500; ++j)
      PUT(0.15 + 0.01 * normal(&s), 0.3 + 0.01 * normal(&s), 0.2 + 0.01 * normal(&s));
    for (int j = 0; j < 400; ++j)
      PUT(0.25 + 0.2 * uniform(&s), 0.25 + 0.2 * uniform(&s), 0.25 + 0.2 * uniform(&s));
    for (int j = 0; j < 30; ++j)
      PUT(0.6 + 0.35 * uniform(&s), 0.6 + 0.35 * uniform(&s), 0.6 + 0.35 * uniform(&s));
  }
#undef PUT
}

static void release(particles *p)
{
  free(p->pos);
  free(p->vel);
  free(p->mass);
}

typedef struct answer {
  int64_t id, patch, clump, halo;
  double density;
} answer;

/* The core's input for particles sel[0..n) of p (copies in *pos, *vel, *mass: free them),
 * and the context of a run on comm with this many threads; with_ids passes their indices as
 * ids. */
static void points_input(const particles *p, const int64_t *sel, int64_t n, int with_ids, int threads, MPI_Comm *comm,
                         phew_input *in, phew_context *context, double **pos, double **vel, double **mass)
{
  *pos = malloc((size_t)(3 * n + 1) * sizeof(double));
  *vel = malloc((size_t)(3 * n + 1) * sizeof(double));
  *mass = malloc((size_t)(n + 1) * sizeof(double));
  for (int64_t k = 0; k < n; ++k) {
    for (int d = 0; d < 3; ++d) {
      (*pos)[3 * k + d] = p->pos[3 * sel[k] + d];
      (*vel)[3 * k + d] = p->vel[3 * sel[k] + d];
    }
    (*mass)[k] = p->mass[sel[k]];
  }
  memset(in, 0, sizeof *in);
  in->mesh = PHEW_MESH_POINTS;
  phew_points_init(&in->points);
  in->points.n = n;
  in->points.position = *pos;
  in->points.velocity = *vel;
  in->points.mass = *mass;
  in->points.id = with_ids ? sel : NULL;
  in->points.has_box = 1;
  for (int d = 0; d < 3; ++d) {
    in->points.box_size[d] = 1.0;
    in->points.periodic[d] = p->periodic;
  }
  phew_context_init(context);
  context->n_threads = threads;
  context->mpi_comm = comm;
}

/* Runs particles sel[0..n) (of p) on comm; with_ids passes their indices as ids. */
static void run_points(const particles *p, const int64_t *sel, int64_t n, int with_ids, int threads, MPI_Comm *comm,
                       run *r, double *density)
{
  phew_input in;
  double *pos, *vel, *mass;
  labels_alloc(r, n);
  points_input(p, sel, n, with_ids, threads, comm, &in, &r->context, &pos, &vel, &mass);
  phew_params params;
  phew_params_init(&params);
  params.density_threshold = p->n < 1000 ? 1.0 : 5.0; /* small sets are flat */
  params.relevance_threshold = 2.0;
  params.saddle_merging = 1;
  params.saddle_threshold = 40.0;
  memset(&r->result, 0, sizeof r->result);
  phew_labels labels = {r->patch, r->clump, r->halo, density};
  r->status = phew_find_clumps(&r->context, &in, &params, &labels, &r->result);
  free(pos);
  free(vel);
  free(mass);
}

typedef enum share { CONTIGUOUS, SCATTERED } share;

/* This rank's share of the particles (sel, returns how many): CONTIGUOUS, rank 0 none (when
 * not alone) and the others uneven ranges; SCATTERED, every rank a scrambled subset. */
static int64_t pick_share(const particles *p, share how, uint64_t seed, int rank, int size, int64_t *sel)
{
  int64_t n = 0;
  if (how == CONTIGUOUS) {
    int64_t first = 0, last = 0;
    const int parts = size > 1 ? size - 1 : 1;
    for (int r = size > 1 ? 1 : 0, j = 0; r < size; ++r, ++j) {
      const int64_t lo = p->n * j * j / (parts * parts), hi = p->n * (j + 1) * (j + 1) / (parts * parts);
      if (r == rank) {
        first = lo;
        last = hi;
      }
    }
    for (int64_t i = first; i < last; ++i)
      sel[n++] = i;
    return n;
  }
  for (int64_t i = 0; i < p->n; ++i)
    if ((int)(mix((uint64_t)i ^ seed) % (uint64_t)size) == rank)
      sel[n++] = i;
  for (int64_t i = n - 1; i > 0; --i) {
    const int64_t j = (int64_t)(mix((uint64_t)i * 31 + seed) % (uint64_t)(i + 1));
    const int64_t t = sel[i];
    sel[i] = sel[j];
    sel[j] = t;
  }
  return n;
}

static int check(const char *name, kind k, int periodic, share how, uint64_t seed)
{
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  particles p;
  make(&p, k, periodic, seed);
  int64_t *all = malloc((size_t)p.n * sizeof *all);
  for (int64_t i = 0; i < p.n; ++i)
    all[i] = i;

  /* the serial answer on rank 0 */
  run serial;
  memset(&serial, 0, sizeof serial);
  double *serial_density = malloc((size_t)p.n * sizeof(double));
  int failures = 0;
  if (rank == 0) {
    MPI_Comm self = MPI_COMM_SELF;
    run_points(&p, all, p.n, 0, 1, &self, &serial, serial_density);
    if (serial.status != PHEW_OK) {
      printf("%s: serial run failed: %s\n", name, serial.context.message);
      failures = 1;
    }
  }

  int64_t *sel = malloc((size_t)p.n * sizeof *sel);
  const int64_t n = pick_share(&p, how, seed, rank, size, sel);
  run par;
  memset(&par, 0, sizeof par);
  double *density = malloc((size_t)(n + 1) * sizeof(double));
  MPI_Comm world = MPI_COMM_WORLD;
  run_points(&p, sel, n, how == SCATTERED, 1 + rank % 3, &world, &par, density);
  if (par.status != PHEW_OK) {
    if (rank == 0)
      printf("%s: parallel run failed: %s\n", name, par.context.message);
    failures = 1;
  }

  /* gather (id, labels, density) on rank 0 */
  answer *mine = malloc((size_t)(n + 1) * sizeof *mine);
  for (int64_t i = 0; i < n; ++i)
    mine[i] = (answer){sel[i], par.patch[i], par.clump[i], par.halo[i], density[i]};
  int count = (int)n * (int)sizeof(answer), *counts = malloc((size_t)size * sizeof(int)),
      *displs = malloc((size_t)size * sizeof(int));
  MPI_Gather(&count, 1, MPI_INT, counts, 1, MPI_INT, 0, MPI_COMM_WORLD);
  int total = 0;
  for (int r = 0; rank == 0 && r < size; ++r) {
    displs[r] = total;
    total += counts[r];
  }
  answer *got = malloc((size_t)total + sizeof(answer));
  MPI_Gatherv(mine, count, MPI_BYTE, got, counts, displs, MPI_BYTE, 0, MPI_COMM_WORLD);
  if (rank == 0 && !failures) {
    int64_t bad = 0, first_bad = -1;
    if (total != (int)(p.n * (int64_t)sizeof(answer))) {
      printf("%s: %d answers for %lld particles\n", name, total / (int)sizeof(answer), (long long)p.n);
      bad = 1;
    }
    for (int64_t k = 0; !bad && k < p.n; ++k) {
      const answer *a = &got[k];
      const int64_t i = a->id;
      if (i < 0 || i >= p.n || a->patch != serial.patch[i] || a->clump != serial.clump[i] ||
          a->halo != serial.halo[i] || memcmp(&a->density, &serial_density[i], sizeof(double)) != 0) {
        if (first_bad < 0)
          first_bad = i;
        ++bad;
      }
    }
    if (bad) {
      printf("%s: %lld particles differ from the serial run (first: %lld)\n", name, (long long)bad,
             (long long)first_bad);
      failures = 1;
    }
    failures |= compare_with_serial(name, &serial.result, &par.result, 0);
    if (serial.result.n_clumps < (k == TINY || k == PLANES || k == CLUMP_AND_BLOCK ? 1 : 2))
      printf("%s: only %lld clump(s): a weak test\n", name, (long long)serial.result.n_clumps), failures = 1;
    if (!failures)
      printf("%s: %lld particles, %lld clumps, %lld haloes, padding rounds %d, max padding %lld: identical\n", name,
             (long long)p.n, (long long)par.result.n_clumps, (long long)par.result.n_haloes,
             par.result.stats.padding_rounds, (long long)par.result.stats.max_padding);
  }
  MPI_Bcast(&failures, 1, MPI_INT, 0, MPI_COMM_WORLD);
  free(got);
  free(counts);
  free(displs);
  free(mine);
  free(density);
  free(sel);
  free(all);
  free(serial_density);
  run_free(&par);
  run_free(&serial);
  release(&p);
  return failures;
}

/* Friends-of-Friends on particles sel[0..n) of p (with_ids: their indices as ids); context
 * gets the run's message. */
static phew_status run_fof(const particles *p, const int64_t *sel, int64_t n, int with_ids, int threads, MPI_Comm *comm,
                           double linking, int absolute, int64_t *group, phew_context *context,
                           phew_group_result *result)
{
  phew_input in;
  double *pos, *vel, *mass;
  points_input(p, sel, n, with_ids, threads, comm, &in, context, &pos, &vel, &mass);
  phew_fof_params params;
  phew_fof_params_init(&params);
  params.linking_length = linking;
  params.absolute = absolute;
  params.min_members = 5;
  memset(result, 0, sizeof *result);
  const phew_status status = phew_find_fof_groups(context, &in, &params, group, result);
  free(pos);
  free(vel);
  free(mass);
  return status;
}

/* Friends-of-Friends over the ranks: the same GroupIds and catalogue bytes as one rank. */
static int check_fof(const char *name, kind k, int periodic, share how, uint64_t seed, double linking, int absolute)
{
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  particles p;
  make(&p, k, periodic, seed);
  int64_t *all = malloc((size_t)p.n * sizeof *all), *serial = malloc((size_t)p.n * sizeof *serial);
  for (int64_t i = 0; i < p.n; ++i)
    all[i] = i;
  phew_context serial_context;
  phew_group_result serial_result;
  memset(&serial_result, 0, sizeof serial_result);
  int failures = 0;
  if (rank == 0) {
    MPI_Comm self = MPI_COMM_SELF;
    if (run_fof(&p, all, p.n, 0, 1, &self, linking, absolute, serial, &serial_context, &serial_result) != PHEW_OK) {
      printf("%s: serial run failed: %s\n", name, serial_context.message);
      failures = 1;
    }
  }
  int64_t *sel = malloc((size_t)p.n * sizeof *sel);
  const int64_t n = pick_share(&p, how, seed, rank, size, sel);
  int64_t *group = malloc((size_t)(n + 1) * sizeof *group);
  phew_context context;
  phew_group_result result;
  MPI_Comm world = MPI_COMM_WORLD;
  if (run_fof(&p, sel, n, how == SCATTERED, 1 + rank % 3, &world, linking, absolute, group, &context, &result) !=
      PHEW_OK) {
    if (rank == 0)
      printf("%s: parallel run failed: %s\n", name, context.message);
    failures = 1;
  }
  /* (id, group) pairs on rank 0 */
  int64_t *mine = malloc((size_t)(2 * n + 1) * sizeof *mine);
  for (int64_t i = 0; i < n; ++i) {
    mine[2 * i] = sel[i];
    mine[2 * i + 1] = group[i];
  }
  int count = 2 * (int)n, *counts = malloc((size_t)size * sizeof(int)), *displs = malloc((size_t)size * sizeof(int));
  MPI_Gather(&count, 1, MPI_INT, counts, 1, MPI_INT, 0, MPI_COMM_WORLD);
  int total = 0;
  for (int r = 0; rank == 0 && r < size; ++r) {
    displs[r] = total;
    total += counts[r];
  }
  int64_t *got = malloc(((size_t)total + 1) * sizeof *got);
  MPI_Gatherv(mine, count, MPI_INT64_T, got, counts, displs, MPI_INT64_T, 0, MPI_COMM_WORLD);
  if (rank == 0 && !failures) {
    int64_t bad = total != 2 * p.n;
    for (int64_t e = 0; !bad && e < p.n; ++e)
      bad += got[2 * e] < 0 || got[2 * e] >= p.n || got[2 * e + 1] != serial[got[2 * e]];
    if (bad)
      printf("%s: %lld particles differ from the serial run\n", name, (long long)bad), failures = 1;
    if (result.n_groups != serial_result.n_groups ||
        memcmp(result.groups, serial_result.groups, (size_t)serial_result.n_groups * sizeof(phew_group)) != 0)
      printf("%s: the catalogue differs from the serial one\n", name), failures = 1;
    if (serial_result.n_groups < 2)
      printf("%s: only %lld group(s): a weak test\n", name, (long long)serial_result.n_groups), failures = 1;
    if (!failures)
      printf("%s: %lld particles, %lld groups (largest %lld), max padding %lld: identical\n", name, (long long)p.n,
             (long long)result.n_groups, (long long)result.groups[0].n_particles, (long long)result.stats.max_padding);
  }
  MPI_Bcast(&failures, 1, MPI_INT, 0, MPI_COMM_WORLD);
  free(got);
  free(counts);
  free(displs);
  free(mine);
  free(group);
  free(sel);
  free(all);
  free(serial);
  phew_group_result_free(&result);
  phew_group_result_free(&serial_result);
  release(&p);
  return failures;
}

/* The box from the bounds of scattered shares (some ranks with none) equals the box of the
 * whole set on one rank, bit for bit; phew_agree gives every rank the worst status and the
 * message of the lowest rank with it. */
static int check_box_and_agree(const char *name, kind k, uint64_t seed)
{
  int rank, size, failures = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  particles p;
  make(&p, k, 0, seed);
  int64_t *all = malloc((size_t)p.n * sizeof *all), *sel = malloc((size_t)p.n * sizeof *sel);
  for (int64_t i = 0; i < p.n; ++i)
    all[i] = i;
  const int64_t n = rank % 2 ? 0 : pick_share(&p, SCATTERED, seed, rank / 2, (size + 1) / 2, sel);
  phew_input whole, mine;
  phew_context serial, parallel;
  double *pos[2], *vel[2], *mass[2];
  MPI_Comm self = MPI_COMM_SELF, world = MPI_COMM_WORLD;
  points_input(&p, all, p.n, 0, 1, &self, &whole, &serial, &pos[0], &vel[0], &mass[0]);
  points_input(&p, sel, n, 1, 1, &world, &mine, &parallel, &pos[1], &vel[1], &mass[1]);
  const phew_status a = phew_points_box_from_bounds(&serial, &whole.points);
  const phew_status b = phew_points_box_from_bounds(&parallel, &mine.points);
  if (a != PHEW_OK || b != PHEW_OK ||
      memcmp(whole.points.box_origin, mine.points.box_origin, sizeof whole.points.box_origin) != 0 ||
      memcmp(whole.points.box_size, mine.points.box_size, sizeof whole.points.box_size) != 0) {
    printf("rank %d: %s: the box from the bounds differs from the serial one (%s / %s)\n", rank, name, serial.message,
           parallel.message);
    ++failures;
  }
  /* the last rank and, with three or more ranks, rank 1 fail; rank 1 with the worse status */
  phew_status status = PHEW_OK;
  if (rank == size - 1 && size > 1) {
    status = PHEW_ERROR_DATA;
    snprintf(parallel.message, sizeof parallel.message, "rank %d saw a bad block", rank);
  }
  if (rank == 1 && size > 2) {
    status = PHEW_ERROR_MEMORY;
    snprintf(parallel.message, sizeof parallel.message, "rank 1 ran out of memory");
  }
  const phew_status agreed = phew_agree(&parallel, status);
  char want[64] = "";
  if (size > 2)
    snprintf(want, sizeof want, "rank 1 ran out of memory");
  else if (size == 2)
    snprintf(want, sizeof want, "rank 1 saw a bad block");
  const phew_status expected = size > 2 ? PHEW_ERROR_MEMORY : size == 2 ? PHEW_ERROR_DATA : PHEW_OK;
  if (agreed != expected || strcmp(parallel.message, want) != 0) {
    printf("rank %d: %s: phew_agree gave %d '%s', not %d '%s'\n", rank, name, (int)agreed, parallel.message,
           (int)expected, want);
    ++failures;
  }
  for (int j = 0; j < 2; ++j) {
    free(pos[j]);
    free(vel[j]);
    free(mass[j]);
  }
  free(all);
  free(sel);
  release(&p);
  return failures;
}

int main(int argc, char **argv)
{
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int failures = 0;
  failures += check("blobs, periodic, contiguous shares", BLOBS, 1, CONTIGUOUS, 1);
  failures += check("blobs, open, scattered shares", BLOBS, 0, SCATTERED, 2);
  failures += check("lattice on the faces, periodic, scattered", LATTICE, 1, SCATTERED, 3);
  failures += check("lattice on the faces, open, contiguous", LATTICE, 0, CONTIGUOUS, 4);
  failures += check("sparse region, periodic, contiguous", SPARSE, 1, CONTIGUOUS, 5);
  failures += check("sparse region, open, scattered", SPARSE, 0, SCATTERED, 6);
  failures += check("all in one corner, periodic, scattered", CORNER, 1, SCATTERED, 7);
  failures += check("150 particles, periodic, contiguous", TINY, 1, CONTIGUOUS, 8);
  failures += check("150 particles, open, scattered", TINY, 0, SCATTERED, 9);
  failures += check("two planes, open, contiguous", PLANES, 0, CONTIGUOUS, 10);
  failures += check("a clump and a diffuse block, open, contiguous", CLUMP_AND_BLOCK, 0, CONTIGUOUS, 11);
  failures += check_fof("FoF: blobs, periodic, contiguous", BLOBS, 1, CONTIGUOUS, 21, 0.2, 0);
  failures += check_fof("FoF: blobs, open, scattered", BLOBS, 0, SCATTERED, 22, 0.2, 0);
  failures += check_fof("FoF: lattice, pairs at exactly the length on the faces, periodic", LATTICE, 1, SCATTERED, 23,
                        0.0625, 1);
  failures += check_fof("FoF: lattice, pairs at exactly the length on the faces, open", LATTICE, 0, CONTIGUOUS, 24,
                        0.0625, 1);
  failures += check_fof("FoF: sparse region, periodic", SPARSE, 1, CONTIGUOUS, 25, 0.2, 0);
  failures += check_fof("FoF: all in one corner, scattered", CORNER, 1, SCATTERED, 26, 0.2, 0);
  failures += check_fof("FoF: two planes, open", PLANES, 0, CONTIGUOUS, 27, 0.05, 1);
  failures += check_box_and_agree("box from the bounds: blobs", BLOBS, 31);
  failures += check_box_and_agree("box from the bounds: a sparse region", SPARSE, 32);
  if (rank == 0)
    printf("%s\n", failures ? "FAILED" : "all cases identical to the serial run");
  MPI_Finalize();
  return failures ? 1 : 0;
}
