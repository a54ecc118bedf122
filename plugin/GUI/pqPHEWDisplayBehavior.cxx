#include "pqPHEWDisplayBehavior.h"
#include "pqPHEWDendrogramZoom.h"
#include "pqPHEWFilters.h"
#include "pqPHEWHelpers.h"
#include "pqPHEWLegend.h"
#include "pqPHEWHaloColours.h"

#include "pqApplicationCore.h"
#include "pqDataRepresentation.h"
#include "pqOutputPort.h"
#include "pqPipelineFilter.h"
#include "pqPipelineSource.h"
#include "pqRenderView.h"
#include "pqServerManagerModel.h"
#include "pqSpreadSheetView.h"
#include "pqView.h"

#include "vtkDataObject.h"
#include "phew/phew.h"
#include "vtkType.h"
#include "vtkPVArrayInformation.h"
#include "vtkPVDataInformation.h"
#include "vtkSMPVRepresentationProxy.h"
#include "vtkSMPropertyHelper.h"
#include "vtkSMProxy.h"
#include "vtkSMSourceProxy.h"
#include "vtkSMTransferFunctionProxy.h"
#include "vtkSMViewLayoutProxy.h"
#include "vtkSMViewProxy.h"

#include <QVariant>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <string>
#include <vector>

namespace
{
// The filter's ports (vtkPHEWClumpFinder::OutputPorts).
const int CLUMP_GEOMETRY_PORT = 4;
const int DENDROGRAM_PLOT_PORT = 5;

// 12 qualitative colours, distinct on ParaView's grey-blue background and on white.
const double Palette[12][3] = { { 0.894, 0.102, 0.110 }, { 0.216, 0.494, 0.722 },
  { 0.302, 0.686, 0.290 }, { 0.596, 0.306, 0.639 }, { 1.000, 0.498, 0.000 },
  { 1.000, 1.000, 0.200 }, { 0.651, 0.337, 0.157 }, { 0.969, 0.506, 0.749 },
  { 0.400, 0.761, 0.647 }, { 0.988, 0.553, 0.384 }, { 0.553, 0.627, 0.796 },
  { 0.651, 0.847, 0.329 } };

// The ports styled here: the clump finder's Clump Geometry and Dendrogram Plot, the halo
// finders' labelled particles.
std::vector<int> StyledPorts(pqPipelineSource* source)
{
  if (phew_gui::IsFilter(source, "PHEWClumpFinder"))
  {
    return { CLUMP_GEOMETRY_PORT, DENDROGRAM_PLOT_PORT };
  }
  return phew_gui::IsHaloFinder(source) ? std::vector<int>{ 0 } : std::vector<int>{};
}

// The ids a styled port is coloured by.
const char* IdArray(pqPipelineSource* source)
{
  return phew_gui::IsHaloFinder(source) ? "GroupId" : "ClumpId";
}

// Where the ids live on this port's data (cells for faces and lines, else points) and how
// many structures there are (the largest id + 1); -1 when the port has no such array.
int IdAssociation(vtkPVDataInformation* info, const char* ids, int& clumps)
{
  clumps = 0;
  for (int association : { vtkDataObject::CELL, vtkDataObject::POINT })
  {
    if (vtkPVArrayInformation* array = info->GetArrayInformation(ids, association))
    {
      const double* range = array->GetComponentRange(0);
      clumps = range[1] >= 0 ? static_cast<int>(std::lround(range[1])) + 1 : 0;
      return association;
    }
  }
  return -1;
}

// True when an id below 0 (no structure) is drawn on any styled port of the source: they
// share one colour map per id array, which must then hide it.
bool DrawsNegative(pqPipelineSource* source, const char* ids)
{
  for (int number : StyledPorts(source))
  {
    vtkPVDataInformation* info = source->getOutputPort(number)->getDataInformation();
    for (int association : { vtkDataObject::CELL, vtkDataObject::POINT })
    {
      vtkPVArrayInformation* array = info ? info->GetArrayInformation(ids, association) : nullptr;
      if (array && array->GetNumberOfTuples() > 0 && array->GetComponentRange(0)[0] < 0)
      {
        return true;
      }
    }
  }
  return false;
}

// Up to this many clumps the legend names every one (one row each); beyond, rows would
// overlap (742 clumps in a 256^3 field), and the legend is a bar of discrete colours from the
// first id to the last.
const int NAMED_CLUMPS_MAX = 14;

// Each clump 0 .. clumps-1 gets its palette colour (the palette repeats). Few clumps: one
// category each, -1 (no clump) and any other value transparent. Many: a colour map of one
// discrete step per id, each step flat around its integer, so every id has its palette
// colour; -1 is then made transparent by opacity mapping (only where the data has -1 at all:
// `hideNegative`, as it slows the drawing).
void SetCategories(vtkSMProxy* lut, int clumps, bool hideNegative)
{
  std::vector<double> colours;
  for (int c = 0; c < clumps; ++c)
  {
    colours.insert(colours.end(), Palette[c % 12], Palette[c % 12] + 3);
  }
  if (clumps <= NAMED_CLUMPS_MAX)
  {
    std::vector<std::string> annotations;
    for (int c = 0; c < clumps; ++c)
    {
      annotations.push_back(std::to_string(c));
      annotations.push_back(std::to_string(c));
    }
    vtkSMPropertyHelper(lut, "IndexedLookup").Set(1);
    vtkSMPropertyHelper annotationHelper(lut, "Annotations");
    annotationHelper.SetNumberOfElements(static_cast<unsigned int>(annotations.size()));
    for (unsigned int i = 0; i < annotations.size(); ++i)
    {
      annotationHelper.Set(i, annotations[i].c_str());
    }
    vtkSMPropertyHelper(lut, "IndexedColors")
      .Set(colours.data(), static_cast<unsigned int>(colours.size()));
    vtkSMPropertyHelper(lut, "NanOpacity").Set(0.0);
    vtkSMPropertyHelper(lut, "EnableOpacityMapping").Set(0); // (left by many ids before)
  }
  else
  {
    std::vector<double> points;
    for (int c = 0; c < clumps; ++c)
    {
      for (double x : { c - 0.5, c + 0.4999 })
      {
        points.push_back(x);
        points.insert(points.end(), &colours[3 * c], &colours[3 * c] + 3);
      }
    }
    vtkSMPropertyHelper(lut, "IndexedLookup").Set(0);
    vtkSMPropertyHelper(lut, "Annotations").SetNumberOfElements(0); // (left by few ids before)
    vtkSMPropertyHelper(lut, "RGBPoints")
      .Set(points.data(), static_cast<unsigned int>(points.size()));
    // one table value per id over (about) [-0.5, clumps - 0.5]: each value's centre is an
    // integer; the range stays the points' (never rescaled to the data)
    vtkSMPropertyHelper(lut, "Discretize").Set(1);
    vtkSMPropertyHelper(lut, "NumberOfTableValues").Set(clumps);
    vtkSMPropertyHelper(lut, "AutomaticRescaleRangeMode").Set(-1);
    vtkSMProxy* opacity = vtkSMPropertyHelper(lut, "ScalarOpacityFunction").GetAsProxy();
    if (hideNegative && opacity)
    {
      // (x, opacity, midpoint, sharpness): 0 up to -0.5, 1 from there on
      const double ramp[] = { -1.0, 0.0, 0.5, 0.0, -0.5, 0.0, 0.5, 0.0, -0.4999, 1.0, 0.5, 0.0, //
        clumps - 0.5, 1.0, 0.5, 0.0 };
      vtkSMPropertyHelper(opacity, "Points").Set(ramp, 16);
      opacity->UpdateVTKObjects();
    }
    vtkSMPropertyHelper(lut, "EnableOpacityMapping").Set(hideNegative ? 1 : 0);
  }
  lut->UpdateVTKObjects();
}

// True when the colour map is one SetCategories makes: categories (indexed), or one discrete
// step per id. Colours changed by hand inside either are made again on the next run; a map
// switched to something else (a preset, no discretization) is left alone.
bool IsCategories(vtkSMProxy* lut)
{
  if (vtkSMPropertyHelper(lut, "IndexedLookup").GetAsInt() == 1)
  {
    return true;
  }
  vtkSMPropertyHelper points(lut, "RGBPoints");
  return vtkSMPropertyHelper(lut, "Discretize").GetAsInt() == 1 &&
    static_cast<int>(points.GetNumberOfElements()) ==
    8 * vtkSMPropertyHelper(lut, "NumberOfTableValues").GetAsInt() &&
    points.GetNumberOfElements() >= 8 && points.GetAsDouble(0) == -0.5;
}

// The legend's labels for the kind of colour map SetCategories made: one per category, or
// ticks alone on a bar of many ids (its ends are half-integers, -0.5).
void LabelLegend(vtkSMProxy* representation, vtkSMProxy* view)
{
  vtkSMProxy* lut = vtkSMPropertyHelper(representation, "LookupTable", true).GetAsProxy();
  if (vtkSMProxy* bar =
        lut ? vtkSMTransferFunctionProxy::FindScalarBarRepresentation(lut, view) : nullptr)
  {
    vtkSMPropertyHelper(bar, "ScalarBarLength").Set(0.8);
    vtkSMPropertyHelper(bar, "AddRangeLabels")
      .Set(vtkSMPropertyHelper(lut, "IndexedLookup").GetAsInt());
    bar->UpdateVTKObjects();
  }
}

// The legend of the representation's colour map in `view`, long enough for one row per clump.
void ShowLegend(vtkSMProxy* representation, vtkSMProxy* view)
{
  vtkSMPVRepresentationProxy::SetScalarBarVisibility(representation, view, true);
  LabelLegend(representation, view);
}

// Give the view at `location`'s side of every split above it the larger share.
void Enlarge(vtkSMViewLayoutProxy* layout, int location, double share)
{
  for (int child = location; child > 0; child = vtkSMViewLayoutProxy::GetParent(child))
  {
    const int parent = vtkSMViewLayoutProxy::GetParent(child);
    const bool first = child == 2 * parent + 1;
    layout->SetSplitFraction(parent, first ? share : 1.0 - share);
  }
}

// The view keeps most of the window (62 %) in its layout, if it is in one.
void Enlarge(pqView* view)
{
  auto* proxy = vtkSMViewProxy::SafeDownCast(view->getProxy());
  if (vtkSMViewLayoutProxy* layout = proxy ? vtkSMViewLayoutProxy::FindLayout(proxy) : nullptr)
  {
    Enlarge(layout, layout->GetViewLocation(proxy), 0.62);
  }
}

// Spreadsheets showing one of the source's tables show its rows (Row Data) again.
void ShowRows(pqPipelineSource* source)
{
  for (int number = 0; number < source->getNumberOfOutputPorts(); ++number)
  {
    pqOutputPort* port = source->getOutputPort(number);
    vtkPVDataInformation* info = port->getDataInformation();
    if (!info || info->GetDataSetType() != VTK_TABLE)
    {
      continue;
    }
    for (pqDataRepresentation* representation : port->getRepresentations(nullptr))
    {
      pqView* view = representation->getView();
      if (qobject_cast<pqSpreadSheetView*>(view))
      {
        vtkSMPropertyHelper(view->getProxy(), "FieldAssociation")
          .Set(vtkDataObject::FIELD_ASSOCIATION_ROWS);
        view->getProxy()->UpdateVTKObjects();
        view->render();
      }
    }
  }
}

// The render view (not the dendrogram's) showing this source's clump geometry.
pqView* MainView(pqPipelineSource* source)
{
  for (pqDataRepresentation* representation :
    source->getRepresentations(CLUMP_GEOMETRY_PORT, nullptr))
  {
    if (representation->getView())
    {
      return representation->getView();
    }
  }
  return nullptr;
}

// More haloes than this: the drawings are coloured by halo (HaloColour: the ten largest a
// colour each, named in the legend, the others sharing eight), not a colour per id.
const int HALO_COLOURS_FROM = 20;

// Whether the source's drawings are coloured by halo: HaloColour is there and there are many
// haloes (the clump finder's HaloId, the halo finders' GroupId, on the styled port).
bool ByHalo(vtkPVDataInformation* info, pqPipelineSource* source)
{
  int haloes = 0;
  const char* ids = phew_gui::IsHaloFinder(source) ? "GroupId" : "HaloId";
  return info && IdAssociation(info, phew_gui::HALO_COLOUR, haloes) >= 0 &&
    IdAssociation(info, ids, haloes) >= 0 && haloes > HALO_COLOURS_FROM;
}

// A representation's Qt property: coloured by halo (true) or by id (false) by ColourByIds.
const char* const BY_HALO = "phewByHalo";

// Colours the representation by the ids of its source, one colour per structure, or by halo
// when there are many, with one legend, in the 3D view (`structures`). Returns where the ids
// are (-1: the port has none).
int ColourByIds(pqDataRepresentation* representation, bool structures)
{
  pqPipelineSource* source = representation->getInput();
  pqView* view = representation->getView();
  vtkPVDataInformation* info = representation->getInputDataInformation();
  const bool byHalo = ByHalo(info, source);
  representation->setProperty(BY_HALO, byHalo);
  const char* ids = byHalo ? phew_gui::HALO_COLOUR : IdArray(source);
  vtkSMProxy* proxy = representation->getProxy();
  int clumps = 0;
  const int association = IdAssociation(info, ids, clumps);
  if (association < 0)
  {
    return association;
  }
  // ParaView coloured it by the active scalars (ClumpId) and showed their legend: gone with
  // that colouring when it is by halo
  const char* before =
    vtkSMPropertyHelper(proxy, "ColorArrayName", true).GetInputArrayNameToProcess();
  if (before && std::strcmp(before, ids) != 0 && view)
  {
    vtkSMPVRepresentationProxy::SetScalarBarVisibility(proxy, view->getProxy(), false);
  }
  // (false when it already was coloured by the ids, as ParaView does for active scalars)
  vtkSMPVRepresentationProxy::SetScalarColoring(proxy, ids, association);
  vtkSMProxy* lut = vtkSMPropertyHelper(proxy, "LookupTable", true).GetAsProxy();
  const int haloes = lut && byHalo ? phew_gui::SetHaloColours(lut, source) : 0;
  if (lut && !byHalo)
  {
    SetCategories(lut, clumps, DrawsNegative(source, ids));
  }
  // The dendrogram's view gets a legend from ParaView's Apply (it shows a legend for every new
  // coloured representation), possibly after this: hide it after each of that view's renders
  // until it has been hidden once.
  if (structures)
  {
    ShowLegend(proxy, view->getProxy());
    if (byHalo && lut)
    {
      phew_gui::LabelHaloLegend(lut, view->getProxy(), haloes);
    }
    return association;
  }
  phew_gui::HideLegendOnceShown(representation);
  return association;
}

// True when a new run crossed the number of haloes at which the colouring changes (by halo or
// by id) and the representation is still coloured as ColourByIds chose (a colouring the user
// chose stays).
bool CrossedHaloColours(pqDataRepresentation* representation, const char* ids)
{
  const QVariant before = representation->property(BY_HALO);
  const char* colouredBy = vtkSMPropertyHelper(representation->getProxy(), "ColorArrayName", true)
                             .GetInputArrayNameToProcess();
  if (!before.isValid() || !colouredBy ||
    std::strcmp(colouredBy, before.toBool() ? phew_gui::HALO_COLOUR : ids) != 0)
  {
    return false;
  }
  return ByHalo(representation->getInputDataInformation(), representation->getInput()) !=
    before.toBool();
}

// The clump finder's Labels, drawn by ParaView as the box's outline, coloured by its active
// scalars (ClumpId): a plain outline instead, so that no second legend (ClumpId's, beside the
// haloes') appears.
void PlainOutline(pqDataRepresentation* representation)
{
  vtkSMProxy* proxy = representation->getProxy();
  const char* type = vtkSMPropertyHelper(proxy, "Representation", true).GetAsString();
  if (type && std::strcmp(type, "Outline") == 0)
  {
    if (vtkSMPVRepresentationProxy::GetUsingScalarColoring(proxy))
    {
      vtkSMPVRepresentationProxy::SetScalarBarVisibility(
        proxy, representation->getView()->getProxy(), false);
    }
    vtkSMPVRepresentationProxy::SetScalarColoring(proxy, nullptr, vtkDataObject::POINT);
    proxy->UpdateVTKObjects();
  }
}

// The clump finder draws only the particles of its clumps: its input's particles stay in the
// 3D view as a faint grey cloud behind them, for context (the halo finders draw every particle,
// those of no group in the colour map's faint grey).
void ShowContext(pqDataRepresentation* representation)
{
  auto* filter = qobject_cast<pqPipelineFilter*>(representation->getInput());
  const QList<pqOutputPort*> inputs = filter ? filter->getAllInputs() : QList<pqOutputPort*>();
  pqDataRepresentation* input =
    inputs.empty() ? nullptr : inputs.first()->getRepresentation(representation->getView());
  if (!input)
  {
    return;
  }
  vtkSMProxy* proxy = input->getProxy();
  vtkSMPVRepresentationProxy::SetScalarColoring(proxy, nullptr, vtkDataObject::POINT);
  double grey[3];
  phew_colour_rgb(-1, grey);
  vtkSMPropertyHelper(proxy, "Representation").Set("Points");
  vtkSMPropertyHelper(proxy, "PointSize", true).Set(1.0);
  vtkSMPropertyHelper(proxy, "RenderPointsAsSpheres", true).Set(0);
  vtkSMPropertyHelper(proxy, "AmbientColor", true).Set(grey, 3);
  vtkSMPropertyHelper(proxy, "DiffuseColor", true).Set(grey, 3);
  vtkSMPropertyHelper(proxy, "Opacity", true).Set(0.08);
  proxy->UpdateVTKObjects();
  input->setVisible(true);
}

// The clumps or groups in the 3D view: particles as spheres, seen from a corner.
void StyleStructures(pqDataRepresentation* representation, int association)
{
  vtkSMProxy* proxy = representation->getProxy();
  pqView* view = representation->getView();
  if (association == vtkDataObject::POINT)
  {
    // Particles: the clump (group) particles as points big enough to see among thousands.
    vtkSMPropertyHelper(proxy, "Representation").Set("Points");
    vtkSMPropertyHelper(proxy, "PointSize", true).Set(4.0);
    vtkSMPropertyHelper(proxy, "RenderPointsAsSpheres", true).Set(1);
    if (phew_gui::IsFilter(representation->getInput(), "PHEWClumpFinder"))
    {
      ShowContext(representation);
    }
  }
  // Look at the clumps from a corner, so that the first picture shows them in 3D.
  if (auto* renderView = qobject_cast<pqRenderView*>(view))
  {
    renderView->resetViewDirection(-1, -1, -1, 0, 0, 1);
  }
  // The 3D view keeps most of the window beside the halo finders' Groups table (the clump
  // finder's is enlarged with its dendrogram's view).
  if (phew_gui::IsHaloFinder(representation->getInput()))
  {
    Enlarge(view);
  }
}

// The title of the dendrogram's x axis, after its layout (by mass: each as wide as its mass).
void TitleX(pqDataRepresentation* representation)
{
  vtkSMProxy* axes =
    vtkSMPropertyHelper(representation->getProxy(), "DataAxesGrid", true).GetAsProxy();
  vtkSMProxy* finder = representation->getInput()->getProxy();
  if (!axes || !finder)
  {
    return;
  }
  const bool byMass = vtkSMPropertyHelper(finder, "DendrogramLayout", true).GetAsInt() == 0;
  vtkSMPropertyHelper(axes, "XTitle")
    .Set(byMass ? "haloes by decreasing mass, each as wide as its mass"
                : "clumps, depth first by peak density");
  axes->UpdateVTKObjects();
}

// The dendrogram: thicker lines, the density axis, the plot filling its view.
void StyleDendrogram(pqDataRepresentation* representation)
{
  vtkSMProxy* proxy = representation->getProxy();
  vtkSMPropertyHelper(proxy, "LineWidth", true).Set(2.0);
  // Selected (linked) nodes stand out over their own colour.
  vtkSMPropertyHelper(proxy, "SelectionLineWidth", true).Set(5.0);
  if (vtkSMProxy* axes = vtkSMPropertyHelper(proxy, "DataAxesGrid", true).GetAsProxy())
  {
    vtkSMPropertyHelper(axes, "GridAxesVisibility").Set(1);
    // x orders the structures: its title without numbers (the bottom edge), the density
    // axis with them (the left edge)
    TitleX(representation);
    vtkSMPropertyHelper(axes, "XAxisUseCustomLabels").Set(1);
    vtkSMPropertyHelper(axes, "XAxisLabels").SetNumberOfElements(0);
    vtkSMPropertyHelper(axes, "AxesToLabel").Set(3);
    vtkSMPropertyHelper(axes, "YTitle").Set("log10 density");
    vtkSMPropertyHelper(axes, "ZTitle").Set("");
    vtkSMPropertyHelper(axes, "ShowGrid").Set(0);
    // Only the face behind the lines (min-XY), so that no z labels show in 2D.
    vtkSMPropertyHelper(axes, "FacesToRender").Set(0x04);
    axes->UpdateVTKObjects();
  }
  phew_gui::PadDendrogramFrame(representation);
  proxy->UpdateVTKObjects();
  // The 3D view keeps most of the window; then the plot fills its own view.
  if (pqView* main = MainView(representation->getInput()))
  {
    Enlarge(main);
  }
  representation->getView()->resetDisplay();
}
}

