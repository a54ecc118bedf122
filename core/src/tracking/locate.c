/* Where tracer particles lie in a later step (tracking.h): the later step's labelled elements
 * and rank 0's questions (one per tracer id) meet on the rank owning each id, and the answers
 * go back to rank 0. */
#include "tracking.h"

#include <stdlib.h>
#include <string.h>

/* A labelled element (question -1) or a question about an id (its index on rank 0). */
typedef struct locate_record {
  int64_t id;
  int64_t question; /* -1: an element with its label */
  int64_t label;
} locate_record;

typedef struct locate_answer {
  int64_t question, label;
} locate_answer;

/* By id, the element before the questions about it. */
static int by_id_element_first(const void *a, const void *b)
{
  const locate_record *x = a, *y = b;
  if (x->id != y->id)
    return x->id < y->id ? -1 : 1;
  return (x->question > y->question) - (x->question < y->question);
}

static phew_status ask_owners(comm *c, const phew_step_labels *later, const int64_t *ids, int64_t n_ids, inbox *in)
{
  outbox o;
  outbox_init(&o, c, sizeof(locate_record));
  for (int64_t i = 0; i < later->n; ++i) {
    const locate_record r = {later->id[i], -1, later->label[i]};
    if (later->label[i] >= 0 && outbox_put(&o, tracking_owner_of(r.id, c->size), &r) != PHEW_OK)
      break; /* o.failed: the exchange fails on every rank */
  }
  for (int64_t k = 0; c->rank == 0 && k < n_ids; ++k) {
    const locate_record r = {ids[k], k, -1};
    if (outbox_put(&o, tracking_owner_of(r.id, c->size), &r) != PHEW_OK)
      break;
  }
  const phew_status status = outbox_send(&o, c, in);
  outbox_free(&o);
  return status;
}

/* The owner's answers: each question gets the label of the element with its id, if any. */
static phew_status answer(comm *c, locate_record *r, int64_t n, inbox *answers)
{
  qsort(r, (size_t)n, sizeof *r, by_id_element_first);
  outbox o;
  outbox_init(&o, c, sizeof(locate_answer));
  int64_t label = -1;
  for (int64_t k = 0; k < n; ++k) {
    if (k == 0 || r[k].id != r[k - 1].id)
      label = -1;
    if (r[k].question < 0) {
      label = r[k].label;
      continue;
    }
    const locate_answer a = {r[k].question, label};
    if (outbox_put(&o, 0, &a) != PHEW_OK)
      break;
  }
  const phew_status status = outbox_send(&o, c, answers);
  outbox_free(&o);
  return status;
}

phew_status tracking_locate(comm *c, const phew_step_labels *later, const int64_t *ids, int64_t n_ids, int64_t *label,
                            call_result *result)
{
  inbox in, answers;
  memset(&in, 0, sizeof in);
  memset(&answers, 0, sizeof answers);
  phew_status status = ask_owners(c, later, ids, n_ids, &in);
  if (status == PHEW_OK)
    status = answer(c, (locate_record *)in.items, in.n, &answers);
  inbox_free(&in);
  if (status == PHEW_OK && c->rank == 0) {
    for (int64_t k = 0; k < n_ids; ++k)
      label[k] = -1;
    const locate_answer *a = (const locate_answer *)answers.items;
    for (int64_t k = 0; k < answers.n; ++k)
      label[a[k].question] = a[k].label;
  }
  inbox_free(&answers);
  if (status != PHEW_OK)
    phew_fail(result, status, "could not find the tracer particles in the later step (out of memory)");
  return comm_agree(c, status, result);
}
