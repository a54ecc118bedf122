#include "vtkPHEWClumpGeometry.h"

#include "vtkCellArray.h"
#include "vtkCellData.h"
#include "vtkCompositeDataIterator.h"
#include "vtkCompositeDataSet.h"
#include "vtkDataArray.h"
#include "vtkDataSetAttributes.h"
#include "vtkIdTypeArray.h"
#include "vtkImageData.h"
#include "vtkNew.h"
#include "vtkPointData.h"
#include "vtkPointSet.h"
#include "vtkPoints.h"
#include "vtkPolyData.h"
#include "vtkSmartPointer.h"
#include "vtkUnsignedCharArray.h"

#include <string>
#include <utility>
#include <vector>

namespace
{
const char* const LabelNames[] = { "ClumpId", "HaloId", "PeakPatchId" };

// The arrays copied to the geometry: the labels and the density, those the data has.
std::vector<vtkDataArray*> ArraysToCopy(vtkDataSetAttributes* attributes, const char* densityName)
{
  std::vector<vtkDataArray*> arrays;
  for (const char* name : LabelNames)
  {
    if (vtkDataArray* array = attributes->GetArray(name))
    {
      arrays.push_back(array);
    }
  }
  if (densityName && densityName[0])
  {
    if (vtkDataArray* density = attributes->GetArray(densityName))
    {
      arrays.push_back(density);
    }
  }
  return arrays;
}

// Output arrays of the same names and types, empty, in `attributes`; ClumpId the scalars.
std::vector<vtkDataArray*> MakeOutputArrays(
  const std::vector<vtkDataArray*>& inputs, vtkDataSetAttributes* attributes)
{
  std::vector<vtkDataArray*> outputs;
  for (vtkDataArray* input : inputs)
  {
    vtkSmartPointer<vtkDataArray> output;
    output.TakeReference(input->NewInstance());
    output->SetName(input->GetName());
    output->SetNumberOfComponents(input->GetNumberOfComponents());
    attributes->AddArray(output);
    outputs.push_back(output);
  }
  attributes->SetActiveScalars("ClumpId");
  return outputs;
}

// The faces of one image (or AMR block): cells are the image cells (cell data) or the
// voxels of one spacing around the points (point data).
class ImageFaces
{
public:
  ImageFaces(vtkPoints* points, vtkCellArray* polys, vtkDataSetAttributes* outAttributes)
    : Points(points)
    , Polys(polys)
    , OutAttributes(outAttributes)
  {
  }

  void Add(vtkImageData* image, const char* densityName)
  {
    bool pointCells = false;
    vtkDataSetAttributes* attributes = nullptr;
    vtkIdTypeArray* clumps = FindClumpIds(image, attributes, pointCells);
    if (!clumps)
    {
      return;
    }
    std::vector<vtkDataArray*> inputs = ArraysToCopy(attributes, densityName);
    if (this->Outputs.empty())
    {
      this->Outputs = MakeOutputArrays(inputs, this->OutAttributes);
    }
    else if (inputs.size() != this->Outputs.size())
    {
      return; // a block without the same arrays (cannot happen for the filter's own output)
    }
    this->Inputs = std::move(inputs);
    const Cells cells = CellsOf(image, pointCells);
    if (clumps->GetNumberOfTuples() != cells.Count())
    {
      return;
    }
    const unsigned char* ghosts = nullptr;
    if (auto* ghostArray = vtkUnsignedCharArray::SafeDownCast(
          attributes->GetArray(vtkDataSetAttributes::GhostArrayName())))
    {
      ghosts = ghostArray->GetPointer(0);
    }
    const unsigned char duplicate = pointCells
      ? static_cast<unsigned char>(vtkDataSetAttributes::DUPLICATEPOINT)
      : static_cast<unsigned char>(vtkDataSetAttributes::DUPLICATECELL);
    this->AddOuterFaces(cells, clumps->GetPointer(0), ghosts, duplicate);
  }

private:
  // The PHEW cells of an image: their number per axis, the corner of the first and their size.
  struct Cells
  {
    int Dims[3];
    double Corner[3], Size[3];
    vtkIdType Count() const
    {
      return static_cast<vtkIdType>(this->Dims[0]) * this->Dims[1] * this->Dims[2];
    }
  };