//-----------------------------------------------------------------------------
pqPHEWDisplayBehavior::pqPHEWDisplayBehavior(QObject* parent)
  : Superclass(parent)
{
}

//-----------------------------------------------------------------------------
pqPHEWDisplayBehavior::~pqPHEWDisplayBehavior() = default;

//-----------------------------------------------------------------------------
void pqPHEWDisplayBehavior::startup()
{
  pqServerManagerModel* model = pqApplicationCore::instance()->getServerManagerModel();
  QObject::connect(model, &pqServerManagerModel::representationAdded, this,
    &pqPHEWDisplayBehavior::onRepresentationAdded);
  QObject::connect(
    model, &pqServerManagerModel::sourceAdded, this, &pqPHEWDisplayBehavior::onSourceAdded);
}

//-----------------------------------------------------------------------------
void pqPHEWDisplayBehavior::shutdown()
{
  pqServerManagerModel* model = pqApplicationCore::instance()->getServerManagerModel();
  QObject::disconnect(model, nullptr, this, nullptr);
}

//-----------------------------------------------------------------------------
void pqPHEWDisplayBehavior::onSourceAdded(pqPipelineSource* source)
{
  if (!StyledPorts(source).empty())
  {
    QObject::connect(source, QOverload<pqPipelineSource*>::of(&pqPipelineSource::dataUpdated), this,
      &pqPHEWDisplayBehavior::onDataUpdated);
  }
}

