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

// The image's geometry as the pipeline gives it.
struct Geometry
{
  int Extent[6], Whole[6];
  double Spacing[3], Origin[3];
};

// This rank's piece: its density array, the cells it holds and those it owns (its non-ghost
// box), and its problem, if any, before the ranks agree.
struct LocalPiece
{
  vtkDataArray* Density = nullptr;
  std::string Name, Problem;
  bool Cells = false, Points = false;
  Box Piece, NonGhost;
};

// What every rank decides alike from every rank's piece.
struct Agreement
{
  std::string Problem;
  bool CellData = false, UseDouble = false;
  bool Foreign = false; // some piece holds cells another rank owns
  Box Whole, Owned;
};

vtkSmartPointer<vtkIdTypeArray> NewLabelArray(const char* name, vtkIdType n)
{
  auto array = vtkSmartPointer<vtkIdTypeArray>::New();
  array->SetName(name);
  array->SetNumberOfTuples(n);
  return array;
}

// The image's geometry as the pipeline gives it.
Geometry ReadGeometry(vtkImageData* input, vtkInformation* inInfo)
{
  Geometry g;
  input->GetExtent(g.Extent);
  if (inInfo && inInfo->Has(SDDP::WHOLE_EXTENT()))
  {
    inInfo->Get(SDDP::WHOLE_EXTENT(), g.Whole);
  }
  else
  {
    std::copy(g.Extent, g.Extent + 6, g.Whole);
  }
  // An empty piece may carry a default geometry: take the pipeline's, the same on all ranks.
  input->GetSpacing(g.Spacing);
  input->GetOrigin(g.Origin);
  if (input->GetNumberOfPoints() == 0 && inInfo && inInfo->Has(vtkDataObject::SPACING()) &&
    inInfo->Has(vtkDataObject::ORIGIN()))
  {
    inInfo->Get(vtkDataObject::SPACING(), g.Spacing);
    inInfo->Get(vtkDataObject::ORIGIN(), g.Origin);
  }
  return g;
}

// The density array of a piece with cells: a one-component point or cell array with a value
// per cell, whose non-ghost cells form a box (local.NonGhost).
std::string CheckDensity(vtkImageData* input, LocalPiece& local, int nRanks)
{
  const std::string& name = local.Name;
  vtkDataArray* density = local.Density;
  if (!density)
  {
    return name.empty()
      ? "no density array selected (set Density to a point or cell array)"
      : "the density array '" + name + "' is not a point or cell array of the input";
  }
  if (!local.Cells && !local.Points)
  {
    return "the density array '" + name + "' must be point or cell data";
  }
  if (density->GetNumberOfComponents() != 1)
  {
    return "the density array '" + name + "' has " +
      std::to_string(density->GetNumberOfComponents()) +
      " components; PHEW needs a scalar (1 component)";
  }
  if (density->GetNumberOfTuples() != local.Piece.Count())
  {
    return "the density array '" + name + "' has " + std::to_string(density->GetNumberOfTuples()) +
      " values but the image " + (nRanks > 1 ? "piece " : "") + "has " +
      std::to_string(local.Piece.Count()) + (local.Cells ? " cells" : " points");
  }
  std::string problem;
  vtkUnsignedCharArray* ghosts =
    local.Cells ? input->GetCellGhostArray() : input->GetPointGhostArray();
  local.NonGhost = NonGhostBox(local.Piece, ghosts, local.Cells, problem);
  return problem;
}

// The density of this piece and its problem, if any (not yet agreed).
LocalPiece CheckPiece(Context& context, vtkImageData* input, const Geometry& g)
{
  LocalPiece local;
  int association = -1;
  local.Density = context.Density(input, association);
  vtkInformation* arrayInfo = context.ArraySelection;
  if (local.Density)
  {
    local.Name = local.Density->GetName() ? local.Density->GetName() : "(unnamed)";
  }
  else
  {
    local.Name = SelectedName(context);
    // An empty piece may lack the array; the selection still says points or cells.
    if (arrayInfo && arrayInfo->Has(vtkDataObject::FIELD_ASSOCIATION()))
    {
      association = arrayInfo->Get(vtkDataObject::FIELD_ASSOCIATION());
    }
  }
  local.Cells = association == vtkDataObject::FIELD_ASSOCIATION_CELLS;
  local.Points = association == vtkDataObject::FIELD_ASSOCIATION_POINTS;
  local.Piece = PieceBox(g.Extent, g.Whole, local.Cells);
  if (local.Piece.Empty())
  {
    // A piece without cells (more ranks than cells, or one point thick on an axis the image
    // spans) needs no density; readers give it arrays of 0 or even -1 values.
    local.Density = nullptr;
  }
  else
  {
    local.Problem = CheckDensity(input, local, context.NumberOfRanks);
  }
  return local;
}

