#include "vtkPHEWMergerTree.h"

#include "vtkPHEWInputAdaptor.h"
#include "vtkPHEWTables.h"
#include "vtkPHEWTreeDrawing.h"

#include "vtkAOSDataArrayTemplate.h"
#include "vtkCellData.h"
#include "vtkCommunicator.h"
#include "vtkMultiProcessController.h"
#include "vtkDataArray.h"
#include "vtkDataSetAttributes.h"
#include "vtkDemandDrivenPipeline.h"
#include "vtkDoubleArray.h"
#include "vtkIdTypeArray.h"
#include "vtkImageData.h"
#include "vtkInformation.h"
#include "vtkInformationVector.h"
#include "vtkObjectFactory.h"
#include "vtkPointData.h"
#include "vtkPointSet.h"
#include "vtkPolyData.h"
#include "vtkStreamingDemandDrivenPipeline.h"
#include "vtkTable.h"
#include "vtkUnsignedCharArray.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

vtkStandardNewMacro(vtkPHEWMergerTree);

struct vtkPHEWMergerTree::TracerSets
{
  phew_tracer_set Previous{}, Current{};
  ~TracerSets()
  {
    phew_tracer_set_free(&this->Previous);
    phew_tracer_set_free(&this->Current);
  }
};

struct vtkPHEWMergerTree::StepRows
{
  std::vector<std::vector<phew_link>> Links;
};

namespace
{
// `to` takes `from`'s arrays (freeing its own); `from` is left empty.
void Move(phew_tracer_set& from, phew_tracer_set& to)
{
  phew_tracer_set_free(&to);
  to = from;
  from = phew_tracer_set{};
}

// phew_link_tracked from the previous step's tracers; then the current step's own tracers
// (numbered `step`) joined by the orphans carried on. Returns a problem (the same on every
// rank, but for a join that ran out of memory: rank 0 alone joins) or "".
std::string LinkTracked(phew_context& core, const phew_step_labels& earlier,
  const phew_step_labels& later, int64_t step, int mostBound, int maxOrphanSteps,
  phew_tracer_set& previous, phew_tracer_set& current, phew_link_result& result)
{
  phew_track_params params;
  phew_track_params_init(&params);
  params.max_orphan_steps = maxOrphanSteps;
  phew_tracer_set orphans{}, own{}, joined{};
  std::string problem;
  if (phew_link_tracked(&core, &earlier, &later, &previous, &params, &result, &orphans) !=
      PHEW_OK ||
    phew_most_bound(&core, &later, step, mostBound, &own) != PHEW_OK)
  {
    problem = core.message;
  }
  else if (phew_tracer_set_join(&own, &orphans, &joined) != PHEW_OK)
  {
    problem = "out of memory for the most-bound particles";
  }
  Move(joined, current);
  phew_tracer_set_free(&orphans);
  phew_tracer_set_free(&own);
  return problem;
}
}

namespace
{
enum ArrayIndex
{
  LABELS = 0,
  IDS = 1,
  MASSES = 2,
  ENERGIES = 3
};

// Step, Time and PreviousTime, then the link columns.
vtkSmartPointer<vtkTable> LinkTable(
  const phew_link_result& result, int step, double time, double previous)
{
  int count = 0;
  const phew_column* columns = phew_link_columns(&count);
  auto table = vtkSmartPointer<vtkTable>::New();
  phew_tables::Fill(table, columns, count, result.links, result.n_links, sizeof(phew_link));
  const vtkIdType rows = table->GetNumberOfRows();
  vtkNew<vtkIdTypeArray> steps;
  vtkNew<vtkDoubleArray> times, previousTimes;
  steps->SetName("Step");
  times->SetName("Time");
  previousTimes->SetName("PreviousTime");
  steps->SetNumberOfTuples(rows);
  times->SetNumberOfTuples(rows);
  previousTimes->SetNumberOfTuples(rows);
  steps->FillValue(step);
  times->FillValue(time);
  previousTimes->FillValue(previous);
  auto ordered = vtkSmartPointer<vtkTable>::New();
  ordered->AddColumn(steps);
  ordered->AddColumn(times);
  ordered->AddColumn(previousTimes);
  for (vtkIdType c = 0; c < table->GetNumberOfColumns(); ++c)
  {
    ordered->AddColumn(table->GetColumn(c));
  }
  return ordered;
}

// Particle ids exactly, also beyond 2^53 (GetComponent goes through a double).
int64_t IdOf(vtkDataArray* ids, vtkIdType i)
{
  if (auto* a = vtkArrayDownCast<vtkAOSDataArrayTemplate<long long>>(ids))
  {
    return a->GetValue(i);
  }
  if (auto* a = vtkArrayDownCast<vtkAOSDataArrayTemplate<long>>(ids))
  {
    return a->GetValue(i);
  }
  return static_cast<int64_t>(ids->GetComponent(i, 0));
}

// True when `yes` holds on every rank and, with `value`, every rank has the same value.
bool AllAgree(const phew_adaptors::Context& context, bool yes, int value = 0)
{
  if (!context.Controller || context.NumberOfRanks < 2)
  {
    return yes;
  }
  int mine[2] = { yes ? 1 : 0, value }, low[2] = { 0, 0 }, high[2] = { 0, 0 };
  context.Controller->AllReduce(mine, low, 2, vtkCommunicator::MIN_OP);
  context.Controller->AllReduce(mine, high, 2, vtkCommunicator::MAX_OP);
  return low[0] == 1 && low[1] == high[1];
}

std::string NameOf(vtkInformation* selection)
{
  return selection && selection->Has(vtkDataObject::FIELD_NAME())
    ? selection->Get(vtkDataObject::FIELD_NAME())
    : "";
}
}

