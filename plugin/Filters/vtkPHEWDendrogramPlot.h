/**
 * The dendrogram drawn as lines, y = log10 of the density, z = 0; a node is a vertical line
 * from its top (a clump: its peak; a structure: where its children meet) down to the saddle
 * where it joins its parent, and a horizontal line at that saddle to its parent's x. Two
 * layouts along x:
 * - by mass (the default; phew_layout_dendrogram_by_mass has the rules): haloes side by side
 *   in decreasing mass, each node's share of x as wide as its mass, so that the massive
 *   structures take the room; nodes lighter than the mass cut are collapsed into their parent
 *   (not drawn); the ten most massive haloes carry their rank (1 to 10) above their tops, drawn
 *   with seven-segment strokes (lines of the same polydata, LeafClumpId -1). The plot is twice
 *   as wide as it is tall. Field data: MassScale (plot x per unit of mass), DendrogramMassCut.
 * - even (phew_layout_dendrogram): leaves one apart in depth-first order by peak density,
 *   spread so that the plot is as wide as it is tall. Field data: LeafSpacing.
 * Field data of both: Log10DensityFloor, where densities <= 0 go.
 *
 * Point and cell data, per line (its two points share its values): NodeId, ParentId (-1 for a
 * root), ClumpId (a clump's own; a structure's the ClumpId of its densest clump, so that a
 * structure's trunk has the colour of its main clump), LeafClumpId (a clump's own, -1 for a
 * structure and for labels: what linked selection matches), HaloId, Level, HaloRank (roots by
 * decreasing mass, 0 the most massive; -1 for other nodes and in the even layout), Mass,
 * PeakDensity, SaddleDensity. ClumpId is the active scalars. Built from the result on rank 0
 * (empty elsewhere, like the tables).
 */
#ifndef vtkPHEWDendrogramPlot_h
#define vtkPHEWDendrogramPlot_h

#include "phew/phew.h"

#include <string>

class vtkPolyData;

namespace phew_dendrogram_plot
{
struct Options
{
  bool ByMass = true;
  double MassCut = -1.0; // by mass: nodes lighter than this are not drawn; < 0: automatic
};

/// The automatic mass cut: a thousandth of the haloes' total mass.
double AutomaticMassCut(const phew_clump_result& result);

/// Fill `plot`; returns an empty string or the layout's error message (then `plot` is empty).
std::string Build(const phew_clump_result& result, const Options& options, vtkPolyData* plot);
}

#endif
