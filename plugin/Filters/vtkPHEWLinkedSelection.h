/**
 * @class vtkPHEWLinkedSelection
 * @brief Turns a selection on one output of a PHEW filter into the same structures on
 * another: the selection linking of the ParaView GUI, also usable from scripts.
 *
 * Input 0 is the data the user selected on (any output of the PHEW filters: labels, tables,
 * clump geometry, dendrogram plot, markers); input 1 is that selection. The selected elements
 * name structures by their first array among ClumpId, GroupId and HaloId (so a row of the
 * Clumps table, a clump peak, a clump cell or particle names its clump; a row of the Haloes
 * table or a halo centre names its halo; a Friends-of-Friends or HOP particle or row names
 * its group). A dendrogram node (data with NodeId and ParentId: the Dendrogram table or plot)
 * names every clump below it. Negative ids (no structure) name nothing.
 *
 * The output selects those structures by value (vtkSelectionNode::VALUES) in one node: the
 * clumps if any are named, else the groups, else the haloes (a selection naming clumps and
 * haloes at once links the clumps), in the attribute FieldType (a vtkSelectionNode::SelectionField:
 * CELL for the labels of a grid, POINT for particles and markers, ROW for tables). Selecting by
 * value works on any data, distributed or not, image, AMR, points or table. ClumpIdArrayName names
 * the array that holds clump ids in the target (LeafClumpId for the dendrogram plot, whose ClumpId
 * also colours the structures above a clump). The ids are gathered from every process, so the
 * output is the same on all of them.
 */
#ifndef vtkPHEWLinkedSelection_h
#define vtkPHEWLinkedSelection_h

#include "PHEWFiltersModule.h" // for export macro
#include "vtkSelectionAlgorithm.h"

#include <string> // for the array name

class PHEWFILTERS_EXPORT vtkPHEWLinkedSelection : public vtkSelectionAlgorithm
{
public:
  static vtkPHEWLinkedSelection* New();
  vtkTypeMacro(vtkPHEWLinkedSelection, vtkSelectionAlgorithm);
  void PrintSelf(ostream& os, vtkIndent indent) override;

  /// The attribute of the target to select in (vtkSelectionNode::SelectionField); CELL.
  vtkSetMacro(FieldType, int);
  vtkGetMacro(FieldType, int);

  /// The target's array of clump ids; "ClumpId".
  void SetClumpIdArrayName(const char* name);
  const char* GetClumpIdArrayName() const { return this->ClumpIdArrayName.c_str(); }

protected:
  vtkPHEWLinkedSelection();
  ~vtkPHEWLinkedSelection() override;

  int FillInputPortInformation(int port, vtkInformation* info) override;
  int RequestData(vtkInformation*, vtkInformationVector**, vtkInformationVector*) override;

private:
  vtkPHEWLinkedSelection(const vtkPHEWLinkedSelection&) = delete;
  void operator=(const vtkPHEWLinkedSelection&) = delete;

  int FieldType;
  std::string ClumpIdArrayName;
};

#endif
