"""PHEW Merger Tree, what is read from it (issue 31), under mpiexec with 1 or 2 ranks:

- the History is whole wherever it is read: a spreadsheet shows the Links while the animation
  plays; then Fetch of the History (which asks at a time of its own), SaveData of it, Fetch of
  the Links and of the History again all give every step (before the fix, Fetch gave the rows
  of the first step only: the History's consumer kept its first table);
- the Tree Drawing against a reference computed here with numpy from the History: a vertex per
  structure per step with its mass, a line per link between two structures (its ends from the
  link's row), FinalHaloId by following main descendants, HaloColour by the final halo's rank in
  mass, NumberOfProgenitors, the trees of the last step's structures side by side by decreasing
  mass;
- the Mass History: the branch of the most massive final structure (or of Structure in step
  Structure Step): its main progenitors, itself, its main descendants, from the History; the
  drawing's cells name their structure (what the GUI reads when a node or line is picked); an
  unknown structure or step is a clear error and changes nothing else;
- on the image series of test_plugin_merger_tree.py (a merger, a split, new and vanished
  clumps) and on datasets/cosmo32_series (RAMSES, outputs 2 and 3, Friends-of-Friends): 52 and
  50 haloes, 57 links, the largest halo grows from 413 to 960 particles out of 3 progenitors.

    mpiexec -np N pvbatch test_plugin_merger_tree_views.py --plugin PHEW.so --source-dir SRC --work-dir DIR
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import phew_plugin_testing as T  # noqa: E402
import test_plugin_merger_tree as M  # noqa: E402
from paraview import simple  # noqa: E402
from vtkmodules.util import numpy_support  # noqa: E402


class Reference:
    """The drawing and the mass history as the History's columns say, by plain Python."""

    def __init__(self, history):
        h = history
        self.rows = len(h.get("Step", []))
        self.last = max(h["Step"]) if self.rows else -1
        self.time = {s: t for s, t in zip(h.get("Step", []), h.get("Time", []))}
        self.nodes, self.edges, self.main_descendant, self.main_progenitor = {}, [], {}, {}
        for k in range(self.rows):
            s, p, d = h["Step"][k], h["ProgenitorId"][k], h["DescendantId"][k]
            if d >= 0:
                self.nodes.setdefault((s, d), h["DescendantMass"][k])
            if p < 0 or d < 0:
                continue
            ps = h["ProgenitorStep"][k] if h["ProgenitorStep"][k] >= 0 else s - 1
            self.edges.append((k, (ps, p), (s, d)))
            if h["Kind"][k] == 0 and h["MainDescendant"][k] == 1:
                self.main_descendant.setdefault((ps, p), (s, d))
            if h["Kind"][k] == 0 and h["MainProgenitor"][k] == 1:
                self.main_progenitor.setdefault((s, d), (ps, p))

    def final(self, node):
        while node in self.main_descendant:
            node = self.main_descendant[node]
        return node[1] if node[0] == self.last else -1

    def progenitors(self, node):
        return sum(1 for d in self.main_descendant.values() if d == node)

    def by_mass(self, step):
        return sorted((n for n in self.nodes if n[0] == step), key=lambda n: (-self.nodes[n], n[1]))

    def finals_by_mass(self):
        return self.by_mass(self.last)

    def colour(self, final_id):
        """HaloColour: the final haloes by decreasing mass (equal: the smaller id) take colours
        0..9, then the 8 shared ones in turn (no positions: each is "far" from the others)."""
        rank = [f[1] for f in self.finals_by_mass()]
        if final_id not in rank:
            return -1
        r = rank.index(final_id)
        return r if r < 10 else 10 + (r - 10) % 8

    def branch(self, structure, step=-1):
        """The branch of structure `structure` of step `step` (-1: the last; structure -1: the
        most massive of the step), oldest first: its main progenitors, itself, its main
        descendants; [] when it spans one step only."""
        step = self.last if step < 0 else step
        ranked = self.by_mass(step)
        node = ranked[0] if structure < 0 and ranked else (step, structure)
        if node not in self.nodes:
            return []
        back = [node]
        while back[-1] in self.main_progenitor:
            back.append(self.main_progenitor[back[-1]])
        chain = back[::-1]
        while chain[-1] in self.main_descendant:
            chain.append(self.main_descendant[chain[-1]])
        return chain if len(chain) > 1 else []


