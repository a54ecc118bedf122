"""pvbatch test under mpiexec (ctest runs it with 1, 2, 3 and 4 ranks): the PHEW Clump Finder
accepts every small or flat image that the serial filter accepts, and gives the serial answer.

Shapes: flat on one or two axes (64x64x1, 1x64x64, 200x1x1, 1x1x200, 3x3x1, 1x2x3, 5x1x1 ...),
tiny (2x2x2, 2x1x1), and seeded random small shapes, so that on 2-4 ranks some pieces are
empty, some are one point thick, and point pieces share planes on a flat axis. Each shape runs
as point data, as cell data one cell thick, and as cell data on a flat extent (2D cells), periodic
and not, float32 and float64, with and without exact ties (plateaus), with and without saddle
merging, on a non-zero extent start, origin and spacing. For every case:
  - the filter reports no error;
  - labels: the Labels output written as a .pvti (one file per rank's piece, shared planes and
    ghost cells included) carries on every cell of every piece the PeakPatchId, ClumpId and
    HaloId of the command-line tool (the serial answer), and the pieces cover the image;
  - tables: Clumps, Dendrogram and Haloes from rank 0 equal the tool's CSV files exactly;
  - on one rank, the tool's answer also equals datasets/phew_numpy.py (independent).
A few shapes also run with ghost cells (vtkGhostCellsGenerator, and a consumer asking the
reader for a ghost level). On more than one rank the cases must have produced empty pieces and
overlapping (shared-plane) pieces, or the test would not test what it claims.
Inputs that the serial filter refuses fail the same way on every rank count, with one message
and empty outputs: a single cell ("single cell", as the tool says) and empty images ("the input
image is empty (0 cells)").

    mpiexec -np N pvbatch test_plugin_small_images.py --plugin PHEW.so --cli phew \\
        --source-dir SRC --work-dir DIR --ranks N
"""
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
sys.path.insert(0, os.path.join(here, "..", "parallel"))  # compare_numpy: the numpy reference check

import numpy as np
from paraview.simple import *  # noqa: F401,F403
from vtkmodules.util import numpy_support
from vtkmodules.vtkCommonDataModel import vtkImageData

import compare_numpy
import phew_plugin_testing as pt

ranks_expected = None
if "--ranks" in sys.argv:
    i = sys.argv.index("--ranks")
    ranks_expected = int(sys.argv[i + 1])
    del sys.argv[i:i + 2]
args = pt.parse_args(need_cli=True)
LoadPlugin(args.plugin, remote=False, ns=globals())
check = pt.Checker("plugin_small_images")
n_ranks = pt.number_of_ranks()
print("ranks: %d" % n_ranks, flush=True)
if ranks_expected is not None:
    check.check(n_ranks == ranks_expected, "expected %d ranks, got %d" % (ranks_expected, n_ranks))

# (nx, ny, nz): the shapes of the issue, then seeded random small ones.
SHAPES = [(64, 64, 1), (1, 64, 64), (64, 1, 64), (200, 1, 1), (1, 1, 200), (1, 200, 1), (3, 3, 1),
          (2, 2, 2), (1, 2, 3), (5, 1, 1), (2, 1, 1), (1, 3, 1), (2, 3, 1), (7, 2, 1)]
shape_rng = np.random.default_rng(2024)
while len(SHAPES) < 22:
    shape = tuple(int(n) for n in shape_rng.choice([1, 1, 2, 3, 4, 5, 6, 9], size=3))
    if np.prod(shape) >= 2 and shape not in SHAPES:
        SHAPES.append(shape)

# Styles: point data (an axis of 1 point is flat); cell data with an axis of 1 cell one cell
# thick (2 points); cell data with such an axis flat (1 point: 2D or 1D cells).
STYLES = ("points", "cells", "flatcells")


class Case:
    def __init__(self, number, shape, style, periodic, source="reader", base=None):
        self.shape, self.style, self.periodic, self.source = shape, style, periodic, source
        self.base = base  # a case with the same image, run through other sources
        self.association = "POINTS" if style == "points" else "CELLS"
        self.seed = 1000 + number
        self.dtype = np.float32 if number % 2 else np.float64
        self.ties = number % 3 == 0  # values on a coarse grid: plateaus and exact ties
        self.threshold, self.relevance = 0.3, 1.5
        self.saddle = 0.6 if number % 4 < 2 else None
        self.label = "%s_%dx%dx%d_%s%s" % (style, shape[0], shape[1], shape[2], "periodic" if periodic else "open",
                                          "" if source == "reader" else "_" + source)


