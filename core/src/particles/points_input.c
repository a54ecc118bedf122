/* The caller's particles: checks (one bad particle on one rank stops every rank, with a
 * message naming it), global ids, and this rank's particle_set in float64. */
#include "particles.h"
#include "threads.h"
#include "id_map.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void particle_set_free(particle_set *s)
{
  free(s->position);
  free(s->id);
  free(s->mass);
  free(s->owner);
  free(s->h);
  free(s->velocity);
  free(s->density);
  free(s->origin_rank);
  free(s->origin_index);
  memset(s, 0, sizeof *s);
}

phew_status particle_set_reserve(particle_set *s, int64_t n)
{
  if (n <= s->capacity)
    return PHEW_OK;
  if (phew_grow(&s->position, (size_t)n, 3 * sizeof(double)) || phew_grow(&s->id, (size_t)n, sizeof(int64_t)) ||
      (s->mass && phew_grow(&s->mass, (size_t)n, sizeof(double))) ||
      (s->owner && phew_grow(&s->owner, (size_t)n, sizeof(int32_t))) ||
      (s->h && phew_grow(&s->h, (size_t)n, sizeof(double))))
    return PHEW_ERROR_MEMORY;
  s->capacity = n;
  return PHEW_OK;
}

static double value_at(const void *array, phew_scalar_type type, int64_t i)
{
  return type == PHEW_FLOAT32 ? (double)((const float *)array)[i] : ((const double *)array)[i];
}

static phew_status check_parameters(const phew_input *in, int n_threads, points_use use, call_result *result)
{
  const phew_points *p = &in->points;
  const int density = use != POINTS_FOF && in->density; /* FoF has no use for one */
  if ((use == POINTS_PHEW || use == POINTS_HOP) && p->n_neighbours < 1)
    return phew_fail(result, PHEW_ERROR_ARGUMENT, "the number of neighbours must be at least 1 (got %d)",
                     p->n_neighbours);
  if (p->n < 0)
    return phew_fail(result, PHEW_ERROR_ARGUMENT, "the number of particles is negative (%lld)", (long long)p->n);
  if (p->type != PHEW_FLOAT32 && p->type != PHEW_FLOAT64)
    return phew_fail(result, PHEW_ERROR_ARGUMENT, "unknown position type %d", (int)p->type);
  if (p->n > 0 && !p->position)
    return phew_fail(result, PHEW_ERROR_ARGUMENT, "the particle positions must not be NULL");
  if (use != POINTS_FOF && !in->density && p->n_density_neighbours < 1)
    return phew_fail(result, PHEW_ERROR_ARGUMENT, "the number of density neighbours must be at least 1 (got %d)",
                     p->n_density_neighbours);
  if (p->n_neighbours > 4096 || p->n_density_neighbours > 4096)
    return phew_fail(result, PHEW_ERROR_ARGUMENT, "at most 4096 neighbours per particle");
  if (n_threads < 0)
    return phew_fail(result, PHEW_ERROR_ARGUMENT, "the number of threads must be >= 0 (0: all cores)");
  if (density && in->density_type != PHEW_FLOAT32 && in->density_type != PHEW_FLOAT64)
    return phew_fail(result, PHEW_ERROR_ARGUMENT, "unknown density type %d", (int)in->density_type);
  for (int d = 0; d < 3; ++d) {
    if (p->periodic[d] && !p->has_box)
      return phew_fail(result, PHEW_ERROR_ARGUMENT, "a periodic axis needs a box");
    if (p->has_box && !(isfinite(p->box_origin[d]) && p->box_size[d] > 0.0 && isfinite(p->box_size[d]) &&
                        isfinite(p->box_origin[d] + p->box_size[d])))
      return phew_fail(result, PHEW_ERROR_ARGUMENT, "the box must have a finite origin and a positive, finite size");
  }
  return PHEW_OK;
}

