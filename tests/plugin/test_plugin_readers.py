"""pvbatch test, alone and under mpiexec (ctest runs it with 1 and 3 ranks): the snapshot
readers in ParaView.

- RAMSES Output Reader on the real output datasets/ramses_cosmo32/output_00003: the particles
  (ids, masses, positions, fields) are those numpy reads from the Fortran records; the AMR has
  the leaf cells of the amr files; the metadata (box, periodicity, a, h, units) travel as
  field data, in code and in astronomers' units.
- Friends-of-Friends, HOP and the PHEW Clump Finder on its particles, with their default box
  properties (Box From Snapshot), give the tables of `phew --snapshot` on the same output.
- Gadget HDF5 Snapshot Reader on GADGET-4 and SWIFT snapshots written by make_snapshots.py:
  the particles of h5py's reading; the two snapshots together are two time steps, ordered by
  their scale factors; a multi-file snapshot given by all its files is one step.
- A missing file: one error message, empty outputs.

    [mpiexec -np N] pvbatch test_plugin_readers.py --plugin PHEW.so --source-dir SRC \\
        --work-dir DIR --cli phew
"""
import json
import os
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from phew_plugin_testing import take_option  # noqa: E402

cli = take_option("--cli")

from paraview import servermanager  # noqa: E402
from paraview.simple import *  # noqa: F401,F403,E402
from vtkmodules.util import numpy_support  # noqa: E402

import phew_plugin_testing as pt  # noqa: E402
from test_plugin_merger_tree import compare as merger_compare, reference as merger_reference  # noqa: E402

args = pt.parse_args()
LoadPlugin(args.plugin, remote=False, ns=globals())
check = pt.Checker("plugin_readers")
n_ranks = pt.number_of_ranks()
readers_tests = os.path.join(args.source_dir, "tests", "readers")
ramses = os.path.join(args.source_dir, "datasets", "ramses_cosmo32", "output_00003")

# The independent readings run in Debian's python3 (numpy, h5py): h5py's HDF5 must not be
# loaded beside ParaView's.
REFERENCE = r"""
import json, sys
import numpy as np
sys.path.insert(0, sys.argv[1])
import reference_readers as ref
out = sys.argv[2]
if sys.argv[3] == "ramses":
    fields, info = ref.ramses_particles(sys.argv[4])
    np.savez(out, ids=fields["identity"].astype(np.int64), mass=fields["mass"],
             pos=np.stack([fields["position_" + c] for c in "xyz"], axis=1), levelp=fields["levelp"])
    json.dump({k: v for k, v in info.items() if not isinstance(v, str)}, open(out + ".json", "w"))
else:
    arrays, header = ref.gadget_particles(sys.argv[4], int(sys.argv[5]))
    np.savez(out, ids=arrays["ParticleIDs"].astype(np.int64), mass=arrays["Masses"],
             pos=arrays["Coordinates"], pot=arrays["Potential"])
"""


def reference(kind, *what):
    out = os.path.join(args.work_dir, "reference_%s_%d.npz" % (kind, len(os.listdir(args.work_dir))))
    subprocess.run(["/usr/bin/python3", "-c", REFERENCE, readers_tests, out, kind, *what], check=True,
                   env=pt.env_without_mpi_launcher(), timeout=120)
    return np.load(out), (json.load(open(out + ".json")) if kind == "ramses" else None)


def point_arrays(poly):
    data = poly.GetPointData()
    out = {data.GetArrayName(k): numpy_support.vtk_to_numpy(data.GetArray(k)) for k in range(data.GetNumberOfArrays())}
    out["points"] = numpy_support.vtk_to_numpy(poly.GetPoints().GetData()) if poly.GetPoints() else np.zeros((0, 3))
    return out


def field(poly, name):
    array = poly.GetFieldData().GetAbstractArray(name)
    if array is None:
        return None
    if array.IsA("vtkStringArray"):
        return array.GetValue(0)
    return [array.GetComponent(0, c) for c in range(array.GetNumberOfComponents())]


