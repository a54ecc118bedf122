#!/usr/bin/python3
"""Small GADGET-style HDF5 snapshots for the readers' tests, written with h5py in the layouts
GADGET-2/3, GADGET-4 and SWIFT document (their Header attributes, PartTypeN datasets, SWIFT's
Units and Cosmology groups), single-file or split over several files.

Particles: the clone's particles_sample (20,000 clustered particles, float32, box [0, 1)),
scaled to the box of each layout, as part type 1, plus a few gas particles (type 0) and, in
some layouts, stars (type 4), so that choosing a type matters.
"""
import argparse
import os

import h5py
import numpy as np

SAMPLE = os.path.join(os.path.dirname(__file__), "..", "..", "datasets")


def sample_particles():
    pos = np.fromfile(os.path.join(SAMPLE, "particles_sample-pos.raw"), "<f4").reshape(-1, 3)
    vel = np.fromfile(os.path.join(SAMPLE, "particles_sample-vel.raw"), "<f4").reshape(-1, 3)
    return pos, vel


def split(n, parts):
    """Counts of n over parts files, unequal on purpose (the last file may be empty)."""
    if parts == 1:
        return [n]
    cuts = sorted({int(n * f) for f in np.linspace(0.0, 1.0, parts + 1)[1:-1] ** 1.3})
    edges = [0] + cuts + [n]
    return [edges[k + 1] - edges[k] for k in range(parts)]


class Layout:
    """What one code writes: names, types and where the cosmology and units live."""

    def __init__(self, flavour, real="f4", ids="u8", mass_in_table=True, n_types=6):
        self.flavour, self.real, self.ids = flavour, real, ids
        self.mass_in_table, self.n_types = mass_in_table, n_types


def write_header(f, lay, this_file, total, n_files, box, a, h, mass_table):
    hd = f.create_group("Header")
    n_types = lay.n_types
    if lay.flavour == "gadget4":
        hd.attrs["NumPart_ThisFile"] = np.array(this_file, "u8")
        hd.attrs["NumPart_Total"] = np.array(total, "u8")
    else:
        kind = "i8" if lay.flavour == "swift" else "i4"
        hd.attrs["NumPart_ThisFile"] = np.array(this_file, kind)
        hd.attrs["NumPart_Total"] = np.array([t & 0xFFFFFFFF for t in total], "u4")
        hd.attrs["NumPart_Total_HighWord"] = np.array([t >> 32 for t in total], "u4")
    hd.attrs["MassTable"] = np.array(mass_table, "f8")
    hd.attrs["NumFilesPerSnapshot"] = np.int32(n_files)
    hd.attrs["Redshift"] = np.float64(1.0 / a - 1.0)
    if lay.flavour == "swift":
        hd.attrs["BoxSize"] = np.array([box] * 3, "f8")
        hd.attrs["Time"] = np.float64(0.75)  # the cosmic time, not a
        hd.attrs["Scale-factor"] = np.float64(a)
        hd.attrs["Code"] = np.bytes_(b"SWIFT")
        hd.attrs["Dimension"] = np.int32(3)
        co = f.create_group("Cosmology")
        co.attrs["Cosmological run"] = np.int32(1)
        co.attrs["h"] = np.float64(h)
        co.attrs["Omega_m"] = np.float64(0.3)
        co.attrs["Omega_lambda"] = np.float64(0.7)
        co.attrs["Omega_b"] = np.float64(0.045)
        un = f.create_group("Units")
        un.attrs["Unit length in cgs (U_L)"] = np.float64(3.08567758e24)
        un.attrs["Unit mass in cgs (U_M)"] = np.float64(1.98841e43)
        un.attrs["Unit time in cgs (U_t)"] = np.float64(3.08567758e19)
        return
    hd.attrs["BoxSize"] = np.float64(box)
    hd.attrs["Time"] = np.float64(a)
    cosmology = {"HubbleParam": h, "Omega0": 0.3, "OmegaLambda": 0.7, "OmegaBaryon": 0.045}
    units = {"UnitLength_in_cm": 3.085678e24, "UnitMass_in_g": 1.989e43, "UnitVelocity_in_cm_per_s": 1e5}
    if lay.flavour == "gadget4":
        par = f.create_group("Parameters")
        par.attrs["ComovingIntegrationOn"] = np.int32(1)
        for k, v in list(cosmology.items()) + list(units.items()):
            par.attrs[k] = np.float64(v)
        f.create_group("Config").attrs["PERIODIC"] = np.int32(1)
    else:  # GADGET-2/3: the cosmology in the Header, no units (GADGET's defaults: kpc/h)
        for k, v in cosmology.items():
            hd.attrs[k] = np.float64(v)
        hd.attrs["Flag_Sfr"] = np.int32(0)


