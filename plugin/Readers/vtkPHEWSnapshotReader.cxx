#include "vtkPHEWSnapshotReader.h"

#include "vtkInformation.h"
#include "vtkInformationVector.h"
#include "vtkMultiProcessController.h"
#include "vtkStreamingDemandDrivenPipeline.h"

#if VTK_MODULE_ENABLE_VTK_ParallelMPI
#include "vtkMPI.h"
#include "vtkMPICommunicator.h"
#endif

#include "phew/phew_readers.h"

#include <vtksys/SystemTools.hxx>

#include <algorithm>
#include <numeric>
#include <regex>
#include <set>

namespace
{
// A file of a multi-file HDF5 snapshot (STEM.K.hdf5) stands for its snapshot, given by its
// file 0: ParaView's file dialog passes every file of such a numbered group.
std::string SnapshotOf(const std::string& name)
{
  static const std::regex numbered(R"((.*)\.([0-9]+)\.(hdf5|h5)$)");
  std::smatch m;
  if (std::regex_match(name, m, numbered) && m[2] != "0")
  {
    const std::string zero = m[1].str() + ".0." + m[3].str();
    if (vtksys::SystemTools::FileExists(zero))
    {
      return zero;
    }
  }
  return name;
}
}

vtkPHEWSnapshotReader::vtkPHEWSnapshotReader()
{
  this->SetNumberOfInputPorts(0);
  auto* controller = vtkMultiProcessController::GetGlobalController();
  if (controller && controller->GetNumberOfProcesses() > 1)
  {
    this->Rank = controller->GetLocalProcessId();
    this->NumberOfRanks = controller->GetNumberOfProcesses();
#if VTK_MODULE_ENABLE_VTK_ParallelMPI
    if (auto* mpi = vtkMPICommunicator::SafeDownCast(controller->GetCommunicator()))
    {
      this->MPIComm = mpi->GetMPIComm()->GetHandle(); // libphew takes the address of an MPI_Comm
    }
#endif
  }
}

vtkPHEWSnapshotReader::~vtkPHEWSnapshotReader() = default;

void vtkPHEWSnapshotReader::AddFileName(const char* name)
{
  if (name && *name)
  {
    this->FileNames.emplace_back(name);
    this->Modified();
  }
}

void vtkPHEWSnapshotReader::RemoveAllFileNames()
{
  if (!this->FileNames.empty())
  {
    this->FileNames.clear();
    this->Modified();
  }
}

void vtkPHEWSnapshotReader::SetFileName(const char* name)
{
  this->FileNames.clear();
  this->AddFileName(name);
  this->Modified();
}

const char* vtkPHEWSnapshotReader::GetFileName(int i) const
{
  return i >= 0 && i < this->GetNumberOfFileNames() ? this->FileNames[i].c_str() : nullptr;
}

void vtkPHEWSnapshotReader::StartRead(
  void* comm, int format, phew_context& context, phew_read_options& options)
{
  phew_context_init(&context);
  context.mpi_comm = comm;
  phew_read_options_init(&options);
  options.format = static_cast<phew_snapshot_format>(format);
  options.units = this->Units ? PHEW_UNITS_ASTRO : PHEW_UNITS_CODE;
}

void vtkPHEWSnapshotReader::ReportFailure(const std::string& message)
{
  if (this->Rank == 0)
  {
    vtkErrorMacro(<< message);
  }
}

