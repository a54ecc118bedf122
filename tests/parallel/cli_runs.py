"""Running the phew tool serially and under mpirun, with a time limit, for the parallel tests;
their common command-line options and a small pass/fail checker."""
import argparse
import os
import shlex
import signal
import subprocess
import sys
import time

SUFFIXES = ["-patch.raw", "-clump.raw", "-halo.raw", "-clumps.csv", "-haloes.csv", "-dendrogram.csv",
            "-run.json"]
POINT_SUFFIXES = SUFFIXES + ["-density.raw"]  # the particle mode's eight files


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
    ap.add_argument("--fault-shim", default=None,
                    help="the test-only LD_PRELOAD library of tests/cli (io_fault_shim.c)")
    return ap


def fault_env(shim, rules, rank=None):
    """Environment additions that make the tool's file operations fail as rules say
    (tests/cli/io_fault_shim.c), on every process or only on MPI rank `rank`."""
    env = {"LD_PRELOAD": shim, "PHEW_IO_FAULTS": rules}
    if rank is not None:
        env["PHEW_IO_FAULTS_RANK"] = str(rank)
    return env


def distinct_threads(counts):
    """The --threads values of counts that run differently on this machine, in order: the core
    caps a request at the cores a process may run on (core/src/base/threads.c; ctest leaves the
    ranks unbound, so they have this process's cores), so two requests at or above that number
    run the same threads and the same code, and only the first of them is kept. On CI's two
    cores --threads 2 and 4 are one run; on a larger machine both run. Prints what it leaves out."""
    cores = max(1, len(os.sched_getaffinity(0)))
    kept, first = [], {}  # the requests kept; threads used -> the request that runs them
    for n in counts:
        used = cores if n <= 0 else min(n, cores)
        if used in first:
            print(f"note  --threads {n} left out: capped at the {cores} core(s) here, it runs as "
                  f"--threads {first[used]}", flush=True)
            continue
        first[used] = n
        kept.append(n)
    return kept


class Outcome:
    def __init__(self, code, out, err, seconds, timed_out):
        self.code, self.out, self.err, self.seconds, self.timed_out = code, out, err, seconds, timed_out

    def error_lines(self):
        """The tool's own messages on stderr (mpirun adds its own text when a rank fails)."""
        return [line for line in self.err.splitlines() if line.startswith("phew:")]

    def summary(self):
        """phew's messages, else the start of stderr (mpirun's own complaints)."""
        return " | ".join(self.error_lines()) or " ".join(self.err.split())[:400]


def _start(cmd, cwd, env):
    full_env = dict(os.environ, **env) if env else None
    # a session of its own, so that a hung run is killed with all its ranks
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=cwd,
                            start_new_session=True, env=full_env)


def finish(p, timeout, start):
    """Waits for a started run (killing it and its ranks after timeout seconds)."""
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


def _run(cmd, timeout, cwd, env=None):
    start = time.monotonic()
    return finish(_start(cmd, cwd, env), timeout, start)


class Runner:
    def __init__(self, args):
        self.args = args

    def serial(self, argv, cwd=None, env=None):
        """The tool on its own, as users run it without mpirun."""
        return _run([self.args.cli] + argv, self.args.timeout, cwd, env)

    def mpi_command(self, ranks, argv):
        a = self.args
        cmd = [a.mpiexec, a.numproc_flag, str(ranks), "--oversubscribe"] + shlex.split(a.mpiexec_preflags)
        return cmd + [a.cli] + argv

    def mpi(self, ranks, argv, cwd=None, env=None):
        return _run(self.mpi_command(ranks, argv), self.args.timeout, cwd, env)

    def start_mpi(self, ranks, argv, cwd=None, env=None):
        """mpirun in the background: (the Popen, its start time) for finish()."""
        return _start(self.mpi_command(ranks, argv), cwd, env), time.monotonic()


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
