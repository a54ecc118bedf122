#!/usr/bin/python3
"""Generate datasets/sample.vti: a small synthetic 3D density field with a known hierarchy of
clumps, for trying out and testing phew.

    /usr/bin/python3 datasets/generate_sample.py [--output datasets/sample.vti] [--raw FILE]

Deterministic: fixed seed, numpy only (no VTK needed). The field lives on a periodic 64^3 grid
of cell-centred values (box [0, 1)^3, spacing 1/64, origin 0). It is the sum of

  * a smooth lognormal background (mean about 1, at most about 3: far below the threshold 10);
  * compact clump profiles A / (1 + r^2/rc^2)^2 (r the periodic distance) for the designed
    leaves (LEAVES below), the same profile around segments ("bridges", BRIDGES) that join the
    leaves of a halo and set its saddles, flat-topped halo envelopes (PLATEAUS), filaments
    (FILAMENTS), a faint bump and a diffuse cloud (BUMPS, CLOUDS);

multiplied by lognormal white noise exp(0.1 * N(0,1)) clipped at 2 sigma, which makes many
low-contrast noise peaks (relevance below about exp(0.4) = 1.5) that PHEW's noise removal
(relevance threshold 2) merges away.

Recommended phew parameters: threshold 10, relevance 2, saddle threshold 25, periodic.
See datasets/README.md for what they give.
"""
import argparse
import base64
import os
import struct
import sys

import numpy as np

N = 64                # cells per axis
BOX = 1.0             # box size; spacing BOX / N, origin 0
SEED = 20151105       # the PHEW paper's publication year and month, plus a day
NOISE_SIGMA = 0.10    # multiplicative lognormal white noise, clipped at NOISE_CLIP sigma
NOISE_CLIP = 2.0
THRESHOLD = 10.0      # recommended density threshold
RELEVANCE = 2.0       # recommended relevance threshold
SADDLE = 25.0         # recommended saddle threshold

# The designed structures, in cell units: (i, j, k) is the centre of cell (i, j, k).
# LEAVES: (name, halo, centre, amplitude, core radius rc): the peaks that must survive the noise
# removal as clumps (clump profile A / (1 + r^2/rc^2)^2).
# BRIDGES: (leaf, leaf, amplitude, rc): a ridge of constant height along the segment between
# two leaves (same profile across it); it sets the saddle between the two sides, which is about
# the bridge amplitude plus the leaves' tails. Bridges carry no peak of their own: their flat
# crests only collect noise peaks, which the noise removal merges away.
#
# H1, the big halo, has depth 3 (the Level of its root in the dendrogram):
#   H1 = { A = {a1, a2},  B = { B1 = {b1, b2}, B2 = {b3, b4} } },  a1 the densest peak.
#   Saddle mergers (measured saddles): level 1 a2 -> a1 (~100), b2 -> b1 (~90), b4 -> b3 (~70);
#   level 2 B2 -> B1 (~46); level 3 B -> A (~37). b1's highest saddle leads to b2, then to B2,
#   both lower peaks, so B can only join A once B1 and B2 have merged: that makes depth 3.
# H2 = { c1, C = {c2, c3} }, depth 2: level 1 c3 -> c2, level 2 C -> c1 (~36).
# H3 = { d1, d2 } crosses the periodic x boundary (x = 61 and x = 4), depth 1.
# H4 = { e1 }, a small round single-clump halo, depth 0.
# H5 = { f1 } and H6 = { g1 }: joined above the density threshold by a bridge whose saddle
#   (about 15) is below the saddle threshold: neighbouring clumps, separate haloes.
# Filaments, a faint bump and a cloud are noise structures (see below).
LEAVES = [
    ("a1", "H1", (12, 28, 32), 500.0, 1.6),
    ("a2", "H1", (13, 35, 33), 260.0, 1.5),
    ("b1", "H1", (30, 24, 31), 340.0, 1.5),
    ("b2", "H1", (36, 22, 32), 230.0, 1.4),
    ("b3", "H1", (31, 36, 32), 320.0, 1.5),
    ("b4", "H1", (37, 37, 30), 200.0, 1.4),
    ("c1", "H2", (42, 50, 14), 450.0, 1.5),
    ("c2", "H2", (52, 47, 14), 240.0, 1.4),
    ("c3", "H2", (54, 53, 15), 170.0, 1.3),
    ("d1", "H3", (61, 52, 50), 260.0, 1.6),
    ("d2", "H3", (4, 56, 50), 160.0, 1.5),
    ("e1", "H4", (50, 12, 50), 90.0, 2.2),
    ("f1", "H5", (44, 14, 16), 210.0, 1.7),
    ("g1", "H6", (54, 19, 17), 130.0, 1.4),
]
BRIDGES = [
    ("a1", "a2", 60.0, 1.8),
    ("b1", "b2", 62.0, 1.6),
    ("b3", "b4", 55.0, 1.6),
    ("b1", "b3", 36.0, 1.8),
    ("a1", "b1", 24.0, 2.0),
    ("c2", "c3", 45.0, 1.5),
    ("c1", "c2", 22.0, 1.8),
    ("d1", "d2", 30.0, 2.0),
    ("f1", "g1", 13.0, 2.2),
]
# PLATEAUS: (name, centre, amplitude, radius R): flat-topped haloes' envelopes A / (1 + (r/R)^8)
# a little above the threshold: the noise makes many irrelevant peaks on their flat tops.
PLATEAUS = [
    ("H1", (24, 30, 32), 14.0, 9.0),
    ("H2", (48, 50, 14), 13.0, 6.0),
    ("H3", (0, 53, 50), 13.0, 5.0),
]
# FILAMENTS: (leaf, leaf, amplitude, half-width w): flat-topped ridges A / (1 + (d/w)^8) (d the
# distance to the segment) just above the threshold, joining haloes like a cosmic web. Their
# saddles (below about 18) stay below the saddle threshold, so they join no haloes; their flat
# crests carry many noise peaks.
FILAMENTS = [
    ("a1", "c1", 12.0, 4.0),
    ("b1", "f1", 12.0, 4.0),
    ("f1", "e1", 12.0, 3.5),
    ("a2", "d1", 12.0, 3.5),
    ("c1", "d1", 12.0, 3.0),
]
# BUMPS: (name, centre, amplitude, rc): not clumps. n1 is a faint isolated bump peaking at
# about 14 (relevance about 1.4 < 2 against the threshold); CLOUDS: (name, centre, amplitude,
# radius R): an isolated diffuse cloud with a flat top A / (1 + (r/R)^8) a little above the
# threshold (top about 16 with the noise, below 2x threshold). Both are noise: PHEW discards them
# as isolated and irrelevant.
BUMPS = [("n1", (20, 52, 20), 12.6, 1.5)]
CLOUDS = [("n2", (14, 8, 54), 11.5, 7.0)]

