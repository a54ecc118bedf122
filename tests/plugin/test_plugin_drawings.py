"""The drawn outputs of the PHEW Clump Finder against independent counts and rules, on
datasets/sample.vti with the defaults and on the particle sample:

- Clump Geometry (port 4): one quad per face between a clump cell and a cell of no clump or
  the edge of the grid, counted here per ClumpId from the Labels with numpy; each quad has
  unit-cell area and sits on such a face; particles: one vertex per clump particle.
- Dendrogram Plot (port 5): the rules of docs/dendrogram.md recomputed here from the
  Dendrogram table (leaf order, x, log top and bottom), against every node's vertical line and
  horizontal line.
- Markers (port 6): one peak per Clumps row at (PeakX, PeakY, PeakZ) with that row's values,
  one centre per Haloes row at its centre of mass; with the halo properties (SWIFT's snapshot,
  with velocities), every marker at its structure's CenterX/Y/Z (a halo's: its head clump's,
  the clump on the halo's PeakId) with GlyphRadius = R200c, and back at the peaks and centres
  of mass with the properties off.
"""
import os

import numpy as np
from paraview import servermanager as sm
from paraview.simple import Delete, LoadPlugin, ProgrammableSource, XMLImageDataReader
from vtkmodules.util import numpy_support

import phew_plugin_testing as testing

args = testing.parse_args()
LoadPlugin(args.plugin, ns=globals())  # defines PHEWClumpFinder
check = testing.Checker("phew_plugin_drawings").check


def arrays(attributes):
    return {attributes.GetArrayName(i): numpy_support.vtk_to_numpy(attributes.GetArray(i))
            for i in range(attributes.GetNumberOfArrays()) if attributes.GetArray(i) is not None}


def table(data):
    return {data.GetColumnName(i): numpy_support.vtk_to_numpy(data.GetColumn(i))
            for i in range(data.GetNumberOfColumns())}


reader = XMLImageDataReader(FileName=os.path.join(args.source_dir, "datasets", "sample.vti"))
finder = PHEWClumpFinder(Input=reader)  # noqa: F821 (from the plugin)
finder.Density = ["CELLS", "density"]
finder.UpdatePipeline()
labels = testing.fetch(finder, 0)
clumps = table(testing.fetch(finder, 1))
nodes = table(testing.fetch(finder, 2))
haloes = table(testing.fetch(finder, 3))

# ---- Clump Geometry on the image --------------------------------------------------------
dims = [d - 1 for d in labels.GetDimensions()]  # cells
spacing = np.array(labels.GetSpacing())
origin = np.array(labels.GetOrigin())
clump = numpy_support.vtk_to_numpy(labels.GetCellData().GetArray("ClumpId")).reshape(dims[::-1])  # z, y, x
# faces per clump: for each axis and side, a clump cell whose neighbour is no clump or outside
expected = np.zeros(int(clump.max()) + 1, dtype=np.int64)
for axis in range(3):
    padded = np.pad(clump, [(1, 1) if a == axis else (0, 0) for a in range(3)], constant_values=-1)
    inner = [slice(1, -1) if a == axis else slice(None) for a in range(3)]
    for shift in (-1, 1):
        neighbour = np.roll(padded, shift, axis=axis)[tuple(inner)]
        face = (clump >= 0) & (neighbour < 0)
        expected += np.bincount(clump[face], minlength=len(expected))
geometry = testing.fetch(finder, 4)
cell_data = arrays(geometry.GetCellData())
got = np.bincount(cell_data["ClumpId"].astype(np.int64), minlength=len(expected)) \
    if geometry.GetNumberOfCells() else np.zeros(0, np.int64)
check(geometry.GetNumberOfCells() == expected.sum() and np.array_equal(got, expected),
      "Clump Geometry: %d quads, per clump %s; numpy counts %d faces, per clump %s"
      % (geometry.GetNumberOfCells(), got.tolist(), expected.sum(), expected.tolist()))
check(len(expected) == len(clumps["ClumpId"]), "the Labels have %d clump ids, the Clumps table %d rows"
      % (len(expected), len(clumps["ClumpId"])))
