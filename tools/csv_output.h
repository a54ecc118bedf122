/* Writing the catalogue tables as CSV: a header of column names, then one row per object. */
#ifndef PHEW_CSV_OUTPUT_H
#define PHEW_CSV_OUTPUT_H

#include "file_io.h"
#include "phew/phew.h"

/* rows points at n_rows structs of row_size bytes (phew_object or phew_node). Failures stick
 * in out->error (text_close returns them). */
void csv_write_table(text_file *out, const phew_column *columns, int n_columns, const void *rows, int64_t n_rows,
                     size_t row_size);

#endif