// Every rank's summary (kSummarySize numbers), in rank order.
std::vector<long long> GatherSummaries(const Context& context, const LocalPiece& local)
{
  const Box& nonGhost = local.NonGhost;
  const bool localDouble =
    local.Density && !vtkArrayDownCast<vtkAOSDataArrayTemplate<float>>(local.Density);
  const long long mine[kSummarySize] = { local.Problem.empty() ? 0 : 1,
    local.Cells ? 2 : (local.Points ? 1 : 0), localDouble ? 1 : 0, nonGhost.lo[0], nonGhost.lo[1],
    nonGhost.lo[2], nonGhost.hi[0], nonGhost.hi[1], nonGhost.hi[2],
    local.Piece == nonGhost ? 0 : 1 };
  std::vector<long long> all(mine, mine + kSummarySize);
  if (context.NumberOfRanks > 1)
  {
    all.resize(static_cast<size_t>(context.NumberOfRanks) * kSummarySize);
    context.Controller->AllGather(mine, all.data(), kSummarySize);
  }
  return all;
}

// What the ranks decide together from their summaries: the first problem, the association,
// the value type, and the box each rank owns (the pieces resolved into a tiling).
Agreement AgreeOnPieces(const Context& context, const LocalPiece& local, const Geometry& g)
{
  const std::vector<long long> all = GatherSummaries(context, local);
  const int nRanks = context.NumberOfRanks;
  int firstProblem = -1;
  long long kind = 0;
  bool mixed = false;
  Agreement a;
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
    a.UseDouble |= s[2] != 0;
    a.Foreign |= s[9] != 0; // cells owned elsewhere
    std::copy(s + 3, s + 6, boxes[r].lo);
    std::copy(s + 6, s + 9, boxes[r].hi);
  }
  a.CellData = kind == 2; // as agreed (a rank with an empty piece may not know)
  a.Whole = PieceBox(g.Whole, g.Whole, a.CellData);
  if (firstProblem >= 0)
  {
    a.Problem = SharedProblem(context, firstProblem, local.Problem);
  }
  else if (mixed)
  {
    a.Problem =
      "the density '" + local.Name + "' is point data on some pieces and cell data on others";
  }
  else if (kind == 0 || a.Whole.Empty())
  {
    a.Problem =
      std::string("the input image is empty (0 ") + (kind == 1 ? "points" : "cells") + ")";
  }
  else
  {
    const std::vector<Box> before = boxes;
    a.Problem = ResolveTiling(boxes, a.Whole, !a.CellData);
    a.Foreign |= boxes != before;
    a.Owned = boxes[context.Rank];
  }
  return a;
}

// The owned box plus one ghost layer towards every neighbour, wrapping on periodic axes (an
// axis the box spans wraps inside the core).
Box StoredBox(const Box& owned, const Box& whole, bool periodic)
{
  Box stored = owned;
  for (int d = 0; d < 3; ++d)
  {
    const long long n = whole.hi[d];
    if (!owned.Empty() && owned.Dim(d) < n)
    {
      stored.lo[d] -= (owned.lo[d] > 0 || periodic) ? 1 : 0;
      stored.hi[d] += (owned.hi[d] < n || periodic) ? 1 : 0;
    }
  }
  return stored;
}

void FillGrid(
  phew_grid& grid, const Geometry& g, const Agreement& agreed, const Box& stored, bool periodic)
{
  for (int d = 0; d < 3; ++d)
  {
    grid.global_dims[d] = agreed.Whole.hi[d];
    grid.stored_offset[d] = stored.lo[d];
    grid.stored_dims[d] = stored.Dim(d);
    grid.active_offset[d] = agreed.Owned.lo[d];
    grid.active_dims[d] = agreed.Owned.Dim(d);
    grid.periodic[d] = periodic ? 1 : 0;
    grid.spacing[d] = g.Spacing[d];
    // phew_grid.origin is the corner of cell (0,0,0); a point is the centre of its cell.
    grid.origin[d] =
      g.Origin[d] + g.Whole[2 * d] * g.Spacing[d] - (agreed.CellData ? 0.0 : 0.5 * g.Spacing[d]);
  }
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
  const Geometry geometry = ReadGeometry(this->Image, context.InputInformation);
  // 1. This piece, checked locally. Nothing returns before the agreement of step 2, so that
  //    a problem seen by one rank only (an array missing from one piece) stops every rank.
  const LocalPiece local = CheckPiece(context, this->Image, geometry);
  context.DensityName = local.Name;
  // 2. Agreement: every rank learns every rank's problem, association, value type and
  //    non-ghost box, so that all ranks decide the same below.
  const Agreement agreed = AgreeOnPieces(context, local, geometry);
  if (!agreed.Problem.empty())
  {
    return agreed.Problem;
  }
  this->CellData = agreed.CellData;
  this->Direct = context.NumberOfRanks == 1;
  this->Foreign = agreed.Foreign;
  this->InPlace = this->Direct || !agreed.Foreign; // the same on every rank
  this->Piece = PieceBox(geometry.Extent, geometry.Whole, agreed.CellData);
  this->Owned = agreed.Owned;
  // 3. The block of the core: the owned box plus one ghost layer towards every neighbour.
  this->Stored = StoredBox(agreed.Owned, agreed.Whole, context.Periodic);
  in.mesh = PHEW_MESH_STRUCTURED;
  FillGrid(in.grid, geometry, agreed, this->Stored, context.Periodic);
  this->Grid = in.grid;
  // 4. The density of the block; 5. the label arrays.
  const std::string problem =
    this->PrepareDensity(context, local.Density, local.Name, agreed.UseDouble, in);
  if (!problem.empty())
  {
    return problem;
  }
  this->PrepareLabels(in, labels);
  return std::string();
}

