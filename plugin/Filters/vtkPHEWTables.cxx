#include "vtkPHEWTables.h"

#include "vtkDoubleArray.h"
#include "vtkFieldData.h"
#include "vtkIdTypeArray.h"
#include "vtkIntArray.h"
#include "vtkSmartPointer.h"
#include "vtkTable.h"

namespace phew_tables
{

void Fill(vtkTable* table, const phew_column* columns, int n_columns, const void* rows,
  int64_t n_rows, size_t row_size)
{
  table->Initialize();
  AddColumns(table, columns, n_columns, rows, n_rows, row_size);
}

void AddColumns(vtkTable* table, const phew_column* columns, int n_columns, const void* rows,
  int64_t n_rows, size_t row_size)
{
  const char* base = static_cast<const char*>(rows);
  for (int c = 0; c < n_columns; ++c)
  {
    const phew_column& column = columns[c];
    if (table->GetColumnByName(column.name))
    {
      continue;
    }
    vtkSmartPointer<vtkDataArray> array;
    switch (column.type)
    {
      case PHEW_COLUMN_INT64:
      {
        auto values = vtkSmartPointer<vtkIdTypeArray>::New();
        values->SetNumberOfTuples(n_rows);
        for (int64_t r = 0; r < n_rows; ++r)
        {
          values->SetValue(r, phew_column_as_int64(&column, base + r * row_size));
        }
        array = values;
        break;
      }
      case PHEW_COLUMN_INT32:
      {
        auto values = vtkSmartPointer<vtkIntArray>::New();
        values->SetNumberOfTuples(n_rows);
        for (int64_t r = 0; r < n_rows; ++r)
        {
          values->SetValue(r, static_cast<int>(phew_column_as_int64(&column, base + r * row_size)));
        }
        array = values;
        break;
      }
      case PHEW_COLUMN_DOUBLE:
      default:
      {
        auto values = vtkSmartPointer<vtkDoubleArray>::New();
        values->SetNumberOfTuples(n_rows);
        for (int64_t r = 0; r < n_rows; ++r)
        {
          values->SetValue(r, phew_column_as_double(&column, base + r * row_size));
        }
        array = values;
        break;
      }
    }
    array->SetName(column.name);
    table->AddColumn(array);
  }
}

void FillClumps(vtkTable* table, const phew_clump_result& result)
{
  int n = 0;
  const phew_column* columns = phew_clump_columns(result.columns, &n);
  Fill(table, columns, n, result.clumps, result.n_clumps, sizeof(phew_object));
}

void FillHaloes(vtkTable* table, const phew_clump_result& result)
{
  int n = 0;
  const phew_column* columns = phew_halo_columns(result.columns, &n);
  Fill(table, columns, n, result.haloes, result.n_haloes, sizeof(phew_object));
}

void FillDendrogram(vtkTable* table, const phew_clump_result& result)
{
  int n = 0;
  const phew_column* columns = phew_node_columns(result.columns, &n);
  Fill(table, columns, n, result.nodes, result.n_nodes, sizeof(phew_node));
}

void FillGroups(vtkTable* table, const phew_group_result& result)
{
  int n = 0;
  const phew_column* columns = phew_group_columns(result.columns, &n);
  Fill(table, columns, n, result.groups, result.n_groups, sizeof(phew_group));
}

void AddRunFigures(vtkTable* table, const phew_clump_result& result, double seconds)
{
  auto wall = vtkSmartPointer<vtkDoubleArray>::New();
  wall->SetName("PHEWSeconds");
  wall->InsertNextValue(seconds);
  auto stages = vtkSmartPointer<vtkDoubleArray>::New();
  stages->SetName("PHEWStageSeconds");
  stages->SetNumberOfComponents(PHEW_STAGE_COUNT);
  stages->SetNumberOfTuples(1);
  for (int s = 0; s < PHEW_STAGE_COUNT; ++s)
  {
    stages->SetComponentName(s, phew_stage_name(s));
    stages->SetComponent(0, s, result.stats.seconds[s]);
  }
  auto ranks = vtkSmartPointer<vtkIntArray>::New();
  ranks->SetName("PHEWNumberOfRanks");
  ranks->InsertNextValue(result.stats.n_ranks);
  // The thresholds used (automatic ones resolved) and the mean density they come from.
  const char* const names[3] = { "PHEWDensityThreshold", "PHEWSaddleThreshold", "PHEWMeanDensity" };
  const double values[3] = { result.density_threshold_used, result.saddle_threshold_used,
    result.mean_density };
  vtkFieldData* fields = table->GetFieldData();
  for (int i = 0; i < 3; ++i)
  {
    auto value = vtkSmartPointer<vtkDoubleArray>::New();
    value->SetName(names[i]);
    value->InsertNextValue(values[i]);
    fields->AddArray(value);
  }
  fields->AddArray(wall);
  fields->AddArray(stages);
  fields->AddArray(ranks);
}
}
