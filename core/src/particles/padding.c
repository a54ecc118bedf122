/* Padding (Parallel HOP, Skory et al. 2010, section 3): each rank's subvolume gets copies of
 * the particles of other subvolumes near it, so that its own particles find their exact
 * neighbours and densities locally.
 *
 * The width is not a guess with a safety factor. A first search runs on the own particles
 * alone; a particle whose answer depends only on the ball of radius `reach` about it, with
 * the ball inside its subvolume, is exact already. For the others, a particle of another
 * subvolume q within their reach is at most reach - d from this subvolume, d being their
 * distance to its open faces (where other subvolumes begin): each rank asks every q for its
 * particles within the largest such width over the own particles whose ball meets q, and
 * those particles search again. Their reach only shrinks as particles are added, so the
 * padding they asked for covers the new ball: a second search is exact (a third round runs
 * only if rounding said otherwise, and the check is repeated until it holds). */
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

/* Sends every own particle to each rank q whose subvolume lies within reach2(q, i) of it (and,
 * when above is given, beyond the width already sent to q, above[q] < 0: nothing yet). */
typedef double (*reach2_fn)(const void *context, int q, int64_t i);

static phew_status send_padding(const points_context *x, const subvolume *parts, particle_set *s, reach2_fn reach2,
                                const void *context, const double *above)
{
  comm *c = x->c;
  outbox o;
  outbox_init(&o, c, sizeof(padding_item));
  for (int64_t i = 0; i < s->n_own; ++i)
    for (int q = 0; q < c->size; ++q) {
      if (q == c->rank)
        continue;
      const double d2 = subvolume_distance2(&x->box, &parts[q], &s->position[3 * i]);
      if (d2 > reach2(context, q, i) || (above && above[q] >= 0.0 && d2 <= above[q] * above[q]))
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

/* The widths this rank needs from every other subvolume for balls of radius reach(i) about
 * the own particles listed: the largest reach - d over the balls that meet it. */
typedef double (*radius_fn)(const void *context, int64_t i);

static void widths_wanted(const points_context *x, const subvolume *parts, const particle_set *s, const int32_t *list,
                          int64_t n, radius_fn radius, const void *context, double *want);

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

static void widths_wanted(const points_context *x, const subvolume *parts, const particle_set *s, const int32_t *list,
                          int64_t n, radius_fn radius, const void *context, double *want)
{
  comm *c = x->c;
  for (int q = 0; q < c->size; ++q)
    want[q] = 0.0;
  const subvolume *me = &parts[c->rank];
  for (int64_t k = 0; k < n; ++k) {
    const int64_t i = list ? list[k] : k;
    const double *p = &s->position[3 * i];
    /* the ball is closed (a particle at exactly r can still change the answer by its id), and
     * the distances carry absolute rounding: even need = 0 asks for the faces' particles */
    const double r = radius(context, k), need = (r - inner_distance(x, me, p)) * (1.0 + 1e-9) + x->slack;
    if (need < 0.0)
      continue;
    for (int q = 0; q < c->size; ++q)
      if (q != c->rank && need > want[q] && subvolume_distance2(&x->box, &parts[q], p) <= (r + x->slack) * (r + x->slack))
        want[q] = need;
  }
}

static double reach_of_query(const void *context, int64_t k) { return ((const double *)context)[k]; }

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
  const int padded = c->size > 1;
  double *want = phew_malloc((size_t)c->size, sizeof *want), *asked = phew_malloc((size_t)c->size, sizeof *asked);
  double *give = phew_malloc((size_t)c->size, sizeof *give), *sent = phew_malloc((size_t)c->size, sizeof *sent);
  double *reach = padded ? phew_malloc((size_t)n_own + 1, sizeof *reach) : NULL;
  int32_t *pending = padded ? phew_malloc((size_t)n_own + 1, sizeof *pending) : NULL;
  double *h = NULL;         /* the answers of later rounds (the first one writes into r) */
  int32_t *nearest = NULL;
  phew_status status = PHEW_OK;
  if (comm_max(c, (n_dens > 0 && !r->h) || !r->nearest || !want || !asked || !give || !sent || (padded && !reach) ||
                      (padded && !pending)))
    status = phew_fail(x->result, PHEW_ERROR_MEMORY, "out of memory for the neighbour lists");
  const subvolume *me = &parts[c->rank];
  int64_t n_pending = n_own;
  for (int64_t i = 0; status == PHEW_OK && pending && i < n_own; ++i)
    pending[i] = (int32_t)i;
  for (int q = 0; status == PHEW_OK && q < c->size; ++q)
    asked[q] = sent[q] = -1.0;

  /* a rank holding fewer particles than one neighbourhood cannot search yet: it asks for a
   * width from the mean spacing of all particles, doubled until it holds enough */
  double guess = 0.0;
  {
    double volume = 1.0;
    for (int a = 0; a < 3; ++a)
      volume *= x->hi[a] > x->lo[a] ? x->hi[a] - x->lo[a] : 1.0;
    guess = 2.0 * cbrt((double)x->k_search * volume / (double)x->n_total);
  }
  kd_tree *tree = NULL;
  while (status == PHEW_OK) {
    const int too_few = padded && n_pending > 0 && s->n < x->k_search;
    double t = phew_seconds();
    kd_tree_free(tree);
    tree = NULL;
    phew_status mine = too_few ? PHEW_OK : kd_tree_build(&tree, s->n, s->position, s->id, &x->box, x->n_threads, x->result);
    status = comm_agree(c, mine, x->result);
    r->seconds_tree += phew_seconds() - t;
    if (status != PHEW_OK)
      break;
    t = phew_seconds();
    const int first = r->rounds == 0; /* all own particles, in order: straight into r */
    knn_query q = {n_dens, r->n_keep, n_pending, first ? NULL : pending, first ? r->h : h, reach,
                   first ? r->nearest : nearest, x->n_threads};
    mine = too_few ? PHEW_OK : knn_search(tree, &q, x->result);
    status = comm_agree(c, mine, x->result);
    r->seconds_search += phew_seconds() - t;
    if (too_few) { /* every pending particle asks for the guess, which grows */
      for (int64_t k = 0; k < n_pending; ++k)
        reach[k] = guess;
      guess *= 2.0;
    } else {
      r->rounds++;
    }
    if (status != PHEW_OK)
      break;
    /* keep the answers; the particles whose ball may hold particles not here yet search again */
    int64_t n_failed = 0;
    if (!padded)
      break;
    for (int64_t k = 0; k < n_pending; ++k) {
      const int32_t i = pending[k];
      if (too_few) {
        reach[n_failed] = reach[k];
        pending[n_failed++] = i;
        continue;
      }
      if (!first) {
        if (r->h)
          r->h[i] = h[k];
        memcpy(&r->nearest[(size_t)i * r->n_keep], &nearest[(size_t)k * r->n_keep], (size_t)r->n_keep * sizeof *nearest);
      }
      const double *pi = &s->position[3 * i];
      const double need = reach[k] - inner_distance(x, me, pi) + x->slack;
      int covered = need < 0.0;
      if (!covered) { /* every subvolume the ball meets gave at least need */
        covered = 1;
        for (int qq = 0; qq < c->size && covered; ++qq)
          if (qq != c->rank &&
              subvolume_distance2(&x->box, &parts[qq], pi) <= (reach[k] + x->slack) * (reach[k] + x->slack))
            covered = asked[qq] >= need * (1.0 + 1e-12);
      }
      if (!covered) {
        reach[n_failed] = reach[k];
        pending[n_failed++] = i;
      }
    }
    n_pending = n_failed;
    if (comm_max(c, n_pending) == 0)
      break;
    free(h);
    free(nearest);
    h = phew_malloc((size_t)n_pending + 1, sizeof *h);
    nearest = phew_malloc((size_t)n_pending * (size_t)r->n_keep + 1, sizeof *nearest);
    if (comm_max(c, !h || !nearest)) {
      status = comm_agree(c, phew_fail(x->result, PHEW_ERROR_MEMORY, "out of memory for the neighbour lists"), x->result);
      break;
    }
    /* ask for more: widths from the failed particles' balls, never less than asked before */
    widths_wanted(x, parts, s, pending, n_pending, reach_of_query, reach, want);
    for (int qq = 0; qq < c->size; ++qq)
      asked[qq] = want[qq] > asked[qq] ? want[qq] : asked[qq];
    comm_alltoall_double(c, asked, give);
    status = send_padding(x, parts, s, width_reach2, give, sent);
    memcpy(sent, give, (size_t)c->size * sizeof *sent);
  }
  kd_tree_free(tree);
  free(want);
  free(asked);
  free(give);
  free(sent);
  free(reach);
  free(pending);
  free(h);
  free(nearest);
  return status;
}

/* Padding for the density: from each subvolume q, the particles within the width the own
 * kernels (2h) need from q, and those whose own kernel reaches into this subvolume. */
typedef struct density_reach {
  const double *give;
  const particle_set *s;
  double slack;
} density_reach;

static double kernel_reach2(const void *context, int q, int64_t i)
{
  const density_reach *d = context;
  const double w = d->give[q], k = 2.0 * d->s->h[i] * (1.0 + 1e-9) + d->slack, m = w > k ? w : k;
  return m * m;
}

static double kernel_radius(const void *context, int64_t i) { return 2.0 * ((const particle_set *)context)->h[i]; }

phew_status padding_density(const points_context *x, const subvolume *parts, particle_set *s, double *rho,
                            double *seconds)
{
  comm *c = x->c;
  phew_status status = PHEW_OK;
  s->n = s->n_own; /* the neighbour padding goes: this one has the smoothing lengths */
  if (c->size > 1) {
    double *want = phew_malloc((size_t)c->size, sizeof *want), *give = phew_malloc((size_t)c->size, sizeof *give);
    if (comm_max(c, !want || !give)) {
      free(want);
      free(give);
      return comm_agree(c, phew_fail(x->result, PHEW_ERROR_MEMORY, "out of memory while padding the subvolumes"),
                        x->result);
    }
    widths_wanted(x, parts, s, NULL, s->n_own, kernel_radius, s, want);
    comm_alltoall_double(c, want, give);
    const density_reach d = {give, s, x->slack};
    status = send_padding(x, parts, s, kernel_reach2, &d, NULL);
    free(want);
    free(give);
    /* a padding particle whose kernel reaches no point of this subvolume gives its particles
     * nothing: h 0 spares its scan (it stays a neighbour of theirs) */
    for (int64_t j = s->n_own; status == PHEW_OK && j < s->n; ++j) {
      const double reach = 2.0 * s->h[j];
      if (subvolume_distance2(&x->box, &parts[c->rank], &s->position[3 * j]) > reach * reach * (1.0 + 1e-9))
        s->h[j] = 0.0;
    }
  }
  const double t = phew_seconds();
  /* the largest mass of all ranks: every rank puts a particle's density sum on the same grid */
  double mass_max = 1.0;
  if (s->mass) {
    mass_max = 0.0;
    for (int64_t i = 0; i < s->n_own; ++i)
      mass_max = s->mass[i] > mass_max ? s->mass[i] : mass_max;
    mass_max = comm_max_double(c, mass_max);
  }
  kd_tree *tree = NULL;
  if (status == PHEW_OK)
    status = comm_agree(c, kd_tree_build(&tree, s->n, s->position, s->id, &x->box, x->n_threads, x->result), x->result);
  if (status == PHEW_OK)
    status = comm_agree(c, sph_density(tree, s->h, s->mass, mass_max, s->n_own, NULL, rho, x->n_threads, x->result),
                        x->result);
  kd_tree_free(tree);
  *seconds = phew_seconds() - t;
  s->n = s->n_own;
  return status;
}
