"""pvbatch test, alone and under mpiexec (ctest runs it on 1 and 3 ranks): the PHEW Clump
Finder on a RAMSES output's AMR with the output's particles on its second input, Particles.

The shared DM run (datasets/ramses_cosmo32) with hydro files written for its AMR, a gas
density that follows the dark matter (as test_cli_amr_particles.py writes them), read by the
RAMSES Output Reader in astronomers' units: AMR to Input, particles to Particles. Against
`phew --snapshot OUTPUT --units astro --amr-variable density --amr-particles` on the same
output (spherical potential, saddle merging at 15: 3 subclumps, so haloes and parents differ
from the clumps), aligned by ParticleIDs:
- the particles' ClumpId and HaloId equal the labels of their leaf cells, looked up in numpy
  in the tool's per-cell files (PREFIX-boxes.csv, -clump.raw, -halo.raw);
- BoundClumpId equals the tool's PREFIX-bound.raw; SpecificEnergy is a number where bound
  (mostly negative: the spherical potential's saddle cut), NaN elsewhere;
- the Clumps (with the physics columns), Dendrogram and Haloes tables equal the tool's, value
  for value; the Markers sit at CenterX/Y/Z with GlyphRadius = R200c;
- the particles output keeps the reader's arrays; the reader's output is not modified.
Then: Halo Properties off (labels only, no velocities needed); a snapshot read in code units
(labels only, a warning); particles partly outside a non-periodic domain (a warning, their
labels -1); errors with one message and empty outputs: the physics refusing particles outside
the snapshot's box, all particles outside the domain, particles without velocities, no
particles, particles with an image input. The filter works again afterwards.

    [mpiexec -np N] pvbatch test_plugin_amr_particles.py --plugin PHEW.so --source-dir SRC \\
        --work-dir DIR --cli phew
"""
import os
import shutil
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from phew_plugin_testing import take_option  # noqa: E402

cli = take_option("--cli")

from paraview import servermanager  # noqa: E402
from paraview.simple import *  # noqa: F401,F403,E402
from vtkmodules.util import numpy_support  # noqa: E402
from vtkmodules.util.misc import calldata_type  # noqa: E402
from vtkmodules.util.vtkConstants import VTK_STRING  # noqa: E402
from vtkmodules.vtkCommonCore import vtkCommand  # noqa: E402

import phew_plugin_testing as pt  # noqa: E402

args = pt.parse_args()
LoadPlugin(args.plugin, remote=False, ns=globals())
check = pt.Checker("plugin_amr_particles")
n_ranks = pt.number_of_ranks()
tests = os.path.join(args.source_dir, "tests")

# The gas and the reference labels, in Debian's python3 (scipy; the CLI test's own helpers):
# "gas" writes the hydro files; "labels" looks each particle's leaf cell up in the tool's
# per-cell files (the finest box holding its cell) and saves ids, ClumpId, HaloId, bound.
REFERENCE = r"""
import csv, sys
import numpy as np
sys.path[:0] = [sys.argv[1] + "/parallel", sys.argv[1] + "/readers"]
import test_cli_amr_particles as cli_test
from reference_readers import ramses_info, ramses_particles
phase, folder = sys.argv[2], sys.argv[3]
if phase == "gas":
    cli_test.write_gas(folder)
    sys.exit(0)
prefix, out = sys.argv[4], sys.argv[5]
parts, _ = ramses_particles(folder)
levelmin = int(ramses_info(folder)["levelmin"])
x = np.mod(np.stack([parts["position_" + c] for c in "xyz"], axis=1), 1.0)
cell = np.full(len(x), -1, dtype=np.int64)  # the leaf cell's place in the per-cell files
boxes = list(csv.DictReader(open(prefix + "-boxes.csv")))
for level in sorted({int(b["Level"]) for b in boxes}, reverse=True):
    ijk = np.floor(x * 2.0 ** (levelmin + level)).astype(np.int64)
    for b in (b for b in boxes if int(b["Level"]) == level):
        lo = np.array([int(b["Lo" + c]) for c in "XYZ"])
        hi = np.array([int(b["Hi" + c]) for c in "XYZ"])
        inside = (cell < 0) & np.all((ijk >= lo) & (ijk <= hi), axis=1)
        n, c = hi - lo + 1, ijk[inside] - lo
        cell[inside] = int(b["FirstCell"]) + c[:, 0] + n[0] * (c[:, 1] + n[1] * c[:, 2])
assert np.all(cell >= 0)
clump = np.fromfile(prefix + "-clump.raw", dtype="<i8")[cell]
halo = np.fromfile(prefix + "-halo.raw", dtype="<i8")[cell]
np.savez(out, ids=parts["identity"].astype(np.int64), clump=clump, halo=halo,
         bound=np.fromfile(prefix + "-bound.raw", dtype="<i8"))
"""


