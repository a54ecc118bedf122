#!/usr/bin/python3
"""The Python package on the shared cosmological snapshot (docs/python.md): haloes found with
PHEW, Friends-of-Friends and HOP, their mass functions, and the dendrogram of the largest halo,
drawn with matplotlib.

    PYTHONPATH=build/python /usr/bin/python3 scripts/python_example.py [--data ../shared/data]
        [--out output/python_example]

The snapshot: ../shared/data/cosmo64_z0_pos.f32 and _vel.f32 (64^3 particles, a 50 Mpc/h box,
z = 0, raw float32; ../shared/data/README.md). Writes python-mass-functions.png and
python-dendrogram.png (the six most massive PHEW haloes' dendrograms) into --out
(docs/images holds the ones the docs show) and prints the figures it plots.
"""
import argparse
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

import phew  # noqa: E402

BOX = 50.0  # Mpc/h
PARTICLE_MASS = 3.970e10  # Msun/h
COSMOLOGY = dict(hubble=0.7, omega_m=0.3, omega_lambda=0.7, scale_factor=1.0)


def read(data):
    pos = np.fromfile(os.path.join(data, "cosmo64_z0_pos.f32"), np.float32).reshape(-1, 3) * np.float32(BOX)
    vel = np.fromfile(os.path.join(data, "cosmo64_z0_vel.f32"), np.float32).reshape(-1, 3)
    return pos % np.float32(BOX), vel  # rounding may put a coordinate at BOX itself


def cumulative(masses):
    m = np.sort(np.asarray(masses))[::-1]
    return m, np.arange(1, len(m) + 1) / BOX ** 3


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=os.path.join(here, "..", "..", "shared", "data"))
    ap.add_argument("--out", default=os.path.join(here, "..", "output", "python_example"))
    args = ap.parse_args()
    if not os.path.exists(os.path.join(args.data, "cosmo64_z0_pos.f32")):
        sys.exit("python_example.py: no cosmo64_z0_pos.f32 in %s (--data)" % args.data)
    os.makedirs(args.out, exist_ok=True)
    pos, vel = read(args.data)
    masses = np.full(len(pos), PARTICLE_MASS, np.float32)
    common = dict(masses=masses, velocities=vel, box=BOX, periodic=True)

    fof = phew.friends_of_friends(pos, linking_length=0.2, min_members=20, **common)
    hop = phew.hop(pos, **common)  # delta_outer 160, saddle 2.5, peak 3, as yt's HOP
    clumps = phew.find_clumps_points(pos, threshold=80, relevance=3, saddle=200, mass_threshold=19.5 * PARTICLE_MASS,
                                     **common)  # the PHEW paper's parameters; 20 particles at least
    so = phew.halo_properties(pos, vel, fof, masses=masses, box=BOX, periodic=True, cosmology=COSMOLOGY)
    print("FoF: %d groups of >= 20 particles; HOP: %d groups; PHEW: %d haloes, %d clumps" % (
        len(fof.groups), len(hop.groups), len(clumps.haloes), len(clumps.clumps)))
    for name, m in (("FoF", fof.groups["Mass"]), ("HOP", hop.groups["Mass"]), ("PHEW", clumps.haloes["Mass"])):
        print("  %-4s largest %.3e Msun/h, %d above 1e13" % (name, m.max(), (m > 1e13).sum()))

    fig, ax = plt.subplots(figsize=(6.4, 4.8), dpi=100)
    for label, m, style in (("Friends-of-Friends (b = 0.2)", fof.groups["Mass"], "-"),
                            ("HOP (yt's parameters)", hop.groups["Mass"], "--"),
                            ("PHEW haloes (80, 3, 200)", clumps.haloes["Mass"], "-."),
                            ("Friends-of-Friends haloes' M200c", so.structures["M200c"][np.isfinite(
                                so.structures["M200c"])], ":")):
        x, n = cumulative(m)
        ax.step(x, n, style, where="post", label=label)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("halo mass M [Msun/h]")
    ax.set_ylabel("n(> M) [(Mpc/h)^-3]")
    ax.set_title("Cumulative halo mass functions, 64^3 particles, 50 Mpc/h, z = 0", fontsize=10)
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(os.path.join(args.out, "python-mass-functions.png"))

    # the dendrograms of the six most massive PHEW haloes, side by side in mass order: each
    # halo's nodes have contiguous x in the layout (depth first), shifted here to follow
    layout = phew.dendrogram_layout(clumps)
    nodes = clumps.dendrogram
    fig, ax = plt.subplots(figsize=(8.0, 4.8), dpi=100)
    start = 0.0
    for rank, k in enumerate(np.argsort(clumps.haloes["Mass"])[::-1][:6]):
        mine = np.flatnonzero(nodes["HaloId"] == clumps.haloes["HaloId"][k])
        shift = start - layout["x"][mine].min()
        colour = plt.cm.tab10(rank)
        for i in mine:
            x, top, bottom, parent = layout[i]
            ax.plot([x + shift] * 2, [bottom, top], color=colour, lw=1.5)
            if parent >= 0:
                ax.plot([x + shift, layout["x"][parent] + shift], [bottom, bottom], color=colour, lw=1)
        top = layout["log_top"][mine].max()
        ax.annotate("%.1e" % clumps.haloes["Mass"][k], (start + (layout["x"][mine].max() - layout["x"][mine].min()) / 2,
                    top + 0.1), ha="center", fontsize=8, color=colour)
        start += layout["x"][mine].max() - layout["x"][mine].min() + 1.5
    ax.set_xticks([])
    ax.set_xlabel("clumps (leaves) of the six most massive haloes, depth first by peak density; "
                  "labels: halo mass [Msun/h]", fontsize=9)
    ax.set_ylabel("log10 density [mean density]")
    ax.set_title("PHEW dendrograms on particles (threshold 80, relevance 3, saddle 200)", fontsize=10)
    ax.set_ylim(top=ax.get_ylim()[1] + 0.3)
    fig.tight_layout()
    fig.savefig(os.path.join(args.out, "python-dendrogram.png"))
    print("wrote %s" % ", ".join(os.path.join(args.out, f) for f in ("python-mass-functions.png",
                                                                     "python-dendrogram.png")))


if __name__ == "__main__":
    main()
