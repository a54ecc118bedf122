#include "vtkPHEWImageInput.h"

#include "vtkAOSDataArrayTemplate.h"
#include "vtkDataArray.h"
#include "vtkDataObject.h"
#include "vtkDataSetAttributes.h"
#include "vtkDoubleArray.h"
#include "vtkIdTypeArray.h"
#include "vtkImageData.h"
#include "vtkInformation.h"
#include "vtkMultiProcessController.h"
#include "vtkStreamingDemandDrivenPipeline.h"
#include "vtkUnsignedCharArray.h"

#include <algorithm>
#include <cstring>
#include <vector>

namespace phew_adaptors
{
using namespace phew_pieces;
using SDDP = vtkStreamingDemandDrivenPipeline;

namespace
{
// What each rank tells the others before the run: problem flag, association (0 unknown,
// 1 points, 2 cells), needs double, non-ghost box lo[3] and hi[3], piece has ghost cells.
constexpr int kSummarySize = 10;

vtkSmartPointer<vtkIdTypeArray> NewLabelArray(const char* name, vtkIdType n)
{
  auto array = vtkSmartPointer<vtkIdTypeArray>::New();
  array->SetName(name);
  array->SetNumberOfTuples(n);
  return array;
}
}

ImageInput::ImageInput(vtkImageData* image)
  : Image(image)
{
  std::memset(&this->Grid, 0, sizeof this->Grid);
}

ImageInput::~ImageInput() = default;

//------------------------------------------------------------------------------
std::string ImageInput::Prepare(Context& context, phew_input& in, phew_labels& labels)
{
  vtkImageData* input = this->Image;
  vtkInformation* inInfo = context.InputInformation;
  vtkMultiProcessController* controller = context.Controller;
  const int nRanks = context.NumberOfRanks;
  const int rank = context.Rank;
  int extent[6], wholeExtent[6];
  input->GetExtent(extent);
  if (inInfo && inInfo->Has(SDDP::WHOLE_EXTENT()))
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
  if (input->GetNumberOfPoints() == 0 && inInfo && inInfo->Has(vtkDataObject::SPACING()) &&
    inInfo->Has(vtkDataObject::ORIGIN()))
  {
    inInfo->Get(vtkDataObject::SPACING(), spacing);
    inInfo->Get(vtkDataObject::ORIGIN(), origin);
  }

  // 1. This piece, checked locally. Nothing returns before the agreement of step 2, so that
  //    a problem seen by one rank only (an array missing from one piece) stops every rank.
  std::string problem;
  int association = -1;
  vtkDataArray* density = context.Density(input, association);
  vtkInformation* arrayInfo = context.ArraySelection;
  std::string name;
  if (density)
  {
    name = density->GetName() ? density->GetName() : "(unnamed)";
  }
  else
  {
    name = SelectedName(context);
    // An empty piece may lack the array; the selection still says points or cells.
    if (arrayInfo && arrayInfo->Has(vtkDataObject::FIELD_ASSOCIATION()))
    {
      association = arrayInfo->Get(vtkDataObject::FIELD_ASSOCIATION());
    }
  }
  context.DensityName = name;
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
    agreed = SharedProblem(context, firstProblem, problem);
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
    return agreed;
  }
  const Box owned = boxes[rank];

