"""pvbatch test, alone and under mpiexec (ctest runs it with 1, 2 and 4 ranks): the
Friends-of-Friends filter on particles (points_cases.py's set: five blobs in a periodic unit
box, masses, velocities, ids) gives every particle the GroupId of `phew --points ... --finder
fof` on the same data, and the Groups table is the tool's PREFIX-groups.csv text.

The particles reach the ranks as the PHEW point tests give them (points_cases.share_source):
consecutive shares without ids (the global order is the file's), every n-th in reverse order
with the Id array, and nothing on rank 0 with ids. Also: the relative and the absolute linking
length, a minimum group size of 1, and a bad linking length refused with one message.

The Markers (port 2): one vertex per group (complete on rank 0, nothing elsewhere) with the
Groups columns, at CenterX/Y/Z with the physics (the cases' velocities; no cosmology, so R200c
is NaN and GlyphRadius 0), at the centre of mass without it (Halo Properties off); on SWIFT's
snapshot read in astronomers' units (a cosmology) GlyphRadius is the finite R200c.

    [mpiexec -np N] pvbatch test_plugin_fof.py --plugin PHEW.so --source-dir SRC --work-dir DIR \\
        --cli phew [--ranks N]
"""
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
check = pt.Checker("plugin_fof")
n_ranks = pt.number_of_ranks()
if ranks_expected is not None:
    check.check(n_ranks == int(ranks_expected), "expected %s ranks, got %d" % (ranks_expected, n_ranks))
os.makedirs(args.work_dir, exist_ok=True)
pos, mass, vel, ids = pc.make_particles()
particles = pc.save_particles(os.path.join(args.work_dir, "particles.npz"), pos, mass, vel, ids)


def raw(name, values, kind):
    path = os.path.join(args.work_dir, name + ".raw")
    np.ascontiguousarray(values, dtype=np.dtype(kind).newbyteorder("<")).tofile(path)
    return path


def run_cli(prefix, with_ids, linking):
    command = [cli, "--points", raw("pos", pos, np.float64), "--masses", raw("mass", mass, np.float64),
               "--velocities", raw("vel", vel, np.float64), "--type", "float64", "--box", "1", "1", "1",
               "--periodic", "--finder", "fof", "--output", prefix] + linking
    if with_ids:
        command += ["--ids", raw("ids", ids, np.int64)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, env=pt.env_without_mpi_launcher())
    if done.returncode != 0:
        raise RuntimeError("phew failed: %s\n%s" % (" ".join(command), done.stderr))
    with open(prefix + "-groups.csv") as f:
        return np.fromfile(prefix + "-group.raw", dtype="<i8"), f.read()


