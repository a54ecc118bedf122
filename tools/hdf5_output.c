/* The run's catalogue as HDF5 (hdf5_output.h). */
#include "hdf5_output.h"
#include "cli_errors.h"
#include "outputs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The units a column is in, from its name and the run's units of length, mass, velocity. */
typedef struct run_units {
  char length[64], mass[64], velocity[64], density[160], potential[80], angular[200], volume[80];
} run_units;

static int named(const char *name, const char *const *list)
{
  for (; *list; ++list)
    if (!strncmp(name, *list, strlen(*list)))
      return 1;
  return 0;
}

static const char *unit_of(const char *column, const void *data)
{
  const run_units *u = data;
  static const char *const lengths[] = {"Center",       "BoundCenterOfMass",
                                        "CenterOfMass", "PeakX",
                                        "PeakY",        "PeakZ",
                                        "R200",         "R500",
                                        "Rvir",         "Rmax",
                                        "Radius",       NULL};
  static const char *const masses[] = {"Mass", "MemberMass", "BoundMass", "M200", "M500", "Mvir", NULL};
  static const char *const velocities[] = {
      "MeanVelocity", "BulkVelocity", "VelocityDispersion", "BoundVelocityDispersion", "Vmax", NULL};
  static const char *const densities[] = {"PeakDensity",      "MinDensity",    "MeanDensity",
                                          "KeySaddleDensity", "SaddleDensity", NULL};
  if (!strcmp(column, "CenterId") || !strcmp(column, "CenterPotential"))
    return !strcmp(column, "CenterId") ? "" : u->potential;
  if (named(column, lengths))
    return u->length;
  if (named(column, masses))
    return u->mass;
  if (named(column, velocities))
    return u->velocity;
  if (named(column, densities))
    return u->density;
  if (!strncmp(column, "AngularMomentum", 15))
    return u->angular;
  if (!strcmp(column, "Volume"))
    return u->volume;
  return ""; /* ids, counts, ratios, spins */
}

static void units_of_run(const options *o, const phew_snapshot_info *info, run_units *u)
{
  const char *length = "as given", *mass = "as given", *velocity = "as given";
  if (o->cosmology_given) {
    length = "Mpc/h (comoving)";
    mass = "Msun/h";
    velocity = "km/s";
  } else if (info) {
    length = info->length_unit;
    mass = info->mass_unit;
    velocity = info->velocity_unit;
  }
  snprintf(u->length, sizeof u->length, "%s", length);
  snprintf(u->mass, sizeof u->mass, "%s", mass);
  snprintf(u->velocity, sizeof u->velocity, "%s", velocity);
  snprintf(u->density, sizeof u->density, "%s",
           o->points && (o->finder == FINDER_HOP || !o->density) ? "the mean density" : "as given");
  snprintf(u->potential, sizeof u->potential, "(%s)^2", velocity);
  snprintf(u->angular, sizeof u->angular, "%s x %s (proper) x %s", mass, length, velocity);
  snprintf(u->volume, sizeof u->volume, "(%s)^3", length);
}

/* Rank 0: the run record's text (NULL after fail). */
static char *read_text(const char *path)
{
  FILE *f = fopen(path, "rb");
  char *text = NULL;
  long size = -1;
  if (f && fseek(f, 0, SEEK_END) == 0 && (size = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
      (text = malloc((size_t)size + 1)) != NULL && fread(text, 1, (size_t)size, f) == (size_t)size) {
    text[size] = '\0';
  } else {
    free(text);
    text = NULL;
    fail("cannot read back the run record '%s' for the HDF5 catalogue", path);
  }
  if (f)
    fclose(f);
  return text;
}

int hdf5_output_write(const procs *p, const options *o, const run_facts *f, const char *record_path)
{
  if (!o->hdf5)
    return 0;
  char *record = p->rank == 0 ? read_text(record_path) : NULL;
  if (!all_ok(p))
    return -1;
  run_units units;
  units_of_run(o, f->snapshot, &units);
  const phew_physics_result *ph = f->physics;
  int n_physics = 0;
  const phew_column *physics_columns = phew_structure_columns(&n_physics);
  const phew_hdf5_part physics_part = {physics_columns, n_physics, ph ? ph->structures : NULL, sizeof(phew_structure)};
  phew_hdf5_table tables[3];
  memset(tables, 0, sizeof tables);
  int n_tables = 0;
  if (f->clumps) {
    const phew_clump_result *r = f->clumps;
    int nc, nh, nn;
    const phew_column *cc = phew_clump_columns(r->columns, &nc), *hc = phew_halo_columns(r->columns, &nh),
                      *dc = phew_node_columns(r->columns, &nn);
    tables[0] =
        (phew_hdf5_table){"Clumps", r->n_clumps, ph ? 2 : 1, {{cc, nc, r->clumps, sizeof *r->clumps}, physics_part}};
    tables[1] = (phew_hdf5_table){"Haloes", r->n_haloes, 1, {{hc, nh, r->haloes, sizeof *r->haloes}}};
    tables[2] = (phew_hdf5_table){"Dendrogram", r->n_nodes, 1, {{dc, nn, r->nodes, sizeof *r->nodes}}};
    n_tables = 3;
  } else if (f->groups) {
    const phew_group_result *r = f->groups;
    int n;
    const phew_column *gc = phew_group_columns(r->columns, &n);
    tables[0] =
        (phew_hdf5_table){"Groups", r->n_groups, ph ? 2 : 1, {{gc, n, r->groups, sizeof *r->groups}, physics_part}};
    n_tables = 1;
  } else if (ph) {
    tables[0] = (phew_hdf5_table){"Structures", ph->n_structures, 1, {physics_part}};
    n_tables = 1;
  }
  phew_hdf5_catalogue c;
  memset(&c, 0, sizeof c);
  c.n_tables = n_tables;
  c.tables = tables;
  c.unit_of = unit_of;
  c.unit_data = &units;
  c.record = record;
  c.version = "phew " PHEW_VERSION;
  if (ph) {
    c.members_table = tables[0].name;
    c.n_bound = ph->n_bound_ids;
    c.bound_first = ph->bound_ids_first;
    c.n_bound_total = ph->n_bound_ids_total;
    c.bound_ids = ph->bound_ids;
    c.n_unbound = ph->n_unbound_ids;
    c.unbound_first = ph->unbound_ids_first;
    c.n_unbound_total = ph->n_unbound_ids_total;
    c.unbound_ids = ph->unbound_ids;
    c.most_bound = p->rank == 0 ? &ph->most_bound : NULL;
  }
  phew_context context = procs_context(p, 1);
  if (phew_write_catalogue_hdf5(&context, outputs_temporary(OUTPUT_HDF5), &c) != PHEW_OK)
    fail("--hdf5: %s", context.message); /* the same on every rank */
  free(record);
  return all_ok(p) ? 0 : -1;
}
