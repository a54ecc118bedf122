#!/usr/bin/python3
"""HOP in the phew tool (--finder hop) against an independent numpy reference of the rules
(hop_reference.py), and under mpirun byte for byte equal to the serial files.

Cases: make_points.py's (periodic and open; on the lattice every density and distance ties
many times) and two clustered sets made here (haloes with satellites, touching pairs, a halo
over the periodic corner, a uniform background), each at outer thresholds that make proper
groups merge at saddles, fringe groups join proper ones and fringe groups stay alone. For each:
PREFIX-density.raw must be the SPH density of sph_reference.py (to 1e-9, relative); on the
tool's densities the reference's GroupIds must be PREFIX-group.raw exactly, and its groups
the rows of PREFIX-groups.csv (counts, smallest ids, masses, peak ids and peak densities).
Under mpirun with each rank and thread count given, the three files must be the serial ones
byte for byte.

    /usr/bin/python3 test_cli_hop.py --cli phew --libphew libphew.so --mpiexec mpiexec \\
        --ranks 2 3 --threads 1 2 --source-dir SRC --work-dir DIR [--also 2x2 ...] [--cases NAME...]
"""
import csv
import os
import shutil
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cli_runs  # noqa: E402
import hop_reference  # noqa: E402
import make_points  # noqa: E402
import sph_reference  # noqa: E402

OUTPUTS = ("-group.raw", "-groups.csv", "-density.raw", "-groups-run.json")
MIN_MEMBERS = 10


def clustered(periodic, seed):
    """Haloes with satellites, touching pairs, one over the corner (0, 0, 0), a background."""
    rng = np.random.default_rng(seed)
    box = (1.0, 1.0, 1.0)

    def blob(centre, sigma, count):
        return np.asarray(centre) + sigma * rng.standard_normal((count, 3))

    parts = [blob([0, 0, 0], 0.03, 1500), blob([0.5, 0.5, 0.5], 0.04, 2500), blob([0.55, 0.52, 0.5], 0.008, 200),
             blob([0.45, 0.46, 0.53], 0.01, 250), blob([0.25, 0.7, 0.3], 0.02, 700), blob([0.29, 0.71, 0.3], 0.02, 700),
             blob([0.75, 0.25, 0.7], 0.015, 400), blob([0.8, 0.3, 0.75], 0.03, 600)]
    parts += [blob(c, 0.01 + 0.02 * rng.random(), int(50 + 200 * rng.random())) for c in rng.random((10, 3))]
    parts.append(rng.random((4000, 3)))
    pos = np.concatenate(parts)
    pos = pos % 1.0 if periodic else pos[np.all((pos >= 0.0) & (pos < 1.0), axis=1)]
    masses = 0.5 + rng.random(len(pos)) if seed % 2 else None
    vel = rng.standard_normal(pos.shape)
    return make_points.PointCase(f"clustered{seed}", pos, box, periodic, masses=masses, velocities=vel)


def cases():
    out = []
    for case in make_points.cases():
        case.outers = None  # from the densities: the 60th percentile, and a fifth of the largest
        out.append(case)
    for periodic in (True, False):
        for seed in (1010, 1011):
            case = clustered(periodic, seed)
            case.outers = [80.0, 160.0]
            out.append(case)
    return out


def hop_args(case, files, prefix, threads, outer):
    a = files + ["--type", case.type, "--box"] + [repr(float(x)) for x in case.box]
    a += ["--finder", "hop", "--outer", repr(outer), "--min-members", str(MIN_MEMBERS), "--threads", str(threads),
          "--output", prefix]
    if case.periodic:
        a.append("--periodic")
    return a


