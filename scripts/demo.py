"""PHEW demo: find clumps in a density cube with the ParaView plugin, save the catalogues,
the labelled grid and a picture.

    xvfb-run -a -s "-screen 0 1280x1024x24 -noreset" \\
        pvbatch scripts/demo.py --plugin build/lib/PHEW/PHEW.so \\
            --input datasets/sample.vti --output output [--threshold T] [--relevance R]
            [--saddle S | --no-saddle-merging] [--mass-threshold M] [--[no-]periodic]
            [--array density] [--points] [--no-picture]

Writes into the output directory:
    clumps.csv, haloes.csv, dendrogram.csv   the three tables, columns in the filter's order,
                                             integers as integers and doubles with %.17g
                                             (the format of the command-line tool phew)
    labelled.vti                             the input plus PeakPatchId, ClumpId, HaloId
                                             (VTK XML, Binary data mode)
    clumps.png                               the clumps coloured by ClumpId

Rendering needs an X display (xvfb-run on a headless machine); --no-picture skips it.
"""
import argparse
import os
import sys

from paraview.simple import *  # noqa: F401,F403

# Parameters recommended for datasets/sample.vti (datasets/README.md): test cells above 10
# (background <= ~3), relevance 2 (noise peaks <= ~1.5), saddle merging at 25 (saddles inside
# the haloes >= 36, bridges and filaments <= ~18), periodic (one halo crosses the x boundary).
# Expected: 14 clumps, 6 haloes, 22 dendrogram nodes. For other data pass your own values.
DEFAULT_THRESHOLD = 10.0  # None: use the mean density of the input
DEFAULT_RELEVANCE = 2.0
DEFAULT_SADDLE = 25.0  # None: no saddle merging (every clump is its own halo)
DEFAULT_MASS_THRESHOLD = 0.0
DEFAULT_PERIODIC = True

TABLES = ((1, "clumps.csv"), (2, "dendrogram.csv"), (3, "haloes.csv"))


def parse_arguments():
    parser = argparse.ArgumentParser(description="PHEW clump finding demo (run with pvbatch)")
    parser.add_argument("--plugin", required=True, help="path of the PHEW plugin (PHEW.so)")
    parser.add_argument("--input", required=True, help="image data (.vti) with a density array")
    parser.add_argument("--output", required=True, help="directory for the results")
    parser.add_argument("--array", default="density", help="name of the density array (default: density)")
    parser.add_argument("--points", action="store_true", help="the density is point data (default: cell data)")
    parser.add_argument("--threshold", type=float, default=DEFAULT_THRESHOLD,
                        help="density threshold (default: %s)"
                        % ("the mean density" if DEFAULT_THRESHOLD is None else DEFAULT_THRESHOLD))
    parser.add_argument("--relevance", type=float, default=DEFAULT_RELEVANCE, help="relevance threshold")
    parser.add_argument("--saddle", type=float, default=DEFAULT_SADDLE,
                        help="saddle threshold (saddle merging is on unless --no-saddle-merging)")
    parser.add_argument("--no-saddle-merging", dest="saddle", action="store_const", const=None,
                        help="no saddle merging: every clump is its own halo")
    parser.add_argument("--mass-threshold", type=float, default=DEFAULT_MASS_THRESHOLD, help="mass threshold")
    parser.add_argument("--periodic", action=argparse.BooleanOptionalAction, default=DEFAULT_PERIODIC,
                        help="periodic boundaries on all axes (default: %s)" % ("on" if DEFAULT_PERIODIC else "off"))
    parser.add_argument("--no-picture", action="store_true", help="do not render clumps.png")
    parser.add_argument("--size", type=int, nargs=2, default=[1200, 900], metavar=("W", "H"),
                        help="picture size in pixels")
    return parser.parse_args()


def mean_density(reader, association, name):
    from vtkmodules.util import numpy_support
    data = servermanager.Fetch(reader)
    attributes = data.GetPointData() if association == "POINTS" else data.GetCellData()
    array = attributes.GetArray(name)
    if array is None:
        sys.exit("demo: the input has no %s array '%s'" % ("point" if association == "POINTS" else "cell", name))
    return float(numpy_support.vtk_to_numpy(array).mean(dtype="float64"))


def write_csv(table, path):
    """The table as CSV in its own column order (SaveData would sort the columns)."""
    columns = [table.GetColumn(c) for c in range(table.GetNumberOfColumns())]
    is_double = [column.GetDataType() in (10, 11) for column in columns]  # VTK_FLOAT, VTK_DOUBLE
    with open(path, "w") as out:
        out.write(",".join(table.GetColumnName(c) for c in range(len(columns))) + "\n")
        for row in range(table.GetNumberOfRows()):
            out.write(",".join(("%.17g" if dbl else "%d") % column.GetValue(row)
                               for column, dbl in zip(columns, is_double)) + "\n")


