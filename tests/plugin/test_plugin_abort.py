"""Abort and progress: a progress observer that sets AbortExecute stops the PHEW Clump
Finder (inside the watershed, at a later stage, or after the core before the outputs are
built) with empty outputs and one warning, no error; a change of property runs it again in
full; progress names the filter, rises monotonically and is reported inside the watershed and
the catalogue.
On datasets/sample.vti with the defaults (14 clumps).
"""
import os

from paraview.simple import LoadPlugin, XMLImageDataReader
from vtkmodules.util.misc import calldata_type
from vtkmodules.util.vtkConstants import VTK_STRING
from vtkmodules.vtkCommonCore import vtkCommand

import phew_plugin_testing as testing

args = testing.parse_args()
LoadPlugin(args.plugin, ns=globals())
check = testing.Checker("phew_plugin_abort").check

reader = XMLImageDataReader(FileName=os.path.join(args.source_dir, "datasets", "sample.vti"))
finder = PHEWClumpFinder(Input=reader)  # noqa: F821 (from the plugin)
finder.Density = ["CELLS", "density"]
algorithm = finder.GetClientSideObject()
events = []
abort_at = [None]
warnings, errors = [], []


def on_progress(caller, event):
    events.append((caller.GetProgress(), caller.GetProgressText() or ""))
    if abort_at[0] is not None and abort_at[0](caller.GetProgress(), caller.GetProgressText() or ""):
        caller.SetAbortExecute(1)


@calldata_type(VTK_STRING)
def on_warning(caller, event, message):
    warnings.append(str(message))


@calldata_type(VTK_STRING)
def on_error(caller, event, message):
    errors.append(str(message))


algorithm.AddObserver(vtkCommand.ProgressEvent, on_progress)
algorithm.AddObserver(vtkCommand.WarningEvent, on_warning)
algorithm.AddObserver(vtkCommand.ErrorEvent, on_error)

relevance = [2.0]


def run(stop_when):
    """Runs the filter again (a new relevance threshold each time, so that it does run)."""
    del events[:], warnings[:], errors[:]
    abort_at[0] = stop_when
    relevance[0] += 0.001
    finder.RelevanceThreshold = relevance[0]
    finder.UpdatePipeline()
    return finder.GetDataInformation(1).GetNumberOfRows(), finder.GetDataInformation(0).GetNumberOfCells()


# A whole run: progress named, monotonic, with ticks inside the watershed and the catalogue.
rows, cells = run(None)
check(rows == 14 and cells == 64 ** 3, "a whole run: 14 clumps and the labels (%d, %d)" % (rows, cells))
fractions = [f for f, _ in events]
check(all(b >= a for a, b in zip(fractions, fractions[1:])) and fractions[-1] == 1.0,
      "progress rises to 1: %s" % fractions)
named = [t for _, t in events if t]
check(named and all(t.startswith("PHEW Clump Finder: ") for t in named),
      "progress names the filter: %s" % sorted(set(named)))
inside = [f for f, t in events if t.endswith("watershed")]
check(len(inside) >= 10 and len(set(inside)) >= 10,
      "the watershed reports as it goes: %d reports, %d values" % (len(inside), len(set(inside))))
inside = [f for f, t in events if t.endswith("properties")]
check(len(set(inside)) >= 10,
      "the catalogue (properties) reports as it goes: %d reports, %d values" % (len(inside), len(set(inside))))
stages = [t.split(": ")[1] for t in named]
for stage in ("preparing the cells", "watershed", "saddles", "noise removal", "saddle merging", "properties",
              "labels and tables", "drawings", "done"):
    check(stage in stages, "progress names the stage '%s'" % stage)

# Stopped inside the watershed, at the properties stage, and after the core.
for what, stop_when in (("inside the watershed", lambda f, t: t.endswith("watershed") and f > 0.1),
                        ("at the properties stage", lambda f, t: t.endswith("properties")),
                        ("after the core", lambda f, t: t.endswith("done") and f < 1.0)):
    rows, cells = run(stop_when)
    check(rows == 0 and cells == 0, "stopped %s: empty outputs (%d rows, %d cells)" % (what, rows, cells))
    check(len(warnings) == 1 and "stopped on request" in warnings[0],
          "stopped %s: one warning that says so: %s" % (what, warnings))
    check(not errors, "stopped %s: no error: %s" % (what, errors))
    check(events[-1][1].endswith("stopped"), "stopped %s: progress ends on 'stopped': %s" % (what, events[-1]))
    if what == "inside the watershed":
        last = [f for f, t in events if t.endswith("watershed")][-1]
        check(last < 0.5, "it stopped within the watershed's loop (at %.3f)" % last)
        check(not any(t.endswith("saddles") for _, t in events), "no later stage ran")

# The next run is whole again.
rows, cells = run(None)
check(rows == 14 and cells == 64 ** 3 and not warnings and not errors,
      "after a stop a new run is whole (%d rows, %d cells, %s %s)" % (rows, cells, warnings, errors))

testing.Checker.finish(check.__self__)
