/* The graph PHEW runs on for particles: i and j are neighbours when either is among the
 * other's n_keep nearest other particles. Each rank lists the neighbours of its own
 * particles: its own nearest lists, their reverse among its own particles, and the reverse
 * edges of other ranks' particles (which send "you are among my nearest" to the owner).
 * Neighbours owned elsewhere are ghost cells, with their owner and global id. */
#include "particles.h"
#include "id_map.h"
#include "threads.h"

#include <stdlib.h>
#include <string.h>

void particle_graph_free(particle_graph *pg)
{
  free(pg->neighbours);
  free(pg->offsets);
  if (!pg->shares_cells) {
    free(pg->global_id);
    free(pg->position);
    free(pg->mass);
  }
  free(pg->ghost);
  free(pg->owner);
  free(pg->volume);
  memset(pg, 0, sizeof *pg);
}

/* "Particle `from` (of the sender) lists particle `to` (ours) among its nearest." */
typedef struct reverse_edge {
  int64_t to, from;
  double position[3];
  double mass;
} reverse_edge;

/* i is in the nearest list of length n (no early exit: the loop vectorises). */
static int lists(const int32_t *list, int n, int32_t i)
{
  int found = 0;
  for (int k = 0; k < n; ++k)
    found |= list[k] == i;
  return found;
}

/* One bit per entry of the own nearest lists: set where the entry j is an own particle that
 * does not list i in return, so i must be added to j's row. */
typedef struct one_way_job {
  const neighbour_result *r;
  int64_t n_own;
  uint64_t *bits;
} one_way_job;

enum { ONE_WAY_BLOCK = 4096 }; /* particles per task: a multiple of 64, so tasks share no word */

static void one_way_task(void *context, int thread, int64_t task)
{
  (void)thread;
  const one_way_job *job = context;
  const int k_keep = job->r->n_keep;
  const int64_t begin = task * ONE_WAY_BLOCK;
  const int64_t end = begin + ONE_WAY_BLOCK < job->n_own ? begin + ONE_WAY_BLOCK : job->n_own;
  for (int64_t i = begin; i < end; ++i)
    for (int k = 0; k < k_keep; ++k) {
      const int32_t j = job->r->nearest[(size_t)i * k_keep + k];
      if (j < job->n_own && !lists(job->r->nearest + (size_t)j * k_keep, k_keep, (int32_t)i)) {
        const uint64_t e = (uint64_t)i * (uint64_t)k_keep + (uint64_t)k;
        job->bits[e >> 6] |= (uint64_t)1 << (e & 63);
      }
    }
}

static int one_way(const uint64_t *bits, int64_t i, int k_keep, int k)
{
  const uint64_t e = (uint64_t)i * (uint64_t)k_keep + (uint64_t)k;
  return (int)(bits[e >> 6] >> (e & 63) & 1);
}

/* Ghost cells: cells [n_own, n_cells) of the graph. */
typedef struct ghosts {
  int64_t n, capacity;
  int64_t *id;
  int32_t *owner;
  double *position;
  double *mass;
  id_map index; /* id -> ghost number */
} ghosts;

static int64_t ghost_add(ghosts *g, int64_t id, int32_t owner, const double *position, double mass)
{
  int64_t k;
  if (id_map_insert(&g->index, id, g->n, &k) != 0)
    return -1;
  if (k < g->n)
    return k;
  if (g->n == g->capacity) {
    const int64_t c = g->capacity < 64 ? 64 : 2 * g->capacity;
    int64_t *i = phew_realloc(g->id, (size_t)c, sizeof *i);
    if (i)
      g->id = i;
    int32_t *o = phew_realloc(g->owner, (size_t)c, sizeof *o);
    if (o)
      g->owner = o;
    double *p = phew_realloc(g->position, (size_t)c, 3 * sizeof *p);
    if (p)
      g->position = p;
    double *m = phew_realloc(g->mass, (size_t)c, sizeof *m);
    if (m)
      g->mass = m;
    if (!i || !o || !p || !m)
      return -1;
    g->capacity = c;
  }
  g->id[g->n] = id;
  g->owner[g->n] = owner;
  memcpy(&g->position[3 * g->n], position, 3 * sizeof(double));
  g->mass[g->n] = mass;
  return g->n++;
}

static void ghosts_free(ghosts *g)
{
  free(g->id);
  free(g->owner);
  free(g->position);
  free(g->mass);
  id_map_free(&g->index);
}