def build_cases():
    cases = []
    for shape in SHAPES:
        for style in STYLES:
            if style == "flatcells" and 1 not in shape:
                continue  # the same image as "cells"
            for periodic in (False, True):
                cases.append(Case(len(cases), shape, style, periodic))
    # The same images with ghost cells on the input: flagged by vtkGhostCellsGenerator
    # ("ghosts"), or from the reader when a consumer asks for a ghost level ("asked": point
    # pieces then also share planes).
    for base in list(cases):
        if base.shape in [(64, 64, 1), (200, 1, 1), (1, 2, 3), (2, 2, 2)] and base.style != "flatcells":
            source = "ghosts" if base.periodic else "asked"
            cases.append(Case(base.seed - 1000, base.shape, base.style, base.periodic, source=source, base=base))
    return cases


def make_case_image(case, values, start, origin, spacing):
    image = pt.make_image(values, case.association, origin=origin, spacing=spacing, start=start)
    if case.style == "flatcells":
        extent = list(image.GetExtent())
        for d in range(3):
            if case.shape[d] == 1:
                extent[2 * d + 1] = extent[2 * d]  # 1 cell along d -> a flat axis
        image.SetExtent(extent)
        check.check(image.GetNumberOfCells() == values.size, "%s: the flat image has %d cells, not %d"
                    % (case.label, image.GetNumberOfCells(), values.size))
    return image


GHOST_REQUEST = """
from vtkmodules.vtkCommonExecutionModel import vtkStreamingDemandDrivenPipeline
self.GetInputInformation(0, 0).Set(vtkStreamingDemandDrivenPipeline.UPDATE_NUMBER_OF_GHOST_LEVELS(), 1)
"""

stats = {"cases": 0, "empty pieces": 0, "shared planes": 0, "ghosts seen": 0}


def prepare(case):
    """Writes the case's image and starts the tool on the same values (in the background)."""
    if case.base:
        return  # the base case's image and answer
    rng = np.random.default_rng(case.seed)
    nx, ny, nz = case.shape
    values = rng.random((nz, ny, nx))
    if case.ties:
        values = np.round(values * 5.0) / 5.0
    case.rho = values.astype(case.dtype)
    start = tuple(int(s) for s in rng.integers(-3, 4, size=3))
    spacing = tuple(float(s) for s in rng.uniform(0.5, 2.0, size=3))
    origin = tuple(float(s) for s in rng.uniform(-5.0, 5.0, size=3))
    case.path = pt.write_vti(os.path.join(args.work_dir, case.label + ".vti"),
                             make_case_image(case, case.rho, start, origin, spacing))
    # The corner of PHEW cell 0, computed as the filter does (a point is the centre of its cell).
    shift = 0.5 if case.association == "POINTS" else 0.0
    corner = [origin[d] + start[d] * spacing[d] - shift * spacing[d] for d in range(3)]
    case.prefix = os.path.join(args.work_dir, case.label)
    case.cli = pt.start_cli(args.cli, case.rho, case.prefix, case.threshold, relevance=case.relevance,
                            saddle=case.saddle, periodic=case.periodic, spacing=spacing, origin=corner)


class Pipeline:
    """reader -> [GhostCellsGenerator] -> PHEWClumpFinder -> [a consumer asking for ghosts] ->
    .pvti writer, made once per kind of source and reused by the cases (making proxies costs
    more than running the filter on these images)."""

    def __init__(self, kind, path):
        self.reader = XMLImageDataReader(FileName=[path])
        self.source = GhostCellsGenerator(Input=self.reader, BuildIfRequired=0) if kind == "ghosts" else self.reader
        self.finder = PHEWClumpFinder(Input=self.source)
        self.errors = pt.ErrorCatcher(self.finder)
        self.consumer = None
        if kind == "asked":
            self.consumer = ProgrammableFilter(Input=self.finder, RequestUpdateExtentScript=GHOST_REQUEST,
                                               Script="self.GetOutput().ShallowCopy(self.GetInput())")
        self.writer = XMLPImageDataWriter(Input=self.consumer or OutputPort(self.finder, 0), DataMode="Binary")


pipelines = {}


