#!/usr/bin/python3
"""Errors of the particle mode under mpirun are collective: a bad particle that only one rank
reads (a NaN position in the last rank's share, a position outside the periodic box in rank
0's, a negative mass in the middle), a file whose size does not match, too few particles, a
read error on the last rank only and a full disk while the last rank writes its share of the
density file (the test-only fault shim of tests/cli) make every rank exit with status 1 within
the time limit, with exactly one message from phew, the serial run's, and no output left.
Particles piled up at one point (more than the density's neighbour count: no smoothing length)
are named by the smallest global index among them, serially and under mpirun on 1 rank and on
the ranks given (the lowest rank holding some used to name its own first one: 200, not 100,
on 3 ranks).

    /usr/bin/python3 test_cli_points_errors.py --cli phew --libphew libphew.so --mpiexec mpiexec \\
        --ranks 3 --source-dir SRC --work-dir DIR --fault-shim libphew_io_fault_shim.so
"""
import os
import shutil
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cli_runs  # noqa: E402
import make_points  # noqa: E402


def check_pile(runner, checker, work, argv, case, n_ranks):
    """100 particles of the case, then 200 at one point (global indices 100-299), which the
    subvolumes of several ranks cut: the same message, naming particle 100, serially and under
    mpirun on 1 and n_ranks ranks."""
    pile = np.concatenate([case.pos[:100], np.tile([[0.5, 0.6, 0.45]], (200, 1))])
    path = os.path.join(work, "pile.raw")
    pile.astype("<f8").tofile(path)
    message = ("phew: error: SPH density: the particle with global id 100 has smoothing length 0: more "
               "particles than the density's neighbour count sit at its position")
    for mode, ranks in [("serial", 0)] + [("mpirun", r) for r in sorted({1, n_ranks})]:
        label = f"np {n_ranks} pile_at_one_point {mode}" + (f" -np {ranks}" if ranks else "")
        directory = os.path.join(work, "pile", f"{mode}{ranks}")
        os.makedirs(directory)
        full = argv({"--points": path}) + ["--output", "out"]
        o = runner.serial(full, cwd=directory) if not ranks else runner.mpi(ranks, full, cwd=directory)
        checker.check(o.code not in (0, None) and not o.timed_out, f"{label}: fails ({o.code})")
        checker.check(o.error_lines() == [message], f"{label}: the message names particle 100 ({o.error_lines()})")
        left = cli_runs.files_starting(directory, "out")
        checker.check(not left, f"{label}: leaves no output behind ({' '.join(left)})")


def main():
    ap = cli_runs.parser(__doc__.split("\n\n")[0])
    args = ap.parse_args()
    if not args.fault_shim:
        ap.error("--fault-shim is required")
    runner = cli_runs.Runner(args)
    checker = cli_runs.Checker("test_cli_points_errors")
    shutil.rmtree(args.work_dir, ignore_errors=True)
    shim = args.fault_shim
    for n_ranks in args.ranks:
        work = os.path.join(args.work_dir, f"np{n_ranks}")
        os.makedirs(work)
        case = make_points.corner_halo(True)
        good = dict(zip(*[iter(case.write(work))] * 2))  # option -> path
        n = case.n

        def with_file(option, name, values, dtype="<f8"):
            path = os.path.join(work, name)
            np.asarray(values).astype(dtype).tofile(path)
            return dict(good, **{option: path})

        def argv(files, extra=()):
            a = [x for option, path in files.items() for x in (option, path)]
            return a + ["--type", "float64", "--box"] + [repr(b) for b in case.box] + \
                ["--periodic", "--threshold", "2", "--threads", "1"] + list(extra)

        last = n_ranks - 1
        pos_name = os.path.basename(good["--points"])
        first_of_last = n * last // n_ranks  # where the last rank's share starts
        nan = case.pos.copy()
        nan[n - 1, 2] = np.nan
        outside = case.pos.copy()
        outside[0, 0] = case.box[0]  # on the upper face: outside a periodic box
        negative = case.masses.copy()
        negative[n // 2] = -1.0
        runs = [  # (name, arguments without --output, serial environment, mpirun environment, message)
            ("nan_on_last_rank", argv(with_file("--points", "nan.raw", nan)), {}, {},
             f"phew: error: particle {n - 1} has a position that is not finite"),
            ("outside_on_rank_0", argv(with_file("--points", "outside.raw", outside)), {}, {},
             "phew: error: particle 0 lies outside the box along x (1 not in [0, 1))"),
            ("negative_mass_in_the_middle", argv(with_file("--masses", "negative.raw", negative)), {}, {}, None),
            ("masses_one_short", argv(with_file("--masses", "short.raw", case.masses[:-1])), {}, {}, None),
            ("forty_particles", argv({"--points": with_file("--points", "forty.raw", case.pos[:40])["--points"]}),
             {}, {}, None),
            ("read_fails_on_last_rank", argv(good), cli_runs.fault_env(shim, f"read:{pos_name}:EIO"),
             cli_runs.fault_env(shim, f"read:{pos_name}:EIO", last),
             f"phew: error: reading '{good['--points']}' failed: Input/output error"),
            ("density_write_fails_on_last_rank", argv(good),
             cli_runs.fault_env(shim, "write:out-density.raw.partial:ENOSPC"),
             cli_runs.fault_env(shim, "write:out-density.raw.partial:ENOSPC", last),
             "phew: error: writing 'out-density.raw.partial' failed: No space left on device"),
        ]
        checker.check(first_of_last < n - 1, f"np {n_ranks}: the NaN particle is in the last rank's share")
        check_pile(runner, checker, work, argv, case, n_ranks)
        for name, arguments, serial_env, parallel_env, message in runs:
            label = f"np {n_ranks} {name}"
            outcomes = {}
            for mode in ("serial", "parallel"):
                directory = os.path.join(work, mode, name)
                os.makedirs(directory)
                full = arguments + ["--output", "out"]
                o = (runner.serial(full, cwd=directory, env=serial_env) if mode == "serial"
                     else runner.mpi(n_ranks, full, cwd=directory, env=parallel_env))
                outcomes[mode] = o
                left = cli_runs.files_starting(directory, "out")
                checker.check(not left, f"{label}: {mode} run leaves no output behind ({' '.join(left)})")
            s, p = outcomes["serial"], outcomes["parallel"]
            checker.check(s.code == 1 and len(s.err.splitlines()) == 1 and s.err.startswith("phew: error: "),
                          f"{label}: serial run fails with one line on stderr ({s.err.strip()})")
            checker.check(not p.timed_out, f"{label}: mpirun finishes within {args.timeout:.0f} s "
                          f"(took {p.seconds:.1f} s)")
            checker.check(p.code not in (0, None), f"{label}: mpirun exits with a failure status ({p.code})")
            same = p.error_lines() == s.error_lines()
            checker.check(same, f"{label}: exactly one message, the serial one, in {p.seconds:.1f} s"
                          + ("" if same else f"\n  serial:   {s.error_lines()}\n  parallel: {p.error_lines()}"))
            if message:
                checker.check(s.error_lines() == [message], f"{label}: the message is '{message}' "
                              f"({s.error_lines()})")
    checker.finish()


if __name__ == "__main__":
    main()
