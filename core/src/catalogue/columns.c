/* The catalogue's column names and layout: the one list the CLI and the plugin both use. */
#include "catalogue.h"

#include <stddef.h>

/* clang-format off */
#define I64(name, type, field) {name, PHEW_COLUMN_INT64, offsetof(type, field)}
#define I32(name, type, field) {name, PHEW_COLUMN_INT32, offsetof(type, field)}
#define DBL(name, type, field) {name, PHEW_COLUMN_DOUBLE, offsetof(type, field)}
/* clang-format on */

/* The columns every catalogue has; COUNT names the member count (cells or particles). */
#define CLUMP_HEAD(COUNT)                                                                                        \
  I64("ClumpId", phew_object, id), I64("HaloId", phew_object, halo_id), I64("ParentId", phew_object, parent_id), \
      I32("Level", phew_object, level), I64("PeakId", phew_object, peak_id), I64(COUNT, phew_object, n_cells)
#define HALO_HEAD(COUNT)                                                                                          \
  I64("HaloId", phew_object, id), I64("NumberOfClumps", phew_object, n_clumps), I32("Level", phew_object, level), \
      I64("PeakId", phew_object, peak_id), I64(COUNT, phew_object, n_cells)
#define OBJECT_BODY                                                                                                  \
  DBL("Volume", phew_object, volume), DBL("Mass", phew_object, mass), DBL("PeakDensity", phew_object, peak_density), \
      DBL("PeakX", phew_object, peak_position[0]), DBL("PeakY", phew_object, peak_position[1]),                      \
      DBL("PeakZ", phew_object, peak_position[2]), DBL("CenterOfMassX", phew_object, center_of_mass[0]),             \
      DBL("CenterOfMassY", phew_object, center_of_mass[1]), DBL("CenterOfMassZ", phew_object, center_of_mass[2]),    \
      DBL("MinDensity", phew_object, min_density), DBL("MeanDensity", phew_object, mean_density),                    \
      DBL("KeySaddleDensity", phew_object, key_saddle_density), DBL("Relevance", phew_object, relevance)
#define PARTICLE_TAIL DBL("Radius", phew_object, radius)
#define VELOCITY_TAIL                                                                                       \
  DBL("MeanVelocityX", phew_object, mean_velocity[0]), DBL("MeanVelocityY", phew_object, mean_velocity[1]), \
      DBL("MeanVelocityZ", phew_object, mean_velocity[2]), DBL("VelocityDispersion", phew_object, velocity_dispersion)
#define NODE_COLUMNS(COUNT)                                                                                      \
  I64("NodeId", phew_node, id), I64("ParentId", phew_node, parent_id), I32("Level", phew_node, level),           \
      I64("ClumpId", phew_node, clump_id), I64("HaloId", phew_node, halo_id), I64("PeakId", phew_node, peak_id), \
      DBL("PeakDensity", phew_node, peak_density), DBL("SaddleDensity", phew_node, saddle_density),              \
      I64(COUNT, phew_node, n_cells), DBL("Mass", phew_node, mass)

static const phew_column clump_columns[] = {CLUMP_HEAD("NumberOfCells"), OBJECT_BODY};
static const phew_column clump_columns_particles[] = {CLUMP_HEAD("NumberOfParticles"), OBJECT_BODY, PARTICLE_TAIL};
static const phew_column clump_columns_velocity[] = {CLUMP_HEAD("NumberOfParticles"), OBJECT_BODY, PARTICLE_TAIL,
                                                     VELOCITY_TAIL};
static const phew_column halo_columns[] = {HALO_HEAD("NumberOfCells"), OBJECT_BODY};
static const phew_column halo_columns_particles[] = {HALO_HEAD("NumberOfParticles"), OBJECT_BODY, PARTICLE_TAIL};
static const phew_column halo_columns_velocity[] = {HALO_HEAD("NumberOfParticles"), OBJECT_BODY, PARTICLE_TAIL,
                                                    VELOCITY_TAIL};
static const phew_column node_columns[] = {NODE_COLUMNS("NumberOfCells")};
static const phew_column node_columns_particles[] = {NODE_COLUMNS("NumberOfParticles")};

#define GROUP_HEAD                                                                                                  \
  I64("GroupId", phew_group, id), I64("NumberOfParticles", phew_group, n_particles), DBL("Mass", phew_group, mass), \
      DBL("CenterOfMassX", phew_group, center_of_mass[0]), DBL("CenterOfMassY", phew_group, center_of_mass[1]),     \
      DBL("CenterOfMassZ", phew_group, center_of_mass[2]), DBL("Radius", phew_group, radius),                       \
      I64("MinParticleId", phew_group, min_particle_id)
