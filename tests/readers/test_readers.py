#!/usr/bin/python3
"""The snapshot readers (libphew_readers) against independent readings of the same files
(reference_readers.py: numpy over RAMSES's Fortran records, h5py over HDF5), field by field,
on 1 to 4 ranks: the real RAMSES output in datasets/ramses_cosmo32 and HDF5 snapshots written
here in the GADGET-2, GADGET-4 and SWIFT layouts (make_snapshots.py)."""
import argparse
import csv
import json
import os
import shutil
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
import make_snapshots  # noqa: E402
import ramses_amr_reference  # noqa: E402
import reference_readers as ref  # noqa: E402

CM_PER_MPC = 3.0856775814913673e24
G_PER_MSUN = 1.98841586e33
VALUE_TYPES = ["<f4", "<f8", "<i1", "<i2", "<i4", "<i8", "<u1", "<u2", "<u4", "<u8"]
failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
        print("FAIL:", what)


def mpi_env():
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OMPI_", "PMIX_"))}
    env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_rmaps_base_oversubscribe="1", OMPI_MCA_pml="ob1")
    return env


def run_dump(args, path, ranks, out, options=()):
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    command = [args.dump, path, out, *options]
    if ranks > 1:
        command = [args.mpiexec, "-np", str(ranks), *command]
    return subprocess.run(command, capture_output=True, text=True, env=mpi_env(), timeout=300)


def load_dump(out, ranks):
    """The ranks' shares, concatenated in rank order, and rank 0's description."""
    shares = []
    for r in range(ranks):
        desc = {"fields": []}
        with open(os.path.join(out, f"rank{r}.txt")) as f:
            for line in f:
                key, _, value = line.rstrip("\n").partition(" ")
                if key == "field":
                    name, components, kind = value.split()
                    desc["fields"].append((name, int(components), VALUE_TYPES[int(kind)]))
                else:
                    desc[key] = value
        shares.append(desc)
    real = "<f4" if shares[0]["type"] == "float32" else "<f8"
    arrays = {}
    names = [("position", real, 3), ("mass", real, 1), ("id", "<i8", 1)]
    if shares[0]["velocity"] == "1":
        names.append(("velocity", real, 3))
    names += [(name, kind, comps) for name, comps, kind in shares[0]["fields"]]
    for name, kind, comps in names:
        parts = [np.fromfile(os.path.join(out, f"rank{r}_{name}.bin"), kind) for r in range(ranks)]
        arrays[name] = np.concatenate(parts).reshape(-1, comps) if comps > 1 else np.concatenate(parts)
    first = 0
    for r, desc in enumerate(shares):  # consecutive shares, the same totals and metadata
        check(int(desc["first"]) == first, f"{out}: rank {r} first {desc['first']} != {first}")
        first += int(desc["n"])
        for key in desc:
            if key not in ("first", "n"):
                check(desc[key] == shares[0][key], f"{out}: rank {r} says {key} {desc[key]}, rank 0 {shares[0][key]}")
    check(first == int(shares[0]["n_total"]), f"{out}: the shares add up to {first}, n_total {shares[0]['n_total']}")
    return arrays, shares[0]


def same(a, b, what):
    ok = a.shape == b.shape and a.dtype == b.dtype and np.array_equal(a, b)
    check(ok, f"{what}: differs (shapes {a.shape} {b.shape})")


def ramses_expected(folder, units):
    """The DM particles of the output read by reference_readers, in code or astro units."""
    fields, info = ref.ramses_particles(folder)
    pos = np.stack([fields[f"position_{c}"] for c in "xyz"], axis=1)
    vel = np.stack([fields[f"velocity_{c}"] for c in "xyz"], axis=1)
    mass = fields["mass"]
    if units == "astro":  # comoving Mpc/h, Msun/h, km/s; unit_l is proper at aexp
        h = info["H0"] / 100.0
        pos = pos * (info["unit_l"] / info["aexp"] / CM_PER_MPC * h)
        mass = mass * (info["unit_d"] * info["unit_l"] * info["unit_l"] * info["unit_l"] / G_PER_MSUN * h)
        vel = vel * (info["unit_l"] / info["unit_t"] / 1.0e5)
    return pos, vel, mass, fields, info


def test_ramses(args):
    folder = os.path.join(args.source_dir, "datasets", "ramses_cosmo32", "output_00003")
    for units in ("code", "astro"):
        pos, vel, mass, fields, info = ramses_expected(folder, units)
        for ranks in args.ranks:
            out = os.path.join(args.work_dir, f"ramses_{units}_np{ranks}")
            path = folder if ranks % 2 else os.path.join(folder, "info_00003.txt")  # both ways in
            res = run_dump(args, path, ranks, out, ["--units", units, "--all-fields"])
            check(res.returncode == 0, f"ramses {units} np{ranks}: exit {res.returncode}: {res.stderr}")
            if res.returncode != 0:
                continue
            got, desc = load_dump(out, ranks)
            what = f"ramses {units} np{ranks}"
            same(got["position"], pos, what + " positions")
            same(got["velocity"], vel, what + " velocities")
            same(got["mass"], mass, what + " masses")
            same(got["id"], fields["identity"].astype("<i8"), what + " ids")
            for name in ("levelp", "family", "tag"):
                same(got[name], fields[name], f"{what} field {name}")
            check(desc["code"] == "RAMSES" and desc["n_files"] == "2" and desc["periodic_0"] == "1", what + " info")
            check(float(desc["scale_factor"]) == info["aexp"] and float(desc["hubble"]) == 0.7, what + " cosmology")
            if units == "astro":  # physics, not the same formula: a 25 Mpc/h box, Omega_m of rho_crit in it
                box = float(desc["box_size_0"])
                check(abs(box - 25.0) < 1e-5, f"{what}: box {box} Mpc/h, the run's is 25")
                total = float(np.sum(got["mass"]))
                expected_total = 0.3 * 2.77536627e11 * 25.0**3
                check(abs(total / expected_total - 1) < 1e-3, f"{what}: total mass {total:.6g} Msun/h, expected "
                      f"Omega_m rho_crit V = {expected_total:.6g}")
                check(desc["length_unit"] == "Mpc/h" and desc["mass_unit"] == "Msun/h", what + " unit names")
    print("ramses: %d particles checked on ranks %s" % (len(pos), args.ranks))


