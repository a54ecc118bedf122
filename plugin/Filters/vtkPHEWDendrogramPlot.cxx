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
#include <cmath>
#include <string>
#include <unordered_map>
#include <vector>

namespace
{
// The values of the nodes, one tuple per point or per line.
struct NodeArrays
{
  vtkNew<vtkIdTypeArray> NodeIds, ParentIds, ClumpIds, LeafClumpIds, HaloIds;
  vtkNew<vtkIntArray> Levels, Ranks;
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
    this->Ranks->SetName("HaloRank");
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
      this->Levels, this->Ranks, this->Masses, this->Peaks, this->Saddles };
  }

  // The values of one node; `leaf`: its own LeafClumpId (false for a label's strokes, which
  // linked selection must not match).
  void Append(const phew_node& node, int64_t rank, bool leaf)
  {
    const auto found = this->ClumpOfPeak.find(node.peak_id);
    this->NodeIds->InsertNextValue(node.id);
    this->ParentIds->InsertNextValue(node.parent_id);
    this->LeafClumpIds->InsertNextValue(leaf ? node.clump_id : -1);
    this->ClumpIds->InsertNextValue(node.clump_id >= 0 ? node.clump_id
        : found != this->ClumpOfPeak.end()             ? found->second
                                                       : -1);
    this->HaloIds->InsertNextValue(node.halo_id);
    this->Levels->InsertNextValue(node.level);
    this->Ranks->InsertNextValue(static_cast<int>(rank));
    this->Masses->InsertNextValue(node.mass);
    this->Peaks->InsertNextValue(node.peak_density);
    this->Saddles->InsertNextValue(node.saddle_density);
  }
};

// The lines of a drawing, each with the node it belongs to.
struct Drawing
{
  vtkNew<vtkPoints> Points;
  vtkNew<vtkCellArray> Lines;
  std::vector<int64_t> LineNode; // per line: the node's index
  std::vector<bool> LineIsLabel;

  Drawing() { this->Points->SetDataTypeToDouble(); }

  void Line(double x0, double y0, double x1, double y1, int64_t node, bool label = false)
  {
    const vtkIdType ends[2] = { this->Points->InsertNextPoint(x0, y0, 0.0),
      this->Points->InsertNextPoint(x1, y1, 0.0) };
    this->Lines->InsertNextCell(2, ends);
    this->LineNode.push_back(node);
    this->LineIsLabel.push_back(label);
  }
};

// The node's vertical line, and its horizontal one to its parent's x (roots have none).
void DrawNode(Drawing& drawing, int64_t i, double x, double top, double bottom, double parentX)
{
  drawing.Line(x, top, x, bottom, i);
  if (!std::isnan(parentX))
  {
    drawing.Line(x, bottom, parentX, bottom, i);
  }
}

// A number drawn with the strokes of a seven-segment display, `height` tall, centred on x,
// from y up: the dendrogram's labels need digits alone, and lines keep them in the plot's data.
void DrawNumber(Drawing& drawing, int number, double x, double y, double height, int64_t node)
{
  // segments a b c d e f g, as (x0, y0, x1, y1) in a 1 x 2 cell
  static const double segment[7][4] = { { 0, 2, 1, 2 }, { 1, 2, 1, 1 }, { 1, 1, 1, 0 },
    { 0, 0, 1, 0 }, { 0, 0, 0, 1 }, { 0, 1, 0, 2 }, { 0, 1, 1, 1 } };
  static const char* const digits[10] = { "abcdef", "bc", "abged", "abgcd", "fgbc", "afgcd",
    "afgedc", "abc", "abcdefg", "abcdfg" };
  const std::string text = std::to_string(number);
  const double unit = height / 2.0, advance = 1.6 * unit;
  double left = x - 0.5 * (advance * static_cast<double>(text.size()) - 0.6 * unit);
  for (char c : text)
  {
    for (const char* s = digits[c - '0']; *s; ++s)
    {
      const double* at = segment[*s - 'a'];
      drawing.Line(
        left + unit * at[0], y + unit * at[1], left + unit * at[2], y + unit * at[3], node, true);
    }
    left += advance;
  }
}

// Point data (each line's two points) and cell data (each line) from the nodes' values.
void AddNodeData(const phew_clump_result& result, const std::vector<int64_t>& ranks,
  const Drawing& drawing, vtkPolyData* plot)
{
  NodeArrays points(result), cells(result);
  for (size_t line = 0; line < drawing.LineNode.size(); ++line)
  {
    const int64_t i = drawing.LineNode[line];
    const bool leaf = !drawing.LineIsLabel[line];
    cells.Append(result.nodes[i], ranks[i], leaf);
    points.Append(result.nodes[i], ranks[i], leaf);
    points.Append(result.nodes[i], ranks[i], leaf);
  }
  for (vtkDataArray* array : points.All())
  {
    plot->GetPointData()->AddArray(array);
  }
  for (vtkDataArray* array : cells.All())
  {
    plot->GetCellData()->AddArray(array);
  }
  plot->GetPointData()->SetActiveScalars("ClumpId");
  plot->GetCellData()->SetActiveScalars("ClumpId");
}

