/* GADGET-family particles: this rank's contiguous range [first, first + n) of one type,
 * over the files in order; from each file it spans, one hyperslab of rows per dataset,
 * read straight into the set's arrays (HDF5 converts the type on the way). */
#include "gadget.h"
#include "hdf5_access.h"
#include "particle_arrays.h"

#include <stdio.h>
#include <string.h>

/* The four datasets the finders use; the others are fields (all_fields). */
static const char *const standard[] = {"Coordinates", "Velocities", "ParticleIDs", "Masses"};

/* The phew_value_type of an HDF5 number type; -1 for anything else. */
static int value_type_of(hid_t type)
{
  const size_t size = H5Tget_size(type);
  if (H5Tget_class(type) == H5T_FLOAT)
    return size == 4 ? PHEW_VALUE_FLOAT32 : size == 8 ? PHEW_VALUE_FLOAT64 : -1;
  if (H5Tget_class(type) != H5T_INTEGER)
    return -1;
  const int sign = H5Tget_sign(type) == H5T_SGN_2;
  switch (size) {
  case 1: return sign ? PHEW_VALUE_INT8 : PHEW_VALUE_UINT8;
  case 2: return sign ? PHEW_VALUE_INT16 : PHEW_VALUE_UINT16;
  case 4: return sign ? PHEW_VALUE_INT32 : PHEW_VALUE_UINT32;
  case 8: return sign ? PHEW_VALUE_INT64 : PHEW_VALUE_UINT64;
  default: return -1;
  }
}

static hid_t native_type(phew_value_type type)
{
  switch (type) {
  case PHEW_VALUE_FLOAT32: return H5T_NATIVE_FLOAT;
  case PHEW_VALUE_FLOAT64: return H5T_NATIVE_DOUBLE;
  case PHEW_VALUE_INT8: return H5T_NATIVE_INT8;
  case PHEW_VALUE_INT16: return H5T_NATIVE_INT16;
  case PHEW_VALUE_INT32: return H5T_NATIVE_INT32;
  case PHEW_VALUE_INT64: return H5T_NATIVE_INT64;
  case PHEW_VALUE_UINT8: return H5T_NATIVE_UINT8;
  case PHEW_VALUE_UINT16: return H5T_NATIVE_UINT16;
  case PHEW_VALUE_UINT32: return H5T_NATIVE_UINT32;
  default: return H5T_NATIVE_UINT64;
  }
}

/* A dataset's value type and shape (rows, components); 0 if it is absent, -1 on failure. */
static int probe(hid_t file, const char *path, const char *name, int *type, int64_t *rows, int *components,
                 read_error *e)
{
  if (!hdf5_exists(file, name))
    return 0;
  const hid_t set = H5Dopen2(file, name, H5P_DEFAULT);
  const hid_t space = set >= 0 ? H5Dget_space(set) : -1, t = set >= 0 ? H5Dget_type(set) : -1;
  hsize_t dims[2] = {0, 1};
  const int rank = space >= 0 ? H5Sget_simple_extent_ndims(space) : -1;
  if (rank >= 1 && rank <= 2)
    H5Sget_simple_extent_dims(space, dims, NULL);
  *type = t >= 0 ? value_type_of(t) : -1;
  *rows = (int64_t)dims[0];
  *components = rank == 2 ? (int)dims[1] : 1;
  if (t >= 0)
    H5Tclose(t);
  if (space >= 0)
    H5Sclose(space);
  if (set >= 0)
    H5Dclose(set);
  if (*type < 0 || rank < 1 || rank > 2)
    return read_fail(e, PHEW_ERROR_IO, "%s: the dataset %s is not a 1-D or 2-D array of numbers", path, name);
  return 1;
}

