#include "pqPHEWMergerTreeSelection.h"
#include "pqPHEWFilters.h"
#include "pqPHEWHelpers.h"

#include "pqApplicationCore.h"
#include "pqOutputPort.h"
#include "pqPipelineSource.h"
#include "pqServer.h"
#include "pqServerManagerModel.h"
#include "pqTimeKeeper.h"
#include "pqView.h"

#include "vtkDataObject.h"
#include "vtkPVArrayInformation.h"
#include "vtkPVDataInformation.h"
#include "vtkSMPropertyHelper.h"
#include "vtkSMSessionProxyManager.h"
#include "vtkSMSourceProxy.h"
#include "vtkSelectionNode.h"
#include "vtkSmartPointer.h"

#include <QSet>

#include <cmath>

namespace
{
// vtkPHEWMergerTree::OutputPorts
const int LINKS_PORT = 0;
const int TREE_DRAWING_PORT = 2; // (after Links and History)

// An output port of a selection source.
struct Selection
{
  vtkSMSourceProxy* Proxy;
  unsigned int Port;
};

// The one value of array `name` (`association`: vtkDataObject::POINT or CELL) over the
// elements of (data, port) that `selection` selects at `time`; false when there are none, or
// several values, or a negative one (no structure).
bool SelectedValue(pqServer* server, vtkSMSourceProxy* data, unsigned int port, Selection selection,
  const char* name, int association, double time, long& value)
{
  auto extract = phew_gui::NewHiddenFilter(server, "ExtractSelection");
  if (!extract || !name)
  {
    return false;
  }
  vtkSMPropertyHelper(extract, "Input").Set(data, port);
  vtkSMPropertyHelper(extract, "Selection").Set(selection.Proxy, selection.Port);
  extract->UpdateVTKObjects();
  extract->UpdatePipeline(time); // (the time shown)
  vtkPVArrayInformation* values =
    extract->GetDataInformation()->GetArrayInformation(name, association);
  if (!values || values->GetNumberOfTuples() == 0)
  {
    return false;
  }
  const double* range = values->GetComponentRange(0);
  value = std::lround(range[0]);
  return range[0] == range[1] && range[0] >= 0.0;
}

// The step of the tree's history shown at `time` (the Step of its Links there).
bool ShownStep(vtkSMSourceProxy* tree, double time, long& step)
{
  tree->UpdatePipeline(time); // (a step the history holds: nothing runs)
  vtkPVArrayInformation* steps =
    tree->GetDataInformation(LINKS_PORT)->GetArrayInformation("Step", vtkDataObject::ROW);
  if (!steps || steps->GetNumberOfTuples() == 0)
  {
    return false;
  }
  step = std::lround(steps->GetComponentRange(0)[0]);
  return steps->GetComponentRange(0)[0] == steps->GetComponentRange(0)[1];
}

// The tree's Mass History follows `structure` of `step`; its views show it.
void Follow(pqPipelineSource* tree, long structure, long step)
{
  vtkSMProxy* proxy = tree->getProxy();
  if (vtkSMPropertyHelper(proxy, "Structure").GetAsInt() == structure &&
    vtkSMPropertyHelper(proxy, "StructureStep").GetAsInt() == step)
  {
    return;
  }
  const pqProxy::ModifiedState before = tree->modifiedState();
  vtkSMPropertyHelper(proxy, "Structure").Set(static_cast<int>(structure));
  vtkSMPropertyHelper(proxy, "StructureStep").Set(static_cast<int>(step));
  proxy->UpdateVTKObjects();
  // (applied at once, as a selection is: no Apply pending for it; the user's own pending
  // changes in the panel stay pending)
  tree->setModifiedState(before);
  QSet<pqView*> views;
  for (int port = 0; port < tree->getNumberOfOutputPorts(); ++port)
  {
    for (pqView* view : tree->getOutputPort(port)->getViews())
    {
      views.insert(view);
    }
  }
  for (pqView* view : views)
  {
    view->render();
  }
}

// A node or line picked in the tree's drawing (its structure and step), or a row of its
// Links or History (the descendant and the row's step).
void FollowPicked(pqOutputPort* port, Selection picked, double time)
{
  vtkSMSourceProxy* tree = port->getSourceProxy();
  const auto number = static_cast<unsigned int>(port->getPortNumber());
  const bool drawing = number == TREE_DRAWING_PORT;
  const char* ids = drawing ? "StructureId" : "DescendantId";
  long structure = -1, step = -1;
  for (int association : { vtkDataObject::CELL, vtkDataObject::POINT, vtkDataObject::ROW })
  {
    if (SelectedValue(port->getServer(), tree, number, picked, ids, association, time, structure) &&
      SelectedValue(port->getServer(), tree, number, picked, "Step", association, time, step))
    {
      Follow(port->getSource(), structure, step);
      return;
    }
  }
}

// A selection on an output of the filter feeding `tree`: the structure it names in the tree's
// label array, at the time shown. The selection goes through vtkPHEWLinkedSelection onto the
// tree's input (whole structures by value; elements of no structure name nothing), then the
// labels of what it selects there are read.
void FollowSelected(pqPipelineSource* tree, pqOutputPort* selected, Selection chosen, double time)
{
  vtkSMProxy* proxy = tree->getProxy();
  vtkSMPropertyHelper input(proxy, "Input");
  auto* data = vtkSMSourceProxy::SafeDownCast(input.GetAsProxy(0));
  vtkSMPropertyHelper labels(proxy, "LabelArray");
  const int association = labels.GetInputArrayAssociation();
  pqServer* server = selected->getServer();
  vtkSmartPointer<vtkSMSourceProxy> link;
  link.TakeReference(vtkSMSourceProxy::SafeDownCast(
    server->proxyManager()->NewProxy("phew_selection", "LinkedSelection")));
  if (!data || !link)
  {
    return;
  }
  vtkSMPropertyHelper(link, "Input").Set(selected->getSourceProxy(), selected->getPortNumber());
  vtkSMPropertyHelper(link, "Selection").Set(chosen.Proxy, chosen.Port);
  vtkSMPropertyHelper(link, "FieldType")
    .Set(vtkSelectionNode::ConvertAttributeTypeToSelectionField(association));
  vtkSMPropertyHelper(link, "ClumpIdArrayName").Set("ClumpId");
  link->UpdateVTKObjects();
  long structure = -1, step = -1;
  if (SelectedValue(server, data, input.GetOutputPort(0), { link, 0 },
        labels.GetInputArrayNameToProcess(), association, time, structure) &&
    ShownStep(vtkSMSourceProxy::SafeDownCast(proxy), time, step))
  {
    Follow(tree, structure, step);
  }
}
}

namespace phew_gui
{
void FollowSelectionInMergerTrees(pqOutputPort* selected)
{
  vtkSMSourceProxy* source = selected ? selected->getSourceProxy() : nullptr;
  const auto number = selected ? static_cast<unsigned int>(selected->getPortNumber()) : 0u;
  vtkSMSourceProxy* selection = source ? source->GetSelectionInput(number) : nullptr;
  if (!selection)
  {
    return;
  }
  const Selection chosen = { selection, source->GetSelectionInputPort(number) };
  const double time = selected->getServer()->getTimeKeeper()->getTime();
  if (IsFilter(selected->getSource(), "PHEWMergerTree"))
  {
    if (selected->getPortNumber() <= TREE_DRAWING_PORT) // Links, History, Tree Drawing
    {
      FollowPicked(selected, chosen, time);
    }
    return;
  }
  for (pqPipelineSource* tree :
    pqApplicationCore::instance()->getServerManagerModel()->findItems<pqPipelineSource*>(
      selected->getServer()))
  {
    if (IsFilter(tree, "PHEWMergerTree") &&
      vtkSMPropertyHelper(tree->getProxy(), "Input").GetAsProxy(0) == source)
    {
      FollowSelected(tree, selected, chosen, time);
    }
  }
}
}
