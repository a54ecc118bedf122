// Private helper of the PHEW plugin: the core's catalogues (phew_clump_result,
// phew_group_result) as vtkTables. Column names, order and types come from
// phew_clump_columns(), phew_halo_columns(), phew_node_columns() and phew_group_columns(), the
// same lists the command-line tool writes as CSV headers.
#ifndef vtkPHEWTables_h
#define vtkPHEWTables_h

#include "phew/phew.h"

class vtkTable;

namespace phew_tables
{
/// Replaces the contents of `table` with one column per phew_column (int64 -> vtkIdTypeArray,
/// int32 -> vtkIntArray, double -> vtkDoubleArray) and one row per element of `rows`
/// (n_rows structs of row_size bytes: phew_object or phew_node).
void Fill(vtkTable* table, const phew_column* columns, int n_columns, const void* rows,
  int64_t n_rows, size_t row_size);
/// The columns appended to a table (n_rows rows of row_size bytes), those whose name the table
/// has already left out.
void AddColumns(vtkTable* table, const phew_column* columns, int n_columns, const void* rows,
  int64_t n_rows, size_t row_size);

/// The three catalogues of a result.
void FillClumps(vtkTable* table, const phew_clump_result& result);
void FillHaloes(vtkTable* table, const phew_clump_result& result);
void FillDendrogram(vtkTable* table, const phew_clump_result& result);

/// The group catalogue of a halo finder (phew_group_columns()).
void FillGroups(vtkTable* table, const phew_group_result& result);

/// The run's figures, as field data of `table`: PHEWSeconds (the wall time of the core's call
/// on this rank), PHEWStageSeconds (one component per stage, named as phew_stage_name says:
/// the slowest rank's time) and PHEWNumberOfRanks.
void AddRunFigures(vtkTable* table, const phew_clump_result& result, double seconds);
}

#endif