/* Each particle of [begin, end) once: positions inside the box, masses positive, velocities
 * finite. The first bad one fails, its index in *bad (else -1), with its message if result is
 * given. */
static phew_status check_particles(const phew_points *p, const int64_t *id, int64_t begin, int64_t end, int64_t *bad,
                                   call_result *result)
{
  static const char axis[] = "xyz";
  for (int64_t i = begin; i < end; ++i) {
    *bad = i;
    for (int d = 0; d < 3; ++d) {
      const double x = value_at(p->position, p->type, 3 * i + d);
      if (!isfinite(x))
        return phew_fail(result, PHEW_ERROR_DATA, "particle %lld has a position that is not finite", (long long)id[i]);
      if (p->has_box) {
        const double lo = p->box_origin[d], hi = p->box_origin[d] + p->box_size[d];
        if (x < lo || x > hi || (p->periodic[d] && x == hi))
          return phew_fail(result, PHEW_ERROR_DATA,
                           "particle %lld lies outside the box along %c (%.17g not in [%.17g, %.17g%c)",
                           (long long)id[i], axis[d], x, lo, hi, p->periodic[d] ? ')' : ']');
      }
      if (p->velocity && !isfinite(value_at(p->velocity, p->type, 3 * i + d)))
        return phew_fail(result, PHEW_ERROR_DATA, "particle %lld has a velocity that is not finite", (long long)id[i]);
    }
    if (p->mass) {
      const double m = value_at(p->mass, p->type, i);
      if (!(m > 0.0 && isfinite(m)))
        return phew_fail(result, PHEW_ERROR_DATA, "particle %lld has mass %g: masses must be positive and finite",
                         (long long)id[i], m);
    }
    if (p->id && id[i] < 0)
      return phew_fail(result, PHEW_ERROR_ARGUMENT, "particle %lld (passed at %lld) has a negative id",
                       (long long)id[i], (long long)i);
  }
  *bad = -1;
  return PHEW_OK;
}

/* Given ids must be unique over all ranks: each id goes to the rank it hashes to, which
 * looks for repeats. Collective. */
static phew_status check_unique_ids(const points_context *x, const particle_set *s)
{
  comm *c = x->c;
  outbox o;
  outbox_init(&o, c, sizeof(int64_t));
  for (int64_t i = 0; i < s->n_own; ++i)
    outbox_put(&o, (int)(hash_id(s->id[i]) % (uint64_t)c->size), &s->id[i]);
  inbox in;
  phew_status status = outbox_send(&o, c, &in);
  outbox_free(&o);
  id_map seen;
  int64_t repeated = -1;
  if (status == PHEW_OK && id_map_init(&seen, in.n) == 0) {
    for (int64_t k = 0; k < in.n && repeated < 0; ++k) {
      int64_t id, first;
      memcpy(&id, in.items + (size_t)k * sizeof id, sizeof id);
      if (id_map_insert(&seen, id, k, &first) != 0) {
        status = PHEW_ERROR_MEMORY;
        break;
      }
      if (first != k)
        repeated = id;
    }
    id_map_free(&seen);
  } else if (status == PHEW_OK) {
    status = PHEW_ERROR_MEMORY;
  }
  inbox_free(&in);
  if (status != PHEW_OK)
    status = phew_fail(x->result, PHEW_ERROR_MEMORY, "out of memory while checking the particle ids");
  else if (repeated >= 0)
    status = phew_fail(x->result, PHEW_ERROR_ARGUMENT,
                       "particle id %lld is given to more than one particle: ids must be unique", (long long)repeated);
  return comm_agree(c, status, x->result);
}

/* Collective: the total mass of all ranks into *out, exact, the same bits on every rank; an
 * error on every rank when it is no normal double (subnormal masses, say), saying so. */
