// The Catalyst adaptor: the simulation's arrays, described by the core's phew_grid and
// phew_points, wrapped (not copied) as VTK data, handed to legacy Catalyst (vtkCPProcessor) and
// its Python pipelines, every failure agreed on by all ranks.
#include "phew_catalyst.h"

#include "error_capture.h"

#include <dlfcn.h>
#include <mpi.h>

#include <vtkAOSDataArrayTemplate.h>
#include <vtkCPDataDescription.h>
#include <vtkCPInputDataDescription.h>
#include <vtkCPProcessor.h>
#include <vtkCPPythonPipeline.h>
#include <vtkCellData.h>
#include <vtkDoubleArray.h>
#include <vtkFieldData.h>
#include <vtkImageData.h>
#include <vtkMPI.h>
#include <vtkNew.h>
#include <vtkPointData.h>
#include <vtkPoints.h>
#include <vtkPolyData.h>
#include <vtkPythonInterpreter.h>
#include <vtkSmartPointer.h>
#include <vtkTypeInt64Array.h>

#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace
{
const char* const kGridChannel = "grid";
const char* const kParticleChannel = "particles";

double Now()
{
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// A VTK array over the caller's memory: VTK never frees it (save = 1) and the adaptor never
// writes to it.
template <typename T>
vtkSmartPointer<vtkDataArray> Wrap(
  const void* data, int64_t tuples, int components, const char* name)
{
  auto array = vtkSmartPointer<vtkAOSDataArrayTemplate<T>>::New();
  array->SetName(name);
  array->SetNumberOfComponents(components);
  array->SetArray(
    static_cast<T*>(const_cast<void*>(data)), static_cast<vtkIdType>(tuples * components), 1);
  return array;
}

vtkSmartPointer<vtkDataArray> WrapReal(
  phew_scalar_type type, const void* data, int64_t tuples, int components, const char* name)
{
  return type == PHEW_FLOAT32 ? Wrap<float>(data, tuples, components, name)
                              : Wrap<double>(data, tuples, components, name);
}

vtkSmartPointer<vtkDoubleArray> PeriodicBox(
  const double origin[3], const double size[3], const int periodic[3])
{
  auto box = vtkSmartPointer<vtkDoubleArray>::New();
  box->SetName("PeriodicBox");
  box->SetNumberOfTuples(6);
  for (int d = 0; d < 3; ++d)
  {
    box->SetValue(d, origin[d]);
    box->SetValue(3 + d, periodic[d] ? size[d] : 0.0);
  }
  return box;
}
}

struct phew_catalyst
{
  MPI_Comm Comm = MPI_COMM_NULL;
  int Rank = 0;
  int Size = 1;
  vtkSmartPointer<vtkCPProcessor> Processor;
  std::string Message;
  double TotalSeconds = 0.0;
  double PipelineSeconds = 0.0;
  std::vector<std::string> Scripts;
  bool Ran = false; // a version 2 script is imported at its first run: until then it may not load

  // Every rank's status agreed: the worst one, with the message of the lowest failing rank.
  int Agree(int status, const std::string& message)
  {
    if (this->Comm == MPI_COMM_NULL)
    {
      this->Message = message;
      return status;
    }
    int worst = 0;
    MPI_Allreduce(&status, &worst, 1, MPI_INT, MPI_MAX, this->Comm);
    if (worst == PHEW_CATALYST_OK)
    {
      this->Message.clear();
      return PHEW_CATALYST_OK;
    }
    int mine = status != PHEW_CATALYST_OK ? this->Rank : this->Size, first = this->Size;
    MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, this->Comm);
    std::string text = message;
    int length = static_cast<int>(text.size());
    MPI_Bcast(&length, 1, MPI_INT, first, this->Comm);
    text.resize(static_cast<size_t>(length));
    MPI_Bcast(&text[0], length, MPI_CHAR, first, this->Comm);
    this->Message = this->Size == 1 ? text : "(rank " + std::to_string(first) + ") " + text;
    return worst;
  }
};

