#include "vtkPHEWMarkers.h"

#include "vtkCellArray.h"
#include "vtkCompositeDataSet.h"
#include "vtkDataArray.h"
#include "vtkDoubleArray.h"
#include "vtkInformation.h"
#include "vtkMultiBlockDataSet.h"
#include "vtkNew.h"
#include "vtkPointData.h"
#include "vtkPoints.h"
#include "vtkPolyData.h"
#include "vtkTable.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <vector>

namespace phew_markers
{
const char* const PEAK[3] = { "PeakX", "PeakY", "PeakZ" };
const char* const CENTRE_OF_MASS[3] = { "CenterOfMassX", "CenterOfMassY", "CenterOfMassZ" };
}

namespace
{
const char* const PHYSICS_CENTRE[3] = { "CenterX", "CenterY", "CenterZ" };

vtkDataArray* Column(vtkTable* table, const char* name)
{
  return table ? vtkArrayDownCast<vtkDataArray>(table->GetColumnByName(name)) : nullptr;
}

// The three named columns, or false when one is missing.
bool Columns(vtkTable* table, const char* const names[3], vtkDataArray* columns[3])
{
  for (int a = 0; a < 3; ++a)
  {
    columns[a] = Column(table, names[a]);
  }
  return columns[0] && columns[1] && columns[2];
}

// The physics' columns of the Clumps table (one row per clump) and, per marker, the clump row
// of its structure (-1: none).
struct Physics
{
  vtkDataArray* Centre[3] = { nullptr, nullptr, nullptr };
  vtkDataArray* R200c = nullptr;
  std::vector<vtkIdType> Row;

