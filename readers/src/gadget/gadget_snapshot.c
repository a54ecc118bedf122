/* A GADGET-family HDF5 snapshot: its files from the path the user gave, the header of the
 * first file, and the particle counts of every file. */
#define _POSIX_C_SOURCE 200809L
#include "gadget.h"
#include "hdf5_access.h"
#include "paths.h"

#include <ctype.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int is_hdf5_name(const char *name) { return ends_with(name, ".hdf5") || ends_with(name, ".h5"); }

/* STEM and extension of "STEM.K.hdf5" when K is all digits (multi-file, file k), else of
 * "STEM.hdf5". */
static void split_name(const char *path, gadget_snapshot *s, int *k)
{
  const char *dot = strrchr(path, '.');
  size_t n = dot && !strchr(dot, '/') ? (size_t)(dot - path) : strlen(path);
  snprintf(s->extension, sizeof s->extension, "%s", path + n);
  s->multi_file = 0;
  *k = 0;
  size_t digits = n;
  while (digits > 0 && isdigit((unsigned char)path[digits - 1]))
    --digits;
  if (digits < n && digits > 0 && path[digits - 1] == '.') {
    s->multi_file = 1;
    *k = atoi(path + digits);
    n = digits - 1;
  }
  snprintf(s->stem, sizeof s->stem, "%.*s", (int)n, path);
}

/* In a folder (a snapdir_NNN/): the one *.0.hdf5, or the one *.hdf5. */
static int file_in_folder(const char *folder, char *out, size_t capacity)
{
  DIR *d = opendir(folder);
  if (!d)
    return -1;
  int zeros = 0, singles = 0;
  char zero[512] = "", single[512] = "";
  for (struct dirent *entry; (entry = readdir(d)) != NULL;) {
    if (!is_hdf5_name(entry->d_name))
      continue;
    if (ends_with(entry->d_name, ".0.hdf5") || ends_with(entry->d_name, ".0.h5"))
      zeros += snprintf(zero, sizeof zero, "%s", entry->d_name) >= 0;
    singles += snprintf(single, sizeof single, "%s", entry->d_name) >= 0;
  }
  closedir(d);
  const char *name = zeros == 1 ? zero : singles == 1 ? single : NULL;
  return name ? path_format(out, capacity, "%s/%s", folder, name) : -1;
}

int gadget_recognises(const char *path)
{
  char file[1280];
  if (path_is_directory(path))
    return file_in_folder(path, file, sizeof file) == 0;
  return is_hdf5_name(path);
}

int gadget_file_name(const gadget_snapshot *s, int k, char *out, size_t capacity)
{
  if (s->multi_file)
    return path_format(out, capacity, "%s.%d%s", s->stem, k, s->extension);
  return path_format(out, capacity, "%s%s", s->stem, s->extension);
}

/* The stem and whether the snapshot is split, from a file, a folder or a stem. */
static int locate(const char *path, gadget_snapshot *s, char *first, size_t capacity, read_error *e)
{
  char file[1280];
  if (path_is_directory(path) && file_in_folder(path, file, sizeof file) != 0)
    return read_fail(e, PHEW_ERROR_IO, "%s holds no single snapshot (one *.0.hdf5, or one *.hdf5)", path);
  if (!path_is_directory(path) && path_format(file, sizeof file, "%s", path) != 0)
    return read_fail(e, PHEW_ERROR_ARGUMENT, "the path %s is too long", path);
  if (!path_exists(file))
    return read_fail_errno(e, "open", file);
  int k;
  split_name(file, s, &k);
  if (s->multi_file && k != 0)
    return read_fail(e, PHEW_ERROR_ARGUMENT, "%s is file %d of a multi-file snapshot: give file 0 (%s.0.hdf5)", file, k,
                     s->stem);
  return path_format(first, capacity, "%s", file) == 0 ? 0 : read_fail(e, PHEW_ERROR_ARGUMENT, "path too long");
}

