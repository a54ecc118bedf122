// Private helper of vtkPHEWClumpFinder: the input adaptor for AMR with particles (the optional
// second input, "Particles"), RAMSES's way of giving the particles the clumps found on the
// grid. Prepare prepares the AMR (AMRInput) and then the particles (PointsInput, with the
// arrays the snapshot readers name: Velocities, and Masses and ParticleIDs when present);
// after the clump finder, LabelParticles gives each particle the ClumpId and HaloId of the
// leaf cell that holds it (phew_amr_point_labels); the filter then runs the physics of
// structures on them (BoundClumpId, SpecificEnergy) and FinishParticles writes the particles
// output. A particle in no cell (outside a non-periodic domain) gets the labels -1: a warning
// when some are, an error when all are (the AMR and the particles in other units?).
#ifndef vtkPHEWAMRParticles_h
#define vtkPHEWAMRParticles_h

#include "vtkPHEWAMRInput.h"
#include "vtkPHEWPointsInput.h"

#include <memory>
#include <string>

class vtkDataObject;
class vtkOverlappingAMR;

namespace phew_adaptors
{
class AMRParticlesInput : public InputAdaptor
{
public:
  /// `options`: the filter's box and thread properties (its arrays and labels are set here);
  /// `physics`: the physics runs on the particles (velocities needed, BoundClumpId and
  /// SpecificEnergy written).
  AMRParticlesInput(
    vtkOverlappingAMR* amr, vtkDataObject* particles, const PointOptions& options, bool physics);
  ~AMRParticlesInput() override;

  /// The AMR's Prepare, then the particles' (problems prefixed "the Particles input: ").
  std::string Prepare(Context& context, phew_input& input, phew_labels& labels) override;
  /// The AMR's labels on port 0.
  std::string Finish(Context& context, vtkDataObject* output) override;

  /// Collective, after phew_find_clumps on `amr` with `cells`: ClumpId and HaloId of every
  /// particle. Returns the core's status (core.message says why it failed).
  int LabelParticles(phew_context& core, const phew_input& amr, const phew_labels& cells);
  /// The particles as the core reads them (after Prepare), and their label arrays.
  const phew_input& Particles() const { return this->ParticleInput; }
  /// After Prepare: whether the physics runs (asked for, and agreed by every rank).
  bool WithPhysics() const { return this->Physics; }
  int64_t* ClumpIds() { return this->Points->LabelArray(0); }
  int64_t* BoundIds() { return this->Points->LabelArray(2); }
  double* Energies() { return this->Points->EnergyArray(); }
  /// The particles output: a shallow copy of the particles with the label arrays.
  std::string FinishParticles(Context& context, vtkDataObject* output);

private:
  std::string PrepareParticles(Context& context, const phew_amr& amr);
  std::string CheckParticles(Context& context);
  PointOptions ParticleOptions(Context& context);
  std::string CheckDomain(Context& context, const phew_amr& amr);

  AMRInput AMR;
  vtkDataObject* ParticleData;
  PointOptions Options;
  bool Physics;
  std::unique_ptr<PointsInput> Points;
  phew_input ParticleInput;
};
} // namespace phew_adaptors

#endif
