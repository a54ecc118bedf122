#!/usr/bin/python3
"""Benchmark of PHEW on AMR against the uniform-grid path (a benchmark, not a test).

    /usr/bin/python3 bench/run_amr_benchmark.py --build BUILD_DIR [--repeats 5] [--base 96]
                                                [--levels 2] [--strict]

Runs BUILD_DIR/bin/bench_amr (see bench/bench_amr.c for the hierarchy: seeded blobs on a smooth
background, level 0 of base^3 cells in 16^3 blocks, refined around the blobs, about 9 million
leaf cells on 3 levels with the defaults), alternating in the same run:
  - AMR on 1 rank (pinned to core 0 with sched_setaffinity when possible),
  - the uniform grid with as many cells as the hierarchy has leaves, on 1 rank (pinned),
  - AMR on 2 ranks (mpirun --oversubscribe -np 2, blocks in contiguous ranges, level order).
Each is a separate process, --repeats times; the medians are printed with the targets of
issue 8: AMR leaf cells per second at least one third of the grid's cells per second (one
core), at most 64 bytes of working memory per leaf cell beyond input and label arrays, and
2 ranks at least 1.5x faster than 1. Exits 0 unless --strict and a target is missed.
"""
import argparse
import os
import statistics
import subprocess
import sys

TARGET_RATIO = 1.0 / 3.0
TARGET_BYTES = 64.0
TARGET_SPEEDUP = 1.5


def parse(text):
    out = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 2:
            try:
                out[parts[0]] = float(parts[1])
            except ValueError:
                out[parts[0]] = parts[1]
    return out


def run(cmd, pin):
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    preexec = (lambda: os.sched_setaffinity(0, {0})) if pin and hasattr(os, "sched_setaffinity") else None
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, preexec_fn=preexec)
    if p.returncode != 0:
        sys.exit("run_amr_benchmark: %s failed:\n%s%s" % (" ".join(cmd), p.stdout, p.stderr))
    return parse(p.stdout)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "build"))
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--base", type=int, default=96)
    ap.add_argument("--levels", type=int, default=2)
    ap.add_argument("--strict", action="store_true")
    args = ap.parse_args(argv)
    bench = os.path.join(args.build, "bin", "bench_amr")
    if not os.access(bench, os.X_OK):
        sys.exit("run_amr_benchmark: %s not found: build the project first" % bench)
    common = ["--base", str(args.base), "--levels", str(args.levels)]
    mpirun = ["mpirun", "--oversubscribe", "-np", "2"]
    runs = {"amr": [], "grid": [], "amr2": []}
    for _ in range(args.repeats):
        runs["amr"].append(run([bench, "--mode", "amr"] + common, True))
        runs["grid"].append(run([bench, "--mode", "grid"] + common, True))
        runs["amr2"].append(run(mpirun + [bench, "--mode", "amr", "--mpi"] + common, False))

    def med(kind, key):
        return statistics.median(r[key] for r in runs[kind])

    first = runs["amr"][0]
    levels = int(first["levels"])
    print("AMR hierarchy: %d leaf cells, %d blocks of 16^3 on %d levels (%s)" % (
        first["cells"], first["blocks"], levels,
        ", ".join("level %d: %d" % (l, first["blocks_level%d" % l]) for l in range(levels))))
    print("test cells %d, peaks %d, clumps %d, haloes %d" % (first["test_cells"], first["peaks"], first["clumps"],
                                                              first["haloes"]))
    print("uniform grid: %d cells; medians of %d runs each, alternating, same machine and run" % (
        runs["grid"][0]["cells"], args.repeats))
    print()
    print("%-28s %12s %12s %12s" % ("", "AMR 1 rank", "grid 1 rank", "AMR 2 ranks"))
    for key in ["seconds", "seconds_watershed", "seconds_saddles", "seconds_noise_removal", "seconds_saddle_merging",
                "seconds_properties", "cells_per_second", "bytes_per_cell"]:
        print("%-28s %12.4g %12.4g %12.4g" % (key, med("amr", key), med("grid", key), med("amr2", key)))
    ratio = med("amr", "cells_per_second") / med("grid", "cells_per_second")
    speedup = med("amr", "seconds") / med("amr2", "seconds")
    bytes_per_cell = med("amr", "bytes_per_cell")
    print()
    checks = [("AMR / grid throughput (1 core)", ratio, ">= %.3f" % TARGET_RATIO, ratio >= TARGET_RATIO),
              ("working memory, bytes per leaf cell", bytes_per_cell, "<= %g" % TARGET_BYTES,
               bytes_per_cell <= TARGET_BYTES),
              ("speed-up of 2 ranks over 1", speedup, ">= %g" % TARGET_SPEEDUP, speedup >= TARGET_SPEEDUP)]
    missed = False
    for label, value, target, ok in checks:
        print("%-38s %8.3f   target %-8s %s" % (label, value, target, "met" if ok else "MISSED"))
        missed |= not ok
    if args.strict and missed:
        sys.exit(1)


if __name__ == "__main__":
    main()
