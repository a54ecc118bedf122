#include "run_record.h"
#include "json_writer.h"

#include <math.h>
#include <stdio.h>

static const char *const finder_names[] = {"phew", "fof", "hop", "given"};

static const char *type_name(phew_scalar_type type) { return type == PHEW_FLOAT32 ? "float32" : "float64"; }

/* A threshold as given: a number, or "auto" for the automatic ones. */
static void threshold(json_writer *w, const char *key, double value)
{
  if (value < 0.0)
    json_string(w, key, "auto");
  else
    json_number(w, key, value);
}

static void snapshot_input(json_writer *w, const options *o, const phew_snapshot_info *info)
{
  json_string(w, "snapshot", o->snapshot);
  json_string(w, "read", info->path);
  json_string(w, "format", phew_snapshot_format_name(info->format));
  json_string(w, "code", info->code);
  if (o->amr_variable)
    json_string(w, "amr_variable", o->amr_variable);
  else if (info->format == PHEW_FORMAT_RAMSES)
    json_string(w, "family", o->read.family ? o->read.family : "DM");
  else
    json_integer(w, "particle_type", o->read.particle_type);
  json_string(w, "units", info->units == PHEW_UNITS_ASTRO ? "astro" : "code");
  json_numbers(w, "box_origin", info->box_origin, 3);
  json_numbers(w, "box_size", info->box_size, 3);
  json_boolean(w, "cosmological", info->cosmological);
  json_number(w, "time", info->time);
  json_number(w, "scale_factor", info->scale_factor);
  json_number(w, "redshift", info->redshift);
  json_number(w, "hubble_param", info->hubble);
  json_number(w, "omega_matter", info->omega_matter);
  json_number(w, "omega_lambda", info->omega_lambda);
  json_number(w, "omega_baryon", info->omega_baryon);
  json_number(w, "code_length_cm", info->code_length_cm);
  json_number(w, "code_mass_g", info->code_mass_g);
  json_number(w, "code_velocity_cm_s", info->code_velocity_cm_s);
}

static void raw_input(json_writer *w, const options *o)
{
  const char *keys[] = {"grid", "positions", "masses", "velocities", "ids", "density"};
  const char *paths[] = {o->input, o->positions, o->masses, o->velocities, o->ids, o->density};
  for (int k = 0; k < 6; ++k)
    if (paths[k])
      json_string(w, keys[k], paths[k]);
  json_string(w, "type", type_name(o->type));
  if (o->input) {
    const double dims[3] = {(double)o->dims[0], (double)o->dims[1], (double)o->dims[2]};
    json_numbers(w, "dims", dims, 3);
    json_numbers(w, "origin", o->origin, 3);
    json_numbers(w, "spacing", o->spacing, 3);
    json_string(w, "labels", o->labels_int32 ? "int32" : "int64"); /* the label files' integers */
  } else if (o->box_from_bounds) {
    json_string(w, "box", "auto");
  } else {
    json_numbers(w, "box_origin", (const double[3]){0.0, 0.0, 0.0}, 3);
    json_numbers(w, "box_size", o->box, 3);
  }
}

static void input(json_writer *w, const options *o, const run_facts *f)
{
  json_open_object(w, "input");
  json_string(w, "kind", o->amr ? "amr" : o->points ? "particles" : "grid");
  if (f->snapshot)
    snapshot_input(w, o, f->snapshot);
  else
    raw_input(w, o);
  int periodic[3]; /* --periodic, or the snapshot's periodic axes */
  for (int d = 0; d < 3; ++d)
    periodic[d] = o->periodic || (f->snapshot && f->snapshot->periodic[d]);
  json_booleans(w, "periodic", periodic, 3);
  json_close(w, '}');
}

static void parameters(json_writer *w, const options *o)
{
  json_open_object(w, "parameters");
  json_string(w, "finder", finder_names[o->finder]);
  if (o->finder == FINDER_FOF) {
    json_number(w, "linking_length", o->fof.linking_length);
    json_string(w, "linking_length_is", o->fof.absolute ? "a length" : "times the mean interparticle spacing");
    json_integer(w, "min_members", o->fof.min_members);
  } else if (o->finder == FINDER_HOP) {
    json_number(w, "outer", o->hop.outer);
    json_number(w, "saddle_factor", o->hop.saddle_factor);
    json_number(w, "peak_factor", o->hop.peak_factor);
    json_integer(w, "hop_neighbours", o->hop.n_hop);
    json_integer(w, "merge_neighbours", o->hop.n_merge);
    json_integer(w, "min_members", o->hop.min_members);
  } else if (o->finder == FINDER_GIVEN) {
    json_string(w, "groups", o->groups);
    if (o->parents)
      json_string(w, "parents", o->parents);
  } else {
    threshold(w, "density_threshold", o->params.density_threshold);
    json_number(w, "relevance_threshold", o->params.relevance_threshold);
    json_boolean(w, "saddle_merging", o->params.saddle_merging);
    if (o->params.saddle_merging)
      threshold(w, "saddle_threshold", o->params.saddle_threshold);
    json_number(w, "mass_threshold", o->params.mass_threshold);
    if (o->points)
      json_integer(w, "neighbours", o->n_neighbours);
  }
  if (o->points && o->finder != FINDER_FOF && o->finder != FINDER_GIVEN && !o->density)
    json_integer(w, "density_neighbours", o->n_density_neighbours);
  json_close(w, '}');
}

