#include "vtkPHEWAMRInput.h"

#include "vtkAMRBox.h"
#include "vtkAMRInformation.h"
#include "vtkAOSDataArrayTemplate.h"
#include "vtkCellData.h"
#include "vtkDataArray.h"
#include "vtkDataObject.h"
#include "vtkIdTypeArray.h"
#include "vtkInformation.h"
#include "vtkMultiProcessController.h"
#include "vtkOverlappingAMR.h"
#include "vtkSmartPointer.h"
#include "vtkUniformGrid.h"

#include <algorithm>

namespace phew_adaptors
{
namespace
{
constexpr int kLabelTag = 851; // point-to-point messages: labels of duplicated blocks

std::string BlockName(unsigned int level, unsigned int index)
{
  return "block " + std::to_string(index) + " of level " + std::to_string(level);
}

// The hierarchy as this rank sees it, in the core's terms (phew_amr_hierarchy), and the VTK
// level and index of each box.
struct SeenHierarchy
{
  std::vector<phew_amr_level> Levels;
  std::vector<phew_amr_box> Boxes;
  AMRInput::BlockIds Ids;
  double Origin[3] = { 0, 0, 0 };
};

// The dataset of a block if this rank holds it: a block a rank does not hold is a null
// dataset (an empty one counts as not held).
vtkUniformGrid* HeldGrid(vtkOverlappingAMR* amr, unsigned int level, unsigned int index)
{
  vtkUniformGrid* grid = amr->GetDataSet(level, index);
  return grid && grid->GetNumberOfPoints() > 0 ? grid : nullptr;
}

SeenHierarchy ReadHierarchy(vtkOverlappingAMR* amr)
{
  SeenHierarchy seen;
  vtkAMRInformation* info = amr->GetAMRInfo();
  const unsigned int nLevels = info ? info->GetNumberOfLevels() : 0;
  for (unsigned int l = 0; l < nLevels; ++l)
  {
    phew_amr_level level{};
    info->GetSpacing(l, level.spacing);
    level.refinement = amr->GetRefinementRatio(l);
    seen.Levels.push_back(level);
    for (unsigned int i = 0; i < info->GetNumberOfDataSets(l); ++i)
    {
      int lo[3], hi[3];
      info->GetAMRBox(l, i).GetDimensions(lo, hi);
      phew_amr_box box{};
      box.level = static_cast<int32_t>(l);
      box.held = HeldGrid(amr, l, i) ? 1 : 0;
      std::copy(lo, lo + 3, box.lo);
      std::copy(hi, hi + 3, box.hi);
      seen.Boxes.push_back(box);
      seen.Ids.emplace_back(l, i);
    }
  }
  if (info)
  {
    info->GetOrigin(seen.Origin);
  }
  return seen;
}

// A held block's dataset must have the cells of its box.
std::string CheckDataset(
  vtkOverlappingAMR* amr, const phew_amr_box& box, unsigned int level, unsigned int index)
{
  vtkUniformGrid* grid = box.held ? HeldGrid(amr, level, index) : nullptr;
  if (!grid)
  {
    return std::string();
  }
  int points[3];
  grid->GetDimensions(points);
  for (int d = 0; d < 3; ++d)
  {
    const long long boxCells = box.hi[d] - box.lo[d] + 1;
    const long long gridCells = points[d] > 1 ? points[d] - 1 : (boxCells < 1 ? 0 : 1);
    if (gridCells != boxCells)
    {
      return "the dataset of " + BlockName(level, index) + " has " + std::to_string(points[0] - 1) +
        "x" + std::to_string(points[1] - 1) + "x" + std::to_string(points[2] - 1) +
        " cells, but its AMR box has " + std::to_string(box.hi[0] - box.lo[0] + 1) + "x" +
        std::to_string(box.hi[1] - box.lo[1] + 1) + "x" + std::to_string(box.hi[2] - box.lo[2] + 1);
    }
  }
  return std::string();
}

std::string PointDataProblem(const std::string& name)
{
  return "the density array '" + name +
    "' is point data; PHEW on AMR needs cell data (one value per cell of each block: convert "
    "it with Point Data to Cell Data)";
}

// The density array of an owned block: a one-component cell array with a value per cell.
std::string CheckDensity(vtkDataArray* array, int association, const std::string& name,
  long long cells, const AMRInput::Source& s)
{
  if (!array)
  {
    return name.empty() ? "no density array selected (set Density to a cell array)"
                        : "the density array '" + name + "' is not a cell array of " +
        BlockName(s.Level, s.Index) + " of the AMR";
  }
  if (association == vtkDataObject::FIELD_ASSOCIATION_POINTS)
  {
    return PointDataProblem(name);
  }
  if (association != vtkDataObject::FIELD_ASSOCIATION_CELLS)
  {
    return "the density array '" + name + "' must be cell data";
  }
  if (array->GetNumberOfComponents() != 1)
  {
    return "the density array '" + name + "' has " +
      std::to_string(array->GetNumberOfComponents()) +
      " components; PHEW needs a scalar (1 component)";
  }
  if (array->GetNumberOfTuples() != cells)
  {
    return "the density array '" + name + "' has " + std::to_string(array->GetNumberOfTuples()) +
      " values on " + BlockName(s.Level, s.Index) + " of the AMR, which has " +
      std::to_string(cells) + " cells";
  }
  return std::string();
}

vtkSmartPointer<vtkIdTypeArray> NewLabelArray(const char* name, const int64_t* values, vtkIdType n)
{
  auto array = vtkSmartPointer<vtkIdTypeArray>::New();
  array->SetName(name);
  array->SetNumberOfTuples(n);
  if (values)
  {
    std::copy(values, values + n, array->GetPointer(0));
  }
  return array;
}

// The three label arrays of a block (PeakPatchId, ClumpId, HaloId).
struct LabelArrays
{
  vtkSmartPointer<vtkIdTypeArray> Arrays[3];
};
const char* const LabelNames[3] = { PHEW_ARRAY_PEAK_PATCH_ID, PHEW_ARRAY_CLUMP_ID,
  PHEW_ARRAY_HALO_ID };

// The owner's labels of a block (`own`: cells values per array), sent on to the other
// holders. Every rank walks the blocks in the same order, so the sends and receives pair up
// without a deadlock.
LabelArrays SendLabels(const Context& context, const std::vector<int>& holders,
  const int64_t* const own[3], vtkIdType cells, std::vector<vtkIdType>& message)
{
  LabelArrays labels;
  for (int c = 0; c < 3; ++c)
  {
    labels.Arrays[c] = NewLabelArray(LabelNames[c], own[c], cells);
  }
  if (holders.size() > 1)
  {
    message.resize(3 * static_cast<size_t>(cells));
    for (int c = 0; c < 3; ++c)
    {
      std::copy(own[c], own[c] + cells, message.begin() + c * cells);
    }
    for (int r : holders)
    {
      if (r != context.Rank)
      {
        context.Controller->Send(message.data(), 3 * cells, r, kLabelTag);
      }
    }
  }
  return labels;
}

// The labels of a block another rank owns, from that rank.
LabelArrays ReceiveLabels(
  const Context& context, int owner, vtkIdType cells, std::vector<vtkIdType>& message)
{
  LabelArrays labels;
  message.resize(3 * static_cast<size_t>(cells));
  context.Controller->Receive(message.data(), 3 * cells, owner, kLabelTag);
  for (int c = 0; c < 3; ++c)
  {
    labels.Arrays[c] = NewLabelArray(LabelNames[c], nullptr, cells);
    std::copy(message.begin() + c * cells, message.begin() + (c + 1) * cells,
      labels.Arrays[c]->GetPointer(0));
  }
  return labels;
}

// Appends the values of a one-component array to `out` (any numeric type).
template <typename T>
void AppendValues(vtkDataArray* array, std::vector<T>& out)
{
  const vtkIdType n = array->GetNumberOfTuples();
  if (auto* f = vtkArrayDownCast<vtkAOSDataArrayTemplate<float>>(array))
  {
    out.insert(out.end(), f->GetPointer(0), f->GetPointer(0) + n);
  }
  else if (auto* d = vtkArrayDownCast<vtkAOSDataArrayTemplate<double>>(array))
  {
    out.insert(out.end(), d->GetPointer(0), d->GetPointer(0) + n);
  }
  else
  {
    for (vtkIdType i = 0; i < n; ++i)
    {
      out.push_back(static_cast<T>(array->GetComponent(i, 0)));
    }
  }
}

// The arrays one after the other in `out` (at least one value); returns its data.
template <typename T>
T* Concatenate(const std::vector<vtkDataArray*>& arrays, long long cells, std::vector<T>& out)
{
  out.reserve(static_cast<size_t>(std::max(cells, 1LL)));
  for (vtkDataArray* array : arrays)
  {
    AppendValues(array, out);
  }
  out.resize(std::max<size_t>(out.size(), 1));
  return out.data();
}
}

AMRInput::AMRInput(vtkOverlappingAMR* amr)
  : AMR(amr)
{
}

AMRInput::~AMRInput() = default;

//------------------------------------------------------------------------------
std::string AMRInput::Prepare(Context& context, phew_input& in, phew_labels& labels)
{
  context.DensityName = SelectedName(context);
  in.mesh = PHEW_MESH_AMR;
  std::string problem = this->Describe(context);
  if (problem.empty())
  {
    problem = this->GatherDensity(context, in);
  }
  if (!problem.empty())
  {
    return problem;
  }
  phew_amr& desc = in.amr;
  desc.n_blocks = static_cast<int64_t>(this->Blocks.size());
  desc.blocks = this->Blocks.data();
  for (int d = 0; d < 3; ++d)
  {
    desc.level0_dims[d] = this->DomainDims[d];
    desc.origin[d] = this->Origin[d];
    desc.spacing[d] = this->Spacing[d];
    desc.periodic[d] = context.Periodic ? 1 : 0;
  }
  const size_t n = static_cast<size_t>(std::max(this->OwnCells, 1LL));
  for (auto& buffer : this->Labels)
  {
    buffer.assign(n, -1);
  }
  labels.peak_patch_id = this->Labels[0].data();
  labels.clump_id = this->Labels[1].data();
  labels.halo_id = this->Labels[2].data();
  return std::string();
}

//------------------------------------------------------------------------------
// The block list, the domain and the owners (phew_plan_amr: the agreement over the ranks, the
// levels kept, the shift, the owners). Collective; the problem it returns is agreed.
std::string AMRInput::Describe(Context& context)
{
  const SeenHierarchy seen = ReadHierarchy(this->AMR);
  // The datasets of the blocks this rank holds must match their boxes: agreed after the plan,
  // whose problems come first.
  std::string local;
  for (size_t k = 0; k < seen.Boxes.size() && local.empty(); ++k)
  {
    local = CheckDataset(this->AMR, seen.Boxes[k], seen.Ids[k].first, seen.Ids[k].second);
  }
  phew_amr_hierarchy hierarchy{};
  hierarchy.n_levels = static_cast<int32_t>(seen.Levels.size());
  hierarchy.levels = seen.Levels.data();
  std::copy(seen.Origin, seen.Origin + 3, hierarchy.origin);
  hierarchy.n_boxes = static_cast<int64_t>(seen.Boxes.size());
  hierarchy.boxes = seen.Boxes.data();
  phew_context core = CoreContext(context);
  phew_amr_plan plan;
  if (phew_plan_amr(&core, &hierarchy, &plan) != PHEW_OK) // the same message on every rank
  {
    return core.message;
  }
  this->TakePlan(plan, seen.Ids);
  const int nLevels = hierarchy.n_levels, kept = static_cast<int>(plan.n_levels);
  phew_amr_plan_free(&plan);
  if (kept < nLevels)
  {
    context.Warning = "levels " + std::to_string(kept) + " to " + std::to_string(nLevels - 1) +
      " of the AMR are not loaded (no rank holds their blocks): PHEW runs on levels 0 to " +
      std::to_string(kept - 1) +
      ". To use every level, load them all (XMLUniformGridAMRReader: DefaultNumberOfLevels = 0).";
  }
  return AgreeOnProblem(context, local);
}

//------------------------------------------------------------------------------
// The plan's blocks, domain and holders into the adaptor's members.
void AMRInput::TakePlan(const phew_amr_plan& plan, const BlockIds& ids)
{
  const size_t n = static_cast<size_t>(plan.amr.n_blocks);
  this->Blocks.assign(plan.amr.blocks, plan.amr.blocks + n);
  this->Sources.assign(n, Source());
  for (size_t k = 0; k < n; ++k)
  {
    this->Sources[k] = Source{ ids[k].first, ids[k].second, -1,
      std::vector<int>(
        plan.holders + plan.holder_start[k], plan.holders + plan.holder_start[k + 1]) };
  }
  for (int d = 0; d < 3; ++d)
  {
    this->DomainDims[d] = plan.amr.level0_dims[d];
    this->Origin[d] = plan.amr.origin[d];
    this->Spacing[d] = plan.amr.spacing[d];
  }
}

//------------------------------------------------------------------------------
// The density of this rank's blocks, concatenated in list order. Collective; the problem it
// returns is agreed.
std::string AMRInput::GatherDensity(Context& context, phew_input& in)
{
  std::vector<vtkDataArray*> arrays;
  bool needDouble = false;
  std::string problem = this->CollectDensity(context, arrays, needDouble);

  // Agreement: the first problem, and double values on every rank if any rank needs them.
  const int mine[2] = { problem.empty() ? 0 : 1, needDouble ? 1 : 0 };
  std::vector<int> all(mine, mine + 2);
  if (context.NumberOfRanks > 1)
  {
    all.resize(2 * static_cast<size_t>(context.NumberOfRanks));
    context.Controller->AllGather(mine, all.data(), 2);
  }
  bool useDouble = false;
  for (int r = 0; r < context.NumberOfRanks; ++r)
  {
    if (all[2 * r])
    {
      return SharedProblem(context, r, problem);
    }
    useDouble |= all[2 * r + 1] != 0;
  }
  this->UseDensity(arrays, useDouble, in);
  return std::string();
}

//------------------------------------------------------------------------------
// The density arrays of the blocks this rank owns, in list order, with the first cell of
// each in the buffers; needDouble when one is not float. Returns this rank's problem.
std::string AMRInput::CollectDensity(
  Context& context, std::vector<vtkDataArray*>& arrays, bool& needDouble)
{
  const std::string selected = SelectedName(context);
  vtkInformation* selection = context.ArraySelection;
  if (selection && selection->Has(vtkDataObject::FIELD_ASSOCIATION()) &&
    selection->Get(vtkDataObject::FIELD_ASSOCIATION()) == vtkDataObject::FIELD_ASSOCIATION_POINTS)
  {
    return PointDataProblem(selected);
  }
  this->OwnCells = 0;
  for (size_t k = 0; k < this->Blocks.size(); ++k)
  {
    if (this->Blocks[k].owner != context.Rank)
    {
      continue;
    }
    const Source& s = this->Sources[k];
    vtkUniformGrid* grid = this->AMR->GetDataSet(s.Level, s.Index);
    const phew_amr_block& b = this->Blocks[k];
    const long long cells = b.dims[0] * b.dims[1] * b.dims[2];
    int association = -1;
    vtkDataArray* array = context.Density(grid, association);
    const std::string name = array && array->GetName() ? array->GetName() : selected;
    const std::string problem = CheckDensity(array, association, name, cells, s);
    if (!problem.empty())
    {
      return problem;
    }
    if (context.DensityName.empty())
    {
      context.DensityName = name;
    }
    needDouble |= !vtkArrayDownCast<vtkAOSDataArrayTemplate<float>>(array);
    this->Sources[k].FirstCell = this->OwnCells;
    this->OwnCells += cells;
    arrays.push_back(array);
  }
  return std::string();
}

//------------------------------------------------------------------------------
// The core's density: one block of the right type is read in place; otherwise the blocks are
// copied one after the other (other numeric types become double).
void AMRInput::UseDensity(const std::vector<vtkDataArray*>& arrays, bool useDouble, phew_input& in)
{
  in.density_type = useDouble ? PHEW_FLOAT64 : PHEW_FLOAT32;
  if (arrays.size() == 1 &&
    (useDouble ? vtkArrayDownCast<vtkAOSDataArrayTemplate<double>>(arrays[0]) != nullptr
               : vtkArrayDownCast<vtkAOSDataArrayTemplate<float>>(arrays[0]) != nullptr))
  {
    in.density = arrays[0]->GetVoidPointer(0);
  }
  else if (useDouble)
  {
    in.density = Concatenate(arrays, this->OwnCells, this->Density64);
  }
  else
  {
    in.density = Concatenate(arrays, this->OwnCells, this->Density32);
  }
}

//------------------------------------------------------------------------------
std::string AMRInput::Finish(Context& context, vtkDataObject* outputObject)
{
  auto* output = vtkOverlappingAMR::SafeDownCast(outputObject);
  if (!output)
  {
    return "the Labels output is not a vtkOverlappingAMR";
  }
  // The input's hierarchy (its metadata object, shared as a shallow copy would) with, for
  // every block this rank holds, a shallow copy of the block that carries the labels. Not
  // ShallowCopy + SetDataSet: in VTK 9.2 SetDataSet on a block that is already set adds a
  // second entry instead of replacing it (vtkAMRDataInternals::Insert), and the block lookup
  // may then return the wrong dataset; so the output starts without blocks.
  output->Initialize();
  output->SetAMRInfo(this->AMR->GetAMRInfo());
  std::vector<vtkIdType> message;
  for (size_t k = 0; k < this->Blocks.size(); ++k)
  {
    const Source& s = this->Sources[k];
    const phew_amr_block& b = this->Blocks[k];
    const bool holds =
      std::find(s.Holders.begin(), s.Holders.end(), context.Rank) != s.Holders.end();
    if (!holds)
    {
      continue;
    }
    const vtkIdType cells = b.dims[0] * b.dims[1] * b.dims[2];
    LabelArrays arrays;
    if (b.owner == context.Rank)
    {
      const int64_t* own[3] = { this->Labels[0].data() + s.FirstCell,
        this->Labels[1].data() + s.FirstCell, this->Labels[2].data() + s.FirstCell };
      arrays = SendLabels(context, s.Holders, own, cells, message);
    }
    else
    {
      arrays = ReceiveLabels(context, b.owner, cells, message);
    }
    auto grid = vtkSmartPointer<vtkUniformGrid>::New();
    grid->ShallowCopy(this->AMR->GetDataSet(s.Level, s.Index));
    for (int c = 0; c < 3; ++c)
    {
      grid->GetCellData()->AddArray(arrays.Arrays[c]);
    }
    output->SetDataSet(s.Level, s.Index, grid);
  }
  return std::string();
}
} // namespace phew_adaptors
