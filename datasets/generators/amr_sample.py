#!/usr/bin/env pvpython
"""Write the small committed AMR sample datasets/amr_sample.vthb (+ folder datasets/amr_sample/)
for PHEW on vtkOverlappingAMR (issue 8).

    pvpython datasets/generators/amr_sample.py                 # writes and checks the sample
    pvpython datasets/generators/amr_sample.py --output /tmp/s.vthb
    /usr/bin/python3 datasets/generators/amr_sample.py --no-vtk   # block list only (no VTK)

Content (analytic, no random numbers: deterministic on any machine): a periodic unit box
[0, 1)^3, level 0 = 32^3 cells (8 blocks of 16^3), refined 3 levels deep (levels 0..3,
refinement ratio 2, finest cell 1/256). The density is a smooth positive background
exp(0.3 (sin 2pi(x+.1) + sin 2pi(y+.3) + sin 2pi(z+.7))) (0.41..2.46) plus periodic Gaussians
A exp(-r^2 / 2 sigma^2) grouped in clumps with substructure (CLUMPS below), one of them across
the periodic x boundary. Leaf cells carry the density at their centre; covered cells carry the
mean of their 8 children (recursively), as AMR codes do after restriction.

Refinement: a level-l cell is flagged when its centre density exceeds FLAG[l]; tiles of 8^3 cells
(= 4^3 parent cells) are created where a parent cell is flagged, and merged into blocks of
16^3, 16x8x8 or 8^3 cells (see amr_common.py); 2:1 balanced (touching leaf cells differ by at
most one level; --no-balance drops this). Density is Float32 cell data "density" (computed in
float64, rounded once); covered cells are blanked with vtkGhostType = 8 (REFINEDCELL) by vtkAMRUtilities::BlankCells.

Also written: amr_sample.blocks.txt (block list, leaf counts; plain text for tests) and
amr_sample.raw (every block's float32 density, block after block in that list's order, x
fastest, little endian: the phew_amr layout of a single rank).
"""
import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import amr_common  # noqa: E402

N0 = 32            # level-0 cells per axis
NLEVELS = 4        # levels 0..3
TILE = 8
LEVEL0_BLOCK = 16
FLAG = (4.0, 12.0, 40.0)   # refine a level-l cell where density > FLAG[l]

# (name, centre x y z, amplitude, sigma): Gaussians; names group them into designed structures
CLUMPS = [
    # A: a big envelope with two sub-clumps, the second with a sub-sub-clump next to it
    ("A",   (0.300, 0.350, 0.400), 30.0, 0.050),
    ("A1",  (0.268, 0.331, 0.409), 150.0, 0.012),
    ("A2",  (0.338, 0.372, 0.391), 110.0, 0.010),
    ("A2b", (0.356, 0.386, 0.384), 90.0, 0.006),
    # B: an envelope with two sub-clumps of similar height
    ("B",   (0.701, 0.619, 0.553), 25.0, 0.060),
    ("B1",  (0.667, 0.601, 0.561), 80.0, 0.015),
    ("B2",  (0.742, 0.648, 0.532), 70.0, 0.015),
    # C: across the periodic x boundary (x = 0.02 and x = 0.975)
    ("C1",  (0.021, 0.753, 0.251), 100.0, 0.020),
    ("C2",  (0.976, 0.762, 0.247), 60.0, 0.012),
    # D: a single compact clump
    ("D",   (0.553, 0.148, 0.802), 200.0, 0.015),
    # E: a faint diffuse cloud (refined to level 1 or 2 only)
    ("E",   (0.182, 0.803, 0.781), 12.0, 0.050),
]


