// Private helper of vtkPHEWClumpFinder: the input adaptor for image data (vtkImageData with
// a point or cell density). Each rank holds a piece of the image, possibly with ghost cells
// or, for point data, boundary planes it shares with its neighbours; the adaptor finds the
// cells each rank owns so that the ranks tile the whole extent once (vtkPHEWPieces), gives
// the core that box plus one ghost layer (phew_grid, filled by phew_exchange_ghosts), and
// after the run copies the labels onto every cell or point of the piece.
#ifndef vtkPHEWImageInput_h
#define vtkPHEWImageInput_h

#include "vtkPHEWInputAdaptor.h"
#include "vtkPHEWPieces.h"
#include "vtkSmartPointer.h"

#include <cstdint>
#include <memory>

class vtkDataArray;
class vtkIdTypeArray;
class vtkImageData;

namespace phew_adaptors
{
class ImageInput : public InputAdaptor
{
public:
  explicit ImageInput(vtkImageData* image);
  ~ImageInput() override;

  std::string Prepare(Context& context, phew_input& input, phew_labels& labels) override;
  std::string Finish(Context& context, vtkDataObject* output) override;

private:
  std::string PrepareDensity(Context& context, vtkDataArray* density, const std::string& name,
    bool useDouble, phew_input& in);
  void PrepareLabels(phew_input& in, phew_labels& labels);

  vtkImageData* Image;
  bool CellData = false;
  bool Direct = false;  // one rank: the core reads the array and writes the labels in place
  bool Foreign = false; // some piece holds cells another rank owns: labels are exchanged
  bool InPlace = false; // no foreign cells anywhere: the core writes into the output arrays
  phew_grid Grid;
  phew_pieces::Box Piece, Owned, Stored;
  vtkSmartPointer<vtkDataArray> Values;
  // (buffers left uninitialised: the copy and phew_exchange_ghosts fill every stored cell,
  // and the core writes every label)
  std::unique_ptr<float[]> Block32;
  std::unique_ptr<double[]> Block64;
  vtkSmartPointer<vtkIdTypeArray> Out[3]; // PeakPatchId, ClumpId, HaloId over the piece
  std::unique_ptr<int64_t[]> BlockLabels; // over the stored block, when not InPlace
  int64_t* LabelData[3] = { nullptr, nullptr, nullptr };
};
} // namespace phew_adaptors

#endif
