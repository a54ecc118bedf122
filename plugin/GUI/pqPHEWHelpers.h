/**
 * Small helpers the GUI parts share: running an action once the event loop is back, making a
 * filter proxy of the session that never shows in the pipeline browser, updating one at the
 * time the views show, and extracting what a selection selects.
 */
#ifndef pqPHEWHelpers_h
#define pqPHEWHelpers_h

#include "pqServer.h"
#include "pqTimeKeeper.h"
#include "vtkSMPropertyHelper.h"
#include "vtkSMSessionProxyManager.h"
#include "vtkSMSourceProxy.h"
#include "vtkSmartPointer.h"

#include <QPointer>
#include <QTimer>

namespace phew_gui
{
/// Runs action(object) once the event loop is back, if the object still exists: Qt signals
/// come while ParaView is still setting the object up.
template <class T, class Action>
void Later(QObject* context, T* object, Action action)
{
  QPointer<T> guarded(object);
  QTimer::singleShot(0, context, [guarded, action]() {
    if (guarded)
    {
      action(guarded.data());
    }
  });
}

/// A new filter proxy ("filters" group) of the server's session, not registered: it never
/// shows in the pipeline browser and goes with the returned pointer.
inline vtkSmartPointer<vtkSMSourceProxy> NewHiddenFilter(pqServer* server, const char* name)
{
  vtkSmartPointer<vtkSMSourceProxy> proxy;
  proxy.TakeReference(
    vtkSMSourceProxy::SafeDownCast(server->proxyManager()->NewProxy("filters", name)));
  return proxy;
}

/// Updates `proxy` at the time the views show (UpdatePipeline() without a time gives a time
/// series' first step, not the one on screen).
inline void UpdateAtShownTime(vtkSMSourceProxy* proxy, pqServer* server)
{
  proxy->UpdatePipeline(server->getTimeKeeper()->getTime());
}

/// What `selection` (a selection source's output port) selects of (data, port), extracted at
/// the time shown by a hidden Extract Selection: read its data information. nullptr when the
/// filter cannot be made.
inline vtkSmartPointer<vtkSMSourceProxy> ExtractSelected(pqServer* server, vtkSMSourceProxy* data,
  unsigned int port, vtkSMSourceProxy* selection, unsigned int selectionPort)
{
  auto extract = NewHiddenFilter(server, "ExtractSelection");
  if (extract)
  {
    vtkSMPropertyHelper(extract, "Input").Set(data, port);
    vtkSMPropertyHelper(extract, "Selection").Set(selection, selectionPort);
    extract->UpdateVTKObjects();
    UpdateAtShownTime(extract, server);
  }
  return extract;
}
}

#endif
