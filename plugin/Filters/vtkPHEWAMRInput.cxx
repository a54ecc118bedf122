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
#include <cmath>
#include <cstring>
#include <limits>

namespace phew_adaptors
{
namespace
{
constexpr int kLabelTag = 851; // point-to-point messages: labels of duplicated blocks

std::string BlockName(unsigned int level, unsigned int index)
{
  return "block " + std::to_string(index) + " of level " + std::to_string(level);
}

// FNV-1a over the bytes of a value: the signature of the hierarchy each rank sees.
struct Signature
{
  unsigned long long Hash = 1469598103934665603ULL;
  template <typename T>
  void Add(const T& value)
  {
    unsigned char bytes[sizeof(T)];
    std::memcpy(bytes, &value, sizeof(T));
    for (unsigned char b : bytes)
    {
      this->Hash = (this->Hash ^ b) * 1099511628211ULL;
    }
  }
};

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
// The block list, the domain and the owners. Collective; the problem it returns is agreed.
std::string AMRInput::Describe(Context& context)
{
  vtkOverlappingAMR* amr = this->AMR;
  vtkAMRInformation* info = amr->GetAMRInfo();
  const unsigned int nLevels = info ? info->GetNumberOfLevels() : 0;
  vtkMultiProcessController* controller = context.Controller;
  const int nRanks = context.NumberOfRanks;

  // 1. The hierarchy as this rank sees it (every rank has the whole metadata), its
  //    signature, and the blocks this rank holds.
  struct Raw
  {
    unsigned int Level, Index;
    int Lo[3], Hi[3];
  };
  std::vector<Raw> raw;
  Signature signature;
  signature.Add(nLevels);
  for (unsigned int l = 0; l < nLevels; ++l)
  {
    double spacing[3];
    info->GetSpacing(l, spacing);
    signature.Add(spacing);
    signature.Add(amr->GetRefinementRatio(l));
    for (unsigned int i = 0; i < info->GetNumberOfDataSets(l); ++i)
    {
      Raw r{ l, i, { 0, 0, 0 }, { 0, 0, 0 } };
      info->GetAMRBox(l, i).GetDimensions(r.Lo, r.Hi);
      signature.Add(r.Lo);
      signature.Add(r.Hi);
      raw.push_back(r);
    }
  }
  if (info)
  {
    double origin[3];
    info->GetOrigin(origin);
    signature.Add(origin);
  }
  const long long nAll = static_cast<long long>(raw.size());
  std::vector<char> held(static_cast<size_t>(std::max(nAll, 1LL)), 0);
  std::string local; // a problem of a block this rank holds
  for (long long k = 0; k < nAll; ++k)
  {
    // A block a rank does not hold is a null dataset (an empty one counts as not held).
    vtkUniformGrid* grid = amr->GetDataSet(raw[k].Level, raw[k].Index);
    grid = grid && grid->GetNumberOfPoints() > 0 ? grid : nullptr;
    held[k] = grid ? 1 : 0;
    if (!grid || !local.empty())
    {
      continue;
    }
    int points[3];
    grid->GetDimensions(points);
    for (int d = 0; d < 3; ++d)
    {
      const long long boxCells = static_cast<long long>(raw[k].Hi[d]) - raw[k].Lo[d] + 1;
      const long long gridCells = points[d] > 1 ? points[d] - 1 : (boxCells < 1 ? 0 : 1);
      if (gridCells != boxCells && local.empty())
      {
        local = "the dataset of " + BlockName(raw[k].Level, raw[k].Index) + " has " +
          std::to_string(points[0] - 1) + "x" + std::to_string(points[1] - 1) + "x" +
          std::to_string(points[2] - 1) + " cells, but its AMR box has " +
          std::to_string(raw[k].Hi[0] - raw[k].Lo[0] + 1) + "x" +
          std::to_string(raw[k].Hi[1] - raw[k].Lo[1] + 1) + "x" +
          std::to_string(raw[k].Hi[2] - raw[k].Lo[2] + 1);
      }
    }
  }

  // 2. Every rank must see the same hierarchy.
  const long long mine[2] = { static_cast<long long>(signature.Hash >> 1), nAll };
  std::vector<long long> all(mine, mine + 2);
  if (nRanks > 1)
  {
    all.resize(2 * static_cast<size_t>(nRanks));
    controller->AllGather(mine, all.data(), 2);
  }
  for (int r = 1; r < nRanks; ++r)
  {
    if (all[2 * r] != all[0] || all[2 * r + 1] != all[1])
    {
      return "the ranks do not see the same AMR hierarchy (rank 0 has " + std::to_string(all[1]) +
        " blocks, rank " + std::to_string(r) + " has " + std::to_string(all[2 * r + 1]) +
        (all[2 * r + 1] == all[1] ? " blocks with other boxes, spacings or origin)" : " blocks)");
    }
  }
  if (nAll == 0)
  {
    return "the input AMR is empty (no blocks)";
  }

  // 3. Who holds which block.
  std::vector<char> allHeld(held);
  if (nRanks > 1)
  {
    allHeld.resize(static_cast<size_t>(nAll) * nRanks);
    controller->AllGather(held.data(), allHeld.data(), nAll);
  }
  std::vector<std::vector<int>> holders(static_cast<size_t>(nAll));
  for (int r = 0; r < nRanks; ++r)
  {
    for (long long k = 0; k < nAll; ++k)
    {
      if (allHeld[static_cast<size_t>(r) * nAll + k])
      {
        holders[k].push_back(r);
      }
    }
  }

  // 4. Levels kept: all, or those below the first level no rank holds anything of.
  unsigned int kept = nLevels;
  long long firstMissing = -1;
  for (long long k = 0; k < nAll; ++k)
  {
    if (holders[k].empty())
    {
      firstMissing = k;
      break;
    }
  }
  if (firstMissing >= 0)
  {
    const unsigned int level = raw[firstMissing].Level;
    bool wholeLevels = true; // nothing held from this level on
    for (long long k = 0; k < nAll; ++k)
    {
      wholeLevels &= raw[k].Level < level || holders[k].empty();
    }
    if (wholeLevels && level == 0)
    {
      return "the input AMR holds no data: none of its " + std::to_string(nAll) +
        " blocks has a dataset on any rank";
    }
    if (!wholeLevels || raw[firstMissing].Index != 0)
    {
      return "no rank holds the dataset of " +
        BlockName(raw[firstMissing].Level, raw[firstMissing].Index) +
        " of the AMR (every block of a level that is loaded must be present on some rank)";
    }
    kept = level;
    context.Warning = "levels " + std::to_string(level) + " to " + std::to_string(nLevels - 1) +
      " of the AMR are not loaded (no rank holds their blocks): PHEW runs on levels 0 to " +
      std::to_string(level - 1) +
      ". To use every level, load them all (XMLUniformGridAMRReader: DefaultNumberOfLevels = 0).";
  }
  const long long nKept =
    std::count_if(raw.begin(), raw.end(), [kept](const Raw& r) { return r.Level < kept; });

  // 5. The kept hierarchy: 3-D boxes, refinement ratio 2, consistent spacings. The same
  //    metadata on every rank, so every rank finds the same problem.
  for (long long k = 0; k < nKept; ++k)
  {
    for (int d = 0; d < 3; ++d)
    {
      if (raw[k].Hi[d] < raw[k].Lo[d])
      {
        return "the AMR is not 3-D (" + BlockName(raw[k].Level, raw[k].Index) +
          " has no cells along " + std::string(1, "xyz"[d]) +
          "); PHEW on AMR needs 3-D blocks (2-D AMR is not supported)";
      }
    }
  }
  double spacing0[3];
  info->GetSpacing(0, spacing0);
  for (int d = 0; d < 3; ++d)
  {
    if (!(spacing0[d] > 0.0) || !std::isfinite(spacing0[d]))
    {
      return "the AMR's level-0 spacing along " + std::string(1, "xyz"[d]) + " is " +
        std::to_string(spacing0[d]) + "; it must be positive";
    }
  }
  for (unsigned int l = 0; l + 1 < kept; ++l)
  {
    const int ratio = amr->GetRefinementRatio(l);
    if (ratio != 2)
    {
      return "the refinement ratio between levels " + std::to_string(l) + " and " +
        std::to_string(l + 1) + " of the AMR is " + std::to_string(ratio) +
        "; PHEW on AMR needs refinement ratio 2 on every level";
    }
    double coarse[3], fine[3];
    info->GetSpacing(l, coarse);
    info->GetSpacing(l + 1, fine);
    for (int d = 0; d < 3; ++d)
    {
      // A sanity check only (the core takes level 0's spacing and halves it): .vthb files
      // store spacings with 6 significant digits, so level 3 of 1/64 reads back as 0.00195312.
      if (std::fabs(2.0 * fine[d] - coarse[d]) > 1e-4 * coarse[d])
      {
        return "the spacing of level " + std::to_string(l + 1) + " of the AMR along " +
          std::string(1, "xyz"[d]) + " is " + std::to_string(fine[d]) + ", not half of level " +
          std::to_string(l) + "'s " + std::to_string(coarse[d]) +
          " (refinement ratio 2 is needed on every level)";
      }
    }
  }
  // The domain: the bounding box of the level-0 boxes. Level-0 index 0 is its first cell.
  long long lo0[3], hi0[3];
  for (int d = 0; d < 3; ++d)
  {
    lo0[d] = std::numeric_limits<long long>::max();
    hi0[d] = std::numeric_limits<long long>::min();
  }
  for (long long k = 0; k < nKept && raw[k].Level == 0; ++k)
  {
    for (int d = 0; d < 3; ++d)
    {
      lo0[d] = std::min<long long>(lo0[d], raw[k].Lo[d]);
      hi0[d] = std::max<long long>(hi0[d], raw[k].Hi[d] + 1LL);
    }
  }
  double origin[3];
  info->GetOrigin(origin);

  // 6. The blocks of the core, in list order (level by level), and their owners: a block
  //    held by one rank is its own; a block held by several goes to the holder owning the
  //    fewest cells so far (single-holder blocks counted first), ties to the lowest rank.
  this->Blocks.assign(static_cast<size_t>(nKept), phew_amr_block());
  this->Sources.assign(static_cast<size_t>(nKept), Source());
  std::vector<long long> load(static_cast<size_t>(nRanks), 0);
  for (int pass = 0; pass < 2; ++pass)
  {
    for (long long k = 0; k < nKept; ++k)
    {
      const std::vector<int>& h = holders[k];
      if ((pass == 0) != (h.size() == 1))
      {
        continue;
      }
      phew_amr_block& b = this->Blocks[k];
      b.level = static_cast<int32_t>(raw[k].Level);
      long long cells = 1;
      for (int d = 0; d < 3; ++d)
      {
        b.lo[d] = raw[k].Lo[d] - (lo0[d] << raw[k].Level);
        b.dims[d] = static_cast<long long>(raw[k].Hi[d]) - raw[k].Lo[d] + 1;
        cells *= b.dims[d];
      }
      int owner = h[0];
      for (int r : h)
      {
        owner = load[r] < load[owner] ? r : owner;
      }
      b.owner = owner;
      load[owner] += cells;
      this->Sources[k] = Source{ raw[k].Level, raw[k].Index, -1, h };
    }
  }
  for (int d = 0; d < 3; ++d)
  {
    this->DomainDims[d] = hi0[d] - lo0[d];
    this->Origin[d] = origin[d] + static_cast<double>(lo0[d]) * spacing0[d];
    this->Spacing[d] = spacing0[d];
  }

  // 7. Problems of the blocks this rank holds (its datasets), agreed over all ranks.
  return AgreeOnProblem(context, local);
}

//------------------------------------------------------------------------------
// The density of this rank's blocks, concatenated in list order. Collective; the problem it
// returns is agreed.
std::string AMRInput::GatherDensity(Context& context, phew_input& in)
{
  phew_amr& desc = in.amr;
  for (int d = 0; d < 3; ++d)
  {
    desc.level0_dims[d] = this->DomainDims[d];
    desc.origin[d] = this->Origin[d];
    desc.spacing[d] = this->Spacing[d];
  }
  std::string problem;
  const std::string selected = SelectedName(context);
  vtkInformation* selection = context.ArraySelection;
  if (selection && selection->Has(vtkDataObject::FIELD_ASSOCIATION()) &&
    selection->Get(vtkDataObject::FIELD_ASSOCIATION()) == vtkDataObject::FIELD_ASSOCIATION_POINTS)
  {
    problem = "the density array '" + selected +
      "' is point data; PHEW on AMR needs cell data (one value per cell of each block: convert "
      "it with Point Data to Cell Data)";
  }
  std::vector<vtkDataArray*> arrays;
  bool needDouble = false;
  this->OwnCells = 0;
  for (size_t k = 0; k < this->Blocks.size() && problem.empty(); ++k)
  {
    if (this->Blocks[k].owner != context.Rank)
    {
      continue;
    }
    const Source& s = this->Sources[k];
    vtkUniformGrid* grid = this->AMR->GetDataSet(s.Level, s.Index);
    const long long cells =
      this->Blocks[k].dims[0] * this->Blocks[k].dims[1] * this->Blocks[k].dims[2];
    int association = -1;
    vtkDataArray* array = context.Density(grid, association);
    std::string name = array && array->GetName() ? array->GetName() : selected;
    if (!array)
    {
      problem = name.empty() ? "no density array selected (set Density to a cell array)"
                             : "the density array '" + name + "' is not a cell array of " +
          BlockName(s.Level, s.Index) + " of the AMR";
    }
    else if (association == vtkDataObject::FIELD_ASSOCIATION_POINTS)
    {
      problem = "the density array '" + name +
        "' is point data; PHEW on AMR needs cell data (one value per cell of each block: "
        "convert it with Point Data to Cell Data)";
    }
    else if (association != vtkDataObject::FIELD_ASSOCIATION_CELLS)
    {
      problem = "the density array '" + name + "' must be cell data";
    }
    else if (array->GetNumberOfComponents() != 1)
    {
      problem = "the density array '" + name + "' has " +
        std::to_string(array->GetNumberOfComponents()) +
        " components; PHEW needs a scalar (1 component)";
    }
    else if (array->GetNumberOfTuples() != cells)
    {
      problem = "the density array '" + name + "' has " +
        std::to_string(array->GetNumberOfTuples()) + " values on " + BlockName(s.Level, s.Index) +
        " of the AMR, which has " + std::to_string(cells) + " cells";
    }
    else
    {
      if (context.DensityName.empty())
      {
        context.DensityName = name;
      }
      needDouble |= !vtkArrayDownCast<vtkAOSDataArrayTemplate<float>>(array);
      this->Sources[k].FirstCell = this->OwnCells;
      this->OwnCells += cells;
      arrays.push_back(array);
    }
  }

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

  // One block of the right type: the core reads it in place. Otherwise the blocks are copied
  // one after the other (other numeric types become double).
  in.density_type = useDouble ? PHEW_FLOAT64 : PHEW_FLOAT32;
  if (arrays.size() == 1 &&
    (useDouble ? vtkArrayDownCast<vtkAOSDataArrayTemplate<double>>(arrays[0]) != nullptr
               : vtkArrayDownCast<vtkAOSDataArrayTemplate<float>>(arrays[0]) != nullptr))
  {
    in.density = arrays[0]->GetVoidPointer(0);
    return std::string();
  }
  if (useDouble)
  {
    this->Density64.reserve(static_cast<size_t>(std::max(this->OwnCells, 1LL)));
    for (vtkDataArray* array : arrays)
    {
      AppendValues(array, this->Density64);
    }
    this->Density64.resize(std::max<size_t>(this->Density64.size(), 1));
    in.density = this->Density64.data();
  }
  else
  {
    this->Density32.reserve(static_cast<size_t>(std::max(this->OwnCells, 1LL)));
    for (vtkDataArray* array : arrays)
    {
      AppendValues(array, this->Density32);
    }
    this->Density32.resize(std::max<size_t>(this->Density32.size(), 1));
    in.density = this->Density32.data();
  }
  return std::string();
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
    vtkSmartPointer<vtkIdTypeArray> arrays[3];
    const char* names[3] = { PHEW_ARRAY_PEAK_PATCH_ID, PHEW_ARRAY_CLUMP_ID, PHEW_ARRAY_HALO_ID };
    if (b.owner == context.Rank)
    {
      for (int c = 0; c < 3; ++c)
      {
        arrays[c] = NewLabelArray(names[c], this->Labels[c].data() + s.FirstCell, cells);
      }
      // The other holders get the labels from the owner. Every rank walks the blocks in the
      // same order, so the sends and receives pair up without a deadlock.
      if (s.Holders.size() > 1)
      {
        message.resize(3 * static_cast<size_t>(cells));
        for (int c = 0; c < 3; ++c)
        {
          std::copy(this->Labels[c].begin() + s.FirstCell,
            this->Labels[c].begin() + s.FirstCell + cells, message.begin() + c * cells);
        }
        for (int r : s.Holders)
        {
          if (r != context.Rank)
          {
            context.Controller->Send(message.data(), 3 * cells, r, kLabelTag);
          }
        }
      }
    }
    else
    {
      message.resize(3 * static_cast<size_t>(cells));
      context.Controller->Receive(message.data(), 3 * cells, b.owner, kLabelTag);
      for (int c = 0; c < 3; ++c)
      {
        arrays[c] = vtkSmartPointer<vtkIdTypeArray>::New();
        arrays[c]->SetName(names[c]);
        arrays[c]->SetNumberOfTuples(cells);
        std::copy(
          message.begin() + c * cells, message.begin() + (c + 1) * cells, arrays[c]->GetPointer(0));
      }
    }
    auto grid = vtkSmartPointer<vtkUniformGrid>::New();
    grid->ShallowCopy(this->AMR->GetDataSet(s.Level, s.Index));
    for (int c = 0; c < 3; ++c)
    {
      grid->GetCellData()->AddArray(arrays[c]);
    }
    output->SetDataSet(s.Level, s.Index, grid);
  }
  return std::string();
}
} // namespace phew_adaptors
