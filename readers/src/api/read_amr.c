/* phew_read_amr: each rank reads its CPU files' boxes (ramses_amr.c); the ranks then tell
 * each other their boxes, and every rank lists them all in one order (level, CPU file, place
 * in the file) with held = 1 for its own. */
#include "api.h"
#include "ramses_amr.h"
#include "ramses_octs.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_VARIABLES = 256 };

/* The requested variables' indices among the output's names (all of them for NULL). */
static int pick(const ramses_info *info, const char *const *wanted, int n_wanted, char (*names)[64], int n_names,
                phew_amr_set *set, int **indices, read_error *e)
{
  const int n = wanted ? n_wanted : n_names;
  *indices = malloc((size_t)(n > 0 ? n : 1) * sizeof **indices);
  set->variable_names = calloc((size_t)(n > 0 ? n : 1), sizeof *set->variable_names);
  if (!*indices || !set->variable_names)
    return read_fail_memory(e, "the variables' names", (double)n * 64.0);
  for (int k = 0; k < n; ++k) {
    int found = wanted ? -1 : k;
    for (int v = 0; wanted && v < n_names && found < 0; ++v)
      found = strcmp(wanted[k], names[v]) == 0 ? v : -1;
    if (found < 0 && n_names == 0)
      return read_fail(e, PHEW_ERROR_ARGUMENT, "%s has no hydro files (hydro_%05d.out*): no variable %s", info->folder,
                       info->output, wanted[k]);
    if (found < 0) {
      char list[512] = "";
      for (int v = 0; v < n_names; ++v)
        snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", v ? ", " : "", names[v]);
      return read_fail(e, PHEW_ERROR_ARGUMENT, "%s has no hydro variable \"%s\"; it has %s", info->folder, wanted[k],
                       list);
    }
    (*indices)[k] = found;
    snprintf(set->variable_names[k], 64, "%s", names[found]);
  }
  set->n_variables = n;
  return 0;
}

/* The requested variables' indices among the output's (all of them for NULL). */
static int resolve(const ramses_info *info, const char *const *wanted, int n_wanted, phew_amr_set *set, int **indices,
                   read_error *e)
{
  char(*names)[64] = malloc(MAX_VARIABLES * sizeof *names);
  int n_names = 0;
  if (!names)
    return read_fail_memory(e, "the variables' names", MAX_VARIABLES * 64.0);
  const int status = ramses_hydro_names(info, names, MAX_VARIABLES, &n_names, e) == 0
                         ? pick(info, wanted, n_wanted, names, n_names, set, indices, e)
                         : -1;
  free(names);
  return status;
}

static int compare_pieces(const void *a, const void *b)
{
  const amr_piece *x = a, *y = b;
  if (x->level != y->level)
    return x->level < y->level ? -1 : 1;
  if (x->cpu != y->cpu)
    return x->cpu < y->cpu ? -1 : 1;
  return x->sequence < y->sequence ? -1 : x->sequence > y->sequence;
}

static int64_t cells_of(const amr_piece *p)
{
  return (p->hi[0] - p->lo[0] + 1) * (p->hi[1] - p->lo[1] + 1) * (p->hi[2] - p->lo[2] + 1);
}

