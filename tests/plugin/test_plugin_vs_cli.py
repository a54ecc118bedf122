"""pvbatch test: the PHEW plugin gives exactly what the command-line tool gives.

For several fields and parameter sets (the project's sample dataset when it exists, and
synthetic fields with cell data, point data, float32 and float64, an extent that does not
start at 0, periodic boundaries, saddle merging and a mass threshold) the label arrays
PeakPatchId/ClumpId/HaloId and the three tables of the filter must equal the tool's raw
label files and CSV files: integers and doubles compared exactly.

    pvbatch test_plugin_vs_cli.py --plugin PHEW.so --cli phew --source-dir SRC --work-dir DIR
"""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np
from paraview.simple import *  # noqa: F401,F403
from vtkmodules.util import numpy_support

import phew_plugin_testing as pt

args = pt.parse_args(need_cli=True)
LoadPlugin(args.plugin, remote=False, ns=globals())
check = pt.Checker("plugin_vs_cli")


def read_vti_values(path, association, name):
    """The density of a .vti as a (nz, ny, nx) array (x fastest), through ParaView's reader."""
    image = servermanager.Fetch(XMLImageDataReader(FileName=[path]))
    attributes = image.GetCellData() if association == "CELLS" else image.GetPointData()
    values = numpy_support.vtk_to_numpy(attributes.GetArray(name))
    extent = image.GetExtent()
    dims = [extent[2 * d + 1] - extent[2 * d] + 1 for d in range(3)]
    if association == "CELLS":
        dims = [max(n - 1, 1) for n in dims]
    return values.reshape(dims[2], dims[1], dims[0]), image.GetOrigin(), image.GetSpacing(), extent


def compare_case(label, vti, association, name, threshold, relevance=2.0, saddle=None, mass=0.0,
                 periodic=False):
    """Runs the filter on `vti` and the tool on the same values; compares everything."""
    print("case %s: %s %s '%s' threshold %g relevance %g saddle %s mass %g periodic %d"
          % (label, os.path.basename(vti), association, name, threshold, relevance, saddle, mass, periodic),
          flush=True)
    values, origin, spacing, extent = read_vti_values(vti, association, name)
    if values.dtype not in (np.float32, np.float64):
        values = values.astype(np.float64)  # what the plugin does with other types
    # phew_grid.origin is the corner of cell (0,0,0); a point is the centre of its cell.
    corner = [origin[d] + extent[2 * d] * spacing[d] - (0.5 * spacing[d] if association == "POINTS" else 0.0)
              for d in range(3)]
    prefix = os.path.join(args.work_dir, label)
    cli_labels, cli_tables = pt.run_cli(args.cli, values, prefix, threshold, relevance=relevance, saddle=saddle,
                                        mass=mass, periodic=periodic, spacing=spacing, origin=corner)

    reader = XMLImageDataReader(FileName=[vti])
    finder = PHEWClumpFinder(Input=reader, Density=[association, name])
    # Set after creation: ParaView initialises the thresholds from the array range and does so
    # even over keyword arguments that equal the XML default.
    finder.DensityThreshold = threshold
    finder.RelevanceThreshold = relevance
    finder.SaddleMerging = 1 if saddle is not None else 0
    finder.SaddleThreshold = saddle if saddle is not None else 0.0
    finder.MassThreshold = mass
    finder.Periodic = 1 if periodic else 0
    errors = pt.ErrorCatcher(finder)
    finder.UpdatePipeline()
    check.check(not errors.messages, "%s: the filter reported errors: %s" % (label, errors.text()))

    labelled = servermanager.Fetch(finder, idx=0)
    arrays = pt.label_arrays(labelled, association)
    for array_name in pt.LABEL_ARRAYS:
        array = arrays[array_name]
        if not check.check(array is not None, "%s: no %s array in the %s data" % (label, array_name, association)):
            continue
        check.check(array.GetClassName() == "vtkIdTypeArray",
                    "%s: %s is a %s, not a vtkIdTypeArray" % (label, array_name, array.GetClassName()))
        mine = numpy_support.vtk_to_numpy(array).astype(np.int64)
        theirs = cli_labels[array_name]
        if check.check(mine.shape == theirs.shape, "%s: %s has %d values, the tool wrote %d"
                       % (label, array_name, mine.size, theirs.size)):
            differ = int(np.count_nonzero(mine != theirs))
            check.check(differ == 0, "%s: %s differs from the tool in %d cells" % (label, array_name, differ))
    n_clumps = len(cli_tables["clumps"][1])
    n_labelled = int(np.count_nonzero(cli_labels["ClumpId"] >= 0))
    print("  %d clumps, %d haloes, %d dendrogram nodes, %d labelled cells"
          % (n_clumps, len(cli_tables["haloes"][1]), len(cli_tables["dendrogram"][1]), n_labelled), flush=True)
    for port, suffix in pt.TABLE_PORTS:
        header, rows = cli_tables[suffix]
        pt.compare_table(check, "%s/%s" % (label, suffix), servermanager.Fetch(finder, idx=port), header, rows)
    Delete(finder)
    Delete(reader)
    return n_clumps, len(cli_tables["haloes"][1]), len(cli_tables["dendrogram"][1])


