/**
 * What the plugin's snapshot readers say about their data (field data Periodic and
 * Cosmological, vtkPHEWSnapshotData.h) and the defaults it brings: a periodic box is taken as
 * periodic, and PHEW on the estimated densities of a periodic cosmological box takes the halo
 * parameters of the PHEW paper (Bleuler et al. 2015, section 4), in units of the mean density.
 */
#ifndef vtkPHEWSnapshotDefaults_h
#define vtkPHEWSnapshotDefaults_h

class vtkDataObject;
namespace phew_adaptors
{
struct Context;
}

namespace phew_snapshot_defaults
{
/// The paper's halo parameters (times the mean density; relevance is a ratio).
constexpr double PAPER_DENSITY_THRESHOLD = 80.0;
constexpr double PAPER_RELEVANCE_THRESHOLD = 3.0;
constexpr double PAPER_SADDLE_THRESHOLD = 200.0;

struct Snapshot
{
  bool Periodic = false;     // periodic along all three axes
  bool Cosmological = false; // an expanding (comoving) box
};

/// What the field data of `data` (its first dataset, for a composite) says, agreed over the
/// ranks: a rank without the field data (no points) takes the others' word. Collective.
Snapshot Read(const phew_adaptors::Context& context, vtkDataObject* data);
}

#endif
