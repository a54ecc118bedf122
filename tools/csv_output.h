/* Writing the catalogue tables as CSV: a header of column names, then one row per object. */
#ifndef PHEW_CSV_OUTPUT_H
#define PHEW_CSV_OUTPUT_H

#include "file_io.h"
#include "phew/phew.h"

/* rows points at n_rows structs of row_size bytes (phew_object or phew_node). Failures stick
 * in out->error (text_close returns them). */
void csv_write_table(text_file *out, const phew_column *columns, int n_columns, const void *rows, int64_t n_rows,
                     size_t row_size);

/* One table joined from parts with the same rows (a finder's catalogue and the physics one):
 * the columns of every part in order, a name met before left out. */
typedef struct csv_part {
  const phew_column *columns;
  int n_columns;
  const void *rows;
  size_t row_size;
} csv_part;

void csv_write_joined(text_file *out, const csv_part *parts, int n_parts, int64_t n_rows);

#endif
