/* The output folder and its info_NNNNN.txt: "name = value" lines (units in cgs, proper at
 * this aexp; the cosmology), then the domain table, which the readers do not need. */
#define _POSIX_C_SOURCE 200809L
#include "paths.h"
#include "ramses.h"

#include <ctype.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* NNNNN of "info_NNNNN.txt" or "output_NNNNN"; -1 if the name is not of that form. */
static int output_number(const char *name, const char *prefix, const char *suffix)
{
  const size_t p = strlen(prefix), n = strlen(name), s = strlen(suffix);
  if (n <= p + s || strncmp(name, prefix, p) != 0 || strcmp(name + n - s, suffix) != 0)
    return -1;
  int number = 0;
  for (size_t k = p; k < n - s; ++k) {
    if (!isdigit((unsigned char)name[k]) || number > 9999999)
      return -1;
    number = 10 * number + (name[k] - '0');
  }
  return number;
}

/* The number of the one info_*.txt file in folder, or -1. */
static int info_in_folder(const char *folder)
{
  DIR *d = opendir(folder);
  if (!d)
    return -1;
  int found = -1, count = 0;
  for (struct dirent *entry; (entry = readdir(d)) != NULL;) {
    const int number = output_number(entry->d_name, "info_", ".txt");
    if (number >= 0 && (found = number, ++count) > 1)
      break;
  }
  closedir(d);
  return count == 1 ? found : -1;
}

int ramses_locate(const char *path, ramses_info *info, read_error *e)
{
  memset(info, 0, sizeof *info);
  char name[256];
  path_base_name(path, name, sizeof name);
  if (path_is_directory(path)) {
    if (path_format(info->folder, sizeof info->folder, "%s", path) != 0)
      return read_fail(e, PHEW_ERROR_ARGUMENT, "the path %s is too long", path);
    info->output = output_number(name, "output_", "");
    if (info->output < 0)
      info->output = info_in_folder(path);
    if (info->output < 0)
      return read_fail(e, PHEW_ERROR_IO,
                       "%s is not a RAMSES output: no output_NNNNN name and not exactly one info_NNNNN.txt in it",
                       path);
  } else {
    info->output = output_number(name, "info_", ".txt");
    if (info->output < 0)
      return read_fail(e, PHEW_ERROR_IO,
                       "%s is not a RAMSES output: give its folder output_NNNNN or its info_NNNNN.txt", path);
    path_directory(path, info->folder, sizeof info->folder);
  }
  if (path_format(info->info_path, sizeof info->info_path, "%s/info_%05d.txt", info->folder, info->output) != 0)
    return read_fail(e, PHEW_ERROR_ARGUMENT, "the path %s is too long", path);
  if (!path_is_file(info->info_path))
    return read_fail(e, PHEW_ERROR_IO, "%s is not a RAMSES output: %s is missing", path, info->info_path);
  return 0;
}

int ramses_recognises(const char *path)
{
  char name[256];
  path_base_name(path, name, sizeof name);
  if (path_is_directory(path))
    return output_number(name, "output_", "") >= 0 || info_in_folder(path) >= 0;
  return output_number(name, "info_", ".txt") >= 0;
}

int ramses_file_name(const ramses_info *info, const char *kind, int cpu, char *out, size_t capacity)
{
  return path_format(out, capacity, "%s/%s_%05d.out%05d", info->folder, kind, info->output, cpu);
}

typedef struct info_key {
  const char *name;
  int is_int;
  size_t offset;
} info_key;

#define INT_KEY(k)                  \
  {                                 \
#k, 1, offsetof(ramses_info, k) \
  }
#define REAL_KEY(k)                 \
  {                                 \
#k, 0, offsetof(ramses_info, k) \
  }
