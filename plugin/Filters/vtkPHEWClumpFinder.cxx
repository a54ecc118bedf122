#include "vtkPHEWClumpFinder.h"

#include "vtkPHEWAMRInput.h"
#include "vtkPHEWClumpGeometry.h"
#include "vtkPHEWDendrogramPlot.h"
#include "vtkPHEWImageInput.h"
#include "vtkPHEWInputAdaptor.h"
#include "vtkPHEWMarkers.h"
#include "vtkPHEWPointsInput.h"
#include "vtkPHEWTables.h"

#include "vtkCommunicator.h"
#include "vtkCompositeDataSet.h"
#include "vtkDataArray.h"
#include "vtkDataObject.h"
#include "vtkDataSetAttributes.h"
#include "vtkDemandDrivenPipeline.h"
#include "vtkFieldData.h"
#include "vtkImageData.h"
#include "vtkInformation.h"
#include "vtkInformationVector.h"
#include "vtkMultiBlockDataSet.h"
#include "vtkMultiProcessController.h"
#include "vtkObjectFactory.h"
#include "vtkOverlappingAMR.h"
#include "vtkPolyData.h"
#include "vtkTable.h"

#include "phew/phew.h"

#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>

// The label arrays are handed to the core as int64_t*, without a copy.
static_assert(sizeof(vtkIdType) == sizeof(int64_t), "PHEW needs a VTK built with 64-bit ids");

vtkStandardNewMacro(vtkPHEWClumpFinder);

namespace
{
// The progress bar shows the filter's name and the stage.
void ReportProgress(vtkAlgorithm* self, double fraction, const char* stage)
{
  self->SetProgressText((std::string("PHEW Clump Finder: ") + stage).c_str());
  self->UpdateProgress(fraction);
}

// The core reports progress per stage; the filter maps it onto [0.05, 0.9]: before, the
// adaptor prepares the cells; after, the labels, tables and drawings are made.
void ForwardProgress(double fraction, const char* stage, void* user_data)
{
  ReportProgress(static_cast<vtkAlgorithm*>(user_data), 0.05 + 0.85 * fraction, stage);
}

// Why a run found nothing, and what to change (rank 0 says it, as a warning).
std::string WhyEmpty(const phew_clump_result& result, double relevance, double mass)
{
  char text[512];
  const char* members = (result.columns & PHEW_COLUMNS_PARTICLES) ? "particle" : "cell";
  if (result.n_clumps > 0 && result.n_haloes > 0)
  {
    return std::string();
  }
  if (result.stats.n_test_cells == 0)
  {
    std::snprintf(text, sizeof text,
      "no %s has a density above the density threshold %g (the mean density is %g): lower "
      "Density Threshold",
      members, result.density_threshold_used, result.mean_density);
  }
  else if (result.stats.n_clumps_found == 0)
  {
    std::snprintf(text, sizeof text,
      "all %lld peaks were removed as noise: none has a relevance (peak density / key saddle "
      "density) of %g or more; lower Relevance Threshold (1 keeps every peak) or Density "
      "Threshold (%g)",
      static_cast<long long>(result.stats.n_peaks), relevance, result.density_threshold_used);
  }
  else
  {
    std::snprintf(text, sizeof text,
      "all %lld clumps (and their haloes) have a mass at or below Mass Threshold %g: lower it",
      static_cast<long long>(result.stats.n_clumps_found), mass);
  }
  return std::string("no clumps found: ") + text;
}

// What the ports after Labels hold after an error: tables without rows (they keep the
// columns of the last run, so that a spreadsheet showing one stays on its rows) and empty
// drawings.
void ClearTables(vtkInformationVector* outputVector)
{
  for (int port = vtkPHEWClumpFinder::CLUMPS_PORT; port < vtkPHEWClumpFinder::NUMBER_OF_PORTS;
       ++port)
  {
    if (vtkTable* table = vtkTable::GetData(outputVector, port))
    {
      table->SetNumberOfRows(0);
      table->GetFieldData()->Initialize();
    }
    else if (vtkDataObject* data = vtkDataObject::GetData(outputVector, port))
    {
      data->Initialize();
    }
  }
}
}