# every quad is one face of one cell: unit-cell area, and its centre half a cell from the
# centre of a cell of its clump, along one axis
points = numpy_support.vtk_to_numpy(geometry.GetPoints().GetData()).astype(np.float64)
polys = numpy_support.vtk_to_numpy(geometry.GetPolys().GetConnectivityArray()).reshape(-1, 4)
corners = points[polys]
centre = corners.mean(axis=1)
extent = corners.max(axis=1) - corners.min(axis=1)
flat = np.isclose(extent, 0.0)
check(bool(np.all(flat.sum(axis=1) == 1)), "Clump Geometry: a quad is not flat along exactly one axis")
areas = np.where(flat, 1.0, extent).prod(axis=1)
face_area = np.array([spacing[1] * spacing[2], spacing[0] * spacing[2], spacing[0] * spacing[1]])
check(np.allclose(areas, face_area[np.argmax(flat, axis=1)]), "Clump Geometry: a quad is not one cell face")
normal_axis = np.argmax(flat, axis=1)
bad = 0
for sign in (-1.0, 1.0):
    step = np.zeros_like(centre)
    step[np.arange(len(centre)), normal_axis] = sign * 0.5 * spacing[normal_axis]
    index = np.floor((centre + step - origin) / spacing).astype(np.int64)
    inside = np.all((index >= 0) & (index < dims), axis=1)
    owner = np.full(len(centre), -1)
    owner[inside] = clump[index[inside, 2], index[inside, 1], index[inside, 0]]
    if sign < 0:
        first = owner
    else:
        # one side is a cell of the quad's clump, the other no clump
        ids = cell_data["ClumpId"].astype(np.int64)
        bad = int(np.sum(~(((first == ids) & (owner < 0)) | ((owner == ids) & (first < 0)))))
check(bad == 0, "Clump Geometry: %d quads do not separate a cell of their clump from a cell of none" % bad)

# ---- Dendrogram Plot, Even: the layout rules, recomputed ---------------------------------
finder.DendrogramLayout = "Even"
finder.UpdatePipeline()
node_id = nodes["NodeId"].astype(np.int64)
parent = nodes["ParentId"].astype(np.int64)
peak = nodes["PeakDensity"].astype(np.float64)
saddle = nodes["SaddleDensity"].astype(np.float64)
row_of = {int(n): i for i, n in enumerate(node_id)}
children = {int(n): [] for n in node_id}
roots = []
for i, p in enumerate(parent):
    (children[int(p)] if p >= 0 else roots).append(i)


def by_peak(rows):
    return sorted(rows, key=lambda i: (-peak[i], node_id[i]))


x = np.zeros(len(node_id))
top = np.zeros(len(node_id))
leaf_order = []


def place(i):
    kids = by_peak(children[int(node_id[i])])
    if not kids:
        x[i] = len(leaf_order)
        leaf_order.append(i)
        top[i] = np.log10(peak[i])
        return
    for k in kids:
        place(k)
    x[i] = 0.5 * (min(x[k] for k in kids) + max(x[k] for k in kids))
    top[i] = np.log10(max(saddle[k] for k in kids))


for r in by_peak(roots):
    place(r)
bottom = np.log10(saddle)
plot = testing.fetch(finder, 5)
spacing_x = plot.GetFieldData().GetArray("LeafSpacing").GetValue(0)
pts = numpy_support.vtk_to_numpy(plot.GetPoints().GetData()).astype(np.float64)
lines = numpy_support.vtk_to_numpy(plot.GetLines().GetConnectivityArray()).reshape(-1, 2)
line_node = numpy_support.vtk_to_numpy(plot.GetCellData().GetArray("NodeId")).astype(np.int64)
line_leaf = numpy_support.vtk_to_numpy(plot.GetCellData().GetArray("LeafClumpId")).astype(np.int64)
check(len(lines) == 2 * len(node_id) - len(roots),
      "Dendrogram Plot: %d lines for %d nodes and %d roots" % (len(lines), len(node_id), len(roots)))
