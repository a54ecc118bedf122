#include "pqPHEWMergerTreeBehavior.h"
#include "pqPHEWFilters.h"
#include "pqPHEWHelpers.h"

#include "pqApplicationCore.h"
#include "pqDataRepresentation.h"
#include "pqOutputPort.h"
#include "pqPipelineSource.h"
#include "pqRenderView.h"
#include "pqServerManagerModel.h"
#include "pqView.h"

#include "vtkDataObject.h"
#include "vtkPVArrayInformation.h"
#include "vtkPVDataInformation.h"
#include "vtkPVDataSetAttributesInformation.h"
#include "vtkSMPVRepresentationProxy.h"
#include "vtkSMPropertyHelper.h"
#include "vtkSMProxy.h"
#include "vtkSMTransferFunctionProxy.h"

#include <QPointer>
#include <QTimer>
#include <QVariant>

#include <algorithm>
#include <cmath>
#include <utility>
#include <memory>
#include <string>
#include <vector>

namespace
{
// vtkPHEWMergerTree::OutputPorts
const int TREE_DRAWING_PORT = 2;
const int MASS_HISTORY_PORT = 3;
const char* const FINAL_IDS = "FinalHaloId";

// The twelve colours pqPHEWDisplayBehavior gives structures 0, 1, 2, ... in the 3D view: the
// tree of final halo c has the colour of structure c there.
const double Palette[12][3] = { { 0.894, 0.102, 0.110 }, { 0.216, 0.494, 0.722 },
  { 0.302, 0.686, 0.290 }, { 0.596, 0.306, 0.639 }, { 1.000, 0.498, 0.000 },
  { 1.000, 1.000, 0.200 }, { 0.651, 0.337, 0.157 }, { 0.969, 0.506, 0.749 },
  { 0.400, 0.761, 0.647 }, { 0.988, 0.553, 0.384 }, { 0.553, 0.627, 0.796 },
  { 0.651, 0.847, 0.329 } };
const double Grey[3] = { 0.62, 0.62, 0.62 };

bool IsMergerTree(pqPipelineSource* source)
{
  return phew_gui::IsFilter(source, "PHEWMergerTree");
}

// The largest FinalHaloId on the port's cells (-1: none, or no such array).
int LargestFinalId(vtkPVDataInformation* info)
{
  vtkPVArrayInformation* array =
    info ? info->GetArrayInformation(FINAL_IDS, vtkDataObject::CELL) : nullptr;
  return array && array->GetNumberOfTuples() > 0
    ? static_cast<int>(std::lround(array->GetComponentRange(0)[1]))
    : -1;
}

// One category per final halo 0 .. largest (palette colour c % 12), and -1 in grey.
void SetCategories(vtkSMProxy* lut, int largest)
{
  std::vector<std::string> annotations = { "-1", "none" };
  std::vector<double> colours(Grey, Grey + 3);
  for (int c = 0; c <= largest; ++c)
  {
    annotations.push_back(std::to_string(c));
    annotations.push_back(std::to_string(c));
    colours.insert(colours.end(), Palette[c % 12], Palette[c % 12] + 3);
  }
  vtkSMPropertyHelper(lut, "IndexedLookup").Set(1);
  vtkSMPropertyHelper helper(lut, "Annotations");
  helper.SetNumberOfElements(static_cast<unsigned int>(annotations.size()));
  for (unsigned int i = 0; i < annotations.size(); ++i)
  {
    helper.Set(i, annotations[i].c_str());
  }
  vtkSMPropertyHelper(lut, "IndexedColors")
    .Set(colours.data(), static_cast<unsigned int>(colours.size()));
  lut->UpdateVTKObjects();
}

// Hides the legend of the representation's colour map in its view; false if it has none yet.
bool HideLegend(pqDataRepresentation* representation)
{
  vtkSMProxy* proxy = representation->getProxy();
  vtkSMProxy* view = representation->getView() ? representation->getView()->getProxy() : nullptr;
  vtkSMProxy* lut = vtkSMPropertyHelper(proxy, "LookupTable", true).GetAsProxy();
  vtkSMProxy* bar =
    lut && view ? vtkSMTransferFunctionProxy::FindScalarBarRepresentation(lut, view) : nullptr;
  if (!bar)
  {
    return false;
  }
  vtkSMPVRepresentationProxy::SetScalarBarVisibility(proxy, view, false);
  return true;
}

// ParaView's Apply shows a legend for every new coloured representation, possibly after this
// behaviour has run: hide it after each render of the view until it has been hidden once.
void HideLegendOnceShown(pqDataRepresentation* representation)
{
  QPointer<pqDataRepresentation> guarded(representation);
  auto connection = std::make_shared<QMetaObject::Connection>();
  *connection =
    QObject::connect(representation->getView(), &pqView::endRender, [guarded, connection]() {
      if (!guarded || !guarded->getView() || HideLegend(guarded))
      {
        QObject::disconnect(*connection);
      }
    });
}

int DrawnSteps(pqDataRepresentation* representation);

// The step axis labelled at whole steps (at most about ten labels), not at fractions.
void LabelSteps(pqDataRepresentation* representation)
{
  vtkSMProxy* axes =
    vtkSMPropertyHelper(representation->getProxy(), "DataAxesGrid", true).GetAsProxy();
  const int steps = DrawnSteps(representation);
  if (!axes || steps < 1)
  {
    return;
  }
  std::vector<double> labels;
  const int every = std::max(1, (steps + 9) / 10);
  for (int step = 0; step < steps; step += every)
  {
    labels.push_back(step);
  }
  vtkSMPropertyHelper(axes, "YAxisUseCustomLabels").Set(1);
  vtkSMPropertyHelper(axes, "YAxisLabels")
    .Set(labels.data(), static_cast<unsigned int>(labels.size()));
  axes->UpdateVTKObjects();
}

// The view looks at the drawing face on (steps up) and holds all of it: on the first Apply
// the drawing is one row (ParaView may then choose another direction for such flat data), and
// it grows by a row with every step.
void FitDrawing(pqDataRepresentation* representation)
{
  LabelSteps(representation);
  if (auto* view = qobject_cast<pqRenderView*>(representation->getView()))
  {
    view->resetViewDirection(0, 0, -1, 0, 1, 0);
    view->resetDisplay(true); // closest: the drawing's box, not its bounding sphere
    // then a margin for the step axis's labels and the nodes at the edges
    vtkSMProxy* proxy = view->getProxy();
    proxy->UpdatePropertyInformation();
    const double scale = vtkSMPropertyHelper(proxy, "CameraParallelScaleInfo").GetAsDouble();
    vtkSMPropertyHelper(proxy, "CameraParallelScale").Set(1.3 * scale);
    proxy->UpdateVTKObjects();
  }
}

// The number of steps the drawing shows (the largest Step + 1; 0: empty).
int DrawnSteps(pqDataRepresentation* representation)
{
  vtkPVDataInformation* info = representation->getInputDataInformation();
  vtkPVArrayInformation* steps =
    info ? info->GetArrayInformation("Step", vtkDataObject::POINT) : nullptr;
  return steps && steps->GetNumberOfTuples() > 0
    ? static_cast<int>(std::lround(steps->GetComponentRange(0)[1])) + 1
    : 0;
}

// Nodes as large as the columns allow: 10 pixels for a few trees, down to 5 for a hundred
// (a view about 500 pixels wide; the columns are ColumnSpacing apart in x).
void SizePoints(pqDataRepresentation* representation)
{
  vtkPVDataInformation* info = representation->getInputDataInformation();
  vtkPVArrayInformation* spacing =
    info ? info->GetArrayInformation("ColumnSpacing", vtkDataObject::FIELD) : nullptr;
  const double* bounds = info ? info->GetBounds() : nullptr;
  double columns = 1.0;
  if (spacing && bounds && bounds[1] >= bounds[0] && spacing->GetComponentRange(0)[0] > 0.0)
  {
    columns += (bounds[1] - bounds[0]) / spacing->GetComponentRange(0)[0];
  }
  const double size = std::max(5.0, std::min(10.0, std::floor(600.0 / columns)));
  vtkSMPropertyHelper(representation->getProxy(), "PointSize", true).Set(size);
}

// The drawing: coloured by final halo, nodes as round points over the lines, a Step axis.
void StyleDrawing(pqDataRepresentation* representation)
{
  vtkSMProxy* proxy = representation->getProxy();
  vtkSMPVRepresentationProxy::SetScalarColoring(proxy, FINAL_IDS, vtkDataObject::CELL);
  if (vtkSMProxy* lut = vtkSMPropertyHelper(proxy, "LookupTable", true).GetAsProxy())
  {
    SetCategories(lut, LargestFinalId(representation->getInputDataInformation()));
  }
  vtkSMPropertyHelper(proxy, "Representation").Set("Surface");
  SizePoints(representation);
  vtkSMPropertyHelper(proxy, "RenderPointsAsSpheres", true).Set(1);
  vtkSMPropertyHelper(proxy, "LineWidth", true).Set(2.0);
  if (vtkSMProxy* axes = vtkSMPropertyHelper(proxy, "DataAxesGrid", true).GetAsProxy())
  {
    // x only places the trees side by side: label the step axis alone (as the dendrogram's).
    vtkSMPropertyHelper(axes, "GridAxesVisibility").Set(1);
    vtkSMPropertyHelper(axes, "XTitle").Set("");
    vtkSMPropertyHelper(axes, "AxesToLabel").Set(1);
    vtkSMPropertyHelper(axes, "YTitle").Set("Step");
    vtkSMPropertyHelper(axes, "ZTitle").Set("");
    vtkSMPropertyHelper(axes, "ShowGrid").Set(0);
    vtkSMPropertyHelper(axes, "FacesToRender").Set(0x04);
    axes->UpdateVTKObjects();
  }
  proxy->UpdateVTKObjects();
  HideLegend(representation);
  HideLegendOnceShown(representation);
  FitDrawing(representation);
}

// The chart's title names the final halo of the Mass History on the port (none: no title).
void TitleChart(pqDataRepresentation* representation)
{
  vtkPVDataInformation* info = representation->getInputDataInformation();
  vtkPVArrayInformation* ids =
    info ? info->GetArrayInformation(FINAL_IDS, vtkDataObject::ROW) : nullptr;
  const std::string title = ids && ids->GetNumberOfTuples() > 0
    ? "Mass history of final halo " + std::to_string(std::lround(ids->GetComponentRange(0)[0]))
    : std::string();
  vtkSMProxy* view = representation->getView()->getProxy();
  vtkSMPropertyHelper(view, "ChartTitle").Set(title.c_str());
  view->UpdateVTKObjects();
}

// Mass alone against Time, with markers (a history of two steps is one segment). The chart
// shows every new column by default: this runs again when the columns first appear (the Mass
// History is empty until the branch spans two steps).
void ChooseSeries(pqDataRepresentation* representation)
{
  vtkPVDataInformation* info = representation->getInputDataInformation();
  const bool columns = info && info->GetArrayInformation("Mass", vtkDataObject::ROW);
  const char* done = "phewSeriesChosen";
  if (!columns || representation->property(done).toBool())
  {
    return;
  }
  representation->setProperty(done, true);
  vtkSMProxy* proxy = representation->getProxy();
  vtkSMPropertyHelper(proxy, "UseIndexForXAxis").Set(0);
  vtkSMPropertyHelper(proxy, "XArrayName").Set("Time");
  // (name, visibility) pairs: Mass alone
  vtkPVDataSetAttributesInformation* rows = info->GetAttributeInformation(vtkDataObject::ROW);
  std::vector<std::string> pairs;
  for (int a = 0; rows && a < rows->GetNumberOfArrays(); ++a)
  {
    const std::string name = rows->GetArrayInformation(a)->GetName();
    pairs.push_back(name);
    pairs.push_back(name == "Mass" ? "1" : "0");
  }
  vtkSMPropertyHelper visible(proxy, "SeriesVisibility");
  visible.SetNumberOfElements(static_cast<unsigned int>(pairs.size()));
  for (unsigned int i = 0; i < pairs.size(); ++i)
  {
    visible.Set(i, pairs[i].c_str());
  }
  // circles (marker style 4) of 8 pixels on a line of 3
  for (auto setting : { std::make_pair("SeriesMarkerStyle", "4"),
         std::make_pair("SeriesMarkerSize", "8"), std::make_pair("SeriesLineThickness", "3") })
  {
    vtkSMPropertyHelper pair(proxy, setting.first, true);
    pair.SetNumberOfElements(2);
    pair.Set(0, "Mass");
    pair.Set(1, setting.second);
  }
  proxy->UpdateVTKObjects();
}

// The mass history's chart: the series, the axes' and the chart's titles.
void StyleChart(pqDataRepresentation* representation)
{
  ChooseSeries(representation);
  vtkSMProxy* view = representation->getView()->getProxy();
  vtkSMPropertyHelper(view, "BottomAxisTitle").Set("Time");
  vtkSMPropertyHelper(view, "LeftAxisTitle").Set("Mass (main branch)");
  view->UpdateVTKObjects();
  TitleChart(representation);
}

}

