/**
 * Catalogue column order in ParaView's spreadsheets.
 *
 * ParaView 5.11's spreadsheet sorts columns by name, which puts CenterOfMassX before ClumpId.
 * When a spreadsheet shows a table of a PHEW filter, this moves the header's sections back
 * into the catalogue's order (ClumpId, HaloId, ParentId, Level, ...: the core's column lists),
 * after ParaView's own columns such as Row ID; only the display order changes. Other sources
 * keep ParaView's order.
 */
#ifndef pqPHEWColumnOrder_h
#define pqPHEWColumnOrder_h

#include <QObject>
#include <QPointer>

class pqSpreadSheetView;
class pqView;

class pqPHEWColumnOrder : public QObject
{
  Q_OBJECT
  typedef QObject Superclass;

public:
  pqPHEWColumnOrder(QObject* parent = nullptr);
  ~pqPHEWColumnOrder() override;

  void startup();
  void shutdown();

private Q_SLOTS:
  void onViewAdded(pqView* view);

private:
  /// Reorders once the event loop is back (the model signals several times per update).
  void schedule(pqSpreadSheetView* view);
  void reorder(pqSpreadSheetView* view);
};

#endif
