/* Subvolumes balanced by particle count (Parallel HOP, Skory et al. 2010, section 3): the
 * domain is cut by recursive bisection, each cut across the longest side of its region at
 * the coordinate that leaves the wanted share of the region's particles on the lower side.
 * The cut is found by refining a histogram of that coordinate, all regions of a level at
 * once (a few all-reduces of 256 counts per region), until the bin holding the cut holds at
 * most 1/4096 of the region's particles: the shares are then that close to the wanted ones
 * (or the bins reach the last bits of a double). Then every particle goes to the rank
 * of its subvolume, and at the end the answers go back to where each particle was passed. */
#include "particles.h"
#include "threads.h"

#include <math.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#define DOMAIN_BINS 256
#define DOMAIN_REFINEMENTS 8 /* 256^8 = 2^64: down to the last bits of a double */
#define DOMAIN_BALANCE 4096  /* refinement stops once the cut's bin holds at most this fraction */

double subvolume_distance2(const particle_box *box, const subvolume *v, const double *p)
{
  double d2 = 0.0;
  for (int d = 0; d < 3; ++d) {
    double out;
    if (box->periodic[d]) {
      const double half = 0.5 * (v->hi[d] - v->lo[d]);
      out = fabs(particle_delta(box, d, p[d], v->lo[d] + half)) - half;
    } else {
      out = p[d] < v->lo[d] ? v->lo[d] - p[d] : p[d] - v->hi[d];
    }
    if (out > 0.0)
      d2 += out * out;
  }
  return d2;
}

/* A region of the bisection: ranks [first, last) share it. */
typedef struct region {
  int first, last;
  subvolume v;
  int64_t count; /* particles inside, all ranks */
  int axis;
  double cut_lo, cut_width; /* the histogram's current interval: [cut_lo, cut_lo + 256 cut_width) */
  int64_t below;            /* particles of the region below cut_lo */
  int64_t want;             /* particles wanted below the cut */
  int settled;              /* the cut is close enough: its bin holds few particles */
} region;

static int bin_of(double x, const region *g)
{
  const double b = (x - g->cut_lo) / g->cut_width;
  if (!(b >= 0.0))
    return -1;
  return b >= DOMAIN_BINS ? DOMAIN_BINS : (int)b;
}

/* What the bisection's rounds share: the regions so far and the region of each own particle. */
typedef struct bisection {
  const points_context *x;
  const particle_set *s;
  region *regions;
  int n_regions;
  int32_t *where; /* region of each own particle */
  int64_t *hist;  /* per region: DOMAIN_BINS + 1 bins */
  int *upper_of;  /* the region split off a region, or -1 */
} bisection;

/* The regions of several ranks get a cut: the longest axis, and the count below the cut
 * their lower ranks' share; 0 when no region has more than one rank. */
static int choose_cuts(bisection *b)
{
  int splitting = 0;
  for (int k = 0; k < b->n_regions; ++k) {
    region *g = &b->regions[k];
    if (g->last - g->first < 2)
      continue;
    splitting = 1;
    g->axis = 0;
    for (int d = 1; d < 3; ++d)
      if (g->v.hi[d] - g->v.lo[d] > g->v.hi[g->axis] - g->v.lo[g->axis])
        g->axis = d;
    const int lower = (g->last - g->first) / 2;
    g->want = (int64_t)((double)g->count * lower / (g->last - g->first));
    g->cut_lo = g->v.lo[g->axis];
    g->cut_width = (g->v.hi[g->axis] - g->v.lo[g->axis]) / DOMAIN_BINS;
    g->below = 0;
    g->settled = !(g->cut_width > 0.0);
  }
  return splitting;
}

/* Collective: refine the interval holding each cut, the bin where the count below reaches
 * the share, until it holds few enough particles. */