//-----------------------------------------------------------------------------
void pqPHEWDisplayBehavior::onDataUpdated(pqPipelineSource* source)
{
  // After the views have shown the new data.
  phew_gui::Later(this, source, &pqPHEWDisplayBehavior::updateCategories);
}

//-----------------------------------------------------------------------------
void pqPHEWDisplayBehavior::onRepresentationAdded(pqRepresentation* representation)
{
  // Its input is not connected yet: look at it once the representation is set up.
  if (auto* data = qobject_cast<pqDataRepresentation*>(representation))
  {
    phew_gui::Later(this, data, &pqPHEWDisplayBehavior::style);
  }
}

//-----------------------------------------------------------------------------
void pqPHEWDisplayBehavior::style(pqDataRepresentation* representation)
{
  pqOutputPort* port = representation->getOutputPortFromInput();
  pqView* view = representation->getView();
  pqPipelineSource* source = representation->getInput();
  const std::vector<int> styled = StyledPorts(source);
  if (port && view && port->getPortNumber() == 0 && phew_gui::IsFilter(source, "PHEWClumpFinder"))
  {
    PlainOutline(representation);
  }
  if (!port || !view ||
    std::find(styled.begin(), styled.end(), port->getPortNumber()) == styled.end())
  {
    return;
  }
  // the 3D view's picture: clumps or groups; else the dendrogram (each in its own kind of view)
  const bool structures = port->getPortNumber() != DENDROGRAM_PLOT_PORT;
  if (structures && !qobject_cast<pqRenderView*>(view))
  {
    return;
  }
  const int association = ColourByIds(representation, structures);
  if (structures)
  {
    StyleStructures(representation, association);
  }
  else
  {
    StyleDendrogram(representation);
  }
  representation->getProxy()->UpdateVTKObjects();
  view->render();
}

