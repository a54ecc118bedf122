#include "vtkPHEWGadgetReader.h"

#include "vtkDataObject.h"
#include "vtkInformation.h"
#include "vtkInformationVector.h"
#include "vtkObjectFactory.h"
#include "vtkPHEWSnapshotData.h"
#include "vtkPolyData.h"

vtkStandardNewMacro(vtkPHEWGadgetReader);

vtkPHEWGadgetReader::vtkPHEWGadgetReader()
{
  this->SetNumberOfOutputPorts(1);
}

int vtkPHEWGadgetReader::FillOutputPortInformation(int, vtkInformation* info)
{
  info->Set(vtkDataObject::DATA_TYPE_NAME(), "vtkPolyData");
  return 1;
}

int vtkPHEWGadgetReader::CanReadFile(const char* name)
{
  return phew_snapshot_format_of(name) == PHEW_FORMAT_GADGET_HDF5 ? 1 : 0;
}

int vtkPHEWGadgetReader::RequestData(
  vtkInformation* request, vtkInformationVector**, vtkInformationVector* outputs)
{
  vtkPolyData* output = vtkPolyData::GetData(outputs, 0);
  std::string path;
  void* comm = nullptr;
  if (!this->ChooseSnapshot(request, outputs, path, &comm))
  {
    return 1; // nothing for this rank, or no snapshot (ChooseSnapshot said why)
  }
  phew_context context;
  phew_read_options options;
  this->StartRead(comm, PHEW_FORMAT_GADGET_HDF5, context, options);
  options.particle_type = this->ParticleType;
  options.all_fields = this->AllFields;
  phew_particle_set set;
  if (phew_read_particles(&context, path.c_str(), &options, &set) != PHEW_OK)
  {
    this->ReportFailure(context.message);
    return 1;
  }
  output->ShallowCopy(phew_snapshot_data::Particles(set));
  phew_particle_set_free(&set);
  output->GetInformation()->Set(vtkDataObject::DATA_TIME_STEP(), this->ChosenTime);
  return 1;
}

void vtkPHEWGadgetReader::PrintSelf(ostream& os, vtkIndent indent)
{
  this->Superclass::PrintSelf(os, indent);
  os << indent << "ParticleType: " << this->ParticleType << "\n";
  os << indent << "AllFields: " << this->AllFields << "\n";
}