# 1. The project's sample dataset with the parameters datasets/README.md recommends, and the
#    counts it documents (14 designed clumps; 6 haloes when periodic, 7 when not).
sample = os.path.join(args.source_dir, "datasets", "sample.vti")
if os.path.exists(sample):
    counts = compare_case("sample", sample, "CELLS", "density", threshold=10.0, relevance=2.0, saddle=25.0,
                          periodic=True)
    check.check(counts == (14, 6, 22), "sample (periodic): %d clumps, %d haloes, %d nodes; expected 14, 6, 22"
                % counts)
    counts = compare_case("sample_open", sample, "CELLS", "density", threshold=10.0, relevance=2.0, saddle=25.0)
    check.check(counts == (14, 7, 21), "sample (not periodic): %d clumps, %d haloes, %d nodes; expected 14, 7, 21"
                % counts)
    counts = compare_case("sample_nomerge", sample, "CELLS", "density", threshold=10.0, periodic=True)
    check.check(counts[:2] == (14, 14), "sample (no saddle merging): %d clumps, %d haloes; expected 14, 14"
                % counts[:2])
    compare_case("sample_mass", sample, "CELLS", "density", threshold=10.0, saddle=25.0, mass=0.01, periodic=True)
    # The data engineer's decoder (datasets/vti_to_raw.py) agrees with ParaView's reader.
    decoder = os.path.join(args.source_dir, "datasets", "vti_to_raw.py")
    if os.path.exists(decoder) and os.path.exists("/usr/bin/python3"):
        raw = os.path.join(args.work_dir, "sample-decoded.raw")
        subprocess.run(["/usr/bin/python3", decoder, sample, raw], check=True, stdout=subprocess.DEVNULL,
                       timeout=120)
        values, _, _, _ = read_vti_values(sample, "CELLS", "density")
        decoded = np.fromfile(raw, dtype=values.dtype.newbyteorder("<"))
        check.check(np.array_equal(decoded, values.ravel()), "vti_to_raw.py and ParaView's reader disagree")
else:
    print("note: %s does not exist; testing synthetic fields only" % sample, flush=True)

# 2. Synthetic fields.
dims = (40, 36, 32)
rho = pt.blob_field(dims, pt.standard_blobs(dims), noise=0.02, seed=7)
rho_periodic = pt.blob_field(dims, pt.standard_blobs(dims), noise=0.02, seed=7, periodic=True)

cells64 = pt.write_vti(os.path.join(args.work_dir, "cells64.vti"),
                       pt.make_image(rho, "CELLS", origin=(-1.0, 2.0, 0.5), spacing=(0.5, 0.25, 2.0)))
cells32 = pt.write_vti(os.path.join(args.work_dir, "cells32.vti"),
                       pt.make_image(rho.astype(np.float32), "CELLS"))
points32 = pt.write_vti(os.path.join(args.work_dir, "points32.vti"),
                        pt.make_image(rho.astype(np.float32), "POINTS", origin=(3.0, -2.0, 1.0),
                                      spacing=(1.0, 1.5, 0.75)))
# An extent that starts away from 0: ids count from the start of the whole extent.
offset64 = pt.write_vti(os.path.join(args.work_dir, "offset64.vti"),
                        pt.make_image(rho, "CELLS", origin=(0.0, 0.0, 0.0), start=(5, -3, 10)))
