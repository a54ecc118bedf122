"""pvbatch test, alone and under mpiexec (ctest runs it with 1, 2 and 4 ranks): the HOP Halo
Finder on particles (points_cases.py's set: five blobs in a unit box, masses, velocities, ids)
gives every particle the GroupId and the Density of `phew --points ... --finder hop` on the same
data, byte for byte, and the Groups table is the tool's PREFIX-groups.csv text.

The particles reach the ranks as the PHEW point tests give them (points_cases.share_source):
consecutive shares without ids (the global order is the file's), every n-th in reverse order
with the Id array (also in two partitions per rank), and nothing on rank 0 with ids. The cases
cover the defaults, other thresholds and factors, other neighbour counts and minimum size, a
periodic and a non-periodic box, and a given Density array; each must find several groups, and
each of its non-default values must change the tool's answer on its own. Bad parameters (a peak factor of 0.5, an outer threshold of 0, more hop
neighbours than particles) give exactly one error message and empty outputs.

The Markers (port 2): one vertex per group (complete on rank 0, nothing elsewhere) with the
Groups columns, at the group's peak PeakX/Y/Z in the cases (Halo Properties off); with the
physics on SWIFT's snapshot read in astronomers' units at CenterX/Y/Z with GlyphRadius = R200c
(0 where NaN).

    [mpiexec -np N] pvbatch test_plugin_hop.py --plugin PHEW.so --source-dir SRC --work-dir DIR \\
        --cli phew [--ranks N]
"""
import builtins
import os
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from phew_plugin_testing import take_option  # noqa: E402

cli = take_option("--cli")
ranks_expected = take_option("--ranks")

from paraview import servermanager  # noqa: E402
from paraview.simple import *  # noqa: F401,F403,E402

import phew_plugin_testing as pt  # noqa: E402
import points_cases as pc  # noqa: E402

args = pt.parse_args()
LoadPlugin(args.plugin, remote=False, ns=globals())
check = pt.Checker("plugin_hop")
n_ranks = pt.number_of_ranks()
if ranks_expected is not None:
    check.check(n_ranks == int(ranks_expected), "expected %s ranks, got %d" % (ranks_expected, n_ranks))
os.makedirs(args.work_dir, exist_ok=True)
pos, mass, vel, ids = pc.make_particles()
particles = pc.save_particles(os.path.join(args.work_dir, "particles.npz"), pos, mass, vel, ids)

PEAK_COLUMNS = ["PeakId", "PeakDensity", "PeakX", "PeakY", "PeakZ"]  # after the 8 columns of FoF's table
PEAK_XYZ = ("PeakX", "PeakY", "PeakZ")  # where the markers are without the physics
NON_PERIODIC_BOX = dict(pc.PERIODIC_BOX, PeriodicX=0, PeriodicY=0, PeriodicZ=0)


def raw(name, values, kind):
    path = os.path.join(args.work_dir, name + ".raw")
    np.ascontiguousarray(values, dtype=np.dtype(kind).newbyteorder("<")).tofile(path)
    return path


def run_cli(prefix, with_ids, periodic, options, density=None):
    """`phew --points ... --finder hop`: (GroupId, Density, groups.csv text)."""
    command = [cli, "--points", raw("pos", pos, np.float64), "--masses", raw("mass", mass, np.float64),
               "--velocities", raw("vel", vel, np.float64), "--type", "float64", "--box", "1", "1", "1",
               "--finder", "hop", "--no-physics", "--output", prefix] + options  # HOP itself (the physics:
    # test_plugin_fof.py, test_plugin_vs_cli.py)
    if periodic:
        command.append("--periodic")
    if with_ids:
        command += ["--ids", raw("ids", ids, np.int64)]
    if density is not None:
        command += ["--density", raw("given-density", density, np.float64)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, env=pt.env_without_mpi_launcher())
    if done.returncode != 0:
        raise RuntimeError("phew failed: %s\n%s" % (" ".join(command), done.stderr))
    with open(prefix + "-groups.csv") as f:
        return (np.fromfile(prefix + "-group.raw", dtype="<i8"), np.fromfile(prefix + "-density.raw", dtype="<f8"),
                f.read())