def point_arrays(poly):
    data = poly.GetPointData()
    return {data.GetArrayName(i): numpy_support.vtk_to_numpy(data.GetArray(i)) for i in range(data.GetNumberOfArrays())}


def line_ends(poly):
    lines = poly.GetLines()
    if lines.GetNumberOfCells() == 0:
        return []
    conn = numpy_support.vtk_to_numpy(lines.GetConnectivityArray())
    return [tuple(conn[2 * i:2 * i + 2]) for i in range(lines.GetNumberOfCells())]


def check_drawing(check, what, history, drawing):
    """The Tree Drawing equals the reference made from the History."""
    ref = Reference(history)
    pts = point_arrays(drawing)
    keys = [(int(s), int(i)) for s, i in zip(pts.get("Step", []), pts.get("StructureId", []))]
    check(sorted(keys) == sorted(ref.nodes) and len(keys) == len(ref.nodes),
          "%s: one vertex per structure per step (%d, expected %d)" % (what, len(keys), len(ref.nodes)))
    if sorted(keys) != sorted(ref.nodes):
        return ref
    at = {k: i for i, k in enumerate(keys)}
    check(all(pts["Mass"][at[n]] == m for n, m in ref.nodes.items()), "%s: each vertex has its mass" % what)
    check(drawing.GetNumberOfVerts() == len(keys), "%s: the vertices are cells" % what)
    ends = line_ends(drawing)
    rows = numpy_support.vtk_to_numpy(drawing.GetCellData().GetArray("HistoryRow"))[len(keys):]
    by_row = {k: (a, b) for k, a, b in ref.edges}
    good = len(ends) == len(ref.edges) and all(
        (keys[e[0]], keys[e[1]]) == by_row.get(int(r)) for e, r in zip(ends, rows))
    check(good, "%s: one line per link between two structures, progenitor to descendant (%d, expected %d)"
          % (what, len(ends), len(ref.edges)))
    bad = [n for n in ref.nodes if pts["FinalHaloId"][at[n]] != ref.final(n)]
    check(not bad, "%s: FinalHaloId follows the main descendants (wrong at %s)" % (what, bad[:5]))
    bad = [n for n in ref.nodes if pts["HaloColour"][at[n]] != ref.colour(ref.final(n))]
    check(not bad, "%s: HaloColour is the final halo's, by its rank in mass (wrong at %s)" % (what, bad[:5]))
    bad = [n for n in ref.nodes if pts["NumberOfProgenitors"][at[n]] != ref.progenitors(n)]
    check(not bad, "%s: NumberOfProgenitors (wrong at %s)" % (what, bad[:5]))
    x = drawing.GetPoints().GetData()
    xs = {n: x.GetComponent(at[n], 0) for n in ref.nodes}
    finals = ref.finals_by_mass()
    check(all(xs[a] < xs[b] for a, b in zip(finals, finals[1:])),
          "%s: the last step's structures left to right by decreasing mass" % what)
    # each final structure's tree lies between it and the next one
    bounds = [xs[f] for f in finals] + [float("inf")]
    bad = [n for n in ref.nodes if ref.final(n) >= 0 and not (
        bounds[finals.index((ref.last, ref.final(n)))] <= xs[n] < bounds[finals.index((ref.last, ref.final(n))) + 1])]
    check(not bad, "%s: every tree stands apart, beside its final structure (not at %s)" % (what, bad[:5]))
    return ref