/* Rows [lo, lo + n) of dataset NAME into out (components values per row, of type). */
static int read_rows(hid_t file, const char *path, const char *name, int64_t rows_expected, int components, int64_t lo,
                     int64_t n, phew_value_type type, void *out, read_error *e)
{
  int file_type;
  int64_t rows;
  int file_components;
  const int found = probe(file, path, name, &file_type, &rows, &file_components, e);
  if (found <= 0)
    return found < 0 ? -1 : read_fail(e, PHEW_ERROR_IO, "%s has no dataset %s", path, name);
  if (rows != rows_expected || file_components != components)
    return read_fail(e, PHEW_ERROR_IO,
                     "%s: the dataset %s holds %lld x %d values where Header/NumPart_ThisFile says %lld x %d "
                     "(truncated or inconsistent)",
                     path, name, (long long)rows, file_components, (long long)rows_expected, components);
  const hid_t set = H5Dopen2(file, name, H5P_DEFAULT), space = H5Dget_space(set);
  const hsize_t start[2] = {(hsize_t)lo, 0}, count[2] = {(hsize_t)n, (hsize_t)components};
  /* the memory space of the file's rank: HDF5 reads same-shaped selections the fast way */
  const hid_t memory = H5Screate_simple(H5Sget_simple_extent_ndims(space), count, NULL);
  const int ok = n == 0 || (H5Sselect_hyperslab(space, H5S_SELECT_SET, start, NULL, count, NULL) >= 0 &&
                            H5Dread(set, native_type(type), memory, space, H5P_DEFAULT, out) >= 0);
  H5Sclose(memory);
  H5Sclose(space);
  H5Dclose(set);
  return ok ? 0
            : read_fail(e, PHEW_ERROR_IO, "%s: HDF5 cannot read rows %lld to %lld of %s (damaged file?)", path,
                        (long long)lo, (long long)(lo + n), name);
}

static int is_standard(const char *name)
{
  for (int k = 0; k < 4; ++k)
    if (strcmp(name, standard[k]) == 0)
      return 1;
  return 0;
}

/* The other datasets of GROUP with one row per particle, as fields of the set. */
static int add_fields(hid_t file, const char *path, const char *group, int64_t rows, phew_particle_set *set,
                      read_error *e)
{
  const hid_t g = H5Gopen2(file, group, H5P_DEFAULT);
  H5G_info_t info;
  if (g < 0 || H5Gget_info(g, &info) < 0) {
    if (g >= 0)
      H5Gclose(g);
    return read_fail(e, PHEW_ERROR_IO, "%s: cannot list the group %s", path, group);
  }
  for (hsize_t k = 0; k < info.nlinks && e->status == PHEW_OK; ++k) {
    char name[64], full[160];
    if (H5Lget_name_by_idx(g, ".", H5_INDEX_NAME, H5_ITER_INC, k, name, sizeof name, H5P_DEFAULT) < 0 ||
        is_standard(name))
      continue;
    snprintf(full, sizeof full, "%s/%s", group, name);
    const hid_t set_id = H5Dopen2(file, full, H5P_DEFAULT);
    if (set_id < 0)
      continue; /* a group, not a dataset */
    H5Dclose(set_id);
    int type, components;
    int64_t n;
    read_error not_numbers; /* strings, compounds: not a field */
    read_error_init(&not_numbers);
    if (probe(file, path, full, &type, &n, &components, &not_numbers) == 1 && n == rows)
      particle_arrays_add_field(set, name, components, (phew_value_type)type, e);
  }
  H5Gclose(g);
  return e->status == PHEW_OK ? 0 : -1;
}

/* What the datasets are, from the first file that holds particles of the type: the float
 * type of the set, whether there are velocities and masses, and the other fields. */
