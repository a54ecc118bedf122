#include "vtkPHEWPointsInput.h"

#include "vtkAOSDataArrayTemplate.h"
#include "vtkCommunicator.h"
#include "vtkCompositeDataIterator.h"
#include "vtkCompositeDataSet.h"
#include "vtkDataArray.h"
#include "vtkDataObject.h"
#include "vtkDataSetAttributes.h"
#include "vtkDoubleArray.h"
#include "vtkFieldData.h"
#include "vtkIdTypeArray.h"
#include "vtkMultiProcessController.h"
#include "vtkPointData.h"
#include "vtkPointSet.h"
#include "vtkPoints.h"
#include "vtkSmartPointer.h"
#include "vtkUniformGridAMR.h"
#include "vtkUnsignedCharArray.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>

namespace phew_adaptors
{
const char* const NoArrayName = "None";

namespace
{
const char* const kArrayWhat[POINT_ARRAY_COUNT] = { "density", "mass", "velocity", "id" };
const int kArrayComponents[POINT_ARRAY_COUNT] = { 1, 1, 3, 1 };

// Appends the tuples of `array` whose point is not skipped to `out`, converted to T.
template <typename T, typename V>
void AppendTyped(
  const V* values, vtkIdType n, int comps, const std::vector<char>& skip, std::vector<T>& out)
{
  for (vtkIdType i = 0; i < n; ++i)
  {
    if (!skip.empty() && skip[i])
    {
      continue;
    }
    for (int c = 0; c < comps; ++c)
    {
      out.push_back(static_cast<T>(values[i * comps + c]));
    }
  }
}

template <typename T>
void Append(vtkDataArray* array, const std::vector<char>& skip, std::vector<T>& out)
{
  const vtkIdType n = array->GetNumberOfTuples();
  const int comps = array->GetNumberOfComponents();
  if (array->HasStandardMemoryLayout())
  {
    switch (array->GetDataType())
    {
      vtkTemplateMacro(
        AppendTyped(static_cast<const VTK_TT*>(array->GetVoidPointer(0)), n, comps, skip, out));
      default:
        break;
    }
    return;
  }
  for (vtkIdType i = 0; i < n; ++i) // other layouts (rare): through doubles
  {
    if (skip.empty() || !skip[i])
    {
      for (int c = 0; c < comps; ++c)
      {
        out.push_back(static_cast<T>(array->GetComponent(i, c)));
      }
    }
  }
}

// The values of `array` in place as T (an AOS array of T, or of a type of the same size
// and kind for 64-bit integers), or nullptr.
template <typename T>
const T* InPlace(vtkDataArray* array)
{
  if (auto* aos = vtkArrayDownCast<vtkAOSDataArrayTemplate<T>>(array))
  {
    return aos->GetPointer(0);
  }
  return nullptr;
}

template <>
const int64_t* InPlace<int64_t>(vtkDataArray* array)
{
  if (auto* ll = vtkArrayDownCast<vtkAOSDataArrayTemplate<long long>>(array))
  {
    return reinterpret_cast<const int64_t*>(ll->GetPointer(0));
  }
  if (auto* l = vtkArrayDownCast<vtkAOSDataArrayTemplate<long>>(array))
  {
    return reinterpret_cast<const int64_t*>(l->GetPointer(0));
  }
  return nullptr;
}

bool IsFloat(vtkDataArray* array)
{
  return array && vtkArrayDownCast<vtkAOSDataArrayTemplate<float>>(array) != nullptr;
}

// The first id value of a floating-point id array that is not a whole number in [0, 2^63),
// or -1 when there is none.
vtkIdType FirstBadId(vtkDataArray* array)
{
  if (array->GetDataType() != VTK_FLOAT && array->GetDataType() != VTK_DOUBLE)
  {
    return -1; // integers: the core checks that they are not negative
  }
  const vtkIdType n = array->GetNumberOfTuples();
  for (vtkIdType i = 0; i < n; ++i)
  {
    const double v = array->GetComponent(i, 0);
    if (!(v >= 0.0 && v < 9.2233720368547758e18 && std::floor(v) == v))
    {
      return i;
    }
  }
  return -1;
}

vtkSmartPointer<vtkIdTypeArray> NewLabelArray(const char* name, vtkIdType n)
{
  auto array = vtkSmartPointer<vtkIdTypeArray>::New();
  array->SetName(name);
  array->SetNumberOfTuples(n);
  return array;
}
}

//------------------------------------------------------------------------------
PointsInput::PointsInput(vtkDataObject* input, const PointOptions& options)
  : Input(input)
  , Options(options)
{
}

PointsInput::~PointsInput() = default;

bool PointsInput::Accepts(vtkDataObject* input)
{
  return vtkPointSet::SafeDownCast(input) ||
    (vtkCompositeDataSet::SafeDownCast(input) && !vtkUniformGridAMR::SafeDownCast(input));
}

//------------------------------------------------------------------------------
// The point sets of this rank, in order. Returns a local problem (not yet agreed).
std::string PointsInput::CollectLeaves(Context&)
{
  std::string problem;
  auto add = [this](vtkPointSet* data) {
    Leaf leaf;
    leaf.Data = data;
    leaf.NumberOfPoints = data->GetNumberOfPoints();
    leaf.Passed = leaf.NumberOfPoints;
    vtkUnsignedCharArray* ghosts = data->GetPointGhostArray();
    if (ghosts && ghosts->GetNumberOfTuples() == leaf.NumberOfPoints)
    {
      for (vtkIdType i = 0; i < leaf.NumberOfPoints; ++i)
      {
        if (ghosts->GetValue(i) & vtkDataSetAttributes::DUPLICATEPOINT)
        {
          if (leaf.Skip.empty())
          {
            leaf.Skip.assign(static_cast<size_t>(leaf.NumberOfPoints), 0);
          }
          leaf.Skip[i] = 1;
          --leaf.Passed;
        }
      }
    }
    this->Leaves.push_back(std::move(leaf));
  };
  if (auto* single = vtkPointSet::SafeDownCast(this->Input))
  {
    add(single);
  }
  else if (auto* composite = vtkCompositeDataSet::SafeDownCast(this->Input))
  {
    auto it = vtkSmartPointer<vtkCompositeDataIterator>::Take(composite->NewIterator());
    it->SkipEmptyNodesOn();
    for (it->InitTraversal(); !it->IsDoneWithTraversal(); it->GoToNextItem())
    {
      vtkDataObject* object = it->GetCurrentDataObject();
      if (auto* data = vtkPointSet::SafeDownCast(object))
      {
        add(data);
      }
      else if (problem.empty())
      {
        problem = std::string("unsupported input type ") + composite->GetClassName() +
          ": a block (flat index " + std::to_string(it->GetCurrentFlatIndex()) + ") is a " +
          object->GetClassName() +
          ", not a point set. PHEW on particles needs point sets (vtkPolyData, "
          "vtkUnstructuredGrid...) or composite datasets whose blocks are all point sets";
      }
    }
  }
  else
  {
    problem = std::string("unsupported input type ") +
      (this->Input ? this->Input->GetClassName() : "(none)") + ": not a point set";
  }
  return problem;
}

//------------------------------------------------------------------------------
// The selected arrays of one point set, checked. Returns a local problem (not yet agreed).
std::string PointsInput::CheckLeaf(Leaf& leaf, const bool used[POINT_ARRAY_COUNT])
{
  if (leaf.NumberOfPoints == 0)
  {
    return std::string(); // an empty piece may lack the arrays
  }
  const std::string where = this->Leaves.size() > 1 ? " of a block of the input" : " of the input";
  for (int which = 0; which < POINT_ARRAY_COUNT; ++which)
  {
    if (!used[which])
    {
      continue;
    }
    int association = -1;
    vtkDataArray* array = this->Options.Array(which, leaf.Data, association);
    const std::string what = kArrayWhat[which];
    std::string name =
      array && array->GetName() ? array->GetName() : this->Options.SelectedName(which);
    if (!array)
    {
      return "the " + what + " array '" + name + "' is not a point array" + where;
    }
    if (association != vtkDataObject::FIELD_ASSOCIATION_POINTS)
    {
      return "the " + what + " array '" + name +
        "' is not point data; particles need point arrays (one value per point)";
    }
    if (array->GetNumberOfComponents() != kArrayComponents[which])
    {
      return "the " + what + " array '" + name + "' has " +
        std::to_string(array->GetNumberOfComponents()) + " components; the " + what + " needs " +
        std::to_string(kArrayComponents[which]);
    }
    if (array->GetNumberOfTuples() != leaf.NumberOfPoints)
    {
      return "the " + what + " array '" + name + "' has " +
        std::to_string(array->GetNumberOfTuples()) + " values for " +
        std::to_string(leaf.NumberOfPoints) + " points";
    }
    if (which == POINT_ID)
    {
      const vtkIdType bad = FirstBadId(array);
      if (bad >= 0)
      {
        return "the id array '" + name + "' holds " + std::to_string(array->GetComponent(bad, 0)) +
          " at point " + std::to_string(bad) + "; ids must be whole numbers >= 0";
      }
    }
    leaf.Arrays[which] = array;
  }
  return std::string();
}

//------------------------------------------------------------------------------
// The particles of this rank as the core reads them (in place when possible).
void PointsInput::GatherParticles(phew_input& in, const bool used[POINT_ARRAY_COUNT])
{
  phew_points& p = in.points;
  std::vector<Leaf*> full; // leaves with points
  for (Leaf& leaf : this->Leaves)
  {
    if (leaf.NumberOfPoints > 0)
    {
      full.push_back(&leaf);
    }
  }
  this->Direct = full.size() <= 1 && (full.empty() || full[0]->Skip.empty());
  auto positionsOf = [](const Leaf* leaf) { return leaf->Data->GetPoints()->GetData(); };

  // float32 when positions, masses and velocities are all float; else float64.
  bool allFloat = true, densityFloat = true;
  for (const Leaf* leaf : full)
  {
    allFloat &= IsFloat(positionsOf(leaf));
    allFloat &= !used[POINT_MASS] || IsFloat(leaf->Arrays[POINT_MASS]);
    allFloat &= !used[POINT_VELOCITY] || IsFloat(leaf->Arrays[POINT_VELOCITY]);
    densityFloat &= !used[POINT_DENSITY] || IsFloat(leaf->Arrays[POINT_DENSITY]);
  }

  // One array over all leaves: in place (one leaf, no ghost points, the right type) or
  // gathered into `buffer`.
  auto provide = [&](auto& buffer, auto get) -> const void* {
    using T = typename std::decay<decltype(buffer)>::type::value_type;
    if (this->Direct && !full.empty())
    {
      if (const T* values = InPlace<T>(get(full[0])))
      {
        return values;
      }
    }
    buffer.clear();
    for (const Leaf* leaf : full)
    {
      Append(get(leaf), leaf->Skip, buffer);
    }
    return buffer.empty() ? nullptr : buffer.data();
  };
  auto arrayOf = [](
                   int which) { return [which](const Leaf* leaf) { return leaf->Arrays[which]; }; };

  p.n = this->Passed;
  p.type = allFloat ? PHEW_FLOAT32 : PHEW_FLOAT64;
  if (allFloat)
  {
    p.position = provide(this->Positions32, positionsOf);
    p.mass = used[POINT_MASS] ? provide(this->Masses32, arrayOf(POINT_MASS)) : nullptr;
    p.velocity =
      used[POINT_VELOCITY] ? provide(this->Velocities32, arrayOf(POINT_VELOCITY)) : nullptr;
  }
  else
  {
    p.position = provide(this->Positions64, positionsOf);
    p.mass = used[POINT_MASS] ? provide(this->Masses64, arrayOf(POINT_MASS)) : nullptr;
    p.velocity =
      used[POINT_VELOCITY] ? provide(this->Velocities64, arrayOf(POINT_VELOCITY)) : nullptr;
  }
  p.id =
    used[POINT_ID] ? static_cast<const int64_t*>(provide(this->Ids, arrayOf(POINT_ID))) : nullptr;
  in.density = nullptr;
  in.density_type = densityFloat ? PHEW_FLOAT32 : PHEW_FLOAT64;
  if (used[POINT_DENSITY])
  {
    in.density = densityFloat ? provide(this->Density32, arrayOf(POINT_DENSITY))
                              : provide(this->Density64, arrayOf(POINT_DENSITY));
  }
  // A rank without particles passes no arrays; the core reads nothing there.
  if (p.n == 0)
  {
    p.position = p.mass = p.velocity = nullptr;
    p.id = nullptr;
    in.density = nullptr;
  }
}

//------------------------------------------------------------------------------
namespace
{
// The box and periodicity a snapshot reader of the plugin put in the field data (BoxOrigin,
// BoxSize, Periodic), as the ranks tell each other about them.
struct SnapshotBox
{
  int32_t Found = 0;
  int32_t Periodic[3] = { 0, 0, 0 };
  double Origin[3] = { 0, 0, 0 };
  double Size[3] = { 0, 0, 0 };
};

SnapshotBox ReadSnapshotBox(vtkDataObject* data)
{
  SnapshotBox box;
  vtkDataObject* carrier = data;
  if (auto* composite = vtkCompositeDataSet::SafeDownCast(data))
  {
    auto it = vtkSmartPointer<vtkCompositeDataIterator>::Take(composite->NewIterator());
    it->InitTraversal();
    carrier = it->IsDoneWithTraversal() ? nullptr : it->GetCurrentDataObject();
  }
  vtkFieldData* fields = carrier ? carrier->GetFieldData() : nullptr;
  vtkDataArray* origin = fields ? fields->GetArray("BoxOrigin") : nullptr;
  vtkDataArray* size = fields ? fields->GetArray("BoxSize") : nullptr;
  vtkDataArray* periodic = fields ? fields->GetArray("Periodic") : nullptr;
  if (!origin || !size || !periodic || origin->GetNumberOfComponents() != 3 ||
    size->GetNumberOfComponents() != 3 || periodic->GetNumberOfComponents() != 3 ||
    origin->GetNumberOfTuples() < 1 || size->GetNumberOfTuples() < 1 ||
    periodic->GetNumberOfTuples() < 1)
  {
    return box;
  }
  box.Found = 1;
  for (int d = 0; d < 3; ++d)
  {
    box.Origin[d] = origin->GetComponent(0, d);
    box.Size[d] = size->GetComponent(0, d);
    box.Periodic[d] = periodic->GetComponent(0, d) != 0 ? 1 : 0;
  }
  return box;
}

// Collective: the snapshot box of the lowest rank that has one (ranks without points may
// have no field data); ranks that disagree are an error.
std::string AgreeOnSnapshotBox(Context& context, vtkDataObject* data, SnapshotBox& chosen)
{
  const SnapshotBox mine = ReadSnapshotBox(data);
  phew_context core = CoreContext(context);
  void* all = nullptr;
  int64_t n = 0;
  if (phew_gather_all(&core, &mine, 1, sizeof mine, &all, &n, nullptr) != PHEW_OK)
  {
    return core.message;
  }
  const auto* boxes = static_cast<const SnapshotBox*>(all);
  std::string problem;
  for (int64_t r = 0; r < n; ++r)
  {
    if (!boxes[r].Found)
    {
      continue;
    }
    if (!chosen.Found)
    {
      chosen = boxes[r];
    }
    else if (std::memcmp(&chosen, &boxes[r], sizeof chosen) != 0)
    {
      problem = "the processes' points come from snapshots with other boxes (field data BoxOrigin, "
                "BoxSize, Periodic): turn Box From Snapshot off";
    }
  }
  std::free(all);
  return problem;
}
}

//------------------------------------------------------------------------------
// The box and periodicity. Collective (the bounds of the points over all ranks).
std::string PointsInput::MakeBox(Context& context, phew_points& p)
{
  if (this->Options.BoxFromSnapshot)
  {
    SnapshotBox snapshot;
    const std::string problem = AgreeOnSnapshotBox(context, this->Input, snapshot);
    if (!problem.empty() || snapshot.Found)
    {
      p.has_box = 1;
      for (int d = 0; d < 3; ++d)
      {
        p.periodic[d] = snapshot.Periodic[d];
        p.box_origin[d] = snapshot.Origin[d];
        p.box_size[d] = snapshot.Size[d];
      }
      return problem;
    }
  }
  p.has_box = 1;
  for (int d = 0; d < 3; ++d)
  {
    p.periodic[d] = this->Options.Periodic[d] ? 1 : 0;
    p.box_origin[d] = this->Options.BoxOrigin[d];
    p.box_size[d] = this->Options.BoxSize[d];
  }
  if (!this->Options.BoxFromDataBounds)
  {
    return std::string(); // the core checks the box and that it holds every particle
  }
  if (p.periodic[0] || p.periodic[1] || p.periodic[2]) // a property: the same on every rank
  {
    return std::string("periodic axes need the periodic box: turn Box From Data Bounds off and "
                       "set Box Origin and Box Size (the bounds of the points are not a period; "
                       "the last point would lie on the box's upper face)");
  }
  // The bounds over every rank (the core's): coordinates that are not finite are left for
  // the finder, which names the particle; no finite coordinate at all leaves the box above.
  phew_context core = CoreContext(context);
  if (phew_points_box_from_bounds(&core, &p) != PHEW_OK) // collective, agreed
  {
    return std::string(core.message) +
      ": turn Box From Data Bounds off and set Box Origin and Box Size";
  }
  return std::string();
}

//------------------------------------------------------------------------------
std::string PointsInput::ChooseArrays(Context& context, bool used[POINT_ARRAY_COUNT])
{
  const PointOptions& o = this->Options;
  for (int which = 0; which < POINT_ARRAY_COUNT; ++which)
  {
    const std::string name = o.SelectedName(which);
    used[which] = !name.empty() && name != NoArrayName;
  }
  this->LabelNames = o.LabelNames;
  this->WithDensity = o.WithDensity;
  const bool densityGiven = !o.EstimateDensity;
  if (densityGiven && !used[POINT_DENSITY])
  {
    // No array selected but no estimate asked either: the same on every rank.
    return "no density array selected: select a point array as Density, or turn Estimate "
           "Density on";
  }
  used[POINT_DENSITY] = densityGiven;
  // velocities and ids go to a catalogue, which comes with labels
  used[POINT_VELOCITY] &= !this->LabelNames.empty();
  used[POINT_ID] &= !this->LabelNames.empty();
  if (densityGiven)
  {
    context.DensityName = o.SelectedName(POINT_DENSITY);
    context.Subject = "the particles with density '" + context.DensityName + "'";
  }
  else
  {
    context.Subject = "the particles";
  }
  return std::string();
}

std::string PointsInput::CheckLeaves(Context& context, const bool used[POINT_ARRAY_COUNT])
{
  // Local checks, then agreement (nothing returns before it).
  std::string problem = this->CollectLeaves(context);
  for (size_t k = 0; k < this->Leaves.size() && problem.empty(); ++k)
  {
    problem = this->CheckLeaf(this->Leaves[k], used);
  }
  problem = AgreeOnProblem(context, problem);
  if (!problem.empty())
  {
    return problem;
  }
  this->Passed = 0;
  for (const Leaf& leaf : this->Leaves)
  {
    this->Passed += leaf.Passed;
  }
  long long total = this->Passed;
  if (context.Controller && context.NumberOfRanks > 1)
  {
    const long long mine = total;
    context.Controller->AllReduce(&mine, &total, 1, vtkCommunicator::SUM_OP);
  }
  if (total == 0)
  {
    return "the input has no points" +
      std::string(context.NumberOfRanks > 1 ? " on any process" : "") +
      ": PHEW on particles needs a point set with points";
  }
  return std::string();
}

void PointsInput::MakeOutputs(phew_labels& labels)
{
  // Per leaf, written in place by the core when there is one leaf without ghost points;
  // otherwise in the core's order, copied to the leaves in Finish.
  const size_t nLabels = this->LabelNames.size();
  this->Out.assign(nLabels, {});
  this->OutDensity.clear();
  this->OutEnergy.clear();
  for (const Leaf& leaf : this->Leaves)
  {
    auto energy = vtkSmartPointer<vtkDoubleArray>::New();
    energy->SetName("SpecificEnergy");
    energy->SetNumberOfTuples(this->Options.WithEnergy ? leaf.NumberOfPoints : 0);
    this->OutEnergy.push_back(energy);
    for (size_t c = 0; c < nLabels; ++c)
    {
      this->Out[c].push_back(NewLabelArray(this->LabelNames[c].c_str(), leaf.NumberOfPoints));
    }
    auto density = vtkSmartPointer<vtkDoubleArray>::New();
    density->SetName("Density");
    density->SetNumberOfTuples(this->WithDensity ? leaf.NumberOfPoints : 0);
    this->OutDensity.push_back(density);
  }
  const Leaf* only = nullptr;
  for (size_t k = 0; k < this->Leaves.size(); ++k)
  {
    only = this->Leaves[k].NumberOfPoints > 0 ? &this->Leaves[k] : only;
  }
  const size_t k0 = only ? static_cast<size_t>(only - this->Leaves.data()) : 0;
  const bool inPlace = this->Direct && only;
  const size_t n = static_cast<size_t>(std::max<vtkIdType>(this->Passed, 1));
  this->Labels.assign(nLabels, {});
  this->LabelTargets.assign(nLabels, nullptr);
  for (size_t c = 0; c < nLabels; ++c)
  {
    this->Labels[c].assign(inPlace ? 0 : n, -1);
    this->LabelTargets[c] = inPlace ? reinterpret_cast<int64_t*>(this->Out[c][k0]->GetPointer(0))
                                    : this->Labels[c].data();
  }
  this->Densities.assign(
    inPlace || !this->WithDensity ? 0 : n, std::numeric_limits<double>::quiet_NaN());
  this->Energies.assign(this->Options.WithEnergy ? n : 0, std::numeric_limits<double>::quiet_NaN());
  labels.density = !this->WithDensity ? nullptr
    : inPlace                         ? this->OutDensity[k0]->GetPointer(0)
                                      : this->Densities.data();
  this->Direct = inPlace;
}

std::string PointsInput::Prepare(Context& context, phew_input& in, phew_labels& labels)
{
  bool used[POINT_ARRAY_COUNT];
  std::string problem = this->ChooseArrays(context, used);
  if (problem.empty())
  {
    problem = this->CheckLeaves(context, used); // collective, agreed
  }
  if (!problem.empty())
  {
    return problem;
  }
  in.mesh = PHEW_MESH_POINTS;
  phew_points_init(&in.points);
  this->GatherParticles(in, used);
  problem = this->MakeBox(context, in.points);
  if (!problem.empty())
  {
    return problem; // from reductions: the same on every rank
  }
  in.points.n_neighbours = this->Options.NumberOfNeighbours;
  in.points.n_density_neighbours = this->Options.NumberOfDensityNeighbours;
  this->MakeOutputs(labels);
  // The clump finder's labels reach the core through phew_labels, by name.
  for (size_t c = 0; c < this->LabelNames.size(); ++c)
  {
    const std::string& name = this->LabelNames[c];
    int64_t** slot = name == PHEW_ARRAY_PEAK_PATCH_ID ? &labels.peak_patch_id
      : name == PHEW_ARRAY_CLUMP_ID                   ? &labels.clump_id
      : name == PHEW_ARRAY_HALO_ID                    ? &labels.halo_id
                                                      : nullptr;
    if (slot)
    {
      *slot = this->LabelTargets[c];
    }
  }
  return std::string();
}

//------------------------------------------------------------------------------
int64_t* PointsInput::LabelArray(size_t which)
{
  return which < this->LabelTargets.size() ? this->LabelTargets[which] : nullptr;
}

double* PointsInput::EnergyArray()
{
  return this->Options.WithEnergy ? this->Energies.data() : nullptr;
}

//------------------------------------------------------------------------------
std::string PointsInput::Finish(Context&, vtkDataObject* outputObject)
{
  const size_t nLabels = this->LabelNames.size();
  if (this->Options.WithEnergy)
  {
    // From the core's order to the leaves (also when Direct: the energies are not in place).
    size_t next = 0;
    for (size_t k = 0; k < this->Leaves.size(); ++k)
    {
      const Leaf& leaf = this->Leaves[k];
      double* energy = this->OutEnergy[k]->GetPointer(0);
      for (vtkIdType i = 0; i < leaf.NumberOfPoints; ++i)
      {
        const bool skipped = !leaf.Skip.empty() && leaf.Skip[i];
        energy[i] = skipped ? std::numeric_limits<double>::quiet_NaN() : this->Energies[next];
        next += skipped ? 0 : 1;
      }
    }
  }
  if (!this->Direct)
  {
    // From the core's order to the leaves: ghost points get -1 and NaN.
    size_t next = 0;
    for (size_t k = 0; k < this->Leaves.size(); ++k)
    {
      const Leaf& leaf = this->Leaves[k];
      double* density = this->WithDensity ? this->OutDensity[k]->GetPointer(0) : nullptr;
      for (vtkIdType i = 0; i < leaf.NumberOfPoints; ++i)
      {
        const bool skipped = !leaf.Skip.empty() && leaf.Skip[i];
        if (density)
        {
          density[i] = skipped ? std::numeric_limits<double>::quiet_NaN() : this->Densities[next];
        }
        for (size_t c = 0; c < nLabels; ++c)
        {
          this->Out[c][k]->GetPointer(0)[i] = skipped ? -1 : this->Labels[c][next];
        }
        next += skipped ? 0 : 1;
      }
    }
  }

  auto decorate = [&](vtkPointSet* copy, size_t k) {
    vtkPointData* pd = copy->GetPointData();
    if (this->WithDensity)
    {
      pd->AddArray(this->OutDensity[k]);
    }
    if (this->Options.WithEnergy)
    {
      pd->AddArray(this->OutEnergy[k]);
    }
    for (size_t c = 0; c < nLabels; ++c)
    {
      pd->AddArray(this->Out[c][k]);
    }
  };
  if (auto* single = vtkPointSet::SafeDownCast(outputObject))
  {
    single->ShallowCopy(this->Input);
    decorate(single, 0);
    return std::string();
  }
  auto* output = vtkCompositeDataSet::SafeDownCast(outputObject);
  auto* input = vtkCompositeDataSet::SafeDownCast(this->Input);
  if (!output || !input)
  {
    return std::string("the Labels output is a ") +
      (outputObject ? outputObject->GetClassName() : "(none)") + ", not the input's type";
  }
  output->CopyStructure(input);
  auto it = vtkSmartPointer<vtkCompositeDataIterator>::Take(input->NewIterator());
  it->SkipEmptyNodesOn();
  size_t k = 0;
  for (it->InitTraversal(); !it->IsDoneWithTraversal(); it->GoToNextItem(), ++k)
  {
    auto* leaf = vtkPointSet::SafeDownCast(it->GetCurrentDataObject());
    auto copy = vtkSmartPointer<vtkPointSet>::Take(leaf->NewInstance());
    copy->ShallowCopy(leaf);
    decorate(copy, k);
    output->SetDataSet(it, copy);
  }
  return std::string();
}
} // namespace phew_adaptors
