#!/usr/bin/python3
"""Benchmark of the halo finders on particles (issue 10): Friends-of-Friends against hfof and
scipy, HOP against yt's HOP (a benchmark, not a test).

For each set of positions (periodic unit box): `phew --points ... --finder fof` (b = 0.2, the
tool's own reading and writing included, wall clock around the process) on one thread pinned to
core 0, on two threads, and on two MPI ranks of one thread; in the same run, alternating,
hfof's `fof(pos, b * spacing, boxsize=1)` (positions already in memory, one core) when --hfof
gives its source tree, and scipy's `cKDTree(boxsize=1).query_pairs` plus
`connected_components` on the first 1e5 particles of the set and, with --scipy-full, on all of
them. Prints medians, the peak RSS per particle of each, and the ratios next to the targets:
phew on one thread faster than hfof; 1 thread / 2 threads >= 1.7; 1 rank / 2 ranks >= 1.5.
Each peer's groups of at least 20 particles must be phew's (their sizes are compared).

    /usr/bin/python3 bench/run_halo_benchmark.py --build build [--repeats 3] \\
        [--sets clustered,clustered4,cosmo] [--hfof /path/to/hfof] [--scipy-full] [--no-mpi]

HOP (--finders hop): `phew --finder hop --outer 80` on one pinned core and on two threads against
yt's HOP C code (yt_astro_analysis, halo_finding/hop) run by a small driver, hop_bench, that reads
the same float32 file (--yt-hop DIR; bench/README.md says how it is built), alternating; the
targets (issue 29) are phew on one core at least 4x faster than yt's code, density and I/O
included, and 1 thread / 2 threads >= 1.7; the partitions must be the same, and the two threads'
files the one thread's, byte for byte.

hfof (github pec27/hfof) is fetched and built outside the repository; its build is
`gcc -O2 -march=native -fPIC -shared -std=c99 -o build/libhfofSUFFIX src/*.c` with SUFFIX
Python's EXT_SUFFIX (its own Makefile). Without --hfof the benchmark says so and skips it.
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
from run_particle_benchmark import steal_seconds  # noqa: E402
COSMO = "/work/shared/data/cosmo64_z0_pos.f32"
B = 0.2
TARGET_THREADS = 1.7
TARGET_RANKS = 1.5
TARGET_HOP = 4.0
OUTER_HOP = 80.0
# Open MPI on one node: its default UCX layer costs about 0.2 s of start-up per run (0.35 s
# against 0.14 s for MPI_Init of 2 ranks with ob1); shared memory needs none of it
MPIEXEC = ["mpiexec", "--oversubscribe", "--mca", "pml", "ob1"]

PEER = r"""
import sys, time, resource
import numpy as np
kind, path, n_use, hfof_dir = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
pos = np.fromfile(path, dtype='<f4').reshape(-1, 3)[:n_use].astype(np.float64)
n = len(pos)
length = %(b)r * (1.0 / n) ** (1.0 / 3.0)
if kind == 'hfof':
    sys.path.insert(0, hfof_dir)
    from hfof import fof
    t = time.perf_counter()
    labels = fof(pos, length, boxsize=1.0)
    seconds = time.perf_counter() - t
else:
    from scipy.spatial import cKDTree
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components
    t = time.perf_counter()
    pairs = cKDTree(pos, boxsize=1.0).query_pairs(length, output_type='ndarray')
    graph = coo_matrix((np.ones(len(pairs)), (pairs[:, 0], pairs[:, 1])), shape=(n, n))
    labels = connected_components(graph, directed=False)[1]
    seconds = time.perf_counter() - t
