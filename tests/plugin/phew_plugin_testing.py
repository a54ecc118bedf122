"""Helpers shared by the pvbatch tests of the PHEW ParaView plugin.

The test scripts run under pvbatch (ParaView's Python, which has numpy). Each one gets its
paths on the command line from ctest:
    pvbatch test_x.py --plugin PHEW.so [--cli path/to/phew] --source-dir SRC --work-dir DIR
"""
import argparse
import csv
import math
import os
import subprocess
import sys

import numpy as np
from paraview import servermanager as sm
from vtkmodules.util import numpy_support
from vtkmodules.util.misc import calldata_type
from vtkmodules.util.vtkConstants import VTK_STRING
from vtkmodules.vtkCommonCore import vtkCommand
from vtkmodules.vtkCommonDataModel import vtkImageData
from vtkmodules.vtkIOXML import vtkXMLImageDataWriter

LABEL_ARRAYS = ("PeakPatchId", "ClumpId", "HaloId")
# Output ports of the filter and the suffix of the matching CSV file of the command-line tool.
TABLE_PORTS = ((1, "clumps"), (2, "dendrogram"), (3, "haloes"))


def take_option(name):
    """The value of a test's own option (removed from sys.argv before parse_args), or None."""
    if name not in sys.argv:
        return None
    i = sys.argv.index(name)
    value = sys.argv[i + 1]
    del sys.argv[i:i + 2]
    return value


def parse_args(need_cli=False):
    parser = argparse.ArgumentParser()
    parser.add_argument("--plugin", required=True, help="path of PHEW.so")
    parser.add_argument("--cli", required=need_cli, help="path of the phew command-line tool")
    parser.add_argument("--source-dir", required=True, help="top of the phew source tree")
    parser.add_argument("--work-dir", required=True, help="scratch directory for this test")
    args = parser.parse_args()
    os.makedirs(args.work_dir, exist_ok=True)
    return args


class Checker:
    """Collects failed checks so that one run reports all of them."""

    def __init__(self, name):
        self.name = name
        self.failures = []
        self.count = 0

    def check(self, condition, message):
        self.count += 1
        if not condition:
            self.failures.append(message)
            print("FAIL: %s" % message, flush=True)
        return condition

    def finish(self, exit_on_success=True):
        """Exits with status 1 after failures. On success it exits with 0, or just returns
        (exit_on_success=False: under mpirun, pvbatch must reach the end of the script to
        shut the other ranks down cleanly)."""
        if self.failures:
            print("%s: %d of %d checks failed" % (self.name, len(self.failures), self.count), flush=True)
            sys.exit(1)
        print("%s: all %d checks passed" % (self.name, self.count), flush=True)
        if exit_on_success:
            sys.exit(0)


class ErrorCatcher:
    """Records the vtkErrorMacro messages of a filter (observing ErrorEvent also keeps
    them off the console, so expected errors do not look like failures in the log)."""

    def __init__(self, proxy):
        self.messages = []
        self.algorithm = proxy.GetClientSideObject()  # None when connected to a server:
        if self.algorithm is not None:                 # its messages stay there
            self.tag = self.algorithm.AddObserver(vtkCommand.ErrorEvent, self._on_error)

    @calldata_type(VTK_STRING)
    def _on_error(self, caller, event, message):
        self.messages.append(str(message))

    def text(self):
        return "\n".join(self.messages)

    def clear(self):
        self.messages = []


# ---------------------------------------------------------------------------------------------
# Synthetic fields


def blob_field(dims, blobs, background=0.05, noise=0.0, seed=1, periodic=False):
    """A density cube of shape (nz, ny, nx) (x fastest when flattened in C order): a sum of
    Gaussian blobs (cx, cy, cz, sigma, amplitude) in cell units, plus a positive background
    and optional multiplicative noise."""
    nx, ny, nz = dims
    z, y, x = np.meshgrid(np.arange(nz), np.arange(ny), np.arange(nx), indexing="ij")
    rho = np.full((nz, ny, nx), background, dtype=np.float64)
    for cx, cy, cz, sigma, amplitude in blobs:
        d = [x - cx, y - cy, z - cz]
        if periodic:
            for k, n in enumerate((nx, ny, nz)):
                d[k] = (d[k] + n / 2.0) % n - n / 2.0
        rho += amplitude * np.exp(-(d[0] ** 2 + d[1] ** 2 + d[2] ** 2) / (2.0 * sigma ** 2))
    if noise > 0:
        rho *= 1.0 + noise * np.random.default_rng(seed).standard_normal(rho.shape)
        rho = np.abs(rho)
    return rho