/* Header: the counts (NumPart_Total with its HighWord), the mass table, the box, the time. */
static int read_counts_and_box(hid_t file, const char *path, gadget_snapshot *s, read_error *e)
{
  int64_t this_file[GADGET_MAX_TYPES], total[GADGET_MAX_TYPES], high[GADGET_MAX_TYPES] = {0};
  const int n = hdf5_attribute_int64(file, path, "Header", "NumPart_ThisFile", this_file, GADGET_MAX_TYPES, e);
  if (n <= 0 || n > GADGET_MAX_TYPES)
    return read_fail(e, PHEW_ERROR_IO, "%s is not a GADGET-style snapshot: no attribute Header/NumPart_ThisFile", path);
  s->n_types = n;
  if (hdf5_attribute_int64(file, path, "Header", "NumPart_Total", total, GADGET_MAX_TYPES, e) != n ||
      hdf5_attribute_int64(file, path, "Header", "NumPart_Total_HighWord", high, GADGET_MAX_TYPES, e) < 0)
    return read_fail(e, PHEW_ERROR_IO, "%s: Header/NumPart_Total is missing or has not %d entries", path, n);
  for (int t = 0; t < n; ++t)
    s->n_total[t] = (int64_t)((uint64_t)total[t] + ((uint64_t)high[t] << 32));
  hdf5_attribute_doubles(file, path, "Header", "MassTable", s->mass_table, GADGET_MAX_TYPES, e);
  double box[3];
  const int n_box = hdf5_attribute_doubles(file, path, "Header", "BoxSize", box, 3, e);
  if (n_box != 1 && n_box != 3)
    return read_fail(e, PHEW_ERROR_IO, "%s: Header/BoxSize is missing or has not 1 or 3 values", path);
  for (int d = 0; d < 3; ++d)
    s->box_size[d] = box[n_box == 3 ? d : 0];
  int64_t files = 1;
  hdf5_attribute_int64(file, path, "Header", "NumFilesPerSnapshot", &files, 1, e);
  s->n_files = (int)files;
  if (files < 1 || files > 1000000 || (!s->multi_file && files != 1))
    return read_fail(e, PHEW_ERROR_IO, "%s: Header/NumFilesPerSnapshot is %lld%s", path, (long long)files,
                     files > 1 ? ", but the file's name has no file number (STEM.0.hdf5)" : "");
  s->time = s->redshift = NAN;
  hdf5_attribute_doubles(file, path, "Header", "Time", &s->time, 1, e);
  hdf5_attribute_doubles(file, path, "Header", "Redshift", &s->redshift, 1, e);
  s->scale_factor = NAN;
  hdf5_attribute_doubles(file, path, "Header", "Scale-factor", &s->scale_factor, 1, e);
  return e->status == PHEW_OK ? 0 : -1;
}

/* The first of OBJECTS holding attribute NAME gives *value (left as it is when none does). */
static void find_double(hid_t file, const char *path, const char *const *objects, const char *name, double *value,
                        read_error *e)
{
  for (int k = 0; objects[k]; ++k)
    if (hdf5_attribute_doubles(file, path, objects[k], name, value, 1, e) != 0)
      return;
}

/* An attribute the reader looks for, in the first of the objects that holds it. */
typedef struct lookup {
  const char *const *objects;
  const char *name;
  double *value;
} lookup;

static void find_doubles(hid_t file, const char *path, const lookup *lookups, int n, read_error *e)
{
  for (int k = 0; k < n; ++k)
    find_double(file, path, lookups[k].objects, lookups[k].name, lookups[k].value, e);
}

/* Cosmology and units: SWIFT's Cosmology and Units groups, or GADGET's attributes in the
 * Header (GADGET-2/3, AREPO) or the Parameters (GADGET-4); GADGET's defaults for the units
 * (1 kpc/h, 1e10 Msun/h, 1 km/s) when the file does not say. */
static void read_cosmology_and_units(hid_t file, const char *path, gadget_snapshot *s, read_error *e)
{
  static const char *gadget[] = {"Header", "Parameters", "Units", NULL}, *swift[] = {"Cosmology", NULL},
                    *swift_units[] = {"Units", NULL};
  char code[64];
  hdf5_attribute_text(file, "Header", "Code", code, sizeof code);
  s->swift = strstr(code, "SWIFT") != NULL || hdf5_exists(file, "Cosmology");
  snprintf(s->code, sizeof s->code, "%s", s->swift ? "SWIFT" : "GADGET");
  s->hubble = 1.0;
  s->unit_length_cm = 3.085678e21, s->unit_mass_g = 1.989e43, s->unit_velocity_cm_s = 1e5;
  double cosmological = NAN, unit_time = NAN;
  const lookup swift_lookups[] = {{swift, "h", &s->hubble},
                                  {swift, "Omega_m", &s->omega_matter},
                                  {swift, "Omega_lambda", &s->omega_lambda},
                                  {swift, "Omega_b", &s->omega_baryon},
                                  {swift, "Cosmological run", &cosmological},
                                  {swift_units, "Unit length in cgs (U_L)", &s->unit_length_cm},
                                  {swift_units, "Unit mass in cgs (U_M)", &s->unit_mass_g},
                                  {swift_units, "Unit time in cgs (U_t)", &unit_time}};
  const lookup gadget_lookups[] = {{gadget, "HubbleParam", &s->hubble},
                                   {gadget, "Omega0", &s->omega_matter},
                                   {gadget, "OmegaLambda", &s->omega_lambda},
                                   {gadget, "OmegaBaryon", &s->omega_baryon},
                                   {gadget, "ComovingIntegrationOn", &cosmological},
                                   {gadget, "UnitLength_in_cm", &s->unit_length_cm},
                                   {gadget, "UnitMass_in_g", &s->unit_mass_g},
                                   {gadget, "UnitVelocity_in_cm_per_s", &s->unit_velocity_cm_s}};
  if (s->swift) {
    find_doubles(file, path, swift_lookups, (int)(sizeof swift_lookups / sizeof *swift_lookups), e);
    s->unit_velocity_cm_s = s->unit_length_cm / unit_time;
  } else {
    find_doubles(file, path, gadget_lookups, (int)(sizeof gadget_lookups / sizeof *gadget_lookups), e);
  }
  /* without a flag (GADGET-2/3): an expanding box has Time = a = 1/(1+z) and a cosmology */
  if (isnan(cosmological))
    cosmological = s->omega_matter > 0.0 && s->time > 0.0 && s->time <= 1.0 + 1e-6 &&
                   fabs(1.0 / s->time - 1.0 - s->redshift) <= 1e-4 * (1.0 + s->redshift);
  s->cosmological = cosmological != 0.0;
}

