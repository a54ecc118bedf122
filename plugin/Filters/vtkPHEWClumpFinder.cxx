#include "vtkPHEWClumpFinder.h"

#include "vtkPHEWAMRInput.h"
#include "vtkPHEWAMRParticles.h"
#include "vtkPHEWClumpGeometry.h"
#include "vtkPHEWHaloColours.h"
#include "vtkPHEWSnapshotDefaults.h"
#include "vtkPHEWDendrogramPlot.h"
#include "vtkPHEWImageInput.h"
#include "vtkPHEWInputAdaptor.h"
#include "vtkPHEWMarkers.h"
#include "vtkPHEWPhysics.h"
#include "vtkPHEWPointsInput.h"
#include "vtkPHEWRunRecord.h"
#include "vtkPHEWTables.h"

#include "vtkAlgorithm.h"
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
#include "vtkSmartPointer.h"
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
  this->Result = new phew_clump_result();
  this->SetNumberOfInputPorts(2); // the density, and the optional Particles of an AMR run
  this->SetNumberOfOutputPorts(NUMBER_OF_PORTS);

  // Defaults of the core (automatic thresholds), except saddle merging, on: it makes the
  // hierarchy that the dendrogram shows.
  phew_params defaults;
  phew_params_init(&defaults);
  this->DensityThreshold = defaults.density_threshold;
  this->RelevanceThreshold = -1.0; // automatic: the core's 2, or the paper's 3 (PaperDefaults)
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

vtkPHEWClumpFinder::~vtkPHEWClumpFinder()
{
  phew_clump_result_free(this->Result);
  delete this->Result;
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
  os << indent << "DendrogramLayout: " << this->DendrogramLayout << "\n";
  os << indent << "DendrogramMassCut: " << this->DendrogramMassCut << "\n";
  os << indent << "EstimateDensity: " << this->EstimateDensity << "\n";
  os << indent << "NumberOfNeighbours: " << this->NumberOfNeighbours << "\n";
  os << indent << "NumberOfDensityNeighbours: " << this->NumberOfDensityNeighbours << "\n";
}

//------------------------------------------------------------------------------
int vtkPHEWClumpFinder::FillInputPortInformation(int port, vtkInformation* info)
{
  this->Superclass::FillInputPortInformation(port, info);
  if (port == 1)
  {
    info->Set(vtkAlgorithm::INPUT_IS_OPTIONAL(), 1);
  }
  return 1;
}

