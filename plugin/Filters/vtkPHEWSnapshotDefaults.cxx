#include "vtkPHEWSnapshotDefaults.h"

#include "vtkPHEWInputAdaptor.h"

#include "vtkCompositeDataIterator.h"
#include "vtkCompositeDataSet.h"
#include "vtkDataArray.h"
#include "vtkFieldData.h"
#include "vtkMultiProcessController.h"
#include "vtkSmartPointer.h"

namespace
{
// The field data of `data` when it has the readers' metadata (AMR, particles), else that of
// its first leaf for a composite (the readers put it on each particle block they make).
vtkFieldData* FieldsOf(vtkDataObject* data)
{
  if (data && data->GetFieldData() && data->GetFieldData()->GetArray("Periodic"))
  {
    return data->GetFieldData();
  }
  if (auto* composite = vtkCompositeDataSet::SafeDownCast(data))
  {
    auto it = vtkSmartPointer<vtkCompositeDataIterator>::Take(composite->NewIterator());
    it->InitTraversal();
    data = it->IsDoneWithTraversal() ? nullptr : it->GetCurrentDataObject();
  }
  return data ? data->GetFieldData() : nullptr;
}

// 1 when the array exists and all of its first tuple's components are nonzero, 0 when it
// exists otherwise, -1 when it is not there.
int AllSet(vtkFieldData* fields, const char* name, int components)
{
  vtkDataArray* array = fields ? fields->GetArray(name) : nullptr;
  if (!array || array->GetNumberOfTuples() < 1 || array->GetNumberOfComponents() != components)
  {
    return -1;
  }
  for (int k = 0; k < components; ++k)
  {
    if (array->GetComponent(0, k) == 0.0)
    {
      return 0;
    }
  }
  return 1;
}
}

namespace phew_snapshot_defaults
{
Snapshot Read(const phew_adaptors::Context& context, vtkDataObject* data)
{
  vtkFieldData* fields = FieldsOf(data);
  // per flag: the largest answer over the ranks (-1: no rank has the field data)
  int says[2] = { AllSet(fields, "Periodic", 3), AllSet(fields, "Cosmological", 1) };
  if (context.Controller && context.NumberOfRanks > 1)
  {
    int mine[2] = { says[0], says[1] };
    context.Controller->AllReduce(mine, says, 2, vtkCommunicator::MAX_OP);
  }
  Snapshot snapshot;
  snapshot.Periodic = says[0] == 1;
  snapshot.Cosmological = says[1] == 1;
  return snapshot;
}
}