int gadget_open_snapshot(const char *path, gadget_snapshot *s, read_error *e)
{
  memset(s, 0, sizeof *s);
  char first[1280];
  if (locate(path, s, first, sizeof first, e) != 0)
    return -1;
  hdf5_quiet quiet;
  hdf5_quiet_begin(&quiet);
  const hid_t file = hdf5_open_file(first, e);
  if (file >= 0) {
    if (read_counts_and_box(file, first, s, e) == 0)
      read_cosmology_and_units(file, first, s, e);
    H5Fclose(file);
  }
  hdf5_quiet_end(&quiet);
  return e->status == PHEW_OK ? 0 : -1;
}

int gadget_count_particles(const gadget_snapshot *s, int type, int64_t *counts, read_error *e)
{
  hdf5_quiet quiet;
  hdf5_quiet_begin(&quiet);
  int64_t sum = 0;
  char name[1280];
  for (int k = 0; k < s->n_files && e->status == PHEW_OK; ++k) {
    if (gadget_file_name(s, k, name, sizeof name) != 0) {
      read_fail(e, PHEW_ERROR_ARGUMENT, "the path %s is too long", s->stem);
      break;
    }
    const hid_t file = hdf5_open_file(name, e);
    if (file < 0)
      break;
    int64_t n[GADGET_MAX_TYPES];
    if (hdf5_attribute_int64(file, name, "Header", "NumPart_ThisFile", n, GADGET_MAX_TYPES, e) != s->n_types)
      read_fail(e, PHEW_ERROR_IO, "%s: Header/NumPart_ThisFile is missing or has not %d entries as in file 0", name,
                s->n_types);
    else if (n[type] < 0)
      read_fail(e, PHEW_ERROR_DATA, "%s: NumPart_ThisFile[%d] is negative", name, type);
    else
      sum += counts[k] = n[type];
    H5Fclose(file);
  }
  hdf5_quiet_end(&quiet);
  if (e->status == PHEW_OK && sum != s->n_total[type])
    read_fail(e, PHEW_ERROR_DATA,
              "inconsistent particle counts: the %d file(s) of %s hold %lld particles of type %d (NumPart_ThisFile) "
              "but NumPart_Total says %lld",
              s->n_files, s->stem, (long long)sum, type, (long long)s->n_total[type]);
  return e->status == PHEW_OK ? 0 : -1;
}

void gadget_snapshot_info(const gadget_snapshot *s, phew_snapshot_info *out)
{
  memset(out, 0, sizeof *out);
  out->format = PHEW_FORMAT_GADGET_HDF5;
  snprintf(out->code, sizeof out->code, "%s", s->code);
  gadget_file_name(s, 0, out->path, sizeof out->path);
  out->n_files = s->n_files;
  out->cosmological = s->cosmological;
  out->time = s->time;
  out->scale_factor = s->cosmological ? s->time : 1.0;
  if (s->swift && s->cosmological) /* SWIFT's Time is the cosmic time */
    out->scale_factor = !isnan(s->scale_factor) ? s->scale_factor : 1.0 / (1.0 + s->redshift);
  out->redshift = 1.0 / out->scale_factor - 1.0;
  out->hubble = s->hubble;
  out->omega_matter = s->omega_matter;
  out->omega_lambda = s->omega_lambda;
  out->omega_baryon = s->omega_baryon;
  for (int d = 0; d < 3; ++d) {
    out->box_size[d] = s->box_size[d];
    out->periodic[d] = 1; /* GADGET and SWIFT boxes are periodic */
  }
  out->units = PHEW_UNITS_CODE;
  snprintf(out->length_unit, sizeof out->length_unit, "code");
  snprintf(out->mass_unit, sizeof out->mass_unit, "code");
  snprintf(out->velocity_unit, sizeof out->velocity_unit, "code");
  out->code_length_cm = s->unit_length_cm;
  out->code_mass_g = s->unit_mass_g;
  out->code_velocity_cm_s = s->unit_velocity_cm_s;
}
