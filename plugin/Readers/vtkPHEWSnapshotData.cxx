#include "vtkPHEWSnapshotData.h"

#include "vtkAMRBox.h"
#include "vtkAMRUtilities.h"
#include "vtkCellArray.h"
#include "vtkCellData.h"
#include "vtkDoubleArray.h"
#include "vtkFieldData.h"
#include "vtkFloatArray.h"
#include "vtkIntArray.h"
#include "vtkOverlappingAMR.h"
#include "vtkPointData.h"
#include "vtkPoints.h"
#include "vtkPolyData.h"
#include "vtkStringArray.h"
#include "vtkTypeInt16Array.h"
#include "vtkTypeInt32Array.h"
#include "vtkTypeInt64Array.h"
#include "vtkTypeInt8Array.h"
#include "vtkTypeUInt16Array.h"
#include "vtkTypeUInt32Array.h"
#include "vtkTypeUInt64Array.h"
#include "vtkTypeUInt8Array.h"
#include "vtkUniformGrid.h"

#include <algorithm>
#include <cstdlib>
#include <vector>

namespace phew_snapshot_data
{
namespace
{
// A malloc'd array handed to VTK, which frees it.
template <class ArrayT>
vtkSmartPointer<vtkDataArray> Adopt(
  void* values, vtkIdType tuples, int components, const char* name)
{
  auto array = vtkSmartPointer<ArrayT>::New();
  array->SetNumberOfComponents(components);
  using Value = typename ArrayT::ValueType;
  array->SetArray(static_cast<Value*>(values), tuples * components, 0, ArrayT::VTK_DATA_ARRAY_FREE);
  if (name)
  {
    array->SetName(name);
  }
  return array;
}

vtkSmartPointer<vtkDataArray> AdoptReal(
  phew_scalar_type type, void* values, vtkIdType tuples, int components, const char* name)
{
  return type == PHEW_FLOAT32 ? Adopt<vtkFloatArray>(values, tuples, components, name)
                              : Adopt<vtkDoubleArray>(values, tuples, components, name);
}

vtkSmartPointer<vtkDataArray> AdoptField(const phew_particle_field& f, vtkIdType tuples)
{
  switch (f.type)
  {
    case PHEW_VALUE_FLOAT32:
      return Adopt<vtkFloatArray>(f.values, tuples, f.components, f.name);
    case PHEW_VALUE_FLOAT64:
      return Adopt<vtkDoubleArray>(f.values, tuples, f.components, f.name);
    case PHEW_VALUE_INT8:
      return Adopt<vtkTypeInt8Array>(f.values, tuples, f.components, f.name);
    case PHEW_VALUE_INT16:
      return Adopt<vtkTypeInt16Array>(f.values, tuples, f.components, f.name);
    case PHEW_VALUE_INT32:
      return Adopt<vtkTypeInt32Array>(f.values, tuples, f.components, f.name);
    case PHEW_VALUE_INT64:
      return Adopt<vtkTypeInt64Array>(f.values, tuples, f.components, f.name);
    case PHEW_VALUE_UINT8:
      return Adopt<vtkTypeUInt8Array>(f.values, tuples, f.components, f.name);
    case PHEW_VALUE_UINT16:
      return Adopt<vtkTypeUInt16Array>(f.values, tuples, f.components, f.name);
    case PHEW_VALUE_UINT32:
      return Adopt<vtkTypeUInt32Array>(f.values, tuples, f.components, f.name);
    default:
      return Adopt<vtkTypeUInt64Array>(f.values, tuples, f.components, f.name);
  }
}

void AddString(vtkFieldData* fields, const char* name, const char* value)
{
  auto array = vtkSmartPointer<vtkStringArray>::New();
  array->SetName(name);
  array->InsertNextValue(value);
  fields->AddArray(array);
}

void AddDoubles(vtkFieldData* fields, const char* name, const double* values, int n)
{
  auto array = vtkSmartPointer<vtkDoubleArray>::New();
  array->SetName(name);
  array->SetNumberOfComponents(n);
  array->InsertNextTuple(values);
  fields->AddArray(array);
}
}

void AddMetadata(vtkFieldData* fields, const phew_snapshot_info& info)
{
  AddString(fields, "SnapshotPath", info.path);
  AddString(fields, "Code", info.code);
  AddString(fields, "Format", phew_snapshot_format_name(info.format));
  AddString(fields, "Units", info.units == PHEW_UNITS_ASTRO ? "astro" : "code");
  AddString(fields, "LengthUnit", info.length_unit);
  AddString(fields, "MassUnit", info.mass_unit);
  AddString(fields, "VelocityUnit", info.velocity_unit);
  AddDoubles(fields, "BoxOrigin", info.box_origin, 3);
  AddDoubles(fields, "BoxSize", info.box_size, 3);
  auto periodic = vtkSmartPointer<vtkIntArray>::New();
  periodic->SetName("Periodic");
  periodic->SetNumberOfComponents(3);
  periodic->InsertNextTypedTuple(info.periodic);
  fields->AddArray(periodic);
  const double scalars[] = { static_cast<double>(info.cosmological), info.scale_factor,
    info.redshift, info.time, info.hubble, info.omega_matter, info.omega_lambda,
    info.omega_baryon };
  const char* names[] = { "Cosmological", "ScaleFactor", "Redshift", "Time", "HubbleParam",
    "OmegaMatter", "OmegaLambda", "OmegaBaryon" };
  for (int k = 0; k < 8; ++k)
  {
    AddDoubles(fields, names[k], &scalars[k], 1);
  }
}

vtkSmartPointer<vtkPolyData> Particles(phew_particle_set& set)
{
  const vtkIdType n = set.n;
  auto poly = vtkSmartPointer<vtkPolyData>::New();
  auto points = vtkSmartPointer<vtkPoints>::New();
  points->SetData(AdoptReal(set.type, set.position, n, 3, nullptr));
  set.position = nullptr;
  poly->SetPoints(points);
  auto offsets = vtkSmartPointer<vtkTypeInt64Array>::New();
  auto connectivity = vtkSmartPointer<vtkTypeInt64Array>::New();
  offsets->SetNumberOfValues(n + 1);
  connectivity->SetNumberOfValues(n);
  for (vtkIdType i = 0; i <= n; ++i)
  {
    offsets->SetValue(i, i);
    if (i < n)
    {
      connectivity->SetValue(i, i);
    }
  }
  auto verts = vtkSmartPointer<vtkCellArray>::New();
  verts->SetData(offsets, connectivity);
  poly->SetVerts(verts);
  vtkPointData* data = poly->GetPointData();
  if (set.velocity)
  {
    data->AddArray(AdoptReal(set.type, set.velocity, n, 3, "Velocities"));
    set.velocity = nullptr;
  }
  data->AddArray(AdoptReal(set.type, set.mass, n, 1, "Masses"));
  set.mass = nullptr;
  data->AddArray(Adopt<vtkTypeInt64Array>(set.id, n, 1, "ParticleIDs"));
  set.id = nullptr;
  for (int k = 0; k < set.n_fields; ++k)
  {
    data->AddArray(AdoptField(set.fields[k], n));
    set.fields[k].values = nullptr;
  }
  AddMetadata(poly->GetFieldData(), set.info);
  return poly;
}

namespace
{
vtkSmartPointer<vtkUniformGrid> BlockGrid(const phew_amr_set& set, int64_t b)
{
  const phew_amr_box& box = set.hierarchy.boxes[b];
  const double* spacing = set.hierarchy.levels[box.level].spacing;
  auto grid = vtkSmartPointer<vtkUniformGrid>::New();
  int dims[3];
  double origin[3];
  vtkIdType cells = 1;
  for (int d = 0; d < 3; ++d)
  {
    dims[d] = static_cast<int>(box.hi[d] - box.lo[d] + 2);
    origin[d] = set.hierarchy.origin[d] + static_cast<double>(box.lo[d]) * spacing[d];
    cells *= dims[d] - 1;
  }
  grid->SetOrigin(origin);
  grid->SetSpacing(spacing[0], spacing[1], spacing[2]);
  grid->SetDimensions(dims);
  for (int v = 0; v < set.n_variables; ++v)
  {
    auto array = vtkSmartPointer<vtkDoubleArray>::New();
    array->SetName(set.variable_names[v]);
    array->SetNumberOfValues(cells);
    std::copy(set.values[b] + v * cells, set.values[b] + (v + 1) * cells, array->GetPointer(0));
    grid->GetCellData()->AddArray(array);
  }
  return grid;
}
}

vtkSmartPointer<vtkOverlappingAMR> AMR(phew_amr_set& set)
{
  const phew_amr_hierarchy& h = set.hierarchy;
  std::vector<int> perLevel(h.n_levels, 0);
  for (int64_t b = 0; b < h.n_boxes; ++b)
  {
    ++perLevel[h.boxes[b].level];
  }
  auto amr = vtkSmartPointer<vtkOverlappingAMR>::New();
  if (h.n_levels == 0)
  {
    return amr;
  }
  amr->Initialize(h.n_levels, perLevel.data());
  amr->SetOrigin(h.origin);
  amr->SetGridDescription(VTK_XYZ_GRID);
  for (int l = 0; l < h.n_levels; ++l)
  {
    amr->SetSpacing(l, h.levels[l].spacing);
    amr->SetRefinementRatio(l, 2);
  }
  std::vector<int> next(h.n_levels, 0);
  for (int64_t b = 0; b < h.n_boxes; ++b)
  {
    const phew_amr_box& box = h.boxes[b];
    const int lo[3] = { static_cast<int>(box.lo[0]), static_cast<int>(box.lo[1]),
      static_cast<int>(box.lo[2]) };
    const int hi[3] = { static_cast<int>(box.hi[0]), static_cast<int>(box.hi[1]),
      static_cast<int>(box.hi[2]) };
    const unsigned int index = static_cast<unsigned int>(next[box.level]++);
    amr->SetAMRBox(box.level, index, vtkAMRBox(lo, hi));
    if (box.held)
    {
      amr->SetDataSet(box.level, index, BlockGrid(set, b));
      std::free(set.values[b]);
      set.values[b] = nullptr;
    }
  }
  vtkAMRUtilities::BlankCells(amr);
  AddMetadata(amr->GetFieldData(), set.info);
  return amr;
}
}
