/**
 * Auto-start of the PHEW plugin in the ParaView GUI: owns pqPHEWDisplayBehavior (the first
 * picture), pqPHEWSelectionLinks (linked selection), pqPHEWColumnOrder (catalogue column
 * order in spreadsheets) and pqPHEWMergerTreeBehavior (the merger tree's drawing and chart).
 */
#ifndef pqPHEWAutoStart_h
#define pqPHEWAutoStart_h

#include <QObject>
#include <QPointer>

class pqPHEWColumnOrder;
class pqPHEWDisplayBehavior;
class pqPHEWMergerTreeBehavior;
class pqPHEWSelectionLinks;

class pqPHEWAutoStart : public QObject
{
  Q_OBJECT
  typedef QObject Superclass;

public:
  pqPHEWAutoStart(QObject* parent = nullptr);
  ~pqPHEWAutoStart() override;

  void onStartup();
  void onShutdown();

private:
  QPointer<pqPHEWDisplayBehavior> Behavior;
  QPointer<pqPHEWSelectionLinks> Links;
  QPointer<pqPHEWColumnOrder> Columns;
  QPointer<pqPHEWMergerTreeBehavior> Trees;
};

#endif
