#include "csv_output.h"

void csv_write_table(text_file *out, const phew_column *columns, int n_columns, const void *rows, int64_t n_rows,
                     size_t row_size)
{
  for (int c = 0; c < n_columns; ++c)
    text_printf(out, "%s%s", c ? "," : "", columns[c].name);
  text_printf(out, "\n");
  for (int64_t r = 0; r < n_rows && !out->error; ++r) {
    const void *row = (const char *)rows + (size_t)r * row_size;
    for (int c = 0; c < n_columns; ++c) {
      if (columns[c].type == PHEW_COLUMN_DOUBLE)
        text_printf(out, "%s%.17g", c ? "," : "", phew_column_as_double(&columns[c], row));
      else
        text_printf(out, "%s%lld", c ? "," : "", (long long)phew_column_as_int64(&columns[c], row));
    }
    text_printf(out, "\n");
  }
}