static int shape_set(const gadget_snapshot *s, const phew_read_options *options, const int64_t *counts, int64_t n,
                     int *has_masses, phew_particle_set *set, read_error *e)
{
  int reference = 0;
  while (reference < s->n_files - 1 && counts[reference] == 0)
    ++reference;
  char path[1280], group[32], name[64];
  gadget_file_name(s, reference, path, sizeof path);
  snprintf(group, sizeof group, "PartType%d", options->particle_type);
  const hid_t file = hdf5_open_file(path, e);
  if (file < 0)
    return -1;
  int type[4] = {PHEW_VALUE_FLOAT32, -1, -1, -1}, present[4] = {0}, components;
  int64_t rows;
  for (int k = 0; k < 4 && counts[reference] > 0; ++k) {
    snprintf(name, sizeof name, "%s/%s", group, standard[k]);
    present[k] = probe(file, path, name, &type[k], &rows, &components, e);
  }
  *has_masses = present[3] == 1;
  const int wide = type[0] == PHEW_VALUE_FLOAT64 || type[1] == PHEW_VALUE_FLOAT64 || type[3] == PHEW_VALUE_FLOAT64;
  if (e->status == PHEW_OK && counts[reference] > 0 && (present[0] != 1 || present[2] != 1))
    read_fail(e, PHEW_ERROR_IO, "%s: %s has no %s", path, group, present[0] != 1 ? "Coordinates" : "ParticleIDs");
  else if (e->status == PHEW_OK && !*has_masses && !(s->mass_table[options->particle_type] > 0.0) &&
           counts[reference] > 0)
    read_fail(e, PHEW_ERROR_IO, "%s: %s has no Masses and Header/MassTable[%d] is %g", path, group,
              options->particle_type, s->mass_table[options->particle_type]);
  else if (e->status == PHEW_OK)
    particle_arrays_allocate(set, n, wide ? PHEW_FLOAT64 : PHEW_FLOAT32, present[1] == 1, e);
  if (e->status == PHEW_OK && options->all_fields && counts[reference] > 0)
    add_fields(file, path, group, counts[reference], set, e);
  H5Fclose(file);
  return e->status == PHEW_OK ? 0 : -1;
}

/* Rows [lo, lo + n) of file k into the set at row `at`. */
static int read_file_rows(const gadget_snapshot *s, int type, int k, int64_t rows, int64_t lo, int64_t n,
                          int has_masses, phew_particle_set *set, int64_t at, read_error *e)
{
  char path[1280], name[160];
  gadget_file_name(s, k, path, sizeof path);
  const hid_t file = hdf5_open_file(path, e);
  if (file < 0)
    return -1;
  const phew_value_type real = set->type == PHEW_FLOAT32 ? PHEW_VALUE_FLOAT32 : PHEW_VALUE_FLOAT64;
  const size_t size = set->type == PHEW_FLOAT32 ? 4 : 8;
  void *targets[4] = {(char *)set->position + 3 * at * size,
                      set->velocity ? (char *)set->velocity + 3 * at * size : NULL, set->id + at,
                      has_masses ? (char *)set->mass + at * size : NULL};
  const int components[4] = {3, 3, 1, 1};
  const phew_value_type types[4] = {real, real, PHEW_VALUE_INT64, real};
  for (int d = 0; d < 4 && e->status == PHEW_OK; ++d)
    if (targets[d]) {
      snprintf(name, sizeof name, "PartType%d/%s", type, standard[d]);
      read_rows(file, path, name, rows, components[d], lo, n, types[d], targets[d], e);
    }
  for (int f = 0; f < set->n_fields && e->status == PHEW_OK; ++f) {
    const phew_particle_field *field = &set->fields[f];
    snprintf(name, sizeof name, "PartType%d/%s", type, field->name);
    read_rows(file, path, name, rows, field->components, lo, n, field->type,
              (char *)field->values + at * field->components * value_type_size(field->type), e);
  }
  H5Fclose(file);
  return e->status == PHEW_OK ? 0 : -1;
}

int gadget_read_particles(const gadget_snapshot *s, const phew_read_options *options, const int64_t *counts,
                          int64_t first, int64_t n, phew_particle_set *set, read_error *e)
{
  hdf5_quiet quiet;
  hdf5_quiet_begin(&quiet);
  int has_masses = 0;
  if (shape_set(s, options, counts, n, &has_masses, set, e) == 0) {
    int64_t start = 0; /* of file k in the global order */
    for (int k = 0; k < s->n_files && e->status == PHEW_OK; start += counts[k++]) {
      const int64_t lo = first > start ? first - start : 0;
      const int64_t hi = first + n - start < counts[k] ? first + n - start : counts[k];
      if (hi > lo)
        read_file_rows(s, options->particle_type, k, counts[k], lo, hi - lo, has_masses, set, start + lo - first, e);
    }
  }
  if (e->status == PHEW_OK && !has_masses) {
    const double m = s->mass_table[options->particle_type];
    for (int64_t i = 0; i < n; ++i)
      if (set->type == PHEW_FLOAT32)
        ((float *)set->mass)[i] = (float)m;
      else
        ((double *)set->mass)[i] = m;
  }
  hdf5_quiet_end(&quiet);
  return e->status == PHEW_OK ? 0 : -1;
}
