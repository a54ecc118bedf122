/* From a group key per particle to GroupIds and the group catalogue (halos.h).
 *
 * 1. Counts: each rank counts its particles per key; the counts of a key meet on the rank
 *    the key hashes to, with the smallest particle id and the reference particle (the one
 *    whose id is the key: exactly one rank holds it).
 * 2. Order: the groups with enough particles go to rank 0, which orders them (decreasing
 *    count, then smallest particle id) and sends the ordered list to every rank; each rank
 *    labels its particles.
 * 3. Sums: mass, mass-weighted displacements from the reference particle (nearest image)
 *    and momenta, exact (exact_sum.h: the same bits for any split over ranks and threads),
 *    merged on rank 0: centres of mass and mean velocities, sent to every rank.
 * 4. Spread: the largest distance from the centre of mass and the mass-weighted squared
 *    velocity deviations, merged on rank 0 the same way. */
#include "halos.h"
#include "id_map.h"
#include "threads.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A key's count on one rank, then on its home rank, then in the ordered list. */
typedef struct group_count {
  int64_t key, count, min_id;
  int64_t has_reference; /* the reference particle is among the counted ones */
  double reference[3];
  double reference_density;
} group_count;

/* A group's exact sums on one rank; merged on rank 0. */
typedef struct group_sums {
  int64_t id;
  exact_sum mass, moment[3], momentum[3];
} group_sums;

/* A group's spread on one rank; merged on rank 0. */
typedef struct group_spread {
  int64_t id;
  double max_distance2;
  exact_sum dispersion;
} group_spread;

static void count_merge(group_count *to, const group_count *from)
{
  to->count += from->count;
  to->min_id = from->min_id < to->min_id ? from->min_id : to->min_id;
  if (from->has_reference) {
    to->has_reference = 1;
    memcpy(to->reference, from->reference, sizeof to->reference);
    to->reference_density = from->reference_density;
  }
}

static int catalogue_order(const void *pa, const void *pb)
{
  const group_count *a = pa, *b = pb;
  if (a->count != b->count)
    return a->count > b->count ? -1 : 1;
  return a->min_id < b->min_id ? -1 : (a->min_id > b->min_id);
}

/* This rank's counts per key into counts (room for one per own particle; NULL: out of
 * memory), *n of them, each with its smallest particle id and, where this rank holds it, the
 * reference particle. 0 if memory ran out. */
static int count_own_keys(const particle_set *s, const group_keys *g, group_count *counts, int64_t *n)
{
  id_map local;
  memset(&local, 0, sizeof local);
  int ok = counts && id_map_init(&local, 1024) == 0;
  int64_t n_counts = 0;
  for (int64_t i = 0; ok && i < s->n_own; ++i) {
    const int64_t key = g->key[i];
    if (key < 0)
      continue;
    int64_t k;
    if (id_map_insert(&local, key, n_counts, &k) != 0) {
      ok = 0;
      break;
    }
    if (k == n_counts)
      counts[n_counts++] = (group_count){key, 0, INT64_MAX, 0, {0, 0, 0}, 0};
    group_count *t = &counts[k];
    t->count++;
    t->min_id = s->id[i] < t->min_id ? s->id[i] : t->min_id;
    if (s->id[i] == key) {
      t->has_reference = 1;
      memcpy(t->reference, &s->position[3 * i], sizeof t->reference);
      t->reference_density = g->density ? g->density[i] : NAN;
    }
  }
  if (local.slots)
    id_map_free(&local);
  *n = n_counts;
  return ok;
}

/* Collective: this rank's counts (n of them; ok 0: they ran out of memory, and the exchange
 * fails on every rank) to the ranks their keys hash to, into *in. */
static phew_status send_counts_home(comm *c, const group_count *counts, int64_t n, int ok, inbox *in)
{
  outbox o;
  outbox_init(&o, c, sizeof(group_count));
  if (!ok)
    o.failed = 1;
  for (int64_t k = 0; ok && k < n; ++k)
    outbox_put(&o, (int)(hash_id(counts[k].key) % (uint64_t)c->size), &counts[k]);
  phew_status status = outbox_send(&o, c, in);
  outbox_free(&o);
  return status;
}

