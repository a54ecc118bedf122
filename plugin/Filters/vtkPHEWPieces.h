// How the pieces of a distributed image become the blocks of the PHEW core: boxes of cells
// in global indices, the cells a piece holds, the cells it owns (not ghosts), and the
// resolution of overlapping pieces into a tiling of the whole image. VTK-light helpers of
// vtkPHEWClumpFinder; not part of the plugin's interface.
#ifndef vtkPHEWPieces_h
#define vtkPHEWPieces_h

#include <algorithm>
#include <string>
#include <vector>

class vtkUnsignedCharArray;

namespace phew_pieces
{
// A box of PHEW cells, [lo, hi) per axis, in global indices (0 at the start of the whole
// extent). Empty boxes are all zeros.
struct Box
{
  long long lo[3] = { 0, 0, 0 };
  long long hi[3] = { 0, 0, 0 };

  long long Dim(int d) const { return hi[d] > lo[d] ? hi[d] - lo[d] : 0; }
  long long Count() const { return this->Dim(0) * this->Dim(1) * this->Dim(2); }
  bool Empty() const { return this->Count() == 0; }
  bool operator==(const Box& b) const
  {
    return std::equal(lo, lo + 3, b.lo) && std::equal(hi, hi + 3, b.hi);
  }
  bool Contains(const Box& b) const
  {
    for (int d = 0; d < 3; ++d)
    {
      if (b.lo[d] < lo[d] || b.hi[d] > hi[d])
      {
        return false;
      }
    }
    return true;
  }
  Box Intersection(const Box& b) const
  {
    Box r;
    for (int d = 0; d < 3; ++d)
    {
      r.lo[d] = std::max(lo[d], b.lo[d]);
      r.hi[d] = std::min(hi[d], b.hi[d]);
    }
    return r.Empty() ? Box() : r;
  }
  // Position of cell (x, y, z) in an array laid out over this box, x fastest.
  long long Index(long long x, long long y, long long z) const
  {
    return (x - lo[0]) + this->Dim(0) * ((y - lo[1]) + this->Dim(1) * (z - lo[2]));
  }
};

// The PHEW cells of an image with point extent `extent` inside `whole`: its image cells
// (cell data; an axis that is flat in the whole image has one layer of cells) or its points.
Box PieceBox(const int extent[6], const int whole[6], bool cellData);

// Copies the cells of `region` from an array laid out over `from` into one laid out over `to`.
template <typename T>
void CopyRegion(const T* from, const Box& fromBox, T* to, const Box& toBox, const Box& region)
{
  for (long long z = region.lo[2]; z < region.hi[2]; ++z)
  {
    for (long long y = region.lo[1]; y < region.hi[1]; ++y)
    {
      const T* row = from + fromBox.Index(region.lo[0], y, z);
      std::copy(row, row + region.Dim(0), to + toBox.Index(region.lo[0], y, z));
    }
  }
}

// The cells of `piece` not flagged as copies of another piece's cells (ghosts). Sets
// `problem` when they do not form a box.
Box NonGhostBox(
  const Box& piece, vtkUnsignedCharArray* ghosts, bool cellData, std::string& problem);

// Turns the non-ghost boxes of all ranks into owned boxes that tile `whole` exactly once:
// a box inside a lower rank's box is a copy (from a source that ignores piece requests) and
// owns nothing; with point data, a plane two pieces share without a ghost flag (VTK's
// extent split; vtkGhostCellsGenerator flags it instead) belongs to the upper piece, the one
// that goes on above it (on an axis one point thick no piece does: nothing is shared there).
// Returns why the boxes cannot tile the image, or an empty string.
std::string ResolveTiling(std::vector<Box>& boxes, const Box& whole, bool pointData);
} // namespace phew_pieces

#endif