//------------------------------------------------------------------------------
vtkPHEWMergerTree::vtkPHEWMergerTree()
{
  this->SetNumberOfInputPorts(1);
  this->SetNumberOfOutputPorts(4);
  this->SetInputArrayToProcess(LABELS, 0, 0, vtkDataObject::FIELD_ASSOCIATION_CELLS, "ClumpId");
  this->Tracers.reset(new TracerSets);
  this->Rows.reset(new StepRows);
}

vtkPHEWMergerTree::~vtkPHEWMergerTree() = default;

//------------------------------------------------------------------------------
void vtkPHEWMergerTree::ResetHistory()
{
  this->ForgetSteps();
  this->Modified();
}

void vtkPHEWMergerTree::ForgetSteps()
{
  this->Previous = Step();
  this->Current = Step();
  this->History.clear();
  this->Rows.reset(new StepRows);
  this->StepTimes.clear();
  this->StepInputs.clear();
  this->Tracers.reset(new TracerSets);
}

//------------------------------------------------------------------------------
int vtkPHEWMergerTree::FillInputPortInformation(int, vtkInformation* info)
{
  info->Set(vtkAlgorithm::INPUT_REQUIRED_DATA_TYPE(), "vtkDataSet");
  return 1;
}

int vtkPHEWMergerTree::FillOutputPortInformation(int port, vtkInformation* info)
{
  info->Set(vtkDataObject::DATA_TYPE_NAME(), port == TREE_DRAWING ? "vtkPolyData" : "vtkTable");
  return 1;
}

//------------------------------------------------------------------------------
// The arrays of one step and, on images, how cells are named and weighed.
struct vtkPHEWMergerTree::Elements
{
  vtkDataArray* Labels = nullptr;
  vtkDataArray* Ids = nullptr;      // particles
  vtkDataArray* Masses = nullptr;   // optional
  vtkDataArray* Energies = nullptr; // optional, particles: follow the most-bound particles
  bool Cells = false;               // cell labels (images), else point labels (particles)
  vtkImageData* Image = nullptr;
  // images: global cell ids over the whole extent, masses = density * cell volume
  int Whole[6] = { 0, -1, 0, -1, 0, -1 };
  int Extent[6] = { 0, -1, 0, -1, 0, -1 };
  double Volume = 1.0;
};

//------------------------------------------------------------------------------
std::string vtkPHEWMergerTree::ReadStep(vtkDataSet* input, vtkInformation* inputInfo, Step& step)
{
  if (input->GetNumberOfPoints() == 0 && input->GetNumberOfCells() == 0)
  {
    step.Valid = true; // an empty piece (this rank holds no part of the data)
    return "";
  }
  Elements elements;
  const std::string problem = this->FindArrays(input, elements);
  if (!problem.empty())
  {
    return problem;
  }
  if (elements.Image)
  {
    NameCells(inputInfo, elements);
  }
  Collect(input, elements, step);
  step.Valid = true;
  return "";
}

