#!/usr/bin/python3
"""Friends-of-Friends in the phew tool (--finder fof) against an independent numpy reference,
and under mpirun byte for byte equal to the serial files.

For every case of make_points.py (periodic and open): the serial run's PREFIX-group.raw must
be the reference's partition (every pair compared: nearest image min(|d|, L - |d|) per
periodic axis, (dx^2 + dy^2) + dz^2 <= b^2; groups by breadth-first search; catalogue order
by decreasing size, then smallest id), and PREFIX-groups.csv its counts, smallest ids and
masses. Then under mpirun with each rank count and thread count given, both files must be
equal byte for byte and the counts printed by --verbose the serial ones. On the lattice case
the linking length is exactly the fine lattice's spacing, so many pairs, across every
subvolume face, sit at exactly the linking length.

    /usr/bin/python3 test_cli_fof.py --cli phew --libphew libphew.so --mpiexec mpiexec \\
        --ranks 2 3 --threads 1 2 --source-dir SRC --work-dir DIR [--cases NAME...]
"""
import csv
import os
import shutil
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cli_runs  # noqa: E402
import make_points  # noqa: E402

MIN_MEMBERS = 5
OUTPUTS = ("-group.raw", "-groups.csv", "-groups-run.json")


def linking(case):
    """(the option, its value, the length in the positions' units) for a case."""
    if case.name.startswith("lattice"):  # the fine cube's spacing, exact in float32
        return "--linking-absolute", 1.0 / 64.0, 1.0 / 64.0
    b = 0.7 if case.name.startswith("small") else 0.2  # 150 uniform particles: groups need a long link
    return "--linking-length", b, b * (np.prod(case.box) / case.n) ** (1.0 / 3.0)


def fof_args(case, files, prefix, threads):
    option, value, _ = linking(case)
    a = files + ["--type", case.type, "--box"] + [repr(float(x)) for x in case.box]
    a += ["--finder", "fof", option, repr(value), "--min-members", str(MIN_MEMBERS), "--threads", str(threads),
          "--output", prefix]
    if case.periodic:
        a.append("--periodic")
    return a


def reference(case, length):
    """GroupId per particle (-1: none) and the groups' (size, smallest id, mass), in order."""
    pos, n = case.pos, case.n
    box = np.asarray(case.box)
    friends = [[] for _ in range(n)]
    for i in range(n):
        d = np.abs(pos[i + 1:] - pos[i])
        if case.periodic:
            d = np.minimum(d, box - d)
        d2 = (d[:, 0] * d[:, 0] + d[:, 1] * d[:, 1]) + d[:, 2] * d[:, 2]
        for j in np.nonzero(d2 <= length * length)[0] + i + 1:
            friends[i].append(int(j))
            friends[int(j)].append(i)
    ids = np.arange(n) if case.ids is None else np.asarray(case.ids)
    masses = np.ones(n) if case.masses is None else case.masses
    component = -np.ones(n, dtype=np.int64)
    groups = []
    for s in range(n):
        if component[s] >= 0:
            continue
        members, component[s] = [s], len(groups)
        k = 0
        while k < len(members):
            for j in friends[members[k]]:
                if component[j] < 0:
                    component[j] = len(groups)
                    members.append(j)
            k += 1
        groups.append(members)
    kept = [g for g in groups if len(g) >= MIN_MEMBERS]
    kept.sort(key=lambda g: (-len(g), int(ids[g].min())))
    label = -np.ones(n, dtype=np.int64)
    rows = []
    for k, g in enumerate(kept):
        label[g] = k
        rows.append((len(g), int(ids[g].min()), float(np.sum(masses[g]))))
    return label, rows


def main():
    ap = cli_runs.parser(__doc__.split("\n\n")[0])
    ap.add_argument("--threads", type=int, nargs="+", default=[1], help="--threads of the mpirun runs")
    ap.add_argument("--cases", nargs="+", help="only these cases (names in make_points.py)")
    args = ap.parse_args()
    runner = cli_runs.Runner(args)
    thread_counts = cli_runs.distinct_threads(args.threads)  # the requests that run differently here
    checker = cli_runs.Checker("test_cli_fof")
    shutil.rmtree(args.work_dir, ignore_errors=True)
    for sub in ("data", "serial", "parallel"):
        os.makedirs(os.path.join(args.work_dir, sub))
    for case in make_points.cases():
        if args.cases and case.name not in args.cases:
            continue
        files = case.write(os.path.join(args.work_dir, "data"))
        serial = os.path.join(args.work_dir, "serial", case.name)
        s = runner.serial(fof_args(case, files, serial, 1) + ["--verbose"])
        if not checker.check(s.code == 0 and s.err == "", f"{case.name}: serial run exits with 0 ({s.summary()})"):
            continue
        label, rows = reference(case, linking(case)[2])
        got = np.fromfile(serial + "-group.raw", dtype="<i8")
        checker.check(np.array_equal(got, label),
                      f"{case.name}: GroupIds equal the reference's ({len(rows)} groups of at least {MIN_MEMBERS}, "
                      f"{int((got != label).sum())} particle(s) differ)")
        with open(serial + "-groups.csv") as f:
            table = list(csv.DictReader(f))
        same = len(table) == len(rows) and all(
            int(t["NumberOfParticles"]) == r[0] and int(t["MinParticleId"]) == r[1] and
            abs(float(t["Mass"]) - r[2]) <= 1e-12 * r[2] for t, r in zip(table, rows))
        checker.check(same, f"{case.name}: groups.csv has the reference's counts, smallest ids and masses")
        checker.check(len(rows) >= 1, f"{case.name}: at least one group ({len(rows)})")
        if case.name.startswith("lattice"):
            checker.check(len(rows) >= 1 and rows[0][0] >= 300,
                          f"{case.name}: the fine cube is one group through pairs at exactly the linking length "
                          f"({rows[0][0] if rows else 0} particles)")
        for n_ranks in args.ranks:
            for threads in thread_counts:
                what = f"{case.name} np {n_ranks} threads {threads}"
                prefix = os.path.join(args.work_dir, "parallel", f"{case.name}-np{n_ranks}-t{threads}")
                p = runner.mpi(n_ranks, fof_args(case, files, prefix, threads) + ["--verbose"])
                if not checker.check(p.code == 0 and not p.timed_out and p.err == "",
                                     f"{what}: mpirun exits with 0, nothing on stderr ({p.summary()})"):
                    continue
                counts = [line for line in p.out.splitlines() if not line.startswith(("  ", "ranks "))]
                serial_counts = [line for line in s.out.splitlines() if not line.startswith(("  ", "ranks "))]
                checker.check(counts == serial_counts, f"{what}: --verbose counts equal the serial ones")
                for suffix in OUTPUTS:
                    with open(serial + suffix, "rb") as a, open(prefix + suffix, "rb") as b:
                        checker.check(a.read() == b.read(), f"{what}: {suffix[1:]} identical to the serial one")
    checker.finish()


if __name__ == "__main__":
    main()
