/**
 * @class vtkPHEWMergerTree
 * @brief Clumps followed in time: links each structure of a step to those of the step before
 * that hold the same cells or particles (phew_link_steps).
 *
 * Input: labelled data from the PHEW filters of this plugin, one time step per run:
 * - a vtkImageData with a cell label array (ClumpId or HaloId of the PHEW Clump Finder):
 *   elements are cells, named by their global cell id ix + nx (iy + ny iz) over the whole
 *   extent; the optional Mass array is then a cell density, times the cell volume;
 * - a vtkPointSet with a point label array (GroupId of Friends-of-Friends or HOP, ClumpId of
 *   the clump finder on particles) and an Id array (particle ids that stay the same over the
 *   steps; required): the optional Mass array is the particle mass.
 * Without a Mass array every element weighs 1. Cells or points flagged as ghosts are left out.
 *
 * The filter remembers the step it ran on before. Each run at a later time links the new
 * labels to those; a run at the same time again (a property changed) links it to the same
 * earlier step; a run at an earlier time, or with other arrays, starts a new history (so does
 * ResetHistory). In situ (Catalyst) or in a script, update it once per step in time order; in
 * the GUI, play the animation forwards. An input empty on every process (the filter before
 * it failed) is an error, and that step stays out of the history: the next step links to the
 * last good one.
 *
 * Output 0, Links: the links between the step asked for and the one before (its columns are
 * phew_link_columns(): ProgenitorId, DescendantId, masses and shares both ways, main flags,
 * NumberOfProgenitors (2 or more: a merger) and NumberOfDescendants (2 or more: a split)),
 * after Step (0 for the first step of the history), Time and PreviousTime (NaN at the first
 * step, whose structures all appear as new, ProgenitorId -1). Output 1, History: the links of
 * every step of the history so far, in order. Output 2, Tree Drawing, and output 3, Mass
 * History: the history drawn and the branch of one structure (Structure of step StructureStep;
 * -1, -1: the most massive of the last step; empty while its branch has one step), see
 * vtkPHEWTreeDrawing.h. All are complete on
 * rank 0 and empty on the other ranks; the same, bit for bit, for any number of processes.
 *
 * A request for a time the history already holds, from the same input unmodified since, runs
 * nothing: it shows that step's links and the whole history. So every view, writer and
 * Fetch sees the whole history, whatever time it asks for (ParaView asks each output port at
 * its own time: a Fetch without a time, a view at another).
 */
#ifndef vtkPHEWMergerTree_h
#define vtkPHEWMergerTree_h

#include "PHEWFiltersModule.h" // for export macro
#include "vtkSmartPointer.h"   // for the history
#include "vtkTableAlgorithm.h"
#include "vtkTimeStamp.h" // for OutputsChanged

#include <cstdint> // for int64_t
#include <memory>  // for the tracer sets
#include <string>  // for the arrays' names
#include <vector>  // for the remembered steps

class vtkDataSet;
class vtkPolyData;
class vtkTable;
namespace phew_adaptors
{
struct Context;
}

class PHEWFILTERS_EXPORT vtkPHEWMergerTree : public vtkTableAlgorithm
{
public:
  static vtkPHEWMergerTree* New();
  vtkTypeMacro(vtkPHEWMergerTree, vtkTableAlgorithm);
  void PrintSelf(ostream& os, vtkIndent indent) override;

  /// Forgets the steps seen so far: the next run starts a new history.
  void ResetHistory();

  /// Steps in the history (the last run's step included).
  int GetNumberOfSteps() const { return static_cast<int>(this->History.size()); }

  /// With an Energy array: the particles that follow each structure (200) and the steps an
  /// orphan is followed (3); docs/merger-trees.md.
  vtkSetClampMacro(MostBoundParticles, int, 1, VTK_INT_MAX);
  vtkGetMacro(MostBoundParticles, int);
  vtkSetClampMacro(MaxOrphanSteps, int, 0, VTK_INT_MAX);
  vtkGetMacro(MaxOrphanSteps, int);

  /// The structure whose branch the Mass History holds: its id (StructureId) in step
  /// StructureStep of the history (-1, the default: the most massive of that step), and that
  /// step (0 for the first; -1, the default: the last). The GUI sets both when a structure is
  /// selected in a view or a table, or a node of the Tree Drawing is picked.
  vtkSetClampMacro(Structure, int, -1, VTK_INT_MAX);
  vtkGetMacro(Structure, int);
  vtkSetClampMacro(StructureStep, int, -1, VTK_INT_MAX);
  vtkGetMacro(StructureStep, int);

