"""phew_pm's command line: a bad option value is named with the value given, on one line of
stderr before the usage, and the run exits with status 2 without simulating anything; --help
prints the usage on stdout and exits with 0. One process (an MPI singleton).

    /usr/bin/python3 test_pm_options.py --sim phew_pm --work-dir DIR
"""
import argparse
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from insitu_checks import check, finish  # noqa: E402

CASES = [  # (arguments, the first line of stderr)
    (["--mesh", "0"], "phew_pm: --mesh needs an integer of at least 4 (got '0')"),
    (["--mesh", "64x"], "phew_pm: --mesh needs an integer of at least 4 (got '64x')"),
    (["--steps", "-5"], "phew_pm: --steps needs an integer of at least 0 (got '-5')"),
    (["--every", "0"], "phew_pm: --every needs an integer of at least 1 (got '0')"),
    (["--side", "-2"], "phew_pm: --side needs an integer of at least 1 (got '-2')"),
    (["--amplitude", "nan"], "phew_pm: --amplitude needs a finite number >= 0 (got 'nan')"),
    (["--amplitude", "-0.1"], "phew_pm: --amplitude needs a finite number >= 0 (got '-0.1')"),
    (["--dt", "0"], "phew_pm: --dt needs a finite number > 0 (got '0')"),
    (["--threshold", "inf"], "phew_pm: --threshold needs a finite number (got 'inf')"),
    (["--seed", "x"], "phew_pm: --seed needs an unsigned integer (got 'x')"),
    (["--direct", "--mesh"], "phew_pm: --mesh needs a value"),
    (["--meshes", "8"], "phew_pm: unknown option '--meshes'"),
]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sim", required=True)
    ap.add_argument("--work-dir", required=True)
    args = ap.parse_args()
    shutil.rmtree(args.work_dir, ignore_errors=True)
    os.makedirs(args.work_dir)
    output = os.path.join(args.work_dir, "output")
    for arguments, message in CASES:
        what = "phew_pm " + " ".join(arguments)
        done = subprocess.run([args.sim, "--output", output] + arguments, capture_output=True, text=True,
                              timeout=60, cwd=args.work_dir)
        lines = done.stderr.splitlines()
        evidence = done.stdout + done.stderr
        check(done.returncode == 2, "%s: exit status 2 (got %d)" % (what, done.returncode), evidence)
        check(lines[:1] == [message], "%s: says %r" % (what, message), evidence)
        check(len(lines) > 1 and lines[1].startswith("usage: phew_pm"), "%s: then the usage" % what, evidence)
        check(done.stdout == "" and not os.path.exists(output), "%s: nothing else happens" % what, evidence)
    done = subprocess.run([args.sim, "--help"], capture_output=True, text=True, timeout=60, cwd=args.work_dir)
    check(done.returncode == 0 and done.stdout.startswith("usage: phew_pm") and done.stderr == "",
          "phew_pm --help: the usage on stdout, exit status 0", done.stdout + done.stderr)
    finish()


if __name__ == "__main__":
    main()
