"""Independent readings of the snapshots the readers' tests use, in numpy (RAMSES's Fortran
records, walked marker by marker) and h5py (GADGET-style HDF5), written from the formats'
documentation, not from phew's C code."""
import glob
import os
import re

import numpy as np

RAMSES_FAMILIES = {"DM": 1, "star": 2, "cloud": 3, "debris": 4, "other": 5}


def fortran_records(path):
    """Every record of a Fortran unformatted sequential file, as bytes (both markers checked)."""
    data = open(path, "rb").read()
    records, at = [], 0
    while at < len(data):
        n = int(np.frombuffer(data, "<i4", 1, at)[0])
        assert n >= 0 and int(np.frombuffer(data, "<i4", 1, at + 4 + n)[0]) == n, (path, at)
        records.append(data[at + 4: at + 4 + n])
        at += 8 + n
    return records


def ramses_info(folder):
    number = int(re.search(r"output_(\d+)", os.path.abspath(folder)).group(1))
    values = {}
    with open(os.path.join(folder, f"info_{number:05d}.txt")) as f:
        for line in f:
            if "=" in line:
                key, value = (s.strip() for s in line.split("=", 1))
                try:
                    values[key] = float(value)
                except ValueError:
                    values[key] = value
    values["number"] = number
    return values


DESCRIPTOR_TYPES = {"d": "<f8", "f": "<f4", "i": "<i4", "b": "<i1", "q": "<i8", "l": "<i8", "B": "<u1"}


def ramses_particles(folder, family="DM"):
    """The chosen family's particles of every CPU file in order: {field name: array}."""
    info = ramses_info(folder)
    fields = []
    with open(os.path.join(folder, "part_file_descriptor.txt")) as f:
        for line in f:
            if not line.startswith("#") and line.strip():
                _, name, kind = (s.strip() for s in line.split(","))
                fields.append((name, DESCRIPTOR_TYPES[kind]))
    out = {name: [] for name, _ in fields}
    for cpu in range(1, int(info["ncpu"]) + 1):
        records = fortran_records(os.path.join(folder, f"part_{info['number']:05d}.out{cpu:05d}"))
        npart = int(np.frombuffer(records[2], "<i4")[0])
        data = records[8:]
        assert len(data) == len(fields)
        values = {name: np.frombuffer(rec, kind) for (name, kind), rec in zip(fields, data)}
        for v in values.values():
            assert len(v) == npart
        keep = values["family"] == RAMSES_FAMILIES[family]
        for name in out:
            out[name].append(values[name][keep])
    return {name: np.concatenate(parts) for name, parts in out.items()}, info


def gadget_files(stem):
    single = stem + ".hdf5"
    if os.path.exists(single):
        return [single]
    files = glob.glob(stem + ".*.hdf5")
    return sorted(files, key=lambda p: int(p.rsplit(".", 2)[1]))


def gadget_particles(stem, part_type=1):
    """PartType<part_type>'s datasets over the files in order, masses from the table if absent."""
    import h5py

    out = {}
    for path in gadget_files(stem):
        with h5py.File(path, "r") as f:
            header = dict(f["Header"].attrs)
            group = f.get(f"PartType{part_type}")
            if group is None:
                continue
            for name, dataset in group.items():
                out.setdefault(name, []).append(dataset[...])
    arrays = {name: np.concatenate(parts) for name, parts in out.items()}
    if "Masses" not in arrays:
        arrays["Masses"] = np.full(len(arrays["ParticleIDs"]), header["MassTable"][part_type])
    return arrays, header
