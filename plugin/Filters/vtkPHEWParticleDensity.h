/**
 * @class vtkPHEWParticleDensity
 * @brief The SPH density of particles, as PHEW estimates it (phew_estimate_density).
 *
 * Input: a vtkPointSet (vtkPolyData, vtkUnstructuredGrid...) or a composite dataset whose
 * blocks are point sets; each point is a particle (vtkPHEWPointsInput.h has the rules: order,
 * ghost points, types, the box). Output: a shallow copy of the input (same type) plus the
 * point array "Density" (double) on every point set: the density of HOP (Eisenstein & Hut
 * 1998) as the core computes it, h_i = half the distance to the NumberOfDensityNeighbours-th
 * nearest particle (the particle itself counted), rho_i = sum_j m_j [W(r_ij, h_i) +
 * W(r_ij, h_j)] / 2 with the M4 kernel, in units of the total mass over the box volume. It is
 * the Density array the PHEW Clump Finder writes when it estimates the density with the same
 * parameters. Masses come from the optional Mass array (input array 0; every particle has mass
 * 1 without it). The box is the bounds of the points (default) or BoxOrigin and BoxSize, with
 * optional periodic axes.
 *
 * In parallel (pvbatch or pvserver under mpiexec) each process passes its points; the result
 * is the same, bit for bit, for any number of processes. A problem seen by any process stops
 * all of them with one message and an empty output.
 */
#ifndef vtkPHEWParticleDensity_h
#define vtkPHEWParticleDensity_h

#include "PHEWFiltersModule.h" // for export macro
#include "vtkPHEWAlgorithm.h"

class PHEWFILTERS_EXPORT vtkPHEWParticleDensity : public vtkPHEWAlgorithm
{
public:
  static vtkPHEWParticleDensity* New();
  vtkTypeMacro(vtkPHEWParticleDensity, vtkPHEWAlgorithm);
  void PrintSelf(ostream& os, vtkIndent indent) override;

  ///@{
  /// Particles in the SPH density estimate, the particle itself counted (default 64).
  vtkSetMacro(NumberOfDensityNeighbours, int);
  vtkGetMacro(NumberOfDensityNeighbours, int);
  ///@}

  // The box (densities are in units of the total mass over its volume), periodic axes and
  // threads: vtkPHEWAlgorithm.

protected:
  vtkPHEWParticleDensity();
  ~vtkPHEWParticleDensity() override = default;

  const char* GetFilterLabel() override { return "Particle Density"; }
  /// Density on the points.
  void ConfigurePointOptions(phew_adaptors::PointOptions& options) override;
  /// phew_estimate_density into the Density array.
  int RunCore(phew_context& core, phew_input& input, phew_labels& labels,
    phew_adaptors::InputAdaptor& adaptor) override;

  int NumberOfDensityNeighbours = 64;

private:
  vtkPHEWParticleDensity(const vtkPHEWParticleDensity&) = delete;
  void operator=(const vtkPHEWParticleDensity&) = delete;
};

#endif
