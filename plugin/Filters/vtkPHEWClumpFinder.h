/**
 * @class vtkPHEWClumpFinder
 * @brief PHEW structure finding (peak patches, clumps, haloes, dendrogram) on a density field.
 *
 * Wraps libphew (core/include/phew/phew.h). Inputs:
 *  - vtkImageData with a scalar density array (point or cell data, any numeric type; float
 *    and double are passed to the core without a copy). Each cell of the image is one grid
 *    cell for cell data; each point is one grid cell for point data. Cell ids are global,
 *    ix + nx*(iy + ny*iz) over the whole extent, so they match the command-line tool `phew`.
 *  - vtkOverlappingAMR (refinement ratio 2, 3-D blocks) with a scalar cell density. Leaf
 *    cells are the cells not covered by a finer block; covered cells get the label -1. Ids
 *    are the core's AMR ids (phew_amr): offset(level) + ix + nx_l*(iy + ny_l*iz) with level-0
 *    index 0 at the corner of the domain (the bounding box of the level-0 blocks).
 *  - particles: a vtkPointSet (vtkPolyData, vtkUnstructuredGrid...) or a composite dataset
 *    (vtkMultiBlockDataSet, vtkPartitionedDataSet, vtkPartitionedDataSetCollection) whose
 *    blocks are point sets. Each point is a particle; PHEW runs on the symmetrised graph of
 *    the NumberOfNeighbours nearest neighbours, with a density estimated by the core (SPH,
 *    NumberOfDensityNeighbours, optional Mass array) or read from the Density array
 *    (EstimateDensity off). Optional Velocity and Id arrays; a box (the data bounds by
 *    default) and periodic axes. Ids: the Id array, or the index in the global order (rank 0's
 *    points first; in a composite, blocks in order, then points in order).
 * With AMR, an optional second input "Particles" (a point set or a composite of point sets
 * with the point arrays Velocities, and Masses and ParticleIDs when present, as the RAMSES
 * Output Reader's second output gives them): RAMSES's way of giving the particles the clumps
 * found on the grid. Each particle takes the ClumpId and HaloId of the leaf cell that holds it
 * (phew_amr_point_labels; -1 outside the domain), then, with Halo Properties, is unbound in
 * the clumps' hierarchy with the clumps' peaks as the spherical method's centres
 * (phew_structure_physics), as `phew --amr-particles` does; the units and cosmology come from
 * the particles' snapshot metadata (vtkPHEWPhysics.h). Particles with an image or particle
 * input are an error (vtkPHEWAMRParticles.h has the rules).
 *
 * One filter handles all three: input adaptors (vtkPHEWImageInput, vtkPHEWAMRInput,
 * vtkPHEWPointsInput) turn the input into the core's view, and the driver of vtkPHEWAlgorithm
 * runs the core (RunCore: the parameters, progress, Abort) and fills the tables. The whole AMR
 * or composite arrives in one RequestData call (the input port accepts any data object, so the
 * pipeline never runs the filter block by block).
 *
 * Output ports:
 *   0 "Labels"      shallow copy of the input plus PeakPatchId, ClumpId, HaloId (vtkIdTypeArray,
 *                   same association as the density; on AMR, cell arrays on every block the
 *                   rank holds; on particles, point arrays on every point set, plus the point
 *                   array Density (double), the density PHEW used)
 *   1 "Clumps"      vtkTable, the clump catalogue (columns of phew_clump_columns())
 *   2 "Dendrogram"  vtkTable, one row per dendrogram node (phew_node_columns())
 *   3 "Haloes"      vtkTable, the halo catalogue (phew_halo_columns())
 *   4 "Clump Geometry"  vtkPolyData, what the 3D view draws: the outer faces of the clump
 *                   cells (images, AMR) or the clump particles (vtkPHEWClumpGeometry.h)
 *   5 "Dendrogram Plot" vtkPolyData, the dendrogram drawn as lines (vtkPHEWDendrogramPlot.h)
 *   6 "Markers"     vtkMultiBlockDataSet, clump peaks and halo centres as vertices with the
 *                   catalogue columns; at the structures' centres with GlyphRadius = R200c
 *                   when the halo properties ran (vtkPHEWMarkers.h)
 *   7 "Particles"   the Particles input (shallow copy, its type) plus the point arrays
 *                   ClumpId, HaloId and, with the halo properties, BoundClumpId and
 *                   SpecificEnergy; empty without that input. The physics columns then join
 *                   the Clumps table, and the Markers sit at the physics centres.
 *
 * In parallel (pvbatch or pvserver under mpiexec) each rank gets a piece of the image. The
 * pieces may carry ghost cells and, for point data, share their boundary planes; the filter
 * finds the cells each rank owns so that the ranks tile the whole extent exactly once, fills
 * one ghost layer from the neighbours (phew_exchange_ghosts) and runs the core over the
 * controller's MPI communicator. Labels are the same as in a serial run, for every cell or
 * point of the piece: cells it does not own (ghosts, shared planes, a piece duplicated on
 * several ranks) get the labels of their owners. The three tables are complete on rank 0 and
 * empty (columns, no rows) on the other ranks. Any image the filter accepts on one rank works
 * on any number of ranks: flat axes, fewer cells than ranks; a piece without cells (empty,
 * or one point thick across cell data) gives an empty Labels piece.
 *
 * With AMR each rank holds some blocks (the others are null on it); every rank passes the
 * whole block list with an owner per block, and a block held by several ranks gets its labels
 * on all of them (vtkPHEWAMRInput.h has the rules).
 *
 * On any error (missing or multi-component density, point data on AMR, refinement ratio other
 * than 2, NaN/negative data, bad parameters, no points, a block that is not a point set,
 * pieces that do not tile the image, failure in the core; Particles connected to an image or
 * particle input, particles without points, without Velocities for the halo properties, or
 * all outside the AMR's domain) the filter reports a vtkErrorMacro message on every rank and
 * leaves every output empty; the input is never modified. A problem seen by one rank only
 * stops all ranks with that rank's message (no deadlock).
 */
