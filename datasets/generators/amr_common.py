"""Shared code of the AMR sample generators (numpy only; the VTK writer imports vtkmodules lazily).

A hierarchy follows the rules of phew_amr (core/include/phew/phew.h) and vtkOverlappingAMR:

  * refinement ratio 2 on every level; level l has level0_dims * 2^l cells per axis;
  * level 0 tiles the whole domain; the blocks of one level do not overlap;
  * every block of level l > 0 lies inside the union of the level l-1 blocks and is aligned to
    level l-1 cells (even lo and dims on its own level);
  * density is cell data, one value per cell, x fastest.

How refinement is organised (a block-structured "tile" scheme, close to what RAMSES' octs and
AMReX's blocking factor give):

  * every level is cut into TILES of T^3 cells (T even, default 8), aligned on multiples of T in
    the level's index space; on level l+1 a tile covers (T/2)^3 cells of level l, which lie in
    one octant of exactly one level-l tile;
  * level 0: all tiles exist;
  * a level-(l+1) tile exists when its level-l parent tile exists and at least one of the
    (T/2)^3 level-l cells under it is flagged for refinement. Nesting therefore holds by
    construction, and every flagged cell of an existing level-l tile is refined (except on the
    finest level);
  * blocks (the boxes written to the file) are made of tiles: level 0 is cut into boxes of
    level0_block cells; on finer levels, tiles are optionally merged (2x2x2 tiles aligned on
    even tile indices -> one 2T cube, then remaining pairs along x -> 2T x T x T) to get blocks
    of different shapes, or kept as T^3 blocks.

  * 2:1 balance (build_hierarchy(balance=True), the default): the level-l cells touching the
    region under a level-(l+1) tile are themselves in level-l tiles, so touching leaf cells
    differ by at most one level (report_level_jumps() measures it); without it a leaf may touch
    leaves several levels finer.

A cell covered by a finer block is not a leaf.
"""
import os
import sys

import numpy as np


class Block:
    """One box of cells on one level: lo, dims as (x, y, z); data as an array [z, y, x]."""

    __slots__ = ("level", "lo", "dims", "data")

    def __init__(self, level, lo, dims, data=None):
        self.level = int(level)
        self.lo = tuple(int(v) for v in lo)
        self.dims = tuple(int(v) for v in dims)
        self.data = data

    @property
    def ncells(self):
        return self.dims[0] * self.dims[1] * self.dims[2]


class Hierarchy:
    def __init__(self, level0_dims, origin, spacing0, tile):
        self.level0_dims = tuple(int(v) for v in level0_dims)
        self.origin = tuple(float(v) for v in origin)
        self.spacing0 = tuple(float(v) for v in spacing0)
        self.tile = int(tile)
        self.tiles = []    # per level: dict {(tx, ty, tz): array [T, T, T] ([z, y, x])}
        self.blocks = []   # per level: list of Block

    @property
    def nlevels(self):
        return len(self.blocks)

    def level_dims(self, level):
        return tuple(d << level for d in self.level0_dims)

    def spacing(self, level):
        return tuple(s / (1 << level) for s in self.spacing0)

    def all_blocks(self):
        for lev in self.blocks:
            for b in lev:
                yield b


# ----------------------------------------------------------------------------------------------
# Building


