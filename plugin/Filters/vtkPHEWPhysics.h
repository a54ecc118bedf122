// Private helper of the PHEW filters on particles: the physics of structures (unbinding and halo
// properties, phew_structure_physics) after a finder, with the cosmology of the snapshot the
// points were read from, and its columns joined to the finder's table.
#ifndef vtkPHEWPhysics_h
#define vtkPHEWPhysics_h

#include "phew/phew.h"

#include <string>

class vtkDataObject;
class vtkTable;

namespace phew_physics
{
/// The properties of the filters (vtkPHEWAlgorithm).
struct Options
{
  bool Unbind = true;
  int Potential = PHEW_POTENTIAL_EXACT;
  double Softening = -1.0;            // negative: 1/50 of the mean interparticle spacing
  double GravitationalConstant = 1.0; // without a cosmology
};

/// The parameters of a run on `input`: a snapshot read in astronomers' units (field data Units
/// "astro", Cosmological 1) gives its cosmology and scale factor; other data take G.
phew_physics_params MakeParams(const Options& options, vtkDataObject* input);

/// Whether the physics can run on `input`: not on a snapshot read in code units (its G in those
/// units is not known; the command-line tool skips it too), yes on anything else.
bool UnitsKnown(vtkDataObject* input);

/// A grouping as a finder leaves it: n, parents and centres meaningful on rank 0 only (the
/// other ranks get them here); parents and centres may be null on every rank.
struct Grouping
{
  const int64_t* Labels = nullptr; // per particle passed
  int64_t Count = 0;
  bool HasParents = false;
  const int64_t* Parents = nullptr;
  bool HasCentres = false;
  const double* Centres = nullptr;
};

/// Collective: the physics on the grouping; bound and energy (per particle passed; may be null)
/// get the bound labels and the specific energies. Returns the core's status (core.message
/// says why it failed).
int Run(phew_context& core, const phew_input& in, const Grouping& grouping,
  const phew_physics_params& params, int64_t* bound, double* energy, phew_physics_result* result);

/// Rank 0: the physics columns appended to a table whose rows are the structures in id order
/// (columns it has already, and StructureId, are left out).
void AppendColumns(vtkTable* table, const phew_physics_result& result);
}

#endif