wrong = []
for c, (a, b) in enumerate(lines):
    i = row_of[int(line_node[c])]
    (xa, ya), (xb, yb) = pts[a, :2], pts[b, :2]
    if np.isclose(xa, xb):  # the node's vertical line
        ok = np.isclose(xa, x[i] * spacing_x) and np.allclose(sorted([ya, yb]), sorted([bottom[i], top[i]]))
    else:  # its horizontal line, at its bottom, to its parent's x
        p = row_of[int(parent[i])]
        ok = np.allclose([ya, yb], bottom[i]) and \
            np.allclose(sorted([xa, xb]), sorted([x[i] * spacing_x, x[p] * spacing_x]))
    is_leaf = not children[int(node_id[i])]
    ok = ok and line_leaf[c] == (nodes["ClumpId"][i] if is_leaf else -1)
    if not ok:
        wrong.append(int(line_node[c]))
check(not wrong, "Dendrogram Plot: the lines of nodes %s break the layout rules" % wrong[:10])
check(len(leaf_order) == len(clumps["ClumpId"]), "%d leaves for %d clumps" % (len(leaf_order), len(clumps["ClumpId"])))

# ---- Dendrogram Plot, By Mass: the rules of phew_layout_dendrogram_by_mass, recomputed -----
mass = nodes["Mass"].astype(np.float64)
STROKES = {"0": 6, "1": 2, "2": 5, "3": 5, "4": 4, "5": 5, "6": 6, "7": 3, "8": 7, "9": 6}


def by_mass(rows):
    return sorted(rows, key=lambda i: (-mass[i], -peak[i], node_id[i]))


def mass_layout(cut):
    """x (NaN: not drawn), top and rank of every node, by the rules in phew.h."""
    mx, mtop, rank = np.full(len(node_id), np.nan), np.log10(peak), np.full(len(node_id), -1)

    def place(i, start, drawn):
        drawn = drawn and mass[i] >= cut
        low = start
        cursor, kids = start, []
        for k in by_mass(children[int(node_id[i])]):
            cursor = place(k, cursor, drawn) if drawn else place(k, cursor, False)
            if drawn and not np.isnan(mx[k]):
                kids.append(k)
        if drawn:
            if kids:
                mx[i] = 0.5 * (min(mx[k] for k in kids) + max(mx[k] for k in kids))
                mtop[i] = np.log10(max(saddle[k] for k in kids))
            else:
                mx[i] = low + 0.5 * mass[i]
            return start + mass[i]
        return start

    start = 0.0
    for r, i in enumerate(by_mass(roots)):
        rank[i] = r
        start = place(i, start, True)
    return mx, mtop, rank


for cut_property, cut in ((0.0, 0.0), (-1.0, 1e-3 * mass[roots].sum()), (float(np.median(mass)), float(np.median(mass)))):
    finder.DendrogramLayout = "By Mass"
    finder.DendrogramMassCut = cut_property
    finder.UpdatePipeline()
    mx, mtop, rank = mass_layout(cut)
    plot = testing.fetch(finder, 5)
    scale = plot.GetFieldData().GetArray("MassScale").GetValue(0)
    used_cut = plot.GetFieldData().GetArray("DendrogramMassCut").GetValue(0)
    pts = numpy_support.vtk_to_numpy(plot.GetPoints().GetData()).astype(np.float64)
    lines = numpy_support.vtk_to_numpy(plot.GetLines().GetConnectivityArray()).reshape(-1, 2)
    cells = arrays(plot.GetCellData())
    drawn = ~np.isnan(mx)
    wrong, strokes = [], {}
    for c, (a, b) in enumerate(lines):
        i = row_of[int(cells["NodeId"][c])]
        (xa, ya), (xb, yb) = pts[a, :2], pts[b, :2]
        if min(ya, yb) > np.log10(peak[i]):  # a stroke of the node's rank, above its peak
            strokes[i] = strokes.get(i, 0) + 1
            continue
        if np.isclose(xa, xb) and not np.isclose(ya, yb):
            ok = drawn[i] and np.isclose(xa, mx[i] * scale) and np.allclose(sorted([ya, yb]), sorted([bottom[i], mtop[i]]))
        else:
            p = row_of[int(parent[i])] if parent[i] >= 0 else None
            ok = p is not None and drawn[i] and np.allclose([ya, yb], bottom[i]) and \
                np.allclose(sorted([xa, xb]), sorted([mx[i] * scale, mx[p] * scale]))
        ok = ok and cells["HaloRank"][c] == rank[i]
        if not ok:
            wrong.append(int(node_id[i]))
    want_strokes = {i: sum(STROKES[d] for d in str(rank[i] + 1)) for i in np.flatnonzero(drawn & (rank >= 0) & (rank < 10))}
    n_drawn_roots = int(np.count_nonzero(drawn & (parent < 0)))
    check(not wrong and strokes == want_strokes and np.isclose(used_cut, cut, rtol=1e-12, atol=0) and
          len(lines) == 2 * int(drawn.sum()) - n_drawn_roots + sum(want_strokes.values()),
          "Dendrogram Plot by mass, cut %g: %d lines; nodes breaking the rules %s; label strokes %s, want %s"
          % (cut, len(lines), wrong[:10], strokes, want_strokes))
    every = int(drawn.sum()) == len(node_id)
    check(int(drawn.sum()) > 0 and (every if cut == 0.0 else True) and (not every if cut_property > 0 else True),
          "Dendrogram Plot by mass, cut %g: %d of %d nodes drawn" % (cut, int(drawn.sum()), len(node_id)))

