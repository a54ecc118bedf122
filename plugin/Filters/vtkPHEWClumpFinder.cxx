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
#include "vtkObjectFactory.h"
#include "vtkOverlappingAMR.h"
#include "vtkTable.h"

#include "phew/phew.h"

#include <chrono>
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
  this->SetNumberOfOutputPorts(4);

  // Defaults of the core (the density threshold has none: the core requires it).
  phew_params defaults;
  phew_params_init(&defaults);
  this->RelevanceThreshold = defaults.relevance_threshold;
  this->SaddleMerging = defaults.saddle_merging != 0;
  this->SaddleThreshold = defaults.saddle_threshold;
  this->MassThreshold = defaults.mass_threshold;

  // Input arrays 0-3: density, mass, velocity, id (particles: no mass, velocity or id array
  // unless one is selected).
  const int indices[phew_adaptors::POINT_ARRAY_COUNT] = { 0, 1, 2, 3 };
  this->SetPointArrayIndices(indices);
  // Default density: the active point scalars (ParaView always sets the array explicitly).
  this->SetInputArrayToProcess(
    0, 0, 0, vtkDataObject::FIELD_ASSOCIATION_POINTS, vtkDataSetAttributes::SCALARS);
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
    // The box, periodic axes, threads and arrays of the properties (vtkPHEWParticleFilter).
    phew_adaptors::PointOptions options = this->MakePointOptions();
    options.EstimateDensity = this->EstimateDensity;
    options.NumberOfNeighbours = this->NumberOfNeighbours;
    options.NumberOfDensityNeighbours = this->NumberOfDensityNeighbours;
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
  const auto start = std::chrono::steady_clock::now();
  const phew_status status = phew_find_clumps(&in, &params, &labels, &result);
  const std::chrono::duration<double> seconds = std::chrono::steady_clock::now() - start;
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
  vtkPHEWTables::AddRunFigures(vtkTable::GetData(outputVector, CLUMPS_PORT), result, seconds.count());
  phew_result_free(&result);
  return true;
}