def main():
    ap = cli_runs.parser(__doc__.split("\n\n")[0])
    ap.add_argument("--threads", type=int, nargs="+", default=[1], help="--threads of the mpirun runs")
    ap.add_argument("--cases", nargs="+", help="only these cases")
    ap.add_argument("--also", nargs="+", default=[], metavar="RANKSxTHREADS",
                    help="more mpirun runs besides --ranks x --threads, e.g. 2x2: 2 ranks of 2 threads "
                         "(against the same serial files and reference, computed once)")
    args = ap.parse_args()
    runner = cli_runs.Runner(args)
    thread_counts = cli_runs.distinct_threads(args.threads)  # the requests that run differently here
    mpi_runs = [(r, t) for r in args.ranks for t in thread_counts]
    for pair in args.also:
        r, t = (int(x) for x in pair.split("x"))
        mpi_runs.append((r, t))
    checker = cli_runs.Checker("test_cli_hop")
    shutil.rmtree(args.work_dir, ignore_errors=True)
    for sub in ("data", "serial", "parallel"):
        os.makedirs(os.path.join(args.work_dir, sub))
    seen = {"merges": 0, "fringe_attached": 0, "fringe_dropped": 0}
    unknown = set(args.cases or []) - {case.name for case in cases()}
    checker.check(not unknown, f"--cases: no case is called {sorted(unknown)}")
    for case in cases():
        if args.cases and case.name not in args.cases:
            continue
        files = case.write(os.path.join(args.work_dir, "data"))
        rho_ref = sph_reference.density(case.pos, case.masses, case.box, case.periodic, 64)
        outers = case.outers or [float(f"{x:.3g}") for x in (np.percentile(rho_ref, 60), rho_ref.max() / 5)]
        ids = np.arange(case.n) if case.ids is None else np.asarray(case.ids)
        near = hop_reference.nearest_others(case.pos, ids, case.box, case.periodic, 63)
        for outer in outers:
            name = f"{case.name} outer {outer:g}"
            serial = os.path.join(args.work_dir, "serial", f"{case.name}-{outer:g}")
            s = runner.serial(hop_args(case, files, serial, 1, outer) + ["--verbose"])
            if not checker.check(s.code == 0 and s.err == "", f"{name}: serial run exits with 0 ({s.summary()})"):
                continue
            rho = np.fromfile(serial + "-density.raw", dtype="<f8")
            error = np.max(np.abs(rho - rho_ref) / rho_ref)
            checker.check(error <= 1e-9, f"{name}: density.raw is the SPH density (relative error {error:.2g})")
            stats = {}
            label, rows = hop_reference.hop(near, ids, case.masses, rho, outer, min_members=MIN_MEMBERS, stats=stats)
            for k in seen:
                seen[k] += stats[k]
            got = np.fromfile(serial + "-group.raw", dtype="<i8")
            checker.check(np.array_equal(got, label),
                          f"{name}: GroupIds equal the reference's ({len(rows)} groups from {stats['hop_groups']} "
                          f"HOP groups, {stats['proper']} proper, {stats['merges']} saddle merges, "
                          f"{stats['fringe_attached']} fringe groups joined, {stats['fringe_dropped']} alone; "
                          f"{int((got != label).sum())} particle(s) differ)")
            with open(serial + "-groups.csv") as f:
                table = list(csv.DictReader(f))
            same = len(table) == len(rows) and all(
                int(t["NumberOfParticles"]) == r[0] and int(t["MinParticleId"]) == r[1] and
                abs(float(t["Mass"]) - r[2]) <= 1e-12 * r[2] and int(t["PeakId"]) == r[3] and
                float(t["PeakDensity"]) == r[4] for t, r in zip(table, rows))
            checker.check(same, f"{name}: groups.csv has the reference's counts, smallest ids, masses and peaks")
            for n_ranks, threads in mpi_runs:
                what = f"{name} np {n_ranks} threads {threads}"
                prefix = os.path.join(args.work_dir, "parallel", f"{case.name}-{outer:g}-np{n_ranks}-t{threads}")
                p = runner.mpi(n_ranks, hop_args(case, files, prefix, threads, outer))
                if not checker.check(p.code == 0 and not p.timed_out and p.err == "",
                                     f"{what}: mpirun exits with 0, nothing on stderr ({p.summary()})"):
                    continue
                for suffix in OUTPUTS:
                    with open(serial + suffix, "rb") as a, open(prefix + suffix, "rb") as b:
                        checker.check(a.read() == b.read(), f"{what}: {suffix[1:]} identical to the serial one")
    if not args.cases:
        checker.check(all(v > 0 for v in seen.values()),
                      f"the cases exercise every rule: saddle merges, fringe groups joined and left alone ({seen})")
    checker.finish()


if __name__ == "__main__":
    main()