//-----------------------------------------------------------------------------
void pqPHEWDisplayBehavior::updateCategories(pqPipelineSource* source)
{
  const char* ids = IdArray(source);
  // (ParaView colours the Labels' outline by its active scalars after it was added)
  if (phew_gui::IsFilter(source, "PHEWClumpFinder"))
  {
    for (pqDataRepresentation* representation : source->getRepresentations(0, nullptr))
    {
      PlainOutline(representation);
    }
  }
  // A run that finds nothing leaves the drawings without ids: ParaView then draws them in a
  // solid colour, and the spreadsheets of the empty tables switch to another attribute. When
  // a later run finds structures again, style everything afresh.
  const char* emptied = "phewNothingFound";
  int found = 0;
  for (int number : StyledPorts(source))
  {
    int count = 0;
    IdAssociation(source->getOutputPort(number)->getDataInformation(), ids, count);
    found = std::max(found, count);
  }
  if (found == 0)
  {
    source->setProperty(emptied, true);
    return;
  }
  if (source->property(emptied).toBool())
  {
    source->setProperty(emptied, false);
    for (int number : StyledPorts(source))
    {
      for (pqDataRepresentation* representation : source->getRepresentations(number, nullptr))
      {
        style(representation);
      }
    }
    ShowRows(source);
    return;
  }
  std::map<vtkSMProxy*, int> haloMaps; // colour maps of haloes made in this pass: haloes
  for (int number : StyledPorts(source))
  {
    for (pqDataRepresentation* representation : source->getRepresentations(number, nullptr))
    {
      if (number == DENDROGRAM_PLOT_PORT) // (a zoom follows below)
      {
        TitleX(representation);
        phew_gui::PadDendrogramFrame(representation);
      }
      if (CrossedHaloColours(representation, ids))
      {
        ColourByIds(representation, number != DENDROGRAM_PLOT_PORT);
        representation->renderViewEventually();
        continue;
      }
      vtkSMProxy* proxy = representation->getProxy();
      vtkSMProxy* lut = vtkSMPropertyHelper(proxy, "LookupTable", true).GetAsProxy();
      const char* colouredBy =
        vtkSMPropertyHelper(proxy, "ColorArrayName", true).GetInputArrayNameToProcess();
      if (lut && colouredBy && std::strcmp(colouredBy, phew_gui::HALO_COLOUR) == 0 &&
        phew_gui::IsHaloColours(lut))
      {
        // (the drawings share one map: its masses fetched once per run)
        const auto made = haloMaps.find(lut);
        const int haloes = made != haloMaps.end()
          ? made->second
          : (haloMaps[lut] = phew_gui::SetHaloColours(lut, source));
        if (pqView* view = representation->getView())
        {
          phew_gui::LabelHaloLegend(lut, view->getProxy(), haloes);
        }
        representation->renderViewEventually();
        continue;
      }
      int clumps = 0;
      if (lut && colouredBy && std::strcmp(colouredBy, ids) == 0 && IsCategories(lut) &&
        IdAssociation(representation->getInputDataInformation(), ids, clumps) >= 0)
      {
        SetCategories(lut, clumps, DrawsNegative(source, ids));
        if (pqView* view = representation->getView())
        {
          LabelLegend(proxy, view->getProxy());
        }
        representation->renderViewEventually();
      }
    }
  }
  // a zoom on a halo made before this run: on the same halo again if it is still selected
  phew_gui::ZoomDendrogramToSelection(source);
}
