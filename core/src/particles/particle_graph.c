/* The graph PHEW runs on for particles: i and j are neighbours when either is among the
 * other's n_keep nearest other particles. Each rank lists the neighbours of its own
 * particles: its own nearest lists, their reverse among its own particles, and the reverse
 * edges of other ranks' particles (which send "you are among my nearest" to the owner).
 * Neighbours owned elsewhere are ghost cells, with their owner and global id. */
#include "points.h"
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

phew_status particle_graph_build(const points_context *x, const particle_set *s, neighbour_result *r,
                                 particle_graph *pg)
{
  comm *c = x->c;
  const int64_t n_own = s->n_own;
  const int k_keep = r->n_keep;
  memset(pg, 0, sizeof *pg);
  ghosts g;
  memset(&g, 0, sizeof g);
  id_map own;
  memset(&own, 0, sizeof own);
  int32_t *ghost_of_padding = NULL; /* graph cell of each padding particle, or -1 */
  int64_t *count = phew_malloc((size_t)n_own + 1, sizeof *count);
  inbox in;
  memset(&in, 0, sizeof in);
  int failed = !count || id_map_init(&g.index, 16) != 0;
  if (c->size > 1) {
    ghost_of_padding = phew_malloc((size_t)(s->n - n_own) + 1, sizeof *ghost_of_padding);
    failed = failed || !ghost_of_padding || id_map_init(&own, n_own) != 0;
    for (int64_t i = 0; !failed && i < n_own; ++i) {
      int64_t ignored;
      failed = id_map_insert(&own, s->id[i], i, &ignored) != 0;
    }
  }
  /* the reverse edges of other ranks' particles */
  outbox o;
  outbox_init(&o, c, sizeof(reverse_edge));
  for (int64_t i = 0; !failed && i < n_own; ++i)
    for (int k = 0; k < k_keep; ++k) {
      const int32_t j = r->nearest[(size_t)i * k_keep + k];
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
  if (failed)
    o.failed = 1;
  phew_status status = outbox_send(&o, c, &in);
  outbox_free(&o);
  if (status != PHEW_OK)
    goto done;

  /* ghosts: padding particles among the nearest, then senders of reverse edges */
  for (int64_t j = 0; ghost_of_padding && j < s->n - n_own; ++j)
    ghost_of_padding[j] = -1;
  for (int64_t i = 0; !failed && i < n_own; ++i) {
    count[i] = k_keep;
    for (int k = 0; !failed && k < k_keep; ++k) {
      const int32_t j = r->nearest[(size_t)i * k_keep + k];
      if (j < n_own)
        continue;
      if (ghost_of_padding[j - n_own] < 0) {
        const int64_t gi = ghost_add(&g, s->id[j], s->owner[j - n_own], &s->position[3 * j], s->mass ? s->mass[j] : 1.0);
        failed = gi < 0 || n_own + gi > INT32_MAX;
        ghost_of_padding[j - n_own] = (int32_t)(n_own + gi);
      }
    }
  }
  /* own entries that are not mutual: found once, in parallel, then counted */
  uint64_t *one_way_bits = phew_calloc(((size_t)n_own * (size_t)k_keep + 63) / 64 + 1, sizeof *one_way_bits);
  failed = failed || !one_way_bits;
  if (!failed) {
    one_way_job job = {r, n_own, one_way_bits};
    particle_parallel(particle_threads(x->n_threads), (n_own + ONE_WAY_BLOCK - 1) / ONE_WAY_BLOCK, one_way_task, &job);
  }
  for (int64_t i = 0; !failed && i < n_own; ++i)
    for (int k = 0; k < k_keep; ++k)
      if (one_way(one_way_bits, i, k_keep, k))
        count[r->nearest[(size_t)i * k_keep + k]]++;
  int64_t *remote_to = phew_malloc((size_t)in.n + 1, sizeof *remote_to); /* own index, then ghost cell */
  int64_t *remote_from = phew_malloc((size_t)in.n + 1, sizeof *remote_from);
  failed = failed || !remote_to || !remote_from;
  for (int r0 = 0, e = 0; !failed && r0 < c->size; ++r0)
    for (int k = 0; !failed && k < in.count[r0]; ++k, ++e) {
      reverse_edge re;
      memcpy(&re, in.items + (size_t)e * sizeof re, sizeof re);
      remote_to[e] = id_map_find(&own, re.to);
      const int64_t gi = ghost_add(&g, re.from, r0, re.position, re.mass);
      failed = remote_to[e] < 0 || gi < 0 || n_own + gi > INT32_MAX;
      remote_from[e] = n_own + gi;
      if (failed)
        break;
      /* mutual: the sender is among our particle's nearest already */
      const int32_t *list = r->nearest + (size_t)remote_to[e] * k_keep;
      for (int k = 0; k < k_keep && remote_to[e] >= 0; ++k)
        if (list[k] >= n_own && ghost_of_padding[list[k] - n_own] == remote_from[e])
          remote_to[e] = -1;
      if (remote_to[e] >= 0)
        count[remote_to[e]]++;
    }

  /* rows: own lists, then the reverse of own lists that are not mutual, then the remote
   * reverse edges (never in a list here: those point at padding): no entry twice, no sort.
   * Built where the lists are: each row is at least a list long, so moving the lists to their
   * rows from the last to the first overwrites only lists already moved; the reverse entries
   * go after each row's list. */
  const int64_t n_cells = n_own + g.n;
  pg->offsets = phew_malloc((size_t)n_cells + 1, sizeof *pg->offsets);
  int64_t total = 0;
  for (int64_t i = 0; i < n_own; ++i)
    total += count[i];
  int32_t *rows = failed ? NULL : phew_realloc(r->nearest, (size_t)total + 1, sizeof *rows);
  if (rows) { /* the graph's now (freed with it, also on failure) */
    r->nearest = NULL;
    pg->neighbours = rows;
  }
  failed = failed || !pg->offsets || !rows;
  if (!failed) {
    pg->offsets[0] = 0;
    for (int64_t i = 0; i < n_own; ++i)
      pg->offsets[i + 1] = pg->offsets[i] + count[i];
    for (int64_t i = n_own - 1; i >= 0; --i) {
      const int32_t *list = rows + (size_t)i * k_keep;
      int32_t *row = rows + pg->offsets[i];
      for (int k = k_keep - 1; k >= 0; --k) { /* backwards: row may overlap list, never below it */
        const int32_t j = list[k];
        row[k] = j < n_own ? j : ghost_of_padding[j - n_own];
      }
    }
    for (int64_t i = 0; i < n_own; ++i)
      count[i] = pg->offsets[i] + k_keep; /* where the reverse entries go */
    for (int64_t i = 0; i < n_own; ++i)
      for (int k = 0; k < k_keep; ++k)
        if (one_way(one_way_bits, i, k_keep, k)) {
          const int32_t j = rows[pg->offsets[i] + k];
          rows[count[j]++] = (int32_t)i;
        }
    for (int64_t e = 0; e < in.n; ++e)
      if (remote_to[e] >= 0)
        rows[count[remote_to[e]]++] = (int32_t)remote_from[e];
    for (int64_t i = n_own; i < n_cells; ++i)
      pg->offsets[i + 1] = pg->offsets[n_own];
  }
  free(remote_to);
  free(remote_from);
  free(one_way_bits);

  /* the cells */
  /* without ghosts the cells are the own particles: their arrays serve as they are */
  pg->shares_cells = c->size == 1; /* alone: no ghosts, and no padding will move s's arrays */
  pg->volume = phew_malloc((size_t)n_cells + 1, sizeof *pg->volume);
  if (pg->shares_cells) {
    pg->global_id = s->id;
    pg->position = s->position;
    pg->mass = s->mass;
  } else {
    pg->global_id = phew_malloc((size_t)n_cells + 1, sizeof *pg->global_id);
    pg->position = phew_malloc((size_t)n_cells + 1, 3 * sizeof *pg->position);
    if (x->has_mass)
      pg->mass = phew_malloc((size_t)n_cells + 1, sizeof *pg->mass);
    pg->ghost = calloc((size_t)n_cells, 1);
    pg->owner = phew_malloc((size_t)n_cells, sizeof *pg->owner);
  }
  failed = failed || !pg->volume ||
           (!pg->shares_cells && (!pg->global_id || !pg->position || (x->has_mass && !pg->mass) || !pg->ghost ||
                                  !pg->owner));
  if (!failed && !pg->shares_cells && n_own > 0) { /* (memcpy from NULL is undefined even for 0 bytes) */
    memcpy(pg->global_id, s->id, (size_t)n_own * sizeof *pg->global_id);
    memcpy(pg->position, s->position, (size_t)n_own * 3 * sizeof *pg->position);
    if (pg->mass)
      memcpy(pg->mass, s->mass, (size_t)n_own * sizeof *pg->mass);
  }
  if (!failed) {
    for (int64_t k = 0; k < g.n; ++k) {
      const int64_t i = n_own + k;
      pg->global_id[i] = g.id[k];
      memcpy(&pg->position[3 * i], &g.position[3 * k], 3 * sizeof(double));
      if (pg->mass)
        pg->mass[i] = g.mass[k];
      pg->ghost[i] = 1;
      pg->owner[i] = g.owner[k];
    }
    for (int64_t i = 0; pg->owner && i < n_own; ++i)
      pg->owner[i] = c->rank;
    for (int64_t i = 0; i < n_cells; ++i)
      pg->volume[i] = 1.0; /* until the densities are known */
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
  status = failed ? PHEW_ERROR_MEMORY : PHEW_OK;
done:
  free(r->nearest); /* taken, also on failure */
  r->nearest = NULL;
  inbox_free(&in);
  free(count);
  free(ghost_of_padding);
  ghosts_free(&g);
  id_map_free(&own);
  return comm_agree(c, status == PHEW_OK ? status
                                          : phew_fail(x->result, status, "out of memory while building the neighbour graph"),
                    x->result);
}