static phew_status total_mass(const points_context *x, const particle_set *s, double *out)
{
  exact_sum mine;
  exact_sum_clear(&mine);
  if (!s->mass) /* unit masses: their count */
    exact_sum_add_times_int(&mine, 1.0, s->n_own);
  else
    for (int64_t i = 0; i < s->n_own; ++i)
      exact_sum_add(&mine, s->mass[i]);
  if (comm_sum_exact(x->c, &mine, 1) != PHEW_OK) /* every rank, or none */
    return phew_fail(x->result, PHEW_ERROR_MEMORY, "out of memory while summing the masses");
  char why[sizeof x->result->message];
  if (wide_to_double_why(exact_sum_value(&mine), "the total mass of the particles", "rescale the particle masses", out,
                         why, sizeof why) != 0)
    return phew_fail(x->result, PHEW_ERROR_DATA, "%s", why);
  return PHEW_OK;
}

enum { READ_BLOCK = 65536 }; /* particles per task of the checks and copies */

/* The passes over the caller's particles, on the threads: step 0 gives the ids and finds each
 * block's first bad particle; step 1 copies the values into the set (float64) and finds each
 * block's bounds. */
typedef struct read_job {
  const phew_points *p;
  const phew_input *in;
  particle_set *s;
  int64_t first_id; /* ids when none are given: first_id + index */
  int64_t *bad;     /* per block: its first bad particle, or -1 */
  double *bounds;   /* per block: lo[3], hi[3] */
  int step;
} read_job;

static void read_task(void *context, int thread, int64_t task)
{
  (void)thread;
  const read_job *job = context;
  const phew_points *p = job->p;
  particle_set *s = job->s;
  const int64_t begin = task * READ_BLOCK, end = begin + READ_BLOCK < p->n ? begin + READ_BLOCK : p->n;
  if (job->step == 0) {
    for (int64_t i = begin; i < end; ++i)
      s->id[i] = p->id ? p->id[i] : job->first_id + i;
    check_particles(p, s->id, begin, end, &job->bad[task], NULL);
    return;
  }
  double *lo = &job->bounds[6 * task], *hi = lo + 3;
  for (int d = 0; d < 3; ++d) {
    lo[d] = INFINITY;
    hi[d] = -INFINITY;
  }
  for (int64_t i = begin; i < end; ++i) {
    for (int d = 0; d < 3; ++d) {
      const double v = value_at(p->position, p->type, 3 * i + d);
      s->position[3 * i + d] = v;
      lo[d] = v < lo[d] ? v : lo[d];
      hi[d] = v > hi[d] ? v : hi[d];
      if (s->velocity)
        s->velocity[3 * i + d] = value_at(p->velocity, p->type, 3 * i + d);
    }
    if (s->mass)
      s->mass[i] = value_at(p->mass, p->type, i);
    if (s->density)
      s->density[i] = value_at(job->in->density, job->in->density_type, i);
  }
}

/* Collective: which of masses, velocities, densities and ids are given (on every rank that
 * has particles, or on none) into x; the given flags (1, 2, 4, 8) in *given. */
static phew_status agree_given(points_context *x, const phew_input *in, points_use use, int64_t *given)
{
  const phew_points *p = &in->points;
  comm *c = x->c;
  const int64_t density = use != POINTS_FOF && in->density;
  const int64_t mine = (p->mass != NULL) | (p->velocity != NULL) << 1 | density << 2 | (p->id != NULL) << 3;
  const int64_t any = comm_max(c, p->n > 0 ? mine : 0), all = -comm_max(c, p->n > 0 ? -mine : -any);
  if (any != all)
    return comm_agree(c,
                      phew_fail(x->result, PHEW_ERROR_ARGUMENT,
                                "masses, velocities, densities and ids must be given on every rank or on none"),
                      x->result);
  x->has_mass = (any & 1) != 0;
  x->has_velocity = (any & 2) != 0;
  x->carries_velocity = x->has_velocity && use != POINTS_PHEW;
  x->has_density = (any & 4) != 0;
  *given = any;
  return PHEW_OK;
}