//------------------------------------------------------------------------------
// The label, id and mass arrays of `input`, checked; returns a problem or "".
std::string vtkPHEWMergerTree::FindArrays(vtkDataSet* input, Elements& elements)
{
  int association = -1;
  elements.Labels = this->GetInputArrayToProcess(LABELS, input, association);
  const std::string labelName = NameOf(this->GetInputArrayInformation(LABELS));
  if (labelName.empty())
  {
    return "no label array is chosen: set Labels to the structures of each cell or particle "
           "(ClumpId or HaloId cell data of the PHEW Clump Finder on images; GroupId or ClumpId "
           "point data on particles), e.g. in Python Labels = ['CELLS', 'ClumpId']";
  }
  if (!elements.Labels || elements.Labels->GetNumberOfComponents() != 1)
  {
    return "the label array '" + labelName + "' is not a one-component array of the input";
  }
  elements.Image = vtkImageData::SafeDownCast(input);
  elements.Cells = association == vtkDataObject::FIELD_ASSOCIATION_CELLS;
  if (elements.Image && !elements.Cells)
  {
    return "on image data the labels must be a cell array (the PHEW Clump Finder's ClumpId or HaloId)";
  }
  if (!elements.Image && (elements.Cells || !vtkPointSet::SafeDownCast(input)))
  {
    return "the input must be image data with cell labels or a point set with point labels";
  }
  int idAssociation = -1, massAssociation = -1;
  elements.Ids = elements.Image ? nullptr : this->GetInputArrayToProcess(IDS, input, idAssociation);
  elements.Masses = this->GetInputArrayToProcess(MASSES, input, massAssociation);
  const std::string massName = NameOf(this->GetInputArrayInformation(MASSES));
  if (!elements.Image &&
    (!elements.Ids || elements.Ids->GetNumberOfComponents() != 1 || idAssociation != association))
  {
    return "particles need an Id point array that names each particle the same way at every step";
  }
  if (elements.Masses &&
    (elements.Masses->GetNumberOfComponents() != 1 || massAssociation != association))
  {
    return "the mass array '" + massName + "' must be a one-component " +
      (elements.Cells ? "cell" : "point") + " array";
  }
  if (!elements.Masses && !massName.empty() && massName != "None")
  {
    return "the mass array '" + massName + "' is not in the input";
  }
  return this->FindEnergies(input, elements, association);
}

// The optional Energy array: particles only, a one-component point array.
std::string vtkPHEWMergerTree::FindEnergies(vtkDataSet* input, Elements& elements, int association)
{
  const std::string name = NameOf(this->GetInputArrayInformation(ENERGIES));
  if (name.empty() || name == "None")
  {
    return "";
  }
  int energyAssociation = -1;
  elements.Energies = this->GetInputArrayToProcess(ENERGIES, input, energyAssociation);
  if (elements.Image)
  {
    return "the Energy array (most-bound particles) applies to particles, not to image data: set it "
           "to None";
  }
  if (!elements.Energies || elements.Energies->GetNumberOfComponents() != 1 ||
    energyAssociation != association)
  {
    return "the Energy array '" + name +
      "' is not a one-component point array of the input (the finders write SpecificEnergy when "
      "Halo Properties run)";
  }
  return "";
}

//------------------------------------------------------------------------------
// Images: the piece's extent in the whole extent (cells are named by their global id over
// it) and the cell volume.
void vtkPHEWMergerTree::NameCells(vtkInformation* inputInfo, Elements& elements)
{
  vtkImageData* image = elements.Image;
  image->GetExtent(elements.Extent);
  if (inputInfo->Has(vtkStreamingDemandDrivenPipeline::WHOLE_EXTENT()))
  {
    inputInfo->Get(vtkStreamingDemandDrivenPipeline::WHOLE_EXTENT(), elements.Whole);
  }
  else
  {
    image->GetExtent(elements.Whole);
  }
  const double* spacing = image->GetSpacing();
  for (int d = 0; d < 3; ++d)
  {
    elements.Volume *= elements.Whole[2 * d + 1] > elements.Whole[2 * d] ? spacing[d] : 1.0;
  }
}