sizes = np.bincount(labels)
big = np.sort(sizes[sizes >= 20])[::-1]
print('seconds', seconds)
print('groups', len(big))
print('sizes', ','.join(str(int(s)) for s in big))
print('peak_rss_bytes', resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)
""" % {"b": B}


def run(cmd, pin):
    """Runs cmd; returns (wall seconds, stdout, steal seconds)."""
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    preexec = (lambda: os.sched_setaffinity(0, {0})) if pin else None
    steal0 = steal_seconds()
    start = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                         preexec_fn=preexec)
    out, err = p.communicate()
    wall = time.perf_counter() - start
    steal1 = steal_seconds()
    if p.returncode != 0:
        sys.exit("run_halo_benchmark: %s failed (exit %d):\n%s%s" % (" ".join(cmd), p.returncode, out, err))
    return wall, out, (steal1 - steal0) if steal0 is not None and steal1 is not None else float("nan")


def phew_sizes(prefix):
    sizes = []
    with open(prefix + "-groups.csv") as f:
        next(f)
        for line in f:
            sizes.append(int(line.split(",")[1]))
    return sizes


def clustered_set(args, n):
    os.makedirs(args.data_dir, exist_ok=True)
    prefix = os.path.join(args.data_dir, "clustered-n%d-s%d" % (n, args.seed))
    path = prefix + "-pos.raw"
    if not os.path.exists(path) or os.path.getsize(path) != 12 * n:
        gen = os.path.join(ROOT, "datasets", "generators", "make_particles.py")
        subprocess.run([sys.executable, gen, prefix, "--n", str(n), "--seed", str(args.seed), "--type", "float32"],
                       check=True)
    return path


def tool_total(out):
    """The 'total' seconds of phew --verbose: its call of the finder, after MPI start-up."""
    for line in out.splitlines():
        if line.strip().startswith("total"):
            return float(line.split()[1])
    return float("nan")


def peak_rss_of(cmd_out):
    for line in cmd_out.splitlines():
        if line.startswith("peak_rss_bytes"):
            return float(line.split()[1])
    return float("nan")


def bench_set(args, name, path, scratch):
    n = os.path.getsize(path) // 12
    phew = os.path.join(args.build, "bin", "phew")
    prefix = os.path.join(scratch, "fof")
    base = [phew, "--points", path, "--type", "float32", "--box", "1", "1", "1", "--periodic", "--finder", "fof",
            "--output", prefix]
    runs = {"1 thread": [], "2 threads": [], "2 ranks": [], "hfof": [], "scipy 1e5": [], "scipy all": []}
    inside = {"1 thread": [], "2 ranks": []}  # the tool's own total (--verbose): the call, after start-up
    rss = {}
    steal = {k: [] for k in runs}
    peer = os.path.join(scratch, "peer.py")
    with open(peer, "w") as f:
        f.write(PEER)
    sizes = {}
    print("== %s: %s (%d particles)" % (name, path, n), flush=True)
    for rep in range(args.repeats):
        wall, out, st = run(base + ["--threads", "1", "--verbose"], True)
        runs["1 thread"].append(wall)
        inside["1 thread"].append(tool_total(out))
        steal["1 thread"].append(st)
        if rep == 0:
            sizes["phew"] = phew_sizes(prefix)
            rss["phew"] = measure_rss(base + ["--threads", "1"])
        wall, out, st = run(base + ["--threads", "2"], False)
        runs["2 threads"].append(wall)
        steal["2 threads"].append(st)
        if not args.no_mpi:
            wall, out, st = run(MPIEXEC + ["-np", "2"] + base + ["--threads", "1", "--verbose"], False)
            runs["2 ranks"].append(wall)
            inside["2 ranks"].append(tool_total(out))
            steal["2 ranks"].append(st)
        if args.hfof:
            _, out, st = run([sys.executable, peer, "hfof", path, str(n), args.hfof], True)
            runs["hfof"].append(float(out.split("seconds")[1].split()[0]))
            steal["hfof"].append(st)
            if rep == 0:
                sizes["hfof"] = [int(s) for s in out.split("sizes")[1].split()[0].split(",") if s]
                rss["hfof"] = peak_rss_of(out)
        if rep == 0 or args.repeats_scipy:
            _, out, st = run([sys.executable, peer, "scipy", path, str(min(n, 100000)), ""], True)
            runs["scipy 1e5"].append(float(out.split("seconds")[1].split()[0]))
            if args.scipy_full and rep == 0:
                _, out, st = run([sys.executable, peer, "scipy", path, str(n), ""], True)
                runs["scipy all"].append(float(out.split("seconds")[1].split()[0]))
                sizes["scipy"] = [int(s) for s in out.split("sizes")[1].split()[0].split(",") if s]
                rss["scipy"] = peak_rss_of(out)
    med = {k: statistics.median(v) for k, v in runs.items() if v}
    print("medians of %d runs, alternating, same run; phew includes its reading and writing" % args.repeats)
    for k, v in runs.items():
        if v:
            print("  %-10s %8.3f s   runs %s   steal %s" % (k, med[k], ", ".join("%.3f" % x for x in v),
                                                           ", ".join("%.2f" % x for x in steal.get(k, []))))
    for k, v in rss.items():
        print("  peak RSS %-6s %7.1f MiB (%.0f B/particle)" % (k, v / 2 ** 20, v / n))
    for k, v in sizes.items():
        if k != "phew":
            print("  groups >= 20: %s %d, phew %d: %s" % (k, len(v), len(sizes["phew"]),
                                                         "same sizes" if v == sizes["phew"] else "DIFFERENT"))
    if "hfof" in med:
        r = med["hfof"] / med["1 thread"]
        print("  hfof / phew (1 thread)      %6.3f   target > 1      %s" % (r, "met" if r > 1 else "MISSED"))
    else:
        print("  hfof: not run (give --hfof PATH to its source tree, built)")
    r = med["1 thread"] / med["2 threads"]
    print("  1 thread / 2 threads        %6.3f   target >= %.1f   %s" % (r, TARGET_THREADS,
                                                                        "met" if r >= TARGET_THREADS else "MISSED"))
    if "2 ranks" in med:
        r = med["1 thread"] / med["2 ranks"]
        print("  1 rank / 2 ranks            %6.3f   target >= %.1f   %s" % (r, TARGET_RANKS,
                                                                            "met" if r >= TARGET_RANKS else "MISSED"))
        one, two = statistics.median(inside["1 thread"]), statistics.median(inside["2 ranks"])
        print("  the tool's own total (after start-up): 1 rank %.3f s, 2 ranks %.3f s, ratio %.3f" % (one, two, one / two))
    sys.stdout.flush()


def same_files(prefix_a, prefix_b):
    """Whether phew's two runs wrote the same group files, byte for byte."""
    for suffix in ("-group.raw", "-groups.csv", "-density.raw"):
        with open(prefix_a + suffix, "rb") as a, open(prefix_b + suffix, "rb") as b:
            if a.read() != b.read():
                return False
    return True