/* The counts that came home merged, one per key, and those with at least min_members
 * particles kept at the front of home (room for in->n; NULL: out of memory), *n_kept of
 * them. 0 if memory ran out. */
static int merge_home_counts(const inbox *in, int64_t min_members, group_count *home, int64_t *n_kept)
{
  id_map local;
  memset(&local, 0, sizeof local);
  int ok = home && id_map_init(&local, in->n) == 0;
  int64_t n_home = 0;
  for (int64_t e = 0; ok && e < in->n; ++e) {
    group_count it;
    memcpy(&it, in->items + (size_t)e * sizeof it, sizeof it);
    int64_t k;
    if (id_map_insert(&local, it.key, n_home, &k) != 0) {
      ok = 0;
      break;
    }
    if (k == n_home)
      home[n_home++] = it;
    else
      count_merge(&home[k], &it);
  }
  if (local.slots)
    id_map_free(&local);
  int64_t kept = 0;
  for (int64_t k = 0; ok && k < n_home; ++k)
    if (home[k].count >= min_members)
      home[kept++] = home[k];
  *n_kept = kept;
  return ok;
}

/* Collective: every rank's kept groups (home, n_kept of them) gathered on rank 0, put in
 * catalogue order there and sent to every rank (*list, *n_list: free it). */
static phew_status gather_in_catalogue_order(comm *c, const group_count *home, int64_t n_kept, group_count **list,
                                             int64_t *n_list)
{
  void *gathered = NULL;
  int64_t n_gathered = 0;
  int *from = NULL;
  phew_status status = comm_gather(c, home, n_kept, sizeof *home, &gathered, &n_gathered, &from);
  free(from);
  if (comm_max(c, status != PHEW_OK)) {
    free(gathered);
    return PHEW_ERROR_MEMORY;
  }
  if (c->rank == 0 && n_gathered > 0)
    qsort(gathered, (size_t)n_gathered, sizeof(group_count), catalogue_order);
  if (c->rank != 0) { /* the others' (empty) gathers make way for rank 0's list */
    free(gathered);
    gathered = NULL;
  }
  status = comm_broadcast(c, &gathered, &n_gathered, sizeof(group_count));
  if (status != PHEW_OK) {
    free(gathered);
    return status;
  }
  *list = gathered;
  *n_list = n_gathered;
  return PHEW_OK;
}

/* Collective: the groups with at least min_members particles, in catalogue order, on every
 * rank (*list, *n_list: free it). */
static phew_status order_groups(const points_context *x, const particle_set *s, const group_keys *g, group_count **list,
                                int64_t *n_list)
{
  comm *c = x->c;
  *list = NULL;
  *n_list = 0;
  /* this rank's counts per key, to the keys' home ranks */
  group_count *counts = phew_malloc((size_t)s->n_own + 1, sizeof *counts);
  int64_t n = 0;
  const int counted = count_own_keys(s, g, counts, &n);
  inbox in = {0};
  phew_status status = send_counts_home(c, counts, n, counted, &in);
  free(counts);
  /* merged there; the large enough ones to rank 0, and in order from there to every rank */
  group_count *home = status == PHEW_OK ? phew_malloc((size_t)in.n + 1, sizeof *home) : NULL;
  int64_t n_kept = 0;
  const int merged = merge_home_counts(&in, g->min_members, home, &n_kept);
  inbox_free(&in);
  if (comm_max(c, status != PHEW_OK || !merged)) {
    free(home);
    return PHEW_ERROR_MEMORY;
  }
  status = gather_in_catalogue_order(c, home, n_kept, list, n_list);
  free(home);
  return status;
}

/* Collective: per-rank items (one per group present here) merged on rank 0 into out[id]
 * (n_groups of them, rank 0 only) with merge(). */