//------------------------------------------------------------------------------
// The labelled elements (label >= 0, not ghosts) with their ids and masses.
void vtkPHEWMergerTree::Collect(vtkDataSet* input, const Elements& elements, Step& step)
{
  const int* whole = elements.Whole;
  const int* extent = elements.Extent;
  const int64_t nx = std::max(whole[1] - whole[0], 1), ny = std::max(whole[3] - whole[2], 1);
  const int cx = std::max(extent[1] - extent[0], 1), cy = std::max(extent[3] - extent[2], 1);
  vtkUnsignedCharArray* ghosts =
    elements.Cells ? input->GetCellGhostArray() : input->GetPointGhostArray();
  const vtkIdType n = elements.Labels->GetNumberOfTuples();
  step.Id.clear();
  step.Label.clear();
  step.Mass.clear();
  step.Energy.clear();
  for (vtkIdType i = 0; i < n; ++i)
  {
    if (ghosts && ghosts->GetValue(i) != 0)
    {
      continue; // a copy of another rank's element, or hidden
    }
    const double label = elements.Labels->GetComponent(i, 0);
    if (!(label >= 0.0))
    {
      continue; // in no structure
    }
    int64_t id;
    if (elements.Image)
    {
      const int64_t ix = extent[0] + i % cx, iy = extent[2] + (i / cx) % cy,
                    iz = extent[4] + i / (cx * cy);
      id = (ix - whole[0]) + nx * ((iy - whole[2]) + ny * (iz - whole[4]));
    }
    else
    {
      id = IdOf(elements.Ids, i);
    }
    step.Id.push_back(id);
    step.Label.push_back(static_cast<int64_t>(label));
    step.Mass.push_back(
      elements.Masses ? elements.Masses->GetComponent(i, 0) * elements.Volume : 1.0);
    if (elements.Energies)
    {
      step.Energy.push_back(elements.Energies->GetComponent(i, 0));
    }
  }
}

//------------------------------------------------------------------------------
// Each output port of a ParaView source feeds a consumer of its own (ParaView's post filter,
// then views, writers, Fetch's reduction) that keeps the last table it was given and asks
// again only when the pipeline's modified time passes it or its own request changes. A run
// asked for by one port (the History in a view at each animation time) changes what every
// port holds: without this, a consumer of another port (Fetch of the Links or History, a
// writer) kept a table of an earlier step. Reporting when the outputs last changed as part of
// this filter's modified time tells every consumer to ask again; this filter's own outputs are
// newer than that time, so it does not run again for it.
int vtkPHEWMergerTree::ComputePipelineMTime(
  vtkInformation*, vtkInformationVector**, vtkInformationVector*, int, vtkMTimeType* mtime)
{
  *mtime = std::max(this->GetMTime(), this->OutputsChanged.GetMTime());
  return 1;
}

//------------------------------------------------------------------------------
int vtkPHEWMergerTree::RequestData(
  vtkInformation*, vtkInformationVector** inputVector, vtkInformationVector* outputVector)
{
  auto* links = vtkTable::GetData(outputVector, LINKS);
  auto* history = vtkTable::GetData(outputVector, HISTORY);
  auto* drawing = vtkPolyData::GetData(outputVector, TREE_DRAWING);
  auto* massHistory = vtkTable::GetData(outputVector, MASS_HISTORY);
  links->Initialize();
  history->Initialize();
  drawing->Initialize();
  massHistory->Initialize();
  vtkDataSet* input = vtkDataSet::GetData(inputVector[0], 0);
  phew_adaptors::Context context;
  std::string problem = phew_adaptors::InitializeContext(context);
  const double time = this->StepTime(input, outputVector);
  // A request that failed, asked again with nothing changed (another output port, another
  // view): the outputs stay empty and the problem is not reported again.
  const std::string request = this->RequestKey(time);
  if (problem.empty() && AllAgree(context, request == this->FailedRequest))
  {
    return 1;
  }
  this->OutputsChanged.Modified(); // (whatever happens below, the outputs are new)
  int step = problem.empty() ? this->CachedStep(context, time) : -1;
  if (problem.empty() && step < 0)
  {
    problem = this->Run(context, inputVector[0]->GetInformationObject(0), input, time);
    step = static_cast<int>(this->History.size()) - 1;
  }
  this->FailedRequest = problem.empty() ? std::string() : request;
  if (!problem.empty())
  {
    // Reported once, here, with empty outputs; the run counts as done (as the clump
    // finder's): a failure returned to VTK would add its own "returned failure for request"
    // message and run the filter again for each output port and view.
    vtkErrorMacro(<< problem);
    return 1;
  }
  this->FillOutputs(static_cast<size_t>(step), links, history);
  this->Draw(context, drawing, massHistory);
  return 1;
}