# ---- Markers ------------------------------------------------------------------------------
markers = testing.fetch(finder, 6)
blocks = {markers.GetMetaData(b).Get(markers.NAME()): markers.GetBlock(b) for b in range(markers.GetNumberOfBlocks())}
for name, rows, where in (("Clump Peaks", clumps, ("PeakX", "PeakY", "PeakZ")),
                          ("Halo Centres", haloes, ("CenterOfMassX", "CenterOfMassY", "CenterOfMassZ"))):
    block = blocks.get(name)
    check(block is not None and block.GetNumberOfPoints() == len(rows[where[0]]),
          "Markers/%s: %s points for %d rows" % (name, block.GetNumberOfPoints() if block else None,
                                                  len(rows[where[0]])))
    if block is None:
        continue
    at = numpy_support.vtk_to_numpy(block.GetPoints().GetData()).astype(np.float64)
    check(np.allclose(at, np.array([rows[c] for c in where]).T, rtol=0, atol=1e-6),
          "Markers/%s: the points are not at %s" % (name, "/".join(where)))
    values = arrays(block.GetPointData())
    same = all(np.array_equal(values.get(c), rows[c]) for c in rows)
    check(same and block.GetNumberOfVerts() == len(at), "Markers/%s: the point data differ from the table" % name)

# ---- Clump Geometry on particles ----------------------------------------------------------
particles = ProgrammableSource(OutputDataSetType="vtkPolyData", Script="""
import numpy as np
from vtkmodules.util.numpy_support import numpy_to_vtk
from vtkmodules.vtkCommonCore import vtkPoints
pos = np.fromfile(r'%s', dtype='<f4').reshape(-1, 3)
points = vtkPoints()
points.SetData(numpy_to_vtk(pos, deep=1))
self.GetPolyDataOutput().SetPoints(points)
""" % os.path.join(args.source_dir, "datasets", "particles_sample-pos.raw"))
on_particles = PHEWClumpFinder(Input=particles)  # noqa: F821
on_particles.UpdatePipeline()
particle_labels = arrays(testing.fetch(on_particles, 0).GetPointData())["ClumpId"].astype(np.int64)
particle_clumps = table(testing.fetch(on_particles, 1))
drawn = testing.fetch(on_particles, 4)
drawn_ids = arrays(drawn.GetPointData())["ClumpId"].astype(np.int64)
members = np.bincount(particle_labels[particle_labels >= 0], minlength=len(particle_clumps["ClumpId"]))
check(drawn.GetNumberOfPoints() == drawn.GetNumberOfVerts() == int((particle_labels >= 0).sum()) > 0,
      "Clump Geometry on particles: %d points, %d vertices for %d clump particles"
      % (drawn.GetNumberOfPoints(), drawn.GetNumberOfVerts(), int((particle_labels >= 0).sum())))
check(np.array_equal(np.bincount(drawn_ids, minlength=len(members)), members) and
      np.array_equal(members, particle_clumps["NumberOfParticles"]),
      "Clump Geometry on particles: the drawn particles per clump differ from the labels or NumberOfParticles")

# ---- Markers with the halo properties (issue 28) -----------------------------------------
def marker_blocks(proxy):
    data = testing.fetch(proxy, 6)
    return {data.GetMetaData(b).Get(data.NAME()): data.GetBlock(b) for b in range(data.GetNumberOfBlocks())}


