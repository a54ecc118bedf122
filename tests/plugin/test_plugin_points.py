"""pvbatch test: the PHEW Clump Finder and Particle Density on particles (point sets), one process.

The particles of points_cases.py (periodic unit box, masses, velocities, ids) as a vtkPolyData:
  - the Density array equals an independent numpy/scipy reference (HOP's SPH density, M4
    kernel) within 1e-12 relative, with 64 and with 32 density neighbours, periodic and with
    the default box (the data bounds, not periodic);
  - the clump and halo catalogues agree with the labelled particles (counts, masses, peak
    particle, densities, centre of mass, radius, velocities; points_cases.check_catalogue);
  - when the command-line tool has its particle mode (phew --points), labels, densities and
    the three tables equal its outputs byte for byte (float64 and float32 positions);
  - the same particles as a vtkUnstructuredGrid, a multiblock (polydata, empty block,
    unstructured grid) and a partitioned dataset give the same labels, in leaf order, and
    outputs of the input's type; float32 positions and integer masses give what the same
    values as double give; the estimated density given back as an array (EstimateDensity
    off) gives the same labels and tables; an Id array relabels the peaks and nothing else;
    ghost points are left out (-1, NaN); one thread gives what all cores give;
  - Particle Density gives the finder's Density bit for bit, on every input kind;
  - the project's particle sample, when present: catalogue checks, every host halo of its
    truth file found, byte equality with phew --points;
  - the proxies, their properties and documentation, and the panel hints.
It also writes the one-process answers (labels, densities, tables) that the parallel and
client-server tests compare with, into --answers-dir.

    pvbatch test_plugin_points.py --plugin PHEW.so [--cli phew] --source-dir SRC --work-dir DIR --answers-dir ANS
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from phew_plugin_testing import take_option  # noqa: E402

answers_dir = take_option("--answers-dir")

import numpy as np  # noqa: E402
from paraview.simple import *  # noqa: F401,F403,E402
from vtkmodules.util import numpy_support  # noqa: E402
from vtkmodules.vtkCommonCore import vtkPoints  # noqa: E402
from vtkmodules.vtkCommonDataModel import (vtkDataSetAttributes, vtkMultiBlockDataSet,  # noqa: E402
                                           vtkPartitionedDataSet, vtkPolyData, vtkUnstructuredGrid)

import phew_plugin_testing as pt  # noqa: E402
import points_cases as pc  # noqa: E402

args = pt.parse_args()
LoadPlugin(args.plugin, remote=False, ns=globals())
check = pt.Checker("plugin_points")
os.makedirs(answers_dir, exist_ok=True)

pos, mass, vel, ids = pc.make_particles()
N = len(pos)
pc.save_particles(os.path.join(answers_dir, "particles.npz"), pos, mass, vel, ids)
print("%d particles" % N, flush=True)


def point_set(p, arrays, cls=vtkPolyData):
    out = cls()
    points = vtkPoints()
    points.SetData(numpy_support.numpy_to_vtk(np.ascontiguousarray(p), deep=1))
    out.SetPoints(points)
    for name, values in arrays.items():
        array = numpy_support.numpy_to_vtk(np.ascontiguousarray(values), deep=1)
        array.SetName(name)
        out.GetPointData().AddArray(array)
    return out


def all_arrays(which=slice(None)):
    return {"mass": mass[which], "vel": vel[which], "ids": ids[which]}


def producer(data):
    source = TrivialProducer()
    source.GetClientSideObject().SetOutput(data)
    return source


PERIODIC_BOX = pc.PERIODIC_BOX
BASE = pc.BASE


def leaves(data):
    if data.IsA("vtkCompositeDataSet"):
        it = data.NewIterator()
        it.InitTraversal()
        out = []
        while not it.IsDoneWithTraversal():
            out.append(it.GetCurrentDataObject())
            it.GoToNextItem()
        return out
    return [data]


def point_arrays(data, names=pt.LABEL_ARRAYS + ("Density",)):
    """name -> values over the leaves, concatenated (None when a leaf lacks the array)."""
    out = {}
    for name in names:
        parts = [leaf.GetPointData().GetArray(name) for leaf in leaves(data)]
        out[name] = None if None in parts else \
            np.concatenate([numpy_support.vtk_to_numpy(p) for p in parts]).copy()
    return out


def run(label, data, threshold=pc.THRESHOLD, **properties):
    """The finder on `data`: (labels and Density over the leaves, tables, output object)."""
    finder = PHEWClumpFinder(Input=producer(data))
    finder.SaddleMerging = 0  # the tool's default (the filter merges by default)
    for key, value in properties.items():
        setattr(finder, key, value)
    finder.DensityThreshold = threshold  # after the array: the domain resets it
    errors = pt.ErrorCatcher(finder)
    finder.UpdatePipeline()
    check.check(not errors.messages, "%s: the filter reported errors: %s" % (label, errors.text()))
    algorithm = finder.GetClientSideObject()
    output = algorithm.GetOutputDataObject(0)
    result = point_arrays(output), {suffix: algorithm.GetOutputDataObject(port) for port, suffix in pt.TABLE_PORTS}, \
        output
    # keep the outputs: deleting the proxy frees them
    copies = []
    for obj in [output] + list(result[1].values()):
        copy = obj.NewInstance()
        copy.DeepCopy(obj)
        copies.append(copy)
    Delete(finder)
    return result[0], dict(zip(result[1].keys(), copies[1:])), copies[0]


def tables_csv(tables, tag):
    """The tables as the tool would write them (pt.write_table_csv): {suffix: text}."""
    out = {}
    for _, suffix in pt.TABLE_PORTS:
        path = os.path.join(args.work_dir, "%s-%s.csv" % (tag, suffix))
        pt.write_table_csv(tables[suffix], path)
        with open(path) as f:
            out[suffix] = f.read()
    return out


def same(label, got, want, what="labels and densities"):
    """Bitwise equality of two point_arrays results."""
    for name in pt.LABEL_ARRAYS + ("Density",):
        a, b = got.get(name), want.get(name)
        if not check.check(a is not None and b is not None, "%s: %s missing" % (label, name)):
            continue
        check.check(a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes(),
                    "%s: %s differs (%s)" % (label, name, what))


def same_tables(label, got, want):
    for suffix in want:
        check.check(got[suffix] == want[suffix], "%s: the %s table differs" % (label, suffix))


def close_to_reference(label, density, reference, tolerance=1e-12):
    error = np.max(np.abs(density - reference) / reference)
    check.check(error <= tolerance, "%s: the density differs from the numpy reference by %.3g (relative)"
                % (label, error))
    return error


# ---------------------------------------------------------------------------------------------
# 1. The base case: polydata, float64, masses, velocities, periodic box, saddle merging.
base_data = point_set(pos, all_arrays())
base, base_tables, base_output = run("base", base_data, **BASE)
check.check(base_output.GetClassName() == "vtkPolyData", "base: output is a %s" % base_output.GetClassName())
for name in pt.LABEL_ARRAYS:
    array = base_output.GetPointData().GetArray(name)
    check.check(array is not None and array.GetClassName() == "vtkIdTypeArray", "base: %s is not a vtkIdTypeArray" % name)
density_array = base_output.GetPointData().GetArray("Density")
check.check(density_array is not None and density_array.GetClassName() == "vtkDoubleArray",
            "base: Density is not a vtkDoubleArray")
check.check(sorted(base_output.GetPointData().GetArrayName(i) for i in range(base_output.GetPointData().GetNumberOfArrays()))
            == sorted(["mass", "vel", "ids", "Density", "BoundClumpId", "SpecificEnergy"] + list(pt.LABEL_ARRAYS)),
            "base: the point arrays are the input's, the labels, Density, BoundClumpId and SpecificEnergy (a Velocity array is "
            "selected: the halo properties run)")
reference = pc.reference_density(pos, mass)
error = close_to_reference("base", base["Density"], reference)
print("base: density within %.2g of the reference" % error, flush=True)
n_clumps = pc.check_catalogue(check, "base clumps", base_tables["clumps"], base, base["Density"], pos, mass, vel, None)
n_haloes = pc.check_catalogue(check, "base haloes", base_tables["haloes"], base, base["Density"], pos, mass, vel, None,
                              id_column="HaloId")
n_nodes = base_tables["dendrogram"].GetNumberOfRows()
print("base: %d clumps, %d haloes, %d dendrogram nodes" % (n_clumps, n_haloes, n_nodes), flush=True)
# Six blobs: six clumps; two pairs share saddles above SADDLE: four haloes.
check.check((n_clumps, n_haloes) == (6, 4), "base: %d clumps and %d haloes, expected 6 and 4" % (n_clumps, n_haloes))
columns = pt.table_columns(base_tables["clumps"])
for name in ("NumberOfParticles", "Radius", "MeanVelocityX", "VelocityDispersion"):
    check.check(name in columns, "base: the clump table has no %s column" % name)
check.check("NumberOfCells" not in columns, "base: the clump table has NumberOfCells")
base_csv = tables_csv(base_tables, "base")

# The one-process answers for the parallel and client-server tests.
np.savez(os.path.join(answers_dir, pc.ANSWERS), **{"base_" + k: v for k, v in base.items()})
for suffix, text in base_csv.items():
    with open(os.path.join(answers_dir, "base-%s.csv" % suffix), "w") as f:
        f.write(text)

# 2. The command-line tool's particle mode, byte for byte.
cli = args.cli and pc.cli_has_points(args.cli)
if cli:
    tool_labels, tool_tables = pc.run_cli_points(args.cli, os.path.join(args.work_dir, "cli-base"), pos, pc.THRESHOLD,
                                                 mass=mass, vel=vel, saddle=pc.SADDLE)
    for name in pt.LABEL_ARRAYS + ("Density",):
        check.check(tool_labels[name].tobytes() == base[name].tobytes(), "tool: %s differs from phew --points" % name)
    for port, suffix in pt.TABLE_PORTS:
        pt.compare_table(check, "tool/" + suffix, base_tables[suffix], *tool_tables[suffix])
else:
    print("NOTE: the command-line tool has no particle mode (phew --points): no byte comparison with it",
          flush=True)

# 3. An Id array: the same clumps and haloes; PeakPatchId in the given ids.
with_ids, ids_tables, _ = run("ids", base_data, Id=["POINTS", "ids"], **BASE)
for name in ("ClumpId", "HaloId", "Density"):
    check.check(np.array_equal(with_ids[name], base[name]), "ids: %s differs from the run without ids" % name)
patched = base["PeakPatchId"] >= 0
check.check(np.array_equal(with_ids["PeakPatchId"][patched], ids[base["PeakPatchId"][patched]]) and
            bool(np.all(with_ids["PeakPatchId"][~patched] == -1)), "ids: PeakPatchId is not the peak's given id")
pc.check_catalogue(check, "ids clumps", ids_tables["clumps"], with_ids, with_ids["Density"], pos, mass, vel, ids)
np.savez(os.path.join(answers_dir, "points-answers-ids.npz"), **with_ids)
for suffix, text in tables_csv(ids_tables, "ids").items():
    with open(os.path.join(answers_dir, "ids-%s.csv" % suffix), "w") as f:
        f.write(text)
if cli:
    tool_labels, tool_tables = pc.run_cli_points(args.cli, os.path.join(args.work_dir, "cli-ids"), pos, pc.THRESHOLD,
                                                 mass=mass, vel=vel, ids=ids, saddle=pc.SADDLE)
    for name in pt.LABEL_ARRAYS:
        check.check(tool_labels[name].tobytes() == with_ids[name].tobytes(), "tool ids: %s differs" % name)
    pt.compare_table(check, "tool ids/clumps", ids_tables["clumps"], *tool_tables["clumps"])

# 4. Other input kinds: the same labels in leaf order, outputs of the input's type.
got, tables, output = run("unstructured", point_set(pos, all_arrays(), vtkUnstructuredGrid), **BASE)
check.check(output.GetClassName() == "vtkUnstructuredGrid", "unstructured: output is a %s" % output.GetClassName())
same("unstructured", got, base)
same_tables("unstructured", tables_csv(tables, "unstructured"), base_csv)

cut = 1000
blocks = vtkMultiBlockDataSet()
blocks.SetNumberOfBlocks(3)
blocks.SetBlock(0, point_set(pos[:cut], all_arrays(slice(0, cut))))
blocks.SetBlock(2, point_set(pos[cut:], all_arrays(slice(cut, N)), vtkUnstructuredGrid))
got, tables, output = run("multiblock", blocks, **BASE)
kinds = [output.GetBlock(k).GetClassName() if output.GetBlock(k) else None for k in range(output.GetNumberOfBlocks())]
check.check(output.GetClassName() == "vtkMultiBlockDataSet" and kinds == ["vtkPolyData", None, "vtkUnstructuredGrid"],
            "multiblock: output %s with blocks %s" % (output.GetClassName(), kinds))
check.check(output.GetBlock(0).GetNumberOfPoints() == cut and
            output.GetBlock(0).GetPointData().GetArray("ClumpId").GetNumberOfTuples() == cut,
            "multiblock: block 0 does not carry its slice of the labels")
same("multiblock", got, base)
same_tables("multiblock", tables_csv(tables, "multiblock"), base_csv)

partitions = vtkPartitionedDataSet()
for k, (a, b) in enumerate(((0, 700), (700, 701), (701, N))):
    partitions.SetPartition(k, point_set(pos[a:b], all_arrays(slice(a, b))))
got, tables, output = run("partitioned", partitions, **BASE)
check.check(output.GetClassName() == "vtkPartitionedDataSet" and output.GetNumberOfPartitions() == 3,
            "partitioned: output %s" % output.GetClassName())
same("partitioned", got, base)
same_tables("partitioned", tables_csv(tables, "partitioned"), base_csv)

# 5. Types: float32 positions, masses and velocities give what the same values as double give
#    (and what the tool gives with --type float32); integer masses likewise.
pos32, mass32, vel32 = pos.astype(np.float32), mass.astype(np.float32), vel.astype(np.float32)
pos32[pos32 >= 1.0] = 0.0  # rounding up to the box's upper face would leave the periodic box
got32, tables32, _ = run("float32", point_set(pos32, {"mass": mass32, "vel": vel32}), **BASE)
got64, tables64, _ = run("float32 as double", point_set(pos32.astype(np.float64), {
    "mass": mass32.astype(np.float64), "vel": vel32.astype(np.float64)}), **BASE)
same("float32", got32, got64)
same_tables("float32", tables_csv(tables32, "float32"), tables_csv(tables64, "float32-as-double"))
if cli:
    tool_labels, tool_tables = pc.run_cli_points(args.cli, os.path.join(args.work_dir, "cli-32"), pos32, pc.THRESHOLD,
                                                 dtype=np.float32, mass=mass32, vel=vel32, saddle=pc.SADDLE)
    for name in pt.LABEL_ARRAYS + ("Density",):
        check.check(tool_labels[name].tobytes() == got32[name].tobytes(), "tool float32: %s differs" % name)
    pt.compare_table(check, "tool float32/clumps", tables32["clumps"], *tool_tables["clumps"])
integer_mass = (1 + np.arange(N) % 3)
got_int, tables_int, _ = run("int32 masses", point_set(pos, {"m": integer_mass.astype(np.int32)}),
                             **dict(PERIODIC_BOX, Mass=["POINTS", "m"]))
got_dbl, tables_dbl, _ = run("masses as double", point_set(pos, {"m": integer_mass.astype(np.float64)}),
                             **dict(PERIODIC_BOX, Mass=["POINTS", "m"]))
same("int32 masses", got_int, got_dbl)
same_tables("int32 masses", tables_csv(tables_int, "int-mass"), tables_csv(tables_dbl, "double-mass"))
close_to_reference("int32 masses", got_int["Density"], pc.reference_density(pos, integer_mass))

# 6. The estimated density given back as an array: the same labels and tables, except that a
#    given density is taken in mass per volume (an estimated one is in units of the mean
#    density, total mass over box volume): volumes are larger by that mean density (mean
#    densities, mass over volume in the density's units, are the same).
given = point_set(pos, dict(all_arrays(), rho=base["Density"]))
got, tables, _ = run("given density", given, EstimateDensity=0, Density=["POINTS", "rho"], **BASE)
same("given density", got, base)
mean_density = mass.sum() / 1.0
for suffix in ("clumps", "haloes"):
    mine, theirs = pt.table_as_lists(tables[suffix]), pt.table_as_lists(base_tables[suffix])
    check.check(sorted(mine) == sorted(theirs), "given density: the %s columns differ" % suffix)
    for name in theirs:
        if name == "Volume":
            ratio = np.array(mine[name]) / np.array(theirs[name])
            check.check(bool(np.all(np.abs(ratio / mean_density - 1) <= 1e-12)),
                        "given density: %s volumes are not the estimated run's times the mean density" % suffix)
        elif name == "MeanDensity":  # mass over volume, in the density's units: the same
            ratio = np.array(theirs[name]) / np.array(mine[name])
            check.check(bool(np.all(np.abs(ratio - 1) <= 1e-12)), "given density: %s mean densities differ" % suffix)
        else:  # (NaN where undefined: the overdensity columns without a cosmology)
            check.check(np.array_equal(np.array(mine[name], dtype=float), np.array(theirs[name], dtype=float),
                                       equal_nan=True), "given density: %s column %s differs" % (suffix, name))

# 7. Ghost points (copies of other ranks' points, flagged) are left out: -1 and NaN.
extra = np.arange(0, N, 7)
ghosted = point_set(np.concatenate([pos, pos[extra]]), {"mass": np.concatenate([mass, mass[extra]]),
                                                        "vel": np.concatenate([vel, vel[extra]])})
flags = np.zeros(N + len(extra), dtype=np.uint8)
flags[N:] = vtkDataSetAttributes.DUPLICATEPOINT
ghost_array = numpy_support.numpy_to_vtk(flags, deep=1)
ghost_array.SetName(vtkDataSetAttributes.GhostArrayName())
ghosted.GetPointData().AddArray(ghost_array)
got, tables, _ = run("ghost points", ghosted, **BASE)
same("ghost points", {k: v[:N] for k, v in got.items()}, base)
check.check(bool(np.all(got["ClumpId"][N:] == -1) and np.all(np.isnan(got["Density"][N:]))),
            "ghost points: the ghost points have labels or densities")
same_tables("ghost points", tables_csv(tables, "ghosts"), base_csv)

# 8. One thread gives what all cores give; 32 density neighbours match the reference.
got, tables, _ = run("one thread", base_data, NumberOfThreads=1, **BASE)
same("one thread", got, base)
got, _, _ = run("32 density neighbours", base_data, NumberOfDensityNeighbours=32, NumberOfNeighbours=8, **BASE)
close_to_reference("32 density neighbours", got["Density"], pc.reference_density(pos, mass, n_dens=32))
check.check(not np.array_equal(got["PeakPatchId"], base["PeakPatchId"]), "8 neighbours: the same patches as with 16")

# 9. The default box: the bounds of the points, not periodic; no masses (1 each).
plain, plain_tables, _ = run("default box", point_set(pos, {}))
lo, hi = pos.min(axis=0), pos.max(axis=0)
close_to_reference("default box", plain["Density"],
                   pc.reference_density(pos, None, box=hi - lo, periodic=False, volume=float(np.prod(hi - lo))))
pc.check_catalogue(check, "default box clumps", plain_tables["clumps"], plain, plain["Density"], pos, None, None, None,
                   box=hi - lo, periodic=False)
check.check("MeanVelocityX" not in pt.table_columns(plain_tables["clumps"]), "default box: velocity columns")

# 10. Particle Density: the finder's density, bit for bit, on every input kind.
for label, data, properties, want in (
        ("polydata", base_data, pc.DENSITY_BASE, base["Density"]),
        ("multiblock", blocks, pc.DENSITY_BASE, base["Density"]),
        ("default box", point_set(pos, {}), {}, plain["Density"])):
    estimator = ParticleDensity(Input=producer(data))
    for key, value in properties.items():
        setattr(estimator, key, value)
    errors = pt.ErrorCatcher(estimator)
    estimator.UpdatePipeline()
    check.check(not errors.messages, "density %s: errors %s" % (label, errors.text()))
    output = estimator.GetClientSideObject().GetOutputDataObject(0)
    check.check(output.GetClassName() == data.GetClassName(), "density %s: output is a %s" % (label, output.GetClassName()))
    values = point_arrays(output, ("Density", "ClumpId"))
    check.check(values["Density"] is not None and values["Density"].tobytes() == want.tobytes(),
                "density %s: differs from the clump finder's Density" % label)
    check.check(values["ClumpId"] is None, "density %s: has labels" % label)
    Delete(estimator)

# 11. The project's particle sample (datasets/particles_sample-*.raw, 20000 float32 particles
#     with velocities in the periodic unit box, and its truth file), when present: the
#     catalogue against the labelled particles, every host halo of the truth file found (a
#     clump peaking within its r200), and byte equality with phew --points.
sample = os.path.join(args.source_dir, "datasets", "particles_sample-pos.raw")
if os.path.exists(sample):
    import json  # noqa: E402
    spos = np.fromfile(sample, dtype="<f4").reshape(-1, 3)
    svel = np.fromfile(sample.replace("-pos.raw", "-vel.raw"), dtype="<f4").reshape(-1, 3)
    with open(sample.replace("-pos.raw", "-truth.json")) as f:
        truth = json.load(f)
    got, tables, _ = run("sample", point_set(spos, {"vel": svel}), threshold=80.0,
                         **dict(PERIODIC_BOX, Velocity=["POINTS", "vel"]))
    n = pc.check_catalogue(check, "sample clumps", tables["clumps"], got, got["Density"], spos.astype(np.float64),
                           None, svel.astype(np.float64), None, threshold=80.0)
    rows = pt.table_as_lists(tables["clumps"])
    peaks = np.array([rows["PeakX"], rows["PeakY"], rows["PeakZ"]]).T
    for host in truth["hosts"]:
        d = pc.nearest_image(peaks - np.asarray(host["centre"]), np.ones(3), True)
        check.check(len(peaks) > 0 and np.sqrt((d * d).sum(axis=1)).min() < host["r200"],
                    "sample: no clump peaks within r200 of host %d" % host["id"])
    print("sample: %d particles, %d clumps, %d hosts in the truth file" % (len(spos), n, len(truth["hosts"])),
          flush=True)
    if cli:
        tool_labels, tool_tables = pc.run_cli_points(args.cli, os.path.join(args.work_dir, "cli-sample"), spos, 80.0,
                                                     dtype=np.float32, vel=svel)
        for name in pt.LABEL_ARRAYS + ("Density",):
            check.check(tool_labels[name].tobytes() == got[name].tobytes(), "tool sample: %s differs" % name)
        for port, suffix in pt.TABLE_PORTS:
            pt.compare_table(check, "tool sample/" + suffix, tables[suffix], *tool_tables[suffix])
else:
    print("NOTE: %s is not there (yet): the sample is not checked" % sample, flush=True)

# 12. The proxies: names, documentation, panel hints.
finder = PHEWClumpFinder(Input=producer(base_data))
particle_properties = ["EstimateDensity", "NumberOfDensityNeighbours", "Mass", "Velocity", "Id", "NumberOfNeighbours",
                       "BoxFromDataBounds", "BoxFromSnapshot", "BoxOrigin", "BoxSize", "PeriodicX", "PeriodicY", "PeriodicZ"]
defaults = dict(EstimateDensity=1, NumberOfDensityNeighbours=64, NumberOfNeighbours=16, BoxFromDataBounds=1, BoxFromSnapshot=1,
                PeriodicX=0, PeriodicY=0, PeriodicZ=0)
for name in particle_properties:
    prop = finder.GetProperty(name)
    if not check.check(prop is not None, "PHEWClumpFinder has no property %s" % name):
        continue
    doc = prop.SMProperty.GetDocumentation()
    check.check(doc is not None and bool(doc.GetShortHelp()) and len((doc.GetDescription() or "").strip()) > 40,
                "%s lacks documentation" % name)
    if name in defaults:
        check.check(prop.GetData() == defaults[name], "%s defaults to %s" % (name, prop.GetData()))
    hints = prop.SMProperty.GetHints()
    text = ""
    if hints is not None:
        decorator = hints.FindNestedElementByName("PropertyWidgetDecorator")
        text = str(decorator.GetAttribute("type")) if decorator else ""
    check.check(text in ("InputDataTypeDecorator", "CompositeDecorator"),
                "%s is not shown for point sets only (decorator %r)" % (name, text))
for name in ("Mass", "Velocity", "Id"):
    check.check(list(getattr(finder, name)) == ["POINTS", "None"], "%s defaults to %s" % (name, list(getattr(finder, name))))
check.check(list(finder.BoxSize) == [1.0, 1.0, 1.0] and list(finder.BoxOrigin) == [0.0, 0.0, 0.0], "box defaults")
threads = finder.GetProperty("NumberOfThreads")  # every input: grids, AMR and particles (issue 29)
check.check(threads.GetData() == 0 and threads.SMProperty.GetHints() is None,
            "NumberOfThreads defaults to %s, hints %s" % (threads.GetData(), threads.SMProperty.GetHints()))
periodic_hints = finder.GetProperty("Periodic").SMProperty.GetHints().FindNestedElementByName("PropertyWidgetDecorator")
check.check(periodic_hints.GetAttribute("exclude") == "1" and periodic_hints.GetAttribute("name") == "vtkPointSet",
            "Periodic is not hidden for point sets")
Delete(finder)
estimator = ParticleDensity(Input=producer(base_data))
check.check(sorted(estimator.ListProperties()) == sorted(
    ["Input", "NumberOfDensityNeighbours", "Mass", "BoxFromDataBounds", "BoxFromSnapshot", "BoxOrigin", "BoxSize", "PeriodicX", "PeriodicY",
     "PeriodicZ", "NumberOfThreads"]), "Particle Density properties: %s" % sorted(estimator.ListProperties()))
proxy_doc = estimator.SMProxy.GetDocumentation()
check.check(estimator.SMProxy.GetXMLLabel() == "Particle Density" and len(proxy_doc.GetDescription() or "") > 200,
            "Particle Density: label or documentation")
for name in estimator.ListProperties():
    doc = estimator.GetProperty(name).SMProperty.GetDocumentation()
    check.check(doc is not None and bool(doc.GetShortHelp()) and len((doc.GetDescription() or "").strip()) > 40,
                "Particle Density %s lacks documentation" % name)
Delete(estimator)

check.finish()