def hop_set(args, name, path, scratch):
    """HOP, delta_outer OUTER_HOP: phew on one thread (pinned; density and reading and writing
    included) and on two threads against yt's HOP (--yt-hop: a driver of yt_astro_analysis' HOP C
    code that reads the same file), alternating; medians, peak RSS, whether the two partitions are
    equal and whether the two thread counts wrote the same bytes."""
    n = os.path.getsize(path) // 12
    phew = os.path.join(args.build, "bin", "phew")
    prefix = os.path.join(scratch, "hop")
    cmd = [phew, "--points", path, "--type", "float32", "--box", "1", "1", "1", "--periodic", "--finder", "hop",
           "--outer", str(OUTER_HOP), "--threads", "1", "--output", prefix]
    cmd2 = cmd[:-3] + ["2", "--output", prefix + "-t2"]
    runs = {"phew": [], "phew 2t": [], "yt": []}
    inside = {"phew": [], "phew 2t": []}  # the tool's own total (--verbose): the call, after start-up
    steal = {k: [] for k in runs}
    rss = {}
    print("== HOP, delta_outer %g, %s: %s (%d particles)" % (OUTER_HOP, name, path, n), flush=True)
    yt = os.path.join(args.yt_hop, "hop_bench") if args.yt_hop else None
    yt_groups = os.path.join(scratch, "yt-groups.raw")
    for rep in range(args.repeats):
        for key, c in (("phew", cmd), ("phew 2t", cmd2)):
            wall, out, st = run(c + ["--verbose"], key == "phew")
            runs[key].append(wall)
            inside[key].append(tool_total(out))
            steal[key].append(st)
        if rep == 0:
            rss["phew"] = measure_rss(cmd)
        if yt:
            yt_cmd = [yt, path, str(n), str(OUTER_HOP)] + ([yt_groups] if rep == 0 else [])
            wall, out, st = run(yt_cmd, True)
            runs["yt"].append(wall)
            steal["yt"].append(st)
            if rep == 0:
                rss["yt"] = float(out.split("peak_rss_kb=")[1].split()[0]) * 1024
    med = {k: statistics.median(v) for k, v in runs.items() if v}
    print("medians of %d runs, alternating, same run, wall clock of each program (reading included); one core, "
          "phew 2t: two threads on two cores" % args.repeats)
    for k, v in runs.items():
        if v:
            print("  %-8s %8.3f s   runs %s   steal %s" % (k, med[k], ", ".join("%.3f" % x for x in v),
                                                         ", ".join("%.2f" % x for x in steal[k])))
    r = med["phew"] / med["phew 2t"]
    print("  1 thread / 2 threads        %6.3f   target >= %.1f   %s" % (r, TARGET_THREADS,
                                                                        "met" if r >= TARGET_THREADS else "MISSED"))
    one, two = statistics.median(inside["phew"]), statistics.median(inside["phew 2t"])
    print("  the tool's own total (after start-up): 1 thread %.3f s, 2 threads %.3f s, ratio %.3f" % (one, two,
                                                                                                     one / two))
    print("  2 threads' files: %s" % ("the same bytes as 1 thread's" if same_files(prefix, prefix + "-t2") else
                                      "DIFFERENT from 1 thread's"))
    for k, v in rss.items():
        print("  peak RSS %-6s %7.1f MiB (%.0f B/particle)" % (k, v / 2 ** 20, v / n))
    if "yt" in med:
        ours = np.fromfile(prefix + "-group.raw", dtype="<i8")
        theirs = np.fromfile(yt_groups, dtype="<i8")
        both = (ours >= 0) & (theirs >= 0)
        pairs, count = np.unique(np.stack([ours[both], theirs[both]], 1), axis=0, return_counts=True)
        same = np.array_equal(ours < 0, theirs < 0) and len(pairs) == len(np.unique(pairs[:, 0])) == \
            len(np.unique(pairs[:, 1]))
        # particles outside the largest overlap of their phew group with a yt group
        largest = {}
        for (a, _), c in zip(pairs, count):
            largest[a] = max(largest.get(a, 0), c)
        moved = int(both.sum() - sum(largest.values()) + (ours >= 0).sum() - both.sum() + (theirs >= 0).sum() -
                    both.sum())
        print("  groups: phew %d, yt %d, %s" % (ours.max() + 1, theirs.max() + 1, "the same partition" if same else
                                               "DIFFERENT partitions: %d particle(s) in another group" % moved))
        r = med["yt"] / med["phew"]
        print("  yt / phew (1 core)          %6.3f   target >= %.0f   %s" % (r, TARGET_HOP,
                                                                           "met" if r >= TARGET_HOP else "MISSED"))
    else:
        print("  yt's HOP: not run (give --yt-hop PATH to a directory with its hop_bench driver)")
    sys.stdout.flush()


