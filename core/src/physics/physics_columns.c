/* The physics catalogue's columns (phew_structure): names shared by the CLI, the HDF5
 * catalogue and the plugin. */
#include "physics.h"

#include <stddef.h>

/* clang-format off */
#define I64(name, field) {name, PHEW_COLUMN_INT64, offsetof(phew_structure, field)}
#define I32(name, field) {name, PHEW_COLUMN_INT32, offsetof(phew_structure, field)}
#define DBL(name, field) {name, PHEW_COLUMN_DOUBLE, offsetof(phew_structure, field)}
#define XYZ(name, field) DBL(name "X", field[0]), DBL(name "Y", field[1]), DBL(name "Z", field[2])

static const phew_column structure_columns[] = {
  I64("StructureId", id), I64("ParentId", parent_id), I32("Height", height), I32("Iterations", iterations),
  I64("MassRank", mass_rank), I64("NumberOfMembers", n_members), I64("NumberOfBoundParticles", n_bound),
  I64("NumberOfBoundParticlesInclusive", n_bound_inclusive), DBL("MemberMass", member_mass),
  DBL("BoundMass", bound_mass), DBL("BoundMassInclusive", bound_mass_inclusive),
  DBL("BoundFraction", bound_fraction), I64("CenterId", centre_id), XYZ("Center", centre),
  DBL("CenterPotential", centre_potential), XYZ("BoundCenterOfMass", center_of_mass),
  XYZ("BulkVelocity", bulk_velocity), DBL("BoundVelocityDispersion", velocity_dispersion),
  DBL("M200c", m200c), DBL("R200c", r200c), DBL("M500c", m500c), DBL("R500c", r500c), DBL("M200m", m200m),
  DBL("R200m", r200m), DBL("Mvir", mvir), DBL("Rvir", rvir), DBL("Vmax", vmax), DBL("Rmax", rmax),
  XYZ("AngularMomentum", angular_momentum), DBL("SpinPeebles", spin_peebles), DBL("SpinBullock", spin_bullock),
  DBL("AxisRatioBA", axis_ratio_ba), DBL("AxisRatioCA", axis_ratio_ca), XYZ("MajorAxis", major_axis),
  DBL("C200c", c200c), I64("NumberOfUnboundParticles", n_unbound), I64("BoundOffset", bound_offset),
  I64("UnboundOffset", unbound_offset)};
/* clang-format on */

const phew_column *phew_structure_columns(int *count)
{
  if (count)
    *count = (int)(sizeof structure_columns / sizeof structure_columns[0]);
  return structure_columns;
}
