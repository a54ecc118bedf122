/* The AMR boxes of this rank's CPU files (its share, as for particles): each file's own octs,
 * level by level from levelmin, covered by boxes (ramses_boxes.c) with the chosen hydro
 * variables on their cells. The boxes depend on the files only, not on the rank count. */
#include "ramses_amr.h"
#include "ramses_boxes.h"
#include "shares.h"

#include <stdlib.h>
#include <string.h>

static int append(amr_share *s, const amr_piece *piece, double *values, read_error *e)
{
  if (s->n == s->capacity) {
    const int64_t capacity = s->capacity ? 2 * s->capacity : 64;
    amr_piece *pieces = realloc(s->pieces, (size_t)capacity * sizeof *pieces);
    double **all = pieces ? realloc(s->values, (size_t)capacity * sizeof *all) : NULL;
    if (pieces)
      s->pieces = pieces;
    if (all)
      s->values = all;
    if (!pieces || !all) {
      free(values);
      return read_fail_memory(e, "the list of AMR boxes", (double)capacity * sizeof *pieces);
    }
    s->capacity = capacity;
  }
  s->pieces[s->n] = *piece;
  s->values[s->n++] = values;
  return 0;
}

/* One CPU file: its octs, then per level its boxes (the octs' memory freed level by level). */
static int read_cpu(const ramses_info *info, const int *variables, int n_variables, int rank, int cpu, amr_share *s,
                    read_error *e)
{
  cpu_octs octs;
  if (ramses_read_octs(info, cpu, variables, n_variables, &octs, e) != 0) {
    cpu_octs_free(&octs);
    return -1;
  }
  for (int l = 0; l < octs.n_levels && e->status == PHEW_OK; ++l) {
    level_box *boxes = NULL;
    int64_t n_boxes = 0;
    octs_to_boxes(&octs.levels[l], n_variables, &boxes, &n_boxes, e);
    for (int64_t b = 0; b < n_boxes; ++b) {
      amr_piece piece = {l, cpu, rank, 0, b, 0, {0}, {0}};
      memcpy(piece.lo, boxes[b].lo, sizeof piece.lo);
      memcpy(piece.hi, boxes[b].hi, sizeof piece.hi);
      if (e->status == PHEW_OK)
        append(s, &piece, boxes[b].values, e);
      else
        free(boxes[b].values);
    }
    free(boxes);
    free(octs.levels[l].ijk);
    free(octs.levels[l].values);
    octs.levels[l].ijk = NULL;
    octs.levels[l].values = NULL;
  }
  cpu_octs_free(&octs);
  return e->status == PHEW_OK ? 0 : -1;
}

int ramses_read_amr(const ramses_info *info, const int *variables, int n_variables, int rank, int size, amr_share *s,
                    read_error *e)
{
  memset(s, 0, sizeof *s);
  int64_t first, n;
  share_of(info->ncpu, rank, size, &first, &n);
  for (int64_t k = 0; k < n && e->status == PHEW_OK; ++k)
    read_cpu(info, variables, n_variables, rank, (int)(first + k + 1), s, e);
  return e->status == PHEW_OK ? 0 : -1;
}

void amr_share_free(amr_share *s)
{
  for (int64_t k = 0; k < s->n; ++k)
    free(s->values[k]);
  free(s->values);
  free(s->pieces);
  memset(s, 0, sizeof *s);
}
