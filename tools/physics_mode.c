/* The physics of structures in the tool (physics_mode.h). */
#include "physics_mode.h"
#include "cli_errors.h"
#include "outputs.h"
#include "points_io.h"
#include "tables.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void physics_outcome_free(physics_outcome *out)
{
  phew_physics_result_free(&out->result);
  free(out->bound);
  out->bound = NULL;
}

/* The parameters as run: the cosmology of --cosmology, or of a snapshot read in astronomers'
 * units (its a unless --scale-factor), else none. */
static phew_physics_params resolved_params(const options *o, const phew_snapshot_info *snapshot)
{
  phew_physics_params pp = o->physics_params;
  if (!o->hdf5)
    pp.n_most_bound = 0; /* the tracers go to the HDF5 catalogue only */
  if (o->cosmology_given)
    return pp;
  if (snapshot && snapshot->units == PHEW_UNITS_ASTRO && snapshot->cosmological) {
    pp.cosmology.comoving = 1;
    pp.cosmology.hubble = snapshot->hubble;
    pp.cosmology.omega_m = snapshot->omega_matter;
    pp.cosmology.omega_lambda = snapshot->omega_lambda;
    if (!o->scale_factor_given)
      pp.cosmology.scale_factor = snapshot->scale_factor;
  } else if (snapshot && snapshot->units == PHEW_UNITS_ASTRO && !o->gravitational_constant_given) {
    pp.gravitational_constant = 4.30091727003628e-9; /* Mpc (km/s)^2 / Msun, h cancels */
  }
  return pp;
}

int physics_mode_run(const procs *p, const options *o, const phew_input *in, const phew_snapshot_info *snapshot,
                     const grouping *g, physics_outcome *out)
{
  memset(out, 0, sizeof *out);
  out->params = resolved_params(o, snapshot);
  int64_t n_structures = g->n_structures;
  procs_broadcast_int64(p, &n_structures);
  phew_context context = procs_context(p, o->n_threads);
  int64_t *parents = NULL, n_parents = 0, n_centres = 0;
  double *centres = NULL;
  /* the tables from rank 0 to every rank */
  if (g->has_parents && phew_gather_all(&context, g->parents, p->rank == 0 ? n_structures : 0, sizeof *parents,
                                        (void **)&parents, &n_parents, NULL) != PHEW_OK)
    fail("%s", context.message);
  else if (g->has_centres && phew_gather_all(&context, g->centres, p->rank == 0 ? n_structures : 0, 3 * sizeof *centres,
                                             (void **)&centres, &n_centres, NULL) != PHEW_OK)
    fail("%s", context.message);
  if (all_ok(p))
    out->bound = allocate(in->points.n, 8, "the bound labels");
  if (all_ok(p)) {
    const phew_structures st = {n_structures, parents, g->labels, centres};
    if (phew_structure_physics(&context, in, &st, &out->params, out->bound, NULL, &out->result) != PHEW_OK)
      fail("%s", context.message); /* the same on every rank */
  }
  if (!failed() && o->verbose && p->rank == 0) {
    const phew_physics_result *r = &out->result;
    printf("physics: %lld structures, %lld particles tested, %lld left unbound, softening %.6g\n",
           (long long)r->n_structures, (long long)r->n_candidates, (long long)r->n_unbound, r->softening_used);
    /* timings are indented, as the particle stages': what depends on the run is told apart */
    printf("  physics members %.3f s\n  physics unbinding %.3f s\n  physics overdensity %.3f s\n"
           "  physics catalogue %.3f s\n  physics total %.3f s\n",
           r->seconds_members, r->seconds_unbinding, r->seconds_overdensity, r->seconds_catalogue, r->seconds);
  }
  free(parents);
  free(centres);
  return all_ok(p) ? 0 : -1;
}

/* Rank 0: one line "id,parent" or "id,parent,x,y,z" of --parents (*n_values 2 or 5); 1 if it
 * is one, 0 if it is not (the header, line 1), -1 after fail. */
static int parse_line(const char *line, int64_t number, int64_t *id, int64_t *parent, double *centre, int *n_values,
                      const char *path)
{
  long long a, b;
  int used = -1;
  if (sscanf(line, " %lld , %lld %n", &a, &b, &used) == 2 && used >= 0 && line[used] == '\0')
    *n_values = 2;
  else if (sscanf(line, " %lld , %lld , %lf , %lf , %lf %n", &a, &b, &centre[0], &centre[1], &centre[2], &used) == 5 &&
           used >= 0 && line[used] == '\0')
    *n_values = 5;
  else if (number == 1)
    return 0; /* a header */
  else {
    fail("'%s' line %lld is not 'Id,ParentId' or 'Id,ParentId,CenterX,CenterY,CenterZ': '%s'", path, (long long)number,
         line);
    return -1;
  }
  if (a < 0 || b < -1 || a == b) {
    fail("'%s' line %lld: structure %lld with parent %lld: ids must be >= 0 and parents another id or -1", path,
         (long long)number, a, b);
    return -1;
  }
  for (int d = 0; *n_values == 5 && d < 3; ++d)
    if (!isfinite(centre[d])) {
      fail("'%s' line %lld: the centre of structure %lld is not finite", path, (long long)number, a);
      return -1;
    }
  *id = a;
  *parent = b;
  return 1;
}

/* Rank 0: the lines of --parents, 5 values each (the centre NaN when not given); *n_values 2
 * or 5, the same on every line. */
