#include "pm_csv.h"

void pm_csv_header(FILE *f, const char *prefix, const phew_column *columns, int n_columns)
{
  fputs(prefix, f);
  for (int c = 0; c < n_columns; ++c)
    fprintf(f, "%s%s", c ? "," : "", columns[c].name);
  fputc('\n', f);
}

void pm_csv_row(FILE *f, const char *prefix, const phew_column *columns, int n_columns, const void *row)
{
  fputs(prefix, f);
  for (int c = 0; c < n_columns; ++c) {
    if (columns[c].type == PHEW_COLUMN_DOUBLE)
      fprintf(f, "%s%.17g", c ? "," : "", phew_column_as_double(&columns[c], row));
    else
      fprintf(f, "%s%lld", c ? "," : "", (long long)phew_column_as_int64(&columns[c], row));
  }
  fputc('\n', f);
}
