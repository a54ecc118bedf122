#include "vtkPHEWClumpFinder.h"

#include "vtkPHEWAMRInput.h"
#include "vtkPHEWImageInput.h"
#include "vtkPHEWInputAdaptor.h"
#include "vtkPHEWPointsInput.h"
#include "vtkPHEWTables.h"

#include "vtkCompositeDataSet.h"
#include "vtkDataArray.h"
#include "vtkDataObject.h"
#include "vtkDataSetAttributes.h"
#include "vtkImageData.h"
#include "vtkInformation.h"
#include "vtkInformationVector.h"
#include "vtkMultiProcessController.h"
#include "vtkNew.h"
#include "vtkObjectFactory.h"
#include "vtkOverlappingAMR.h"
#include "vtkSmartPointer.h"
#include "vtkTable.h"

#include "phew/phew.h"

#include <cstring>
#include <string>

// The label arrays are handed to the core as int64_t*, without a copy.
static_assert(sizeof(vtkIdType) == sizeof(int64_t), "PHEW needs a VTK built with 64-bit ids");

vtkStandardNewMacro(vtkPHEWClumpFinder);

namespace
{
// The core reports progress per stage; the filter maps it onto [0.05, 0.95].
void ForwardProgress(double fraction, const char* stage, void* user_data)
{
  auto* self = static_cast<vtkAlgorithm*>(user_data);
  self->SetProgressText(stage);
  self->UpdateProgress(0.05 + 0.9 * fraction);
}

// Empty tables (no columns, no rows): what every catalogue port holds after an error.
void ClearTables(vtkInformationVector* outputVector)
{
  for (int port = vtkPHEWClumpFinder::CLUMPS_PORT; port <= vtkPHEWClumpFinder::HALOES_PORT; ++port)
  {
    if (vtkTable* table = vtkTable::GetData(outputVector, port))
    {
      table->Initialize();
    }
  }
}
}

//------------------------------------------------------------------------------
vtkPHEWClumpFinder::vtkPHEWClumpFinder()
{
  this->SetNumberOfInputPorts(1);
  this->SetNumberOfOutputPorts(4);

  // Defaults of the core (the density threshold has none: the core requires it).
  phew_params defaults;
  phew_params_init(&defaults);
  this->RelevanceThreshold = defaults.relevance_threshold;
  this->SaddleMerging = defaults.saddle_merging != 0;
  this->SaddleThreshold = defaults.saddle_threshold;
  this->MassThreshold = defaults.mass_threshold;

  // Default density: the active point scalars (ParaView always sets the array explicitly).
  this->SetInputArrayToProcess(
    0, 0, 0, vtkDataObject::FIELD_ASSOCIATION_POINTS, vtkDataSetAttributes::SCALARS);
  // Particles: no mass, velocity or id array unless one is selected.
  for (int which = phew_adaptors::POINT_MASS; which < phew_adaptors::POINT_ARRAY_COUNT; ++which)
  {
    this->SetInputArrayToProcess(
      which, 0, 0, vtkDataObject::FIELD_ASSOCIATION_POINTS, phew_adaptors::NoArrayName);
  }
}

//------------------------------------------------------------------------------
void vtkPHEWClumpFinder::SetPeriodicX(int on)
{
  this->SetPeriodicAxes(on, this->PeriodicAxes[1], this->PeriodicAxes[2]);
}

void vtkPHEWClumpFinder::SetPeriodicY(int on)
{
  this->SetPeriodicAxes(this->PeriodicAxes[0], on, this->PeriodicAxes[2]);
}

void vtkPHEWClumpFinder::SetPeriodicZ(int on)
{
  this->SetPeriodicAxes(this->PeriodicAxes[0], this->PeriodicAxes[1], on);
}

