#include "vtkPHEWMergerTree.h"

#include "vtkPHEWInputAdaptor.h"
#include "vtkPHEWTables.h"

#include "vtkAOSDataArrayTemplate.h"
#include "vtkCellData.h"
#include "vtkCommunicator.h"
#include "vtkMultiProcessController.h"
#include "vtkDataArray.h"
#include "vtkDataSetAttributes.h"
#include "vtkDoubleArray.h"
#include "vtkIdTypeArray.h"
#include "vtkImageData.h"
#include "vtkInformation.h"
#include "vtkInformationVector.h"
#include "vtkObjectFactory.h"
#include "vtkPointData.h"
#include "vtkPointSet.h"
#include "vtkStreamingDemandDrivenPipeline.h"
#include "vtkTable.h"
#include "vtkUnsignedCharArray.h"

#include <cmath>
#include <limits>
#include <sstream>

vtkStandardNewMacro(vtkPHEWMergerTree);

namespace
{
enum ArrayIndex
{
  LABELS = 0,
  IDS = 1,
  MASSES = 2
};

// Step, Time and PreviousTime, then the link columns.
vtkSmartPointer<vtkTable> LinkTable(
  const phew_link_result& result, int step, double time, double previous)
{
  int count = 0;
  const phew_column* columns = phew_link_columns(&count);
  auto table = vtkSmartPointer<vtkTable>::New();
  vtkPHEWTables::Fill(table, columns, count, result.links, result.n_links, sizeof(phew_link));
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
  this->SetNumberOfOutputPorts(2);
  this->SetInputArrayToProcess(LABELS, 0, 0, vtkDataObject::FIELD_ASSOCIATION_CELLS, "ClumpId");
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
}

//------------------------------------------------------------------------------
int vtkPHEWMergerTree::FillInputPortInformation(int, vtkInformation* info)
{
  info->Set(vtkAlgorithm::INPUT_REQUIRED_DATA_TYPE(), "vtkDataSet");
  return 1;
}

//------------------------------------------------------------------------------
std::string vtkPHEWMergerTree::ReadStep(vtkDataSet* input, vtkInformation* inputInfo, Step& step)
{
  if (input->GetNumberOfPoints() == 0 && input->GetNumberOfCells() == 0)
  {
    step.Valid = true; // an empty piece (this rank holds no part of the data)
    return "";
  }
  int association = -1;
  vtkDataArray* labels = this->GetInputArrayToProcess(LABELS, input, association);
  const std::string labelName = NameOf(this->GetInputArrayInformation(LABELS));
  if (!labels || labels->GetNumberOfComponents() != 1)
  {
    return "the label array '" + labelName + "' is not a one-component array of the input";
  }
  auto* image = vtkImageData::SafeDownCast(input);
  const bool cells = association == vtkDataObject::FIELD_ASSOCIATION_CELLS;
  if (image && !cells)
  {
    return "on image data the labels must be a cell array (the PHEW Clump Finder's ClumpId or HaloId)";
  }
  if (!image && (cells || !vtkPointSet::SafeDownCast(input)))
  {
    return "the input must be image data with cell labels or a point set with point labels";
  }
  int idAssociation = -1, massAssociation = -1;
  vtkDataArray* ids = image ? nullptr : this->GetInputArrayToProcess(IDS, input, idAssociation);
  vtkDataArray* masses = this->GetInputArrayToProcess(MASSES, input, massAssociation);
  const std::string massName = NameOf(this->GetInputArrayInformation(MASSES));
  if (!image && (!ids || ids->GetNumberOfComponents() != 1 || idAssociation != association))
  {
    return "particles need an Id point array that names each particle the same way at every step";
  }
  if (masses && (masses->GetNumberOfComponents() != 1 || massAssociation != association))
  {
    return "the mass array '" + massName + "' must be a one-component " +
      (cells ? "cell" : "point") + " array";
  }
  if (!masses && !massName.empty() && massName != "None")
  {
    return "the mass array '" + massName + "' is not in the input";
  }

  // cells: global ids over the whole extent, masses = density * cell volume
  int whole[6] = { 0, -1, 0, -1, 0, -1 }, extent[6] = { 0, -1, 0, -1, 0, -1 };
  double volume = 1.0;
  if (image)
  {
    image->GetExtent(extent);
    if (inputInfo->Has(vtkStreamingDemandDrivenPipeline::WHOLE_EXTENT()))
    {
      inputInfo->Get(vtkStreamingDemandDrivenPipeline::WHOLE_EXTENT(), whole);
    }
    else
    {
      image->GetExtent(whole);
    }
    const double* spacing = image->GetSpacing();
    for (int d = 0; d < 3; ++d)
    {
      volume *= whole[2 * d + 1] > whole[2 * d] ? spacing[d] : 1.0;
    }
  }
  const int64_t nx = std::max(whole[1] - whole[0], 1), ny = std::max(whole[3] - whole[2], 1);
  const int cx = std::max(extent[1] - extent[0], 1), cy = std::max(extent[3] - extent[2], 1);

  vtkUnsignedCharArray* ghosts = cells ? input->GetCellGhostArray() : input->GetPointGhostArray();
  const vtkIdType n = labels->GetNumberOfTuples();
  step.Id.clear();
  step.Label.clear();
  step.Mass.clear();
  for (vtkIdType i = 0; i < n; ++i)
  {
    if (ghosts && ghosts->GetValue(i) != 0)
    {
      continue; // a copy of another rank's element, or hidden
    }
    const double label = labels->GetComponent(i, 0);
    if (!(label >= 0.0))
    {
      continue; // in no structure
    }
    int64_t id;
    if (image)
    {
      const int64_t ix = extent[0] + i % cx, iy = extent[2] + (i / cx) % cy,
                    iz = extent[4] + i / (cx * cy);
      id = (ix - whole[0]) + nx * ((iy - whole[2]) + ny * (iz - whole[4]));
    }
    else
    {
      id = IdOf(ids, i);
    }
    step.Id.push_back(id);
    step.Label.push_back(static_cast<int64_t>(label));
    step.Mass.push_back(masses ? masses->GetComponent(i, 0) * volume : 1.0);
  }
  step.Valid = true;
  return "";
}

//------------------------------------------------------------------------------
int vtkPHEWMergerTree::RequestData(
  vtkInformation*, vtkInformationVector** inputVector, vtkInformationVector* outputVector)
{
  vtkInformation* inputInfo = inputVector[0]->GetInformationObject(0);
  auto* input = vtkDataSet::GetData(inputVector[0], 0);
  auto* links = vtkTable::GetData(outputVector, 0);
  auto* history = vtkTable::GetData(outputVector, 1);
  links->Initialize();
  history->Initialize();

  phew_adaptors::Context context;
  std::string problem = phew_adaptors::InitializeContext(context);
  if (!problem.empty())
  {
    vtkErrorMacro(<< problem);
    return 0;
  }

  // this step's time: the data's own, else the one asked for, else one after the last
  double time = this->Current.Valid ? this->Current.Time + 1.0 : 0.0;
  if (input && input->GetInformation()->Has(vtkDataObject::DATA_TIME_STEP()))
  {
    time = input->GetInformation()->Get(vtkDataObject::DATA_TIME_STEP());
  }
  else if (outputVector->GetInformationObject(0)->Has(
             vtkStreamingDemandDrivenPipeline::UPDATE_TIME_STEP()))
  {
    time = outputVector->GetInformationObject(0)->Get(
      vtkStreamingDemandDrivenPipeline::UPDATE_TIME_STEP());
  }
  const std::string arrays = NameOf(this->GetInputArrayInformation(LABELS)) + "|" +
    NameOf(this->GetInputArrayInformation(IDS)) + "|" +
    NameOf(this->GetInputArrayInformation(MASSES));
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
    vtkErrorMacro(
      "Merger tree: the input is empty (did the filter before it fail?); this step is left out "
      "of the history");
    return 0;
  }
  Step step;
  step.Time = time;
  problem = input ? this->ReadStep(input, inputInfo, step) : "no input";
  problem = phew_adaptors::AgreeOnProblem(context, problem);
  if (!problem.empty())
  {
    vtkErrorMacro("Merger tree: " << problem);
    return 0;
  }

