/**
 * The ParaView GUI's side of the PHEW Merger Tree: after Apply, the Tree Drawing and the Mass
 * History read at a glance.
 *
 * Started with the plugin in the GUI (pvbatch, pvpython and Catalyst never load it). The XML
 * hints open the Tree Drawing in a PHEW Merger Tree View and the Mass History in a Line Chart
 * View; this behaviour then styles them:
 * - Tree Drawing: coloured by FinalHaloId (cell data) with a categorical map, one colour per
 *   final halo (the twelve colours the 3D view gives structures 0, 1, ... when it colours by
 *   id, up to 20 haloes: then a final halo of GroupId or ClumpId c has the colour of c there;
 *   with more, the 3D view colours by halo and the colours of the largest agree only where
 *   the ids follow the masses, as FoF's and HOP's do), grey for -1 (no final halo), no legend;
 *   nodes as round points, thicker lines, a Step axis;
 * - Mass History: Mass against Time, with markers, axis titles and a title naming the final
 *   halo. After every run (a new step, another Final Halo) the colours and the title follow.
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
