#!/usr/bin/python3
"""The phew tool under mpirun gives exactly the serial files.

For every case of make_fields.py: run the tool alone on one thread (the serial reference),
then under mpirun with each rank count given, each rank on --threads threads (default 0: all
the cores it may use); the three label files and the three CSVs must be equal
byte for byte, the run must print nothing, and the case must exercise what it was made for
(checked on the real blocks). Cases marked numpy_check are also compared with the numpy
re-implementation. With --stats, compare the counts printed by --verbose instead (global statistics).

    /usr/bin/python3 test_cli_ranks.py --cli phew --libphew libphew.so --mpiexec mpiexec \\
        --ranks 4 --source-dir SRC --work-dir DIR [--stats] [--cases NAME...] [--threads N]
"""
import os
import shutil
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import blocks as B  # noqa: E402
import cli_runs  # noqa: E402
import compare_numpy  # noqa: E402
import make_fields  # noqa: E402


def first_difference(a, b, suffix):
    """Where two output files first differ, for the failure message."""
    if suffix.endswith(".raw"):
        x, y = np.frombuffer(a, dtype="<i8"), np.frombuffer(b, dtype="<i8")
        if x.size != y.size:
            return f"{x.size} vs {y.size} cells"
        i = int(np.nonzero(x != y)[0][0])
        return f"{int((x != y).sum())} cell(s) differ, first cell {i}: serial {x[i]}, parallel {y[i]}"
    la, lb = a.decode().splitlines(), b.decode().splitlines()
    for i, (p, q) in enumerate(zip(la, lb)):
        if p != q:
            return f"line {i + 1}: serial '{p}', parallel '{q}'"
    return f"{len(la)} vs {len(lb)} lines"


def expectation(case, blocks, n_ranks, prefix):
    """None if the case exercises what it was made for on these blocks, else why not."""
    live = [b for b in blocks if not b.empty()]
    what = case.expect
    if what is None:
        return None
    if what == "one clump on every rank":
        cl = np.fromfile(prefix + "-clump.raw", dtype="<i8").reshape(case.rho.shape)
        if cl.max() != 0 or any(not (cl[b.active_slices()] == 0).any() for b in live):
            return "not one clump present on every rank"
    elif n_ranks == 1:
        return None
    elif what == "ranks without test cells":
        if all((case.rho[b.active_slices()] > case.threshold).any() for b in live):
            return "every rank has test cells"
    elif what == "empty ranks at 8":
        if n_ranks == 8 and len(live) == len(blocks):
            return "no rank is empty"
    elif what == "one-cell-thick blocks":
        if not any(b.active_dims[d] == 1 < b.stored_dims[d] for b in live for d in range(3)):
            return "no block is one cell thick"
    elif what == "boundary peaks":
        peaks = {int(line.split(",")[4]) for line in open(prefix + "-clumps.csv").read().splitlines()[1:]}
        nx, ny, _ = case.dims
        for p in case.peaks:
            if p[0] + nx * (p[1] + ny * p[2]) not in peaks:
                return f"designed peak {p} is not a clump peak"
        if not case.peaks_on_cuts:
            return "no designed peak on a block boundary"
        for p in case.peaks_on_cuts:
            holders = sum(b.stores(p, case.dims) for b in live)
            if holders < 2:
                return f"designed peak {p} is not on a block boundary (stored by {holders} rank)"
    elif what == "plateau across a boundary":
        rho = case.rho
        for axis in range(3):
            for c in B.cuts(blocks, axis):
                a = np.take(rho, c - 1, axis=2 - axis)
                b = np.take(rho, c, axis=2 - axis)
                if ((a == b) & (a > case.threshold)).any():
                    return None
        return "no equal test cells face each other across a block boundary"
    return None


def verbose_counts(stdout):
    """The lines of --verbose with global counts (not the timings)."""
    return [line for line in stdout.splitlines() if not line.startswith(("  ", "ranks "))]


def main():
    ap = cli_runs.parser(__doc__.split("\n\n")[0])
    ap.add_argument("--stats", action="store_true", help="compare the counts of --verbose instead of the files")
    ap.add_argument("--cases", nargs="+", help="only these cases (names in make_fields.py)")
    ap.add_argument("--threads", type=int, default=0, help="threads per rank of the parallel runs (0: all cores)")
    args = ap.parse_args()
    stats = args.stats
    runner = cli_runs.Runner(args)
    checker = cli_runs.Checker("test_cli_ranks")
    shutil.rmtree(args.work_dir, ignore_errors=True)
    for n_ranks in args.ranks:
        work = os.path.join(args.work_dir, f"np{n_ranks}")
        for sub in ("data", "serial", "parallel"):
            os.makedirs(os.path.join(work, sub))
        for case in make_fields.cases(n_ranks, args.libphew, args.source_dir):
            if args.cases and case.name not in args.cases:
                continue
            label = f"np {n_ranks} {case.name}"
            raw = os.path.join(work, "data", case.name + ".raw")
            case.write(raw)
            serial_prefix = os.path.join(work, "serial", case.name)
            parallel_prefix = os.path.join(work, "parallel", case.name)
            extra = ["--verbose"] if stats else []
            s = runner.serial(case.args(raw, serial_prefix) + extra + ["--threads", "1"])
            if not checker.check(s.code == 0, f"{label}: serial run exits with 0 ({s.err.strip()})"):
                continue
            p = runner.mpi(n_ranks, case.args(raw, parallel_prefix) + extra + ["--threads", str(args.threads)])
            if not checker.check(p.code == 0 and not p.timed_out,
                                 f"{label}: mpirun exits with 0 in {p.seconds:.1f} s "
                                 f"({'timed out' if p.timed_out else p.code}; {p.summary()})"):
                continue
            checker.check(not p.error_lines(), f"{label}: nothing on stderr from phew")
            if stats:
                same = verbose_counts(p.out) == verbose_counts(s.out)
                checker.check(same, f"{label}: --verbose counts equal the serial ones"
                              + ("" if same else f"\nserial:\n{s.out}parallel:\n{p.out}"))
                checker.check(p.out.count(f"ranks {n_ranks}:") == 1, f"{label}: --verbose printed once, "
                              f"with 'ranks {n_ranks}:'")
                continue
            checker.check(p.out == "", f"{label}: prints nothing without --verbose")
            for suffix in cli_runs.SUFFIXES:
                a = open(serial_prefix + suffix, "rb").read()
                b = open(parallel_prefix + suffix, "rb").read()
                checker.check(a == b, f"{label}: {suffix[1:]} identical to the serial one"
                              + ("" if a == b else ": " + first_difference(a, b, suffix)))
            blocks = B.decompose(args.libphew, case.dims, case.periodic, n_ranks)
            why = expectation(case, blocks, n_ranks, serial_prefix)
            checker.check(why is None, f"{label}: exercises '{case.expect}'" + (f": {why}" if why else ""))
            if case.numpy_check:
                compare_numpy.compare(case, parallel_prefix, args.source_dir, checker, label)
    checker.finish()


if __name__ == "__main__":
    main()
