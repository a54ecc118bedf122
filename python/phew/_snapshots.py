"""phew.read_snapshot: simulation outputs through libphew_readers (RAMSES, GADGET-2/3/4, AREPO
and SWIFT HDF5; docs/snapshots.md): this rank's share of one kind of particle as numpy arrays,
with what the snapshot says about itself (box, units, cosmology)."""
import numpy as np

from . import _args, _tables
from ._core import Call
from ._ffi import ffi, lib

_FORMATS = {"auto": lib.PHEW_FORMAT_AUTO, "ramses": lib.PHEW_FORMAT_RAMSES, "gadget-hdf5": lib.PHEW_FORMAT_GADGET_HDF5}
_UNITS = {"code": lib.PHEW_UNITS_CODE, "astro": lib.PHEW_UNITS_ASTRO}
_VALUES = {lib.PHEW_VALUE_FLOAT32: np.float32, lib.PHEW_VALUE_FLOAT64: np.float64, lib.PHEW_VALUE_INT8: np.int8,
           lib.PHEW_VALUE_INT16: np.int16, lib.PHEW_VALUE_INT32: np.int32, lib.PHEW_VALUE_INT64: np.int64,
           lib.PHEW_VALUE_UINT8: np.uint8, lib.PHEW_VALUE_UINT16: np.uint16, lib.PHEW_VALUE_UINT32: np.uint32,
           lib.PHEW_VALUE_UINT64: np.uint64}


class Snapshot:
    """What read_snapshot returns.

    positions (n, 3), velocities (n, 3) or None, masses (n,), ids (int64, the snapshot's): this
    rank's share (all of them without comm=), float32 or float64 as the files store them.
    fields: the other per-particle arrays by name (with all_fields=True).
    first, n_total: the share's first global index and the count over all ranks.
    info: the metadata as a dict: code, time, scale_factor, redshift, hubble, omega_matter,
    omega_lambda, omega_baryon, box_origin, box_size, periodic, cosmological, units,
    length_unit, mass_unit, velocity_unit, code_length_cm, code_mass_g, code_velocity_cm_s, ...
    box, periodic: info's box sizes and periodic axes, ready for the particle finders.
    """

    def __repr__(self):
        return "<phew.Snapshot: %s, %d of %d particles, box %s %s>" % (
            self.info["code"], len(self.positions), self.n_total, self.box, self.info["length_unit"])


def read_snapshot(path, *, format="auto", units="code", particle_type=1, family=None, all_fields=False, comm=None):
    """Read one kind of particle: GADGET's PartType `particle_type` (1, dark matter), or RAMSES's
    `family` ("DM" by default, "star", ... or its number). units: "code" (as stored) or "astro"
    (comoving Mpc/h, Msun/h, peculiar km/s). With comm= each rank reads its share of the files."""
    call = Call(0, comm)
    with call.agreeing():
        if not isinstance(path, (str, bytes)) and not hasattr(path, "__fspath__"):
            raise TypeError("path must be a path, not %r" % (path,))
        options = ffi.new("phew_read_options *")
        lib.phew_read_options_init(options)
        options.format = _choice(format, _FORMATS, "format")
        options.units = _choice(units, _UNITS, "units")
        options.particle_type = _args.integer(particle_type, "particle_type", 0, 2 ** 31 - 1)
        keep = ffi.new("char[]", str(family).encode()) if family is not None else None
        if keep is not None:
            options.family = keep
        options.all_fields = 1 if all_fields else 0
        c_path = ffi.new("char[]", _path_bytes(path))
    c_set = ffi.new("phew_particle_set *")
    try:
        call.check(lib.phew_read_particles(call.context, c_path, options, c_set))
        return _snapshot(c_set)
    finally:
        lib.phew_particle_set_free(c_set)


def _path_bytes(path):
    import os

    return os.fsencode(path)


def _choice(value, names, what):
    if value not in names:
        raise ValueError("%s must be one of %s, not %r" % (what, ", ".join(sorted(names)), value))
    return names[value]


def _array(pointer, n, dtype, components=1):
    """A copy of n x components values at pointer (the set is freed after)."""
    shape = (n, components) if components > 1 else (n,)
    if pointer == ffi.NULL:
        return None
    if n == 0:
        return np.zeros(shape, dtype)
    count = n * components * np.dtype(dtype).itemsize
    return np.frombuffer(ffi.buffer(pointer, count), dtype).reshape(shape).copy()


def _info(c_info):
    info = _tables.struct_dict(c_info, tuple)
    info["format"] = {v: k for k, v in _FORMATS.items()}.get(info["format"], info["format"])
    info["units"] = {v: k for k, v in _UNITS.items()}.get(info["units"], info["units"])
    info["periodic"] = tuple(bool(p) for p in info["periodic"])
    return info


