#include "vtkPHEWParticleFilter.h"

#include "vtkPHEWInputAdaptor.h"
#include "vtkPHEWPointsInput.h"
#include "vtkPHEWTables.h"

#include "vtkDataArray.h"
#include "vtkDataObject.h"
#include "vtkDataObjectTypes.h"
#include "vtkInformation.h"
#include "vtkInformationVector.h"
#include "vtkNew.h"
#include "vtkSmartPointer.h"
#include "vtkTable.h"

#include "phew/phew.h"

#include <cstring>

static_assert(
  phew_adaptors::POINT_ARRAY_COUNT == 4, "PointArrayIndices has one entry per PointArray");

//------------------------------------------------------------------------------
vtkPHEWParticleFilter::vtkPHEWParticleFilter()
{
  this->SetNumberOfInputPorts(1);
  this->SetNumberOfOutputPorts(1);
}

vtkPHEWParticleFilter::~vtkPHEWParticleFilter() = default;

//------------------------------------------------------------------------------
void vtkPHEWParticleFilter::SetPeriodicX(int on)
{
  this->SetPeriodicAxes(on, this->PeriodicAxes[1], this->PeriodicAxes[2]);
}

void vtkPHEWParticleFilter::SetPeriodicY(int on)
{
  this->SetPeriodicAxes(this->PeriodicAxes[0], on, this->PeriodicAxes[2]);
}

void vtkPHEWParticleFilter::SetPeriodicZ(int on)
{
  this->SetPeriodicAxes(this->PeriodicAxes[0], this->PeriodicAxes[1], on);
}

//------------------------------------------------------------------------------
void vtkPHEWParticleFilter::PrintSelf(ostream& os, vtkIndent indent)
{
  this->Superclass::PrintSelf(os, indent);
  os << indent << "NumberOfThreads: " << this->NumberOfThreads << "\n";
  os << indent << "BoxFromDataBounds: " << this->BoxFromDataBounds << "\n";
  os << indent << "BoxOrigin: " << this->BoxOrigin[0] << " " << this->BoxOrigin[1] << " "
     << this->BoxOrigin[2] << "\n";
  os << indent << "BoxSize: " << this->BoxSize[0] << " " << this->BoxSize[1] << " "
     << this->BoxSize[2] << "\n";
  os << indent << "PeriodicAxes: " << this->PeriodicAxes[0] << " " << this->PeriodicAxes[1] << " "
     << this->PeriodicAxes[2] << "\n";
}

//------------------------------------------------------------------------------
int vtkPHEWParticleFilter::FillInputPortInformation(int, vtkInformation* info)
{
  // Any data object, so that vtkCompositeDataPipeline hands the filter a composite input whole
  // in one RequestData call (it would otherwise run the filter block by block, with collective
  // calls that do not match across ranks), and so that an input of another type gets the
  // filter's own message.
  info->Set(vtkAlgorithm::INPUT_REQUIRED_DATA_TYPE(), "vtkDataObject");
  return 1;
}

int vtkPHEWParticleFilter::FillOutputPortInformation(int port, vtkInformation* info)
{
  // Port 0 has the type of the input (created in RequestDataObject); the others are tables.
  info->Set(vtkDataObject::DATA_TYPE_NAME(), port == 0 ? "vtkDataObject" : "vtkTable");
  return 1;
}

//------------------------------------------------------------------------------
int vtkPHEWParticleFilter::RequestDataObject(
  vtkInformation*, vtkInformationVector** inputVector, vtkInformationVector* outputVector)
{
  vtkDataObject* input = vtkDataObject::GetData(inputVector[0], 0);
  if (!input)
  {
    return 0;
  }
  vtkInformation* firstInfo = outputVector->GetInformationObject(0);
  vtkDataObject* first = vtkDataObject::GetData(firstInfo);
  if (!first || !first->IsA(input->GetClassName()))
  {
    auto fresh = vtkSmartPointer<vtkDataObject>::Take(input->NewInstance());
    firstInfo->Set(vtkDataObject::DATA_OBJECT(), fresh);
  }
  // The other ports hold the type FillOutputPortInformation names (tables here).
  for (int port = 1; port < this->GetNumberOfOutputPorts(); ++port)
  {
    vtkInformation* info = outputVector->GetInformationObject(port);
    const char* type = this->GetOutputPortInformation(port)->Get(vtkDataObject::DATA_TYPE_NAME());
    vtkDataObject* data = vtkDataObject::GetData(info);
    if (!data || !data->IsA(type))
    {
      auto fresh = vtkSmartPointer<vtkDataObject>::Take(vtkDataObjectTypes::NewDataObject(type));
      info->Set(vtkDataObject::DATA_OBJECT(), fresh);
    }
  }
  return 1;
}