# Kelly's colours of maximum contrast (without the darkest, which vanish on the background,
# and two yellows too close to the first).
KELLY = ("F3C300", "875692", "F38400", "A1CAF1", "BE0032", "C2B280", "008856", "E68FAC", "0067A5",
         "F99379", "604E97", "B3446C", "882D17", "8DB600", "E25822", "848482")


def distinct_colours(n):
    """n well separated RGB colours: Kelly's list, then golden-ratio hue steps with
    alternating lightness, so neighbouring clumps rarely share a colour."""
    import colorsys
    colours = [tuple(int(h[i:i + 2], 16) / 255.0 for i in (0, 2, 4)) for h in KELLY[:n]]
    for i in range(len(colours), n):
        hue = (0.07 + i * 0.618033988749895) % 1.0
        light = (0.55, 0.42, 0.68)[i % 3]
        colours.append(colorsys.hls_to_rgb(hue, light, 0.85))
    return colours


def make_view(size):
    """A render view with a dark gradient background."""
    view = CreateView("RenderView")
    view.ViewSize = size
    view.OrientationAxesVisibility = 1
    view.UseColorPaletteForBackground = 0
    view.BackgroundColorMode = "Gradient"
    view.Background = [0.02, 0.03, 0.08]
    view.Background2 = [0.16, 0.19, 0.28]
    return view


def clump_cells(finder, association, n_clumps):
    """The cells (or points) of the Labels output that belong to a clump."""
    # Thresholds are set after creation: a keyword value equal to the XML default (0) would be
    # replaced by the array range when the proxy is initialised.
    clumps = Threshold(Input=OutputPort(finder, 0), Scalars=[association, "ClumpId"], ThresholdMethod="Between")
    clumps.LowerThreshold = -0.5
    clumps.UpperThreshold = n_clumps - 0.5
    return clumps


def show_clumps(clumps, view, association, n_clumps):
    """Shows the clump cells coloured by ClumpId, one distinct colour per clump, with a legend."""
    display = Show(clumps, view)
    display.SetRepresentationType("Surface")
    ColorBy(display, (association, "ClumpId"))
    lut = GetColorTransferFunction("ClumpId")
    if n_clumps <= 24:
        # Categorical: one colour and one legend entry per clump.
        lut.InterpretValuesAsCategories = 1
        lut.Annotations = sum(([str(i), "clump %d" % i] for i in range(n_clumps)), [])
        lut.IndexedColors = sum((list(c) for c in distinct_colours(n_clumps)), [])
    else:
        # Many clumps: a step function with one distinct colour per ClumpId, numeric legend.
        lut.InterpretValuesAsCategories = 0
        lut.AutomaticRescaleRangeMode = "Never"
        points = []
        for i, colour in enumerate(distinct_colours(n_clumps)):
            points += [i - 0.5] + list(colour) + [i + 0.499] + list(colour)
        lut.RGBPoints = points
        lut.Discretize = 0
    bar = GetScalarBar(lut, view)
    bar.Title = "ClumpId"
    bar.ComponentTitle = ""
    bar.TitleColor = bar.LabelColor = [0.95, 0.95, 0.95]
    bar.TitleFontSize = 18
    bar.LabelFontSize = 14
    bar.ScalarBarLength = 0.6
    bar.WindowLocation = "Any Location"
    bar.Position = [0.88, 0.2]
    if n_clumps > 24:
        bar.AddRangeLabels = 0
        bar.AutomaticLabelFormat = 0
        bar.LabelFormat = "%.0f"
    display.SetScalarBarVisibility(view, n_clumps > 0)
    return display


def show_title(title, view):
    """The title text in the upper left corner."""
    title_display = Show(title, view)
    title_display.WindowLocation = "Upper Left Corner"
    title_display.FontSize = 20
    title_display.Justification = "Left"
    title_display.Color = [0.95, 0.95, 0.95]


def show_from_corner(view, dolly):
    """Looks at the scene from the (+x, -y, +z) corner, z up, and renders it."""
    view.CameraPosition = [1.0, -1.6, 1.1]
    view.CameraFocalPoint = [0.0, 0.0, 0.0]
    view.CameraViewUp = [0.0, 0.0, 1.0]
    view.ResetCamera()
    GetActiveCamera().Dolly(dolly)
    Render(view)


