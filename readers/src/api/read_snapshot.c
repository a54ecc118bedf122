/* phew_read_snapshot_info and phew_read_particles: the format, its reader on each rank's
 * share, then what the ranks agree on (failures, counts, the sets' shape) and the units. */
#include "api.h"
#include "gadget.h"
#include "particle_arrays.h"
#include "ramses.h"
#include "shares.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void phew_read_options_init(phew_read_options *options)
{
  memset(options, 0, sizeof *options);
  options->format = PHEW_FORMAT_AUTO;
  options->units = PHEW_UNITS_CODE;
  options->particle_type = 1;
  options->family = NULL;
}

/* The metadata of the snapshot at path (every rank reads the small header itself). */
static int read_info(const char *path, const phew_read_options *options, phew_snapshot_format *format,
                     ramses_info *ramses, gadget_snapshot *gadget, phew_snapshot_info *info, read_error *e)
{
  if (detect_format(path, options->format, format, e) != 0)
    return -1;
  if (*format == PHEW_FORMAT_RAMSES) {
    if (ramses_locate(path, ramses, e) != 0 || ramses_read_info(ramses, e) != 0)
      return -1;
    ramses_snapshot_info(ramses, info);
  } else {
    if (gadget_open_snapshot(path, gadget, e) != 0)
      return -1;
    gadget_snapshot_info(gadget, info);
  }
  return 0;
}

phew_status phew_read_snapshot_info(phew_context *context, const char *path, const phew_read_options *options,
                                    phew_snapshot_info *info)
{
  if (!context || !options || !info)
    return refuse_null_arguments(context, "phew_read_snapshot_info: the context, options and info must not be NULL");
  memset(info, 0, sizeof *info);
  read_error e;
  read_error_init(&e);
  phew_snapshot_format format;
  ramses_info ramses;
  gadget_snapshot gadget;
  double length, mass, velocity;
  if (read_info(path, options, &format, &ramses, &gadget, info, &e) == 0 && options->units == PHEW_UNITS_ASTRO &&
      astro_factors(info, &length, &mass, &velocity, &e) == 0)
    info_to_astro(info, length, mass, velocity);
  const phew_status s = agree_on_error(context, &e);
  if (s != PHEW_OK)
    memset(info, 0, sizeof *info);
  return s;
}

/* GADGET: rank 0 reads every file's count of the type, and every rank gets them. */
static int share_counts(phew_context *context, const gadget_snapshot *g, int type, int rank, int64_t **counts,
                        read_error *e)
{
  int64_t *mine = NULL, n_mine = 0, n_all = 0;
  if (rank == 0) {
    mine = malloc((size_t)g->n_files * sizeof *mine);
    if (!mine)
      read_fail_memory(e, "the files' particle counts", (double)g->n_files * 8.0);
    else if (gadget_count_particles(g, type, mine, e) == 0)
      n_mine = g->n_files;
  }
  if (agree_on_error(context, e) == PHEW_OK &&
      phew_gather_all(context, mine, n_mine, sizeof *mine, (void **)counts, &n_all, NULL) != PHEW_OK)
    read_fail(e, PHEW_ERROR_MEMORY, "%s", context->message);
  free(mine);
  return e->status == PHEW_OK ? 0 : -1;
}

static void read_gadget(phew_context *context, const gadget_snapshot *g, const phew_read_options *options, int rank,
                        int size, phew_particle_set *set, read_error *e)
{
  if (options->particle_type < 0 || options->particle_type >= g->n_types)
    read_fail(e, PHEW_ERROR_ARGUMENT, "particle type %d does not exist in %s: its types are 0 to %d",
              options->particle_type, g->stem, g->n_types - 1);
  int64_t *counts = NULL;
  if (agree_on_error(context, e) != PHEW_OK || share_counts(context, g, options->particle_type, rank, &counts, e) != 0)
    return;
  int64_t total = 0, first, n;
  for (int k = 0; k < g->n_files; ++k)
    total += counts[k];
  share_of(total, rank, size, &first, &n);
  gadget_read_particles(g, options, counts, first, n, set, e);
  free(counts);
}

/* A coordinate x of a periodic axis [lo, lo + size) wrapped into it; NaN and infinities are
 * left for the finders to report. */
static double wrapped(double x, double lo, double size)
{
  if (!isfinite(x))
    return x;
  double w = lo + fmod(x - lo, size);
  if (w < lo)
    w += size; /* may round up to lo + size: then lo */
  return w < lo + size ? w : lo;
}

/* Positions of periodic axes that rounding (or the writing code) left on or past the box's
 * far side, wrapped into [origin, origin + size): one pass over the rows, most of which are
 * inside already. */
static void wrap_positions(phew_particle_set *set)
{
  int wraps[3];
  double lo[3], hi[3], size[3];
  for (int d = 0; d < 3; ++d) {
    wraps[d] = set->info.periodic[d] && set->info.box_size[d] > 0.0;
    size[d] = set->info.box_size[d];
    lo[d] = set->info.box_origin[d];
    hi[d] = lo[d] + size[d];
  }
  if (set->type == PHEW_FLOAT32) {
    float *x = set->position;
    for (int64_t i = 0; i < 3 * set->n; ++i) {
      const int d = (int)(i % 3);
      if (wraps[d] && !(x[i] >= lo[d] && x[i] < hi[d]) && isfinite(x[i])) {
        const float w = (float)wrapped(x[i], lo[d], size[d]);
        x[i] = w < (float)hi[d] ? w : (float)lo[d];
      }
    }
  } else {
    double *x = set->position;
    for (int64_t i = 0; i < 3 * set->n; ++i) {
      const int d = (int)(i % 3);
      if (wraps[d] && !(x[i] >= lo[d] && x[i] < hi[d]))
        x[i] = wrapped(x[i], lo[d], size[d]);
    }
  }
}

static void to_astro(phew_particle_set *set, read_error *e)
{
  double length, mass, velocity;
  if (astro_factors(&set->info, &length, &mass, &velocity, e) != 0)
    return;
  scale_values(set->position, 3 * set->n, set->type, length);
  scale_values(set->mass, set->n, set->type, mass);
  if (set->velocity)
    scale_values(set->velocity, 3 * set->n, set->type, velocity);
  info_to_astro(&set->info, length, mass, velocity);
}

phew_status phew_read_particles(phew_context *context, const char *path, const phew_read_options *options,
                                phew_particle_set *set)
{
  if (!context || !options || !set)
    return refuse_null_arguments(context, "phew_read_particles: the context, options and set must not be NULL");
  memset(set, 0, sizeof *set);
  read_error e;
  read_error_init(&e);
  int rank, size;
  if (phew_context_ranks(context, &rank, &size) != PHEW_OK)
    return PHEW_ERROR_MPI;
  phew_snapshot_format format;
  ramses_info ramses;
  gadget_snapshot gadget;
  phew_snapshot_info info;
  read_info(path, options, &format, &ramses, &gadget, &info, &e);
  if (agree_on_error(context, &e) == PHEW_OK) {
    if (format == PHEW_FORMAT_RAMSES)
      ramses_read_particles(&ramses, options, rank, size, set, &e);
    else
      read_gadget(context, &gadget, options, rank, size, set, &e);
  }
  if (agree_on_error(context, &e) == PHEW_OK && agree_on_shape(context, set, &e) == PHEW_OK) {
    set->info = info;
    if (options->units == PHEW_UNITS_ASTRO)
      to_astro(set, &e);
    wrap_positions(set);
  }
  const phew_status s = agree_on_error(context, &e);
  if (s != PHEW_OK)
    phew_particle_set_free(set);
  return s;
}
