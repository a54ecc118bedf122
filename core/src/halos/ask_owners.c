/* Questions about particles to the ranks that own them (halos.h). Each rank sends the ids it
 * asks about to their owners; the owners answer in the order asked, so each answer finds its
 * question again by its place among the answers of its rank. */
#include "halos.h"

#include <stdlib.h>
#include <string.h>

enum { REPLY_MAX = 64 }; /* bytes of one answer */

phew_status ask_owners(const points_context *x, const id_map *own, const int32_t *rank, const int64_t *id, int64_t n,
                       owner_reply reply, const void *context, size_t value_size, void *answers)
{
  comm *c = x->c;
  if (value_size > REPLY_MAX)
    return comm_agree(c, phew_fail(x->result, PHEW_ERROR_ARGUMENT, "internal error: answers too large"), x->result);
  outbox questions;
  outbox_init(&questions, c, sizeof(int64_t));
  for (int64_t k = 0; k < n; ++k)
    outbox_put(&questions, rank[k], &id[k]);
  inbox asked = {0};
  phew_status status = outbox_send(&questions, c, &asked);
  outbox_free(&questions);
  if (status != PHEW_OK)
    return comm_agree(c, phew_fail(x->result, status, "out of memory asking other ranks"), x->result);

  outbox replies;
  outbox_init(&replies, c, value_size);
  int64_t unknown = -1; /* an id asked about that this rank does not own */
  for (int r = 0, k = 0; r < c->size; ++r)
    for (int j = 0; j < asked.count[r]; ++j, ++k) {
      int64_t asked_id;
      memcpy(&asked_id, asked.items + (size_t)k * sizeof asked_id, sizeof asked_id);
      const int64_t i = id_map_find(own, asked_id);
      unsigned char answer[REPLY_MAX] = {0};
      if (i < 0)
        unknown = asked_id;
      else
        reply(context, i, answer);
      outbox_put(&replies, r, answer);
    }
  inbox_free(&asked);
  inbox answered = {0};
  status = outbox_send(&replies, c, &answered);
  outbox_free(&replies);
  if (status != PHEW_OK)
    return comm_agree(c, phew_fail(x->result, status, "out of memory asking other ranks"), x->result);
  if (comm_max(c, unknown >= 0)) {
    inbox_free(&answered);
    return comm_agree(c,
                      unknown >= 0
                          ? phew_fail(x->result, PHEW_ERROR_ARGUMENT,
                                      "internal error: particle %lld asked about is not owned here", (long long)unknown)
                          : PHEW_ERROR_ARGUMENT,
                      x->result);
  }
  /* answer k is the next one from rank[k] */
  int64_t *next = phew_malloc((size_t)c->size, sizeof *next);
  if (comm_max(c, !next)) {
    free(next);
    inbox_free(&answered);
    return comm_agree(c, phew_fail(x->result, PHEW_ERROR_MEMORY, "out of memory asking other ranks"), x->result);
  }
  for (int r = 0; r < c->size; ++r)
    next[r] = answered.offset[r];
  for (int64_t k = 0; k < n; ++k)
    memcpy((unsigned char *)answers + (size_t)k * value_size, answered.items + (size_t)next[rank[k]]++ * value_size,
           value_size);
  free(next);
  inbox_free(&answered);
  return PHEW_OK;
}
