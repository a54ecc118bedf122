#!/usr/bin/env pvpython
"""Deposit the cosmological N-body snapshot (/work/shared/data/cosmo64_z0_pos.f32: 64^3 dark matter
particles at z = 0, positions in [0, 1), periodic, equal masses; see its README) onto a
RAMSES-like AMR hierarchy and write it as a .vthb (vtkOverlappingAMR, Binary mode) for PHEW on AMR.

    pvpython datasets/generators/amr_cosmo.py [OUTPUT.vthb]        # default build/amr_cosmo.vthb
    /usr/bin/python3 datasets/generators/amr_cosmo.py --no-vtk     # figures only, no file

Not committed (a few tens of MB); regenerate it when needed.

Hierarchy (RAMSES' quasi-Lagrangian "m_refine" strategy):
  * level 0: 64^3 cells over the unit box (cell = 1 particle on average), levels 0..4 (default);
  * a level-l cell is flagged for refinement when it holds more than 8 particles (--m-refine):
    by default its cloud-in-cell mass is > 8 particle masses (--criterion cic), or with
    --criterion ngp the number of particles whose nearest grid point is the cell;
  * refinement is organised in tiles of 8^3 cells (= 4^3 parent cells): a level-(l+1) tile exists
    where its parent tile exists and one of its 4^3 parent cells is flagged, so every flagged cell
    of an existing block is refined and nesting holds by construction; 2:1 balance (periodic) is
    enforced as RAMSES does (touching leaf cells differ by at most one level); --no-balance
    drops it;
  * blocks: level 0 in blocks of 16^3 cells (--level0-block), finer levels one 8^3 block per tile
    (or with --merge: 16^3 / 16x8x8 / 8^3 blocks);
  * density of every level: the periodic CIC deposit of all particles at that level's resolution,
    in units of the mean density (mean of level 0 = 1), on every cell of the level's blocks,
    covered cells included (as RAMSES' rho on a coarse cell), unless --restrict (covered cells
    get the mean of their children instead, as in the AMR sample);
  * covered cells are blanked (vtkGhostType = 8, REFINEDCELL, vtkAMRUtilities::BlankCells).

Prints the number of blocks, cells and leaf cells per level and in total.
"""
import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import amr_common  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import make_cosmo_grid  # noqa: E402  (cloud-in-cell)

DEFAULT_INPUT = "/work/shared/data/cosmo64_z0_pos.f32"


