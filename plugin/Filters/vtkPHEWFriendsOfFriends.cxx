#include "vtkPHEWFriendsOfFriends.h"

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
#include <string>

vtkStandardNewMacro(vtkPHEWFriendsOfFriends);

//------------------------------------------------------------------------------
vtkPHEWFriendsOfFriends::vtkPHEWFriendsOfFriends()
{
  this->Result = new phew_group_result();
  this->SetNumberOfOutputPorts(NUMBER_OF_PORTS); // Labels, Groups, Markers
  // Input arrays 0-2: mass, velocity, id (no density); none unless selected.
  const int indices[phew_adaptors::POINT_ARRAY_COUNT] = { -1, 0, 1, 2 };
  this->SetPointArrayIndices(indices);
}

vtkPHEWFriendsOfFriends::~vtkPHEWFriendsOfFriends()
{
  phew_group_result_free(this->Result);
  delete this->Result;
}

//------------------------------------------------------------------------------
void vtkPHEWFriendsOfFriends::PrintSelf(ostream& os, vtkIndent indent)
{
  this->Superclass::PrintSelf(os, indent);
  os << indent << "LinkingLength: " << this->LinkingLength
     << (this->LinkingLengthIsAbsolute ? " (absolute)" : " (of the mean spacing)") << "\n";
  os << indent << "MinimumMembers: " << this->MinimumMembers << "\n";
}

//------------------------------------------------------------------------------
int vtkPHEWFriendsOfFriends::FillOutputPortInformation(int port, vtkInformation* info)
{
  if (port == MARKERS_PORT)
  {
    info->Set(vtkDataObject::DATA_TYPE_NAME(), "vtkPolyData");
    return 1;
  }
  return this->Superclass::FillOutputPortInformation(port, info);
}

//------------------------------------------------------------------------------
void vtkPHEWFriendsOfFriends::ConfigurePointOptions(phew_adaptors::PointOptions& options)
{
  options.LabelNames = { PHEW_ARRAY_GROUP_ID };
  options.WithDensity = false;
  this->PhysicsThisRun = this->PhysicsRequested(options);
  if (this->PhysicsThisRun)
  {
    options.LabelNames.push_back("BoundGroupId");
    options.WithEnergy = true;
  }
}

int vtkPHEWFriendsOfFriends::RunCore(
  phew_context& core, phew_input& in, phew_labels&, phew_adaptors::InputAdaptor& adaptor)
{
  phew_fof_params params;
  phew_fof_params_init(&params);
  params.linking_length = this->LinkingLength;
  params.absolute = this->LinkingLengthIsAbsolute ? 1 : 0;
  params.min_members = this->MinimumMembers;
  const int status = phew_find_fof_groups(&core, &in, &params, adaptor.LabelArray(0), this->Result);
  if (status != PHEW_OK || !this->PhysicsThisRun)
  {
    return status;
  }
  phew_physics::Grouping grouping;
  grouping.Labels = adaptor.LabelArray(0);
  grouping.Count = this->Result->n_groups;
  return this->RunPhysics(core, in, grouping, adaptor.LabelArray(1), adaptor.EnergyArray());
}

std::string vtkPHEWFriendsOfFriends::FillOutputs(
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
  // else at the centre of mass (CenterOfMassX/Y/Z).
  phew_markers::BuildVertices(groups, phew_markers::CENTRE_OF_MASS, PHEW_ARRAY_GROUP_ID,
    vtkPolyData::GetData(outputVector, MARKERS_PORT));
  return std::string();
}

void vtkPHEWFriendsOfFriends::DescribeParameters(std::vector<std::string>& entries)
{
  using phew_run_record::Entry;
  entries.push_back(Entry("LinkingLength", this->LinkingLength));
  entries.push_back(Entry("LinkingLengthIsAbsolute", this->LinkingLengthIsAbsolute ? "1" : "0"));
  entries.push_back(Entry("LinkingLengthUsed", this->Result->linking_length_used));
  entries.push_back(Entry("MinimumMembers", this->MinimumMembers));
  this->DescribePhysics(entries);
}

void vtkPHEWFriendsOfFriends::ReleaseResult()
{
  phew_group_result_free(this->Result);
  this->ReleasePhysics();
}
