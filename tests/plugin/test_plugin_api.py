"""pvbatch test: the Python API and the XML of the PHEW plugin.

Checks the names users type (PHEWClumpFinder(Input=..., Density=['CELLS', 'rho'],
DensityThreshold=..., RelevanceThreshold=..., SaddleMerging=..., SaddleThreshold=...,
MassThreshold=..., Periodic=...)), the documentation on the proxy and on every property, the
GUI hints, the output ports and table column types, progress events, point-data input, and
that integer density arrays give the same result as the same values stored as double.

    pvbatch test_plugin_api.py --plugin PHEW.so --source-dir SRC --work-dir DIR
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np
from paraview.simple import *  # noqa: F401,F403
from vtkmodules.util import numpy_support
from vtkmodules.vtkCommonCore import vtkCommand

import phew_plugin_testing as pt

args = pt.parse_args()
LoadPlugin(args.plugin, remote=False, ns=globals())
check = pt.Checker("plugin_api")

dims = (30, 26, 22)
rho = pt.blob_field(dims, pt.standard_blobs(dims), noise=0.01, seed=11)
scaled = np.round(rho / rho.max() * 250.0)  # integer-valued densities 0..250
extra = {
    "rho_uint8": scaled.astype(np.uint8),
    "rho_int16": scaled.astype(np.int16),
    "rho_int32": scaled.astype(np.int32),
    "rho_int64": scaled.astype(np.int64),
    "rho_float32": scaled.astype(np.float32),
}
vti = pt.write_vti(os.path.join(args.work_dir, "api.vti"),
                   pt.make_image(scaled.astype(np.float64), "CELLS", name="rho", extra=extra))

# ---------------------------------------------------------------------------------------------
# 1. Construction with the documented keyword names.
reader = XMLImageDataReader(FileName=[vti])
finder = PHEWClumpFinder(Input=reader, Density=["CELLS", "rho"], DensityThreshold=20.0, RelevanceThreshold=2.0,
                         SaddleMerging=0, SaddleThreshold=100.0, MassThreshold=0.0, Periodic=0)
expected = ["Density", "DensityThreshold", "Input", "MassThreshold", "Periodic", "RelevanceThreshold",
            "SaddleMerging", "SaddleThreshold", "Particles",  # Particles: AMR's optional second input
            "DendrogramLayout", "DendrogramMassCut"]  # the Dendrogram Plot's (advanced)
# The particle properties (test_plugin_points.py checks them), hidden for images and AMR.
particle_only = ["BoxFromDataBounds", "BoxFromSnapshot", "BoxOrigin", "BoxSize", "EstimateDensity", "Id", "Mass",
                 "NumberOfDensityNeighbours", "NumberOfNeighbours", "NumberOfThreads", "PeriodicX", "PeriodicY",
                 "PeriodicZ", "Velocity", "HaloProperties", "Unbind", "Potential", "Softening",
                 "GravitationalConstant"]
check.check(sorted(finder.ListProperties()) == sorted(expected + particle_only), "properties %s, expected %s"
            % (sorted(finder.ListProperties()), sorted(expected + particle_only)))
check.check(list(finder.Density) == ["CELLS", "rho"], "Density reads back as %s" % list(finder.Density))
errors = pt.ErrorCatcher(finder)
finder.UpdatePipeline()
check.check(not errors.messages, "the filter reported errors: %s" % errors.text())

# The VTK object behind the proxy (the plugin has no Python wrapping of its own, so the
# effect of each parameter is checked against the command-line tool in test_plugin_vs_cli.py).
vtk_filter = finder.GetClientSideObject()
check.check(vtk_filter.GetClassName() == "vtkPHEWClumpFinder", "class %s" % vtk_filter.GetClassName())
for name, value in (("RelevanceThreshold", 3.5), ("SaddleMerging", 1), ("SaddleThreshold", 42.0),
                    ("MassThreshold", 7.0), ("Periodic", 1), ("DensityThreshold", 12.5)):
    setattr(finder, name, value)
    back = {"Periodic": "On"}.get(name, value)  # (an enumeration: From Snapshot, Off, On)
    check.check(getattr(finder, name) == back, "%s reads back as %r" % (name, getattr(finder, name)))
finder.UpdatePipeline()
check.check(not errors.messages, "the filter reported errors: %s" % errors.text())
finder.RelevanceThreshold = 2.0
finder.SaddleMerging = 0
finder.MassThreshold = 0.0
finder.Periodic = 0
finder.DensityThreshold = 20.0

# A threshold of exactly 0 set after creation is kept (all positive cells are test cells).
finder.DensityThreshold = 0.0
finder.UpdatePipeline()
check.check(finder.DensityThreshold == 0.0 and not errors.messages, "DensityThreshold 0 did not run cleanly")
labelled_zero = servermanager.Fetch(finder, idx=0)
n_test = int(np.count_nonzero(scaled > 0))
n_labelled = int(np.count_nonzero(numpy_support.vtk_to_numpy(labelled_zero.GetCellData().GetArray("PeakPatchId")) >= 0))
check.check(n_labelled == n_test, "threshold 0: %d cells in peak patches, %d cells above 0" % (n_labelled, n_test))
finder.DensityThreshold = 20.0

# ---------------------------------------------------------------------------------------------
# 2. Documentation, hints, domains, ports.
proxy = finder.SMProxy
doc = proxy.GetDocumentation()
check.check(proxy.GetXMLLabel() == "PHEW Clump Finder", "label %s" % proxy.GetXMLLabel())
check.check(bool(doc.GetShortHelp()) and bool(doc.GetLongHelp()) and len(doc.GetDescription() or "") > 200,
            "the proxy's documentation is missing or short")
for name in expected:
    prop = finder.GetProperty(name).SMProperty
    pdoc = prop.GetDocumentation()
    ok = pdoc is not None and bool(pdoc.GetShortHelp()) and bool(pdoc.GetLongHelp()) and \
        len((pdoc.GetDescription() or "").strip()) > 40
    check.check(ok, "property %s lacks short_help, long_help or a description" % name)

hints = proxy.GetHints()
menu = hints.FindNestedElementByName("ShowInMenu") if hints else None
check.check(menu is not None and bool(menu.GetAttribute("category")), "no ShowInMenu category")
saddle_hints = finder.GetProperty("SaddleThreshold").SMProperty.GetHints()
decorator = saddle_hints.FindNestedElementByName("PropertyWidgetDecorator") if saddle_hints else None
check.check(decorator is not None and decorator.GetAttribute("type") == "GenericDecorator" and
            decorator.GetAttribute("mode") == "visibility" and decorator.GetAttribute("property") == "SaddleMerging"
            and decorator.GetAttribute("value") == "1",
            "SaddleThreshold is not shown only when SaddleMerging is on")

ports = [proxy.GetOutputPortName(i) for i in range(proxy.GetNumberOfOutputPorts())]
check.check(ports == ["Labels", "Clumps", "Dendrogram", "Haloes", "Clump Geometry", "Dendrogram Plot", "Markers",
                      "Particles"],
            "output ports %s" % ports)

# The thresholds are automatic by default (negative), not reset from the data range by a domain.
check.check(finder.GetProperty("DensityThreshold").SMProperty.GetDomain("range") is None,
            "DensityThreshold still has a range domain (it would reset the automatic default)")

# ---------------------------------------------------------------------------------------------
# 3. Outputs: arrays, tables, column types, consistency between the labels and the catalogue.
labelled = servermanager.Fetch(finder, idx=0)
arrays = pt.label_arrays(labelled, "CELLS")
for name in pt.LABEL_ARRAYS:
    check.check(arrays[name] is not None and arrays[name].GetClassName() == "vtkIdTypeArray",
                "%s is missing or not a vtkIdTypeArray" % name)
    check.check(labelled.GetPointData().GetArray(name) is None, "%s should not be point data here" % name)
clumps = servermanager.Fetch(finder, idx=1)
check.check(clumps.GetNumberOfRows() >= 3, "expected several clumps, got %d" % clumps.GetNumberOfRows())
for port, what in pt.TABLE_PORTS:
    table = servermanager.Fetch(finder, idx=port)
    for c in range(table.GetNumberOfColumns()):
        name, cls = table.GetColumnName(c), table.GetColumn(c).GetClassName()
        if name == "Level":
            want = "vtkIntArray"
        elif name.endswith("Id") or name.startswith("NumberOf"):
            want = "vtkIdTypeArray"
        else:
            want = "vtkDoubleArray"
        check.check(cls == want, "%s column %s is a %s, expected %s" % (what, name, cls, want))
clump_ids = numpy_support.vtk_to_numpy(arrays["ClumpId"])
catalogue = pt.table_as_lists(clumps)
for row, (clump_id, n_cells) in enumerate(zip(catalogue["ClumpId"], catalogue["NumberOfCells"])):
    check.check(clump_id == row, "clump row %d has ClumpId %d" % (row, clump_id))
    check.check(int(np.count_nonzero(clump_ids == clump_id)) == n_cells,
                "clump %d: %d labelled cells, catalogue says %d"
                % (clump_id, np.count_nonzero(clump_ids == clump_id), n_cells))
peaks = numpy_support.vtk_to_numpy(arrays["PeakPatchId"])
for clump_id, peak in zip(catalogue["ClumpId"], catalogue["PeakId"]):
    check.check(peaks[peak] == peak and clump_ids[peak] == clump_id,
                "clump %d: its peak cell %d is not labelled as its own peak" % (clump_id, peak))

# The input is untouched.
source = servermanager.Fetch(reader)
names = sorted(source.GetCellData().GetArrayName(i) for i in range(source.GetCellData().GetNumberOfArrays()))
check.check(names == sorted(["rho"] + list(extra)), "the input's arrays changed: %s" % names)

# ---------------------------------------------------------------------------------------------
# 4. Progress reaches 1 through intermediate steps.
progress = []
vtk_filter.AddObserver(vtkCommand.ProgressEvent, lambda obj, event: progress.append(obj.GetProgress()))
finder.DensityThreshold = 21.0
finder.UpdatePipeline()
check.check(len(progress) >= 5 and progress[-1] == 1.0 and any(0.0 < p < 1.0 for p in progress),
            "progress events: %s" % progress)
check.check(all(a <= b for a, b in zip(progress, progress[1:])), "progress goes backwards: %s" % progress)
finder.DensityThreshold = 20.0

# ---------------------------------------------------------------------------------------------
# 5. Integer and float32 densities give exactly the result of the same values as double.


def outputs(proxy):
    image = servermanager.Fetch(proxy, idx=0)
    labels = {n: numpy_support.vtk_to_numpy(image.GetCellData().GetArray(n)).copy() for n in pt.LABEL_ARRAYS}
    tables = {what: pt.table_as_lists(servermanager.Fetch(proxy, idx=port)) for port, what in pt.TABLE_PORTS}
    return labels, tables


reference = outputs(finder)
for name in extra:
    other = PHEWClumpFinder(Input=reader, Density=["CELLS", name], DensityThreshold=20.0, SaddleMerging=0)
    other_errors = pt.ErrorCatcher(other)
    other.UpdatePipeline()
    check.check(not other_errors.messages, "%s: errors: %s" % (name, other_errors.text()))
    labels, tables = outputs(other)
    for n in pt.LABEL_ARRAYS:
        check.check(np.array_equal(labels[n], reference[0][n]), "%s: %s differs from the double run" % (name, n))
    check.check(tables == reference[1], "%s: the tables differ from the double run" % name)
    Delete(other)

# ---------------------------------------------------------------------------------------------
# 6. Point data straight from a ParaView source (Wavelet, float point array): the automatic
#    thresholds, then the minimum of the array as threshold.
wavelet = Wavelet(WholeExtent=[-12, 12, -12, 12, -12, 12])
wavelet.UpdatePipeline()  # the domains need the input's data information
on_points = PHEWClumpFinder(Input=wavelet, RelevanceThreshold=1.0)
point_errors = pt.ErrorCatcher(on_points)
rt_range = wavelet.PointData["RTData"].GetRange()
check.check(list(on_points.Density) == ["POINTS", "RTData"], "default Density %s" % list(on_points.Density))
check.check(on_points.DensityThreshold == -1.0, "default DensityThreshold %r, expected -1 (automatic)"
            % on_points.DensityThreshold)
check.check(on_points.SaddleThreshold == -1.0 and on_points.SaddleMerging == 1,
            "default SaddleThreshold %r, SaddleMerging %r, expected -1 (automatic) and on"
            % (on_points.SaddleThreshold, on_points.SaddleMerging))
# With the automatic threshold, 10 x the mean RTData (each point a cell of the same volume),
# the Wavelet has nothing above it: a warning says why, the tables have no rows.
point_warnings = []
on_points.GetClientSideObject().AddObserver("WarningEvent", lambda caller, event: point_warnings.append(caller))
on_points.UpdatePipeline()
rt_values = numpy_support.vtk_to_numpy(servermanager.Fetch(wavelet).GetPointData().GetArray("RTData"))
fields = servermanager.Fetch(on_points, idx=1).GetFieldData()
used = fields.GetArray("PHEWDensityThreshold").GetValue(0)
mean = fields.GetArray("PHEWMeanDensity").GetValue(0)
check.check(abs(mean - np.mean(rt_values.astype(np.float64))) <= 1e-12 * mean and used == 10.0 * mean,
            "automatic threshold %r, mean %r; numpy mean %r" % (used, mean, np.mean(rt_values)))
check.check(abs(fields.GetArray("PHEWSaddleThreshold").GetValue(0) - 25.0 * mean) <= 1e-12 * used,
            "automatic saddle threshold %r, expected 2.5 x %r" % (fields.GetArray("PHEWSaddleThreshold").GetValue(0), used))
check.check(len(point_warnings) == 1 and servermanager.Fetch(on_points, idx=1).GetNumberOfRows() == 0,
            "automatic threshold on the Wavelet: %d warnings (expected 1: no clumps)" % len(point_warnings))
on_points.DensityThreshold = rt_range[0]
on_points.UpdatePipeline()
check.check(not point_errors.messages, "point data: errors: %s" % point_errors.text())
image = servermanager.Fetch(on_points, idx=0)
for name in pt.LABEL_ARRAYS:
    array = image.GetPointData().GetArray(name)
    check.check(array is not None and array.GetNumberOfTuples() == 25 ** 3,
                "point data: %s is missing or has the wrong size" % name)
    check.check(image.GetCellData().GetArray(name) is None, "point data: %s also appears as cell data" % name)
n_point_clumps = servermanager.Fetch(on_points, idx=1).GetNumberOfRows()
check.check(n_point_clumps >= 1, "point data: no clumps on the Wavelet")
print("Wavelet: %d clumps with relevance 1" % n_point_clumps, flush=True)

# A flat (2D) image: one layer of cells (point data on a 1-point-thick extent).
flat = pt.write_vti(os.path.join(args.work_dir, "flat.vti"),
                    pt.make_image(rho[:1].astype(np.float32), "POINTS", name="rho"))
flat_finder = PHEWClumpFinder(Input=XMLImageDataReader(FileName=[flat]), Density=["POINTS", "rho"],
                              DensityThreshold=0.2)
flat_errors = pt.ErrorCatcher(flat_finder)
flat_finder.UpdatePipeline()
check.check(not flat_errors.messages, "flat image: errors: %s" % flat_errors.text())
check.check(servermanager.Fetch(flat_finder, idx=1).GetNumberOfRows() >= 1, "flat image: no clumps")

check.finish()