int vtkPHEWSnapshotReader::RequestInformation(
  vtkInformation*, vtkInformationVector**, vtkInformationVector* outputs)
{
  this->SortedFiles.clear();
  this->Times.clear();
  this->InformationProblem.clear();
  if (this->FileNames.empty())
  {
    this->InformationProblem = "no snapshot is given (FileName)";
    return 1;
  }
  // every rank reads the headers (collective when the ranks share a communicator); a
  // snapshot given twice (its folder and its info file, two files of one HDF5 snapshot)
  // counts once
  std::vector<double> times;
  std::vector<std::string> names;
  std::set<std::string> seen;
  for (const std::string& given : this->FileNames)
  {
    const std::string name = SnapshotOf(given);
    phew_context context;
    phew_context_init(&context);
    context.mpi_comm = this->MPIComm;
    phew_read_options options;
    phew_read_options_init(&options);
    phew_snapshot_info info;
    if (phew_read_snapshot_info(&context, name.c_str(), &options, &info) != PHEW_OK)
    {
      this->InformationProblem = context.message; // said when the data is asked for
      return 1;
    }
    if (seen.insert(info.path).second)
    {
      names.push_back(name);
      times.push_back(info.cosmological ? info.scale_factor : info.time);
    }
  }
  std::vector<size_t> order(times.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(
    order.begin(), order.end(), [&](size_t a, size_t b) { return times[a] < times[b]; });
  for (size_t k = 0; k < order.size(); ++k)
  {
    if (k > 0 && times[order[k]] == times[order[k - 1]])
    {
      this->InformationProblem = names[order[k]] + " and " + names[order[k - 1]] +
        " are at the same time: give each time step once";
      this->SortedFiles.clear();
      this->Times.clear();
      return 1;
    }
    this->SortedFiles.push_back(names[order[k]]);
    this->Times.push_back(times[order[k]]);
  }
  const double range[2] = { this->Times.front(), this->Times.back() };
  for (int port = 0; port < this->GetNumberOfOutputPorts(); ++port)
  {
    vtkInformation* info = outputs->GetInformationObject(port);
    info->Set(vtkStreamingDemandDrivenPipeline::TIME_STEPS(), this->Times.data(),
      static_cast<int>(this->Times.size()));
    info->Set(vtkStreamingDemandDrivenPipeline::TIME_RANGE(), range, 2);
    info->Set(CAN_HANDLE_PIECE_REQUEST(), 1);
  }
  return 1;
}

bool vtkPHEWSnapshotReader::ChooseSnapshot(
  vtkInformation*, vtkInformationVector* outputs, std::string& path, void** comm)
{
  path.clear();
  *comm = nullptr;
  if (this->SortedFiles.empty())
  {
    this->ReportFailure(this->InformationProblem);
    return false;
  }
  vtkInformation* info = outputs->GetInformationObject(0);
  size_t chosen = 0;
  if (info->Has(vtkStreamingDemandDrivenPipeline::UPDATE_TIME_STEP()))
  {
    const double t = info->Get(vtkStreamingDemandDrivenPipeline::UPDATE_TIME_STEP());
    while (chosen + 1 < this->Times.size() && this->Times[chosen + 1] <= t)
    {
      ++chosen;
    }
  }
  path = this->SortedFiles[chosen];
  this->ChosenTime = this->Times[chosen];
  const int piece = info->Has(vtkStreamingDemandDrivenPipeline::UPDATE_PIECE_NUMBER())
    ? info->Get(vtkStreamingDemandDrivenPipeline::UPDATE_PIECE_NUMBER())
    : 0;
  const int pieces = info->Has(vtkStreamingDemandDrivenPipeline::UPDATE_NUMBER_OF_PIECES())
    ? info->Get(vtkStreamingDemandDrivenPipeline::UPDATE_NUMBER_OF_PIECES())
    : 1;
  if (pieces == this->NumberOfRanks && piece == this->Rank && this->NumberOfRanks > 1)
  {
    *comm = this->MPIComm; // one piece per rank: every rank reads its share, together
    return this->MPIComm != nullptr;
  }
  return piece == 0; // the whole snapshot, on the rank asked for it
}

void vtkPHEWSnapshotReader::PrintSelf(ostream& os, vtkIndent indent)
{
  this->Superclass::PrintSelf(os, indent);
  for (const std::string& name : this->FileNames)
  {
    os << indent << "FileName: " << name << "\n";
  }
  os << indent << "Units: " << (this->Units ? "astro" : "code") << "\n";
}