#ifndef vtkPHEWClumpFinder_h
#define vtkPHEWClumpFinder_h

#include "PHEWFiltersModule.h" // for export macro
#include "vtkPHEWAlgorithm.h"

class vtkOverlappingAMR;
struct phew_clump_result;
namespace phew_adaptors
{
class AMRParticlesInput;
}

class PHEWFILTERS_EXPORT vtkPHEWClumpFinder : public vtkPHEWAlgorithm
{
public:
  static vtkPHEWClumpFinder* New();
  vtkTypeMacro(vtkPHEWClumpFinder, vtkPHEWAlgorithm);
  void PrintSelf(ostream& os, vtkIndent indent) override;

  enum OutputPorts
  {
    LABELS_PORT = 0,
    CLUMPS_PORT = 1,
    DENDROGRAM_PORT = 2,
    HALOES_PORT = 3,
    CLUMP_GEOMETRY_PORT = 4,
    DENDROGRAM_PLOT_PORT = 5,
    MARKERS_PORT = 6,
    PARTICLES_PORT = 7,
    NUMBER_OF_PORTS = 8
  };

  ///@{
  /// Test cells are the cells with density strictly above this threshold (>= 0).
  vtkSetMacro(DensityThreshold, double);
  vtkGetMacro(DensityThreshold, double);
  ///@}

  ///@{
  /// Peaks whose peak density / key saddle density is below this are noise. Negative (the
  /// default, -1): automatic, 2, or 3 on the estimated densities of a periodic cosmological
  /// snapshot (the PHEW paper's halo parameters, with density threshold 80 and saddle threshold
  /// 200 times the mean density where those are automatic too).
  vtkSetMacro(RelevanceThreshold, double);
  vtkGetMacro(RelevanceThreshold, double);
  ///@}

  ///@{
  /// Merge clumps into haloes across saddles denser than SaddleThreshold (default off).
  vtkSetMacro(SaddleMerging, bool);
  vtkGetMacro(SaddleMerging, bool);
  vtkBooleanMacro(SaddleMerging, bool);
  vtkSetMacro(SaddleThreshold, double);
  vtkGetMacro(SaddleThreshold, double);
  ///@}

  ///@{
  /// The Dendrogram Plot's layout: 0 by mass (the default: haloes side by side in decreasing
  /// mass, each node as wide as its mass, nodes lighter than DendrogramMassCut collapsed into
  /// their parent), 1 even (leaves one apart, by peak density). DendrogramMassCut < 0 (the
  /// default, -1): a thousandth of the haloes' total mass.
  vtkSetClampMacro(DendrogramLayout, int, 0, 1);
  vtkGetMacro(DendrogramLayout, int);
  vtkSetMacro(DendrogramMassCut, double);
  vtkGetMacro(DendrogramMassCut, double);
  ///@}

  ///@{
  /// Clumps and haloes with mass <= MassThreshold are left out of the catalogues (default 0).
  vtkSetMacro(MassThreshold, double);
  vtkGetMacro(MassThreshold, double);
  ///@}

  ///@{
  /// Treat the grid or AMR as periodic along all three axes: 1 on, 0 off, -1 (the default)
  /// as the snapshot says (on for data of this plugin's readers whose box is periodic along
  /// all three axes, field data Periodic; else off). Particles have their own periodic axes
  /// (PeriodicAxes); this does not apply to them.
  vtkSetClampMacro(Periodic, int, -1, 1);
  vtkGetMacro(Periodic, int);
  vtkBooleanMacro(Periodic, int);
  ///@}

