#include "vtkPHEWPhysics.h"
#include "vtkPHEWTables.h"

#include "vtkCompositeDataIterator.h"
#include "vtkCompositeDataSet.h"
#include "vtkDataArray.h"
#include "vtkFieldData.h"
#include "vtkSmartPointer.h"
#include "vtkStringArray.h"
#include "vtkTable.h"

#include <cstdlib>

namespace phew_physics
{
namespace
{
/// The field data that carries a snapshot's metadata: the object's, or its first leaf's.
vtkFieldData* MetadataOf(vtkDataObject* input)
{
  if (!input)
  {
    return nullptr;
  }
  if (input->GetFieldData() && input->GetFieldData()->GetAbstractArray("Units"))
  {
    return input->GetFieldData();
  }
  auto composite = vtkCompositeDataSet::SafeDownCast(input);
  if (!composite)
  {
    return nullptr;
  }
  vtkSmartPointer<vtkCompositeDataIterator> it;
  it.TakeReference(composite->NewIterator());
  for (it->InitTraversal(); !it->IsDoneWithTraversal(); it->GoToNextItem())
  {
    vtkDataObject* leaf = it->GetCurrentDataObject();
    if (leaf && leaf->GetFieldData() && leaf->GetFieldData()->GetAbstractArray("Units"))
    {
      return leaf->GetFieldData();
    }
  }
  return nullptr;
}

double Number(vtkFieldData* fields, const char* name)
{
  vtkDataArray* array = fields->GetArray(name);
  return array && array->GetNumberOfTuples() > 0 ? array->GetComponent(0, 0) : 0.0;
}

/// Rank 0's n items of `size` bytes on every rank (a copy to free), or nullptr if none.
void* FromRankZero(
  phew_context& core, const void* items, int64_t n, size_t size, int rank, int& status)
{
  void* all = nullptr;
  int64_t count = 0;
  if (status == PHEW_OK)
  {
    status = phew_gather_all(&core, items, rank == 0 ? n : 0, size, &all, &count, nullptr);
  }
  return all;
}
}

bool UnitsKnown(vtkDataObject* input)
{
  vtkFieldData* fields = MetadataOf(input);
  auto units = fields ? vtkStringArray::SafeDownCast(fields->GetAbstractArray("Units")) : nullptr;
  return !(units && units->GetNumberOfValues() > 0 && units->GetValue(0) == "code");
}

phew_physics_params MakeParams(const Options& options, vtkDataObject* input)
{
  phew_physics_params params;
  phew_physics_params_init(&params);
  params.unbind = options.Unbind ? 1 : 0;
  params.potential = options.Potential == 1 ? PHEW_POTENTIAL_SPHERICAL : PHEW_POTENTIAL_EXACT;
  params.softening = options.Softening;
  params.gravitational_constant = options.GravitationalConstant;
  params.n_most_bound = 0; // the Merger Tree filter picks the tracers from SpecificEnergy itself
  vtkFieldData* fields = MetadataOf(input);
  auto units = fields ? vtkStringArray::SafeDownCast(fields->GetAbstractArray("Units")) : nullptr;
  const bool astro = units && units->GetNumberOfValues() > 0 && units->GetValue(0) == "astro";
  if (astro && Number(fields, "Cosmological") != 0.0)
  {
    params.cosmology.comoving = 1;
    params.cosmology.hubble = Number(fields, "HubbleParam");
    params.cosmology.omega_m = Number(fields, "OmegaMatter");
    params.cosmology.omega_lambda = Number(fields, "OmegaLambda");
    params.cosmology.scale_factor = Number(fields, "ScaleFactor");
  }
  else if (astro)
  {
    params.gravitational_constant = 4.30091727003628e-9; // Mpc (km/s)^2 / Msun: h cancels
  }
  return params;
}

int Run(phew_context& core, const phew_input& in, const Grouping& g,
  const phew_physics_params& params, int64_t* bound, double* energy, phew_physics_result* result)
{
  int rank = 0, size = 1;
  phew_context_ranks(&core, &rank, &size);
  int status = PHEW_OK;
  auto* count =
    static_cast<int64_t*>(FromRankZero(core, &g.Count, 1, sizeof g.Count, rank, status));
  const int64_t n = count ? count[0] : 0;
  std::free(count);
  auto* parents = g.HasParents
    ? static_cast<int64_t*>(FromRankZero(core, g.Parents, n, sizeof(int64_t), rank, status))
    : nullptr;
  auto* centres = g.HasCentres
    ? static_cast<double*>(FromRankZero(core, g.Centres, n, 3 * sizeof(double), rank, status))
    : nullptr;
  if (status == PHEW_OK)
  {
    const phew_structures st = { n, parents, g.Labels, centres };
    status = phew_structure_physics(&core, &in, &st, &params, bound, energy, result);
  }
  std::free(parents);
  std::free(centres);
  return status;
}

void AppendColumns(vtkTable* table, const phew_physics_result& result)
{
  if (!table || table->GetNumberOfRows() != result.n_structures || result.n_structures == 0)
  {
    return; // other ranks, or nothing found
  }
  int n = 0;
  const phew_column* columns = phew_structure_columns(&n);
  // StructureId (the first column) is the table's own id
  phew_tables::AddColumns(
    table, columns + 1, n - 1, result.structures, result.n_structures, sizeof(phew_structure));
}
}
