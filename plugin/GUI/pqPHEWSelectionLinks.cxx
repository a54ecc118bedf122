#include "pqPHEWSelectionLinks.h"
#include "pqPHEWDendrogramZoom.h"
#include "pqPHEWFilters.h"
#include "pqPHEWMergerTreeSelection.h"

#include "pqApplicationCore.h"
#include "pqDataRepresentation.h"
#include "pqOutputPort.h"
#include "pqPipelineSource.h"
#include "pqSelectionManager.h"
#include "pqServer.h"
#include "pqServerManagerModel.h"
#include "pqSpreadSheetView.h"
#include "pqSpreadSheetViewModel.h"
#include "pqView.h"

#include "vtkDataObject.h"
#include "vtkPVArrayInformation.h"
#include "vtkPVDataInformation.h"
#include "vtkSMPropertyHelper.h"
#include "vtkSMSelectionHelper.h"
#include "vtkSMSessionProxyManager.h"
#include "vtkSMSourceProxy.h"
#include "vtkSelectionNode.h"
#include "vtkSpreadSheetView.h"
#include "vtkSmartPointer.h"

#include <cstring>
#include <QItemSelection>
#include <QScopedValueRollback>
#include <QSet>
#include <QTimer>

namespace
{
// Where a port's data holds its structure ids: the selection field type (cells, points or
// rows) and the array of clump ids (LeafClumpId in the dendrogram plot, where ClumpId also
// colours the structures). False when the port has no ids at all.
bool Target(pqOutputPort* port, int& field, const char*& clumpArray)
{
  vtkPVDataInformation* info = port->getDataInformation();
  if (!info)
  {
    return false;
  }
  for (const char* name : { "LeafClumpId", "ClumpId", "GroupId", "HaloId" })
  {
    for (int attribute : { vtkDataObject::CELL, vtkDataObject::POINT, vtkDataObject::ROW })
    {
      if (info->GetArrayInformation(name, attribute))
      {
        field = vtkSelectionNode::ConvertAttributeTypeToSelectionField(attribute);
        clumpArray = std::strcmp(name, "LeafClumpId") == 0 ? name : "ClumpId";
        return true;
      }
    }
  }
  return false;
}

// True when the port is shown only as an outline: a selection there would draw the selected
// cells' surfaces right on top of the Clump Geometry's faces, and the two fight for the same
// pixels (the highlight then comes and goes). Ports shown nowhere are linked: Extract
// Selection and later views use their selection.
bool OnlyOutlined(pqOutputPort* port)
{
  bool shown = false;
  for (pqDataRepresentation* representation : port->getRepresentations(nullptr))
  {
    if (representation && representation->isVisible())
    {
      const char* type =
        vtkSMPropertyHelper(representation->getProxy(), "Representation", true).GetAsString();
      if (!type || std::strcmp(type, "Outline") != 0)
      {
        return false;
      }
      shown = true;
    }
  }
  return shown;
}

// A spreadsheet highlights the rows it finds selected as it paints them, which a selection
// set on its port (as here) does not always trigger in time. Once it has the new selection,
// tell its table which rows are selected, as the spreadsheet itself does (a selection from
// the data, which the table does not send back as a new selection). Tables up to a million
// rows: each block of rows is asked for once.
void MarkSelectedRows(pqSpreadSheetView* spreadsheet)
{
  auto* rows = vtkSpreadSheetView::SafeDownCast(spreadsheet->getProxy()->GetClientSideObject());
  pqSpreadSheetViewModel* model = spreadsheet->getViewModel();
  if (!rows || !model || rows->GetNumberOfRows() > 1000000 ||
    model->rowCount() != rows->GetNumberOfRows())
  {
    return;
  }
  QItemSelection selected;
  const int last = model->columnCount() - 1;
  for (vtkIdType row = 0; row < rows->GetNumberOfRows() && last >= 0; ++row)
  {
    if (rows->IsRowSelected(row))
    {
      const int r = static_cast<int>(row);
      selected.select(model->index(r, 0), model->index(r, last));
    }
  }
  Q_EMIT model->selectionChanged(selected);
}

// Shows the new selections of these ports in their views, each view once.
void Refresh(const QList<QPointer<pqOutputPort>>& ports)
{
  QSet<pqView*> views;
  for (const QPointer<pqOutputPort>& port : ports)
  {
    if (port)
    {
      for (pqView* view : port->getViews())
      {
        views.insert(view);
      }
    }
  }
  for (pqView* view : views)
  {
    if (auto* spreadsheet = qobject_cast<pqSpreadSheetView*>(view))
    {
      spreadsheet->forceRender();
      MarkSelectedRows(spreadsheet);
    }
    else
    {
      view->render();
    }
  }
}
}

//-----------------------------------------------------------------------------
pqPHEWSelectionLinks::pqPHEWSelectionLinks(QObject* parent)
  : Superclass(parent)
{
}

//-----------------------------------------------------------------------------
pqPHEWSelectionLinks::~pqPHEWSelectionLinks() = default;

