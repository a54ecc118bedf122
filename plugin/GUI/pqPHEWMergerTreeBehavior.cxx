#include "pqPHEWMergerTreeBehavior.h"
#include "pqPHEWFilters.h"
#include "pqPHEWHaloColours.h"
#include "pqPHEWHelpers.h"
#include "pqPHEWLegend.h"
#include "pqPHEWMergerTreeSelection.h"

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

#include "phew/phew.h"

#include <QByteArray>
#include <QStringList>
#include <QVariant>

#include <algorithm>
#include <cmath>
#include <functional>
#include <utility>
#include <string>
#include <vector>

namespace
{
using phew_gui::MASS_HISTORY_PORT;
using phew_gui::TREE_DRAWING_PORT;
const char* const FINAL_IDS = "FinalHaloId";

bool IsMergerTree(pqPipelineSource* source)
{
  return phew_gui::IsFilter(source, "PHEWMergerTree");
}

// The drawing's colour map: the haloes' colours of the 3D view (one map for both, by array
// name), made here only if no halo finder has made it yet.
void UseHaloColours(vtkSMProxy* lut)
{
  if (lut && !phew_gui::IsHaloColours(lut))
  {
    phew_gui::SetHaloColours(lut, nullptr);
  }
}

int DrawnSteps(vtkPVDataInformation* info);

// The step axis labelled at whole steps (at most about ten labels), not at fractions, and the
// frame padded.
void LabelSteps(pqDataRepresentation* representation)
{
  vtkSMProxy* axes =
    vtkSMPropertyHelper(representation->getProxy(), "DataAxesGrid", true).GetAsProxy();
  const int steps = DrawnSteps(representation->getInputDataInformation());
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
  // the frame a little above and below the drawing: the first and last steps' nodes off its
  // lines (not wider along x: a frame wider than the drawing there stops ParaView 5.11's
  // surface selection in this view from picking anything, seen in the GUI, not in pvbatch)
  vtkPVDataInformation* info = representation->getInputDataInformation();
  double bounds[6];
  info->GetBounds(bounds);
  const double dy = 0.06 * (bounds[3] - bounds[2]) + 0.05;
  const double padded[6] = { bounds[0], bounds[1], bounds[2] - dy, bounds[3] + dy, bounds[4],
    bounds[5] };
  vtkSMPropertyHelper(axes, "CustomBounds").Set(padded, 6);
  vtkSMPropertyHelper(axes, "UseCustomBounds").Set(1);
  axes->UpdateVTKObjects();
}

// The view looks at the drawing face on (steps up) and holds all of it: on the first Apply
// the drawing is one row (ParaView may then choose another direction for such flat data), and
// it grows by a row with every step.
void FitDrawing(pqDataRepresentation* representation)
{
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
  LabelSteps(representation);
}

// The number of steps a drawing shows (the largest Step + 1; 0: empty).
int DrawnSteps(vtkPVDataInformation* info)
{
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
  vtkSMPVRepresentationProxy::SetScalarColoring(proxy, phew_gui::HALO_COLOUR, vtkDataObject::CELL);
  UseHaloColours(vtkSMPropertyHelper(proxy, "LookupTable", true).GetAsProxy());
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
  phew_gui::HideLegend(representation);
  phew_gui::HideLegendOnceShown(representation);
  FitDrawing(representation);
}

// One number the port's data holds: a field data value or the first (0) or last (1) end of a
// column's range; `fallback` when there is no such array.
long Number(vtkPVDataInformation* info, const char* name, int association, int end, long fallback)
{
  vtkPVArrayInformation* array = info ? info->GetArrayInformation(name, association) : nullptr;
  return array && array->GetNumberOfTuples() > 0 ? std::lround(array->GetComponentRange(0)[end])
                                                 : fallback;
}

// A property's values as text (to tell whether the user changed them).
QStringList Values(vtkSMProxy* proxy, const char* name)
{
  QStringList values;
  vtkSMPropertyHelper helper(proxy, name, true);
  for (unsigned int i = 0; i < helper.GetNumberOfElements(); ++i)
  {
    values << QString::fromStdString(helper.GetAsVariant(i).ToString());
  }
  return values;
}

// Runs `set` unless what `current` reads has changed since this behaviour last ran it (the
// user changed it; `holder` keeps what was read then, under `key`): the chart's colour and
// ranges follow each run and selection, but stay the user's once changed.
void SetUnlessChanged(QObject* holder, const char* key, const std::function<QStringList()>& current,
  const std::function<void()>& set)
{
  const QVariant before = holder->property(key);
  if (before.isValid() && before.toStringList() != current())
  {
    return;
  }
  set();
  holder->setProperty(key, current());
}

// The colour of the Mass series (its name and red, green, blue; empty: none set).
QStringList MassColour(vtkSMProxy* representation)
{
  const QStringList colours = Values(representation, "SeriesColor");
  const int at = colours.indexOf("Mass");
  return at >= 0 && at + 3 < colours.size() ? colours.mid(at, 4) : QStringList();
}

// Both axes a little wider than the history (the end points' markers whole, not cut by the
// frame), once there is a history.
void PadAxes(QObject* holder, vtkSMProxy* view, vtkPVDataInformation* info)
{
  for (const char* axis : { "Left", "Bottom" })
  {
    vtkPVArrayInformation* values = info
      ? info->GetArrayInformation(axis[0] == 'L' ? "Mass" : "Time", vtkDataObject::ROW)
      : nullptr;
    if (!values || values->GetNumberOfTuples() < 2)
    {
      continue;
    }
    const double* range = values->GetComponentRange(0);
    const double pad = 0.06 * (range[1] - range[0]) + 1e-6 * std::abs(range[1]);
    const std::string name(axis), use = name + "AxisUseCustomRange",
                                  low = name + "AxisRangeMinimum", high = name + "AxisRangeMaximum";
    const QByteArray key = QByteArray("phewRange") + axis;
    SetUnlessChanged(
      holder, key.constData(),
      [&]() {
        return Values(view, use.c_str()) + Values(view, low.c_str()) + Values(view, high.c_str());
      },
      [&]() {
        vtkSMPropertyHelper(view, use.c_str()).Set(1);
        vtkSMPropertyHelper(view, low.c_str()).Set(range[0] - pad);
        vtkSMPropertyHelper(view, high.c_str()).Set(range[1] + pad);
      });
  }
}

// The chart's title names the structure of the Mass History on the port (a final halo, or a
// structure of an earlier step and the final halo it ends in; none: no title), and its line
// has that final halo's colour in the drawing.
void TitleChart(pqDataRepresentation* representation)
{
  vtkPVDataInformation* info = representation->getInputDataInformation();
  const long structure = Number(info, "Structure", vtkDataObject::FIELD, 0, -1);
  const long step = Number(info, "StructureStep", vtkDataObject::FIELD, 0, -1);
  const long final = Number(info, FINAL_IDS, vtkDataObject::ROW, 0, -1);
  const long last = Number(info, "Step", vtkDataObject::ROW, 1, -1);
  std::string title;
  if (structure >= 0 && step == last && final == structure)
  {
    title = "Mass history of final halo " + std::to_string(final);
  }
  else if (structure >= 0)
  {
    title = "Mass history of structure " + std::to_string(structure) + " of step " +
      std::to_string(step) + (final >= 0 ? " (final halo " + std::to_string(final) + ")" : "");
  }
  vtkSMProxy* view = representation->getView()->getProxy();
  vtkSMPropertyHelper(view, "ChartTitle").Set(title.c_str());
  PadAxes(representation, view, info);
  view->UpdateVTKObjects();
  if (structure < 0) // no history yet: the series' colour is ParaView's until there is one
  {
    return;
  }
  double rgb[3];
  phew_colour_rgb(
    static_cast<int32_t>(Number(info, phew_gui::HALO_COLOUR, vtkDataObject::FIELD, 0, -1)), rgb);
  vtkSMProxy* proxy = representation->getProxy();
  SetUnlessChanged(
    representation, "phewMassColour", [proxy]() { return MassColour(proxy); },
    [proxy, &rgb]() {
      vtkSMPropertyHelper colour(proxy, "SeriesColor");
      colour.SetNumberOfElements(4);
      colour.Set(0, "Mass");
      for (unsigned int c = 0; c < 3; ++c)
      {
        colour.Set(c + 1, std::to_string(rgb[c]).c_str());
      }
    });
  proxy->UpdateVTKObjects();
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
  vtkSMPropertyHelper(view, "LeftAxisTitle").Set("Mass");
  vtkSMPropertyHelper(view, "ShowLegend").Set(0); // one series, named by the axis and title
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
// A new step or another Structure: the drawing is shown whole when it has a new row, the
// chart's series, title and colour follow.
void pqPHEWMergerTreeBehavior::follow(pqPipelineSource* source)
{
  // A history started again (fewer steps): a structure chosen in the old one is no longer
  // there (its step may not exist yet, its id may name another structure): the most massive.
  const int steps = DrawnSteps(source->getOutputPort(TREE_DRAWING_PORT)->getDataInformation());
  if (steps < source->property("phewSteps").toInt())
  {
    phew_gui::FollowInMassHistory(source, -1, -1);
  }
  source->setProperty("phewSteps", steps);
  for (pqDataRepresentation* representation :
    source->getRepresentations(TREE_DRAWING_PORT, nullptr))
  {
    vtkSMProxy* proxy = representation->getProxy();
    // a new row of steps: show the whole drawing again (not on other runs: the user's zoom);
    // the step labels and the frame follow the drawing on every run
    if (steps != representation->property("phewSteps").toInt())
    {
      representation->setProperty("phewSteps", steps);
      SizePoints(representation);
      proxy->UpdateVTKObjects();
      FitDrawing(representation); // (labels the steps)
    }
    else
    {
      LabelSteps(representation);
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
