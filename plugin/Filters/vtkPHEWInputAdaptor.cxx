#include "vtkPHEWInputAdaptor.h"

#include "vtkAlgorithm.h"
#include "vtkDataObject.h"
#include "vtkInformation.h"
#include "vtkMultiProcessController.h"
#include "vtkSMPTools.h"

#if VTK_MODULE_ENABLE_VTK_ParallelMPI
#include "vtkMPI.h"
#include "vtkMPICommunicator.h"
#endif

#include <cstdio>
#include <string>
#include <cstring>

namespace phew_adaptors
{
int AbortRequested(void* algorithm)
{
  return static_cast<vtkAlgorithm*>(algorithm)->GetAbortExecute();
}

phew_context CoreContext(const Context& context, int threads)
{
  phew_context core;
  phew_context_init(&core);
  core.mpi_comm = context.MPIComm;
  // 0: ParaView's own thread count where its SMP backend runs threads (its setting, or
  // VTK_SMP_MAX_THREADS); with the sequential backend (one thread, not a choice of the user's)
  // every core, which the core caps at those this process may run on
  if (threads == 0 && std::string(vtkSMPTools::GetBackend()) != "Sequential")
  {
    threads = vtkSMPTools::GetEstimatedNumberOfThreads();
  }
  core.n_threads = threads;
  return core;
}

std::string InitializeContext(Context& context)
{
  context.Controller = vtkMultiProcessController::GetGlobalController();
  context.MPIComm = nullptr;
  if (!context.Controller || context.Controller->GetNumberOfProcesses() < 2)
  {
    context.Controller = nullptr;
    context.Rank = 0;
    context.NumberOfRanks = 1;
    return std::string();
  }
  context.NumberOfRanks = context.Controller->GetNumberOfProcesses();
  context.Rank = context.Controller->GetLocalProcessId();
#if VTK_MODULE_ENABLE_VTK_ParallelMPI
  if (auto* mpi = vtkMPICommunicator::SafeDownCast(context.Controller->GetCommunicator()))
  {
    context.MPIComm = mpi->GetMPIComm()->GetHandle(); // the core takes the address of an MPI_Comm
    return std::string();
  }
#endif
  // Every rank has the same kind of controller, so every rank fails here: no collective needed.
  return std::string("parallel runs need an MPI controller, but this one is a ") +
    context.Controller->GetClassName() + " (" + std::to_string(context.NumberOfRanks) +
    " processes)";
}

std::string SharedProblem(const Context& context, int root, const std::string& mine)
{
  char text[512] = { 0 };
  std::strncpy(text, mine.c_str(), sizeof text - 1);
  if (context.Controller && context.NumberOfRanks > 1)
  {
    context.Controller->Broadcast(text, sizeof text, root);
  }
  return text;
}

std::string AgreeOnProblem(const Context& context, const std::string& mine)
{
  phew_context core = CoreContext(context);
  std::snprintf(core.message, sizeof core.message, "%s", mine.c_str());
  // One status for every problem: the lowest rank that has one gives its message.
  return phew_agree(&core, mine.empty() ? PHEW_OK : PHEW_ERROR_DATA) == PHEW_OK
    ? std::string()
    : std::string(core.message);
}

std::string SelectedName(const Context& context)
{
  if (context.ArraySelection && context.ArraySelection->Has(vtkDataObject::FIELD_NAME()))
  {
    return context.ArraySelection->Get(vtkDataObject::FIELD_NAME());
  }
  return std::string();
}
} // namespace phew_adaptors
