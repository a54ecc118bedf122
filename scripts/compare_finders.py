"""The three finders on one particle set: Friends-of-Friends, HOP and PHEW, side by side.

    xvfb-run -a -s "-screen 0 1600x900x24 -noreset" pvbatch scripts/compare_finders.py \\
        --cli build/bin/phew --points /work/shared/data/cosmo64_z0_pos.f32 \\
        --output output/finders [--picture docs/images/finders-cosmo.png]

Runs the phew tool three times on the particles (float32 x, y, z; periodic unit box): FoF with
b = 0.2 (groups of at least 20), HOP with delta_outer 160 (the defaults: saddle 2.5, peak 3,
groups of at least 10), PHEW with threshold 80, relevance 3 and saddle merging at 200 (its
haloes are the groups compared). Prints a Markdown table (number of groups, particles in them,
the ten largest) and renders the same region three times, each particle coloured by
its group (particles in none faint grey), into one picture: a 0.3 x 0.3 x 0.2 box around the
largest FoF group, seen along z. The outputs of the three runs stay
in the output directory (PREFIX-group.raw / -halo.raw, the catalogues)."""
import argparse
import os
import subprocess
import sys

import numpy as np
from paraview.simple import (AssignViewToLayout, CreateLayout, CreateView, GetColorTransferFunction, Render,
                             SaveScreenshot, Show, Text, PVTrivialProducer)
from vtkmodules.util.numpy_support import numpy_to_vtk
from vtkmodules.vtkCommonCore import vtkPoints
from vtkmodules.vtkCommonDataModel import vtkCellArray, vtkPolyData

FINDERS = [
    ("Friends-of-Friends (b = 0.2)", "fof", ["--finder", "fof", "--linking-length", "0.2"], "-group.raw"),
    ("HOP (delta_outer 160)", "hop", ["--finder", "hop", "--outer", "160"], "-group.raw"),
    ("PHEW haloes (80 / 3 / 200)", "phew", ["--threshold", "80", "--relevance", "3", "--saddle", "200"], "-halo.raw"),
]


def run(cli, points, output):
    """Runs the three finders; returns [(title, group id per particle)]."""
    os.makedirs(output, exist_ok=True)
    found = []
    for title, name, options, labels in FINDERS:
        prefix = os.path.join(output, name)
        cmd = [cli, "--points", points, "--type", "float32", "--box", "1", "1", "1", "--periodic",
               "--output", prefix] + options
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        found.append((title, np.fromfile(prefix + labels, dtype="<i8")))
    return found


def table(found):
    lines = ["| finder | groups | particles in groups | ten largest (particles) |", "|---|---|---|---|"]
    for title, group in found:
        sizes = np.bincount(group[group >= 0])
        largest = ", ".join(str(s) for s in np.sort(sizes)[::-1][:10])
        lines.append(f"| {title} | {len(sizes)} | {int((group >= 0).sum())} | {largest} |")
    return "\n".join(lines)


def region(pos, group, centre, half):
    """The particles within `half` of centre along every axis (nearest image; positions
    relative to centre), as a vtkPolyData with a Colour array: a shuffled group number, -1 for
    none."""
    d = (pos - np.asarray(centre) + 0.5) % 1.0 - 0.5
    keep = np.all(np.abs(d) < np.asarray(half), axis=1)
    p = d[keep].astype(np.float64)
    poly = vtkPolyData()
    points = vtkPoints()
    points.SetData(numpy_to_vtk(p, deep=1))
    poly.SetPoints(points)
    cells = vtkCellArray()
    cells.InsertNextCell(len(p))
    for i in range(len(p)):
        cells.InsertCellPoint(i)
    poly.SetVerts(cells)
    g = group[keep]
    colour = np.where(g >= 0, (g * 7919) % 48, -1).astype(np.float64)
    array = numpy_to_vtk(colour, deep=1)
    array.SetName("Colour")
    poly.GetPointData().AddArray(array)
    return poly


def render(found, pos, centre, picture):
    """Three views side by side: a 0.3 x 0.3 x 0.2 box around centre, seen along z."""
    layout = CreateLayout("finders")
    layout.SplitHorizontal(0, 1.0 / 3.0)
    layout.SplitHorizontal(2, 0.5)
    lut = GetColorTransferFunction("Colour")
    lut.ApplyPreset("Rainbow Uniform", True)
    lut.RescaleTransferFunction(0.0, 47.0)
    lut.UseBelowRangeColor = 1
    lut.BelowRangeColor = [0.82, 0.82, 0.85]
    views = []
    for k, (title, group) in enumerate(found):
        view = CreateView("RenderView")
        view.OrientationAxesVisibility = 0
        view.Background = [1.0, 1.0, 1.0]
        try:
            view.UseColorPaletteForBackground = 0
        except AttributeError:
            pass
        AssignViewToLayout(view=view, layout=layout, hint=(1, 5, 6)[k])
        source = PVTrivialProducer()
        source.GetClientSideObject().SetOutput(region(pos, group, centre, (0.15, 0.15, 0.1)))
        shown = Show(source, view)
        shown.SetRepresentationType("Points")
        shown.ColorArrayName = ["POINTS", "Colour"]
        shown.LookupTable = lut
        shown.PointSize = 2.0
        label = Show(Text(Text=title), view)
        label.FontSize = 14
        label.Color = [0.1, 0.1, 0.1]
        label.WindowLocation = "Upper Center"
        views.append(view)
    layout.SetSize(1800, 620)
    for view in views:  # the cameras last: a view's first render resets its camera
        Render(view)
        view.CameraPosition = [0.0, 0.0, 3.0]
        view.CameraFocalPoint = [0.0, 0.0, 0.0]
        view.CameraViewUp = [0.0, 1.0, 0.0]
        view.CameraParallelProjection = 1
        view.CameraParallelScale = 0.16
        Render(view)
    SaveScreenshot(picture, layout, ImageResolution=[1800, 620])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cli", required=True)
    ap.add_argument("--points", required=True)
    ap.add_argument("--output", required=True)
    ap.add_argument("--picture", help="default: OUTPUT/finders.png")
    args = ap.parse_args()
    found = run(args.cli, args.points, args.output)
    print(table(found))
    pos = np.fromfile(args.points, dtype="<f4").reshape(-1, 3)
    picture = args.picture or os.path.join(args.output, "finders.png")
    os.makedirs(os.path.dirname(os.path.abspath(picture)), exist_ok=True)
    with open(os.path.join(args.output, "fof-groups.csv")) as f:  # around FoF's largest group
        header, first = f.readline().strip().split(","), f.readline().strip().split(",")
    centre = [float(first[header.index(c)]) for c in ("CenterOfMassX", "CenterOfMassY", "CenterOfMassZ")]
    render(found, pos, centre, picture)
    print(f"picture: {picture}")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