//------------------------------------------------------------------------------
// The Tree Drawing and the Mass History, on rank 0 (where the links are). An unknown
// Structure or Structure Step is reported here; the other outputs stand.
void vtkPHEWMergerTree::Draw(
  const phew_adaptors::Context& context, vtkPolyData* drawing, vtkTable* massHistory)
{
  if (context.Rank != 0)
  {
    return;
  }
  const std::string problem = phew_tree_plot::Build({ this->Rows->Links, this->StepTimes },
    { this->StructureStep, this->Structure }, drawing, massHistory);
  if (!problem.empty())
  {
    vtkErrorMacro(<< "Merger tree: " << problem);
  }
}

//------------------------------------------------------------------------------
// The input's producer and its pipeline modified time: a change upstream (a property of a
// filter before this one, new data in situ) changes the time; another input the producer.
vtkPHEWMergerTree::InputStamp vtkPHEWMergerTree::StampOfInput()
{
  InputStamp stamp;
  vtkAlgorithm* producer =
    this->GetNumberOfInputConnections(0) > 0 ? this->GetInputAlgorithm(0, 0) : nullptr;
  auto* executive =
    producer ? vtkDemandDrivenPipeline::SafeDownCast(producer->GetExecutive()) : nullptr;
  stamp.Producer = producer;
  stamp.Time = executive ? executive->GetPipelineMTime() : 0;
  return stamp;
}

// A request: the arrays, the time, the input and this filter's own modified time.
std::string vtkPHEWMergerTree::RequestKey(double time)
{
  const InputStamp input = this->StampOfInput();
  std::ostringstream key;
  key.precision(17);
  key << this->ArraysKey() << "|" << time << "|" << input.Producer << "|" << input.Time << "|"
      << this->GetMTime();
  return key.str();
}

std::string vtkPHEWMergerTree::ArraysKey()
{
  return NameOf(this->GetInputArrayInformation(LABELS)) + "|" +
    NameOf(this->GetInputArrayInformation(IDS)) + "|" +
    NameOf(this->GetInputArrayInformation(MASSES)) + "|" +
    NameOf(this->GetInputArrayInformation(ENERGIES)) + "|" +
    std::to_string(this->MostBoundParticles) + "|" + std::to_string(this->MaxOrphanSteps);
}

//------------------------------------------------------------------------------
// The step of the history at `time` when it was read from the input as it is now (same
// producer, unmodified since) with the same arrays: nothing needs to run, the outputs show
// it. Else -1. The same on every rank (agreed: pipeline times are each process's own).
int vtkPHEWMergerTree::CachedStep(const phew_adaptors::Context& context, double time)
{
  int mine = -1;
  if (this->Current.Valid && this->ArraysKey() == this->Arrays)
  {
    const InputStamp now = this->StampOfInput();
    for (size_t k = 0; k < this->StepTimes.size(); ++k)
    {
      if (this->StepTimes[k] == time && this->StepInputs[k] == now)
      {
        mine = static_cast<int>(k);
      }
    }
  }
  return AllAgree(context, mine >= 0) && AllAgree(context, true, mine) ? mine : -1;
}

//------------------------------------------------------------------------------
// One step: read, agreed over the ranks, placed in the history and linked to the step before
// it. Returns the problem (the same on every rank), or "".
std::string vtkPHEWMergerTree::Run(
  const phew_adaptors::Context& context, vtkInformation* inputInfo, vtkDataSet* input, double time)
{
  // An input empty on every rank is a failed step upstream (or no data): not a step in which
  // every structure vanished. It stays out of the history.
  int mine = input && (input->GetNumberOfPoints() > 0 || input->GetNumberOfCells() > 0) ? 1 : 0,
      any = mine;
  if (context.Controller && context.NumberOfRanks > 1)
  {
    context.Controller->AllReduce(&mine, &any, 1, vtkCommunicator::MAX_OP);
  }
  if (!any)
  {
    return "Merger tree: the input is empty (did the filter before it fail?); this step is left "
           "out of the history";
  }
  Step step;
  step.Time = time;
  std::string problem = input ? this->ReadStep(input, inputInfo, step) : "no input";
  problem = phew_adaptors::AgreeOnProblem(context, problem);
  if (!problem.empty())
  {
    return "Merger tree: " + problem;
  }
  this->StartStep(std::move(step));
  return this->LinkSteps(context);
}

