#!/usr/bin/python3
"""Under mpirun a failed or killed run leaves a previous run's outputs exactly as they were.

Issue 7 under mpirun (rank 0 writes the tables and renames the files into place, every rank
writes its cells of the label files). Into a directory holding a previous run's seven files
(made by the same rank count), each case runs the tool again with other parameters and
checks afterwards that the directory holds the previous files byte for byte and nothing else
(no .partial or .previous file):
  - a late failure, on one rank (the last rank's label write on a full disk, a label file it
    cannot open, its read error, NaN data in its block) or on rank 0 (a table write over
    quota, the last rename, moving a previous file aside): mpirun fails within the time limit
    with exactly one message from phew, the one given;
  - a name the run cannot replace (a directory at the haloes table, the issue's case; an
    immutable file): refused before computing;
  - SIGTERM or SIGINT sent to mpirun while the last rank reads its block of the input, while
    it writes its label cells (the other ranks waiting for it in a collective), or while
    rank 0 writes a table. Open MPI 4.1's mpirun passes the signal on as SIGCONT, one second
    later SIGTERM, one more second later SIGKILL: the ranks are held at that step by a pause
    (a timed kill in the computation could land after a short run has finished).
And a SIGTERM that lands on rank 0 during the final renames leaves the new run's seven files
(the renames are completed first, never a mix). Failures and pauses at an exact call come
from the test-only fault shim of tests/cli (io_fault_shim.c), on one rank or all.

    /usr/bin/python3 test_cli_outputs.py --cli phew --libphew libphew.so --mpiexec mpiexec \\
        --ranks 3 --source-dir SRC --work-dir DIR --fault-shim libphew_io_fault_shim.so
"""
import os
import shutil
import signal
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import blocks as B  # noqa: E402
import cli_runs  # noqa: E402
import make_fields  # noqa: E402

DIMS = (32, 24, 20)
PREFIX = "res"


def snapshot(directory):
    """Every entry of the directory: a file's bytes, or '<directory>'."""
    out = {}
    for name in sorted(os.listdir(directory)):
        path = os.path.join(directory, name)
        if os.path.isdir(path):
            out[name] = "<directory>"
        else:
            with open(path, "rb") as f:
                out[name] = f.read()
    return out


def difference(got, want):
    """What differs between two snapshots, for the failure message."""
    extra = sorted(set(got) - set(want))
    missing = sorted(set(want) - set(got))
    changed = sorted(k for k in set(got) & set(want) if got[k] != want[k])
    parts = [f"{what}: {' '.join(names)}" for what, names in
             (("left behind", extra), ("missing", missing), ("changed", changed)) if names]
    return "; ".join(parts) or "none"


def restore(directory, files):
    """Makes directory hold exactly these files (a snapshot)."""
    shutil.rmtree(directory, ignore_errors=True)
    os.makedirs(directory)
    for name, data in files.items():
        with open(os.path.join(directory, name), "wb") as f:
            f.write(data)


