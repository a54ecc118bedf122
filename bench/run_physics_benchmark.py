#!/usr/bin/python3
"""Benchmark of the physics of structures (issue 28): the whole PHEW-on-particles run of the tool
with unbinding and halo properties against the same run without them (--no-physics), in the same
run, alternating (a benchmark, not a test).

Sets (comoving Mpc/h, km/s, Msun/h, a periodic 50 Mpc/h box, --cosmology 70 0.3 0.7):
  clustered  1e6 particles of datasets/generators/make_particles.py with --velocities (NFW haloes
             with sub-haloes and a background; positions scaled to 50 Mpc/h)
  cosmo      the shared RAMSES snapshot at z = 0 (262,144 particles; /work/shared/data)
PHEW with the paper's halo parameters (threshold 80, relevance 3, saddle 200), one thread pinned
to core 0. Prints medians of the wall clock, the physics' stages (--verbose), the peak RSS per
particle, and the ratios next to the targets: with / without <= 1.5; <= 350 bytes per particle.
The peak RSS holds a fixed part (the program, its libraries, MPI) that does not grow with the
particles; so the memory is also given above a tiny run of the same kind (every 64th particle
of the set, masses times 64, the same command): (peak RSS - tiny run's peak RSS) / n.

    /usr/bin/python3 bench/run_physics_benchmark.py --build build [--repeats 3] [--sets clustered,cosmo]
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
COSMO_POS = "/work/shared/data/cosmo64_z0_pos.f32"
COSMO_VEL = "/work/shared/data/cosmo64_z0_vel.f32"
BOX = 50.0
G = 4.30091727003628e-9
TARGET_RATIO = 1.5
TARGET_BYTES = 350.0


def box_mass_per_particle(n):
    rho_crit = 3.0 * 1e4 / (8.0 * np.pi * G)  # (Msun/h) / (Mpc/h)^3 at a = 1
    return 0.3 * rho_crit * BOX ** 3 / n


def write_set(folder, name, pos, vel):
    """Raw float32 positions (Mpc/h) and velocities, float64 masses; returns the tool's options."""
    os.makedirs(folder, exist_ok=True)
    paths = {k: os.path.join(folder, f"{name}-{k}.raw") for k in ("pos", "vel", "mass")}
    np.ascontiguousarray(pos, dtype="<f4").tofile(paths["pos"])
    np.ascontiguousarray(vel, dtype="<f4").tofile(paths["vel"])
    np.full(len(pos), box_mass_per_particle(len(pos)), dtype="<f4").tofile(paths["mass"])
    return ["--points", paths["pos"], "--velocities", paths["vel"], "--masses", paths["mass"], "--type", "float32"]


def clustered(folder, n, seed):
    prefix = os.path.join(folder, f"clustered-n{n}-s{seed}")
    if not os.path.exists(prefix + "-vel.raw"):
        subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "datasets", "generators", "make_particles.py"), prefix,
                        "--n", str(n), "--seed", str(seed), "--velocities"], check=True, stdout=subprocess.DEVNULL)
    pos = np.fromfile(prefix + "-pos.raw", dtype="<f4").reshape(-1, 3).astype(np.float64) * BOX
    pos[pos >= BOX] -= BOX
    vel = np.fromfile(prefix + "-vel.raw", dtype="<f4").reshape(-1, 3)
    return write_set(folder, f"clustered{n}", pos, vel)


def cosmo(folder):
    pos = np.fromfile(COSMO_POS, dtype="<f4").reshape(-1, 3).astype(np.float64) * BOX
    pos[pos >= BOX] -= BOX
    vel = np.fromfile(COSMO_VEL, dtype="<f4").reshape(-1, 3)
    return write_set(folder, "cosmo64", pos, vel)


def tiny_set(folder, name, inputs, step=64):
    """Every step-th particle of a set, masses times step (the same mean density): the inputs of
    a run whose peak RSS is the fixed part of the tool's memory."""
    paths = {k: inputs[inputs.index(f"--{o}") + 1] for k, o in (("pos", "points"), ("vel", "velocities"),
                                                                 ("mass", "masses"))}
    pos = np.fromfile(paths["pos"], dtype="<f4").reshape(-1, 3)[::step]
    vel = np.fromfile(paths["vel"], dtype="<f4").reshape(-1, 3)[::step]
    mass = np.fromfile(paths["mass"], dtype="<f4")[::step] * step
    out = write_set(folder, f"{name}-tiny", pos, vel)
    mass.astype("<f4").tofile(out[out.index("--masses") + 1])
    return out


