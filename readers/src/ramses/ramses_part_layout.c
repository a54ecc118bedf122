/* Particle file layouts (ramses_part_layout.h). */
#include "paths.h"
#include "ramses_part_layout.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* The descriptor's type letters (Python struct codes, as RAMSES writes them). */
static int type_of_letter(char c, phew_value_type *type)
{
  static const char letters[] = "fdbhilqBHILQ";
  static const phew_value_type types[] = {PHEW_VALUE_FLOAT32, PHEW_VALUE_FLOAT64, PHEW_VALUE_INT8,   PHEW_VALUE_INT16,
                                          PHEW_VALUE_INT32,   PHEW_VALUE_INT64,   PHEW_VALUE_INT64,  PHEW_VALUE_UINT8,
                                          PHEW_VALUE_UINT16,  PHEW_VALUE_UINT32,  PHEW_VALUE_UINT64, PHEW_VALUE_UINT64};
  const char *at = c ? strchr(letters, c) : NULL;
  if (!at)
    return -1;
  *type = types[at - letters];
  return 0;
}

int part_layout_read_descriptor(const ramses_info *info, part_layout *layout, read_error *e)
{
  memset(layout, 0, sizeof *layout);
  char path[1400];
  if (path_format(path, sizeof path, "%s/part_file_descriptor.txt", info->folder) != 0 || !path_is_file(path))
    return 0;
  FILE *f = fopen(path, "r");
  if (!f)
    return read_fail_errno(e, "open", path);
  layout->from_descriptor = 1;
  char line[512];
  int number = 0;
  while (fgets(line, sizeof line, f) && e->status == PHEW_OK) {
    if (line[0] == '#' || strspn(line, " \t\r\n") == strlen(line))
      continue;
    int index;
    char name[64], letter = 0;
    if (sscanf(line, " %d , %63[^, \t] , %c", &index, name, &letter) != 3 || index != number + 1)
      read_fail(e, PHEW_ERROR_IO, "%s: line \"%.60s\" is not \"number, name, type\" (field %d expected)", path, line,
                number + 1);
    else if (number == PART_MAX_FIELDS || type_of_letter(letter, &layout->fields[number].type) != 0)
      read_fail(e, PHEW_ERROR_IO, "%s: field %d (%s) has the unknown type '%c' or there are too many fields", path,
                index, name, letter);
    else
      snprintf(layout->fields[number++].name, sizeof layout->fields[0].name, "%s", name);
  }
  fclose(f);
  layout->n_fields = number;
  if (e->status == PHEW_OK && number == 0)
    read_fail(e, PHEW_ERROR_IO, "%s lists no fields", path);
  return e->status == PHEW_OK ? 0 : -1;
}

static void add(part_layout *layout, const char *name, phew_value_type type)
{
  part_field *f = &layout->fields[layout->n_fields++];
  snprintf(f->name, sizeof f->name, "%s", name);
  f->type = type;
}

/* After x, v, mass, id and level: family and tag (1 byte each) and/or the birth time and
 * metallicity of stars (8 bytes each), in the order they come. */
static int classic_tail(const int64_t *lengths, int n, int64_t npart, part_layout *layout)
{
  int k = 0;
  while (k < n) {
    if (k + 1 < n && lengths[k] == npart && lengths[k + 1] == npart) {
      add(layout, "family", PHEW_VALUE_INT8);
      add(layout, "tag", PHEW_VALUE_INT8);
    } else if (k + 1 < n && lengths[k] == 8 * npart && lengths[k + 1] == 8 * npart) {
      add(layout, "birth_time", PHEW_VALUE_FLOAT64);
      add(layout, "metallicity", PHEW_VALUE_FLOAT64);
    } else
      return -1;
    k += 2;
  }
  return 0;
}

int part_layout_classic(const int64_t *lengths, int n_records, int64_t npart, const char *path, part_layout *layout,
                        read_error *e)
{
  static const char *names[] = {"position_x", "position_y", "position_z", "velocity_x",
                                "velocity_y", "velocity_z", "mass"};
  memset(layout, 0, sizeof *layout);
  int ok = n_records >= 9 && n_records <= 13 && npart > 0;
  for (int k = 0; ok && k < 7; ++k)
    ok = lengths[k] == 8 * npart;
  if (ok) {
    for (int k = 0; k < 7; ++k)
      add(layout, names[k], PHEW_VALUE_FLOAT64);
    ok = lengths[7] == 4 * npart || lengths[7] == 8 * npart;
    add(layout, "identity", lengths[7] == 4 * npart ? PHEW_VALUE_INT32 : PHEW_VALUE_INT64);
    ok = ok && lengths[8] == 4 * npart;
    add(layout, "levelp", PHEW_VALUE_INT32);
  }
  if (ok)
    ok = classic_tail(lengths + 9, n_records - 9, npart, layout) == 0;
  if (!ok)
    return read_fail(e, PHEW_ERROR_IO,
                     "%s: %d data records for %lld particles do not make the classic RAMSES particle layout "
                     "(x, v, mass, id, level[, family, tag][, birth time, metallicity]) and the output has no "
                     "part_file_descriptor.txt",
                     path, n_records, (long long)npart);
  return 0;
}

int part_layout_find(const part_layout *layout, const char *name)
{
  for (int k = 0; k < layout->n_fields; ++k)
    if (strcmp(layout->fields[k].name, name) == 0)
      return k;
  return -1;
}

static const struct {
  const char *name;
  int number;
} families[] = {{"DM", 1},           {"star", 2},          {"cloud", 3},          {"debris", 4},
                {"other", 5},        {"undefined", 127},   {"gas_tracer", 0},     {"DM_tracer", -1},
                {"star_tracer", -2}, {"cloud_tracer", -3}, {"debris_tracer", -4}, {"other_tracer", -5}};
enum { N_FAMILIES = sizeof families / sizeof families[0] };

int ramses_family_number(const char *name)
{
  for (int k = 0; k < N_FAMILIES; ++k)
    if (strcasecmp(name, families[k].name) == 0)
      return families[k].number;
  char *end;
  const long number = strtol(name, &end, 10);
  return end != name && *end == '\0' && number >= -128 && number <= 127 ? (int)number : -1000;
}

const char *ramses_family_name(int family)
{
  for (int k = 0; k < N_FAMILIES; ++k)
    if (families[k].number == family)
      return families[k].name;
  return "unnamed";
}
