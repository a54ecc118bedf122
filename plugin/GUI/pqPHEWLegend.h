/**
 * Hiding a representation's legend (its colour map's scalar bar in its view) where the plugin
 * shows the colours without one: the dendrogram and the merger tree's drawing.
 */
#ifndef pqPHEWLegend_h
#define pqPHEWLegend_h

class pqDataRepresentation;

namespace phew_gui
{
/// Hides the legend of the representation's colour map in its view; false if it has none yet.
bool HideLegend(pqDataRepresentation* representation);

/// ParaView's Apply shows a legend for every new coloured representation, possibly after the
/// plugin's GUI part has styled it: hides it after each render of the view until it has been
/// hidden once.
void HideLegendOnceShown(pqDataRepresentation* representation);
}

#endif
