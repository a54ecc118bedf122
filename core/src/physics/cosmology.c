/* Units and flat LCDM cosmology for the physics of structures (physics.h). */
#include "physics.h"

#include <math.h>
#include <string.h>

void phew_physics_params_init(phew_physics_params *params)
{
  memset(params, 0, sizeof *params);
  params->unbind = 1;
  params->potential = PHEW_POTENTIAL_EXACT;
  params->softening = -1.0;
  params->opening_angle = 0.5;
  params->direct_max = 1000;
  params->tolerance = 0.01;
  params->max_iterations = 100;
  params->gravitational_constant = 1.0;
  params->cosmology.comoving = 0;
  params->cosmology.hubble = NAN;
  params->cosmology.omega_m = NAN;
  params->cosmology.omega_lambda = NAN;
  params->cosmology.scale_factor = 1.0;
  params->unbind_top = 1;
  params->n_mass_bins = 50;
  params->log_bins = 1;
  params->profile_r_min = -1.0;
  params->saddle_cut = 0;
  params->n_most_bound = 200;
  params->gather_max = 0;
}

static phew_status check_cosmology(const phew_cosmology *c, call_result *result)
{
  if (!(c->hubble > 0.0 && c->hubble < 100.0))
    return phew_fail(result, PHEW_ERROR_ARGUMENT, "the Hubble parameter h must be in (0, 100) (got %g)", c->hubble);
  if (!(c->omega_m > 0.0 && c->omega_m <= 1.0 && c->omega_lambda >= 0.0 && c->omega_lambda < 1.0))
    return phew_fail(result, PHEW_ERROR_ARGUMENT,
                     "Omega_m must be in (0, 1] and Omega_Lambda in [0, 1) (got %g and %g)", c->omega_m,
                     c->omega_lambda);
  /* files store the Omegas in single precision: 0.3f + 0.7f is 1 - 1e-8 */
  if (fabs(c->omega_m + c->omega_lambda - 1.0) > 1e-4)
    return phew_fail(result, PHEW_ERROR_ARGUMENT,
                     "the cosmology must be flat LCDM: Omega_m + Omega_Lambda = %g, not 1 (to 1e-4)",
                     c->omega_m + c->omega_lambda);
  if (!(c->scale_factor > 0.0 && c->scale_factor <= 1e3))
    return phew_fail(result, PHEW_ERROR_ARGUMENT, "the scale factor must be in (0, 1000] (got %g)", c->scale_factor);
  return PHEW_OK;
}

phew_status physics_units_make(physics_units *u, const phew_physics_params *p, call_result *result)
{
  memset(u, 0, sizeof *u);
  u->rho_crit = u->omega_m_a = u->delta_vir = NAN;
  if (!p->cosmology.comoving) {
    if (!(p->gravitational_constant > 0.0 && isfinite(p->gravitational_constant)))
      return phew_fail(result, PHEW_ERROR_ARGUMENT, "the gravitational constant must be positive and finite (got %g)",
                       p->gravitational_constant);
    u->G = p->gravitational_constant;
    u->a = 1.0;
    return PHEW_OK;
  }
  const phew_cosmology *c = &p->cosmology;
  phew_status status = check_cosmology(c, result);
  if (status != PHEW_OK)
    return status;
  const double a = c->scale_factor;
  const double e2 = c->omega_m / (a * a * a) + c->omega_lambda; /* (H(a) / H0)^2 */
  u->G = PHYSICS_G_ASTRO;
  u->a = a;
  u->comoving = 1;
  /* rho_crit(a) = 3 H(a)^2 / (8 pi G) in Msun/h / (Mpc/h)^3 (H in 100 km/s/Mpc units of h),
   * times a^3: a density in comoving units, to compare with comoving volumes */
  u->rho_crit = 3.0 * 1e4 * e2 / (8.0 * M_PI * PHYSICS_G_ASTRO) * (a * a * a);
  u->omega_m_a = c->omega_m / (a * a * a) / e2;
  const double xx = u->omega_m_a - 1.0;
  u->delta_vir = 18.0 * M_PI * M_PI + 82.0 * xx - 39.0 * xx * xx;
  return PHEW_OK;
}
