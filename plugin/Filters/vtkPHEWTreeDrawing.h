/**
 * The Merger Tree filter's drawing and mass history, from the links of every step of its
 * history (phew_layout_merger_tree has the rules).
 *
 * Tree Drawing (polydata): one vertex per structure per step at (column x ColumnSpacing, Step,
 * 0), time upward; one line per link between two structures, from the progenitor to the
 * descendant. The trees of the last step's structures stand side by side by decreasing mass,
 * each with its main branch straight and its progenitors to the right. Point data per node:
 * StructureId, Step, Time, Mass, Radius (a log-mass radius for glyphs, up to 0.4 columns),
 * FinalHaloId (the last step's structure its main descendants lead to, -1: none),
 * NumberOfProgenitors (2 or more: a merger) and MainBranch. Cell data (vertices, then lines):
 * FinalHaloId (a line to its progenitor's main descendant: the progenitor's; a line that takes
 * only part of a structure elsewhere: -1), HistoryRow (the line's row in the History, -1 for a
 * vertex) and MainLink (1: the line goes to its progenitor's main descendant), StructureId and
 * Step (a vertex's node; a line's progenitor: picking a cell names a structure). HaloColour
 * (points and cells, as FinalHaloId): the final halo's colour index, phew_colour_haloes of the
 * last step's structures by mass (without positions: neighbours in the drawing differ), so the
 * ten largest have the 3D view's colours of the ten largest haloes; -1: none. Field data:
 * ColumnSpacing. FinalHaloId is the active scalars.
 *
 * Mass History (table): one row per step along the branch of one structure, oldest first: its
 * main progenitors back to where it appeared, the structure, then its main descendants on to
 * the last step (or to where it vanished). Columns Step, Time, StructureId, Mass,
 * NumberOfProgenitors, FinalHaloId (the branch's last structure, if it reaches the last step,
 * else -1) and Chosen (1 on the structure's own row); field data Structure and StructureStep
 * (the structure, the -1s resolved) and HaloColour (its final halo's). Empty while the branch has a
 * single step: a line chart cannot draw one point (ParaView's reports an error for each series).
 *
 * Built on rank 0, where the links are (empty elsewhere, like the tables).
 */
#ifndef vtkPHEWTreeDrawing_h
#define vtkPHEWTreeDrawing_h

#include "phew/phew.h"

#include <cstdint>
#include <string>
#include <vector>

class vtkPolyData;
class vtkTable;

namespace phew_tree_plot
{
/// The links of step k are links[k] (that step's History rows, in order), made at times[k].
struct Steps
{
  const std::vector<std::vector<phew_link>>& Links;
  const std::vector<double>& Times;
};

/// A structure of the history: its step (-1: the last) and its id there (-1: the most
/// massive of that step).
struct Choice
{
  int64_t Step;
  int64_t Id;
};

/// Fills `drawing` and `massHistory` (the branch of `chosen`). Returns "" or the problem; a
/// failed layout leaves both empty, an unknown step or structure leaves the mass history empty.
std::string Build(const Steps& steps, Choice chosen, vtkPolyData* drawing, vtkTable* massHistory);
}

#endif
