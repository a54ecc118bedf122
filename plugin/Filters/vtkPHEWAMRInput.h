// Private helper of vtkPHEWClumpFinder: the input adaptor for block-structured AMR
// (vtkOverlappingAMR with a cell density). Every rank knows the whole hierarchy (the AMR
// metadata) but holds the datasets of some blocks only; the adaptor gives the core the list
// of all blocks (phew_amr: level, box in the level's index space with level-0 index 0 at the
// domain corner, owner rank) and the density of the blocks this rank owns. The core does all
// neighbour communication itself.
//
// The adaptor reads the hierarchy's metadata (levels, spacings, ratios, vtkAMRBox corners,
// origin) and which blocks this rank holds (a non-null, non-empty dataset) into a
// phew_amr_hierarchy; phew_plan_amr does the rest, the same on every rank (phew.h has the
// rules): the ranks must see the same hierarchy; levels no rank holds at all, above the last
// level someone holds (a reader asked for fewer levels than the file has: ParaView's
// XMLUniformGridAMRReader loads level 0 only unless DefaultNumberOfLevels is 0), are left out
// with a warning; boxes are shifted so that level-0 index 0 is the domain's corner; a block
// held by several ranks (sources that ignore piece requests, such as the AMR Gaussian pulse,
// give every rank every block) goes to the holder owning the fewest cells so far. After the
// run the owner sends the labels to the other holders, so that every held block carries its
// labels. The adaptor itself checks what only VTK knows: each held dataset has its box's
// cells, and the density is a one-component cell array.
#ifndef vtkPHEWAMRInput_h
#define vtkPHEWAMRInput_h

#include "vtkPHEWInputAdaptor.h"

#include <cstdint>
#include <utility>
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
  /// The VTK level and index of each block, in list order.
  using BlockIds = std::vector<std::pair<unsigned int, unsigned int>>;

private:
  std::string Describe(Context& context);
  void TakePlan(const phew_amr_plan& plan, const BlockIds& ids);
  std::string GatherDensity(Context& context, phew_input& in);
  std::string CollectDensity(
    Context& context, std::vector<vtkDataArray*>& arrays, bool& needDouble);
  void UseDensity(const std::vector<vtkDataArray*>& arrays, bool useDouble, phew_input& in);

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
