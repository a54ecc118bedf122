/* A catalogue written as HDF5 (phew_readers.h): rank 0 the tables and attributes, then every
 * rank in turn its share of the membership lists. HDF5's own error printing is off; a failure
 * becomes a message naming the file and the object. */
#include "api.h"
#include "hdf5_access.h"

#include <stdlib.h>
#include <string.h>

static hid_t type_of(phew_column_type type)
{
  return type == PHEW_COLUMN_INT64 ? H5T_STD_I64LE : type == PHEW_COLUMN_INT32 ? H5T_STD_I32LE : H5T_IEEE_F64LE;
}

static hid_t memory_type_of(phew_column_type type)
{
  return type == PHEW_COLUMN_INT64   ? H5T_NATIVE_INT64
         : type == PHEW_COLUMN_INT32 ? H5T_NATIVE_INT32
                                     : H5T_NATIVE_DOUBLE;
}

/* A string attribute on an object; -1 on failure. */
static int text_attribute(hid_t object, const char *name, const char *text)
{
  hid_t type = H5Tcopy(H5T_C_S1);
  hid_t space = H5Screate(H5S_SCALAR);
  int ok = type >= 0 && space >= 0 && H5Tset_size(type, strlen(text) + 1) >= 0 &&
           H5Tset_strpad(type, H5T_STR_NULLTERM) >= 0;
  hid_t attribute = ok ? H5Acreate2(object, name, type, space, H5P_DEFAULT, H5P_DEFAULT) : -1;
  ok = attribute >= 0 && H5Awrite(attribute, type, text) >= 0;
  if (attribute >= 0)
    H5Aclose(attribute);
  if (space >= 0)
    H5Sclose(space);
  if (type >= 0)
    H5Tclose(type);
  return ok ? 0 : -1;
}

/* A one-dimensional dataset of n values (created whole; data NULL: written later). */
static hid_t create_dataset(hid_t group, const char *name, hid_t file_type, int64_t n)
{
  const hsize_t dims[1] = {(hsize_t)n};
  hid_t space = H5Screate_simple(1, dims, NULL);
  hid_t set = space >= 0 ? H5Dcreate2(group, name, file_type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT) : -1;
  if (space >= 0)
    H5Sclose(space);
  return set;
}

/* One column of a table part: its values gathered from the rows, written whole. */
static int write_column(hid_t group, const phew_column *column, const phew_hdf5_part *part, int64_t n_rows,
                        const phew_hdf5_catalogue *c, read_error *e, const char *path, const char *table)
{
  const size_t size = column->type == PHEW_COLUMN_INT32 ? 4 : 8;
  unsigned char *values = malloc((size_t)(n_rows > 0 ? n_rows : 1) * size);
  if (!values)
    return read_fail_memory(e, "a catalogue column", (double)n_rows * (double)size);
  for (int64_t r = 0; r < n_rows; ++r)
    memcpy(values + (size_t)r * size, (const unsigned char *)part->rows + (size_t)r * part->row_size + column->offset,
           size);
  hid_t set = create_dataset(group, column->name, type_of(column->type), n_rows);
  int ok = set >= 0 &&
           (n_rows == 0 || H5Dwrite(set, memory_type_of(column->type), H5S_ALL, H5S_ALL, H5P_DEFAULT, values) >= 0);
  const char *unit = c->unit_of ? c->unit_of(column->name, c->unit_data) : NULL;
  if (ok && unit)
    ok = text_attribute(set, "units", unit) == 0;
  if (set >= 0)
    H5Dclose(set);
  free(values);
  return ok ? 0 : read_fail(e, PHEW_ERROR_IO, "writing the column %s/%s of '%s' failed", table, column->name, path);
}