/* The physics of structures' parameters as run (the softening as given: "auto" for 1/50 of the
 * mean spacing). */
static void physics_parameters(json_writer *w, const phew_physics_params *pp)
{
  json_open_object(w, "physics");
  json_boolean(w, "unbind", pp->unbind);
  json_string(w, "potential", pp->potential == PHEW_POTENTIAL_EXACT ? "exact" : "spherical");
  threshold(w, "softening", pp->softening);
  json_number(w, "opening_angle", pp->opening_angle);
  json_integer(w, "direct_max", pp->direct_max);
  json_number(w, "tolerance", pp->tolerance);
  json_integer(w, "max_iterations", pp->max_iterations);
  json_integer(w, "most_bound", pp->n_most_bound);
  if (pp->cosmology.comoving) {
    json_number(w, "hubble_param", pp->cosmology.hubble);
    json_number(w, "omega_matter", pp->cosmology.omega_m);
    json_number(w, "omega_lambda", pp->cosmology.omega_lambda);
    json_number(w, "scale_factor", pp->cosmology.scale_factor);
  } else {
    json_number(w, "gravitational_constant", pp->gravitational_constant);
  }
  json_close(w, '}');
}

/* The units of the catalogues' columns: the input's, which the record can name for a snapshot. */
static void units(json_writer *w, const options *o, const phew_snapshot_info *info)
{
  if (o->cosmology_given) { /* raw particles in the astronomers' units */
    json_open_object(w, "units");
    json_string(w, "length", "Mpc/h");
    json_string(w, "mass", "Msun/h");
    json_string(w, "velocity", "km/s");
    if (o->finder == FINDER_PHEW || o->finder == FINDER_HOP)
      json_string(w, "density", o->finder == FINDER_HOP || !o->density ? "the mean density" : "as given");
    json_boolean(w, "comoving", 1);
    json_close(w, '}');
    return;
  }
  const char *length = info ? info->length_unit : "as given";
  json_open_object(w, "units");
  json_string(w, "length", length);
  if (!o->points) { /* a grid, or AMR cells with a hydro variable as RAMSES stores it */
    json_string(w, "mass", "density x length^3");
    json_string(w, "density", o->amr ? "code (the variable as stored)" : "as given");
  } else {
    char density[128];
    const char *mass = info ? info->mass_unit : "as given";
    if (o->finder == FINDER_HOP)
      snprintf(density, sizeof density, "the mean density");
    else if (o->density)
      snprintf(density, sizeof density, "as given");
    else if (info && info->units == PHEW_UNITS_CODE)
      snprintf(density, sizeof density, "code");
    else
      snprintf(density, sizeof density, info ? "%s / (%s)^3" : "mass / length^3", mass, length);
    json_string(w, "mass", mass);
    json_string(w, "velocity", info ? info->velocity_unit : "as given");
    json_string(w, "density", density);
  }
  if (info && info->units == PHEW_UNITS_ASTRO)
    json_boolean(w, "comoving", 1);
  json_close(w, '}');
}

static void results(json_writer *w, const run_facts *f)
{
  json_open_object(w, "results");
  if (f->physics) {
    json_integer(w, "structures", f->physics->n_structures);
    json_number(w, "softening_used", f->physics->softening_used);
    json_number(w, "gravitational_constant_used", f->physics->gravitational_constant_used);
    json_integer(w, "unbinding_candidates", f->physics->n_candidates);
    json_integer(w, "unbound_particles", f->physics->n_unbound);
  }
  if (f->clumps) {
    const phew_clump_result *r = f->clumps;
    json_integer(w, f->n_boxes > 0 ? "leaf_cells" : r->columns ? "particles" : "cells", r->stats.n_cells);
    if (f->n_boxes > 0)
      json_integer(w, "boxes", f->n_boxes);
    json_number(w, "mean_density", r->mean_density);
    json_number(w, "density_threshold_used", r->density_threshold_used);
    json_number(w, "saddle_threshold_used", r->saddle_threshold_used);
    json_integer(w, "peaks", r->stats.n_peaks);
    json_integer(w, "clumps", r->n_clumps);
    json_integer(w, "haloes", r->n_haloes);
  } else if (f->groups) {
    const phew_group_result *r = f->groups;
    json_integer(w, "particles", r->stats.n_cells);
    if (isfinite(r->linking_length_used)) /* FoF only */
      json_number(w, "linking_length_used", r->linking_length_used);
    json_integer(w, "groups", r->n_groups);
  }
  json_close(w, '}');
}

int run_record_write(const char *path, const options *o, const run_facts *f)
{
  text_file out;
  const int err = text_open(&out, path);
  if (err)
    return err;
  json_writer w;
  json_begin(&w, &out);
  json_string(&w, "program", "phew " PHEW_VERSION);
  input(&w, o, f);
  parameters(&w, o);
  if (f->physics_params)
    physics_parameters(&w, f->physics_params);
  units(&w, o, f->snapshot);
  results(&w, f);
  json_end(&w);
  return text_close(&out);
}
