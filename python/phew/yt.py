"""phew on yt datasets (python3-yt): a field on a uniform covering grid or on the AMR hierarchy,
and the particles of one type, handed to the finders; the tables come back as phew's, with the
yt units of every column in table.meta["units"] and with_units(table) for unyt arrays.

    import yt, phew.yt
    ds = yt.load(...)
    r = phew.yt.find_clumps(ds, ("gas", "density"), level=0, threshold=ds.quan(1e-27, "g/cm**3"))
    h = phew.yt.particles(ds, "fof", ptype="DM", linking_length=0.2)
    phew.yt.with_units(h.groups, ds)["Mass"].to("Msun")
"""
import numpy as np

import phew

_POSITION_COLUMNS = ("PeakX", "PeakY", "PeakZ", "CenterOfMassX", "CenterOfMassY", "CenterOfMassZ", "Radius")
_VELOCITY_COLUMNS = ("MeanVelocityX", "MeanVelocityY", "MeanVelocityZ", "VelocityDispersion")


def _quantity(value, units, name):
    """A threshold given as a number (in the field's units) or a unyt quantity."""
    if value is None or isinstance(value, str) or not hasattr(value, "to"):
        return value
    try:
        return float(value.to(units).d)
    except Exception as e:  # unyt's conversion errors have no common base class
        raise ValueError("%s: %s cannot be given in %s (%s)" % (name, value, units, e)) from None


def _convert_thresholds(options, density_units, length_unit):
    """Thresholds as unyt quantities into the numbers find_clumps takes (densities in the
    field's units, the mass threshold in them times length_unit**3)."""
    for key in ("threshold", "saddle"):
        if key in options:
            options[key] = _quantity(options[key], density_units, key)
    if "mass_threshold" in options:
        options["mass_threshold"] = _quantity(options["mass_threshold"], "(%s)*(%s)**3" % (density_units, length_unit),
                                              "mass_threshold")


def _units(table, density=None, length=None, mass=None, velocity=None):
    units = {}
    for name in table.dtype.names:
        if name in _POSITION_COLUMNS and length:
            units[name] = length
        elif name in _VELOCITY_COLUMNS and velocity:
            units[name] = velocity
        elif name in ("Mass",) and mass:
            units[name] = mass
        elif name == "Volume" and length:
            units[name] = "(%s)**3" % length
        elif name.endswith("Density") and density:
            units[name] = density
    table.meta = dict(table.meta, units=units)
    return table


def with_units(table, ds=None):
    """The columns of a table as unyt arrays where meta["units"] names a unit, else numpy; code
    units (code_length, code_mass) need the dataset they belong to (ds.arr)."""
    from unyt import unyt_array

    units = table.meta.get("units", {})
    make = ds.arr if ds is not None else unyt_array
    return {name: make(np.asarray(table[name]), units[name]) if name in units else np.asarray(table[name])
            for name in table.dtype.names}


def find_clumps(ds, field=("gas", "density"), *, level=0, length_unit="code_length", **options):
    """PHEW on `field` sampled on the covering grid of `level` over the whole domain (yt's
    ds.covering_grid: every cell at that level's resolution). Thresholds may be unyt
    quantities; options are phew.find_clumps's. Positions in length_unit, masses in the
    field's units times length_unit**3."""
    dims = np.asarray(ds.domain_dimensions) * ds.refine_by ** level
    grid = ds.covering_grid(level, left_edge=ds.domain_left_edge, dims=dims)
    rho = grid[field]
    units = str(rho.units)
    _convert_thresholds(options, units, length_unit)
    width = ds.domain_width.to(length_unit).d
    r = phew.find_clumps(np.asarray(rho.d), spacing=tuple(width / dims), origin=tuple(
        ds.domain_left_edge.to(length_unit).d), periodic=tuple(bool(p) for p in ds.periodicity), **options)
    mass = "(%s)*(%s)**3" % (units, length_unit)
    for table in (r.clumps, r.haloes, r.dendrogram):
        _units(table, density=units, length=length_unit, mass=mass)
    return r


def find_clumps_amr(ds, field=("gas", "density"), *, length_unit="code_length", **options):
    """PHEW on `field` over the leaf cells of yt's AMR hierarchy (ds.index.grids; refinement
    by 2, level 0 tiling the domain). Labels come back per grid, in ds.index.grids order."""
    if ds.refine_by != 2:
        raise ValueError("phew's AMR needs a refinement ratio of 2, not %s" % ds.refine_by)
    blocks = []
    units = None
    for g in ds.index.grids:
        rho = g[field]
        units = units or str(rho.units)
        blocks.append((int(g.Level), tuple(int(i) for i in g.get_global_startindex()), np.asarray(rho.d)))
    _convert_thresholds(options, units, length_unit)
    dims = tuple(int(n) for n in ds.domain_dimensions)
    width = ds.domain_width.to(length_unit).d
    r = phew.find_clumps_amr(blocks, level0_shape=dims, spacing=tuple(width / np.asarray(dims)),
                             origin=tuple(ds.domain_left_edge.to(length_unit).d),
                             periodic=tuple(bool(p) for p in ds.periodicity), **options)
    mass = "(%s)*(%s)**3" % (units, length_unit)
    for table in (r.clumps, r.haloes, r.dendrogram):
        _units(table, density=units, length=length_unit, mass=mass)
    return r


def particle_arrays(ds, ptype="all", length_unit="code_length", mass_unit="code_mass", velocity_unit="km/s"):
    """Positions (n, 3), masses, velocities (or None) and ids (or None) of one particle type,
    in the units asked for, and the box (sizes, origin, periodic axes)."""
    ad = ds.all_data()
    fields = set(ds.field_list) | set(ds.derived_field_list)
    pos = np.stack([ad[ptype, "particle_position_" + a].to(length_unit).d for a in "xyz"], axis=1)
    masses = ad[ptype, "particle_mass"].to(mass_unit).d if (ptype, "particle_mass") in fields else None
    velocities = None
    if (ptype, "particle_velocity_x") in fields:
        velocities = np.stack([ad[ptype, "particle_velocity_" + a].to(velocity_unit).d for a in "xyz"], axis=1)
    ids = None
    for name in ("particle_identity", "particle_index", "particle_ids"):
        if (ptype, name) in fields:
            ids = np.asarray(ad[ptype, name].d).astype(np.int64)
            break
    box = dict(box=tuple(ds.domain_width.to(length_unit).d), origin=tuple(ds.domain_left_edge.to(length_unit).d),
               periodic=tuple(bool(p) for p in ds.periodicity))
    return pos, masses, velocities, ids, box


def particles(ds, finder="fof", *, ptype="all", length_unit="code_length", mass_unit="code_mass",
              velocity_unit="km/s", **options):
    """Friends-of-Friends ("fof"), HOP ("hop") or PHEW ("phew") on the particles of `ptype`,
    with the dataset's box; options are the finder's. The tables carry yt units."""
    finders = {"fof": phew.friends_of_friends, "hop": phew.hop, "phew": phew.find_clumps_points}
    if finder not in finders:
        raise ValueError("finder must be one of %s, not %r" % (", ".join(finders), finder))
    pos, masses, velocities, ids, box = particle_arrays(ds, ptype, length_unit, mass_unit, velocity_unit)
    r = finders[finder](pos, masses=masses, velocities=velocities, ids=ids, **box, **options)
    tables = (r.clumps, r.haloes, r.dendrogram) if finder == "phew" else (r.groups,)
    for table in tables:
        _units(table, density=None, length=length_unit, mass=mass_unit, velocity=velocity_unit)
    return r
