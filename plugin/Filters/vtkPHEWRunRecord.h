// SPDX-License-Identifier: BSD-3-Clause
/**
 * What a filter's catalogue tables came from, as their field data (the ParaView side of the
 * command-line tool's PREFIX-run.json): "PHEWParameters", one "Name = value" string per
 * parameter of the run (the filter, its properties, the box and periodic axes used), and the
 * field data of the input (a snapshot reader's metadata: SnapshotPath, Units, ScaleFactor,
 * HubbleParam, ...), so that a table saved or fetched alone still says its input and units.
 */
#ifndef vtkPHEWRunRecord_h
#define vtkPHEWRunRecord_h

#include "phew/phew.h"

#include <string>
#include <vector>

class vtkDataObject;
class vtkFieldData;

namespace phew_run_record
{
/// "Name = value", the value a number written exactly (%.17g) or text.
std::string Entry(const char* name, double value);
std::string Entry(const char* name, const std::string& value);

/// The box and periodic axes the core ran with (particles), or the grid's geometry, as entries.
void DescribeInput(const phew_input& in, std::vector<std::string>& entries);

/// Adds PHEWParameters (entries) and the input's field data (arrays the table does not have
/// yet) to a table's field data.
void Add(vtkFieldData* table, const std::vector<std::string>& entries, vtkDataObject* input);
}

#endif