static double *read_lines(const char *path, int64_t *n_lines, int *n_values)
{
  FILE *f = fopen(path, "r");
  if (!f) {
    fail("cannot open --parents '%s': %s", path, strerror(errno));
    return NULL;
  }
  double *lines = NULL;
  int64_t n = 0, capacity = 0, number = 0;
  char line[1024];
  *n_values = 0;
  while (fgets(line, sizeof line, f)) {
    ++number;
    line[strcspn(line, "\r\n")] = '\0';
    if (line[0] == '\0')
      continue;
    int64_t id, parent;
    double centre[3] = {NAN, NAN, NAN};
    int values = 0;
    const int r = parse_line(line, number, &id, &parent, centre, &values, path);
    if (r < 0)
      break;
    if (r == 0)
      continue;
    if (*n_values && values != *n_values) {
      fail("'%s' line %lld has %d values where the lines before have %d", path, (long long)number, values, *n_values);
      break;
    }
    *n_values = values;
    if (n == capacity) {
      capacity = 2 * capacity + 64;
      double *grown = realloc(lines, (size_t)capacity * 5 * sizeof *lines);
      if (!grown) {
        fail("out of memory reading --parents '%s'", path);
        break;
      }
      lines = grown;
    }
    const double row[5] = {(double)id, (double)parent, centre[0], centre[1], centre[2]};
    memcpy(lines + 5 * n++, row, sizeof row);
  }
  if (!failed() && ferror(f))
    fail("reading --parents '%s' failed", path);
  fclose(f);
  *n_lines = n;
  return lines;
}

/* Rank 0: the tables of the structures from the lines. */
static void fill_tables(const options *o, const double *lines, int64_t n_lines, int64_t n_structures, int64_t **parents,
                        double **centres, int with_centres)
{
  *parents = allocate(n_structures, 8, "the parents");
  if (with_centres && *parents)
    *centres = allocate(n_structures, 24, "the centres");
  if (failed())
    return;
  for (int64_t s = 0; s < n_structures; ++s) {
    (*parents)[s] = -2;
    for (int d = 0; with_centres && d < 3; ++d)
      (*centres)[3 * s + d] = NAN;
  }
  for (int64_t k = 0; k < n_lines && !failed(); ++k) {
    const int64_t id = (int64_t)lines[5 * k];
    if ((*parents)[id] != -2)
      fail("--parents '%s' lists structure %lld twice", o->parents, (long long)id);
    (*parents)[id] = (int64_t)lines[5 * k + 1];
    for (int d = 0; with_centres && d < 3; ++d)
      (*centres)[3 * id + d] = lines[5 * k + 2 + d];
  }
  for (int64_t s = 0; s < n_structures; ++s)
    (*parents)[s] = (*parents)[s] == -2 ? -1 : (*parents)[s];
}

int physics_read_parents(const procs *p, const options *o, const int64_t *labels, int64_t n, int64_t *n_structures,
                         int64_t **parents, double **centres, int *has_centres)
{
  *parents = NULL;
  *centres = NULL;
  int64_t largest = -1, n_lines = 0;
  double *lines = NULL;
  int n_values = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (labels[i] < -1) {
      fail("--groups '%s' gives a particle the label %lld: labels are structure ids >= 0, or -1", o->groups,
           (long long)labels[i]);
      break;
    }
    largest = labels[i] > largest ? labels[i] : largest;
  }
  if (p->rank == 0 && o->parents && !failed())
    lines = read_lines(o->parents, &n_lines, &n_values);
  for (int64_t k = 0; k < n_lines; ++k)
    for (int j = 0; j < 2; ++j)
      largest = (int64_t)lines[5 * k + j] > largest ? (int64_t)lines[5 * k + j] : largest;
  phew_context context = procs_context(p, 1);
  int64_t mine[2] = {largest, n_values == 5}, *all = NULL, n_all = 0;
  if (!failed() && phew_gather_all(&context, mine, 1, sizeof mine, (void **)&all, &n_all, NULL) != PHEW_OK)
    fail("%s", context.message);
  *n_structures = 0;
  *has_centres = 0;
  for (int64_t r = 0; all && r < n_all; ++r) {
    *n_structures = all[2 * r] + 1 > *n_structures ? all[2 * r] + 1 : *n_structures;
    *has_centres |= all[2 * r + 1] != 0;
  }
  free(all);
  if (p->rank == 0 && !failed() && o->parents)
    fill_tables(o, lines, n_lines, *n_structures, parents, centres, *has_centres);
  free(lines);
  if (!all_ok(p)) {
    free(*parents);
    free(*centres);
    *parents = NULL;
    *centres = NULL;
    return -1;
  }
  return 0;
}

int physics_mode_write(const procs *p, const options *o, int64_t first, int64_t n, const physics_outcome *out)
{
  const int given = o->finder == FINDER_GIVEN, phew = o->finder == FINDER_PHEW;
  const int bound = given ? OUTPUT_GIVEN_BOUND : phew ? OUTPUT_BOUND : OUTPUT_GROUP_BOUND;
  particle_files_write(outputs_temporary(bound), 8, first, n, out->bound);
  if (!all_ok(p))
    return -1;
  if (given && p->rank == 0) { /* a finder's table gets the columns joined (tables.c) */
    int n_columns;
    const phew_column *columns = phew_structure_columns(&n_columns);
    tables_write_csv(OUTPUT_GIVEN_PHYSICS_CSV, columns, n_columns, out->result.structures, out->result.n_structures,
                     sizeof *out->result.structures);
  }
  return all_ok(p) ? 0 : -1;
}