//------------------------------------------------------------------------------
void vtkPHEWParticleFilter::SetPointArrayIndices(const int indices[4])
{
  for (int which = 0; which < phew_adaptors::POINT_ARRAY_COUNT; ++which)
  {
    this->PointArrayIndices[which] = indices[which];
    if (indices[which] >= 0)
    {
      this->SetInputArrayToProcess(
        indices[which], 0, 0, vtkDataObject::FIELD_ASSOCIATION_POINTS, phew_adaptors::NoArrayName);
    }
  }
}

//------------------------------------------------------------------------------
phew_adaptors::PointOptions vtkPHEWParticleFilter::MakePointOptions()
{
  phew_adaptors::PointOptions options;
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
    const int index = this->PointArrayIndices[which];
    return index >= 0 ? this->GetInputArrayToProcess(index, data, association) : nullptr;
  };
  options.SelectedName = [this](int which) {
    const int index = this->PointArrayIndices[which];
    vtkInformation* info = index >= 0 ? this->GetInputArrayInformation(index) : nullptr;
    return std::string(
      info && info->Has(vtkDataObject::FIELD_NAME()) ? info->Get(vtkDataObject::FIELD_NAME()) : "");
  };
  return options;
}

//------------------------------------------------------------------------------
void vtkPHEWParticleFilter::ClearOutputs(vtkInformationVector* outputVector)
{
  for (int port = 0; port < this->GetNumberOfOutputPorts(); ++port)
  {
    if (vtkDataObject* output = vtkDataObject::GetData(outputVector, port))
    {
      output->Initialize();
    }
  }
}

//------------------------------------------------------------------------------
const char* vtkPHEWParticleFilter::GetParticleFilterLabel()
{
  return this->GetClassName();
}

void vtkPHEWParticleFilter::ConfigurePointOptions(phew_adaptors::PointOptions&) {}

std::string vtkPHEWParticleFilter::RunParticles(
  phew_context&, phew_input&, phew_labels&, phew_adaptors::PointsInput&, phew_group_result&)
{
  return std::string(this->GetClassName()) + " has no particle run of its own";
}

void vtkPHEWParticleFilter::FillTables(vtkInformationVector*, const phew_group_result&) {}

void vtkPHEWParticleFilter::FillGroupTable(vtkTable* table, const phew_group_result& result)
{
  int n = 0;
  const phew_column* columns = phew_group_columns(result.columns, &n);
  vtkPHEWTables::Fill(table, columns, n, result.groups, result.n_groups, sizeof(phew_group));
}

//------------------------------------------------------------------------------
int vtkPHEWParticleFilter::RequestData(
  vtkInformation*, vtkInformationVector** inputVector, vtkInformationVector* outputVector)
{
  vtkDataObject* input = vtkDataObject::GetData(inputVector[0], 0);
  vtkDataObject* output = vtkDataObject::GetData(outputVector, 0);
  this->ClearOutputs(outputVector);
  this->SetAbortExecute(0); // an Abort stops the run in progress; VTK 9.2 leaves it set
  this->UpdateProgress(0.0);
  if (!phew_adaptors::PointsInput::Accepts(input))
  {
    // Every rank has an input of the same type: no agreement needed.
    vtkErrorMacro("unsupported input type "
      << (input ? input->GetClassName() : "(none)") << ": " << this->GetParticleFilterLabel()
      << " needs a point set (vtkPolyData, vtkUnstructuredGrid...) or a composite dataset of "
         "point sets");
    return 0;
  }

  phew_adaptors::Context context;
  std::string problem = phew_adaptors::InitializeContext(context);
  phew_adaptors::PointOptions options = this->MakePointOptions();
  this->ConfigurePointOptions(options);
  phew_adaptors::PointsInput adaptor(input, options);
  phew_input in;
  std::memset(&in, 0, sizeof in);
  phew_labels labels = { nullptr, nullptr, nullptr, nullptr };
  if (problem.empty())
  {
    problem = adaptor.Prepare(context, in, labels);
  }
  phew_group_result result;
  std::memset(&result, 0, sizeof result);
  if (problem.empty())
  {
    phew_context core = phew_adaptors::CoreContext(context, options.NumberOfThreads);
    // Abort (SetAbortExecute) stops the run between the particle stages.
    core.cancel = phew_adaptors::AbortRequested;
    core.cancel_data = this;
    this->UpdateProgress(0.1);
    problem = this->RunParticles(core, in, labels, adaptor, result);
  }
  if (problem.empty())
  {
    problem = adaptor.Finish(context, output);
  }
  if (problem.empty())
  {
    this->FillTables(outputVector, result);
  }
  phew_group_result_free(&result);
  if (!problem.empty())
  {
    vtkErrorMacro(<< problem);
    this->ClearOutputs(outputVector);
    return 0;
  }
  this->UpdateProgress(1.0);
  return 1;
}
