#include "vtkPHEWParticleDensity.h"

#include "vtkPHEWInputAdaptor.h"
#include "vtkPHEWPointsInput.h"

#include "vtkDataArray.h"
#include "vtkDataObject.h"
#include "vtkInformation.h"
#include "vtkInformationVector.h"
#include "vtkObjectFactory.h"
#include "vtkSmartPointer.h"

#include "phew/phew.h"

#include <cstring>
#include <string>

vtkStandardNewMacro(vtkPHEWParticleDensity);

//------------------------------------------------------------------------------
vtkPHEWParticleDensity::vtkPHEWParticleDensity()
{
  this->SetNumberOfInputPorts(1);
  this->SetNumberOfOutputPorts(1);
  // Input array 0: the masses; none unless one is selected.
  this->SetInputArrayToProcess(
    0, 0, 0, vtkDataObject::FIELD_ASSOCIATION_POINTS, phew_adaptors::NoArrayName);
}

//------------------------------------------------------------------------------
void vtkPHEWParticleDensity::SetPeriodicX(int on)
{
  this->SetPeriodicAxes(on, this->PeriodicAxes[1], this->PeriodicAxes[2]);
}

void vtkPHEWParticleDensity::SetPeriodicY(int on)
{
  this->SetPeriodicAxes(this->PeriodicAxes[0], on, this->PeriodicAxes[2]);
}

void vtkPHEWParticleDensity::SetPeriodicZ(int on)
{
  this->SetPeriodicAxes(this->PeriodicAxes[0], this->PeriodicAxes[1], on);
}

//------------------------------------------------------------------------------
void vtkPHEWParticleDensity::PrintSelf(ostream& os, vtkIndent indent)
{
  this->Superclass::PrintSelf(os, indent);
  os << indent << "NumberOfDensityNeighbours: " << this->NumberOfDensityNeighbours << "\n";
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
int vtkPHEWParticleDensity::FillInputPortInformation(int, vtkInformation* info)
{
  // Any data object, so that a composite input arrives whole (the run is collective) and an
  // input of another type gets this filter's own message.
  info->Set(vtkAlgorithm::INPUT_REQUIRED_DATA_TYPE(), "vtkDataObject");
  return 1;
}

//------------------------------------------------------------------------------
int vtkPHEWParticleDensity::FillOutputPortInformation(int, vtkInformation* info)
{
  info->Set(vtkDataObject::DATA_TYPE_NAME(), "vtkDataObject"); // the input's type
  return 1;
}

//------------------------------------------------------------------------------
int vtkPHEWParticleDensity::RequestDataObject(
  vtkInformation*, vtkInformationVector** inputVector, vtkInformationVector* outputVector)
{
  vtkDataObject* input = vtkDataObject::GetData(inputVector[0], 0);
  if (!input)
  {
    return 0;
  }
  vtkInformation* outInfo = outputVector->GetInformationObject(0);
  vtkDataObject* output = vtkDataObject::GetData(outInfo);
  if (!output || !output->IsA(input->GetClassName()))
  {
    auto fresh = vtkSmartPointer<vtkDataObject>::Take(input->NewInstance());
    outInfo->Set(vtkDataObject::DATA_OBJECT(), fresh);
  }
  return 1;
}

//------------------------------------------------------------------------------
int vtkPHEWParticleDensity::RequestData(
  vtkInformation*, vtkInformationVector** inputVector, vtkInformationVector* outputVector)
{
  vtkDataObject* input = vtkDataObject::GetData(inputVector[0], 0);
  vtkDataObject* output = vtkDataObject::GetData(outputVector, 0);
  output->Initialize();
  this->UpdateProgress(0.0);
  if (!phew_adaptors::PointsInput::Accepts(input))
  {
    // Every rank has an input of the same type: no agreement needed.
    vtkErrorMacro("unsupported input type "
      << (input ? input->GetClassName() : "(none)")
      << ": Particle Density needs a point set (vtkPolyData, vtkUnstructuredGrid...) or a "
         "composite dataset of point sets");
    return 0;
  }

  phew_adaptors::Context context;
  std::string problem = phew_adaptors::InitializeContext(context);
  phew_adaptors::PointOptions options;
  options.Outputs = phew_adaptors::PointOutputs::Density;
  options.NumberOfDensityNeighbours = this->NumberOfDensityNeighbours;
  options.NumberOfThreads = this->NumberOfThreads;
  options.BoxFromDataBounds = this->BoxFromDataBounds;
  for (int d = 0; d < 3; ++d)
  {
    options.BoxOrigin[d] = this->BoxOrigin[d];
    options.BoxSize[d] = this->BoxSize[d];
    options.Periodic[d] = this->PeriodicAxes[d] != 0;
  }
  // Only the masses: input array 0.
  options.Array = [this](int which, vtkDataObject* data, int& association) -> vtkDataArray* {
    association = -1;
    return which == phew_adaptors::POINT_MASS ? this->GetInputArrayToProcess(0, data, association)
                                              : nullptr;
  };
  options.SelectedName = [this](int which) {
    vtkInformation* info = this->GetInputArrayInformation(0);
    return std::string(which == phew_adaptors::POINT_MASS && info &&
          info->Has(vtkDataObject::FIELD_NAME())
        ? info->Get(vtkDataObject::FIELD_NAME())
        : "");
  };
  phew_adaptors::PointsInput adaptor(input, options);
  phew_input in;
  std::memset(&in, 0, sizeof in);
  phew_labels labels = { nullptr, nullptr, nullptr, nullptr };
  if (problem.empty())
  {
    problem = adaptor.Prepare(context, in, labels);
  }
  if (problem.empty())
  {
    in.mpi_comm = context.MPIComm;
    this->UpdateProgress(0.1);
    phew_result result;
    const phew_status status = phew_estimate_density(&in, labels.density, &result);
    if (status != PHEW_OK) // collective: the same status and message on every rank
    {
      problem = std::string("PHEW could not estimate the density of the particles (") +
        phew_status_string(status) + "): " + result.message;
    }
    phew_result_free(&result);
  }
  if (problem.empty())
  {
    problem = adaptor.Finish(context, output);
  }
  if (!problem.empty())
  {
    vtkErrorMacro(<< problem);
    output->Initialize();
    return 0;
  }
  this->UpdateProgress(1.0);
  return 1;
}
