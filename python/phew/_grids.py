"""phew.find_clumps on numpy arrays: a uniform grid, the core's phew_input with a whole grid
(or, with comm=, this rank's block of it).

Axis k of the array is coordinate k (x, y, z, as yt and scipy.ndimage index): spacing,
origin and periodic are given in axis order, and the catalogue's X, Y and Z columns are axes 0,
1 and 2. The core stores x fastest; a C-ordered array has its last axis fastest, so the core sees
the array's axes reversed (no copy), and its X and Z columns trade places. PeakId is the cell's flat
index in C order: numpy.unravel_index(PeakId, shape) gives its indices."""
import numpy as np

from . import _args, _clumps
from ._core import Call
from ._ffi import ffi, lib

_UNSET = object()  # a default that an explicit value (even False or 1.0) is told apart from


def find_clumps(density, *, spacing=_UNSET, origin=_UNSET, periodic=_UNSET, threshold="auto", relevance=2.0,
                saddle=None, mass_threshold=0.0, threads=0, comm=None, offset=None, global_shape=None,
                level0_shape=_UNSET, progress=None):
    """Clumps, sub-clumps and haloes of a density on a uniform grid (PHEW; docs/python.md).

    density: a 1-, 2- or 3-D array of real numbers (float32 and float64 are used as they are,
        C-contiguous ones without a copy; other dtypes become float64).
    spacing, origin: the cell size (1) and the corner of cell (0, 0, 0) (0), one number or one
        per axis. periodic: a bool or one per axis (False).
    threshold: test cells have density above it; "auto" is 10x the mean density.
    relevance: peaks with peak / key saddle below it are noise (>= 1; 1 keeps every peak).
    saddle: None (no merging: haloes are the clumps), "auto" (2.5x the threshold) or a density:
        clumps whose key saddle lies above it merge into haloes.
    mass_threshold: clumps and haloes of mass at most this are left out.
    threads: threads to use, 0 for every core; the answer is the same for any number.
    comm: an mpi4py communicator: density is then this rank's block of the whole grid, which
        starts at index `offset` of a grid of `global_shape` (phew.grid_block gives a balanced
        block, possibly empty; any tiling works). Labels come back for the block; the tables on
        rank 0 (empty elsewhere); the same answer, byte for byte, as one process on the whole grid.
    progress: optional progress(fraction, stage) -> None or False (False stops: phew.Cancelled).

    An AMR hierarchy (a phew.AmrSnapshot, or blocks (level, lo, density) with level0_shape=) is
    handed on to find_clumps_amr; particles go to find_clumps_points.
    """
    geometry = {k: v for k, v in (("spacing", spacing), ("origin", origin), ("periodic", periodic)) if v is not _UNSET}
    finder = dict(threshold=threshold, relevance=relevance, saddle=saddle, mass_threshold=mass_threshold,
                  threads=threads, comm=comm, progress=progress)
    if level0_shape is not _UNSET or _is_amr_snapshot(density):
        from ._amr import find_clumps_amr

        if offset is not None or global_shape is not None:
            raise TypeError("offset and global_shape are for grids; AMR blocks carry their own lo")
        shape = {} if level0_shape is _UNSET else {"level0_shape": level0_shape}
        return find_clumps_amr(density, **geometry, **shape, **finder)
    return _find_clumps_grid(density, geometry, offset, global_shape, **finder)


def _is_amr_snapshot(value):
    from ._snapshots import AmrSnapshot

    return isinstance(value, AmrSnapshot)


def _find_clumps_grid(density, geometry, offset, global_shape, threshold, relevance, saddle, mass_threshold,
                      threads, comm, progress):
    call = Call(threads, comm, progress)
    with call.agreeing():
        rho = _density(density, empty_allowed=global_shape is not None)
        if call.n_ranks > 1 and global_shape is None:
            raise ValueError("with comm= over %d ranks, density is this rank's block: give its offset and the "
                             "grid's global_shape (phew.grid_block makes a balanced split)" % call.n_ranks)
        grid = _Block(rho.shape, offset, global_shape)
        spacing, origin = _args.geometry(geometry.get("spacing", 1.0), geometry.get("origin", 0.0), rho.ndim)
        params = {"spacing": spacing, "origin": origin,
                  "periodic": _args.per_axis(geometry.get("periodic", False), "periodic", _args.boolean, rho.ndim, 0),
                  "threshold": threshold, "relevance": relevance, "saddle": saddle, "mass_threshold": mass_threshold}
        c_params = _args.clump_params(threshold, relevance, saddle, mass_threshold)
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
    if stored is not None:
        call.check(lib.phew_exchange_ghosts(call.context, ffi.addressof(c_input, "grid"),
                                            ffi.cast("void *", rho.ctypes.data), rho.itemsize))
    # with ghosts, the active cells' labels lie at the start of the arrays, over the block
    n_labels = rho.size if stored is None else grid.size
    return _clumps.run(call, c_input, c_params, max(rho.size, 1), params,
                       lambda a: a[:n_labels].reshape(grid.shape), _clumps.AXES_REVERSED)


def grid_block(global_shape, *, comm=None, periodic=False):
    """(offset, shape) of this rank's block of a grid of global_shape split over the ranks of
    comm (balanced by cell count; a block may be empty), for find_clumps(..., comm=comm,
    offset=, global_shape=)."""
    call = Call(0, comm)
    n_dims = len(np.atleast_1d(global_shape))
    shape = _shape(global_shape, n_dims)
    c_grid = ffi.new("phew_grid *")
    periodic = _args.per_axis(periodic, "periodic", _args.boolean, n_dims, 0)
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
            if self.global3[k] < 1:
                raise ValueError("global_shape needs at least one cell along axis %d" % k)
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
    values = np.atleast_1d(value)
    if values.dtype.kind not in "iu" or not 1 <= n_dims <= 3 or values.shape != (n_dims,) or (values < 0).any():
        raise ValueError("expected %d non-negative integers, not %r" % (n_dims, value))
    return tuple(int(v) for v in values) + (fill,) * (3 - n_dims)


def _density(density, empty_allowed=False):
    if np.ma.isMaskedArray(density) and np.ma.is_masked(density):
        raise ValueError("the density is a masked array with masked cells: fill them first (e.g. .filled(0))")
    a = np.asarray(density)
    if a.dtype.kind not in "fiub":
        raise TypeError("the density must hold real numbers, not %s" % a.dtype)
    if not 1 <= a.ndim <= 3:
        raise ValueError("the density must be a 1-, 2- or 3-D array, not %d-D" % a.ndim)
    for axis, n in enumerate(a.shape):
        if n == 0 and not empty_allowed:  # a rank's block of a larger grid may be empty
            raise ValueError("the density has no cells along axis %d" % axis)
    dtype = np.float32 if a.dtype == np.float32 else np.float64
    return np.ascontiguousarray(a, dtype=dtype)  # no copy when it is already so (native order)
