/**
 * The ParaView GUI's side of the PHEW Merger Tree: after Apply, the Tree Drawing and the Mass
 * History read at a glance.
 *
 * Started with the plugin in the GUI (pvbatch, pvpython and Catalyst never load it). The XML
 * hints open the Tree Drawing in a PHEW Merger Tree View and the Mass History in a Line Chart
 * View; this behaviour then styles them:
 * - Tree Drawing: coloured by HaloColour (cell data) with the haloes' colour map of the 3D view
 *   (pqPHEWHaloColours.h; one map for both): each final halo's tree has one colour, the ten
 *   most massive the colours of the ten most massive haloes in the 3D view (where both rank
 *   the haloes by the same masses), the others lighter shared colours, neighbours apart; what
 *   ends in no final halo faint grey; no legend; nodes as round points, thicker lines, a Step
 *   axis, a frame padded around the drawing;
 * - Mass History: Mass against Time, with markers, axis titles, a title naming the structure
 *   (and its final halo), the line in its final halo's colour. After every run (a new step,
 *   another Structure, set by hand or by a selection: pqPHEWMergerTreeSelection.h) the colours
 *   and the title follow.
 * Everything here is plain ParaView state the user can change afterwards.
 */
#ifndef pqPHEWMergerTreeBehavior_h
#define pqPHEWMergerTreeBehavior_h

#include <QObject>

class pqDataRepresentation;
class pqPipelineSource;
class pqRepresentation;

class pqPHEWMergerTreeBehavior : public QObject
{
  Q_OBJECT
  typedef QObject Superclass;

public:
  pqPHEWMergerTreeBehavior(QObject* parent = nullptr);
  ~pqPHEWMergerTreeBehavior() override;

  void startup();
  void shutdown();

private Q_SLOTS:
  void onRepresentationAdded(pqRepresentation* representation);
  void onSourceAdded(pqPipelineSource* source);
  void onDataUpdated(pqPipelineSource* source);

private:
  static void style(pqDataRepresentation* representation);
  static void follow(pqPipelineSource* source);
};

#endif