def standard_blobs(dims):
    """Eight blobs of different heights and widths, two pairs close enough to share saddles."""
    nx, ny, nz = dims
    f = np.array([nx, ny, nz], dtype=float)
    spots = [
        (0.25, 0.30, 0.30, 2.5, 10.0),
        (0.38, 0.32, 0.30, 2.0, 6.0),
        (0.70, 0.70, 0.60, 3.0, 8.0),
        (0.75, 0.25, 0.70, 1.5, 4.0),
        (0.20, 0.75, 0.75, 2.0, 3.0),
        (0.50, 0.50, 0.20, 2.5, 5.0),
        (0.55, 0.58, 0.22, 2.0, 4.5),
        (0.96, 0.50, 0.50, 2.0, 7.0),  # near the x boundary: wraps when periodic
    ]
    return [(fx * f[0], fy * f[1], fz * f[2], s, a) for fx, fy, fz, s, a in spots]


def make_image(values, association="CELLS", origin=(0.0, 0.0, 0.0), spacing=(1.0, 1.0, 1.0),
               start=(0, 0, 0), name="density", extra=None):
    """vtkImageData holding `values` (shape (nz, ny, nx)) as cell or point data named `name`.
    `extra` maps more array names to arrays of the same shape (or (nz, ny, nx, ncomp))."""
    nz, ny, nx = values.shape[:3]
    image = vtkImageData()
    if association == "CELLS":
        image.SetExtent(start[0], start[0] + nx, start[1], start[1] + ny, start[2], start[2] + nz)
    else:
        image.SetExtent(start[0], start[0] + nx - 1, start[1], start[1] + ny - 1, start[2], start[2] + nz - 1)
    image.SetOrigin(*origin)
    image.SetSpacing(*spacing)
    attributes = image.GetCellData() if association == "CELLS" else image.GetPointData()
    arrays = {name: values}
    arrays.update(extra or {})
    for array_name, data in arrays.items():
        ncomp = 1 if data.ndim == 3 else data.shape[3]
        flat = np.ascontiguousarray(data).reshape(-1, ncomp) if ncomp > 1 else np.ascontiguousarray(data).ravel()
        vtk_array = numpy_support.numpy_to_vtk(flat, deep=True)
        vtk_array.SetName(array_name)
        attributes.AddArray(vtk_array)
    attributes.SetActiveScalars(name)
    return image


def write_vti(path, image):
    """Binary (inline base64) VTK XML: Debian's ParaView cannot read the appended mode."""
    writer = vtkXMLImageDataWriter()
    writer.SetFileName(path)
    writer.SetInputData(image)
    writer.SetDataModeToBinary()
    if writer.Write() != 1:
        raise RuntimeError("cannot write " + path)
    return path


# ---------------------------------------------------------------------------------------------
# Outputs of the filter


def fetch(proxy, port):
    return sm.Fetch(proxy, idx=port)


def label_arrays(image, association):
    attributes = image.GetCellData() if association == "CELLS" else image.GetPointData()
    out = {}
    for name in LABEL_ARRAYS:
        array = attributes.GetArray(name)
        out[name] = None if array is None else array
    return out


def table_columns(table):
    return [table.GetColumnName(c) for c in range(table.GetNumberOfColumns())]


def table_as_lists(table):
    """Column name -> list of Python values (int for integer columns, float for doubles)."""
    out = {}
    for c in range(table.GetNumberOfColumns()):
        column = table.GetColumn(c)
        values = numpy_support.vtk_to_numpy(column) if column.GetNumberOfTuples() else []
        out[table.GetColumnName(c)] = [v.item() for v in values]
    return out


