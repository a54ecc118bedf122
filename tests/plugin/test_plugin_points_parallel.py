"""pvbatch test under mpiexec (ctest runs it with 1, 2 and 4 ranks): the PHEW Clump Finder and
Particle Density on distributed particles give, for every particle, the labels and density of
the one-process run (saved by test_plugin_points.py, a fixture), and the same tables, byte for
byte.

Each rank gets its share of the particles of points_cases.py from a Programmable Source:
  - "contiguous": consecutive runs in the file's order, rank 0's first (no Id array: the
    global order is the file's order, as in the one-process run);
  - "scattered": every n-th particle, in reverse order, with the Id array (the answer of the
    one-process run with the same ids);
  - "partitioned": the contiguous shares, each split into two partitions of a
    vtkPartitionedDataSet;
  - "rank0_empty": rank 0 holds no particle, the others consecutive runs, with ids.
Every rank writes the labels and densities of the points it holds (with their index in the
file) after the finder; every particle must come back exactly once with the one-process
labels; the tables fetched from rank 0 must equal the one-process CSV text, and the other
ranks hold no rows. With several ranks, a NaN position or a missing mass array on the last
rank only must stop every rank with one message, without a hang.

    mpiexec -np N pvbatch test_plugin_points_parallel.py --plugin PHEW.so --source-dir SRC \\
        --work-dir DIR --answers-dir ANS --ranks N
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from phew_plugin_testing import take_option  # noqa: E402

answers_dir = take_option("--answers-dir")
ranks_expected = take_option("--ranks")

from paraview.simple import *  # noqa: F401,F403,E402

import phew_plugin_testing as pt  # noqa: E402
import points_cases as pc  # noqa: E402

args = pt.parse_args()
LoadPlugin(args.plugin, remote=False, ns=globals())
check = pt.Checker("plugin_points_parallel")
n_ranks = pt.number_of_ranks()
print("ranks: %d" % n_ranks, flush=True)
if ranks_expected is not None:
    check.check(n_ranks == int(ranks_expected), "expected %s ranks, got %d" % (ranks_expected, n_ranks))

particles = os.path.join(answers_dir, "particles.npz")


def compare(label, reference, mode, partitions=1, density_only=False, **extra):
    pc.compare_with_answers(globals(), check, label, reference, mode, args.work_dir, answers_dir, n_ranks,
                            partitions=partitions, density_only=density_only, **extra)


compare("contiguous", "base", "contiguous")
compare("scattered", "ids", "scattered", Id=["POINTS", "ids"])
compare("partitioned", "base", "contiguous", partitions=2)
compare("rank0_empty", "ids", "rank0_empty", Id=["POINTS", "ids"])
compare("density", "base", "contiguous", density_only=True)

# A problem on the last rank only stops every rank, with its message, and no hang.
SPOIL = """
from vtkmodules.vtkParallelCore import vtkMultiProcessController
controller = vtkMultiProcessController.GetGlobalController()
output = self.GetOutput()
output.DeepCopy(self.GetInput())
if controller.GetLocalProcessId() == controller.GetNumberOfProcesses() - 1:
    if {nan}:
        output.GetPoints().SetPoint(3, float('nan'), 0.5, 0.5)
    else:
        output.GetPointData().RemoveArray('mass')
"""
if n_ranks > 1:
    shares = pc.share_source(ProgrammableSource, particles, "contiguous")
    for label, nan, words in (("NaN on the last rank", True, ["not finite"]),
                              ("no masses on the last rank", False, ["mass array 'mass'", "not a point array"])):
        spoiled = ProgrammableFilter(Input=shares, OutputDataSetType="Same as Input", Script=SPOIL.format(nan=nan))
        finder = PHEWClumpFinder(Input=spoiled, **pc.BASE)
        finder.DensityThreshold = pc.THRESHOLD
        errors = pt.ErrorCatcher(finder)
        finder.UpdatePipeline()
        text = errors.text()
        print("%s -> %s" % (label, text.strip().replace("\n", " | ")), flush=True)
        for word in words:
            check.check(word in text, "%s: the message does not mention '%s': %s" % (label, word, text))
        points = finder.GetDataInformation().GetNumberOfPoints()
        rows = OutputPort(finder, 1).GetDataInformation().GetNumberOfRows()
        check.check(points == 0 and rows == 0, "%s: %d points and %d clump rows over the ranks" % (label, points, rows))
        Delete(finder)
        Delete(spoiled)
    Delete(shares)

check.finish(exit_on_success=False)
