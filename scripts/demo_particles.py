"""PHEW demo on particles: find clumps and haloes in datasets/particles_sample (20000 particles,
NFW haloes with sub-haloes plus a background, periodic unit box) with the ParaView plugin, save
the catalogues, the labelled particles and a picture.

    xvfb-run -a -s "-screen 0 1280x1024x24 -noreset" \\
        pvbatch scripts/demo_particles.py --plugin build/lib/PHEW/PHEW.so \\
            --input datasets/particles_sample --output output/particles [--no-picture]

The input is the raw sample (PREFIX-pos.raw, PREFIX-vel.raw: float32 x,y,z per particle), turned
into a vtkPolyData by a Programmable Source. Writes into the output directory: clumps.csv,
haloes.csv, dendrogram.csv (as scripts/demo.py), labelled.vtp (the particles with Density,
PeakPatchId, ClumpId, HaloId) and clumps.png (particles coloured by ClumpId, the others faint).
Parameters: density estimated (SPH, 64 neighbours), threshold 80 times the mean, relevance 3,
saddle merging at 200, periodic box [0, 1)^3, as RAMSES runs PHEW on cosmological particles.
"""
import argparse
import os
import sys

from paraview.simple import *  # noqa: F401,F403

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import demo  # noqa: E402  (its tables, CSV writer and picture helpers)

THRESHOLD, RELEVANCE, SADDLE = 80.0, 3.0, 200.0

# Runs inside the Programmable Source: PREFIX is replaced by the sample's path.
SOURCE_SCRIPT = """
import numpy as np
from vtkmodules.numpy_interface import dataset_adapter as dsa
from vtkmodules.util.numpy_support import numpy_to_vtk
from vtkmodules.vtkCommonCore import vtkPoints
from vtkmodules.vtkCommonDataModel import vtkCellArray
pos = np.fromfile('PREFIX-pos.raw', dtype='<f4').reshape(-1, 3)
vel = np.fromfile('PREFIX-vel.raw', dtype='<f4').reshape(-1, 3)
out = self.GetPolyDataOutput()
points = vtkPoints()
points.SetData(numpy_to_vtk(pos, deep=1))
out.SetPoints(points)
verts = vtkCellArray()
for i in range(len(pos)):
    verts.InsertNextCell(1)
    verts.InsertCellPoint(i)
out.SetVerts(verts)
v = numpy_to_vtk(vel, deep=1)
v.SetName('velocity')
out.GetPointData().AddArray(v)
"""


def render(view, finder, particles, n_clumps, n_haloes, path, size):
    outline = Show(Outline(Input=particles), view)
    outline.DiffuseColor = outline.AmbientColor = [0.75, 0.78, 0.85]
    everyone = Show(particles, view)  # every particle, faint: the background and the haloes' outskirts
    everyone.ColorArrayName = ['POINTS', '']
    everyone.SetRepresentationType("Points")
    everyone.PointSize = 1.5
    everyone.DiffuseColor = everyone.AmbientColor = [0.55, 0.6, 0.75]
    everyone.Opacity = 0.25
    clumps = demo.show_clumps(demo.clump_cells(finder, "POINTS", n_clumps), view, "POINTS", n_clumps)
    clumps.SetRepresentationType("Points")
    clumps.PointSize = 3.0
    demo.show_title(Text(Text="PHEW on particles: %d clumps, %d haloes (20000 particles, SPH density)\n"
                              "density threshold %g x mean, relevance %g, saddle %g; periodic box"
                              % (n_clumps, n_haloes, THRESHOLD, RELEVANCE, SADDLE)), view)
    demo.show_from_corner(view, 1.25)
    SaveScreenshot(path, view, ImageResolution=size)


def main():
    parser = argparse.ArgumentParser(description="PHEW clump finding on particles (run with pvbatch)")
    parser.add_argument("--plugin", required=True)
    parser.add_argument("--input", required=True, help="the raw sample's prefix (PREFIX-pos.raw, PREFIX-vel.raw)")
    parser.add_argument("--output", required=True)
    parser.add_argument("--no-picture", action="store_true")
    args = parser.parse_args()
    os.makedirs(args.output, exist_ok=True)
    LoadPlugin(args.plugin, remote=False, ns=globals())
    # the view (and its X connection) first: a connection opened seconds after xvfb-run started
    # its server failed often on a loaded machine
    size = [1200, 900]
    view = None if args.no_picture else demo.make_view(size)
    prefix = os.path.abspath(args.input)
    particles = ProgrammableSource(OutputDataSetType="vtkPolyData", Script=SOURCE_SCRIPT.replace("PREFIX", prefix))
    finder = PHEWClumpFinder(Input=particles)
    finder.Velocity = ["POINTS", "velocity"]
    finder.BoxFromDataBounds = 0
    finder.BoxOrigin = [0.0, 0.0, 0.0]
    finder.BoxSize = [1.0, 1.0, 1.0]
    finder.PeriodicX = finder.PeriodicY = finder.PeriodicZ = 1
    finder.DensityThreshold = THRESHOLD
    finder.RelevanceThreshold = RELEVANCE
    finder.SaddleMerging = 1
    finder.SaddleThreshold = SADDLE
    finder.UpdatePipeline()
    counts = {}
    for port, name in demo.TABLES:
        table = servermanager.Fetch(finder, idx=port)
        demo.write_csv(table, os.path.join(args.output, name))
        counts[name] = table.GetNumberOfRows()
    if counts["clumps.csv"] == 0:
        sys.exit("demo_particles: no clumps (see the error above)")
    writer = XMLPolyDataWriter(Input=OutputPort(finder, 0), FileName=os.path.join(args.output, "labelled.vtp"),
                               DataMode="Binary")
    writer.UpdatePipeline()
    Delete(writer)
    print("PHEW demo on %s: %d clumps, %d haloes, %d dendrogram nodes"
          % (args.input, counts["clumps.csv"], counts["haloes.csv"], counts["dendrogram.csv"]))
    if not args.no_picture:
        render(view, finder, particles, counts["clumps.csv"], counts["haloes.csv"],
               os.path.join(args.output, "clumps.png"), size)
    print("  wrote %s" % ", ".join(sorted(os.listdir(args.output))))


if __name__ == "__main__":
    main()