COM = ("CenterOfMassX", "CenterOfMassY", "CenterOfMassZ")
CASES = [  # label, share mode, ids, the tool's linking options, the filter's properties
    ("contiguous", "contiguous", False, [], {}),
    ("scattered", "scattered", True, [], {}),
    ("rank0_empty", "rank0_empty", True, ["--linking-absolute", "0.006", "--min-members", "1"],
     dict(LinkingLength=0.006, LinkingLengthIsAbsolute=1, MinimumMembers=1)),
]
for label, mode, with_ids, linking, properties in CASES:
    want, want_csv = run_cli(os.path.join(args.work_dir, "cli-" + label), with_ids, linking)
    shares = pc.share_source(ProgrammableSource, particles, mode)
    extra = dict(Id=["POINTS", "ids"]) if with_ids else {}
    fof = FriendsofFriends(Input=shares, Mass=["POINTS", "mass"], Velocity=["POINTS", "vel"],
                           **dict(pc.PERIODIC_BOX, **extra, **properties))
    errors = pt.ErrorCatcher(fof)
    collect = pc.collect_filter(ProgrammableFilter, fof, args.work_dir, label)
    collect.UpdatePipeline()
    collect.GetDataInformation()  # gathered from every rank: all have written their files
    if check.check(not errors.messages, "%s: the filter reported: %s" % (label, errors.text())):
        got, seen, kinds = pc.read_collected(args.work_dir, label, n_ranks, len(pos))
        check.check(bool(np.all(seen == 1)), "%s: every particle came back once" % label)
        check.check(got["GroupId"].tobytes() == want.tobytes(), "%s: GroupId differs from the tool's for %d particles"
                    % (label, int(np.count_nonzero(got["GroupId"] != want))))
        check.check(bool(np.all(got["ClumpId"] == -2)) and bool(np.all(np.isnan(got["Density"]))),
                    "%s: only GroupId is added (no PHEW labels, no density)" % label)
        written = os.path.join(args.work_dir, label + "-groups.csv")
        pt.write_table_csv(servermanager.Fetch(fof, idx=1), written)
        with open(written) as f:
            mine = f.read()
        check.check(mine == want_csv, "%s: the Groups table differs from the tool's groups.csv" % label)
        check.check(want_csv.count("\n") - 1 >= 6, "%s: %d groups (the blobs expected)" % (label, want_csv.count("\n") - 1))
        physics, at_centre, _ = pt.check_group_markers(check, label, servermanager.Fetch(fof, idx=2),
                                                       servermanager.Fetch(fof, idx=1), COM)
        check.check(physics and at_centre > 0,
                    "%s: the physics ran (%s), %d markers at a centre" % (label, physics, at_centre))
        if label == "contiguous":  # without the physics: at the centres of mass
            fof.HaloProperties = 0
            fof.UpdatePipeline()
            physics, _, _ = pt.check_group_markers(check, label + " without the physics",
                                                   servermanager.Fetch(fof, idx=2), servermanager.Fetch(fof, idx=1), COM)
            check.check(not physics, "%s: the physics ran with Halo Properties off" % label)
        print("%s: %d groups, identical to the tool" % (label, want_csv.count("\n") - 1), flush=True)
    Delete(collect)
    Delete(fof)
    Delete(shares)

# a bad linking length: one message, empty outputs
shares = pc.share_source(ProgrammableSource, particles, "contiguous")
fof = FriendsofFriends(Input=shares, LinkingLength=-1.0)
errors = pt.ErrorCatcher(fof)
fof.UpdatePipeline()
check.check("linking length" in errors.text(), "a negative linking length is named: %s" % errors.text())
check.check(fof.GetDataInformation().GetNumberOfPoints() == 0, "a refused run leaves no points")
check.check(OutputPort(fof, 2).GetDataInformation().GetNumberOfPoints() == 0, "a refused run leaves markers")
proxy = fof.SMProxy
ports = [proxy.GetOutputPortName(i) for i in range(proxy.GetNumberOfOutputPorts())]
check.check(ports == ["Labels", "Groups", "Markers"], "output ports %s" % ports)
Delete(fof)
Delete(shares)

# Markers with a cosmology: SWIFT's snapshot in astronomers' units, so R200c is finite
swift = GadgetHDF5SnapshotReader(FileName=[os.path.join(args.source_dir, "datasets", "swift_dm16", "snap_0003.hdf5")],
                                 Units=1)
fof = FriendsofFriends(Input=swift, Mass=["POINTS", "Masses"], Velocity=["POINTS", "Velocities"],
                       Id=["POINTS", "ParticleIDs"])
fof.UpdatePipeline()
groups = servermanager.Fetch(fof, idx=1)
physics, at_centre, finite = pt.check_group_markers(check, "SWIFT", servermanager.Fetch(fof, idx=2), groups, COM)
check.check(physics and at_centre > 0 and finite > 0, "SWIFT: %d groups, %d at a centre, %d with a finite R200c"
            % (groups.GetNumberOfRows(), at_centre, finite))
print("SWIFT: %d groups, %d markers at a centre, %d with a finite R200c"
      % (groups.GetNumberOfRows(), at_centre, finite), flush=True)
Delete(fof)
Delete(swift)
check.finish(exit_on_success=False)
