#include "vtkPHEWParticleDensity.h"

#include "vtkPHEWPointsInput.h"

#include "vtkObjectFactory.h"

#include "phew/phew.h"

#include <string>

vtkStandardNewMacro(vtkPHEWParticleDensity);

//------------------------------------------------------------------------------
vtkPHEWParticleDensity::vtkPHEWParticleDensity()
{
  // Input array 0: the masses; none unless one is selected.
  const int indices[phew_adaptors::POINT_ARRAY_COUNT] = { -1, 0, -1, -1 };
  this->SetPointArrayIndices(indices);
}

//------------------------------------------------------------------------------
void vtkPHEWParticleDensity::PrintSelf(ostream& os, vtkIndent indent)
{
  this->Superclass::PrintSelf(os, indent);
  os << indent << "NumberOfDensityNeighbours: " << this->NumberOfDensityNeighbours << "\n";
}

//------------------------------------------------------------------------------
void vtkPHEWParticleDensity::ConfigurePointOptions(phew_adaptors::PointOptions& options)
{
  options.LabelNames.clear();
  options.WithDensity = true;
  options.NumberOfDensityNeighbours = this->NumberOfDensityNeighbours;
}

int vtkPHEWParticleDensity::RunCore(
  phew_context& core, phew_input& in, phew_labels& labels, phew_adaptors::InputAdaptor&)
{
  return phew_estimate_density(&core, &in, labels.density, nullptr);
}