def gadget_expected(stem, case, part_type, units):
    arrays, header = ref.gadget_particles(stem, part_type)
    lay, _, _, a, h = make_snapshots.CASES[case]
    stored = ["Coordinates", "Velocities"] + (["Masses"] if header["MassTable"][part_type] == 0 else [])
    wide = any(arrays[n].dtype == np.float64 for n in stored)  # the datasets, not the table
    real = np.float64 if wide else np.float32
    pos, vel, mass = (arrays[n].astype(real) for n in ("Coordinates", "Velocities", "Masses"))
    if units == "astro":
        if lay.flavour == "swift":  # comoving Mpc (no h), peculiar velocities already
            length, m, v = 3.08567758e24 / CM_PER_MPC * h, 1.98841e43 / G_PER_MSUN * h, 3.08567758e24 / 3.08567758e19 / 1e5
        elif lay.flavour == "gadget4":
            length, m, v = 3.085678e24 / CM_PER_MPC, 1.989e43 / G_PER_MSUN, 1e5 / 1e5 * np.sqrt(a)
        else:  # GADGET-2 without units: its defaults, kpc/h and 1e10 Msun/h
            length, m, v = 3.085678e21 / CM_PER_MPC, 1.989e43 / G_PER_MSUN, 1e5 / 1e5 * np.sqrt(a)
        pos, mass, vel = ((x.astype(np.float64) * f).astype(real) for x, f in ((pos, length), (mass, m), (vel, v)))
    return pos, vel, mass, arrays


def test_gadget(args, case):
    files = make_snapshots.make(os.path.join(args.work_dir, case), case)
    stem = files[0][: -len(".0.hdf5")] if len(files) > 1 else files[0][: -len(".hdf5")]
    for part_type in (1, 0):
        for units in ("code", "astro"):
            pos, vel, mass, arrays = gadget_expected(stem, case, part_type, units)
            for ranks in args.ranks:
                what = f"{case} type {part_type} {units} np{ranks}"
                out = os.path.join(args.work_dir, f"{case}_{part_type}_{units}_np{ranks}")
                res = run_dump(args, files[0], ranks, out,
                               ["--particle-type", str(part_type), "--units", units, "--all-fields"])
                check(res.returncode == 0, f"{what}: exit {res.returncode}: {res.stderr}")
                if res.returncode != 0:
                    continue
                got, desc = load_dump(out, ranks)
                same(got["position"], pos, what + " positions")
                same(got["velocity"], vel, what + " velocities")
                same(got["mass"], mass, what + " masses")
                same(got["id"], arrays["ParticleIDs"].astype("<i8"), what + " ids")
                same(got["Potential"], arrays["Potential"], what + " field Potential")
                check(int(desc["n_files"]) == len(files), f"{what}: n_files {desc['n_files']}")
                expected_code = "SWIFT" if case.startswith("swift") else "GADGET"
                check(desc["code"] == expected_code, f"{what}: code {desc['code']}")
                a = make_snapshots.CASES[case][3]
                check(abs(float(desc["scale_factor"]) - a) < 1e-12, f"{what}: scale factor {desc['scale_factor']}")
    print(f"{case}: {len(files)} file(s) checked on ranks {args.ranks}")


def swift_expected(paths, units):
    """PartType1 of files written by SWIFT itself (h5py; a virtual file reads through), in code
    units or, from the files' own Units and Cosmology groups, in comoving Mpc/h, Msun/h, km/s."""
    import h5py

    parts = {name: [] for name in ("Coordinates", "Velocities", "Masses", "ParticleIDs")}
    for path in paths:
        with h5py.File(path, "r") as f:
            for name in parts:
                parts[name].append(f["PartType1"][name][...])
            header, unit, cosmology = (dict(f[g].attrs) for g in ("Header", "Units", "Cosmology"))
    pos, vel, mass = (np.concatenate(parts[n]).astype(np.float64) for n in ("Coordinates", "Velocities", "Masses"))
    length, m, v = 1.0, 1.0, 1.0
    if units == "astro":
        h, length_cm = float(cosmology["h"][0]), float(unit["Unit length in cgs (U_L)"][0])
        length = length_cm / CM_PER_MPC * h
        m = float(unit["Unit mass in cgs (U_M)"][0]) / G_PER_MSUN * h
        v = length_cm / float(unit["Unit time in cgs (U_t)"][0]) / 1.0e5
    ids = np.concatenate(parts["ParticleIDs"]).astype("<i8")
    return pos * length, vel * v, mass * m, ids, float(header["BoxSize"][0]) * length, float(header["Scale-factor"][0])


