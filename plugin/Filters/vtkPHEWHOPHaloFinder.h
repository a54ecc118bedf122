/**
 * @class vtkPHEWHOPHaloFinder
 * @brief HOP groups of particles (Eisenstein & Hut 1998; phew_find_hop_groups).
 *
 * Input: a vtkPointSet (vtkPolyData, vtkUnstructuredGrid...) or a composite dataset whose
 * blocks are point sets; each point is a particle (vtkPHEWPointsInput.h has the rules: order,
 * ghost points, types, the box). Every particle hops to the densest of its HopNeighbours
 * nearest particles (itself counted); chains of hops end at density maxima, and each maximum's
 * particles form a group. The groups are regrouped with three densities in units of the mean
 * density (total mass / box volume): particles below OuterThreshold (delta_outer) are in no
 * group; groups whose peak is at least PeakFactor * OuterThreshold are proper and join when
 * their boundary (the highest mean density of two of MergeNeighbours nearest particles, one
 * in each group) is at least SaddleFactor * OuterThreshold; other groups join the proper group
 * they reach along the strongest chain of boundaries, if its weakest link is at least
 * OuterThreshold. Groups with at least MinimumMembers particles are numbered in catalogue
 * order (decreasing number of particles, equal counts by the smallest particle id).
 *
 * The density: the SPH estimate over NumberOfDensityNeighbours particles (the Particle Density
 * filter's), in units of the mean density; or the point array selected as Density (input
 * array 3), compared with the thresholds as it is (so it should be in units of the mean
 * density too).
 *
 * Output port 0: a shallow copy of the input plus the point arrays GroupId (vtkIdType, -1: in
 * no group) and Density (double, the density HOP used). Output port 1: the group catalogue
 * (vtkTable; columns as the CLI's PREFIX-groups.csv: GroupId, NumberOfParticles, Mass,
 * CenterOfMassX/Y/Z, Radius, MinParticleId, with a Velocity array MeanVelocityX/Y/Z and
 * VelocityDispersion, then PeakId, PeakDensity, PeakX/Y/Z of each group's densest particle),
 * complete on the first process. Output port 2: the Markers (vtkPolyData), one vertex per
 * group with the Groups columns as point data (shared), at its peak (PeakX/Y/Z, the densest
 * particle: where HOP's chains of hops end, and the centre the physics' spherical potential
 * uses); with the halo properties at its physics centre (CenterX/Y/Z, where finite) with
 * GlyphRadius = R200c (0 where NaN), for sphere glyphs (vtkPHEWMarkers.h). Complete on the
 * first process, empty on the others.
 *
 * Optional point arrays: Mass (input array 0), Velocity (1, three components), Id (2, unique
 * global ids; without it the position in the global order), Density (3). In parallel (pvbatch
 * or pvserver under mpiexec) each process passes its points; the result is the same, bit for
 * bit, for any number of processes and threads. A problem seen by any process (a bad
 * parameter, fewer particles than neighbours...) stops all of them with one message and empty
 * outputs.
 */
#ifndef vtkPHEWHOPHaloFinder_h
#define vtkPHEWHOPHaloFinder_h

#include "PHEWFiltersModule.h" // for export macro
#include "vtkPHEWAlgorithm.h"

struct phew_group_result;

class PHEWFILTERS_EXPORT vtkPHEWHOPHaloFinder : public vtkPHEWAlgorithm
{
public:
  static vtkPHEWHOPHaloFinder* New();
  vtkTypeMacro(vtkPHEWHOPHaloFinder, vtkPHEWAlgorithm);
  void PrintSelf(ostream& os, vtkIndent indent) override;

  /// The output ports.
  enum
  {
    LABELS_PORT = 0,
    GROUPS_PORT = 1,
    MARKERS_PORT = 2,
    NUMBER_OF_PORTS = 3
  };

  ///@{
  /// delta_outer, in units of the mean density (default 160): particles below it are in no
  /// group. Must be positive.
  vtkSetMacro(OuterThreshold, double);
  vtkGetMacro(OuterThreshold, double);
  ///@}

  ///@{
  /// delta_saddle = SaddleFactor * OuterThreshold (default 2.5): proper groups whose boundary
  /// reaches it join.
  vtkSetMacro(SaddleFactor, double);
  vtkGetMacro(SaddleFactor, double);
  ///@}

  ///@{
  /// delta_peak = PeakFactor * OuterThreshold (default 3, at least 1): groups with a peak
  /// this dense are proper groups.
  vtkSetMacro(PeakFactor, double);
  vtkGetMacro(PeakFactor, double);
  ///@}

  ///@{
  /// Particles a particle hops among, itself counted (default 64).
  vtkSetMacro(HopNeighbours, int);
  vtkGetMacro(HopNeighbours, int);
  ///@}

  ///@{
  /// Nearest other particles that make the boundaries between groups (default 4).
  vtkSetMacro(MergeNeighbours, int);
  vtkGetMacro(MergeNeighbours, int);
  ///@}

  ///@{
  /// Particles in the SPH density estimate, the particle itself counted (default 64; not
  /// used with a Density array).
  vtkSetMacro(NumberOfDensityNeighbours, int);
  vtkGetMacro(NumberOfDensityNeighbours, int);
  ///@}

  ///@{
  /// Groups with fewer particles get GroupId -1 (default 10).
  vtkSetMacro(MinimumMembers, int);
  vtkGetMacro(MinimumMembers, int);
  ///@}

  // The box (the mean density is the total mass over its volume), periodic axes and
  // threads: vtkPHEWAlgorithm.

protected:
  vtkPHEWHOPHaloFinder();
  ~vtkPHEWHOPHaloFinder() override;

  const char* GetFilterLabel() override { return "HOP Halo Finder"; }
  /// GroupId and Density on the points; the density estimated unless one is selected.
  void ConfigurePointOptions(phew_adaptors::PointOptions& options) override;
  /// phew_find_hop_groups with this filter's parameters.
  int RunCore(phew_context& core, phew_input& input, phew_labels& labels,
    phew_adaptors::InputAdaptor& adaptor) override;
  /// The Groups table (port 1) and the Markers (port 2).
  std::string FillOutputs(phew_adaptors::Context& context, vtkDataObject* labelled,
    vtkInformationVector* outputVector) override;
  void DescribeParameters(std::vector<std::string>& entries) override;
  void ReleaseResult() override;

  /// The Markers port: a vtkPolyData.
  int FillOutputPortInformation(int port, vtkInformation* info) override;

  phew_group_result* Result; // of the last run, until its outputs are made (owned)

  double OuterThreshold = 160.0;
  double SaddleFactor = 2.5;
  double PeakFactor = 3.0;
  int HopNeighbours = 64;
  int MergeNeighbours = 4;
  int NumberOfDensityNeighbours = 64;
  int MinimumMembers = 10;

private:
  vtkPHEWHOPHaloFinder(const vtkPHEWHOPHaloFinder&) = delete;
  void operator=(const vtkPHEWHOPHaloFinder&) = delete;
};

#endif
