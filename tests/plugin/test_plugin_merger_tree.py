"""PHEW Merger Tree on time series, against a numpy reference (under mpiexec with 1 or 2 ranks:
the image reader then gives each rank a piece, and the cells must still be named by their
global id):

- an image series of 4 steps whose ClumpId labels move, merge, split, appear and vanish: the
  links of every step (pairs, whole and shared masses = density * cell volume, fractions, main
  links, merger and split counts) and the History table with Step 0..3;
- going back to a step of the history shows its links and keeps the history; after a change
  upstream, going back starts a new history (everything new); so does Reset History;
- a particle series whose points are shuffled between steps: links by ParticleId, Mass array;
- with an Energy array: the links by most-bound particles and the orphans (docs/merger-trees.md)
  against the re-implementation of tests/parallel/link_reference.py, every row and column;
- bad input: particles without an Id array, labels that are point data on an image, no label
  array chosen: one message in all (the filter's, not VTK's "returned failure" besides it),
  saying what is wrong, and empty tables.

    mpiexec -np N pvbatch test_plugin_merger_tree.py --plugin PHEW.so --source-dir SRC --work-dir DIR
"""
import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import phew_plugin_testing as T  # noqa: E402
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "parallel"))
import link_reference as lref  # noqa: E402
from paraview import simple  # noqa: E402
from vtkmodules.util import numpy_support  # noqa: E402
from vtkmodules.util.misc import calldata_type  # noqa: E402
from vtkmodules.util.vtkConstants import VTK_STRING  # noqa: E402
from vtkmodules.vtkCommonCore import vtkCommand, vtkOutputWindow, vtkPoints  # noqa: E402
from vtkmodules.vtkCommonDataModel import vtkPolyData  # noqa: E402
from vtkmodules.vtkIOXML import vtkXMLPolyDataWriter  # noqa: E402

DIMS = (12, 10, 8)  # cells
SPACING = (0.5, 0.25, 2.0)


