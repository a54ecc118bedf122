#!/usr/bin/python3
"""The Python package's overhead (issue 30; a benchmark, not a test): phew.find_clumps on the
256^3 field of run_benchmark.py against the same C call, phew_find_clumps, made directly
through the package's cffi module with the same arrays, in one process, alternating.

Both allocate their three label arrays afresh per run (numpy, as the package does), so what
differs is the wrapper alone: checking and converting the arguments, the context and its
callbacks, reading the catalogue's rows into numpy tables and freeing the result. Target:
under 2% of the C call. On a machine where the first touches of the label pages vary by
tenths of a second between runs (this project's VMs) the two medians differ by that noise;
so the wrapper's own time is also measured inside each phew.find_clumps run: its whole time
less that of the phew_find_clumps call it makes (timed through a stand-in for the cffi
module's lib that forwards every name).

    PYTHONPATH=build/python /usr/bin/python3 bench/run_python_overhead.py [--size 256] [--repeats 7]
"""
import argparse
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run_benchmark import lognormal_field, print_machine  # noqa: E402

import phew  # noqa: E402
from phew._ffi import ffi, lib  # noqa: E402


def c_call(rho, threshold, saddle, threads):
    """phew_find_clumps with the arrays the package would pass, nothing else."""
    context = ffi.new("phew_context *")
    lib.phew_context_init(context)
    context.n_threads = threads
    c_input = ffi.new("phew_input *")
    n = rho.shape
    lib.phew_grid_init_whole(ffi.addressof(c_input, "grid"), n[2], n[1], n[0])
    for d in range(3):
        c_input.grid.periodic[d] = 1
    c_input.density = ffi.cast("const void *", rho.ctypes.data)
    c_input.density_type = lib.PHEW_FLOAT32
    params = ffi.new("phew_params *")
    lib.phew_params_init(params)
    params.density_threshold, params.relevance_threshold = threshold, 2.0
    params.saddle_merging, params.saddle_threshold = 1, saddle
    labels = [np.empty(n, np.int64) for _ in range(3)]
    c_labels = ffi.new("phew_labels *")
    c_labels.peak_patch_id, c_labels.clump_id, c_labels.halo_id = (ffi.cast("int64_t *", a.ctypes.data)
                                                                   for a in labels)
    result = ffi.new("phew_clump_result *")
    status = lib.phew_find_clumps(context, c_input, params, c_labels, result)
    n_clumps = result.n_clumps
    lib.phew_clump_result_free(result)
    assert status == lib.PHEW_OK, ffi.string(context.message)
    return n_clumps


class TimedLib:
    """The cffi lib with phew_find_clumps timed: the seconds of its last call."""

    def __init__(self, real):
        self.real, self.seconds = real, 0.0

    def __getattr__(self, name):
        return getattr(self.real, name)

    def phew_find_clumps(self, *args):
        t0 = time.perf_counter()
        status = self.real.phew_find_clumps(*args)
        self.seconds = time.perf_counter() - t0
        return status


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=256)
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    print_machine([args.threads], "phew (Python)", phew.__file__)
    rho = lognormal_field(args.size, 12345, 3.0)
    threshold = float(np.median(rho))
    saddle = 4.0 * threshold
    from phew import _clumps

    timed = TimedLib(lib)
    _clumps.lib = timed  # where find_clumps makes its C call
    c_seconds, py_seconds, inner, wrapper = [], [], [], []
    for _ in range(args.repeats):
        t0 = time.perf_counter()
        n_c = c_call(rho, threshold, saddle, args.threads)
        c_seconds.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        r = phew.find_clumps(rho, periodic=True, threshold=threshold, relevance=2.0, saddle=saddle,
                             threads=args.threads)
        py_seconds.append(time.perf_counter() - t0)
        inner.append(timed.seconds)
        wrapper.append(py_seconds[-1] - timed.seconds)
        assert len(r.clumps) == n_c
    c, py = statistics.median(c_seconds), statistics.median(py_seconds)
    print("%d^3 float32, %d thread(s), %d clumps; medians of %d runs each, alternating" % (
        args.size, args.threads, n_c, args.repeats))
    print("  C call (through cffi)   %.4f s   runs: %s" % (c, " ".join("%.3f" % s for s in c_seconds)))
    print("  phew.find_clumps        %.4f s   runs: %s" % (py, " ".join("%.3f" % s for s in py_seconds)))
    print("  difference of the medians %+.2f%% (%+.1f ms; the machine's noise shows here)" % (
        100 * (py - c) / c, 1000 * (py - c)))
    w, i = statistics.median(wrapper), statistics.median(inner)
    print("  inside phew.find_clumps: the C call %.4f s, the wrapper around it %.1f ms (runs: %s ms)" % (
        i, 1000 * w, " ".join("%.1f" % (1000 * x) for x in wrapper)))
    overhead = w / i
    print("  overhead %.2f%% of the C call   target < 2%%   %s" % (100 * overhead, "met" if overhead < 0.02
                                                                    else "MISSED"))


if __name__ == "__main__":
    main()
