"""phew.find_clumps on numpy arrays: a uniform grid, the core's phew_input with a whole grid.

Axis k of the array is coordinate k (x, y, z, as yt and scipy.ndimage index): spacing,
origin and periodic are given in axis order, and the catalogue's X, Y and Z columns are axes 0,
1 and 2. The core stores x fastest; a C-ordered array has its last axis fastest, so the core sees
the array's axes reversed (no copy), and its X and Z columns trade places. PeakId is the cell's flat
index in C order: numpy.unravel_index(PeakId, shape) gives its indices."""
import numbers

import numpy as np

from . import _tables
from ._core import Call
from ._ffi import ffi, lib


class ClumpResult:
    """What find_clumps returns.

    peak_patch_id, clump_id, halo_id: int64 arrays shaped as the density (-1: none).
    clumps, haloes, dendrogram: Tables (numpy structured arrays with .meta, .to_pandas()),
    the columns of the CLI's -clumps.csv, -haloes.csv and -dendrogram.csv.
    density_threshold, saddle_threshold (NaN without merging), mean_density: as used.
    stats: the core's phew_stats as a dict. params: the call's parameters.
    """

    def __init__(self, labels, tables, result, params):
        self.peak_patch_id, self.clump_id, self.halo_id = labels
        self.clumps, self.haloes, self.dendrogram = tables
        self.density_threshold = result.density_threshold_used
        self.saddle_threshold = result.saddle_threshold_used
        self.mean_density = result.mean_density
        self.stats = _tables.struct_dict(result.stats)
        self.params = params

    def __repr__(self):
        return "<phew.ClumpResult: %d clumps, %d haloes, %d dendrogram nodes>" % (
            len(self.clumps), len(self.haloes), len(self.dendrogram))


def find_clumps(density, *, spacing=1.0, origin=0.0, periodic=False, threshold="auto", relevance=2.0, saddle=None,
                mass_threshold=0.0, threads=0, comm=None, progress=None):
    """Clumps, sub-clumps and haloes of a density on a uniform grid (PHEW; docs/python.md).

    density: a 1-, 2- or 3-D array of real numbers (float32 and float64 are used as they are,
        C-contiguous ones without a copy; other dtypes become float64).
    spacing, origin: the cell size and the corner of cell (0, 0, 0), a number or one per axis.
    periodic: a bool or one per axis.
    threshold: test cells have density above it; "auto" is 10x the mean density.
    relevance: peaks with peak / key saddle below it are noise (>= 1; 1 keeps every peak).
    saddle: None (no merging: haloes are the clumps), "auto" (2.5x the threshold) or a density:
        clumps whose key saddle lies above it merge into haloes.
    mass_threshold: clumps and haloes of mass at most this are left out.
    threads: threads to use, 0 for every core; the answer is the same for any number.
    comm: an mpi4py communicator (see docs/python.md; None: this process alone).
    progress: optional progress(fraction, stage) -> None or False (False stops: phew.Cancelled).
    """
    rho = _density(density)
    shape = rho.shape + (1,) * (3 - rho.ndim)
    params = {"spacing": _triple(spacing, "spacing", float), "origin": _triple(origin, "origin", float),
              "periodic": _triple(periodic, "periodic", _bool), "threshold": threshold, "relevance": relevance,
              "saddle": saddle, "mass_threshold": mass_threshold}
    c_params = _clump_params(threshold, relevance, saddle, mass_threshold)
    call = Call(threads, comm, progress)

    c_input = ffi.new("phew_input *")
    c_input.mesh = lib.PHEW_MESH_STRUCTURED
    lib.phew_grid_init_whole(ffi.addressof(c_input, "grid"), shape[2], shape[1], shape[0])
    for axis in range(3):  # the core's axis d is the array's axis 2 - d
        c_input.grid.spacing[axis] = params["spacing"][2 - axis]
        c_input.grid.origin[axis] = params["origin"][2 - axis]
        c_input.grid.periodic[axis] = params["periodic"][2 - axis]
    c_input.density = ffi.cast("const void *", rho.ctypes.data)
    c_input.density_type = lib.PHEW_FLOAT32 if rho.dtype == np.float32 else lib.PHEW_FLOAT64

    labels = [np.empty(rho.shape, np.int64) for _ in range(3)]
    c_labels = ffi.new("phew_labels *")
    c_labels.peak_patch_id, c_labels.clump_id, c_labels.halo_id = (
        ffi.cast("int64_t *", a.ctypes.data) for a in labels)
    result = ffi.new("phew_clump_result *")
    try:
        status = lib.phew_find_clumps(call.context, c_input, c_params, c_labels, result)
        call.check(status)
        meta = dict(params, density_threshold=result.density_threshold_used,
                    saddle_threshold=result.saddle_threshold_used, mean_density=result.mean_density,
                    units="mass: density x cell volume; positions: the units of spacing and origin")
        tables = _catalogue(result, meta)
        return ClumpResult(labels, tables, result, params)
    finally:
        lib.phew_clump_result_free(result)


