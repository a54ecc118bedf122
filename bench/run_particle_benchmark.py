#!/usr/bin/python3
"""Benchmark of PHEW on particles against nanoflann's kNN (issue 9; a benchmark, not a test).

    /usr/bin/python3 bench/run_particle_benchmark.py --build BUILD_DIR [--repeats 3]
        [--sets clustered,cosmo] [--n 1000000] [--seed 9] [--points FILE --type float32]
        [--data-dir DIR] [--skip-phew] [--no-mpi] [--no-pin] [--strict]

Sets of positions (periodic unit box, raw little-endian x,y,z interleaved):
  clustered  --n particles from datasets/generators/make_particles.py (NFW haloes with
             sub-haloes plus 40% uniform background, seed --seed, float32), written once into
             --data-dir (default BUILD_DIR/particle_bench, never into git) and reused;
  cosmo      /work/shared/data/cosmo64_z0_pos.f32 (262144 particles, float32), if present;
  --points FILE [--type T] adds a set of your own (box [0, 1)^3).

For every set, --repeats rounds, each running in turn (separate processes):
  - the peer, BUILD_DIR/bin/knn_peer_nanoflann --points FILE --type T (k = 65, leaf size 10,
    one thread, pinned to core 0): seconds_build, seconds_query, seconds_total (wall clock; the
    process CPU time is printed too, as a hint of how much other load took), peak_rss_bytes,
    checksum_sum_dist_k (nanoflann is not periodic: see bench/knn_peer_nanoflann.cpp);
  - phew on 1 thread, pinned to core 0 (OMP_NUM_THREADS=1):
        BUILD_DIR/bin/bench_particles --points FILE --type T --box 1 1 1 --periodic --threads 1
  - phew on 2 threads (not pinned): the same with --threads 2;
  - phew on 2 MPI ranks of 1 thread: mpiexec --oversubscribe -np 2 bench_particles ...
    --threads 1 --mpi (OMPI_ALLOW_RUN_AS_ROOT=1, OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1).
Before the rounds the peer runs once more with --periodic (not timed) for the exact periodic
checksum against which phew's optional checksum is compared.

What the script expects of bench_particles (exit status 0, lines on stdout, whitespace
separated; other lines are ignored; under --mpi only rank 0 prints, times are the maximum over
ranks, peak_rss_bytes the sum over ranks):
  particles N                 the number of particles (all ranks), must equal the peer's
  stage NAME SECONDS          one per stage; the stages are tree, knn, density, graph, phew
                              (in this order; missing ones count as 0, others are listed too)
  stage total SECONDS         optional: the whole pipeline; if absent, the sum of the stages
  peak_rss_bytes N            VmHWM of the process at the end (input included)
  checksum_sum_dist_k X       optional: sum over particles of the periodic distance to the 65th
                              nearest particle, itself included (2 h of HOP's 64 neighbours),
                              summed in double; compared with the peer's periodic checksum
Figures, as medians: nanoflann's build + query time (the peer figure: its tree build is
included), phew's stages, and the ratios against the targets of issue 9 (one core unless said):
  nanoflann (build + query) / phew (tree + knn + density)   >= 4
  nanoflann (build + query) / phew (whole pipeline)          >= 3
  phew 1 thread / phew 2 threads (whole pipeline)            >= 1.7
  phew 1 rank / phew 2 ranks (whole pipeline)                >= 1.5
  peak RSS / particles (1 thread)                            <= 300 bytes
--skip-phew runs the peer only (for testing this script before bench_particles exists).
Each run also records the CPU time the hypervisor gave to other guests meanwhile (/proc/stat's
steal), printed per run: on a shared VM it explains most of the spread between runs.
--no-pin leaves the one-core runs unpinned (on a shared machine a pinned run cannot move away
from another process on core 0).
Exits 0 unless --strict and a target is missed.
"""
import argparse
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
COSMO = "/work/shared/data/cosmo64_z0_pos.f32"
STAGES = ["tree", "knn", "density", "graph", "phew"]
TARGET_NEIGHBOURS = 4.0
TARGET_PIPELINE = 3.0
TARGET_THREADS = 1.7
TARGET_RANKS = 1.5
TARGET_BYTES = 300.0