def same_particles(what, got, want, keys):
    """The particles as a set (the ranks' shares are appended in rank order by Fetch)."""
    order = np.argsort(got["ParticleIDs"])
    expected = np.argsort(want["ids"])
    check.check(len(order) == len(expected), "%s: %d particles, %d expected" % (what, len(order), len(expected)))
    if len(order) != len(expected):
        return
    for mine, theirs in keys:
        a, b = got[mine][order], want[theirs][expected]
        check.check(a.shape == b.shape and np.array_equal(a, b), "%s: %s differs from the files'" % (what, mine))


# ---- RAMSES: particles, metadata, AMR ------------------------------------------------------
want, info = reference("ramses", ramses)
for units in (0, 1):
    reader = RAMSESOutputReader(FileName=[os.path.join(ramses, "info_00003.txt")], Units=units)
    errors = pt.ErrorCatcher(reader)
    reader.UpdatePipeline()
    particles = servermanager.Fetch(reader, idx=1)
    got = point_arrays(particles)
    what = "RAMSES units %d" % units
    check.check(not errors.messages, "%s: %s" % (what, errors.text()))
    h = info["H0"] / 100.0
    length = info["unit_l"] / info["aexp"] / 3.0856775814913673e24 * h if units else 1.0
    mass = info["unit_d"] * info["unit_l"] ** 3 / 1.98841586e33 * h if units else 1.0
    want_scaled = dict(want, pos=want["pos"] * length, mass=want["mass"] * mass)
    same_particles(what, got, want_scaled, [("points", "pos"), ("Masses", "mass"), ("levelp", "levelp")])
    check.check(field(particles, "Code") == "RAMSES" and field(particles, "Periodic") == [1, 1, 1],
                "%s: metadata %s %s" % (what, field(particles, "Code"), field(particles, "Periodic")))
    box = field(particles, "BoxSize")
    check.check(abs(box[0] - (25.0 if units else 1.0)) < 1e-5, "%s: box %s" % (what, box))
    check.check(field(particles, "LengthUnit") == ("Mpc/h" if units else "code"), "%s: length unit" % what)
    check.check(abs(field(particles, "ScaleFactor")[0] - info["aexp"]) < 1e-12, "%s: scale factor" % what)
    check.check(list(reader.TimestepValues) == [info["aexp"]] or reader.TimestepValues == info["aexp"],
                "%s: time steps %s" % (what, reader.TimestepValues))
    Delete(reader)

reader = RAMSESOutputReader(FileName=ramses)
reader.UpdatePipeline()
information = reader.GetDataInformation(0)
check.check(information.GetNumberOfDataSets() == 1124, "AMR: %d blocks (1124 boxes cover the octs)"
            % information.GetNumberOfDataSets())
if n_ranks == 1:  # the whole hierarchy is on this process: count its leaf cells
    amr = reader.GetClientSideObject().GetOutputDataObject(0)
    leaves = 0
    for level in range(amr.GetNumberOfLevels()):
        for index in range(amr.GetNumberOfDataSets(level)):
            grid = amr.GetDataSet(level, index)
            ghosts = numpy_support.vtk_to_numpy(grid.GetCellGhostArray())
            leaves += int(np.count_nonzero(ghosts == 0))
    check.check(amr.GetNumberOfLevels() == 3 and leaves == 126568,
                "AMR: %d levels, %d leaf cells (the amr files: 3 levels, 126568 leaves)" % (amr.GetNumberOfLevels(), leaves))


# ---- the finders on the reader's particles = phew --snapshot ---------------------------------
def cli_tables(finder, extra):
    prefix = os.path.join(args.work_dir, "cli-" + finder)
    command = [cli, "--snapshot", ramses, "--finder", finder, "--output", prefix] + extra
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, env=pt.env_without_mpi_launcher())
    if done.returncode != 0:
        raise RuntimeError("phew failed: %s\n%s" % (" ".join(command), done.stderr))
    return prefix


def same_table(what, table, csv_path):
    header, rows = pt.read_csv(csv_path)
    pt.compare_table(check, what, table, header, rows)