static const info_key keys[] = {INT_KEY(ncpu),     INT_KEY(ndim),     INT_KEY(levelmin), INT_KEY(levelmax),
                                REAL_KEY(boxlen),  REAL_KEY(time),    REAL_KEY(aexp),    REAL_KEY(H0),
                                REAL_KEY(omega_m), REAL_KEY(omega_l), REAL_KEY(omega_k), REAL_KEY(omega_b),
                                REAL_KEY(unit_l),  REAL_KEY(unit_d),  REAL_KEY(unit_t)};
enum { N_KEYS = sizeof keys / sizeof keys[0] };

/* One "name = value" line: the value stored when the name is a key; its index, or -1. */
static int parse_line(char *line, ramses_info *info)
{
  char *equals = strchr(line, '=');
  if (!equals)
    return -1;
  *equals = '\0';
  char name[64];
  if (sscanf(line, " %63s", name) != 1)
    return -1;
  for (int k = 0; k < N_KEYS; ++k) {
    if (strcmp(name, keys[k].name) != 0)
      continue;
    char *end;
    const double value = strtod(equals + 1, &end);
    if (end == equals + 1 || !isfinite(value))
      return -1;
    if (keys[k].is_int)
      *(int *)((char *)info + keys[k].offset) = (int)value;
    else
      *(double *)((char *)info + keys[k].offset) = value;
    return k;
  }
  return -1;
}

int ramses_read_info(ramses_info *info, read_error *e)
{
  FILE *f = fopen(info->info_path, "r");
  if (!f)
    return read_fail_errno(e, "open", info->info_path);
  int seen[N_KEYS] = {0};
  char line[512];
  while (fgets(line, sizeof line, f)) {
    const int k = parse_line(line, info);
    if (k >= 0)
      seen[k] = 1;
  }
  fclose(f);
  for (int k = 0; k < N_KEYS; ++k)
    if (!seen[k])
      return read_fail(e, PHEW_ERROR_IO, "%s is not a RAMSES info file: no valid line \"%s = ...\"", info->info_path,
                       keys[k].name);
  if (info->ncpu < 1 || info->ndim != 3 || info->boxlen <= 0.0 || info->aexp <= 0.0)
    return read_fail(e, PHEW_ERROR_DATA,
                     "%s: ncpu %d, ndim %d, boxlen %g, aexp %g: only 3-D outputs with ncpu >= 1, "
                     "boxlen > 0 and aexp > 0 can be read",
                     info->info_path, info->ncpu, info->ndim, info->boxlen, info->aexp);
  return 0;
}

void ramses_snapshot_info(const ramses_info *info, phew_snapshot_info *out)
{
  memset(out, 0, sizeof *out);
  out->format = PHEW_FORMAT_RAMSES;
  snprintf(out->code, sizeof out->code, "RAMSES");
  snprintf(out->path, sizeof out->path, "%s", info->info_path);
  out->n_files = info->ncpu;
  /* RAMSES without cosmology writes H0 = 1 and aexp = 1 */
  out->cosmological = !(info->H0 == 1.0 && info->aexp == 1.0);
  out->time = info->time;
  out->scale_factor = out->cosmological ? info->aexp : 1.0;
  out->redshift = 1.0 / out->scale_factor - 1.0;
  out->hubble = out->cosmological ? info->H0 / 100.0 : 1.0;
  out->omega_matter = info->omega_m;
  out->omega_lambda = info->omega_l;
  out->omega_baryon = info->omega_b;
  for (int d = 0; d < 3; ++d) {
    out->box_origin[d] = 0.0;
    out->box_size[d] = info->boxlen;
    out->periodic[d] = out->cosmological;
  }
  out->units = PHEW_UNITS_CODE;
  snprintf(out->length_unit, sizeof out->length_unit, "code");
  snprintf(out->mass_unit, sizeof out->mass_unit, "code");
  snprintf(out->velocity_unit, sizeof out->velocity_unit, "code");
  out->code_length_cm = info->unit_l;
  out->code_mass_g = info->unit_d * info->unit_l * info->unit_l * info->unit_l;
  out->code_velocity_cm_s = info->unit_l / info->unit_t;
}
