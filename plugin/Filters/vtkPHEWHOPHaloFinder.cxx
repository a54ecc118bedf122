#include "vtkPHEWHOPHaloFinder.h"

#include "vtkPHEWPointsInput.h"

#include "vtkInformationVector.h"
#include "vtkObjectFactory.h"
#include "vtkTable.h"

#include "phew/phew.h"

#include <string>

vtkStandardNewMacro(vtkPHEWHOPHaloFinder);

//------------------------------------------------------------------------------
vtkPHEWHOPHaloFinder::vtkPHEWHOPHaloFinder()
{
  this->SetNumberOfOutputPorts(2); // Labels, Groups
  // Input arrays 0-3: mass, velocity, id, density; none unless selected.
  const int indices[phew_adaptors::POINT_ARRAY_COUNT] = { 3, 0, 1, 2 };
  this->SetPointArrayIndices(indices);

  // The core's defaults.
  phew_hop_params defaults;
  phew_hop_params_init(&defaults);
  this->OuterThreshold = defaults.outer;
  this->SaddleFactor = defaults.saddle_factor;
  this->PeakFactor = defaults.peak_factor;
  this->HopNeighbours = defaults.n_hop;
  this->MergeNeighbours = defaults.n_merge;
  this->MinimumMembers = static_cast<int>(defaults.min_members);
}

//------------------------------------------------------------------------------
void vtkPHEWHOPHaloFinder::PrintSelf(ostream& os, vtkIndent indent)
{
  this->Superclass::PrintSelf(os, indent);
  os << indent << "OuterThreshold: " << this->OuterThreshold << "\n";
  os << indent << "SaddleFactor: " << this->SaddleFactor << "\n";
  os << indent << "PeakFactor: " << this->PeakFactor << "\n";
  os << indent << "HopNeighbours: " << this->HopNeighbours << "\n";
  os << indent << "MergeNeighbours: " << this->MergeNeighbours << "\n";
  os << indent << "NumberOfDensityNeighbours: " << this->NumberOfDensityNeighbours << "\n";
  os << indent << "MinimumMembers: " << this->MinimumMembers << "\n";
}

//------------------------------------------------------------------------------
void vtkPHEWHOPHaloFinder::ConfigurePointOptions(phew_adaptors::PointOptions& options)
{
  options.Outputs = phew_adaptors::PointOutputs::HOPGroups;
  options.NumberOfDensityNeighbours = this->NumberOfDensityNeighbours;
  // A selected Density array is the density; none (the default): estimate it.
  const std::string density = options.SelectedName(phew_adaptors::POINT_DENSITY);
  options.EstimateDensity = density.empty() || density == phew_adaptors::NoArrayName;
}

std::string vtkPHEWHOPHaloFinder::RunParticles(phew_context& core, phew_input& in,
  phew_labels& labels, phew_adaptors::PointsInput& adaptor, phew_group_result& result)
{
  phew_hop_params params;
  phew_hop_params_init(&params);
  params.outer = this->OuterThreshold;
  params.saddle_factor = this->SaddleFactor;
  params.peak_factor = this->PeakFactor;
  params.n_hop = this->HopNeighbours;
  params.n_merge = this->MergeNeighbours;
  params.min_members = this->MinimumMembers;
  const phew_status status =
    phew_find_hop_groups(&core, &in, &params, adaptor.GroupIds(), labels.density, &result);
  if (status != PHEW_OK) // collective: the same status and message on every rank
  {
    return std::string("HOP failed (") + phew_status_string(status) + "): " + core.message;
  }
  return std::string();
}

void vtkPHEWHOPHaloFinder::FillTables(
  vtkInformationVector* outputVector, const phew_group_result& result)
{
  vtkPHEWParticleFilter::FillGroupTable(vtkTable::GetData(outputVector, 1), result);
}