periodic64 = pt.write_vti(os.path.join(args.work_dir, "periodic64.vti"), pt.make_image(rho_periodic, "CELLS"))

n = compare_case("cells64", cells64, "CELLS", "density", threshold=0.3)[0]
check.check(n >= 4, "cells64: expected at least 4 clumps, got %d" % n)
compare_case("cells32", cells32, "CELLS", "density", threshold=0.3)
compare_case("points32", points32, "POINTS", "density", threshold=0.3)
compare_case("offset64", offset64, "CELLS", "density", threshold=0.3)
compare_case("saddle", cells64, "CELLS", "density", threshold=0.2, relevance=1.5, saddle=1.0)
n_all = compare_case("all", cells64, "CELLS", "density", threshold=0.2, relevance=1.2)[0]
n_heavy = compare_case("mass", cells64, "CELLS", "density", threshold=0.2, relevance=1.2, mass=100.0)[0]
check.check(0 < n_heavy < n_all, "mass: the mass threshold should drop some clumps (%d of %d left)" % (n_heavy, n_all))
compare_case("periodic", periodic64, "CELLS", "density", threshold=0.3, saddle=0.8, periodic=True)
compare_case("nothing", cells64, "CELLS", "density", threshold=1e6)


def compare_physics(label, make_filter, cli_args, prefix_kind):
    """The halo properties (issue 28) on SWIFT's own snapshot read in astronomers' units: the
    filter's Bound* array and physics columns equal the tool's bound labels and physics table."""
    swift = os.path.join(args.source_dir, "datasets", "swift_dm16", "snap_0003.hdf5")
    prefix = os.path.join(args.work_dir, "physics_" + label)
    subprocess.run([args.cli, "--snapshot", swift, "--units", "astro", "--output", prefix] + cli_args, check=True)
    reader = GadgetHDF5SnapshotReader(FileName=[swift], Units=1)
    finder = make_filter(reader)
    finder.UpdatePipeline()
    table = servermanager.Fetch(finder, idx=1)
    points = servermanager.Fetch(finder)
    bound_name, table_name = {"group": ("BoundGroupId", "-groups.csv"),
                              "clump": ("BoundClumpId", "-clumps.csv")}[prefix_kind]
    bound = points.GetPointData().GetArray(bound_name)
    tool_bound = np.fromfile(prefix + ("-group-bound.raw" if prefix_kind == "group" else "-bound.raw"), dtype="<i8")
    check.check(bound is not None and np.array_equal(numpy_support.vtk_to_numpy(bound), tool_bound),
                "%s: %s equals the tool's bound labels" % (label, bound_name))
    with open(prefix + table_name) as f:
        header = f.readline().strip().split(",")
        rows = np.array([[float(v) for v in line.split(",")] for line in f if line.strip()])
    differ = []
    for k, name in enumerate(header):
        column = table.GetColumnByName(name)
        if column is None:
            differ.append(name + " missing")
            continue
        mine = numpy_support.vtk_to_numpy(column).astype(float)
        if not np.array_equal(mine, rows[:, k], equal_nan=True):
            differ.append(name)
    check.check(len(rows) > 0 and not differ and table.GetNumberOfColumns() == len(header)
                and "M200c" in header, "%s: the catalogue with its physics columns (%d rows) equals the tool's %s"
                % (label, len(rows), differ[:4]))
    Delete(finder)
    Delete(reader)


arrays = dict(Mass=["POINTS", "Masses"], Velocity=["POINTS", "Velocities"], Id=["POINTS", "ParticleIDs"])
compare_physics("fof", lambda r: FriendsofFriends(Input=r, **arrays), ["--finder", "fof"], "group")
compare_physics("hop_spherical", lambda r: HOPHaloFinder(Input=r, Potential='Spherical (RAMSES)', **arrays),
                ["--finder", "hop", "--potential", "spherical"], "group")
compare_physics("phew", lambda r: PHEWClumpFinder(Input=r, DensityThreshold=80, RelevanceThreshold=3,
                                                  SaddleMerging=1, SaddleThreshold=200, **arrays),
                ["--threshold", "80", "--relevance", "3", "--saddle", "200"], "clump")

check.finish()