static phew_status merge_on_rank0(comm *c, const void *items, int64_t n, size_t item_size, void *out, int64_t n_groups,
                                  void (*merge)(void *to, const void *from))
{
  void *gathered = NULL;
  int64_t n_gathered = 0;
  int *from = NULL;
  phew_status status = comm_gather(c, items, n, item_size, &gathered, &n_gathered, &from);
  free(from);
  for (int64_t k = 0; status == PHEW_OK && c->rank == 0 && k < n_gathered; ++k) {
    const unsigned char *it = (const unsigned char *)gathered + (size_t)k * item_size;
    int64_t id;
    memcpy(&id, it, sizeof id);
    if (id >= 0 && id < n_groups)
      merge((unsigned char *)out + (size_t)id * item_size, it);
  }
  free(gathered);
  return status;
}

static void sums_merge_into(void *to, const void *from)
{
  group_sums *a = to;
  const group_sums *b = from;
  exact_sum_merge(&a->mass, &b->mass);
  for (int d = 0; d < 3; ++d) {
    exact_sum_merge(&a->moment[d], &b->moment[d]);
    exact_sum_merge(&a->momentum[d], &b->momentum[d]);
  }
}

static void spread_merge_into(void *to, const void *from)
{
  group_spread *a = to;
  const group_spread *b = from;
  a->max_distance2 = b->max_distance2 > a->max_distance2 ? b->max_distance2 : a->max_distance2;
  exact_sum_merge(&a->dispersion, &b->dispersion);
}

static void sums_clear_group(group_sums *t, int64_t id)
{
  memset(t, 0, sizeof *t); /* padding too: the sums travel bytewise */
  t->id = id;
  exact_sum_clear(&t->mass);
  for (int d = 0; d < 3; ++d) {
    exact_sum_clear(&t->moment[d]);
    exact_sum_clear(&t->momentum[d]);
  }
}

static void spread_clear_group(group_spread *t, int64_t id)
{
  memset(t, 0, sizeof *t);
  t->id = id;
  exact_sum_clear(&t->dispersion);
}

/* ---- the per-particle passes, on the threads -------------------------------------------- */

enum { GROUP_TASK = 65536 }; /* particles per task */
enum { STEP_LABELS, STEP_SUMS, STEP_SPREAD };

typedef struct particle_job {
  const points_context *x;
  const particle_set *s;
  const group_keys *g;
  int64_t *group_id;
  const id_map *of_key;
  const group_count *list;
  const int64_t *slot;  /* per group: its place in this rank's partial sums, or -1 */
  group_sums *sums;     /* per thread: n_here partial sums */
  group_spread *spread; /* per thread: n_here */
  const double *centre; /* per group: centre of mass and mean velocity */
  int64_t n_here;
  int step;
} particle_job;

/* Task: the labels, or one thread's partial sums (exact: their merge does not depend on which
 * thread took which particles), of one range of particles. */
static void particle_task(void *context, int thread, int64_t task)
{
  const particle_job *job = context;
  const particle_set *s = job->s;
  const points_context *x = job->x;
  const int64_t end = (task + 1) * GROUP_TASK < s->n_own ? (task + 1) * GROUP_TASK : s->n_own;
  for (int64_t i = task * GROUP_TASK; i < end; ++i) {
    if (job->step == STEP_LABELS) {
      job->group_id[i] = job->g->key[i] >= 0 ? id_map_find(job->of_key, job->g->key[i]) : -1;
      continue;
    }
    const int64_t id = job->group_id[i];
    if (id < 0)
      continue;
    const size_t at = (size_t)thread * (size_t)job->n_here + (size_t)job->slot[id];
    const double m = s->mass ? s->mass[i] : 1.0;
    if (job->step == STEP_SUMS) {
      group_sums *t = &job->sums[at];
      double delta[3];
      for (int d = 0; d < 3; ++d)
        delta[d] = particle_delta(&x->box, d, s->position[3 * i + d], job->list[id].reference[d]);
      if (!s->mass) { /* unit masses: the terms themselves, no products (the mass is the count,
                         set once on rank 0) */
        for (int d = 0; d < 3; ++d) {
          exact_sum_add(&t->moment[d], delta[d]);
          if (s->velocity)
            exact_sum_add(&t->momentum[d], s->velocity[3 * i + d]);
        }
        continue;
      }
      exact_sum_add(&t->mass, m);
      for (int d = 0; d < 3; ++d) {
        exact_sum_add_product(&t->moment[d], m, delta[d]);
        if (s->velocity)
          exact_sum_add_product(&t->momentum[d], m, s->velocity[3 * i + d]);
      }
      continue;
    }
    group_spread *t = &job->spread[at];
    const double *centre = &job->centre[6 * id];
    const double r2 = particle_distance2(&x->box, &s->position[3 * i], centre);
    t->max_distance2 = r2 > t->max_distance2 ? r2 : t->max_distance2;
    if (s->velocity) {
      double v2 = 0.0;
      for (int d = 0; d < 3; ++d) {
        const double dv = s->velocity[3 * i + d] - centre[3 + d];
        v2 += dv * dv;
      }
      exact_sum_add_product(&t->dispersion, m, v2);
    }
  }
}

