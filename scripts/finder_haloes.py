"""The three finders' haloes on the cosmological snapshot with unbinding and halo properties
(docs/halo-finders.md, docs/physics.md): the ten most massive by bound mass, with M200c, R200c,
Vmax, the spin and the bound fraction, as Markdown tables.

    /usr/bin/python3 scripts/finder_haloes.py --cli build/bin/phew --output output/finder_haloes \\
        [--positions /work/shared/data/cosmo64_z0_pos.f32 --velocities /work/shared/data/cosmo64_z0_vel.f32]

The snapshot (64^3 particles, box units, z = 0) is written in the astronomers' units the physics
takes (positions x 50 Mpc/h, masses Omega_m rho_crit V / N in Msun/h) into the output folder, and
the tool runs FoF (b = 0.2), HOP (delta_outer 160) and PHEW (80 / 3 / 200; its haloes are the
clumps without a parent) with --cosmology 70 0.3 0.7 (a = 1).
"""
import argparse
import csv
import os
import subprocess
import sys

import numpy as np

BOX = 50.0
G = 4.30091727003628e-9
FINDERS = [("Friends-of-Friends (b = 0.2)", "fof", ["--finder", "fof"], "-groups.csv"),
           ("HOP (delta_outer 160)", "hop", ["--finder", "hop", "--outer", "160"], "-groups.csv"),
           ("PHEW haloes (80 / 3 / 200)", "phew", ["--threshold", "80", "--relevance", "3", "--saddle", "200"],
            "-clumps.csv")]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cli", required=True)
    ap.add_argument("--output", required=True)
    ap.add_argument("--positions", default="/work/shared/data/cosmo64_z0_pos.f32")
    ap.add_argument("--velocities", default="/work/shared/data/cosmo64_z0_vel.f32")
    a = ap.parse_args()
    os.makedirs(a.output, exist_ok=True)
    pos = np.fromfile(a.positions, dtype="<f4").astype(np.float64) * BOX
    pos[pos >= BOX] -= BOX
    n = len(pos) // 3
    files = {"pos": pos.astype("<f4"), "vel": np.fromfile(a.velocities, dtype="<f4"),
             "mass": np.full(n, 0.3 * 3e4 / (8 * np.pi * G) * BOX ** 3 / n, dtype="<f4")}
    paths = {}
    for k, v in files.items():
        paths[k] = os.path.join(a.output, f"snapshot-{k}.raw")
        v.tofile(paths[k])
    for title, name, options, table in FINDERS:
        prefix = os.path.join(a.output, name)
        subprocess.run([a.cli, "--points", paths["pos"], "--velocities", paths["vel"], "--masses", paths["mass"],
                        "--type", "float32", "--box", str(BOX), str(BOX), str(BOX), "--periodic", "--cosmology",
                        "70", "0.3", "0.7", "--output", prefix] + options, check=True, stdout=subprocess.DEVNULL)
        with open(prefix + table) as f:
            rows = [r for r in csv.DictReader(f) if int(r["ParentId"]) < 0]  # haloes: top-level structures
        rows.sort(key=lambda r: -float(r["BoundMassInclusive"]))
        bound = sum(float(r["BoundMassInclusive"]) for r in rows)
        members = sum(float(r["MemberMass"]) for r in rows)
        print(f"\n**{title}**: {len(rows)} haloes, bound fraction of their members' mass {bound / members:.4f}\n")
        print("| bound mass (Msun/h) | bound fraction | M200c (Msun/h) | R200c (Mpc/h) | Vmax (km/s) | "
              "spin (Peebles) | c200c |")
        print("|---|---|---|---|---|---|---|")
        for r in rows[:10]:
            print(f"| {float(r['BoundMassInclusive']):.3e} | {float(r['BoundFraction']):.3f} | "
                  f"{float(r['M200c']):.3e} | {float(r['R200c']):.3f} | {float(r['Vmax']):.0f} | "
                  f"{float(r['SpinPeebles']):.3f} | {float(r['C200c']):.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
