/* Padding (Parallel HOP, Skory et al. 2010, section 3): each rank's subvolume gets copies of
 * the particles of other subvolumes near it, so that its own particles find their exact
 * neighbours and densities locally.
 *
 * The padding is not a width guessed with a safety factor, nor a slab as wide as the widest
 * need: it is what the own particles' balls hold. A first search runs on the own particles
 * alone; a particle whose answer depends only on the ball of radius `reach` about it, with the
 * ball inside its subvolume, is exact already. Each other one sends its ball (closed, with an
 * absolute slack for rounding) to every rank whose subvolume the ball meets; that rank answers
 * with its own particles inside the balls it received, and those particles search again.
 * Their reach only shrinks as particles are added, so the balls they sent cover the new ones:
 * a second search is exact (the check is repeated, and a third round runs, should rounding
 * say otherwise). Each ball also brings its own particle along as padding: for the density,
 * every particle whose kernel (2h, at most the reach it sent) reaches into another subvolume
 * is then there already, and only its smoothing length is sent, so the neighbour search's
 * tree serves the density as well. */
#include "id_map.h"
#include "kd_tree.h"
#include "particles.h"

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

/* A ball of an own particle, sent to a rank whose subvolume it meets, with the particle (its
 * centre), which joins that rank's padding. */
typedef struct ball_item {
  padding_item particle;
  double radius;
} ball_item;

/* The radius a ball of `reach` about a particle is sent with: closed (a particle at exactly
 * reach can still change the answer by its id), plus the distances' absolute rounding. */
static double ball_radius(const points_context *x, double reach) { return reach * (1.0 + 1e-9) + x->slack; }

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

/* Appends the received particles to s as padding, each with its owner (the sender), but those
 * already there (a ball of an earlier round held them), which only take the smoothing length
 * sent with them, if any. */