def measure_rss(cmd):
    """Peak RSS of one run of cmd, in bytes (its own /usr/bin/time-free measurement)."""
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(p.pid, 0)
    return usage.ru_maxrss * 1024


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--sets", default="clustered,cosmo", help="comma-separated: clustered, clustered4, cosmo")
    ap.add_argument("--seed", type=int, default=9)
    ap.add_argument("--data-dir", help="where the clustered sets are written (default BUILD/particle_bench)")
    ap.add_argument("--hfof", help="hfof's source tree, with its library built in build/")
    ap.add_argument("--scipy-full", action="store_true", help="also scipy on the whole set (about 40 s for 1e6)")
    ap.add_argument("--repeats-scipy", action="store_true", help="scipy on 1e5 in every repeat (else once)")
    ap.add_argument("--no-mpi", action="store_true")
    ap.add_argument("--finders", default="fof,hop", help="comma-separated: fof, hop")
    ap.add_argument("--yt-hop", help="a directory with hop_bench, a driver of yt's HOP C code (bench/README.md)")
    args = ap.parse_args()
    args.data_dir = args.data_dir or os.path.join(args.build, "particle_bench")
    print("CPUs: %d; load average %s" % (os.cpu_count(), " ".join("%.2f" % x for x in os.getloadavg())), flush=True)
    with tempfile.TemporaryDirectory() as scratch:
        for s in [x for x in args.sets.split(",") if x]:
            if s == "clustered":
                name, path = "clustered 1e6", clustered_set(args, 1000000)
            elif s == "clustered4":
                name, path = "clustered 4e6", clustered_set(args, 4000000)
            elif s == "cosmo":
                name, path = "cosmo64", COSMO
            else:
                sys.exit("unknown set %r" % s)
            if "fof" in args.finders:
                bench_set(args, name, path, scratch)
            if "hop" in args.finders:
                hop_set(args, name, path, scratch)


if __name__ == "__main__":
    main()