def density_at(x, y, z):
    """x, y, z arrays in [0, 1): the analytic density (periodic)."""
    two_pi = 2.0 * np.pi
    rho = np.exp(0.3 * (np.sin(two_pi * (x + 0.1)) + np.sin(two_pi * (y + 0.3)) +
                        np.sin(two_pi * (z + 0.7))))
    for _, (cx, cy, cz), amp, sig in CLUMPS:
        dx = (x - cx + 0.5) % 1.0 - 0.5
        dy = (y - cy + 0.5) % 1.0 - 0.5
        dz = (z - cz + 0.5) % 1.0 - 0.5
        rho = rho + amp * np.exp(-(dx * dx + dy * dy + dz * dz) / (2.0 * sig * sig))
    return rho


def sample_hierarchy(balance=True):
    """The sample as an amr_common.Hierarchy (tiles restricted, blocks made)."""
    spacing0 = 1.0 / N0

    def dens(level, keys):
        n = N0 << level
        h = 1.0 / n
        c = (np.arange(TILE) + 0.5) * h
        out = np.empty((len(keys), TILE, TILE, TILE), dtype=np.float64)
        for i, (tx, ty, tz) in enumerate(keys):
            z, y, x = np.meshgrid(tz * TILE * h + c, ty * TILE * h + c, tx * TILE * h + c,
                                  indexing="ij")
            out[i] = density_at(x, y, z)
        return out

    def flag(level, d):
        return d > FLAG[level]

    h = amr_common.build_hierarchy((N0, N0, N0), (0.0, 0.0, 0.0), (spacing0,) * 3, NLEVELS,
                                   TILE, dens, flag, level0_block=LEVEL0_BLOCK, merge=True,
                                   balance=balance, periodic=True)
    amr_common.restrict_covered(h)
    amr_common.make_blocks(h)
    amr_common.check_rules(h)
    return h


def main(argv=None):
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--output", default=os.path.join(here, "..", "amr_sample.vthb"),
                    help="the .vthb to write (default datasets/amr_sample.vthb); the .blocks.txt "
                         "and .raw files go next to it")
    ap.add_argument("--no-vtk", action="store_true", help="only print the block list")
    ap.add_argument("--no-check", action="store_true", help="do not read the file back")
    ap.add_argument("--no-balance", action="store_true",
                    help="no 2:1 balance (leaf cells up to 3 levels apart may touch)")
    args = ap.parse_args(argv)
    h = sample_hierarchy(balance=not args.no_balance)
    counts = amr_common.describe(h, out=sys.stdout, title="amr_sample (datasets/generators/amr_sample.py)")
    jumps = amr_common.report_level_jumps(h)
    print(f"# largest level jump between touching leaf cells: {jumps}")
    dens = np.concatenate([b.data[~m].ravel() for lm, bl in zip(amr_common.covered_masks(h), h.blocks)
                           for b, m in zip(bl, lm)])
    print(f"# leaf density range {dens.min():.6g} .. {dens.max():.6g}")
    if args.no_vtk:
        return 0
    out = os.path.normpath(args.output)
    base = os.path.splitext(out)[0]
    amr_common.write_vthb(h, out, dtype=np.float32)
    with open(base + ".blocks.txt", "w") as f:
        amr_common.describe(h, out=f, title="amr_sample (datasets/generators/amr_sample.py)")
        f.write(f"# largest level jump between touching leaf cells: {jumps}\n")
    amr_common.write_raw(h, base + ".raw", np.float32)
    size = os.path.getsize(out) + sum(os.path.getsize(os.path.join(base, f)) for f in os.listdir(base))
    print(f"wrote {out} (+ {os.path.basename(base)}/, {size / 1e6:.2f} MB), "
          f"{base}.blocks.txt, {base}.raw; leaf cells {sum(counts)}")
    if not args.no_check:
        problems = amr_common.check_with_paraview(out, h, np.float32)
        if problems:
            print("CHECK FAILED:\n  " + "\n  ".join(problems[:20]))
            return 1
        print("check: XMLUniformGridAMRReader (DefaultNumberOfLevels = 0) reads back the same "
              "levels, boxes, spacing, origin, Float32 densities and vtkGhostType (8 on covered cells)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
