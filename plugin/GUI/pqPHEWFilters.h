/**
 * Which PHEW filter a pipeline source is, for the GUI parts (by the proxy's XML name).
 */
#ifndef pqPHEWFilters_h
#define pqPHEWFilters_h

#include "pqPipelineSource.h"
#include "vtkSMProxy.h"

#include <cstring>

namespace phew_gui
{
/// True when source is the filter with this XML name (PHEWClumpFinder, ...).
inline bool IsFilter(pqPipelineSource* source, const char* xmlName)
{
  const char* name = source && source->getProxy() ? source->getProxy()->GetXMLName() : nullptr;
  return name && std::strcmp(name, xmlName) == 0;
}

/// Friends-of-Friends or HOP: labelled particles (GroupId) and a Groups table.
inline bool IsHaloFinder(pqPipelineSource* source)
{
  return IsFilter(source, "PHEWFriendsOfFriends") || IsFilter(source, "PHEWHOPHaloFinder");
}

/// The filters that find structures: the clump finder and the halo finders.
inline bool IsStructureFinder(pqPipelineSource* source)
{
  return IsFilter(source, "PHEWClumpFinder") || IsHaloFinder(source);
}

/// The PHEW Merger Tree's output ports (vtkPHEWMergerTree::OutputPorts).
const int LINKS_PORT = 0;
const int TREE_DRAWING_PORT = 2;
const int MASS_HISTORY_PORT = 3;

/// Any filter of the plugin (their XML names start with PHEW).
inline bool IsPHEWFilter(pqPipelineSource* source)
{
  const char* name = source && source->getProxy() ? source->getProxy()->GetXMLName() : nullptr;
  return name && std::strncmp(name, "PHEW", 4) == 0;
}
}

#endif
