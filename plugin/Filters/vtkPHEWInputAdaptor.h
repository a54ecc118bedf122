// Private helpers of the PHEW filters: the interface of an input adaptor. An adaptor turns
// one kind of VTK input (vtkImageData, vtkOverlappingAMR, point sets) into the core's
// description of the cells (phew_input: mesh, density, label buffers), and writes the labels
// the core returns back into the output. Everything else (parameters, communicator, progress,
// running the core, reporting its errors, the tables) is the driver's, the same for every
// input kind and filter (vtkPHEWAlgorithm::RequestData).
#ifndef vtkPHEWInputAdaptor_h
#define vtkPHEWInputAdaptor_h

#include "phew/phew.h"

#include <functional>
#include <string>

class vtkDataArray;
class vtkDataObject;
class vtkInformation;
class vtkMultiProcessController;

namespace phew_adaptors
{
/// What the filter tells an adaptor.
struct Context
{
  vtkMultiProcessController* Controller = nullptr; // nullptr: one process
  int Rank = 0;
  int NumberOfRanks = 1;
  void* MPIComm = nullptr; // the core's communicator (address of an MPI_Comm) or nullptr
  bool Periodic = false;
  vtkInformation* InputInformation = nullptr; // pipeline information of the input
  vtkInformation* ArraySelection = nullptr;   // the Density selection (name, association)
  /// The selected density array of one dataset (an image, an AMR block) and its association
  /// (vtkDataObject::FIELD_ASSOCIATION_*), or nullptr: the filter's GetInputArrayToProcess.
  std::function<vtkDataArray*(vtkDataObject*, int&)> Density;
  /// The density's name for messages; set by the adaptor once it knows it.
  std::string DensityName;
  /// What the core ran on, for its error messages ("the particles"); empty: the density.
  std::string Subject;
  /// A warning for the user (not an error: the run goes on); reported once, by rank 0.
  std::string Warning;
};

/// Sets Controller, Rank, NumberOfRanks and MPIComm for the global controller. Returns a
/// problem (the same on every rank) when there are several processes but no MPI controller.
std::string InitializeContext(Context& context);

/// A context for the core's calls over these ranks (threads: 0 is all cores; no callbacks).
phew_context CoreContext(const Context& context, int threads = 0);

/// The message of rank `root` on every rank (collective when there are several ranks).
std::string SharedProblem(const Context& context, int root, const std::string& mine);

/// Collective: every rank says whether it found a problem; returns the message of the lowest
/// rank that found one, on every rank, or an empty string when none did (the core's
/// agreement, phew_agree).
std::string AgreeOnProblem(const Context& context, const std::string& mine);

/// For phew_context.cancel (cancel_data: the filter): whether the filter's AbortExecute flag is
/// set, by a progress observer or an application's stop button.
int AbortRequested(void* algorithm);

/// The name of the selected density array (from the selection, for messages when no dataset
/// holds it), or an empty string.
std::string SelectedName(const Context& context);

/// An input adaptor. Both calls are collective: every rank makes them, and when one returns
/// a problem it returns the same one on every rank (the filter then reports it and stops).
class InputAdaptor
{
public:
  virtual ~InputAdaptor() = default;

  /// Checks the input and fills `input` (mesh kind and description, density and its type)
  /// and `labels` (buffers the adaptor owns, one value per cell the core expects). Returns
  /// an empty string, or the problem (agreed by all ranks).
  virtual std::string Prepare(Context& context, phew_input& input, phew_labels& labels) = 0;

  /// After a successful run: fills `output` (created by the filter with the input's type)
  /// with a shallow copy of the input plus the label arrays. Returns an empty string, or the
  /// problem (agreed by all ranks).
  virtual std::string Finish(Context& context, vtkDataObject* output) = 0;

  /// After Prepare: where the core writes label array `which` when the filter names its label
  /// arrays itself (particles: PointOptions::LabelNames); nullptr for an adaptor that writes
  /// only the clump finder's labels (phew_labels, filled by Prepare).
  virtual int64_t* LabelArray(size_t which)
  {
    (void)which;
    return nullptr;
  }

  /// After Prepare: where the physics writes the particles' specific energies (points with
  /// PointOptions::WithEnergy); nullptr otherwise.
  virtual double* EnergyArray() { return nullptr; }
};
} // namespace phew_adaptors

#endif
