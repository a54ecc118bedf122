# script-version: 2
"""Catalyst script: Friends-of-Friends haloes of the simulation's particles, every call.

Channel "particles" (phew_catalyst: this rank's particles as points, with "ParticleId" and
"Velocity" when given, and field data "PeriodicBox"). Writes into $PHEW_INSITU_OUTPUT
(default insitu_output), rank 0:
    fof_STEP.csv   the group catalogue (GroupId order: decreasing size, ties by the smallest
                   particle id), in the command-line tool's CSV format
Parameters: PHEW_LINKING_LENGTH (0.2, times the mean interparticle spacing),
PHEW_MIN_MEMBERS (20).
"""
import os

from paraview import catalyst
from paraview.simple import *  # noqa: F401,F403

OUTPUT = os.environ.get("PHEW_INSITU_OUTPUT", "insitu_output")
LINKING_LENGTH = float(os.environ.get("PHEW_LINKING_LENGTH", "0.2"))
MIN_MEMBERS = int(os.environ.get("PHEW_MIN_MEMBERS", "20"))

LoadPlugin(os.environ["PHEW_PLUGIN"], remote=False, ns=globals())

particles = TrivialProducer(registrationName="particles")
fof = FriendsofFriends(registrationName="fof", Input=particles)
fof.LinkingLength = LINKING_LENGTH
fof.MinimumMembers = MIN_MEMBERS
fof.Id = ["POINTS", "ParticleId"]
fof.Velocity = ["POINTS", "Velocity"]  # mean velocities and dispersions in the catalogue

options = catalyst.Options()
options.ExtractsOutputDirectory = OUTPUT


def write_table(table, path):
    """The table as CSV in its own column order (scripts/demo.py's writer, repeated here so that
    this script can be copied anywhere)."""
    columns = [table.GetColumn(c) for c in range(table.GetNumberOfColumns())]
    is_double = [column.GetDataType() in (10, 11) for column in columns]  # VTK_FLOAT, VTK_DOUBLE
    with open(path, "w") as out:
        out.write(",".join(table.GetColumnName(c) for c in range(len(columns))) + "\n")
        for row in range(table.GetNumberOfRows()):
            out.write(",".join(("%.17g" if dbl else "%d") % column.GetValue(row)
                               for column, dbl in zip(columns, is_double)) + "\n")


def catalyst_execute(info):
    # the box and periodicity the simulation passed (origin x y z, sizes; 0: not periodic)
    data = particles.GetClientSideObject().GetOutputDataObject(0)
    box = data.GetFieldData().GetArray("PeriodicBox")
    # (this script takes every axis periodic, or none: then the box is the particles' bounds)
    periodic = box is not None and all(box.GetValue(3 + d) > 0 for d in range(3))
    fof.BoxFromDataBounds = 0 if periodic else 1
    if periodic:
        fof.BoxOrigin = [box.GetValue(d) for d in range(3)]
        fof.BoxSize = [box.GetValue(3 + d) for d in range(3)]
    fof.PeriodicX = fof.PeriodicY = fof.PeriodicZ = int(periodic)
    algorithm = fof.GetClientSideObject()  # the filter itself: see clumps.py
    algorithm.UpdateTimeStep(info.time)
    groups = algorithm.GetOutputDataObject(1)  # complete on rank 0, empty on the others
    if servermanager.vtkProcessModule.GetProcessModule().GetPartitionId() == 0:
        os.makedirs(OUTPUT, exist_ok=True)
        write_table(groups, os.path.join(OUTPUT, "fof_%06d.csv" % info.timestep))
        print("phew in situ: step %d, t = %.3f: %d FoF groups" % (info.timestep, info.time, groups.GetNumberOfRows()),
              flush=True)