/* Collective: the set's arrays, the particles of all ranks (x->n_total) and the global index
 * of this rank's first particle (*first: ids not given are the index in the global order). */
static phew_status allocate_set(points_context *x, const phew_points *p, particle_set *s, int64_t *first)
{
  comm *c = x->c;
  int64_t *counts = phew_malloc((size_t)c->size, sizeof *counts);
  s->n_own = s->n = p->n;
  const int failed = !counts || particle_set_reserve(s, p->n) != PHEW_OK ||
                     (x->has_mass && !(s->mass = phew_malloc((size_t)p->n + 1, sizeof *s->mass))) ||
                     (x->carries_velocity && !(s->velocity = phew_malloc((size_t)p->n + 1, 3 * sizeof *s->velocity))) ||
                     (x->has_density && !(s->density = phew_malloc((size_t)p->n + 1, sizeof *s->density)));
  if (comm_max(c, failed)) {
    free(counts);
    return comm_agree(c, phew_fail(x->result, PHEW_ERROR_MEMORY, "out of memory for the particles"), x->result);
  }
  s->capacity = p->n;
  comm_allgather(c, &p->n, sizeof p->n, counts);
  *first = 0;
  x->n_total = 0;
  for (int r = 0; r < c->size; ++r) {
    if (r < c->rank)
      *first += counts[r];
    x->n_total += counts[r];
  }
  free(counts);
  return PHEW_OK;
}

/* Collective: the particles read as float64 and checked (the first bad one named), ids
 * unique, and this rank's bounds in lo and hi. */
static phew_status read_particles(points_context *x, const phew_input *in, particle_set *s, int64_t first,
                                  int ids_given, double lo[3], double hi[3])
{
  const phew_points *p = &in->points;
  comm *c = x->c;
  const int threads = threads_resolve(x->context->n_threads);
  const int64_t n_blocks = (p->n + READ_BLOCK - 1) / READ_BLOCK;
  int64_t *bad = phew_malloc((size_t)n_blocks + 1, sizeof *bad);
  double *bounds = phew_malloc((size_t)n_blocks + 1, 6 * sizeof *bounds);
  if (comm_max(c, !bad || !bounds)) {
    free(bad);
    free(bounds);
    return comm_agree(c, phew_fail(x->result, PHEW_ERROR_MEMORY, "out of memory for the particles"), x->result);
  }
  read_job job = {p, in, s, first, bad, bounds, 0};
  threads_run(threads, n_blocks, read_task, &job);
  int64_t first_bad = -1;
  for (int64_t b = 0; b < n_blocks && first_bad < 0; ++b)
    first_bad = bad[b];
  int64_t named; /* the message of the first bad particle */
  phew_status status = comm_agree(
      c, first_bad < 0 ? PHEW_OK : check_particles(p, s->id, first_bad, first_bad + 1, &named, x->result), x->result);
  if (status == PHEW_OK && ids_given)
    status = check_unique_ids(x, s);
  if (status == PHEW_OK) {
    job.step = 1;
    threads_run(threads, n_blocks, read_task, &job);
  }
  free(bad);
  for (int d = 0; d < 3; ++d) {
    lo[d] = INFINITY;
    hi[d] = -INFINITY;
  }
  for (int64_t b = 0; status == PHEW_OK && b < n_blocks; ++b)
    for (int d = 0; d < 3; ++d) {
      lo[d] = bounds[6 * b + d] < lo[d] ? bounds[6 * b + d] : lo[d];
      hi[d] = bounds[6 * b + 3 + d] > hi[d] ? bounds[6 * b + 3 + d] : hi[d];
    }
  free(bounds);
  return status;
}

