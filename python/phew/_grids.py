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
        # the core's node rows as they were, for phew.dendrogram_layout
        self.nodes_raw = bytes(ffi.buffer(result.nodes, result.n_nodes * ffi.sizeof("phew_node"))) \
            if result.n_nodes > 0 else b""

    def __repr__(self):
        return "<phew.ClumpResult: %d clumps, %d haloes, %d dendrogram nodes>" % (
            len(self.clumps), len(self.haloes), len(self.dendrogram))


_DEFAULTS = {"spacing": 1.0, "origin": 0.0, "periodic": False}


def _is_amr(density):
    from ._snapshots import AmrSnapshot

    if isinstance(density, AmrSnapshot):
        return True
    return isinstance(density, (list, tuple)) and len(density) > 0 and isinstance(density[0], tuple) and len(
        density[0]) == 3 and np.ndim(density[0][2]) == 3


def find_clumps(density, *, spacing=1.0, origin=0.0, periodic=False, threshold="auto", relevance=2.0, saddle=None,
                mass_threshold=0.0, threads=0, comm=None, offset=None, global_shape=None, progress=None, **amr):
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
    comm: an mpi4py communicator: density is then this rank's block of the whole grid, which
        starts at index `offset` of a grid of `global_shape` (phew.grid_block gives a balanced
        block; any tiling works). Labels come back for the block; the tables on rank 0 (empty
        elsewhere); the same answer, byte for byte, as one process on the whole grid.
    progress: optional progress(fraction, stage) -> None or False (False stops: phew.Cancelled).

    An AMR hierarchy (a phew.AmrSnapshot, or a list of (level, lo, density) blocks with
    level0_shape=) goes to find_clumps_amr; particles to find_clumps_points.
    """
    if _is_amr(density):
        from ._amr import find_clumps_amr

        extra = {"level0_shape": amr.pop("level0_shape")} if "level0_shape" in amr else {}
        if amr:
            raise TypeError("unexpected arguments for an AMR hierarchy: %s" % ", ".join(sorted(amr)))
        geometry = {k: v for k, v in (("spacing", spacing), ("origin", origin), ("periodic", periodic))
                    if v is not _DEFAULTS[k]}
        return find_clumps_amr(density, threshold=threshold, relevance=relevance, saddle=saddle,
                               mass_threshold=mass_threshold, threads=threads, comm=comm, progress=progress,
                               **geometry, **extra)
    if amr:
        raise TypeError("unexpected arguments: %s (level0_shape is for AMR blocks)" % ", ".join(sorted(amr)))
    call = Call(threads, comm, progress)
    with call.agreeing():
        rho = _density(density)
        if call.n_ranks > 1 and global_shape is None:
            raise ValueError("with comm= over %d ranks, density is this rank's block: give its offset and the "
                             "grid's global_shape (phew.grid_block makes a balanced split)" % call.n_ranks)
        grid = _Block(rho.shape, offset, global_shape)
        spacing, origin = _geometry(spacing, origin)
        params = {"spacing": spacing, "origin": origin, "periodic": _triple(periodic, "periodic", _bool),
                  "threshold": threshold, "relevance": relevance, "saddle": saddle, "mass_threshold": mass_threshold}
        c_params = _clump_params(threshold, relevance, saddle, mass_threshold)
        c_input = ffi.new("phew_input *")
        c_input.mesh = lib.PHEW_MESH_STRUCTURED
        stored = grid.describe(c_input.grid, params)
        if stored is not None:  # a block of a larger grid: room for its ghost layers
            ghosts = np.empty(stored[0], rho.dtype)
            ghosts[stored[1]] = rho
            rho = ghosts
        c_input.density = ffi.cast("const void *", rho.ctypes.data)
        c_input.density_type = lib.PHEW_FLOAT32 if rho.dtype == np.float32 else lib.PHEW_FLOAT64
        c_input.labels_active_only = 1 if stored is not None else 0
        labels = [np.empty(rho.shape, np.int64) for _ in range(3)]
    if stored is not None:
        call.check(lib.phew_exchange_ghosts(call.context, ffi.addressof(c_input, "grid"),
                                            ffi.cast("void *", rho.ctypes.data), rho.itemsize))
    c_labels = ffi.new("phew_labels *")
    c_labels.peak_patch_id, c_labels.clump_id, c_labels.halo_id = (
        ffi.cast("int64_t *", a.ctypes.data) for a in labels)
    result = ffi.new("phew_clump_result *")
    try:
        call.check(lib.phew_find_clumps(call.context, c_input, c_params, c_labels, result))
        if stored is not None:  # the active cells' labels lie at the start, over the block
            labels = [a.reshape(-1)[: grid.size].reshape(grid.shape) for a in labels]
        meta = dict(params, density_threshold=result.density_threshold_used,
                    saddle_threshold=result.saddle_threshold_used, mean_density=result.mean_density,
                    units="mass: density x cell volume; positions: the units of spacing and origin")
        return ClumpResult(labels, _catalogue(result, meta), result, params)
    finally:
        lib.phew_clump_result_free(result)


def grid_block(global_shape, *, comm=None, periodic=False):
    """(offset, shape) of this rank's block of a grid of global_shape split over the ranks of
    comm (balanced by cell count), for find_clumps(..., comm=comm, offset=, global_shape=)."""
    call = Call(0, comm)
    n_dims = len(np.atleast_1d(global_shape))
    shape = _shape(global_shape, n_dims)
    c_grid = ffi.new("phew_grid *")
    periodic = _triple(periodic, "periodic", _bool)
    call.check(lib.phew_grid_decompose(call.context, c_grid, shape[::-1], periodic[::-1]))
    return (tuple(c_grid.active_offset[2 - k] for k in range(n_dims)),
            tuple(c_grid.active_dims[2 - k] for k in range(n_dims)))


class _Block:
    """This rank's block (offset, shape) of a grid of global_shape, in array axis order."""

    def __init__(self, shape, offset, global_shape):
        self.shape = shape
        self.size = int(np.prod(shape))
        shape3 = tuple(shape) + (1,) * (3 - len(shape))
        self.global3 = _shape(global_shape, len(shape)) if global_shape is not None else shape3
        self.offset3 = _shape(offset, len(shape), 0) if offset is not None else (0, 0, 0)
        self.shape3 = shape3
        for k in range(3):
            if self.offset3[k] + shape3[k] > self.global3[k]:
                raise ValueError("the block (offset %s, shape %s) does not fit in the grid %s"
                                 % (self.offset3, shape3, self.global3))

    def describe(self, c_grid, params):
        """Fill the core's phew_grid (axes reversed). None for the whole grid; else the stored
        shape (with one ghost layer towards every neighbouring block, as phew_grid_block
        makes) and where the block lies in it."""
        lib.phew_grid_init_whole(ffi.addressof(c_grid), self.global3[2], self.global3[1], self.global3[0])
        whole = self.shape3 == self.global3
        stored, inside = [], []
        for k in range(3):
            d = 2 - k  # the core's axis
            n, lo = self.global3[k], self.offset3[k]
            hi = lo + self.shape3[k]
            periodic = params["periodic"][k]
            below = 1 if hi > lo and not (lo == 0 and hi == n) and (lo > 0 or periodic) else 0
            above = 1 if hi > lo and not (lo == 0 and hi == n) and (hi < n or periodic) else 0
            c_grid.active_offset[d], c_grid.active_dims[d] = lo, hi - lo
            c_grid.stored_offset[d], c_grid.stored_dims[d] = lo - below, hi - lo + below + above
            c_grid.spacing[d], c_grid.origin[d], c_grid.periodic[d] = (
                params["spacing"][k], params["origin"][k], periodic)
            stored.append(hi - lo + below + above)
            inside.append(slice(below, below + hi - lo))
        if whole:
            return None
        n_dims = len(self.shape)  # the axes after them span the grid: no ghosts
        return tuple(stored[:n_dims]), tuple(inside[:n_dims])


