/**
 * @class vtkPHEWSnapshotReader
 * @brief What the PHEW plugin's snapshot readers share: a list of snapshots as time steps,
 * the units, and each rank reading its share through libphew_readers.
 *
 * FileName takes one snapshot or several (AddFileName, repeatable): each is a time step, at
 * its scale factor for a cosmological run (its code time otherwise), in increasing order
 * whatever order they were given in. Under MPI (pvserver, mpiexec pvbatch) each rank reads
 * only its share of the files when the pipeline asks for one piece per rank, as it does; a
 * request for the whole data (one piece) reads everything on the rank asked. A failure (a
 * missing or damaged file, ...) gives one error message, the same on every rank (printed by
 * rank 0), and empty outputs.
 *
 * Every output carries the snapshot's metadata as field data: SnapshotPath, Code, Format,
 * Units, LengthUnit, MassUnit, VelocityUnit (strings), BoxOrigin, BoxSize (3 values), Periodic
 * (3 flags), Cosmological, ScaleFactor, Redshift, Time, HubbleParam, OmegaMatter,
 * OmegaLambda, OmegaBaryon; the PHEW filters take the box and its periodicity from it.
 */
#ifndef vtkPHEWSnapshotReader_h
#define vtkPHEWSnapshotReader_h

#include "PHEWReadersModule.h" // for export macro
#include "vtkDataObjectAlgorithm.h"

#include <string> // for the file names
#include <vector> // for the file names

class PHEWREADERS_EXPORT vtkPHEWSnapshotReader : public vtkDataObjectAlgorithm
{
public:
  vtkTypeMacro(vtkPHEWSnapshotReader, vtkDataObjectAlgorithm);
  void PrintSelf(ostream& os, vtkIndent indent) override;

  ///@{
  /// The snapshots: a RAMSES output folder or its info_NNNNN.txt, an HDF5 snapshot file.
  void AddFileName(const char* name);
  void RemoveAllFileNames();
  void SetFileName(const char* name);
  int GetNumberOfFileNames() const { return static_cast<int>(this->FileNames.size()); }
  const char* GetFileName(int i) const;
  ///@}

  ///@{
  /// 0: the snapshot's code units (default); 1: comoving Mpc/h, Msun/h and peculiar km/s
  /// (cosmological snapshots only).
  vtkSetClampMacro(Units, int, 0, 1);
  vtkGetMacro(Units, int);
  ///@}

protected:
  vtkPHEWSnapshotReader();
  ~vtkPHEWSnapshotReader() override;

  int RequestInformation(vtkInformation*, vtkInformationVector**, vtkInformationVector*) override;

  /// The snapshot of the time step the request asks for ("" when there is none), and how to
  /// read it: the communicator's address in *comm (nullptr: this rank reads alone), or
  /// false when this rank is to read nothing (a request for one piece, on another rank).
  bool ChooseSnapshot(
    vtkInformation* request, vtkInformationVector* outputs, std::string& path, void** comm);
  /// The library's context (over comm, from ChooseSnapshot) and read options (the format and
  /// the Units property) of a read, for the subclasses to complete.
  void StartRead(
    void* comm, int format, struct phew_context& context, struct phew_read_options& options);
  /// One message per failure: rank 0 prints it (every rank has the same).
  void ReportFailure(const std::string& message);
  /// The time of the snapshot being read, stamped on the outputs.
  double ChosenTime = 0.0;

  std::vector<std::string> FileNames;
  std::string
    InformationProblem; /* why RequestInformation found no snapshot, said by RequestData */
  std::vector<std::string> SortedFiles; /* by time (RequestInformation) */
  std::vector<double> Times;
  int Units = 0;

private:
  vtkPHEWSnapshotReader(const vtkPHEWSnapshotReader&) = delete;
  void operator=(const vtkPHEWSnapshotReader&) = delete;
  void* MPIComm = nullptr; // the address of the controller's MPI_Comm, nullptr when serial
  int Rank = 0, NumberOfRanks = 1;
};

#endif
