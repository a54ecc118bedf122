/**
 * The mass history follows the selection: selecting one structure anywhere sets the PHEW
 * Merger Tree's Structure and Structure Step, and its Mass History chart shows that
 * structure's branch.
 *
 * - A node or a line picked in the Tree Drawing (cells or points) names its structure and its
 *   step (the drawing's StructureId and Step arrays); a row of the Links or the History its
 *   descendant (DescendantId) and step.
 * - A selection on any output of the filter that feeds a Merger Tree (cells or particles in
 *   the 3D view, rows of its tables, lines of its dendrogram) names the structures it touches
 *   in the tree's label array (its Labels, e.g. GroupId or ClumpId) at the time shown; the
 *   step is the history's step at that time (read from the tree's Links, which its views
 *   updated: a selection runs nothing; a tree never applied is left alone).
 * One structure named: the tree follows it (nothing runs again, the history is kept); none or
 * several: the chart stays as it is. The values come from the server as data information (an
 * Extract Selection not shown in the pipeline), so this works on a remote server too.
 */
#ifndef pqPHEWMergerTreeSelection_h
#define pqPHEWMergerTreeSelection_h

class pqOutputPort;
class pqPipelineSource;

namespace phew_gui
{
/// The Merger Tree's Mass History follows `structure` of `step` (-1, -1: the most massive of
/// the last step): its properties set at once (no Apply), its views shown again.
void FollowInMassHistory(pqPipelineSource* tree, long structure, long step);

/// Points every Merger Tree the selection on `selected` concerns at the one structure it
/// names (nullptr, a cleared selection: nothing changes).
void FollowSelectionInMergerTrees(pqOutputPort* selected);
}

#endif
