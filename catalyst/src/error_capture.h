// While one of these lives, the errors VTK and ParaView report (vtkErrorMacro, Python
// tracebacks of Catalyst scripts) are recorded, and still shown as before.
#ifndef PHEW_CATALYST_ERROR_CAPTURE_H
#define PHEW_CATALYST_ERROR_CAPTURE_H

#include <vtkOutputWindow.h>
#include <vtkSmartPointer.h>

#include <string>
#include <vector>

namespace phew_catalyst_detail
{
class RecordingWindow;

class ErrorCapture
{
public:
  ErrorCapture();
  ~ErrorCapture();
  ErrorCapture(const ErrorCapture&) = delete;
  ErrorCapture& operator=(const ErrorCapture&) = delete;

  bool HasErrors() const;
  // The errors recorded, shortened: with a Python traceback its last lines, and the last line
  // that names one of these files (where the script went wrong); otherwise the first filter
  // error (vtkErrorMacro), whose failure made the later ones. "(no message)" if none.
  std::string Errors(const std::vector<std::string>& files) const;

private:
  vtkSmartPointer<vtkOutputWindow> Previous;
  vtkSmartPointer<RecordingWindow> Recorder;
};
}

#endif
