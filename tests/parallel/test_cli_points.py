#!/usr/bin/python3
"""The particle mode of the phew tool under mpirun gives exactly the serial files.

For every case of make_points.py (periodic and open): run the tool alone with --threads 1
(the reference), then under mpirun with each rank count and each thread count given; the
seven output files must be equal byte for byte, the counts printed by --verbose must be the
serial ones, and the case must exercise what it was made for (one halo over the 8 corners of
the periodic box, exact ties on the lattice, a padding that had to widen, ranks whose
subvolume holds no particle or fewer than a neighbourhood). With --reference the serial
density file is also compared with sph_reference.py (numpy and scipy) within 1e-12 relative.

    /usr/bin/python3 test_cli_points.py --cli phew --libphew libphew.so --mpiexec mpiexec \\
        --ranks 4 --threads 1 2 --source-dir SRC --work-dir DIR [--reference] [--cases NAME...]
"""
import os
import re
import shutil
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cli_runs  # noqa: E402
import make_points  # noqa: E402
import sph_reference  # noqa: E402

RELATIVE = 1e-12  # the density against the numpy reference


def first_difference(a, b, suffix):
    """Where two output files first differ, for the failure message."""
    if suffix.endswith(".raw"):
        dtype = "<f8" if suffix == "-density.raw" else "<i8"
        x, y = np.frombuffer(a, dtype=dtype), np.frombuffer(b, dtype=dtype)
        if x.size != y.size:
            return f"{x.size} vs {y.size} particles"
        i = int(np.nonzero(x.view("<i8") != y.view("<i8"))[0][0])
        return f"{int((x.view('<i8') != y.view('<i8')).sum())} particle(s) differ, first {i}: serial {x[i]!r}, " \
               f"parallel {y[i]!r}"
    la, lb = a.decode().splitlines(), b.decode().splitlines()
    for i, (p, q) in enumerate(zip(la, lb)):
        if p != q:
            return f"line {i + 1}: serial '{p}', parallel '{q}'"
    return f"{len(la)} vs {len(lb)} lines"


def verbose_counts(stdout):
    """The lines of --verbose with global counts (not the timings, the padding or the ranks)."""
    return [line for line in stdout.splitlines() if not line.startswith(("  ", "ranks "))]


def padding(stdout):
    """(rounds, the most padding particles on a rank) from --verbose."""
    m = re.search(r"padding: (\d+) round\(s\), at most (\d+) padding particle", stdout)
    return (int(m.group(1)), int(m.group(2))) if m else (None, None)


def expectation(case, prefix, n_ranks, stdout):
    """None if the case exercises what it was made for, else why not."""
    what = case.expect
    halo = np.fromfile(prefix + "-halo.raw", dtype="<i8")
    rho = np.fromfile(prefix + "-density.raw", dtype="<f8")
    if what in ("one halo over the 8 corners", "the corner blob split"):
        # particles within 0.05 (one sigma) of the corner, by nearest image
        box = np.asarray(case.box)
        near = np.minimum(case.pos, box - case.pos)
        corner = np.sqrt((near**2).sum(axis=1)) < 0.05
        octants = {tuple(row) for row in (case.pos[corner] > box / 2)}
        haloes = set(halo[corner].tolist())
        if len(octants) != 8:
            return f"the corner blob reaches {len(octants)} of the 8 corners"
        if what == "one halo over the 8 corners" and (len(haloes) != 1 or -1 in haloes):
            return f"the corner particles are in haloes {sorted(haloes)}, not one"
        if what == "the corner blob split" and len(haloes) < 2:
            return f"without the wrap the corner particles are still in one halo {haloes}"
    elif what == "equal densities far from the fine cube":
        # coarse particles in [0, 1/8]^3: 3/8 or more from the fine cube [1/2, 5/8)^3, beyond 2h
        far = np.all(case.pos <= 0.125, axis=1)
        values = np.unique(rho[far])
        if far.sum() < 8 or len(values) != 1:
            return f"{far.sum()} far lattice particles have {len(values)} different densities, not 1"
    elif what == "a wide padding" and n_ranks > 1:
        rounds, most = padding(stdout)
        if rounds is None or rounds < 2 or most < case.density_neighbours:
            return f"padding of {rounds} round(s), at most {most} particles: it did not widen"
    elif what == "all in a corner":
        if not (case.pos < 0.2).all():
            return "particles outside the corner"
    elif what == "2 planes":
        if len(np.unique(case.pos[:, 0])) != 2:
            return "not 2 planes"
    if not np.isfinite(rho).all() or not (rho > 0).all():
        return "densities that are not positive and finite"
    if len(open(prefix + "-clumps.csv").read().splitlines()) < 2:
        return "no clump found"
    return None


