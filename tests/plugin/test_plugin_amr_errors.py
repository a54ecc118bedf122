"""pvbatch test under mpiexec with 2 ranks: the PHEW Clump Finder on AMR input that it cannot
use fails cleanly, on every rank, without a hang, also when only one rank sees the problem,
and works again once the problem is gone.

Rank 0 (where this script runs) must report a message that says what is wrong; every output
must be empty on every rank (checked through the gathered data information). ctest's timeout
catches a deadlock. Cases: refinement ratio 3, point data, an empty AMR, a 2-D AMR, a NaN in
one block (held by one rank), a vector density, the density missing on rank 1 only, a block
held by no rank, ranks that see different hierarchies, a multiblock of images (composite data
other than AMR: refused whole, never run block by block); and a reader that loads level 0 only
(a warning, not an error: the finder runs on the loaded level).

    mpiexec -np 2 pvbatch test_plugin_amr_errors.py --plugin PHEW.so --source-dir SRC --work-dir DIR
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np
from paraview.simple import *  # noqa: F401,F403
from vtkmodules.util.misc import calldata_type
from vtkmodules.util.vtkConstants import VTK_STRING
from vtkmodules.vtkCommonCore import vtkCommand

import phew_plugin_testing as pt
import test_plugin_amr_cases as cases

args = pt.parse_args()
LoadPlugin(args.plugin, remote=False, ns=globals())
check = pt.Checker("plugin_amr_errors")
n_ranks = pt.number_of_ranks()
check.check(n_ranks == 2, "expected 2 ranks, got %d" % n_ranks)

# The nested hierarchy with more arrays: a NaN in the last block (the reader gives it to rank 1),
# a point density.
layout = cases.nested_layout()
arrays = cases.nested_arrays(layout)
rho = cases.blob_density(cases.nested_blobs(layout))
last = (len(layout.levels) - 1, len(layout.levels[-1]) - 1)


def with_nan(level, index, x, y, z):
    values = rho(x, y, z)
    if (level, index) == last:
        values[1, 2, 3] = np.nan
    return values


arrays["density_nan"] = with_nan
nested = cases.write_vthb(os.path.join(args.work_dir, "nested.vthb"),
                          cases.build_amr(layout, arrays, point_arrays={"point_density": lambda l, i, x, y, z: rho(x, y, z)}))
# Refinement ratio 3: level 1 has a third of level 0's spacing.
ratio3 = cases.Layout(level0_dims=(6, 6, 6), origin=(0, 0, 0), spacing=(1, 1, 1), lo0=(0, 0, 0),
                      levels=[[((0, 0, 0), (6, 6, 6))], [((3, 3, 3), (6, 6, 6))]])
ratio3_path = cases.write_vthb(os.path.join(args.work_dir, "ratio3.vthb"),
                               cases.build_amr(ratio3, {"density": lambda l, i, x, y, z: rho(x, y, z)}, ratio=3))

reader = XMLUniformGridAMRReader(FileName=[nested])
reader.DefaultNumberOfLevels = 0
finder = PHEWClumpFinder(Input=reader, Density=["CELLS", "density"])
finder.DensityThreshold = 0.5
errors = pt.ErrorCatcher(finder)


class WarningCatcher:
    def __init__(self, proxy):
        self.messages = []
        proxy.GetClientSideObject().AddObserver(vtkCommand.WarningEvent, self._on_warning)

    @calldata_type(VTK_STRING)
    def _on_warning(self, caller, event, message):
        self.messages.append(str(message))


warnings = WarningCatcher(finder)


def outputs_empty(label):
    cells = finder.GetDataInformation().GetNumberOfCells()
    check.check(cells == 0, "%s: the Labels output has %d cells over the ranks" % (label, cells))
    for port, name in pt.TABLE_PORTS:
        rows = OutputPort(finder, port).GetDataInformation().GetNumberOfRows()
        check.check(rows == 0, "%s: the %s table has %d rows" % (label, name, rows))


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
    check.check(finder.GetDataInformation().GetDataSetTypeAsString() == "vtkOverlappingAMR",
                "%s: the Labels output is a %s" % (label, finder.GetDataInformation().GetDataSetTypeAsString()))
    cells = finder.GetDataInformation().GetNumberOfCells()
    check.check(cells > 0, "%s: the Labels output has no cells" % label)
    rows = OutputPort(finder, 1).GetDataInformation().GetNumberOfRows()
    check.check(rows >= 1, "%s: %d clumps" % (label, rows))
    return cells, rows


def use_input(source):
    finder.Input = source


baseline = expect_success("baseline")
expect_error("NaN in one block of one rank", ["density_nan", "nan"], Density=["CELLS", "density_nan"])
expect_error("vector density", ["velocity", "3 components"], Density=["CELLS", "velocity"])
expect_error("point data", ["point_density", "point data", "cell data"], Density=["POINTS", "point_density"])
expect_error("missing array", ["no_such_array"], Density=["CELLS", "no_such_array"])
expect_success("fixed density", Density=["CELLS", "density"])

# The density missing from rank 1's blocks only. (Outputs are built anew with the input's
# metadata: in VTK 9.2 SetDataSet on a block already set adds a second entry, and
# SetDataSet(None) does nothing.)
holed = ProgrammableFilter(Input=reader, OutputDataSetType="Same as Input", Script="""
from vtkmodules.vtkParallelCore import vtkMultiProcessController
rank = vtkMultiProcessController.GetGlobalController().GetLocalProcessId()
source = self.GetInput()
output = self.GetOutput()
output.Initialize()
output.SetAMRInfo(source.GetAMRInfo())
for level in range(source.GetNumberOfLevels()):
    for index in range(source.GetNumberOfDataSets(level)):
        block = source.GetDataSet(level, index)
        if block is not None and rank == 1:
            copy = block.NewInstance()
            copy.ShallowCopy(block)
            copy.GetCellData().RemoveArray("density")
            block = copy
        if block is not None:
            output.SetDataSet(level, index, block)
