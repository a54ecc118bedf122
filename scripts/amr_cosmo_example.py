"""PHEW on the cosmological AMR example (pvbatch; serial or under mpirun).

    pvpython datasets/generators/amr_cosmo.py build/amr_cosmo.vthb       # make the hierarchy once
    pvbatch scripts/amr_cosmo_example.py [build/amr_cosmo.vthb] [--plugin build/lib/PHEW/PHEW.so]
    mpirun -np 2 pvbatch scripts/amr_cosmo_example.py ...

Densities are in units of the mean; the parameters are those of the PHEW paper's section 4
(threshold 80, relevance 3, saddle threshold 200), with saddle merging and a periodic box.
Prints the leaf cells, the clump and halo counts, the most massive haloes and the run time.
"""
import argparse
import os
import time

from paraview import servermanager
from paraview.simple import *  # noqa: F401,F403 (the plugin adds PHEWClumpFinder to this namespace)

here = os.path.dirname(os.path.abspath(__file__))
ap = argparse.ArgumentParser()
ap.add_argument("input", nargs="?", default=os.path.join(here, "..", "build", "amr_cosmo.vthb"))
ap.add_argument("--plugin", default=os.path.join(here, "..", "build", "lib", "PHEW", "PHEW.so"))
args = ap.parse_args()

LoadPlugin(args.plugin, remote=False, ns=globals())
amr = XMLUniformGridAMRReader(FileName=[args.input])
amr.DefaultNumberOfLevels = 0  # all levels (the reader's default loads level 0 only)
phew = PHEWClumpFinder(Input=amr)
phew.Density = ['CELLS', 'density']
phew.DensityThreshold = 80.0
phew.RelevanceThreshold = 3.0
phew.SaddleMerging = 1
phew.SaddleThreshold = 200.0
phew.Periodic = 1
start = time.time()
phew.UpdatePipeline()
seconds = time.time() - start

clumps = servermanager.Fetch(phew, idx=1)
haloes = servermanager.Fetch(phew, idx=3)
info = amr.GetDataInformation()
print("input: %s, %d cells in %d blocks (covered cells included)" % (
    os.path.basename(args.input), info.GetNumberOfCells(), info.DataInformation.GetNumberOfDataSets()))
print("clumps: %d, haloes: %d, time %.2f s" % (clumps.GetNumberOfRows(), haloes.GetNumberOfRows(), seconds))
mass = haloes.GetColumnByName("Mass")
cells = haloes.GetColumnByName("NumberOfCells")
for h in range(min(5, haloes.GetNumberOfRows())):
    print("  halo %d: %d clumps, %d cells, mass %.4g (box mass 1)" % (
        h, haloes.GetColumnByName("NumberOfClumps").GetValue(h), cells.GetValue(h), mass.GetValue(h)))
particle = 1.0 / 64 ** 3  # the snapshot's particle mass in box units
for n in (1, 20, 100):
    print("haloes above %d particle masses: %d" % (n, sum(1 for h in range(haloes.GetNumberOfRows())
                                                        if mass.GetValue(h) > n * particle)))