//-----------------------------------------------------------------------------
pqPHEWMergerTreeBehavior::pqPHEWMergerTreeBehavior(QObject* parent)
  : Superclass(parent)
{
}

pqPHEWMergerTreeBehavior::~pqPHEWMergerTreeBehavior() = default;

//-----------------------------------------------------------------------------
void pqPHEWMergerTreeBehavior::startup()
{
  pqServerManagerModel* model = pqApplicationCore::instance()->getServerManagerModel();
  QObject::connect(model, &pqServerManagerModel::representationAdded, this,
    &pqPHEWMergerTreeBehavior::onRepresentationAdded);
  QObject::connect(
    model, &pqServerManagerModel::sourceAdded, this, &pqPHEWMergerTreeBehavior::onSourceAdded);
}

void pqPHEWMergerTreeBehavior::shutdown()
{
  pqServerManagerModel* model = pqApplicationCore::instance()->getServerManagerModel();
  QObject::disconnect(model, nullptr, this, nullptr);
}

//-----------------------------------------------------------------------------
void pqPHEWMergerTreeBehavior::onSourceAdded(pqPipelineSource* source)
{
  if (IsMergerTree(source))
  {
    QObject::connect(source, QOverload<pqPipelineSource*>::of(&pqPipelineSource::dataUpdated), this,
      &pqPHEWMergerTreeBehavior::onDataUpdated);
  }
}

