#include "vtkPHEWHaloColours.h"

#include "vtkPHEWInputAdaptor.h"

#include "vtkCompositeDataIterator.h"
#include "vtkCompositeDataSet.h"
#include "vtkDataArray.h"
#include "vtkDataSet.h"
#include "vtkDataSetAttributes.h"
#include "vtkIntArray.h"
#include "vtkMultiProcessController.h"
#include "vtkNew.h"
#include "vtkSmartPointer.h"

namespace
{
// The id array's attributes (point or cell data of `data`), or nullptr.
vtkDataSetAttributes* WithIds(vtkDataSet* data, const char* ids)
{
  for (int association : { vtkDataObject::POINT, vtkDataObject::CELL })
  {
    vtkDataSetAttributes* attributes = data->GetAttributes(association);
    if (attributes && attributes->GetArray(ids))
    {
      return attributes;
    }
  }
  return nullptr;
}

void AddToDataSet(vtkDataSet* data, const char* ids, const std::vector<int32_t>& colours)
{
  vtkDataSetAttributes* attributes = data ? WithIds(data, ids) : nullptr;
  if (!attributes)
  {
    return;
  }
  vtkDataArray* id = attributes->GetArray(ids);
  vtkNew<vtkIntArray> colour;
  colour->SetName(phew_halo_colours::ARRAY);
  colour->SetNumberOfValues(id->GetNumberOfTuples());
  const auto n = static_cast<double>(colours.size());
  for (vtkIdType i = 0; i < id->GetNumberOfTuples(); ++i)
  {
    const double value = id->GetComponent(i, 0);
    colour->SetValue(i, value >= 0 && value < n ? colours[static_cast<size_t>(value)] : -1);
  }
  attributes->AddArray(colour);
}
}

namespace phew_halo_colours
{
const char* const ARRAY = "HaloColour";

void Period(const phew_input& input, double period[3])
{
  for (int k = 0; k < 3; ++k)
  {
    switch (input.mesh)
    {
      case PHEW_MESH_STRUCTURED:
        period[k] = input.grid.periodic[k]
          ? static_cast<double>(input.grid.global_dims[k]) * input.grid.spacing[k]
          : 0.0;
        break;
      case PHEW_MESH_AMR:
        period[k] = input.amr.periodic[k]
          ? static_cast<double>(input.amr.level0_dims[k]) * input.amr.spacing[k]
          : 0.0;
        break;
      case PHEW_MESH_POINTS:
        period[k] = input.points.periodic[k] ? input.points.box_size[k] : 0.0;
        break;
      default:
        period[k] = 0.0;
    }
  }
}

void Catalogue::Add(double mass, const double centre[3])
{
  this->Mass.push_back(mass);
  this->Centre.insert(this->Centre.end(), centre, centre + 3);
}

std::vector<int32_t> Compute(
  const phew_adaptors::Context& context, const Catalogue& catalogue, const double period[3])
{
  const auto n = static_cast<int64_t>(catalogue.Mass.size());
  std::vector<int32_t> colours(static_cast<size_t>(n), -1);
  if (context.Rank == 0 &&
    phew_colour_haloes(nullptr, n, catalogue.Mass.data(), catalogue.Centre.data(), period,
      colours.data()) != PHEW_OK)
  {
    colours.assign(colours.size(), -1); // (only out of memory: the drawing stays grey)
  }
  if (context.Controller && context.NumberOfRanks > 1)
  {
    vtkIdType count = static_cast<vtkIdType>(colours.size());
    context.Controller->Broadcast(&count, 1, 0);
    colours.resize(static_cast<size_t>(count));
    if (count > 0)
    {
      context.Controller->Broadcast(colours.data(), count, 0);
    }
  }
  return colours;
}

void AddArray(vtkDataObject* data, const char* ids, const std::vector<int32_t>& colours)
{
  if (auto* composite = vtkCompositeDataSet::SafeDownCast(data))
  {
    vtkSmartPointer<vtkCompositeDataIterator> it;
    it.TakeReference(composite->NewIterator());
    for (it->InitTraversal(); !it->IsDoneWithTraversal(); it->GoToNextItem())
    {
      AddToDataSet(vtkDataSet::SafeDownCast(it->GetCurrentDataObject()), ids, colours);
    }
    return;
  }
  AddToDataSet(vtkDataSet::SafeDownCast(data), ids, colours);
}

void AddGroupColours(const phew_adaptors::Context& context, const phew_group_result& result,
  const double period[3], vtkDataObject* labelled)
{
  Catalogue groups;
  for (int64_t g = 0; g < result.n_groups; ++g)
  {
    groups.Add(result.groups[g].mass, result.groups[g].center_of_mass);
  }
  AddArray(labelled, PHEW_ARRAY_GROUP_ID, Compute(context, groups, period));
}
}
