/* One step of a merger tree from an HDF5 catalogue (phew_read_catalogue_step): the membership
 * table named by the root's "membership_table" attribute gives each structure's own bound
 * particles (BoundParticleIds[BoundOffset .. BoundOffset + NumberOfBoundParticles): the lists
 * are in preorder, so these slices partition the list); each rank reads its share of the list
 * and labels it from them; rank 0 reads the MostBound group. Serial HDF5 on every rank. */
#include "api.h"
#include "hdf5_access.h"
#include "shares.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void phew_catalogue_step_free(phew_catalogue_step *step)
{
  if (!step)
    return;
  free(step->id);
  free(step->label);
  phew_tracer_set_free(&step->tracers);
  memset(step, 0, sizeof *step);
}

/* The length of a one-dimensional dataset, or -1 (e set). */
static int64_t dataset_length(hid_t group, const char *name, const char *path, read_error *e)
{
  hid_t set = H5Lexists(group, name, H5P_DEFAULT) > 0 ? H5Dopen2(group, name, H5P_DEFAULT) : -1;
  hid_t space = set >= 0 ? H5Dget_space(set) : -1;
  hsize_t dims[1] = {0};
  const int ok = space >= 0 && H5Sget_simple_extent_ndims(space) == 1 &&
                 H5Sget_simple_extent_dims(space, dims, NULL) == 1;
  if (space >= 0)
    H5Sclose(space);
  if (set >= 0)
    H5Dclose(set);
  if (!ok)
    return read_fail(e, PHEW_ERROR_DATA, "'%s' has no one-dimensional dataset %s in its membership table", path, name);
  return (int64_t)dims[0];
}

/* values[0 .. n) = dataset[first .. first + n), converted to memory_type. */
static int read_range(hid_t group, const char *name, hid_t memory_type, int64_t first, int64_t n, void *values,
                      const char *path, read_error *e)
{
  if (n == 0)
    return 0;
  hid_t set = H5Dopen2(group, name, H5P_DEFAULT);
  hid_t space = set >= 0 ? H5Dget_space(set) : -1;
  const hsize_t start[1] = {(hsize_t)first}, count[1] = {(hsize_t)n};
  hid_t memory = H5Screate_simple(1, count, NULL);
  const int ok = space >= 0 && memory >= 0 &&
                 H5Sselect_hyperslab(space, H5S_SELECT_SET, start, NULL, count, NULL) >= 0 &&
                 H5Dread(set, memory_type, memory, space, H5P_DEFAULT, values) >= 0;
  if (memory >= 0)
    H5Sclose(memory);
  if (space >= 0)
    H5Sclose(space);
  if (set >= 0)
    H5Dclose(set);
  return ok ? 0 : read_fail(e, PHEW_ERROR_IO, "reading %s of '%s' failed", name, path);
}

/* A whole int64 or double dataset of the expected length into a new array (NULL: e set). */
static void *read_all(hid_t group, const char *name, hid_t memory_type, int64_t n, const char *path, read_error *e)
{
  const int64_t length = dataset_length(group, name, path, e);
  if (length < 0)
    return NULL;
  if (length != n) {
    read_fail(e, PHEW_ERROR_DATA, "'%s': %s has %lld values where %lld were expected", path, name, (long long)length,
              (long long)n);
    return NULL;
  }
  const size_t size = H5Tget_size(memory_type);
  void *values = malloc((size_t)(n > 0 ? n : 1) * size);
  if (!values) {
    read_fail_memory(e, name, (double)n * (double)size);
    return NULL;
  }
  if (read_range(group, name, memory_type, 0, n, values, path, e) != 0) {
    free(values);
    return NULL;
  }
  return values;
}

/* The structures' own slices of the bound list, by offset. */
typedef struct own_slice {
  int64_t offset, count, id;
} own_slice;

static int by_offset(const void *a, const void *b)
{
  const own_slice *x = a, *y = b;
  return (x->offset > y->offset) - (x->offset < y->offset);
}

