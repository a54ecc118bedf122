"""The density fields of the parallel command-line tests, generated at test time (seeded).

cases(n_ranks, libphew, source_dir) returns the list of Case for a run on n_ranks; fields that
put features on block boundaries are built from the real blocks (blocks.py), so they differ
per rank count. Arrays are indexed [z, y, x] (x fastest in the raw file)."""
import os
import sys

import numpy as np
from scipy import ndimage

import blocks as B


class Case:
    def __init__(self, name, rho, threshold, relevance=2.0, saddle=None, mass=0.0, periodic=False,
                 spacing=None, origin=None, numpy_check=False, expect=None):
        self.name, self.rho, self.periodic = name, rho, periodic
        self.dims = rho.shape[::-1]  # (nx, ny, nz)
        self.type = "float32" if rho.dtype == np.float32 else "float64"
        self.threshold, self.relevance, self.saddle, self.mass = threshold, relevance, saddle, mass
        self.spacing, self.origin = spacing, origin
        self.numpy_check = numpy_check  # also compare with datasets/phew_numpy.py
        self.expect = expect  # what the field must exercise (checked by test_cli_ranks.py)
        self.peaks = []  # designed peak cells (x, y, z), for expect == "boundary peaks"
        self.peaks_on_cuts = []  # those that sit on a boundary between blocks

    def write(self, path):
        self.rho.astype("<f4" if self.type == "float32" else "<f8").tofile(path)

    def args(self, raw, prefix):
        """The phew command line (without the program)."""
        a = ["--input", raw, "--dims"] + [str(n) for n in self.dims] + ["--type", self.type,
             "--threshold", repr(self.threshold), "--relevance", repr(self.relevance), "--output", prefix]
        if self.saddle is not None:
            a += ["--saddle", repr(self.saddle)]
        if self.mass:
            a += ["--mass-threshold", repr(self.mass)]
        if self.periodic:
            a.append("--periodic")
        if self.spacing:
            a += ["--spacing"] + [repr(s) for s in self.spacing]
        if self.origin:
            a += ["--origin"] + [repr(s) for s in self.origin]
        return a


def smooth_random(dims, seed, periodic, sigma=1.5):
    """A positive lognormal field with many peaks: exp(gaussian-smoothed white noise)."""
    noise = np.random.default_rng(seed).standard_normal(dims[::-1])
    f = ndimage.gaussian_filter(noise, sigma, mode="wrap" if periodic else "nearest")
    return np.exp(f / f.std())


def bumps(dims, centres, amplitudes, sigma, periodic):
    """Sum of Gaussian bumps centred on cells (x, y, z), distances wrapped when periodic."""
    z, y, x = np.indices(dims[::-1], dtype=np.float64)
    out = np.zeros(dims[::-1])
    for c, a in zip(centres, amplitudes):
        r2 = 0.0
        for coord, cc, n in ((x, c[0], dims[0]), (y, c[1], dims[1]), (z, c[2], dims[2])):
            d = coord - cc
            if periodic:
                d = d - n * np.round(d / n)
            r2 = r2 + d * d
        out += a * np.exp(-r2 / (2 * sigma * sigma))
    return out


def cut_or_middle(blocks, axis, n):
    """A block boundary along axis (the first), or the middle of the axis when it is not split."""
    c = B.cuts(blocks, axis)
    return c[0] if c else n // 2


def boundary_peaks(n_ranks, libphew, saddle):
    """Peaks in the last cell layer of one block and the first of the next, in pairs whose
    saddle lies across the boundary, and one where the most blocks meet. Periodic: without a
    cut on an axis, the pair straddles the periodic edge."""
    dims = (24, 20, 16)
    blocks = B.decompose(libphew, dims, True, n_ranks)
    rng = np.random.default_rng(17)
    # first the cell where the most blocks meet, then pairs across every boundary
    peaks = [tuple(B.cuts(blocks, d)[0] if B.cuts(blocks, d) else 0 for d in range(3))]
    on_cut = [any(B.cuts(blocks, d) for d in range(3))]
    for axis in range(3):
        for c in B.cuts(blocks, axis) or [0]:
            for _ in range(2):
                a = [int(rng.integers(0, n)) for n in dims]
                a[axis] = (c - 1) % dims[axis]
                b = list(a)
                b[axis] = c
                other = (axis + 1 + int(rng.integers(0, 2))) % 3
                b[other] = (b[other] + 4) % dims[other]
                peaks += [tuple(a), tuple(b)]
                on_cut += [bool(B.cuts(blocks, axis))] * 2
    # keep peaks at least 4 cells apart (periodic), so each stays its own maximum
    kept, kept_on_cut = [], []
    for p, cut in zip(peaks, on_cut):
        if all(max(min(abs(p[d] - q[d]), dims[d] - abs(p[d] - q[d])) for d in range(3)) >= 4 for q in kept):
            kept.append(p)
            kept_on_cut.append(cut)
    amplitudes = 3.0 + 3.0 * rng.random(len(kept))
    rho = 0.05 + bumps(dims, kept, amplitudes, 1.2, True)
    for p in kept:  # a strict maximum exactly at the designed cell
        rho[p[2], p[1], p[0]] += 0.3
    case = Case("boundary_peaks" + ("_saddle" if saddle else ""), rho, 0.3, relevance=1.2,
                saddle=1.5 if saddle else None, periodic=True, numpy_check=saddle, expect="boundary peaks")
    case.peaks = kept
    case.peaks_on_cuts = [p for p, cut in zip(kept, kept_on_cut) if cut]
    return case