static void refine_cuts(bisection *b)
{
  const particle_set *s = b->s;
  for (int step = 0; step < DOMAIN_REFINEMENTS; ++step) {
    int refining = 0;
    for (int k = 0; k < b->n_regions; ++k)
      refining |= b->regions[k].last - b->regions[k].first >= 2 && !b->regions[k].settled;
    if (!refining) /* the same on every rank: the counts are global */
      break;
    memset(b->hist, 0, (size_t)b->n_regions * (DOMAIN_BINS + 1) * sizeof *b->hist);
    for (int64_t i = 0; i < s->n_own; ++i) {
      const region *g = &b->regions[b->where[i]];
      if (g->last - g->first < 2 || g->settled)
        continue;
      const int bin = bin_of(s->position[3 * i + g->axis], g);
      if (bin >= 0)
        b->hist[(size_t)b->where[i] * (DOMAIN_BINS + 1) + (size_t)bin]++;
    }
    comm_sum_array(b->x->c, b->hist, (int64_t)b->n_regions * (DOMAIN_BINS + 1));
    for (int k = 0; k < b->n_regions; ++k) {
      region *g = &b->regions[k];
      if (g->last - g->first < 2 || g->settled)
        continue;
      const int64_t *h = b->hist + (size_t)k * (DOMAIN_BINS + 1);
      int bin = 0;
      while (bin < DOMAIN_BINS - 1 && g->below + h[bin] < g->want) /* the bin where want is reached */
        g->below += h[bin++];
      g->cut_lo += bin * g->cut_width;
      g->cut_width /= DOMAIN_BINS;
      /* a cut anywhere in that bin misses the share by at most its count */
      g->settled = h[bin] <= g->count / DOMAIN_BALANCE || !(g->cut_width > 0.0);
    }
  }
}

/* Collective: every region of several ranks cut in two, lower part [lo, cut), upper part
 * [cut, hi]; the particles follow, and the regions' counts are summed again. */
static void cut_regions(bisection *b)
{
  const particle_set *s = b->s;
  const int old = b->n_regions;
  for (int k = 0; k < old; ++k) {
    region *g = &b->regions[k];
    b->upper_of[k] = -1;
    if (g->last - g->first < 2)
      continue;
    b->upper_of[k] = b->n_regions;
    double cut = g->cut_lo; /* a flat region (no width) sends everything up */
    cut = cut > g->v.hi[g->axis] ? g->v.hi[g->axis] : (cut < g->v.lo[g->axis] ? g->v.lo[g->axis] : cut);
    region *u = &b->regions[b->n_regions++];
    *u = *g;
    const int lower = (g->last - g->first) / 2;
    u->first = g->first + lower;
    g->last = g->first + lower;
    g->v.hi[g->axis] = cut;
    u->v.lo[g->axis] = cut;
  }
  memset(b->hist, 0, (size_t)b->n_regions * sizeof *b->hist);
  for (int64_t i = 0; i < s->n_own; ++i) {
    const region *g = &b->regions[b->where[i]];
    if (b->upper_of[b->where[i]] >= 0 && s->position[3 * i + g->axis] >= g->v.hi[g->axis])
      b->where[i] = b->upper_of[b->where[i]];
    b->hist[b->where[i]]++;
  }
  comm_sum_array(b->x->c, b->hist, b->n_regions);
  for (int k = 0; k < b->n_regions; ++k)
    b->regions[k].count = b->hist[k];
}

phew_status domain_split(const points_context *x, const particle_set *s, subvolume *parts)
{
  comm *c = x->c;
  const int size = c->size;
  bisection b = {x,
                 s,
                 phew_malloc((size_t)size, sizeof *b.regions),
                 1,
                 phew_malloc((size_t)s->n_own + 1, sizeof *b.where),
                 phew_malloc((size_t)size * (DOMAIN_BINS + 1), sizeof *b.hist),
                 phew_malloc((size_t)size, sizeof *b.upper_of)};
  phew_status status = PHEW_OK;
  if (comm_max(c, !b.regions || !b.where || !b.hist || !b.upper_of)) {
    status = comm_agree(c, phew_fail(x->result, PHEW_ERROR_MEMORY, "out of memory while splitting the domain"),
                        x->result);
  } else {
    region *all = &b.regions[0]; /* the whole domain, for all ranks */
    all->first = 0;
    all->last = size;
    for (int d = 0; d < 3; ++d) {
      all->v.lo[d] = x->lo[d];
      all->v.hi[d] = x->hi[d];
    }
    all->count = x->n_total;
    for (int64_t i = 0; i < s->n_own; ++i)
      b.where[i] = 0;
    while (choose_cuts(&b)) {
      refine_cuts(&b);
      cut_regions(&b);
    }
    for (int k = 0; k < b.n_regions; ++k)
      parts[b.regions[k].first] = b.regions[k].v;
  }
  free(b.upper_of);
  free(b.regions);
  free(b.where);
  free(b.hist);
  return status;
}

