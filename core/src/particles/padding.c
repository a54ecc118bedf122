/* Padding (Parallel HOP, Skory et al. 2010, section 3): each rank's subvolume gets copies of
 * the particles of other subvolumes near it, so that its own particles find their exact
 * neighbours and densities locally.
 *
 * The width is not a guess with a safety factor: after each search, every own particle
 * checks that the ball its answer depends on (its reach, the distance of the farthest
 * neighbour it needed) lies inside the padded region. A particle at distance d from the
 * open faces of its subvolume sees every particle within w + d when the padding is w wide;
 * where the reach is larger, the width grows to what that particle needs (its reach found
 * so far only shrinks as particles are added, so one widening suffices for it) and only the
 * particles that failed search again. */
#include "points.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A padding particle on its way: position, id, mass, smoothing length. */
typedef struct padding_item {
  double position[3];
  int64_t id;
  double mass;
  double h;
} padding_item;

/* Appends the received particles to s as padding, each with its owner (the sender). */
static phew_status append_padding(particle_set *s, const inbox *in, int n_ranks)
{
  if (in->n == 0)
    return PHEW_OK;
  if (!s->owner && !(s->owner = phew_malloc((size_t)s->capacity + 1, sizeof *s->owner)))
    return PHEW_ERROR_MEMORY;
  if (particle_set_reserve(s, s->n + in->n) != PHEW_OK)
    return PHEW_ERROR_MEMORY;
  for (int r = 0, k = 0; r < n_ranks; ++r) { /* grouped by source rank */
    for (int j = 0; j < in->count[r]; ++j, ++k) {
      padding_item it;
      memcpy(&it, in->items + (size_t)k * sizeof it, sizeof it);
      const int64_t i = s->n++;
      memcpy(&s->position[3 * i], it.position, sizeof it.position);
      s->id[i] = it.id;
      if (s->mass)
        s->mass[i] = it.mass;
      if (s->h)
        s->h[i] = it.h;
      s->owner[i - s->n_own] = r;
    }
  }
  return PHEW_OK;
}

/* Sends every own particle to the ranks whose subvolume lies within its reach:
 * dist^2(p, part q) <= reach2(q, p), and, when above_width is given, beyond the width already
 * sent to q (above_width[q] < 0: nothing sent yet). */
typedef double (*reach2_fn)(const void *context, int q, int64_t i);

static phew_status send_padding(const points_context *x, const subvolume *parts, particle_set *s, reach2_fn reach2,
                                const void *context, const double *above_width)
{
  comm *c = x->c;
  outbox o;
  outbox_init(&o, c, sizeof(padding_item));
  for (int64_t i = 0; i < s->n_own; ++i)
    for (int q = 0; q < c->size; ++q) {
      if (q == c->rank)
        continue;
      const double d2 = subvolume_distance2(&x->box, &parts[q], &s->position[3 * i]);
      if (d2 > reach2(context, q, i) || (above_width && above_width[q] >= 0.0 && d2 <= above_width[q] * above_width[q]))
        continue;
      padding_item it;
      memset(&it, 0, sizeof it);
      memcpy(it.position, &s->position[3 * i], sizeof it.position);
      it.id = s->id[i];
      it.mass = s->mass ? s->mass[i] : 1.0;
      it.h = s->h ? s->h[i] : 0.0;
      outbox_put(&o, q, &it);
    }
  inbox in;
  phew_status status = outbox_send(&o, c, &in);
  outbox_free(&o);
  if (status == PHEW_OK)
    status = append_padding(s, &in, c->size);
  inbox_free(&in);
  return comm_agree(c, status == PHEW_OK ? status
                                          : phew_fail(x->result, PHEW_ERROR_MEMORY, "out of memory while padding the subvolumes"),
                    x->result);
}

static double width_reach2(const void *context, int q, int64_t i)
{
  (void)i;
  const double w = ((const double *)context)[q];
  return w * w;
}

/* Distance from an own particle to the faces of its subvolume that other particles may lie
 * beyond (not the domain's open edges, not a periodic axis the subvolume spans). */
static double inner_distance(const points_context *x, const subvolume *me, const double *p)
{
  double d = INFINITY;
  for (int a = 0; a < 3; ++a) {
    const int periodic = x->box.periodic[a];
    if (periodic && me->hi[a] - me->lo[a] >= x->box.size[a])
      continue;
    if (periodic || me->lo[a] > x->lo[a])
      d = fmin(d, p[a] - me->lo[a]);
    if (periodic || me->hi[a] < x->hi[a])
      d = fmin(d, me->hi[a] - p[a]);
  }
  return d < 0.0 ? 0.0 : d;
}

