#include "pqPHEWDendrogramZoom.h"
#include "pqPHEWFilters.h"
#include "pqPHEWHelpers.h"

#include "pqDataRepresentation.h"
#include "pqOutputPort.h"
#include "pqPipelineSource.h"
#include "pqRenderView.h"
#include "pqServer.h"

#include "vtkDataObject.h"
#include "vtkPVArrayInformation.h"
#include "vtkPVDataInformation.h"
#include "vtkSMPropertyHelper.h"
#include "vtkSMSessionProxyManager.h"
#include "vtkSMSourceProxy.h"
#include "vtkSMProxy.h"
#include "vtkSmartPointer.h"

#include <QVariant>

#include <algorithm>

namespace
{
// The clump finder's Dendrogram Plot (vtkPHEWClumpFinder::OutputPorts).
const int DENDROGRAM_PLOT_PORT = 5;
// A representation's Qt property: zoomed to a halo (the whole plot is shown otherwise).
const char* const ZOOMED = "phewZoomedToHalo";

// The HaloId of the plot's selected lines (range[0] = range[1]); false when no halo, or more
// than one, is selected.
bool SelectedHaloes(pqOutputPort* port, double range[2])
{
  vtkSMSourceProxy* plot = port->getSourceProxy();
  const auto number = static_cast<unsigned int>(port->getPortNumber());
  vtkSMSourceProxy* selection = plot->GetSelectionInput(number);
  auto extract = selection ? phew_gui::ExtractSelected(port->getServer(), plot, number, selection,
                               plot->GetSelectionInputPort(number))
                           : nullptr;
  if (!extract)
  {
    return false;
  }
  vtkPVArrayInformation* haloes =
    extract->GetDataInformation()->GetArrayInformation("HaloId", vtkDataObject::CELL);
  if (!haloes || haloes->GetNumberOfTuples() == 0 || haloes->GetComponentRange(0)[1] < 0)
  {
    return false;
  }
  range[0] = std::max(0.0, haloes->GetComponentRange(0)[0]);
  range[1] = haloes->GetComponentRange(0)[1];
  return range[0] == range[1]; // one halo (several: the view stays as it is)
}

// The bounds of the plot's lines of those haloes, padded; false when there are none.
bool SubtreeBounds(pqOutputPort* port, const double range[2], double bounds[6])
{
  auto threshold = phew_gui::NewHiddenFilter(port->getServer(), "Threshold");
  if (!threshold)
  {
    return false;
  }
  vtkSMPropertyHelper(threshold, "Input").Set(port->getSourceProxy(), port->getPortNumber());
  // (index, port, connection, association, name): a new proxy has no default to amend
  const char* scalars[5] = { "0", "0", "0", "1", "HaloId" }; // 1: cells
  vtkSMPropertyHelper selected(threshold, "SelectInputScalars");
  selected.SetNumberOfElements(5);
  for (unsigned int k = 0; k < 5; ++k)
  {
    selected.Set(k, scalars[k]);
  }
  vtkSMPropertyHelper(threshold, "LowerThreshold").Set(range[0]);
  vtkSMPropertyHelper(threshold, "UpperThreshold").Set(range[1]);
  threshold->UpdateVTKObjects();
  phew_gui::UpdateAtShownTime(threshold, port->getServer());
  vtkPVDataInformation* info = threshold->GetDataInformation();
  if (!info || info->GetNumberOfCells() == 0)
  {
    return false;
  }
  info->GetBounds(bounds);
  const double dx = 0.08 * (bounds[1] - bounds[0]) + 1e-9, dy = 0.08 * (bounds[3] - bounds[2]);
  bounds[0] -= dx;
  bounds[1] += dx;
  bounds[2] -= dy;
  bounds[3] += dy;
  return true;
}

// The frame of the plot's data axes.
void SetFrame(vtkSMProxy* axes, const double bounds[6])
{
  vtkSMPropertyHelper(axes, "CustomBounds").Set(bounds, 6);
  vtkSMPropertyHelper(axes, "UseCustomBounds").Set(1);
  axes->UpdateVTKObjects();
}

// The plot stretched along x by `stretch` (its data axes follow, labelled in the plot's own
// units), the camera and the frame on `bounds` (the plot's, unstretched; nullptr: the whole
// plot): a halo's subtree is narrow and tall, and a render view zooms both axes alike.
void Frame(
  pqDataRepresentation* representation, pqRenderView* view, double stretch, const double* bounds)
{
  vtkSMProxy* proxy = representation->getProxy();
  const double scale[3] = { stretch, 1.0, 1.0 };
  vtkSMPropertyHelper(proxy, "Scale", true).Set(scale, 3);
  proxy->UpdateVTKObjects();
  representation->setProperty(ZOOMED, bounds != nullptr);
  if (!bounds) // the whole plot
  {
    phew_gui::PadDendrogramFrame(representation);
    view->resetDisplay();
    view->render();
    return;
  }
  // the frame and its density axis around the subtree (the frame is in stretched units)
  if (vtkSMProxy* axes = vtkSMPropertyHelper(proxy, "DataAxesGrid", true).GetAsProxy())
  {
    const double frame[6] = { bounds[0] * stretch, bounds[1] * stretch, bounds[2], bounds[3],
      bounds[4], bounds[5] };
    SetFrame(axes, frame);
  }
  // looking down z at the middle of the stretched bounds, their height filling the view's
  const double centre[3] = { 0.5 * (bounds[0] + bounds[1]) * stretch, 0.5 * (bounds[2] + bounds[3]),
    0.0 };
  // (the frame inside any view at least 1.6 times as wide as tall)
  const double half =
    0.6 * std::max(bounds[3] - bounds[2], (bounds[1] - bounds[0]) * stretch / 1.6);
  const double position[3] = { centre[0], centre[1], centre[2] + 10.0 * half + 1.0 };
  const double up[3] = { 0.0, 1.0, 0.0 };
  vtkSMProxy* camera = view->getProxy();
  vtkSMPropertyHelper(camera, "CameraFocalPoint").Set(centre, 3);
  vtkSMPropertyHelper(camera, "CameraPosition").Set(position, 3);
  vtkSMPropertyHelper(camera, "CameraViewUp").Set(up, 3);
  vtkSMPropertyHelper(camera, "CameraParallelScale").Set(half);
  camera->UpdateVTKObjects();
  view->render();
}

// How much wider the subtree is drawn: until it is twice as wide as tall, as the whole plot
// is, but at most 3 times (the rank numbers above the haloes stretch too) and never narrower.
double Stretch(const double bounds[6])
{
  const double width = bounds[1] - bounds[0], height = bounds[3] - bounds[2];
  return width > 0.0 && height > 0.0 ? std::min(3.0, std::max(1.0, 2.0 * height / width)) : 1.0;
}
}

