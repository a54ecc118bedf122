/* HDF5 access without printing (hdf5_access.h). */
#include "hdf5_access.h"

#include <stdio.h>
#include <string.h>

void hdf5_quiet_begin(hdf5_quiet *q)
{
  H5Eget_auto2(H5E_DEFAULT, &q->function, &q->data);
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
}

void hdf5_quiet_end(const hdf5_quiet *q) { H5Eset_auto2(H5E_DEFAULT, q->function, q->data); }

hid_t hdf5_open_file(const char *path, read_error *e)
{
  FILE *probe = fopen(path, "rb");
  if (!probe) {
    read_fail_errno(e, "open", path);
    return -1;
  }
  fclose(probe);
  if (H5Fis_hdf5(path) <= 0) {
    read_fail(e, PHEW_ERROR_IO, "%s is not an HDF5 file", path);
    return -1;
  }
  const hid_t file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  if (file < 0)
    read_fail(e, PHEW_ERROR_IO, "HDF5 cannot open %s (damaged or truncated?)", path);
  return file;
}

int hdf5_exists(hid_t file, const char *object)
{
  if (strcmp(object, "/") == 0)
    return 1;
  /* each component must exist before the next is asked about */
  char part[512];
  for (const char *at = object; *at;) {
    const char *slash = strchr(at + 1, '/');
    const size_t n = slash ? (size_t)(slash - object) : strlen(object);
    snprintf(part, sizeof part, "%.*s", (int)n, object);
    if (H5Lexists(file, part, H5P_DEFAULT) <= 0)
      return 0;
    at = object + n;
  }
  return 1;
}

static int read_attribute(hid_t file, const char *path, const char *object, const char *name, hid_t type, void *values,
                          size_t value_size, int capacity, read_error *e)
{
  if ((strcmp(object, "/") != 0 && !hdf5_exists(file, object)) ||
      H5Aexists_by_name(file, object, name, H5P_DEFAULT) <= 0)
    return 0;
  const hid_t attribute = H5Aopen_by_name(file, object, name, H5P_DEFAULT, H5P_DEFAULT);
  const hid_t space = attribute >= 0 ? H5Aget_space(attribute) : -1;
  const hssize_t n = space >= 0 ? H5Sget_simple_extent_npoints(space) : -1;
  unsigned char buffer[64 * 8];
  int ok = n >= 1 && (size_t)n * value_size <= sizeof buffer && H5Aread(attribute, type, buffer) >= 0;
  if (ok)
    memcpy(values, buffer, (size_t)(n < capacity ? n : capacity) * value_size);
  if (space >= 0)
    H5Sclose(space);
  if (attribute >= 0)
    H5Aclose(attribute);
  if (!ok)
    return read_fail(e, PHEW_ERROR_IO, "%s: the attribute %s/%s cannot be read as %d number(s) or fewer", path, object,
                     name, 64);
  return (int)n;
}

int hdf5_attribute_doubles(hid_t file, const char *path, const char *object, const char *name, double *values,
                           int capacity, read_error *e)
{
  return read_attribute(file, path, object, name, H5T_NATIVE_DOUBLE, values, sizeof *values, capacity, e);
}

int hdf5_attribute_int64(hid_t file, const char *path, const char *object, const char *name, int64_t *values,
                         int capacity, read_error *e)
{
  return read_attribute(file, path, object, name, H5T_NATIVE_INT64, values, sizeof *values, capacity, e);
}

/* A string attribute of fixed or variable length (h5py writes the latter). */
static void read_text(hid_t attribute, hid_t type, char *text, size_t capacity)
{
  if (H5Tis_variable_str(type) > 0) {
    const hid_t memory = H5Tcopy(H5T_C_S1);
    char *value = NULL;
    if (memory >= 0 && H5Tset_size(memory, H5T_VARIABLE) >= 0 && H5Aread(attribute, memory, &value) >= 0 && value)
      snprintf(text, capacity, "%s", value);
    if (value)
      H5free_memory(value);
    if (memory >= 0)
      H5Tclose(memory);
    return;
  }
  const size_t size = H5Tget_size(type);
  char buffer[256];
  if (size < sizeof buffer && H5Aread(attribute, type, buffer) >= 0) {
    buffer[size] = '\0';
    snprintf(text, capacity, "%s", buffer);
  }
}

void hdf5_attribute_text(hid_t file, const char *object, const char *name, char *text, size_t capacity)
{
  text[0] = '\0';
  if (!hdf5_exists(file, object) || H5Aexists_by_name(file, object, name, H5P_DEFAULT) <= 0)
    return;
  const hid_t attribute = H5Aopen_by_name(file, object, name, H5P_DEFAULT, H5P_DEFAULT);
  const hid_t type = attribute >= 0 ? H5Aget_type(attribute) : -1;
  if (type >= 0 && H5Tget_class(type) == H5T_STRING)
    read_text(attribute, type, text, capacity);
  if (type >= 0)
    H5Tclose(type);
  if (attribute >= 0)
    H5Aclose(attribute);
}
