/**
 * Linked selection in the ParaView GUI: select structures on one output of a PHEW filter and
 * the same structures are selected on all its other outputs.
 *
 * Select rows of the Clumps table, lines of the Dendrogram Plot, Markers or cells of the
 * Clump Geometry (any selection tool, any output of a PHEW Clump Finder, Friends-of-Friends or
 * HOP Halo Finder), and the cells of those clumps light up in the 3D view, their rows in the
 * tables and their leaves in the dendrogram. A dendrogram node selects every clump below it;
 * a halo (a row of the Haloes table, a halo centre) selects all of its clumps. Each linked
 * output gets a selection made by vtkPHEWLinkedSelection (by value: ClumpId, HaloId or GroupId),
 * so Extract Selection on any of them extracts those structures. The links go when the
 * selection is cleared or moves elsewhere.
 */
#ifndef pqPHEWSelectionLinks_h
#define pqPHEWSelectionLinks_h

#include <QList>
#include <QObject>
#include <QPointer>

class pqOutputPort;

class pqPHEWSelectionLinks : public QObject
{
  Q_OBJECT
  typedef QObject Superclass;

public:
  pqPHEWSelectionLinks(QObject* parent = nullptr);
  ~pqPHEWSelectionLinks() override;

  void startup();
  void shutdown();

private Q_SLOTS:
  void connectToSelections();
  void onSelectionChanged(pqOutputPort* selected);
  void update();

private:
  /// Removes the selections this object made (not the user's on `keep`).
  void unlink(pqOutputPort* keep);

  /// Selects on every other output of `selected`'s filter what is selected on `selected`.
  void link(pqOutputPort* selected);

  QList<QPointer<pqOutputPort>> Linked;
  QPointer<pqOutputPort> Pending;
  bool Scheduled = false;
  bool Linking = false;
};

#endif