phew_status padding_neighbours(const points_context *x, const subvolume *parts, particle_set *s, neighbour_result *r)
{
  comm *c = x->c;
  const phew_points *p = x->points;
  const int64_t n_own = s->n_own;
  r->n_keep = x->n_keep;
  r->rounds = 0;
  r->seconds_tree = r->seconds_search = 0.0;
  const int n_dens = x->has_density ? 0 : p->n_density_neighbours;
  r->h = n_dens > 0 ? phew_malloc((size_t)n_own + 1, sizeof *r->h) : NULL;
  r->nearest = phew_malloc((size_t)n_own * (size_t)r->n_keep + 1, sizeof *r->nearest);
  double *width = phew_malloc((size_t)c->size, sizeof *width), *sent = phew_malloc((size_t)c->size, sizeof *sent);
  double *reach = c->size > 1 ? phew_malloc((size_t)n_own + 1, sizeof *reach) : NULL;
  int32_t *pending = phew_malloc((size_t)n_own + 1, sizeof *pending);
  double *h = phew_malloc((size_t)n_own + 1, sizeof *h);
  int32_t *nearest = phew_malloc((size_t)n_own * (size_t)r->n_keep + 1, sizeof *nearest);
  phew_status status = PHEW_OK;
  if (comm_max(c, (n_dens > 0 && !r->h) || !r->nearest || !width || !sent || (c->size > 1 && !reach) || !pending || !h ||
                      !nearest))
    status = phew_fail(x->result, PHEW_ERROR_MEMORY, "out of memory for the neighbour lists");
  const subvolume *me = &parts[c->rank];
  double w = 0.0;
  if (status == PHEW_OK && n_own > 0 && c->size > 1) { /* a first guess: K particles' worth of volume, 1.5 times */
    double volume = 1.0;
    for (int a = 0; a < 3; ++a)
      volume *= me->hi[a] - me->lo[a] > 0.0 ? me->hi[a] - me->lo[a] : 1.0;
    w = 1.5 * cbrt((double)x->k_search * volume / (double)n_own);
  }
  int64_t n_pending = n_own;
  for (int64_t i = 0; status == PHEW_OK && i < n_own; ++i)
    pending[i] = (int32_t)i;
  for (int q = 0; status == PHEW_OK && q < c->size; ++q)
    sent[q] = -1.0;

  kd_tree *tree = NULL;
  while (status == PHEW_OK) {
    if (c->size > 1) {
      comm_allgather(c, &w, sizeof w, width);
      status = send_padding(x, parts, s, width_reach2, width, sent);
      memcpy(sent, width, (size_t)c->size * sizeof *sent);
      if (status != PHEW_OK)
        break;
    }
    double t = phew_seconds();
    kd_tree_free(tree);
    tree = NULL;
    status = comm_agree(c, kd_tree_build(&tree, s->n, s->position, s->id, &x->box, x->n_threads, x->result), x->result);
    r->seconds_tree += phew_seconds() - t;
    if (status != PHEW_OK)
      break;
    t = phew_seconds();
    knn_query q = {n_dens, r->n_keep, n_pending, pending, h, reach, nearest, x->n_threads};
    status = comm_agree(c, knn_search(tree, &q, x->result), x->result);
    r->seconds_search += phew_seconds() - t;
    r->rounds++;
    if (status != PHEW_OK)
      break;
    /* keep the answers; the particles whose reach leaves the padded region search again */
    int64_t n_failed = 0;
    double wanted = w;
    for (int64_t k = 0; k < n_pending; ++k) {
      const int32_t i = pending[k];
      if (r->h)
        r->h[i] = h[k];
      memcpy(&r->nearest[(size_t)i * r->n_keep], &nearest[(size_t)k * r->n_keep], (size_t)r->n_keep * sizeof *nearest);
      if (c->size == 1)
        continue;
      const double inner = inner_distance(x, me, &s->position[3 * i]);
      if (reach[k] <= (w + inner) * (1.0 - 1e-12))
        continue;
      pending[n_failed++] = i;
      const double need = (reach[k] - inner) * (1.0 + 1e-9);
      wanted = need > wanted ? need : wanted;
    }
    n_pending = n_failed;
    if (comm_max(c, n_pending) == 0)
      break;
    w = wanted;
  }
  kd_tree_free(tree);
  free(width);
  free(sent);
  free(reach);
  free(pending);
  free(h);
  free(nearest);
  return status;
}

/* Padding for the density: the particles within the final neighbour width, and those whose
 * kernel (2h) reaches into the subvolume. */
typedef struct density_reach {
  const double *width;
  const particle_set *s;
} density_reach;

static double kernel_reach2(const void *context, int q, int64_t i)
{
  const density_reach *d = context;
  const double w = d->width[q], k = 2.0 * d->s->h[i], m = w > k ? w : k;
  return m * m;
}

phew_status padding_density(const points_context *x, const subvolume *parts, particle_set *s, double *rho,
                            double *seconds)
{
  comm *c = x->c;
  phew_status status = PHEW_OK;
  s->n = s->n_own; /* the neighbour padding goes: this one has the smoothing lengths */
  if (c->size > 1) {
    /* the widths the neighbour search needed: every own particle's reach */
    double *width = phew_malloc((size_t)c->size, sizeof *width);
    if (comm_max(c, !width)) {
      free(width);
      return comm_agree(c, phew_fail(x->result, PHEW_ERROR_MEMORY, "out of memory while padding the subvolumes"),
                        x->result);
    }
    double w = 0.0;
    for (int64_t i = 0; i < s->n_own; ++i) {
      const double inner = inner_distance(x, &parts[c->rank], &s->position[3 * i]);
      const double need = 2.0 * s->h[i] - inner;
      w = need > w ? need : w;
    }
    w *= 1.0 + 1e-9;
    comm_allgather(c, &w, sizeof w, width);
    const density_reach d = {width, s};
    status = send_padding(x, parts, s, kernel_reach2, &d, NULL);
    free(width);
  }
  const double t = phew_seconds();
  kd_tree *tree = NULL;
  if (status == PHEW_OK)
    status = comm_agree(c, kd_tree_build(&tree, s->n, s->position, s->id, &x->box, x->n_threads, x->result), x->result);
  if (status == PHEW_OK)
    status = comm_agree(c, sph_density(tree, s->h, s->mass, s->n_own, NULL, rho, x->n_threads, x->result), x->result);
  kd_tree_free(tree);
  *seconds = phew_seconds() - t;
  s->n = s->n_own;
  return status;
}
