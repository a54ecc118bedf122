/* The physics of structures in the tool (physics_mode.h). */
#include "physics_mode.h"
#include "cli_errors.h"
#include "outputs.h"
#include "points_io.h"
#include "tables.h"

#include <errno.h>
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
                     const int64_t *labels, int64_t n_structures, int has_parents, const int64_t *parents,
                     physics_outcome *out)
{
  memset(out, 0, sizeof *out);
  out->params = resolved_params(o, snapshot);
  procs_broadcast_int64(p, &n_structures);
  phew_context context = procs_context(p, o->n_threads);
  int64_t *table = NULL, n_table = 0;
  /* the parent table from rank 0 to every rank */
  if (has_parents && phew_gather_all(&context, parents, p->rank == 0 ? n_structures : 0, sizeof *parents,
                                     (void **)&table, &n_table, NULL) != PHEW_OK)
    fail("%s", context.message);
  if (!all_ok(p))
    return -1;
  out->bound = allocate(in->points.n, 8, "the bound labels");
  if (!all_ok(p)) {
    free(table);
    return -1;
  }
  const phew_structures st = {n_structures, table, labels};
  if (phew_structure_physics(&context, in, &st, &out->params, out->bound, &out->result) != PHEW_OK)
    fail("%s", context.message); /* the same on every rank */
  free(table);
  return all_ok(p) ? 0 : -1;
}

/* Rank 0: one line "id,parent" of --parents; 1 if it is one, 0 if it is not a number pair
 * (the header), -1 after fail. */
static int parse_line(const char *line, int64_t number, int64_t *id, int64_t *parent, const char *path)
{
  long long a, b;
  int used = -1;
  if (sscanf(line, " %lld , %lld %n", &a, &b, &used) == 2 && used >= 0 && line[used] == '\0') {
    if (a < 0 || b < -1 || a == b) {
      fail("'%s' line %lld: structure %lld with parent %lld: ids must be >= 0 and parents another id or -1", path,
           (long long)number, a, b);
      return -1;
    }
    *id = a;
    *parent = b;
    return 1;
  }
  if (number == 1)
    return 0; /* a header */
  fail("'%s' line %lld is not 'Id,ParentId' (two integers): '%s'", path, (long long)number, line);
  return -1;
}

/* Rank 0: the pairs of --parents. */
static int64_t *read_pairs(const char *path, int64_t *n_pairs)
{
  FILE *f = fopen(path, "r");
  if (!f) {
    fail("cannot open --parents '%s': %s", path, strerror(errno));
    return NULL;
  }
  int64_t *pairs = NULL, n = 0, capacity = 0, number = 0;
  char line[512];
  while (fgets(line, sizeof line, f)) {
    ++number;
    line[strcspn(line, "\r\n")] = '\0';
    if (line[0] == '\0')
      continue;
    int64_t id, parent;
    const int r = parse_line(line, number, &id, &parent, path);
    if (r < 0)
      break;
    if (r == 0)
      continue;
    if (n == capacity) {
      capacity = 2 * capacity + 64;
      int64_t *grown = realloc(pairs, (size_t)capacity * 2 * sizeof *pairs);
      if (!grown) {
        fail("out of memory reading --parents '%s'", path);
        break;
      }
      pairs = grown;
    }
    pairs[2 * n] = id;
    pairs[2 * n + 1] = parent;
    ++n;
  }
  if (!failed() && ferror(f))
    fail("reading --parents '%s' failed", path);
  fclose(f);
  *n_pairs = n;
  return pairs;
}

int physics_read_parents(const procs *p, const options *o, const int64_t *labels, int64_t n, int64_t *n_structures,
                         int64_t **parents)
{
  *parents = NULL;
  int64_t largest = -1, n_pairs = 0, *pairs = NULL;
  for (int64_t i = 0; i < n; ++i) {
    if (labels[i] < -1) {
      fail("--groups '%s' gives a particle the label %lld: labels are structure ids >= 0, or -1", o->groups,
           (long long)labels[i]);
      break;
    }
    largest = labels[i] > largest ? labels[i] : largest;
  }
  if (p->rank == 0 && o->parents && !failed())
    pairs = read_pairs(o->parents, &n_pairs);
  for (int64_t k = 0; k < n_pairs; ++k)
    for (int j = 0; j < 2; ++j)
      largest = pairs[2 * k + j] > largest ? pairs[2 * k + j] : largest;
  phew_context context = procs_context(p, 1);
  int64_t *all = NULL, n_all = 0;
  if (!failed() && phew_gather_all(&context, &largest, 1, sizeof largest, (void **)&all, &n_all, NULL) != PHEW_OK)
    fail("%s", context.message);
  *n_structures = 0;
  for (int64_t r = 0; all && r < n_all; ++r)
    *n_structures = all[r] + 1 > *n_structures ? all[r] + 1 : *n_structures;
  free(all);
  if (p->rank == 0 && !failed() && o->parents && (*parents = allocate(*n_structures, 8, "the parents")) != NULL) {
    for (int64_t s = 0; s < *n_structures; ++s)
      (*parents)[s] = -2;
    for (int64_t k = 0; k < n_pairs && !failed(); ++k) {
      if ((*parents)[pairs[2 * k]] != -2)
        fail("--parents '%s' lists structure %lld twice", o->parents, (long long)pairs[2 * k]);
      (*parents)[pairs[2 * k]] = pairs[2 * k + 1];
    }
    for (int64_t s = 0; s < *n_structures; ++s)
      (*parents)[s] = (*parents)[s] == -2 ? -1 : (*parents)[s];
  }
  free(pairs);
  if (!all_ok(p)) {
    free(*parents);
    *parents = NULL;
    return -1;
  }
  return 0;
}

int physics_mode_write(const procs *p, int64_t first, int64_t n, const physics_outcome *out)
{
  particle_files_write(outputs_temporary(OUTPUT_BOUND), 8, first, n, out->bound);
  if (!all_ok(p))
    return -1;
  if (p->rank == 0) {
    int n_columns;
    const phew_column *columns = phew_structure_columns(&n_columns);
    tables_write_csv(OUTPUT_STRUCTURES_CSV, columns, n_columns, out->result.structures, out->result.n_structures,
                     sizeof *out->result.structures);
  }
  return all_ok(p) ? 0 : -1;
}