arrays = dict(Mass=["POINTS", "Masses"], Velocity=["POINTS", "Velocities"], Id=["POINTS", "ParticleIDs"])
particles = OutputPort(reader, 1)
prefix = cli_tables("fof", [])
fof = FriendsofFriends(Input=particles, **arrays)
fof.UpdatePipeline()
same_table("FoF on the RAMSES particles", servermanager.Fetch(fof, idx=1), prefix + "-groups.csv")
prefix = cli_tables("hop", [])
hop = HOPHaloFinder(Input=particles, Density=["POINTS", "None"], **arrays)
hop.UpdatePipeline()
same_table("HOP on the RAMSES particles", servermanager.Fetch(hop, idx=1), prefix + "-groups.csv")
prefix = cli_tables("phew", ["--threshold", "80", "--relevance", "3", "--saddle", "200"])
clumps = PHEWClumpFinder(Input=particles, DensityThreshold=80.0, RelevanceThreshold=3.0, SaddleMerging=1,
                         SaddleThreshold=200.0, **arrays)
clumps.UpdatePipeline()
same_table("PHEW clumps on the RAMSES particles", servermanager.Fetch(clumps, idx=1), prefix + "-clumps.csv")
same_table("PHEW haloes on the RAMSES particles", servermanager.Fetch(clumps, idx=3), prefix + "-haloes.csv")


def record(table):
    """The table's PHEWParameters as {name: value}."""
    array = table.GetFieldData().GetAbstractArray("PHEWParameters")
    entries = [array.GetValue(k) for k in range(array.GetNumberOfValues())] if array else []
    return dict(entry.split(" = ", 1) for entry in entries)


def check_record(what, table, cli_record, want):
    got = record(table)
    with open(cli_record) as f:
        cli_run = json.load(f)
    wanted = dict(want, PeriodicAxes="1 1 1", BoxSize="1 1 1", BoxOrigin="0 0 0")
    check.check(all(got.get(k) == v for k, v in wanted.items()), "%s: PHEWParameters %s, want %s" % (what, got, wanted))
    check.check(field(table, "SnapshotPath") == cli_run["input"]["read"] and
                field(table, "ScaleFactor") == [cli_run["input"]["scale_factor"]] and field(table, "Units") == "code",
                "%s: the snapshot's metadata %s %s, the CLI's record says %s" % (
                    what, field(table, "SnapshotPath"), field(table, "ScaleFactor"), cli_run["input"]))
    return got, cli_run


got, cli_run = check_record("FoF table", servermanager.Fetch(fof, idx=1), os.path.join(args.work_dir, "cli-fof-groups-run.json"),
                            {"Filter": "Friends-of-Friends", "LinkingLength": "0.20000000000000001", "MinimumMembers": "20"})
check.check(float(got.get("LinkingLengthUsed", "nan")) == cli_run["results"]["linking_length_used"],
            "FoF table: linking length used %s, the CLI's %r" % (got.get("LinkingLengthUsed"),
                                                                 cli_run["results"]["linking_length_used"]))
check_record("HOP table", servermanager.Fetch(hop, idx=1), os.path.join(args.work_dir, "cli-hop-groups-run.json"),
             {"Filter": "HOP Halo Finder", "OuterThreshold": "160", "HopNeighbours": "64"})
for port in (1, 2, 3):
    check_record("PHEW table %d" % port, servermanager.Fetch(clumps, idx=port),
                 os.path.join(args.work_dir, "cli-phew-run.json"),
                 {"Filter": "PHEW Clump Finder", "DensityThreshold": "80", "SaddleThreshold": "200",
                  "RelevanceThreshold": "3", "NumberOfNeighbours": "16"})

# ---- what a periodic cosmological snapshot brings (issue 31) --------------------------------
# PHEW on the particles with every threshold automatic takes the paper's halo parameters: the
# tables of the explicit 80 / 3 / 200 run above, and the record says why.
automatic = PHEWClumpFinder(Input=particles, **arrays)
automatic.UpdatePipeline()
for port in (1, 3):
    a, b = (pt.table_as_lists(servermanager.Fetch(p, idx=port)) for p in (automatic, clumps))
    same = a.keys() == b.keys() and all(len(a[k]) == len(b[k]) and all(map(pt.same_double, a[k], b[k])) for k in a)
    check.check(same and len(a.get("ClumpId", a.get("HaloId", []))) > 10,
                "automatic thresholds on a cosmological snapshot, port %d: not the tables of 80 / 3 / 200" % port)
auto_record = record(servermanager.Fetch(automatic, idx=1))
check.check(auto_record.get("RelevanceThreshold") == "3" and auto_record.get("DensityThreshold") == "auto" and
            "PHEW paper" in auto_record.get("AutomaticThresholds", ""),
            "automatic thresholds on a cosmological snapshot: record %s" % auto_record)