def check_mass_history(check, what, ref, table, structure=-1, step=-1):
    got = T.table_as_lists(table)
    chain = ref.branch(structure, step)
    chosen = (ref.last if step < 0 else step, structure) if structure >= 0 else ref.by_mass(
        ref.last if step < 0 else step)[0]
    want = {"Step": [s for s, _ in chain], "StructureId": [i for _, i in chain],
            "Mass": [ref.nodes[n] for n in chain], "Time": [ref.time[s] for s, _ in chain],
            "Chosen": [int(n == chosen) for n in chain], "FinalHaloId": [ref.final(chosen)] * len(chain)}
    check(all(got.get(k, []) == v for k, v in want.items()),
          "%s: the branch's masses, oldest first (%s; expected %s; steps %s, expected %s)"
          % (what, got.get("Mass"), want["Mass"], got.get("Step"), want["Step"]))
    field = table.GetFieldData()
    named = [field.GetArray(n).GetValue(0) if field.GetArray(n) else None for n in ("StructureStep", "Structure")]
    check(not chain or named == list(chosen), "%s: field data names the structure %s (%s)" % (what, chosen, named))
    colour = field.GetArray("HaloColour").GetValue(0) if field.GetArray("HaloColour") else None
    want = ref.colour(ref.final(chosen))
    check(not chain or colour == want, "%s: field data HaloColour %s (expected %s)" % (what, colour, want))


def check_drawing_cells(check, what, drawing):
    """Picking a cell names a structure: a vertex its node's, a line its progenitor's; a line's
    HaloColour is its progenitor's on a main link (to the progenitor's main descendant), else -1."""
    pts = point_arrays(drawing)
    cells = drawing.GetCellData()
    got = [numpy_support.vtk_to_numpy(cells.GetArray(n)) for n in ("Step", "StructureId")]
    n = drawing.GetNumberOfVerts()
    progenitors = [a for a, _ in line_ends(drawing)]
    want = [np.concatenate([pts[k], pts[k][progenitors]]) for k in ("Step", "StructureId")]
    check(all(len(g) == len(w) and np.array_equal(g, w) for g, w in zip(got, want)) and n == len(pts["Step"]),
          "%s: the cells' Step and StructureId are their nodes' (vertices) and progenitors' (lines)" % what)
    colour = numpy_support.vtk_to_numpy(cells.GetArray("HaloColour"))
    main = numpy_support.vtk_to_numpy(cells.GetArray("MainLink"))[n:]
    want = np.concatenate([pts["HaloColour"], np.where(main == 1, pts["HaloColour"][progenitors], -1)])
    check(np.array_equal(colour, want) and (main == 0).any(),
          "%s: the cells' HaloColour: vertices their node's, main lines their progenitor's, others -1" % what)


def whole_history(check, paths, expected_rows):
    """A spreadsheet shows the Links while the animation plays; the History read afterwards by
    Fetch (at a time of its own), SaveData and Fetch again is whole."""
    reader = simple.OpenDataFile(paths)
    tree = simple.PHEWMergerTree(Input=reader)
    tree.Labels = ["CELLS", "ClumpId"]
    tree.Mass = ["CELLS", "density"]
    view = simple.CreateView("SpreadSheetView")
    simple.Show(simple.OutputPort(tree, 0), view)
    scene = simple.GetAnimationScene()
    scene.UpdateAnimationUsingDataTimeSteps()
    for t in reader.TimestepValues:
        scene.AnimationTime = t
        view.Update()
    rows = T.fetch(tree, 1).GetNumberOfRows()
    check(rows == expected_rows, "Fetch of the History after playing: every step (%d rows, expected %d)"
          % (rows, expected_rows))
    links = T.table_as_lists(T.fetch(tree, 0))
    check(set(links.get("Step", [])) <= set(range(len(paths))), "Fetch of the Links: a step of the history")
    rows = T.fetch(tree, 1).GetNumberOfRows()
    check(rows == expected_rows, "Fetch of the History after Fetch of the Links: every step (%d rows)" % rows)
    drawn = T.fetch(tree, 2).GetNumberOfLines()
    check(drawn > 0, "Fetch of the Tree Drawing after playing: the links of every step (%d lines)" % drawn)
    simple.SaveData(os.path.join(os.path.dirname(paths[0]), "history.csv"), proxy=simple.OutputPort(tree, 1))
    with open(os.path.join(os.path.dirname(paths[0]), "history.csv")) as f:
        saved = sum(1 for _ in f) - 1
    check(saved == expected_rows, "SaveData of the History: every step (%d rows)" % saved)
    simple.Delete(view)


