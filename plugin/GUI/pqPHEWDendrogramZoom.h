/**
 * Selecting a halo anywhere zooms the dendrogram's view to it: after a selection reaches the
 * PHEW Clump Finder's Dendrogram Plot (directly or through the linked selection) and touches
 * one halo (a row, a clump, cells of it), the view showing the plot frames that halo's whole
 * subtree (its lines, HaloId), with a margin; a selection across several haloes leaves the
 * view as it is. The
 * subtree's bounds come from the server as data information (an Extract Selection, then a
 * Threshold on HaloId, neither shown in the pipeline), so it works on a remote server too. A
 * subtree is narrow and tall, and a render view zooms both axes alike: the plot is stretched
 * along x (its representation's Scale, which its data axes follow) until the subtree is twice
 * as wide as tall, at most 3 times (the rank numbers stretch with it). When the selection is
 * cleared, the plot is whole and unstretched again.
 */
#ifndef pqPHEWDendrogramZoom_h
#define pqPHEWDendrogramZoom_h

class pqDataRepresentation;
class pqPipelineSource;

namespace phew_gui
{
/// The frame of the plot's data axes a little wider than its lines (no line lies on it).
void PadDendrogramFrame(pqDataRepresentation* representation);

/// Frames the selected halo's subtree in every render view showing `finder`'s Dendrogram
/// Plot; without a selected halo, undoes an earlier zoom.
void ZoomDendrogramToSelection(pqPipelineSource* finder);
}

#endif