def plateaus(n_ranks, libphew):
    """Equal densities across block boundaries: a terraced random field (values are multiples
    of 1/4), a flat-topped peak plateau straddling a boundary, and two equal peaks on either
    side of one."""
    dims = (20, 18, 22)
    blocks = B.decompose(libphew, dims, False, n_ranks)
    rho = np.floor(smooth_random(dims, 5, False) * 4) / 4
    top = float(rho.max()) + 2.0
    c = [cut_or_middle(blocks, d, dims[d]) for d in range(3)]
    # a 4 x 3 x 3 plateau, two cells on each side of the boundary along the split axis (x if none)
    axis = next((d for d in range(3) if B.cuts(blocks, d)), 0)
    lo = [max(c[d] - 2, 0) if d == axis else 2 for d in range(3)]
    hi = [lo[d] + (4 if d == axis else 3) for d in range(3)]
    rho[lo[2]:hi[2], lo[1]:hi[1], lo[0]:hi[0]] = top
    # twin peaks of exactly equal density with a plateau saddle cell between them, across the cut
    def cell(k):  # k along the split axis, 4 cells from the far end on the other axes
        return [k % dims[d] if d == axis else dims[d] - 4 for d in range(3)]
    for p, v in ((cell(c[axis] - 1), top + 1.0), (cell(c[axis]), top + 0.5), (cell(c[axis] + 1), top + 1.0)):
        rho[p[2], p[1], p[0]] = v
    return Case("plateaus", rho.astype(np.float32), float(np.quantile(rho, 0.5)), relevance=1.5,
                saddle=float(np.quantile(rho, 0.8)), numpy_check=True, expect="plateau across a boundary")


def sample(source_dir):
    sys.path.insert(0, os.path.join(source_dir, "datasets"))
    import vti_to_raw
    values, spacing, origin, _, _ = vti_to_raw.read_vti(os.path.join(source_dir, "datasets", "sample.vti"))
    return Case("sample", values.astype(np.float32), 10.0, relevance=2.0, saddle=25.0, periodic=True,
                spacing=spacing, origin=origin)


def cases(n_ranks, libphew, source_dir):
    out = []
    # seeded random smooth fields, periodic and not, cubic and not, saddle merging off and on
    rho = smooth_random((32, 24, 20), 1, True)
    t, s = (float(q) for q in np.quantile(rho, [0.6, 0.9]))
    out.append(Case("random_periodic", rho, t, relevance=1.5, periodic=True))
    out.append(Case("random_periodic_saddle", rho, t, relevance=1.5, saddle=s, periodic=True, numpy_check=True))
    rho = smooth_random((40, 18, 27), 2, False).astype(np.float32)
    t, s = (float(q) for q in np.quantile(rho, [0.5, 0.85]))
    out.append(Case("random_box", rho, t, relevance=1.3, numpy_check=True))
    out.append(Case("random_box_saddle", rho, t, relevance=1.3, saddle=s, spacing=(0.5, 2.0, 1.5),
                    origin=(-1.0, 0.0, 3.0)))
    rho = smooth_random((24, 24, 24), 3, True, sigma=2.0)
    t, s = (float(q) for q in np.quantile(rho, [0.5, 0.95]))  # the mass threshold drops a few clumps and haloes
    out.append(Case("random_cube_mass", rho, t, relevance=1.2, saddle=s, periodic=True, mass=600.0))
    out.append(sample(source_dir))
    # one clump over the whole box (every cell is a test cell), with an irrelevant second peak
    dims = (28, 20, 24)
    rho = 1.0 + bumps(dims, [(14, 10, 12)], [9.0], 8.0, True) + bumps(dims, [(1, 1, 1)], [0.5], 2.0, True)
    out.append(Case("spanning_clump", rho, 1.0, saddle=2.0, periodic=True, expect="one clump on every rank"))
    # everything in one corner: the other ranks have no test cells at all
    dims = (32, 24, 20)
    rho = 0.1 + bumps(dims, [(2, 2, 2), (5, 3, 1), (3, 5, 3)], [4.0, 3.0, 3.5], 1.0, False)
    out.append(Case("corner_only", rho, 0.5, relevance=1.2, saddle=1.0, expect="ranks without test cells"))
    # tiny grids: with 6 or 8 ranks some ranks own no cells
    out.append(Case("line", np.array([1, 3, 2, 5, 4], dtype=np.float64).reshape(1, 1, 5), 0.5, relevance=1.01))
    out.append(Case("line_periodic", np.array([1, 3, 2, 5, 4], dtype=np.float64).reshape(1, 1, 5), 0.5,
                    relevance=1.01, periodic=True))
    out.append(Case("plane", np.array([[1, 3, 2], [5, 4, 6], [2, 7, 1]], dtype=np.float64).reshape(1, 3, 3), 0.5,
                    relevance=1.01, saddle=2.0, expect="empty ranks at 8"))
    # blocks one cell thick (3 cells split 1 + 2, or 1 + 1 + 1), periodic and not
    rho = smooth_random((3, 3, 3), 6, True, sigma=0.7)
    out.append(Case("thin_periodic", rho, float(np.quantile(rho, 0.2)), relevance=1.01, saddle=float(np.quantile(rho, 0.5)),
                    periodic=True, expect="one-cell-thick blocks"))
    out.append(Case("thin", rho, float(np.quantile(rho, 0.2)), relevance=1.01, expect="one-cell-thick blocks"))
    rho = smooth_random((3, 3, 7), 7, False, sigma=0.7)
    out.append(Case("thin_long", rho, float(np.quantile(rho, 0.3)), relevance=1.01, saddle=float(np.quantile(rho, 0.6))))
    # features on the real block boundaries of this rank count
    out.append(boundary_peaks(n_ranks, libphew, saddle=False))
    out.append(boundary_peaks(n_ranks, libphew, saddle=True))
    out.append(plateaus(n_ranks, libphew))
    return out
