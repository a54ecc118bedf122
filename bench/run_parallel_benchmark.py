#!/usr/bin/python3
"""Parallel benchmark of the phew core: the same field on 1, 2, ... ranks (a benchmark, not a test).

    /usr/bin/python3 bench/run_parallel_benchmark.py --build BUILD_DIR [--size 256] [--repeats 5]
                                                     [--ranks 1,2,8]

Generates the seeded lognormal field of run_benchmark.py (same seed, smoothing, threshold and
parameters), runs BUILD_DIR/bin/bench_phew under `mpirun -np N ... --mpi` for every N in
--ranks (--repeats runs each, separate processes), and prints the medians: per-stage times
(maximum over ranks), communication rounds and bytes sent per stage (summed over ranks), and
the diagnostics of the paper's Table 2 (active and ghost peaks per rank, ghost/active ratio,
sparse saddle-matrix entries, hash collisions). The speed-up of each N is the whole-pipeline
time of the first rank count divided by its own; the target is >= 1.6 for 2 ranks against 1.
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run_benchmark import find_bench, lognormal_field, parse_output  # noqa: E402

TARGET_SPEEDUP_2_RANKS = 1.6
STAGES = ["watershed", "saddles", "noise_removal", "saddle_merging", "properties"]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", help="build directory holding bin/bench_phew")
    ap.add_argument("--bench", help="path of bench_phew (overrides --build)")
    ap.add_argument("--size", type=int, default=256)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--seed", type=int, default=12345)
    ap.add_argument("--smoothing", type=float, default=3.0)
    ap.add_argument("--sigma", type=float, default=1.0)
    ap.add_argument("--relevance", type=float, default=2.0)
    ap.add_argument("--ranks", default="1,2,8", help="comma-separated rank counts (default 1,2,8)")
    args = ap.parse_args(argv)
    bench = find_bench(args)
    ranks = [int(x) for x in args.ranks.split(",")]

    rho = lognormal_field(args.size, args.seed, args.smoothing, args.sigma)
    threshold = float(np.median(rho))
    saddle = 4.0 * threshold
    tmpdir = tempfile.mkdtemp(prefix="phew-pbench-")
    raw = os.path.join(tmpdir, "field.raw")
    rho.tofile(raw)
    n = args.size
    print(f"field: {n}^3 lognormal GRF, seed {args.seed}; threshold {threshold:.6g}, relevance "
          f"{args.relevance}, saddle {saddle:.6g}, periodic; {os.cpu_count()} logical CPU(s)")
    results = {}
    try:
        for r in ranks:
            cmd = ["mpirun", "--allow-run-as-root", "--oversubscribe", "-np", str(r), bench, "--input", raw,
                   "--dims", str(n), str(n), str(n), "--type", "float32", "--threshold", repr(threshold),
                   "--relevance", repr(args.relevance), "--saddle", repr(saddle), "--periodic", "--mpi"]
            runs = []
            for i in range(args.repeats):
                p = subprocess.run(cmd, capture_output=True, text=True)
                if p.returncode != 0:
                    print(p.stdout + p.stderr)
                    sys.exit(f"run_parallel_benchmark: bench_phew failed on {r} rank(s)")
                runs.append(parse_output(p.stdout))
            results[r] = runs
            print(f"{r} rank(s): totals " + ", ".join(f"{x['seconds_total']:.3f}" for x in runs) + " s")
    finally:
        shutil.rmtree(tmpdir, ignore_errors=True)

    def med(r, key):
        return statistics.median(x[key] for x in results[r])

    print()
    print(f"medians over {args.repeats} run(s)    " + "".join(f"{str(r) + ' rank(s)':>16}" for r in ranks))
    for s in STAGES:
        print(f"  seconds {s:<22}" + "".join(f"{med(r, 'seconds_' + s):>16.4f}" for r in ranks))
    print(f"  seconds total{'':<17}" + "".join(f"{med(r, 'seconds_total'):>16.4f}" for r in ranks))
    for s in STAGES:
        print(f"  rounds {s:<23}" + "".join(f"{int(med(r, 'rounds_' + s)):>16d}" for r in ranks))
    for s in STAGES:
        print(f"  MB sent {s:<22}" + "".join(f"{med(r, 'bytes_' + s) / 1e6:>16.3f}" for r in ranks))
    for key in ["peaks", "clumps", "haloes", "max_active_peaks", "max_ghost_peaks", "max_sparse_entries",
                "hash_collisions"]:
        print(f"  {key:<30}" + "".join(f"{int(med(r, key)):>16d}" for r in ranks))
    print(f"  {'max_ghost_ratio':<30}" + "".join(f"{med(r, 'max_ghost_ratio'):>16.4f}" for r in ranks))
    base = med(ranks[0], "seconds_total")
    print(f"  {'speed-up vs ' + str(ranks[0]) + ' rank(s)':<30}" +
          "".join(f"{base / med(r, 'seconds_total'):>16.2f}" for r in ranks))
    if 1 in ranks and 2 in ranks:
        speedup = med(1, "seconds_total") / med(2, "seconds_total")
        print(f"\n2 ranks vs 1: {speedup:.2f}x, target >= {TARGET_SPEEDUP_2_RANKS}: "
              f"{'MET' if speedup >= TARGET_SPEEDUP_2_RANKS else 'MISSED'}")
    same = all(int(med(r, "clumps")) == int(med(ranks[0], "clumps")) for r in ranks)
    print(f"same number of clumps on every rank count: {same}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