  /// The output ports.
  enum OutputPorts
  {
    LINKS = 0,
    HISTORY = 1,
    TREE_DRAWING = 2,
    MASS_HISTORY = 3
  };

protected:
  vtkPHEWMergerTree();
  ~vtkPHEWMergerTree() override;

  int FillInputPortInformation(int port, vtkInformation* info) override;
  int FillOutputPortInformation(int port, vtkInformation* info) override;
  /// The filter's own time, or when its outputs last changed: see vtkPHEWMergerTree.cxx.
  int ComputePipelineMTime(vtkInformation* request, vtkInformationVector** inInfoVec,
    vtkInformationVector* outInfoVec, int requestFromOutputPort, vtkMTimeType* mtime) override;
  int RequestData(vtkInformation*, vtkInformationVector**, vtkInformationVector*) override;

private:
  /// This rank's labelled elements of one step.
  struct Step
  {
    bool Valid = false;
    double Time = 0.0;
    std::vector<int64_t> Id, Label;
    std::vector<double> Mass, Energy; // Energy: with an Energy array (particles)
  };

  /// Rank 0: the core's tracer sets of the previous and the current step, each the step's
  /// structures and the orphans carried to it (vtkPHEWMergerTree.cxx).
  struct TracerSets;

  /// The arrays of one step (vtkPHEWMergerTree.cxx).
  struct Elements;

  /// Rank 0: the links of every step of the history as the core made them.
  struct StepRows;

  /// ResetHistory without marking the filter modified (also after a failed run).
  void ForgetSteps();

  /// What the input is now: its producer and that one's pipeline modified time.
  struct InputStamp
  {
    const void* Producer = nullptr;
    vtkMTimeType Time = 0;
    bool operator==(const InputStamp& other) const
    {
      return this->Producer == other.Producer && this->Time == other.Time;
    }
  };
  InputStamp StampOfInput();
  /// The arrays and parameters the steps are read and linked with.
  std::string ArraysKey();
  std::string RequestKey(double time);

  /// The step of the history a request is for when nothing needs to run (-1: run).
  int CachedStep(const phew_adaptors::Context& context, double time);
  /// One run; returns the problem (agreed over the ranks) or "".
  std::string Run(const phew_adaptors::Context& context, vtkInformation* inputInfo,
    vtkDataSet* input, double time);
  double StepTime(vtkDataSet* input, vtkInformationVector* outputVector) const;

  /// Reads the labelled elements of `input` into `step`; returns a problem or "".
  std::string ReadStep(vtkDataSet* input, vtkInformation* inputInfo, Step& step);
  std::string FindArrays(vtkDataSet* input, Elements& elements);
  std::string FindEnergies(vtkDataSet* input, Elements& elements, int association);
  static void NameCells(vtkInformation* inputInfo, Elements& elements);
  static void Collect(vtkDataSet* input, const Elements& elements, Step& step);

  /// Places `step` in the history, then links it to the step before.
  void StartStep(Step&& step);
  std::string LinkSteps(const phew_adaptors::Context& context);
  void FillOutputs(size_t step, vtkTable* links, vtkTable* history) const;
  void Draw(const phew_adaptors::Context& context, vtkPolyData* drawing, vtkTable* massHistory);

  Step Previous, Current;
  std::unique_ptr<TracerSets> Tracers;
  int MostBoundParticles = 200;
  int MaxOrphanSteps = 3;
  int Structure = -1;
  int StructureStep = -1;
  std::string Arrays;        // the arrays the remembered steps were read with
  std::string FailedRequest; // the last request, if it failed (RequestKey)
  // Per step of the history: its links as a table and as the core made them (rank 0), its
  // time, and the input it was read from.
  std::vector<vtkSmartPointer<vtkTable>> History;
  std::unique_ptr<StepRows> Rows;
  std::vector<double> StepTimes;
  std::vector<InputStamp> StepInputs;
  vtkTimeStamp OutputsChanged; // when a run last changed what the outputs hold

  vtkPHEWMergerTree(const vtkPHEWMergerTree&) = delete;
  void operator=(const vtkPHEWMergerTree&) = delete;
};

#endif
