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
 * vertex) and MainLink (1: the line goes to its progenitor's main descendant). Field data:
 * ColumnSpacing. FinalHaloId is the active scalars.
 *
 * Mass History (table): one row per step along the main branch (main progenitors) of one
 * structure of the last step, oldest first: Step, Time, StructureId, Mass,
 * NumberOfProgenitors, FinalHaloId. Empty while the branch has a single step: a line chart
 * cannot draw one point (ParaView's reports an error for each series).
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

/// Fills `drawing` and `massHistory` (the main branch of the last step's structure
/// `finalHalo`; -1: the most massive). Returns "" or the problem; a failed layout leaves both
/// empty, an unknown `finalHalo` leaves the mass history empty.
std::string Build(
  const Steps& steps, int64_t finalHalo, vtkPolyData* drawing, vtkTable* massHistory);
}

#endif
