/**
 * @class vtkPHEWRAMSESReader
 * @brief "RAMSES Output Reader": a RAMSES output (its folder output_NNNNN or its
 * info_NNNNN.txt), the AMR and the particles.
 *
 * Output 0: the AMR as a vtkOverlappingAMR, every level from levelmin (level 0) to the
 * finest, RAMSES's octs covered by boxes, the hydro variables as cell arrays named as
 * hydro_file_descriptor.txt says (density, velocity_x, ...; none without hydro files), in
 * code units, refined cells blanked. Output 1: the particles of one family (Family, default
 * DM) as a vtkPolyData with a vertex per particle and the point arrays Velocities, Masses,
 * ParticleIDs and the other fields of the particle files (levelp, family, tag, ...). Both
 * carry the output's metadata as field data (vtkPHEWSnapshotReader). Each rank reads the CPU
 * files of its share (libphew_readers, readers/).
 */
#ifndef vtkPHEWRAMSESReader_h
#define vtkPHEWRAMSESReader_h

#include "PHEWReadersModule.h" // for export macro
#include "vtkPHEWSnapshotReader.h"

class PHEWREADERS_EXPORT vtkPHEWRAMSESReader : public vtkPHEWSnapshotReader
{
public:
  static vtkPHEWRAMSESReader* New();
  vtkTypeMacro(vtkPHEWRAMSESReader, vtkPHEWSnapshotReader);
  void PrintSelf(ostream& os, vtkIndent indent) override;

  ///@{
  /// The particle family: DM (default), star, cloud, debris, other, undefined, gas_tracer,
  /// DM_tracer, ... or a number.
  vtkSetStringMacro(Family);
  vtkGetStringMacro(Family);
  ///@}

  ///@{
  /// Read the AMR (output 0) and the particles (output 1); both on by default.
  vtkSetMacro(ReadAMR, int);
  vtkGetMacro(ReadAMR, int);
  vtkSetMacro(ReadParticles, int);
  vtkGetMacro(ReadParticles, int);
  ///@}

  /// 1 if name is a RAMSES output's folder or info file (for File > Open).
  int CanReadFile(const char* name);

protected:
  vtkPHEWRAMSESReader();
  ~vtkPHEWRAMSESReader() override;
  int FillOutputPortInformation(int port, vtkInformation* info) override;
  int RequestData(vtkInformation*, vtkInformationVector**, vtkInformationVector*) override;

  char* Family = nullptr;
  int ReadAMR = 1;
  int ReadParticles = 1;

private:
  vtkPHEWRAMSESReader(const vtkPHEWRAMSESReader&) = delete;
  void operator=(const vtkPHEWRAMSESReader&) = delete;
};

#endif
