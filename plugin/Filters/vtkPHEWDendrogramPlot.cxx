#include "vtkPHEWDendrogramPlot.h"

#include "vtkCellArray.h"
#include "vtkCellData.h"
#include "vtkDoubleArray.h"
#include "vtkFieldData.h"
#include "vtkIdTypeArray.h"
#include "vtkIntArray.h"
#include "vtkNew.h"
#include "vtkPointData.h"
#include "vtkPoints.h"
#include "vtkPolyData.h"
#include "vtkSmartPointer.h"

#include <algorithm>
#include <unordered_map>
#include <vector>

namespace
{
// The values of the nodes, one tuple per point or per line.
struct NodeArrays
{
  vtkNew<vtkIdTypeArray> NodeIds, ParentIds, ClumpIds, LeafClumpIds, HaloIds;
  vtkNew<vtkIntArray> Levels;
  vtkNew<vtkDoubleArray> Masses, Peaks, Saddles;
  // A structure has the peak of its densest clump: its colour comes from that clump.
  std::unordered_map<int64_t, int64_t> ClumpOfPeak;

  explicit NodeArrays(const phew_clump_result& result)
  {
    this->NodeIds->SetName("NodeId");
    this->ParentIds->SetName("ParentId");
    this->ClumpIds->SetName("ClumpId");
    this->LeafClumpIds->SetName("LeafClumpId");
    this->HaloIds->SetName("HaloId");
    this->Levels->SetName("Level");
    this->Masses->SetName("Mass");
    this->Peaks->SetName("PeakDensity");
    this->Saddles->SetName("SaddleDensity");
    for (int64_t i = 0; i < result.n_nodes; ++i)
    {
      if (result.nodes[i].clump_id >= 0)
      {
        this->ClumpOfPeak[result.nodes[i].peak_id] = result.nodes[i].clump_id;
      }
    }
  }

  std::vector<vtkDataArray*> All()
  {
    return { this->NodeIds, this->ParentIds, this->ClumpIds, this->LeafClumpIds, this->HaloIds,
      this->Levels, this->Masses, this->Peaks, this->Saddles };
  }