def image_series(check, args):
    """The image series of test_plugin_merger_tree.py: drawing, mass history, Structure."""
    rng = np.random.default_rng(7)
    steps = M.image_steps(rng)
    paths = []
    for s, (density, label) in enumerate(steps):
        image = T.make_image(density, spacing=M.SPACING, extra={"ClumpId": label})
        paths.append(T.write_vti(os.path.join(args.work_dir, "series_%d.vti" % s), image))
    reader = simple.OpenDataFile(paths)
    tree = simple.PHEWMergerTree(Input=reader)
    tree.Labels = ["CELLS", "ClumpId"]
    tree.Mass = ["CELLS", "density"]
    for t in reader.TimestepValues:
        tree.UpdatePipeline(t)
    history = T.table_as_lists(T.fetch(tree, 1))
    ref = check_drawing(check, "images", history, T.fetch(tree, 2))
    check(ref.last == 3 and len(ref.nodes) == sum(len(np.unique(l[l >= 0])) for _, l in steps),
          "images: 4 steps, one node per clump per step (%d)" % len(ref.nodes))
    # the merger: clump 1 of step 1 went into clump 0 of step 2, both end in one final halo
    drawing = T.fetch(tree, 2)
    pts = point_arrays(drawing)
    at = {(int(s), int(i)): k for k, (s, i) in enumerate(zip(pts["Step"], pts["StructureId"]))}
    merged = ref.final((2, 0))
    check(merged >= 0 and pts["FinalHaloId"][at[(1, 1)]] == merged == pts["FinalHaloId"][at[(1, 0)]]
          and pts["NumberOfProgenitors"][at[(2, 0)]] == 2,
          "images: clumps 0 and 1 of step 1 merge into 0 at step 2 and end in final halo %d (%s, %s)"
          % (merged, pts["FinalHaloId"][at[(1, 1)]], pts["FinalHaloId"][at[(1, 0)]]))
    check_mass_history(check, "images, the most massive", ref, T.fetch(tree, 3))
    check_drawing_cells(check, "images", drawing)
    # another final structure: its own branch; the history stays (nothing runs again)
    other = ref.finals_by_mass()[1][1]
    tree.Structure = other
    tree.UpdatePipeline(3.0)
    check_mass_history(check, "images, Structure %d" % other, ref, T.fetch(tree, 3), other)
    check(T.fetch(tree, 1).GetNumberOfRows() == ref.rows, "images: Structure keeps the history")
    # a structure of an earlier step, one that merges: its progenitors, itself, its descendants
    tree.Structure, tree.StructureStep = 1, 1
    tree.UpdatePipeline(3.0)
    table = T.fetch(tree, 3)
    check_mass_history(check, "images, Structure 1 of step 1", ref, table, 1, 1)
    check(T.table_as_lists(table).get("Step") == [0, 1, 2, 3] and ref.branch(1, 1)[2] == (2, 0),
          "images: structure 1 of step 1 goes on into 0 of step 2 and to the end (%s)" % ref.branch(1, 1))
    # a lineage that vanished before the last step: its branch ends there, no final halo (a
    # branch of one step: an empty Mass History, and no error)
    gone = sorted((n for n in ref.nodes if n[0] < ref.last and ref.final(n) < 0),
                  key=lambda n: (-len(ref.branch(n[1], n[0])), n))
    check(bool(gone), "images: a structure of an earlier step whose lineage vanished")
    if gone:
        errors = T.ErrorCatcher(tree)
        tree.Structure, tree.StructureStep = gone[0][1], gone[0][0]
        tree.UpdatePipeline(3.0)
        table = T.fetch(tree, 3)
        check_mass_history(check, "images, vanished structure %s" % (gone[0],), ref, table, gone[0][1], gone[0][0])
        check(not errors.text() and T.table_as_lists(table).get("Step", [-1])[-1] < ref.last,
              "images: the vanished lineage's branch ends before the last step, no error (%r)" % errors.text())
    # unknown: a clear error, the mass history empty, the rest kept
    for structure, step, words in ((99, -1, "no structure 99"), (0, 9, "Structure Step 9 is not a step")):
        errors = T.ErrorCatcher(tree)
        tree.Structure, tree.StructureStep = structure, step
        tree.UpdatePipeline(3.0)
        check(words in errors.text() and T.fetch(tree, 3).GetNumberOfRows() == 0
              and T.fetch(tree, 1).GetNumberOfRows() == ref.rows
              and T.fetch(tree, 2).GetNumberOfPoints() == len(ref.nodes),
              "images: an unknown structure or step says so; the mass history is empty, the rest kept (%r)"
              % errors.text())
    whole_history(check, paths, ref.rows)


