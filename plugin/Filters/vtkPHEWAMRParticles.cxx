#include "vtkPHEWAMRParticles.h"

#include "vtkCommunicator.h"
#include "vtkCompositeDataIterator.h"
#include "vtkCompositeDataSet.h"
#include "vtkDataArray.h"
#include "vtkDataObject.h"
#include "vtkMultiProcessController.h"
#include "vtkOverlappingAMR.h"
#include "vtkPointData.h"
#include "vtkPointSet.h"
#include "vtkSmartPointer.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

namespace phew_adaptors
{
namespace
{
// The arrays of the snapshot readers' particles (vtkPHEWRAMSESReader, vtkPHEWGadgetReader).
const char* const kVelocities = "Velocities";
const char* const kMasses = "Masses";
const char* const kIds = "ParticleIDs";

// The point sets of `data` (itself, or a composite's leaves) with points.
std::vector<vtkPointSet*> FullLeaves(vtkDataObject* data)
{
  std::vector<vtkPointSet*> leaves;
  auto add = [&leaves](vtkDataObject* object) {
    auto* set = vtkPointSet::SafeDownCast(object);
    if (set && set->GetNumberOfPoints() > 0)
    {
      leaves.push_back(set);
    }
  };
  if (auto* composite = vtkCompositeDataSet::SafeDownCast(data))
  {
    auto it = vtkSmartPointer<vtkCompositeDataIterator>::Take(composite->NewIterator());
    for (it->InitTraversal(); !it->IsDoneWithTraversal(); it->GoToNextItem())
    {
      add(it->GetCurrentDataObject());
    }
  }
  else
  {
    add(data);
  }
  return leaves;
}

bool HasPointArray(vtkDataObject* data, const char* name)
{
  for (vtkPointSet* set : FullLeaves(data))
  {
    if (set->GetPointData()->GetArray(name))
    {
      return true;
    }
  }
  return false;
}

// Collective: `mine` or-ed (MAX) or and-ed (MIN) over the ranks.
bool OverRanks(const Context& context, bool mine, int operation)
{
  if (!context.Controller)
  {
    return mine;
  }
  const int value = mine ? 1 : 0;
  int all = value;
  context.Controller->AllReduce(&value, &all, 1, operation);
  return all != 0;
}

double Coordinate(const phew_points& p, int64_t i, int d)
{
  return p.type == PHEW_FLOAT32 ? static_cast<const float*>(p.position)[3 * i + d]
                                : static_cast<const double*>(p.position)[3 * i + d];
}

// Whether particle i lies in no cell of the domain (phew_amr_point_labels then gives -1).
bool Outside(const phew_points& p, int64_t i, const phew_amr& amr)
{
  for (int d = 0; d < 3; ++d)
  {
    const double x = Coordinate(p, i, d);
    const double lo = amr.origin[d],
                 hi = lo + static_cast<double>(amr.level0_dims[d]) * amr.spacing[d];
    if (!std::isfinite(x) || (!amr.periodic[d] && !(x >= lo && x < hi)))
    {
      return true;
    }
  }
  return false;
}
}

//------------------------------------------------------------------------------
AMRParticlesInput::AMRParticlesInput(
  vtkOverlappingAMR* amr, vtkDataObject* particles, const PointOptions& options, bool physics)
  : AMR(amr)
  , ParticleData(particles)
  , Options(options)
  , Physics(physics)
{
  std::memset(&this->ParticleInput, 0, sizeof this->ParticleInput);
}

AMRParticlesInput::~AMRParticlesInput() = default;

std::string AMRParticlesInput::Prepare(Context& context, phew_input& in, phew_labels& labels)
{
  std::string problem = this->AMR.Prepare(context, in, labels); // collective, agreed
  if (problem.empty())
  {
    problem = this->PrepareParticles(context, in.amr);
  }
  return problem;
}

std::string AMRParticlesInput::Finish(Context& context, vtkDataObject* output)
{
  return this->AMR.Finish(context, output);
}

//------------------------------------------------------------------------------
// Collective; every check is agreed, so every rank returns the same problem.
std::string AMRParticlesInput::PrepareParticles(Context& context, const phew_amr& amr)
{
  std::string problem = this->CheckParticles(context);
  if (!problem.empty())
  {
    return problem;
  }
  this->Points.reset(new PointsInput(this->ParticleData, this->ParticleOptions(context)));
  Context own = context; // the particles' subject and names stay out of the AMR's messages
  phew_labels unused = { nullptr, nullptr, nullptr, nullptr };
  problem = this->Points->Prepare(own, this->ParticleInput, unused);
  if (!problem.empty())
  {
    return "the Particles input: " + problem;
  }
  return this->CheckDomain(context, amr);
}

// Collective: the input's type, its points and, for the physics, its velocities.
std::string AMRParticlesInput::CheckParticles(Context& context)
{
  const std::string type = this->ParticleData ? this->ParticleData->GetClassName() : "(none)";
  const std::string wrongType = PointsInput::Accepts(this->ParticleData)
    ? std::string()
    : "the Particles input is a " + type +
      ": it takes particles, a point set (vtkPolyData...) or a composite dataset of point sets "
      "(the RAMSES Output Reader's second output)";
  const std::string problem = AgreeOnProblem(context, wrongType);
  if (!problem.empty())
  {
    return problem;
  }
  if (!OverRanks(context, !FullLeaves(this->ParticleData).empty(), vtkCommunicator::MAX_OP))
  {
    return "the Particles input has no particles (no points on any process)";
  }
  // The physics runs on every rank or on none (the units come from each rank's field data).
  this->Physics = OverRanks(context, this->Physics, vtkCommunicator::MIN_OP);
  if (this->Physics &&
    !OverRanks(context, HasPointArray(this->ParticleData, kVelocities), vtkCommunicator::MAX_OP))
  {
    return std::string("the Particles input has no point array ") + kVelocities +
      ": the halo properties need the particles' velocities (turn Halo Properties off to "
      "label the particles only)";
  }
  return std::string();
}

// Collective: the particle options, with the readers' arrays (masses and ids when some rank
// has them: mass 1 each and ids in the global order otherwise, the same on every rank).
PointOptions AMRParticlesInput::ParticleOptions(Context& context)
{
  const bool masses =
    OverRanks(context, HasPointArray(this->ParticleData, kMasses), vtkCommunicator::MAX_OP);
  const bool ids =
    OverRanks(context, HasPointArray(this->ParticleData, kIds), vtkCommunicator::MAX_OP);
  const std::vector<std::string> names = { "", masses ? kMasses : "",
    this->Physics ? kVelocities : "", ids ? kIds : "" };
  PointOptions options = this->Options;
  options.LabelNames = { PHEW_ARRAY_CLUMP_ID, PHEW_ARRAY_HALO_ID };
  if (this->Physics)
  {
    options.LabelNames.push_back("BoundClumpId");
  }
  options.WithDensity = false;
  options.WithEnergy = this->Physics;
  options.EstimateDensity = true; // no density array read: the AMR's clumps label them
  options.SelectedName = [names](int which) { return names[which]; };
  options.Array = [names](int which, vtkDataObject* data, int& association) -> vtkDataArray* {
    auto* set = vtkPointSet::SafeDownCast(data);
    vtkDataArray* array =
      set && !names[which].empty() ? set->GetPointData()->GetArray(names[which].c_str()) : nullptr;
    association = array ? vtkDataObject::FIELD_ASSOCIATION_POINTS : -1;
    return array;
  };
  return options;
}

// Collective: particles in no cell get -1; all of them in none is a mistake (other units?).
std::string AMRParticlesInput::CheckDomain(Context& context, const phew_amr& amr)
{
  const phew_points& p = this->ParticleInput.points;
  long long counts[2] = { static_cast<long long>(p.n), 0 }; // particles, outside
  for (int64_t i = 0; i < p.n; ++i)
  {
    counts[1] += Outside(p, i, amr) ? 1 : 0;
  }
  long long all[2] = { counts[0], counts[1] };
  if (context.Controller)
  {
    context.Controller->AllReduce(counts, all, 2, vtkCommunicator::SUM_OP);
  }
  char text[512];
  double hi[3];
  for (int d = 0; d < 3; ++d)
  {
    hi[d] = amr.origin[d] + static_cast<double>(amr.level0_dims[d]) * amr.spacing[d];
  }
  std::snprintf(text, sizeof text,
    "%lld of the %lld particles lie outside the AMR's domain [%g, %g) x [%g, %g) x [%g, %g)",
    all[1], all[0], amr.origin[0], hi[0], amr.origin[1], hi[1], amr.origin[2], hi[2]);
  if (all[1] == 0)
  {
    return std::string();
  }
  if (all[1] == all[0])
  {
    return std::string("the Particles input: ") + text +
      " (or have non-finite positions): are the AMR and the particles in the same units?";
  }
  const std::string warning = std::string(text) + ": they get the labels -1";
  context.Warning = context.Warning.empty() ? warning : context.Warning + "; " + warning;
  return std::string();
}

//------------------------------------------------------------------------------
int AMRParticlesInput::LabelParticles(
  phew_context& core, const phew_input& amr, const phew_labels& cells)
{
  const phew_points& p = this->ParticleInput.points;
  int status = phew_amr_point_labels(&core, &amr.amr, cells.clump_id, &p, this->ClumpIds());
  if (status == PHEW_OK) // the halo of the cell: the same as the clump's halo on the cells
  {
    status = phew_amr_point_labels(&core, &amr.amr, cells.halo_id, &p, this->Points->LabelArray(1));
  }
  return status;
}

std::string AMRParticlesInput::FinishParticles(Context& context, vtkDataObject* output)
{
  Context own = context;
  return this->Points->Finish(own, output);
}
} // namespace phew_adaptors