def fof_reference(pos, box, b):
    """Friends-of-Friends by scipy: pairs within b (periodic), connected components; the groups
    of at least 20 particles as sets of particle indices."""
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components
    from scipy.spatial import cKDTree

    pairs = cKDTree(pos, boxsize=box).query_pairs(b, output_type="ndarray")
    graph = coo_matrix((np.ones(len(pairs)), (pairs[:, 0], pairs[:, 1])), shape=(len(pos), len(pos)))
    _, label = connected_components(graph, directed=False)
    members = {}
    for i, g in enumerate(label.tolist()):
        members.setdefault(g, []).append(i)
    return sorted(frozenset(m) for m in members.values() if len(m) >= 20)


def test_swift_real(args):
    """Snapshots written by SWIFT itself (datasets/swift_dm16: a single file at a = 1 and a
    distributed output of two files plus SWIFT's virtual file at a = 0.2): every field as h5py
    reads it, on every rank count and in both unit systems; then FoF through the CLI finds
    the groups scipy finds in the same particles, the same bytes on 1 and 3 ranks."""
    folder = os.path.join(args.source_dir, "datasets", "swift_dm16")
    parts = os.path.join(folder, "distributed", "snap_0002")
    cases = [("single", os.path.join(folder, "snap_0003.hdf5"), [os.path.join(folder, "snap_0003.hdf5")], 1),
             ("distributed", os.path.join(parts, "snap_0002.0.hdf5"),
              [os.path.join(parts, f"snap_0002.{k}.hdf5") for k in (0, 1)], 2),
             ("virtual", os.path.join(parts, "snap_0002.hdf5"), [os.path.join(parts, "snap_0002.hdf5")], 1)]
    for name, path, paths, n_files in cases:
        for units in ("code", "astro"):
            pos, vel, mass, ids, box, a = swift_expected(paths, units)
            for ranks in args.ranks:
                what = f"SWIFT {name} {units} np{ranks}"
                out = os.path.join(args.work_dir, f"swift_{name}_{units}_np{ranks}")
                res = run_dump(args, path, ranks, out, ["--units", units])
                check(res.returncode == 0, f"{what}: exit {res.returncode}: {res.stderr}")
                if res.returncode != 0:
                    continue
                got, desc = load_dump(out, ranks)
                for key, want in (("position", pos), ("velocity", vel), ("mass", mass), ("id", ids)):
                    same(got[key], want, f"{what} {key}")
                check(desc["code"] == "SWIFT" and int(desc["n_files"]) == n_files and
                      float(desc["scale_factor"]) == a and float(desc["box_size_0"]) == box,
                      f"{what}: code {desc['code']}, {desc['n_files']} file(s), a {desc['scale_factor']} (want {a}), "
                      f"box {desc['box_size_0']} (want {box})")
    # FoF (b = 0.2 of the mean spacing of 16^3 particles) on the a = 1 snapshot
    pos, _, _, ids, box, _ = swift_expected(cases[0][2], "code")
    want = fof_reference(pos, box, 0.2 * box / 16)
    outputs = []
    for ranks in (1, 3):
        prefix = os.path.join(args.work_dir, f"swift_fof_np{ranks}", "res")
        shutil.rmtree(os.path.dirname(prefix), ignore_errors=True)
        os.makedirs(os.path.dirname(prefix))
        res = run_cli(args, ranks, ["--snapshot", cases[0][1], "--finder", "fof", "--output", prefix])
        check(res.returncode == 0, f"SWIFT FoF np{ranks}: {res.stderr}")
        outputs.append(outputs_of(prefix))
    check(outputs[0] == outputs[1], "SWIFT FoF: the outputs differ between 1 and 3 ranks")
    group = np.fromfile(os.path.join(args.work_dir, "swift_fof_np1", "res-group.raw"), "<i8")
    members = {}
    for i, g in enumerate(group.tolist()):
        if g >= 0:
            members.setdefault(g, []).append(i)
    got = sorted(frozenset(m) for m in members.values())
    check(len(want) >= 3 and got == want, f"SWIFT FoF: {len(got)} groups, scipy finds {len(want)} "
          f"(sizes {sorted(map(len, got))[-5:]} vs {sorted(map(len, want))[-5:]})")
    print(f"SWIFT snapshots: 3 layouts checked on ranks {args.ranks}; FoF finds scipy's {len(want)} groups")


def expect_failure(args, path, options, words, what):
    """Exit 1 on every rank count, one message on stderr with every word in it, nothing written."""
    for ranks in (1, 3):
        out = os.path.join(args.work_dir, "bad_np%d" % ranks)
        res = run_dump(args, path, ranks, out, options)
        lines = [line for line in res.stderr.splitlines() if line.startswith("error:")]
        check(res.returncode == 1, f"{what} np{ranks}: exit {res.returncode} (expected 1): {res.stderr}")
        check(len(lines) == 1, f"{what} np{ranks}: {len(lines)} messages: {res.stderr}")
        check(all(w in res.stderr for w in words), f"{what} np{ranks}: message lacks {words}: {res.stderr}")
        check(not os.listdir(out), f"{what} np{ranks}: something was written")