  /// Particles only (point sets): the parameters below, and the box, periodic axes and
  /// threads of vtkPHEWAlgorithm.
  ///@{
  /// Estimate the density from the particles (default on); off: the Density array is used.
  vtkSetMacro(EstimateDensity, bool);
  vtkGetMacro(EstimateDensity, bool);
  vtkBooleanMacro(EstimateDensity, bool);
  ///@}

  ///@{
  /// Nearest other particles linked to each particle in PHEW's graph (default 16).
  vtkSetMacro(NumberOfNeighbours, int);
  vtkGetMacro(NumberOfNeighbours, int);
  ///@}

  ///@{
  /// Particles in the SPH density estimate, the particle itself counted (default 64).
  vtkSetMacro(NumberOfDensityNeighbours, int);
  vtkGetMacro(NumberOfDensityNeighbours, int);
  ///@}

protected:
  vtkPHEWClumpFinder();
  ~vtkPHEWClumpFinder() override;

  // The input port (any data object), the ports' types (0: the input's, 1-3: tables) and
  // the driver are vtkPHEWAlgorithm's; ports 4-6 are drawings, port 7 the particles' type.
  // Input port 1 (Particles) is optional.
  int FillInputPortInformation(int port, vtkInformation* info) override;
  int FillOutputPortInformation(int port, vtkInformation* info) override;
  int RequestDataObject(vtkInformation*, vtkInformationVector**, vtkInformationVector*) override;

  const char* GetFilterLabel() override { return "PHEW Clump Finder"; }
  /// Images (vtkPHEWImageInput), AMR (vtkPHEWAMRInput; with particles vtkPHEWAMRParticles)
  /// and particles (vtkPHEWPointsInput).
  std::unique_ptr<phew_adaptors::InputAdaptor> MakeAdaptor(
    vtkDataObject* input, std::string& problem) override;
  void ConfigureContext(phew_adaptors::Context& context) override;
  void ConfigurePointOptions(phew_adaptors::PointOptions& options) override;
  /// phew_find_clumps with this filter's parameters.
  int RunCore(phew_context& core, phew_input& input, phew_labels& labels,
    phew_adaptors::InputAdaptor& adaptor) override;
  std::string DescribeFailure(
    const phew_adaptors::Context& context, int status, const char* message) override;
  /// The three tables, the run's figures, the dendrogram plot, the clump geometry and markers.
  std::string FillOutputs(phew_adaptors::Context& context, vtkDataObject* labelled,
    vtkInformationVector* outputVector) override;
  void DescribeParameters(std::vector<std::string>& entries) override;
  void ReleaseResult() override;
  /// The relevance threshold of the run: the property, or when negative (automatic) the core's
  /// default, or the paper's with PaperDefaults.
  double RelevanceUsed() const;
  /// The colour of every halo (vtkPHEWHaloColours.h), on every rank (collective), for the
  /// HaloColour arrays beside HaloId on the drawings and the particles.
  std::vector<int32_t> HaloColours(const phew_adaptors::Context& context);
  /// Labels emptied; the tables keep their columns (a spreadsheet showing one stays on its
  /// rows), without rows; the drawings emptied.
  void ClearOutputs(vtkInformationVector* outputVector) override;

  double DensityThreshold = -1.0; // negative: automatic (PHEW_THRESHOLD_AUTOMATIC)
  double RelevanceThreshold = -1.0;
  // this run: a periodic cosmological snapshot's particles with estimated densities take the
  // paper's thresholds where they are automatic (ConfigureContext)
  bool PaperDefaults = false;
  bool SaddleMerging = true;
  double SaddleThreshold = -1.0; // negative: automatic
  double MassThreshold = 0.0;
  int DendrogramLayout = 0;
  double DendrogramMassCut = -1.0;
  int Periodic = -1;
  bool EstimateDensity = true;
  int NumberOfNeighbours = 16;
  int NumberOfDensityNeighbours = 64;

  phew_clump_result* Result; // of the last run, until its outputs are made (owned)
  // The adaptor of an AMR run with particles (owned by the driver), until its outputs are made.
  phew_adaptors::AMRParticlesInput* AMRParticles = nullptr;
  bool ParticlesFailed = false; // the run failed on the Particles input (for the message)
  double Seconds = 0.0;         // the core's wall time on this rank

private:
  /// The physics of the clumps on particles labelled `clumps` (their parents, and their peaks
  /// as the spherical method's centres); `metadata`: the data giving the units. Collective.
  int RunClumpPhysics(phew_context& core, const phew_input& particles, const int64_t* clumps,
    int64_t* bound, double* energy, vtkDataObject* metadata);
  /// The AMR's adaptor, with the particles when Particles is connected.
  std::unique_ptr<phew_adaptors::InputAdaptor> MakeAMRAdaptor(vtkOverlappingAMR* amr);

  vtkPHEWClumpFinder(const vtkPHEWClumpFinder&) = delete;
  void operator=(const vtkPHEWClumpFinder&) = delete;
};

#endif