/* A step of partial sums: the `partials` copies (one per thread) of the groups present here
 * cleared, summed on the threads, and merged into the first copy (exactly). */
static void partial_sums(particle_job *job, int step, int partials, int64_t n_tasks, int64_t n_groups)
{
  job->step = step;
  for (int t = 0; t < partials; ++t)
    for (int64_t k = 0; k < n_groups; ++k) {
      if (job->slot[k] < 0)
        continue;
      const size_t at = (size_t)t * (size_t)job->n_here + (size_t)job->slot[k];
      if (step == STEP_SUMS)
        sums_clear_group(&job->sums[at], k);
      else
        spread_clear_group(&job->spread[at], k);
    }
  threads_run(partials, n_tasks, particle_task, job);
  for (int t = 1; t < partials; ++t)
    for (int64_t k = 0; k < job->n_here; ++k) {
      const size_t at = (size_t)t * (size_t)job->n_here + (size_t)k;
      if (step == STEP_SUMS)
        sums_merge_into(&job->sums[k], &job->sums[at]);
      else
        spread_merge_into(&job->spread[k], &job->spread[at]);
    }
}

/* What the steps of groups_build share. */
typedef struct group_build {
  const points_context *x;
  const particle_set *s;
  const group_keys *g;
  group_count *list; /* the groups in catalogue order, on every rank */
  int64_t n_groups;
  int64_t *slot; /* per group: its place among the groups present here, or -1 */
  int64_t n_here;
  particle_job job;
  int threads, partials;
  int64_t n_tasks;
  group_sums *total;          /* rank 0: per group */
  double *centre;             /* per group: centre of mass and mean velocity (6) */
  group_spread *spread_total; /* rank 0: per group */
} group_build;

/* The GroupIds, and the groups present here (their slot in this rank's partial sums); 0 if
 * memory ran out. */
static int label_groups(group_build *b, int64_t *group_id)
{
  const particle_set *s = b->s;
  id_map of_key;
  memset(&of_key, 0, sizeof of_key);
  b->slot = phew_malloc((size_t)b->n_groups + 1, sizeof *b->slot);
  int ok = b->slot && id_map_init(&of_key, b->n_groups) == 0;
  for (int64_t k = 0; ok && k < b->n_groups; ++k) {
    int64_t ignored;
    ok = id_map_insert(&of_key, b->list[k].key, k, &ignored) == 0;
    b->slot[k] = -1; /* not here, until a particle says so */
  }
  b->job = (particle_job){b->x, s, b->g, group_id, &of_key, b->list, b->slot, NULL, NULL, NULL, 0, STEP_LABELS};
  b->threads = b->x->n_threads > 0 ? b->x->n_threads : 1;
  b->n_tasks = (s->n_own + GROUP_TASK - 1) / GROUP_TASK;
  if (ok)
    threads_run(b->threads, b->n_tasks, particle_task, &b->job);
  for (int64_t i = 0; ok && i < s->n_own; ++i)
    if (group_id[i] >= 0)
      b->slot[group_id[i]] = 0;
  for (int64_t k = 0; ok && k < b->n_groups; ++k) /* in catalogue order */
    if (b->slot[k] == 0)
      b->slot[k] = b->n_here++;
  if (of_key.slots)
    id_map_free(&of_key);
  b->job.of_key = NULL;
  /* the threads' partial sums: as many copies as threads run, while they stay small against
   * the particles (many tiny groups: one thread, reading the particles in order) */
  b->partials = b->threads < b->n_tasks ? b->threads : (int)(b->n_tasks > 0 ? b->n_tasks : 1);
  if ((double)b->partials * (double)b->n_here * (double)sizeof(group_sums) > 32.0 * (double)s->n_own + 65536.0)
    b->partials = 1;
  return ok;
}