def render(view, finder, reader, n_clumps, n_haloes, params, path, size):
    association = "CELLS" if params["association"] == "CELLS" else "POINTS"

    outline = Show(Outline(Input=reader), view)
    outline.DiffuseColor = outline.AmbientColor = [0.75, 0.78, 0.85]
    outline.LineWidth = 1.5

    # Context: the boundary of the test cells (density at the threshold), faint.
    context_input = CellDatatoPointData(Input=reader) if association == "CELLS" else reader
    envelope = Contour(Input=context_input, ContourBy=["POINTS", params["array"]],
                       Isosurfaces=[params["threshold"]])
    envelope_display = Show(envelope, view)
    ColorBy(envelope_display, None)
    envelope_display.DiffuseColor = [0.7, 0.75, 0.9]
    envelope_display.Opacity = 0.12

    show_clumps(clump_cells(finder, association, n_clumps), view, association, n_clumps)
    # (the envelope shows wherever it is not covered by a clump: a region above the threshold
    # without a clump is a peak removed as noise)
    title = Text(Text="PHEW clump finder: %d clumps, %d haloes\n"
                      "density threshold %.4g, relevance %.3g%s\n"
                      "grey veil: density above the threshold; one alone is a noise peak "
                      "(relevance below %.3g), in no clump"
                      % (n_clumps, n_haloes, params["threshold"], params["relevance"],
                         ", saddle %.4g" % params["saddle"] if params["saddle"] is not None else "",
                         params["relevance"]))
    show_title(title, view)
    show_from_corner(view, 1.25)
    SaveScreenshot(path, view, ImageResolution=size)


def render_dendrogram(finder, n_clumps, path, size):
    """The Dendrogram Plot output in a PHEW Dendrogram View, coloured like the clumps, with
    its density axis."""
    view = CreateView("PHEWDendrogramView")
    view.ViewSize = size
    view.UseColorPaletteForBackground = 0
    view.Background = [0.02, 0.03, 0.08]
    display = Show(OutputPort(finder, 5), view)
    ColorBy(display, ("CELLS", "ClumpId"))  # the clumps' colour map (show_clumps set it)
    display.SetScalarBarVisibility(view, False)
    display.LineWidth = 3
    axes = display.DataAxesGrid
    axes.GridAxesVisibility = 1
    axes.XTitle = "haloes by decreasing mass, each as wide as its mass"
    axes.XAxisUseCustomLabels = 1  # x orders the structures: its title, no numbers
    axes.XAxisLabels = []
    axes.YTitle = "log10 density"
    axes.ZTitle = ""
    axes.AxesToLabel = 3  # the density axis (left) and the x title (bottom)
    axes.FacesToRender = 4
    axes.ShowGrid = 0
    axes.XTitleFontSize = axes.YTitleFontSize = axes.YLabelFontSize = 16
    title = Text(Text="PHEW dendrogram: %d clumps (leaves); haloes side by side by mass, numbered 1, 2, ...\n"
                      "vertical: peak to the saddle where it joins; horizontal: merger saddles" % n_clumps)
    show_title(title, view)
    # The frame a little wider than the lines (as the GUI draws it): no line on it.
    bounds = OutputPort(finder, 5).GetDataInformation().GetBounds()
    dx, dy = 0.03 * (bounds[1] - bounds[0]), 0.05 * (bounds[3] - bounds[2])
    bounds = [bounds[0] - dx, bounds[1] + dx, bounds[2] - dy, bounds[3] + dy, 0.0, 0.0]
    axes.UseCustomBounds = 1
    axes.CustomBounds = bounds
    # Fill the view with the plot (and room for the axis labels on the left).
    centre = [0.5 * (bounds[0] + bounds[1]), 0.5 * (bounds[2] + bounds[3]), 0.0]
    aspect = float(size[0]) / size[1]
    view.CameraFocalPoint = [centre[0] - 0.08 * (bounds[1] - bounds[0]), centre[1], 0.0]
    view.CameraPosition = [centre[0] - 0.08 * (bounds[1] - bounds[0]), centre[1], 10.0]
    view.CameraViewUp = [0.0, 1.0, 0.0]
    view.CameraParallelProjection = 1
    view.CameraParallelScale = 0.62 * max(bounds[3] - bounds[2], (bounds[1] - bounds[0]) / aspect)
    SaveScreenshot(path, view, ImageResolution=size)


