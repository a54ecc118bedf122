#include "pqPHEWHaloColours.h"
#include "pqPHEWFilters.h"
#include "pqPHEWHelpers.h"

#include "pqOutputPort.h"
#include "pqPipelineSource.h"
#include "pqServer.h"

#include "vtkAlgorithm.h"
#include "vtkDataArray.h"
#include "vtkSMPropertyHelper.h"
#include "vtkSMSessionProxyManager.h"
#include "vtkSMSourceProxy.h"
#include "vtkSMTransferFunctionProxy.h"
#include "vtkSmartPointer.h"
#include "vtkTable.h"
#include "vtkType.h"

#include "phew/phew.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <string>
#include <vector>

namespace
{
// The clump finder's Haloes table, the halo finders' Groups table.
const int HALOES_PORT = 3;
const int GROUPS_PORT = 1;
// A faint cloud: what belongs to no structure stays visible as context behind the haloes.
const double NO_STRUCTURE_OPACITY = 0.12;

// Rank 0's copy of a table on the client (the tables are complete on rank 0), as
// servermanager.Fetch does it: a reduction that passes rank 0's piece through, then a move to
// the client. nullptr when it cannot be made.
vtkSmartPointer<vtkTable> FetchTable(pqOutputPort* port)
{
  pqServer* server = port ? port->getServer() : nullptr;
  auto reducer = server ? phew_gui::NewHiddenFilter(server, "ReductionFilter") : nullptr;
  auto mover = server ? phew_gui::NewHiddenFilter(server, "ClientServerMoveData") : nullptr;
  if (!reducer || !mover)
  {
    return nullptr;
  }
  vtkSMPropertyHelper(reducer, "Input").Set(port->getSource()->getProxy(), port->getPortNumber());
  vtkSMPropertyHelper(reducer, "PassThrough").Set(0);
  reducer->UpdateVTKObjects();
  phew_gui::UpdateAtShownTime(reducer, server);
  vtkSMPropertyHelper(mover, "Input").Set(reducer);
  vtkSMPropertyHelper(mover, "OutputDataType").Set(VTK_TABLE);
  mover->UpdateVTKObjects();
  phew_gui::UpdateAtShownTime(mover, server);
  auto* algorithm = vtkAlgorithm::SafeDownCast(mover->GetClientSideObject());
  vtkTable* moved = algorithm ? vtkTable::SafeDownCast(algorithm->GetOutputDataObject(0)) : nullptr;
  if (!moved)
  {
    return nullptr;
  }
  auto copy = vtkSmartPointer<vtkTable>::New();
  copy->ShallowCopy(moved);
  return copy;
}

// The masses of the haloes (groups) of the source's last run, in table order.
std::vector<double> HaloMasses(pqPipelineSource* source)
{
  std::vector<double> masses;
  const int port = phew_gui::IsHaloFinder(source) ? GROUPS_PORT : HALOES_PORT;
  if (!source || port >= source->getNumberOfOutputPorts())
  {
    return masses;
  }
  vtkSmartPointer<vtkTable> table = FetchTable(source->getOutputPort(port));
  vtkDataArray* mass = table ? vtkDataArray::SafeDownCast(table->GetColumnByName("Mass")) : nullptr;
  for (vtkIdType row = 0; mass && row < mass->GetNumberOfTuples(); ++row)
  {
    masses.push_back(mass->GetComponent(row, 0));
  }
  return masses;
}

// "1   2.0e+14": a halo's rank by mass and its mass.
std::string Name(int rank, double mass)
{
  char text[64];
  std::snprintf(text, sizeof text, "%d   %.1e", rank, mass);
  return text;
}

// The names of the colours: the largest haloes' by rank and mass (decreasing mass, equal
// masses by the lower index: phew_colour_haloes' order), then "smaller haloes" on the first
// shared colour and nothing on the others.
std::vector<std::string> Names(const std::vector<double>& masses)
{
  std::vector<size_t> order(masses.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return std::isnan(masses[b]) ? !std::isnan(masses[a]) : masses[a] > masses[b];
  });
  std::vector<std::string> names;
  for (size_t rank = 0; rank < order.size() && rank < PHEW_COLOURS_OWN; ++rank)
  {
    names.push_back(Name(static_cast<int>(rank) + 1, masses[order[rank]]));
  }
  if (masses.size() > PHEW_COLOURS_OWN)
  {
    names.resize(PHEW_COLOURS_OWN);
    names.push_back("smaller haloes");
    names.resize(PHEW_COLOURS, "");
  }
  return names;
}
}

namespace phew_gui
{
const char* const HALO_COLOUR = "HaloColour";

int SetHaloColours(vtkSMProxy* lut, pqPipelineSource* source)
{
  const std::vector<double> masses = HaloMasses(source);
  std::vector<std::string> names = Names(masses);
  if (names.empty()) // no table (yet): every colour, unnamed
  {
    names.assign(PHEW_COLOURS, "");
  }
  std::vector<double> colours;
  vtkSMPropertyHelper annotations(lut, "Annotations");
  annotations.SetNumberOfElements(static_cast<unsigned int>(2 * names.size()));
  for (unsigned int c = 0; c < names.size(); ++c)
  {
    annotations.Set(2 * c, std::to_string(c).c_str());
    annotations.Set(2 * c + 1, names[c].c_str());
    double rgb[3];
    phew_colour_rgb(static_cast<int32_t>(c), rgb);
    colours.insert(colours.end(), rgb, rgb + 3);
  }
  double grey[3];
  phew_colour_rgb(-1, grey);
  vtkSMPropertyHelper(lut, "IndexedLookup").Set(1);
  vtkSMPropertyHelper(lut, "IndexedColors")
    .Set(colours.data(), static_cast<unsigned int>(colours.size()));
  vtkSMPropertyHelper(lut, "NanColor").Set(grey, 3);
  vtkSMPropertyHelper(lut, "NanOpacity").Set(NO_STRUCTURE_OPACITY);
  vtkSMPropertyHelper(lut, "EnableOpacityMapping").Set(0);
  lut->UpdateVTKObjects();
  return static_cast<int>(masses.size());
}

bool IsHaloColours(vtkSMProxy* lut)
{
  // (a preset or a continuous map chosen by the user is not indexed)
  return vtkSMPropertyHelper(lut, "IndexedLookup").GetAsInt() == 1;
}

void LabelHaloLegend(vtkSMProxy* lut, vtkSMProxy* view, int haloes)
{
  vtkSMProxy* bar = vtkSMTransferFunctionProxy::FindScalarBarRepresentation(lut, view);
  if (!bar)
  {
    return;
  }
  const std::string title = haloes == 1 ? "1 halo" : std::to_string(haloes) + " haloes";
  vtkSMPropertyHelper(bar, "Title").Set(haloes > 0 ? title.c_str() : "haloes");
  vtkSMPropertyHelper(bar, "ComponentTitle").Set(haloes > PHEW_COLOURS_OWN ? "(by mass)" : "");
  // 18 rows: most of the view's height, small type
  vtkSMPropertyHelper(bar, "ScalarBarLength").Set(0.85);
  vtkSMPropertyHelper(bar, "LabelFontSize").Set(12);
  vtkSMPropertyHelper(bar, "TitleFontSize").Set(14);
  vtkSMPropertyHelper(bar, "WindowLocation").Set("Upper Right Corner");
  vtkSMPropertyHelper(bar, "AddRangeLabels").Set(0);
  bar->UpdateVTKObjects();
}
}
