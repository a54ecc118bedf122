#include "vtkPHEWFriendsOfFriends.h"

#include "vtkPHEWInputAdaptor.h"
#include "vtkPHEWPointsInput.h"
#include "vtkPHEWTables.h"

#include "vtkDataArray.h"
#include "vtkDataObject.h"
#include "vtkInformation.h"
#include "vtkInformationVector.h"
#include "vtkNew.h"
#include "vtkObjectFactory.h"
#include "vtkSmartPointer.h"
#include "vtkTable.h"

#include "phew/phew.h"

#include <cstring>
#include <string>

vtkStandardNewMacro(vtkPHEWFriendsOfFriends);

namespace
{
enum Ports
{
  LABELS_PORT = 0,
  GROUPS_PORT = 1
};
// Input arrays: their index here, and the adaptor's name for them.
const int InputArrayOf[phew_adaptors::POINT_ARRAY_COUNT] = { -1, 0, 1, 2 };
}

//------------------------------------------------------------------------------
vtkPHEWFriendsOfFriends::vtkPHEWFriendsOfFriends()
{
  this->SetNumberOfInputPorts(1);
  this->SetNumberOfOutputPorts(2);
  // Input arrays 0-2: mass, velocity, id; none unless selected.
  for (int k = 0; k < 3; ++k)
  {
    this->SetInputArrayToProcess(
      k, 0, 0, vtkDataObject::FIELD_ASSOCIATION_POINTS, phew_adaptors::NoArrayName);
  }
}

void vtkPHEWFriendsOfFriends::SetPeriodicX(int on)
{
  this->SetPeriodicAxes(on, this->PeriodicAxes[1], this->PeriodicAxes[2]);
}

void vtkPHEWFriendsOfFriends::SetPeriodicY(int on)
{
  this->SetPeriodicAxes(this->PeriodicAxes[0], on, this->PeriodicAxes[2]);
}

void vtkPHEWFriendsOfFriends::SetPeriodicZ(int on)
{
  this->SetPeriodicAxes(this->PeriodicAxes[0], this->PeriodicAxes[1], on);
}

//------------------------------------------------------------------------------
void vtkPHEWFriendsOfFriends::PrintSelf(ostream& os, vtkIndent indent)
{
  this->Superclass::PrintSelf(os, indent);
  os << indent << "LinkingLength: " << this->LinkingLength
     << (this->LinkingLengthIsAbsolute ? " (absolute)" : " (of the mean spacing)") << "\n";
  os << indent << "MinimumMembers: " << this->MinimumMembers << "\n";
  os << indent << "NumberOfThreads: " << this->NumberOfThreads << "\n";
  os << indent << "BoxFromDataBounds: " << this->BoxFromDataBounds << "\n";
  os << indent << "PeriodicAxes: " << this->PeriodicAxes[0] << " " << this->PeriodicAxes[1] << " "
     << this->PeriodicAxes[2] << "\n";
}

//------------------------------------------------------------------------------
int vtkPHEWFriendsOfFriends::FillInputPortInformation(int, vtkInformation* info)
{
  // Any data object, so that a composite input arrives whole (the run is collective) and an
  // input of another type gets this filter's own message.
  info->Set(vtkAlgorithm::INPUT_REQUIRED_DATA_TYPE(), "vtkDataObject");
  return 1;
}

int vtkPHEWFriendsOfFriends::FillOutputPortInformation(int port, vtkInformation* info)
{
  info->Set(vtkDataObject::DATA_TYPE_NAME(), port == LABELS_PORT ? "vtkDataObject" : "vtkTable");
  return 1;
}

//------------------------------------------------------------------------------
int vtkPHEWFriendsOfFriends::RequestDataObject(
  vtkInformation*, vtkInformationVector** inputVector, vtkInformationVector* outputVector)
{
  vtkDataObject* input = vtkDataObject::GetData(inputVector[0], 0);
  if (!input)
  {
    return 0;
  }
  vtkInformation* labelsInfo = outputVector->GetInformationObject(LABELS_PORT);
  vtkDataObject* labels = vtkDataObject::GetData(labelsInfo);
  if (!labels || !labels->IsA(input->GetClassName()))
  {
    auto fresh = vtkSmartPointer<vtkDataObject>::Take(input->NewInstance());
    labelsInfo->Set(vtkDataObject::DATA_OBJECT(), fresh);
  }
  vtkInformation* groupsInfo = outputVector->GetInformationObject(GROUPS_PORT);
  if (!vtkTable::GetData(groupsInfo))
  {
    vtkNew<vtkTable> table;
    groupsInfo->Set(vtkDataObject::DATA_OBJECT(), table);
  }
  return 1;
}