namespace
{
// The grid channel of one call: the rank's block of cells and its density array.
struct GridInput
{
  const phew_grid* Grid;
  const void* Density;
  phew_scalar_type Type;
  const char* Name;
};

int64_t CellsOf(const phew_grid* g)
{
  return g->active_dims[0] * g->active_dims[1] * g->active_dims[2];
}

// Why the block cannot be shown as image data ("" if it can): along each axis, an extent VTK
// can hold, no ghost cells, inside the mesh, a positive spacing.
std::string CheckBlock(const phew_grid* g)
{
  for (int d = 0; d < 3; ++d)
  {
    const std::string axis = " along axis " + std::to_string(d);
    if (g->global_dims[d] >= INT_MAX)
    {
      return "the mesh has " + std::to_string(g->global_dims[d]) + " cells" + axis +
        ": VTK's extents hold at most 2^31 - 2";
    }
    if (g->stored_offset[d] != g->active_offset[d] || g->stored_dims[d] != g->active_dims[d])
    {
      return "the adaptor takes no ghost cells: the grid's stored box must be its active box "
             "(stored_offset == active_offset, stored_dims == active_dims), but" +
        axis + " it stores " + std::to_string(g->stored_dims[d]) + " cells from " +
        std::to_string(g->stored_offset[d]) + " and owns " + std::to_string(g->active_dims[d]) +
        " from " + std::to_string(g->active_offset[d]);
    }
    if (g->global_dims[d] < 1 || g->active_offset[d] < 0 || g->active_dims[d] < 0 ||
      g->active_offset[d] + g->active_dims[d] > g->global_dims[d])
    {
      return "the grid block (offset " + std::to_string(g->active_offset[d]) + ", " +
        std::to_string(g->active_dims[d]) + " cells" + axis + ") does not lie inside the mesh of " +
        std::to_string(g->global_dims[d]) + " cells";
    }
    if (!(g->spacing[d] > 0.0))
    {
      return "the grid spacing must be positive along every axis";
    }
  }
  return std::string();
}

bool KnownType(phew_scalar_type type)
{
  return type == PHEW_FLOAT32 || type == PHEW_FLOAT64;
}

std::string CheckGrid(const GridInput& in)
{
  const std::string problem = CheckBlock(in.Grid);
  if (!problem.empty())
  {
    return problem;
  }
  if (!KnownType(in.Type))
  {
    return "the density's type must be PHEW_FLOAT32 or PHEW_FLOAT64";
  }
  if (CellsOf(in.Grid) > 0 && !in.Density)
  {
    return "the grid block has cells but no density array";
  }
  return std::string();
}

std::string CheckParticles(const phew_points* p)
{
  if (p->n < 0)
  {
    return "a negative number of particles";
  }
  if (!KnownType(p->type))
  {
    return "the particles' type must be PHEW_FLOAT32 or PHEW_FLOAT64";
  }
  if (p->n > 0 && !p->position)
  {
    return "particles without positions";
  }
  for (int d = 0; d < 3; ++d)
  {
    if (p->periodic[d] && !p->has_box)
    {
      return "a periodic axis of the particles needs their box (has_box, box_origin, box_size)";
    }
    if (p->periodic[d] && !(p->box_size[d] > 0.0))
    {
      return "a periodic axis needs a positive box size";
    }
  }
  return std::string();
}

// The rank's block of cells as image data over the caller's density.
vtkSmartPointer<vtkImageData> GridOf(const GridInput& in)
{
  const phew_grid* g = in.Grid;
  auto image = vtkSmartPointer<vtkImageData>::New();
  const int64_t n = CellsOf(g);
  if (n > 0)
  {
    int extent[6];
    for (int d = 0; d < 3; ++d)
    {
      extent[2 * d] = static_cast<int>(g->active_offset[d]);
      extent[2 * d + 1] = static_cast<int>(g->active_offset[d] + g->active_dims[d]);
    }
    image->SetExtent(extent);
  }
  else
  {
    image->SetExtent(0, -1, 0, -1, 0, -1);
  }
  image->SetOrigin(g->origin[0], g->origin[1], g->origin[2]);
  image->SetSpacing(g->spacing[0], g->spacing[1], g->spacing[2]);
  const char* name = in.Name ? in.Name : "density";
  image->GetCellData()->AddArray(WrapReal(in.Type, in.Density, n, 1, name));
  image->GetCellData()->SetActiveScalars(name);
  double size[3];
  for (int d = 0; d < 3; ++d)
  {
    size[d] = g->spacing[d] * static_cast<double>(g->global_dims[d]);
  }
  image->GetFieldData()->AddArray(PeriodicBox(g->origin, size, g->periodic));
  return image;
}

// The rank's particles as points over the caller's arrays (no vertex cells).
vtkSmartPointer<vtkPolyData> ParticlesOf(const phew_points* p)
{
  auto poly = vtkSmartPointer<vtkPolyData>::New();
  vtkNew<vtkPoints> points;
  points->SetData(WrapReal(p->type, p->position, p->n, 3, "Points"));
  poly->SetPoints(points);
  if (p->mass)
  {
    poly->GetPointData()->AddArray(WrapReal(p->type, p->mass, p->n, 1, "Mass"));
  }
  if (p->velocity)
  {
    poly->GetPointData()->AddArray(WrapReal(p->type, p->velocity, p->n, 3, "Velocity"));
  }
  if (p->id)
  {
    auto ids = vtkSmartPointer<vtkTypeInt64Array>::New();
    ids->SetName("ParticleId");
    ids->SetArray(reinterpret_cast<vtkTypeInt64*>(const_cast<int64_t*>(p->id)),
      static_cast<vtkIdType>(p->n), 1);
    poly->GetPointData()->AddArray(ids);
  }
  const double none[3] = { 0.0, 0.0, 0.0 };
  poly->GetFieldData()->AddArray(
    PeriodicBox(p->has_box ? p->box_origin : none, p->has_box ? p->box_size : none, p->periodic));
  return poly;
}

bool Readable(const char* path)
{
  FILE* f = path ? std::fopen(path, "r") : nullptr;
  if (f)
  {
    std::fclose(f);
  }
  return f != nullptr;
}

// The phew plugin for the scripts' LoadPlugin: PHEW/PHEW.so beside this library, which is where
// both the build tree and an installation put it (lib/libphew_catalyst.so, lib/PHEW/PHEW.so);
// else the plugin this library was built with.
std::string PluginPath()
{
  Dl_info self;
  if (dladdr(reinterpret_cast<void*>(&PluginPath), &self) && self.dli_fname)
  {
    std::string path = self.dli_fname;
    const size_t slash = path.rfind('/');
    path =
      (slash == std::string::npos ? std::string(".") : path.substr(0, slash)) + "/PHEW/PHEW.so";
    if (Readable(path.c_str()))
    {
      return path;
    }
  }
  return PHEW_CATALYST_PLUGIN;
}

// MPI usable, the adaptor's own duplicate of the communicator, this rank's place in it, and
// PHEW_PLUGIN for the scripts. Not agreed on: a failure here leaves no communicator.
int StartMpi(phew_catalyst* a, MPI_Comm comm)
{
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (!initialized || finalized)
  {
    a->Message = "MPI must be initialised (and not finalised) before phew_catalyst_initialize";
    return PHEW_CATALYST_ERROR_MPI;
  }
  if (MPI_Comm_dup(comm, &a->Comm) != MPI_SUCCESS)
  {
    a->Comm = MPI_COMM_NULL;
    a->Message = "the MPI communicator passed to phew_catalyst_initialize is not usable";
    return PHEW_CATALYST_ERROR_MPI;
  }
  MPI_Comm_rank(a->Comm, &a->Rank);
  MPI_Comm_size(a->Comm, &a->Size);
  setenv("PHEW_PLUGIN", PluginPath().c_str(), 0); // the scripts' LoadPlugin; a user's choice wins
  return PHEW_CATALYST_OK;
}

// Why the scripts cannot be loaded on this rank ("" if every one is readable).
std::string CheckScripts(const std::vector<std::string>& scripts)
{
  if (scripts.empty())
  {
    return "no Catalyst script given";
  }
  for (const std::string& script : scripts)
  {
    if (!Readable(script.c_str()))
    {
      return "the Catalyst script '" + script + "' cannot be read (missing, or not readable)";
    }
  }
  return std::string();
}

// Catalyst (vtkCPProcessor) on the adaptor's communicator; why it did not start, or "".
std::string StartCatalyst(phew_catalyst* a)
{
  a->Processor = vtkSmartPointer<vtkCPProcessor>::New();
  vtkMPICommunicatorOpaqueComm opaque(&a->Comm);
  if (!a->Processor->Initialize(opaque))
  {
    return "Catalyst (vtkCPProcessor) did not start";
  }
  // ParaView 5.11's Python log handler fails on messages below warnings (it names a
  // vtkLogger level that does not exist), and Python then prints "--- Logging error ---"
  // with a traceback on some ranks: logging's own switch keeps such failures silent.
  if (vtkPythonInterpreter::Initialize())
  {
    vtkPythonInterpreter::RunSimpleString("import logging\nlogging.raiseExceptions = False\n");
  }
  return std::string();
}

// Each script as a pipeline of the processor; why one did not load (capture holds the errors
// reported since Catalyst started), or "".
std::string LoadScripts(phew_catalyst* a, const phew_catalyst_detail::ErrorCapture& capture)
{
  for (const std::string& script : a->Scripts)
  {
    auto pipeline = vtkCPPythonPipeline::CreateAndInitializePipeline(script.c_str(), 2);
    if (!pipeline || capture.HasErrors())
    {
      return "the Catalyst script '" + script + "' did not load" +
        (capture.HasErrors() ? ": " + capture.Errors(a->Scripts) : std::string());
    }
    a->Processor->AddPipeline(pipeline);
  }
  return std::string();
}

int Initialize(phew_catalyst** adaptor, const std::vector<std::string>& scripts, MPI_Comm comm)
{
  *adaptor = new (std::nothrow) phew_catalyst;
  phew_catalyst* a = *adaptor;
  if (!a)
  {
    return PHEW_CATALYST_ERROR_ARGUMENT;
  }
  a->Scripts = scripts;
  int status = StartMpi(a, comm);
  if (status != PHEW_CATALYST_OK)
  {
    return status;
  }
  std::string problem = CheckScripts(scripts);
  status = a->Agree(problem.empty() ? PHEW_CATALYST_OK : PHEW_CATALYST_ERROR_SCRIPT, problem);
  if (status != PHEW_CATALYST_OK)
  {
    return status;
  }
  phew_catalyst_detail::ErrorCapture capture;
  problem = StartCatalyst(a);
  if (problem.empty())
  {
    problem = LoadScripts(a, capture);
  }
  status = a->Agree(problem.empty() ? PHEW_CATALYST_OK : PHEW_CATALYST_ERROR_SCRIPT, problem);
  if (status != PHEW_CATALYST_OK)
  {
    a->Processor->RemoveAllPipelines(); // a half-loaded script must never run
  }
  return status;
}

// The call's arguments checked on every rank, and the same channels on every rank (or the
// pipelines would wait for each other): agreed on.
int CheckCall(phew_catalyst* a, const GridInput* grid, const phew_points* particles)
{
  std::string problem = grid ? CheckGrid(*grid) : "";
  if (problem.empty() && particles)
  {
    problem = CheckParticles(particles);
  }
  int channels = (grid ? 1 : 0) | (particles ? 2 : 0), any = 0, all = 0;
  MPI_Allreduce(&channels, &any, 1, MPI_INT, MPI_BOR, a->Comm);
  MPI_Allreduce(&channels, &all, 1, MPI_INT, MPI_BAND, a->Comm);
  if (problem.empty() && any != all)
  {
    problem =
      "every rank must pass the same channels (a grid, particles, or both; empty ones on ranks with none)";
  }
  return a->Agree(problem.empty() ? PHEW_CATALYST_OK : PHEW_CATALYST_ERROR_ARGUMENT, problem);
}

// The caller's arrays, wrapped, as the inputs of the channels the call has.
void SetInputs(
  vtkCPDataDescription* description, const GridInput* grid, const phew_points* particles)
{
  if (grid)
  {
    vtkCPInputDataDescription* input = description->GetInputDescriptionByName(kGridChannel);
    input->SetGrid(GridOf(*grid));
    const int64_t* dims = grid->Grid->global_dims;
    input->SetWholeExtent(
      0, static_cast<int>(dims[0]), 0, static_cast<int>(dims[1]), 0, static_cast<int>(dims[2]));
  }
  if (particles)
  {
    description->GetInputDescriptionByName(kParticleChannel)->SetGrid(ParticlesOf(particles));
  }
}

// Drops the references to the caller's arrays held by the description.
void ClearInputs(vtkCPDataDescription* description)
{
  for (const char* channel : { kGridChannel, kParticleChannel })
  {
    if (vtkCPInputDataDescription* input = description->GetInputDescriptionByName(channel))
    {
      input->SetGrid(nullptr);
    }
  }
}

// The pipelines on the description's inputs, their failures agreed on by all ranks; a script
// that did not load (a version 2 script is imported at its first run) is removed.
int RunPipelines(phew_catalyst* a, vtkCPDataDescription* description, int64_t step)
{
  phew_catalyst_detail::ErrorCapture capture;
  const double before = Now();
  const int ok = a->Processor->CoProcess(description);
  a->PipelineSeconds = Now() - before;
  int failure = PHEW_CATALYST_OK;
  std::string problem;
  if (!ok && !a->Ran)
  {
    failure = PHEW_CATALYST_ERROR_SCRIPT;
    problem = "a Catalyst script did not load (it runs first at the first step it wants): " +
      capture.Errors(a->Scripts);
  }
  else if (!ok || capture.HasErrors())
  {
    failure = PHEW_CATALYST_ERROR_PIPELINE;
    problem = "a Catalyst pipeline failed at step " + std::to_string(step) + ": " +
      capture.Errors(a->Scripts);
  }
  ClearInputs(description);
  const int status = a->Agree(failure, problem);
  if (status == PHEW_CATALYST_ERROR_SCRIPT)
  {
    a->Processor->RemoveAllPipelines(); // a script that did not load must not run again
  }
  a->Ran = a->Ran || status != PHEW_CATALYST_ERROR_SCRIPT;
  return status;
}

int Execute(
  phew_catalyst* a, int64_t step, double time, const GridInput* grid, const phew_points* particles)
{
  const double start = Now();
  a->PipelineSeconds = 0.0;
  if (!a->Processor || a->Processor->GetNumberOfPipelines() == 0)
  {
    return a->Agree(PHEW_CATALYST_ERROR_SCRIPT, "Catalyst has no pipeline: a script did not load");
  }
  int status = CheckCall(a, grid, particles);
  if (status != PHEW_CATALYST_OK)
  {
    return status;
  }
  vtkNew<vtkCPDataDescription> description;
  if (grid)
  {
    description->AddInput(kGridChannel);
  }
  if (particles)
  {
    description->AddInput(kParticleChannel);
  }
  description->SetTimeData(time, static_cast<vtkIdType>(step));
  if (!a->Processor->RequestDataDescription(description))
  {
    a->TotalSeconds = Now() - start;
    return a->Agree(PHEW_CATALYST_OK, "");
  }
  SetInputs(description, grid, particles);
  status = RunPipelines(a, description, step);
  a->TotalSeconds = Now() - start;
  return status;
}
}

