#include "vtkPHEWHOPHaloFinder.h"

#include "vtkPHEWHaloColours.h"
#include "vtkPHEWMarkers.h"
#include "vtkPHEWPhysics.h"
#include "vtkPHEWPointsInput.h"
#include "vtkPHEWRunRecord.h"
#include "vtkPHEWTables.h"

#include "vtkInformation.h"
#include "vtkInformationVector.h"
#include "vtkObjectFactory.h"
#include "vtkPolyData.h"
#include "vtkTable.h"

#include "phew/phew.h"

#include <cstring>
#include <algorithm>
#include <string>
#include <vector>

vtkStandardNewMacro(vtkPHEWHOPHaloFinder);

//------------------------------------------------------------------------------
vtkPHEWHOPHaloFinder::vtkPHEWHOPHaloFinder()
{
  this->Result = new phew_group_result();
  this->SetNumberOfOutputPorts(NUMBER_OF_PORTS); // Labels, Groups, Markers
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

vtkPHEWHOPHaloFinder::~vtkPHEWHOPHaloFinder()
{
  phew_group_result_free(this->Result);
  delete this->Result;
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
int vtkPHEWHOPHaloFinder::FillOutputPortInformation(int port, vtkInformation* info)
{
  if (port == MARKERS_PORT)
  {
    info->Set(vtkDataObject::DATA_TYPE_NAME(), "vtkPolyData");
    return 1;
  }
  return this->Superclass::FillOutputPortInformation(port, info);
}

//------------------------------------------------------------------------------
void vtkPHEWHOPHaloFinder::ConfigurePointOptions(phew_adaptors::PointOptions& options)
{
  options.LabelNames = { PHEW_ARRAY_GROUP_ID };
  options.WithDensity = true;
  options.NumberOfDensityNeighbours = this->NumberOfDensityNeighbours;
  // A selected Density array is the density; none (the default): estimate it.
  const std::string density = options.SelectedName(phew_adaptors::POINT_DENSITY);
  options.EstimateDensity = density.empty() || density == phew_adaptors::NoArrayName;
  this->PhysicsThisRun = this->PhysicsRequested(options);
  if (this->PhysicsThisRun)
  {
    options.LabelNames.push_back("BoundGroupId");
    options.WithEnergy = true;
  }
}

int vtkPHEWHOPHaloFinder::RunCore(
  phew_context& core, phew_input& in, phew_labels& labels, phew_adaptors::InputAdaptor& adaptor)
{
  phew_hop_params params;
  phew_hop_params_init(&params);
  params.outer = this->OuterThreshold;
  params.saddle_factor = this->SaddleFactor;
  params.peak_factor = this->PeakFactor;
  params.n_hop = this->HopNeighbours;
  params.n_merge = this->MergeNeighbours;
  params.min_members = this->MinimumMembers;
  const int status =
    phew_find_hop_groups(&core, &in, &params, adaptor.LabelArray(0), labels.density, this->Result);
  if (status != PHEW_OK || !this->PhysicsThisRun)
  {
    return status;
  }
  // the groups' peaks are the spherical method's centres
  std::vector<double> peaks(3 * static_cast<size_t>(this->Result->n_groups));
  for (int64_t g = 0; g < this->Result->n_groups; ++g)
  {
    std::copy(this->Result->groups[g].peak_position, this->Result->groups[g].peak_position + 3,
      &peaks[3 * g]);
  }
  phew_physics::Grouping grouping;
  grouping.Labels = adaptor.LabelArray(0);
  grouping.Count = this->Result->n_groups;
  grouping.HasCentres = true;
  grouping.Centres = peaks.data();
  return this->RunPhysics(core, in, grouping, adaptor.LabelArray(1), adaptor.EnergyArray());
}

std::string vtkPHEWHOPHaloFinder::FillOutputs(
  phew_adaptors::Context& context, vtkDataObject* labelled, vtkInformationVector* outputVector)
{
  phew_halo_colours::AddGroupColours(context, *this->Result, this->InputPeriod, labelled);
  vtkTable* groups = vtkTable::GetData(outputVector, GROUPS_PORT);
  phew_tables::FillGroups(groups, *this->Result);
  if (this->PhysicsRan)
  {
    phew_physics::AppendColumns(groups, *this->Physics);
  }
  // One vertex per group (rank 0; no rows, so no vertices, elsewhere) at its physics centre,
  // else at the peak (PeakX/Y/Z), its densest particle.
  phew_markers::BuildVertices(groups, phew_markers::PEAK, PHEW_ARRAY_GROUP_ID,
    vtkPolyData::GetData(outputVector, MARKERS_PORT));
  return std::string();
}

void vtkPHEWHOPHaloFinder::DescribeParameters(std::vector<std::string>& entries)
{
  using phew_run_record::Entry;
  entries.push_back(Entry("OuterThreshold", this->OuterThreshold));
  entries.push_back(Entry("SaddleFactor", this->SaddleFactor));
  entries.push_back(Entry("PeakFactor", this->PeakFactor));
  entries.push_back(Entry("HopNeighbours", this->HopNeighbours));
  entries.push_back(Entry("MergeNeighbours", this->MergeNeighbours));
  entries.push_back(Entry("NumberOfDensityNeighbours", this->NumberOfDensityNeighbours));
  entries.push_back(Entry("MinimumMembers", this->MinimumMembers));
  this->DescribePhysics(entries);
}

void vtkPHEWHOPHaloFinder::ReleaseResult()
{
  phew_group_result_free(this->Result);
  this->ReleasePhysics();
}
