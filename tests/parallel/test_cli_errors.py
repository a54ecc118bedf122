#!/usr/bin/python3
"""Errors under mpirun are collective: a bad value that only one rank reads, a bad parameter, a
bad file or an unwritable output makes every rank exit with status 1, within the time limit (no
rank left waiting), with exactly one message from phew, the same as the serial run's, and no
output file left behind. Issue 7: sizes that overflow int64, a directory as input, option
values out of the double range, a 5000-character prefix, and a read or write failure (full
disk) on one rank only (the test-only fault shim of tests/cli) are reported the same way.

    /usr/bin/python3 test_cli_errors.py --cli phew --libphew libphew.so --mpiexec mpiexec \\
        --ranks 4 --source-dir SRC --work-dir DIR --fault-shim libphew_io_fault_shim.so
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
    if not args.fault_shim:
        ap.error("--fault-shim is required")
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

        with open(os.path.join(work, "eight.raw"), "wb") as f:
            f.write(bytes(8))
        os.makedirs(os.path.join(work, "a_directory.raw"))

        def args_for(raw, extra=("--threshold", "1.5"), kind="float64", dims=DIMS):
            return ["--input", raw, "--dims"] + [str(n) for n in dims] + ["--type", kind] + list(extra)

        last = n_ranks - 1
        # (name, phew arguments without --output, output prefix inside the run's directory,
        #  extra environment of the serial run, of the mpirun run)
        runs = []
        for name, field, cell, holders, stored_by in bad_fields(n_ranks, args.libphew):
            checker.check(n_ranks == 1 or stored_by == holders,
                          f"np {n_ranks} {name}: the bad cell {cell} is stored by {stored_by} rank(s), "
                          f"meant {holders}")
            raw = os.path.join(work, name + ".raw")
            field.astype("<f8").tofile(raw)
            runs.append((name, args_for(raw), "out"))
        runs = [r + ({}, {}) for r in runs]
        runs += [(name, argv, prefix, {}, {}) for name, argv, prefix in [
            ("negative_relevance", args_for(good, ("--threshold", "1.5", "--relevance", "-2")), "out"),
            ("non_numeric_threshold", args_for(good, ("--threshold", "abc")), "out"),
            ("unknown_option", args_for(good, ("--threshold", "1.5", "--bogus")), "out"),
            ("missing_input", args_for(os.path.join(work, "missing.raw")), "out"),
            ("short_input", args_for(os.path.join(work, "short.raw")), "out"),
            ("float64_read_as_float32", args_for(good, kind="float32"), "out"),
            ("no_output_directory", args_for(good), "no/such/dir/out"),
            ("directory_at_output_name", args_for(good), "blocked"),  # a directory at blocked-dendrogram.csv
            ("cells_overflow", args_for(os.path.join(work, "eight.raw"), dims=(1, 3, 6148914691236517206)), "out"),
            ("cells_overflow_wrapping", args_for(os.path.join(work, "eight.raw"), dims=(4294967297, 4294967295, 1)),
             "out"),
            ("bytes_overflow", args_for(os.path.join(work, "eight.raw"), kind="float32",
                                        dims=(1, 2, 1152921504606846976)), "out"),
            ("input_is_a_directory", args_for(os.path.join(work, "a_directory.raw")), "out"),
            ("threshold_out_of_range", args_for(good, ("--threshold", "1e999")), "out"),
            ("spacing_out_of_range", args_for(good, ("--threshold", "1.5", "--spacing", "1", "-1e400", "1")), "out"),
            ("prefix_5000_characters", args_for(good), "p" * 5000),
        ]]
        shim = args.fault_shim
        runs += [
            # a full disk while the last rank writes its cells of a label file
            ("label_write_fails_on_last_rank", args_for(good), "out",
             cli_runs.fault_env(shim, "write:out-halo.raw.partial:ENOSPC"),
             cli_runs.fault_env(shim, "write:out-halo.raw.partial:ENOSPC", last)),
            # a read error on the last rank's part of the input
            ("read_fails_on_last_rank", args_for(good), "out",
             cli_runs.fault_env(shim, "read:good.raw:EIO"), cli_runs.fault_env(shim, "read:good.raw:EIO", last)),
            # rank 0 writes the tables and renames: a full disk there, a late rename failure
            ("table_write_fails", args_for(good), "out", cli_runs.fault_env(shim, "write:out-clumps.csv.partial:EDQUOT"),
             cli_runs.fault_env(shim, "write:out-clumps.csv.partial:EDQUOT")),
            ("late_rename_fails", args_for(good), "out", cli_runs.fault_env(shim, "rename:out-haloes.csv.partial:EIO"),
             cli_runs.fault_env(shim, "rename:out-haloes.csv.partial:EIO")),
        ]
        expected = {  # the exact message where the issue asked for one
            "cells_overflow": "phew: error: --dims 1 3 6148914691236517206 is too large: the number of cells "
                              "overflows a 64-bit integer",
            "input_is_a_directory": f"phew: error: '{os.path.join(work, 'a_directory.raw')}' is a directory, "
                                    "not a raw file",
            "threshold_out_of_range": "phew: error: --threshold value '1e999' is out of range (finite numbers go "
                                      "up to about 1.8e308)",
            "prefix_5000_characters": "phew: error: output prefix is too long: 5000 characters, at most 4068 fit "
                                      "in a path",
            "label_write_fails_on_last_rank": "phew: error: writing 'out-halo.raw.partial' failed: No space left "
                                              "on device",
            "read_fails_on_last_rank": f"phew: error: reading '{good}' failed: Input/output error",
            "table_write_fails": "phew: error: writing 'out-clumps.csv.partial' failed: Disk quota exceeded",
            "late_rename_fails": "phew: error: cannot rename 'out-haloes.csv.partial' to 'out-haloes.csv': "
                                 "Input/output error",
        }
        for name, argv, prefix, serial_env, parallel_env in runs:
            label = f"np {n_ranks} {name}"
            outcomes = {}
            for mode in ("serial", "parallel"):
                directory = os.path.join(work, mode, name)
                os.makedirs(directory)
                if prefix == "blocked":
                    os.makedirs(os.path.join(directory, "blocked-dendrogram.csv"))
                full = argv + ["--output", prefix]
                o = (runner.serial(full, cwd=directory, env=serial_env) if mode == "serial"
                     else runner.mpi(n_ranks, full, cwd=directory, env=parallel_env))
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
            if name in expected:
                checker.check(s.error_lines() == [expected[name]],
                              f"{label}: the message is '{expected[name]}' ({s.error_lines()})")
    checker.finish()


if __name__ == "__main__":
    main()
