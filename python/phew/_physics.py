"""phew.halo_properties: unbinding and halo properties of any grouping of particles (PHEW's
clumps with their parents, Friends-of-Friends or HOP groups, or labels made elsewhere) over the
core's phew_structure_physics (docs/physics.md defines every column)."""

import numpy as np

from . import _args, _tables
from ._clumps import ClumpResult
from ._core import Call, mpi_max
from ._ffi import ffi, lib
from ._points import GroupResult, _Particles
from ._snapshots import Snapshot

G_ASTRO = 4.30091727003628e-9  # Mpc (km/s)^2 / Msun: astronomers' units without a cosmology


class PhysicsResult:
    """What halo_properties returns.

    bound_label: per particle, the innermost structure it is bound to (-1: none);
    bound_energy: its specific energy there (NaN where unbound);
    structures: a Table, one row per structure (rank 0; empty elsewhere), the columns of
        docs/physics.md (the tool's catalogue columns after the finder's own);
    bound_ids, unbound_ids: this rank's share of the membership lists (docs/physics.md);
    softening, gravitational_constant: as used; n_unbound: particles bound to nothing;
    tracers: (rank 0) every structure's most-bound particles, for MergerTree.
    """

    def __init__(self, bound_label, bound_energy, structures, result):
        self.bound_label, self.bound_energy, self.structures = bound_label, bound_energy, structures
        self.bound_ids = _ids(result.bound_ids, result.n_bound_ids)
        self.unbound_ids = _ids(result.unbound_ids, result.n_unbound_ids)
        self.softening = result.softening_used
        self.gravitational_constant = result.gravitational_constant_used
        self.n_unbound = result.n_unbound
        self.seconds = result.seconds
        from ._links import tracers_copy

        self.tracers = tracers_copy(ffi.addressof(result, "most_bound"))  # rank 0: for MergerTree

    def __repr__(self):
        return "<phew.PhysicsResult: %d structures, %d particles bound to none>" % (
            len(self.structures), self.n_unbound)


def _ids(pointer, n):
    if n == 0 or pointer == ffi.NULL:
        return np.zeros(0, np.int64)
    return np.frombuffer(ffi.buffer(pointer, 8 * n), np.int64).copy()


def halo_properties(positions, velocities, labels, *, parent=None, centre=None, n_structures=None, masses=None,
                    ids=None, box=None, origin=0.0, periodic=False, cosmology=None, gravitational_constant=None,
                    unbind=True, unbind_top=True, potential="exact", softening=None, opening_angle=0.5,
                    direct_max=1000, tolerance=0.01, max_iterations=100, n_mass_bins=50, log_bins=True,
                    profile_r_min=None, saddle_cut=False, gather_max=0, n_most_bound=200, threads=0, comm=None,
                    progress=None):
    """Unbinding and properties of the structures that label the particles.

    labels: per particle its innermost structure (0 .. n_structures - 1, or -1), or a result of
        find_clumps_points (its clumps with their parents, the peaks as centres), hop (the
        groups, their peaks as centres) or friends_of_friends (the groups).
    parent, centre: per structure its parent (-1: top level) and the centre of the spherical
        method (3 numbers), the same on every rank; None: every structure top level, the
        centres of mass.
    cosmology: None (G = gravitational_constant, 1 by default), a dict with hubble, omega_m,
        omega_lambda and scale_factor (positions comoving Mpc/h, velocities peculiar km/s,
        masses Msun/h), or a Snapshot read with units="astro" (its own cosmology, as the tool).
    The other parameters are the core's (phew_physics_params): potential "exact" or
    "spherical", softening (None: 1/50 of the mean spacing), ...; n_most_bound: the tracers
    kept per structure for MergerTree (its most-bound particles; 0: none).
    """
    call = Call(threads, comm, progress)
    labels, parent, centre = _grouping(labels, parent, centre, comm)  # collective: before any check
    with call.agreeing():
        parts = _Particles(call, positions, masses, velocities, ids, box, origin, periodic)
        if parts.velocities is None:
            raise ValueError("halo_properties needs the particles' velocities")
        label = _args.int64_array(labels, "labels (one per particle)", (parts.n,))
        local_count = int(label.max(initial=-1)) + 1
        p = _params(cosmology, gravitational_constant, unbind, unbind_top, potential, softening, opening_angle,
                    direct_max, tolerance, max_iterations, n_mass_bins, log_bins, profile_r_min, saddle_cut,
                    gather_max)
        p.n_most_bound = _args.integer(n_most_bound, "n_most_bound", 0)
    if n_structures is None:  # every rank's labels agreed to be usable: count them together
        n_structures = len(parent) if parent is not None else local_count
        if comm is not None:
            n_structures = comm.allreduce(n_structures, op=mpi_max())
    with call.agreeing():
        c_structures = ffi.new("phew_structures *")
        c_structures.n_structures = _args.integer(n_structures, "n_structures", 0)
        c_structures.label = ffi.cast("const int64_t *", label.ctypes.data)
        if parent is not None:
            parent = _args.int64_array(parent, "parent (one per structure)", (n_structures,))
            c_structures.parent = ffi.cast("const int64_t *", parent.ctypes.data)
        if centre is not None:
            centre = np.ascontiguousarray(centre, np.float64)
            if centre.shape != (n_structures, 3):
                raise ValueError("centre must be (%d, 3)" % n_structures)
            c_structures.centre = ffi.cast("const double *", centre.ctypes.data)
    c_input = parts.input(call)
    bound = np.empty(parts.n, np.int64)
    energy = np.empty(parts.n, np.float64)
    result = ffi.new("phew_physics_result *")
    try:
        call.check(lib.phew_structure_physics(call.context, c_input, c_structures, p,
                                              ffi.cast("int64_t *", bound.ctypes.data),
                                              ffi.cast("double *", energy.ctypes.data), result))
        meta = {"softening": result.softening_used, "gravitational_constant": result.gravitational_constant_used,
                "cosmology": dict(comoving=p.cosmology.comoving, hubble=p.cosmology.hubble,
                                  omega_m=p.cosmology.omega_m, omega_lambda=p.cosmology.omega_lambda,
                                  scale_factor=p.cosmology.scale_factor),
                "units": "docs/physics.md: with a cosmology comoving Mpc/h, Msun/h, km/s"}
        table = _tables.read_rows(result.structures, result.n_structures, _structure_dtype(), meta)
        return PhysicsResult(bound, energy, table, result)
    finally:
        lib.phew_physics_result_free(result)


