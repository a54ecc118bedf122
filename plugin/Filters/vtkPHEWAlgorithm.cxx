#include "vtkPHEWAlgorithm.h"
#include "vtkPHEWHaloColours.h"

#include "vtkPHEWInputAdaptor.h"
#include "vtkPHEWPhysics.h"
#include "vtkPHEWPointsInput.h"
#include "vtkPHEWRunRecord.h"

#include "vtkDataArray.h"
#include "vtkDataObject.h"
#include "vtkDataObjectTypes.h"
#include "vtkDemandDrivenPipeline.h"
#include "vtkInformation.h"
#include "vtkInformationVector.h"
#include "vtkSmartPointer.h"
#include "vtkTable.h"

#include "phew/phew.h"

#include <cstring>

static_assert(
  phew_adaptors::POINT_ARRAY_COUNT == 4, "PointArrayIndices has one entry per PointArray");

//------------------------------------------------------------------------------
vtkPHEWAlgorithm::vtkPHEWAlgorithm()
{
  this->SetNumberOfInputPorts(1);
  this->SetNumberOfOutputPorts(1);
  this->Physics = new phew_physics_result();
}

vtkPHEWAlgorithm::~vtkPHEWAlgorithm()
{
  phew_physics_result_free(this->Physics);
  delete this->Physics;
}

//------------------------------------------------------------------------------
bool vtkPHEWAlgorithm::PhysicsRequested(const phew_adaptors::PointOptions& options)
{
  if (!this->HaloProperties || !options.SelectedName)
  {
    return false;
  }
  const std::string velocity = options.SelectedName(phew_adaptors::POINT_VELOCITY);
  return !velocity.empty() && velocity != phew_adaptors::NoArrayName &&
    phew_physics::UnitsKnown(this->GetInputDataObject(0, 0));
}

int vtkPHEWAlgorithm::RunPhysics(phew_context& core, const phew_input& in,
  const phew_physics::Grouping& grouping, int64_t* bound, double* energy, vtkDataObject* metadata)
{
  phew_physics::Options options;
  options.Unbind = this->Unbind;
  options.Potential = this->PotentialMethod;
  options.Softening = this->Softening;
  options.GravitationalConstant = this->GravitationalConstant;
  const phew_physics_params params =
    phew_physics::MakeParams(options, metadata ? metadata : this->GetInputDataObject(0, 0));
  phew_physics_result_free(this->Physics);
  this->ReportProgress(0.8, "unbinding and halo properties");
  const int status = phew_physics::Run(core, in, grouping, params, bound, energy, this->Physics);
  this->PhysicsRan = status == PHEW_OK;
  return status;
}

void vtkPHEWAlgorithm::DescribePhysics(std::vector<std::string>& entries)
{
  using phew_run_record::Entry;
  if (!this->PhysicsRan)
  {
    return;
  }
  entries.push_back(Entry("Unbind", this->Unbind ? "1" : "0"));
  entries.push_back(Entry("PotentialMethod", this->PotentialMethod == 1 ? "spherical" : "exact"));
  entries.push_back(Entry("Softening", this->Softening));
  entries.push_back(Entry("SofteningUsed", this->Physics->softening_used));
  entries.push_back(Entry("GravitationalConstantUsed", this->Physics->gravitational_constant_used));
  entries.push_back(Entry("UnbindingCandidates", this->Physics->n_candidates));
  entries.push_back(Entry("UnboundParticles", this->Physics->n_unbound));
}

void vtkPHEWAlgorithm::ReleasePhysics()
{
  phew_physics_result_free(this->Physics);
  this->PhysicsRan = false;
}

//------------------------------------------------------------------------------
void vtkPHEWAlgorithm::SetPeriodicX(int on)
{
  this->SetPeriodicAxes(on, this->PeriodicAxes[1], this->PeriodicAxes[2]);
}

void vtkPHEWAlgorithm::SetPeriodicY(int on)
{
  this->SetPeriodicAxes(this->PeriodicAxes[0], on, this->PeriodicAxes[2]);
}

void vtkPHEWAlgorithm::SetPeriodicZ(int on)
{
  this->SetPeriodicAxes(this->PeriodicAxes[0], this->PeriodicAxes[1], on);
}