def check_group_markers(check, what, markers, table, own):
    """The Markers of Friends-of-Friends or HOP (`markers`, fetched from port 2) against their
    Groups `table`: one vertex per row with every column as point data; each vertex at the
    row's CenterX/Y/Z when the physics ran and it is finite, else at its `own` columns (X, Y, Z:
    the centre of mass or the peak), exactly; GlyphRadius = R200c (0 where NaN) with the physics
    and absent without it. Returns (physics ran, vertices at a physics centre away from their own
columns, R200c finite): the counts show that the case tells the two placements apart."""
    rows = {table.GetColumnName(c): numpy_support.vtk_to_numpy(table.GetColumn(c))
            for c in range(table.GetNumberOfColumns())}
    n = table.GetNumberOfRows()
    data = markers.GetPointData()
    points = markers.GetPoints()
    got = (numpy_support.vtk_to_numpy(points.GetData()).astype(np.float64) if points is not None and n
           else np.zeros((0, 3)))
    check.check(markers.GetNumberOfPoints() == markers.GetNumberOfVerts() == n,
                "%s: Markers %d points, %d vertices for %d groups"
                % (what, markers.GetNumberOfPoints(), markers.GetNumberOfVerts(), n))
    shared = [name for name in rows if data.GetArray(name) is not None and
              np.array_equal(numpy_support.vtk_to_numpy(data.GetArray(name)), rows[name], equal_nan=True)]
    check.check(shared == list(rows), "%s: Markers point data is not the Groups columns: %s"
                % (what, sorted(set(rows) - set(shared))))
    check.check(data.GetScalars() is not None and data.GetScalars().GetName() == "GroupId",
                "%s: Markers scalars are not GroupId" % what)
    if n == 0:
        return False, 0, 0
    own_xyz = np.array([rows[name] for name in own], dtype=np.float64).T
    physics = "CenterX" in rows and "R200c" in rows
    at_centre = 0
    finite_r200c = 0
    want = own_xyz
    if physics:
        centre = np.array([rows[name] for name in ("CenterX", "CenterY", "CenterZ")], dtype=np.float64).T
        known = np.isfinite(centre).all(axis=1)
        want = np.where(known[:, None], centre, own_xyz)
        at_centre = int(np.count_nonzero(known & (centre != own_xyz).any(axis=1)))
        r200c = rows["R200c"]
        finite_r200c = int(np.count_nonzero(np.isfinite(r200c)))
        radius = data.GetArray("GlyphRadius")
        check.check(radius is not None and np.array_equal(numpy_support.vtk_to_numpy(radius),
                                                          np.where(np.isfinite(r200c), r200c, 0.0)),
                    "%s: Markers GlyphRadius is not R200c (0 where NaN)" % what)
    else:
        check.check(data.GetArray("GlyphRadius") is None, "%s: Markers have GlyphRadius without the physics" % what)
    check.check(np.array_equal(got, want), "%s: Markers are not at %s: %d of %d differ"
                % (what, "CenterX/Y/Z (else %s)" % "/".join(own) if physics else "/".join(own),
                   int(np.count_nonzero((got != want).any(axis=1))), n))
    return physics, at_centre, finite_r200c


def write_table_csv(table, path):
    """CSV in the table's column order, formatted like the command-line tool
    (integers as integers, doubles with %.17g)."""
    names = table_columns(table)
    columns = [table.GetColumn(c) for c in range(len(names))]
    is_int = [column.GetDataType() not in (10, 11) for column in columns]  # VTK_FLOAT, VTK_DOUBLE
    with open(path, "w", newline="") as out:
        out.write(",".join(names) + "\n")
        for r in range(table.GetNumberOfRows()):
            cells = []
            for column, integer in zip(columns, is_int):
                value = column.GetValue(r)
                cells.append("%d" % value if integer else "%.17g" % value)
            out.write(",".join(cells) + "\n")


# ---------------------------------------------------------------------------------------------
# The command-line tool


def env_without_mpi_launcher():
    """This environment minus what mpiexec gave this process (Open MPI, PMIx): a tool built
    with MPI, started from a pvbatch rank, must initialise as a process of its own instead
    of trying to join the pvbatch job (which fails or hangs in MPI_Init)."""
    keep = ("OMPI_ALLOW_RUN_AS_ROOT", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "OMPI_MCA_pml")  # tests/CMakeLists.txt
    return {key: value for key, value in os.environ.items()
            if key in keep or not key.startswith(("OMPI_", "PMIX_", "PMI_", "HYDRA_"))}


def run_cli(cli, values, prefix, threshold, **options):
    """Writes `values` (shape (nz, ny, nx), float32 or float64) as a raw cube and runs the tool.
    Returns the outputs: labels (name -> int64 array, x fastest) and CSV tables."""
    return finish_cli(start_cli(cli, values, prefix, threshold, **options))


def start_cli(cli, values, prefix, threshold, relevance=None, saddle=None, mass=None, periodic=False,
              spacing=None, origin=None):
    """run_cli in the background (the tool spends most of its time starting MPI): returns what
    finish_cli needs."""
    if values.dtype not in (np.float32, np.float64):
        raise ValueError("the command-line tool reads float32 or float64 only")
    raw = prefix + "-density.raw"
    values.astype(values.dtype.newbyteorder("<")).tofile(raw)
    nz, ny, nx = values.shape
    command = [cli, "--input", raw, "--dims", str(nx), str(ny), str(nz),
               "--type", "float32" if values.dtype == np.float32 else "float64",
               "--threshold", repr(float(threshold)), "--output", prefix]
    if relevance is not None:
        command += ["--relevance", repr(float(relevance))]
    if saddle is not None:
        command += ["--saddle", repr(float(saddle))]
    if mass is not None:
        command += ["--mass-threshold", repr(float(mass))]
    if periodic:
        command += ["--periodic"]
    if spacing is not None:
        command += ["--spacing"] + [repr(float(s)) for s in spacing]
    if origin is not None:
        command += ["--origin"] + [repr(float(o)) for o in origin]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env=env_without_mpi_launcher())
    return process, command, prefix


