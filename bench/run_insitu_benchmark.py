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
  finder          the core's call inside the PHEW Clump Finder filter (its PHEWSeconds)
  direct finder   phew_find_clumps on the same grid by the direct path, for comparison
  filter update   the filter's whole update, seen from the script (pipeline, adaptor of the
                  image, the core, the tables)
  writing         the script's writing of the two CSV catalogues
  merger trees    the script's two merger trees (clumps, haloes) and their CSV links
  overhead        catalyst - finder - writing - merger trees: everything that is not the
                  core's work or the script's (target: < 10% of finder); also given against
                  the direct finder
and the peak resident memory of a run with the Catalyst script, with it but without its merger
trees (PHEW_TREES=0), and without it.
"""
import argparse
import csv
import os
import statistics
import subprocess
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def run(args, ranks, with_catalyst, out_dir, trees=True):
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", PHEW_PICTURES="0",
               PHEW_GRID_EVERY="0", PHEW_TREES="1" if trees else "0")
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
            rss_finder_only = run(args, ranks, True, os.path.join(scratch, "finder_only"), trees=False)
            rss_without = run(args, ranks, False, os.path.join(scratch, "without"))
            rows = list(csv.DictReader(open(os.path.join(out, "timing.csv"))))[1:]
            script = {}  # step -> (filter update, core in the filter, writing, merger trees)
            path = os.path.join(out, "script_timing.csv")
            if os.path.exists(path):
                for line in open(path):
                    fields = line.strip().split(",")
                    script[int(fields[0])] = [float(x) for x in fields[1:5]]
        rows = [r for r in rows if int(r["step"]) in script]
        med = lambda values: statistics.median(list(values))
        of_script = lambda k: med(script[int(r["step"])][k] for r in rows)
        of_run = lambda key: med(float(r[key]) for r in rows)
        step, catalyst, pipelines, direct = of_run("step_seconds"), of_run("catalyst_seconds"), \
            of_run("pipeline_seconds"), of_run("finder_seconds")
        update, finder, writing, tracking = of_script(0), of_script(1), of_script(2), of_script(3)
        outside = lambda r, core: (float(r["catalyst_seconds"]) - core - script[int(r["step"])][2]
                                   - script[int(r["step"])][3])
        overhead = med(outside(r, script[int(r["step"])][1]) for r in rows)
        overhead_direct = med(outside(r, float(r["finder_seconds"])) for r in rows)
        print("== %d rank(s), medians of %d calls (s)" % (ranks, len(rows)))
        print("  step          %8.4f" % step)
        print("  catalyst      %8.4f   (%.1f%% of a step)" % (catalyst, 100 * catalyst / step))
        print("  pipelines     %8.4f" % pipelines)
        print("  adaptor own   %8.4f" % (catalyst - pipelines))
        print("  filter update %8.4f" % update)
        print("  finder        %8.4f   (the core in the filter)" % finder)
        print("  direct finder %8.4f" % direct)
        print("  writing       %8.4f" % writing)
        print("  merger trees  %8.4f   (clumps and haloes: PHEW Merger Tree and writing its links)" % tracking)
        print("  overhead      %8.4f   = %.1f%% of the finder (target < 10%%); against the direct finder "
              "%.4f = %.1f%%" % (overhead, 100 * overhead / finder, overhead_direct, 100 * overhead_direct / direct))
        labels = 24.0 * args.mesh ** 3 / ranks
        print("  peak RSS per run (rank 0's mpiexec tree): %.0f MB with the Catalyst script, %.0f MB with it but "
              "no merger trees (PHEW_TREES=0), %.0f MB without Catalyst; the labels: %.0f MB per rank"
              % (rss_with / 1e6, rss_finder_only / 1e6, rss_without / 1e6, labels / 1e6))


if __name__ == "__main__":
    main()