def reference(*what):
    subprocess.run(["/usr/bin/python3", "-c", REFERENCE, tests, *what], check=True,
                   env=pt.env_without_mpi_launcher(), timeout=180)


def run_cli(folder, prefix):
    command = [cli, "--snapshot", folder, "--units", "astro", "--amr-variable", "density", "--amr-particles",
               "--relevance", "3", "--saddle", "15", "--potential", "spherical", "--output", prefix]
    done = subprocess.run(command, capture_output=True, text=True, timeout=240, env=pt.env_without_mpi_launcher())
    if done.returncode != 0:
        raise RuntimeError("phew failed: %s\n%s" % (" ".join(command), done.stderr))


class WarningCatcher:
    def __init__(self, proxy):
        self.messages = []
        proxy.GetClientSideObject().AddObserver(vtkCommand.WarningEvent, self._on_warning)

    @calldata_type(VTK_STRING)
    def _on_warning(self, caller, event, message):
        self.messages.append(str(message))


def point_arrays(data):
    pd = data.GetPointData()
    return {pd.GetArrayName(k): numpy_support.vtk_to_numpy(pd.GetArray(k)) for k in range(pd.GetNumberOfArrays())}


# ---- the output with its gas, the tool's answers ---------------------------------------------
folder = os.path.join(args.work_dir, "output_00003")
shutil.rmtree(folder, ignore_errors=True)
shutil.copytree(os.path.join(args.source_dir, "datasets", "ramses_cosmo32", "output_00003"), folder)
reference("gas", folder)
prefix = os.path.join(args.work_dir, "cli")
run_cli(folder, prefix)
answers = os.path.join(args.work_dir, "reference.npz")
reference("labels", folder, prefix, answers)
want = np.load(answers)
order = np.argsort(want["ids"])
check.check(np.count_nonzero(want["clump"] != want["halo"]) > 100 and
            np.count_nonzero(want["bound"] != want["clump"]) > 100, "the tool's run has no hierarchy to unbind in")

# ---- the filter, particles connected ----------------------------------------------------------
reader = RAMSESOutputReader(FileName=[folder], Units=1)
particles_port = OutputPort(reader, 1)
# The AMR of a periodic snapshot is periodic by default (Periodic: From Snapshot): the tables of
# Periodic On; Off differs (clumps cross the box's faces).
amr_tables = {}
for periodic in ("From Snapshot", "On", "Off"):
    finder = PHEWClumpFinder(Input=OutputPort(reader, 0), Density=["CELLS", "density"], Periodic=periodic)
    finder.UpdatePipeline()
    amr_tables[periodic] = pt.table_as_lists(servermanager.Fetch(finder, idx=1))
    Delete(finder)
check.check(amr_tables["From Snapshot"] == amr_tables["On"] and len(amr_tables["On"]["ClumpId"]) > 10 and
            amr_tables["On"] != amr_tables["Off"],
            "AMR of a periodic snapshot: the default is not Periodic On (%d, %d, %d clumps)" % tuple(
                len(amr_tables[k]["ClumpId"]) for k in ("From Snapshot", "On", "Off")))

finder = PHEWClumpFinder(Input=OutputPort(reader, 0), Particles=particles_port, Density=["CELLS", "density"],
                         RelevanceThreshold=3.0, SaddleMerging=1, SaddleThreshold=15.0, Periodic=1,
                         Potential="Spherical (RAMSES)")
