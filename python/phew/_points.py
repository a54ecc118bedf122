"""The finders on particles: PHEW (find_clumps_points), Friends-of-Friends, HOP and the SPH
density, over the core's phew_points (docs/particles.md, docs/halo-finders.md).

Positions are an (n, 3) array (x, y, z); masses (n,) and velocities (n, 3) take the positions'
type (float32 or float64); ids int64. With comm=, each rank passes any share of the
particles; labels come back for its own, in its order, and the tables on rank 0."""
import numpy as np

from . import _args, _clumps, _tables
from ._core import Call
from ._ffi import ffi, lib

INT32_MAX = 2 ** 31 - 1


class GroupResult:
    """What friends_of_friends and hop return: group_id (int64 per particle, -1: in no group),
    groups (a Table, the CLI's -groups.csv columns), stats; linking_length (FoF, as used) and
    density (HOP, per particle, in units of the mean density when estimated)."""

    def __init__(self, group_id, groups, result, density=None):
        self.group_id = group_id
        self.groups = groups
        self.linking_length = result.linking_length_used
        self.density = density
        self.stats = _tables.struct_dict(result.stats)

    def __repr__(self):
        return "<phew.GroupResult: %d groups>" % len(self.groups)


class _Particles:
    """The arrays of this rank's particles and the core's phew_points over them (the arrays
    are kept here, alive for the call)."""

    def __init__(self, call, positions, masses, velocities, ids, box, origin, periodic, neighbours=16,
                 density_neighbours=64):
        pos = np.asarray(positions)
        if pos.dtype.kind not in "fiu":
            raise TypeError("positions must hold real numbers, not %s" % pos.dtype)
        if pos.ndim != 2 or pos.shape[1] != 3:
            raise ValueError("positions must be an (n, 3) array, not of shape %s" % (pos.shape,))
        dtype = np.float32 if pos.dtype == np.float32 else np.float64
        self.n = pos.shape[0]
        self.positions = np.ascontiguousarray(pos, dtype)
        self.masses = None if masses is None else self._column(masses, dtype, (self.n,), "masses")
        self.velocities = None if velocities is None else self._column(velocities, dtype, (self.n, 3), "velocities")
        self.ids = None if ids is None else _args.int64_array(ids, "ids", (self.n,))
        p = ffi.new("phew_points *")
        lib.phew_points_init(p)
        p.n = self.n
        p.type = lib.PHEW_FLOAT32 if dtype == np.float32 else lib.PHEW_FLOAT64
        p.position = ffi.cast("const void *", self.positions.ctypes.data)
        if self.masses is not None:
            p.mass = ffi.cast("const void *", self.masses.ctypes.data)
        if self.velocities is not None:
            p.velocity = ffi.cast("const void *", self.velocities.ctypes.data)
        if self.ids is not None:
            p.id = ffi.cast("const int64_t *", self.ids.ctypes.data)
        axes = _args.per_axis(periodic, "periodic", _args.boolean)
        for k in range(3):
            p.periodic[k] = axes[k]
        self.box_from_bounds = isinstance(box, str) and box == "auto"
        if box is not None and not self.box_from_bounds:
            p.has_box = 1
            sizes, corner = _args.per_axis(box, "box", _args.number), _args.per_axis(origin, "origin", _args.number)
            for k in range(3):
                p.box_size[k], p.box_origin[k] = sizes[k], corner[k]
        elif box is None and any(axes):
            raise ValueError("periodic axes need a box (box=sizes)")
        p.n_neighbours = _args.integer(neighbours, "neighbours", 1, INT32_MAX)
        p.n_density_neighbours = _args.integer(density_neighbours, "density_neighbours", 1, INT32_MAX)
        self.points = p

    @staticmethod
    def _column(values, dtype, shape, name):
        a = np.asarray(values)
        if a.dtype.kind not in "fiu":
            raise TypeError("%s must hold real numbers, not %s" % (name, a.dtype))
        if a.shape != shape:
            raise ValueError("%s must have shape %s, not %s" % (name, shape, a.shape))
        return np.ascontiguousarray(a, dtype)

    def input(self, call, density=None):
        """The core's phew_input (collective when the box comes from the bounds)."""
        c_input = ffi.new("phew_input *")
        c_input.mesh = lib.PHEW_MESH_POINTS
        c_input.points = self.points[0]
        if self.box_from_bounds:
            call.check(lib.phew_points_box_from_bounds(call.context, ffi.addressof(c_input, "points")))
        if density is not None:
            c_input.density = ffi.cast("const void *", density.ctypes.data)
            c_input.density_type = lib.PHEW_FLOAT32 if density.dtype == np.float32 else lib.PHEW_FLOAT64
        return c_input


def _given_density(density, n):
    if density is None:
        return None
    d = np.asarray(density)
    if d.dtype.kind not in "fiu" or d.shape != (n,):
        raise ValueError("density must be one real number per particle (shape (%d,)), not %s %s"
                         % (n, d.dtype, d.shape))
    return np.ascontiguousarray(d, np.float32 if d.dtype == np.float32 else np.float64)


