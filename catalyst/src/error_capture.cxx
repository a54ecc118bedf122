#include "error_capture.h"

#include <vtkObjectFactory.h>

namespace phew_catalyst_detail
{
class RecordingWindow : public vtkOutputWindow
{
public:
  static RecordingWindow* New();
  vtkTypeMacro(RecordingWindow, vtkOutputWindow);

  vtkOutputWindow* Forward = nullptr;
  std::string Recorded;

  void DisplayErrorText(const char* text) override
  {
    if (text)
    {
      this->Recorded += this->Recorded.empty() ? "" : "\n";
      this->Recorded += text;
    }
    if (this->Forward)
    {
      this->Forward->DisplayErrorText(text);
    }
  }
  void DisplayText(const char* text) override
  {
    if (this->Forward)
    {
      this->Forward->DisplayText(text);
    }
  }
  void DisplayWarningText(const char* text) override
  {
    if (this->Forward)
    {
      this->Forward->DisplayWarningText(text);
    }
  }
  void DisplayGenericWarningText(const char* text) override
  {
    if (this->Forward)
    {
      this->Forward->DisplayGenericWarningText(text);
    }
  }
  void DisplayDebugText(const char* text) override
  {
    if (this->Forward)
    {
      this->Forward->DisplayDebugText(text);
    }
  }
};
vtkStandardNewMacro(RecordingWindow);

ErrorCapture::ErrorCapture()
  : Previous(vtkOutputWindow::GetInstance())
  , Recorder(vtkSmartPointer<RecordingWindow>::New())
{
  this->Recorder->Forward = this->Previous;
  vtkOutputWindow::SetInstance(this->Recorder);
}

ErrorCapture::~ErrorCapture()
{
  vtkOutputWindow::SetInstance(this->Previous);
}

bool ErrorCapture::HasErrors() const
{
  return !this->Recorder->Recorded.empty();
}

std::string ErrorCapture::Errors() const
{
  // the last lines say most (a traceback ends with the exception; VTK's lines end with the text)
  const std::string& all = this->Recorder->Recorded;
  const size_t limit = 2000;
  return all.size() <= limit ? all : "..." + all.substr(all.size() - limit);
}
}