def _snapshot(c_set):
    s = Snapshot()
    dtype = np.float32 if c_set.type == lib.PHEW_FLOAT32 else np.float64
    n = c_set.n
    s.positions = _array(c_set.position, n, dtype, 3)
    s.velocities = _array(c_set.velocity, n, dtype, 3)
    s.masses = _array(c_set.mass, n, dtype)
    s.ids = _array(c_set.id, n, np.int64)
    s.first, s.n_total = c_set.first, c_set.n_total
    s.fields = {}
    for k in range(c_set.n_fields):
        f = c_set.fields[k]
        s.fields[ffi.string(f.name).decode()] = _array(f.values, n, _VALUES[f.type], f.components)
    s.info = _info(c_set.info)
    s.box = s.info["box_size"]
    s.periodic = s.info["periodic"]
    return s


class AmrSnapshot:
    """What read_amr returns: a RAMSES output's AMR as this rank holds it.

    boxes: this rank's boxes, a list of (level, lo, {variable: array indexed [x, y, z]}): level 0
        is the run's levelmin, lo the box's first cell on its level (from the domain's corner);
        covered cells hold the average of their children, as RAMSES stores them.
    box_index: each box's place in the whole hierarchy's list (the tool's -boxes.csv order).
    level0_shape, spacing, origin, periodic: the domain, for find_clumps_amr.
    variables, n_leaf_cells (all ranks), info (as Snapshot.info).
    blocks(variable): the boxes as find_clumps_amr takes them.
    """

    def blocks(self, variable="density"):
        if variable not in self.variables:
            raise ValueError("no variable %r read (variables: %s)" % (variable, ", ".join(self.variables) or "none"))
        return [(level, lo, values[variable]) for level, lo, values in self.boxes]

    def __repr__(self):
        return "<phew.AmrSnapshot: %s, %d of its boxes here, %d leaf cells, variables %s>" % (
            self.info["code"], len(self.boxes), self.n_leaf_cells, ", ".join(self.variables))


def read_amr(path, *, variables=("density",), units="code", comm=None):
    """The AMR of a RAMSES output with the hydro variables named (a name or several; None: all of
    them; (): none, the boxes alone), each rank its CPU files' boxes. Lengths in `units` ("code" or "astro"); the variables in code units
    (RAMSES's cosmological density unit makes the mean matter density 1)."""
    call = Call(0, comm)
    with call.agreeing():
        options = ffi.new("phew_read_options *")
        lib.phew_read_options_init(options)
        options.units = _choice(units, _UNITS, "units")
        if not isinstance(path, (str, bytes)) and not hasattr(path, "__fspath__"):
            raise TypeError("path must be a path, not %r" % (path,))
        c_path = ffi.new("char[]", _path_bytes(path))
        if isinstance(variables, (str, bytes)):
            variables = (variables,)
        names = None if variables is None else [ffi.new("char[]", str(v).encode()) for v in variables]
        # NULL: every variable; an empty list (not NULL): none, the hierarchy alone
        c_names = ffi.NULL if names is None else ffi.new("const char *[]", names or 1)
    c_set = ffi.new("phew_amr_set *")
    plan = ffi.new("phew_amr_plan *")
    try:
        call.check(lib.phew_read_amr(call.context, c_path, options, c_names, len(names) if names is not None else 0,
                                     c_set))
        call.check(lib.phew_plan_amr(call.context, ffi.addressof(c_set, "hierarchy"), plan))
        return _amr_snapshot(c_set, plan, call.rank)
    finally:
        lib.phew_amr_plan_free(plan)
        lib.phew_amr_set_free(c_set)


def _amr_snapshot(c_set, plan, rank):
    s = AmrSnapshot()
    amr = plan.amr
    s.variables = [ffi.string(c_set.variable_names[v]).decode() for v in range(c_set.n_variables)]
    s.level0_shape = tuple(amr.level0_dims[k] for k in range(3))
    s.spacing = tuple(amr.spacing[k] for k in range(3))
    s.origin = tuple(amr.origin[k] for k in range(3))
    s.info = _info(c_set.info)
    s.periodic = s.info["periodic"]
    s.n_leaf_cells = c_set.n_leaf_cells
    s.boxes, s.box_index = [], []
    for k in range(amr.n_blocks):
        block = amr.blocks[k]
        if c_set.box_rank[k] != rank:
            continue
        dims = tuple(block.dims[d] for d in range(3))  # the core's x, y, z
        cells = dims[0] * dims[1] * dims[2]
        arrays = {}
        if s.variables and c_set.values[k] != ffi.NULL:
            values = np.frombuffer(ffi.buffer(c_set.values[k], 8 * cells * len(s.variables)), np.float64)
            # x fastest in the files: [z, y, x] in C order, transposed to [x, y, z] (axis k is
            # coordinate k, as everywhere in the package)
            arrays = {name: values[v * cells:(v + 1) * cells].reshape(dims[::-1]).transpose(2, 1, 0).copy()
                      for v, name in enumerate(s.variables)}
        s.boxes.append((int(block.level), tuple(block.lo[d] for d in range(3)), arrays))
        s.box_index.append(k)
    return s