/* A particle on its way to its owner: the fields the set has, packed (its origin rank is the
 * rank it comes from). */
typedef struct packing {
  size_t size, at_mass, at_velocity, at_density;
} packing;

static packing packing_of(const points_context *x)
{
  packing k;
  k.size = 3 * sizeof(double) + 2 * sizeof(int64_t); /* position, id, origin index */
  k.at_mass = k.size;
  k.size += x->has_mass ? sizeof(double) : 0;
  k.at_velocity = k.size;
  k.size += x->carries_velocity ? 3 * sizeof(double) : 0;
  k.at_density = k.size;
  k.size += x->has_density ? sizeof(double) : 0;
  return k;
}

static int owner_of(const points_context *x, const subvolume *parts, const double *p)
{
  /* the subvolumes tile the domain: the first one holding p (upper faces belong upwards) */
  int best = 0;
  double best_d2 = INFINITY;
  for (int r = 0; r < x->c->size; ++r) {
    int inside = 1;
    for (int d = 0; d < 3 && inside; ++d)
      inside = p[d] >= parts[r].lo[d] && (p[d] < parts[r].hi[d] || parts[r].hi[d] == x->hi[d]);
    if (inside)
      return r;
    const double d2 = subvolume_distance2(&x->box, &parts[r], p);
    if (d2 < best_d2) {
      best_d2 = d2;
      best = r;
    }
  }
  return best; /* rounding at a face: the nearest subvolume */
}

/* Particle i of the set moved to place `to` (to <= i) of the same arrays. */
static void move_particle(const points_context *x, particle_set *s, int64_t i, int64_t to)
{
  memmove(&s->position[3 * to], &s->position[3 * i], 3 * sizeof(double));
  s->id[to] = s->id[i];
  if (x->has_mass)
    s->mass[to] = s->mass[i];
  if (x->carries_velocity)
    memmove(&s->velocity[3 * to], &s->velocity[3 * i], 3 * sizeof(double));
  if (x->has_density)
    s->density[to] = s->density[i];
}

static void pack_particle(const points_context *x, const packing *k, const particle_set *s, int64_t i,
                          unsigned char *item)
{
  memcpy(item, &s->position[3 * i], 3 * sizeof(double)); /* every byte of the item is written */
  memcpy(item + 24, &s->id[i], 8);
  memcpy(item + 32, &i, 8);
  if (x->has_mass)
    memcpy(item + k->at_mass, &s->mass[i], 8);
  if (x->carries_velocity)
    memcpy(item + k->at_velocity, &s->velocity[3 * i], 24);
  if (x->has_density)
    memcpy(item + k->at_density, &s->density[i], 8);
}

static void unpack_particle(const points_context *x, const packing *k, const unsigned char *item, particle_set *s,
                            int64_t to)
{
  memcpy(&s->position[3 * to], item, 24);
  memcpy(&s->id[to], item + 24, 8);
  memcpy(&s->origin_index[to], item + 32, 8);
  if (x->has_mass)
    memcpy(&s->mass[to], item + k->at_mass, 8);
  if (x->carries_velocity)
    memcpy(&s->velocity[3 * to], item + k->at_velocity, 24);
  if (x->has_density)
    memcpy(&s->density[to], item + k->at_density, 8);
}