# The defaults of the proxy are the tool's (and the core's).
probe_source = pc.share_source(ProgrammableSource, particles, "contiguous")
probe = HOPHaloFinder(Input=probe_source)
defaults = dict(OuterThreshold=160.0, SaddleFactor=2.5, PeakFactor=3.0, HopNeighbours=64, MergeNeighbours=4,
                NumberOfDensityNeighbours=64, MinimumMembers=10, NumberOfThreads=0, BoxFromDataBounds=1)
for name, value in defaults.items():
    check.check(getattr(probe, name) == value, "default %s is %r, expected %r" % (name, getattr(probe, name), value))
for name in ("Mass", "Velocity", "Id", "Density"):
    check.check(list(getattr(probe, name))[-1] == "None", "default %s is %s, expected None" % (name, list(getattr(probe, name))))
proxy = probe.SMProxy
check.check(proxy.GetXMLLabel() == "HOP Halo Finder", "label %s" % proxy.GetXMLLabel())
check.check([proxy.GetOutputPortName(i) for i in range(proxy.GetNumberOfOutputPorts())] ==
            ["Labels", "Groups", "Markers"],
            "output ports %s" % [proxy.GetOutputPortName(i) for i in range(proxy.GetNumberOfOutputPorts())])
hints = proxy.GetHints()
menu = hints.FindNestedElementByName("ShowInMenu") if hints else None
check.check(menu is not None and menu.GetAttribute("category") == "PHEW", "not in the PHEW menu")
for name in probe.ListProperties():
    doc = probe.GetProperty(name).SMProperty.GetDocumentation()
    check.check(doc is not None and bool(doc.GetShortHelp()) and bool(doc.GetLongHelp()) and
                len((doc.GetDescription() or "").strip()) > 40, "property %s is not documented" % name)
for name in ("OuterThreshold", "SaddleFactor", "PeakFactor", "NumberOfDensityNeighbours"):
    doc = probe.GetProperty(name).SMProperty.GetDocumentation()
    check.check("mean density" in " ".join(doc.GetDescription().split()),
                "the documentation of %s does not give the unit (the mean density)" % name)
Delete(probe)
Delete(probe_source)

# The density given in the last case: the estimate over 32 neighbours (the tool's answer of
# its own run), so that the groups differ from the estimate over 64.
_, rho32, _ = run_cli(os.path.join(args.work_dir, "cli-rho32"), True, True, ["--density-neighbours", "32"])
with_rho = pc.save_particles(os.path.join(args.work_dir, "particles-rho.npz"), pos, mass, vel, ids, rho=rho32)

