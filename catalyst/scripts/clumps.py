# script-version: 2
"""Catalyst script: PHEW clumps of the simulation's density grid, every time it is called.

Channel "grid" (phew_catalyst: this rank's block of cells, cell array "density" in units of
the mean density, field data "PeriodicBox"). Writes into $PHEW_INSITU_OUTPUT (default
insitu_output):
    clumps_STEP.csv, haloes_STEP.csv   the catalogues (rank 0; columns in the filter's order,
                                       integers as integers, doubles with %.17g, as the
                                       command-line tool writes them: phew_insitu.py)
    grid_STEP.pvti                     the labelled grid (density, PeakPatchId, ClumpId,
                                       HaloId), every $PHEW_GRID_EVERY steps (default 50;
                                       0: never),
                                       Binary data mode: an index of one .vti piece per rank
                                       (in grid_STEP/)
    clumps_STEP.png                    the clumps (their outer faces, Clump Geometry) coloured by
                                       halo as in the GUI (the ten most massive named by rank
                                       and mass), with the step and time
                                       (needs a display: xvfb-run on a headless machine;
                                       PHEW_PICTURES=0 turns it off)
    clump_links_STEP.csv,              the merger trees (PHEW Merger Tree): each clump (halo)
    halo_links_STEP.csv                linked to those of the call before that share its
                                       cells, with the shared masses (rank 0)
    clump_tree.csv, halo_tree.csv      every call's links in one table, at the end
                                       (PHEW_TREES=0 turns the trees off)
Parameters, in units of the mean density: PHEW_THRESHOLD (10), PHEW_RELEVANCE (3),
PHEW_SADDLE (30; 0 turns saddle merging off); PHEW_THREADS, threads per rank (0, the default:
ParaView's thread setting, or every core the rank may use; the clumps do not depend on it).
"""
import os
import sys

from paraview import catalyst
from paraview.simple import *  # noqa: F401,F403

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from phew_insitu import OUTPUT, halo_colours, rank, update, write_links, write_tables, write_trees  # noqa: E402
THRESHOLD = float(os.environ.get("PHEW_THRESHOLD", "10"))
RELEVANCE = float(os.environ.get("PHEW_RELEVANCE", "3"))
SADDLE = float(os.environ.get("PHEW_SADDLE", "30"))
GRID_EVERY = int(os.environ.get("PHEW_GRID_EVERY", "50"))
TREES = os.environ.get("PHEW_TREES", "1") != "0"
PICTURES = os.environ.get("PHEW_PICTURES", "1") != "0"
THREADS = int(os.environ.get("PHEW_THREADS", "0"))


def display_on_every_rank():
    """Whether every rank can open the X display: VTK aborts the process when it cannot, and
    ranks must all render or none (the picture is composited over them)."""
    import ctypes
    import ctypes.util
    from vtkmodules.vtkCommonCore import vtkIntArray
    from vtkmodules.vtkParallelCore import vtkCommunicator, vtkMultiProcessController
    mine = 0
    library = ctypes.util.find_library("X11")
    if library and os.environ.get("DISPLAY"):
        x11 = ctypes.CDLL(library)
        x11.XOpenDisplay.restype = ctypes.c_void_p
        x11.XOpenDisplay.argtypes = [ctypes.c_char_p]
        # The probe's connection stays open for the run: when its last client leaves, an X server
        # resets, and the render window connecting during the reset fails (and VTK aborts).
        global _PROBE_DISPLAY
        _PROBE_DISPLAY = x11.XOpenDisplay(None)
        mine = 1 if _PROBE_DISPLAY else 0
    flag, every = vtkIntArray(), vtkIntArray()
    flag.InsertNextValue(mine)
    every.SetNumberOfTuples(1)
    vtkMultiProcessController.GetGlobalController().AllReduce(flag, every, vtkCommunicator.MIN_OP)
    return every.GetValue(0) == 1


if PICTURES and not display_on_every_rank():
    PICTURES = False
    print("clumps.py: no X display on every rank (run under xvfb-run on a headless machine): no pictures",
          flush=True)

LoadPlugin(os.environ["PHEW_PLUGIN"], remote=False, ns=globals())

grid = TrivialProducer(registrationName="grid")
finder = PHEWClumpFinder(registrationName="clumps", Input=grid)
finder.Density = ["CELLS", "density"]
finder.DensityThreshold = THRESHOLD
finder.RelevanceThreshold = RELEVANCE
finder.SaddleMerging = 1 if SADDLE > 0 else 0
finder.SaddleThreshold = SADDLE
finder.Periodic = 1
finder.NumberOfThreads = THREADS

# the clumps and the haloes followed from call to call, by the cells they share
trees = {}
if TREES:
    for name, labels in (("clump", "ClumpId"), ("halo", "HaloId")):
        trees[name] = PHEWMergerTree(registrationName=name + "_tree", Input=finder)
        trees[name].Labels = ["CELLS", labels]
        trees[name].Mass = ["CELLS", "density"]

