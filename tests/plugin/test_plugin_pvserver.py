"""pvpython test: the PHEW Clump Finder in client-server mode, as in the GUI connected to a
parallel server. Starts `mpiexec -np N pvserver` itself, connects to it, loads the plugin on
the server, and runs the filter on datasets/amr_sample.vthb read by the server's AMR reader
(which spreads the blocks over the server's ranks): every label copy on every server rank and
the three tables fetched to the client must equal, byte for byte, the one-process answers of
test_plugin_amr_reference.py (a fixture). Then the point path: the particles of
points_cases.py shared over the server's ranks by a Programmable Source; every particle's
labels and density and the tables must equal the one-process answers of test_plugin_points.py
(another fixture). Last the RAMSES Output Reader on the server: every rank reads particles,
32768 in all and 1124 AMR blocks, and Friends-of-Friends finds the 50 groups phew --snapshot
finds.

    pvpython test_plugin_pvserver.py --plugin PHEW.so --source-dir SRC --work-dir DIR \\
        --answers-dir ANS --points-answers-dir PANS --ranks N --mpiexec MPIEXEC --pvserver PVSERVER
"""
import os
import re
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


from phew_plugin_testing import take_option  # noqa: E402

answers_dir = take_option("--answers-dir")
points_answers_dir = take_option("--points-answers-dir")
ranks = int(take_option("--ranks"))
mpiexec = take_option("--mpiexec")
pvserver = take_option("--pvserver")

from paraview import servermanager  # noqa: E402
from paraview.simple import *  # noqa: F401,F403,E402

import phew_plugin_testing as pt  # noqa: E402
import points_cases  # noqa: E402
import test_plugin_amr_cases as cases  # noqa: E402

args = pt.parse_args()
check = pt.Checker("plugin_pvserver")


def free_port():
    with socket.socket() as s:
        s.bind(("localhost", 0))
        return s.getsockname()[1]


port = free_port()
# pvpython may have started as an MPI singleton: its Open MPI variables would make mpiexec
# believe it runs inside a job. The server gets a clean MPI environment.
# (Open MPI's settings from ctest are kept: tests/CMakeLists.txt, PHEW_MPI_TEST_ENV.)
kept = ("OMPI_MCA_pml", "OMPI_MCA_rmaps_base_oversubscribe")
environment = {k: v for k, v in os.environ.items()
               if k in kept or not k.startswith(("OMPI_", "PMIX_", "OPAL_", "PRTE_"))}
environment.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
server = subprocess.Popen([mpiexec, "-np", str(ranks), "--oversubscribe", pvserver, "--server-port=%d" % port,
                           "--force-offscreen-rendering"],
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=environment)
try:
    # pvserver prints "Accepting connection(s): host:port" once it listens.
    deadline, seen = time.time() + 120, []
    while time.time() < deadline:
        line = server.stdout.readline()
        if not line:
            break
        seen.append(line)
        if re.search(r"Accepting connection", line):
            break
    if not check.check(any("Accepting connection" in line for line in seen),
                       "pvserver did not start (exit %s):\n%s" % (server.poll(), "".join(seen))):
        check.finish()
    Connect("localhost", port)
    LoadPlugin(args.plugin, remote=True, ns=globals())
    _, density, properties, _ = cases.CASES["amr_sample"]
    reader = XMLUniformGridAMRReader(FileName=[os.path.join(args.source_dir, cases.SAMPLE)])
    reader.DefaultNumberOfLevels = 0
    cases.compare_with_answers(globals(), check, "amr_sample-pvserver", "amr_sample", reader, density, properties,
                               args.work_dir, answers_dir, ranks)
    labels, holders = cases.read_collected(args.work_dir, "amr_sample-pvserver", ranks)
    busy = sorted({rank for block_holders in holders.values() for rank in block_holders})
    check.check(busy == list(range(ranks)), "the server's ranks holding blocks are %s, not all %d" % (busy, ranks))
    if points_answers_dir:
        points_cases.compare_with_answers(globals(), check, "points-pvserver", "base", "contiguous", args.work_dir,
                                          points_answers_dir, ranks)
    # the readers on the server: each rank reads its share of the RAMSES sample's particles
    ramses = RAMSESOutputReader(FileName=[os.path.join(args.source_dir, "datasets", "ramses_cosmo32", "output_00003",
                                                       "info_00003.txt")])
    particles = OutputPort(ramses, 1)
    ramses.UpdatePipeline()
    check.check(ramses.GetDataInformation(1).GetNumberOfPoints() == 32768 and
                ramses.GetDataInformation(0).GetNumberOfDataSets() == 1124,
                "RAMSES on the server: %d particles (32768), %d AMR blocks (1124)" % (
                    ramses.GetDataInformation(1).GetNumberOfPoints(), ramses.GetDataInformation(0).GetNumberOfDataSets()))
    owners = ProcessIdScalars(Input=particles)
    owners.UpdatePipeline()
    span = owners.GetDataInformation().GetPointDataInformation().GetArrayInformation("ProcessId").GetComponentRange(0)
    check.check(list(span) == [0.0, float(ranks - 1)], "RAMSES particles read by the ranks %s, not 0 to %d" % (
        list(span), ranks - 1))
    fof = FriendsofFriends(Input=particles, Mass=["POINTS", "Masses"], Velocity=["POINTS", "Velocities"],
                           Id=["POINTS", "ParticleIDs"])
    fof.UpdatePipeline()
    groups = servermanager.Fetch(fof, idx=1).GetNumberOfRows()
    check.check(groups == 50, "FoF on the server's RAMSES particles: %d groups (50, as phew --snapshot)" % groups)
    Disconnect()
finally:
    server.terminate()
    try:
        server.wait(timeout=30)
    except subprocess.TimeoutExpired:
        server.kill()
check.finish()