/* Collective: the neighbours a search finds, which must not exceed the particles. */
static phew_status neighbour_counts(points_context *x, const phew_points *p, points_use use)
{
  x->n_keep = use == POINTS_PHEW || use == POINTS_HOP ? p->n_neighbours : 0;
  x->k_search = x->n_keep + 1;
  if (use != POINTS_FOF && !x->has_density && p->n_density_neighbours + 1 > x->k_search)
    x->k_search = p->n_density_neighbours + 1;
  if (use != POINTS_FOF && x->n_total < x->k_search)
    return comm_agree(x->c,
                      phew_fail(x->result, PHEW_ERROR_ARGUMENT,
                                "%lld particles are fewer than the %d neighbours each needs (itself counted): "
                                "lower the numbers of neighbours",
                                (long long)x->n_total, x->k_search),
                      x->result);
  return PHEW_OK;
}

/* Collective: the domain (the box along periodic axes, else the particles' bounds over all
 * ranks), the mean density and the slack of distance tests. */
static phew_status domain_and_mean(points_context *x, const phew_points *p, const particle_set *s, const double lo[3],
                                   const double hi[3])
{
  comm *c = x->c;
  for (int d = 0; d < 3; ++d) {
    x->box.periodic[d] = p->periodic[d];
    x->box.size[d] = p->has_box ? p->box_size[d] : 0.0;
    x->lo[d] = p->periodic[d] ? p->box_origin[d] : -comm_max_double(c, -lo[d]);
    x->hi[d] = p->periodic[d] ? p->box_origin[d] + p->box_size[d] : comm_max_double(c, hi[d]);
  }
  x->mean_density = 1.0;
  if (p->has_box) {
    double mass = NAN;
    const double volume = p->box_size[0] * p->box_size[1] * p->box_size[2];
    phew_status status = total_mass(x, s, &mass);
    x->mean_density = mass / volume;
    if (status == PHEW_OK && !(x->mean_density > 0.0 && isfinite(x->mean_density)))
      status = phew_fail(x->result, PHEW_ERROR_DATA,
                         "the mean density (total mass %g over box volume %g) is %g, beyond the range of double "
                         "precision (%g to %g): rescale the particle masses or the box",
                         mass, volume, x->mean_density, DBL_MIN, DBL_MAX);
    status = comm_agree(c, status, x->result);
    if (status != PHEW_OK)
      return status;
  }
  double scale = 0.0;
  for (int d = 0; d < 3; ++d) {
    scale = fmax(scale, fmax(fabs(x->lo[d]), fabs(x->hi[d])));
    scale = fmax(scale, x->box.size[d]);
  }
  x->slack = 16.0 * DBL_EPSILON * scale;
  return PHEW_OK;
}

/* Collective: no particle on any rank, said first and in the same words by every finder (an
 * automatic box has no bounds then, a mean density no mass, a neighbour search no particle).
 * A negative count somewhere is left to check_parameters. */
static phew_status check_not_empty(const points_context *x, const phew_points *p)
{
  if (comm_max(x->c, p->n < 0) || comm_sum(x->c, p->n > 0 ? p->n : 0) > 0)
    return PHEW_OK;
  return comm_agree(
      x->c, phew_fail(x->result, PHEW_ERROR_ARGUMENT, "no particles: the particle set is empty (on every rank)"),
      x->result);
}

phew_status points_read(points_context *x, const phew_input *in, points_use use, particle_set *s)
{
  const phew_points *p = &in->points;
  comm *c = x->c;
  call_result *result = x->result;
  x->points = p;
  memset(s, 0, sizeof *s);
  phew_status status = check_not_empty(x, p);
  if (status == PHEW_OK)
    status = comm_agree(c, check_parameters(in, x->context->n_threads, use, result), result);
  int64_t given = 0, first = 0;
  if (status == PHEW_OK)
    status = agree_given(x, in, use, &given);
  if (status == PHEW_OK)
    status = allocate_set(x, p, s, &first);
  double lo[3], hi[3]; /* this rank's bounds */
  if (status == PHEW_OK)
    status = read_particles(x, in, s, first, (given & 8) != 0, lo, hi);
  if (status != PHEW_OK)
    return status;
  /* HOP's hops need densities that order: a NaN would let chains cycle (PHEW's graph path
   * checks its densities itself) */
  phew_status density_ok = PHEW_OK;
  for (int64_t i = 0; use == POINTS_HOP && s->density && density_ok == PHEW_OK && i < p->n; ++i)
    if (!(isfinite(s->density[i]) && s->density[i] >= 0.0))
      density_ok = phew_fail(result, PHEW_ERROR_DATA, "particle %lld has density %g: densities must be finite and >= 0",
                             (long long)s->id[i], s->density[i]);
  if (comm_agree(c, density_ok, result) != PHEW_OK)
    return PHEW_ERROR_DATA;
  status = neighbour_counts(x, p, use);
  if (status == PHEW_OK)
    status = domain_and_mean(x, p, s, lo, hi);
  if (status == PHEW_OK)
    x->n_threads = threads_resolve(x->context->n_threads);
  return status;
}