def run_case(case):
    if case.base:
        case.rho, case.path, case.answer = case.base.rho, case.base.path, case.base.answer
    else:
        case.answer = pt.finish_cli(case.cli)
    values, path = case.rho, case.path
    cli_labels, cli_tables = case.answer
    if n_ranks == 1 and case.source == "reader":
        compare_numpy.compare(case, case.prefix, args.source_dir, check, case.label)
    cli_cubes = {key: array.reshape(values.shape) for key, array in cli_labels.items()}

    if case.source not in pipelines:
        pipelines[case.source] = Pipeline(case.source, path)
    pipe = pipelines[case.source]
    pipe.reader.FileName = [path]
    finder = pipe.finder
    finder.Density = [case.association, "density"]
    finder.DensityThreshold = case.threshold
    finder.RelevanceThreshold = case.relevance
    finder.SaddleMerging = 0 if case.saddle is None else 1
    finder.SaddleThreshold = case.saddle or 0.0
    finder.Periodic = 1 if case.periodic else 0
    pipe.errors.clear()
    finder.UpdatePipeline()
    if check.check(not pipe.errors.messages, "%s: the filter reported errors: %s" % (case.label, pipe.errors.text())):
        compare_outputs(case, pipe, values, cli_cubes, cli_tables)


def compare_outputs(case, pipe, values, cli_cubes, cli_tables):
    finder = pipe.finder
    whole = pt.whole_extent_of_vti(case.path)
    labelled = os.path.join(args.work_dir, case.label + "-labels.pvti")
    pipe.writer.FileName = labelled
    pipe.writer.UpdatePipeline()
    stats["cases"] += 1
    pieces = pt.read_pvti_pieces(labelled)  # the writer leaves empty pieces out
    check.check(1 <= len(pieces) <= n_ranks, "%s: %d pieces written by %d ranks" % (case.label, len(pieces), n_ranks))
    covered = np.zeros(values.shape, dtype=np.int64)
    for rank, (extent, image) in enumerate(pieces):
        where = pt.piece_slices(extent, whole, case.association)
        if where is None:
            continue
        covered[where] += 1
        attributes = image.GetCellData() if case.association == "CELLS" else image.GetPointData()
        ghost = attributes.GetArray("vtkGhostType")
        if ghost is not None:
            stats["ghosts seen"] += int(np.count_nonzero(numpy_support.vtk_to_numpy(ghost)))
        for name in pt.LABEL_ARRAYS:
            array = attributes.GetArray(name)
            if not check.check(array is not None, "%s: piece %d has no %s" % (case.label, rank, name)):
                continue
            mine = numpy_support.vtk_to_numpy(array).astype(np.int64)
            theirs = cli_cubes[name][where].ravel()
            if check.check(mine.size == theirs.size, "%s: piece %d %s has %d values for extent %s"
                           % (case.label, rank, name, mine.size, list(extent))):
                differ = int(np.count_nonzero(mine != theirs))
                check.check(differ == 0, "%s: piece %d (extent %s): %s differs from the tool in %d of %d cells"
                            % (case.label, rank, list(extent), name, differ, mine.size))
    check.check(bool((covered > 0).all()), "%s: the pieces leave %d cells out"
                % (case.label, int((covered == 0).sum())))
    stats["empty pieces"] += int(len(pieces) < n_ranks)
    stats["shared planes"] += int(case.source == "reader" and (covered > 1).any())
    # Tables: rank 0's (this process's own output: Fetch drops the columns of tables without
    # rows when it gathers them), and no clump rows on the other ranks (the three tables are
    # filled the same way).
    for port, suffix in pt.TABLE_PORTS:
        header, rows = cli_tables[suffix]
        table = finder.GetClientSideObject().GetOutputDataObject(port)
        pt.compare_table(check, "%s/%s" % (case.label, suffix), table, header, rows)
    total = OutputPort(finder, 1).GetDataInformation().GetNumberOfRows()
    check.check(total == len(cli_tables["clumps"][1]), "%s: the ranks hold %d clump rows together, the tool "
                "wrote %d" % (case.label, total, len(cli_tables["clumps"][1])))


def outputs_empty(label, finder):
    check.check(finder.GetDataInformation().GetNumberOfCells() == 0, "%s: the Labels output has %d cells"
                % (label, finder.GetDataInformation().GetNumberOfCells()))
    for port, name in pt.TABLE_PORTS:
        rows = OutputPort(finder, port).GetDataInformation().GetNumberOfRows()
        check.check(rows == 0, "%s: the %s table has %d rows" % (label, name, rows))