""")
use_input(holed)
expect_error("array missing on rank 1 only", ["density", "not a cell array"])

# A block of level 1 held by no rank, while level 2 is there.
gap = ProgrammableFilter(Input=reader, OutputDataSetType="Same as Input", Script="""
source = self.GetInput()
output = self.GetOutput()
output.Initialize()
output.SetAMRInfo(source.GetAMRInfo())
for level in range(source.GetNumberOfLevels()):
    for index in range(source.GetNumberOfDataSets(level)):
        block = source.GetDataSet(level, index)
        if block is not None and (level, index) != (1, 0):
            output.SetDataSet(level, index, block)
""")
use_input(gap)
expect_error("block held by no rank", ["no rank holds", "block 0 of level 1"])

# An empty AMR (no levels, no blocks).
empty = ProgrammableFilter(Input=reader, OutputDataSetType="Same as Input", Script="self.GetOutput().Initialize()")
use_input(empty)
expect_error("empty AMR", ["empty"])

# Ranks that see different hierarchies (rank 1 has another file).
other = cases.write_vthb(os.path.join(args.work_dir, "other.vthb"),
                         cases.build_amr(ratio3, {"density": lambda l, i, x, y, z: rho(x, y, z)}, ratio=2))
mixed = ProgrammableFilter(Input=reader, OutputDataSetType="Same as Input", Script="""
from vtkmodules.vtkIOXML import vtkXMLUniformGridAMRReader
from vtkmodules.vtkParallelCore import vtkMultiProcessController
output = self.GetOutput()
if vtkMultiProcessController.GetGlobalController().GetLocalProcessId() == 1:
    r = vtkXMLUniformGridAMRReader()
    r.SetFileName(%r)
    r.SetMaximumLevelsToReadByDefault(0)
    r.Update()
    output.ShallowCopy(r.GetOutput())
else:
    output.ShallowCopy(self.GetInput())
""" % other)
use_input(mixed)
expect_error("ranks with different hierarchies", ["same AMR hierarchy"])

# Refinement ratio 3.
ratio_reader = XMLUniformGridAMRReader(FileName=[ratio3_path])
ratio_reader.DefaultNumberOfLevels = 0
use_input(ratio_reader)
expect_error("refinement ratio 3", ["refinement ratio", "3", "ratio 2"])

# 2-D AMR.
flat = AMRGaussianPulseSource(Dimension="2D")
use_input(flat)
expect_error("2-D AMR", ["not 3-D"], Density=["CELLS", "Gaussian-Pulse"], DensityThreshold=1e-3)

# A composite input of another kind (a multiblock of images) arrives whole, not block by block,
# and is refused on every rank.
waves = [Wavelet(WholeExtent=[0, 7, 0, 7, 0, 7]) for _ in range(2)]
group = GroupDatasets(Input=waves)
use_input(group)
expect_error("multiblock of images", ["unsupported input type", "vtkMultiBlockDataSet"],
             Density=["POINTS", "RTData"], DensityThreshold=0.0)

# The reader's default: level 0 only. A warning, and the finder runs on level 0.
use_input(reader)
finder.Density = ["CELLS", "density"]
finder.DensityThreshold = 0.5
reader.DefaultNumberOfLevels = 1
warnings.messages = []
cells, rows = expect_success("level 0 only")
check.check(any("not loaded" in m and "DefaultNumberOfLevels" in m for m in warnings.messages),
            "level 0 only: no warning about the levels not loaded: %s" % warnings.messages)
check.check(any("levels 1 to %d of the AMR are not loaded" % (len(layout.levels) - 1) in m
                and "PHEW runs on levels 0 to 0." in m for m in warnings.messages),
            "level 0 only: the warning names the levels left out and those used: %s" % warnings.messages)
reader.DefaultNumberOfLevels = 0
warnings.messages = []
check.check(expect_success("every level again") == baseline, "every level again: another answer than the first run")
check.check(not warnings.messages, "every level: unexpected warning %s" % warnings.messages)
names = sorted(reader.CellData.keys())
check.check("PeakPatchId" not in names, "the input's cell arrays changed: %s" % names)
check.finish(exit_on_success=False)