//------------------------------------------------------------------------------
void vtkPHEWAlgorithm::PrintSelf(ostream& os, vtkIndent indent)
{
  this->Superclass::PrintSelf(os, indent);
  os << indent << "NumberOfThreads: " << this->NumberOfThreads << "\n";
  os << indent << "BoxFromSnapshot: " << this->BoxFromSnapshot << "\n";
  os << indent << "BoxFromDataBounds: " << this->BoxFromDataBounds << "\n";
  os << indent << "BoxOrigin: " << this->BoxOrigin[0] << " " << this->BoxOrigin[1] << " "
     << this->BoxOrigin[2] << "\n";
  os << indent << "BoxSize: " << this->BoxSize[0] << " " << this->BoxSize[1] << " "
     << this->BoxSize[2] << "\n";
  os << indent << "PeriodicAxes: " << this->PeriodicAxes[0] << " " << this->PeriodicAxes[1] << " "
     << this->PeriodicAxes[2] << "\n";
}

//------------------------------------------------------------------------------
int vtkPHEWAlgorithm::FillInputPortInformation(int, vtkInformation* info)
{
  // Any data object, so that vtkCompositeDataPipeline hands the filter a composite input whole
  // in one RequestData call (it would otherwise run the filter block by block, with collective
  // calls that do not match across ranks), and so that an input of another type gets the
  // filter's own message.
  info->Set(vtkAlgorithm::INPUT_REQUIRED_DATA_TYPE(), "vtkDataObject");
  return 1;
}

int vtkPHEWAlgorithm::FillOutputPortInformation(int port, vtkInformation* info)
{
  // Port 0 has the type of the input (created in RequestDataObject); the others are tables.
  info->Set(vtkDataObject::DATA_TYPE_NAME(), port == 0 ? "vtkDataObject" : "vtkTable");
  return 1;
}