def finish_cli(started):
    """Waits for a tool started by start_cli; returns run_cli's outputs or raises RuntimeError."""
    process, command, prefix = started
    _, stderr = process.communicate(timeout=240)
    if process.returncode != 0:
        raise RuntimeError("phew failed (%d): %s\n%s" % (process.returncode, " ".join(command), stderr))
    return read_cli_outputs(prefix)


def read_cli_outputs(prefix):
    """The tool's outputs under `prefix`: labels (name -> int64 array, x fastest) and CSV tables."""
    labels = {}
    for name, suffix in zip(LABEL_ARRAYS, ("patch", "clump", "halo")):
        labels[name] = np.fromfile("%s-%s.raw" % (prefix, suffix), dtype="<i8")
    tables = {}
    for _, suffix in TABLE_PORTS:
        tables[suffix] = read_csv("%s-%s.csv" % (prefix, suffix))
    return labels, tables


def read_csv(path):
    """(header, rows of strings)."""
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    return rows[0], rows[1:]


def same_double(a, b):
    return a == b or (math.isnan(a) and math.isnan(b))


def compare_table(check, what, table, csv_header, csv_rows):
    """Exact comparison of a vtkTable with a CSV file of the tool: names, order, types, values."""
    names = table_columns(table)
    if not check.check(names == csv_header, "%s: columns %s differ from the tool's %s" % (what, names, csv_header)):
        return
    if not check.check(table.GetNumberOfRows() == len(csv_rows),
                       "%s: %d rows, the tool wrote %d" % (what, table.GetNumberOfRows(), len(csv_rows))):
        return
    mismatches = 0
    for c, name in enumerate(names):
        column = table.GetColumn(c)
        is_double = column.GetDataType() == 11  # VTK_DOUBLE
        for r, row in enumerate(csv_rows):
            value = column.GetValue(r)
            expected = float(row[c]) if is_double else int(row[c])
            equal = same_double(value, expected) if is_double else value == expected
            if not equal:
                mismatches += 1
                if mismatches <= 10:
                    check.check(False, "%s: row %d column %s: plugin %r, tool %s" % (what, r, name, value, row[c]))
    check.check(mismatches == 0, "%s: %d value(s) differ from the tool" % (what, mismatches))


# ---------------------------------------------------------------------------------------------
# Parallel runs (mpiexec -np N pvbatch): pieces written by the ranks


def number_of_ranks():
    """Ranks of the pvbatch job (the script itself runs on rank 0 only)."""
    from paraview import servermanager as sm_
    return sm_.vtkProcessModule.GetProcessModule().GetNumberOfLocalPartitions()


def reencode_vti(source, destination):
    """Rewrites a .vti with VTK's own writer (Binary, one base64 stream per array). Files whose
    header and data are two base64 blocks read fine whole, but vtkXMLImageDataReader misreads
    them when it reads a sub-extent, which is what each rank does in parallel."""
    from vtkmodules.vtkIOXML import vtkXMLImageDataReader
    reader = vtkXMLImageDataReader()
    reader.SetFileName(source)
    reader.Update()
    return write_vti(destination, reader.GetOutput())


def read_pvti_pieces(path):
    """The pieces of a .pvti written by the ranks: list of (extent, vtkImageData), read one
    file at a time so that every rank's piece (ghost cells included) is seen as written."""
    import xml.etree.ElementTree as ElementTree
    from vtkmodules.vtkIOXML import vtkXMLImageDataReader
    root = ElementTree.parse(path).getroot()
    pieces = []
    for element in root.iter("Piece"):
        reader = vtkXMLImageDataReader()
        reader.SetFileName(os.path.join(os.path.dirname(path), element.get("Source")))
        reader.Update()
        image = reader.GetOutput()
        pieces.append((image.GetExtent(), image))
    return pieces


def piece_slices(extent, whole, association):
    """Index ranges (z, y, x) of a piece's cells or points in the whole grid."""
    out = []
    for d in (2, 1, 0):
        lo = extent[2 * d] - whole[2 * d]
        if extent[2 * d + 1] < extent[2 * d]:
            return None
        if association == "CELLS":
            hi = extent[2 * d + 1] - whole[2 * d] if whole[2 * d + 1] > whole[2 * d] else lo + 1
        else:
            hi = extent[2 * d + 1] - whole[2 * d] + 1
        out.append(slice(lo, hi))
    return tuple(out)


def whole_extent_of_pvti(path):
    import xml.etree.ElementTree as ElementTree
    root = ElementTree.parse(path).getroot()
    return [int(v) for v in root.find("PImageData").get("WholeExtent").split()]


def whole_extent_of_vti(path):
    import xml.etree.ElementTree as ElementTree
    root = ElementTree.parse(path).getroot()
    return [int(v) for v in root.find("ImageData").get("WholeExtent").split()]
