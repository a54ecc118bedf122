/**
 * The haloes' colours in the drawings (phew_colour_haloes: the ten most massive haloes a
 * colour each, the others eight shared colours that differ between neighbours): the integer
 * array HaloColour beside the ids of the drawn data, which the GUI and the in-situ pictures
 * map through the same palette (phew_colour_rgb). -1 where the id is -1 (no structure).
 */
#ifndef vtkPHEWHaloColours_h
#define vtkPHEWHaloColours_h

#include "phew/phew.h"

#include <cstdint>
#include <vector>

class vtkDataObject;
namespace phew_adaptors
{
struct Context;
}

namespace phew_halo_colours
{
/// The name of the array.
extern const char* const ARRAY;

/// The period of each axis of the run's input: the box length along periodic axes, else 0.
void Period(const phew_input& input, double period[3]);

/// Rank 0's catalogue as phew_colour_haloes takes it (empty on the other ranks).
struct Catalogue
{
  std::vector<double> Mass;
  std::vector<double> Centre; // x, y, z per structure
  void Add(double mass, const double centre[3]);
};

/// The colour of every structure of rank 0's catalogue, on every rank (collective). All -1 if
/// the colours cannot be computed.
std::vector<int32_t> Compute(
  const phew_adaptors::Context& context, const Catalogue& catalogue, const double period[3]);

/// Adds HaloColour to every dataset of `data` (a dataset or a composite of them) that has the
/// integer id array `ids` (point or cell data; HaloColour goes beside it): colours[id], or -1
/// for an id outside 0 .. colours.size()-1.
void AddArray(vtkDataObject* data, const char* ids, const std::vector<int32_t>& colours);

/// The halo finders' groups coloured by their masses and centres of mass: HaloColour beside
/// GroupId on `labelled` (collective).
void AddGroupColours(const phew_adaptors::Context& context, const phew_group_result& result,
  const double period[3], vtkDataObject* labelled);
}

#endif