def run_once(cli, inputs, physics, work, taskset):
    prefix = os.path.join(work, "run")
    cmd = [cli] + inputs + ["--box", str(BOX), str(BOX), str(BOX), "--periodic", "--cosmology", "70", "0.3", "0.7",
                            "--threshold", "80", "--relevance", "3", "--saddle", "200", "--threads", "1",
                            "--verbose", "--output", prefix]
    if not physics:
        cmd.append("--no-physics")
    if taskset:
        cmd = ["taskset", "-c", "0"] + cmd
    timed = ["/usr/bin/time", "-f", "WALL %e RSS %M"] + cmd
    done = subprocess.run(timed, capture_output=True, text=True, check=True)
    wall = float(re.search(r"WALL (\S+)", done.stderr).group(1))
    rss = float(re.search(r"RSS (\S+)", done.stderr).group(1)) * 1024
    stages = {k: float(v) for k, v in re.findall(r"physics (\w+) ([0-9.]+) s", done.stdout)}
    return wall, rss, stages


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", required=True)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--sets", default="clustered,cosmo")
    ap.add_argument("--n", type=int, default=1000000)
    ap.add_argument("--seed", type=int, default=9)
    ap.add_argument("--no-taskset", action="store_true")
    a = ap.parse_args()
    cli = os.path.join(a.build, "bin", "phew")
    data = os.path.join(a.build, "physics_bench")
    sets = []
    for s in a.sets.split(","):
        if s == "clustered":
            sets.append((f"clustered {a.n}", clustered(data, a.n, a.seed)))
        elif s == "cosmo" and os.path.exists(COSMO_POS):
            sets.append(("cosmo64 (RAMSES, z = 0)", cosmo(data)))
    with tempfile.TemporaryDirectory() as work:
        for name, inputs in sets:
            n = os.path.getsize(inputs[1]) // 12
            tiny = tiny_set(data, name.split()[0], inputs)
            runs = {True: [], False: []}
            fixed = {True: 0.0, False: 0.0}
            for _ in range(a.repeats):
                for physics in (False, True):  # alternating
                    runs[physics].append(run_once(cli, inputs, physics, work, not a.no_taskset))
                    fixed[physics] = max(fixed[physics], run_once(cli, tiny, physics, work, not a.no_taskset)[1])
            wall = {k: statistics.median(r[0] for r in v) for k, v in runs.items()}
            rss = {k: max(r[1] for r in v) for k, v in runs.items()}
            stages = {}
            for r in runs[True]:
                for k, v in r[2].items():
                    stages.setdefault(k, []).append(v)
            print(f"== {name}: {n} particles, {a.repeats} alternating runs, one thread")
            above = {k: (rss[k] - fixed[k]) / n for k in rss}
            for k, what in ((False, "without physics:"), (True, "with physics:   ")):
                print(f"  {what} {wall[k]:.2f} s, peak RSS {rss[k] / n:.0f} B/particle "
                      f"({(rss[k] - fixed[k]) / 2**20:.1f} MiB above a tiny run's {fixed[k] / 2**20:.1f} MiB: "
                      f"{above[k]:.0f} B/particle)")
            print("  physics stages (median s): " + ", ".join(f"{k} {statistics.median(v):.3f}"
                                                            for k, v in stages.items()))
            ratio = wall[True] / wall[False]
            print(f"  ratio {ratio:.2f} (target <= {TARGET_RATIO}: {'met' if ratio <= TARGET_RATIO else 'MISSED'}); "
                  f"memory {rss[True] / n:.0f} B/particle (target <= {TARGET_BYTES:.0f}: "
                  f"{'met' if rss[True] / n <= TARGET_BYTES else 'MISSED'}; above the tiny run {above[True]:.0f} "
                  f"B/particle: {'met' if above[True] <= TARGET_BYTES else 'MISSED'})", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
