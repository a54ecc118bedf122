/* The fields of RAMSES particle files: from part_file_descriptor.txt, or, for older outputs
 * without it, the classic layout recognised from the records' sizes. */
#ifndef PHEW_READERS_RAMSES_PART_LAYOUT_H
#define PHEW_READERS_RAMSES_PART_LAYOUT_H

#include "ramses.h"

#include <stdint.h>

enum { PART_MAX_FIELDS = 64 };

typedef struct part_field {
  char name[64];
  phew_value_type type;
} part_field;

typedef struct part_layout {
  int from_descriptor; /* 0: the classic layout */
  int n_fields;
  part_field fields[PART_MAX_FIELDS];
} part_layout;

/* The descriptor's fields, or n_fields 0 and from_descriptor 0 when the output has none. */
int part_layout_read_descriptor(const ramses_info *info, part_layout *layout, read_error *e);
/* The classic layout from the byte lengths of one file's data records (npart particles). */
int part_layout_classic(const int64_t *lengths, int n_records, int64_t npart, const char *path, part_layout *layout,
                        read_error *e);
/* The field's index, or -1. */
int part_layout_find(const part_layout *layout, const char *name);

/* RAMSES's particle families (pm_commons): "DM" 1, "star" 2, ... or a number; -1000 if NAME
 * is neither. */
int ramses_family_number(const char *name);
const char *ramses_family_name(int family);

#endif