errors = pt.ErrorCatcher(finder)
warnings = WarningCatcher(finder)
finder.UpdatePipeline()
check.check(not errors.messages and not warnings.messages,
            "errors or warnings: %s %s" % (errors.text(), warnings.messages))
got = point_arrays(servermanager.Fetch(finder, idx=7))
check.check(all(k in got for k in ("ClumpId", "HaloId", "BoundClumpId", "SpecificEnergy", "Velocities", "Masses")),
            "Particles output arrays: %s" % sorted(got))
mine = np.argsort(got.get("ParticleIDs", np.zeros(0)))
if check.check(len(mine) == len(order) and np.array_equal(got["ParticleIDs"][mine], want["ids"][order]),
               "%d particles on the Particles output, %d in the snapshot" % (len(mine), len(order))):
    for name, key in (("ClumpId", "clump"), ("HaloId", "halo"), ("BoundClumpId", "bound")):
        differ = np.count_nonzero(got[name][mine] != want[key][order])
        check.check(differ == 0, "%s: %d of %d particles differ from the tool's" % (name, differ, len(order)))
    bound = got["BoundClumpId"] >= 0
    check.check(np.count_nonzero(got["ClumpId"] >= 0) > 1000 and np.count_nonzero(bound) > 1000,
                "%d particles in clumps, %d bound" % (np.count_nonzero(got["ClumpId"] >= 0), np.count_nonzero(bound)))
    energy = got["SpecificEnergy"]
    check.check(np.all(np.isfinite(energy[bound])) and np.all(np.isnan(energy[~bound])) and
                np.median(energy[bound]) < 0,
                "SpecificEnergy is not a (mostly negative) number where bound, NaN elsewhere")
clumps = servermanager.Fetch(finder, idx=1)
check.check(clumps.GetColumnByName("R200c") is not None, "the Clumps table has no physics columns")
for port, suffix in pt.TABLE_PORTS:
    header, rows = pt.read_csv("%s-%s.csv" % (prefix, suffix))
    pt.compare_table(check, "%s table" % suffix, servermanager.Fetch(finder, idx=port), header, rows)

# The Markers' clump peaks at the physics centres, GlyphRadius = R200c (0 where NaN).
# (merged: under mpiexec Fetch nests each rank's multiblock; rank 0 alone has the markers)
clump_peaks = ExtractBlock(Input=OutputPort(finder, 6), Selectors=["/Root/ClumpPeaks"])
peaks = servermanager.Fetch(MergeBlocks(Input=clump_peaks))
column = lambda name: numpy_support.vtk_to_numpy(clumps.GetColumnByName(name))  # noqa: E731
centres = np.stack([column("Center" + c) for c in "XYZ"], axis=1)
at = numpy_support.vtk_to_numpy(peaks.GetPoints().GetData()) if peaks.GetPoints() else np.zeros((0, 3))
finite = np.all(np.isfinite(centres), axis=1)
radius = peaks.GetPointData().GetArray("GlyphRadius")
check.check(len(at) == len(centres) and np.array_equal(at[finite], centres[finite]) and radius is not None and
            np.array_equal(numpy_support.vtk_to_numpy(radius), np.nan_to_num(column("R200c"), nan=0.0)),
            "Markers: not at CenterX/Y/Z or GlyphRadius is not R200c")
check.check("ClumpId" not in point_arrays(servermanager.Fetch(reader, idx=1)), "the reader's particles were modified")

# ---- Halo Properties off: labels only, no velocities needed ---------------------------------
no_velocities = PassArrays(Input=particles_port, PointDataArrays=["Masses", "ParticleIDs"])
finder.Particles = no_velocities
finder.HaloProperties = 0
finder.UpdatePipeline()
got = point_arrays(servermanager.Fetch(finder, idx=7))
check.check(not errors.messages, "labels only: %s" % errors.text())
mine = np.argsort(got.get("ParticleIDs", np.zeros(0)))
check.check("BoundClumpId" not in got and len(mine) == len(order) and
            np.array_equal(got["ClumpId"][mine], want["clump"][order]) and
            np.array_equal(got["HaloId"][mine], want["halo"][order]),
            "Halo Properties off: not the leaf cells' labels, or a BoundClumpId (%s)" % sorted(got))

