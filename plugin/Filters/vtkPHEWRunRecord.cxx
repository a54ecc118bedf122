// SPDX-License-Identifier: BSD-3-Clause
#include "vtkPHEWRunRecord.h"

#include "vtkAbstractArray.h"
#include "vtkCompositeDataIterator.h"
#include "vtkCompositeDataSet.h"
#include "vtkDataObject.h"
#include "vtkFieldData.h"
#include "vtkSmartPointer.h"
#include "vtkStringArray.h"

#include <cstdio>

namespace phew_run_record
{
std::string Entry(const char* name, double value)
{
  char text[64];
  std::snprintf(text, sizeof text, "%.17g", value);
  return Entry(name, std::string(text));
}

std::string Entry(const char* name, const std::string& value)
{
  return std::string(name) + " = " + value;
}

namespace
{
std::string Triple(const double* v)
{
  char text[96];
  std::snprintf(text, sizeof text, "%.17g %.17g %.17g", v[0], v[1], v[2]);
  return text;
}

std::string Axes(const int* periodic)
{
  return std::string(periodic[0] ? "1" : "0") + " " + (periodic[1] ? "1" : "0") + " " +
    (periodic[2] ? "1" : "0");
}

// The field data that describe the input: a composite's own (the RAMSES reader's AMR), or
// else its first block's; a data set's own.
vtkFieldData* InputFields(vtkDataObject* input)
{
  vtkFieldData* own = input ? input->GetFieldData() : nullptr;
  auto* composite = vtkCompositeDataSet::SafeDownCast(input);
  if (!composite || (own && own->GetNumberOfArrays() > 0))
  {
    return own;
  }
  auto it = vtkSmartPointer<vtkCompositeDataIterator>::Take(composite->NewIterator());
  it->InitTraversal();
  return it->IsDoneWithTraversal() ? nullptr : it->GetCurrentDataObject()->GetFieldData();
}
}

void DescribeInput(const phew_input& in, std::vector<std::string>& entries)
{
  if (in.mesh == PHEW_MESH_POINTS && in.points.has_box)
  {
    entries.push_back(Entry("BoxOrigin", Triple(in.points.box_origin)));
    entries.push_back(Entry("BoxSize", Triple(in.points.box_size)));
    entries.push_back(Entry("PeriodicAxes", Axes(in.points.periodic)));
  }
  else if (in.mesh == PHEW_MESH_POINTS)
  {
    entries.push_back(Entry("PeriodicAxes", Axes(in.points.periodic)));
  }
  else if (in.mesh == PHEW_MESH_STRUCTURED)
  {
    entries.push_back(Entry("GridOrigin", Triple(in.grid.origin)));
    entries.push_back(Entry("GridSpacing", Triple(in.grid.spacing)));
    entries.push_back(Entry("PeriodicAxes", Axes(in.grid.periodic)));
  }
  else if (in.mesh == PHEW_MESH_AMR)
  {
    entries.push_back(Entry("GridOrigin", Triple(in.amr.origin)));
    entries.push_back(Entry("Level0Spacing", Triple(in.amr.spacing)));
    entries.push_back(Entry("PeriodicAxes", Axes(in.amr.periodic)));
  }
}

void Add(vtkFieldData* table, const std::vector<std::string>& entries, vtkDataObject* input)
{
  auto parameters = vtkSmartPointer<vtkStringArray>::New();
  parameters->SetName("PHEWParameters");
  for (const std::string& entry : entries)
  {
    parameters->InsertNextValue(entry);
  }
  table->AddArray(parameters);
  vtkFieldData* from = InputFields(input);
  for (int k = 0; from && k < from->GetNumberOfArrays(); ++k)
  {
    vtkAbstractArray* array = from->GetAbstractArray(k);
    if (array && array->GetName() && !table->GetAbstractArray(array->GetName()))
    {
      table->AddArray(array);
    }
  }
}
}
