/* phew_points_box_from_bounds: the particles' box from the bounds of their positions on every
 * rank, for inputs that come without one (the plugin's Box From Data Bounds, `phew --box
 * auto`). */
#include "particles.h"

#include <math.h>
#include <string.h>

/* Along each axis, the lowest and highest finite coordinate of this rank's particles
 * (+infinity and -infinity when it has none). A NaN or infinite coordinate is left out: the
 * finder then names its particle. */
static void local_bounds(const phew_points *p, double lo[3], double hi[3])
{
  for (int d = 0; d < 3; ++d) {
    lo[d] = INFINITY;
    hi[d] = -INFINITY;
  }
  for (int64_t i = 0; i < p->n; ++i)
    for (int d = 0; d < 3; ++d) {
      const double x = p->type == PHEW_FLOAT32 ? (double)((const float *)p->position)[3 * i + d]
                                               : ((const double *)p->position)[3 * i + d];
      if (!isfinite(x))
        continue;
      lo[d] = x < lo[d] ? x : lo[d];
      hi[d] = x > hi[d] ? x : hi[d];
    }
}

/* The smallest size whose box, in floating point, still reaches the highest coordinate
 * (origin + size >= hi): hi - lo may round down. */
static double size_reaching(double lo, double hi)
{
  double size = hi - lo;
  while (lo + size < hi)
    size = nextafter(size, INFINITY);
  return size;
}

static phew_status box_from_bounds(const phew_context *context, phew_points *p, call_result *result)
{
  comm c;
  phew_status s = comm_init(&c, context, result);
  if (s != PHEW_OK)
    return s;
  if (p->type != PHEW_FLOAT32 && p->type != PHEW_FLOAT64)
    s = phew_fail(result, PHEW_ERROR_ARGUMENT, "unknown position type %d", (int)p->type);
  else if (p->n < 0 || (p->n > 0 && !p->position))
    s = phew_fail(result, PHEW_ERROR_ARGUMENT, "the particle count must be >= 0 and the positions not NULL");
  for (int d = 0; d < 3 && s == PHEW_OK; ++d)
    if (p->periodic[d])
      s = phew_fail(result, PHEW_ERROR_ARGUMENT,
                    "periodic axes need the periodic box: the bounds of the particles are not a period "
                    "(the last particle would lie on the box's upper face)");
  s = comm_agree(&c, s, result);
  if (s != PHEW_OK)
    return s;
  double lo[3], hi[3];
  local_bounds(p, lo, hi);
  for (int d = 0; d < 3; ++d) { /* min over ranks as minus the max of minus: exact */
    lo[d] = -comm_max_double(&c, -lo[d]);
    hi[d] = comm_max_double(&c, hi[d]);
  }
  static const char axis[] = "xyz";
  for (int d = 0; d < 3; ++d)
    if (isfinite(lo[d]) && !(hi[d] > lo[d])) /* the same on every rank: no agreement needed */
      return phew_fail(result, PHEW_ERROR_ARGUMENT,
                       "all particles have the same %c (%g), so their bounds have no volume", axis[d], lo[d]);
  for (int d = 0; d < 3; ++d)
    if (!isfinite(lo[d])) /* no finite coordinate along an axis: the finder reports the particles */
      return PHEW_OK;
  p->has_box = 1;
  for (int d = 0; d < 3; ++d) {
    p->box_origin[d] = lo[d];
    p->box_size[d] = size_reaching(lo[d], hi[d]);
  }
  return PHEW_OK;
}

phew_status phew_points_box_from_bounds(phew_context *context, phew_points *points)
{
  if (!context || !points)
    return call_refused(context, "phew_points_box_from_bounds");
  call_result r;
  call_result_start(&r);
  const phew_status s = box_from_bounds(context, points, &r);
  call_result_report(&r, s, context);
  return s;
}
