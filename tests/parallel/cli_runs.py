"""Running the phew tool serially and under mpirun, with a time limit, for the parallel tests;
their common command-line options and a small pass/fail checker."""
import argparse
import os
import shlex
import signal
import subprocess
import sys
import time

SUFFIXES = ["-patch.raw", "-clump.raw", "-halo.raw", "-clumps.csv", "-haloes.csv", "-dendrogram.csv"]


def parser(description):
    """The options every parallel test takes; add more, then parse_args()."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--cli", required=True, help="the phew tool")
    ap.add_argument("--libphew", required=True, help="the built libphew (for phew_grid_decompose)")
    ap.add_argument("--mpiexec", required=True)
    ap.add_argument("--numproc-flag", default="-np")
    ap.add_argument("--mpiexec-preflags", default="", help="extra mpiexec options, one string")
    ap.add_argument("--ranks", type=int, nargs="+", required=True)
    ap.add_argument("--source-dir", required=True)
    ap.add_argument("--work-dir", required=True)
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds per run")
    return ap


class Outcome:
    def __init__(self, code, out, err, seconds, timed_out):
        self.code, self.out, self.err, self.seconds, self.timed_out = code, out, err, seconds, timed_out

    def error_lines(self):
        """The tool's own messages on stderr (mpirun adds its own text when a rank fails)."""
        return [line for line in self.err.splitlines() if line.startswith("phew:")]

    def summary(self):
        """phew's messages, else the start of stderr (mpirun's own complaints)."""
        return " | ".join(self.error_lines()) or " ".join(self.err.split())[:400]


def _run(cmd, timeout, cwd):
    start = time.monotonic()
    # a session of its own, so that a hung run is killed with all its ranks
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=cwd,
                         start_new_session=True)
    try:
        out, err = p.communicate(timeout=timeout)
        return Outcome(p.returncode, out, err, time.monotonic() - start, False)
    except subprocess.TimeoutExpired:
        for sig in (signal.SIGTERM, signal.SIGKILL):
            try:
                os.killpg(p.pid, sig)
            except ProcessLookupError:
                break
            try:
                out, err = p.communicate(timeout=10)
                break
            except subprocess.TimeoutExpired:
                out, err = "", ""
        return Outcome(None, out or "", err or "", time.monotonic() - start, True)


class Runner:
    def __init__(self, args):
        self.args = args

    def serial(self, argv, cwd=None):
        """The tool on its own, as users run it without mpirun."""
        return _run([self.args.cli] + argv, self.args.timeout, cwd)

    def mpi(self, ranks, argv, cwd=None):
        a = self.args
        cmd = [a.mpiexec, a.numproc_flag, str(ranks), "--oversubscribe"] + shlex.split(a.mpiexec_preflags)
        return _run(cmd + [a.cli] + argv, a.timeout, cwd)


class Checker:
    def __init__(self, name):
        self.name, self.failures = name, []

    def check(self, ok, what):
        print(("ok    " if ok else "FAIL  ") + what, flush=True)
        if not ok:
            self.failures.append(what)
        return ok

    def finish(self):
        if self.failures:
            print(f"{self.name}: {len(self.failures)} check(s) FAILED:")
            for f in self.failures:
                print("  " + f)
        else:
            print(f"{self.name}: all checks passed")
        sys.exit(1 if self.failures else 0)


def files_starting(directory, prefix):
    return sorted(f for f in os.listdir(directory) if f.startswith(prefix))
