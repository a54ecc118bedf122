#include "pqPHEWAutoStart.h"

#include "pqPHEWColumnOrder.h"
#include "pqPHEWDisplayBehavior.h"
#include "pqPHEWMergerTreeBehavior.h"
#include "pqPHEWSelectionLinks.h"

pqPHEWAutoStart::pqPHEWAutoStart(QObject* parent)
  : Superclass(parent)
{
}

pqPHEWAutoStart::~pqPHEWAutoStart() = default;

void pqPHEWAutoStart::onStartup()
{
  this->Behavior = new pqPHEWDisplayBehavior(this);
  this->Behavior->startup();
  this->Links = new pqPHEWSelectionLinks(this);
  this->Links->startup();
  this->Columns = new pqPHEWColumnOrder(this);
  this->Columns->startup();
  this->Trees = new pqPHEWMergerTreeBehavior(this);
  this->Trees->startup();
}

void pqPHEWAutoStart::onShutdown()
{
  if (this->Behavior)
  {
    this->Behavior->shutdown();
    delete this->Behavior;
  }
  if (this->Links)
  {
    this->Links->shutdown();
    delete this->Links;
  }
  if (this->Columns)
  {
    this->Columns->shutdown();
    delete this->Columns;
  }
  if (this->Trees)
  {
    this->Trees->shutdown();
    delete this->Trees;
  }
}