def render_markers(finder, reader, path, size):
    """The clumps faint, and the Markers output as spheres sized by mass: clump peaks coloured
    by ClumpId, halo centres as white rings."""
    view = make_view(size)
    outline = Show(Outline(Input=reader), view)
    outline.DiffuseColor = outline.AmbientColor = [0.75, 0.78, 0.85]
    geometry = Show(OutputPort(finder, 4), view)
    ColorBy(geometry, ("CELLS", "ClumpId"))
    geometry.Opacity = 0.25
    geometry.SetScalarBarVisibility(view, False)
    peaks = ExtractBlock(Input=OutputPort(finder, 6), Selectors=["/Root/ClumpPeaks"])
    centres = ExtractBlock(Input=OutputPort(finder, 6), Selectors=["/Root/HaloCentres"])
    for source, colour_by, opacity in ((peaks, "ClumpId", 1.0), (centres, None, 0.5)):
        # Sphere radius ~ mass^(1/3); the largest object gets a diameter of 0.1 box.
        radius = Calculator(Input=source, AttributeType="Point Data", ResultArrayName="MassRadius",
                            Function="Mass^(1/3)")
        radius.UpdatePipeline()
        largest = radius.PointData["MassRadius"].GetRange()[1] if radius.PointData["MassRadius"] else 0.0
        glyphs = Glyph(Input=radius, GlyphType="Sphere")
        glyphs.ScaleArray = ["POINTS", "MassRadius"]
        glyphs.ScaleFactor = 0.1 / largest if largest > 0 else 0.01
        glyphs.GlyphMode = "All Points"
        shown = Show(glyphs, view)
        if colour_by:
            ColorBy(shown, ("POINTS", colour_by))
            shown.SetScalarBarVisibility(view, False)
        else:
            ColorBy(shown, None)
            shown.DiffuseColor = [1.0, 1.0, 1.0]
            shown.Representation = "Wireframe"
        shown.Opacity = opacity
    title = Text(Text="PHEW markers: clump peaks (spheres, coloured by ClumpId) and halo centres\n"
                      "of mass (white), sized by the cube root of the mass")
    show_title(title, view)
    show_from_corner(view, 1.25)
    SaveScreenshot(path, view, ImageResolution=size)


def main():
    args = parse_arguments()
    os.makedirs(args.output, exist_ok=True)
    LoadPlugin(args.plugin, remote=False, ns=globals())
    # the view (and its X connection) first: a connection opened seconds after xvfb-run started
    # its server failed often on a loaded machine
    view = None if args.no_picture else make_view(args.size)

    association = "POINTS" if args.points else "CELLS"
    reader = XMLImageDataReader(FileName=[os.path.abspath(args.input)])
    threshold = args.threshold if args.threshold is not None else mean_density(reader, association, args.array)
    params = {"association": association, "array": args.array, "threshold": threshold,
              "relevance": args.relevance, "saddle": args.saddle}
    finder = PHEWClumpFinder(Input=reader, Density=[association, args.array])
    # Set after creation: ParaView initialises DensityThreshold and SaddleThreshold from the
    # array range, and would do so even over a keyword argument equal to the XML default (0).
    finder.DensityThreshold = threshold
    finder.RelevanceThreshold = args.relevance
    finder.SaddleMerging = 1 if args.saddle is not None else 0
    if args.saddle is not None:
        finder.SaddleThreshold = args.saddle
    finder.MassThreshold = args.mass_threshold
    finder.Periodic = 1 if args.periodic else 0
    finder.UpdatePipeline()
    labelled = servermanager.Fetch(finder, idx=0)
    if labelled.GetNumberOfPoints() == 0:
        sys.exit("demo: the PHEW Clump Finder failed (see the error above)")

    counts = {}
    for port, name in TABLES:
        table = servermanager.Fetch(finder, idx=port)
        write_csv(table, os.path.join(args.output, name))
        counts[name] = table.GetNumberOfRows()

    writer = XMLImageDataWriter(Input=OutputPort(finder, 0), FileName=os.path.join(args.output, "labelled.vti"),
                                DataMode="Binary")
    writer.UpdatePipeline()
    Delete(writer)

    print("PHEW demo on %s (%s array '%s'): threshold %.6g, relevance %g, saddle %s, mass threshold %g%s"
          % (args.input, "point" if args.points else "cell", args.array, threshold, args.relevance,
             "off" if args.saddle is None else "%g" % args.saddle, args.mass_threshold,
             ", periodic" if args.periodic else ""))
    print("  %d clumps, %d haloes, %d dendrogram nodes"
          % (counts["clumps.csv"], counts["haloes.csv"], counts["dendrogram.csv"]))
    if not args.no_picture:
        render(view, finder, reader, counts["clumps.csv"], counts["haloes.csv"], params,
               os.path.join(args.output, "clumps.png"), args.size)
        render_dendrogram(finder, counts["clumps.csv"], os.path.join(args.output, "dendrogram.png"), args.size)
        render_markers(finder, reader, os.path.join(args.output, "markers.png"), args.size)
    print("  wrote %s" % ", ".join(n for n in ("clumps.csv", "haloes.csv", "dendrogram.csv", "labelled.vti",
                                                "clumps.png", "dendrogram.png", "markers.png")
                                  if os.path.exists(os.path.join(args.output, n))))


if __name__ == "__main__":
    main()
