/**
 * @class vtkPHEWAlgorithm
 * @brief Base of the PHEW filters that run the core on one input: the one driver, the ports,
 * and the properties they share (threads; for particles the box, periodic axes and arrays).
 *
 * RequestData is the driver, the same for every filter:
 *  1. MakeAdaptor chooses the input adaptor for the input's type (phew_adaptors::ImageInput,
 *     AMRInput or PointsInput; an input of another type is an error);
 *  2. the adaptor turns the VTK data into the core's view (Prepare, collective);
 *  3. RunCore calls the subclass's core function with the filter's parameters, progress and
 *     Abort (phew_context.cancel);
 *  4. the adaptor writes the labels back onto a shallow copy of the input (Finish);
 *  5. FillOutputs fills the other ports (tables, drawings).
 * A problem found on any rank is agreed by all of them and reported once per rank, with one
 * vtkErrorMacro; every output is left empty, and RequestData still returns 1, so that VTK adds
 * no second message and the pipeline does not run the same failed input again for each port
 * and view (a change of input or property runs it again). Abort (SetAbortExecute, from a
 * progress observer or a stop button) stops the run with one warning instead.
 *
 * Ports: one input port that takes any data object (so that a composite input arrives whole
 * in one RequestData call: the run is collective); output port 0 of the input's type, the
 * others vtkTables unless a subclass says otherwise (FillOutputPortInformation).
 *
 * Particle properties (PointsInput): BoxFromDataBounds, BoxOrigin, BoxSize, PeriodicAxes
 * (SetPeriodicX/Y/Z, the XML's Periodic X/Y/Z) and the selected point arrays (mass, velocity,
 * id, density), mapped onto the filter's input array indices (SetPointArrayIndices).
 */
#ifndef vtkPHEWAlgorithm_h
#define vtkPHEWAlgorithm_h

#include "PHEWFiltersModule.h" // for export macro
#include "vtkDataObjectAlgorithm.h"

#include <memory> // for std::unique_ptr
#include <string> // for std::string
#include <vector> // for std::vector

struct phew_input;
struct phew_labels;
struct phew_context;
struct phew_physics_result;
namespace phew_physics
{
struct Grouping;
}
namespace phew_adaptors
{
class InputAdaptor;
struct Context;
struct PointOptions;
}

class PHEWFILTERS_EXPORT vtkPHEWAlgorithm : public vtkDataObjectAlgorithm
{
public:
  vtkAbstractTypeMacro(vtkPHEWAlgorithm, vtkDataObjectAlgorithm);
  void PrintSelf(ostream& os, vtkIndent indent) override;

  ///@{
  /// Threads per process for the core's threaded stages (default 0: all cores). The result
  /// does not depend on it.
  vtkSetMacro(NumberOfThreads, int);
  vtkGetMacro(NumberOfThreads, int);
  ///@}

  ///@{
  /// Particles: when the points come from a snapshot reader of this plugin (field data
  /// BoxOrigin, BoxSize, Periodic), the box and periodic axes are the snapshot's and the
  /// properties below are not used (default on).
  vtkSetMacro(BoxFromSnapshot, bool);
  vtkGetMacro(BoxFromSnapshot, bool);
  vtkBooleanMacro(BoxFromSnapshot, bool);
  ///@}

  ///@{
  /// Particles: the box is the bounds of the points over all processes (default on); off:
  /// BoxOrigin and BoxSize, needed for periodic axes. Estimated densities are in units of the
  /// total mass over the box volume, and its volume sets the mean interparticle spacing.
  vtkSetMacro(BoxFromDataBounds, bool);
  vtkGetMacro(BoxFromDataBounds, bool);
  vtkBooleanMacro(BoxFromDataBounds, bool);
  vtkSetVector3Macro(BoxOrigin, double);
  vtkGetVector3Macro(BoxOrigin, double);
  vtkSetVector3Macro(BoxSize, double);
  vtkGetVector3Macro(BoxSize, double);
  ///@}

  ///@{
  /// Particles: periodic axes of the box (default none; they need BoxFromDataBounds off).
  vtkSetVector3Macro(PeriodicAxes, int);
  vtkGetVector3Macro(PeriodicAxes, int);
  void SetPeriodicX(int on);
  void SetPeriodicY(int on);
  void SetPeriodicZ(int on);
  ///@}

  ///@{
  /// Particles: unbinding and halo properties after the finder (docs/physics.md), when a
  /// Velocity array is selected (default on): the point array Bound<label> (the innermost
  /// structure each particle is bound to, -1 none) and the physics columns (bound mass, centre,
  /// M200c..., Vmax, spin, shape) in the catalogue. A snapshot read in astronomers' units gives
  /// the cosmology; a snapshot read in code units gets none of it (its G is not known); other
  /// data take GravitationalConstant (in their units).
  vtkSetMacro(HaloProperties, bool);
  vtkGetMacro(HaloProperties, bool);
  vtkBooleanMacro(HaloProperties, bool);
  vtkSetMacro(Unbind, bool);
  vtkGetMacro(Unbind, bool);
  vtkBooleanMacro(Unbind, bool);
  /// 0: exact (softened pairwise, octree for large structures); 1: spherical (RAMSES's).
  vtkSetClampMacro(PotentialMethod, int, 0, 1);
  vtkGetMacro(PotentialMethod, int);
  /// Plummer softening in the positions' units; negative: 1/50 of the mean spacing.
  vtkSetMacro(Softening, double);
  vtkGetMacro(Softening, double);
  vtkSetMacro(GravitationalConstant, double);
  vtkGetMacro(GravitationalConstant, double);
  ///@}

  /// The progress bar: the filter's label and the stage ("PHEW Clump Finder: watershed").
  void ReportProgress(double fraction, const char* stage);

protected:
  vtkPHEWAlgorithm();
  ~vtkPHEWAlgorithm() override;

