/* HOP's first step (Eisenstein & Hut 1998): every particle hops to the densest of its n_hop
 * nearest particles, and the chains of hops lead every particle to a maximum (halos.h).
 *
 * A particle hops to the densest of itself and its nearest others; of equally dense ones
 * itself first, then the closer (smaller (distance, id)): the particle HOP finds looking at
 * itself first and then at the others in order, a later one winning only when strictly
 * denser. A particle none of whose neighbours is denser is a maximum. Densities strictly rise
 * along a chain, so chains end. (The lists hold the nearest as a set: distances are computed
 * for ties of density only.)
 *
 * Chains are followed on each rank as far as its own particles go, by several threads at once
 * (follow_own_chains); a chain that leaves for a
 * padding particle continues on that particle's owner. Each round, every rank asks the owners
 * of the padding particles its chains stopped at where their chains stand (at a maximum, or at
 * another rank's particle), all answering from where they stood before the round: the
 * distance left halves each round (pointer jumping). */
#include "halos.h"
#include "threads.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

enum { HOP_BLOCK = 4096 }; /* particles per task of the hop step and of the chains */

static int64_t hop_tasks(int64_t n_own) { return (n_own + HOP_BLOCK - 1) / HOP_BLOCK; }

typedef struct hop_step {
  const particle_set *s;
  const particle_box *box;
  const int32_t *nearest;
  int n_keep, n_others;
  const double *rho, *rho_padding;
  _Atomic int32_t *target;
} hop_step;

static void hop_task(void *context, int thread, int64_t task)
{
  (void)thread;
  const hop_step *h = context;
  const int64_t n_own = h->s->n_own;
  const int64_t end = (task + 1) * HOP_BLOCK < n_own ? (task + 1) * HOP_BLOCK : n_own;
  const particle_set *s = h->s;
  for (int64_t i = task * HOP_BLOCK; i < end; ++i) {
    int32_t best = (int32_t)i;
    double densest = h->rho[i];
    const int32_t *list = &h->nearest[(size_t)i * (size_t)h->n_keep];
    for (int k = 0; k < h->n_others; ++k) {
      const int32_t j = list[k];
      const double r = j < n_own ? h->rho[j] : h->rho_padding[j - n_own];
      if (r < densest || (r == densest && best == i))
        continue;
      if (r == densest) { /* the closer of two equally dense others */
        const double dj = particle_distance2(h->box, &s->position[3 * i], &s->position[3 * (int64_t)j]);
        const double db = particle_distance2(h->box, &s->position[3 * i], &s->position[3 * (int64_t)best]);
        if (dj > db || (dj == db && s->id[j] > s->id[best]))
          continue;
      }
      densest = r;
      best = j;
    }
    atomic_store_explicit(&h->target[i], best, memory_order_relaxed);
  }
}

/* Where a chain stands: at a maximum (rank -1, id its global id) or at a particle of another
 * rank, or of this one after a detour (its id and owner). */
typedef struct chain_state {
  int64_t id;
  int32_t rank;
  int32_t unused;
} chain_state;

/* What the owner of a particle says: its own chain's state. */
typedef struct chain_view {
  const particle_set *s;
  _Atomic int32_t *end;     /* per own particle: where its chain leaves the own particles */
  const int64_t *slot;      /* per padding particle: its state's place, or -1 */
  const chain_state *state; /* per padding particle the chains stop at */
} chain_view;

static chain_state chain_state_of(const chain_view *v, int64_t i)
{
  const int32_t e = atomic_load_explicit(&v->end[i], memory_order_relaxed);
  if (e < v->s->n_own)
    return (chain_state){v->s->id[e], -1, 0};
  return v->state[v->slot[e - v->s->n_own]];
}

static void chain_reply(const void *context, int64_t i, void *out)
{
  const chain_state st = chain_state_of(context, i);
  memcpy(out, &st, sizeof st);
}

/* Where the chain of particle i leaves the own particles: the maximum it ends at (end[m] ==
 * m), or the padding particle it leaves for (an index >= n_own). */