namespace phew_gui
{
void PadDendrogramFrame(pqDataRepresentation* representation)
{
  vtkSMProxy* axes =
    vtkSMPropertyHelper(representation->getProxy(), "DataAxesGrid", true).GetAsProxy();
  vtkPVDataInformation* info = representation->getInputDataInformation();
  if (!axes || !info || info->GetNumberOfPoints() == 0)
  {
    return;
  }
  double bounds[6];
  info->GetBounds(bounds);
  const double dx = 0.03 * (bounds[1] - bounds[0]), dy = 0.05 * (bounds[3] - bounds[2]);
  // (in the units of the drawing, stretched along x by a zoom)
  const double stretch =
    vtkSMPropertyHelper(representation->getProxy(), "Scale", true).GetAsDouble(0);
  const double padded[6] = { (bounds[0] - dx) * stretch, (bounds[1] + dx) * stretch, bounds[2] - dy,
    bounds[3] + dy, bounds[4], bounds[5] };
  SetFrame(axes, padded);
}

void ZoomDendrogramToSelection(pqPipelineSource* finder)
{
  if (!IsFilter(finder, "PHEWClumpFinder") ||
    finder->getNumberOfOutputPorts() <= DENDROGRAM_PLOT_PORT)
  {
    return;
  }
  pqOutputPort* port = finder->getOutputPort(DENDROGRAM_PLOT_PORT);
  double range[2], bounds[6];
  const bool haloes = SelectedHaloes(port, range) && SubtreeBounds(port, range, bounds);
  for (pqDataRepresentation* representation : port->getRepresentations(nullptr))
  {
    auto* view = qobject_cast<pqRenderView*>(representation->getView());
    if (!view)
    {
      continue;
    }
    if (haloes)
    {
      Frame(representation, view, Stretch(bounds), bounds);
    }
    else if (representation->property(ZOOMED).toBool())
    {
      Frame(representation, view, 1.0, nullptr); // the selection is gone: the whole plot again
    }
  }
}
}
