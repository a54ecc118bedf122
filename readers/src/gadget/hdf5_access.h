/* The few HDF5 calls the GADGET reader makes, with HDF5's own error printing off: the
 * library never prints; a failure becomes a read_error naming the file and the object. */
#ifndef PHEW_READERS_HDF5_ACCESS_H
#define PHEW_READERS_HDF5_ACCESS_H

#include "read_error.h"

#include <hdf5.h>
#include <stdint.h>

/* HDF5's automatic error printing, off between begin and end (restored to the caller's). */
typedef struct hdf5_quiet {
  H5E_auto2_t function;
  void *data;
} hdf5_quiet;
void hdf5_quiet_begin(hdf5_quiet *q);
void hdf5_quiet_end(const hdf5_quiet *q);

/* Opens PATH read-only; a negative id and e set when it is missing or not HDF5. */
hid_t hdf5_open_file(const char *path, read_error *e);

/* Attribute NAME of object OBJECT (a group path, "/" for the root) as up to capacity values
 * converted to double or int64: the number of values it has (more than capacity: only
 * capacity read), 0 when there is no such attribute or object, -1 on a failure (e set). */
int hdf5_attribute_doubles(hid_t file, const char *path, const char *object, const char *name, double *values,
                           int capacity, read_error *e);
int hdf5_attribute_int64(hid_t file, const char *path, const char *object, const char *name, int64_t *values,
                         int capacity, read_error *e);
/* A string attribute into text (empty when absent). */
void hdf5_attribute_text(hid_t file, const char *object, const char *name, char *text, size_t capacity);
/* 1 if the link (a group or dataset path) exists. */
int hdf5_exists(hid_t file, const char *object);

#endif
