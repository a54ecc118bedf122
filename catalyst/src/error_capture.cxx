#include "error_capture.h"

#include <vtkObjectFactory.h>

#include <cstring>

namespace phew_catalyst_detail
{
class RecordingWindow : public vtkOutputWindow
{
public:
  static RecordingWindow* New();
  vtkTypeMacro(RecordingWindow, vtkOutputWindow);

  vtkOutputWindow* Forward = nullptr;
  std::string Recorded;
  std::string FirstFilterError; // the first vtkErrorMacro text: the cause, the others follow it

  void DisplayErrorText(const char* text) override
  {
    // Python writes a traceback in pieces, each with its own newlines; the executive's
    // "returned failure for request" dump after a filter's own error says nothing more
    if (text && !std::strstr(text, "returned failure for request"))
    {
      this->Recorded += text;
      if (this->FirstFilterError.empty() && std::strncmp(text, "ERROR: In ", 10) == 0)
      {
        this->FirstFilterError = text;
      }
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

std::string ErrorCapture::Errors(const std::vector<std::string>& files) const
{
  // a traceback ends with the exception: its last lines say most; without one, the first
  // filter's error is the cause (the filters after it fail for want of its output)
  const bool traceback = this->Recorder->Recorded.find("Traceback") != std::string::npos;
  const std::string& all = traceback || this->Recorder->FirstFilterError.empty()
    ? this->Recorder->Recorded
    : this->Recorder->FirstFilterError;
  std::vector<std::string> lines;
  size_t begin = 0;
  while (begin < all.size())
  {
    size_t end = all.find('\n', begin);
    end = end == std::string::npos ? all.size() : end;
    const std::string line = all.substr(begin, end - begin);
    if (line.find_first_not_of(" \t\r") != std::string::npos)
    {
      lines.push_back(line);
    }
    begin = end + 1;
  }
  const size_t keep = 2, first = lines.size() > keep ? lines.size() - keep : 0;
  std::string text;
  for (size_t k = first; k-- > 0;)
  {
    for (const std::string& file : files)
    {
      if (text.empty() && !file.empty() && lines[k].find(file) != std::string::npos)
      {
        text = lines[k] + "\n";
      }
    }
  }
  for (size_t k = first; k < lines.size(); ++k)
  {
    text += lines[k] + (k + 1 < lines.size() ? "\n" : "");
  }
  return text.empty() ? "(no message)" : text;
}
}
