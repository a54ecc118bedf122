#include "vtkPHEWLinkedSelection.h"

#include "vtkCompositeDataIterator.h"
#include "vtkCompositeDataSet.h"
#include "vtkDataArray.h"
#include "vtkExtractSelection.h"
#include "vtkFieldData.h"
#include "vtkIdTypeArray.h"
#include "vtkInformation.h"
#include "vtkInformationVector.h"
#include "vtkMultiProcessController.h"
#include "vtkNew.h"
#include "vtkObjectFactory.h"
#include "vtkSelection.h"
#include "vtkSelectionNode.h"
#include "vtkSmartPointer.h"

#include <functional>
#include <set>
#include <unordered_map>
#include <vector>

vtkStandardNewMacro(vtkPHEWLinkedSelection);

namespace
{
// The arrays that name a structure, in the order they are looked for.
enum Key
{
  CLUMP,
  GROUP,
  HALO,
  KEYS
};
const char* const KeyNames[KEYS] = { "ClumpId", "GroupId", "HaloId" };

using IdSet = std::set<vtkIdType>;

// Every non-composite piece of `data` (itself when it is not composite).
void ForEachPiece(vtkDataObject* data, const std::function<void(vtkDataObject*)>& action)
{
  auto* composite = vtkCompositeDataSet::SafeDownCast(data);
  if (!composite)
  {
    if (data)
    {
      action(data);
    }
    return;
  }
  vtkSmartPointer<vtkCompositeDataIterator> it;
  it.TakeReference(composite->NewIterator());
  for (it->InitTraversal(); !it->IsDoneWithTraversal(); it->GoToNextItem())
  {
    action(it->GetCurrentDataObject());
  }
}

// The attribute (point, cell or row data) a selection of `field` type refers to.
vtkFieldData* Attribute(vtkDataObject* piece, int field)
{
  const int attribute = vtkSelectionNode::ConvertSelectionFieldToAttributeType(field);
  return piece ? piece->GetAttributesAsFieldData(attribute) : nullptr;
}

vtkDataArray* Array(vtkFieldData* attribute, const char* name)
{
  return attribute ? vtkArrayDownCast<vtkDataArray>(attribute->GetAbstractArray(name)) : nullptr;
}

// The dendrogram's nodes, from any piece holding NodeId, ParentId and ClumpId (the Dendrogram
// table and plot): each node's children and its own clump (-1 for a structure of clumps).
struct Tree
{
  std::unordered_map<vtkIdType, std::vector<vtkIdType>> Children;
  std::unordered_map<vtkIdType, vtkIdType> Clump;

  void Read(vtkFieldData* attribute, const char* clumpArray)
  {
    vtkDataArray* nodes = Array(attribute, "NodeId");
    vtkDataArray* parents = Array(attribute, "ParentId");
    vtkDataArray* clumps = Array(attribute, clumpArray);
    if (!nodes || !parents || !clumps)
    {
      return;
    }
    for (vtkIdType i = 0; i < nodes->GetNumberOfTuples(); ++i)
    {
      const auto node = static_cast<vtkIdType>(nodes->GetTuple1(i));
      // (a node of the plot is on several lines and points: record it once)
      if (this->Clump.emplace(node, static_cast<vtkIdType>(clumps->GetTuple1(i))).second)
      {
        this->Children[static_cast<vtkIdType>(parents->GetTuple1(i))].push_back(node);
      }
    }
  }

