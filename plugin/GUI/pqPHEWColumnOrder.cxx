#include "pqPHEWColumnOrder.h"
#include "pqPHEWFilters.h"

#include "pqApplicationCore.h"
#include "pqDataRepresentation.h"
#include "pqPipelineSource.h"
#include "pqServerManagerModel.h"
#include "pqSpreadSheetView.h"
#include "pqSpreadSheetViewModel.h"

#include "vtkDataObject.h"

#include "vtkSMProxy.h"

#include "phew/phew.h"

#include <QAbstractItemModel>
#include <QHeaderView>
#include <QStringList>
#include <QTableView>
#include <QTimer>

#include <vector>

namespace
{
QStringList Names(const phew_column* columns, int count)
{
  QStringList names;
  for (int i = 0; i < count; ++i)
  {
    names << columns[i].name;
  }
  return names;
}

// The names of one of the core's lists (phew_clump_columns and the like) with these optional
// columns.
QStringList Names(const phew_column* (*list)(int, int*), int columns)
{
  int count = 0;
  const phew_column* first = list(columns, &count);
  return Names(first, count);
}

// Every table a PHEW filter writes, in its output order: the core's lists (both member
// counts, every optional column) and the merger tree's, which starts with the steps. Made
// once: the header changes on every update of a spreadsheet.
std::vector<QStringList> MakeCatalogueOrders()
{
  std::vector<QStringList> orders;
  for (int columns : { 0, PHEW_COLUMNS_PARTICLES | PHEW_COLUMNS_VELOCITY })
  {
    orders.push_back(Names(phew_clump_columns, columns));
    orders.push_back(Names(phew_halo_columns, columns));
    orders.push_back(Names(phew_node_columns, columns));
  }
  orders.push_back(Names(phew_group_columns, PHEW_COLUMNS_VELOCITY | PHEW_COLUMNS_PEAK));
  int count = 0;
  const phew_column* link = phew_link_columns(&count);
  orders.push_back(QStringList{ "Step", "Time", "PreviousTime" } + Names(link, count));
  return orders;
}

// The logical sections of the header, in the order to show them: ParaView's own columns
// (Row ID and the like) as they are, then the catalogue's columns in the order of the list
// that holds most of them, then any others. Identity when no list matches.
std::vector<int> Order(QAbstractItemModel* model, bool catalogue)
{
  const int count = model->columnCount();
  QStringList shown;
  for (int c = 0; c < count; ++c)
  {
    shown << model->headerData(c, Qt::Horizontal, Qt::DisplayRole).toString();
  }
  QStringList best;
  int matches = 0;
  if (catalogue)
  {
    static const std::vector<QStringList> orders = MakeCatalogueOrders();
    for (const QStringList& order : orders)
    {
      int found = 0;
      for (const QString& name : shown)
      {
        found += order.contains(name);
      }
      if (found > matches)
      {
        matches = found;
        best = order;
      }
    }
  }
  std::vector<int> sections;
  for (int c = 0; c < count; ++c)
  {
    if (!best.contains(shown[c]) && (shown[c] == "Row ID" || matches == 0))
    {
      sections.push_back(c);
    }
  }
  for (const QString& name : best)
  {
    const int c = shown.indexOf(name);
    if (c >= 0)
    {
      sections.push_back(c);
    }
  }
  for (int c = 0; c < count; ++c)
  {
    if (!best.contains(shown[c]) && shown[c] != "Row ID" && matches > 0)
    {
      sections.push_back(c);
    }
  }
  return sections;
}
}

//-----------------------------------------------------------------------------
pqPHEWColumnOrder::pqPHEWColumnOrder(QObject* parent)
  : Superclass(parent)
{
}

//-----------------------------------------------------------------------------
pqPHEWColumnOrder::~pqPHEWColumnOrder() = default;

//-----------------------------------------------------------------------------
void pqPHEWColumnOrder::startup()
{
  pqServerManagerModel* model = pqApplicationCore::instance()->getServerManagerModel();
  QObject::connect(model, &pqServerManagerModel::viewAdded, this, &pqPHEWColumnOrder::onViewAdded);
  for (pqSpreadSheetView* view : model->findItems<pqSpreadSheetView*>())
  {
    this->onViewAdded(view);
  }
}

//-----------------------------------------------------------------------------
void pqPHEWColumnOrder::shutdown()
{
  QObject::disconnect(
    pqApplicationCore::instance()->getServerManagerModel(), nullptr, this, nullptr);
}

//-----------------------------------------------------------------------------
void pqPHEWColumnOrder::onViewAdded(pqView* view)
{
  auto* spreadsheet = qobject_cast<pqSpreadSheetView*>(view);
  QWidget* widget = spreadsheet ? spreadsheet->widget() : nullptr;
  QTableView* table = widget ? widget->findChild<QTableView*>() : nullptr;
  if (!table || !table->model())
  {
    return;
  }
  // The columns come and go with the shown data: after every change of the header.
  QPointer<pqSpreadSheetView> guarded(spreadsheet);
  auto again = [this, guarded]() {
    if (guarded)
    {
      this->schedule(guarded);
    }
  };
  QObject::connect(table->model(), &QAbstractItemModel::modelReset, this, again);
  QObject::connect(table->model(), &QAbstractItemModel::headerDataChanged, this, again);
  QObject::connect(spreadsheet, &pqSpreadSheetView::showing, this, again);
  this->schedule(spreadsheet);
}

//-----------------------------------------------------------------------------
void pqPHEWColumnOrder::schedule(pqSpreadSheetView* view)
{
  const char* pending = "phewColumnOrderPending";
  if (view->property(pending).toBool())
  {
    return;
  }
  view->setProperty(pending, true);
  QPointer<pqSpreadSheetView> guarded(view);
  QTimer::singleShot(0, this, [this, guarded, pending]() {
    if (guarded)
    {
      guarded->setProperty(pending, false);
      this->reorder(guarded);
    }
  });
}

//-----------------------------------------------------------------------------
void pqPHEWColumnOrder::reorder(pqSpreadSheetView* view)
{
  QTableView* table = view->widget() ? view->widget()->findChild<QTableView*>() : nullptr;
  QAbstractItemModel* model = table ? table->model() : nullptr;
  if (!model)
  {
    return;
  }
  // tables only (Row Data): points and cells have ParaView's own columns first
  pqDataRepresentation* shown = view->activeRepresentation();
  const bool catalogue = shown && phew_gui::IsPHEWFilter(shown->getInput()) &&
    view->getViewModel()->getFieldType() == vtkDataObject::FIELD_ASSOCIATION_ROWS;
  const std::vector<int> sections = Order(model, catalogue);
  QHeaderView* header = table->horizontalHeader();
  for (int visual = 0; visual < static_cast<int>(sections.size()); ++visual)
  {
    const int from = header->visualIndex(sections[visual]);
    if (from != visual && from >= 0)
    {
      header->moveSection(from, visual);
    }
  }
}