def _structure_dtype():
    return _tables.column_dtype(lib.phew_structure_columns, None, "phew_structure")


def _grouping(labels, parent, centre, comm):
    """Labels, parents and centres from a finder's result, as the tool takes them."""
    def everywhere(values):  # the tables live on rank 0; the core wants them on every rank
        return comm.bcast(values, root=0) if comm is not None else values

    if isinstance(labels, ClumpResult):
        clumps = labels.clumps
        if parent is None:
            parent = everywhere(np.asarray(clumps["ParentId"]))
        if centre is None:
            centre = everywhere(np.stack([clumps["PeakX"], clumps["PeakY"], clumps["PeakZ"]], axis=1))
        return labels.clump_id, parent, centre
    if isinstance(labels, GroupResult):
        groups = labels.groups
        if centre is None and "PeakX" in groups.dtype.names:
            centre = everywhere(np.stack([groups["PeakX"], groups["PeakY"], groups["PeakZ"]], axis=1))
        return labels.group_id, parent, centre
    return np.asarray(labels), parent, centre


def _params(cosmology, gravitational_constant, unbind, unbind_top, potential, softening, opening_angle, direct_max,
            tolerance, max_iterations, n_mass_bins, log_bins, profile_r_min, saddle_cut, gather_max):
    p = ffi.new("phew_physics_params *")
    lib.phew_physics_params_init(p)
    p.unbind, p.unbind_top = _args.boolean(unbind, "unbind"), _args.boolean(unbind_top, "unbind_top")
    p.saddle_cut, p.log_bins = _args.boolean(saddle_cut, "saddle_cut"), _args.boolean(log_bins, "log_bins")
    if potential not in ("exact", "spherical"):
        raise ValueError("potential must be 'exact' or 'spherical', not %r" % (potential,))
    p.potential = lib.PHEW_POTENTIAL_EXACT if potential == "exact" else lib.PHEW_POTENTIAL_SPHERICAL
    if softening is not None:
        p.softening = _args.number(softening, "softening")
    if profile_r_min is not None:
        p.profile_r_min = _args.number(profile_r_min, "profile_r_min")
    p.opening_angle = _args.number(opening_angle, "opening_angle")
    p.tolerance = _args.number(tolerance, "tolerance")
    p.direct_max = _args.integer(direct_max, "direct_max", 0)
    p.max_iterations = _args.integer(max_iterations, "max_iterations", 1, 2 ** 31 - 1)
    p.n_mass_bins = _args.integer(n_mass_bins, "n_mass_bins", 1, 2 ** 31 - 1)
    p.gather_max = _args.integer(gather_max, "gather_max", 0)
    if isinstance(cosmology, Snapshot):
        info = cosmology.info
        if info["units"] == "astro" and info["cosmological"]:
            cosmology = dict(hubble=info["hubble"], omega_m=info["omega_matter"], omega_lambda=info["omega_lambda"],
                             scale_factor=info["scale_factor"])
        else:
            if info["units"] == "astro" and gravitational_constant is None:
                gravitational_constant = G_ASTRO
            cosmology = None
    if cosmology is not None:
        if not isinstance(cosmology, dict):
            raise TypeError("cosmology must be None, a dict or a Snapshot, not %s" % type(cosmology).__name__)
        unknown = set(cosmology) - {"hubble", "omega_m", "omega_lambda", "scale_factor"}
        if unknown:
            raise ValueError("cosmology: unknown keys %s" % sorted(unknown))
        p.cosmology.comoving = 1
        for key in ("hubble", "omega_m", "omega_lambda", "scale_factor"):
            if key not in cosmology:
                raise ValueError("cosmology needs %s" % key)
            setattr(p.cosmology, key, _args.number(cosmology[key], key))
    if gravitational_constant is not None:
        p.gravitational_constant = _args.number(gravitational_constant, "gravitational_constant")
    return p
