# script-version: 2
"""Catalyst script: haloes and clumps of the simulation's particles, every call.

Channel "particles" (phew_catalyst: this rank's particles as points, with "ParticleId" and
"Velocity" when given, and field data "PeriodicBox"). Runs the finders named in
PHEW_PARTICLE_FINDERS (comma-separated; default "fof"):
    fof    Friends-of-Friends (linking length PHEW_LINKING_LENGTH, 0.2 times the mean
           interparticle spacing)
    hop    HOP (Eisenstein & Hut 1998) with its default thresholds, on the SPH density
    phew   the PHEW Clump Finder on the particles' SPH density (PHEW_THRESHOLD 10,
           PHEW_RELEVANCE 3, PHEW_SADDLE 30, in units of the mean density, as clumps.py)
Groups need PHEW_MIN_MEMBERS particles (20). With velocities the finders also unbind and
compute the halo properties (docs/physics.md) with G = PHEW_GRAVITATIONAL_CONSTANT (default
1/(4 pi): phew_pm's units, total mass 1 in the unit box, laplacian(phi) = density - 1), and the
merger trees follow each structure by its most-bound particles too, with orphans
(docs/merger-trees.md; PHEW_MOST_BOUND 200, PHEW_ORPHAN_STEPS 3). Writes into $PHEW_INSITU_OUTPUT (default
insitu_output), rank 0, for each finder NAME (fof, hop, and pclumps for PHEW):
    NAME_STEP.csv        the catalogue, in the command-line tool's CSV format (FoF and HOP:
                         GroupId order, decreasing size; PHEW: its clump catalogue)
    NAME_links_STEP.csv  the merger tree (PHEW Merger Tree): each group linked to those of the
                         call before that hold the same particles (by ParticleId), with the
                         shared masses, and by most-bound particles (with velocities)
    NAME_tree.csv        every call's links in one table, at the end
"""
import math
import os
import sys

from paraview import catalyst
from paraview.simple import *  # noqa: F401,F403

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from phew_insitu import OUTPUT, rank, update, write_links, write_tables, write_trees  # noqa: E402
FINDERS = [name.strip() for name in os.environ.get("PHEW_PARTICLE_FINDERS", "fof").split(",") if name.strip()]
LINKING_LENGTH = float(os.environ.get("PHEW_LINKING_LENGTH", "0.2"))
MIN_MEMBERS = int(os.environ.get("PHEW_MIN_MEMBERS", "20"))
THRESHOLD = float(os.environ.get("PHEW_THRESHOLD", "10"))
RELEVANCE = float(os.environ.get("PHEW_RELEVANCE", "3"))
SADDLE = float(os.environ.get("PHEW_SADDLE", "30"))
GRAVITATIONAL_CONSTANT = float(os.environ.get("PHEW_GRAVITATIONAL_CONSTANT", str(0.25 / math.pi)))
MOST_BOUND = int(os.environ.get("PHEW_MOST_BOUND", "200"))
ORPHAN_STEPS = int(os.environ.get("PHEW_ORPHAN_STEPS", "3"))
unknown = set(FINDERS) - {"fof", "hop", "phew"}
if unknown:
    raise ValueError("PHEW_PARTICLE_FINDERS: unknown finder(s) %s (fof, hop, phew)" % ", ".join(sorted(unknown)))

LoadPlugin(os.environ["PHEW_PLUGIN"], remote=False, ns=globals())

particles = TrivialProducer(registrationName="particles")
# name -> (filter, its catalogue's output port, its label array, the merger tree)
finders = {}
if "fof" in FINDERS:
    fof = FriendsofFriends(registrationName="fof", Input=particles)
    fof.LinkingLength = LINKING_LENGTH
    fof.MinimumMembers = MIN_MEMBERS
    finders["fof"] = (fof, 1, "GroupId")
if "hop" in FINDERS:
    hop = HOPHaloFinder(registrationName="hop", Input=particles)
    hop.MinimumMembers = MIN_MEMBERS
    finders["hop"] = (hop, 1, "GroupId")
if "phew" in FINDERS:
    pclumps = PHEWClumpFinder(registrationName="pclumps", Input=particles)
    pclumps.RelevanceThreshold = RELEVANCE
    pclumps.SaddleMerging = 1 if SADDLE > 0 else 0
    pclumps.SaddleThreshold = SADDLE
    pclumps.DensityThreshold = THRESHOLD
    finders["pclumps"] = (pclumps, 1, "ClumpId")
trees = {}
for name, (finder, port, label) in finders.items():
    finder.Id = ["POINTS", "ParticleId"]
    finder.Velocity = ["POINTS", "Velocity"]  # unbinding and halo properties, when given
    finder.GravitationalConstant = GRAVITATIONAL_CONSTANT
    # the groups followed from call to call by their particles' ids
    trees[name] = PHEWMergerTree(registrationName=name + "_tree", Input=finder)
    trees[name].Labels = ["POINTS", label]
    trees[name].Id = ["POINTS", "ParticleId"]
    trees[name].MostBoundParticles = MOST_BOUND
    trees[name].MaxOrphanSteps = ORPHAN_STEPS

options = catalyst.Options()
options.ExtractsOutputDirectory = OUTPUT


def catalyst_execute(info):
    # the box and periodicity the simulation passed (origin x y z, sizes; 0: not periodic)
    data = particles.GetClientSideObject().GetOutputDataObject(0)
    box = data.GetFieldData().GetArray("PeriodicBox")
    # (this script takes every axis periodic, or none: then the box is the particles' bounds)
    periodic = box is not None and all(box.GetValue(3 + d) > 0 for d in range(3))
    has_mass = data.GetPointData().GetArray("Mass") is not None
    has_velocity = data.GetPointData().GetArray("Velocity") is not None
    counts = []
    for name, (finder, port, label) in finders.items():
        finder.BoxFromDataBounds = 0 if periodic else 1
        if periodic:
            finder.BoxOrigin = [box.GetValue(d) for d in range(3)]
            finder.BoxSize = [box.GetValue(3 + d) for d in range(3)]
        finder.PeriodicX = finder.PeriodicY = finder.PeriodicZ = int(periodic)
        if has_mass and finder.Mass[1] != "Mass":
            finder.Mass = ["POINTS", "Mass"]
            trees[name].Mass = ["POINTS", "Mass"]  # (set once: other arrays start a new history)
        if has_velocity and trees[name].Energy[1] != "SpecificEnergy":
            # the finders' physics writes the energies, in the structures the particles are bound to
            trees[name].Labels = ["POINTS", "Bound" + label]
            trees[name].Energy = ["POINTS", "SpecificEnergy"]
        catalogue = update(finder, info.time).GetOutputDataObject(port)  # complete on rank 0, empty elsewhere
        write_tables(info.timestep, [(name, catalogue)])
        write_links(name, info.timestep, update(trees[name], info.time).GetOutputDataObject(0))
        counts.append("%d %s" % (catalogue.GetNumberOfRows(), name))
    if rank() == 0:
        print("phew in situ: step %d, t = %.3f: %s" % (info.timestep, info.time, ", ".join(counts)), flush=True)


def catalyst_finalize():
    write_trees()