  // which step to link to: the one before this one in the history
  const bool sameHistory = this->Current.Valid && arrays == this->Arrays;
  if (sameHistory && time == this->Current.Time)
  {
    this->History.pop_back(); // the same step again: its links are made anew
  }
  else if (sameHistory && time > this->Current.Time)
  {
    this->Previous = std::move(this->Current);
  }
  else
  {
    this->Previous = Step();
    this->History.clear();
  }
  this->Current = std::move(step);
  this->Arrays = arrays;

  auto view = [](const Step& s) {
    phew_step_labels l{};
    l.n = s.Valid ? static_cast<int64_t>(s.Id.size()) : 0;
    l.id = s.Id.data();
    l.label = s.Label.data();
    l.mass = s.Mass.data();
    return l;
  };
  const phew_step_labels earlier = view(this->Previous), later = view(this->Current);
  phew_link_result result{};
  phew_context core = phew_adaptors::CoreContext(context);
  const phew_status status = phew_link_steps(&core, &earlier, &later, &result);
  if (status != PHEW_OK)
  {
    vtkErrorMacro("Merger tree failed (" << phew_status_string(status) << "): " << core.message);
    phew_link_result_free(&result);
    this->ForgetSteps();
    return 0;
  }
  const double previousTime =
    this->Previous.Valid ? this->Previous.Time : std::numeric_limits<double>::quiet_NaN();
  this->History.push_back(
    LinkTable(result, static_cast<int>(this->History.size()), this->Current.Time, previousTime));
  phew_link_result_free(&result);

  links->ShallowCopy(this->History.back());
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
  return 1;
}

//------------------------------------------------------------------------------
void vtkPHEWMergerTree::PrintSelf(ostream& os, vtkIndent indent)
{
  this->Superclass::PrintSelf(os, indent);
  os << indent << "Steps in the history: " << this->History.size() << "\n";
}
