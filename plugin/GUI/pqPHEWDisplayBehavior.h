/**
 * The ParaView GUI's side of PHEW: after Apply, make the first picture show the clumps.
 *
 * Started with the plugin in the GUI (pvbatch, pvpython and Catalyst never load it). For
 * every representation of a PHEW Clump Finder's Clump Geometry or Dendrogram Plot port, and
 * of the labelled particles of Friends-of-Friends and HOP: colour by ClumpId (GroupId) with
 * a categorical colour map (one colour per clump, cycling through 12; objects without a
 * clump, id -1, transparent; more than 14 clumps: a bar of one discrete colour per id),
 * particles as spheres, show the legend in the 3D view, draw the dendrogram with thicker
 * lines and its density axis, and give the 3D view most of the window. After every later
 * Apply the colour map gets one entry per clump again, unless the user has switched it to
 * another kind of map.
 * Everything here is plain ParaView state the user can change afterwards; nothing is
 * forced.
 */
#ifndef pqPHEWDisplayBehavior_h
#define pqPHEWDisplayBehavior_h

#include <QObject>
#include <QPointer>

class pqDataRepresentation;
class pqPipelineSource;
class pqRepresentation;

class pqPHEWDisplayBehavior : public QObject
{
  Q_OBJECT
  typedef QObject Superclass;

public:
  pqPHEWDisplayBehavior(QObject* parent = nullptr);
  ~pqPHEWDisplayBehavior() override;

  void startup();
  void shutdown();

private Q_SLOTS:
  void onRepresentationAdded(pqRepresentation* representation);
  void onSourceAdded(pqPipelineSource* source);
  void onDataUpdated(pqPipelineSource* source);

private:
  static void style(pqDataRepresentation* representation);
  static void updateCategories(pqPipelineSource* source);
};

#endif
