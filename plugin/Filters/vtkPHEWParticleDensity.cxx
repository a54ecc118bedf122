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
  options.Outputs = phew_adaptors::PointOutputs::Density;
  options.NumberOfDensityNeighbours = this->NumberOfDensityNeighbours;
}

std::string vtkPHEWParticleDensity::RunParticles(phew_context& core, phew_input& in,
  phew_labels& labels, phew_adaptors::PointsInput&, phew_group_result& result)
{
  const phew_status status = phew_estimate_density(&core, &in, labels.density, &result.stats);
  if (status != PHEW_OK) // collective: the same status and message on every rank
  {
    return std::string("PHEW could not estimate the density of the particles (") +
      phew_status_string(status) + "): " + core.message;
  }
  return std::string();
}