def compare_reference(case, prefix, checker, label):
    rho = np.fromfile(prefix + "-density.raw", dtype="<f8")
    want = sph_reference.density(case.pos, case.masses, case.box, case.periodic, case.density_neighbours)
    error = np.abs(rho - want) / np.abs(want)
    worst = int(np.argmax(error))
    checker.check(rho.shape == want.shape and error.max() <= RELATIVE,
                  f"{label}: density within {RELATIVE:g} of the numpy SPH reference (worst {error.max():.2g} at "
                  f"particle {worst}: {rho[worst]!r} vs {want[worst]!r})")


def main():
    ap = cli_runs.parser(__doc__.split("\n\n")[0])
    ap.add_argument("--threads", type=int, nargs="+", default=[1], help="--threads of the mpirun runs")
    ap.add_argument("--reference", action="store_true", help="compare the density with the numpy reference")
    ap.add_argument("--cases", nargs="+", help="only these cases (names in make_points.py)")
    args = ap.parse_args()
    runner = cli_runs.Runner(args)
    thread_counts = cli_runs.distinct_threads(args.threads)  # the requests that run differently here
    checker = cli_runs.Checker("test_cli_points")
    shutil.rmtree(args.work_dir, ignore_errors=True)
    for sub in ("data", "serial", "parallel"):
        os.makedirs(os.path.join(args.work_dir, sub))
    for case in make_points.cases():
        if args.cases and case.name not in args.cases:
            continue
        files = case.write(os.path.join(args.work_dir, "data"))
        serial_prefix = os.path.join(args.work_dir, "serial", case.name)
        s = runner.serial(case.args(files, serial_prefix, 1) + ["--verbose"])
        if not checker.check(s.code == 0, f"{case.name}: serial run exits with 0 ({s.summary()})"):
            continue
        if args.reference:
            compare_reference(case, serial_prefix, checker, case.name)
        for n_ranks in args.ranks:
            for threads in thread_counts:
                label = f"{case.name} np {n_ranks} threads {threads}"
                prefix = os.path.join(args.work_dir, "parallel", f"{case.name}-np{n_ranks}-t{threads}")
                p = runner.mpi(n_ranks, case.args(files, prefix, threads) + ["--verbose"])
                if not checker.check(p.code == 0 and not p.timed_out,
                                     f"{label}: mpirun exits with 0 in {p.seconds:.1f} s "
                                     f"({'timed out' if p.timed_out else p.code}; {p.summary()})"):
                    continue
                checker.check(p.err == "", f"{label}: nothing on stderr ({p.summary()})")
                same = verbose_counts(p.out) == verbose_counts(s.out)
                checker.check(same, f"{label}: --verbose counts equal the serial ones"
                              + ("" if same else f"\nserial:\n{s.out}parallel:\n{p.out}"))
                # threads beyond the cores a rank may run on are capped (ctest's environment
                # leaves the ranks unbound: they have this process's cores)
                used = min(threads, len(os.sched_getaffinity(0)))
                checker.check(p.out.count(f"ranks {n_ranks}, {used} thread(s) each:") == 1,
                              f"{label}: --verbose printed once, for {n_ranks} rank(s) of {used} thread(s)")
                for suffix in cli_runs.POINT_SUFFIXES:
                    a = open(serial_prefix + suffix, "rb").read()
                    b = open(prefix + suffix, "rb").read()
                    checker.check(a == b, f"{label}: {suffix[1:]} identical to the serial one"
                                  + ("" if a == b else ": " + first_difference(a, b, suffix)))
                why = expectation(case, prefix, n_ranks, p.out)
                checker.check(why is None, f"{label}: exercises '{case.expect}'" + (f": {why}" if why else ""))
    checker.finish()


if __name__ == "__main__":
    main()
