#include "csv_output.h"

int csv_write_table(FILE *out, const phew_column *columns, int n_columns, const void *rows, int64_t n_rows,
                    size_t row_size)
{
  for (int c = 0; c < n_columns; ++c)
    fprintf(out, "%s%s", c ? "," : "", columns[c].name);
  fputc('\n', out);
  for (int64_t r = 0; r < n_rows; ++r) {
    const void *row = (const char *)rows + (size_t)r * row_size;
    for (int c = 0; c < n_columns; ++c) {
      if (c)
        fputc(',', out);
      if (columns[c].type == PHEW_COLUMN_DOUBLE)
        fprintf(out, "%.17g", phew_column_as_double(&columns[c], row));
      else
        fprintf(out, "%lld", (long long)phew_column_as_int64(&columns[c], row));
    }
    fputc('\n', out);
  }
  return ferror(out) ? -1 : 0;
}