//------------------------------------------------------------------------------
int vtkPHEWAlgorithm::RequestDataObject(
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
void vtkPHEWAlgorithm::SetPointArrayIndices(const int indices[4])
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
phew_adaptors::PointOptions vtkPHEWAlgorithm::MakePointOptions()
{
  phew_adaptors::PointOptions options;
  options.NumberOfThreads = this->NumberOfThreads;
  options.BoxFromSnapshot = this->BoxFromSnapshot;
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
  this->ConfigurePointOptions(options);
  return options;
}

//------------------------------------------------------------------------------
void vtkPHEWAlgorithm::ClearOutputs(vtkInformationVector* outputVector)
{
  for (int port = 0; port < this->GetNumberOfOutputPorts(); ++port)
  {
    if (vtkDataObject* output = vtkDataObject::GetData(outputVector, port))
    {
      output->Initialize();
    }
  }
}

void vtkPHEWAlgorithm::ReportProgress(double fraction, const char* stage)
{
  this->SetProgressText((std::string(this->GetFilterLabel()) + ": " + stage).c_str());
  this->UpdateProgress(fraction);
}

namespace
{
// The core reports progress per stage; the driver maps it onto [0.05, 0.9]: before, the
// adaptor prepares the input; after, the labels and the other outputs are made.
void ForwardProgress(double fraction, const char* stage, void* algorithm)
{
  static_cast<vtkPHEWAlgorithm*>(algorithm)->ReportProgress(0.05 + 0.85 * fraction, stage);
}
}

//------------------------------------------------------------------------------
std::unique_ptr<phew_adaptors::InputAdaptor> vtkPHEWAlgorithm::MakeAdaptor(
  vtkDataObject* input, std::string& problem)
{
  if (phew_adaptors::PointsInput::Accepts(input))
  {
    return std::unique_ptr<phew_adaptors::InputAdaptor>(
      new phew_adaptors::PointsInput(input, this->MakePointOptions()));
  }
  problem = std::string("unsupported input type ") + (input ? input->GetClassName() : "(none)") +
    ": " + this->GetFilterLabel() +
    " needs a point set (vtkPolyData, vtkUnstructuredGrid...) or a composite dataset of point "
    "sets";
  return nullptr;
}

void vtkPHEWAlgorithm::ConfigureContext(phew_adaptors::Context&) {}

std::string vtkPHEWAlgorithm::DescribeFailure(
  const phew_adaptors::Context&, int status, const char* message)
{
  return std::string(this->GetFilterLabel()) + " failed (" +
    phew_status_string(static_cast<phew_status>(status)) + "): " + message;
}

std::string vtkPHEWAlgorithm::FillOutputs(
  phew_adaptors::Context&, vtkDataObject*, vtkInformationVector*)
{
  return std::string();
}

//------------------------------------------------------------------------------
int vtkPHEWAlgorithm::RequestData(
  vtkInformation*, vtkInformationVector** inputVector, vtkInformationVector* outputVector)
{
  vtkInformation* inInfo = inputVector[0]->GetInformationObject(0);
  this->ClearOutputs(outputVector);
  // The pipeline's time: changes with this filter's properties or any upstream algorithm's,
  // not when an upstream reader runs again for a new request.
  auto* executive = vtkDemandDrivenPipeline::SafeDownCast(this->GetExecutive());
  const vtkMTimeType pipelineTime = executive ? executive->GetPipelineMTime() : 0;
  if (pipelineTime != 0 && pipelineTime == this->FailedPipelineTime)
  {
    return 1; // the same failed run, reported already: empty outputs, no second message
  }
  this->SetAbortExecute(0); // an Abort stops the run in progress; VTK 9.2 leaves it set
  this->Stopped = false;
  this->ReportProgress(0.0, "preparing the cells");
  const std::string problem = this->Execute(vtkDataObject::GetData(inInfo), inInfo, outputVector);
  this->ReleaseResult();
  if (!problem.empty())
  {
    if (!this->Stopped)
    {
      vtkErrorMacro(<< problem);
    }
    this->ClearOutputs(outputVector);
  }
  this->FailedPipelineTime = problem.empty() ? 0 : pipelineTime;
  this->ReportProgress(1.0, problem.empty() ? "done" : this->Stopped ? "stopped" : "failed");
  return 1;
}

std::string vtkPHEWAlgorithm::Execute(
  vtkDataObject* input, vtkInformation* inInfo, vtkInformationVector* outputVector)
{
  std::string problem;
  this->PhysicsThisRun = false; // a particle run's ConfigurePointOptions says
  std::unique_ptr<phew_adaptors::InputAdaptor> adaptor = this->MakeAdaptor(input, problem);
  phew_adaptors::Context context;
  if (adaptor)
  {
    problem = phew_adaptors::InitializeContext(context);
  }
  context.InputInformation = inInfo;
  this->ConfigureContext(context);
  phew_input in;
  std::memset(&in, 0, sizeof in);
  phew_labels labels = { nullptr, nullptr, nullptr, nullptr };
  if (problem.empty())
  {
    problem = adaptor->Prepare(context, in, labels); // collective, agreed
  }
  if (!problem.empty())
  {
    return problem;
  }
  if (!context.Warning.empty() && context.Rank == 0)
  {
    vtkWarningMacro(<< context.Warning);
  }
  phew_context core = phew_adaptors::CoreContext(context, this->NumberOfThreads);
  core.progress = ForwardProgress;
  core.progress_data = this;
  core.cancel = phew_adaptors::AbortRequested; // Abort stops the core
  core.cancel_data = this;
  const int status = this->RunCore(core, in, labels, *adaptor);
  if (this->StopRequested(context, status))
  {
    return std::string(this->GetFilterLabel()) + " stopped";
  }
  if (status != PHEW_OK) // collective: the same status and message on every rank
  {
    return this->DescribeFailure(context, status, core.message);
  }
  this->ReportProgress(0.9, "labels and tables");
  vtkDataObject* labelled = vtkDataObject::GetData(outputVector, 0);
  phew_halo_colours::Period(in, this->InputPeriod);
  problem = adaptor->Finish(context, labelled);
  if (problem.empty())
  {
    problem = this->FillOutputs(context, labelled, outputVector);
  }
  if (problem.empty())
  {
    this->RecordRun(input, in, outputVector);
  }
  return problem;
}

void vtkPHEWAlgorithm::DescribeParameters(std::vector<std::string>&) {}

void vtkPHEWAlgorithm::RecordRun(
  vtkDataObject* input, const phew_input& in, vtkInformationVector* outputVector)
{
  std::vector<std::string> entries = { phew_run_record::Entry("Filter", this->GetFilterLabel()),
    phew_run_record::Entry("Program", "phew " PHEW_VERSION) };
  this->DescribeParameters(entries);
  phew_run_record::DescribeInput(in, entries);
  for (int port = 1; port < this->GetNumberOfOutputPorts(); ++port)
  {
    if (vtkTable* table = vtkTable::GetData(outputVector, port))
    {
      phew_run_record::Add(table->GetFieldData(), entries, input);
    }
  }
}

bool vtkPHEWAlgorithm::StopRequested(const phew_adaptors::Context& context, int status)
{
  bool stopped = status == PHEW_CANCELLED;
  if (status == PHEW_OK)
  {
    phew_context core = phew_adaptors::CoreContext(context);
    stopped = phew_agree(&core, this->GetAbortExecute() ? PHEW_CANCELLED : PHEW_OK) != PHEW_OK;
  }
  if (stopped && context.Rank == 0) // every rank stops, as after a failure
  {
    vtkWarningMacro(<< this->GetFilterLabel()
                    << " stopped on request (Abort): the outputs are empty until a property or "
                       "the input changes");
  }
  this->Stopped = stopped;
  return stopped;
}
