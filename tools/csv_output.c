#include "csv_output.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void csv_write_table(text_file *out, const phew_column *columns, int n_columns, const void *rows, int64_t n_rows,
                     size_t row_size)
{
  const csv_part part = {columns, n_columns, rows, row_size};
  csv_write_joined(out, &part, 1, n_rows);
}

/* Whether column c of part p repeats a name of an earlier column. */
static int repeated(const csv_part *parts, int p, int c)
{
  for (int q = 0; q <= p; ++q)
    for (int k = 0; k < (q < p ? parts[q].n_columns : c); ++k)
      if (!strcmp(parts[q].columns[k].name, parts[p].columns[c].name))
        return 1;
  return 0;
}

void csv_write_joined(text_file *out, const csv_part *parts, int n_parts, int64_t n_rows)
{
  int total = 0;
  for (int p = 0; p < n_parts; ++p)
    total += parts[p].n_columns;
  unsigned char *skip = malloc((size_t)total + 1); /* per column of every part, in order */
  if (!skip) {
    out->error = ENOMEM;
    return;
  }
  int first = 1;
  for (int p = 0, k = 0; p < n_parts; ++p)
    for (int c = 0; c < parts[p].n_columns; ++c, ++k) {
      skip[k] = (unsigned char)repeated(parts, p, c);
      if (!skip[k]) {
        text_printf(out, "%s%s", first ? "" : ",", parts[p].columns[c].name);
        first = 0;
      }
    }
  text_printf(out, "\n");
  for (int64_t r = 0; r < n_rows && !out->error; ++r) {
    first = 1;
    for (int p = 0, k = 0; p < n_parts; ++p) {
      const void *row = (const char *)parts[p].rows + (size_t)r * parts[p].row_size;
      for (int c = 0; c < parts[p].n_columns; ++c, ++k) {
        const phew_column *column = &parts[p].columns[c];
        if (skip[k])
          continue;
        if (column->type == PHEW_COLUMN_DOUBLE)
          text_printf(out, "%s%.17g", first ? "" : ",", phew_column_as_double(column, row));
        else
          text_printf(out, "%s%lld", first ? "" : ",", (long long)phew_column_as_int64(column, row));
        first = 0;
      }
    }
    text_printf(out, "\n");
  }
  free(skip);
}