def image_steps(rng):
    """4 steps of (density, ClumpId) on DIMS: blocks of labels that drift, merge and split."""
    nx, ny, nz = DIMS
    z, y, x = np.meshgrid(np.arange(nz), np.arange(ny), np.arange(nx), indexing="ij")
    steps = []
    for s in range(4):
        label = np.full((nz, ny, nx), -1, dtype=np.int64)
        shift = s  # the blocks drift along x
        label[(x >= shift) & (x < 4 + shift) & (y < 5)] = 0
        label[(x >= 7) & (y >= 5)] = 1 if s < 2 else 0     # merges into 0 at step 2
        label[(z < 3) & (y < 3) & (x >= 9)] = 2 if s != 1 else -1  # gone at step 1, back (new) at 2
        if s == 3:
            label[(x < 6) & (y >= 6)] = 3 + (x[(x < 6) & (y >= 6)] // 3)  # a new pair
            label[(label == 0) & (z >= 4)] = 5                         # 0 splits
        density = 0.1 + rng.random((nz, ny, nx))
        steps.append((density, label))
    return steps


def reference(a_labels, a_mass, b_labels, b_mass):
    """{(p, d): row dict} as phew_link_steps defines them, by brute force."""
    whole_a = {int(p): a_mass[a_labels == p].sum() for p in np.unique(a_labels[a_labels >= 0])}
    whole_b = {int(d): b_mass[b_labels == d].sum() for d in np.unique(b_labels[b_labels >= 0])}
    both = (a_labels >= 0) & (b_labels >= 0)
    shared = {}
    for p, d in set(zip(a_labels[both].tolist(), b_labels[both].tolist())):
        cells = both & (a_labels == p) & (b_labels == d)
        shared[(p, d)] = (a_mass[cells].sum(), b_mass[cells].sum())
    main_d = {p: max((k for k in shared if k[0] == p), key=lambda k: (shared[k][0], -k[1]))[1]
              for p in {k[0] for k in shared}}
    main_p = {d: max((k for k in shared if k[1] == d), key=lambda k: (shared[k][1], -k[0]))[0]
              for d in {k[1] for k in shared}}
    rows = {}
    for (p, d), (se, sl) in shared.items():
        rows[(p, d)] = dict(ProgenitorMass=whole_a[p], DescendantMass=whole_b[d], SharedMassEarlier=se,
                            SharedMassLater=sl, ProgenitorFraction=se / whole_a[p], DescendantFraction=sl / whole_b[d],
                            MainProgenitor=int(main_p[d] == p), MainDescendant=int(main_d[p] == d),
                            NumberOfProgenitors=sum(1 for q in main_d if main_d[q] == d),
                            NumberOfDescendants=sum(1 for e in main_p if main_p[e] == p))
    alone = dict(SharedMassEarlier=0.0, SharedMassLater=0.0, ProgenitorFraction=0.0, DescendantFraction=0.0,
                 MainProgenitor=0, MainDescendant=0, NumberOfProgenitors=0, NumberOfDescendants=0)
    for p, m in whole_a.items():
        if p not in main_d:
            rows[(p, -1)] = dict(alone, ProgenitorMass=m, DescendantMass=0.0)
    for d, m in whole_b.items():
        if d not in main_p:
            rows[(-1, d)] = dict(alone, ProgenitorMass=0.0, DescendantMass=m)
    return rows


def order_key(pd):
    return (pd[1] if pd[1] >= 0 else 1 << 62, pd[0])


def compare(check, what, table, expected, step, time, previous):
    got = T.table_as_lists(table)
    pairs = list(zip(got.get("ProgenitorId", []), got.get("DescendantId", [])))
    check(pairs == sorted(expected, key=order_key), "%s: the links' pairs, in order (%s; expected %s)"
          % (what, pairs, sorted(expected, key=order_key)))
    if pairs != sorted(expected, key=order_key):
        return
    check(set(got["Step"]) == {step} and set(got["Time"]) == {time}
          and all((math.isnan(v) and math.isnan(previous)) or v == previous for v in got["PreviousTime"]),
          "%s: Step %d, Time %g, PreviousTime %g" % (what, step, time, previous))
    bad = []
    for k, pd in enumerate(pairs):
        for name, value in expected[pd].items():
            mine = got[name][k]
            if not (abs(mine - value) <= 1e-12 * max(abs(value), 1e-300)):
                bad.append("%s %s: %r, expected %r" % (pd, name, mine, value))
    check(not bad, "%s: every column equals the reference (%s)" % (what, "; ".join(bad[:5])))


class OutputWindowErrors:
    """The error messages that reach VTK's output window (those of objects without an ErrorEvent
    observer, such as the executive's "returned failure for request")."""

    def __init__(self):
        self.messages = []
        self.window = vtkOutputWindow.GetInstance()
        self.tag = self.window.AddObserver(vtkCommand.ErrorEvent, self._on_error)

    @calldata_type(VTK_STRING)
    def _on_error(self, caller, event, message):
        self.messages.append(str(message))

    def remove(self):
        self.window.RemoveObserver(self.tag)


def write_vtp(path, points, arrays):
    poly = vtkPolyData()
    vtk_points = vtkPoints()
    vtk_points.SetData(numpy_support.numpy_to_vtk(points, deep=True))
    poly.SetPoints(vtk_points)
    for name, values in arrays.items():
        array = numpy_support.numpy_to_vtk(values, deep=True)
        array.SetName(name)
        poly.GetPointData().AddArray(array)
    writer = vtkXMLPolyDataWriter()
    writer.SetFileName(path)
    writer.SetInputData(poly)
    writer.SetDataModeToBinary()
    writer.Write()


def tracked_particles(check, args, rng):
    """Four steps: group 1 merges into 0 at step 1 and comes out as 3 at step 3; group 2 vanishes
    at step 1 and is back at step 2; labels renamed; a few particles without an energy (NaN)."""
    n, most_bound = 300, 20
    ids = np.arange(5000, 5000 + n, dtype=np.int64)
    k = np.arange(n)
    a, b, c = k < 100, (k >= 100) & (k < 160), (k >= 160) & (k < 200)
    layout = [(0, 1, 2), (1, 1, -1), (0, 0, 2), (0, 3, 1)]  # labels of A, B, C per step
    paths, labels, tracers = [], [], []
    for s, (la, lb, lc) in enumerate(layout):
        group = np.full(n, -1, dtype=np.int64)
        group[a], group[b], group[c] = la, lb, lc
        energy = -rng.random(n)
        energy[k % 13 == 0] = np.nan
        order = rng.permutation(n)
        paths.append(os.path.join(args.work_dir, "tracked_%d.vtp" % s))
        write_vtp(paths[-1], rng.random((n, 3))[order],
                  {"GroupId": group[order], "ParticleId": ids[order], "SpecificEnergy": energy[order]})
        labels.append({int(i): int(g) for i, g in zip(ids, group) if g >= 0})
        entries = []
        for g in sorted(set(labels[-1].values())):
            members = [(energy[j], int(ids[j])) for j in range(n) if group[j] == g and not np.isnan(energy[j])]
            entries.append(lref.Entry(g, s, 0, float(np.count_nonzero(group == g)),
                                      [i for _, i in sorted(members)[:most_bound]]))
        tracers.append(entries)
    source = simple.OpenDataFile(paths)
    tree = simple.PHEWMergerTree(Input=source)
    tree.Labels = ["POINTS", "GroupId"]
    tree.Id = ["POINTS", "ParticleId"]
    tree.Energy = ["POINTS", "SpecificEnergy"]
    tree.MostBoundParticles = most_bound
    for s in range(4):
        tree.UpdatePipeline(float(s))
    history = T.table_as_lists(T.fetch(tree, 1))
    rows = [k for k, step in enumerate(history.get("Step", [])) if step > 0]
    expected = lref.tree(labels, tracers, 3)
    bad = [] if len(rows) == len(expected) else ["%d rows, expected %d" % (len(rows), len(expected))]
    for k, want in zip(rows, expected):
        for name, value in want.items():
            if not lref.same(float(history[name][k]), float(value)):
                bad.append("step %d %d->%d %s: %r, expected %r" % (want["Step"], want["ProgenitorId"],
                                                                  want["DescendantId"], name, history[name][k], value))
    check(not bad, "most-bound particles: %d rows of steps 1..3, every column equals the reference (%s)"
          % (len(rows), "; ".join(bad[:4])))
    kinds = [(history["Step"][k], history["Kind"][k], history["ProgenitorId"][k]) for k in rows]
    check((1, 1, 1) in kinds and (3, 2, 1) in kinds and (2, 2, 2) in kinds,
          "most-bound particles: B is an orphan at step 1 and found again at 3, C found again at 2 (%s)" % kinds)


def main():
    args = T.parse_args()
    check = T.Checker("merger tree (%d rank(s))" % T.number_of_ranks()).check
    checker = check.__self__
    simple.LoadPlugin(args.plugin, remote=False, ns=vars(simple))
    rng = np.random.default_rng(7)

    # ---- images
    steps = image_steps(rng)
    paths = []
    for s, (density, label) in enumerate(steps):
        image = T.make_image(density, spacing=SPACING, extra={"ClumpId": label})
        paths.append(T.write_vti(os.path.join(args.work_dir, "series_%d.vti" % s), image))
    reader = simple.OpenDataFile(paths)
    check(list(reader.TimestepValues) == [0.0, 1.0, 2.0, 3.0], "the image series has times 0..3")
    tree = simple.PHEWMergerTree(Input=reader)
    tree.Labels = ["CELLS", "ClumpId"]
    tree.Mass = ["CELLS", "density"]
    volume = SPACING[0] * SPACING[1] * SPACING[2]
    masses = [(density.ravel() * volume, label.ravel()) for density, label in steps]
    expected = []
    for s in range(4):
        tree.UpdatePipeline(float(s))
        if s == 0:
            empty = np.full(masses[0][1].shape, -1)
            want = reference(empty, masses[0][0], masses[0][1], masses[0][0])
        else:
            want = reference(masses[s - 1][1], masses[s - 1][0], masses[s][1], masses[s][0])
        expected.append(want)
        compare(check, "images, step %d" % s, T.fetch(tree, 0), want, s, float(s), float(s - 1) if s else math.nan)
    links = [T.table_as_lists(T.fetch(tree, 0))]
    check(any(n >= 2 for n in links[0]["NumberOfDescendants"]), "step 3 holds a split")
    history = T.table_as_lists(T.fetch(tree, 1))
    check(history.get("Step") == sum(([s] * len(expected[s]) for s in range(4)), []),
          "History: the links of steps 0..3 in order (%d rows)" % len(history.get("Step", [])))
    step2 = [k for k, s in enumerate(history["Step"]) if s == 2]
    merged = [history["NumberOfProgenitors"][k] for k in step2 if history["DescendantId"][k] == 0]
    check(merged and max(merged) == 2, "History: clumps 0 and 1 merge at step 2 (NumberOfProgenitors %s)" % merged)

    # back to a time the history holds, nothing changed: that step's links, the history kept
    tree.UpdatePipeline(1.0)
    compare(check, "images, back at step 1", T.fetch(tree, 0), expected[1], 1, 1.0, 0.0)
    check(T.table_as_lists(T.fetch(tree, 1)).get("Step") == history.get("Step"),
          "going back to a step of the history keeps the history")
    # ... but after a change upstream, going back starts a new history (every clump new)
    calc = simple.Calculator(Input=reader, AttributeType="Cell Data", ResultArrayName="Unused", Function="1")
    ctree = simple.PHEWMergerTree(Input=calc)
    ctree.Labels = ["CELLS", "ClumpId"]
    ctree.Mass = ["CELLS", "density"]
    for s in range(3):
        ctree.UpdatePipeline(float(s))
    calc.Function = "2"
    ctree.UpdatePipeline(1.0)
    got = T.table_as_lists(T.fetch(ctree, 0))
    check(got.get("Step") and set(got["Step"]) == {0} and set(got["ProgenitorId"]) == {-1},
          "going back in time after a change upstream starts a new history (Step 0, all clumps new)")
    ctree.UpdatePipeline(2.0)
    compare(check, "images, 1 -> 2 after going back", T.fetch(ctree, 0), expected[2], 1, 2.0, 1.0)
    tree.SMProxy.InvokeCommand("ResetHistory")  # what the Reset History button does
    tree.UpdatePipeline(2.0)
    got = T.table_as_lists(T.fetch(tree, 0))
    check(got.get("Step") and set(got["Step"]) == {0} and set(got["ProgenitorId"]) == {-1},
          "Reset History: the next run starts anew")

    # ---- particles, shuffled between steps, with a Mass array
    n = 400
    ids = np.arange(1000, 1000 + n, dtype=np.int64)
    group_steps = [np.where(ids % 7 == 0, -1, (ids // 50) % 5), np.where(ids % 11 == 0, -1, (ids // 80) % 4)]
    mass = 1.0 + (ids % 3).astype(np.float64)
    ppaths = []
    for s, groups in enumerate(group_steps):
        order = rng.permutation(n)
        write_vtp(os.path.join(args.work_dir, "particles_%d.vtp" % s), rng.random((n, 3))[order],
                  {"GroupId": groups[order], "ParticleId": ids[order], "Mass": mass[order]})
        ppaths.append(os.path.join(args.work_dir, "particles_%d.vtp" % s))
    particles = simple.OpenDataFile(ppaths)
    ptree = simple.PHEWMergerTree(Input=particles)
    ptree.Labels = ["POINTS", "GroupId"]
    ptree.Id = ["POINTS", "ParticleId"]
    ptree.Mass = ["POINTS", "Mass"]
    ptree.UpdatePipeline(0.0)
    ptree.UpdatePipeline(1.0)
    compare(check, "particles by ParticleId", T.fetch(ptree, 0),
            reference(group_steps[0], mass, group_steps[1], mass), 1, 1.0, 0.0)

    tracked_particles(check, args, rng)

    # ---- bad input: one message, empty tables
    window = OutputWindowErrors()  # VTK's own messages (the executive's), which a filter's observer does not see
    bad = simple.PHEWMergerTree(Input=particles)
    bad.Labels = ["POINTS", "GroupId"]
    errors = T.ErrorCatcher(bad)
    bad.UpdatePipeline(0.0)
    check(errors.text().count("need an Id point array") == 1 and T.fetch(bad, 0).GetNumberOfRows() == 0,
          "particles without Id: one message, empty links (%r)" % errors.text())
    check(T.fetch(bad, 1).GetNumberOfRows() == 0, "particles without Id: an empty History")
    check(len(errors.messages) + len(window.messages) == 1,
          "particles without Id: one message in all, not VTK's 'returned failure' besides the filter's (%r, %r)"
          % (errors.messages, window.messages))
    point_labels = T.make_image(np.ones((3, 3, 3)), association="POINTS", name="ClumpId")
    source = simple.OpenDataFile(T.write_vti(os.path.join(args.work_dir, "point_labels.vti"), point_labels))
    on_points = simple.PHEWMergerTree(Input=source)
    on_points.Labels = ["POINTS", "ClumpId"]
    errors = T.ErrorCatcher(on_points)
    window.messages = []
    on_points.UpdatePipeline()
    check("must be a cell array" in errors.text(), "point labels on an image are refused (%r)" % errors.text())
    check(len(errors.messages) + len(window.messages) == 1 and T.fetch(on_points, 0).GetNumberOfRows() == 0,
          "point labels on an image: one message in all, empty links (%r, %r)" % (errors.messages, window.messages))
    # no label array chosen: says so, and how to choose one
    unlabelled = simple.PHEWMergerTree(Input=particles)
    unlabelled.Labels = ["POINTS", ""]
    unlabelled.Id = ["POINTS", "ParticleId"]
    errors = T.ErrorCatcher(unlabelled)
    window.messages = []
    unlabelled.UpdatePipeline(0.0)
    text = errors.text()
    check("no label array is chosen" in text and "Labels" in text and "ClumpId" in text and "''" not in text,
          "no label array: the message says none is chosen and how to choose one (%r)" % text)
    check(len(errors.messages) + len(window.messages) == 1 and T.fetch(unlabelled, 0).GetNumberOfRows() == 0,
          "no label array: one message in all, empty links (%r, %r)" % (errors.messages, window.messages))
    window.remove()
    checker.finish(exit_on_success=False)


if __name__ == "__main__":
    main()