/* What the steps of particle_graph_build share. */
typedef struct graph_builder {
  const points_context *x;
  const particle_set *s;
  neighbour_result *r;
  particle_graph *pg;
  int64_t n_own;
  int k_keep;
  ghosts g;
  id_map own;                /* own particle's global id -> index (several ranks) */
  int32_t *ghost_of_padding; /* graph cell of each padding particle, or -1 */
  int64_t *count;            /* per own particle: its row's length */
  inbox in;                  /* the reverse edges other ranks sent */
  uint64_t *one_way_bits;
  int64_t *remote_to, *remote_from; /* per reverse edge: own index (-1: mutual), ghost cell */
  int failed;
} graph_builder;

/* Collective: every own particle's entries that are another rank's particles go to that
 * rank as reverse edges. */
static phew_status send_reverse_edges(graph_builder *b)
{
  const particle_set *s = b->s;
  comm *c = b->x->c;
  const int64_t n_own = b->n_own;
  b->count = phew_malloc((size_t)n_own + 1, sizeof *b->count);
  b->failed = !b->count || id_map_init(&b->g.index, 16) != 0;
  if (c->size > 1) {
    b->ghost_of_padding = phew_malloc((size_t)(s->n - n_own) + 1, sizeof *b->ghost_of_padding);
    b->failed = b->failed || !b->ghost_of_padding || id_map_init(&b->own, n_own) != 0;
    for (int64_t i = 0; !b->failed && i < n_own; ++i) {
      int64_t ignored;
      b->failed = id_map_insert(&b->own, s->id[i], i, &ignored) != 0;
    }
  }
  outbox o;
  outbox_init(&o, c, sizeof(reverse_edge));
  for (int64_t i = 0; !b->failed && i < n_own; ++i)
    for (int k = 0; k < b->k_keep; ++k) {
      const int32_t j = b->r->nearest[(size_t)i * b->k_keep + k];
      if (j < n_own)
        continue;
      reverse_edge e;
      memset(&e, 0, sizeof e);
      e.to = s->id[j];
      e.from = s->id[i];
      memcpy(e.position, &s->position[3 * i], sizeof e.position);
      e.mass = s->mass ? s->mass[i] : 1.0;
      outbox_put(&o, s->owner[j - n_own], &e);
    }
  if (b->failed)
    o.failed = 1;
  const phew_status status = outbox_send(&o, c, &b->in);
  outbox_free(&o);
  return status;
}

/* Ghosts, first: the padding particles among the own particles' nearest. */
static void add_padding_ghosts(graph_builder *b)
{
  const particle_set *s = b->s;
  const int64_t n_own = b->n_own;
  for (int64_t j = 0; b->ghost_of_padding && j < s->n - n_own; ++j)
    b->ghost_of_padding[j] = -1;
  for (int64_t i = 0; !b->failed && i < n_own; ++i) {
    b->count[i] = b->k_keep;
    for (int k = 0; !b->failed && k < b->k_keep; ++k) {
      const int32_t j = b->r->nearest[(size_t)i * b->k_keep + k];
      if (j < n_own)
        continue;
      if (b->ghost_of_padding[j - n_own] < 0) {
        const int64_t gi = ghost_add(&b->g, s->id[j], s->owner[j - n_own], &s->position[3 * j],
                                     s->mass ? s->mass[j] : 1.0);
        b->failed = gi < 0 || n_own + gi > INT32_MAX;
        b->ghost_of_padding[j - n_own] = (int32_t)(n_own + gi);
      }
    }
  }
}

/* Own entries that are not mutual: found once, in parallel, then counted in their rows. */
static void count_one_way(graph_builder *b)
{
  const int64_t n_own = b->n_own;
  const int k_keep = b->k_keep;
  b->one_way_bits = phew_calloc(((size_t)n_own * (size_t)k_keep + 63) / 64 + 1, sizeof *b->one_way_bits);
  b->failed = b->failed || !b->one_way_bits;
  if (!b->failed) {
    one_way_job job = {b->r, n_own, b->one_way_bits};
    threads_run(threads_resolve(b->x->n_threads), (n_own + ONE_WAY_BLOCK - 1) / ONE_WAY_BLOCK, one_way_task, &job);
  }
  for (int64_t i = 0; !b->failed && i < n_own; ++i)
    for (int k = 0; k < k_keep; ++k)
      if (one_way(b->one_way_bits, i, k_keep, k))
        b->count[b->r->nearest[(size_t)i * k_keep + k]]++;
}