def make_deposit(pos, n0, tile, criterion, m_refine):
    """Returns (density_on_tiles, flag_cells) callbacks for amr_common.build_hierarchy."""
    npart = len(pos)
    T = tile
    T3 = T * T * T

    def tile_ids(level, keys):
        nt = (n0 << level) // T
        return keys[:, 0] + nt * (keys[:, 1] + nt * keys[:, 2])

    def scatter(level, keys, ix, iy, iz, w):
        """Sum weights w of cells (ix, iy, iz) of level into the tiles keys -> [n, T, T, T]."""
        nt = (n0 << level) // T
        ids = tile_ids(level, keys)
        order = np.argsort(ids)
        sids = ids[order]
        tid = (ix // T) + nt * ((iy // T) + nt * (iz // T))
        slot = np.searchsorted(sids, tid)
        slot = np.minimum(slot, len(sids) - 1)
        ok = sids[slot] == tid
        local = ((iz % T) * T + (iy % T)) * T + (ix % T)
        idx = order[slot[ok]] * T3 + local[ok]
        acc = np.bincount(idx, weights=None if w is None else w[ok], minlength=len(keys) * T3)
        return acc.reshape(len(keys), T, T, T)

    def density_on_tiles(level, keys):
        n = n0 << level
        out = np.zeros((len(keys), T, T, T), dtype=np.float64)
        for ix, iy, iz, w in make_cosmo_grid.cic_corners(pos, n):
            out += scatter(level, keys, ix, iy, iz, w)
        out *= float(n) ** 3 / npart          # mean density 1
        if criterion == "ngp":
            ii = np.floor(pos * n).astype(np.int64) % n
            cnt = scatter(level, keys, ii[:, 0], ii[:, 1], ii[:, 2], None)
            # flag_cells is called on this very array right after (amr_common.build_hierarchy)
            density_on_tiles.last_counts = (id(out), cnt)
        return out

    def flag_cells(level, dens):
        if criterion == "ngp":
            key, cnt = density_on_tiles.last_counts
            assert key == id(dens)
            return cnt > m_refine
        n = n0 << level
        particles_per_cell = dens * (npart / float(n) ** 3)   # CIC mass in particle masses
        return particles_per_cell > m_refine

    return density_on_tiles, flag_cells


def main(argv=None):
    here = os.path.dirname(os.path.abspath(__file__))
    repo = os.path.normpath(os.path.join(here, "..", ".."))
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("output", nargs="?", default=os.path.join(repo, "build", "amr_cosmo.vthb"))
    ap.add_argument("--input", default=DEFAULT_INPUT)
    ap.add_argument("--n0", type=int, default=64, help="level-0 cells per axis (default 64)")
    ap.add_argument("--levels", type=int, default=5, help="number of levels (default 5: 0..4)")
    ap.add_argument("--m-refine", type=float, default=8.0,
                    help="refine cells holding more than this many particles (default 8)")
    ap.add_argument("--criterion", choices=("cic", "ngp"), default="cic",
                    help="particles per cell from the CIC mass (default) or the NGP count")
    ap.add_argument("--tile", type=int, default=8)
    ap.add_argument("--level0-block", type=int, default=16)
    ap.add_argument("--merge", action="store_true", help="merge tiles into 16^3/16x8x8 blocks")
    ap.add_argument("--no-balance", action="store_true")
    ap.add_argument("--restrict", action="store_true",
                    help="covered cells get the mean of their children (default: own CIC)")
    ap.add_argument("--float64", action="store_true", help="write Float64 (default Float32)")
    ap.add_argument("--blocks", help="also write the block list (amr_common.describe) here")
    ap.add_argument("--raw", help="also write all blocks' densities (phew_amr layout) here")
    ap.add_argument("--no-vtk", action="store_true", help="do not write the .vthb")
    ap.add_argument("--check", action="store_true",
                    help="read the .vthb back with ParaView's XMLUniformGridAMRReader and compare")
    args = ap.parse_args(argv)

    t0 = time.time()
    pos = np.fromfile(args.input, dtype="<f4").reshape(-1, 3).astype(np.float64)
    if not (np.all(np.isfinite(pos)) and pos.min() >= 0.0 and pos.max() <= 1.0):
        print("amr_cosmo: positions outside [0, 1]", file=sys.stderr)
        return 1
    pos %= 1.0
    dens, flag = make_deposit(pos, args.n0, args.tile, args.criterion, args.m_refine)
    h = amr_common.build_hierarchy((args.n0,) * 3, (0.0, 0.0, 0.0), (1.0 / args.n0,) * 3,
                                   args.levels, args.tile, dens, flag,
                                   level0_block=args.level0_block, merge=args.merge,
                                   balance=not args.no_balance, periodic=True)
    if args.restrict:
        amr_common.restrict_covered(h)
    amr_common.make_blocks(h)
    amr_common.check_rules(h)
    t1 = time.time()
    dtype = np.float64 if args.float64 else np.float32
    counts = amr_common.leaf_counts(h)
    print(f"amr_cosmo: {len(pos)} particles from {args.input}; criterion {args.criterion} > "
          f"{args.m_refine:g} particles per cell; tile {args.tile}^3; "
          f"{'2:1 balanced' if not args.no_balance else 'not balanced'}; "
          f"covered cells: {'mean of children' if args.restrict else 'own-level CIC'}")
    print("level  blocks      cells  leaf_cells  cell_size  max_density")
    for level, blocks in enumerate(h.blocks):
        cells = sum(b.ncells for b in blocks)
        dmax = max(float(b.data.max()) for b in blocks)
        print(f"{level:5d} {len(blocks):7d} {cells:10d} {counts[level]:11d}  1/{args.n0 << level:<7d}"
              f" {dmax:11.1f}")
    print(f"total {sum(len(b) for b in h.blocks):7d} {sum(b.ncells for b in h.all_blocks()):10d} "
          f"{sum(counts):11d}")
    # mass check: leaf mass = sum over leaves density * volume = 1 (box mass) for CIC
    mass = 0.0
    for level, (blocks, masks) in enumerate(zip(h.blocks, amr_common.covered_masks(h))):
        vol = (1.0 / (args.n0 << level)) ** 3
        mass += sum(float(b.data[~m].sum()) for b, m in zip(blocks, masks)) * vol
    print(f"leaf mass {mass:.6f} (box mass 1; differs from 1 because each level is its own CIC "
          f"deposit); built in {t1 - t0:.1f} s")
    if args.blocks:
        with open(args.blocks, "w") as f:
            amr_common.describe(h, out=f, title=f"amr_cosmo {' '.join(argv or sys.argv[1:])}")
    if args.raw:
        amr_common.write_raw(h, args.raw, dtype)
    if args.no_vtk:
        return 0
    out = os.path.abspath(args.output)
    os.makedirs(os.path.dirname(out), exist_ok=True)
    amr_common.write_vthb(h, out, dtype=dtype)
    base = os.path.splitext(out)[0]
    size = os.path.getsize(out) + sum(os.path.getsize(os.path.join(base, f)) for f in os.listdir(base))
    print(f"wrote {out} (+ {os.path.basename(base)}/, {size / 1e6:.1f} MB) in {time.time() - t1:.1f} s")
    if args.check:
        t2 = time.time()
        notes = []
        problems = amr_common.check_with_paraview(out, h, dtype, notes)
        for n in notes:
            print("note: " + n)
        if problems:
            print("CHECK FAILED:\n  " + "\n  ".join(problems[:20]))
            return 1
        print(f"check: XMLUniformGridAMRReader (DefaultNumberOfLevels = 0) reads back the same "
              f"hierarchy, densities and vtkGhostType ({time.time() - t2:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
