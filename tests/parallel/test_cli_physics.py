"""The physics of structures through the tool (--groups, --parents), against the numpy
re-implementation of physics_reference.py on the haloes of make_haloes.py: the bound labels
equal, every catalogue column to 1e-10 (direct sums), the known answers (fast particles
unbound, host particles given to the subhalo passed back to the host), the octree within its
documented tolerance, and the same bytes on any number of ranks and threads."""
import csv
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cli_runs  # noqa: E402
import make_haloes  # noqa: E402
import physics_reference as ref  # noqa: E402

INTEGER_COLUMNS = {"StructureId", "ParentId", "Height", "Iterations", "MassRank", "NumberOfMembers",
                   "NumberOfBoundParticles", "NumberOfBoundParticlesInclusive", "CenterId",
                   "NumberOfUnboundParticles", "BoundOffset", "UnboundOffset"}
OUTPUTS = ["-given-bound.raw", "-given-physics.csv", "-given-run.json"]


def same_bytes(a, b):
    with open(a, "rb") as fa, open(b, "rb") as fb:
        return fa.read() == fb.read()


def read_table(prefix):
    with open(prefix + "-given-physics.csv") as f:
        return list(csv.DictReader(f))


def compare_rows(check, rows, expected, what, rtol=1e-10):
    """Every column of every row; one check per table, naming the first differences."""
    bad = []
    expect = lambda ok, text: ok or bad.append(text)
    expect(len(rows) == len(expected), f"{len(rows)} rows, expected {len(expected)}")
    for got, want in zip(rows, expected):
        for name, value in want.items():
            g = float(got[name])
            if name in INTEGER_COLUMNS:
                expect(g == value, f"structure {want['StructureId']} {name} {g} != {value}")
                continue
            if np.isnan(value) and np.isnan(g):
                continue
            # vector components near 0 compare with the scale of their vector
            scale = max(abs(value), abs(g))
            if name[-1] in "XYZ":
                scale = max(scale, max(abs(float(want.get(name[:-1] + c, 0.0))) for c in "XYZ"))
            expect(abs(g - value) <= rtol * scale, f"structure {want['StructureId']} {name} {g!r} != {value!r}")
        for name in got:  # every column the tool wrote was compared, or is undefined in both
            if name not in want:
                expect(got[name] == "nan", f"structure {got['StructureId']} {name} = {got[name]}, reference none")
    check.check(not bad, f"{what}: every column of {len(rows)} structures equals the reference "
                         f"({len(bad)} differ{': ' + '; '.join(bad[:3]) if bad else ''})")


def run_ok(check, runner, ranks, argv, what):
    out = runner.serial(argv) if ranks == 1 else runner.mpi(ranks, argv)
    return check.check(out.code == 0 and not out.timed_out, f"{what}: exit {out.code} {out.summary()}")


def hdf5_content(path):
    """Every dataset and attribute of an HDF5 file, as numpy arrays and bytes."""
    import h5py
    out = {}
    with h5py.File(path, "r") as f:
        out["attrs"] = {k: f.attrs[k] for k in f.attrs}
        f.visititems(lambda name, obj: out.__setitem__(name, (obj[()], dict(obj.attrs)))
                     if isinstance(obj, h5py.Dataset) else None)
    return out


def check_hdf5(check, runner, base, work, scenario, ranks):
    files = {}
    for n in sorted({1, max(ranks)}):
        prefix = os.path.join(work, f"hdf5_np{n}")
        run_ok(check, runner, n, base + ["--hdf5", prefix + ".hdf5", "--output", prefix], f"--hdf5 on {n} ranks")
        files[n] = hdf5_content(prefix + ".hdf5")
    first = files[1]
    rows = read_table(os.path.join(work, "hdf5_np1"))
    bad = []
    for name in rows[0]:
        data, attrs = first["Structures/" + name]
        want = np.array([float(r[name]) for r in rows])
        if not np.array_equal(data.astype(float), want, equal_nan=True):
            bad.append(name)
        if "units" not in attrs:
            bad.append(name + " (no units)")
    check.check(not bad, f"--hdf5: every column equals the CSV's, with units ({bad[:3]})")
    bound = np.fromfile(os.path.join(work, "hdf5_np1-given-bound.raw"), dtype="<i8")
    ids = first["Structures/BoundParticleIds"][0]
    offset, count = first["Structures/BoundOffset"][0], first["Structures/NumberOfBoundParticlesInclusive"][0]
    inside = ref.subtree_of(scenario.parent)
    ok = True
    for s in range(len(scenario.parent)):
        mine = np.sort(ids[offset[s]:offset[s] + count[s]])
        want = np.sort(scenario.ids[(bound >= 0) & inside[s, np.maximum(bound, 0)]])
        ok = ok and np.array_equal(mine, want)
    check.check(ok, "--hdf5: each structure's bound particles (inclusive) are one slice of BoundParticleIds")
    unbound = first["Structures/UnboundParticleIds"][0]
    u_offset, u_count = first["Structures/UnboundOffset"][0], first["Structures/NumberOfUnboundParticles"][0]
    fast = np.sort(scenario.ids[scenario.kind == "fast"])
    check.check(np.array_equal(np.sort(unbound[u_offset[0]:u_offset[0] + u_count[0]]), fast),
                "--hdf5: the host's unbound slice is the fast particles")
    for n, content in files.items():
        same = content.keys() == first.keys() and all(
            np.array_equal(content[k][0], first[k][0], equal_nan=True) for k in first if k != "attrs")
        check.check(same, f"--hdf5 on {n} ranks: the same datasets as on 1 rank")


