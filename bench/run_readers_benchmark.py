#!/usr/bin/python3
"""Benchmark of the snapshot readers (issue 27; a benchmark, not a test): read time and peak
memory per rank of phew_read_particles (bench_readers) against h5py reading the same datasets.

A GADGET-4-layout HDF5 snapshot of --particles particles (default 4e6) over --files files
(float32 Coordinates and Velocities, 64-bit ParticleIDs, the mass in the MassTable) is written
once into --work (outside the repository). Then, alternating, --repeats times: bench_readers
on 1 rank, h5py (read_direct of every file's Coordinates, Velocities and ParticleIDs into
arrays allocated once, in a process of its own, timed inside it), bench_readers on 2 ranks.
Prints the medians, the ratio phew (1 rank) / h5py against the target (at most 1.5), and each
rank's peak memory growth during the read over its share of the data (target: about 1.5 at
most). The RAMSES outputs of --ramses (default ../shared/data/ramses/cosmo32_dm/output_00003
and cosmo32_hydro/output_00003, when there) are read the same way (no h5py peer: their time
and memory only).

    /usr/bin/python3 bench/run_readers_benchmark.py --build build [--particles 4e6] [--files 4]
        [--repeats 5] [--work /tmp/phew_readers_bench]
"""
import argparse
import os
import re
import statistics
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OMPI_MCA_pml="ob1",
           OMPI_MCA_rmaps_base_oversubscribe="1", OMPI_MCA_hwloc_base_binding_policy="none")

PEER = r"""
import resource, sys, time
import h5py, numpy as np
files = sys.argv[1:]
counts = []
for path in files:
    with h5py.File(path, "r") as f:
        counts.append(int(f["Header"].attrs["NumPart_ThisFile"][1]))
n = sum(counts)
def rss():
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS"):
            return int(line.split()[1]) * 1024
open("/proc/self/clear_refs", "w").write("5")
before = rss()
t0 = time.perf_counter()
pos = np.empty((n, 3), np.float32); vel = np.empty((n, 3), np.float32); ids = np.empty(n, np.int64)
at = 0
for path, count in zip(files, counts):
    with h5py.File(path, "r") as f:
        g = f["PartType1"]
        g["Coordinates"].read_direct(pos, dest_sel=np.s_[at:at + count])
        g["Velocities"].read_direct(vel, dest_sel=np.s_[at:at + count])
        g["ParticleIDs"].read_direct(ids, dest_sel=np.s_[at:at + count])
    at += count
elapsed = time.perf_counter() - t0
peak = [int(l.split()[1]) * 1024 for l in open("/proc/self/status") if l.startswith("VmHWM")][0]
print("read %.6f" % elapsed)
print("rank 0: %d particles, share %d, peak growth %d" % (n, n * 32, peak - before))
"""


def write_snapshot(work, n, files):
    import h5py

    os.makedirs(work, exist_ok=True)
    stem = os.path.join(work, "snap_bench")
    names = [f"{stem}.{k}.hdf5" for k in range(files)]
    if all(os.path.exists(name) for name in names):
        return names
    rng = np.random.default_rng(27)
    counts = [n // files + (k < n % files) for k in range(files)]
    first = 0
    for k, (name, count) in enumerate(zip(names, counts)):
        with h5py.File(name, "w") as f:
            h = f.create_group("Header")
            h.attrs["NumPart_ThisFile"] = np.array([0, count, 0, 0, 0, 0], "u8")
            h.attrs["NumPart_Total"] = np.array([0, n, 0, 0, 0, 0], "u8")
            h.attrs["MassTable"] = np.array([0, 1.0 / n, 0, 0, 0, 0], "f8")
            h.attrs["NumFilesPerSnapshot"] = np.int32(files)
            h.attrs["BoxSize"] = np.float64(1.0)
            h.attrs["Time"] = np.float64(1.0)
            h.attrs["Redshift"] = np.float64(0.0)
            p = f.create_group("Parameters")
            for key, value in (("HubbleParam", 0.7), ("Omega0", 0.3), ("OmegaLambda", 0.7),
                               ("ComovingIntegrationOn", 1)):
                p.attrs[key] = value
            g = f.create_group("PartType1")
            g["Coordinates"] = rng.random((count, 3), dtype=np.float32)
            g["Velocities"] = rng.normal(0, 100, (count, 3)).astype(np.float32)
            g["ParticleIDs"] = np.arange(first, first + count, dtype=np.uint64)
        first += count
    return names


def parse(text):
    seconds = float(re.search(r"read ([0-9.]+)", text).group(1))
    ranks = [(int(a), float(b), float(c)) for a, b, c in
             re.findall(r"rank \d+: ([0-9]+) particles, share ([0-9.]+), peak growth (-?[0-9.]+)", text)]
    return seconds, ranks


def run(command):
    done = subprocess.run(command, capture_output=True, text=True, env=ENV, timeout=1200)
    if done.returncode != 0:
        sys.exit("failed: %s\n%s%s" % (" ".join(command), done.stdout, done.stderr))
    return parse(done.stdout)


def memory_line(label, ranks):
    worst = max(growth / share for _, share, growth in ranks if share > 0)
    return "%-16s peak growth / share, worst rank: %.2f (%s)" % (
        label, worst, ", ".join("%.0f/%.0f MB" % (g / 2**20, s / 2**20) for _, s, g in ranks))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--particles", type=float, default=4e6)
    ap.add_argument("--files", type=int, default=4)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--work", default="/tmp/phew_readers_bench")
    ap.add_argument("--ramses", nargs="*", default=[
        os.path.join(ROOT, "..", "shared", "data", "ramses", run, "output_00003") for run in ("cosmo32_dm", "cosmo32_hydro")])
    args = ap.parse_args()
    bench = os.path.join(args.build, "bin", "bench_readers")
    names = write_snapshot(args.work, int(args.particles), args.files)
    times = {"phew 1 rank": [], "h5py": [], "phew 2 ranks": []}
    memory = {}
    for _ in range(args.repeats):
        for label, command in (("phew 1 rank", [bench, names[0]]),
                               ("h5py", ["/usr/bin/python3", "-c", PEER, *names]),
                               ("phew 2 ranks", ["mpirun", "-np", "2", bench, names[0]])):
            seconds, ranks = run(command)
            times[label].append(seconds)
            memory[label] = ranks
    print("GADGET-4 HDF5, %d particles in %d files (float32 positions and velocities, 64-bit ids):"
          % (int(args.particles), args.files))
    for label, values in times.items():
        print("  %-14s median %.3f s of %s" % (label, statistics.median(values), ", ".join("%.3f" % v for v in values)))
    ratio = statistics.median(times["phew 1 rank"]) / statistics.median(times["h5py"])
    print("  phew (1 rank) / h5py: %.2f (target: at most 1.5)" % ratio)
    for label in ("phew 1 rank", "phew 2 ranks", "h5py"):
        print("  " + memory_line(label, memory[label]))
    for folder in args.ramses:
        if not os.path.isdir(folder):
            print("RAMSES %s: not there, skipped" % folder)
            continue
        for ranks in (1, 2):
            results = [run(([bench] if ranks == 1 else ["mpirun", "-np", "2", bench]) + [folder])
                       for _ in range(args.repeats)]
            print("RAMSES %s, %d rank(s): median %.4f s; %s" % (os.path.relpath(folder, ROOT), ranks,
                  statistics.median(r[0] for r in results), memory_line("", results[-1][1]).strip()))


if __name__ == "__main__":
    main()
