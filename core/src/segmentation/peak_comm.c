/* The peak communicator (paper section 3.3). Every peak lives on its owner, the rank whose
 * active cells hold it; other ranks may hold ghost copies. Owners learn who holds copies
 * when the copies are registered, then values flow owner -> copies (scatter) or
 * copies -> owner (collect). Messages carry the peak's global id, so no rank needs to know
 * the other ranks' numbering, and only ranks that share peaks exchange anything. */
#include "segmentation.h"

#include <stdlib.h>
#include <string.h>

phew_status peak_comm_init(peak_comm *pc, comm *c, peak_table *peaks)
{
  memset(pc, 0, sizeof *pc);
  pc->c = c;
  pc->peaks = peaks;
  pc->n_registered = peaks->n_owned;
  return PHEW_OK;
}

void peak_comm_free(peak_comm *pc)
{
  free(pc->holder_peak);
  free(pc->holder_rank);
  pc->holder_peak = NULL;
  pc->holder_rank = NULL;
  pc->n_holders = pc->holders_capacity = 0;
}

static phew_status add_holder(peak_comm *pc, int64_t peak, int rank)
{
  if (pc->n_holders == pc->holders_capacity) {
    const int64_t c = pc->holders_capacity < 256 ? 256 : 2 * pc->holders_capacity;
    int64_t *p = phew_realloc(pc->holder_peak, (size_t)c, sizeof *p);
    if (p)
      pc->holder_peak = p;
    int *r = phew_realloc(pc->holder_rank, (size_t)c, sizeof *r);
    if (r)
      pc->holder_rank = r;
    if (!p || !r)
      return PHEW_ERROR_MEMORY;
    pc->holders_capacity = c;
  }
  pc->holder_peak[pc->n_holders] = peak;
  pc->holder_rank[pc->n_holders++] = rank;
  return PHEW_OK;
}

phew_status peak_comm_register(peak_comm *pc, phew_status status)
{
  peak_table *t = pc->peaks;
  outbox o;
  outbox_init(&o, pc->c, sizeof(int64_t));
  o.failed = status != PHEW_OK;
  for (int64_t p = pc->n_registered; p < t->n; ++p)
    outbox_put(&o, t->owner[p], &t->global_id[p]);
  pc->n_registered = t->n;
  inbox in;
  phew_status s = outbox_send(&o, pc->c, &in);
  outbox_free(&o);
  const int64_t *ids = (const int64_t *)in.items;
  int failed = s != PHEW_OK;
  for (int r = 0; !failed && r < pc->c->size; ++r)
    for (int i = in.offset[r]; i < in.offset[r + 1]; ++i) {
      const int64_t p = peak_table_find(t, ids[i]);
      if (p < 0 || p >= t->n_owned || add_holder(pc, p, r) != PHEW_OK)
        failed = 1;
    }
  inbox_free(&in);
  return comm_max(pc->c, failed) ? PHEW_ERROR_MEMORY : PHEW_OK;
}

int64_t peak_comm_ghosts(const peak_comm *pc) { return pc->peaks->n - pc->peaks->n_owned; }

/* Items are the peak's global id followed by the value. */
static phew_status send_values(peak_comm *pc, outbox *o, const void *values, size_t value_size, int64_t peak, int dest,
                               unsigned char *item)
{
  memcpy(item, &pc->peaks->global_id[peak], sizeof(int64_t));
  memcpy(item + sizeof(int64_t), (const unsigned char *)values + (size_t)peak * value_size, value_size);
  return outbox_put(o, dest, item);
}

/* Sends the outbox and hands every received value to receive (or copies it into values).
 * Values for an owner must belong to peaks it owns. */
static phew_status deliver(peak_comm *pc, outbox *o, void *values, size_t value_size, int to_owner,
                           peak_receive_fn receive, void *context)
{
  inbox in;
  phew_status s = outbox_send(o, pc->c, &in);
  outbox_free(o);
  int failed = s != PHEW_OK;
  for (int64_t i = 0; !failed && i < in.n; ++i) {
    const unsigned char *it = in.items + (size_t)i * in.item_size;
    int64_t id;
    memcpy(&id, it, sizeof id);
    const int64_t p = peak_table_find(pc->peaks, id);
    if (p < 0 || (to_owner && p >= pc->peaks->n_owned))
      failed = 1;
    else if (receive)
      failed = receive(context, p, it + sizeof id) != PHEW_OK;
    else
      memcpy((unsigned char *)values + (size_t)p * value_size, it + sizeof id, value_size);
  }
  inbox_free(&in);
  return comm_max(pc->c, failed) ? PHEW_ERROR_MEMORY : PHEW_OK;
}

phew_status peak_comm_scatter(peak_comm *pc, void *values, size_t value_size, const unsigned char *only,
                              peak_receive_fn receive, void *context)
{
  outbox o;
  outbox_init(&o, pc->c, sizeof(int64_t) + value_size);
  unsigned char *item = phew_malloc(1, o.item_size);
  o.failed = !item || !values;
  for (int64_t h = 0; !o.failed && h < pc->n_holders; ++h)
    if (!only || only[pc->holder_peak[h]])
      send_values(pc, &o, values, value_size, pc->holder_peak[h], pc->holder_rank[h], item);
  free(item);
  return deliver(pc, &o, values, value_size, 0, receive, context);
}

phew_status peak_comm_collect(peak_comm *pc, const void *values, size_t value_size, const unsigned char *only,
                              peak_receive_fn receive, void *context)
{
  const peak_table *t = pc->peaks;
  outbox o;
  outbox_init(&o, pc->c, sizeof(int64_t) + value_size);
  unsigned char *item = phew_malloc(1, o.item_size);
  o.failed = !item || !values;
  for (int64_t p = t->n_owned; !o.failed && p < t->n; ++p)
    if (!only || only[p])
      send_values(pc, &o, values, value_size, p, t->owner[p], item);
  free(item);
  return deliver(pc, &o, NULL, value_size, 1, receive, context);
}

phew_status peak_comm_share_coordinates(peak_comm *pc)
{
  double none[3]; /* a rank without peaks has no coordinate array, and receives nothing */
  return peak_comm_scatter(pc, pc->peaks->coord ? pc->peaks->coord : none, 3 * sizeof(double), NULL, NULL, NULL);
}