/* The own slices from the table's columns (NULL: e set); *n structures. */
static own_slice *read_slices(hid_t table, int64_t n_total, int64_t *n, const char *path, read_error *e)
{
  *n = dataset_length(table, "StructureId", path, e);
  if (*n < 0)
    return NULL;
  int64_t *id = read_all(table, "StructureId", H5T_NATIVE_INT64, *n, path, e);
  int64_t *offset = id ? read_all(table, "BoundOffset", H5T_NATIVE_INT64, *n, path, e) : NULL;
  int64_t *count = offset ? read_all(table, "NumberOfBoundParticles", H5T_NATIVE_INT64, *n, path, e) : NULL;
  own_slice *s = count ? malloc((size_t)(*n > 0 ? *n : 1) * sizeof *s) : NULL;
  if (count && !s)
    read_fail_memory(e, "the structures' slices", (double)*n * (double)sizeof *s);
  for (int64_t k = 0; s && k < *n; ++k) {
    s[k] = (own_slice){offset[k], count[k], id[k]};
    if (id[k] < 0 || count[k] < 0 || offset[k] < 0 || offset[k] > n_total - count[k]) {
      read_fail(e, PHEW_ERROR_DATA, "'%s': structure %lld's bound slice lies outside BoundParticleIds", path,
                (long long)id[k]);
      free(s);
      s = NULL;
    }
  }
  if (s)
    qsort(s, (size_t)*n, sizeof *s, by_offset);
  free(id);
  free(offset);
  free(count);
  return s;
}

/* This rank's share of the bound list, each particle with the structure whose own slice holds it. */
static int read_share(hid_t table, int64_t n_total, const own_slice *s, int64_t n_s, int rank, int size,
                      phew_catalogue_step *out, const char *path, read_error *e)
{
  int64_t first = 0, n = 0;
  share_of(n_total, rank, size, &first, &n);
  out->id = malloc((size_t)(n > 0 ? n : 1) * sizeof *out->id);
  out->label = malloc((size_t)(n > 0 ? n : 1) * sizeof *out->label);
  if (!out->id || !out->label)
    return read_fail_memory(e, "the bound particles", (double)n * 16.0);
  if (read_range(table, "BoundParticleIds", H5T_NATIVE_INT64, first, n, out->id, path, e) != 0)
    return -1;
  int64_t k = 0; /* the slice holding index first + i: slices are sorted by offset */
  for (int64_t i = 0; i < n; ++i) {
    const int64_t g = first + i;
    while (k < n_s && s[k].offset + s[k].count <= g)
      ++k;
    out->label[i] = k < n_s && s[k].offset <= g ? s[k].id : -1;
  }
  out->n = n;
  return 0;
}

/* The MostBound entries checked: ids increasing, tracers inside ParticleIds; 0 or -1 (e set). */
static int check_tracers(const phew_tracer_set *set, const char *path, read_error *e)
{
  for (int64_t k = 0; k < set->n; ++k) {
    const phew_tracked *t = &set->tracked[k];
    if (t->id < 0 || (k > 0 && t->id <= set->tracked[k - 1].id) || t->n_tracers < 0 || t->tracer_offset < 0 ||
        t->tracer_offset > set->n_ids - t->n_tracers)
      return read_fail(e, PHEW_ERROR_DATA,
                       "'%s': MostBound entry %lld (structure %lld) has an id out of order or tracers outside "
                       "ParticleIds",
                       path, (long long)k, (long long)t->id);
  }
  return 0;
}

static int by_slice_id(const void *a, const void *b)
{
  const own_slice *x = a, *y = b;
  return (x->id > y->id) - (x->id < y->id);
}

/* Each tracked structure's mass: its own bound particles, counted (the unit of phew link). */
static int count_masses(phew_tracer_set *set, const own_slice *s, int64_t n_s, const char *path, read_error *e)
{
  own_slice *by_id = malloc((size_t)(n_s > 0 ? n_s : 1) * sizeof *by_id);
  if (!by_id)
    return read_fail_memory(e, "the structures' slices", (double)n_s * (double)sizeof *by_id);
  if (n_s)
    memcpy(by_id, s, (size_t)n_s * sizeof *by_id);
  qsort(by_id, (size_t)n_s, sizeof *by_id, by_slice_id);
  int status = 0;
  for (int64_t k = 0; status == 0 && k < set->n; ++k) {
    const own_slice key = {0, 0, set->tracked[k].id};
    const own_slice *found = bsearch(&key, by_id, (size_t)n_s, sizeof *by_id, by_slice_id);
    if (found)
      set->tracked[k].mass = (double)found->count;
    else
      status = read_fail(e, PHEW_ERROR_DATA, "'%s': MostBound names structure %lld, which the membership table lacks",
                         path, (long long)set->tracked[k].id);
  }
  free(by_id);
  return status;
}

