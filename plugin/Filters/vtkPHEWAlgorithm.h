/**
 * @class vtkPHEWParticleFilter
 * @brief Base of the PHEW filters that take particles: the box, periodic axes and threads,
 * the ports' types, and the run of a particle-only filter.
 *
 * What the particle filters share:
 *  - the properties BoxFromDataBounds, BoxOrigin, BoxSize, PeriodicAxes (SetPeriodicX/Y/Z, the
 *    XML's Periodic X/Y/Z) and NumberOfThreads;
 *  - one input port that takes any data object (so that a composite input arrives whole in one
 *    RequestData call: the run is collective; vtkPHEWPointsInput says what is accepted);
 *  - output port 0 of the input's type (a shallow copy plus point arrays) and any further
 *    ports as vtkTables (RequestDataObject);
 *  - the selected point arrays (mass, velocity, id, density) mapped onto the filter's input
 *    array indices (SetPointArrayIndices), and the phew_adaptors::PointOptions of all of this
 *    (MakePointOptions).
 *
 * RequestData runs a filter that takes particles only (Particle Density, Friends-of-Friends,
 * HOP Halo Finder): it checks the input type, lets the points adaptor gather the particles
 * (ConfigurePointOptions sets what the subclass writes), calls RunParticles (the subclass runs
 * the core), writes the point arrays on port 0 and lets FillTables fill the table ports. A
 * problem found on any rank is reported once per rank with vtkErrorMacro and leaves every
 * output empty. The PHEW Clump Finder takes images and AMR as well: it derives for the
 * properties and ports and has its own RequestData.
 */
#ifndef vtkPHEWParticleFilter_h
#define vtkPHEWParticleFilter_h

#include "PHEWFiltersModule.h" // for export macro
#include "vtkDataObjectAlgorithm.h"

#include <string> // for std::string

class vtkTable;
struct phew_input;
struct phew_labels;
struct phew_context;
struct phew_group_result;
namespace phew_adaptors
{
class PointsInput;
struct PointOptions;
}

class PHEWFILTERS_EXPORT vtkPHEWParticleFilter : public vtkDataObjectAlgorithm
{
public:
  vtkAbstractTypeMacro(vtkPHEWParticleFilter, vtkDataObjectAlgorithm);
  void PrintSelf(ostream& os, vtkIndent indent) override;

  ///@{
  /// Threads per process for the neighbour search, the density and the finder (default 0:
  /// all cores). The result does not depend on it.
  vtkSetMacro(NumberOfThreads, int);
  vtkGetMacro(NumberOfThreads, int);
  ///@}

  ///@{
  /// The box is the bounds of the points over all processes (default on); off: BoxOrigin
  /// and BoxSize, needed for periodic axes. Estimated densities are in units of the total
  /// mass over the box volume, and its volume sets the mean interparticle spacing.
  vtkSetMacro(BoxFromDataBounds, bool);
  vtkGetMacro(BoxFromDataBounds, bool);
  vtkBooleanMacro(BoxFromDataBounds, bool);
  vtkSetVector3Macro(BoxOrigin, double);
  vtkGetVector3Macro(BoxOrigin, double);
  vtkSetVector3Macro(BoxSize, double);
  vtkGetVector3Macro(BoxSize, double);
  ///@}

  ///@{
  /// Periodic axes of the box (default none; they need BoxFromDataBounds off).
  vtkSetVector3Macro(PeriodicAxes, int);
  vtkGetVector3Macro(PeriodicAxes, int);
  void SetPeriodicX(int on);
  void SetPeriodicY(int on);
  void SetPeriodicZ(int on);
  ///@}

protected:
  vtkPHEWParticleFilter();
  ~vtkPHEWParticleFilter() override;

  int FillInputPortInformation(int port, vtkInformation* info) override;
  int FillOutputPortInformation(int port, vtkInformation* info) override;
  int RequestDataObject(vtkInformation*, vtkInformationVector**, vtkInformationVector*) override;
  int RequestData(vtkInformation*, vtkInformationVector**, vtkInformationVector*) override;

  /// Which input array to process selects each phew_adaptors::PointArray (density, mass,
  /// velocity, id): its index, or -1 when the filter has no such input. Each selection
  /// starts as none (ParaView's "None").
  void SetPointArrayIndices(const int indices[4]);

  /// The options of the properties: the box, periodic axes, threads, and the selected arrays.
  phew_adaptors::PointOptions MakePointOptions();

  /// Empties port 0 and every table port (after an error, and before a run).
  void ClearOutputs(vtkInformationVector* outputVector);

  ///@{
  /// Hooks of RequestData (filters that take particles only).
  /// The filter's name in messages ("Friends-of-Friends").
  virtual const char* GetParticleFilterLabel();
  /// Sets what the run writes (Outputs) and the subclass's own options (neighbours...).
  virtual void ConfigurePointOptions(phew_adaptors::PointOptions& options);
  /// Runs the core on the prepared particles; `labels` and adaptor.GroupIds() are where it
  /// writes. Returns an empty string, or the problem (the same on every rank). `result` is
  /// freed by the caller.
  virtual std::string RunParticles(phew_context& core, phew_input& input, phew_labels& labels,
    phew_adaptors::PointsInput& adaptor, phew_group_result& result);
  /// Fills the table ports from a successful run (default: nothing).
  virtual void FillTables(vtkInformationVector* outputVector, const phew_group_result& result);
  ///@}

  /// The group catalogue of a halo finder (phew_group_columns) into `table`.
  static void FillGroupTable(vtkTable* table, const phew_group_result& result);

  int NumberOfThreads = 0;
  bool BoxFromDataBounds = true;
  double BoxOrigin[3] = { 0.0, 0.0, 0.0 };
  double BoxSize[3] = { 1.0, 1.0, 1.0 };
  int PeriodicAxes[3] = { 0, 0, 0 };
  int PointArrayIndices[4] = { -1, -1, -1, -1 };

private:
  vtkPHEWParticleFilter(const vtkPHEWParticleFilter&) = delete;
  void operator=(const vtkPHEWParticleFilter&) = delete;
};

#endif