//------------------------------------------------------------------------------
vtkPHEWClumpFinder::vtkPHEWClumpFinder()
{
  this->SetNumberOfOutputPorts(NUMBER_OF_PORTS);

  // Defaults of the core (automatic thresholds), except saddle merging, on: it makes the
  // hierarchy that the dendrogram shows.
  phew_params defaults;
  phew_params_init(&defaults);
  this->DensityThreshold = defaults.density_threshold;
  this->RelevanceThreshold = defaults.relevance_threshold;
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
int vtkPHEWClumpFinder::FillOutputPortInformation(int port, vtkInformation* info)
{
  switch (port)
  {
    case CLUMP_GEOMETRY_PORT:
    case DENDROGRAM_PLOT_PORT:
      info->Set(vtkDataObject::DATA_TYPE_NAME(), "vtkPolyData");
      return 1;
    case MARKERS_PORT:
      info->Set(vtkDataObject::DATA_TYPE_NAME(), "vtkMultiBlockDataSet");
      return 1;
    default:
      return this->Superclass::FillOutputPortInformation(port, info);
  }
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
  // The pipeline's time: changes with this filter's properties or any upstream algorithm's,
  // not when an upstream reader runs again for a new request.
  auto* executive = vtkDemandDrivenPipeline::SafeDownCast(this->GetExecutive());
  const vtkMTimeType pipelineTime = executive ? executive->GetPipelineMTime() : 0;
  if (pipelineTime != 0 && pipelineTime == this->FailedPipelineTime)
  {
    return 1; // the same failed run, reported already: empty outputs, no second message
  }
  // An Abort stops the run in progress; VTK 9.2 leaves the flag set after it.
  this->SetAbortExecute(0);
  ReportProgress(this, 0.0, "preparing the cells");

  bool ok = false;
  this->Cancelled = false;
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
    // The error has been reported (once, on every rank). Returning success with empty
    // outputs keeps the pipeline from running the filter again for each output port and
    // view, which would repeat the message; a change of input or property runs it again.
    output->Initialize();
    ClearTables(outputVector);
    this->FailedPipelineTime = pipelineTime;
  }
  else
  {
    this->FailedPipelineTime = 0;
  }
  ReportProgress(this, 1.0, ok ? "done" : this->Cancelled ? "stopped" : "failed");
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
  phew_context core = phew_adaptors::CoreContext(context, this->NumberOfThreads);
  core.progress = ForwardProgress;
  core.progress_data = this;
  core.cancel = phew_adaptors::AbortRequested; // Abort stops the core
  core.cancel_data = this;

  // 3. Run.
  phew_clump_result result;
  const auto start = std::chrono::steady_clock::now();
  const phew_status status = phew_find_clumps(&core, &in, &params, &labels, &result);
  const std::chrono::duration<double> seconds = std::chrono::steady_clock::now() - start;
  // An Abort asked after the core's last check still stops the run before the outputs are
  // built; every rank agrees (a progress observer may have set it on one rank only).
  bool stopped = status == PHEW_CANCELLED;
  if (status == PHEW_OK)
  {
    int mine = this->GetAbortExecute(), any = mine;
    if (context.NumberOfRanks > 1)
    {
      context.Controller->AllReduce(&mine, &any, 1, vtkCommunicator::MAX_OP);
    }
    stopped = any != 0;
  }
  if (stopped) // every rank stops, as after a failure
  {
    if (context.Rank == 0)
    {
      vtkWarningMacro("PHEW Clump Finder stopped on request (Abort): the outputs are empty "
                      "until a property or the input changes");
    }
    this->Cancelled = true;
    phew_clump_result_free(&result);
    return false;
  }
  if (status != PHEW_OK) // collective: the same status and message on every rank
  {
    const std::string subject =
      context.Subject.empty() ? "density '" + context.DensityName + "'" : context.Subject;
    vtkErrorMacro(
      "PHEW failed on " << subject << " (" << phew_status_string(status) << "): " << core.message);
    phew_clump_result_free(&result);
    return false;
  }

  // 4. Outputs: the labels on a shallow copy of the input (its arrays are shared, never
  //    modified), and the three catalogues (complete on rank 0, no rows elsewhere).
  ReportProgress(this, 0.9, "labels and tables");
  problem = adaptor.Finish(context, output);
  if (!problem.empty())
  {
    vtkErrorMacro(<< problem);
    phew_clump_result_free(&result);
    return false;
  }
  vtkPHEWTables::FillClumps(vtkTable::GetData(outputVector, CLUMPS_PORT), result);
  vtkPHEWTables::FillDendrogram(vtkTable::GetData(outputVector, DENDROGRAM_PORT), result);
  vtkPHEWTables::FillHaloes(vtkTable::GetData(outputVector, HALOES_PORT), result);
  vtkPHEWTables::AddRunFigures(
    vtkTable::GetData(outputVector, CLUMPS_PORT), result, seconds.count());
  problem =
    vtkPHEWDendrogramPlot::Build(result, vtkPolyData::GetData(outputVector, DENDROGRAM_PLOT_PORT));
  const std::string empty = WhyEmpty(result, this->RelevanceThreshold, this->MassThreshold);
  if (!empty.empty() && context.Rank == 0)
  {
    vtkWarningMacro(<< empty);
  }
  phew_clump_result_free(&result);
  if (!problem.empty())
  {
    vtkErrorMacro(<< problem);
    return false;
  }

  // 5. What the 3D view draws: the clumps and the markers.
  ReportProgress(this, 0.95, "drawings");
  vtkPHEWClumpGeometry::Build(
    output, context.DensityName.c_str(), vtkPolyData::GetData(outputVector, CLUMP_GEOMETRY_PORT));
  vtkPHEWMarkers::Build(vtkTable::GetData(outputVector, CLUMPS_PORT),
    vtkTable::GetData(outputVector, HALOES_PORT),
    vtkMultiBlockDataSet::GetData(outputVector, MARKERS_PORT));
  return true;
}
