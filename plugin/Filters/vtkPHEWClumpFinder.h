/**
 * @class vtkPHEWClumpFinder
 * @brief PHEW structure finding (peak patches, clumps, haloes, dendrogram) on a density field.
 *
 * Wraps libphew (core/include/phew/phew.h). Input: vtkImageData with a scalar density array
 * (point or cell data, any numeric type; float and double are passed to the core without a
 * copy). Each cell of the image is one grid cell for cell data; each point is one grid cell
 * for point data. Cell ids are global, ix + nx*(iy + ny*iz) over the whole extent, so they
 * match the command-line tool `phew`.
 *
 * Output ports:
 *   0 "Labels"      shallow copy of the input plus PeakPatchId, ClumpId, HaloId (vtkIdTypeArray,
 *                   same association as the density)
 *   1 "Clumps"      vtkTable, the clump catalogue (columns of phew_clump_columns())
 *   2 "Dendrogram"  vtkTable, one row per dendrogram node (phew_node_columns())
 *   3 "Haloes"      vtkTable, the halo catalogue (phew_halo_columns())
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
 * On any error (missing or multi-component density, NaN/negative data, bad parameters,
 * pieces that do not tile the image, failure in the core) the filter reports a vtkErrorMacro
 * message on every rank and leaves every output empty; the input is never modified. A
 * problem seen by one rank only stops all ranks with that rank's message (no deadlock).
 */
#ifndef vtkPHEWClumpFinder_h
#define vtkPHEWClumpFinder_h

#include "PHEWFiltersModule.h" // for export macro
#include "vtkDataObjectAlgorithm.h"

class vtkDataArray;
class vtkImageData;

class PHEWFILTERS_EXPORT vtkPHEWClumpFinder : public vtkDataObjectAlgorithm
{
public:
  static vtkPHEWClumpFinder* New();
  vtkTypeMacro(vtkPHEWClumpFinder, vtkDataObjectAlgorithm);
  void PrintSelf(ostream& os, vtkIndent indent) override;

  enum OutputPorts
  {
    LABELS_PORT = 0,
    CLUMPS_PORT = 1,
    DENDROGRAM_PORT = 2,
    HALOES_PORT = 3
  };

  ///@{
  /// Test cells are the cells with density strictly above this threshold (>= 0).
  vtkSetMacro(DensityThreshold, double);
  vtkGetMacro(DensityThreshold, double);
  ///@}

  ///@{
  /// Peaks whose peak density / key saddle density is below this are noise (default 2).
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
  /// Clumps and haloes with mass <= MassThreshold are left out of the catalogues (default 0).
  vtkSetMacro(MassThreshold, double);
  vtkGetMacro(MassThreshold, double);
  ///@}

  ///@{
  /// Treat the grid as periodic along all three axes (default off).
  vtkSetMacro(Periodic, bool);
  vtkGetMacro(Periodic, bool);
  vtkBooleanMacro(Periodic, bool);
  ///@}

protected:
  vtkPHEWClumpFinder();
  ~vtkPHEWClumpFinder() override = default;

  int FillInputPortInformation(int port, vtkInformation* info) override;
  int FillOutputPortInformation(int port, vtkInformation* info) override;
  int RequestDataObject(vtkInformation*, vtkInformationVector**, vtkInformationVector*) override;
  int RequestData(vtkInformation*, vtkInformationVector**, vtkInformationVector*) override;

  /// Runs the core on this rank's piece of an image; fills `output` and the three tables.
  /// Collective: every rank calls it. Returns false (on every rank) after reporting an
  /// error. New input types (AMR, point sets) get their own Run* method.
  bool RunOnImage(vtkImageData* input, vtkInformation* inInfo, vtkImageData* output,
    vtkInformationVector* outputVector);

  /// Address of the MPI_Comm the core should use, or nullptr for a single process.
  /// Returns false (after an error message, on every rank) when the controller is not MPI.
  bool GetCoreCommunicator(void** comm);

  double DensityThreshold = 0.0;
  double RelevanceThreshold = 2.0;
  bool SaddleMerging = false;
  double SaddleThreshold = 0.0;
  double MassThreshold = 0.0;
  bool Periodic = false;

private:
  vtkPHEWClumpFinder(const vtkPHEWClumpFinder&) = delete;
  void operator=(const vtkPHEWClumpFinder&) = delete;
};

#endif
