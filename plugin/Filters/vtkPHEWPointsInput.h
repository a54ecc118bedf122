// Private helper of the PHEW filters: the input adaptor for particles (a vtkPointSet: vtkPolyData,
// vtkUnstructuredGrid, vtkStructuredGrid...; or a composite dataset whose leaves are point sets:
// vtkMultiBlockDataSet, vtkPartitionedDataSet, vtkPartitionedDataSetCollection).
//
// Rules (the same on every rank):
//  - the particles of a rank are the points of its leaves, concatenated in a fixed order: the
//    leaves in the order of a composite iterator (empty leaves skipped), then the points of
//    each leaf in order. Points flagged as duplicates of another rank's points (DUPLICATEPOINT
//    in vtkGhostType) are left out; they get the labels -1 and the density NaN.
//  - global ids (PeakPatchId, and the order of equal densities): the selected Id array, or
//    the position in the global order, rank 0's particles first, then rank 1's... (the core's
//    default). Without an Id array the answer is therefore the one-rank answer whenever the
//    ranks hold consecutive shares of the points in order (as readers split files); for any
//    other split give an Id array.
//  - positions of type float go to the core as float32 (with masses and velocities, when all
//    of them are float), anything else as float64; other array types are converted; a single
//    leaf without ghost points is read in place when its types allow.
//  - the box: the one given, or the bounds of the points over all ranks (then no axis may be
//    periodic, and every axis must have an extent). Estimated densities are in units of the
//    total mass over the box volume.
// Any problem (a leaf that is not a point set, a missing or malformed array, no points on any
// rank, a flat set of points with the box from the bounds...) is agreed by all ranks.
#ifndef vtkPHEWPointsInput_h
#define vtkPHEWPointsInput_h

#include "vtkPHEWInputAdaptor.h"
#include "vtkSmartPointer.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

class vtkDataArray;
class vtkDataObject;
class vtkDoubleArray;
class vtkIdTypeArray;
class vtkPointSet;

namespace phew_adaptors
{
/// The point arrays a particle run may use (the index is the filter's input array index).
enum PointArray
{
  POINT_DENSITY = 0,
  POINT_MASS = 1,
  POINT_VELOCITY = 2,
  POINT_ID = 3,
  POINT_ARRAY_COUNT = 4
};

/// The name ParaView's array lists give the "no array" entry (ArrayListDomain none_string).
extern const char* const NoArrayName;

/// The particle options of a filter (its properties).
struct PointOptions
{
  /// The label arrays the run writes on the points (vtkIdType, one per point), in the order
  /// of LabelArray; PeakPatchId, ClumpId and HaloId also go to the core as phew_labels.
  std::vector<std::string> LabelNames;
  bool WithDensity = true;     // the run writes the point array Density (double)
  bool WithEnergy = false;     // the run writes SpecificEnergy (double): the physics' energies
  bool EstimateDensity = true; // false: the POINT_DENSITY array is the density
  int NumberOfNeighbours = 16;
  int NumberOfDensityNeighbours = 64;
  int NumberOfThreads = 0;
  bool BoxFromSnapshot = true; // a snapshot's box and periodicity (field data) win
  bool BoxFromDataBounds = true;
  double BoxOrigin[3] = { 0.0, 0.0, 0.0 };
  double BoxSize[3] = { 1.0, 1.0, 1.0 };
  bool Periodic[3] = { false, false, false };
  /// The selected array `which` (PointArray) of one point set and its association, or
  /// nullptr: the filter's GetInputArrayToProcess.
  std::function<vtkDataArray*(int which, vtkDataObject*, int& association)> Array;
  /// The selected name of array `which`: empty or NoArrayName when none is selected.
  std::function<std::string(int which)> SelectedName;
};

class PointsInput : public InputAdaptor
{
public:
  PointsInput(vtkDataObject* input, const PointOptions& options);
  ~PointsInput() override;

  /// Fills `input` (mesh PHEW_MESH_POINTS, phew_points, density or NULL to estimate it) and
  /// `labels` (PeakPatchId, ClumpId, HaloId when named in LabelNames; the density with
  /// WithDensity). Collective.
  std::string Prepare(Context& context, phew_input& input, phew_labels& labels) override;

  /// After Prepare: where the core writes label array `which` (LabelNames) for the particles
  /// passed.
  int64_t* LabelArray(size_t which) override;

  /// After Prepare, with WithEnergy: where the physics writes the particles' specific energies.
  double* EnergyArray() override;

  /// A shallow copy of the input (same type; a composite gets a shallow copy of every leaf)
  /// plus the label arrays and the Density array.
  std::string Finish(Context& context, vtkDataObject* output) override;

  /// Is `input` a point set or a composite dataset (not AMR) that this adaptor may take?
  static bool Accepts(vtkDataObject* input);

private:
  struct Leaf
  {
    vtkPointSet* Data = nullptr;
    vtkIdType NumberOfPoints = 0;
    std::vector<char> Skip; // per point: 1 for a ghost point left out; empty: none
    vtkIdType Passed = 0;   // points given to the core
    vtkDataArray* Arrays[POINT_ARRAY_COUNT] = { nullptr, nullptr, nullptr, nullptr };
  };

  /// Which arrays the run reads, and what messages call the particles. Not collective.
  std::string ChooseArrays(Context& context, bool used[POINT_ARRAY_COUNT]);
  /// The leaves and their arrays checked, agreed over the ranks, and the particles counted.
  std::string CheckLeaves(Context& context, const bool used[POINT_ARRAY_COUNT]);
  /// The output arrays and where the core writes (labels.density; LabelTargets).
  void MakeOutputs(phew_labels& labels);
  std::string CollectLeaves(Context& context);
  std::string CheckLeaf(Leaf& leaf, const bool used[POINT_ARRAY_COUNT]);
  std::string MakeBox(Context& context, phew_points& points);
  void GatherParticles(phew_input& in, const bool used[POINT_ARRAY_COUNT]);

  vtkDataObject* Input;
  PointOptions Options;
  std::vector<Leaf> Leaves;
  bool Direct = false; // one leaf, no ghost points: the core writes into the output arrays
  vtkIdType Passed = 0;
  std::vector<float> Positions32, Masses32, Velocities32, Density32;
  std::vector<double> Positions64, Masses64, Velocities64, Density64;
  std::vector<int64_t> Ids;
  std::vector<std::string> LabelNames;      // of Outputs, in order
  bool WithDensity = true;                  // Outputs has a Density array
  std::vector<std::vector<int64_t>> Labels; // per label, in core order, when not Direct
  std::vector<double> Densities;
  std::vector<std::vector<vtkSmartPointer<vtkIdTypeArray>>> Out; // per label, per leaf
  std::vector<int64_t*> LabelTargets; // per label: where the core writes it
  std::vector<vtkSmartPointer<vtkDoubleArray>> OutDensity;
  std::vector<double> Energies;                           // in core order (WithEnergy)
  std::vector<vtkSmartPointer<vtkDoubleArray>> OutEnergy; // per leaf
};
} // namespace phew_adaptors

#endif