/* Ghosts, then: the senders of reverse edges; each edge that is not mutual (its sender is
 * not among our particle's nearest already) is counted in its row. */
static void receive_reverse_edges(graph_builder *b)
{
  const int64_t n_own = b->n_own;
  const inbox *in = &b->in;
  b->remote_to = phew_malloc((size_t)in->n + 1, sizeof *b->remote_to);
  b->remote_from = phew_malloc((size_t)in->n + 1, sizeof *b->remote_from);
  b->failed = b->failed || !b->remote_to || !b->remote_from;
  for (int r0 = 0, e = 0; !b->failed && r0 < b->x->c->size; ++r0)
    for (int k = 0; !b->failed && k < in->count[r0]; ++k, ++e) {
      reverse_edge re;
      memcpy(&re, in->items + (size_t)e * sizeof re, sizeof re);
      b->remote_to[e] = id_map_find(&b->own, re.to);
      const int64_t gi = ghost_add(&b->g, re.from, r0, re.position, re.mass);
      b->failed = b->remote_to[e] < 0 || gi < 0 || n_own + gi > INT32_MAX;
      b->remote_from[e] = n_own + gi;
      if (b->failed)
        break;
      const int32_t *list = b->r->nearest + (size_t)b->remote_to[e] * b->k_keep;
      for (int k = 0; k < b->k_keep && b->remote_to[e] >= 0; ++k)
        if (list[k] >= n_own && b->ghost_of_padding[list[k] - n_own] == b->remote_from[e])
          b->remote_to[e] = -1;
      if (b->remote_to[e] >= 0)
        b->count[b->remote_to[e]]++;
    }
}

/* The rows: own lists, then the reverse of own lists that are not mutual, then the remote
 * reverse edges (never in a list here: those point at padding): no entry twice, no sort.
 * Built where the lists are: each row is at least a list long, so moving the lists to their
 * rows from the last to the first overwrites only lists already moved; the reverse entries
 * go after each row's list. */
static void build_rows(graph_builder *b)
{
  particle_graph *pg = b->pg;
  const int64_t n_own = b->n_own, n_cells = n_own + b->g.n;
  const int k_keep = b->k_keep;
  int64_t *count = b->count;
  pg->offsets = phew_malloc((size_t)n_cells + 1, sizeof *pg->offsets);
  int64_t total = 0;
  for (int64_t i = 0; i < n_own; ++i)
    total += count[i];
  int32_t *rows = b->failed ? NULL : phew_realloc(b->r->nearest, (size_t)total + 1, sizeof *rows);
  if (rows) { /* the graph's now (freed with it, also on failure) */
    b->r->nearest = NULL;
    pg->neighbours = rows;
  }
  b->failed = b->failed || !pg->offsets || !rows;
  if (b->failed)
    return;
  pg->offsets[0] = 0;
  for (int64_t i = 0; i < n_own; ++i)
    pg->offsets[i + 1] = pg->offsets[i] + count[i];
  for (int64_t i = n_own - 1; i >= 0; --i) {
    const int32_t *list = rows + (size_t)i * k_keep;
    int32_t *row = rows + pg->offsets[i];
    for (int k = k_keep - 1; k >= 0; --k) { /* backwards: row may overlap list, never below it */
      const int32_t j = list[k];
      row[k] = j < n_own ? j : b->ghost_of_padding[j - n_own];
    }
  }
  for (int64_t i = 0; i < n_own; ++i)
    count[i] = pg->offsets[i] + k_keep; /* where the reverse entries go */
  for (int64_t i = 0; i < n_own; ++i)
    for (int k = 0; k < k_keep; ++k)
      if (one_way(b->one_way_bits, i, k_keep, k)) {
        const int32_t j = rows[pg->offsets[i] + k];
        rows[count[j]++] = (int32_t)i;
      }
  for (int64_t e = 0; e < b->in.n; ++e)
    if (b->remote_to[e] >= 0)
      rows[count[b->remote_to[e]]++] = (int32_t)b->remote_from[e];
  for (int64_t i = n_own; i < n_cells; ++i)
    pg->offsets[i + 1] = pg->offsets[n_own];
}

/* The cells' arrays: the own particles (shared with the set when there are no ghosts, as on
 * one rank, where no padding will move the set's arrays), then the ghosts. */
