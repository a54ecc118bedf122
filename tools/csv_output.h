/* Writing the catalogue tables as CSV: a header of column names, then one row per object. */
#ifndef PHEW_CSV_OUTPUT_H
#define PHEW_CSV_OUTPUT_H

#include "phew/phew.h"

#include <stdio.h>

/* rows points at n_rows structs of row_size bytes (phew_object or phew_node). */
int csv_write_table(FILE *out, const phew_column *columns, int n_columns, const void *rows, int64_t n_rows,
                    size_t row_size);

#endif
