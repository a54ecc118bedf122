"""pvbatch test under mpiexec (ctest runs it with 1, 2, 3 and 4 ranks): the PHEW Clump Finder on
overlapping AMR gives, for any number of ranks, exactly the labels and tables of the one-process
run saved by test_plugin_amr_reference.py (a fixture).

Every case of test_plugin_amr_cases.CASES runs with its blocks spread over the ranks in two ways:
  - "reader": ParaView's XMLUniformGridAMRReader with all levels (each rank reads a contiguous
    range of blocks in level order, and has null datasets for the others);
  - "scatter": every rank reads the file and keeps a pattern of blocks (block k on rank
    (2k + 1) mod n, every third block also on rank (k + 2) mod n: held twice);
and the AMR Gaussian Pulse source runs once (it makes every block on every rank).
The labels of every block each rank holds are written by that rank (a Programmable Filter
after the finder); every block must be held by some rank, and every copy must equal the
reference byte for byte. The tables fetched from rank 0 must equal the reference CSV files
byte for byte (%.17g), and the other ranks must hold no rows.

    mpiexec -np N pvbatch test_plugin_amr.py --plugin PHEW.so --source-dir SRC --work-dir DIR \\
        --answers-dir ANS --ranks N
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


from phew_plugin_testing import take_option  # noqa: E402

answers_dir = take_option("--answers-dir")
ranks_expected = take_option("--ranks")

import numpy as np
from paraview import servermanager as sm
from paraview.simple import *  # noqa: F401,F403

import phew_plugin_testing as pt
import test_plugin_amr_cases as cases

args = pt.parse_args()
LoadPlugin(args.plugin, remote=False, ns=globals())
check = pt.Checker("plugin_amr")
n_ranks = pt.number_of_ranks()
print("ranks: %d" % n_ranks, flush=True)
if ranks_expected is not None:
    check.check(n_ranks == int(ranks_expected), "expected %s ranks, got %d" % (ranks_expected, n_ranks))


def compare(label, reference, source, density, properties):
    cases.compare_with_answers(globals(), check, label, reference, source, density, properties, args.work_dir,
                               answers_dir, n_ranks)


for label, (filename, density, properties, _) in cases.CASES.items():
    path = cases.case_path(filename, answers_dir, args.source_dir)
    if not os.path.exists(os.path.join(answers_dir, label + "-labels.npz")):
        print("%s: skipped, no one-process answer (its file %s is missing)" % (label, path), flush=True)
        continue
    reader = XMLUniformGridAMRReader(FileName=[path])
    reader.DefaultNumberOfLevels = 0
    compare(label + "-reader", label, reader, density, properties)
    scatter = ProgrammableFilter(Input=reader, OutputDataSetType="Same as Input",
                                 Script=cases.SCATTER_SCRIPT.format(path=path))
    compare(label + "-scatter", label, scatter, density, properties)
    Delete(scatter)
    Delete(reader)

pulse = AMRGaussianPulseSource()
compare("pulse", "pulse", pulse, "Gaussian-Pulse", dict(DensityThreshold=1e-3))
Delete(pulse)

check.finish(exit_on_success=False)