HALOES = {"H1": 3, "H2": 2, "H3": 1, "H4": 0, "H5": 0, "H6": 0}


def cell_centres(n=N):
    return np.arange(n, dtype=np.float64) + 0.5


def periodic_delta(a, c, n=N):
    d = a - c
    return d - n * np.round(d / n)


def profile(centre, amp, rc, n=N):
    """centre in cell units: (i, j, k) is the centre of cell (i, j, k)."""
    x = cell_centres(n) - 0.5
    dx = periodic_delta(x, centre[0], n)[None, None, :]
    dy = periodic_delta(x, centre[1], n)[None, :, None]
    dz = periodic_delta(x, centre[2], n)[:, None, None]
    r2 = dx * dx + dy * dy + dz * dz
    return amp / (1.0 + r2 / (rc * rc)) ** 2


def plateau(centre, amp, radius, n=N):
    x = cell_centres(n) - 0.5
    dx = periodic_delta(x, centre[0], n)[None, None, :]
    dy = periodic_delta(x, centre[1], n)[None, :, None]
    dz = periodic_delta(x, centre[2], n)[:, None, None]
    r2 = (dx * dx + dy * dy + dz * dz) / (radius * radius)
    return amp / (1.0 + r2 ** 4)


def segment_distance2(a, b, n=N):
    """Squared periodic distance of every cell centre to the segment a-b (b is taken as its
    image nearest a)."""
    x = cell_centres(n) - 0.5
    a = np.asarray(a, dtype=np.float64)
    t = periodic_delta(np.asarray(b, dtype=np.float64), a, n)  # segment direction, a to b
    v = [periodic_delta(x, a[0], n)[None, None, :], periodic_delta(x, a[1], n)[None, :, None],
         periodic_delta(x, a[2], n)[:, None, None]]
    u = np.clip((v[0] * t[0] + v[1] * t[1] + v[2] * t[2]) / np.dot(t, t), 0.0, 1.0)
    return sum((v[i] - u * t[i]) ** 2 for i in range(3))


def ridge(a, b, amp, rc, n=N):
    """The clump profile around the segment a-b."""
    return amp / (1.0 + segment_distance2(a, b, n) / (rc * rc)) ** 2


