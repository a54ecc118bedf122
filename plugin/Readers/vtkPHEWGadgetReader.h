/**
 * @class vtkPHEWGadgetReader
 * @brief "Gadget HDF5 Snapshot Reader": one particle type of a GADGET-2/3/4, AREPO or SWIFT
 * HDF5 snapshot (snap_NNN.hdf5, or file 0 of a snapshot split over files) as a point set.
 *
 * Output: a vtkPolyData with a vertex per particle, the point arrays Velocities, Masses (from
 * the mass table when the file has no Masses), ParticleIDs (64-bit) and, with AllFields, the
 * type's other datasets under their names; the snapshot's metadata as field data
 * (vtkPHEWSnapshotReader). Each rank reads a contiguous range of the particles, as hyperslabs
 * of the files it spans (libphew_readers, readers/).
 */
#ifndef vtkPHEWGadgetReader_h
#define vtkPHEWGadgetReader_h

#include "PHEWReadersModule.h" // for export macro
#include "vtkPHEWSnapshotReader.h"

class PHEWREADERS_EXPORT vtkPHEWGadgetReader : public vtkPHEWSnapshotReader
{
public:
  static vtkPHEWGadgetReader* New();
  vtkTypeMacro(vtkPHEWGadgetReader, vtkPHEWSnapshotReader);
  void PrintSelf(ostream& os, vtkIndent indent) override;

  ///@{
  /// PartTypeN (default 1, the dark matter).
  vtkSetClampMacro(ParticleType, int, 0, 15);
  vtkGetMacro(ParticleType, int);
  ///@}

  ///@{
  /// Also read the type's other per-particle datasets (default on).
  vtkSetMacro(AllFields, int);
  vtkGetMacro(AllFields, int);
  vtkBooleanMacro(AllFields, int);
  ///@}

  /// 1 if the file is an HDF5 snapshot of the GADGET family (for File > Open).
  int CanReadFile(const char* name);

protected:
  vtkPHEWGadgetReader();
  ~vtkPHEWGadgetReader() override = default;
  int FillOutputPortInformation(int port, vtkInformation* info) override;
  int RequestData(vtkInformation*, vtkInformationVector**, vtkInformationVector*) override;

  int ParticleType = 1;
  int AllFields = 1;

private:
  vtkPHEWGadgetReader(const vtkPHEWGadgetReader&) = delete;
  void operator=(const vtkPHEWGadgetReader&) = delete;
};

#endif