def find_clumps_points(positions, *, masses=None, velocities=None, ids=None, density=None, box=None, origin=0.0,
                       periodic=False, threshold="auto", relevance=2.0, saddle=None, mass_threshold=0.0,
                       neighbours=16, density_neighbours=64, threads=0, comm=None, progress=None):
    """PHEW on particles: the graph of their `neighbours` nearest neighbours, the density given
    or estimated (SPH over `density_neighbours`; in units of the mean density with a box).
    box: None, "auto" (the positions' bounds) or the sizes (with origin, the box's corner).
    Returns a ClumpResult with one label per particle and .density (the density used)."""
    call = Call(threads, comm, progress)
    with call.agreeing():
        parts = _Particles(call, positions, masses, velocities, ids, box, origin, periodic, neighbours,
                           density_neighbours)
        given = _given_density(density, parts.n)
        c_params = _args.clump_params(threshold, relevance, saddle, mass_threshold)
        params = {"threshold": threshold, "relevance": relevance, "saddle": saddle, "mass_threshold": mass_threshold,
                  "box": box, "origin": origin, "periodic": periodic, "neighbours": neighbours,
                  "density_neighbours": density_neighbours}
    c_input = parts.input(call, given)
    used = np.empty(max(parts.n, 1), np.float64)
    r = _clumps.run(call, c_input, c_params, parts.n, params, lambda a: a, density=used)
    r.density = used[:parts.n]
    return r


def _groups(result, meta):
    dtype = _tables.column_dtype(lib.phew_group_columns, result.columns, "phew_group")
    return _tables.read_rows(result.groups, result.n_groups, dtype, meta)


def friends_of_friends(positions, *, linking_length=0.2, absolute=False, min_members=20, masses=None,
                       velocities=None, ids=None, box=None, origin=0.0, periodic=False, threads=0, comm=None):
    """Friends-of-Friends groups: linking_length relative to the mean interparticle spacing
    (absolute=True: a length), groups of at least min_members particles."""
    call = Call(threads, comm)
    with call.agreeing():
        parts = _Particles(call, positions, masses, velocities, ids, box, origin, periodic)
        p = ffi.new("phew_fof_params *")
        lib.phew_fof_params_init(p)
        p.linking_length = _args.number(linking_length, "linking_length")
        p.absolute = _args.boolean(absolute, "absolute")
        p.min_members = _args.integer(min_members, "min_members", 1)
    c_input = parts.input(call)
    group_id = np.empty(parts.n, np.int64)
    result = ffi.new("phew_group_result *")
    try:
        call.check(lib.phew_find_fof_groups(call.context, c_input, p, ffi.cast("int64_t *", group_id.ctypes.data),
                                            result))
        meta = {"linking_length": linking_length, "absolute": absolute, "min_members": min_members,
                "linking_length_used": result.linking_length_used, "box": box, "periodic": periodic}
        return GroupResult(group_id, _groups(result, meta), result)
    finally:
        lib.phew_group_result_free(result)


def hop(positions, *, outer=160.0, saddle_factor=2.5, peak_factor=3.0, hop_neighbours=64, merge_neighbours=4,
        density_neighbours=64, min_members=10, density=None, masses=None, velocities=None, ids=None, box=None,
        origin=0.0, periodic=False, threads=0, comm=None, progress=None):
    """HOP groups (Eisenstein & Hut 1998, regrouped as yt's code does): densities in units of
    the mean density (estimated over density_neighbours, or given)."""
    call = Call(threads, comm, progress)
    with call.agreeing():
        parts = _Particles(call, positions, masses, velocities, ids, box, origin, periodic,
                           density_neighbours=density_neighbours)
        given = _given_density(density, parts.n)
        p = ffi.new("phew_hop_params *")
        lib.phew_hop_params_init(p)
        p.outer, p.saddle_factor = _args.number(outer, "outer"), _args.number(saddle_factor, "saddle_factor")
        p.peak_factor = _args.number(peak_factor, "peak_factor")
        p.n_hop = _args.integer(hop_neighbours, "hop_neighbours", 1, INT32_MAX)
        p.n_merge = _args.integer(merge_neighbours, "merge_neighbours", 1, INT32_MAX)
        p.min_members = _args.integer(min_members, "min_members", 1)
    c_input = parts.input(call, given)
    group_id = np.empty(parts.n, np.int64)
    used = np.empty(parts.n, np.float64)
    result = ffi.new("phew_group_result *")
    try:
        call.check(lib.phew_find_hop_groups(call.context, c_input, p, ffi.cast("int64_t *", group_id.ctypes.data),
                                            ffi.cast("double *", used.ctypes.data), result))
        meta = {"outer": outer, "saddle_factor": saddle_factor, "peak_factor": peak_factor, "box": box,
                "periodic": periodic, "min_members": min_members}
        return GroupResult(group_id, _groups(result, meta), result, used)
    finally:
        lib.phew_group_result_free(result)


def particle_density(positions, *, masses=None, ids=None, box=None, origin=0.0, periodic=False,
                     density_neighbours=64, threads=0, comm=None, progress=None):
    """The SPH density of every particle (M4 kernel over density_neighbours, as HOP), in units
    of the mean density with a box."""
    call = Call(threads, comm, progress)
    with call.agreeing():
        parts = _Particles(call, positions, masses, None, ids, box, origin, periodic,
                           density_neighbours=density_neighbours)
    c_input = parts.input(call)
    out = np.empty(parts.n, np.float64)
    call.check(lib.phew_estimate_density(call.context, c_input, ffi.cast("double *", out.ctypes.data), ffi.NULL))
    return out