def build_hierarchy(level0_dims, origin, spacing0, nlevels, tile, density_on_tiles, flag_cells,
                    level0_block=None, merge=True, balance=True, periodic=True, log=None):
    """Build the tiles of a hierarchy (then call make_blocks).

    density_on_tiles(level, keys) -> array [n, T, T, T] ([tile, z, y, x]): the density of the
        cells of the tiles keys (an int64 array [n, 3] of tile indices (tx, ty, tz)).
    flag_cells(level, dens) -> bool array like dens: cells to refine.
    level0_block: cells per axis of the level-0 blocks (a multiple of tile dividing the domain;
        default: the whole domain in one block).
    balance: 2:1 balance (as RAMSES and AMReX's proper nesting give): the level-l cells that
        touch (face, edge or corner) the region under a level-(l+1) tile are themselves in
        level-l tiles, so touching leaf cells differ by at most one level. Tiles added for this
        are refined where flagged too; the two rules are applied until nothing changes.
    periodic: the balance rule wraps around the domain.
    """
    T = int(tile)
    if T < 2 or T % 2:
        raise ValueError("tile must be even and >= 2")
    for d in level0_dims:
        if d % T:
            raise ValueError(f"level-0 dims {level0_dims} must be multiples of the tile {T}")
    h = Hierarchy(level0_dims, origin, spacing0, T)
    h2 = T // 2
    ntiles = [[(d << lev) // T for d in level0_dims] for lev in range(nlevels)]
    tiles = [dict() for _ in range(nlevels)]
    octs = [dict() for _ in range(nlevels)]     # key -> bool [2, 2, 2] ([cz, cy, cx]) flagged octants

    def add(level, keys):
        keys = sorted(keys, key=lambda k: (k[2], k[1], k[0]))
        arr = np.array(keys, dtype=np.int64).reshape(-1, 3)
        dens = density_on_tiles(level, arr)
        fl = None
        if level < nlevels - 1:
            fl = flag_cells(level, dens).reshape(len(keys), 2, h2, 2, h2, 2, h2).any(axis=(2, 4, 6))
        for i, k in enumerate(keys):
            tiles[level][k] = dens[i]
            if fl is not None:
                octs[level][k] = fl[i]

    n0 = ntiles[0]
    add(0, [(x, y, z) for z in range(n0[2]) for y in range(n0[1]) for x in range(n0[0])])
    rounds = 0
    while True:
        rounds += 1
        changed = False
        for level in range(nlevels - 1):
            want = set()
            for (tx, ty, tz), o in octs[level].items():
                for cz, cy, cx in zip(*np.nonzero(o)):
                    want.add((2 * tx + int(cx), 2 * ty + int(cy), 2 * tz + int(cz)))
            new = want.difference(tiles[level + 1])
            if new:
                add(level + 1, new)
                changed = True
        if balance:
            for level in range(nlevels - 1, 1, -1):
                nc = ntiles[level - 1]
                want = set()
                for k in tiles[level]:
                    rng = []
                    for d in range(3):
                        lo = (k[d] * h2 - 1) // T
                        hi = ((k[d] + 1) * h2) // T
                        vals = set()
                        for v in range(lo, hi + 1):
                            if periodic:
                                vals.add(v % nc[d])
                            elif 0 <= v < nc[d]:
                                vals.add(v)
                        rng.append(sorted(vals))
                    for z in rng[2]:
                        for y in rng[1]:
                            for x in rng[0]:
                                want.add((x, y, z))
                new = want.difference(tiles[level - 1])
                if new:
                    add(level - 1, new)
                    changed = True
        if not changed:
            break
    h.tiles = [t for t in tiles if t]
    h.level0_block = level0_block
    h.merge = merge
    h.rounds = rounds
    if log:
        for level, t in enumerate(h.tiles):
            log(f"level {level}: {len(t)} tiles of {T}^3 cells")
    return h


def make_blocks(h):
    """Group each level's tiles into blocks and copy the tiles' data into them (call again after
    changing tile data, e.g. after restrict_covered)."""
    T = h.tile
    h.blocks = []
    for level, tiles in enumerate(h.tiles):
        if level == 0:
            boxes = _level0_boxes(h.level0_dims, h.level0_block or max(h.level0_dims), T)
        else:
            boxes = tiles_to_boxes(set(tiles.keys()), T, h.merge)
        blocks = []
        dtype = next(iter(tiles.values())).dtype
        for lo, dims in boxes:
            b = Block(level, lo, dims)
            nx, ny, nz = dims
            arr = np.empty((nz, ny, nx), dtype=dtype)
            for tz in range(lo[2] // T, (lo[2] + nz) // T):
                for ty in range(lo[1] // T, (lo[1] + ny) // T):
                    for tx in range(lo[0] // T, (lo[0] + nx) // T):
                        z0, y0, x0 = tz * T - lo[2], ty * T - lo[1], tx * T - lo[0]
                        arr[z0:z0 + T, y0:y0 + T, x0:x0 + T] = tiles[(tx, ty, tz)]
            b.data = arr
            blocks.append(b)
        h.blocks.append(blocks)
    return h


def _level0_boxes(level0_dims, lb, T):
    sizes = []
    for d in level0_dims:
        b = min(lb, d)
        if d % b or b % T:
            raise ValueError(f"level0_block {lb} must divide {level0_dims} and be a multiple of {T}")
        sizes.append(b)
    boxes = []
    for z in range(0, level0_dims[2], sizes[2]):
        for y in range(0, level0_dims[1], sizes[1]):
            for x in range(0, level0_dims[0], sizes[0]):
                boxes.append(((x, y, z), tuple(sizes)))
    return boxes


def tiles_to_boxes(keys, T, merge):
    """keys: set of tile indices (tx, ty, tz). Returns boxes (lo, dims) in cells, ordered by lo
    (z, then y, then x). With merge: aligned 2x2x2 groups of tiles become one (2T)^3 box, then
    aligned pairs along x one 2T x T x T box; the rest stay T^3."""
    left = set(keys)
    boxes = []
    zyx = lambda k: (k[2], k[1], k[0])
    if merge:
        for k in sorted(left, key=zyx):
            if k not in left or k[0] % 2 or k[1] % 2 or k[2] % 2:
                continue
            group = [(k[0] + a, k[1] + b, k[2] + c) for c in (0, 1) for b in (0, 1) for a in (0, 1)]
            if all(g in left for g in group):
                left.difference_update(group)
                boxes.append((k, (2, 2, 2)))
        for k in sorted(left, key=zyx):
            if k not in left or k[0] % 2:
                continue
            other = (k[0] + 1, k[1], k[2])
            if other in left:
                left.difference_update((k, other))
                boxes.append((k, (2, 1, 1)))
    boxes.extend((k, (1, 1, 1)) for k in left)
    boxes.sort(key=lambda b: zyx(b[0]))
    return [(tuple(T * v for v in lo), tuple(T * v for v in d)) for lo, d in boxes]


def restrict_covered(h):
    """Replace the density of every covered cell by the mean of its 8 children, from the finest
    level down (so a cell covered two levels deep gets the mean of the means). Works on tiles;
    call make_blocks afterwards."""
    T = h.tile
    h2 = T // 2
    for level in range(len(h.tiles) - 1, 0, -1):
        parents = h.tiles[level - 1]
        for (tx, ty, tz), a in h.tiles[level].items():
            m = a.reshape(h2, 2, h2, 2, h2, 2).mean(axis=(1, 3, 5))
            p = parents[(tx // 2, ty // 2, tz // 2)]
            ox, oy, oz = (tx % 2) * h2, (ty % 2) * h2, (tz % 2) * h2
            p[oz:oz + h2, oy:oy + h2, ox:ox + h2] = m


# ----------------------------------------------------------------------------------------------
# Checks and descriptions


def covered_masks(h):
    """Per block, a bool array [z, y, x]: True where the cell is covered by a finer block."""
    masks = []
    for level, blocks in enumerate(h.blocks):
        lm = [np.zeros((b.dims[2], b.dims[1], b.dims[0]), dtype=bool) for b in blocks]
        if level + 1 < len(h.blocks) and blocks:
            plo = np.array([b.lo for b in blocks], dtype=np.int64)
            phi = plo + np.array([b.dims for b in blocks], dtype=np.int64)
            for f in h.blocks[level + 1]:
                flo = np.array(f.lo, dtype=np.int64) // 2
                fhi = (np.array(f.lo, dtype=np.int64) + np.array(f.dims, dtype=np.int64)) // 2
                lo = np.maximum(plo, flo)
                hi = np.minimum(phi, fhi)
                for i in np.nonzero((lo < hi).all(axis=1))[0]:
                    a, b_ = lo[i] - plo[i], hi[i] - plo[i]
                    lm[i][a[2]:b_[2], a[1]:b_[1], a[0]:b_[0]] = True
        masks.append(lm)
    return masks


def _pairwise_overlap_volume(a_lo, a_hi, b_lo, b_hi, chunk=512):
    """Sum over b of the intersection volume of each box of a with the boxes of b ([n, 3]
    int64 arrays, hi exclusive); returns (volume per a box, max number of b boxes hit)."""
    vol = np.zeros(len(a_lo), dtype=np.int64)
    for s in range(0, len(a_lo), chunk):
        lo = np.maximum(a_lo[s:s + chunk, None, :], b_lo[None, :, :])
        hi = np.minimum(a_hi[s:s + chunk, None, :], b_hi[None, :, :])
        ext = np.clip(hi - lo, 0, None)
        vol[s:s + chunk] = ext.prod(axis=2).sum(axis=1)
    return vol


def check_rules(h):
    """Raise AssertionError if the hierarchy breaks a rule of phew_amr (generic box tests, not
    relying on how the hierarchy was built)."""
    for level, blocks in enumerate(h.blocks):
        dims = np.array(h.level_dims(level), dtype=np.int64)
        lo = np.array([b.lo for b in blocks], dtype=np.int64).reshape(-1, 3)
        nd = np.array([b.dims for b in blocks], dtype=np.int64).reshape(-1, 3)
        hi = lo + nd
        assert (nd >= 1).all(), f"level {level}: empty block"
        assert (lo >= 0).all() and (hi <= dims).all(), f"level {level}: block outside the domain"
        for b in blocks:
            assert b.data is None or b.data.shape == (b.dims[2], b.dims[1], b.dims[0])
        if level > 0:
            assert (lo % 2 == 0).all() and (nd % 2 == 0).all(), f"level {level}: odd lo or dims"
        # no overlap: the summed intersection volume of each block with all blocks of its level
        # is its own volume
        self_vol = _pairwise_overlap_volume(lo, hi, lo, hi)
        assert (self_vol == nd.prod(axis=1)).all(), f"level {level}: blocks overlap"
        if level == 0:
            assert nd.prod(axis=1).sum() == dims.prod(), "level 0 does not tile the domain"
        else:
            plo = np.array([b.lo for b in h.blocks[level - 1]], dtype=np.int64).reshape(-1, 3)
            phi = plo + np.array([b.dims for b in h.blocks[level - 1]], dtype=np.int64).reshape(-1, 3)
            vol = _pairwise_overlap_volume(lo // 2, hi // 2, plo, phi)
            assert (vol == (nd // 2).prod(axis=1)).all(), f"level {level}: block not nested in level {level - 1}"
    return True


def leaf_counts(h):
    masks = covered_masks(h)
    per_level = [int(sum((~m).sum() for m in lm)) for lm in masks]
    return per_level


def describe(h, out=sys.stdout, title=None):
    """Print the block list and cell counts in a plain-text form that tests can parse:
    lines starting with '#' are comments; 'block LEVEL LOX LOY LOZ NX NY NZ' one per block in
    file order (level by level, then index within the level)."""
    counts = leaf_counts(h)
    p = lambda s="": print(s, file=out)
    if title:
        p(f"# {title}")
    p(f"# level0_dims {h.level0_dims[0]} {h.level0_dims[1]} {h.level0_dims[2]}")
    p(f"# origin {h.origin[0]!r} {h.origin[1]!r} {h.origin[2]!r}")
    p(f"# spacing0 {h.spacing0[0]!r} {h.spacing0[1]!r} {h.spacing0[2]!r}")
    p(f"# levels {h.nlevels}  refinement_ratio 2  tile {h.tile}")
    for level, blocks in enumerate(h.blocks):
        cells = sum(b.ncells for b in blocks)
        p(f"# level {level}: blocks {len(blocks)} cells {cells} leaf_cells {counts[level]}")
    p(f"# total: blocks {sum(len(b) for b in h.blocks)} cells "
      f"{sum(b.ncells for b in h.all_blocks())} leaf_cells {sum(counts)}")
    p("# block level lo_x lo_y lo_z nx ny nz")
    for b in h.all_blocks():
        p(f"block {b.level} {b.lo[0]} {b.lo[1]} {b.lo[2]} {b.dims[0]} {b.dims[1]} {b.dims[2]}")
    return counts


def report_level_jumps(h):
    """Largest level difference between face/edge/corner-adjacent leaf cells (1 means 2:1
    balanced). Uses a dense leaf-level map at the finest resolution: small hierarchies only."""
    L = h.nlevels - 1
    dims = h.level_dims(L)
    if dims[0] * dims[1] * dims[2] > 64 ** 3 * 8 ** 2:
        return None
    lev = np.full((dims[2], dims[1], dims[0]), -1, dtype=np.int8)
    for level, blocks in enumerate(h.blocks):
        f = 1 << (L - level)
        for b in blocks:
            lev[b.lo[2] * f:(b.lo[2] + b.dims[2]) * f, b.lo[1] * f:(b.lo[1] + b.dims[1]) * f,
                b.lo[0] * f:(b.lo[0] + b.dims[0]) * f] = level
    worst = 0
    lev = lev.astype(np.int16)
    for sh in [(a, b, c) for a in (0, 1) for b in (-1, 0, 1) for c in (-1, 0, 1)]:
        if sh <= (0, 0, 0):
            continue
        d = np.abs(lev - np.roll(lev, sh, axis=(0, 1, 2)))
        worst = max(worst, int(d.max()))
    return worst


# ----------------------------------------------------------------------------------------------
# Writers


def to_vtk(h, dtype=np.float64, blank=True):
    """A vtkOverlappingAMR with one vtkUniformGrid per block, cell array 'density', origin,
    per-level spacing, refinement ratio 2, grid description XYZ; with blank=True the covered
    cells get vtkGhostType REFINEDCELL (8) through vtkAMRUtilities.BlankCells, which is what
    VTK's readers do."""
    from vtkmodules.vtkCommonDataModel import vtkAMRBox, vtkOverlappingAMR, vtkUniformGrid
    from vtkmodules.util.numpy_support import numpy_to_vtk
    from vtkmodules.vtkCommonDataModel import vtkAMRUtilities
    VTK_XYZ_GRID = 8    # vtkStructuredData VTK_XYZ_GRID (what vtkUniformGrid::GetGridDescription returns)
    amr = vtkOverlappingAMR()
    amr.Initialize(h.nlevels, [len(b) for b in h.blocks])
    amr.SetOrigin(h.origin)
    amr.SetGridDescription(VTK_XYZ_GRID)
    for level, blocks in enumerate(h.blocks):
        sp = h.spacing(level)
        amr.SetSpacing(level, sp)
        amr.SetRefinementRatio(level, 2)
        for idx, b in enumerate(blocks):
            lo = list(b.lo)
            hi = [b.lo[d] + b.dims[d] - 1 for d in range(3)]
            box = vtkAMRBox(lo, hi)
            amr.SetAMRBox(level, idx, box)
            g = vtkUniformGrid()
            g.SetOrigin([h.origin[d] + b.lo[d] * sp[d] for d in range(3)])
            g.SetSpacing(sp)
            g.SetDimensions(b.dims[0] + 1, b.dims[1] + 1, b.dims[2] + 1)
            arr = numpy_to_vtk(np.ascontiguousarray(b.data, dtype=dtype).ravel(), deep=1)
            arr.SetName("density")
            g.GetCellData().AddArray(arr)
            g.GetCellData().SetActiveScalars("density")
            amr.SetDataSet(level, idx, g)
    if blank:
        vtkAMRUtilities.BlankCells(amr)
    return amr


def write_vthb(h, path, dtype=np.float64, compress=False):
    """Write a .vthb (+ folder of .vti) with vtkXMLUniformGridAMRWriter in Binary (inline
    base64) mode, which Debian's ParaView 5.11 can read back (it cannot read appended data)."""
    from vtkmodules.vtkIOXML import vtkXMLUniformGridAMRWriter
    amr = to_vtk(h, dtype)
    base = os.path.splitext(path)[0]
    if os.path.isdir(base):
        for f in os.listdir(base):
            if f.endswith(".vti"):
                os.remove(os.path.join(base, f))
    w = vtkXMLUniformGridAMRWriter()
    w.SetFileName(path)
    w.SetInputData(amr)
    w.SetDataModeToBinary()
    if not compress:
        w.SetCompressorTypeToNone()
    w.SetHeaderTypeToUInt64()
    if not w.Write():
        raise RuntimeError(f"vtkXMLUniformGridAMRWriter failed on {path}")
    return amr


def check_with_paraview(path, h, dtype=np.float32, notes=None):
    """Read path back with ParaView's XMLUniformGridAMRReader (all levels) and compare levels,
    boxes, spacing, origin and every density value; returns a list of problems."""
    from paraview import simple
    from vtkmodules.util.numpy_support import vtk_to_numpy
    problems = []
    vtk_type = 10 if np.dtype(dtype) == np.float32 else 11      # VTK_FLOAT, VTK_DOUBLE
    r = simple.XMLUniformGridAMRReader(FileName=[path])
    r.CellArrayStatus = ["density"]
    r.DefaultNumberOfLevels = 0          # 0: no limit (the default, 1, reads level 0 only)
    r.UpdatePipeline()
    # servermanager.Fetch cannot move AMR ("vtkUniformGridAMR cannot be added as block"); in the
    # built-in session the reader's own output is at hand:
    amr = r.GetClientSideObject().GetOutputDataObject(0)
    if amr.GetNumberOfLevels() != h.nlevels:
        problems.append(f"levels {amr.GetNumberOfLevels()} != {h.nlevels}")
        return problems
    bounds = [0.0] * 6
    amr.GetBounds(bounds)
    want = [v for d in range(3) for v in (h.origin[d], h.origin[d] + h.level0_dims[d] * h.spacing0[d])]
    if not np.allclose(bounds, want, rtol=0, atol=1e-12):
        problems.append(f"bounds {bounds} != {want}")
    masks = covered_masks(h)
    for level, blocks in enumerate(h.blocks):
        if amr.GetNumberOfDataSets(level) != len(blocks):
            problems.append(f"level {level}: {amr.GetNumberOfDataSets(level)} blocks != {len(blocks)}")
            continue
        sp = [0.0] * 3
        amr.GetSpacing(level, sp)
        # the .vthb stores spacing (and origin) with 6 significant digits (vtkXMLDataElement's
        # default precision): 1/512 comes back as 0.00195312; the .vti blocks keep full precision
        if not np.allclose(sp, h.spacing(level), rtol=1e-5, atol=0):
            problems.append(f"level {level}: spacing {sp} != {h.spacing(level)}")
        elif tuple(sp) != h.spacing(level) and notes is not None:
            notes.append(f"level {level}: metadata spacing {sp[0]!r} (6 digits) instead of "
                         f"{h.spacing(level)[0]!r}; the blocks' own spacing is exact")
        for idx, b in enumerate(blocks):
            lo, hi = [0] * 3, [0] * 3
            amr.GetAMRBox(level, idx).GetDimensions(lo, hi)
            if tuple(lo) != b.lo or tuple(hi[d] - lo[d] + 1 for d in range(3)) != b.dims:
                problems.append(f"level {level} block {idx}: box {lo} {hi} != {b.lo} {b.dims}")
            g = amr.GetDataSet(level, idx)
            if g is None:
                problems.append(f"level {level} block {idx}: missing")
                continue
            org = [h.origin[d] + b.lo[d] * h.spacing(level)[d] for d in range(3)]
            if not np.allclose(g.GetOrigin(), org, rtol=0, atol=1e-12) or \
                    tuple(g.GetSpacing()) != h.spacing(level) or \
                    tuple(g.GetDimensions()) != tuple(n + 1 for n in b.dims):
                problems.append(f"level {level} block {idx}: grid origin/dims {g.GetOrigin()} {g.GetDimensions()}")
            a = g.GetCellData().GetArray("density")
            v = vtk_to_numpy(a)
            if a.GetDataType() != vtk_type or not np.array_equal(v, b.data.astype(dtype).ravel()):
                problems.append(f"level {level} block {idx}: density differs (type {a.GetDataTypeAsString()})")
            ghost = g.GetCellData().GetArray("vtkGhostType")
            want = np.where(masks[level][idx].ravel(), 8, 0)
            if ghost is None or not np.array_equal(vtk_to_numpy(ghost), want):
                problems.append(f"level {level} block {idx}: vtkGhostType is not 8 on exactly the covered cells")
    return problems


def hierarchy_from_vtk(amr, array="density"):
    """An amr_common.Hierarchy from a vtkOverlappingAMR (all blocks must be loaded): boxes from
    the AMR metadata, level-0 spacing and origin from the level-0 grids (the metadata of a .vthb
    has only 6 significant digits), data from the cell array. Check it with check_rules()."""
    from vtkmodules.util.numpy_support import vtk_to_numpy
    nl = amr.GetNumberOfLevels()
    g0 = amr.GetDataSet(0, 0)
    blocks = []
    dims0 = [0, 0, 0]
    for level in range(nl):
        lb = []
        for i in range(amr.GetNumberOfDataSets(level)):
            lo, hi = [0] * 3, [0] * 3
            amr.GetAMRBox(level, i).GetDimensions(lo, hi)
            dims = [hi[d] - lo[d] + 1 for d in range(3)]
            g = amr.GetDataSet(level, i)
            data = None
            if g is not None and g.GetCellData().GetArray(array) is not None:
                data = vtk_to_numpy(g.GetCellData().GetArray(array)).reshape(dims[2], dims[1], dims[0])
            lb.append(Block(level, lo, dims, data))
            if level == 0:
                dims0 = [max(dims0[d], hi[d] + 1) for d in range(3)]
        blocks.append(lb)
    sp0 = g0.GetSpacing()
    lo00 = blocks[0][0].lo
    origin = [g0.GetOrigin()[d] - lo00[d] * sp0[d] for d in range(3)]
    h = Hierarchy(dims0, origin, sp0, 2)
    h.blocks = blocks
    h.ratios = [amr.GetRefinementRatio(l) for l in range(nl)]
    return h


def write_raw(h, path, dtype=np.float64):
    """All blocks' densities, block after block in describe() order, x fastest, little endian:
    the layout phew_amr expects on a single rank."""
    with open(path, "wb") as f:
        for b in h.all_blocks():
            f.write(np.ascontiguousarray(b.data, dtype=np.dtype(dtype).newbyteorder("<")).tobytes())
