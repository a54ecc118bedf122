#include "vtkPHEWRAMSESReader.h"

#include "vtkDataObject.h"
#include "vtkInformation.h"
#include "vtkInformationVector.h"
#include "vtkObjectFactory.h"
#include "vtkOverlappingAMR.h"
#include "vtkPHEWSnapshotData.h"
#include "vtkPolyData.h"

vtkStandardNewMacro(vtkPHEWRAMSESReader);

vtkPHEWRAMSESReader::vtkPHEWRAMSESReader()
{
  this->SetNumberOfOutputPorts(2);
  this->SetFamily("DM");
}

vtkPHEWRAMSESReader::~vtkPHEWRAMSESReader()
{
  this->SetFamily(nullptr);
}

int vtkPHEWRAMSESReader::FillOutputPortInformation(int port, vtkInformation* info)
{
  info->Set(vtkDataObject::DATA_TYPE_NAME(), port == 0 ? "vtkOverlappingAMR" : "vtkPolyData");
  return 1;
}

int vtkPHEWRAMSESReader::CanReadFile(const char* name)
{
  return phew_snapshot_format_of(name) == PHEW_FORMAT_RAMSES ? 1 : 0;
}

int vtkPHEWRAMSESReader::RequestData(
  vtkInformation* request, vtkInformationVector**, vtkInformationVector* outputs)
{
  vtkOverlappingAMR* amr = vtkOverlappingAMR::GetData(outputs, 0);
  vtkPolyData* particles = vtkPolyData::GetData(outputs, 1);
  std::string path;
  void* comm = nullptr;
  if (!this->ChooseSnapshot(request, outputs, path, &comm))
  {
    return 1; // nothing for this rank, or no snapshot (ChooseSnapshot said why)
  }
  phew_context context;
  phew_read_options options;
  this->StartRead(comm, PHEW_FORMAT_RAMSES, context, options);
  options.family = this->Family && *this->Family ? this->Family : "DM";
  options.all_fields = 1;
  if (this->ReadAMR)
  {
    phew_amr_set set;
    if (phew_read_amr(&context, path.c_str(), &options, nullptr, 0, &set) != PHEW_OK)
    {
      this->ReportFailure(context.message);
      return 1;
    }
    amr->ShallowCopy(phew_snapshot_data::AMR(set));
    phew_amr_set_free(&set);
    amr->GetInformation()->Set(vtkDataObject::DATA_TIME_STEP(), this->ChosenTime);
  }
  if (this->ReadParticles)
  {
    phew_particle_set set;
    if (phew_read_particles(&context, path.c_str(), &options, &set) != PHEW_OK)
    {
      amr->Initialize();
      this->ReportFailure(context.message);
      return 1;
    }
    particles->ShallowCopy(phew_snapshot_data::Particles(set));
    phew_particle_set_free(&set);
    particles->GetInformation()->Set(vtkDataObject::DATA_TIME_STEP(), this->ChosenTime);
  }
  return 1;
}

void vtkPHEWRAMSESReader::PrintSelf(ostream& os, vtkIndent indent)
{
  this->Superclass::PrintSelf(os, indent);
  os << indent << "Family: " << (this->Family ? this->Family : "(none)") << "\n";
  os << indent << "ReadAMR: " << this->ReadAMR << "\n";
  os << indent << "ReadParticles: " << this->ReadParticles << "\n";
}
