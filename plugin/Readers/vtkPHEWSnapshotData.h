// What the readers read (libphew_readers' sets) as VTK data: the particles as a vtkPolyData
// (a vertex per particle), the AMR as a vtkOverlappingAMR, the metadata as field data. The
// arrays move into VTK without a copy where their layout allows (VTK frees them).
#ifndef vtkPHEWSnapshotData_h
#define vtkPHEWSnapshotData_h

#include "vtkSmartPointer.h"

#include "phew/phew_readers.h"

class vtkFieldData;
class vtkOverlappingAMR;
class vtkPolyData;

namespace phew_snapshot_data
{
/// The particles, their arrays taken from the set (left empty): points (float or double),
/// Velocities, Masses, ParticleIDs (64-bit) and the other fields by their names.
vtkSmartPointer<vtkPolyData> Particles(phew_particle_set& set);

/// The hierarchy (every box on every rank) with this rank's boxes' values as cell arrays
/// (named as the variables), blanked where a finer level covers it.
vtkSmartPointer<vtkOverlappingAMR> AMR(phew_amr_set& set);

/// The metadata (see vtkPHEWSnapshotReader.h) into field data.
void AddMetadata(vtkFieldData* fields, const phew_snapshot_info& info);
}

#endif