def main():
    ap = cli_runs.parser(__doc__)
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    args = ap.parse_args()
    check = cli_runs.Checker("cli_physics")
    runner = cli_runs.Runner(args)
    work = args.work_dir
    os.makedirs(work, exist_ok=True)
    scenario = make_haloes.Scenario()
    paths = scenario.write(os.path.join(work, "input"))
    base = []
    for option, path in paths.items():
        base += [option, path]
    base += ["--type", "float64", "--box", "4", "4", "4", "--periodic", "--cosmology", "70", "0.3", "0.7",
             "--scale-factor", str(scenario.a)]
    units = ref.Units((0.7, 0.3, 0.7, scenario.a))
    eps = 4.0 / len(scenario.pos) ** (1.0 / 3.0) / 50.0
    bound, rows = ref.physics(scenario.pos, scenario.vel, scenario.mass, scenario.ids, scenario.label,
                              scenario.parent, [4.0] * 3, [1] * 3, [0.0] * 3, units, eps)

    # direct sums: everything equal to the reference
    direct = os.path.join(work, "direct")
    run_ok(check, runner, 1, base + ["--direct-max", "100000", "--output", direct], "direct sums")
    got = np.fromfile(direct + "-given-bound.raw", dtype="<i8")
    check.check(np.array_equal(got, bound), f"direct: bound labels equal the reference ({np.count_nonzero(got != bound)} differ)")
    compare_rows(check, read_table(direct), rows, "direct")
    # the answers known by construction
    for kind, label, least in (("fast", -1, 1.0), ("host", 0, 1.0), ("other", 2, 1.0), ("swapped", 0, 0.85),
                               ("sub", 1, 0.95)):
        share = np.mean(got[scenario.kind == kind] == label)
        check.check(share >= least, f"{kind} particles: {share:.3f} bound to {label}, expected >= {least}")

    # the octree (default: structures above 1000 members), within its tolerance
    tree = os.path.join(work, "tree")
    run_ok(check, runner, 1, base + ["--output", tree], "octree")
    got = np.fromfile(tree + "-given-bound.raw", dtype="<i8")
    labelled = np.count_nonzero(scenario.label >= 0)
    check.check(np.count_nonzero(got != bound) <= 0.005 * labelled,
                 f"octree: at most 0.5% of the bound labels differ from direct sums ({np.count_nonzero(got != bound)})")
    for g, w in zip(read_table(tree), rows):
        mass = float(g["BoundMassInclusive"])
        check.check(abs(mass - w["BoundMassInclusive"]) <= 0.01 * max(w["BoundMassInclusive"], 1.0),
                     f"octree: structure {w['StructureId']} bound mass {mass} vs {w['BoundMassInclusive']}")
        if "CenterPotential" in w:
            pot = float(g["CenterPotential"])
            check.check(abs(pot - w["CenterPotential"]) <= 1e-3 * abs(w["CenterPotential"]),
                         f"octree: structure {w['StructureId']} centre potential {pot} vs {w['CenterPotential']}")

    # without a cosmology: G as given, a = 1, no overdensity columns
    plain = os.path.join(work, "plain")
    G = 4.3e-9
    no_cosmology = [a for a in base]
    k = no_cosmology.index("--cosmology")
    del no_cosmology[k:k + 6]
    run_ok(check, runner, 1, no_cosmology + ["--gravitational-constant", str(G), "--direct-max", "100000",
                                                    "--unbind-tolerance", "0", "--output", plain], "no cosmology")
    bound_plain, rows_plain = ref.physics(scenario.pos, scenario.vel, scenario.mass, scenario.ids, scenario.label,
                                          scenario.parent, [4.0] * 3, [1] * 3, [0.0] * 3, ref.Units(None, G), eps,
                                          tol=0.0)
    got = np.fromfile(plain + "-given-bound.raw", dtype="<i8")
    check.check(np.array_equal(got, bound_plain), "no cosmology: bound labels equal the reference")
    compare_rows(check, read_table(plain), rows_plain, "no cosmology")

    # RAMSES's spherical method: centres given (the parents file's fourth to sixth columns) or the
    # centres of mass, log or linear bins, with or without the saddle cut and the top level's unbinding
    centres = [[0.06, 3.94, 0.06], [0.2, 3.95, 0.05], [2.0, 1.5, 2.5], [2.1, 1.5, 2.5]]
    with_centres = os.path.join(work, "input", "parents_centres.csv")
    with open(with_centres, "w") as f:
        f.write("Id,ParentId,CenterX,CenterY,CenterZ\n")
        for k, (p, c) in enumerate(zip(scenario.parent, centres)):
            f.write(f"{k},{p},{c[0]!r},{c[1]!r},{c[2]!r}\n")
    for name, extra, sp in (
            ("spherical", ["--parents", with_centres, "--profile-r-min", "0.01", "--saddle-cut"],
             dict(centres=centres, n_bins=50, log_bins=True, r_min=0.01, saddle_cut=True)),
            ("spherical_plain", ["--linear-bins", "--mass-bins", "20", "--keep-top-level"],
             dict(centres=None, n_bins=20, log_bins=False, r_min=eps, saddle_cut=False, unbind_top=False))):
        prefix = os.path.join(work, name)
        argv = [a for a in base]
        if "--parents" in extra:
            k = argv.index("--parents")
            del argv[k:k + 2]
        run_ok(check, runner, 1, argv + ["--potential", "spherical"] + extra + ["--output", prefix], name)
        bound_s, rows_s = ref.physics(scenario.pos, scenario.vel, scenario.mass, scenario.ids, scenario.label,
                                      scenario.parent, [4.0] * 3, [1] * 3, [0.0] * 3, units, eps, spherical=sp)
        got = np.fromfile(prefix + "-given-bound.raw", dtype="<i8")
        check.check(np.array_equal(got, bound_s), f"{name}: bound labels equal the reference ({np.count_nonzero(got != bound_s)} differ)")
        compare_rows(check, read_table(prefix), rows_s, name)

    # the HDF5 catalogue: every column as in the CSV, each structure's particles in one slice, the
    # same content on 1 and 3 ranks
    check_hdf5(check, runner, base, work, scenario, args.ranks)

    # the same bytes on any number of ranks and threads, direct and octree
    for name, extra in (("direct", ["--direct-max", "100000"]), ("tree", []),
                        ("spherical_plain", ["--potential", "spherical", "--linear-bins", "--mass-bins", "20",
                                             "--keep-top-level"])):
        first = os.path.join(work, name)
        for ranks in args.ranks:
            for threads in args.threads:
                prefix = os.path.join(work, f"{name}_np{ranks}_t{threads}")
                run_ok(check, runner, ranks, base + extra + ["--threads", str(threads), "--output", prefix],
                                f"{name} on {ranks} ranks, {threads} threads")
                for suffix in OUTPUTS:
                    check.check(same_bytes(first + suffix, prefix + suffix),
                                 f"{name} on {ranks} ranks, {threads} threads: {suffix} equals the serial one")
        # every structure spread over all ranks (--gather-max 1: the host, across the periodic
        # corner, is worked on by every rank together, no rank holding it whole): the same bytes
        for i, ranks in enumerate(sorted(set([1] + list(args.ranks)))):
            for threads in ([4, 2, 1][i % 3],):  # 1, 2 and 4 threads over the rank counts
                prefix = os.path.join(work, f"{name}_spread_np{ranks}_t{threads}")
                run_ok(check, runner, ranks, base + extra + ["--gather-max", "1", "--threads", str(threads),
                                                             "--output", prefix],
                       f"{name} spread over {ranks} ranks, {threads} threads")
                for suffix in OUTPUTS:
                    check.check(same_bytes(first + suffix, prefix + suffix),
                                f"{name} spread over {ranks} ranks, {threads} threads: {suffix} equals the serial one")
    # PHEW's clumps with their hierarchy, every top-level structure larger than 100 members spread
    # (substructure on one rank or shared): the same bytes as one rank
    phew = []
    skip = 0
    for a in base:
        if skip:
            skip -= 1
            continue
        if a in ("--groups", "--parents"):
            skip = 1
            continue
        phew.append(a)
    phew += ["--threshold", "80", "--relevance", "2", "--saddle", "50"]
    one = os.path.join(work, "phew_np1")
    run_ok(check, runner, 1, phew + ["--output", one], "PHEW with the physics on one rank")
    with open(one + "-clumps.csv") as f:
        check.check(sum(1 for line in f) > 3, "PHEW finds several clumps in the haloes")
    for ranks in args.ranks:
        prefix = os.path.join(work, f"phew_spread_np{ranks}")
        run_ok(check, runner, ranks, phew + ["--gather-max", "100", "--output", prefix],
               f"PHEW spread over {ranks} ranks")
        for suffix in ("-bound.raw", "-clumps.csv", "-haloes.csv"):
            check.check(same_bytes(one + suffix, prefix + suffix),
                        f"PHEW spread over {ranks} ranks: {suffix} equals the one-rank one")
    return check.finish()


if __name__ == "__main__":
    sys.exit(main())
