/* Astronomers' units: comoving Mpc/h, Msun/h, peculiar km/s (phew_readers.h). */
#include "api.h"
#include "units.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

int astro_factors(const phew_snapshot_info *info, double *length, double *mass, double *velocity, read_error *e)
{
  if (!info->cosmological)
    return read_fail(e, PHEW_ERROR_ARGUMENT,
                     "%s is not a cosmological snapshot: astronomers' units (comoving Mpc/h, Msun/h) need a scale "
                     "factor and h; read it in code units",
                     info->path);
  const double h = info->hubble, a = info->scale_factor;
  if (info->format == PHEW_FORMAT_RAMSES) { /* unit_l is proper at a */
    *length = info->code_length_cm / a / CM_PER_MPC * h;
    *mass = info->code_mass_g / G_PER_MSUN * h;
    *velocity = info->code_velocity_cm_s / CM_PER_S_PER_KM_PER_S;
  } else if (strcmp(info->code, "SWIFT") == 0) { /* comoving, no h; peculiar velocities */
    *length = info->code_length_cm / CM_PER_MPC * h;
    *mass = info->code_mass_g / G_PER_MSUN * h;
    *velocity = info->code_velocity_cm_s / CM_PER_S_PER_KM_PER_S;
  } else { /* GADGET: comoving with h^-1 already; u = v_peculiar / sqrt(a) */
    *length = info->code_length_cm / CM_PER_MPC;
    *mass = info->code_mass_g / G_PER_MSUN;
    *velocity = info->code_velocity_cm_s / CM_PER_S_PER_KM_PER_S * sqrt(a);
  }
  if (!(*length > 0.0 && isfinite(*length) && *mass > 0.0 && isfinite(*mass) && *velocity > 0.0 && isfinite(*velocity)))
    return read_fail(e, PHEW_ERROR_DATA,
                     "%s: its units (length %g cm, mass %g g, velocity %g cm/s, h %g, a %g) give "
                     "no usable conversion to astronomers' units",
                     info->path, info->code_length_cm, info->code_mass_g, info->code_velocity_cm_s, h, a);
  return 0;
}

void info_to_astro(phew_snapshot_info *info, double length, double mass, double velocity)
{
  (void)mass;
  (void)velocity;
  for (int d = 0; d < 3; ++d) {
    info->box_origin[d] *= length;
    info->box_size[d] *= length;
  }
  info->units = PHEW_UNITS_ASTRO;
  snprintf(info->length_unit, sizeof info->length_unit, "Mpc/h");
  snprintf(info->mass_unit, sizeof info->mass_unit, "Msun/h");
  snprintf(info->velocity_unit, sizeof info->velocity_unit, "km/s");
}