//-----------------------------------------------------------------------------
void pqPHEWSelectionLinks::startup()
{
  // The selection manager may not exist yet when plugins start: connect to it when the
  // first filter is made.
  QObject::connect(pqApplicationCore::instance()->getServerManagerModel(),
    &pqServerManagerModel::sourceAdded, this, &pqPHEWSelectionLinks::connectToSelections);
}

//-----------------------------------------------------------------------------
void pqPHEWSelectionLinks::connectToSelections()
{
  auto* manager =
    qobject_cast<pqSelectionManager*>(pqApplicationCore::instance()->manager("SELECTION_MANAGER"));
  if (manager)
  {
    QObject::connect(manager, &pqSelectionManager::selectionChanged, this,
      &pqPHEWSelectionLinks::onSelectionChanged, Qt::UniqueConnection);
  }
}

//-----------------------------------------------------------------------------
void pqPHEWSelectionLinks::shutdown()
{
  QObject::disconnect(
    pqApplicationCore::instance()->getServerManagerModel(), nullptr, this, nullptr);
  if (QObject* manager = pqApplicationCore::instance()->manager("SELECTION_MANAGER"))
  {
    QObject::disconnect(manager, nullptr, this, nullptr);
  }
}

//-----------------------------------------------------------------------------
void pqPHEWSelectionLinks::onSelectionChanged(pqOutputPort* selected)
{
  // Setting the links' selections signals again: ignore those.
  if (this->Linking)
  {
    return;
  }
  // Link once ParaView is done with the selection (it signals several times per selection,
  // and a render view links its ports only after the first signal).
  this->Pending = selected;
  if (!this->Scheduled)
  {
    this->Scheduled = true;
    QTimer::singleShot(0, this, &pqPHEWSelectionLinks::update);
  }
}

//-----------------------------------------------------------------------------
void pqPHEWSelectionLinks::update()
{
  this->Scheduled = false;
  QScopedValueRollback<bool> linking(this->Linking, true);
  pqOutputPort* selected = this->Pending;
  this->unlink(selected);
  if (selected && phew_gui::IsStructureFinder(selected->getSource()))
  {
    this->link(selected);
  }
  // the merger trees' mass histories follow a structure selected
  phew_gui::FollowSelectionInMergerTrees(selected);
  // the dendrograms follow: zoomed to a selected halo, whole again without one (a cleared
  // selection comes without a port)
  for (pqPipelineSource* source :
    pqApplicationCore::instance()->getServerManagerModel()->findItems<pqPipelineSource*>())
  {
    phew_gui::ZoomDendrogramToSelection(source);
  }
}

//-----------------------------------------------------------------------------
void pqPHEWSelectionLinks::unlink(pqOutputPort* keep)
{
  for (const QPointer<pqOutputPort>& port : this->Linked)
  {
    if (port && port != keep)
    {
      port->getSourceProxy()->CleanSelectionInputs(port->getPortNumber());
    }
  }
  Refresh(this->Linked);
  this->Linked.clear();
}

//-----------------------------------------------------------------------------
void pqPHEWSelectionLinks::link(pqOutputPort* selected)
{
  vtkSMSourceProxy* source = selected->getSourceProxy();
  const unsigned int number = static_cast<unsigned int>(selected->getPortNumber());
  vtkSMSourceProxy* selection = source->GetSelectionInput(number);
  if (!selection)
  {
    return;
  }
  const unsigned int selectionPort = source->GetSelectionInputPort(number);
  vtkSMSessionProxyManager* proxies = selected->getServer()->proxyManager();
  pqPipelineSource* filter = selected->getSource();
  for (int other = 0; other < filter->getNumberOfOutputPorts(); ++other)
  {
    pqOutputPort* target = filter->getOutputPort(other);
    int field = vtkSelectionNode::CELL;
    const char* clumpArray = "ClumpId";
    if (other == selected->getPortNumber() || OnlyOutlined(target) ||
      !Target(target, field, clumpArray))
    {
      continue;
    }
    vtkSmartPointer<vtkSMSourceProxy> link;
    link.TakeReference(
      vtkSMSourceProxy::SafeDownCast(proxies->NewProxy("phew_selection", "LinkedSelection")));
    if (!link)
    {
      break;
    }
    vtkSMPropertyHelper(link, "Input").Set(source, number);
    vtkSMPropertyHelper(link, "Selection").Set(selection, selectionPort);
    vtkSMPropertyHelper(link, "FieldType").Set(field);
    vtkSMPropertyHelper(link, "ClumpIdArrayName").Set(clumpArray);
    link->UpdateVTKObjects();
    // ParaView's selection tools expect a port's selection to be an AppendSelections.
    vtkSmartPointer<vtkSMSourceProxy> append;
    append.TakeReference(vtkSMSourceProxy::SafeDownCast(
      vtkSMSelectionHelper::NewAppendSelectionsFromSelectionSource(link)));
    source->SetSelectionInput(static_cast<unsigned int>(other), append, 0);
    this->Linked.push_back(target);
  }
  Refresh(this->Linked);
}
