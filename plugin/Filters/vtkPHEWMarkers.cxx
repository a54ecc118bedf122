#include "vtkPHEWMarkers.h"

#include "vtkCellArray.h"
#include "vtkCompositeDataSet.h"
#include "vtkDataArray.h"
#include "vtkInformation.h"
#include "vtkMultiBlockDataSet.h"
#include "vtkNew.h"
#include "vtkPointData.h"
#include "vtkPoints.h"
#include "vtkPolyData.h"
#include "vtkTable.h"

namespace
{
// One vertex per row at (x, y, z) of the named columns; every column becomes point data.
void TableToVertices(
  vtkTable* table, const char* const position[3], const char* scalars, vtkPolyData* vertices)
{
  vtkNew<vtkPoints> points;
  points->SetDataTypeToDouble();
  vtkNew<vtkCellArray> verts;
  vtkDataArray* axes[3] = { nullptr, nullptr, nullptr };
  for (int a = 0; a < 3; ++a)
  {
    axes[a] = vtkArrayDownCast<vtkDataArray>(table->GetColumnByName(position[a]));
  }
  const vtkIdType rows = table->GetNumberOfRows();
  if (axes[0] && axes[1] && axes[2])
  {
    points->SetNumberOfPoints(rows);
    for (vtkIdType r = 0; r < rows; ++r)
    {
      points->SetPoint(r, axes[0]->GetTuple1(r), axes[1]->GetTuple1(r), axes[2]->GetTuple1(r));
      verts->InsertNextCell(1, &r);
    }
    for (vtkIdType c = 0; c < table->GetNumberOfColumns(); ++c)
    {
      vertices->GetPointData()->AddArray(table->GetColumn(c));
    }
    vertices->GetPointData()->SetActiveScalars(scalars);
  }
  vertices->SetPoints(points);
  vertices->SetVerts(verts);
}
}

namespace phew_markers
{
void Build(vtkTable* clumps, vtkTable* haloes, vtkMultiBlockDataSet* markers)
{
  static const char* const peak[3] = { "PeakX", "PeakY", "PeakZ" };
  static const char* const centre[3] = { "CenterOfMassX", "CenterOfMassY", "CenterOfMassZ" };
  vtkNew<vtkPolyData> peaks;
  vtkNew<vtkPolyData> centres;
  TableToVertices(clumps, peak, "ClumpId", peaks);
  TableToVertices(haloes, centre, "HaloId", centres);
  markers->Initialize();
  markers->SetNumberOfBlocks(2);
  markers->SetBlock(0, peaks);
  markers->SetBlock(1, centres);
  markers->GetMetaData(0u)->Set(vtkCompositeDataSet::NAME(), "Clump Peaks");
  markers->GetMetaData(1u)->Set(vtkCompositeDataSet::NAME(), "Halo Centres");
}
}