def _catalogue(result, meta):
    swap = [(prefix + "X", prefix + "Z") for prefix in ("Peak", "CenterOfMass")]  # the core's x: axis 2
    clumps = _tables.column_dtype(lib.phew_clump_columns, result.columns, "phew_object", swap)
    haloes = _tables.column_dtype(lib.phew_halo_columns, result.columns, "phew_object", swap)
    nodes = _tables.column_dtype(lib.phew_node_columns, result.columns, "phew_node", swap)
    return (_tables.read_rows(result.clumps, result.n_clumps, clumps, meta),
            _tables.read_rows(result.haloes, result.n_haloes, haloes, meta),
            _tables.read_rows(result.nodes, result.n_nodes, nodes, meta))


def _density(density):
    a = np.asarray(density)
    if a.dtype.kind not in "fiub":
        raise TypeError("the density must hold real numbers, not %s" % a.dtype)
    if not 1 <= a.ndim <= 3:
        raise ValueError("the density must be a 1-, 2- or 3-D array, not %d-D" % a.ndim)
    dtype = np.float32 if a.dtype == np.float32 else np.float64
    return np.ascontiguousarray(a, dtype=dtype)  # no copy when it is already so (native order)


def _bool(v):
    if not isinstance(v, (bool, np.bool_, numbers.Integral)):
        raise TypeError("expected a bool, not %r" % (v,))
    return 1 if v else 0


def _triple(value, name, kind):
    values = list(value) if np.ndim(value) == 1 else [value] * 3 if np.ndim(value) == 0 else None
    if values is None or len(values) not in (1, 2, 3):
        raise ValueError("%s must be one value or one per axis, not %r" % (name, value))
    values = values + [values[-1] if kind is not float else (1.0 if name == "spacing" else 0.0)] * (3 - len(values))
    try:
        return tuple(kind(v) for v in values)
    except (TypeError, ValueError) as e:
        raise TypeError("%s: %s" % (name, e)) from None


def _number(value, name):
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError("%s must be a number, not %r" % (name, value))
    return float(value)


def _clump_params(threshold, relevance, saddle, mass_threshold):
    p = ffi.new("phew_params *")
    lib.phew_params_init(p)
    if threshold is None or (isinstance(threshold, str) and threshold == "auto"):
        p.density_threshold = lib.PHEW_THRESHOLD_AUTOMATIC if hasattr(lib, "PHEW_THRESHOLD_AUTOMATIC") else -1.0
    else:
        p.density_threshold = _number(threshold, "threshold")
        if not p.density_threshold >= 0:  # a negative number would mean "automatic" to the core
            raise ValueError("threshold must be >= 0 or 'auto', not %r" % (threshold,))
    p.relevance_threshold = _number(relevance, "relevance")
    if saddle is None:
        p.saddle_merging = 0
    else:
        p.saddle_merging = 1
        if isinstance(saddle, str) and saddle == "auto":
            p.saddle_threshold = -1.0
        else:
            p.saddle_threshold = _number(saddle, "saddle")
            if not p.saddle_threshold >= 0:
                raise ValueError("saddle must be >= 0, 'auto' or None, not %r" % (saddle,))
    p.mass_threshold = _number(mass_threshold, "mass_threshold")
    return p
