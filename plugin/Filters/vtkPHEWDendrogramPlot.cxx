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

namespace vtkPHEWDendrogramPlot
{
std::string Build(const phew_clump_result& result, vtkPolyData* plot)
{
  plot->Initialize();
  const int64_t n = result.n_nodes;
  std::vector<phew_node_layout> layout(static_cast<size_t>(n));
  double floor = 0.0;
  phew_context core;
  phew_context_init(&core);
  if (phew_layout_dendrogram(&core, result.nodes, n, layout.data(), &floor) != PHEW_OK)
  {
    return std::string("the dendrogram cannot be drawn: ") + core.message;
  }

  // A structure has the peak of its densest clump: its colour comes from that clump.
  std::unordered_map<int64_t, int64_t> clumpOfPeak;
  for (int64_t i = 0; i < n; ++i)
  {
    if (result.nodes[i].clump_id >= 0)
    {
      clumpOfPeak[result.nodes[i].peak_id] = result.nodes[i].clump_id;
    }
  }

  vtkNew<vtkPoints> points;
  points->SetDataTypeToDouble();
  vtkNew<vtkCellArray> lines;
  vtkNew<vtkIdTypeArray> nodeIds, parentIds, clumpIds, leafClumpIds, haloIds;
  vtkNew<vtkIntArray> levels;
  vtkNew<vtkDoubleArray> masses, peaks, saddles;
  nodeIds->SetName("NodeId");
  parentIds->SetName("ParentId");
  clumpIds->SetName("ClumpId");
  leafClumpIds->SetName("LeafClumpId");
  haloIds->SetName("HaloId");
  levels->SetName("Level");
  masses->SetName("Mass");
  peaks->SetName("PeakDensity");
  saddles->SetName("SaddleDensity");
  // Per point or per line: the values of node i.
  auto append = [&](int64_t i) {
    const phew_node& node = result.nodes[i];
    const auto found = clumpOfPeak.find(node.peak_id);
    nodeIds->InsertNextValue(node.id);
    parentIds->InsertNextValue(node.parent_id);
    leafClumpIds->InsertNextValue(node.clump_id);
    clumpIds->InsertNextValue(node.clump_id >= 0 ? node.clump_id
        : found != clumpOfPeak.end()             ? found->second
                                                 : -1);
    haloIds->InsertNextValue(node.halo_id);
    levels->InsertNextValue(node.level);
    masses->InsertNextValue(node.mass);
    peaks->InsertNextValue(node.peak_density);
    saddles->InsertNextValue(node.saddle_density);
  };

  // Leaves are one unit apart in the layout; spread them so that the plot is as wide as it
  // is tall (decades of density), whatever the number of clumps.
  double low = 0.0, high = 0.0, leaves = 0.0;
  for (int64_t i = 0; i < n; ++i)
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

  std::vector<vtkIdType> bottoms(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
  {
    const phew_node_layout& at = layout[i];
    const vtkIdType top = points->InsertNextPoint(at.x, at.log_top, 0.0);
    bottoms[i] = points->InsertNextPoint(at.x, at.log_bottom, 0.0);
    const vtkIdType vertical[2] = { top, bottoms[i] };
    lines->InsertNextCell(2, vertical);
  }
  for (int64_t i = 0; i < n; ++i)
  {
    const int64_t parent = layout[i].parent_index;
    if (parent >= 0)
    {
      const vtkIdType end = points->InsertNextPoint(layout[parent].x, layout[i].log_bottom, 0.0);
      const vtkIdType horizontal[2] = { bottoms[i], end };
      lines->InsertNextCell(2, horizontal);
    }
  }
  // Point data: two points per node, then one per non-root node, in the order above.
  for (int64_t i = 0; i < n; ++i)
  {
    append(i);
    append(i);
  }
  for (int64_t i = 0; i < n; ++i)
  {
    if (layout[i].parent_index >= 0)
    {
      append(i);
    }
  }
  vtkDataArray* arrays[] = { nodeIds, parentIds, clumpIds, leafClumpIds, haloIds, levels, masses,
    peaks, saddles };
  for (vtkDataArray* array : arrays)
  {
    plot->GetPointData()->AddArray(array);
  }
  plot->GetPointData()->SetActiveScalars("ClumpId");

  // Cell data: one vertical line per node, then one horizontal line per non-root node.
  for (vtkDataArray* array : arrays)
  {
    vtkSmartPointer<vtkDataArray> cells;
    cells.TakeReference(array->NewInstance());
    cells->SetName(array->GetName());
    plot->GetCellData()->AddArray(cells);
  }
  for (int pass = 0; pass < 2; ++pass)
  {
    for (int64_t i = 0; i < n; ++i)
    {
      if (pass == 0 || layout[i].parent_index >= 0)
      {
        // The first point of node i carries its values.
        for (vtkDataArray* array : arrays)
        {
          plot->GetCellData()->GetArray(array->GetName())->InsertNextTuple(2 * i, array);
        }
      }
    }
  }
  plot->GetCellData()->SetActiveScalars("ClumpId");
  plot->SetPoints(points);
  plot->SetLines(lines);

  // The log floor, for axis labels: densities <= 0 are drawn there.
  vtkNew<vtkDoubleArray> floorArray;
  floorArray->SetName("Log10DensityFloor");
  floorArray->InsertNextValue(floor);
  plot->GetFieldData()->AddArray(floorArray);
  vtkNew<vtkDoubleArray> spacingArray;
  spacingArray->SetName("LeafSpacing");
  spacingArray->InsertNextValue(spacing);
  plot->GetFieldData()->AddArray(spacingArray);
  return std::string();
}
}