def broken_ramses(args, name):
    src = os.path.join(args.source_dir, "datasets", "ramses_cosmo32", "output_00003")
    folder = os.path.join(args.work_dir, name, "output_00003")
    shutil.rmtree(os.path.dirname(folder), ignore_errors=True)
    shutil.copytree(src, folder)
    for entry in os.listdir(folder):
        os.chmod(os.path.join(folder, entry), 0o644)
    return folder


def test_bad_ramses(args):
    folder = broken_ramses(args, "truncated")
    part = os.path.join(folder, "part_00003.out00002")
    size = os.path.getsize(part)
    with open(part, "r+b") as f:
        f.truncate(size // 2)
    expect_failure(args, folder, [], ["part_00003.out00002", "truncated", "byte offset"], "truncated part file")

    folder = broken_ramses(args, "foreign")
    with open(os.path.join(folder, "part_00003.out00001"), "wb") as f:
        f.write(np.arange(4096, dtype=">i4").tobytes())  # big-endian: markers that make no sense here
    expect_failure(args, folder, [], ["part_00003.out00001"], "foreign part file")

    folder = broken_ramses(args, "missing")
    os.remove(os.path.join(folder, "part_00003.out00002"))
    expect_failure(args, folder, [], ["part_00003.out00002", "No such file"], "missing CPU file")

    folder = broken_ramses(args, "info")
    with open(os.path.join(folder, "info_00003.txt"), "w") as f:
        f.write("this is not an info file\n")
    expect_failure(args, folder, [], ["info_00003.txt", "not a RAMSES info file"], "garbage info file")

    folder = broken_ramses(args, "family")
    expect_failure(args, folder, ["--family", "dragons"], ["unknown RAMSES particle family", "dragons"],
                   "unknown family")
    expect_failure(args, os.path.join(args.work_dir, "nowhere"), [], ["nowhere", "No such file"], "no such path")


def rewrite_attribute(path, name, value):
    import h5py

    with h5py.File(path, "r+") as f:
        f["Header"].attrs[name] = value


def test_bad_gadget(args):
    import h5py

    case = "gadget4_multi"
    fresh = lambda name: make_snapshots.make(os.path.join(args.work_dir, "bad_" + name), case)  # noqa: E731
    files = fresh("totals")
    rewrite_attribute(files[0], "NumPart_Total", np.array([0, 12345, 0, 0, 0, 0], "u8"))
    expect_failure(args, files[0], [], ["inconsistent particle counts", "12345"], "NumPart totals")

    files = fresh("short")
    with h5py.File(files[1], "r+") as f:
        data = f["PartType1/Coordinates"][...]
        del f["PartType1/Coordinates"]
        f["PartType1/Coordinates"] = data[:-5]
    expect_failure(args, files[0], [], [os.path.basename(files[1]), "Coordinates", "truncated"], "short dataset")

    files = fresh("missing")
    os.remove(files[2])
    expect_failure(args, files[0], [], [os.path.basename(files[2])], "missing file")

    files = fresh("type")
    expect_failure(args, files[0], ["--particle-type", "9"], ["particle type 9 does not exist"], "particle type")
    not_hdf5 = os.path.join(args.work_dir, "text.hdf5")
    with open(not_hdf5, "w") as f:
        f.write("not HDF5\n")
    expect_failure(args, not_hdf5, [], ["text.hdf5", "not an HDF5 file"], "not HDF5")
    expect_failure(args, files[1], [], ["file 1 of a multi-file snapshot"], "file 1 given")

    files = fresh("static")
    with h5py.File(files[0], "r+") as f:
        f["Parameters"].attrs["ComovingIntegrationOn"] = np.int32(0)
    expect_failure(args, files[0], ["--units", "astro"], ["not a cosmological snapshot"], "astro units, no cosmology")

    # positions on and past the periodic box's faces are wrapped into [0, L); NaN is left for the
    # finders to report (float32 and float64 files)
    for layout in ("gadget4_multi", "gadget2_single"):
        files = make_snapshots.make(os.path.join(args.work_dir, "edges_" + layout), layout)
        box = make_snapshots.CASES[layout][2]
        with h5py.File(files[0], "r+") as f:
            pos = f["PartType1/Coordinates"]
            tiny = -box * (1e-9 if pos.dtype == np.float32 else 1e-17)
            written = np.array([[tiny, box, box + box / 4], [np.nan, 0.0, box / 2]], pos.dtype)
            pos[:2] = written
        out = os.path.join(args.work_dir, "edges_" + layout + "_dump")
        res = run_dump(args, files[0], 1, out)
        got = load_dump(out, 1)[0]["position"][:2] if res.returncode == 0 else None
        want = np.array([[0.0, 0.0, box / 4], [np.nan, 0.0, box / 2]], written.dtype)
        check(got is not None and np.array_equal(got, want, equal_nan=True),
              f"{layout}: {written.tolist()} read as {None if got is None else got.tolist()}, want {want.tolist()}")

    # an id in file 0 given again in file 2: the finders say the id, where both are, nothing written
    files = fresh("repeated")
    with h5py.File(files[0], "r") as f:
        n0, id0 = len(f["PartType1/ParticleIDs"]), int(f["PartType1/ParticleIDs"][3])
    with h5py.File(files[1], "r") as f:
        n1 = len(f["PartType1/ParticleIDs"])
    with h5py.File(files[2], "r+") as f:
        f["PartType1/ParticleIDs"][5] = id0
    for ranks in (1, 3):
        out = os.path.join(args.work_dir, f"repeated_np{ranks}")
        shutil.rmtree(out, ignore_errors=True)
        os.makedirs(out)
        res = run_cli(args, ranks, ["--snapshot", files[0], "--finder", "fof", "--output", os.path.join(out, "res")])
        want = (f"phew: error: particle id {id0} is given to more than one particle: ids must be unique (particles 3 "
                f"and {n0 + n1 + 5} of the snapshot '{files[0]}', counting its particles of that kind from 0, file by file)")
        lines = [line for line in res.stderr.splitlines() if line.startswith("phew: error:")]
        check(res.returncode == 1 and lines == [want] and not os.listdir(out),
              f"repeated id np{ranks}: exit {res.returncode}, {lines}, want [{want}], files {os.listdir(out)}")
    print("bad inputs: one message each, on 1 and 3 ranks")


def run_cli(args, ranks, arguments):
    command = [args.cli, *arguments]
    if ranks > 1:
        command = [args.mpiexec, "-np", str(ranks), *command]
    return subprocess.run(command, capture_output=True, text=True, env=mpi_env(), timeout=600)


def outputs_of(prefix):
    folder, base = os.path.split(prefix)
    return {name: open(os.path.join(folder, name), "rb").read() for name in sorted(os.listdir(folder))
            if name.startswith(base)}


def check_records(label, finder, snapshot, raw, snapshot_path, n, box, scale_factor, csv_rows):
    """The run records (PREFIX-run.json, PREFIX-groups-run.json) say what each run came from."""
    what = f"cli {label} {finder}: the run record"
    check(snapshot["input"]["snapshot"] == snapshot_path and snapshot["input"]["kind"] == "particles",
          f"{what} names the snapshot: {snapshot['input']}")
    check(snapshot["input"]["box_size"] == [box] * 3 and snapshot["input"]["periodic"] == [True] * 3,
          f"{what} has the box {box}, periodic: {snapshot['input']}")
    check(snapshot["input"]["scale_factor"] == scale_factor and snapshot["input"]["units"] == "code",
          f"{what} has a = {scale_factor!r}, code units: {snapshot['input']}")
    check(raw["input"]["positions"].endswith("pos.raw") and raw["input"]["box_size"] == [box] * 3,
          f"{what} of the raw run names its files and box: {raw['input']}")
    check(snapshot["parameters"] == raw["parameters"] and snapshot["parameters"]["finder"] == finder,
          f"{what}: the parameters {snapshot['parameters']} are the raw run's {raw['parameters']}")
    check(snapshot["results"] == raw["results"] and snapshot["results"]["particles"] == n,
          f"{what}: results {snapshot['results']} (raw run {raw['results']}, {n} particles)")
    found = snapshot["results"]["groups" if finder != "phew" else "clumps"]
    check(found == csv_rows, f"{what}: {found} objects, the catalogue has {csv_rows} rows")


def same_as_raw(args, label, snapshot_args, pos, vel, mass, ids, box, scale_factor):
    """The finders on the snapshot give the bytes they give on the same particles as raw files."""
    raw = os.path.join(args.work_dir, f"cli_{label}_raw")
    os.makedirs(raw, exist_ok=True)
    real = "float32" if pos.dtype == np.float32 else "float64"
    for name, values in (("pos", pos), ("vel", vel), ("mass", mass), ("ids", ids.astype("<i8"))):
        values.tofile(os.path.join(raw, name + ".raw"))
    raw_args = ["--points", os.path.join(raw, "pos.raw"), "--velocities", os.path.join(raw, "vel.raw"),
                "--masses", os.path.join(raw, "mass.raw"), "--ids", os.path.join(raw, "ids.raw"),
                "--type", real, "--box", *(["%.17g" % box] * 3), "--periodic"]
    if "astro" not in snapshot_args:  # a snapshot in code units gets no halo properties; raw files would
        raw_args.append("--no-physics")
    for finder in ("phew", "fof", "hop"):
        for ranks in (1, 3):
            results = []
            for kind, inputs in (("snapshot", snapshot_args), ("raw", raw_args)):
                out = os.path.join(args.work_dir, f"cli_{label}_{finder}_{kind}_np{ranks}")
                shutil.rmtree(out, ignore_errors=True)
                os.makedirs(out)
                res = run_cli(args, ranks, [*inputs, "--finder", finder, "--output", os.path.join(out, "res")])
                check(res.returncode == 0, f"cli {label} {finder} {kind} np{ranks}: {res.stderr}")
                results.append(outputs_of(os.path.join(out, "res")))
            record = "res-run.json" if finder == "phew" else "res-groups-run.json"
            records = [json.loads(r.pop(record, b"{}")) for r in results]
            table = results[0].get("res-clumps.csv" if finder == "phew" else "res-groups.csv", b"")
            check_records(label, finder, *records, snapshot_args[1], len(ids), box, scale_factor,
                          table.count(b"\n") - 1)
            check(results[0] == results[1] and len(results[0]) >= 2,
                  f"cli {label} {finder} np{ranks}: --snapshot and the raw files give other outputs "
                  f"({sorted(results[0])} vs {sorted(results[1])})")


def test_cli(args):
    folder = os.path.join(args.source_dir, "datasets", "ramses_cosmo32", "output_00003")
    pos, vel, mass, fields, info = ramses_expected(folder, "code")
    same_as_raw(args, "ramses", ["--snapshot", folder], pos, vel, mass, fields["identity"], info["boxlen"],
                info["aexp"])
    os.makedirs(os.path.join(args.work_dir, "verbose"), exist_ok=True)
    res = run_cli(args, 2, ["--snapshot", folder, "--finder", "fof", "--verbose", "--output",
                            os.path.join(args.work_dir, "verbose", "res")])
    check("RAMSES, 2 file(s), 32768 particles with velocities" in res.stdout, f"--verbose: {res.stdout}")
    # the stages as they start, before the summary (FoF asks for no progress: the reading only)
    check(res.stdout.startswith("  started: reading the snapshot\n"), f"--verbose stages: {res.stdout}")
    # b = 0.2 of the mean spacing of 32^3 particles in the unit box: 0.2 / 32, said with --verbose
    check(f"linking length {0.2 / 32:.17g} (in the positions' units)" in res.stdout, f"--verbose: {res.stdout}")
    res = run_cli(args, 2, ["--snapshot", folder, "--verbose", "--output", os.path.join(args.work_dir, "verbose", "res")])
    stages = [line.split(": ", 1)[1] for line in res.stdout.splitlines() if line.startswith("  started: ")]
    check(stages[:2] == ["reading the snapshot", "domain"] and "watershed" in stages and
          res.stdout.index("  started: watershed") < res.stdout.index("thresholds:"), f"--verbose stages: {stages}")

    files = make_snapshots.make(os.path.join(args.work_dir, "cli_gadget"), "gadget4_multi")
    stem = files[0][: -len(".0.hdf5")]
    arrays, header = ref.gadget_particles(stem, 1)
    same_as_raw(args, "gadget4", ["--snapshot", files[0]], arrays["Coordinates"], arrays["Velocities"],
                arrays["Masses"].astype(np.float32), arrays["ParticleIDs"], float(header["BoxSize"]),
                float(header["Time"]))
    # the box's far face: inside without --periodic (the closed box), outside with it
    face = os.path.join(args.work_dir, "face.raw")
    np.array([[1.0, 0.5, 0.5], [0.99, 0.5, 0.5], [0.2, 0.2, 0.2]], "<f8").tofile(face)
    for periodic, code in (([], 0), (["--periodic"], 1)):
        res = run_cli(args, 1, ["--points", face, "--type", "float64", "--box", "1", "1", "1", *periodic, "--finder",
                                "fof", "--linking-absolute", "0.05", "--min-members", "1", "--output",
                                os.path.join(args.work_dir, "face")])
        check(res.returncode == code and (code == 0 or "lies outside the box along x" in res.stderr),
              f"x = LX with{'' if periodic else 'out'} --periodic: exit {res.returncode}, {res.stderr}")
    print("cli: --snapshot gives the raw path's outputs (phew, fof, hop; 1 and 3 ranks)")


def load_amr(out, ranks):
    """Every rank's box list (the same on all but held), and the values of held boxes."""
    lists, values = [], {}
    for r in range(ranks):
        boxes, desc = [], {"variable": [], "spacing": {}}
        with open(os.path.join(out, f"amr{r}.txt")) as f:
            for line in f:
                key, _, value = line.rstrip("\n").partition(" ")
                if key == "box":
                    boxes.append(tuple(int(v) for v in value.split()))
                elif key == "variable":
                    desc["variable"].append(value)
                elif key == "spacing":
                    level, spacing = value.split()
                    desc["spacing"][int(level)] = float(spacing)
                else:
                    desc[key] = value
        raw = np.fromfile(os.path.join(out, f"amr{r}_values.bin"), "<f8")
        at = 0
        for b, box in enumerate(boxes):
            if box[1]:
                cells = int(np.prod([box[6 + d] - box[3 + d] + 1 for d in range(3)]))
                n = cells * len(desc["variable"])
                values[b] = (r, raw[at: at + n].reshape(len(desc["variable"]), cells))
                at += n
        check(at == len(raw), f"{out}: rank {r} wrote {len(raw)} values, its boxes hold {at}")
        lists.append((boxes, desc))
    return lists, values


def check_amr_run(out, ranks, cells, leaves, info, names):
    lists, values = load_amr(out, ranks)
    boxes, desc = lists[0]
    for r, (other, _) in enumerate(lists):  # the same boxes everywhere, each held by its rank only
        check([b[:1] + b[2:] for b in other] == [b[:1] + b[2:] for b in boxes], f"{out}: rank {r} lists other boxes")
        check(all((b[1] == 1) == (b[2] == r) for b in other), f"{out}: rank {r}'s held flags")
    check(sorted(values) == list(range(len(boxes))), f"{out}: boxes without values")
    check(desc["variable"] == names, f"{out}: variables {desc['variable']}")
    levelmin = int(info["levelmin"])
    for level, spacing in desc["spacing"].items():
        check(spacing == 0.5 ** (levelmin + level), f"{out}: level {level} spacing {spacing}")
    covered = set()
    for level, _, _, *lohi in boxes:
        if level > 0:
            for i in range(lohi[0], lohi[3] + 1, 2):
                for j in range(lohi[1], lohi[4] + 1, 2):
                    for k in range(lohi[2], lohi[5] + 1, 2):
                        covered.add((level - 1, i // 2, j // 2, k // 2))
    found, bad = set(), 0
    for b, (level, _, _, *lohi) in enumerate(boxes):
        k, j, i = np.meshgrid(*[np.arange(lohi[d], lohi[3 + d] + 1) for d in (2, 1, 0)], indexing="ij")
        i, j, k = i.ravel(), j.ravel(), k.ravel()  # x fastest
        dx = 0.5 ** (levelmin + level)
        for v, name in enumerate(names):
            expected = ramses_amr_reference.known_value(ramses_amr_reference.NAMES.index(name), level,
                                                        (i + 0.5) * dx, (j + 0.5) * dx, (k + 0.5) * dx)
            bad += int(np.sum(values[b][1][v] != expected))
        for cell in zip(i.tolist(), j.tolist(), k.tolist()):
            key = (level, *cell)
            check(key in cells, f"{out}: box {b} has cell {key} that the files do not")
            if key not in covered:
                found.add(key)
    check(bad == 0, f"{out}: {bad} values differ from the files'")
    check(found == leaves, f"{out}: {len(found)} leaf cells, the files have {len(leaves)}")
    check(int(desc["n_leaf_cells"]) == len(leaves), f"{out}: n_leaf_cells {desc['n_leaf_cells']}")
    volume = sum(0.5 ** (3 * (levelmin + key[0])) for key in found)
    check(abs(volume - 1.0) < 1e-12, f"{out}: the leaf cells fill {volume} of the box")


def test_amr(args):
    src = os.path.join(args.source_dir, "datasets", "ramses_cosmo32", "output_00003")
    for descriptor in (True, False):
        folder = os.path.join(args.work_dir, f"amr_{int(descriptor)}", "output_00003")
        shutil.rmtree(os.path.dirname(folder), ignore_errors=True)
        shutil.copytree(src, folder)
        for entry in os.listdir(folder):
            os.chmod(os.path.join(folder, entry), 0o644)
        ramses_amr_reference.write_hydro(folder, descriptor)
        cells, info = ramses_amr_reference.own_cells(folder)
        leaves = {key for key, (leaf, _) in cells.items() if leaf}
        # without the descriptor only the names differ: one rank count, every variable
        for ranks in args.ranks if descriptor else args.ranks[:1]:
            for names in (ramses_amr_reference.NAMES, ["pressure", "density"])[: 2 if descriptor else 1]:
                out = os.path.join(args.work_dir, f"amr_{int(descriptor)}_{len(names)}_np{ranks}")
                options = ["--amr"] + [a for n in names for a in ("--variable", n)] * (len(names) < 5)
                res = run_dump(args, folder, ranks, out, options)
                check(res.returncode == 0, f"amr np{ranks}: exit {res.returncode}: {res.stderr}")
                if res.returncode == 0:
                    check_amr_run(out, ranks, cells, leaves, info, names)
        print(f"amr: {len(cells)} cells, {len(leaves)} leaves on ranks {args.ranks} (descriptor {descriptor})")
    expect_failure(args, folder, ["--amr", "--variable", "temperature"], ["no hydro variable", "temperature"],
                   "unknown variable")


def read_boxes(path):
    with open(path) as f:
        header = f.readline().strip().split(",")
        assert header == ["Level", "LoX", "LoY", "LoZ", "HiX", "HiY", "HiZ", "FirstCell", "NumberOfCells"], header
        return [tuple(int(v) for v in line.split(",")) for line in f]


def test_amr_cli(args):
    """phew --snapshot --amr-variable: the three blobs of the density written on the real tree
    are three clumps peaked at the densest leaf of each; covered and thin cells are -1; the
    outputs are the same bytes on 1 to 4 ranks."""
    src = os.path.join(args.source_dir, "datasets", "ramses_cosmo32", "output_00003")
    folder = os.path.join(args.work_dir, "blobs", "output_00003")
    shutil.rmtree(os.path.dirname(folder), ignore_errors=True)
    shutil.copytree(src, folder)
    for entry in os.listdir(folder):
        os.chmod(os.path.join(folder, entry), 0o644)
    ramses_amr_reference.write_hydro(folder, True, ramses_amr_reference.blob_value)
    cells, info = ramses_amr_reference.own_cells(folder)
    levelmin, threshold = int(info["levelmin"]), 5.0
    leaves = {key: centre for key, (leaf, centre) in cells.items() if leaf}
    rho = {key: float(ramses_amr_reference.blob_density(*c)) for key, c in leaves.items()}
    outputs = []
    for ranks in args.ranks:
        out = os.path.join(args.work_dir, f"amr_cli_np{ranks}")
        shutil.rmtree(out, ignore_errors=True)
        os.makedirs(out)
        res = run_cli(args, ranks, ["--snapshot", folder, "--amr-variable", "density", "--threshold", str(threshold),
                                    "--output", os.path.join(out, "res")])
        check(res.returncode == 0, f"amr cli np{ranks}: {res.stderr}")
        outputs.append(outputs_of(os.path.join(out, "res")))
    check(all(o == outputs[0] for o in outputs), "amr cli: the outputs differ between rank counts")
    out = os.path.join(args.work_dir, f"amr_cli_np{args.ranks[0]}")
    boxes = read_boxes(os.path.join(out, "res-boxes.csv"))
    clump = np.fromfile(os.path.join(out, "res-clump.raw"), "<i8")
    check(len(clump) == sum(b[8] for b in boxes), "amr cli: clump.raw holds the boxes' cells")
    labelled, wrong = {}, 0
    for level, *lohi, first, count in boxes:
        k, j, i = np.meshgrid(*[np.arange(lohi[d], lohi[3 + d] + 1) for d in (2, 1, 0)], indexing="ij")
        for cell, label in zip(zip(i.ravel().tolist(), j.ravel().tolist(), k.ravel().tolist()), clump[first:first + count]):
            key = (level, *cell)
            if key in leaves:
                labelled[key] = int(label)
                wrong += (label >= 0) != (rho[key] > threshold)
            else:
                wrong += label != -1  # covered by a finer box
    check(wrong == 0 and len(labelled) == len(leaves), f"amr cli: {wrong} cells labelled against the threshold, "
          f"{len(labelled)} of {len(leaves)} leaves seen")
    with open(os.path.join(out, "res-clumps.csv")) as f:
        rows = list(csv.DictReader(f))
    check(len(rows) == 3, f"amr cli: {len(rows)} clumps, 3 blobs")
    with open(os.path.join(out, "res-run.json")) as f:
        record = json.load(f)
    expected = {"leaf_cells": len(leaves), "boxes": len(boxes), "clumps": 3, "density_threshold_used": threshold}
    check({k: record["results"].get(k) for k in expected} == expected and record["input"]["kind"] == "amr" and
          record["input"]["amr_variable"] == "density" and record["input"]["scale_factor"] == info["aexp"],
          f"amr cli: the run record {record['input']} {record['results']}, want {expected}")
    for (centre, width, height), row in zip(ramses_amr_reference.BLOBS, rows):
        near = [key for key, c in leaves.items() if sum(min(abs(a - b), 1 - abs(a - b)) ** 2
                                                        for a, b in zip(c, centre)) < (3 * width) ** 2]
        top = max(near, key=lambda key: rho[key])
        check(float(row["PeakDensity"]) == rho[top], f"amr cli: blob at {centre} peaks at {row['PeakDensity']}, "
              f"its densest leaf has {rho[top]}")
        check(all(abs(float(row["Peak" + a]) - leaves[top][d]) < 1e-12 for d, a in enumerate("XYZ")),
              f"amr cli: blob at {centre}: peak position {[row['Peak' + a] for a in 'XYZ']} vs {leaves[top]}")
        members = sum(1 for key, label in labelled.items() if label == int(row["ClumpId"]))
        check(int(row["NumberOfCells"]) == members, f"amr cli: clump {row['ClumpId']}: {row['NumberOfCells']} cells, "
              f"{members} labelled")
    bad = [(["--snapshot", folder, "--amr-variable", "temperature"], ["no hydro variable", "temperature"]),
           (["--snapshot", src, "--amr-variable", "density"], ["no hydro files"]),
           (["--snapshot", folder, "--amr-variable", "density", "--finder", "fof"], ["runs PHEW on the AMR cells"]),
           (["--snapshot", folder, "--amr-variable", "density", "--neighbours", "8"], ["--neighbours", "AMR"])]
    for arguments, words in bad:
        for ranks in (1, 3):
            out = os.path.join(args.work_dir, "amr_cli_bad")
            shutil.rmtree(out, ignore_errors=True)
            os.makedirs(out)
            res = run_cli(args, ranks, arguments + ["--output", os.path.join(out, "res")])
            check(res.returncode == 1 and all(w in res.stderr for w in words) and not os.listdir(out),
                  f"amr cli {arguments[2:]} np{ranks}: exit {res.returncode}, {res.stderr!r}, wrote {os.listdir(out)}")
    print(f"amr cli: 3 clumps over {len(leaves)} leaves, the same on ranks {args.ranks}; bad input refused")


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--dump", required=True)
    ap.add_argument("--cli", required=True)
    ap.add_argument("--mpiexec", required=True)
    ap.add_argument("--source-dir", required=True)
    ap.add_argument("--work-dir", required=True)
    ap.add_argument("--ranks", default="1,2,3,4")
    ap.add_argument("--part", required=True,
                    choices=["ramses", "amr", "amr_cli", "bad_ramses", "bad_gadget", "cli", "swift_real",
                             *sorted(make_snapshots.CASES)])
    args = ap.parse_args()
    args.ranks = [int(r) for r in args.ranks.split(",")]
    os.makedirs(args.work_dir, exist_ok=True)
    tests = {"ramses": test_ramses, "amr": test_amr, "amr_cli": test_amr_cli, "bad_ramses": test_bad_ramses, "bad_gadget": test_bad_gadget, "cli": test_cli,
             "swift_real": test_swift_real}
    if args.part in tests:
        tests[args.part](args)
    else:
        test_gadget(args, args.part)
    if failures:
        print(f"{len(failures)} check(s) failed")
        return 1
    print("readers: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
