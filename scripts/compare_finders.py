"""The three finders on one particle set: Friends-of-Friends, HOP and PHEW, side by side.

    xvfb-run -a -s "-screen 0 1600x900x24 -noreset" pvbatch scripts/compare_finders.py \\
        --cli build/bin/phew --points /work/shared/data/cosmo64_z0_pos.f32 \\
        --output output/finders [--picture docs/images/finders-cosmo.png]

Runs the phew tool three times on the particles (float32 x, y, z; periodic unit box): FoF with
b = 0.2 (groups of at least 20), HOP with delta_outer 160 (the defaults: saddle 2.5, peak 3,
groups of at least 10), PHEW with threshold 80, relevance 3 and saddle merging at 200 (its
haloes are the groups compared). Prints a Markdown table (number of groups, particles in them,
the ten largest) and renders the same region three times into one picture: a 0.3 x 0.3 x 0.2 box
around the largest FoF group, seen along z, with a 5 Mpc/h scale bar. Colours follow the haloes
across the panels: FoF's groups in the region take the haloes' palette (scripts/halo_palette.py:
the ten largest a colour each, the others shared colours), and a HOP group or PHEW halo the
colour of the FoF group with which it shares the most particles (particles in no group faint
grey). The outputs of the three runs stay in the output directory (PREFIX-group.raw /
-halo.raw, the catalogues)."""
import argparse
import os
import subprocess
import sys

import numpy as np
from paraview.simple import (AssignViewToLayout, CreateLayout, CreateView, GetColorTransferFunction, Line, Render,
                             SaveScreenshot, Show, Text, PVTrivialProducer)
from vtkmodules.util.numpy_support import numpy_to_vtk
from vtkmodules.vtkCommonCore import vtkPoints
from vtkmodules.vtkCommonDataModel import vtkCellArray, vtkPolyData

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from halo_palette import HALO_PALETTE, NO_STRUCTURE, OWN  # noqa: E402

BOX_MPC_H = 50.0  # the shared snapshot's box

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


def inside(pos, centre, half):
    """Which particles lie within `half` of centre along every axis (nearest image), and their
    positions relative to centre."""
    d = (pos - np.asarray(centre) + 0.5) % 1.0 - 0.5
    return np.all(np.abs(d) < np.asarray(half), axis=1), d


def reference_colours(group):
    """Colours of the reference finder's groups (FoF) among these particles: the ten with the
    most particles a colour each, the others the shared colours in turn."""
    ids, counts = np.unique(group[group >= 0], return_counts=True)
    order = ids[np.lexsort((ids, -counts))]
    return {int(g): k if k < OWN else OWN + (k - OWN) % (len(HALO_PALETTE) - OWN) for k, g in enumerate(order)}


def matched_colours(group, reference, colours):
    """Each group of another finder takes the colour of the reference group with which it
    shares the most particles (ties: the lower reference id); none shared: a shared colour."""
    out = {}
    for g in np.unique(group[group >= 0]):
        mine = group == g
        partners, shared = np.unique(reference[mine & (reference >= 0)], return_counts=True)
        if len(partners):
            out[int(g)] = colours[int(partners[np.lexsort((partners, -shared))][0])]
        else:
            out[int(g)] = OWN + int(g) % (len(HALO_PALETTE) - OWN)
    return out


def region(points, group, colours):
    """The particles as a vtkPolyData with a Colour array: the palette index of their group, -1
    for none."""
    p = points.astype(np.float64)
    poly = vtkPolyData()
    vtk_points = vtkPoints()
    vtk_points.SetData(numpy_to_vtk(p, deep=1))
    poly.SetPoints(vtk_points)
    cells = vtkCellArray()
    cells.InsertNextCell(len(p))
    for i in range(len(p)):
        cells.InsertCellPoint(i)
    poly.SetVerts(cells)
    colour = np.array([colours.get(int(g), -1) for g in group], dtype=np.float64)
    array = numpy_to_vtk(colour, deep=1)
    array.SetName("Colour")
    poly.GetPointData().AddArray(array)
    return poly


def scale_bar(view):
    """5 Mpc/h along x at the lower left of the panel (positions in box units around centre)."""
    length = 5.0 / BOX_MPC_H
    bar = Show(Line(Point1=[-0.14, -0.13, 0.0], Point2=[-0.14 + length, -0.13, 0.0]), view)
    bar.AmbientColor = bar.DiffuseColor = [0.1, 0.1, 0.1]
    bar.LineWidth = 3.0
    label = Show(Text(Text="5 Mpc/h"), view)
    label.FontSize = 13
    label.Color = [0.1, 0.1, 0.1]
    label.WindowLocation = "Any Location"
    label.Position = [0.04, 0.135]  # (above the bar)


def render(found, pos, centre, picture):
    """Three views side by side: a 0.3 x 0.3 x 0.2 box around centre, seen along z."""
    layout = CreateLayout("finders")
    layout.SplitHorizontal(0, 1.0 / 3.0)
    layout.SplitHorizontal(2, 0.5)
    lut = GetColorTransferFunction("Colour")
    lut.InterpretValuesAsCategories = 1
    lut.Annotations = [x for k in range(len(HALO_PALETTE)) for x in (str(k), str(k))]
    lut.IndexedColors = [c for rgb in HALO_PALETTE for c in rgb]
    lut.NanColor = list(NO_STRUCTURE)
    keep, d = inside(pos, centre, (0.15, 0.15, 0.1))
    reference = found[0][1][keep]
    colours = reference_colours(reference)
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
        mine = group[keep]
        source = PVTrivialProducer()
        source.GetClientSideObject().SetOutput(
            region(d[keep], mine, colours if k == 0 else matched_colours(mine, reference, colours)))
        shown = Show(source, view)
        shown.SetRepresentationType("Points")
        shown.ColorArrayName = ["POINTS", "Colour"]
        shown.LookupTable = lut
        shown.PointSize = 2.0
        label = Show(Text(Text=title), view)
        label.FontSize = 14
        label.Color = [0.1, 0.1, 0.1]
        label.WindowLocation = "Any Location"  # (Upper Center touches the edge)
        label.Position = [0.04, 0.9]
        scale_bar(view)
        views.append(view)
    layout.SetSize(1800, 620)
    for view in views:  # the cameras last: a view's first render resets its camera
        Render(view)
        view.CameraPosition = [0.0, 0.0, 3.0]
        view.CameraFocalPoint = [0.0, 0.0, 0.0]
        view.CameraViewUp = [0.0, 1.0, 0.0]
        view.CameraParallelProjection = 1
        view.CameraParallelScale = 0.165
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