// Field data: the log floor, for axis labels (densities <= 0 are drawn there), the unit of x
// and (by mass) the mass cut used.
void AddFieldData(vtkPolyData* plot, const char* name, double value)
{
  vtkNew<vtkDoubleArray> array;
  array->SetName(name);
  array->InsertNextValue(value);
  plot->GetFieldData()->AddArray(array);
}

// The plot is `aspect` times as wide as it is tall (decades of density): the factor from the
// layout's x to the plot's.
double Stretch(double width, double low, double high, double aspect)
{
  return width > 0.0 && high > low ? aspect * (high - low) / width : 1.0;
}

// Even spacing (phew_layout_dendrogram): leaves one unit apart, then spread so that the plot
// is as wide as it is tall.
std::string DrawEven(const phew_clump_result& result, Drawing& drawing, vtkPolyData* plot)
{
  std::vector<phew_node_layout> layout(static_cast<size_t>(result.n_nodes));
  double floor = 0.0;
  phew_context core;
  phew_context_init(&core);
  if (phew_layout_dendrogram(&core, result.nodes, result.n_nodes, layout.data(), &floor) != PHEW_OK)
  {
    return std::string("the dendrogram cannot be drawn: ") + core.message;
  }
  double low = INFINITY, high = -INFINITY, leaves = 0.0;
  for (const phew_node_layout& at : layout)
  {
    low = std::min({ low, at.log_bottom, at.log_top });
    high = std::max({ high, at.log_bottom, at.log_top });
    leaves = std::max(leaves, at.x);
  }
  const double spacing = Stretch(leaves, low, high, 1.0);
  for (size_t i = 0; i < layout.size(); ++i)
  {
    const int64_t parent = layout[i].parent_index;
    DrawNode(drawing, static_cast<int64_t>(i), layout[i].x * spacing, layout[i].log_top,
      layout[i].log_bottom, parent >= 0 ? layout[parent].x * spacing : NAN);
  }
  AddFieldData(plot, "Log10DensityFloor", floor);
  AddFieldData(plot, "LeafSpacing", spacing);
  return std::string();
}

// By mass (phew_layout_dendrogram_by_mass): the drawn nodes, the ten most massive haloes'
// ranks (1 to 10) above their tops; the plot twice as wide as it is tall.
std::string DrawByMass(const phew_clump_result& result, double massCut, std::vector<int64_t>& ranks,
  Drawing& drawing, vtkPolyData* plot)
{
  std::vector<phew_mass_layout> layout(static_cast<size_t>(result.n_nodes));
  double floor = 0.0;
  phew_context core;
  phew_context_init(&core);
  if (phew_layout_dendrogram_by_mass(
        &core, result.nodes, result.n_nodes, massCut, layout.data(), &floor) != PHEW_OK)
  {
    return std::string("the dendrogram cannot be drawn: ") + core.message;
  }
  double low = INFINITY, high = -INFINITY, width = 0.0;
  for (const phew_mass_layout& at : layout)
  {
    if (!std::isnan(at.x))
    {
      low = std::min({ low, at.log_bottom, at.log_top });
      high = std::max({ high, at.log_bottom, at.log_top });
      width = std::max(width, at.x_high);
    }
  }
  const double stretch = Stretch(width, low, high, 2.0);
  const double digit = 0.06 * (high > low ? high - low : 1.0);
  for (size_t i = 0; i < layout.size(); ++i)
  {
    const phew_mass_layout& at = layout[i];
    ranks[i] = at.rank;
    if (std::isnan(at.x))
    {
      continue;
    }
    const int64_t parent = at.parent_index;
    DrawNode(drawing, static_cast<int64_t>(i), at.x * stretch, at.log_top, at.log_bottom,
      parent >= 0 ? layout[parent].x * stretch : NAN);
    if (at.rank >= 0 && at.rank < 10) // above the halo's highest peak
    {
      const double peak = result.nodes[i].peak_density;
      const double y = (peak > 0.0 ? std::log10(peak) : floor) + 0.4 * digit;
      DrawNumber(
        drawing, static_cast<int>(at.rank) + 1, at.x * stretch, y, digit, static_cast<int64_t>(i));
    }
  }
  AddFieldData(plot, "Log10DensityFloor", floor);
  AddFieldData(plot, "MassScale", stretch);
  AddFieldData(plot, "DendrogramMassCut", massCut);
  return std::string();
}
}

namespace phew_dendrogram_plot
{
double AutomaticMassCut(const phew_clump_result& result)
{
  double total = 0.0;
  for (int64_t i = 0; i < result.n_nodes; ++i)
  {
    total += result.nodes[i].parent_id < 0 ? result.nodes[i].mass : 0.0;
  }
  return 1e-3 * total;
}

std::string Build(const phew_clump_result& result, const Options& options, vtkPolyData* plot)
{
  plot->Initialize();
  Drawing drawing;
  std::vector<int64_t> ranks(static_cast<size_t>(result.n_nodes), -1);
  const double cut = options.MassCut < 0.0 ? AutomaticMassCut(result) : options.MassCut;
  const std::string problem = options.ByMass ? DrawByMass(result, cut, ranks, drawing, plot)
                                             : DrawEven(result, drawing, plot);
  if (!problem.empty())
  {
    plot->Initialize();
    return problem;
  }
  plot->SetPoints(drawing.Points);
  plot->SetLines(drawing.Lines);
  AddNodeData(result, ranks, drawing, plot);
  return std::string();
}
}