# ---- a snapshot read in code units (G unknown): labels only, with a warning -------------------
code = RAMSESOutputReader(FileName=[folder], Units=0)
in_code = PHEWClumpFinder(Input=OutputPort(code, 0), Particles=OutputPort(code, 1), Density=["CELLS", "density"],
                          RelevanceThreshold=3.0, SaddleMerging=1, SaddleThreshold=15.0, Periodic=1)
code_warnings = WarningCatcher(in_code)
in_code.UpdatePipeline()
got = point_arrays(servermanager.Fetch(in_code, idx=7))
mine = np.argsort(got.get("ParticleIDs", np.zeros(0)))
check.check(any("code units" in m for m in code_warnings.messages) and "BoundClumpId" not in got and
            len(mine) == len(order) and np.array_equal(got["ClumpId"][mine], want["clump"][order]),
            "code units: not the warning and the leaf cells' labels (%s, %s)" % (code_warnings.messages, sorted(got)))
Delete(in_code)
Delete(code)

# ---- particles outside a non-periodic domain: a warning, the labels -1 ------------------------
# (labels only: outside the snapshot's box too, where the physics refuses them)
moved = Transform(Input=particles_port)
moved.Transform.Translate = [12.5, 0.0, 0.0]  # half of the 25 Mpc/h box beyond it
finder.Particles = moved
finder.Periodic = 0
warnings.messages = []
finder.UpdatePipeline()
output = servermanager.Fetch(finder, idx=7)
got = point_arrays(output)
outside = numpy_support.vtk_to_numpy(output.GetPoints().GetData())[:, 0] >= 25.0
check.check(not errors.messages and any("%d of the %d particles lie outside the AMR's domain" % (
    np.count_nonzero(outside), len(order)) in m for m in warnings.messages),
    "half the particles outside: not the warning (%s %s)" % (errors.text(), warnings.messages))
check.check(len(got.get("ClumpId", [])) == len(order) and np.count_nonzero(outside) > 1000 and
            np.all(got["ClumpId"][outside] == -1) and np.all(got["HaloId"][outside] == -1) and
            np.count_nonzero(got["ClumpId"][~outside] >= 0) > 0,
            "particles outside the domain do not get -1, or those inside no clump")


# ---- errors: one message, every output empty -------------------------------------------------
def expect_error(what, needle, proxy=None):
    proxy = proxy or finder
    catcher = errors if proxy is finder else pt.ErrorCatcher(proxy)
    catcher.clear()
    proxy.UpdatePipeline()
    check.check(any(needle in m for m in catcher.messages),
                "%s: no message with '%s' (%s)" % (what, needle, catcher.text()))
    empty = all(proxy.GetDataInformation(port).GetNumberOfPoints() == 0 for port in (0, 6, 7)) and \
        proxy.GetDataInformation(0).GetNumberOfCells() == 0 and \
        servermanager.Fetch(proxy, idx=1).GetNumberOfRows() == 0
    check.check(empty, "%s: outputs not empty" % what)


finder.HaloProperties = 1  # the physics on particles outside the snapshot's box: the core says
expect_error("the physics refuses", "PHEW failed on the particles of the Particles input")
moved.Transform.Translate = [30.0, 0.0, 0.0]
expect_error("all particles outside", "are the AMR and the particles in the same units")
finder.Periodic = 1
finder.Particles = no_velocities
expect_error("no velocities", "has no point array Velocities")
nothing = Threshold(Input=particles_port, Scalars=["POINTS", "Masses"], LowerThreshold=-2.0, UpperThreshold=-1.0)
finder.Particles = nothing
expect_error("no particles", "has no particles")
image = PHEWClumpFinder(Input=Wavelet(), Particles=particles_port, Density=["POINTS", "RTData"])
expect_error("image input", "needs an AMR input", image)
finder.Particles = particles_port
errors.clear()
finder.UpdatePipeline()
check.check(not errors.messages and servermanager.Fetch(finder, idx=1).GetNumberOfRows() > 0,
            "the filter does not work again after the errors: %s" % errors.text())

check.finish(exit_on_success=n_ranks == 1)