def write_snapshot(stem, lay, types, n_files, box, a, h):
    """types: {t: dict(pos=, vel=, ids=, mass=)}; returns the file names."""
    counts = {t: split(len(d["ids"]), n_files) for t, d in types.items()}
    total = [len(types[t]["ids"]) if t in types else 0 for t in range(lay.n_types)]
    mass_table = [0.0] * lay.n_types
    for t, d in types.items():
        if lay.mass_in_table and np.all(d["mass"] == d["mass"][0]):
            mass_table[t] = float(d["mass"][0])
    names = []
    for k in range(n_files):
        name = f"{stem}.{k}.hdf5" if n_files > 1 else f"{stem}.hdf5"
        names.append(name)
        this_file = [counts[t][k] if t in types else 0 for t in range(lay.n_types)]
        with h5py.File(name, "w") as f:
            write_header(f, lay, this_file, total, n_files, box, a, h, mass_table)
            for t, d in types.items():
                lo = sum(counts[t][:k])
                hi = lo + counts[t][k]
                g = f.create_group(f"PartType{t}")
                real = "f8" if lay.flavour == "swift" else lay.real
                g["Coordinates"] = d["pos"][lo:hi].astype(real)
                g["Velocities"] = d["vel"][lo:hi].astype(lay.real)
                g["ParticleIDs"] = d["ids"][lo:hi].astype(lay.ids)
                if mass_table[t] == 0.0:
                    g["Masses"] = d["mass"][lo:hi].astype(lay.real)
                g["Potential"] = (-d["pos"][lo:hi, 0] * 3.0).astype("f4")  # another field
    return names


def particles(box, seed):
    """Type 1: the sample (ids shuffled, 64-bit beyond 2^32); type 0: gas; type 4: stars."""
    pos, vel = sample_particles()
    rng = np.random.default_rng(seed)
    n = len(pos)
    ids = rng.permutation(n).astype("u8") + np.uint64(5_000_000_000)
    dm = dict(pos=pos.astype("f8") * box, vel=vel, ids=ids, mass=np.full(n, 0.75))
    gas_n, star_n = 3000, 500
    gas = dict(pos=rng.random((gas_n, 3)) * box, vel=rng.normal(0, 50, (gas_n, 3)),
               ids=np.arange(gas_n, dtype="u8") + 1, mass=rng.uniform(0.1, 0.2, gas_n))
    stars = dict(pos=rng.random((star_n, 3)) * box, vel=rng.normal(0, 50, (star_n, 3)),
                 ids=np.arange(star_n, dtype="u8") + 100_000, mass=rng.uniform(0.01, 0.02, star_n))
    return {0: gas, 1: dm, 4: stars}


CASES = {
    # name: (layout, files, box, a, h)
    "gadget4_multi": (Layout("gadget4", real="f4", ids="u8", mass_in_table=True), 3, 50.0, 0.5, 0.7),
    "gadget2_single": (Layout("gadget2", real="f8", ids="u4", mass_in_table=False), 1, 50000.0, 1.0, 0.7),
    "swift_multi": (Layout("swift", real="f4", ids="u8", mass_in_table=False, n_types=7), 2, 71.4285714, 0.8, 0.7),
}


def make(out_dir, name):
    lay, n_files, box, a, h = CASES[name]
    types = particles(box, seed=len(name))
    if lay.ids == "u4":
        for d in types.values():
            d["ids"] = d["ids"] % np.uint64(2**32 - 1)
    os.makedirs(out_dir, exist_ok=True)
    return write_snapshot(os.path.join(out_dir, name), lay, types, n_files, box, a, h)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("out_dir")
    ap.add_argument("--case", choices=sorted(CASES), action="append")
    args = ap.parse_args()
    for case in args.case or sorted(CASES):
        print(case, make(args.out_dir, case))
