#!/usr/bin/python3
"""Cost curve of the command-line tool `phew` on grids of growing size (a benchmark, not a test).

    /usr/bin/python3 bench/run_cost_curve.py --build BUILD_DIR [--sizes 64,128,256,384,512]
                                             [--threads 1,2] [--repeats 3] [--png docs/cost-curve.png]
                                             [--csv FILE] [--tmpdir DIR] [--skip-scipy]

For each size n (cells per axis):
1. Generates the lognormal benchmark field of bench/run_benchmark.py (run_benchmark.lognormal_field:
   seeded Gaussian random field smoothed over 3 cells, rho = exp(g), float32, periodic) and writes
   it to a raw file in a temporary directory. Threshold: the field's median (half of the cells are
   test cells); relevance 2; saddle 4x the threshold; --periodic.
2. Runs the tool itself, reading and writing included:
       phew --input F --dims n n n --type float32 --threshold T --relevance 2 --saddle 4T
            --periodic --threads N --output TMP/out --verbose
   for each thread count N of --threads, alternating, --repeats times, pinned to cores 0..N-1
   (`taskset -c 0-(N-1)`). Each run's outputs (3 int64 label cubes: 24 bytes per cell, 3 GB at
   512^3) are deleted right after it. Recorded per run: the wall time of the process, its peak
   resident set (ru_maxrss from os.wait4, in bytes: input, labels and working memory together;
   the tool is forked by a fresh small interpreter, see WAIT4_HELPER) and the library's own time (the "total" line of --verbose: phew_find_clumps without
   reading and writing).
3. Times scipy.ndimage.label (26-connectivity) on the same mask (rho > T) in this process, pinned
   to core 0, --repeats times.
Prints a table of medians (wall and library seconds, cells per second, peak RSS in bytes and in
bytes per cell, scipy's time and the ratios phew / scipy) and, with --png, draws two panels:
(a) cells per second against cells (log x), per thread count, whole tool and library only;
(b) peak memory in bytes per cell against cells. --csv writes the per-size medians.

Disk: the field (4 bytes per cell) and one run's outputs (24 bytes per cell) live in the
temporary directory at once; the free space there is checked first and sizes that do not fit
are skipped, with a message. Memory: the field's generation needs about 40 bytes per cell
(numpy's FFT works in double precision) and the tool about 30, one after the other.
"""
import argparse
import csv
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run_benchmark import find_program, int_list, lognormal_field, print_machine  # noqa: E402

GENERATE_BYTES_PER_CELL = 40  # numpy FFT in double precision, plus the float32 copies
TOOL_BYTES_PER_CELL = 32  # input 4 + labels 24 + working memory


def cores_list(n):
    return "0" if n == 1 else f"0-{n - 1}"


def find_phew(args):
    return find_program(args.phew, args.build, "phew", "run_cost_curve")


def mem_available():
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def gib(x):
    return x / 2**30


# Runs the tool from a fresh, small interpreter that forks it and reads its rusage with
# os.wait4. Not from this process directly: a child forked from here inherits this process's
# memory high-water mark (the field's FFT: gigabytes), and Linux keeps ru_maxrss across exec, so
# the tool's peak would read as ours. The small interpreter's own mark is ~10 MB; ru_maxrss is a
# maximum, so it only shows if the tool's peak is below that.
WAIT4_HELPER = r"""
import os, sys, time
result, cmd = sys.argv[1], sys.argv[2:]
t0 = time.perf_counter()
pid = os.fork()
if pid == 0:
    try:
        os.execvp(cmd[0], cmd)
    finally:
        os._exit(127)
_, status, usage = os.wait4(pid, 0)
wall = time.perf_counter() - t0
with open(result, "w") as f:
    f.write("%r %d %d\n" % (wall, usage.ru_maxrss, os.waitstatus_to_exitcode(status)))
"""


