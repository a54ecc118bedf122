#!/usr/bin/python3
"""Deposit the cosmological N-body snapshot /work/shared/data/cosmo64_z0_pos.f32 (64^3 dark
matter particles at z = 0, periodic box of 50 Mpc/h, positions in [0, 1); see
/work/shared/data/README.md) onto a periodic N^3 grid with cloud-in-cell (CIC) and write a raw
little-endian float32 cube (x fastest), in units of the mean density (the mean is exactly 1).

    /usr/bin/python3 datasets/make_cosmo_grid.py OUTPUT.raw [--n 64] [--input POS.f32] [--vti OUT.vti]

Cells are cell-centred: cell i covers [i/N, (i+1)/N) of the unit box. A realistic clumpy field
for the grid path; the PHEW paper (section 4) runs on such a field with a density threshold of
80, a relevance threshold of 3 and a saddle threshold of 200 (in units of the mean), e.g.

    phew --input OUTPUT.raw --dims 64 64 64 --type float32 --periodic --threshold 80 \
         --relevance 3 --saddle 200 --spacing 0.78125 0.78125 0.78125 --output cosmo

(spacing 50/64 Mpc/h). Outputs are generated at test time and not committed (64^3 float32 is
1 MiB).
"""
import argparse
import os
import sys

import numpy as np

DEFAULT_INPUT = "/work/shared/data/cosmo64_z0_pos.f32"


def cic_corners(pos, n):
    """Cloud-in-cell on a periodic n^3 grid: yields (ix, iy, iz, weight) for each of the 8
    cells around every particle (pos: (M, 3) in [0, 1))."""
    u = pos.astype(np.float64) * n - 0.5      # in cell units relative to cell centres
    i0 = np.floor(u).astype(np.int64)
    f = u - i0
    for dz in (0, 1):
        wz = f[:, 2] if dz else 1.0 - f[:, 2]
        iz = (i0[:, 2] + dz) % n
        for dy in (0, 1):
            wy = f[:, 1] if dy else 1.0 - f[:, 1]
            iy = (i0[:, 1] + dy) % n
            for dx in (0, 1):
                wx = f[:, 0] if dx else 1.0 - f[:, 0]
                ix = (i0[:, 0] + dx) % n
                yield ix, iy, iz, wx * wy * wz


def cic_deposit(pos, n):
    """pos: (M, 3) positions in [0, 1). Returns the density (array [z, y, x], float64) with
    mean 1 on a periodic n^3 grid."""
    rho = np.zeros(n * n * n, dtype=np.float64)
    for ix, iy, iz, w in cic_corners(pos, n):
        rho += np.bincount(ix + n * (iy + n * iz), weights=w, minlength=n ** 3)
    rho *= n ** 3 / len(pos)
    return rho.reshape(n, n, n)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("output", help="raw float32 output file")
    ap.add_argument("--n", type=int, default=64, help="cells per axis (default 64)")
    ap.add_argument("--input", default=DEFAULT_INPUT)
    ap.add_argument("--vti", help="also write a .vti (inline binary, as generate_sample.py)")
    args = ap.parse_args(argv)
    pos = np.fromfile(args.input, dtype="<f4").reshape(-1, 3)
    if not (np.all(np.isfinite(pos)) and pos.min() >= 0.0 and pos.max() <= 1.0):
        print("make_cosmo_grid: positions outside [0, 1]", file=sys.stderr)
        return 1
    pos = pos % 1.0
    rho = cic_deposit(pos, args.n).astype(np.float32)
    rho.astype("<f4").tofile(args.output)
    if args.vti:
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        from generate_sample import write_vti
        write_vti(args.vti, rho, (50.0 / args.n,) * 3, (0.0, 0.0, 0.0))
    print(f"wrote {args.output}: {args.n}^3 float32, {len(pos)} particles, mean {rho.mean():.6f}, "
          f"max {rho.max():.1f}, {int((rho > 80).sum())} cells above 80, "
          f"{int((rho == 0).sum())} empty cells; spacing {50.0 / args.n} Mpc/h")
    return 0


if __name__ == "__main__":
    sys.exit(main())