extern "C"
{
  int phew_catalyst_initialize(
    phew_catalyst** adaptor, int n_scripts, const char* const* scripts, const void* mpi_comm)
  {
    if (!adaptor)
    {
      return PHEW_CATALYST_ERROR_ARGUMENT;
    }
    std::vector<std::string> list;
    for (int k = 0; scripts && k < n_scripts; ++k)
    {
      list.emplace_back(scripts[k] ? scripts[k] : "");
    }
    return Initialize(
      adaptor, list, mpi_comm ? *static_cast<const MPI_Comm*>(mpi_comm) : MPI_COMM_WORLD);
  }

  int phew_catalyst_initialize_f(
    phew_catalyst** adaptor, int n_scripts, const char* scripts, int fortran_comm)
  {
    if (!adaptor)
    {
      return PHEW_CATALYST_ERROR_ARGUMENT;
    }
    std::vector<std::string> list;
    for (int k = 0; scripts && k < n_scripts; ++k)
    {
      list.emplace_back(scripts);
      scripts += list.back().size() + 1;
    }
    return Initialize(adaptor, list, MPI_Comm_f2c(fortran_comm));
  }

  int phew_catalyst_wants(phew_catalyst* a, int64_t step, double time)
  {
    if (!a || !a->Processor || a->Processor->GetNumberOfPipelines() == 0)
    {
      return 0;
    }
    vtkNew<vtkCPDataDescription> description;
    description->AddInput(kGridChannel);
    description->AddInput(kParticleChannel);
    description->SetTimeData(time, static_cast<vtkIdType>(step));
    return a->Processor->RequestDataDescription(description) != 0;
  }

  int phew_catalyst_execute(phew_catalyst* a, int64_t step, double time, const phew_grid* grid,
    const void* density, phew_scalar_type density_type, const char* density_name,
    const phew_points* particles)
  {
    if (!a)
    {
      return PHEW_CATALYST_ERROR_ARGUMENT;
    }
    const GridInput input = { grid, density, density_type, density_name };
    return Execute(a, step, time, grid ? &input : nullptr, particles);
  }

  const char* phew_catalyst_message(const phew_catalyst* a)
  {
    return a ? a->Message.c_str() : "out of memory for the Catalyst adaptor";
  }

  void phew_catalyst_timing(const phew_catalyst* a, double* total, double* pipelines)
  {
    if (total)
    {
      *total = a ? a->TotalSeconds : 0.0;
    }
    if (pipelines)
    {
      *pipelines = a ? a->PipelineSeconds : 0.0;
    }
  }

  void phew_catalyst_finalize(phew_catalyst* a)
  {
    if (!a)
    {
      return;
    }
    if (a->Processor)
    {
      a->Processor->Finalize();
      a->Processor = nullptr;
    }
    if (a->Comm != MPI_COMM_NULL)
    {
      MPI_Comm_free(&a->Comm);
    }
    delete a;
  }
}
