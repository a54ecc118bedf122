"""Shared part of the AMR tests of the PHEW plugin (not a test itself): AMR hierarchies built
here (vtkOverlappingAMR written as .vthb), the cases the tests run, how the labels of every
rank's blocks are collected, and independent checks of an answer.

Conventions checked (vtkPHEWAMRInput.h): the domain is the bounding box of the level-0 AMR
boxes; a cell's PHEW index on level l is its AMR box index minus lo0 * 2^l (lo0: the domain's
first level-0 cell); its global id is offset(l) + ix + nx_l*(iy + ny_l*iz), offset(l) the cells
of all coarser levels as if each covered the domain; its centre is
global origin + (box index + 1/2) * spacing_l.
"""
import glob
import os

import numpy as np
from vtkmodules.util import numpy_support
from vtkmodules.vtkCommonDataModel import vtkAMRBox, vtkOverlappingAMR, vtkUniformGrid
from vtkmodules.vtkIOXML import vtkXMLUniformGridAMRReader, vtkXMLUniformGridAMRWriter

import phew_plugin_testing as pt

LABELS = pt.LABEL_ARRAYS


class Layout:
    """An AMR hierarchy: level-0 cells across the domain, the global origin and level-0 spacing
    of the file, the shift lo0 of the domain's first cell in AMR box indices, and per level a
    list of blocks (lo, dims) in PHEW indices (0 at the domain corner)."""

    def __init__(self, level0_dims, origin, spacing, lo0, levels):
        self.level0_dims = tuple(level0_dims)
        self.origin = tuple(float(o) for o in origin)
        self.spacing = tuple(float(s) for s in spacing)
        self.lo0 = tuple(lo0)
        self.levels = levels

    def blocks(self):
        """(level, index, lo, dims) in list order."""
        for level, blocks in enumerate(self.levels):
            for index, (lo, dims) in enumerate(blocks):
                yield level, index, tuple(lo), tuple(dims)

    def level_dims(self, level):
        return tuple(n << level for n in self.level0_dims)

    def offset(self, level):
        return sum(int(np.prod(self.level_dims(m))) for m in range(level))

    def cell_spacing(self, level):
        return tuple(s / 2 ** level for s in self.spacing)

    def corner(self):
        """Corner of the domain: the global origin plus lo0 level-0 cells."""
        return tuple(self.origin[d] + self.lo0[d] * self.spacing[d] for d in range(3))

    def centres(self, level, lo, dims):
        """Cell centres (x, y, z arrays of shape (nz, ny, nx)) of a block."""
        h = self.cell_spacing(level)
        axes = [self.origin[d] + (self.lo0[d] * 2 ** level + lo[d] + np.arange(dims[d]) + 0.5) * h[d]
                for d in range(3)]
        z, y, x = np.meshgrid(axes[2], axes[1], axes[0], indexing="ij")
        return x, y, z

    def global_ids(self, level, lo, dims):
        nx, ny, _ = self.level_dims(level)
        k, j, i = np.meshgrid(np.arange(dims[2]) + lo[2], np.arange(dims[1]) + lo[1], np.arange(dims[0]) + lo[0],
                              indexing="ij")
        return (self.offset(level) + i + nx * (j + ny * k)).astype(np.int64)

    def covered(self, level, lo, dims):
        """Mask (nz, ny, nx) of the block's cells covered by a block of the next level."""
        mask = np.zeros((dims[2], dims[1], dims[0]), dtype=bool)
        if level + 1 < len(self.levels):
            for flo, fdims in self.levels[level + 1]:
                a = [max(lo[d], flo[d] // 2) for d in range(3)]
                b = [min(lo[d] + dims[d], (flo[d] + fdims[d]) // 2) for d in range(3)]
                if all(a[d] < b[d] for d in range(3)):
                    mask[a[2] - lo[2]:b[2] - lo[2], a[1] - lo[1]:b[1] - lo[1], a[0] - lo[0]:b[0] - lo[0]] = True
        return mask


def blob_density(blobs, background=0.1):
    """rho(x, y, z): a background plus Gaussian blobs (cx, cy, cz, sigma, amplitude), in
    physical coordinates."""
    def rho(x, y, z):
        out = np.full(x.shape, background)
        for cx, cy, cz, sigma, amplitude in blobs:
            out += amplitude * np.exp(-((x - cx) ** 2 + (y - cy) ** 2 + (z - cz) ** 2) / (2.0 * sigma ** 2))
        return out
    return rho


def build_amr(layout, arrays, ratio=2, point_arrays=None):
    """vtkOverlappingAMR of `layout`; arrays: name -> f(level, index, x, y, z) giving the cell
    values of a block, shape (nz, ny, nx) or (nz, ny, nx, ncomp); point_arrays likewise, per
    point (x, y, z of the points)."""
    amr = vtkOverlappingAMR()
    amr.Initialize(len(layout.levels), [len(b) for b in layout.levels])
    amr.SetOrigin(layout.origin)
    amr.SetGridDescription(8)  # VTK_XYZ_GRID
    for level in range(len(layout.levels)):
        h = tuple(s / ratio ** level for s in layout.spacing)
        amr.SetSpacing(level, h)
        amr.SetRefinementRatio(level, ratio)
    for level, index, lo, dims in layout.blocks():
        h = tuple(s / ratio ** level for s in layout.spacing)
        box_lo = [layout.lo0[d] * ratio ** level + lo[d] for d in range(3)]
        grid = vtkUniformGrid()
        grid.SetDimensions(dims[0] + 1, dims[1] + 1, dims[2] + 1)
        grid.SetSpacing(*h)
        grid.SetOrigin(*[layout.origin[d] + box_lo[d] * h[d] for d in range(3)])
        x, y, z = layout.centres(level, lo, dims) if ratio == 2 else _centres_ratio(layout, level, box_lo, dims, h)
        for name, f in arrays.items():
            _add(grid.GetCellData(), name, f(level, index, x, y, z))
        for name, f in (point_arrays or {}).items():
            axes = [layout.origin[d] + (box_lo[d] + np.arange(dims[d] + 1)) * h[d] for d in range(3)]
            pz, py, px = np.meshgrid(axes[2], axes[1], axes[0], indexing="ij")
            _add(grid.GetPointData(), name, f(level, index, px, py, pz))
        amr.SetAMRBox(level, index, vtkAMRBox(box_lo, [box_lo[d] + dims[d] - 1 for d in range(3)]))
        amr.SetDataSet(level, index, grid)
    return amr


def _centres_ratio(layout, level, box_lo, dims, h):
    axes = [layout.origin[d] + (box_lo[d] + np.arange(dims[d]) + 0.5) * h[d] for d in range(3)]
    z, y, x = np.meshgrid(axes[2], axes[1], axes[0], indexing="ij")
    return x, y, z


def _add(attributes, name, values):
    values = np.ascontiguousarray(values)
    flat = values.reshape(-1, values.shape[3]) if values.ndim == 4 else values.ravel()
    array = numpy_support.numpy_to_vtk(flat, deep=True)
    array.SetName(name)
    attributes.AddArray(array)


def write_vthb(path, amr):
    writer = vtkXMLUniformGridAMRWriter()
    writer.SetFileName(path)
    writer.SetInputData(amr)
    writer.SetDataModeToBinary()  # Debian's ParaView cannot read the appended mode
    if writer.Write() != 1:
        raise RuntimeError("cannot write " + path)
    return path


def read_vthb(path):
    """The whole hierarchy, every level, on this process."""
    reader = vtkXMLUniformGridAMRReader()
    reader.SetFileName(path)
    reader.SetMaximumLevelsToReadByDefault(0)
    reader.Update()
    return reader.GetOutput()


# ---------------------------------------------------------------------------------------------
# The hierarchies of the tests


def nested_layout():
    """Three levels over 16 x 12 x 10 level-0 cells, anisotropic spacing, a global origin that
    is not the domain corner (lo0 = (3, 1, 2)); level-1 blocks straddle level-0 block faces."""
    return Layout(
        level0_dims=(16, 12, 10), origin=(-1.0, 0.5, 2.0), spacing=(0.5, 0.4, 0.3), lo0=(3, 1, 2),
        levels=[
            [((0, 0, 0), (6, 12, 10)), ((6, 0, 0), (10, 6, 10)), ((6, 6, 0), (10, 6, 10))],
            [((4, 4, 6), (12, 10, 10)), ((18, 12, 4), (10, 8, 12))],
            [((12, 10, 16), (12, 10, 10)), ((42, 30, 14), (8, 8, 8))],
        ])


def nested_blobs(layout):
    """Four blobs, in level-0 cell units from the domain corner: A inside the first level-2
    block, B inside the second, C on level 0 only, D near the edge of the first level-1 block."""
    corner = layout.corner()
    h = layout.spacing
    spots = [(4.3, 3.7, 5.2, 1.0, 10.0), (11.6, 8.4, 4.6, 1.2, 6.0), (12.5, 2.5, 7.0, 1.0, 5.0),
             (7.6, 6.3, 5.0, 0.8, 5.0)]
    # sigma in units of the x spacing; anisotropic cells, isotropic blobs
    return [(corner[0] + cx * h[0], corner[1] + cy * h[1], corner[2] + cz * h[2], s * h[0], a)
            for cx, cy, cz, s, a in spots]


def image_layout():
    """One level of 24 x 20 x 16 cells in four blocks, lo0 = (5, 0, 2)."""
    return Layout(
        level0_dims=(24, 20, 16), origin=(0.5, -1.0, 0.0), spacing=(1.0, 1.0, 1.0), lo0=(5, 0, 2),
        levels=[[((0, 0, 0), (10, 8, 16)), ((10, 0, 0), (14, 8, 16)), ((0, 8, 0), (10, 12, 16)),
                 ((10, 8, 0), (14, 12, 16))]])


def image_field():
    """The density of image_layout as a cube (nz, ny, nx), as the image tests make them."""
    dims = (24, 20, 16)
    return pt.blob_field(dims, pt.standard_blobs(dims), noise=0.01, seed=7)


def image_amr_arrays(layout, cube):
    def density(level, index, x, y, z):
        lo, dims = layout.levels[level][index]
        return cube[lo[2]:lo[2] + dims[2], lo[1]:lo[1] + dims[1], lo[0]:lo[0] + dims[0]]
    return {"density": density}


def nested_arrays(layout):
    rho = blob_density(nested_blobs(layout))
    return {
        "density": lambda l, i, x, y, z: rho(x, y, z),
        "density32": lambda l, i, x, y, z: rho(x, y, z).astype(np.float32),
        # an integer density (converted to double by the filter)
        "density_u16": lambda l, i, x, y, z: np.round(rho(x, y, z) * 1000).astype(np.uint16),
        "velocity": lambda l, i, x, y, z: np.stack([x, y, z], axis=-1),
    }


# Cases: name -> (file, density array, filter properties, expected clumps or None). Files under
# datasets/ come from the source tree (the others are written by write_case_files).
SAMPLE = "datasets/amr_sample.vthb"  # datasets/README.md: 4 levels, 179 blocks, periodic field
CASES = {
    "nested": ("nested.vthb", "density", dict(DensityThreshold=0.5, SaddleMerging=1, SaddleThreshold=1.0), 4),
    "nested_f32_periodic": ("nested.vthb", "density32", dict(DensityThreshold=0.5, Periodic=1), 4),
    "nested_u16": ("nested.vthb", "density_u16", dict(DensityThreshold=500.0), 4),
    "image_like": ("image_like.vthb", "density", dict(DensityThreshold=0.3, SaddleMerging=1, SaddleThreshold=0.8),
                   None),
    "image_like_periodic": ("image_like.vthb", "density", dict(DensityThreshold=0.3, Periodic=1), None),
    # D, A1, A2, C1, B1, B2 and E (A2b and C2 are below relevance 2); saddle merging makes 5 haloes
    "amr_sample": (SAMPLE, "density", dict(DensityThreshold=3.0, Periodic=1, SaddleMerging=1, SaddleThreshold=20.0),
                   7),
}


def case_path(filename, answers_dir, source_dir):
    if filename.startswith("datasets/"):
        return os.path.join(source_dir, filename)
    return os.path.join(answers_dir, filename)


def sample_layout(source_dir):
    """The layout of datasets/amr_sample.vthb, from its block list (amr_sample.blocks.txt)."""
    path = os.path.join(source_dir, SAMPLE.replace(".vthb", ".blocks.txt"))
    header, levels = {}, []
    with open(path) as f:
        for line in f:
            words = line.split()
            if line.startswith("#") and len(words) >= 5 and words[1] in ("level0_dims", "origin", "spacing0"):
                header[words[1]] = words[2:5]
            elif words and words[0] == "block":
                level = int(words[1])
                while len(levels) <= level:
                    levels.append([])
                values = [int(v) for v in words[2:8]]
                levels[level].append((tuple(values[:3]), tuple(values[3:])))
    return Layout(level0_dims=[int(v) for v in header["level0_dims"]], origin=[float(v) for v in header["origin"]],
                  spacing=[float(v) for v in header["spacing0"]], lo0=(0, 0, 0), levels=levels)


def write_case_files(directory):
    """The .vthb files of CASES (and the image of image_like as .vti)."""
    layout = nested_layout()
    write_vthb(os.path.join(directory, "nested.vthb"), build_amr(layout, nested_arrays(layout)))
    layout = image_layout()
    cube = image_field()
    write_vthb(os.path.join(directory, "image_like.vthb"), build_amr(layout, image_amr_arrays(layout, cube)))
    corner = layout.corner()
    pt.write_vti(os.path.join(directory, "image_like.vti"), pt.make_image(cube, "CELLS", origin=corner))


def layout_of(filename, source_dir):
    if filename == SAMPLE:
        return sample_layout(source_dir)
    return {"nested.vthb": nested_layout, "image_like.vthb": image_layout}[filename]()


# ---------------------------------------------------------------------------------------------
# Collecting the labels of every rank's blocks


# A Python Programmable Filter after the finder: every rank writes the label arrays of the blocks
# it holds to DIR/TAG-rRANK.npz (keys "level_index_Name"), and passes its input on. (On rank 0
# the script runs in the test script's own namespace, with numpy_interface's names (max, sum,
# save...) imported into it: everything happens inside a function, and the test scripts avoid
# those names.)
COLLECT_SCRIPT = """
def _phew_collect(algorithm):
    import numpy
    from vtkmodules.util import numpy_support
    from vtkmodules.vtkParallelCore import vtkMultiProcessController
    controller = vtkMultiProcessController.GetGlobalController()
    rank = controller.GetLocalProcessId() if controller else 0
    data = algorithm.GetInput()
    algorithm.GetOutput().ShallowCopy(data)
    found = dict()
    for level in range(data.GetNumberOfLevels()):
        for index in range(data.GetNumberOfDataSets(level)):
            block = data.GetDataSet(level, index)
            if block is None:
                continue
            found['%d_%d_held' % (level, index)] = numpy.zeros(1)
            for name in {names!r}:
                array = block.GetCellData().GetArray(name)
                if array is not None:
                    found['%d_%d_%s' % (level, index, name)] = numpy_support.vtk_to_numpy(array).copy()
    numpy.savez({prefix!r} + '-r%d.npz' % rank, **found)
_phew_collect(self)
"""


def collect_filter(ProgrammableFilter, finder, directory, tag):
    prefix = os.path.join(directory, tag)
    for stale in glob.glob(prefix + "-r*.npz"):
        os.remove(stale)
    return ProgrammableFilter(Input=finder, OutputDataSetType="Same as Input",
                              Script=COLLECT_SCRIPT.format(names=list(LABELS), prefix=prefix))


def read_collected(directory, tag, n_ranks):
    """{(level, index): {name: [array from each holding rank]}} and the holders per block."""
    prefix = os.path.join(directory, tag)
    labels, holders = {}, {}
    for rank in range(n_ranks):
        path = "%s-r%d.npz" % (prefix, rank)
        if not os.path.exists(path):
            continue
        with np.load(path) as data:
            for key in data.files:
                level, index, name = key.split("_", 2)
                block = (int(level), int(index))
                if name == "held":
                    holders.setdefault(block, []).append(rank)
                else:
                    labels.setdefault(block, {}).setdefault(name, []).append(data[key])
    return labels, holders


def compare_with_answers(pv, check, label, reference, source, density, properties, work_dir, answers_dir, n_ranks):
    """Runs the finder (pv: the caller's paraview.simple namespace, with the plugin loaded) on
    source and checks every label copy every rank holds, and the three tables, byte for byte
    against the one-process answers of test_plugin_amr_reference.py."""
    from paraview import servermanager
    finder = pv["PHEWClumpFinder"](Input=source, Density=["CELLS", density])
    for key, value in properties.items():
        setattr(finder, key, value)
    errors = pt.ErrorCatcher(finder)
    collect = collect_filter(pv["ProgrammableFilter"], finder, work_dir, label)
    collect.UpdatePipeline()
    collect.GetDataInformation()  # gathered from every rank: they have all written their labels
    if not check.check(not errors.messages, "%s: the filter reported: %s" % (label, errors.text())):
        pv["Delete"](collect)
        pv["Delete"](finder)
        return
    labels, holders = read_collected(work_dir, label, n_ranks)
    with np.load(os.path.join(answers_dir, reference + "-labels.npz")) as data:
        expected = {key: data[key] for key in data.files}
    blocks = sorted({tuple(int(v) for v in key.split("_")[:2]) for key in expected})
    copies = 0
    for block in blocks:
        if not check.check(block in labels, "%s: no rank holds labels of block %d/%d" % ((label,) + block)):
            continue
        copies += len(holders.get(block, [])) - 1
        for name in pt.LABEL_ARRAYS:
            want = expected["%d_%d_%s" % (block + (name,))]
            got = labels[block].get(name, [])
            check.check(len(got) == len(holders.get(block, [])), "%s: block %d/%d lacks %s on a rank holding it"
                        % ((label,) + block + (name,)))
            for copy in got:
                same = copy.dtype == want.dtype and copy.shape == want.shape and copy.tobytes() == want.tobytes()
                check.check(same, "%s: block %d/%d: %s differs from the one-process run in %s cells"
                            % ((label,) + block + (name, int(np.count_nonzero(copy != want)) if copy.shape == want.shape
                                                    else "all")))
    print("%s: %d blocks, %d extra copies, holders %s" % (label, len(blocks), copies,
                                                           [holders.get(b) for b in blocks]), flush=True)
    for port, suffix in pt.TABLE_PORTS:
        written = os.path.join(work_dir, "%s-%s.csv" % (label, suffix))
        pt.write_table_csv(servermanager.Fetch(finder, idx=port), written)
        with open(written) as a, open(os.path.join(answers_dir, "%s-%s.csv" % (reference, suffix))) as b:
            mine, theirs = a.read(), b.read()
        check.check(mine == theirs, "%s: the %s table differs from the one-process run's" % (label, suffix))
        rows = pv["OutputPort"](finder, port).GetDataInformation().GetNumberOfRows()
        check.check(rows == theirs.count("\n") - 1, "%s: the ranks hold %d %s rows together, expected %d"
                    % (label, rows, suffix, theirs.count("\n") - 1))
    pv["Delete"](collect)
    pv["Delete"](finder)


# ---------------------------------------------------------------------------------------------
# Sources that spread the blocks over the ranks in other ways than the reader


# Every rank reads the whole file and keeps the blocks of a pattern: block k (list order) on
# rank (2k + 1) mod n, and every third block also on rank (k + 2) mod n (held twice).
# (The output is built anew with the file's metadata: in VTK 9.2, SetDataSet on a block that is
# already set adds a second entry instead of replacing it, and SetDataSet(None) does nothing.)
SCATTER_SCRIPT = """
def _phew_scatter(algorithm):
    from vtkmodules.vtkIOXML import vtkXMLUniformGridAMRReader
    from vtkmodules.vtkParallelCore import vtkMultiProcessController
    controller = vtkMultiProcessController.GetGlobalController()
    rank = controller.GetLocalProcessId() if controller else 0
    n = controller.GetNumberOfProcesses() if controller else 1
    reader = vtkXMLUniformGridAMRReader()
    reader.SetFileName({path!r})
    reader.SetMaximumLevelsToReadByDefault(0)
    reader.Update()
    whole = reader.GetOutput()
    output = algorithm.GetOutput()
    output.Initialize()
    output.SetAMRInfo(whole.GetAMRInfo())
    k = 0
    for level in range(whole.GetNumberOfLevels()):
        for index in range(whole.GetNumberOfDataSets(level)):
            if rank == (2 * k + 1) % n or (k % 3 == 0 and rank == (k + 2) % n):
                output.SetDataSet(level, index, whole.GetDataSet(level, index))
            k += 1
_phew_scatter(self)
"""


def independent_checks(check, label, layout, path, density_name, threshold, labels, tables, periodic=False):
    """Checks an answer against the hierarchy itself: every block labelled, covered cells and
    cells at or below the threshold -1, each clump's peak cell (found from its PeakId with the
    id convention above) has the clump's PeakDensity, PeakPatchId and ClumpId, sits at PeakX/Y/Z,
    and the clump's cell count and mass are those of its labelled cells."""
    amr = read_vthb(path)
    rho, ids, clump_ids, patch_ids, volumes = [], [], [], [], []
    for level, index, lo, dims in layout.blocks():
        block = labels.get((level, index))
        if not check.check(block is not None and all(n in block for n in LABELS),
                           "%s: block %d/%d has no labels" % (label, level, index)):
            return
        values = numpy_support.vtk_to_numpy(amr.GetDataSet(level, index).GetCellData().GetArray(density_name))
        values = values.astype(np.float64).reshape(dims[2], dims[1], dims[0])
        covered = layout.covered(level, lo, dims)
        got = {n: block[n][0].reshape(dims[2], dims[1], dims[0]) for n in LABELS}
        for n in LABELS:
            check.check(bool((got[n][covered] == -1).all()), "%s: covered cells of block %d/%d have %s != -1"
                        % (label, level, index, n))
            check.check(bool((got[n][(values <= threshold) & ~covered] == -1).all()),
                        "%s: cells at or below the threshold in block %d/%d have %s != -1" % (label, level, index, n))
        leaf = ~covered
        rho.append(values[leaf])
        ids.append(layout.global_ids(level, lo, dims)[leaf])
        clump_ids.append(got["ClumpId"][leaf])
        patch_ids.append(got["PeakPatchId"][leaf])
        volumes.append(np.full(int(leaf.sum()), float(np.prod(layout.cell_spacing(level)))))
    rho, ids, clump_ids = np.concatenate(rho), np.concatenate(ids), np.concatenate(clump_ids)
    patch_ids, volumes = np.concatenate(patch_ids), np.concatenate(volumes)
    check.check(len(np.unique(ids)) == len(ids), "%s: leaf ids are not unique" % label)
    clumps = pt.table_as_lists(tables["clumps"])
    for row, clump in enumerate(clumps.get("ClumpId", [])):
        peak = clumps["PeakId"][row]
        where = np.nonzero(ids == peak)[0]
        if not check.check(len(where) == 1, "%s: clump %d: peak id %d is not a leaf cell" % (label, clump, peak)):
            continue
        w = where[0]
        check.check(rho[w] == clumps["PeakDensity"][row], "%s: clump %d: PeakDensity %r, the peak cell has %r"
                    % (label, clump, clumps["PeakDensity"][row], rho[w]))
        check.check(patch_ids[w] == peak and clump_ids[w] == clump, "%s: clump %d: its peak cell has PeakPatchId %d "
                    "ClumpId %d" % (label, clump, patch_ids[w], clump_ids[w]))
        mine = clump_ids == clump
        check.check(bool(rho[mine].max() == rho[w]), "%s: clump %d: a cell denser than its peak" % (label, clump))
        check.check(int(mine.sum()) == clumps["NumberOfCells"][row], "%s: clump %d: %d cells labelled, NumberOfCells %d"
                    % (label, clump, int(mine.sum()), clumps["NumberOfCells"][row]))
        mass = float(np.sum(rho[mine] * volumes[mine]))
        check.check(abs(mass - clumps["Mass"][row]) <= 1e-9 * abs(mass), "%s: clump %d: mass %r, expected %r"
                    % (label, clump, clumps["Mass"][row], mass))
        position = _centre_of_id(layout, peak)
        got = (clumps["PeakX"][row], clumps["PeakY"][row], clumps["PeakZ"][row])
        check.check(all(abs(got[d] - position[d]) <= 1e-12 * (1 + abs(position[d])) for d in range(3)),
                    "%s: clump %d: peak position %s, the cell's centre is %s" % (label, clump, got, position))


def _centre_of_id(layout, gid):
    level = 0
    while level + 1 < len(layout.levels) and gid >= layout.offset(level + 1):
        level += 1
    local = gid - layout.offset(level)
    nx, ny, _ = layout.level_dims(level)
    i, j, k = local % nx, (local // nx) % ny, local // (nx * ny)
    corner, h = layout.corner(), layout.cell_spacing(level)
    return tuple(corner[d] + ((i, j, k)[d] + 0.5) * h[d] for d in range(3))