/* Room for n own particles in every array of a set that has just been read (which has no
 * padding arrays yet). 0 if memory ran out. */
static int reserve_own(const points_context *x, particle_set *s, int64_t n)
{
  return particle_set_reserve(s, n) == PHEW_OK &&
         !phew_grow(&s->origin_index, (size_t)n + 1, sizeof *s->origin_index) &&
         (s->origin_rank = phew_malloc((size_t)n + 1, sizeof *s->origin_rank)) &&
         (!x->carries_velocity || !phew_grow(&s->velocity, (size_t)n + 1, 3 * sizeof *s->velocity)) &&
         (!x->has_density || !phew_grow(&s->density, (size_t)n + 1, sizeof *s->density));
}

phew_status domain_redistribute(const points_context *x, const subvolume *parts, particle_set *s)
{
  comm *c = x->c;
  const packing k = packing_of(x);
  const int64_t n_own = s->n_own;
  /* the particles that stay keep their arrays (moved down in place); only those that leave
   * are packed, straight into one buffer grouped by owner */
  int32_t *owner = phew_malloc((size_t)n_own + 1, sizeof *owner);
  int *count = calloc((size_t)c->size, sizeof *count);
  int64_t *at = phew_malloc((size_t)c->size + 1, sizeof *at);
  int failed = !owner || !count || !at || n_own > INT_MAX;
  for (int64_t i = 0; !failed && i < n_own; ++i) {
    owner[i] = owner_of(x, parts, &s->position[3 * i]);
    count[owner[i]]++;
  }
  const int64_t n_stay = failed ? 0 : count[c->rank];
  if (!failed)
    count[c->rank] = 0;
  unsigned char *items = failed ? NULL : phew_malloc((size_t)(n_own - n_stay) + 1, k.size);
  int64_t *stay_index = failed ? NULL : phew_malloc((size_t)n_stay + 1, sizeof *stay_index);
  if (comm_max(c, failed || !items || !stay_index)) {
    free(owner);
    free(count);
    free(at);
    free(items);
    free(stay_index);
    return comm_agree(
        c, phew_fail(x->result, PHEW_ERROR_MEMORY, "out of memory while sending the particles to their subvolumes"),
        x->result);
  }
  at[0] = 0;
  for (int r = 0; r < c->size; ++r)
    at[r + 1] = at[r] + count[r];
  int64_t kept = 0;
  for (int64_t i = 0; i < n_own; ++i) {
    if (owner[i] == c->rank) {
      move_particle(x, s, i, kept);
      stay_index[kept++] = i;
    } else {
      pack_particle(x, &k, s, i, items + (size_t)at[owner[i]]++ * k.size);
    }
  }
  free(owner);
  free(at);
  inbox in = {0};
  phew_status status = comm_exchange_grouped(c, items, count, k.size, &in);
  free(items);
  free(count);
  if (status == PHEW_OK) {
    const int64_t n = n_stay + in.n;
    free(s->origin_index);
    s->origin_index = stay_index; /* grows to n */
    stay_index = NULL;
    if (!reserve_own(x, s, n))
      status = PHEW_ERROR_MEMORY;
    for (int64_t i = 0; status == PHEW_OK && i < n_stay; ++i)
      s->origin_rank[i] = c->rank;
    for (int r = 0; status == PHEW_OK && r < c->size; ++r)
      for (int64_t j = in.offset[r]; j < in.offset[r] + in.count[r]; ++j) {
        unpack_particle(x, &k, in.items + (size_t)j * k.size, s, n_stay + j);
        s->origin_rank[n_stay + j] = r;
      }
    s->n_own = s->n = n;
  }
  free(stay_index);
  inbox_free(&in);
  status = comm_agree(c,
                      status == PHEW_OK ? status
                                        : phew_fail(x->result, PHEW_ERROR_MEMORY,
                                                    "out of memory while sending the particles to their subvolumes"),
                      x->result);
  return status;
}

enum { RETURN_BLOCK = 16384 }; /* particles per task of the answers' return on one rank */