//------------------------------------------------------------------------------
int vtkPHEWFriendsOfFriends::RequestData(
  vtkInformation*, vtkInformationVector** inputVector, vtkInformationVector* outputVector)
{
  vtkDataObject* input = vtkDataObject::GetData(inputVector[0], 0);
  vtkDataObject* output = vtkDataObject::GetData(outputVector, LABELS_PORT);
  vtkTable* groups = vtkTable::GetData(outputVector, GROUPS_PORT);
  output->Initialize();
  groups->Initialize();
  this->UpdateProgress(0.0);
  if (!phew_adaptors::PointsInput::Accepts(input))
  {
    // Every rank has an input of the same type: no agreement needed.
    vtkErrorMacro("unsupported input type "
      << (input ? input->GetClassName() : "(none)")
      << ": Friends-of-Friends needs a point set (vtkPolyData, vtkUnstructuredGrid...) or a "
         "composite dataset of point sets");
    return 0;
  }

  phew_adaptors::Context context;
  std::string problem = phew_adaptors::InitializeContext(context);
  phew_adaptors::PointOptions options;
  options.Outputs = phew_adaptors::PointOutputs::GroupIds;
  options.NumberOfThreads = this->NumberOfThreads;
  options.BoxFromDataBounds = this->BoxFromDataBounds;
  for (int d = 0; d < 3; ++d)
  {
    options.BoxOrigin[d] = this->BoxOrigin[d];
    options.BoxSize[d] = this->BoxSize[d];
    options.Periodic[d] = this->PeriodicAxes[d] != 0;
  }
  options.Array = [this](int which, vtkDataObject* data, int& association) -> vtkDataArray* {
    association = -1;
    const int index = InputArrayOf[which];
    return index >= 0 ? this->GetInputArrayToProcess(index, data, association) : nullptr;
  };
  options.SelectedName = [this](int which) {
    const int index = InputArrayOf[which];
    vtkInformation* info = index >= 0 ? this->GetInputArrayInformation(index) : nullptr;
    return std::string(
      info && info->Has(vtkDataObject::FIELD_NAME()) ? info->Get(vtkDataObject::FIELD_NAME()) : "");
  };
  phew_adaptors::PointsInput adaptor(input, options);
  phew_input in;
  std::memset(&in, 0, sizeof in);
  phew_labels labels = { nullptr, nullptr, nullptr, nullptr };
  if (problem.empty())
  {
    problem = adaptor.Prepare(context, in, labels);
  }
  phew_result result;
  std::memset(&result, 0, sizeof result);
  if (problem.empty())
  {
    in.mpi_comm = context.MPIComm;
    this->UpdateProgress(0.1);
    phew_fof_params params;
    phew_fof_params_init(&params);
    params.linking_length = this->LinkingLength;
    params.absolute = this->LinkingLengthIsAbsolute ? 1 : 0;
    params.min_members = this->MinimumMembers;
    const phew_status status = phew_find_fof_groups(&in, &params, adaptor.GroupIds(), &result);
    if (status != PHEW_OK) // collective: the same status and message on every rank
    {
      problem = std::string("Friends-of-Friends failed (") + phew_status_string(status) +
        "): " + result.message;
    }
  }
  if (problem.empty())
  {
    problem = adaptor.Finish(context, output);
  }
  if (problem.empty())
  {
    int n = 0;
    const phew_column* columns = phew_group_columns(result.columns, &n);
    vtkPHEWTables::Fill(groups, columns, n, result.groups, result.n_groups, sizeof(phew_group));
  }
  phew_result_free(&result);
  if (!problem.empty())
  {
    vtkErrorMacro(<< problem);
    output->Initialize();
    groups->Initialize();
    return 0;
  }
  this->UpdateProgress(1.0);
  return 1;
}
