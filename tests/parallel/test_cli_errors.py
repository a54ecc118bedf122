#!/usr/bin/python3
"""Errors under mpirun are collective: a bad value that only one rank reads, a bad parameter, a
bad file or an unwritable output makes every rank exit with status 1, within the time limit (no
rank left waiting), with exactly one message from phew, the same as the serial run's, and no
output file left behind.

    /usr/bin/python3 test_cli_errors.py --cli phew --libphew libphew.so --mpiexec mpiexec \\
        --ranks 4 --source-dir SRC --work-dir DIR
"""
import os
import shutil
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import blocks as B  # noqa: E402
import cli_runs  # noqa: E402
import make_fields  # noqa: E402

DIMS = (32, 24, 20)


def centre(block):
    return tuple(block.active_offset[d] + block.active_dims[d] // 2 for d in range(3))


def bad_fields(n_ranks, libphew):
    """(name, field, the cell that makes it bad, how many ranks must store that cell)."""
    blocks = B.decompose(libphew, DIMS, False, n_ranks)
    live = [b for b in blocks if not b.empty()]
    rho = make_fields.smooth_random(DIMS, 11, False)
    out = []
    # a NaN that only the last rank reads: the middle of its active box, in no ghost layer
    out.append(("nan_on_last_rank", centre(live[-1]), np.nan, 1))
    # an infinity that only rank 0 reads
    out.append(("inf_on_rank_0", centre(live[0]), np.inf, 1))
    # a negative density on a block boundary, which a neighbour also stores as a ghost
    axis = next((d for d in range(3) if B.cuts(blocks, d)), None)
    cell = list(centre(live[0]))
    if axis is not None:
        cell[axis] = B.cuts(blocks, axis)[0]
    out.append(("negative_on_boundary", tuple(cell), -1.0, 2 if axis is not None else 1))
    fields = []
    for name, cell, value, holders in out:
        f = rho.copy()
        f[cell[2], cell[1], cell[0]] = value
        fields.append((name, f, cell, holders, sum(b.stores(cell, DIMS) for b in live)))
    return fields


def main():
    ap = cli_runs.parser(__doc__.split("\n\n")[0])
    args = ap.parse_args()
    runner = cli_runs.Runner(args)
    checker = cli_runs.Checker("test_cli_errors")
    shutil.rmtree(args.work_dir, ignore_errors=True)
    for n_ranks in args.ranks:
        work = os.path.join(args.work_dir, f"np{n_ranks}")
        for sub in ("serial", "parallel"):
            os.makedirs(os.path.join(work, sub))
        good = os.path.join(work, "good.raw")
        rho = make_fields.smooth_random(DIMS, 11, False)
        rho.astype("<f8").tofile(good)
        with open(os.path.join(work, "short.raw"), "wb") as f:
            f.write(rho.astype("<f8").tobytes()[:-8])

        def args_for(raw, extra=("--threshold", "1.5"), kind="float64"):
            return ["--input", raw, "--dims"] + [str(n) for n in DIMS] + ["--type", kind] + list(extra)

        runs = []  # (name, phew arguments without --output, output prefix inside the run's directory)
        for name, field, cell, holders, stored_by in bad_fields(n_ranks, args.libphew):
            checker.check(n_ranks == 1 or stored_by == holders,
                          f"np {n_ranks} {name}: the bad cell {cell} is stored by {stored_by} rank(s), "
                          f"meant {holders}")
            raw = os.path.join(work, name + ".raw")
            field.astype("<f8").tofile(raw)
            runs.append((name, args_for(raw), "out"))
        runs += [
            ("negative_relevance", args_for(good, ("--threshold", "1.5", "--relevance", "-2")), "out"),
            ("non_numeric_threshold", args_for(good, ("--threshold", "abc")), "out"),
            ("unknown_option", args_for(good, ("--threshold", "1.5", "--bogus")), "out"),
            ("missing_input", args_for(os.path.join(work, "missing.raw")), "out"),
            ("short_input", args_for(os.path.join(work, "short.raw")), "out"),
            ("float64_read_as_float32", args_for(good, kind="float32"), "out"),
            ("no_output_directory", args_for(good), "no/such/dir/out"),
            ("last_rename_fails", args_for(good), "blocked"),  # a directory sits at blocked-dendrogram.csv
        ]
        for name, argv, prefix in runs:
            label = f"np {n_ranks} {name}"
            outcomes = {}
            for mode in ("serial", "parallel"):
                directory = os.path.join(work, mode, name)
                os.makedirs(directory)
                if prefix == "blocked":
                    os.makedirs(os.path.join(directory, "blocked-dendrogram.csv"))
                full = argv + ["--output", prefix]
                o = runner.serial(full, cwd=directory) if mode == "serial" else runner.mpi(n_ranks, full, cwd=directory)
                outcomes[mode] = o
                left = [f for f in cli_runs.files_starting(directory, prefix.split("/")[0])
                        if f not in ("no", "blocked-dendrogram.csv")]
                checker.check(not left, f"{label}: {mode} run leaves no output behind ({' '.join(left)})")
            s, p = outcomes["serial"], outcomes["parallel"]
            checker.check(s.code not in (0, None) and len(s.err.splitlines()) == 1 and len(s.error_lines()) == 1,
                          f"{label}: serial run fails with one line on stderr ({s.err.strip()})")
            checker.check(not p.timed_out, f"{label}: mpirun finishes within {args.timeout:.0f} s "
                          f"(took {p.seconds:.1f} s)")
            checker.check(p.code not in (0, None), f"{label}: mpirun exits with a failure status ({p.code})")
            same = p.error_lines() == s.error_lines()
            checker.check(same, f"{label}: exactly one message, the serial one, in {p.seconds:.1f} s"
                          + ("" if same else f"\n  serial:   {s.error_lines()}\n  parallel: {p.error_lines()}"))
    checker.finish()


if __name__ == "__main__":
    main()
