/* Filling ghost cells of structured blocks from the ranks that own them (paper section 3:
 * the "virtual boundaries"). Each ghost cell asks the rank whose active box holds it; the
 * owners remember who asked for what, so that afterwards values travel in one sparse
 * exchange per call. Without a communicator the owner is this process (periodic wrap). */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int64_t wrap(int64_t c, int64_t n) { return c < 0 ? c + n : (c >= n ? c - n : c); }

phew_status ghost_plan_build(ghost_plan *p, comm *c, const phew_grid *g, char *message, size_t message_size)
{
  memset(p, 0, sizeof *p);
  owners own;
  if (owners_init(&own, c, g) != PHEW_OK) {
    snprintf(message, message_size, "out of memory while planning the ghost exchange");
    return PHEW_ERROR_MEMORY;
  }
  const int64_t sx = g->stored_dims[0], sy = g->stored_dims[1], sz = g->stored_dims[2];
  const int64_t n_ghost = sx * sy * sz - g->active_dims[0] * g->active_dims[1] * g->active_dims[2];
  outbox asks;
  outbox_init(&asks, c, sizeof(int64_t));
  int64_t *cell = phew_malloc((size_t)(n_ghost > 0 ? n_ghost : 1), sizeof *cell);
  int *owner = phew_malloc((size_t)(n_ghost > 0 ? n_ghost : 1), sizeof *owner);
  int64_t k = 0, orphans = 0;
  const int64_t ax0 = g->active_offset[0] - g->stored_offset[0], ax1 = ax0 + g->active_dims[0];
  for (int64_t z = 0; cell && owner && z < sz; ++z)
    for (int64_t y = 0; y < sy; ++y) {
      const int64_t raw_y = g->stored_offset[1] + y, raw_z = g->stored_offset[2] + z;
      const int row_active = raw_y >= g->active_offset[1] && raw_y < g->active_offset[1] + g->active_dims[1] &&
                             raw_z >= g->active_offset[2] && raw_z < g->active_offset[2] + g->active_dims[2];
      for (int64_t x = 0; x < sx; ++x) {
        if (row_active && x == ax0 && ax1 > ax0)
          x = ax1; /* skip the active run of the row */
        if (x >= sx)
          break;
        const int64_t raw[3] = {g->stored_offset[0] + x, raw_y, raw_z};
        const int64_t w[3] = {wrap(raw[0], g->global_dims[0]), wrap(raw[1], g->global_dims[1]),
                              wrap(raw[2], g->global_dims[2])};
        const int r = owners_of_coord(&own, w);
        if (r < 0) {
          ++orphans;
          continue;
        }
        const int64_t id = w[0] + g->global_dims[0] * (w[1] + g->global_dims[1] * w[2]);
        cell[k] = x + sx * (y + sy * z);
        owner[k++] = r;
        outbox_put(&asks, r, &id);
      }
    }
  if (!cell || !owner)
    asks.failed = 1;
  inbox in;
  phew_status status = outbox_send(&asks, c, &in);
  if (comm_max(c, orphans > 0)) {
    snprintf(message, message_size, "some ghost cells lie in no rank's active box: the blocks do not tile the grid");
    status = PHEW_ERROR_ARGUMENT;
    goto done;
  }
  if (status != PHEW_OK) {
    snprintf(message, message_size, "out of memory while planning the ghost exchange");
    goto done;
  }
  /* asks in the order the owners answer: grouped by owner, each group in stored order */
  p->n_ask = k;
  p->ask_cell = phew_malloc((size_t)(k > 0 ? k : 1), sizeof *p->ask_cell);
  int *fill = calloc((size_t)c->size + 1, sizeof *fill);
  p->n_answer = in.n;
  p->answer_cell = phew_malloc((size_t)(in.n > 0 ? in.n : 1), sizeof *p->answer_cell);
  p->answer_count = phew_malloc((size_t)c->size, sizeof *p->answer_count);
  int failed = !p->ask_cell || !fill || !p->answer_cell || !p->answer_count;
  if (!failed) {
    for (int64_t i = 0; i < k; ++i)
      fill[owner[i] + 1]++;
    for (int r = 0; r < c->size; ++r)
      fill[r + 1] += fill[r];
    for (int64_t i = 0; i < k; ++i)
      p->ask_cell[fill[owner[i]]++] = cell[i];
    const int64_t *asked = (const int64_t *)in.items;
    for (int r = 0; r < c->size; ++r) {
      p->answer_count[r] = in.count[r];
      for (int i = in.offset[r]; i < in.offset[r + 1]; ++i) {
        const int64_t id = asked[i];
        const int64_t a[3] = {id % g->global_dims[0], (id / g->global_dims[0]) % g->global_dims[1],
                              id / (g->global_dims[0] * g->global_dims[1])};
        p->answer_cell[i] = (a[0] - g->stored_offset[0]) + sx * ((a[1] - g->stored_offset[1]) + sy * (a[2] - g->stored_offset[2]));
      }
    }
  }
  free(fill);
  if (comm_max(c, failed)) {
    snprintf(message, message_size, "out of memory while planning the ghost exchange");
    status = PHEW_ERROR_MEMORY;
  }
done:
  inbox_free(&in);
  outbox_free(&asks);
  owners_free(&own);
  free(cell);
  free(owner);
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

phew_status phew_exchange_ghosts(const phew_grid *g, void *values, size_t value_size, void *mpi_comm,
                                 char *message, size_t message_size)
{
  phew_input in;
  memset(&in, 0, sizeof in);
  in.mpi_comm = mpi_comm;
  phew_result r;
  comm c;
  if (comm_init(&c, &in, &r) != PHEW_OK) {
    snprintf(message, message_size, "%s", r.message);
    return PHEW_ERROR_MPI;
  }
  /* a bad block on one rank stops them all, before any size taken from it is used */
  memset(&r, 0, sizeof r);
  block b;
  phew_status s = comm_agree(&c, g ? block_init(&b, g, &r) : phew_fail(&r, PHEW_ERROR_ARGUMENT, "no grid given"), &r);
  if (s != PHEW_OK) {
    snprintf(message, message_size, "%s", r.message);
    return s;
  }
  ghost_plan p;
  s = ghost_plan_build(&p, &c, g, message, message_size);
  if (s != PHEW_OK)
    return s;
  unsigned char *answer = phew_malloc((size_t)(p.n_answer > 0 ? p.n_answer : 1), value_size);
  unsigned char *ask = phew_malloc((size_t)(p.n_ask > 0 ? p.n_ask : 1), value_size);
  if (answer && ask)
    for (int64_t i = 0; i < p.n_answer; ++i)
      memcpy(answer + (size_t)i * value_size, (unsigned char *)values + (size_t)p.answer_cell[i] * value_size, value_size);
  if (comm_max(&c, !answer || !ask)) {
    snprintf(message, message_size, "out of memory in the ghost exchange");
    s = PHEW_ERROR_MEMORY;
  } else {
    s = ghost_plan_exchange(&p, &c, answer, ask, value_size);
    if (s == PHEW_OK)
      for (int64_t i = 0; i < p.n_ask; ++i)
        memcpy((unsigned char *)values + (size_t)p.ask_cell[i] * value_size, ask + (size_t)i * value_size, value_size);
    else
      snprintf(message, message_size, "the ghost exchange failed");
  }
  free(answer);
  free(ask);
  ghost_plan_free(&p);
  return s;
}