if GRID_EVERY > 0:
    labelled = CreateExtractor("VTI", finder, registrationName="labelled_grid")
    # (the extractor writes an index of pieces, one per rank, even on one rank: a .pvti)
    labelled.Writer.FileName = "grid_{timestep:06d}.pvti"
    labelled.Writer.DataMode = "Binary"
    labelled.Trigger = "TimeStep"
    labelled.Trigger.Frequency = GRID_EVERY

if PICTURES:
    view = CreateView("RenderView")
    view.ViewSize = [800, 800]
    view.OrientationAxesVisibility = 0
    view.UseColorPaletteForBackground = 0
    view.Background = [0.02, 0.03, 0.08]
    view.CameraPosition = [2.9, 2.1, 2.4]
    view.CameraFocalPoint = [0.5, 0.5, 0.5]
    view.CameraViewUp = [0.0, 0.0, 1.0]
    outline = Show(grid, view)
    outline.SetRepresentationType("Outline")
    outline.AmbientColor = outline.DiffuseColor = [0.6, 0.6, 0.7]
    # the GUI's drawing (Clump Geometry: the clumps' outer faces) and colours: by halo
    shown = Show(OutputPort(finder, 4), view)
    ColorBy(shown, ("CELLS", "HaloColour"))
    lut = GetColorTransferFunction("HaloColour")
    halo_colours(lut, [], 0)
    shown.SetScalarBarVisibility(view, True)
    bar = GetScalarBar(lut, view)
    bar.ComponentTitle = ""
    bar.ScalarBarLength = 0.85
    bar.LabelFontSize = 12
    caption = Text(registrationName="caption", Text="")
    caption_display = Show(caption, view)
    caption_display.WindowLocation = "Upper Left Corner"
    caption_display.FontSize = 18
    picture = CreateExtractor("PNG", view, registrationName="picture")
    picture.Writer.FileName = "clumps_{timestep:06d}.png"
    picture.Writer.ImageResolution = [800, 800]

options = catalyst.Options()
options.ExtractsOutputDirectory = OUTPUT


def catalyst_execute(info):
    import time
    start = time.perf_counter()
    algorithm = update(finder, info.time)
    finding = time.perf_counter() - start
    clumps = algorithm.GetOutputDataObject(1)  # complete on rank 0, empty on the others
    haloes = algorithm.GetOutputDataObject(3)
    core = clumps.GetFieldData().GetArray("PHEWSeconds")  # the core's call, inside the filter
    start = time.perf_counter()
    write_tables(info.timestep, [("clumps", clumps), ("haloes", haloes)])
    writing = time.perf_counter() - start
    for name, tree in trees.items():
        write_links(name, info.timestep, update(tree, info.time).GetOutputDataObject(0))
    tracking = time.perf_counter() - start - writing
    if rank() == 0:
        with open(os.path.join(OUTPUT, "script_timing.csv"), "a") as out:  # for the benchmark
            out.write("%d,%.6f,%.6f,%.6f,%.6f\n" % (info.timestep, finding, core.GetValue(0) if core else float("nan"),
                                                    writing, tracking))
        # (print_info of this ParaView fails in its log handler; a plain print is enough)
        print("phew in situ: step %d, t = %.3f: %d clumps, %d haloes" % (info.timestep, info.time,
              clumps.GetNumberOfRows(), haloes.GetNumberOfRows()), flush=True)
    if PICTURES:  # every rank renders its part: the same colours and caption on all of them
        from vtkmodules.vtkCommonCore import vtkDoubleArray
        from vtkmodules.vtkParallelCore import vtkMultiProcessController
        # rank 0's counts and ten largest halo masses, for every rank's legend and caption
        shared = vtkDoubleArray()
        shared.SetNumberOfTuples(12)
        shared.Fill(-1.0)
        if rank() == 0:
            masses = haloes.GetColumnByName("Mass")
            top = sorted((masses.GetValue(k) for k in range(haloes.GetNumberOfRows())), reverse=True)[:10]
            for k, value in enumerate([clumps.GetNumberOfRows(), haloes.GetNumberOfRows()] + top):
                shared.SetValue(k, value)
        vtkMultiProcessController.GetGlobalController().Broadcast(shared, 0)
        n, h = int(shared.GetValue(0)), int(shared.GetValue(1))
        halo_colours(lut, [shared.GetValue(k) for k in range(2, 12) if shared.GetValue(k) >= 0], h)
        bar.Title = "%d haloes" % h
        caption.Text = "step %d   t = %.2f   %d clumps, %d haloes" % (info.timestep, info.time, n, h)


def catalyst_finalize():
    write_trees()
