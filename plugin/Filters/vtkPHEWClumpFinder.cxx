#include "vtkPHEWClumpFinder.h"

#include "vtkPHEWPieces.h"
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
#include "vtkUnsignedCharArray.h"

#if VTK_MODULE_ENABLE_VTK_ParallelMPI
#include "vtkMPI.h"
#include "vtkMPICommunicator.h"
#endif

#include "phew/phew.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

// The label arrays are handed to the core as int64_t*, without a copy.
static_assert(sizeof(vtkIdType) == sizeof(int64_t), "PHEW needs a VTK built with 64-bit ids");

vtkStandardNewMacro(vtkPHEWClumpFinder);

using namespace phew_pieces; // Box and the piece helpers

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

// What each rank tells the others before the run: problem flag, association (0 unknown,
// 1 points, 2 cells), needs double, non-ghost box lo[3] and hi[3], piece has ghost cells.
constexpr int kSummarySize = 10;

// The message of rank `root` on every rank.
std::string SharedProblem(vtkMultiProcessController* controller, int root, const std::string& mine)
{
  char text[512] = { 0 };
  std::strncpy(text, mine.c_str(), sizeof text - 1);
  if (controller && controller->GetNumberOfProcesses() > 1)
  {
    controller->Broadcast(text, sizeof text, root);
  }
  return text;
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
  if (!controller || controller->GetNumberOfProcesses() < 2)
  {
    return true;
  }
#if VTK_MODULE_ENABLE_VTK_ParallelMPI
  if (auto* mpi = vtkMPICommunicator::SafeDownCast(controller->GetCommunicator()))
  {
    *comm = mpi->GetMPIComm()->GetHandle(); // the core takes the address of an MPI_Comm
    return true;
  }
#endif
  // Every rank has the same kind of controller, so every rank fails here: no collective needed.
  vtkErrorMacro("parallel runs need an MPI controller, but this one is a "
    << controller->GetClassName() << " (" << controller->GetNumberOfProcesses()
    << " processes)");
  return false;
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
    ok = this->RunOnImage(image, inInfo, vtkImageData::SafeDownCast(output), outputVector);
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
bool vtkPHEWClumpFinder::RunOnImage(vtkImageData* input, vtkInformation* inInfo,
  vtkImageData* output, vtkInformationVector* outputVector)
{
  vtkMultiProcessController* controller = vtkMultiProcessController::GetGlobalController();
  const int nRanks = controller ? controller->GetNumberOfProcesses() : 1;
  const int rank = controller ? controller->GetLocalProcessId() : 0;
  void* mpiComm = nullptr;
  if (!this->GetCoreCommunicator(&mpiComm))
  {
    return false;
  }
  int extent[6], wholeExtent[6];
  input->GetExtent(extent);
  if (inInfo->Has(SDDP::WHOLE_EXTENT()))
  {
    inInfo->Get(SDDP::WHOLE_EXTENT(), wholeExtent);
  }
  else
  {
    std::copy(extent, extent + 6, wholeExtent);
  }
  // An empty piece may carry a default geometry: take the pipeline's, the same on all ranks.
  double spacing[3], origin[3];
  input->GetSpacing(spacing);
  input->GetOrigin(origin);
  if (input->GetNumberOfPoints() == 0 && inInfo->Has(vtkDataObject::SPACING()) &&
    inInfo->Has(vtkDataObject::ORIGIN()))
  {
    inInfo->Get(vtkDataObject::SPACING(), spacing);
    inInfo->Get(vtkDataObject::ORIGIN(), origin);
  }

  // 1. This piece, checked locally. Nothing returns before the agreement of step 2, so that
  //    a problem seen by one rank only (an array missing from one piece) stops every rank.
  std::string problem;
  int association = -1;
  vtkDataArray* density = this->GetInputArrayToProcess(0, input, association);
  vtkInformation* arrayInfo = this->GetInputArrayInformation(0);
  std::string name;
  if (density)
  {
    name = density->GetName() ? density->GetName() : "(unnamed)";
  }
  else
  {
    if (arrayInfo->Has(vtkDataObject::FIELD_NAME()))
    {
      name = arrayInfo->Get(vtkDataObject::FIELD_NAME());
    }
    // An empty piece may lack the array; the selection still says points or cells.
    if (arrayInfo->Has(vtkDataObject::FIELD_ASSOCIATION()))
    {
      association = arrayInfo->Get(vtkDataObject::FIELD_ASSOCIATION());
    }
  }
  const bool localCells = association == vtkDataObject::FIELD_ASSOCIATION_CELLS;
  const bool localPoints = association == vtkDataObject::FIELD_ASSOCIATION_POINTS;
  Box piece = PieceBox(extent, wholeExtent, localCells);
  Box nonGhost;
  if (piece.Empty())
  {
    // A piece without cells (more ranks than cells, or one point thick on an axis the image
    // spans) needs no density; readers give it arrays of 0 or even -1 values.
    density = nullptr;
  }
  else if (!density)
  {
    problem = name.empty()
      ? "no density array selected (set Density to a point or cell array)"
      : "the density array '" + name + "' is not a point or cell array of the input";
  }
  else if (!localCells && !localPoints)
  {
    problem = "the density array '" + name + "' must be point or cell data";
  }
  else if (density->GetNumberOfComponents() != 1)
  {
    problem = "the density array '" + name + "' has " +
      std::to_string(density->GetNumberOfComponents()) +
      " components; PHEW needs a scalar (1 component)";
  }
  else if (density->GetNumberOfTuples() != piece.Count())
  {
    problem = "the density array '" + name + "' has " +
      std::to_string(density->GetNumberOfTuples()) + " values but the image " +
      (nRanks > 1 ? "piece " : "") + "has " + std::to_string(piece.Count()) +
      (localCells ? " cells" : " points");
  }
  else
  {
    vtkUnsignedCharArray* ghosts =
      localCells ? input->GetCellGhostArray() : input->GetPointGhostArray();
    nonGhost = NonGhostBox(piece, ghosts, localCells, problem);
  }

  // 2. Agreement: every rank learns every rank's problem flag, association, value type and
  //    non-ghost box (ten numbers per rank), so that all ranks decide the same below.
  const bool localDouble = density && !vtkArrayDownCast<vtkAOSDataArrayTemplate<float>>(density);
  const long long mine[kSummarySize] = { problem.empty() ? 0 : 1,
    localCells ? 2 : (localPoints ? 1 : 0), localDouble ? 1 : 0, nonGhost.lo[0], nonGhost.lo[1],
    nonGhost.lo[2], nonGhost.hi[0], nonGhost.hi[1], nonGhost.hi[2], piece == nonGhost ? 0 : 1 };
  std::vector<long long> all(mine, mine + kSummarySize);
  if (nRanks > 1)
  {
    all.resize(static_cast<size_t>(nRanks) * kSummarySize);
    controller->AllGather(mine, all.data(), kSummarySize);
  }
  int firstProblem = -1;
  long long kind = 0;
  bool mixed = false, useDouble = false, foreign = false; // foreign: cells owned elsewhere
  std::vector<Box> boxes(nRanks);
  for (int r = 0; r < nRanks; ++r)
  {
    const long long* s = &all[static_cast<size_t>(r) * kSummarySize];
    if (s[0] && firstProblem < 0)
    {
      firstProblem = r;
    }
    mixed |= s[1] && kind && s[1] != kind;
    kind = std::max(kind, s[1]);
    useDouble |= s[2] != 0;
    foreign |= s[9] != 0;
    std::copy(s + 3, s + 6, boxes[r].lo);
    std::copy(s + 6, s + 9, boxes[r].hi);
  }
  const bool cellData = kind == 2; // as agreed (a rank with an empty piece may not know)
  const Box whole = PieceBox(wholeExtent, wholeExtent, cellData);
  piece = PieceBox(extent, wholeExtent, cellData);
  std::string agreed;
  if (firstProblem >= 0)
  {
    agreed = SharedProblem(controller, firstProblem, problem);
  }
  else if (mixed)
  {
    agreed = "the density '" + name + "' is point data on some pieces and cell data on others";
  }
  else if (kind == 0 || whole.Empty())
  {
    agreed = std::string("the input image is empty (0 ") + (kind == 1 ? "points" : "cells") + ")";
  }
  else
  {
    const std::vector<Box> before = boxes;
    agreed = ResolveTiling(boxes, whole, !cellData);
    foreign |= boxes != before;
  }
  if (!agreed.empty())
  {
    vtkErrorMacro(<< agreed);
    return false;
  }
  const Box owned = boxes[rank];

  // 3. The block of the core: the owned box plus one ghost layer towards every neighbour,
  //    wrapping on periodic axes (an axis the box spans wraps inside the core).
  phew_input in;
  std::memset(&in, 0, sizeof in);
  phew_grid& grid = in.grid;
  Box stored = owned;
  for (int d = 0; d < 3; ++d)
  {
    const long long n = whole.hi[d];
    if (!owned.Empty() && owned.Dim(d) < n)
    {
      stored.lo[d] -= (owned.lo[d] > 0 || this->Periodic) ? 1 : 0;
      stored.hi[d] += (owned.hi[d] < n || this->Periodic) ? 1 : 0;
    }
    grid.global_dims[d] = n;
    grid.stored_offset[d] = stored.lo[d];
    grid.stored_dims[d] = stored.Dim(d);
    grid.active_offset[d] = owned.lo[d];
    grid.active_dims[d] = owned.Dim(d);
    grid.periodic[d] = this->Periodic ? 1 : 0;
    grid.spacing[d] = spacing[d];
    // phew_grid.origin is the corner of cell (0,0,0); a point is the centre of its cell.
    grid.origin[d] =
      origin[d] + wholeExtent[2 * d] * spacing[d] - (cellData ? 0.0 : 0.5 * spacing[d]);
  }

  // 4. The density of the block. One rank holds the whole image: float and double go to
  //    the core without a copy. Otherwise the owned cells are copied and the ghost layer
  //    comes from the neighbours. Other numeric types become double (on every rank, so
  //    that all ranks send values of one size).
  const bool direct = nRanks == 1;
  vtkSmartPointer<vtkDataArray> values = density;
  if (density && useDouble && !vtkArrayDownCast<vtkAOSDataArrayTemplate<double>>(density))
  {
    auto converted = vtkSmartPointer<vtkDoubleArray>::New();
    converted->DeepCopy(density);
    values = converted;
  }
  in.density_type = useDouble ? PHEW_FLOAT64 : PHEW_FLOAT32;
  const size_t nStored = static_cast<size_t>(std::max(stored.Count(), 1LL));
  std::vector<float> block32;
  std::vector<double> block64;
  if (direct)
  {
    in.density = values->GetVoidPointer(0);
  }
  else if (useDouble)
  {
    block64.assign(nStored, 0.0);
    if (!owned.Empty())
    {
      CopyRegion(static_cast<const double*>(values->GetVoidPointer(0)), piece, block64.data(),
        stored, owned);
    }
    in.density = block64.data();
  }
  else
  {
    block32.assign(nStored, 0.0f);
    if (!owned.Empty())
    {
      CopyRegion(static_cast<const float*>(values->GetVoidPointer(0)), piece, block32.data(),
        stored, owned);
    }
    in.density = block32.data();
  }
  if (!direct)
  {
    char message[512] = { 0 };
    void* block = useDouble ? static_cast<void*>(block64.data()) : block32.data();
    const phew_status status = phew_exchange_ghosts(&grid, block,
      useDouble ? sizeof(double) : sizeof(float), mpiComm, message, sizeof message);
    if (status != PHEW_OK) // collective: the same status and message on every rank
    {
      vtkErrorMacro("PHEW could not fill the ghost cells of density '"
        << name << "' (" << phew_status_string(status) << "): " << message);
      return false;
    }
  }

  // 5. Parameters, communicator, progress.
  phew_params params;
  phew_params_init(&params);
  params.density_threshold = this->DensityThreshold;
  params.relevance_threshold = this->RelevanceThreshold;
  params.saddle_merging = this->SaddleMerging ? 1 : 0;
  params.saddle_threshold = this->SaddleThreshold;
  params.mass_threshold = this->MassThreshold;
  in.mpi_comm = mpiComm;
  in.progress = ForwardProgress;
  in.progress_data = this;

  // 6. Run. With one rank the core writes straight into the output arrays; otherwise into
  //    block-sized labels, copied below onto the piece.
  const vtkIdType nOut = piece.Count();
  auto peakPatch = NewLabelArray(PHEW_ARRAY_PEAK_PATCH_ID, nOut);
  auto clump = NewLabelArray(PHEW_ARRAY_CLUMP_ID, nOut);
  auto halo = NewLabelArray(PHEW_ARRAY_HALO_ID, nOut);
  vtkIdTypeArray* outArrays[3] = { peakPatch, clump, halo };
  std::vector<int64_t> blockLabels(direct ? 0 : 3 * nStored, -1);
  int64_t* labelData[3];
  for (int k = 0; k < 3; ++k)
  {
    labelData[k] = direct ? reinterpret_cast<int64_t*>(outArrays[k]->GetPointer(0))
                          : blockLabels.data() + k * nStored;
  }
  phew_labels labels = { labelData[0], labelData[1], labelData[2] };
  this->UpdateProgress(0.05);
  phew_result result;
  const phew_status status = phew_find_clumps(&in, &params, &labels, &result);
  if (status != PHEW_OK) // collective: the same status and message on every rank
  {
    vtkErrorMacro("PHEW failed on density '" << name << "' (" << phew_status_string(status)
                                              << "): " << result.message);
    phew_result_free(&result);
    return false;
  }
  if (!direct)
  {
    // The owned cells of the piece take their labels from the block; the others (ghost
    // cells, shared point planes, duplicated pieces) fetch theirs from their owners.
    phew_grid pieceGrid = grid;
    for (int d = 0; d < 3; ++d)
    {
      pieceGrid.stored_offset[d] = piece.lo[d];
      pieceGrid.stored_dims[d] = piece.Dim(d);
    }
    for (int k = 0; k < 3; ++k)
    {
      int64_t* out = reinterpret_cast<int64_t*>(outArrays[k]->GetPointer(0));
      CopyRegion<int64_t>(labelData[k], stored, out, piece, owned);
      char message[512] = { 0 };
      const phew_status copied = foreign
        ? phew_exchange_ghosts(&pieceGrid, out, sizeof(int64_t), mpiComm, message, sizeof message)
        : PHEW_OK;
      if (copied != PHEW_OK) // collective
      {
        vtkErrorMacro("PHEW could not copy the labels to the ghost cells ("
          << phew_status_string(copied) << "): " << message);
        phew_result_free(&result);
        return false;
      }
    }
  }

  // 7. Outputs: a shallow copy of the input (its arrays are shared, never modified) plus
  //    the labels, and the three catalogues (complete on rank 0, no rows elsewhere). A piece
  //    without cells stays empty: with cell data, a piece one point thick across an axis of
  //    the image has faces that VTK counts as cells, but no density and no labels.
  if (!piece.Empty())
  {
    output->ShallowCopy(input);
    vtkDataSetAttributes* attributes =
      output->GetAttributes(cellData ? vtkDataObject::CELL : vtkDataObject::POINT);
    attributes->AddArray(peakPatch);
    attributes->AddArray(clump);
    attributes->AddArray(halo);
  }
  vtkPHEWTables::FillClumps(vtkTable::GetData(outputVector, CLUMPS_PORT), result);
  vtkPHEWTables::FillDendrogram(vtkTable::GetData(outputVector, DENDROGRAM_PORT), result);
  vtkPHEWTables::FillHaloes(vtkTable::GetData(outputVector, HALOES_PORT), result);
  phew_result_free(&result);
  return true;
}