# Each non-default value below changes the answer on its own (checked with the tool: the same
# run with that one option at its default gives other groups), so a filter that ignored or
# mixed up any property would fail.
CASES = [  # label, share mode, partitions, ids, periodic, the tool's options, the filter's properties, given density
    ("defaults", "contiguous", 1, False, True, [], {}, False),
    ("outer_peak", "contiguous", 1, False, True, ["--outer", "40", "--peak-factor", "8"],
     dict(OuterThreshold=40.0, PeakFactor=8.0), False),
    ("saddle_members", "scattered", 1, True, True, ["--outer", "40", "--saddle-factor", "1.5", "--min-members", "250"],
     dict(OuterThreshold=40.0, SaddleFactor=1.5, MinimumMembers=250), False),
    ("neighbours", "rank0_empty", 1, True, False,
     ["--outer", "40", "--hop-neighbours", "8", "--merge-neighbours", "2", "--density-neighbours", "48"],
     dict(OuterThreshold=40.0, HopNeighbours=8, MergeNeighbours=2, NumberOfDensityNeighbours=48), False),
    ("given_density", "scattered", 2, True, True, ["--outer", "40"], dict(OuterThreshold=40.0), True),
]
for label, mode, partitions, with_ids, periodic, options, properties, given in CASES:
    prefix = os.path.join(args.work_dir, "cli-" + label)
    want_group, want_density, want_csv = run_cli(prefix, with_ids, periodic, options, rho32 if given else None)
    n_groups = want_csv.count("\n") - 1
    check.check(n_groups >= 2 and np.count_nonzero(want_group >= 0) > 100,
                "%s: the tool found %d groups (several expected)" % (label, n_groups))
    if given:
        check.check(want_density.tobytes() == rho32.tobytes(), "%s: the tool did not use the given density" % label)
        _, _, estimated_csv = run_cli(prefix + "-estimated", with_ids, periodic, options)
        check.check(estimated_csv != want_csv, "%s: the given density does not change the groups" % label)
    for k in range(0, len(options), 2):
        _, _, default_csv = run_cli(prefix + "-default", with_ids, periodic, options[:k] + options[k + 2:],
                                    rho32 if given else None)
        check.check(default_csv != want_csv, "%s: %s %s gives the groups of its default" % (label, options[k], options[k + 1]))
    shares = pc.share_source(ProgrammableSource, with_rho if given else particles, mode, partitions)
    extra = dict(Id=["POINTS", "ids"]) if with_ids else {}
    if given:
        extra["Density"] = ["POINTS", "rho"]
    hop = HOPHaloFinder(Input=shares, Mass=["POINTS", "mass"], Velocity=["POINTS", "vel"], HaloProperties=0,
                        **dict(pc.PERIODIC_BOX if periodic else NON_PERIODIC_BOX, **extra, **properties))
    errors = pt.ErrorCatcher(hop)
    collect = pc.collect_filter(ProgrammableFilter, hop, args.work_dir, label)
    collect.UpdatePipeline()
    collect.GetDataInformation()  # gathered from every rank: all have written their files
    if check.check(not errors.messages, "%s: the filter reported: %s" % (label, errors.text())):
        got, seen, kinds = pc.read_collected(args.work_dir, label, n_ranks, len(pos))
        check.check(bool(np.all(seen == 1)), "%s: every particle came back once" % label)
        want_kind = "vtkPartitionedDataSet" if partitions == 2 else "vtkPolyData"
        check.check([k[0] if k else None for k in kinds] == [want_kind] * n_ranks, "%s: outputs %s" % (label, kinds))
        check.check(got["GroupId"].tobytes() == want_group.tobytes(), "%s: GroupId differs from the tool's for %d "
                    "particles" % (label, int(np.count_nonzero(got["GroupId"] != want_group))))
        check.check(got["Density"].tobytes() == want_density.tobytes(), "%s: Density differs from the tool's for %d "
                    "particles" % (label, int(np.count_nonzero(got["Density"] != want_density))))
        check.check(bool(np.all(np.isfinite(got["Density"]))) and bool(np.all(got["Density"] > 0)),
                    "%s: some densities are not positive numbers" % label)
        check.check(bool(np.all(got["ClumpId"] == -2)), "%s: only GroupId and Density are added (no PHEW labels)"
                    % label)
        table = servermanager.Fetch(hop, idx=1)
        columns = pt.table_columns(table)
        check.check(columns[8:13] == PEAK_COLUMNS and "MeanVelocityX" in columns,
                    "%s: the Groups table has the columns %s" % (label, columns))
        written = os.path.join(args.work_dir, label + "-groups.csv")
        pt.write_table_csv(table, written)
        with open(written) as f:
            mine = f.read()
        check.check(mine == want_csv, "%s: the Groups table differs from the tool's groups.csv" % label)
        physics, _, _ = pt.check_group_markers(check, label, servermanager.Fetch(hop, idx=2), table, PEAK_XYZ)
        check.check(not physics, "%s: the physics ran with Halo Properties off" % label)
        rows = OutputPort(hop, 1).GetDataInformation().GetNumberOfRows()
        check.check(rows == n_groups, "%s: the ranks hold %d rows together, expected %d" % (label, rows, n_groups))
        print("%s: %d groups, identical to the tool; points per rank %s"
              % (label, n_groups, [k[2] if k else None for k in kinds]), flush=True)
    Delete(collect)
    Delete(hop)
    Delete(shares)