//------------------------------------------------------------------------------
// The density of the block. One rank holds the whole image: float and double go to the core
// without a copy. Otherwise the owned cells are copied and the ghost layer comes from the
// neighbours. Other numeric types become double (on every rank, so that all ranks send values
// of one size). Collective; the problem it returns is agreed.
std::string ImageInput::PrepareDensity(
  Context& context, vtkDataArray* density, const std::string& name, bool useDouble, phew_input& in)
{
  vtkSmartPointer<vtkDataArray> values = density;
  if (density && useDouble && !vtkArrayDownCast<vtkAOSDataArrayTemplate<double>>(density))
  {
    auto converted = vtkSmartPointer<vtkDoubleArray>::New();
    converted->DeepCopy(density);
    values = converted;
  }
  this->Values = values;
  in.density_type = useDouble ? PHEW_FLOAT64 : PHEW_FLOAT32;
  if (this->Direct)
  {
    in.density = values->GetVoidPointer(0);
    return std::string();
  }
  const size_t nStored = static_cast<size_t>(std::max(this->Stored.Count(), 1LL));
  if (useDouble)
  {
    this->Block64.reset(new double[nStored]);
    if (!this->Owned.Empty())
    {
      CopyRegion(static_cast<const double*>(values->GetVoidPointer(0)), this->Piece,
        this->Block64.get(), this->Stored, this->Owned);
    }
    in.density = this->Block64.get();
  }
  else
  {
    this->Block32.reset(new float[nStored]);
    if (!this->Owned.Empty())
    {
      CopyRegion(static_cast<const float*>(values->GetVoidPointer(0)), this->Piece,
        this->Block32.get(), this->Stored, this->Owned);
    }
    in.density = this->Block32.get();
  }
  phew_context core = CoreContext(context);
  void* block = useDouble ? static_cast<void*>(this->Block64.get()) : this->Block32.get();
  const phew_status status =
    phew_exchange_ghosts(&core, &in.grid, block, useDouble ? sizeof(double) : sizeof(float));
  if (status != PHEW_OK) // collective: the same status and message on every rank
  {
    return "PHEW could not fill the ghost cells of density '" + name + "' (" +
      phew_status_string(status) + "): " + core.message;
  }
  return std::string();
}

//------------------------------------------------------------------------------
// Labels. With one rank the core writes straight into the output arrays. With several, when
// every piece is the box its rank owns, the core works in block-sized output arrays and
// writes the piece's labels at their start (labels_active_only; Finish shrinks them);
// otherwise it writes a block, copied onto the piece in Finish, where the ranks exchange the
// foreign cells.
void ImageInput::PrepareLabels(phew_input& in, phew_labels& labels)
{
  const size_t nStored = static_cast<size_t>(std::max(this->Stored.Count(), 1LL));
  const vtkIdType nOut = this->Piece.Count();
  const vtkIdType nArray =
    this->Direct ? nOut : (this->InPlace ? static_cast<vtkIdType>(nStored) : nOut);
  this->Out[0] = NewLabelArray(PHEW_ARRAY_PEAK_PATCH_ID, nArray);
  this->Out[1] = NewLabelArray(PHEW_ARRAY_CLUMP_ID, nArray);
  this->Out[2] = NewLabelArray(PHEW_ARRAY_HALO_ID, nArray);
  if (!this->InPlace)
  {
    this->BlockLabels.reset(new int64_t[3 * nStored]);
  }
  for (int k = 0; k < 3; ++k)
  {
    this->LabelData[k] = this->InPlace ? reinterpret_cast<int64_t*>(this->Out[k]->GetPointer(0))
                                       : this->BlockLabels.get() + k * nStored;
  }
  labels.peak_patch_id = this->LabelData[0];
  labels.clump_id = this->LabelData[1];
  labels.halo_id = this->LabelData[2];
  in.labels_active_only = this->InPlace && !this->Direct ? 1 : 0;
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