def parse(text):
    """`name value` pairs and `stage NAME SECONDS` lines."""
    out, stages = {}, {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[0] == "stage":
            try:
                stages[parts[1]] = float(parts[2])
            except ValueError:
                pass
        elif len(parts) == 2:
            try:
                out[parts[0]] = float(parts[1])
            except ValueError:
                out[parts[0]] = parts[1]
    if stages:
        out["stages"] = stages
        out["pipeline"] = stages["total"] if "total" in stages else sum(v for k, v in stages.items())
        out["neighbours"] = sum(stages.get(s, 0.0) for s in ("tree", "knn", "density"))
    return out


PIN = True


def steal_seconds():
    """Time the hypervisor gave this VM's CPUs to others so far (summed over CPUs; /proc/stat's
    8th field, in USER_HZ ticks), or None where there is no such count."""
    try:
        with open("/proc/stat") as f:
            fields = f.readline().split()
        return int(fields[8]) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return None


def run(cmd, pin, env_extra=None):
    pin = pin and PIN
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    env.update(env_extra or {})
    preexec = (lambda: os.sched_setaffinity(0, {0})) if pin and hasattr(os, "sched_setaffinity") else None
    load1 = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    steal0 = steal_seconds()
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, preexec_fn=preexec)
    steal1 = steal_seconds()
    if p.returncode != 0:
        sys.exit("run_particle_benchmark: %s failed (exit %d):\n%s%s" % (" ".join(cmd), p.returncode, p.stdout,
                                                                         p.stderr))
    out = parse(p.stdout)
    out["load_before"] = load1
    if steal0 is not None and steal1 is not None:
        out["steal_seconds"] = steal1 - steal0
    return out


def clustered_set(args):
    os.makedirs(args.data_dir, exist_ok=True)
    prefix = os.path.join(args.data_dir, "clustered-n%d-s%d" % (args.n, args.seed))
    path = prefix + "-pos.raw"
    if not os.path.exists(path) or os.path.getsize(path) != 12 * args.n:
        gen = os.path.join(ROOT, "datasets", "generators", "make_particles.py")
        subprocess.run([sys.executable, gen, prefix, "--n", str(args.n), "--seed", str(args.seed),
                        "--type", "float32"], check=True)
    return ("clustered %d (seed %d)" % (args.n, args.seed), path, "float32")


def med(runs, key):
    vals = [r[key] for r in runs if key in r]
    return statistics.median(vals) if vals else float("nan")


def load():
    try:
        return "%.2f %.2f %.2f" % os.getloadavg()
    except OSError:
        return "?"