/* The answers of particles that never left: each to its place, a block per task (the places
 * are distinct, so the tasks write apart). */
typedef struct return_job {
  const particle_set *s;
  const unsigned char *from;
  unsigned char *into;
  size_t value_size;
} return_job;

static void return_task(void *context, int thread, int64_t task)
{
  (void)thread;
  const return_job *job = context;
  const int64_t begin = task * RETURN_BLOCK;
  const int64_t end = begin + RETURN_BLOCK < job->s->n_own ? begin + RETURN_BLOCK : job->s->n_own;
  for (int64_t i = begin; i < end; ++i)
    memcpy(job->into + (size_t)(job->s->origin_index ? job->s->origin_index[i] : i) * job->value_size,
           job->from + (size_t)i * job->value_size, job->value_size);
}

/* An answer on its way back: the particle's index where it was passed, then its value. */
phew_status domain_return(const points_context *x, const particle_set *s, const void *values, size_t value_size,
                          void *out, int64_t n_passed)
{
  comm *c = x->c;
  unsigned char *into = out;
  const unsigned char *from = values;
  if (!s->origin_rank) { /* never left this rank: each to its place */
    return_job job = {s, from, into, value_size};
    threads_run(x->n_threads, (s->n_own + RETURN_BLOCK - 1) / RETURN_BLOCK, return_task, &job);
    return PHEW_OK;
  }
  /* the answers of particles passed here go to their places; the others are packed grouped by
   * the rank they came from */
  const size_t size = sizeof(int64_t) + value_size;
  int *count = calloc((size_t)c->size, sizeof *count);
  int64_t *at = phew_malloc((size_t)c->size + 1, sizeof *at);
  int failed = !count || !at;
  int64_t n_here = 0;
  for (int64_t i = 0; !failed && i < s->n_own; ++i)
    if (s->origin_rank[i] != c->rank)
      count[s->origin_rank[i]]++;
    else
      ++n_here;
  unsigned char *items = failed ? NULL : phew_malloc((size_t)(s->n_own - n_here) + 1, size);
  phew_status status = PHEW_OK;
  if (comm_max(c, failed || !items))
    status = PHEW_ERROR_MEMORY;
  if (status == PHEW_OK) {
    at[0] = 0;
    for (int r = 0; r < c->size; ++r)
      at[r + 1] = at[r] + count[r];
  }
  for (int64_t i = 0; status == PHEW_OK && i < s->n_own; ++i) {
    const int64_t index = s->origin_index[i];
    const unsigned char *value = from + (size_t)i * value_size;
    if (s->origin_rank[i] == c->rank) {
      if (index < 0 || index >= n_passed) {
        status = PHEW_ERROR_MPI;
        break;
      }
      memcpy(into + (size_t)index * value_size, value, value_size);
      continue;
    }
    unsigned char *item = items + (size_t)at[s->origin_rank[i]]++ * size;
    memcpy(item, &index, sizeof index);
    memcpy(item + sizeof index, value, value_size);
  }
  inbox in = {0};
  status = comm_agree(c, status, x->result);
  if (status == PHEW_OK)
    status = comm_exchange_grouped(c, items, count, size, &in);
  free(items);
  free(count);
  free(at);
  if (status == PHEW_OK && in.n + n_here != n_passed)
    status = PHEW_ERROR_MPI;
  for (int64_t k = 0; status == PHEW_OK && k < in.n; ++k) {
    int64_t index;
    memcpy(&index, in.items + (size_t)k * size, sizeof index);
    if (index < 0 || index >= n_passed) {
      status = PHEW_ERROR_MPI;
      break;
    }
    memcpy(into + (size_t)index * value_size, in.items + (size_t)k * size + sizeof(int64_t), value_size);
  }
  inbox_free(&in);
  return comm_agree(c,
                    status == PHEW_OK
                        ? status
                        : phew_fail(x->result, status == PHEW_ERROR_MPI ? PHEW_ERROR_MPI : PHEW_ERROR_MEMORY,
                                    "the answers could not be sent back to where the particles were passed"),
                    x->result);
}