  int FillInputPortInformation(int port, vtkInformation* info) override;
  int FillOutputPortInformation(int port, vtkInformation* info) override;
  int RequestDataObject(vtkInformation*, vtkInformationVector**, vtkInformationVector*) override;
  int RequestData(vtkInformation*, vtkInformationVector**, vtkInformationVector*) override;

  ///@{
  /// The hooks of the driver.
  /// The filter's name in messages and progress ("PHEW Clump Finder").
  virtual const char* GetFilterLabel() = 0;
  /// The adaptor for `input`, or nullptr and the problem (an input type the filter does not
  /// take; every rank has the same type). Default: particles (PointsInput) only.
  virtual std::unique_ptr<phew_adaptors::InputAdaptor> MakeAdaptor(
    vtkDataObject* input, std::string& problem);
  /// What the subclass tells the adaptors besides the communicator (default: nothing).
  virtual void ConfigureContext(phew_adaptors::Context& context);
  /// The particle options besides the shared properties (what the run writes, neighbours...).
  virtual void ConfigurePointOptions(phew_adaptors::PointOptions& options) = 0;
  /// Runs the core on what the adaptor prepared and keeps its result for FillOutputs; the
  /// status is the same on every rank (core.message says why it failed).
  virtual int RunCore(phew_context& core, phew_input& input, phew_labels& labels,
    phew_adaptors::InputAdaptor& adaptor) = 0;
  /// The message of a failed run (status: a phew_status other than PHEW_OK and PHEW_CANCELLED).
  virtual std::string DescribeFailure(
    const phew_adaptors::Context& context, int status, const char* message);
  /// After the labels: fills the other ports from the kept result. Returns an empty string,
  /// or the problem (the same on every rank).
  virtual std::string FillOutputs(
    phew_adaptors::Context& context, vtkDataObject* labelled, vtkInformationVector* outputVector);
  /// The run's parameters for the tables' record (vtkPHEWRunRecord.h), as "Name = value"
  /// entries, after FillOutputs (the result is still kept). Default: none.
  virtual void DescribeParameters(std::vector<std::string>& entries);
  /// Frees the result RunCore kept.
  virtual void ReleaseResult() {}
  /// Empties the outputs (before a run, and after a failure): every port by default.
  virtual void ClearOutputs(vtkInformationVector* outputVector);
  ///@}

  /// Which input array to process selects each phew_adaptors::PointArray (density, mass,
  /// velocity, id): its index, or -1 when the filter has no such input. Each selection
  /// starts as none (ParaView's "None").
  void SetPointArrayIndices(const int indices[4]);

  /// The options of the properties: the box, periodic axes, threads, and the selected arrays,
  /// then the subclass's (ConfigurePointOptions).
  phew_adaptors::PointOptions MakePointOptions();

  /// Particles: whether the physics runs (HaloProperties and a Velocity array selected).
  bool PhysicsRequested(const phew_adaptors::PointOptions& options);
  /// Runs the physics on the finder's grouping (collective): bound labels and specific energies
  /// per particle passed; the result stays in Physics for FillOutputs. The units and cosmology
  /// come from `metadata` (nullptr: the input). Returns the core's status.
  int RunPhysics(phew_context& core, const phew_input& in, const phew_physics::Grouping& grouping,
    int64_t* bound, double* energy, vtkDataObject* metadata = nullptr);
  /// The physics' parameters and counts for the record, when it ran.
  void DescribePhysics(std::vector<std::string>& entries);
  void ReleasePhysics();

  phew_physics_result* Physics = nullptr;
  bool PhysicsThisRun = false; // requested for the run being prepared (ConfigurePointOptions)
  bool PhysicsRan = false;
  bool HaloProperties = true;
  bool Unbind = true;
  int PotentialMethod = 0;
  double Softening = -1.0;
  double GravitationalConstant = 1.0;
  int NumberOfThreads = 0;
  bool BoxFromSnapshot = true;
  bool BoxFromDataBounds = true;
  double BoxOrigin[3] = { 0.0, 0.0, 0.0 };
  double BoxSize[3] = { 1.0, 1.0, 1.0 };
  int PeriodicAxes[3] = { 0, 0, 0 };
  int PointArrayIndices[4] = { -1, -1, -1, -1 };
  /// The run's input: the box length along its periodic axes, 0 along open ones (for the
  /// haloes' colours, vtkPHEWHaloColours.h).
  double InputPeriod[3] = { 0.0, 0.0, 0.0 };

private:
  vtkPHEWAlgorithm(const vtkPHEWAlgorithm&) = delete;
  void operator=(const vtkPHEWAlgorithm&) = delete;

  /// Steps 1-5 of the driver. Returns an empty string, or the problem (the same on every
  /// rank); after an Abort, Stopped is set and the problem is not reported as an error.
  std::string Execute(
    vtkDataObject* input, vtkInformation* inInfo, vtkInformationVector* outputVector);
  /// Whether the run stops: the core stopped, or an Abort came after its last check (a
  /// progress observer may set it on one rank only: every rank agrees).
  bool StopRequested(const phew_adaptors::Context& context, int status);
  /// Every table output gets the run's record: the filter, its parameters, the box or grid
  /// the core ran on, and the input's field data.
  void RecordRun(vtkDataObject* input, const phew_input& in, vtkInformationVector* outputVector);

  // The pipeline time of the run that failed last: the pipeline asks again, once per output
  // port and view (and for an image it cannot hold); the same failed run is then not repeated,
  // nor its message.
  vtkMTimeType FailedPipelineTime = 0;
  bool Stopped = false; // the last run was stopped by Abort (a warning, not an error)
};

#endif