def expect_refusal(label, source, association, words):
    """The filter fails with exactly one message (on rank 0) holding every one of `words`."""
    finder = PHEWClumpFinder(Input=source, Density=[association, "density"])
    finder.DensityThreshold = 0.1
    errors = pt.ErrorCatcher(finder)
    finder.UpdatePipeline()
    text = errors.text()
    print("%s -> %s" % (label, text.strip().replace("\n", " | ") or "(no error)"), flush=True)
    check.check(len(errors.messages) == 1, "%s: %d error messages, expected one" % (label, len(errors.messages)))
    for word in words:
        check.check(word.lower() in text.lower(), "%s: the message does not mention '%s': %s" % (label, word, text))
    outputs_empty(label, finder)
    Delete(finder)


cases = build_cases()
AHEAD = 16  # tools running in the background while the filter runs
for case in cases[:AHEAD]:
    prepare(case)
for number, case in enumerate(cases):
    if number + AHEAD < len(cases):
        prepare(cases[number + AHEAD])
    print("case %s (%s, ties %d, saddle %s)" % (case.label, np.dtype(case.dtype).name, case.ties, case.saddle),
          flush=True)
    run_case(case)
print("cases compared: %(cases)d; with empty pieces: %(empty pieces)d; with shared planes: %(shared planes)d; "
      "ghost cells seen: %(ghosts seen)d" % stats, flush=True)
if n_ranks > 1:
    check.check(stats["empty pieces"] > 0, "no case left a rank with an empty piece")
    check.check(stats["shared planes"] > 0, "no case had point pieces sharing a plane")
    check.check(stats["ghosts seen"] > 0, "no ghost cells reached the filter's output")

# Refused serially, refused the same way in parallel: a single cell (the tool says so too) ...
for style in STYLES:
    case = Case(0, (1, 1, 1), style, False)
    one = pt.write_vti(os.path.join(args.work_dir, "single-%s.vti" % style),
                       make_case_image(case, np.full((1, 1, 1), 2.0), (0, 0, 0), (0.0, 0.0, 0.0), (1.0, 1.0, 1.0)))
    try:
        pt.run_cli(args.cli, np.full((1, 1, 1), 2.0), os.path.join(args.work_dir, "single"), 0.1)
        check.check(False, "the tool accepted a single cell")
    except RuntimeError as error:
        check.check("single cell" in str(error), "the tool's message for a single cell: %s" % error)
    reader = XMLImageDataReader(FileName=[one])
    expect_refusal("single cell (%s)" % style, reader, case.association, ["single cell"])
    Delete(reader)

# ... and empty images, point and cell data, with an empty density array or none at all; once
# (serially: the parallel reader crashes on it, see below) from a file, where the reader gives a
# cell array -1 values long.
EMPTY_IMAGE = """
from vtkmodules.util import numpy_support
import numpy as np
output = self.GetOutput()
output.SetExtent(0, -1, 0, -1, 0, -1)
if {with_array}:
    array = numpy_support.numpy_to_vtk(np.zeros(0), deep=True)
    array.SetName("density")
    output.Get{kind}Data().AddArray(array)
"""
for association, kind in (("CELLS", "Cell"), ("POINTS", "Point")):
    words = ["image is empty", "(0 cells)" if association == "CELLS" else "(0 points)"]
    for with_array in (True, False):
        nothing = ProgrammableSource(OutputDataSetType="vtkImageData",
                                     Script=EMPTY_IMAGE.format(with_array=with_array, kind=kind))
        expect_refusal("empty image (%s, array %d)" % (association, with_array), nothing, association, words)
        Delete(nothing)
    if n_ranks == 1:  # vtkXMLImageDataReader aborts on a rank > 0 reading an empty extent
        image = vtkImageData()
        image.SetExtent(0, -1, 0, -1, 0, -1)
        array = numpy_support.numpy_to_vtk(np.zeros(0), deep=True)
        array.SetName("density")
        (image.GetCellData() if association == "CELLS" else image.GetPointData()).AddArray(array)
        reader = XMLImageDataReader(FileName=[pt.write_vti(os.path.join(args.work_dir, "empty-%s.vti" % association),
                                                           image)])
        expect_refusal("empty image file (%s)" % association, reader, association, words)
        Delete(reader)

check.finish(exit_on_success=False)
