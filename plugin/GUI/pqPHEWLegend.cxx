#include "pqPHEWLegend.h"

#include "pqDataRepresentation.h"
#include "pqView.h"

#include "vtkSMPVRepresentationProxy.h"
#include "vtkSMPropertyHelper.h"
#include "vtkSMProxy.h"
#include "vtkSMTransferFunctionProxy.h"

#include <QPointer>

#include <memory>

namespace phew_gui
{
bool HideLegend(pqDataRepresentation* representation)
{
  vtkSMProxy* proxy = representation->getProxy();
  vtkSMProxy* view = representation->getView() ? representation->getView()->getProxy() : nullptr;
  vtkSMProxy* lut = vtkSMPropertyHelper(proxy, "LookupTable", true).GetAsProxy();
  vtkSMProxy* bar =
    lut && view ? vtkSMTransferFunctionProxy::FindScalarBarRepresentation(lut, view) : nullptr;
  if (!bar)
  {
    return false;
  }
  if (vtkSMPropertyHelper(bar, "Visibility").GetAsInt() != 0)
  {
    vtkSMPVRepresentationProxy::SetScalarBarVisibility(proxy, view, false);
  }
  return true;
}

void HideLegendOnceShown(pqDataRepresentation* representation)
{
  QPointer<pqDataRepresentation> guarded(representation);
  auto connection = std::make_shared<QMetaObject::Connection>();
  *connection =
    QObject::connect(representation->getView(), &pqView::endRender, [guarded, connection]() {
      if (!guarded || !guarded->getView() || HideLegend(guarded))
      {
        QObject::disconnect(*connection);
      }
    });
}
}
