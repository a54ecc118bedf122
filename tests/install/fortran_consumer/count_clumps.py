# script-version: 2
# Catalyst script of the install test (tests/install): the clump finder of the plugin named by
# $PHEW_PLUGIN, which the installed adaptor sets to the installed plugin (it raises unless that
# lies under $PHEW_CONSUMER_PREFIX), on the grid of fortran_consumer, threshold 1. It raises
# (so that phew_catalyst_execute fails on every rank) unless the clumps are the two blobs,
# peaks at cells (4, 5, 5) and (11, 10, 9) of the 16^3 grid, and rank 0 writes what it found
# into $PHEW_CONSUMER_OUTPUT/clumps_npRANKS.txt.
import os

from paraview import catalyst
from paraview import servermanager
from paraview.simple import *  # noqa: F401,F403

PLUGIN = os.path.realpath(os.environ["PHEW_PLUGIN"])
if not PLUGIN.startswith(os.path.realpath(os.environ["PHEW_CONSUMER_PREFIX"]) + os.sep):
    raise RuntimeError("the installed adaptor chose the plugin " + PLUGIN + ", not the installed one")
LoadPlugin(PLUGIN, remote=False, ns=globals())

grid = TrivialProducer(registrationName="grid")
finder = PHEWClumpFinder(registrationName="clumps", Input=grid)
finder.Density = ["CELLS", "density"]
finder.DensityThreshold = 1.0
finder.Periodic = 0

EXPECTED = [4 + 16 * (5 + 16 * 5), 11 + 16 * (10 + 16 * 9)]

options = catalyst.Options()


def catalyst_execute(info):
    module = servermanager.vtkProcessModule.GetProcessModule()
    rank, ranks = module.GetPartitionId(), module.GetNumberOfLocalPartitions()
    algorithm = finder.GetClientSideObject()
    algorithm.UpdateTimeStep(info.time, rank, ranks)
    if rank != 0:  # the catalogue is complete on rank 0 and empty on the others
        return
    clumps = algorithm.GetOutputDataObject(1)
    peaks = clumps.GetColumnByName("PeakId")
    found = [int(peaks.GetValue(i)) for i in range(clumps.GetNumberOfRows())] if peaks else []
    with open(os.path.join(os.environ.get("PHEW_CONSUMER_OUTPUT", "."), "clumps_np%d.txt" % ranks), "w") as out:
        out.write("clumps %d peaks %s\n" % (len(found), " ".join(str(p) for p in found)))
    if found != EXPECTED:
        raise RuntimeError("count_clumps.py: clumps with peaks %s, expected %s" % (found, EXPECTED))
