"""pvbatch test under mpiexec with 2 ranks: the PHEW Clump Finder fails cleanly on bad input
on every rank, without a hang, also when only one rank sees the problem (the density array
missing from one piece, a NaN in one piece), and works again once the problem is fixed.

Rank 0 (where this script runs) must report a message that says what is wrong, even when the
problem was found on rank 1; every output must be empty on every rank (checked through the
gathered data information). ctest's timeout catches a deadlock.

    mpiexec -np 2 pvbatch test_plugin_parallel_errors.py --plugin PHEW.so --source-dir SRC --work-dir DIR
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np
from paraview.simple import *  # noqa: F401,F403

import phew_plugin_testing as pt

args = pt.parse_args()
LoadPlugin(args.plugin, remote=False, ns=globals())
check = pt.Checker("plugin_parallel_errors")
n_ranks = pt.number_of_ranks()
check.check(n_ranks == 2, "expected 2 ranks, got %d" % n_ranks)

dims = (24, 20, 16)
rho = pt.blob_field(dims, pt.standard_blobs(dims), noise=0.01, seed=3)
velocity = np.stack([rho, 2 * rho, 3 * rho], axis=-1)
with_nan = rho.copy()
with_nan[1, 2, 3] = np.nan  # in one piece only, whichever way the image is split
vti = pt.write_vti(os.path.join(args.work_dir, "bad.vti"),
                   pt.make_image(rho, "CELLS", extra={"velocity": velocity, "with_nan": with_nan}))

reader = XMLImageDataReader(FileName=[vti])
# Rank 1's piece loses the density array; rank 0's keeps it.
holed = ProgrammableFilter(Input=reader, Script="""
from vtkmodules.vtkParallelCore import vtkMultiProcessController
output = self.GetOutput()
output.ShallowCopy(self.GetInput())
if vtkMultiProcessController.GetGlobalController().GetLocalProcessId() == 1:
    output.GetCellData().RemoveArray("density")
""")
finder = PHEWClumpFinder(Input=reader, Density=["CELLS", "density"])
finder.DensityThreshold = 0.3
errors = pt.ErrorCatcher(finder)


def outputs_empty(label):
    check.check(finder.GetDataInformation().GetNumberOfCells() == 0,
                "%s: the Labels output has %d cells over the ranks" % (label, finder.GetDataInformation().GetNumberOfCells()))
    for port, name in pt.TABLE_PORTS:
        info = OutputPort(finder, port).GetDataInformation()
        check.check(info.GetNumberOfRows() == 0, "%s: the %s table has %d rows" % (label, name, info.GetNumberOfRows()))


def expect_error(label, words, **properties):
    errors.clear()
    for key, value in properties.items():
        setattr(finder, key, value)
    finder.UpdatePipeline()
    text = errors.text()
    print("%s -> %s" % (label, text.strip().replace("\n", " | ") or "(no error)"), flush=True)
    check.check(bool(errors.messages), "%s: no error message on rank 0" % label)
    for word in words:
        check.check(word.lower() in text.lower(), "%s: the message does not mention '%s': %s" % (label, word, text))
    outputs_empty(label)


def expect_success(label, **properties):
    errors.clear()
    for key, value in properties.items():
        setattr(finder, key, value)
    finder.UpdatePipeline()
    check.check(not errors.messages, "%s: unexpected error: %s" % (label, errors.text()))
    cells = finder.GetDataInformation().GetNumberOfCells()
    check.check(cells == rho.size, "%s: the Labels output has %d cells over the ranks, not %d" % (label, cells, rho.size))
    rows = OutputPort(finder, 1).GetDataInformation().GetNumberOfRows()
    check.check(rows >= 1, "%s: %d clumps" % (label, rows))


expect_success("baseline")
expect_error("missing array", ["no_such_array"], Density=["CELLS", "no_such_array"])
expect_error("vector array", ["velocity", "3 components"], Density=["CELLS", "velocity"])
expect_error("NaN in one piece", ["with_nan", "NaN"], Density=["CELLS", "with_nan"])
expect_success("fixed density", Density=["CELLS", "density"])
expect_error("relevance below 1", ["relevance"], RelevanceThreshold=0.5)
finder.RelevanceThreshold = 2.0
expect_success("fixed threshold", DensityThreshold=0.3)
finder.Input = holed
expect_error("array missing on rank 1 only", ["density", "not a point or cell array"])
finder.Input = reader
expect_success("whole input again")
names = sorted(reader.CellData.keys())
check.check(names == ["density", "velocity", "with_nan"], "the input's cell arrays changed: %s" % names)
check.finish(exit_on_success=False)