//------------------------------------------------------------------------------
// This step's time: the data's own, else the one asked for, else one after the last.
double vtkPHEWMergerTree::StepTime(vtkDataSet* input, vtkInformationVector* outputVector) const
{
  if (input && input->GetInformation()->Has(vtkDataObject::DATA_TIME_STEP()))
  {
    return input->GetInformation()->Get(vtkDataObject::DATA_TIME_STEP());
  }
  vtkInformation* request = outputVector->GetInformationObject(0);
  if (request->Has(vtkStreamingDemandDrivenPipeline::UPDATE_TIME_STEP()))
  {
    return request->Get(vtkStreamingDemandDrivenPipeline::UPDATE_TIME_STEP());
  }
  return this->Current.Valid ? this->Current.Time + 1.0 : 0.0;
}

//------------------------------------------------------------------------------
// The new step becomes the current one; the step before it in the history is the one to link
// to (none when it starts a new history).
void vtkPHEWMergerTree::StartStep(Step&& step)
{
  const std::string arrays = this->ArraysKey();
  const bool sameHistory = this->Current.Valid && arrays == this->Arrays;
  if (sameHistory && step.Time == this->Current.Time)
  {
    // the same step again, from a changed input: its links are made anew
    this->History.pop_back();
    this->Rows->Links.pop_back();
    this->StepTimes.pop_back();
    this->StepInputs.pop_back();
  }
  else if (sameHistory && step.Time > this->Current.Time)
  {
    this->Previous = std::move(this->Current);
    Move(this->Tracers->Current, this->Tracers->Previous);
  }
  else
  {
    this->ForgetSteps();
  }
  this->Current = std::move(step);
  this->Arrays = arrays;
}

//------------------------------------------------------------------------------
// phew_link_steps from the previous step to the current one; the links join the history.
std::string vtkPHEWMergerTree::LinkSteps(const phew_adaptors::Context& context)
{
  auto view = [](const Step& s) {
    phew_step_labels l{};
    l.n = s.Valid ? static_cast<int64_t>(s.Id.size()) : 0;
    l.id = s.Id.data();
    l.label = s.Label.data();
    l.mass = s.Mass.data();
    l.energy = s.Energy.empty() ? nullptr : s.Energy.data();
    return l;
  };
  const phew_step_labels earlier = view(this->Previous), later = view(this->Current);
  phew_link_result result{};
  phew_context core = phew_adaptors::CoreContext(context);
  const std::string energy = NameOf(this->GetInputArrayInformation(ENERGIES));
  const std::string problem = energy.empty() || energy == "None"
    ? (phew_link_steps(&core, &earlier, &later, &result) == PHEW_OK ? "" : core.message)
    : LinkTracked(core, earlier, later, static_cast<int64_t>(this->History.size()),
        this->MostBoundParticles, this->MaxOrphanSteps, this->Tracers->Previous,
        this->Tracers->Current, result);
  const std::string agreed = phew_adaptors::AgreeOnProblem(context, problem);
  if (!agreed.empty())
  {
    phew_link_result_free(&result);
    this->ForgetSteps();
    return "Merger tree failed: " + agreed;
  }
  const double previousTime =
    this->Previous.Valid ? this->Previous.Time : std::numeric_limits<double>::quiet_NaN();
  this->History.push_back(
    LinkTable(result, static_cast<int>(this->History.size()), this->Current.Time, previousTime));
  this->Rows->Links.emplace_back(result.links, result.links + result.n_links);
  this->StepTimes.push_back(this->Current.Time);
  this->StepInputs.push_back(this->StampOfInput());
  phew_link_result_free(&result);
  return "";
}

//------------------------------------------------------------------------------
// Links: the links of `step`; History: every step's, in order.
void vtkPHEWMergerTree::FillOutputs(size_t step, vtkTable* links, vtkTable* history) const
{
  links->ShallowCopy(this->History[step]);
  history->DeepCopy(this->History.front());
  // column by column: every table has the same columns
  for (size_t k = 1; k < this->History.size(); ++k)
  {
    vtkTable* table = this->History[k];
    for (vtkIdType c = 0; c < history->GetNumberOfColumns(); ++c)
    {
      vtkAbstractArray* column = history->GetColumn(c);
      column->InsertTuples(
        column->GetNumberOfTuples(), table->GetNumberOfRows(), 0, table->GetColumn(c));
    }
  }
}

//------------------------------------------------------------------------------
void vtkPHEWMergerTree::PrintSelf(ostream& os, vtkIndent indent)
{
  this->Superclass::PrintSelf(os, indent);
  os << indent << "Steps in the history: " << this->History.size() << "\n";
  os << indent << "Structure: " << this->Structure << "\n";
  os << indent << "StructureStep: " << this->StructureStep << "\n";
}