/* Rank 0: the MostBound group into the tracer set. */
static int read_tracers(hid_t table, int64_t step, phew_tracer_set *set, const char *path, read_error *e)
{
  memset(set, 0, sizeof *set);
  hid_t group = H5Lexists(table, "MostBound", H5P_DEFAULT) > 0 ? H5Gopen2(table, "MostBound", H5P_DEFAULT) : -1;
  if (group < 0)
    return read_fail(e, PHEW_ERROR_DATA,
                     "'%s' has no MostBound group in its membership table (written by a phew without the merger "
                     "trees by most-bound particles?)",
                     path);
  const int64_t n = group >= 0 ? dataset_length(group, "StructureId", path, e) : -1;
  const int64_t n_ids = n >= 0 ? dataset_length(group, "ParticleIds", path, e) : -1;
  int64_t *id = n_ids >= 0 ? read_all(group, "StructureId", H5T_NATIVE_INT64, n, path, e) : NULL;
  double *mass = id ? read_all(group, "Mass", H5T_NATIVE_DOUBLE, n, path, e) : NULL;
  int64_t *offset = mass ? read_all(group, "Offset", H5T_NATIVE_INT64, n, path, e) : NULL;
  int64_t *count = offset ? read_all(group, "Count", H5T_NATIVE_INT64, n, path, e) : NULL;
  set->ids = count ? read_all(group, "ParticleIds", H5T_NATIVE_INT64, n_ids, path, e) : NULL;
  set->tracked = set->ids ? malloc((size_t)(n > 0 ? n : 1) * sizeof *set->tracked) : NULL;
  if (set->ids && !set->tracked)
    read_fail_memory(e, "the tracers", (double)n * (double)sizeof *set->tracked);
  for (int64_t k = 0; set->tracked && k < n; ++k)
    set->tracked[k] = (phew_tracked){id[k], step, 0, mass[k], offset[k], count[k]};
  set->n = set->tracked ? n : 0;
  set->n_ids = set->tracked ? n_ids : 0;
  free(id);
  free(mass);
  free(offset);
  free(count);
  H5Gclose(group);
  return set->tracked ? check_tracers(set, path, e) : -1;
}

static int read_step(const char *path, int64_t step, int rank, int size, phew_catalogue_step *out, read_error *e)
{
  hid_t file = hdf5_open_file(path, e);
  if (file < 0)
    return -1;
  char name[256];
  hdf5_attribute_text(file, "/", "membership_table", name, sizeof name);
  hid_t table = name[0] && H5Lexists(file, name, H5P_DEFAULT) > 0 ? H5Gopen2(file, name, H5P_DEFAULT) : -1;
  int status = table >= 0 ? 0
                          : read_fail(e, PHEW_ERROR_DATA,
                                      "'%s' is not a phew catalogue with membership lists (no membership_table "
                                      "attribute: run the physics with --hdf5)",
                                      path);
  const int64_t n_total = status == 0 ? dataset_length(table, "BoundParticleIds", path, e) : -1;
  int64_t n_s = 0;
  own_slice *s = n_total >= 0 ? read_slices(table, n_total, &n_s, path, e) : NULL;
  status = s ? read_share(table, n_total, s, n_s, rank, size, out, path, e) : -1;
  if (status == 0 && rank == 0)
    status = read_tracers(table, step, &out->tracers, path, e);
  if (status == 0 && rank == 0)
    status = count_masses(&out->tracers, s, n_s, path, e);
  free(s);
  if (table >= 0)
    H5Gclose(table);
  H5Fclose(file);
  return status;
}

phew_status phew_read_catalogue_step(phew_context *context, const char *path, int64_t step, phew_catalogue_step *out)
{
  if (out)
    memset(out, 0, sizeof *out);
  if (!context || !path || !out)
    return refuse_null_arguments(context, "phew_read_catalogue_step: the context, the path and the step must not "
                                          "be NULL");
  int rank = 0, size = 1;
  phew_context_ranks(context, &rank, &size);
  read_error e;
  read_error_init(&e);
  hdf5_quiet quiet;
  hdf5_quiet_begin(&quiet);
  read_step(path, step, rank, size, out, &e);
  hdf5_quiet_end(&quiet);
  const phew_status status = agree_on_error(context, &e);
  if (status != PHEW_OK)
    phew_catalogue_step_free(out);
  return status;
}