def wait_for(condition, p, seconds):
    """Polls until condition() holds; False if the run ended first or the time ran out."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if condition():
            return True
        if p.poll() is not None:
            return False
        time.sleep(0.005)
    return False


def main():
    ap = cli_runs.parser(__doc__.split("\n\n")[0])
    args = ap.parse_args()
    if not args.fault_shim:
        ap.error("--fault-shim is required")
    runner = cli_runs.Runner(args)
    checker = cli_runs.Checker("test_cli_outputs")
    shim = args.fault_shim
    shutil.rmtree(args.work_dir, ignore_errors=True)
    for n_ranks in args.ranks:
        work = os.path.join(args.work_dir, f"np{n_ranks}")
        os.makedirs(work)
        last = n_ranks - 1
        good = os.path.join(work, "good.raw")
        rho = make_fields.smooth_random(DIMS, 17, False)
        rho.astype("<f8").tofile(good)
        # a NaN in the middle of the last rank's active box, which no other rank stores
        live = [b for b in B.decompose(args.libphew, DIMS, False, n_ranks) if not b.empty()]
        cell = tuple(live[-1].active_offset[d] + live[-1].active_dims[d] // 2 for d in range(3))
        bad = rho.copy()
        bad[cell[2], cell[1], cell[0]] = np.nan
        nan_raw = os.path.join(work, "nan.raw")
        bad.astype("<f8").tofile(nan_raw)

        def argv(raw=good, threshold="1.6"):
            return (["--input", raw, "--dims"] + [str(n) for n in DIMS] +
                    ["--type", "float64", "--threshold", threshold, "--output", PREFIX])

        # the previous run (threshold 1.5) and what this run (1.6) writes when it succeeds
        made = {}
        for name, threshold in (("previous", "1.5"), ("fresh", "1.6")):
            directory = os.path.join(work, name)
            os.makedirs(directory)
            o = runner.mpi(n_ranks, argv(threshold=threshold), cwd=directory)
            checker.check(o.code == 0 and not o.err.strip(),
                          f"np {n_ranks}: the {name} run succeeds ({o.summary()})")
            made[name] = snapshot(directory)
        previous, fresh = made["previous"], made["fresh"]
        checker.check(len(previous) == 7 and len(fresh) == 7 and previous != fresh,
                      f"np {n_ranks}: seven files (the run record too), different for the two thresholds")

        def case_directory(name, files=None):
            directory = os.path.join(work, name)
            restore(directory, previous if files is None else files)
            return directory

        def check_kept(label, directory, want=None, what="the previous outputs kept byte for byte"):
            want = previous if want is None else want
            got = snapshot(directory)
            checker.check(got == want, f"{label}: {what}, nothing left behind "
                                       f"(difference: {difference(got, want)})")

        # late failures: exactly one message, the previous outputs untouched
        failures = [
            ("label_write_full_disk_on_last_rank", argv(),
             cli_runs.fault_env(shim, "write:res-halo.raw.partial:ENOSPC", last),
             "phew: error: writing 'res-halo.raw.partial' failed: No space left on device"),
            # the last rank cannot open the label file rank 0 created (alone, rank 0 cannot create it)
            ("label_file_open_fails_on_last_rank", argv(),
             cli_runs.fault_env(shim, "open:res-halo.raw.partial:EACCES", last),
             "phew: error: " + ("cannot write" if n_ranks > 1 else "cannot create") +
             " 'res-halo.raw.partial': Permission denied"),
            ("input_read_error_on_last_rank", argv(), cli_runs.fault_env(shim, "read:good.raw:EIO", last),
             f"phew: error: reading '{good}' failed: Input/output error"),
            ("nan_on_last_rank", argv(raw=nan_raw), {},
             "phew: error: the density has 1 value(s) that are NaN, infinite or negative; densities must be "
             "finite and non-negative"),
            ("table_write_over_quota", argv(), cli_runs.fault_env(shim, "write:res-dendrogram.csv.partial:EDQUOT"),
             "phew: error: writing 'res-dendrogram.csv.partial' failed: Disk quota exceeded"),
            ("last_rename_fails", argv(), cli_runs.fault_env(shim, "rename:res-dendrogram.csv.partial:EIO"),
             "phew: error: cannot rename 'res-dendrogram.csv.partial' to 'res-dendrogram.csv': Input/output error"),
            ("previous_file_cannot_move_aside", argv(), cli_runs.fault_env(shim, "rename:res-haloes.csv:EPERM"),
             "phew: error: cannot move the previous 'res-haloes.csv' aside to 'res-haloes.csv.previous': "
             "Operation not permitted"),
            # what access() says for an immutable file (chattr +i), even to root
            ("immutable_haloes_table", argv(), cli_runs.fault_env(shim, "access:res-haloes.csv:EPERM"),
             "phew: error: cannot replace output 'res-haloes.csv': Operation not permitted"),
            ("directory_at_haloes_table", argv(), {},
             "phew: error: output 'res-haloes.csv' is a directory, not a file"),
        ]
        for name, run_argv, env, message in failures:
            label = f"np {n_ranks} {name}"
            directory = case_directory(name)
            if name == "directory_at_haloes_table":
                os.unlink(os.path.join(directory, "res-haloes.csv"))
                os.makedirs(os.path.join(directory, "res-haloes.csv"))
            before = snapshot(directory)
            # without mpirun's grace before it kills the other ranks (the ranks agree on the
            # failure and exit by themselves; tests/parallel/CMakeLists.txt); the SIGTERM /
            # SIGINT cases below keep it
            o = runner.mpi(n_ranks, run_argv, cwd=directory,
                           env=dict(env, OMPI_MCA_odls_base_sigkill_timeout="0"))
            checker.check(not o.timed_out and o.code not in (0, None),
                          f"{label}: mpirun fails within {args.timeout:.0f} s (status {o.code}, {o.seconds:.1f} s)")
            checker.check(o.error_lines() == [message],
                          f"{label}: exactly one message, '{message}' (got {o.error_lines()})")
            check_kept(label, directory, before)

        # SIGTERM / SIGINT to mpirun, which sends SIGTERM to every rank
        def killed(name, run_argv, env, ready, sig, what):
            label = f"np {n_ranks} {name}"
            directory = case_directory(name)
            p, start = runner.start_mpi(n_ranks, run_argv, cwd=directory, env=env)
            reached = wait_for(lambda: ready(directory), p, args.timeout)
            checker.check(reached, f"{label}: the run reached {what} before it ended")
            if p.poll() is None:
                os.kill(p.pid, sig)  # mpirun alone, as a batch system or a user's kill does
            o = cli_runs.finish(p, args.timeout, start)
            checker.check(not o.timed_out and o.code not in (0, None),
                          f"{label}: {signal.Signals(sig).name} to mpirun ends the run with a failure status "
                          f"({o.code}, {o.seconds:.1f} s)")
            check_kept(label, directory)

        def all_temporaries(directory):
            return all(os.path.exists(os.path.join(directory, PREFIX + s + ".partial")) for s in cli_runs.SUFFIXES)

        def complete(suffix, n_cells):
            def ready(directory):
                path = os.path.join(directory, PREFIX + suffix + ".partial")
                return os.path.exists(path) and os.path.getsize(path) == 8 * n_cells
            return ready

        n_cells = int(np.prod(DIMS))
        # while the last rank reads its block (the others wait for it): the temporary files exist
        killed("sigterm_during_input_read", argv(), cli_runs.fault_env(shim, "read:good.raw:PAUSE", last),
               all_temporaries, signal.SIGTERM, "its temporary files")
        # while the last rank writes its cells of the halo file, the others wait for it: the
        # patch and clump files are complete (the 128 MB of .partial files)
        killed("sigterm_during_label_write", argv(),
               cli_runs.fault_env(shim, "write:res-halo.raw.partial:PAUSE", last),
               complete("-clump.raw", n_cells), signal.SIGTERM, "the halo label write")
        # while rank 0 writes the first table, every label file complete
        killed("sigint_during_table_write", argv(),
               cli_runs.fault_env(shim, "write:res-clumps.csv.partial:PAUSE"),
               complete("-halo.raw", n_cells), signal.SIGINT, "the table writes")

        # a SIGTERM on rank 0 in the middle of its renames: they are completed first (the new
        # files, all six), then rank 0 dies of it and mpirun ends the others
        label = f"np {n_ranks} sigterm_during_renames"
        directory = case_directory("sigterm_during_renames")
        o = runner.mpi(n_ranks, argv(), cwd=directory,
                       env=cli_runs.fault_env(shim, "rename:res-clumps.csv.partial:SIGTERM", 0))
        checker.check(not o.timed_out and o.code not in (0, None),
                      f"{label}: the run ends with a failure status ({o.code}, {o.seconds:.1f} s)")
        check_kept(label, directory, fresh, "the new run's seven files, complete")
    checker.finish()


if __name__ == "__main__":
    main()
