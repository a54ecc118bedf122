#include "vtkPHEWPieces.h"

#include "vtkDataSetAttributes.h"
#include "vtkUnsignedCharArray.h"

namespace phew_pieces
{
// The PHEW cells of an image with point extent `extent` inside `whole`: its image cells
// (cell data; an axis that is flat in the whole image has one layer of cells) or its points.
Box PieceBox(const int extent[6], const int whole[6], bool cellData)
{
  Box b;
  for (int d = 0; d < 3; ++d)
  {
    const int lo = extent[2 * d], hi = extent[2 * d + 1];
    const int wholeLo = whole[2 * d], wholeHi = whole[2 * d + 1];
    if (hi < lo)
    {
      return Box();
    }
    b.lo[d] = lo - wholeLo;
    b.hi[d] = (cellData && wholeHi > wholeLo) ? hi - wholeLo : hi - wholeLo + 1;
  }
  return b.Empty() ? Box() : b;
}

// The cells of `piece` not flagged as copies of another piece's cells (ghosts). Sets
// `problem` when they do not form a box.
Box NonGhostBox(const Box& piece, vtkUnsignedCharArray* ghosts, bool cellData, std::string& problem)
{
  if (!ghosts || piece.Empty())
  {
    return piece;
  }
  const unsigned char duplicate = cellData
    ? static_cast<unsigned char>(vtkDataSetAttributes::DUPLICATECELL)
    : static_cast<unsigned char>(vtkDataSetAttributes::DUPLICATEPOINT);
  Box found; // grows to the bounding box of the non-ghost cells
  std::copy(piece.hi, piece.hi + 3, found.lo);
  std::copy(piece.lo, piece.lo + 3, found.hi);
  long long count = 0;
  for (long long z = piece.lo[2]; z < piece.hi[2]; ++z)
  {
    for (long long y = piece.lo[1]; y < piece.hi[1]; ++y)
    {
      for (long long x = piece.lo[0]; x < piece.hi[0]; ++x)
      {
        if (ghosts->GetValue(piece.Index(x, y, z)) & duplicate)
        {
          continue;
        }
        const long long c[3] = { x, y, z };
        for (int d = 0; d < 3; ++d)
        {
          found.lo[d] = std::min(found.lo[d], c[d]);
          found.hi[d] = std::max(found.hi[d], c[d] + 1);
        }
        ++count;
      }
    }
  }
  if (count != found.Count())
  {
    problem = "the cells of a piece that are not ghost cells do not form a box";
    return Box();
  }
  return count ? found : Box();
}

// Turns the non-ghost boxes of all ranks into owned boxes that tile `whole` exactly once:
// a box inside a lower rank's box is a copy (from a source that ignores piece requests) and
// owns nothing; with point data, a plane two pieces share without a ghost flag (VTK's
// extent split; vtkGhostCellsGenerator flags it instead) belongs to the upper piece, the one
// that goes on above it (on an axis one point thick no piece does: nothing is shared there).
// Returns why the boxes cannot tile the image, or an empty string.
std::string ResolveTiling(std::vector<Box>& boxes, const Box& whole, bool pointData)
{
  const int n = static_cast<int>(boxes.size());
  for (int r = 0; r < n; ++r)
  {
    for (int q = 0; q < r && !boxes[r].Empty(); ++q)
    {
      if (!boxes[q].Empty() && boxes[q].Contains(boxes[r]))
      {
        boxes[r] = Box();
      }
    }
  }
  // A plane of r is shared when another piece q overlaps r, starts on r's last plane and
  // goes on above it. "Goes on above" matters on an axis one point thick (every piece starts
  // and ends on its one plane) and for a piece one point thick inside a thicker axis (VTK's
  // split gives such pieces; the thicker piece that starts on the same plane owns it).
  const std::vector<Box> given = boxes;
  for (int r = 0; r < n && pointData; ++r)
  {
    for (int d = 0; d < 3; ++d)
    {
      for (int q = 0; q < n && !given[r].Empty(); ++q)
      {
        if (q != r && given[q].lo[d] == given[r].hi[d] - 1 && given[q].hi[d] > given[r].hi[d] &&
          !given[q].Intersection(given[r]).Empty())
        {
          boxes[r].hi[d] -= 1;
          break;
        }
      }
    }
    boxes[r] = boxes[r].Empty() ? Box() : boxes[r];
  }
  long long total = 0;
  for (int r = 0; r < n; ++r)
  {
    if (!whole.Contains(boxes[r]) && !boxes[r].Empty())
    {
      return "the piece of rank " + std::to_string(r) + " lies outside the whole extent";
    }
    for (int q = 0; q < r; ++q)
    {
      if (!boxes[q].Intersection(boxes[r]).Empty())
      {
        return "the pieces of ranks " + std::to_string(q) + " and " + std::to_string(r) +
          " overlap: the pieces must split the image (ghost cells are allowed if flagged)";
      }
    }
    total += boxes[r].Count();
  }
  if (total != whole.Count())
  {
    return "the pieces cover " + std::to_string(total) + " of the " +
      std::to_string(whole.Count()) + " cells of the image";
  }
  return std::string();
}

} // namespace phew_pieces