  // ClumpId of the cells, else of the points (pointCells); nullptr if neither has it.
  static vtkIdTypeArray* FindClumpIds(
    vtkImageData* image, vtkDataSetAttributes*& attributes, bool& pointCells)
  {
    attributes = image->GetCellData();
    auto* clumps = vtkIdTypeArray::SafeDownCast(attributes->GetArray("ClumpId"));
    pointCells = false;
    if (!clumps)
    {
      attributes = image->GetPointData();
      clumps = vtkIdTypeArray::SafeDownCast(attributes->GetArray("ClumpId"));
      pointCells = true;
    }
    return clumps;
  }

  static Cells CellsOf(vtkImageData* image, bool pointCells)
  {
    const int* extent = image->GetExtent();
    const double* origin = image->GetOrigin();
    const double* spacing = image->GetSpacing();
    Cells cells;
    for (int a = 0; a < 3; ++a)
    {
      const int points = extent[2 * a + 1] - extent[2 * a] + 1;
      if (pointCells)
      {
        cells.Dims[a] = points;
        cells.Size[a] = spacing[a];
        cells.Corner[a] = origin[a] + (extent[2 * a] - 0.5) * spacing[a];
      }
      else
      {
        // A flat axis of cell data: the cells are flat there (size 0), one layer.
        cells.Dims[a] = points > 1 ? points - 1 : 1;
        cells.Size[a] = points > 1 ? spacing[a] : 0.0;
        cells.Corner[a] = origin[a] + extent[2 * a] * spacing[a];
      }
    }
    return cells;
  }

  // The faces of the clump cells (id >= 0, not duplicates) towards cells outside every
  // clump or the edge of the image.
  void AddOuterFaces(
    const Cells& cells, const vtkIdType* id, const unsigned char* ghosts, unsigned char duplicate)
  {
    const int* dims = cells.Dims;
    const vtkIdType stride[3] = { 1, dims[0], static_cast<vtkIdType>(dims[0]) * dims[1] };
    for (int k = 0; k < dims[2]; ++k)
    {
      for (int j = 0; j < dims[1]; ++j)
      {
        for (int i = 0; i < dims[0]; ++i)
        {
          const vtkIdType c = i + stride[1] * j + stride[2] * k;
          if (id[c] < 0 || (ghosts && (ghosts[c] & duplicate)))
          {
            continue;
          }
          const int index[3] = { i, j, k };
          for (int a = 0; a < 3; ++a)
          {
            for (int side = 0; side < 2; ++side)
            {
              // A flat axis has one face (both sides coincide).
              if (cells.Size[a] == 0.0 && side == 1)
              {
                continue;
              }
              const int n = index[a] + (side ? 1 : -1);
              if (n >= 0 && n < dims[a] && id[c + (side ? stride[a] : -stride[a])] >= 0)
              {
                continue; // inside the clumps' union
              }
              this->AddFace(cells.Corner, cells.Size, index, a, side, c);
            }
          }
        }
      }
    }
  }

  // The quad of cell `index` on side `side` of axis `a`, wound to face outwards.
  void AddFace(const double corner[3], const double size[3], const int index[3], int a, int side,
    vtkIdType cell)
  {
    const int u = (a + 1) % 3, v = (a + 2) % 3;
    double lo[3];
    for (int d = 0; d < 3; ++d)
    {
      lo[d] = corner[d] + index[d] * size[d];
    }
    lo[a] += side ? size[a] : 0.0;
    const int du[4] = { 0, 1, 1, 0 };
    const int dv[4] = { 0, 0, 1, 1 };
    vtkIdType ids[4];
    for (int q = 0; q < 4; ++q)
    {
      // (u, v, a) is right-handed: counter-clockwise seen from +a; reversed for the low side.
      const int r = side ? q : 3 - q;
      double p[3] = { lo[0], lo[1], lo[2] };
      p[u] += du[r] * size[u];
      p[v] += dv[r] * size[v];
      ids[q] = this->Points->InsertNextPoint(p);
    }
    this->Polys->InsertNextCell(4, ids);
    for (size_t n = 0; n < this->Inputs.size(); ++n)
    {
      this->Outputs[n]->InsertNextTuple(cell, this->Inputs[n]);
    }
  }