void pqPHEWMergerTreeBehavior::onDataUpdated(pqPipelineSource* source)
{
  // After the views have shown the new data.
  phew_gui::Later(this, source, &pqPHEWMergerTreeBehavior::follow);
}

void pqPHEWMergerTreeBehavior::onRepresentationAdded(pqRepresentation* representation)
{
  // Its input is not connected yet: look at it once the representation is set up.
  if (auto* data = qobject_cast<pqDataRepresentation*>(representation))
  {
    phew_gui::Later(this, data, &pqPHEWMergerTreeBehavior::style);
  }
}

//-----------------------------------------------------------------------------
void pqPHEWMergerTreeBehavior::style(pqDataRepresentation* representation)
{
  pqOutputPort* port = representation->getOutputPortFromInput();
  pqView* view = representation->getView();
  if (!port || !view || !IsMergerTree(representation->getInput()))
  {
    return;
  }
  if (port->getPortNumber() == TREE_DRAWING_PORT && qobject_cast<pqRenderView*>(view))
  {
    StyleDrawing(representation);
  }
  else if (port->getPortNumber() == MASS_HISTORY_PORT && view->getViewType() == "XYChartView")
  {
    StyleChart(representation);
  }
  else
  {
    return;
  }
  view->render();
}

//-----------------------------------------------------------------------------
// A new step or another Final Halo: the drawing's categories (final haloes appear as steps
// accumulate) and the chart's title follow, unless the user coloured the drawing otherwise.
void pqPHEWMergerTreeBehavior::follow(pqPipelineSource* source)
{
  for (pqDataRepresentation* representation :
    source->getRepresentations(TREE_DRAWING_PORT, nullptr))
  {
    vtkSMProxy* proxy = representation->getProxy();
    vtkSMProxy* lut = vtkSMPropertyHelper(proxy, "LookupTable", true).GetAsProxy();
    const char* colouredBy =
      vtkSMPropertyHelper(proxy, "ColorArrayName", true).GetInputArrayNameToProcess();
    if (lut && colouredBy && std::string(colouredBy) == FINAL_IDS &&
      vtkSMPropertyHelper(lut, "IndexedLookup").GetAsInt() == 1)
    {
      SetCategories(lut, LargestFinalId(representation->getInputDataInformation()));
      representation->renderViewEventually();
    }
    // a new row of steps: show the whole drawing again (not on other runs: the user's zoom)
    const int steps = DrawnSteps(representation);
    if (steps != representation->property("phewSteps").toInt())
    {
      representation->setProperty("phewSteps", steps);
      SizePoints(representation);
      proxy->UpdateVTKObjects();
      FitDrawing(representation);
    }
  }
  for (pqDataRepresentation* representation :
    source->getRepresentations(MASS_HISTORY_PORT, nullptr))
  {
    if (representation->getView() && representation->getView()->getViewType() == "XYChartView")
    {
      ChooseSeries(representation);
      TitleChart(representation);
      representation->renderViewEventually();
    }
  }
}
