/**
 * The colour map of the haloes' colours (the HaloColour array of the PHEW filters' drawings,
 * phew_colour_haloes): the ten most massive haloes a colour each, named in the legend by rank
 * and mass, the others eight shared lighter colours ("smaller haloes"), what belongs to no
 * structure (-1) a faint grey. The legend's title says how many haloes there are. The masses
 * come from the source's halo table (Haloes, or the halo finders' Groups), fetched to the
 * client (it is small).
 */
#ifndef pqPHEWHaloColours_h
#define pqPHEWHaloColours_h

class pqPipelineSource;
class vtkSMProxy;

namespace phew_gui
{
/// The array the colours are in.
extern const char* const HALO_COLOUR;

/// Makes `lut` the haloes' colour map for `source`'s current result; returns the number of
/// haloes (0: no table yet, or no source, then the map has the colours without names).
int SetHaloColours(vtkSMProxy* lut, pqPipelineSource* source);

/// True when `lut` is categorical, as SetHaloColours makes it (not switched to a preset).
bool IsHaloColours(vtkSMProxy* lut);

/// The legend of that map in `view`: "N haloes" as its title, the names as annotations.
void LabelHaloLegend(vtkSMProxy* lut, vtkSMProxy* view, int haloes);
}

#endif
