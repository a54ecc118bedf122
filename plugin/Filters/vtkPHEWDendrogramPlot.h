/**
 * The dendrogram drawn as lines (phew_layout_dendrogram has the rules): leaves along x in an
 * order that keeps every structure's clumps side by side, y = log10 of the density; a node is
 * a vertical line from its top (a clump: its peak; a structure: where its children meet) down
 * to the saddle where it joins its parent, and a horizontal line at that saddle to its
 * parent's x. z = 0. Leaves are LeafSpacing apart along x (field data), chosen so that the
 * plot is as wide as it is tall; Log10DensityFloor (field data) is where densities <= 0 go.
 *
 * Point and cell data, per node: NodeId, ParentId (-1 for a root), ClumpId (a clump's own;
 * a structure's the ClumpId of its densest clump, so that a structure's trunk has the colour
 * of its main clump), LeafClumpId (a clump's own, -1 for a structure: what linked selection
 * matches), HaloId, Level, Mass, PeakDensity, SaddleDensity. ClumpId is the active scalars. Built
 * from the result on rank 0 (empty elsewhere, like the tables).
 */
#ifndef vtkPHEWDendrogramPlot_h
#define vtkPHEWDendrogramPlot_h

#include "phew/phew.h"

#include <string>

class vtkPolyData;

namespace phew_dendrogram_plot
{
/// Fill `plot`; returns an empty string or the layout's error message (then `plot` is empty).
std::string Build(const phew_clump_result& result, vtkPolyData* plot);
}

#endif