  // The values of one node.
  void Append(const phew_node& node)
  {
    const auto found = this->ClumpOfPeak.find(node.peak_id);
    this->NodeIds->InsertNextValue(node.id);
    this->ParentIds->InsertNextValue(node.parent_id);
    this->LeafClumpIds->InsertNextValue(node.clump_id);
    this->ClumpIds->InsertNextValue(node.clump_id >= 0 ? node.clump_id
        : found != this->ClumpOfPeak.end()             ? found->second
                                                       : -1);
    this->HaloIds->InsertNextValue(node.halo_id);
    this->Levels->InsertNextValue(node.level);
    this->Masses->InsertNextValue(node.mass);
    this->Peaks->InsertNextValue(node.peak_density);
    this->Saddles->InsertNextValue(node.saddle_density);
  }
};

// Leaves are one unit apart in the layout; spread them so that the plot is as wide as it is
// tall (decades of density), whatever the number of clumps. Returns the leaves' spacing.
double SpreadLeaves(std::vector<phew_node_layout>& layout)
{
  double low = 0.0, high = 0.0, leaves = 0.0;
  for (size_t i = 0; i < layout.size(); ++i)
  {
    low = i == 0 ? layout[i].log_bottom
                 : std::min(low, std::min(layout[i].log_bottom, layout[i].log_top));
    high = i == 0 ? layout[i].log_top
                  : std::max(high, std::max(layout[i].log_bottom, layout[i].log_top));
    leaves = std::max(leaves, layout[i].x);
  }
  const double spacing = high > low && leaves > 0.0 ? (high - low) / leaves : 1.0;
  for (phew_node_layout& at : layout)
  {
    at.x *= spacing;
  }
  return spacing;
}

// The lines: one vertical per node (two points), then one horizontal per non-root node (one
// more point).
void DrawLines(const std::vector<phew_node_layout>& layout, vtkPolyData* plot)
{
  vtkNew<vtkPoints> points;
  points->SetDataTypeToDouble();
  vtkNew<vtkCellArray> lines;
  std::vector<vtkIdType> bottoms(layout.size());
  for (size_t i = 0; i < layout.size(); ++i)
  {
    const phew_node_layout& at = layout[i];
    const vtkIdType top = points->InsertNextPoint(at.x, at.log_top, 0.0);
    bottoms[i] = points->InsertNextPoint(at.x, at.log_bottom, 0.0);
    const vtkIdType vertical[2] = { top, bottoms[i] };
    lines->InsertNextCell(2, vertical);
  }
  for (size_t i = 0; i < layout.size(); ++i)
  {
    const int64_t parent = layout[i].parent_index;
    if (parent >= 0)
    {
      const vtkIdType end = points->InsertNextPoint(layout[parent].x, layout[i].log_bottom, 0.0);
      const vtkIdType horizontal[2] = { bottoms[i], end };
      lines->InsertNextCell(2, horizontal);
    }
  }
  plot->SetPoints(points);
  plot->SetLines(lines);
}

// Point data: two points per node, then one per non-root node, in DrawLines' order. Cell
// data: one vertical line per node, then one horizontal line per non-root node, each with the
// values of the first point of its node.
void AddNodeData(
  const phew_clump_result& result, const std::vector<phew_node_layout>& layout, vtkPolyData* plot)
{
  NodeArrays values(result);
  const int64_t n = result.n_nodes;
  for (int64_t i = 0; i < n; ++i)
  {
    values.Append(result.nodes[i]);
    values.Append(result.nodes[i]);
  }
  for (int64_t i = 0; i < n; ++i)
  {
    if (layout[i].parent_index >= 0)
    {
      values.Append(result.nodes[i]);
    }
  }
  const std::vector<vtkDataArray*> arrays = values.All();
  for (vtkDataArray* array : arrays)
  {
    plot->GetPointData()->AddArray(array);
    vtkSmartPointer<vtkDataArray> cells;
    cells.TakeReference(array->NewInstance());
    cells->SetName(array->GetName());
    plot->GetCellData()->AddArray(cells);
  }
  plot->GetPointData()->SetActiveScalars("ClumpId");
  for (int pass = 0; pass < 2; ++pass)
  {
    for (int64_t i = 0; i < n; ++i)
    {
      if (pass == 0 || layout[i].parent_index >= 0)
      {
        for (vtkDataArray* array : arrays)
        {
          plot->GetCellData()->GetArray(array->GetName())->InsertNextTuple(2 * i, array);
        }
      }
    }
  }
  plot->GetCellData()->SetActiveScalars("ClumpId");
}

// Field data: the log floor, for axis labels (densities <= 0 are drawn there), and the
// leaves' spacing.
void AddFieldData(double floor, double spacing, vtkPolyData* plot)
{
  vtkNew<vtkDoubleArray> floorArray;
  floorArray->SetName("Log10DensityFloor");
  floorArray->InsertNextValue(floor);
  plot->GetFieldData()->AddArray(floorArray);
  vtkNew<vtkDoubleArray> spacingArray;
  spacingArray->SetName("LeafSpacing");
  spacingArray->InsertNextValue(spacing);
  plot->GetFieldData()->AddArray(spacingArray);
}
}

namespace phew_dendrogram_plot
{
std::string Build(const phew_clump_result& result, vtkPolyData* plot)
{
  plot->Initialize();
  std::vector<phew_node_layout> layout(static_cast<size_t>(result.n_nodes));
  double floor = 0.0;
  phew_context core;
  phew_context_init(&core);
  if (phew_layout_dendrogram(&core, result.nodes, result.n_nodes, layout.data(), &floor) != PHEW_OK)
  {
    return std::string("the dendrogram cannot be drawn: ") + core.message;
  }
  const double spacing = SpreadLeaves(layout);
  DrawLines(layout, plot);
  AddNodeData(result, layout, plot);
  AddFieldData(floor, spacing, plot);
  return std::string();
}
}
