#include "vtkPHEWFriendsOfFriends.h"

#include "vtkPHEWPointsInput.h"

#include "vtkInformationVector.h"
#include "vtkObjectFactory.h"
#include "vtkTable.h"

#include "phew/phew.h"

#include <string>

vtkStandardNewMacro(vtkPHEWFriendsOfFriends);

//------------------------------------------------------------------------------
vtkPHEWFriendsOfFriends::vtkPHEWFriendsOfFriends()
{
  this->SetNumberOfOutputPorts(2); // Labels, Groups
  // Input arrays 0-2: mass, velocity, id (no density); none unless selected.
  const int indices[phew_adaptors::POINT_ARRAY_COUNT] = { -1, 0, 1, 2 };
  this->SetPointArrayIndices(indices);
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
void vtkPHEWFriendsOfFriends::ConfigurePointOptions(phew_adaptors::PointOptions& options)
{
  options.Outputs = phew_adaptors::PointOutputs::GroupIds;
}

std::string vtkPHEWFriendsOfFriends::RunParticles(phew_context& core, phew_input& in, phew_labels&,
  phew_adaptors::PointsInput& adaptor, phew_group_result& result)
{
  phew_fof_params params;
  phew_fof_params_init(&params);
  params.linking_length = this->LinkingLength;
  params.absolute = this->LinkingLengthIsAbsolute ? 1 : 0;
  params.min_members = this->MinimumMembers;
  const phew_status status = phew_find_fof_groups(&core, &in, &params, adaptor.GroupIds(), &result);
  if (status != PHEW_OK) // collective: the same status and message on every rank
  {
    return std::string("Friends-of-Friends failed (") + phew_status_string(status) +
      "): " + core.message;
  }
  return std::string();
}

void vtkPHEWFriendsOfFriends::FillTables(
  vtkInformationVector* outputVector, const phew_group_result& result)
{
  vtkPHEWParticleFilter::FillGroupTable(vtkTable::GetData(outputVector, 1), result);
}