#define GROUP_VELOCITY                                                                                    \
  DBL("MeanVelocityX", phew_group, mean_velocity[0]), DBL("MeanVelocityY", phew_group, mean_velocity[1]), \
      DBL("MeanVelocityZ", phew_group, mean_velocity[2]), DBL("VelocityDispersion", phew_group, velocity_dispersion)
#define GROUP_PEAK                                                                            \
  I64("PeakId", phew_group, peak_id), DBL("PeakDensity", phew_group, peak_density),           \
      DBL("PeakX", phew_group, peak_position[0]), DBL("PeakY", phew_group, peak_position[1]), \
      DBL("PeakZ", phew_group, peak_position[2])

static const phew_column group_columns[] = {GROUP_HEAD};
static const phew_column group_columns_velocity[] = {GROUP_HEAD, GROUP_VELOCITY};
static const phew_column group_columns_peak[] = {GROUP_HEAD, GROUP_PEAK};
static const phew_column group_columns_peak_velocity[] = {GROUP_HEAD, GROUP_PEAK, GROUP_VELOCITY};

#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))
#define PICK(a)        \
  do {                 \
    *count = COUNT(a); \
    return a;          \
  } while (0)

const phew_column *phew_clump_columns(int columns, int *count)
{
  if (columns & PHEW_COLUMNS_VELOCITY)
    PICK(clump_columns_velocity);
  if (columns & PHEW_COLUMNS_PARTICLES)
    PICK(clump_columns_particles);
  PICK(clump_columns);
}

const phew_column *phew_halo_columns(int columns, int *count)
{
  if (columns & PHEW_COLUMNS_VELOCITY)
    PICK(halo_columns_velocity);
  if (columns & PHEW_COLUMNS_PARTICLES)
    PICK(halo_columns_particles);
  PICK(halo_columns);
}

const phew_column *phew_node_columns(int columns, int *count)
{
  if (columns & (PHEW_COLUMNS_PARTICLES | PHEW_COLUMNS_VELOCITY))
    PICK(node_columns_particles);
  PICK(node_columns);
}

const phew_column *phew_group_columns(int columns, int *count)
{
  if ((columns & PHEW_COLUMNS_PEAK) && (columns & PHEW_COLUMNS_VELOCITY))
    PICK(group_columns_peak_velocity);
  if (columns & PHEW_COLUMNS_PEAK)
    PICK(group_columns_peak);
  if (columns & PHEW_COLUMNS_VELOCITY)
    PICK(group_columns_velocity);
  PICK(group_columns);
}

static const phew_column link_columns[] = {I64("ProgenitorId", phew_link, progenitor_id),
                                           I64("DescendantId", phew_link, descendant_id),
                                           DBL("ProgenitorMass", phew_link, progenitor_mass),
                                           DBL("DescendantMass", phew_link, descendant_mass),
                                           DBL("SharedMassEarlier", phew_link, shared_mass_earlier),
                                           DBL("SharedMassLater", phew_link, shared_mass_later),
                                           DBL("ProgenitorFraction", phew_link, progenitor_fraction),
                                           DBL("DescendantFraction", phew_link, descendant_fraction),
                                           I32("MainProgenitor", phew_link, main_progenitor),
                                           I32("MainDescendant", phew_link, main_descendant),
                                           I64("NumberOfProgenitors", phew_link, n_progenitors),
                                           I64("NumberOfDescendants", phew_link, n_descendants),
                                           I64("ProgenitorStep", phew_link, progenitor_step),
                                           I32("Kind", phew_link, kind),
                                           I32("OrphanSteps", phew_link, orphan_steps),
                                           I64("NumberOfTracers", phew_link, n_tracers),
                                           I64("SharedTracers", phew_link, shared_tracers),
                                           I32("MainProgenitorByTracers", phew_link, main_progenitor_tracers),
                                           I32("MainDescendantByTracers", phew_link, main_descendant_tracers),
                                           I64("HostId", phew_link, host_id)};

const phew_column *phew_link_columns(int *count) { PICK(link_columns); }

double phew_column_as_double(const phew_column *column, const void *row)
{
  const char *p = (const char *)row + column->offset;
  switch (column->type) {
  case PHEW_COLUMN_INT64: return (double)*(const int64_t *)p;
  case PHEW_COLUMN_INT32: return (double)*(const int32_t *)p;
  case PHEW_COLUMN_DOUBLE: return *(const double *)p;
  }
  return 0.0;
}

int64_t phew_column_as_int64(const phew_column *column, const void *row)
{
  const char *p = (const char *)row + column->offset;
  switch (column->type) {
  case PHEW_COLUMN_INT64: return *(const int64_t *)p;
  case PHEW_COLUMN_INT32: return *(const int32_t *)p;
  case PHEW_COLUMN_DOUBLE: return (int64_t) * (const double *)p;
  }
  return 0;
}
