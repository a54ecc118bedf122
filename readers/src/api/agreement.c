/* What the ranks agree on after reading (failures, the shape of the sets), and the refusal of
 * NULL arguments. */
#include "api.h"
#include "particle_arrays.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

phew_status agree_on_error(phew_context *context, read_error *e)
{
  if (e->status != PHEW_OK)
    snprintf(context->message, sizeof context->message, "%s", e->message);
  const phew_status s = phew_agree(context, e->status);
  e->status = s;
  snprintf(e->message, sizeof e->message, "%s", s == PHEW_OK ? "" : context->message);
  return s;
}

/* What a rank holds, for the others. */
typedef struct shape {
  int64_t n;
  int32_t type, has_velocity, n_fields, pad;
} shape;

typedef struct field_shape {
  char name[64];
  int32_t components, type;
} field_shape;

/* A rank without particles takes the shape of rank `from` (its fields gathered from it). */
static phew_status take_shape(phew_context *context, phew_particle_set *set, const shape *like, int is_from,
                              read_error *e)
{
  field_shape mine[64];
  memset(mine, 0, sizeof mine);
  const int64_t n_mine = is_from ? set->n_fields : 0;
  for (int64_t k = 0; k < n_mine && k < 64; ++k) {
    memcpy(mine[k].name, set->fields[k].name, sizeof mine[k].name);
    mine[k].components = set->fields[k].components;
    mine[k].type = (int32_t)set->fields[k].type;
  }
  field_shape *fields = NULL;
  int64_t n_fields = 0;
  if (phew_gather_all(context, mine, n_mine < 64 ? n_mine : 64, sizeof *mine, (void **)&fields, &n_fields, NULL) !=
      PHEW_OK)
    return read_fail(e, PHEW_ERROR_MEMORY, "%s", context->message), PHEW_ERROR_MEMORY;
  if (set->n == 0 && !is_from) {
    const int64_t first = set->first, total = set->n_total;
    phew_particle_set_free(set);
    set->first = first;
    set->n_total = total;
    if (particle_arrays_allocate(set, 0, (phew_scalar_type)like->type, like->has_velocity, e) == 0)
      for (int64_t k = 0; k < n_fields; ++k)
        if (!particle_arrays_add_field(set, fields[k].name, fields[k].components, (phew_value_type)fields[k].type, e))
          break;
  }
  free(fields);
  return agree_on_error(context, e);
}

phew_status agree_on_shape(phew_context *context, phew_particle_set *set, read_error *e)
{
  const shape mine = {set->n, (int32_t)set->type, set->velocity != NULL, set->n_fields, 0};
  int rank, size;
  shape *all = NULL;
  int64_t n_all = 0;
  if (phew_context_ranks(context, &rank, &size) != PHEW_OK ||
      phew_gather_all(context, &mine, 1, sizeof mine, (void **)&all, &n_all, NULL) != PHEW_OK)
    return read_fail(e, PHEW_ERROR_MEMORY, "%s", context->message), PHEW_ERROR_MEMORY;
  int from = -1;
  set->first = set->n_total = 0;
  for (int r = 0; r < size; ++r) {
    set->first += r < rank ? all[r].n : 0;
    set->n_total += all[r].n;
    if (all[r].n > 0 && from < 0)
      from = r;
    else if (all[r].n > 0 && (all[r].type != all[from].type || all[r].has_velocity != all[from].has_velocity ||
                              all[r].n_fields != all[from].n_fields))
      read_fail(e, PHEW_ERROR_DATA, "the snapshot's files disagree on the particles' fields (ranks %d and %d)", from,
                r);
  }
  const shape like = from >= 0 ? all[from] : mine;
  free(all);
  if (agree_on_error(context, e) != PHEW_OK || from < 0)
    return e->status;
  return take_shape(context, set, &like, rank == from, e);
}

phew_status refuse_null_arguments(phew_context *context, const char *message)
{
  if (context)
    snprintf(context->message, sizeof context->message, "%s", message);
  return PHEW_ERROR_ARGUMENT;
}