//------------------------------------------------------------------------------
void vtkPHEWClumpFinder::PrintSelf(ostream& os, vtkIndent indent)
{
  this->Superclass::PrintSelf(os, indent);
  os << indent << "DensityThreshold: " << this->DensityThreshold << "\n";
  os << indent << "RelevanceThreshold: " << this->RelevanceThreshold << "\n";
  os << indent << "SaddleMerging: " << this->SaddleMerging << "\n";
  os << indent << "SaddleThreshold: " << this->SaddleThreshold << "\n";
  os << indent << "MassThreshold: " << this->MassThreshold << "\n";
  os << indent << "Periodic: " << this->Periodic << "\n";
  os << indent << "EstimateDensity: " << this->EstimateDensity << "\n";
  os << indent << "NumberOfNeighbours: " << this->NumberOfNeighbours << "\n";
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
int vtkPHEWClumpFinder::FillInputPortInformation(int, vtkInformation* info)
{
  // Image data, overlapping AMR, point sets and composites of point sets; in fact any data
  // object, so that vtkCompositeDataPipeline always hands the filter the whole composite input
  // in one RequestData call (it would otherwise run the filter once per block of a composite
  // it does not list, with collective calls that do not match across ranks), and so that an
  // input of another type gets this filter's own message. RequestData rejects what it does
  // not support, with one error on every rank.
  info->Set(vtkAlgorithm::INPUT_REQUIRED_DATA_TYPE(), "vtkDataObject");
  return 1;
}

//------------------------------------------------------------------------------
int vtkPHEWClumpFinder::FillOutputPortInformation(int port, vtkInformation* info)
{
  // Port 0 has the type of the input (created in RequestDataObject); the others are tables.
  info->Set(vtkDataObject::DATA_TYPE_NAME(), port == LABELS_PORT ? "vtkDataObject" : "vtkTable");
  return 1;
}

//------------------------------------------------------------------------------
int vtkPHEWClumpFinder::RequestDataObject(
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
  for (int port = CLUMPS_PORT; port <= HALOES_PORT; ++port)
  {
    vtkInformation* info = outputVector->GetInformationObject(port);
    if (!vtkTable::GetData(info))
    {
      vtkNew<vtkTable> table;
      info->Set(vtkDataObject::DATA_OBJECT(), table);
    }
  }
  return 1;
}

//------------------------------------------------------------------------------
int vtkPHEWClumpFinder::RequestData(
  vtkInformation*, vtkInformationVector** inputVector, vtkInformationVector* outputVector)
{
  vtkInformation* inInfo = inputVector[0]->GetInformationObject(0);
  vtkDataObject* input = vtkDataObject::GetData(inInfo);
  vtkDataObject* output = vtkDataObject::GetData(outputVector, LABELS_PORT);
  output->Initialize();
  ClearTables(outputVector);
  this->UpdateProgress(0.0);

  bool ok = false;
  if (auto* image = vtkImageData::SafeDownCast(input))
  {
    phew_adaptors::ImageInput adaptor(image);
    ok = this->RunCore(adaptor, inInfo, output, outputVector);
  }
  else if (auto* amr = vtkOverlappingAMR::SafeDownCast(input))
  {
    phew_adaptors::AMRInput adaptor(amr);
    ok = this->RunCore(adaptor, inInfo, output, outputVector);
  }
  else if (phew_adaptors::PointsInput::Accepts(input))
  {
    vtkMultiProcessController* controller = vtkMultiProcessController::GetGlobalController();
    if (this->Periodic && (!controller || controller->GetLocalProcessId() == 0))
    {
      vtkWarningMacro("Periodic applies to images and AMR; particles use PeriodicX, PeriodicY "
                      "and PeriodicZ (with a box: BoxFromDataBounds off)");
    }
    phew_adaptors::PointOptions options;
    options.EstimateDensity = this->EstimateDensity;
    options.NumberOfNeighbours = this->NumberOfNeighbours;
    options.NumberOfDensityNeighbours = this->NumberOfDensityNeighbours;
    options.NumberOfThreads = this->NumberOfThreads;
    options.BoxFromDataBounds = this->BoxFromDataBounds;
    for (int d = 0; d < 3; ++d)
    {
      options.BoxOrigin[d] = this->BoxOrigin[d];
      options.BoxSize[d] = this->BoxSize[d];
      options.Periodic[d] = this->PeriodicAxes[d] != 0;
    }
    options.Array = [this](int which, vtkDataObject* data, int& association) {
      association = -1;
      return this->GetInputArrayToProcess(which, data, association);
    };
    options.SelectedName = [this](int which) {
      vtkInformation* info = this->GetInputArrayInformation(which);
      return std::string(info && info->Has(vtkDataObject::FIELD_NAME())
          ? info->Get(vtkDataObject::FIELD_NAME())
          : "");
    };
    phew_adaptors::PointsInput adaptor(input, options);
    ok = this->RunCore(adaptor, inInfo, output, outputVector);
  }
  else
  {
    // Every rank has an input of the same type: no agreement needed.
    vtkErrorMacro("unsupported input type "
      << (input ? input->GetClassName() : "(none)")
      << ": PHEW Clump Finder needs vtkImageData, vtkOverlappingAMR, a point set (vtkPolyData, "
         "vtkUnstructuredGrid...) or a composite dataset of point sets");
  }

  if (!ok)
  {
    output->Initialize();
    ClearTables(outputVector);
    return 0;
  }
  this->UpdateProgress(1.0);
  return 1;
}

//------------------------------------------------------------------------------
bool vtkPHEWClumpFinder::RunCore(phew_adaptors::InputAdaptor& adaptor, vtkInformation* inInfo,
  vtkDataObject* output, vtkInformationVector* outputVector)
{
  phew_adaptors::Context context;
  std::string problem = phew_adaptors::InitializeContext(context);
  if (!problem.empty())
  {
    vtkErrorMacro(<< problem);
    return false;
  }
  context.Periodic = this->Periodic;
  context.InputInformation = inInfo;
  context.ArraySelection = this->GetInputArrayInformation(0);
  context.Density = [this](vtkDataObject* data, int& association) {
    association = -1;
    return this->GetInputArrayToProcess(0, data, association);
  };

  // 1. The adaptor describes the cells (collective; a problem is agreed by every rank).
  phew_input in;
  std::memset(&in, 0, sizeof in);
  phew_labels labels = { nullptr, nullptr, nullptr, nullptr };
  problem = adaptor.Prepare(context, in, labels);
  if (!problem.empty())
  {
    vtkErrorMacro(<< problem);
    return false;
  }
  if (!context.Warning.empty() && context.Rank == 0)
  {
    vtkWarningMacro(<< context.Warning);
  }

  // 2. Parameters, communicator, progress.
  phew_params params;
  phew_params_init(&params);
  params.density_threshold = this->DensityThreshold;
  params.relevance_threshold = this->RelevanceThreshold;
  params.saddle_merging = this->SaddleMerging ? 1 : 0;
  params.saddle_threshold = this->SaddleThreshold;
  params.mass_threshold = this->MassThreshold;
  in.mpi_comm = context.MPIComm;
  in.progress = ForwardProgress;
  in.progress_data = this;

  // 3. Run.
  this->UpdateProgress(0.05);
  phew_result result;
  const phew_status status = phew_find_clumps(&in, &params, &labels, &result);
  if (status != PHEW_OK) // collective: the same status and message on every rank
  {
    const std::string subject =
      context.Subject.empty() ? "density '" + context.DensityName + "'" : context.Subject;
    vtkErrorMacro("PHEW failed on " << subject << " (" << phew_status_string(status)
                                    << "): " << result.message);
    phew_result_free(&result);
    return false;
  }

  // 4. Outputs: the labels on a shallow copy of the input (its arrays are shared, never
  //    modified), and the three catalogues (complete on rank 0, no rows elsewhere).
  problem = adaptor.Finish(context, output);
  if (!problem.empty())
  {
    vtkErrorMacro(<< problem);
    phew_result_free(&result);
    return false;
  }
  vtkPHEWTables::FillClumps(vtkTable::GetData(outputVector, CLUMPS_PORT), result);
  vtkPHEWTables::FillDendrogram(vtkTable::GetData(outputVector, DENDROGRAM_PORT), result);
  vtkPHEWTables::FillHaloes(vtkTable::GetData(outputVector, HALOES_PORT), result);
  phew_result_free(&result);
  return true;
}