/* A velocity asked of the rank where its particle was passed, and the answer. */
typedef struct velocity_ask {
  int64_t index; /* where it was passed */
  int64_t back;  /* the own particle's index here */
} velocity_ask;

typedef struct velocity_answer {
  int64_t back;
  double v[3];
} velocity_answer;

/* Collective: the answers to what the other ranks asked (asked: grouped by source rank). */
static phew_status answer_velocities(comm *c, const phew_points *p, const inbox *asked, inbox *got)
{
  outbox o;
  outbox_init(&o, c, sizeof(velocity_answer));
  const velocity_ask *a = (const velocity_ask *)asked->items;
  int from = 0;
  for (int64_t k = 0; k < asked->n; ++k) {
    while (k >= (int64_t)asked->offset[from] + asked->count[from])
      ++from;
    velocity_answer v = {a[k].back, {0.0, 0.0, 0.0}};
    for (int d = 0; d < 3; ++d)
      v.v[d] = value_at(p->velocity, p->type, 3 * a[k].index + d);
    outbox_put(&o, from, &v);
  }
  const phew_status status = outbox_send(&o, c, got);
  outbox_free(&o);
  return status;
}

phew_status points_velocities(points_context *x, const phew_input *in, particle_set *s)
{
  comm *c = x->c;
  const phew_points *p = &in->points;
  if (!x->has_velocity || x->carries_velocity)
    return PHEW_OK;
  s->velocity = phew_malloc((size_t)s->n_own + 1, 3 * sizeof *s->velocity);
  if (comm_max(c, !s->velocity))
    return comm_agree(c, phew_fail(x->result, PHEW_ERROR_MEMORY, "out of memory for the velocities"), x->result);
  outbox o;
  outbox_init(&o, c, sizeof(velocity_ask));
  for (int64_t i = 0; i < s->n_own; ++i) {
    const int64_t at = s->origin_index ? s->origin_index[i] : i;
    const int from = s->origin_rank ? s->origin_rank[i] : c->rank;
    if (from != c->rank) {
      const velocity_ask a = {at, i};
      outbox_put(&o, from, &a);
      continue;
    }
    for (int d = 0; d < 3; ++d)
      s->velocity[3 * i + d] = value_at(p->velocity, p->type, 3 * at + d);
  }
  inbox asked, got;
  memset(&asked, 0, sizeof asked);
  memset(&got, 0, sizeof got);
  phew_status status = outbox_send(&o, c, &asked);
  outbox_free(&o);
  if (status == PHEW_OK)
    status = answer_velocities(c, p, &asked, &got);
  const velocity_answer *v = (const velocity_answer *)got.items;
  for (int64_t k = 0; status == PHEW_OK && k < got.n; ++k)
    memcpy(&s->velocity[3 * v[k].back], v[k].v, sizeof v[k].v);
  inbox_free(&asked);
  inbox_free(&got);
  return comm_agree(c, status == PHEW_OK ? PHEW_OK : phew_fail(x->result, status, "out of memory for the velocities"),
                    x->result);
}
