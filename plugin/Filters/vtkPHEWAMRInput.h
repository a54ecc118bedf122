// Private helper of vtkPHEWClumpFinder: the input adaptor for block-structured AMR
// (vtkOverlappingAMR with a cell density). Every rank knows the whole hierarchy (the AMR
// metadata) but holds the datasets of some blocks only; the adaptor gives the core the list
// of all blocks (phew_amr: level, box in the level's index space with level-0 index 0 at the
// domain corner, owner rank) and the density of the blocks this rank owns. The core does all
// neighbour communication itself.
//
// Rules (the same on every rank, decided from the allgathered "which blocks I hold"):
//  - boxes: vtkAMRBox corners are cell indices of the level counted from the AMR's global
//    origin; the domain is the bounding box of the level-0 boxes, lo0 its first cell, and
//    every box of level l is shifted by -lo0 * 2^l. The core's origin is the domain corner,
//    global origin + lo0 * (level-0 spacing); its spacing is the level-0 spacing.
//  - owners: a block held (non-null dataset) by one rank is owned by it. A block held by
//    several ranks (sources that ignore piece requests, such as the AMR Gaussian pulse, give
//    every rank every block) is owned by the holder that owns the fewest cells so far, blocks
//    taken in list order (ties: the lowest rank), which spreads duplicated hierarchies over
//    the ranks; after the run the owner sends the labels to the other holders, so that every
//    held block carries its labels.
//  - levels that no rank holds at all, above the last level someone holds (a reader asked
//    for fewer levels than the file has: ParaView's XMLUniformGridAMRReader loads level 0
//    only unless DefaultNumberOfLevels is 0), are left out: the finder runs on the levels
//    loaded, whose finest cells are then leaves. Any other block held by no rank is an error.
#ifndef vtkPHEWAMRInput_h
#define vtkPHEWAMRInput_h

#include "vtkPHEWInputAdaptor.h"

#include <cstdint>
#include <vector>

class vtkOverlappingAMR;

namespace phew_adaptors
{
class AMRInput : public InputAdaptor
{
public:
  explicit AMRInput(vtkOverlappingAMR* amr);
  ~AMRInput() override;

  std::string Prepare(Context& context, phew_input& input, phew_labels& labels) override;
  std::string Finish(Context& context, vtkDataObject* output) override;

  /// The blocks given to the core, in list order, and where they come from (for tests and
  /// debugging): VTK level and index of each.
  struct Source
  {
    unsigned int Level;
    unsigned int Index;
    long long FirstCell; // first own cell in the density and label buffers, -1: not owned
    std::vector<int> Holders;
  };

private:
  std::string Describe(Context& context);
  std::string GatherDensity(Context& context, phew_input& in);

  vtkOverlappingAMR* AMR;
  std::vector<phew_amr_block> Blocks;
  std::vector<Source> Sources;
  long long DomainDims[3] = { 0, 0, 0 }; // level-0 cells per axis
  double Origin[3] = { 0, 0, 0 };        // corner of the domain
  double Spacing[3] = { 1, 1, 1 };       // level-0 spacing
  long long OwnCells = 0;
  std::vector<float> Density32;
  std::vector<double> Density64;
  std::vector<int64_t> Labels[3];
};
} // namespace phew_adaptors

#endif
