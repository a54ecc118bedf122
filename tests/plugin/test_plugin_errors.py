"""pvbatch test: the PHEW plugin fails cleanly on bad input and bad parameters.

Each bad case must give a readable error message (caught from the filter's ErrorEvent),
leave every output empty, leave the input untouched, and not crash pvbatch; the filter must
work again once the problem is fixed. A threshold above the maximum is not an error: it
gives empty catalogues (with their columns) and labels that are all -1.

    pvbatch test_plugin_errors.py --plugin PHEW.so --source-dir SRC --work-dir DIR
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np
from paraview.simple import *  # noqa: F401,F403
from vtkmodules.util import numpy_support

import phew_plugin_testing as pt

args = pt.parse_args()
LoadPlugin(args.plugin, remote=False, ns=globals())
check = pt.Checker("plugin_errors")

dims = (24, 20, 16)
rho = pt.blob_field(dims, pt.standard_blobs(dims), noise=0.01, seed=3)
velocity = np.stack([rho, 2 * rho, 3 * rho], axis=-1)
with_nan = rho.copy()
with_nan[5, 6, 7] = np.nan
with_inf = rho.copy()
with_inf[1, 2, 3] = np.inf
negative = rho.copy()
negative[8, 9, 10] = -1.0
vti = pt.write_vti(os.path.join(args.work_dir, "bad.vti"),
                   pt.make_image(rho, "CELLS", extra={"velocity": velocity, "with_nan": with_nan,
                                                      "with_inf": with_inf, "negative": negative}))
original_names = ["density", "velocity", "with_nan", "with_inf", "negative"]

reader = XMLImageDataReader(FileName=[vti])
finder = PHEWClumpFinder(Input=reader, Density=["CELLS", "density"], DensityThreshold=0.3)
errors = pt.ErrorCatcher(finder)


def outputs_empty(label):
    labelled = servermanager.Fetch(finder, idx=0)
    check.check(labelled.GetNumberOfCells() == 0 and labelled.GetNumberOfPoints() == 0,
                "%s: the Labels output is not empty (%d cells)" % (label, labelled.GetNumberOfCells()))
    for port, name in pt.TABLE_PORTS:
        table = servermanager.Fetch(finder, idx=port)
        # (no rows; the columns of the last run may stay, so that a spreadsheet stays on them)
        check.check(table.GetNumberOfRows() == 0,
                    "%s: the %s table is not empty (%d columns, %d rows)"
                    % (label, name, table.GetNumberOfColumns(), table.GetNumberOfRows()))


def expect_error(label, words, **properties):
    """Sets the properties, runs the filter and checks it failed with a message containing
    every one of `words` (case-insensitive)."""
    errors.clear()
    for key, value in properties.items():
        setattr(finder, key, value)
    finder.UpdatePipeline()
    text = errors.text()
    print("%s -> %s" % (label, text.strip().replace("\n", " | ") or "(no error)"), flush=True)
    check.check(bool(errors.messages), "%s: no error message" % label)
    for word in words:
        check.check(word.lower() in text.lower(), "%s: the message does not mention '%s': %s" % (label, word, text))
    outputs_empty(label)


def expect_success(label, min_clumps=1, **properties):
    errors.clear()
    for key, value in properties.items():
        setattr(finder, key, value)
    finder.UpdatePipeline()
    check.check(not errors.messages, "%s: unexpected error: %s" % (label, errors.text()))
    clumps = servermanager.Fetch(finder, idx=1)
    check.check(clumps.GetNumberOfRows() >= min_clumps,
                "%s: %d clumps, expected at least %d" % (label, clumps.GetNumberOfRows(), min_clumps))
    labelled = servermanager.Fetch(finder, idx=0)
    check.check(labelled.GetNumberOfCells() == rho.size, "%s: the Labels output has %d cells, not %d"
                % (label, labelled.GetNumberOfCells(), rho.size))
    return labelled, clumps


def input_untouched(label):
    image = servermanager.Fetch(reader)
    names = [image.GetCellData().GetArrayName(i) for i in range(image.GetCellData().GetNumberOfArrays())]
    check.check(sorted(names) == sorted(original_names), "%s: the input's cell arrays changed: %s" % (label, names))
    values = numpy_support.vtk_to_numpy(image.GetCellData().GetArray("density"))
    check.check(np.array_equal(values, rho.ravel()), "%s: the input's density changed" % label)
    check.check(image.GetPointData().GetNumberOfArrays() == 0, "%s: point arrays appeared on the input" % label)


expect_success("baseline")

# Bad density arrays.
expect_error("missing array", ["no_such_array"], Density=["CELLS", "no_such_array"])
expect_error("vector array", ["velocity", "3 components"], Density=["CELLS", "velocity"])
expect_error("NaN", ["with_nan", "NaN"], Density=["CELLS", "with_nan"])
expect_error("infinity", ["with_inf", "infinite"], Density=["CELLS", "with_inf"])
expect_error("negative density", ["negative"], Density=["CELLS", "negative"])
expect_success("fixed density", Density=["CELLS", "density"])

# Bad parameters.
# A negative threshold is the automatic one: 10 x the mean density (equal cells: the mean).
expect_success("automatic threshold", min_clumps=0, DensityThreshold=-1.0)
run_fields = servermanager.Fetch(finder, idx=1).GetFieldData()
check.check(run_fields.GetArray("PHEWDensityThreshold").GetValue(0) == 10.0 * run_fields.GetArray("PHEWMeanDensity").GetValue(0)
            and abs(run_fields.GetArray("PHEWMeanDensity").GetValue(0) - np.mean(rho.astype(np.float64))) <= 1e-12 * np.mean(rho),
            "automatic threshold: %r, mean %r, numpy mean %r"
            % (run_fields.GetArray("PHEWDensityThreshold").GetValue(0),
               run_fields.GetArray("PHEWMeanDensity").GetValue(0), np.mean(rho)))
expect_error("relevance below 1", ["relevance", ">= 1"], DensityThreshold=0.3, RelevanceThreshold=0.5)
finder.RelevanceThreshold = 2.0
expect_error("NaN threshold", ["threshold"], DensityThreshold=float("nan"))
expect_success("fixed threshold", DensityThreshold=0.3)
# A negative relevance is the automatic one too: the core's 2 (3 on a cosmological snapshot's
# particles, test_plugin_readers.py).
expect_success("automatic relevance", RelevanceThreshold=-2.0)
record = servermanager.Fetch(finder, idx=1).GetFieldData().GetAbstractArray("PHEWParameters")
check.check(record is not None and "RelevanceThreshold = 2" in [record.GetValue(k) for k in range(record.GetNumberOfValues())],
            "automatic relevance: not 2 in the record")
expect_error("NaN relevance", ["relevance"], RelevanceThreshold=float("nan"))
expect_success("fixed relevance", RelevanceThreshold=2.0)
expect_error("infinite saddle threshold", ["saddle"], SaddleMerging=1, SaddleThreshold=float("inf"))
expect_success("fixed saddle threshold", SaddleThreshold=1.0)
finder.SaddleMerging = 0
expect_error("NaN mass threshold", ["mass"], MassThreshold=float("nan"))
expect_success("fixed mass threshold", MassThreshold=0.0)
input_untouched("after the errors")

# A threshold above the maximum is no error: empty catalogues, every label -1.
labelled, clumps = expect_success("threshold above the maximum", min_clumps=0, DensityThreshold=1e9)
check.check(clumps.GetNumberOfRows() == 0, "above max: %d clumps" % clumps.GetNumberOfRows())
check.check(clumps.GetNumberOfColumns() > 0, "above max: the clump table has no columns")
for port, name in pt.TABLE_PORTS:
    table = servermanager.Fetch(finder, idx=port)
    check.check(table.GetNumberOfRows() == 0 and table.GetNumberOfColumns() > 0,
                "above max: the %s table should have columns and no rows (%d, %d)"
                % (name, table.GetNumberOfColumns(), table.GetNumberOfRows()))
for name in pt.LABEL_ARRAYS:
    array = labelled.GetCellData().GetArray(name)
    if check.check(array is not None, "above max: no %s array" % name):
        values = numpy_support.vtk_to_numpy(array)
        check.check(bool(np.all(values == -1)), "above max: %s has labels other than -1" % name)
# A huge mass threshold likewise.
expect_success("mass threshold above every mass", min_clumps=0, DensityThreshold=0.3, MassThreshold=1e30)
check.check(servermanager.Fetch(finder, idx=1).GetNumberOfRows() == 0, "huge mass threshold: clumps left")
expect_success("back to normal", MassThreshold=0.0)
Delete(finder)

# A grid of a single cell has nothing to segment: an error, not a crash.
single = pt.write_vti(os.path.join(args.work_dir, "single.vti"),
                      pt.make_image(np.ones((1, 1, 1)), "CELLS"))
single_reader = XMLImageDataReader(FileName=[single])
finder = PHEWClumpFinder(Input=single_reader, Density=["CELLS", "density"], DensityThreshold=0.5)
errors = pt.ErrorCatcher(finder)
expect_error("single cell", ["single cell"])
Delete(finder)

# No density array selected at all (the input has no arrays).
empty = pt.write_vti(os.path.join(args.work_dir, "noarrays.vti"), pt.make_image(rho, "CELLS", name="density"))
bare = PassArrays(Input=XMLImageDataReader(FileName=[empty]), CellDataArrays=[], PointDataArrays=[])
finder = PHEWClumpFinder(Input=bare, DensityThreshold=0.5)
errors = pt.ErrorCatcher(finder)
expect_error("no arrays at all", ["density"])

input_untouched("at the end")
check.finish()
