"""pvbatch test under mpirun with 2 ranks: parallel runs are not supported yet, so the filter
must fail on every rank with a clear message (no hang, no crash, empty outputs).
Replace this test when the plugin gains MPI support.

    mpirun -np 2 pvbatch test_plugin_parallel.py --plugin PHEW.so --source-dir SRC --work-dir DIR
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from paraview.simple import *  # noqa: F401,F403

import phew_plugin_testing as pt

args = pt.parse_args()
LoadPlugin(args.plugin, remote=False, ns=globals())
check = pt.Checker("plugin_parallel")
n_ranks = servermanager.vtkProcessModule.GetProcessModule().GetNumberOfLocalPartitions()
check.check(n_ranks == 2, "expected 2 ranks, got %d" % n_ranks)

wavelet = Wavelet(WholeExtent=[-8, 8, -8, 8, -8, 8])
finder = PHEWClumpFinder(Input=wavelet)
finder.Density = ["POINTS", "RTData"]
finder.DensityThreshold = 100.0
errors = pt.ErrorCatcher(finder)
finder.UpdatePipeline()
print("rank 0 error: %s" % errors.text(), flush=True)
check.check("parallel runs need" in errors.text(), "no 'parallel runs need ...' error on rank 0")
check.check(finder.GetDataInformation().GetNumberOfPoints() == 0, "the Labels output is not empty")
check.finish(exit_on_success=False)