/* Every rank's boxes in one order; this rank's values put at its boxes. */
static int assemble(phew_context *context, const ramses_info *info, amr_share *share, phew_amr_set *set, read_error *e)
{
  amr_piece *all = NULL;
  int64_t n = 0;
  int rank, size;
  phew_context_ranks(context, &rank, &size);
  if (phew_gather_all(context, share->pieces, share->n, sizeof *share->pieces, (void **)&all, &n, NULL) != PHEW_OK)
    return read_fail(e, PHEW_ERROR_MEMORY, "%s", context->message);
  qsort(all, (size_t)n, sizeof *all, compare_pieces);
  /* this rank's boxes in the same order */
  int64_t *mine = malloc((size_t)(share->n > 0 ? share->n : 1) * sizeof *mine);
  int32_t n_levels = 0;
  for (int64_t k = 0; k < n; ++k)
    n_levels = all[k].level + 1 > n_levels ? all[k].level + 1 : n_levels;
  phew_amr_level *levels = calloc((size_t)(n_levels > 0 ? n_levels : 1), sizeof *levels);
  phew_amr_box *boxes = calloc((size_t)(n > 0 ? n : 1), sizeof *boxes);
  set->box_rank = calloc((size_t)(n > 0 ? n : 1), sizeof *set->box_rank);
  set->values = calloc((size_t)(n > 0 ? n : 1), sizeof *set->values);
  if (!mine || !levels || !boxes || !set->box_rank || !set->values) {
    free(all), free(mine), free(levels), free(boxes);
    return read_fail_memory(e, "the AMR hierarchy", (double)n * sizeof *boxes);
  }
  for (int64_t k = 0; k < share->n; ++k) /* the pieces carry their index in the share */
    share->pieces[k].sequence_in_share = k;
  if (share->n > 0) /* a rank without CPU files has no list at all */
    qsort(share->pieces, (size_t)share->n, sizeof *share->pieces, compare_pieces);
  for (int64_t k = 0; k < share->n; ++k)
    mine[k] = share->pieces[k].sequence_in_share;
  int64_t next = 0, cells = 0, covered = 0;
  for (int64_t k = 0; k < n; ++k) {
    boxes[k].level = all[k].level;
    boxes[k].held = all[k].rank == rank;
    memcpy(boxes[k].lo, all[k].lo, sizeof boxes[k].lo);
    memcpy(boxes[k].hi, all[k].hi, sizeof boxes[k].hi);
    set->box_rank[k] = all[k].rank;
    if (boxes[k].held) { /* the values move from the share to the set */
      set->values[k] = share->values[mine[next]];
      share->values[mine[next++]] = NULL;
    }
    cells += cells_of(&all[k]);
    covered += all[k].level > 0 ? cells_of(&all[k]) / 8 : 0;
  }
  for (int32_t l = 0; l < n_levels; ++l) {
    const double spacing = info->boxlen / ldexp(1.0, info->levelmin + l);
    levels[l].spacing[0] = levels[l].spacing[1] = levels[l].spacing[2] = spacing;
    levels[l].refinement = 2;
  }
  set->hierarchy.n_levels = n_levels;
  set->hierarchy.levels = levels;
  set->hierarchy.n_boxes = n;
  set->hierarchy.boxes = boxes;
  set->n_leaf_cells = cells - covered;
  free(all);
  free(mine);
  return 0;
}

/* Lengths in astronomers' units: the levels' spacings and the box. */
static void amr_to_astro(phew_amr_set *set, read_error *e)
{
  double length, mass, velocity;
  if (astro_factors(&set->info, &length, &mass, &velocity, e) != 0)
    return;
  phew_amr_level *levels = (phew_amr_level *)set->hierarchy.levels;
  for (int32_t l = 0; l < set->hierarchy.n_levels; ++l)
    for (int d = 0; d < 3; ++d)
      levels[l].spacing[d] *= length;
  info_to_astro(&set->info, length, mass, velocity);
}

phew_status phew_read_amr(phew_context *context, const char *path, const phew_read_options *options,
                          const char *const *variables, int n_variables, phew_amr_set *set)
{
  if (!context || !options || !set || n_variables < 0)
    return refuse_null_arguments(context, "phew_read_amr: the context, options and set must not be NULL, "
                                          "n_variables not negative");
  memset(set, 0, sizeof *set);
  read_error e;
  read_error_init(&e);
  int rank, size;
  if (phew_context_ranks(context, &rank, &size) != PHEW_OK)
    return PHEW_ERROR_MPI;
  ramses_info info;
  phew_snapshot_format format;
  int *indices = NULL;
  if (detect_format(path, options->format, &format, &e) == 0 && format != PHEW_FORMAT_RAMSES)
    read_fail(&e, PHEW_ERROR_ARGUMENT, "%s is a %s snapshot: only RAMSES outputs have an AMR mesh", path,
              phew_snapshot_format_name(format));
  if (e.status == PHEW_OK && ramses_locate(path, &info, &e) == 0 && ramses_read_info(&info, &e) == 0) {
    ramses_snapshot_info(&info, &set->info);
    resolve(&info, variables, n_variables, set, &indices, &e);
  }
  amr_share share;
  memset(&share, 0, sizeof share);
  if (agree_on_error(context, &e) == PHEW_OK)
    ramses_read_amr(&info, indices, set->n_variables, rank, size, &share, &e);
  if (agree_on_error(context, &e) == PHEW_OK && assemble(context, &info, &share, set, &e) == 0 &&
      options->units == PHEW_UNITS_ASTRO)
    amr_to_astro(set, &e);
  amr_share_free(&share);
  free(indices);
  const phew_status s = agree_on_error(context, &e);
  if (s != PHEW_OK)
    phew_amr_set_free(set);
  return s;
}

void phew_amr_set_free(phew_amr_set *set)
{
  if (!set)
    return;
  for (int64_t k = 0; set->values && k < set->hierarchy.n_boxes; ++k)
    free(set->values[k]);
  free(set->values);
  free(set->box_rank);
  free(set->variable_names);
  free((void *)set->hierarchy.levels);
  free((void *)set->hierarchy.boxes);
  memset(set, 0, sizeof *set);
}
