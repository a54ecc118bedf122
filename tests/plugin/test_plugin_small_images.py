"""pvbatch test under mpiexec (ctest runs it with 1, 3 and 4 ranks): the PHEW Clump Finder
accepts every small or flat image that the serial filter accepts, and gives the serial answer.

The images (small_images.py: flat on one or two axes, tiny, fewer cells or points than ranks,
point data, cell data one cell thick and on flat extents, periodic or not, ties, saddle
merging) and the command-line tool's answer on each (the serial answer, itself checked against
datasets/phew_numpy.py) come from the fixture small_images_answers.py (--answers-dir). Each image
is read in parallel (vtkXMLImageDataReader: every rank gets a piece; some shapes also with ghost
cells from vtkGhostCellsGenerator or from a consumer that asks the reader for a ghost level),
and for every case:
  - the filter reports no error;
  - labels: the Labels output written as a .pvti (one file per rank's piece, shared planes and
    ghost cells included) carries on every cell of every piece the tool's PeakPatchId, ClumpId
    and HaloId, and the pieces cover the image;
  - tables: rank 0's Clumps, Dendrogram and Haloes equal the tool's CSV files exactly, and the
    other ranks hold no clump rows.
On more than one rank the cases must have produced empty pieces, shared planes and ghost
cells, or the test would not test what it claims. Inputs that the serial filter refuses fail
the same way on every rank count, with one message and empty outputs: a single cell ("single
cell", as the tool says) and empty images ("the input image is empty (0 cells)").

    mpiexec -np N pvbatch test_plugin_small_images.py --plugin PHEW.so --cli phew \\
        --source-dir SRC --work-dir DIR --answers-dir FIXTURE_DIR --ranks N
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np
from paraview.simple import *  # noqa: F401,F403
from vtkmodules.util import numpy_support
from vtkmodules.vtkCommonDataModel import vtkImageData

import phew_plugin_testing as pt
import small_images as si


from phew_plugin_testing import take_option  # noqa: E402

ranks_expected = take_option("--ranks")
answers = take_option("--answers-dir")
args = pt.parse_args(need_cli=True)
LoadPlugin(args.plugin, remote=False, ns=globals())
check = pt.Checker("plugin_small_images")
n_ranks = pt.number_of_ranks()
print("ranks: %d" % n_ranks, flush=True)
if ranks_expected is not None:
    check.check(n_ranks == int(ranks_expected), "expected %s ranks, got %d" % (ranks_expected, n_ranks))
if not answers or not os.path.isdir(answers):
    print("no --answers-dir: run the fixture small_images_answers.py first", flush=True)
    sys.exit(1)

GHOST_REQUEST = """
from vtkmodules.vtkCommonExecutionModel import vtkStreamingDemandDrivenPipeline
self.GetInputInformation(0, 0).Set(vtkStreamingDemandDrivenPipeline.UPDATE_NUMBER_OF_GHOST_LEVELS(), 1)
"""


class Pipeline:
    """reader -> [GhostCellsGenerator] -> PHEWClumpFinder -> [a consumer asking for ghosts] ->
    .pvti writer, made once per kind of source and reused by the cases (making proxies costs
    more than running the filter on these images)."""

    def __init__(self, kind, path):
        self.reader = XMLImageDataReader(FileName=[path])
        self.source = GhostCellsGenerator(Input=self.reader, BuildIfRequired=0) if kind == "ghosts" else self.reader
        self.finder = PHEWClumpFinder(Input=self.source)
        self.finder.DensityThreshold = 0.3  # every case's (si.Case)
        self.finder.RelevanceThreshold = 1.5
        self.errors = pt.ErrorCatcher(self.finder)
        self.consumer = None
        if kind == "asked":
            self.consumer = ProgrammableFilter(Input=self.finder, RequestUpdateExtentScript=GHOST_REQUEST,
                                               Script="self.GetOutput().ShallowCopy(self.GetInput())")
        self.writer = XMLPImageDataWriter(Input=self.consumer or OutputPort(self.finder, 0), DataMode="Binary")


pipelines = {}
stats = {"cases": 0, "empty pieces": 0, "shared planes": 0, "ghosts seen": 0}


def run_case(case):
    path = case.path(answers)
    if case.source not in pipelines:
        pipelines[case.source] = Pipeline(case.source, path)
    pipe = pipelines[case.source]
    pipe.reader.FileName = [path]
    finder = pipe.finder
    check.check((finder.DensityThreshold, finder.RelevanceThreshold) == (case.threshold, case.relevance),
                "%s: the pipeline's thresholds are not the case's" % case.label)
    finder.Density = [case.association, "density"]
    finder.SaddleMerging = 0 if case.saddle is None else 1
    finder.SaddleThreshold = case.saddle or 0.0
    finder.Periodic = 1 if case.periodic else 0
    pipe.errors.clear()
    finder.UpdatePipeline()
    if check.check(not pipe.errors.messages, "%s: the filter reported errors: %s" % (case.label, pipe.errors.text())):
        compare_outputs(case, pipe)


def compare_outputs(case, pipe):
    values = case.values(answers)
    cli_labels, cli_tables = pt.read_cli_outputs(case.prefix(answers))
    cli_cubes = {key: array.reshape(values.shape) for key, array in cli_labels.items()}
    whole = pt.whole_extent_of_vti(case.path(answers))
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
        table = pipe.finder.GetClientSideObject().GetOutputDataObject(port)
        pt.compare_table(check, "%s/%s" % (case.label, suffix), table, header, rows)
    total = OutputPort(pipe.finder, 1).GetDataInformation().GetNumberOfRows()
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


for case in si.build_cases():
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
for style, extent in (("points", (0, 0) * 3), ("cells", (0, 1) * 3), ("flatcells", (0, 0) * 3)):
    association = "POINTS" if style == "points" else "CELLS"
    image = pt.make_image(np.full((1, 1, 1), 2.0), association)
    image.SetExtent(*extent)
    one = pt.write_vti(os.path.join(args.work_dir, "single-%s.vti" % style), image)
    reader = XMLImageDataReader(FileName=[one])
    expect_refusal("single cell (%s)" % style, reader, association, ["single cell"])
    Delete(reader)
try:
    pt.run_cli(args.cli, np.full((1, 1, 1), 2.0), os.path.join(args.work_dir, "single"), 0.1)
    check.check(False, "the tool accepted a single cell")
except RuntimeError as error:
    check.check("single cell" in str(error), "the tool's message for a single cell: %s" % error)

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
