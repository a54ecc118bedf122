"""In-situ benchmark: per call of the example simulation phew_pm, the time in the Catalyst
adaptor and in the clump finder, against the simulation's step, on 1 and 2 ranks.

    /usr/bin/python3 bench/run_insitu_benchmark.py --build build [--mesh 128] [--steps 30]
                                                   [--every 5] [--ranks 1,2]

Each run: phew_pm --mesh N (N^3 particles) --catalyst catalyst/scripts/clumps.py --direct
(no pictures, no grid files), so that the same clumps are found twice per call: through
Catalyst, and by libphew directly. Figures are medians over the calls after the first (the
first imports ParaView's Python). Printed per rank count:
  step            one simulation step (kick, drift, exchange, deposit, FFT, kick)
  catalyst        the whole phew_catalyst_execute call
  pipelines       the part inside Catalyst's pipelines (Python, the filter, the writers)
  adaptor own     catalyst - pipelines: wrapping the arrays, the data request, agreement
  finder          phew_find_clumps on the same grid (the direct path's core call)
  writing         the script's writing of the two CSV catalogues
  merger trees    the script's two merger trees (clumps, haloes) and their CSV links
  overhead        catalyst - finder - writing - merger trees: everything that is not the
                  core's work or the script's (target: < 10% of finder)
and the peak resident memory of a run with and without the Catalyst script.
"""
import argparse
import csv
import os
import statistics
import subprocess
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def run(args, ranks, with_catalyst, out_dir):
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", PHEW_PICTURES="0",
               PHEW_GRID_EVERY="1000000")
    command = ["/usr/bin/time", "-f", "maxrss_kb %M", "mpiexec", "--oversubscribe", "--mca", "pml", "ob1",
               "-np", str(ranks), os.path.join(args.build, "bin", "phew_pm"), "--mesh", str(args.mesh),
               "--steps", str(args.steps), "--every", str(args.every), "--direct", "--output", out_dir]
    if with_catalyst:
        command += ["--catalyst", os.path.join(ROOT, "catalyst", "scripts", "clumps.py")]
    done = subprocess.run(command, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit("phew_pm failed:\n" + done.stderr[-3000:])
    rss = [int(line.split()[1]) for line in done.stderr.splitlines() if line.startswith("maxrss_kb")]
    return rss[-1] * 1024 if rss else float("nan")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build", default="build")
    parser.add_argument("--mesh", type=int, default=128)
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--every", type=int, default=5)
    parser.add_argument("--ranks", default="1,2")
    args = parser.parse_args()
    print("phew_pm: %d^3 mesh, %d^3 particles, %d steps, clumps every %d" % (args.mesh, args.mesh, args.steps, args.every))
    for ranks in [int(r) for r in args.ranks.split(",")]:
        with tempfile.TemporaryDirectory() as scratch:
            out = os.path.join(scratch, "with")
            rss_with = run(args, ranks, True, out)
            rss_without = run(args, ranks, False, os.path.join(scratch, "without"))
            rows = list(csv.DictReader(open(os.path.join(out, "timing.csv"))))[1:]
            writes, trees = {}, {}
            path = os.path.join(out, "script_timing.csv")
            if os.path.exists(path):
                for line in open(path):
                    step, seconds, tree_seconds = line.strip().split(",")
                    writes[int(step)], trees[int(step)] = float(seconds), float(tree_seconds)
        med = lambda key: statistics.median(float(r[key]) for r in rows)
        writing = statistics.median(writes.get(int(r["step"]), 0.0) for r in rows)
        tracking = statistics.median(trees.get(int(r["step"]), 0.0) for r in rows)
        step, catalyst, pipelines, finder = med("step_seconds"), med("catalyst_seconds"), med("pipeline_seconds"), \
            med("finder_seconds")
        overhead = statistics.median(float(r["catalyst_seconds"]) - float(r["finder_seconds"])
                                     - writes.get(int(r["step"]), 0.0) - trees.get(int(r["step"]), 0.0) for r in rows)
        print("== %d rank(s), medians of %d calls (s)" % (ranks, len(rows)))
        print("  step         %8.4f" % step)
        print("  catalyst     %8.4f   (%.1f%% of a step)" % (catalyst, 100 * catalyst / step))
        print("  pipelines    %8.4f" % pipelines)
        print("  adaptor own  %8.4f" % (catalyst - pipelines))
        print("  finder       %8.4f" % finder)
        print("  writing      %8.4f" % writing)
        print("  merger trees %8.4f   (clumps and haloes: PHEW Merger Tree and writing its links)" % tracking)
        print("  overhead     %8.4f   = %.1f%% of the finder (target < 10%%)" % (overhead, 100 * overhead / finder))
        print("  peak RSS per run: %.0f MB with the Catalyst script, %.0f MB without (rank 0's mpiexec tree)"
              % (rss_with / 1e6, rss_without / 1e6))


if __name__ == "__main__":
    main()
