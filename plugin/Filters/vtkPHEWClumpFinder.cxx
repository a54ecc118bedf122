#include "vtkPHEWClumpFinder.h"

#include "vtkPHEWTables.h"

#include "vtkAOSDataArrayTemplate.h"
#include "vtkDataArray.h"
#include "vtkDataObject.h"
#include "vtkDataSetAttributes.h"
#include "vtkDoubleArray.h"
#include "vtkIdTypeArray.h"
#include "vtkImageData.h"
#include "vtkInformation.h"
#include "vtkInformationVector.h"
#include "vtkMultiProcessController.h"
#include "vtkNew.h"
#include "vtkObjectFactory.h"
#include "vtkSmartPointer.h"
#include "vtkStreamingDemandDrivenPipeline.h"
#include "vtkTable.h"

#include "phew/phew.h"

#include <cstring>
#include <string>

// The label arrays are handed to the core as int64_t*, without a copy.
static_assert(sizeof(vtkIdType) == sizeof(int64_t), "PHEW needs a VTK built with 64-bit ids");

vtkStandardNewMacro(vtkPHEWClumpFinder);

namespace
{
using SDDP = vtkStreamingDemandDrivenPipeline;

// The core reports progress per stage; the filter maps it onto [0.05, 0.95].
void ForwardProgress(double fraction, const char* stage, void* user_data)
{
  auto* self = static_cast<vtkAlgorithm*>(user_data);
  self->SetProgressText(stage);
  self->UpdateProgress(0.05 + 0.9 * fraction);
}

vtkSmartPointer<vtkIdTypeArray> NewLabelArray(const char* name, vtkIdType n)
{
  auto array = vtkSmartPointer<vtkIdTypeArray>::New();
  array->SetName(name);
  array->SetNumberOfTuples(n);
  return array;
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
}

//------------------------------------------------------------------------------
int vtkPHEWClumpFinder::FillInputPortInformation(int, vtkInformation* info)
{
  // More input types (vtkOverlappingAMR, vtkPointSet) are appended here when supported.
  info->Set(vtkAlgorithm::INPUT_REQUIRED_DATA_TYPE(), "vtkImageData");
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
bool vtkPHEWClumpFinder::GetCoreCommunicator(void** comm)
{
  *comm = nullptr;
  vtkMultiProcessController* controller = vtkMultiProcessController::GetGlobalController();
  if (controller && controller->GetNumberOfProcesses() > 1)
  {
    // Every rank reaches this branch, so failing here needs no collective agreement.
    // Parallel support: take the MPI_Comm of the vtkMPICommunicator (VTK::ParallelMPI,
    // GetMPIComm()->GetHandle()), request ghost layers in RequestUpdateExtent, and pass
    // the active box of each piece in phew_grid.
    vtkErrorMacro("parallel runs need a PHEW plugin with MPI support, which this version "
                  "does not have yet: run pvbatch/pvserver on a single process ("
      << controller->GetNumberOfProcesses() << " processes were started)");
    return false;
  }
  return true;
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
    int wholeExtent[6];
    if (inInfo->Has(SDDP::WHOLE_EXTENT()))
    {
      inInfo->Get(SDDP::WHOLE_EXTENT(), wholeExtent);
    }
    else
    {
      image->GetExtent(wholeExtent);
    }
    ok = this->RunOnImage(image, wholeExtent, vtkImageData::SafeDownCast(output), outputVector);
  }
  else
  {
    vtkErrorMacro("unsupported input type " << (input ? input->GetClassName() : "(none)")
                                            << ": PHEW Clump Finder needs vtkImageData");
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
bool vtkPHEWClumpFinder::RunOnImage(vtkImageData* input, const int wholeExtent[6],
  vtkImageData* output, vtkInformationVector* outputVector)
{
  // 1. The density array.
  int association = -1;
  vtkDataArray* density = this->GetInputArrayToProcess(0, input, association);
  if (!density)
  {
    vtkInformation* arrayInfo = this->GetInputArrayInformation(0);
    const char* name =
      arrayInfo->Has(vtkDataObject::FIELD_NAME()) ? arrayInfo->Get(vtkDataObject::FIELD_NAME()) : nullptr;
    if (name && *name)
    {
      vtkErrorMacro("the density array '" << name << "' is not a point or cell array of the input");
    }
    else
    {
      vtkErrorMacro("no density array selected (set Density to a point or cell array)");
    }
    return false;
  }
  const std::string name = density->GetName() ? density->GetName() : "(unnamed)";
  if (association != vtkDataObject::FIELD_ASSOCIATION_POINTS &&
    association != vtkDataObject::FIELD_ASSOCIATION_CELLS)
  {
    vtkErrorMacro("the density array '" << name << "' must be point or cell data");
    return false;
  }
  if (density->GetNumberOfComponents() != 1)
  {
    vtkErrorMacro("the density array '" << name << "' has " << density->GetNumberOfComponents()
                                         << " components; PHEW needs a scalar (1 component)");
    return false;
  }
  const bool cellData = association == vtkDataObject::FIELD_ASSOCIATION_CELLS;

  // 2. The grid: one PHEW cell per image cell (cell data) or per image point (point data).
  //    Indices are relative to the whole extent, so global ids match the command-line tool.
  int extent[6];
  input->GetExtent(extent);
  double spacing[3], origin[3];
  input->GetSpacing(spacing);
  input->GetOrigin(origin);
  phew_input in;
  std::memset(&in, 0, sizeof in);
  phew_grid& grid = in.grid;
  for (int d = 0; d < 3; ++d)
  {
    const int lo = extent[2 * d], hi = extent[2 * d + 1];
    const int wholeLo = wholeExtent[2 * d], wholeHi = wholeExtent[2 * d + 1];
    if (hi < lo || wholeHi < wholeLo)
    {
      vtkErrorMacro("the input image is empty");
      return false;
    }
    int64_t n = hi - lo + 1;
    int64_t nWhole = wholeHi - wholeLo + 1;
    if (cellData)
    {
      // An image that is flat along an axis still has one layer of (2D) cells along it.
      n = n > 1 ? n - 1 : 1;
      nWhole = nWhole > 1 ? nWhole - 1 : 1;
    }
    grid.global_dims[d] = nWhole;
    grid.stored_offset[d] = grid.active_offset[d] = lo - wholeLo;
    grid.stored_dims[d] = grid.active_dims[d] = n;
    grid.periodic[d] = this->Periodic ? 1 : 0;
    grid.spacing[d] = spacing[d];
    // phew_grid.origin is the corner of cell (0,0,0); a point is the centre of its cell.
    grid.origin[d] = origin[d] + wholeLo * spacing[d] - (cellData ? 0.0 : 0.5 * spacing[d]);
  }
  const vtkIdType nCells = grid.stored_dims[0] * grid.stored_dims[1] * grid.stored_dims[2];
  if (density->GetNumberOfTuples() != nCells)
  {
    vtkErrorMacro("the density array '" << name << "' has " << density->GetNumberOfTuples()
                                         << " values but the image has " << nCells
                                         << (cellData ? " cells" : " points"));
    return false;
  }

  // 3. The values: float and double without a copy, anything else converted to double.
  vtkSmartPointer<vtkDoubleArray> converted;
  if (auto* f32 = vtkArrayDownCast<vtkAOSDataArrayTemplate<float>>(density))
  {
    in.density = f32->GetPointer(0);
    in.density_type = PHEW_FLOAT32;
  }
  else if (auto* f64 = vtkArrayDownCast<vtkAOSDataArrayTemplate<double>>(density))
  {
    in.density = f64->GetPointer(0);
    in.density_type = PHEW_FLOAT64;
  }
  else
  {
    converted = vtkSmartPointer<vtkDoubleArray>::New();
    converted->DeepCopy(density);
    in.density = converted->GetPointer(0);
    in.density_type = PHEW_FLOAT64;
  }

  // 4. Parameters, communicator, progress.
  phew_params params;
  phew_params_init(&params);
  params.density_threshold = this->DensityThreshold;
  params.relevance_threshold = this->RelevanceThreshold;
  params.saddle_merging = this->SaddleMerging ? 1 : 0;
  params.saddle_threshold = this->SaddleThreshold;
  params.mass_threshold = this->MassThreshold;
  if (!this->GetCoreCommunicator(&in.mpi_comm))
  {
    return false;
  }
  in.progress = ForwardProgress;
  in.progress_data = this;

  // 5. Run. The core writes the labels straight into the output arrays.
  auto peakPatch = NewLabelArray(PHEW_ARRAY_PEAK_PATCH_ID, nCells);
  auto clump = NewLabelArray(PHEW_ARRAY_CLUMP_ID, nCells);
  auto halo = NewLabelArray(PHEW_ARRAY_HALO_ID, nCells);
  phew_labels labels;
  labels.peak_patch_id = reinterpret_cast<int64_t*>(peakPatch->GetPointer(0));
  labels.clump_id = reinterpret_cast<int64_t*>(clump->GetPointer(0));
  labels.halo_id = reinterpret_cast<int64_t*>(halo->GetPointer(0));
  this->UpdateProgress(0.05);
  phew_result result;
  const phew_status status = phew_find_clumps(&in, &params, &labels, &result);
  if (status != PHEW_OK)
  {
    vtkErrorMacro("PHEW failed on density '" << name << "' (" << phew_status_string(status)
                                              << "): " << result.message);
    phew_result_free(&result);
    return false;
  }

  // 6. Outputs: a shallow copy of the input (its arrays are shared, never modified) plus
  //    the labels, and the three catalogues.
  output->ShallowCopy(input);
  vtkDataSetAttributes* attributes =
    output->GetAttributes(cellData ? vtkDataObject::CELL : vtkDataObject::POINT);
  attributes->AddArray(peakPatch);
  attributes->AddArray(clump);
  attributes->AddArray(halo);
  vtkPHEWTables::FillClumps(vtkTable::GetData(outputVector, CLUMPS_PORT), result);
  vtkPHEWTables::FillDendrogram(vtkTable::GetData(outputVector, DENDROGRAM_PORT), result);
  vtkPHEWTables::FillHaloes(vtkTable::GetData(outputVector, HALOES_PORT), result);
  phew_result_free(&result);
  return true;
}
