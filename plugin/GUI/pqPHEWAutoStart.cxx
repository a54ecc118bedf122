#include "pqPHEWAutoStart.h"

#include "pqPHEWDisplayBehavior.h"

pqPHEWAutoStart::pqPHEWAutoStart(QObject* parent)
  : Superclass(parent)
{
}

pqPHEWAutoStart::~pqPHEWAutoStart() = default;

void pqPHEWAutoStart::onStartup()
{
  this->Behavior = new pqPHEWDisplayBehavior(this);
  this->Behavior->startup();
}

void pqPHEWAutoStart::onShutdown()
{
  if (this->Behavior)
  {
    this->Behavior->shutdown();
    delete this->Behavior;
  }
}