def background(rng, n=N, sigma_ln=0.35, smoothing=4.0):
    """Smooth lognormal field with mean about 1: a Gaussian-smoothed white noise, exp()."""
    g = rng.standard_normal((n, n, n))
    k = np.fft.fftfreq(n) * 2 * np.pi
    k2 = k[:, None, None] ** 2 + k[None, :, None] ** 2 + k[None, None, :] ** 2
    g = np.real(np.fft.ifftn(np.fft.fftn(g) * np.exp(-0.5 * k2 * smoothing ** 2)))
    g *= sigma_ln / g.std()
    return np.exp(g - 0.5 * sigma_ln ** 2)


def make_field(noise=True, seed=SEED):
    """The density as an array indexed [z, y, x] (x fastest in memory), float32."""
    rng = np.random.default_rng(seed)
    rho = background(rng)
    centre = {name: c for name, halo, c, amp, rc in LEAVES}
    for name, halo, c, amp, rc in LEAVES:
        rho += profile(c, amp, rc)
    for a, b, amp, rc in BRIDGES:
        rho += ridge(centre[a], centre[b], amp, rc)
    for name, c, amp, radius in PLATEAUS + CLOUDS:
        rho += plateau(c, amp, radius)
    for a, b, amp, w in FILAMENTS:
        rho += amp / (1.0 + (segment_distance2(centre[a], centre[b]) / (w * w)) ** 4)
    for name, c, amp, rc in BUMPS:
        rho += profile(c, amp, rc)
    eps = rng.standard_normal(rho.shape)
    if noise:
        rho *= np.exp(NOISE_SIGMA * np.clip(eps, -NOISE_CLIP, NOISE_CLIP))
    rho = rho.astype(np.float32)
    assert np.all(np.isfinite(rho)) and rho.min() > 0
    return rho


def leaf_cells():
    """{leaf name: (ix, iy, iz)} of the cell containing each designed leaf peak."""
    return {name: tuple(int(c) % N for c in centre) for name, halo, centre, amp, rc in LEAVES}


def _b64_block(raw):
    return base64.b64encode(raw).decode("ascii")


def write_vti(path, rho, spacing, origin, name="density"):
    """VTK XML ImageData, one Float32 CellData array, inline binary (base64) data, UInt32
    header, no compression. The header (the byte count) and the data are one base64 stream:
    ParaView's reader misreads parts of files whose header and data are two separate blocks,
    and parallel runs read parts."""
    nz, ny, nx = rho.shape
    data = np.ascontiguousarray(rho, dtype="<f4").tobytes()
    if len(data) >= 2 ** 32:
        raise ValueError("array too large for a UInt32 header")
    header = struct.pack("<I", len(data))
    rng = (float(rho.min()), float(rho.max()))
    extent = f"0 {nx} 0 {ny} 0 {nz}"
    lines = [
        '<?xml version="1.0"?>',
        '<VTKFile type="ImageData" version="1.0" byte_order="LittleEndian" header_type="UInt32">',
        f'  <ImageData WholeExtent="{extent}" Origin="{origin[0]!r} {origin[1]!r} {origin[2]!r}" '
        f'Spacing="{spacing[0]!r} {spacing[1]!r} {spacing[2]!r}" Direction="1 0 0 0 1 0 0 0 1">',
        f'    <Piece Extent="{extent}">',
        '      <PointData>',
        '      </PointData>',
        f'      <CellData Scalars="{name}">',
        f'        <DataArray type="Float32" Name="{name}" format="binary" '
        f'RangeMin="{rng[0]!r}" RangeMax="{rng[1]!r}">',
        '          ' + _b64_block(header + data),
        '        </DataArray>',
        '      </CellData>',
        '    </Piece>',
        '  </ImageData>',
        '</VTKFile>',
    ]
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="ascii", newline="\n") as f:
        f.write("\n".join(lines) + "\n")
    os.replace(tmp, path)


def main(argv=None):
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--output", default=os.path.join(here, "sample.vti"))
    ap.add_argument("--raw", help="also write the field as raw little-endian float32 (x fastest)")
    ap.add_argument("--no-noise", action="store_true", help="leave out the multiplicative noise")
    args = ap.parse_args(argv)
    rho = make_field(noise=not args.no_noise)
    spacing = (BOX / N,) * 3
    write_vti(args.output, rho, spacing, (0.0, 0.0, 0.0))
    if args.raw:
        rho.astype("<f4").tofile(args.raw)
    print(f"wrote {args.output}: {N}x{N}x{N} cells, float32, spacing {BOX / N}, origin 0, "
          f"density range [{rho.min():.4g}, {rho.max():.4g}], "
          f"{int((rho > THRESHOLD).sum())} cells above the threshold {THRESHOLD}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
