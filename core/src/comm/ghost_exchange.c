/* Filling ghost cells from the ranks that own them (paper section 3: the "virtual
 * boundaries"). Each ghost cell asks its owner rank for the cell with its global id; the
 * owners remember who asked for what, so that afterwards values travel in one sparse
 * exchange per call. The plan knows nothing of the mesh: the owner and the global id of each
 * ghost come with it, and the owner's mesh finds the cell of an id. */
#include "comm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void ghost_list_free(ghost_list *g)
{
  free(g->cell);
  free(g->owner);
  free(g->global_id);
  memset(g, 0, sizeof *g);
}

phew_status ghost_list_reserve(ghost_list *g, int64_t n)
{
  const size_t k = (size_t)(n > 0 ? n : 1);
  g->cell = phew_malloc(k, sizeof *g->cell);
  g->owner = phew_malloc(k, sizeof *g->owner);
  g->global_id = phew_malloc(k, sizeof *g->global_id);
  g->n = 0;
  return g->cell && g->owner && g->global_id ? PHEW_OK : PHEW_ERROR_MEMORY;
}

phew_status ghost_plan_build(ghost_plan *p, comm *c, const ghost_list *ghosts, cell_of_id_fn find, const void *context,
                             char *message, size_t message_size)
{
  memset(p, 0, sizeof *p);
  outbox asks;
  outbox_init(&asks, c, sizeof(int64_t));
  int64_t bad_owner = 0;
  for (int64_t k = 0; k < ghosts->n; ++k) {
    const int r = ghosts->owner[k];
    if (r < 0 || r >= c->size) {
      ++bad_owner;
      continue;
    }
    outbox_put(&asks, r, &ghosts->global_id[k]);
  }
  inbox in;
  phew_status status = outbox_send(&asks, c, &in);
  outbox_free(&asks);
  if (comm_max(c, bad_owner > 0)) {
    snprintf(message, message_size, "a ghost cell names an owner rank that is not a rank of the communicator");
    inbox_free(&in);
    return PHEW_ERROR_ARGUMENT;
  }
  if (status != PHEW_OK) {
    snprintf(message, message_size, "out of memory while planning the ghost exchange");
    return status;
  }
  /* asks in the order the owners answer: grouped by owner, each group in list order */
  p->n_ask = ghosts->n;
  p->ask_cell = phew_malloc((size_t)(ghosts->n > 0 ? ghosts->n : 1), sizeof *p->ask_cell);
  int *fill = calloc((size_t)c->size + 1, sizeof *fill);
  p->n_answer = in.n;
  p->answer_cell = phew_malloc((size_t)(in.n > 0 ? in.n : 1), sizeof *p->answer_cell);
  p->answer_count = phew_malloc((size_t)c->size, sizeof *p->answer_count);
  const int failed = !p->ask_cell || !fill || !p->answer_cell || !p->answer_count;
  int64_t unknown = 0, unknown_id = -1;
  if (!failed) {
    for (int64_t i = 0; i < ghosts->n; ++i)
      fill[ghosts->owner[i] + 1]++;
    for (int r = 0; r < c->size; ++r)
      fill[r + 1] += fill[r];
    for (int64_t i = 0; i < ghosts->n; ++i)
      p->ask_cell[fill[ghosts->owner[i]]++] = ghosts->cell[i];
    const int64_t *asked = (const int64_t *)in.items;
    for (int r = 0; r < c->size; ++r)
      p->answer_count[r] = in.count[r];
    for (int64_t i = 0; i < in.n; ++i) {
      p->answer_cell[i] = find(context, asked[i]);
      if (p->answer_cell[i] < 0 && unknown++ == 0)
        unknown_id = asked[i];
    }
  }
  free(fill);
  inbox_free(&in);
  if (comm_max(c, failed)) {
    snprintf(message, message_size, "out of memory while planning the ghost exchange");
    status = PHEW_ERROR_MEMORY;
  } else if (comm_max(c, unknown > 0)) {
    snprintf(message, message_size, "a ghost cell (id %lld) is not an active cell of the rank named as its owner",
             (long long)comm_max(c, unknown_id));
    status = PHEW_ERROR_ARGUMENT;
  }
  if (status != PHEW_OK)
    ghost_plan_free(p);
  return status;
}

phew_status ghost_plan_exchange(const ghost_plan *p, comm *c, const void *answer, void *ask, size_t value_size)
{
  inbox in; /* answers are grouped by the rank that asked: no sorting needed */
  phew_status s = comm_exchange_grouped(c, answer, p->answer_count, value_size, &in);
  if (s == PHEW_OK && in.n == p->n_ask)
    memcpy(ask, in.items, (size_t)in.n * value_size);
  else if (s == PHEW_OK)
    s = PHEW_ERROR_MPI;
  inbox_free(&in);
  return s;
}

void ghost_plan_free(ghost_plan *p)
{
  free(p->ask_cell);
  free(p->answer_cell);
  free(p->answer_count);
  memset(p, 0, sizeof *p);
}
