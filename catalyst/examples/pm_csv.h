/* Rows of libphew's tables (catalogues, merger-tree links) as CSV, in the format the Catalyst
 * scripts and the command-line tool write: integers as integers, doubles with %.17g. */
#ifndef PM_CSV_H
#define PM_CSV_H

#include <phew/phew.h>

#include <stdio.h>

/* The header line: `prefix` (e.g. "TimeStep,", or "") then the columns' names. */
void pm_csv_header(FILE *f, const char *prefix, const phew_column *columns, int n_columns);
/* One row (a phew_object, phew_link...), after `prefix` (e.g. "120,", or ""). */
void pm_csv_row(FILE *f, const char *prefix, const phew_column *columns, int n_columns, const void *row);

#endif