static int32_t chain_stop(_Atomic int32_t *end, int64_t n_own, int32_t i)
{
  for (;;) {
    const int32_t next = atomic_load_explicit(&end[i], memory_order_relaxed);
    if (next == i || next >= n_own)
      return next;
    i = next;
  }
}

/* The chains through the own particles, a block of particles per task. */
typedef struct chain_job {
  _Atomic int32_t *end;
  int64_t n_own;
} chain_job;

/* Each particle of the block walks its chain to its stop, then points every particle it
 * passed at that stop. end[] is a forest whose roots are the stops; every write replaces a
 * pointer by the stop of its own chain, an ancestor, so a walk that meets a pointer another
 * thread has just written only gets there sooner: relaxed atomics suffice, and the result
 * (end[i] the stop of i's chain, for every i) does not depend on the threads' timing. */
static void chain_task(void *context, int thread, int64_t task)
{
  (void)thread;
  const chain_job *job = context;
  const int64_t end_i = (task + 1) * HOP_BLOCK < job->n_own ? (task + 1) * HOP_BLOCK : job->n_own;
  for (int64_t i = task * HOP_BLOCK; i < end_i; ++i) {
    const int32_t stop = chain_stop(job->end, job->n_own, (int32_t)i);
    for (int32_t k = (int32_t)i;;) { /* the walk again, writing its stop */
      const int32_t next = atomic_load_explicit(&job->end[k], memory_order_relaxed);
      if (next == stop)
        break;
      atomic_store_explicit(&job->end[k], stop, memory_order_relaxed);
      k = next;
    }
  }
}

/* Each chain of hops followed through the own particles: end[i], the particle i hops to on
 * entry, becomes where its chain stops (a maximum, or the padding particle it leaves for). */
static void follow_own_chains(const points_context *x, _Atomic int32_t *end, int64_t n_own)
{
  chain_job job = {end, n_own};
  threads_run(x->n_threads, hop_tasks(n_own), chain_task, &job);
}

/* The keys of the own particles, a block per task, once every chain's state is known. */
typedef struct key_job {
  const chain_view *view;
  int64_t *key;
} key_job;

static void key_task(void *context, int thread, int64_t task)
{
  (void)thread;
  const key_job *job = context;
  const int64_t n_own = job->view->s->n_own;
  const int64_t end_i = (task + 1) * HOP_BLOCK < n_own ? (task + 1) * HOP_BLOCK : n_own;
  for (int64_t i = task * HOP_BLOCK; i < end_i; ++i)
    job->key[i] = chain_state_of(job->view, i).id;
}

/* The questions of the rounds: per padding particle chains stop at, where its chain stands
 * (state), and the owners asked about those not yet at a maximum. */
typedef struct chain_questions {
  chain_state *state, *answer;
  int64_t *ask_id;
  int32_t *ask_rank;
  int64_t *asking; /* the state each question is about */
  int64_t n_states;
} chain_questions;

/* Collective: the states followed over the ranks, a round at a time, until every one is at a
 * maximum. An error is agreed over the ranks. */
static phew_status follow_across_ranks(const points_context *x, const id_map *own, const chain_view *view,
                                       chain_questions *q)
{
  comm *c = x->c;
  phew_status status = PHEW_OK;
  /* a chain crosses ranks fewer than n_total times, and each round halves what is left */
  for (int round = 0; status == PHEW_OK; ++round) {
    int64_t n_ask = 0;
    for (int64_t k = 0; k < q->n_states; ++k)
      if (q->state[k].rank >= 0) {
        q->ask_id[n_ask] = q->state[k].id;
        q->ask_rank[n_ask] = q->state[k].rank;
        q->asking[n_ask++] = k;
      }
    if (comm_max(c, n_ask) == 0)
      break;
    if (round > 64) {
      status = comm_agree(c, phew_fail(x->result, PHEW_ERROR_ARGUMENT, "internal error: HOP chains do not end"),
                          x->result);
      break;
    }
    status = ask_owners(x, own, q->ask_rank, q->ask_id, n_ask, chain_reply, view, sizeof *q->answer, q->answer);
    for (int64_t a = 0; status == PHEW_OK && a < n_ask; ++a)
      q->state[q->asking[a]] = q->answer[a];
  }
  return status;
}