def run_tool(cmd, pin_cores, workdir):
    """Run cmd; return (wall seconds, peak RSS bytes of the tool's process, its output)."""
    preexec = None
    if pin_cores and hasattr(os, "sched_setaffinity"):
        preexec = lambda: os.sched_setaffinity(0, set(range(pin_cores)))  # noqa: E731
    log_path, result_path = os.path.join(workdir, "log.txt"), os.path.join(workdir, "wait4.txt")
    with open(log_path, "w+") as log:
        p = subprocess.run([sys.executable, "-c", WAIT4_HELPER, result_path] + cmd, stdout=log,
                           stderr=subprocess.STDOUT, preexec_fn=preexec)
        log.seek(0)
        text = log.read()
    try:
        with open(result_path) as f:
            wall, maxrss_kib, code = f.read().split()
    except (OSError, ValueError):
        wall, maxrss_kib, code = 0, 0, p.returncode or 1
    if p.returncode != 0 or int(code) != 0:
        print(text)
        sys.exit(f"run_cost_curve: {' '.join(cmd)} failed (exit {code})")
    return float(wall), int(maxrss_kib) * 1024, text  # Linux: ru_maxrss in KiB


def library_seconds(text):
    """The library's time from --verbose: the line '  total   0.0725 s (...)'."""
    m = re.search(r"^\s*total\s+([0-9.eE+-]+)\s*s", text, re.M)
    return float(m.group(1)) if m else None


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", help="build directory holding bin/phew")
    ap.add_argument("--phew", help="path of the phew tool (overrides --build)")
    ap.add_argument("--sizes", type=lambda s: int_list(s, "--sizes"), default=[64, 128, 256, 384, 512],
                    help="cells per axis, comma-separated (default 64,128,256,384,512)")
    ap.add_argument("--threads", type=lambda s: int_list(s, "--threads"), default=[1, 2],
                    help="thread counts, comma-separated (default 1,2), pinned to cores 0..N-1")
    ap.add_argument("--repeats", type=int, default=3, help="runs of each (default 3)")
    ap.add_argument("--seed", type=int, default=12345)
    ap.add_argument("--smoothing", type=float, default=3.0)
    ap.add_argument("--sigma", type=float, default=1.0)
    ap.add_argument("--relevance", type=float, default=2.0)
    ap.add_argument("--tmpdir", help="where the fields and outputs go (default: the system's temporary directory)")
    ap.add_argument("--no-taskset", action="store_true", help="do not pin to cores")
    ap.add_argument("--skip-scipy", action="store_true")
    ap.add_argument("--png", help="write the two-panel figure here (e.g. docs/cost-curve.png)")
    ap.add_argument("--csv", help="write the medians per size and thread count here")
    ap.add_argument("--replot", metavar="CSV", help="only draw --png from the rows a previous --csv wrote")
    args = ap.parse_args(argv)

    if args.replot:
        with open(args.replot, newline="") as f:
            rows = [{k: (float(v) if v not in ("", "None") else None) for k, v in r.items()} for r in csv.DictReader(f)]
        for r in rows:
            r["n"], r["cells"], r["threads"] = int(r["n"]), int(r["cells"]), int(r["threads"])
        plot(rows, sorted({r["threads"] for r in rows}), args.png or "cost-curve.png", int(rows[0]["repeats"]))
        print(f"wrote {args.png or 'cost-curve.png'}")
        return 0
    tool = find_phew(args)
    counts = args.threads
    sizes = sorted(args.sizes)
    use_taskset = not args.no_taskset and shutil.which("taskset") is not None
    try:
        home_affinity = os.sched_getaffinity(0)  # restored around each pinned run
    except (AttributeError, OSError):
        home_affinity = None
    print_machine(counts, "phew", tool)

    tmp_root = args.tmpdir or tempfile.gettempdir()
    free = shutil.disk_usage(tmp_root).free
    avail = mem_available()
    print(f"temporary space: {tmp_root}, {gib(free):.1f} GiB free; memory available: "
          f"{gib(avail):.1f} GiB" if avail else f"temporary space: {tmp_root}, {gib(free):.1f} GiB free")
    kept = []
    for n in sizes:
        disk = 28 * n**3 + (64 << 20)
        mem = max(GENERATE_BYTES_PER_CELL, TOOL_BYTES_PER_CELL) * n**3
        if disk > free:
            print(f"  {n}^3: needs {gib(disk):.1f} GiB of disk in {tmp_root}, {gib(free):.1f} GiB free: skipped "
                  f"(pass --tmpdir DIR with more space)")
            continue
        if avail is not None and mem > avail:
            print(f"  {n}^3: needs about {gib(mem):.1f} GiB of memory, {gib(avail):.1f} GiB available: skipped")
            continue
        kept.append(n)
    if not kept:
        sys.exit("run_cost_curve: no size fits")

    rows = []
    tmpdir = tempfile.mkdtemp(prefix="phew-cost-", dir=tmp_root)
    try:
        for n in kept:
            cells = n**3
            t = time.perf_counter()
            rho = lognormal_field(n, args.seed, args.smoothing, args.sigma)
            threshold = float(np.median(rho))
            saddle = 4.0 * threshold
            raw = os.path.join(tmpdir, f"grf{n}.raw")
            rho.tofile(raw)
            mask = rho > threshold
            del rho
            print(f"\n{n}^3 = {cells} cells: threshold (median) {threshold:.6g}, saddle {saddle:.6g}; "
                  f"field made in {time.perf_counter() - t:.1f} s")
            outdir = os.path.join(tmpdir, "out")
            base = [tool, "--input", raw, "--dims", str(n), str(n), str(n), "--type", "float32",
                    "--threshold", repr(threshold), "--relevance", repr(args.relevance),
                    "--saddle", repr(saddle), "--periodic"]
            per = {c: {"wall": [], "rss": [], "lib": []} for c in counts}
            for i in range(args.repeats):
                for c in counts:
                    os.makedirs(outdir, exist_ok=True)
                    cmd = base + ["--threads", str(c), "--output", os.path.join(outdir, "o"), "--verbose"]
                    pin = 0
                    if use_taskset:
                        cmd = ["taskset", "-c", cores_list(c)] + cmd
                    elif not args.no_taskset:
                        pin = c
                    if i == 0 and c == counts[0] and n == kept[0]:
                        print("command:", " ".join(cmd))
                    wall, rss, text = run_tool(cmd, pin, tmpdir)
                    shutil.rmtree(outdir, ignore_errors=True)
                    lib = library_seconds(text)
                    per[c]["wall"].append(wall)
                    per[c]["rss"].append(rss)
                    if lib is not None:
                        per[c]["lib"].append(lib)
                    print(f"  run {i + 1}, {c} thread(s): wall {wall:.3f} s, library "
                          f"{'%.3f s' % lib if lib is not None else '?'}, peak RSS {rss / 2**20:.0f} MiB "
                          f"({rss / cells:.1f} B/cell)")
            os.remove(raw)

            scipy_s = None
            if not args.skip_scipy:
                from scipy import ndimage
                pinned = False
                if not args.no_taskset and home_affinity is not None:
                    try:
                        os.sched_setaffinity(0, {0})
                        pinned = True
                    except OSError:
                        pass
                structure = np.ones((3, 3, 3), dtype=bool)
                times = []
                try:
                    for _ in range(args.repeats):
                        t = time.perf_counter()
                        lab, _n = ndimage.label(mask, structure=structure)
                        times.append(time.perf_counter() - t)
                        del lab
                finally:
                    if pinned:
                        os.sched_setaffinity(0, home_affinity)
                scipy_s = statistics.median(times)
                print(f"  scipy.ndimage.label (26-connectivity{', core 0' if pinned else ''}): "
                      + ", ".join(f"{x:.3f}" for x in times) + " s")
            del mask

            for c in counts:
                wall = statistics.median(per[c]["wall"])
                rss = statistics.median(per[c]["rss"])
                lib = statistics.median(per[c]["lib"]) if per[c]["lib"] else None
                rows.append({
                    "n": n, "cells": cells, "threads": c, "repeats": args.repeats,
                    "wall_seconds": wall, "cells_per_second": cells / wall,
                    "library_seconds": lib, "library_cells_per_second": cells / lib if lib else None,
                    "peak_rss_bytes": rss, "peak_rss_bytes_per_cell": rss / cells,
                    "scipy_seconds": scipy_s,
                    "wall_over_scipy": wall / scipy_s if scipy_s else None,
                    "library_over_scipy": lib / scipy_s if (scipy_s and lib) else None,
                })
    finally:
        shutil.rmtree(tmpdir, ignore_errors=True)

    def fmt(v, spec):
        return "-" if v is None else format(v, spec)

    print(f"\nmedians over {args.repeats} run(s); wall: the whole tool (reading, finding, writing); "
          f"library: phew_find_clumps (--verbose total); scipy: ndimage.label on one core")
    head = (f"{'n':>5} {'cells':>11} {'thr':>3} {'wall s':>8} {'Mcells/s':>8} {'lib s':>8} {'lib Mc/s':>8} "
            f"{'peak RSS MiB':>12} {'B/cell':>7} {'scipy s':>8} {'wall/sp':>7} {'lib/sp':>7}")
    print(head)
    for r in rows:
        print(f"{r['n']:>5} {r['cells']:>11} {r['threads']:>3} {r['wall_seconds']:>8.3f} "
              f"{r['cells_per_second'] / 1e6:>8.2f} {fmt(r['library_seconds'], '>8.3f')} "
              f"{fmt(r['library_cells_per_second'] and r['library_cells_per_second'] / 1e6, '>8.2f')} "
              f"{r['peak_rss_bytes'] / 2**20:>12.1f} {r['peak_rss_bytes_per_cell']:>7.2f} "
              f"{fmt(r['scipy_seconds'], '>8.3f')} {fmt(r['wall_over_scipy'], '>7.2f')} "
              f"{fmt(r['library_over_scipy'], '>7.2f')}")
    if 1 in counts and len(counts) > 1:
        print("\nspeed-up over 1 thread (wall; library):")
        for n in kept:
            one = next(r for r in rows if r["n"] == n and r["threads"] == 1)
            for r in rows:
                if r["n"] == n and r["threads"] != 1:
                    lib = (one["library_seconds"] / r["library_seconds"]
                           if one["library_seconds"] and r["library_seconds"] else None)
                    print(f"  {n}^3, {r['threads']} threads: {one['wall_seconds'] / r['wall_seconds']:.2f}x; "
                          f"{fmt(lib, '.2f')}x")

    if args.csv:
        with open(args.csv, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
            w.writeheader()
            w.writerows(rows)
        print(f"wrote {args.csv}")
    if args.png:
        plot(rows, counts, args.png, args.repeats)
        print(f"wrote {args.png}")
    return 0


def plot(rows, counts, path, repeats):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(12, 6))
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for i, c in enumerate(counts):
        rs = [r for r in rows if r["threads"] == c]
        x = [r["cells"] for r in rs]
        colour = colours[i % len(colours)]
        label = f"{c} thread{'s' if c > 1 else ''}"
        ax1.plot(x, [r["cells_per_second"] / 1e6 for r in rs], "o-", color=colour,
                 label=f"phew tool, {label} (read + find + write)")
        lib = [(r["cells"], r["library_cells_per_second"] / 1e6) for r in rs if r["library_cells_per_second"]]
        if lib:
            ax1.plot(*zip(*lib), "s--", color=colour, label=f"library only, {label}")
        ax2.plot(x, [r["peak_rss_bytes_per_cell"] for r in rs], "o-", color=colour, label=f"phew tool, {label}")
    sp = {}
    for r in rows:
        if r["scipy_seconds"]:
            sp[r["cells"]] = r["cells"] / r["scipy_seconds"] / 1e6
    if sp:
        xs = sorted(sp)
        ax1.plot(xs, [sp[x] for x in xs], "^:", color="grey", label="scipy.ndimage.label, 1 core")
    ax2.axhline(28, color="grey", ls=":", label="input + labels (4 + 24 bytes/cell)")
    sizes = sorted({r["n"] for r in rows})
    ticks = [n**3 for n in sizes]
    tick_labels = [f"{n}^3" for n in sizes]
    ax1.set_xscale("log")
    ax1.set_yscale("log")
    ax1.set_xlabel("cells (log scale)")
    ax1.set_ylabel("million cells per second (log scale)")
    ax1.set_title("(a) throughput: cells per second")
    ax1.grid(True, which="both", alpha=0.3)
    ax1.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=2)
    ax2.set_xscale("log")
    ax2.set_xlabel("cells (log scale)")
    ax2.set_ylabel("peak resident memory / cells (bytes per cell)")
    ax2.set_title("(b) peak memory of the phew process per cell")
    for ax in (ax1, ax2):
        ax.set_xticks(ticks)
        ax.set_xticklabels(tick_labels)
        ax.minorticks_off()
    ax2.set_ylim(bottom=0)
    ax2.grid(True, which="both", alpha=0.3)
    ax2.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=2)
    fig.suptitle("phew --input (grid, float32, periodic) on the lognormal benchmark field; "
                 f"medians of {repeats} run(s)", fontsize=10)
    fig.tight_layout()
    d = os.path.dirname(path)
    if d:
        os.makedirs(d, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)


if __name__ == "__main__":
    sys.exit(main())