static phew_status append_padding(particle_set *s, const inbox *in, size_t item_size, int n_ranks)
{
  if (in->n == 0)
    return PHEW_OK;
  if (!s->owner && !(s->owner = phew_malloc((size_t)s->capacity + 1, sizeof *s->owner)))
    return PHEW_ERROR_MEMORY;
  if (particle_set_reserve(s, s->n + in->n) != PHEW_OK)
    return PHEW_ERROR_MEMORY;
  id_map present;
  if (id_map_init(&present, s->n - s->n_own + in->n) != 0)
    return PHEW_ERROR_MEMORY;
  int failed = 0;
  for (int64_t i = s->n_own; i < s->n && !failed; ++i) {
    int64_t existing;
    failed = id_map_insert(&present, s->id[i], i, &existing) != 0;
  }
  for (int r = 0, k = 0; r < n_ranks && !failed; ++r) { /* grouped by source rank */
    for (int j = 0; j < in->count[r] && !failed; ++j, ++k) {
      padding_item it;
      memcpy(&it, in->items + (size_t)k * item_size, sizeof it); /* each item starts with one */
      int64_t existing;
      failed = id_map_insert(&present, it.id, s->n, &existing) != 0;
      if (!failed && existing != s->n && s->h && it.h > 0.0)
        s->h[existing] = it.h; /* known by now: its kernel reaches here */
      if (failed || existing != s->n)
        continue;
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
  id_map_free(&present);
  return failed ? PHEW_ERROR_MEMORY : PHEW_OK;
}

static padding_item particle_item(const particle_set *s, int64_t i)
{
  padding_item it = {{0, 0, 0}, s->id[i], s->mass ? s->mass[i] : 1.0, s->h ? s->h[i] : 0.0};
  memcpy(it.position, &s->position[3 * i], sizeof it.position);
  return it;
}

/* Puts own particle i into the outbox for rank r, as padding. */
static void put_particle(outbox *o, int r, const particle_set *s, int64_t i)
{
  const padding_item it = particle_item(s, i);
  outbox_put(o, r, &it);
}

/* Collective. Sends the balls of the listed own particles (radius[k] for list[k]; all own
 * particles when list is NULL) to every other rank whose subvolume they meet; each rank
 * answers with its own particles inside the balls it received (found with `tree`, which holds
 * the own particles first and maybe padding after them) and, with push_kernels, those whose
 * kernel (2h) reaches into the asking rank's subvolume; the answers are appended to s as
 * padding. */
static phew_status ball_padding(const points_context *x, const subvolume *parts, particle_set *s, const kd_tree *tree,
                                const int32_t *list, int64_t n, const double *radius, int push_kernels)
{
  comm *c = x->c;
  outbox balls;
  outbox_init(&balls, c, sizeof(ball_item));
  for (int64_t k = 0; k < n; ++k) {
    const int64_t i = list ? list[k] : k;
    const ball_item b = {particle_item(s, i), radius[k]};
    for (int q = 0; q < c->size; ++q)
      if (q != c->rank && subvolume_distance2(&x->box, &parts[q], b.particle.position) <= b.radius * b.radius)
        outbox_put(&balls, q, &b);
  }
  inbox asked = {0};
  phew_status status = outbox_send(&balls, c, &asked);
  outbox_free(&balls);
  /* the answers: per asking rank, each own particle once (stamp: the rank it was last put for) */
  outbox answers;
  outbox_init(&answers, c, sizeof(padding_item));
  int32_t *stamp = phew_malloc((size_t)s->n_own + 1, sizeof *stamp);
  kd_candidates found;
  const int have_tree = tree && kd_tree_size(tree) > 0;
  int ok = status == PHEW_OK && stamp && (!have_tree || kd_candidates_init(&found, tree) == PHEW_OK);
  double *d2 = NULL;
  int32_t *slot = NULL;
  int64_t capacity = 0;
  for (int64_t i = 0; ok && i < s->n_own; ++i)
    stamp[i] = -1;
  for (int r = 0; ok && r < c->size; ++r) {
    for (int j = 0; ok && have_tree && j < asked.count[r]; ++j) {
      ball_item b;
      memcpy(&b, asked.items + (size_t)(asked.offset[r] + j) * sizeof b, sizeof b);
      const double *centre = b.particle.position;
      ok = kd_tree_gather(tree, centre, centre, b.radius * b.radius, &found);
      const int64_t need = ok ? kd_candidates_size(&found) : 0;
      if (ok && need > capacity) {
        capacity = 2 * need;
        ok = !phew_grow(&d2, (size_t)capacity, sizeof *d2) && !phew_grow(&slot, (size_t)capacity, sizeof *slot);
      }
      const int m = ok ? kd_candidates_scan(tree, &found, centre, b.radius * b.radius, d2, slot) : 0;
      for (int e = 0; e < m; ++e) {
        const int32_t i = kd_tree_index(tree, slot[e]);
        if (i < s->n_own && stamp[i] != r) {
          stamp[i] = r;
          put_particle(&answers, r, s, i);
        }
      }
    }
    if (ok && push_kernels && r != c->rank)
      for (int64_t i = 0; i < s->n_own; ++i) {
        const double reach = ball_radius(x, 2.0 * s->h[i]);
        if (stamp[i] != r && subvolume_distance2(&x->box, &parts[r], &s->position[3 * i]) <= reach * reach) {
          stamp[i] = r;
          put_particle(&answers, r, s, i);
        }
      }
  }
  if (!ok)
    answers.failed = 1;
  inbox in = {0};
  status = outbox_send(&answers, c, &in);
  outbox_free(&answers);
  if (have_tree && found.stack)
    kd_candidates_free(&found);
  free(stamp);
  free(d2);
  free(slot);
  if (status == PHEW_OK) /* the balls' particles, then the particles inside them */
    status = append_padding(s, &asked, sizeof(ball_item), c->size);
  if (status == PHEW_OK)
    status = append_padding(s, &in, sizeof(padding_item), c->size);
  inbox_free(&asked);
  inbox_free(&in);
  return comm_agree(c,
                    status == PHEW_OK
                        ? status
                        : phew_fail(x->result, PHEW_ERROR_MEMORY, "out of memory while padding the subvolumes"),
                    x->result);
}

phew_status padding_width(const points_context *x, const subvolume *parts, particle_set *s, double width, uint8_t *sent)
{
  comm *c = x->c;
  for (int64_t i = 0; sent && i < s->n_own; ++i)
    sent[i] = 0;
  if (c->size == 1)
    return PHEW_OK;
  const double reach = ball_radius(x, width);
  outbox o;
  outbox_init(&o, c, sizeof(padding_item));
  for (int64_t i = 0; i < s->n_own; ++i)
    for (int r = 0; r < c->size; ++r)
      if (r != c->rank && subvolume_distance2(&x->box, &parts[r], &s->position[3 * i]) <= reach * reach) {
        put_particle(&o, r, s, i);
        if (sent)
          sent[i] = 1;
      }
  inbox in = {0};
  phew_status status = outbox_send(&o, c, &in);
  outbox_free(&o);
  if (status == PHEW_OK)
    status = append_padding(s, &in, sizeof(padding_item), c->size);
  inbox_free(&in);
  return comm_agree(c,
                    status == PHEW_OK
                        ? status
                        : phew_fail(x->result, PHEW_ERROR_MEMORY, "out of memory while padding the subvolumes"),
                    x->result);
}

/* What the rounds of padding_neighbours share. */
typedef struct neighbour_rounds {
  const points_context *x;
  particle_set *s;
  neighbour_result *r;
  int n_dens;                     /* > 0: the smoothing lengths are wanted */
  int padded;                     /* several ranks: balls may need particles of others */
  double *reach, *asked, *radius; /* per pending particle, per own particle, per pending */
  int32_t *pending;               /* own particles still searching */
  int64_t n_pending;
  double *h; /* the answers of later rounds (the first one writes into r) */
  int32_t *nearest;
  double guess; /* the ball radius of a rank too small to search yet */
  kd_tree *tree;
} neighbour_rounds;

/* Collective: a tree of the particles held and a search of the pending ones, or, on a rank
 * holding fewer particles than one neighbourhood, the guessed radius (which grows). */
static phew_status search_round(neighbour_rounds *n, int first, int *too_few)
{
  const points_context *x = n->x;
  neighbour_result *r = n->r;
  comm *c = x->c;
  *too_few = n->padded && n->n_pending > 0 && n->s->n < x->k_search;
  double t = phew_seconds();
  kd_tree_free(n->tree);
  n->tree = NULL;
  phew_status mine = kd_tree_build(&n->tree, n->s->n, n->s->position, n->s->id, &x->box, x->n_threads, x->result);
  phew_status status = comm_agree(c, mine, x->result);
  r->seconds_tree += phew_seconds() - t;
  if (status != PHEW_OK)
    return status;
  t = phew_seconds();
  /* clang-format off */
  knn_query q = {n->n_dens, r->n_keep, n->n_pending, first ? NULL : n->pending, first ? r->h : n->h, n->reach,
                 first ? r->nearest : n->nearest, x->n_threads, x->n_ordered};
  /* clang-format on */
  mine = *too_few ? PHEW_OK : knn_search(n->tree, &q, x->result);
  status = comm_agree(c, mine, x->result);
  r->seconds_search += phew_seconds() - t;
  if (*too_few) { /* every pending particle asks for the guess, which grows */
    for (int64_t k = 0; k < n->n_pending; ++k)
      n->reach[k] = n->guess;
    n->guess *= 2.0;
  } else {
    r->rounds++;
  }
  return status;
}

/* Keep the answers; the particles whose ball may hold particles not here yet (not inside the
 * subvolume, nor inside a ball they sent before) stay pending, with that ball's radius. */
static void settle_answers(neighbour_rounds *n, const subvolume *me, int first, int too_few)
{
  neighbour_result *r = n->r;
  int64_t n_failed = 0;
  for (int64_t k = 0; k < n->n_pending; ++k) {
    const int32_t i = n->pending[k];
    if (!first && !too_few) {
      if (r->h)
        r->h[i] = n->h[k];
      memcpy(&r->nearest[(size_t)i * r->n_keep], &n->nearest[(size_t)k * r->n_keep],
             (size_t)r->n_keep * sizeof *n->nearest);
    }
    const double ball = ball_radius(n->x, n->reach[k]);
    const int covered = !too_few && (ball <= inner_distance(n->x, me, &n->s->position[3 * i]) || ball <= n->asked[i]);
    if (!covered) {
      n->radius[n_failed] = ball;
      n->asked[i] = ball;
      n->pending[n_failed++] = i;
    }
  }
  n->n_pending = n_failed;
}

phew_status padding_neighbours(const points_context *x, const subvolume *parts, particle_set *s, neighbour_result *r)
{
  comm *c = x->c;
  const int64_t n_own = s->n_own;
  r->n_keep = x->n_keep;
  r->rounds = 0;
  r->tree = NULL;
  r->seconds_tree = r->seconds_search = 0.0;
  neighbour_rounds n = {.x = x, .s = s, .r = r, .n_pending = n_own};
  n.n_dens = x->has_density ? 0 : x->points->n_density_neighbours;
  n.padded = c->size > 1;
  r->h = n.n_dens > 0 ? phew_malloc((size_t)n_own + 1, sizeof *r->h) : NULL;
  r->nearest = phew_malloc((size_t)n_own * (size_t)r->n_keep + 1, sizeof *r->nearest);
  if (n.padded) {
    n.reach = phew_malloc((size_t)n_own + 1, sizeof *n.reach);
    n.asked = phew_malloc((size_t)n_own + 1, sizeof *n.asked); /* by own index */
    n.pending = phew_malloc((size_t)n_own + 1, sizeof *n.pending);
    n.radius = phew_malloc((size_t)n_own + 1, sizeof *n.radius);
  }
  phew_status status = PHEW_OK;
  if (comm_max(c, (n.n_dens > 0 && !r->h) || !r->nearest ||
                      (n.padded && (!n.reach || !n.asked || !n.pending || !n.radius))))
    status = phew_fail(x->result, PHEW_ERROR_MEMORY, "out of memory for the neighbour lists");
  for (int64_t i = 0; status == PHEW_OK && n.pending && i < n_own; ++i) {
    n.pending[i] = (int32_t)i;
    n.asked[i] = -1.0;
  }
  /* a rank holding fewer particles than one neighbourhood cannot search yet: its balls have
   * a radius from the mean spacing of all particles, doubled until it holds enough */
  double volume = 1.0;
  for (int a = 0; a < 3; ++a)
    volume *= x->hi[a] > x->lo[a] ? x->hi[a] - x->lo[a] : 1.0;
  n.guess = 2.0 * cbrt((double)x->k_search * volume / (double)x->n_total);
  while (status == PHEW_OK) {
    const int first = r->rounds == 0; /* all own particles, in order: straight into r */
    int too_few = 0;
    status = search_round(&n, first, &too_few);
    if (status != PHEW_OK || !n.padded)
      break;
    settle_answers(&n, &parts[c->rank], first, too_few);
    if (comm_max(c, n.n_pending) == 0)
      break;
    free(n.h);
    free(n.nearest);
    n.h = phew_malloc((size_t)n.n_pending + 1, sizeof *n.h);
    n.nearest = phew_malloc((size_t)n.n_pending * (size_t)r->n_keep + 1, sizeof *n.nearest);
    if (comm_max(c, !n.h || !n.nearest)) {
      status = comm_agree(c, phew_fail(x->result, PHEW_ERROR_MEMORY, "out of memory for the neighbour lists"),
                          x->result);
      break;
    }
    status = ball_padding(x, parts, s, n.tree, n.pending, n.n_pending, n.radius, 0);
  }
  if (status == PHEW_OK)
    r->tree = n.tree; /* the density's, unless its padding adds particles */
  else
    kd_tree_free(n.tree);
  free(n.reach);
  free(n.asked);
  free(n.pending);
  free(n.radius);
  free(n.h);
  free(n.nearest);
  return status;
}

/* Padding for the density: the particles within the own kernels (2h), and those whose own
 * kernel reaches into this subvolume, with their smoothing lengths. */
phew_status padding_density(const points_context *x, const subvolume *parts, particle_set *s, kd_tree **reuse,
                            const density_lists *lists, double *rho, double *seconds)
{
  comm *c = x->c;
  phew_status status = PHEW_OK;
  if (c->size > 1) {
    /* the neighbours' padding holds every particle within 2h of an own one (2h is the reach of
     * the density's neighbourhood, and the balls sent covered the reach), and, as a rule,
     * every particle whose kernel reaches this subvolume (it came with its ball); what it
     * lacks are the smoothing lengths of the latter: their owners send them (with the
     * particle, should rounding have left it out). The others keep h 0: they give no own
     * particle anything (they stay neighbours of theirs). */
    const double t = phew_seconds();
    for (int64_t j = s->n_own; j < s->n; ++j)
      s->h[j] = 0.0;
    status = ball_padding(x, parts, s, NULL, NULL, 0, NULL, 1);
    *seconds += phew_seconds() - t;
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
  kd_tree *tree = *reuse; /* the search's: kept if the density's padding added no particle */
  *reuse = NULL;
  if (tree && kd_tree_size(tree) == s->n) {
    kd_tree_moved(tree, s->position, s->id);
  } else {
    kd_tree_free(tree);
    tree = NULL;
  }
  if (status == PHEW_OK) /* whether a rank builds or not, all agree */
    status =
        comm_agree(c, tree ? PHEW_OK : kd_tree_build(&tree, s->n, s->position, s->id, &x->box, x->n_threads, x->result),
                   x->result);
  if (status == PHEW_OK)
    status = comm_agree(
        c, sph_density_listed(tree, s->h, s->mass, mass_max, s->n_own, NULL, lists, rho, x->n_threads, x->result),
        x->result);
  kd_tree_free(tree);
  *seconds += phew_seconds() - t;
  return status;
}