int vtkPHEWClumpFinder::FillOutputPortInformation(int port, vtkInformation* info)
{
  switch (port)
  {
    case PARTICLES_PORT: // the particles' type (RequestDataObject)
      info->Set(vtkDataObject::DATA_TYPE_NAME(), "vtkDataObject");
      return 1;
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

int vtkPHEWClumpFinder::RequestDataObject(
  vtkInformation* request, vtkInformationVector** inputVector, vtkInformationVector* outputVector)
{
  if (!this->Superclass::RequestDataObject(request, inputVector, outputVector))
  {
    return 0;
  }
  // The Particles output has the particles' type (an empty polydata without them).
  vtkDataObject* particles = vtkDataObject::GetData(inputVector[1], 0);
  vtkInformation* info = outputVector->GetInformationObject(PARTICLES_PORT);
  vtkDataObject* output = vtkDataObject::GetData(info);
  const char* type = particles ? particles->GetClassName() : "vtkPolyData";
  if (!output || std::strcmp(output->GetClassName(), type) != 0)
  {
    vtkSmartPointer<vtkDataObject> fresh = particles
      ? vtkSmartPointer<vtkDataObject>::Take(particles->NewInstance())
      : vtkSmartPointer<vtkDataObject>(vtkSmartPointer<vtkPolyData>::New());
    info->Set(vtkDataObject::DATA_OBJECT(), fresh);
  }
  return 1;
}

//------------------------------------------------------------------------------
void vtkPHEWClumpFinder::ClearOutputs(vtkInformationVector* outputVector)
{
  if (vtkDataObject* output = vtkDataObject::GetData(outputVector, LABELS_PORT))
  {
    output->Initialize();
  }
  ClearTables(outputVector);
}

std::unique_ptr<phew_adaptors::InputAdaptor> vtkPHEWClumpFinder::MakeAdaptor(
  vtkDataObject* input, std::string& problem)
{
  this->AMRParticles = nullptr;
  // The connections are the same on every rank: no agreement needed.
  if (this->GetNumberOfInputConnections(1) > 0 && !vtkOverlappingAMR::SafeDownCast(input))
  {
    problem = std::string("the Particles input takes the clumps of the AMR cells that hold the "
                          "particles: it needs an AMR input (vtkOverlappingAMR), not a ") +
      (input ? input->GetClassName() : "(none)") + "; disconnect Particles";
    return nullptr;
  }
  if (auto* image = vtkImageData::SafeDownCast(input))
  {
    return std::unique_ptr<phew_adaptors::InputAdaptor>(new phew_adaptors::ImageInput(image));
  }
  if (auto* amr = vtkOverlappingAMR::SafeDownCast(input))
  {
    return this->MakeAMRAdaptor(amr);
  }
  if (phew_adaptors::PointsInput::Accepts(input))
  {
    vtkMultiProcessController* controller = vtkMultiProcessController::GetGlobalController();
    if (this->Periodic == 1 && (!controller || controller->GetLocalProcessId() == 0))
    {
      vtkWarningMacro("Periodic applies to images and AMR; particles use PeriodicX, PeriodicY "
                      "and PeriodicZ (with a box: BoxFromDataBounds off)");
    }
    return this->Superclass::MakeAdaptor(input, problem);
  }
  // Every rank has an input of the same type: no agreement needed.
  problem = std::string("unsupported input type ") + (input ? input->GetClassName() : "(none)") +
    ": PHEW Clump Finder needs vtkImageData, vtkOverlappingAMR, a point set (vtkPolyData, "
    "vtkUnstructuredGrid...) or a composite dataset of point sets";
  return nullptr;
}

std::unique_ptr<phew_adaptors::InputAdaptor> vtkPHEWClumpFinder::MakeAMRAdaptor(
  vtkOverlappingAMR* amr)
{
  if (this->GetNumberOfInputConnections(1) == 0)
  {
    return std::unique_ptr<phew_adaptors::InputAdaptor>(new phew_adaptors::AMRInput(amr));
  }
  vtkDataObject* particles = this->GetInputDataObject(1, 0);
  // As on particles: a snapshot read in code units has no known G (no physics).
  const bool physics = this->HaloProperties && phew_physics::UnitsKnown(particles);
  vtkMultiProcessController* controller = vtkMultiProcessController::GetGlobalController();
  if (this->HaloProperties && !physics && (!controller || controller->GetLocalProcessId() == 0))
  {
    vtkWarningMacro("the particles were read in code units, where G is not known: no halo "
                    "properties, the particles get ClumpId and HaloId only (read them in "
                    "astronomers' units: the reader's Units)");
  }
  // The box and thread properties apply to the particles; their arrays are the readers'.
  auto* adaptor =
    new phew_adaptors::AMRParticlesInput(amr, particles, this->MakePointOptions(), physics);
  this->AMRParticles = adaptor;
  return std::unique_ptr<phew_adaptors::InputAdaptor>(adaptor);
}

void vtkPHEWClumpFinder::ConfigureContext(phew_adaptors::Context& context)
{
  // A snapshot reader's periodic (cosmological) box: periodic grids and AMR, and the paper's
  // halo parameters for PHEW on estimated particle densities (vtkPHEWSnapshotDefaults.h).
  vtkDataObject* input = vtkDataObject::GetData(context.InputInformation);
  // (properties and the input's type: the same on every rank, so all ranks read or none)
  const bool particles = phew_adaptors::PointsInput::Accepts(input);
  const bool read = particles ? this->BoxFromSnapshot && this->EstimateDensity : this->Periodic < 0;
  phew_snapshot_defaults::Snapshot snapshot;
  if (read && (context.NumberOfRanks == 1 || context.Controller))
  {
    snapshot = phew_snapshot_defaults::Read(context, input);
  }
  this->PaperDefaults = particles && read && snapshot.Periodic && snapshot.Cosmological;
  context.Periodic = this->Periodic == 1 || (!particles && this->Periodic < 0 && snapshot.Periodic);
  context.ArraySelection = this->GetInputArrayInformation(0);
  context.Density = [this](vtkDataObject* data, int& association) {
    association = -1;
    return this->GetInputArrayToProcess(0, data, association);
  };
}

void vtkPHEWClumpFinder::ConfigurePointOptions(phew_adaptors::PointOptions& options)
{
  options.LabelNames = { PHEW_ARRAY_PEAK_PATCH_ID, PHEW_ARRAY_CLUMP_ID, PHEW_ARRAY_HALO_ID };
  options.WithDensity = true;
  options.EstimateDensity = this->EstimateDensity;
  options.NumberOfNeighbours = this->NumberOfNeighbours;
  options.NumberOfDensityNeighbours = this->NumberOfDensityNeighbours;
  this->PhysicsThisRun = this->PhysicsRequested(options);
  if (this->PhysicsThisRun)
  {
    options.LabelNames.push_back("BoundClumpId"); // LabelArray(3)
    options.WithEnergy = true;
  }
}

//------------------------------------------------------------------------------
int vtkPHEWClumpFinder::RunCore(
  phew_context& core, phew_input& in, phew_labels& labels, phew_adaptors::InputAdaptor& adaptor)
{
  phew_params params;
  phew_params_init(&params);
  params.density_threshold = this->DensityThreshold;
  params.relevance_threshold = this->RelevanceUsed();
  params.saddle_merging = this->SaddleMerging ? 1 : 0;
  params.saddle_threshold = this->SaddleThreshold;
  if (this->PaperDefaults) // estimated densities are in units of the mean density
  {
    using namespace phew_snapshot_defaults;
    params.density_threshold =
      this->DensityThreshold < 0.0 ? PAPER_DENSITY_THRESHOLD : this->DensityThreshold;
    params.saddle_threshold =
      this->SaddleThreshold < 0.0 ? PAPER_SADDLE_THRESHOLD : this->SaddleThreshold;
  }
  params.mass_threshold = this->MassThreshold;
  const auto start = std::chrono::steady_clock::now();
  int status = phew_find_clumps(&core, &in, &params, &labels, this->Result);
  this->ParticlesFailed = false;
  if (phew_adaptors::AMRParticlesInput* particles = this->AMRParticles)
  {
    // RAMSES's way: the particles take their leaf cell's clump, then are unbound in it.
    this->PhysicsThisRun = particles->WithPhysics(); // agreed by the ranks
    if (status == PHEW_OK)
    {
      status = particles->LabelParticles(core, in, labels);
      if (status == PHEW_OK && this->PhysicsThisRun)
      {
        status = this->RunClumpPhysics(core, particles->Particles(), particles->ClumpIds(),
          particles->BoundIds(), particles->Energies(), this->GetInputDataObject(1, 0));
      }
      this->ParticlesFailed = status != PHEW_OK; // a message about the particles, not the AMR
    }
  }
  else if (status == PHEW_OK && this->PhysicsThisRun && in.mesh == PHEW_MESH_POINTS)
  {
    status = this->RunClumpPhysics(
      core, in, labels.clump_id, adaptor.LabelArray(3), adaptor.EnergyArray(), nullptr);
  }
  const std::chrono::duration<double> seconds = std::chrono::steady_clock::now() - start;
  this->Seconds = seconds.count();
  return status;
}

int vtkPHEWClumpFinder::RunClumpPhysics(phew_context& core, const phew_input& particles,
  const int64_t* clumps, int64_t* bound, double* energy, vtkDataObject* metadata)
{
  // the clumps with their parents, and their peaks as the spherical method's centres
  const int64_t n = this->Result->n_clumps;
  std::vector<int64_t> parents(static_cast<size_t>(n));
  std::vector<double> peaks(3 * static_cast<size_t>(n));
  for (int64_t c = 0; c < n; ++c)
  {
    parents[c] = this->Result->clumps[c].parent_id;
    std::copy(this->Result->clumps[c].peak_position, this->Result->clumps[c].peak_position + 3,
      &peaks[3 * c]);
  }
  phew_physics::Grouping grouping;
  grouping.Labels = clumps;
  grouping.Count = n;
  grouping.HasParents = grouping.HasCentres = true;
  grouping.Parents = parents.data();
  grouping.Centres = peaks.data();
  return this->RunPhysics(core, particles, grouping, bound, energy, metadata);
}

std::string vtkPHEWClumpFinder::DescribeFailure(
  const phew_adaptors::Context& context, int status, const char* message)
{
  const std::string subject = this->ParticlesFailed ? "the particles of the Particles input"
    : context.Subject.empty()                       ? "density '" + context.DensityName + "'"
                                                    : context.Subject;
  return "PHEW failed on " + subject + " (" + phew_status_string(static_cast<phew_status>(status)) +
    "): " + message;
}

double vtkPHEWClumpFinder::RelevanceUsed() const
{
  if (!(this->RelevanceThreshold < 0.0)) // (NaN too: the core refuses it)
  {
    return this->RelevanceThreshold;
  }
  phew_params defaults;
  phew_params_init(&defaults);
  return this->PaperDefaults ? phew_snapshot_defaults::PAPER_RELEVANCE_THRESHOLD
                             : defaults.relevance_threshold;
}

namespace
{
std::string Threshold(const char* name, double value) // negative: automatic
{
  return value < 0.0 ? phew_run_record::Entry(name, "auto") : phew_run_record::Entry(name, value);
}
}

void vtkPHEWClumpFinder::DescribeParameters(std::vector<std::string>& entries)
{
  using phew_run_record::Entry;
  entries.push_back(Threshold("DensityThreshold", this->DensityThreshold));
  entries.push_back(Entry("RelevanceThreshold", this->RelevanceUsed()));
  if (this->PaperDefaults)
  {
    entries.push_back(Entry("AutomaticThresholds",
      "the PHEW paper's halo parameters (a periodic cosmological snapshot)"));
  }
  entries.push_back(Entry("SaddleMerging", this->SaddleMerging ? "1" : "0"));
  if (this->SaddleMerging)
  {
    entries.push_back(Threshold("SaddleThreshold", this->SaddleThreshold));
  }
  entries.push_back(Entry("MassThreshold", this->MassThreshold));
  if (this->AMRParticles)
  {
    entries.push_back(Entry("Particles", "labelled by their AMR leaf cell"));
  }
  if (this->Result->columns != 0) // particles
  {
    entries.push_back(Entry("EstimateDensity", this->EstimateDensity ? "1" : "0"));
    entries.push_back(Entry("NumberOfNeighbours", this->NumberOfNeighbours));
    entries.push_back(Entry("NumberOfDensityNeighbours", this->NumberOfDensityNeighbours));
  }
  this->DescribePhysics(entries);
}

void vtkPHEWClumpFinder::ReleaseResult()
{
  phew_clump_result_free(this->Result);
  this->ReleasePhysics();
  this->AMRParticles = nullptr; // the driver's, gone with its run
}

//------------------------------------------------------------------------------
std::string vtkPHEWClumpFinder::FillOutputs(
  phew_adaptors::Context& context, vtkDataObject* labelled, vtkInformationVector* outputVector)
{
  if (this->AMRParticles) // the labelled particles
  {
    const std::string problem = this->AMRParticles->FinishParticles(
      context, vtkDataObject::GetData(outputVector, PARTICLES_PORT));
    if (!problem.empty())
    {
      return problem;
    }
  }
  // The haloes' colours first: collective, so before any return that one rank may take alone
  // (the dendrogram is drawn on rank 0 only).
  const std::vector<int32_t> colours = this->HaloColours(context);
  // The three catalogues (complete on rank 0, no rows elsewhere) and the dendrogram drawn.
  const phew_clump_result& result = *this->Result;
  vtkTable* clumps = vtkTable::GetData(outputVector, CLUMPS_PORT);
  vtkTable* haloes = vtkTable::GetData(outputVector, HALOES_PORT);
  phew_tables::FillClumps(clumps, result);
  if (this->PhysicsRan)
  {
    phew_physics::AppendColumns(clumps, *this->Physics);
  }
  phew_tables::FillDendrogram(vtkTable::GetData(outputVector, DENDROGRAM_PORT), result);
  phew_tables::FillHaloes(haloes, result);
  phew_tables::AddRunFigures(clumps, result, this->Seconds);
  const std::string problem =
    phew_dendrogram_plot::Build(result, { this->DendrogramLayout == 0, this->DendrogramMassCut },
      vtkPolyData::GetData(outputVector, DENDROGRAM_PLOT_PORT));
  const std::string empty = WhyEmpty(result, this->RelevanceUsed(), this->MassThreshold);
  if (!empty.empty() && context.Rank == 0)
  {
    vtkWarningMacro(<< empty);
  }
  if (!problem.empty())
  {
    return problem;
  }

  // What the 3D view draws: the clumps and the markers.
  this->ReportProgress(0.95, "drawings");
  phew_clump_geometry::Build(
    labelled, context.DensityName.c_str(), vtkPolyData::GetData(outputVector, CLUMP_GEOMETRY_PORT));
  phew_markers::Build(clumps, haloes, vtkMultiBlockDataSet::GetData(outputVector, MARKERS_PORT));
  for (int port : { CLUMP_GEOMETRY_PORT, DENDROGRAM_PLOT_PORT, PARTICLES_PORT })
  {
    phew_halo_colours::AddArray(
      vtkDataObject::GetData(outputVector, port), PHEW_ARRAY_HALO_ID, colours);
  }
  return std::string();
}

std::vector<int32_t> vtkPHEWClumpFinder::HaloColours(const phew_adaptors::Context& context)
{
  phew_halo_colours::Catalogue catalogue;
  for (int64_t h = 0; h < this->Result->n_haloes; ++h)
  {
    catalogue.Add(this->Result->haloes[h].mass, this->Result->haloes[h].center_of_mass);
  }
  return phew_halo_colours::Compute(context, catalogue, this->InputPeriod);
}