def cosmo32_series(check, args):
    """datasets/cosmo32_series: RAMSES outputs 2 and 3, Friends-of-Friends (periodic box from the
    files' metadata)."""
    folder = os.path.join(args.source_dir, "datasets", "cosmo32_series")
    reader = simple.OpenDataFile([os.path.join(folder, "cosmo32_%d.vtp" % k) for k in (0, 1)])
    fof = simple.FriendsofFriends(Input=reader)
    fof.Id = ["POINTS", "ParticleIDs"]
    tree = simple.PHEWMergerTree(Input=fof)
    tree.Labels = ["POINTS", "GroupId"]
    tree.Id = ["POINTS", "ParticleIDs"]
    for t in reader.TimestepValues:
        tree.UpdatePipeline(t)
    history = T.table_as_lists(T.fetch(tree, 1))
    ref = check_drawing(check, "cosmo32", history, T.fetch(tree, 2))
    per_step = [sum(1 for n in ref.nodes if n[0] == s) for s in (0, 1)]
    check(per_step == [52, 50] and len(ref.edges) == 57,
          "cosmo32: 52 and 50 haloes, 57 links between them (%s, %d)" % (per_step, len(ref.edges)))
    mergers = sorted(n[1] for n in ref.nodes if ref.progenitors(n) >= 2)
    check(mergers == [0, 1, 2, 3, 4, 6, 7, 10, 12, 13, 18], "cosmo32: 11 haloes of a = 1.03 formed by mergers (%s)"
          % mergers)
    pts = point_arrays(T.fetch(tree, 2))
    into_largest = [int(i) for s, i, f in zip(pts["Step"], pts["StructureId"], pts["FinalHaloId"]) if s == 0 and f == 0]
    check(len(into_largest) == 3 and into_largest == sorted(n[1] for n, d in ref.main_descendant.items() if d == (1, 0)),
          "cosmo32: the 3 progenitors of the largest halo are coloured as it (FinalHaloId 0: %s)" % into_largest)
    table = T.fetch(tree, 3)
    check_mass_history(check, "cosmo32", ref, table)
    check(T.table_as_lists(table).get("Mass") == [413.0, 960.0], "cosmo32: the largest halo grew from 413 to 960 particles")


def main():
    args = T.parse_args()
    check = T.Checker("merger tree views (%d rank(s))" % T.number_of_ranks()).check
    checker = check.__self__
    simple.LoadPlugin(args.plugin, remote=False, ns=vars(simple))
    image_series(check, args)
    cosmo32_series(check, args)
    checker.finish(exit_on_success=False)


if __name__ == "__main__":
    main()