/* Collective: the sums of every group, relative to its reference particle, on rank 0. */
static phew_status sum_groups(group_build *b, int ok)
{
  comm *c = b->x->c;
  group_sums *sums = ok ? phew_malloc((size_t)b->partials * (size_t)b->n_here + 1, sizeof *sums) : NULL;
  ok = ok && sums;
  b->job.sums = sums;
  b->job.n_here = b->n_here;
  if (ok)
    partial_sums(&b->job, STEP_SUMS, b->partials, b->n_tasks, b->n_groups);
  b->total = c->rank == 0 ? phew_malloc((size_t)b->n_groups + 1, sizeof *b->total) : NULL;
  ok = ok && (c->rank != 0 || b->total);
  for (int64_t k = 0; ok && b->total && k < b->n_groups; ++k)
    sums_clear_group(&b->total[k], k);
  phew_status status = comm_max(c, !ok) ? PHEW_ERROR_MEMORY : PHEW_OK;
  if (status == PHEW_OK)
    status = merge_on_rank0(c, ok ? sums : NULL, ok ? b->n_here : 0, sizeof *sums, b->total, b->n_groups,
                            sums_merge_into);
  free(sums);
  b->job.sums = NULL;
  return status;
}

/* Collective: centres of mass and mean velocities, on rank 0, then everywhere. */
static phew_status group_centres(group_build *b)
{
  const points_context *x = b->x;
  comm *c = x->c;
  b->centre = c->rank == 0 ? phew_malloc((size_t)b->n_groups + 1, 6 * sizeof *b->centre) : NULL;
  int64_t n_centre = b->n_groups;
  if (comm_max(c, c->rank == 0 && !b->centre))
    return PHEW_ERROR_MEMORY;
  for (int64_t k = 0; c->rank == 0 && k < b->n_groups; ++k) {
    group_sums *t = &b->total[k];
    if (!b->s->mass) /* unit masses: the same exact sum as one per particle */
      exact_sum_add_times_int(&t->mass, 1.0, b->list[k].count);
    const wide_float mass = exact_sum_value(&t->mass);
    for (int d = 0; d < 3; ++d) {
      b->centre[6 * k + d] = points_wrap(x, d,
                                         b->list[k].reference[d] + wide_ratio(exact_sum_value(&t->moment[d]), mass));
      b->centre[6 * k + 3 + d] = x->has_velocity ? wide_ratio(exact_sum_value(&t->momentum[d]), mass) : 0.0;
    }
  }
  return comm_broadcast(c, (void **)&b->centre, &n_centre, 6 * sizeof *b->centre);
}