static void allocate_cells(graph_builder *b)
{
  particle_graph *pg = b->pg;
  const particle_set *s = b->s;
  const int64_t n_own = b->n_own, n_cells = n_own + b->g.n;
  pg->shares_cells = b->x->c->size == 1;
  pg->volume = phew_malloc((size_t)n_cells + 1, sizeof *pg->volume);
  if (pg->shares_cells) {
    pg->global_id = s->id;
    pg->position = s->position;
    pg->mass = s->mass;
  } else {
    pg->global_id = phew_malloc((size_t)n_cells + 1, sizeof *pg->global_id);
    pg->position = phew_malloc((size_t)n_cells + 1, 3 * sizeof *pg->position);
    if (b->x->has_mass)
      pg->mass = phew_malloc((size_t)n_cells + 1, sizeof *pg->mass);
    pg->ghost = calloc((size_t)n_cells, 1);
    pg->owner = phew_malloc((size_t)n_cells, sizeof *pg->owner);
  }
  b->failed = b->failed || !pg->volume ||
              (!pg->shares_cells &&
               (!pg->global_id || !pg->position || (b->x->has_mass && !pg->mass) || !pg->ghost || !pg->owner));
  if (!b->failed && !pg->shares_cells && n_own > 0) { /* (memcpy from NULL is undefined even for 0 bytes) */
    memcpy(pg->global_id, s->id, (size_t)n_own * sizeof *pg->global_id);
    memcpy(pg->position, s->position, (size_t)n_own * 3 * sizeof *pg->position);
    if (pg->mass)
      memcpy(pg->mass, s->mass, (size_t)n_own * sizeof *pg->mass);
  }
}

/* The ghosts' cells, every volume 1 until the densities are known, and the graph's view. */
static void fill_cells(graph_builder *b)
{
  particle_graph *pg = b->pg;
  const points_context *x = b->x;
  const int64_t n_own = b->n_own, n_cells = n_own + b->g.n;
  for (int64_t k = 0; k < b->g.n; ++k) {
    const int64_t i = n_own + k;
    pg->global_id[i] = b->g.id[k];
    memcpy(&pg->position[3 * i], &b->g.position[3 * k], 3 * sizeof(double));
    if (pg->mass)
      pg->mass[i] = b->g.mass[k];
    pg->ghost[i] = 1;
    pg->owner[i] = b->g.owner[k];
  }
  for (int64_t i = 0; pg->owner && i < n_own; ++i)
    pg->owner[i] = x->c->rank;
  for (int64_t i = 0; i < n_cells; ++i)
    pg->volume[i] = 1.0;
  phew_graph *gr = &pg->g;
  memset(gr, 0, sizeof *gr);
  gr->n_cells = n_cells;
  gr->ghost = pg->ghost;
  gr->owner = pg->owner;
  gr->global_id = pg->global_id;
  gr->offsets = pg->offsets;
  gr->volume = pg->volume;
  gr->position = pg->position;
  for (int d = 0; d < 3; ++d) {
    gr->box_origin[d] = x->lo[d];
    gr->box_size[d] = x->box.periodic[d] ? x->box.size[d] : x->hi[d] - x->lo[d];
    gr->periodic[d] = x->box.periodic[d];
  }
}

phew_status particle_graph_build(const points_context *x, const particle_set *s, neighbour_result *r,
                                 particle_graph *pg)
{
  memset(pg, 0, sizeof *pg);
  graph_builder b;
  memset(&b, 0, sizeof b);
  b.x = x;
  b.s = s;
  b.r = r;
  b.pg = pg;
  b.n_own = s->n_own;
  b.k_keep = r->n_keep;
  phew_status status = send_reverse_edges(&b);
  if (status == PHEW_OK) {
    add_padding_ghosts(&b);
    count_one_way(&b);
    receive_reverse_edges(&b);
    build_rows(&b);
    free(b.remote_to);
    free(b.remote_from);
    free(b.one_way_bits);
    allocate_cells(&b);
    if (!b.failed)
      fill_cells(&b);
    status = b.failed ? PHEW_ERROR_MEMORY : PHEW_OK;
  }
  free(r->nearest); /* taken, also on failure */
  r->nearest = NULL;
  inbox_free(&b.in);
  free(b.count);
  free(b.ghost_of_padding);
  ghosts_free(&b.g);
  id_map_free(&b.own);
  return comm_agree(x->c,
                    status == PHEW_OK
                        ? status
                        : phew_fail(x->result, status, "out of memory while building the neighbour graph"),
                    x->result);
}