# Bad parameters: exactly one message each, both outputs empty, and the filter runs again after.
shares = pc.share_source(ProgrammableSource, particles, "contiguous")
hop = HOPHaloFinder(Input=shares, **pc.PERIODIC_BOX)
errors = pt.ErrorCatcher(hop)
BAD = [  # label, properties, words of the message
    ("peak factor 0.5", dict(PeakFactor=0.5), ["peak factor", "at least 1", "0.5"]),
    ("outer threshold 0", dict(OuterThreshold=0.0), ["outer density threshold", "positive"]),
    ("more hop neighbours than particles", dict(HopNeighbours=4000), ["fewer than"]),
]
for label, properties, words in BAD:
    errors.clear()
    for name, value in properties.items():
        setattr(hop, name, value)
    hop.UpdatePipeline()
    check.check(len(errors.messages) == 1, "%s: %d error messages (one expected): %s"
                % (label, len(errors.messages), errors.text()))
    check.check(builtins.all(word in errors.text() for word in words), "%s: the message does not say %s: %s"
                % (label, words, errors.text()))
    check.check(hop.GetDataInformation().GetNumberOfPoints() == 0, "%s: a refused run leaves points" % label)
    groups = OutputPort(hop, 1).GetDataInformation()
    check.check(groups.GetNumberOfRows() == 0, "%s: a refused run leaves %d group rows" % (label, groups.GetNumberOfRows()))
    check.check(servermanager.Fetch(hop, idx=1).GetNumberOfColumns() == 0, "%s: a refused run leaves table columns" % label)
    check.check(OutputPort(hop, 2).GetDataInformation().GetNumberOfPoints() == 0, "%s: a refused run leaves markers" % label)
    print("%s: refused with: %s" % (label, errors.text()), flush=True)
    for name in properties:
        setattr(hop, name, defaults[name])
errors.clear()
hop.UpdatePipeline()
check.check(not errors.messages and hop.GetDataInformation().GetNumberOfPoints() == len(pos),
            "after the bad parameters the defaults run again: %s" % errors.text())
Delete(hop)
Delete(shares)

# Markers with the physics and a cosmology: SWIFT's snapshot in astronomers' units
swift = GadgetHDF5SnapshotReader(FileName=[os.path.join(args.source_dir, "datasets", "swift_dm16", "snap_0003.hdf5")],
                                 Units=1)
hop = HOPHaloFinder(Input=swift, Mass=["POINTS", "Masses"], Velocity=["POINTS", "Velocities"],
                    Id=["POINTS", "ParticleIDs"], OuterThreshold=40.0)  # two groups (one at 160)
hop.UpdatePipeline()
groups = servermanager.Fetch(hop, idx=1)
physics, at_centre, finite = pt.check_group_markers(check, "SWIFT", servermanager.Fetch(hop, idx=2), groups, PEAK_XYZ)
check.check(physics and groups.GetNumberOfRows() == 2 and at_centre > 0 and finite > 0,
            "SWIFT: %d groups, %d at a centre, %d with a finite R200c" % (groups.GetNumberOfRows(), at_centre, finite))
print("SWIFT: %d groups, %d markers at a centre, %d with a finite R200c"
      % (groups.GetNumberOfRows(), at_centre, finite), flush=True)
Delete(hop)
Delete(swift)
check.finish(exit_on_success=False)