/* Collective: the spread of every group about its centre, on rank 0. */
static phew_status group_spreads(group_build *b)
{
  comm *c = b->x->c;
  group_spread *spread = phew_malloc((size_t)b->partials * (size_t)b->n_here + 1, sizeof *spread);
  const int ok = spread != NULL;
  b->job.spread = spread;
  b->job.centre = b->centre;
  if (ok)
    partial_sums(&b->job, STEP_SPREAD, b->partials, b->n_tasks, b->n_groups);
  b->spread_total = c->rank == 0 ? phew_malloc((size_t)b->n_groups + 1, sizeof *b->spread_total) : NULL;
  for (int64_t k = 0; b->spread_total && k < b->n_groups; ++k)
    spread_clear_group(&b->spread_total[k], k);
  phew_status status = PHEW_OK;
  if (comm_max(c, !ok || (c->rank == 0 && !b->spread_total)))
    status = PHEW_ERROR_MEMORY;
  if (status == PHEW_OK)
    status = merge_on_rank0(c, spread, b->n_here, sizeof *spread, b->spread_total, b->n_groups, spread_merge_into);
  free(spread);
  b->job.spread = NULL;
  return status;
}

/* Rank 0: the catalogue's rows from the sums. */
static phew_status write_catalogue(const group_build *b, call_result *result)
{
  const points_context *x = b->x;
  const group_keys *g = b->g;
  result->groups = phew_malloc((size_t)b->n_groups + 1, sizeof *result->groups);
  if (!result->groups)
    return phew_fail(result, PHEW_ERROR_MEMORY, "out of memory for the group catalogue");
  for (int64_t k = 0; k < b->n_groups; ++k) {
    const group_count *l = &b->list[k];
    phew_group *o = &result->groups[k];
    memset(o, 0, sizeof *o);
    o->id = k;
    o->n_particles = l->count;
    o->min_particle_id = l->min_id;
    const wide_float mass = exact_sum_value(&b->total[k].mass);
    char subject[64], why[sizeof result->message];
    snprintf(subject, sizeof subject, "the mass of group %lld", (long long)k);
    if (wide_to_double_why(mass, subject, "rescale the particle masses", &o->mass, why, sizeof why) != 0) {
      free(result->groups);
      result->groups = NULL;
      return phew_fail(result, PHEW_ERROR_DATA, "%s", why);
    }
    for (int d = 0; d < 3; ++d) {
      o->center_of_mass[d] = b->centre[6 * k + d];
      o->mean_velocity[d] = x->has_velocity ? b->centre[6 * k + 3 + d] : NAN;
      o->peak_position[d] = g->density ? l->reference[d] : NAN;
    }
    o->radius = sqrt(b->spread_total[k].max_distance2);
    o->velocity_dispersion = x->has_velocity ? sqrt(wide_ratio(exact_sum_value(&b->spread_total[k].dispersion), mass))
                                             : NAN;
    o->peak_id = g->density ? l->key : -1;
    o->peak_density = g->density ? l->reference_density : NAN;
  }
  result->n_groups = b->n_groups;
  return PHEW_OK;
}

phew_status groups_build(const points_context *x, const particle_set *s, const group_keys *g, int64_t *group_id)
{
  comm *c = x->c;
  call_result *result = x->result;
  group_build b;
  memset(&b, 0, sizeof b);
  b.x = x;
  b.s = s;
  b.g = g;
  phew_status status = order_groups(x, s, g, &b.list, &b.n_groups);
  if (status != PHEW_OK)
    return comm_agree(c, phew_fail(result, status, "out of memory for the group catalogue"), result);
  status = sum_groups(&b, label_groups(&b, group_id));
  if (status == PHEW_OK)
    status = group_centres(&b);
  if (status == PHEW_OK)
    status = group_spreads(&b);
  free(b.slot);
  phew_status mine = PHEW_OK;
  if (status == PHEW_OK && c->rank == 0)
    mine = write_catalogue(&b, result);
  free(b.total);
  free(b.spread_total);
  free(b.centre);
  free(b.list);
  if (status != PHEW_OK)
    mine = phew_fail(result, PHEW_ERROR_MEMORY, "out of memory for the group catalogue");
  status = comm_agree(c, mine, result);
  if (status == PHEW_OK) { /* every rank knows the columns */
    result->columns = (x->has_velocity ? PHEW_COLUMNS_VELOCITY : 0) | (g->density ? PHEW_COLUMNS_PEAK : 0) |
                      PHEW_COLUMNS_PARTICLES;
  }
  return status;
}