# with Box From Snapshot off the particles are just points: today's automatic rules (relevance 2)
automatic.BoxFromSnapshot = 0
automatic.UpdatePipeline()
plain_record = record(servermanager.Fetch(automatic, idx=1))
check.check(plain_record.get("RelevanceThreshold") == "2" and "AutomaticThresholds" not in plain_record,
            "Box From Snapshot off: record %s" % plain_record)
Delete(automatic)


def colours_follow_ids(what, data, ids, table, id_column):
    """HaloColour beside the ids: the ten most massive structures of the table 0..9 in mass
    order, the others 10..17, -1 where the id is -1; one colour per structure."""
    got = point_arrays(data)
    label, colour = got.get(ids), got.get("HaloColour")
    if colour is None or label is None:
        check.check(False, "%s: no HaloColour or %s (%s)" % (what, ids, sorted(got)))
        return
    columns = pt.table_as_lists(table)
    masses, table_ids = np.array(columns["Mass"]), np.array(columns[id_column])
    order = table_ids[np.lexsort((table_ids, -masses))]  # decreasing mass, then the lower id
    per_id = {}
    for i, c in zip(label, colour):
        per_id.setdefault(int(i), set()).add(int(c))
    check.check(per_id.get(-1, {-1}) == {-1} and all(len(c) == 1 for c in per_id.values()),
                "%s: an id with several colours, or -1 coloured" % what)
    top = [per_id.get(int(i), {None}).pop() for i in order[:10] if int(i) in per_id]
    rest = set().union(*[per_id[int(i)] for i in order[10:] if int(i) in per_id] or [set()])
    check.check(top == list(range(len(top))) and len(top) == min(10, len(order)) and rest <= set(range(10, 18)),
                "%s: colours of the largest %s, of the others %s" % (what, top, sorted(rest)))


colours_follow_ids("FoF's particles", servermanager.Fetch(fof, idx=0), "GroupId", servermanager.Fetch(fof, idx=1),
                   "GroupId")
colours_follow_ids("PHEW's clump particles", servermanager.Fetch(clumps, idx=4), "HaloId",
                   servermanager.Fetch(clumps, idx=3), "HaloId")

n_groups = servermanager.Fetch(fof, idx=1).GetNumberOfRows()
print("RAMSES particles: FoF %d groups, HOP %d groups, PHEW %d haloes, as phew --snapshot finds"
      % (n_groups, servermanager.Fetch(hop, idx=1).GetNumberOfRows(), servermanager.Fetch(clumps, idx=3).GetNumberOfRows()),
      flush=True)
for proxy in (clumps, hop, fof, reader):
    Delete(proxy)


# ---- Gadget HDF5: particles, time steps, a multi-file snapshot given by all its files -------
snapshots = os.path.join(args.work_dir, "snapshots")
made = subprocess.run(["/usr/bin/python3", os.path.join(readers_tests, "make_snapshots.py"), snapshots,
                       "--case", "gadget4_multi", "--case", "swift_multi"], capture_output=True, text=True,
                      env=pt.env_without_mpi_launcher(), timeout=120, check=True)
gadget_files = sorted(f for f in os.listdir(snapshots) if f.startswith("gadget4_multi"))
swift_files = sorted(f for f in os.listdir(snapshots) if f.startswith("swift_multi"))
for part_type in (1, 0):
    want, _ = reference("gadget", os.path.join(snapshots, "gadget4_multi"), str(part_type))
    reader = GadgetHDF5SnapshotReader(FileName=[os.path.join(snapshots, gadget_files[0])], ParticleType=part_type)
    poly = servermanager.Fetch(reader)
    got = point_arrays(poly)
    same_particles("GADGET-4 type %d" % part_type, got, dict(want, pos=want["pos"].astype(got["points"].dtype)),
                   [("points", "pos"), ("Potential", "pot")])
    check.check(field(poly, "Code") == "GADGET" and abs(field(poly, "ScaleFactor")[0] - 0.5) < 1e-12,
                "GADGET-4 metadata: %s a %s" % (field(poly, "Code"), field(poly, "ScaleFactor")))
    Delete(reader)

