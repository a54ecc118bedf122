/* The tracer sets of phew.h: freed and joined. */
#include "tracking.h"

#include <stdlib.h>
#include <string.h>

void phew_tracer_set_free(phew_tracer_set *set)
{
  if (!set)
    return;
  free(set->tracked);
  free(set->ids);
  memset(set, 0, sizeof *set);
}

phew_status phew_tracer_set_join(const phew_tracer_set *a, const phew_tracer_set *b, phew_tracer_set *out)
{
  if (!out)
    return PHEW_ERROR_ARGUMENT;
  memset(out, 0, sizeof *out);
  const int64_t na = a ? a->n : 0, nb = b ? b->n : 0, ia = a ? a->n_ids : 0, ib = b ? b->n_ids : 0;
  out->tracked = phew_malloc((size_t)(na + nb) + 1, sizeof *out->tracked);
  out->ids = phew_malloc((size_t)(ia + ib) + 1, sizeof *out->ids);
  if (!out->tracked || !out->ids) {
    phew_tracer_set_free(out);
    return PHEW_ERROR_MEMORY;
  }
  if (na)
    memcpy(out->tracked, a->tracked, (size_t)na * sizeof *out->tracked);
  if (nb)
    memcpy(out->tracked + na, b->tracked, (size_t)nb * sizeof *out->tracked);
  if (ia)
    memcpy(out->ids, a->ids, (size_t)ia * sizeof *out->ids);
  if (ib)
    memcpy(out->ids + ia, b->ids, (size_t)ib * sizeof *out->ids);
  for (int64_t k = na; k < na + nb; ++k)
    out->tracked[k].tracer_offset += ia;
  out->n = na + nb;
  out->n_ids = ia + ib;
  return PHEW_OK;
}