  // 3. The block of the core: the owned box plus one ghost layer towards every neighbour,
  //    wrapping on periodic axes (an axis the box spans wraps inside the core).
  in.mesh = PHEW_MESH_STRUCTURED;
  phew_grid& grid = in.grid;
  Box stored = owned;
  for (int d = 0; d < 3; ++d)
  {
    const long long n = whole.hi[d];
    if (!owned.Empty() && owned.Dim(d) < n)
    {
      stored.lo[d] -= (owned.lo[d] > 0 || context.Periodic) ? 1 : 0;
      stored.hi[d] += (owned.hi[d] < n || context.Periodic) ? 1 : 0;
    }
    grid.global_dims[d] = n;
    grid.stored_offset[d] = stored.lo[d];
    grid.stored_dims[d] = stored.Dim(d);
    grid.active_offset[d] = owned.lo[d];
    grid.active_dims[d] = owned.Dim(d);
    grid.periodic[d] = context.Periodic ? 1 : 0;
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
  if (direct)
  {
    in.density = values->GetVoidPointer(0);
  }
  else if (useDouble)
  {
    this->Block64.reset(new double[nStored]);
    if (!owned.Empty())
    {
      CopyRegion(static_cast<const double*>(values->GetVoidPointer(0)), piece, this->Block64.get(),
        stored, owned);
    }
    in.density = this->Block64.get();
  }
  else
  {
    this->Block32.reset(new float[nStored]);
    if (!owned.Empty())
    {
      CopyRegion(static_cast<const float*>(values->GetVoidPointer(0)), piece, this->Block32.get(),
        stored, owned);
    }
    in.density = this->Block32.get();
  }
  if (!direct)
  {
    phew_context core = CoreContext(context);
    void* block = useDouble ? static_cast<void*>(this->Block64.get()) : this->Block32.get();
    const phew_status status =
      phew_exchange_ghosts(&core, &grid, block, useDouble ? sizeof(double) : sizeof(float));
    if (status != PHEW_OK) // collective: the same status and message on every rank
    {
      return "PHEW could not fill the ghost cells of density '" + name + "' (" +
        phew_status_string(status) + "): " + core.message;
    }
  }

  // 5. Labels. With one rank the core writes straight into the output arrays. With several,
  //    when every piece is the box its rank owns, the core works in block-sized output arrays
  //    and writes the piece's labels at their start (labels_active_only; Finish shrinks them);
  //    otherwise it writes a block, copied onto the piece in Finish, where the ranks
  //    exchange the foreign cells.
  const vtkIdType nOut = piece.Count();
  const bool inPlace = direct || !foreign; // the same on every rank
  const vtkIdType nArray = direct ? nOut : (inPlace ? static_cast<vtkIdType>(nStored) : nOut);
  this->Out[0] = NewLabelArray(PHEW_ARRAY_PEAK_PATCH_ID, nArray);
  this->Out[1] = NewLabelArray(PHEW_ARRAY_CLUMP_ID, nArray);
  this->Out[2] = NewLabelArray(PHEW_ARRAY_HALO_ID, nArray);
  if (!inPlace)
  {
    this->BlockLabels.reset(new int64_t[3 * nStored]);
  }
  for (int k = 0; k < 3; ++k)
  {
    this->LabelData[k] = inPlace ? reinterpret_cast<int64_t*>(this->Out[k]->GetPointer(0))
                                 : this->BlockLabels.get() + k * nStored;
  }
  labels.peak_patch_id = this->LabelData[0];
  labels.clump_id = this->LabelData[1];
  labels.halo_id = this->LabelData[2];
  in.labels_active_only = inPlace && !direct ? 1 : 0;

  this->CellData = cellData;
  this->Direct = direct;
  this->Foreign = foreign;
  this->InPlace = inPlace;
  this->Grid = grid;
  this->Piece = piece;
  this->Owned = owned;
  this->Stored = stored;
  this->Values = values;
  return std::string();
}

//------------------------------------------------------------------------------
std::string ImageInput::Finish(Context& context, vtkDataObject* outputObject)
{
  if (!this->Direct && this->InPlace)
  {
    for (int k = 0; k < 3; ++k) // the piece's labels are at the start (labels_active_only)
    {
      this->Out[k]->SetNumberOfTuples(this->Piece.Count());
    }
  }
  else if (!this->Direct)
  {
    // The owned cells of the piece take their labels from the block; the others (ghost
    // cells, shared point planes, duplicated pieces) fetch theirs from their owners.
    phew_grid pieceGrid = this->Grid;
    for (int d = 0; d < 3; ++d)
    {
      pieceGrid.stored_offset[d] = this->Piece.lo[d];
      pieceGrid.stored_dims[d] = this->Piece.Dim(d);
    }
    for (int k = 0; k < 3; ++k)
    {
      int64_t* out = reinterpret_cast<int64_t*>(this->Out[k]->GetPointer(0));
      CopyRegion<int64_t>(this->LabelData[k], this->Stored, out, this->Piece, this->Owned);
      phew_context core = CoreContext(context);
      const phew_status copied =
        this->Foreign ? phew_exchange_ghosts(&core, &pieceGrid, out, sizeof(int64_t)) : PHEW_OK;
      if (copied != PHEW_OK) // collective
      {
        return std::string("PHEW could not copy the labels to the ghost cells (") +
          phew_status_string(copied) + "): " + core.message;
      }
    }
  }

  // A shallow copy of the input (its arrays are shared, never modified) plus the labels. A
  // piece without cells stays empty: with cell data, a piece one point thick across an axis
  // of the image has faces that VTK counts as cells, but no density and no labels.
  auto* output = vtkImageData::SafeDownCast(outputObject);
  if (output && !this->Piece.Empty())
  {
    output->ShallowCopy(this->Image);
    vtkDataSetAttributes* attributes =
      output->GetAttributes(this->CellData ? vtkDataObject::CELL : vtkDataObject::POINT);
    for (int k = 0; k < 3; ++k)
    {
      attributes->AddArray(this->Out[k]);
    }
  }
  return std::string();
}
} // namespace phew_adaptors