  vtkPoints* Points;
  vtkCellArray* Polys;
  vtkDataSetAttributes* OutAttributes;
  std::vector<vtkDataArray*> Inputs;
  std::vector<vtkDataArray*> Outputs;
};

// One vertex per clump particle of every point set.
void AddParticles(
  const std::vector<vtkPointSet*>& sets, const char* densityName, vtkPolyData* geometry)
{
  vtkNew<vtkPoints> points;
  points->SetDataTypeToDouble();
  vtkNew<vtkCellArray> verts;
  std::vector<vtkDataArray*> outputs;
  for (vtkPointSet* set : sets)
  {
    vtkPointData* attributes = set->GetPointData();
    auto* clumps = vtkIdTypeArray::SafeDownCast(attributes->GetArray("ClumpId"));
    if (!clumps || clumps->GetNumberOfTuples() != set->GetNumberOfPoints())
    {
      continue;
    }
    const std::vector<vtkDataArray*> inputs = ArraysToCopy(attributes, densityName);
    if (outputs.empty())
    {
      outputs = MakeOutputArrays(inputs, geometry->GetPointData());
    }
    else if (inputs.size() != outputs.size())
    {
      continue;
    }
    const unsigned char* ghosts = nullptr;
    if (auto* ghostArray = vtkUnsignedCharArray::SafeDownCast(
          attributes->GetArray(vtkDataSetAttributes::GhostArrayName())))
    {
      ghosts = ghostArray->GetPointer(0);
    }
    for (vtkIdType p = 0; p < set->GetNumberOfPoints(); ++p)
    {
      if (clumps->GetValue(p) < 0 || (ghosts && (ghosts[p] & vtkDataSetAttributes::DUPLICATEPOINT)))
      {
        continue;
      }
      const vtkIdType id = points->InsertNextPoint(set->GetPoint(p));
      verts->InsertNextCell(1, &id);
      for (size_t n = 0; n < inputs.size(); ++n)
      {
        outputs[n]->InsertNextTuple(p, inputs[n]);
      }
    }
  }
  geometry->SetPoints(points);
  geometry->SetVerts(verts);
}
}

namespace phew_clump_geometry
{
void Build(vtkDataObject* labels, const char* densityName, vtkPolyData* geometry)
{
  geometry->Initialize();
  if (!labels)
  {
    return;
  }
  std::vector<vtkImageData*> images;
  std::vector<vtkPointSet*> sets;
  if (auto* image = vtkImageData::SafeDownCast(labels))
  {
    images.push_back(image);
  }
  else if (auto* set = vtkPointSet::SafeDownCast(labels))
  {
    sets.push_back(set);
  }
  else if (auto* composite = vtkCompositeDataSet::SafeDownCast(labels))
  {
    vtkSmartPointer<vtkCompositeDataIterator> it;
    it.TakeReference(composite->NewIterator());
    for (it->InitTraversal(); !it->IsDoneWithTraversal(); it->GoToNextItem())
    {
      vtkDataObject* block = it->GetCurrentDataObject();
      if (auto* blockImage = vtkImageData::SafeDownCast(block))
      {
        images.push_back(blockImage);
      }
      else if (auto* blockSet = vtkPointSet::SafeDownCast(block))
      {
        sets.push_back(blockSet);
      }
    }
  }

  if (!images.empty())
  {
    vtkNew<vtkPoints> points;
    points->SetDataTypeToDouble();
    vtkNew<vtkCellArray> polys;
    ImageFaces faces(points, polys, geometry->GetCellData());
    for (vtkImageData* image : images)
    {
      faces.Add(image, densityName);
    }
    geometry->SetPoints(points);
    geometry->SetPolys(polys);
  }
  else if (!sets.empty())
  {
    // Particles carry the density PHEW used (estimated or given) as "Density".
    AddParticles(sets, "Density", geometry);
  }
}
}
