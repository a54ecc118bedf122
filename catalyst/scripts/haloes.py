# script-version: 2
"""Catalyst script: Friends-of-Friends haloes of the simulation's particles, every call.

Channel "particles" (phew_catalyst: this rank's particles as points, with "ParticleId" and
"Velocity" when given, and field data "PeriodicBox"). Writes into $PHEW_INSITU_OUTPUT
(default insitu_output), rank 0:
    fof_STEP.csv   the group catalogue (GroupId order: decreasing size, ties by the smallest
                   particle id), in the command-line tool's CSV format
    fof_links_STEP.csv  the merger tree (PHEW Merger Tree): each group linked to the groups of
                   the call before that hold the same particles (by ParticleId), with the
                   shared masses
    fof_tree.csv   every call's links in one table, at the end
Parameters: PHEW_LINKING_LENGTH (0.2, times the mean interparticle spacing),
PHEW_MIN_MEMBERS (20).
"""
import os
import sys

from paraview import catalyst
from paraview.simple import *  # noqa: F401,F403

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from phew_insitu import OUTPUT, rank, write_links, write_tables, write_trees  # noqa: E402
LINKING_LENGTH = float(os.environ.get("PHEW_LINKING_LENGTH", "0.2"))
MIN_MEMBERS = int(os.environ.get("PHEW_MIN_MEMBERS", "20"))

LoadPlugin(os.environ["PHEW_PLUGIN"], remote=False, ns=globals())

particles = TrivialProducer(registrationName="particles")
fof = FriendsofFriends(registrationName="fof", Input=particles)
fof.LinkingLength = LINKING_LENGTH
fof.MinimumMembers = MIN_MEMBERS
fof.Id = ["POINTS", "ParticleId"]
fof.Velocity = ["POINTS", "Velocity"]  # mean velocities and dispersions in the catalogue

# the groups followed from call to call by their particles' ids
tree = PHEWMergerTree(registrationName="fof_tree", Input=fof)
tree.Labels = ["POINTS", "GroupId"]
tree.Id = ["POINTS", "ParticleId"]

options = catalyst.Options()
options.ExtractsOutputDirectory = OUTPUT


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
    write_tables(info.timestep, [("fof", groups)])
    if data.GetPointData().GetArray("Mass") is not None and tree.Mass[1] != "Mass":
        tree.Mass = ["POINTS", "Mass"]  # (set once: other arrays would start a new history)
    tracker = tree.GetClientSideObject()
    tracker.UpdateTimeStep(info.time)
    write_links("fof", info.timestep, tracker.GetOutputDataObject(0))
    if rank() == 0:
        print("phew in situ: step %d, t = %.3f: %d FoF groups" % (info.timestep, info.time, groups.GetNumberOfRows()),
              flush=True)


def catalyst_finalize():
    write_trees()