  bool Ran() const { return this->R200c != nullptr; }
  double R200cOf(vtkIdType marker) const
  {
    const vtkIdType row = this->Row[marker];
    return row < 0 ? NAN : this->R200c->GetTuple1(row);
  }
  double Radius(vtkIdType marker) const
  {
    const double r = this->R200cOf(marker);
    return std::isfinite(r) ? r : 0.0; // 0, not NaN: a NaN scale would spoil the glyphs' bounds
  }
};

Physics FindPhysics(vtkTable* clumps)
{
  Physics physics;
  vtkDataArray* centre[3];
  vtkDataArray* r200c = Column(clumps, "R200c");
  if (Columns(clumps, PHYSICS_CENTRE, centre) && r200c)
  {
    std::copy(centre, centre + 3, physics.Centre);
    physics.R200c = r200c;
  }
  return physics;
}

// Row r's structure is itself (a clump, a group).
void OwnRows(vtkTable* table, Physics& physics)
{
  physics.Row.resize(static_cast<size_t>(table->GetNumberOfRows()));
  for (vtkIdType r = 0; r < table->GetNumberOfRows(); ++r)
  {
    physics.Row[r] = r;
  }
}

// A halo's structure is its head clump, the one on the halo's densest peak (the halo's
// PeakId); with it come the clumps merged into it, so its R200c is the halo's.
void HeadClumpRows(vtkTable* clumps, vtkTable* haloes, Physics& physics)
{
  std::map<vtkIdType, vtkIdType> clumpOfPeak;
  vtkDataArray* clumpPeaks = Column(clumps, "PeakId");
  vtkDataArray* haloPeaks = Column(haloes, "PeakId");
  for (vtkIdType c = 0; clumpPeaks && c < clumps->GetNumberOfRows(); ++c)
  {
    clumpOfPeak[static_cast<vtkIdType>(clumpPeaks->GetTuple1(c))] = c;
  }
  physics.Row.assign(static_cast<size_t>(haloes->GetNumberOfRows()), -1);
  for (vtkIdType h = 0; haloPeaks && h < haloes->GetNumberOfRows(); ++h)
  {
    const auto head = clumpOfPeak.find(static_cast<vtkIdType>(haloPeaks->GetTuple1(h)));
    physics.Row[h] = head == clumpOfPeak.end() ? -1 : head->second;
  }
}

// Marker r's position: its structure's physics centre when there is one, else the row's own
// position columns.
void Position(vtkDataArray* const own[3], const Physics& physics, vtkIdType r, double x[3])
{
  const vtkIdType row = physics.Ran() ? physics.Row[r] : -1;
  for (int a = 0; a < 3; ++a)
  {
    x[a] = row < 0 ? NAN : physics.Centre[a]->GetTuple1(row);
  }
  if (!std::isfinite(x[0]) || !std::isfinite(x[1]) || !std::isfinite(x[2]))
  {
    for (int a = 0; a < 3; ++a)
    {
      x[a] = own[a]->GetTuple1(r);
    }
  }
}

// The glyph radius (and R200c where the table has none, i.e. on haloes) per marker.
void AddRadii(vtkTable* table, const Physics& physics, vtkPointData* data)
{
  vtkNew<vtkDoubleArray> radius;
  radius->SetName("GlyphRadius");
  radius->SetNumberOfTuples(table->GetNumberOfRows());
  vtkNew<vtkDoubleArray> r200c;
  r200c->SetName("R200c");
  r200c->SetNumberOfTuples(table->GetNumberOfRows());
  for (vtkIdType r = 0; r < table->GetNumberOfRows(); ++r)
  {
    radius->SetValue(r, physics.Radius(r));
    r200c->SetValue(r, physics.R200cOf(r));
  }
  data->AddArray(radius);
  if (!table->GetColumnByName("R200c"))
  {
    data->AddArray(r200c);
  }
}

// One vertex per row (placed by Position); every column becomes point data.
void TableToVertices(vtkTable* table, const char* const position[3], const Physics& physics,
  const char* scalars, vtkPolyData* vertices)
{
  vtkNew<vtkPoints> points;
  points->SetDataTypeToDouble();
  vtkNew<vtkCellArray> verts;
  vtkDataArray* own[3];
  if (Columns(table, position, own))
  {
    const vtkIdType rows = table->GetNumberOfRows();
    points->SetNumberOfPoints(rows);
    for (vtkIdType r = 0; r < rows; ++r)
    {
      double x[3];
      Position(own, physics, r, x);
      points->SetPoint(r, x);
      verts->InsertNextCell(1, &r);
    }
    for (vtkIdType c = 0; c < table->GetNumberOfColumns(); ++c)
    {
      vertices->GetPointData()->AddArray(table->GetColumn(c));
    }
    if (physics.Ran())
    {
      AddRadii(table, physics, vertices->GetPointData());
    }
    vertices->GetPointData()->SetActiveScalars(scalars);
  }
  vertices->SetPoints(points);
  vertices->SetVerts(verts);
}
}

namespace phew_markers
{
void BuildVertices(
  vtkTable* table, const char* const position[3], const char* scalars, vtkPolyData* vertices)
{
  vertices->Initialize();
  if (!table)
  {
    return;
  }
  Physics physics = FindPhysics(table);
  if (physics.Ran())
  {
    OwnRows(table, physics);
  }
  TableToVertices(table, position, physics, scalars, vertices);
}

void Build(vtkTable* clumps, vtkTable* haloes, vtkMultiBlockDataSet* markers)
{
  // A halo's structure is its head clump in the Clumps table, not a row of its own.
  Physics ofHaloes = FindPhysics(clumps);
  if (ofHaloes.Ran())
  {
    HeadClumpRows(clumps, haloes, ofHaloes);
  }
  vtkNew<vtkPolyData> peaks;
  vtkNew<vtkPolyData> centres;
  BuildVertices(clumps, PEAK, "ClumpId", peaks);
  TableToVertices(haloes, CENTRE_OF_MASS, ofHaloes, "HaloId", centres);
  markers->Initialize();
  markers->SetNumberOfBlocks(2);
  markers->SetBlock(0, peaks);
  markers->SetBlock(1, centres);
  markers->GetMetaData(0u)->Set(vtkCompositeDataSet::NAME(), "Clump Peaks");
  markers->GetMetaData(1u)->Set(vtkCompositeDataSet::NAME(), "Halo Centres");
}
}
