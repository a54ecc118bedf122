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

#include <cmath>
#include <initializer_list>
#include <utility>

namespace
{
using phew_gui::LINKS_PORT;
using phew_gui::TREE_DRAWING_PORT;

// An output port of a selection source.
struct Selection
{
  vtkSMSourceProxy* Proxy;
  unsigned int Port;
};

// The one value of an array over the elements `info` describes; false when there are none,
// several values, or a negative one (no structure).
bool OneValue(vtkPVDataInformation* info, const char* name, int association, long& value)
{
  vtkPVArrayInformation* values =
    info && name ? info->GetArrayInformation(name, association) : nullptr;
  if (!values || values->GetNumberOfTuples() == 0)
  {
    return false;
  }
  const double* range = values->GetComponentRange(0);
  value = std::lround(range[0]);
  return range[0] == range[1] && range[0] >= 0.0;
}

// The one value of each of the `wanted` arrays in `association` (vtkDataObject::POINT, CELL
// or ROW) of the extracted elements `info` describes; false unless each has one.
bool OneValues(vtkPVDataInformation* info, int association,
  std::initializer_list<std::pair<const char*, long*>> wanted)
{
  for (const auto& array : wanted)
  {
    if (!OneValue(info, array.first, association, *array.second))
    {
      return false;
    }
  }
  return true;
}

// The step of the tree's history shown at `time`: the Step of its Links, when they are of that
// time. The tree is not updated here (a selection runs nothing): its views have updated it.
bool ShownStep(vtkSMSourceProxy* tree, double time, long& step)
{
  vtkPVDataInformation* links = tree->GetDataInformation(LINKS_PORT);
  vtkPVArrayInformation* times = links->GetArrayInformation("Time", vtkDataObject::ROW);
  return times && times->GetNumberOfTuples() > 0 && times->GetComponentRange(0)[0] == time &&
    times->GetComponentRange(0)[1] == time && OneValue(links, "Step", vtkDataObject::ROW, step);
}

// A node or line picked in the tree's drawing (its structure and step), or a row of its
// Links or History (the descendant and the row's step).
void FollowPicked(pqOutputPort* port, Selection picked)
{
  vtkSMSourceProxy* tree = port->getSourceProxy();
  const auto number = static_cast<unsigned int>(port->getPortNumber());
  const char* ids = number == TREE_DRAWING_PORT ? "StructureId" : "DescendantId";
  auto extract =
    phew_gui::ExtractSelected(port->getServer(), tree, number, picked.Proxy, picked.Port);
  long structure = -1, step = -1;
  for (int association : { vtkDataObject::CELL, vtkDataObject::POINT, vtkDataObject::ROW })
  {
    if (extract &&
      OneValues(
        extract->GetDataInformation(), association, { { ids, &structure }, { "Step", &step } }))
    {
      phew_gui::FollowInMassHistory(port->getSource(), structure, step);
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
  if (!ShownStep(vtkSMSourceProxy::SafeDownCast(proxy), time, step))
  {
    return;
  }
  auto extract = phew_gui::ExtractSelected(server, data, input.GetOutputPort(0), link, 0);
  if (extract &&
    OneValue(
      extract->GetDataInformation(), labels.GetInputArrayNameToProcess(), association, structure))
  {
    phew_gui::FollowInMassHistory(tree, structure, step);
  }
}
}

namespace phew_gui
{
void FollowInMassHistory(pqPipelineSource* tree, long structure, long step)
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
  tree->renderAllViews();
}

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
      FollowPicked(selected, chosen);
    }
    return;
  }
  for (pqPipelineSource* tree :
    pqApplicationCore::instance()->getServerManagerModel()->findItems<pqPipelineSource*>(
      selected->getServer()))
  {
    // (a tree never applied has no history to show)
    if (IsFilter(tree, "PHEWMergerTree") && tree->modifiedState() != pqProxy::UNINITIALIZED &&
      vtkSMPropertyHelper(tree->getProxy(), "Input").GetAsProxy(0) == source)
    {
      FollowSelected(tree, selected, chosen, time);
    }
  }
}
}
