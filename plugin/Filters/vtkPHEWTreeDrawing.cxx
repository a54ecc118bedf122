#include "vtkPHEWTreeDrawing.h"

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
#include "vtkTable.h"

#include <algorithm>
#include <cmath>
#include <memory>

namespace
{
// The layout's result, freed with it.
struct Drawing
{
  phew_tree_drawing Tree{};
  ~Drawing() { phew_tree_drawing_free(&this->Tree); }
};

template <class ArrayType>
vtkSmartPointer<ArrayType> Named(const char* name, vtkIdType tuples)
{
  auto array = vtkSmartPointer<ArrayType>::New();
  array->SetName(name);
  array->SetNumberOfTuples(tuples);
  return array;
}

// Columns are ColumnSpacing apart: at most 1, and less when there are many, so that the
// drawing is at most twice as wide as it is tall (steps are 1 apart) and fits a view.
double ColumnSpacing(const phew_tree_drawing& t)
{
  const double height = static_cast<double>(std::max<int64_t>(t.last_step, 1));
  return t.n_columns > 1 ? std::min(1.0, 2.0 * height / static_cast<double>(t.n_columns - 1)) : 1.0;
}

// A radius for glyphs: 0.12 to 0.4 columns from the smallest to the largest log mass.
std::vector<double> Radii(const phew_tree_drawing& t, double spacing)
{
  double low = INFINITY, high = -INFINITY;
  for (int64_t v = 0; v < t.n_nodes; ++v)
  {
    if (t.nodes[v].mass > 0.0)
    {
      low = std::min(low, std::log10(t.nodes[v].mass));
      high = std::max(high, std::log10(t.nodes[v].mass));
    }
  }
  std::vector<double> radii(static_cast<size_t>(t.n_nodes));
  for (int64_t v = 0; v < t.n_nodes; ++v)
  {
    const double m = t.nodes[v].mass;
    const double f = !(m > 0.0) ? 0.0 : high > low ? (std::log10(m) - low) / (high - low) : 1.0;
    radii[v] = spacing * (0.12 + 0.28 * f);
  }
  return radii;
}

// Each node's colour: its final halo's, as phew_colour_haloes gives the last step's
// structures (in id order) by mass without positions (so neighbours in the drawing, side by
// side by mass, differ); -1 without a final halo or when the colours cannot be computed. The
// ten largest final haloes have the colours of the ten largest haloes of the 3D view.
std::vector<int32_t> Colours(const phew_tree_drawing& t)
{
  std::vector<int64_t> finals;
  std::vector<double> masses;
  for (int64_t v = 0; v < t.n_nodes; ++v)
  {
    if (t.nodes[v].step == t.last_step)
    {
      finals.push_back(t.nodes[v].id);
      masses.push_back(t.nodes[v].mass);
    }
  }
  std::vector<double> nowhere(3 * finals.size(), NAN);
  std::vector<int32_t> colour(finals.size(), -1);
  if (phew_colour_haloes(nullptr, static_cast<int64_t>(finals.size()), masses.data(),
        nowhere.data(), nullptr, colour.data()) != PHEW_OK)
  {
    colour.assign(finals.size(), -1);
  }
  std::vector<int32_t> byNode(static_cast<size_t>(t.n_nodes), -1);
  for (int64_t v = 0; v < t.n_nodes; ++v)
  {
    // (finals are in id order: the nodes are by step, then id)
    const auto at = std::lower_bound(finals.begin(), finals.end(), t.nodes[v].final_id);
    if (t.nodes[v].final_id >= 0 && at != finals.end() && *at == t.nodes[v].final_id)
    {
      byNode[v] = colour[static_cast<size_t>(at - finals.begin())];
    }
  }
  return byNode;
}

// One vertex per node, with its point data; vertices' cell data.
void DrawNodes(const phew_tree_drawing& t, const std::vector<double>& times,
  const std::vector<int32_t>& colours, vtkPolyData* out)
{
  const double spacing = ColumnSpacing(t);
  const std::vector<double> radii = Radii(t, spacing);
  const vtkIdType n = t.n_nodes;
  vtkNew<vtkPoints> points;
  points->SetDataTypeToDouble();
  points->SetNumberOfPoints(n);
  vtkNew<vtkCellArray> verts;
  auto ids = Named<vtkIdTypeArray>("StructureId", n), steps = Named<vtkIdTypeArray>("Step", n),
       finals = Named<vtkIdTypeArray>("FinalHaloId", n),
       progenitors = Named<vtkIdTypeArray>("NumberOfProgenitors", n);
  auto time = Named<vtkDoubleArray>("Time", n), mass = Named<vtkDoubleArray>("Mass", n),
       radius = Named<vtkDoubleArray>("Radius", n);
  auto main = Named<vtkIntArray>("MainBranch", n), colour = Named<vtkIntArray>("HaloColour", n);
  for (vtkIdType v = 0; v < n; ++v)
  {
    colour->SetValue(v, colours[v]);
    const phew_tree_node& node = t.nodes[v];
    points->SetPoint(v, node.x * spacing, static_cast<double>(node.step), 0.0);
    verts->InsertNextCell(1, &v);
    ids->SetValue(v, node.id);
    steps->SetValue(v, node.step);
    finals->SetValue(v, node.final_id);
    progenitors->SetValue(v, node.n_progenitors);
    time->SetValue(v, times[static_cast<size_t>(node.step)]);
    mass->SetValue(v, node.mass);
    radius->SetValue(v, radii[v]);
    main->SetValue(v, node.main_branch);
  }
  out->SetPoints(points);
  out->SetVerts(verts);
  for (vtkDataArray* array : std::initializer_list<vtkDataArray*>{
         ids, steps, time, mass, radius, finals, progenitors, main, colour })
  {
    out->GetPointData()->AddArray(array);
  }
  out->GetPointData()->SetActiveScalars("FinalHaloId");
  vtkNew<vtkDoubleArray> spacingArray;
  spacingArray->SetName("ColumnSpacing");
  spacingArray->InsertNextValue(spacing);
  out->GetFieldData()->AddArray(spacingArray);
}

// One line per edge, progenitor to descendant; cell data of the vertices, then the lines.
void DrawEdges(const phew_tree_drawing& t, const std::vector<int32_t>& colours, vtkPolyData* out)
{
  const vtkIdType cells = t.n_nodes + t.n_edges;
  vtkNew<vtkCellArray> lines;
  auto finals = Named<vtkIdTypeArray>("FinalHaloId", cells),
       rows = Named<vtkIdTypeArray>("HistoryRow", cells);
  auto ids = Named<vtkIdTypeArray>("StructureId", cells),
       steps = Named<vtkIdTypeArray>("Step", cells);
  auto mainLink = Named<vtkIntArray>("MainLink", cells),
       colour = Named<vtkIntArray>("HaloColour", cells);
  for (vtkIdType v = 0; v < t.n_nodes; ++v)
  {
    colour->SetValue(v, colours[v]);
    finals->SetValue(v, t.nodes[v].final_id);
    rows->SetValue(v, -1);
    mainLink->SetValue(v, 0);
    ids->SetValue(v, t.nodes[v].id);
    steps->SetValue(v, t.nodes[v].step);
  }
  for (vtkIdType e = 0; e < t.n_edges; ++e)
  {
    const phew_tree_edge& edge = t.edges[e];
    const vtkIdType ends[2] = { edge.progenitor, edge.descendant };
    lines->InsertNextCell(2, ends);
    // a tree's own line (to the progenitor's main descendant) has its final halo; a line that
    // takes part of a structure to another structure has none (grey with the GUI's colours)
    const bool main = t.nodes[edge.progenitor].descendant == edge.descendant;
    finals->SetValue(t.n_nodes + e, main ? t.nodes[edge.progenitor].final_id : -1);
    rows->SetValue(t.n_nodes + e, edge.row);
    mainLink->SetValue(t.n_nodes + e, main);
    colour->SetValue(t.n_nodes + e, main ? colours[edge.progenitor] : -1);
    ids->SetValue(t.n_nodes + e, t.nodes[edge.progenitor].id);
    steps->SetValue(t.n_nodes + e, t.nodes[edge.progenitor].step);
  }
  out->SetLines(lines);
  out->GetCellData()->AddArray(finals);
  out->GetCellData()->AddArray(rows);
  out->GetCellData()->AddArray(mainLink);
  out->GetCellData()->AddArray(ids);
  out->GetCellData()->AddArray(steps);
  out->GetCellData()->AddArray(colour);
  out->GetCellData()->SetActiveScalars("FinalHaloId");
}

// The chosen structure's node (its step -1: the last; its id -1: the most massive of the
// step, equal masses: the smaller id), or -1 with the problem in `problem` (none for an empty
// history, or the most massive of a step without structures).
int64_t ChosenNode(const phew_tree_drawing& t, phew_tree_plot::Choice chosen, std::string& problem)
{
  const int64_t step = chosen.Step < 0 ? t.last_step : chosen.Step;
  if (step > t.last_step)
  {
    problem = "Mass History: Structure Step " + std::to_string(step) +
      " is not a step of the history (0 to " + std::to_string(t.last_step) + "); -1: the last step";
    return -1;
  }
  int64_t found = -1;
  for (int64_t v = 0; v < t.n_nodes; ++v)
  {
    const phew_tree_node& node = t.nodes[v];
    if (node.step == step &&
      (chosen.Id >= 0 ? node.id == chosen.Id : (found < 0 || node.mass > t.nodes[found].mass)))
    {
      found = v;
    }
  }
  if (found < 0 && chosen.Id >= 0)
  {
    problem = "Mass History: step " + std::to_string(step) + " has no structure " +
      std::to_string(chosen.Id) +
      "; set Structure to one of its StructureId values in the Tree Drawing (or select a "
      "structure in a view), or -1 for the most massive";
  }
  return found;
}

// The branch through node `v`, oldest first: its main progenitors, `v`, its main descendants.
std::vector<int64_t> Branch(const phew_tree_drawing& t, int64_t v)
{
  std::vector<int64_t> branch;
  for (int64_t u = t.nodes[v].main_progenitor; u >= 0; u = t.nodes[u].main_progenitor)
  {
    branch.push_back(u);
  }
  std::reverse(branch.begin(), branch.end());
  for (int64_t u = v; u >= 0; u = t.nodes[u].descendant)
  {
    branch.push_back(u);
  }
  return branch;
}

// A one-value field data array.
void AddField(vtkTable* table, const char* name, int64_t value)
{
  auto array = Named<vtkIdTypeArray>(name, 1);
  array->SetValue(0, value);
  table->GetFieldData()->AddArray(array);
}

// The branch of the chosen structure; returns the problem or "".
std::string FillMassHistory(const phew_tree_drawing& t, const std::vector<double>& times,
  const std::vector<int32_t>& colours, phew_tree_plot::Choice chosen, vtkTable* table)
{
  std::string problem;
  const int64_t v = t.last_step < 0 ? -1 : ChosenNode(t, chosen, problem);
  if (v < 0)
  {
    return problem;
  }
  const std::vector<int64_t> branch = Branch(t, v);
  if (branch.size() < 2)
  {
    return std::string(); // one point: no line to draw (ParaView's line chart complains)
  }
  const vtkIdType n = static_cast<vtkIdType>(branch.size());
  auto steps = Named<vtkIdTypeArray>("Step", n), ids = Named<vtkIdTypeArray>("StructureId", n),
       progenitors = Named<vtkIdTypeArray>("NumberOfProgenitors", n),
       finals = Named<vtkIdTypeArray>("FinalHaloId", n);
  auto time = Named<vtkDoubleArray>("Time", n), mass = Named<vtkDoubleArray>("Mass", n);
  auto own = Named<vtkIntArray>("Chosen", n);
  for (vtkIdType r = 0; r < n; ++r)
  {
    const phew_tree_node& node = t.nodes[branch[r]];
    steps->SetValue(r, node.step);
    time->SetValue(r, times[static_cast<size_t>(node.step)]);
    ids->SetValue(r, node.id);
    mass->SetValue(r, node.mass);
    progenitors->SetValue(r, node.n_progenitors);
    finals->SetValue(r, t.nodes[v].final_id);
    own->SetValue(r, branch[r] == v);
  }
  for (vtkAbstractArray* column :
    std::initializer_list<vtkAbstractArray*>{ steps, time, ids, mass, progenitors, finals, own })
  {
    table->AddColumn(column);
  }
  AddField(table, "Structure", t.nodes[v].id);
  AddField(table, "StructureStep", t.nodes[v].step);
  AddField(table, "HaloColour", colours[v]);
  return std::string();
}
}

namespace phew_tree_plot
{
std::string Build(const Steps& steps, Choice chosen, vtkPolyData* drawing, vtkTable* massHistory)
{
  drawing->Initialize();
  massHistory->Initialize();
  std::vector<phew_link> rows;
  std::vector<int64_t> rowSteps;
  for (size_t k = 0; k < steps.Links.size(); ++k)
  {
    rows.insert(rows.end(), steps.Links[k].begin(), steps.Links[k].end());
    rowSteps.insert(rowSteps.end(), steps.Links[k].size(), static_cast<int64_t>(k));
  }
  Drawing layout;
  phew_context core;
  phew_context_init(&core);
  if (phew_layout_merger_tree(&core, rows.data(), rowSteps.data(),
        static_cast<int64_t>(rows.size()), &layout.Tree) != PHEW_OK)
  {
    return std::string("the merger tree cannot be drawn: ") + core.message;
  }
  const std::vector<int32_t> colours = Colours(layout.Tree);
  DrawNodes(layout.Tree, steps.Times, colours, drawing);
  DrawEdges(layout.Tree, colours, drawing);
  return FillMassHistory(layout.Tree, steps.Times, colours, chosen, massHistory);
}
}