/* Collective: key[i] for every own particle, from where its chain left the own particles
 * (end): the padding particles chains stop at (slot: their places) followed to their
 * maxima over the ranks. */
static phew_status chains_across_ranks(const points_context *x, const particle_set *s, const id_map *own,
                                       _Atomic int32_t *end, int64_t *slot, int64_t *key)
{
  comm *c = x->c;
  const int64_t n_own = s->n_own, n_padding = s->n - s->n_own;
  chain_questions q;
  q.n_states = 0;
  for (int64_t j = 0; j < n_padding; ++j)
    slot[j] = -1;
  for (int64_t i = 0; n_padding > 0 && i < n_own; ++i) { /* numbered in the particles' order */
    const int32_t e = atomic_load_explicit(&end[i], memory_order_relaxed);
    if (e >= n_own && slot[e - n_own] < 0)
      slot[e - n_own] = q.n_states++;
  }
  q.state = phew_malloc((size_t)q.n_states + 1, sizeof *q.state);
  q.answer = phew_malloc((size_t)q.n_states + 1, sizeof *q.answer);
  q.ask_id = phew_malloc((size_t)q.n_states + 1, sizeof *q.ask_id);
  q.ask_rank = phew_malloc((size_t)q.n_states + 1, sizeof *q.ask_rank);
  q.asking = phew_malloc((size_t)q.n_states + 1, sizeof *q.asking);
  phew_status status = PHEW_OK;
  if (comm_max(c, !q.state || !q.answer || !q.ask_id || !q.ask_rank || !q.asking))
    status = comm_agree(c, phew_fail(x->result, PHEW_ERROR_MEMORY, "out of memory for the hops"), x->result);
  for (int64_t j = 0; status == PHEW_OK && j < n_padding; ++j)
    if (slot[j] >= 0)
      q.state[slot[j]] = (chain_state){s->id[n_own + j], s->owner[j], 0};
  const chain_view view = {s, end, slot, q.state};
  if (status == PHEW_OK)
    status = follow_across_ranks(x, own, &view, &q);
  if (status == PHEW_OK) {
    key_job job = {&view, key};
    threads_run(x->n_threads, hop_tasks(n_own), key_task, &job);
  }
  free(q.state);
  free(q.answer);
  free(q.ask_id);
  free(q.ask_rank);
  free(q.asking);
  return status;
}

phew_status hop_chains(const points_context *x, const particle_set *s, const id_map *own, const hop_lists *lists,
                       const double *rho, const double *rho_padding, int64_t *key)
{
  comm *c = x->c;
  const int64_t n_own = s->n_own, n_padding = s->n - s->n_own;
  _Atomic int32_t *end = phew_malloc((size_t)n_own + 1, sizeof *end);
  int64_t *slot = phew_malloc((size_t)n_padding + 1, sizeof *slot);
  if (comm_max(c, !end || !slot)) {
    free(end);
    free(slot);
    return comm_agree(c, phew_fail(x->result, PHEW_ERROR_MEMORY, "out of memory for the hops"), x->result);
  }
  /* the hops, then each chain followed through the own particles, remembering the ends */
  const int n_others = lists->n_hop - 1 < lists->n_keep ? lists->n_hop - 1 : lists->n_keep;
  hop_step step = {s, &x->box, lists->nearest, lists->n_keep, n_others, rho, rho_padding, end};
  threads_run(x->n_threads, hop_tasks(n_own), hop_task, &step);
  follow_own_chains(x, end, n_own);
  /* the chains that leave for padding particles, continued on their owners */
  const phew_status status = chains_across_ranks(x, s, own, end, slot, key);
  free(end);
  free(slot);
  return status;
}
