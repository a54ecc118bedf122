/**
 * Auto-start of the PHEW plugin in the ParaView GUI: owns pqPHEWDisplayBehavior (the first
 * picture) and pqPHEWSelectionLinks (linked selection).
 */
#ifndef pqPHEWAutoStart_h
#define pqPHEWAutoStart_h

#include <QObject>
#include <QPointer>

class pqPHEWDisplayBehavior;
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
};

#endif