  // The clumps at or below `node`, without recursion (trees can be deep).
  void ClumpsBelow(vtkIdType node, IdSet& clumps) const
  {
    std::vector<vtkIdType> stack{ node };
    std::set<vtkIdType> seen;
    while (!stack.empty())
    {
      const vtkIdType current = stack.back();
      stack.pop_back();
      if (!seen.insert(current).second)
      {
        continue;
      }
      const auto clump = this->Clump.find(current);
      if (clump != this->Clump.end() && clump->second >= 0)
      {
        clumps.insert(clump->second);
      }
      const auto children = this->Children.find(current);
      if (children != this->Children.end())
      {
        stack.insert(stack.end(), children->second.begin(), children->second.end());
      }
    }
  }
};

// The union of every process's ids.
void Gather(IdSet& ids)
{
  vtkMultiProcessController* controller = vtkMultiProcessController::GetGlobalController();
  if (!controller || controller->GetNumberOfProcesses() < 2)
  {
    return;
  }
  vtkNew<vtkIdTypeArray> mine, all;
  for (vtkIdType id : ids)
  {
    mine->InsertNextValue(id);
  }
  controller->AllGatherV(mine, all);
  for (vtkIdType i = 0; i < all->GetNumberOfValues(); ++i)
  {
    ids.insert(all->GetValue(i));
  }
}

// The ids that the selected elements of one piece name: the clumps below the selected
// dendrogram nodes, or the first of ClumpId, GroupId, HaloId the piece has.
void AddSelectedIds(vtkDataObject* piece, int field, const Tree& tree, IdSet ids[KEYS])
{
  vtkFieldData* attribute = Attribute(piece, field);
  vtkDataArray* nodes = Array(attribute, "NodeId");
  if (nodes && Array(attribute, "ParentId"))
  {
    for (vtkIdType i = 0; i < nodes->GetNumberOfTuples(); ++i)
    {
      tree.ClumpsBelow(static_cast<vtkIdType>(nodes->GetTuple1(i)), ids[CLUMP]);
    }
    return;
  }
  for (int key = 0; key < KEYS; ++key)
  {
    if (vtkDataArray* values = Array(attribute, KeyNames[key]))
    {
      for (vtkIdType i = 0; i < values->GetNumberOfTuples(); ++i)
      {
        const auto id = static_cast<vtkIdType>(values->GetTuple1(i));
        if (id >= 0)
        {
          ids[key].insert(id);
        }
      }
      return;
    }
  }
}

// The structures named by the selected elements of this process's piece of `input`.
void SelectedIds(vtkDataObject* input, vtkSelection* selection, IdSet ids[KEYS])
{
  const int field = selection->GetNode(0)->GetFieldType();
  Tree tree;
  ForEachPiece(input, [&](vtkDataObject* piece) { tree.Read(Attribute(piece, field), "ClumpId"); });

  // Shallow copies: handing a pipeline's own output to another filter makes it that
  // filter's input for good, and the upstream pipeline loses it.
  vtkSmartPointer<vtkDataObject> data;
  data.TakeReference(input->NewInstance());
  data->ShallowCopy(input);
  vtkNew<vtkSelection> selected;
  selected->ShallowCopy(selection);
  vtkNew<vtkExtractSelection> extract;
  extract->SetInputData(0, data);
  extract->SetInputData(1, selected);
  extract->Update();
  ForEachPiece(extract->GetOutputDataObject(0),
    [&](vtkDataObject* piece) { AddSelectedIds(piece, field, tree, ids); });
}
}

//-----------------------------------------------------------------------------
vtkPHEWLinkedSelection::vtkPHEWLinkedSelection()
  : FieldType(vtkSelectionNode::CELL)
  , ClumpIdArrayName("ClumpId")
{
  this->SetNumberOfInputPorts(2);
}

//-----------------------------------------------------------------------------
vtkPHEWLinkedSelection::~vtkPHEWLinkedSelection() = default;

//-----------------------------------------------------------------------------
void vtkPHEWLinkedSelection::SetClumpIdArrayName(const char* name)
{
  const std::string value = name ? name : "";
  if (value != this->ClumpIdArrayName)
  {
    this->ClumpIdArrayName = value;
    this->Modified();
  }
}

//-----------------------------------------------------------------------------
int vtkPHEWLinkedSelection::FillInputPortInformation(int port, vtkInformation* info)
{
  info->Set(vtkAlgorithm::INPUT_REQUIRED_DATA_TYPE(), port == 0 ? "vtkDataObject" : "vtkSelection");
  return 1;
}

//-----------------------------------------------------------------------------
int vtkPHEWLinkedSelection::RequestData(
  vtkInformation*, vtkInformationVector** inputVector, vtkInformationVector* outputVector)
{
  vtkDataObject* input = vtkDataObject::GetData(inputVector[0], 0);
  vtkSelection* selection = vtkSelection::GetData(inputVector[1], 0);
  IdSet ids[KEYS];
  if (input && selection && selection->GetNumberOfNodes() > 0)
  {
    SelectedIds(input, selection, ids);
  }

  // The same selection on every process, one node (what ParaView's selection tools expect):
  // the clumps if any are named, else the groups, else the haloes; with none, an empty list of
  // clumps, so that the output always selects something definite (nothing).
  int chosen = CLUMP;
  for (int key = 0; key < KEYS; ++key)
  {
    Gather(ids[key]);
  }
  for (int key = KEYS - 1; key >= 0; --key)
  {
    chosen = ids[key].empty() ? chosen : key;
  }
  vtkNew<vtkIdTypeArray> list;
  list->SetName(chosen == CLUMP ? this->ClumpIdArrayName.c_str() : KeyNames[chosen]);
  for (vtkIdType id : ids[chosen])
  {
    list->InsertNextValue(id);
  }
  vtkNew<vtkSelectionNode> node;
  node->SetContentType(vtkSelectionNode::VALUES);
  node->SetFieldType(this->FieldType);
  node->SetSelectionList(list);
  vtkSelection* output = vtkSelection::GetData(outputVector, 0);
  output->Initialize();
  output->AddNode(node);
  return 1;
}

//-----------------------------------------------------------------------------
void vtkPHEWLinkedSelection::PrintSelf(ostream& os, vtkIndent indent)
{
  this->Superclass::PrintSelf(os, indent);
  os << indent << "FieldType: " << this->FieldType << "\n";
  os << indent << "ClumpIdArrayName: " << this->ClumpIdArrayName << "\n";
}
