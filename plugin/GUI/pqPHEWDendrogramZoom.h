/**
 * Selecting a halo anywhere zooms the dendrogram's view to it: after a selection reaches the
 * PHEW Clump Finder's Dendrogram Plot (directly or through the linked selection), the view
 * showing the plot frames the whole subtree of every halo the selection touches (the lines
 * whose HaloId lies between the lowest and highest HaloId selected), with a margin. The
 * subtree's bounds come from the server as data information (an Extract Selection, then a
 * Threshold on HaloId, neither shown in the pipeline), so it works on a remote server too. A
 * subtree is narrow and tall, and a render view zooms both axes alike: the plot is stretched
 * along x (its representation's Scale, which its data axes follow) until the subtree fills
 * the view's width as it fills its height. When the selection is cleared, the plot is whole
 * and unstretched again.
 */
#ifndef pqPHEWDendrogramZoom_h
#define pqPHEWDendrogramZoom_h

class pqDataRepresentation;
class pqPipelineSource;

namespace phew_gui
{
/// The frame of the plot's data axes a little wider than its lines (no line lies on it).
void PadDendrogramFrame(pqDataRepresentation* representation);

/// Frames the selected haloes' subtrees in every render view showing `finder`'s Dendrogram
/// Plot; without a selected halo, undoes an earlier zoom.
void ZoomDendrogramToSelection(pqPipelineSource* finder);
}

#endif