def positions(block):
    return numpy_support.vtk_to_numpy(block.GetPoints().GetData()).astype(np.float64)


def columns(rows, names):
    return np.array([rows[c] for c in names], dtype=np.float64).T


PEAKS, CENTRES_OF_MASS = ("PeakX", "PeakY", "PeakZ"), ("CenterOfMassX", "CenterOfMassY", "CenterOfMassZ")


swift = GadgetHDF5SnapshotReader(  # noqa: F821 (from the plugin)
    FileName=[os.path.join(args.source_dir, "datasets", "swift_dm16", "snap_0003.hdf5")], Units=1)
# a low threshold: 17 clumps in 12 haloes, some with subclumps
physics = PHEWClumpFinder(Input=swift, Mass=["POINTS", "Masses"], Velocity=["POINTS", "Velocities"],  # noqa: F821
                          Id=["POINTS", "ParticleIDs"], DensityThreshold=5, RelevanceThreshold=1.1,
                          SaddleMerging=1, SaddleThreshold=5)
physics.UpdatePipeline()
p_clumps = table(testing.fetch(physics, 1))
p_haloes = table(testing.fetch(physics, 3))
blocks = marker_blocks(physics)
peaks, centres = arrays(blocks["Clump Peaks"].GetPointData()), arrays(blocks["Halo Centres"].GetPointData())
centre = columns(p_clumps, ("CenterX", "CenterY", "CenterZ"))
known = np.isfinite(centre).all(axis=1)  # a structure with no bound particle keeps its peak
expected = np.where(known[:, None], centre, columns(p_clumps, PEAKS))
radius = np.where(np.isfinite(p_clumps["R200c"]), p_clumps["R200c"], 0.0)
check((p_clumps["ParentId"] >= 0).any() and known.any()
      and not np.array_equal(centre[known], columns(p_clumps, PEAKS)[known]),
      "halo properties: the case needs subclumps and centres away from the peaks")
check(np.array_equal(positions(blocks["Clump Peaks"]), expected),
      "Markers/Clump Peaks with the halo properties: not at CenterX/Y/Z")
check(np.array_equal(peaks.get("GlyphRadius"), radius) and np.array_equal(peaks.get("R200c"), p_clumps["R200c"]),
      "Markers/Clump Peaks: GlyphRadius is not R200c (0 where NaN)")
# a halo's structure is its head clump: the top-level clump of that halo on the halo's peak
head = np.array([int(np.flatnonzero(p_clumps["PeakId"] == peak)[0]) for peak in p_haloes["PeakId"]])
check(np.array_equal(p_clumps["HaloId"][head], p_haloes["HaloId"]) and (p_clumps["ParentId"][head] == -1).all(),
      "halo properties: a halo's peak is not its head clump's")
check(np.array_equal(positions(blocks["Halo Centres"]), expected[head]),
      "Markers/Halo Centres with the halo properties: not at the head clump's CenterX/Y/Z")
check(np.array_equal(centres.get("GlyphRadius"), radius[head]) and
      np.array_equal(centres.get("R200c"), p_clumps["R200c"][head]),
      "Markers/Halo Centres: GlyphRadius is not the head clump's R200c")
physics.HaloProperties = 0
physics.UpdatePipeline()
p_clumps, p_haloes, blocks = table(testing.fetch(physics, 1)), table(testing.fetch(physics, 3)), marker_blocks(physics)
check("R200c" not in p_clumps and np.array_equal(positions(blocks["Clump Peaks"]), columns(p_clumps, PEAKS)) and
      np.array_equal(positions(blocks["Halo Centres"]), columns(p_haloes, CENTRES_OF_MASS)) and
      "GlyphRadius" not in arrays(blocks["Clump Peaks"].GetPointData()),
      "Markers without the halo properties: not at the peaks and centres of mass, or with a GlyphRadius")
Delete(physics)
Delete(swift)

print("drawings: %d faces, %d dendrogram lines, %d peaks, %d particles drawn"
      % (geometry.GetNumberOfCells(), len(lines), len(clumps["ClumpId"]), drawn.GetNumberOfPoints()))
testing.Checker.finish(check.__self__)