static int write_table(hid_t file, const phew_hdf5_table *t, const phew_hdf5_catalogue *c, read_error *e,
                       const char *path)
{
  hid_t group = H5Gcreate2(file, t->name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  if (group < 0)
    return read_fail(e, PHEW_ERROR_IO, "cannot create the group %s in '%s'", t->name, path);
  int status = 0;
  for (int p = 0; p < t->n_parts && status == 0; ++p)
    for (int k = 0; k < t->parts[p].n_columns && status == 0; ++k) {
      const phew_column *column = &t->parts[p].columns[k];
      if (H5Lexists(group, column->name, H5P_DEFAULT) > 0)
        continue; /* the first part's column of that name */
      status = write_column(group, column, &t->parts[p], t->n_rows, c, e, path, t->name);
    }
  H5Gclose(group);
  return status;
}

/* A whole dataset of n values from memory (stride: bytes between values). */
static int write_values(hid_t group, const char *name, hid_t file_type, hid_t memory_type, const void *first,
                        size_t stride, size_t size, int64_t n)
{
  unsigned char *values = malloc((size_t)(n > 0 ? n : 1) * size);
  hid_t set = values ? create_dataset(group, name, file_type, n) : -1;
  for (int64_t k = 0; values && k < n; ++k)
    memcpy(values + (size_t)k * size, (const unsigned char *)first + (size_t)k * stride, size);
  const int ok = set >= 0 && (n == 0 || H5Dwrite(set, memory_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, values) >= 0);
  if (set >= 0)
    H5Dclose(set);
  free(values);
  return ok ? 0 : -1;
}

/* The tracers: per structure its id, mass, offset and count in ParticleIds. */
static int write_most_bound(hid_t members, const phew_tracer_set *s)
{
  hid_t group = H5Gcreate2(members, "MostBound", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  const phew_tracked *t = s->tracked;
  const size_t row = sizeof *t;
  int ok = group >= 0 &&
           write_values(group, "StructureId", H5T_STD_I64LE, H5T_NATIVE_INT64, &t->id, row, 8, s->n) == 0 &&
           write_values(group, "Mass", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, &t->mass, row, 8, s->n) == 0 &&
           write_values(group, "Offset", H5T_STD_I64LE, H5T_NATIVE_INT64, &t->tracer_offset, row, 8, s->n) == 0 &&
           write_values(group, "Count", H5T_STD_I64LE, H5T_NATIVE_INT64, &t->n_tracers, row, 8, s->n) == 0 &&
           write_values(group, "ParticleIds", H5T_STD_I64LE, H5T_NATIVE_INT64, s->ids, 8, 8, s->n_ids) == 0;
  if (group >= 0)
    H5Gclose(group);
  return ok ? 0 : -1;
}

/* Rank 0: the file, its attributes, the tables, and the membership datasets (unfilled). */
static int create_file(const char *path, const phew_hdf5_catalogue *c, read_error *e)
{
  hid_t file = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  if (file < 0)
    return read_fail(e, PHEW_ERROR_IO, "cannot create the HDF5 file '%s'", path);
  hid_t root = H5Gopen2(file, "/", H5P_DEFAULT);
  int status = root >= 0 && text_attribute(root, "program", c->version ? c->version : "phew") == 0 &&
                       (!c->record || text_attribute(root, "run_record", c->record) == 0) &&
                       (!c->members_table || text_attribute(root, "membership_table", c->members_table) == 0)
                   ? 0
                   : read_fail(e, PHEW_ERROR_IO, "writing the attributes of '%s' failed", path);
  if (root >= 0)
    H5Gclose(root);
  for (int k = 0; k < c->n_tables && status == 0; ++k)
    status = write_table(file, &c->tables[k], c, e, path);
  if (status == 0 && c->members_table) {
    hid_t group = H5Gopen2(file, c->members_table, H5P_DEFAULT);
    hid_t bound = group >= 0 ? create_dataset(group, "BoundParticleIds", H5T_STD_I64LE, c->n_bound_total) : -1;
    hid_t unbound = group >= 0 ? create_dataset(group, "UnboundParticleIds", H5T_STD_I64LE, c->n_unbound_total) : -1;
    if (bound < 0 || unbound < 0 || (c->most_bound && write_most_bound(group, c->most_bound) != 0))
      status = read_fail(e, PHEW_ERROR_IO, "cannot create the membership lists in '%s'", path);
    if (bound >= 0)
      H5Dclose(bound);
    if (unbound >= 0)
      H5Dclose(unbound);
    if (group >= 0)
      H5Gclose(group);
  }
  if (H5Fclose(file) < 0 && status == 0)
    status = read_fail(e, PHEW_ERROR_IO, "closing '%s' failed", path);
  return status;
}

/* This rank's share [first, first + n) of a membership dataset. */
static int write_share(hid_t group, const char *name, const int64_t *ids, int64_t first, int64_t n)
{
  if (n == 0)
    return 0;
  hid_t set = H5Dopen2(group, name, H5P_DEFAULT);
  hid_t space = set >= 0 ? H5Dget_space(set) : -1;
  const hsize_t start[1] = {(hsize_t)first}, count[1] = {(hsize_t)n};
  hid_t memory = H5Screate_simple(1, count, NULL);
  int ok = space >= 0 && memory >= 0 && H5Sselect_hyperslab(space, H5S_SELECT_SET, start, NULL, count, NULL) >= 0 &&
           H5Dwrite(set, H5T_NATIVE_INT64, memory, space, H5P_DEFAULT, ids) >= 0;
  if (memory >= 0)
    H5Sclose(memory);
  if (space >= 0)
    H5Sclose(space);
  if (set >= 0)
    H5Dclose(set);
  return ok ? 0 : -1;
}

static int write_members(const char *path, const phew_hdf5_catalogue *c, read_error *e)
{
  hid_t file = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
  if (file < 0)
    return read_fail(e, PHEW_ERROR_IO, "cannot open '%s' to write the membership lists", path);
  hid_t group = H5Gopen2(file, c->members_table, H5P_DEFAULT);
  int status = group >= 0 && write_share(group, "BoundParticleIds", c->bound_ids, c->bound_first, c->n_bound) == 0 &&
                       write_share(group, "UnboundParticleIds", c->unbound_ids, c->unbound_first, c->n_unbound) == 0
                   ? 0
                   : read_fail(e, PHEW_ERROR_IO, "writing the membership lists of '%s' failed", path);
  if (group >= 0)
    H5Gclose(group);
  if (H5Fclose(file) < 0 && status == 0)
    status = read_fail(e, PHEW_ERROR_IO, "closing '%s' failed", path);
  return status;
}

phew_status phew_write_catalogue_hdf5(phew_context *context, const char *path, const phew_hdf5_catalogue *catalogue)
{
  if (!context || !path || !catalogue)
    return refuse_null_arguments(context, "phew_write_catalogue_hdf5: the context, the path and the catalogue "
                                          "must not be NULL");
  int rank = 0, size = 1;
  phew_context_ranks(context, &rank, &size);
  read_error e;
  read_error_init(&e);
  hdf5_quiet quiet;
  hdf5_quiet_begin(&quiet);
  if (rank == 0)
    create_file(path, catalogue, &e);
  phew_status status = agree_on_error(context, &e);
  /* one rank at a time: serial HDF5 opens the file once per process */
  for (int r = 0; catalogue->members_table && status == PHEW_OK && r < size; ++r) {
    read_error_init(&e);
    if (r == rank)
      write_members(path, catalogue, &e);
    status = agree_on_error(context, &e);
  }
  hdf5_quiet_end(&quiet);
  return status;
}