# both snapshots, every file of each given (as the file dialog groups them), in the wrong order
series = GadgetHDF5SnapshotReader(FileName=[os.path.join(snapshots, f) for f in swift_files + gadget_files])
steps = list(series.TimestepValues)
check.check(len(steps) == 2 and abs(steps[0] - 0.5) < 1e-12 and abs(steps[1] - 0.8) < 1e-12,
            "two snapshots, two time steps at a = 0.5 and 0.8: %s" % steps)
for time, code in ((0.5, "GADGET"), (0.8, "SWIFT")):
    series.UpdatePipeline(time)
    poly = servermanager.Fetch(series)
    check.check(field(poly, "Code") == code and poly.GetNumberOfPoints() == 20000,
                "time %g: %s with %d particles (%s expected)" % (time, field(poly, "Code"), poly.GetNumberOfPoints(), code))
Delete(series)

# a snapshot written by SWIFT itself (datasets/swift_dm16), in astronomers' units, and FoF on it
swift = os.path.join(args.source_dir, "datasets", "swift_dm16", "snap_0003.hdf5")
reader = GadgetHDF5SnapshotReader(FileName=[swift], Units=1)
poly = servermanager.Fetch(reader)
box = field(poly, "BoxSize")
check.check(field(poly, "Code") == "SWIFT" and poly.GetNumberOfPoints() == 4096 and
            abs(box[0] - 25.0 * 0.6766) < 1e-6 and field(poly, "LengthUnit") == "Mpc/h",
            "SWIFT's own snapshot: %s, %d particles, box %s %s" % (field(poly, "Code"), poly.GetNumberOfPoints(), box,
                                                                   field(poly, "LengthUnit")))
fof = FriendsofFriends(Input=reader, **arrays)
fof.UpdatePipeline()
check.check(servermanager.Fetch(fof, idx=1).GetNumberOfRows() == 9, "FoF on SWIFT's snapshot: %d groups (9)"
            % servermanager.Fetch(fof, idx=1).GetNumberOfRows())
Delete(fof)
Delete(reader)

# SWIFT's snapshots at a = 0.5 and 1 as two time steps: FoF on each, the Merger Tree links them
# by ParticleIDs as the reference of test_plugin_merger_tree.py computes from the same labels
steps = [os.path.join(args.source_dir, "datasets", "swift_dm16", f) for f in ("snap_0003.hdf5", "snap_0002.hdf5")]
series = GadgetHDF5SnapshotReader(FileName=steps)
times = list(series.TimestepValues)  # SWIFT's Scale-factor: 0.5000000000000001, 0.9999999999999999
check.check(len(times) == 2 and abs(times[0] - 0.5) < 1e-12 and abs(times[1] - 1.0) < 1e-12,
            "SWIFT's series: steps %s" % times)
fof = FriendsofFriends(Input=series, **arrays)
tree = PHEWMergerTree(Input=fof, Labels=["POINTS", "GroupId"], Id=["POINTS", "ParticleIDs"], Mass=["POINTS", "Masses"])
labels = []
for time in times:
    fof.UpdatePipeline(time)
    got = point_arrays(servermanager.Fetch(fof))
    order = np.argsort(got["ParticleIDs"])
    labels.append((got["GroupId"][order], got["Masses"][order].astype(np.float64)))
    tree.UpdatePipeline(time)
expected = merger_reference(labels[0][0], labels[0][1], labels[1][0], labels[1][1])
check.check(len(expected) >= 9, "SWIFT's series: %d links (9 groups at a = 1)" % len(expected))
merger_compare(check.check, "Merger Tree over SWIFT's snapshots", pt.fetch(tree, 0), expected, 1, times[1], times[0])
for proxy in (tree, fof, series):
    Delete(proxy)

# ---- bad input -----------------------------------------------------------------------------
missing = GadgetHDF5SnapshotReader(FileName=[os.path.join(args.work_dir, "nowhere.hdf5")])
errors = pt.ErrorCatcher(missing)
missing.UpdatePipeline()
if n_ranks == 1:
    check.check(len(errors.messages) == 1 and "nowhere.hdf5" in errors.text(), "a missing file: %s" % errors.text())
check.check(missing.GetDataInformation().GetNumberOfPoints() == 0, "a missing file: empty output")
Delete(missing)
check.finish(exit_on_success=False)