def bench_set(args, name, path, typ, peer, phew):
    print("== %s: %s (%s)" % (name, path, typ), flush=True)
    print("load average before: %s" % load())
    check = run([peer, "--points", path, "--type", typ, "--periodic"], True)
    n = int(check["particles"])
    runs = {"peer": [], "t1": [], "t2": [], "r2": []}
    phew_cmd = [phew, "--points", path, "--type", typ, "--box", "1", "1", "1", "--periodic"] if phew else None
    for _ in range(args.repeats):
        runs["peer"].append(run([peer, "--points", path, "--type", typ], True))
        if phew_cmd:
            runs["t1"].append(run(phew_cmd + ["--threads", "1"], True, {"OMP_NUM_THREADS": "1"}))
            runs["t2"].append(run(phew_cmd + ["--threads", "2"], False, {"OMP_NUM_THREADS": "2"}))
            if not args.no_mpi:
                runs["r2"].append(run(["mpiexec", "--oversubscribe", "-np", "2"] + phew_cmd + ["--threads", "1", "--mpi"],
                                      False, {"OMP_NUM_THREADS": "1"}))
    print("load average after: %s" % load())
    for kind in ("t1", "t2", "r2"):
        for r in runs[kind]:
            if "stages" not in r or "particles" not in r:
                sys.exit("run_particle_benchmark: bench_particles printed no `stage` or `particles` line")
            if int(r["particles"]) != n:
                sys.exit("run_particle_benchmark: bench_particles has %d particles, the peer %d" % (r["particles"], n))

    print("%d particles; medians of %d runs each, alternating, same run" % (n, args.repeats))
    print()
    print("nanoflann (k = 65, leaf 10, 1 thread, not periodic): build %.3f s, query %.3f s, build + query %.3f s, "
          "peak RSS %.1f MiB (%.0f B/particle)" % (
              med(runs["peer"], "seconds_build"), med(runs["peer"], "seconds_query"),
              med(runs["peer"], "seconds_total"), med(runs["peer"], "peak_rss_bytes") / 2 ** 20,
              med(runs["peer"], "peak_rss_bytes") / n))
    print("  runs, build + query: %s s (1-minute load average before each: %s)" % (
        ", ".join("%.3f" % r["seconds_total"] for r in runs["peer"]),
        ", ".join("%.2f" % r["load_before"] for r in runs["peer"])))
    if all("steal_seconds" in r for r in runs["peer"]):
        print("  CPU time the hypervisor stole during each: %s s" % ", ".join("%.2f" % r["steal_seconds"]
                                                                       for r in runs["peer"]))
    if "cpu_seconds_query" in runs["peer"][0]:
        print("  process CPU time, build + query: %s s (median %.3f; wall = CPU when the core is not shared)" % (
            ", ".join("%.3f" % (r["cpu_seconds_build"] + r["cpu_seconds_query"]) for r in runs["peer"]),
            statistics.median(r["cpu_seconds_build"] + r["cpu_seconds_query"] for r in runs["peer"])))
    print("  checksum_sum_dist_k: %.17g (not periodic), %.17g (periodic)" % (
        runs["peer"][0]["checksum_sum_dist_k"], check["checksum_periodic_sum_dist_k"]))
    result = {"name": name, "particles": n, "peer": med(runs["peer"], "seconds_total"), "missed": False}
    if not phew_cmd:
        return result

    kinds = [k for k in ("t1", "t2", "r2") if runs[k]]
    titles = {"t1": "1 thread", "t2": "2 threads", "r2": "2 ranks"}
    stages = list(STAGES) + sorted({s for k in kinds for r in runs[k] for s in r["stages"]} - set(STAGES) - {"total"})

    def stage_med(kind, s):
        return statistics.median(r["stages"].get(s, 0.0) for r in runs[kind])

    print()
    print("%-26s" % "phew" + "".join("%12s" % titles[k] for k in kinds))
    for s in stages:
        print("%-26s" % ("stage %s (s)" % s) + "".join("%12.4f" % stage_med(k, s) for k in kinds))
    for label, key, scale in [("tree + knn + density (s)", "neighbours", 1), ("whole pipeline (s)", "pipeline", 1),
                              ("peak RSS (MiB)", "peak_rss_bytes", 2 ** -20),
                              ("bytes per particle", "peak_rss_bytes", 1.0 / n),
                              ("process before input (MiB)", "baseline_rss_bytes", 2 ** -20)]:
        if all(runs[k] and key in runs[k][0] for k in kinds):
            print("%-26s" % label + "".join("%12.4g" % (med(runs[k], key) * scale) for k in kinds))
    for kind in kinds:
        if all("steal_seconds" in r for r in runs[kind]):
            print("%s: whole pipeline per run %s s; CPU time the hypervisor stole during each %s s" % (
                titles[kind], ", ".join("%.3f" % r["pipeline"] for r in runs[kind]),
                ", ".join("%.2f" % r["steal_seconds"] for r in runs[kind])))
    print("(peak RSS includes the input positions, 12 B/particle as float32, and the caller's four\n"
          " per-particle outputs, 32 B/particle; '2 ranks' sums both processes)")
    print("1 thread / 2 threads, tree + knn + density alone: %.3f" %
          (med(runs["t1"], "neighbours") / med(runs["t2"], "neighbours")))
    for kind in kinds:
        sums = [r["checksum_sum_dist_k"] for r in runs[kind] if "checksum_sum_dist_k" in r]
        if sums:
            ref = check["checksum_periodic_sum_dist_k"]
            worst = max(abs(s - ref) / ref for s in sums)
            print("checksum_sum_dist_k (%s): %.17g, relative difference to the peer's periodic one %.2g%s" % (
                titles[kind], sums[0], worst, "" if worst < 1e-9 else "  MISMATCH"))
            result["missed"] |= worst >= 1e-9

    peer = med(runs["peer"], "seconds_total")
    checks = [("nanoflann / (tree + knn + density)", peer / med(runs["t1"], "neighbours"), TARGET_NEIGHBOURS, ">="),
              ("nanoflann / whole pipeline", peer / med(runs["t1"], "pipeline"), TARGET_PIPELINE, ">="),
              ("1 thread / 2 threads", med(runs["t1"], "pipeline") / med(runs["t2"], "pipeline"), TARGET_THREADS, ">=")]
    if runs["r2"]:
        checks.append(("1 rank / 2 ranks", med(runs["t1"], "pipeline") / med(runs["r2"], "pipeline"), TARGET_RANKS,
                       ">="))
    checks.append(("peak RSS bytes per particle", med(runs["t1"], "peak_rss_bytes") / n, TARGET_BYTES, "<="))
    print()
    for label, value, target, op in checks:
        ok = value >= target if op == ">=" else value <= target
        print("%-38s %8.3f   target %s %-6g %s" % (label, value, op, target, "met" if ok else "MISSED"))
        result["missed"] |= not ok
    return result


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--sets", default="clustered,cosmo", help="comma-separated: clustered, cosmo (or empty)")
    ap.add_argument("--n", type=int, default=1000000, help="particles of the clustered set")
    ap.add_argument("--seed", type=int, default=9, help="seed of the clustered set")
    ap.add_argument("--points", action="append", default=[], help="an extra set: raw positions in [0, 1)^3")
    ap.add_argument("--type", choices=["float32", "float64"], default="float32", help="type of the --points files")
    ap.add_argument("--data-dir", help="where the clustered set is written (default BUILD/particle_bench)")
    ap.add_argument("--skip-phew", action="store_true", help="run the nanoflann peer only")
    ap.add_argument("--no-mpi", action="store_true", help="skip the 2-rank runs")
    ap.add_argument("--no-pin", action="store_true", help="do not pin the one-core runs to core 0")
    ap.add_argument("--strict", action="store_true")
    args = ap.parse_args(argv)
    global PIN
    PIN = not args.no_pin
    args.data_dir = args.data_dir or os.path.join(args.build, "particle_bench")

    peer = os.path.join(args.build, "bin", "knn_peer_nanoflann")
    if not os.access(peer, os.X_OK):
        sys.exit("run_particle_benchmark: %s not found: install libnanoflann-dev (scripts/setup.sh) and build" % peer)
    phew = None
    if not args.skip_phew:
        phew = os.path.join(args.build, "bin", "bench_particles")
        if not os.access(phew, os.X_OK):
            sys.exit("run_particle_benchmark: %s not found: build the project first (or --skip-phew)" % phew)

    sets = []
    for s in filter(None, args.sets.split(",")):
        if s == "clustered":
            sets.append(clustered_set(args))
        elif s == "cosmo":
            if os.path.exists(COSMO):
                sets.append(("cosmo64 z=0", COSMO, "float32"))
            else:
                print("run_particle_benchmark: %s not found, skipped" % COSMO)
        else:
            sys.exit("run_particle_benchmark: unknown set %s" % s)
    sets += [(os.path.basename(p), p, args.type) for p in args.points]
    if not sets:
        sys.exit("run_particle_benchmark: no set to run")
    print("CPUs: %d (affinity %s); phew: %s" % (os.cpu_count(), sorted(os.sched_getaffinity(0)),
                                               "skipped" if args.skip_phew else phew))
    results = [bench_set(args, *s, peer, phew) for s in sets]
    print()
    print("summary: " + "; ".join("%s: nanoflann %.3f s" % (r["name"], r["peer"]) for r in results))
    if args.strict and any(r["missed"] for r in results):
        sys.exit(1)


if __name__ == "__main__":
    main()