def _shape(value, n_dims=3, fill=1):
    values = [int(v) for v in np.atleast_1d(value)]
    if not 1 <= n_dims <= 3 or len(values) != n_dims or any(v < 0 for v in values):
        raise ValueError("expected %d non-negative integers, not %r" % (n_dims, value))
    return tuple(values) + (fill,) * (3 - n_dims)


def _catalogue(result, meta):
    swap = [(prefix + "X", prefix + "Z") for prefix in ("Peak", "CenterOfMass")]  # the core's x: axis 2
    clumps = _tables.column_dtype(lib.phew_clump_columns, result.columns, "phew_object", swap)
    haloes = _tables.column_dtype(lib.phew_halo_columns, result.columns, "phew_object", swap)
    nodes = _tables.column_dtype(lib.phew_node_columns, result.columns, "phew_node", swap)
    return (_tables.read_rows(result.clumps, result.n_clumps, clumps, meta),
            _tables.read_rows(result.haloes, result.n_haloes, haloes, meta),
            _tables.read_rows(result.nodes, result.n_nodes, nodes, meta))


def _density(density):
    if np.ma.isMaskedArray(density) and np.ma.is_masked(density):
        raise ValueError("the density is a masked array with masked cells: fill them first (e.g. .filled(0))")
    a = np.asarray(density)
    if a.dtype.kind not in "fiub":
        raise TypeError("the density must hold real numbers, not %s" % a.dtype)
    if not 1 <= a.ndim <= 3:
        raise ValueError("the density must be a 1-, 2- or 3-D array, not %d-D" % a.ndim)
    for axis, n in enumerate(a.shape):
        if n == 0:
            raise ValueError("the density has no cells along axis %d" % axis)
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


def _geometry(spacing, origin):
    """spacing and origin per axis, checked here so that messages name the array's axes."""
    spacing, origin = _triple(spacing, "spacing", float), _triple(origin, "origin", float)
    for axis in range(3):
        if not (np.isfinite(spacing[axis]) and spacing[axis] > 0):
            raise ValueError("spacing along axis %d must be positive and finite, not %r" % (axis, spacing[axis]))
        if not np.isfinite(origin[axis]):
            raise ValueError("origin along axis %d must be finite, not %r" % (axis, origin[axis]))
    return spacing, origin


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
